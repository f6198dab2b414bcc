"""Intervals of a paired difference: the one ``compare(ci=...)`` chooses (t, inverted
randomisation test, bootstrap, BCa, bootstrap-t), one-sided bounds, and the intervals
adjusted for the family of comparisons as the p-values are.
"""
from __future__ import annotations

import dataclasses
import math

import numpy as np

from .pairing import PairedData
from .paired_tests import CompareOptions, PairedTest, TestOutcome, flip_units, studentized_draws
from .resampling import bca_ci, column_batches, jackknife_means, percentile_ci, sign_flip_interval


# ------------------------------------------------------------------ intervals of diff
def bootstrap_t_ci(data: PairedData, opts: CompareOptions) -> tuple[np.ndarray, np.ndarray]:
    """The interval that inverts :func:`.paired_tests.bootstrap_t_test`: the shift delta is kept while
    ``(#{|t*| >= |mean(d) - delta| / se} + 1) / (B + 1) >= 1 - confidence``, i.e.
    ``mean(d) +- c se`` with c the r-th largest |t*|, ``r = ceil(alpha (B + 1) - 1)``
    (the symmetric bootstrap-t interval); one-sided, the r-th largest t* ("greater") or
    smallest ("less"). Infinite when B is too small for alpha."""
    lo = np.full(data.k, np.nan)
    hi = np.full(data.k, np.nan)
    se, _ = data.se_df
    B = opts.n_resamples
    r = math.ceil((1 - opts.confidence) * (B + 1) - 1 - 1e-9)
    for idx in data.question_sets:
        T = studentized_draws(data, idx, opts)
        m, s = data.diff[idx], se[idx]
        if r <= 0:
            lo[idx], hi[idx] = -np.inf, np.inf
            continue
        if opts.alternative == "two-sided":
            c = -np.sort(-np.nan_to_num(np.abs(T), nan=-np.inf), axis=0)[r - 1]
            lo[idx], hi[idx] = m - c * s, m + c * s
        elif opts.alternative == "greater":
            c = -np.sort(-np.nan_to_num(T, nan=-np.inf), axis=0)[r - 1]
            lo[idx], hi[idx] = m - c * s, np.inf
        else:
            c = np.sort(np.nan_to_num(T, nan=np.inf), axis=0)[r - 1]
            lo[idx], hi[idx] = -np.inf, m - c * s
    return lo, hi


def t_ci(data: PairedData, confidence: float) -> tuple[np.ndarray, np.ndarray]:
    """``mean(d) +- t_{df} se`` on the usable entries, NaN elsewhere."""
    from scipy import stats as st

    lo = np.full(data.k, np.nan)
    hi = np.full(data.k, np.nan)
    ok = data.usable()
    se, df_t = data.se_df
    with np.errstate(invalid="ignore"):
        tq = st.t.ppf(1 - (1 - confidence) / 2, df_t)
    lo[ok] = (data.diff - tq * se)[ok]
    hi[ok] = (data.diff + tq * se)[ok]
    return lo, hi


def randomization_ci(data: PairedData, opts: CompareOptions,
                     ) -> tuple[np.ndarray, np.ndarray]:
    """The interval that inverts the randomisation test (``opts.alternative``, level
    ``opts.confidence``): the same sign flips as the test, so it excludes 0 exactly
    when the test's p is below ``1 - confidence`` (see ``resampling.sign_flip_interval``)."""
    lo = np.full(data.k, np.nan)
    hi = np.full(data.k, np.nan)
    for idx in data.question_sets:
        U, sizes, use_exact = flip_units(data, idx, opts)
        lo[idx], hi[idx] = sign_flip_interval(
            U, sizes, n_resamples=opts.n_resamples, seed=opts.seed, exact=use_exact,
            confidence=opts.confidence, alternative=opts.alternative, threads=opts.threads)
    return lo, hi


def bootstrap_pass(data: PairedData, opts: CompareOptions, test: PairedTest,
                   res: TestOutcome) -> tuple[np.ndarray, np.ndarray]:
    """One bootstrap of mean(d) per question set: the percentile / BCa interval (if
    ``opts.ci`` asks for one) and the bootstrap test (if ``test`` is one, into ``res``)."""
    lo = np.full(data.k, np.nan)
    hi = np.full(data.k, np.nan)
    B = opts.n_resamples
    for idx in data.question_sets:
        D = data.stacked(idx)
        cl = None if data.codes is None else data.codes[idx[0]]
        for cols in column_batches(len(idx), D.shape[0], B):
            sub, ii = D[:, cols], idx[cols]
            boot = data.bootstrap(ii, sub, cl, B, opts.seed, threads=opts.threads)
            obs = sub.mean(axis=0)
            if opts.ci == "bca":
                lo[ii], hi[ii] = bca_ci(boot, obs, jackknife_means(sub, cl), opts.confidence)
            elif opts.ci == "bootstrap":
                lo[ii], hi[ii] = percentile_ci(boot, opts.confidence)
            if test.from_bootstrap is not None:
                res.p_value[ii] = test.from_bootstrap(boot, obs, sub, B, opts.alternative)
                res.statistic[ii] = obs
        unset = res.n_resamples[idx] == 0  # a sign-flip test keeps its own count
        res.n_resamples[idx[unset]] = B
    return lo, hi


