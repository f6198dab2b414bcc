"""Novelty and diversity families on a golden set with subtopics (intents), as
ndeval (TREC Web track, version 4.5) computes them: alpha-DCG, alpha-nDCG,
ERR-IA, nERR-IA, NRBP, nNRBP, AP-IA, P-IA and subtopic recall.  Names are
ir_measures' (``alpha_nDCG@20``, ``ERR_IA@20``, ``StRecall@10``, ...).

The golden set is a diversity qrels (``query_id, subtopic, doc_id,
relevance``: :func:`evalframe.read_qrels` keeps a ``subtopic`` column, and
reads TREC Web's files, whose second column is the subtopic).  A golden set
without one is read as one subtopic per question.

Definitions (ndeval's), per question with S subtopics that have a relevant
document (a document is relevant to a subtopic when its label for it is
>= ``rel``); every value is 0 when S is 0:

- gain at rank i: ``sum over the subtopics s the document is relevant to of
  (1 - alpha) ** c_s``, c_s the documents above rank i relevant to s;
- ``alpha_DCG@k = sum_{i<=k} gain_i / log2(i + 1)  /  S sum_{i<=k} (1 - alpha)**(i-1) / log2(i + 1)``
  ("ideal ideal" normalisation: every document relevant to every subtopic);
- ``ERR_IA@k``: the same with discount ``1 / i``;
- ``alpha_nDCG@k`` and ``nERR_IA@k``: the unnormalised sums divided by those
  of the ideal ranking, built greedily (at each rank the golden-set document
  with the largest gain; ties to the larger doc id, byte-wise, as ndeval);
- ``NRBP(alpha, beta) = (1 - (1 - alpha) beta) / S * sum_i gain_i beta**(i-1)``
  over the whole ranking; ``nNRBP`` divides by the ideal ranking's;
- ``AP_IA = 1/S sum_s AP_s`` (AP against subtopic s's relevant documents);
- ``P_IA@k = sum_s (relevant to s in the top k) / (k S)``;
- ``StRecall@k``: the share of the S subtopics with a relevant document in the top k.

Where evalframe differs from ndeval (each tested): cutoffs are not limited to
20; ``alpha_DCG@1`` and ``ERR_IA@1`` are normalised like every other cutoff
(ndeval's normalising loop starts at rank 2, leaving them S times too large);
``nNRBP`` is 0, not NaN, when S is 0.

The run's side is one entry per (ranked document, subtopic it is relevant to);
c_s is a position within (group, subtopic) after one sort, and each sum is a
``bincount``.  The greedy ideal ranking is built for all questions at once,
one rank per step (as many steps as the deepest cutoff asked, or, for nNRBP,
as the most relevant documents of a question), each step vectorised over
every question's candidates.
"""
from __future__ import annotations

__all__ = ["TIE_TOLERANCE", "ALPHA_DCG", "ALPHA_NDCG", "ERR_IA", "NERR_IA", "NRBP", "NNRBP", "AP_IA", "P_IA", "ST_RECALL",
           "subtopics_of"]

import numpy as np

from .._judged import Judged, NOT_JUDGED, Subtopics, group_starts
from .base import UNIT, Family, ParamSpec
from .intermediates import COMMON, groups_by, safe_div, sums_at_cutoffs, view

#: Relative difference under which two gains of the greedy ideal ranking are equal
#: (ties go to the larger doc id, as in ndeval).
TIE_TOLERANCE = 1e-12

_ALPHA = ParamSpec("float", 0.5, "redundancy intolerance: a subtopic's gain shrinks by (1 - alpha) per repeat",
                   low=0, high=1)
_BETA = ParamSpec("float", 0.5, "patience (NRBP's persistence)", low=0, high=1)


