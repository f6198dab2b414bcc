"""Issue 33: the statistics keep their promises at small n: intervals that invert the test
beside them, the few-clusters rules, the labels, the round-off guards.

Oracles: loops over every sign vector written here, scipy, and the randomisation test's
own p-value on shifted data (``sign_flip_pvalues``, checked against scipy and Urbano et
al.'s published values in tests/stats/test_stats.py)."""
from __future__ import annotations

import itertools
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats as st

from evalframe import stats
from evalframe.stats.resampling import sign_flip_interval


def table(n: int, shifts, seed: int, discrete: bool = False, clusters: int | None = None,
          ) -> pd.DataFrame:
    """Per-question values of len(shifts) systems on n questions (s0 the baseline)."""
    rng = np.random.default_rng(seed)
    base = rng.beta(2, 3, n)
    rows = []
    for j, shift in enumerate(shifts):
        v = np.clip(base + rng.normal(shift, 0.15, n), 0, 1)
        if discrete:
            v = np.round(v * 10) / 10
        rows.append(pd.DataFrame({"system": f"s{j}", "query_id": [f"q{i}" for i in range(n)],
                                  "measure": "AP", "value": v}))
    t = pd.concat(rows, ignore_index=True)
    if clusters:
        t["topic"] = (t["query_id"].str[1:].astype(int) % clusters).astype(str)
    return t


def loop_pvalue(d: np.ndarray, delta: float, alternative: str = "two-sided") -> float:
    """Exact randomisation p-value of H0: d - delta symmetric about 0, every sign vector."""
    x = d - delta
    T = x.sum()
    count = 0
    for signs in itertools.product([-1.0, 1.0], repeat=len(x)):
        Ts = float(np.dot(signs, x))
        if alternative == "greater":
            count += Ts >= T - 1e-12
        elif alternative == "less":
            count += Ts <= T + 1e-12
        else:
            count += abs(Ts) >= abs(T) - 1e-12
    return count / 2 ** len(x)


# ------------------------------------------------- the interval inverts the test
@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_exact_inversion_matches_a_loop_over_every_sign_vector(alternative):
    rng = np.random.default_rng(3)
    d = rng.normal(0.1, 0.3, 9)
    lo, hi = sign_flip_interval(d[:, None], np.ones(9), n_resamples=1, seed=0, exact=True,
                                confidence=0.9, alternative=alternative)
    lo, hi = float(lo[0]), float(hi[0])
    eps = 1e-7
    if alternative in ("two-sided", "greater"):
        assert loop_pvalue(d, lo + eps, alternative) >= 0.1 > loop_pvalue(d, lo - eps, alternative)
    else:
        assert lo == -np.inf
    if alternative in ("two-sided", "less"):
        assert loop_pvalue(d, hi - eps, alternative) >= 0.1 > loop_pvalue(d, hi + eps, alternative)
    else:
        assert hi == np.inf


def test_monte_carlo_inversion_is_the_tests_own_boundary():
    """At the interval's ends the randomisation test of the shifted differences (same
    seed, same sign vectors) moves from p >= alpha to p < alpha."""
    t = table(35, [0.0, 0.06], seed=1)
    kw = dict(baseline="s0", test="randomization", n_resamples=999, seed=5)
    r = stats.compare(t, **kw).iloc[0]
    assert r.ci_method == "randomization"

    def p_at(delta):
        shifted = t.assign(value=np.where(t["system"] == "s1", t["value"] - delta, t["value"]))
        return float(stats.compare(shifted, **kw)["p_value"].iloc[0])

    for end, inside in ((r.ci_low, +1), (r.ci_high, -1)):
        assert p_at(end + inside * 1e-7) >= 0.05 > p_at(end - inside * 1e-7)


