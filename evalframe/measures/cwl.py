"""C/W/L families: SDCG, INST, INSQ, BPM, NERR8-11 (Moffat et al.'s C/W/L
framework, as cwl_eval computes them; Azzopardi, Thomas and Moffat, SIGIR 2019,
"cwl_eval"), with ir_measures' names and parameters.

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
- ``BPM(T=1)@k`` (Zhang et al., SIGIR 2017, static): ``C(i) = 1`` while
  ``sum_{j<=i} g(j) < T`` and ``i < k``, then 0.
- ``NERR8@k``: ``C(i) = 1 - g(i)`` for i < k; ``NERR9@k``: ``i / (i + 1) (1 - g(i))``
  for i < k; ``NERR10(p=0.9)``: ``p (1 - g(i))``; ``NERR11(T=1)``: INSQ's C(i) times
  ``1 - g(i)`` (Azzopardi, Mackenzie and Moffat, ICTIR 2021, "ERR is not C/W/L").

Past the last retrieved document the gains are 0, so the padded ranks' weights
have a closed form per group (m ranks retrieved): INST's, INSQ's and NERR11's
C(i) there is ``((i + a - 1) / (i + a))**2`` with a constant ``a``, whose
product telescopes, summing to ``(m + a)**2 * (trigamma(m + a) - trigamma(1000 +
a))``; NERR10's is geometric, NERR9's harmonic (digamma), BPM's and NERR8's a
count.  Within the ranking the products are running sums of ``log C`` per
group; nothing loops per question or per document.
"""
from __future__ import annotations

__all__ = ["SDCG", "INST", "INSQ", "BPM", "NERR8", "NERR9", "NERR10", "NERR11", "CWL_DEPTH", "scaled_gain"]

import numpy as np
from scipy.special import digamma, polygamma

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


def _expected_gain(J: Judged, m, log_c_of, tail_of) -> np.ndarray:
    """sum_i W(i) g(i) per group for continuation probabilities given as ``log C(i)``
    of the ranked rows (``log_c_of(rank, g, cum)``: arrays over the rows within the
    depth) and ``tail_of(m, G)``: sum over the padded ranks m+1..CWL_DEPTH of
    prod_{m<j<i} C(j) (gains 0 there; G the group's total gain)."""
    top = _top(J)
    g = _gains(J, m)
    grp, rank = J.grp[top], J.rank[top].astype(np.float64)
    starts = np.searchsorted(grp, np.arange(J.n_groups))
    cum = running_sum(g, grp, starts)
    with np.errstate(divide="ignore"):  # C(i) = 0: log -inf, and the weights after it 0
        log_c = log_c_of(rank, g, cum)
    log_through = running_sum(log_c, grp, starts)  # log prod_{j<=i} C(j)
    first = np.zeros(len(grp), dtype=bool)
    first[starts[starts < len(grp)]] = True
    weight = np.exp(np.where(first, 0.0, np.roll(log_through, 1)))  # prod_{j<i} C(j)
    m_ret = np.minimum(nret(J), CWL_DEPTH)
    has = m_ret > 0
    # a group's rows within the depth are its first m_ret rows: its last is in ``top`` at
    # the position of its last row in the table
    pos = np.minimum(np.searchsorted(top, np.maximum(group_first_row(J) + m_ret - 1, 0)), max(len(top) - 1, 0))
    P_end = np.where(has, np.exp(log_through[pos]) if len(top) else 1.0, 1.0)
    total = np.where(has, cum[pos] if len(top) else 0.0, 0.0)
    mf = m_ret.astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        tail = np.where((m_ret < CWL_DEPTH) & (P_end > 0), P_end * tail_of(mf, total), 0.0)
    norm = np.bincount(grp, weights=weight, minlength=J.n_groups) + tail
    return np.bincount(grp, weights=weight * g, minlength=J.n_groups) / norm


def _log_insq(rank, T):
    x = rank + 2.0 * T
    return 2.0 * np.log((x - 1.0) / x)


def _tail_insq(m, a):
    """sum_{i=m+1..N} ((m + a) / (i - 1 + a))**2: C(i) = ((i + a - 1) / (i + a))**2 telescopes."""
    x = m + a
    return x ** 2 * (polygamma(1, x) - polygamma(1, CWL_DEPTH + a))


def _tail_steps(m, last):
    """Padded ranks i = m+1.. reached while C = 1 up to rank ``last`` (C(i) = 0 from there)."""
    return 1.0 + np.maximum(0.0, np.minimum(float(CWL_DEPTH), last) - m - 1.0)


