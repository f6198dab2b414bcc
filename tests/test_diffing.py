"""ef.diff and ``evalframe diff``: constructed changes with known answers (one system's
run changed, a system removed, a measure swapped, a question dropped from the golden
set), paired intervals against scipy, the refusal across golden sets, saved reports
(read_report round trip) through the command, text and Markdown."""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

import evalframe as ef
from evalframe.cli import main


@pytest.fixture(scope="module")
def cran():
    return ef.datasets.load_cranfield()


def _report(runs, qrels, measures=("nDCG@10", "R@10")):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ef.report(runs, qrels, measures=list(measures), n_resamples=20)


@pytest.fixture(scope="module")
def old(cran):
    return _report(cran.runs, cran.qrels)


def _worse_bm25(runs):
    r = runs.copy()
    bm = r.system == "bm25"
    # bm25 loses its top document on every question: scores of rank 1 sent to the bottom
    top = r[bm].groupby("query_id")["score"].transform("max") == r.loc[bm, "score"]
    r.loc[top[top].index, "score"] = -1.0
    return r


def test_one_changed_run_and_a_removed_system(cran, old):
    runs = _worse_bm25(cran.runs)
    new = _report(runs[runs.system != "tfidf"], cran.qrels, measures=("nDCG@10", "AP"))
    d = ef.diff(old, new)
    assert d.systems_removed == ["tfidf"] and d.systems_added == []
    assert d.measures_removed == ["R@10"] and d.measures_added == ["AP"]
    assert d.questions_added == [] and d.questions_removed == []
    back = ef.diff(new, old)  # the other way round: the system and measure are added
    assert back.systems_added == ["tfidf"] and back.measures_added == ["R@10"] and back.systems_removed == []
    c = d.changes.set_index(["system", "measure"])
    assert set(c.index) == {(s, "nDCG@10") for s in ["bm25", "dense_exact", "dense_hnsw", "hybrid_rrf"]}
    # the paired interval is scipy's paired t on the per-question values
    a = old.per_question.query("system == 'bm25' and measure == 'nDCG@10'").set_index("query_id")["value"]
    b = new.per_question.query("system == 'bm25' and measure == 'nDCG@10'").set_index("query_id")["value"]
    b = b.loc[a.index]
    t = sps.ttest_rel(b, a)
    lo, hi = t.confidence_interval(0.95)
    row = c.loc[("bm25", "nDCG@10")]
    assert row["n_paired"] == 225 and row["method"] == "paired t"
    assert row["change"] == pytest.approx(b.mean() - a.mean()) and row["change"] < -0.02
    assert (row["change_paired"], row["ci_low"], row["ci_high"], row["p_value"]) == pytest.approx(
        (b.mean() - a.mean(), lo, hi, t.pvalue))
    for s in ["dense_exact", "dense_hnsw", "hybrid_rrf"]:  # untouched: no change at all
        assert c.loc[(s, "nDCG@10"), "change"] == 0 and c.loc[(s, "nDCG@10"), "ci_high"] == 0
    fp = d.fingerprints.set_index("what")
    assert "run bm25" in fp.index and "run dense_exact" not in fp.index and "golden set" not in fp.index
    assert "run tfidf" in fp.index and fp.loc["run tfidf", "new"] == "absent"
    text, md = d.to_text(), d.to_markdown()
    assert "systems removed (1): tfidf" in text and "run bm25" in text
    rows = [r for r in md.splitlines() if r.startswith("| bm25 ")]
    assert len(rows) == 1 and "paired t" in rows[0]


def test_refuses_pairing_across_golden_sets_unless_told(cran, old):
    q2 = cran.qrels.copy()
    q2.loc[q2.index[:5], "relevance"] = 0  # five labels changed
    dropped = sorted(q2.query_id.astype(str).unique())[-1]
    q2 = q2[q2.query_id.astype(str) != dropped]
    new = _report(cran.runs, q2)
    d = ef.diff(old, new)
    assert "golden set" in set(d.fingerprints.what)
    assert d.changes["n_paired"].eq(0).all() and d.changes["ci_low"].isna().all()
    assert (d.changes["method"] == "not paired: golden sets differ").all()
    assert any("across_golden_sets=True" in n for n in d.notes)
    assert d.questions_removed == [dropped]
    back = ef.diff(new, old)  # the other way round: the question is added
    assert back.questions_added == [dropped] and back.questions_removed == []
    told = ef.diff(old, new, across_golden_sets=True)
    assert (told.changes["method"] == "paired t").all() and (told.changes["n_paired"] == 224).all()


