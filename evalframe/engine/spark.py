"""The Spark engine: :func:`evalframe.evaluate` on a ``pyspark.sql.DataFrame`` run.

Each row is given the bucket of its question (:func:`~evalframe.engine.cutting.question_buckets`,
the hash every engine uses), ``groupBy(bucket).applyInArrow`` evaluates each bucket of whole
questions with :func:`~evalframe.engine.partition.evaluate_part` (the golden set broadcast
once), and the buckets' summaries, gathered on the driver, are merged
(:func:`~evalframe.engine.partition.merge`).  See the user guide's "How the engines work".
"""
from __future__ import annotations


import numpy as np
import pandas as pd
import pyarrow as pa

from ..errors import EvalframeInputError, InputProblem
from ..measures import Measure
from ..measures.custom import shipped
from .._diagnostic_checks import id_set, systems_judged
from .._diagnostic_records import diagnostics_table
from ..schema import ids_to_str
from .conventions import DEFAULT, Conventions
from .chunkings import Chunkings
from .foreign import doc_summary
from .cutting import question_buckets
from .partition import GoldenIndex, PartResult, Plan, evaluate_part, finish, held_golden_set

#: Columns of a run the engine reads (the others are left out of the shuffle).
SPARK_RUN_COLUMNS = ("system", "query_id", "doc_id", "score", "rank", "tokens")
_BUCKET, _ROW, _SUMMARY = "_evalframe_bucket", "_evalframe_row", "_evalframe_summary"


def is_spark_frame(obj) -> bool:
    """Whether ``obj`` is a ``pyspark.sql.DataFrame`` (classic or Spark Connect), told
    without importing pyspark."""
    return type(obj).__module__.startswith("pyspark.sql") and type(obj).__name__ == "DataFrame"


def _with_bucket(n: int):
    def add(batches):
        for b in batches:
            ids = pa.array(ids_to_str(b.column(b.schema.get_field_index("query_id")).to_pandas()), pa.large_string())
            yield b.append_column(_BUCKET, pa.array(question_buckets(ids, n), pa.int64()))
    return add


#: Plans unpickled in this (worker) process, by broadcast id: once per process, not per bucket.
_PLANS: dict = {}


def _plan(plan):
    """A broadcast plan ``(token, broadcast)``, pickled with cloudpickle (a measure registered
    on the driver is a closure plain pickle refuses), unpickled once per process."""
    token, broadcast = plan
    if token not in _PLANS:
        from pyspark import cloudpickle
        _PLANS.clear()  # one evaluation's plan at a time
        _PLANS[token] = cloudpickle.loads(broadcast.value)
    return _PLANS[token]


def _broadcast(spark, value):
    import uuid
    from pyspark import cloudpickle
    return uuid.uuid4().hex, spark.sparkContext.broadcast(cloudpickle.dumps(value))


def arrow_bytes(table: pa.Table) -> bytes:
    """``table`` as Arrow IPC stream bytes (what a task's summary row carries to the driver)."""
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue().to_pybytes()


def _evaluate_bucket(plan):
    """The task run on each bucket: its rows in the run's order, its questions' golden rows."""
    def task(table: pa.Table) -> pa.Table:
        from .. import _arrow_compute as pc
        held, golden_bucket, part_plan, schema = _plan(plan)
        b = table.column(_BUCKET)[0].as_py()
        table = table.take(pc.sort_indices(table, [(_ROW, "ascending")]))
        run = table.drop_columns([_BUCKET, _ROW]).to_pandas()
        res = evaluate_part(run, held.rows(np.flatnonzero(golden_bucket == b)), part_plan)
        res.extra["bucket"] = b
        out = pa.Table.from_pandas(res.table, preserve_index=False)
        out = pa.table({f.name: out.column(f.name).cast(f.type) for f in schema if f.name != _SUMMARY}
                       | {_SUMMARY: pa.nulls(out.num_rows, pa.binary())})
        tail = pa.table({f.name: pa.array([arrow_bytes(res.summary().to_arrow())] if f.name == _SUMMARY else [None],
                                          f.type) for f in schema})
        return pa.concat_tables([out, tail])
    return task


def _split(columns, which: int, target: pa.Schema):
    def split(batches):
        from ..canonical import apply_columns
        from ..spans import split_run_offsets
        for b in batches:
            part = split_run_offsets(apply_columns(b.to_pandas(), columns))[which]
            yield pa.RecordBatch.from_pandas(part, preserve_index=False).select(target.names).cast(target)
    return split


