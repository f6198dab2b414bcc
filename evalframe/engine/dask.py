"""The Dask engine: :func:`evalframe.evaluate` on a ``dask.dataframe`` run, on a cluster
(the current ``dask.distributed`` client, else Dask's threads).  Partitions holding whole
questions are evaluated where they are, else the run is shuffled on the question hash;
each partition goes through :func:`~evalframe.engine.partition.evaluate_part`, the results
are merged on the client.  Details: the user guide's "How the engines work".
"""
from __future__ import annotations

import os
from typing import Sequence

import numpy as np
import pandas as pd

from .conventions import DEFAULT, Conventions
from .chunkings import Chunkings
from .foreign import doc_summary
from .choice import is_dask_frame
from .cutting import question_buckets, question_fingerprints
from .partition import GoldenIndex, PartResult, Plan, evaluate_part, finish, held_golden_set
from ..errors import EvalframeInputError, InputProblem
from ..measures import Aggregation, Mean, Measure
from ..measures.custom import shipped
from .._diagnostic_checks import id_set, systems_judged
from .._diagnostic_records import diagnostics_table
from ..rollup import Rollup, rollup_column, rollup_map
from ..schema import ids_to_str

#: Columns of a run the engine passes on (the others are left out of the shuffle).
RUN_COLUMNS = ("system", "query_id", "doc_id", "score", "rank", "tokens")
#: Rows of a partition are numbered ``input partition * ROW_STRIDE + position``.
ROW_STRIDE = 2 ** 40


def read_dataset(path) -> "dd.DataFrame":  # noqa: F821 - dask is imported on use
    """A Parquet dataset (a file, a directory of files or a glob) as a Dask DataFrame."""
    import dask.dataframe as dd
    return dd.read_parquet(os.fspath(path))


# ---------------------------------------------------------------- buckets
def _distinct_fingerprints(query_id: pd.Series) -> np.ndarray:
    return np.unique(question_fingerprints(query_id))


def _disjoint_partitions(run) -> "tuple[np.ndarray, np.ndarray] | None":
    """When no question of ``run`` has rows in two partitions (files of a dataset written
    question by question), its partitions' question fingerprints, sorted, and the
    partition of each; else None (the run must be shuffled).  One pass over ``query_id``."""
    import dask
    fps = dask.compute(*[dask.delayed(_distinct_fingerprints)(p) for p in run["query_id"].to_delayed()])
    every = np.concatenate(fps)
    part = np.repeat(np.arange(len(fps)), [len(f) for f in fps])
    order = np.argsort(every, kind="stable")
    every, part = every[order], part[order]
    if len(every) == 0 or (every[1:] == every[:-1]).any():  # no question, or one in two partitions
        return None
    return every, part


def owner_buckets(query_id: pd.Series, owners: tuple[np.ndarray, np.ndarray], n: int) -> np.ndarray:
    """The partition of each golden-set question id when the run's partitions hold
    disjoint questions (``owners`` from :func:`_disjoint_partitions`): the one holding
    it, or (a question no partition holds) its fingerprint modulo ``n``."""
    fp = question_fingerprints(query_id)
    fps, part = owners  # not empty
    at = np.minimum(np.searchsorted(fps, fp), len(fps) - 1)
    return np.where(fps[at] == fp, part[at], (fp % np.uint64(n)).astype(np.int64)).astype(np.int64)


def division_buckets(query_id: pd.Series, divisions: Sequence) -> np.ndarray:
    """The partition of each (golden-set) question id of a run partitioned by question
    on an index with known ``divisions`` (string or integer ids)."""
    n = len(divisions) - 1
    bounds = np.asarray(divisions[1:-1])
    ids = ids_to_str(query_id)
    if bounds.dtype.kind in "iu":
        vals = pd.to_numeric(ids, errors="coerce").to_numpy(dtype=np.float64)
        out = np.searchsorted(bounds.astype(np.float64), np.nan_to_num(vals, nan=-np.inf), side="right")
    else:
        out = np.searchsorted(bounds.astype(object), ids.to_numpy(dtype=object), side="right")
    return np.clip(out, 0, n - 1).astype(np.int64)


