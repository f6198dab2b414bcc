"""Sample-size planning: interval widths and power against the number of questions."""
from __future__ import annotations

import pandas as pd

from .. import stats

#: numbers of questions of the planning curve (plus the golden set's own n)
PLANNING_N = (10, 20, 30, 50, 75, 100, 150, 200, 300, 500, 750, 1000, 2000, 5000)
#: the ``method`` of the planning table
PLANNING_METHOD = "t(n-1) half-width (z for 0/1 measures), noncentral-t power"
#: true differences of the power curve
PLANNING_DELTAS = (0.01, 0.02, 0.05, 0.1)


def planning_grid(n_questions: int) -> list[int]:
    """The n of the planning curve: :data:`PLANNING_N` and ``n_questions``, up to
    ``max(2000, 4 * n_questions)``."""
    grid = sorted({*PLANNING_N, *([n_questions] if n_questions >= 2 else [])})
    return [g for g in grid if g <= max(2000, 4 * n_questions)]


def planning_table(per_question: pd.DataFrame, *, n_questions: int, confidence: float = 0.95) -> pd.DataFrame:
    """:func:`stats.planning_curve` of the measures in ``per_question`` on
    :func:`planning_grid`, the test at alpha = 1 - confidence, plus a ``method`` column:
    :data:`PLANNING_METHOD`: half-widths from t(n - 1) quantiles (z for a 0/1 measure, the
    spec's ``2 x SE``), power of the paired t-test from the noncentral t, as
    :func:`stats.half_width` and :func:`stats.power` compute them (analytic, not
    resampled, so it is never mistaken for the report's bootstrap)."""
    t = stats.planning_curve(per_question[["system", "query_id", "measure", "value"]],
                             n=planning_grid(n_questions), deltas=PLANNING_DELTAS,
                             confidence=confidence, alpha=1 - confidence)
    t["method"] = PLANNING_METHOD
    return t
