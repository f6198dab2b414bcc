"""Read golden sets and runs from files, DataFrames and dicts.

Accepted sources (for both :func:`read_qrels` and :func:`read_run`):

- TREC text files: whitespace separated (any mix of spaces, tabs, ``\\v``, ``\\f``,
  ``\\r``, as C's ``isspace``), ``#`` comment lines (in a run also indented ones,
  as trec_eval), optionally gzip-compressed (``.gz``).  Qrels: ``query_id iter
  doc_id relevance``; runs: ``query_id Q0 doc_id rank score tag``.  Diversity qrels
  (TREC Web's ``query_id subtopic doc_id relevance``: the second column varies
  and a document repeats, :func:`is_diversity_qrels`) keep it as ``subtopic``.  A first line
  is taken for a header only when it cannot be data: it names known columns and
  its score (run) or label (qrels) is not a number, so ``1 0 doc 1 0.9 run`` is
  data.  Text is UTF-8 unless ``encoding=`` says otherwise (``"latin-1"`` reads any
  bytes losslessly).
- CSV / TSV with a header line, Parquet, JSON lines (``.jsonl``), using the
  canonical column names or the aliases in :data:`evalframe.schema.ALIASES`.
- pandas DataFrames (copied, never modified); pyarrow Tables, RecordBatches and
  RecordBatchReaders, polars DataFrames and any object exposing ``__arrow_c_stream__``
  (DuckDB results), read through Arrow without a round trip through Python objects
  (:func:`evalframe.canonical.arrow_frame`).
- Runs as RAG logs store them: one row per question with a list of document ids (and
  optionally a list of scores), from pandas list columns, Arrow list arrays or JSON lines;
  runs with a rank and no score (see :mod:`evalframe.canonical`).
- The dict-of-dicts used by pytrec_eval and ranx: ``{query_id: {doc_id: value}}``.

Paths are local files: a URL-looking path (``s3://...``, ``http://...``) is
refused.  To read from a remote store, pass ``filesystem=`` (a ``pyarrow.fs`` or
fsspec filesystem) with the path inside it, or an opened binary file object.

Several systems: a table with a ``system`` column, a list of runs, or a dict
``{system_name: run}``.  A TREC run file's tag column becomes ``system``.
"""
from __future__ import annotations

import io as _io
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, Union

import numpy as np
import pandas as pd

from ._validation import Options, check, error
from .errors import EvalframeInputError, InputProblem
from .canonical import apply_columns, arrow_frame, arrow_table_frame, check_columns, pandas_strings_are_large
from .spans import check_chunks, check_spans, is_span_table
from ._conflicts import Conflicts, check_conflicts
from ._arrow_numpy import arrow_of
from ._id_bytes import arrow_backing
from ._id_codes import CheckedQrels, CheckedRun, checked_text_qrels, checked_text_run, encode_run
from .schema import check_qrels, check_run, clean_run
from ._text_tables import decompress, first_data_line, is_header, not_utf8, trec_text_table

Source = Union[str, os.PathLike, pd.DataFrame, Mapping, "_io.IOBase"]

#: A ``pyarrow.fs.FileSystem`` or an ``fsspec`` filesystem (neither is imported here).
FileSystem = Any



#: ``scheme://`` (a scheme of two or more letters, so not a Windows drive), or
#: ``scheme:/`` as a ``pathlib.Path`` spells it.
_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]+:/")


