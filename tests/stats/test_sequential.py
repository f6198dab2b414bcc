"""Anytime-valid statistics (evalframe.stats.sequential): betting confidence sequences,
e-values, anytime p-values, e-BH.

Oracles: confseq 0.0.11's ``hedged_cs`` (values written out below, produced by
``benchmarks/confseq_reference.py``), a slow loop over the paper's formulas, and
simulated streams with a known mean.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from evalframe.errors import EvalframeInputError
from evalframe.stats import confidence_sequence, e_bh, sequential_compare
from evalframe.stats.sequential import hedged_bounds, hedged_capital


def _streams():
    x1 = ((np.arange(60) * 37) % 101) / 100
    x2 = 0.3 + 0.4 * (((np.arange(80) * 13) % 29) / 28) ** 2
    return x1, x2


# confseq 0.0.11 betting.hedged_cs(x, alpha, breaks=1000, running_intersection=True),
# bounds at n = 10, 20, ... (benchmarks/confseq_reference.py; equal at every n to 1e-16)
CONFSEQ = {
    ("x1", 0.05): ([0.186, 0.287, 0.326, 0.361, 0.375, 0.383], [0.748, 0.66, 0.636, 0.626, 0.61, 0.602]),
    ("x1", 0.1): ([0.212, 0.306, 0.34, 0.372, 0.385, 0.392], [0.717, 0.637, 0.617, 0.611, 0.597, 0.59]),
    ("x2", 0.05): ([0.213, 0.296, 0.335, 0.352, 0.37, 0.377, 0.384, 0.389],
                   [0.695, 0.597, 0.556, 0.529, 0.516, 0.504, 0.495, 0.49]),
    ("x2", 0.1): ([0.237, 0.315, 0.35, 0.364, 0.38, 0.386, 0.391, 0.395],
                  [0.66, 0.572, 0.537, 0.513, 0.502, 0.493, 0.486, 0.482]),
}


@pytest.mark.parametrize("key", list(CONFSEQ))
def test_agrees_with_confseq(key):
    x = dict(zip(("x1", "x2"), _streams()))[key[0]]
    lo, hi = hedged_bounds(x[None, :], key[1], grid=1000)
    want_lo, want_hi = CONFSEQ[key]
    np.testing.assert_allclose(lo[0, 9::10], want_lo, atol=1e-9)
    np.testing.assert_allclose(hi[0, 9::10], want_hi, atol=1e-9)
    # confseq's one-sided lower bound (theta = 1) at 0.05 is its two-sided one at 0.1
    if key[1] == 0.1:
        lo1, hi1 = hedged_bounds(x[None, :], 0.05, grid=1000, alternative="greater")
        np.testing.assert_allclose(lo1[0, 9::10], want_lo, atol=1e-9)
        assert (hi1 == 1).all()


def _slow_capital(x, m, alpha_bet):
    """K+_t(m), K-_t(m) by a loop over the paper's formulas (Waudby-Smith and Ramdas 2024)."""
    kp, km, out_p, out_m = 1.0, 1.0, [], []
    s, ss = 0.0, 0.0
    for t in range(1, len(x) + 1):
        var_prev = (0.25 + ss) / t  # sigma^2_{t-1}: prior 1/4 + t - 1 values, over t
        lam = math.sqrt(2 * math.log(1 / alpha_bet) / (var_prev * t * math.log(1 + t)))
        lp = min(lam, 0.5 / m) if m > 0 else lam
        lm = min(lam, 0.5 / (1 - m)) if m < 1 else lam
        kp *= 1 + lp * (x[t - 1] - m)
        km *= 1 - lm * (x[t - 1] - m)
        out_p.append(kp)
        out_m.append(km)
        s += x[t - 1]
        mu_t = (0.5 + s) / (t + 1)
        ss += (x[t - 1] - mu_t) ** 2
    return np.array(out_p), np.array(out_m)


