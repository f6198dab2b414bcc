"""The same cases through every engine: in memory (the reference), streamed from Parquet
files grouped by question and shuffled, Dask on a LocalCluster of 2 worker processes, and
Spark on a local session: the per-question tables equal to the bit (sorted where an
engine's rows come in partition order), the same diagnostics and the same warnings.

(Each engine's own tests go further: a Dask worker killed mid-run, budgets, spills...)"""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import evalframe as ef
from evalframe import datasets
from evalframe.evaluation import evaluate_with_diagnostics
from tests.engine_checks import caught, sorted_table, streamed, with_warnings

pytestmark = [pytest.mark.slow,  # `make test-fast` leaves this file out
              pytest.mark.xdist_group("spark")]  # one worker, one Spark session

MEASURES = ["R@5", "nDCG@10", "AP", "RR", "bpref", "Judged@10"]
SPAN_MEASURES = ["SpanRecall@5", "SpanIoU@5", "R@5", "R(tokens=200)"]


def _cranfield():
    ds = datasets.load_cranfield()
    return with_warnings(ds), ds.qrels, MEASURES, {}


def _spans():
    from tests.test_spans import CHUNKS_A, CHUNKS_B, help_centre
    spans, _, _, run = help_centre(30)
    return run, spans, SPAN_MEASURES, {"chunks": {"a": CHUNKS_A, "b": CHUNKS_B}}


def _distances():
    """Cranfield with each score stored as a distance (its exact negation: no new tie),
    declared with ascending=True, and every ninth question without a relevant document,
    left out with no_relevant="drop": every engine applies both conventions in its partitions."""
    run, qrels, measures, _ = _cranfield()
    qids = sorted(qrels.query_id.astype(str).unique())
    qrels = qrels.assign(relevance=qrels.relevance.where(~qrels.query_id.astype(str).isin(qids[::9]), 0))
    return run.assign(score=-run["score"]), qrels, measures, {"ascending": True, "no_relevant": "drop"}


CASES = {"cranfield": _cranfield, "spans": _spans, "distances": _distances}


@pytest.fixture(scope="module")
def cluster():
    distributed = pytest.importorskip("distributed")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # dashboard on a free port (see tests/engine/test_dask.py)
        with distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1, dashboard_address=":0",
                                      memory_limit="2GiB") as c, distributed.Client(c) as client:
            yield client


def _streamed(run, qrels, measures, kw, tmp_path, layout):
    rows = run.sort_values("query_id", kind="stable") if layout == "grouped" else run.sample(
        frac=1, random_state=3)
    got = caught(lambda: streamed(rows, qrels, measures, tmp_path, files=4, parts=5, **kw))
    return got, rows.reset_index(drop=True)


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("engine", ["streaming-grouped", "streaming-shuffled", "dask", "spark"])
def test_every_engine_gives_the_in_memory_answer(engine, case, tmp_path, request):
    run, qrels, measures, kw = CASES[case]()
    ordered = engine.startswith("streaming")
    if ordered:
        (got, w_got), run = _streamed(run, qrels, measures, kw, tmp_path / "run", engine.split("-")[1])
        table = got[0]
    elif engine == "dask":
        import dask.dataframe as dd
        request.getfixturevalue("cluster")
        got, w_got = caught(lambda: evaluate_with_diagnostics(dd.from_pandas(run, npartitions=3), qrels, measures,
                                                              **kw))
        table = got[0].compute()
    else:
        session = request.getfixturevalue("spark")
        got, w_got = caught(lambda: evaluate_with_diagnostics(session.createDataFrame(run), qrels, measures, **kw))
        table = got[0].toPandas()
    want, w_want = caught(lambda: evaluate_with_diagnostics(run, qrels, measures, **kw))
    w_got = [w for w in w_got if w[0] is not ef.MemoryBudgetWarning]  # the tests' tiny budgets
    if ordered:
        pd.testing.assert_frame_equal(table, want[0], check_exact=True)
    else:
        pd.testing.assert_frame_equal(sorted_table(table), sorted_table(want[0]), check_exact=True)
    pd.testing.assert_frame_equal(got[1], want[1])
    assert w_got == w_want
    assert len(want[1])  # the cases carry diagnostics to compare


