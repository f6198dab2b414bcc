"""Run arguments into runs: each system named by :data:`NAMING_RULE` (:func:`split_run_arg`),
files read with one clear error per file (:func:`read_input`, :func:`read_runs`), and a run larger
than ``--memory-budget`` handed to the streaming engine (:func:`run_source`).
"""
from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from ..io import RUN_EXTENSIONS, system_name

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

from .messages import CommandError, error_line, is_user_error


#: The one rule every command uses to name the systems of its run arguments.
NAMING_RULE = (
    "Each RUN is PATH or NAME=PATH. NAME=PATH names the run's system NAME. Otherwise the "
    "file names its systems itself (the TREC tag column or a 'system' column), and a file "
    "without either is named after the file: its name without '.gz' and then one format "
    "extension (" + " ".join(RUN_EXTENSIONS) + "), so runs/bm25.v2.tsv.gz is 'bm25.v2'. "
    "An argument that exists as a file is always a path, even with '=' in it.")


def run_reader(ascending: bool = False) -> Callable:
    """:func:`evalframe.read_run` for runs the commands read before evaluating them: with
    ``ascending`` (distances), ``duplicates="max"`` keeps each document's lowest distance
    and the scores come back as given (the evaluation negates them, once)."""
    from functools import partial

    from ..io import read_run, read_run_as_given
    return partial(read_run_as_given, ascending=True) if ascending else read_run


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


@contextlib.contextmanager
def run_source(args: Sequence[str], *, duplicates: Literal["error", "max", "first"] = "error",
               budget: int, progress: Callable[[str], None] | None = None,
               columns: dict[str, str] | None = None, ties: str = "doc_id_desc",
               encoding: str = "utf-8", ascending: bool = False) -> Iterator[object]:
    """The run arguments as what :func:`evalframe.evaluate` takes: one table (:func:`read_runs`)
    when they fit ``budget``, else what the streaming engine reads.

    A single Parquet file, directory or glob, or TREC text run file, is passed as it is
    (``{name: path}`` when it is named by :data:`NAMING_RULE`), and so are several when each
    is named (the streaming engine reads a text run in blocks of whole questions,
    :class:`evalframe.engine.text_blocks.TextRun`); otherwise every run is copied in blocks, its
    ``system`` column named by the rule, into Parquet files in a temporary directory
    (TREC text runs are read about ``TEXT_BLOCK_BYTES`` at a time, in blocks of whole
    questions: :func:`evalframe.engine.text_blocks.question_blocks`; CSV, TSV and JSON lines
    whole), which is removed when the ``with`` block ends, on error, Ctrl-C and SIGTERM too.
    """
    from ..engine.budget import WHOLE_BYTES_PER_ROW, text_run_rows
    from ..engine.choice import is_dataset_source, open_run_dataset
    from ..engine.text_blocks import TextRun, is_text_run

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
    texts = [is_text_run(p) for _, p in named]
    if any(texts) and all(t or d for t, d in zip(texts, datasets)):  # streamed where they are, not copied
        names = [n for n, _ in named]
        if len(args) == 1 and names[0] is None:
            path = named[0][1]
            own = "system" in TextRun(path).schema.names
            yield path if own else {system_name(path): path}  # its tags name its systems, else its name
            return
        if None not in names and len(set(names)) == len(names):
            yield dict(named)
            return
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
    from ..engine import budget as sizing
    from ..engine.text_blocks import TextRun
    read_run = run_reader(ascending)
    if is_dataset:
        from ..engine.choice import open_run_dataset
        for b in open_run_dataset(path).to_batches(batch_size=1 << 20):
            yield read_run(b.to_pandas(), duplicates=duplicates)
        return
    if path.lower().endswith((".csv", ".tsv", ".jsonl", ".ndjson", ".json", ".parquet", ".pq")) or \
            path.lower().endswith((".csv.gz", ".tsv.gz", ".jsonl.gz", ".ndjson.gz", ".json.gz")):
        yield read_input(path, read_run, "run", duplicates=duplicates)
        return
    _check_readable(path, "run")
    try:
        for table in TextRun(path).tables(sizing.TEXT_BLOCK_BYTES):
            yield read_run(table.to_pandas(), duplicates=duplicates)
    except BaseException as exc:
        if not is_user_error(exc):
            raise
        raise CommandError(f"{path}: {error_line(exc, path)}") from exc
