"""What every command shares: arguments, reading files, naming systems, warnings, errors.

The commands (``evaluate``, ``report``, ``trec-eval``) are thin compositions of the
public functions; this module holds the few pieces they have in common, so that
they name systems, read runs, show warnings and report mistakes in one way:

- :func:`add_conventions` adds the conventions flags (``--rel``, ``--ties``,
  ``--missing``, ``--depth``, ``--duplicates``, ``--conflicts``); :func:`add_inputs` the
  ``QRELS RUN [RUN ...]`` arguments and ``--columns`` / ``--encoding``.
- :func:`read_runs` reads a list of run arguments into one run table, naming each
  system by :data:`NAMING_RULE` (:func:`split_run_arg`, :func:`system_name`).
- :func:`run_command` runs a command: warnings are shown on standard error as
  ``warning: ...`` while it runs (the warning hook is restored afterwards), and a
  user error (bad input, a missing or unwritable file, a bad option value) becomes
  one line ``<prog>: error: ...`` on standard error and exit status 2, never a
  traceback.
- Messages are in the command line's own words (:func:`command_words`): a hint the
  library spells ``missing='drop'`` reads ``--missing drop`` on the command line.
"""
from __future__ import annotations

import argparse
import contextlib
import os
import re
import sys
import warnings
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from .._validation import error
from ..io import RUN_EXTENSIONS, system_name

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from ..measures import Measure

__all__ = [
    "CommandError",
    "NAMING_RULE",
    "RUN_EXTENSIONS",
    "add_conventions",
    "add_inputs",
    "add_memory_budget",
    "memory_budget_arg",
    "run_source",
    "check_out_dir",
    "check_out_file",
    "column_map",
    "command_words",
    "conventions",
    "error_line",
    "is_user_error",
    "parse_measure_args",
    "read_input",
    "read_runs",
    "run_command",
    "show_warnings",
    "split_run_arg",
    "system_name",
]

#: The one rule every command uses to name the systems of its run arguments.
NAMING_RULE = (
    "Each RUN is PATH or NAME=PATH. NAME=PATH names the run's system NAME. Otherwise the "
    "file names its systems itself (the TREC tag column or a 'system' column), and a file "
    "without either is named after the file: its name without '.gz' and then one format "
    "extension (" + " ".join(RUN_EXTENSIONS) + "), so runs/bm25.v2.tsv.gz is 'bm25.v2'. "
    "An argument that exists as a file is always a path, even with '=' in it.")


class CommandError(Exception):
    """A user error found by a command (its message is the one line shown)."""


# ---------------------------------------------------------------------------
# Arguments
# ---------------------------------------------------------------------------

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


def run_reader(ascending: bool = False) -> Callable:
    """:func:`evalframe.read_run` for runs the commands read before evaluating them: with
    ``ascending`` (distances), ``duplicates="max"`` keeps each document's lowest distance
    and the scores come back as given (the evaluation negates them, once)."""
    from functools import partial

    from ..io import read_run, read_run_as_given
    return partial(read_run_as_given, ascending=True) if ascending else read_run


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


# ---------------------------------------------------------------------------
# Naming systems and reading files
# ---------------------------------------------------------------------------

def split_run_arg(arg: str) -> tuple[str | None, str]:
    """``NAME=PATH`` -> ``(NAME, PATH)``; ``PATH`` -> ``(None, PATH)``.

    An argument that exists as a file (or directory) is a path, whatever it holds;
    otherwise the text before the first ``=`` is the name.

    Examples
    --------
    >>> split_run_arg("mybm25=runs/bm25.v2.tsv"), split_run_arg("runs/bm25.tsv")
    (('mybm25', 'runs/bm25.v2.tsv'), (None, 'runs/bm25.tsv'))
    """
    name, sep, path = arg.partition("=")
    if not sep or not name or not path or os.path.exists(arg):
        return None, arg
    return name, path


#: The path that names standard input (read whole, as one file)
STDIN = "-"


def stdin_once(qrels: str, runs: Sequence[str]) -> None:
    """Refuse standard input (``-``) named more than once among the golden set and the runs."""
    if [qrels, *(split_run_arg(a)[1] for a in runs)].count(STDIN) > 1:
        raise CommandError("'-' (standard input) is given more than once: only the golden set or one run "
                           "can be read from it")


