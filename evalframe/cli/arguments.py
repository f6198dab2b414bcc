"""The arguments every command shares: the inputs (``QRELS RUN [RUN ...]``, ``--columns``,
``--encoding``), the conventions flags, ``--rollup``, ``--chunks``, ``--memory-budget`` and the
measure names, parsed into what the library takes.
"""
from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from ..measures import Measure

from .._validation import error
from .messages import CommandError
from .runs import NAMING_RULE, read_input


def add_inputs(parser: argparse.ArgumentParser, *, runs_help: str = "") -> None:
    """Add the ``QRELS RUN [RUN ...]`` positional arguments (help names the naming rule)."""
    parser.add_argument("qrels", help="golden set: TREC qrels, CSV/TSV, Parquet or JSONL")
    parser.add_argument("runs", nargs="+", metavar="RUN",
                        help="one or more runs (TREC, CSV/TSV, Parquet, JSONL), as PATH or "
                             "NAME=PATH" + (f"; {runs_help}" if runs_help else "")
                             + " (system names: see below)")
    parser.add_argument("--columns", type=column_map, metavar="NAME=CANON[,...]",
                        help="your column names -> canonical ones for every input table, e.g. "
                             "question_id=query_id,chunk=doc_id (canonical: query_id, doc_id, relevance, "
                             "score, rank, system, text)")
    parser.add_argument("--encoding", default="utf-8",
                        help="encoding of text files (default utf-8; latin-1 reads any bytes)")
    parser.epilog = "System names: " + NAMING_RULE


def column_map(text: str) -> dict[str, str]:
    """``--columns`` ``"a=query_id,b=doc_id"`` -> ``{"a": "query_id", "b": "doc_id"}``.

    Raises
    ------
    argparse.ArgumentTypeError
        An item without ``=``, or a canonical name that is not one.
    """
    from ..inputs import COLUMN_NAMES, check_columns
    pairs = [item.strip().split("=", 1) for item in text.split(",") if item.strip()]
    if not pairs or any(len(p) != 2 or not p[0].strip() for p in pairs):
        raise argparse.ArgumentTypeError(f"expected NAME=CANON[,NAME=CANON...], got {text!r}")
    mapping = {k.strip(): v.strip() for k, v in pairs}
    try:
        return check_columns(mapping, caller="--columns")
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"canonical names are {', '.join(COLUMN_NAMES)} (each at most once), got {text!r}") from None


def add_conventions(parser: argparse.ArgumentParser) -> None:
    """Add the IR-conventions flags shared by every evalframe command."""
    parser.add_argument("--rel", type=int, default=1, help="relevant means label >= REL (default 1)")
    parser.add_argument("--ties", choices=["doc_id_desc", "doc_id_asc", "rank"], default="doc_id_desc",
                        help="order of equal scores (default doc_id_desc, as trec_eval)")
    parser.add_argument("--missing", choices=["zero", "drop"], default="zero",
                        help="golden-set questions a system did not answer: score 0 (default) or drop "
                             "(trec_eval)")
    parser.add_argument("--depth", type=int, default=None, help="evaluate only the top DEPTH documents")
    parser.add_argument("--duplicates", choices=["error", "max", "first"], default="error",
                        help="a document listed twice for one question: error (default), keep max score, "
                             "keep first")
    parser.add_argument("--conflicts", choices=["error", "max", "min", "majority", "human"], default="error",
                        help="several labels of one (question, document) in the golden set: error (default), "
                             "keep the max, the min or the majority label (a tie: the higher), or a person's "
                             "over a model's (human: reads the judge column)")
    parser.add_argument("--ascending", action="store_true",
                        help="the runs' scores are distances: lower ranks first (default: higher ranks first)")
    parser.add_argument("--no-relevant", choices=["zero", "drop"], default="zero",
                        help="golden-set questions with no relevant document (no-answer questions): keep them, "
                             "recall-type measures scoring 0 (default), or drop them")