def subtopics_of(V: Judged) -> Subtopics:
    """The table's :class:`~evalframe.ranking.Subtopics`; without a subtopic column,
    one subtopic per question (its judged documents and labels)."""
    if V.subtopics is not None:
        return V.subtopics
    def make():
        rows = np.flatnonzero(V.label != NOT_JUDGED)
        return Subtopics(rows, V.group_query[V.grp[rows]], V.label[rows], np.arange(V.n_queries),
                         V.qrels_query, np.arange(len(V.qrels_query)), V.qrels_label)
    return V.cached(("subtopics",), make)


def _n_subtopics(V: Judged, S: Subtopics, rel: int) -> np.ndarray:
    """Subtopics with a relevant document, per group."""
    def make():
        has = np.bincount(S.qrels_subtopic[S.qrels_label >= rel], minlength=S.n_subtopics) > 0
        return np.bincount(S.subtopic_query, weights=has, minlength=V.n_queries)[V.group_query]
    return V.cached(("n_subtopics", rel), make)


def _entries(V: Judged, S: Subtopics, rel: int):
    """The relevant (row, subtopic) entries sorted by row: their group, rank, subtopic,
    and c, the documents above relevant to the same subtopic."""
    def make():
        e = np.flatnonzero(S.label >= rel)
        row, st = S.row[e], S.subtopic[e]
        g, rank = V.grp[row], V.rank[row]
        order = np.lexsort((rank, st, g))
        head = np.ones(len(order), dtype=bool)
        head[1:] = (g[order][1:] != g[order][:-1]) | (st[order][1:] != st[order][:-1])
        idx = np.arange(len(order))
        c = np.empty(len(order), dtype=np.int64)
        c[order] = idx - np.maximum.accumulate(np.where(head, idx, 0))
        return g, rank, st, c
    return V.cached(("diversity_entries", rel), make)


def _gains(V: Judged, S: Subtopics, rel: int, alpha: float):
    g, rank, st, c = _entries(V, S, rel)
    return g, rank, np.power(1.0 - alpha, c.astype(np.float64))


def _ideal_gains(V: Judged, S: Subtopics, rel: int, alpha: float, depth: int) -> np.ndarray:
    """(n_queries, depth): the gain at each rank of every question's greedy ideal ranking."""
    key = ("ideal_gains", rel, alpha)
    have = V.cache.get(key)
    if have is not None and have.shape[1] >= depth:
        return have[:, :depth]
    rel_rows = np.flatnonzero(S.qrels_label >= rel)
    st = S.qrels_subtopic[rel_rows]
    q = S.subtopic_query[st]
    doc = S.qrels_doc[rel_rows]
    # candidates: a question's documents relevant to a subtopic, sorted by (question, doc)
    cand_key = q * (int(S.qrels_doc.max(initial=0)) + 1) + doc
    uniq, cand = np.unique(cand_key, return_inverse=True)
    cand_q = uniq // (int(S.qrels_doc.max(initial=0)) + 1)
    cand_doc = uniq % (int(S.qrels_doc.max(initial=0)) + 1)
    n_cand = len(uniq)
    per_q = np.bincount(cand_q, minlength=V.n_queries)
    steps = int(min(depth, per_q.max(initial=0)))
    gains = np.zeros((V.n_queries, depth))
    starts = group_starts(cand_q, V.n_queries)
    has = per_q > 0
    w = np.ones(S.n_subtopics)
    taken = np.zeros(n_cand, dtype=bool)
    for step in range(steps):  # one rank of every question's ideal ranking per step
        score = np.bincount(cand, weights=w[st], minlength=n_cand)
        score[taken] = -1.0
        best = np.full(V.n_queries, -1.0)
        best[has] = np.maximum.reduceat(score, starts[has])
        # equal gains (to rounding: sums of the same powers in another order) go to the larger doc id
        tie = (score >= 0) & (score >= best[cand_q] - TIE_TOLERANCE * best[cand_q])
        pick_doc = np.full(V.n_queries, -1, dtype=np.int64)
        pick_doc[has] = np.maximum.reduceat(np.where(tie, cand_doc, -1), starts[has])
        chosen = np.flatnonzero(tie & (cand_doc == pick_doc[cand_q]))
        gains[cand_q[chosen], step] = score[chosen]
        taken[chosen] = True
        hit = taken[cand] & np.isin(cand, chosen)
        np.multiply.at(w, st[hit], 1.0 - alpha)
    V.cache[key] = gains
    return gains


