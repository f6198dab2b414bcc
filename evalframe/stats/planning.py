"""Sample-size planning: standard error, interval half-width, power, questions needed."""
from __future__ import annotations

import itertools
import math
from collections.abc import Iterable

import numpy as np
import pandas as pd

from .._validation import Interval, Satisfies, check
from .validation import check_confidence, check_n, clean_table

__all__ = ["standard_error", "half_width", "n_for_half_width", "power", "power_t",
           "n_for_difference", "detectable_difference", "planning_curve", "CURVE_COLUMNS"]

CURVE_COLUMNS = ["measure", "n", "sd", "proportion", "sd_diff", "se", "half_width",
                 "confidence", "delta", "alpha", "power"]


_NON_NEGATIVE = Interval(float, 0, None)
_POSITIVE = Interval(float, 0, None, closed="neither")
_NON_ZERO = Satisfies(lambda v: Interval(float).accepts(v) and v != 0, "a non-zero float")


def _one_of(sd, p, *, func: str) -> None:
    if (sd is None) == (p is None):
        raise ValueError(f"{func}: give exactly one of sd= (any measure) or p= (a proportion)")
    check(func, "sd", sd, _NON_NEGATIVE, None)
    check(func, "p", p, Interval(float, 0, 1), None)


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
    _one_of(sd, p, func="standard_error")
    check_n(n, func="standard_error")
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

    _one_of(sd, p, func="half_width")
    check_n(n, 1 if p is not None else 2, func="half_width")
    check_confidence(confidence, func="half_width")
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

    _one_of(sd, p, func="n_for_half_width")
    check_confidence(confidence, func="n_for_half_width")
    check("n_for_half_width", "target", target, _POSITIVE)
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


def power_t(n: int, delta: float, sd_diff: float, alpha: float, two_sided: bool) -> float:
    """Noncentral-t power of the paired t-test, without input checks (see :func:`power`)."""
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


def _check_alpha_power(func: str, alpha: float, pw: float | None = None) -> None:
    check_confidence(alpha, "alpha", func=func)
    if pw is not None:
        check_confidence(pw, "power", func=func)


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
    check_n(n, 2, func="power")
    _check_alpha_power("power", alpha)
    check("power", "sd_diff", sd_diff, _NON_NEGATIVE)
    return power_t(int(n), float(delta), float(sd_diff), alpha, two_sided)


#: Beyond this many questions :func:`n_for_difference` gives the normal approximation's
#: answer as it is (the noncentral t's refinement changes it by less than one question).
LARGE_N = 10 ** 7


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

    _check_alpha_power("n_for_difference", alpha, power)
    check("n_for_difference", "delta", delta, _NON_ZERO)
    check("n_for_difference", "sd_diff", sd_diff, _POSITIVE)
    za = st.norm.ppf(1 - (alpha / 2 if two_sided else alpha))
    n = max(2, math.ceil(((za + st.norm.ppf(power)) * sd_diff / abs(delta)) ** 2))
    if n > LARGE_N:  # t and normal agree to far below one question here (and t's quantiles overflow)
        return n
    while power_t(n, delta, sd_diff, alpha, two_sided) < power:
        n += 1
    while n > 2 and power_t(n - 1, delta, sd_diff, alpha, two_sided) >= power:
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

    check_n(n, 2, func="detectable_difference")
    _check_alpha_power("detectable_difference", alpha, power)
    check("detectable_difference", "sd_diff", sd_diff, _POSITIVE)
    hi = sd_diff / math.sqrt(n)
    while power_t(n, hi, sd_diff, alpha, two_sided) < power:
        hi *= 2
    return float(brentq(lambda d: power_t(n, d, sd_diff, alpha, two_sided) - power,
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
        check_n(x, 2, func="planning_curve")
    deltas = [float(d) for d in deltas]
    check_confidence(confidence, func="planning_curve")
    _check_alpha_power("planning_curve", alpha)
    if sd is not None and p is not None:
        raise ValueError("planning_curve: give at most one of sd= and p=")
    if per_question is None:
        if sd is None and p is None and sd_diff is None:
            raise ValueError("planning_curve: give a per-question table, or sd= / p= and/or "
                             "sd_diff=")
        specs = [(pd.NA, sd, p, sd_diff)]
    else:
        specs = _estimates(clean_table(per_question, by=[], cluster=None), sd, p, sd_diff)
    rows = [row for spec in specs
            for row in _curve_rows(spec, ns, deltas, confidence=confidence, alpha=alpha)]
    out = pd.DataFrame(rows, columns=CURVE_COLUMNS)
    out["n"] = out["n"].astype(np.int64)
    return out


def _sd_diff_estimate(g: pd.DataFrame) -> float | None:
    """sqrt(mean over pairs of systems of var(d)) on shared questions, None if no pair."""
    wide = g.pivot(index="query_id", columns="system", values="value").to_numpy()
    vs = []
    for i, j in itertools.combinations(range(wide.shape[1]), 2):
        d = wide[:, j] - wide[:, i]
        d = d[~np.isnan(d)]
        if d.size > 1:
            vs.append(d.var(ddof=1))
    return float(np.sqrt(np.mean(vs))) if vs else None


def _estimates(df: pd.DataFrame, sd: float | None, p: float | None,
               sd_diff: float | None) -> list[tuple]:
    """(measure, sd, p, sd_diff) per measure, pooled over systems; given numbers win."""
    specs = []
    for measure, g in df.groupby("measure", sort=False):
        binary = bool(g["value"].isin([0.0, 1.0]).all())
        var = g.groupby("system")["value"].var(ddof=1)
        est_sd = float(np.sqrt(var.mean())) if var.notna().any() else np.nan
        est_p = float(g["value"].mean()) if binary else None
        est_sdd = _sd_diff_estimate(g)
        if sd is not None:
            m_sd, m_p = sd, None
        elif p is not None:
            m_sd, m_p = None, p
        else:
            m_sd, m_p = est_sd, est_p  # se from the proportion for binary measures
        specs.append((measure, m_sd, m_p, sd_diff if sd_diff is not None else est_sdd))
    return specs


def _curve_rows(spec: tuple, ns: list[int], deltas: list[float], *, confidence: float,
                alpha: float) -> list[dict]:
    """Rows of one (measure, sd, p, sd_diff) spec: one per (n, delta)."""
    measure, s_sd, s_p, s_dd = spec
    rows = []
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
            pw = (power_t(nn, dlt, s_dd, alpha, True) if s_dd is not None and s_dd > 0
                  else np.nan)
            rows.append({**base, "delta": dlt, "alpha": float(alpha), "power": pw})
    return rows
