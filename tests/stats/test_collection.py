"""stats.rank_correlation, asl_curve and discriminative_power against loops written from
the papers' definitions and scipy's paired t-test."""
from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

import evalframe as ef
from evalframe import stats


def loop_tau_ap(ref: list, est: list) -> float:
    n = len(ref)
    total = 0.0
    for i in range(1, n):
        correct = sum(ref.index(est[j]) < ref.index(est[i]) for j in range(i))
        total += correct / i
    return 2 / (n - 1) * total - 1


def loop_rbo_ext(s: list, t: list, p: float) -> float:
    k = len(s)
    x = [len(set(s[:d]) & set(t[:d])) for d in range(1, k + 1)]
    return x[-1] / k * p ** k + (1 - p) / p * sum(x[d - 1] / d * p ** d for d in range(1, k + 1))


def loop_tau(a: dict, b: dict) -> float:
    names = list(a)
    sign = [np.sign(a[x] - a[y]) * np.sign(b[x] - b[y]) for x, y in itertools.combinations(names, 2)]
    return sum(sign) / len(sign)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("p", [0.5, 0.9, 0.98])
def test_rank_correlation_matches_the_definitions(seed, p):
    rng = np.random.default_rng(seed)
    names = [f"s{i}" for i in range(int(rng.integers(2, 15)))]
    a = dict(zip(names, rng.normal(size=len(names))))
    b = dict(zip(names, np.array(list(a.values())) + rng.normal(size=len(names))))
    r = stats.rank_correlation(a, b, p=p).set_index("statistic")
    ra, rb = sorted(names, key=lambda s: -a[s]), sorted(names, key=lambda s: -b[s])
    assert r.loc["kendall_tau", "value"] == pytest.approx(loop_tau(a, b), abs=1e-12)
    assert r.loc["tau_ap", "value"] == pytest.approx(loop_tau_ap(ra, rb), abs=1e-12)
    assert r.loc["rbo", "value"] == pytest.approx(loop_rbo_ext(ra, rb, p), abs=1e-12)
    assert r.loc["kendall_tau", "p_value"] == pytest.approx(sps.kendalltau(list(a.values()), list(b.values())).pvalue)


def test_identical_rankings_score_one_and_reversed_minus_one():
    a = {"x": 3.0, "y": 2.0, "z": 1.0, "w": 0.0}
    same = stats.rank_correlation(a, a).set_index("statistic")["value"]
    assert same.tolist() == pytest.approx([1.0, 1.0, 1.0])
    rev = stats.rank_correlation(a, {k: -v for k, v in a.items()}).set_index("statistic")["value"]
    assert rev["kendall_tau"] == pytest.approx(-1.0) and rev["tau_ap"] == pytest.approx(-1.0)


def test_two_measures_of_one_per_question_table():
    cran = ef.datasets.load_cranfield()
    per_q = ef.evaluate(cran.runs, cran.qrels, ["AP", "nDCG@10"])
    r = stats.rank_correlation(per_q, per_q, measure="AP", measure_b="nDCG@10").set_index("statistic")
    means = per_q.groupby(["measure", "system"])["value"].mean()
    assert r.loc["kendall_tau", "value"] == pytest.approx(loop_tau(means["AP"].to_dict(), means["nDCG@10"].to_dict()))
    agg = ef.aggregate(per_q)  # an aggregate table gives the same answer
    r2 = stats.rank_correlation(agg, agg, measure="AP", measure_b="nDCG@10").set_index("statistic")
    assert r2["value"].tolist() == pytest.approx(r["value"].tolist())
    with pytest.raises(ValueError, match="holds several measures"):
        stats.rank_correlation(per_q, per_q)


@pytest.mark.parametrize("kwargs, message", [
    ({"p": 1.0}, "rank_correlation: p must be a float in \\(0, 1\\), got 1.0"),
])
def test_rank_correlation_parameter_errors(kwargs, message):
    with pytest.raises(ValueError, match=message):
        stats.rank_correlation({"a": 1, "b": 2}, {"a": 1, "b": 2}, **kwargs)


def test_rank_correlation_needs_the_same_systems():
    with pytest.raises(ValueError, match="same systems"):
        stats.rank_correlation({"a": 1, "b": 2}, {"a": 1, "c": 2})


def test_discriminative_power_and_asl_curve_match_scipy_t_tests():
    cran = ef.datasets.load_cranfield()
    per_q = ef.evaluate(cran.runs, cran.qrels, ["AP", "P@5"])
    curve = stats.asl_curve(per_q, test="t")
    power = stats.discriminative_power(per_q, test="t", alpha=0.05).set_index("measure")
    for m in ("AP", "P@5"):
        wide = per_q[per_q.measure == m].pivot(index="query_id", columns="system", values="value")
        pvals = sorted(sps.ttest_rel(wide[x], wide[y]).pvalue for x, y in itertools.combinations(wide.columns, 2))
        got = curve[curve.measure == m]
        assert got["p_value"].tolist() == pytest.approx(pvals, rel=1e-9)
        assert got["pair_rank"].tolist() == list(range(1, len(pvals) + 1))
        assert power.loc[m, "n_significant"] == sum(p < 0.05 for p in pvals)
        assert power.loc[m, "discriminative_power"] == pytest.approx(np.mean(np.array(pvals) < 0.05))
