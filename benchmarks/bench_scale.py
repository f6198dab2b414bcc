"""Runs larger than memory: the streaming engine on a synthetic 100,000,000-row run.

    nice -n 5 .venv/bin/python benchmarks/bench_scale.py                       # 1,000,000 x 100
    nice -n 5 .venv/bin/python benchmarks/bench_scale.py --questions 20000 --docs 100 --budget 256MiB
    nice -n 5 .venv/bin/python benchmarks/bench_scale.py --full-on slice --budget 410MiB --skip dask
    nice -n 5 .venv/bin/python benchmarks/bench_scale.py --questions 100000 --docs 150 --slice-rows 150000 \
        --budget 128MiB 256MiB 512MiB 1GiB --skip slice dask --dir /tmp/stream/s15     # small budgets

Writes (never holding it whole in memory: generated in chunks of questions) a run of
``--questions`` x ``--docs`` rows with string ids, scores on a coarse grid (so some
rows tie) and a golden set of graded labels (0-3, about ``--judged`` per question,
most of them retrieved), as Parquet datasets under ``--dir`` (default /tmp/stream/scale):

- ``run_grouped/``: files of whole questions, each question's rows together;
- ``run_shuffled/``: the same rows scattered over every file and shuffled in each;
- ``slice_grouped/``, ``slice_shuffled/``: the first ``--slice-rows`` rows' questions
  (20,000,000 rows at full size), both layouts; ``qrels.parquet``, ``qrels_slice.parquet``.

Then, each in a child process (peak RSS: ``VmHWM`` of ``/proc/self/status`` there):

1. the full run, both layouts, streamed with each ``--budget`` (default 2 GiB): seconds,
   rows/s, peak RSS, and peak RSS minus the child's RSS after its imports (the fixed
   overhead: the interpreter, numpy, pandas, pyarrow, evalframe), checked against
   the budget plus that overhead;
2. the slice, in-memory engine and streaming engine interleaved in one process
   (``--repeat`` rounds; the ratio is robust to load, absolute seconds are not),
   throughput ratios against the targets (grouped >= 60 %, shuffled >= 35 %), and
   the numbers checked identical (per-question tables equal to the bit).

When ``benchmarks/bench_scale_dask.py`` imports (dask installed), its
``run(dataset_path, slice_path)`` is called with ``run_grouped/`` and
``slice_grouped/`` (``qrels.parquet`` and ``qrels_slice.parquet`` are their siblings).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

MEASURES = ["R@5", "R@10", "R@100", "P@5", "RR", "nDCG@10", "AP"]


def _ids(prefix: str, numbers: np.ndarray, width: int) -> pa.Array:
    digits = pc.utf8_lpad(pc.cast(pa.array(numbers), pa.string()), width, "0")
    return pc.binary_join_element_wise(pa.scalar(prefix), digits, "")


def chunk(q0: int, n_q: int, docs: int, judged: int, seed: int) -> tuple[pa.Table, pa.Table]:
    """Run rows and golden-set rows of questions q0 .. q0 + n_q - 1 (grouped, sorted by score)."""
    rng = np.random.default_rng([seed, q0])
    q = np.repeat(np.arange(q0, q0 + n_q), docs)
    d = (q.astype(np.int64) * 7919 + np.tile(np.arange(docs), n_q) * 104729) % 50_000_000
    score = np.round(rng.random(n_q * docs) * 20, 1)  # 200 distinct values: ties in most lists
    order = np.lexsort((-score, q))
    run = pa.table({"query_id": _ids("q", q, 7), "doc_id": _ids("d", d[order], 8),
                    "score": score[order]})
    # judged: positions drawn from the ranking (a few beyond it), labels 0..3
    pos = rng.integers(0, int(docs * 1.2), size=(n_q, judged))
    pos.sort(axis=1)
    keep = np.ones_like(pos, dtype=bool)
    keep[:, 1:] = pos[:, 1:] != pos[:, :-1]
    qq = np.repeat(np.arange(q0, q0 + n_q), judged).reshape(n_q, judged)[keep]
    dd = (qq.astype(np.int64) * 7919 + pos[keep] * 104729) % 50_000_000
    label = rng.choice([0, 1, 1, 2, 3], size=len(qq))
    qrels = pa.table({"query_id": _ids("q", qq, 7), "doc_id": _ids("d", dd, 8), "relevance": label})
    return run, qrels


def generate(base: Path, questions: int, docs: int, judged: int, slice_questions: int, seed: int,
             per_chunk: int) -> None:
    """Both layouts of the full run and of the slice, and the two golden sets."""
    if (base / "done.json").exists() and json.loads((base / "done.json").read_text()) == [
            questions, docs, judged, slice_questions, seed]:
        print(f"data: reusing {base}")
        return
    shutil.rmtree(base, ignore_errors=True)
    for sub in ("run_grouped", "run_shuffled", "slice_grouped", "slice_shuffled"):
        (base / sub).mkdir(parents=True)
    n_chunks = -(-questions // per_chunk)
    n_shards = max(2, min(16, n_chunks))
    rng = np.random.default_rng(seed)
    qrels_w = qrels_slice_w = None
    shards = [None] * n_shards
    slice_shards = [None] * n_shards
    t0 = time.perf_counter()
    for c in range(n_chunks):
        q0 = c * per_chunk
        run, qrels = chunk(q0, min(per_chunk, questions - q0), docs, judged, seed)
        pq.write_table(run, base / "run_grouped" / f"part-{c:05d}.parquet")
        qrels_w = qrels_w or pq.ParquetWriter(base / "qrels.parquet", qrels.schema)
        qrels_w.write_table(qrels)
        shard = rng.integers(0, n_shards, len(run))
        perm = rng.permutation(len(run))
        run_p, shard_p = run.take(pa.array(perm)), shard[perm]
        in_slice = q0 < slice_questions
        if in_slice:  # chunks are whole: the slice is the first chunks
            pq.write_table(run, base / "slice_grouped" / f"part-{c:05d}.parquet")
            qrels_slice_w = qrels_slice_w or pq.ParquetWriter(base / "qrels_slice.parquet", qrels.schema)
            qrels_slice_w.write_table(qrels)
        for k in range(n_shards):
            piece = run_p.filter(pa.array(shard_p == k))
            shards[k] = shards[k] or pq.ParquetWriter(base / "run_shuffled" / f"part-{k:05d}.parquet", piece.schema)
            shards[k].write_table(piece)
            if in_slice:
                slice_shards[k] = slice_shards[k] or pq.ParquetWriter(
                    base / "slice_shuffled" / f"part-{k:05d}.parquet", piece.schema)
                slice_shards[k].write_table(piece)
        print(f"\rdata: chunk {c + 1}/{n_chunks} ({time.perf_counter() - t0:.0f} s)", end="", flush=True)
    for w in [qrels_w, qrels_slice_w, *shards, *slice_shards]:
        if w is not None:
            w.close()
    print()
    (base / "done.json").write_text(json.dumps([questions, docs, judged, slice_questions, seed]))


# ---------------------------------------------------------------- child processes
CHILD_STREAM = r"""
import json, re, sys, threading, time, traceback, warnings
from evalframe.engine import budget as sizing
import evalframe as ef
from evalframe.evaluation import evaluate_with_diagnostics
def status(key):  # VmHWM is this process's own peak (ru_maxrss keeps the parent's across exec)
    with open("/proc/self/status") as f:
        return int(re.search(key + r":\s+(\d+)", f.read()).group(1)) * 1024
