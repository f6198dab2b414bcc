"""The streaming engine: a Parquet-dataset run larger than the memory budget, evaluated in
partitions of whole questions (grouped batches, or hash buckets in a temporary directory)
by :func:`~evalframe.engine.partition.evaluate_part`, merged by
:func:`~evalframe.engine.partition.merge`: the in-memory call's numbers, diagnostics and
warnings.  How it cuts and plans: the user guide's "How the engines work".
"""
from __future__ import annotations

import math
import os
import sys
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Iterator, Mapping

import numpy as np
import pandas as pd
import pyarrow as pa

from .conventions import DEFAULT, Conventions, run_column_map
from .chunkings import Chunkings, carried_chunkings
from .foreign import doc_summary
from . import budget as sizing
from .choice import is_dataset_source, open_run_dataset
from .assembly import Assembler, Part, clean_ids
from .cutting import question_buckets, question_fingerprints, run_starts
from .partition import GoldenIndex, Plan, finish
from .scratch import close_all, scratch_directory
from .text_blocks import TextRun, is_text_run
from ..io import read_golden_set
from ..measures import Measure
from .._diagnostic_records import diagnostics_table
from ..rollup import Rollup, rollup_column
from .._conflicts import Conflicts, ResolvedConflicts, merge_conflicts
from .._id_codes import CheckedQrels
from ..schema import ALIASES, check_qrels, check_qrels_part, ids_to_str

if TYPE_CHECKING:  # pragma: no cover - imported where used (slow to import)
    import pyarrow.dataset as pads


@dataclass(frozen=True)
class StreamOptions:
    """How a run is streamed (resolved from :func:`evalframe.evaluate`'s arguments)."""

    budget: int
    progress: bool | None = None
    temp_dir: str | None = None
    #: partitions evaluated at once, each on its own thread (the budget shared among them)
    threads: int = 1


# ---------------------------------------------------------------- reading the run
class _Reader:
    """Scanner batches of one or more run datasets as Arrow tables with canonical columns
    (a named dataset gets a ``system`` column of its name)."""

    def __init__(self, sources: "list[tuple[pads.Dataset, str | None]]",
                 columns: Mapping[str, str] | None = None):
        self.sources = []
        for dataset, name in sources:
            cmap = run_column_map(dataset.schema.names, columns)
            if cmap is None:  # missing or ambiguous columns: the engine's own check explains
                from ..schema import check_run
                check_run(dataset.head(1).to_pandas(), columns=columns)
                raise AssertionError("unreachable: check_run accepted columns _column_map refused")
            if name is not None:
                cmap = {c: v for c, v in cmap.items() if v != "system"}
            self.sources.append((dataset, name, cmap))
        self.has_system = any(n is not None or "system" in c.values() for _, n, c in self.sources)
        self.has_rank = all("rank" in c.values() for _, _, c in self.sources)

    def count_rows(self) -> int:
        return sum(d.count_rows() for d, _, _ in self.sources)

    def batches(self, rows: int) -> Iterator[pa.Table]:
        for dataset, name, cmap in self.sources:
            cols = [c for c, v in cmap.items() if v != "rank" or self.has_rank]
            for t in _file_batches(dataset, cols, max(rows, 1)):
                if t.num_rows:
                    t = t.rename_columns([cmap[c] for c in cols])
                    if name is not None:
                        t = t.append_column("system", pa.array([name] * t.num_rows, pa.large_string()))
                    yield t

    def systems(self) -> list:
        """Every system in order of first appearance (one pass over the system column)."""
        if not self.has_system:
            return [None]
        seen: dict = {}
        for dataset, name, cmap in self.sources:
            if name is not None:
                seen.setdefault(name, None)
                continue
            col = [c for c, v in cmap.items() if v == "system"][0]
            for b in dataset.to_batches(columns=[col], batch_size=1 << 20):
                arr = b.column(0)
                if isinstance(arr.type, pa.DictionaryType):
                    arr = arr.dictionary.take(arr.indices.unique())  # first-appearance order of the codes
                for s in ids_to_str(pd.Series(arr.unique().to_pylist(), dtype=object)):
                    seen.setdefault(s, None)
        return list(seen)