def _check_readable(path: str, what: str) -> None:
    if path == STDIN:
        return
    if not os.path.exists(path):
        if os.path.lexists(path):
            raise CommandError(f"{path}: a symbolic link that leads nowhere (broken, or a loop) ({what})")
        raise CommandError(f"{path}: no such file ({what})")
    if os.path.isdir(path):
        raise CommandError(f"{path}: is a directory, not a file ({what})")
    if not os.access(path, os.R_OK):
        raise CommandError(f"{path}: permission denied ({what})")


def read_input(path: str, read: Callable, what: str, **kwargs):
    """Read one input file with ``read(path, **kwargs)``, naming the file in any error.

    Parameters
    ----------
    path : str
        The file, checked first: it must exist, be a file (not a directory) and be readable.
    read : callable
        A public reader, e.g. :func:`evalframe.read_qrels` or :func:`evalframe.read_run`.
    what : str
        What the file is ("golden set", "run", "segments"), for the error message.
    **kwargs
        Passed to ``read``.

    Returns
    -------
    What ``read`` returns.

    Raises
    ------
    CommandError
        ``"<path>: <what is wrong>"`` for any user error (see :func:`is_user_error`).
    """
    _check_readable(path, what)
    try:
        return read(sys.stdin.buffer if path == STDIN else path, **kwargs)
    except CommandError:
        raise
    except BaseException as exc:
        if not is_user_error(exc):
            raise
        raise CommandError(f"{path}: {error_line(exc, path)}") from exc


def read_runs(args: Sequence[str], *, duplicates: Literal["error", "max", "first"] = "error",
              progress: Callable[[str], None] | None = None, columns: dict[str, str] | None = None,
              ties: str = "doc_id_desc", encoding: str = "utf-8", ascending: bool = False) -> "pd.DataFrame":
    """Read run arguments (``PATH`` or ``NAME=PATH``) into one run table with a ``system`` column.

    Systems are named by :data:`NAMING_RULE`. Every file is read with
    ``read_run(path, duplicates=duplicates)``; an error names the file at fault, and two
    files that hold a system of the same name are refused (their rankings would merge).

    Parameters
    ----------
    args : list of str
        The run arguments as given on the command line.
    duplicates : {"error", "max", "first"}
        Passed to :func:`evalframe.read_run`.
    progress : callable, optional
        Called with a short label before each file is read.
    columns, ties, encoding
        Passed to :func:`evalframe.read_run` (``--columns``, ``--ties``, ``--encoding``).
    ascending : bool
        ``--ascending``: the scores are distances (:func:`run_reader`).

    Returns
    -------
    DataFrame
        ``system, query_id, doc_id, score`` (+ ``rank``), as :func:`evalframe.read_run`.
    """
    import pandas as pd

    read_run = run_reader(ascending)
    parts, owner = [], {}
    for i, arg in enumerate(args):
        name, path = split_run_arg(arg)
        if name is not None and not os.path.exists(path):
            raise CommandError(f"{arg}: no such file (nor {path!r} for a system named {name!r})")
        if progress is not None:
            progress(f"reading run {i + 1}/{len(args)}: {Path(path).name}")
        part = _named(read_input(path, read_run, "run", duplicates=duplicates, columns=columns, ties=ties,
                                 encoding=encoding), arg, name, path)
        _own_systems(part["system"].unique(), path, owner, i)
        parts.append(part)
    if not parts:
        raise CommandError("no run given")
    return pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0]


def _named(part: "pd.DataFrame", arg: str, name: str | None, path: str) -> "pd.DataFrame":
    """A run table with its ``system`` column named by :data:`NAMING_RULE`."""
    import pandas as pd
    if name is not None and "system" in part and part["system"].nunique() > 1:
        held = list(part["system"].unique())
        raise CommandError(f"{arg}: NAME=PATH names one system, but {path} holds {len(held)} "
                           f"({', '.join(map(str, held[:5]))}{', ...' if len(held) > 5 else ''}): "
                           f"give the path alone to keep their names")
    if name is not None or "system" not in part:
        part = part.drop(columns="system", errors="ignore")
        label = name or ("stdin" if path == STDIN else system_name(path))
        part.insert(0, "system", pd.Series([label] * len(part), index=part.index, dtype=str))
    return part


def _own_systems(systems, path: str, owner: dict, arg: int) -> None:
    """Refuse a system name already held by another run argument (their rankings would merge)."""
    for s in systems:
        if s in owner and owner[s][0] != arg:
            first = owner[s][1]
            raise CommandError(
                f"{first} and {path} both hold a system named {s!r}, which would merge their "
                f"rankings: name them on the command line, e.g. {s}_1={first} {s}_2={path}")
        owner[s] = (arg, path)


