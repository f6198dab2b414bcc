"""trec_eval's other measures, as evalframe measure families.

Importing :mod:`evalframe.measures` registers these families (that module
imports this one at its end).  Every family follows the conventions written in
:mod:`evalframe.measures`; where trec_eval (version 10) defines a measure in a
particular way, the family follows trec_eval and says so below.

Families (evalframe name -- meaning -- trec_eval name):

- ``IPrec(recall=0.2)`` -- interpolated precision at recall 0.2 (max precision at
  or after the round(0.2 * R)-th relevant document) -- ``iprec_at_recall_0.20``
- ``IPrecAvg`` -- mean of IPrec over ``recalls`` (default the 11 points 0, 0.1, ... 1)
  -- ``11pt_avg``
- ``GMAP``, ``GMbpref`` -- AP, bpref per question, geometric mean over questions
  (each value floored at 1e-5) -- ``gm_map``, ``gm_bpref``
- ``infAP`` -- inferred AP (Yilmaz & Aslam, CIKM 2006) -- ``infAP``
- ``Rprec(mult=0.2)`` -- precision at rank int(0.2 * R + 0.9) -- ``Rprec_mult_0.20``
- ``Utility(weights=(1.0, -1.0, 0.0, 0.0))`` -- w1 relevant retrieved + w2 non-relevant
  retrieved + w3 relevant missed + w4 non-relevant missed (``docs``: collection
  size, trec_eval's ``-N``) -- ``utility``
- ``binG``, ``G`` -- trec_eval's binary and graded gain measures -- ``binG``, ``G``
- ``nDCG(gains=((1, 3.0), (2, 9.0)))`` -- nDCG with a gain per label -- ``ndcg.1=3,2=9``
- ``nDCGrel``, ``RnDCG`` -- nDCG averaged over the relevant documents / at the
  R-levels -- ``ndcg_rel``, ``Rndcg``
- ``RelP@k`` -- relevant in top k / min(k, R) -- ``relative_P_k``
- ``SetP``, ``SetR``, ``SetRelP``, ``SetAP``, ``SetF(beta=1.0)`` -- precision, recall,
  relative precision, P x R and F-beta of the whole retrieved set -- ``set_P``,
  ``set_recall``, ``set_relative_P``, ``set_map``, ``set_F`` (trec_eval's parameter
  x is beta ** 2)
- ``NumNonrelJudgedRet`` -- judged non-relevant retrieved (summed) --
  ``num_nonrel_judged_ret``
- ``RBP(p=0.9)``, ``RBP(residual=True)`` -- rank-biased precision and its residual
  (the most unjudged documents could add) -- ``rbp``, ``rbp_resid``
- ``Unjudged@k`` -- unjudged documents in top k / k -- ``unj_k``

trec_eval's ``runid``, ``num_q`` and ``relstring`` are not per-question numbers;
``evalframe trec-eval`` prints them (:mod:`evalframe.trec_eval`).

Gains
    ``G``, ``nDCGrel``, ``RnDCG`` and ``RBP`` default to trec_eval's linear gain
    (gain = label; they are trec_eval's measures), ``nDCG`` keeps the spec's
    exponential default.  ``gains=((1, 3.0), (2, 9.0), (4, 4.5))`` sets the gain of individual
    labels (trec_eval's ``ndcg.1=3,2=9,4=4.5``); other labels keep the ``gain``
    kind's.  The ideal ranking orders every judged document (label >= 0) by gain,
    keeping the positive gains.  (trec_eval sorts gain levels with a comparator
    that truncates the difference of two gains to an integer, so two gains that
    differ by less than 1 may come out in either order there; evalframe's ideal
    ranking is always ordered by gain.)
Unjudged and negative labels
    As in trec_eval: a retrieved document the golden set does not judge is
    "not in the pool"; one with a negative label is "in the pool but unjudged"
    (infAP skips the first and counts the second; both are unjudged for
    ``Unjudged@k`` and ``RBP(residual=True)``).
"""
from __future__ import annotations

__all__ = ["parse_gains", "register_trec_name"]

