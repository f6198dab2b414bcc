"""The Dask engine against the in-memory engine, on a LocalCluster of 2 worker processes.

Oracle: evalframe's in-memory engine (itself tested against pytrec_eval and trec_eval):
the same rows to the bit, the same diagnostics table and the same warnings.
"""
from __future__ import annotations

import os
import pickle
import signal
import subprocess
import sys
import warnings

import numpy as np
import pandas as pd
import pytest

dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")
import dask  # noqa: E402
from hypothesis import HealthCheck, given, settings, strategies as st  # noqa: E402

import evalframe as ef  # noqa: E402
from evalframe import datasets  # noqa: E402
from evalframe.engine.dask import division_buckets  # noqa: E402
from evalframe.engine.cutting import question_buckets  # noqa: E402
from evalframe.errors import EvalframeInputError, InputProblem  # noqa: E402
from evalframe.evaluation import evaluate_with_diagnostics  # noqa: E402
from tests.engine_checks import caught as _caught, sorted_table as _sorted  # noqa: E402

pytestmark = [pytest.mark.slow,  # `make test-fast` leaves this file out
              pytest.mark.xdist_group("dask")]  # one worker, so the module's cluster starts once

MEASURES = ["R@5", "R@100", "P@5", "RR", "nDCG@10", "AP", "Rprec", "bpref", "Judged@10",
            "NumRel", "NumRelRet", "GMAP", "ERR@10", "nDCG(gain='linear')"]


@pytest.fixture(scope="module")
def client():
    # dashboard on a free port: with None, distributed still serves it on 8787, which a
    # second cluster (another pytest-xdist worker, another checkout's run) finds taken
    with distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                  dashboard_address=":0", memory_limit="2GiB") as cluster, \
            distributed.Client(cluster) as c:
        yield c


def assert_same(run, qrels, dask_run, dask_qrels=None, measures=MEASURES, **kw):
    """The Dask engine's table (sorted), diagnostics and warnings are the in-memory call's."""
    (expected, diag), w_mem = _caught(lambda: evaluate_with_diagnostics(run, qrels, measures, **kw))
    (got, got_diag), w_dask = _caught(lambda: evaluate_with_diagnostics(
        dask_run, qrels if dask_qrels is None else dask_qrels, measures, **kw))
    assert is_dask(got)
    pd.testing.assert_frame_equal(_sorted(got.compute()), _sorted(expected), check_exact=True)
    assert w_dask == w_mem
    pd.testing.assert_frame_equal(got_diag, diag)
    return got, expected


def _pieces(df: pd.DataFrame, n: int) -> list[pd.DataFrame]:
    cuts = np.linspace(0, len(df), n + 1).astype(int)
    return [df.iloc[a:b] for a, b in zip(cuts[:-1], cuts[1:])]


def is_dask(obj) -> bool:
    return hasattr(obj, "npartitions") and hasattr(obj, "compute")


