"""Effect sizes of paired comparisons: Cohen's d_z and wins / ties / losses."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["cohens_dz", "wins_ties_losses"]


def cohens_dz(diff: np.ndarray, sd_diff: np.ndarray) -> np.ndarray:
    """Cohen's ``d_z = mean(d) / sd(d)`` per pair; NaN where ``sd(d)`` is 0 or NaN."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(sd_diff > 0, diff / sd_diff, np.nan)


def wins_ties_losses(ds: Sequence[np.ndarray], tie_threshold: float,
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Questions where ``d > t``, ``|d| <= t`` and ``d < -t`` per pair (t = tie_threshold)."""
    n = np.array([d.size for d in ds], dtype=np.int64)
    wins = np.array([(d > tie_threshold).sum() for d in ds], dtype=np.int64)
    losses = np.array([(d < -tie_threshold).sum() for d in ds], dtype=np.int64)
    return wins, n - wins - losses, losses