import dataclasses
import math
import re
from typing import Callable

import numpy as np

from . import measures as _m
from .measures import (FAMILIES, Measure, _count_at, _count_in_group, _cumrel, _disc, _group_first_row, _isrel,
                       _memo, _nret, _nrelret, _R, _register, _safe_div, _view)
from .ranking import NOT_JUDGED, Judged

MIN_GEO_MEAN = 1e-5  # trec_eval's floor for geometric means
_INFAP_EPSILON = 1e-5
_ELEVEN = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)


def register_trec_name(pattern: str, convert: "str | Callable[[re.Match], str]") -> None:
    """Teach :func:`~evalframe.measures.parse_measure` one more trec_eval name.

    ``pattern`` must match the whole name; ``convert`` gives the evalframe name
    (a string, or a function of the match).
    """
    conv = convert if callable(convert) else (lambda _m_, s=convert: s)
    _m._TREC_PATTERNS.append((re.compile(pattern), conv))


def parse_gains(gains) -> dict[int, float]:
    """Label -> gain map from ``((1, 3.0), (2, 9.0))`` (the canonical form, a
    tuple of (label, gain) pairs) or trec_eval's text ``'1=3,2=9'``."""
    if gains is None or gains == "" or gains == ():
        return {}
    try:
        if isinstance(gains, str):
            pairs = [part.split("=") for part in gains.split(",")]
        else:
            pairs = list(gains)
        out: dict[int, float] = {}
        for pair in pairs:
            key, val = pair
            if isinstance(key, (bool, float)) or isinstance(val, bool):
                raise ValueError
            out[int(key)] = float(val)
        return out
    except (TypeError, ValueError):
        raise ValueError("gains must be (label, gain) pairs, e.g. gains=((1, 3.0), (2, 9.0)) "
                         f"(trec_eval: '1=3,2=9'), got {gains!r}") from None


def _extend(name: str, extra: dict, fn) -> None:
    """Give a core family extra parameters: measures whose extras are all at
    their defaults still go to the family's own function, unchanged."""
    fam = FAMILIES[name]
    base = fam.fn
    params = dict(fam.params)
    params.update(extra)

    def combined(J, ms):
        mine = [i for i, m in enumerate(ms) if any(m.param(k) != v for k, v in extra.items())]
        out: list = [None] * len(ms)
        rest = [i for i in range(len(ms)) if i not in set(mine)]
        if rest:
            for i, v in zip(rest, base(J, [ms[i] for i in rest])):
                out[i] = v
        if mine:
            for i, v in zip(mine, fn(J, [ms[i] for i in mine])):
                out[i] = v
        return out

    FAMILIES[name] = dataclasses.replace(fam, params=params, fn=combined)


# ---------------------------------------------------------------------------
# Shared intermediates (the cached ones are in evalframe.measures)
# ---------------------------------------------------------------------------

def _lround(x: np.ndarray) -> np.ndarray:
    """C's lround (halves away from zero) for x >= 0."""
    fl = np.floor(x)
    return (fl + ((x - fl) >= 0.5)).astype(np.int64)


def _suffix_max(vals: np.ndarray, g: np.ndarray) -> np.ndarray:
    """Max of ``vals[j:]`` within j's group (rows sorted by group; vals in [0, 1])."""
    n = len(vals)
    if n == 0:
        return vals.copy()
    rv, rg = vals[::-1], g[::-1]
    key = rv + 2.0 * (rg.max() - rg)  # later (reversed) groups dominate earlier ones
    acc = np.maximum.accumulate(key)
    idx = np.maximum.accumulate(np.where(key >= acc, np.arange(n), 0))
    return rv[idx][::-1]


def _iprec_parts(V: Judged, rel: int):
    """Interpolated precision at each relevant retrieved row, where each group's
    relevant rows start, and how many there are."""
    def make():
        rows = np.flatnonzero(_isrel(V, rel))
        g = V.grp[rows]
        smax = _suffix_max(_cumrel(V, rel)[rows] / V.rank[rows], g)
        start = np.searchsorted(g, np.arange(V.n_groups))
        return smax, start, _nrelret(V, rel)
    return _memo(V, ("iprec", rel), make)


