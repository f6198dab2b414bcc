"""Span golden sets and ``chunks=`` on the engines that evaluate in partitions (streaming a
Parquet dataset, Dask) against the in-memory engine on the same rows: the same
per-question values and the same diagnostics (issue 27 on every engine, over issue 28's
partition contract)."""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import evalframe as ef
from evalframe.evaluation import evaluate_with_diagnostics
from tests.engine_checks import sorted_table, streamed as stream_parts
from tests.test_spans import random_case

dd = pytest.importorskip("dask.dataframe")
import dask  # noqa: E402

pytestmark = pytest.mark.slow  # `make test-fast` leaves this file out

MEASURES = ["SpanRecall@5", "SpanPrecision@2", "SpanIoU@5", "SpanRecall(tokens=20)", "R@5", "nDCG@5", "AP", "RR",
            "R(tokens=20)", "Judged@5"]


def in_memory(run, qrels, chunks, measures=MEASURES, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return evaluate_with_diagnostics(run, qrels, measures, chunks=chunks, **kw)


def streamed(run, qrels, chunks, tmp_path, *, parts: int = 3, measures=MEASURES, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return stream_parts(run, qrels, measures, tmp_path / "run", parts=parts, chunks=chunks, **kw)


def on_dask(run, qrels, chunks, partitions: int = 3, measures=MEASURES, **kw):
    with warnings.catch_warnings(), dask.config.set(scheduler="synchronous"):
        warnings.simplefilter("ignore")
        table, diag = evaluate_with_diagnostics(dd.from_pandas(run, npartitions=partitions), qrels, measures,
                                                   chunks=chunks, **kw)
        return table.compute(), diag


def same(got, want, *, ordered: bool):
    a, b = (got[0], want[0]) if ordered else (sorted_table(got[0]), sorted_table(want[0]))
    pd.testing.assert_frame_equal(a, b)
    pd.testing.assert_frame_equal(got[1], want[1])


@pytest.mark.parametrize("seed", range(24))
def test_random_span_cases_streamed_and_on_dask_equal_in_memory(seed, tmp_path):
    spans, table_of, chunks, run = random_case(seed)
    if seed % 2 == 0:  # a dataset written question by question (streamed without hashing into buckets)
        run = run.sort_values("query_id", kind="stable").reset_index(drop=True)
    want = in_memory(run, spans, chunks)
    same(streamed(run, spans, chunks, tmp_path / "s"), want, ordered=True)
    same(on_dask(run, spans, chunks, partitions=1 + seed % 4), want, ordered=False)


@pytest.mark.parametrize("seed", range(6))
def test_chunk_level_golden_set_with_chunk_tables_on_every_engine(seed, tmp_path):
    """A chunk-level golden set with chunks= (token counts for the budget measures and the
    chunk sizes check)."""
    spans, table_of, chunks, run = random_case(100 + seed)
    run = run.sort_values("query_id", kind="stable").reset_index(drop=True)
    first = next(iter(table_of.values()))
    qrels = ef.span_labels(spans, first)
    if not len(qrels):
        pytest.skip("no label")
    measures = ["R@5", "nDCG@5", "R(tokens=20)"]
    want = in_memory(run, qrels, chunks, measures)
    same(streamed(run, qrels, chunks, tmp_path / "s", measures=measures), want, ordered=True)
    same(on_dask(run, qrels, chunks, measures=measures), want, ordered=False)


def test_chunks_judged_for_another_partitions_question(tmp_path):
    """A system retrieving, for one question, only chunks the spans label for another
    question in another partition: judged documents in memory (any question counts), so
    not ``system_without_judged_documents`` on the engines either."""
    chunks = pd.DataFrame({"chunk_id": [f"{d}#{i}" for d in ("d1", "d2") for i in range(4)],
                           "doc_id": ["d1"] * 4 + ["d2"] * 4, "start": [0, 25, 50, 75] * 2,
                           "end": [25, 50, 75, 100] * 2})
    spans = pd.DataFrame({"query_id": ["q1", "q2"], "doc_id": ["d1", "d2"], "start": [0, 10], "end": [30, 40],
                          "relevance": [1, 1]})
    run = pd.DataFrame({"system": ["s0", "s0", "s1", "s0", "s1"], "query_id": ["q1", "q1", "q1", "q2", "q2"],
                        "doc_id": ["d1#0", "d1#1", "d2#3", "d2#0", "d1#2"], "score": [2.0, 1.0, 1.0, 1.0, 1.0]})
    measures = ["SpanRecall@2", "R@2"]
    want = in_memory(run, spans, chunks, measures)
    assert "system_without_judged_documents" not in set(want[1]["check"])
    same(streamed(run, spans, chunks, tmp_path / "s", parts=5, measures=measures), want, ordered=True)
    same(on_dask(run, spans, chunks, partitions=2, measures=measures), want, ordered=False)


@pytest.mark.parametrize("parent", ["parent_id", None])
def test_a_dask_run_carrying_offsets(parent, tmp_path):
    """Rows that carry their chunk's document and offsets (a parent column beside the chunk
    id, or only doc_id, the chunk named by its range) are split on Dask and when streamed
    (copied, split, to the scratch directory) as in memory."""
    from tests.test_spans import CHUNKS_A, CHUNKS_B, help_centre
    spans, _, _, run = help_centre(30)  # 30 questions: several partitions
    cases = [(spans, {"a": CHUNKS_A, "b": CHUNKS_B}, run)] + [
        (c[0], c[1], c[3]) for c in map(random_case, (3, 8, 11))]
    for spans, table_of, run in cases:
        parts = [run[run["system"] == s].merge(t, left_on="doc_id", right_on="chunk_id", suffixes=("_run", ""))
                 for s, t in table_of.items()]
        carried = pd.concat(parts).sort_index(kind="stable")
        if parent is None:
            carried = carried.drop(columns=["chunk_id", "doc_id_run"])
        else:
            carried = carried.rename(columns={"doc_id": parent}).drop(columns=["chunk_id"]).rename(
                columns={"doc_id_run": "doc_id"})
        carried = carried.reset_index(drop=True)
        measures = ["SpanRecall@5", "SpanIoU@5", "R@5", "R(tokens=20)"]
        want = in_memory(carried, spans, None, measures)
        same(on_dask(carried, spans, None, partitions=3, measures=measures), want, ordered=False)
        same(streamed(carried, spans, None, tmp_path / f"s{len(carried)}", measures=measures), want, ordered=True)


@pytest.mark.parametrize("grouped", [True, False])
def test_a_tokens_column_streamed_and_on_dask(grouped, tmp_path):
    """A run's own tokens column reaches every engine: the budget measures, and the chunk
    sizes check (medians of token counts added up across partitions) when no measure reads
    a budget (both were lost: the streaming reader and the Dask shuffle dropped the column)."""
    rng = np.random.default_rng(7)
    n = 3000
    run = pd.DataFrame({"system": rng.choice(["small", "large"], n), "query_id": rng.integers(1, 60, n).astype(str),
                        "doc_id": rng.integers(1, 400, n).astype(str), "score": rng.integers(0, 20, n) / 4})
    run["tokens"] = np.where(run["system"] == "small", rng.integers(20, 60, n), rng.integers(80, 200, n))
    run = run.drop_duplicates(["system", "query_id", "doc_id"]).reset_index(drop=True)
    if grouped:
        run = run.sort_values("query_id", kind="stable").reset_index(drop=True)
    qrels = pd.DataFrame({"query_id": rng.integers(1, 60, 600).astype(str),
                          "doc_id": rng.integers(1, 400, 600).astype(str), "relevance": rng.integers(0, 3, 600)})
    qrels = qrels.drop_duplicates(["query_id", "doc_id"])
    for measures in (["R(tokens=300)", "nDCG(tokens=500)"], ["R@5", "AP"]):
        want = in_memory(run, qrels, None, measures)
        assert ("chunk_sizes_differ" in set(want[1]["check"])) == (measures == ["R@5", "AP"])
        same(streamed(run, qrels, None, tmp_path / f"s{len(measures[0])}", parts=6, measures=measures), want,
             ordered=True)
        same(on_dask(run, qrels, None, partitions=4, measures=measures), want, ordered=False)


def test_questions_without_a_relevant_chunk_are_told_per_chunking(tmp_path):
    """Each chunking gets its own labels from the spans, so its own questions without a
    relevant chunk: one record per chunking, naming its systems, counted per chunking on
    every engine (a sum across chunkings counted a question twice), and one warning each."""
    b = [0, 5, 15, 25, 35, 45, 55, 65, 75, 85, 95, 100]
    fine = pd.DataFrame({"chunk_id": [f"f{i}" for i in range(len(b) - 1)], "doc_id": "d", "start": b[:-1],
                         "end": b[1:]})
    coarse = pd.DataFrame({"chunk_id": ["c0", "c1"], "doc_id": "d", "start": [0, 50], "end": [50, 100]})
    # min_overlap=1: q1 (45..55) has no relevant coarse chunk, q2 (20..30) no relevant fine one, q4 neither
    spans = pd.DataFrame({"query_id": ["q1", "q2", "q4"], "doc_id": "d", "start": [45, 20, 48], "end": [55, 30, 57],
                          "relevance": 1})
    run = pd.DataFrame({"system": ["fine"] * 3 + ["coarse"] * 3, "query_id": ["q1", "q2", "q4"] * 2,
                        "doc_id": ["f5", "f2", "f5", "c0", "c0", "c1"], "score": 1.0})
    chunks = {"fine": fine, "coarse": coarse}
    measures = ["SpanRecall@1", "R@1"]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        want = evaluate_with_diagnostics(run, spans, measures, chunks=chunks, min_overlap=1)
    norel = want[1][want[1]["check"] == "golden_questions_without_relevant"]
    assert sorted(zip(norel["count"], norel["examples"])) == [(2, "q1, q4"), (2, "q2, q4")]
    assert sorted(norel["action"].str.rsplit(" ", n=1).str[-1]) == ["coarse", "fine"]
    told = [str(w.message) for w in caught if w.category is ef.errors.NoRelevantWarning]
    assert len(told) == 2 and all("in the chunking of systems" in m for m in told)
    same(on_dask(run, spans, chunks, partitions=1, measures=measures, min_overlap=1), want, ordered=False)
    same(on_dask(run, spans, chunks, partitions=2, measures=measures, min_overlap=1), want, ordered=False)
    same(streamed(run, spans, chunks, tmp_path, parts=3, measures=measures, min_overlap=1), want, ordered=True)


def test_a_chunks_dict_naming_other_systems_is_the_in_memory_answer(tmp_path):
    """A dict of chunk tables may name systems the run lacks (one dict for every run): their
    tables are not read for the run's, not checked against the spans, on every engine."""
    spans, table_of, chunks, run = random_case(5)
    chunks = dict(table_of) | {"elsewhere": pd.DataFrame({"chunk_id": ["x#0"], "doc_id": ["x"], "start": [0],
                                                          "end": [10]})}
    want = in_memory(run, spans, chunks)
    same(on_dask(run, spans, chunks), want, ordered=False)
    same(streamed(run, spans, chunks, tmp_path), want, ordered=True)


def test_report_on_a_dask_run_is_refused_before_evaluating():
    spans, _, chunks, run = random_case(2)
    with pytest.raises(TypeError, match="report\\(\\) takes a run held in memory"):
        ef.report(dd.from_pandas(run, npartitions=2), spans, chunks=chunks)


def test_a_streamed_partitions_chunked_tables_are_freed_when_it_is_scored(tmp_path, monkeypatch):
    """As for a run without chunkings (tests/engine/test_parts.py): each chunking's judged
    table keeps intermediates that refer back to it; released when the partition is scored,
    it is freed then, whatever collection ran while it was in use."""
    import gc
    import weakref

    from evalframe.engine import partition
    spans, _, chunks, run = random_case(3)
    refs, judge_chunked = [], partition.judge_chunked

    def judged(*a, **k):
        out = judge_chunked(*a, **k)
        refs.extend(weakref.ref(J) for J in out)
        gc.collect(1)  # a collection another partition's thread runs while these tables are in use
        return out
    monkeypatch.setattr(partition, "judge_chunked", judged)
    gc.disable()  # the collector's own passes, which come at their own pace, are off
    try:
        streamed(run, spans, chunks, tmp_path / "s")
        assert len(refs) >= 2 and [r() for r in refs] == [None] * len(refs)
    finally:
        gc.enable()
