"""Gain-based families: nDCG, DCG, G, binG, nDCGrel, RnDCG, RBP.

Every one reads the same two intermediates: the ranking's :class:`DCG` and
the questions' :class:`IdealDCG` (:mod:`.intermediates`), for its gain kind
and gains.  Every running DCG starts from 0 at each question, so a question's
values do not depend on the other questions (partitions are bit-exact).

Gains
    ``G``, ``nDCGrel``, ``RnDCG`` and ``RBP`` default to trec_eval's linear gain
    (gain = label; they are trec_eval's measures), ``nDCG`` keeps the spec's
    exponential default.  ``gains=((1, 3.0), (2, 9.0), (4, 4.5))`` sets the gain of individual
    labels (trec_eval's ``ndcg.1=3,2=9,4=4.5``); other labels keep the ``gain``
    kind's.  The ideal ranking orders every judged document (label >= 0) by gain,
    keeping the positive gains.  (trec_eval sorts gain levels with a comparator
    that truncates the difference of two gains to an integer, so two gains that
    differ by less than 1 may come out in either order there; evalframe's ideal
    ranking is always ordered by gain.)  A label whose gain is not a finite
    float (``2**label - 1`` for labels >= 1024) is an error that suggests
    ``gain='linear'``.
"""
from __future__ import annotations

import numpy as np

from .._arrow_numpy import distinct
from .._judged import Judged, group_starts
from .base import UNIT, Family, ParamSpec
from .intermediates import (BIG_RANK, BUDGET, COMMON, budget_cutoff, cumrel, dcg, gain_map, gain_values, group_first_row, groups_by,
                            ideal_dcg, isrel, nrelret, nret, relevant, safe_div, trec_label, view)

_GAIN = ParamSpec("choice", "exp", "gain of a label", choices={"exp": "2**label - 1", "linear": "label"})
_LINEAR = ParamSpec("choice", "linear", "gain of a label", choices={"exp": "2**label - 1", "linear": "label"})
_GAINS = ParamSpec("gains", None, "gain of individual labels, ((label, gain), ...)", none_ok=True)
_GAIN_PARAMS = {"gain": _LINEAR, "gains": _GAINS, "judged_only": COMMON["judged_only"]}


def _gains(m):
    return m.param("gain"), gain_map(m)


def _ndcg_budget(J, m) -> np.ndarray:
    """nDCG at a token budget: the DCG of the leading documents that fit (at most k),
    over the ideal DCG through as many documents."""
    V = view(J, m)
    kind, gmap = _gains(m)
    n = budget_cutoff(V, m)
    got = np.where(n > 0, dcg(V, kind, gmap).running_at(np.maximum(group_first_row(V) + n - 1, 0)), 0.0)
    return safe_div(got, ideal_dcg(V, kind, gmap).dcg_at(V.group_query, n))


def _ndcg(J, ms):
    out = [None] * len(ms)
    budgeted = [i for i, m in enumerate(ms) if dict(m.params).get("tokens") is not None]
    for i in budgeted:
        out[i] = _ndcg_budget(J, ms[i])
    key = lambda m: (m.param("judged_only"), m.param("gain"), m.param("gains") or ())  # noqa: E731
    rest = [m for i, m in enumerate(ms) if i not in budgeted]
    at = [i for i in range(len(ms)) if i not in budgeted]
    for _, sub in groups_by(rest, key).items():
        idx = [at[j] for j in sub]
        m0 = ms[idx[0]]
        V = view(J, m0)
        kind, gmap = _gains(m0)
        ks = [ms[i].k for i in idx]
        best = [b[V.group_query] for b in ideal_dcg(V, kind, gmap).at_cutoffs(ks)]
        for i, d, b in zip(idx, dcg(V, kind, gmap).at_cutoffs(ks), best):
            out[i] = safe_div(d, b)
    return out


def _dcg(J, ms):
    out = [None] * len(ms)
    key = lambda m: (m.param("judged_only"), m.param("gain"), m.param("gains") or ())  # noqa: E731
    for _, idx in groups_by(ms, key).items():
        m0 = ms[idx[0]]
        V = view(J, m0)
        for i, d in zip(idx, dcg(V, *_gains(m0)).at_cutoffs([ms[i].k for i in idx])):
            out[i] = d
    return out