def _by_question_divisions(run) -> Sequence | None:
    """The divisions of a run partitioned by question (a ``query_id`` index), else None."""
    if run.index.name != "query_id" or not run.known_divisions:
        return None
    kind = np.asarray(run.divisions[1:-1] or [0]).dtype.kind
    return run.divisions if kind in "iuOU" else None


def _keyed_part(df: pd.DataFrame, n_buckets: int, partition_info=None) -> pd.DataFrame:
    """A run partition with each row's bucket and order key."""
    j = partition_info["number"] if partition_info else 0
    out = df[[c for c in RUN_COLUMNS if c in df.columns]].copy()
    out["_bucket"] = question_buckets(df["query_id"], n_buckets)
    out["_row"] = np.int64(j) * ROW_STRIDE + np.arange(len(df), dtype=np.int64)
    return out


def _ordered_part(df: pd.DataFrame, partition_info=None) -> pd.DataFrame:
    """A run partition already holding whole questions, with its order key."""
    j = partition_info["number"] if partition_info else 0
    src = df.reset_index() if df.index.name == "query_id" else df
    out = src[[c for c in RUN_COLUMNS if c in src.columns]].copy()
    out["_row"] = np.int64(j) * ROW_STRIDE + np.arange(len(df), dtype=np.int64)
    return out


def _systems_in_part(system: pd.Series) -> list:
    """The systems of a run partition in first-appearance order (ids as strings)."""
    return list(pd.unique(ids_to_str(system).to_numpy(dtype=object)))


def _systems_in_order(parts: list[list]) -> list:
    """Systems of the whole run in first-appearance order, from its partitions' lists."""
    return list(pd.unique(np.array([s for p in parts for s in p] or [None], dtype=object)))


# ---------------------------------------------------------------- one partition
def _evaluate_rows(run: pd.DataFrame, qrels: pd.DataFrame, plan: Plan) -> PartResult:
    """:func:`~evalframe.engine.partition.evaluate_part` on a partition of shuffled rows:
    put back in their original order (``_row``), the shuffle's columns dropped."""
    if "_row" in run.columns:
        run = run.iloc[np.argsort(run["_row"].to_numpy(), kind="stable")]
    run = run.drop(columns=[c for c in ("_row", "_bucket") if c in run.columns]).reset_index(drop=True)
    if "_row" in qrels.columns:
        qrels = qrels.iloc[np.argsort(qrels["_row"].to_numpy(), kind="stable")]
    qrels_rows = qrels["_row"].to_numpy() if "_row" in qrels.columns else None
    qrels = qrels.drop(columns=[c for c in ("_bucket", "_row") if c in qrels.columns])
    return evaluate_part(run, qrels, plan, qrels_rows=qrels_rows)


def _qrels_piece(qrels: pd.DataFrame, starts: np.ndarray, i: int) -> pd.DataFrame:
    return qrels.iloc[int(starts[i]):int(starts[i + 1])]


def _task(run_part, qrels_part, systems, plan: Plan) -> PartResult:
    return _evaluate_rows(run_part, qrels_part, plan.but(systems=systems))


def _broadcast_task(run_part, qrels, starts, i, systems, plan: Plan) -> PartResult:
    return _evaluate_rows(run_part, _qrels_piece(qrels, starts, i), plan.but(systems=systems))


def _summary(part: PartResult) -> PartResult:
    return part.summary()


def _table(part: PartResult) -> pd.DataFrame:
    return part.table


