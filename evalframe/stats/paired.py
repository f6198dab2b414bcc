"""Paired comparisons: ``compare`` = validation + one function per test + corrections.

Each test is a :class:`PairedTest` in the :data:`PAIRED_TESTS` registry. Analytic and
sign-flip tests are a ``run(data, options)`` function; the bootstrap test is a
``from_bootstrap(boot, observed, D, B)`` function fed by the one bootstrap pass that also
gives the bootstrap / BCa interval, so a call never draws the same bootstrap twice.
"""
from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import pandas as pd

from evalframe.errors import EvalframeInputError, FewClustersWarning, InputProblem, UnpairedQuestionsWarning
from evalframe.errors import warn as warn_user

from .corrections import adjust_pvalues, tukey_pvalues
from .effects import cohens_dz, dz_interval, wins_ties_losses
from .resampling import (
    EXACT_MAX_N,
    FEW_CLUSTERS,
    bca_ci,
    bootstrap_means,
    bootstrap_t_statistics,
    cluster_se,
    cluster_sums,
    column_batches,
    jackknife_means,
    percentile_ci,
    same_question_sets,
    sign_flip_interval,
    sign_flip_pvalues,
)
from .validation import (
    ALTERNATIVES,
    CI_METHODS,
    CORRECTIONS,
    TESTS,
    WILCOXON_METHODS,
    Alternative,
    CiMethod,
    Correction,
    TestName,
    WilcoxonMethod,
    as_list,
    check_choice,
    check_cluster,
    check_confidence,
    check_resamples,
    check_seed,
    check_tie_threshold,
    clean_table,
    param_error,
    run_starts,
    sorted_codes,
)

__all__ = ["warn_dropped", "compare", "CompareOptions", "PairedData", "systems_and_pairs", "paired_data", "TestOutcome", "PairedTest", "PAIRED_TESTS",
           "adjusted_interval", "CI_ADJUSTMENTS", "ROUND_OFF"]


@dataclass(frozen=True)
class CompareOptions:
    """The validated options of one ``compare`` call."""

    test: str
    ci: str
    correction: str | None
    confidence: float
    n_resamples: int
    seed: int
    exact: bool | None
    tie_threshold: float
    cluster: str | None
    alternative: str = "two-sided"
    wilcoxon_method: str = "normal"


#: a spread (sd of d, or the cluster se) at most this times mean(|d|) is float round-off
#: of equal differences (0.19999999999999998, 0.2, ...) and counts as 0, as the
#: randomisation test's guard counts ties at 1e-10 of sum(|d|)
ROUND_OFF = 1e-10


