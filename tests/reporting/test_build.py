"""report(): every table checked against evaluate() and the statistics layer."""
from __future__ import annotations

import math
import re
import sys
import warnings

import numpy as np
import pandas as pd
import pytest

import evalframe as ef
from evalframe import stats
from evalframe.errors import EvalframeInputError
from evalframe.reporting import (MIN_SEGMENT_QUESTIONS, Report, SmallGoldenSetWarning,
                              UnjudgedDocumentsWarning, read_segments, report)
from evalframe.reporting import pipe_table as _pipe_table

B = 200
MEASURES = ["R@5", "nDCG@10", "RR"]


@pytest.fixture(scope="module")
def cran():
    return ef.datasets.load_cranfield()


@pytest.fixture(scope="module")
def rep(cran):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return report(cran.runs, cran.qrels, measures=MEASURES, segments=cran.segments, baseline="bm25",
                      stages={"bm25": 100, "hybrid_rrf": 5}, n_resamples=B, seed=3)


@pytest.fixture(scope="module")
def per_q(cran):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ef.evaluate(cran.runs, cran.qrels, MEASURES)


def test_summary_matches_stats_layer(rep, per_q):
    want = stats.summarize(per_q, method="bootstrap", n_resamples=B, seed=3)
    got = rep.summary
    assert list(got.columns[:7]) == ["system", "measure", "n", "mean", "sd", "se", "ci_low"]
    assert "ci_high" in got.columns
    assert len(got) == 5 * len(MEASURES)
    m = got.merge(want, on=["system", "measure"], suffixes=("", "_want"))
    assert len(m) == len(got)
    for c in ["n", "mean", "se", "ci_low", "ci_high"]:
        np.testing.assert_allclose(m[c].astype(float), m[c + "_want"].astype(float), rtol=1e-12)
    # and the means are evaluate()'s aggregate
    agg = ef.aggregate(per_q).set_index(["system", "measure"])["mean"]
    np.testing.assert_allclose(got.set_index(["system", "measure"])["mean"], agg.loc[got.set_index(
        ["system", "measure"]).index], rtol=1e-12)
    assert list(pd.unique(got["system"])) == ["bm25", "tfidf", "dense_exact", "dense_hnsw", "hybrid_rrf"]
    assert list(pd.unique(got["measure"])) == MEASURES


def test_per_question_is_evaluate_with_segments(rep, per_q, cran):
    got = rep.per_question
    assert list(got.columns) == ["system", "query_id", "measure", "value", "length", "question_form"]
    want = per_q.merge(cran.segments, on="query_id", how="left")
    key = ["system", "query_id", "measure"]
    pd.testing.assert_frame_equal(got.sort_values(key).reset_index(drop=True),
                                  want.sort_values(key).reset_index(drop=True), check_dtype=False)


def test_by_segment_matches_stats_layer(rep, per_q, cran):
    t = rep.by_segment
    assert list(t.columns[:9]) == ["system", "segment", "segment_value", "measure", "n", "mean", "se",
                                  "ci_low", "ci_high"]
    assert set(t["segment"]) == {"length", "question_form"}
    j = per_q.merge(cran.segments, on="query_id")
    want = stats.summarize(j, by="question_form", method="bootstrap", n_resamples=B, seed=3)
    got = t[t["segment"] == "question_form"].rename(columns={"segment_value": "question_form"})
    m = got.merge(want, on=["system", "question_form", "measure"], suffixes=("", "_w"))
    assert len(m) == len(got) == 5 * 4 * len(MEASURES)
    for c in ["n", "mean", "ci_low", "ci_high"]:
        np.testing.assert_allclose(m[c].astype(float), m[c + "_w"].astype(float), rtol=1e-12)
    # flags
    np.testing.assert_array_equal(t["too_small"], t["n"] < MIN_SEGMENT_QUESTIONS)
    np.testing.assert_array_equal(t["below_overall"], t["ci_high"] < t["overall_mean"])
    overall = rep.summary.set_index(["system", "measure"])["mean"]
    np.testing.assert_allclose(t["overall_mean"], overall.loc[list(zip(t["system"], t["measure"]))].to_numpy())
    np.testing.assert_allclose(t["gap"], t["mean"] - t["overall_mean"])
    assert set(t.loc[t["below_overall"] & ~t["too_small"], "flag"]) <= {"below overall"}


def test_segment_flags_on_a_planted_zero_segment(cran):
    seg = cran.segments.copy()
    # a segment of the questions where bm25 scores 0 on R@10: far below, must be flagged
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pq = ef.evaluate(cran.runs[cran.runs.system == "bm25"], cran.qrels, "R@10")
        zero = set(pq.loc[pq["value"] == 0, "query_id"])
        seg["kind"] = np.where(seg["query_id"].isin(zero), "zeros", "rest")
        seg.loc[seg.index[:5], "kind"] = "tiny"
        r = report(cran.runs[cran.runs.system == "bm25"], cran.qrels, measures=["R@10"],
                   segments=seg[["query_id", "kind"]], n_resamples=B)
    t = r.by_segment.set_index("segment_value")
    assert t.loc["zeros", "mean"] == 0 and t.loc["zeros", "below_overall"]
    assert t.loc["zeros", "flag"] == "below overall"
    assert t.loc["tiny", "too_small"] and t.loc["tiny", "flag"].startswith("too small")
    assert not t.loc["rest", "below_overall"]


def test_comparisons_are_the_paired_table(rep, per_q):
    want = stats.compare(per_q, baseline="bm25", test="t")  # report()'s default test
    got = rep.comparisons
    assert set(want.columns) <= set(got.columns) and "significant" in got.columns
    key = ["measure", "system_a", "system_b"]
    m = got.merge(want, on=key, suffixes=("", "_w"))
    assert len(m) == len(got) == 4 * len(MEASURES)
    for c in ["diff", "ci_low", "ci_high", "p_value", "p_adjusted", "wins", "losses"]:
        np.testing.assert_allclose(m[c].astype(float), m[c + "_w"].astype(float), rtol=1e-12)
    assert (got["system_a"] == "bm25").all()
    np.testing.assert_array_equal(got["significant"], got["p_adjusted"] < 0.05)


