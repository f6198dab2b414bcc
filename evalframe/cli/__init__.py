"""Command line: ``evalframe evaluate | report | trec-eval ...``.

The top layer of evalframe: each command is a thin composition of the public
functions (:func:`evalframe.read_qrels`, :func:`evalframe.read_run`,
:func:`evalframe.evaluate`, :func:`evalframe.aggregate`, :func:`evalframe.report`),
sharing one layer (:mod:`~evalframe.cli.arguments`, :mod:`~evalframe.cli.runs`, :mod:`~evalframe.cli.outputs`, :mod:`~evalframe.cli.messages`) for arguments, reading runs, naming
systems, showing warnings and reporting errors: a user error is one line on standard
error and exit status 2.

- ``evaluate.py``: ``evalframe evaluate``, measures per system or per question;
- ``report.py``: ``evalframe report``, the full report;
- ``trec_eval.py``: ``evalframe trec-eval``, the drop-in trec_eval;
- ``gate.py``: ``evalframe gate``, the CI gate (exit 0 pass, 1 fail, 3 inconclusive);
- ``diff.py``: ``evalframe diff``, what changed between two saved reports.
"""
from __future__ import annotations

import importlib
import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    import argparse

__all__ = ["build_parser", "main"]

#: command -> the module of its entry point ``main(argv) -> exit status`` (argv after
#: the command), imported only when that command runs: ``evalframe trec-eval`` loads
#: neither the other commands nor what only they use
COMMANDS = {
    "evaluate": "evaluate",
    "report": "report",
    "trec-eval": "trec_eval",
    "gate": "gate",
    "diff": "diff",
}


def build_parser() -> argparse.ArgumentParser:
    """The top-level parser: lists the commands (each command parses its own arguments)."""
    import argparse

    from .runs import NAMING_RULE
    parser = argparse.ArgumentParser(prog="evalframe", description="Trustworthy retrieval evaluation.",
                                     epilog="System names (evaluate, report): " + NAMING_RULE)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    sub.add_parser("evaluate", help="measures per system (or per question) for one or many runs",
                   add_help=False)
    sub.add_parser("report", help="the full report: summary, segments, comparisons, diagnostics, plots",
                   add_help=False)
    sub.add_parser("trec-eval", help="drop-in trec_eval: same flags, same output, faster", add_help=False)
    sub.add_parser("gate", help="CI gate: exit 1 if the candidate run is significantly worse than the baseline "
                                "beyond a margin (0 pass, 3 inconclusive)", add_help=False)
    sub.add_parser("diff", help="what changed between two saved reports", add_help=False)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run ``evalframe COMMAND ...``; returns the exit status (2 for a user error)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in COMMANDS:
        return importlib.import_module(f".{COMMANDS[argv[0]]}", __name__).main(argv[1:])
    from .messages import run_command
    return run_command("evalframe", lambda: build_parser().parse_args(argv) and 2)


def console_main() -> None:
    """The installed ``evalframe`` script: :func:`main` on the process's arguments, then
    the process exits with its status.

    After ``evalframe trec-eval``, which writes nothing but standard output and error
    (flushed here: a reader gone, as with ``| head``, is a quiet exit; a full disk is
    the command's one-line error and status 2), the process ends at once
    (``os._exit``), without the interpreter's shutdown: tearing down numpy's and
    Arrow's modules and objects took 20-25 ms, 12% of a two-line file's start-up (issue
    31).  Under a profiler or a tracer (``python -m cProfile``, coverage), and for the
    other commands, which write files, the process exits as usual; ``python -m
    evalframe.cli`` (which a host may run in its own process) always does."""
    status = main()
    if sys.argv[1:2] != ["trec-eval"] or sys.getprofile() is not None or sys.gettrace() is not None:
        sys.exit(status)
    try:
        for stream in (sys.stdout, sys.stderr):
            try:
                if stream is not None:  # (a closed descriptor: None)
                    stream.flush()
            except BrokenPipeError:  # the reader is gone: its lines were not wanted
                pass
            except OSError as exc:  # a full disk: as when it fills up during the command
                if stream is sys.stdout and sys.stderr is not None:
                    sys.stderr.write(f"evalframe trec-eval: error: {exc.strerror or exc}\n")
                    sys.stderr.flush()
                status = status or 2
    except KeyboardInterrupt:
        status = 130
    finally:
        os._exit(status)
