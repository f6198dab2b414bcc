"""Per-row intermediates that several families share, computed once per table.

Each is cached on the ranked table it belongs to (``J`` or ``J.condensed``)
with :meth:`evalframe.ranking.Judged.cached`, keyed by what it depends on, so a
second measure (or a second cutoff) of any family costs O(groups), not O(rows):

- counts: documents retrieved per group, relevant per group, running counts
  within each group (:class:`RunningCount`: at any rows, or at rank k), the
  running count of relevant documents (:func:`cumrel`);
- :func:`running_sum`: the one within-group running sum every running count
  and running DCG is made of;
- :func:`sums_at_cutoffs`: sums through several cutoffs in one pass;
- gains (:func:`gain_values`), one :class:`DCG` of the ranking and one
  :class:`IdealDCG` per question, for every gain-based family (nDCG, G,
  nDCGrel, RnDCG, RBP).

Nothing here loops in Python over questions or documents.
"""
from __future__ import annotations

from typing import Callable, Hashable, Sequence

import numpy as np

from .._arrow_numpy import distinct
from ..errors import EvalframeInputError, InputProblem
from .._judged import Judged, NOT_JUDGED, group_starts
from .._threads import cached_property
from .base import FAMILIES, Measure, ParamSpec

#: Parameters most families take.  ``rel=None`` means "evaluate()'s ``rel``
#: convention (default 1)"; an explicit ``rel=1`` is kept in the name because it
#: pins the threshold whatever the convention.
COMMON = {
    "rel": ParamSpec("int", None, "a document is relevant when its label is >= rel", none_ok=True),
    "judged_only": ParamSpec("bool", False, "evaluate the condensed list (unjudged documents removed)"),
}

#: The token budget of the cutoff families (P, R, Success, nDCG): ``R(tokens=2000)``
#: reads the leading documents whose cumulative ``tokens`` (a run column) fit in 2000.
BUDGET = ParamSpec("int", None, "token budget: the leading documents whose cumulative tokens fit in it",
                   low=1, none_ok=True)

#: A rank beyond every ranking ("no cutoff" for ideal-DCG look-ups).
BIG_RANK = np.iinfo(np.int64).max // 4


def view(J: Judged, m: Measure) -> Judged:
    """The table a measure reads: ``J``, or its condensed list with ``judged_only``."""
    return J.condensed if m.param("judged_only") else J


def safe_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a / b, and 0 where b <= 0."""
    out = np.zeros_like(a, dtype=np.float64)
    np.divide(a, b, out=out, where=b > 0)
    return out


def groups_by(ms: Sequence[Measure], key: Callable[[Measure], Hashable]) -> dict:
    """Indices of ``ms`` grouped by ``key(m)``, in order of first appearance."""
    out: dict = {}
    for i, m in enumerate(ms):
        out.setdefault(key(m), []).append(i)
    return out


def by_view_rel(ms: Sequence[Measure]):
    """Indices of ``ms`` grouped by (judged_only, rel)."""
    return groups_by(ms, lambda m: (m.param("judged_only"), m.param("rel"))).items()


def num_rel(J: Judged, rel: int) -> np.ndarray:
    """Relevant documents in the golden set, per group (float)."""
    return J.per_query_qrels(J.qrels_label >= rel)


def group_first_row(V: Judged) -> np.ndarray:
    """Row index of each group's first document (== its end when empty)."""
    return V.cached("first", lambda: group_starts(V.grp, V.n_groups))


def nret(V: Judged) -> np.ndarray:
    """Documents retrieved per group (int64)."""
    return V.cached("nret", lambda: np.diff(np.append(group_first_row(V), len(V.grp))))


def isrel(V: Judged, rel: int) -> np.ndarray:
    """Per row: label >= rel."""
    return V.cached(("isrel", rel), lambda: V.label >= rel)


def nonrel(V: Judged, rel: int) -> np.ndarray:
    """Per row: judged and not relevant (0 <= label < rel), cached."""
    return V.cached(("nonrel", rel), lambda: isrel(V, 0) & ~isrel(V, rel))


def relevant(V: Judged, rel: int) -> np.ndarray:
    """Relevant documents in the golden set, per group (float), cached."""
    return V.cached(("R", rel), lambda: num_rel(V, rel))