def _iprec_at(parts, R: np.ndarray, recall: float) -> np.ndarray:
    smax, start, nrr = parts
    c = _lround(float(recall) * R)  # trec_eval 10 rounds (9 added 0.9 and truncated)
    ok = (c <= nrr) & (nrr > 0)
    pos = np.where(ok, start + np.maximum(c, 1) - 1, 0)
    return np.where(ok, smax[pos] if len(smax) else 0.0, 0.0)


def _groups_by(ms, key):
    out: dict = {}
    for i, m in enumerate(ms):
        out.setdefault(key(m), []).append(i)
    return out


# ---------------------------------------------------------------------------
# Interpolated precision
# ---------------------------------------------------------------------------

_COMMON = {"rel": None, "judged_only": False}  # rel=None: evaluate()'s rel (see measures._COMMON)


def _check_fraction(family, name, v):
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not (v >= 0) or math.isinf(v):
        raise ValueError(f"{family}: {name} must be a number >= 0, got {v!r}")


@_register("IPrec", "none", {"recall": 0.0, **_COMMON}, aliases=("iprec_at_recall",),
           doc="interpolated precision at a recall level")
def _iprec(J, ms):
    out = [None] * len(ms)
    for (jo, rel), idx in _groups_by(ms, lambda m: (m.param("judged_only"), m.param("rel"))).items():
        V = _view(J, ms[idx[0]])
        parts = _iprec_parts(V, rel)
        R = _R(V, rel)
        for i in idx:
            _check_fraction("IPrec", "recall", ms[i].param("recall"))
            out[i] = _iprec_at(parts, R, ms[i].param("recall"))
    return out


@_register("IPrecAvg", "none", {"recalls": _ELEVEN, **_COMMON}, aliases=("11pt_avg", "ElevenPtAvg"),
           doc="mean interpolated precision over recall levels (11-point average)")
def _iprec_avg(J, ms):
    out = []
    for m in ms:
        recalls = m.param("recalls")
        if not isinstance(recalls, tuple) or not recalls:
            raise ValueError(f"IPrecAvg: recalls must be a non-empty tuple of numbers, got {recalls!r}")
        for r in recalls:
            _check_fraction("IPrecAvg", "recalls", r)
        V = _view(J, m)
        parts = _iprec_parts(V, m.param("rel"))
        R = _R(V, m.param("rel"))
        out.append(sum(_iprec_at(parts, R, r) for r in recalls) / len(recalls))
    return out


# ---------------------------------------------------------------------------
# AP / bpref variants
# ---------------------------------------------------------------------------

@_register("GMAP", "none", _COMMON, aggregation="gmean", aliases=("gm_map",),
           doc="AP per question; geometric mean over questions (floor 1e-5)")
def _gmap(J, ms):
    return FAMILIES["AP"].fn(J, [Measure("AP", None, m.params) for m in ms])


@_register("GMbpref", "none", {"rel": None}, aggregation="gmean", aliases=("gm_bpref",),
           doc="bpref per question; geometric mean over questions (floor 1e-5)")
def _gmbpref(J, ms):
    return FAMILIES["bpref"].fn(J, [Measure("bpref", None, m.params) for m in ms])


@_register("infAP", "none", _COMMON, aliases=("InfAP",), doc="inferred AP (sampled judgments)")
def _infap(J, ms):
    out = []
    for m in ms:
        V = _view(J, m)
        rel = m.param("rel")
        lab = V.label
        rows = np.flatnonzero(_isrel(V, rel))  # only relevant documents contribute
        nonrel = (lab >= 0) & (lab < rel)
        pool_unj = (lab < 0) & (lab != NOT_JUDGED)
        rel_before = (_cumrel(V, rel)[rows] - 1).astype(np.float64)
        non_before = _count_in_group(V, nonrel)[rows]
        unj_before = _count_in_group(V, pool_unj)[rows]
        j = (V.rank[rows] - 1).astype(np.float64)
        jj = np.maximum(j, 1.0)
        later = (1.0 / (j + 1.0) + (j / (j + 1.0)) * ((rel_before + non_before + unj_before) / jj)
                 * ((rel_before + _INFAP_EPSILON) / (rel_before + non_before + 2 * _INFAP_EPSILON)))
        contrib = np.where(j == 0, 1.0, later)
        total = np.bincount(V.grp[rows], weights=contrib, minlength=V.n_groups)
        out.append(_safe_div(total, _R(V, rel)))
    return out


