"""evaluate(): every measure per question; aggregate(): means per system and segment.

The per-question computation works on any partition of the questions
independently: evaluating the golden set's questions in several chunks and
concatenating the results gives the same table as one call (tested), so the
engine can be run chunk by chunk or on a distributed engine.
"""
from __future__ import annotations

import os
import re
from dataclasses import replace
from typing import Iterable, Literal, Mapping, Sequence

import numpy as np
import pandas as pd

from ._validation import BOOLEAN, BOOLEAN_OR_NONE, POSITIVE_INT, Satisfies, check
from .errors import warn as _warn_user
from .errors import EvalframeInputError, InputProblem, QuestionsDroppedWarning
from .engine.spark import is_spark_frame
from .engine.conventions import Conventions, Duplicates, NoRelevant
from .engine.bounds import Unjudged, check_unjudged, refuse_unjudged_with_spans
from .engine.chunkings import Chunkings, carried_chunkings, is_span_input, resolve_chunkings
from .engine.memory import evaluate_partition
from .engine.parts import evaluate_on_threads, threads_for
from .canonical import apply_columns
from .spans import check_min_overlap, is_span_table
from .spans import MIN_OVERLAP, with_tokens
from ._conflicts import Conflicts
from .io import read_golden_set, read_run, read_run_as_given
from .measures import Aggregation, Mean, Measure, parse_measure, parse_measures, resolve
from ._id_order import natural_order
from ._judged import Missing, Ties
from .ranking import judge
from .rollup import Rollup
from .engine.choice import Choice, choose, is_dask_frame, is_dataset_source, open_run_dataset
from .engine.streaming import StreamOptions, stream_evaluate

Engine = Literal["auto", "memory", "dask", "spark"]

