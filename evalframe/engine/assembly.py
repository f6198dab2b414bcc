"""Putting partitions together: an :class:`Assembler` evaluates the parts of whole questions
an engine cuts (:func:`~evalframe.engine.partition.evaluate_part`, on ``threads`` threads:
at most that many parts in flight), keeps each part's values compactly and its summary, and
builds the per-question table once, ordered as the in-memory engine orders it.  The
streaming engine (:mod:`evalframe.engine.streaming`) and the in-memory engine on threads
(:mod:`evalframe.engine.parts`) hand it their parts.
"""
from __future__ import annotations

import gc
from dataclasses import dataclass, replace
from typing import Callable

import numpy as np
import pandas as pd
import pyarrow as pa

from .. import _arrow_compute as pc
from . import budget as sizing
from .partition import GoldenIndex, PartResult, Plan, evaluate_part
from .._diagnostic_checks import clear_judged_elsewhere, id_set, systems_judged
from .._diagnostic_records import Diagnostic
from .._id_order import natural_order, str_column
from .._threads import InOrder
from ..rollup import UNIT
from ..schema import ids_to_str


@dataclass
class Part:
    """One partition of whole questions: its run rows (canonical columns, ``query_id`` and
    ``system`` cleaned by :func:`~evalframe.schema.ids_to_str`) and its golden-set rows."""

    run: pd.DataFrame
    qrels: pd.DataFrame
    #: None, or how the worker thread makes ``run`` (e.g. takes a bucket's rows out of the
    #: whole run): the copy is then made on the part's thread, not the engine's
    build: "Callable[[], pd.DataFrame] | None" = None


def clean_ids(part: pd.DataFrame) -> pd.DataFrame:
    """A part's rows (a fresh index), its question and system ids cleaned as
    :func:`~evalframe.schema.ids_to_str` cleans them: what a :class:`Part` holds on every engine
    (string ids stay Arrow-backed: no Python string per row)."""
    part = part.reset_index(drop=True)
    part["query_id"] = ids_to_str(part["query_id"])
    if "system" in part:
        part["system"] = ids_to_str(part["system"])
    return part