@pytest.mark.parametrize("discrete", [False, True])
@pytest.mark.parametrize("n", [12, 40])
def test_randomization_intervals_agree_with_p(n, discrete):
    """Defect: the p-value beside an interval came from another procedure (the report's
    randomisation p beside a bootstrap interval disagreed in 37 of 1,200 comparisons)."""
    for seed in range(4):
        t = table(n, [0.0, 0.02, 0.05, 0.08, -0.04], seed=seed, discrete=discrete)
        c = stats.compare(t, baseline="s0", test="randomization", correction="bonferroni",
                          adjusted_ci=True, n_resamples=999, seed=seed)
        np.testing.assert_array_equal((c["ci_low"] > 0) | (c["ci_high"] < 0), c["p_value"] < 0.05)
        np.testing.assert_array_equal((c["ci_low_adjusted"] > 0) | (c["ci_high_adjusted"] < 0),
                                      c["p_adjusted"] < 0.05)
        for alt, end in (("greater", "ci_low"), ("less", "ci_high")):
            o = stats.compare(t, baseline="s0", test="randomization", alternative=alt,
                              correction="none", n_resamples=999, seed=seed)
            excludes = o[end] > 0 if alt == "greater" else o[end] < 0
            np.testing.assert_array_equal(excludes, o["p_value"] < 0.05)


def test_clustered_inversion_agrees_with_the_cluster_test():
    t = table(60, [0.0, 0.03, 0.07], seed=2, clusters=12)
    for exact in (None, False):
        c = stats.compare(t, baseline="s0", test="randomization", cluster="topic",
                          n_resamples=999, seed=1, exact=exact, correction="none")
        np.testing.assert_array_equal((c["ci_low"] > 0) | (c["ci_high"] < 0), c["p_value"] < 0.05)
        assert (c["ci_low"] < c["diff"]).all() and (c["diff"] < c["ci_high"]).all()


def test_holm_adjusted_interval_clear_of_zero_implies_significance_and_the_note_says_so():
    from evalframe.reporting.views import procedure_note

    t = table(40, [0.0, 0.03, 0.05, 0.07, 0.09], seed=0)
    c = stats.compare(t, baseline="s0", test="randomization", adjusted_ci=True, n_resamples=999)
    assert set(c["correction"]) == {"holm"}
    clear = (c["ci_low_adjusted"] > 0) | (c["ci_high_adjusted"] < 0)
    assert (c.loc[clear, "p_adjusted"] < 0.05).all()
    note = procedure_note(c)
    assert "invert the randomisation test" in note and "Holm also finds significant" in note
    boot = stats.compare(t, baseline="s0", test="randomization", ci="bootstrap", n_resamples=99)
    assert "two procedures" in procedure_note(boot)


# ------------------------------------------------------------------ few clusters
def test_summarize_auto_takes_the_cluster_t_below_30_clusters():
    from evalframe import FewClustersWarning

    few = table(60, [0.0], seed=4, clusters=10)
    many = table(120, [0.0], seed=4, clusters=40)
    s = stats.summarize(few, cluster="topic")
    assert s["method"].tolist() == ["t"]
    # the cluster t: a one-sample t on the cluster means when clusters are equal in size
    means = few.groupby("topic")["value"].mean()
    lo, hi = st.t.interval(0.95, len(means) - 1, loc=means.mean(), scale=st.sem(means))
    assert (s["ci_low"].iloc[0], s["ci_high"].iloc[0]) == pytest.approx((lo, hi), rel=1e-12)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert stats.summarize(many, cluster="topic", n_resamples=99)["method"].tolist() == ["bootstrap"]
    with pytest.warns(FewClustersWarning, match="10 clusters"):
        stats.summarize(few, cluster="topic", method="bootstrap", n_resamples=99)