def _most_relevant(S: Subtopics, rel: int) -> int:
    """An upper bound of the length of any question's ideal ranking (at least 1)."""
    rows = S.qrels_label >= rel
    return max(int(np.bincount(S.subtopic_query[S.qrels_subtopic[rows]], minlength=1).max(initial=1)), 1)


def _with_cutoffs(J, ms, discount, normalise):
    """alpha-DCG / ERR-IA (``normalise="ideal ideal"``) and alpha-nDCG / nERR-IA
    (``"ideal"``) for the measures ``ms`` of one family."""
    out = [None] * len(ms)
    key = lambda m: (m.param("judged_only"), m.param("rel"),  # noqa: E731
                     m.param("alpha") if "alpha" in FAMILY_PARAMS[m.family] else 0.5)
    for (_, rel, alpha), idx in groups_by(ms, key).items():
        V = view(J, ms[idx[0]])
        S = subtopics_of(V)
        g, rank, gain = _gains(V, S, rel, alpha)
        ks = [ms[i].k for i in idx]
        raw = sums_at_cutoffs(g, rank, gain * discount(rank.astype(np.float64)), V.n_groups, ks)
        n_sub = _n_subtopics(V, S, rel)
        for i, k, r in zip(idx, ks, raw):
            if normalise == "ideal ideal":  # the family needs a cutoff
                pos = np.arange(1, k + 1, dtype=np.float64)
                best = n_sub * float(np.sum(np.power(1.0 - alpha, pos - 1) * discount(pos)))
                out[i] = safe_div(r, best)
            else:
                ideal = _ideal_gains(V, S, rel, alpha, k if k is not None else _most_relevant(S, rel))
                per_q = ideal @ discount(np.arange(1, ideal.shape[1] + 1, dtype=np.float64))
                out[i] = np.where(r > 0, safe_div(r, per_q[V.group_query]), 0.0)
    return out


def _log_discount(pos):
    return 1.0 / np.log2(pos + 1.0)


def _rank_discount(pos):
    return 1.0 / pos


def _alpha_dcg(J, ms):
    return _with_cutoffs(J, ms, _log_discount, "ideal ideal")


def _alpha_ndcg(J, ms):
    return _with_cutoffs(J, ms, _log_discount, "ideal")


def _err_ia(J, ms):
    return _with_cutoffs(J, ms, _rank_discount, "ideal ideal")


def _nerr_ia(J, ms):
    return _with_cutoffs(J, ms, _rank_discount, "ideal")


def _nrbp_raw(V, S, rel, alpha, beta):
    g, rank, gain = _gains(V, S, rel, alpha)
    return np.bincount(g, weights=gain * np.power(beta, rank - 1.0), minlength=V.n_groups)


def _nrbp(J, ms):
    out = []
    for m in ms:
        rel, alpha, beta = m.param("rel"), m.param("alpha"), m.param("beta")
        S = subtopics_of(J)
        raw = _nrbp_raw(J, S, rel, alpha, beta)
        out.append(safe_div(raw * (1.0 - (1.0 - alpha) * beta), _n_subtopics(J, S, rel)))
    return out


def _nnrbp(J, ms):
    out = []
    for m in ms:
        rel, alpha, beta = m.param("rel"), m.param("alpha"), m.param("beta")
        S = subtopics_of(J)
        raw = _nrbp_raw(J, S, rel, alpha, beta)
        ideal = _ideal_gains(J, S, rel, alpha, _most_relevant(S, rel))
        best = ideal @ np.power(beta, np.arange(ideal.shape[1], dtype=np.float64))
        out.append(safe_div(raw, best[J.group_query]))
    return out


