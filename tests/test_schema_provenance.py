"""A golden set's provenance (issue 29): ``judge`` and ``confidence`` columns kept through
reading and checking, ``conflicts="human"`` (a person's label outranks a model's), and
the report's labels by judge.  Oracles: loops over the rows written in the test."""
import warnings
from collections import Counter

import numpy as np
import pandas as pd
import pytest

import evalframe as ef
from evalframe.errors import EvalframeInputError
from evalframe.schema import is_human


def _mixed(seed: int, n_q: int = 30):
    """Rows from people and from two models, with repeated (question, document) pairs."""
    rng = np.random.default_rng(seed)
    rows = []
    for q in range(n_q):
        for d in rng.choice(40, size=8, replace=False):
            for judge in rng.choice(["human", "human:ann", "gpt-x:v3", "llama:v1"], size=int(rng.integers(1, 4)),
                                    replace=False):
                rows.append((f"q{q}", f"d{d}", int(rng.integers(0, 3)), judge, float(rng.random())))
    t = pd.DataFrame(rows, columns=["query_id", "doc_id", "relevance", "judge", "confidence"])
    return t.sample(frac=1, random_state=seed).reset_index(drop=True)


def _expected_human(t: pd.DataFrame) -> dict:
    """conflicts='human' by a loop: people's rows if any, then the majority (tie: higher)."""
    out = {}
    for (q, d), g in t.groupby(["query_id", "doc_id"], sort=False):
        people = g[[j in ("human",) or j.startswith("human:") for j in g["judge"]]]
        use = people if len(people) else g
        votes = Counter(use["relevance"])
        out[(q, d)] = max(votes, key=lambda r: (votes[r], r))
    return out


