"""Speed and peak memory of evaluate() against pytrec_eval and ranx, in one process.

Every tool gets the same pandas DataFrames (pandas' default ``str`` id columns, or
int64 ids) and returns a per-question table of nDCG@10 (linear gain), R@100, RR@10,
P@5 and AP@1000.  The data look like a real collection: document ids drawn from a
pool of 8.8M (MS MARCO's passage count), so about as many distinct ids as rows;
string ids ("D123"), integer ids and long URL-like ids; graded labels 0-3; score
ties in a tenth of the questions; some questions without a relevant document;
runs grouped by question (as a TREC file is) and shuffled.

Timed, interleaved (tool A, tool B, ... then again), medians of ``--repeat``:

- evalframe: ``evaluate(run_df, qrels_df, measures, missing="drop")``, end to end
  (reading, every check, ranking, judging, measures, the long table);
- pytrec_eval end to end: the dicts built group-wise from the DataFrames (one
  factorise, one ``dict(zip(...))`` per question: the fastest plain-Python way),
  ``RelevanceEvaluator``, ``evaluate``; and ``evaluate`` alone (dicts built);
- ranx: ``Qrels.from_dict`` / ``Run.from_dict`` on the same group-wise dicts
  (faster than ``from_df``'s per-question ``groupby().apply``) + ``evaluate``
  (warm: numba compiled before timing), and ``evaluate`` alone.

With ``--memory``, each tool's peak memory is also measured in a fresh process
(the case rebuilt there, then one call): the resident high-water mark during the
call above the resident size before it (Linux ``/proc/self/clear_refs``).  Freed
memory that a process keeps makes in-process figures meaningless, hence the
separate processes.

    python benchmarks/bench_core.py                 # the default cases, a few minutes
    python benchmarks/bench_core.py --xl            # also 100,000 x 100
    python benchmarks/bench_core.py --cases 10000x100 7000x1000 --memory
    python benchmarks/bench_core.py --cases 1000000x5 50000x100   # per-question overhead
    python benchmarks/bench_core.py --cases 10x100 100x100 1000x100 --repeat 21   # per-call overhead
    python benchmarks/bench_core.py --cases 7000x1000 --xl --threads 2 4   # evaluate(threads=N) beside one thread

``evalframe`` is evaluate() on one thread (the ratios per core); ``evalframe threads=N``
(``--threads``, default 2) cuts runs of at least 1,000,000 rows per thread into parts of
whole questions evaluated side by side (:mod:`evalframe.engine.parts`).  pytrec_eval runs on
one thread; ranx's numba kernels may use several.
"""
from __future__ import annotations

import argparse
import gc
import json
import statistics
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

import evalframe as ef

POOL = 8_841_823
EF_MEASURES = ["nDCG(gain='linear')@10", "R@100", "RR@10", "P@5", "AP@1000"]
TREC_MEASURES = {"ndcg_cut.10", "recall.100", "recip_rank", "P.5", "map_cut.1000"}
RANX_MEASURES = ["ndcg@10", "recall@100", "mrr@10", "precision@5", "map@1000"]
AGREE = {"nDCG(gain='linear')@10": "ndcg_cut_10", "R@100": "recall_100", "P@5": "P_5", "AP@1000": "map_cut_1000"}