@dataclass
class PairedData:
    """One entry per (family, pair): the paired differences and their summaries."""

    systems: list
    fam: list[tuple]                 #: (by..., measure) of each entry
    a: np.ndarray                    #: system index of system_a
    b: np.ndarray
    rows: list[np.ndarray]           #: rows of ``W`` both systems answer
    dropped: np.ndarray              #: questions only one of them answers
    W: np.ndarray                    #: (family x question) rows x systems, NaN if absent
    fam_rows: dict[tuple, np.ndarray]
    qids: np.ndarray                 #: query_id of each row of ``W``
    xa: list[np.ndarray]
    xb: list[np.ndarray]
    codes: list[np.ndarray] | None   #: cluster codes 0..G-1 per entry's questions
    n: np.ndarray = field(init=False)
    ds: list[np.ndarray] = field(init=False)
    diff: np.ndarray = field(init=False)
    sd: np.ndarray = field(init=False)
    #: bootstrap distributions drawn so far (see :meth:`bootstrap`)
    boots: dict = field(init=False, default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self.n = np.array([len(r) for r in self.rows], dtype=np.int64)
        self.ds = [xb - xa for xa, xb in zip(self.xa, self.xb)]
        self.diff = np.array([d.mean() if d.size else np.nan for d in self.ds])
        sd = np.array([d.std(ddof=1) if d.size > 1 else np.nan for d in self.ds])
        self.sd = np.where(sd <= ROUND_OFF * self.scale, 0.0, sd)

    @cached_property
    def scale(self) -> np.ndarray:
        """mean(|d|) per entry: the scale of the round-off guard."""
        return np.array([np.abs(d).mean() if d.size else np.nan for d in self.ds])

    @property
    def k(self) -> int:
        return len(self.rows)

    @cached_property
    def n_clusters(self) -> np.ndarray | None:
        if self.codes is None:
            return None
        return np.array([len(np.unique(c)) for c in self.codes], dtype=np.int64)

    @cached_property
    def se_df(self) -> tuple[np.ndarray, np.ndarray]:
        """Standard error of mean(d) and degrees of freedom (cluster-robust with clusters)."""
        nf = self.n.astype(np.float64)
        if self.codes is None:
            with np.errstate(divide="ignore", invalid="ignore"):
                return self.sd / np.sqrt(nf), nf - 1
        se = np.array([cluster_se(d, c, m) if d.size else np.nan
                       for d, c, m in zip(self.ds, self.codes, self.diff)])
        se = np.where(se <= ROUND_OFF * self.scale, 0.0, se)
        return se, self.n_clusters.astype(np.float64) - 1

    def usable(self) -> np.ndarray:
        """Entries with >= 2 questions (and >= 2 clusters)."""
        ok = self.n >= 2
        if self.codes is not None:
            ok &= self.n_clusters >= 2
        return ok

    @cached_property
    def question_sets(self) -> list[np.ndarray]:
        """Usable entries grouped by shared questions (one resampling draw per group)."""
        return [np.asarray(i) for i in
                same_question_sets(self.rows, self.qids, np.flatnonzero(self.usable()))]

    def stacked(self, idx: np.ndarray) -> np.ndarray:
        return np.column_stack([self.ds[i] for i in idx])

    def bootstrap(self, entries: np.ndarray, sub: np.ndarray, clusters: np.ndarray | None,
                  n_resamples: int, seed: int) -> np.ndarray:
        """:func:`bootstrap_means` of ``sub`` (the differences of ``entries``), drawn once per
        (entries, n_resamples, seed): the intervals at other levels (one-sided, adjusted
        for the family) read the same distribution instead of drawing it again."""
        key = (tuple(int(i) for i in entries), n_resamples, seed)
        if key not in self.boots:
            self.boots[key] = bootstrap_means(sub, n_resamples=n_resamples, seed=seed, clusters=clusters)
        return self.boots[key]


@dataclass
class TestOutcome:
    """Statistic, p-value (of ``opts.alternative``) and resamples used (0 if none) per entry."""

    statistic: np.ndarray
    p_value: np.ndarray
    n_resamples: np.ndarray

    @classmethod
    def empty(cls, k: int) -> TestOutcome:
        return cls(np.full(k, np.nan), np.full(k, np.nan), np.zeros(k, dtype=np.int64))


@dataclass(frozen=True)
class PairedTest:
    """A registered paired test (see the module docstring)."""

    default_ci: str
    clustered: bool
    run: Callable[[PairedData, CompareOptions], TestOutcome] | None = None
    from_bootstrap: Callable[[np.ndarray, np.ndarray, np.ndarray, int, str], np.ndarray] | None = None


# ------------------------------------------------------------------------ the tests
def tail_pvalue(z, alternative: str, sf: Callable, cdf: Callable, *args) -> np.ndarray:
    """P-value of a statistic ``z`` whose null distribution has survival function ``sf``
    and cdf ``cdf`` (symmetric about 0): ``sf(z)`` for "greater", ``cdf(z)`` for "less",
    ``2 sf(|z|)`` (at most 1) for "two-sided"."""
    if alternative == "greater":
        return sf(z, *args)
    if alternative == "less":
        return cdf(z, *args)
    return np.minimum(1.0, 2 * sf(np.abs(z), *args))


def t_test(data: PairedData, opts: CompareOptions) -> TestOutcome:
    """``t = mean(d) / se`` with df = n - 1 (clusters: CR1 se, df = G - 1)."""
    from scipy import stats as st

    res = TestOutcome.empty(data.k)
    ok = data.usable()
    se, df_t = data.se_df
    with np.errstate(divide="ignore", invalid="ignore"):
        tstat = data.diff / se
        pv = tail_pvalue(tstat, opts.alternative, st.t.sf, st.t.cdf, df_t)
        at_se0 = tail_pvalue(np.sign(data.diff) * np.inf, opts.alternative, st.norm.sf,
                             st.norm.cdf)  # sd 0: the observed sign decides
    pv = np.where(se == 0, np.where(data.diff == 0, 1.0, at_se0), pv)
    res.statistic[ok] = tstat[ok]
    res.p_value[ok] = pv[ok]
    return res


def wilcoxon_signed_rank(d: np.ndarray, exact: bool,
                         alternative: str = "two-sided") -> tuple[float, float]:
    """Signed-rank test as R's wilcox.test(b, a, paired=TRUE, exact=, correct=TRUE,
    alternative=): V and the p-value (exact only without ties and zeros, as R)."""
    from scipy import stats as st

    nonzero = d != 0
    d = d[nonzero]
    m = d.size
    if m == 0:
        return math.nan, 1.0
    r = st.rankdata(np.abs(d))
    v = float(r[d > 0].sum())
    _, ties = np.unique(r, return_counts=True)
    if exact and nonzero.all() and (ties == 1).all():
        return v, float(st.wilcoxon(d, method="exact", alternative=alternative).pvalue)
    z = v - m * (m + 1) / 4
    sigma = math.sqrt(m * (m + 1) * (2 * m + 1) / 24 - (ties ** 3 - ties).sum() / 48)
    if sigma == 0:
        return v, 1.0
    shift = {"greater": 0.5, "less": -0.5}.get(alternative, math.copysign(0.5, z) if z else 0.0)
    return v, float(tail_pvalue((z - shift) / sigma, alternative, st.norm.sf, st.norm.cdf))


def wilcoxon_test(data: PairedData, opts: CompareOptions) -> TestOutcome:
    """Wilcoxon signed-rank test per entry (zero differences dropped)."""
    res = TestOutcome.empty(data.k)
    for i in np.flatnonzero(data.usable()):
        res.statistic[i], res.p_value[i] = wilcoxon_signed_rank(
            data.ds[i], opts.wilcoxon_method == "exact", opts.alternative)
    return res


def sign_test(data: PairedData, opts: CompareOptions) -> TestOutcome:
    """Binomial test of wins against losses (ties dropped)."""
    from scipy import stats as st

    res = TestOutcome.empty(data.k)
    wins, _, losses = wins_ties_losses(data.ds, opts.tie_threshold)
    for i in np.flatnonzero(data.usable()):
        res.statistic[i] = wins[i]
        m = wins[i] + losses[i]
        res.p_value[i] = 1.0 if m == 0 else st.binomtest(
            int(wins[i]), int(m), 0.5, alternative=opts.alternative).pvalue
    return res


def flip_units(data: PairedData, idx: np.ndarray, opts: CompareOptions,
               ) -> tuple[np.ndarray, np.ndarray, bool]:
    """The exchangeable units of a question set: sums of the differences per question (or
    per cluster), the questions in each, and whether all 2**units sign flips are used."""
    D = data.stacked(idx)
    cl = None if data.codes is None else data.codes[idx[0]]  # same questions: same clusters
    if cl is None:
        U, sizes = D, np.ones(D.shape[0])
    else:
        U, sizes = cluster_sums(D, cl)
    nu = U.shape[0]
    use_exact = nu <= EXACT_MAX_N if opts.exact is None else bool(opts.exact)
    if use_exact and nu > 30:
        unit = "clusters" if cl is not None else "questions"
        raise ValueError(f"compare: exact=True needs 2**n sign flips; n = {nu} {unit} "
                         "is too many (max 30)")
    return U, sizes, use_exact


def randomization_test(data: PairedData, opts: CompareOptions) -> TestOutcome:
    """Sign flips of the questions (or of whole clusters), all 2**n when exact."""
    res = TestOutcome.empty(data.k)
    for idx in data.question_sets:
        D = data.stacked(idx)
        U, _, use_exact = flip_units(data, idx, opts)
        res.p_value[idx], res.n_resamples[idx] = sign_flip_pvalues(
            U, n_resamples=opts.n_resamples, seed=opts.seed, exact=use_exact,
            alternative=opts.alternative)
        res.statistic[idx] = D.mean(axis=0)
    return res


def studentized_draws(data: PairedData, idx: np.ndarray, opts: CompareOptions) -> np.ndarray:
    """Sakai's (2006) bootstrap distribution of a question set: t* of resamples of the
    centred differences ``w = d - mean(d)`` (H0 made true), drawn once per (entries,
    n_resamples, seed) and shared by the test and its interval."""
    key = ("t*", tuple(int(i) for i in idx), opts.n_resamples, opts.seed)
    if key not in data.boots:
        D = data.stacked(idx)
        data.boots[key] = bootstrap_t_statistics(D - D.mean(axis=0), n_resamples=opts.n_resamples,
                                                 seed=opts.seed)
    return data.boots[key]


def bootstrap_t_test(data: PairedData, opts: CompareOptions) -> TestOutcome:
    """Sakai's (2006) paired bootstrap test: ``t = mean(d) / (sd(d) / sqrt(n))`` against
    the t* of B resamples of ``w = d - mean(d)``; ``p = (#{|t*| >= |t|} + 1) / (B + 1)``
    (``t* >= t`` for "greater", ``t* <= t`` for "less")."""
    res = TestOutcome.empty(data.k)
    se, _ = data.se_df
    with np.errstate(divide="ignore", invalid="ignore"):
        tstat = np.where(se > 0, data.diff / se, np.sign(data.diff) * np.inf)
    tstat = np.where((se == 0) & (data.diff == 0), 0.0, tstat)
    B = opts.n_resamples
    for idx in data.question_sets:
        T = studentized_draws(data, idx, opts)
        t = tstat[idx]
        if opts.alternative == "greater":
            b = (T >= t).sum(axis=0)
        elif opts.alternative == "less":
            b = (T <= t).sum(axis=0)
        else:
            b = (np.abs(T) >= np.abs(t)).sum(axis=0)
        res.p_value[idx] = (b + 1) / (B + 1)
        res.statistic[idx] = t
        res.n_resamples[idx] = B
    return res


def bootstrap_t_ci(data: PairedData, opts: CompareOptions) -> tuple[np.ndarray, np.ndarray]:
    """The interval that inverts :func:`bootstrap_t_test`: the shift delta is kept while
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


def bootstrap_shift_pvalues(boot: np.ndarray, observed: np.ndarray, D: np.ndarray,
                            n_resamples: int, alternative: str = "two-sided") -> np.ndarray:
    """Shift-method bootstrap p-values ``(b + 1) / (B + 1)``, b = #{|m* - m| >= |m|}
    (two-sided), #{m* - m >= m} ("greater") or #{m* - m <= m} ("less")."""
    tol = 1e-12 * np.abs(D).sum(axis=0)
    shifted = boot - observed
    if alternative == "greater":
        b = (shifted >= observed - tol).sum(axis=0)
    elif alternative == "less":
        b = (shifted <= observed + tol).sum(axis=0)
    else:
        b = (np.abs(shifted) >= np.abs(observed) - tol).sum(axis=0)
    return (b + 1) / (n_resamples + 1)


PAIRED_TESTS: dict[str, PairedTest] = {
    "t": PairedTest("t", clustered=True, run=t_test),
    "randomization": PairedTest("randomization", clustered=True, run=randomization_test),
    "bootstrap": PairedTest("bootstrap", clustered=True, from_bootstrap=bootstrap_shift_pvalues),
    "bootstrap-t": PairedTest("bootstrap-t", clustered=False, run=bootstrap_t_test),
    "wilcoxon": PairedTest("t", clustered=False, run=wilcoxon_test),
    "sign": PairedTest("t", clustered=False, run=sign_test),
}


# ------------------------------------------------------------------ intervals of diff
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
            confidence=opts.confidence, alternative=opts.alternative)
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
            boot = data.bootstrap(ii, sub, cl, B, opts.seed)
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


