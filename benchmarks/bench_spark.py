"""The Spark engine on a local session of 1 and of 2 cores, on bench_scale.py's data.

    nice -n 5 .venv/bin/python benchmarks/bench_scale.py --questions 100000 --docs 150 \
        --slice-rows 150000 --budget 512MiB --skip full slice dask --dir /tmp/stream/s15    # the data
    nice -n 5 .venv/bin/python benchmarks/bench_spark.py --dir /tmp/stream/s15 [--repeat 2] [--layout grouped]

Each measurement is a fresh process (a fresh JVM): ``SparkSession`` ``local[N]`` with
``spark.sql.shuffle.partitions`` = ``--buckets``, the run read with ``spark.read.parquet``
(``run_grouped/`` or ``run_shuffled/``), the golden set (``qrels.parquet``) as pandas on the
driver; timed: ``evaluate()`` (it persists the per-question table: the whole evaluation)
and, apart, the session's start. 1 and 2 cores alternate, ``--repeat`` rounds; medians.
Then the aggregate of the last Spark table is checked equal, to the bit, to the aggregate of
the streaming engine's table on the same files. Java 17+ on the path (or JAVA_HOME).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

MEASURES = ["R@5", "R@10", "R@100", "P@5", "RR", "nDCG@10", "AP"]

CHILD = r"""
import json, os, sys, time, warnings
warnings.simplefilter("ignore")
os.environ["PYSPARK_PYTHON"] = sys.executable
path, qrels_path, cores, buckets, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
measures = json.loads(sys.argv[6])
t0 = time.perf_counter()
from pyspark.sql import SparkSession
spark = (SparkSession.builder.master(f"local[{cores}]").config("spark.ui.enabled", "false")
         .config("spark.sql.shuffle.partitions", buckets).config("spark.driver.memory", "6g").getOrCreate())
spark.sparkContext.setLogLevel("ERROR")
import pandas as pd
import evalframe as ef
qrels = pd.read_parquet(qrels_path)
run = spark.read.parquet(path)
start = time.perf_counter() - t0
t = time.perf_counter()
per_q = ef.evaluate(run, qrels, measures)
seconds = time.perf_counter() - t
rows = run.count()
if out != "-":
    ef.aggregate(per_q).to_parquet(out)
spark.stop()
print(json.dumps({"cores": cores, "seconds": seconds, "start": start, "rows": rows}))
"""

CHILD_STREAM = r"""
import json, sys, warnings
warnings.simplefilter("ignore")
import pandas as pd
import evalframe as ef
per_q = ef.evaluate(sys.argv[1], pd.read_parquet(sys.argv[2]), json.loads(sys.argv[4]), memory_budget="1GiB",
                    progress=False)
ef.aggregate(per_q).to_parquet(sys.argv[3])
print("{}")
"""


def child(code: str, *args: str) -> dict:
    out = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(out.stderr[-3000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--dir", default="/tmp/stream/s15")
    p.add_argument("--layout", default="grouped", choices=["grouped", "shuffled"])
    p.add_argument("--cores", nargs="+", type=int, default=[1, 2])
    p.add_argument("--buckets", type=int, default=16)
    p.add_argument("--repeat", type=int, default=2)
    args = p.parse_args(argv)
    path, qrels = os.path.join(args.dir, f"run_{args.layout}"), os.path.join(args.dir, "qrels.parquet")
    spark_agg, stream_agg = "/tmp/evalframe-bench-spark-agg.parquet", "/tmp/evalframe-bench-stream-agg.parquet"
    times: dict[int, list] = {c: [] for c in args.cores}
    rows = None
    for r in range(args.repeat):
        for c in args.cores:
            last = r == args.repeat - 1 and c == args.cores[-1]
            got = child(CHILD, path, qrels, str(c), str(args.buckets), spark_agg if last else "-", json.dumps(MEASURES))
            rows = got["rows"]
            times[c].append(got)
            print(f"round {r + 1}: local[{c}] evaluate {got['seconds']:.1f} s (session start {got['start']:.1f} s)",
                  flush=True)
    print(f"\n{rows:,} rows ({args.layout}), {args.buckets} buckets, medians of {args.repeat}:")
    med = {c: statistics.median(x["seconds"] for x in v) for c, v in times.items()}
    for c, s in med.items():
        print(f"  local[{c}]: {s:.1f} s, {rows / s / 1e6:.2f}M rows/s")
    if 1 in med and 2 in med:
        print(f"  2 cores / 1 core speed-up: {med[1] / med[2]:.2f}x")
    child(CHILD_STREAM, path, qrels, stream_agg, json.dumps(MEASURES))
    import pandas as pd
    a = pd.read_parquet(spark_agg).sort_values(["measure"]).reset_index(drop=True)
    b = pd.read_parquet(stream_agg).sort_values(["measure"]).reset_index(drop=True)
    pd.testing.assert_frame_equal(a, b, check_exact=True)
    print("  aggregate of the Spark table == aggregate of the streaming engine's, to the bit")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
