"""Speed of evaluate() against pytrec_eval and ranx on the same data, in one process.

Reports ratios (the machines are shared and noisy, absolute times are not comparable).
Each tool is timed on what its users do: evalframe from DataFrames (read + check +
rank + every measure per question), pytrec_eval from its dict of dicts (building the
dicts is timed separately), ranx from its Qrels/Run objects (building them from
DataFrames is timed separately).

    python benchmarks/bench_core.py [--queries 10000] [--docs 100] [--repeat 3]
"""
from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

import evalframe as ef

MEASURES = {  # evalframe name -> (pytrec_eval name, ranx name)
    "P@10": ("P_10", "precision@10"),
    "R@100": ("recall_100", "recall@100"),
    "RR": ("recip_rank", "mrr"),
    "nDCG(gain='linear')@10": ("ndcg_cut_10", "ndcg@10"),
    "AP": ("map", "map"),
}


def make_data(n_q: int, n_d: int, seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    q = np.repeat(np.arange(n_q), n_d).astype(str)
    d = (rng.integers(0, 50 * n_d, (n_q, n_d)) * 0 + np.arange(n_d) * 7 + rng.integers(0, 5, (n_q, 1))).ravel()
    s = -np.sort(-rng.random((n_q, n_d)), axis=1).ravel()
    run = pd.DataFrame({"query_id": q, "doc_id": np.char.add("D", d.astype(str)), "score": s})
    n_rel = 20
    qq = np.repeat(np.arange(n_q), n_rel).astype(str)
    dd = rng.integers(0, 7 * n_d + 5, n_q * n_rel)
    qrels = pd.DataFrame({"query_id": qq, "doc_id": np.char.add("D", dd.astype(str)),
                          "relevance": rng.integers(0, 3, n_q * n_rel)})
    qrels = qrels.drop_duplicates(["query_id", "doc_id"])
    return run, qrels


def best_of(fn, repeat):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return min(times), out


def to_dicts(df, col):
    out: dict = {}
    for q, d, v in zip(df["query_id"].to_numpy(object), df["doc_id"].to_numpy(object), df[col].to_numpy()):
        out.setdefault(q, {})[d] = v.item() if hasattr(v, "item") else v
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--queries", type=int, default=10_000)
    ap.add_argument("--docs", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--cranfield", action="store_true", help="use the bundled Cranfield runs instead")
    args = ap.parse_args()
    if args.cranfield:
        ds = ef.datasets.load_cranfield()
        run, qrels = ds.runs[ds.runs.system == "bm25"].drop(columns="system"), ds.qrels
    else:
        run, qrels = make_data(args.queries, args.docs)
    print(f"run rows: {len(run):,}  questions: {run.query_id.nunique():,}  qrels rows: {len(qrels):,}")
    names = list(MEASURES)

    t_ef, per_q = best_of(lambda: ef.evaluate(run, qrels, names, missing="drop"), args.repeat)
    rows = [("evalframe.evaluate (DataFrames in, per-question table out)", t_ef)]

    try:
        import pytrec_eval
        t_conv, (qd, rd) = best_of(lambda: (to_dicts(qrels, "relevance"), to_dicts(run, "score")), 1)
        qd = {q: {d: int(v) for d, v in docs.items()} for q, docs in qd.items()}
        ev = pytrec_eval.RelevanceEvaluator(qd, {m[0] for m in MEASURES.values()})
        t_pt, res = best_of(lambda: ev.evaluate(rd), args.repeat)
        rows += [("pytrec_eval.evaluate (dicts prepared)", t_pt), ("pytrec_eval incl. building dicts", t_pt + t_conv)]
        # agreement on the way
        got = per_q.pivot(index="query_id", columns="measure", values="value")
        worst = max(abs(got.loc[q, n] - res[q][MEASURES[n][0]]) for q in list(res)[:500] for n in names)
        print(f"max |evalframe - pytrec_eval| on 500 questions: {worst:.2e}")
    except ImportError:
        print("pytrec_eval not installed (pip install -e '.[bench]')")

    try:
        from ranx import Qrels, Run, evaluate as rx_evaluate
        obj = {"query_id": object, "doc_id": object}  # ranx wants object-dtype ids
        t_build, (rq, rr) = best_of(lambda: (Qrels.from_df(qrels.astype({**obj, "relevance": int}),
                                                            q_id_col="query_id", doc_id_col="doc_id",
                                                            score_col="relevance"),
                                             Run.from_df(run.astype(obj), q_id_col="query_id", doc_id_col="doc_id",
                                                         score_col="score")), 1)
        rx_names = [m[1] for m in MEASURES.values()]
        rx_evaluate(rq, rr, rx_names)  # numba compiles on first call: not timed
        t_rx, _ = best_of(lambda: rx_evaluate(rq, rr, rx_names, return_mean=False), args.repeat)
        rows += [("ranx.evaluate (Qrels/Run prepared, JIT warm)", t_rx), ("ranx incl. building Qrels/Run", t_rx + t_build)]
    except ImportError:
        print("ranx not installed (pip install -e '.[bench]')")

    print(f"\n{'tool':62s} {'seconds':>8s} {'ratio to evalframe':>20s}")
    for name, t in rows:
        print(f"{name:62s} {t:8.3f} {t / t_ef:20.2f}")


if __name__ == "__main__":
    main()
