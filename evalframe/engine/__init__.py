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

__all__ = ["prepare", "with_conflicts", "with_records", "with_shallow_rankings", "per_question_table", "evaluate_partition",
           "judge_chunkings", "is_span_input", "refuse_foreign_ids", "chunk_sizes", "Duplicates"]

import os
from dataclasses import replace
from typing import Literal, Mapping, Sequence

import numpy as np
import pandas as pd

from ..errors import EvalframeInputError, InputProblem
from ..io import read_checked_qrels, read_checked_run, read_chunks, read_table
from ..measures import FAMILIES, Measure, compute
from ..ranking import (HAS_JUDGED, Check, Diagnostic, Judged, Missing, Ties, conflicts_record, diagnostics_table,
                      judge, shallow_rankings, str_column, systems_sharing_no_document, warn_diagnostics)
from ..rollup import UNIT, Rollup, rollup_column, rollup_map, rollup_qrels, rollup_run
from ..schema import CheckedRun, Conflicts, ResolvedConflicts, check_qrels, encode_qrels, encode_run
from ..spans import (MIN_OVERLAP, SpanRows, check_min_overlap, check_spans, chunk_labels, chunk_offsets, chunks_in_run,
                    doc_codes, is_span_table, merge_spans, split_run_offsets)
from ..inputs import apply_columns

Duplicates = Literal["error", "max", "first"]


def prepare(run, qrels, *, rel: int = 1, ties: Ties = "doc_id_desc", missing: Missing = "zero",
            depth: int | None = None, duplicates: Duplicates = "error", warn: bool = True,
            columns: Mapping[str, str] | None = None, conflicts: Conflicts = "error",
            rollup: Rollup | None = None, systems: Sequence[str | None] | None = None) -> Judged:
    """Read and check both inputs (never trusting, never modifying them), roll chunks up
    to pages when ``rollup`` is given (:mod:`evalframe.rollup`), then judge.

    A DataFrame is checked by :func:`~evalframe.schema.check_run` /
    :func:`~evalframe.schema.check_qrels` (what :func:`~evalframe.read_run` and
    :func:`~evalframe.read_qrels` do with one), whose factorised ids the ranking step reuses.
    ``columns`` maps both tables' column names; ``conflicts`` resolves the golden set's
    conflicting labels, counted in the diagnostics (``golden_set_conflicting_labels``);
    ``systems``: every system of the whole run, ``run`` and ``qrels`` a partition of
    whole questions (either may hold no row; :func:`~evalframe.ranking.judge`)."""
    mapping = None
    if isinstance(rollup, str):
        run, mapping = _split_page_column(run, rollup)
    elif rollup is not None:
        mapping = rollup_map(rollup)
    part = systems is not None
    run = read_checked_run(run, duplicates=duplicates, columns=columns, ties=ties, part=part)  # ids factorised once
    qrels = read_checked_qrels(qrels, columns=columns, conflicts=conflicts, part=part)
    resolved = qrels.conflicts
    if mapping is None:
        J = judge(run, qrels, rel=rel, ties=ties, missing=missing, depth=depth, warn=warn, systems=systems)
        return with_conflicts(_note_foreign_ids(J, run, qrels), resolved)
    if ties == "rank" and "rank" not in run.frame:
        judge(run, qrels, ties=ties, warn=False)  # the same error as without a roll-up
    run, run_records = rollup_run(run, mapping, ties=ties)
    qrels, qrels_records = rollup_qrels(qrels, mapping)
    J = judge(run, qrels, rel=rel, ties="rank", missing=missing, depth=depth, warn=warn, systems=systems)
    return with_conflicts(with_records(J, run_records + qrels_records), resolved)


def is_span_input(qrels, columns) -> bool:
    """Whether a golden set (or run) is a table with start and end offsets (a span golden
    set, a run carrying chunk offsets); a path is read to tell (the engine reads it anyway)."""
    if isinstance(qrels, pd.DataFrame):
        return is_span_table(apply_columns(qrels, columns))
    if isinstance(qrels, (str, os.PathLike)) and os.path.isfile(qrels):
        return is_span_table(apply_columns(pd.DataFrame(columns=_header(qrels)), columns))
    return False