def test_matches_a_slow_loop():
    x = _streams()[1][:40]
    alpha, grid = 0.05, 100
    ms = np.arange(grid + 1) / grid
    caps = [_slow_capital(x, m, alpha / 2) for m in ms]
    inside = np.array([np.maximum(p, q) / 2 <= 1 / alpha for p, q in caps])  # (grid, n)
    lo = np.array([max(0, ms[np.flatnonzero(inside[:, t])[0]] - 1 / grid) for t in range(len(x))])
    hi = np.array([min(1, ms[np.flatnonzero(inside[:, t])[-1]] + 1 / grid) for t in range(len(x))])
    got_lo, got_hi = hedged_bounds(x[None, :], alpha, grid=grid)
    np.testing.assert_allclose(got_lo[0], np.maximum.accumulate(lo), atol=1e-12)
    np.testing.assert_allclose(got_hi[0], np.minimum.accumulate(hi), atol=1e-12)
    lp, lm = hedged_capital(x[None, :], np.array([0.37]), alpha / 2)
    p, q = _slow_capital(x, 0.37, alpha / 2)
    np.testing.assert_allclose(np.exp(lp[0]), p, rtol=1e-10)
    np.testing.assert_allclose(np.exp(lm[0]), q, rtol=1e-10)


def test_coverage_at_every_step_vs_peeking_at_the_t_interval():
    """2,000 seeded streams of paired differences with a known mean, looked at after
    every question: the betting sequence ever excludes the truth in at most alpha of
    them (Monte Carlo slack 3 se); the fixed-n t interval, peeked at each step, far more.

    Measured (seed 0, 2,000 streams, 200 questions, alpha = 0.05): the sequence on its
    grid ever excludes the truth in 0.0105 of the streams (the exact capital at the true
    mean ever >= 1/alpha: 0.0195); the 95% t interval peeked at every n from 10 to 200
    in 0.327 (peeked at n = 10, 20, ..., 50 only: 0.132)."""
    rng = np.random.default_rng(0)
    vals, prob = np.array([-1.0, -0.5, 0.0, 0.5, 1.0]), [0.05, 0.15, 0.5, 0.2, 0.1]
    truth = float(vals @ prob)  # 0.075
    d = rng.choice(vals, size=(2000, 200), p=prob)
    x, mu = (d + 1) / 2, (truth + 1) / 2
    alpha = 0.05
    lo, hi = hedged_bounds(x, alpha, grid=100)
    ever_cs = ((lo > mu) | (hi < mu)).any(axis=1).mean()
    lp, lm = hedged_capital(x, np.full(len(x), mu), alpha / 2)
    ever_capital = ((np.maximum(lp, lm) - math.log(2)) >= math.log(1 / alpha)).any(axis=1).mean()
    n = np.arange(1, d.shape[1] + 1)
    mean = np.cumsum(d, axis=1) / n
    var = (np.cumsum(d ** 2, axis=1) - n * mean ** 2) / np.maximum(n - 1, 1)
    half = sps.t.ppf(1 - alpha / 2, np.maximum(n - 1, 1)) * np.sqrt(np.maximum(var, 0) / n)
    miss = np.abs(mean - truth) > half
    ever_t = miss[:, 9:].any(axis=1).mean()              # every n from 10 to 200
    ever_t_50 = miss[:, 9:50:10].any(axis=1).mean()      # n = 10, 20, ..., 50
    slack = 3 * math.sqrt(alpha * (1 - alpha) / len(d))
    assert ever_cs <= alpha + slack and ever_capital <= alpha + slack
    assert ever_cs <= ever_capital  # the grid widens outwards
    assert ever_t > 0.25 and ever_t_50 > 0.08
    assert (ever_cs, ever_capital, round(ever_t, 4), round(ever_t_50, 4)) == (0.0105, 0.0195, 0.327, 0.132)


