"""Speed, file to printed output: ``evalframe trec-eval -m all_trec`` vs pytrec_eval.

Generates TREC run files (7,000 questions x 1,000 documents and 100,000
questions x 100 documents) with matching qrels into /tmp (once; reused), then
times, from the files to the printed summary:

- ``evalframe trec-eval -m all_trec QRELS RUN`` in-process (``main()``, stdout
  to /dev/null) and as a subprocess (``python -m evalframe.cli trec-eval ...``);
- pytrec_eval: parse both files (``pytrec_eval.parse_qrel/parse_run``), evaluate
  ``all_trec``, aggregate and print the same summary;
- optionally trec_eval itself (``--trec-eval PATH``).

Usage::

    python benchmarks/bench_trec_eval.py [--sizes 7000x1000 100000x100] [--repeat 1]
                                         [--trec-eval /path/to/trec_eval] [--tmp /tmp]
"""
from __future__ import annotations

import argparse
import contextlib
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def generate(n_q: int, n_d: int, tmp: Path, seed: int = 0, order: str = "score") -> tuple[Path, Path]:
    """A run of n_q questions x n_d documents and qrels judging ~n_d/5 of them
    (plus some unretrieved documents) per question, labels 0..2.  Scores have
    two decimals (many ties); ``order="score"`` writes each question's lines by
    score, as retrieval systems do, ``"shuffled"`` in random score order."""
    suffix = "" if order == "shuffled" else "_sorted"
    run_path = tmp / f"evalframe_bench_run_{n_q}x{n_d}{suffix}.txt"
    qrels_path = tmp / f"evalframe_bench_qrels_{n_q}x{n_d}.txt"
    if run_path.exists() and qrels_path.exists():
        return qrels_path, run_path
    rng = np.random.default_rng(seed)
    n = n_q * n_d
    q = np.repeat(np.arange(n_q), n_d)
    # documents from a pool of 5 * n_d per question, no repeats within a question
    pool = 5 * n_d
    docs = np.concatenate([rng.choice(pool, n_d, replace=False) for _ in range(n_q)]) if n_q <= 10_000 else \
        (np.argsort(rng.random((n_q, pool // 5 * 2)), axis=1)[:, :n_d]).ravel()
    score = np.round(rng.random(n) * 100, 2)  # two decimals: many ties
    if order == "score":
        score = -np.sort(-score.reshape(n_q, n_d), axis=1).ravel()
    rank = np.tile(np.arange(1, n_d + 1), n_q)
    qs = np.char.add("q", q.astype(str))
    ds = np.char.add("D", docs.astype(str))
    lines = np.char.add(np.char.add(np.char.add(qs, " Q0 "), ds), " ")
    tail = np.char.add(np.char.add(np.char.add(rank.astype(str), " "), np.char.mod("%.2f", score)), " bench\n")
    run_path.write_text("".join(np.char.add(lines, tail).tolist()))
    # qrels: every 5th retrieved doc, plus n_d // 10 unretrieved docs (ids >= pool)
    judged = np.arange(n) % 5 == 0
    jq, jd = q[judged], docs[judged]
    extra = max(n_d // 10, 1)
    eq = np.repeat(np.arange(n_q), extra)
    ed = pool + np.tile(np.arange(extra), n_q)
    allq, alld = np.concatenate([jq, eq]), np.concatenate([jd, ed])
    lab = rng.choice(3, len(allq), p=[0.6, 0.3, 0.1])
    qlines = np.char.add(np.char.add(np.char.add(np.char.add("q", allq.astype(str)), " 0 D"), alld.astype(str)),
                         np.char.add(" ", np.char.add(lab.astype(str), "\n")))
    qrels_path.write_text("".join(qlines.tolist()))
    return qrels_path, run_path


def _best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def evalframe_inprocess(qrels: Path, run: Path) -> None:
    sys.path.insert(0, str(ROOT))
    from evalframe.trec_eval import main
    with open(os.devnull, "w") as devnull, contextlib.redirect_stdout(devnull):
        code = main(["-m", "all_trec", str(qrels), str(run)])
    assert code == 0


def evalframe_subprocess(qrels: Path, run: Path) -> None:
    code = "import sys; from evalframe.cli import main; sys.exit(main())"
    subprocess.run([sys.executable, "-c", code, "trec-eval", "-m", "all_trec", str(qrels), str(run)],
                   check=True, stdout=subprocess.DEVNULL, cwd=ROOT)


def pytrec_eval_run(qrels: Path, run: Path) -> None:
    import pytrec_eval
    with open(qrels) as fh:
        qd = pytrec_eval.parse_qrel(fh)
    with open(run) as fh:
        rd = pytrec_eval.parse_run(fh)
    ev = pytrec_eval.RelevanceEvaluator(qd, {"all_trec"})
    res = ev.evaluate(rd)
    names = list(next(iter(res.values())).keys())
    out = []
    for name in names:
        vals = [v[name] for v in res.values()]
        out.append(f"{name:<22}\tall\t{pytrec_eval.compute_aggregated_measure(name, vals):6.4f}\n")
    with open(os.devnull, "w") as devnull:
        devnull.write("".join(out))


def trec_eval_binary(path: str):
    def go(qrels: Path, run: Path) -> None:
        subprocess.run([path, "-m", "all_trec", str(qrels), str(run)], check=True, stdout=subprocess.DEVNULL)
    return go


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", nargs="+", default=["7000x1000", "100000x100"])
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--trec-eval", dest="trec_eval", default=None, help="path of a trec_eval binary")
    ap.add_argument("--tmp", default="/tmp")
    ap.add_argument("--skip-pytrec", action="store_true")
    ap.add_argument("--order", choices=["score", "shuffled"], default="score",
                    help="run lines in score order (as systems write them; default) or shuffled")
    args = ap.parse_args(argv)
    tmp = Path(args.tmp)
    for size in args.sizes:
        n_q, n_d = map(int, size.lower().split("x"))
        t = time.perf_counter()
        qrels, run = generate(n_q, n_d, tmp, order=args.order)
        print(f"\n== {n_q:,} questions x {n_d:,} documents = {n_q * n_d:,} run lines "
              f"({run.stat().st_size / 1e6:.0f} MB; qrels {qrels.stat().st_size / 1e6:.0f} MB; "
              f"ready in {time.perf_counter() - t:.1f} s)")
        contenders = {
            "evalframe trec-eval (in-process)": evalframe_inprocess,
            "evalframe trec-eval (subprocess)": evalframe_subprocess,
        }
        if not args.skip_pytrec:
            contenders["pytrec_eval (parse+evaluate+print)"] = pytrec_eval_run
        if args.trec_eval:
            contenders[f"trec_eval ({args.trec_eval})"] = trec_eval_binary(args.trec_eval)
        times = {}
        for name, fn in contenders.items():
            times[name] = _best(lambda: fn(qrels, run), args.repeat)
            print(f"  {name:<38} {times[name]:8.2f} s")
        base = times["evalframe trec-eval (in-process)"]
        sub = times["evalframe trec-eval (subprocess)"]
        for name, sec in times.items():
            if not name.startswith("evalframe"):
                print(f"  {name} / evalframe: {sec / base:.2f}x (in-process), {sec / sub:.2f}x (subprocess)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
