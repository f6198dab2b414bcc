"""Cost grows with rows, not with the number of questions (issue 11).

The same 5,000,000 run rows as 1,000,000 questions x 5 documents and as
50,000 questions x 100 documents, timed interleaved in one process (ratios are
robust to load, absolute seconds are not):

    nice -n 5 .venv/bin/python benchmarks/bench_per_question.py
    nice -n 5 .venv/bin/python benchmarks/bench_per_question.py --repeat 3 --profile /tmp/pq.prof

Data: string ids (questions ``q…``, documents ``D…`` drawn from a pool of
8.8M), graded labels 0-3, score ties (scores rounded to one decimal in a tenth
of the questions), about half of the retrieved rows judged plus a tenth as
many judged rows never retrieved, so both cases also have the same number of
golden-set rows.  Timed: ``evaluate()``, ``diagnostics()``,
``evaluate_with_diagnostics()`` and ``aggregate()`` of the per-question table;
the closing line is the ratio of the evaluate() medians (target <= 1.5), in
wall time and in this process's CPU time (which a loaded machine disturbs less).
"""
from __future__ import annotations

import argparse
import cProfile
import gc
import statistics
import time
import warnings

import numpy as np
import pandas as pd

import evalframe as ef
from evalframe.evaluation import evaluate_with_diagnostics

POOL = 8_841_823
MEASURES = ["R@5", "R@10", "R@100", "P@5", "RR", "nDCG@10", "AP"]


def make_case(n_q: int, depth: int, seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(run, qrels) with ``n_q * depth`` run rows and about ``0.6 * n_q * depth`` golden-set rows."""
    rng = np.random.default_rng(seed)
    n = n_q * depth
    q = np.repeat(np.arange(n_q), depth)
    doc = rng.integers(0, POOL, n)
    while True:  # a document retrieved twice for a question is redrawn
        dup = pd.Series(q.astype(np.int64) * POOL + doc).duplicated().to_numpy()
        if not dup.any():
            break
        doc[dup] = rng.integers(0, POOL, int(dup.sum()))
    label = rng.choice([0, 0, 1, 1, 2, 3], n)
    score = 10 + 0.8 * label + rng.normal(0, 1, n)
    tied = np.repeat(rng.random(n_q) < 0.1, depth)
    score[tied] = np.round(score[tied], 1)
    judged = rng.random(n) < 0.5
    n_extra = n // 10  # judged, never retrieved (a pool offset no retrieved id uses)
    eq = rng.integers(0, n_q, n_extra)
    qrels = pd.DataFrame({"query_id": np.concatenate([q[judged], eq]),
                          "doc_id": np.concatenate([doc[judged], POOL + np.arange(n_extra)]),
                          "relevance": np.concatenate([label[judged], rng.choice([0, 1, 2, 3], n_extra)])})
    run = pd.DataFrame({"query_id": q, "doc_id": doc, "score": score})
    for df in (run, qrels):
        df["query_id"] = "q" + df["query_id"].astype(str)
        df["doc_id"] = "D" + df["doc_id"].astype(str)
    return run, qrels


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=5_000_000)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--profile", help="write a cProfile of one evaluate() on the many-question case here")
    args = ap.parse_args()
    warnings.simplefilter("ignore", ef.EvalframeWarning)
    cases = {"many": (args.rows // 5, 5), "few": (args.rows // 100, 100)}
    data = {name: make_case(n_q, d, seed=i) for i, (name, (n_q, d)) in enumerate(cases.items())}
    for name, (run, qrels) in data.items():
        print(f"{name}: {cases[name][0]:,} x {cases[name][1]} = {len(run):,} run rows, {len(qrels):,} golden-set rows")
    steps = {
        "evaluate": lambda r, q: ef.evaluate(r, q, MEASURES),
        "diagnostics": lambda r, q: ef.diagnostics(r, q),
        "evaluate_with_diagnostics": lambda r, q: evaluate_with_diagnostics(r, q, MEASURES),
    }
    per_q = {name: ef.evaluate(*data[name], MEASURES) for name in data}  # warm, and aggregate()'s input
    times: dict[tuple[str, str], list[float]] = {}
    cpu: dict[tuple[str, str], list[float]] = {}

    def timed(key, fn, *a):
        gc.collect()
        t, c = time.perf_counter(), time.process_time()
        fn(*a)
        times.setdefault(key, []).append(time.perf_counter() - t)
        cpu.setdefault(key, []).append(time.process_time() - c)

    for _ in range(args.repeat):
        for step, fn in steps.items():
            for name, (run, qrels) in data.items():
                timed((step, name), fn, run, qrels)
        for name in data:
            timed(("aggregate", name), ef.aggregate, per_q[name])
    # wall time is what the target is about; CPU time (this process, all threads) is
    # shown beside it because on a loaded machine it varies far less
    print(f"{'step':28s} {'1M x 5 s':>10s} {'50k x 100 s':>12s} {'ratio':>6s} {'CPU 1M x 5':>11s} {'CPU 50k':>8s} {'ratio':>6s}")
    med = lambda d, step, name: statistics.median(d[(step, name)])  # noqa: E731
    for step in [*steps, "aggregate"]:
        a, b = med(times, step, "many"), med(times, step, "few")
        ca, cb = med(cpu, step, "many"), med(cpu, step, "few")
        print(f"{step:28s} {a:10.2f} {b:12.2f} {a / b:6.2f} {ca:11.2f} {cb:8.2f} {ca / cb:6.2f}")
    ratio = med(times, "evaluate", "many") / med(times, "evaluate", "few")
    cpu_ratio = med(cpu, "evaluate", "many") / med(cpu, "evaluate", "few")
    print(f"evaluate(): many questions / few questions = {ratio:.2f} wall, {cpu_ratio:.2f} CPU (target <= 1.5)")
    if args.profile:
        cProfile.runctx("ef.evaluate(run, qrels, MEASURES)", globals(),
                        {"run": data["many"][0], "qrels": data["many"][1], "ef": ef, "MEASURES": MEASURES},
                        args.profile)


if __name__ == "__main__":
    main()
