"""Confidence intervals of means: ``summarize`` and one short function per interval."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from evalframe.errors import EvalframeInputError, FewClustersWarning, InputProblem
from evalframe.errors import warn as warn_user

from .._threads import map_in_order, resolve_threads
from .resampling import (
    FEW_CLUSTERS,
    bca_ci,
    bootstrap_means,
    cluster_se,
    column_batches,
    jackknife_means,
    percentile_ci,
    same_question_sets,
)
from .validation import (
    SUMMARY_METHODS,
    SummaryMethod,
    as_list,
    check_choice,
    check_confidence,
    check_resamples,
    check_seed,
    clean_table,
    run_starts,
    sorted_codes,
    unique_key_order,
)


@dataclass(frozen=True)
class GroupStats:
    """Per-group (system, by..., measure) numbers an interval is computed from."""

    n: np.ndarray       #: questions, float64
    mean: np.ndarray
    se: np.ndarray
    df_t: np.ndarray    #: degrees of freedom of ``t`` (n - 1, or clusters - 1)
    n_clusters: np.ndarray | None = None  #: clusters G per group (with ``cluster``)
    binary: np.ndarray | None = None      #: groups whose values are all 0 or 1


def t_interval(g: GroupStats, confidence: float) -> tuple[np.ndarray, np.ndarray]:
    """``mean +- t_{1 - alpha/2, df} se``."""
    from scipy import stats as st

    tq = st.t.ppf(1 - (1 - confidence) / 2, g.df_t)
    return g.mean - tq * g.se, g.mean + tq * g.se


def normal_interval(g: GroupStats, confidence: float) -> tuple[np.ndarray, np.ndarray]:
    """``mean +- z se``; for a binary group the Wald interval clipped to [0, 1] (as
    statsmodels' ``proportion_confint(method="normal")``)."""
    from scipy import stats as st

    z = st.norm.ppf(1 - (1 - confidence) / 2)
    lo, hi = g.mean - z * g.se, g.mean + z * g.se
    if g.binary is None:
        return lo, hi
    return np.where(g.binary, np.maximum(lo, 0.0), lo), np.where(g.binary, np.minimum(hi, 1.0), hi)


def wilson_interval(g: GroupStats, confidence: float) -> tuple[np.ndarray, np.ndarray]:
    """Wilson score interval of a proportion ``p = mean`` over n questions."""
    from scipy import stats as st

    z = st.norm.ppf(1 - (1 - confidence) / 2)
    p, n = g.mean, g.n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return centre - half, centre + half


def clopper_pearson_interval(g: GroupStats, confidence: float) -> tuple[np.ndarray, np.ndarray]:
    """Exact (Beta quantile) interval of a proportion."""
    from scipy import stats as st

    alpha = 1 - confidence
    n = g.n
    x = np.round(g.mean * n)
    lo = np.where(x > 0, st.beta.ppf(alpha / 2, x, n - x + 1), 0.0)
    hi = np.where(x < n, st.beta.ppf(1 - alpha / 2, x + 1, n - x), 1.0)
    return lo, hi


#: analytic intervals by method name; "bootstrap" and "bca" resample (see below).
ANALYTIC_INTERVALS: dict[str, Callable[[GroupStats, float], tuple[np.ndarray, np.ndarray]]] = {
    "t": t_interval,
    "normal": normal_interval,
    "wilson": wilson_interval,
    "clopper-pearson": clopper_pearson_interval,
}
RESAMPLED_INTERVALS = ("bootstrap", "bca")


def _group_table(df: pd.DataFrame, keys: list[str], known: dict[str, np.ndarray] | None = None,
                 cluster: str | None = None):
    """Sorted table, row positions per group, and n / mean / sd / binary per group
    (``known``: column codes :func:`clean_table` found).

    The sorted table holds what the intervals read: ``value``, ``query_id`` (integer
    codes when the keys have codes, which identify the questions as the ids do) and the
    ``cluster`` column.  A group (system, by..., measure) is *binary* when each of its own
    values is 0 or 1: the decision never looks at other systems or segments.
    """
    codes = sorted_codes(df, [*keys, "query_id"], known=known)
    if codes is None:  # key columns of other kinds: pandas sorts and groups them
        df = df.sort_values([*keys, "query_id"], kind="stable").reset_index(drop=True)
        groups = df.groupby(keys, sort=False, dropna=False)
        g = groups["value"]
        res = g.size().rename("n").to_frame()
        res["mean"] = g.mean()
        res["sd"] = g.std(ddof=1)
        binary = df["value"].isin([0.0, 1.0]).groupby([df[k] for k in keys], sort=False).all()
        res["binary"] = binary.reindex(res.index).to_numpy()
        return df, list(groups.indices.values()), res.reset_index()
    # The same order as sort_values (each key column's codes follow its sorted values; the
    # keys are unique, checked by clean_table), and the same per-group sums (pandas'
    # groupby, rows in the same order), on integer codes: no string column is reordered.
    order = unique_key_order(codes)
    in_order = [c[order] for c in codes]
    new_group = run_starts(in_order[:-1])
    starts = np.flatnonzero(new_group)
    gid = np.cumsum(new_group) - 1
    slim = pd.DataFrame({"value": df["value"].to_numpy()[order], "query_id": in_order[-1]})
    if cluster:
        slim[cluster] = df[cluster].to_numpy()[order]
    g = slim["value"].groupby(gid, sort=False)
    res = df[keys].take(order[starts]).reset_index(drop=True)
    for c in ("system", "measure"):  # a categorical key comes out as the strings it holds
        if isinstance(res[c].dtype, pd.CategoricalDtype):
            res[c] = res[c].astype(str)
    res["n"] = np.diff(np.r_[starts, len(slim)]).astype(np.int64)
    res["mean"] = g.mean().to_numpy()
    res["sd"] = g.std(ddof=1).to_numpy()
    res["binary"] = slim["value"].isin([0.0, 1.0]).groupby(gid, sort=False).all().to_numpy()
    positions = [np.arange(a, b) for a, b in zip(starts, np.r_[starts[1:], len(slim)])]
    return slim, positions, res


def _group_stats(df: pd.DataFrame, positions: list[np.ndarray], res: pd.DataFrame,
                 cluster: str | None) -> GroupStats:
    """Standard errors: ``sqrt(p (1 - p) / n)`` for binary groups, ``sd / sqrt(n)``
    otherwise, the cluster-robust one with ``cluster``."""
    n = res["n"].to_numpy(dtype=np.float64)
    mean = res["mean"].to_numpy()
    with np.errstate(divide="ignore", invalid="ignore"):
        se = np.where(res["binary"], np.sqrt(mean * (1 - mean) / n),
                      res["sd"].to_numpy() / np.sqrt(n))
    se = np.where(n >= 2, se, np.nan)  # one question: no spread to measure (0/1 values included)
    df_t = n - 1
    if cluster:
        codes_all = pd.factorize(df[cluster])[0]
        G = np.array([len(np.unique(codes_all[p])) for p in positions], dtype=np.float64)
        values_all = df["value"].to_numpy()
        se = np.array([cluster_se(values_all[p], pd.factorize(codes_all[p])[0], mean[i])
                       for i, p in enumerate(positions)])
        df_t = G - 1
        return GroupStats(n=n, mean=mean, se=se, df_t=df_t, n_clusters=G,
                          binary=res["binary"].to_numpy(dtype=bool))
    return GroupStats(n=n, mean=mean, se=se, df_t=df_t, binary=res["binary"].to_numpy(dtype=bool))


def _resolve_methods(res: pd.DataFrame, method: str, cluster: str | None,
                     g: GroupStats) -> np.ndarray:
    """The interval of each group: ``auto`` resolved, 0/1 methods checked, a cluster
    bootstrap with few clusters warned about."""
    if method == "auto":
        if cluster:
            return np.asarray(np.where(g.n_clusters < FEW_CLUSTERS, "t", "bootstrap"), dtype=object)
        return np.asarray(np.where(res["binary"], "wilson", "t"), dtype=object)
    if cluster and method in RESAMPLED_INTERVALS and (g.n_clusters < FEW_CLUSTERS).any():
        warn_user(f"summarize(method={method!r}, cluster={cluster!r}): "
                  f"{int(g.n_clusters.min())} clusters (fewer than {FEW_CLUSTERS}) in some groups; "
                  "a cluster bootstrap interval under-covers with few clusters: use method='t' "
                  "(cluster-robust, G - 1 df) or 'auto'", FewClustersWarning)
    if method in ("wilson", "clopper-pearson"):
        if cluster:
            raise ValueError(f"summarize: method={method!r} does not support cluster=; "
                             "use 'bootstrap' or 't'")
        bad = sorted(set(res.loc[~res["binary"], "measure"]))
        if bad:
            raise EvalframeInputError("per_question", [InputProblem(
                f"method={method!r} needs 0/1 values, but measures {bad} have other values",
                "use method='t', 'bootstrap' or 'bca' (or 'auto') for these measures")])
    return np.full(len(res), method, dtype=object)


def _analytic_bounds(g: GroupStats, methods: np.ndarray, confidence: float,
                     lo: np.ndarray, hi: np.ndarray) -> None:
    """Fill lo / hi of the groups whose interval is analytic."""
    for name, interval in ANALYTIC_INTERVALS.items():
        m = methods == name
        if m.any():
            with np.errstate(divide="ignore", invalid="ignore"):
                a, b = interval(g, confidence)
            lo[m] = a[m]
            hi[m] = b[m]


def _bootstrap_bounds(df: pd.DataFrame, positions: list[np.ndarray], methods: np.ndarray,
                      cluster: str | None, opts: dict, lo: np.ndarray, hi: np.ndarray) -> None:
    """Fill lo / hi of the resampled groups: one bootstrap per set of shared questions.

    Each block (a set of shared questions, a batch of its columns) draws its own stream
    from ``default_rng(seed)``: several blocks run on ``opts["threads"]`` threads, one
    block runs its chunks of resamples on them."""
    n_resamples, seed, confidence = opts["n_resamples"], opts["seed"], opts["confidence"]
    threads = opts.get("threads", 1)
    resampled = np.flatnonzero(np.isin(methods, RESAMPLED_INTERVALS))
    if not resampled.size:
        return
    values = df["value"].to_numpy()
    codes_all = pd.factorize(df[cluster])[0] if cluster else None
    blocks = []
    for idx in same_question_sets(positions, df["query_id"].to_numpy(), resampled):
        rows = positions[idx[0]]
        if len(rows) < 2:
            continue
        X = np.column_stack([values[positions[i]] for i in idx])
        cl = pd.factorize(codes_all[rows])[0] if cluster else None
        blocks += [(X[:, cols], cl, np.asarray(idx)[cols]) for cols in column_batches(len(idx), X.shape[0], n_resamples)]
    inner = threads if len(blocks) == 1 else 1

    def bounds(block: tuple[np.ndarray, np.ndarray | None, np.ndarray]) -> None:
        sub, cl, ii = block
        boot = bootstrap_means(sub, n_resamples=n_resamples, seed=seed, clusters=cl, threads=inner)
        is_bca = methods[ii] == "bca"
        plo, phi = percentile_ci(boot, confidence)
        if is_bca.any():
            blo, bhi = bca_ci(boot, sub.mean(axis=0), jackknife_means(sub, cl), confidence)
            plo = np.where(is_bca, blo, plo)
            phi = np.where(is_bca, bhi, phi)
        lo[ii] = plo
        hi[ii] = phi

    map_in_order(bounds, blocks, threads=threads)


def _format_summary(res: pd.DataFrame, keys: list[str], g: GroupStats, lo: np.ndarray,
                    hi: np.ndarray, methods: np.ndarray, opts: dict) -> pd.DataFrame:
    """The output table (see ``summarize``'s Returns)."""
    resampled = np.isin(methods, RESAMPLED_INTERVALS)
    out = res[keys[:-1]].copy()
    out["measure"] = res["measure"]
    out["n"] = res["n"].astype(np.int64)
    out["mean"] = g.mean
    out["sd"] = res["sd"].to_numpy()
    out["se"] = g.se
    out["ci_low"] = lo
    out["ci_high"] = hi
    out["method"] = methods.astype(str)
    out["confidence"] = float(opts["confidence"])
    out["n_resamples"] = pd.array(np.where(resampled, opts["n_resamples"], 0), dtype="Int64")
    out["seed"] = pd.array(np.where(resampled, opts["seed"], 0), dtype="Int64")
    out.loc[~resampled, ["n_resamples", "seed"]] = pd.NA
    return out.reset_index(drop=True)


def summarize(per_question: pd.DataFrame, *, by: str | Sequence[str] | None = None,
              method: SummaryMethod = "auto", confidence: float = 0.95,
              n_resamples: int = 10_000, seed: int = 0,
              cluster: str | None = None, threads: int | None = None) -> pd.DataFrame:
    """Mean, standard error and confidence interval per system (and segment) and measure.

    Parameters
    ----------
    per_question : DataFrame
        Tidy per-question table ``system, query_id, measure, value`` (+ segment columns).
        Without a ``system`` column the table is one system, named ``"system"``.
    by : str or list of str, optional
        Segment columns; one row per (system, segment..., measure).
    method : {"auto", "t", "normal", "bootstrap", "bca", "wilson", "clopper-pearson"}
        Interval. ``"auto"`` is ``"wilson"`` for a binary (0/1-valued) group and
        ``"t"`` for the others; with ``cluster`` it is ``"t"`` (cluster-robust) for a
        group of fewer than 30 clusters (``resampling.FEW_CLUSTERS``) and
        ``"bootstrap"`` (whole clusters) for the others; ``"bootstrap"`` or ``"bca"``
        asked for with fewer than 30 clusters warns (``FewClustersWarning``): it
        under-covers there. Whether a group
        (system, segment..., measure) is binary depends on its own values only, so a
        system's interval does not change when other systems are added to the table.
        ``"wilson"`` and ``"clopper-pearson"`` need binary values.
    confidence : float
        Confidence level of the interval.
    n_resamples, seed : int
        Bootstrap resamples and seed (used by ``"bootstrap"`` and ``"bca"``).
    cluster : str, optional
        Column naming the cluster (e.g. the topic family) of each question: the
        bootstrap then resamples whole clusters, and ``"t"`` uses the cluster-robust
        standard error with (clusters - 1) degrees of freedom.
    threads : int, optional
        Threads the bootstrap runs on (sets of shared questions side by side, or the
        chunks of resamples of one set: drawn in order, what is computed from them on
        the threads); default the environment variable ``EVALFRAME_THREADS``, else
        every core this process may use. The numbers are the same under any count.

    Returns
    -------
    DataFrame
        One row per (system, by..., measure), columns:

        ======================  ========================================================
        system                  str
        *by columns*            as in the input
        measure                 str
        n                       int, questions
        mean                    float
        sd                      float, sample sd (ddof = 1)
        se                      float, standard error of the mean
        ci_low, ci_high         float, interval bounds
        method                  str, the interval actually used ("auto" is resolved)
        confidence              float
        n_resamples, seed       Int64, <NA> for analytic intervals
        mean_low, mean_high     float, only when the table has ``value_low`` and
                                ``value_high`` (``evaluate(..., unjudged="bounds")``):
                                their means (``mean`` is ``mean_low``)
        ======================  ========================================================

    Notes
    -----
    With ``n`` values ``x_i``, ``mean = sum(x) / n`` and ``sd`` is the sample sd.

    - ``se = sd / sqrt(n)``, except for binary groups where ``se = sqrt(p (1 - p) / n)``
      with ``p = mean`` (the spec's formula); with ``cluster``,
      ``se^2 = G / (G - 1) * sum_g (S_g - n_g mean)^2 / n^2`` (S_g = cluster sums).
    - ``t``: ``mean +- t_{1 - alpha/2, df} se`` with df = n - 1 (G - 1 with clusters);
      ``normal``: ``mean +- z se`` (for binary measures the Wald interval, clipped to
      [0, 1] as statsmodels' ``proportion_confint(method="normal")``: 1 of 2 gives
      [0, 1], not [-0.193, 1.193]; Wilson, the ``auto`` choice, needs no clipping).
    - ``bootstrap``: percentiles alpha/2, 1 - alpha/2 of the means of ``n_resamples``
      resamples of the questions (the spec's "Ninja notes" interval); ``bca``: bias
      corrected and accelerated percentiles, as ``scipy.stats.bootstrap(method='BCa')``,
      with the jackknife computed in closed form.
    - ``wilson``: ``(p + z^2/2n +- z sqrt(p(1-p)/n + z^2/4n^2)) / (1 + z^2/n)``;
      ``clopper-pearson``: Beta quantiles (exact, conservative). Near 0 or 1 these keep
      their coverage where normal and bootstrap intervals collapse to a point.

    Large n: the resampling draws ``n_resamples x n`` bootstrap counts chunk by chunk
    (``evalframe.stats.resampling``), so memory stays bounded, but time grows as
    ``n_resamples x n`` (minutes at a million questions with 10,000 resamples). There the
    distribution of a mean is normal to within the Monte Carlo error of the bootstrap
    (central limit theorem), and ``method="t"`` (or ``"auto"``) gives the interval in
    seconds: the large-n method to use (``benchmarks/bench_stats_large.py`` times both).

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"system": "bm25", "query_id": [str(i) for i in range(20)],
    ...                   "measure": "Success@10", "value": [1.0, 0.0] * 10})
    >>> s = summarize(t)
    >>> round(float(s.se[0]), 3), s.method[0]
    (0.112, 'wilson')
    """
    by = as_list(by)
    check_choice("summarize", "method", method, SUMMARY_METHODS)
    check_confidence(confidence, func="summarize")
    check_resamples(n_resamples, func="summarize")
    check_seed(seed, func="summarize")
    threads = resolve_threads(threads, caller="summarize")
    known: dict[str, np.ndarray] = {}
    df = clean_table(per_question, by=by, cluster=cluster, codes=known)
    keys = ["system", *by, "measure"]
    df, positions, res = _group_table(df, keys, known, cluster)
    g = _group_stats(df, positions, res, cluster)
    methods = _resolve_methods(res, method, cluster, g)
    opts = dict(confidence=confidence, n_resamples=n_resamples, seed=seed, threads=threads)
    lo = np.full(len(res), np.nan)
    hi = np.full(len(res), np.nan)
    _analytic_bounds(g, methods, confidence, lo, hi)
    _bootstrap_bounds(df, positions, methods, cluster, opts, lo, hi)
    out = _format_summary(res, keys, g, lo, hi, methods, opts)
    if all(c in per_question.columns for c in BOUND_COLUMNS):  # evaluate(..., unjudged="bounds")
        for col, name in zip(BOUND_COLUMNS, ("mean_low", "mean_high")):
            one = per_question.drop(columns=["value", *BOUND_COLUMNS]).assign(value=per_question[col].to_numpy())
            out[name] = summarize(one, by=by, method="t", cluster=cluster)["mean"].to_numpy()
    return out


#: The columns of ``evaluate(..., unjudged="bounds")`` whose means :func:`summarize` adds.
BOUND_COLUMNS = ("value_low", "value_high")
