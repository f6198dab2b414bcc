"""Differential tests: evalframe against pytrec_eval (trec_eval's own C code).

trec_eval semantics are asked for explicitly: missing="drop" (only questions in
both tables) and linear gain (trec_eval's names ndcg / ndcg_cut_k).  Scores are
drawn from a small set of values exactly representable in float32, so ties
occur and trec_eval 9's 32-bit scores order them exactly as float64 does.
"""
import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import evalframe as ef
from tests.strategies import cases

pytrec_eval = pytest.importorskip("pytrec_eval")

CUTS = (1, 3, 5, 10, 1000)
TREC_MEASURES = {
    "P": [f"P_{k}" for k in CUTS],
    "recall": [f"recall_{k}" for k in CUTS],
    "map_cut": [f"map_cut_{k}" for k in CUTS],
    "ndcg_cut": [f"ndcg_cut_{k}" for k in CUTS],
    "success": [f"success_{k}" for k in CUTS],
}
SIMPLE = ["map", "recip_rank", "ndcg", "Rprec", "bpref", "num_ret", "num_rel", "num_rel_ret"]
REQUEST = {f"{fam}.{','.join(map(str, CUTS))}" for fam in TREC_MEASURES} | set(SIMPLE)
ALL_NAMES = SIMPLE + [n for names in TREC_MEASURES.values() for n in names]


def _pytrec(qrels: pd.DataFrame, run: pd.DataFrame, rel: int = 1, judged_only: bool = False):
    qd: dict = {}
    for q, d, r in qrels.itertuples(index=False):
        qd.setdefault(q, {})[d] = int(r)
    rd: dict = {}
    for q, d, s in run[["query_id", "doc_id", "score"]].itertuples(index=False):
        rd.setdefault(q, {})[d] = float(s)
    ev = pytrec_eval.RelevanceEvaluator(qd, REQUEST, relevance_level=rel, judged_docs_only_flag=judged_only)
    return ev.evaluate(rd)


def _compare(qrels, run, rel=1, judged_only=False):
    expected = _pytrec(qrels, run, rel=rel, judged_only=judged_only)
    names = ALL_NAMES
    ms = [ef.parse_measure(n) for n in names]
    if judged_only:
        ms = [m.with_params(judged_only=True) if "judged_only" in ef.measures.FAMILIES[m.family].params else m
              for m in ms]
    got = ef.evaluate(run, qrels, ms, missing="drop", rel=rel)
    if judged_only:  # bpref and NumRel have no condensed variant: bpref ignores unjudged anyway
        pass
    table = got.pivot(index="query_id", columns="measure", values="value")
    assert set(table.index) == set(expected), "evaluated questions differ from trec_eval's"
    for name, m in zip(names, ms):
        canon = str(ef.measures.resolve(m, rel=rel))
        for q, vals in expected.items():
            assert table.loc[q, canon] == pytest.approx(vals[name], abs=1e-9), (q, name, canon)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_random_cases_match_pytrec_eval(case):
    import warnings
    qrels, run, rel = case
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ef.EvalframeWarning)
        _compare(qrels, run, rel=rel)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_condensed_lists_match_trec_eval_J(case):
    import warnings
    qrels, run, rel = case
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ef.EvalframeWarning)
        _compare(qrels, run, rel=rel, judged_only=True)


@pytest.mark.parametrize("name", ["cranfield", "scifact"])
def test_bundled_collections_match_pytrec_eval(name):
    ds = getattr(ef.datasets, f"load_{name}")()
    assert ds.runs["system"].nunique() == 5
    for _, run in ds.runs.groupby("system"):
        _compare(ds.qrels, run.drop(columns="system"))