# ---------------------------------------------------------------- partitions evaluated in place
def _in_place_task(df: pd.DataFrame, held: GoldenIndex, plan: Plan, systems: list | None = None) -> PartResult:
    """Evaluate a run partition where it is, as if it held whole questions, with the golden
    rows of its questions; its ``extra`` holds what the client checks that on: the partition's
    question fingerprints (``fingerprints``, distinct, sorted), its golden questions
    (``golden_questions``, positions in ``held.ids``), its systems in first-appearance
    order (``systems``: when ``systems`` is None they are the ones it is evaluated with)
    and its columns (``empty``, no row)."""
    run = df.reset_index() if df.index.name == "query_id" else df
    run = run[[c for c in RUN_COLUMNS if c in run.columns]]
    ids = pd.unique(ids_to_str(run["query_id"]))
    found = held.lookup(ids)
    questions = np.sort(found[found >= 0])
    own = _systems_in_part(run["system"]) if "system" in run.columns else [None]
    out = _evaluate_rows(run, held.rows(questions), plan.but(systems=own if systems is None else systems))
    out.extra.update(fingerprints=np.unique(question_fingerprints(pd.Series(ids))), golden_questions=questions,
                     systems=own, empty=run.iloc[:0])
    return out


def _orphan_task(empty: pd.DataFrame, held: GoldenIndex, questions: np.ndarray, systems: list, plan: Plan) -> PartResult:
    """Evaluate the golden questions ``questions`` that no run partition holds (no system
    answers them) with every system of the run."""
    return _evaluate_rows(empty, held.rows(questions), plan.but(systems=systems))


#: The in-place results are checked as they arrive, and the evaluation stopped at the first
#: question found in two partitions, while at most this many have arrived (then once all have).
EARLY_CHECKS = 64


def _shared_question(fingerprints: list[np.ndarray]) -> bool:
    """Whether some question fingerprint is in two of the partitions' (distinct) lists."""
    every = np.sort(np.concatenate(fingerprints)) if fingerprints else np.zeros(0, np.uint64)
    return bool((every[1:] == every[:-1]).any())


def _distributed_client():
    """The ``dask.distributed`` client Dask computes on, or None (another scheduler)."""
    import dask
    owner = getattr(dask.base.get_scheduler(), "__self__", None)
    return owner if type(owner).__name__ == "Client" and hasattr(owner, "cancel") else None


def _summaries_unless_shared(parts: list) -> list[PartResult] | None:
    """The summaries of the in-place results ``parts``, or None when a question has rows in
    two partitions.  On a distributed client the summaries are checked as they arrive, and
    at the first question found twice the evaluation still to run is cancelled (a run that
    must be shuffled loses about one task per worker, not a whole pass)."""
    import dask
    tasks = [dask.delayed(_summary)(p) for p in parts]
    client = _distributed_client()
    if client is None:
        summaries = list(dask.compute(*tasks))
    else:
        from distributed import as_completed, futures_of
        futures = client.compute(tasks)
        got: dict = {}
        for batch in as_completed(futures, with_results=True).batches():
            got.update((f.key, r) for f, r in batch)
            if len(got) <= EARLY_CHECKS and len(got) < len(futures) and _shared_question(
                    [r.extra["fingerprints"] for r in got.values()]):
                client.cancel(futures + futures_of(parts))
                return None
        summaries = [got[f.key] for f in futures]
    return None if _shared_question([s.extra["fingerprints"] for s in summaries]) else summaries


def _evaluate_in_place(run, golden: pd.DataFrame, plan) -> "tuple[list, list, list] | None":
    """Evaluate each partition of ``run`` where it is, its questions taken as whole (one
    task per partition, which reads it once), then check that on the results: when no
    question has rows in two partitions, the persisted results, their summaries and the
    run's systems; else None (the run must be shuffled; the results are dropped).

    A partition without some system of the run is evaluated again knowing them all, and
    the golden questions no partition holds are evaluated in one more task."""
    import dask
    lookup = GoldenIndex(golden)
    held = dask.delayed(lookup, pure=False)  # a key of its own: hashing the golden set to name it costs more
    wanted = [c for c in RUN_COLUMNS if c in run.columns]
    pieces = (run[wanted] if len(wanted) < len(run.columns) else run).to_delayed()  # read only those
    parts = list(dask.persist(*[dask.delayed(_in_place_task)(p, held, plan) for p in pieces]))
    summaries = _summaries_unless_shared(parts)
    if summaries is None:  # a question in two partitions
        return None
    systems = _systems_in_order([s.extra["systems"] for s in summaries])
    again = {i: dask.delayed(_in_place_task)(pieces[i], held, plan, systems)
             for i, s in enumerate(summaries) if len(s.extra["systems"]) < len(systems)}
    held_questions = np.concatenate([s.extra["golden_questions"] for s in summaries])
    orphans = np.setdiff1d(np.arange(len(lookup)), held_questions)
    if len(orphans):
        again[len(parts)] = dask.delayed(_orphan_task)(summaries[0].extra["empty"], held, orphans, systems, plan)
    if again:
        redone = dask.persist(*again.values())
        for i, p, s in zip(again, redone, dask.compute(*[dask.delayed(_summary)(p) for p in redone])):
            if i < len(parts):
                parts[i], summaries[i] = p, s
            else:
                parts.append(p)
                summaries.append(s)
    return parts, summaries, systems


