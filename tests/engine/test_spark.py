"""The Spark engine against the in-memory engine, on a local Spark session (2 cores):
the same per-question values (bit for bit, rows sorted), diagnostics and warnings.

Skipped without pyspark (the ``spark`` extra) or without a Java runtime (17 or later:
``JAVA_HOME`` or ``java`` on the path): the ``spark`` fixture is in conftest.py."""
from __future__ import annotations


import numpy as np
import pandas as pd
import pytest

import evalframe as ef
from evalframe import datasets
from evalframe.evaluation import evaluate_with_diagnostics
from tests.engine_checks import caught as _caught, sorted_table as _sorted, with_warnings

pytestmark = [pytest.mark.slow,  # `make test-fast` leaves this file out
              pytest.mark.xdist_group("spark")]  # one worker, one Spark session

pytest.importorskip("pyspark")


def assert_same(spark, run, qrels, measures, **kw):
    """The Spark table (sorted), diagnostics and warnings are the in-memory call's."""
    want, w_want = _caught(lambda: evaluate_with_diagnostics(run, qrels, measures, **kw))
    got, w_got = _caught(lambda: evaluate_with_diagnostics(spark.createDataFrame(run), qrels, measures, **kw))
    pd.testing.assert_frame_equal(_sorted(got[0].toPandas()), _sorted(want[0]), check_exact=True)
    pd.testing.assert_frame_equal(got[1], want[1])
    assert w_got == w_want
    return want


@pytest.mark.parametrize("name", ["cranfield", "scifact"])
def test_bundled_collections_with_every_warning_case(spark, name):
    """Both collections, a system missing questions, run-only questions, a system answering
    a few questions, a golden question no system answers (a bucket without a run row)."""
    ds = getattr(datasets, f"load_{name}")()
    run = with_warnings(ds)
    run = run[run.query_id.ne(pd.unique(ds.qrels.query_id)[5])]
    want = assert_same(spark, run, ds.qrels, ["R@5", "nDCG@10", "AP", "RR", "bpref", "GMAP", "Judged@10"])
    assert {"golden_questions_not_in_run", "run_questions_not_in_golden_set"} <= set(want[1]["check"])


@pytest.mark.parametrize("seed", range(3))
def test_random_cases_with_ties_duplicates_and_conflicts(spark, seed):
    """Shuffled rows with tied scores, repeated (question, document) rows kept by the
    run's order (duplicates="first"), conflicting golden labels resolved, integer ids."""
    rng = np.random.default_rng(seed)
    n = 600
    run = pd.DataFrame({"system": rng.choice(["a", "b", "c"], n), "query_id": rng.integers(1, 40, n),
                        "doc_id": rng.integers(1, 60, n), "score": rng.integers(0, 5, n).astype(float)})
    qrels = pd.DataFrame({"query_id": rng.integers(1, 45, 300), "doc_id": rng.integers(1, 60, 300),
                          "relevance": rng.integers(-1, 3, 300)})
    assert_same(spark, run, qrels, ["R@5", "P@10", "nDCG@10", "AP", "RR", "infAP", "ERR@10"],
                duplicates="first", conflicts="max")


def test_span_golden_set_and_chunk_tables(spark):
    from tests.test_spans import random_case
    for seed in (1, 4):
        spans, _, chunks, run = random_case(seed)
        assert_same(spark, run, spans, ["SpanRecall@5", "SpanIoU@5", "R@5", "R(tokens=20)"], chunks=chunks)


def test_a_measure_registered_on_the_driver_computes_on_the_python_workers(spark):
    c = datasets.load_cranfield()
    run = c.runs[c.runs["system"].isin(["bm25", "tfidf"])]

    def top_label(J, measures):
        return [J.per_group(np.where(J.rank == 1, np.maximum(J.label, 0) * 2.0, 0.0)) for m in measures]
    ef.register_measure("TopLabelSpark", top_label, cutoff="none", replace=True)
    try:
        want = assert_same(spark, run, c.qrels, ["TopLabelSpark", "RR"])
        table = want[0]
        values = set(table.loc[table["measure"] == "TopLabelSpark", "value"])
        assert values <= {2.0 * label for label in range(5)} and max(values) >= 2.0  # the label at rank 1, twice
    finally:
        ef.measures.REGISTRY.unregister("TopLabelSpark")


def test_engine_names_checked(spark):
    c = datasets.load_cranfield()
    with pytest.raises(ValueError, match="pyspark.sql.DataFrame"):
        ef.evaluate(c.runs, c.qrels, ["RR"], engine="spark")
    with pytest.raises(ValueError, match="'auto' or 'spark'"):
        ef.evaluate(spark.createDataFrame(c.runs), c.qrels, ["RR"], engine="memory")


def test_aggregate_of_a_spark_table_is_the_in_memory_means(spark):
    c = datasets.load_cranfield()
    per_q = ef.evaluate(spark.createDataFrame(c.runs), c.qrels, ["AP", "NumRel", "GMAP"])
    got = ef.aggregate(per_q).sort_values(["system", "measure"]).reset_index(drop=True)
    want = ef.aggregate(ef.evaluate(c.runs, c.qrels, ["AP", "NumRel", "GMAP"]))
    want = want.sort_values(["system", "measure"]).reset_index(drop=True)
    pd.testing.assert_frame_equal(got, want, check_exact=True)  # the sums in the in-memory order


def test_a_run_carrying_offsets_is_split_as_in_memory(spark):
    from tests.test_spans import random_case
    spans, table_of, _, run = random_case(8)
    parts = [run[run["system"] == s].merge(t, left_on="doc_id", right_on="chunk_id", suffixes=("_run", ""))
             for s, t in table_of.items()]
    carried = pd.concat(parts).sort_index(kind="stable").drop(columns=["chunk_id", "doc_id_run"])
    assert_same(spark, carried.reset_index(drop=True), spans, ["SpanRecall@5", "R@5", "R(tokens=20)"])


def test_a_system_without_a_chunk_table_is_told_on_the_driver(spark):
    from tests.test_spans import random_case
    from evalframe.errors import EvalframeInputError
    spans, table_of, _, run = random_case(1)  # several systems
    some = dict(list(table_of.items())[:-1])
    assert some
    with pytest.raises(EvalframeInputError, match="names no chunk table for the systems"):
        ef.evaluate(spark.createDataFrame(run), spans, ["SpanRecall@5"], chunks=some)
