"""Evaluating the evaluation: does a test collection (or a measure) rank systems the
same way as another, and how many system pairs can it tell apart?

- :func:`rank_correlation`: Kendall's tau-b, tau_ap (Yilmaz, Aslam and Robertson, SIGIR
  2008) and extrapolated rank-biased overlap (Webber, Moffat and Zobel, TOIS 2010)
  between two system rankings: two measures, two golden sets, a golden set and its
  subsample.
- :func:`discriminative_power` (Sakai, SIGIR 2006): the share of system pairs whose paired
  test is significant at ``alpha``; :func:`asl_curve` the achieved significance level of
  every pair, sorted, as Sakai plots it.
"""
from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
from scipy import stats as sps

from .paired import compare
from .._validation import CONFIDENCE, Options, check, error, type_of
from .validation import check_confidence

__all__ = ["rank_correlation", "discriminative_power", "asl_curve"]


def rank_correlation(a, b, *, measure: str | None = None, measure_b: str | None = None,
                     p: float = 0.9) -> pd.DataFrame:
    """Correlation between two rankings of the same systems.

    Parameters
    ----------
    a, b : per-question table, aggregate table, Series or dict
        Each gives a score per system: a per-question table (``system, query_id,
        measure, value``) is averaged per system; an aggregate table uses its ``mean``;
        a Series or dict maps system -> score. ``a`` is the reference ranking (tau_ap and
        RBO are top-weighted: the top of ``a`` counts most for tau_ap, the top of both for RBO).
    measure, measure_b : str, optional
        The measure of ``a`` (and of ``b``: default the same) when the tables hold several.
    p : float
        RBO's persistence in (0, 1): the weight of rank d is proportional to p^(d-1).

    Returns
    -------
    DataFrame
        ``statistic, value, p_value, n_systems``: rows ``kendall_tau`` (tau-b, with its
        p-value), ``tau_ap`` and ``rbo``.

    Notes
    -----
    Systems are ranked by score descending, equal scores by system name. tau_ap =
    2 / (N - 1) * sum_{i=2..N} C(i) / (i - 1) - 1, where, going down ``b``'s ranking,
    C(i) counts the systems above position i that ``a`` also ranks above it.
    RBO_ext = X_k / k * p^k + (1 - p) / p * sum_{d=1..k} X_d / d * p^d, X_d the overlap
    of the two top-d lists (k = N: both rankings hold every system).

    Examples
    --------
    >>> from evalframe import stats
    >>> stats.rank_correlation({"a": 3, "b": 2, "c": 1}, {"a": 3, "b": 1, "c": 2})["value"].round(3).tolist()
    [0.333, 0.5, 0.955]
    """
    check("rank_correlation", "p", p, CONFIDENCE)
    sa = _scores(a, measure, "a")
    sb = _scores(b, measure_b if measure_b is not None else measure, "b")
    if set(sa.index) != set(sb.index):
        only = sorted(set(sa.index) ^ set(sb.index))
        raise ValueError(f"rank_correlation: a and b must score the same systems, got {only[:5]} in one only")
    if len(sa) < 2:
        raise ValueError(f"rank_correlation: a and b must score at least 2 systems, got {len(sa)}")
    sb = sb[sa.index]
    tau = sps.kendalltau(sa.to_numpy(), sb.to_numpy())
    ra, rb = _ranking(sa), _ranking(sb)
    return pd.DataFrame({
        "statistic": ["kendall_tau", "tau_ap", "rbo"],
        "value": [float(tau.statistic), _tau_ap(ra, rb), _rbo_ext(ra, rb, p)],
        "p_value": [float(tau.pvalue), np.nan, np.nan],
        "n_systems": len(sa),
    })


def _scores(x, measure, name) -> pd.Series:
    if isinstance(x, Mapping):
        x = pd.Series(x, dtype=np.float64)
    if isinstance(x, pd.Series):
        s = x.astype(np.float64)
        s.index = s.index.astype(str)
        return s
    if not isinstance(x, pd.DataFrame) or "system" not in x:
        raise error("rank_correlation", name, "a per-question or aggregate table, a Series or a dict", type_of(x))
    if "measure" in x:
        measures = pd.unique(x["measure"].astype(str))
        if measure is None and len(measures) > 1:
            raise ValueError(f"rank_correlation: {name} holds several measures {list(measures)[:5]}: pass measure=")
        if measure is not None:
            check("rank_correlation", "measure", measure, Options(measures, f"one of {list(measures)[:8]}"))
            x = x[x["measure"].astype(str) == measure]
    column = "mean" if "mean" in x else "value"
    return x.groupby(x["system"].astype(str), sort=False)[column].mean().astype(np.float64)


def _ranking(s: pd.Series) -> np.ndarray:
    """System names, best first (ties by name)."""
    frame = pd.DataFrame({"system": s.index.to_numpy(), "score": s.to_numpy()})
    return frame.sort_values(["score", "system"], ascending=[False, True], kind="stable")["system"].to_numpy()


def _tau_ap(reference: np.ndarray, estimated: np.ndarray) -> float:
    n = len(reference)
    pos = {name: i for i, name in enumerate(reference)}
    ref_rank = np.array([pos[name] for name in estimated])
    above = ref_rank[None, :] < ref_rank[:, None]  # [i, j]: a ranks estimated[j] above estimated[i]
    correct = np.tril(above, k=-1).sum(axis=1)[1:]
    return float(2.0 / (n - 1) * np.sum(correct / np.arange(1, n)) - 1.0)


