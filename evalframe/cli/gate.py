"""``evalframe gate QRELS BASELINE CANDIDATE -m M [-m M ...] --margin X``: a CI gate.

A thin composition of :func:`evalframe.read_qrels`, :func:`evalframe.read_run` and
:func:`evalframe.gate`. Exit status 0 pass, 1 fail (significantly worse beyond the
margin), 3 inconclusive, 2 user error (as every command).
"""
from __future__ import annotations

import argparse
import sys

from .arguments import add_conventions, column_map, conventions, parse_measure_args
from .messages import CommandError, run_command
from .outputs import check_out_file
from .runs import read_input, run_reader

__all__ = ["build_parser", "main", "run"]

PROG = "evalframe gate"

#: the conventions flags' defaults: with --baseline-report only flags set otherwise are checked against it
DEFAULTS = {"rel": 1, "ties": "doc_id_desc", "missing": "zero", "depth": None, "duplicates": "error",
            "conflicts": "error", "no_relevant": "zero", "ascending": False}


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``evalframe gate``."""
    p = argparse.ArgumentParser(
        prog=PROG, description="Fail the build if retrieval got worse: a one-sided non-inferiority test per "
                               "measure (candidate not worse than baseline by more than the margin), Holm "
                               "across the measures. Exit 0 pass, 1 fail, 3 inconclusive, 2 user error.")
    p.add_argument("qrels", help="golden set: TREC qrels, CSV/TSV, Parquet or JSONL")
    p.add_argument("runs", nargs="+", metavar="RUN",
                   help="BASELINE CANDIDATE: the two runs (one system each); with --baseline-report, CANDIDATE only")
    p.add_argument("--baseline-report", metavar="DIR",
                   help="a saved report (evalframe report --out DIR) holding the baseline's per-question values: "
                        "the candidate is evaluated with its conventions, on the same golden set (checked)")
    p.add_argument("--baseline-system", metavar="NAME",
                   help="the saved report's system to gate against (default: its baseline, or its only system)")
    p.add_argument("-m", "--measures", action="extend", nargs="+", metavar="M", required=True,
                   help="measures that must not get worse, e.g. -m R@5 -m nDCG@10")
    p.add_argument("--margin", type=float, default=0.0,
                   help="how much worse still counts as not worse, in the measure's units (default 0)")
    p.add_argument("--alpha", type=float, default=0.05, help="level of each test, Holm across measures "
                                                            "(default 0.05)")
    p.add_argument("--sequential", action="store_true",
                   help="anytime-valid tests (betting confidence sequences): valid however often the gate "
                        "is re-run as labels arrive")
    p.add_argument("--summary", metavar="FILE", help="write a Markdown summary (e.g. $GITHUB_STEP_SUMMARY)")
    p.add_argument("--junit", metavar="FILE", help="write a JUnit XML report (one test case per measure)")
    p.add_argument("--columns", type=column_map, metavar="NAME=CANON[,...]",
                   help="your column names -> canonical ones for every input table")
    p.add_argument("--encoding", default="utf-8", help="encoding of text files (default utf-8)")
    add_conventions(p)
    return p


def run(args: argparse.Namespace) -> int:
    """Run the gate on the parsed arguments, print the decision; returns the exit status."""
    from ..gating import gate
    from ..io import read_golden_set

    measures = [str(m) for m in parse_measure_args(args.measures)]
    summary = check_out_file(args.summary, "--summary") if args.summary else None
    junit = check_out_file(args.junit, "--junit") if args.junit else None
    qrels = read_input(args.qrels, read_golden_set, "golden set", columns=args.columns, conflicts=args.conflicts,
                       encoding=args.encoding)
    want = 1 if args.baseline_report else 2
    if len(args.runs) != want:
        raise CommandError(f"expected {'CANDIDATE (the baseline is --baseline-report)' if want == 1 else 'BASELINE CANDIDATE'}"
                           f", got {len(args.runs)} run(s): {' '.join(args.runs)}")
    if args.baseline_system and not args.baseline_report:
        raise CommandError("--baseline-system names a system of --baseline-report DIR; give the report too")
    base, ascending = None, args.ascending
    if args.baseline_report:
        from .diff import read_saved_report
        base = read_saved_report(args.baseline_report)
        # without --ascending the report's conventions apply: its distances keep their lowest copy
        ascending = ascending or bool((base.metadata.get("conventions") or {}).get("ascending", False))
    runs = [read_input(path, run_reader(ascending), "run", columns=args.columns, duplicates=args.duplicates,
                       encoding=args.encoding) for path in args.runs]
    if args.baseline_report:
        given = {k: v for k, v in conventions(args).items() if v != DEFAULTS[k]}
        result = gate(qrels, base, runs[0], measures, margin=args.margin, alpha=args.alpha,
                      sequential=args.sequential, baseline_system=args.baseline_system,
                      **({"columns": args.columns} if args.columns else {}), **given)
    else:
        conv = {k: v for k, v in conventions(args).items() if k not in ("duplicates", "conflicts")}
        result = gate(qrels, runs[0], runs[1], measures, margin=args.margin, alpha=args.alpha,
                      sequential=args.sequential, **conv)
    sys.stdout.write(result.to_text())
    if summary is not None:
        summary.write_text(result.to_markdown(), encoding="utf-8")
    if junit is not None:
        junit.write_text(result.to_junit(), encoding="utf-8")
    return result.exit_status


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``evalframe gate`` (arguments after the command); returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    return run_command(PROG, lambda: run(build_parser().parse_args(argv)))
