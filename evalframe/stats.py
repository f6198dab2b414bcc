"""Statistics on the per-question table: intervals, paired tests, sample-size planning.

Everything here takes the tidy per-question table produced by ``evaluate()``
(columns ``system, query_id, measure, value`` plus optional segment columns; one row
per system, question and measure) and returns tidy tables with fixed column names.
The module never looks at runs or qrels.

Conventions, written once:

- A question is the unit of sampling. Intervals and tests treat the questions of the
  golden set as a random sample from a population of similar questions. With
  ``cluster=`` (``summarize`` and ``compare``) the unit is the cluster instead: whole
  clusters are resampled or sign-flipped, and ``t`` uses a cluster-robust standard error.
- A measure is *binary* when every per-question value is exactly 0 or 1 (Success@k,
  a 0/1 Recall@k ...). Its standard error is the spec's ``sqrt(p (1 - p) / n)``.
- Paired comparisons use ``d = value_b - value_a`` per shared question, so
  ``diff = mean_b - mean_a`` and a positive diff means ``system_b`` scores higher.
  With a ``baseline`` the baseline is always ``system_a``.
- All p-values are two-sided.
- Every resampling step starts from ``numpy.random.default_rng(seed)``, separately for
  each set of questions, so one system's interval or one pair's p-value does not depend
  on which other systems are in the table, and the same seed gives the same numbers.
- Resampling is chunked, vectorised numpy: a (resamples x questions) matrix of
  bootstrap counts or sign flips is multiplied by a (questions x columns) matrix of
  values or differences, so every system / pair sharing the questions shares the work.
"""
from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Sequence
from typing import Literal

import numpy as np
import pandas as pd

from evalframe.errors import warn as _warn_user
from evalframe.errors import EvalframeInputError, InputProblem, UnpairedQuestionsWarning

__all__ = [
    "summarize",
    "compare",
    "adjust_pvalues",
    "standard_error",
    "half_width",
    "n_for_half_width",
    "n_for_difference",
    "detectable_difference",
    "power",
    "planning_curve",
]

SummaryMethod = Literal["auto", "t", "normal", "bootstrap", "bca", "wilson", "clopper-pearson"]
TestName = Literal["t", "randomization", "bootstrap", "wilcoxon", "sign"]
Correction = Literal["holm", "bonferroni", "bh", "none", "tukey", "randomized-tukey"]
CiMethod = Literal["t", "bootstrap", "bca", "none"]

#: elements of one resampling chunk (float64: 32 MB); bounds memory at any size.
_CHUNK_ELEMENTS = 4_000_000
#: randomisation tests enumerate all 2**n sign flips up to this many questions.
_EXACT_MAX_N = 20
_SINGLE_SYSTEM = "system"

_METHODS = ("auto", "t", "normal", "bootstrap", "bca", "wilson", "clopper-pearson")
_TESTS = ("t", "randomization", "bootstrap", "wilcoxon", "sign")
_CORRECTIONS = ("holm", "bonferroni", "bh", "none", "tukey", "randomized-tukey")
_CIS = ("t", "bootstrap", "bca", "none")
_DEFAULT_CI = {"t": "t", "randomization": "bootstrap", "bootstrap": "bootstrap",
               "wilcoxon": "t", "sign": "t"}


# --------------------------------------------------------------------------- checks
def _check_choice(name: str, value, choices: Sequence[str]) -> None:
    if value not in choices:
        raise ValueError(f"{name} must be one of {list(choices)}, got {value!r}")


def check_confidence(confidence: float, name: str = "confidence") -> None:
    if not isinstance(confidence, (int, float)) or not 0.0 < float(confidence) < 1.0:
        raise ValueError(f"{name} must be a float in (0, 1), got {confidence!r}")


def check_resamples(n_resamples: int) -> None:
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, (int, np.integer)) or n_resamples < 1:
        raise ValueError(f"n_resamples must be an int >= 1, got {n_resamples!r}")


def _as_list(cols: str | Sequence[str] | None) -> list[str]:
    if cols is None:
        return []
    if isinstance(cols, str):
        return [cols]
    return list(cols)


def _examples(df: pd.DataFrame, mask) -> str:
    return df.loc[np.asarray(mask)].head(3).to_string()


def _clean(per_question, *, by: list[str], cluster: str | None,
           table: str = "per_question") -> pd.DataFrame:
    """Return a checked copy with str ids, float64 values and a ``system`` column.

    Raises one EvalframeInputError listing every problem found.
    """
    if not isinstance(per_question, pd.DataFrame):
        raise EvalframeInputError(table, [InputProblem(
            f"expected a pandas DataFrame, got {type(per_question).__name__}",
            "pass the per-question table returned by evalframe.evaluate()")])
    df = per_question
    problems: list[InputProblem] = []
    extra = list(dict.fromkeys(by + ([cluster] if cluster else [])))
    required = ["query_id", "measure", "value", *extra]
    missing = [c for c in required if c not in df.columns]
    if missing:
        problems.append(InputProblem(
            f"missing column{'s' if len(missing) > 1 else ''} {missing} (found {list(df.columns)})",
            "pass the per-question table of evaluate(): columns system, query_id, measure, "
            "value (+ the segment / cluster columns you name in by= or cluster=)"))
    output_names = ("system", "query_id", "measure", "value", "n", "mean", "sd", "se", "ci_low", "ci_high",
                    "method", "confidence", "n_resamples", "seed", "system_a", "system_b", "diff", "p_value",
                    "p_adjusted", "statistic", "mean_a", "mean_b")
    reserved = [c for c in extra if c in output_names]
    if reserved:
        problems.append(InputProblem(
            f"by= / cluster= name reserved column{'s' if len(reserved) > 1 else ''} {reserved}",
            "rename the segment column (e.g. 'segment' or 'size'): these names are input or output columns"))
    if "value" in df.columns:
        raw = df["value"]
        num = pd.to_numeric(raw, errors="coerce")
        not_num = num.isna() & raw.notna()
        if not_num.any():
            problems.append(InputProblem(
                f"{int(not_num.sum())} rows have a non-numeric value",
                "values must be floats (one per-question score per row)", _examples(df, not_num)))
        nan = raw.isna()
        if nan.any():
            problems.append(InputProblem(
                f"{int(nan.sum())} rows have a missing (NaN) value",
                "drop those rows or score the question (evaluate() scores unanswered questions 0)",
                _examples(df, nan)))
        inf = np.isinf(num.to_numpy(dtype=float, na_value=np.nan))
        if inf.any():
            problems.append(InputProblem(
                f"{int(inf.sum())} rows have an infinite value",
                "per-question values must be finite", _examples(df, inf)))
    for col in ["system", "query_id", "measure", *extra]:
        if col in df.columns:
            null = df[col].isna()
            if null.any():
                problems.append(InputProblem(
                    f"{int(null.sum())} rows have a missing {col}",
                    f"fill or drop the rows without a {col}", _examples(df, null)))
    if problems:
        raise EvalframeInputError(table, problems)

    out = pd.DataFrame({
        "system": (df["system"].astype(str).to_numpy(dtype=object) if "system" in df.columns
                   else np.full(len(df), _SINGLE_SYSTEM, dtype=object)),
        "query_id": df["query_id"].astype(str).to_numpy(dtype=object),
        "measure": df["measure"].astype(str).to_numpy(dtype=object),
        "value": pd.to_numeric(df["value"]).to_numpy(dtype=np.float64),
    })
    for col in extra:
        out[col] = df[col].to_numpy()
    key = ["system", *by, "query_id", "measure"]
    dup = out.duplicated(key, keep=False).to_numpy()
    if dup.any():
        problems.append(InputProblem(
            f"{int(dup.sum())} rows share the same ({', '.join(key)})",
            "keep one row per system, question and measure"
            + (" (and segment)" if by else "") + "; average or drop duplicates first",
            _examples(df, dup)))
    if cluster:
        per_q = out.groupby("query_id", sort=False)[cluster].nunique(dropna=False)
        bad = per_q[per_q > 1]
        if len(bad):
            problems.append(InputProblem(
                f"{len(bad)} questions belong to more than one {cluster!r} cluster",
                "a question must sit in exactly one cluster",
                "\n".join(f"query_id={q!r}" for q in bad.index[:3])))
    if problems:
        raise EvalframeInputError(table, problems)
    return out


