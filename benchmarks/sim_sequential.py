"""Anytime-valid vs peeked fixed-n intervals, at a larger scale than the test.

For three kinds of paired differences with a known mean (graded measure, binary measure,
continuous measure), 2,000 seeded streams of 1,000 questions each: the share of streams
whose 95% interval ever excludes the true mean, looked at after every question from 10 on,
for the betting confidence sequence (evalframe.stats.sequential.hedged_bounds) and for the
fixed-n t interval; and the price: the mean half-width of each at n = 100 and n = 1,000
(the sequence's on the first 200 streams with the default grid of 1,000 points, as
``sequential_compare`` computes it; the coverage columns use a grid of 200, whose wider
steps only make the sequence more conservative).

    PYTHONPATH=. nice -n 5 python benchmarks/sim_sequential.py

Takes about two minutes on one core.
"""
from __future__ import annotations

import time

import numpy as np
from scipy import stats as sps

from evalframe.stats.sequential import hedged_bounds

ALPHA, STREAMS, N, GRID = 0.05, 2000, 1000, 200


def streams(kind: str, rng):
    if kind == "graded (5 levels)":
        vals, p = np.array([-1.0, -0.5, 0.0, 0.5, 1.0]), [0.05, 0.15, 0.5, 0.2, 0.1]
        return rng.choice(vals, size=(STREAMS, N), p=p), float(vals @ p)
    if kind == "binary (Success@k)":
        a = rng.random((STREAMS, N)) < 0.5
        flip = rng.random((STREAMS, N)) < 0.2       # b differs from a on 20% of questions
        b = np.where(flip, rng.random((STREAMS, N)) < 0.6, a)
        return b.astype(float) - a, 0.2 * (0.6 - 0.5)
    a = rng.beta(2, 5, (STREAMS, N))
    b = np.clip(a + rng.normal(0.02, 0.1, (STREAMS, N)), 0, 1)
    big = rng.beta(2, 5, 2_000_000)   # the clipped mean by Monte Carlo (sd of the estimate ~1e-4)
    truth = float(np.mean(np.clip(big + rng.normal(0.02, 0.1, big.size), 0, 1) - big))
    return b - a, truth


def main():
    rng = np.random.default_rng(0)
    print(f"{STREAMS} streams x {N} questions, alpha = {ALPHA}, grid {GRID}")
    print(f"{'differences':<22} {'CS ever misses':>14} {'t ever misses':>14} {'t at 50,100..':>14} "
          f"{'CS hw@100':>10} {'t hw@100':>9} {'CS hw@1000':>11} {'t hw@1000':>10}")
    for kind in ("graded (5 levels)", "binary (Success@k)", "continuous (clipped)"):
        t0 = time.time()
        d, truth = streams(kind, rng)
        lo, hi = hedged_bounds((d + 1) / 2, ALPHA, grid=GRID)
        lo, hi = 2 * lo - 1, 2 * hi - 1
        cs_miss = ((lo > truth) | (hi < truth))[:, 9:].any(axis=1).mean()
        n = np.arange(1, N + 1)
        mean = np.cumsum(d, axis=1) / n
        var = np.maximum((np.cumsum(d ** 2, axis=1) - n * mean ** 2) / np.maximum(n - 1, 1), 0)
        half = sps.t.ppf(1 - ALPHA / 2, np.maximum(n - 1, 1)) * np.sqrt(var / n)
        miss = np.abs(mean - truth) > half
        t_miss = miss[:, 9:].any(axis=1).mean()
        t_sparse = miss[:, 49::50].any(axis=1).mean()
        fine_lo, fine_hi = hedged_bounds((d[:200] + 1) / 2, ALPHA, grid=1000)
        fine_lo, fine_hi = 2 * fine_lo - 1, 2 * fine_hi - 1
        hw = lambda a, b, i: float(np.mean((b[:, i] - a[:, i]) / 2))  # noqa: E731
        print(f"{kind:<22} {cs_miss:>14.4f} {t_miss:>14.4f} {t_sparse:>14.4f} {hw(fine_lo, fine_hi, 99):>10.4f} "
              f"{float(np.mean(half[:, 99])):>9.4f} {hw(fine_lo, fine_hi, N - 1):>11.4f} {float(np.mean(half[:, N - 1])):>10.4f}"
              f"   ({time.time() - t0:.0f} s)")


if __name__ == "__main__":
    main()