class Assembler:
    """Evaluates partitions (:func:`~evalframe.engine.partition.evaluate_part`), holds their
    values compactly and their summaries, and puts them together."""

    def __init__(self, plan: Plan, golden: GoldenIndex | None = None, batch_rows: int | None = None,
                 measured: bool = True, threads: int = 1):
        #: the parts' golden-set rows are resolved already (conflicts) and renamed (columns)
        self.plan = plan
        self.ms = plan.ms if measured else None  # None: diagnostics only
        #: a partition's planned rows: a question with more is named in a MemoryBudgetWarning
        self.batch_rows = batch_rows
        #: the whole golden set (None: one too big to hold, read as a dataset): a system a
        #: part flags as retrieving no judged document is cleared when it retrieves a
        #: document judged for another part's question
        self.golden = golden
        self._judged_docs: pa.Array | None = None
        self.values: list[np.ndarray] = []  # per part: (groups, measures) float64
        self.high: list[np.ndarray] = []  # per part, with unjudged="bounds": the upper bounds
        self.question: list[np.ndarray] = []  # per part: each group's golden-set question (code)
        self.system: list[np.ndarray] = []  # per part: each group's system (position in systems)
        self.system_ids = large_strings(np.array([str(x) for x in plan.systems], dtype=object))
        self.n_golden = 0  # golden-set questions of the parts so far
        self.results: list[PartResult] = []  # per part: its summary
        self.golden_ids: list[pa.Array] = []  # per part: its golden-set questions
        self.empty: pd.DataFrame | None = None  # a run part without rows (for golden questions no part holds)
        #: the parts in flight, evaluated on ``threads`` threads, kept in the order they came
        self.queue = InOrder(threads)

    def add(self, part: Part) -> None:
        """Evaluate a part (see :meth:`evaluate`)."""
        if part.build is None:
            self.note_columns(part.run)
        self.evaluate(part)

    def note_columns(self, run: pd.DataFrame) -> None:
        """The first part's columns and dtypes: those of :meth:`empty_run`."""
        columns = set(run.columns)  # a rank-only run's parts have no score column: its rank orders them
        if self.empty is None and "doc_id" in columns and columns & {"score", "rank"}:  # built from the dtypes: a
            self.empty = pd.DataFrame({c: pd.Series(dtype=t) for c, t in run.dtypes.items()})  # slice keeps its part

    def finish(self, leftover: pd.DataFrame | None) -> None:
        """Wait for the parts in flight, evaluate the golden questions no part held
        (``leftover``: their rows): ``results`` then holds every part's summary."""
        for done in self.queue.drain():
            self.keep(*done)
        if leftover is not None and len(leftover):
            self.evaluate(Part(self.empty_run(), leftover))
            for done in self.queue.drain():
                self.keep(*done)
        self.queue.close()

    def close(self) -> None:
        """Stop the threads, dropping the parts in flight (the engine gave up on this assembler)."""
        self.queue.close()

    def empty_run(self) -> pd.DataFrame:
        """A run part without rows: the first part's columns, else the canonical ones (before
        any part with rows: a first bucket of golden questions the run does not answer)."""
        if self.empty is not None:
            return self.empty
        return pd.DataFrame({"query_id": pd.Series(dtype=object), "doc_id": pd.Series(dtype=object),
                             "score": pd.Series(dtype=np.float64)}
                            | ({"system": pd.Series(dtype=object)} if self.plan.systems != [None] else {})
                            | ({"rank": pd.Series(dtype=np.float64)} if self.plan.conv.ties == "rank" else {}))

    def evaluate(self, part: Part) -> None:
        """Hand ``part`` to a thread (or evaluate it now, on one); the parts finished by then
        are kept, in the order they came."""
        run = part.run
        if self.batch_rows is not None and len(run) > self.batch_rows:
            sizes = run["query_id"].value_counts(sort=True)
            if len(sizes) and sizes.iloc[0] > self.batch_rows:  # never split: held whole
                sizing.warn_budget(sizes.index[0], int(sizes.iloc[0]), self.batch_rows)
        if "doc_id" not in run.columns:  # a bucket without run rows
            part = replace(part, run=self.empty_run())
        del run
        for done in self.queue.submit(self.evaluated, part):
            self.keep(*done)

    def evaluated(self, part: Part) -> "tuple[PartResult, Part]":
        """The part evaluated (on a worker thread: nothing of the assembler's is changed)."""
        if part.build is not None:
            part = replace(part, run=part.build(), build=None)
        return evaluate_part(part.run.reset_index(drop=True), part.qrels, self.plan), part

    def keep(self, res: PartResult, part: Part) -> None:
        """Hold a part's result: its summary, and its values compactly."""
        self.note_columns(part.run)
        golden_ids = large_strings(pd.unique(part.qrels["query_id"]))
        self.golden_ids.append(golden_ids)
        records = self.judged_elsewhere(list(res.records), part)
        self.results.append(replace(res.summary(), records=records))
        if self.ms:
            # compact: per (system, question) group its codes and a row of values, the
            # long table of strings is built once, in long_table()
            self.values.append(np.ascontiguousarray(res.values, dtype=np.float64))
            if res.high is not None:
                self.high.append(np.ascontiguousarray(res.high, dtype=np.float64))
            self.question.append(codes_in(res.groups["query_id"], golden_ids) + self.n_golden)
            if "system" in res.groups.columns:
                self.system.append(codes_in(res.groups["system"], self.system_ids))
        self.n_golden += len(golden_ids)
        del res, part
        # the partition's frames sit in reference cycles (pandas' block references): collected
        # now (the young generations, a few ms), they do not pile up until the collector's next
        # full pass (one or two partitions' worth held at once); then Arrow's memory back
        gc.collect(1)
        pa.default_memory_pool().release_unused()

    def judged_elsewhere(self, records: list[Diagnostic], part: Part) -> list[Diagnostic]:
        """The part's records, a ``system_without_judged_documents`` record turned into the
        marker :data:`~evalframe._diagnostic_records.HAS_JUDGED` when the system retrieves, for one of the
        part's golden-set questions, a document the whole golden set judges (the in-memory
        engine checks the whole golden set; a part sees its questions' labels)."""
        if self.golden is None:
            return records

        def judged(flagged: list) -> set:
            chunkings = self.plan.chunkings
            if self._judged_docs is None and chunkings is not None and chunkings.spans is not None:
                self._judged_docs = id_set(chunkings.judged_chunks())  # the chunks labelled from the spans
            if self._judged_docs is None:  # the golden set's documents, once a system is flagged
                self._judged_docs = id_set(ids_to_str(self.golden.frame["doc_id"]).unique())
            questions = id_set(ids_to_str(pd.Series(pd.unique(part.qrels["query_id"]))))
            return systems_judged(part.run, flagged, questions, self._judged_docs)
        return clear_judged_elsewhere(records, judged)

    def table(self) -> pd.DataFrame | None:
        """The per-question table (None: diagnostics only, or no part)."""
        return self.long_table() if self.ms is not None and self.values else None

    def long_table(self) -> pd.DataFrame:
        """The per-question table of the held parts, ordered as the in-memory engine orders
        it: systems in order of first appearance, questions in the golden set's natural order
        (of every golden-set question, as :func:`~evalframe.ranking.judge` lists them),
        measures in the order asked."""
        golden = pa.concat_arrays(self.golden_ids) if self.golden_ids else pa.array([], pa.large_string())
        unique = pc.unique(golden)
        rank = natural_rank(unique)  # rank of each distinct golden-set question
        question = pc.index_in(golden, value_set=unique).to_numpy(zero_copy_only=False).astype(np.int64)
        question = question[np.concatenate(self.question)]  # each group's distinct-question code
        values = np.concatenate(self.values)
        high = np.concatenate(self.high) if self.high else None
        self.values, self.question, self.golden_ids, self.high = [], [], [], []
        keys = [rank[question]]
        system = None
        if self.system:
            system = np.concatenate(self.system)
            self.system = []
            keys.append(system)
        order = np.lexsort(keys)
        G, M = values.shape
        row_group = np.repeat(order, M)
        cols = {}
        if system is not None:
            cols["system"] = str_column(self.system_ids.take(pa.array(system[row_group])))
        cols["query_id"] = str_column(unique.take(pa.array(question[row_group])))
        del row_group
        names = pa.array([str(m) for m in self.ms], pa.large_string())
        cols["measure"] = str_column(names.take(pa.array(np.tile(np.arange(M), G))))
        out = pd.DataFrame(cols)
        if self.plan.rollup is not None:
            out.insert(out.columns.get_loc("measure"), "unit", UNIT)
        out["value"] = values[order].ravel()
        if high is not None:
            out["value_low"] = out["value"].to_numpy()
            out["value_high"] = high[order].ravel()
        return out