def evaluate(run, qrels, measures: "str | Measure | Iterable[str | Measure] | None" = None, *,
             rel: int = 1, ties: Ties = "doc_id_desc", missing: Missing = "zero",
             depth: int | None = None, duplicates: Duplicates = "error",
             columns: Mapping[str, str] | None = None, conflicts: Conflicts = "error", ascending: bool = False,
             engine: Engine = "auto",
             memory_budget: "int | str | None" = None, progress: bool | None = None, threads: int | None = None,
             rollup: "Rollup | None" = None, chunks=None, min_overlap: float = MIN_OVERLAP,
             tokens=None, unjudged: "Unjudged | None" = None, no_relevant: NoRelevant = "zero") -> pd.DataFrame:
    """Compute measures per question (and per system).

    Parameters
    ----------
    run : DataFrame, path, dict, or list/dict of those; or a Parquet dataset
        One or many systems (see :func:`evalframe.read_run`).  A Parquet file,
        a directory of Parquet files, a glob (``"runs/*.parquet"``) or a
        :class:`pyarrow.dataset.Dataset` larger than ``memory_budget`` is
        evaluated in parts with bounded memory (:mod:`evalframe.engine.streaming`),
        with the same numbers, warnings and diagnostics.
    qrels : DataFrame, path, dict or CheckedQrels
        The golden set (see :func:`evalframe.read_qrels`; also a Parquet
        dataset, partitioned like the run when larger than half the budget; or
        a checked golden set, :func:`evalframe.read_golden_set`, whose resolved
        conflicting labels are reported).
    measures : name, Measure or list of them, optional
        Default: the spec's ``R@5, R@10, R@100, P@5, RR, nDCG@10, AP``.
        trec_eval names (``ndcg_cut_10``, ``P_5``, ``map``...) keep trec_eval's
        meaning.
    rel : int
        A document is relevant when its label is >= ``rel`` (for measures that
        do not set their own ``rel``).  Reported in the measure name when != 1.
    ties : {"doc_id_desc", "doc_id_asc", "rank"}
        Order of documents with equal scores (trec_eval: doc_id descending).
    no_relevant : {"zero", "drop"}
        Golden-set questions with no relevant document (no label >= ``rel``; "no-answer"
        questions): ``"zero"`` (default) keeps them, where recall-type measures score 0 and
        pull every mean down; ``"drop"`` leaves them out of the per-question table (on
        every engine, inside each partition). Not with ``chunks=`` or a span golden set.
    missing : {"zero", "drop"}
        Golden-set questions a system did not answer: score 0 (default) or
        leave out (trec_eval's default).
    depth : int, optional
        Evaluate only the top ``depth`` documents of each ranking.
    duplicates : {"error", "max", "first"}
        A document listed twice for one question: raise, keep the highest
        score, or keep the first row.
    columns : dict, optional
        ``{your column name: canonical name}`` for both tables, e.g.
        ``{"qa_id": "query_id", "chunk": "doc_id"}`` (a name one table lacks is skipped
        there); see :mod:`evalframe.canonical` for the aliases recognised without it.
    conflicts : {"error", "max", "min", "majority", "human"}
        Several labels of one (question, document) in the golden set: raise, or keep
        the highest, the lowest or the most frequent label (a tie: the higher), or
        (``"human"``, with a ``judge`` column) a person's label over a model's; the
        pairs resolved are counted in :func:`diagnostics`.
    ascending : bool
        The run's ``score`` is a distance (lower is better: L2, cosine distance, a
        rank-like cost): documents are ranked by ascending score, on every engine (ties
        still broken by ``ties``; ``duplicates="max"`` keeps the lowest).  Default False:
        higher scores rank first.  A run without scores is ordered by its ranks either way.
    engine : {"auto", "memory", "dask", "spark"}
        ``"dask"``: evaluate on Dask (the current ``dask.distributed`` client, if
        any), ``run`` being a ``dask.dataframe.DataFrame`` or a Parquet dataset
        path; the result is then a ``dask.dataframe.DataFrame`` (see
        :mod:`evalframe.engine.dask`).  ``"spark"``: a ``pyspark.sql.DataFrame`` run
        (:mod:`evalframe.engine.spark`).  ``"auto"`` (default) is the run's own engine
        (:func:`evalframe.engine.choice.choose`): Spark or Dask for their frames,
        streaming for a Parquet dataset larger than ``memory_budget``, else in memory.
    memory_budget : int or str, optional
        Bytes a Parquet-dataset run may hold at once (``"2GiB"``, ``"500MB"``
        or an int); default a quarter of the memory available.  A run that
        fits is read whole.
    progress : bool, optional
        A progress bar while a run is streamed: default on when standard
        error is a terminal (not in notebooks); True or False to choose.
    threads : int, optional
        Threads to evaluate on (default: the environment variable ``EVALFRAME_THREADS``,
        else every core this process may use).  A table of at least 1,000,000 rows per
        thread is cut into parts of whole questions, one per thread
        (:mod:`evalframe.engine.parts`), and a streamed run's partitions are evaluated
        that many at a time, sharing the memory budget.  The numbers, their order, the
        diagnostics and the warnings do not depend on it.
    rollup : DataFrame, dict or str, optional
        A chunk -> page map (a two-column table, a dict, or the name of a run
        column holding each chunk's page id): the run's chunks and the golden
        set's chunks are rolled up to pages before ranking
        (:mod:`evalframe.rollup`): each page ranks at its best chunk's position,
        later chunks of the same page are removed before the cutoff, and a page
        is as relevant as its most relevant chunk.  Ids the map does not name
        are pages already.
    chunks : DataFrame, path or dict {system: table}, optional
        Each retrieved chunk's parent document and character offsets, ``chunk_id,
        doc_id, start, end[, tokens]`` (:mod:`evalframe.spans`; a dict when systems chunk
        differently).  With a span golden set (``query_id, doc_id, start, end[,
        relevance]``, recognised by its offsets) every chunking is judged on the labels
        it gets from the spans (:func:`evalframe.span_labels`) and the span measures
        (``SpanRecall@k``, ``SpanPrecision@k``, ``SpanIoU@k``, at a token budget too)
        can be asked for; chunk-level measures of systems whose chunkings differ raise a
        :class:`~evalframe.errors.ChunkingsDifferWarning`.  A ``tokens`` column feeds the
        budget measures of a run without one.  A run whose rows carry ``start``/``end`` and
        the parent document needs no ``chunks``.  Every engine runs it (:mod:`evalframe.engine.partition`).
    min_overlap : float in [0, 1]
        The overlap rule of :func:`evalframe.span_labels` (default 0.5).
    tokens : DataFrame, dict or Series, optional
        Token counts by retrieved id (a two-column table, ``{id: count}``, or a Series),
        joined into the run as its ``tokens`` column for the budget measures
        (``R(tokens=2000)``...), as ``rollup=`` maps ids; every retrieved id needs one.
    unjudged : {None, "nonrelevant", "relevant", "bounds"}
        What a retrieved document the golden set does not label (or labels negative)
        counts as.  None (default) and ``"nonrelevant"``: not relevant, so the values
        are lower bounds; ``"nonrelevant"`` declares it (a golden set complete by
        construction): :func:`evalframe.report` then issues no
        :class:`~evalframe.errors.UnjudgedDocumentsWarning` (its diagnostics row stays).
        ``"relevant"``: every unjudged document within the measure's cutoff counts as
        relevant, and is added to the relevant documents of that ranking alone, so
        ``value`` is the upper bound; ``"bounds"``: both, as the columns
        ``value_low`` (= ``value``, today's) and ``value_high``, which
        :func:`aggregate` and :func:`evalframe.stats.summarize` carry.  Only for
        ``P``, ``R``, ``Success`` and ``RR`` (at any cutoff and ``rel``), whose upper
        bound is true (no labelling of the unjudged documents gives more); the others
        are refused (:data:`evalframe.engine.bounds.BOUND_FAMILIES` says why).  Every engine
        computes them (in each partition); not with chunk offsets.

    Returns
    -------
    DataFrame
        Long table, one row per (system, question, measure):

        ========== ======= =============================================
        system     str     present when the run names its systems
        query_id   str
        unit       str     ``"page"``: present only with ``rollup``
        measure    str     canonical measure name (``str(Measure)``)
        value      float64
        value_low  float64 only with ``unjudged="bounds"``: today's value
        value_high float64 only with ``unjudged="bounds"``: the upper bound
        ========== ======= =============================================

        With the Dask engine, a ``dask.dataframe.DataFrame`` of these columns
        (computed, kept on the workers) whose ``.compute()`` holds the same
        rows, grouped by partition.

    Notes
    -----
    The conventions (tie order, which questions count, empty relevant sets,
    gains) are in :mod:`evalframe.measures`.

    Examples
    --------
    >>> from evalframe.datasets import load_sso
    >>> sso = load_sso()
    >>> evaluate(sso.runs, sso.qrels, ["R@5", "nDCG@10"]).round(2)
          system query_id  measure  value
    0  librarian      sso      R@5   0.67
    1  librarian      sso  nDCG@10   0.62
    """
    return _measured(run, qrels, measures, rel=rel, ties=ties, missing=missing, depth=depth, duplicates=duplicates,
                     columns=columns, conflicts=conflicts, ascending=ascending, engine=engine,
                     memory_budget=memory_budget, progress=progress, threads=threads, rollup=rollup, chunks=chunks,
                     min_overlap=min_overlap, tokens=tokens, shallow=None, unjudged=unjudged,
                     no_relevant=no_relevant, diagnosed=False)[0]


