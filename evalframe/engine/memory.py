"""The in-memory engine: one partition of questions in, per-question table out.

:func:`evaluate_partition` evaluates a table held in memory; engines that cut a run into
partitions of whole questions call :func:`evalframe.engine.partition.evaluate_part` per
part (the same steps, :func:`prepare` then the measures) and merge.  The conventions travel
as one :class:`Conventions`; :func:`evalframe.engine.choice.choose` picks the engine.
"""
from __future__ import annotations

__all__ = ["prepare", "with_conflicts", "with_records", "with_shallow_rankings", "per_question_table", "long_table",
           "evaluate_partition", "kept_groups", "no_relevant_records", "Chunkings", "resolve_chunkings", "carried_chunkings", "judge_chunkings", "judge_chunked", "is_span_input",
           "refuse_foreign_ids", "every_system_unjudged", "doc_summary", "refuse_foreign_run",
           "chunk_sizes", "sizes_compared", "token_counts", "sizes_record", "chunkings_record", "merge_chunkings",
           "Unjudged", "BOUND_FAMILIES", "check_unjudged", "refuse_unjudged_with_spans", "unjudged_relevant", "upper_bounds", "bound_table"]

import os
from dataclasses import dataclass, field, replace
from typing import Literal, Mapping, Sequence

import numpy as np
import pandas as pd

from .._validation import Options, check
from ..errors import EvalframeInputError, InputProblem
from ..io import read_checked_qrels, read_checked_run, read_chunks, read_table
from ..measures import FAMILIES, Measure, compute
from .._diagnostic_checks import shallow_rankings, systems_sharing_no_document
from .._diagnostic_records import (CHUNKING_OF, Check, Diagnostic, HAS_JUDGED, LEFT_OUT, conflicts_record,
                                   diagnostics_table, warn_diagnostics)
from .._id_order import str_column
from .._judged import Judged, Missing, Ties, group_starts
from ..ranking import judge
from ..rollup import UNIT, Rollup, rollup_column, rollup_map, rollup_qrels, rollup_run
from .._conflicts import ResolvedConflicts
from .._id_bytes import fingerprints
from .._id_codes import CheckedQrels, CheckedRun, encode_qrels, encode_run
from ..schema import check_qrels, ids_to_str
from ..spans import (MIN_OVERLAP, SpanRows, check_chunk_documents, check_min_overlap, check_spans, chunk_labels,
                    chunk_offsets, chunks_in_run, doc_codes, is_span_table, merge_spans, split_run_offsets)
from ..inputs import apply_columns
from .conventions import DEFAULT, Conventions

#: What the unjudged retrieved documents count as (:func:`evalframe.evaluate`'s ``unjudged=``).
Unjudged = Literal["nonrelevant", "relevant", "bounds"]
#: The families whose value with every unjudged document of the top k (every retrieved
#: document without a cutoff) counted relevant is the largest value any labelling of the
#: unjudged documents gives: P, Success and RR read only the top k, and grow with each
#: document made relevant; R@k = hits / relevant grows too when the documents made
#: relevant are those of the top k, (h + u) / (R + u) >= h / R, while a relevant document
#: outside the top k (retrieved lower or never) only lowers it.  nDCG@k and AP are not
#: among them: a relevant document ranked low raises the ideal (nDCG) or the denominator
#: (AP) more than the gain, e.g. AP 1 -> 0.6 with one more relevant document at rank 10.
BOUND_FAMILIES = ("P", "R", "Success", "RR")


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
        return with_conflicts(_note_foreign_ids(J, run, qrels), resolved)
    if conv.ties == "rank" and "rank" not in run.frame:
        judge(run, qrels, ties=conv.ties, warn=False)  # the same error as without a roll-up
    run, run_records = rollup_run(run, mapping, ties=conv.ties)
    qrels, qrels_records = rollup_qrels(qrels, mapping)
    J = judge(run, qrels, warn=warn, systems=systems, **conv.but(ties="rank").judging)
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


