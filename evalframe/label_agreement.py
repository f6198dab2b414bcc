"""Agreement between two golden sets for the same questions.

Two annotators, or a human and an LLM judge, label the same (question, document) pairs:
``agreement(qrels_a, qrels_b)`` says how far their labels agree beyond chance.

Which pairs count: those both golden sets label with a label >= 0 (a negative label
means "not judged" in evalframe, so such a pair is left out); the counts of pairs only
one side judged are in the result. With ``rel=`` the labels are first made binary
(relevant: label >= rel), the agreement that matters for binary measures.

Statistics (L label levels, confusion matrix C of the N shared pairs, p = C / N):

- ``observed_agreement``: the share of pairs with the same label, sum_i p_ii.
- ``cohen_kappa``: (p_o - p_e) / (1 - p_e), p_e = sum_i p_i. p_.i (Cohen, 1960).
- ``weighted_kappa_linear`` / ``_quadratic``: 1 - sum w_ij p_ij / sum w_ij p_i. p_.j with
  disagreement weights |i - j| or (i - j)^2 over the label levels' positions (Cohen, 1968).
- ``krippendorff_alpha_nominal`` / ``_ordinal`` / ``_interval``: 1 - D_o / D_e over the
  coincidence matrix O = C + C^T (n = 2N values), with Krippendorff's metric differences
  (nominal: 0/1; ordinal: (sum of the level counts from c to k - (n_c + n_k)/2)^2;
  interval: (c - k)^2 on the label values).

Intervals: percentile bootstrap over questions (labels within a question are not
independent, so questions are resampled whole), computed from per-question confusion
matrices as one matrix product per batch of resamples.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ._validation import CONFIDENCE, SEED, Interval, validate
from .io import read_qrels

__all__ = ["agreement"]

STATISTICS = ("observed_agreement", "cohen_kappa", "weighted_kappa_linear", "weighted_kappa_quadratic",
              "krippendorff_alpha_nominal", "krippendorff_alpha_ordinal", "krippendorff_alpha_interval")


def agreement(qrels_a, qrels_b, *, rel: int | None = None, confidence: float = 0.95,
              n_resamples: int = 2000, seed: int = 0) -> pd.DataFrame:
    """Chance-corrected agreement between two golden sets, with bootstrap intervals.

    Parameters
    ----------
    qrels_a, qrels_b : golden sets (anything :func:`evalframe.read_qrels` reads)
    rel : int, optional
        Make labels binary first (label >= rel is relevant).
    confidence : float
        Interval level, in (0, 1).
    n_resamples : int
        Bootstrap resamples of the questions (0: no intervals).
    seed : int
        Seed of the resampling.

    Returns
    -------
    DataFrame
        One row per statistic: ``statistic, value, ci_low, ci_high, confidence,
        n_pairs, n_questions, only_a, only_b, labels``.

    Examples
    --------
    >>> import evalframe as ef
    >>> a = {"q1": {"d1": 2, "d2": 0, "d3": 1}, "q2": {"d1": 1, "d4": 0}}
    >>> b = {"q1": {"d1": 2, "d2": 0, "d3": 0}, "q2": {"d1": 1, "d4": 0}}
    >>> t = ef.agreement(a, b, n_resamples=0).set_index("statistic")
    >>> float(t.loc["cohen_kappa", "value"])  # p_o = 4/5, p_e = 9/25: (0.8 - 0.36) / 0.64
    0.6875
    """
    _check(rel, confidence, n_resamples, seed)
    pairs, only_a, only_b = _shared_pairs(read_qrels(qrels_a), read_qrels(qrels_b), rel)
    levels = np.union1d(pairs["a"], pairs["b"])
    q_codes, questions = pd.factorize(pairs["query_id"], sort=False)
    ia, ib = np.searchsorted(levels, pairs["a"]), np.searchsorted(levels, pairs["b"])
    L = len(levels)
    per_q = np.zeros((len(questions), L * L))
    np.add.at(per_q, (q_codes, ia * L + ib), 1.0)
    value = _statistics(per_q.sum(axis=0, keepdims=True), levels)[0]
    lo = hi = np.full(len(STATISTICS), np.nan)
    if n_resamples:
        boot = _bootstrap(per_q, levels, n_resamples, seed)
        alpha = (1 - confidence) / 2
        lo, hi = np.nanquantile(boot, alpha, axis=0), np.nanquantile(boot, 1 - alpha, axis=0)
    return pd.DataFrame({
        "statistic": list(STATISTICS), "value": value, "ci_low": lo, "ci_high": hi,
        "confidence": confidence, "n_pairs": len(pairs), "n_questions": len(questions),
        "only_a": only_a, "only_b": only_b, "labels": ",".join(map(str, levels.tolist())),
    })


def _check(rel, confidence, n_resamples, seed) -> None:
    validate("agreement", rel=(rel, Interval(int), None), confidence=(confidence, CONFIDENCE),
             n_resamples=(n_resamples, Interval(int, 0, None)), seed=(seed, SEED))


def _shared_pairs(a: pd.DataFrame, b: pd.DataFrame, rel: int | None):
    """Labels both golden sets give: per (question, subtopic, document) when both have
    subtopics (diversity qrels), else per (question, document), a golden set with
    subtopics reading each document's largest label over them."""
    keys = ["query_id", "doc_id"]
    if "subtopic" in a and "subtopic" in b:
        keys = ["query_id", "subtopic", "doc_id"]
    else:
        a, b = (t.groupby(keys, as_index=False, sort=False)["relevance"].max() if "subtopic" in t else t
                for t in (a, b))
    a, b = a[a["relevance"] >= 0], b[b["relevance"] >= 0]
    both = a.merge(b, on=keys, how="inner", suffixes=("_a", "_b"))
    if both.empty:
        raise ValueError("agreement: the two golden sets share no judged (question, document) pair")
    la, lb = both["relevance_a"].to_numpy(np.int64), both["relevance_b"].to_numpy(np.int64)
    if rel is not None:
        la, lb = (la >= rel).astype(np.int64), (lb >= rel).astype(np.int64)
    pairs = pd.DataFrame({"query_id": both["query_id"], "a": la, "b": lb})
    return pairs, len(a) - len(both), len(b) - len(both)