# ---------------------------------------------------------------------------
# Rprec at multiples of R
# ---------------------------------------------------------------------------

def _rprec_mult(J, ms):
    out = []
    for m in ms:
        mult = m.param("mult")
        _check_fraction("Rprec", "mult", mult)
        V = _view(J, m)
        rel = m.param("rel")
        c = np.floor(float(mult) * _R(V, rel) + 0.9)  # trec_eval: (long) (mult * R + 0.9)
        out.append(_safe_div(_count_at(V, _cumrel(V, rel), c), c))
    return out


_extend("Rprec", {"mult": 1.0}, _rprec_mult)


# ---------------------------------------------------------------------------
# Set measures and counts
# ---------------------------------------------------------------------------

def _set_counts(J, m):
    V = _view(J, m)
    rel = m.param("rel")
    return V, _nret(V).astype(np.float64), _nrelret(V, rel).astype(np.float64), _R(V, rel)


@_register("Utility", "none", {"weights": (1.0, -1.0, 0.0, 0.0), "docs": 0, **_COMMON},
           aliases=("utility",), doc="w1*relret + w2*nonrelret + w3*relnotret + w4*nonrelnotret")
def _utility(J, ms):
    out = []
    for m in ms:
        w = m.param("weights")
        if not isinstance(w, tuple) or len(w) != 4:
            raise ValueError(f"Utility: weights must be a tuple of 4 numbers, got {w!r}")
        _, ret, relret, R = _set_counts(J, m)
        n = float(m.param("docs"))
        out.append(w[0] * relret + w[1] * (ret - relret) + w[2] * (R - relret) + w[3] * (n + relret - ret - R))
    return out


@_register("SetP", "none", _COMMON, aliases=("set_P",), doc="relevant retrieved / retrieved")
def _setp(J, ms):
    return [_safe_div(rr, ret) for _, ret, rr, _R in (_set_counts(J, m) for m in ms)]


@_register("SetR", "none", _COMMON, aliases=("set_recall", "SetRecall"), doc="relevant retrieved / relevant")
def _setr(J, ms):
    return [_safe_div(rr, R) for _, ret, rr, R in (_set_counts(J, m) for m in ms)]


@_register("SetRelP", "none", _COMMON, aliases=("set_relative_P",),
           doc="relevant retrieved / min(retrieved, relevant)")
def _setrelp(J, ms):
    return [_safe_div(rr, np.minimum(ret, R)) for _, ret, rr, R in (_set_counts(J, m) for m in ms)]


@_register("SetAP", "none", _COMMON, aliases=("set_map",), doc="SetP x SetR")
def _setap(J, ms):
    return [_safe_div(rr * rr, ret * R) for _, ret, rr, R in (_set_counts(J, m) for m in ms)]


@_register("SetF", "none", {"beta": 1.0, **_COMMON}, aliases=("set_F",),
           doc="F-measure of the retrieved set: (1 + beta^2) P R / (beta^2 P + R)")
def _setf(J, ms):
    out = []
    for m in ms:
        beta = m.param("beta")
        _check_fraction("SetF", "beta", beta)
        _, ret, rr, R = _set_counts(J, m)
        x = float(beta) ** 2
        P, Rc = _safe_div(rr, ret), _safe_div(rr, R)
        out.append(np.where(rr > 0, _safe_div((x + 1.0) * P * Rc, x * P + Rc), 0.0))
    return out


@_register("NumNonrelJudgedRet", "none", _COMMON, aggregation="sum", aliases=("num_nonrel_judged_ret",),
           doc="judged non-relevant documents retrieved")