def _header(path) -> list[str]:
    """A table file's column names, read from its schema or first line (a TREC text file
    has none that name offsets)."""
    name = os.fspath(path).lower()
    if name.endswith((".parquet", ".pq")):
        import pyarrow.parquet as pq
        return list(pq.read_schema(path).names)
    import re
    try:
        with open(path, "rb") as fh:
            first = fh.readline(1 << 16)
    except OSError:
        return []
    if first[:4] == b"PAR1" or name.endswith((".gz", ".zst", ".bz2", ".xz")):
        return []
    return [t.decode(errors="replace").strip().strip('"') for t in re.split(rb"[,\t ]+", first.strip())]


def judge_chunkings(run, qrels, *, chunks=None, min_overlap: float = MIN_OVERLAP, rel: int = 1,
                    ties: Ties = "doc_id_desc", missing: Missing = "zero", depth: int | None = None,
                    duplicates: Duplicates = "error", columns: Mapping[str, str] | None = None,
                    conflicts: Conflicts = "error") -> list[Judged]:
    """Judge a run whose documents are chunks with offsets: one ranked table per chunking.

    The chunk tables come from ``chunks`` (one table or path for every system, or
    ``{system: table}``), or from the run's own ``start``/``end`` and parent columns.  With
    a span golden set, each chunking is judged against the labels it gets from the spans
    (:func:`evalframe.spans.span_labels`) and its table carries the rows the span measures
    read (``Judged.spans``); with a chunk-level golden set, the chunk tables give token
    counts (a run without a ``tokens`` column gets its chunks').  Systems sharing one
    chunk table (the same object or path) are judged together.  Warnings are left to the
    caller (the records are in each table)."""
    qrels_raw = read_table(qrels, "qrels") if not isinstance(qrels, pd.DataFrame) else qrels
    spans = None
    if is_span_table(apply_columns(qrels_raw, columns)):
        spans = merge_spans(check_spans(qrels_raw, columns=columns))
        golden = None
    else:
        golden = read_checked_qrels(qrels_raw, columns=columns, conflicts=conflicts)
    carried = None
    if isinstance(run, pd.DataFrame) and (spans is not None or chunks is None):  # chunks= decides when given
        split = split_run_offsets(apply_columns(run, columns))
        if split is not None:
            run, carried = split
    checked = read_checked_run(run, duplicates=duplicates, columns=columns, ties=ties)
    systems = list(checked.system.names) if checked.system is not None else [None]
    if chunks is None and carried is None:
        if spans is None:
            raise ValueError("evaluate: chunks= is None")  # not reached: the caller checks
        # no offsets: the span golden set judges whole documents (a document holds the
        # evidence of its spans); span measures then need chunks=
        doc_level = spans.groupby(["query_id", "doc_id"], sort=False, as_index=False)["relevance"].max()
        J = judge(checked, check_qrels(doc_level), rel=rel, ties=ties, missing=missing, depth=depth, warn=False)
        return [_note_foreign_ids(J, checked, check_qrels(doc_level))]
    if chunks is not None:
        sources = chunks_in_run(chunks, systems)
        groups: dict[int, list] = {}
        for s_, src in sources.items():
            groups.setdefault(id(src) if not isinstance(src, (str, os.PathLike)) else hash(os.fspath(src)),
                              []).append(s_)
        tables = {key: read_chunks(sources[names[0]]) for key, names in groups.items()}
        groups, tables = _same_chunkings(groups, tables)
    else:
        groups, tables = {}, {}
        by_system = carried.groupby("system", sort=False) if "system" in carried else [(None, carried)]
        for s_, part in by_system:
            groups[len(groups)] = [s_]
            tables[len(tables)] = part.drop(columns=["system"], errors="ignore").drop_duplicates("chunk_id")
    out = []
    for key, names in groups.items():
        part = checked if len(groups) == 1 else _systems(checked, names)
        table = tables[key]
        where = chunk_offsets(table, part.doc, fingerprint=part.doc_fingerprint)
        if "tokens" in table and "tokens" not in part.frame:
            part = replace(part, frame=part.frame.assign(tokens=table["tokens"].to_numpy()[where]))
        elif "tokens" in table:  # the run's own counts; most disagreeing: the table of another chunking
            differ = part.frame["tokens"].to_numpy(dtype=np.float64) != table["tokens"].to_numpy()[where]
            if len(differ) and differ.mean() > 0.5:
                raise EvalframeInputError("chunks", [InputProblem(
                    f"the run's token counts differ from its chunk table's on {differ.mean():.0%} of the rows "
                    f"(systems {names[:5]}): is it the chunk table of another chunking (chunk ids such as "
                    "doc#3 name different text in different chunkings)?",
                    "pass each system the chunk table of its own chunking (chunks={system: table}), or drop "
                    "the run's tokens column to use the table's")])
        if spans is None:
            J = judge(part, golden, rel=rel, ties=ties, missing=missing, depth=depth, warn=False)
            out.append(with_conflicts(_note_foreign_ids(J, part, golden), golden.conflicts))
            continue
        codes = doc_codes(table, spans)
        labels = chunk_labels(spans, table, check_min_overlap(min_overlap, "evaluate"), codes)
        lost = pd.Index(spans["query_id"].unique()).difference(pd.Index(labels["query_id"].unique())).to_numpy()
        if len(lost):  # questions whose documents this chunking lacks: still golden-set questions
            labels = pd.concat([labels, pd.DataFrame({"query_id": lost, "doc_id": _NO_CHUNK,
                                                      "relevance": np.int64(-1)})], ignore_index=True)
        golden_g = encode_qrels(labels)  # made here from checked tables: no checks again
        J = judge(part, golden_g, rel=rel, ties=ties, missing=missing, depth=depth, warn=False, keep_rows=True)
        J = _note_foreign_ids(J, part, golden_g)
        out.append(replace(J, spans=_span_rows(J, table, where, spans, codes), source_row=None))
    return out


