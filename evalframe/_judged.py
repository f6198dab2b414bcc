"""The ranked, judged table every measure reads.

:class:`Judged` holds flat numpy arrays, one entry per retrieved document, sorted by
(group, rank), where a group is one scored (system, question); :data:`NOT_JUDGED` labels
a document the golden set does not judge; :class:`Subtopics` joins a diversity golden
set's labels to it; :func:`group_starts` finds where each group starts.  :data:`Ties` and
:data:`Missing` name the conventions a run is judged under.  The table is made by
:func:`evalframe.ranking.judge`.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Literal

import numpy as np

from ._diagnostic_records import Diagnostic
from ._id_codes import is_arrow
from ._threads import cached_property

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa


#: Label given to a retrieved document that the golden set does not judge.
NOT_JUDGED = np.int64(-(2 ** 62))

Ties = Literal["doc_id_desc", "doc_id_asc", "rank"]
Missing = Literal["zero", "drop"]


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
    group_ids : DataFrame or pyarrow Table
        One row per scored (system, question): ``[system,] query_id``; :attr:`groups`
        is it as a DataFrame.
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
    diagnostic_rows : DataFrame or None
        :attr:`diagnostics` when given; None: made from ``records`` on first use.
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

    group_ids: "pd.DataFrame | pa.Table"
    group_query: np.ndarray
    grp: np.ndarray
    rank: np.ndarray
    label: np.ndarray
    qrels_query: np.ndarray
    qrels_label: np.ndarray
    n_queries: int
    diagnostic_rows: "pd.DataFrame | None" = field(default=None, repr=False)
    source_row: np.ndarray | None = field(default=None, repr=False)
    cache: dict = field(default_factory=dict, repr=False, compare=False)
    records: tuple[Diagnostic, ...] = field(default=(), repr=False)
    subtopics: Subtopics | None = field(default=None, repr=False)
    tokens: np.ndarray | None = field(default=None, repr=False)
    integer_questions: bool | None = field(default=None, repr=False)
    spans: object | None = field(default=None, repr=False)

    @cached_property
    def groups(self) -> "pd.DataFrame":
        """One row per scored (system, question): ``[system,] query_id`` (pandas' ``str``
        columns; made from ``group_ids`` on first use)."""
        if not is_arrow(self.group_ids):
            return self.group_ids
        import pandas as pd

        from ._id_order import str_array
        return pd.DataFrame({name: str_array(self.group_ids[name]) for name in self.group_ids.column_names},
                            copy=False)

    @cached_property
    def diagnostics(self) -> "pd.DataFrame":
        """``system, check, count, action, examples``: ``diagnostic_rows``, or the table
        of ``records`` (:func:`~evalframe._diagnostic_records.diagnostics_table`)."""
        if self.diagnostic_rows is not None:
            return self.diagnostic_rows
        from ._diagnostic_records import diagnostics_table
        return diagnostics_table(self.records)

    def with_records(self, records) -> "Judged":
        """This table with other diagnostics ``records`` (its table of them made anew); the
        groups' table, when made, goes with it (records do not change the groups)."""
        out = replace(self, records=tuple(records), diagnostic_rows=None)
        if "groups" in self.__dict__:
            out.__dict__["groups"] = self.__dict__["groups"]
        return out

    def cached(self, key, make):
        """Per-row intermediates computed once per ranked table (measures share them)."""
        if key not in self.cache:
            self.cache[key] = make()
        return self.cache[key]

    def release(self) -> None:
        """Drop everything ``cache`` holds (and :attr:`condensed`'s, when made), once the table
        is used no more (what judging left there for later checks goes too): the
        intermediates of :meth:`cached` refer back to this table, a reference cycle that
        only the garbage collector breaks.  A part's table released when the part is scored
        is freed then; otherwise a collection run meanwhile by another thread's part moves
        it to the oldest generation, where it waits for the next full pass (a block's arrays
        held the while)."""
        self.cache.clear()
        condensed = self.__dict__.get("condensed")
        if condensed is not None and condensed is not self:
            condensed.release()

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
        return Judged(self.group_ids, self.group_query, grp, rank, self.label[keep],
                      self.qrels_query, self.qrels_label, self.n_queries, self.diagnostic_rows,
                      None if self.source_row is None else self.source_row[keep],
                      records=self.records,
                      subtopics=None if self.subtopics is None else self.subtopics.keep_rows(keep),
                      tokens=None if self.tokens is None else self.tokens[keep],
                      integer_questions=self.integer_questions,
                      spans=None if self.spans is None else self.spans.keep_rows(keep))