def _G(J, ms):
    out = []
    for m in ms:
        V = view(J, m)
        d, ideal = dcg(V, *_gains(m)), ideal_dcg(V, *_gains(m))
        nz = d.rows
        g_rows = V.grp[nz]
        cost = ideal.cost_at(V.group_query[g_rows], V.rank[nz])
        contrib = d.gain / np.log2(2.0 + cost - d.running_gain)
        total = np.bincount(g_rows, weights=contrib, minlength=V.n_groups)
        out.append(safe_div(total, ideal.total_gain_q[V.group_query]))
    return out


def _bing(J, ms):
    out = []
    for m in ms:
        V = view(J, m)
        rel = m.param("rel")
        rows = np.flatnonzero(isrel(V, rel))
        contrib = 1.0 / np.log2(2.0 + V.rank[rows] - cumrel(V, rel).at(rows))
        total = np.bincount(V.grp[rows], weights=contrib, minlength=V.n_groups)
        out.append(safe_div(total, relevant(V, rel)))
    return out


def _ndcg_rel(J, ms):
    out = []
    for m in ms:
        V = view(J, m)
        d, ideal = dcg(V, *_gains(m)), ideal_dcg(V, *_gains(m))
        pos = d.gain > 0
        rows = d.rows[pos]
        g_rows = V.grp[rows]
        at = safe_div(d.running[pos], ideal.dcg_at(V.group_query[g_rows], V.rank[rows]))
        s = np.bincount(g_rows, weights=at, minlength=V.n_groups)
        nrr = np.bincount(g_rows, minlength=V.n_groups)
        npos = ideal.npos_q[V.group_query].astype(np.float64)
        big = np.full(V.n_groups, BIG_RANK, dtype=np.int64)
        s = s + (npos - nrr) * safe_div(d.total, ideal.dcg_at(V.group_query, big))
        out.append(np.where(s > 0, safe_div(s, npos), 0.0))
    return out


def _rndcg(J, ms):
    out = []
    for m in ms:
        V = view(J, m)
        d, ideal = dcg(V, *_gains(m)), ideal_dcg(V, *_gains(m))
        nret_g = nret(V).astype(np.int64)
        first = group_first_row(V)
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
        upto = np.minimum(t, nret_g[gidx])
        dcg_b = np.where(upto >= 1, d.running_at(np.maximum(first[gidx] + upto - 1, 0)), 0.0)
        s = np.bincount(gidx, weights=safe_div(dcg_b, ideal.dcg_at(V.group_query[gidx], t)),
                        minlength=V.n_groups)
        cnt = nb_g.astype(np.float64)
        npos = ideal.npos_q[V.group_query]
        tail = nret_g > npos + 1
        big = np.full(V.n_groups, BIG_RANK, dtype=np.int64)
        idcg_tot = ideal.dcg_at(V.group_query, big)
        s = s + np.where(tail & (idcg_tot > 0), safe_div(d.total, idcg_tot), 0.0)
        cnt = cnt + (tail & (idcg_tot > 0))
        val = safe_div(s, cnt)
        out.append(np.where(relevant(V, m.param("rel")) > 0, val, 0.0))
    return out


def _rbp(J, ms):
    out = []
    for m in ms:
        p = m.param("p")
        kind, gmap = _gains(m)
        V = view(J, m)
        if m.param("residual"):  # over the unjudged rows (label < 0); a judged row adds 0.0 (no bit changes)
            disc = _powers(float(p), V.rank)
            disc[isrel(V, 0)] = 0.0  # label >= 0
            val = np.power(float(p), nret(V)) + (1.0 - p) * np.bincount(V.grp, weights=disc, minlength=V.n_groups)
            out.append(np.where(nret(V) > nrelret(V, 0), val, 0.0))  # any unjudged row
            continue
        lo, hi = _rbp_gain_range(V, kind, gmap)
        norm_g = (lo < 0) | (hi > 1)
        listed = isrel(V, 0)  # label >= 0: trec_eval's gain levels: labels 0..max, and those in gains
        if gmap:
            listed = listed | np.isin(trec_label(V.label), list(gmap))
        rows = np.flatnonzero(listed)
        g = V.grp[rows]
        gain = gain_values(V.label[rows], kind, gmap)
        if norm_g.any():  # trec_eval rescales the question's gain levels to [0, 1]
            gain = np.where(norm_g[g], safe_div(gain - lo[g], hi[g] - lo[g]), gain)
        disc = _powers(float(p), V.rank[rows])
        out.append((1.0 - p) * np.bincount(g, weights=gain * disc, minlength=V.n_groups))
    return out


