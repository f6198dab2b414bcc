"""Rank and judge: turn a cleaned run and golden set into one sorted, judged table.

This is the step every measure reads.  Its output, :class:`Judged`, holds flat
numpy arrays, one entry per retrieved document, sorted by (group, rank), where a
*group* is one (system, question) pair that is scored.  Measures reduce these
arrays per group with ``numpy.bincount``; no Python loop runs per question or
per document.

:func:`judge` runs a few named steps: the golden set's questions and labels
(:func:`_golden_set`), the run's systems and questions (:func:`_run_ids`), the
scored groups (:func:`_groups`), each row's label (:func:`_labels`), the order
of each ranking (:func:`_ordering`), and the facts worth a warning
(``check_records``, one vectorised function per :class:`Check`).  Ids arrive
factorised once by :mod:`evalframe.schema` (:class:`~evalframe.schema.CheckedRun`,
:class:`~evalframe._id_codes.CheckedQrels`): int32 question and system codes and a
fingerprint of each document id, so no id column is hashed twice and no Python
object is made per row.

The parts live in internal modules, one job each: ``_id_order`` (the natural order of
ids), ``_judged`` (the :class:`Judged` table), ``_sort_kernel`` (the sort of each
ranking), ``_diagnostic_records`` (the :class:`Diagnostic` records, their merge and
warnings) and ``_diagnostic_checks`` (the checks); this module's ``__all__`` lists their
public names too, as before.

Conventions (see :mod:`evalframe.measures` for the full list):

- Ranking is by score descending (compared as float64); ties are broken by
  ``doc_id`` descending, byte-wise, as trec_eval does (``ties="doc_id_desc"``).
  ``ties="doc_id_asc"`` breaks them the other way; ``ties="rank"`` orders by the
  run's own ``rank`` column (ties in it by doc_id descending).
- ``missing="zero"`` (default): every question of the golden set counts; a
  question a system did not answer is a group with no documents and scores 0.
  ``missing="drop"``: only the questions a system answered and the golden set
  judges count (trec_eval's default).
- Run questions absent from the golden set are dropped (with a warning).
- ``depth``: only the top ``depth`` documents of each ranking are kept
  (trec_eval's ``-M``).
- ``rel``: a golden-set question without a label >= ``rel`` is reported
  (:attr:`~evalframe._diagnostic_records.Check.GOLDEN_QUESTIONS_WITHOUT_RELEVANT`).

Partitions
----------
A *partition* holds whole questions: for some of the golden set's questions,
the golden-set rows of those questions and every system's run rows of those
questions (a run question absent from the golden set may go to any partition).
Every value of a question depends on that question's rows only, so judging and
evaluating partitions independently and concatenating the per-question tables
gives the same rows, bit for bit, as one call on the whole input, provided each
partition's run names every system (a system with no row in a partition is
unknown there, so with ``missing="zero"`` its zero rows would be missing).  The
diagnostics of the partitions merge into those of the whole input with
:func:`merge_diagnostics`: counts are summed per (check, system, action), the
examples are the first five of the union in natural order (numeric when every
example is an integer), and ``system_without_golden_questions`` is kept when
every partition reports it.  This is the seam for engines that evaluate a run
in parts (chunk by chunk, or on a cluster).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

import numpy as np
import pyarrow as pa

from . import _arrow_compute as pc
from ._validation import Interval, Options, check
from ._diagnostic_checks import JUDGED_DOCS, check_records, unjudged_systems
from ._diagnostic_records import warn_diagnostics
from ._arrow_numpy import arrow_of, numpy_of
from ._id_bytes import (BLOCK_ROWS, KeyIndex, byte_order_keys, common_prefix_length, decimal_order_keys, pair_keys,
                        raw_chunks)
from ._id_codes import CheckedQrels, CheckedRun, encode_qrels, encode_run, position_in
from ._id_order import DistinctIds, natural_order_rule, natural_permutation
from ._judged import NOT_JUDGED, Judged, Missing, Subtopics, Ties
from ._sort_kernel import RowOrder, sort_plan
from .errors import EvalframeInputError, InputProblem

if TYPE_CHECKING:
    import pandas as pd


def judge(run: pd.DataFrame | CheckedRun, qrels: pd.DataFrame | CheckedQrels, *, rel: int = 1,
          ties: Ties = "doc_id_desc", missing: Missing = "zero", depth: int | None = None,
          warn: bool = True, keep_rows: bool = False,
          systems: Sequence[str | None] | None = None) -> Judged:
    """Join a cleaned run with a cleaned golden set, rank it, and label every row.

    Parameters
    ----------
    run, qrels : DataFrame or CheckedRun / CheckedQrels
        Outputs of :func:`evalframe.schema.clean_run` / :func:`clean_qrels`, or
        of :func:`~evalframe.schema.check_run` / :func:`check_qrels`, whose
        factorised ids are used as they are (no id column is factorised twice).
    rel : int
        Relevance threshold of the ``golden_questions_without_relevant`` check.
    ties, missing, depth
        Conventions; see the module docstring.
    warn : bool
        Issue the structured warnings (they are always in ``diagnostics``).
    keep_rows : bool
        Also return each ranked row's position in ``run`` (``source_row``).
    systems : sequence of str, optional
        Every system of the whole run, in its order (``[None]``: a run without systems):
        ``run`` is then a partition of it, of whole questions, and a system with no row
        in it is still scored on its golden-set questions (``missing="zero"``); the
        partition may share no question with ``qrels``, or hold no row.

    Returns
    -------
    Judged
    """
    run = run if isinstance(run, CheckedRun) else encode_run(run)
    qrels = qrels if isinstance(qrels, CheckedQrels) else encode_qrels(qrels)
    check_conventions(rel=rel, ties=ties, missing=missing, depth=depth, caller="judge")
    _check_rank_column(run, ties)
    queries, qq, ql, qrels_order = _golden_set(qrels)
    systems, system_names, sys_codes, rq = _run_ids(run, queries, systems)
    unknown = rq < 0
    any_unknown = bool(unknown.any())
    kept = np.flatnonzero(~unknown) if any_unknown else None
    keep = ~unknown if any_unknown else slice(None)
    answered, gid, g_sys, g_q = _groups(sys_codes[keep], rq[keep], len(systems), len(queries), missing)
    judged_at, judged_where = _judged_rows(run, kept, rq[keep], qrels, qq, qrels_order)
    grp = gid[rq[keep] if run.system is None else sys_codes[keep].astype(np.int64) * len(queries) + rq[keep]]
    if ties == "rank":
        primary = run.numbers("rank")[keep]
    else:
        primary = run.numbers("score")[keep]
        primary = np.negative(primary, out=primary if kept is not None else None)  # a copy taken already: in place
    plan, sorted_grp, tied_rows = _ordering(grp, primary, run.doc if run.doc_int is None else run.doc_int, kept, ties)
    del primary
    # rows tied on (group, -score) in the ordering are the rows sharing their score
    tied_groups = grp[tied_rows] if ties != "rank" and tied_rows is not None else grp[:0]
    del tied_rows
    grp = sorted_grp
    relevance = qrels.numbers("relevance", np.int64)
    label = plan.scatter(judged_at, relevance[judged_where], NOT_JUDGED)
    row_sys = sys_codes if kept is None else sys_codes[kept]
    judged_docs = (systems, row_sys[judged_at], qrels.doc_fingerprint[judged_where], rq[keep][judged_at])
    id_records = unjudged_systems(systems, row_sys, judged_docs[1], run, kept, qrels)
    del judged_at, judged_where, row_sys
    want_rows = keep_rows or qrels.subtopics is not None
    order = plan.array() if run.has("tokens") or want_rows else None  # None: no row moves (or not needed)
    tokens = _take(run.numbers("tokens")[keep], order) if run.has("tokens") else None
    tokens = tokens.copy() if tokens is not None and order is None else tokens  # never a view of the frame
    rank = _ranks(grp)
    source_row = None
    if want_rows:
        source_row = _take(np.flatnonzero(~unknown) if any_unknown else np.arange(len(unknown)), order)
    if depth is not None:
        cut = rank <= depth
        grp, label, rank = grp[cut], label[cut], rank[cut]
        source_row = None if source_row is None else source_row[cut]
        tokens = None if tokens is None else tokens[cut]
    subtopics = None
    if qrels.subtopics is not None:
        subtopics = _subtopics(qrels.subtopics, queries, g_q[grp], run.doc, source_row, label)
        source_row = source_row if keep_rows else None

    records = check_records(run.query, systems, sys_codes, rq, queries, answered, g_sys, g_q,
                           tied_groups, qq, ql, rel=rel, ties=ties, missing=missing) + id_records
    groups = {"query_id": queries[g_q].arrow}
    if system_names is not None:
        groups = {"system": pc.take(system_names, arrow_of(g_sys)), **groups}
    if warn:
        warn_diagnostics(records, rel)
    return Judged(pa.table(groups), g_q, grp.astype(np.int64, copy=False), rank.astype(np.int64, copy=False),
                  label.astype(np.int64, copy=False), qq.astype(np.int64, copy=False), ql, len(queries),
                  None, source_row,
                  records=tuple(records), subtopics=subtopics, tokens=tokens,
                  integer_questions=queries.numeric, cache={JUDGED_DOCS: judged_docs})


def _take(values: np.ndarray, order: np.ndarray | None) -> np.ndarray:
    """``values[order]`` (``values`` itself when ``order`` is None: no row moves)."""
    return values if order is None else values[order]


def _subtopics(golden: pd.DataFrame, queries: np.ndarray, row_query: np.ndarray, docs, source_row: np.ndarray,
               label: np.ndarray) -> Subtopics:
    """Join the ranked rows (their question, run row and largest label) with a diversity
    golden set's rows (``query_id, subtopic, doc_id, relevance``)."""
    import pandas as pd
    import pyarrow as pa
    names = queries.arrow.to_pylist() if isinstance(queries, DistinctIds) else queries
    q = pd.Index(names).get_indexer(golden["query_id"].to_numpy(dtype=object))
    frame = pd.DataFrame({"q": q, "subtopic": golden["subtopic"].to_numpy(dtype=object),
                          "doc_id": golden["doc_id"].to_numpy(dtype=object),
                          "label": golden["relevance"].to_numpy(dtype=np.int64)})
    _, doc_code = np.unique(frame["doc_id"].to_numpy(dtype=str), return_inverse=True)  # code point = byte order
    frame["doc"] = doc_code.astype(np.int64)
    frame["st"] = frame.groupby(["q", "subtopic"], sort=True).ngroup().to_numpy(dtype=np.int64)
    frame = frame.sort_values(["st", "doc"], kind="stable", ignore_index=True)
    st_query = frame.drop_duplicates("st").sort_values("st")["q"].to_numpy(dtype=np.int64)
    judged = np.flatnonzero(label != NOT_JUDGED)
    ranked = pd.DataFrame({"q": row_query[judged].astype(np.int64),
                           "doc_id": docs.take(pa.array(source_row[judged])).to_numpy().astype(object),
                           "row": judged})
    entries = ranked.merge(frame[["q", "doc_id", "st", "label"]], on=["q", "doc_id"], how="inner")
    entries = entries.sort_values(["row", "st"], ignore_index=True)
    return Subtopics(entries["row"].to_numpy(dtype=np.int64), entries["st"].to_numpy(dtype=np.int64),
                     entries["label"].to_numpy(dtype=np.int64), st_query,
                     frame["st"].to_numpy(dtype=np.int64), frame["doc"].to_numpy(dtype=np.int64),
                     frame["label"].to_numpy(dtype=np.int64))