def test_all_pairs_without_baseline(cran):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = report(cran.runs, cran.qrels, measures=["RR"], n_resamples=B)
    assert len(r.comparisons) == 10


def test_diagnostics(rep, cran):
    d = rep.diagnostics
    assert list(d.columns) == ["check", "system", "measure", "count", "value", "level", "detail", "action",
                               "examples"]
    counted = d[d["check"] == "questions_counted"]
    assert counted["count"].tolist() == [225] * 5
    size = d[d["check"] == "golden_set_size"].iloc[0]
    assert size["count"] == 225 and size["level"] == "info"
    assert size["value"] == pytest.approx(stats.half_width(p=0.5, n=225))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        judged = ef.aggregate(ef.evaluate(cran.runs, cran.qrels, ["Judged@5", "Judged@10"]))
    j = d[d["check"] == "judged_at_k"].merge(judged[["system", "measure", "mean"]], on=["system", "measure"])
    assert len(j) == 10
    np.testing.assert_allclose(j["value"], j["mean"])
    assert (j["level"] == "warning").all()  # Cranfield judges few of the top 5
    ties = d[d["check"] == "score_ties"].set_index("system")["count"]
    raw = ef.diagnostics(cran.runs, cran.qrels)
    assert ties.to_dict() == raw[raw["check"] == "score_ties"].set_index("system")["count"].to_dict()
    assert set(d.loc[d["check"] == "measure", "measure"]) == set(MEASURES)
    conv = d[d["check"] == "convention"]
    assert set(conv["system"]) == {"rel", "ties", "missing", "depth", "duplicates", "conflicts", "no_relevant",
                                   "ascending"}
    assert (d["check"] == "duplicates").sum() == 1


def test_warnings_are_structured(cran):
    with pytest.warns(UnjudgedDocumentsWarning):
        report(cran.runs, cran.qrels, measures=["R@5"], n_resamples=B)
    sso = ef.datasets.load_sso()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        r = report(sso.runs, sso.qrels, n_resamples=B)
    kinds = [w.category for w in caught]
    assert kinds.count(SmallGoldenSetWarning) == 1
    # one warning names every cutoff whose top k is mostly unjudged
    assert kinds.count(UnjudgedDocumentsWarning) == 1
    msg = str(next(w.message for w in caught if w.category is UnjudgedDocumentsWarning))
    assert "70% at k = 10" in msg and "at k = 5" in msg
    w = r.warnings
    assert "golden_set_size" in set(w["check"])
    assert any("working minimum" in x for x in r.warning_lines())


