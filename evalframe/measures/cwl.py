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
count.  Within the ranking each weight is a closed form in the rank times a
product of factors that differ from 1 only at documents with a gain (INST's
too: its C(i) telescopes between them), a running sum of their logs over those
rows alone; nothing loops per question or per document.
"""
from __future__ import annotations

import numpy as np

from .._judged import Judged, NOT_JUDGED, group_starts
from .._threads import cached_property
from .._validation import error
from .base import Family, ParamSpec
from .intermediates import groups_by, nret, running_sum, sums_at_cutoffs

#: cwl_eval's depth (``max_n``): rankings are cut, and padded, to this many ranks.
CWL_DEPTH = 1000

_MIN_REL = ParamSpec("int", 0, "label scaled to gain 0 (labels below gain 0)")
_MAX_REL = ParamSpec("int", None, "label scaled to gain 1 (labels above gain 1); required",
                     none_ok=True, required=True)
_T = ParamSpec("float", 1.0, "total gain the reader wants", low=0, low_open=True, high=1e12)


def _check_range(family: str):
    def validate(params: dict) -> None:
        if params["max_rel"] is not None and params["max_rel"] <= params["min_rel"]:
            raise error(family, "max_rel", f"an int > min_rel ({params['min_rel']})", params["max_rel"])
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


class _Prefix:
    """Per row within the depth: the gain and rank, the gain above it (G_{i-1}) and
    log prod_{j<i} h(j) of a factor h that differs from 1 only at rows with a gain;
    per group: the rows within the depth (m), their total gain and log prod h.  The
    running sums run over the rows with a gain only, within each group (each is
    computed when first read)."""

    def __init__(self, J: Judged, m, log_h=None):
        top = _top(J)
        self.g = g = _gains(J, m)
        self.rank = J.rank[top].astype(np.float64)
        self.grp, self.n = J.grp[top], J.n_groups
        self.m = np.minimum(nret(J), CWL_DEPTH).astype(np.float64)
        self._J, self._measure, self._log_h = J, m, log_h

    @cached_property
    def _sparse(self):
        g = self.g
        nz = np.flatnonzero(g > 0)
        gz = self.grp[nz]
        starts = group_starts(gz, self.n)
        m = self._measure
        G_in = self._J.cached(("cwl_cum", m.param("min_rel"), m.param("max_rel")),
                              lambda: running_sum(g[nz], gz, starts))
        if self._log_h is None:
            H_in = np.zeros(len(nz))
        else:
            with np.errstate(divide="ignore"):  # h = 0: log -inf, the weights after it 0
                H_in = running_sum(self._log_h(self.rank[nz], g[nz], G_in - g[nz]), gz, starts)
        return nz, gz, G_in, H_in

    @cached_property
    def _above(self):
        """For each row, the last row with a gain above it in its group (-1: none)."""
        nz, gz, _, _ = self._sparse
        above = np.cumsum(self.g > 0) - (self.g > 0) - 1  # gain rows strictly before, less one
        ok = above >= 0
        ok[ok] = gz[above[ok]] == self.grp[ok]
        return np.where(ok, above, -1)

    def _at(self, values: np.ndarray, where: np.ndarray) -> np.ndarray:
        return np.where(where >= 0, values[np.maximum(where, 0)] if len(values) else 0.0, 0.0)

    @property
    def G_above(self):
        return self._at(self._sparse[2], self._above)

    @property
    def H_above(self):
        return self._at(self._sparse[3], self._above)

    @cached_property
    def _last(self):
        _, gz, _, _ = self._sparse
        last = np.searchsorted(gz, np.arange(self.n), side="right") - 1
        ok = last >= 0
        ok[ok] = gz[last[ok]] == np.flatnonzero(ok)
        return np.where(ok, last, -1)

    @property
    def G_total(self):
        return self._at(self._sparse[2], self._last)

    @property
    def H_total(self):
        return self._at(self._sparse[3], self._last)

    def value(self, weight: np.ndarray, next_weight: np.ndarray, tail: np.ndarray) -> np.ndarray:
        """sum_i W(i) g(i), from the weights prod_{j<i} C(j) of the rows, that of rank m+1
        and the padded ranks' weights relative to it."""
        with np.errstate(invalid="ignore"):
            pad = np.where((self.m < CWL_DEPTH) & (next_weight > 0), next_weight * tail, 0.0)
        norm = np.bincount(self.grp, weights=weight, minlength=self.n) + pad
        return np.bincount(self.grp, weights=weight * self.g, minlength=self.n) / norm


def _insq_weight(rank, T):
    """prod_{j<i} ((j + 2T - 1) / (j + 2T))**2 = (2T / (i - 1 + 2T))**2 (it telescopes)."""
    return (2.0 * T / (rank - 1.0 + 2.0 * T)) ** 2