def test_import_evalframe_does_not_import_dask():
    code = ("import sys, evalframe; sso = evalframe.datasets.load_sso(); "
            "evalframe.evaluate(sso.runs, sso.qrels); evalframe.report(sso.runs, sso.qrels); "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('dask', 'distributed')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize("name", ["cranfield", "scifact"])
def test_bundled_collections_identical(client, name):
    c = getattr(datasets, f"load_{name}")()
    got, expected = assert_same(c.runs, c.qrels, dd.from_pandas(c.runs, npartitions=4))
    assert got.npartitions == 4 and len(expected) > 1000
    agg, agg_mem = ef.aggregate(got), ef.aggregate(expected)
    pd.testing.assert_frame_equal(agg.drop(columns=["mean", "value"]), agg_mem.drop(columns=["mean", "value"]))
    np.testing.assert_allclose(agg[["mean", "value"]], agg_mem[["mean", "value"]], rtol=1e-13)


def test_missing_drop_depth_and_dask_qrels_shuffled(client):
    c = datasets.load_cranfield()
    run = c.runs[c.runs["query_id"].astype(int) % 7 != 0]  # some golden questions unanswered
    assert_same(run, c.qrels, dd.from_pandas(run, npartitions=3),
                dd.from_pandas(c.qrels, npartitions=3), missing="drop", depth=20)
    assert_same(run, c.qrels, dd.from_pandas(run, npartitions=3),
                dd.from_pandas(c.qrels, npartitions=3), missing="zero")


def test_run_partitioned_by_question_is_not_shuffled(client, monkeypatch):
    c = datasets.load_cranfield()
    by_q = c.runs.assign(query_id=c.runs["query_id"].astype(int)).set_index("query_id").sort_index(kind="stable")
    d = dd.from_pandas(by_q, npartitions=4, sort=True)
    assert d.known_divisions

    def no_shuffle(*args, **kwargs):
        raise AssertionError("shuffled a run already partitioned by question")

    monkeypatch.setattr(type(d), "set_index", no_shuffle)
    assert_same(c.runs, c.qrels, d, measures=["AP", "nDCG@10", "NumRel"])


def _by_question_pieces(run: pd.DataFrame, n: int) -> list[pd.DataFrame]:
    """The run cut into n pieces of whole questions (as a dataset written question by question)."""
    q = run["query_id"].astype(int)
    run = run.iloc[np.argsort(q.to_numpy(), kind="stable")]
    edges = np.quantile(np.unique(q), np.linspace(0, 1, n + 1)[1:-1])
    piece = np.searchsorted(edges, run["query_id"].astype(int).to_numpy(), side="right")
    return [run[piece == i] for i in range(n)]


@pytest.mark.parametrize("missing", ["zero", "drop"])
def test_partitions_of_disjoint_questions_are_not_shuffled(client, monkeypatch, missing):
    c = datasets.load_cranfield()
    run = c.runs[c.runs["query_id"].astype(int) % 7 != 0]  # some golden questions unanswered
    d = dd.from_delayed([dask.delayed(p) for p in _by_question_pieces(run, 4)], meta=run.iloc[:0])
    calls = []
    set_index = type(d).set_index

    def counted(*args, **kwargs):
        calls.append(1)
        return set_index(*args, **kwargs)
    monkeypatch.setattr(type(d), "set_index", counted)
    assert_same(run, c.qrels, d, missing=missing, duplicates="first")
    assert calls == []
    # a Dask golden set: shuffled alone onto the run's partitions (the run was shuffled too)
    assert_same(run, c.qrels, d, dd.from_pandas(c.qrels, npartitions=3), missing=missing)
    assert len(calls) == 1
    calls.clear()
    shared = _by_question_pieces(run, 4)  # a question's rows in two partitions: shuffled
    q = shared[0]["query_id"].iloc[-1]
    shared[1] = pd.concat([shared[0][shared[0]["query_id"] == q].iloc[::2], shared[1]])
    shared[0] = shared[0].drop(shared[1].index[shared[1]["query_id"] == q], errors="ignore")
    mixed = pd.concat(shared)
    assert_same(mixed, c.qrels, dd.from_delayed([dask.delayed(p) for p in shared], meta=run.iloc[:0]),
                missing=missing)
    assert calls != []


def test_partitions_of_whole_questions_are_read_once(client, tmp_path):
    """The check that no question has rows in two partitions is made on the evaluation's own
    results: each partition is loaded once (it was loaded three times: for the check, for
    the systems and for the evaluation)."""
    c = datasets.load_cranfield()
    pieces = _by_question_pieces(c.runs, 4)

    def load(i):  # shipped by value; each call leaves a mark
        with open(os.path.join(str(tmp_path), f"load-{i}"), "a") as f:
            f.write(".")
        return pieces[i].reset_index(drop=True)

    d = dd.from_map(load, range(4), meta=c.runs.iloc[:0])
    assert_same(c.runs, c.qrels, d, measures=["AP", "nDCG@10"])
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"load-{i}" for i in range(4)]
    assert [(tmp_path / f"load-{i}").read_text() for i in range(4)] == ["."] * 4


def test_a_question_in_two_partitions_stops_the_evaluation_in_place_early(client, tmp_path):
    """Rows in random order, so that any two partitions share questions, each partition slow
    to load the first time: the in-place evaluation is cancelled once two partitions are
    done, before it loads them all (each partition is then loaded as often as the shuffled
    evaluation loads it, which is the in-memory one)."""
    import time
    c = datasets.load_cranfield()
    run = c.runs.iloc[np.random.default_rng(2).permutation(len(c.runs))]
    pieces = _pieces(run, 12)

    def load(i):  # shipped by value; each call leaves a mark
        mark = os.path.join(str(tmp_path), f"load-{i}")
        first = not os.path.exists(mark)
        with open(mark, "a") as f:
            f.write(".")
        if first:
            time.sleep(1)
        return pieces[i].reset_index(drop=True)

    d = dd.from_map(load, range(12), meta=c.runs.iloc[:0])
    assert_same(run, c.qrels, d, measures=["AP", "nDCG@10"])
    loads = [len((tmp_path / f"load-{i}").read_text()) for i in range(12)]
    assert min(loads) < max(loads)  # some partitions were never evaluated in place