# --------------------------------------------------------------------- corrections
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
                                      n_resamples=opts.n_resamples, seed=opts.seed, label=fam)
        else:
            padj[idx] = adjust_pvalues(p_value[idx], corr)
    return padj, used


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


# ------------------------------------------------------------------ input and layout
def _options(test, correction, ci, confidence, n_resamples, seed, exact, tie_threshold,
             cluster, alternative="two-sided", wilcoxon_method=None) -> CompareOptions:
    """Validate every option up front."""
    check_choice("compare", "test", test, TESTS)
    check_choice("compare", "alternative", alternative, ALTERNATIVES)
    if wilcoxon_method is not None:
        check_choice("compare", "wilcoxon_method", wilcoxon_method, WILCOXON_METHODS)
    if alternative != "two-sided" and correction in ("tukey", "randomized-tukey"):
        raise param_error("compare", "correction", "'holm', 'bonferroni', 'bh' or 'none' "
                          "with a one-sided alternative (Tukey HSD is two-sided)", correction)
    if correction is not None:
        check_choice("compare", "correction", correction, CORRECTIONS)
    if ci is not None:
        check_choice("compare", "ci", ci, CI_METHODS)
    check_confidence(confidence, func="compare")
    check_resamples(n_resamples, func="compare")
    check_seed(seed, func="compare")
    check_tie_threshold(tie_threshold, func="compare")
    check_cluster(cluster, func="compare")
    if cluster is not None:
        if not PAIRED_TESTS[test].clustered:
            raise ValueError(
                f"compare: test={test!r} assumes independent questions and does not support "
                "cluster=; use test='t', 'randomization' or 'bootstrap'")
        if correction in ("tukey", "randomized-tukey"):
            raise ValueError(
                f"compare: correction={correction!r} assumes independent questions and does "
                "not support cluster=; use 'holm', 'bonferroni', 'bh' or 'none'")
        if ci == "bootstrap-t":
            raise ValueError("compare: ci='bootstrap-t' assumes independent questions and does "
                             "not support cluster=; use 't', 'randomization', 'bootstrap' or 'bca'")
    return CompareOptions(test=test, ci=ci or PAIRED_TESTS[test].default_ci,
                          correction=correction, confidence=confidence,
                          n_resamples=n_resamples, seed=seed, exact=exact,
                          tie_threshold=tie_threshold, cluster=cluster, alternative=alternative,
                          wilcoxon_method=wilcoxon_method or ("exact" if exact else "normal"))


