"""Paired comparisons of the report: :func:`stats.compare` plus a ``significant`` column."""
from __future__ import annotations

from typing import Sequence

import pandas as pd

from .. import stats
from .tables import COMPARISON_COLUMNS, order_by


def comparison_table(per_question: pd.DataFrame, *, systems: Sequence[str], measures: Sequence[str],
                     baseline: str | None = None, test: str = "t",
                     correction: str | None = None, n_resamples: int = 10_000, seed: int = 0,
                     confidence: float = 0.95, threads: int | None = None) -> pd.DataFrame:
    """Every system against ``baseline`` (or every pair) by :func:`stats.compare`.

    The warnings of :func:`stats.compare` (questions dropped because only one system of a
    pair answers them) reach the caller as they are: the global warning filters are not
    touched, so reports built in other threads lose none of theirs.  ``threads``: those
    :func:`stats.compare` resamples on (the numbers do not depend on it).

    Returns
    -------
    DataFrame
        :func:`stats.compare`'s columns with ``adjusted_ci=True`` + ``significant``
        (``p_adjusted < 1 - confidence``), sorted by measure, system_a, system_b in the order
        given; with fewer than two systems an empty table with the same columns.
        ``ci_low, ci_high`` is each comparison's own (unadjusted) interval;
        ``ci_low_adjusted, ci_high_adjusted`` the interval adjusted for the same family
        as ``p_adjusted`` (``ci_adjustment``: Bonferroni-simultaneous for Holm). Both
        intervals invert the test (``ci_method`` "t" for the t-test, "randomization"
        for the randomisation test): an adjusted interval clear of 0 means
        ``significant``; Holm can also find significant a difference whose adjusted
        interval touches or crosses 0.
    """
    if len(systems) < 2:
        return pd.DataFrame(columns=list(COMPARISON_COLUMNS))
    c = stats.compare(per_question[["system", "query_id", "measure", "value"]], baseline=baseline,
                      test=test, correction=correction, n_resamples=n_resamples, seed=seed,
                      confidence=confidence, adjusted_ci=True, threads=threads)
    c["significant"] = c["p_adjusted"] < (1 - confidence)
    return order_by(c, ["measure", "system_a", "system_b"],
                    {"measure": measures, "system_a": systems, "system_b": systems})