def _statistics(counts: np.ndarray, levels: np.ndarray) -> np.ndarray:
    """Every statistic for each row of flattened L x L confusion counts (R, L*L) -> (R, 7)."""
    L = len(levels)
    C = counts.reshape(-1, L, L)
    N = C.sum(axis=(1, 2))
    with np.errstate(invalid="ignore", divide="ignore"):
        P = C / N[:, None, None]
        ra, rb = P.sum(axis=2), P.sum(axis=1)
        expected = ra[:, :, None] * rb[:, None, :]
        pos = np.arange(L, dtype=np.float64)
        out = [np.trace(P, axis1=1, axis2=2)]
        for w in (pos[:, None] != pos[None, :], np.abs(pos[:, None] - pos[None, :]), (pos[:, None] - pos[None, :]) ** 2):
            w = w.astype(np.float64)
            out.append(1 - (P * w).sum(axis=(1, 2)) / (expected * w).sum(axis=(1, 2)))
        O = C + C.transpose(0, 2, 1)
        n_c = O.sum(axis=2)
        n = n_c.sum(axis=1)
        for delta in _alpha_deltas(n_c, levels):
            observed = (O * delta).sum(axis=(1, 2))
            chance = (n_c[:, :, None] * n_c[:, None, :] * delta).sum(axis=(1, 2))
            out.append(1 - (n - 1) * observed / chance)
    return np.stack(out, axis=1)


def _alpha_deltas(n_c: np.ndarray, levels: np.ndarray):
    """Krippendorff's squared metric differences: nominal, ordinal (per row), interval."""
    L = len(levels)
    nominal = np.broadcast_to((~np.eye(L, dtype=bool)).astype(np.float64), (len(n_c), L, L))
    cum = np.cumsum(n_c, axis=1)
    lo, hi = np.minimum.outer(np.arange(L), np.arange(L)), np.maximum.outer(np.arange(L), np.arange(L))
    between = cum[:, hi] - cum[:, lo] + n_c[:, lo]  # sum of the level counts from c to k
    ordinal = (between - (n_c[:, :, None] + n_c[:, None, :]) / 2) ** 2
    interval = np.broadcast_to(np.subtract.outer(levels, levels).astype(np.float64) ** 2, (len(n_c), L, L))
    return nominal, ordinal, interval


def _bootstrap(per_q: np.ndarray, levels: np.ndarray, n_resamples: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    Q = len(per_q)
    batch = max(1, min(n_resamples, 2_000_000 // max(Q, 1)))
    out = []
    for start in range(0, n_resamples, batch):
        m = min(batch, n_resamples - start)
        weights = rng.multinomial(Q, np.full(Q, 1.0 / Q), size=m).astype(np.float64)
        out.append(_statistics(weights @ per_q, levels))
    return np.concatenate(out)
