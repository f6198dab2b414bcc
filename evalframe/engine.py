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

__all__ = ["prepare", "with_conflicts", "with_records", "with_shallow_rankings", "per_question_table", "evaluate_partition", "Duplicates"]

from dataclasses import replace
from typing import Literal, Mapping

import numpy as np
import pandas as pd

from .io import read_checked_qrels, read_checked_run
from .measures import Measure, compute
from .ranking import Check, Diagnostic, Judged, Missing, Ties, diagnostics_table, judge, shallow_rankings, str_column
from .rollup import UNIT, Rollup, rollup_column, rollup_map, rollup_qrels, rollup_run
from .schema import Conflicts, ResolvedConflicts

Duplicates = Literal["error", "max", "first"]


def prepare(run, qrels, *, rel: int = 1, ties: Ties = "doc_id_desc", missing: Missing = "zero",
            depth: int | None = None, duplicates: Duplicates = "error", warn: bool = True,
            columns: Mapping[str, str] | None = None, conflicts: Conflicts = "error",
            rollup: Rollup | None = None) -> Judged:
    """Read and check both inputs (never trusting, never modifying them), roll chunks up
    to pages when ``rollup`` is given (:mod:`evalframe.rollup`), then judge.

    A DataFrame is checked by :func:`~evalframe.schema.check_run` /
    :func:`~evalframe.schema.check_qrels` (what :func:`~evalframe.read_run` and
    :func:`~evalframe.read_qrels` do with one), whose factorised ids the ranking step reuses.
    ``columns`` maps both tables' column names; ``conflicts`` resolves the golden set's
    conflicting labels, counted in the diagnostics (``golden_set_conflicting_labels``)."""
    mapping = None
    if isinstance(rollup, str):
        run, mapping = _split_page_column(run, rollup)
    elif rollup is not None:
        mapping = rollup_map(rollup)
    run = read_checked_run(run, duplicates=duplicates, columns=columns, ties=ties)  # ids factorised once, for judge
    qrels = read_checked_qrels(qrels, columns=columns, conflicts=conflicts)
    resolved = qrels.conflicts
    if mapping is None:
        return with_conflicts(judge(run, qrels, rel=rel, ties=ties, missing=missing, depth=depth, warn=warn),
                              resolved)
    if ties == "rank" and "rank" not in run.frame:
        judge(run, qrels, ties=ties, warn=False)  # the same error as without a roll-up
    run, run_records = rollup_run(run, mapping, ties=ties)
    qrels, qrels_records = rollup_qrels(qrels, mapping)
    J = judge(run, qrels, rel=rel, ties="rank", missing=missing, depth=depth, warn=warn)
    return with_conflicts(with_records(J, run_records + qrels_records), resolved)


def with_conflicts(J: Judged, resolved: ResolvedConflicts | None) -> Judged:
    """``J`` with a ``golden_set_conflicting_labels`` diagnostic when the golden set's
    conflicting labels were resolved (``resolved``; None: ``J`` itself)."""
    c = resolved
    if not isinstance(c, ResolvedConflicts) or not c.count:
        return J
    return with_records(J, [Diagnostic(None, Check.GOLDEN_SET_CONFLICTING_LABELS, c.count,
                                       f"resolved: {c.how} label", tuple(c.examples))])


def with_shallow_rankings(J: Judged, ms: list[Measure], *, warn: bool = True, ignore: str | None = None) -> Judged:
    """``J`` with a ``shallow_rankings`` record per system whose rankings are shorter than
    the deepest cutoff of ``ms`` (and its warning when ``warn``); engines that evaluate in
    parts call it per part with ``warn=False`` and warn on the merged records."""
    ks = [m.k for m in ms if m.k is not None]
    return with_records(J, shallow_rankings(J, max(ks), warn=warn, ignore=ignore)) if ks else J


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
    """The long table ``[system,] query_id, measure, value`` of ``ms`` on every group of ``J``.

    The id columns are Arrow strings built by Arrow takes (pandas' ``str``
    dtype), never Python objects, so the cost grows with rows, not questions."""
    import pyarrow as pa
    values = compute(J, ms)
    G, M = values.shape
    group_of_row = pa.array(np.repeat(np.arange(G), M))
    cols = {c: _arrow_strings(J.groups[c]).take(group_of_row) for c in J.groups.columns}
    cols["measure"] = _tiled_strings([str(m) for m in ms], G)
    out = pd.DataFrame({c: str_column(a) for c, a in cols.items()})
    out["value"] = values.ravel()
    return out


def _tiled_strings(names: list[str], times: int):
    """``names`` repeated ``times`` times as one Arrow large-string array, built from
    its buffers (the bytes repeated, the offsets of copy i those of the first plus
    i times its length: no per-row take, no temporary as long as the table)."""
    import pyarrow as pa
    raw = [n.encode() for n in names]
    one = np.cumsum([0] + [len(b) for b in raw], dtype=np.int64)  # the offsets of one copy
    offsets = np.empty(len(raw) * times + 1, dtype=np.int64)
    np.add(np.arange(times, dtype=np.int64)[:, None] * one[-1], one[None, :-1],
           out=offsets[:-1].reshape(times, len(raw)))  # copy i starts at i * (bytes of one copy)
    offsets[-1] = one[-1] * times
    return pa.LargeStringArray.from_buffers(len(raw) * times, pa.py_buffer(offsets), pa.py_buffer(b"".join(raw) * times))


def _arrow_strings(s: pd.Series):
    """A string column as one Arrow string array (zero-copy when Arrow-backed)."""
    import pyarrow as pa
    try:
        arr = pa.array(s)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        arr = None
    if arr is None or not (pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type)):
        arr = pa.array(s.to_numpy(dtype=object), pa.large_string())
    return arr.combine_chunks() if isinstance(arr, pa.ChunkedArray) else arr


def evaluate_partition(run, qrels, ms: list[Measure], *, rel: int = 1, ties: Ties = "doc_id_desc",
                       missing: Missing = "zero", depth: int | None = None,
                       duplicates: Duplicates = "error", warn: bool = True,
                       columns: Mapping[str, str] | None = None, conflicts: Conflicts = "error",
                       rollup: Rollup | None = None
                       ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per-question table and diagnostics table of one partition (measures already resolved).

    With ``rollup`` the per-question table has a ``unit`` column (``"page"``) before
    ``measure``.  Rankings shorter than the measures' deepest cutoff are a
    ``shallow_rankings`` record (and a warning)."""
    J = prepare(run, qrels, rel=rel, ties=ties, missing=missing, depth=depth, duplicates=duplicates, warn=warn,
                columns=columns, conflicts=conflicts, rollup=rollup)
    J = with_shallow_rankings(J, ms, warn=warn)
    table = per_question_table(J, ms)
    if rollup is not None:
        table.insert(table.columns.get_loc("measure"), "unit", UNIT)
    return table, J.diagnostics.copy()