# ---------------------------------------------------------------- the whole run
def _check_columns(run) -> None:
    missing = [c for c in ("query_id", "doc_id", "score")
               if c not in run.columns and not (c == "query_id" and run.index.name == "query_id")]
    if missing:
        found = list(run.columns) + ([f"{run.index.name} (the index)"] if run.index.name else [])
        raise EvalframeInputError("run", [InputProblem(
            f"missing columns {missing} (found {found})",
            "a Dask run needs the columns query_id, doc_id, score (and system, for several systems); "
            "rename them first (ddf.rename(columns={...}))")])


def _golden_set(qrels, columns, conflicts):
    """The golden set checked (and its conflicts resolved) on the client, as pandas with
    its :class:`~evalframe.schema.ResolvedConflicts` (or None); or a Dask table of
    several partitions (columns renamed), resolved per partition after the shuffle."""
    if is_dask_frame(qrels):
        if qrels.npartitions > 1:
            return _renamed(qrels, columns), None
        qrels = qrels.compute()
    return held_golden_set(qrels, columns, conflicts)


def _renamed(frame, columns):
    """A Dask table with ``columns`` (``{your name: canonical name}``) applied, as the
    in-memory readers apply it (names the table does not have are left alone)."""
    if not columns:
        return frame
    mapping = {k: v for k, v in columns.items() if k in frame.columns}
    if mapping:
        frame = frame.rename(columns=mapping)
    if frame.index.name in columns:
        frame = frame.rename_axis(columns[frame.index.name])
    return frame


def _split_part(df: pd.DataFrame, columns, which: int) -> pd.DataFrame:
    from ..canonical import apply_columns
    from ..spans import split_run_offsets
    return split_run_offsets(apply_columns(df, columns))[which]


def split_offsets(run, columns=None) -> "tuple[dd.DataFrame, pd.DataFrame]":  # noqa: F821
    """A Dask run whose rows carry chunk offsets, as ``split_run_offsets``
    splits one in memory: the run with each row's chunk id as ``doc_id`` (partition by
    partition), and the distinct rows of its chunk table (one pass, collected)."""
    table = run.map_partitions(_split_part, columns, 1, meta=_split_part(run._meta, columns, 1))
    rest = run.map_partitions(_split_part, columns, 0, meta=_split_part(run._meta, columns, 0))
    return rest, table.drop_duplicates().compute().reset_index(drop=True)


def _page_map(run, column: str):
    """The run without its page column ``column``, and the chunk -> page map of the
    whole run (from its distinct (chunk, page) pairs), as :func:`evalframe.rollup.rollup_column`."""
    rest_meta, _ = rollup_column(run._meta, column)  # the in-memory call's errors
    chunk = [c for c in run.columns if c != column and c not in rest_meta.columns] or ["doc_id"]
    pairs = run[[chunk[0], column]].drop_duplicates().compute()
    _, mapping = rollup_column(pairs, column)
    rest = run.drop(columns=[column])
    return (rest.rename(columns={chunk[0]: "doc_id"}) if chunk[0] != "doc_id" else rest), mapping