def _file_batches(dataset: pads.Dataset, cols: list[str], rows: int) -> Iterator[pa.Table]:
    """Batches of ``rows`` rows of ``cols``, read one Parquet row group at a time: the
    dataset scanner reads ahead (files and batches), holding several times the batch.
    Each file is opened when its turn comes and closed after it: a file read to its end
    keeps its last row group's buffers until it is closed (about 40 MiB per file of
    1M-row groups, which grew with the number of files read)."""
    import pyarrow.dataset as pads
    import pyarrow.parquet as pq
    target = pa.schema([dataset.schema.field(c) for c in cols])
    direct = (isinstance(dataset, pads.FileSystemDataset) and dataset.format.default_extname == "parquet"
              and all(set(cols) <= set(pq.read_schema(f, filesystem=dataset.filesystem).names)
                      for f in dataset.files))  # else columns from the partitioning: the scanner knows them
    if not direct:
        for b in dataset.to_batches(columns=cols, batch_size=rows, batch_readahead=0, fragment_readahead=0):
            yield pa.Table.from_batches([b])
        return
    for path in dataset.files:
        with pq.ParquetFile(path, filesystem=dataset.filesystem) as f:
            for b in f.iter_batches(batch_size=rows, columns=cols):
                t = pa.Table.from_batches([b])
                yield t if t.schema.equals(target) else t.cast(target)


def _page_pairs(sources: "list[tuple[pads.Dataset, str | None]]", column: str) -> pd.DataFrame:
    """The distinct (chunk, page) pairs of the run column ``column`` naming each chunk's
    page, over every dataset (one pass over those two columns): the map
    :func:`~evalframe.rollup.rollup_column` reads from a whole run (a chunk given two
    pages is its error; a pair with a missing id is counted once, not once per row)."""
    names = ("chunk_id", "passage_id") + ALIASES["doc_id"]
    pairs = []
    for dataset, _ in sources:
        rollup_column(dataset.schema.empty_table().to_pandas(), column)  # its errors: no such column ...
        lower = {str(c).strip().lower(): c for c in dataset.schema.names if c != column}
        chunk = next(lower[n] for n in names if n in lower)
        for t in _file_batches(dataset, [chunk, column], 1 << 20):
            pairs.append(t.rename_columns(["chunk", "page"]).group_by(["chunk", "page"]).aggregate([]))
    table = pa.concat_tables(pairs, promote_options="permissive") if pairs else None
    if table is None or not table.num_rows:
        return pd.DataFrame({"chunk": pd.Series(dtype=object), "page": pd.Series(dtype=object)})
    return table.group_by(["chunk", "page"]).aggregate([]).to_pandas()


def _split_dataset(run, columns: Mapping[str, str] | None, directory: str, batch_rows: int) -> pd.DataFrame:
    """Copy a run dataset whose rows carry chunk offsets into ``directory`` as Parquet files
    of the run ``split_run_offsets`` leaves (each row's chunk id as
    ``doc_id``), in order; returned: the distinct rows of its chunk table (one pass)."""
    import pyarrow.parquet as pq
    from ..canonical import apply_columns
    from ..spans import split_run_offsets
    tables, n = [], 0
    for dataset, name in _run_sources(run):
        for batch in dataset.to_batches(batch_size=batch_rows, batch_readahead=0, fragment_readahead=0):
            df = batch.to_pandas()
            if name is not None:
                df["system"] = name
            rest, table = split_run_offsets(apply_columns(df, columns))
            pq.write_table(pa.Table.from_pandas(rest, preserve_index=False),
                           os.path.join(directory, f"part-{n:06d}.parquet"))
            tables.append(table.drop_duplicates())
            n += 1
    return pd.concat(tables, ignore_index=True).drop_duplicates().reset_index(drop=True)


def _run_sources(run) -> "list[tuple[pads.Dataset | TextRun, str | None]]":
    def source(x):  # a TREC text run file is read in blocks of whole questions, as a dataset is
        return TextRun(x) if is_text_run(x) else open_run_dataset(x)
    if isinstance(run, Mapping):
        return [(source(v), str(k)) for k, v in run.items()]
    return [(source(run), None)]


def _to_frame(table: pa.Table) -> pd.DataFrame:
    """A batch as a frame, its ids cleaned as :func:`~evalframe.schema.ids_to_str` cleans them;
    string ids stay Arrow-backed (no Python string per row)."""
    return clean_ids(table.to_pandas())