def large_strings(values) -> pa.Array:
    """Ids (strings) as one Arrow large_string array."""
    arr = pa.array(values) if not isinstance(values, np.ndarray) else pa.array(values.astype(object), pa.large_string())
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    return arr if arr.type == pa.large_string() else arr.cast(pa.large_string())


def codes_in(column: pd.Series, values: pa.Array) -> np.ndarray:
    """Position of each string of ``column`` in ``values``, found by Arrow (no Python
    string per row: the per-question table has millions of rows)."""
    return pc.index_in(large_strings(column), value_set=values).to_numpy(zero_copy_only=False).astype(np.int64)


def natural_rank(ids: pa.Array) -> np.ndarray:
    """Rank of each of the distinct ``ids`` in :func:`~evalframe._id_order.natural_order`
    (numeric when every id is an integer, else byte-wise), computed by Arrow."""
    rank = np.empty(len(ids), dtype=np.int64)
    order = None
    if len(ids) and not pc.all(pc.match_substring_regex(ids, r"^(0|-?[1-9][0-9]{0,18})$")).as_py():
        order = pc.sort_indices(ids).to_numpy()  # byte-wise = code point order
    elif len(ids):
        try:
            order = np.argsort(pc.cast(ids, pa.int64()).to_numpy(), kind="stable")
        except pa.ArrowInvalid:  # an integer beyond int64: the general rule
            sorted_ids = natural_order(ids.to_numpy(zero_copy_only=False).astype(object))
            order = pc.index_in(large_strings(sorted_ids), value_set=ids).to_numpy()
    if order is not None:
        rank[order] = np.arange(len(ids))
    return rank
