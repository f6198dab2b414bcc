"""The text-block engine's cutting: a TREC text run file (first field: the question id) read in
blocks of whole questions (a grouped file, once), a question met again in a later block
detected, and an ungrouped file hashed on its question ids (:func:`question_buckets`) into bucket
files that each hold whole questions.  Used by ``evalframe trec-eval --memory-budget`` and by
the commands (``evaluate``, ``report``) on text runs larger than the budget; :class:`TextRun`
gives the streaming engine such a file as it reads a Parquet dataset.
"""
from __future__ import annotations

import os
from typing import Callable, Iterator, NamedTuple

import numpy as np
import pyarrow as pa

from .. import _arrow_compute as pc
from .._arrow_numpy import arrow_of, distinct, numpy_of
from . import budget as sizing
from .cutting import question_buckets, question_fingerprints
from .scratch import close_all

#: the bytes C's isspace() (and Python's ``bytes.split()``) is true for: the field separators
SPACE = np.zeros(256, dtype=bool)
SPACE[[9, 10, 11, 12, 13, 32]] = True
_NEWLINE, _HASH = 10, 35


class LineQuestions(NamedTuple):
    """Each line of a block: its question id (first field), where it ends, and whether it is data."""

    ids: pa.LargeStringArray
    ends: np.ndarray
    data: np.ndarray


def line_questions(block: bytes) -> LineQuestions:
    """The first field of each line of ``block`` (its question id, the bytes as they are: not
    checked as UTF-8), the offset just past each line, and which lines are data (not blank,
    not a ``#`` comment).  Vectorised over lines: the loops run once per byte of the longest
    leading space and of the longest id.

    Examples
    --------
    >>> q = line_questions(b"q1 Q0 d1 1 2.0 r\\n# note\\n\\n  q2 Q0 d2 1 1.0 r")
    >>> q.ids.to_pylist(), q.ends.tolist(), q.data.tolist()
    (['q1', '#', '', 'q2'], [17, 24, 25, 43], [True, False, False, True])
    """
    ends = np.flatnonzero(np.frombuffer(block, dtype=np.uint8) == _NEWLINE) + 1
    if not block.endswith(b"\n"):
        ends = np.append(ends, len(block))
        block += b"\n"  # every line ends with a separator: the loops below stop there
    arr = np.frombuffer(block, dtype=np.uint8)
    pos = np.concatenate(([0], ends[:-1])).astype(np.int64)
    live = np.flatnonzero(SPACE[arr[pos]] & (arr[pos] != _NEWLINE))
    while len(live):  # leading separators
        pos[live] += 1
        live = live[SPACE[arr[pos[live]]] & (arr[pos[live]] != _NEWLINE)]
    start, end = pos, pos.copy()
    live = np.flatnonzero(~SPACE[arr[end]])
    while len(live):
        end[live] += 1
        live = live[~SPACE[arr[end[live]]]]
    lengths = end - start
    offsets = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
    taken = arr[np.repeat(start - offsets[:-1], lengths) + np.arange(offsets[-1])]
    ids = pa.LargeStringArray.from_buffers(len(ends), pa.py_buffer(offsets), pa.py_buffer(taken.tobytes()))
    data = (lengths > 0) & (arr[start] != _HASH)
    return LineQuestions(ids, ends, data)


#: Bytes of a block's end read first to find where its last question starts (read again
#: four times larger while that question fills them).
_TAIL = 1 << 16


def _last_question_start(block: bytes, floor: int = 0, end: int | None = None) -> tuple[int, int]:
    """Where the last question of ``block[:end]`` (whole lines) starts (the end of the
    last data line of another question; 0 when every data line is the last one's
    question) and where its last data line starts (-1: none).  Only the end is read,
    larger while it holds one question; the lines before ``floor`` (a line start) are
    known to hold the question of the line at ``floor`` only, and are not read."""
    end = len(block) if end is None else end
    k = _TAIL
    while True:
        lo = floor if end - floor <= k else max(floor, block.rfind(b"\n", 0, end - k) + 1)
        q = line_questions(block[lo:end])
        rows = np.flatnonzero(q.data)
        last = lo + (int(q.ends[rows[-1] - 1]) if rows[-1] else 0) if len(rows) else -1  # its line's start
        if len(rows):
            ids = pc.take(q.ids, arrow_of(rows))
            other = rows[~numpy_of(pc.equal(ids, ids[len(ids) - 1]))]
            if len(other):
                return lo + int(q.ends[other[-1]]), last
        if lo == floor:
            return 0, last
        k *= 4