def _num_nonrel_judged_ret(J, ms):
    out = []
    for m in ms:
        V = _view(J, m)
        judged = np.bincount(V.grp[V.label >= 0], minlength=V.n_groups)
        out.append((judged - _nrelret(V, m.param("rel"))).astype(np.float64) if m.param("rel") >= 0
                   else V.per_group((V.label >= 0) & (V.label < m.param("rel"))))
    return out


@_register("RelP", "required", _COMMON, aliases=("relative_P", "RelativeP"),
           doc="relevant in top k / min(k, relevant)")
def _relp(J, ms):
    out = []
    for m in ms:
        V = _view(J, m)
        rel = m.param("rel")
        hits = _count_at(V, _cumrel(V, rel), m.k)
        out.append(_safe_div(hits, np.minimum(float(m.k), _R(V, rel))))
    return out


@_register("Unjudged", "required", {}, aliases=("unj",), doc="unjudged documents in top k / k")
def _unjudged(J, ms):
    running = _memo(J, "unj", lambda: _count_in_group(J, J.label < 0))
    return [_count_at(J, running, m.k) / m.k for m in ms]


@_register("binG", "none", _COMMON, aliases=("BinG",), doc="binary gain discounted by non-relevant above")
def _bing(J, ms):
    out = []
    for m in ms:
        V = _view(J, m)
        rel = m.param("rel")
        rows = np.flatnonzero(_isrel(V, rel))
        contrib = 1.0 / np.log2(2.0 + V.rank[rows] - _cumrel(V, rel)[rows])
        total = np.bincount(V.grp[rows], weights=contrib, minlength=V.n_groups)
        out.append(_safe_div(total, _R(V, rel)))
    return out


# ---------------------------------------------------------------------------
# Gain-based measures
# ---------------------------------------------------------------------------

def _trec_label(label: np.ndarray) -> np.ndarray:
    """trec_eval's relevance values: -1 not in the pool, -2 in the pool but unjudged."""
    return np.where(label == NOT_JUDGED, -1, np.where(label < 0, -2, label))


def _gain_values(label: np.ndarray, kind: str, gmap: dict) -> np.ndarray:
    """Gain of each (evalframe) label: the kind's gain for labels >= 0, 0 below,
    overridden by ``gmap`` (keys are trec_eval relevance values)."""
    g = _m._gain(label, kind)
    if gmap:
        tl = _trec_label(label)
        for key, val in gmap.items():
            g = np.where(tl == key, val, g)
    return g


def _check_gain_params(fam, m):
    kind = m.param("gain")
    if kind not in ("exp", "linear"):
        raise ValueError(f"{fam}: gain must be 'exp' (2**label - 1) or 'linear' (label), got {kind!r}")
    return kind, parse_gains(m.param("gains"))


class _Ideal:
    """Each question's ideal ranking: judged documents by gain, positive gains only."""

    def __init__(self, V: Judged, kind: str, gmap: dict):
        ql = V.qrels_label
        g = np.where(ql >= 0, _gain_values(ql, kind, gmap), 0.0)
        order = np.lexsort((-g, V.qrels_query))
        g = g[order]
        q = V.qrels_query[order]
        start = np.searchsorted(q, np.arange(V.n_queries))
        pos = g > 0
        self.npos_q = np.bincount(q, weights=pos, minlength=V.n_queries).astype(np.int64)
        irank = np.arange(len(q)) - start[q] + 1
        self.gain = np.where(pos, g, 0.0)
        self.cum_dcg = _cumsum_by(self.gain / np.log2(irank + 1.0), start[q])
        self.cum_cost = _cumsum_by(np.where(pos, np.maximum(g, 1.0), 0.0), start[q])  # for G
        self.start_q = start
        self.total_gain_q = np.bincount(q, weights=self.gain, minlength=V.n_queries)
        self.q = q
        self.irank = irank
        self.gq = V.group_query

    def npos(self) -> np.ndarray:
        return self.npos_q[self.gq]

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


