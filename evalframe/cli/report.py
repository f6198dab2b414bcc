"""``evalframe report QRELS RUN [RUN ...] [--segments FILE] [--out DIR] ...``: the full report.

A thin composition of :func:`evalframe.read_qrels`, :func:`evalframe.read_run` and
:func:`evalframe.report`. Prints aligned summary and comparison tables; with ``--out``
also writes CSV, Parquet, PNG plots, ``report.md``, ``report.tex`` and ``report.html``
(one self-contained page: open it in a browser, send it, print it). Runs are read, systems named,
warnings shown and errors reported (one line, exit status 2) by
:mod:`evalframe.cli.runs`. A progress bar is drawn on standard error when it is a terminal.
"""
from __future__ import annotations

import argparse
from pathlib import Path
import json
import sys

from .._validation import Interval, check
from .arguments import (add_chunks, add_conventions, add_inputs, add_memory_budget, add_rollup, conventions,
                        memory_budget_arg, parse_measure_args, read_chunks_arg, read_rollup)
from .messages import CommandError, command_words, run_command
from .outputs import check_out_dir
from .runs import read_input, run_source, stdin_once

PROG = "evalframe report"


class Progress:
    """The report's progress bar (tqdm) on standard error when it is a terminal.

    ``step(label)`` names the step starting now; nothing is drawn when the stream is not a
    terminal (unless ``enabled=True``)."""

    def __init__(self, total: int, stream=None, enabled: bool | None = None, width: int = 24):
        from tqdm.auto import tqdm
        stream = stream or sys.stderr
        enabled = stream.isatty() if enabled is None else enabled
        self._bar = tqdm(total=max(total, 1), file=stream, disable=not enabled, leave=False,
                         ncols=width + 90, unit="step", bar_format="{desc:<40.40} [{bar}] {n}/{total} {elapsed}")
        self._started = False

    def step(self, label: str) -> None:
        if self._started:
            self._bar.update(1)
        self._started = True
        self._bar.set_description_str(label[:40], refresh=True)

    def close(self) -> None:
        self._bar.close()


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``evalframe report``."""
    p = argparse.ArgumentParser(
        prog=PROG,
        description="The full report: summary with intervals, paired comparisons, segments, "
                    "diagnostics, plots.")
    add_inputs(p, runs_help="a file may hold many systems in a 'system' column")
    p.add_argument("--segments", metavar="FILE", help="TSV/CSV/Parquet: query_id + segment columns")
    p.add_argument("--segment-columns", nargs="+", metavar="COLUMN",
                   help="the segment columns of --segments to use (default: every column but the question "
                        "id and free text)")
    p.add_argument("-m", "--measures", action="extend", nargs="+", metavar="M",
                   help="measures, e.g. nDCG@10 R@100 AP, or -m nDCG@10 -m AP (default: the spec's seven)")
    p.add_argument("--baseline", metavar="NAME", help="compare every system with this one (default: all pairs)")
    p.add_argument("--stages", nargs="+", metavar="SYSTEM[:K]",
                   help="pipeline stages, first stage first, e.g. first_stage:100 reranked:5, or a token "
                        "budget: reranked:tokens=2000")
    p.add_argument("--out", metavar="DIR",
                   help="write CSV, Parquet, PNG plots, report.md, report.tex and report.html here")
    p.add_argument("--previous", metavar="DIR",
                   help="an earlier saved report (evalframe report --out DIR): report.html and the text say what "
                        "changed since (evalframe diff)")
    p.add_argument("--format", choices=["text", "markdown", "json"], default="text")
    p.add_argument("--changes", type=int, default=1, metavar="N",
                   help="text format: top changes shown per pair and measure and direction (default 1: the "
                        "largest regression and improvement on one line; 0: none)")
    p.add_argument("--confidence", type=float, default=0.95)
    p.add_argument("--n-resamples", type=int, default=10_000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, metavar="N",
                   help="threads of the resampling (default: $EVALFRAME_THREADS, else every core); same numbers")
    p.add_argument("--interval", choices=["bootstrap", "bca", "t", "auto"], default="bootstrap")
    p.add_argument("--test", choices=["randomization", "t", "bootstrap", "bootstrap-t", "wilcoxon", "sign"],
                   default="t")
    p.add_argument("--correction", choices=["holm", "bonferroni", "bh", "none", "tukey", "randomized-tukey"])
    p.add_argument("--unjudged", choices=["nonrelevant", "bounds"],
                   help="nonrelevant: declare that unjudged documents are not relevant (no warning); bounds: "
                        "also the mean if every unjudged document in the cutoff were relevant")
    p.add_argument("--human-qrels", metavar="FILE",
                   help="people's labels on some questions when QRELS holds a model's on all: PPI++ intervals")
    add_conventions(p)
    add_memory_budget(p)
    add_rollup(p)
    add_chunks(p)
    return p


def _stages(items):
    """``name`` or ``name:k`` items -> a dict {name: k} when every item has k, else a list of names."""
    if not items:
        return None
    pairs = [(it.rsplit(":", 1) + [""])[:2] if ":" in it else [it, ""] for it in items]
    if all(k for _, k in pairs):
        try:
            return {name: (k if k.startswith("tokens=") else int(k)) for name, k in pairs}
        except ValueError:
            raise ValueError(f"--stages: k must be an int, got {items!r} (e.g. first_stage:100 reranked:5)") from None
    return [name for name, _ in pairs]


#: what ``--out DIR`` holds: replaced whole on every run, nothing else in DIR is touched
OUT_ENTRIES = ("csv", "parquet", "plots", "report.md", "report.tex", "report.html")


def _ours(folder: Path) -> bool:
    """Whether ``folder`` is absent or one evalframe wrote: tables with a ``summary`` table
    (csv/, parquet/), or only PNG files (plots/)."""
    if not folder.exists():
        return True
    if not folder.is_dir() or folder.is_symlink():
        return False
    if folder.name == "plots":
        return all(f.is_file() and f.suffix == ".png" for f in folder.iterdir())
    return (folder / "summary.csv").is_file() or (folder / "summary.parquet").is_file()


def check_own_folders(out: Path) -> None:
    """Refuse an --out folder whose csv/, parquet/ or plots/ evalframe did not write (it
    replaces its own folders whole), before any work."""
    foreign = [name for name in ("csv", "parquet", "plots") if not _ours(out / name)]
    if foreign:
        raise CommandError(f"--out {out}: {', '.join(f'{n}/' for n in foreign)} there "
                           f"{'is' if len(foreign) == 1 else 'are'} not an earlier evalframe report's (evalframe "
                           "replaces its own folders whole); choose another --out folder")


def _write_out(rep, out: Path, *, golden_set: str, diff=None) -> list[Path]:
    """Write the report's files into a fresh folder beside ``out``, then swap them in for
    the ones an earlier run wrote (:data:`OUT_ENTRIES`), so ``out`` always holds one
    consistent report (no plot of an earlier run left beside the new ones, nothing half
    written if this run fails). A csv/, parquet/ or plots/ folder there that evalframe did
    not write is never removed: the command stops first. Returns the PNG plots written."""
    import shutil
    import tempfile
    check_own_folders(out)
    out.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".evalframe-report-", dir=out))
    try:
        rep.to_csv(tmp / "csv")
        rep.to_parquet(tmp / "parquet")
        (tmp / "report.md").write_text(rep.to_markdown(), encoding="utf-8")
        (tmp / "report.tex").write_text(rep.to_latex(), encoding="utf-8")
        # each plot is built once, for the page (SVG) and plots/ (PNG)
        rep.to_html(tmp / "report.html", golden_set=golden_set, plots_dir=tmp / "plots", diff=diff)
        for name in OUT_ENTRIES:
            old = out / name
            if old.is_dir() and not old.is_symlink():
                shutil.rmtree(old)
            elif old.exists() or old.is_symlink():
                old.unlink()
        for name in OUT_ENTRIES:
            if (tmp / name).exists():
                (tmp / name).rename(out / name)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return sorted((out / "plots").glob("*.png"))


def _json_records(df):
    return json.loads(df.to_json(orient="records", double_precision=6))


def run(args: argparse.Namespace) -> int:
    """Build the report of the parsed arguments and print it; returns the exit status."""
    from ..io import read_golden_set, read_qrels
    from ..reporting import read_segments, report, text_tables

    stdin_once(args.qrels, args.runs)
    check(None, "--changes", args.changes, Interval(int, 0, None))
    measures = parse_measure_args(args.measures)
    stages = _stages(args.stages)
    out = check_out_dir(args.out) if args.out else None
    if out is not None:
        check_own_folders(out)
    previous = None
    if args.previous:
        from .diff import read_saved_report
        previous = read_saved_report(args.previous)
    budget = memory_budget_arg(args)
    progress = Progress(total=len(args.runs) + 9 + (1 if args.out else 0))
    try:
        progress.step("reading the golden set")
        qrels = read_input(args.qrels, read_golden_set, "golden set", columns=args.columns,
                           conflicts=args.conflicts, encoding=args.encoding)
        with run_source(args.runs, duplicates=args.duplicates, budget=budget, progress=progress.step,
                        columns=args.columns, ties=args.ties, encoding=args.encoding,
                        ascending=args.ascending) as runs:
            segments = None
            if args.segments:
                progress.step("reading segments")
                segments = read_input(args.segments, read_segments, "segments", columns=args.columns,
                                      segments=args.segment_columns)
            rep = report(runs, qrels, measures=measures, segments=segments, baseline=args.baseline,
                         stages=stages, confidence=args.confidence, n_resamples=args.n_resamples,
                         seed=args.seed, threads=args.threads, interval=args.interval, test=args.test, correction=args.correction,
                         progress=progress.step, memory_budget=budget,
                         rollup=read_rollup(args.rollup), chunks=read_chunks_arg(args.chunks),
                         min_overlap=args.min_overlap, unjudged=args.unjudged,
                         human_qrels=(read_input(args.human_qrels, read_qrels, "human golden set",
                                                 columns=args.columns, conflicts=args.conflicts,
                                                 encoding=args.encoding) if args.human_qrels else None),
                         **conventions(args))
        changed = None
        if previous is not None:
            from ..diffing import diff
            changed = diff(previous, rep)
        written = []
        if out is not None:
            progress.step("writing tables and plots")
            written = _write_out(rep, out, golden_set=args.qrels, diff=changed)
    finally:
        progress.close()
    if args.format == "markdown":
        sys.stdout.write(rep.to_markdown())
    elif args.format == "json":
        payload = {"metadata": rep.metadata,
                   **{name: _json_records(getattr(rep, name)) for name in
                      ("summary", "comparisons", "by_segment", "stages", "diagnostics")}}
        sys.stdout.write(json.dumps(payload, indent=1) + "\n")
    else:
        sys.stdout.write(command_words(text_tables(rep, changes=args.changes, warnings=False)))
        if changed is not None:
            sys.stdout.write(f"\nSince {args.previous}: " + changed.to_text())
    if out is not None:
        sys.stderr.write(f"wrote {args.out}/: csv/, parquet/, report.md, report.tex, report.html, "
                         f"plots/ ({len(written)} PNG)\n")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``evalframe report`` (arguments after the command); returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    return run_command(PROG, lambda: run(build_parser().parse_args(argv)))