# ---------------------------------------------------------------------------
# Runs larger than memory
# ---------------------------------------------------------------------------


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


@contextlib.contextmanager
def run_source(args: Sequence[str], *, duplicates: Literal["error", "max", "first"] = "error",
               budget: int, progress: Callable[[str], None] | None = None,
               columns: dict[str, str] | None = None, ties: str = "doc_id_desc",
               encoding: str = "utf-8", ascending: bool = False) -> Iterator[object]:
    """The run arguments as what :func:`evalframe.evaluate` takes: one table (:func:`read_runs`)
    when they fit ``budget``, else a Parquet dataset the streaming engine reads.

    A single Parquet file, directory or glob is passed as it is (``{name: path}`` when
    it is named by :data:`NAMING_RULE`); otherwise every run is copied in blocks, its
    ``system`` column named by the rule, into Parquet files in a temporary directory
    (TREC text runs are read about ``TEXT_BLOCK_BYTES`` at a time, in blocks of whole
    questions: :func:`evalframe.engine.text_blocks.question_blocks`; CSV, TSV and JSON lines
    whole), which is removed when the ``with`` block ends, on error, Ctrl-C and SIGTERM too.
    """
    from ..engine.budget import WHOLE_BYTES_PER_ROW, text_run_rows
    from ..streaming import is_dataset_source, open_run_dataset

    named = [split_run_arg(a) for a in args]
    for arg, (name, path) in zip(args, named):
        if name is not None and not os.path.exists(path):
            raise CommandError(f"{arg}: no such file (nor {path!r} for a system named {name!r})")
    datasets = [is_dataset_source(p) for _, p in named]
    rows = 0
    for (name, path), is_ds in zip(named, datasets):
        if path == STDIN:  # read whole, as the golden set is
            continue
        if is_ds:
            rows += open_run_dataset(path).count_rows()
        elif os.path.exists(path) and not os.path.isdir(path):
            rows += text_run_rows(path)
    if any(p == STDIN for _, p in named) or (
            not any(os.path.isdir(p) or not os.path.exists(p) for _, p in named) and rows * WHOLE_BYTES_PER_ROW <= budget):
        yield read_runs(args, duplicates=duplicates, progress=progress, columns=columns, ties=ties,
                        encoding=encoding, ascending=ascending)
        return
    if columns or encoding.lower().replace("-", "") != "utf8":
        raise CommandError("--columns and --encoding are not yet supported on runs larger than --memory-budget: "
                           "write the run with the canonical column names in UTF-8, or raise --memory-budget")
    if len(args) == 1 and datasets[0]:
        (name, path), = named
        own = "system" in {str(c).strip().lower() for c in open_run_dataset(path).schema.names}
        yield path if own and name is None else {name or system_name(path.rstrip("/")): path}
        return
    from ..engine.scratch import scratch_directory
    with scratch_directory("evalframe-runs-") as tmp:  # removed on error, Ctrl-C and SIGTERM too
        owner: dict = {}
        for i, (arg, (name, path)) in enumerate(zip(args, named)):
            if progress is not None:
                progress(f"reading run {i + 1}/{len(args)}: {Path(path).name}")
            for j, part in enumerate(_blocks(path, datasets[i], duplicates, ascending)):
                part = _named(part, arg, name, path.rstrip("/"))
                _own_systems(part["system"].unique(), path, owner, i)
                part.to_parquet(os.path.join(tmp, f"run-{i:04d}-{j:06d}.parquet"), index=False)
        yield tmp


def _blocks(path: str, is_dataset: bool, duplicates, ascending: bool = False) -> "Iterator[pd.DataFrame]":
    """A run file (or Parquet dataset) as cleaned tables, block by block (a text run's
    blocks hold whole questions: :func:`evalframe.engine.text_blocks.question_blocks`)."""
    import io as _io

    from ..engine import budget as sizing
    from ..engine.text_blocks import line_questions, question_blocks
    read_run = run_reader(ascending)
    if is_dataset:
        from ..streaming import open_run_dataset
        for b in open_run_dataset(path).to_batches(batch_size=1 << 20):
            yield read_run(b.to_pandas(), duplicates=duplicates)
        return
    if path.lower().endswith((".csv", ".tsv", ".jsonl", ".ndjson", ".json", ".parquet", ".pq")) or \
            path.lower().endswith((".csv.gz", ".tsv.gz", ".jsonl.gz", ".ndjson.gz", ".json.gz")):
        yield read_input(path, read_run, "run", duplicates=duplicates)
        return
    _check_readable(path, "run")
    head = b""
    for block, line in question_blocks(path, sizing.TEXT_BLOCK_BYTES):
        block, head = head + block, b""
        if line == 1 and block.count(b"\n") < 64 and line_questions(block).data.sum() == 1:
            # one line, perhaps a header: read with what follows
            head = block
        elif block.strip():
            yield _read_block(block, path, read_run, _io, duplicates)
    if head.strip():
        yield _read_block(head, path, read_run, _io, duplicates)