@pytest.mark.parametrize("missing", ["zero", "drop"])
def test_partitions_of_whole_questions_without_some_systems(client, missing):
    """A partition lacking some system of the run is evaluated again knowing them all (the
    lacking system scored 0 there, or its questions dropped); a system only in the last
    partition, and golden questions no partition holds, too."""
    c = datasets.load_cranfield()
    run = c.runs[c.runs["query_id"].astype(int) % 7 != 0]  # golden questions no partition holds
    pieces = _by_question_pieces(run, 4)
    pieces[1] = pieces[1][pieces[1]["system"] != "bm25"]
    pieces[2] = pieces[2][~pieces[2]["system"].isin(["tfidf", "hybrid_rrf"])]
    pieces[3] = pd.concat([pieces[3], pieces[3].iloc[:40].assign(system="rare")])
    whole = pd.concat(pieces)
    got, _ = assert_same(whole, c.qrels, dd.from_delayed([dask.delayed(p) for p in pieces], meta=run.iloc[:0]),
                         missing=missing, measures=["AP", "nDCG@10", "R@100", "NumRel"])
    assert got.npartitions == 5  # the four partitions and the golden questions none of them holds


def test_division_buckets():
    divs = (1, 50, 100, 225)
    q = pd.Series(["1", "49", "50", "99", "100", "225", "x", "300"])
    assert division_buckets(q, divs).tolist() == [0, 0, 1, 1, 2, 2, 0, 2]
    sdivs = ("a", "m", "z")
    assert division_buckets(pd.Series(["a", "l", "m", "zz"]), sdivs).tolist() == [0, 0, 1, 1]


def test_buckets_compare_ids_as_strings():
    a = question_buckets(pd.Series([1, 2, 30]), 7)
    b = question_buckets(pd.Series(["1", "2", "30"]), 7)
    c = question_buckets(pd.Series([1.0, 2.0, 30.0]), 7)
    d = question_buckets(pd.Series([1, 2, 30], dtype=object), 7)
    assert a.tolist() == b.tolist() == c.tolist() == d.tolist() and ((0 <= a) & (a < 7)).all()
    assert len(set(question_buckets(pd.Series([f"q{i}" for i in range(1000)]), 4))) == 4


def test_duplicates_first_keeps_the_run_order_and_systems_absent_from_partitions(client):
    rng = np.random.default_rng(3)
    rows = []
    for q in range(40):
        for s in (["a", "b"] if q % 5 else ["a", "b", "rare"]):
            docs = rng.choice(30, size=12)  # repeated documents
            for d in docs:
                rows.append((s, str(q), f"d{d}", float(rng.integers(0, 4))))
    run = pd.DataFrame(rows, columns=["system", "query_id", "doc_id", "score"])
    qrels = pd.DataFrame({"query_id": [str(q) for q in range(45) for _ in range(3)],
                          "doc_id": [f"d{d}" for _ in range(45) for d in (1, 2, 3)],
                          "relevance": np.tile([2, 1, -1], 45)})
    for how in ("first", "max"):
        assert_same(run, qrels, dd.from_pandas(run, npartitions=5), duplicates=how)


def test_system_without_golden_questions_and_no_shared_question(client):
    c = datasets.load_sso()
    run = pd.concat([c.runs, c.runs.assign(system="lost", query_id="nowhere")], ignore_index=True)
    assert_same(run, c.qrels, dd.from_pandas(run, npartitions=2), measures=["RR"])
    pd.testing.assert_frame_equal(ef.diagnostics(dd.from_pandas(run, npartitions=2), c.qrels),
                                  ef.diagnostics(run, c.qrels))
    lost = c.runs.assign(query_id="nowhere")
    with pytest.raises(EvalframeInputError, match="share no question id"):
        ef.evaluate(lost, c.qrels)
    with pytest.raises(EvalframeInputError, match="share no question id"):
        ef.evaluate(dd.from_pandas(lost, npartitions=1), c.qrels)