def local_path(source: str | os.PathLike, what: str, *, write: bool = False) -> Path:
    """``source`` as a local path; a URL-looking path is refused before any I/O.

    pandas and pyarrow resolve ``http:``, ``s3:``, ``gs:`` or ``hdfs:`` paths over
    the network; evalframe reads from the network only when asked (``filesystem=``
    or an opened file object), never because of how a path is spelled. ``write``: the
    path is an output (a writer's file or folder; the message says so)."""
    text = os.fsdecode(os.fspath(source))
    # a string must spell "scheme://"; a Path has already folded "//" into "/"
    url = "://" in text if isinstance(source, (str, bytes)) else True
    if url and _URL.match(text) and write:
        raise EvalframeInputError(what, [InputProblem(
            f"{text!r} looks like a URL; evalframe writes only to local paths (nothing was written or sent)",
            "write to a local path and copy the files to the remote store with its own tools, or pass an "
            "opened file object where one is accepted")])
    if url and _URL.match(text):
        raise EvalframeInputError(what, [InputProblem(
            f"{text!r} looks like a URL; a path is read only as a local file",
            "to read from a remote store, pass filesystem= (a pyarrow.fs or fsspec filesystem) with the "
            "path inside it, or an opened binary file object")])
    return Path(text)


def _os_problem(path: Path, what: str, e: OSError) -> EvalframeInputError:
    """An input error naming the path for a file that cannot be opened (not a missing one)."""
    if isinstance(e, IsADirectoryError):
        return EvalframeInputError(what, [InputProblem(
            f"{str(path)!r} is a directory with no Parquet file in it, not a file",
            "pass the file inside it; a directory is read as a Parquet dataset (its .parquet files)")])
    return EvalframeInputError(what, [InputProblem(f"{str(path)!r} cannot be read: {e.strerror or e}",
                                                   "check the path (a broken or looping link?) and its permissions")])


def _parquet_directory(path: Path) -> bool:
    """Whether ``path`` is a directory holding Parquet files (a dataset pandas reads whole)."""
    return path.is_dir() and any(f.suffix.lower() in (".parquet", ".pq") for f in path.rglob("*") if f.is_file())


#: Format extensions dropped from a run file's name to name its system (after ``.gz``).
RUN_EXTENSIONS = (".trec", ".txt", ".tsv", ".csv", ".parquet", ".pq", ".jsonl", ".ndjson", ".json",
                  ".run", ".res")


def system_name(path: str | os.PathLike) -> str:
    """The system name of a run file that does not name its systems itself.

    The file's name without ``.gz`` and then without one extension of
    :data:`RUN_EXTENSIONS` (case-insensitive); the rest is kept, dots included.

    Examples
    --------
    >>> system_name("runs/bm25.v2.tsv"), system_name("bm25.v2.trec.gz"), system_name("a.b")
    ('bm25.v2', 'bm25.v2', 'a.b')
    """
    name = Path(path).name
    stem = name[:-3] if name.lower().endswith(".gz") else name
    for ext in RUN_EXTENSIONS:
        if stem.lower().endswith(ext) and len(stem) > len(ext):
            stem = stem[:-len(ext)]
            break
    return stem or name


def _read_bytes(path: Path, what: str, filesystem: FileSystem | None = None) -> bytes:
    if filesystem is not None:
        with _open_remote(filesystem, str(path)) as fh:
            return decompress(fh.read(), what, str(path))
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise FileNotFoundError(f"no such file: {str(path)!r}") from None
    except OSError as e:
        raise _os_problem(path, what, e) from None
    return decompress(data, what, str(path))


def _open_remote(filesystem: FileSystem, path: str):
    """A binary input stream from a pyarrow.fs or an fsspec filesystem."""
    if hasattr(filesystem, "open_input_stream"):  # pyarrow.fs.FileSystem
        return filesystem.open_input_stream(path)
    if hasattr(filesystem, "open"):  # fsspec.AbstractFileSystem
        return filesystem.open(path, "rb")
    raise error("read", "filesystem", "a pyarrow.fs.FileSystem or an fsspec filesystem", filesystem)


def _strip_ext(path: Path) -> str:
    name = path.name.lower()
    if name.endswith(".gz"):
        name = name[:-3]
    return name


