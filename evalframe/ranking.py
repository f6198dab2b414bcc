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
(:func:`_diagnostics`, one vectorised function per :class:`Check`).  Ids arrive
factorised once by :mod:`evalframe.schema` (:class:`~evalframe.schema.CheckedRun`,
:class:`~evalframe.schema.CheckedQrels`): int32 question and system codes and a
fingerprint of each document id, so no id column is hashed twice and no Python
object is made per row.

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
  (:attr:`Check.GOLDEN_QUESTIONS_WITHOUT_RELEVANT`).

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

__all__ = ["Judged", "Subtopics", "judge", "NOT_JUDGED", "ranked_order", "list_ranks", "Check", "Diagnostic", "diagnostics_table",
           "merge_diagnostics", "warn_diagnostics", "DIAGNOSTIC_COLUMNS",
           "natural_order", "str_column", "shallow_rankings", "group_starts", "clear_judged_elsewhere",
           "systems_judged", "id_set", "HAS_JUDGED", "conflicts_record", "CHUNKING_OF", "check_conventions",
           "LEFT_OUT"]

import re
from dataclasses import dataclass, field, replace
from enum import Enum
from functools import cached_property
from typing import Callable, Iterable, Literal, Sequence

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from .schema import (BLOCK_ROWS, CheckedQrels, CheckedRun, Codes, byte_order_keys, common_prefix_length,
                     ResolvedConflicts, contiguous_groups, decimal_order_keys, encode_qrels, encode_run, fingerprints,
                     ids_to_str, pair_keys, raw_chunks)
from .errors import warn as _warn_user
from .errors import (ChunkingsDifferWarning, EvalframeInputError, IdSchemeWarning, InputProblem, NoRelevantWarning,
                     QuestionsDroppedWarning, QuestionsScoredZeroWarning, ShallowRankingWarning)

#: Label given to a retrieved document that the golden set does not judge.
NOT_JUDGED = np.int64(-(2 ** 62))

#: Columns of the diagnostics table.
DIAGNOSTIC_COLUMNS = ["system", "check", "count", "action", "examples"]

#: Examples shown per diagnostic.
MAX_EXAMPLES = 5

Ties = Literal["doc_id_desc", "doc_id_asc", "rank"]
Missing = Literal["zero", "drop"]


def _natural_permutation(arr: pa.Array) -> tuple[np.ndarray, bool] | None:
    """The permutation putting distinct Arrow string ids in natural order
    (numerically when every id is an int64 integer, else byte-wise) and whether
    it is numeric, or None when the general rule of :func:`_natural_order` is needed."""
    try:
        if not _int64_ids(arr):
            return pc.sort_indices(arr).to_numpy(), False  # byte-wise = code point order
        return np.argsort(pc.cast(arr, pa.int64()).to_numpy(), kind="stable"), True
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return None


def group_starts(codes: np.ndarray, n: int) -> np.ndarray:
    """Where each of the codes 0 .. n - 1 starts in ``codes`` (sorted, in [0, n)):
    ``numpy.searchsorted(codes, numpy.arange(n))``.  Many codes for their rows (a
    million questions of five documents) are counted instead (one pass over the rows,
    not a binary search per code: 59 -> 20 ms at 10^6 codes over 5 x 10^6 rows)."""
    if n <= len(codes) // 8:
        return np.searchsorted(codes, np.arange(n))
    out = np.zeros(n, dtype=np.int64)
    if n > 1:
        np.cumsum(np.bincount(codes, minlength=n)[:-1], out=out[1:])
    return out


_INT64_ID = r"^(0|-?[1-9][0-9]{0,18})$"


def _int64_ids(arr: pa.Array) -> bool:
    """Whether every string id is an int64 integer written plainly (the ids natural
    order sorts numerically).  The first and last ids are looked at first: text ids
    are told without a pass over them all."""
    if len(arr) and not all(re.match(_INT64_ID, arr[i].as_py()) for i in (0, len(arr) - 1)):
        return False
    return bool(pc.all(pc.match_substring_regex(arr, _INT64_ID)).as_py())


class _Names:
    """Distinct ids held as an Arrow array, indexed like a numpy array; Python
    strings are made only for the few that are shown (examples, messages)."""

    def __init__(self, arr: pa.Array, numeric: bool | None = None):
        self.arrow = arr
        #: whether their natural order is numeric (every id an integer); None: not known
        self.numeric = numeric

    def __len__(self) -> int:
        return len(self.arrow)

    def __getitem__(self, idx) -> "_Names":
        if isinstance(idx, slice):
            return _Names(self.arrow[idx])
        idx = np.asarray(idx)
        if idx.dtype == bool:
            idx = np.flatnonzero(idx)
        return _Names(self.arrow.take(pa.array(idx.astype(np.int64, copy=False))))

    def __iter__(self):
        return iter(self.arrow.to_pylist())

    def series(self) -> pd.Series:
        """The ids as a pandas ``str`` column (object before pandas 3), without Python objects."""
        return str_column(self.arrow)


_PANDAS_3 = int(pd.__version__.split(".")[0]) >= 3


def str_column(a) -> pd.Series:
    """An Arrow string array as pandas' ``str`` column (object before pandas 3)."""
    if _PANDAS_3:
        return pd.Series(a, dtype=pd.StringDtype("pyarrow", na_value=np.nan))
    return pd.Series(a.to_numpy(zero_copy_only=False), dtype=object)


def _natural_order(ids: np.ndarray) -> np.ndarray:
    """Sorted unique ids: numerically when every id is an integer, else as strings."""
    return _natural_order_rule(ids)[0]


def _natural_order_rule(ids: np.ndarray) -> tuple[np.ndarray, bool]:
    """:func:`_natural_order` and whether it sorted numerically (every id an integer)."""
    uniq = pd.unique(pd.Series(ids, dtype=object))
    try:
        natural = _natural_permutation(pa.array(uniq, type=pa.large_string()))
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        natural = None  # not all strings: the general rule below
    if natural is not None:  # else also an integer beyond int64
        return uniq[natural[0]].astype(object), natural[1]
    s = pd.Series(uniq, dtype=object)
    num = pd.to_numeric(s, errors="coerce")
    if num.notna().all() and (s.astype(str) == num.astype(np.int64).astype(str)).all():
        return s.iloc[np.argsort(num.to_numpy(), kind="stable")].to_numpy(dtype=object), True
    return np.sort(s.to_numpy(dtype=object)), False


def natural_order(ids: np.ndarray) -> np.ndarray:
    """The distinct ids in the order :func:`judge` lists questions: numerically when
    every id is an integer, else byte-wise (engines that evaluate in parts sort by it)."""
    return _natural_order(ids)