def _read_block(block: bytes, path: str, read_run, _io, duplicates):
    buf = _io.BytesIO(block)
    buf.name = path[:-3] if path.endswith(".gz") else path
    try:
        return read_run(buf, duplicates=duplicates)
    except BaseException as exc:
        if not is_user_error(exc):
            raise
        raise CommandError(f"{path}: {error_line(exc, path)}") from exc


def check_out_file(path: str, flag: str = "--out") -> Path:
    """Check, before any work, that a file can be written at ``path`` (its folder exists, a
    local one); ``flag`` names the option in the error."""
    from ..io import local_path
    try:
        out = local_path(path, flag, write=True)
    except ValueError as exc:
        raise CommandError(f"{flag} {path}: looks like a URL; evalframe writes only to local paths") from exc
    if out.is_dir():
        raise CommandError(f"{flag} {path}: is a directory; give a "
                           + (".csv or .parquet file name" if flag == "--out" else "file name"))
    parent = out.parent if str(out.parent) else Path(".")
    if not parent.exists():
        raise CommandError(f"{flag} {path}: the directory {str(parent)!r} does not exist")
    if not parent.is_dir():
        raise CommandError(f"{flag} {path}: {str(parent)!r} is not a directory")
    if not os.access(parent, os.W_OK) or (out.exists() and not os.access(out, os.W_OK)):
        raise CommandError(f"{flag} {path}: permission denied")
    return out


def check_out_dir(path: str) -> Path:
    """Check, before any work, that a directory can be made or written at ``path`` (a
    local one: a URL-looking path is refused)."""
    from ..io import local_path
    try:
        out = local_path(path, "--out", write=True)
    except ValueError as exc:
        raise CommandError(f"--out {path}: looks like a URL; evalframe writes only to local paths") from exc
    if out.exists() and not out.is_dir():
        raise CommandError(f"--out {path}: exists and is not a directory")
    first = out
    while not first.exists():
        if first.parent == first:
            break
        first = first.parent
    if first.exists() and not first.is_dir():
        raise CommandError(f"--out {path}: {str(first)!r} is not a directory")
    if first.exists() and not os.access(first, os.W_OK):
        raise CommandError(f"--out {path}: permission denied in {str(first)!r}")
    return out


# ---------------------------------------------------------------------------
# Warnings and errors
# ---------------------------------------------------------------------------

@contextlib.contextmanager
def show_warnings(stream=None) -> Iterator[None]:
    """Show warnings as ``warning: <message>`` lines on standard error while the block runs.

    The warning hook and filters are restored when the block ends (``warnings.catch_warnings``).
    """
    def _show(message, category, filename, lineno, file=None, line=None):
        (stream or sys.stderr).write(f"warning: {command_words(str(message))}\n")

    with warnings.catch_warnings():
        warnings.showwarning = _show
        yield


def is_user_error(exc: BaseException) -> bool:
    """True for errors caused by the command's input (bad data, files, numbers), not by a bug."""
    import zlib
    if isinstance(exc, (CommandError, ValueError, TypeError, OSError, EOFError, OverflowError,
                        zlib.error, Warning)):  # Warning: one turned into an error by -W error
        return True
    return type(exc).__module__.split(".")[0] == "pyarrow"  # Arrow's errors on a bad file


def _reason(exc: BaseException, path: str | None = None) -> str:
    import gzip
    import zlib

    from ..errors import EvalframeInputError

    if isinstance(exc, EvalframeInputError):
        parts = []
        for p in exc.problems:
            text = f"{p.what} (fix: {p.fix})"
            if p.examples:
                text += "; e.g. " + " | ".join(ln.strip() for ln in p.examples.splitlines() if ln.strip())
            parts.append(text)
        n = len(exc.problems)
        return f"{exc.table}: {n} problem{'s' if n != 1 else ''} found: " + "; ".join(parts)
    if isinstance(exc, (EOFError, zlib.error, gzip.BadGzipFile)):
        return f"corrupt or truncated compressed file ({exc})"
    if isinstance(exc, OSError) and exc.strerror:
        name = exc.filename
        return f"{name}: {exc.strerror}" if name and str(name) != path else exc.strerror
    if isinstance(exc, OverflowError):
        return f"a number given is too large (at most 2^63 - 1): {exc}"
    return str(exc) or type(exc).__name__