def _read_table_file(path: Path, kind: Literal["qrels", "run"], *, filesystem: FileSystem | None = None,
                     data: bytes | None = None, encoding: str = "utf-8",
                     drop: Sequence[str] = ()) -> tuple[pd.DataFrame, bool]:
    """Read one file: ``path`` names it (its suffix gives the format); the bytes
    come from ``data`` (an opened file object), ``filesystem`` or the local disk.
    A TREC run's columns named in ``drop`` are left out (never converted).  Returns the
    table and whether its ids are trimmed already (a TREC text file, split on blanks)."""
    name = _strip_ext(path)
    what = "golden set (qrels)" if kind == "qrels" else "run"
    if data is None and (name.endswith((".parquet", ".pq")) or (filesystem is None and _parquet_directory(path))):
        import pyarrow.fs as pafs
        # an explicit filesystem: pandas never resolves the path string itself
        fs = filesystem if filesystem is not None else pafs.LocalFileSystem()
        return pd.read_parquet(str(path), filesystem=fs), False
    if data is None:
        data = _read_bytes(path, what, filesystem)
    else:
        data = decompress(data, what, str(path))
    if data[:4] == b"PAR1" or name.endswith((".parquet", ".pq")):
        return pd.read_parquet(_io.BytesIO(data)), False
    try:
        if name.endswith((".jsonl", ".ndjson")):
            return _read_jsonl(data.decode(encoding), what, str(path)), False
        if name.endswith(".json"):
            import json
            return _from_mapping(json.loads(data.decode(encoding)), kind), False
    except UnicodeDecodeError:
        raise not_utf8(data, what, str(path)) from None
    first = first_data_line(data, kind)
    if is_header(first, kind) or name.endswith(".csv"):
        sep = "," if (name.endswith(".csv") or (b"," in first and b"\t" not in first)) else ("\t" if b"\t" in first else r"\s+")
        # Every column as text: ids keep their exact spelling ("0012") whatever the
        # header's case; the schema step converts scores, labels and ranks.
        try:
            return pd.read_csv(_io.BytesIO(data), sep=sep, dtype=str, keep_default_na=False, na_values=[""],
                               comment=None, skip_blank_lines=True, encoding=encoding), False
        except UnicodeDecodeError:
            raise not_utf8(data, what, str(path)) from None
    # a TREC text file, split on blanks: its ids hold none (True: trimmed)
    import pyarrow as pa
    text_type = pa.large_string() if pandas_strings_are_large() else pa.string()  # as pandas stores them: no cast
    df = arrow_table_frame(trec_text_table(data, kind, str(path), first=first, encoding=encoding, drop=drop,
                                           text_type=text_type))
    if "iteration" not in df:
        return df, True
    if is_diversity_qrels(df):  # TREC diversity qrels: the second column is the subtopic
        return df.rename(columns={"iteration": "subtopic"})[["query_id", "subtopic", "doc_id", "relevance"]], True
    return df[["query_id", "doc_id", "relevance"]], True


def _read_jsonl(text: str, what: str, path: str) -> pd.DataFrame:
    """JSON lines into a table: pandas' reader, or, where it fails (a damaged line, an
    integer beyond 64 bits), Python's, which names the first bad line; integers of any
    size are kept exactly (ids become their decimal text)."""
    try:
        return pd.read_json(_io.StringIO(text), lines=True, dtype=False)
    except ValueError:
        pass
    import json
    records = []
    for i, line in enumerate(text.splitlines(), 1):  # only when pandas' reader failed
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as e:
            raise EvalframeInputError(what, [InputProblem(
                f"{path}: line {i} is not valid JSON ({e.msg}, column {e.colno}): {line[:120]!r}",
                "each line of a JSON lines file is one complete object; the file may have been cut short")]) from None
        if not isinstance(record, dict):
            raise EvalframeInputError(what, [InputProblem(
                f"{path}: line {i} is a JSON {type(record).__name__}, not an object: {line[:120]!r}",
                'each line is one object: {"query_id": ..., "doc_id": ..., ...}')])
        records.append(record)
    return pd.DataFrame.from_records(records)


