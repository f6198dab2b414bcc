"""Tests of evalframe.stats: scipy and published values as oracles, slow loops, simulation."""
from __future__ import annotations

import itertools
import math
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats as st

from evalframe.errors import EvalframeInputError, UnpairedQuestionsWarning
from evalframe.stats import (
    adjust_pvalues,
    compare,
    detectable_difference,
    half_width,
    n_for_difference,
    n_for_half_width,
    planning_curve,
    power,
    standard_error,
    summarize,
)

DATA = Path(__file__).resolve().parents[2] / "data" / "trec-per-topic"


def tidy(wide: dict[str, np.ndarray], measure: str = "AP", qids=None) -> pd.DataFrame:
    frames = []
    for name, values in wide.items():
        q = qids if qids is not None else [f"q{i}" for i in range(len(values))]
        frames.append(pd.DataFrame({"system": name, "query_id": q, "measure": measure,
                                    "value": np.asarray(values, dtype=float)}))
    return pd.concat(frames, ignore_index=True)


@pytest.fixture(scope="module")
def adhoc8():
    d = pd.read_csv(DATA / "adhoc8_ap.csv")
    return tidy({"run125": d["run125"].to_numpy(), "run126": d["run126"].to_numpy()})


def one(df: pd.DataFrame) -> pd.Series:
    assert len(df) == 1
    return df.iloc[0]


# ------------------------------------------------------------ published values (R)
def test_published_t_wilcoxon_sign(adhoc8):
    t = one(compare(adhoc8, baseline="run125", test="t"))
    assert t.system_a == "run125" and t.system_b == "run126" and t.n == 50
    assert t.p_value == pytest.approx(0.0013193972, abs=1e-6)
    assert t["diff"] > 0 and t.wins == 34 and t.losses == 16 and t.ties == 0
    w = one(compare(adhoc8, baseline="run125", test="wilcoxon"))
    assert w.p_value == pytest.approx(0.003445188, abs=1e-6)
    s = one(compare(adhoc8, baseline="run125", test="sign", tie_threshold=0.01))
    assert s.p_value == pytest.approx(0.009559879, abs=1e-6)
    assert (s.wins, s.ties, s.losses) == (31, 6, 13)
    s0 = one(compare(adhoc8, baseline="run125", test="sign"))
    assert s0.p_value == pytest.approx(0.0153467, abs=1e-6)


def test_published_randomization_1e6(adhoc8):
    B = 10**6
    r = one(compare(adhoc8, baseline="run125", test="randomization", n_resamples=B))
    assert r.n_resamples == B
    mc_sd = math.sqrt(0.001188 * (1 - 0.001188) / B)  # ~3.4e-5, ours and theirs
    assert abs(r.p_value - 0.001188) < 4 * math.sqrt(2) * mc_sd


def test_published_bootstrap_shift(adhoc8):
    B = 200_000
    r = one(compare(adhoc8, baseline="run125", test="bootstrap", n_resamples=B))
    sd = math.sqrt(0.000586 / B + 0.000586 / 10**6)
    assert abs(r.p_value - 0.000586) < 4 * sd


# ----------------------------------------------------------------- against scipy
@pytest.fixture(scope="module")
def small_pair():
    rng = np.random.default_rng(7)
    a = rng.beta(2, 4, 25)
    b = np.clip(a + rng.normal(0.03, 0.08, 25), 0, 1)
    b[:3] = a[:3]  # zero differences
    b[3], a[3] = 0.5, 0.4
    b[4], a[4] = 0.6, 0.5  # tied |d|
    return a, b


def test_ttest_matches_scipy(small_pair):
    a, b = small_pair
    r = one(compare(tidy({"A": a, "B": b}), test="t", confidence=0.9))
    ref = st.ttest_rel(b, a)
    ci = ref.confidence_interval(0.9)
    assert r.statistic == pytest.approx(ref.statistic, rel=1e-12)
    assert r.p_value == pytest.approx(ref.pvalue, rel=1e-10)
    assert (r.ci_low, r.ci_high) == pytest.approx((ci.low, ci.high), rel=1e-10)
    d = b - a
    assert r.effect_size == pytest.approx(d.mean() / d.std(ddof=1))


def test_wilcoxon_matches_scipy_approx_with_ties_and_zeros(small_pair):
    a, b = small_pair
    r = one(compare(tidy({"A": a, "B": b}), test="wilcoxon"))
    ref = st.wilcoxon(b, a, zero_method="wilcox", correction=True, method="approx")
    assert r.p_value == pytest.approx(ref.pvalue, rel=1e-10)
    d = (b - a)[b != a]
    ranks = st.rankdata(np.abs(d))
    assert r.statistic == ranks[d > 0].sum()


def test_wilcoxon_exact_matches_scipy():
    rng = np.random.default_rng(3)
    a = rng.random(12)
    b = a + rng.normal(0.1, 0.2, 12)
    r = one(compare(tidy({"A": a, "B": b}), test="wilcoxon", exact=True))
    assert r.p_value == pytest.approx(st.wilcoxon(b - a, method="exact").pvalue, rel=1e-12)


def test_wilcoxon_exact_with_a_zero_difference_falls_back_to_normal_as_r():
    # R's wilcox.test(exact=TRUE) uses the normal approximation (continuity corrected) once
    # any difference is 0 or two are tied; the docstring promises the same
    rng = np.random.default_rng(5)
    a = rng.random(12)
    b = a + rng.normal(0.1, 0.2, 12)
    b[3] = a[3]  # one zero difference, no ties among the rest
    r = one(compare(tidy({"A": a, "B": b}), test="wilcoxon", wilcoxon_method="exact"))
    ref = st.wilcoxon(b, a, zero_method="wilcox", correction=True, method="approx")
    assert r.p_value == pytest.approx(ref.pvalue, rel=1e-10)


def test_t_test_on_constant_differences_is_decided_by_their_sign():
    # scipy's ttest_rel gives NaN when sd(d) = 0; compare documents p = 1 for identical
    # systems and the limit p = 0 (two-sided) when every difference is the same non-zero value
    a = np.linspace(0.1, 0.9, 8)
    same = one(compare(tidy({"A": a, "B": a.copy()}), test="t"))
    assert same.p_value == 1.0
    up = one(compare(tidy({"A": a, "B": a + 0.25}), test="t"))
    assert up.p_value == 0.0 and up["diff"] == pytest.approx(0.25)


def test_sign_matches_binomtest(small_pair):
    a, b = small_pair
    r = one(compare(tidy({"A": a, "B": b}), test="sign"))
    w, l = int((b > a).sum()), int((b < a).sum())
    assert (r.wins, r.losses, r.ties) == (w, l, 25 - w - l)
    assert r.p_value == pytest.approx(st.binomtest(w, w + l).pvalue, rel=1e-12)


def _mean_diff(x, y, axis=-1):
    return np.mean(x - y, axis=axis)


def test_randomization_exact_matches_scipy():
    rng = np.random.default_rng(11)
    a = rng.random(12)
    b = a + rng.normal(0.05, 0.1, 12)
    r = one(compare(tidy({"A": a, "B": b}), test="randomization"))
    assert r.n_resamples == 2**12
    ref = st.permutation_test((b, a), _mean_diff, permutation_type="samples",
                              vectorized=True, n_resamples=np.inf)
    assert r.p_value == pytest.approx(ref.pvalue, rel=1e-12)