def _qrels_part(df: pd.DataFrame, n_buckets: int, divisions, owners=None, partition_info=None) -> pd.DataFrame:
    """A golden-set partition with each row's bucket (the run partition its question is
    evaluated in) and order key."""
    j = partition_info["number"] if partition_info else 0
    out = df.copy()
    if owners is not None:
        out["_bucket"] = owner_buckets(df["query_id"], owners, n_buckets)
    elif divisions is None:
        out["_bucket"] = question_buckets(df["query_id"], n_buckets)
    else:
        out["_bucket"] = division_buckets(df["query_id"], divisions)
    out["_row"] = np.int64(j) * ROW_STRIDE + np.arange(len(df), dtype=np.int64)
    return out


def evaluate_dask(run, qrels, ms: list[Measure], conv: Conventions = DEFAULT, *, warn: bool = True,
                  rollup: Rollup | None = None,
                  shallow: list[Measure] | None = None, chunkings: Chunkings | None = None,
                  unjudged: str | None = None) -> tuple["dd.DataFrame", pd.DataFrame]:  # noqa: F821
    """Per-question table (a Dask DataFrame, computed and kept on the workers) and
    diagnostics table of a Dask run (see the module docstring).

    Parameters
    ----------
    run : dask.dataframe.DataFrame, path of a Parquet dataset, or pandas DataFrame
        Columns ``query_id, doc_id, score`` (``[system]``, ``[rank]``), or ``query_id``
        as the index (with known divisions: the run is then not shuffled).
    qrels : DataFrame, path, dict, or dask.dataframe.DataFrame
        The golden set.
    ms : list of Measure
        Resolved measures.
    conv, rollup
        The conventions (:class:`~evalframe.engine.conventions.Conventions`), sent with every task, and
        :func:`evalframe.evaluate`'s ``rollup``.  ``conv.columns`` renames both tables' columns
        before the shuffle; ``conv.conflicts`` is resolved once on the client for a golden set held
        there, else per partition after the shuffle (partitions hold whole questions);
        ``rollup`` (a chunk -> page table or dict sent once to every worker, or a run
        column, whose map is read from the run's distinct (chunk, page) pairs first) is
        applied per question inside each partition.
    warn : bool
        Issue the warnings of the merged diagnostics.
    shallow : list of Measure, optional
        The measures whose deepest cutoff the rankings are checked against (default: ``ms``).
    unjudged : {None, "nonrelevant", "relevant", "bounds"}
        As :func:`evalframe.evaluate` (the bounds computed in each partition).
    chunkings : Chunkings, optional
        ``chunks=`` and a span golden set resolved on the client
        (:func:`evalframe.engine.chunkings.resolve_chunkings`), sent once to every worker: each
        partition judges its chunkings on the labels they get from its questions' spans
        (``qrels`` is then unused: the spans are the golden set).

    Returns
    -------
    (dask.dataframe.DataFrame, DataFrame)
        ``[system,] query_id, measure, value``, one partition per run partition or bucket
        (and one for golden questions no run partition holds, when evaluated in place); and
        ``system, check, count, action, examples``.
    """
    import dask
    import dask.dataframe as dd

    if isinstance(run, pd.DataFrame):  # engine="dask" on a pandas run: partitions of 10^6 rows
        run = dd.from_pandas(run, chunksize=1_000_000)
    run = run if is_dask_frame(run) else read_dataset(run)
    mapping = None
    if isinstance(rollup, str):
        run, mapping = _page_map(run, rollup)
    elif rollup is not None:
        mapping = rollup_map(rollup)
    columns, conflicts = conv.columns, conv.conflicts
    run = _renamed(run, columns)
    if "score" not in run.columns and "rank" in run.columns:  # rank only: ordered by rank, as in memory
        rank = run["rank"].astype("float64")  # (ascending: the partitions' check negates the scores)
        run = run.assign(score=rank if conv.ascending else -rank)
    _check_columns(run)
    if chunkings is not None and chunkings.spans is not None:  # the spans are the golden set
        golden, resolved = chunkings.spans, None
    else:
        golden, resolved = _golden_set(qrels, columns, conflicts)
        if chunkings is not None and is_dask_frame(golden):
            golden, resolved = _golden_set(golden.compute(), None, conflicts)  # held whole beside the chunk tables
    if chunkings is not None:  # the run's systems' chunkings, checked on the client (one pass over system)
        systems = [None] if "system" not in run.columns else _systems_in_order(
            list(dask.compute(*[dask.delayed(_systems_in_part)(s) for s in run["system"].to_delayed()])))
        chunkings = chunkings.for_systems(systems)
    # measures registered here travel with the tasks, registered on each worker; the systems are
    # each task's (known once the partitions are read)
    plan = Plan(shipped(ms), conv.but(columns=None, conflicts=conflicts if resolved is None and is_dask_frame(golden)
                                      else "error"), [None], None if shallow is None else shipped(shallow),
                chunkings, unjudged, mapping)
    sent = dask.delayed(plan, pure=False)  # sent once: the chunk tables and the page map can be large
    divisions = _by_question_divisions(run)
    if divisions is None and run.index.name == "query_id":  # an index without known divisions: a column again
        run = run.reset_index()
    P = run.npartitions
    done = None
    if not is_dask_frame(golden):  # each partition evaluated where it is, the check folded in
        done = _evaluate_in_place(run, golden, sent)
    if done is not None:
        parts, summaries, systems = done
    else:
        parts, summaries, systems = _evaluate_moved(run, golden, P, divisions, sent)
    records = finish(
        summaries, plan.but(systems=systems), resolved=resolved, warn=warn,
        judged_elsewhere=lambda flagged, judged: _judged_elsewhere(flagged, run, golden, judged),
        run_docs=lambda value_set: dask.compute(*[dask.delayed(doc_summary)(p, value_set)
                                                  for p in run["doc_id"].to_delayed()]),
        golden_docs=(lambda: golden["doc_id"].compute()) if is_dask_frame(golden) else golden["doc_id"])
    meta = summaries[0].table  # the table's columns, no row
    with dask.config.set({"dataframe.convert-string": False}):
        table = dd.from_delayed([dask.delayed(_table)(p) for p in parts], meta=meta, verify_meta=False)
    return table, diagnostics_table(records)