def systems_and_pairs(df: pd.DataFrame, baseline: str | None,
                       ) -> tuple[list, list[tuple[int, int]]]:
    """Systems in order of first appearance; every pair, or baseline vs each other."""
    systems = list(pd.unique(df["system"]))
    problems = []
    if len(systems) < 2:
        problems.append(InputProblem(
            f"only one system ({systems[0] if systems else 'none'!r}); compare() needs at "
            "least two", "evaluate two or more systems on the same questions (column 'system')"))
    if baseline is not None and baseline not in systems:
        problems.append(InputProblem(
            f"baseline {baseline!r} is not a system of the table (systems: {systems[:10]})",
            "pass one of the values of the 'system' column"))
    if problems:
        raise EvalframeInputError("per_question", problems)
    if baseline is None:
        return systems, list(itertools.combinations(range(len(systems)), 2))
    b = systems.index(baseline)
    return systems, [(b, j) for j in range(len(systems)) if j != b]


def _wide(df: pd.DataFrame, systems: list, fam_keys: list[str], cluster: str | None,
          known: dict[str, np.ndarray] | None = None):
    """(family x question) x system matrix, its query ids, clusters and family rows
    (``known``: column codes :func:`clean_table` found)."""
    codes = sorted_codes(df, [*fam_keys, "query_id"], known=known)
    if codes is not None:
        return _wide_from_codes(df, codes, systems, fam_keys, cluster)
    wide = df.set_index([*fam_keys, "query_id", "system"])["value"].unstack("system")
    wide = wide.reindex(columns=systems)
    qids = wide.index.get_level_values("query_id").to_numpy()
    clusters = None
    if cluster:  # a question sits in one cluster (checked by clean_table)
        of_q = df.drop_duplicates("query_id").set_index("query_id")[cluster]
        clusters = pd.factorize(of_q.reindex(qids).to_numpy())[0]
    fam_index = wide.index.droplevel("query_id")
    fam_rows = {
        (key if isinstance(key, tuple) else (key,)): rows
        for key, rows in pd.Series(np.arange(len(wide))).groupby(
            [fam_index.get_level_values(k) for k in fam_keys], sort=False).indices.items()}
    return wide.to_numpy(dtype=np.float64), qids, clusters, fam_rows