def _inst(J, ms):
    out = []
    for m in ms:
        T = m.param("T")
        out.append(_expected_gain(
            J, m, lambda rank, g, cum: 2.0 * np.log(np.abs(rank + 2.0 * T - cum - 1.0) / (rank + 2.0 * T - cum)),
            lambda mm, G: _tail_insq(mm, 2.0 * T - G)))
    return out


def _insq(J, ms):
    out = []
    for m in ms:
        T = m.param("T")
        out.append(_expected_gain(J, m, lambda rank, g, cum: _log_insq(rank, T),
                                  lambda mm, G: _tail_insq(mm, 2.0 * T)))
    return out


def _bpm(J, ms):
    out = []
    for m in ms:
        T, K = m.param("T"), float(m.k)
        out.append(_expected_gain(
            J, m, lambda rank, g, cum: np.where((cum < T) & (rank < K), 0.0, -np.inf),
            lambda mm, G: np.where(G < T, _tail_steps(mm, K), 1.0)))
    return out


def _nerr8(J, ms):
    out = []
    for m in ms:
        k = float(m.k)
        out.append(_expected_gain(J, m, lambda rank, g, cum: np.where(rank < k, np.log1p(-g), -np.inf),
                                  lambda mm, G: _tail_steps(mm, k)))
    return out


def _nerr9(J, ms):
    out = []
    for m in ms:
        k = float(m.k)
        top = lambda mm: np.maximum(np.minimum(float(CWL_DEPTH), k), mm + 1.0)  # noqa: E731
        out.append(_expected_gain(
            J, m, lambda rank, g, cum: np.where(rank < k, np.log(rank / (rank + 1.0)) + np.log1p(-g), -np.inf),
            lambda mm, G: (mm + 1.0) * (digamma(top(mm) + 1.0) - digamma(mm + 1.0))))  # (m+1) sum 1/i
    return out


def _nerr10(J, ms):
    out = []
    for m in ms:
        p = m.param("p")
        geometric = (lambda mm, G: CWL_DEPTH - mm) if p == 1.0 else (
            lambda mm, G: (1.0 - np.power(p, CWL_DEPTH - mm)) / (1.0 - p))
        out.append(_expected_gain(J, m, lambda rank, g, cum: np.log(p) + np.log1p(-g), geometric))
    return out


def _nerr11(J, ms):
    out = []
    for m in ms:
        T = m.param("T")
        out.append(_expected_gain(J, m, lambda rank, g, cum: _log_insq(rank, T) + np.log1p(-g),
                                  lambda mm, G: _tail_insq(mm, 2.0 * T)))
    return out


_PARAMS = {"min_rel": _MIN_REL, "max_rel": _MAX_REL}
_P = ParamSpec("float", 0.9, "persistence: probability of reading on", low=0, high=1)
SDCG = Family("SDCG", "required", _PARAMS, _sdcg, validate=_check_range("SDCG"),
              doc="scaled DCG@k (cwl_eval): DCG@k of the scaled gains / DCG@k of k documents of gain 1")
INST = Family("INST", "none", {"T": _T, **_PARAMS}, _inst, validate=_check_range("INST"),
              doc="INST (C/W/L, cwl_eval): adaptive expected gain per document, T the gain wanted")
INSQ = Family("INSQ", "none", {"T": _T, **_PARAMS}, _insq, validate=_check_range("INSQ"),
              doc="INSQ (C/W/L, cwl_eval): expected gain per document, patience from T")
BPM = Family("BPM", "required", {"T": _T, **_PARAMS}, _bpm, validate=_check_range("BPM"),
             doc="bejewelled player model, static (C/W/L, cwl_eval): read on until gain T or k documents")
NERR8 = Family("NERR8", "required", _PARAMS, _nerr8, validate=_check_range("NERR8"),
               doc="not-but-nearly ERR, eq. 8 (C/W/L, cwl_eval): C(i) = 1 - g(i) to rank k")
NERR9 = Family("NERR9", "required", _PARAMS, _nerr9, validate=_check_range("NERR9"),
               doc="not-but-nearly ERR, eq. 9 (C/W/L, cwl_eval): C(i) = i / (i + 1) (1 - g(i)) to rank k")
NERR10 = Family("NERR10", "none", {"p": _P, **_PARAMS}, _nerr10, validate=_check_range("NERR10"),
                doc="not-but-nearly ERR, eq. 10 (C/W/L, cwl_eval): C(i) = p (1 - g(i))")
NERR11 = Family("NERR11", "none", {"T": _T, **_PARAMS}, _nerr11, validate=_check_range("NERR11"),
                doc="not-but-nearly ERR, eq. 11 (C/W/L, cwl_eval): INSQ's C(i) times (1 - g(i))")