@pytest.mark.parametrize("seed", [0, 1])
def test_human_labels_outrank_model_labels(seed):
    t = _mixed(seed)
    got = ef.read_qrels(t, conflicts="human")
    want = _expected_human(t)
    assert len(got) == len(want)
    assert {(q, d): r for q, d, r in got[["query_id", "doc_id", "relevance"]].itertuples(index=False)} == want
    # the kept row's provenance gives the resolved label, a person's row first
    for r in got.itertuples(index=False):
        g = t[(t["query_id"] == r.query_id) & (t["doc_id"] == r.doc_id) & (t["relevance"] == r.relevance)]
        people = g[is_human(g["judge"])]
        src = people if len(people) else g
        assert (r.judge, r.confidence) == tuple(src[["judge", "confidence"]].iloc[0])
    # counted: pairs with more than one distinct label among all their rows
    n_conf = int((t.groupby(["query_id", "doc_id"])["relevance"].nunique() > 1).sum())
    run = t.drop_duplicates(["query_id", "doc_id"])[["query_id", "doc_id"]].assign(score=1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        diag = ef.diagnostics(run, t, conflicts="human")
    row = diag[diag["check"] == "golden_set_conflicting_labels"]
    assert int(row["count"].iloc[0]) == n_conf and "human" in str(row["action"].iloc[0])


def test_provenance_is_kept_through_aliases_files_and_conflicts(tmp_path):
    t = pd.DataFrame({"qid": ["1", "1", "2", "2"], "docno": ["a", "b", "c", "c"], "rel": [1, 0, 2, 2],
                      "annotator": ["human", "gpt-x:v3", "gpt-x:v3", "human:bob"], "confidence": [None, 0.8, 0.6, 1.0]})
    for alias in ["annotator", "labeled_by", "source", "judge"]:
        got = ef.read_qrels(t.rename(columns={"annotator": alias}))
        assert list(got.columns) == ["query_id", "doc_id", "relevance", "judge", "confidence"]
        # identical labels of one pair are one row, the person's provenance kept
        assert got["judge"].tolist() == ["human", "gpt-x:v3", "human:bob"]
        assert got["confidence"].tolist()[1:] == [0.8, 1.0] and np.isnan(got["confidence"].iloc[0])
    t.to_csv(tmp_path / "qrels.csv", index=False)
    assert ef.read_qrels(tmp_path / "qrels.csv")["judge"].tolist() == ["human", "gpt-x:v3", "human:bob"]
    mapped = ef.read_qrels(t.rename(columns={"annotator": "who"}), columns={"who": "judge"})
    assert mapped["judge"].tolist() == ["human", "gpt-x:v3", "human:bob"]
    # provenance does not change any value
    run = pd.DataFrame({"query_id": ["1", "1", "2"], "doc_id": ["b", "a", "c"], "score": [2.0, 1.0, 1.0]})
    pd.testing.assert_frame_equal(ef.evaluate(run, t, ["P@1", "nDCG", "AP"]),
                                  ef.evaluate(run, t.drop(columns=["annotator", "confidence"]), ["P@1", "nDCG", "AP"]))
    with pytest.raises(EvalframeInputError, match="confidence that is not a number in \\[0, 1\\]"):
        ef.read_qrels(t.assign(confidence=[0.5, 2.0, "x", None]))
    with pytest.raises(EvalframeInputError, match="conflicts='human' to keep a person's label"):
        ef.read_qrels(t.assign(rel=[1, 0, 2, 1]))


def test_is_human():
    assert is_human(pd.Series(["human", "Human", "human:alice", None, "gpt-4", "humane-bot", np.nan])).tolist() == [
        True, True, True, True, False, False, True]


def test_report_shows_labels_by_judge():
    cran = ef.datasets.load_cranfield()
    rng = np.random.default_rng(0)
    q = cran.qrels.assign(judge=np.where(rng.random(len(cran.qrels)) < 0.3, "gpt-x:v3", "human"))
    runs = cran.runs[cran.runs["system"].isin(["bm25", "tfidf"])]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rep = ef.report(runs, q, measures=["R@5", "P@10"], n_resamples=50)
    d = rep.diagnostics
    rows = d[d["check"] == "labels_by_judge"].set_index("system", drop=False)
    assert int(rows.loc["gpt-x:v3", "count"]) == int((q["judge"] == "gpt-x:v3").sum())
    assert int(rows.loc["human", "count"]) == int((q["judge"] == "human").sum())
    # each system's share of judged top-10 documents carrying a model's label, by a loop
    label = {(a, b): j for a, b, j in q[["query_id", "doc_id", "judge"]].itertuples(index=False)}
    share = d[d["check"] == "model_labels_at_k"].set_index("system")["value"]
    for s, g in runs.groupby("system"):
        n_judged = n_model = 0
        for qid, gq in g.groupby("query_id"):
            if qid not in set(q["query_id"]):
                continue
            top = gq.sort_values(["score", "doc_id"], ascending=[False, False]).head(10)
            for d_ in top["doc_id"]:
                j = label.get((qid, d_))
                n_judged += j is not None
                n_model += j == "gpt-x:v3"
        assert share[s] == pytest.approx(n_model / n_judged, abs=1e-12)


def test_rollup_keeps_the_judge_of_the_chunk_whose_label_the_page_takes():
    from evalframe.rollup import rollup_map, rollup_qrels
    from evalframe.schema import check_qrels
    q = check_qrels(pd.DataFrame({"query_id": ["q", "q", "q", "q"], "doc_id": ["p1#0", "p1#1", "p2#0", "p3"],
                                  "relevance": [0, 2, 1, 1], "judge": ["human", "gpt-x", "human", None],
                                  "confidence": [1.0, 0.6, 0.9, np.nan]}))
    pages = rollup_qrels(q, rollup_map({"p1#0": "p1", "p1#1": "p1", "p2#0": "p2"}))[0].frame
    assert pages["doc_id"].tolist() == ["p1", "p2", "p3"]
    assert pages["judge"].tolist()[:2] == ["gpt-x", "human"] and pd.isna(pages["judge"].iloc[2])
    assert pages["confidence"].tolist()[:2] == [0.6, 0.9]