def is_diversity_qrels(df: pd.DataFrame) -> bool:
    """Whether a 4-column TREC qrels table is a diversity one (TREC Web's
    ``query_id subtopic doc_id relevance``): its second column takes several
    values and a (query_id, doc_id) pair repeats.  Ordinary qrels write a
    constant there (``0``, trec_eval's unused iteration)."""
    return bool(df["iteration"].nunique() > 1 and df.duplicated(["query_id", "doc_id"]).any())


def _from_mapping(obj: Mapping, kind: str) -> pd.DataFrame:
    """{query_id: {doc_id: value}} (pytrec_eval/ranx) to a long table."""
    value = "relevance" if kind == "qrels" else "score"
    q, d, v = [], [], []
    for qid, docs in obj.items():
        if not isinstance(docs, Mapping):
            raise EvalframeInputError("golden set (qrels)" if kind == "qrels" else "run", [InputProblem(
                f"dict value for {qid!r} is {type(docs).__name__}, not a dict of doc_id -> {value}",
                "pass {query_id: {doc_id: value}} (pytrec_eval/ranx style)")])
        n = len(docs)
        q.append(np.full(n, str(qid), dtype=object))
        d.append(np.fromiter((str(k) for k in docs.keys()), dtype=object, count=n))
        try:
            v.append(np.fromiter(docs.values(), dtype=float, count=n))
        except (TypeError, ValueError):
            doc, bad = next((k, x) for k, x in docs.items() if not _real_number(x))
            raise EvalframeInputError("golden set (qrels)" if kind == "qrels" else "run", [InputProblem(
                f"the {value} of ({qid!r}, {doc!r}) is {bad!r}, not a number",
                f"give every document a numeric {value}")]) from None
    if not q:
        return pd.DataFrame({"query_id": [], "doc_id": [], value: []})
    return pd.DataFrame({"query_id": np.concatenate(q), "doc_id": np.concatenate(d), value: np.concatenate(v)})


def _real_number(x) -> bool:
    """Whether ``x`` converts to a float as numpy would take it."""
    try:
        float(x)
    except (TypeError, ValueError):
        return False
    return True


def _rows_not_tables(source, what: str) -> EvalframeInputError | None:
    """The error for a list of rows (tuples or lists) passed where tables or paths go."""
    first = next(iter(source), None) if isinstance(source, (list, tuple)) else None
    if not isinstance(first, (tuple, list)):
        return None
    return EvalframeInputError(what, [InputProblem(
        f"a list of {type(first).__name__}s ({first!r}, ...) is a list of rows, not of {what}s or files",
        "make a table of it: pd.DataFrame(rows, columns=['query_id', 'doc_id', 'score']) "
        "(or 'relevance' for a golden set)")])


def _is_nested_run_mapping(obj: Mapping) -> bool:
    """True for {system: run} where each run is itself a dict-of-dicts or a table."""
    for v in obj.values():
        if isinstance(v, pd.DataFrame) or isinstance(v, (str, os.PathLike)):
            return True
        if isinstance(v, Mapping):
            inner = next(iter(v.values()), None)
            return isinstance(inner, Mapping)
        return False
    return False


def _raw(source, kind: Literal["qrels", "run"], *, filesystem: FileSystem | None = None,
         encoding: str = "utf-8", drop: Sequence[str] = ()) -> tuple[pd.DataFrame, bool]:
    """The table a source holds (:func:`read_raw`) and whether its ids are trimmed already."""
    what = "golden set (qrels)" if kind == "qrels" else "run"
    if isinstance(source, pd.DataFrame):
        return source, False
    if isinstance(source, CheckedQrels):
        return source.table, False
    frame = arrow_frame(source)
    if frame is not None:
        return frame, False
    if isinstance(source, (str, os.PathLike)):
        path = Path(os.fsdecode(os.fspath(source))) if filesystem is not None else local_path(source, what)
        return _read_table_file(path, kind, filesystem=filesystem, encoding=encoding, drop=drop)
    if isinstance(source, Mapping):
        return _from_mapping(source, kind), False
    rows = _rows_not_tables(source, what)
    if rows is not None:
        raise rows
    if hasattr(source, "read"):  # an opened file object: the caller chose where it reads from
        data = source.read()
        if isinstance(data, str):
            data = data.encode(encoding)
        return _read_table_file(Path(str(getattr(source, "name", "") or "")), kind, data=data,
                                encoding=encoding, drop=drop)
    raise TypeError(f"cannot read a {'golden set' if kind == 'qrels' else 'run'} from "
                    f"{type(source).__name__}: pass a file path, an opened file, a DataFrame (pandas, polars), "
                    "an Arrow table or stream, or a dict of dicts")


