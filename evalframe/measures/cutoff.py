"""Cutoff-based families: P, R, Success, Judged, RelP, Unjudged.

Each counts documents in the top k (read from a running count at rank k, so
every cutoff of a family costs O(groups)).  P, R and Success also take a token
budget, ``R(tokens=2000)``: the documents read are the leading ones whose
cumulative ``tokens`` (a run column) fit in 2000 (and at most k with ``@k``);
precision divides by the documents that fit (0 when none does).
"""
from __future__ import annotations

__all__ = ["PRECISION", "RECALL", "SUCCESS", "JUDGED", "RELATIVE_P", "UNJUDGED"]

import numpy as np

from .._judged import Judged
from .base import UNIT, Family, Measure
from .intermediates import (BUDGET, COMMON, budget_cutoff, count_in_group, cumrel, isrel, nrelret, relevant,
                            safe_div, view)

#: Parameters of P, R and Success: the common ones and a token budget.
_BUDGETED = {**COMMON, "tokens": BUDGET}


def _budget(m: Measure):
    return dict(m.params).get("tokens")


def _hits(J: Judged, m: Measure) -> np.ndarray:
    """Relevant documents in the top k (all retrieved without a cutoff), or among the
    leading documents that fit the token budget."""
    V = view(J, m)
    rel = m.param("rel")
    if _budget(m) is not None:
        return cumrel(V, rel).at_rank(budget_cutoff(V, m))
    return cumrel(V, rel).at_rank(m.k) if m.k is not None else nrelret(V, rel).astype(np.float64)


def _precision(J, ms):
    # at a token budget: divided by the documents that fit (0 when none fits)
    return [safe_div(_hits(J, m), budget_cutoff(view(J, m), m).astype(np.float64)) if _budget(m) is not None
            else _hits(J, m) / m.k for m in ms]


def _recall(J, ms):
    return [safe_div(_hits(J, m), relevant(view(J, m), m.param("rel"))) for m in ms]


def _success(J, ms):
    return [(_hits(J, m) > 0).astype(np.float64) for m in ms]


def _judged_count(J: Judged):
    """The running count of judged documents (label >= 0)."""
    return J.cached("judged", lambda: count_in_group(J, isrel(J, 0)))  # label >= 0


def _judged(J, ms):
    return [_judged_count(J).at_rank(m.k) / m.k for m in ms]


def _relp(J, ms):
    out = []
    for m in ms:
        V = view(J, m)
        rel = m.param("rel")
        hits = cumrel(V, rel).at_rank(m.k)
        out.append(safe_div(hits, np.minimum(float(m.k), relevant(V, rel))))
    return out


def _unjudged(J, ms):
    return [_judged_count(J).at_rank(m.k, holds=False) / m.k for m in ms]  # label < 0: not judged


PRECISION = Family("P", "required", _BUDGETED, _precision, aliases=("Precision",),
                   trec_names=((r"P_(\d+)", lambda m: f"P@{m[1]}"),), doc="relevant in top k / k", value_range=UNIT)
RECALL = Family("R", "optional", _BUDGETED, _recall, aliases=("Recall",),
                trec_names=((r"recall_(\d+)", lambda m: f"R@{m[1]}"),), doc="relevant in top k / relevant", value_range=UNIT)
SUCCESS = Family("Success", "required", _BUDGETED, _success, aliases=("HitRate", "Hit", "S"),
                 trec_names=((r"success_(\d+)", lambda m: f"Success@{m[1]}"),), doc="1 if any relevant in top k", value_range=UNIT)
JUDGED = Family("Judged", "required", {}, _judged, doc="judged documents in top k / k", value_range=UNIT)
RELATIVE_P = Family("RelP", "required", COMMON, _relp, aliases=("relative_P", "RelativeP", "R_cap", "Rcap"),
                    trec_names=((r"relative_P_(\d+)", lambda m: f"RelP@{m[1]}"),),
                    doc="relevant in top k / min(k, relevant)", value_range=UNIT)
UNJUDGED = Family("Unjudged", "required", {}, _unjudged, aliases=("unj", "Hole"),
                  trec_names=((r"unj_(\d+)", lambda m: f"Unjudged@{m[1]}"),), doc="unjudged documents in top k / k", value_range=UNIT)
