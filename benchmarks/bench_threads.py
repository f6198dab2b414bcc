"""evaluate() on 1 thread and on N, interleaved, with each call's user and system CPU time.

Issue 31's goal: at least 1.6x faster with 2 threads than with 1 at 7,000 x 1,000 and
100,000 x 100 (``bench_core.make_case``'s realistic data).  Each round runs one call per
thread count, in turn, in one process; the tables are checked identical.  Printed per
call: wall, user and system seconds (``os.times``), then per thread count the median and
the fastest wall time.

The system time is the kernel's: page faults on fresh arrays, and, where numpy asks for
transparent huge pages and the kernel compacts memory to provide them
(``/sys/kernel/mm/transparent_hugepage/defrag`` = ``madvise``), stalls after another call
fragmented memory.  A single-thread call that follows a threaded one can take up to 1.6x
as long for that alone (measured on the 2-core machine of issue 31), so compare the
system times before reading a ratio; ``NUMPY_MADVISE_HUGEPAGE=0`` in the environment
gives steadier, slightly slower calls.

    python benchmarks/bench_threads.py [--cases 7000x1000 100000x100] [--threads 2] [--repeat 5]
                                       [--shuffled] [--ids str|int|url] [--churn]

``--churn`` runs pytrec_eval end to end on the same run before every call (its dicts and
results built and dropped, as ``bench_core`` does between evalframe's calls; a notebook's
other work does the like): the memory it frees is reused by the main thread, while each
worker thread's glibc arena faults fresh pages in.  Measured at 100,000 x 100 (2 cores,
``--repeat 3 --churn``): 1 thread 2.13 s (0.06 s in the kernel), 2 threads 2.34 s (1.7-2.0 s
in the kernel), 0.91x; with ``MALLOC_ARENA_MAX=1`` in the environment (one arena for every
thread) 1.95 s and 1.32 s (0.04-0.09 s in the kernel), 1.48x.
"""
from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import time
import warnings
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_core import EF_MEASURES, make_case, run_pytrec_eval  # noqa: E402

import evalframe as ef  # noqa: E402


def timed(run, qrels, threads: int) -> tuple[pd.DataFrame, float, float, float]:
    """One call: its table, and its wall, user and system seconds."""
    gc.collect()
    before, t0 = os.times(), time.perf_counter()
    table = ef.evaluate(run, qrels, EF_MEASURES, missing="drop", threads=threads)
    wall, after = time.perf_counter() - t0, os.times()
    return table, wall, after.user - before.user, after.system - before.system


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", nargs="+", default=["7000x1000", "100000x100"])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--shuffled", action="store_true")
    ap.add_argument("--ids", choices=["str", "int", "url"], default="str")
    ap.add_argument("--churn", action="store_true", help="run pytrec_eval end to end on the same run before every call")
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    counts = (1, args.threads)
    for case in args.cases:
        n_q, depth = map(int, case.split("x"))
        run, qrels = make_case(n_q, depth, ids=args.ids, shuffled=args.shuffled)
        ef.evaluate(run.head(1000), qrels, EF_MEASURES, missing="drop")  # imports and first-use costs
        print(f"\n{case} ({len(run):,} rows, {args.ids} ids, {'shuffled' if args.shuffled else 'grouped'}"
              f"{', churned' if args.churn else ''})")
        walls: dict[int, list[float]] = {t: [] for t in counts}
        tables = {}
        for _ in range(args.repeat):  # interleaved: 1 thread, then N, each round
            for t in counts:
                if args.churn:
                    tables.pop(t, None)  # not held through the churn
                    run_pytrec_eval(run, qrels)  # its dicts and results built and dropped
                tables[t], wall, user, system = timed(run, qrels, t)
                walls[t].append(wall)
                print(f"  threads={t}: wall {wall:.3f} s  user {user:.2f} s  system {system:.2f} s", flush=True)
        pd.testing.assert_frame_equal(tables[1], tables[args.threads])
        med = {t: statistics.median(v) for t, v in walls.items()}
        best = {t: min(v) for t, v in walls.items()}
        print(f"  median: 1 thread {med[1]:.3f} s, {args.threads} threads {med[args.threads]:.3f} s -> "
              f"{med[1] / med[args.threads]:.2f}x; fastest: {best[1]:.3f} s, {best[args.threads]:.3f} s -> "
              f"{best[1] / best[args.threads]:.2f}x (tables identical)")


if __name__ == "__main__":
    main()
