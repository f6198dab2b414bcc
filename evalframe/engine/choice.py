"""Which engine evaluates a run: decided once, from the run's kind and size, by
:func:`choose` (:func:`evalframe.evaluate`, :func:`evalframe.diagnostics`,
:func:`evalframe.report` and the commands all ask it)."""
from __future__ import annotations

import glob as _glob
import os
import sys
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Literal, Mapping

from .._validation import Options, check, error
from ..errors import EvalframeInputError, InputProblem
from . import budget as sizing
from .spark import is_spark_frame

if TYPE_CHECKING:  # pragma: no cover - imported where used (slow to import)
    import pyarrow.dataset as pads

def is_dask_frame(obj) -> bool:
    """True for a ``dask.dataframe`` DataFrame (checked without importing dask)."""
    return type(obj).__module__.split(".")[0] in ("dask", "dask_expr") and hasattr(obj, "npartitions")


def is_dataset_source(source) -> bool:
    """True for what the streaming engine reads: a :class:`pyarrow.dataset.Dataset`,
    a directory, a glob pattern, or a path ending in ``.parquet`` / ``.pq``; or a dict
    ``{system name: one of those}`` (a system per dataset)."""
    if isinstance(source, Mapping):
        return bool(source) and all(is_dataset_source(v) and not isinstance(v, Mapping)
                                    for v in source.values())
    if _is_dataset(source):
        return True
    if not isinstance(source, (str, os.PathLike)):
        return False
    text = os.fsdecode(os.fspath(source))
    if os.path.isdir(text):
        return True
    if not os.path.exists(text) and any(c in text for c in "*?["):
        return True
    return text.lower().endswith((".parquet", ".pq")) and os.path.isfile(text)


def _is_dataset(source) -> bool:
    """Whether ``source`` is a :class:`pyarrow.dataset.Dataset` (pyarrow.dataset, slow to
    import, is imported only when used: a Dataset exists only once it was)."""
    dataset = getattr(sys.modules.get("pyarrow.dataset"), "Dataset", None)  # (None while being imported)
    return dataset is not None and isinstance(source, dataset)


def open_run_dataset(source, what: str = "run") -> pads.Dataset:
    """The :class:`pyarrow.dataset.Dataset` of a Parquet file, directory or glob (files in
    sorted order), or the dataset itself."""
    import pyarrow.dataset as pads
    if isinstance(source, pads.Dataset):
        return source
    text = os.fsdecode(os.fspath(source))
    if os.path.isdir(text) or os.path.isfile(text):
        dataset = pads.dataset(text, format="parquet")
        if not dataset.files:
            raise EvalframeInputError(what, [InputProblem(
                f"{text!r} is a directory with no file in it",
                "pass a run file, or a directory of Parquet files (a dataset)")])
        return dataset
    files = sorted(_glob.glob(text, recursive=True))
    if not files:
        raise EvalframeInputError(what, [InputProblem(f"no file matches {text!r}",
                                                      "check the pattern (e.g. 'runs/*.parquet')")])
    return pads.dataset(files, format="parquet")


def _text_runs(run) -> list | None:
    """The TREC text run files ``run`` names (a path, or a dict of system name -> a path or
    a Parquet dataset, at least one a text file), else None."""
    from .text_blocks import is_text_run
    if isinstance(run, Mapping):
        if not run or not all(is_text_run(v) or is_dataset_source(v) and not isinstance(v, Mapping)
                              for v in run.values()):
            return None
        texts = [v for v in run.values() if is_text_run(v)]
        return texts or None
    return [run] if is_text_run(run) else None


#: The names ``engine=`` accepts.
ENGINES = ("auto", "memory", "dask", "spark")


