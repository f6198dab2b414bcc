"""Benchmark of evalframe.report() on a large synthetic evaluation.

Workload: 10 systems x 10,000 questions x the 7 default measures (R@5, R@10, R@100,
P@5, RR, nDCG@10, AP), each system returning its top 100 documents (10 million run
rows), all 45 pairs compared, with the default resampling (bootstrap intervals of the means,
10,000 resamples; the comparisons' paired t-test is analytic). report() also computes
Judged@k, the recall@k curve (13 cutoffs), the planning curve and the diagnostics.
Target: < 30 s.

Run: ``.venv/bin/python benchmarks/bench_report.py [--baseline] [--segments]``
(``--baseline`` compares with sys0 only: 9 pairs instead of 45; ``--segments`` adds two
segment columns with 7 values, bootstrapped too). Building the synthetic tables is not timed.

Threads (issue 31): ``.venv/bin/python benchmarks/bench_report.py --threads`` times
report() with ``threads=1`` and ``threads=2`` in one process, interleaved, 5 times each
(medians; wall and CPU time of the process), on a case where resampling dominates: 20
systems x 1,000 questions x the 7 measures, baseline sys0, ``interval="bca"``,
``test="randomization"``, ``correction="randomized-tukey"`` (10,000 resamples each:
the randomised Tukey HSD permutes 20 systems' labels within each question, 7 families),
and checks that every table is identical. Take it on an idle machine (``uptime``).
Measured 2026-12-07 (2 cores, load 0.8-1.5 with the benchmark itself; the fifth pair
overlapped another process): median wall 24.90 s with threads=1, 16.61 s with threads=2
(1.50x; the resampling steps 22.14 s -> 14.47 s, 1.53x), CPU 25.5 s and 26.1 s; the
randomised Tukey HSD is most of it (its uniforms are drawn in order on one thread).
"""
from __future__ import annotations

import resource
import sys
import time
import warnings

import numpy as np
import pandas as pd

N_SYSTEMS, N_QUESTIONS, DEPTH, N_DOCS = 10, 10_000, 100, 50_000


def make_data(seed: int = 0):
    """Golden set (1-7 relevant documents per question, graded 1-2, plus judged
    non-relevant ones), runs whose quality grows with the system number, segments."""
    rng = np.random.default_rng(seed)
    nrel = rng.integers(1, 8, N_QUESTIONS)
    q = np.repeat(np.arange(N_QUESTIONS), nrel + 3)
    docs = rng.integers(0, N_DOCS, q.size)
    label = np.where(np.concatenate([np.r_[np.ones(n), np.zeros(3)] for n in nrel]) > 0,
                     rng.integers(1, 3, q.size), 0)
    qrels = pd.DataFrame({"query_id": q.astype(str), "doc_id": docs.astype(str), "relevance": label})
    qrels = qrels.drop_duplicates(["query_id", "doc_id"]).reset_index(drop=True)
    rel = qrels[qrels["relevance"] > 0]
    frames = []
    for s in range(N_SYSTEMS):
        qq = np.repeat(np.arange(N_QUESTIONS), DEPTH)
        dd = rng.integers(0, N_DOCS, qq.size)
        # put a share of each question's relevant documents into the list
        keep = rng.random(len(rel)) < 0.45 + 0.03 * s
        rq = rel["query_id"].to_numpy().astype(np.int64)[keep]
        slot = rq * DEPTH + rng.integers(0, DEPTH, rq.size)
        dd[slot] = rel["doc_id"].to_numpy().astype(np.int64)[keep]
        frames.append(pd.DataFrame({"system": f"sys{s}", "query_id": qq.astype(str), "doc_id": dd.astype(str),
                                    "score": rng.random(qq.size)}))
    run = pd.concat(frames, ignore_index=True).drop_duplicates(["system", "query_id", "doc_id"])
    segments = pd.DataFrame({"query_id": np.arange(N_QUESTIONS).astype(str),
                             "length": rng.choice(["short", "medium", "long"], N_QUESTIONS),
                             "form": rng.choice(["lookup", "natural", "multi", "yes_no"], N_QUESTIONS)})
    return run.reset_index(drop=True), qrels, segments


