"""The in-memory engine on threads (evalframe.engine.parts): under 2, 3 and 4 threads the
one-thread call's per-question table (same rows, same order, values equal to the bit),
diagnostics and warnings, whatever the run's layout (question after question, shuffled,
several systems one after another) and conventions; the parts are really evaluated
apart (a spy counts them); an input error is the one-thread call's; the streaming
engine's partitions on threads likewise.  The floor of rows per thread is lowered so
that small runs are cut (a run of n rows in up to n parts)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import evalframe as ef
from evalframe import datasets
from evalframe._threads import ENV
from evalframe.errors import ParameterError
from evalframe.engine import assembly, parts
from evalframe.evaluation import evaluate_with_diagnostics
from tests.engine_checks import caught, with_warnings
from tests.strategies import cases, random_runs

pytestmark = pytest.mark.filterwarnings("ignore::evalframe.errors.EvalframeWarning")

MEASURES = ["R@5", "nDCG@10", "AP", "RR", "bpref", "Judged@10", "P@5"]


@pytest.fixture(autouse=True)
def small_parts(monkeypatch):
    monkeypatch.setattr(parts, "MIN_ROWS_PER_THREAD", 1)


@pytest.fixture
def spy(monkeypatch):
    """The run rows of each part the assembler kept."""
    kept = []
    keep = assembly.Assembler.keep

    def counting(self, res, part):
        kept.append(len(part.run))
        return keep(self, res, part)
    monkeypatch.setattr(assembly.Assembler, "keep", counting)
    return kept


def same_on_threads(run, qrels, measures=MEASURES, threads=(2, 3, 4), **kw):
    """Every thread count gives the one-thread call's table, diagnostics and warnings."""
    want, w_want = caught(lambda: evaluate_with_diagnostics(run, qrels, measures, threads=1, **kw))
    for t in threads:
        got, w_got = caught(lambda: evaluate_with_diagnostics(run, qrels, measures, threads=t, **kw))
        pd.testing.assert_frame_equal(got[0], want[0])
        pd.testing.assert_frame_equal(got[1], want[1])
        assert w_got == w_want
    return want


def _cranfield():
    ds = datasets.load_cranfield()
    return with_warnings(ds), ds.qrels


@pytest.mark.parametrize("layout", ["as_given", "question_major", "shuffled"])
def test_several_systems_in_any_layout(layout, spy):
    run, qrels = _cranfield()  # system after system, with every warning case
    if layout == "question_major":
        run = run.sort_values("query_id", kind="stable").reset_index(drop=True)
    elif layout == "shuffled":
        run = run.sample(frac=1, random_state=5).reset_index(drop=True)
    same_on_threads(run, qrels)
    assert len(spy) >= 2 * 3 + 1  # threads=1 keeps none; 2, 3 and 4 threads cut the run


def test_a_dict_of_tables_one_per_system(spy):
    run, qrels = _cranfield()
    by_system = {s: t.drop(columns="system") for s, t in run.groupby("system", sort=False)}
    want = same_on_threads(by_system, qrels)
    assert len(spy) >= 2 * 3 + 1
    assert list(pd.unique(want[0]["system"])) == list(by_system)
    named_over = {f"run-{s}": t for s, t in run.groupby("system", sort=False)}  # the key names it, not the column
    same_on_threads(named_over, qrels, threads=(2,))
    mixed = dict(by_system)
    first = next(iter(mixed))
    mixed[first] = mixed[first].assign(rank=1)  # a rank column in one table only: the one-thread rules
    same_on_threads(mixed, qrels, threads=(2,))


@pytest.mark.parametrize("missing", ["zero", "drop"])
@pytest.mark.parametrize("no_relevant", ["zero", "drop"])
def test_conventions_travel_to_every_part(missing, no_relevant):
    run, qrels = _cranfield()
    qids = sorted(qrels.query_id.astype(str).unique())
    qrels = qrels.assign(relevance=qrels.relevance.where(~qrels.query_id.astype(str).isin(qids[::9]), 0))
    same_on_threads(run.assign(score=-run["score"]), qrels, missing=missing, no_relevant=no_relevant, ascending=True,
                    rel=2, depth=50)


def test_bounds_rollup_conflicts_and_column_names():
    run, qrels = _cranfield()
    same_on_threads(run, qrels, ["P@5", "R@10", "RR"], unjudged="bounds")
    same_on_threads(run, qrels, ["P@5", "R@10", "RR"], unjudged="relevant")
    pages = pd.DataFrame({"chunk": run["doc_id"].unique()})
    pages["page"] = "p" + (pages["chunk"].astype(str).str.len() % 7).astype(str) + pages["chunk"].astype(str).str[:2]
    same_on_threads(run, qrels, rollup=pages)
    votes = pd.concat([qrels, qrels.assign(relevance=qrels.relevance.where(qrels.index % 3 > 0, 0))])
    same_on_threads(run, votes, conflicts="max")
    renamed = run.rename(columns={"query_id": "qid", "doc_id": "docno", "system": "tag"})
    same_on_threads(renamed, qrels)
    same_on_threads(run.rename(columns={"query_id": "question"}), qrels, columns={"question": "query_id"})