def test_same_report_no_change(old):
    d = ef.diff(old, old)
    assert (d.changes["change"] == 0).all() and d.fingerprints.empty and not d.notes
    with pytest.raises(ValueError, match="old must be a Report"):
        ef.diff(old.summary, old)


def test_command_on_saved_reports(cran, old, tmp_path, capsys):
    new = _report(_worse_bm25(cran.runs), cran.qrels)
    old.to_parquet(tmp_path / "old")
    new.to_csv(tmp_path / "new")
    assert main(["diff", str(tmp_path / "old"), str(tmp_path / "new")]) == 0
    out = capsys.readouterr().out
    want = ef.diff(old, new).to_text()
    assert out == want and "run bm25" in out
    assert main(["diff", str(tmp_path / "old"), str(tmp_path / "new"), "--format", "markdown"]) == 0
    assert capsys.readouterr().out.startswith("## What changed")
    assert main(["diff", str(tmp_path / "old"), str(tmp_path / "missing")]) == 2
    assert "not a folder" in capsys.readouterr().err
    old.to_parquet(tmp_path / "out_old" / "parquet")  # the --out folder of evalframe report
    assert main(["diff", str(tmp_path / "out_old"), str(tmp_path / "new")]) == 0
    assert capsys.readouterr().out == want
    (tmp_path / "empty").mkdir()
    assert main(["diff", str(tmp_path / "old"), str(tmp_path / "empty")]) == 2


def test_html_section_and_report_previous(cran, old, tmp_path, capsys):
    import re
    new = _report(_worse_bm25(cran.runs), cran.qrels)
    d = ef.diff(old, new)
    page = new.to_html(tmp_path / "report.html", diff=d).read_text()
    section = re.search(r"<section id='diff'>(.*?)</section>", page, re.S).group(1)
    rows = re.findall(r"<tr>(.*?)</tr>", section.split("<tbody>")[1])
    assert len(rows) == len(d.changes) == 10
    assert "bm25" in rows[0] and "paired t" in rows[0] and "run bm25" in section
    assert "<section id='diff'>" not in new.to_html(tmp_path / "plain.html").read_text()
    alone = d.to_html(tmp_path / "diff.html")
    assert alone.startswith("<!DOCTYPE html>") and "data-table='diff'" in alone
    # evalframe report --previous DIR: the page's section and the text
    old.to_parquet(tmp_path / "prev" / "parquet")
    data = tmp_path / "data"
    data.mkdir()
    _worse_bm25(cran.runs).to_parquet(data / "runs.parquet")
    cran.qrels.to_csv(data / "qrels.tsv", sep="\t", index=False)
    argv = ["report", str(data / "qrels.tsv"), str(data / "runs.parquet"), "-m", "nDCG@10", "R@10",
            "--n-resamples", "20", "--previous", str(tmp_path / "prev"), "--out", str(tmp_path / "out")]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert f"Since {tmp_path / 'prev'}: Changes of the means" in out
    html = (tmp_path / "out" / "report.html").read_text()
    assert "<section id='diff'>" in html and "What changed since the earlier report" in html
    assert main(argv[:-4] + ["--previous", str(tmp_path / "nothing")]) == 2


def test_read_report_takes_the_out_folder_of_the_report_command(tmp_path, old):
    # the README's ef.diff(ef.read_report("out/main"), ...) on a folder of `evalframe report --out`
    rep = old
    rep.to_csv(tmp_path / "out" / "csv")
    rep.to_parquet(tmp_path / "out" / "parquet")
    back = ef.read_report(tmp_path / "out")
    assert back.summary.equals(ef.read_report(tmp_path / "out" / "parquet").summary)
    assert ef.read_report(tmp_path / "out", format="csv").summary.shape == rep.summary.shape


def test_an_absent_fingerprint_reads_absent_not_nan():
    from evalframe.diffing import _fingerprint_rows
    rows = _fingerprint_rows({"golden_set": "a1", "runs": {"x": "r1"}, "chunks": None},
                             {"golden_set": "a1", "runs": {"y": float("nan")}, "chunks": float("nan")})
    assert rows.values.tolist() == [["run x", "r1", "absent"]]