def test_randomization_monte_carlo_matches_scipy():
    rng = np.random.default_rng(12)
    a = rng.random(60)
    b = a + rng.normal(0.03, 0.1, 60)
    B = 20_000
    r = one(compare(tidy({"A": a, "B": b}), test="randomization", n_resamples=B))
    ref = st.permutation_test((b, a), _mean_diff, permutation_type="samples",
                              vectorized=True, n_resamples=B, random_state=1)
    p = ref.pvalue
    assert 0.005 < p < 0.5
    assert abs(r.p_value - p) < 4 * math.sqrt(2 * p * (1 - p) / B)


def test_bca_matches_scipy():
    rng = np.random.default_rng(5)
    x = rng.exponential(0.2, 30)
    B = 40_000
    s = one(summarize(tidy({"A": x}), method="bca", n_resamples=B, seed=2))
    ref = st.bootstrap((x,), np.mean, method="BCa", n_resamples=B, random_state=3).confidence_interval
    width = ref.high - ref.low
    assert s.ci_low == pytest.approx(ref.low, abs=0.03 * width)
    assert s.ci_high == pytest.approx(ref.high, abs=0.03 * width)
    # the same for the interval of a paired difference
    y = x + rng.normal(0.02, 0.05, 30)
    c = one(compare(tidy({"A": x, "B": y}), ci="bca", n_resamples=B))
    ref = st.bootstrap((y - x,), np.mean, method="BCa", n_resamples=B, random_state=3).confidence_interval
    width = ref.high - ref.low
    assert (c.ci_low, c.ci_high) == pytest.approx((ref.low, ref.high), abs=0.03 * width)


def test_percentile_bootstrap_matches_scipy_and_spec_loop():
    rng = np.random.default_rng(6)
    x = rng.beta(2, 5, 40)
    B = 40_000
    s = one(summarize(tidy({"A": x}), method="bootstrap", n_resamples=B))
    ref = st.bootstrap((x,), np.mean, method="percentile", n_resamples=B,
                       random_state=4).confidence_interval
    width = ref.high - ref.low
    assert (s.ci_low, s.ci_high) == pytest.approx((ref.low, ref.high), abs=0.03 * width)
    assert s.n_resamples == B and s.seed == 0 and s.method == "bootstrap"


def test_wilson_and_clopper_pearson_match_scipy():
    for k, n in [(0, 20), (3, 20), (19, 20), (20, 20), (37, 50)]:
        t = tidy({"A": np.r_[np.ones(k), np.zeros(n - k)]}, measure="Success@10")
        w = one(summarize(t, method="wilson", confidence=0.9))
        cp = one(summarize(t, method="clopper-pearson", confidence=0.9))
        ref_w = st.binomtest(k, n).proportion_ci(0.9, method="wilson")
        ref_cp = st.binomtest(k, n).proportion_ci(0.9, method="exact")
        assert (w.ci_low, w.ci_high) == pytest.approx((ref_w.low, ref_w.high), abs=1e-12)
        assert (cp.ci_low, cp.ci_high) == pytest.approx((ref_cp.low, ref_cp.high), abs=1e-10)
        assert w.se == pytest.approx(math.sqrt(k / n * (1 - k / n) / n))


def test_summarize_t_interval_and_auto():
    rng = np.random.default_rng(8)
    x = rng.random(30)
    t = pd.concat([tidy({"A": x}, "nDCG@10"), tidy({"A": (x > 0.5).astype(float)}, "Success@10")])
    s = summarize(t).set_index("measure")
    assert s.loc["nDCG@10", "method"] == "t" and s.loc["Success@10", "method"] == "wilson"
    ref = st.ttest_1samp(x, 0).confidence_interval(0.95)
    assert (s.loc["nDCG@10", "ci_low"], s.loc["nDCG@10", "ci_high"]) == pytest.approx((ref.low, ref.high))
    assert s.loc["nDCG@10", "se"] == pytest.approx(x.std(ddof=1) / math.sqrt(30))
    assert s.loc["nDCG@10", "sd"] == pytest.approx(x.std(ddof=1))
    assert pd.isna(s.loc["nDCG@10", "n_resamples"])
    assert list(summarize(t).columns) == ["system", "measure", "n", "mean", "sd", "se", "ci_low",
                                          "ci_high", "method", "confidence", "n_resamples", "seed"]


def test_summarize_by_segment_and_no_system_column():
    t = pd.DataFrame({"query_id": [f"q{i}" for i in range(6)], "measure": "AP",
                      "value": [0.1, 0.3, 0.2, 0.9, 0.7, 0.8], "segment": list("aaabbb")})
    s = summarize(t, by="segment")
    assert list(s.columns[:3]) == ["system", "segment", "measure"]
    assert s.set_index("segment")["mean"].to_dict() == pytest.approx({"a": 0.2, "b": 0.8})
    assert (s["system"] == "system").all() and (s["n"] == 3).all()


# ----------------------------------------------------------------- spec numbers
def test_spec_sample_size_numbers():
    assert standard_error(p=0.5, n=20) == pytest.approx(0.112, abs=5e-4)
    assert half_width(p=0.5, n=20) == pytest.approx(0.22, abs=0.005)  # "about +-22 points"
    assert standard_error(p=0.5, n=50) == pytest.approx(0.07, abs=0.002)  # "about 7 points"
    assert standard_error(p=0.5, n=200) == pytest.approx(0.035, abs=0.001)  # "about 3.5"
    t = tidy({"A": [1.0, 0.0] * 10}, "Success@10")
    s = one(summarize(t))
    assert s.se == pytest.approx(0.1118, abs=1e-4)
    assert (s.ci_low, s.ci_high) == pytest.approx((0.28, 0.72), abs=0.02)  # "about 28% to 72%"


def test_planning_functions():
    # G*Power / R power.t.test(delta=.5, sd=1, type="paired", power=.8): n = 33.37 -> 34
    assert n_for_difference(0.5, sd_diff=1.0) == 34
    assert power(34, 0.5, 1.0) >= 0.8 > power(33, 0.5, 1.0)
    assert n_for_half_width(0.05, p=0.5) == 385  # the classic 1.96^2 / (4 * 0.05^2)
    n = n_for_half_width(0.02, sd=0.25)
    assert half_width(sd=0.25, n=n) <= 0.02 < half_width(sd=0.25, n=n - 1)
    dd = detectable_difference(100, sd_diff=0.15)
    assert power(100, dd, 0.15) == pytest.approx(0.8, abs=1e-9)
    assert dd == pytest.approx(2.8 * 0.15 / 10, rel=0.03)  # normal rule of thumb
    with pytest.raises(ValueError, match="exactly one of sd"):
        standard_error(sd=0.2, p=0.5, n=10)


def test_power_matches_simulation():
    rng = np.random.default_rng(21)
    n, delta, sd = 30, 0.04, 0.1
    d = rng.normal(delta, sd, size=(20_000, n))
    sim = (st.ttest_1samp(d, 0, axis=1).pvalue < 0.05).mean()
    assert power(n, delta, sd) == pytest.approx(sim, abs=0.015)