def diagnostics(run, qrels, measures: "str | Measure | Iterable[str | Measure] | None" = None, *,
                rel: int = 1, ties: Ties = "doc_id_desc", missing: Missing = "zero",
                depth: int | None = None, duplicates: Duplicates = "error",
                columns: Mapping[str, str] | None = None, conflicts: Conflicts = "error", ascending: bool = False,
                engine: Engine = "auto",
                memory_budget: "int | str | None" = None, progress: bool | None = None, threads: int | None = None,
                rollup: "Rollup | None" = None, chunks=None, min_overlap: float = MIN_OVERLAP,
                tokens=None) -> pd.DataFrame:
    """The facts behind evaluate()'s warnings, as a table (no warnings issued).

    Same parameters as :func:`evaluate` (``rel`` sets the threshold of
    ``golden_questions_without_relevant``; a Parquet dataset larger than
    ``memory_budget`` is streamed; ``measures``, when given, sets the
    deepest cutoff of ``shallow_rankings``, which ``evaluate_with_diagnostics``
    always checks against the measures it computes).

    Returns
    -------
    DataFrame
        ``system, check, count, action, examples`` where ``check`` is one of
        ``run_questions_not_in_golden_set`` (dropped),
        ``system_without_golden_questions``,
        ``golden_questions_not_in_run`` (scored 0, or dropped with
        ``missing="drop"``), ``golden_questions_without_relevant`` (no label
        >= ``rel``),
        ``score_ties`` (rows whose score equals another row's of the same
        question and system, ordered by the ``ties`` convention; a rank-only
        run's repeated ranks), ``golden_set_conflicting_labels`` ((question,
        document) pairs whose labels ``conflicts`` resolved; system empty),
        ``rollup_run_rows_collapsed`` (rows of later chunks of a page, removed
        by ``rollup``), ``rollup_golden_rows_merged`` (golden-set chunks merged
        into their page), ``shallow_rankings`` (questions whose ranking holds
        fewer documents, but at least one, than the deepest cutoff of ``measures``).

    Examples
    --------
    >>> import evalframe as ef
    >>> cran = ef.datasets.load_cranfield()
    >>> diag = ef.diagnostics(cran.runs, cran.qrels)
    >>> diag[["system", "check", "count"]].head(2)
            system       check  count
    0         bm25  score_ties    103
    1  dense_exact  score_ties      2
    >>> ef.diagnostics(ef.datasets.load_sso().runs, ef.datasets.load_sso().qrels).empty
    True
    """
    conv = Conventions(rel=rel, ties=ties, missing=missing, depth=depth, duplicates=duplicates, conflicts=conflicts,
                       columns=columns, ascending=ascending, min_overlap=min_overlap, caller="diagnostics")
    choice = choose(run, engine=engine, memory_budget=memory_budget, threads=threads, caller="diagnostics")
    shallow = [m for m in parse_measures(measures) if m.k is not None] if measures is not None else []
    named = [resolve(m, rel=rel) for m in parse_measures(measures)] if measures is not None else []
    return _evaluate(run, qrels, named, conv, choice, progress=progress, rollup=rollup, chunks=chunks,
                     tokens=tokens, shallow=shallow, unjudged=None, measured=False)[1]