@dataclass(frozen=True)
class Choice:
    """The engine chosen for one run.

    Attributes
    ----------
    name : ``"memory"`` (a table, or a file that fits the budget: held whole),
        ``"streaming"`` (a Parquet dataset, or a TREC text run file larger than the budget:
        evaluated in parts by :mod:`evalframe.engine.streaming`, which reads it whole when it and
        the golden set fit), ``"dask"`` or ``"spark"``
    budget : the memory budget in bytes (:func:`evalframe.engine.budget.memory_budget`)
    dataset : the run is a Parquet dataset (a file, a directory, a glob, a
        ``pyarrow.dataset.Dataset`` or a dict of them) or a text run file streamed, not a table
    rows : a Parquet file's rows, counted once (None: not counted)
    threads : threads this process may evaluate parts on (``threads=``, else
        ``EVALFRAME_THREADS``, else its cores: :func:`evalframe._threads.resolve_threads`):
        the in-memory engine's parts of a large table (:mod:`evalframe.engine.parts`) and the
        streaming engine's partitions
    """

    name: Literal["memory", "streaming", "dask", "spark"]
    budget: int
    dataset: bool = False
    rows: int | None = None
    threads: int = 1


def choose(run, *, engine: str = "auto", memory_budget: "int | str | None" = None,
           threads: int | None = None, caller: str = "evaluate") -> Choice:
    """The engine for ``run``: ``engine="auto"`` is Spark for a ``pyspark.sql.DataFrame``, Dask
    for a ``dask.dataframe.DataFrame``, streaming for a Parquet dataset (a directory, a glob,
    a ``pyarrow.dataset.Dataset``, or one file) or a TREC text run file (or a dict of them)
    whose rows do not fit ``memory_budget``, and in memory otherwise.  ``"memory"`` is this machine (a dataset larger than the budget is
    still streamed); ``"dask"`` takes a pandas table or a dataset too; ``"spark"`` only a
    Spark DataFrame.  The dataset's rows are counted once, here.

    Examples
    --------
    >>> import pandas as pd
    >>> run = pd.DataFrame({"query_id": ["q1"], "doc_id": ["d1"], "score": [1.0]})
    >>> choose(run).name
    'memory'
    >>> choose(run, engine="spark")
    Traceback (most recent call last):
    ...
    ValueError: evaluate: engine='spark' evaluates a pyspark.sql.DataFrame run: create one with spark.read.parquet(...) or spark.createDataFrame(...)
    """
    check(caller, "engine", engine, Options(ENGINES, "'auto', 'memory', 'dask' or 'spark'"))
    from .._threads import resolve_threads
    return replace(_engine(run, engine, sizing.memory_budget(memory_budget), caller),
                   threads=resolve_threads(threads, caller=caller))


def _engine(run, engine: str, budget: int, caller: str) -> Choice:
    """:func:`choose`'s engine, ``budget`` and the dataset's rows."""
    if is_spark_frame(run):
        if engine not in ("auto", "spark"):
            raise error(caller, "engine", "'auto' or 'spark' for a pyspark.sql.DataFrame run", engine)
        return Choice("spark", budget)
    if engine == "spark":
        raise ValueError(f"{caller}: engine='spark' evaluates a pyspark.sql.DataFrame run: create one with "
                         "spark.read.parquet(...) or spark.createDataFrame(...)")
    if is_dask_frame(run):
        if engine == "memory":
            raise error(caller, "engine", "'auto' or 'dask' for a dask.dataframe run", engine)
        return Choice("dask", budget)
    if engine == "dask":
        import pandas as pd
        if not isinstance(run, pd.DataFrame) and (isinstance(run, Mapping) or not is_dataset_source(run)):
            raise ValueError(f"{caller}: engine='dask' takes a dask.dataframe, a pandas DataFrame or a Parquet "
                             f"dataset, got {type(run).__name__}: read it with evalframe.read_run(...) first")
        return Choice("dask", budget)
    if not is_dataset_source(run):
        texts = _text_runs(run)
        if texts is not None:  # TREC text run files: streamed in blocks of whole questions when too large
            rows = sum(sizing.text_run_rows(p) for p in texts)
            if rows * sizing.WHOLE_BYTES_PER_ROW > budget:
                return Choice("streaming", budget, dataset=True, rows=rows)
        return Choice("memory", budget)
    if isinstance(run, (str, os.PathLike)) and os.path.isfile(run):
        rows = open_run_dataset(run).count_rows()
        if rows * sizing.WHOLE_BYTES_PER_ROW <= budget:
            return Choice("memory", budget, dataset=True, rows=rows)
        return Choice("streaming", budget, dataset=True, rows=rows)
    return Choice("streaming", budget, dataset=True)  # rows counted by the engine, over every source