def test_input_error_on_a_worker_arrives_as_evalframe_input_error(client):
    c = datasets.load_cranfield()
    run = c.runs.copy()
    run.loc[run.index[-3:], "score"] = np.nan
    with pytest.raises(EvalframeInputError, match="score"):
        ef.evaluate(dd.from_pandas(run, npartitions=3), c.qrels).compute()


def test_input_error_pickles():
    err = EvalframeInputError("run", [InputProblem("3 scores are NaN", "fix them")])
    back = pickle.loads(pickle.dumps(err))
    assert type(back) is EvalframeInputError and str(back) == str(err) and back.table == "run"


def test_engine_dask_on_a_parquet_dataset(client, tmp_path):
    c = datasets.load_cranfield()
    path = tmp_path / "run"
    path.mkdir()
    for i, part in enumerate(_pieces(c.runs, 3)):
        part.to_parquet(path / f"part-{i}.parquet", index=False)
    got = ef.evaluate(str(path), c.qrels, ["AP", "nDCG@10"], engine="dask")
    assert is_dask(got)
    pd.testing.assert_frame_equal(_sorted(got.compute()), _sorted(ef.evaluate(c.runs, c.qrels, ["AP", "nDCG@10"])))
    small = ef.evaluate(c.runs, c.qrels, ["AP"], engine="dask")
    assert is_dask(small)
    pd.testing.assert_frame_equal(_sorted(small.compute()), _sorted(ef.evaluate(c.runs, c.qrels, ["AP"])))
    with pytest.raises(ValueError, match="engine must be"):
        ef.evaluate(c.runs, c.qrels, engine="ray")


@pytest.mark.parametrize("layout", ["rows", "questions"])
def test_a_worker_killed_mid_computation(client, tmp_path, layout):
    """Killed while reading a partition: rows cut anywhere (evaluated in place, found to
    share questions, shuffled), or whole questions (evaluated in place)."""
    c = datasets.load_cranfield()
    pieces = _pieces(c.runs, 4) if layout == "rows" else _by_question_pieces(c.runs, 4)
    marker = str(tmp_path / "killed")

    def load(i):  # a local function: shipped to the workers by value
        if i == 2 and not os.path.exists(marker):
            open(marker, "w").close()
            os.kill(os.getpid(), signal.SIGKILL)  # the worker process dies once, mid-computation
        return pieces[i].reset_index(drop=True)

    d = dd.from_map(load, range(4), meta=c.runs.iloc[:0])
    got = ef.evaluate(d, c.qrels, ["AP", "nDCG@10", "R@10"])
    assert os.path.exists(marker)
    pd.testing.assert_frame_equal(_sorted(got.compute()), _sorted(ef.evaluate(c.runs, c.qrels, ["AP", "nDCG@10", "R@10"])))


@st.composite
def cases(draw):
    numeric = draw(st.booleans())
    nq = draw(st.integers(2, 14))
    qid = (lambda i: str(i * 7 + 1)) if numeric else (lambda i: f"q{i:02d}")
    systems = draw(st.lists(st.sampled_from(["s1", "s2", "s3"]), min_size=1, max_size=3, unique=True))
    rows, judged = [], []
    for i in range(nq):
        if draw(st.integers(0, 3)) > 0:  # judged question
            for d in draw(st.lists(st.integers(0, 9), max_size=6, unique=True)):
                judged.append((qid(i), f"d{d}", draw(st.sampled_from([-1, 0, 1, 2, 3]))))
        for s in systems:
            if draw(st.integers(0, 3)) == 0:
                continue  # a missing question for this system
            for d in draw(st.lists(st.integers(0, 9), max_size=7, unique=True)):
                rows.append((s, qid(i), f"d{d}", float(draw(st.sampled_from([0.5, 1.0, 2.0])))))  # ties
    judged.append((qid(0), "d0", 1))
    rows.append((systems[0], qid(0), "d0", 1.0))
    qrels = pd.DataFrame(judged, columns=["query_id", "doc_id", "relevance"]).drop_duplicates(
        ["query_id", "doc_id"])
    run = pd.DataFrame(rows, columns=["system", "query_id", "doc_id", "score"]).drop_duplicates(
        ["system", "query_id", "doc_id"])
    options = {"missing": draw(st.sampled_from(["zero", "drop"])), "rel": draw(st.sampled_from([1, 2])),
               "ties": draw(st.sampled_from(["doc_id_desc", "doc_id_asc"]))}
    return run, qrels, draw(st.integers(1, 4)), options