def _evaluate_moved(run, golden, P: int, divisions, plan) -> tuple[list, list, list]:
    """Evaluate ``run`` with its rows moved to the partitions of their questions (shuffled,
    or, for a Dask golden set, the golden set moved onto a run partitioned by question):
    the persisted results, their summaries and the run's systems."""
    import dask
    owners = None
    if divisions is not None:
        keyed = run.map_partitions(_ordered_part, meta=_ordered_part(run._meta))
    else:
        if P > 1 and is_dask_frame(golden):  # partitions of whole questions: the golden set is moved to them
            owners = _disjoint_partitions(run)
        if owners is not None:
            keyed = run.map_partitions(_ordered_part, meta=_ordered_part(run._meta))
        else:
            keyed = run.map_partitions(_keyed_part, P, meta=_keyed_part(run._meta, P))
            keyed = keyed.set_index("_bucket", divisions=list(range(P + 1)), sort=True)
    systems = [None]
    if "system" in keyed.columns:
        systems = dask.delayed(_systems_in_order)(
            [dask.delayed(_systems_in_part)(s) for s in run["system"].to_delayed()])

    if is_dask_frame(golden):
        gq = golden.map_partitions(_qrels_part, P, divisions, owners, meta=_qrels_part(golden._meta, P, divisions))
        gq = gq.set_index("_bucket", divisions=list(range(P + 1)), sort=True)
        tasks = [dask.delayed(_task)(r, q, systems, plan)
                 for r, q in zip(keyed.to_delayed(), gq.to_delayed())]
    else:
        buckets = (question_buckets(golden["query_id"], P) if divisions is None
                   else division_buckets(golden["query_id"], divisions))
        order = np.argsort(buckets, kind="stable")
        starts = np.searchsorted(buckets[order], np.arange(P + 1))
        shared = dask.delayed(golden.iloc[order].reset_index(drop=True), pure=False)
        tasks = [dask.delayed(_broadcast_task)(r, shared, starts, i, systems, plan)
                 for i, r in enumerate(keyed.to_delayed())]
    parts = list(dask.persist(*tasks))
    summaries, systems = dask.compute([dask.delayed(_summary)(p) for p in parts], systems)
    return parts, list(summaries), systems