# ---------------------------------------------------------------- diagnostics records
class Check(str, Enum):
    """What a diagnostic reports; the values are the diagnostics table's ``check`` column."""

    #: Run questions absent from the golden set (dropped); count: questions.
    RUN_QUESTIONS_NOT_IN_GOLDEN_SET = "run_questions_not_in_golden_set"
    #: A system that answers none of the golden set's questions; count: 1.
    SYSTEM_WITHOUT_GOLDEN_QUESTIONS = "system_without_golden_questions"
    #: Golden-set questions a system does not answer (scored 0 or dropped); count: questions.
    GOLDEN_QUESTIONS_NOT_IN_RUN = "golden_questions_not_in_run"
    #: Rows whose score equals another row's of the same ranking; count: rows.
    SCORE_TIES = "score_ties"
    #: Golden-set questions without a label >= rel; count: questions.
    GOLDEN_QUESTIONS_WITHOUT_RELEVANT = "golden_questions_without_relevant"
    #: A system none of whose retrieved documents is judged for its question (a
    #: different id scheme, or a re-chunked corpus); count: its rows.
    SYSTEM_WITHOUT_JUDGED_DOCUMENTS = "system_without_judged_documents"
    #: Two systems that each retrieve judged documents, none in common (a golden set
    #: holding two chunkings' labels); one record per system, examples: the other
    #: systems; count: its judged rows.
    SYSTEMS_SHARE_NO_JUDGED_DOCUMENTS = "systems_share_no_judged_documents"
    #: (question, document) pairs of the golden set whose conflicting labels were resolved
    #: (``conflicts=``); count: pairs.
    GOLDEN_SET_CONFLICTING_LABELS = "golden_set_conflicting_labels"
    #: Run rows removed by a roll-up: later chunks of a page already ranked at its best
    #: chunk (see :mod:`evalframe.rollup`); count: rows.
    ROLLUP_RUN_ROWS_COLLAPSED = "rollup_run_rows_collapsed"
    #: Golden-set rows merged by a roll-up: chunks of one page, the page keeping its most
    #: relevant chunk's label; count: rows.
    ROLLUP_GOLDEN_ROWS_MERGED = "rollup_golden_rows_merged"
    #: Rankings shorter than the deepest cutoff asked for (see
    #: :func:`shallow_rankings`); count: questions.
    SHALLOW_RANKINGS = "shallow_rankings"
    #: Chunk-level measures asked of systems whose chunkings differ; count: chunkings.
    CHUNKINGS_DIFFER = "chunkings_differ"
    #: Systems whose retrieved chunks differ in size (median tokens 1.5x apart or more),
    #: asked for no measure at a token budget; count: systems (a suggestion, no warning).
    CHUNK_SIZES_DIFFER = "chunk_sizes_differ"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class Diagnostic:
    """One fact found while judging: a row of the diagnostics table.

    Attributes
    ----------
    system : str or None
        The system it concerns (None: the golden set, or a run without systems).
    check : Check
    count : int
        Questions or rows concerned (see :class:`Check`).
    action : str
        What evalframe did about it.
    examples : tuple of str
        Up to :data:`MAX_EXAMPLES` examples, in natural order.
    numeric : bool or None
        Whether ``examples`` were ordered numerically, every id of the set they
        were ordered in (the golden set's questions, or the questions dropped)
        being an integer; None: not said (a merge orders the union naturally).
    bytewise : tuple of str
        When ``numeric``: the first examples byte-wise, which a merge with a part
        whose ids are not all integers lists (the whole call's order is byte-wise).

    ``numeric`` and ``bytewise`` say how to merge; records compare without them.
    """

    system: str | None
    check: Check
    count: int
    action: str
    examples: tuple[str, ...] = ()
    numeric: bool | None = field(default=None, compare=False)
    bytewise: tuple[str, ...] = field(default=(), compare=False)

    def row(self) -> dict:
        """The diagnostics table's row (``check`` as its string value)."""
        return {"system": self.system, "check": self.check.value, "count": int(self.count),
                "action": self.action, "examples": ", ".join(self.examples[:MAX_EXAMPLES])}


def diagnostics_table(records: Iterable[Diagnostic]) -> pd.DataFrame:
    """The diagnostics table ``system, check, count, action, examples`` of some records."""
    return pd.DataFrame([r.row() for r in records if r.action != HAS_JUDGED], columns=DIAGNOSTIC_COLUMNS)


#: Checks whose examples are listed in the golden set's natural order (the others: in
#: their own, as the questions dropped (all systems') or a system's short rankings).
_GOLDEN_ORDERED = frozenset({Check.GOLDEN_QUESTIONS_NOT_IN_RUN, Check.SCORE_TIES,
                            Check.GOLDEN_QUESTIONS_WITHOUT_RELEVANT})


#: Checks about a system as a whole: kept by a merge only when every partition reports them.
_EVERY_PART = frozenset({Check.SYSTEM_WITHOUT_GOLDEN_QUESTIONS})


def conflicts_record(resolved: ResolvedConflicts | None) -> list[Diagnostic]:
    """The ``golden_set_conflicting_labels`` record of the golden set's conflicting labels
    resolved (``resolved``: the whole golden set's, or its partitions' merged), as a list
    of one, or none when there were none.

    Examples
    --------
    >>> from evalframe.schema import ResolvedConflicts
    >>> [r.action for r in conflicts_record(ResolvedConflicts("max", 2, ("q1:d1",)))]
    ['resolved: max label']
    >>> conflicts_record(None)
    []
    """
    if not isinstance(resolved, ResolvedConflicts) or not resolved.count:
        return []
    return [Diagnostic(None, Check.GOLDEN_SET_CONFLICTING_LABELS, resolved.count,
                       f"resolved: {resolved.how} label", tuple(resolved.examples))]


def merge_diagnostics(parts: Iterable[Sequence[Diagnostic]], *,
                      systems: Sequence[str | None] | None = None,
                      integer_questions: bool | None = None) -> list[Diagnostic]:
    """Merge the diagnostics of partitions of the questions (see the module docstring).

    Parameters
    ----------
    parts : iterable of sequences of Diagnostic
        Each partition's records (``Judged.records``).
    systems : sequence of str, optional
        The systems in the whole run's order (first appearance), which is the
        order :func:`judge` reports them in; default: first appearance in ``parts``.
    integer_questions : bool, optional
        Whether every question id of the whole golden set is an integer (the
        parts' ``Judged.integer_questions`` all true), which decides the order
        of examples that are golden-set questions; default: whether every
        record merged says its examples were numeric (a part without records
        may hold the only text id: engines pass it).

    Returns
    -------
    list of Diagnostic
        Counts summed per (check, system, action); examples the first
        :data:`MAX_EXAMPLES` of the union in the whole call's natural order;
        ``system_without_golden_questions`` kept when every partition reports it.
        Ordered by check, then by system (the golden set's records of one check, without a
        system, by action).
    """
    parts = [list(p) for p in parts]
    judged_somewhere = {r.system for p in parts for r in p if r.action == HAS_JUDGED}
    parts = [[r for r in p if r.check is not Check.SYSTEM_WITHOUT_JUDGED_DOCUMENTS or r.action == HAS_JUDGED
              or r.system not in judged_somewhere] for p in parts]
    merged: dict[tuple, list[Diagnostic]] = {}
    for part in parts:
        for r in part:
            merged.setdefault((r.check, r.system, r.action), []).append(r)
    dropped_numeric = all(r.numeric for part in parts for r in part  # one order for all systems
                          if r.check is Check.RUN_QUESTIONS_NOT_IN_GOLDEN_SET)
    checks = list(Check)
    position = {name: i for i, name in enumerate(systems or ())}
    out = []
    for (check, system, action), records in sorted(  # stable: first appearance (golden-set records of one check, by action)
            merged.items(), key=lambda kv: (checks.index(kv[0][0]), position.get(kv[0][1], len(position)),
                                            kv[0][2] if kv[0][1] is None else "")):
        count = sum(int(r.count) for r in records)
        if check in _EVERY_PART:  # a fact of the whole run only when every part finds it
            if len(records) < len(parts):
                continue
            out.append(Diagnostic(system, check, 1, action, records[0].examples[:1]))
            continue
        if any(r.numeric is None for r in records):  # order not said: the union's natural order
            examples = [e for r in records for e in r.examples]
            ex = tuple(str(e) for e in _natural_order(np.array(examples, dtype=object))[:MAX_EXAMPLES])
            out.append(Diagnostic(system, check, count, action, ex))
            continue
        numeric = (dropped_numeric if check is Check.RUN_QUESTIONS_NOT_IN_GOLDEN_SET
                   else integer_questions if integer_questions is not None and check in _GOLDEN_ORDERED
                   else all(r.numeric for r in records))
        bytewise = tuple(sorted({e for r in records for e in (r.bytewise if r.numeric else r.examples)})[:MAX_EXAMPLES])
        if not numeric:
            out.append(Diagnostic(system, check, count, action, bytewise, False))
            continue
        examples = np.array([e for r in records for e in r.examples], dtype=object)
        ex = tuple(str(e) for e in _natural_order(examples)[:MAX_EXAMPLES])
        out.append(Diagnostic(system, check, count, action, ex, True, bytewise))
    return out


# ---------------------------------------------------------------- the judged table
@dataclass(frozen=True, eq=False)
class Subtopics:
    """A diversity golden set's labels, per subtopic, joined to a ranked table.

    A *subtopic* here is one (question, subtopic) pair, coded 0..n_subtopics-1
    in (question, subtopic id) order.

    Attributes
    ----------
    row, subtopic, label : int arrays (E,)
        One entry per ranked row and subtopic the golden set judges it for:
        the row of the :class:`Judged` table, the subtopic, the label.  Sorted
        by row, then subtopic.
    subtopic_query : int array (n_subtopics,)
        Each subtopic's question (an index of the golden-set question list).
    qrels_subtopic, qrels_doc, qrels_label : int arrays (F,)
        The golden set's rows: subtopic, document (a code ordered as the doc
        ids' bytes, equal ids equal codes) and label; sorted by subtopic, then
        document.
    """

    row: np.ndarray
    subtopic: np.ndarray
    label: np.ndarray
    subtopic_query: np.ndarray
    qrels_subtopic: np.ndarray
    qrels_doc: np.ndarray
    qrels_label: np.ndarray

    @property
    def n_subtopics(self) -> int:
        return len(self.subtopic_query)

    def keep_rows(self, keep: np.ndarray) -> "Subtopics":
        """The entries of the rows kept by the boolean mask ``keep``, renumbered."""
        new = np.cumsum(keep) - 1
        sel = keep[self.row]
        return Subtopics(new[self.row[sel]], self.subtopic[sel], self.label[sel], self.subtopic_query,
                         self.qrels_subtopic, self.qrels_doc, self.qrels_label)