def _rbo_ext(s: np.ndarray, t: np.ndarray, p: float) -> float:
    k = len(s)
    depth = np.arange(1, k + 1)
    pos_t = {name: i for i, name in enumerate(t)}
    seen_at = np.maximum(np.arange(k), np.array([pos_t[name] for name in s]))  # depth where s[i] is in both
    overlap = np.cumsum(np.bincount(seen_at, minlength=k))
    return float(overlap[-1] / k * p ** k + (1 - p) / p * np.sum(overlap / depth * p ** depth))


#: asl_curve's test names -> compare's: "bootstrap" is Sakai's (2006) studentized bootstrap
ASL_TESTS = {"randomization": "randomization", "t": "t", "wilcoxon": "wilcoxon", "sign": "sign",
             "bootstrap": "bootstrap-t", "bootstrap-t": "bootstrap-t", "bootstrap-shift": "bootstrap"}


def _compare_test(test: str, func: str) -> str:
    return ASL_TESTS[check(func, "test", test, Options(ASL_TESTS))]


def asl_curve(per_question: pd.DataFrame, *, test: str = "randomization", n_resamples: int = 10_000,
              seed: int = 0, by: str | None = None) -> pd.DataFrame:
    """Achieved significance level of every system pair, sorted (Sakai's ASL curve).

    Parameters
    ----------
    per_question : DataFrame
        ``system, query_id, measure, value`` with >= 2 systems.
    test : str
        ``"randomization"``, ``"t"``, ``"wilcoxon"``, ``"sign"`` (the paired tests of
        :func:`compare`), ``"bootstrap"``: Sakai's (2006) paired bootstrap test, the
        studentized one (``t = mean(d) / (sd(d) / sqrt(n))`` against the t* of B
        resamples of ``w = d - mean(d)``; :func:`compare`'s ``"bootstrap-t"``, also
        accepted), or ``"bootstrap-shift"``, the shift-method bootstrap of
        :func:`compare`'s ``"bootstrap"`` (what ``"bootstrap"`` meant here before
        issue 33). p-values are not adjusted (Sakai's definition); the resampled ones
        are ``(b + 1) / (B + 1)``, where Sakai writes ``b / B``.
    n_resamples, seed : int
        For the resampling tests.
    by : str, optional
        Segment column: one curve per segment.

    Returns
    -------
    DataFrame
        ``measure, [by,] pair_rank, system_a, system_b, diff, p_value``: pairs sorted by
        p-value within each measure (pair_rank 1 = the most significant).

    Examples
    --------
    >>> import evalframe as ef
    >>> from evalframe import stats
    >>> cran = ef.datasets.load_cranfield()
    >>> per_q = ef.evaluate(cran.runs, cran.qrels, "AP")
    >>> len(stats.asl_curve(per_q, test="t"))  # 5 systems: 10 pairs
    10
    """
    pairs = compare(per_question, test=_compare_test(test, "asl_curve"), correction="none", ci="none",
                    n_resamples=n_resamples, seed=seed, by=by)
    keys = ["measure"] + ([by] if by else [])
    pairs = pairs.sort_values(keys + ["p_value", "system_a", "system_b"], kind="stable")
    pairs = pairs.assign(pair_rank=pairs.groupby(keys, sort=False).cumcount() + 1)
    return pairs[keys + ["pair_rank", "system_a", "system_b", "diff", "p_value"]].reset_index(drop=True)


def discriminative_power(per_question: pd.DataFrame, *, test: str = "randomization", alpha: float = 0.05,
                         n_resamples: int = 10_000, seed: int = 0, by: str | None = None) -> pd.DataFrame:
    """Sakai's discriminative power: the share of system pairs significant at ``alpha``.

    Parameters
    ----------
    per_question : DataFrame
        ``system, query_id, measure, value`` with >= 2 systems.
    test, n_resamples, seed, by
        As in :func:`asl_curve`.
    alpha : float
        Significance level, in (0, 1).

    Returns
    -------
    DataFrame
        ``measure, [by,] n_pairs, n_significant, discriminative_power, alpha, test``.

    Examples
    --------
    >>> import evalframe as ef
    >>> from evalframe import stats
    >>> cran = ef.datasets.load_cranfield()
    >>> per_q = ef.evaluate(cran.runs, cran.qrels, ["AP", "P@5"])
    >>> stats.discriminative_power(per_q, test="t")[["measure", "n_pairs"]].values.tolist()
    [['AP', 10], ['P@5', 10]]
    """
    check_confidence(alpha, "alpha", func="discriminative_power")
    _compare_test(test, "discriminative_power")
    curve = asl_curve(per_question, test=test, n_resamples=n_resamples, seed=seed, by=by)
    keys = ["measure"] + ([by] if by else [])
    out = curve.assign(sig=curve["p_value"] < alpha).groupby(keys, sort=False).agg(
        n_pairs=("p_value", "size"), n_significant=("sig", "sum")).reset_index()
    out["discriminative_power"] = out["n_significant"] / out["n_pairs"]
    out["alpha"] = alpha
    out["test"] = test
    return out