def _wide_from_codes(df: pd.DataFrame, codes: list[np.ndarray], systems: list, fam_keys: list[str],
                     cluster: str | None):
    """:func:`_wide` on integer codes: the rows sorted by (family, question) as ``unstack``
    sorts them, one column per system (NaN where a system has no value)."""
    order = np.lexsort(codes[::-1])
    new_row = run_starts([c[order] for c in codes])
    row_of = np.empty(len(df), dtype=np.int64)
    row_of[order] = np.cumsum(new_row) - 1
    first = order[new_row]  # a row of the table for each (family, question)
    col = pd.Index(systems).get_indexer(df["system"])
    W = np.full((len(first), len(systems)), np.nan)
    W[row_of, col] = df["value"].to_numpy(dtype=np.float64)
    qids = df["query_id"].to_numpy()[first]
    clusters = None
    if cluster:  # a question sits in one cluster (checked by clean_table)
        of_q = df.drop_duplicates("query_id").set_index("query_id")[cluster]
        clusters = pd.factorize(of_q.reindex(qids).to_numpy())[0]
    fam_rows = {}
    if len(first):
        starts = np.flatnonzero(run_starts([c[first] for c in codes[:-1]]))
        ends = np.r_[starts[1:], len(first)]
        keys = df[fam_keys].take(first[starts])
        for key, a, b in zip(keys.itertuples(index=False, name=None), starts, ends):
            fam_rows[tuple(key)] = np.arange(a, b)
    return W, qids, clusters, fam_rows


def paired_data(df: pd.DataFrame, systems: list, pairs: list[tuple[int, int]],
                fam_keys: list[str], cluster: str | None, *,
                known: dict[str, np.ndarray] | None = None) -> PairedData:
    """Pair the systems on shared questions within each family (by..., measure);
    ``known``: codes of ``df``'s columns :func:`clean_table` found (reused)."""
    W, qids, clusters, fam_rows = _wide(df, systems, fam_keys, cluster, known)
    fam, a, b, rows, dropped = [], [], [], [], []
    for key, fr in fam_rows.items():
        present = ~np.isnan(W[fr])
        for ia, ib in pairs:
            both = present[:, ia] & present[:, ib]
            either = present[:, ia] | present[:, ib]
            if not either.any():
                continue  # neither system has this measure / segment
            fam.append(key)
            a.append(ia)
            b.append(ib)
            rows.append(fr[both])
            dropped.append(int(either.sum() - both.sum()))
    codes = None if clusters is None else [pd.factorize(clusters[r])[0] for r in rows]
    return PairedData(systems=systems, fam=fam, a=np.array(a, dtype=np.int64),
                      b=np.array(b, dtype=np.int64), rows=rows,
                      dropped=np.array(dropped, dtype=np.int64), W=W, fam_rows=fam_rows,
                      qids=qids, xa=[W[r, i] for r, i in zip(rows, a)],
                      xb=[W[r, i] for r, i in zip(rows, b)], codes=codes)


def warn_dropped(data: PairedData, caller: str = "compare") -> None:
    """The warning that questions only one system of a pair answers were left out."""
    total = int(data.dropped.sum())
    if total:
        w = int(np.argmax(data.dropped))
        warn_user(
            f"{caller}(): {total} questions dropped (summed over pairs) because only one system "
            f"of a pair answers them (e.g. {data.dropped[w]} for {data.systems[data.a[w]]} vs "
            f"{data.systems[data.b[w]]}); see column n_dropped", UnpairedQuestionsWarning)


def _warn_few_clusters(data: PairedData, opts: CompareOptions) -> None:
    """A cluster bootstrap (test or interval) with fewer than FEW_CLUSTERS clusters."""
    if data.codes is None or not data.k:
        return
    boot = [w for w, on in (("test='bootstrap'", opts.test == "bootstrap"),
                            (f"ci={opts.ci!r}", opts.ci in ("bootstrap", "bca"))) if on]
    few = data.n_clusters[data.usable()] if data.usable().any() else np.array([], dtype=np.int64)
    if boot and few.size and few.min() < FEW_CLUSTERS:
        warn_user(f"compare({', '.join(boot)}, cluster={opts.cluster!r}): {int(few.min())} clusters "
                  f"(fewer than {FEW_CLUSTERS}); the cluster bootstrap rejects too often and its "
                  "interval under-covers with few clusters: use test='t' (cluster-robust, G - 1 df) "
                  "or test='randomization' (exact sign flips of the clusters up to 20)",
                  FewClustersWarning)


def _format_comparisons(data: PairedData, by: list[str], opts: CompareOptions,
                        res: TestOutcome, ci: tuple[np.ndarray, np.ndarray],
                        padj: np.ndarray, used: np.ndarray) -> pd.DataFrame:
    """The output table (see ``compare``'s Returns)."""
    k = data.k
    wins, ties, losses = wins_ties_losses(data.ds, opts.tie_threshold)
    out = pd.DataFrame({"measure": [f[-1] for f in data.fam]})
    for j, col in enumerate(by):
        out[col] = [f[j] for f in data.fam]
    out["system_a"] = [data.systems[i] for i in data.a]
    out["system_b"] = [data.systems[i] for i in data.b]
    out["n"] = data.n
    out["n_dropped"] = data.dropped
    out["cluster"] = pd.Series([opts.cluster] * k, dtype=object)
    out["n_clusters"] = pd.array(data.n_clusters if opts.cluster else [pd.NA] * k, dtype="Int64")
    out["mean_a"] = np.array([x.mean() if len(x) else np.nan for x in data.xa])
    out["mean_b"] = np.array([x.mean() if len(x) else np.nan for x in data.xb])
    out["diff"] = data.diff
    out["sd_diff"] = data.sd
    out["ci_low"], out["ci_high"] = ci
    out["ci_method"] = opts.ci
    out["statistic"] = res.statistic
    out["p_value"] = res.p_value
    out["p_adjusted"] = padj
    out["test"] = opts.test
    out["alternative"] = opts.alternative
    out["correction"] = used.astype(str) if k else pd.Series([], dtype=str)
    out["effect_size"] = cohens_dz(data.diff, data.sd)
    # its interval: the noncentral t of iid questions (NaN with clusters of several questions)
    dz = out["effect_size"].to_numpy()
    if opts.cluster is not None:
        dz = np.where(data.n_clusters == data.n, dz, np.nan)
    out["effect_size_low"], out["effect_size_high"] = dz_interval(dz, data.n, opts.confidence)
    out["wins"], out["ties"], out["losses"] = wins, ties, losses
    out["confidence"] = float(opts.confidence)
    resampling = res.n_resamples > 0
    out["n_resamples"] = pd.array(np.where(resampling, res.n_resamples, 0), dtype="Int64")
    out["seed"] = pd.array(np.full(k, opts.seed), dtype="Int64")
    out.loc[~resampling, ["n_resamples", "seed"]] = pd.NA
    out["significant"] = out["p_adjusted"].to_numpy(dtype=float) < 1.0 - float(opts.confidence)
    return out