@dataclass(frozen=True, eq=False)
class Judged:
    """A ranked, judged run: flat arrays sorted by (group, rank).

    Attributes
    ----------
    groups : DataFrame
        One row per scored (system, question): ``[system,] query_id``.
    group_query : int array (G,)
        Index of each group's question in the golden-set question list.
    grp, rank, label : arrays (N,)
        Per retrieved document: its group, its 1-based rank, its label
        (:data:`NOT_JUDGED` when the golden set does not judge it).
    n_groups : int
    qrels_query, qrels_label : arrays
        The golden set's labels, sorted by question and then label descending
        (``qrels_query`` indexes the question list); used for ideal rankings and
        for counts of relevant and judged non-relevant documents.
    n_queries : int
    diagnostics : DataFrame
        ``system, check, count, action, examples``.
    source_row : int array (N,) or None
        Position of each row in the run given to :func:`judge` (only with
        ``keep_rows=True``).
    records : tuple of Diagnostic
        The rows of ``diagnostics`` as records (merge them across partitions
        with :func:`merge_diagnostics`).
    subtopics : Subtopics or None
        A diversity golden set's labels per subtopic (None without a
        ``subtopic`` column); ``label`` is then each document's largest.
    tokens : float64 array (N,) or None
        Per retrieved document: its token count, when the run has a ``tokens``
        column (measures at a token budget read it).
    integer_questions : bool or None
        Whether every question id of the golden set is an integer (questions are
        then in numeric order); engines that evaluate in parts pass their parts'
        conjunction to :func:`merge_diagnostics`.
    spans : SpanRows or None
        With a span golden set and chunk offsets: each row's chunk range and each
        question's evidence (:class:`evalframe.spans.SpanRows`), which the span
        measures read.
    """

    groups: pd.DataFrame
    group_query: np.ndarray
    grp: np.ndarray
    rank: np.ndarray
    label: np.ndarray
    qrels_query: np.ndarray
    qrels_label: np.ndarray
    n_queries: int
    diagnostics: pd.DataFrame = field(repr=False)
    source_row: np.ndarray | None = field(default=None, repr=False)
    cache: dict = field(default_factory=dict, repr=False, compare=False)
    records: tuple[Diagnostic, ...] = field(default=(), repr=False)
    subtopics: Subtopics | None = field(default=None, repr=False)
    tokens: np.ndarray | None = field(default=None, repr=False)
    integer_questions: bool | None = field(default=None, repr=False)
    spans: object | None = field(default=None, repr=False)

    def cached(self, key, make):
        """Per-row intermediates computed once per ranked table (measures share them)."""
        if key not in self.cache:
            self.cache[key] = make()
        return self.cache[key]

    @property
    def n_groups(self) -> int:
        return len(self.group_query)

    def per_group(self, weights: np.ndarray | None = None) -> np.ndarray:
        """Sum ``weights`` (default: 1) over each group's rows."""
        return np.bincount(self.grp, weights=weights, minlength=self.n_groups).astype(np.float64)

    def per_query_qrels(self, mask: np.ndarray) -> np.ndarray:
        """Count golden-set rows satisfying ``mask`` per group (via its question)."""
        counts = np.bincount(self.qrels_query, weights=mask, minlength=self.n_queries)
        return counts[self.group_query]

    @cached_property
    def qrels_irank(self) -> np.ndarray:
        """Rank of each golden-set row in its question's ideal ordering (1-based)."""
        starts = group_starts(self.qrels_query, self.n_queries)
        return np.arange(len(self.qrels_query)) - starts[self.qrels_query] + 1

    @cached_property
    def condensed(self) -> "Judged":
        """The judged-only (condensed) list: unjudged documents removed, ranks closed up.

        A document is judged when the golden set gives it a label >= 0 (trec_eval's
        ``-J``; negative labels count as unjudged)."""
        keep = self.label >= 0
        grp = self.grp[keep]
        starts = group_starts(grp, self.n_groups)
        rank = (np.arange(len(grp)) - starts[grp] + 1).astype(np.int64)
        return Judged(self.groups, self.group_query, grp, rank, self.label[keep],
                      self.qrels_query, self.qrels_label, self.n_queries, self.diagnostics,
                      None if self.source_row is None else self.source_row[keep],
                      records=self.records,
                      subtopics=None if self.subtopics is None else self.subtopics.keep_rows(keep),
                      tokens=None if self.tokens is None else self.tokens[keep],
                      integer_questions=self.integer_questions,
                      spans=None if self.spans is None else self.spans.keep_rows(keep))


# ---------------------------------------------------------------- judge and its steps
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
    frame = run.frame
    check_conventions(rel=rel, ties=ties, missing=missing, depth=depth, caller="judge")
    _check_rank_column(frame, ties)
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
        primary = frame["rank"].to_numpy(dtype=np.float64)[keep]
    else:
        primary = frame["score"].to_numpy(dtype=np.float64)[keep]
        primary = np.negative(primary, out=primary if kept is not None else None)  # a copy taken already: in place
    plan, sorted_grp, tied_rows = _ordering(grp, primary, run.doc if run.doc_int is None else run.doc_int, kept, ties)
    del primary
    # rows tied on (group, -score) in the ordering are the rows sharing their score
    tied_groups = grp[tied_rows] if ties != "rank" and tied_rows is not None else grp[:0]
    del tied_rows
    grp = sorted_grp
    relevance = qrels.frame["relevance"].to_numpy(dtype=np.int64)
    label = plan.scatter(judged_at, relevance[judged_where], NOT_JUDGED)
    row_sys = sys_codes if kept is None else sys_codes[kept]
    judged_docs = (systems, row_sys[judged_at], qrels.doc_fingerprint[judged_where], rq[keep][judged_at])
    id_records = unjudged_systems(systems, row_sys, judged_docs[1], run, kept, qrels)
    del judged_at, judged_where, row_sys
    want_rows = keep_rows or qrels.subtopics is not None
    order = plan.array() if "tokens" in frame or want_rows else None  # None: no row moves (or not needed)
    tokens = _take(frame["tokens"].to_numpy(dtype=np.float64)[keep], order) if "tokens" in frame else None
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

    records = _diagnostics(run.query, systems, sys_codes, rq, queries, answered, g_sys, g_q,
                           tied_groups, qq, ql, rel=rel, ties=ties, missing=missing) + id_records
    groups = pd.DataFrame({"query_id": queries[g_q].series()})
    if system_names is not None:
        groups.insert(0, "system", str_column(system_names.take(pa.array(g_sys))))
    if warn:
        warn_diagnostics(records, rel)
    return Judged(groups, g_q, grp.astype(np.int64, copy=False), rank.astype(np.int64, copy=False),
                  label.astype(np.int64, copy=False), qq.astype(np.int64, copy=False), ql, len(queries),
                  diagnostics_table(records), source_row,
                  records=tuple(records), subtopics=subtopics, tokens=tokens,
                  integer_questions=queries.numeric, cache={JUDGED_DOCS: judged_docs})


def _take(values: np.ndarray, order: np.ndarray | None) -> np.ndarray:
    """``values[order]`` (``values`` itself when ``order`` is None: no row moves)."""
    return values if order is None else values[order]


def _subtopics(golden: pd.DataFrame, queries: np.ndarray, row_query: np.ndarray, docs, source_row: np.ndarray,
               label: np.ndarray) -> Subtopics:
    """Join the ranked rows (their question, run row and largest label) with a diversity
    golden set's rows (``query_id, subtopic, doc_id, relevance``)."""
    import pyarrow as pa
    names = queries.arrow.to_pylist() if isinstance(queries, _Names) else queries
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
    """Raise ``ValueError`` unless the ranking conventions are valid values."""
    if not isinstance(rel, (int, np.integer)) or isinstance(rel, bool):
        raise ValueError(f"{caller}: rel must be an int, got {rel!r}")
    if ties not in ("doc_id_desc", "doc_id_asc", "rank"):
        raise ValueError(f"ties must be 'doc_id_desc', 'doc_id_asc' or 'rank', got {ties!r}")
    if missing not in ("zero", "drop"):
        raise ValueError(f"missing must be 'zero' or 'drop', got {missing!r}")
    if depth is not None and (not isinstance(depth, (int, np.integer)) or isinstance(depth, bool) or depth < 1):
        raise ValueError(f"depth must be an int >= 1 or None, got {depth!r}")


