"""Span measures against chunk-level recall on the same run (issue: within 2x of R@k).

    .venv/bin/python benchmarks/bench_spans.py [--questions 10000] [--depth 100] [--repeats 5]
    .venv/bin/python benchmarks/bench_spans.py --engines [--budget 64MiB] [--partitions 8] [--dir /tmp/spans]

Data as a RAG team has it: 20 chunks per document in windows of 400 characters with a
100-character overlap (sliding windows), string ids, 1-3 evidence spans per question in
one or two documents, a run of ``depth`` chunks per question with tied scores, rows
shuffled.  Both timings are end to end from DataFrames, in one process, interleaved
(A, B, A, B, ...), median of ``repeats``:

- ``R@10`` on the chunk-level golden set :func:`evalframe.span_labels` gives this
  chunking (the fair chunk-level baseline: the same run, the same judged chunks);
- ``SpanRecall@10`` on the span golden set with ``chunks=`` (the labels derived from the
  spans inside the call, the chunk offsets joined, the interval arithmetic);
- ``R@10`` on the span golden set with ``chunks=``: the same path without the interval
  arithmetic, so the last two differ by what the span measure itself costs.

With ``--engines``: ``SpanRecall@10`` and ``R@10`` on the span golden set with ``chunks=``,
in memory (a DataFrame), streamed (the same rows as a Parquet dataset of 8 files, shuffled
and grouped by question, at ``--budget``) and on Dask (``--partitions`` partitions of the
DataFrame, Dask's local threads), interleaved, median of ``repeats``; each engine's table
is checked equal to the in-memory one (sorted) before timing.
"""
from __future__ import annotations

import argparse
import statistics
import time
import warnings

import numpy as np
import pandas as pd

import evalframe as ef