def add_rollup(parser: argparse.ArgumentParser) -> None:
    """Add ``--rollup FILE``: a chunk -> page table that rolls chunks up to pages."""
    parser.add_argument("--rollup", metavar="FILE",
                        help="chunk -> page map (TSV/CSV/Parquet, two columns: chunk id, page id): "
                             "evaluate chunk runs at page level, each page at its best chunk")


def add_chunks(parser: argparse.ArgumentParser) -> None:
    """Add ``--chunks [SYSTEM=]FILE`` (repeatable) and ``--min-overlap``: chunk tables with
    offsets, for span golden sets and token counts."""
    parser.add_argument("--chunks", metavar="[SYSTEM=]FILE", action="append", default=None,
                        help="chunk table (TSV/CSV/Parquet: chunk_id, doc_id, start, end[, tokens]): each retrieved "
                             "chunk's document and character offsets, to score it against a span golden set "
                             "(query_id, doc_id, start, end); SYSTEM=FILE, repeated, when systems chunk differently")
    parser.add_argument("--min-overlap", type=float, default=0.5,
                        help="a chunk holds a span's evidence when they share at least this share of the shorter "
                             "of the two (default 0.5; 0: any overlap)")


def read_chunks_arg(values: list[str] | None):
    """The ``--chunks`` tables: None, one table, or ``{system: table}``; errors name the file."""
    if not values:
        return None
    from ..io import read_chunks
    tables = {}
    for v in values:
        system, sep, path = v.partition("=")
        if not sep or os.path.exists(v):
            system, path = None, v
        tables[system] = read_input(path, read_chunks, "chunks")
    if None in tables:
        if len(tables) > 1:
            raise SystemExit("evalframe: --chunks FILE (every system) and --chunks SYSTEM=FILE cannot be mixed")
        return tables[None]
    return tables


def read_rollup(path: str | None):
    """The ``--rollup`` table (None without the flag), read with pandas; errors name the file."""
    if path is None:
        return None
    import pandas as pd

    def read(p):
        if p.endswith(".parquet"):
            return pd.read_parquet(p)
        return pd.read_csv(p, sep=None, engine="python", dtype=str)

    return read_input(path, read, "rollup")


def conventions(args: argparse.Namespace) -> dict:
    """The conventions flags of parsed arguments, as keyword arguments of evaluate/report."""
    return {"rel": args.rel, "ties": args.ties, "missing": args.missing, "depth": args.depth,
            "duplicates": args.duplicates, "conflicts": args.conflicts, "no_relevant": args.no_relevant,
            "ascending": args.ascending}


def parse_measure_args(names: Sequence[str] | None) -> "list[Measure] | None":
    """Parse ``-m`` names before any file is read, so that a typo fails at once.

    Parameters
    ----------
    names : list of str or None
        The names given after ``-m``; None or empty means the default measures.

    Returns
    -------
    list of Measure or None
        The parsed measures (:func:`evalframe.measures.parse_measures`), or None.
    """
    if not names:
        return None
    from ..measures import parse_measures
    return parse_measures(list(names))


def add_memory_budget(parser: argparse.ArgumentParser) -> None:
    """Add ``--memory-budget SIZE`` (runs larger than it are streamed)."""
    parser.add_argument("--memory-budget", metavar="SIZE", default=None,
                        help="memory a run may take at once, e.g. 2GiB or 500MB (default: a quarter "
                             "of the memory available); larger runs are evaluated in parts")


def memory_budget_arg(args: argparse.Namespace) -> int:
    """The parsed ``--memory-budget`` in bytes (a bad value is a one-line user error)."""
    from ..engine.budget import memory_budget
    try:
        return memory_budget(args.memory_budget)
    except ValueError:
        raise CommandError(str(error(None, "--memory-budget", "a size such as 2GiB or 500MB",
                                     args.memory_budget))) from None