def _same_chunkings(groups: dict, tables: dict) -> tuple[dict, dict]:
    """Groups of systems whose chunk tables hold the same chunks (copies of one table, or
    one file read twice) merged: one chunking."""
    if len(tables) < 2:
        return groups, tables
    by_content: dict = {}
    for key, table in tables.items():
        cols = [c for c in ("chunk_id", "doc_id", "start", "end", "tokens") if c in table]  # tokens too: tokenizers differ
        h = pd.util.hash_pandas_object(table[cols], index=False).to_numpy()
        by_content.setdefault((tuple(cols), len(table), int(h.sum()), int(np.bitwise_xor.reduce(h)) if len(h) else 0),
                              []).append(key)
    merged_groups, merged_tables = {}, {}
    for keys in by_content.values():
        merged_groups[keys[0]] = [s_ for k in keys for s_ in groups[k]]
        merged_tables[keys[0]] = tables[keys[0]]
    return merged_groups, merged_tables


#: The document of a placeholder golden-set row (label -1: unjudged, never relevant)
#: that keeps a question whose documents a chunking lacks among the golden set's.
_NO_CHUNK = "\x00evalframe:no-chunk"


def _systems(run: CheckedRun, names: list) -> CheckedRun:
    """The rows of some systems of a checked run, re-coded."""
    keep = np.isin(run.system.codes, np.flatnonzero(np.isin(run.system.names, np.array(names, dtype=object))))
    return encode_run(run.frame.loc[keep].reset_index(drop=True))