# ---------------------------------------------------------------- data
def make_case(n_q: int, depth: int, *, ids: str = "str", shuffled: bool = False, seed: int = 0
              ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(run, qrels): ``depth`` documents per question out of 1.5 x depth candidates
    drawn from the pool; labels 0-3 on about 15 judged documents per question."""
    rng = np.random.default_rng(seed)
    n_c = depth * 3 // 2
    q = np.repeat(np.arange(n_q), n_c)
    doc = rng.integers(0, POOL, n_q * n_c)  # a repeat inside a question is redrawn below
    while True:
        dup = pd.Series(q * POOL + doc).duplicated().to_numpy()
        if not dup.any():
            break
        doc[dup] = rng.integers(0, POOL, int(dup.sum()))
    pos = np.tile(np.arange(n_c), n_q)
    label = np.full(n_q * n_c, -1)
    n_rel = rng.poisson(5, n_q)
    n_rel[rng.random(n_q) < 0.05] = 0  # questions without a relevant document
    judged_rel = pos < np.repeat(n_rel, n_c)
    label[judged_rel] = rng.choice([1, 2, 3], int(judged_rel.sum()), p=[0.5, 0.3, 0.2])
    label[~judged_rel & (pos < np.repeat(n_rel + rng.poisson(10, n_q), n_c))] = 0
    quality = 0.8 * np.maximum(label, 0) + rng.normal(0, 1, len(label))
    score = (10 + quality + rng.normal(0, 0.7, len(label))).reshape(n_q, n_c)
    tied = rng.random(n_q) < 0.1
    score[tied] = np.round(score[tied], 1)  # score ties
    top = (np.argsort(-score, axis=1, kind="stable")[:, :depth] + (np.arange(n_q) * n_c)[:, None]).ravel()
    # about one judged document in five is never retrieved (drawn from the pool)
    kept = rng.random(len(label)) < 0.25
    kept[top] = True
    qrels_rows = np.flatnonzero((label >= 0) & kept)
    run = pd.DataFrame({"query_id": q[top], "doc_id": doc[top], "score": score.ravel()[top]})
    qrels = pd.DataFrame({"query_id": q[qrels_rows], "doc_id": doc[qrels_rows], "relevance": label[qrels_rows]})
    if shuffled:
        run = run.iloc[rng.permutation(len(run))].reset_index(drop=True)
    for df in (run, qrels):
        if ids == "str":
            df["query_id"] = "q" + df["query_id"].astype(str)
            df["doc_id"] = "D" + df["doc_id"].astype(str)
        elif ids == "url":
            df["query_id"] = "q" + df["query_id"].astype(str)
            df["doc_id"] = "https://en.wikipedia.org/wiki/Article_" + df["doc_id"].astype(str) + "#section-2"
    return run, qrels


# ---------------------------------------------------------------- tools
def dict_of_dicts(keys: pd.Series, subkeys: pd.Series, values: pd.Series) -> dict:
    """{key: {subkey: value}} built group-wise: one factorise, one dict(zip) per key."""
    codes, uniques = pd.factorize(keys, sort=False)
    sub, val = subkeys.to_numpy(dtype=object), values.to_numpy()
    if len(codes) > 1 and (np.diff(codes) < 0).any():
        order = np.argsort(codes, kind="stable")
        codes, sub, val = codes[order], sub[order], val[order]
    ends = np.cumsum(np.bincount(codes, minlength=len(uniques))).tolist()
    sub_l, val_l, out, start = sub.tolist(), val.tolist(), {}, 0
    for key, end in zip(map(str, uniques.tolist()), ends):
        out[key] = dict(zip(sub_l[start:end], val_l[start:end]))
        start = end
    return out


def run_evalframe(run, qrels, threads: int = 1):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ef.EvalframeWarning)
        return ef.evaluate(run, qrels, EF_MEASURES, missing="drop", threads=threads)


def run_evalframe_2(run, qrels):
    return run_evalframe(run, qrels, threads=2)


def pytrec_dicts(run, qrels):
    as_str = {c: str for c in ("query_id", "doc_id") if not pd.api.types.is_string_dtype(run[c])}
    r, q = run.astype(as_str), qrels.astype(as_str)  # pytrec_eval takes str ids only
    return (dict_of_dicts(q["query_id"], q["doc_id"], q["relevance"]),
            dict_of_dicts(r["query_id"], r["doc_id"], r["score"]))


def run_pytrec_eval(run, qrels):
    import pytrec_eval
    qd, rd = pytrec_dicts(run, qrels)
    return pytrec_eval.RelevanceEvaluator(qd, TREC_MEASURES).evaluate(rd)


def ranx_objects(run, qrels):
    """ranx's Qrels and Run from the same group-wise dicts as pytrec_eval's, through
    ``from_dict`` (what ``from_df`` ends in, after a per-question ``groupby().apply``
    that takes minutes on a shuffled 10M-row run)."""
    from ranx import Qrels, Run
    qd, rd = pytrec_dicts(run, qrels)
    return Qrels.from_dict(qd), Run.from_dict(rd)


def run_ranx(run, qrels):
    from ranx import evaluate
    rq, rr = ranx_objects(run, qrels)
    return evaluate(rq, rr, RANX_MEASURES, return_mean=False, save_results_in_run=False, make_comparable=True)


# ---------------------------------------------------------------- measuring
def _status_kib(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return -1


def timed(fn, *args) -> tuple[float, float]:
    """(seconds, peak MiB above the resident size before the call)."""
    gc.collect()
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        pass
    base = _status_kib("VmRSS")
    t = time.perf_counter()
    out = fn(*args)
    dt = time.perf_counter() - t
    peak = (_status_kib("VmHWM") - base) / 1024
    del out
    return dt, peak


MEMORY_TOOLS = {"evalframe": run_evalframe, "evalframe threads=2": run_evalframe_2, "pytrec_eval": run_pytrec_eval}


def memory_worker(name: str, tool: str, seed: int) -> None:
    """In a fresh process: build the case, then print the peak MiB of one call."""
    n_q, depth, ids, shuffled = {**CASES, **XL, **PER_QUESTION}[name]
    run, qrels = make_case(n_q, depth, ids=ids, shuffled=shuffled, seed=seed)
    gc.collect()
    try:  # hand the generator's freed memory back, or the call would reuse it unseen
        import ctypes
        import pyarrow as pa
        ctypes.CDLL("libc.so.6").malloc_trim(0)
        pa.default_memory_pool().release_unused()
    except (OSError, AttributeError):
        pass
    print(json.dumps(timed(MEMORY_TOOLS[tool], run, qrels)[1]))


def memory(name: str, seed: int) -> dict:
    out = {}
    for tool in MEMORY_TOOLS:
        res = subprocess.run([sys.executable, __file__, "--memory-worker", name, tool, str(seed)],
                             capture_output=True, text=True)
        out[tool] = float(res.stdout.strip().splitlines()[-1]) if res.returncode == 0 else float("nan")
    return out


def bench_case(name: str, run: pd.DataFrame, qrels: pd.DataFrame, repeat: int, threads: list[int]) -> dict:
    tools = {"evalframe": lambda: run_evalframe(run, qrels)}  # one thread: the ratios per core
    for t in threads:
        if t > 1:
            tools[f"evalframe threads={t}"] = lambda t=t: run_evalframe(run, qrels, threads=t)
    try:
        import pytrec_eval
        qd, rd = pytrec_dicts(run, qrels)
        ev = pytrec_eval.RelevanceEvaluator(qd, TREC_MEASURES)
        tools["pytrec_eval"] = lambda: run_pytrec_eval(run, qrels)
        tools["pytrec_eval evaluate() only"] = lambda: ev.evaluate(rd)
        got = run_evalframe(run, qrels).pivot(index="query_id", columns="measure", values="value")
        res = ev.evaluate(rd)
        worst = max(abs(got.loc[q, m] - res[q][t]) for q in list(res)[:300] for m, t in AGREE.items())
        print(f"  max |evalframe - pytrec_eval| on 300 questions: {worst:.1e}")
    except ImportError:
        print("  pytrec_eval not installed (pip install -e '.[bench]')")
    try:
        from ranx import evaluate as rx_evaluate
        rq, rr = ranx_objects(run, qrels)
        rx_evaluate(rq, rr, RANX_MEASURES, return_mean=False, make_comparable=True)  # numba compiles: not timed
        tools["ranx (warm)"] = lambda: run_ranx(run, qrels)
        tools["ranx evaluate() only"] = lambda: rx_evaluate(rq, rr, RANX_MEASURES, return_mean=False, make_comparable=True,
                                                            save_results_in_run=False)
    except ImportError:
        print("  ranx not installed (pip install -e '.[bench]')")
    times: dict[str, list[float]] = {t: [] for t in tools}
    for _ in range(repeat):  # interleaved: a load spike hits every tool alike
        for tool, fn in tools.items():
            gc.collect()
            t = time.perf_counter()
            fn()
            times[tool].append(time.perf_counter() - t)
    med = {t: statistics.median(v) for t, v in times.items()}
    print(f"  {'tool':30s} {'seconds':>8s} {'x evalframe':>12s}")
    for tool in tools:
        print(f"  {tool:30s} {med[tool]:8.3f} {med[tool] / med['evalframe']:12.2f}")
    return {"case": name, "seconds": med, "peak_mib": {}}


CASES = {  # name -> (questions, depth, ids, shuffled)
    "1000x100": (1_000, 100, "str", False),
    "10000x100": (10_000, 100, "str", False),
    "10000x100 shuffled": (10_000, 100, "str", True),
    "10000x100 int ids": (10_000, 100, "int", False),
    "10000x100 URL ids": (10_000, 100, "url", False),
    "7000x1000": (7_000, 1_000, "str", False),
    "7000x1000 shuffled": (7_000, 1_000, "str", True),
}
XL = {"100000x100": (100_000, 100, "str", False), "100000x100 shuffled": (100_000, 100, "str", True)}
# cost grows with rows, not questions: the same 5M rows as many short or fewer long rankings
PER_QUESTION = {"1000000x5": (1_000_000, 5, "str", False), "50000x100": (50_000, 100, "str", False),
                # the cost of a call: small runs, as a notebook's loop over settings evaluates them
                "10x100": (10, 100, "str", False), "100x100": (100, 100, "str", False)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", nargs="+", default=list(CASES), choices=list(CASES) + list(XL) + list(PER_QUESTION))
    ap.add_argument("--xl", action="store_true", help="also 100,000 x 100 (grouped and shuffled)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--threads", type=int, nargs="*", default=[2],
                    help="also evalframe on these thread counts (evaluate(threads=N); 'evalframe' is one thread)")
    ap.add_argument("--memory", action="store_true", help="also peak memory, one fresh process per tool")
    ap.add_argument("--memory-worker", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.memory_worker:
        memory_worker(args.memory_worker[0], args.memory_worker[1], int(args.memory_worker[2]))
        return
    names = args.cases + (list(XL) if args.xl else [])
    print(f"evalframe {ef.__version__}, pandas {pd.__version__}, numpy {np.__version__}")
    summary = []
    for name in names:
        n_q, depth, ids, shuffled = {**CASES, **XL, **PER_QUESTION}[name]
        seed = list({**CASES, **XL, **PER_QUESTION}).index(name)  # the same data for a case in every run
        run, qrels = make_case(n_q, depth, ids=ids, shuffled=shuffled, seed=seed)
        print(f"\n{name}: {len(run):,} run rows, {run['doc_id'].nunique():,} distinct doc ids, "
              f"{len(qrels):,} golden-set rows")
        summary.append(bench_case(name, run, qrels, args.repeat, args.threads))
        del run, qrels
        if args.memory:
            summary[-1]["peak_mib"] = memory(name, seed=seed)
            print("  peak MiB above the input, one call in a fresh process: "
                  + ", ".join(f"{t} {v:.0f}" for t, v in summary[-1]["peak_mib"].items()))
    many = [t for t in args.threads if t > 1]
    print(f"\n{'case':22s} {'evalframe s':>11s} {'pytrec_eval / ef':>17s} {'pytrec evaluate() / ef':>23s} "
          f"{'ranx / ef':>10s} {'ranx evaluate() / ef':>21s} {'peak MiB ef':>12s} {'pytrec':>7s}"
          + "".join(f" {f'ef 1 / {t} threads':>17s} {f'pytrec / ef {t} thr':>18s}" for t in many))
    for s in summary:
        sec, pk = s["seconds"], s["peak_mib"]
        ratio = lambda t, base="evalframe": f"{sec[t] / sec[base]:.2f}" if t in sec and base in sec else "-"  # noqa: E731
        mem = lambda t: f"{pk[t]:.0f}" if t in pk else "-"  # noqa: E731
        print(f"{s['case']:22s} {sec['evalframe']:11.3f} {ratio('pytrec_eval'):>17s} "
              f"{ratio('pytrec_eval evaluate() only'):>23s} {ratio('ranx (warm)'):>10s} "
              f"{ratio('ranx evaluate() only'):>21s} {mem('evalframe'):>12s} {mem('pytrec_eval'):>7s}"
              + "".join(f" {ratio('evalframe', f'evalframe threads={t}'):>17s}"
                        f" {ratio('pytrec_eval', f'evalframe threads={t}'):>18s}" for t in many))


if __name__ == "__main__":
    main()
