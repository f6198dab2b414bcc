"""Start-up of ``evalframe trec-eval``: a two-line file, and a shell loop of small runs.

Issue 31's goals: start-up on a two-line file <= 0.2 s, a loop of 100 small runs at
least 3x faster than before, and a command that imports neither pandas nor scipy nor
matplotlib.  Times, interleaved (every tree once, then again), medians of
``--repeat``; wall seconds and CPU seconds (user + system of the children: steadier
on a loaded machine):

- ``start-up``: one fresh process, ``evalframe trec-eval QRELS RUN`` on a one-line
  golden set and a one-line run, output to /dev/null;
- ``loop``: ``sh -c 'for i in 1 .. N; do evalframe trec-eval ...; done'`` (``--loop N``,
  100 by default), as a user evaluating many runs in a shell;
- ``trec_eval`` itself when found (``--trec-eval PATH`` or on the PATH).

It also prints which heavy modules the command leaves loaded (pandas, scipy,
matplotlib, pyarrow, numpy) and the slowest imports (``python -X importtime``).

Bytecode: an installed package has its ``.pyc`` files; a source tree run with
``PYTHONDONTWRITEBYTECODE=1`` (or stale ``.pyc``) compiles every evalframe module at
each start (about 0.07 s of CPU).  By default every tool runs as installed: the
bytecode is written once to a scratch ``PYTHONPYCACHEPREFIX`` before timing;
``--bytecode as-is`` keeps the caller's environment.

    python benchmarks/bench_startup.py [--repeat 5] [--loop 100] [--baseline TREE] [--trec-eval PATH]
                                       [--bytecode warm|as-is] [--flags "-q -c -m all_trec"]

``--flags`` are trec_eval's flags for every tool (default none): ``-q -c -m all_trec`` times
the per-question output, the ``-c`` placeholder rankings and every measure.

``--baseline TREE`` times a second evalframe source tree in the same rounds
(before/after ratios that a load spike does not bias).

``--pythons venv installed`` runs each tree under two interpreters: ``venv``, this one
(the default), as the repository's ``make`` sets it up (an editable install, whose import
finder setuptools runs from a ``.pth`` file at every start); and ``installed``, a scratch
venv that finds this one's packages without running its ``.pth`` files, as a Python with
evalframe installed from a wheel starts (the tree on ``PYTHONPATH`` either way).  Measured
at issue 31's close they start alike: the finder's imports (pathlib and the like) are ones
the command makes anyway.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("pandas", "scipy", "matplotlib", "pyarrow", "numpy")
#: what the installed ``evalframe`` script runs (``console_main``; a tree from before it: ``main``)
COMMAND = "import sys\nimport evalframe.cli as cli\nsys.exit(getattr(cli, 'console_main', cli.main)())"


def timed(argv: list[str], env: dict, cwd: Path | None = None) -> tuple[float, float]:
    """Wall and CPU seconds (the child's user + system) of one command, output discarded."""
    before = os.times()
    t0 = time.perf_counter()
    subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, check=True, cwd=cwd)
    wall = time.perf_counter() - t0
    after = os.times()
    return wall, (after.children_user - before.children_user) + (after.children_system - before.children_system)


#: set by main(): a scratch bytecode folder (``--bytecode warm``), or None
PYCACHE: Path | None = None


