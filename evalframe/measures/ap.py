"""AP and its relatives: AP, GMAP, infAP, Rprec, IPrec, IPrecAvg.

Where trec_eval (version 10) defines a measure in a particular way, the family
follows trec_eval and says so.
"""
from __future__ import annotations

__all__ = ["AVERAGE_PRECISION", "GM_AP", "INF_AP", "R_PREC", "IPREC", "IPREC_AVG", "average_precision"]

import numpy as np

from .._judged import Judged, NOT_JUDGED, group_starts
from .aggregation import GEO_MEAN
from .base import UNIT, Family, Measure, ParamSpec
from .intermediates import (COMMON, by_view_rel, count_in_group, cumrel, isrel, nonrel, nrelret, relevant, safe_div,
                            sums_at_cutoffs, view)

_INFAP_EPSILON = 1e-5
_ELEVEN = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
_NUM = r"(\d*\.?\d+(?:[eE][-+]?\d+)?)"


def _prec_at_rel(V: Judged, rel: int):
    """Relevant rows, and the precision at each of them (AP's terms)."""
    def make():
        rows = np.flatnonzero(isrel(V, rel))
        return rows, cumrel(V, rel).at(rows) / np.maximum(V.rank[rows], 1)
    return V.cached(("precrel", rel), make)


def average_precision(J: Judged, ms: list[Measure]) -> list[np.ndarray]:
    """AP (at each measure's cutoff) of AP or GMAP measures."""
    out = [None] * len(ms)
    for (_, rel), idx in by_view_rel(ms):
        V = view(J, ms[idx[0]])
        rows, prec = _prec_at_rel(V, rel)
        sums = sums_at_cutoffs(V.grp[rows], V.rank[rows], prec, V.n_groups, [ms[i].k for i in idx])
        for i, s in zip(idx, sums):
            out[i] = safe_div(s, relevant(V, rel))
    return out


def _infap(J, ms):
    out = []
    for m in ms:
        V = view(J, m)
        rel = m.param("rel")
        lab = V.label
        rows = np.flatnonzero(isrel(V, rel))  # only relevant documents contribute
        pool_unj = (lab != NOT_JUDGED) & ~isrel(V, 0)  # in the pool, label < 0
        rel_before = (cumrel(V, rel).at(rows) - 1).astype(np.float64)
        non_before = count_in_group(V, nonrel(V, rel)).at(rows)
        unj_before = count_in_group(V, pool_unj).at(rows)
        j = (V.rank[rows] - 1).astype(np.float64)
        jj = np.maximum(j, 1.0)
        later = (1.0 / (j + 1.0) + (j / (j + 1.0)) * ((rel_before + non_before + unj_before) / jj)
                 * ((rel_before + _INFAP_EPSILON) / (rel_before + non_before + 2 * _INFAP_EPSILON)))
        contrib = np.where(j == 0, 1.0, later)
        total = np.bincount(V.grp[rows], weights=contrib, minlength=V.n_groups)
        out.append(safe_div(total, relevant(V, rel)))
    return out


def _rprec(J, ms):
    out = []
    for m in ms:
        V = view(J, m)
        rel = m.param("rel")
        # trec_eval: (long) (mult * R + 0.9); with mult = 1 this is R itself
        c = np.floor(m.param("mult") * relevant(V, rel) + 0.9)
        out.append(safe_div(cumrel(V, rel).at_rank(c), c))
    return out


# --- interpolated precision --------------------------------------------------

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
        rows = np.flatnonzero(isrel(V, rel))
        g = V.grp[rows]
        smax = _suffix_max(cumrel(V, rel).at(rows) / V.rank[rows], g)
        start = group_starts(g, V.n_groups)
        return smax, start, nrelret(V, rel)
    return V.cached(("iprec", rel), make)


def _iprec_at(parts, R: np.ndarray, recall: float) -> np.ndarray:
    smax, start, nrr = parts
    c = _lround(float(recall) * R)  # trec_eval 10 rounds (9 added 0.9 and truncated)
    ok = (c <= nrr) & (nrr > 0)
    pos = np.where(ok, start + np.maximum(c, 1) - 1, 0)
    return np.where(ok, smax[pos] if len(smax) else 0.0, 0.0)


def _iprec(J, ms):
    out = [None] * len(ms)
    for (_, rel), idx in by_view_rel(ms):
        V = view(J, ms[idx[0]])
        parts = _iprec_parts(V, rel)
        R = relevant(V, rel)
        for i in idx:
            out[i] = _iprec_at(parts, R, ms[i].param("recall"))
    return out


def _iprec_avg(J, ms):
    out = []
    for m in ms:
        recalls = m.param("recalls")
        V = view(J, m)
        parts = _iprec_parts(V, m.param("rel"))
        R = relevant(V, m.param("rel"))
        out.append(sum(_iprec_at(parts, R, r) for r in recalls) / len(recalls))
    return out


AVERAGE_PRECISION = Family(
    "AP", "optional", COMMON, average_precision, aliases=("MAP",),
    trec_names=((r"map_cut_(\d+)", lambda m: f"AP@{m[1]}"), (r"map", "AP")),
    doc="mean of precision at each relevant / relevant", value_range=UNIT)
GM_AP = Family("GMAP", "none", COMMON, average_precision, aggregator=GEO_MEAN, aliases=("gm_map",),
               trec_names=((r"gm_map", "GMAP"),), doc="AP per question; geometric mean over questions (floor 1e-5)", value_range=UNIT)
INF_AP = Family("infAP", "none", COMMON, _infap, aliases=("InfAP",), doc="inferred AP (sampled judgments)", value_range=UNIT)
R_PREC = Family(
    "Rprec", "none",
    {**COMMON, "mult": ParamSpec("float", 1.0, "precision at rank int(mult * R + 0.9)", low=0)},
    _rprec, aliases=("R-prec", "RPrec"),
    trec_names=((r"Rprec_mult_" + _NUM, lambda mt: f"Rprec(mult={float(mt[1])!r})"),),
    doc="precision at rank R (R = relevant), or at int(mult * R + 0.9)", value_range=UNIT)
IPREC = Family(
    "IPrec", "none",
    {"recall": ParamSpec("float", 0.0, "recall level (relevant documents: round(recall * R))", low=0), **COMMON},
    _iprec, aliases=("iprec_at_recall",),
    trec_names=((r"iprec_at_recall_" + _NUM, lambda mt: f"IPrec(recall={float(mt[1])!r})"),),
    doc="interpolated precision at a recall level", value_range=UNIT)
IPREC_AVG = Family(
    "IPrecAvg", "none",
    {"recalls": ParamSpec("floats", _ELEVEN, "recall levels averaged over", low=0), **COMMON},
    _iprec_avg, aliases=("11pt_avg", "ElevenPtAvg"), trec_names=((r"11pt_avg", "IPrecAvg"),),
    doc="mean interpolated precision over recall levels (11-point average)", value_range=UNIT)
