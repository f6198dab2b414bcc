"""C/W/L families: SDCG, INST, INSQ (Moffat et al.'s C/W/L framework, as cwl_eval
computes them; Azzopardi, Thomas and Moffat, SIGIR 2019, "cwl_eval").

A C/W/L measure is a user model: having read rank i, the reader continues to
rank i + 1 with probability ``C(i)``; the weight of rank i is
``W(i) = prod_{j<i} C(j) / sum_n prod_{j<n} C(j)`` and the measure is the
expected gain per document read, ``sum_i W(i) g(i)``.

Gains
    ``min_rel`` and ``max_rel`` scale the labels to [0, 1] as ir_measures does
    before handing them to cwl_eval: ``g = (clip(max(label, 0), min_rel,
    max_rel) - min_rel) / (max_rel - min_rel)``; a document the golden set does
    not judge gains 0 (cwl_eval's "worse case").  ``max_rel`` has no default
    (ir_measures requires it): ``INST(max_rel=3)``.
Depth
    cwl_eval reads every ranking to :data:`CWL_DEPTH` = 1000 ranks: a ranking
    is cut there, and a shorter one is padded with documents of gain 0 whose
    continuation probabilities still count in W's denominator.

The families:

- ``SDCG@k`` (scaled DCG): ``C(i) = log2(i + 1) / log2(i + 2)`` for i < k, 0 from
  k on, so ``SDCG@k = DCG@k / sum_{i<=k} 1 / log2(i + 1)`` with the scaled gains
  (linear DCG, normalised by the DCG of k documents of gain 1).
- ``INSQ(T=1)`` (Moffat, Scholer and Thomas, ADCS 2012):
  ``C(i) = ((i + 2T - 1) / (i + 2T))**2``.
- ``INST(T=1)`` (Moffat, Bailey, Scholer and Thomas, ADCS 2015):
  ``C(i) = ((i + T + T_i - 1) / (i + T + T_i))**2`` with ``T_i = T - sum_{j<=i} g(j)``.

Past the last retrieved document the gains are 0, so INST's and INSQ's C(i)
there is ``((i + a - 1) / (i + a))**2`` with a constant ``a``: the product
telescopes and the padded ranks' weights sum to
``(m + a)**2 * (trigamma(m + a) - trigamma(1000 + a))`` (m ranks retrieved),
computed once per group.  Within the ranking the products are running sums of
``log C`` per group; nothing loops per question or per document.
"""
from __future__ import annotations

__all__ = ["SDCG", "INST", "INSQ", "CWL_DEPTH", "scaled_gain"]

import numpy as np
from scipy.special import polygamma

from ..ranking import NOT_JUDGED, Judged
from .base import Family, ParamSpec, param_error
from .intermediates import group_first_row, groups_by, nret, running_sum, sums_at_cutoffs

#: cwl_eval's depth (``max_n``): rankings are cut, and padded, to this many ranks.
CWL_DEPTH = 1000

_MIN_REL = ParamSpec("int", 0, "label scaled to gain 0 (labels below gain 0)")
_MAX_REL = ParamSpec("int", None, "label scaled to gain 1 (labels above gain 1); required",
                     none_ok=True, required=True)
_T = ParamSpec("float", 1.0, "total gain the reader wants", low=0, low_open=True, high=1e12)


def _check_range(family: str):
    def validate(params: dict) -> None:
        if params["max_rel"] is not None and params["max_rel"] <= params["min_rel"]:
            raise param_error(family, "max_rel", f"an int > min_rel ({params['min_rel']})", params["max_rel"])
    return validate


def scaled_gain(label: np.ndarray, min_rel: int, max_rel: int) -> np.ndarray:
    """Gains in [0, 1] as ir_measures gives them to cwl_eval: negative labels as 0,
    then clipped to [min_rel, max_rel] and scaled; unjudged documents 0."""
    lab = np.clip(np.maximum(label, 0), min_rel, max_rel).astype(np.float64)
    return np.where(label == NOT_JUDGED, 0.0, (lab - min_rel) / float(max_rel - min_rel))


def _top(V: Judged) -> np.ndarray:
    """Rows within cwl_eval's depth."""
    return V.cached(("cwl_top",), lambda: np.flatnonzero(V.rank <= CWL_DEPTH))


