"""evalframe.pool against a slow loop written here: every system's top k, minus what is
judged, with contributors and best ranks; coverage before and after; the files."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import evalframe as ef
from tests.strategies import doc_id_desc_key, random_runs


def random_qrels(seed: int, n_q: int = 15, pool: int = 40) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = [(f"q{q}", f"d{d}", int(rng.integers(-1, 3))) for q in range(n_q)
            for d in rng.choice(pool, size=12, replace=False)]
    return pd.DataFrame(rows, columns=["query_id", "doc_id", "relevance"])


def loop_pool(runs, qrels, depth, systems=None):
    judged = set() if qrels is None else {(q, d) for q, d, r in qrels.itertuples(index=False) if r >= 0}
    contributors = systems or list(dict.fromkeys(runs["system"]))
    docs: dict = {}
    tops = {}
    for (s, q), part in runs.groupby(["system", "query_id"], sort=False):
        ranked = sorted(zip(part["score"], part["doc_id"]), key=lambda t: (-t[0], doc_id_desc_key(t[1])))[:depth]
        tops[s, q] = [d for _, d in ranked]
        if s not in contributors:
            continue
        for r, (_, d) in enumerate(ranked, start=1):
            if (q, d) not in judged:
                best, who = docs.get((q, d), (r, []))
                docs[q, d] = (min(best, r), who + [(r, contributors.index(s), s)])
    documents = {key: (best, ",".join(s for _, _, s in sorted(who))) for key, (best, who) in docs.items()}
    coverage = {}
    for s in dict.fromkeys(runs["system"]):
        cells = [(q, d) for (s2, q), ds in tops.items() if s2 == s for d in ds]
        coverage[s] = (len(cells), np.mean([c in judged for c in cells]),
                       np.mean([c in judged or c in docs for c in cells]))
    return documents, coverage


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("depth", [1, 5, 30])
@pytest.mark.parametrize("with_qrels", [True, False])
def test_matches_a_loop(seed, depth, with_qrels):
    runs = random_runs(seed, ties=seed % 2 == 0)
    qrels = random_qrels(seed) if with_qrels else None
    p = ef.pool(runs, depth=depth, qrels=qrels)
    documents, coverage = loop_pool(runs, qrels, depth)
    got = {(q, d): (b, s) for q, d, b, n, s in p.documents.itertuples(index=False)}
    assert got == documents
    assert (p.documents["n_systems"] == p.documents["systems"].str.count(",") + 1).all()
    # order: question (first appearance), best rank, doc_id
    qorder = {q: i for i, q in enumerate(dict.fromkeys(runs["query_id"]))}
    keys = list(zip(p.documents["query_id"].map(qorder), p.documents["best_rank"], p.documents["doc_id"]))
    assert keys == sorted(keys)
    for s, n, before, after in p.coverage[["system", "retrieved", "judged_before", "judged_after"]].itertuples(index=False):
        assert (n, before, after) == pytest.approx(coverage[s])


def test_only_chosen_systems_contribute_and_coverage_shows_the_rest():
    runs, qrels = random_runs(5), random_qrels(5)
    p = ef.pool(runs, depth=10, qrels=qrels, systems=["s1"])
    documents, coverage = loop_pool(runs, qrels, 10, systems=["s1"])
    assert {(q, d): (b, s) for q, d, b, n, s in p.documents.itertuples(index=False)} == documents
    assert set(p.documents["systems"]) == {"s1"}
    cov = p.coverage.set_index("system")
    assert cov.loc["s1", "judged_after"] == 1.0
    assert cov.loc["s0", "judged_after"] < 1.0
    assert cov.loc["s0", "judged_after"] == pytest.approx(coverage["s0"][2])


def test_a_pool_whose_documents_are_all_judged_is_empty():
    runs = random_runs(6)
    qrels = runs[["query_id", "doc_id"]].drop_duplicates().assign(relevance=0)  # every retrieved document judged
    p = ef.pool(runs, depth=10, qrels=qrels)
    assert p.documents.empty
    assert list(p.documents.columns) == ["query_id", "doc_id", "best_rank", "n_systems", "systems"]
    assert (p.coverage["judged_before"] == 1.0).all() and (p.coverage["judged_after"] == 1.0).all()


def test_files_for_judging_tools(tmp_path):
    runs, qrels = random_runs(2), random_qrels(2)
    p = ef.pool(runs, depth=5, qrels=qrels)
    p.to_csv(tmp_path / "pool.csv")
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "pool.csv", dtype={"query_id": str, "doc_id": str}),
                                  p.documents, check_dtype=False)
    p.to_trec(tmp_path / "pool.qrels")
    back = ef.read_qrels(tmp_path / "pool.qrels")
    assert list(zip(back["query_id"], back["doc_id"])) == list(zip(p.documents["query_id"], p.documents["doc_id"]))
    assert (back["relevance"] == -1).all()  # "not judged yet": still unjudged if fed back unfilled
    merged = pd.concat([qrels, back], ignore_index=True)
    again = ef.pool(runs, depth=5, qrels=merged)
    assert len(again.documents) == len(p.documents)  # -1 labels are not judgments


@pytest.mark.parametrize("kwargs, message", [
    ({"depth": 0}, "pool: depth must be an int >= 1, got 0"),
    ({"systems": ["nope"]}, "pool: systems must name systems of the runs"),
])
def test_parameter_errors(kwargs, message):
    with pytest.raises(ValueError, match=message):
        ef.pool(random_runs(0), **kwargs)
