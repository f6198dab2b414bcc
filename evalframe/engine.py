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

from dataclasses import replace
from typing import Literal

import numpy as np
import pandas as pd

from .io import read_qrels, read_run
from .measures import Measure, compute
from .ranking import Judged, Missing, Ties, diagnostics_table, judge, shallow_rankings
from .rollup import UNIT, Rollup, rollup_column, rollup_map, rollup_qrels, rollup_run
from .schema import check_qrels, check_run

Duplicates = Literal["error", "max", "first"]


def prepare(run, qrels, *, rel: int = 1, ties: Ties = "doc_id_desc", missing: Missing = "zero",
            depth: int | None = None, duplicates: Duplicates = "error", warn: bool = True,
            rollup: Rollup | None = None) -> Judged:
    """Read and check both inputs (never trusting, never modifying them), roll chunks up
    to pages when ``rollup`` is given (:mod:`evalframe.rollup`), then judge.

    A DataFrame is checked by :func:`~evalframe.schema.check_run` /
    :func:`~evalframe.schema.check_qrels` (what :func:`~evalframe.read_run` and
    :func:`~evalframe.read_qrels` do with one), whose factorised ids the ranking step reuses."""
    mapping = None
    if isinstance(rollup, str):
        run, mapping = _split_page_column(run, rollup)
    elif rollup is not None:
        mapping = rollup_map(rollup)
    run = check_run(run, duplicates=duplicates) if isinstance(run, pd.DataFrame) else read_run(run, duplicates=duplicates)
    qrels = check_qrels(qrels) if isinstance(qrels, pd.DataFrame) else read_qrels(qrels)
    if mapping is None:
        return judge(run, qrels, rel=rel, ties=ties, missing=missing, depth=depth, warn=warn)
    if ties == "rank" and "rank" not in run.frame:
        judge(run, qrels, ties=ties, warn=False)  # the same error as without a roll-up
    run, run_records = rollup_run(run, mapping, ties=ties)
    qrels, qrels_records = rollup_qrels(qrels, mapping)
    J = judge(run, qrels, rel=rel, ties="rank", missing=missing, depth=depth, warn=warn)
    return with_records(J, run_records + qrels_records)


def with_records(J: Judged, records) -> Judged:
    """``J`` with more diagnostics records (placed after its own)."""
    records = tuple(J.records) + tuple(records)
    if len(records) == len(J.records):
        return J
    return replace(J, records=records, diagnostics=diagnostics_table(records))


def _split_page_column(run, column: str):
    """A run (or list / dict of runs) without its page column, and the map it held."""
    if isinstance(run, pd.DataFrame):
        return rollup_column(run, column)
    items = list(run.items()) if isinstance(run, dict) else list(enumerate(run)) if isinstance(run, (list, tuple)) else None
    if items is None or not all(isinstance(v, pd.DataFrame) for _, v in items):
        raise TypeError(f"rollup={column!r} names a run column, so the run must be a DataFrame "
                        "(or a list or dict of them); pass a chunk -> page table for runs read from files")
    pieces = [(k, *rollup_column(v, column)) for k, v in items]
    maps = pd.concat([m for _, _, m in pieces])
    mapping = rollup_map(pd.DataFrame({"chunk": maps.index.to_numpy(), "page": maps.to_numpy()}))
    rest = [r for _, r, _ in pieces]
    return (dict(zip([k for k, _, _ in pieces], rest)) if isinstance(run, dict) else rest), mapping


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
                       duplicates: Duplicates = "error", warn: bool = True, rollup: Rollup | None = None
                       ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per-question table and diagnostics table of one partition (measures already resolved).

    With ``rollup`` the per-question table has a ``unit`` column (``"page"``) before
    ``measure``.  Rankings shorter than the measures' deepest cutoff are a
    ``shallow_rankings`` record (and a warning)."""
    J = prepare(run, qrels, rel=rel, ties=ties, missing=missing, depth=depth, duplicates=duplicates, warn=warn,
                rollup=rollup)
    ks = [m.k for m in ms if m.k is not None]
    if ks:
        J = with_records(J, shallow_rankings(J, max(ks), warn=warn))
    table = per_question_table(J, ms)
    if rollup is not None:
        table.insert(table.columns.get_loc("measure"), "unit", UNIT)
    return table, J.diagnostics.copy()


_PANDAS_3 = int(pd.__version__.split(".")[0]) >= 3


def _str_column(a) -> pd.Series:
    """An Arrow string array as pandas' ``str`` column (object before pandas 3)."""
    if _PANDAS_3:
        return pd.Series(a, dtype=pd.StringDtype("pyarrow", na_value=np.nan))
    return pd.Series(a.to_numpy(zero_copy_only=False), dtype=object)