def question_blocks(path: str, size: int) -> Iterator[tuple[bytes, int]]:
    """(block, number of its first line) over the (possibly gzipped) text file ``path``:
    blocks of about ``size`` bytes of whole lines, each ending where a question's lines end
    (a question's lines are never split, however many there are: such a block is larger).
    A question whose lines are not all in one run of lines (an ungrouped file) is met
    again in a later block: :class:`SeenQuestions` tells.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp(), "run")
    >>> _ = path.write_bytes(b"q1 a\\nq1 b\\nq2 c\\nq3 d\\nq3 e\\n")
    >>> [(b.count(b"\\n"), line) for b, line in question_blocks(path, 6)]
    [(2, 1), (1, 3), (2, 4)]
    """
    from .._text_tables import open_binary
    carry, floor, line = b"", 0, 1
    with open_binary(path) as f:
        while data := f.read(size):
            block = carry + data
            del data  # one copy of the block held, not two
            end = block.rfind(b"\n") + 1  # the lines read whole
            cut, last = _last_question_start(block, floor, end) if end else (0, -1)
            if cut == 0:  # one question so far
                carry, floor = block, max(last, floor)
                continue
            head, carry, floor = block[:cut], block[cut:], last - cut
            del block  # not held while the block is used
            yield head, line
            line += head.count(b"\n")
    cut = _last_question_start(carry, floor)[0] if carry.strip() else 0  # its last line is whole now
    if cut:
        yield carry[:cut], line
        line += carry[:cut].count(b"\n")
    if carry[cut:].strip():
        yield carry[cut:], line


class SeenQuestions:
    """The questions of the blocks read so far (64-bit fingerprints of their ids, compared
    as strings: a collision only sends a grouped file down the bucket pass).

    Examples
    --------
    >>> import pyarrow as pa
    >>> seen = SeenQuestions()
    >>> seen.met_again(pa.array(["q1", "q2"])), seen.met_again(pa.array(["q3"])), seen.met_again(pa.array(["q2"]))
    (False, False, True)
    """

    def __init__(self) -> None:
        self.fingerprints = np.zeros(0, dtype=np.uint64)

    def met_again(self, ids) -> bool:
        """Whether a block's question ids (Arrow or pandas; repeats among them allowed)
        hold a question of an earlier block; if not, they are added."""
        fp = distinct(question_fingerprints(ids))
        if len(self.fingerprints) and np.isin(fp, self.fingerprints, assume_unique=True).any():
            return True
        self.fingerprints = distinct(np.concatenate((self.fingerprints, fp)))  # (np.union1d)
        return False


class Buckets(NamedTuple):
    """The bucket files of a run file (:func:`bucket_files`), and its last data line."""

    paths: list[str]
    last_line: bytes