def test_planning_curve_from_table():
    rng = np.random.default_rng(4)
    x = rng.random(40)
    y = np.clip(x + rng.normal(0.02, 0.1, 40), 0, 1)
    z = np.clip(x + rng.normal(0.0, 0.1, 40), 0, 1)
    t = tidy({"A": x, "B": y, "C": z})
    c = planning_curve(t, n=[20, 50], deltas=[0.02, 0.05])
    assert len(c) == 4 and set(c.columns) >= {"measure", "n", "se", "half_width", "delta", "power"}
    sd = math.sqrt(np.mean([v.var(ddof=1) for v in (x, y, z)]))
    sdd = math.sqrt(np.mean([(v - u).var(ddof=1) for u, v in [(x, y), (x, z), (y, z)]]))
    assert c["sd"].iloc[0] == pytest.approx(sd) and c["sd_diff"].iloc[0] == pytest.approx(sdd)
    r = c[(c.n == 50) & (c.delta == 0.05)].iloc[0]
    assert r.se == pytest.approx(sd / math.sqrt(50))
    assert r.power == pytest.approx(power(50, 0.05, sdd))
    assert c.groupby("delta")["power"].apply(lambda s: s.is_monotonic_increasing).all()


# ----------------------------------------------------------- calibration by simulation
def _experiments(n_exp: int, n: int, seed: int) -> pd.DataFrame:
    """Two systems with the same per-question distribution; experiment e = measure 'e'."""
    rng = np.random.default_rng(seed)
    difficulty = rng.beta(2, 3, size=(n_exp, n))
    a = np.clip(difficulty + rng.normal(0, 0.15, (n_exp, n)), 0, 1)
    b = np.clip(difficulty + rng.normal(0, 0.15, (n_exp, n)), 0, 1)
    qid = np.tile([f"q{i}" for i in range(n)], n_exp)
    meas = np.repeat([f"m{e}" for e in range(n_exp)], n)
    return pd.concat([pd.DataFrame({"system": s, "query_id": qid, "measure": meas, "value": v.ravel()})
                      for s, v in (("A", a), ("B", b))], ignore_index=True)


@pytest.mark.parametrize("test", ["t", "randomization"])
def test_type_i_error_calibrated(test):
    t = _experiments(2000, 30, seed=100)
    r = compare(t, test=test, n_resamples=2000, ci="none")
    assert len(r) == 2000 and (r["correction"] == "none").all()
    rate = (r["p_value"] < 0.05).mean()
    assert 0.035 <= rate <= 0.065, rate


def test_interval_coverage_continuous_n50():
    rng = np.random.default_rng(31)
    n_exp, n = 2000, 50
    x = rng.beta(2, 5, size=(n_exp, n))
    true = 2 / 7
    t = pd.DataFrame({"system": np.repeat([f"s{e}" for e in range(n_exp)], n),
                      "query_id": np.tile([f"q{i}" for i in range(n)], n_exp),
                      "measure": "nDCG@10", "value": x.ravel()})
    for method in ("t", "bootstrap", "bca"):
        s = summarize(t, method=method, n_resamples=2000)
        cover = ((s.ci_low <= true) & (true <= s.ci_high)).mean()
        assert 0.93 <= cover <= 0.97, (method, cover)


def test_wilson_beats_normal_near_095_n20():
    rng = np.random.default_rng(41)
    n_exp, n, p = 2000, 20, 0.95
    x = (rng.random((n_exp, n)) < p).astype(float)
    t = pd.DataFrame({"system": np.repeat([f"s{e}" for e in range(n_exp)], n),
                      "query_id": np.tile([f"q{i}" for i in range(n)], n_exp),
                      "measure": "Success@10", "value": x.ravel()})
    cov = {}
    for method in ("wilson", "normal", "bootstrap"):
        s = summarize(t, method=method, n_resamples=1000)
        cov[method] = ((s.ci_low <= p) & (p <= s.ci_high)).mean()
    assert cov["wilson"] >= 0.90
    assert cov["wilson"] > cov["normal"] + 0.1 and cov["wilson"] > cov["bootstrap"] + 0.1


# ------------------------------------------------------------ multiple comparisons
def _holm_loop(p):
    m = len(p)
    order = sorted(range(m), key=lambda i: p[i])
    out, running = [0.0] * m, 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[i]))
        out[i] = running
    return out


def _bh_loop(p):
    m = len(p)
    out = []
    for i in range(m):
        out.append(min(min(1.0, m * p[j] / (sorted(p).index(p[j]) + 1))
                       for j in range(m) if p[j] >= p[i]))
    return out


def test_adjust_pvalues_known_values_and_loops():
    p = [0.01, 0.02, 0.03, 0.04, 0.05]
    # R: p.adjust(p, "holm") / "BH" / "bonferroni"
    assert adjust_pvalues(p, "holm") == pytest.approx([0.05, 0.08, 0.09, 0.09, 0.09])
    assert adjust_pvalues(p, "bh") == pytest.approx([0.05] * 5)
    assert adjust_pvalues(p, "bonferroni") == pytest.approx([0.05, 0.1, 0.15, 0.2, 0.25])
    rng = np.random.default_rng(2)
    for _ in range(20):
        q = list(rng.random(8) ** 3)
        assert adjust_pvalues(q, "holm") == pytest.approx(_holm_loop(q))
        assert adjust_pvalues(q, "bh") == pytest.approx(_bh_loop(q))
        assert adjust_pvalues(q, "none") == pytest.approx(q)
    out = adjust_pvalues([0.01, np.nan, 0.04], "bonferroni")
    assert out[0] == pytest.approx(0.02) and np.isnan(out[1]) and out[2] == pytest.approx(0.08)


def _systems(n_sys=4, n=40, seed=9):
    rng = np.random.default_rng(seed)
    base = rng.beta(2, 3, n)
    return {f"s{i}": np.clip(base + 0.03 * i + rng.normal(0, 0.1, n), 0, 1) for i in range(n_sys)}


def test_compare_pairs_and_default_holm():
    w = _systems()
    r = compare(tidy(w))
    assert list(zip(r.system_a, r.system_b)) == list(itertools.combinations(w, 2))
    assert (r.correction == "holm").all()
    assert r.p_adjusted.to_numpy() == pytest.approx(_holm_loop(list(r.p_value)))
    rb = compare(tidy(w), baseline="s2", correction="bonferroni")
    assert list(rb.system_a) == ["s2"] * 3 and list(rb.system_b) == ["s0", "s1", "s3"]
    assert rb["diff"].to_numpy() == pytest.approx([w[b].mean() - w["s2"].mean() for b in rb.system_b])
    assert rb.p_adjusted.to_numpy() == pytest.approx(np.minimum(1, 3 * rb.p_value))


def test_tukey_hsd_matches_hand_anova():
    w = _systems(n_sys=4, n=30)
    r = compare(tidy(w), correction="tukey")
    Y = np.column_stack(list(w.values()))
    q, s = Y.shape
    ss = 0.0
    for i in range(q):
        for j in range(s):
            ss += (Y[i, j] - Y[i].mean() - Y[:, j].mean() + Y.mean()) ** 2
    mse = ss / ((q - 1) * (s - 1))
    for row in r.itertuples():
        qstat = abs(row.diff) / math.sqrt(mse / q)
        assert row.p_adjusted == pytest.approx(st.studentized_range.sf(qstat, s, (q - 1) * (s - 1)), rel=1e-6)
    assert (r.correction == "tukey").all()