@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cases())
def test_hypothesis_cases_identical(client, case):
    run, qrels, parts, options = case
    assert_same(run, qrels, dd.from_pandas(run, npartitions=parts), **options,
                measures=["P@3", "R@5", "RR", "nDCG@5", "AP", "bpref", "Judged@3", "NumRel"])


@pytest.mark.parametrize("parts", [1, 2, 3])
def test_system_without_judged_documents_as_in_memory(client, parts):
    """A system none of whose documents is judged is named (the placeholder question every
    partition adds does not count as judged); one whose documents are judged for a
    question another partition holds is not (as in memory, which sees every label)."""
    qrels = pd.DataFrame({"query_id": ["q0", "q1", "q2"], "doc_id": ["d0", "d5", "d7"], "relevance": [1, 1, 0]})
    run = pd.DataFrame({"system": ["a", "b", "a", "c", "a", "b"], "query_id": ["q0", "q0", "q1", "q1", "q2", "q2"],
                        "doc_id": ["d0", "d9", "d5", "d0", "d7", "d8"], "score": 1.0})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        diag = ef.diagnostics(run, qrels)
    row = diag[diag["check"] == "system_without_judged_documents"]
    assert row["system"].tolist() == ["b"] and row["count"].tolist() == [2]  # c: d0 is judged, for q0
    assert_same(run, qrels, dd.from_pandas(run, npartitions=parts), measures=["P@3"])
    assert_same(run, qrels, dd.from_pandas(run, npartitions=parts), dd.from_pandas(qrels, npartitions=2),
                measures=["P@3"])


@pytest.mark.parametrize("parts", [1, 3])
def test_any_question_id_and_integer_system_ids(client, parts):
    """No question id is reserved: "-999999999999999999" (once the id of a placeholder
    question every partition added, and silently dropped) is scored as any other; integer
    system ids, and a system missing from most partitions, are told to every partition."""
    ids = ["-999999999999999999", "q1", "q2", "q3", "q4", "q5"]
    qrels = pd.DataFrame({"query_id": ids, "doc_id": "d1", "relevance": [1, 2, 0, 1, 1, 3]})
    run = pd.DataFrame({"system": [7] * 12 + [8], "query_id": ids * 2 + ["q3"],
                        "doc_id": ["d1"] * 6 + ["d2"] * 6 + ["d1"], "score": np.arange(13.0)})
    got, expected = assert_same(run, qrels, dd.from_pandas(run, npartitions=parts), measures=["P@1", "AP"])
    assert "-999999999999999999" in set(expected["query_id"])


# ---------------------------------------------------------------- columns=, conflicts=, rollup=
def _conflicting(qrels: pd.DataFrame) -> pd.DataFrame:
    """The golden set with a second, different label on every 7th pair, spread through it."""
    extra = qrels.iloc[::7].assign(relevance=lambda d: (d["relevance"] + 1) % 4)
    return pd.concat([qrels, extra], ignore_index=True).iloc[
        np.random.default_rng(5).permutation(len(qrels) + len(extra))].reset_index(drop=True)


def test_columns_renamed_before_the_shuffle(client):
    c = datasets.load_cranfield()
    names = {"question": "query_id", "passage": "doc_id", "sim": "score", "grade": "relevance"}
    inverse = {v: k for k, v in names.items()}
    run, qrels = c.runs.rename(columns=inverse), c.qrels.rename(columns=inverse)
    assert_same(run, qrels, dd.from_pandas(run, npartitions=3), columns=names)
    assert_same(run, qrels, dd.from_pandas(run, npartitions=3), dd.from_pandas(qrels, npartitions=2),
                columns=names, measures=["AP", "nDCG@10"])


