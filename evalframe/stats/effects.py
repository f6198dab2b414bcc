"""Effect sizes of paired comparisons: Cohen's d_z and wins / ties / losses."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def cohens_dz(diff: np.ndarray, sd_diff: np.ndarray) -> np.ndarray:
    """Cohen's ``d_z = mean(d) / sd(d)`` per pair; NaN where ``sd(d)`` is 0 or NaN."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(sd_diff > 0, diff / sd_diff, np.nan)


def _ncp_root(f, target: float, guess: float) -> float:
    """The ncp where the monotone ``f(ncp)`` equals ``target``: a bracket widened from
    ``guess`` until it holds the root, then Brent's method."""
    from scipy.optimize import brentq

    width = 2.0 + abs(guess)
    for _ in range(60):
        lo, hi = guess - width, guess + width
        if (f(lo) - target) * (f(hi) - target) < 0:
            return float(brentq(lambda x: f(x) - target, lo, hi, xtol=1e-12, rtol=1e-12))
        width *= 2
    return float("nan")


def dz_interval(dz: np.ndarray, n: np.ndarray, confidence: float,
                ) -> tuple[np.ndarray, np.ndarray]:
    """Confidence interval of Cohen's d_z by inverting the noncentral t.

    ``t = d_z sqrt(n)`` has the noncentral t distribution with ``n - 1`` df and
    noncentrality ``delta_z sqrt(n)``; the interval's ends are the noncentralities
    ``lambda`` with ``P(T >= t; lambda) = alpha / 2`` (lower) and ``P(T <= t; lambda) =
    alpha / 2`` (upper), divided by ``sqrt(n)`` (Cumming & Finch 2001; Steiger & Fouladi
    1997). NaN where d_z is NaN or n < 2.
    """
    from scipy import stats as st

    a = (1 - confidence) / 2
    dz = np.asarray(dz, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    lo = np.full(dz.shape, np.nan)
    hi = np.full(dz.shape, np.nan)
    for i in np.flatnonzero(np.isfinite(dz) & (n >= 2)):  # one root per pair, not per question
        df, root_n = n[i] - 1, np.sqrt(n[i])
        t = dz[i] * root_n
        lo[i] = _ncp_root(lambda nc: st.nct.sf(t, df, nc), a, t) / root_n
        hi[i] = _ncp_root(lambda nc: st.nct.cdf(t, df, nc), a, t) / root_n
    return lo, hi


def wins_ties_losses(ds: Sequence[np.ndarray], tie_threshold: float,
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Questions where ``d > t``, ``|d| <= t`` and ``d < -t`` per pair (t = tie_threshold)."""
    n = np.array([d.size for d in ds], dtype=np.int64)
    wins = np.array([(d > tie_threshold).sum() for d in ds], dtype=np.int64)
    losses = np.array([(d < -tie_threshold).sum() for d in ds], dtype=np.int64)
    return wins, n - wins - losses, losses