def _span_rows(J: Judged, table: pd.DataFrame, where: np.ndarray, spans: pd.DataFrame, codes) -> SpanRows:
    """The chunk range of each ranked row of ``J`` and each question's evidence
    (``codes``: :func:`~evalframe.spans.doc_codes` of the table and the spans)."""
    chunk_doc, ev_doc, n_docs = codes
    row = where[J.source_row]
    # each evidence span's question index in J (questions without a group: not read)
    gq = J.group_query
    first = np.unique(gq, return_index=True)[1]
    pos = pd.Index(J.groups["query_id"].to_numpy(dtype=object)[first]).get_indexer(
        spans["query_id"].to_numpy(dtype=object))
    ev_q = np.where(pos >= 0, gq[first][np.maximum(pos, 0)] if len(first) else -1, -1)
    known = ev_q >= 0
    order = np.argsort(ev_q[known], kind="stable")
    pick = np.flatnonzero(known)[order]
    return SpanRows(doc=chunk_doc[row].astype(np.int64), start=table["start"].to_numpy()[row].astype(np.int64),
                    end=table["end"].to_numpy()[row].astype(np.int64), ev_query=ev_q[pick].astype(np.int64),
                    ev_doc=ev_doc[pick].astype(np.int64), ev_start=spans["start"].to_numpy()[pick].astype(np.int64),
                    ev_end=spans["end"].to_numpy()[pick].astype(np.int64),
                    ev_label=spans["relevance"].to_numpy()[pick].astype(np.int64), n_docs=n_docs)


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
    records = tuple(sorted(records, key=lambda r: checks.index(r.check)))
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
                       rollup: Rollup | None = None, chunks=None, min_overlap: float = MIN_OVERLAP,
                       shallow: list[Measure] | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per-question table and diagnostics table of one partition (measures already resolved).

    With ``rollup`` the per-question table has a ``unit`` column (``"page"``) before
    ``measure``.  Rankings shorter than the deepest cutoff of ``shallow`` (default: the
    measures) are a ``shallow_rankings`` record (and a warning).  With a span golden set or ``chunks``
    (:mod:`evalframe.spans`), each chunking is judged against the labels it gets from
    the spans (:func:`judge_chunkings`), and chunk-level measures asked of several
    chunkings are a ``chunkings_differ`` record (and a warning)."""
    conv = dict(rel=rel, ties=ties, missing=missing, depth=depth, duplicates=duplicates, columns=columns,
                conflicts=conflicts)
    shallow = ms if shallow is None else shallow
    if chunks is None and not is_span_input(qrels, columns):
        J = prepare(run, qrels, warn=False, rollup=rollup, **conv)
        J = with_records(with_shallow_rankings(J, shallow, warn=False), systems_sharing_no_document(J)
                         + chunk_sizes(J, ms))
        refuse_foreign_ids(J)
        if warn:
            warn_diagnostics(J.records, rel)
        table = per_question_table(J, ms)
        if rollup is not None:
            table.insert(table.columns.get_loc("measure"), "unit", UNIT)
        return table, J.diagnostics.copy()
    if rollup is not None:
        raise ValueError("evaluate: rollup= and chunks= (or a span golden set) cannot be combined: "
                         "a span golden set already scores any chunking")
    judged = judge_chunkings(run, qrels, chunks=chunks, min_overlap=min_overlap, **conv)
    tables, parts = [], []
    for J in judged:
        J = with_records(with_shallow_rankings(J, shallow, warn=False), systems_sharing_no_document(J)
                         + (chunk_sizes(J, ms) if len(judged) == 1 else []))
        tables.append(per_question_table(J, ms))
        parts.append(J.records)
    records = _merge_chunkings(parts)
    tokens = [J for J in judged if J.tokens is not None]
    if len(judged) > 1 and len(tokens) == len(judged):  # each chunking's median, compared across them
        records += _sizes_across(judged, ms)
    chunk_level = [str(m) for m in ms if "spans" not in FAMILIES[m.family].needs
                   and m.family not in ("Judged", "Unjudged")]  # coverage checks, not comparisons
    if len(judged) > 1 and chunk_level:
        records.append(Diagnostic(None, Check.CHUNKINGS_DIFFER, len(judged),
                                  f"chunk-level measures: {', '.join(chunk_level[:4])}"
                                  f"{'...' if len(chunk_level) > 4 else ''}"))
    checks = list(Check)
    records.sort(key=lambda r: checks.index(r.check))
    if all("foreign_ids" in J.cache for J in judged):
        refuse_foreign_ids(judged[0])
    if warn:
        warn_diagnostics(records, rel)
    table = pd.concat(tables, ignore_index=True) if len(tables) > 1 else tables[0]
    if len(tables) > 1 and "system" in table:  # systems in the run's order, each chunking's after the other's
        order = {s: i for i, s in enumerate(pd.unique(np.concatenate([J.groups["system"].to_numpy(dtype=object)
                                                                      for J in judged])))}
        table = table.iloc[np.argsort(table["system"].map(order).to_numpy(), kind="stable")].reset_index(drop=True)
    return table, diagnostics_table(records)


#: Chunk sizes differ when the systems' median tokens per retrieved row are this far apart.
SIZE_RATIO = 1.5


def chunk_sizes(J: Judged, ms: list[Measure]) -> list[Diagnostic]:
    """A ``chunk_sizes_differ`` record when the systems' median tokens per retrieved row
    are ``SIZE_RATIO`` (1.5x) apart or more and no measure of ``ms`` reads a token budget:
    @k then compares different amounts of text."""
    if J.tokens is None or "system" not in J.groups or not len(J.grp) or any(
            dict(m.params).get("tokens") is not None for m in ms):
        return []
    sys_codes, names = pd.factorize(J.groups["system"])
    row_sys = sys_codes[J.grp]
    medians = {str(names[s]): float(np.median(J.tokens[row_sys == s])) for s in range(len(names))
               if (row_sys == s).any()}
    lo, hi = min(medians.values()), max(medians.values())
    if len(medians) < 2 or hi < SIZE_RATIO * max(lo, 1e-9):
        return []
    sizes = ", ".join(f"{s} {v:g}" for s, v in list(medians.items())[:6])
    return [Diagnostic(None, Check.CHUNK_SIZES_DIFFER, len(medians),
                       f"median tokens per retrieved chunk: {sizes}; @k reads more text of larger chunks: "
                       f"compare at a token budget too, e.g. R(tokens={int(round(5 * hi, -1)) or 1})")]


def _sizes_across(judged: list[Judged], ms: list[Measure]) -> list[Diagnostic]:
    """:func:`chunk_sizes` over several chunkings' tables (one system each or more)."""
    import pyarrow  # noqa: F401  (pandas' concat of Arrow strings)
    groups = pd.concat([J.groups for J in judged], ignore_index=True)
    offset = np.cumsum([0] + [J.n_groups for J in judged])[:-1]
    grp = np.concatenate([J.grp + o for J, o in zip(judged, offset)])
    tokens = np.concatenate([J.tokens for J in judged])
    whole = replace(judged[0], groups=groups, grp=grp, tokens=tokens,
                    group_query=np.zeros(len(groups), dtype=np.int64), rank=np.zeros(len(grp), np.int64),
                    label=np.zeros(len(grp), np.int64), cache={})
    return chunk_sizes(whole, ms)


