"""Coverage and level of the comparisons' intervals and tests, by simulation (issue 33).

Two tables, each from seeded simulations of per-question tables whose true mean
differences are known (computed by Gauss-Hermite quadrature, not by simulation):

1. Simultaneous coverage: P(every one of the m adjusted intervals covers its true
   difference), m systems against a baseline, n questions, ``compare(...,
   adjusted_ci=True)`` with Holm's correction (Bonferroni-simultaneous intervals at level
   1 - 0.05 / m), for
   - ``old``: the report's default before issue 33, the percentile bootstrap
     (``test="randomization", ci="bootstrap"``);
   - ``rand``: the interval that inverts the randomisation test
     (``test="randomization"``, whose default ``ci`` is now ``"randomization"``);
   - ``new(t)``: the report's default now, the t interval of the t-test (``test="t"``).
2. Clustered designs: G clusters of questions with a shared cluster effect; the level
   (rejection rate under H0 at alpha 0.05) of the cluster t-test, the cluster
   randomisation test and the cluster bootstrap (shift) test, and the coverage of the
   95% interval each gives by default (t: cluster-robust t; randomisation: its
   inversion; bootstrap: cluster percentile bootstrap) when the systems differ.

Scenarios: ``P@10``, P@10-like values (Binomial(10, p) / 10 with logit p = question
ease + system effect + noise: discrete, bounded, many ties) and ``RR@10``, reciprocal
rank of the first relevant document at a geometric rank (cut at 10; skewed, many 0s).

Run one part at a time (each about 3-11 minutes on one core; ``--quick`` a tenth)::

    PYTHONPATH=. nice -n 10 python benchmarks/sim_coverage.py P@10
    PYTHONPATH=. nice -n 10 python benchmarks/sim_coverage.py RR@10
    PYTHONPATH=. nice -n 10 python benchmarks/sim_coverage.py clusters

The output (with the seeds) is in docs/user_guide/statistics.md.
"""
from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import pandas as pd

from evalframe.stats import compare

ALPHA = 0.05
SD_EASE, SD_NOISE = 1.5, 0.7
#: Gauss-Hermite nodes for E[f(Z)], Z ~ N(0, 1)
_X, _W = np.polynomial.hermite_e.hermegauss(80)
_W = _W / _W.sum()


def expit(x):
    return 1 / (1 + np.exp(-x))


def mean_value(scenario: str, beta: float, extra_var: float = 0.0) -> float:
    """E[value] of a system with effect beta (exact up to quadrature); ``extra_var``: the
    variance of further normal terms on its logit."""
    p = expit(np.sqrt(SD_EASE ** 2 + SD_NOISE ** 2 + extra_var) * _X + beta)
    if scenario == "P@10":
        return float(_W @ p)
    r = np.arange(1, 11)
    rr = (p[:, None] * (1 - p[:, None]) ** (r - 1) / r).sum(axis=1)
    return float(_W @ rr)


def draw(scenario: str, betas: np.ndarray, n: int, rng: np.random.Generator,
         ease: np.ndarray | None = None) -> np.ndarray:
    """(n questions x systems) values."""
    if ease is None:
        ease = rng.normal(0, SD_EASE, n)
    p = expit(ease[:, None] + betas[None, :] + rng.normal(0, SD_NOISE, (n, betas.size)))
    if scenario == "P@10":
        return rng.binomial(10, p) / 10
    rank = rng.geometric(p)
    return np.where(rank <= 10, 1.0 / rank, 0.0)


def long_table(V: np.ndarray, clusters: np.ndarray | None = None) -> pd.DataFrame:
    n, s = V.shape
    t = pd.DataFrame({"system": np.repeat([f"s{j}" for j in range(s)], n),
                      "query_id": np.tile([f"q{i}" for i in range(n)], s),
                      "measure": "m", "value": V.T.ravel()})
    if clusters is not None:
        t["topic"] = np.tile(clusters, s).astype(str)
    return t


#: old: report()'s comparisons before issue 33 (randomisation test, percentile bootstrap
#: intervals); rand: the randomisation test with the interval inverting it; new (t):
#: report()'s default now, the t-test with its t interval.
METHODS = {"old": dict(test="randomization", ci="bootstrap"),
           "rand": dict(test="randomization"),
           "new(t)": dict(test="t")}


