"""TREC text files read into Arrow tables, without pandas: the bytes (gunzipped), the
first data line and whether it is a header, the whitespace-separated columns parsed by
Arrow's CSV reader (C's ``isspace`` blanks, ``#`` comments, malformed lines counted and
shown), and the files cut into blocks of whole lines.

:mod:`evalframe.io` makes its DataFrames from these tables; ``evalframe trec-eval`` keeps
them as Arrow tables from the file to its output.
"""
from __future__ import annotations

import gzip
import os
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

import numpy as np

from .canonical import ALIASES, END_NAMES, START_NAMES
from .errors import EvalframeInputError, InputProblem

if TYPE_CHECKING:
    import pyarrow as pa

QRELS_COLUMNS = ["query_id", "iteration", "doc_id", "relevance"]
RUN_COLUMNS = ["query_id", "q0", "doc_id", "rank", "score", "system"]
#: Column names (and aliases) a header line is recognised by.
KNOWN_COLUMNS = {a for names in ALIASES.values() for a in names} | set(START_NAMES) | set(END_NAMES)


def decompress(data: bytes, what: str, path: str) -> bytes:
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


def _ascii_compatible(encoding: str) -> bool:
    import codecs
    return codecs.lookup(encoding).name in ("iso8859-1", "utf-8", "ascii", "cp1252", "iso8859-15")


def not_utf8(data: bytes, what: str, path: str) -> EvalframeInputError:
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


NUMERIC_COLUMNS = {"score": "float64", "rank": "float64", "relevance": "int64"}


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
            if len(shown) < MAX_SHOWN:
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


