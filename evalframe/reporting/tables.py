"""The report's table names, fixed columns and row order (shared by every section).

The lowest file of the :mod:`evalframe.reporting` package: every other file may import it.
"""
from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import pandas as pd

#: the tables of a Report, in the order they are written
TABLES = ("summary", "per_question", "by_segment", "comparisons", "diagnostics", "stages",
          "curves", "planning", "changes", "rankings")
#: tables a saved report may lack (written by an older evalframe): read back empty
OPTIONAL_TABLES = ("rankings",)
#: columns of the rankings table: the top of each ranking behind a top change
RANKING_COLUMNS = ("system", "query_id", "rank", "doc_id", "score", "label")
#: columns of the comparisons table (stats.compare's + ``significant``), also when it is empty
COMPARISON_COLUMNS = ("measure", "system_a", "system_b", "n", "n_dropped", "cluster", "n_clusters",
                      "mean_a", "mean_b", "diff", "sd_diff", "ci_low", "ci_high", "ci_method",
                      "ci_low_adjusted", "ci_high_adjusted", "ci_adjustment", "statistic", "p_value", "p_adjusted", "test", "alternative", "correction", "effect_size",
                      "effect_size_low", "effect_size_high", "wins", "ties", "losses", "confidence", "n_resamples", "seed", "significant")
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
    """A per-question table held compactly and indexed by measure once, to take the rows
    of a few measures quickly (each section of the report needs its own measures of one
    evaluation).

    The key columns are factorised once: ``system``, ``query_id`` and ``measure`` are
    held as integer codes into their distinct values (``query_id``'s sorted, as the
    statistics sort them), so taking rows moves integers, not strings.

    Parameters
    ----------
    per_question : DataFrame
        ``system, query_id, measure, value`` without missing keys (not changed; not kept).
    """

    KEYS = ("system", "query_id", "measure")

    def __init__(self, per_question: pd.DataFrame):
        self._codes: dict[str, np.ndarray] = {}
        self._values: dict[str, pd.Index] = {}
        for c in self.KEYS:
            codes, uniques = pd.factorize(per_question[c], sort=c == "query_id")
            self._codes[c] = codes.astype(next(t for t in (np.int8, np.int16, np.int32, np.int64)
                                               if len(uniques) < np.iinfo(t).max))
            self._values[c] = uniques if isinstance(uniques, pd.Index) else pd.Index(uniques)
        self._value = per_question["value"].to_numpy()
        self._columns = list(per_question.columns)
        self._position = {str(m): i for i, m in enumerate(self._values["measure"])}

    def __len__(self) -> int:
        return len(self._value)

    def positions(self, measures: Sequence[str]) -> np.ndarray:
        """Row positions of ``measures``, measure by measure in the order given, each
        measure's rows in their order in the table (absent measures are skipped)."""
        wanted = [self._position[m] for m in dict.fromkeys(measures) if m in self._position]
        rank = np.full(len(self._position), -1, dtype=np.int64)
        rank[wanted] = np.arange(len(wanted))
        r = rank[self._codes["measure"]]
        keep = np.flatnonzero(r >= 0)
        return keep[np.argsort(r[keep], kind="stable")]

    def question_order(self) -> np.ndarray:
        """Rank of each ``query_id`` code in the order the questions first appear."""
        first_seen = pd.unique(self._codes["query_id"])
        rank = np.empty(len(self._values["query_id"]), dtype=np.int64)
        rank[first_seen] = np.arange(len(first_seen))
        return rank

    @property
    def system_names(self) -> pd.Index:
        """The systems, in the order of their codes (first appearance)."""
        return self._values["system"]

    def system_codes(self, positions: np.ndarray) -> np.ndarray:
        """The ``system`` codes of these rows (codes follow the systems' first appearance)."""
        return self._codes["system"][positions]

    def query_codes(self, positions: np.ndarray) -> np.ndarray:
        """The ``query_id`` codes of these rows (codes follow the ids' sorted order)."""
        return self._codes["query_id"][positions]

    def take(self, positions: np.ndarray, *, compact: bool = False) -> pd.DataFrame:
        """These rows as a table ``system, query_id, measure, value`` with the dtypes of
        the table given, or with the key columns categorical (``compact``: what the
        statistics functions read without building a string per row)."""
        cols = {}
        for c in self.KEYS:
            codes = self._codes[c][positions]
            values = self._values[c]
            cols[c] = (pd.Categorical.from_codes(codes, categories=values) if compact
                       else values.take(codes).array)
        cols["value"] = self._value[positions]
        return pd.DataFrame(cols)[[c for c in self._columns if c in cols]]

    def select(self, measures: Sequence[str], *, compact: bool = False) -> pd.DataFrame:
        """The rows of ``measures`` (see :meth:`positions`; ``compact``: see :meth:`take`)."""
        return self.take(self.positions(measures), compact=compact)
