"""The registry of paired tests (:data:`PAIRED_TESTS`): each test is a :class:`PairedTest`.

Analytic and sign-flip tests are a ``run(data, options)`` function; the bootstrap test is a
``from_bootstrap(boot, observed, D, B)`` function fed by the one bootstrap pass that also
gives the bootstrap / BCa interval (:mod:`.paired_intervals`), so a call never draws the
same bootstrap twice.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .effects import wins_ties_losses
from .pairing import PairedData
from .resampling import EXACT_MAX_N, bootstrap_t_statistics, cluster_sums, sign_flip_pvalues


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
    threads: int = 1  #: chunks of resamples on this many threads (the numbers do not change)


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
            alternative=opts.alternative, threads=opts.threads)
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
                                                 seed=opts.seed, threads=opts.threads)
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

