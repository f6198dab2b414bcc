"""Compatibility (Clarke, Vtyurina and Smucker, TOIS 2021, "Assessing top-k
preferences"), as ir_measures' ``Compat(p=0.95, normalize=True)`` defines it.

The ranking is compared with an ideal ranking by rank-biased overlap to a
depth D = max(retrieved, relevant):

    RBO = sum_{i<=D} p**(i-1) |R_i & I_i| / i  /  sum_{i<=D} p**(i-1)

where R_i is the top i of the ranking and I_i the top i of the ideal: the
relevant documents (label > 0) by label, descending, and among equal labels in
the order the ranking gives them (retrieved ones first; ir_measures orders
them by score, an unretrieved document counting as score 0, then by the
golden set's row order).  ``normalize=True`` divides by the RBO of the ideal
with itself (0 stays 0).

A document in both lists is in every overlap from depth m = max(its rank,
its ideal rank) on, so the sum is ``sum_d F(D) - F(m_d - 1)`` with
``F(i) = sum_{j<=i} p**(j-1) / j`` computed once: one term per retrieved
relevant document, no loop per question or document.
"""
from __future__ import annotations

__all__ = ["COMPAT"]

import numpy as np

from .._judged import Judged
from .base import UNIT, Family, ParamSpec
from .intermediates import groups_by, nret


def _ideal_rank(J: Judged, rows: np.ndarray) -> np.ndarray:
    """Ideal rank of each retrieved relevant row: relevant documents of the question
    with a larger label, plus those of its label ranked above it, plus 1."""
    ql, qq = J.qrels_label, J.qrels_query  # sorted by question, then label descending
    levels = np.unique(np.concatenate([ql, J.label[rows]]))
    code = lambda lab: len(levels) - 1 - np.searchsorted(levels, lab)  # noqa: E731  (descending label: ascending code)
    key = qq * len(levels) + code(ql)
    g, lab = J.grp[rows], J.label[rows]
    q = J.group_query[g]
    start = np.searchsorted(qq, q)
    above = np.searchsorted(key, q * len(levels) + code(lab), side="left") - start
    order = np.lexsort((J.rank[rows], lab, g))
    seg = np.concatenate(([True], (g[order][1:] != g[order][:-1]) | (lab[order][1:] != lab[order][:-1])))
    pos = np.arange(len(order)) - np.maximum.accumulate(np.where(seg, np.arange(len(order)), 0))
    same = np.empty(len(order), dtype=np.int64)
    same[order] = pos
    return above + same + 1


def _compat(J, ms):
    out = [None] * len(ms)
    n = nret(J).astype(np.int64)
    R = np.bincount(J.qrels_query, weights=J.qrels_label > 0, minlength=J.n_queries)[J.group_query].astype(np.int64)
    D = np.maximum(n, R)
    rows = np.flatnonzero(J.label > 0)
    m = np.maximum(J.rank[rows], _ideal_rank(J, rows))
    g = J.grp[rows]
    top = int(D.max()) if len(D) else 0
    for p, idx in groups_by(ms, lambda m_: m_.param("p")).items():
        w = np.power(p, np.arange(top, dtype=np.float64))  # p**(i-1), i = 1..top
        F = np.concatenate(([0.0], np.cumsum(w / np.arange(1, top + 1))))
        score = np.bincount(g, weights=F[D[g]] - F[m - 1], minlength=J.n_groups)
        norm = np.concatenate(([0.0], np.cumsum(w)))[D]
        best = R * F[D] - np.concatenate(([0.0], np.cumsum(F[:-1])))[R]  # sum_{r<=R} F(D) - F(r - 1)
        raw = np.divide(score, norm, out=np.zeros(J.n_groups), where=norm > 0)
        ratio = np.divide(score, best, out=np.zeros(J.n_groups), where=best > 0)
        for i in idx:
            out[i] = np.where(best > 0, ratio, raw) if ms[i].param("normalize") else raw
    return out


COMPAT = Family(
    "Compat", "none",
    {"p": ParamSpec("float", 0.95, "persistence of rank-biased overlap", low=0, high=1),
     "normalize": ParamSpec("bool", True, "divide by the ideal ranking's own RBO")},
    _compat, doc="compatibility: rank-biased overlap with the ideal ranking (Clarke et al.)", value_range=UNIT)
