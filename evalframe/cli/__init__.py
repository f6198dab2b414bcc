"""Command line: ``evalframe evaluate | report | trec-eval ...``.

The top layer of evalframe: each command is a thin composition of the public
functions (:func:`evalframe.read_qrels`, :func:`evalframe.read_run`,
:func:`evalframe.evaluate`, :func:`evalframe.aggregate`, :func:`evalframe.report`),
sharing one layer (:mod:`evalframe.cli.common`) for arguments, reading runs, naming
systems, showing warnings and reporting errors: a user error is one line on standard
error and exit status 2.

- ``evaluate.py``: ``evalframe evaluate``, measures per system or per question;
- ``report.py``: ``evalframe report``, the full report;
- ``trec_eval.py``: ``evalframe trec-eval``, the drop-in trec_eval.
"""
from __future__ import annotations

import argparse
import sys

from . import evaluate, report, trec_eval
from .common import NAMING_RULE, run_command

__all__ = ["build_parser", "main"]

#: command -> its entry point ``main(argv) -> exit status`` (argv after the command)
COMMANDS = {
    "evaluate": evaluate.main,
    "report": report.main,
    "trec-eval": trec_eval.main,
}


def build_parser() -> argparse.ArgumentParser:
    """The top-level parser: lists the commands (each command parses its own arguments)."""
    parser = argparse.ArgumentParser(prog="evalframe", description="Trustworthy retrieval evaluation.",
                                     epilog="System names (evaluate, report): " + NAMING_RULE)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    sub.add_parser("evaluate", help="measures per system (or per question) for one or many runs",
                   add_help=False)
    sub.add_parser("report", help="the full report: summary, segments, comparisons, diagnostics, plots",
                   add_help=False)
    sub.add_parser("trec-eval", help="drop-in trec_eval: same flags, same output, faster", add_help=False)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run ``evalframe COMMAND ...``; returns the exit status (2 for a user error)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in COMMANDS:
        return COMMANDS[argv[0]](argv[1:])
    return run_command("evalframe", lambda: build_parser().parse_args(argv) and 2)
