"""evalframe.fuse against ranx's fusion (an independent implementation) on random runs,
and against slow loops written here for ties, missing documents and weights."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import evalframe as ef
from tests.strategies import doc_id_desc_key, random_runs

ranx = pytest.importorskip("ranx")

RANX_METHOD = {"rrf": "rrf", "combsum": "sum", "combmnz": "mnz", "combmax": "max",
               "combmin": "min", "wsum": "wsum"}


def as_dict(df: pd.DataFrame) -> dict:
    return {(q, d): x for q, d, x in zip(df["query_id"], df["doc_id"], df["score"])}


def ranx_fused(runs: pd.DataFrame, method: str, norm: str, weights=None) -> dict:
    rr = []
    for name, part in runs.groupby("system", sort=False):
        run = {}
        for q, d, x in zip(part["query_id"], part["doc_id"], part["score"]):
            run.setdefault(q, {})[d] = x
        rr.append(ranx.Run(run, name=name))
    params = {"weights": weights} if weights is not None else {}
    out = ranx.fuse(rr, norm=None if norm == "none" else norm, method=RANX_METHOD[method], params=params)
    return {(q, d): x for q, docs in out.to_dict().items() for d, x in docs.items()}


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("method, norm", [
    ("rrf", "none"), ("combsum", "min-max"), ("combsum", "zmuv"), ("combsum", "rank"), ("combsum", "none"),
    ("combmnz", "min-max"), ("combmnz", "zmuv"), ("combmax", "min-max"), ("combmin", "min-max"),
    ("combmax", "rank"), ("combmin", "zmuv"),
])
def test_matches_ranx_on_random_runs(seed, method, norm):
    runs = random_runs(seed)
    ours = as_dict(ef.fuse(runs, method=method, norm=norm))
    theirs = ranx_fused(runs, method, norm)
    assert ours.keys() == theirs.keys()
    for key, value in ours.items():
        assert value == pytest.approx(theirs[key], rel=1e-12, abs=1e-12), key


@pytest.mark.parametrize("seed", range(3))
def test_weighted_sum_matches_ranx(seed):
    runs = random_runs(seed)
    w = [0.5, 0.3, 0.2]
    ours = as_dict(ef.fuse(runs, method="wsum", norm="min-max", weights=w))
    theirs = ranx_fused(runs, "wsum", "min-max", weights=w)
    assert ours.keys() == theirs.keys()
    for key, value in ours.items():
        assert value == pytest.approx(theirs[key], rel=1e-12, abs=1e-12)


def loop_fuse(runs: pd.DataFrame, method: str, norm: str, k: float = 60, weights=None) -> dict:
    """Fusion written the slow way: one list at a time, ties by doc_id descending."""
    systems = list(dict.fromkeys(runs["system"]))
    w = dict(zip(systems, weights if weights is not None else [1.0] * len(systems)))
    contrib: dict = {}
    for (s, q), part in runs.groupby(["system", "query_id"], sort=False):
        ranked = sorted(zip(part["score"], part["doc_id"]), key=lambda t: (-t[0], doc_id_desc_key(t[1])))
        scores = np.array([x for x, _ in ranked])
        n = len(ranked)
        for r, (x, d) in enumerate(ranked, start=1):
            if method == "rrf":
                v = 1.0 / (k + r)
            elif norm == "min-max":
                v = (x - scores.min()) / max(scores.max() - scores.min(), 1e-9)
            elif norm == "zmuv":
                v = (x - scores.mean()) / max(scores.std(), 1e-9)
            elif norm == "rank":
                v = 1 - (r - 1) / n
            else:
                v = x
            contrib.setdefault((q, d), []).append(v * (w[s] if method in ("rrf", "combsum", "wsum") else 1.0))
    combine = {"rrf": sum, "combsum": sum, "wsum": sum, "combmax": max, "combmin": min,
               "combmnz": lambda v: sum(v) * len(v)}[method]
    return {key: combine(v) for key, v in contrib.items()}


@pytest.mark.parametrize("method, norm", [("rrf", "none"), ("combsum", "rank"), ("combmnz", "min-max"),
                                          ("combmin", "zmuv"), ("combmax", "none")])
def test_ties_broken_by_doc_id_descending_like_every_ranking(method, norm):
    runs = random_runs(7, ties=True)
    ours = as_dict(ef.fuse(runs, method=method, norm=norm))
    expected = loop_fuse(runs, method, norm)
    assert ours.keys() == expected.keys()
    for key in ours:
        assert ours[key] == pytest.approx(expected[key], rel=1e-12, abs=1e-12)


def test_weighted_rrf_and_missing_questions():
    runs = random_runs(3)
    runs = runs[~((runs.system == "s1") & runs.query_id.isin(["q0", "q1"]))]  # s1 skips two questions
    ours = as_dict(ef.fuse(runs, method="rrf", k=10, weights={"s0": 2.0, "s1": 1.0, "s2": 0.5}))
    expected = loop_fuse(runs, "rrf", "none", k=10, weights=[2.0, 1.0, 0.5])
    assert ours == pytest.approx(expected, rel=1e-12)


def test_output_is_a_ranked_run_named_by_its_recipe():
    runs = random_runs(1, ties=True)
    fused = ef.fuse(runs, method="combsum", norm="zmuv", weights=[1, 2, 3], depth=5)
    assert fused.columns.tolist() == ["system", "query_id", "doc_id", "score"]
    assert fused["system"].unique().tolist() == ["combsum(norm=zmuv,weights=1/2/3):s0+s1+s2"]
    assert fused.groupby("query_id").size().max() == 5
    for _, part in fused.groupby("query_id", sort=False):  # score descending, ties by doc_id descending
        keys = list(zip(-part["score"], [doc_id_desc_key(d) for d in part["doc_id"]]))
        assert keys == sorted(keys)
    assert ef.fuse(runs, method="rrf", name="mine")["system"].unique().tolist() == ["mine"]
    with pytest.warns(ef.QuestionsDroppedWarning):  # a fused run evaluates like any run
        per_q = ef.evaluate(fused, pd.DataFrame({"query_id": ["q0"], "doc_id": ["d1"], "relevance": [1]}), "R@5")
    assert per_q["system"].tolist() == ["combsum(norm=zmuv,weights=1/2/3):s0+s1+s2"]


def test_the_input_is_not_modified():
    runs = random_runs(2)
    before = runs.copy()
    ef.fuse(runs, method="combmnz")
    pd.testing.assert_frame_equal(runs, before)


@pytest.mark.parametrize("kwargs, message", [
    ({"method": "borda"}, "fuse: method must be one of"),
    ({"method": "rrf", "norm": "min-max"}, "norm must be 'none' with method='rrf'"),
    ({"method": "combsum", "norm": "max"}, "fuse: norm must be one of"),
    ({"k": 0}, "fuse: k must be a number > 0, got 0"),
    ({"depth": 0}, "fuse: depth must be an int >= 1 or None, got 0"),
    ({"method": "wsum"}, "weights must be given with method='wsum'"),
    ({"method": "combmax", "weights": [1, 1, 1]}, "weights apply to rrf, combsum, wsum only"),
    ({"weights": [1, 2]}, "weights must be 3 numbers"),
    ({"weights": {"s0": 1, "s1": 1}}, "weights must name every system exactly"),
])
def test_parameter_errors(kwargs, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        ef.fuse(random_runs(0), **kwargs)


def test_one_system_is_refused():
    runs = random_runs(0)
    with pytest.raises(ValueError, match="at least two systems"):
        ef.fuse(runs[runs.system == "s0"])
