"""Benchmark of evalframe.stats.compare against scipy per pair and ranx.

Workload: 10 systems x 10,000 questions (one measure), all 45 pairs, 10,000 resamples:
a randomisation (sign-flip) test and a bootstrap percentile interval of every
difference, in one compare() call. Target: < 10 s and < 2 GiB peak memory.

References (same B):
- scipy.stats.permutation_test(permutation_type='samples') and scipy.stats.bootstrap
  (percentile) called per pair, vectorised=True; timed on a few pairs, extrapolated x 45.
- ranx (if importable): the significance step of ranx.compare
  (ranx.statistical_tests.compute_statistical_significance, stat_test="fisher"),
  fed the same per-question scores, so metric computation is left out. ranx.compare
  tests every ordered pair (90 tests for 10 systems); the per-45-pairs figure halves it.

Run: ``.venv/bin/python benchmarks/bench_stats.py [--full]`` (one process; about 1.5 min,
--full about 7 min). evalframe is timed first, so its peak RSS excludes the references
(scipy.permutation_test alone peaks near 7 GiB).
"""
from __future__ import annotations

import resource
import sys
import time

import numpy as np
import pandas as pd

from evalframe.stats import compare

N_SYSTEMS, N_QUESTIONS, B = 10, 10_000, 10_000
SCIPY_PAIRS = 1  # pairs run through scipy (2 with --full), then extrapolated to 45
RANX_SYSTEMS = 4  # systems run through ranx (all 10 with --full), then extrapolated


def peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


def make_table(seed: int = 1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    difficulty = rng.beta(2, 5, N_QUESTIONS)
    frames = []
    for s in range(N_SYSTEMS):
        v = np.clip(difficulty + 0.005 * s + rng.normal(0, 0.1, N_QUESTIONS), 0, 1)
        frames.append(pd.DataFrame({"system": f"sys{s}", "query_id": np.arange(N_QUESTIONS).astype(str),
                                    "measure": "nDCG@10", "value": v}))
    return pd.concat(frames, ignore_index=True)


def main(full: bool = False) -> None:
    table = make_table()
    wide = table.pivot(index="query_id", columns="system", values="value")
    n_pairs = N_SYSTEMS * (N_SYSTEMS - 1) // 2
    print(f"workload: {N_SYSTEMS} systems x {N_QUESTIONS} questions, {n_pairs} pairs, B = {B}")

    t0 = time.perf_counter()
    res = compare(table, test="randomization", ci="bootstrap", n_resamples=B, seed=0)
    t_ef = time.perf_counter() - t0
    assert len(res) == n_pairs and res["p_value"].notna().all() and res["ci_low"].notna().all()
    mem = peak_mib()
    print(f"evalframe compare (randomisation + bootstrap CI, 45 pairs): {t_ef:.2f} s, "
          f"peak RSS {mem:.0f} MiB  [target < 10 s, < 2048 MiB]")

    from scipy import stats as st

    def mean_diff(x, y, axis=-1):
        return np.mean(x - y, axis=axis)

    def mean(x, axis=-1):
        return np.mean(x, axis=axis)

    pairs = [("sys0", "sys1"), ("sys2", "sys7")][: 2 if full else SCIPY_PAIRS]
    t0 = time.perf_counter()
    for a, b in pairs:
        st.permutation_test((wide[b].to_numpy(), wide[a].to_numpy()), mean_diff, vectorized=True,
                            permutation_type="samples", n_resamples=B, random_state=0)
    t_perm = (time.perf_counter() - t0) / len(pairs) * n_pairs
    t0 = time.perf_counter()
    for a, b in pairs:
        st.bootstrap(((wide[b] - wide[a]).to_numpy(),), mean, vectorized=True, n_resamples=B,
                     method="percentile", random_state=0)
    t_boot = (time.perf_counter() - t0) / len(pairs) * n_pairs
    t_scipy = t_perm + t_boot
    print(f"scipy per pair (timed on {len(pairs)} pairs, x {n_pairs / len(pairs):.1f}): "
          f"permutation_test {t_perm:.1f} s + bootstrap {t_boot:.1f} s = {t_scipy:.1f} s "
          f"-> evalframe is {t_scipy / t_ef:.1f}x faster")

    try:
        from ranx.statistical_tests import compute_statistical_significance
    except ImportError:
        print("ranx not importable: skipped")
        return
    names = list(wide.columns)
    scores = {s: {"nDCG@10": wide[s].to_numpy()} for s in names}
    compute_statistical_significance(names[:2], {s: {"m": np.ones(5)} for s in names[:2]},
                                     "fisher", 10, 0.05, 42)  # numba compile, not timed
    use = names if full else names[:RANX_SYSTEMS]
    t0 = time.perf_counter()
    compute_statistical_significance(use, {s: scores[s] for s in use}, "fisher", B, 0.05, 42)
    t_ranx = time.perf_counter() - t0
    ordered = len(use) * (len(use) - 1)
    t_ranx45 = t_ranx / ordered * n_pairs
    print(f"ranx fisher (numba; {len(use)} systems = {ordered} ordered pairs, as ranx.compare runs "
          f"them): {t_ranx:.1f} s; per 45 pairs {t_ranx45:.1f} s (randomisation only, no CI) "
          f"-> evalframe is {t_ranx45 / t_ef:.1f}x faster; ranx.compare itself tests all "
          f"{N_SYSTEMS * (N_SYSTEMS - 1)} ordered pairs, so {2 * t_ranx45 / t_ef:.1f}x")
    print(f"final peak RSS of the process {peak_mib():.0f} MiB")


if __name__ == "__main__":
    main(full="--full" in sys.argv)