def _judged_elsewhere(flagged: list, run, golden, judged: pd.Index | None = None) -> set:
    """The ``flagged`` systems (merged ``system_without_judged_documents`` records) one of
    whose documents the golden set judges for a question of another partition (a
    partition sees only its questions' labels; the in-memory engine checks the whole
    golden set): one pass over the run's partitions.  ``judged``: the documents judged
    (default: the golden set's; a span golden set's: the chunks its labels judge)."""
    import dask
    cols = ["query_id", "doc_id"]
    docs = golden[cols].compute() if is_dask_frame(golden) else golden[cols]
    questions = id_set(ids_to_str(docs["query_id"]).unique())
    docs = id_set(ids_to_str(docs["doc_id"]).unique() if judged is None else judged)
    return set().union(*dask.compute(*[dask.delayed(systems_judged)(p, flagged, questions, docs)
                                       for p in run.to_delayed()]))


def _partial_aggregates(df: pd.DataFrame, keys: list[str], aggs: dict) -> pd.DataFrame:
    """One row per group of a partition: its keys, n, and the partial states of its
    mean and of its measure's own aggregation."""
    values = df["value"].to_numpy(dtype=np.float64)
    if not np.isfinite(values).all():
        raise EvalframeInputError("per-question table", [InputProblem(
            f"{int((~np.isfinite(values)).sum())} values are NaN or infinite and cannot be aggregated",
            "find where they come from and fix or drop those rows")])
    g = df.groupby(keys, sort=False, observed=True, dropna=False)
    codes = g.ngroup().to_numpy()
    out = g.size().reset_index(name="n")
    G = len(out)
    total, count = _MEAN.partial(values, codes, G)
    own_total, own_count = total.copy(), count.copy()
    agg_of_group = out["measure"].map(aggs).to_numpy(dtype=object)
    for how in {a for a in aggs.values() if a != _MEAN}:
        rows = agg_of_group[codes] == how
        sel = agg_of_group == how
        t, c = how.partial(values[rows], codes[rows], G)
        own_total[sel], own_count[sel] = t[sel], c[sel]
    return out.assign(total=total, count=count, own_total=own_total, own_count=own_count)


_MEAN = Mean()


def aggregate_dask(per_question, by: list[str], aggs: dict[str, Aggregation]) -> pd.DataFrame:
    """:func:`evalframe.aggregate` of a Dask per-question table: per-partition states
    (``Aggregation.partial``) combined in partition order (``combine``) and finalised.

    Equal to ``aggregate(per_question.compute())`` up to the order of the additions."""
    import dask
    keys = (["system"] if "system" in per_question.columns else []) + by + ["measure"]
    parts = dask.compute(*[dask.delayed(_partial_aggregates)(p, keys, aggs)
                           for p in per_question.to_delayed()])
    allp = pd.concat(parts, ignore_index=True)
    glob = allp.groupby(keys, sort=False, observed=True, dropna=False)
    codes = glob.ngroup().to_numpy()
    out = glob.size().reset_index(name="n")  # groups in order of first appearance
    G = len(out)
    bounds = np.cumsum([0] + [len(p) for p in parts])

    def states(total: str, count: str) -> list:
        res = []
        for a, b in zip(bounds[:-1], bounds[1:]):
            t, c = np.zeros(G), np.zeros(G)
            t[codes[a:b]], c[codes[a:b]] = allp[total].to_numpy()[a:b], allp[count].to_numpy()[a:b]
            res.append((t, c))
        return res

    agg_of_group = out["measure"].map(aggs).to_numpy(dtype=object)
    n = np.zeros(G, np.int64)
    np.add.at(n, codes, allp["n"].to_numpy(dtype=np.int64))
    mean = _MEAN.finalize(_MEAN.combine(states("total", "count")))
    value = mean.copy()
    own = states("own_total", "own_count")
    for how in {a for a in aggs.values() if a != _MEAN}:
        sel = agg_of_group == how
        value[sel] = how.finalize(how.combine(own))[sel]
    out["n"] = n
    out["mean"] = mean
    out["value"] = value
    out["aggregation"] = [a.name for a in agg_of_group]
    return out