def read_table(source: Source, kind: Literal["qrels", "run"], *, drop: Sequence[str] = (),
               filesystem: FileSystem | None = None, encoding: str = "utf-8") -> pd.DataFrame:
    """The table a source holds, as read and before any check (what
    :func:`read_qrels` / :func:`read_run` then check and clean).

    Parameters
    ----------
    source : path, opened binary file, DataFrame or dict
        See the module docstring; a DataFrame is returned as it is (not copied).
    kind : {"qrels", "run"}
    drop : sequence of str
        Columns of a TREC run text file to leave out, e.g. ``("rank",)``: they are
        never converted to pandas (a number column is not even parsed).  Other
        sources keep their columns.
    filesystem, encoding
        As :func:`read_qrels`.

    Returns
    -------
    DataFrame
        A TREC run text file gives ``query_id, doc_id, rank, score, system``
        (without the ``Q0`` column); a TREC qrels file ``query_id, doc_id,
        relevance``; other formats their own columns.

    Examples
    --------
    >>> read_table({"q1": {"d1": 2.0}}, "run").columns.tolist()
    ['query_id', 'doc_id', 'score']
    """
    return read_raw(source, kind, drop=drop, filesystem=filesystem, encoding=encoding)[0]


def read_raw(source: Source, kind: Literal["qrels", "run"], *, drop: Sequence[str] = (),
             filesystem: FileSystem | None = None, encoding: str = "utf-8") -> tuple[pd.DataFrame, bool]:
    """:func:`read_table`'s table, and whether its ids are trimmed already (a TREC text
    file, split on blanks: an id holds none), to pass as ``trimmed=`` to
    :func:`~evalframe.schema.check_run` / :func:`~evalframe.schema.check_qrels`, which
    then skip their trim pass."""
    check("read_table", "kind", kind, Options(("qrels", "run"), "'qrels' or 'run'"))
    return _raw(source, kind, filesystem=filesystem, encoding=encoding, drop=tuple(drop))


def read_qrels(source: Source, *, columns: Mapping[str, str] | None = None, conflicts: Conflicts = "error",
               filesystem: FileSystem | None = None, encoding: str = "utf-8") -> pd.DataFrame:
    """Read a golden set (qrels) into a canonical DataFrame.

    Parameters
    ----------
    source : path, opened binary file, DataFrame or dict
        See the module docstring for the accepted formats.  A path is a local
        file (a URL-looking path is refused) unless ``filesystem`` is given.
    columns : dict, optional
        ``{your column name: canonical name}``, e.g. ``{"qa_id": "query_id", "chunk": "doc_id"}``
        (as ranx's ``from_df``); see :func:`evalframe.schema.clean_qrels`.
    conflicts : {"error", "max", "min", "majority", "human"}
        Several labels of one (question, document): see :func:`evalframe.schema.clean_qrels`.
        The table holds the resolved labels; the record of the pairs resolved (the
        diagnostics row ``golden_set_conflicting_labels``) travels on
        :func:`read_golden_set`'s checked golden set.
    filesystem : pyarrow.fs.FileSystem or fsspec filesystem, optional
        Where a path is read from (e.g. ``pyarrow.fs.S3FileSystem()``): reading
        over the network is always this explicit choice.
    encoding : str
        Encoding of text files (default UTF-8; ``"latin-1"`` reads any bytes
        and keeps every id exactly).

    Returns
    -------
    DataFrame
        ``query_id`` (str), ``doc_id`` (str), ``relevance`` (int64), and ``text`` when the
        golden set carries the question text beside the question id; a diversity golden
        set also ``subtopic`` (str), after ``query_id``; a golden set with provenance
        also ``judge`` (str, None where missing) and ``confidence`` (float64), from a
        column so named or an alias (``annotator``, ``labeled_by``, ``source``).  A span golden set (a table
        with start and end offsets, :mod:`evalframe.spans`) gives ``query_id, doc_id,
        start, end, relevance`` (:func:`evalframe.spans.check_spans`).

    Examples
    --------
    >>> read_qrels({"q1": {"d1": 1, "d2": 0}}).shape
    (2, 3)
    """
    golden = read_golden_set(source, columns=columns, conflicts=conflicts, filesystem=filesystem, encoding=encoding)
    return golden if isinstance(golden, pd.DataFrame) else golden.table