def check_conventions(*, rel, ties, missing, depth, caller: str) -> None:
    """Raise ``ParameterError`` (a ``ValueError``) unless the ranking conventions are valid values."""
    check(caller, "rel", rel, Interval(int))
    check(caller, "ties", ties, Options(("doc_id_desc", "doc_id_asc", "rank"), "'doc_id_desc', 'doc_id_asc' or 'rank'"))
    check(caller, "missing", missing, Options(("zero", "drop"), "'zero' or 'drop'"))
    check(caller, "depth", depth, Interval(int, 1, None), None)


def _check_rank_column(run: CheckedRun, ties) -> None:
    if ties == "rank" and (not run.has("rank") or not bool(np.isfinite(run.numbers("rank")).all())):
        raise EvalframeInputError("run", [InputProblem(
            "ties='rank' needs a numeric 'rank' column, and the run has none (or it has missing values)",
            "add a rank column, or use ties='doc_id_desc' (trec_eval's order)")])


def _golden_set(qrels: CheckedQrels) -> tuple[DistinctIds, np.ndarray, np.ndarray, np.ndarray]:
    """The golden set's questions in natural order, and its rows sorted by
    (question, label descending): (queries, question index, label, row order)."""
    dictionary = qrels.query.dictionary
    natural = natural_permutation(dictionary)
    if natural is None:  # the general rule, on Python objects (integers beyond int64)
        import pandas as pd
        names, numeric = natural_order_rule(qrels.query.names)
        perm = pd.Index(qrels.query.names).get_indexer(names)
    else:
        perm, numeric = natural
    position = np.empty(len(perm), dtype=np.int64)
    position[perm] = np.arange(len(perm))
    queries = DistinctIds(pc.take(dictionary, arrow_of(perm)), numeric)
    qq = position[qrels.query.codes]
    ql = qrels.numbers("relevance", np.int64)
    order = _question_label_order(qq, ql)
    return queries, qq[order], ql[order], order