def test_randomized_tukey_close_to_tukey_on_normal_data():
    rng = np.random.default_rng(13)
    n, s = 40, 4
    Y = rng.normal(0, 1, (n, 1)) + rng.normal(0, 0.3, (n, s)) + np.array([0, 0.05, 0.12, 0.2])
    w = {f"s{j}": Y[:, j] for j in range(s)}
    a = compare(tidy(w), correction="tukey")
    b = compare(tidy(w), correction="randomized-tukey", test="randomization", n_resamples=20_000)
    assert (b.correction == "randomized-tukey").all()
    mid = (a.p_adjusted > 0.01) & (a.p_adjusted < 0.9)
    assert mid.sum() >= 2
    assert b.p_adjusted[mid].to_numpy() == pytest.approx(a.p_adjusted[mid].to_numpy(), abs=0.04)
    assert (b.p_adjusted >= b.p_value - 0.01).all()  # family-wise p above per-pair p


# ---------------------------------------------------------- pairing and reproducibility
def test_pairing_drops_unshared_questions_and_warns():
    w = _systems(n_sys=2, n=30)
    t = tidy(w)
    t = t[~((t.system == "s0") & t.query_id.isin(["q0", "q1"])) & ~((t.system == "s1") & (t.query_id == "q5"))]
    with pytest.warns(UnpairedQuestionsWarning, match="3 questions dropped"):
        r = one(compare(t))
    assert (r.n, r.n_dropped) == (27, 3)
    keep = np.array([i not in (0, 1, 5) for i in range(30)])
    ref = st.ttest_rel(w["s1"][keep], w["s0"][keep])
    assert r.p_value == pytest.approx(ref.pvalue)
    assert r.mean_a == pytest.approx(w["s0"][keep].mean())


def test_reproducible_and_independent_of_other_systems():
    w = _systems(n_sys=3, n=200)
    t = tidy(w)
    kw = dict(test="randomization", n_resamples=3000, seed=5)
    r1, r2 = compare(t, **kw), compare(t, **kw)
    pd.testing.assert_frame_equal(r1, r2)
    r3 = compare(t, **{**kw, "seed": 6})
    assert not np.allclose(r1.ci_low, r3.ci_low)
    alone = one(compare(t[t.system.isin(["s0", "s2"])], **kw))
    both = r1[(r1.system_a == "s0") & (r1.system_b == "s2")].iloc[0]
    assert alone.p_value == both.p_value  # same sign flips: identical counts
    # same resamples; the sums may differ in the last bit (BLAS blocks by matrix width)
    assert (alone.ci_low, alone.ci_high) == pytest.approx((both.ci_low, both.ci_high), rel=1e-12)
    s1, s2 = summarize(t, method="bca", seed=3), summarize(t, method="bca", seed=3)
    pd.testing.assert_frame_equal(s1, s2)


def test_inputs_not_modified():
    t = tidy(_systems(n_sys=2, n=10))
    before = t.copy()
    compare(t, test="bootstrap", n_resamples=100)
    summarize(t, method="bootstrap", n_resamples=100)
    pd.testing.assert_frame_equal(t, before)


@pytest.mark.filterwarnings("ignore::evalframe.errors.FewClustersWarning")  # few clusters on purpose
def test_cluster_bootstrap_and_cluster_se():
    rng = np.random.default_rng(17)
    G, m = 12, 8
    cluster_means = rng.beta(2, 3, G)
    x = np.repeat(cluster_means, m)  # questions of a cluster are identical
    t = tidy({"A": x})
    t["topic"] = np.repeat([f"c{g}" for g in range(G)], m)
    naive = one(summarize(t, method="bootstrap", n_resamples=4000))
    clus = one(summarize(t, method="bootstrap", n_resamples=4000, cluster="topic"))
    ratio = (clus.ci_high - clus.ci_low) / (naive.ci_high - naive.ci_low)
    assert 2.2 < ratio < 3.6  # ~ sqrt(m) = 2.83: only G independent units
    ct = one(summarize(t, method="t", cluster="topic"))
    assert ct.se == pytest.approx(cluster_means.std(ddof=1) / math.sqrt(G))
    assert ct.ci_high - ct["mean"] == pytest.approx(st.t.ppf(0.975, G - 1) * ct.se)


# ------------------------------------------------------------------------ bad input
def test_bad_input_lists_every_problem():
    t = pd.DataFrame({"system": ["a", "b"], "query_id": ["1", "1"], "value": [0.5, np.nan]})
    with pytest.raises(EvalframeInputError) as e:
        summarize(t)
    assert len(e.value.problems) == 2
    msg = str(e.value)
    assert "missing column ['measure']" in msg and "1 rows have a missing (NaN) value" in msg


def test_single_system_and_unknown_baseline():
    t = tidy({"A": [0.1, 0.2, 0.3]})
    with pytest.raises(EvalframeInputError, match="only one system"):
        compare(t)
    with pytest.raises(EvalframeInputError, match="baseline 'Z'"):
        compare(tidy({"A": [0.1, 0.2], "B": [0.3, 0.1]}), baseline="Z")


def test_duplicates_and_non_numeric():
    t = tidy({"A": [0.1, 0.2], "B": [0.3, 0.1]})
    dup = pd.concat([t, t.iloc[:1]])
    with pytest.raises(EvalframeInputError, match="share the same"):
        compare(dup)
    bad = t.astype({"value": object})
    bad.loc[0, "value"] = "high"
    with pytest.raises(EvalframeInputError, match="non-numeric"):
        summarize(bad)
    with pytest.raises(EvalframeInputError, match="needs 0/1 values"):
        summarize(t, method="wilson")


def test_parameter_checks():
    t = tidy({"A": [0.1, 0.2], "B": [0.3, 0.1]})
    with pytest.raises(ValueError, match="test must be one of"):
        compare(t, test="z")
    with pytest.raises(ValueError, match="n_resamples must be an int >= 1"):
        compare(t, n_resamples=0)
    with pytest.raises(ValueError, match="confidence must be a float in"):
        summarize(t, confidence=95)


def test_compare_within_segments():
    w = _systems(n_sys=3, n=40)
    t = tidy(w)
    t["segment"] = np.where(t.query_id.str[1:].astype(int) < 15, "lookup", "natural")
    r = compare(t, by="segment")
    assert list(r.columns[:4]) == ["measure", "segment", "system_a", "system_b"]
    assert r.groupby("segment")["n"].first().to_dict() == {"lookup": 15, "natural": 25}
    for seg, g in r.groupby("segment"):  # Holm within each segment's family of 3
        assert g.p_adjusted.to_numpy() == pytest.approx(_holm_loop(list(g.p_value)))
        sel = np.arange(40) < 15 if seg == "lookup" else np.arange(40) >= 15
        row = g[(g.system_a == "s0") & (g.system_b == "s2")].iloc[0]
        assert row.p_value == pytest.approx(st.ttest_rel(w["s2"][sel], w["s0"][sel]).pvalue)


