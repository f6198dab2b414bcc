"""Paired comparisons: ``compare`` = validation + one test of the registry
(:mod:`.paired_tests`) + the interval of the difference (:mod:`.paired_intervals`) +
corrections (:func:`.corrections.correct`), on the systems paired by :mod:`.pairing`.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from evalframe.errors import EvalframeInputError, FewClustersWarning, InputProblem
from evalframe.errors import warn as warn_user

from .corrections import correct
from .effects import cohens_dz, dz_interval, wins_ties_losses
from .paired_intervals import adjusted_interval, diff_interval
from .paired_tests import PAIRED_TESTS, CompareOptions, TestOutcome
from .pairing import PairedData, paired_data, systems_and_pairs, warn_dropped
from .resampling import FEW_CLUSTERS
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
)
from .._threads import resolve_threads
from .._validation import BOOLEAN, Options, check


# ------------------------------------------------------------------ input and output
def _options(test, correction, ci, confidence, n_resamples, seed, exact, tie_threshold,
             cluster, alternative="two-sided", wilcoxon_method=None, threads=None) -> CompareOptions:
    """Validate every option up front."""
    check_choice("compare", "test", test, TESTS)
    check_choice("compare", "alternative", alternative, ALTERNATIVES)
    if wilcoxon_method is not None:
        check_choice("compare", "wilcoxon_method", wilcoxon_method, WILCOXON_METHODS)
    if alternative != "two-sided" and correction in ("tukey", "randomized-tukey"):
        check("compare", "correction", correction, Options(
            ("holm", "bonferroni", "bh", "none"),
            "'holm', 'bonferroni', 'bh' or 'none' with a one-sided alternative (Tukey HSD is two-sided)"))
    if correction is not None:
        check_choice("compare", "correction", correction, CORRECTIONS)
    if ci is not None:
        check_choice("compare", "ci", ci, CI_METHODS)
    check_confidence(confidence, func="compare")
    check_resamples(n_resamples, func="compare")
    check_seed(seed, func="compare")
    check_tie_threshold(tie_threshold, func="compare")
    check_cluster(cluster, func="compare")
    threads = resolve_threads(threads, caller="compare")
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
                          wilcoxon_method=wilcoxon_method or ("exact" if exact else "normal"),
                          threads=threads)


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
            wilcoxon_method: WilcoxonMethod | None = None, adjusted_ci: bool = False,
            threads: int | None = None) -> pd.DataFrame:
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
    threads : int, optional
        Threads the resampling runs on (sign flips, bootstrap, randomised Tukey HSD: the
        chunks of resamples of one random stream are drawn in order, what is computed
        from them runs on the threads); default the environment variable
        ``EVALFRAME_THREADS``, else every core this process may use. The numbers are
        the same under any count.

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
    check("compare", "adjusted_ci", adjusted_ci, BOOLEAN)
    opts = _options(test, correction, ci, confidence, n_resamples, seed, exact,
                    tie_threshold, cluster, alternative, wilcoxon_method, threads)
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
