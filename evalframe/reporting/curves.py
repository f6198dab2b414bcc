"""metric@k curves: one measure family at many cutoffs, with analytic t intervals."""
from __future__ import annotations

from typing import Iterable, Sequence

import numpy as np
import pandas as pd

from .. import stats
from ..measures import Measure, parse_measures, resolve
from .tables import CURVE_COLUMNS, order_by

#: cutoffs of the metric@k curve: a log-spaced grid from 1 to 100 (pass range(1, 101) for every k)
CURVE_KS = (1, 2, 3, 4, 5, 7, 10, 15, 20, 30, 50, 70, 100)


def curve_measures(family: str, ks: Iterable[int], *, rel: int = 1) -> list[Measure]:
    """The measures of the curve: ``family@k`` for every k, resolved with ``rel``."""
    return [resolve(m, rel=rel) for m in parse_measures([f"{family}@{k}" for k in ks])]


def curve_table(per_question: pd.DataFrame, family: str, ks: Iterable[int], *, rel: int = 1,
                confidence: float = 0.95, systems: Sequence[str]) -> pd.DataFrame:
    """The ``curves`` table: :func:`stats.summarize` (t intervals) of ``family@k``.

    Parameters
    ----------
    per_question : DataFrame
        ``system, query_id, measure, value``: the rows of :func:`curve_measures` (and no other).
    family, ks : measure family and cutoffs.
    rel : the relevance threshold the measures were resolved with.
    confidence : level of the intervals.
    systems : row order.

    Returns
    -------
    DataFrame
        ``system, family, k, measure, n, mean, se, ci_low, ci_high, method, confidence``,
        sorted by system then k.
    """
    ms = curve_measures(family, ks, rel=rel)
    kmap = {str(m): m.k for m in ms}
    curves = stats.summarize(per_question[["system", "query_id", "measure", "value"]], method="t",
                             confidence=confidence)
    curves.insert(1, "family", family)
    curves.insert(2, "k", curves["measure"].map(kmap).astype(np.int64))
    curves = curves[list(CURVE_COLUMNS)]
    return order_by(curves, ["system", "k"], {"system": systems})