def test_segment_column_named_like_an_output_column_is_a_clear_error():
    pq = pd.DataFrame({"system": "a", "query_id": ["1", "2", "3"], "measure": "AP", "value": [.1, .2, .3],
                       "n": ["x", "x", "y"]})
    with pytest.raises(EvalframeInputError, match="reserved"):
        summarize(pq, by="n")


def test_power_near_one_is_finite():
    # scipy's noncentral t lower tail underflows to NaN for large shifts
    assert power(30, 3.0, 1.0) == pytest.approx(1.0)
    assert power(200, 0.1, 0.05) == pytest.approx(1.0)


# ------------------------------------------------------------- clustered compare()
def _clustered_table(w: dict[str, np.ndarray], labels, measure: str = "AP", qids=None) -> pd.DataFrame:
    t = tidy(w, measure, qids)
    t["topic"] = np.tile(np.asarray(labels), len(w))
    return t


@pytest.mark.filterwarnings("ignore::evalframe.errors.FewClustersWarning")  # few clusters on purpose
def test_compare_one_question_per_cluster_equals_unclustered():
    # Not Monte Carlo error: the same seeded draws of the same units, so everything is
    # equal up to float round-off (t: the CR1 formula reduces to sd / sqrt(n); BCa: the
    # jackknife sums may be added in another order), and the counts behind the
    # randomisation and bootstrap p-values are identical.
    for n in (12, 30):  # exact (2**12) and Monte Carlo sign flips
        w = _systems(n_sys=3, n=n, seed=n)
        plain = tidy(w)
        clus = _clustered_table(w, [f"c{i}" for i in range(n)])
        for kw in (dict(test="t"), dict(test="t", ci="bca"), dict(test="bootstrap"),
                   dict(test="randomization"), dict(test="randomization", ci="t")):
            kw = {**kw, "n_resamples": 2000, "seed": 4}
            a = compare(plain, **kw)
            b = compare(clus, cluster="topic", **kw)
            assert (a["cluster"].isna()).all() and a["n_clusters"].isna().all()
            assert (b["cluster"] == "topic").all() and (b["n_clusters"] == n).all()
            a, b = a.drop(columns=["cluster", "n_clusters"]), b.drop(columns=["cluster", "n_clusters"])
            pd.testing.assert_frame_equal(a, b, check_exact=False, rtol=1e-12, atol=0)
            if kw["test"] != "t":
                assert (a.p_value == b.p_value).all() and (a.n_resamples == b.n_resamples).all()


@pytest.mark.filterwarnings("ignore::evalframe.errors.FewClustersWarning")  # few clusters on purpose
def test_compare_cluster_oracles_equal_cluster_sizes():
    # with equal cluster sizes, clustered compare() == the analysis of the cluster means
    rng = np.random.default_rng(23)
    G, m = 9, 6
    a = rng.beta(2, 3, G * m)
    b = np.clip(a + np.repeat(rng.normal(0.03, 0.1, G), m) + rng.normal(0, 0.03, G * m), 0, 1)
    labels = np.repeat([f"c{g}" for g in range(G)], m)
    # zero-padded ids: clusters are met (and coded) in the order c0, c1, ... as the means
    t = _clustered_table({"A": a, "B": b}, labels, qids=[f"q{i:03d}" for i in range(G * m)])
    d_g = (b - a).reshape(G, m).mean(axis=1)
    ca, cb = a.reshape(G, m).mean(axis=1), b.reshape(G, m).mean(axis=1)
    means = tidy({"A": ca, "B": cb})
    tt = one(compare(t, test="t", cluster="topic"))
    ref = st.ttest_1samp(d_g, 0)
    ci = ref.confidence_interval(0.95)
    assert tt.statistic == pytest.approx(ref.statistic, rel=1e-10)
    assert tt.p_value == pytest.approx(ref.pvalue, rel=1e-10)
    assert (tt.ci_low, tt.ci_high) == pytest.approx((ci.low, ci.high), rel=1e-10)
    assert tt.n == G * m and tt.n_clusters == G and tt["diff"] == pytest.approx(d_g.mean())
    # randomisation: exact 2**G cluster flips == exact flips of the G cluster means
    rc = one(compare(t, test="randomization", cluster="topic"))
    rm = one(compare(means, test="randomization"))
    assert rc.n_resamples == 2**G and rc.p_value == rm.p_value
    # bootstrap: the same seeded cluster draws as the bootstrap of the G cluster means
    for ci_m in ("bootstrap", "bca"):
        bc = one(compare(t, test="bootstrap", ci=ci_m, cluster="topic", n_resamples=3000, seed=8))
        bm = one(compare(means, test="bootstrap", ci=ci_m, n_resamples=3000, seed=8))
        assert (bc.ci_low, bc.ci_high) == pytest.approx((bm.ci_low, bm.ci_high), rel=1e-12)
        assert bc.p_value == pytest.approx(bm.p_value, abs=2 / 3001)  # ties at round-off


def test_compare_cluster_t_unequal_sizes_matches_hand_formula():
    rng = np.random.default_rng(29)
    sizes = [1, 2, 3, 5, 8, 4]
    labels = np.repeat([f"g{i}" for i in range(len(sizes))], sizes)
    n, G = len(labels), len(sizes)
    a = rng.random(n)
    b = a + rng.normal(0.05, 0.1, n)
    r = one(compare(_clustered_table({"A": a, "B": b}, labels), cluster="topic", confidence=0.9))
    d = b - a
    ss = 0.0
    for g in set(labels):
        sel = labels == g
        ss += (d[sel].sum() - sel.sum() * d.mean()) ** 2
    se = math.sqrt(G / (G - 1) * ss) / n
    assert r.statistic == pytest.approx(d.mean() / se, rel=1e-12)
    assert r.p_value == pytest.approx(2 * st.t.sf(abs(d.mean() / se), G - 1), rel=1e-10)
    assert r.ci_high - r["diff"] == pytest.approx(st.t.ppf(0.95, G - 1) * se, rel=1e-10)
    assert r.sd_diff == pytest.approx(d.std(ddof=1)) and r.n_clusters == G