def split_offsets(run, columns=None):
    """A Spark run whose rows carry chunk offsets, as ``split_run_offsets``
    splits one in memory: the run with each row's chunk id as ``doc_id``, and the distinct
    rows of its chunk table (one pass, collected on the driver)."""
    from ..canonical import apply_columns
    from ..spans import split_run_offsets
    rest, table = split_run_offsets(apply_columns(run.limit(0).toPandas(), columns))
    rest_schema, table_schema = _schema_of(rest), _schema_of(table)
    chunks = run.mapInArrow(_split(columns, 1, _arrow(table_schema)), table_schema).distinct().toPandas()
    return run.mapInArrow(_split(columns, 0, _arrow(rest_schema)), rest_schema), chunks


def _arrow(schema) -> pa.Schema:
    from pyspark.sql.types import DoubleType, LongType
    return pa.schema([(f.name, pa.float64() if isinstance(f.dataType, DoubleType) else pa.int64()
                       if isinstance(f.dataType, LongType) else pa.string()) for f in schema.fields])


def _schema_of(frame: pd.DataFrame):
    """The Spark schema of a pandas frame (doubles, longs, strings)."""
    from pyspark.sql.types import DoubleType, LongType, StringType, StructField, StructType
    return StructType([StructField(c, DoubleType() if frame[c].dtype.kind == "f" else LongType()
                                   if frame[c].dtype.kind in "iu" else StringType()) for c in frame.columns])


def _judged_systems(plan):
    def task(batches):
        flagged, questions, docs = _plan(plan)
        for b in batches:
            found = systems_judged(b.to_pandas(), flagged, questions, docs)
            yield pa.record_batch({"system": pa.array([str(s) for s in found], pa.string())})
    return task


