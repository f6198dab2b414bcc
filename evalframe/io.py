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
  (:func:`evalframe.inputs.arrow_frame`).
- Runs as RAG logs store them: one row per question with a list of document ids (and
  optionally a list of scores), from pandas list columns, Arrow list arrays or JSON lines;
  runs with a rank and no score (see :mod:`evalframe.inputs`).
- The dict-of-dicts used by pytrec_eval and ranx: ``{query_id: {doc_id: value}}``.

Paths are local files: a URL-looking path (``s3://...``, ``http://...``) is
refused.  To read from a remote store, pass ``filesystem=`` (a ``pyarrow.fs`` or
fsspec filesystem) with the path inside it, or an opened binary file object.

Several systems: a table with a ``system`` column, a list of runs, or a dict
``{system_name: run}``.  A TREC run file's tag column becomes ``system``.
"""
from __future__ import annotations

__all__ = ["read_qrels", "read_run", "read_run_as_given", "read_chunks", "read_table", "read_raw", "read_golden_set", "read_checked_qrels", "read_checked_run", "local_path", "could_be_data",
           "malformed_lines", "line_blocks", "open_binary", "system_name", "RUN_EXTENSIONS", "is_diversity_qrels"]

import gzip
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
from .inputs import apply_columns, arrow_frame, check_columns
from .spans import END_NAMES, START_NAMES, check_chunks, check_spans, is_span_table
from ._conflicts import Conflicts, check_conflicts
from ._id_codes import CheckedQrels, CheckedRun, encode_run
from .schema import ALIASES, check_qrels, check_run, clean_run

Source = Union[str, os.PathLike, pd.DataFrame, Mapping, "_io.IOBase"]

#: A ``pyarrow.fs.FileSystem`` or an ``fsspec`` filesystem (neither is imported here).
FileSystem = Any

_QRELS_COLS = ["query_id", "iteration", "doc_id", "relevance"]
_RUN_COLS = ["query_id", "q0", "doc_id", "rank", "score", "system"]
_KNOWN = {a for names in ALIASES.values() for a in names} | set(START_NAMES) | set(END_NAMES)


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


def _decompress(data: bytes, what: str, path: str) -> bytes:
    """The file's bytes, gunzipped when they start with gzip's magic bytes; a damaged
    or doubly compressed file is an input error naming it."""
    if data[:2] != b"\x1f\x8b":
        return data
    import zlib
    try:
        out = gzip.decompress(data)
    except (EOFError, OSError, zlib.error) as e:
        raise EvalframeInputError(what, [InputProblem(
            f"{path}: not a readable gzip file ({e})",
            "the file is damaged or was cut short: check it with 'gzip -t', or copy it again")]) from None
    if out[:2] == b"\x1f\x8b":
        raise EvalframeInputError(what, [InputProblem(
            f"{path}: the file is gzip-compressed twice", "decompress it once ('gunzip' it, then read the .gz left)")])
    return out


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
            return _decompress(fh.read(), what, str(path))
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise FileNotFoundError(f"no such file: {str(path)!r}") from None
    except OSError as e:
        raise _os_problem(path, what, e) from None
    return _decompress(data, what, str(path))


def _open_remote(filesystem: FileSystem, path: str):
    """A binary input stream from a pyarrow.fs or an fsspec filesystem."""
    if hasattr(filesystem, "open_input_stream"):  # pyarrow.fs.FileSystem
        return filesystem.open_input_stream(path)
    if hasattr(filesystem, "open"):  # fsspec.AbstractFileSystem
        return filesystem.open(path, "rb")
    raise error("read", "filesystem", "a pyarrow.fs.FileSystem or an fsspec filesystem", filesystem)


def _ascii_compatible(encoding: str) -> bool:
    import codecs
    return codecs.lookup(encoding).name in ("iso8859-1", "utf-8", "ascii", "cp1252", "iso8859-15")


def _not_utf8(data: bytes, what: str, path: str) -> EvalframeInputError:
    try:
        data.decode("utf-8")
        start = 0
    except UnicodeDecodeError as exc:
        start = exc.start
    line = data.count(b"\n", 0, start) + 1
    return EvalframeInputError(what, [InputProblem(
        f"{path} is not UTF-8 text (byte {data[start:start + 1]!r} on line {line})",
        "pass encoding= with the file's encoding; encoding='latin-1' reads any bytes and keeps "
        "every id exactly (trec_eval compares ids as bytes)")])


def _strip_ext(path: Path) -> str:
    name = path.name.lower()
    if name.endswith(".gz"):
        name = name[:-3]
    return name


_NUMERIC = {"score": "float64", "rank": "float64", "relevance": "int64"}


def malformed_lines(original: bytes, least: int, most: int | None, *, start: int = 1) -> tuple[int, list[str]]:
    """Count and show the data lines of a file with fewer than ``least`` or more
    than ``most`` fields, numbered as in the file (error path only); ``start`` is
    the number of ``original``'s first line when it is a block of a larger file."""
    if original[:2] == b"\x1f\x8b":
        original = gzip.decompress(original)
    bad, shown = 0, []
    for number, line in enumerate(original.split(b"\n"), start=start):
        fields = line.split()
        if not fields or fields[0].startswith(b"#"):
            continue
        if len(fields) < least or (most is not None and len(fields) > most):
            bad += 1
            if len(shown) < _MAX:
                shown.append(f"line {number}: {line.decode(errors='replace').strip()!r} ({len(fields)} fields)")
    return bad, shown


def open_binary(path: str | os.PathLike):
    """``path`` opened for reading bytes, decompressed when it is gzip (by its first
    two bytes, as a whole file read is)."""
    with open(path, "rb") as f:
        magic = f.read(2)
    return gzip.open(path, "rb") if magic == b"\x1f\x8b" else open(path, "rb")


def line_blocks(f, size: int):
    """The bytes of the binary file ``f``, about ``size`` at a time, each block cut
    after a newline (the last may have none): no line is split between blocks."""
    rest = b""
    while True:
        data = f.read(size)
        if not data:
            if rest:
                yield rest
            return
        block = rest + data
        cut = block.rfind(b"\n") + 1
        if cut == 0:
            rest = block
            continue
        rest = block[cut:]
        yield block[:cut]


def _parse_whitespace(data: bytes, names: list[str], what: str, path: str, *,
                      normalise: bool = False, indented_comments: bool = False,
                      encoding: str = "utf-8", keep: Sequence[str] | None = None) -> pd.DataFrame:
    """Parse a whitespace-separated file with a fixed number of columns (pyarrow);
    the columns ``keep`` (default all) are returned, in that order.

    Files separated by single tabs or single spaces are parsed as they are; any
    other mix of blanks (C's ``isspace``: space, tab, ``\\v``, ``\\f``, ``\\r``) is
    first normalised to single spaces.  ``indented_comments``: a line whose first
    non-blank character is ``#`` is a comment (trec_eval's rule for runs; in
    qrels only a ``#`` in the first column starts a comment).

    Text columns are parsed as the type pandas stores them in (large strings
    under pandas 3: no cast when converted); a column not kept is not parsed at
    all (its fields are checked non-empty on the bytes), except a text column of
    a file that is not ASCII or not split on single blanks (it is parsed, so that
    its text is validated, but not converted)."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    original = data
    n = len(names)
    has_cr = b"\r" in data
    if has_cr:
        data = data.replace(b"\r\n", b"\n")
    if b"#" in data:
        if indented_comments:
            data = re.sub(rb"(?m)^[ \t\v\f\r]*#[^\n]*\n?", b"", data)
        elif data.startswith(b"#") or b"\n#" in data:
            data = re.sub(rb"(?m)^#[^\n]*\n?", b"", data)
    if (has_cr and b"\r" in data) or b"\v" in data or b"\f" in data:  # (no \r in the file: none now)
        normalise = True
    ascii_only = data.isascii()
    if encoding != "utf-8" and _ascii_compatible(encoding) and ascii_only:
        encoding = "utf-8"  # the same text, without transcoding
    # Fast path: a file with tabs and no spaces, or spaces and no tabs, is parsed split
    # on that byte; it is right when every line then holds n fields, none empty (a
    # doubled, leading or trailing blank leaves an empty field or one too many), which
    # is checked after parsing: otherwise the file is normalised (below) and parsed
    # again.  (Membership tests stop at the first hit; counting blanks read the whole
    # file three times.)
    simple = True
    has_tab = b"\t" in data
    if not normalise and has_tab and b" " not in data:
        delimiter = "\t"
    elif not normalise and not has_tab:
        delimiter = " "
    else:
        simple, delimiter = False, " "
        data = re.sub(rb"[ \t\v\f\r]+", b" ", data)
        data = re.sub(rb"(?m)^ | $", b"", data)
        if b"\n\n" in data or data.startswith(b"\n"):
            data = re.sub(rb"\n\n+", b"\n", data).lstrip(b"\n")
    if not data or data.isspace():  # (isspace stops at the first other byte; strip copied the file)
        raise EvalframeInputError(what, [InputProblem(f"{path} holds no data lines", "check the file")])
    n_bad = 0

    def on_invalid(row):
        nonlocal n_bad
        n_bad += 1
        return "skip"

    keep = list(names) if keep is None else list(keep)
    text_type = pa.large_string() if _PANDAS_STR else pa.string()  # pandas 3's str dtype holds large strings
    # split on single blanks, an empty field is a doubled, leading or trailing blank: one
    # pass over the bytes finds any (the file is then normalised, below), so that a text
    # column not kept need not be parsed to be checked (ASCII text: none to validate)
    empty = simple and _has_empty_field(data, delimiter)
    parsed = [c for c in names if c in keep or (c not in _NUMERIC and not (ascii_only and simple))]

    def parse(typed: bool):
        types = {c: (pa.from_numpy_dtype(np.dtype(_NUMERIC[c])) if typed and c in _NUMERIC else text_type)
                 for c in parsed}
        return pacsv.read_csv(
            pa.BufferReader(data),  # the bytes themselves (a BytesIO is read through Python, copied)
            read_options=pacsv.ReadOptions(column_names=names, block_size=PARSE_BLOCK_BYTES, encoding=encoding),
            parse_options=pacsv.ParseOptions(delimiter=delimiter, quote_char=False, double_quote=False,
                                             invalid_row_handler=on_invalid),
            convert_options=pacsv.ConvertOptions(column_types=types, strings_can_be_null=False,
                                                 include_columns=parsed),
            memory_pool=parse_pool(),
        )

    if empty:  # blanks are doubled somewhere: normalise and parse (below)
        return _parse_whitespace(original, names, what, path, normalise=True,
                                 indented_comments=indented_comments, encoding=encoding, keep=keep)
    try:
        table = parse(typed=True)
    except pa.ArrowInvalid:
        # A value that is not a number: read everything as text so that the
        # schema step can report every bad row at once.
        n_bad = 0
        try:
            table = parse(typed=False)
        except pa.ArrowInvalid as exc:
            if "UTF8" in str(exc) or "UTF-8" in str(exc):
                raise _not_utf8(original, what, path) from None
            raise
    if n_bad and simple:  # a line with too many or too few fields split on single blanks
        return _parse_whitespace(original, names, what, path, normalise=True,
                                 indented_comments=indented_comments, encoding=encoding, keep=keep)
    if n_bad:
        count, shown = malformed_lines(original, n, n)
        raise EvalframeInputError(what, [InputProblem(
            f"{path}: {max(count, n_bad)} malformed lines (expected {n} fields: {' '.join(names)})",
            "fix or remove those lines", "\n".join(shown))])
    return table.select(keep).to_pandas(types_mapper=_string_mapper)


#: Bytes per block of Arrow's CSV parser (its unit of work per thread): 16 MiB blocks
#: spread a run file of a few hundred MB over the cores (measured on the 262 MB run
#: of benchmarks/bench_trec_eval.py's 7000x1000: CPU 0.85 s with 64 MiB blocks,
#: 0.72 s with 16 MiB, and a lower wall time).
PARSE_BLOCK_BYTES = 1 << 24

#: Bytes per block of :func:`_has_empty_field`'s pass (its temporaries stay in cache).
_SCAN_BYTES = 1 << 20


def _has_empty_field(data: bytes, delimiter: str) -> bool:
    """Whether splitting ``data``'s lines on single ``delimiter`` bytes leaves an empty
    field: a doubled delimiter, or one at the start or end of a line (numpy, block by
    block, into buffers allocated once: a two-byte ``in`` search costs about as much as
    the parse).  Two adjacent separators (delimiter or newline) are looked for first;
    only a block where some are (a blank line, two newlines, is not an empty field) is
    looked at again for a pair holding a delimiter."""
    d = ord(delimiter)
    a = np.frombuffer(data, dtype=np.uint8)
    if not len(a):
        return False
    if a[0] == d or a[-1] == d:
        return True
    size = min(_SCAN_BYTES, len(a) - 1) + 1
    blank, edge, pair = np.empty(size, bool), np.empty(size, bool), np.empty(size, bool)
    for lo in range(0, len(a) - 1, _SCAN_BYTES):
        block = a[lo: lo + _SCAN_BYTES + 1]  # one byte of overlap: pairs across blocks
        m = len(block)
        b, e, p = blank[:m], edge[:m], pair[:m - 1]
        np.equal(block, d, out=b)
        np.equal(block, 10, out=e)
        e |= b  # a separator: the delimiter or a newline
        np.logical_and(e[1:], e[:-1], out=p)
        if p.any() and ((b[1:] & e[:-1]).any() or (b[:-1] & e[1:]).any()):
            return True
    return False


def parse_pool():
    """The Arrow memory pool text files are parsed into: jemalloc when this
    pyarrow has it.  Arrow's default, mimalloc, takes about 6x longer on its
    first large allocations in a process (a cold ``read_csv`` of a 2M-line
    run: 3.7 s against 0.75 s with jemalloc, 0.6 s once mimalloc is warm), and
    a command reads its files once, cold."""
    import pyarrow as pa
    try:
        return pa.jemalloc_memory_pool()
    except NotImplementedError:  # pragma: no cover - a pyarrow built without jemalloc
        return pa.default_memory_pool()


def _string_mapper(t):
    import pyarrow as pa
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return pd.StringDtype("pyarrow", na_value=np.nan) if _PANDAS_STR else pd.ArrowDtype(t)
    return None


_PANDAS_STR = int(pd.__version__.split(".")[0]) >= 3


_MAX = 5


def _is_number(token: bytes) -> bool:
    try:
        float(token)
    except ValueError:
        return False
    return True


def could_be_data(fields: list[bytes], kind: Literal["qrels", "run"]) -> bool:
    """Whether a line split on blanks can be a TREC data line: a run's score
    (fifth of six or more fields, or third of three) or a qrels label (fourth of
    four, or third of three) is a number.  Only a line that cannot be data may
    be a header."""
    n = len(fields)
    if n == 3:
        return _is_number(fields[2])
    if kind == "run":
        return n >= 6 and _is_number(fields[4])
    return n == 4 and _is_number(fields[3])


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
        data = _decompress(data, what, str(path))
    if data[:4] == b"PAR1" or name.endswith((".parquet", ".pq")):
        return pd.read_parquet(_io.BytesIO(data)), False
    try:
        if name.endswith((".jsonl", ".ndjson")):
            return _read_jsonl(data.decode(encoding), what, str(path)), False
        if name.endswith(".json"):
            import json
            return _from_mapping(json.loads(data.decode(encoding)), kind), False
    except UnicodeDecodeError:
        raise _not_utf8(data, what, str(path)) from None
    run = kind == "run"
    first = next((ln for ln in data[:1 << 16].splitlines()
                  if ln.strip() and not (ln.lstrip() if run else ln).startswith(b"#")), b"")
    tokens = [t.decode(errors="replace").strip().strip('"').lower() for t in re.split(rb"[,\t ]+", first.strip())]
    has_header = any(t in _KNOWN for t in tokens) and not could_be_data(first.split(), kind)
    if has_header or name.endswith(".csv"):
        sep = "," if (name.endswith(".csv") or (b"," in first and b"\t" not in first)) else ("\t" if b"\t" in first else r"\s+")
        # Every column as text: ids keep their exact spelling ("0012") whatever the
        # header's case; the schema step converts scores, labels and ranks.
        try:
            return pd.read_csv(_io.BytesIO(data), sep=sep, dtype=str, keep_default_na=False, na_values=[""],
                               comment=None, skip_blank_lines=True, encoding=encoding), False
        except UnicodeDecodeError:
            raise _not_utf8(data, what, str(path)) from None
    ntok = len(first.split())  # a TREC text file, split on blanks: its ids hold none (True: trimmed)
    opts = {"indented_comments": run, "encoding": encoding}
    if kind == "qrels":
        if ntok == 4:
            df = _parse_whitespace(data, _QRELS_COLS, what, str(path), **opts)
            if is_diversity_qrels(df):  # TREC diversity qrels: the second column is the subtopic
                return df.rename(columns={"iteration": "subtopic"})[["query_id", "subtopic", "doc_id",
                                                                      "relevance"]], True
            return df[["query_id", "doc_id", "relevance"]], True
        if ntok == 3:
            return _parse_whitespace(data, ["query_id", "doc_id", "relevance"], what, str(path), **opts), True
        raise EvalframeInputError(what, [InputProblem(
            f"{path}: first line has {ntok} fields: {first[:200]!r}",
            "TREC qrels lines are 'query_id iteration doc_id relevance' (4 fields)")])
    if ntok == 6:
        keep = [c for c in ("query_id", "doc_id", "rank", "score", "system") if c not in drop]
        return _parse_whitespace(data, _RUN_COLS, what, str(path), keep=keep, **opts), True
    if ntok == 3:
        return _parse_whitespace(data, ["query_id", "doc_id", "score"], what, str(path), **opts), True
    raise EvalframeInputError(what, [InputProblem(
        f"{path}: first line has {ntok} fields: {first[:200]!r}",
        "TREC run lines are 'query_id Q0 doc_id rank score tag' (6 fields)")])


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
    (:class:`~evalframe.schema.CheckedQrels`, its :attr:`~evalframe.schema.CheckedQrels.table`
    is :func:`read_qrels`'s table), or a span golden set's table.

    The conflicting labels ``conflicts`` resolved travel on the checked golden set
    (:attr:`~evalframe.schema.CheckedQrels.conflicts`): :func:`evalframe.evaluate`,
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
        return check_run(raw, system=system, duplicates=duplicates, columns=columns, ties=ties, part=part,
                         trimmed=trimmed, ascending=ascending)
    return encode_run(read_run(source, system=system, duplicates=duplicates, columns=columns, ties=ties,
                               filesystem=filesystem, encoding=encoding, ascending=ascending))


def read_checked_qrels(source: Source, *, columns: Mapping[str, str] | None = None, conflicts: Conflicts = "error",
                       filesystem: FileSystem | None = None, encoding: str = "utf-8",
                       part: bool = False) -> CheckedQrels:
    """:func:`read_qrels`, returning the checked golden set with its ids factorised once
    (and the conflicts ``conflicts`` resolved, :attr:`~evalframe.schema.CheckedQrels.conflicts`;
    ``part``: a partition of a golden set, which may hold no row)."""
    check_columns(columns, caller="read_qrels")
    check_conflicts(conflicts, caller="read_qrels")
    if isinstance(source, CheckedQrels):
        return source
    raw, trimmed = _raw(source, "qrels", filesystem=filesystem, encoding=encoding)
    return check_qrels(raw, columns=columns, conflicts=conflicts, part=part, trimmed=trimmed)