def simultaneous(scenario: str, n: int, m: int, reps: int, seed: int, B: int) -> dict[str, float]:
    """P(all m adjusted intervals cover) for each method."""
    betas = np.r_[0.0, np.linspace(-0.3, 0.5, m)]
    truth = np.array([mean_value(scenario, b) for b in betas[1:]]) - mean_value(scenario, 0.0)
    rng = np.random.default_rng(seed)
    hits = dict.fromkeys(METHODS, 0)
    for rep in range(reps):
        t = long_table(draw(scenario, betas, n, rng))
        for name, kw in METHODS.items():
            c = compare(t, baseline="s0", correction="holm", adjusted_ci=True,
                        n_resamples=B, seed=rep, **kw)
            truth_of = truth[c["system_b"].str[1:].astype(int).to_numpy() - 1]
            hits[name] += bool(((c["ci_low_adjusted"] <= truth_of)
                                & (truth_of <= c["ci_high_adjusted"])).all())
    return {k: v / reps for k, v in hits.items()}


def clustered(G: int, reps: int, seed: int, B: int, effect: float) -> dict[str, float]:
    """Rejection rate (effect 0) or coverage of the default interval (effect != 0) of the
    three clustered tests; P@10 scenario, clusters of 2..8 questions sharing a cluster
    effect (sd 1 on the logit scale) on both systems and on their difference (sd 0.5)."""
    betas = np.array([0.0, effect])
    truth = mean_value("P@10", effect, 0.5 ** 2) - mean_value("P@10", 0.0) if effect else 0.0
    rng = np.random.default_rng(seed)
    out = {"t": 0, "randomization": 0, "bootstrap": 0}
    for rep in range(reps):
        sizes = rng.integers(2, 9, G)
        cl = np.repeat(np.arange(G), sizes)
        n = cl.size
        ease = rng.normal(0, 1.0, G)[cl] + rng.normal(0, np.sqrt(SD_EASE ** 2 - 1.0), n)
        # a cluster-level system x cluster interaction: questions of a cluster move together
        inter = rng.normal(0, 0.5, G)[cl]
        p = expit(ease[:, None] + betas[None, :] + rng.normal(0, SD_NOISE, (n, 2))
                  + np.c_[np.zeros(n), inter])
        V = rng.binomial(10, p) / 10
        if not effect:  # H0 exactly: the two systems exchangeable within each cluster
            V = np.where(rng.random(G)[cl, None] < 0.5, V, V[:, ::-1])
        t = long_table(V, cl)
        for test in out:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                c = compare(t, baseline="s0", test=test, cluster="topic", n_resamples=B,
                            seed=rep).iloc[0]
            if effect:
                out[test] += bool(c.ci_low <= truth <= c.ci_high)
            else:
                out[test] += bool(c.p_value < ALPHA)
    return {k: v / reps for k, v in out.items()}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("part", choices=["P@10", "RR@10", "clusters"],
                    help="a scenario of the simultaneous-coverage table, or the clustered table")
    ap.add_argument("--quick", action="store_true", help="a tenth of the simulations")
    args = ap.parse_args()
    div = 10 if args.quick else 1
    B = 2000
    t0 = time.perf_counter()
    if args.part != "clusters":
        print(f"Simultaneous coverage of the adjusted intervals, {args.part} (Holm family: "
              f"Bonferroni-simultaneous, target 0.95); n_resamples = {B}")
        print(f"{'scenario':9} {'n':>4} {'m':>3} {'reps':>5} {'seed':>6} "
              + " ".join(f"{k:>6}" for k in METHODS) + "   (MC sd ~ sqrt(.95 .05 / reps))")
        for n in (15, 30, 100, 300):
            for m in (5, 10):
                reps = (600 if n <= 30 else 250) // div
                seed = 1000 * n + m + (0 if args.part == "P@10" else 7)
                cov = simultaneous(args.part, n, m, reps, seed, B)
                print(f"{args.part:9} {n:4d} {m:3d} {reps:5d} {seed:6d} "
                      + " ".join(f"{cov[k]:6.3f}" for k in METHODS), flush=True)
    else:
        print("Clustered designs (P@10, clusters of 2-8 questions): level at alpha 0.05 under H0, "
              f"and coverage of the default 95% interval with effect 0.4 on the logit scale; "
              f"n_resamples = {B}")
        print(f"{'G':>3} {'what':9} {'reps':>5} {'seed':>5} {'t':>6} {'rand.':>6} {'boot.':>6}")
        for G in (10, 30):
            for what, effect in (("level", 0.0), ("coverage", 0.4)):
                reps = 1000 // div
                seed = 7 * G + (1 if effect else 0)
                r = clustered(G, reps, seed, B, effect)
                print(f"{G:3d} {what:9} {reps:5d} {seed:5d} {r['t']:6.3f} "
                      f"{r['randomization']:6.3f} {r['bootstrap']:6.3f}", flush=True)
    print(f"({time.perf_counter() - t0:.0f} s)")


if __name__ == "__main__":
    main()
