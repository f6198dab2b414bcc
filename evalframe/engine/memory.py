"""The in-memory engine: one partition of questions in, per-question table out.

:func:`evaluate_partition` evaluates a table held in memory; engines that cut a run into
partitions of whole questions call :func:`evalframe.engine.partition.evaluate_part` per
part (the same steps, :func:`prepare` then the measures) and merge.  The conventions travel
as one :class:`Conventions`; :func:`evalframe.engine.choice.choose` picks the engine.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from ..io import read_checked_qrels, read_checked_run
from ..measures import Measure
from .._diagnostic_checks import systems_sharing_no_document
from .._diagnostic_records import Check, diagnostics_table, warn_diagnostics
from .._judged import Judged
from ..ranking import judge
from ..rollup import UNIT, Rollup, rollup_column, rollup_map, rollup_qrels, rollup_run
from .conventions import DEFAULT, Conventions
from .bounds import bound_table, refuse_unjudged_with_spans
from .chunkings import chunk_sizes, chunkings_record, is_span_input, judge_chunkings, merge_chunkings, sizes_compared, sizes_record, token_counts
from .foreign import note_foreign_ids, refuse_foreign_ids
from .steps import kept_groups, no_relevant_records, per_question_table, with_conflicts, with_records, with_shallow_rankings


def prepare(run, qrels, conv: Conventions = DEFAULT, *, warn: bool = True,
            rollup: Rollup | None = None, systems: Sequence[str | None] | None = None) -> Judged:
    """Read and check both inputs (never trusting, never modifying them), roll chunks up
    to pages when ``rollup`` is given (:mod:`evalframe.rollup`), then judge.

    A DataFrame is checked by :func:`~evalframe.schema.check_run` /
    :func:`~evalframe.schema.check_qrels` (what :func:`~evalframe.read_run` and
    :func:`~evalframe.read_qrels` do with one), whose factorised ids the ranking step reuses.
    ``conv``: the conventions (:class:`Conventions`): its ``columns`` map both tables' column
    names; its ``conflicts`` resolve the golden set's conflicting labels, counted in the
    diagnostics (``golden_set_conflicting_labels``); ``systems``: every system of the whole run, ``run`` and ``qrels`` a partition of
    whole questions (either may hold no row; :func:`~evalframe.ranking.judge`)."""
    mapping = None
    if isinstance(rollup, str):
        run, mapping = _split_page_column(run, rollup)
    elif rollup is not None:
        mapping = rollup_map(rollup)
    part = systems is not None
    run = read_checked_run(run, duplicates=conv.duplicates, columns=conv.columns, ties=conv.ties, part=part,
                           ascending=conv.ascending)  # ids factorised once
    qrels = read_checked_qrels(qrels, columns=conv.columns, conflicts=conv.conflicts, part=part)
    resolved = qrels.conflicts
    if mapping is None:
        J = judge(run, qrels, warn=warn, systems=systems, **conv.judging)
        return with_conflicts(note_foreign_ids(J, run, qrels), resolved)
    if conv.ties == "rank" and "rank" not in run.frame:
        judge(run, qrels, ties=conv.ties, warn=False)  # the same error as without a roll-up
    run, run_records = rollup_run(run, mapping, ties=conv.ties)
    qrels, qrels_records = rollup_qrels(qrels, mapping)
    J = judge(run, qrels, warn=warn, systems=systems, **conv.but(ties="rank").judging)
    return with_conflicts(with_records(J, run_records + qrels_records), resolved)


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


def evaluate_partition(run, qrels, ms: list[Measure], conv: Conventions = DEFAULT, *, warn: bool = True,
                       rollup: Rollup | None = None, chunks=None, shallow: list[Measure] | None = None,
                       unjudged: str | None = None, diagnosed: bool = True) -> tuple[pd.DataFrame, pd.DataFrame | None]:
    """Per-question table and diagnostics table of one partition (measures already resolved;
    ``diagnosed=False``: without the diagnostics table, None, where it would be made from
    the records: a run without chunk offsets).

    ``unjudged="relevant"`` or ``"bounds"``: the table of :func:`bound_table` (measures
    checked by :func:`check_unjudged`; not with chunk offsets).

    With ``rollup`` the per-question table has a ``unit`` column (``"page"``) before
    ``measure``.  Rankings shorter than the deepest cutoff of ``shallow`` (default: the
    measures) are a ``shallow_rankings`` record (and a warning).  With a span golden set or ``chunks``
    (:mod:`evalframe.spans`), each chunking is judged against the labels it gets from
    the spans (:func:`judge_chunkings`), and chunk-level measures asked of several
    chunkings are a ``chunkings_differ`` record (and a warning)."""
    rel = conv.rel
    shallow = ms if shallow is None else shallow
    if chunks is None and not is_span_input(qrels, conv.columns):
        J = no_relevant_records(prepare(run, qrels, conv, warn=False, rollup=rollup), conv)
        J = with_records(with_shallow_rankings(J, shallow, warn=False), systems_sharing_no_document(J)
                         + chunk_sizes(J, list(ms) + [m for m in shallow if m not in ms]))  # every measure named
        refuse_foreign_ids(J)
        if warn:
            warn_diagnostics(J.records, rel)
        keep = kept_groups(J, conv)
        table = (bound_table(J, ms, unjudged, keep) if unjudged in ("relevant", "bounds")
                 else per_question_table(J, ms, keep))
        if rollup is not None:
            table.insert(table.columns.get_loc("measure"), "unit", UNIT)
        return table, J.diagnostics.copy() if diagnosed else None
    if rollup is not None:
        raise ValueError("evaluate: rollup= and chunks= (or a span golden set) cannot be combined: "
                         "a span golden set already scores any chunking")
    refuse_unjudged_with_spans(unjudged, chunks, qrels, conv.columns)
    judged, systems = judge_chunkings(run, qrels, conv, chunks=chunks)
    tables, parts = [], []
    for J in judged:
        J = with_records(with_shallow_rankings(J, shallow, warn=False), systems_sharing_no_document(J))
        tables.append(per_question_table(J, ms))
        parts.append(J.records)
    records = merge_chunkings(parts)
    systems = [str(s_) for s_ in systems] if "system" in judged[0].groups else []
    if sizes_compared(systems, ms):
        records += sizes_record([token_counts(J) for J in judged], systems, ms)
    records += chunkings_record(len(judged), ms)
    checks, at = list(Check), {s_: i for i, s_ in enumerate(systems)}
    records.sort(key=lambda r: (checks.index(r.check), at.get(r.system, len(at)),  # as merge_diagnostics orders
                                r.action if r.system is None else ""))
    if all("foreign_ids" in J.cache for J in judged):
        refuse_foreign_ids(judged[0])
    if warn:
        warn_diagnostics(records, rel)
    table = pd.concat(tables, ignore_index=True) if len(tables) > 1 else tables[0]
    if len(tables) > 1 and "system" in table:  # systems in the run's order, as without chunkings
        at = pd.Index(systems).get_indexer(table["system"].to_numpy(dtype=object))
        table = table.iloc[np.argsort(at, kind="stable")].reset_index(drop=True)
    return table, diagnostics_table(records)