#: ``by=`` of :func:`aggregate`
_COLUMN_NAMES = Satisfies(lambda v: isinstance(v, str) or isinstance(v, (list, tuple))
                          and all(isinstance(c, str) for c in v), "a column name or a list of them")


def aggregate(per_question: pd.DataFrame, by: "str | Sequence[str] | None" = None) -> pd.DataFrame:
    """Summarise a per-question table per system (and per segment).

    Parameters
    ----------
    per_question : DataFrame
        Output of :func:`evaluate`, optionally with segment columns joined.
    by : column name or list of names, optional
        Segment columns to group by, in addition to ``system``.

    Returns
    -------
    DataFrame
        ``system, [by...], [unit,] measure, n, mean, value, aggregation`` (``unit``
        when the table has one, see ``rollup``): ``n``
        questions, the arithmetic ``mean``, and ``value``, the measure's own
        aggregate (``mean`` for most; ``sum`` for the counts NumRet, NumRel,
        NumRelRet, as trec_eval reports them; ``gmean`` for GMAP and GMbpref:
        exp(mean(log(max(value, 1e-5)))), trec_eval's gm_map); ``aggregation``
        names it; with ``value_low`` and ``value_high`` columns (``evaluate(...,
        unjudged="bounds")``) each is aggregated the same way, into the columns of the
        same names.  All are computed by the measure's aggregation object
        (:class:`evalframe.measures.Mean`, ``Sum``, ``GeoMean``), whose
        ``partial`` / ``combine`` / ``finalize`` also serve engines that
        evaluate the questions in parts.  Sums run in the table's row order.

    Raises
    ------
    EvalframeInputError
        When columns are missing, a (system, question, measure) repeats, a
        value is NaN or infinite (listed per system and measure), or a measure
        name is not a known measure.

    Examples
    --------
    >>> from evalframe.datasets import load_sso
    >>> sso = load_sso()
    >>> aggregate(evaluate(sso.runs, sso.qrels, ["RR"]))[["system", "measure", "n", "mean"]]
          system measure  n  mean
    0  librarian      RR  1   0.5
    """
    check("aggregate", "by", by, _COLUMN_NAMES, None)
    by = [by] if isinstance(by, str) else list(by or [])
    need = ["query_id", "measure", "value"] + by
    if is_spark_frame(per_question):  # collected: a few rows per question and system
        return aggregate(_natural_rows(per_question.toPandas()), by)
    if is_dask_frame(per_question):
        missing = [c for c in need if c not in per_question.columns]
        if missing:
            raise EvalframeInputError("per-question table", [InputProblem(
                f"missing columns {missing} (found {list(per_question.columns)})",
                "pass the output of evaluate(), with the segment columns joined")])
        from .engine.dask import aggregate_dask
        names = per_question["measure"].unique().compute()
        return aggregate_dask(per_question, by, {name: _aggregation(name) for name in names})
    missing = [c for c in need if c not in per_question.columns]
    if missing:
        raise EvalframeInputError("per-question table", [InputProblem(
            f"missing columns {missing} (found {list(per_question.columns)})",
            "pass the output of evaluate(), with the segment columns joined")])
    keys = (["system"] if "system" in per_question.columns else []) + by + (
        ["unit"] if "unit" in per_question.columns and "unit" not in by else []) + ["measure"]
    codes, first, query = _group_codes(per_question, keys)
    dup = _repeated(codes, query, len(first))
    if dup.any():
        raise EvalframeInputError("per-question table", [InputProblem(
            f"{int(dup.sum())} rows repeat a (system, question, measure) and would be counted twice",
            "pass evaluate()'s table once (drop duplicated rows, e.g. after a merge with segments)",
            per_question.loc[dup].head(5).to_string())])
    values = _numeric_values(per_question)
    _refuse_non_finite(per_question, values)
    n_groups = len(first)
    out = per_question[keys].iloc[first].reset_index(drop=True)  # groups in order of first appearance
    out["n"] = np.bincount(codes, minlength=n_groups).astype(np.int64)
    measure_of_group, names = pd.factorize(out["measure"], use_na_sentinel=False)
    agg_of_name = np.empty(len(names), dtype=object)
    agg_of_name[:] = [_aggregation(name) for name in names]
    agg_of_group = agg_of_name[measure_of_group]
    mean = _MEAN.finalize(_MEAN.partial(values, codes, n_groups))
    value = mean.copy()
    for how in {a for a in agg_of_name if a != _MEAN}:
        sel = agg_of_group == how
        rows = sel[codes]
        value[sel] = how.finalize(how.partial(values[rows], codes[rows], n_groups))[sel]
    out["mean"] = mean
    out["value"] = value
    out["aggregation"] = [a.name for a in agg_of_group]
    for col in _BOUNDS if all(c in per_question.columns for c in _BOUNDS) else ():
        bound = pd.to_numeric(per_question[col], errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
        _refuse_non_finite(per_question.assign(value=bound), bound)
        agg = _MEAN.finalize(_MEAN.partial(bound, codes, n_groups))
        for how in {a for a in agg_of_name if a != _MEAN}:
            sel = agg_of_group == how
            rows = sel[codes]
            agg[sel] = how.finalize(how.partial(bound[rows], codes[rows], n_groups))[sel]
        out[col] = agg
    return out


#: The columns of ``evaluate(..., unjudged="bounds")`` that :func:`aggregate` carries.
_BOUNDS = ("value_low", "value_high")


def _natural_rows(table: pd.DataFrame) -> pd.DataFrame:
    """A per-question table whose rows come in no order (a Spark table collected) in the
    in-memory table's question order (each group's sums then run in the same order)."""
    ids = table["query_id"].to_numpy(dtype=object)
    rank = pd.Index(natural_order(pd.unique(ids))).get_indexer(ids)
    return table.iloc[np.argsort(rank, kind="stable")].reset_index(drop=True)


def _group_codes(table: pd.DataFrame, keys: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each row's group of ``keys`` (0.., in order of first appearance, a missing value
    its own key), each group's first row, and each row's ``query_id`` code: every
    column factorised once, the groups found on integer codes (no Python object per row)."""
    combined, bound = np.zeros(len(table), dtype=np.int64), 1
    for c in keys:
        col, uniq = pd.factorize(table[c], use_na_sentinel=False)
        if bound * max(len(uniq), 1) >= 2 ** 62:  # renumbered first, so the product never overflows
            combined, seen = pd.factorize(combined)
            bound = len(seen)
        combined = combined * np.int64(max(len(uniq), 1)) + col
        bound *= max(len(uniq), 1)
    codes = pd.factorize(combined)[0].astype(np.intp, copy=False)
    first = np.flatnonzero(np.r_[True, codes[1:] > np.maximum.accumulate(codes)[:-1]]) if len(codes) else codes
    query, _ = pd.factorize(table["query_id"], use_na_sentinel=False)
    return codes, first, query.astype(np.int64, copy=False)


def _repeated(group: np.ndarray, query: np.ndarray, n_groups: int) -> np.ndarray:
    """Rows whose (group, question) pair occurs more than once: counted in a dense
    array when the pairs' range is not much larger than the table, else hashed."""
    n_q = int(query.max()) + 1 if len(query) else 1
    key = group.astype(np.int64) * n_q + query
    if n_groups * n_q <= 4 * len(key) + 1_000_000:
        return np.bincount(key, minlength=n_groups * n_q)[key] > 1
    return pd.Series(key).duplicated(keep=False).to_numpy()


def _numeric_values(per_question: pd.DataFrame) -> np.ndarray:
    """The ``value`` column as float64 (numbers written as text are read); a value that is
    not a number is an input error listing the rows."""
    v = per_question["value"]
    if pd.api.types.is_numeric_dtype(v.dtype) and v.dtype.kind != "c":  # booleans count as 0 and 1
        return v.to_numpy(dtype=np.float64, na_value=np.nan)
    num = pd.to_numeric(v, errors="coerce") if v.dtype.kind != "c" else pd.Series(np.nan, index=v.index)
    bad = (num.isna() & v.notna()).to_numpy() | (v.dtype.kind == "c")
    if bad.any():
        raise EvalframeInputError("per-question table", [InputProblem(
            f"{int(bad.sum())} rows have a value that is not a number (e.g. {v[bad].iloc[0]!r})",
            "pass evaluate()'s table, whose values are numbers", per_question.loc[bad].head(5).to_string())])
    return num.to_numpy(dtype=np.float64, na_value=np.nan)


def _refuse_non_finite(per_question: pd.DataFrame, values: np.ndarray) -> None:
    bad = ~np.isfinite(values)
    if not bad.any():
        return
    cols = [c for c in ("system", "measure") if c in per_question.columns]
    counts = per_question.loc[bad].groupby(cols, sort=False, dropna=False).size()
    listed = "; ".join(f"{', '.join(map(str, k if isinstance(k, tuple) else (k,)))}: {n}"
                       for k, n in counts.head(10).items())
    raise EvalframeInputError("per-question table", [InputProblem(
        f"{int(bad.sum())} values are NaN or infinite and cannot be aggregated "
        f"({' / '.join(cols)}: count) {listed}",
        "find where they come from (e.g. a value computed outside evalframe) and fix or drop those rows",
        per_question.loc[bad].head(5).to_string())])


#: Measures evalframe reports that are not measure families (see index_recall()).
_OWN_MEASURES = (re.compile(r"IndexRecall@\d+"),)


_MEAN = Mean()


def _aggregation(name: str) -> Aggregation:
    if any(p.fullmatch(name) for p in _OWN_MEASURES):
        return _MEAN
    try:
        return parse_measure(name).aggregator
    except (ValueError, TypeError) as exc:
        raise EvalframeInputError("per-question table", [InputProblem(
            f"measure {name!r} is not a known measure, so how it aggregates is unknown ({exc})",
            "pass evaluate()'s table, whose measure names are canonical")]) from None


def index_recall(approx_run, exact_run, *, k: int, ties: Ties = "doc_id_desc",
                 ascending: bool = False) -> pd.DataFrame:
    """Index recall@k: how much of the exact top k the approximate index returned.

    This is the *other* recall (ANN recall): its answer key is exact nearest
    neighbour search, not a golden set, and it knows nothing about relevance.

    Parameters
    ----------
    approx_run : run (DataFrame, path, dict), one or many systems
        Results of the approximate index.
    exact_run : run, one system
        Results of exact (brute-force) search for the same questions.
    k : int
        Cutoff.
    ascending : bool
        Both runs' scores are distances (lower is nearer), as ANN indexes often return.

    Returns
    -------
    DataFrame
        ``[system,] query_id, measure, value`` with ``measure = "IndexRecall@k"``
        and, per question, ``|approx top k ∩ exact top k| / k``.

    Notes
    -----
    The denominator is k, as the spec defines it; when the exact list holds
    fewer than k documents (a collection smaller than k) it is that length.
    Every question of the exact run counts; one the approximate run does not
    answer scores 0.  Questions only in the approximate run are dropped (with
    a :class:`~evalframe.errors.QuestionsDroppedWarning`).  Both lists are
    ranked with the ``ties`` convention.

    Examples
    --------
    How much of the exact nearest neighbours' top 10 the HNSW index returned, per question:

    >>> import evalframe as ef
    >>> sci = ef.datasets.load_scifact()
    >>> hnsw = sci.runs[sci.runs["system"] == "dense_hnsw"]
    >>> exact = sci.runs[sci.runs["system"] == "dense_exact"]
    >>> ef.index_recall(hnsw, exact, k=10).head(3)
           system query_id         measure  value
    0  dense_hnsw        1  IndexRecall@10    0.9
    1  dense_hnsw        3  IndexRecall@10    1.0
    2  dense_hnsw        5  IndexRecall@10    1.0
    """
    check("index_recall", "k", k, POSITIVE_INT)
    check("index_recall", "ascending", ascending, BOOLEAN)
    exact = read_run(exact_run, ascending=ascending)
    if "system" in exact and exact["system"].nunique() > 1:
        raise EvalframeInputError("exact run", [InputProblem(
            f"holds {exact['system'].nunique()} systems", "pass the exact search of one system")])
    exact = exact.drop(columns=[c for c in ("system",) if c in exact])
    # The exact top k of each question (ranked as every run is) becomes a binary golden set.
    dummy = exact[["query_id", "doc_id"]].assign(relevance=np.int64(1))
    Je = judge(exact, dummy, ties=ties, missing="zero", depth=k, warn=False, keep_rows=True)
    key = dummy.iloc[Je.source_row]
    approx = read_run(approx_run, ascending=ascending)
    J = judge(approx, key.reset_index(drop=True), ties=ties, missing="zero", depth=k, warn=False)
    dropped = J.diagnostics[J.diagnostics["check"] == "run_questions_not_in_golden_set"]
    for row in dropped.itertuples(index=False):
        _warn_user(f"{row.count} approximate-run questions are not in the exact run and were dropped "
                      f"(e.g. {row.examples})", QuestionsDroppedWarning)
    hits = J.per_group(J.label >= 1)
    n_exact = np.bincount(J.qrels_query, minlength=J.n_queries)[J.group_query]
    value = hits / np.minimum(n_exact, k)
    out = J.groups.copy()
    out["measure"] = f"IndexRecall@{k}"
    out["value"] = value
    return out.reset_index(drop=True)


def evaluate_with_diagnostics(run, qrels, measures: "str | Measure | Iterable[str | Measure] | None" = None, *,
                              rel: int = 1, ties: Ties = "doc_id_desc", missing: Missing = "zero",
                              depth: int | None = None, duplicates: Duplicates = "error",
                              columns: Mapping[str, str] | None = None, conflicts: Conflicts = "error", ascending: bool = False,
                              engine: Engine = "auto",
                              memory_budget: "int | str | None" = None, progress: bool | None = None, threads: int | None = None,
                              rollup: "Rollup | None" = None, chunks=None, min_overlap: float = MIN_OVERLAP,
                              tokens=None, shallow=None, unjudged: "Unjudged | None" = None,
                              no_relevant: NoRelevant = "zero") -> tuple[pd.DataFrame, pd.DataFrame]:
    """:func:`evaluate` and :func:`diagnostics` from one ranking pass.

    Same parameters and warnings as :func:`evaluate`; the run is read, checked,
    ranked and judged once (for large runs this is most of the work).  ``shallow``:
    the measures (names or :class:`Measure`) whose deepest cutoff rankings are checked
    against (``shallow_rankings``; default: ``measures``), so a caller that computes more
    than it was asked for (the report's curve) warns only of what was asked.

    Returns
    -------
    (DataFrame, DataFrame)
        The per-question table of :func:`evaluate` and the table of
        :func:`diagnostics`.
    """
    return _measured(run, qrels, measures, rel=rel, ties=ties, missing=missing, depth=depth, duplicates=duplicates,
                     columns=columns, conflicts=conflicts, ascending=ascending, engine=engine,
                     memory_budget=memory_budget, progress=progress, threads=threads, rollup=rollup, chunks=chunks,
                     min_overlap=min_overlap, tokens=tokens, shallow=shallow, unjudged=unjudged,
                     no_relevant=no_relevant)


def _measured(run, qrels, measures, *, rel, ties, missing, depth, duplicates, columns, conflicts, ascending, engine,
              memory_budget, progress, threads, rollup, chunks, min_overlap, tokens, shallow, unjudged, no_relevant,
              diagnosed: bool = True) -> tuple[pd.DataFrame, pd.DataFrame | None]:
    """:func:`evaluate_with_diagnostics`; ``diagnosed=False`` (:func:`evaluate`): the
    in-memory engine leaves out the diagnostics table (None), which ``evaluate`` does not
    return (its records are made and warned of all the same)."""
    conv = Conventions(rel=rel, ties=ties, missing=missing, depth=depth, duplicates=duplicates, conflicts=conflicts,
                       columns=columns, ascending=ascending, min_overlap=min_overlap, no_relevant=no_relevant)
    choice = choose(run, engine=engine, memory_budget=memory_budget, threads=threads)
    ms = [resolve(m, rel=rel) for m in parse_measures(measures)]
    shallow = None if shallow is None else [resolve(m, rel=rel) for m in parse_measures(shallow)]
    check_unjudged(unjudged, ms)
    return _evaluate(run, qrels, ms, conv, choice, progress=progress, rollup=rollup, chunks=chunks, tokens=tokens,
                     shallow=shallow, unjudged=unjudged, diagnosed=diagnosed)


def _check_no_relevant(no_relevant, chunked) -> None:
    """``no_relevant="drop"`` refused with chunk offsets or a span golden set (``chunked``:
    :func:`_chunked`'s answer, False when neither is in play; a span golden set whose
    documents are judged whole counts)."""
    if no_relevant == "drop" and chunked is not False:
        raise ValueError("evaluate: no_relevant='drop' is not available with chunks= or a span golden set "
                         "(whether a question has relevant evidence depends on the chunking); use "
                         "no_relevant='zero' and filter the per-question table")


def _evaluate(run, qrels, ms: list[Measure], conv: Conventions, choice: Choice, *, progress, rollup, chunks,
              tokens, shallow, unjudged, measured: bool = True, diagnosed: bool = True
              ) -> tuple[pd.DataFrame | None, pd.DataFrame | None]:
    """The per-question table and the diagnostics of ``run`` on the engine ``choice`` names:
    every caller's one path.  ``measured=False``: the diagnostics only (:func:`diagnostics`:
    no warning; ``ms`` are then computed only where a chunking needs them flagged).
    ``diagnosed=False``: the in-memory engine on one thread may leave out the diagnostics
    table (None; a call's fixed cost, about 0.4 ms)."""
    check(conv.caller, "progress", progress, BOOLEAN_OR_NONE)
    warn = measured
    refuse_unjudged_with_spans(unjudged, chunks, qrels, conv.columns)
    run = _token_counts(run, tokens, conv, choice)
    chunked = _chunked(run, qrels, chunks, conv, rollup, choice)
    _check_no_relevant(conv.no_relevant, chunked)
    if chunked is True:  # offsets held in memory: every measure named is computed (chunk-level ones are flagged)
        return evaluate_partition(run, qrels, ms, conv, warn=warn, rollup=rollup, chunks=chunks, shallow=shallow,
                                  unjudged=unjudged)
    chunkings, qrels, run = chunked or (None, qrels, run)
    if not measured and chunkings is None:
        ms = []
    if choice.name == "spark":
        from .engine.spark import evaluate_spark
        return evaluate_spark(run, qrels, ms, conv, warn=warn, rollup=rollup, shallow=shallow, chunkings=chunkings,
                              unjudged=unjudged)
    if choice.name == "dask":
        from .engine.dask import evaluate_dask
        return evaluate_dask(run, qrels, ms, conv, warn=warn, rollup=rollup, shallow=shallow, chunkings=chunkings,
                             unjudged=unjudged)
    if choice.name == "streaming":
        streamed, run, qrels = _streamed(run, qrels, ms if measured or chunkings else None, conv, choice, progress,
                                         rollup, warn=warn, shallow=shallow, chunkings=chunkings, unjudged=unjudged)
        if streamed is not None:
            return streamed
    threads = threads_for(run, choice.threads, rollup) if chunkings is None else 1
    if threads > 1:  # a large table: parts of whole questions on threads
        out = evaluate_on_threads(run, qrels, ms, conv, threads=threads, warn=warn, rollup=rollup, shallow=shallow,
                                  unjudged=unjudged, measured=measured)
        if out is not None:
            return out
    return evaluate_partition(run, qrels, ms, conv, warn=warn, rollup=rollup, shallow=shallow,
                              chunks=chunks if chunkings is not None else None, unjudged=unjudged, diagnosed=diagnosed)


def _token_counts(run, tokens, conv: Conventions, choice: Choice):
    """The run with ``tokens=``'s counts as its ``tokens`` column (read whole: in memory)."""
    if tokens is None:
        return run
    if choice.name != "memory" or choice.dataset and not (isinstance(run, (str, os.PathLike))
                                                            and os.path.isfile(run)):
        raise ValueError("evaluate: tokens= joins counts into a run held in memory: for a Dask or Spark frame or "
                         "a Parquet dataset, add a tokens column to the run instead")
    if isinstance(run, pd.DataFrame) and is_span_input(run, conv.columns):
        raise ValueError("evaluate: a run carrying chunk offsets takes its token counts from a tokens column")
    # the scores as given (ascending negates them once, when the engine checks the run)
    return with_tokens(read_run_as_given(run, columns=conv.columns, duplicates=conv.duplicates, ties=conv.ties,
                                         ascending=conv.ascending), tokens,
                       columns=conv.columns)


def _chunked(run, qrels, chunks, conv: Conventions, rollup, choice: Choice):
    """Whether chunk offsets are in play (``chunks=``, a span golden set, or a run carrying
    offsets), each chunking then judged on its own labels: False (not in play); True (a
    run held in memory: the in-memory engine); or, for a Dask frame or a Parquet dataset,
    the chunkings resolved once for its partitions and the golden set they are judged on
    (:func:`~evalframe.engine.chunkings.resolve_chunkings`)."""
    columns, min_overlap = conv.columns, conv.min_overlap
    if chunks is None and not is_span_input(qrels, columns):
        return False  # offsets a run carries matter only to a span golden set
    if not (choice.name in ("dask", "spark") or choice.dataset and not (
            isinstance(run, (str, os.PathLike)) and os.path.isfile(run))):
        return True
    if rollup is not None:
        raise ValueError("evaluate: rollup= and chunks= (or a span golden set) cannot be combined: "
                         "a span golden set already scores any chunking")
    names = list(run.columns) if choice.name in ("dask", "spark") else open_run_dataset(run).schema.names
    carried = None
    if is_span_table(apply_columns(pd.DataFrame(columns=names), columns)) and is_span_input(qrels, columns):
        if is_spark_frame(run):
            from .engine.spark import split_offsets
        elif is_dask_frame(run):
            from .engine.dask import split_offsets
        else:  # a dataset: split by the streaming engine as it copies the run to its scratch directory
            chunkings, spans = resolve_chunkings(None, qrels, chunks=chunks, min_overlap=min_overlap, columns=columns)
            return (replace(chunkings, split_run=True) if chunkings is not None else
                    Chunkings([], None, spans, check_min_overlap(min_overlap, "evaluate"), split_run=True)), qrels, run
        run, carried = split_offsets(run, columns)  # one pass: the distinct chunks retrieved
    chunkings, spans = resolve_chunkings(None, qrels, chunks=chunks, min_overlap=min_overlap, columns=columns)
    if chunkings is None and carried is not None:
        chunkings = carried_chunkings(carried, spans, min_overlap)
    if chunkings is None:  # spans, no offsets: whole documents judged, as in memory
        return None, spans.groupby(["query_id", "doc_id"], sort=False, as_index=False)["relevance"].max(), run
    return chunkings, qrels, run


def _streamed(run, qrels, ms, conv: Conventions, choice: Choice, progress, rollup, *, warn: bool,
              shallow: list[Measure] | None = None, chunkings=None, unjudged: str | None = None):
    """The streaming engine's answer for a Parquet-dataset run too large for the
    budget, else None and the inputs for the in-memory engine (a dataset that
    fits is read whole)."""
    if (conv.conflicts != "error" or conv.columns) and not is_dataset_source(qrels) and not (
            chunkings is not None and chunkings.spans is not None):
        qrels = read_golden_set(qrels, columns=conv.columns, conflicts=conv.conflicts)  # resolved once, before the parts
    out = stream_evaluate(run, qrels, ms, conv, warn=warn, rollup=rollup, unjudged=unjudged,
                          options=StreamOptions(choice.budget, progress, threads=choice.threads), shallow=shallow,
                          chunkings=chunkings)
    if out is not None:
        return out, run, qrels
    def whole(x):
        if isinstance(x, dict):
            return {k: whole(v) for k, v in x.items()}
        if not is_dataset_source(x) or isinstance(x, (str, os.PathLike)) and os.path.isfile(x):
            return x
        return open_run_dataset(x).to_table().to_pandas()
    return None, whole(run), whole(qrels)