def test_scored_zero_and_dropped_questions_reach_diagnostics(cran):
    run = cran.runs[~((cran.runs.system == "tfidf") & cran.runs.query_id.isin(["1", "2"]))]
    extra = pd.DataFrame({"system": "bm25", "query_id": "nope", "doc_id": "x", "score": 1.0}, index=[0])
    run = pd.concat([run, extra], ignore_index=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = report(run, cran.qrels, measures=["R@5"], n_resamples=B)
    d = r.diagnostics.set_index(["check", "system"])
    assert d.loc[("golden_questions_not_in_run", "tfidf"), "count"] == 2
    assert d.loc[("run_questions_not_in_golden_set", "bm25"), "count"] == 1
    assert d.loc[("questions_counted", "tfidf"), "count"] == 225


def test_stages(rep, cran):
    st = rep.stages
    assert list(st.columns) == ["stage", "system", "measure", "k", "n", "mean", "ci_low", "ci_high", "ceiling",
                                "share_of_ceiling", "lost", "method"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = ef.aggregate(ef.evaluate(cran.runs, cran.qrels, ["R@100", "R@5"])).set_index(["system", "measure"])
    first, final = a.loc[("bm25", "R@100"), "mean"], a.loc[("hybrid_rrf", "R@5"), "mean"]
    assert st["system"].tolist() == ["bm25", "hybrid_rrf"] and st["k"].tolist() == [100, 5]
    assert st["mean"].tolist() == pytest.approx([first, final])
    assert st["share_of_ceiling"].tolist() == pytest.approx([1.0, final / first])
    assert st["lost"].iloc[1] == pytest.approx(first - final)
    assert (st["ci_low"] <= st["mean"]).all() and (st["mean"] <= st["ci_high"]).all()


def test_curves(rep):
    c = rep.curves
    assert list(c.columns[:5]) == ["system", "family", "k", "measure", "n"]
    assert c["k"].min() == 1 and c["k"].max() == 100
    r5 = c[(c["system"] == "bm25") & (c["k"] == 5)]["mean"].iloc[0]
    s5 = rep.summary.query("system == 'bm25' and measure == 'R@5'")["mean"].iloc[0]
    assert r5 == pytest.approx(s5)
    for _, g in c.groupby("system"):
        assert (np.diff(g.sort_values("k")["mean"]) >= -1e-12).all()  # recall@k never falls with k


def test_planning(rep):
    p = rep.planning
    assert 225 in set(p["n"]) and set(p["measure"]) == set(MEASURES)
    assert p["power"].notna().all()


def test_report_is_immutable_and_inputs_untouched(cran):
    runs, qrels, seg = cran.runs.copy(), cran.qrels.copy(), cran.segments.copy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = report(runs, qrels, measures=["R@5"], segments=seg, n_resamples=B)
    pd.testing.assert_frame_equal(runs, cran.runs)
    pd.testing.assert_frame_equal(qrels, cran.qrels)
    pd.testing.assert_frame_equal(seg, cran.segments)
    s = r.summary
    s.loc[:, "mean"] = -1
    assert (r.summary["mean"] >= 0).all()
    with pytest.raises(Exception):
        r._tables = {}
    m = r.metadata
    m["seed"] = 99
    assert r.metadata["seed"] == 0


def test_segments_as_golden_set_column_and_missing(cran):
    q = cran.qrels.merge(cran.segments[["query_id", "length"]], on="query_id")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = report(cran.runs[cran.runs.system == "bm25"], q, measures=["R@5"], segments="length", n_resamples=B)
        assert set(r.by_segment["segment_value"]) == {"short", "medium", "long"}
        part = cran.segments.iloc[10:]
        r2 = report(cran.runs[cran.runs.system == "bm25"], cran.qrels, measures=["R@5"], segments=part,
                    n_resamples=B)
    assert "(none)" in set(r2.by_segment["segment_value"])
    assert "segments_missing_questions" in set(r2.warnings["check"])


def test_read_segments_checks(tmp_path, cran):
    with pytest.raises(EvalframeInputError, match="query_id"):
        read_segments(pd.DataFrame({"q": ["1"], "s": ["a"]}))
    with pytest.raises(EvalframeInputError, match="more than one row"):
        read_segments(pd.DataFrame({"query_id": ["1", "1"], "s": ["a", "b"]}))
    with pytest.raises(EvalframeInputError, match="no segment column"):
        read_segments(pd.DataFrame({"query_id": ["1"]}))
    cran.segments.to_csv(tmp_path / "s.csv", index=False)
    cran.segments.to_csv(tmp_path / "s.tsv", index=False, sep="\t")
    for f in ("s.csv", "s.tsv"):
        pd.testing.assert_frame_equal(read_segments(tmp_path / f), cran.segments)
    ints = pd.DataFrame({"query_id": [1, 2], "s": ["a", "b"]})
    assert read_segments(ints)["query_id"].tolist() == ["1", "2"]


@pytest.mark.parametrize("suffix", ["csv", "tsv", "parquet"])
def test_an_empty_segment_cell_of_a_file_is_a_missing_value(suffix, tmp_path):
    # an empty cell is how a CSV writes a missing value: "(none)" as in a DataFrame, not a
    # segment "" of its own; "NA" is a value (North America), as in the DataFrame
    df = pd.DataFrame({"query_id": ["1", "2", "NA"], "region": ["eu", None, "NA"]})
    path = tmp_path / f"s.{suffix}"
    if suffix == "parquet":
        df.to_parquet(path)
    else:
        df.to_csv(path, index=False, sep="," if suffix == "csv" else "\t")
    assert read_segments(path)["region"].tolist() == ["eu", "(none)", "NA"]
    assert read_segments(path)["query_id"].tolist() == ["1", "2", "NA"]


def test_bad_arguments(cran):
    with pytest.raises(TypeError, match="unknown keyword"):
        report(cran.runs, cran.qrels, tie="doc_id_asc")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(EvalframeInputError, match="baseline 'nope'"):
            report(cran.runs, cran.qrels, measures=["RR"], baseline="nope", n_resamples=B)
        with pytest.raises(EvalframeInputError, match="not systems"):
            report(cran.runs, cran.qrels, measures=["RR"], stages=["bm25", "nope"], n_resamples=B)
    with pytest.raises(EvalframeInputError, match="at least two"):
        report(cran.runs, cran.qrels, stages=["bm25"])
    with pytest.raises(ValueError, match="confidence"):
        report(cran.runs, cran.qrels, confidence=95)


def test_single_system(cran):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = report(cran.runs[cran.runs.system == "bm25"], cran.qrels, measures=["RR"], n_resamples=B)
    assert r.comparisons.empty and r.systems == ["bm25"]
    assert "Comparisons" not in r.to_markdown()


def test_csv_round_trip(rep, tmp_path):
    rep.to_csv(tmp_path)
    back = Report.read_csv(tmp_path)
    for name in ("summary", "per_question", "by_segment", "comparisons", "diagnostics", "stages", "curves",
                 "planning"):
        pd.testing.assert_frame_equal(getattr(back, name), getattr(rep, name), check_dtype=False,
                                      check_exact=False, rtol=1e-12)
    assert back.metadata == rep.metadata


def test_parquet_round_trip_with_metadata(rep, tmp_path):
    import pyarrow.parquet as pq
    import json

    rep.to_parquet(tmp_path)
    meta = json.loads(pq.read_schema(tmp_path / "summary.parquet").metadata[b"evalframe"])
    assert meta["evalframe_version"] == ef.__version__
    assert meta["seed"] == 3 and meta["n_resamples"] == B and meta["measures"] == MEASURES
    assert meta["conventions"]["ties"] == "doc_id_desc" and meta["test"] == "t"
    back = Report.read_parquet(tmp_path)
    for name in ("summary", "per_question", "by_segment", "comparisons", "diagnostics", "stages", "curves",
                 "planning"):
        pd.testing.assert_frame_equal(getattr(back, name), getattr(rep, name), check_dtype=False)


def test_html(rep):
    h = rep._repr_html_()
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", h))  # the cell's text: markup places the parts
    row = rep.summary.query("system == 'hybrid_rrf' and measure == 'R@5'").iloc[0]
    assert f"{row['mean']:.3f} [{row['ci_low']:.3f}, {row['ci_high']:.3f}]" in text
    assert "▲" in h and "warning" in h and "<table" in h and "Holm" in h


def test_markdown_without_tabulate(rep, monkeypatch):
    import sys
    monkeypatch.setitem(sys.modules, "tabulate", None)
    md = rep.to_markdown()
    assert md.startswith("# evalframe report")
    assert "| system" in md and "## Comparisons" in md and "## Segments" in md
    lines = [l for l in md.splitlines() if l.startswith("|")]
    widths = {len(l) for l in lines[:7]}
    assert len(widths) == 1  # aligned
    t = _pipe_table(pd.DataFrame({"a": ["x|y"], "b": [1.5]})).splitlines()
    assert t[1] == "| ---- | --: |" and "x\\|y" in t[2]


def test_latex(rep):
    tex = rep.to_latex()
    assert "\\toprule" in tex and "\\midrule" in tex and "\\bottomrule" in tex
    assert "hybrid\\_rrf" in tex and "\\textbf{" in tex
    assert "t-test" in tex and "Holm" in tex and "$^{\\dagger}$" in tex
    best = rep.summary.query("measure == 'R@5'").sort_values("mean").iloc[-1]
    assert f"\\textbf{{{best['mean']:.3f}}}" in tex
    assert tex.count("\\\\") == 1 + 5


def test_repr(rep):
    assert "bm25" in repr(rep) and "questions=225" in repr(rep)


def test_comparisons_table_has_the_same_columns_with_one_system():
    sso = ef.datasets.load_sso()
    cran = ef.datasets.load_cranfield()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        one = report(sso.runs, sso.qrels, n_resamples=B).comparisons
        many = report(cran.runs, cran.qrels, measures=["R@5"], n_resamples=B, baseline="bm25").comparisons
    assert one.empty and list(one.columns) == list(many.columns)


# ---------------------------------------------------------------- issue 9: defects 3, 9, 11
def test_diagnostics_text_follows_confidence():
    """Defect 3: the golden-set size line said "95%" whatever ``confidence`` was."""
    sso = ef.datasets.load_sso()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = report(sso.runs, sso.qrels, measures=["P@5"], confidence=0.9, n_resamples=B)
    size = r.diagnostics.query("check == 'golden_set_size'").iloc[0]
    assert "90% interval" in size["detail"] and "95%" not in size["detail"]
    n = int(size["count"])
    assert size["value"] == pytest.approx(stats.half_width(p=0.5, n=n, confidence=0.9))
    assert f"+-{size['value']:.3f}" in size["detail"]
    assert any("90% interval" in line for line in r.warning_lines())
    assert "90% interval" in r.to_markdown()


def test_comparisons_view_keeps_both_intervals_whole_in_a_notebook(rep):
    """Issue 30: the view's one ``diff [CI]`` cell ran to 56 characters, so a notebook (pandas'
    HTML, cells cut at display.max_colwidth = 50) showed ``bonferroni-adj. [-0.05...``. Each
    value has its own cell now; oracle: the comparisons table's numbers, rounded here."""
    import html as html_lib
    import re
    v = rep.comparisons_view()
    c = rep.comparisons
    assert len(v) == len(c) and len(c) > 1
    cells = [html_lib.unescape(x) for x in re.findall(r"<td>(.*?)</td>", v._repr_html_(), re.S)]
    assert cells and not any(x.endswith("...") for x in cells)
    width = pd.get_option("display.max_colwidth")
    assert v.map(len).to_numpy().max() <= width
    interval = r"^\[(-?\d+\.\d{3}), (-?\d+\.\d{3})\]$"
    for col, lo, hi in (("CI", "ci_low", "ci_high"), ("adjusted CI", "ci_low_adjusted", "ci_high_adjusted")):
        got = v[col].str.extract(interval).astype(float)
        assert got.notna().all().all(), col
        np.testing.assert_allclose(got[0], c[lo].to_numpy(), atol=5e-4 + 1e-12)
        np.testing.assert_allclose(got[1], c[hi].to_numpy(), atol=5e-4 + 1e-12)
        assert (got[0] <= got[1]).all()
    np.testing.assert_allclose(v["diff"].astype(float), c["diff"].to_numpy(), atol=5e-4 + 1e-12)
    assert v["diff"].str.match(r"^[+-]\d\.\d{3}$").all()
    assert (v["adjustment"] == c["ci_adjustment"].astype(str).to_numpy()).all()
    assert set(v["adjustment"]) == {"bonferroni"}  # Holm's default: the adjusted interval is shown
    wider = (got[0] <= c["ci_low"].round(3).to_numpy() + 1e-9).all()  # adjusted (last got) contains the unadjusted
    assert wider
    # digits= is the number of decimals of every number
    assert rep.comparisons_view(digits=5)["CI"].str.match(r"^\[-?\d\.\d{5}, -?\d\.\d{5}\]$").all()


def test_comparisons_view_without_adjustment(cran):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = report(cran.runs[cran.runs.system.isin(["bm25", "tfidf"])], cran.qrels, measures=["RR"],
                   baseline="bm25", n_resamples=B, correction="none")
    v = r.comparisons_view()
    assert list(v["adjustment"]) == ["none"] and list(v["adjusted CI"]) == [""]
    c = r.comparisons.iloc[0]
    assert v["CI"].iloc[0] == f"[{c.ci_low:.3f}, {c.ci_high:.3f}]"
    assert "CI: the 95% interval of each comparison (unadjusted, as p_adjusted)" in r.to_markdown()


def test_comparisons_view_has_the_documented_significant_column(rep):
    """Defect 3: comparisons_view documented a ``significant`` column and returned ``sig``."""
    v = rep.comparisons_view()
    assert list(v.columns) == ["measure", "system_a", "system_b", "diff", "CI", "adjusted CI", "adjustment",
                               "interval", "p_adjusted", "test", "significant"]
    assert "significant" in (Report.comparisons_view.__doc__ or "")
    np.testing.assert_array_equal(v["significant"] == "*", rep.comparisons["significant"].to_numpy())
    assert rep.comparisons["significant"].any()  # the marks are exercised
    sso = ef.datasets.load_sso()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        one = report(sso.runs, sso.qrels, measures=["P@5"], n_resamples=B)
    assert list(one.comparisons_view().columns) == list(v.columns)


def test_report_leaves_the_global_warning_state_alone(cran, monkeypatch):
    """Defect 9: report() wrapped stats.compare in warnings.catch_warnings, which swaps the
    process-wide filters and showwarning: warnings of other threads were lost meanwhile."""
    seen = []
    real = stats.compare

    def spy(*args, **kwargs):
        seen.append((warnings.filters is outer, list(warnings.filters) == outer_copy,
                     warnings.showwarning is outer_show))
        return real(*args, **kwargs)

    monkeypatch.setattr(stats, "compare", spy)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        outer, outer_copy, outer_show = warnings.filters, list(warnings.filters), warnings.showwarning
        report(cran.runs, cran.qrels, measures=["RR"], baseline="bm25", n_resamples=B)
        assert warnings.filters is outer and list(warnings.filters) == outer_copy
        assert warnings.showwarning is outer_show
    assert seen == [(True, True, True)]


def test_compare_warnings_reach_the_caller_once(cran):
    """The paired comparisons' warning still reaches the caller, attributed to the caller's line."""
    run = cran.runs[~((cran.runs.system == "tfidf") & cran.runs.query_id.isin(["1", "2"]))]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        r = report(run, cran.qrels, measures=["RR"], baseline="bm25", n_resamples=B, missing="drop")
    unpaired = [w for w in caught if w.category is ef.UnpairedQuestionsWarning]
    assert len(unpaired) == 1 and unpaired[0].filename == __file__
    assert r.comparisons.set_index("system_b").loc["tfidf", "n_dropped"] == 2


def test_warnings_of_concurrent_reports_are_not_lost(cran):
    """Defect 9 with threads: the main thread records its own warnings while reports run in
    two other threads; none is lost, swallowed or reordered by another thread's report()."""
    import threading
    import time

    runs = cran.runs[cran.runs.system.isin(["bm25", "tfidf"])]
    errors = []

    def build():
        try:
            for _ in range(3):
                report(runs, cran.qrels, measures=["RR"], n_resamples=20, test="t", curve_ks=[5])
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        threads = [threading.Thread(target=build) for _ in range(2)]
        for t in threads:
            t.start()
        sent = 0
        while any(t.is_alive() for t in threads):
            warnings.warn(f"mine {sent}", UserWarning)
            sent += 1
            time.sleep(0.0005)
        for t in threads:
            t.join()
        warnings.warn(f"mine {sent}", UserWarning)
        sent += 1
        got = [str(w.message) for w in caught if str(w.message).startswith("mine")]
    assert not errors
    assert sent > 10 and got == [f"mine {i}" for i in range(sent)]


@pytest.mark.parametrize("kwargs, match", [
    ({"seed": None}, "report: seed must be an int >= 0, got None"),
    ({"seed": -1}, "report: seed must be an int >= 0, got -1"),
    ({"seed": 1.5}, "report: seed must be an int >= 0, got 1.5"),
    ({"seed": True}, "report: seed must be an int >= 0, got True"),
    ({"n_resamples": 0}, "report: n_resamples must be an int >= 1, got 0"),
    ({"confidence": 1.0}, r"report: confidence must be a float in \(0, 1\), got 1.0"),
    ({"interval": "wald"}, "report: interval must be one of"),
    ({"test": "anova"}, "report: test must be one of"),
    ({"correction": "sidak"}, "report: correction must be None or one of"),
    ({"baseline": 3}, "report: baseline must be a system name"),
    ({"curve": "nope"}, "report: curve must be a measure family"),
    ({"curve_ks": [0, 5]}, r"report: curve_ks must be a non-empty list of ints >= 1, got \[0, 5\]"),
    ({"curve_ks": []}, "report: curve_ks must be a non-empty list"),
    ({"curve_ks": [2.5]}, "report: curve_ks must be"),
    ({"progress": 3}, "report: progress must be a callable or None, got 3"),
])
def test_every_argument_is_checked_before_any_work(cran, kwargs, match):
    """Defect 11: seed=None failed with a TypeError after all the resampling, seed=-1 with a
    raw numpy error; test= and correction= were checked only after the summary intervals."""
    steps = []
    kw = {"measures": ["RR"], "n_resamples": B, "progress": steps.append, **kwargs}
    with pytest.raises(ValueError, match=match):
        report(cran.runs, cran.qrels, **kw)
    assert steps == []  # nothing was read, ranked or resampled


def test_numpy_ints_are_accepted(cran):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = report(cran.runs[cran.runs.system == "bm25"], cran.qrels, measures=["RR"],
                   n_resamples=np.int64(B), seed=np.int32(4), curve_ks=np.array([1, 10]))
    assert r.metadata["seed"] == 4 and r.metadata["n_resamples"] == B and r.metadata["curve_ks"] == [1, 10]


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_read_report_round_trips_exactly(rep, tmp_path, fmt):
    getattr(rep, f"to_{fmt}")(tmp_path)
    back = ef.read_report(tmp_path)
    assert isinstance(back, Report) and back.metadata == rep.metadata
    assert list(back.tables) == list(rep.tables)
    for name, table in rep.tables.items():
        pd.testing.assert_frame_equal(back.tables[name], table, check_exact=True)
    assert back.to_markdown() == rep.to_markdown()
    assert ef.read_report(tmp_path, format=fmt).metadata == rep.metadata


def test_read_report_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="no report tables"):
        ef.read_report(tmp_path)
    with pytest.raises(ValueError, match="format must be one of"):
        ef.read_report(tmp_path, format="xlsx")


def test_every_warning_category_lives_in_errors_and_is_exported():
    import ast
    import inspect
    from pathlib import Path

    import evalframe.errors as errors

    root = Path(ef.__file__).parent
    for path in root.rglob("*.py"):
        if path.name == "errors.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef):
                bases = [ast.unparse(b) for b in node.bases]
                assert not any(b.endswith("Warning") for b in bases), f"{path}: {node.name}"
    categories = {n for n, v in inspect.getmembers(errors, inspect.isclass)
                  if issubclass(v, Warning) and v.__module__ == errors.__name__}
    assert {"UnjudgedDocumentsWarning", "SmallGoldenSetWarning", "UnpairedQuestionsWarning"} <= categories
    assert categories <= set(ef.__all__) and categories <= set(errors.__all__)
    for n in categories:
        assert getattr(ef, n) is getattr(errors, n)
    assert UnjudgedDocumentsWarning is errors.UnjudgedDocumentsWarning


def test_renderers_use_only_the_public_surface():
    """text_tables and the other renderers read no private member of the Report."""
    import ast
    from pathlib import Path

    renderers = ("views", "figures", "render_html", "render_markdown", "render_latex", "render_text")
    for name in renderers:
        src = (Path(ef.__file__).parent / "reporting" / f"{name}.py").read_text()
        private = [n.attr for n in ast.walk(ast.parse(src))
                   if isinstance(n, ast.Attribute) and n.attr.startswith("_")]
        assert private == [], name
    import importlib
    package = importlib.import_module("evalframe.reporting")  # ef.report is the function
    for name in ("report", "read_segments", "text_tables", "Report", "read_report"):
        assert name in package.__all__


def test_segment_flags_are_two_and_bh_adjusted(cran):
    # issue 12: "too small" and "below overall" are separate flags; the below-overall flag is
    # a one-sided one-sample t-test adjusted by Benjamini-Hochberg across the segments
    seg = cran.segments.copy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pq = ef.evaluate(cran.runs[cran.runs.system == "bm25"], cran.qrels, "R@10")
        zero = set(pq.loc[pq["value"] == 0, "query_id"])
        seg["kind"] = np.where(seg["query_id"].isin(zero), "zeros", "rest")
        seg.loc[seg.index[:5], "kind"] = "tiny"
        r = report(cran.runs[cran.runs.system == "bm25"], cran.qrels, measures=["R@10"],
                   segments=seg[["query_id", "kind", "length"]], n_resamples=B)
    t = r.by_segment
    for c in ["too_small", "below_overall", "p_below", "p_below_bh", "below_overall_bh"]:
        assert c in t.columns
    for _, g in t.groupby(["system", "measure"]):
        np.testing.assert_allclose(g["p_below_bh"], stats.adjust_pvalues(g["p_below"].to_numpy(), "bh"))
    from scipy import stats as sps
    z = t.set_index("segment_value")
    vals = pq.loc[pq["query_id"].isin(seg.loc[seg["kind"] == "rest", "query_id"]), "value"]
    want = sps.ttest_1samp(vals, z.loc["rest", "overall_mean"], alternative="less").pvalue
    np.testing.assert_allclose(z.loc["rest", "p_below"], want, rtol=1e-9)
    assert z.loc["zeros", "below_overall_bh"] and not z.loc["rest", "below_overall_bh"]
    # all zeros: no spread, so a one-sided sign test (every value below the overall mean)
    n_zeros = int(pq["query_id"].isin(seg.loc[seg["kind"] == "zeros", "query_id"]).sum())
    want = sps.binomtest(n_zeros, n_zeros, 0.5, alternative="greater").pvalue
    np.testing.assert_allclose(z.loc["zeros", "p_below"], want, rtol=1e-12)
    np.testing.assert_array_equal(t["below_overall_bh"], t["p_below_bh"] < 0.05)
    text = r.to_markdown()
    seg_part = text.split("## Segments")[1]
    assert "segments not flagged" in seg_part and "zeros" in seg_part
    assert "too small to judge" in seg_part


def test_every_table_names_its_method(cran):
    # issue 12: stats and report() default to different methods; every table says which
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = report(cran.runs, cran.qrels, measures=["R@10"], baseline="bm25", segments=cran.segments,
                   stages={"bm25": 100, "hybrid_rrf": 10},
                   n_resamples=B)
    for name in ["summary", "by_segment", "curves", "stages", "planning"]:
        t = getattr(r, name)
        if len(t):
            assert "method" in t.columns and t["method"].notna().all(), name
    assert {"ci_method", "test", "correction"} <= set(r.comparisons.columns)
    v = r.comparisons_view()
    assert {"interval", "test"} <= set(v.columns)
    assert (v["interval"] == r.comparisons["ci_method"].astype(str).to_numpy()).all()
    # issue 33: the label says what planning_curve computes (t / noncentral t, z for 0/1)
    assert set(r.planning["method"]) == {"t(n-1) half-width (z for 0/1 measures), noncentral-t power"}
    assert set(r.comparisons["test"]) == {"t"} and set(r.comparisons["ci_method"]) == {"t"}  # the default
    assert len(r.stages) and set(r.stages["method"]) == {"bootstrap"}


def test_top_changes_and_the_changes_table(cran):
    # issue 12: the questions where a system lost or gained most, with the question text
    from evalframe.reporting import top_changes
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = report(cran.runs, cran.qrels, measures=["nDCG@10"], baseline="bm25", n_resamples=B,
                   queries=cran.queries, n_changes=3)
    pq = r.per_question
    t = top_changes(pq, "bm25", "tfidf", "nDCG@10", n=3, queries=cran.queries)
    wide = pq[pq.measure == "nDCG@10"].pivot(index="query_id", columns="system", values="value")
    d = (wide["tfidf"] - wide["bm25"]).sort_values(kind="stable")
    reg = t[t.direction == "regression"]
    np.testing.assert_allclose(reg["diff"], d[d < 0].head(3).to_numpy())
    imp = t[t.direction == "improvement"]
    np.testing.assert_allclose(imp["diff"], d[d > 0].sort_values(ascending=False).head(3).to_numpy())
    assert (t["diff"] == t["value_b"] - t["value_a"]).all()
    text = cran.queries.set_index("query_id")["text"]
    assert (t["text"].to_numpy() == text.loc[t["query_id"]].to_numpy()).all()
    ch = r.changes
    assert set(ch["system_b"]) == set(r.systems) - {"bm25"} and set(ch["system_a"]) == {"bm25"}
    pd.testing.assert_frame_equal(ch[ch.system_b == "tfidf"].reset_index(drop=True), t)
    from evalframe.reporting import text_tables
    from evalframe.reporting.render_html import to_html_page
    # the notebook view is compact (issue 14): the changes are on the page
    for out in (r.to_markdown(), to_html_page(r, plots=False), text_tables(r, changes=3)):
        assert "Top regressions and improvements" in out and t["query_id"].iloc[0] in out
    # the terminal's default: one line per (pair, measure), its largest regression first
    line = [x for x in text_tables(r).splitlines() if x.split()[:3] == ["bm25", "tfidf", "nDCG@10"]]
    assert len(line) == 1 and line[0].split()[3] == f"{t['query_id'].iloc[0]}:"
    with pytest.raises(ValueError, match="n must be an int >= 1"):
        top_changes(pq, "bm25", "tfidf", "nDCG@10", n=0)
    with pytest.raises(ValueError, match="report: queries must be"):
        report(cran.runs, cran.qrels, queries=cran.queries.rename(columns={"text": "q"}))


def test_diagnostics_are_a_superset_and_warnings_iterate_as_warnings(cran):
    # issue 12: ef.diagnostics and Report.diagnostics give the same facts with the same columns;
    # Report.warnings iterates as warnings; the repr's count equals the warnings shown
    run = cran.runs[~((cran.runs.system == "tfidf") & cran.runs.query_id.isin(["1", "2"]))]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = report(run, cran.qrels, measures=["R@10"], n_resamples=B)
        raw = ef.diagnostics(run, cran.qrels)
    d = r.diagnostics
    assert set(raw.columns) <= set(d.columns)
    assert len(raw) > 0
    for row in raw.itertuples(index=False):
        hit = d[(d["check"] == row.check) & (d["system"] == row.system) & (d["count"] == row.count)
                & (d["action"] == row.action) & (d["examples"] == row.examples)]
        assert len(hit) == 1, row
    ws = list(r.warnings)
    assert ws and all(isinstance(w, warnings.WarningMessage) for w in ws)
    assert all(isinstance(w.message, w.category) and issubclass(w.category, Warning) for w in ws)
    assert UnjudgedDocumentsWarning in {w.category for w in ws}
    lines = r.warning_lines()
    assert [str(w.message) for w in ws] == lines
    assert f"warnings={len(lines)})" in repr(r)
    from evalframe.reporting import text_tables
    assert f"Warnings ({len(lines)})" in text_tables(r)


def test_readme_caption_names_every_difference_clear_of_zero(cran):
    # issue 12: the README's caption of docs/hybrid_vs_bm25.png (notebook 2) said only the
    # hybrid's difference from BM25 stays clear of zero; TF-IDF's interval is clear of zero too
    from pathlib import Path
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    caption = next(line for line in readme.splitlines() if line.startswith("*From notebook 2"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pq = ef.evaluate(cran.runs, cran.qrels, ["nDCG@10"])
    cmp = stats.compare(pq, baseline="bm25", test="randomization", n_resamples=5000, seed=0)
    clear = cmp[(cmp["ci_low"] > 0) | (cmp["ci_high"] < 0)]
    assert set(clear["system_b"]) == {"hybrid_rrf", "tfidf"}
    assert "only the hybrid" not in caption
    for r in clear.itertuples(index=False):
        assert f"[{r.ci_low:.3f}, {r.ci_high:.3f}]" in caption, r.system_b


def test_measure_rows_select_and_order_match_pandas():
    """MeasureRows holds the evaluation as codes: its rows, dtypes and the report's
    per-question order equal a plain pandas selection and sort (the slow reference)."""
    import numpy as np
    import pandas as pd

    from evalframe.reporting.build import report_per_question
    from evalframe.reporting.tables import MeasureRows

    rng = np.random.default_rng(0)
    rows = []
    for s in ("zeta", "alpha"):
        q = [f"q{i}" for i in rng.permutation(50)[:45]]
        for m in ("R@5", "AP", "P@5"):
            rows.append(pd.DataFrame({"system": s, "query_id": q, "measure": m, "value": rng.random(len(q))}))
    t = pd.concat(rows, ignore_index=True).astype({"system": "str", "query_id": "str", "measure": "str"})
    mr = MeasureRows(t)
    want = pd.concat([t[t["measure"] == m] for m in ("AP", "R@5")]).reset_index(drop=True)
    pd.testing.assert_frame_equal(mr.select(["AP", "R@5", "nope"]), want, check_exact=True)
    compact = mr.select(["AP", "R@5"], compact=True)
    assert isinstance(compact["query_id"].dtype, pd.CategoricalDtype)
    pd.testing.assert_frame_equal(compact.astype({c: "str" for c in ("system", "query_id", "measure")}), want)
    first_seen = {q: i for i, q in enumerate(pd.unique(t["query_id"]))}
    order = {"zeta": 0, "alpha": 1}
    ref = want.assign(_s=want["system"].map(order), _q=want["query_id"].map(first_seen)) \
        .sort_values(["_s", "_q"], kind="stable").drop(columns=["_s", "_q"]).reset_index(drop=True)
    pd.testing.assert_frame_equal(report_per_question(mr, ["AP", "R@5"], ["zeta", "alpha"]), ref, check_exact=True)


def test_a_small_segment_without_spread_is_not_flagged_below_overall():
    # two questions scored 0 against an overall mean of 0.45: a sign test gives 0.25, not 0
    qs = [f"q{i}" for i in range(22)]
    qrels = pd.DataFrame({"query_id": qs, "doc_id": [f"r{i}" for i in range(22)], "relevance": 1})
    run = pd.DataFrame({"query_id": qs, "doc_id": [f"r{i}" if i < 20 and i % 2 == 0 else "junk" for i in range(22)],
                        "score": 1.0})
    seg = pd.DataFrame({"query_id": qs, "seg": ["x"] * 20 + ["y"] * 2})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = ef.report(run, qrels, measures=["P@1"], segments=seg, n_resamples=B).by_segment.set_index("segment_value")
    assert t.loc["y", "p_below"] == pytest.approx(0.25) and not t.loc["y", "below_overall_bh"]


@pytest.mark.parametrize("name", ["n", "mean", "confidence", "method"])
def test_a_segment_named_like_a_summary_column_is_refused_before_evaluating(name, monkeypatch):
    # the by-segment step summarises by the segment column, so it cannot be named like a
    # column of that summary; refused by read_segments, before the run is evaluated
    seg = pd.DataFrame({"query_id": ["1", "2"], name: ["a", "b"]})
    with pytest.raises(EvalframeInputError, match="reserved"):
        read_segments(seg)

    def never(*args, **kwargs):
        raise AssertionError("evaluated before the segment table was checked")
    monkeypatch.setattr(sys.modules["evalframe.reporting.build"], "evaluate_with_diagnostics", never)
    qrels = pd.DataFrame({"query_id": ["1", "2"], "doc_id": ["d", "e"], "relevance": 1})
    run = qrels.drop(columns="relevance").assign(score=1.0)
    with pytest.raises(EvalframeInputError, match="reserved"):
        report(run, qrels, measures=["P@1"], segments=seg, n_resamples=B)


def test_segment_means_match_a_loop_over_questions():
    # questions without a segment row and with a missing value are "(none)"; a segment row
    # of a question outside the golden set is ignored; every golden question counts (missing="zero")
    rng = np.random.default_rng(7)
    qs = [str(i) for i in range(30)]
    qrels = pd.DataFrame([(q, f"d{d}", int(rng.integers(0, 3))) for q in qs for d in rng.choice(15, 5, replace=False)],
                         columns=["query_id", "doc_id", "relevance"])
    run = pd.DataFrame([(s, q, f"d{d}", float(rng.integers(0, 4))) for s in ("a", "b") for q in qs[:-2]
                        for d in rng.choice(15, 8, replace=False)], columns=["system", "query_id", "doc_id", "score"])
    forms = {q: str(rng.choice(["x", "y"])) for q in qs[3:]}
    forms[qs[4]] = None
    seg = pd.DataFrame({"query_id": [*forms, "extra"], "form": [*forms.values(), "x"]})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = report(run, qrels, measures=["AP", "nDCG@10"], segments=seg, n_resamples=B).by_segment
        per_q = {(t.system, t.query_id, t.measure): t.value
                 for t in ef.evaluate(run, qrels, ["AP", "nDCG@10"], missing="zero").itertuples()}
    expected = {}
    for (s, q, m), v in per_q.items():
        value = forms.get(q) or "(none)"
        expected.setdefault((s, value, m), []).append(v)
    assert len(got) == len(expected)
    for t in got.itertuples():
        vals = expected[(t.system, t.segment_value, t.measure)]
        assert t.n == len(vals) and t.mean == pytest.approx(sum(vals) / len(vals), abs=1e-12)


def test_shallow_rankings_are_checked_against_the_cutoffs_asked_for_not_the_curve(cran):
    """The report computes its recall curve to k = 100 whatever was asked; a ranking shorter
    than 100 is worth a word only when a measure asked for goes that deep."""
    short = {s: int((part.groupby("query_id").size() < 100).sum()) for s, part in cran.runs.groupby("system")}
    assert short["tfidf"] == 1 and sum(short.values()) == 1  # the oracle: a count over the run
    for measures, warned in ((["R@5", "nDCG@10"], False), (["R@5", "R@100"], True)):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            r = report(cran.runs, cran.qrels, measures=measures, n_resamples=B)
        shallow = [w for w in caught if w.category is ef.ShallowRankingWarning]
        rows = r.diagnostics[r.diagnostics["check"] == "shallow_rankings"]
        assert bool(shallow) == warned and len(rows) == int(warned), (measures, [str(w.message) for w in shallow])
        if warned:
            assert rows["system"].tolist() == ["tfidf"] and rows["count"].tolist() == [1]
            assert "k = 100" in str(shallow[0].message)


@pytest.mark.parametrize("names", [("question_id", "question"), ("qid", "query"), ("query_id", "question_text")])
def test_queries_take_the_usual_aliases(cran, names):
    """queries= reads the column aliases the golden set's reader does (issue 30)."""
    q = cran.queries.rename(columns={"query_id": names[0], "text": names[1]})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = ef.report(cran.runs, cran.qrels, measures=["R@5"], n_resamples=20, queries=q, baseline="bm25")
    want = cran.queries.set_index("query_id")["text"]
    got = r.changes.dropna(subset=["text"])
    assert len(got) and (got["text"].to_numpy() == want.loc[got["query_id"]].to_numpy()).all()
    with pytest.raises(ValueError, match="queries must be a DataFrame with columns query_id, text"):
        ef.report(cran.runs, cran.qrels, measures=["R@5"], queries=q.rename(columns={names[1]: "words"}))


@pytest.fixture(scope="module")
def threaded_reports(cran):
    """The same report (randomisation test, segments, stages) under 1, 2 and 4 threads,
    resampling in small chunks so that each random stream is drawn in several."""
    from evalframe.stats import resampling
    saved = resampling.CHUNK_ELEMENTS
    resampling.CHUNK_ELEMENTS = 20_000
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return {t: report(cran.runs, cran.qrels, measures=MEASURES, segments=cran.segments,
                              stages={"bm25": 100, "hybrid_rrf": 5}, test="randomization",
                              correction="randomized-tukey", interval="bca", n_resamples=500, seed=3,
                              threads=t)
                    for t in (1, 2, 4)}
    finally:
        resampling.CHUNK_ELEMENTS = saved


@pytest.mark.parametrize("threads", [2, 4])
def test_report_tables_identical_under_threads(threaded_reports, threads):
    """Every table, exactly (the numbers against main's: tests/test_resampling_snapshot.py)."""
    one, many = threaded_reports[1], threaded_reports[threads]
    assert list(one.tables) == list(many.tables)
    for name, table in one.tables.items():
        pd.testing.assert_frame_equal(many.tables[name], table, check_exact=True, obj=name)
    assert one.metadata == many.metadata  # the thread count is not a property of the numbers
    assert one.comparisons["ci_low"].notna().all() and (one.by_segment["method"] == "bca").all()


def test_threads_checked_before_any_work(monkeypatch, tmp_path):
    from evalframe.errors import ParameterError
    missing = tmp_path / "no-such-run.tsv"  # never read: the check comes first
    for bad in (0, -2, 1.5, "2", True):
        with pytest.raises(ParameterError, match=r"^report: threads must be an int >= 1, got "):
            report(missing, missing, threads=bad)
    monkeypatch.setenv("EVALFRAME_THREADS", "two")
    with pytest.raises(ParameterError, match="EVALFRAME_THREADS must be an int >= 1, got 'two'"):
        report(missing, missing)
    from evalframe.reporting import report_options
    monkeypatch.setenv("EVALFRAME_THREADS", "3")
    assert report_options().threads == 3 and report_options(threads=1).threads == 1
    assert report_options().resampling["threads"] == 3