source, qrels, budget, measures = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
base_rss = status("VmRSS")
warnings.simplefilter("ignore")
main, peak, stop = threading.main_thread().ident, [0, 0.0, []], threading.Event()
def sample():  # where the peak happens: the main thread's stack when RSS was highest
    while not stop.wait(0.1):
        rss = status("VmRSS")
        if rss > peak[0]:
            stack = traceback.extract_stack(sys._current_frames()[main])
            peak[:] = [rss, time.perf_counter() - t, [f"{f.name}:{f.lineno}" for f in stack
                                                      if "evalframe" in f.filename][-4:]]
t = time.perf_counter()
threading.Thread(target=sample, daemon=True).start()
per_q, diag = evaluate_with_diagnostics(source, qrels, measures, memory_budget=budget, progress=False)
t = time.perf_counter() - t
stop.set()
print(json.dumps({"seconds": t, "peak_rss": status("VmHWM"), "base_rss": base_rss, "rows_out": len(per_q),
                  "sampled_peak": peak}))
"""

CHILD_SLICE = r"""
import json, sys, time, warnings
import numpy as np, pandas as pd
from evalframe.evaluation import evaluate_with_diagnostics
source, qrels, budget, measures, repeat = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4]), int(sys.argv[5])
warnings.simplefilter("ignore")
times = {"memory": [], "stream": []}
for r in range(repeat):
    for how, b in (("memory", "1TiB"), ("stream", budget)):
        t = time.perf_counter()
        per_q, diag = evaluate_with_diagnostics(source, qrels, measures, memory_budget=b, progress=False)
        times[how].append(time.perf_counter() - t)
        if r == 0:
            if how == "memory":
                per_memory, diag_memory = per_q, diag
            else:
                pd.testing.assert_frame_equal(per_q, per_memory)
                pd.testing.assert_frame_equal(diag, diag_memory)
        del per_q, diag