def test_compare_cluster_coverage_with_correlated_questions():
    # 500 experiments (one per measure), 20 clusters x 10 questions, a cluster random
    # effect in the differences: the naive t-interval is far too narrow.
    rng = np.random.default_rng(37)
    n_exp, G, m, delta = 500, 20, 10, 0.02
    n = G * m
    a = rng.beta(2, 3, (n_exp, n))
    d = delta + np.repeat(rng.normal(0, 0.08, (n_exp, G)), m, axis=1) + rng.normal(0, 0.05, (n_exp, n))
    qid = np.tile([f"q{i}" for i in range(n)], n_exp)
    meas = np.repeat([f"m{e}" for e in range(n_exp)], n)
    topic = np.tile(np.repeat([f"c{g}" for g in range(G)], m), n_exp)
    t = pd.concat([pd.DataFrame({"system": s, "query_id": qid, "measure": meas, "value": v.ravel(),
                                 "topic": topic}) for s, v in (("A", a), ("B", a + d))],
                  ignore_index=True)
    naive = compare(t, test="t")
    clus = compare(t, test="t", cluster="topic")
    assert len(naive) == len(clus) == n_exp and (clus.n_clusters == G).all()
    assert (clus["diff"] == naive["diff"]).all()
    width_n = naive.ci_high - naive.ci_low
    width_c = clus.ci_high - clus.ci_low
    assert (width_c > width_n).mean() > 0.99
    assert (width_c / width_n).median() > 2  # design effect 1 + (m - 1) icc ~ 8.7
    cov_n = ((naive.ci_low <= delta) & (delta <= naive.ci_high)).mean()
    cov_c = ((clus.ci_low <= delta) & (delta <= clus.ci_high)).mean()
    assert abs(cov_c - 0.95) < abs(cov_n - 0.95)
    assert 0.92 <= cov_c <= 0.98, cov_c  # exact t on 20 cluster means: 95% (+-3 MC se)
    assert cov_n < 0.7, cov_n
    # and the clustered test holds its level where the naive one does not
    null = t.copy()
    null.loc[null.system == "B", "value"] -= delta
    pn = compare(null, test="t").p_value
    pc = compare(null, test="t", cluster="topic").p_value
    assert (pc < 0.05).mean() <= 0.08 < 0.3 < (pn < 0.05).mean()


@pytest.mark.filterwarnings("ignore::evalframe.errors.FewClustersWarning")  # few clusters on purpose
def test_compare_cluster_seeded_and_segments():
    w = _systems(n_sys=3, n=60, seed=3)
    t = _clustered_table(w, [f"c{i // 4}" for i in range(60)])
    t["segment"] = np.where(t.query_id.str[1:].astype(int) < 24, "lookup", "natural")
    kw = dict(test="randomization", ci="bca", n_resamples=2000, seed=5, cluster="topic", by="segment")
    r1, r2 = compare(t, **kw), compare(t, **kw)
    pd.testing.assert_frame_equal(r1, r2)
    assert r1.groupby("segment")["n_clusters"].first().to_dict() == {"lookup": 6, "natural": 9}
    assert not np.allclose(r1.ci_low, compare(t, **{**kw, "seed": 6}).ci_low)


def test_compare_cluster_bad_input():
    t = _clustered_table({"A": [0.1, 0.2, 0.4, 0.3], "B": [0.3, 0.1, 0.5, 0.6]}, ["x", "x", "y", "y"])
    with pytest.raises(EvalframeInputError, match=r"missing column \['nope'\]"):
        compare(t, cluster="nope")
    for test in ("wilcoxon", "sign"):
        with pytest.raises(ValueError, match="assumes independent questions"):
            compare(t, test=test, cluster="topic")
    with pytest.raises(ValueError, match="assumes independent questions"):
        compare(t, correction="tukey", cluster="topic")
    bad = t.copy()
    bad.loc[(bad.system == "B") & (bad.query_id == "q0"), "topic"] = "y"
    with pytest.raises(EvalframeInputError, match="more than one 'topic' cluster"):
        compare(bad, cluster="topic")
    with pytest.raises(EvalframeInputError, match="reserved"):
        compare(t.rename(columns={"topic": "cluster"}), by="cluster")
    one_cluster = one(compare(t.assign(topic="x"), cluster="topic", test="bootstrap"))
    assert one_cluster.n_clusters == 1 and np.isnan(one_cluster.p_value) and np.isnan(one_cluster.ci_low)


def test_binary_is_decided_per_system_not_across_systems():
    """Defect 2: a 0/1 measure for one system gets the Wilson interval even when another
    system's values of the same measure are not 0/1; adding a system changes nothing."""
    rng = np.random.default_rng(7)
    a = tidy({"A": rng.integers(0, 2, 30).astype(float)}, measure="R@10")
    b = tidy({"B": rng.random(30)}, measure="R@10")
    alone = summarize(a)
    both = summarize(pd.concat([a, b], ignore_index=True))
    row = both[both.system == "A"].reset_index(drop=True)
    pd.testing.assert_frame_equal(row, alone, check_exact=True)
    assert row.method[0] == "wilson"
    assert both.loc[both.system == "B", "method"].item() == "t"
    # the same within segments: a segment's 0/1 values decide for that segment alone
    seg = pd.concat([a, b], ignore_index=True)
    seg["segment"] = "s"
    by_seg = summarize(seg, by="segment")
    assert by_seg.set_index("system").method.to_dict() == {"A": "wilson", "B": "t"}
    # method="wilson" still refuses a table where one system is not 0/1
    with pytest.raises(EvalframeInputError, match="needs 0/1 values"):
        summarize(pd.concat([a, b], ignore_index=True), method="wilson")


@pytest.mark.parametrize("seed", [None, -1, 1.5, True, "0"])
def test_seed_is_checked_before_any_resampling(seed):
    t = tidy({"A": [0.1, 0.2, 0.4], "B": [0.3, 0.1, 0.5]})
    with pytest.raises(ValueError, match=r"^summarize: seed must be an int >= 0, got "):
        summarize(t, seed=seed, method="t")
    with pytest.raises(ValueError, match=r"^compare: seed must be an int >= 0, got "):
        compare(t, seed=seed)
    from evalframe import stats
    with pytest.raises(ValueError, match=r"^report: seed must be an int >= 0"):
        stats.check_seed(seed, func="report")


def test_parameter_errors_follow_one_template():
    """'<function>: <param> must be <what>, got <value!r>' for every parameter error."""
    t = tidy({"A": [0.1, 0.2, 0.4], "B": [0.3, 0.1, 0.5]})
    cases = [
        (lambda: summarize(t, method="x"), "summarize: method must be one of", "'x'"),
        (lambda: summarize(t, confidence=2), "summarize: confidence must be a float in (0, 1)", "2"),
        (lambda: compare(t, n_resamples=0), "compare: n_resamples must be an int >= 1", "0"),
        (lambda: compare(t, correction="x"), "compare: correction must be one of", "'x'"),
        (lambda: compare(t, ci="x"), "compare: ci must be one of", "'x'"),
        (lambda: compare(t, tie_threshold=-1.0), "compare: tie_threshold must be a float >= 0", "-1.0"),
        (lambda: compare(t, cluster=3), "compare: cluster must be a column name (str) or None", "3"),
        (lambda: adjust_pvalues([0.1], "x"), "adjust_pvalues: method must be one of", "'x'"),
        (lambda: standard_error(sd=-1.0, n=3), "standard_error: sd must be a float >= 0", "-1.0"),
        (lambda: half_width(p=0.5, n=0), "half_width: n must be an int >= 1", "0"),
        (lambda: n_for_half_width(0.0, sd=1.0), "n_for_half_width: target must be a float > 0", "0.0"),
        (lambda: power(10, 0.1, 1.0, 1.5), "power: alpha must be a float in (0, 1)", "1.5"),
        (lambda: n_for_difference(0.0, sd_diff=1.0), "n_for_difference: delta must be a non-zero float", "0.0"),
        (lambda: n_for_difference(0.1, sd_diff=0.0), "n_for_difference: sd_diff must be a float > 0", "0.0"),
        (lambda: detectable_difference(1, sd_diff=1.0), "detectable_difference: n must be an int >= 2", "1"),
        (lambda: planning_curve(sd=1.0, n=[1]), "planning_curve: n must be an int >= 2", "1"),
    ]
    for call, start, got in cases:
        with pytest.raises(ValueError) as e:
            call()
        msg = str(e.value)
        assert msg.startswith(start) and msg.endswith(f", got {got}"), msg


