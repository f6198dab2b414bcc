"""Speed, files to printed output: ``evalframe trec-eval`` vs pytrec_eval and trec_eval.

Writes TREC files once (reused) from ``bench_core.make_case``'s realistic data:
document ids drawn from a pool of 8.8M (about as many distinct ids as rows),
graded labels 0-3, score ties in a tenth of the questions, some questions
without a relevant document, each question's lines in score order (as
systems write them).  Then times, interleaved (every tool once, then again),
medians of ``--repeat``, from the files to the printed output, both
``-m all_trec`` (the summary) and ``-q -m all_trec`` (every question too):

- ``evalframe trec-eval`` in-process (``main()``, output to /dev/null) and as a
  subprocess (``python -m evalframe.cli trec-eval ...``, start-up included);
- pytrec_eval: parse both files (``parse_qrel`` / ``parse_run``), evaluate
  ``all_trec``, print the same lines (per question with ``-q``) and the summary;
- trec_eval itself (``--trec-eval PATH``, default ``/tmp/trec_eval_o2/trec_eval``
  when it exists: trec_eval 10 built with ``-O2``).

Usage::

    python benchmarks/bench_trec_eval.py [--sizes 7000x1000 100000x100] [--repeat 3]
                                         [--modes summary q] [--trec-eval PATH] [--tmp /tmp]
"""
from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))


def generate(n_q: int, n_d: int, tmp: Path, seed: int = 0) -> tuple[Path, Path]:
    """TREC qrels and run files of ``bench_core.make_case(n_q, n_d)`` (written once)."""
    run_path = tmp / f"evalframe_bench_real_run_{n_q}x{n_d}.txt"
    qrels_path = tmp / f"evalframe_bench_real_qrels_{n_q}x{n_d}.txt"
    if run_path.exists() and qrels_path.exists():
        return qrels_path, run_path
    from bench_core import make_case
    run, qrels = make_case(n_q, n_d, seed=seed)
    rank = run.groupby("query_id", sort=False).cumcount() + 1
    lines = (run["query_id"] + " Q0 " + run["doc_id"] + " " + rank.astype(str) + " "
             + run["score"].map("{:.6f}".format) + " bench\n")
    run_path.write_text("".join(lines.tolist()))
    qlines = qrels["query_id"] + " 0 " + qrels["doc_id"] + " " + qrels["relevance"].astype(str) + "\n"
    qrels_path.write_text("".join(qlines.tolist()))
    return qrels_path, run_path


def _best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def evalframe_inprocess(qrels: Path, run: Path, flags: list[str]) -> None:
    sys.path.insert(0, str(ROOT))
    from evalframe.trec_eval import main
    with open(os.devnull, "w") as devnull, contextlib.redirect_stdout(devnull):
        code = main([*flags, "-m", "all_trec", str(qrels), str(run)])
    assert code == 0


def evalframe_subprocess(qrels: Path, run: Path, flags: list[str]) -> None:
    code = "import sys; from evalframe.cli import main; sys.exit(main())"
    subprocess.run([sys.executable, "-c", code, "trec-eval", *flags, "-m", "all_trec", str(qrels), str(run)],
                   check=True, stdout=subprocess.DEVNULL, cwd=ROOT)


def pytrec_eval_run(qrels: Path, run: Path, flags: list[str]) -> None:
    import pytrec_eval
    with open(qrels) as fh:
        qd = pytrec_eval.parse_qrel(fh)
    with open(run) as fh:
        rd = pytrec_eval.parse_run(fh)
    ev = pytrec_eval.RelevanceEvaluator(qd, {"all_trec"})
    res = ev.evaluate(rd)
    names = list(next(iter(res.values())).keys())
    out = []
    if "-q" in flags:  # trec_eval -q: every question's lines, questions in strcmp order
        for q in sorted(res):
            vals = res[q]
            out.extend(f"{name:<22}\t{q}\t{vals[name]:6.4f}\n" for name in names)
    for name in names:
        vals = [v[name] for v in res.values()]
        out.append(f"{name:<22}\tall\t{pytrec_eval.compute_aggregated_measure(name, vals):6.4f}\n")
    with open(os.devnull, "w") as devnull:
        devnull.write("".join(out))


def trec_eval_binary(path: str):
    def go(qrels: Path, run: Path, flags: list[str]) -> None:
        subprocess.run([path, *flags, "-m", "all_trec", str(qrels), str(run)], check=True,
                       stdout=subprocess.DEVNULL)
    return go


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", nargs="+", default=["7000x1000", "100000x100"])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--modes", nargs="+", choices=["summary", "q"], default=["summary", "q"])
    default_bin = "/tmp/trec_eval_o2/trec_eval"
    ap.add_argument("--trec-eval", dest="trec_eval", default=default_bin if os.path.exists(default_bin) else None,
                    help="path of a trec_eval binary (default: the -O2 build in /tmp/trec_eval_o2, if any)")
    ap.add_argument("--tmp", default="/tmp")
    ap.add_argument("--skip-pytrec", action="store_true")
    ap.add_argument("--skip-subprocess", action="store_true")
    args = ap.parse_args(argv)
    tmp = Path(args.tmp)
    summary = []
    for size in args.sizes:
        n_q, n_d = map(int, size.lower().split("x"))
        t = time.perf_counter()
        qrels, run = generate(n_q, n_d, tmp)
        print(f"\n== {n_q:,} questions x {n_d:,} documents = {n_q * n_d:,} run lines "
              f"({run.stat().st_size / 1e6:.0f} MB; qrels {qrels.stat().st_size / 1e6:.0f} MB; "
              f"ready in {time.perf_counter() - t:.1f} s)")
        contenders = {"evalframe trec-eval (in-process)": evalframe_inprocess}
        if not args.skip_subprocess:
            contenders["evalframe trec-eval (subprocess)"] = evalframe_subprocess
        if not args.skip_pytrec:
            contenders["pytrec_eval (parse+evaluate+print)"] = pytrec_eval_run
        if args.trec_eval:
            contenders["trec_eval"] = trec_eval_binary(args.trec_eval)
        for mode in args.modes:
            flags = ["-q"] if mode == "q" else []
            times: dict[str, list[float]] = {name: [] for name in contenders}
            for _ in range(args.repeat):  # interleaved: a load spike hits every tool alike
                for name, fn in contenders.items():
                    t = time.perf_counter()
                    fn(qrels, run, flags)
                    times[name].append(time.perf_counter() - t)
            med = {name: statistics.median(v) for name, v in times.items()}
            base = med["evalframe trec-eval (in-process)"]
            print(f"  {' '.join(flags + ['-m', 'all_trec'])}:")
            for name, sec in med.items():
                print(f"    {name:<38} {sec:8.2f} s   {sec / base:6.2f} x evalframe")
            summary.append((size, mode, med))
    print(f"\n{'case':12s} {'mode':8s} {'evalframe s':>11s} {'pytrec_eval / ef':>17s} {'trec_eval / ef':>15s}")
    for size, mode, med in summary:
        base = med["evalframe trec-eval (in-process)"]
        ratio = lambda k: f"{med[k] / base:.2f}" if k in med else "-"  # noqa: E731
        print(f"{size:12s} {mode:8s} {base:11.2f} {ratio('pytrec_eval (parse+evaluate+print)'):>17s} "
              f"{ratio('trec_eval'):>15s}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