def _merge_chunkings(parts: list) -> list[Diagnostic]:
    """The records of several chunkings (each a partition of the systems): each system's
    records are its chunking's; a golden-set record (no system) is kept once per
    distinct fact."""
    if len(parts) == 1:
        return list(parts[0])
    out, seen = [], set()
    for part in parts:
        for r in part:
            if r.system is None:
                key = (r.check, r.count, r.action, r.examples)
                if key in seen:
                    continue
                seen.add(key)
            out.append(r)
    checks = list(Check)
    return sorted(out, key=lambda r: checks.index(r.check))


#: The run and the golden set are said to use different document ids (an input error) only
#: when the run holds at least FOREIGN_MIN_RUN_DOCS distinct documents and the golden set
#: FOREIGN_MIN_GOLDEN_DOCS, none shared: a real system retrieving that many documents finds
#: some judged one (below, a system with no judged document is a warning).
FOREIGN_MIN_RUN_DOCS = 100
FOREIGN_MIN_GOLDEN_DOCS = 20


def _note_foreign_ids(J: Judged, run: CheckedRun, qrels) -> Judged:
    """``J``, noting in its cache when no system's retrieved document is judged and none
    appears anywhere in the golden set, the run holding at least :data:`FOREIGN_MIN_RUN_DOCS`
    documents and the golden set :data:`FOREIGN_MIN_GOLDEN_DOCS` (checked only when no system
    has a judged document: one membership test)."""
    n_systems = J.groups["system"].nunique() if "system" in J.groups else 1
    unjudged = sum(r.check is Check.SYSTEM_WITHOUT_JUDGED_DOCUMENTS and r.action != HAS_JUDGED for r in J.records)
    if not unjudged or unjudged < n_systems:
        return J
    import pyarrow as pa
    import pyarrow.compute as pc
    docs = run.doc.combine_chunks() if isinstance(run.doc, pa.ChunkedArray) else run.doc
    golden = qrels.doc.combine_chunks() if isinstance(qrels.doc, pa.ChunkedArray) else qrels.doc
    golden_docs = pc.unique(golden.cast(docs.type))
    if len(golden_docs) < FOREIGN_MIN_GOLDEN_DOCS or len(pc.unique(docs)) < FOREIGN_MIN_RUN_DOCS:
        return J  # too few documents to tell a different id scheme from a system that found nothing
    if pc.any(pc.is_in(docs, value_set=golden_docs)).as_py():
        return J
    J.cache["foreign_ids"] = (pc.unique(docs)[:3].to_pylist(), pc.unique(golden)[:3].to_pylist())
    return J


def refuse_foreign_ids(J: Judged) -> None:
    """An input error when :func:`_note_foreign_ids` found that the run and the golden set
    share no document: the two tables speak of different documents."""
    if "foreign_ids" not in J.cache:
        return
    run_ex, golden_ex = J.cache["foreign_ids"]
    raise EvalframeInputError("run", [InputProblem(
        f"no retrieved document of any system is a document of the golden set (run documents e.g. {run_ex}, "
        f"golden-set documents e.g. {golden_ex})",
        "check that both tables use the same document ids; a re-chunked corpus needs a span golden set "
        "and chunks= (evalframe.spans) or a chunk -> page map (rollup=)")])
