"""The in-memory engine on threads: a run held in memory cut into parts of whole questions,
each evaluated on its own thread (:class:`~evalframe.engine.assembly.Assembler`), then put
together: the one-thread call's per-question table (the same rows, in the same order, the
values equal to the bit), diagnostics and warnings.  numpy and Arrow release the GIL in
their array work, so the parts run side by side.

How the run is cut, without hashing every row when it can be helped:

- each question id is compared with the row's before (one vectorised pass): the runs of
  equal ids, and the first id of each run;
- a run whose questions hold one run of rows each (written question after question, as a
  TREC file is) is cut into ``threads`` slices at question boundaries: no copy;
- any other (several systems one after another, shuffled) is hashed on its question ids
  (once per run of equal ids; a shuffled run's rows on ``threads`` threads, a slice each)
  into ``threads`` buckets, each bucket's rows copied out by its own thread; every
  golden-set question goes to its bucket.

A run below ``MIN_ROWS_PER_THREAD`` rows per thread is evaluated on one thread, as is a
run the one-thread engine alone reads: a path, a list of runs, a page
column named by ``rollup=``, chunk offsets.  A dict of tables, one per system, is put
together first (as the one-thread engine does).  An input error met in a part is raised by
the one-thread engine, with the whole run's counts and examples.
"""
from __future__ import annotations

from typing import Mapping

import numpy as np
import pandas as pd

from ..errors import EvalframeInputError
from ..measures import Measure
from .._diagnostic_records import diagnostics_table
from .._threads import map_in_order
from ..schema import ids_to_str
from .assembly import Assembler, Part, clean_ids
from .conventions import Conventions, run_column_map
from .foreign import doc_summary
from .cutting import question_buckets, question_fingerprints, run_starts
from .partition import GoldenIndex, Plan, finish, held_golden_set

#: rows each thread must get for the run to be cut: below it the parts' fixed costs and the
#: cut outweigh the second core (measured, 2 cores, quiet: 10,000 x 100 = 1M rows was 0.88x
#: grouped and 0.68x shuffled on 2 threads; 7,000 x 1,000 1.27-1.36x; 100,000 x 100 1.74x)
MIN_ROWS_PER_THREAD = 1_000_000