def installed_python(tmp: Path) -> str:
    """A Python that starts as one with evalframe installed from a wheel: a scratch venv
    (no pip) whose one ``.pth`` line lists this interpreter's site-packages, so numpy and
    pyarrow are found there but that folder's own ``.pth`` files are not run."""
    import site
    import venv
    where = tmp / "installed"
    venv.EnvBuilder(with_pip=False, symlinks=True).create(where)
    python = where / "bin" / "python"
    purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    (Path(purelib) / "dev_venv_packages.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    return str(python)


def bytecode_env(tree: Path, pycache: Path | None) -> dict:
    """The environment a command of the source tree ``tree`` runs in: the tree on
    ``PYTHONPATH``; with ``pycache`` (a scratch folder), its bytecode written there once and
    read from then on, as an installed package's (``PYTHONDONTWRITEBYTECODE`` dropped)."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    if pycache is not None:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(pycache / str(tree.resolve()).strip("/").replace("/", "_"))
    return env


def tree_env(tree: Path) -> dict:
    return bytecode_env(tree, PYCACHE)


def loaded_modules(tree: Path, qrels: Path, run: Path, flags: list[str]) -> dict:
    probe = (f"import io, json, sys, contextlib\nfrom evalframe.cli import main\n"
             f"with contextlib.redirect_stdout(io.StringIO()):\n"
             f"    main(['trec-eval', *{flags!r}, {str(qrels)!r}, {str(run)!r}])\n"
             f"print(json.dumps({{m: m in sys.modules for m in {HEAVY!r}}}))")
    out = subprocess.run([sys.executable, "-c", probe], env=tree_env(tree), capture_output=True, text=True, check=True,
                         cwd=tree)
    return json.loads(out.stdout.splitlines()[-1])


def slowest_imports(tree: Path, qrels: Path, run: Path, flags: list[str], top: int = 8) -> list[tuple[int, str]]:
    """The top-level imports that took longest (cumulative microseconds), from ``-X importtime``."""
    done = subprocess.run([sys.executable, "-X", "importtime", "-c", COMMAND, "trec-eval", *flags, str(qrels), str(run)],
                          env=tree_env(tree), capture_output=True, text=True, check=True, cwd=tree)
    rows = []
    for line in done.stderr.splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        _, cumulative, name = line[len("import time:"):].split("|")
        if name.startswith(" ") and not name.startswith("  "):  # a top-level import
            rows.append((int(cumulative), name.strip()))
    return sorted(rows, reverse=True)[:top]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--loop", type=int, default=100)
    ap.add_argument("--baseline", type=Path, help="another evalframe source tree, timed in the same rounds")
    ap.add_argument("--trec-eval", default=shutil.which("trec_eval"))
    ap.add_argument("--bytecode", choices=["warm", "as-is"], default="warm")
    ap.add_argument("--flags", default="", help="trec_eval's flags for every tool, e.g. '-q -c -m all_trec'")
    ap.add_argument("--pythons", nargs="+", choices=["venv", "installed"], default=["venv"])
    args = ap.parse_args()
    flags = args.flags.split()

    global PYCACHE
    tmp = Path(tempfile.mkdtemp(prefix="evalframe_startup_"))
    PYCACHE = tmp / "pycache" if args.bytecode == "warm" else None
    qrels, run = tmp / "q.txt", tmp / "r.txt"
    qrels.write_text("q1 0 d1 1\n")
    run.write_text("q1 Q0 d1 1 1.0 r\n")
    trees = {"evalframe": ROOT} | ({"baseline": args.baseline.resolve()} if args.baseline else {})
    # each tree's command runs in the tree: ``python -c`` puts the working directory first on
    # sys.path, so run from another tree it would import that tree's evalframe
    pythons = {"venv": sys.executable} | ({"installed": installed_python(tmp)} if "installed" in args.pythons else {})
    tools = {f"{name} ({kind})": ([python, "-c", COMMAND, "trec-eval", *flags, str(qrels), str(run)], tree_env(tree),
                                  tree)
             for name, tree in trees.items() for kind, python in pythons.items() if kind in args.pythons}
    if args.trec_eval:
        tools["trec_eval"] = ([args.trec_eval, *flags, str(qrels), str(run)], dict(os.environ), None)

    for name, (argv, env, cwd) in tools.items():  # bytecode written (--bytecode warm), files cached
        subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, check=True, cwd=cwd)
    print(f"bytecode: {args.bytecode}; flags: {' '.join(flags) or '(none)'}")
    for name, tree in trees.items():
        print(f"{name} ({tree}): loaded after trec-eval: {loaded_modules(tree, qrels, run, flags)}")
        print("  slowest top-level imports (ms): "
              + ", ".join(f"{n} {us / 1000:.0f}" for us, n in slowest_imports(tree, qrels, run, flags)))

    shell = {name: (["sh", "-c", f'for i in $(seq {args.loop}); do "$@" >/dev/null; done', "loop", *argv], env, cwd)
             for name, (argv, env, cwd) in tools.items()}
    start: dict[str, list] = {n: [] for n in tools}
    loop: dict[str, list] = {n: [] for n in tools}
    for _ in range(args.repeat):  # interleaved: a load spike hits every tool alike
        for name in tools:
            start[name].append(timed(*tools[name]))
        for name in tools:
            loop[name].append(timed(*shell[name]))

    def med(rows, i):
        return statistics.median(r[i] for r in rows)

    print(f"\nmedians of {args.repeat}, seconds (wall / CPU)")
    print(f"  {'tool':22s} {'start-up':>17s} {f'loop of {args.loop}':>19s}")
    for name in tools:
        print(f"  {name:22s} {med(start[name], 0):8.3f} / {med(start[name], 1):6.3f} "
              f"{med(loop[name], 0):9.2f} / {med(loop[name], 1):7.2f}")
    for kind in (args.pythons if args.baseline else []):
        ours, base = loop[f"evalframe ({kind})"], loop[f"baseline ({kind})"]
        print(f"  loop, baseline / evalframe ({kind}): wall {med(base, 0) / med(ours, 0):.2f}x, "
              f"CPU {med(base, 1) / med(ours, 1):.2f}x")
    shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