def _pairs(diff, n=400, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.uniform(0, 0.6, n)
    b = np.clip(a + diff + rng.normal(0, 0.1, n), 0, 1)
    return pd.DataFrame({"system": ["base"] * n + ["cand"] * n,
                         "query_id": [f"q{i}" for i in range(n)] * 2,
                         "measure": "nDCG@10", "value": np.r_[a, b]})


def test_sequential_compare_agrees_with_its_sequence_and_capital():
    t = _pairs(0.05)
    r = sequential_compare(t, baseline="base")
    assert r.loc[0, "system_b"] == "cand" and r.loc[0, "n"] == 400
    d = t.value.to_numpy()[400:] - t.value.to_numpy()[:400]
    assert r.loc[0, "diff"] == pytest.approx(d.mean())
    lo, hi = hedged_bounds(((d + 1) / 2)[None, :], 0.05)
    assert r.loc[0, "ci_low"] == pytest.approx(2 * lo[0, -1] - 1)
    assert r.loc[0, "ci_high"] == pytest.approx(2 * hi[0, -1] - 1)
    p, q = _slow_capital((d + 1) / 2, 0.5, 0.025)
    k = np.maximum(p, q) / 2
    assert r.loc[0, "e_value"] == pytest.approx(k[-1], rel=1e-8)
    assert r.loc[0, "p_value"] == pytest.approx(min(1, 1 / k.max()), rel=1e-8)
    assert r.loc[0, "ci_low"] > 0 and r.loc[0, "p_value"] < 0.05 and r.loc[0, "significant"]
    # one-sided non-inferiority: H0 diff <= -0.02 rejected; its lower bound is above -0.02
    g = sequential_compare(t, baseline="base", null=-0.02, alternative="greater")
    assert g.loc[0, "ci_high"] == 1.0 and g.loc[0, "ci_low"] > -0.02 and g.loc[0, "p_value"] < 0.05
    # no difference: the null stays inside, nothing significant
    z = sequential_compare(_pairs(0.0, seed=3), baseline="base")
    assert z.loc[0, "ci_low"] < 0 < z.loc[0, "ci_high"] and not z.loc[0, "significant"]


def test_question_order_table_or_seeded_random():
    t = _pairs(0.05, n=120)
    rev = t.iloc[::-1].reset_index(drop=True)
    a = confidence_sequence(t, steps=True)
    b = confidence_sequence(rev, steps=True)
    last = lambda r: r.groupby("system").tail(1).set_index("system")  # noqa: E731
    assert not np.allclose(a.ci_low.to_numpy(), b.ci_low.to_numpy())  # the order matters
    pd.testing.assert_series_equal(last(a)["mean"], last(b)["mean"].loc[["base", "cand"]])
    r1 = confidence_sequence(t, order="random", seed=4)
    r2 = confidence_sequence(rev, order="random", seed=4)
    pd.testing.assert_frame_equal(r1, r2.iloc[::-1].reset_index(drop=True))  # the seed alone orders
    assert len(a) == 240 and a.n.max() == 120 and (a.confidence == 0.95).all()


def test_bounds_from_the_measure_and_refusals():
    t = _pairs(0.0, n=50)
    with pytest.raises(EvalframeInputError, match="no known range"):
        confidence_sequence(t.assign(measure="NumRet"))
    with pytest.raises(EvalframeInputError, match="no known range"):
        sequential_compare(t.assign(measure="DCG@10"))
    r = confidence_sequence(t.assign(measure="DCG@10", value=t.value * 10), bounds=(0, 10))
    assert (r.ci_low >= 0).all() and (r.ci_high <= 10).all()
    with pytest.raises(EvalframeInputError, match="outside"):
        confidence_sequence(t.assign(value=t.value * 2))
    with pytest.raises(ValueError, match="bounds must be"):
        confidence_sequence(t, bounds=(1, 0))
    with pytest.raises(ValueError, match="order must be"):
        confidence_sequence(t, order="shuffle")


def test_e_bh_is_its_definition():
    rng = np.random.default_rng(1)
    for _ in range(50):
        e = rng.exponential(20, rng.integers(1, 12))
        alpha = 0.1
        k = len(e)
        ks = [j for j in range(1, k + 1) if np.sort(e)[::-1][j - 1] >= k / (alpha * j)]
        want = np.zeros(k, dtype=bool)
        if ks:
            want[np.argsort(-e, kind="stable")[:max(ks)]] = True
        np.testing.assert_array_equal(e_bh(e, alpha), want)
    with pytest.raises(ValueError):
        e_bh([-1.0])


@pytest.mark.parametrize("alternative,null,rejected", [
    ("greater", 1.5, False),   # H0: E[d] <= 1.5 holds for every difference of [0, 1] values
    ("greater", -1.5, True),   # H0: E[d] <= -1.5 cannot hold
    ("less", -1.5, False),
    ("less", 1.5, True),
    ("two-sided", 1.5, True),
])
def test_a_null_outside_the_range_of_differences_is_certain_or_impossible(alternative, null, rejected):
    rng = np.random.default_rng(0)
    a = rng.uniform(0, 1, 50)
    b = np.clip(a + 0.1, 0, 1)
    t = pd.DataFrame({"system": ["A"] * 50 + ["B"] * 50, "query_id": [f"q{i}" for i in range(50)] * 2,
                      "measure": "nDCG@10", "value": np.r_[a, b]})
    r = sequential_compare(t, baseline="A", alternative=alternative, null=null)
    assert bool(r.significant[0]) is rejected
    assert r.p_value[0] == (0.0 if rejected else 1.0)
