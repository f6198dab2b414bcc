"""Statistics at 1,000,000 questions: time and peak memory of summarize, compare, report.

A synthetic per-question table of ``--questions`` questions x 3 systems x 2 measures
(``nDCG@10``-like values in [0, 1], and a 0/1 measure) is summarised and compared with
each method; every call runs in its own process, so that its peak RSS (``ru_maxrss``)
is its own. ``report`` is timed on a synthetic run of the same questions (3 systems,
``--docs`` documents each), and the evaluation inside it is timed apart.

    nice -n 5 .venv/bin/python benchmarks/bench_stats_large.py [--questions 1000000] [--resamples 1000]

Resampling costs grow as n_resamples x questions (the engines of
``evalframe.stats.resampling`` draw and reduce chunk by chunk, so their memory does not):
the seconds at ``--resamples`` scale linearly to other counts. Absolute seconds depend on
the load of the machine; compare figures from one run.
"""
from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time

import numpy as np
import pandas as pd


def per_question(n: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    base = rng.beta(2, 3, size=n)
    systems, frames = ["bm25", "dense", "hybrid"], []
    qid = np.char.add("q", np.arange(n).astype(str))
    for i, s in enumerate(systems):
        v = np.clip(base + rng.normal(0.01 * i, 0.1, size=n), 0, 1)
        hit = (rng.random(n) < 0.4 + 0.02 * i).astype(np.float64)
        for m, vals in (("nDCG@10", v), ("Success@10", hit)):
            frames.append(pd.DataFrame({"system": s, "query_id": qid, "measure": m, "value": vals}))
    return pd.concat(frames, ignore_index=True)


def synthetic_run(n: int, docs: int, seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    qid = np.char.add("q", np.arange(n).astype(str))
    runs = []
    for s in ("bm25", "dense", "hybrid"):
        runs.append(pd.DataFrame({"system": s, "query_id": np.repeat(qid, docs),
                                  "doc_id": np.char.add("d", np.tile(np.arange(docs), n).astype(str)),
                                  "score": rng.random(n * docs).round(3)}))
    qrels = pd.DataFrame({"query_id": np.repeat(qid, 2), "doc_id": np.char.add("d", rng.integers(0, 2 * docs, 2 * n).astype(str)),
                          "relevance": rng.integers(1, 3, 2 * n)}).drop_duplicates(["query_id", "doc_id"])
    return pd.concat(runs, ignore_index=True), qrels


def _one(kind: str, n: int, resamples: int, docs: int) -> dict:
    """One measurement, in this process (run by the parent in a fresh process)."""
    import warnings
    warnings.simplefilter("ignore")
    import evalframe as ef
    from evalframe import stats
    if kind == "report" or kind == "evaluate":
        run, qrels = synthetic_run(n, docs)
        base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        t = time.perf_counter()
        if kind == "evaluate":
            ef.evaluate(run, qrels, ["nDCG@10", "Success@10"])
        else:
            ef.report(run, qrels, measures=["nDCG@10", "Success@10"], baseline="bm25", n_resamples=resamples)
    else:
        pq = per_question(n)
        base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        t = time.perf_counter()
        fn, kw = {
            "summarize": (stats.summarize, {}),
            "summarize_bootstrap": (stats.summarize, {"method": "bootstrap", "n_resamples": resamples}),
            "summarize_bca": (stats.summarize, {"method": "bca", "n_resamples": resamples}),
            "compare": (stats.compare, {"baseline": "bm25"}),
            "compare_randomization": (stats.compare, {"baseline": "bm25", "test": "randomization",
                                                      "n_resamples": resamples}),
            "compare_bootstrap": (stats.compare, {"baseline": "bm25", "test": "bootstrap", "ci": "bootstrap",
                                                  "n_resamples": resamples}),
        }[kind]
        fn(pq, **kw)
    seconds = time.perf_counter() - t
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {"what": kind, "seconds": round(seconds, 2), "peak_rss_mib": round(peak / 1024),
            "above_input_mib": round((peak - base) / 1024)}


KINDS = ["summarize", "compare", "summarize_bootstrap", "summarize_bca", "compare_randomization",
         "compare_bootstrap", "evaluate", "report"]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--questions", type=int, default=1_000_000)
    ap.add_argument("--resamples", type=int, default=1000)
    ap.add_argument("--docs", type=int, default=5)
    ap.add_argument("--only", nargs="*", default=KINDS)
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(_one(args.child, args.questions, args.resamples, args.docs)))
        return 0
    print(f"{args.questions} questions x 3 systems x 2 measures, n_resamples={args.resamples}")
    for kind in args.only:
        out = subprocess.run([sys.executable, __file__, "--child", kind, "--questions", str(args.questions),
                              "--resamples", str(args.resamples), "--docs", str(args.docs)],
                             capture_output=True, text=True)
        if out.returncode:
            print(kind, "failed:", out.stderr.strip().splitlines()[-1:])
            continue
        r = json.loads(out.stdout.strip().splitlines()[-1])
        print(f"{r['what']:<24} {r['seconds']:>9.2f} s  peak RSS {r['peak_rss_mib']:>6} MiB "
              f"(+{r['above_input_mib']} MiB over its input)", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
