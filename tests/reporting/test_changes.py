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
    # a run given as a file keeps its rankings too (read again for the top changes): the page has its drill-down
    path = tmp_path / "runs.parquet"
    cran.runs.to_parquet(path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from_file = ef.report(str(path), cran.qrels, measures=["RR"], baseline="bm25", n_resamples=20)
    assert len(from_file.rankings) and "ef-explain" in from_file.to_html(tmp_path / "f.html").read_text()


def test_explain_of_a_system_without_a_kept_ranking_is_an_error(rep):
    # an unknown system gave a table whose side was all NaN
    q = rep.changes["query_id"].iloc[0]
    with pytest.raises(ValueError, match="no ranking of \\['nosuch'\\] is kept"):
        rep.explain(q, "bm25", "nosuch")


# ---- issue 30: explain beyond runs held in memory
def quiet_report(run, qrels, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ef.report(run, qrels, measures=["RR", "P@10"], baseline="bm25", n_resamples=20, **kw)


@pytest.mark.parametrize("form", ["file", "int_ids", "directory", "dataset", "dict", "renamed", "trec"])
def test_a_run_given_by_path_keeps_the_same_rankings(rep, cran, tmp_path, form):
    """Oracle: the rankings of the report on the same run held in memory (``rep``)."""
    import pyarrow.dataset as pads
    runs = cran.runs.copy()
    columns = None
    if form == "file":
        run = str(tmp_path / "runs.parquet")
        runs.to_parquet(run)
    elif form == "int_ids":  # questions stored as integers: the filter is on the integers
        run = str(tmp_path / "runs.parquet")
        runs.assign(query_id=runs["query_id"].astype(int)).to_parquet(run)
    elif form == "directory":  # one file per system, a folder of them (a dataset)
        (tmp_path / "d").mkdir()
        for i, (name, g) in enumerate(runs.groupby("system", sort=False)):
            g.to_parquet(tmp_path / "d" / f"part-{i}.parquet")
        run = str(tmp_path / "d")
    elif form == "dataset":
        runs.to_parquet(tmp_path / "runs.parquet")
        run = pads.dataset(str(tmp_path / "runs.parquet"))
    elif form == "dict":  # {system: file}, the files without a system column
        run = {}
        for name, g in runs.groupby("system", sort=False):
            g.drop(columns="system").to_parquet(tmp_path / f"{name}.parquet")
            run[name] = str(tmp_path / f"{name}.parquet")
    elif form == "renamed":  # the question column named by columns=
        run = str(tmp_path / "runs.parquet")
        runs.rename(columns={"query_id": "my_q"}).to_parquet(run)
        columns = {"my_q": "query_id"}
    else:  # a TREC text run per system
        run = []
        for name, g in runs.groupby("system", sort=False):
            path = tmp_path / f"{name}.trec"
            g = g.sort_values(["query_id", "score"], ascending=[True, False])
            g = g.assign(Q0="Q0", rank=g.groupby("query_id").cumcount() + 1, tag=name)
            g[["query_id", "Q0", "doc_id", "rank", "score", "tag"]].to_csv(path, sep=" ", header=False, index=False)
            run.append(str(path))
    got = quiet_report(run, cran.qrels, **({"columns": columns} if columns else {}))
    pd.testing.assert_frame_equal(got.changes, rep.changes)
    key = ["system", "query_id", "rank"]
    pd.testing.assert_frame_equal(got.rankings.sort_values(key).reset_index(drop=True),
                                  rep.rankings.sort_values(key).reset_index(drop=True), check_exact=False)
    q = rep.changes["query_id"].iloc[0]
    pd.testing.assert_frame_equal(got.explain(q), rep.explain(q))


def test_question_rows_reads_only_the_questions_asked(cran, tmp_path):
    """The Parquet filter: the rows read are those of the questions asked, and equal the
    run's own rows (oracle: read_run of the whole run, cut here)."""
    import pyarrow.dataset as pads
    from evalframe.reporting.changes import question_rows
    path = tmp_path / "runs.parquet"
    cran.runs.to_parquet(path, row_group_size=1000)
    asked = ["1", "102", "225"]
    got = question_rows(str(path), asked)
    assert set(got["query_id"]) == set(asked)
    full = ef.read_run(cran.runs)
    want = full[full["query_id"].isin(asked)]
    key = ["system", "query_id", "doc_id"]
    pd.testing.assert_frame_equal(got.sort_values(key).reset_index(drop=True)[want.columns.tolist()],
                                  want.sort_values(key).reset_index(drop=True), check_dtype=False)
    # the scan itself returns only those rows (pyarrow applies the filter while reading)
    from evalframe.reporting.changes import _question_filter  # noqa: the private helper, tested here
    ds = pads.dataset(str(path))
    assert ds.to_table(filter=_question_filter(ds, "query_id", asked)).num_rows == len(want) < len(cran.runs) / 50
    assert question_rows(str(path), ["no-such"]) is None  # nothing to rank: no rankings, no error


def test_explain_says_what_to_do_without_rankings(cran, tmp_path):
    chunks_free_rollup = pd.DataFrame({"doc_id": cran.runs["doc_id"].astype(str).unique()})
    chunks_free_rollup["page_id"] = chunks_free_rollup["doc_id"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rolled = ef.report(cran.runs, cran.qrels, measures=["RR"], baseline="bm25", n_resamples=20,
                           rollup=chunks_free_rollup)
    assert rolled.rankings.empty
    with pytest.raises(ValueError, match=r"rollup=.*Dask or Spark run: write it to Parquet.*pass the path"):
        rolled.explain(rolled.changes["query_id"].iloc[0])