def test_rank_only_runs_integer_ids_and_ties():
    run = random_runs(3, n_sys=3, n_q=40, pool=60, ties=True)
    qrels = pd.DataFrame({"query_id": [f"q{i % 40}" for i in range(300)], "doc_id": [f"d{i % 60}" for i in range(300)],
                          "relevance": np.arange(300) % 4}).drop_duplicates(["query_id", "doc_id"])
    same_on_threads(run, qrels)
    same_on_threads(run, qrels, ties="doc_id_asc")
    ranked = run.assign(rank=run.groupby(["system", "query_id"]).cumcount() + 1).drop(columns="score")
    same_on_threads(ranked, qrels, ties="rank")
    ints = run.assign(query_id=run.query_id.str[1:].astype(int), doc_id=run.doc_id.str[1:].astype(int))
    same_on_threads(ints, qrels.assign(query_id=qrels.query_id.str[1:].astype(int)))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=cases(), threads=st.integers(2, 4), shuffle=st.booleans())
def test_random_cases_are_the_one_thread_answer(case, threads, shuffle):
    qrels, run, rel = case
    if shuffle:
        run = run.sample(frac=1, random_state=1).reset_index(drop=True)
    for missing in ("zero", "drop"):
        same_on_threads(run, qrels, ["AP", "P@2", "RR", "nDCG@3", "R@5", "Success@1"], threads=(threads,),
                        rel=rel, missing=missing)


def test_an_input_error_is_the_one_thread_error(spy):
    run, qrels = _cranfield()
    twice = pd.concat([run, run.iloc[[5, 900, 4000]]], ignore_index=True)  # repeats in three questions
    with pytest.raises(ef.EvalframeInputError) as want:
        ef.evaluate(twice, qrels, ["AP"], threads=1)
    with pytest.raises(ef.EvalframeInputError) as got:
        ef.evaluate(twice, qrels, ["AP"], threads=2)
    assert str(got.value) == str(want.value)
    elsewhere = run.assign(query_id="other-" + run.query_id.astype(str))  # no question of the golden set
    with pytest.raises(ef.EvalframeInputError) as want:
        ef.evaluate(elsewhere, qrels, ["AP"], threads=1)
    with pytest.raises(ef.EvalframeInputError) as got:
        ef.evaluate(elsewhere, qrels, ["AP"], threads=2)
    assert str(got.value) == str(want.value)
    nan = run.assign(score=run.score.where(run.index != 7))
    with pytest.raises(ef.EvalframeInputError) as want:
        ef.evaluate(nan, qrels, ["AP"], threads=1)
    with pytest.raises(ef.EvalframeInputError) as got:
        ef.evaluate(nan, qrels, ["AP"], threads=2)
    assert str(got.value) == str(want.value)


def test_threads_from_the_environment(monkeypatch, spy):
    run, qrels = _cranfield()
    monkeypatch.setenv(ENV, "1")
    one = ef.evaluate(run, qrels, ["AP"], missing="drop")
    assert spy == []
    monkeypatch.setenv(ENV, "3")
    pd.testing.assert_frame_equal(ef.evaluate(run, qrels, ["AP"], missing="drop"), one)
    assert len(spy) == 3
    with pytest.raises(ParameterError, match="^evaluate: threads must be an int >= 1, got 0"):
        ef.evaluate(run, qrels, ["AP"], threads=0)


def test_small_runs_stay_on_one_thread(monkeypatch, spy):
    monkeypatch.setattr(parts, "MIN_ROWS_PER_THREAD", 200_000)
    run, qrels = _cranfield()
    ef.evaluate(run, qrels, ["AP"], threads=4)
    assert spy == []
    assert parts.threads_for(run, 4) == 1 and parts.threads_for(pd.concat([run] * 5), 4) == 2


def test_diagnostics_alone_on_threads():
    run, qrels = _cranfield()
    want = ef.diagnostics(run, qrels, ["R@100"], threads=1)
    for t in (2, 4):
        pd.testing.assert_frame_equal(ef.diagnostics(run, qrels, ["R@100"], threads=t), want)


@pytest.mark.slow
@pytest.mark.parametrize("layout", ["grouped", "shuffled"])
def test_streaming_partitions_on_threads(layout, tmp_path, monkeypatch, spy):
    from evalframe.engine import budget as sizing
    from tests.engine_checks import streamed
    run, qrels = _cranfield()
    rows = run.sort_values("query_id", kind="stable") if layout == "grouped" else run.sample(frac=1, random_state=3)
    monkeypatch.setattr(sizing, "MIN_BATCH_ROWS", 100)
    one, w_one = caught(lambda: streamed(rows, qrels, MEASURES, tmp_path / "a", files=4, parts=6, threads=1))
    n_one = len(spy)
    two, w_two = caught(lambda: streamed(rows, qrels, MEASURES, tmp_path / "b", files=4, parts=6, threads=2))
    pd.testing.assert_frame_equal(two[0], one[0])
    pd.testing.assert_frame_equal(two[1], one[1])
    assert w_two == w_one and n_one > 2 and len(spy) > n_one


def test_a_parts_judged_table_is_freed_when_the_part_is_scored(monkeypatch):
    """A part's judged table keeps intermediates that refer back to it (a reference cycle);
    a collection run by another part's thread while the table is in use moved it to the
    oldest generation, where it waited for a full pass with the part's arrays.  Released
    when the part is scored, it is freed then."""
    import gc
    import weakref

    from evalframe.engine import memory
    run, qrels = _cranfield()
    refs, judge = [], memory.judge

    def judged(*a, **k):
        out = judge(*a, **k)
        refs.append(weakref.ref(out))
        gc.collect(1)  # a collection another part's thread runs while this table is in use
        return out
    monkeypatch.setattr(memory, "judge", judged)
    gc.disable()  # the collector's own passes, which come at their own pace, are off
    try:
        caught(lambda: evaluate_with_diagnostics(run, qrels, MEASURES, threads=2))
        assert len(refs) >= 2 and [r() for r in refs] == [None] * len(refs)
    finally:
        gc.enable()
