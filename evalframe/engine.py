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

__all__ = ["prepare", "with_conflicts", "per_question_table", "evaluate_partition", "Duplicates"]

from dataclasses import replace
from typing import Literal, Mapping

import numpy as np
import pandas as pd

from .io import read_checked_qrels, read_checked_run
from .measures import Measure, compute
from .ranking import Check, Diagnostic, Judged, Missing, Ties, diagnostics_table, judge, str_column
from .schema import Conflicts, ResolvedConflicts

Duplicates = Literal["error", "max", "first"]


def prepare(run, qrels, *, rel: int = 1, ties: Ties = "doc_id_desc", missing: Missing = "zero",
            depth: int | None = None, duplicates: Duplicates = "error", warn: bool = True,
            columns: Mapping[str, str] | None = None, conflicts: Conflicts = "error") -> Judged:
    """Read and check both inputs (never trusting, never modifying them), then judge.

    A DataFrame is checked by :func:`~evalframe.schema.check_run` /
    :func:`~evalframe.schema.check_qrels` (what :func:`~evalframe.read_run` and
    :func:`~evalframe.read_qrels` do with one), whose factorised ids the ranking step reuses.
    ``columns`` maps both tables' column names; ``conflicts`` resolves the golden set's
    conflicting labels, counted in the diagnostics (``golden_set_conflicting_labels``)."""
    run = read_checked_run(run, duplicates=duplicates, columns=columns, ties=ties)  # ids factorised once, for judge
    qrels = read_checked_qrels(qrels, columns=columns, conflicts=conflicts)
    return with_conflicts(judge(run, qrels, rel=rel, ties=ties, missing=missing, depth=depth, warn=warn),
                          qrels.conflicts)


def with_conflicts(J: Judged, resolved: ResolvedConflicts | None) -> Judged:
    """``J`` with a ``golden_set_conflicting_labels`` diagnostic when the golden set's
    conflicting labels were resolved (``resolved``; None: ``J`` itself)."""
    c = resolved
    if not isinstance(c, ResolvedConflicts) or not c.count:
        return J
    records = (*J.records, Diagnostic(None, Check.GOLDEN_SET_CONFLICTING_LABELS, c.count,
                                      f"resolved: {c.how} label", tuple(c.examples)))
    return replace(J, records=records, diagnostics=diagnostics_table(records))


def per_question_table(J: Judged, ms: list[Measure]) -> pd.DataFrame:
    """The long table ``[system,] query_id, measure, value`` of ``ms`` on every group of ``J``.

    The id columns are Arrow strings built by Arrow takes (pandas' ``str``
    dtype), never Python objects, so the cost grows with rows, not questions."""
    import pyarrow as pa
    values = compute(J, ms)
    G, M = values.shape
    group_of_row = pa.array(np.repeat(np.arange(G), M))
    cols = {c: _arrow_strings(J.groups[c]).take(group_of_row) for c in J.groups.columns}
    cols["measure"] = pa.array([str(m) for m in ms], pa.large_string()).take(pa.array(np.tile(np.arange(M), G)))
    out = pd.DataFrame({c: str_column(a) for c, a in cols.items()})
    out["value"] = values.ravel()
    return out


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
                       columns: Mapping[str, str] | None = None, conflicts: Conflicts = "error"
                       ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per-question table and diagnostics table of one partition (measures already resolved)."""
    J = prepare(run, qrels, rel=rel, ties=ties, missing=missing, depth=depth, duplicates=duplicates, warn=warn,
                columns=columns, conflicts=conflicts)
    return per_question_table(J, ms), J.diagnostics.copy()