def _check_rank_column(run: pd.DataFrame, ties) -> None:
    if ties == "rank" and ("rank" not in run or not bool(np.isfinite(run["rank"].to_numpy(dtype=float, na_value=np.nan)).all())):
        raise EvalframeInputError("run", [InputProblem(
            "ties='rank' needs a numeric 'rank' column, and the run has none (or it has missing values)",
            "add a rank column, or use ties='doc_id_desc' (trec_eval's order)")])


def _golden_set(qrels: CheckedQrels) -> tuple[_Names, np.ndarray, np.ndarray, np.ndarray]:
    """The golden set's questions in natural order, and its rows sorted by
    (question, label descending): (queries, question index, label, row order)."""
    dictionary = qrels.query.dictionary
    natural = _natural_permutation(dictionary)
    if natural is None:  # the general rule, on Python objects (integers beyond int64)
        names, numeric = _natural_order_rule(qrels.query.names)
        perm = pd.Index(qrels.query.names).get_indexer(names)
    else:
        perm, numeric = natural
    position = np.empty(len(perm), dtype=np.int64)
    position[perm] = np.arange(len(perm))
    queries = _Names(dictionary.take(pa.array(perm)), numeric)
    qq = position[qrels.query.codes]
    ql = qrels.frame["relevance"].to_numpy(dtype=np.int64)
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


def _run_ids(run: CheckedRun, queries: _Names, every: Sequence[str | None] | None = None
             ) -> tuple[np.ndarray, pa.Array | None, np.ndarray, np.ndarray]:
    """The run's systems (first appearance order; ``every``: these, the whole run's), their
    names as Arrow strings (None: a run without systems), each row's system code and each
    row's question index in ``queries`` (-1: not in the golden set)."""
    if every is not None and list(every) != [None]:
        systems = np.array(every, dtype=object)
        names = pa.array([str(x) for x in every], pa.large_string())
        sys_codes = np.zeros(len(run.frame), dtype=np.int32)
        if run.system is not None:
            where = pd.Index(systems).get_indexer(run.system.names)
            if (where < 0).any():
                raise ValueError(f"systems {list(run.system.names[where < 0][:3])} are not in the systems given")
            sys_codes = where.astype(np.int32)[run.system.codes]
    elif run.system is not None:
        systems, names, sys_codes = run.system.names, run.system.dictionary, run.system.codes
    else:
        systems, names, sys_codes = np.array([None], dtype=object), None, np.zeros(len(run.frame), dtype=np.int32)
    to_golden = _position_in(run.query.dictionary, queries.arrow)  # question indexes: int32 codes
    if every is None and (to_golden < 0).all():
        raise EvalframeInputError("run", [InputProblem(
            "the run and the golden set share no question id "
            f"(run ids e.g. {list(run.query.names[:3])}, golden-set ids e.g. {list(queries[:3])})",
            "check that both tables use the same question ids (ids are compared as strings)")])
    return systems, names, sys_codes, to_golden[run.query.codes]


def _position_in(values: pa.Array, value_set: pa.Array) -> np.ndarray:
    """Each of the distinct strings ``values``' position in the distinct strings
    ``value_set`` (-1: absent), as int32.

    A probe of 64-bit fingerprints (:func:`~evalframe.schema.fingerprints`) into
    those of ``value_set``, every match confirmed on the strings: when no two of
    ``value_set`` share a fingerprint, a string's only candidate is the one with
    its fingerprint, so the answer is exact.  Arrow's ``index_in`` on strings
    (which compares strings in its hash table, cache miss after cache miss)
    when they do, and for small inputs."""
    def by_arrow() -> np.ndarray:
        return pc.index_in(values.cast(value_set.type), value_set=value_set).fill_null(-1).to_numpy().astype(np.int32)

    if len(values) < (1 << 14) or len(value_set) < (1 << 10):
        return by_arrow()
    golden = pd.Index(fingerprints(pa.chunked_array([value_set])))
    if not golden.is_unique:  # two distinct ids share a fingerprint (about never)
        return by_arrow()
    where = golden.get_indexer(fingerprints(pa.chunked_array([values])))
    hit = np.flatnonzero(where >= 0)
    same = pc.equal(values.take(pa.array(hit)).cast(value_set.type), value_set.take(pa.array(where[hit])))
    where[hit[~np.asarray(same.to_numpy(zero_copy_only=False), dtype=bool)]] = -1
    return where.astype(np.int32)