def read_golden_set(source: Source | CheckedQrels, *, columns: Mapping[str, str] | None = None,
                    conflicts: Conflicts = "error", filesystem: FileSystem | None = None,
                    encoding: str = "utf-8") -> CheckedQrels | pd.DataFrame:
    """:func:`read_qrels`, keeping what the check learnt: the checked golden set
    (:class:`~evalframe._id_codes.CheckedQrels`, its :attr:`~evalframe._id_codes.CheckedQrels.table`
    is :func:`read_qrels`'s table), or a span golden set's table.

    The conflicting labels ``conflicts`` resolved travel on the checked golden set
    (:attr:`~evalframe._id_codes.CheckedQrels.conflicts`): :func:`evalframe.evaluate`,
    :func:`evalframe.diagnostics` and :func:`evalframe.report` take it as their golden set
    and report them once (a table from :func:`read_qrels` holds its resolved labels, not
    the record of them).  A checked golden set is returned as it is.

    Examples
    --------
    >>> import pandas as pd
    >>> g = read_golden_set(pd.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["d1", "d1"],
    ...                                   "relevance": [1, 2]}), conflicts="max")
    >>> g.table["relevance"].tolist(), g.conflicts.count
    ([2], 1)
    """
    check_columns(columns, caller="read_qrels")
    check_conflicts(conflicts, caller="read_qrels")
    if isinstance(source, CheckedQrels):
        return source
    raw, trimmed = _raw(source, "qrels", filesystem=filesystem, encoding=encoding)
    if is_span_table(apply_columns(raw, columns)):
        return check_spans(raw, columns=columns)
    return check_qrels(raw, columns=columns, conflicts=conflicts, trimmed=trimmed)


def read_chunks(source: Source, *, columns: Mapping[str, str] | None = None, disjoint: bool = False,
                filesystem: FileSystem | None = None, encoding: str = "utf-8") -> pd.DataFrame:
    """Read a chunk table: each chunk's parent document and character offsets.

    Parameters
    ----------
    source : path, opened binary file or DataFrame
        CSV/TSV with a header, Parquet, JSONL or a DataFrame with ``chunk_id, doc_id,
        start, end[, tokens][, text]`` (aliases: see :mod:`evalframe.spans`).
    columns, filesystem, encoding
        As :func:`read_qrels`.
    disjoint : bool
        Refuse chunks of one document that overlap (a chunking without overlap windows).

    Returns
    -------
    DataFrame
        See :func:`evalframe.spans.check_chunks`.

    Examples
    --------
    >>> import pandas as pd
    >>> read_chunks(pd.DataFrame({"chunk_id": ["d1#0"], "parent_id": ["d1"], "start_char": [0],
    ...                           "end_char": [120], "n_tokens": [30]}))
      chunk_id doc_id  start  end  tokens
    0     d1#0     d1      0  120      30
    """
    check_columns(columns, caller="read_chunks")
    return check_chunks(_raw(source, "run", filesystem=filesystem, encoding=encoding)[0], columns=columns,
                        disjoint=disjoint)