def _powers(p: float, rank: np.ndarray) -> np.ndarray:
    """``p ** (rank - 1)`` for each rank (ranks from 1): one power per rank level,
    looked up per row (the same values as ``np.power`` row by row); a new array."""
    if len(rank) == 0:
        return np.zeros(0)
    levels = np.concatenate(([0.0], np.power(p, np.arange(int(rank.max()), dtype=np.float64))))
    return levels.take(rank)  # levels[r] is p ** (r - 1)


def _rbp_gain_range(V: Judged, kind: str, gmap: dict):
    """Per group: min and max gain over trec_eval's gain levels (labels 0..max
    judged label of the question, and every label given in ``gains``)."""
    ql, qq = V.qrels_label, V.qrels_query  # sorted by question, then label descending
    start = group_starts(qq, V.n_queries)
    has = start < len(qq)
    top = np.where(has, ql[np.minimum(start, max(len(ql) - 1, 0))] if len(ql) else -1, -1)
    maxlev = np.where(has & (qq[np.minimum(start, max(len(qq) - 1, 0))] == np.arange(V.n_queries)) & (top >= 0),
                      top, -1).astype(np.int64)
    lo_q = np.zeros(V.n_queries)
    hi_q = np.zeros(V.n_queries)
    for lev in distinct(maxlev):  # one pass per distinct top label, not per question
        gains = list(gmap.values())
        # the kind's gain is increasing in the label: the levels 0..lev not in
        # gains reach their min and max at the smallest and the largest of them
        low = next((lab for lab in range(0, int(lev) + 1) if lab not in gmap), None)
        if low is not None:
            high = next(lab for lab in range(int(lev), -1, -1) if lab not in gmap)
            gains.extend(gain_values(np.array([low, high], dtype=np.int64), kind, {}).tolist())
        sel = maxlev == lev
        lo_q[sel] = min(gains) if gains else 0.0
        hi_q[sel] = max(gains) if gains else 0.0
    return lo_q[V.group_query], hi_q[V.group_query]


NDCG = Family(
    "nDCG", "optional", {"gain": _GAIN, "judged_only": COMMON["judged_only"], "gains": _GAINS, "tokens": BUDGET},
    _ndcg,
    aliases=("NDCG",),
    trec_names=((r"ndcg_cut_(\d+)", lambda m: f"nDCG(gain='linear')@{m[1]}"), (r"ndcg", "nDCG(gain='linear')")),
    doc="DCG@k / ideal DCG@k", value_range=UNIT)
DCG_FAMILY = Family("DCG", "optional", {"gain": _GAIN, "judged_only": COMMON["judged_only"], "gains": _GAINS},
                    _dcg, doc="DCG@k, not normalised (nDCG's gains and discount)")
G = Family("G", "none", _GAIN_PARAMS, _G, doc="trec_eval's G: gain over a cost-adjusted log discount")
BIN_G = Family("binG", "none", COMMON, _bing, aliases=("BinG",), doc="binary gain discounted by non-relevant above")
NDCG_REL = Family("nDCGrel", "none", _GAIN_PARAMS, _ndcg_rel, aliases=("ndcg_rel",),
                  trec_names=((r"ndcg_rel", "nDCGrel"),), doc="nDCG averaged over the ranks of the relevant documents")
R_NDCG = Family("RnDCG", "none", {"rel": COMMON["rel"], **_GAIN_PARAMS}, _rndcg, aliases=("Rndcg",),
                trec_names=((r"Rndcg", "RnDCG"),), doc="nDCG averaged at the R-levels (where the ideal gain changes)")
RBP = Family(
    "RBP", "none",
    {"p": ParamSpec("float", 0.9, "persistence: probability of reading on", low=0, high=1),
     "residual": ParamSpec("bool", False, "the residual (what unjudged documents could add) instead"),
     **_GAIN_PARAMS},
    _rbp, trec_names=((r"rbp", "RBP"), (r"rbp_resid", "RBP(residual=True)")),
    doc="rank-biased precision (1-p) sum gain_i p^(i-1); residual=True: its uncertainty", value_range=UNIT)