@dataclass
class Chunkings:
    """``chunks=`` and a span golden set resolved once, for the whole input or for every
    partition of whole questions (:func:`resolve_chunkings`).

    Attributes
    ----------
    tables : the chunk tables (checked), one per chunking: copies of one table, or one
        file read twice, are one chunking
    of_system : ``{system: position in tables}`` (None: ``tables[0]`` serves every system)
    spans : the span golden set, checked and merged (:func:`~evalframe.spans.merge_spans`);
        None for a chunk-level golden set (the tables then give token counts)
    min_overlap : the overlap rule of :func:`~evalframe.spans.span_labels`
    split_run : the run's rows carry their chunks' offsets, split off by the engine
        (``split_run_offsets``) before it partitions the run; with no
        ``tables``, the chunkings are then the run's own (:func:`carried_chunkings`)
    """

    tables: list
    of_system: dict | None
    spans: pd.DataFrame | None
    min_overlap: float = MIN_OVERLAP
    split_run: bool = False
    _index: dict = field(default_factory=dict, repr=False, compare=False)

    def groups(self, systems: list) -> dict[int, list]:
        """The systems ``systems`` by chunking: ``{position in tables: its systems, in order}``."""
        if self.of_system is None:
            return {0: list(systems)}
        placed = chunks_in_run(self.of_system, systems)
        out: dict[int, list] = {}
        for s_ in systems:
            out.setdefault(placed[s_], []).append(s_)
        return out

    def for_systems(self, systems: list) -> "Chunkings":
        """The chunkings of the run's ``systems`` only (a dict may name other systems: their
        tables are dropped), each table's documents checked against the spans
        (``check_chunk_documents``); a system without a table is an
        input error (``chunks_in_run``), told by the driver."""
        groups = self.groups(systems)
        keep = sorted(groups)
        tables = [self.tables[k] for k in keep]
        of_system = None if self.of_system is None else {
            s_: keep.index(k) for k, names in groups.items() for s_ in names}
        if self.spans is not None:
            for table in tables:
                check_chunk_documents(table, self.spans)
        return Chunkings(tables, of_system, self.spans, self.min_overlap, self.split_run)

    def judged_chunks(self) -> pd.Index:
        """The chunk ids the labels from the spans judge, for some question (a chunk of a
        document holding evidence is labelled, 0 at least): what a partition cannot see of
        the other partitions' questions."""
        if "judged" not in self._index:
            docs = pd.Index(ids_to_str(self.spans["doc_id"]).unique())
            ids = [ids_to_str(t["chunk_id"])[ids_to_str(t["doc_id"]).isin(docs).to_numpy()] for t in self.tables]
            self._index["judged"] = pd.Index(pd.concat(ids, ignore_index=True).unique() if ids else [])
        return self._index["judged"]

    def rows_for(self, k: int, docs, chunk_ids) -> pd.DataFrame:
        """The rows of chunk table ``k`` a partition needs, in the table's order: every
        chunk of the documents ``docs`` (a span's labels read its document's chunks only)
        and the chunks ``chunk_ids`` (Arrow strings) its run retrieves; a retrieved id the
        table lacks stays out (the offsets step then names it)."""
        import pyarrow as pa
        table = self.tables[k]
        if k not in self._index:
            doc, names = pd.factorize(table["doc_id"].to_numpy(dtype=object))
            order = np.argsort(doc, kind="stable")
            starts = np.concatenate(([0], np.cumsum(np.bincount(doc, minlength=len(names)))))
            ids = pa.array(table["chunk_id"].to_numpy(dtype=object), pa.large_string())
            self._index[k] = (pd.Index(names), order, starts, ids, pd.Index(fingerprints(pa.chunked_array([ids]))))
        names, order, starts, ids, fp = self._index[k]
        d = names.get_indexer(pd.unique(np.asarray(docs, dtype=object)))
        d = d[d >= 0]
        n = starts[d + 1] - starts[d]
        by_doc = order[np.repeat(starts[d] - np.cumsum(n) + n, n) + np.arange(int(n.sum()))]
        chunk_ids = chunk_ids if isinstance(chunk_ids, pa.ChunkedArray) else pa.chunked_array([chunk_ids])
        if fp.is_unique:
            where = fp.get_indexer(fingerprints(chunk_ids.cast(pa.large_string())))
            where = where[where >= 0]
        else:  # two chunk ids share a fingerprint: Arrow's hash of the strings
            import pyarrow.compute as pc
            where = np.asarray(pc.index_in(chunk_ids, value_set=ids).drop_null().to_numpy(), dtype=np.int64)
        return table.iloc[np.unique(np.concatenate([by_doc, where]))]