def compare(per_question: pd.DataFrame, *, baseline: str | None = None,
            test: TestName = "t", correction: Correction | None = None,
            ci: CiMethod | None = None, by: str | Sequence[str] | None = None,
            n_resamples: int = 10_000, seed: int = 0, confidence: float = 0.95,
            exact: bool | None = None, tie_threshold: float = 0.0,
            cluster: str | None = None, alternative: Alternative = "two-sided",
            wilcoxon_method: WilcoxonMethod | None = None, adjusted_ci: bool = False) -> pd.DataFrame:
    """Paired comparison of systems on the questions they share.

    Parameters
    ----------
    per_question : DataFrame
        Tidy per-question table ``system, query_id, measure, value`` with >= 2 systems.
    baseline : str, optional
        Compare this system (always ``system_a``) with every other system. Without it,
        every pair, ``system_a`` before ``system_b`` in order of first appearance.
    test : {"t", "randomization", "bootstrap", "bootstrap-t", "wilcoxon", "sign"}
        Paired test (see Notes for each null hypothesis).
    correction : {"holm", "bonferroni", "bh", "none", "tukey", "randomized-tukey"}, optional
        Multiple-comparison adjustment over the family of comparisons of one measure
        (and segment). Default: ``"holm"`` when the family has several comparisons,
        ``"none"`` for a single one.
    ci : {"t", "randomization", "bootstrap", "bca", "none"}, optional
        Interval of ``diff``. Default: ``"randomization"`` (the interval that inverts
        the randomisation test, with its sign flips) for the randomisation test,
        ``"bootstrap"`` (percentile) for the bootstrap test, ``"t"`` otherwise. The
        default of the t and randomisation tests is the inversion of the test itself, so
        the interval excludes 0 exactly when ``p_value < 1 - confidence``.
    by : str or list of str, optional
        Segment columns; comparisons are made within each segment.
    n_resamples, seed : int
        Resamples and seed of the randomisation test, the bootstrap and the randomised
        Tukey HSD.
    confidence : float
        Confidence level of the interval (and of the adjusted intervals' family; Tukey
        corrections adjust the p-values only: their adjusted interval is Bonferroni's).
    exact : bool, optional
        Randomisation test: enumerate all 2**n sign flips (default when n <= 20; with
        ``cluster``, all 2**G flips of the G clusters, default when G <= 20).
        Wilcoxon: ``exact=True`` is ``wilcoxon_method="exact"`` (kept for compatibility).
    alternative : {"two-sided", "greater", "less"}
        H1 of every paired test, with ``d = value_b - value_a``: ``"greater"`` is
        H1: system_b scores higher than system_a (E[d] > 0, or d shifted above 0),
        ``"less"`` H1: system_b lower. Also makes the interval one-sided (see Notes).
    wilcoxon_method : {"exact", "normal"}, optional
        Wilcoxon: ``"exact"``, the exact null distribution of V when there are no ties
        and no zero differences (as R's ``wilcox.test(exact=TRUE)``, which also falls
        back to the normal approximation otherwise); ``"normal"``, the normal
        approximation with tie and continuity correction (R's default for n >= 50,
        ``scipy.stats.wilcoxon(method="approx", correction=True)``). Default:
        ``"exact"`` if ``exact=True``, else ``"normal"``.
    tie_threshold : float
        ``|d| <= tie_threshold`` counts as a tie for wins/ties/losses and the sign test
        (Urbano et al. 2019 use 0.01); 0 means only equal values tie.
    cluster : str, optional
        Column naming the cluster of each question (e.g. the segment or topic family
        it was drawn with; a question sits in one cluster). The cluster, not the
        question, is then the independent unit: the bootstrap (interval and test)
        resamples whole clusters, the randomisation test flips the signs of whole
        clusters, and ``t`` (test and interval) uses the cluster-robust standard error
        with G - 1 degrees of freedom (see Notes). ``bootstrap-t``, ``wilcoxon``,
        ``sign``, ``tukey`` and ``randomized-tukey`` assume independent questions and
        raise ValueError. With fewer than 30 clusters the cluster bootstrap (test or
        interval) warns (``FewClustersWarning``): use ``t`` or ``randomization``.
    adjusted_ci : bool
        Also give the interval adjusted for the family as the p-values are
        (columns ``ci_low_adjusted, ci_high_adjusted, ci_adjustment`` after
        ``ci_method``): Bonferroni-simultaneous for Holm, Bonferroni and Tukey,
        Benjamini-Yekutieli's false-coverage-rate interval for BH, the unadjusted
        one for ``"none"`` (see ``adjusted_interval``).  ``ci_low, ci_high``
        stay the unadjusted (per-comparison) interval. Use the ``"t"`` or
        ``"randomization"`` interval for it at small n: the percentile bootstrap at
        level ``1 - 0.05 / m`` under-covers (0.86 for all five at n = 15;
        ``benchmarks/sim_coverage.py``).

    Returns
    -------
    DataFrame
        One row per (measure, by..., system_a, system_b):

        ==================  ============================================================
        measure, *by*       the family
        system_a, system_b  str; the baseline is system_a
        n                   int, questions both systems answer (the pairs used)
        n_dropped           int, questions only one of them answers
        cluster             str, the ``cluster`` column name, or None
        n_clusters          Int64, clusters among the n questions (G); <NA> without
                            ``cluster``
        mean_a, mean_b      float, means over the n shared questions
        diff                float, mean_b - mean_a
        sd_diff             float, sd of the per-question differences (ddof = 1)
        ci_low, ci_high     float, interval of diff
        ci_method           str
        statistic           float: t; mean difference (randomisation, bootstrap);
                            V = sum of ranks of positive d (Wilcoxon); wins (sign)
        p_value             float, unadjusted, of ``alternative``
        p_adjusted          float, adjusted within the family
        test                str, as applied
        alternative         str, "two-sided", "greater" or "less"
        correction          str, as applied
        effect_size         float, Cohen's d_z = mean(d) / sd(d)
        effect_size_low,    float, its two-sided ``confidence`` interval, inverting the
        effect_size_high    noncentral t (``effects.dz_interval``); NaN with clusters
                            of several questions
        wins, ties, losses  int, questions where b > a, tie, b < a
        confidence          float
        n_resamples         Int64, resamples used (2**n when exact); <NA> if none
        seed                Int64
        significant         bool, ``p_adjusted < 1 - confidence`` (as the report's
                            comparisons)
        ==================  ============================================================

    Notes
    -----
    With per-question differences ``d_i = b_i - a_i`` on the n shared questions:

    - ``t``: ``t = mean(d) / (sd(d) / sqrt(n))``, df = n - 1; H0: E[d] = 0. Same as
      ``scipy.stats.ttest_rel(b, a)``; its interval is ``mean(d) +- t_{df} sd / sqrt(n)``.
    - ``randomization``: H0: the two systems are exchangeable on each question (the
      distribution of each d_i is symmetric about 0). Statistic mean(d); sign flips,
      all 2**n when exact, else B seeded random ones with ``p = (b + 1) / (B + 1)``.
      Its interval (``ci="randomization"``) is every shift delta the same test does
      not reject for ``d - delta`` (same sign flips, ``p >= 1 - confidence``): a sign
      vector keeping questions K and flipping F is at least as extreme exactly when
      delta lies between the means of d over K and over F, so the ends are order
      statistics of those means (``resampling.sign_flip_interval``).
    - ``bootstrap``: resample the n questions with replacement; the interval is the
      percentile interval of mean(d*), and the test uses the shift method,
      ``p = (#{|mean(d*) - mean(d)| >= |mean(d)|} + 1) / (B + 1)``. It is liberal
      (rejects too often) at small n, since the bootstrap distribution is too narrow.
    - ``bootstrap-t``: Sakai's (SIGIR 2006) paired bootstrap test, studentized: statistic
      ``t = mean(d) / (sd(d) / sqrt(n))``; B resamples of ``w = d - mean(d)`` (H0 made
      true) give ``t*``; ``p = (#{|t*| >= |t|} + 1) / (B + 1)`` (Sakai: ``#/B``). Its
      interval (``ci="bootstrap-t"``, the default) inverts it: ``mean(d) +- c se``
      with c the ``ceil(alpha (B + 1) - 1)``-th largest ``|t*|`` (the symmetric bootstrap-t
      interval). Questions only (no ``cluster``).
    - ``wilcoxon``: H0: d symmetric about 0 (median 0); zero differences dropped; normal
      approximation with tie and continuity correction, as R's ``wilcox.test``
      (``wilcoxon_method="exact"`` uses the exact null of V only when no difference is 0
      and none are tied, and the normal approximation otherwise, as R).
    - When every difference is the same (sd 0), ``scipy.stats.ttest_rel`` gives NaN;
      here the t-test gives p = 1 when every difference is 0 (identical systems on these
      questions) and otherwise the limit as sd -> 0 (two-sided p = 0; one-sided 0 or 1
      by the sign of the difference).
    - ``sign``: H0: P(b > a) = P(b < a); binomial test on wins vs losses (ties dropped).
      Ignores the size of differences, so it is the least powerful.
    - ``tukey``: questions are blocks of a two-way ANOVA (system + question) on the
      questions all systems share; ``MSE = SS_residual / ((q - 1)(s - 1))`` and
      ``p_adjusted = P(Q_{s, (q-1)(s-1)} >= |diff| / sqrt(MSE / q))`` (studentized
      range). ``randomized-tukey`` (Carterette 2012): permute the system labels within
      each question B times; ``p_adjusted = (#{max_i mean_i* - min_j mean_j* >= |diff|}
      + 1) / (B + 1)``. With both, ``p_value`` is still the chosen paired test.

    With ``cluster``, let the n questions fall in G clusters of sizes n_g with
    difference sums ``S_g = sum_{i in g} d_i``:

    - ``t``: ``se^2 = G / (G - 1) * sum_g (S_g - n_g mean(d))^2 / n^2`` (the CR1
      cluster-robust variance of a mean, as ``summarize``), ``t = mean(d) / se`` with
      df = G - 1; interval ``mean(d) +- t_{G-1} se``. With equal cluster sizes this is
      the one-sample t-test on the G cluster means; with one question per cluster it
      is the paired t-test above (equal up to float round-off).
    - ``bootstrap``: G clusters drawn with replacement; the resample mean is
      ``sum_g c_g S_g / sum_g c_g n_g`` (c_g = times drawn). ``bca`` uses the
      leave-one-cluster-out jackknife.
    - ``randomization``: H0: the systems are exchangeable within each cluster; all
      questions of a cluster share one sign flip, statistic mean(d).
    - Every p-value and interval needs G >= 2 (NaN otherwise). With one question per
      cluster every result equals the unclustered one up to float round-off: the same
      seeded draws of the same units (not just within Monte Carlo error), so the
      randomisation and bootstrap p-values are identical.

    Large n: sign flips and bootstrap counts are drawn ``n_resamples x n`` chunk by chunk
    (bounded memory), and their time grows as ``n_resamples x n``; at hundreds of
    thousands of questions the t-test (the default) and its interval agree with them to
    within their Monte Carlo error and take seconds: the large-n method to use.

    One-sided tests (``alternative``), with ``d = value_b - value_a`` (so
    ``"greater"`` is H1: system_b > system_a):

    - ``t``: ``p = P(T_df >= t)`` ("greater") or ``P(T_df <= t)`` ("less"), as
      ``scipy.stats.ttest_rel(b, a, alternative=...)``.
    - ``wilcoxon``: exact, ``P(V* >= V)`` or ``P(V* <= V)``; normal, ``z = (V - n(n+1)/4
      -+ 1/2) / sigma`` with the continuity correction towards the alternative (R's
      ``correct=TRUE``), ``p = 1 - Phi(z)`` or ``Phi(z)``.
    - ``sign``: ``P(Binom(m, 1/2) >= wins)`` or ``<= wins`` (m = wins + losses).
    - ``randomization``: counts ``T* >= T`` or ``T* <= T`` instead of ``|T*| >= |T|``;
      the exact enumeration gives the exact permutation p-value ``count / 2**n``
      (never 0: the identity flip counts), Monte Carlo ``(count + 1) / (B + 1)``.
    - ``bootstrap``: ``b = #{mean(d*) - mean(d) >= mean(d)}`` (or ``<=``),
      ``p = (b + 1) / (B + 1)``.
    - Intervals become one-sided bounds, as scipy's ``ttest_rel(...)
      .confidence_interval()`` and ``scipy.stats.bootstrap(alternative=...)``:
      ``"greater"`` gives ``[lower, inf)``, ``"less"`` ``(-inf, upper]``, where the bound
      is that of the two-sided interval at level ``2 confidence - 1`` (for ``t``,
      ``mean(d) - t_{df, confidence} se``).
    - Corrections (Holm, Bonferroni, BH) adjust these p-values unchanged; Tukey HSD
      is two-sided by construction and raises ValueError with a one-sided alternative.

    Randomisation and bootstrap p-values are never 0.

    Questions one of the two systems lacks are dropped (``n_dropped``), with an
    ``UnpairedQuestionsWarning``.

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"system": ["a"] * 4 + ["b"] * 4, "query_id": list("wxyz") * 2,
    ...                   "measure": "AP", "value": [.1, .2, .3, .4, .2, .4, .3, .6]})
    >>> r = compare(t, test="randomization")
    >>> round(float(r['diff'][0]), 3), float(r['p_value'][0]), int(r['n_resamples'][0])
    (0.125, 0.25, 16)
    """
    by = as_list(by)
    if not isinstance(adjusted_ci, (bool, np.bool_)):
        raise param_error("compare", "adjusted_ci", "True or False", adjusted_ci)
    opts = _options(test, correction, ci, confidence, n_resamples, seed, exact,
                    tie_threshold, cluster, alternative, wilcoxon_method)
    clashing = [c for c in by if c in ("cluster", "n_clusters")]
    if clashing:
        raise EvalframeInputError("per_question", [InputProblem(
            f"by= names reserved column{'s' if len(clashing) > 1 else ''} {clashing}",
            "rename the segment column: compare() outputs columns 'cluster' and 'n_clusters'")])
    known: dict[str, np.ndarray] = {}
    df = clean_table(per_question, by=by, cluster=cluster, codes=known)
    systems, pairs = systems_and_pairs(df, baseline)
    data = paired_data(df, systems, pairs, [*by, "measure"], cluster, known=known)
    warn_dropped(data)
    _warn_few_clusters(data, opts)
    spec = PAIRED_TESTS[opts.test]
    res = spec.run(data, opts) if spec.run is not None else TestOutcome.empty(data.k)
    interval = diff_interval(data, opts, spec, res)
    padj, used = correct(data, res.p_value, opts)
    out = _format_comparisons(data, by, opts, res, interval, padj, used)
    if adjusted_ci:
        lo, hi, how = adjusted_interval(data, opts, spec, padj, used)
        at = out.columns.get_loc("ci_method") + 1
        out.insert(at, "ci_adjustment", how.astype(str) if data.k else pd.Series([], dtype=str))
        out.insert(at, "ci_high_adjusted", hi)
        out.insert(at, "ci_low_adjusted", lo)
    return out