@pytest.mark.parametrize("how", ["max", "min", "majority"])
def test_conflicts_resolved_once_or_per_partition(client, how):
    c = datasets.load_cranfield()
    qrels = _conflicting(c.qrels)
    got, _ = assert_same(c.runs, qrels, dd.from_pandas(c.runs, npartitions=3), conflicts=how,
                         measures=["AP", "nDCG@10", "NumRel"])  # broadcast: resolved on the client
    assert_same(c.runs, qrels, dd.from_pandas(c.runs, npartitions=3), dd.from_pandas(qrels, npartitions=4),
                conflicts=how, measures=["AP", "nDCG@10", "NumRel"])  # shuffled: per partition
    diag = ef.diagnostics(dd.from_pandas(c.runs, npartitions=3), dd.from_pandas(qrels, npartitions=4),
                          conflicts=how)
    row = diag[diag["check"] == "golden_set_conflicting_labels"]
    assert row["count"].tolist() == [len(c.qrels.iloc[::7])] and row["examples"].iloc[0].count(",") == 4
    with pytest.raises(EvalframeInputError):
        ef.evaluate(dd.from_pandas(c.runs, npartitions=3), dd.from_pandas(qrels, npartitions=4))


def test_conflict_examples_of_ids_with_colons_in_golden_set_order(client):
    """Pairs are told apart by their ids, not by ``query_id:doc_id`` strings: ("a:b", "c")
    is not the conflicting pair ("a", "b:c"), so the examples keep the golden set's order."""
    qrels = pd.DataFrame({"query_id": ["a:b", "e", "a", "e", "a"], "doc_id": ["c", "f", "b:c", "f", "b:c"],
                          "relevance": [1, 1, 0, 2, 1]})
    run = pd.DataFrame({"query_id": ["a", "e", "a:b"], "doc_id": ["b:c", "f", "c"], "score": [1.0, 1.0, 1.0]})
    expected = ef.diagnostics(run, qrels, conflicts="max")
    got = ef.diagnostics(dd.from_pandas(run, npartitions=1), dd.from_pandas(qrels, npartitions=2), conflicts="max")
    row = got[got["check"] == "golden_set_conflicting_labels"]
    assert row["examples"].tolist() == ["e:f, a:b:c"]  # e:f appears first (row 1), a/b:c at row 2
    pd.testing.assert_frame_equal(got, expected)


def _chunked(run: pd.DataFrame, qrels: pd.DataFrame):
    """Each document as 1..3 chunks ("d#0", "d#1", ...), ranked together; and the map."""
    rng = np.random.default_rng(11)
    k = rng.integers(1, 4, size=len(run))
    rows = run.loc[run.index.repeat(k)].copy()
    part = np.concatenate([np.arange(n) for n in k])
    rows["doc_id"] = rows["doc_id"].astype(str) + "#" + part.astype(str)
    rows["score"] = rows["score"] - part * 1e-3
    rows = rows.drop_duplicates(["system", "query_id", "doc_id"]).reset_index(drop=True)
    judged = pd.concat([qrels.assign(doc_id=qrels["doc_id"].astype(str) + "#0"),  # a page's chunks merged
                        qrels.iloc[::3].assign(doc_id=qrels["doc_id"].iloc[::3].astype(str) + "#1", relevance=0)],
                       ignore_index=True)
    mapping = pd.DataFrame({"chunk_id": rows["doc_id"], "page_id": rows["doc_id"].str.split("#").str[0]}
                           ).drop_duplicates()
    return rows, judged, mapping


def test_rollup_per_question_inside_each_partition(client):
    c = datasets.load_cranfield()
    run, qrels, mapping = _chunked(c.runs, c.qrels)
    got, expected = assert_same(run, qrels, dd.from_pandas(run, npartitions=3), rollup=mapping,
                                measures=["AP", "nDCG@10", "P@5"])
    assert "unit" in expected.columns
    with_page = run.assign(page=run["doc_id"].str.split("#").str[0])
    assert_same(with_page, qrels, dd.from_pandas(with_page, npartitions=3), dd.from_pandas(qrels, npartitions=2),
                rollup="page", measures=["AP", "nDCG@10"])
    diag = ef.diagnostics(dd.from_pandas(run, npartitions=3), qrels, rollup=mapping)
    assert {"rollup_run_rows_collapsed", "rollup_golden_rows_merged"} <= set(diag["check"])
    pd.testing.assert_frame_equal(diag, ef.diagnostics(run, qrels, rollup=mapping))