def _id_array(ids: "pd.Series | pa.Array | pa.ChunkedArray") -> pa.ChunkedArray:
    """Ids cleaned by :func:`~evalframe.schema.ids_to_str` as one large_string chunked
    array: an Arrow string column is kept (zero-copy when it needs no trimming); other
    columns are converted (then a Python string per row, as the in-memory path does)."""
    if not isinstance(ids, pd.Series):
        ids = ids.to_pandas()
    arr = pa.array(ids_to_str(ids), from_pandas=True)
    if not isinstance(arr, pa.ChunkedArray):
        arr = pa.chunked_array([arr])
    return arr if arr.type == pa.large_string() else arr.cast(pa.large_string())


class _NotGrouped(Exception):
    """A question reappeared after its batch: the run is not grouped by question."""


def _progress_bar(enabled: bool | None, total: int, desc: str):
    from tqdm.auto import tqdm
    if enabled is None:
        enabled = sys.stderr.isatty() and "ipykernel" not in sys.modules
    return tqdm(total=total, desc=desc, unit="rows", unit_scale=True, disable=not enabled,
                file=sys.stderr, leave=False)


def _stream_grouped(reader: _Reader, golden: GoldenIndex, asm: Assembler, batch_rows: int, bar) -> None:
    """Batches cut at question boundaries: the rows of a batch's last question are carried
    over (as Arrow, so a batch is held once as Arrow and once as the partition's frame)."""
    from .. import _arrow_compute as pc
    done = np.zeros(0, dtype=np.uint64)
    carry: pa.Table | None = None
    pending: list[pa.Table] = []
    n_pending = 0 if carry is None else len(carry)
    step = max(1, batch_rows // 4)
    for table in reader.batches(min(step, 1 << 20)):
        bar.update(table.num_rows)
        pending.append(table)
        n_pending += table.num_rows
        if n_pending + min(step, 1 << 20) <= batch_rows:  # the next read still fits
            continue
        table = pa.concat_tables(([] if carry is None else [carry]) + pending)  # chunks, no copy
        pending = []
        tail = pc.equal(table.column("query_id"), table.column("query_id")[-1])
        carry = table.filter(tail)
        table = table.filter(pc.invert(tail))
        n_pending = carry.num_rows
        if table.num_rows:
            df = _to_frame(table)
            del table
            done = _close_batch(df, golden, asm, done)
            del df
    rest = ([] if carry is None else [carry]) + pending
    if rest and sum(t.num_rows for t in rest):
        _close_batch(_to_frame(pa.concat_tables(rest)), golden, asm, done)


def _close_batch(df: pd.DataFrame, golden: GoldenIndex, asm: Assembler, done: np.ndarray) -> np.ndarray:
    ids = _id_array(df["query_id"])
    heads = run_starts(ids)  # compared as strings: one per question when the batch is grouped
    head_ids = ids.take(pa.array(heads))
    fp = question_fingerprints(head_ids)
    # a batch whose question ids change more often than it has questions is not grouped
    # itself (a shuffled run): told before its first partition is evaluated for nothing
    if len(np.unique(fp)) != len(fp) or (len(done) and np.isin(fp, done, assume_unique=True).any()):
        raise _NotGrouped
    qids = head_ids.to_numpy(zero_copy_only=False)  # distinct, in order of appearance (pd.unique's)
    g = golden.lookup(qids)
    asm.add(Part(df, golden.hand_out(g[g >= 0])))
    return np.union1d(done, fp)


#: The column of a golden set's bucket files holding each row's position in the whole golden set.
_ROW = "evalframe_row"


def _stream_buckets(reader: _Reader, golden: GoldenIndex | None, qrels_dataset: pads.Dataset | None,
                    asm: Assembler, n_rows: int, batch_rows: int, tmp: str, bar,
                    columns: Mapping[str, str] | None = None,
                    conflicts: Conflicts = "error") -> ResolvedConflicts | None:
    """Hash the run (and a golden set too large to hold, ``qrels_dataset``) into buckets
    by question and evaluate bucket by bucket.  The golden set's rows are checked as they
    are read and their conflicting labels resolved in the bucket holding all of a
    question's rows; returned: those resolutions merged (the count, and the first pairs of
    the whole golden set as examples), or None."""
    n_buckets = min(sizing.MAX_BUCKETS, max(2, math.ceil(1.3 * n_rows / batch_rows)))
    spill = _Spill(n_buckets, max(sizing.SPILL_MIN_BYTES, batch_rows * sizing.BYTES_PER_ROW // 3))
    try:
        for table in reader.batches(min(max(1, batch_rows // 4), 1 << 20)):
            bar.update(table.num_rows)
            qids = _id_array(table.column("query_id"))  # Arrow throughout: no Python string per row
            table = table.set_column(table.schema.get_field_index("query_id"), "query_id", qids)
            spill.add(table, question_buckets(qids, n_buckets), lambda b: os.path.join(tmp, f"run-{b:05d}.arrow"))
        spill.flush()
        if qrels_dataset is not None:
            at = 0
            for table in qrels_dataset.to_batches(batch_size=1 << 20):
                q = check_qrels(pa.Table.from_batches([table]).to_pandas(), columns=columns, resolve=False).frame
                q[_ROW] = np.arange(at, at + len(q), dtype=np.int64)  # repeated pairs kept: resolved per bucket
                at += len(q)
                t = pa.Table.from_pandas(q, preserve_index=False)
                spill.add(t, question_buckets(q["query_id"], n_buckets),
                          lambda b: os.path.join(tmp, f"qrels-{b:05d}.arrow"))
            spill.flush()
    finally:
        spill.close()
    g_bucket = None if golden is None else question_buckets(pd.Series(golden.ids, dtype=object), n_buckets)
    bar.reset(total=n_buckets)
    bar.set_description("evaluating buckets")
    bar.unit = "buckets"
    resolved: list[ResolvedConflicts | None] = []
    for b in range(n_buckets):
        path = os.path.join(tmp, f"run-{b:05d}.arrow")
        run = _read_bucket(path)
        if golden is not None:
            qrels = golden.rows(np.flatnonzero(g_bucket == b))
        else:
            qpath = os.path.join(tmp, f"qrels-{b:05d}.arrow")
            qrels = _read_bucket(qpath)
            rows = None if qrels is None else qrels.pop(_ROW).to_numpy()
            if qrels is not None and conflicts != "error":  # else the partition's own check raises
                qrels, c = check_qrels_part(qrels, conflicts, rows)
                resolved.append(c)
        if run is not None or (qrels is not None and len(qrels)):
            run = run if run is not None else pd.DataFrame({c: pd.Series(dtype=object) for c in ("query_id",)})
            qrels = qrels if qrels is not None else pd.DataFrame(columns=["query_id", "doc_id", "relevance"])
            if "system" in run:
                run["system"] = ids_to_str(run["system"])
            asm.add(Part(run, qrels))
        for p in (path,):
            if os.path.exists(p):
                os.remove(p)
        bar.update(1)
    return merge_conflicts(resolved)


def _read_bucket(path: str) -> pd.DataFrame | None:
    """A bucket file as a frame (None: no such bucket), its Arrow table freed once converted."""
    if not os.path.exists(path):
        return None
    with pa.ipc.open_stream(path) as f:
        table = f.read_all()
    df = table.to_pandas()
    del table
    pa.default_memory_pool().release_unused()
    return df


class _Spill:
    """Tables hashed into bucket files (Arrow IPC streams, LZ4-compressed), buffered so each
    file holds a few large record batches.

    Every batch is split by bucket as it comes (one ``take``), its pieces kept; when the
    pieces of all buckets pass ``cap`` bytes, each bucket's are written as one record batch
    and all of them freed (so the memory held is the batches buffered, exactly).  Writing
    each batch's pieces to Parquet at once made row groups of ~60 rows at a 128 MiB budget:
    the writers' metadata of ~200,000 row groups grew the pass to 0.8 GiB, and reading the
    buckets back was slow (a shuffled 15M-row run at 128 MiB: 88.7 s, 0.68 GiB above the
    imports; with this and the planning of :func:`~evalframe.engine.budget.plan_batch_rows`, 16.1 s and 159 MiB,
    benchmarks/bench_scale.py)."""

    def __init__(self, n_buckets: int, cap: int):
        self.n_buckets, self.cap = n_buckets, cap
        self.pieces: dict[str, list[pa.Table]] = {}
        self.held = 0
        self.writers: dict = {}

    def add(self, table: pa.Table, bucket: np.ndarray, path_of) -> None:
        order = np.argsort(bucket, kind="stable")
        counts = np.bincount(bucket, minlength=self.n_buckets)
        table = table.take(pa.array(order))
        self.held += table.nbytes
        start = 0
        for b in np.flatnonzero(counts):
            self.pieces.setdefault(path_of(b), []).append(table.slice(start, int(counts[b])))
            start += int(counts[b])
        if self.held >= self.cap:
            self.flush()

    def flush(self) -> None:
        for path, pieces in self.pieces.items():
            w = self.writers.get(path)
            if w is None:
                w = self.writers[path] = pa.ipc.new_stream(
                    path, pieces[0].schema, options=pa.ipc.IpcWriteOptions(compression="lz4"))
            w.write_table(pa.concat_tables(pieces).combine_chunks())
        self.pieces, self.held = {}, 0

    def close(self) -> None:
        self.pieces = {}
        close_all(self.writers.values())


# ---------------------------------------------------------------- the entry point
def stream_evaluate(run, qrels, ms: list[Measure] | None, conv: Conventions = DEFAULT, *,
                    warn: bool = True, rollup: Rollup | None = None, options: StreamOptions,
                    unjudged: str | None = None,
                    shallow: list[Measure] | None = None, chunkings: Chunkings | None = None
                    ) -> tuple[pd.DataFrame | None, pd.DataFrame] | None:
    """Evaluate a run dataset in partitions; None when it fits the budget (then the
    caller takes the in-memory path).

    Parameters
    ----------
    run : Parquet path, directory, glob or pyarrow Dataset
    qrels : golden set (anything :func:`evalframe.read_qrels` reads, or a Parquet dataset)
    ms : list of Measure, or None for diagnostics only
    conv : Conventions
        Its ``columns`` (``{your column name: canonical name}``) rename the run dataset's
        columns and the golden set's; its ``conflicts`` resolve conflicting labels of a golden set read here (a Parquet dataset), resolved once
        (a table the caller read was resolved by it); a golden set hashed into buckets
        (larger than half the budget) is resolved bucket by bucket (all of a question's
        rows are in its bucket), the record merged: the in-memory call's count and examples.
    rollup : DataFrame, dict or str, optional
        A chunk -> page table: each partition is rolled up (its questions' rows are all there);
        a run column naming the pages: its (chunk, page) pairs are read from the whole run first
        (one pass over the two columns), then used as the table (not with ``columns=``).
    options : StreamOptions
        The memory budget (bytes), the progress bar and the temporary directory's parent.
    shallow : list of Measure, optional
        The measures whose deepest cutoff the rankings are checked against
        (``shallow_rankings``; default: ``ms``), as :func:`evalframe.diagnostics` and
        ``evaluate_with_diagnostics`` do in memory.
    chunkings : Chunkings, optional
        ``chunks=`` and a span golden set resolved once
        (:func:`evalframe.engine.chunkings.resolve_chunkings`): each partition judges its chunkings on
        the labels they get from its questions' spans (the spans are then the golden set,
        held whole).

    Returns
    -------
    (DataFrame or None, DataFrame) or None
        The per-question table (ordered as the in-memory engine orders it; None
        when ``ms`` is None) and the diagnostics table.
    """
    columns, conflicts = conv.columns, conv.conflicts
    if chunkings is not None and chunkings.split_run:  # rows carrying offsets: split as they are copied
        rows = sum(d.count_rows() for d, _ in _run_sources(run))
        golden_rows = len(chunkings.spans) if chunkings.spans is not None else 0
        if rows * sizing.WHOLE_BYTES_PER_ROW + golden_rows * sizing.QRELS_BYTES_PER_ROW <= options.budget:
            return None  # fits: read whole (the in-memory engine splits it)
        with scratch_directory("evalframe-split-", options.temp_dir) as tmp:
            table = _split_dataset(run, columns, tmp, batch_rows=max(1 << 12, options.budget // (8 * sizing.BYTES_PER_ROW)))
            split = replace(chunkings, split_run=False)
            if not chunkings.tables:
                split = carried_chunkings(table, chunkings.spans, chunkings.min_overlap)
            return stream_evaluate(tmp, qrels, ms, conv.but(columns=None), warn=warn, rollup=rollup,
                                   options=options, shallow=shallow, chunkings=split)
    page_column = None
    if isinstance(rollup, str):
        if columns:
            raise ValueError(f"evaluate: rollup must be a chunk -> page table (DataFrame or dict) for a streamed "
                             f"Parquet dataset read with columns=, got the run column {rollup!r}; pass the table "
                             "of that column's (chunk, page) pairs")
        page_column, rollup = rollup, None  # the map is read from the whole run once it must stream
    reader = _Reader(_run_sources(run), columns)
    n_rows = reader.count_rows()
    qrels_dataset = None
    if chunkings is not None and chunkings.spans is not None:
        qrels = chunkings.spans  # the golden set: checked and merged once
    elif is_dataset_source(qrels):
        qd = open_run_dataset(qrels, "golden set (qrels)")
        if qd.count_rows() * sizing.QRELS_BYTES_PER_ROW > options.budget // 2:
            qrels_dataset = qd
        else:
            qrels = qd.to_table().to_pandas()
    # read once, its conflicting labels resolved (or refused) as read_qrels does in memory
    # (a table the caller resolved has none left: resolving it again changes nothing)
    golden = golden_conflicts = None
    if qrels_dataset is None:
        # conflicting labels resolved once, for the whole golden set (reported once, not per part)
        frame = qrels if qrels is getattr(chunkings, "spans", None) else read_golden_set(qrels, columns=columns,
                                                                                        conflicts=conflicts)
        if isinstance(frame, CheckedQrels):
            frame, golden_conflicts = frame.table, frame.conflicts
        golden = GoldenIndex(frame)
    golden_rows = 0 if golden is None else len(golden.frame)
    if qrels_dataset is None and n_rows * sizing.WHOLE_BYTES_PER_ROW + golden_rows * sizing.QRELS_BYTES_PER_ROW <= options.budget:
        return None
    if page_column is not None:
        rollup = _page_pairs(_run_sources(run), page_column)
    systems = reader.systems()
    if chunkings is not None:  # the run's systems' chunkings, checked before any part is read
        chunkings = chunkings.for_systems(systems)
    n_questions = len(golden) if golden is not None else qrels_dataset.count_rows()
    out_rows = n_questions * len(systems) * len(ms or [])  # at most (missing="zero": exactly)
    batch_rows = sizing.plan_batch_rows(options.budget, golden_rows=golden_rows, out_rows=out_rows)
    sizing.warn_small_budget(options.budget, golden_rows, out_rows, batch_rows)
    threads = max(1, min(options.threads, batch_rows // sizing.MIN_BATCH_ROWS))
    batch_rows //= threads + 1 if threads > 1 else 1  # the parts in flight, and the next one read, share the budget
    plan = Plan(ms or [], conv.but(conflicts="error", columns=None), systems, shallow, chunkings, unjudged, rollup)
    asm = Assembler(plan, golden, batch_rows, measured=ms is not None, threads=threads)
    try:
        with _progress_bar(options.progress, n_rows, "evaluating rows") as bar:
            grouped, bucketed = golden is not None, None
            if grouped:
                try:
                    _stream_grouped(reader, golden, asm, batch_rows, bar)
                    asm.finish(golden.unseen())
                except _NotGrouped:
                    grouped = False
                    golden.seen[:] = False
                    asm.close()
                    asm = Assembler(plan, golden, batch_rows, measured=ms is not None, threads=threads)
                    bar.reset(total=n_rows)
                    bar.set_description("partitioning by question")
            if not grouped:
                with scratch_directory("evalframe-buckets-", options.temp_dir) as tmp:
                    bucketed = _stream_buckets(reader, golden, qrels_dataset, asm, n_rows, batch_rows, tmp, bar,
                                               columns, conflicts)
                    asm.finish(None)
    finally:
        asm.close()  # an error in a part: the parts in flight are waited for, the threads stopped
    records = finish(asm.results, plan, resolved=bucketed if golden is None else golden_conflicts, warn=warn,
                     run_docs=None if golden is None else lambda value_set: (
                         doc_summary(t.column("doc_id").to_pandas(), value_set) for t in reader.batches(1 << 20)),
                     golden_docs=None if golden is None else golden.frame["doc_id"])
    return asm.table(), diagnostics_table(records)