def _gains(V: Judged, m) -> np.ndarray:
    lo, hi = m.param("min_rel"), m.param("max_rel")
    return V.cached(("cwl_gain", lo, hi), lambda: scaled_gain(V.label[_top(V)], lo, hi))


def _sdcg(J, ms):
    out = [None] * len(ms)
    top = _top(J)
    disc = 1.0 / np.log2(J.rank[top] + 1.0)
    for (lo, hi), idx in groups_by(ms, lambda m: (m.param("min_rel"), m.param("max_rel"))).items():
        g = _gains(J, ms[idx[0]])
        ks = [min(ms[i].k, CWL_DEPTH) for i in idx]
        dcg = sums_at_cutoffs(J.grp[top], J.rank[top], g * disc, J.n_groups, ks)
        for i, k, d in zip(idx, ks, dcg):
            best = float(np.sum(1.0 / np.log2(np.arange(1, k + 1) + 1.0)))
            out[i] = d / best
    return out


def _padding(P_end: np.ndarray, m: np.ndarray, a: np.ndarray) -> np.ndarray:
    """Sum of the weights prod_{j<i} C(j) of the padded ranks i = m+1..CWL_DEPTH, where
    C(i) = ((i + a - 1) / (i + a))**2 and P_end = prod_{j<=m} C(j)."""
    x = m + a
    tail = x ** 2 * (polygamma(1, x) - polygamma(1, CWL_DEPTH + a))
    return np.where(m < CWL_DEPTH, P_end * tail, 0.0)


def _inst_like(J: Judged, m, adaptive: bool) -> np.ndarray:
    T = m.param("T")
    top = _top(J)
    g = _gains(J, m)
    grp, rank = J.grp[top], J.rank[top].astype(np.float64)
    starts = np.searchsorted(grp, np.arange(J.n_groups))
    cum = running_sum(g, grp, starts) if adaptive else np.zeros(len(g))
    x = rank + 2.0 * T - cum
    with np.errstate(divide="ignore"):  # C(i) = 0 (INST with T < 1/2): log -inf, weights 0 after it
        log_c = 2.0 * np.log(np.abs(x - 1.0) / x)
    log_through = running_sum(log_c, grp, starts)  # log prod_{j<=i} C(j)
    first = np.zeros(len(grp), dtype=bool)
    first[starts[starts < len(grp)]] = True
    weight = np.exp(np.where(first, 0.0, np.roll(log_through, 1)))  # prod_{j<i} C(j)
    m_ret = np.minimum(nret(J), CWL_DEPTH)
    last = np.maximum(group_first_row(J) + m_ret - 1, 0)  # the group's last row within the depth
    has = m_ret > 0
    # ``top`` holds every row of a group up to its m_ret-th, so the group's last top row is
    # at the same position in ``top`` as its last row in the table, less the rows cut before it
    pos = np.searchsorted(top, last)
    pos = np.minimum(pos, max(len(top) - 1, 0))
    P_end = np.where(has, np.exp(log_through[pos]) if len(top) else 1.0, 1.0)
    total = np.where(has, cum[pos] if len(top) else 0.0, 0.0)
    a = 2.0 * T - total
    norm = np.bincount(grp, weights=weight, minlength=J.n_groups) + _padding(P_end, m_ret.astype(np.float64), a)
    return np.bincount(grp, weights=weight * g, minlength=J.n_groups) / norm


def _inst(J, ms):
    return [_inst_like(J, m, adaptive=True) for m in ms]


def _insq(J, ms):
    return [_inst_like(J, m, adaptive=False) for m in ms]


_PARAMS = {"min_rel": _MIN_REL, "max_rel": _MAX_REL}
SDCG = Family("SDCG", "required", _PARAMS, _sdcg, validate=_check_range("SDCG"),
              doc="scaled DCG@k (cwl_eval): DCG@k of the scaled gains / DCG@k of k documents of gain 1")
INST = Family("INST", "none", {"T": _T, **_PARAMS}, _inst, validate=_check_range("INST"),
              doc="INST (C/W/L, cwl_eval): adaptive expected gain per document, T the gain wanted")
INSQ = Family("INSQ", "none", {"T": _T, **_PARAMS}, _insq, validate=_check_range("INSQ"),
              doc="INSQ (C/W/L, cwl_eval): expected gain per document, patience from T")