def parse_whitespace(data: bytes, names: list[str], what: str, path: str, *,
                      normalise: bool = False, indented_comments: bool = False,
                      encoding: str = "utf-8", keep: Sequence[str] | None = None, text_type=None) -> "pa.Table":
    """Parse a whitespace-separated file with a fixed number of columns (pyarrow) into an
    Arrow table; the columns ``keep`` (default all) are returned, in that order.

    Files separated by single tabs or single spaces are parsed as they are; any
    other mix of blanks (C's ``isspace``: space, tab, ``\\v``, ``\\f``, ``\\r``) is
    first normalised to single spaces.  ``indented_comments``: a line whose first
    non-blank character is ``#`` is a comment (trec_eval's rule for runs; in
    qrels only a ``#`` in the first column starts a comment).

    Text columns are parsed as ``text_type`` (the type pandas stores them in: large
    strings under pandas 3, no cast when converted); a column not kept is not parsed at
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
    text_type = pa.large_string() if text_type is None else text_type
    # split on single blanks, an empty field is a doubled, leading or trailing blank: one
    # pass over the bytes finds any (the file is then normalised, below), so that a text
    # column not kept need not be parsed to be checked (ASCII text: none to validate)
    empty = simple and has_empty_field(data, delimiter)
    parsed = [c for c in names if c in keep or (c not in NUMERIC_COLUMNS and not (ascii_only and simple))]

    def parse(typed: bool):
        types = {c: (pa.from_numpy_dtype(np.dtype(NUMERIC_COLUMNS[c])) if typed and c in NUMERIC_COLUMNS else text_type)
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
        return parse_whitespace(original, names, what, path, normalise=True,
                                 indented_comments=indented_comments, encoding=encoding, keep=keep,
                                text_type=text_type)
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
                raise not_utf8(original, what, path) from None
            raise
    if n_bad and simple:  # a line with too many or too few fields split on single blanks
        return parse_whitespace(original, names, what, path, normalise=True,
                                 indented_comments=indented_comments, encoding=encoding, keep=keep,
                                text_type=text_type)
    if n_bad:
        count, shown = malformed_lines(original, n, n)
        raise EvalframeInputError(what, [InputProblem(
            f"{path}: {max(count, n_bad)} malformed lines (expected {n} fields: {' '.join(names)})",
            "fix or remove those lines", "\n".join(shown))])
    return table.select(keep)


#: Bytes per block of Arrow's CSV parser (its unit of work per thread): 16 MiB blocks
#: spread a run file of a few hundred MB over the cores (measured on the 262 MB run
#: of benchmarks/bench_trec_eval.py's 7000x1000: CPU 0.85 s with 64 MiB blocks,
#: 0.72 s with 16 MiB, and a lower wall time).
PARSE_BLOCK_BYTES = 1 << 24

#: Bytes per block of :func:`has_empty_field`'s pass (its temporaries stay in cache).
_SCAN_BYTES = 1 << 20


def has_empty_field(data: bytes, delimiter: str) -> bool:
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


MAX_SHOWN = 5


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


def first_data_line(data: bytes, kind: Literal["qrels", "run"]) -> bytes:
    """The first line of a text file that is neither blank nor a comment (a run's comment
    may be indented, as trec_eval reads it), from its first 64 KiB."""
    run = kind == "run"
    return next((ln for ln in data[:1 << 16].splitlines()
                 if ln.strip() and not (ln.lstrip() if run else ln).startswith(b"#")), b"")


def is_header(first: bytes, kind: Literal["qrels", "run"]) -> bool:
    """Whether a file's first data line is a header: it names known columns and cannot be
    data (:func:`could_be_data`)."""
    tokens = [t.decode(errors="replace").strip().strip('"').lower() for t in re.split(rb"[,\t ]+", first.strip())]
    return any(t in KNOWN_COLUMNS for t in tokens) and not could_be_data(first.split(), kind)


def trec_text_table(data: bytes, kind: Literal["qrels", "run"], path: str, *, first: bytes | None = None,
                    encoding: str = "utf-8", drop: Sequence[str] = (), text_type=None) -> "pa.Table":
    """The table of a TREC text file without a header (its bytes ``data``, decompressed):
    qrels ``query_id, iteration, doc_id, relevance`` (4 fields) or ``query_id, doc_id,
    relevance`` (3); a run ``query_id, doc_id, rank, score, system`` without the columns
    in ``drop`` (6 fields, ``Q0`` never parsed) or ``query_id, doc_id, score`` (3).  Its ids
    hold no blank (the lines are split on blanks).  ``first``: :func:`first_data_line`."""
    what = "golden set (qrels)" if kind == "qrels" else "run"
    first = first_data_line(data, kind) if first is None else first
    ntok = len(first.split())
    opts = {"indented_comments": kind == "run", "encoding": encoding, "text_type": text_type}
    if kind == "qrels":
        if ntok == 4:
            return parse_whitespace(data, QRELS_COLUMNS, what, path, **opts)
        if ntok == 3:
            return parse_whitespace(data, ["query_id", "doc_id", "relevance"], what, path, **opts)
        raise EvalframeInputError(what, [InputProblem(
            f"{path}: first line has {ntok} fields: {first[:200]!r}",
            "TREC qrels lines are 'query_id iteration doc_id relevance' (4 fields)")])
    if ntok == 6:
        keep = [c for c in ("query_id", "doc_id", "rank", "score", "system") if c not in drop]
        return parse_whitespace(data, RUN_COLUMNS, what, path, keep=keep, **opts)
    if ntok == 3:
        return parse_whitespace(data, ["query_id", "doc_id", "score"], what, path, **opts)
    raise EvalframeInputError(what, [InputProblem(
        f"{path}: first line has {ntok} fields: {first[:200]!r}",
        "TREC run lines are 'query_id Q0 doc_id rank score tag' (6 fields)")])


#: Name endings (after ``.gz``) of files read as another format than TREC text.
OTHER_FORMATS = (".parquet", ".pq", ".jsonl", ".ndjson", ".json", ".csv")


def plain_trec_text(source, kind: Literal["qrels", "run"], *, encoding: str = "utf-8", drop: Sequence[str] = (),
                    text_type=None) -> "pa.Table | None":
    """The table of a TREC text file without a header line (:func:`trec_text_table`), read
    from a local path or an in-memory binary file (``io.BytesIO``) as
    :func:`evalframe.io.read_raw` reads it, without pandas; None when the file is not one
    (another format by its name or its bytes, a header line, a path that could be a URL, a
    file that cannot be read) or a problem is found: :func:`~evalframe.io.read_raw` then
    reads it, or says what is wrong, as always."""
    if hasattr(source, "getvalue"):
        data, name = source.getvalue(), str(getattr(source, "name", "") or "")
    else:
        name = os.fsdecode(os.fspath(source))
        if ":" in name:
            return None
        try:
            with open(name, "rb") as f:
                data = f.read()
        except OSError:
            return None
    name = name.lower()
    if name.endswith(".gz"):
        name = name[:-3]
    if name.endswith(OTHER_FORMATS):
        return None
    try:
        data = decompress(data, kind, name)
        first = first_data_line(data, kind)
        if data[:4] == b"PAR1" or is_header(first, kind):
            return None
        return trec_text_table(data, kind, name, first=first, encoding=encoding, drop=drop, text_type=text_type)
    except EvalframeInputError:
        return None
