"""Multiple-comparison corrections: p-value adjustment, Tukey HSD, randomised Tukey HSD, and
``correct``, which applies them to ``compare``'s comparisons family by family."""
from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from evalframe.errors import UnpairedQuestionsWarning
from evalframe.errors import warn as warn_user

from .resampling import chunk_rows, map_draws
from .validation import ADJUSTMENTS, PValueAdjustment, check_choice

if TYPE_CHECKING:  # annotations only
    from .paired_tests import CompareOptions
    from .pairing import PairedData


def adjust_pvalues(p: Sequence[float] | np.ndarray,
                   method: PValueAdjustment = "holm") -> np.ndarray:
    """Adjust a family of p-values for multiple comparisons.

    Parameters
    ----------
    p : array-like of float
        Unadjusted p-values of one family; NaN entries are ignored (and stay NaN).
    method : {"holm", "bonferroni", "bh", "none"}
        Holm's step-down (controls the family-wise error rate; uniformly better than
        Bonferroni), Bonferroni, Benjamini-Hochberg (controls the false discovery rate).

    Returns
    -------
    numpy.ndarray
        Adjusted p-values, same order as ``p``, capped at 1.

    Notes
    -----
    With m p-values sorted ascending ``p_(1) <= ... <= p_(m)``:
    Bonferroni ``min(1, m p)``; Holm ``max_{j <= i} min(1, (m - j + 1) p_(j))``;
    BH ``min_{j >= i} min(1, m p_(j) / j)``. Same as R's ``p.adjust``.

    Examples
    --------
    >>> adjust_pvalues([0.01, 0.04, 0.03], "holm").round(3).tolist()
    [0.03, 0.06, 0.06]
    """
    check_choice("adjust_pvalues", "method", method, ADJUSTMENTS)
    p = np.asarray(p, dtype=np.float64)
    outside = (p < 0) | (p > 1)
    if outside.any():
        raise ValueError(f"adjust_pvalues: p-values must lie in [0, 1] (NaN is kept as NaN), got "
                         f"{p[outside][:5].tolist()}")
    out = np.full(p.shape, np.nan)
    ok = ~np.isnan(p)
    q = p[ok]
    m = q.size
    if m == 0:
        return out
    if method == "none":
        adj = q.copy()
    elif method == "bonferroni":
        adj = np.minimum(1.0, q * m)
    else:
        order = np.argsort(q, kind="stable")
        s = q[order]
        rank = np.arange(1, m + 1)
        if method == "holm":
            a = np.maximum.accumulate(np.minimum(1.0, (m - rank + 1) * s))
        else:
            a = np.minimum.accumulate(np.minimum(1.0, m * s / rank)[::-1])[::-1]
        adj = np.empty(m)
        adj[order] = a
    out[ok] = adj
    return out


def _tukey_hsd(Y: np.ndarray, means: np.ndarray, diffs: np.ndarray) -> np.ndarray:
    """Studentized-range p-values, questions as blocks of a two-way ANOVA."""
    from scipy import stats as st

    q, s = Y.shape
    resid = Y - Y.mean(axis=1, keepdims=True) - means[None, :] + Y.mean()
    dfe = (q - 1) * (s - 1)
    mse = (resid ** 2).sum() / dfe
    if mse == 0:
        return np.where(diffs == 0, 1.0, 0.0)
    qstat = np.abs(diffs) / math.sqrt(mse / q)
    return np.minimum(1.0, st.studentized_range.sf(qstat, s, dfe))


def _randomized_tukey(Y: np.ndarray, diffs: np.ndarray, *, n_resamples: int,
                      seed: int, threads: int = 1) -> np.ndarray:
    """Carterette's randomised Tukey HSD: system labels permuted within each question
    (the uniforms drawn in order, chunk by chunk; the chunks' shuffles on ``threads``
    threads, the same counts under any number)."""
    q, s = Y.shape
    rng = np.random.default_rng(seed)
    threshold = np.abs(diffs) - 1e-10 * np.abs(Y).sum(axis=0).max() / q
    step = chunk_rows(q * s)
    rows = np.arange(q)[None, :, None]

    def draws():
        for start in range(0, n_resamples, step):
            yield rng.random((min(step, n_resamples - start), q, s))

    def exceed(u: np.ndarray) -> np.ndarray:
        perm = np.argsort(u, axis=2)
        m = Y[rows, perm].mean(axis=1)  # (c, s) system means after shuffling labels
        rng_stat = m.max(axis=1) - m.min(axis=1)
        return (rng_stat[:, None] >= threshold[None, :]).sum(axis=0)

    count = np.zeros(diffs.size, dtype=np.int64)
    for c in map_draws(exceed, draws(), threads=threads):
        count += c
    return (count + 1) / (n_resamples + 1)


def tukey_pvalues(V: np.ndarray, pairs: list[tuple[int, int]], kind: str, *,
                  n_resamples: int, seed: int, label: object, threads: int = 1) -> np.ndarray:
    """Family-wise p-values of Tukey HSD (``kind="tukey"``) or randomised Tukey HSD.

    ``V`` is (questions x systems) with NaN where a system lacks a question; only the
    questions every system of ``pairs`` answers are used (a warning names the others).
    """
    cols = sorted({c for p in pairs for c in p})
    Y = V[:, cols]
    complete = ~np.isnan(Y).any(axis=1)
    if not complete.all():
        warn_user(
            f"compare(correction={kind!r}) for {label}: {int((~complete).sum())} questions "
            "dropped because not every system answers them (Tukey HSD needs complete blocks)",
            UnpairedQuestionsWarning)
    Y = Y[complete]
    q, s = Y.shape
    pos = {c: i for i, c in enumerate(cols)}
    means = Y.mean(axis=0) if q else np.full(s, np.nan)
    diffs = np.array([means[pos[b]] - means[pos[a]] for a, b in pairs])
    if q < 2 or s < 2:
        return np.full(len(pairs), np.nan)
    if kind == "tukey":
        return _tukey_hsd(Y, means, diffs)
    return _randomized_tukey(Y, diffs, n_resamples=n_resamples, seed=seed, threads=threads)


# ------------------------------------------- compare's p-values, family by family
def correct(data: PairedData, p_value: np.ndarray, opts: CompareOptions,
            ) -> tuple[np.ndarray, np.ndarray]:
    """Adjusted p-values and the correction used, per family (by..., measure).

    Default: ``"holm"`` for a family of several comparisons, ``"none"`` for one.
    """
    padj = np.full(data.k, np.nan)
    used = np.empty(data.k, dtype=object)
    members: dict[tuple, list[int]] = {}
    for i, f in enumerate(data.fam):
        members.setdefault(f, []).append(i)
    for fam, idx in members.items():
        idx = np.asarray(idx)
        corr = opts.correction or ("holm" if len(idx) > 1 else "none")
        used[idx] = corr
        if corr in ("tukey", "randomized-tukey"):
            pairs = [(int(data.a[i]), int(data.b[i])) for i in idx]
            padj[idx] = tukey_pvalues(data.W[data.fam_rows[fam]], pairs, corr,
                                      n_resamples=opts.n_resamples, seed=opts.seed, label=fam,
                                      threads=opts.threads)
        else:
            padj[idx] = adjust_pvalues(p_value[idx], corr)
    return padj, used
