"""The report's table names, fixed columns and row order (shared by every section).

The lowest file of the :mod:`evalframe.report` package: every other file may import it.
"""
from __future__ import annotations

__all__ = ["TABLES", "COMPARISON_COLUMNS", "BY_SEGMENT_COLUMNS", "STAGE_COLUMNS", "CURVE_COLUMNS",
           "DIAGNOSTIC_COLUMNS", "MeasureRows", "order_by", "order_rows"]

from typing import Mapping, Sequence

import numpy as np
import pandas as pd

#: the tables of a Report, in the order they are written
TABLES = ("summary", "per_question", "by_segment", "comparisons", "diagnostics", "stages",
          "curves", "planning", "changes")
#: columns of the comparisons table (stats.compare's + ``significant``), also when it is empty
COMPARISON_COLUMNS = ("measure", "system_a", "system_b", "n", "n_dropped", "cluster", "n_clusters",
                      "mean_a", "mean_b", "diff", "sd_diff", "ci_low", "ci_high", "ci_method",
                      "ci_low_adjusted", "ci_high_adjusted", "ci_adjustment", "statistic", "p_value", "p_adjusted", "test", "alternative", "correction", "effect_size",
                      "wins", "ties", "losses", "confidence", "n_resamples", "seed", "significant")
BY_SEGMENT_COLUMNS = ("system", "segment", "segment_value", "measure", "n", "mean", "se", "ci_low",
                      "ci_high", "method", "overall_mean", "gap", "too_small", "below_overall", "flag",
                      "p_below", "p_below_bh", "below_overall_bh")
STAGE_COLUMNS = ("stage", "system", "measure", "k", "n", "mean", "ci_low", "ci_high", "ceiling",
                 "share_of_ceiling", "lost", "method")
CURVE_COLUMNS = ("system", "family", "k", "measure", "n", "mean", "se", "ci_low", "ci_high", "method",
                 "confidence")
DIAGNOSTIC_COLUMNS = ("check", "system", "measure", "count", "value", "level", "detail", "action", "examples")


def order_by(df: pd.DataFrame, keys: Sequence[str],
             orders: Mapping[str, Sequence[str]]) -> pd.DataFrame:
    """``df`` sorted (stable) by ``keys``; a key column named in ``orders`` is sorted by the
    position of its values in that sequence (e.g. systems in the order the user gave them)."""
    positions = {c: {v: i for i, v in enumerate(seq)} for c, seq in orders.items()}

    def key(col: pd.Series) -> pd.Series:
        pos = positions.get(str(col.name))
        return col.map(pos) if pos is not None else col
    return df.sort_values(list(keys), key=key, kind="stable").reset_index(drop=True)


def order_rows(df: pd.DataFrame, systems: Sequence[str], measures: Sequence[str],
               extra: Sequence[str] = ()) -> pd.DataFrame:
    """``df`` sorted (stable) by system, ``extra`` columns, measure: systems and measures in
    the order given (the order the user named them)."""
    return order_by(df, ["system", *extra, "measure"], {"system": systems, "measure": measures})



class MeasureRows:
    """A per-question table indexed by measure once, to take the rows of a few measures
    quickly (each section of the report needs its own measures of one evaluation).

    Parameters
    ----------
    per_question : DataFrame
        ``system, query_id, measure, value`` (not copied, not changed).
    """

    def __init__(self, per_question: pd.DataFrame):
        self.table = per_question
        codes, uniques = pd.factorize(per_question["measure"])
        self._codes = codes
        self._position = {str(m): i for i, m in enumerate(uniques)}

    def select(self, measures: Sequence[str]) -> pd.DataFrame:
        """The rows of ``measures``, measure by measure in the order given, each measure's
        rows in their order in the table (absent measures are skipped)."""
        wanted = [self._position[m] for m in dict.fromkeys(measures) if m in self._position]
        rank = np.full(len(self._position) + 1, -1, dtype=np.int64)
        rank[wanted] = np.arange(len(wanted))
        r = rank[self._codes]  # code -1 (a missing measure name) maps to the last slot: -1
        keep = np.flatnonzero(r >= 0)
        return self.table.iloc[keep[np.argsort(r[keep], kind="stable")]].reset_index(drop=True)
