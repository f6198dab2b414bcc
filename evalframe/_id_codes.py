"""Id columns factorised once, shared by the checks and the ranking step.

Question and system ids are dictionary-encoded once (pyarrow, int32 codes in
first-appearance order: :class:`Codes`); document ids are never hashed into one big
table: duplicates are found from 64-bit fingerprints of their bytes, every candidate
confirmed on the strings (:func:`duplicate_docs`), and the ranking step probes them into
the golden set's (small) dictionary.  :class:`CheckedRun` and :class:`CheckedQrels` are a
checked table with its ids factorised (:func:`encode_run`, :func:`encode_qrels`); the table
is a pandas DataFrame, or an Arrow table (a TREC text file read without pandas, as
``evalframe trec-eval`` reads it) whose DataFrame is made on first use (:attr:`CheckedRun.frame`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from . import _arrow_compute as pc
from ._arrow_numpy import arrow_of, distinct, numpy_of
from ._id_bytes import (BLOCK_ROWS, KeyIndex, arrow_backing, arrow_id_status, fingerprints, int_fingerprints,
                        integer_ids, pair_keys, parse_decimal_ids)
from ._threads import cached_property

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

    from ._conflicts import ResolvedConflicts


@dataclass(frozen=True, eq=False)
class Codes:
    """An id column factorised once: int32 codes (first-appearance order) and the
    distinct ids as a pyarrow array (``dictionary``) or numpy objects (``names``)."""

    codes: np.ndarray
    dictionary: "pa.Array"

    @cached_property
    def names(self) -> np.ndarray:
        return self.dictionary.to_numpy(zero_copy_only=False).astype(object)

    @cached_property
    def fingerprint(self) -> np.ndarray:
        """:func:`~evalframe._id_bytes.fingerprints` of the distinct ids (kept when ``encode_ids`` made them)."""
        import pyarrow as pa
        return fingerprints(pa.chunked_array([self.dictionary]))

    def __len__(self) -> int:
        return len(self.dictionary)


def id_strings(s: "pd.Series | pa.ChunkedArray"):
    """A clean id column (pandas, or Arrow strings) as a pyarrow chunked string array."""
    arr = arrow_backing(s)
    if arr is not None:
        return arr
    import pyarrow as pa
    return pa.chunked_array([pa.array(s.to_numpy(dtype=object), type=pa.large_string())])


#: A column is dictionary-encoded run by run (of equal adjacent ids) when it has at
#: most this share of its rows' runs: a run file grouped by question, whose question
#: ids are then hashed once per question, not once per row, or a golden set mostly
#: grouped.  Measured on 3M rows: hashing the runs costs about what hashing the rows
#: does at a share of 0.5 to 0.6 (the run-end encoding itself is cheap).
RUNS_SHARE = 0.5


def encode_ids(s: "pd.Series | pa.ChunkedArray") -> Codes:
    """Int32 codes in first-appearance order and the distinct ids.  A column whose
    equal ids come in runs (a run grouped by question) is encoded one run at a time
    (its run-end encoding, about 5x cheaper than hashing every row), with the same
    codes and dictionary; runs whose ids are all distinct (each question once, as
    in a run file) are not hashed at all (:func:`_distinct_fingerprints`)."""
    import pyarrow as pa
    arr = id_strings(s)
    if arr.num_chunks == 0:
        return Codes(np.zeros(0, np.int32), pa.array([], pa.large_string()))
    col = arr.combine_chunks() if arr.num_chunks > 1 else arr.chunk(0)
    if len(col) > BLOCK_ROWS and not col.null_count:
        ree = pc.run_end_encode(col)
        if len(ree.values) <= RUNS_SHARE * len(col):
            runs = np.diff(numpy_of(ree.run_ends), prepend=0)
            fp = _distinct_fingerprints(ree.values)
            if fp is not None:  # each id a single run: the runs are the dictionary
                out = Codes(np.repeat(np.arange(len(runs), dtype=np.int32), runs), ree.values)
                out.__dict__["fingerprint"] = fp  # cached: the ranking step probes them
                return out
            enc = pc.dictionary_encode(ree.values)
            return Codes(np.repeat(numpy_of(enc.indices).astype(np.int32, copy=False), runs), enc.dictionary)
    enc = pc.dictionary_encode(col)
    return Codes(numpy_of(enc.indices).astype(np.int32, copy=False), enc.dictionary)


def _distinct_fingerprints(values) -> np.ndarray | None:
    """The fingerprints of some string ids when no two are equal (then the ids are
    their own dictionary, coded 0, 1, 2, ...), else None (also when two distinct ids
    share a fingerprint, about never).

    Distinct fingerprints mean distinct strings, so a sort of 64-bit numbers decides it
    exactly, several times faster than hashing the strings; ids that do repeat are left
    to the hash."""
    import pyarrow as pa
    fp = fingerprints(pa.chunked_array([values]))
    srt = np.sort(fp)
    return None if (srt[1:] == srt[:-1]).any() else fp


class CheckedTable:
    """What a checked run and a checked golden set share: their table ``data`` (a DataFrame,
    or an Arrow table read without pandas) and its columns read without making a DataFrame."""

    data: "pd.DataFrame | pa.Table"

    @cached_property
    def frame(self) -> "pd.DataFrame":
        """The cleaned table as a DataFrame (:attr:`data` itself, or made from it once); a
        run's ``doc_id`` column holds int64 ids when it gave integers (``integer_ids``;
        :func:`clean_run` writes them as strings)."""
        return as_frame(self.data)

    def has(self, name: str) -> bool:
        """Whether the table has the column ``name`` (without making :attr:`frame`)."""
        return has_column(self.data, name)

    def numbers(self, name: str, dtype=np.float64) -> np.ndarray:
        """The column ``name`` as a numpy array of ``dtype`` (without making :attr:`frame`)."""
        return column_numbers(self.data, name, dtype)

    def __len__(self) -> int:
        return len(self.data)


@dataclass(frozen=True, eq=False)
class CheckedRun(CheckedTable):
    """A cleaned run (:func:`clean_run`'s table) with its ids factorised once.

    Attributes
    ----------
    data : DataFrame or pyarrow Table
        The cleaned table, as checked: :attr:`frame` is it as a DataFrame.
    system : Codes or None
        Present when the table has a ``system`` column.
    query : Codes
    doc_ids : pyarrow ChunkedArray or numpy int64 array
        The ``doc_id`` column as Arrow strings (never hashed as a whole), or as int64
        integers (:attr:`doc_int`), which are never written as strings unless
        :attr:`doc` is asked for: the ranking step matches and orders them as integers.
    repeats : DataFrame or None
        The rows ``duplicates='max'`` or ``'first'`` removed (a document listed again for
        its question), in ``frame``'s columns; None when none was.
    """

    data: "pd.DataFrame | pa.Table"
    system: Codes | None
    query: Codes
    doc_ids: "pa.ChunkedArray | np.ndarray"
    repeats: "pd.DataFrame | None" = None

    @property
    def doc_int(self) -> np.ndarray | None:
        """The doc ids as int64 when the run gave integers (see ``integer_ids``), else None."""
        return self.doc_ids if isinstance(self.doc_ids, np.ndarray) else None

    @cached_property
    def doc(self) -> "pa.ChunkedArray":
        """The ``doc_id`` column as Arrow strings (integers written once, on first use)."""
        if self.doc_int is None:
            return self.doc_ids
        import pyarrow as pa
        return pa.chunked_array([arrow_of(self.doc_int).cast(pa.large_string())])

    @cached_property
    def doc_fingerprint(self) -> np.ndarray:
        """A 64-bit fingerprint of each doc id's bytes (equal ids, equal fingerprints)."""
        return fingerprints(self.doc)

    @cached_property
    def doc_int_fingerprint(self) -> np.ndarray:
        """``int_fingerprints`` of :attr:`doc_int` (integer ids only)."""
        return int_fingerprints(self.doc_int)

    def without_system(self) -> "CheckedRun":
        """The same run without its ``system`` column (one system), codes and
        fingerprints kept."""
        repeats = None if self.repeats is None else self.repeats.drop(columns="system", errors="ignore")
        data = self.data.drop_columns("system") if is_arrow(self.data) else self.data.drop(columns="system")
        out = CheckedRun(data, None, self.query, self.doc_ids, repeats)
        for done in ("doc", "doc_fingerprint", "doc_int_fingerprint"):  # computed already: not twice
            if done in self.__dict__:
                out.__dict__[done] = self.__dict__[done]
        return out

    def repeated_docs(self) -> np.ndarray:
        """Rows whose (system, question, doc) repeats another row's, all copies marked
        (:func:`duplicate_docs`; integer doc ids compared as they are)."""
        if self.doc_int is not None:
            import pyarrow as pa
            return duplicate_docs(self.group_keys(), pa.chunked_array([arrow_of(self.doc_int)]),
                                  self.doc_int_fingerprint)
        return duplicate_docs(self.group_keys(), self.doc, self.doc_fingerprint)

    def group_keys(self) -> np.ndarray:
        """One int64 per row: (system, question) as a single code."""
        key = self.query.codes.astype(np.int64)
        if self.system is not None:
            key += self.system.codes.astype(np.int64) * max(len(self.query), 1)
        return key


@dataclass(frozen=True, eq=False)
class CheckedQrels(CheckedTable):
    """A cleaned golden set (:func:`clean_qrels`'s table) with its ids factorised once.

    Attributes
    ----------
    data : DataFrame or pyarrow Table
        The cleaned table, as checked: :attr:`frame` is it as a DataFrame.
    query : Codes
    doc : pyarrow ChunkedArray
        The ``doc_id`` column as Arrow strings.
    subtopics : DataFrame or None
        A diversity golden set's rows ``query_id, subtopic, doc_id, relevance``
        (None without a ``subtopic`` column); ``frame`` then holds one row per
        (query_id, doc_id) with the largest label over its subtopics (a
        document relevant to any subtopic is relevant, as ndeval's own MAP).
    conflicts : ResolvedConflicts or None
        The conflicting labels ``conflicts=`` resolved: the evaluation functions report
        them once when given this object as their golden set
        (:func:`evalframe.read_golden_set`).
    """

    data: "pd.DataFrame | pa.Table"
    query: Codes
    doc: "pa.ChunkedArray"
    subtopics: "pd.DataFrame | None" = None
    #: conflicting labels resolved while checking (``conflicts=``), or None
    conflicts: "ResolvedConflicts | None" = None

    @property
    def table(self) -> "pd.DataFrame":
        """:func:`clean_qrels`'s table: ``subtopics`` for a diversity golden set, else ``frame``."""
        return self.frame if self.subtopics is None else self.subtopics

    @cached_property
    def doc_fingerprint(self) -> np.ndarray:
        """A 64-bit fingerprint of each doc id's bytes (equal ids, equal fingerprints)."""
        return fingerprints(self.doc)

    def pair_keys(self) -> np.ndarray:
        """One :func:`~evalframe._id_bytes.pair_keys` key per row, of its (question, doc):
        equal pairs, equal keys (distinct pairs share one about never)."""
        key = np.empty(len(self.query.codes), dtype=np.uint64)
        for lo in range(0, len(key), BLOCK_ROWS):  # block by block: the temporaries stay in cache
            key[lo:lo + BLOCK_ROWS] = pair_keys(self.query.codes[lo:lo + BLOCK_ROWS],
                                                self.doc_fingerprint[lo:lo + BLOCK_ROWS])
        return key

    @cached_property
    def doc_int(self) -> np.ndarray:
        """Each doc id as the int64 it writes (``"12"``), or a distinct negative number
        when it writes none (``parse_decimal_ids``): matched against a run's
        integer ids (:attr:`CheckedRun.doc_int`)."""
        return parse_decimal_ids(self.doc)

    @cached_property
    def doc_int_fingerprint(self) -> np.ndarray:
        """``int_fingerprints`` of :attr:`doc_int`."""
        return int_fingerprints(self.doc_int)

    def lookup(self, ids: "pa.Array") -> np.ndarray:
        """The position of each distinct question id (Arrow strings) among the golden set's
        questions (``query.dictionary``), -1 where it has none (:func:`position_in`)."""
        return position_in(ids, self.query.dictionary).astype(np.int64)

    @cached_property
    def by_question(self) -> "RowsByCode":
        """The rows grouped by question (:class:`RowsByCode` of ``query.codes``)."""
        return RowsByCode(self.query.codes, len(self.query))

    def questions_rows(self, questions) -> "CheckedQrels":
        """The golden set of the questions ``questions`` alone (positions in
        ``query.dictionary``), its rows in their order, its ids factorised anew (a golden set
        without subtopics; an Arrow table stays one: no pandas)."""
        at = self.by_question.positions(questions)
        data = pc.take(self.data, arrow_of(at)) if is_arrow(self.data) else self.data.iloc[at].reset_index(drop=True)
        return encode_qrels(data)


class RowsByCode:
    """Rows grouped by an int code (0 to ``n`` - 1): :meth:`positions` gives the rows of any
    codes, ascending, in one vectorised pass (a stable argsort and a count, made once).

    >>> RowsByCode(np.array([1, 0, 1, 2]), 3).positions([1, 2]).tolist()
    [0, 2, 3]
    """

    def __init__(self, codes: np.ndarray, n: int):
        self.order = np.argsort(codes, kind="stable")  # rows grouped by code, in order within
        self.starts = np.concatenate(([0], np.cumsum(np.bincount(codes, minlength=n))))

    def positions(self, wanted) -> np.ndarray:
        """The rows (ascending) whose code is in ``wanted`` (distinct codes)."""
        wanted = np.asarray(wanted, dtype=np.int64)
        lo, n = self.starts[wanted], self.starts[wanted + 1] - self.starts[wanted]
        at = np.repeat(lo - np.cumsum(n) + n, n) + np.arange(int(n.sum()))
        return np.sort(self.order[at])


def encode_run(frame: "pd.DataFrame | pa.Table") -> CheckedRun:
    """Factorise the ids of a run already cleaned by :func:`clean_run` (no checks; a
    DataFrame, or an Arrow table with string ids)."""
    ints = integer_ids(frame["doc_id"])
    return CheckedRun(frame, encode_ids(frame["system"]) if has_column(frame, "system") else None,
                      encode_ids(frame["query_id"]), id_strings(frame["doc_id"]) if ints is None else ints)


def encode_qrels(frame: "pd.DataFrame | pa.Table") -> CheckedQrels:
    """Factorise the ids of a golden set already cleaned by :func:`clean_qrels` (no checks;
    a DataFrame, or an Arrow table without subtopics); a ``subtopic`` column is kept aside
    (``CheckedQrels.subtopics``)."""
    if is_arrow(frame):
        return CheckedQrels(frame, encode_ids(frame["query_id"]), id_strings(frame["doc_id"]))
    if "subtopic" in frame:
        subtopics = frame
        frame = frame.groupby(["query_id", "doc_id"], sort=False, as_index=False)["relevance"].max()
        return CheckedQrels(frame, encode_ids(frame["query_id"]), id_strings(frame["doc_id"]), subtopics)
    return CheckedQrels(frame, encode_ids(frame["query_id"]), id_strings(frame["doc_id"]))


def position_in(values: "pa.Array", value_set: "pa.Array") -> np.ndarray:
    """Each of the distinct strings ``values``' position in the distinct strings
    ``value_set`` (-1: absent), as int32.

    A probe of 64-bit fingerprints (:func:`~evalframe._id_bytes.fingerprints`) into
    those of ``value_set``, every match confirmed on the strings: when no two of
    ``value_set`` share a fingerprint, a string's only candidate is the one with
    its fingerprint, so the answer is exact.  Arrow's ``index_in`` on strings
    (which compares strings in its hash table, cache miss after cache miss)
    when they do, and for small inputs."""
    import pyarrow as pa

    def by_arrow() -> np.ndarray:
        return numpy_of(pc.index_in(pc.cast(values, value_set.type), value_set=value_set), null=-1).astype(np.int32)

    if len(values) < (1 << 14) or len(value_set) < (1 << 10):
        return by_arrow()
    golden = KeyIndex(fingerprints(pa.chunked_array([value_set])), probes=len(values))
    if not golden.distinct:  # two distinct ids share a fingerprint (about never)
        return by_arrow()
    where = golden.positions(fingerprints(pa.chunked_array([values])))
    hit = np.flatnonzero(where >= 0)
    same = pc.equal(pc.cast(pc.take(values, arrow_of(hit)), value_set.type), pc.take(value_set, arrow_of(where[hit])))
    where[hit[~np.asarray(numpy_of(same), dtype=bool)]] = -1
    return where.astype(np.int32)


def any_repeated(key: np.ndarray) -> bool:
    """Whether some key appears twice (a sort)."""
    srt = np.sort(key)
    return bool((srt[1:] == srt[:-1]).any())


#: Relevance labels must lie strictly between -LABEL_LIMIT and LABEL_LIMIT (the
#: ranking step marks unjudged documents with -2^62).
LABEL_LIMIT = 2 ** 62


def labels_in_range(v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Integer labels as int64 (0 where out of range) and the mask of those out of range
    (``|label| >= LABEL_LIMIT``), read exactly (no trip through float64)."""
    if v.dtype.kind == "u":
        huge = v >= np.uint64(LABEL_LIMIT)
    else:
        v = v.astype(np.int64)
        huge = (v >= LABEL_LIMIT) | (v <= -LABEL_LIMIT)
    return np.where(huge, 0, v).astype(np.int64), huge


def checked_text_run(table: "pa.Table") -> CheckedRun | None:
    """:func:`~evalframe.schema.check_run`'s answer, without pandas, for a run read from a
    TREC text file (an Arrow table ``query_id, doc_id, score``: ids split on blanks, float64
    scores) that it would keep as it is: ids neither missing, blank nor blank-edged
    (:func:`~evalframe._id_bytes.arrow_id_status`), finite scores, no document listed twice
    for a question (:meth:`CheckedRun.repeated_docs`).  None when ``check_run`` has more to
    do (a problem to report, repeats to resolve): the caller then calls it."""
    import pyarrow as pa
    if (table.column_names != ["query_id", "doc_id", "score"] or not len(table)
            or not pa.types.is_float64(table.schema.field("score").type) or not _clean_ids(table)):
        return None
    score = table["score"]
    if score.num_chunks > 1:  # one buffer (as a DataFrame's column): read without a copy from now on
        score = pa.chunked_array([score.combine_chunks()])
        table = table.set_column(2, "score", score)
    if not np.isfinite(numpy_of(score)).all():
        return None
    coded = encode_run(table)
    return None if coded.repeated_docs().any() else coded


def checked_text_qrels(table: "pa.Table") -> CheckedQrels | None:
    """:func:`~evalframe.schema.check_qrels`'s answer, without pandas, for a golden set read
    from a TREC text file (an Arrow table ``query_id, [iteration,] doc_id, relevance``, int64
    labels) that it would keep as it is: one iteration value (several: maybe diversity
    qrels), clean ids, labels in range (:func:`labels_in_range`), no (question, doc) pair
    given twice (:meth:`CheckedQrels.pair_keys`).  None when ``check_qrels`` has more to do."""
    import pyarrow as pa
    if "iteration" in table.column_names:
        it = table["iteration"]
        if len(it) and not pc.all(pc.equal(it, it[0])).as_py():
            return None
        table = table.drop_columns("iteration")
    if (table.column_names != ["query_id", "doc_id", "relevance"] or not len(table)
            or not pa.types.is_int64(table.schema.field("relevance").type) or not _clean_ids(table)
            or labels_in_range(column_numbers(table, "relevance", np.int64))[1].any()):
        return None
    coded = encode_qrels(table)
    return None if any_repeated(coded.pair_keys()) else coded


def _clean_ids(table: "pa.Table") -> bool:
    return all(arrow_id_status(table[c]) == "clean" for c in ("query_id", "doc_id"))


def is_arrow(data) -> bool:
    """Whether a checked table is an Arrow table (not a DataFrame).  The class is asked, not
    the object: a DataFrame's own missing-attribute lookup searches its columns."""
    return hasattr(type(data), "column_names")


def has_column(data: "pd.DataFrame | pa.Table", name: str) -> bool:
    """Whether the DataFrame or Arrow table ``data`` has the column ``name``."""
    return name in (data.column_names if is_arrow(data) else data.columns)


def column_numbers(data: "pd.DataFrame | pa.Table", name: str, dtype=np.float64) -> np.ndarray:
    """The column ``name`` of a DataFrame or an Arrow table as a numpy array of ``dtype``."""
    if is_arrow(data):
        return numpy_of(data[name]).astype(dtype, copy=False)
    return data[name].to_numpy(dtype=dtype)


def as_frame(data: "pd.DataFrame | pa.Table") -> "pd.DataFrame":
    """A checked table as a DataFrame: ``data`` itself, or the Arrow table converted as
    the readers convert a text file (Arrow-backed strings, numpy numbers)."""
    if not is_arrow(data):
        return data
    from .canonical import arrow_table_frame
    return arrow_table_frame(data)


def contiguous_groups(grp: np.ndarray, starts: np.ndarray) -> bool:
    """Whether every group's rows are contiguous (``starts``: the rows where the
    group code changes; codes >= 0); a count per group code, no hashing."""
    top = int(grp.max()) + 1
    if len(starts) > top:  # more runs of rows than group codes: some group comes back
        return False
    if top > 4 * len(grp) + (1 << 16):  # sparse codes: a sort, not a count as large as them
        return len(starts) == len(distinct(grp[starts]))
    return bool(np.bincount(grp[starts]).max() <= 1)


def _group_blocks(group: np.ndarray) -> list[tuple[int, int]]:
    """Row ranges holding whole groups, of about :data:`BLOCK_ROWS` rows each,
    when every group's rows are contiguous (as in a run file); else one range."""
    n = len(group)
    if n <= BLOCK_ROWS:
        return [(0, n)]
    starts = np.flatnonzero(np.concatenate(([True], group[1:] != group[:-1])))
    if not contiguous_groups(group, starts):  # a group comes back: not grouped
        return [(0, n)]
    cuts = distinct(starts[np.minimum(np.searchsorted(starts, np.arange(0, n, BLOCK_ROWS)), len(starts) - 1)])
    bounds = np.append(cuts, n).tolist()
    return list(zip(bounds[:-1], bounds[1:]))


def duplicate_docs(group: np.ndarray, docs, fingerprint: np.ndarray) -> np.ndarray:
    """Rows whose (group, doc) repeats another row's, all copies marked.

    Sorts of 32-bit keys from (group, fingerprint of the doc's bytes), block by
    block of whole groups when the run is grouped (numpy sorts 32-bit keys with SIMD
    instructions: 0.8 ms for 100,000, faster than first setting aside the keys that share no
    bucket of a table with another), settle the common case, no duplicates; rows sharing a
    key are then compared on the strings themselves, so the answer is exact."""
    n = len(group)
    key = np.empty(n, dtype=np.uint32)
    for lo in range(0, n, BLOCK_ROWS):  # block by block: the 64-bit temporaries stay in cache
        key[lo:lo + BLOCK_ROWS] = pair_keys(group[lo:lo + BLOCK_ROWS], fingerprint[lo:lo + BLOCK_ROWS]) >> np.uint64(32)
    dup = np.zeros(n, dtype=bool)
    shared = []
    for lo, hi in _group_blocks(group):  # a key repeats inside a group, so inside a block
        srt = np.sort(key[lo:hi])
        same = srt[1:] == srt[:-1]
        if same.any():
            shared.append(srt[1:][same])
    if not shared:
        return dup
    shared = distinct(np.concatenate(shared))  # few: 32-bit keys collide about n^2 / 2^33 times
    bitmap = np.zeros(1 << 20, dtype=bool)  # a cache-sized filter before the exact search
    bitmap[shared & np.uint32(0xFFFFF)] = True
    maybe = np.flatnonzero(bitmap[key & np.uint32(0xFFFFF)])
    pos = np.minimum(np.searchsorted(shared, key[maybe]), len(shared) - 1)
    cand = maybe[shared[pos] == key[maybe]]
    import pyarrow as pa
    # the candidates' strings as dictionary codes (a null its own code), then (group, code)
    # pairs sorted: a pair equal to its neighbour repeats
    taken = pc.take(pa.chunked_array(docs), arrow_of(cand)).combine_chunks()
    codes = numpy_of(pc.dictionary_encode(taken, null_encoding="encode").indices)
    g = group[cand]
    order = np.lexsort((codes, g))
    same = (g[order][1:] == g[order][:-1]) & (codes[order][1:] == codes[order][:-1])
    repeat = np.zeros(len(order), dtype=bool)
    repeat[1:] = same
    repeat[:-1] |= same
    dup[cand[order]] = repeat
    return dup