def diff_interval(data: PairedData, opts: CompareOptions, test: PairedTest,
                  res: TestOutcome) -> tuple[np.ndarray, np.ndarray]:
    """The interval of diff chosen by ``opts.ci`` (and the bootstrap test's p-values).

    One-sided (as scipy's ``ttest_rel(...).confidence_interval`` and ``bootstrap``): the
    bound of the two-sided interval at level ``2 confidence - 1``, the other end -inf
    ("greater") or inf ("less"). The randomisation interval inverts the one-sided test
    itself (see ``randomization_ci``)."""
    if opts.ci in ("randomization", "bootstrap-t"):
        if test.from_bootstrap is not None:  # the bootstrap test's p-values still need their pass
            bootstrap_pass(data, dataclasses.replace(opts, ci="none"), test, res)
        return randomization_ci(data, opts) if opts.ci == "randomization" else bootstrap_t_ci(data, opts)
    if opts.alternative == "two-sided":
        return two_sided_interval(data, opts, test, res)
    lo, hi = two_sided_interval(
        data, dataclasses.replace(opts, confidence=2 * opts.confidence - 1), test, res)
    keep = ~np.isnan(lo if opts.alternative == "greater" else hi)
    if opts.alternative == "greater":
        return lo, np.where(keep, np.inf, np.nan)
    return np.where(keep, -np.inf, np.nan), hi


def two_sided_interval(data: PairedData, opts: CompareOptions, test: PairedTest,
                       res: TestOutcome) -> tuple[np.ndarray, np.ndarray]:
    """The two-sided interval of diff chosen by ``opts.ci`` (see ``diff_interval``)."""
    if opts.ci in ("bootstrap", "bca") or test.from_bootstrap is not None:
        lo, hi = bootstrap_pass(data, opts, test, res)
    if opts.ci == "t":
        return t_ci(data, opts.confidence)
    if opts.ci == "none":
        return np.full(data.k, np.nan), np.full(data.k, np.nan)
    return lo, hi


# ------------------------------------------------- intervals adjusted for the family
#: How the adjusted interval of each correction is made (``ci_adjustment``).
CI_ADJUSTMENTS = {"holm": "bonferroni", "bonferroni": "bonferroni", "tukey": "bonferroni",
                  "randomized-tukey": "bonferroni", "bh": "fcr", "none": "none"}


def adjusted_interval(data: PairedData, opts: CompareOptions, test: PairedTest, padj: np.ndarray,
                      used: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Intervals of diff adjusted for the family of comparisons, as the p-values are.

    For a family of m comparisons: Holm, Bonferroni and Tukey get Bonferroni's
    simultaneous intervals, each at level ``1 - (1 - confidence) / m`` (all m cover
    their true differences with probability >= confidence); BH gets the
    false-coverage-rate intervals of Benjamini & Yekutieli (2005), at level
    ``1 - R (1 - confidence) / m`` with R the comparisons BH rejects (1 when none);
    ``"none"`` keeps the unadjusted interval.  With an interval that inverts the test
    (``t`` with the t-test, ``randomization`` with the randomisation test) the
    Bonferroni interval excludes 0 exactly when Bonferroni's adjusted p is below
    ``1 - confidence``.  Holm rejects at least what Bonferroni does, so a Holm
    family's interval clear of 0 implies significance, but not the converse: a
    Holm-significant difference can have an adjusted interval that touches or
    crosses 0.

    Returns
    -------
    (ci_low, ci_high, adjustment) : arrays, one entry per comparison.
    """
    alpha = 1 - opts.confidence
    level = np.full(data.k, opts.confidence)
    how = np.array([CI_ADJUSTMENTS.get(str(u), "bonferroni") for u in used], dtype=object)
    members: dict[tuple, list[int]] = {}
    for i, f in enumerate(data.fam):
        members.setdefault(f, []).append(i)
    for idx in members.values():
        idx = np.asarray(idx)
        m = len(idx)
        if how[idx[0]] == "bonferroni":
            level[idx] = 1 - alpha / m
        elif how[idx[0]] == "fcr":
            rejected = int(np.sum(padj[idx] < alpha))
            level[idx] = 1 - max(rejected, 1) * alpha / m
    lo, hi = np.full(data.k, np.nan), np.full(data.k, np.nan)
    for lv in np.unique(level):
        at = level == lv
        scratch = TestOutcome.empty(data.k)
        l, h = diff_interval(data, dataclasses.replace(opts, confidence=float(lv)), test, scratch)
        lo[at], hi[at] = l[at], h[at]
    return lo, hi, how


