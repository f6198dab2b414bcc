"""Span measures: how much of the evidence text the retrieved chunks hold, whatever the chunking.

Chroma's definitions ("Evaluating Chunking Strategies for Retrieval", 2024), on
characters.  Per question, E is the evidence (the characters of its spans labelled
>= ``rel``) and R_k the characters of the top-k retrieved chunks (their union: text two
chunks share counts once):

- ``SpanRecall@k`` = |E ∩ R_k| / |E| (0 when E is empty);
- ``SpanPrecision@k`` = |E ∩ R_k| / |R_k| (0 when nothing is retrieved);
- ``SpanIoU@k`` = |E ∩ R_k| / |E ∪ R_k|.

Without ``@k`` every retrieved chunk counts; ``SpanRecall(tokens=512)`` reads the leading
chunks whose cumulative tokens fit in 512 (at most k with ``@k``), as the other budget
measures do, so chunkings of different sizes are compared at an equal reading cost.

They need a span golden set and each retrieved chunk's offsets (``chunks=``, or a run that
carries them): see :mod:`evalframe.spans`.  Each is computed with one sort of the
ranked chunks and the evidence per (group, document, start) and a running maximum per
cutoff (:func:`evalframe.spans.union_lengths`): no loop per question or per row.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..errors import EvalframeInputError, InputProblem
from .._judged import Judged
from .base import UNIT, Family, Measure, ParamSpec
from .intermediates import BUDGET, budget_cutoff, safe_div

if TYPE_CHECKING:
    from ..spans import SpanRows  # (evalframe.spans loads pandas: imported when a span measure runs)

_PARAMS = {"rel": ParamSpec("int", None, "evidence is the spans labelled >= rel", none_ok=True), "tokens": BUDGET}


def _rows(J: Judged) -> SpanRows:
    spans = J.spans
    if spans is None:
        raise EvalframeInputError("golden set (qrels)", [InputProblem(
            "span measures (SpanRecall, SpanPrecision, SpanIoU) need a span golden set "
            "(query_id, doc_id, start, end) and each retrieved chunk's offsets",
            "pass a span golden set and chunks= (a chunk_id, doc_id, start, end table), or a run whose rows "
            "carry doc_id/parent_id, start and end")])
    return spans


class _Sorted:
    """The ranked chunks and every group's evidence, one entry each, sorted by (group,
    document, start): the entries every span measure of the table reads."""

    def __init__(self, J: Judged, depth: int | None = None):
        S = _rows(J)
        keep = None if depth is None else np.flatnonzero(J.rank <= depth)  # the rows a cutoff can read
        # every group gets its question's evidence
        ev_starts = np.searchsorted(S.ev_query, np.arange(J.n_queries + 1))
        per_group = np.diff(ev_starts)[J.group_query]
        ev_group = np.repeat(np.arange(J.n_groups), per_group)
        first = np.repeat(ev_starts[J.group_query] - np.cumsum(per_group) + per_group, per_group)
        ev = first + np.arange(len(ev_group))  # the evidence rows, group after group
        rows = (lambda a: a) if keep is None or len(keep) == len(J.grp) else (lambda a: a[keep])
        n = len(rows(J.grp))
        owner = np.concatenate([rows(J.grp), ev_group])
        doc = np.concatenate([rows(S.doc), S.ev_doc[ev]])
        start = np.concatenate([rows(S.start), S.ev_start[ev]])
        end = np.concatenate([rows(S.end), S.ev_end[ev]])
        segment = owner.astype(np.int64) * np.int64(max(S.n_docs, 1)) + doc
        span = int(end.max()) + 1 if len(end) else 1
        if len(segment) and int(segment.max()) < np.iinfo(np.int64).max // span:  # one int64 key: one sort
            order = np.argsort(segment * np.int64(span) + start)  # equal keys in any order: same union
        else:
            order = np.lexsort((start, segment))
        self.owner, self.segment = owner[order], segment[order]
        self.start, self.end = start[order], end[order]
        is_chunk = order < n
        self.row = np.where(is_chunk, order, -1)  # the ranked row of a chunk entry
        self.label = np.where(is_chunk, np.iinfo(np.int64).min, np.concatenate([np.zeros(n, np.int64),
                                                                                  S.ev_label[ev]])[order])
        rank = rows(J.rank)
        self.rank = np.where(is_chunk, rank[np.maximum(self.row, 0)], 0) if n else np.zeros(len(order), np.int64)
        self.is_chunk = is_chunk
        self.n = J.n_groups

    def covered(self, mask: np.ndarray) -> np.ndarray:
        from ..spans import union_lengths
        idx = np.flatnonzero(mask)
        return union_lengths(self.owner[idx], self.segment[idx], self.start[idx], self.end[idx], self.n)


def _cutoff(J: Judged, m: Measure) -> np.ndarray | None:
    """Per group, how many leading chunks the measure reads (None: all)."""
    if m.param("tokens") is None and m.k is None:
        return None
    return budget_cutoff(J, m)


def _parts(J: Judged, m: Measure) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """|E|, |R|, |E ∪ R| per group."""
    n = _cutoff(J, m)
    # the chunks the cutoff can read, ranked at most this deep: sorted once per depth
    depth = None if n is None or not len(n) or int(n.max()) >= int(J.rank.max(initial=0)) else int(n.max())
    T = J.cached(("span_sorted", depth), lambda: _Sorted(J, depth))
    rel = m.param("rel")
    evidence = T.is_chunk == False  # noqa: E712 (an array)
    is_rel = evidence & (T.label >= rel)
    read = T.is_chunk if n is None else T.is_chunk & (T.rank <= n[T.owner])
    key = ("span_cut", m.k, m.param("tokens"))
    E = J.cached(("span_E", rel), lambda: T.covered(is_rel))
    R = J.cached(key, lambda: T.covered(read))
    U = T.covered(read | is_rel)
    return E, R, U


def _share(of: str):
    """A family's function: |E ∩ R| over |E| (``"evidence"``), |R| (``"read"``) or
    |E ∪ R| (``"union"``), 0 where that is empty."""
    def fn(J, ms):
        out = []
        for m in ms:
            E, R, U = _parts(J, m)
            out.append(safe_div(E + R - U, {"evidence": E, "read": R, "union": U}[of]))
        return out
    return fn


SPAN_RECALL = Family("SpanRecall", "optional", _PARAMS, _share("evidence"), aliases=("SpanR", "TokenRecall"),
                     doc="evidence characters in the top k chunks / evidence characters", needs=("spans",), value_range=UNIT)
SPAN_PRECISION = Family("SpanPrecision", "optional", _PARAMS, _share("read"), aliases=("SpanP", "TokenPrecision"),
                        doc="evidence characters in the top k chunks / characters of the top k chunks", needs=("spans",), value_range=UNIT)
SPAN_IOU = Family("SpanIoU", "optional", _PARAMS, _share("union"), aliases=("TokenIoU",),
                  doc="evidence characters in the top k chunks / characters of their union with the evidence",
                  needs=("spans",), value_range=UNIT)