def read_run(source: Source | Sequence[Source], *, system: str | None = None,
             duplicates: Literal["error", "max", "first"] = "error", columns: Mapping[str, str] | None = None,
             ties: str = "doc_id_desc", filesystem: FileSystem | None = None,
             encoding: str = "utf-8", ascending: bool = False) -> pd.DataFrame:
    """Read a run (one or many systems) into a canonical DataFrame.

    Parameters
    ----------
    source : path, DataFrame, dict, or a list / dict of those
        A single run, a list of runs, or ``{system_name: run}``.
    system : str, optional
        System name for a single run (overrides its tag / ``system`` column).
    duplicates : {"error", "max", "first"}
        See :func:`evalframe.schema.clean_run`.
    columns : dict, optional
        ``{your column name: canonical name}``, e.g. ``{"chunk": "doc_id"}``; applied to every run.
    ties : {"doc_id_desc", "doc_id_asc", "rank"}
        The order the run will be ranked in; with ``"rank"`` a missing score is no error.
    filesystem : pyarrow.fs.FileSystem or fsspec filesystem, optional
        Where paths are read from; see :func:`read_qrels`.
    encoding : str
        Encoding of text files; see :func:`read_qrels`.
    ascending : bool
        The scores are distances (lower is better): the table's ``score`` is their
        negation; see :func:`evalframe.schema.clean_run`.

    Returns
    -------
    DataFrame
        ``system, query_id, doc_id, score`` (+ ``rank`` when the source has it);
        ``system`` is present when the source names systems (TREC tag column,
        a ``system`` column, a list or dict of runs, or the argument).

    Examples
    --------
    >>> read_run({"q1": {"d1": 2.0, "d2": 1.0}}, system="bm25").columns.tolist()
    ['system', 'query_id', 'doc_id', 'score']
    """
    check_columns(columns, caller="read_run")
    if isinstance(source, Mapping) and _is_nested_run_mapping(source):
        if system is not None:
            raise ValueError("system= names a single run; a dict of runs is already named by its keys")
        parts = [read_run(v, system=str(k), duplicates=duplicates, columns=columns, ties=ties,
                          filesystem=filesystem, encoding=encoding, ascending=ascending) for k, v in source.items()]
        return pd.concat(parts, ignore_index=True)
    if isinstance(source, Sequence) and not isinstance(source, (str, bytes, os.PathLike)):
        rows = _rows_not_tables(source, "run")
        if rows is not None:
            raise rows
        if system is not None:
            raise ValueError("system= names a single run; name each run in a dict {name: run} instead")
        parts = []
        for i, src in enumerate(source):
            part = read_run(src, duplicates=duplicates, columns=columns, ties=ties, filesystem=filesystem,
                            encoding=encoding, ascending=ascending)
            if "system" not in part:
                name = system_name(src) if isinstance(src, (str, os.PathLike)) else f"run{i + 1}"
                part.insert(0, "system", name)
            parts.append(part)
        if not parts:
            raise EvalframeInputError("run", [InputProblem("the list of runs is empty", "pass at least one run")])
        seen: dict[str, int] = {}
        shared = set()
        for i, part in enumerate(parts):
            for name in part["system"].unique():
                if name in seen:
                    shared.add(name)
                seen[name] = i
        if shared:
            raise EvalframeInputError("run", [InputProblem(
                f"{len(parts)} runs share the system name(s) {sorted(shared)[:5]}, which would merge their rankings",
                "give each run its own name: pass a dict {name: run}")])
        return pd.concat(parts, ignore_index=True)
    raw, trimmed = _raw(source, "run", filesystem=filesystem, encoding=encoding)
    return clean_run(raw, system=system, duplicates=duplicates, columns=columns, ties=ties, trimmed=trimmed,
                     ascending=ascending)