class _GainRows:
    """Per (gain kind, gains): each row's gain, its DCG contribution, the running
    DCG within the group, each group's DCG, and the questions' ideal rankings."""

    def __init__(self, V: Judged, kind: str, gmap: dict):
        self.gain = _gain_values(V.label, kind, gmap)
        nz = np.flatnonzero(self.gain != 0)
        self.nz = nz
        contrib = self.gain[nz] * _disc(V)[nz]
        self.total = np.bincount(V.grp[nz], weights=contrib, minlength=V.n_groups)
        # running DCG at the rows with a non-zero gain (it only changes there)
        c = np.cumsum(contrib)
        g = V.grp[nz]
        start = np.searchsorted(g, np.arange(V.n_groups))
        before = np.where(start > 0, c[np.maximum(start - 1, 0)] if len(c) else 0.0, 0.0)
        self.running_nz = c - before[g] if len(c) else c
        cg = np.cumsum(self.gain[nz])
        before = np.where(start > 0, cg[np.maximum(start - 1, 0)] if len(cg) else 0.0, 0.0)
        self.running_gain_nz = cg - before[g] if len(cg) else cg
        self.ideal = _Ideal(V, kind, gmap)

    def running_at(self, V: Judged, rows: np.ndarray) -> np.ndarray:
        """Running DCG (through the row) at the given rows."""
        k = np.searchsorted(self.nz, rows, side="right") - 1  # last non-zero row <= row
        ok = k >= 0
        kk = np.maximum(k, 0)
        same = ok & (V.grp[self.nz[kk]] == V.grp[rows]) if len(self.nz) else np.zeros(len(rows), bool)
        return np.where(same, self.running_nz[kk] if len(self.nz) else 0.0, 0.0)


def _gain_rows(V: Judged, kind: str, gmap: dict) -> _GainRows:
    return _memo(V, ("gains", kind, tuple(sorted(gmap.items()))), lambda: _GainRows(V, kind, gmap))


def _cumsum_by(x: np.ndarray, start_of_row: np.ndarray) -> np.ndarray:
    c = np.cumsum(x, dtype=np.float64)
    if len(c) == 0:
        return c
    return c - np.concatenate(([0.0], c))[start_of_row]