def resolve_chunkings(run, qrels, *, chunks=None, min_overlap: float = MIN_OVERLAP,
                      columns: Mapping[str, str] | None = None, systems: list | None = None
                      ) -> "tuple[Chunkings | None, pd.DataFrame | None]":
    """``chunks=`` read and grouped into chunkings, the span golden set checked and merged
    (None: a chunk-level ``qrels``), once for every partition; and the chunk table a run
    DataFrame carrying offsets holds (None: none, or ``chunks`` decides).  ``systems``: the
    run's systems when known (a dict's tables of other systems are then not read)."""
    qrels_raw = read_table(qrels, "qrels") if not isinstance(qrels, pd.DataFrame) else qrels
    spans = None
    if is_span_table(apply_columns(qrels_raw, columns)):
        spans = merge_spans(check_spans(qrels_raw, columns=columns))
    min_overlap = check_min_overlap(min_overlap, "evaluate")
    if chunks is None:
        return None, spans
    if isinstance(chunks, Mapping):
        sources = chunks_in_run(chunks, systems) if systems is not None else dict(chunks)
    else:
        sources = {None: chunks}
    groups: dict[int, list] = {}
    for s_, src in sources.items():
        groups.setdefault(id(src) if not isinstance(src, (str, os.PathLike)) else hash(os.fspath(src)),
                          []).append(s_)
    tables = {key: read_chunks(sources[names[0]]) for key, names in groups.items()}
    groups, tables = _same_chunkings(groups, tables)
    keys = list(tables)
    of_system = None if not isinstance(chunks, Mapping) else {
        s_: keys.index(key) for key, names in groups.items() for s_ in names}
    resolved = Chunkings([tables[key] for key in keys], of_system, spans, min_overlap)
    # the run's systems known: checked now; else by the engine once it knows them (for_systems)
    return (resolved.for_systems(systems) if systems is not None else resolved), spans


def judge_chunkings(run, qrels, conv: Conventions = DEFAULT, *, chunks=None) -> tuple[list[Judged], list]:
    """Judge a run whose documents are chunks with offsets: one ranked table per chunking,
    and the run's systems in order of first appearance.

    The chunk tables come from ``chunks`` (one table or path for every system, or
    ``{system: table}``), or from the run's own ``start``/``end`` and parent columns.  With
    a span golden set, each chunking is judged against the labels it gets from the spans
    (:func:`evalframe.spans.span_labels`) and its table carries the rows the span measures
    read (``Judged.spans``); with a chunk-level golden set, the chunk tables give token
    counts (a run without a ``tokens`` column gets its chunks').  Systems sharing one
    chunk table (the same object or path) are judged together.  Warnings are left to the
    caller (the records are in each table)."""
    columns = conv.columns
    qrels_raw = read_table(qrels, "qrels") if not isinstance(qrels, pd.DataFrame) else qrels
    spans_here = is_span_table(apply_columns(qrels_raw, columns))
    carried = None
    if isinstance(run, pd.DataFrame) and (spans_here or chunks is None):  # chunks= decides when given
        split = split_run_offsets(apply_columns(run, columns))
        if split is not None:
            run, carried = split
    checked = read_checked_run(run, duplicates=conv.duplicates, columns=columns, ties=conv.ties,
                               ascending=conv.ascending)
    systems = list(checked.system.names) if checked.system is not None else [None]
    resolved, spans = resolve_chunkings(run, qrels_raw, chunks=chunks, min_overlap=conv.min_overlap, columns=columns,
                                        systems=systems)
    golden = None if spans is not None else read_checked_qrels(qrels if isinstance(qrels, CheckedQrels) else qrels_raw,
                                                                columns=columns, conflicts=conv.conflicts)
    if resolved is None and carried is None:
        if spans is None:
            raise ValueError("evaluate: chunks= is None")  # not reached: the caller checks
        # no offsets: the span golden set judges whole documents (a document holds the
        # evidence of its spans); span measures then need chunks=
        doc_level = spans.groupby(["query_id", "doc_id"], sort=False, as_index=False)["relevance"].max()
        J = judge(checked, check_qrels(doc_level), warn=False, **conv.judging)
        return [_note_foreign_ids(J, checked, check_qrels(doc_level))], systems
    if resolved is None:
        resolved = carried_chunkings(carried, spans, conv.min_overlap)
    return judge_chunked(checked, golden, resolved, systems=None, **conv.judging), systems