def threads_for(run, threads: int, rollup=None) -> int:
    """The threads worth using on ``run`` (a DataFrame, or a dict of them, one per system):
    1 for a run this engine does not cut, else at most one per ``MIN_ROWS_PER_THREAD`` rows."""
    tables = _tables(run)
    if threads <= 1 or tables is None or isinstance(rollup, str):
        return 1
    return max(1, min(threads, sum(len(t) for _, t in tables) // MIN_ROWS_PER_THREAD))


def _tables(run) -> "list[tuple[str | None, pd.DataFrame]] | None":
    """``run`` as (system name or None, table) pairs: one DataFrame, or a dict of them named
    by their keys (as :func:`evalframe.read_run` names them); None for anything else."""
    if isinstance(run, pd.DataFrame):
        return [(None, run)]
    if isinstance(run, Mapping) and run and all(isinstance(v, pd.DataFrame) for v in run.values()):
        return [(str(k), v) for k, v in run.items()]
    return None


def _canonical(run, columns) -> pd.DataFrame | None:
    """The run's columns the engine reads, under their canonical names (a dict's tables
    with their ``system`` column of the key, put together); None when a table's columns are
    missing or ambiguous (the one-thread engine's check says so)."""
    frames = []
    for name, table in _tables(run):
        cmap = run_column_map(list(table.columns), columns)
        if cmap is None:
            return None
        if name is not None:
            cmap = {c: v for c, v in cmap.items() if v != "system"}
        frame = table[list(cmap)].rename(columns=cmap)
        frames.append(frame if name is None else frame.assign(system=name))
    if len(frames) > 1 and len({tuple(f.columns) for f in frames}) > 1:
        return None  # a rank column in some tables only: the one-thread engine's rules
    return frames[0] if len(frames) == 1 else pd.concat(frames, ignore_index=True)


def evaluate_on_threads(run, qrels, ms: list[Measure], conv: Conventions, *, threads: int,
                        warn: bool = True, rollup=None, shallow: list[Measure] | None = None,
                        unjudged: str | None = None, measured: bool = True
                        ) -> tuple[pd.DataFrame | None, pd.DataFrame] | None:
    """The per-question table (None when not ``measured``) and diagnostics of ``run`` (a
    DataFrame, or a dict of them) cut into ``threads`` parts of whole questions; None when
    its columns are not the engine's to read, or an input error was met (the one-thread
    engine then says it)."""
    try:
        frame = _canonical(run, conv.columns)
        if frame is None:
            return None
        golden_frame, resolved = held_golden_set(qrels, conv.columns, conv.conflicts)
        golden = GoldenIndex(golden_frame)
        systems = _systems(frame)
        plan = Plan(list(ms), conv.but(conflicts="error", columns=None), systems, shallow, None, unjudged, rollup)
        asm = Assembler(plan, golden, measured=measured, threads=threads)
        try:
            _cut(frame, golden, asm, threads)
        finally:
            asm.close()
        records = finish(asm.results, plan, resolved=resolved, warn=warn,  # raises before it warns
                         run_docs=lambda value_set: [doc_summary(frame["doc_id"], value_set)],
                         golden_docs=golden.frame["doc_id"])
    except (EvalframeInputError, ValueError, TypeError, KeyError):  # the one-thread engine's error, whole
        return None
    return asm.table(), diagnostics_table(records)


def _systems(frame: pd.DataFrame) -> list:
    """Every system of the run in order of first appearance (``[None]``: no system column)."""
    if "system" not in frame:
        return [None]
    starts = run_starts(frame["system"])
    return list(dict.fromkeys(ids_to_str(frame["system"].iloc[starts].reset_index(drop=True)).tolist()))


def _cut(frame: pd.DataFrame, golden: GoldenIndex, asm: Assembler, k: int) -> None:
    """Hand ``asm`` the run's ``k`` parts of whole questions, each with its golden-set rows."""
    n = len(frame)
    q = frame["query_id"]
    starts = run_starts(q, threads=k)
    if 2 * len(starts) > n:  # stretches of about one row (a shuffled run): every row hashed, a slice per thread
        slices = np.linspace(0, n, k + 1).astype(np.int64)
        row_bucket = np.concatenate(map_in_order(
            lambda ab: question_buckets(q.iloc[ab[0]:ab[1]], k).astype(np.int8), list(zip(slices[:-1], slices[1:])),
            threads=k))
    else:
        heads = ids_to_str(q.iloc[starts].reset_index(drop=True))  # each stretch's question
        fp = question_fingerprints(heads)
        if pd.Index(fp).is_unique:  # one stretch of rows per question: slices at question boundaries
            cuts = np.unique(np.concatenate(([0], np.searchsorted(starts, [n * i // k for i in range(1, k)]),
                                             [len(starts)])))
            for a, b in zip(cuts[:-1], cuts[1:]):
                lo, hi = int(starts[a]), int(starts[b]) if b < len(starts) else n
                g = golden.lookup(heads.iloc[a:b])
                asm.add(Part(frame.iloc[:0], golden.hand_out(g[g >= 0]),
                             build=lambda lo=lo, hi=hi: clean_ids(frame.iloc[lo:hi])))
            asm.finish(golden.unseen())
            return
        row_bucket = np.repeat((fp % np.uint64(k)).astype(np.int8), np.diff(np.append(starts, n)))
    # hashed: a question's rows are in one bucket, whatever their order; each thread copies its bucket's rows
    golden_bucket = question_buckets(pd.Series(np.asarray(golden.ids, dtype=object)), k)
    for j in range(k):
        asm.add(Part(frame.iloc[:0], golden.hand_out(np.flatnonzero(golden_bucket == j)),
                     build=lambda j=j: clean_ids(frame.take(np.flatnonzero(row_bucket == j)))))
    asm.finish(None)
