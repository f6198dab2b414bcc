"""Report.explain and the report's rankings table (issue 30): the two rankings behind a
top change, as the measures rank them. Oracles: the per-question RR and P@10 of the same
report recomputed from the kept rankings; the run's own rows."""
from __future__ import annotations

import re
import warnings

import numpy as np
import pandas as pd
import pytest

import evalframe as ef


@pytest.fixture(scope="module")
def cran():
    return ef.datasets.load_cranfield()


@pytest.fixture(scope="module")
def rep(cran):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ef.report(cran.runs, cran.qrels, measures=["RR", "P@10"], baseline="bm25", n_resamples=20)


def test_rankings_agree_with_the_measures(rep, cran):
    rk = rep.rankings
    assert list(rk.columns) == ["system", "query_id", "rank", "doc_id", "score", "label"]
    pairs = set(zip(rk.system, rk.query_id))
    want = set(zip(rep.changes.system_a, rep.changes.query_id)) | set(zip(rep.changes.system_b, rep.changes.query_id))
    assert pairs == want
    pq = rep.per_question.set_index(["system", "query_id", "measure"])["value"]
    for (s, q), r in rk.groupby(["system", "query_id"]):
        r = r.sort_values("rank")
        assert r["rank"].tolist() == list(range(1, len(r) + 1)) and len(r) <= 10
        assert (r["score"].diff().dropna() <= 0).all()  # score descending
        hits = (r["label"] >= 1).to_numpy()
        assert pq[(s, q, "P@10")] == pytest.approx(hits.sum() / 10)
        rr = pq[(s, q, "RR")]
        if hits.any():
            assert rr == pytest.approx(1 / (np.argmax(hits) + 1))
        else:
            assert rr < 1 / 10 + 1e-12
    # the documents and scores are the run's rows
    run = cran.runs.assign(query_id=cran.runs.query_id.astype(str), doc_id=cran.runs.doc_id.astype(str))
    merged = rk.merge(run, on=["system", "query_id", "doc_id"], suffixes=("", "_run"))
    assert len(merged) == len(rk) and np.allclose(merged["score"], merged["score_run"])
    qrels = cran.qrels.assign(query_id=cran.qrels.query_id.astype(str), doc_id=cran.qrels.doc_id.astype(str))
    lab = rk.merge(qrels, on=["query_id", "doc_id"], how="left")
    assert np.array_equal(lab["label"].fillna(-9).to_numpy(), lab["relevance"].fillna(-9).to_numpy())


def test_explain_side_by_side(rep):
    row = rep.changes.iloc[0]
    t = rep.explain(row.query_id, row.system_a, row.system_b)
    assert list(t.columns) == ["rank", "doc_a", "label_a", "doc_b", "label_b"]
    rk = rep.rankings
    a = rk[(rk.system == row.system_a) & (rk.query_id == row.query_id)].sort_values("rank")
    assert t["doc_a"].dropna().tolist() == a["doc_id"].tolist()
    first = {}
    for side, s in (("a", row.system_a), ("b", row.system_b)):
        hit = t.loc[t[f"label_{side}"] >= 1, "rank"]
        first[s] = int(hit.min()) if len(hit) else None
    rr = rep.per_question.set_index(["system", "query_id", "measure"])["value"]
    for s in (row.system_a, row.system_b):
        v = rr[(s, row.query_id, "RR")]
        assert first[s] == (round(1 / v) if v >= 0.1 else None)
    rows = rep.changes[rep.changes.query_id == row.query_id]
    largest = rows.loc[rows["diff"].abs().idxmax(), "system_b"]  # the default pair
    assert rep.explain(row.query_id).equals(rep.explain(row.query_id, "bm25", largest))
    with pytest.raises(ValueError, match="not among the top changes"):
        rep.explain("no-such-question")


def test_saved_html_and_older_reports(rep, tmp_path, cran):
    back = ef.read_report(rep.to_parquet(tmp_path / "pq"))
    pd.testing.assert_frame_equal(back.rankings, rep.rankings, check_dtype=False)
    back_csv = ef.read_report(rep.to_csv(tmp_path / "csv"))
    assert back_csv.explain(rep.changes.query_id.iloc[0]).shape == rep.explain(rep.changes.query_id.iloc[0]).shape
    (tmp_path / "pq" / "rankings.parquet").unlink()  # a report saved before the table existed
    old = ef.read_report(tmp_path / "pq")
    assert old.rankings.empty
    with pytest.raises(ValueError, match="kept no rankings"):
        old.explain(rep.changes.query_id.iloc[0])
    page = rep.to_html(tmp_path / "r.html").read_text()
    details = re.findall(r"<details class='ef-explain'>(.*?)</details>", page, re.S)
    assert details and "first relevant of bm25" in details[0] and "data-table='explain'" in details[0]
    # a run given as a file keeps no rankings: the page has no drill-down, the rest is there
    path = tmp_path / "runs.parquet"
    cran.runs.to_parquet(path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from_file = ef.report(str(path), cran.qrels, measures=["RR"], baseline="bm25", n_resamples=20)
    assert from_file.rankings.empty and "ef-explain" not in from_file.to_html(tmp_path / "f.html").read_text()


def test_explain_of_a_system_without_a_kept_ranking_is_an_error(rep):
    # an unknown system gave a table whose side was all NaN
    q = rep.changes["query_id"].iloc[0]
    with pytest.raises(ValueError, match="no ranking of \\['nosuch'\\] is kept"):
        rep.explain(q, "bm25", "nosuch")
