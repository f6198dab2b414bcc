"""Issue 12's report items: intervals adjusted as the p-values are, the unjudged share of
the positions a run filled, roll-up and token budgets in report()."""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats as st

import evalframe as ef
from evalframe import stats
from evalframe.reporting import report

B = 200


def planted(n_q=40, shifts=(0.0, 0.04, 0.08, 0.15, -0.03), seed=0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for i, shift in enumerate(shifts):
        for q in range(n_q):
            rows.append((f"s{i}", str(q), "AP", float(rng.normal(0.4 + shift, 0.2))))
    return pd.DataFrame(rows, columns=["system", "query_id", "measure", "value"])


# ---------------------------------------------------------------- adjusted intervals
@pytest.mark.parametrize("seed", range(6))
def test_bonferroni_t_interval_excludes_zero_iff_p_adjusted_is_below_alpha(seed):
    t = planted(seed=seed)
    c = stats.compare(t, baseline="s0", test="t", correction="bonferroni", adjusted_ci=True)
    alpha = 0.05
    excludes = (c["ci_low_adjusted"] > 0) | (c["ci_high_adjusted"] < 0)
    np.testing.assert_array_equal(excludes, c["p_adjusted"] < alpha)
    # oracle: scipy's t interval at level 1 - alpha / m on each pair
    m = len(c)
    for r in c.itertuples(index=False):
        d = t[t.system == r.system_b].value.to_numpy() - t[t.system == "s0"].value.to_numpy()
        lo, hi = st.ttest_rel(t[t.system == r.system_b].value, t[t.system == "s0"].value
                              ).confidence_interval(1 - alpha / m)
        assert (r.ci_low_adjusted, r.ci_high_adjusted) == pytest.approx((lo, hi), rel=1e-10)
        assert r.diff == pytest.approx(d.mean())
    assert set(c["ci_adjustment"]) == {"bonferroni"}


@pytest.mark.parametrize("seed", range(6))
def test_holm_is_significant_whenever_its_bonferroni_interval_excludes_zero(seed):
    c = stats.compare(planted(seed=seed), baseline="s0", test="t", correction="holm", adjusted_ci=True)
    excludes = (c["ci_low_adjusted"] > 0) | (c["ci_high_adjusted"] < 0)
    assert (c.loc[excludes, "p_adjusted"] < 0.05).all()
    # the adjusted interval contains the unadjusted one
    assert (c["ci_low_adjusted"] <= c["ci_low"]).all() and (c["ci_high_adjusted"] >= c["ci_high"]).all()


def test_fcr_and_unadjusted_intervals():
    t = planted(seed=3)
    bh = stats.compare(t, baseline="s0", test="t", correction="bh", adjusted_ci=True)
    m, r = len(bh), int((bh["p_adjusted"] < 0.05).sum())
    level = 1 - max(r, 1) * 0.05 / m  # Benjamini & Yekutieli (2005)
    for row in bh.itertuples(index=False):
        lo, hi = st.ttest_rel(t[t.system == row.system_b].value, t[t.system == "s0"].value).confidence_interval(level)
        assert (row.ci_low_adjusted, row.ci_high_adjusted) == pytest.approx((lo, hi), rel=1e-10)
    none = stats.compare(t, baseline="s0", test="t", correction="none", adjusted_ci=True)
    np.testing.assert_array_equal(none["ci_low_adjusted"], none["ci_low"])
    plain = stats.compare(t, baseline="s0", test="t")
    assert "ci_low_adjusted" not in plain.columns  # the default table is unchanged
    with pytest.raises(ValueError, match="compare: adjusted_ci must be True or False"):
        stats.compare(t, adjusted_ci="yes")


def test_report_shows_both_intervals_labelled():
    """Defect: the report showed an unadjusted interval next to a Holm-adjusted p."""
    cran = ef.datasets.load_cranfield()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = report(cran.runs, cran.qrels, measures=["nDCG@10"], baseline="bm25", n_resamples=B)
    c = r.comparisons
    assert {"ci_low_adjusted", "ci_high_adjusted", "ci_adjustment"} <= set(c.columns)
    assert set(c["ci_adjustment"]) == {"bonferroni"} and set(c["correction"]) == {"holm"}
    excludes = (c["ci_low_adjusted"] > 0) | (c["ci_high_adjusted"] < 0)
    assert (c.loc[excludes, "p_adjusted"] < 0.05).all()
    # the case: bm25 -> tfidf, unadjusted interval clear of 0, Holm p_adj not significant
    tf = c.set_index("system_b").loc["tfidf"]
    assert tf["ci_high"] < 0 and not tf["significant"]
    assert tf["ci_low_adjusted"] < 0 < tf["ci_high_adjusted"]
    v = r.comparisons_view()
    assert (v["adjustment"] == "bonferroni").all() and v["adjusted CI"].str.match(r"^\[-?\d\.\d{3}, -?\d\.\d{3}\]$").all()
    text = r.to_text() if hasattr(r, "to_text") else r.to_markdown()
    assert "unadjusted" in text and "bonferroni-adj." in text


# ---------------------------------------------------------------- unjudged share
def test_a_fully_judged_shallow_run_has_no_unjudged_documents():
    """Defect: a fully judged run of 3 documents a question was told 70% are unjudged."""
    qs = [str(q) for q in range(60)]
    run = pd.DataFrame([(s, q, f"d{i}", 3.0 - i) for s in ("a", "b") for q in qs for i in range(3)],
                       columns=["system", "query_id", "doc_id", "score"])
    qrels = pd.DataFrame([(q, f"d{i}", int((i + int(q)) % 2)) for q in qs for i in range(3)],
                         columns=["query_id", "doc_id", "relevance"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = report(run, qrels, measures=["R@10", "P@5"], n_resamples=B)
    j = r.diagnostics[r.diagnostics["check"] == "judged_at_k"]
    assert len(j) and (j["value"] == 1.0).all() and (j["level"] == "info").all()
    assert j["detail"].str.startswith("0% of the top-").all()
    assert not any("unjudged" in str(w.message) for w in r.warnings)
    shallow = r.diagnostics[r.diagnostics["check"] == "shallow_rankings"]
    assert set(shallow["system"]) == {"a", "b"} and (shallow["count"] == 60).all()


def test_unjudged_share_counts_the_filled_positions_only():
    qs = [str(q) for q in range(60)]
    # 4 documents a question, 2 of them judged: 50% of the filled positions are unjudged
    run = pd.DataFrame([("a", q, f"d{i}", 4.0 - i) for q in qs for i in range(4)],
                       columns=["system", "query_id", "doc_id", "score"])
    qrels = pd.DataFrame([(q, f"d{i}", 1) for q in qs for i in (0, 2)], columns=["query_id", "doc_id", "relevance"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = report(run, qrels, measures=["R@10"], n_resamples=B)
    j = r.diagnostics[r.diagnostics["check"] == "judged_at_k"].iloc[0]
    assert j["value"] == pytest.approx(0.5) and j["level"] == "warning"
    assert j["detail"].startswith("50% of the top-10 documents retrieved are unjudged (40% of the top-10")


# ---------------------------------------------------------------- roll-up and budgets in report()
def rag_case():
    rng = np.random.default_rng(5)
    rows, mapping = [], {}
    for p in range(40):
        for c in range(3):
            mapping[f"p{p}_c{c}"] = f"p{p}"
    chunks = list(mapping)
    for s in ("first", "reranked"):
        for q in range(60):
            for i, c in enumerate(rng.choice(chunks, 30, replace=False)):
                rows.append((s, str(q), c, 30.0 - i, int(rng.integers(20, 200))))
    run = pd.DataFrame(rows, columns=["system", "query_id", "doc_id", "score", "tokens"])
    qrels = pd.DataFrame([(str(q), f"p{p}", 1) for q in range(60) for p in rng.choice(40, 3, replace=False)],
                         columns=["query_id", "doc_id", "relevance"])
    return run, qrels, mapping


def test_report_with_a_rollup_names_the_unit_and_matches_evaluate():
    run, qrels, mapping = rag_case()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = report(run, qrels, measures=["R@5", "R(tokens=500)"], rollup=mapping, n_resamples=B,
                   stages={"first": 20, "reranked": "tokens=500"})
        want = ef.aggregate(ef.evaluate(run, qrels, ["R@5", "R(tokens=500)", "R@20"], rollup=mapping))
    assert r.metadata["unit"] == "page"
    assert "Documents are pages" in r.to_markdown()
    got = r.summary.set_index(["system", "measure"])["mean"]
    w = want.set_index(["system", "measure"])["mean"]
    for key in got.index:
        assert got[key] == pytest.approx(w[key], rel=1e-12)
    st_ = r.stages
    assert st_["measure"].tolist() == ["R@20", "R(tokens=500)"]
    assert st_["k"].iloc[0] == 20 and pd.isna(st_["k"].iloc[1])
    assert st_["mean"].tolist() == pytest.approx([w[("first", "R@20")], w[("reranked", "R(tokens=500)")]])
    d = r.diagnostics
    assert "rollup_run_rows_collapsed" in set(d["check"])
    assert d.loc[d["check"] == "unit", "detail"].str.contains("pages").all()
    with pytest.raises(ef.EvalframeInputError, match="rollup="):  # chunk ids are not page ids: refused
        report(run, qrels, measures=["R@5"], n_resamples=B)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pages = run.assign(doc_id=run["doc_id"].map(mapping)).drop_duplicates(["system", "query_id", "doc_id"])
        plain = report(pages, qrels, measures=["R@5"], n_resamples=B)
    assert plain.metadata["unit"] == "document"


def test_stage_budgets_are_checked():
    run, qrels, _ = rag_case()
    with pytest.raises(ef.EvalframeInputError, match="k must be an int >= 1 or a token budget"):
        report(run, qrels, stages={"first": 20, "reranked": "tokens=0"})
    from evalframe.reporting.stages import stage_spec
    assert stage_spec({"a": 100, "b": {"tokens": 2000}}) == [("a", 100), ("b", "tokens=2000")]


def test_shallow_rankings_are_report_warnings():
    qs = [str(q) for q in range(60)]
    run = pd.DataFrame([(s, q, f"d{i}", 20.0 - i) for s in ("a", "b") for q in qs for i in range(20)],
                       columns=["system", "query_id", "doc_id", "score"])
    qrels = pd.DataFrame([(q, "d3", 1) for q in qs], columns=["query_id", "doc_id", "relevance"])
    with pytest.warns(ef.ShallowRankingWarning):
        r = report(run, qrels, measures=["R@100", "R@20"], n_resamples=B)
    shown = [w for w in r.warnings if w.category is ef.ShallowRankingWarning]
    assert [w.system for w in shown] == ["a", "b"]
    assert "60 questions whose ranking is shorter than the deepest cutoff" in str(shown[0].message)
    s = r.summary.set_index(["system", "measure"])["mean"]
    assert s["a", "R@100"] == s["a", "R@20"]  # R@100 of a 20-deep run is its R@20