def bucket_count(path: str, size: int) -> int:
    """Buckets enough for each to hold about half a block of ``size`` bytes of the file ``path``."""
    rows = sizing.text_run_rows(path)
    return int(min(sizing.MAX_BUCKETS, max(2, 2 * -(-rows * sizing.TEXT_BYTES_PER_ROW // size))))


def bucket_files(path: str, size: int, directory: str, n: int | None = None, *,
                 write: "Callable[[bytes, list], bytes] | None" = None) -> Buckets:
    """The lines of the text file ``path`` (read ``size`` bytes at a time) hashed on their
    first field (:func:`~evalframe.engine.cutting.question_buckets`) into ``n`` files in
    ``directory`` (default :func:`bucket_count`): all of a question's lines land in one
    file, in their order.  Returns the files' paths (bucket order) and the file's last
    data line (its run tag, for ``trec-eval``).  Every file is closed, on error too.
    ``write`` (default :func:`write_buckets`) writes each block.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "run").write_bytes(b"q1 a\\nq2 b\\nq1 c\\n")
    >>> b = bucket_files(str(d / "run"), 4, str(d), n=3)
    >>> sorted(pathlib.Path(p).read_bytes() for p in b.paths), b.last_line
    ([b'', b'q1 a\\nq1 c\\n', b'q2 b\\n'], b'q1 c')
    """
    from .._text_tables import line_blocks, open_binary
    n = bucket_count(path, size) if n is None else n
    write = write_buckets if write is None else write
    paths = [os.path.join(directory, f"bucket-{b:04d}.txt") for b in range(n)]
    files = []
    last = b""
    try:
        files += [open(p, "wb") for p in paths]
        with open_binary(path) as f:
            for block in line_blocks(f, size):
                last = write(block if block.endswith(b"\n") else block + b"\n", files) or last
    finally:
        close_all(files)
    return Buckets(paths, last)


def write_buckets(block: bytes, files: list) -> bytes:
    """Append each line of ``block`` (whole lines, the last ending with a newline) to
    ``files[b]``, b its question's bucket (:func:`~evalframe.engine.cutting.question_buckets`
    with ``len(files)`` buckets); returns the block's last data line (b"": none).

    Examples
    --------
    >>> import io
    >>> files = [io.BytesIO(), io.BytesIO()]
    >>> write_buckets(b"q1 a\\nq2 b\\nq1 c\\n# end\\n", files)
    b'q1 c'
    >>> sorted(f.getvalue() for f in files)
    [b'q1 a\\nq1 c\\n', b'q2 b\\n# end\\n']
    """
    q = line_questions(block)
    if not len(q.ends):
        return b""
    bucket = question_buckets(q.ids, len(files))
    order = np.argsort(bucket, kind="stable")
    offsets = np.concatenate(([0], q.ends)).astype(np.int64)
    lines = pa.LargeBinaryArray.from_buffers(pa.large_binary(), len(q.ends),
                                             [None, pa.py_buffer(offsets), pa.py_buffer(block)])
    taken = pc.take(lines, arrow_of(order))
    off = np.frombuffer(taken.buffers()[1], dtype=np.int64)[taken.offset: taken.offset + len(taken) + 1]
    data = memoryview(taken.buffers()[2])
    bounds = np.searchsorted(bucket[order], np.arange(len(files) + 1))
    for b in np.flatnonzero(np.diff(bounds)).tolist():
        files[b].write(data[int(off[bounds[b]]):int(off[bounds[b + 1]])])
    rows = np.flatnonzero(q.data)
    if not len(rows):
        return b""
    r = int(rows[-1])
    return block[int(offsets[r]):int(q.ends[r])].strip()


#: File name endings of runs that are not TREC text (read whole, or as Parquet datasets).
NOT_TREC_TEXT = (".csv", ".tsv", ".jsonl", ".ndjson", ".json", ".parquet", ".pq")


def is_text_run(source) -> bool:
    """Whether ``source`` is the path of a TREC text run file (possibly gzipped): a file
    whose name does not end in another format's extension."""
    if not isinstance(source, (str, os.PathLike)):
        return False
    text = os.fsdecode(os.fspath(source))
    name = text.lower().removesuffix(".gz")
    return os.path.isfile(text) and not name.endswith(NOT_TREC_TEXT)


class TextRun:
    """A TREC text run file read as the streaming engine reads a Parquet dataset: blocks of
    whole questions (:func:`question_blocks`) as Arrow batches, each block's lines read as
    ``evalframe.io.read_table`` reads a whole file (unchecked: the engine checks each part),
    a schema, and its rows estimated from its size (:func:`~evalframe.engine.budget.text_run_rows`).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp(), "run.txt")
    >>> _ = path.write_text("q1 Q0 d1 1 2.0 bm25\\nq1 Q0 d2 2 1.0 bm25\\nq2 Q0 d1 1 3.0 bm25\\n")
    >>> run = TextRun(path)
    >>> run.schema.names
    ['query_id', 'doc_id', 'rank', 'score', 'system']
    >>> [b.num_rows for b in run.to_batches(batch_size=1)]
    [2, 1]
    """

    def __init__(self, path) -> None:
        self.path = os.fsdecode(os.fspath(path))
        self._schema: pa.Schema | None = None

    def count_rows(self) -> int:
        """About how many rows the file holds (from its size)."""
        return sizing.text_run_rows(self.path)

    @property
    def schema(self) -> pa.Schema:
        """The columns of the file's tables (those of its first block)."""
        if self._schema is None:
            for table in self.tables(sizing.MIN_BLOCK_BYTES):
                self._schema = table.schema
                break
            else:
                self._schema = pa.schema([("query_id", pa.large_string()), ("doc_id", pa.large_string()),
                                          ("score", pa.float64())])
        return self._schema

    def head(self, n: int) -> pa.Table:
        """The first ``n`` rows."""
        for table in self.tables(sizing.MIN_BLOCK_BYTES):
            return table.slice(0, n)
        return self.schema.empty_table()

    def to_batches(self, columns=None, batch_size: int = 1 << 20, **_ignored) -> Iterator[pa.RecordBatch]:
        """The file's rows in batches of whole questions (``columns`` of them), each about
        ``batch_size`` rows (a question with more is one larger batch)."""
        size = max(sizing.MIN_BLOCK_BYTES, int(batch_size) * sizing.TEXT_BYTES_PER_ROW)
        for table in self.tables(size):
            if columns is not None:
                table = table.select(list(columns))
            yield from table.combine_chunks().to_batches()

    def tables(self, size: int) -> Iterator[pa.Table]:
        """The file's blocks of about ``size`` bytes of whole questions, each as a table (a
        first line alone in its block, perhaps a header, is read with the next block)."""
        head = b""
        for block, line in question_blocks(self.path, size):
            block, head = head + block, b""
            if line == 1 and block.count(b"\n") < 64 and line_questions(block).data.sum() == 1:
                head = block  # one line, perhaps a header: read with what follows
            elif block.strip():
                yield self._table(block, line)
        if head.strip():
            yield self._table(head, 1)

    def _table(self, block: bytes, line: int) -> pa.Table:
        """One block's lines as ``evalframe.io.read_table`` reads a whole file, with the
        first block's schema (ids as strings, numbers as numbers)."""
        import io as _io

        from ..errors import EvalframeInputError, InputProblem
        from ..io import read_table
        buf = _io.BytesIO(block)
        buf.name = self.path[:-3] if self.path.endswith(".gz") else self.path
        try:
            frame = read_table(buf, "run")
        except EvalframeInputError as exc:
            if line == 1:
                raise
            raise EvalframeInputError(exc.table, [InputProblem(
                f"{self.path} was read in blocks of whole questions: the line numbers below count from "
                f"line {line} of the file", "see the problems below"), *exc.problems]) from exc
        table = pa.Table.from_pandas(frame, preserve_index=False)
        if self._schema is not None and table.schema != self._schema:
            table = table.select(self._schema.names).cast(self._schema)
        return table
