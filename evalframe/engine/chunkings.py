"""Chunkings judged each on its own labels: ``chunks=`` and a span golden set resolved once
(:class:`Chunkings`), each chunking judged against the labels it gets from the spans, and the
chunk sizes and chunkings compared (the ``chunk_sizes_differ`` and ``chunkings_differ`` records).
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from ..errors import EvalframeInputError, InputProblem
from ..io import read_checked_qrels, read_checked_run, read_chunks, read_table
from ..measures import FAMILIES, Measure
from .._diagnostic_records import CHUNKING_OF, Check, Diagnostic
from .._judged import Judged, Missing, Ties
from ..ranking import judge
from .._id_bytes import fingerprints
from .._id_codes import CheckedQrels, CheckedRun, encode_qrels, encode_run
from ..schema import check_qrels, ids_to_str
from ..spans import (MIN_OVERLAP, SpanRows, check_chunk_documents, check_min_overlap, check_spans, chunk_labels,
                    chunk_offsets, chunks_in_run, doc_codes, is_span_table, merge_spans, split_run_offsets)
from ..canonical import apply_columns
from .conventions import DEFAULT, Conventions
from .foreign import note_foreign_ids
from .steps import with_conflicts


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
            from .. import _arrow_compute as pc
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
        return [note_foreign_ids(J, checked, check_qrels(doc_level))], systems
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
            part = replace(part, data=part.frame.assign(tokens=table["tokens"].to_numpy()[where]))
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
            out.append(with_conflicts(note_foreign_ids(J, part, golden), golden.conflicts))
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
        J = note_foreign_ids(J, part, golden_g)
        if len(groups) > 1:  # each chunking's labels have their own questions without a relevant chunk
            J = J.with_records(replace(r, action=f"{r.action} {CHUNKING_OF}{', '.join(map(str, names))}")
                               if r.check is Check.GOLDEN_QUESTIONS_WITHOUT_RELEVANT else r for r in J.records)
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