print(json.dumps({"times": times, "identical": True}))
"""


def child(code: str, *args: str) -> dict:
    out = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(out.stderr[-3000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--questions", type=int, default=1_000_000)
    p.add_argument("--docs", type=int, default=100)
    p.add_argument("--judged", type=int, default=3, help="golden-set rows per question (about)")
    p.add_argument("--budget", nargs="+", default=["2GiB"], help="one or more budgets (the slice uses the last)")
    p.add_argument("--slice-rows", type=int, default=20_000_000)
    p.add_argument("--per-chunk", type=int, default=50_000, help="questions generated at once")
    p.add_argument("--repeat", type=int, default=2, help="interleaved rounds on the slice")
    p.add_argument("--dir", default="/tmp/stream/scale")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--layouts", nargs="*", default=["grouped", "shuffled"], choices=["grouped", "shuffled"])
    p.add_argument("--skip", nargs="*", default=[], choices=["full", "slice", "dask"])
    p.add_argument("--full-on", default="run", choices=["run", "slice"],
                   help="what step 1 streams: the full run, or the slice (with a budget scaled down, "
                        "e.g. --full-on slice --budget 410MiB: the slice at a fifth of the 2 GiB)")
    return p.parse_args(argv)


def main(argv=None) -> int:
    from evalframe.engine import budget as sizing
    args = parse_args(argv)
    base = Path(args.dir)
    budgets = [sizing.memory_budget(b) for b in args.budget]
    budget = budgets[-1]
    slice_q = min(args.questions, max(1, args.slice_rows // args.docs))
    generate(base, args.questions, args.docs, args.judged, slice_q, args.seed, min(args.per_chunk, slice_q))
    rows = args.questions * args.docs
    on_disk = sum(f.stat().st_size for f in (base / "run_grouped").iterdir())
    print(f"run: {args.questions:,} questions x {args.docs} docs = {rows:,} rows "
          f"({on_disk / 2 ** 30:.2f} GiB of Parquet per layout); budgets {', '.join(args.budget)}; "
          f"in-memory estimate {rows * sizing.WHOLE_BYTES_PER_ROW / 2 ** 30:.1f} GiB")
    ok = True
    if "full" not in args.skip:
        what, golden = ("run", "qrels") if args.full_on == "run" else ("slice", "qrels_slice")
        rows = rows if args.full_on == "run" else slice_q * args.docs
        for layout in args.layouts:
            for b in budgets:
                r = child(CHILD_STREAM, str(base / f"{what}_{layout}"), str(base / f"{golden}.parquet"), str(b),
                          json.dumps(MEASURES))
                overhead = r["base_rss"]
                # a budget below what is held besides a partition is warned of (MemoryBudgetWarning),
                # with the peak it expects: the peak must stay within that
                g_rows = pq.read_metadata(base / f"{golden}.parquet").num_rows
                out_rows = (rows // args.docs) * len(MEASURES)
                held = sizing.held_bytes(b, golden_rows=g_rows, out_rows=out_rows)
                expected = held + sizing.plan_batch_rows(b, golden_rows=g_rows, out_rows=out_rows) * \
                    sizing.BYTES_PER_ROW
                within = r["peak_rss"] <= max(b, expected) + overhead
                ok &= within
                kept = ("within the budget" if r["peak_rss"] <= b + overhead else
                        f"over the budget, within the {expected / 2 ** 20:,.0f} MiB warned of" if within else "OVER")
                step = "full" if args.full_on == "run" else "slice"
                print(f"{step} {layout:8s} budget {b / 2 ** 20:6.0f} MiB: {r['seconds']:8.1f} s  "
                      f"{rows / r['seconds']:12,.0f} rows/s  peak RSS {r['peak_rss'] / 2 ** 20:,.0f} MiB = fixed "
                      f"overhead {overhead / 2 ** 20:,.0f} MiB (interpreter and imports) + "
                      f"{(r['peak_rss'] - overhead) / 2 ** 20:,.0f} MiB ({kept}); sampled peak at "
                      f"{r['sampled_peak'][1]:.0f} s in {' < '.join(r['sampled_peak'][2])}",
                      flush=True)
    if "slice" not in args.skip:
        s_rows = slice_q * args.docs
        for layout, target in [x for x in (("grouped", 0.60), ("shuffled", 0.35)) if x[0] in args.layouts]:
            r = child(CHILD_SLICE, str(base / f"slice_{layout}"), str(base / "qrels_slice.parquet"),
                      str(budget if s_rows * sizing.WHOLE_BYTES_PER_ROW > budget else max(1, s_rows * 40)),
                      json.dumps(MEASURES), str(args.repeat))
            mem, stream = min(r["times"]["memory"]), min(r["times"]["stream"])
            ratio = mem / stream
            ok &= ratio >= target
            print(f"slice {layout:8s} ({s_rows:,} rows): in-memory {s_rows / mem:12,.0f} rows/s, "
                  f"streaming {s_rows / stream:12,.0f} rows/s = {ratio:.0%} (target >= {target:.0%}); "
                  f"numbers identical: {r['identical']}")
    if "dask" not in args.skip:
        sys.path.insert(0, str(Path(__file__).parent))
        try:
            import bench_scale_dask
        except ImportError as exc:
            print(f"dask: skipped ({exc})")
        else:
            bench_scale_dask.run(str(base / "run_grouped"), str(base / "slice_grouped"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