def error_line(exc: BaseException, path: str | None = None) -> str:
    """The one-line text of a user error (newlines folded, in :func:`command_words`);
    ``path`` is left out of it."""
    return command_words(" ".join(ln.strip() for ln in _reason(exc, path).splitlines() if ln.strip()))


#: keyword arguments of the library whose command-line flag has another name
_FLAG_OF = {"method": "interval", "n_resamples": "n-resamples"}
#: keyword arguments that are flags of the commands (library spelling)
_FLAGS = ("rel", "ties", "missing", "depth", "duplicates", "conflicts", "columns", "encoding", "baseline",
          "stages", "segments", "measures", "confidence", "n_resamples", "seed", "interval", "test",
          "correction", "method", "curve")
_KEYWORD = re.compile(r"\b(" + "|".join(_FLAGS) + r")=(?:'([^']*)'|\"([^\"]*)\"|(\{[^}]*\})|([\w.+-]+)|(?=[\s,;)]|$))")
_PAIR = re.compile(r"'([^']*)': (?:'([^']*)'|([\w.+=-]+))")
_MUST = re.compile(r"(?:\b[A-Za-z_]\w*: )?\b(" + "|".join(_FLAGS) + r") must be\b")


def command_words(text: str) -> str:
    """A library message in the command line's words: ``missing='drop'`` -> ``--missing drop``,
    ``columns={'a': 'query_id'}`` -> ``--columns a=query_id``, ``encoding=`` -> ``--encoding``.

    Examples
    --------
    >>> command_words("pass missing='drop' to leave them out, or duplicates='max'")
    'pass --missing drop to leave them out, or --duplicates max'
    >>> command_words("report: n_resamples must be an int >= 1, got 0")
    '--n-resamples must be an int >= 1, got 0'
    >>> command_words("e.g. stages={'first_stage': 100, 'reranked': 5}")
    'e.g. --stages first_stage:100 reranked:5'
    """
    def flag(m: re.Match) -> str:
        name = "--" + _FLAG_OF.get(m[1], m[1]).replace("_", "-")
        if m[4] is not None:  # a dict: the --columns syntax (--stages: SYSTEM:K ...)
            pairs = [(k, a or b) for k, a, b in _PAIR.findall(m[4])]
            if name == "--stages":
                return f"{name} " + " ".join(f"{k}:{v}" for k, v in pairs)
            return f"{name} " + ",".join(f"{k}={v}" for k, v in pairs)
        value = next((g for g in (m[2], m[3], m[5]) if g is not None), None)
        return name if value is None else f"{name} {value}"
    text = _MUST.sub(lambda m: "--" + _FLAG_OF.get(m[1], m[1]).replace("_", "-") + " must be", text)
    return _KEYWORD.sub(flag, text)


def run_command(prog: str, func: Callable[[], int | None], *, stream=None) -> int:
    """Run ``func()`` as a command: warnings on stderr, user errors as one line + exit status 2.

    Parameters
    ----------
    prog : str
        The command's name, which starts its error lines (``"evalframe evaluate"``).
    func : callable
        Parses the arguments and runs the command; returns its exit status (None is 0).
    stream : file, optional
        Where warnings and errors go (default: standard error at the time of writing).

    Returns
    -------
    int
        ``func``'s exit status; argparse's for a usage error (2) or ``--help`` (0); 2 for a
        user error (:func:`is_user_error`), shown as ``"<prog>: error: <one line>"``; 130
        when interrupted. Other exceptions (bugs) propagate with their traceback. Warnings
        are shown by :func:`show_warnings` while ``func`` runs, and the hook is restored.
    """
    err = stream or sys.stderr
    try:
        with show_warnings(err):
            return int(func() or 0)
    except SystemExit as exc:  # argparse: usage error (2) or --help (0)
        code = exc.code
        return code if isinstance(code, int) else (0 if code is None else 2)
    except KeyboardInterrupt:
        err.write(f"{prog}: interrupted\n")
        return 130
    except BrokenPipeError:  # e.g. piped into head: stop quietly
        with contextlib.suppress(Exception):
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        return 0
    except BaseException as exc:
        if not is_user_error(exc):
            raise
        err.write(f"{prog}: error: {error_line(exc)}\n")
        return 2
