"""Command line: ``evalframe report QRELS RUN [RUN ...] [--segments FILE] [--out DIR] ...``.

A thin composition of :func:`evalframe.read_qrels`, :func:`evalframe.read_run` and
:func:`evalframe.report`. Prints aligned summary and comparison tables; with ``--out``
also writes CSV, Parquet, PNG plots and ``report.md``. Errors go to standard error with
exit status 2. A progress bar is drawn on standard error when it is a terminal.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path


class Progress:
    """A one-line progress bar on a terminal (nothing when stderr is not a tty)."""

    def __init__(self, total: int, stream=None, enabled: bool | None = None, width: int = 24):
        self.total, self.done, self.width = max(total, 1), 0, width
        self.stream = stream or sys.stderr
        self.enabled = self.stream.isatty() if enabled is None else enabled
        self.t0 = time.perf_counter()

    def step(self, label: str) -> None:
        if self.enabled:
            frac = min(self.done / self.total, 1.0)
            bar = "#" * round(frac * self.width)
            self.stream.write(f"\r[{bar:<{self.width}}] {self.done}/{self.total} {label[:48]:<48} "
                              f"{time.perf_counter() - self.t0:5.1f}s")
            self.stream.flush()
        self.done += 1

    def close(self) -> None:
        if self.enabled:
            self.stream.write("\r" + " " * (self.width + 70) + "\r")
            self.stream.flush()


def build_parser() -> argparse.ArgumentParser:
    from .cli import _add_conventions

    p = argparse.ArgumentParser(
        prog="evalframe report",
        description="The full report: summary with intervals, paired comparisons, segments, "
                    "diagnostics, plots.")
    p.add_argument("qrels", help="golden set: TREC qrels, CSV/TSV, Parquet or JSONL")
    p.add_argument("runs", nargs="+", help="one or more runs (TREC, CSV/TSV, Parquet, JSONL); "
                                           "a file may hold many systems in a 'system' column")
    p.add_argument("--segments", metavar="FILE", help="TSV/CSV/Parquet: query_id + segment columns")
    p.add_argument("-m", "--measures", nargs="+", metavar="M",
                   help="measures, e.g. nDCG@10 R@100 AP (default: the spec's seven)")
    p.add_argument("--baseline", metavar="NAME", help="compare every system with this one (default: all pairs)")
    p.add_argument("--stages", nargs="+", metavar="SYSTEM[:K]",
                   help="pipeline stages, first stage first, e.g. first_stage:100 reranked:5")
    p.add_argument("--out", metavar="DIR", help="write CSV, Parquet, PNG plots and report.md here")
    p.add_argument("--format", choices=["text", "markdown", "json"], default="text")
    p.add_argument("--confidence", type=float, default=0.95)
    p.add_argument("--n-resamples", type=int, default=10_000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--interval", choices=["bootstrap", "bca", "t", "auto"], default="bootstrap")
    p.add_argument("--test", choices=["randomization", "t", "bootstrap", "wilcoxon", "sign"],
                   default="randomization")
    p.add_argument("--correction", choices=["holm", "bonferroni", "bh", "none", "tukey", "randomized-tukey"])
    _add_conventions(p)
    return p


def _stages(items):
    """``name`` or ``name:k`` items -> a dict {name: k} when every item has k, else a list of names."""
    if not items:
        return None
    pairs = [(it.rsplit(":", 1) + [""])[:2] if ":" in it else [it, ""] for it in items]
    if all(k for _, k in pairs):
        try:
            return {name: int(k) for name, k in pairs}
        except ValueError:
            raise ValueError(f"--stages: k must be an int, got {items!r} (e.g. first_stage:100 reranked:5)") from None
    return [name for name, _ in pairs]


def _read_runs(paths: list[str], duplicates: str, progress: Progress):
    import pandas as pd
    from .io import read_run

    parts = []
    for i, path in enumerate(paths):
        progress.step(f"reading run {i + 1}/{len(paths)}: {Path(path).name}")
        part = read_run(path, duplicates=duplicates)
        if "system" not in part:
            part.insert(0, "system", Path(path).name.split(".")[0])
        parts.append(part)
    run = pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0]
    if len(parts) > 1:
        per_file = [set(p["system"].unique()) for p in parts]
        seen: set = set()
        for s in per_file:
            if seen & s:
                from .errors import EvalframeInputError, InputProblem
                raise EvalframeInputError("run", [InputProblem(
                    f"system name(s) {sorted(seen & s)[:5]} appear in more than one run file",
                    "give each run file its own system name (TREC tag column or file name)")])
            seen |= s
    return run


def _json_records(df):
    return json.loads(df.to_json(orient="records", double_precision=6))


def run(args) -> int:
    from .io import read_qrels
    from .report import report, read_segments, text_tables

    progress = Progress(total=len(args.runs) + 9 + (1 if args.out else 0))
    try:
        progress.step("reading the golden set")
        qrels = read_qrels(args.qrels)
        runs = _read_runs(args.runs, args.duplicates, progress)
        segments = None
        if args.segments:
            progress.step("reading segments")
            segments = read_segments(args.segments)
        rep = report(runs, qrels, measures=args.measures, segments=segments, baseline=args.baseline,
                     stages=_stages(args.stages), confidence=args.confidence, n_resamples=args.n_resamples,
                     seed=args.seed, interval=args.interval, test=args.test, correction=args.correction,
                     progress=progress.step, rel=args.rel, ties=args.ties, missing=args.missing,
                     depth=args.depth, duplicates=args.duplicates)
        written = []
        if args.out:
            out = Path(args.out)
            progress.step("writing tables and plots")
            rep.to_csv(out / "csv")
            rep.to_parquet(out / "parquet")
            (out / "report.md").write_text(rep.to_markdown(), encoding="utf-8")
            (out / "report.tex").write_text(rep.to_latex(), encoding="utf-8")
            import matplotlib
            matplotlib.use("Agg")
            written = rep.save_plots(out / "plots")
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
        sys.stdout.write(text_tables(rep))
    if args.out:
        sys.stderr.write(f"wrote {args.out}/: csv/, parquet/, report.md, report.tex, "
                         f"plots/ ({len(written)} PNG)\n")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``evalframe report``; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse: usage error (2) or --help (0)
        return int(exc.code or 0)
    from .errors import EvalframeInputError

    def _show(message, category, filename, lineno, file=None, line=None):
        sys.stderr.write(f"warning: {message}\n")

    old = warnings.showwarning
    warnings.showwarning = _show
    try:
        return run(args)
    except (EvalframeInputError, FileNotFoundError, ValueError, TypeError, OSError) as exc:
        sys.stderr.write(f"evalframe report: error: {exc}\n")
        return 2
    finally:
        warnings.showwarning = old


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
