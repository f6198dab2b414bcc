"""``evalframe.retrieve``: a retriever called over the golden set's questions, into a run.

The expectations are written out in each test (the ids, ranks and scores a retriever's
answer must give, the measures computed by hand); the run is always checked by feeding
it to :func:`evalframe.evaluate`.
"""
from __future__ import annotations

import sys
import warnings

import numpy as np
import pandas as pd
import pytest

import evalframe as ef
from evalframe import retrieval

RUN = ["query_id", "doc_id", "rank", "score", "latency_s"]
FAILURES = ["query_id", "text", "error", "message", "latency_s", "traceback"]

#: question text -> the ranked ids a toy retriever returns for it
LISTS = {
    "what is a": ["x", "a2", "a1"],
    "what is b": ["b1", "y"],
    "what is c": ["c9", "c1", "c2", "c3"],
    "what is d": [],
    "what is e": ["e1"],
}
QUESTIONS = pd.DataFrame({"query_id": ["q1", "q2", "q3", "q4", "q5"], "text": list(LISTS)})


def by_text(text: str) -> list[str]:
    return list(LISTS[text])


def quiet(call, *args, **kwargs):
    """Call with every warning an error: the test asserts none is issued."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return call(*args, **kwargs)


def rows(run: pd.DataFrame) -> list[tuple]:
    return list(run[["query_id", "doc_id", "rank"]].itertuples(index=False, name=None))


# ---------------------------------------------------------------- the run's shape
def test_ids_only_give_ranks_and_nan_scores():
    run, failures = quiet(ef.retrieve, by_text, QUESTIONS, progress=False)
    assert run.columns.tolist() == RUN
    assert rows(run) == [("q1", "x", 1), ("q1", "a2", 2), ("q1", "a1", 3), ("q2", "b1", 1), ("q2", "y", 2),
                         ("q3", "c9", 1), ("q3", "c1", 2), ("q3", "c2", 3), ("q3", "c3", 4), ("q5", "e1", 1)]
    assert run["score"].dtype == np.float64 and run["score"].isna().all()
    assert run["rank"].dtype == np.int64 and run["latency_s"].dtype == np.float64
    assert pd.api.types.is_string_dtype(run["query_id"]) and pd.api.types.is_string_dtype(run["doc_id"])
    assert failures.columns.tolist() == FAILURES and len(failures) == 0


def test_system_is_the_first_column():
    run, _ = ef.retrieve(by_text, QUESTIONS, system="bm25", progress=False)
    assert run.columns.tolist() == ["system", *RUN]
    assert set(run["system"]) == {"bm25"}


@pytest.mark.parametrize("answer", [
    pytest.param(lambda: (["d1", "d2", "d3"], [0.9, 0.5, 0.1]), id="tuple of lists"),
    pytest.param(lambda: (np.array(["d1", "d2", "d3"]), np.array([0.9, 0.5, 0.1], np.float32)), id="tuple of arrays"),
    pytest.param(lambda: [("d1", 0.9), ("d2", 0.5), ("d3", 0.1)], id="pairs"),
    pytest.param(lambda: [["d1", 0.9], ["d2", 0.5], ["d3", 0.1]], id="pairs as lists"),
    pytest.param(lambda: [{"id": "d1", "score": 0.9}, {"id": "d2", "score": 0.5}, {"id": "d3", "score": 0.1}],
                 id="dicts id"),
    pytest.param(lambda: [{"doc_id": "d1", "score": 0.9, "text": "..."}, {"doc_id": "d2", "score": 0.5},
                          {"doc_id": "d3", "score": 0.1}], id="dicts doc_id"),
    pytest.param(lambda: [{"chunk_id": "d1", "score": 0.9, "metadata": {"id": "p"}},
                          {"chunk_id": "d2", "score": 0.5}, {"chunk_id": "d3", "score": 0.1}], id="dicts chunk_id"),
    pytest.param(lambda: {"d1": 0.9, "d2": 0.5, "d3": 0.1}, id="dict id -> score"),
])
def test_every_answer_shape_gives_the_same_run(answer):
    run, failures = quiet(ef.retrieve, lambda text: answer(), {"q1": "anything"}, progress=False)
    assert rows(run) == [("q1", "d1", 1), ("q1", "d2", 2), ("q1", "d3", 3)]
    np.testing.assert_allclose(run["score"], [0.9, 0.5, 0.1], rtol=1e-6)
    assert len(failures) == 0


@pytest.mark.parametrize("answer", [
    pytest.param(["7", "3", "12"], id="list of str"),
    pytest.param([7, 3, 12], id="list of int"),
    pytest.param(np.array([7, 3, 12]), id="int array"),
    pytest.param(pd.Series([7, 3, 12]), id="Series"),
    pytest.param(("7", "3", "12"), id="tuple of three ids"),
    pytest.param([{"id": 7}, {"id": 3}, {"id": 12}], id="dicts without score"),
])
def test_ids_without_scores_any_container(answer):
    run, _ = quiet(ef.retrieve, lambda text: answer, {"q1": "anything"}, progress=False)
    assert rows(run) == [("q1", "7", 1), ("q1", "3", 2), ("q1", "12", 3)]
    assert run["score"].isna().all()


def test_int_query_ids_are_str():
    run, _ = ef.retrieve(lambda t: ["d"], {1: "one", 2: "two"}, progress=False)
    assert run["query_id"].tolist() == ["1", "2"]


# ---------------------------------------------------------------- k
def test_k_keeps_the_first_k_returned():
    many = [f"d{i}" for i in range(20)]
    run, _ = ef.retrieve(lambda t: many, {"q1": "a", "q2": "b"}, k=5, progress=False)
    assert run["doc_id"].tolist() == many[:5] * 2 and run["rank"].tolist() == [1, 2, 3, 4, 5] * 2
    run, _ = ef.retrieve(lambda t: many, {"q1": "a"}, k=None, progress=False)
    assert run["doc_id"].tolist() == many and run["rank"].tolist() == list(range(1, 21))
    run, _ = ef.retrieve(lambda t: many, {"q1": "a"}, progress=False)
    assert len(run) == 10  # the default k


def test_duplicates_keep_the_first_and_are_removed_before_the_cutoff():
    answer = [("d1", 0.9), ("d2", 0.8), ("d1", 0.7), (2, 0.6), ("2", 0.5), ("d3", 0.4)]
    with pytest.warns(ef.RetrieverOutputWarning, match=r"1 questions .*returned twice.*q1: d1") as caught:
        run, _ = ef.retrieve(lambda t: answer, {"q1": "a"}, k=3, progress=False)
    assert len(caught) == 1
    assert rows(run) == [("q1", "d1", 1), ("q1", "d2", 2), ("q1", "2", 3)]
    assert run["score"].tolist() == [0.9, 0.8, 0.6]


# ---------------------------------------------------------------- batches
def test_batch_mode_gives_the_same_run_in_batches_of_at_most_n():
    seen = []

    def batch(texts):
        seen.append(list(texts))
        return [by_text(t) for t in texts]

    single, _ = ef.retrieve(by_text, QUESTIONS, progress=False)
    batched, failures = quiet(ef.retrieve, batch, QUESTIONS, batch_size=2, progress=False)
    assert seen == [["what is a", "what is b"], ["what is c", "what is d"], ["what is e"]]
    pd.testing.assert_frame_equal(single.drop(columns="latency_s"), batched.drop(columns="latency_s"))
    assert len(failures) == 0


def test_a_failing_batch_records_each_of_its_questions():
    def batch(texts):
        if "what is c" in texts:
            raise ConnectionError("index unreachable")
        return [by_text(t) for t in texts]

    with pytest.warns(ef.QuestionsFailedWarning, match=r"2 of 5 questions failed"):
        run, failures = ef.retrieve(batch, QUESTIONS, batch_size=2, progress=False)
    assert failures["query_id"].tolist() == ["q3", "q4"]
    assert failures["error"].tolist() == ["ConnectionError"] * 2
    assert failures["message"].tolist() == ["index unreachable"] * 2
    assert sorted(run["query_id"].unique()) == ["q1", "q2", "q5"]


def test_a_batch_answer_of_the_wrong_length_is_a_clear_error():
    def short(texts):  # one result too few for a batch of two, right for a batch of one
        return [["d1"]] * (len(texts) - 1 if len(texts) > 1 else 1)

    with pytest.raises(ValueError, match=r"retrieve: fn returned 1 results for a batch of 2 questions"):
        ef.retrieve(short, QUESTIONS, batch_size=2, errors="raise", progress=False)
    with pytest.warns(ef.QuestionsFailedWarning, match="4 of 5 questions failed"):
        run, failures = ef.retrieve(short, QUESTIONS, batch_size=2, progress=False)
    assert failures["query_id"].tolist() == ["q1", "q2", "q3", "q4"]
    assert failures["message"].str.contains("1 results for a batch of 2").all()
    assert rows(run) == [("q5", "d1", 1)]


# ---------------------------------------------------------------- failures
def flaky(text: str) -> list[str]:
    if text == "what is c":
        raise TimeoutError("read timed out")
    return by_text(text)


def test_failures_are_recorded_and_warned_and_the_loop_goes_on():
    with pytest.warns(ef.QuestionsFailedWarning, match=r"1 of 5 questions failed.*q3: TimeoutError: read timed out"):
        result = ef.retrieve(flaky, QUESTIONS, progress=False)
    run, failures = result
    assert run is result.run and failures is result.failures
    assert "q3" not in set(run["query_id"]) and {"q1", "q2", "q5"} <= set(run["query_id"])
    assert failures.columns.tolist() == FAILURES
    row = failures.iloc[0]
    assert (row["query_id"], row["text"], row["error"], row["message"]) == (
        "q3", "what is c", "TimeoutError", "read timed out")
    assert "TimeoutError: read timed out" in row["traceback"] and "in flaky" in row["traceback"]
    assert row["latency_s"] >= 0
    assert issubclass(ef.QuestionsFailedWarning, ef.EvalframeWarning)
    assert "1 failed" in repr(result)


def test_errors_raise_propagates_the_first_exception_and_stops():
    calls = []

    def fn(text):
        calls.append(text)
        return flaky(text)

    with pytest.raises(TimeoutError, match="read timed out") as info:
        ef.retrieve(fn, QUESTIONS, errors="raise", progress=False)
    assert calls == ["what is a", "what is b", "what is c"]
    assert any("'q3'" in note for note in info.value.__notes__)


@pytest.mark.parametrize("answer, error, message", [
    ("d1", TypeError, "must be a list of ids"),
    (None, TypeError, "got NoneType"),
    (42, TypeError, "got int"),
    ([("d1", 0.9, "extra")], ValueError, r"\(id, score\) pairs"),
    ((["d1", "d2"], [0.9]), ValueError, "2 ids and 1 scores"),
    ((["d1"], ["high"]), ValueError, "scores must be numbers"),
    ([{"id": "c1", "doc_id": "d1"}], ValueError, "both 'doc_id' and 'id'"),
    ([{"name": "d1"}], ValueError, "no id key"),
    ([{"id": "d1"}, {"doc_id": "d2"}], ValueError, "lacks its 'id' key"),
    (["d1", None], ValueError, "missing or empty id"),
    (["d1", "  "], ValueError, "missing or empty id"),
    ([1.5], ValueError, "ids must be str or int"),
    ([{"id": ["d1"]}], ValueError, "ids must be str or int"),
])
def test_an_unreadable_answer_is_a_failure_of_its_question(answer, error, message):
    fn = lambda text: answer if text == "b" else ["ok"]  # noqa: E731
    with pytest.raises(error, match=message):
        ef.retrieve(fn, {"q1": "a", "q2": "b"}, errors="raise", progress=False)
    with pytest.warns(ef.QuestionsFailedWarning, match="1 of 3 questions failed"):
        run, failures = ef.retrieve(fn, {"q1": "a", "q2": "b", "q3": "c"}, progress=False)
    assert run["query_id"].tolist() == ["q1", "q3"]
    assert failures["query_id"].tolist() == ["q2"] and failures["error"].tolist() == [error.__name__]
    assert failures["message"].str.contains("question 'q2'").all()


def test_an_empty_answer_is_no_failure():
    run, failures = quiet(ef.retrieve, lambda t: [], {"q1": "a"}, progress=False)
    assert len(run) == 0 and run.columns.tolist() == RUN and len(failures) == 0


# ---------------------------------------------------------------- latency
def test_latency_is_per_question_and_a_batch_shares_its_wall_time(monkeypatch):
    clock = [100.0]
    monkeypatch.setattr(retrieval, "perf_counter", lambda: clock[0])
    cost = {"what is a": 1.0, "what is b": 2.0, "what is c": 4.0, "what is d": 8.0, "what is e": 16.0}

    def single(text):
        clock[0] += cost[text]
        return by_text(text)

    def batch(texts):
        clock[0] += sum(cost[t] for t in texts)
        return [by_text(t) for t in texts]

    run, _ = ef.retrieve(single, QUESTIONS, progress=False)
    assert run.groupby("query_id")["latency_s"].agg(["min", "max"]).to_dict("list") == {
        "min": [1.0, 2.0, 4.0, 16.0], "max": [1.0, 2.0, 4.0, 16.0]}
    run, _ = ef.retrieve(batch, QUESTIONS, batch_size=2, progress=False)
    assert run.groupby("query_id")["latency_s"].first().tolist() == [1.5, 1.5, 6.0, 16.0]


def test_latency_is_measured():
    run, _ = ef.retrieve(by_text, QUESTIONS, progress=False)
    assert (run["latency_s"] >= 0).all() and run["latency_s"].notna().all()


# ---------------------------------------------------------------- into evaluate
GOLDEN = pd.DataFrame({
    "question_id": ["q1", "q1", "q2", "q3", "q5"],
    "question": ["what is a", "what is a", "what is b", "what is c", "what is e"],
    "chunk_id": ["a1", "a2", "b1", "c1", "e2"],
    "relevance": [1, 1, 2, 1, 1],
})


def test_the_run_evaluates_to_the_values_computed_by_hand():
    run, _ = quiet(ef.retrieve, by_text, GOLDEN, progress=False)
    with pytest.warns(ef.ShallowRankingWarning, match="q5"):  # one document returned for q5
        per_q = ef.evaluate(run, GOLDEN, ["R@2", "P@2", "RR"])
    got = per_q.set_index(["query_id", "measure"])["value"].to_dict()
    # q1: x a2 a1 (relevant a1, a2); q2: b1 y (b1); q3: c9 c1 c2 c3 (c1); q5: e1 (e2)
    expected = {"q1": (0.5, 0.5, 0.5), "q2": (1.0, 0.5, 1.0), "q3": (1.0, 0.5, 0.5), "q5": (0.0, 0.0, 0.0)}
    assert got == {(q, m): v for q, vals in expected.items() for m, v in zip(["R@2", "P@2", "RR"], vals)}


def test_a_failed_question_scores_zero_in_evaluate():
    with pytest.warns(ef.QuestionsFailedWarning):
        run, _ = ef.retrieve(flaky, GOLDEN, progress=False)
    with pytest.warns(ef.QuestionsScoredZeroWarning, match="q3"):
        per_q = ef.evaluate(run, GOLDEN, "RR")
    assert per_q.set_index("query_id")["value"].to_dict() == {"q1": 0.5, "q2": 1.0, "q3": 0.0, "q5": 0.0}


def test_scores_rank_the_run_in_evaluate():
    # descending scores, as fn ranked them: evaluate agrees with fn's order
    scored = {"what is a": [("x", 3.0), ("a2", 2.0), ("a1", 1.0)], "what is b": [("b1", 5.0), ("y", 4.0)],
              "what is c": [("c9", 0.4), ("c1", 0.3)], "what is e": [("e1", 1.0)]}
    run, _ = quiet(ef.retrieve, lambda t: scored[t], GOLDEN, system="s", progress=False)
    per_q = ef.evaluate(run, GOLDEN, "RR")
    assert per_q["value"].tolist() == [0.5, 1.0, 0.5, 0.0]


def test_distances_are_warned_and_ties_rank_follows_fn():
    # ascending scores (distances): evaluate() would rank them backwards
    dist = {"what is a": [("x", 0.1), ("a2", 0.2), ("a1", 0.3)], "what is b": [("b1", 0.1), ("y", 0.5)],
            "what is c": [("c9", 0.4)], "what is e": [("e1", 0.2)]}
    with pytest.warns(ef.RetrieverOutputWarning, match=r"2 questions .*not descend.*ties='rank'") as caught:
        run, _ = ef.retrieve(lambda t: dist[t], GOLDEN, progress=False)
    assert len(caught) == 1
    by_score = ef.evaluate(run, GOLDEN, "RR").set_index("query_id")["value"].to_dict()
    by_rank = ef.evaluate(run, GOLDEN, "RR", ties="rank").set_index("query_id")["value"].to_dict()
    assert by_score == {"q1": 1.0, "q2": 0.5, "q3": 0.0, "q5": 0.0}
    assert by_rank == {"q1": 0.5, "q2": 1.0, "q3": 0.0, "q5": 0.0}


def test_scores_for_some_questions_only_are_warned():
    mixed = lambda t: [("x", 1.0)] if t == "what is a" else ["y"]  # noqa: E731
    with pytest.warns(ef.RetrieverOutputWarning, match=r"3 questions have documents without a score.*ties='rank'"):
        run, _ = ef.retrieve(mixed, GOLDEN, progress=False)
    per_q = ef.evaluate(run, GOLDEN, "RR", ties="rank")
    assert len(per_q) == 4


# ---------------------------------------------------------------- questions
def test_a_golden_set_gives_one_call_per_question_with_its_first_text():
    golden = GOLDEN.assign(question=["what is a", "what is A?", "what is b", "what is c", "what is e"])
    seen = []
    run, _ = ef.retrieve(lambda t: seen.append(t) or ["d"], golden, progress=False)
    assert seen == ["what is a", "what is b", "what is c", "what is e"]
    assert run["query_id"].tolist() == ["q1", "q2", "q3", "q5"]
    assert golden["question"].tolist()[1] == "what is A?"  # the caller's table is unchanged


@pytest.mark.parametrize("questions", [
    pytest.param(pd.DataFrame({"query_id": ["q1", "q2"], "text": ["a", "b"]}), id="query_id text"),
    pytest.param(pd.DataFrame({"qid": ["q1", "q2"], "query": ["a", "b"]}), id="qid query"),
    pytest.param(pd.DataFrame({"question_id": ["q1", "q2"], "question": ["a", "b"], "x": [1, 2]}),
                 id="question_id question"),
    pytest.param(pd.DataFrame({"query_id": ["q1", "q2"], "question": ["a", "b"]}), id="query_id question"),
    pytest.param(pd.DataFrame({"query_id": ["q1", "q2"], "text": ["a", "b"], "question": ["?", "?"]}),
                 id="text beside question"),
    pytest.param({"q1": "a", "q2": "b"}, id="dict"),
    pytest.param(pd.Series(["a", "b"], index=pd.Index(["q1", "q2"], name="query_id")), id="Series"),
    pytest.param(pd.Series({"q1": "a", "q2": "b"}), id="Series from dict"),
])
def test_questions_as_users_store_them(questions):
    seen = []
    run, _ = ef.retrieve(lambda t: seen.append(t) or ["d"], questions, progress=False)
    assert seen == ["a", "b"] and run["query_id"].tolist() == ["q1", "q2"]


def test_questions_from_an_arrow_table():
    pa = pytest.importorskip("pyarrow")
    run, _ = ef.retrieve(lambda t: [t], pa.table({"question_id": [1, 2], "question": ["a", "b"]}), progress=False)
    assert rows(run) == [("1", "a", 1), ("2", "b", 1)]


@pytest.mark.parametrize("questions, error, message", [
    (pd.DataFrame({"query_id": ["q1"]}), ef.EvalframeInputError, "no question text column"),
    (pd.DataFrame({"id": ["q1"], "text": ["a"]}), ef.EvalframeInputError, "no question id column"),
    (pd.DataFrame({"query_id": ["q1", None], "text": ["a", "b"]}), ef.EvalframeInputError,
     "1 questions have a missing or empty question id"),
    (pd.DataFrame({"query_id": ["q1", "q2"], "text": ["a", None]}), ef.EvalframeInputError,
     "1 questions have a missing or empty text"),
    (pd.DataFrame({"query_id": ["q1"], "text": [3]}), ef.EvalframeInputError, "not a str"),
    (pd.DataFrame({"query_id": [], "text": []}), ef.EvalframeInputError, "no questions"),
    ({}, ef.EvalframeInputError, "no questions"),
    (pd.Series(["a", "b"]), ef.EvalframeInputError, "indexed by question id"),
    (["a", "b"], TypeError, "retrieve: questions must be a DataFrame"),
])
def test_bad_questions(questions, error, message):
    with pytest.raises(error, match=message):
        ef.retrieve(by_text, questions, progress=False)


# ---------------------------------------------------------------- parameters
@pytest.mark.parametrize("kwargs, error, message", [
    ({"k": 0}, ValueError, r"retrieve: k must be an int >= 1 or None, got 0"),
    ({"k": 2.5}, ValueError, r"retrieve: k must be an int >= 1 or None, got 2.5"),
    ({"k": True}, ValueError, r"retrieve: k must be an int >= 1 or None, got True"),
    ({"batch_size": 0}, ValueError, r"retrieve: batch_size must be an int >= 1 or None, got 0"),
    ({"errors": "ignore"}, ValueError, r"retrieve: errors must be 'record' or 'raise', got 'ignore'"),
    ({"system": 3}, ValueError, r"retrieve: system must be a str or None, got 3"),
    ({"progress": "yes"}, ValueError, r"retrieve: progress must be True, False or None, got 'yes'"),
    ({"fn": "bm25"}, TypeError, r"retrieve: fn must be callable, got 'bm25'"),
])
def test_parameters_are_checked_before_any_call(kwargs, error, message):
    calls = []
    args = {"fn": lambda t: calls.append(t) or []} | kwargs
    with pytest.raises(error, match=message):
        ef.retrieve(args.pop("fn"), QUESTIONS, **args)
    assert calls == []


def test_numpy_ints_are_accepted():
    batch = lambda texts: [by_text(t) for t in texts]  # noqa: E731
    run, _ = quiet(ef.retrieve, batch, QUESTIONS, k=np.int64(1), batch_size=np.int32(2), progress=False)
    assert run["rank"].tolist() == [1] * 4


# ---------------------------------------------------------------- progress
def test_progress_bar_on_standard_error(capsys):
    ef.retrieve(by_text, QUESTIONS, progress=True)
    assert "retrieving" in capsys.readouterr().err
    ef.retrieve(by_text, QUESTIONS, progress=False)
    ef.retrieve(by_text, QUESTIONS)  # default: off when standard error is not a terminal (here: captured)
    assert capsys.readouterr().err == ""


def test_default_progress_follows_the_terminal(monkeypatch, capsys):
    monkeypatch.delitem(sys.modules, "ipykernel", raising=False)
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True, raising=False)
    ef.retrieve(by_text, QUESTIONS)
    assert "retrieving" in capsys.readouterr().err
