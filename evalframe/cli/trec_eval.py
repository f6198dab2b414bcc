"""``evalframe trec-eval``: the drop-in trec_eval, run inside the commands' shared layer.

:func:`evalframe.trec_eval.main` parses trec_eval's flags and writes trec_eval's own
messages; anything it does not catch itself still ends as one ``error:`` line and
exit status 2 (never a traceback), and the warning hook is restored afterwards.
"""
from __future__ import annotations

import sys

from .messages import run_command

__all__ = ["main"]

PROG = "evalframe trec-eval"


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``evalframe trec-eval`` (trec_eval's arguments); returns the exit status."""
    from ..trec_eval import main as trec_eval_main

    argv = list(sys.argv[1:] if argv is None else argv)
    return run_command(PROG, lambda: trec_eval_main(argv))
