"""Cascade-model families: ERR and nERR (Chapelle, Metzler, Zhang and Grinspan,
CIKM 2009, "Expected reciprocal rank for graded relevance").

A reader goes down the ranking and stops at rank i with probability R_i,
``R = (2**label - 1) / 2**max_rel`` (labels below 0 count 0), having not
stopped above it:

    ERR@k = sum_{i <= k} R_i / i * prod_{j < i} (1 - R_j)

``max_rel`` is the largest grade of the scale; its default, 4, is gdeval's
(``$MAX_JUDGMENT``), the implementation behind ir_measures' ``ERR@k``, so
``ERR@20`` means what it means there.  A label above ``max_rel`` (a stop
probability of 1 or more) is an input error.  ``nERR@k`` divides ERR@k by the
ERR@k of the question's ideal ranking (its judged documents by label,
descending), as NTCIR's and ndeval's normalised ERR do; 0 when that is 0.

The product is a running sum of ``log1p(-R)`` within each group (it only
changes at the rows with a positive label), so nothing loops per question.
"""
from __future__ import annotations

__all__ = ["ERR", "NERR"]

import numpy as np

from ..errors import EvalframeInputError, InputProblem
from .._judged import Judged, group_starts
from .base import UNIT, Family, Measure, ParamSpec
from .intermediates import COMMON, groups_by, running_sum, safe_div, sums_at_cutoffs, view

_MAX_REL = ParamSpec("int", 4, "largest grade of the scale: stop probability (2**label - 1) / 2**max_rel",
                     low=1, high=1000)
_PARAMS = {"max_rel": _MAX_REL, "judged_only": COMMON["judged_only"]}


def _stop_probability(label: np.ndarray, max_rel: int, family: str) -> np.ndarray:
    """(2**label - 1) / 2**max_rel for labels >= 0, 0 below; an error above max_rel."""
    if len(label) and label.max() > max_rel:
        bad = np.unique(label[label > max_rel])
        raise EvalframeInputError("golden set (qrels)", [InputProblem(
            f"{family}: {len(bad)} label value(s) above max_rel={max_rel} "
            f"(e.g. {', '.join(map(str, bad[:5].tolist()))}) give a stop probability >= 1",
            f"use {family}(max_rel=N) with N >= the largest label ({int(label.max())})")])
    lab = np.maximum(label, 0).astype(np.float64)
    return (np.exp2(lab) - 1.0) / np.exp2(float(max_rel))


def _err_terms(owner: np.ndarray, n: int, rank: np.ndarray, label: np.ndarray, max_rel: int, family: str):
    """Rows with a positive stop probability and their terms R_i / i * prod_{j<i} (1 - R_j);
    entries sorted by (owner, rank)."""
    rows = np.flatnonzero(label >= 1)
    r = _stop_probability(label[rows], max_rel, family)
    o = owner[rows]
    starts = group_starts(o, n)
    log_keep = np.log1p(-r)
    before = running_sum(log_keep, o, starts) - log_keep  # sum over the positive rows above
    return rows, r / rank[rows] * np.exp(before)


def err_at(V: Judged, max_rel: int, ks, family: str = "ERR") -> list[np.ndarray]:
    """ERR@k of each group of ``V`` for each k in ``ks`` (None: the whole ranking)."""
    def make():
        return _err_terms(V.grp, V.n_groups, V.rank, V.label, max_rel, family)
    rows, terms = V.cached(("err", max_rel), make)
    return sums_at_cutoffs(V.grp[rows], V.rank[rows], terms, V.n_groups, ks)


def ideal_err_at(V: Judged, max_rel: int, ks, family: str = "nERR") -> list[np.ndarray]:
    """ERR@k of each question's ideal ranking (judged documents by label, descending),
    per group of ``V``."""
    def make():
        return _err_terms(V.qrels_query, V.n_queries, V.qrels_irank, V.qrels_label, max_rel, family)
    rows, terms = V.cached(("ideal_err", max_rel), make)
    per_q = sums_at_cutoffs(V.qrels_query[rows], V.qrels_irank[rows], terms, V.n_queries, ks)
    return [v[V.group_query] for v in per_q]


def _key(m: Measure):
    return m.param("judged_only"), m.param("max_rel")


def _err(J, ms):
    out = [None] * len(ms)
    for (_, max_rel), idx in groups_by(ms, _key).items():
        V = view(J, ms[idx[0]])
        for i, v in zip(idx, err_at(V, max_rel, [ms[i].k for i in idx], "ERR")):
            out[i] = v
    return out


def _nerr(J, ms):
    out = [None] * len(ms)
    for (_, max_rel), idx in groups_by(ms, _key).items():
        V = view(J, ms[idx[0]])
        ks = [ms[i].k for i in idx]
        for i, v, best in zip(idx, err_at(V, max_rel, ks, "nERR"), ideal_err_at(V, max_rel, ks, "nERR")):
            out[i] = safe_div(v, best)
    return out


ERR = Family("ERR", "optional", _PARAMS, _err,
             doc="expected reciprocal rank (cascade model; stop probability (2**label - 1) / 2**max_rel)", value_range=UNIT)
NERR = Family("nERR", "optional", _PARAMS, _nerr,
              doc="ERR@k / ERR@k of the ideal ranking", value_range=UNIT)