def _ap_ia(J, ms):
    out = []
    for m in ms:
        rel = m.param("rel")
        V = view(J, m)
        S = subtopics_of(V)
        g, rank, st, c = _entries(V, S, rel)
        n_rel = np.bincount(S.qrels_subtopic[S.qrels_label >= rel], minlength=S.n_subtopics)
        per = np.bincount(g, weights=(c + 1.0) / rank / n_rel[st], minlength=V.n_groups)
        out.append(safe_div(per, _n_subtopics(V, S, rel)))
    return out


def _p_ia(J, ms):
    out = []
    for m in ms:
        rel = m.param("rel")
        V = view(J, m)
        S = subtopics_of(V)
        g, rank, _, _ = _entries(V, S, rel)
        hits = np.bincount(g[rank <= m.k], minlength=V.n_groups).astype(np.float64)
        out.append(safe_div(hits, m.k * _n_subtopics(V, S, rel)))
    return out


def _st_recall(J, ms):
    out = []
    for m in ms:
        rel = m.param("rel")
        S = subtopics_of(J)
        g, rank, _, c = _entries(J, S, rel)
        first = (c == 0) & (rank <= (m.k if m.k is not None else np.inf))
        out.append(safe_div(np.bincount(g[first], minlength=J.n_groups).astype(np.float64),
                            _n_subtopics(J, S, rel)))
    return out


_REL = {"rel": COMMON["rel"]}
_CUT = {**_REL, "judged_only": COMMON["judged_only"]}
FAMILY_PARAMS = {
    "alpha_DCG": {"alpha": _ALPHA, **_CUT}, "alpha_nDCG": {"alpha": _ALPHA, **_CUT},
    "ERR_IA": _CUT, "nERR_IA": _CUT, "NRBP": {"alpha": _ALPHA, "beta": _BETA, **_REL},
    "nNRBP": {"alpha": _ALPHA, "beta": _BETA, **_REL}, "AP_IA": _CUT, "P_IA": _CUT, "StRecall": _REL,
}

ALPHA_DCG = Family("alpha_DCG", "required", FAMILY_PARAMS["alpha_DCG"], _alpha_dcg,
                   doc="alpha-DCG@k (ndeval): novelty-discounted gain over the 'ideal ideal' DCG")
ALPHA_NDCG = Family("alpha_nDCG", "optional", FAMILY_PARAMS["alpha_nDCG"], _alpha_ndcg,
                    doc="alpha-nDCG@k (Clarke et al. 2008, ndeval): alpha-DCG@k / the greedy ideal's", value_range=UNIT)
ERR_IA = Family("ERR_IA", "required", FAMILY_PARAMS["ERR_IA"], _err_ia,
                doc="intent-aware ERR@k (ndeval, alpha 0.5), 'ideal ideal' normalisation")
NERR_IA = Family("nERR_IA", "optional", FAMILY_PARAMS["nERR_IA"], _nerr_ia,
                 doc="intent-aware ERR@k / the greedy ideal's (ndeval)")
NRBP = Family("NRBP", "none", FAMILY_PARAMS["NRBP"], _nrbp,
              doc="novelty- and rank-biased precision (Clarke et al. 2009, ndeval)")
NNRBP = Family("nNRBP", "none", FAMILY_PARAMS["nNRBP"], _nnrbp, doc="NRBP / the greedy ideal's (ndeval)")
AP_IA = Family("AP_IA", "none", FAMILY_PARAMS["AP_IA"], _ap_ia, doc="intent-aware AP: mean over subtopics (ndeval)", value_range=UNIT)
P_IA = Family("P_IA", "required", FAMILY_PARAMS["P_IA"], _p_ia, doc="intent-aware P@k: mean over subtopics (ndeval)", value_range=UNIT)
ST_RECALL = Family("StRecall", "optional", FAMILY_PARAMS["StRecall"], _st_recall,
                   doc="subtopic recall@k: share of the subtopics covered in the top k", value_range=UNIT)