# ----------------------------------------------------------------- resampling engines
def _chunk_rows(width: int) -> int:
    return max(1, _CHUNK_ELEMENTS // max(width, 1))


def _cluster_sums(X: np.ndarray, clusters: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-cluster column sums (G x k) and cluster sizes (G,), codes 0..G-1 per row of X."""
    units = int(clusters.max()) + 1
    S = np.zeros((units, X.shape[1]))
    np.add.at(S, clusters, X)
    return S, np.bincount(clusters, minlength=units).astype(np.float64)


def _cluster_se(x: np.ndarray, clusters: np.ndarray, mean: float) -> float:
    """Cluster-robust standard error of the mean of x (codes 0..G-1 per value).

    ``se^2 = G / (G - 1) * sum_g (S_g - n_g mean)^2 / n^2`` with cluster sums S_g and
    sizes n_g; NaN with fewer than two clusters. With one question per cluster it is
    algebraically ``sd / sqrt(n)``.
    """
    s_g = np.bincount(clusters, weights=x)
    n_g = np.bincount(clusters).astype(np.float64)
    G = s_g.size
    if G < 2:
        return math.nan
    return math.sqrt(G / (G - 1) * ((s_g - n_g * mean) ** 2).sum()) / x.size


def _bootstrap_means(X: np.ndarray, *, n_resamples: int, seed: int,
                     clusters: np.ndarray | None = None) -> np.ndarray:
    """Bootstrap distribution of column means, shape (n_resamples, k).

    ``X`` is (n questions x k columns). Questions (or whole clusters, given integer
    cluster codes 0..G-1 per question) are resampled with replacement; each resample is
    a row of counts, and the means of all columns come from one matrix product.
    """
    n, k = X.shape
    if clusters is None:
        S, sizes = X, None
        units = n
    else:
        S, sizes = _cluster_sums(X, clusters)
        units = S.shape[0]
    rng = np.random.default_rng(seed)
    out = np.empty((n_resamples, k))
    step = _chunk_rows(units)
    for start in range(0, n_resamples, step):
        c = min(step, n_resamples - start)
        idx = rng.integers(0, units, size=(c, units))
        idx += np.arange(c)[:, None] * units
        counts = np.bincount(idx.ravel(), minlength=c * units).reshape(c, units).astype(np.float64)
        sums = counts @ S
        denom = float(n) if sizes is None else (counts @ sizes)[:, None]
        out[start:start + c] = sums / denom
    return out


def _jackknife_means(X: np.ndarray, clusters: np.ndarray | None = None) -> np.ndarray:
    """Leave-one-question (or one-cluster) -out means, shape (units, k)."""
    n = X.shape[0]
    total = X.sum(axis=0)
    if clusters is None:
        return (total[None, :] - X) / (n - 1)
    S, sizes = _cluster_sums(X, clusters)
    return (total[None, :] - S) / (n - sizes)[:, None]


def _percentile_ci(boot: np.ndarray, confidence: float) -> tuple[np.ndarray, np.ndarray]:
    a = (1 - confidence) / 2
    lo, hi = np.quantile(boot, [a, 1 - a], axis=0)
    return lo, hi


def _bca_ci(boot: np.ndarray, observed: np.ndarray, jack: np.ndarray,
            confidence: float) -> tuple[np.ndarray, np.ndarray]:
    """BCa interval (Efron & Tibshirani 1993, 14.3), computed as scipy.stats.bootstrap."""
    from scipy.special import ndtr, ndtri

    B = boot.shape[0]
    frac = ((boot < observed).sum(axis=0) + (boot <= observed).sum(axis=0)) / (2 * B)
    u = jack.mean(axis=0) - jack
    with np.errstate(divide="ignore", invalid="ignore"):
        z0 = ndtri(frac)
        a_hat = (u ** 3).sum(axis=0) / (6 * ((u ** 2).sum(axis=0)) ** 1.5)
        z_a = ndtri((1 - confidence) / 2)
        lo_q = ndtr(z0 + (z0 + z_a) / (1 - a_hat * (z0 + z_a)))
        hi_q = ndtr(z0 + (z0 - z_a) / (1 - a_hat * (z0 - z_a)))
    lo = np.full(boot.shape[1], np.nan)
    hi = np.full(boot.shape[1], np.nan)
    for j in range(boot.shape[1]):  # loop over columns (systems / pairs), not resamples
        if np.isfinite(lo_q[j]) and np.isfinite(hi_q[j]):
            lo[j], hi[j] = np.quantile(boot[:, j], [lo_q[j], hi_q[j]])
        elif np.ptp(boot[:, j]) == 0:  # every resample equal: a point interval
            lo[j] = hi[j] = observed[j]
    return lo, hi


def _sign_flip_pvalues(D: np.ndarray, *, n_resamples: int, seed: int,
                       exact: bool) -> tuple[np.ndarray, int]:
    """Two-sided randomisation p-values of the mean of each column of D (n x k).

    Exact: all 2**n sign vectors, p = #{|T*| >= |T|} / 2**n. Monte Carlo: B random
    sign vectors from random bytes, p = (b + 1) / (B + 1). T* for every column comes
    from one product (signs @ D) per chunk, written as 2 * (bits @ D) - sum(D).
    """
    n, k = D.shape
    total = D.sum(axis=0)
    threshold = np.abs(total) - 1e-10 * np.abs(D).sum(axis=0)  # float round-off guard
    count = np.zeros(k, dtype=np.int64)
    step = _chunk_rows(n)
    if exact:
        n_total = 2 ** n
        shifts = np.arange(n, dtype=np.int64)
        for start in range(0, n_total, step):
            m = np.arange(start, min(n_total, start + step), dtype=np.int64)
            bits = ((m[:, None] >> shifts) & 1).astype(np.float64)
            T = 2.0 * (bits @ D) - total
            count += (np.abs(T) >= threshold).sum(axis=0)
        return count / n_total, n_total
    rng = np.random.default_rng(seed)
    width = (n + 7) // 8
    for start in range(0, n_resamples, step):
        c = min(step, n_resamples - start)
        raw = rng.integers(0, 256, size=(c, width), dtype=np.uint8)
        bits = np.unpackbits(raw, axis=1, count=n).astype(np.float64)
        T = 2.0 * (bits @ D) - total
        count += (np.abs(T) >= threshold).sum(axis=0)
    return (count + 1) / (n_resamples + 1), n_resamples


# ------------------------------------------------------------------------ summarize
def summarize(per_question: pd.DataFrame, *, by: str | Sequence[str] | None = None,
              method: SummaryMethod = "auto", confidence: float = 0.95,
              n_resamples: int = 10_000, seed: int = 0,
              cluster: str | None = None) -> pd.DataFrame:
    """Mean, standard error and confidence interval per system (and segment) and measure.

    Parameters
    ----------
    per_question : DataFrame
        Tidy per-question table ``system, query_id, measure, value`` (+ segment columns).
        Without a ``system`` column the table is one system, named ``"system"``.
    by : str or list of str, optional
        Segment columns; one row per (system, segment..., measure).
    method : {"auto", "t", "normal", "bootstrap", "bca", "wilson", "clopper-pearson"}
        Interval. ``"auto"`` is ``"wilson"`` for binary (0/1-valued) measures and
        ``"t"`` for the others; with ``cluster`` it is ``"bootstrap"``.
        ``"wilson"`` and ``"clopper-pearson"`` need binary measures.
    confidence : float
        Confidence level of the interval.
    n_resamples, seed : int
        Bootstrap resamples and seed (used by ``"bootstrap"`` and ``"bca"``).
    cluster : str, optional
        Column naming the cluster (e.g. the topic family) of each question: the
        bootstrap then resamples whole clusters, and ``"t"`` uses the cluster-robust
        standard error with (clusters - 1) degrees of freedom.

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
        ======================  ========================================================

    Notes
    -----
    With ``n`` values ``x_i``, ``mean = sum(x) / n`` and ``sd`` is the sample sd.

    - ``se = sd / sqrt(n)``, except for binary measures where ``se = sqrt(p (1 - p) / n)``
      with ``p = mean`` (the spec's formula); with ``cluster``,
      ``se^2 = G / (G - 1) * sum_g (S_g - n_g mean)^2 / n^2`` (S_g = cluster sums).
    - ``t``: ``mean +- t_{1 - alpha/2, df} se`` with df = n - 1 (G - 1 with clusters);
      ``normal``: ``mean +- z se`` (the Wald interval for binary measures).
    - ``bootstrap``: percentiles alpha/2, 1 - alpha/2 of the means of ``n_resamples``
      resamples of the questions (the spec's "Ninja notes" interval); ``bca``: bias
      corrected and accelerated percentiles, as ``scipy.stats.bootstrap(method='BCa')``,
      with the jackknife computed in closed form.
    - ``wilson``: ``(p + z^2/2n +- z sqrt(p(1-p)/n + z^2/4n^2)) / (1 + z^2/n)``;
      ``clopper-pearson``: Beta quantiles (exact, conservative). Near 0 or 1 these keep
      their coverage where normal and bootstrap intervals collapse to a point.

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"system": "bm25", "query_id": [str(i) for i in range(20)],
    ...                   "measure": "Success@10", "value": [1.0, 0.0] * 10})
    >>> s = summarize(t)
    >>> round(float(s.se[0]), 3), s.method[0]
    (0.112, 'wilson')
    """
    by = _as_list(by)
    _check_choice("method", method, _METHODS)
    check_confidence(confidence)
    check_resamples(n_resamples)
    df = _clean(per_question, by=by, cluster=cluster)
    from scipy import stats as st

    keys = ["system", *by, "measure"]
    df = df.sort_values([*keys, "query_id"], kind="stable").reset_index(drop=True)
    groups = df.groupby(keys, sort=False, dropna=False)
    g = groups["value"]
    res = g.size().rename("n").to_frame()
    res["mean"] = g.mean()
    res["sd"] = g.std(ddof=1)
    binary = df["value"].isin([0.0, 1.0]).groupby([df[k] for k in keys], sort=False).all()
    res["binary"] = binary.reindex(res.index).to_numpy()
    res = res.reset_index()
    # a measure is binary only if binary for every system / segment
    res["binary"] = res.groupby("measure")["binary"].transform("all")
    n = res["n"].to_numpy(dtype=np.float64)
    mean = res["mean"].to_numpy()
    with np.errstate(divide="ignore", invalid="ignore"):
        se = np.where(res["binary"], np.sqrt(mean * (1 - mean) / n), res["sd"].to_numpy() / np.sqrt(n))
    df_t = n - 1
    positions = list(groups.indices.values())
    if cluster:
        codes_all = pd.factorize(df[cluster])[0]
        G = np.array([len(np.unique(codes_all[p])) for p in positions], dtype=np.float64)
        values_all = df["value"].to_numpy()
        se = np.array([_cluster_se(values_all[p], pd.factorize(codes_all[p])[0], mean[i])
                       for i, p in enumerate(positions)])
        df_t = G - 1

    if method == "auto":
        methods = np.where(res["binary"], "wilson", "t") if not cluster else np.full(len(res), "bootstrap")
    else:
        methods = np.full(len(res), method, dtype=object)
        if method in ("wilson", "clopper-pearson"):
            if cluster:
                raise ValueError(f"method={method!r} does not support cluster=; use 'bootstrap' or 't'")
            bad = sorted(set(res.loc[~res["binary"], "measure"]))
            if bad:
                raise EvalframeInputError("per_question", [InputProblem(
                    f"method={method!r} needs 0/1 values, but measures {bad} have other values",
                    "use method='t', 'bootstrap' or 'bca' (or 'auto') for these measures")])
    methods = np.asarray(methods, dtype=object)

    lo = np.full(len(res), np.nan)
    hi = np.full(len(res), np.nan)
    alpha = 1 - confidence
    z = st.norm.ppf(1 - alpha / 2)
    with np.errstate(divide="ignore", invalid="ignore"):
        m = methods == "t"
        tq = st.t.ppf(1 - alpha / 2, df_t)
        lo[m] = (mean - tq * se)[m]
        hi[m] = (mean + tq * se)[m]
        m = methods == "normal"
        lo[m] = (mean - z * se)[m]
        hi[m] = (mean + z * se)[m]
        m = methods == "wilson"
        p = mean
        centre = (p + z * z / (2 * n)) / (1 + z * z / n)
        half = z / (1 + z * z / n) * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
        lo[m] = (centre - half)[m]
        hi[m] = (centre + half)[m]
        m = methods == "clopper-pearson"
        x = np.round(mean * n)
        cl = np.where(x > 0, st.beta.ppf(alpha / 2, x, n - x + 1), 0.0)
        ch = np.where(x < n, st.beta.ppf(1 - alpha / 2, x + 1, n - x), 1.0)
        lo[m] = cl[m]
        hi[m] = ch[m]

    resampled = np.isin(methods, ["bootstrap", "bca"])
    if resampled.any():
        values = df["value"].to_numpy()
        qids = df["query_id"].to_numpy()
        # stack every group that has the same questions: one product per question set
        by_key: dict[bytes, list[int]] = {}
        for i in np.flatnonzero(resampled):
            key = np.asarray(qids[positions[i]], dtype=str).tobytes()
            by_key.setdefault(key, []).append(i)
        for idx in by_key.values():
            rows = positions[idx[0]]
            if len(rows) < 2:
                continue
            X = np.column_stack([values[positions[i]] for i in idx])
            cl_codes = pd.factorize(codes_all[rows])[0] if cluster else None
            for cols in _column_batches(len(idx), X.shape[0], n_resamples):
                sub = X[:, cols]
                boot = _bootstrap_means(sub, n_resamples=n_resamples, seed=seed, clusters=cl_codes)
                ii = np.asarray(idx)[cols]
                is_bca = methods[ii] == "bca"
                plo, phi = _percentile_ci(boot, confidence)
                if is_bca.any():
                    blo, bhi = _bca_ci(boot, sub.mean(axis=0), _jackknife_means(sub, cl_codes), confidence)
                    plo = np.where(is_bca, blo, plo)
                    phi = np.where(is_bca, bhi, phi)
                lo[ii] = plo
                hi[ii] = phi

    out = res[keys[:-1]].copy()
    out["measure"] = res["measure"]
    out["n"] = res["n"].astype(np.int64)
    out["mean"] = mean
    out["sd"] = res["sd"].to_numpy()
    out["se"] = se
    out["ci_low"] = lo
    out["ci_high"] = hi
    out["method"] = methods.astype(str)
    out["confidence"] = float(confidence)
    out["n_resamples"] = pd.array(np.where(resampled, n_resamples, 0), dtype="Int64")
    out["seed"] = pd.array(np.where(resampled, seed, 0), dtype="Int64")
    out.loc[~resampled, ["n_resamples", "seed"]] = pd.NA
    return out.reset_index(drop=True)


def _column_batches(k: int, n: int, n_resamples: int) -> list[np.ndarray]:
    """Split k columns so that a (n_resamples x columns) bootstrap table stays < ~256 MB."""
    per = max(1, 32_000_000 // max(n_resamples, 1))
    return [np.arange(s, min(k, s + per)) for s in range(0, k, per)]


# -------------------------------------------------------------------------- compare
def adjust_pvalues(p: Sequence[float] | np.ndarray,
                   method: Literal["holm", "bonferroni", "bh", "none"] = "holm") -> np.ndarray:
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
    _check_choice("method", method, ("holm", "bonferroni", "bh", "none"))
    p = np.asarray(p, dtype=np.float64)
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


def _wilcoxon(d: np.ndarray, exact: bool) -> tuple[float, float]:
    """Signed-rank test as R's wilcox.test(b, a, paired=TRUE): V and the p-value."""
    from scipy import stats as st

    d = d[d != 0]
    m = d.size
    if m == 0:
        return math.nan, 1.0
    r = st.rankdata(np.abs(d))
    v = float(r[d > 0].sum())
    _, ties = np.unique(r, return_counts=True)
    if exact and (ties == 1).all():
        return v, float(st.wilcoxon(d, method="exact").pvalue)
    z = v - m * (m + 1) / 4
    sigma = math.sqrt(m * (m + 1) * (2 * m + 1) / 24 - (ties ** 3 - ties).sum() / 48)
    if sigma == 0:
        return v, 1.0
    z = (z - math.copysign(0.5, z) if z != 0 else 0.0) / sigma
    return v, float(min(1.0, 2 * min(st.norm.cdf(z), st.norm.sf(z))))


def compare(per_question: pd.DataFrame, *, baseline: str | None = None,
            test: TestName = "t", correction: Correction | None = None,
            ci: CiMethod | None = None, by: str | Sequence[str] | None = None,
            n_resamples: int = 10_000, seed: int = 0, confidence: float = 0.95,
            exact: bool | None = None, tie_threshold: float = 0.0,
            cluster: str | None = None) -> pd.DataFrame:
    """Paired comparison of systems on the questions they share.

    Parameters
    ----------
    per_question : DataFrame
        Tidy per-question table ``system, query_id, measure, value`` with >= 2 systems.
    baseline : str, optional
        Compare this system (always ``system_a``) with every other system. Without it,
        every pair, ``system_a`` before ``system_b`` in order of first appearance.
    test : {"t", "randomization", "bootstrap", "wilcoxon", "sign"}
        Paired test (see Notes for each null hypothesis).
    correction : {"holm", "bonferroni", "bh", "none", "tukey", "randomized-tukey"}, optional
        Multiple-comparison adjustment over the family of comparisons of one measure
        (and segment). Default: ``"holm"`` when the family has several comparisons,
        ``"none"`` for a single one.
    ci : {"t", "bootstrap", "bca", "none"}, optional
        Interval of ``diff``. Default: ``"bootstrap"`` (percentile) for the
        randomisation and bootstrap tests, ``"t"`` otherwise.
    by : str or list of str, optional
        Segment columns; comparisons are made within each segment.
    n_resamples, seed : int
        Resamples and seed of the randomisation test, the bootstrap and the randomised
        Tukey HSD.
    confidence : float
        Confidence level of the interval (and of Tukey's simultaneous intervals).
    exact : bool, optional
        Randomisation test: enumerate all 2**n sign flips (default when n <= 20; with
        ``cluster``, all 2**G flips of the G clusters, default when G <= 20).
        Wilcoxon: exact null distribution when there are no ties or zeros (default:
        the normal approximation, as R for n >= 50).
    tie_threshold : float
        ``|d| <= tie_threshold`` counts as a tie for wins/ties/losses and the sign test
        (Urbano et al. 2019 use 0.01); 0 means only equal values tie.
    cluster : str, optional
        Column naming the cluster of each question (e.g. the segment or topic family
        it was drawn with; a question sits in one cluster). The cluster, not the
        question, is then the independent unit: the bootstrap (interval and test)
        resamples whole clusters, the randomisation test flips the signs of whole
        clusters, and ``t`` (test and interval) uses the cluster-robust standard error
        with G - 1 degrees of freedom (see Notes). ``wilcoxon``, ``sign``, ``tukey``
        and ``randomized-tukey`` assume independent questions and raise ValueError.

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
        p_value             float, two-sided, unadjusted
        p_adjusted          float, adjusted within the family
        test, correction    str, as applied
        effect_size         float, Cohen's d_z = mean(d) / sd(d)
        wins, ties, losses  int, questions where b > a, tie, b < a
        confidence          float
        n_resamples         Int64, resamples used (2**n when exact); <NA> if none
        seed                Int64
        ==================  ============================================================

    Notes
    -----
    With per-question differences ``d_i = b_i - a_i`` on the n shared questions:

    - ``t``: ``t = mean(d) / (sd(d) / sqrt(n))``, df = n - 1; H0: E[d] = 0. Same as
      ``scipy.stats.ttest_rel(b, a)``; its interval is ``mean(d) +- t_{df} sd / sqrt(n)``.
    - ``randomization``: H0: the two systems are exchangeable on each question (the
      distribution of each d_i is symmetric about 0). Statistic mean(d); sign flips,
      all 2**n when exact, else B seeded random ones with ``p = (b + 1) / (B + 1)``.
    - ``bootstrap``: resample the n questions with replacement; the interval is the
      percentile interval of mean(d*), and the test uses the shift method,
      ``p = (#{|mean(d*) - mean(d)| >= |mean(d)|} + 1) / (B + 1)``. It is liberal
      (rejects too often) at small n, since the bootstrap distribution is too narrow.
    - ``wilcoxon``: H0: d symmetric about 0 (median 0); zero differences dropped; normal
      approximation with tie and continuity correction, as R's ``wilcox.test``.
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
    by = _as_list(by)
    _check_choice("test", test, _TESTS)
    if correction is not None:
        _check_choice("correction", correction, _CORRECTIONS)
    if ci is not None:
        _check_choice("ci", ci, _CIS)
    check_confidence(confidence)
    check_resamples(n_resamples)
    if not isinstance(tie_threshold, (int, float)) or tie_threshold < 0:
        raise ValueError(f"tie_threshold must be a float >= 0, got {tie_threshold!r}")
    ci_method = ci or _DEFAULT_CI[test]
    if cluster is not None:
        if not isinstance(cluster, str):
            raise ValueError(f"cluster must be a column name (str) or None, got {cluster!r}")
        if test in ("wilcoxon", "sign"):
            raise ValueError(
                f"test={test!r} assumes independent questions and does not support cluster=; "
                "use test='t', 'randomization' or 'bootstrap'")
        if correction in ("tukey", "randomized-tukey"):
            raise ValueError(
                f"correction={correction!r} assumes independent questions and does not support "
                "cluster=; use 'holm', 'bonferroni', 'bh' or 'none'")
    clashing = [c for c in by if c in ("cluster", "n_clusters")]
    if clashing:
        raise EvalframeInputError("per_question", [InputProblem(
            f"by= names reserved column{'s' if len(clashing) > 1 else ''} {clashing}",
            "rename the segment column: compare() outputs columns 'cluster' and 'n_clusters'")])
    df = _clean(per_question, by=by, cluster=cluster)
    systems = list(pd.unique(df["system"]))
    problems = []
    if len(systems) < 2:
        problems.append(InputProblem(
            f"only one system ({systems[0] if systems else 'none'!r}); compare() needs at least two",
            "evaluate two or more systems on the same questions (column 'system')"))
    if baseline is not None and baseline not in systems:
        problems.append(InputProblem(
            f"baseline {baseline!r} is not a system of the table (systems: {systems[:10]})",
            "pass one of the values of the 'system' column"))
    if problems:
        raise EvalframeInputError("per_question", problems)
    if baseline is None:
        pairs = list(itertools.combinations(range(len(systems)), 2))
    else:
        b = systems.index(baseline)
        pairs = [(b, j) for j in range(len(systems)) if j != b]

    from scipy import stats as st

    fam_keys = [*by, "measure"]
    wide = df.set_index([*fam_keys, "query_id", "system"])["value"].unstack("system")
    wide = wide.reindex(columns=systems)
    W = wide.to_numpy(dtype=np.float64)
    qid_all = wide.index.get_level_values("query_id").to_numpy()
    if cluster:  # a question sits in one cluster (checked by _clean)
        of_q = df.drop_duplicates("query_id").set_index("query_id")[cluster]
        clus_all = pd.factorize(of_q.reindex(qid_all).to_numpy())[0]
    fam_index = wide.index.droplevel("query_id")
    fam_groups = {
        (key if isinstance(key, tuple) else (key,)): rows
        for key, rows in pd.Series(np.arange(len(wide))).groupby(
            [fam_index.get_level_values(k) for k in fam_keys], sort=False).indices.items()}
    items = []  # one per (family, pair)
    for fam, rows in fam_groups.items():
        V = W[rows]
        present = ~np.isnan(V)
        for ia, ib in pairs:
            both = present[:, ia] & present[:, ib]
            either = present[:, ia] | present[:, ib]
            if not either.any():
                continue  # neither system has this measure / segment
            sel = rows[both]
            items.append(dict(fam=fam, a=ia, b=ib, rows=sel, dropped=int(either.sum() - both.sum()),
                              xa=W[sel, ia], xb=W[sel, ib]))
    dropped_total = sum(it["dropped"] for it in items)
    if dropped_total:
        worst = max(items, key=lambda it: it["dropped"])
        _warn_user(
            f"compare(): {dropped_total} questions dropped (summed over pairs) because only one system of a "
            f"pair answers them (e.g. {worst['dropped']} for {systems[worst['a']]} vs "
            f"{systems[worst['b']]}); see column n_dropped", UnpairedQuestionsWarning)

    k = len(items)
    n = np.array([len(it["rows"]) for it in items], dtype=np.int64)
    mean_a = np.array([it["xa"].mean() if len(it["xa"]) else np.nan for it in items])
    mean_b = np.array([it["xb"].mean() if len(it["xb"]) else np.nan for it in items])
    ds = [it["xb"] - it["xa"] for it in items]
    diff = np.array([d.mean() if d.size else np.nan for d in ds])
    sd = np.array([d.std(ddof=1) if d.size > 1 else np.nan for d in ds])
    wins = np.array([(d > tie_threshold).sum() for d in ds], dtype=np.int64)
    losses = np.array([(d < -tie_threshold).sum() for d in ds], dtype=np.int64)
    ties = n - wins - losses
    nf = n.astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        se = sd / np.sqrt(nf)
        effect = np.where(sd > 0, diff / sd, np.nan)
    df_t = nf - 1
    if cluster:
        # codes 0..G-1 in order of first appearance among each pair's questions
        codes = [pd.factorize(clus_all[it["rows"]])[0] for it in items]
        n_clusters = np.array([len(np.unique(c)) for c in codes], dtype=np.int64)
        se = np.array([_cluster_se(d, c, m) if d.size else np.nan
                       for d, c, m in zip(ds, codes, diff)])
        df_t = n_clusters.astype(np.float64) - 1
    with np.errstate(divide="ignore", invalid="ignore"):
        tstat = diff / se
    ci_low = np.full(k, np.nan)
    ci_high = np.full(k, np.nan)
    stat = np.full(k, np.nan)
    pval = np.full(k, np.nan)
    used_B = np.zeros(k, dtype=np.int64)
    alpha = 1 - confidence
    ok = n >= 2
    if cluster:
        ok &= n_clusters >= 2

    if ci_method == "t":
        with np.errstate(invalid="ignore"):
            tq = st.t.ppf(1 - alpha / 2, df_t)
        ci_low[ok] = (diff - tq * se)[ok]
        ci_high[ok] = (diff + tq * se)[ok]
    if test == "t":
        stat[ok] = tstat[ok]
        with np.errstate(invalid="ignore"):
            pv = 2 * st.t.sf(np.abs(tstat), df_t)
        pv = np.where(se == 0, np.where(diff == 0, 1.0, 0.0), pv)
        pval[ok] = pv[ok]
    elif test == "wilcoxon":
        for i in np.flatnonzero(ok):
            stat[i], pval[i] = _wilcoxon(ds[i], bool(exact))
    elif test == "sign":
        for i in np.flatnonzero(ok):
            stat[i] = wins[i]
            m = wins[i] + losses[i]
            pval[i] = 1.0 if m == 0 else st.binomtest(int(wins[i]), int(m), 0.5).pvalue

    need_flip = test == "randomization"
    need_boot = test == "bootstrap" or ci_method in ("bootstrap", "bca")
    if need_flip or need_boot:
        groups: dict[bytes, list[int]] = {}
        for i in np.flatnonzero(ok):
            key = np.asarray(qid_all[items[i]["rows"]], dtype=str).tobytes()
            groups.setdefault(key, []).append(i)
        for idx in groups.values():
            idx = np.asarray(idx)
            D = np.column_stack([ds[i] for i in idx])
            nq = D.shape[0]
            cl = codes[idx[0]] if cluster else None  # same questions: same clusters
            if need_flip:
                # the exchangeable units: questions, or clusters (one flip per cluster sum)
                U = D if cl is None else _cluster_sums(D, cl)[0]
                nu = U.shape[0]
                use_exact = nu <= _EXACT_MAX_N if exact is None else bool(exact)
                if use_exact and nu > 30:
                    unit = "clusters" if cluster else "questions"
                    raise ValueError(f"exact=True needs 2**n sign flips; n = {nu} {unit} is too many "
                                     "(max 30)")
                pval[idx], used_B[idx] = _sign_flip_pvalues(
                    U, n_resamples=n_resamples, seed=seed, exact=use_exact)
                stat[idx] = D.mean(axis=0)
            if need_boot:
                for cols in _column_batches(len(idx), nq, n_resamples):
                    sub = D[:, cols]
                    boot = _bootstrap_means(sub, n_resamples=n_resamples, seed=seed, clusters=cl)
                    obs = sub.mean(axis=0)
                    if ci_method == "bca":
                        lo, hi = _bca_ci(boot, obs, _jackknife_means(sub, cl), confidence)
                    else:
                        lo, hi = _percentile_ci(boot, confidence)
                    if ci_method in ("bootstrap", "bca"):
                        ci_low[idx[cols]] = lo
                        ci_high[idx[cols]] = hi
                    if test == "bootstrap":
                        tol = 1e-12 * np.abs(sub).sum(axis=0)
                        b = (np.abs(boot - obs) >= np.abs(obs) - tol).sum(axis=0)
                        pval[idx[cols]] = (b + 1) / (n_resamples + 1)
                        stat[idx[cols]] = obs
                        used_B[idx[cols]] = n_resamples
                if not need_flip:
                    used_B[idx] = n_resamples
    if ci_method == "none":
        ci_low[:] = np.nan
        ci_high[:] = np.nan

    # ---- multiple comparisons, per family
    fam_of = [it["fam"] for it in items]
    padj = np.full(k, np.nan)
    corr_used = np.empty(k, dtype=object)
    fam_members: dict[tuple, list[int]] = {}
    for i, f in enumerate(fam_of):
        fam_members.setdefault(f, []).append(i)
    for fam, idx in fam_members.items():
        idx = np.asarray(idx)
        corr = correction or ("holm" if len(idx) > 1 else "none")
        corr_used[idx] = corr
        if corr in ("tukey", "randomized-tukey"):
            padj[idx] = _tukey(W[fam_groups[fam]],
                               [(items[i]["a"], items[i]["b"]) for i in idx], corr,
                               n_resamples=n_resamples, seed=seed, label=fam)
        else:
            padj[idx] = adjust_pvalues(pval[idx], corr)

    resampling = used_B > 0
    out = pd.DataFrame({"measure": [f[-1] for f in fam_of]})
    for j, col in enumerate(by):
        out[col] = [f[j] for f in fam_of]
    out["system_a"] = [systems[it["a"]] for it in items]
    out["system_b"] = [systems[it["b"]] for it in items]
    out["n"] = n
    out["n_dropped"] = np.array([it["dropped"] for it in items], dtype=np.int64)
    out["cluster"] = pd.Series([cluster] * k, dtype=object)
    out["n_clusters"] = pd.array(n_clusters if cluster else [pd.NA] * k, dtype="Int64")
    out["mean_a"] = mean_a
    out["mean_b"] = mean_b
    out["diff"] = diff
    out["sd_diff"] = sd
    out["ci_low"] = ci_low
    out["ci_high"] = ci_high
    out["ci_method"] = ci_method
    out["statistic"] = stat
    out["p_value"] = pval
    out["p_adjusted"] = padj
    out["test"] = test
    out["correction"] = corr_used.astype(str) if k else pd.Series([], dtype=str)
    out["effect_size"] = effect
    out["wins"] = wins
    out["ties"] = ties
    out["losses"] = losses
    out["confidence"] = float(confidence)
    out["n_resamples"] = pd.array(np.where(resampling, used_B, 0), dtype="Int64")
    out["seed"] = pd.array(np.full(k, seed), dtype="Int64")
    out.loc[~resampling, ["n_resamples", "seed"]] = pd.NA
    return out


def _tukey(V: np.ndarray, pairs: list[tuple[int, int]], kind: str, *, n_resamples: int,
           seed: int, label) -> np.ndarray:
    """Family-wise p-values of Tukey HSD (questions as blocks) or randomised Tukey HSD."""
    from scipy import stats as st

    cols = sorted({c for p in pairs for c in p})
    Y = V[:, cols]
    complete = ~np.isnan(Y).any(axis=1)
    if not complete.all():
        _warn_user(
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
        resid = Y - Y.mean(axis=1, keepdims=True) - means[None, :] + Y.mean()
        dfe = (q - 1) * (s - 1)
        mse = (resid ** 2).sum() / dfe
        if mse == 0:
            return np.where(diffs == 0, 1.0, 0.0)
        qstat = np.abs(diffs) / math.sqrt(mse / q)
        return np.minimum(1.0, st.studentized_range.sf(qstat, s, dfe))
    rng = np.random.default_rng(seed)
    count = np.zeros(len(pairs), dtype=np.int64)
    threshold = np.abs(diffs) - 1e-10 * np.abs(Y).sum(axis=0).max() / q
    step = _chunk_rows(q * s)
    rows = np.arange(q)[None, :, None]
    for start in range(0, n_resamples, step):
        c = min(step, n_resamples - start)
        perm = np.argsort(rng.random((c, q, s)), axis=2)
        m = Y[rows, perm].mean(axis=1)  # (c, s) system means after shuffling labels
        rng_stat = m.max(axis=1) - m.min(axis=1)
        count += (rng_stat[:, None] >= threshold[None, :]).sum(axis=0)
    return (count + 1) / (n_resamples + 1)


# ---------------------------------------------------------------- sample-size planning
def _one_of(sd, p) -> None:
    if (sd is None) == (p is None):
        raise ValueError("give exactly one of sd= (any measure) or p= (a proportion)")
    if sd is not None and not sd >= 0:
        raise ValueError(f"sd must be a float >= 0, got {sd!r}")
    if p is not None and not 0 <= p <= 1:
        raise ValueError(f"p must be a float in [0, 1], got {p!r}")


def _check_n(n, minimum: int = 1) -> None:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < minimum:
        raise ValueError(f"n must be an int >= {minimum}, got {n!r}")


def standard_error(sd: float | None = None, p: float | None = None, *, n: int) -> float:
    """Standard error of a mean over n questions.

    Parameters
    ----------
    sd : float, optional
        Per-question standard deviation of the measure.
    p : float, optional
        Proportion, for a 0/1 measure (give exactly one of sd and p).
    n : int
        Number of questions.

    Returns
    -------
    float
        ``sd / sqrt(n)``, or ``sqrt(p (1 - p) / n)`` for a proportion.

    Examples
    --------
    >>> round(standard_error(p=0.5, n=20), 3)
    0.112
    """
    _one_of(sd, p)
    _check_n(n)
    if p is not None:
        return math.sqrt(p * (1 - p) / n)
    return sd / math.sqrt(n)


def half_width(sd: float | None = None, p: float | None = None, *, n: int,
               confidence: float = 0.95) -> float:
    """Half-width of the confidence interval of a mean over n questions.

    Parameters
    ----------
    sd, p : float
        Per-question sd, or a proportion (exactly one).
    n : int
        Number of questions (>= 2 with sd).
    confidence : float
        Confidence level.

    Returns
    -------
    float
        ``z_{1-alpha/2} sqrt(p (1 - p) / n)`` for a proportion (the spec's "2 x SE");
        ``t_{1-alpha/2, n-1} sd / sqrt(n)`` otherwise.

    Examples
    --------
    >>> round(half_width(p=0.5, n=20), 3)
    0.219
    """
    from scipy import stats as st

    _one_of(sd, p)
    _check_n(n, 1 if p is not None else 2)
    check_confidence(confidence)
    a = 1 - confidence
    if p is not None:
        return float(st.norm.ppf(1 - a / 2)) * math.sqrt(p * (1 - p) / n)
    return float(st.t.ppf(1 - a / 2, n - 1)) * sd / math.sqrt(n)


def n_for_half_width(target: float, *, sd: float | None = None, p: float | None = None,
                     confidence: float = 0.95) -> int:
    """Smallest number of questions whose interval half-width is at most ``target``.

    Parameters
    ----------
    target : float
        Wanted half-width (0.05 = +-5 points).
    sd, p : float
        Per-question sd, or the expected proportion (0.5 is the worst case).
    confidence : float
        Confidence level.

    Returns
    -------
    int
        Smallest n with ``half_width(sd or p, n=n, confidence) <= target``.

    Examples
    --------
    >>> n_for_half_width(0.05, p=0.5)
    385
    """
    from scipy import stats as st

    _one_of(sd, p)
    check_confidence(confidence)
    if not target > 0:
        raise ValueError(f"target must be a float > 0, got {target!r}")
    z = float(st.norm.ppf(1 - (1 - confidence) / 2))
    if p is not None:
        n = max(1, math.ceil((z / target) ** 2 * p * (1 - p) - 1e-9))
        while n > 1 and half_width(p=p, n=n - 1, confidence=confidence) <= target:
            n -= 1
        return n
    n = max(2, math.ceil((z * sd / target) ** 2))
    while half_width(sd=sd, n=n, confidence=confidence) > target:
        n += 1
    return n


def _power(n: int, delta: float, sd_diff: float, alpha: float, two_sided: bool) -> float:
    from scipy import stats as st

    df = n - 1
    if sd_diff == 0:
        return 1.0 if delta != 0 else alpha
    ncp = abs(delta) / sd_diff * math.sqrt(n)
    if two_sided:
        c = st.t.ppf(1 - alpha / 2, df)
        lower = float(st.nct.cdf(-c, df, ncp))  # scipy returns NaN when this underflows
        return float(st.nct.sf(c, df, ncp) + (lower if math.isfinite(lower) else 0.0))
    c = st.t.ppf(1 - alpha, df)
    return float(st.nct.sf(c, df, ncp))


def _check_alpha_power(alpha: float, pw: float | None = None) -> None:
    check_confidence(alpha, "alpha")
    if pw is not None:
        check_confidence(pw, "power")


def power(n: int, delta: float, sd_diff: float, alpha: float = 0.05, *,
          two_sided: bool = True) -> float:
    """Power of the paired t-test to detect a true mean difference ``delta``.

    Parameters
    ----------
    n : int
        Number of questions (>= 2).
    delta : float
        True mean difference between the two systems.
    sd_diff : float
        Standard deviation of the per-question differences (``sd_diff`` of compare()).
    alpha : float
        Significance level.
    two_sided : bool
        Two-sided test (default) or one-sided in the direction of delta.

    Returns
    -------
    float
        Probability of rejecting H0: mean difference = 0.

    Notes
    -----
    Exact power from the noncentral t: with ``df = n - 1``, ``ncp = |delta| sqrt(n) / sd_diff``
    and ``c = t_{1 - alpha/2, df}``, power = ``P(T' > c) + P(T' < -c)``. (R's
    ``power.t.test(type="paired")`` leaves out the negligible second term.)

    Examples
    --------
    >>> round(power(34, 0.5, 1.0), 3)
    0.808
    """
    _check_n(n, 2)
    _check_alpha_power(alpha)
    if not sd_diff >= 0:
        raise ValueError(f"sd_diff must be a float >= 0, got {sd_diff!r}")
    return _power(int(n), float(delta), float(sd_diff), alpha, two_sided)


def n_for_difference(delta: float, *, sd_diff: float, alpha: float = 0.05,
                     power: float = 0.8, two_sided: bool = True) -> int:
    """Questions needed for a paired t-test to detect ``delta`` with the given power.

    Parameters
    ----------
    delta : float
        Smallest mean difference worth detecting (e.g. 0.02 = 2 points of nDCG@10).
    sd_diff : float
        Standard deviation of per-question differences between the systems.
    alpha, power : float
        Significance level and wanted power (1 - beta).
    two_sided : bool
        Two-sided test (default).

    Returns
    -------
    int
        Smallest n >= 2 whose power (see :func:`power`) is at least ``power``.

    Notes
    -----
    Starts from the normal approximation ``((z_{1-alpha/2} + z_{power}) sd_diff / delta)^2``
    and steps n until the noncentral-t power crosses the target.

    Examples
    --------
    >>> n_for_difference(0.5, sd_diff=1.0)
    34
    """
    from scipy import stats as st

    _check_alpha_power(alpha, power)
    if delta == 0 or not sd_diff > 0:
        raise ValueError("delta must be non-zero and sd_diff > 0")
    za = st.norm.ppf(1 - (alpha / 2 if two_sided else alpha))
    n = max(2, math.ceil(((za + st.norm.ppf(power)) * sd_diff / abs(delta)) ** 2))
    while _power(n, delta, sd_diff, alpha, two_sided) < power:
        n += 1
    while n > 2 and _power(n - 1, delta, sd_diff, alpha, two_sided) >= power:
        n -= 1
    return n


def detectable_difference(n: int, *, sd_diff: float, alpha: float = 0.05,
                          power: float = 0.8, two_sided: bool = True) -> float:
    """Smallest true mean difference a paired t-test on n questions detects with the given power.

    Parameters
    ----------
    n : int
        Number of questions (>= 2).
    sd_diff : float
        Standard deviation of per-question differences.
    alpha, power : float
        Significance level and power.
    two_sided : bool
        Two-sided test (default).

    Returns
    -------
    float
        ``delta > 0`` with ``power(n, delta, sd_diff, alpha) == power`` (root of the
        noncentral-t power).

    Examples
    --------
    >>> round(detectable_difference(34, sd_diff=1.0), 3)
    0.495
    """
    from scipy.optimize import brentq

    _check_n(n, 2)
    _check_alpha_power(alpha, power)
    if not sd_diff > 0:
        raise ValueError(f"sd_diff must be a float > 0, got {sd_diff!r}")
    hi = sd_diff / math.sqrt(n)
    while _power(n, hi, sd_diff, alpha, two_sided) < power:
        hi *= 2
    return float(brentq(lambda d: _power(n, d, sd_diff, alpha, two_sided) - power,
                        0.0, hi, xtol=1e-12))


def planning_curve(per_question: pd.DataFrame | None = None, *, sd: float | None = None,
                   p: float | None = None, sd_diff: float | None = None,
                   n: Iterable[int] = (10, 20, 30, 50, 75, 100, 150, 200, 300, 500, 1000),
                   deltas: Iterable[float] = (0.01, 0.02, 0.05, 0.1),
                   confidence: float = 0.95, alpha: float = 0.05) -> pd.DataFrame:
    """Tidy table of standard error, interval half-width and power against n.

    Parameters
    ----------
    per_question : DataFrame, optional
        Per-question table to estimate ``sd`` / ``p`` (per measure, pooled over systems)
        and ``sd_diff`` (per measure, pooled over all pairs of systems on shared
        questions). Numbers given as ``sd``, ``p`` or ``sd_diff`` override the estimates.
    sd, p, sd_diff : float, optional
        Per-question sd, proportion (0/1 measure), sd of paired differences.
    n : iterable of int
        Numbers of questions (>= 2).
    deltas : iterable of float
        True mean differences for the power columns.
    confidence, alpha : float
        Interval confidence and test significance level.

    Returns
    -------
    DataFrame
        One row per (measure, n, delta); columns ``measure`` (<NA> without a table),
        ``n, sd, proportion, sd_diff, se, half_width, confidence, delta, alpha, power``.
        ``se``/``half_width`` repeat across deltas; power is NaN without ``sd_diff``.

    Notes
    -----
    ``se`` and ``half_width`` as :func:`standard_error` and :func:`half_width` (a
    proportion is used for binary measures); ``power`` as :func:`power`. Pooling:
    ``sd = sqrt(mean of per-system variances)``, ``sd_diff = sqrt(mean over pairs of
    var(d))``, ``proportion = mean over all rows``.

    Examples
    --------
    >>> c = planning_curve(p=0.5, n=[20, 50, 200], deltas=[])
    >>> c.se.round(3).tolist()
    [0.112, 0.071, 0.035]
    """
    ns = [int(x) for x in n]
    for x in ns:
        _check_n(x, 2)
    deltas = [float(d) for d in deltas]
    check_confidence(confidence)
    _check_alpha_power(alpha)
    if sd is not None and p is not None:
        raise ValueError("give at most one of sd= and p=")
    specs = []  # (measure, sd, p, sd_diff)
    if per_question is None:
        if sd is None and p is None and sd_diff is None:
            raise ValueError("give a per-question table, or sd= / p= and/or sd_diff=")
        specs.append((pd.NA, sd, p, sd_diff))
    else:
        df = _clean(per_question, by=[], cluster=None)
        for measure, g in df.groupby("measure", sort=False):
            binary = bool(g["value"].isin([0.0, 1.0]).all())
            var = g.groupby("system")["value"].var(ddof=1)
            est_sd = float(np.sqrt(var.mean())) if var.notna().any() else np.nan
            est_p = float(g["value"].mean()) if binary else None
            wide = g.pivot(index="query_id", columns="system", values="value").to_numpy()
            vs = []
            for i, j in itertools.combinations(range(wide.shape[1]), 2):
                d = wide[:, j] - wide[:, i]
                d = d[~np.isnan(d)]
                if d.size > 1:
                    vs.append(d.var(ddof=1))
            est_sdd = float(np.sqrt(np.mean(vs))) if vs else None
            if sd is not None:
                m_sd, m_p = sd, None
            elif p is not None:
                m_sd, m_p = None, p
            else:
                m_sd, m_p = est_sd, est_p  # se from the proportion for binary measures
            specs.append((measure, m_sd, m_p, sd_diff if sd_diff is not None else est_sdd))
    rows = []
    for measure, s_sd, s_p, s_dd in specs:
        for nn in ns:
            if s_p is not None:
                se = standard_error(p=s_p, n=nn)
                hw = half_width(p=s_p, n=nn, confidence=confidence)
            elif s_sd is not None and not np.isnan(s_sd):
                se = standard_error(sd=s_sd, n=nn)
                hw = half_width(sd=s_sd, n=nn, confidence=confidence)
            else:
                se = hw = np.nan
            base = dict(measure=measure, n=nn, sd=np.nan if s_sd is None else s_sd,
                        proportion=np.nan if s_p is None else s_p,
                        sd_diff=np.nan if s_dd is None else s_dd, se=se, half_width=hw,
                        confidence=float(confidence))
            if not deltas:
                rows.append({**base, "delta": np.nan, "alpha": float(alpha), "power": np.nan})
            for dlt in deltas:
                pw = (_power(nn, dlt, s_dd, alpha, True) if s_dd is not None and s_dd > 0
                      else np.nan)
                rows.append({**base, "delta": dlt, "alpha": float(alpha), "power": pw})
    cols = ["measure", "n", "sd", "proportion", "sd_diff", "se", "half_width", "confidence",
            "delta", "alpha", "power"]
    out = pd.DataFrame(rows, columns=cols)
    out["n"] = out["n"].astype(np.int64)
    return out