def _question_label_order(qq: np.ndarray, ql: np.ndarray) -> np.ndarray:
    """``numpy.lexsort((-ql, qq))``: rows by question, then label descending, then row,
    as one in-place sort of a (question, label, row) key when the three fit in 64 bits."""
    n = len(qq)
    if n == 0:
        return np.zeros(0, np.int64)
    top = int(ql.max())
    qbits, lbits, rbits = int(qq.max()).bit_length(), (top - int(ql.min())).bit_length(), max((n - 1).bit_length(), 1)
    if qbits + lbits + rbits > 63:
        return np.lexsort((-ql, qq))
    key = qq.astype(np.uint64) << np.uint64(lbits + rbits)
    key |= (top - ql).astype(np.uint64) << np.uint64(rbits)
    key |= np.arange(n, dtype=np.uint64)
    key.sort()
    key &= np.uint64((1 << rbits) - 1)
    return key.view(np.int64)


def _run_ids(run: CheckedRun, queries: DistinctIds, every: Sequence[str | None] | None = None
             ) -> tuple[np.ndarray, pa.Array | None, np.ndarray, np.ndarray]:
    """The run's systems (first appearance order; ``every``: these, the whole run's), their
    names as Arrow strings (None: a run without systems), each row's system code and each
    row's question index in ``queries`` (-1: not in the golden set)."""
    if every is not None and list(every) != [None]:
        systems = np.array(every, dtype=object)
        names = pa.array([str(x) for x in every], pa.large_string())
        sys_codes = np.zeros(len(run), dtype=np.int32)
        if run.system is not None:
            import pandas as pd
            where = pd.Index(systems).get_indexer(run.system.names)
            if (where < 0).any():
                raise ValueError(f"systems {list(run.system.names[where < 0][:3])} are not in the systems given")
            sys_codes = where.astype(np.int32)[run.system.codes]
    elif run.system is not None:
        systems, names, sys_codes = run.system.names, run.system.dictionary, run.system.codes
    else:
        systems, names, sys_codes = np.array([None], dtype=object), None, np.zeros(len(run), dtype=np.int32)
    to_golden = position_in(run.query.dictionary, queries.arrow)  # question indexes: int32 codes
    if every is None and (to_golden < 0).all():
        raise EvalframeInputError("run", [InputProblem(
            "the run and the golden set share no question id "
            f"(run ids e.g. {list(run.query.names[:3])}, golden-set ids e.g. {list(queries[:3])})",
            "check that both tables use the same question ids (ids are compared as strings)")])
    return systems, names, sys_codes, to_golden[run.query.codes]


