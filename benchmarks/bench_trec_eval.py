"""Speed, files to printed output: ``evalframe trec-eval`` vs pytrec_eval and trec_eval.

Writes TREC files once (reused) from ``bench_core.make_case``'s realistic data:
document ids drawn from a pool of 8.8M (about as many distinct ids as rows),
graded labels 0-3, score ties in a tenth of the questions, some questions
without a relevant document, each question's lines in score order (as
systems write them).  Then times, interleaved (every tool once, then again),
medians of ``--repeat``, from the files to the printed output, both
``-m all_trec`` (the summary) and ``-q -m all_trec`` (every question too):

Every tool runs in a fresh process (start-up and imports included, as a user
runs it), output to /dev/null; peak RSS and CPU seconds (user + system, all
threads: a steadier measure than wall time on a loaded machine) are each
child's (``os.wait4``):

- ``evalframe trec-eval`` (``python -c "... evalframe.cli.console_main()" trec-eval ...``, as
  the installed script);
- pytrec_eval: parse both files (``parse_qrel`` / ``parse_run``), evaluate
  ``all_trec``, print the same lines (per question with ``-q``) and the summary;
- trec_eval itself (``--trec-eval PATH``, default ``/tmp/trec_eval_o2/trec_eval``
  when it exists: trec_eval 10 built with ``-O2``).

Usage::

    python benchmarks/bench_trec_eval.py [--sizes 7000x1000 100000x100] [--repeat 1]
                                         [--modes summary q] [--trec-eval PATH] [--tmp /tmp]
                                         [--skip-pytrec] [--skip-trec-eval] [--baseline TREE]
                                         [--bytecode warm|as-is]

Bytecode: as in ``bench_startup.py``, each evalframe tree runs as installed, its ``.pyc``
files written once to a scratch ``PYTHONPYCACHEPREFIX`` before timing (``--bytecode
as-is`` keeps the caller's environment: a tree run with ``PYTHONDONTWRITEBYTECODE=1``
and no ``.pyc`` files compiles every module it imports, about 0.1 s, at every run).

``--threads 1 2`` also times ``evalframe trec-eval --threads N`` (a run file of at least
125,000 lines per thread, grouped by question, is read and scored in blocks, N at once).

``--baseline TREE`` times a second evalframe source tree in the same interleaved
rounds (before/after ratios that a load spike does not bias).
"""
from __future__ import annotations

import argparse
import os
import statistics
import shutil
import subprocess
import sys
import tempfile
import time
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))


def generate(n_q: int, n_d: int, tmp: Path, seed: int = 0) -> tuple[Path, Path]:
    """TREC qrels and run files of ``bench_core.make_case(n_q, n_d)`` (written once)."""
    run_path = tmp / f"evalframe_bench_real_run_{n_q}x{n_d}.txt"
    qrels_path = tmp / f"evalframe_bench_real_qrels_{n_q}x{n_d}.txt"
    if run_path.exists() and qrels_path.exists():
        return qrels_path, run_path
    # in a child process: the children timed later are forked from this one, and a fork
    # starts with its parent's resident pages (ru_maxrss would count the generated data)
    subprocess.run([sys.executable, __file__, "--generate-worker", str(n_q), str(n_d), str(tmp), str(seed)],
                   check=True)
    return qrels_path, run_path


def _generate_files(n_q: int, n_d: int, tmp: Path, seed: int) -> None:
    run_path = tmp / f"evalframe_bench_real_run_{n_q}x{n_d}.txt"
    qrels_path = tmp / f"evalframe_bench_real_qrels_{n_q}x{n_d}.txt"
    from bench_core import make_case
    run, qrels = make_case(n_q, n_d, seed=seed)
    rank = run.groupby("query_id", sort=False).cumcount() + 1
    lines = (run["query_id"] + " Q0 " + run["doc_id"] + " " + rank.astype(str) + " "
             + run["score"].map("{:.6f}".format) + " bench\n")
    run_path.write_text("".join(lines.tolist()))
    qlines = qrels["query_id"] + " 0 " + qrels["doc_id"] + " " + qrels["relevance"].astype(str) + "\n"
    qrels_path.write_text("".join(qlines.tolist()))