def _groups(sys_codes: np.ndarray, rq: np.ndarray, ns: int, nq: int, missing: Missing
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Scored (system, question) groups from the rows of golden-set questions:
    (answered (ns, nq), group id per system * nq + question (-1: not scored),
    each group's system, each group's question)."""
    answered = np.zeros((ns, nq), dtype=bool)
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
    index = pd.Index(qkeys)
    n = len(rq)
    fp = run.doc_int_fingerprint if ints else run.doc_fingerprint
    if index.is_unique:
        # a bitmap of the golden set's documents (16 MB) skips most unjudged rows before
        # their (question, doc) keys are made and probed; only the rows it lets through
        # (positions ``at`` among the ranked rows, ``src`` in the run) are worked on.
        # Block by block: no temporary as long as the run.
        bitmap = np.zeros(1 << 24, dtype=bool)
        bitmap[(golden_fp >> np.uint64(40)).view(np.int64)] = True  # < 2^24: a view, no cast
        blocks = []
        for lo in range(0, n, BLOCK_ROWS):
            high = (fp[lo:lo + BLOCK_ROWS] if kept is None else fp[kept[lo:lo + BLOCK_ROWS]]) >> np.uint64(40)
            blocks.append(np.flatnonzero(bitmap[high.view(np.int64)]) + lo)
        at = np.concatenate(blocks) if blocks else np.zeros(0, np.int64)
        del blocks
        src = at if kept is None else kept[at]
        where = index.get_indexer(pair_keys(rq[at], fp[src]))  # golden-set row, -1: not judged
        hit = where >= 0
        at, src, where = at[hit], src[hit], where[hit]
        if ints:
            same = run.doc_int[src] == qrels.doc_int[where]
        else:
            same = pc.equal(run.doc.take(pa.array(src)), qrels.doc.take(pa.array(where)))
            same = np.asarray(same.to_numpy(zero_copy_only=False), dtype=bool)
        same &= _unsorted(qq, qrels_order)[where] == rq[at].astype(np.uint64)  # same question too
        return at[same], where[same]
    # two golden-set keys collide (about never): an exact probe on the strings
    rows = np.arange(len(run.frame)) if kept is None else kept
    golden = pd.MultiIndex.from_arrays([_unsorted(qq, qrels_order), qrels.doc.to_numpy().astype(object)])
    where = golden.get_indexer(pd.MultiIndex.from_arrays(
        [rq.astype(np.uint64), run.doc.take(pa.array(rows)).to_numpy().astype(object)]))
    at = np.flatnonzero(where >= 0)
    return at, where[at]


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
              ) -> tuple["_RowOrder", np.ndarray, np.ndarray | None]:
    """How to rank every group: by ``primary`` ascending, ties by doc_id
    byte-wise (descending unless ``ties="doc_id_asc"``); only the doc ids of
    tied rows are read (``kept``: the run rows ranked, None for all; ``docs``:
    Arrow strings, or int64 ids ordered as their decimal strings).  Also the
    sorted groups and the mask of tied rows (:func:`_sort_plan`)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    def tiebreak(rows: np.ndarray) -> np.ndarray | list[np.ndarray]:
        source = rows if kept is None else kept[rows]
        if isinstance(docs, np.ndarray):  # integer ids, in the order of their strings ("10" < "9")
            keys = decimal_order_keys(docs[source])
            return [k if ties == "doc_id_asc" else ~k for k in keys[::-1]]  # least significant first
        names = docs.take(pa.array(source))
        keys = byte_order_keys(names, max_bytes=8)  # short ids: their bytes as one number
        if keys is None:  # longer ids: the bytes after the prefix all share (URLs' host and path)
            keys = byte_order_keys(names, max_bytes=TIE_KEY_BYTES, skip=common_prefix_length(names))
        if keys is not None and not _has_nul(names):  # zero padding then orders like the bytes
            words = [w if ties == "doc_id_asc" else ~w for w in keys[:-1]]  # (~: descending)
            return words[0] if len(words) == 1 else words[::-1]  # least significant first
        pos = np.empty(len(rows), dtype=np.int64)
        pos[pc.sort_indices(names).to_numpy()] = np.arange(len(rows))  # byte-wise order
        return pos if ties == "doc_id_asc" else -pos

    return _sort_plan(grp, primary, tiebreak)


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


def _both_sides(pairs: np.ndarray) -> np.ndarray:
    """Rows i and i + 1 of every adjacent pair marked True in ``pairs`` (length n - 1)."""
    rows = np.zeros(len(pairs) + 1, dtype=bool)
    rows[1:] |= pairs
    rows[:-1] |= pairs
    return rows


def _run_heads(idx: np.ndarray, pairs: np.ndarray) -> np.ndarray:
    """Of the rows ``idx`` (ascending: the rows of :func:`_both_sides`' pairs), those that
    start a run of rows tied pair by pair: a row not tied with the row before it."""
    return (idx == 0) | ~pairs[np.maximum(idx - 1, 0)]


def _sorted_order(grp: np.ndarray, primary: np.ndarray, tiebreak) -> tuple[np.ndarray, np.ndarray | None]:
    """Permutation sorting rows by (grp, primary, tiebreak) and the tied pairs:
    :func:`_sort_rows` with the permutation always an array."""
    order, _, tied = _sort_rows(grp, primary, tiebreak)
    return (np.arange(len(grp)) if order is None else order), tied


def _sort_rows(grp: np.ndarray, primary: np.ndarray, tiebreak
               ) -> tuple[np.ndarray | None, np.ndarray, np.ndarray | None]:
    """Permutation sorting rows by (grp, primary, tiebreak), all ascending, the
    sorted ``grp`` and the rows tied on (grp, primary) (a mask of the input's
    rows; None when no row is tied): :func:`_sort_plan` with the permutation as
    an array (None when no row moves)."""
    plan, g_s, tied_rows = _sort_plan(grp, primary, tiebreak)
    return plan.array(), g_s, tied_rows


@dataclass(frozen=True, eq=False)
class _RowOrder:
    """Where each of ``n`` rows goes when they are sorted.

    Either an explicit permutation (``order``: sorted position -> row), or, for a
    run already grouped and sorted inside its groups, whole groups moving as
    blocks (``shift``: per group code, how far its rows move; None: no block
    moves; ``grp``: each row's group code) after the rows of each block of ties
    are permuted in place (``tie_rows``: those rows, ascending; ``tie_sub``: row
    ``tie_rows[j]``'s place takes row ``tie_rows[tie_sub[j]]``).  The block form
    puts a few rows (the judged ones) in their places without an n-sized
    permutation (:meth:`scatter`)."""

    n: int
    order: np.ndarray | None = None
    grp: np.ndarray | None = None
    shift: np.ndarray | None = None
    tie_rows: np.ndarray | None = None
    tie_sub: np.ndarray | None = None

    def array(self) -> np.ndarray | None:
        """The permutation (sorted position -> row), None when no row moves."""
        if self.order is not None:
            return self.order
        if self.shift is None and self.tie_rows is None:
            return None
        out = np.arange(self.n)
        if self.shift is not None:
            out[self.positions(out)] = out.copy()
        elif self.tie_rows is not None:
            out[self.tie_rows] = self.tie_rows[self.tie_sub]
        return out

    def positions(self, rows: np.ndarray) -> np.ndarray:
        """The sorted position of each of ``rows`` (block form only)."""
        pos = np.asarray(rows, dtype=np.int64).copy()
        if self.tie_rows is not None and len(pos):
            inv = np.empty(len(self.tie_sub), dtype=np.int64)
            inv[self.tie_sub] = np.arange(len(self.tie_sub))
            k = np.minimum(np.searchsorted(self.tie_rows, pos), len(self.tie_rows) - 1)
            hit = self.tie_rows[k] == pos
            pos[hit] = self.tie_rows[inv[k[hit]]]
        if self.shift is not None:
            pos += self.shift[self.grp[rows]]
        return pos

    def take(self, values: np.ndarray) -> np.ndarray:
        """``values`` (one per row) in sorted order (``values`` itself when no row moves)."""
        order = self.array()
        return values if order is None else values[order]

    def scatter(self, rows: np.ndarray, values: np.ndarray, fill) -> np.ndarray:
        """An array in sorted order holding ``values`` at the places of ``rows``, ``fill`` elsewhere."""
        out = np.full(self.n, fill, dtype=values.dtype)
        if self.order is not None:
            out[rows] = values
            return out[self.order]
        out[self.positions(rows) if self.shift is not None or self.tie_rows is not None else rows] = values
        return out


def _sort_plan(grp: np.ndarray, primary: np.ndarray, tiebreak) -> tuple[_RowOrder, np.ndarray, np.ndarray | None]:
    """How to sort rows by (grp, primary, tiebreak), all ascending (a
    :class:`_RowOrder`), the sorted ``grp``, and the rows tied on (grp, primary)
    with another row (a mask of the input's rows; None when no row is tied).

    ``tiebreak(rows)`` returns the tie-breaking key of the given rows (or a
    list of keys, least significant first, as for ``numpy.lexsort``); it is
    called only for rows whose (grp, primary) is tied with another row's.  Runs
    usually arrive grouped by question and sorted by score: that is detected in
    O(n) and only whole groups move, with no n-sized permutation built.
    Otherwise one stable argsort of a combined key (:func:`_group_primary_order`).
    Either way the tie-breaking key is sorted only inside blocks of ties.
    """
    n = len(grp)
    if n == 0:
        return _RowOrder(0), grp, None
    same_g = grp[1:] == grp[:-1]
    starts = np.flatnonzero(np.concatenate(([True], ~same_g)))
    grouped = contiguous_groups(grp, starts)
    if grouped and np.all((primary[1:] >= primary[:-1]) | ~same_g):
        # Grouped and sorted within groups: ties are found in place, only the blocks move.
        tied = primary[1:] == primary[:-1]
        tied &= same_g
        del same_g
        heads = grp[starts]
        shift = g_s = None
        if np.all(heads[1:] > heads[:-1]):
            g_s = grp  # already in order: no block moves
        else:
            block_order = np.argsort(heads, kind="stable")
            lengths = np.diff(np.append(starts, n))[block_order]
            shift = np.zeros(int(heads.max()) + 1, dtype=np.int64)
            shift[heads[block_order]] = (np.cumsum(lengths) - lengths) - starts[block_order]
            g_s = np.repeat(heads[block_order], lengths)
        if not tied.any():
            return _RowOrder(n, grp=grp, shift=shift), g_s, None
        tied_rows = _both_sides(tied)
        idx = np.flatnonzero(tied_rows)
        first = np.flatnonzero(_run_heads(idx, tied))
        return _RowOrder(n, grp=grp, shift=shift, tie_rows=idx,
                         tie_sub=_tie_order(first, tiebreak(idx))), g_s, tied_rows
    del same_g
    order, g_s, p_s = _group_primary_order(grp, primary, grouped=grouped)
    tied = p_s[1:] == p_s[:-1]
    del p_s
    tied &= g_s[1:] == g_s[:-1]
    if not tied.any():
        return _RowOrder(n, order=order), g_s, None
    idx = np.flatnonzero(_both_sides(tied))
    first = np.flatnonzero(_run_heads(idx, tied))
    rows = order[idx]
    order[idx] = rows[_tie_order(first, tiebreak(rows))]  # inside blocks of one group: the sorted groups stay
    tied_rows = np.zeros(n, dtype=bool)
    tied_rows[rows] = True
    return _RowOrder(n, order=order), g_s, tied_rows


def _tie_order(first: np.ndarray, keys) -> np.ndarray:
    """The permutation sorting contiguous blocks of tied rows (starting at ``first``)
    by their tie-breaking key(s), stably, blocks in place: ``numpy.lexsort((*keys,
    block))``.  Several keys (least significant first) are sorted by the most
    significant one, and only the runs of rows still tied on it (few: ids that share
    their first bytes) by the others."""
    if not isinstance(keys, (list, tuple)):
        return _sort_in_blocks(first, keys)
    *rest, top = keys
    sub = _sort_in_blocks(first, top)
    if not rest:
        return sub
    m = len(top)
    block = np.repeat(np.arange(len(first)), np.diff(np.append(first, m)))
    t = top[sub]
    same = t[1:] == t[:-1]
    same &= block[1:] == block[:-1]
    if not same.any():
        return sub
    idx = np.flatnonzero(_both_sides(same))
    again = np.flatnonzero(_run_heads(idx, same))
    rows = sub[idx]
    sub[idx] = rows[_tie_order(again, [k[rows] for k in rest])]
    return sub


_SIGN = np.uint64(1 << 63)
_ALL = np.uint64(2 ** 64 - 1)


def _float_order_keys(x: np.ndarray) -> np.ndarray:
    """uint64 keys ordered as the float64 values ``x`` are (-0.0 and 0.0 equal);
    :data:`~evalframe.schema.BLOCK_ROWS` rows at a time (temporaries stay in cache)."""
    x = np.asarray(x, dtype=np.float64)
    out = np.empty(len(x), dtype=np.uint64)
    for lo in range(0, len(x), BLOCK_ROWS):
        u = out[lo:lo + BLOCK_ROWS]
        np.add(x[lo:lo + BLOCK_ROWS], 0.0, out=u.view(np.float64))  # -0.0 + 0.0 is 0.0
        flip = u >> np.uint64(63)
        flip *= _ALL  # all ones for negatives (whose order reverses), else 0
        flip |= _SIGN
        u ^= flip
    return out


def _group_primary_order(grp: np.ndarray, primary: np.ndarray, *, grouped: bool = False
                         ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The stable permutation sorting rows by (grp, primary), ``grp`` >= 0, with
    ``grp`` and ``primary`` in that order.

    One in-place sort of a single uint64 key per row: the group code in the high
    bits, then the top bits of ``primary``'s order key (offset by the smallest,
    so that a narrow range of scores keeps more of its bits), then the row
    number, which makes the sort stable and gives the permutation without an
    argsort.  Rows whose keys tie on (group, score bits) but whose ``primary``
    differ (values closer than the bits kept) are then ordered by (primary, row)
    inside their blocks, so the result is exactly the stable sort by (grp, primary).

    ``grouped``: every group's rows are contiguous; then a stable argsort of the
    (group, score bits) key, which runs along the groups already in place, is the
    faster sort."""
    n = len(grp)
    bits = max(int(grp.max()).bit_length(), 1)
    rbits = max((n - 1).bit_length(), 1)
    if grouped and bits <= 40:
        key = _float_order_keys(primary)
        key >>= np.uint64(bits)
        high = grp.astype(np.uint64)
        high <<= np.uint64(64 - bits)
        key |= high
        del high
        order = np.argsort(key, kind="stable")
        key = key[order]
        same = key[1:] == key[:-1]
        del key
        return _exact_in_blocks(order, same, grp[order], primary)
    if 64 - bits - rbits < 16:  # too many groups or rows to leave enough bits to the score: two stable sorts
        order = np.argsort(primary, kind="stable")
        order = order[np.argsort(grp[order], kind="stable")]
        return order, grp[order], primary[order]
    key = _float_order_keys(primary)
    low = key.min()
    key -= low
    drop = max(int(key.max()).bit_length() - (64 - bits - rbits), 0)
    if drop:
        key >>= np.uint64(drop)
    key <<= np.uint64(rbits)
    key |= np.arange(n, dtype=np.uint64)
    high = grp.astype(np.uint64)
    high <<= np.uint64(64 - bits)
    key |= high
    del high
    key.sort()
    order = (key & np.uint64((1 << rbits) - 1)).view(np.int64)  # < 2^63: the same bits
    key >>= np.uint64(rbits)  # (group, score bits)
    same = key[1:] == key[:-1]
    key >>= np.uint64(64 - bits - rbits)
    g_s = key.astype(grp.dtype)
    del key
    return _exact_in_blocks(order, same, g_s, primary)


def _exact_in_blocks(order: np.ndarray, same: np.ndarray, g_s: np.ndarray, primary: np.ndarray
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``order`` (sorted by truncated keys; ``same``: adjacent sorted rows share their
    key) with the blocks of equal keys whose ``primary`` differ re-sorted by
    (primary, row), and the sorted groups and ``primary``."""
    p_s = primary[order]
    close = same & (p_s[1:] != p_s[:-1])
    if close.any():  # keys too short for some values: order those blocks exactly
        idx = np.flatnonzero(_both_sides(same))
        block = np.cumsum(_run_heads(idx, same)) - 1
        fix = np.zeros(int(block[-1]) + 1, dtype=bool)
        fix[block[np.searchsorted(idx, np.flatnonzero(close))]] = True
        keep = fix[block]
        idx, block = idx[keep], block[keep]
        rows = order[idx]
        order[idx] = rows = rows[np.lexsort((rows, primary[rows], block))]
        p_s[idx] = primary[rows]
    return order, g_s, p_s


def _sort_in_blocks(first: np.ndarray, key: np.ndarray) -> np.ndarray:
    """The permutation sorting each block of ``key`` stably (blocks are
    contiguous and start at ``first``; float keys are finite), blocks in place.

    Blocks (ties, or one question's ranking) are small: those of one
    power-of-two size class are the rows of one padded matrix, sorted along its
    rows (no global sort, no lexsort)."""
    m = len(key)
    sizes = np.diff(np.append(first, m))
    klass = np.ceil(np.log2(sizes)).astype(np.int64)
    sub = np.empty(m, dtype=np.int64)
    pad = np.inf if key.dtype.kind == "f" else np.iinfo(key.dtype).max
    block_of_row = np.repeat(np.arange(len(first)), sizes)
    within = np.arange(m) - first[block_of_row]
    for c in np.unique(klass):  # at most 64 classes, not one pass per block
        blocks = np.flatnonzero(klass == c)
        rows = np.flatnonzero(klass[block_of_row] == c)  # block-major, like the matrix
        local = np.empty(len(first), dtype=np.int64)
        local[blocks] = np.arange(len(blocks))
        mat = np.full((len(blocks), 1 << int(c)), pad, dtype=key.dtype)
        mat[local[block_of_row[rows]], within[rows]] = key[rows]
        perm = np.argsort(mat, axis=1, kind="stable")  # padding sorts last
        real = np.arange(mat.shape[1]) < sizes[blocks][:, None]
        sub[rows] = (first[blocks][:, None] + perm)[real]
    return sub


def _has_nul(names) -> bool:
    """Whether any of the strings holds a NUL byte."""
    return any(bool((data[int(off[0]):int(off[-1])] == 0).any()) for off, data in raw_chunks(names))




# ---------------------------------------------------------------- diagnostics, one function per check
#: Two systems are said to share no judged document only when each retrieves at least
#: this many judged (question, document) pairs: real systems over one corpus share
#: many long before that.
DISJOINT_MIN_JUDGED = 20


#: Key of ``Judged.cache`` holding (systems, each judged row's system, its document's
#: fingerprint): what :func:`systems_sharing_no_document` reads.
JUDGED_DOCS = "judged_docs"
#: The action of a marker record: the system has judged documents in this partition (a
#: merge then drops the system's ``system_without_judged_documents`` records; never shown).
HAS_JUDGED = "has judged documents"


def unjudged_systems(systems: np.ndarray, row_sys: np.ndarray, judged_sys: np.ndarray, run: CheckedRun,
                     kept: np.ndarray | None, qrels: CheckedQrels) -> list[Diagnostic]:
    """A ``system_without_judged_documents`` record per system with rows of golden-set
    questions none of whose documents the golden set judges, for those questions or any
    other (``row_sys``: each kept row's system; ``kept``: the run rows of golden-set
    questions, None: all), and a marker record (:data:`HAS_JUDGED`, dropped from every
    table) per other system, so that a merge of partitions keeps the record only for
    systems judged in none."""
    ns = len(systems)
    rows = np.bincount(row_sys, minlength=ns)
    judged = np.bincount(judged_sys, minlength=ns)
    out = []
    for s in np.flatnonzero(rows > 0):
        if not judged[s]:  # no judged pair: is any of its documents judged for another question?
            mine = np.flatnonzero(row_sys == s)
            src = mine if kept is None else kept[mine]
            fp = run.doc_fingerprint[src]
            hit = np.flatnonzero(np.isin(fp, qrels.doc_fingerprint))
            if len(hit):
                golden = pa.chunked_array([qrels.doc.combine_chunks()]).combine_chunks()
                docs = run.doc.take(pa.array(src[hit])).combine_chunks() if isinstance(run.doc, pa.ChunkedArray) \
                    else run.doc.take(pa.array(src[hit]))
                judged[s] = int(pc.sum(pc.is_in(docs.cast(golden.type), value_set=golden)).as_py() or 0)
        out.append(Diagnostic(systems[s], Check.SYSTEM_WITHOUT_JUDGED_DOCUMENTS, 0 if judged[s] else int(rows[s]),
                              HAS_JUDGED if judged[s] else
                              "none of its retrieved documents is judged: every measure is 0"))
    return out


def clear_judged_elsewhere(records: list[Diagnostic], find_judged: Callable[[list], set]) -> list[Diagnostic]:
    """``records`` with the ``system_without_judged_documents`` record of each system
    ``find_judged(flagged systems)`` names turned into the marker :data:`HAS_JUDGED` (an
    engine that sees a partition's labels asks the whole golden set; ``find_judged`` is
    called only when a system is flagged)."""
    flagged = [r.system for r in records if r.check is Check.SYSTEM_WITHOUT_JUDGED_DOCUMENTS
               and r.action != HAS_JUDGED]
    if not flagged:
        return records
    judged = find_judged(flagged)
    return [Diagnostic(r.system, r.check, 0, HAS_JUDGED) if r.check is Check.SYSTEM_WITHOUT_JUDGED_DOCUMENTS
            and r.system in judged else r for r in records]


def id_set(ids) -> "pa.Array":
    """Distinct ids (a pandas Index or Series of strings) as the Arrow value set
    :func:`systems_judged` probes: built once by a caller that probes many partitions."""
    import pyarrow as pa
    return pa.array(pd.unique(np.asarray(ids, dtype=object)), pa.large_string())


def systems_judged(part: pd.DataFrame, flagged: list, questions, docs) -> set:
    """The ``flagged`` systems of a run partition that retrieve, for a golden-set
    question, a document the golden set judges (for any question); ``questions`` and
    ``docs``: :func:`id_set` value sets (or a pandas Index of strings), probed by Arrow's
    hash (no Python string per row or per id)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    part = part.reset_index() if "query_id" not in part.columns else part
    has_system = "system" in part.columns
    if has_system:
        part = part[part["system"].isin(flagged)]

    def among(column: pd.Series, values) -> np.ndarray:
        values = values if isinstance(values, pa.Array) else id_set(values)
        arr = pa.array(ids_to_str(column).to_numpy(dtype=object) if not len(column) else ids_to_str(column))
        arr = arr.combine_chunks() if isinstance(arr, pa.ChunkedArray) else arr
        return np.asarray(pc.is_in(arr.cast(pa.large_string()), value_set=values).to_numpy(zero_copy_only=False),
                          dtype=bool)
    hit = among(part["query_id"], questions) & among(part["doc_id"], docs)
    if not has_system:
        return {None} if hit.any() else set()
    return set(part["system"].to_numpy()[hit])


def systems_sharing_no_document(J: "Judged") -> list[Diagnostic]:
    """``systems_share_no_judged_documents`` records: systems that each retrieve at least
    :data:`DISJOINT_MIN_JUDGED` judged (question, document) pairs, none of whose documents
    another such system retrieves (all of a system's judged documents are needed at
    once: the in-memory engine checks it)."""
    if JUDGED_DOCS not in J.cache:
        return []
    systems, judged_sys, judged_doc, judged_q = J.cache[JUDGED_DOCS]
    judged = np.bincount(judged_sys, minlength=len(systems))
    big = np.flatnonzero(judged >= DISJOINT_MIN_JUDGED)
    if len(big) < 2:
        return []
    out = []
    for s in big:
        apart = []
        for t in big:
            if t == s:
                continue
            a, b = judged_sys == s, judged_sys == t
            common = np.intersect1d(judged_q[a], judged_q[b])  # on the questions both answer with judged documents
            a &= np.isin(judged_q, common)
            b &= np.isin(judged_q, common)
            if a.sum() >= DISJOINT_MIN_JUDGED and b.sum() >= DISJOINT_MIN_JUDGED and not np.isin(
                    judged_doc[a], judged_doc[b]).any():
                apart.append(str(systems[t]))
        if apart:
            out.append(Diagnostic(systems[s], Check.SYSTEMS_SHARE_NO_JUDGED_DOCUMENTS, int(judged[s]),
                                  "retrieves judged documents, none of which another system retrieves",
                                  tuple(apart[:MAX_EXAMPLES])))
    return out


def _diagnostics(run_queries: Codes, systems: np.ndarray, sys_codes: np.ndarray, rq: np.ndarray,
                 queries: np.ndarray, answered: np.ndarray, g_sys: np.ndarray, g_q: np.ndarray,
                 tied_groups: np.ndarray, qq: np.ndarray, ql: np.ndarray, *, rel: int, ties: Ties,
                 missing: Missing) -> list[Diagnostic]:
    """Every check's records, in :class:`Check` order."""
    return (_run_questions_not_in_golden_set(run_queries, systems, sys_codes, rq)
            + _systems_without_golden_questions(systems, answered, missing)
            + _golden_questions_not_in_run(systems, queries, answered, missing)
            + _score_ties(systems, queries, g_sys, g_q, tied_groups, ties)
            + _golden_questions_without_relevant(queries, qq, ql, rel))


def _per_system(check: Check, action: str, systems: np.ndarray, sys_idx: np.ndarray,
                key: np.ndarray, names, counts: np.ndarray | None = None, *,
                numeric: bool | None) -> list[Diagnostic]:
    """One record per system from distinct (system, item) pairs: the count of
    items (or ``counts``) and the names of the first items in ``key`` order (the
    natural order, numeric when ``numeric``: then also the first byte-wise)."""
    if not len(sys_idx):
        return []
    order = np.lexsort((key, sys_idx))
    n_items = np.bincount(sys_idx, minlength=len(systems))
    starts = np.cumsum(n_items) - n_items
    shown = order[np.arange(len(order)) - starts[sys_idx[order]] < MAX_EXAMPLES]
    shown_sys = sys_idx[shown]
    counts = n_items if counts is None else counts
    return [Diagnostic(systems[s], check, int(counts[s]), action,
                       tuple(str(x) for x in names[shown[shown_sys == s]]), numeric,
                       _bytewise_first(names[order[starts[s]:starts[s] + n_items[s]]]) if numeric else ())
            for s in np.flatnonzero(n_items)]  # one record per system, at most 5 examples each


def _bytewise_first(names) -> tuple[str, ...]:
    """The first :data:`MAX_EXAMPLES` of some distinct ids (``_Names``, an Arrow or an
    object array) byte-wise, found by Arrow's top-k (no sort of them all)."""
    arr = names.arrow if isinstance(names, _Names) else names
    arr = arr if isinstance(arr, (pa.Array, pa.ChunkedArray)) else pa.array(np.asarray(arr, dtype=object), pa.large_string())
    if len(arr) > MAX_EXAMPLES:
        arr = arr.take(pc.select_k_unstable(arr, k=MAX_EXAMPLES, sort_keys=[("dummy", "ascending")]))
    return tuple(sorted(str(x) for x in arr.to_pylist()))


def _run_questions_not_in_golden_set(run_queries: Codes, systems, sys_codes, rq) -> list[Diagnostic]:
    unknown = np.flatnonzero(rq < 0)
    if not len(unknown):
        return []
    nu = len(run_queries)
    pairs = np.unique(sys_codes[unknown].astype(np.int64) * nu + run_queries.codes[unknown])
    s, q = np.divmod(pairs, nu)
    dropped = np.unique(q)
    natural = np.zeros(nu, dtype=np.int64)  # each dropped question's position in natural order
    rule = _natural_permutation(run_queries.dictionary.take(pa.array(dropped)))  # Arrow: no Python strings
    if rule is not None:
        perm, numeric = rule
        natural[dropped[perm]] = np.arange(len(dropped))
        names = _Names(run_queries.dictionary)
    else:  # the general rule, on Python objects (integers beyond int64)
        names = run_queries.names
        sorted_ids, numeric = _natural_order_rule(names[dropped])
        natural[dropped] = pd.Index(sorted_ids).get_indexer(names[dropped])
    return _per_system(Check.RUN_QUESTIONS_NOT_IN_GOLDEN_SET, "dropped", systems, s, natural[q], names[q],
                       numeric=numeric)


def _systems_without_golden_questions(systems, answered, missing) -> list[Diagnostic]:
    action = "scored 0 on every question" if missing == "zero" else "dropped"
    return [Diagnostic(systems[s], Check.SYSTEM_WITHOUT_GOLDEN_QUESTIONS, 1, action, (str(systems[s]),))
            for s in np.flatnonzero(~answered.any(axis=1))]


def _golden_questions_not_in_run(systems, queries, answered, missing) -> list[Diagnostic]:
    s, q = np.nonzero(~answered)
    return _per_system(Check.GOLDEN_QUESTIONS_NOT_IN_RUN, "scored 0" if missing == "zero" else "dropped",
                       systems, s, q, queries[q], numeric=queries.numeric)


def _score_ties(systems, queries, g_sys, g_q, tied_groups, ties) -> list[Diagnostic]:
    if not len(tied_groups):
        return []
    rows = np.bincount(g_sys[tied_groups], minlength=len(systems))
    u = np.unique(tied_groups)
    action = f"ordered by doc_id {'descending' if ties == 'doc_id_desc' else 'ascending'}"
    return _per_system(Check.SCORE_TIES, action, systems, g_sys[u], g_q[u], queries[g_q[u]], counts=rows,
                       numeric=queries.numeric)


#: The action of a ``golden_questions_without_relevant`` record whose questions
#: ``no_relevant="drop"`` left out of the per-question table (no warning then).
LEFT_OUT = "left out (no_relevant='drop')"


def _golden_questions_without_relevant(queries, qq, ql, rel) -> list[Diagnostic]:
    norel = np.bincount(qq, weights=ql >= rel, minlength=len(queries)) == 0
    if not norel.any():
        return []
    return [Diagnostic(None, Check.GOLDEN_QUESTIONS_WITHOUT_RELEVANT, int(norel.sum()),
                       "counted (most measures score 0)",
                       tuple(str(x) for x in queries[norel][:MAX_EXAMPLES]), queries.numeric,
                       _bytewise_first(queries[norel]) if queries.numeric else ())]


_WARNINGS = {
    Check.SYSTEM_WITHOUT_GOLDEN_QUESTIONS: QuestionsDroppedWarning,
    Check.RUN_QUESTIONS_NOT_IN_GOLDEN_SET: QuestionsDroppedWarning,
    Check.GOLDEN_QUESTIONS_NOT_IN_RUN: QuestionsScoredZeroWarning,
    Check.GOLDEN_QUESTIONS_WITHOUT_RELEVANT: NoRelevantWarning,
    Check.SHALLOW_RANKINGS: ShallowRankingWarning,
    Check.SYSTEM_WITHOUT_JUDGED_DOCUMENTS: IdSchemeWarning,
    Check.SYSTEMS_SHARE_NO_JUDGED_DOCUMENTS: IdSchemeWarning,
    Check.CHUNKINGS_DIFFER: ChunkingsDifferWarning,
}


#: Said of a golden-set record that depends on a chunking's labels (questions without a
#: relevant chunk), when the systems chunk in several ways: which systems' chunking.
CHUNKING_OF = "in the chunking of systems "


def warn_diagnostics(records: Sequence[Diagnostic], rel: int) -> None:
    """Issue the structured warnings of some records (those of one call, or of
    partitions merged with :func:`merge_diagnostics`); ``rel`` as given to :func:`judge`."""
    for r in records:
        cat = _WARNINGS.get(r.check)
        if cat is None or r.action == HAS_JUDGED:
            continue
        if r.check is Check.GOLDEN_QUESTIONS_NOT_IN_RUN and r.action == "dropped":
            continue  # missing="drop" asked for exactly this
        if r.check is Check.GOLDEN_QUESTIONS_WITHOUT_RELEVANT and r.action == LEFT_OUT:
            continue  # no_relevant="drop" asked for exactly this
        if r.check is Check.SYSTEM_WITHOUT_GOLDEN_QUESTIONS:
            _warn_user(f"system {r.system!r} answers none of the golden set's questions: "
                       f"{r.action} (check its question ids)", cat)
            continue
        if r.check is Check.SYSTEM_WITHOUT_JUDGED_DOCUMENTS:
            who = "the run" if r.system is None else f"system {r.system!r}"
            _warn_user(f"0% of the documents {who} retrieved are judged ({r.count} rows; none is in the golden "
                       "set), so every measure scores it 0: a different id scheme, or a re-chunked corpus scored "
                       "against the old chunks? Use a span golden set with chunks= (evalframe.spans) or rollup=", cat)
            continue
        if r.check is Check.SYSTEMS_SHARE_NO_JUDGED_DOCUMENTS:
            _warn_user(f"system {r.system!r} retrieves {r.count} judged documents and none of those of "
                       f"{', '.join(map(repr, r.examples))}: does the golden set hold the labels of two chunkings "
                       "(or id schemes)? Each question's relevant set then holds documents only the other can "
                       "return, and recall is lower for both; judge spans once (evalframe.spans)", cat)
            continue
        if r.check is Check.CHUNKINGS_DIFFER:
            _warn_user(f"the systems chunk in {r.count} different ways, so their {r.action.split(': ', 1)[-1]} "
                       "are not comparable (a chunk of one chunking is not a chunk of another): compare "
                       "SpanRecall@k or SpanRecall(tokens=N)", cat)
            continue
        who = f"system {r.system!r}: " if r.system is not None else ""
        examples = ", ".join(r.examples[:MAX_EXAMPLES])
        msg = {
            Check.RUN_QUESTIONS_NOT_IN_GOLDEN_SET: f"{who}{r.count} run questions are not in the golden set and were dropped (e.g. {examples})",
            Check.GOLDEN_QUESTIONS_NOT_IN_RUN: f"{who}{r.count} golden-set questions have no retrieved documents and score 0 (e.g. {examples}); pass missing='drop' to leave them out, as trec_eval does without -c",
            Check.SHALLOW_RANKINGS: f"{who}{r.count} questions have {r.action} (e.g. {examples}; R@100 of a 20-deep ranking is its R@20)",
            Check.GOLDEN_QUESTIONS_WITHOUT_RELEVANT: f"{r.count} golden-set questions have no relevant document (label >= {rel}){' ' + CHUNKING_OF + r.action.split(CHUNKING_OF, 1)[1] if CHUNKING_OF in r.action else ''}, so recall-type measures score 0 on them (e.g. {examples}); no_relevant='drop' (--no-relevant drop) leaves them out",
        }[r.check]
        _warn_user(msg, cat)


# --------------------------------------------------------- run lists outside judge()
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


# --------------------------------------------------------- rankings shorter than a cutoff
def _first_examples(ids: pd.Series) -> Diagnostic:
    """The first :data:`MAX_EXAMPLES` of some of one system's group question ids
    (``ids``, in group order) in their natural order, as a record's ``examples``,
    ``numeric`` and ``bytewise`` (the other fields empty).

    Groups are in natural question order (:func:`judge`), so the first ids are the
    answer and only they become Python strings; unless all of ``ids`` are integers
    out of numeric order (the golden set's other ids made its order byte-wise):
    then they are sorted."""
    try:
        arr = pa.array(ids)
        numeric = _int64_ids(arr)
        in_order = not numeric or bool((np.diff(pc.cast(arr, pa.int64()).to_numpy()) > 0).all())
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        arr, in_order = None, False
    if in_order:
        first = tuple(str(x) for x in ids.iloc[:MAX_EXAMPLES].to_numpy(dtype=object))
    else:
        natural, numeric = _natural_order_rule(ids.to_numpy(dtype=object))
        first = tuple(str(x) for x in natural[:MAX_EXAMPLES])
    bytewise = _bytewise_first(arr if arr is not None else ids.to_numpy(dtype=object)) if numeric else ()
    return Diagnostic(None, Check.SHALLOW_RANKINGS, 0, "", first, numeric, bytewise)


def shallow_rankings(J: Judged, k: int, *, warn: bool = True) -> list[Diagnostic]:
    """Records of the rankings that hold fewer than ``k`` documents (but at least one).

    A measure at cutoff k reads such a ranking whole: R@100 of a 20-deep ranking is its
    R@20.  One :attr:`Check.SHALLOW_RANKINGS` record per system (count: questions;
    examples: questions in natural order), and a
    :class:`~evalframe.errors.ShallowRankingWarning` each when ``warn``.
    """
    n = np.bincount(J.grp, minlength=J.n_groups)
    short = np.flatnonzero((n > 0) & (n < k))
    if not len(short):
        return []
    if "system" in J.groups:
        sys_idx, systems = pd.factorize(J.groups["system"].to_numpy(dtype=object))
        systems = np.asarray(systems, dtype=object)
    else:
        systems, sys_idx = np.array([None], dtype=object), np.zeros(J.n_groups, np.int64)
    query_ids = J.groups["query_id"]
    records = []
    for s in np.unique(sys_idx[short]):  # one record per system
        rows = short[sys_idx[short] == s]
        action = (f"fewer than {k} retrieved documents: measured on what was returned, so a measure at "
                  f"k = {k} equals its value at the ranking's length")  # the same in every partition
        first = _first_examples(query_ids.iloc[rows])
        records.append(replace(first, system=systems[s], count=len(rows), action=action))
    if warn:
        warn_diagnostics(records, 1)
    return records