def _groups(sys_codes: np.ndarray, rq: np.ndarray, ns: int, nq: int, missing: Missing
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Scored (system, question) groups from the rows of golden-set questions:
    (answered (ns, nq), group id per system * nq + question (-1: not scored),
    each group's system, each group's question)."""
    answered = np.zeros((ns, nq), dtype=bool)
    if ns == 1:  # one index, not a pair per row (1M rows: 0.8 ms against 3.0)
        answered[0][rq] = True
    else:
        answered[sys_codes, rq] = True
    in_group = np.ones((ns, nq), dtype=bool) if missing == "zero" else answered
    gid = np.full(ns * nq, -1, dtype=np.int64)
    flat = np.flatnonzero(in_group.ravel())
    gid[flat] = np.arange(len(flat))
    g_sys, g_q = np.divmod(flat, nq)
    return answered, gid, g_sys, g_q


def _judged_rows(run: CheckedRun, kept: np.ndarray | None, rq: np.ndarray, qrels: CheckedQrels,
                 qq: np.ndarray, qrels_order: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The ranked run rows the golden set judges: their positions among the ranked
    rows (ascending) and their golden-set rows (``kept``: the run rows ranked, None
    for all; ``rq`` their question index; ``qq``: each golden-set row's question,
    sorted by ``qrels_order``).  One probe of a (question, doc) key per row into
    the golden set's keys.

    The keys come from the doc fingerprints computed once for the duplicate
    check (:func:`~evalframe.schema.pair_keys`); every match is confirmed on the
    strings, so labels are exact.  A run of integer doc ids is matched on integers
    (the golden set's ids read as the integers they write), never written as strings."""
    ints = run.doc_int is not None
    golden_fp = qrels.doc_int_fingerprint if ints else qrels.doc_fingerprint
    qkeys = np.empty(len(qq), dtype=np.uint64)
    qkeys[qrels_order] = pair_keys(qq, golden_fp[qrels_order])
    n = len(rq)
    fp = run.doc_int_fingerprint if ints else run.doc_fingerprint
    index = KeyIndex(qkeys)  # hashed, or sorted and searched, by the keys and the probes (below)
    if index.distinct:
        # a bitmap of the golden set's documents skips most unjudged rows before their
        # (question, doc) keys are made and probed; only the rows it lets through
        # (positions ``at`` among the ranked rows, ``src`` in the run) are worked on.
        # Block by block: no temporary as long as the run.
        bits = _bitmap_bits(len(golden_fp))
        shift = np.uint64(64 - bits)
        bitmap = np.zeros(1 << bits, dtype=bool)
        bitmap[(golden_fp >> shift).view(np.int64)] = True  # < 2^bits: a view, no cast
        blocks = []
        for lo in range(0, n, BLOCK_ROWS):
            high = (fp[lo:lo + BLOCK_ROWS] if kept is None else fp[kept[lo:lo + BLOCK_ROWS]]) >> shift
            blocks.append(np.flatnonzero(bitmap[high.view(np.int64)]) + lo)
        at = np.concatenate(blocks) if blocks else np.zeros(0, np.int64)
        del blocks
        src = at if kept is None else kept[at]
        where = index.positions(pair_keys(rq[at], fp[src]))  # golden-set row, -1: not judged
        hit = where >= 0
        at, src, where = at[hit], src[hit], where[hit]
        if ints:
            same = run.doc_int[src] == qrels.doc_int[where]
        else:
            same = pc.equal(pc.take(run.doc, arrow_of(src)), pc.take(qrels.doc, arrow_of(where)))
            same = np.asarray(numpy_of(same), dtype=bool)
        same &= _unsorted(qq, qrels_order)[where] == rq[at].astype(np.uint64)  # same question too
        return at[same], where[same]
    # two golden-set keys collide (about never): an exact probe on the strings
    import pandas as pd
    rows = np.arange(len(run)) if kept is None else kept
    golden = pd.MultiIndex.from_arrays([_unsorted(qq, qrels_order), qrels.doc.to_numpy().astype(object)])
    where = golden.get_indexer(pd.MultiIndex.from_arrays(
        [rq.astype(np.uint64), run.doc.take(pa.array(rows)).to_numpy().astype(object)]))
    at = np.flatnonzero(where >= 0)
    return at, where[at]


# The judged-documents bitmap of _judged_rows: at least this many slots per golden-set row
# (up to twice as many: a power of two, between 2^16 and 2^24).  Fewer slots let more
# unjudged rows through to the probe (about 60 ns each); more spill the bitmap out of the
# core's caches (a look-up then costs several times as much).  Measured on bench_core's
# data, filter and probe, one thread: 10,000 x 100 (119k golden-set rows) 13.2 ms at 2^22
# slots against 22.7 ms at 2^24; 7,000 x 1,000 (84k) 50.7 against 63.5 ms; 100,000 x 100
# (1.2M) 263 ms at 2^24, 265 at 2^23, 301 at 2^22.  The labels do not depend on it: every
# row let through is confirmed.
_BITMAP_SLOTS_PER_ROW = 32


def _bitmap_bits(golden_rows: int) -> int:
    """log2 of the judged-documents bitmap's slots for ``golden_rows`` golden-set rows.

    >>> _bitmap_bits(119_000), _bitmap_bits(84_000), _bitmap_bits(1_200_000), _bitmap_bits(10)
    (22, 22, 24, 16)
    """
    return min(max((golden_rows * _BITMAP_SLOTS_PER_ROW).bit_length(), 16), 24)


def _unsorted(values: np.ndarray, order: np.ndarray) -> np.ndarray:
    """``values`` (sorted by ``order``) back in the original row order, as uint64."""
    out = np.empty(len(values), dtype=np.uint64)
    out[order] = values
    return out


#: Tied ids are ordered by numeric keys (their bytes as 64-bit words, past the prefix
#: they all share) when what follows that prefix is at most this long, else by Arrow's
#: sort of the strings (measured on 93k tied 55-byte URL ids sharing 38 bytes: 9 ms
#: vs 24 ms).
TIE_KEY_BYTES = 32


def _ordering(grp: np.ndarray, primary: np.ndarray, docs, kept: np.ndarray | None, ties: Ties
              ) -> tuple["RowOrder", np.ndarray, np.ndarray | None]:
    """How to rank every group: by ``primary`` ascending, ties by doc_id
    byte-wise (descending unless ``ties="doc_id_asc"``); only the doc ids of
    tied rows are read (``kept``: the run rows ranked, None for all; ``docs``:
    Arrow strings, or int64 ids ordered as their decimal strings).  Also the
    sorted groups and the mask of tied rows (:func:`sort_plan`)."""

    def tiebreak(rows: np.ndarray) -> np.ndarray | list[np.ndarray]:
        source = rows if kept is None else kept[rows]
        if isinstance(docs, np.ndarray):  # integer ids, in the order of their strings ("10" < "9")
            keys = decimal_order_keys(docs[source])
            return [k if ties == "doc_id_asc" else ~k for k in keys[::-1]]  # least significant first
        names = pc.take(docs, arrow_of(source))
        keys = byte_order_keys(names, max_bytes=8)  # short ids: their bytes as one number
        if keys is None:  # longer ids: the bytes after the prefix all share (URLs' host and path)
            keys = byte_order_keys(names, max_bytes=TIE_KEY_BYTES, skip=common_prefix_length(names))
        if keys is not None and not _has_nul(names):  # zero padding then orders like the bytes
            words = [w if ties == "doc_id_asc" else ~w for w in keys[:-1]]  # (~: descending)
            return words[0] if len(words) == 1 else words[::-1]  # least significant first
        pos = np.empty(len(rows), dtype=np.int64)
        pos[numpy_of(pc.sort_indices(names))] = np.arange(len(rows))  # byte-wise order
        return pos if ties == "doc_id_asc" else -pos

    return sort_plan(grp, primary, tiebreak)


def _ranks(grp: np.ndarray) -> np.ndarray:
    """1-based rank of each row of rows sorted by group: its position minus its
    group's first position."""
    n = len(grp)
    if n == 0:
        return np.zeros(0, np.int64)
    starts = np.flatnonzero(grp[1:] != grp[:-1]) + 1
    rank = np.arange(1, n + 1, dtype=np.int64)
    rank -= np.repeat(np.concatenate(([0], starts)), np.diff(np.concatenate(([0], starts, [n]))))
    return rank


def _has_nul(names) -> bool:
    """Whether any of the strings holds a NUL byte."""
    return any(bool((data[int(off[0]):int(off[-1])] == 0).any()) for off, data in raw_chunks(names))


# Fusion and pooling rank each (system, question) list with the same tie rule as judge().

def ranked_order(s, q, score, d, docs: pa.Array) -> np.ndarray:
    """Row order by (system, question, score descending, doc_id descending byte-wise)."""
    byte_rank = pc.rank(docs, sort_keys="ascending", tiebreaker="dense").to_numpy()
    t = pa.table({"s": s, "q": q, "score": score, "d": byte_rank[d]})
    keys = [("s", "ascending"), ("q", "ascending"), ("score", "descending"), ("d", "descending")]
    return pc.sort_indices(t, sort_keys=keys).to_numpy()


def list_ranks(group: np.ndarray):
    """Start, size and 1-based ranks of the contiguous lists of a sorted group key."""
    if len(group) == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.float64)
    starts = np.flatnonzero(np.r_[True, group[1:] != group[:-1]])
    sizes = np.diff(np.r_[starts, len(group)])
    rank = np.arange(len(group)) - np.repeat(starts, sizes) + 1
    return starts, sizes, rank.astype(np.float64)
