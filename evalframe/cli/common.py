"""What every command shares: arguments, reading files, naming systems, warnings, errors.

The commands (``evaluate``, ``report``, ``trec-eval``) are thin compositions of the
public functions; this module holds the few pieces they have in common, so that
they name systems, read runs, show warnings and report mistakes in one way:

- :func:`add_conventions` adds the conventions flags (``--rel``, ``--ties``,
  ``--missing``, ``--depth``, ``--duplicates``); :func:`add_inputs` the ``QRELS RUN
  [RUN ...]`` arguments.
- :func:`read_runs` reads a list of run arguments into one run table, naming each
  system by :data:`NAMING_RULE` (:func:`split_run_arg`, :func:`system_name`).
- :func:`run_command` runs a command: warnings are shown on standard error as
  ``warning: ...`` while it runs (the warning hook is restored afterwards), and a
  user error (bad input, a missing or unwritable file, a bad option value) becomes
  one line ``<prog>: error: ...`` on standard error and exit status 2, never a
  traceback.
"""
from __future__ import annotations

import argparse
import contextlib
import os
import sys
import warnings
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal

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
    "check_out_dir",
    "check_out_file",
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
    parser.epilog = "System names: " + NAMING_RULE


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


def add_rollup(parser: argparse.ArgumentParser) -> None:
    """Add ``--rollup FILE``: a chunk -> page table that rolls chunks up to pages."""
    parser.add_argument("--rollup", metavar="FILE",
                        help="chunk -> page map (TSV/CSV/Parquet, two columns: chunk id, page id): "
                             "evaluate chunk runs at page level, each page at its best chunk")


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
            "duplicates": args.duplicates}


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


def _check_readable(path: str, what: str) -> None:
    if not os.path.exists(path):
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
        return read(path, **kwargs)
    except CommandError:
        raise
    except BaseException as exc:
        if not is_user_error(exc):
            raise
        raise CommandError(f"{path}: {error_line(exc, path)}") from exc


def read_runs(args: Sequence[str], *, duplicates: Literal["error", "max", "first"] = "error",
              progress: Callable[[str], None] | None = None) -> "pd.DataFrame":
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

    Returns
    -------
    DataFrame
        ``system, query_id, doc_id, score`` (+ ``rank``), as :func:`evalframe.read_run`.
    """
    import pandas as pd

    from ..io import read_run

    parts, owner = [], {}
    for i, arg in enumerate(args):
        name, path = split_run_arg(arg)
        if name is not None and not os.path.exists(path):
            raise CommandError(f"{arg}: no such file (nor {path!r} for a system named {name!r})")
        if progress is not None:
            progress(f"reading run {i + 1}/{len(args)}: {Path(path).name}")
        part = read_input(path, read_run, "run", duplicates=duplicates)
        if name is not None and "system" in part and part["system"].nunique() > 1:
            held = list(part["system"].unique())
            raise CommandError(f"{arg}: NAME=PATH names one system, but {path} holds {len(held)} "
                               f"({', '.join(map(str, held[:5]))}{', ...' if len(held) > 5 else ''}): "
                               f"give the path alone to keep their names")
        if name is not None or "system" not in part:
            part = part.drop(columns="system", errors="ignore")
            label = name or system_name(path)
            part.insert(0, "system", pd.Series([label] * len(part), index=part.index, dtype=str))
        for s in part["system"].unique():
            if s in owner:
                raise CommandError(
                    f"{owner[s]} and {path} both hold a system named {s!r}, which would merge their "
                    f"rankings: name them on the command line, e.g. {s}_1={owner[s]} {s}_2={path}")
            owner[s] = path
        parts.append(part)
    if not parts:
        raise CommandError("no run given")
    return pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0]


def check_out_file(path: str) -> Path:
    """Check, before any work, that a file can be written at ``path`` (its folder exists)."""
    out = Path(path)
    if out.is_dir():
        raise CommandError(f"--out {path}: is a directory; give a .csv or .parquet file name")
    parent = out.parent if str(out.parent) else Path(".")
    if not parent.exists():
        raise CommandError(f"--out {path}: the directory {str(parent)!r} does not exist")
    if not parent.is_dir():
        raise CommandError(f"--out {path}: {str(parent)!r} is not a directory")
    if not os.access(parent, os.W_OK) or (out.exists() and not os.access(out, os.W_OK)):
        raise CommandError(f"--out {path}: permission denied")
    return out


def check_out_dir(path: str) -> Path:
    """Check, before any work, that a directory can be made or written at ``path``."""
    out = Path(path)
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
        (stream or sys.stderr).write(f"warning: {message}\n")

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
    """The one-line text of a user error (newlines folded); ``path`` is left out of it."""
    return " ".join(ln.strip() for ln in _reason(exc, path).splitlines() if ln.strip())


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