def test_every_registered_test_runs_and_matches_its_default_interval():
    from evalframe.stats.paired_tests import PAIRED_TESTS
    from evalframe.stats.validation import TESTS

    assert tuple(PAIRED_TESTS) == TESTS
    w = _systems(n_sys=3, n=25)
    t = tidy(w)
    for name, spec in PAIRED_TESTS.items():
        r = compare(t, test=name, n_resamples=199)
        assert len(r) == 3 and r.p_value.between(0, 1).all() and (r.test == name).all()
        assert (r.ci_method == spec.default_ci).all()


def test_bootstrap_test_and_interval_share_one_draw():
    """test='bootstrap' with ci='bootstrap' gives the interval of test='t', ci='bootstrap'
    (same seeded draw) and the p-value of test='bootstrap', ci='none'."""
    t = tidy(_systems(n_sys=3, n=30))
    both = compare(t, test="bootstrap", ci="bootstrap", n_resamples=499, seed=5)
    ci_only = compare(t, test="t", ci="bootstrap", n_resamples=499, seed=5)
    p_only = compare(t, test="bootstrap", ci="none", n_resamples=499, seed=5)
    np.testing.assert_array_equal(both.ci_low, ci_only.ci_low)
    np.testing.assert_array_equal(both.ci_high, ci_only.ci_high)
    np.testing.assert_array_equal(both.p_value, p_only.p_value)
    assert (both.n_resamples == 499).all() and (ci_only.n_resamples == 499).all()


# ------------------------------------------------------------------ one-sided tests
def test_published_one_sided_t_wilcoxon_sign(adhoc8):
    """Urbano, Lima & Hanjalic (SIGIR 2019): one-tailed p-values of run126 > run125."""
    t = one(compare(adhoc8, baseline="run125", test="t", alternative="greater"))
    assert t.p_value == pytest.approx(0.0006596986, abs=1e-9) and t.alternative == "greater"
    w = one(compare(adhoc8, baseline="run125", test="wilcoxon", alternative="greater",
                    wilcoxon_method="normal"))
    assert w.p_value == pytest.approx(0.001722594, abs=1e-9)
    s = one(compare(adhoc8, baseline="run125", test="sign", tie_threshold=0.01,
                    alternative="greater"))
    assert s.p_value == pytest.approx(0.004779939, abs=1e-9)
    lt = one(compare(adhoc8, baseline="run125", test="t", alternative="less"))
    assert lt.p_value == pytest.approx(1 - 0.0006596986, abs=1e-9)


def test_published_randomization_one_sided_half_of_two_sided(adhoc8):
    """The sign-flip null is symmetric: one-tailed p ~ half the published two-tailed one
    (0.001188 from 10^6 flips); 4 binomial standard errors of both Monte Carlo runs.
    (Not so for the shift bootstrap, whose bootstrap distribution is skewed.)"""
    B, published = 200_000, 0.001188
    r = one(compare(adhoc8, baseline="run125", test="randomization", n_resamples=B,
                    alternative="greater", ci="none"))
    p = published / 2
    assert abs(r.p_value - p) < 4 * math.sqrt(p * (1 - p) / B + published * (1 - published) / 4e6)


@pytest.mark.parametrize("alternative", ["greater", "less"])
def test_one_sided_matches_scipy(small_pair, alternative):
    a, b = small_pair
    t = tidy({"A": a, "B": b})
    r = one(compare(t, test="t", alternative=alternative, confidence=0.9))
    ref = st.ttest_rel(b, a, alternative=alternative)
    ci = ref.confidence_interval(0.9)
    assert r.p_value == pytest.approx(ref.pvalue, rel=1e-10)
    assert (r.ci_low, r.ci_high) == pytest.approx((ci.low, ci.high), rel=1e-10)
    assert np.isinf(r.ci_high if alternative == "greater" else r.ci_low)
    w = one(compare(t, test="wilcoxon", alternative=alternative))  # ties and zeros
    ref = st.wilcoxon(b, a, zero_method="wilcox", correction=True, method="approx",
                      alternative=alternative)
    assert w.p_value == pytest.approx(ref.pvalue, rel=1e-10)
    s = one(compare(t, test="sign", alternative=alternative))
    wins, losses = int((b > a).sum()), int((b < a).sum())
    ref = st.binomtest(wins, wins + losses, alternative=alternative)
    assert s.p_value == pytest.approx(ref.pvalue, rel=1e-12)
    rng = np.random.default_rng(3)
    a2 = rng.random(14)
    b2 = a2 + rng.normal(0.05, 0.2, 14)
    for kw in ({"wilcoxon_method": "exact"}, {"exact": True}):
        e = one(compare(tidy({"A": a2, "B": b2}), test="wilcoxon", alternative=alternative, **kw))
        ref = st.wilcoxon(b2 - a2, method="exact", alternative=alternative)
        assert e.p_value == pytest.approx(ref.pvalue, rel=1e-12)


@pytest.mark.parametrize("n", [5, 9, 12])
def test_one_sided_randomization_exact_matches_loop_over_all_flips(n):
    rng = np.random.default_rng(n)
    a = rng.random(n)
    b = a + rng.normal(0.05, 0.15, n)
    b[0] = a[0]  # a zero difference
    d = b - a
    flips = np.array(list(itertools.product([1.0, -1.0], repeat=n)))
    T = (flips * d).sum(axis=1)
    tol = 1e-9
    expected = {"greater": (T >= d.sum() - tol).mean(), "less": (T <= d.sum() + tol).mean(),
                "two-sided": (np.abs(T) >= abs(d.sum()) - tol).mean()}
    for alt, p in expected.items():
        r = one(compare(tidy({"A": a, "B": b}), test="randomization", alternative=alt))
        assert r.n_resamples == 2**n and r.p_value == pytest.approx(p, rel=1e-12) and r.p_value > 0


def test_one_sided_bootstrap_and_monte_carlo_randomization_by_hand():
    from evalframe.stats.resampling import bootstrap_means

    rng = np.random.default_rng(4)
    a = rng.random(40)
    b = a + rng.normal(0.02, 0.1, 40)
    d, B = (b - a)[:, None], 2_000
    qids = [f"q{i:02d}" for i in range(40)]  # rows in this order (compare sorts query ids)
    boot = bootstrap_means(d, n_resamples=B, seed=9)[:, 0]
    m = d.mean()
    for alt, count in (("greater", (boot - m >= m).sum()), ("less", (boot - m <= m).sum())):
        r = one(compare(tidy({"A": a, "B": b}, qids=qids), test="bootstrap",
                        alternative=alt, n_resamples=B, seed=9))
        assert r.p_value == (count + 1) / (B + 1)
        lo, hi = np.quantile(boot, [0.05, 0.95])
        assert (r.ci_low, r.ci_high) == ((lo, np.inf) if alt == "greater" else (-np.inf, hi))
    # Monte Carlo randomisation: never 0, and the two tails add up to 1 + P(T* = T) + 1/(B+1)
    g = one(compare(tidy({"A": a, "B": b}), test="randomization", alternative="greater",
                    n_resamples=B))
    l = one(compare(tidy({"A": a, "B": b}), test="randomization", alternative="less",
                    n_resamples=B))
    assert g.p_value >= 1 / (B + 1) and g.p_value + l.p_value == pytest.approx(1 + 1 / (B + 1))