def make_case(n_questions: int, depth: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    n_docs = max(n_questions * 2, 1000)
    per_doc, width, step = 20, 400, 300
    doc = np.repeat(np.arange(n_docs), per_doc)
    idx = np.tile(np.arange(per_doc), n_docs)
    chunks = pd.DataFrame({"chunk_id": [f"doc{d:07d}#{i}" for d, i in zip(doc, idx)],
                           "doc_id": [f"doc{d:07d}" for d in doc],
                           "start": idx * step, "end": idx * step + width,
                           "tokens": rng.integers(60, 110, len(doc))})
    n_spans = rng.integers(1, 4, n_questions)
    q = np.repeat(np.arange(n_questions), n_spans)
    sd = rng.integers(0, n_docs, len(q))
    start = rng.integers(0, per_doc * step - 300, len(q))
    spans = pd.DataFrame({"query_id": [f"q{x}" for x in q], "doc_id": [f"doc{d:07d}" for d in sd],
                          "start": start, "end": start + rng.integers(50, 300, len(q)),
                          "relevance": rng.integers(1, 3, len(q))})
    # the run: each question's chunks, a few from its evidence documents, the rest at random
    rq = np.repeat(np.arange(n_questions), depth)
    pick = rng.integers(0, len(chunks), len(rq))
    near = rng.random(len(rq)) < 0.05
    ev_doc = pd.Series(sd).groupby(q).first().reindex(np.arange(n_questions)).fillna(0).astype(int).to_numpy()
    pick[near] = ev_doc[rq[near]] * per_doc + rng.integers(0, per_doc, int(near.sum()))
    run = pd.DataFrame({"query_id": [f"q{x}" for x in rq], "doc_id": chunks["chunk_id"].to_numpy()[pick],
                        "score": np.round(rng.random(len(rq)), 3)})
    run = run.drop_duplicates(["query_id", "doc_id"]).sample(frac=1.0, random_state=seed).reset_index(drop=True)
    return run, spans, chunks


def engines(run, spans, chunks, args) -> None:
    """The span path on every engine, interleaved (see the module docstring)."""
    import os
    import dask.dataframe as dd
    os.makedirs(args.dir, exist_ok=True)
    layouts = {"shuffled": run, "grouped": run.sort_values("query_id", kind="stable")}
    paths = {}
    for name, rows in layouts.items():
        paths[name] = os.path.join(args.dir, name)
        os.makedirs(paths[name], exist_ok=True)
        for i, at in enumerate(np.array_split(np.arange(len(rows)), 8)):
            rows.iloc[at].to_parquet(os.path.join(paths[name], f"part-{i}.parquet"), index=False)
    ms = ["SpanRecall@10", "R@10"]
    calls = {"in memory": lambda: ef.evaluate(run, spans, ms, chunks=chunks)}
    for name, path in paths.items():
        calls[f"streamed {name} ({args.budget})"] = lambda path=path: ef.evaluate(
            path, spans, ms, chunks=chunks, memory_budget=args.budget, progress=False)
    calls[f"dask ({args.partitions} partitions, threads)"] = lambda: ef.evaluate(
        dd.from_pandas(run, npartitions=args.partitions), spans, ms, chunks=chunks).compute()
    keys = ["query_id", "measure"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = calls["in memory"]().sort_values(keys).reset_index(drop=True)
        for name, call in calls.items():
            got = call().sort_values(keys).reset_index(drop=True)
            pd.testing.assert_frame_equal(got, want, check_dtype=False)
        times = {k: [] for k in calls}
        for _ in range(args.repeats):
            for name, call in calls.items():
                t = time.perf_counter()
                call()
                times[name].append(time.perf_counter() - t)
    base = statistics.median(times["in memory"])
    for k, v in times.items():
        m = statistics.median(v)
        print(f"{k:40s} median {m:.3f} s  {m / base:.2f}x in memory  (runs: {', '.join(f'{x:.3f}' for x in v)})")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--questions", type=int, default=10_000)
    ap.add_argument("--depth", type=int, default=100)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--engines", action="store_true", help="the span path streamed and on Dask vs in memory")
    ap.add_argument("--budget", default="64MiB")
    ap.add_argument("--partitions", type=int, default=8)
    ap.add_argument("--dir", default="/tmp/evalframe-bench-spans")
    args = ap.parse_args()
    run, spans, chunks = make_case(args.questions, args.depth)
    if args.engines:
        print(f"run {len(run):,} rows, {run['query_id'].nunique():,} questions; chunks {len(chunks):,}; "
              f"spans {len(spans):,}")
        engines(run, spans, chunks, args)
        return
    labels = ef.span_labels(spans, chunks)
    print(f"run {len(run):,} rows, {run['query_id'].nunique():,} questions; chunks {len(chunks):,}; "
          f"spans {len(spans):,}; chunk labels {len(labels):,}")
    times = {"R@10 (chunk labels)": [], "SpanRecall@10 (spans, chunks=)": [], "R@10 (spans, chunks=)": []}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ef.EvalframeWarning)
        for _ in range(args.repeats):
            t = time.perf_counter()
            ef.evaluate(run, labels, ["R@10"])
            times["R@10 (chunk labels)"].append(time.perf_counter() - t)
            t = time.perf_counter()
            ef.evaluate(run, spans, ["SpanRecall@10"], chunks=chunks)
            times["SpanRecall@10 (spans, chunks=)"].append(time.perf_counter() - t)
            t = time.perf_counter()
            ef.evaluate(run, spans, ["R@10"], chunks=chunks)
            times["R@10 (spans, chunks=)"].append(time.perf_counter() - t)
    med = {k: statistics.median(v) for k, v in times.items()}
    for k, v in med.items():
        print(f"{k:34s} median {v:.3f} s  (runs: {', '.join(f'{x:.3f}' for x in times[k])})")
    a, b, c = med.values()
    print(f"SpanRecall@10 / R@10 on chunk labels: {b / a:.2f}x; SpanRecall@10 / R@10 on the same spans path: {b / c:.2f}x")


if __name__ == "__main__":
    main()