def _tail_insq(m, a):
    """sum_{i=m+1..N} ((m + a) / (i - 1 + a))**2: C(i) = ((i + a - 1) / (i + a))**2 telescopes."""
    from scipy.special import polygamma  # here, not at import: scipy.special takes ~0.5 s to load

    x = m + a
    return x ** 2 * (polygamma(1, x) - polygamma(1, CWL_DEPTH + a))


def _tail_steps(m, last):
    """Padded ranks i = m+1.. reached while C = 1 up to rank ``last`` (C(i) = 0 from there)."""
    return 1.0 + np.maximum(0.0, np.minimum(float(CWL_DEPTH), last) - m - 1.0)


def _log_keep(rank, g, G_above):
    return np.log1p(-g)


def _inst(J, ms):
    """C(i) = ((f_{i-1} - g_i) / f_i)**2 with f_i = i + 2T - G_i, so
    prod_{j<i} C(j) = (2T / f_{i-1})**2 prod_{j<i} (1 - g_j / f_{j-1})**2."""
    out = []
    for m in ms:
        T = m.param("T")
        P = _Prefix(J, m, lambda rank, g, G_above: 2.0 * np.log(np.abs(1.0 - g / (rank - 1.0 + 2.0 * T - G_above))))
        w = (2.0 * T / (P.rank - 1.0 + 2.0 * T - P.G_above)) ** 2 * np.exp(P.H_above)
        w_next = (2.0 * T / (P.m + 2.0 * T - P.G_total)) ** 2 * np.exp(P.H_total)
        out.append(P.value(w, w_next, _tail_insq(P.m, 2.0 * T - P.G_total)))
    return out


def _insq(J, ms):
    out = []
    for m in ms:
        T = m.param("T")
        P = _Prefix(J, m)
        out.append(P.value(_insq_weight(P.rank, T), _insq_weight(P.m + 1.0, T), _tail_insq(P.m, 2.0 * T)))
    return out


def _bpm(J, ms):
    """C(i) = 1 while G_i < T and i < k: the weight of rank i is 1 iff G_{i-1} < T and i <= k."""
    out = []
    for m in ms:
        T, K = m.param("T"), float(m.k)
        P = _Prefix(J, m)
        w = ((P.G_above < T) & (P.rank <= K)).astype(np.float64)
        w_next = ((P.G_total < T) & (P.m + 1.0 <= K)).astype(np.float64)
        out.append(P.value(w, w_next, _tail_steps(P.m, K)))
    return out


def _nerr_to_k(J, ms, by_rank: bool):
    """NERR8 (C(i) = 1 - g(i)) and NERR9 (``by_rank``: times i / (i + 1), so the
    product gains a factor 1 / i and the padded ranks' weights sum to (m+1) sum 1/i),
    C(i) = 0 from rank k."""
    out = []
    for m in ms:
        k = float(m.k)
        P = _Prefix(J, m, _log_keep)
        w = np.where(P.rank <= k, np.exp(P.H_above) / (P.rank if by_rank else 1.0), 0.0)
        w_next = np.where(P.m + 1.0 <= k, np.exp(P.H_total) / (P.m + 1.0 if by_rank else 1.0), 0.0)
        if by_rank:
            from scipy.special import digamma  # here, not at import (see _tail_insq)

            last = np.maximum(np.minimum(float(CWL_DEPTH), k), P.m + 1.0)
            tail = (P.m + 1.0) * (digamma(last + 1.0) - digamma(P.m + 1.0))
        else:
            tail = _tail_steps(P.m, k)
        out.append(P.value(w, w_next, tail))
    return out


def _nerr8(J, ms):
    return _nerr_to_k(J, ms, by_rank=False)


def _nerr9(J, ms):
    return _nerr_to_k(J, ms, by_rank=True)


def _nerr10(J, ms):
    out = []
    for m in ms:
        p = m.param("p")
        P = _Prefix(J, m, _log_keep)
        w = np.power(p, P.rank - 1.0) * np.exp(P.H_above)
        w_next = np.power(p, P.m) * np.exp(P.H_total)
        tail = CWL_DEPTH - P.m if p == 1.0 else (1.0 - np.power(p, CWL_DEPTH - P.m)) / (1.0 - p)
        out.append(P.value(w, w_next, tail))
    return out


def _nerr11(J, ms):
    out = []
    for m in ms:
        T = m.param("T")
        P = _Prefix(J, m, _log_keep)
        w = _insq_weight(P.rank, T) * np.exp(P.H_above)
        w_next = _insq_weight(P.m + 1.0, T) * np.exp(P.H_total)
        out.append(P.value(w, w_next, _tail_insq(P.m, 2.0 * T)))
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
