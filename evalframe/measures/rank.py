"""Rank-based families: RR (reciprocal rank), bpref and GMbpref."""
from __future__ import annotations

__all__ = ["RECIP_RANK", "BPREF", "GM_BPREF", "bpref"]

import numpy as np

from .._judged import Judged
from .aggregation import GEO_MEAN
from .base import UNIT, Family, Measure
from .intermediates import COMMON, count_in_group, cumrel, isrel, nonrel, relevant, safe_div, view


def _first_rel_rank(V: Judged, rel: int) -> np.ndarray:
    """Rank of each group's first relevant document (inf when none)."""
    def make():
        rows = np.flatnonzero(isrel(V, rel))
        rows = rows[cumrel(V, rel).at(rows) == 1]
        first = np.full(V.n_groups, np.inf)
        first[V.grp[rows]] = np.maximum(V.rank[rows], 1)
        return first
    return V.cached(("firstrel", rel), make)


def _rr(J, ms):
    out = []
    for m in ms:
        first = _first_rel_rank(view(J, m), m.param("rel"))
        out.append(np.where(first <= (m.k or np.inf), 1.0 / first, 0.0))  # 1 / inf == 0
    return out


def bpref(J: Judged, ms: list[Measure]) -> list[np.ndarray]:
    """bpref of each measure (bpref or GMbpref: only their ``rel`` is read; one
    computation per ``rel``, shared by both families)."""
    return [J.cached(("bpref", m.param("rel")), lambda: _bpref(J, m.param("rel"))) for m in ms]


def _bpref(J: Judged, rel: int) -> np.ndarray:
    rows = np.flatnonzero(isrel(J, rel))  # only relevant documents contribute
    g = J.grp[rows]
    R = relevant(J, rel)
    N = J.per_query_qrels((J.qrels_label >= 0) & (J.qrels_label < rel))
    above = count_in_group(J, nonrel(J, rel)).at(rows).astype(np.float64)
    Rg, Ng = R[g], N[g]
    denom = np.minimum(Ng, Rg)
    frac = np.divide(np.minimum(above, Rg), denom, out=np.zeros_like(above), where=denom > 0)
    contrib = np.where(above > 0, 1.0 - frac, 1.0)
    return safe_div(np.bincount(g, weights=contrib, minlength=J.n_groups), R)


_REL = {"rel": COMMON["rel"]}

RECIP_RANK = Family("RR", "optional", COMMON, _rr, aliases=("MRR", "RecipRank"),
                    trec_names=((r"recip_rank", "RR"),), doc="1 / rank of the first relevant", value_range=UNIT)
BPREF = Family("bpref", "none", _REL, bpref, aliases=("BPref",),
               doc="preference of each relevant over judged non-relevant above it", value_range=UNIT)
GM_BPREF = Family("GMbpref", "none", _REL, bpref, aggregator=GEO_MEAN, aliases=("gm_bpref",),
                  trec_names=((r"gm_bpref", "GMbpref"),),
                  doc="bpref per question; geometric mean over questions (floor 1e-5)", value_range=UNIT)
