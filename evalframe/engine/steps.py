"""The steps after judging that every engine shares: records added to a ``Judged`` (conflicts,
shallow rankings, questions without a relevant document), the groups kept, and the long
per-question table.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from ..measures import Measure, compute
from .._diagnostic_checks import shallow_rankings
from .._diagnostic_records import Check, LEFT_OUT, conflicts_record
from .._id_order import str_array
from .._judged import Judged
from .._conflicts import ResolvedConflicts
from .conventions import Conventions


def with_conflicts(J: Judged, resolved: ResolvedConflicts | None) -> Judged:
    """``J`` with a ``golden_set_conflicting_labels`` diagnostic when the golden set's
    conflicting labels were resolved (``resolved``; None: ``J`` itself)."""
    record = conflicts_record(resolved)
    return with_records(J, record) if record else J


def with_shallow_rankings(J: Judged, ms: list[Measure], *, warn: bool = True) -> Judged:
    """``J`` with a ``shallow_rankings`` record per system whose rankings are shorter than
    the deepest cutoff of ``ms`` (and its warning when ``warn``); engines that evaluate in
    parts call it per part with ``warn=False`` and warn on the merged records."""
    ks = [m.k for m in ms if m.k is not None]
    return with_records(J, shallow_rankings(J, max(ks), warn=warn)) if ks else J


def with_records(J: Judged, records) -> Judged:
    """``J`` with more diagnostics records, all in :class:`Check` order (a stable sort:
    each check's records keep their order), as :func:`merge_diagnostics` orders them."""
    records = tuple(J.records) + tuple(records)
    if len(records) == len(J.records):
        return J
    checks = list(Check)
    return J.with_records(sorted(records, key=lambda r: checks.index(r.check)))


def per_question_table(J: Judged, ms: list[Measure], keep: np.ndarray | None = None) -> pd.DataFrame:
    """The long table ``[system,] query_id, measure, value`` of ``ms`` on every group of ``J``
    (``keep``: on the groups it marks, :func:`kept_groups`)."""
    values = compute(J, ms)
    if keep is None:
        return long_table(J.groups, values, [str(m) for m in ms])
    return long_table(J.groups.loc[keep].reset_index(drop=True), np.asarray(values)[keep], [str(m) for m in ms])


def no_relevant_records(J: Judged, conv: Conventions) -> Judged:
    """``J`` whose ``golden_questions_without_relevant`` record says its questions were left
    out when ``conv.no_relevant`` is ``"drop"`` (the warning is then not issued)."""
    if conv.no_relevant != "drop" or not any(r.check is Check.GOLDEN_QUESTIONS_WITHOUT_RELEVANT for r in J.records):
        return J
    records = tuple(replace(r, action=LEFT_OUT) if r.check is Check.GOLDEN_QUESTIONS_WITHOUT_RELEVANT else r
                    for r in J.records)
    return J.with_records(records)


def kept_groups(J: Judged, conv: Conventions) -> np.ndarray | None:
    """The groups of ``J`` its per-question table keeps: with ``no_relevant="drop"``, those
    whose question has a relevant document (a golden-set label >= ``rel``); None: all."""
    if conv.no_relevant != "drop":
        return None
    answered = np.zeros(J.n_queries, dtype=bool)
    answered[J.qrels_query[J.qrels_label >= conv.rel]] = True
    return answered[J.group_query]


def long_table(groups: pd.DataFrame, values: np.ndarray, names: list[str]) -> pd.DataFrame:
    """The long table ``[system,] query_id, measure, value`` of a (groups x measures) array
    of ``values``, measures named ``names``.

    The id columns are Arrow strings built by Arrow takes (pandas' ``str``
    dtype), never Python objects, so the cost grows with rows, not questions."""
    import pyarrow as pa
    G, M = len(groups), len(names)
    group_of_row = pa.array(np.repeat(np.arange(G), M))
    cols = {c: _arrow_strings(groups[c]).take(group_of_row) for c in groups.columns}
    cols["measure"] = _tiled_strings(list(names), G)
    value = np.array(values, dtype=np.float64).reshape(G * M)  # a copy: the frame holds it
    return pd.DataFrame({**{c: str_array(a) for c, a in cols.items()}, "value": value}, copy=False)


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