def test_compare_warns_for_a_cluster_bootstrap_with_few_clusters():
    from evalframe import FewClustersWarning

    t = table(60, [0.0, 0.05], seed=5, clusters=10)
    for kw in (dict(test="bootstrap"), dict(test="t", ci="bca")):
        with pytest.warns(FewClustersWarning, match="10 clusters"):
            stats.compare(t, cluster="topic", n_resamples=99, **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        stats.compare(t, cluster="topic", test="t")
        stats.compare(t, cluster="topic", test="randomization", n_resamples=99)
        stats.compare(table(90, [0.0, 0.05], seed=5, clusters=30), cluster="topic",
                      test="bootstrap", n_resamples=99)


# ------------------------------------------------------------------ labels and edges
def pair(a, b) -> pd.DataFrame:
    n = len(a)
    return pd.DataFrame({"system": ["a"] * n + ["b"] * n, "query_id": [f"q{i}" for i in range(n)] * 2,
                         "measure": "AP", "value": np.r_[a, b]})


@pytest.mark.parametrize("cluster", [False, True])
def test_differences_equal_up_to_round_off_are_treated_as_equal(cluster):
    """Defect: d = (0.19999999999999998, 0.2, 0.19999999999999996) gave d_z 7.2e15 and a
    t-test p of 6.4e-33; the randomisation test already counted them as ties."""
    a = np.array([0.1, 0.2, 0.3, 0.4])
    rounded = pair(a, a + np.array([0.19999999999999998, 0.2, 0.19999999999999996, 0.2]))
    d = rounded["value"].to_numpy()[4:] - a
    assert d.std(ddof=1) > 0  # the spread is round-off, not 0
    exact = pair(np.zeros(4), np.full(4, 0.25))  # d = 0.25 exactly, no spread
    kw = dict(cluster="topic") if cluster else {}
    if cluster:
        rounded["topic"] = exact["topic"] = ["t0", "t1", "t2", "t3"] * 2
    for alt in ("two-sided", "greater"):
        r = stats.compare(rounded, alternative=alt, **kw).iloc[0]
        e = stats.compare(exact, alternative=alt, **kw).iloc[0]
        assert r.p_value == e.p_value == 0.0
        assert r.sd_diff == 0.0 and np.isnan(r.effect_size) and np.isnan(e.effect_size)
        assert r.ci_low == pytest.approx(r["diff"])
    # a real spread, however small, is kept: the t-test equals scipy's
    tiny = pair(np.zeros(3), np.array([1e-12, 2e-12, 4e-12]))
    c = stats.compare(tiny).iloc[0]
    ref = st.ttest_1samp([1e-12, 2e-12, 4e-12], 0.0)
    assert c.p_value == pytest.approx(ref.pvalue, rel=1e-10)
    assert c.effect_size == pytest.approx(np.mean([1, 2, 4]) / np.std([1, 2, 4], ddof=1), rel=1e-10)


def test_normal_interval_of_a_proportion_is_clipped_to_0_1():
    """Defect: summarize(method="normal") gave [-0.193, 1.193] for 1 of 2."""
    t = pd.DataFrame({"system": "a", "query_id": [f"q{i}" for i in range(12)], "measure": "S",
                      "value": [1.0, 0.0] + [1.0] * 10})
    z = st.norm.ppf(0.975)
    for sub, p in ((t.iloc[:2], 0.5), (t, 11 / 12)):
        s = stats.summarize(sub, method="normal").iloc[0]
        half = z * np.sqrt(p * (1 - p) / len(sub))
        assert (s.ci_low, s.ci_high) == pytest.approx((max(0.0, p - half), min(1.0, p + half)), abs=1e-15)
    assert stats.summarize(t.iloc[:2], method="normal")["ci_low"].iloc[0] == 0.0
    # a measure that is not 0/1 is not clipped
    g = t.assign(value=[1.0, 0.0] + [0.5] * 10).iloc[:3]
    s = stats.summarize(g, method="normal").iloc[0]
    assert s.ci_low == pytest.approx(g["value"].mean() - z * g["value"].std(ddof=1) / np.sqrt(3))


def test_segment_without_spread_below_has_the_sign_tests_p():
    """The Notes said p = 0; the code gives the one-sided sign test's 0.5^n, round-off too."""
    from evalframe.reporting.segments import below_overall_tests

    n = 6
    values = np.r_[np.full(n, 0.1) + np.array([0, 1e-17, -1e-17, 0, 0, 2e-17]), np.linspace(0.3, 0.9, 20)]
    pq = pd.DataFrame({"system": "a", "query_id": [f"q{i}" for i in range(n + 20)], "measure": "AP",
                       "value": values, "seg": ["flat"] * n + ["rest"] * 20})
    table = pd.DataFrame({"system": "a", "segment": "seg", "segment_value": ["flat", "rest"],
                          "measure": "AP", "overall_mean": values.mean()})
    out = below_overall_tests(pq, ["seg"], table, alpha=0.05)
    assert out["p_below"].iloc[0] == 0.5 ** n
    ref = st.ttest_1samp(values[n:], values.mean(), alternative="less").pvalue
    assert out["p_below"].iloc[1] == pytest.approx(ref, rel=1e-12)


# ------------------------------------------------- Sakai's (2006) bootstrap test
def sakai_asl(z: np.ndarray, B: int, seed: int) -> tuple[float, float, np.ndarray]:
    """Sakai (SIGIR 2006), Fig. 1, written as a loop: t(z), the t of each bootstrap
    sample of w = z - mean(z), ASL = (#{|t(w*b)| >= |t(z)|} + 1) / (B + 1). The samples
    are drawn as evalframe draws them (one seeded integers call), so they are the same."""
    n = len(z)
    t_z = z.mean() / (z.std(ddof=1) / np.sqrt(n))
    w = z - z.mean()
    idx = np.random.default_rng(seed).integers(0, n, size=(B, n))
    ts = []
    for b in range(B):
        ws = w[idx[b]]
        ts.append(ws.mean() / (ws.std(ddof=1) / np.sqrt(n)))
    ts = np.array(ts)
    return t_z, (np.sum(np.abs(ts) >= abs(t_z)) + 1) / (B + 1), ts


def test_asl_curve_bootstrap_is_sakais_studentized_test():
    t = table(12, [0.0, 0.03, 0.08, -0.05], seed=7)
    curve = stats.asl_curve(t, test="bootstrap", n_resamples=2000, seed=3)
    wide = t.pivot(index="query_id", columns="system", values="value")
    for r in curve.itertuples(index=False):
        z = (wide[r.system_b] - wide[r.system_a]).to_numpy()
        _, p, _ = sakai_asl(z, 2000, 3)
        assert r.p_value == pytest.approx(p, abs=1e-12), (r.system_a, r.system_b)
    shift = stats.asl_curve(t, test="bootstrap-shift", n_resamples=2000, seed=3)
    old = stats.compare(t, test="bootstrap", correction="none", ci="none", n_resamples=2000, seed=3)
    np.testing.assert_allclose(np.sort(shift["p_value"]), np.sort(old["p_value"]))
    d = stats.discriminative_power(t, test="bootstrap", n_resamples=2000, seed=3)
    assert int(d["n_significant"].iloc[0]) == int((curve["p_value"] < 0.05).sum())
    with pytest.raises(ValueError, match="discriminative_power: test must be one of"):
        stats.discriminative_power(t, test="nope")


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_bootstrap_t_interval_inverts_the_test(alternative):
    t = table(20, [0.0, 0.04], seed=8)
    c = stats.compare(t, test="bootstrap-t", n_resamples=999, seed=2, alternative=alternative).iloc[0]
    assert c.ci_method == "bootstrap-t"
    wide = t.pivot(index="query_id", columns="system", values="value")  # compare's question order
    z = (wide["s1"] - wide["s0"]).to_numpy()
    t_z, p, ts = sakai_asl(z, 999, 2)
    se = z.std(ddof=1) / np.sqrt(20)
    r = int(np.ceil(0.05 * 1000 - 1 - 1e-9))
    if alternative == "two-sided":
        assert c.p_value == pytest.approx(p, abs=1e-12)
        q = np.sort(np.abs(ts))[::-1][r - 1]
        assert (c.ci_low, c.ci_high) == pytest.approx((z.mean() - q * se, z.mean() + q * se), rel=1e-12)
    # at the ends the test of d - delta moves from p >= alpha to p < alpha
    for end, inside in ((c.ci_low, 1), (c.ci_high, -1)):
        if np.isfinite(end):
            def p_at(delta):
                s = t.assign(value=np.where(t["system"] == "s1", t["value"] - delta, t["value"]))
                return stats.compare(s, test="bootstrap-t", n_resamples=999, seed=2,
                                     alternative=alternative)["p_value"].iloc[0]
            assert p_at(end + inside * 1e-9) >= 0.05 > p_at(end - inside * 1e-9)


# ------------------------------------------------------ d_z with its interval
def test_dz_interval_inverts_the_noncentral_t():
    t = table(25, [0.0, 0.03, 0.1, -0.02], seed=9)
    c = stats.compare(t, baseline="s0", confidence=0.9)
    for r in c.itertuples(index=False):
        n, tstat = r.n, r.effect_size * np.sqrt(r.n)
        # scipy's noncentral t at the ends: each tail holds (1 - confidence) / 2
        assert st.nct.sf(tstat, n - 1, r.effect_size_low * np.sqrt(n)) == pytest.approx(0.05, rel=1e-8)
        assert st.nct.cdf(tstat, n - 1, r.effect_size_high * np.sqrt(n)) == pytest.approx(0.05, rel=1e-8)
        assert r.effect_size_low < r.effect_size < r.effect_size_high
        # the t statistic is d_z sqrt(n): the d_z interval excludes 0 exactly when the t-test rejects
        assert (r.effect_size_low > 0 or r.effect_size_high < 0) == (r.p_value < 0.1)
    clustered = stats.compare(table(30, [0.0, 0.05], seed=9, clusters=10), cluster="topic")
    assert clustered[["effect_size_low", "effect_size_high"]].isna().all().all()


@pytest.mark.parametrize("test, one", [("t", True), ("randomization", True), ("bootstrap-t", True),
                                       ("bootstrap", False), ("wilcoxon", False)])
def test_the_note_says_whether_interval_and_p_are_one_procedure(test, one):
    from evalframe.reporting.views import procedure_note

    t = table(30, [0.0, 0.03, 0.06], seed=1)
    c = stats.compare(t, baseline="s0", test=test, adjusted_ci=True, n_resamples=199,
                      correction="bonferroni")
    note = procedure_note(c)
    assert ("one procedure" in note) == one and ("two procedures" in note) == (not one)
    if one:  # and the promise holds
        np.testing.assert_array_equal((c["ci_low_adjusted"] > 0) | (c["ci_high_adjusted"] < 0),
                                      c["p_adjusted"] < 0.05)
        np.testing.assert_array_equal((c["ci_low"] > 0) | (c["ci_high"] < 0), c["p_value"] < 0.05)


def test_a_bootstrap_too_large_for_memory_is_refused_up_front(monkeypatch, capsys):
    """report --n-resamples 1000000000000 ended in a MemoryError traceback (issue 30): the
    bootstrap distribution (n_resamples x columns floats) is refused before it is
    allocated, with the memory it needs and the most resamples that fit."""
    import evalframe as ef
    from evalframe.cli import main
    from evalframe.engine import budget
    with pytest.raises(ValueError, match=r"n_resamples=1000000000000 needs 7,629,395 MiB"):
        ef.report("no-such-run.trec", "no-such-qrels.txt", n_resamples=10 ** 12)  # before reading anything
    assert main(["report", "data/sso/qrels.txt", "data/sso/run.trec", "--n-resamples", "1000000000000"]) == 2
    assert "use n_resamples <=" in capsys.readouterr().err
    monkeypatch.setattr(budget, "default_memory_budget", lambda: 2 ** 20)  # 1 MiB
    t = pd.DataFrame({"system": np.repeat(["a", "b"], 30), "query_id": [f"q{i}" for i in range(30)] * 2,
                      "measure": "AP", "value": np.linspace(0, 1, 60)})
    with pytest.raises(ValueError, match=r"needs 763 MiB .* use n_resamples <= 131072"):
        ef.stats.summarize(t, method="bootstrap", n_resamples=100_000_000)
    assert len(ef.stats.summarize(t, method="bootstrap", n_resamples=1000)) == 2