def evaluate_spark(run, qrels, ms: list[Measure], conv: Conventions = DEFAULT, *, warn: bool = True, rollup=None,
                   shallow: list[Measure] | None = None, chunkings: Chunkings | None = None,
                   buckets: int | None = None, unjudged: str | None = None):
    """Per-question table (a Spark DataFrame, persisted) and diagnostics table (pandas) of a
    Spark run: the in-memory call's values, bit for bit, and its diagnostics and warnings.

    ``qrels``: a golden set held on the driver (pandas, a path, Arrow) or a Spark DataFrame
    (collected: a golden set is small beside its runs); ``buckets``: how many groups of whole
    questions (default ``spark.sql.shuffle.partitions``); ``rollup``: a chunk -> page table or
    dict; the rest as :func:`evalframe.evaluate`.  The table's rows are in no order (sort by
    ``system, query_id, measure`` to compare); ``.toPandas()`` brings it to the driver."""
    from pyspark.sql import functions as F
    from ..rollup import rollup_map
    spark = run.sparkSession
    columns, conflicts = conv.columns, conv.conflicts
    if columns:
        run = run.withColumnsRenamed({k: v for k, v in columns.items() if k in run.columns})
    if "score" not in run.columns and "rank" in run.columns:  # rank only: ordered by rank, as in memory
        rank = F.col("rank").cast("double")  # (ascending: the partitions' check negates the scores)
        run = run.withColumn("score", rank if conv.ascending else -rank)
    lacking = [c for c in ("query_id", "doc_id", "score") if c not in run.columns]
    if lacking:
        raise EvalframeInputError("run", [InputProblem(
            f"missing columns {lacking} (found {run.columns})",
            "a Spark run needs the columns query_id, doc_id, score (and system, for several systems); rename "
            "them first (df.withColumnsRenamed({...})) or pass columns=")])
    if isinstance(rollup, str):
        raise ValueError(f"evaluate: on Spark, rollup must be a chunk -> page table or dict, got the run column "
                         f"{rollup!r}; pass the table of its distinct (chunk, page) pairs")
    run = run.select(*[c for c in SPARK_RUN_COLUMNS if c in run.columns]).withColumn(
        _ROW, F.monotonically_increasing_id())  # the run's order: duplicates="first" keeps the same row
    resolved = None
    if chunkings is not None and chunkings.spans is not None:
        golden = chunkings.spans
    else:
        golden, resolved = held_golden_set(qrels.toPandas() if is_spark_frame(qrels) else qrels, columns, conflicts)
    has_system = "system" in run.columns
    systems = [None]
    if has_system:
        run = run.withColumn("system", F.col("system").cast("string"))
        first = run.groupBy("system").agg(F.min(_ROW).alias("at")).orderBy("at").collect()
        systems = [r["system"] for r in first]
    if chunkings is not None:  # the run's systems' chunkings, checked on the driver
        chunkings = chunkings.for_systems(systems)
    n = buckets or int(spark.conf.get("spark.sql.shuffle.partitions"))
    held = GoldenIndex(golden)
    golden_bucket = question_buckets(pd.Series(held.ids, dtype=object), n)
    part_plan = Plan(shipped(ms), conv.but(columns=None, conflicts="error"), systems,  # resolved on the driver
                     None if shallow is None else shipped(shallow), chunkings, unjudged,
                     None if rollup is None else rollup_map(rollup))
    names = ([("system", pa.string())] if has_system else []) + [("query_id", pa.string())] + (
        [("unit", pa.string())] if rollup is not None else []) + [("measure", pa.string()), ("value", pa.float64())] + (
        [("value_low", pa.float64()), ("value_high", pa.float64())] if unjudged == "bounds" else []) + [
        (_SUMMARY, pa.binary())]
    schema = pa.schema(names)
    plan = _broadcast(spark, (held, golden_bucket, part_plan, schema))
    keyed = run.mapInArrow(_with_bucket(n), _spark_schema(run.schema))
    ddl = ", ".join(f"{name} {'double' if t == pa.float64() else 'binary' if t == pa.binary() else 'string'}"
                    for name, t in names)
    result = keyed.groupBy(_BUCKET).applyInArrow(_evaluate_bucket(plan), ddl).persist()
    summaries = [PartResult.from_arrow(pa.ipc.open_stream(r[0]).read_all())
                 for r in result.filter(F.col(_SUMMARY).isNotNull()).select(_SUMMARY).collect()]
    table = result.filter(F.col(_SUMMARY).isNull()).drop(_SUMMARY)
    seen = np.array([s.extra["bucket"] for s in summaries], dtype=np.int64)
    orphans = np.flatnonzero(~np.isin(golden_bucket, seen))  # golden questions of buckets without a run row
    if len(orphans) or not summaries:
        empty = pd.DataFrame({c: pd.Series(dtype=np.float64 if c in ("score", "rank") else object)
                              for c in ("system", "query_id", "doc_id", "score", "rank")
                              if (c != "system" or has_system) and (c != "rank" or "rank" in run.columns)})
        rest = evaluate_part(empty, held.rows(orphans), part_plan)
        summaries.append(rest.summary())
        if len(rest.groups):
            table = table.unionByName(spark.createDataFrame(rest.table, schema=table.schema))

    def run_docs(value_set):
        found = run.select("doc_id", _ROW).mapInArrow(_doc_summaries(_broadcast(spark, value_set)),
                                                      "hit boolean, first array<string>, at long").collect()
        return [(r["hit"], list(r["first"])) for r in sorted(found, key=lambda r: r["at"])]
    records = finish(summaries, part_plan, resolved=resolved, warn=warn, golden_docs=golden["doc_id"], run_docs=run_docs,
                     judged_elsewhere=lambda flagged, judged: _judged_elsewhere(run, flagged, golden, judged, spark))
    return table, diagnostics_table(records)


def _doc_summaries(plan):
    def task(batches):
        from .. import _arrow_compute as pc
        value_set = _plan(plan)
        for b in batches:
            if b.num_rows:
                hit, first = doc_summary(b.column(0).to_pandas(), value_set)
                yield pa.record_batch({"hit": [hit], "first": pa.array([first], pa.list_(pa.string())),
                                       "at": [pc.min(b.column(1)).as_py()]})
    return task


def _spark_schema(schema):
    from pyspark.sql.types import LongType, StructField, StructType
    return StructType(list(schema.fields) + [StructField(_BUCKET, LongType(), False)])


def _judged_elsewhere(run, flagged: list, golden: pd.DataFrame, judged: pd.Index | None, spark) -> set:
    """The ``flagged`` systems that retrieve, for a golden-set question, a document the
    golden set judges for some question (``judged``: those documents, when not the golden
    set's): one pass over the run (a partition sees only its questions' labels)."""
    questions = id_set(ids_to_str(golden["query_id"]).unique())
    docs = id_set(ids_to_str(golden["doc_id"]).unique() if judged is None else judged)
    plan = _broadcast(spark, (flagged, questions, docs))
    cols = [c for c in ("system", "query_id", "doc_id") if c in run.columns]
    found = run.select(*cols).mapInArrow(_judged_systems(plan), "system string").distinct().collect()
    names = {r["system"] for r in found}
    return {s for s in flagged if (str(s) if s is not None else "None") in names}