def running_sum(x: np.ndarray, owner: np.ndarray, starts: np.ndarray, dtype=None) -> np.ndarray:
    """Inclusive running sum of ``x`` within each owner (group or question).

    Entries are sorted by owner; ``starts[o]`` is owner o's first entry.  Each
    owner's sum starts from 0 and adds its entries in order, so it does not
    depend on the other owners (a partition of the questions gives the same
    bits) and equals :func:`sums_at_cutoffs` through the same entries.  Counts
    (integer ``x``) are the global cumulative sum less its value before the
    owner's first entry, which is exact for integers."""
    x = np.asarray(x)
    if dtype is None and x.dtype.kind in "biu":
        dtype = np.int64
    if len(x) == 0:
        return np.cumsum(x, dtype=dtype)
    if np.dtype(dtype or x.dtype).kind in "iu":
        c = np.cumsum(x, dtype=dtype)
        before = np.where(starts > 0, c[np.maximum(starts - 1, 0)], 0)
        return c - before[owner]
    return _segmented_cumsum(x.astype(np.float64 if dtype is None else dtype), owner, starts)


def _segmented_cumsum(x: np.ndarray, owner: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Running sums restarting at each owner: owners are laid out as the rows of
    a zero-padded matrix (one matrix per power-of-two length class, so padding at
    most doubles the entries) and summed along the rows, in order."""
    n = len(x)
    lengths = np.diff(np.append(starts, n))
    where = np.arange(n) - starts[owner]  # position within the owner
    klass = np.zeros(len(lengths), dtype=np.int64)
    klass[lengths > 0] = np.ceil(np.log2(lengths[lengths > 0])).astype(np.int64)
    entry_class = klass[owner]
    out = np.empty(n, dtype=x.dtype)
    local = np.zeros(len(lengths), dtype=np.int64)
    for c in distinct(entry_class):  # at most 64 classes, not one pass per owner
        owners = np.flatnonzero((klass == c) & (lengths > 0))
        local[owners] = np.arange(len(owners))
        sel = np.flatnonzero(entry_class == c)
        row, col = local[owner[sel]], where[sel]
        m = np.zeros((len(owners), int(lengths[owners].max())), dtype=x.dtype)
        m[row, col] = x[sel]
        out[sel] = np.cumsum(m, axis=1)[row, col]
    return out


class RunningCount:
    """The running count of a row mask within each group (rows sorted by group),
    read at any rows (:meth:`at`) or at rank k (:meth:`at_rank`).

    A mask that holds on few rows (the usual case: the judged documents of a
    deep run) is kept as the rows where it holds, and a count is a binary search
    among them; a denser one as its cumulative count over the table.  Either
    gives the same integers."""

    #: A mask holding on at most this fraction of the rows is kept as its rows.
    SPARSE = 1 / 8

    def __init__(self, V: Judged, mask: np.ndarray):
        self._V = V
        self.sparse = np.count_nonzero(mask) <= self.SPARSE * len(mask)
        self._where = np.flatnonzero(mask) if self.sparse else np.cumsum(mask, dtype=np.int64)

    def _through(self, x: np.ndarray) -> np.ndarray:
        """Rows where the mask holds at positions <= x (x >= -1), in the whole table."""
        if self.sparse:
            return np.searchsorted(self._where, x, side="right")
        return np.where(x >= 0, self._where[np.maximum(x, 0)], 0)

    @cached_property
    def _before(self) -> np.ndarray:
        """Per group, the rows where the mask holds before the group's first row."""
        return self._through(group_first_row(self._V) - 1)

    def at(self, rows: np.ndarray) -> np.ndarray:
        """The inclusive count at each of ``rows``, within its group (int64)."""
        return self._through(rows) - self._before[self._V.grp[rows]]

    def at_rank(self, k, *, holds: bool = True) -> np.ndarray:
        """The count at rank k (a number or one per group; the group's total when it
        has fewer than k documents), as float; ``holds=False``: the count of the
        rows where the mask does not hold."""
        V = self._V
        n = np.minimum(np.asarray(k, dtype=np.float64), nret(V)).astype(np.int64)
        first = group_first_row(V)
        got = self._through(first + n - 1) - self._before
        return (got if holds else n - got).astype(np.float64)


def count_in_group(V: Judged, mask: np.ndarray) -> RunningCount:
    """The running count of ``mask`` within each group."""
    return RunningCount(V, mask)


def cumrel(V: Judged, rel: int) -> RunningCount:
    """Relevant documents at or above each row, within its group."""
    return V.cached(("cumrel", rel), lambda: count_in_group(V, isrel(V, rel)))


def nrelret(V: Judged, rel: int) -> np.ndarray:
    """Relevant documents retrieved per group (int)."""
    return V.cached(("nrr", rel), lambda: np.bincount(V.grp[isrel(V, rel)], minlength=V.n_groups))


def budget_cutoff(V: Judged, m: Measure) -> np.ndarray:
    """Per group, the documents a measure reads: with ``m``'s token budget, the
    leading documents whose cumulative tokens fit in it (at most ``m.k``); else ``m.k``.

    Raises
    ------
    EvalframeInputError
        A budget on a run without a ``tokens`` column.
    """
    budget = m.param("tokens") if "tokens" in FAMILIES[m.family].params else None
    if budget is None:
        return np.full(V.n_groups, m.k, dtype=np.int64)
    if V.tokens is None:
        raise EvalframeInputError("run", [InputProblem(
            f"{m} is measured at a token budget, and the run has no tokens column",
            "add a column 'tokens' with each retrieved row's token count (or name it with "
            "columns=), or use a cutoff in documents (e.g. R@5)")])

    def fit() -> np.ndarray:
        t = V.tokens
        whole = bool((t == np.round(t)).all())
        cum = running_sum(t.astype(np.int64) if whole else t, V.grp, group_first_row(V))
        return np.bincount(V.grp, weights=cum <= budget, minlength=V.n_groups).astype(np.int64)

    n = V.cached(("fit", budget), fit)  # tokens >= 0: the documents that fit are a prefix
    return n if m.k is None else np.minimum(n, m.k)


def sums_at_cutoffs(owner: np.ndarray, pos: np.ndarray, w: np.ndarray, n: int, ks) -> list[np.ndarray]:
    """For each cutoff k in ``ks`` (None: no cutoff), the sum of ``w`` over the
    entries at position <= k of each owner (group or question): n values.

    Entries are sorted by (owner, position).  The sums are accumulated entry by
    entry in that order, through one cutoff interval after the other, so they are
    bit-for-bit those of ``np.bincount(owner, w * (pos <= k))``; each entry is read
    once, and each cutoff costs O(n)."""
    bounds = sorted({k for k in ks if k is not None})
    interval = np.searchsorted(np.asarray(bounds, dtype=np.int64), pos)  # first cutoff >= pos
    total = np.zeros(n)
    at = {}
    for j, k in enumerate(bounds + [None]):
        if k is None and None not in ks:
            break
        rows = np.flatnonzero(interval == j)
        if not len(rows):  # no entry in this interval: every sum is the one through the last cutoff
            at[k] = total.copy()
            continue
        o = owner[rows]
        if j == 0:  # the first interval: every sum starts at 0 (bincount's own start)
            total = np.bincount(o, weights=w[rows], minlength=n)
            at[k] = total
            continue
        wj = w[rows].copy()
        head = np.concatenate(([True], o[1:] != o[:-1])) if len(o) else np.zeros(0, bool)
        wj[head] = total[o[head]] + wj[head]  # carry on from the sum through the last cutoff
        seen = np.bincount(o, minlength=n) > 0
        total = np.where(seen, np.bincount(o, weights=wj, minlength=n), total)
        at[k] = total
    return [at[k] for k in ks]


# ---------------------------------------------------------------------------
# Gains and DCG
# ---------------------------------------------------------------------------

def trec_label(label: np.ndarray) -> np.ndarray:
    """trec_eval's relevance values: -1 not in the pool, -2 in the pool but unjudged."""
    return np.where(label == NOT_JUDGED, -1, np.where(label < 0, -2, label))


def gain_map(m: Measure) -> dict[int, float]:
    """A measure's ``gains`` parameter as label -> gain (a label given twice: the last)."""
    return dict(m.param("gains") or ()) if "gains" in FAMILIES[m.family].params else {}


def gain_values(label: np.ndarray, kind: str, gmap: dict[int, float]) -> np.ndarray:
    """Gain of each (evalframe) label: ``2**label - 1`` (``kind="exp"``) or the
    label (``"linear"``) for labels >= 0, 0 below, overridden by ``gmap`` (keys
    are trec_eval relevance values).

    Raises
    ------
    EvalframeInputError
        When a label's gain is not a finite float (``2**label - 1`` for labels
        >= 1024).
    """
    lab = np.maximum(label, 0).astype(np.float64)
    with np.errstate(over="ignore"):  # an infinite gain is refused below, with the labels named
        g = np.exp2(lab) - 1.0 if kind == "exp" else lab
    if gmap:
        tl = trec_label(label)
        for key, val in gmap.items():
            g = np.where(tl == key, val, g)
    if kind == "exp":
        bad = ~np.isfinite(g)
        if bad.any():
            labels = np.unique(label[bad])
            raise EvalframeInputError("golden set (qrels)", [InputProblem(
                f"{len(labels)} label value(s) have a gain 2**label - 1 too large for a float "
                f"(labels >= 1024), e.g. {', '.join(map(str, labels[:5].tolist()))}",
                "use gain='linear' (gain = label), or give these labels a gain with "
                "gains=((label, gain), ...)")])
    return g


class DCG:
    """The ranking's side of every gain-based measure, for one (table, gain kind,
    gains): the rows with a non-zero gain, their gains and discounted gains,
    and (computed when first read) each group's DCG, the running DCG and the
    running gain within the group."""

    def __init__(self, V: Judged, kind: str, gmap: dict[int, float]):
        self._V = V
        maybe = V.label > 0  # a label <= 0 has no gain, unless gains give it one
        if gmap:
            maybe |= np.isin(trec_label(V.label), list(gmap))
        rows = np.flatnonzero(maybe)
        gain = gain_values(V.label[rows], kind, gmap)
        #: The rows with a non-zero gain, and their gains.
        self.rows, self.gain = rows[gain != 0], gain[gain != 0]
        self.terms = self.gain * (1.0 / np.log2(V.rank[self.rows] + 1.0))

    def at_cutoffs(self, ks) -> list[np.ndarray]:
        """DCG@k of each group for each k in ``ks`` (None: the whole ranking)."""
        V = self._V
        return sums_at_cutoffs(V.grp[self.rows], V.rank[self.rows], self.terms, V.n_groups, ks)

    @cached_property
    def total(self) -> np.ndarray:
        """DCG of each group's whole ranking."""
        V = self._V
        return np.bincount(V.grp[self.rows], weights=self.terms, minlength=V.n_groups)

    @cached_property
    def _starts(self) -> np.ndarray:
        return group_starts(self._V.grp[self.rows], self._V.n_groups)

    @cached_property
    def running(self) -> np.ndarray:
        """Running DCG at each row of :attr:`rows` (it only changes there)."""
        return running_sum(self.terms, self._V.grp[self.rows], self._starts)

    @cached_property
    def running_gain(self) -> np.ndarray:
        """Running sum of the gains at each row of :attr:`rows`."""
        return running_sum(self.gain, self._V.grp[self.rows], self._starts)

    def running_at(self, rows: np.ndarray) -> np.ndarray:
        """Running DCG (through the row) at any rows of the table."""
        V, nz = self._V, self.rows
        k = np.searchsorted(nz, rows, side="right") - 1  # last non-zero row <= row
        ok = k >= 0
        kk = np.maximum(k, 0)
        same = ok & (V.grp[nz[kk]] == V.grp[rows]) if len(nz) else np.zeros(len(rows), bool)
        return np.where(same, self.running[kk] if len(nz) else 0.0, 0.0)


class IdealDCG:
    """Each question's ideal ranking: its judged documents (label >= 0) by gain,
    descending, keeping the positive gains; their discounted gains, the ideal
    DCG through any position, and what trec_eval's G needs."""

    def __init__(self, V: Judged, kind: str, gmap: dict[int, float]):
        ql = V.qrels_label
        g = np.where(ql >= 0, gain_values(ql, kind, gmap), 0.0)
        q = V.qrels_query
        # The golden set is sorted by question, then label descending: by gain too,
        # unless gains reorder the labels.
        start = group_starts(q, V.n_queries)
        if len(g) > 1 and not ((q[1:] != q[:-1]) | (g[1:] <= g[:-1])).all():
            order = np.lexsort((-g, q))
            g, q = g[order], q[order]
            irank = np.arange(len(q)) - start[q] + 1
        else:
            irank = V.qrels_irank  # the same positions, computed once per table
        pos = g > 0
        self.gain = np.where(pos, g, 0.0)
        self.terms = self.gain / np.log2(irank + 1.0)
        with np.errstate(over="ignore"):  # refused just below, with a clear error
            total = self.terms.sum()
        if not np.isfinite(total):
            raise EvalframeInputError("golden set (qrels)", [InputProblem(
                f"a question's ideal DCG overflows a float (largest label {int(ql.max())})",
                "use gain='linear' (gain = label), or smaller gains with gains=((label, gain), ...)")])
        self.rows = np.flatnonzero(pos)
        self.q, self.irank, self.start_q = q, irank, start
        self._pos_g = pos
        self._raw_g = g

    @cached_property
    def npos_q(self) -> np.ndarray:
        """Documents with a positive gain, per question."""
        return np.bincount(self.q, weights=self._pos_g, minlength=len(self.start_q)).astype(np.int64)

    @cached_property
    def total_gain_q(self) -> np.ndarray:
        """Sum of the positive gains, per question."""
        return np.bincount(self.q, weights=self.gain, minlength=len(self.start_q))

    def at_cutoffs(self, ks) -> list[np.ndarray]:
        """Ideal DCG@k of each question for each k in ``ks`` (None: all)."""
        r = self.rows
        return sums_at_cutoffs(self.q[r], self.irank[r], self.terms[r], len(self.start_q), ks)

    @cached_property
    def cum_dcg(self) -> np.ndarray:
        return running_sum(self.terms, self.q, self.start_q)

    @cached_property
    def cum_cost(self) -> np.ndarray:
        return running_sum(np.where(self._pos_g, np.maximum(self._raw_g, 1.0), 0.0), self.q, self.start_q)

    def dcg_at(self, gq: np.ndarray, t: np.ndarray) -> np.ndarray:
        """Ideal DCG of question ``gq`` through position ``t`` (t may exceed the list)."""
        t = np.minimum(t, self.npos_q[gq])
        idx = self.start_q[gq] + t - 1
        return np.where(t >= 1, self.cum_dcg[np.maximum(idx, 0)] if len(self.cum_dcg) else 0.0, 0.0)

    def cost_at(self, gq: np.ndarray, t: np.ndarray) -> np.ndarray:
        """trec_eval G's cost through position t: sum of max(ideal gain, 1)."""
        npos = self.npos_q[gq]
        u = np.minimum(t, npos)
        idx = self.start_q[gq] + u - 1
        head = np.where(u >= 1, self.cum_cost[np.maximum(idx, 0)] if len(self.cum_cost) else 0.0, 0.0)
        return head + np.maximum(t - npos, 0)

    def gain_at(self, gq: np.ndarray, t: np.ndarray) -> np.ndarray:
        """Ideal gain at position ``t`` (0 beyond the positive list)."""
        ok = t <= self.npos_q[gq]
        idx = np.where(ok, self.start_q[gq] + t - 1, 0)
        return np.where(ok, self.gain[idx] if len(self.gain) else 0.0, 0.0)


def _gains_key(gmap: dict) -> tuple:
    return tuple(sorted(gmap.items()))


def dcg(V: Judged, kind: str, gmap: dict[int, float]) -> DCG:
    """The :class:`DCG` of table ``V`` for a gain kind and gains (cached)."""
    return V.cached(("dcg", kind, _gains_key(gmap)), lambda: DCG(V, kind, gmap))


def ideal_dcg(V: Judged, kind: str, gmap: dict[int, float]) -> IdealDCG:
    """The :class:`IdealDCG` of table ``V``'s questions (cached)."""
    return V.cached(("ideal", kind, _gains_key(gmap)), lambda: IdealDCG(V, kind, gmap))