def carried_chunkings(carried: pd.DataFrame, spans: pd.DataFrame | None,
                      min_overlap: float = MIN_OVERLAP) -> Chunkings:
    """The chunkings of a run whose rows carry offsets, from the chunk table
    ``split_run_offsets`` split off it (``[system,] chunk_id, doc_id,
    start, end``; its distinct rows will do): one chunking per system, each holding the
    chunks that system retrieves (a chunk id's first row)."""
    by_system = list(carried.groupby("system", sort=False)) if "system" in carried else [(None, carried)]
    tables = [part.drop(columns=["system"], errors="ignore").drop_duplicates("chunk_id").reset_index(drop=True)
              for _, part in by_system]
    resolved = Chunkings(tables, None if "system" not in carried else {s_: i for i, (s_, _) in enumerate(by_system)},
                         spans, check_min_overlap(min_overlap, "evaluate"))
    return resolved.for_systems([s_ for s_, _ in by_system])


def judge_chunked(checked: CheckedRun, golden, chunkings: Chunkings, *, systems: list | None, rel: int,
                  ties: Ties, missing: Missing, depth: int | None, whole: bool = True) -> list[Judged]:
    """One ranked table per chunking of ``checked`` (a checked run): against the labels each
    chunking gets from ``chunkings.spans``, else against ``golden`` (a checked chunk-level
    golden set), each retrieved row given its chunk's tokens.  ``systems``: every system of
    the whole run when ``checked`` is a partition of whole questions (``golden`` or the spans
    then hold its questions' rows; ``whole=False``: the chunk tables are cut to what the
    partition reads, :meth:`Chunkings.rows_for`)."""
    names_all = systems if systems is not None else (
        list(checked.system.names) if checked.system is not None else [None])
    groups = chunkings.groups(names_all)
    spans = chunkings.spans
    out = []
    for k, names in groups.items():
        part = checked if len(groups) == 1 else _systems(checked, names)
        table = chunkings.tables[k]
        if not whole:
            table = chunkings.rows_for(k, spans["doc_id"] if spans is not None else [], part.doc)
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
        within = None if systems is None else names
        if spans is None:
            J = judge(part, golden, rel=rel, ties=ties, missing=missing, depth=depth, warn=False, systems=within)
            out.append(with_conflicts(_note_foreign_ids(J, part, golden), golden.conflicts))
            continue
        codes = doc_codes(table, spans)
        labels = chunk_labels(spans, table, chunkings.min_overlap, codes, check=False)
        lost = pd.Index(spans["query_id"].unique()).difference(pd.Index(labels["query_id"].unique())).to_numpy()
        if len(lost):  # questions whose documents this chunking lacks: still golden-set questions
            labels = pd.concat([labels, pd.DataFrame({"query_id": lost, "doc_id": _NO_CHUNK,
                                                      "relevance": np.int64(-1)})], ignore_index=True)
        golden_g = encode_qrels(labels)  # made here from checked tables: no checks again
        J = judge(part, golden_g, rel=rel, ties=ties, missing=missing, depth=depth, warn=False, keep_rows=True,
                  systems=within)
        J = _note_foreign_ids(J, part, golden_g)
        if len(groups) > 1:  # each chunking's labels have their own questions without a relevant chunk
            J = replace(J, records=tuple(replace(r, action=f"{r.action} {CHUNKING_OF}{', '.join(map(str, names))}")
                                         if r.check is Check.GOLDEN_QUESTIONS_WITHOUT_RELEVANT else r
                                         for r in J.records))
            J = replace(J, diagnostics=diagnostics_table(J.records))
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
    (``codes``: ``doc_codes`` of the table and the spans)."""
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
    return replace(J, records=records, diagnostics=diagnostics_table(records))


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
    out = pd.DataFrame({c: str_column(a) for c, a in cols.items()})
    out["value"] = np.asarray(values, dtype=np.float64).reshape(G * M)
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


def evaluate_partition(run, qrels, ms: list[Measure], conv: Conventions = DEFAULT, *, warn: bool = True,
                       rollup: Rollup | None = None, chunks=None, shallow: list[Measure] | None = None,
                       unjudged: str | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per-question table and diagnostics table of one partition (measures already resolved).

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
        return table, J.diagnostics.copy()
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


#: Chunk sizes differ when the systems' median tokens per retrieved row are this far apart.
SIZE_RATIO = 1.5


def sizes_compared(systems: Sequence, ms: Sequence[Measure]) -> bool:
    """Whether :func:`sizes_record` can say anything: two systems or more, and no measure
    of ``ms`` reads a token budget (the token counts need not be gathered otherwise)."""
    return sum(s_ is not None for s_ in systems) >= 2 and not any(
        dict(m.params).get("tokens") is not None for m in ms)


def token_counts(J: Judged) -> dict:
    """Per system of ``J`` (its groups' ``system``; None without one): how many retrieved
    rows hold each token count, a Series (count -> rows); empty without token counts.
    Partitions' counts add up to the whole run's (:func:`sizes_record` reads them)."""
    if J.tokens is None or not len(J.grp):
        return {}
    if "system" in J.groups:
        sys_codes, names = pd.factorize(J.groups["system"])
        row_sys = sys_codes[J.grp]
    else:
        names, row_sys = [None], np.zeros(len(J.grp), dtype=np.int64)
    pairs = pd.DataFrame({"s": row_sys, "t": J.tokens}).value_counts(sort=False)
    return {names[s]: pairs.xs(s, level="s").sort_index() for s in pd.unique(pairs.index.get_level_values("s"))}


def _median(counts: pd.Series) -> float:
    """The median of the values a (value -> count) Series holds, as numpy computes it."""
    at = np.cumsum(counts.to_numpy())
    n = int(at[-1])
    values = counts.index.to_numpy(dtype=np.float64)
    lo, hi = values[np.searchsorted(at, (n - 1) // 2, "right")], values[np.searchsorted(at, n // 2, "right")]
    return float(np.mean([lo, hi]))


def sizes_record(counts: "Sequence[dict]", systems: list, ms: list[Measure]) -> list[Diagnostic]:
    """A ``chunk_sizes_differ`` record when the systems' median tokens per retrieved row
    (from :func:`token_counts` of the whole run, or of its partitions: added up) are
    ``SIZE_RATIO`` (1.5x) apart or more and no measure of ``ms`` reads a token budget: @k
    then compares different amounts of text.  ``systems``: their order in the record."""
    if not sizes_compared(systems, ms):
        return []
    whole: dict = {}
    for part in counts:
        for s_, c in part.items():
            whole[s_] = c if s_ not in whole else whole[s_].add(c, fill_value=0)
    medians = {str(s_): _median(whole[s_].sort_index()) for s_ in systems if s_ is not None and s_ in whole}
    if len(medians) < 2:
        return []
    lo, hi = min(medians.values()), max(medians.values())
    if hi < SIZE_RATIO * max(lo, 1e-9):
        return []
    sizes = ", ".join(f"{s} {v:g}" for s, v in list(medians.items())[:6])
    return [Diagnostic(None, Check.CHUNK_SIZES_DIFFER, len(medians),
                       f"median tokens per retrieved chunk: {sizes}; @k reads more text of larger chunks: "
                       f"compare at a token budget too, e.g. R(tokens={int(round(5 * hi, -1)) or 1})")]


def chunk_sizes(J: Judged, ms: list[Measure]) -> list[Diagnostic]:
    """:func:`sizes_record` of one ranked table."""
    if "system" not in J.groups:
        return []
    systems = list(pd.unique(J.groups["system"].to_numpy(dtype=object)))
    return sizes_record([token_counts(J)], systems, ms) if sizes_compared(systems, ms) else []


def chunkings_record(n_chunkings: int, ms: list[Measure]) -> list[Diagnostic]:
    """A ``chunkings_differ`` record when systems of ``n_chunkings`` (> 1) chunkings are
    compared on chunk-level measures of ``ms`` (not the span measures, nor the coverage
    checks Judged / Unjudged)."""
    chunk_level = [str(m) for m in ms if "spans" not in FAMILIES[m.family].needs
                   and m.family not in ("Judged", "Unjudged")]
    if n_chunkings < 2 or not chunk_level:
        return []
    return [Diagnostic(None, Check.CHUNKINGS_DIFFER, n_chunkings,
                       f"chunk-level measures: {', '.join(chunk_level[:4])}{'...' if len(chunk_level) > 4 else ''}")]


def merge_chunkings(parts: list) -> list[Diagnostic]:
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
    _foreign(*J.cache["foreign_ids"])


def every_system_unjudged(records, systems: list) -> bool:
    """Whether merged records say that no system retrieves a judged document (every one has a
    ``system_without_judged_documents`` record): when an engine that evaluated in parts looks
    for :func:`refuse_foreign_run`'s error (the in-memory engine checks it on the whole run)."""
    flagged = {r.system for r in records if r.check is Check.SYSTEM_WITHOUT_JUDGED_DOCUMENTS
               and r.action != HAS_JUDGED}
    return bool(systems) and all(s_ in flagged for s_ in systems)


def doc_summary(doc_ids: pd.Series, golden_docs) -> tuple[bool, list]:
    """What :func:`refuse_foreign_run` needs of one piece of a run: whether any of its
    document ids (cleaned as ``ids_to_str`` cleans them) is one of
    ``golden_docs`` (an :func:`~evalframe.ranking.id_set`), and its first
    ``FOREIGN_MIN_RUN_DOCS`` distinct ids in order."""
    import pyarrow as pa
    import pyarrow.compute as pc
    ids = pa.array(ids_to_str(doc_ids.reset_index(drop=True)).to_numpy(dtype=object), pa.large_string())
    hit = bool(len(ids)) and pc.any(pc.is_in(ids, value_set=golden_docs)).as_py()
    return bool(hit), pc.unique(ids)[:FOREIGN_MIN_RUN_DOCS].to_pylist()


def refuse_foreign_run(summaries, golden_doc_ids: pd.Series) -> None:
    """The input error of :func:`refuse_foreign_ids` for an engine that evaluated a run in
    parts: ``summaries`` are :func:`doc_summary` of the run's pieces, in the run's order;
    the same thresholds (``FOREIGN_MIN_RUN_DOCS``, ``FOREIGN_MIN_GOLDEN_DOCS``) and
    the same examples as in memory."""
    golden = pd.unique(ids_to_str(pd.Series(golden_doc_ids).reset_index(drop=True)).to_numpy(dtype=object))
    summaries = list(summaries)
    if len(golden) < FOREIGN_MIN_GOLDEN_DOCS or any(hit for hit, _ in summaries):
        return
    docs = pd.unique(np.array([d for _, first in summaries for d in first], dtype=object))
    if len(docs) < FOREIGN_MIN_RUN_DOCS:
        return  # each piece gave all its distinct ids or a hundred: fewer here are all of them
    _foreign(list(docs[:3]), list(golden[:3]))


def _foreign(run_ex: list, golden_ex: list) -> None:
    raise EvalframeInputError("run", [InputProblem(
        f"no retrieved document of any system is a document of the golden set (run documents e.g. {run_ex}, "
        f"golden-set documents e.g. {golden_ex})",
        "check that both tables use the same document ids; a re-chunked corpus needs a span golden set "
        "and chunks= (evalframe.spans) or a chunk -> page map (rollup=)")])


def check_unjudged(unjudged, ms: Sequence[Measure], caller: str = "evaluate") -> None:
    """``unjudged=`` checked: None or one of :data:`Unjudged`; with ``"relevant"`` or
    ``"bounds"`` every measure of ``ms`` must be one whose upper bound is true
    (:data:`BOUND_FAMILIES`, without a token budget or ``judged_only``)."""
    check(caller, "unjudged", unjudged, Options((None, "nonrelevant", "relevant", "bounds"),
                                                "None, 'nonrelevant', 'relevant' or 'bounds'"))
    if unjudged not in ("relevant", "bounds"):
        return
    bad = [str(m) for m in ms if m.family not in BOUND_FAMILIES or set(dict(m.params)) - {"rel"}]
    if bad:
        raise EvalframeInputError("measures", [InputProblem(
            f"unjudged={unjudged!r} has no true upper bound for {bad[:6]}: counting every unjudged retrieved "
            "document relevant can lower nDCG and AP (a relevant document ranked low raises the ideal ranking or "
            "the number of relevant documents more than it adds), and the other measures (bpref, token budgets, "
            "judged_only, ...) read the unjudged documents otherwise",
            f"ask for the bounds of {', '.join(BOUND_FAMILIES)} (@k, rel=) only, and evaluate the other measures "
            "in a second call without unjudged=")])


def refuse_unjudged_with_spans(unjudged, chunks, qrels, columns=None) -> None:
    """``unjudged="relevant"`` or ``"bounds"`` refused with ``chunks=`` or a span golden set,
    on every engine (a chunk's label comes from the spans; a run of whole documents on a span
    golden set too, judged in memory as chunks and by the partitioning engines on document labels)."""
    if unjudged in ("relevant", "bounds") and (chunks is not None or is_span_input(qrels, columns)):
        raise ValueError(f"evaluate: unjudged={unjudged!r} is not available with chunks= or a span golden set "
                         "(a chunk's label comes from the spans): evaluate without unjudged=")


def unjudged_relevant(J: Judged, k: int | None, label: int) -> Judged:
    """``J`` with every unjudged document (absent from the golden set, or a negative label:
    as ``Unjudged@k`` counts them) of each ranking's top ``k`` (every one when ``k`` is
    None) labelled ``label``, and added to the golden set of that ranking alone: each
    group (system, question) gets its own copy of its question's golden set, so the
    relevant documents one system's bound adds are not another system's.

    The measures of :data:`BOUND_FAMILIES` computed on it give their upper bound."""
    flip = J.label < 0
    if k is not None:
        flip &= J.rank <= k
    G = J.n_groups
    # each group's copy of its question's golden-set rows
    per_q = np.bincount(J.qrels_query, minlength=J.n_queries)
    starts = group_starts(J.qrels_query, J.n_queries)
    n = per_q[J.group_query]
    owner = np.repeat(np.arange(G, dtype=np.int64), n)
    offset = np.arange(int(n.sum()), dtype=np.int64) - np.repeat(np.cumsum(n) - n, n)
    rows = np.repeat(starts[J.group_query], n) + offset
    owner = np.concatenate([owner, J.grp[flip].astype(np.int64)])
    qlabel = np.concatenate([J.qrels_label[rows], np.full(int(flip.sum()), label, dtype=J.qrels_label.dtype)])
    order = np.lexsort((-qlabel, owner))  # by group, then label descending
    label_rows = np.where(flip, np.asarray(label, dtype=J.label.dtype), J.label)
    return replace(J, group_query=np.arange(G, dtype=J.group_query.dtype), label=label_rows,
                   qrels_query=owner[order].astype(J.qrels_query.dtype), qrels_label=qlabel[order],
                   n_queries=G, cache={}, source_row=None, subtopics=None, spans=None)


def upper_bounds(J: Judged, ms: list[Measure]) -> np.ndarray:
    """The (groups x measures) values of ``ms`` on ``J`` with every unjudged document of each
    measure's cutoff counted relevant (:func:`unjudged_relevant`): their true upper bound
    (the measures checked by :func:`check_unjudged`)."""
    label = max([m.param("rel") for m in ms] + [1])
    high = np.zeros((J.n_groups, len(ms)), dtype=np.float64)
    by_k: dict = {}
    for i, m in enumerate(ms):
        by_k.setdefault(m.k, []).append(i)
    for k, idx in by_k.items():  # one relabelled table per cutoff
        high[:, idx] = np.asarray(compute(unjudged_relevant(J, k, label), [ms[i] for i in idx]),
                                  dtype=np.float64).reshape(J.n_groups, len(idx))
    return high


def bound_table(J: Judged, ms: list[Measure], unjudged: str, keep: np.ndarray | None = None) -> pd.DataFrame:
    """The long table of ``ms`` on ``J`` with the unjudged documents counted relevant
    (``unjudged="relevant"``: ``value`` is the upper bound), or both bounds
    (``"bounds"``: ``value`` and ``value_low`` today's value, ``value_high`` the upper
    bound); the measures checked by :func:`check_unjudged`; ``keep``: the groups kept
    (:func:`kept_groups`; None: all)."""
    low = compute(J, ms) if unjudged == "bounds" else None
    high = upper_bounds(J, ms)
    names = [str(m) for m in ms]
    groups = J.groups
    if keep is not None:
        groups, high = groups.loc[keep].reset_index(drop=True), high[keep]
        low = None if low is None else np.asarray(low)[keep]
    if low is None:
        return long_table(groups, high, names)
    table = long_table(groups, low, names)
    table["value_low"] = table["value"].to_numpy()
    table["value_high"] = high.reshape(-1)
    return table