def main(baseline: bool = False, with_segments: bool = False) -> float:
    from evalframe import report

    t0 = time.perf_counter()
    run, qrels, segments = make_data()
    print(f"synthetic data: {len(run):,} run rows, {len(qrels):,} judgments "
          f"({time.perf_counter() - t0:.1f} s, not timed)")
    steps: list[tuple[str, float]] = []
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rep = report(run, qrels, segments=segments if with_segments else None, baseline="sys0" if baseline else None,
                     progress=lambda label: steps.append((label, time.perf_counter())))
    total = time.perf_counter() - t0
    marks = steps + [("end", t0 + total)]
    for (label, t), (_, t_next) in zip(marks, marks[1:]):
        print(f"  {label:32s} {t_next - t:6.2f} s")
    n_pairs = len(rep.comparisons) // len(rep.measures)
    print(f"report(){' with 2 segment columns' if with_segments else ''}: {N_SYSTEMS} systems x {N_QUESTIONS:,} questions x {len(rep.measures)} measures, "
          f"{n_pairs} pairs, {rep.metadata['n_resamples']:,} resamples: {total:.1f} s "
          f"(target < 30 s); peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:,.0f} MiB")
    assert len(rep.summary) == N_SYSTEMS * 7 and rep.summary["ci_low"].notna().all()
    return total


def threads_main(repeats: int = 5) -> None:
    """report() under threads=1 and threads=2, interleaved (see the module docstring)."""
    global N_SYSTEMS, N_QUESTIONS
    from evalframe import report

    N_SYSTEMS, N_QUESTIONS = 20, 1_000
    run, qrels, _ = make_data()
    kw = dict(baseline="sys0", interval="bca", test="randomization", correction="randomized-tukey")
    print(f"report() threads: {N_SYSTEMS} systems x {N_QUESTIONS:,} questions, {kw}")
    wall: dict[int, list[float]] = {1: [], 2: []}
    cpu: dict[int, list[float]] = {1: [], 2: []}
    resampling: dict[int, list[float]] = {1: [], 2: []}
    tables = {}
    for i in range(repeats):
        for threads in (1, 2):
            steps: list[tuple[str, float]] = []
            c0, t0 = time.process_time(), time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                rep = report(run, qrels, threads=threads, **kw,
                             progress=lambda label: steps.append((label, time.perf_counter())))
            t1, c1 = time.perf_counter(), time.process_time()
            marks = dict(zip([s for s, _ in steps], [t for _, t in steps[1:]] + [t1]))
            starts = dict(steps)
            wall[threads].append(t1 - t0)
            cpu[threads].append(c1 - c0)
            resampling[threads].append(sum(marks[s] - starts[s] for s in starts if s.startswith("resampling")))
            print(f"  run {i + 1} threads={threads}: wall {t1 - t0:6.2f} s, cpu {c1 - c0:6.2f} s, "
                  f"resampling steps {resampling[threads][-1]:6.2f} s", flush=True)
            if threads not in tables:
                tables[threads] = rep.tables
    for name, table in tables[1].items():
        pd.testing.assert_frame_equal(tables[2][name], table, check_exact=True, obj=name)
    med = {t: (float(np.median(wall[t])), float(np.median(cpu[t])), float(np.median(resampling[t]))) for t in wall}
    for t, (w, c, r) in med.items():
        print(f"threads={t}: median wall {w:.2f} s, cpu {c:.2f} s, resampling steps {r:.2f} s")
    print(f"threads=2 vs 1: {med[1][0] / med[2][0]:.2f}x wall, {med[1][2] / med[2][2]:.2f}x the resampling "
          "steps; every table identical")


if __name__ == "__main__":
    if "--threads" in sys.argv:
        threads_main()
    else:
        main(baseline="--baseline" in sys.argv, with_segments="--segments" in sys.argv)