@pytest.mark.parametrize("ids", ["integers", "mixed"])
def test_examples_of_integer_and_mixed_question_ids_are_the_in_memory_ones(client, ids):
    """Questions 1..30 (and "x"): examples are listed numerically only when every golden-set
    id is an integer, though a partition holding only integers would order its own numerically
    (and the partition holding "x" has no record of questions without a relevant document)."""
    names = [str(i) for i in range(1, 31)] + (["x"] if ids == "mixed" else [])
    qrels = pd.DataFrame({"query_id": names, "doc_id": "d", "relevance": [0] * 30 + [1] * (len(names) - 30)})
    run = pd.DataFrame({"query_id": np.repeat(names, 2), "doc_id": ["d", "e"] * len(names), "score": 1.0,
                        "system": "s"})
    run = run[run["query_id"] != "7"]  # a golden question unanswered
    extra = pd.DataFrame({"query_id": ["1000", "200"], "doc_id": "d", "score": 1.0, "system": "s"})
    run = pd.concat([run, extra], ignore_index=True)  # run-only questions, dropped
    position = {q: i for i, q in enumerate(dict.fromkeys(run["query_id"]))}
    piece = run["query_id"].map(position).to_numpy() // 11  # whole questions: 1..11, 12..22, the rest
    for d in (dd.from_pandas(run, npartitions=3),  # rows cut anywhere: shuffled by question
              dd.from_delayed([dask.delayed(run[piece == i]) for i in range(3)], meta=run.iloc[:0])):
        assert_same(run, qrels, d, measures=["AP", "P@5"])
    expected = ef.diagnostics(run, qrels)
    first = "1, 10, 11, 12, 13" if ids == "mixed" else "1, 2, 3, 4, 5"
    assert expected.loc[expected["check"] == "golden_questions_without_relevant", "examples"].tolist() == [first]


def test_diagnostics_with_measures_check_shallow_rankings_as_in_memory(client):
    ds = ef.datasets.load_cranfield()
    for run in (ds.runs.sample(frac=1, random_state=4, ignore_index=True), ds.runs.reset_index(drop=True)):
        want = ef.diagnostics(run, ds.qrels, ["nDCG@10", "R@1000"])
        assert "shallow_rankings" in set(want["check"])
        got = ef.diagnostics(dd.from_pandas(run, npartitions=3), ds.qrels, ["nDCG@10", "R@1000"])
        pd.testing.assert_frame_equal(got, want)


def test_a_rank_only_run_is_ordered_by_rank_as_in_memory(client):
    ds = ef.datasets.load_cranfield()
    run = ds.runs.reset_index(drop=True)
    run["rank"] = run.groupby(["system", "query_id"])["score"].rank(method="min", ascending=False).astype(int)
    run = run.drop(columns="score").sample(frac=1, random_state=6, ignore_index=True)
    assert_same(run, ds.qrels, dd.from_pandas(run, npartitions=4))


@pytest.mark.parametrize("moved", [False, True])
def test_a_measure_registered_on_the_client_computes_on_the_workers(client, moved):
    """A measure registered with register_measure in the client (a closure: the workers
    cannot import it) travels with the tasks; registered again with another function,
    the workers use the new one. Evaluated in place (pandas golden set) and moved (Dask)."""
    c = datasets.load_cranfield()
    run = c.runs[c.runs["system"].isin(["bm25", "tfidf"])]
    qrels = dd.from_pandas(c.qrels, npartitions=2) if moved else c.qrels
    try:
        for weight in (1.0, 3.0):
            def top_label(J, measures, w=weight):
                return [J.per_group(np.where(J.rank == 1, np.maximum(J.label, 0) * w, 0.0)) for m in measures]
            ef.register_measure("TopLabelX", top_label, cutoff="none", replace=True)
            got = ef.evaluate(dd.from_pandas(run, npartitions=3), qrels, ["TopLabelX", "RR"])
            want = ef.evaluate(run, c.qrels, ["TopLabelX", "RR"])
            pd.testing.assert_frame_equal(_sorted(got.compute()), _sorted(want), check_exact=True)
            # the oracle: a loop over the questions, the label of each ranking's first document
            labels = {(q, d): r for q, d, r in c.qrels[["query_id", "doc_id", "relevance"]].itertuples(index=False)}
            first = run.sort_values(["system", "query_id", "score", "doc_id"], ascending=[True, True, False, False])
            first = first.drop_duplicates(["system", "query_id"])
            oracle = {(s, q): weight * max(labels.get((q, d), 0), 0) for s, q, d in
                      first[["system", "query_id", "doc_id"]].itertuples(index=False)}
            mine = want[want.measure == "TopLabelX"]
            assert all(oracle[(s, q)] == v for s, q, v in mine[["system", "query_id", "value"]].itertuples(index=False)
                       if (s, q) in oracle)
            assert mine["value"].max() >= 1.0 * weight
    finally:
        ef.measures.REGISTRY.unregister("TopLabelX")


