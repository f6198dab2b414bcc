"""``evalframe diff OLD_DIR NEW_DIR``: what changed between two saved reports.

A thin composition of :func:`evalframe.read_report` and :func:`evalframe.diff`.
"""
from __future__ import annotations

import argparse
import sys

from .messages import CommandError, run_command

__all__ = ["build_parser", "main", "run", "read_saved_report"]

PROG = "evalframe diff"


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``evalframe diff``."""
    p = argparse.ArgumentParser(prog=PROG, description="What changed between two reports saved by "
                                                       "evalframe report --out (or Report.to_parquet / to_csv).")
    p.add_argument("old", metavar="OLD_DIR", help="the earlier report's folder")
    p.add_argument("new", metavar="NEW_DIR", help="the later report's folder")
    p.add_argument("--across-golden-sets", action="store_true",
                   help="pair questions by id even when the golden sets differ (refused by default)")
    p.add_argument("--confidence", type=float, default=0.95, help="level of the paired intervals (default 0.95)")
    p.add_argument("--format", choices=["text", "markdown"], default="text")
    return p


def read_saved_report(path: str):
    """A saved report (``read_report``): ``DIR`` of ``evalframe report --out DIR`` (its
    ``parquet/`` or ``csv/`` tables) or a folder of ``Report.to_parquet`` / ``to_csv``; a
    one-line user error naming the folder otherwise."""
    from pathlib import Path

    from ..reporting import read_report
    from ..reporting.persist import tables_directory
    d = Path(path)
    if not d.is_dir():
        raise CommandError(f"{path}: not a folder holding a saved report (evalframe report --out DIR)")
    tables = tables_directory(d)  # the folder itself, else its parquet/ or csv/ (report --out DIR)
    if not ((tables / "summary.parquet").exists() or (tables / "summary.csv").exists()):
        raise CommandError(f"{path}: no saved report here (no summary.parquet or summary.csv, nor parquet/ or csv/ "
                           "of evalframe report --out DIR)")
    try:
        return read_report(tables)
    except (OSError, ValueError, KeyError) as exc:
        raise CommandError(f"{path}: cannot read the saved report ({type(exc).__name__}: {exc})") from exc


def run(args: argparse.Namespace) -> int:
    """Diff the two reports of the parsed arguments and print it; returns the exit status."""
    from ..diffing import diff
    result = diff(read_saved_report(args.old), read_saved_report(args.new), across_golden_sets=args.across_golden_sets,
                  confidence=args.confidence)
    sys.stdout.write(result.to_markdown() if args.format == "markdown" else result.to_text())
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``evalframe diff`` (arguments after the command); returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    return run_command(PROG, lambda: run(build_parser().parse_args(argv)))