def _foreign():
    """A run whose 150 documents are none of the golden set's 40 (another id scheme)."""
    rng = np.random.default_rng(5)
    run = pd.DataFrame({"system": np.repeat(["a", "b"], 300), "query_id": np.tile(np.repeat([f"q{i}" for i in range(30)], 10), 2),
                        "doc_id": [f"other-{i}" for i in rng.integers(0, 150, 600)], "score": rng.random(600)})
    run = run.drop_duplicates(["system", "query_id", "doc_id"]).reset_index(drop=True)
    qrels = pd.DataFrame({"query_id": [f"q{i % 30}" for i in range(40)], "doc_id": [f"d{i}" for i in range(40)],
                          "relevance": 1})
    return run, qrels


@pytest.mark.parametrize("engine", ["streaming-grouped", "streaming-shuffled", "dask", "spark"])
def test_a_run_sharing_no_document_with_the_golden_set_is_the_same_input_error(engine, tmp_path, request):
    run, qrels = _foreign()
    with pytest.raises(ef.EvalframeInputError) as want:
        ef.evaluate(run, qrels, ["R@5"])
    with pytest.raises(ef.EvalframeInputError) as got, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if engine.startswith("streaming"):
            _streamed(run, qrels, ["R@5"], {}, tmp_path / "run", engine.split("-")[1])
        elif engine == "dask":
            import dask.dataframe as dd
            request.getfixturevalue("cluster")
            ef.evaluate(dd.from_pandas(run, npartitions=3), qrels, ["R@5"])
        else:
            ef.evaluate(request.getfixturevalue("spark").createDataFrame(run), qrels, ["R@5"])
    if engine != "streaming-shuffled":  # the examples are the run's first documents: a shuffled copy has others
        assert str(got.value) == str(want.value)
    assert "no retrieved document of any system is a document of the golden set" in str(got.value)


# ---------------------------------------------------------------- conflicting labels, reported once
def _conflicting():
    """A golden set whose (question, document) pairs hold several labels (votes), and a run."""
    rng = np.random.default_rng(11)
    votes = pd.DataFrame({"query_id": [f"q{i}" for i in rng.integers(0, 12, 300)],
                          "doc_id": [f"d{i}" for i in rng.integers(0, 20, 300)], "relevance": rng.integers(0, 3, 300)})
    pairs = votes.groupby(["query_id", "doc_id"])["relevance"].nunique()
    run = pd.concat([pd.DataFrame({"system": s, "query_id": votes["query_id"], "doc_id": votes["doc_id"]})
                     for s in ("a", "b")]).drop_duplicates(ignore_index=True)
    run["score"] = np.random.default_rng(12).random(len(run))
    return run, votes, int((pairs > 1).sum())


@pytest.mark.parametrize("given", ["raw", "checked"])
@pytest.mark.parametrize("engine", ["memory", "streaming-grouped", "streaming-shuffled", "dask", "spark"])
def test_the_resolved_conflicts_are_reported_once_by_every_engine(engine, given, tmp_path, request):
    """The conflicts resolved travel explicitly (on the checked golden set, or the driver's
    own resolution), not on DataFrame.attrs: every engine's diagnostics count them once,
    whether evaluate resolves them (conflicts='max') or the caller did
    (:func:`evalframe.read_golden_set`, then a call without conflicts=)."""
    run, votes, n_conflicted = _conflicting()
    assert n_conflicted > 10  # the case has conflicts to count
    qrels, kw = (votes, {"conflicts": "max"}) if given == "raw" else (
        ef.read_golden_set(votes, conflicts="max"), {})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if engine == "memory":
            _, diag = evaluate_with_diagnostics(run, qrels, ["AP", "R@5"], **kw)
        elif engine.startswith("streaming"):
            ((_, diag), _), _ = _streamed(run, qrels, ["AP", "R@5"], kw, tmp_path / "run", engine.split("-")[1])
        elif engine == "dask":
            import dask.dataframe as dd
            request.getfixturevalue("cluster")
            _, diag = evaluate_with_diagnostics(dd.from_pandas(run, npartitions=3), qrels, ["AP", "R@5"], **kw)
        else:
            session = request.getfixturevalue("spark")
            _, diag = evaluate_with_diagnostics(session.createDataFrame(run), qrels, ["AP", "R@5"], **kw)
    row = diag[diag["check"] == "golden_set_conflicting_labels"]
    assert row["count"].tolist() == [n_conflicted] and row["action"].tolist() == ["resolved: max label"]
