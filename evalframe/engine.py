"""The in-memory engine: one partition of questions in, per-question table out.

Everything :func:`evalframe.evaluate` computes on a table that fits in memory
goes through :func:`evaluate_partition`; engines that split a run by question
(streaming batches, hash buckets, Dask partitions) call it once per part and
concatenate the tables and merge the diagnostics
(:func:`evalframe.ranking.merge_diagnostics`).  Its answer for a part depends
only on that part's questions (the per-partition contract of
:mod:`evalframe.ranking`).
"""
from __future__ import annotations

__all__ = ["prepare", "per_question_table", "evaluate_partition", "Duplicates"]

from typing import Literal

import numpy as np
import pandas as pd

from .io import read_qrels, read_run
from .measures import Measure, compute
from .ranking import Judged, Missing, Ties, judge
from .schema import check_qrels, check_run

Duplicates = Literal["error", "max", "first"]


def prepare(run, qrels, *, rel: int = 1, ties: Ties = "doc_id_desc", missing: Missing = "zero",
            depth: int | None = None, duplicates: Duplicates = "error", warn: bool = True) -> Judged:
    """Read and check both inputs (never trusting, never modifying them), then judge.

    A DataFrame is checked by :func:`~evalframe.schema.check_run` /
    :func:`~evalframe.schema.check_qrels` (what :func:`~evalframe.read_run` and
    :func:`~evalframe.read_qrels` do with one), whose factorised ids the ranking step reuses."""
    run = check_run(run, duplicates=duplicates) if isinstance(run, pd.DataFrame) else read_run(run, duplicates=duplicates)
    qrels = check_qrels(qrels) if isinstance(qrels, pd.DataFrame) else read_qrels(qrels)
    return judge(run, qrels, rel=rel, ties=ties, missing=missing, depth=depth, warn=warn)


def per_question_table(J: Judged, ms: list[Measure]) -> pd.DataFrame:
    """The long table ``[system,] query_id, measure, value`` of ``ms`` on every group of ``J``."""
    import pyarrow as pa
    values = compute(J, ms)
    G, M = values.shape
    group_of_row = pa.array(np.repeat(np.arange(G), M))
    cols = {c: pa.array(J.groups[c].to_numpy(dtype=object), pa.large_string()).take(group_of_row)
            for c in J.groups.columns}  # one row per (group, measure), built by Arrow takes
    cols["measure"] = pa.array([str(m) for m in ms], pa.large_string()).take(pa.array(np.tile(np.arange(M), G)))
    out = pd.DataFrame({c: _str_column(a) for c, a in cols.items()})
    out["value"] = values.ravel()
    return out


def evaluate_partition(run, qrels, ms: list[Measure], *, rel: int = 1, ties: Ties = "doc_id_desc",
                       missing: Missing = "zero", depth: int | None = None,
                       duplicates: Duplicates = "error", warn: bool = True
                       ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per-question table and diagnostics table of one partition (measures already resolved)."""
    J = prepare(run, qrels, rel=rel, ties=ties, missing=missing, depth=depth, duplicates=duplicates, warn=warn)
    return per_question_table(J, ms), J.diagnostics.copy()


_PANDAS_3 = int(pd.__version__.split(".")[0]) >= 3


def _str_column(a) -> pd.Series:
    """An Arrow string array as pandas' ``str`` column (object before pandas 3)."""
    if _PANDAS_3:
        return pd.Series(a, dtype=pd.StringDtype("pyarrow", na_value=np.nan))
    return pd.Series(a.to_numpy(zero_copy_only=False), dtype=object)