def read_run_as_given(source, *, ascending: bool = False, **options) -> pd.DataFrame:
    """:func:`read_run` keeping the scores as given: with ``ascending`` (distances),
    ``duplicates="max"`` keeps each document's lowest distance, and the table's scores are
    the distances still (what a table shown to the user, or evaluated later with
    ``ascending=True``, holds)."""
    frame = read_run(source, ascending=ascending, **options)
    return frame.assign(score=-frame["score"]) if ascending else frame


def read_checked_run(source: Source | Sequence[Source], *, system: str | None = None,
                     duplicates: Literal["error", "max", "first"] = "error", columns: Mapping[str, str] | None = None,
                     ties: str = "doc_id_desc", filesystem: FileSystem | None = None,
                     encoding: str = "utf-8", part: bool = False, ascending: bool = False) -> CheckedRun:
    """:func:`read_run`, returning the checked run with its ids factorised once
    (:class:`~evalframe.schema.CheckedRun`), which :func:`evalframe.ranking.judge`
    uses as it is: a single source is factorised once, by its check (``part``: a
    partition of a run, which may hold no row, :func:`~evalframe.schema.check_run`)."""
    check_columns(columns, caller="read_run")
    nested = isinstance(source, Mapping) and _is_nested_run_mapping(source)
    listed = isinstance(source, Sequence) and not isinstance(source, (str, bytes, os.PathLike))
    if not nested and not listed:  # read_run's single-source case
        raw, trimmed = _raw(source, "run", filesystem=filesystem, encoding=encoding)
        plain = None
        if system is None and columns is None and ties != "rank" and not ascending:
            table = plain_table(raw, ("query_id", "doc_id", "score"))
            plain = None if table is None else checked_text_run(table)
        return plain if plain is not None else check_run(
            raw, system=system, duplicates=duplicates, columns=columns, ties=ties, part=part, trimmed=trimmed,
            ascending=ascending)
    return encode_run(read_run(source, system=system, duplicates=duplicates, columns=columns, ties=ties,
                               filesystem=filesystem, encoding=encoding, ascending=ascending))


def read_checked_qrels(source: Source, *, columns: Mapping[str, str] | None = None, conflicts: Conflicts = "error",
                       filesystem: FileSystem | None = None, encoding: str = "utf-8",
                       part: bool = False) -> CheckedQrels:
    """:func:`read_qrels`, returning the checked golden set with its ids factorised once
    (and the conflicts ``conflicts`` resolved, :attr:`~evalframe._id_codes.CheckedQrels.conflicts`;
    ``part``: a partition of a golden set, which may hold no row)."""
    check_columns(columns, caller="read_qrels")
    check_conflicts(conflicts, caller="read_qrels")
    if isinstance(source, CheckedQrels):
        return source
    raw, trimmed = _raw(source, "qrels", filesystem=filesystem, encoding=encoding)
    table = plain_table(raw, ("query_id", "doc_id", "relevance")) if columns is None else None
    plain = None if table is None else checked_text_qrels(table)
    return plain if plain is not None else check_qrels(raw, columns=columns, conflicts=conflicts, part=part,
                                                       trimmed=trimmed)


def plain_table(frame: pd.DataFrame, names: tuple[str, str, str]):
    """A table of exactly the columns ``names`` (two ids as pandas' Arrow-backed strings, then
    a numpy number column) as an Arrow table on the same buffers, for the checks without pandas
    (:func:`~evalframe._id_codes.checked_text_run`, :func:`~evalframe._id_codes.checked_text_qrels`,
    which give what :func:`check_run` / :func:`check_qrels` would, or None); else None."""
    import pyarrow as pa
    if list(frame.columns) != list(names):
        return None
    ids = [arrow_backing(frame[c]) for c in names[:2]]
    number = frame[names[2]]
    if ids[0] is None or ids[1] is None or not isinstance(number.dtype, np.dtype) or number.dtype.kind not in "if":
        return None
    return pa.table(dict(zip(names, [*ids, arrow_of(number.to_numpy())])))