def _child(argv: list[str], cwd: Path = ROOT, env: dict | None = None) -> tuple[float, float, float]:
    """Run one command in a fresh process, output to /dev/null: (seconds, peak RSS in
    MiB, CPU seconds: user + system over all its threads)."""
    t = time.perf_counter()
    with open(os.devnull, "wb") as devnull:
        proc = subprocess.Popen(argv, stdout=devnull, cwd=cwd, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - t
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{argv!r} failed")
    return seconds, usage.ru_maxrss / 1024, usage.ru_utime + usage.ru_stime  # Linux: ru_maxrss in KiB


#: set by main(): a scratch folder of each tree's bytecode (``--bytecode warm``), or None
PYCACHE: Path | None = None


def evalframe_subprocess(qrels: Path, run: Path, flags: list[str], checkout: Path = ROOT) -> tuple[float, float, float]:
    """``evalframe trec-eval`` of the source tree ``checkout`` (``python -c`` puts it first on sys.path),
    as the installed script runs it (``console_main``; a tree from before it: ``main``), its bytecode
    read from ``PYCACHE`` (see ``bench_startup.bytecode_env``)."""
    from bench_startup import bytecode_env
    code = "import sys; import evalframe.cli as cli; sys.exit(getattr(cli, 'console_main', cli.main)())"
    return _child([sys.executable, "-c", code, "trec-eval", *flags, "-m", "all_trec", str(qrels), str(run)],
                  cwd=checkout, env=bytecode_env(checkout, PYCACHE))


def pytrec_eval_subprocess(qrels: Path, run: Path, flags: list[str]) -> tuple[float, float, float]:
    return _child([sys.executable, __file__, "--pytrec-worker", str(qrels), str(run), *flags])


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
    def go(qrels: Path, run: Path, flags: list[str]) -> tuple[float, float, float]:
        return _child([path, *flags, "-m", "all_trec", str(qrels), str(run)])
    return go


def main(argv=None) -> int:
    if argv is None and len(sys.argv) > 1 and sys.argv[1] == "--pytrec-worker":
        qrels, run, *flags = sys.argv[2:]
        pytrec_eval_run(Path(qrels), Path(run), flags)
        return 0
    if argv is None and len(sys.argv) > 1 and sys.argv[1] == "--generate-worker":
        n_q, n_d, tmp, seed = sys.argv[2:]
        _generate_files(int(n_q), int(n_d), Path(tmp), int(seed))
        return 0
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", nargs="+", default=["7000x1000", "100000x100"])
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--modes", nargs="+", choices=["summary", "q"], default=["summary", "q"])
    default_bin = "/tmp/trec_eval_o2/trec_eval"
    ap.add_argument("--trec-eval", dest="trec_eval", default=default_bin if os.path.exists(default_bin) else None,
                    help="path of a trec_eval binary (default: the -O2 build in /tmp/trec_eval_o2, if any)")
    ap.add_argument("--tmp", default="/tmp")
    ap.add_argument("--skip-pytrec", action="store_true")
    ap.add_argument("--skip-trec-eval", action="store_true",
                    help="leave trec_eval out (at 100000x100 it takes minutes: it looks questions up one by one)")
    ap.add_argument("--threads", type=int, nargs="*", default=[],
                    help="also evalframe trec-eval --threads N for these N, interleaved ('evalframe trec-eval' "
                         "itself runs with the default: EVALFRAME_THREADS, else the cores)")
    ap.add_argument("--baseline", type=Path, default=None,
                    help="also time the evalframe of this source tree (e.g. an unpacked 'git archive'), interleaved")
    ap.add_argument("--bytecode", choices=["warm", "as-is"], default="warm",
                    help="warm (default): each evalframe tree's bytecode written once to a scratch folder "
                         "before timing, as an installed package has it; as-is: the caller's environment "
                         "(with PYTHONDONTWRITEBYTECODE=1 and no .pyc files, every run compiles the package)")
    args = ap.parse_args(argv)
    tmp = Path(args.tmp)
    global PYCACHE
    scratch = Path(tempfile.mkdtemp(prefix="evalframe_bench_trec_eval_"))
    PYCACHE = scratch / "pycache" if args.bytecode == "warm" else None
    base_name = "evalframe trec-eval"
    contenders = {base_name: evalframe_subprocess}
    for n in args.threads:
        contenders[f"evalframe trec-eval --threads {n}"] = (
            lambda qrels, run, flags, n=n: evalframe_subprocess(qrels, run, ["--threads", str(n), *flags]))
    if args.baseline:
        contenders["evalframe (baseline tree)"] = partial(evalframe_subprocess, checkout=args.baseline.resolve())
    if not args.skip_pytrec:
        contenders["pytrec_eval (parse+evaluate+print)"] = pytrec_eval_subprocess
    if args.trec_eval and not args.skip_trec_eval:
        contenders["trec_eval"] = trec_eval_binary(args.trec_eval)
    tiny_qrels, tiny_run = scratch / "q.txt", scratch / "r.txt"  # bytecode written, imports cached
    tiny_qrels.write_text("q1 0 d1 1\n")
    tiny_run.write_text("q1 Q0 d1 1 1.0 r\n")
    for name, fn in contenders.items():
        if name.startswith("evalframe"):
            fn(tiny_qrels, tiny_run, [])
    summary = []
    for size in args.sizes:
        n_q, n_d = map(int, size.lower().split("x"))
        t = time.perf_counter()
        qrels, run = generate(n_q, n_d, tmp)
        print(f"\n== {n_q:,} questions x {n_d:,} documents = {n_q * n_d:,} run lines "
              f"({run.stat().st_size / 1e6:.0f} MB; qrels {qrels.stat().st_size / 1e6:.0f} MB; "
              f"ready in {time.perf_counter() - t:.1f} s)", flush=True)
        for mode in args.modes:
            flags = ["-q"] if mode == "q" else []
            times: dict[str, list[float]] = {name: [] for name in contenders}
            cpus: dict[str, list[float]] = {name: [] for name in contenders}
            peak: dict[str, float] = {name: 0.0 for name in contenders}
            for _ in range(args.repeat):  # interleaved: a load spike hits every tool alike
                for name, fn in contenders.items():
                    sec, mib, cpu_sec = fn(qrels, run, flags)
                    times[name].append(sec)
                    cpus[name].append(cpu_sec)
                    peak[name] = max(peak[name], mib)
            med = {name: statistics.median(v) for name, v in times.items()}
            cpu = {name: statistics.median(v) for name, v in cpus.items()}
            base = med[base_name]
            print(f"  {' '.join(flags + ['-m', 'all_trec'])}:")
            for name, sec in med.items():
                print(f"    {name:<38} {sec:8.2f} s   {sec / base:6.2f} x evalframe   CPU {cpu[name]:7.2f} s "
                      f"({cpu[name] / cpu[base_name]:5.2f} x)   peak RSS {peak[name]:7.0f} MiB", flush=True)
            summary.append((size, mode, med, peak, cpu))
    print(f"\n{'case':12s} {'mode':8s} {'evalframe s':>11s} {'baseline / ef':>14s} {'pytrec_eval / ef':>17s}"
          f" {'trec_eval / ef':>15s}   peak MiB ({' / '.join(contenders)})   CPU ratios / ef (same order)")
    for size, mode, med, peak, cpu in summary:
        base = med[base_name]
        ratio = lambda k: f"{med[k] / base:.2f}" if k in med else "-"  # noqa: E731
        mem = " / ".join(f"{peak[k]:.0f}" for k in peak)
        cpu_ratios = " / ".join(f"{cpu[k] / cpu[base_name]:.2f}" for k in cpu)
        print(f"{size:12s} {mode:8s} {base:11.2f} {ratio('evalframe (baseline tree)'):>14s} "
              f"{ratio('pytrec_eval (parse+evaluate+print)'):>17s} {ratio('trec_eval'):>15s}   {mem}   {cpu_ratios}")
    shutil.rmtree(scratch)
    return 0


if __name__ == "__main__":
    sys.exit(main())