def test_two_sided_default_unchanged_and_alternative_column():
    t = tidy(_systems(n_sys=3, n=20))
    for test in ("t", "wilcoxon", "sign", "randomization", "bootstrap"):
        default = compare(t, test=test, n_resamples=499)
        explicit = compare(t, test=test, n_resamples=499, alternative="two-sided")
        pd.testing.assert_frame_equal(default, explicit)
        assert (default.alternative == "two-sided").all()
        cols = list(default.columns)
        assert cols[cols.index("test") + 1] == "alternative"
    w_old = compare(t, test="wilcoxon", exact=True)
    pd.testing.assert_frame_equal(w_old, compare(t, test="wilcoxon", wilcoxon_method="exact"))
    pd.testing.assert_frame_equal(compare(t, test="wilcoxon"),
                                  compare(t, test="wilcoxon", wilcoxon_method="normal"))


def test_one_sided_holm_adjusts_one_sided_pvalues():
    t = tidy(_systems(n_sys=4, n=30))
    r = compare(t, baseline="s0", test="t", alternative="greater")
    np.testing.assert_array_equal(r.p_adjusted, adjust_pvalues(r.p_value.to_numpy(), "holm"))


def test_alternative_and_wilcoxon_method_errors():
    t = tidy({"A": [0.1, 0.2, 0.4], "B": [0.3, 0.1, 0.5]})
    with pytest.raises(ValueError, match=r"^compare: alternative must be one of \['two-sided', "
                                         r"'greater', 'less'\], got 'two_sided'$"):
        compare(t, alternative="two_sided")
    with pytest.raises(ValueError, match=r"^compare: wilcoxon_method must be one of "
                                         r"\['exact', 'normal'\], got 'approx'$"):
        compare(t, test="wilcoxon", wilcoxon_method="approx")
    with pytest.raises(ValueError, match=r"^compare: correction must be .*, got 'tukey'$"):
        compare(t, correction="tukey", alternative="less")


def test_one_sided_clustered_randomization_matches_loop_and_never_zero():
    rng = np.random.default_rng(21)
    n, G = 24, 8
    a = rng.random(n)
    b = a + rng.normal(0.04, 0.1, n)
    qids = [f"q{i:02d}" for i in range(n)]
    t = tidy({"A": a, "B": b}, qids=qids)
    t["topic"] = np.tile(np.arange(n) // (n // G), 2)
    S = np.bincount(np.arange(n) // (n // G), weights=b - a)
    T = (np.array(list(itertools.product([1.0, -1.0], repeat=G))) * S).sum(axis=1)
    for alt, p in (("greater", (T >= S.sum() - 1e-9).mean()), ("less", (T <= S.sum() + 1e-9).mean())):
        r = one(compare(t, test="randomization", cluster="topic", alternative=alt))
        assert r.n_resamples == 2**G and r.p_value == pytest.approx(p, rel=1e-12)
    # every difference positive, 60 questions, Monte Carlo: the smallest p is 1 / (B + 1), not 0
    big = tidy({"A": np.zeros(60), "B": np.linspace(0.1, 0.9, 60)})
    for alt in ("greater", "two-sided"):
        r = one(compare(big, test="randomization", alternative=alt, n_resamples=999))
        assert r.p_value == 1 / 1000


@pytest.mark.parametrize("value", [0.0, 1.0, 0.2])
def test_one_question_has_no_standard_error_whatever_its_value(value):
    per_q = pd.DataFrame({"system": "A", "query_id": ["q0"], "measure": "P@5", "value": [value]})
    for method in ("t", "normal"):
        got = summarize(per_q, method=method).iloc[0]
        assert got["n"] == 1 and np.isnan(got["se"]), (method, got)


@pytest.mark.parametrize("p", [[1.5, -0.2, 0.03], [0.2, 1.0000001], [-1e-9]])
def test_adjust_pvalues_refuses_values_outside_0_1(p):
    # was: [1, -0.6, 0.06] returned for [1.5, -0.2, 0.03] (issue 32)
    for method in ("holm", "bonferroni", "bh", "none"):
        with pytest.raises(ValueError, match=r"\[0, 1\]"):
            adjust_pvalues(p, method)
    assert np.isnan(adjust_pvalues([np.nan, 0.5], "holm")[0])  # NaN stays allowed


def test_compare_has_the_reports_significant_column():
    """stats.compare returns the `significant` column rep.comparisons has (issue 30)."""
    rng = np.random.default_rng(3)
    a = rng.uniform(0, 1, 40)
    t = pd.DataFrame({"system": ["a"] * 40 + ["b"] * 40 + ["c"] * 40,
                      "query_id": [f"q{i}" for i in range(40)] * 3, "measure": "AP",
                      "value": np.r_[a, np.clip(a + 0.2, 0, 1), a + rng.normal(0, 0.001, 40)]})
    for conf in (0.95, 0.999):
        c = compare(t, confidence=conf)
        assert c["significant"].tolist() == (c["p_adjusted"] < 1 - conf).tolist()
    assert c["significant"].any() and not c["significant"].all()


def test_threads_checked_by_summarize_and_compare():
    """``threads=`` of the resampling functions: an int >= 1, named with the caller."""
    from evalframe.errors import ParameterError
    t = pd.DataFrame({"system": ["a"] * 4 + ["b"] * 4, "query_id": list("wxyz") * 2,
                      "measure": "AP", "value": [.1, .2, .3, .4, .2, .4, .3, .6]})
    with pytest.raises(ParameterError, match=r"^summarize: threads must be an int >= 1, got 0"):
        summarize(t, method="bootstrap", threads=0)
    with pytest.raises(ParameterError, match=r"^compare: threads must be an int >= 1, got '2'"):
        compare(t, test="randomization", threads="2")
    one = compare(t, test="bootstrap", ci="bca", n_resamples=300, threads=1)
    pd.testing.assert_frame_equal(compare(t, test="bootstrap", ci="bca", n_resamples=300, threads=3), one,
                                  check_exact=True)


@pytest.mark.parametrize("threads", [1, 2, 4])
def test_map_draws_draws_in_the_calling_thread_in_order(threads):
    """The random stream is drawn where it is on one thread (the caller's, in order); the
    work of each chunk runs on the threads; results come back in the chunks' order."""
    import threading
    import time as _time
    from evalframe.stats.resampling import map_draws
    me = threading.get_ident()
    drawn_in, worked_in = [], set()

    def draws():
        for i in range(7):
            drawn_in.append(threading.get_ident())
            yield i

    def work(i):
        worked_in.add(threading.get_ident())
        _time.sleep(0.01 * (i % 3))  # finish out of order
        return i * i

    assert list(map_draws(work, draws(), threads=threads)) == [i * i for i in range(7)]
    assert drawn_in == [me] * 7
    assert (worked_in == {me}) == (threads == 1)
    assert list(map_draws(work, iter([3]), threads=threads)) == [9]  # one chunk: no thread needed