def _ndcg_gains(J, ms):
    out = []
    for m in ms:
        kind, gmap = _check_gain_params("nDCG", m)
        V = _view(J, m)
        gr = _gain_rows(V, kind, gmap)
        if m.k is not None:
            keep = V.rank[gr.nz] <= m.k
            nz = gr.nz[keep]
            dcg = np.bincount(V.grp[nz], weights=gr.gain[nz] * _disc(V)[nz], minlength=V.n_groups)
            t = np.full(V.n_groups, m.k, dtype=np.int64)
        else:
            dcg = gr.total
            t = np.full(V.n_groups, np.iinfo(np.int64).max // 4, dtype=np.int64)
        out.append(_safe_div(dcg, gr.ideal.dcg_at(V.group_query, t)))
    return out


_extend("nDCG", {"gains": None}, _ndcg_gains)

_GAIN_PARAMS = {"gain": "linear", "gains": None, "judged_only": False}


@_register("G", "none", _GAIN_PARAMS, doc="trec_eval's G: gain over a cost-adjusted log discount")
def _G(J, ms):
    out = []
    for m in ms:
        kind, gmap = _check_gain_params("G", m)
        V = _view(J, m)
        gr = _gain_rows(V, kind, gmap)
        nz, ideal = gr.nz, gr.ideal
        g_rows = V.grp[nz]
        cost = ideal.cost_at(V.group_query[g_rows], V.rank[nz])
        contrib = gr.gain[nz] / np.log2(2.0 + cost - gr.running_gain_nz)
        total = np.bincount(g_rows, weights=contrib, minlength=V.n_groups)
        out.append(_safe_div(total, ideal.total_gain_q[V.group_query]))
    return out


@_register("nDCGrel", "none", _GAIN_PARAMS, aliases=("ndcg_rel",),
           doc="nDCG averaged over the ranks of the relevant documents")
def _ndcg_rel(J, ms):
    out = []
    for m in ms:
        kind, gmap = _check_gain_params("nDCGrel", m)
        V = _view(J, m)
        gr = _gain_rows(V, kind, gmap)
        ideal = gr.ideal
        pos = gr.gain[gr.nz] > 0
        rows = gr.nz[pos]
        g_rows = V.grp[rows]
        at = _safe_div(gr.running_nz[pos], ideal.dcg_at(V.group_query[g_rows], V.rank[rows]))
        s = np.bincount(g_rows, weights=at, minlength=V.n_groups)
        nrr = np.bincount(g_rows, minlength=V.n_groups)
        npos = ideal.npos().astype(np.float64)
        big = np.full(V.n_groups, np.iinfo(np.int64).max // 4, dtype=np.int64)
        s = s + (npos - nrr) * _safe_div(gr.total, ideal.dcg_at(V.group_query, big))
        out.append(np.where(s > 0, _safe_div(s, npos), 0.0))
    return out


@_register("RnDCG", "none", {"rel": None, **_GAIN_PARAMS}, aliases=("Rndcg",),
           doc="nDCG averaged at the R-levels (where the ideal gain changes)")
def _rndcg(J, ms):
    out = []
    for m in ms:
        kind, gmap = _check_gain_params("RnDCG", m)
        V = _view(J, m)
        gr = _gain_rows(V, kind, gmap)
        ideal = gr.ideal
        nret = _nret(V).astype(np.int64)
        first = _group_first_row(V)
        # R-level boundaries of each question: positions t where the ideal gain changes
        nxt = np.append(ideal.gain[1:], 0.0)
        same_q_next = np.append(ideal.q[1:] == ideal.q[:-1], False)
        nxt = np.where(same_q_next, nxt, 0.0)
        bmask = (ideal.gain > 0) & (nxt != ideal.gain)
        b_q, b_t = ideal.q[bmask], ideal.irank[bmask]
        nb_q = np.bincount(b_q, minlength=V.n_queries)
        b_start_q = np.concatenate(([0], np.cumsum(nb_q)[:-1]))
        nb_g = nb_q[V.group_query]
        gidx = np.repeat(np.arange(V.n_groups), nb_g)
        offs = np.arange(len(gidx)) - np.repeat(np.cumsum(nb_g) - nb_g, nb_g)
        bi = b_start_q[V.group_query][gidx] + offs
        t = b_t[bi]
        upto = np.minimum(t, nret[gidx])
        dcg_b = np.where(upto >= 1, gr.running_at(V, np.maximum(first[gidx] + upto - 1, 0)), 0.0)
        s = np.bincount(gidx, weights=_safe_div(dcg_b, ideal.dcg_at(V.group_query[gidx], t)),
                        minlength=V.n_groups)
        cnt = nb_g.astype(np.float64)
        npos = ideal.npos()
        tail = nret > npos + 1
        dcg_tot = gr.total
        big = np.full(V.n_groups, np.iinfo(np.int64).max // 4, dtype=np.int64)
        idcg_tot = ideal.dcg_at(V.group_query, big)
        s = s + np.where(tail & (idcg_tot > 0), _safe_div(dcg_tot, idcg_tot), 0.0)
        cnt = cnt + (tail & (idcg_tot > 0))
        val = _safe_div(s, cnt)
        out.append(np.where(_R(V, m.param("rel")) > 0, val, 0.0))
    return out


@_register("RBP", "none", {"p": 0.9, "residual": False, **_GAIN_PARAMS},
           doc="rank-biased precision (1-p) sum gain_i p^(i-1); residual=True: its uncertainty")
def _rbp(J, ms):
    out = []
    for m in ms:
        p = m.param("p")
        if isinstance(p, bool) or not isinstance(p, (int, float)) or not (0 <= p <= 1):
            raise ValueError(f"RBP: p must be a number in [0, 1], got {p!r}")
        residual = m.param("residual")
        if not isinstance(residual, bool):
            raise ValueError(f"RBP: residual must be True or False, got {residual!r}")
        kind, gmap = _check_gain_params("RBP", m)
        V = _view(J, m)
        if residual:
            rows = np.flatnonzero(V.label < 0)
            g = V.grp[rows]
            disc = np.power(float(p), (V.rank[rows] - 1).astype(np.float64))
            val = np.power(float(p), _nret(V)) + (1.0 - p) * np.bincount(g, weights=disc, minlength=V.n_groups)
            out.append(np.where(np.bincount(g, minlength=V.n_groups) > 0, val, 0.0))
            continue
        gain = _gain_values(V.label, kind, gmap)
        lo, hi = _rbp_gain_range(V, kind, gmap)
        norm_g = (lo < 0) | (hi > 1)
        listed = V.label >= 0  # trec_eval's gain levels: labels 0..max, and those in gains
        if gmap:
            listed = listed | np.isin(_trec_label(V.label), list(gmap))
        rows = np.flatnonzero(listed)
        g = V.grp[rows]
        gain = gain[rows]
        if norm_g.any():  # trec_eval rescales the question's gain levels to [0, 1]
            gain = np.where(norm_g[g], _safe_div(gain - lo[g], hi[g] - lo[g]), gain)
        disc = np.power(float(p), (V.rank[rows] - 1).astype(np.float64))
        out.append((1.0 - p) * np.bincount(g, weights=gain * disc, minlength=V.n_groups))
    return out


def _rbp_gain_range(V: Judged, kind: str, gmap: dict):
    """Per group: min and max gain over trec_eval's gain levels (labels 0..max
    judged label of the question, and every label given in ``gains``)."""
    ql, qq = V.qrels_label, V.qrels_query  # sorted by question, then label descending
    start = np.searchsorted(qq, np.arange(V.n_queries))
    has = start < len(qq)
    top = np.where(has, ql[np.minimum(start, max(len(ql) - 1, 0))] if len(ql) else -1, -1)
    maxlev = np.where(has & (qq[np.minimum(start, max(len(qq) - 1, 0))] == np.arange(V.n_queries)) & (top >= 0),
                      top, -1).astype(np.int64)
    lo_q = np.zeros(V.n_queries)
    hi_q = np.zeros(V.n_queries)
    for lev in np.unique(maxlev):
        gains = [v for v in gmap.values()]
        for lab in range(0, int(lev) + 1):
            if lab not in gmap:
                gains.append(float(lab) if kind == "linear" else 2.0 ** lab - 1.0)
        sel = maxlev == lev
        lo_q[sel] = min(gains) if gains else 0.0
        hi_q[sel] = max(gains) if gains else 0.0
    return lo_q[V.group_query], hi_q[V.group_query]


# ---------------------------------------------------------------------------
# trec_eval's names
# ---------------------------------------------------------------------------

_NUM = r"(\d*\.?\d+(?:[eE][-+]?\d+)?)"
# (infAP, binG and G are evalframe's names too, with trec_eval's meaning.)
for _pat, _conv in [
    (r"gm_map", "GMAP"),
    (r"gm_bpref", "GMbpref"),
    (r"iprec_at_recall_" + _NUM, lambda mt: f"IPrec(recall={float(mt[1])!r})"),
    (r"Rprec_mult_" + _NUM, lambda mt: f"Rprec(mult={float(mt[1])!r})"),
    (r"utility", "Utility"),
    (r"11pt_avg", "IPrecAvg"),
    (r"ndcg_rel", "nDCGrel"),
    (r"Rndcg", "RnDCG"),
    (r"relative_P_(\d+)", lambda mt: f"RelP@{mt[1]}"),
    (r"set_P", "SetP"),
    (r"set_relative_P", "SetRelP"),
    (r"set_recall", "SetR"),
    (r"set_map", "SetAP"),
    (r"set_F", "SetF"),
    (r"num_nonrel_judged_ret", "NumNonrelJudgedRet"),
    (r"rbp", "RBP"),
    (r"rbp_resid", "RBP(residual=True)"),
    (r"unj_(\d+)", lambda mt: f"Unjudged@{mt[1]}"),
]:
    register_trec_name(_pat, _conv)