def test_rankings_checked_against_shallow_measures_on_every_engine(client, tmp_path):
    """evaluate_with_diagnostics(shallow=): rankings are checked against those measures'
    cutoffs, not every measure computed (the report's curve), in memory, streamed (grouped
    and shuffled Parquet) and on Dask: each the in-memory call's table, diagnostics and
    warnings on the same rows."""
    c = datasets.load_cranfield()
    runs = c.runs.reset_index(drop=True)
    short = {s: int((p.groupby("query_id").size() < 100).sum()) for s, p in runs.groupby("system")}
    assert short == {**dict.fromkeys(short, 0), "tfidf": 1}  # the oracle: a count over the run
    mixed = runs.sample(frac=1, random_state=5, ignore_index=True)
    grouped, shuffled = tmp_path / "grouped", tmp_path / "shuffled"
    for d, frame in ((grouped, runs), (shuffled, mixed)):
        d.mkdir()
        for i, rows in enumerate(np.array_split(np.arange(len(frame)), 3)):
            frame.iloc[rows].to_parquet(d / f"part-{i}.parquet", index=False)
    budget = len(runs) * 40  # far below the run's size: streamed in parts
    engines = {"grouped": (str(grouped), runs, {"memory_budget": budget}),
               "shuffled": (str(shuffled), mixed, {"memory_budget": budget}),
               "dask": (dd.from_pandas(runs, npartitions=3), runs, {})}

    def answer(run, shallow, **kw):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            per_q, diag = evaluate_with_diagnostics(run, c.qrels, ["R@5", "R@100"], shallow=shallow, **kw)
        per_q = per_q.compute() if is_dask(per_q) else per_q
        return _sorted(per_q), diag, [str(w.message) for w in caught if w.category is ef.ShallowRankingWarning]
    for shallow, rows in ((["R@5"], []), (None, [("tfidf", 1)])):
        for name, (run, frame, kw) in engines.items():
            memory = answer(frame, shallow)
            got = memory[1][memory[1]["check"] == "shallow_rankings"]
            assert list(zip(got["system"], got["count"])) == rows and len(memory[2]) == len(rows)
            per_q, diag, shallow_warnings = answer(run, shallow, **kw)
            pd.testing.assert_frame_equal(per_q, memory[0], check_exact=True, obj=name)
            pd.testing.assert_frame_equal(diag, memory[1], obj=name)
            assert shallow_warnings == memory[2], name


@pytest.mark.parametrize("layout", ["by_question", "shuffled"])
def test_span_golden_set_and_chunk_tables_on_worker_processes(client, layout):
    """Issue 27 on the cluster: the chunk tables and the spans are pickled to worker
    processes once, each partition judges its chunkings on its questions' labels; the
    values, warnings and diagnostics are the in-memory call's (the help-centre case: two
    chunkings of one corpus, one system each, and a token budget)."""
    from tests.test_spans import CHUNKS_A, CHUNKS_B, help_centre
    spans, _, _, run = help_centre(40)
    if layout == "by_question":
        run = run.sort_values("query_id", kind="stable").reset_index(drop=True)
    measures = ["R@5", "SpanRecall@5", "SpanRecall(tokens=200)", "R(tokens=200)"]
    chunks = {"a": CHUNKS_A, "b": CHUNKS_B}
    want, w_want = _caught(lambda: evaluate_with_diagnostics(run, spans, measures, chunks=chunks))
    got, w_got = _caught(lambda: evaluate_with_diagnostics(dd.from_pandas(run, npartitions=4), spans, measures,
                                                           chunks=chunks))
    pd.testing.assert_frame_equal(_sorted(got[0].compute()), _sorted(want[0]))
    pd.testing.assert_frame_equal(got[1], want[1])
    assert w_got == w_want and "chunkings_differ" in set(want[1]["check"])
