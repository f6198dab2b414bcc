"""Index recall: the other recall, against exact nearest neighbours, denominator k."""
import pandas as pd
import pytest

import evalframe as ef


def test_spec_examples():
    exact = {"q": {f"e{i}": 10.0 - i for i in range(10)}}
    # the index returns exactly the true 10 nearest: index recall 1.00 whatever relevance says
    out = ef.index_recall(exact, exact, k=10)
    assert out.measure.tolist() == ["IndexRecall@10"] and out.value.tolist() == [1.0]
    # the index skips two of the true 10 nearest: 0.80
    approx = {"q": {**{f"e{i}": 10.0 - i for i in range(8)}, "x1": 1.5, "x2": 1.2}}
    assert ef.index_recall(approx, exact, k=10).value.tolist() == [0.8]


def test_denominator_is_k_and_ranking_uses_scores():
    exact = {"q": {"a": 3.0, "b": 2.0, "c": 1.0, "d": 0.5}}
    approx = {"q": {"c": 9.0, "a": 1.0, "z": 5.0}}  # top 2 of approx: c, z
    assert ef.index_recall(approx, exact, k=2).value.tolist() == [0.0]
    assert ef.index_recall(approx, exact, k=3).value.tolist() == [pytest.approx(2 / 3)]


def test_missing_questions_score_zero_and_many_systems():
    exact = {"q1": {"a": 1.0}, "q2": {"b": 1.0}}
    approx = pd.concat([ef.read_run({"q1": {"a": 1.0}}, system="hnsw"),
                        ef.read_run({"q1": {"a": 1.0}, "q2": {"b": 1.0}}, system="ivf")])
    out = ef.index_recall(approx, exact, k=1)
    assert dict(zip(zip(out.system, out.query_id), out.value)) == {
        ("hnsw", "q1"): 1.0, ("hnsw", "q2"): 0.0, ("ivf", "q1"): 1.0, ("ivf", "q2"): 1.0}


def test_short_exact_list_uses_its_length():
    assert ef.index_recall({"q": {"a": 1.0}}, {"q": {"a": 1.0}}, k=10).value.tolist() == [1.0]


def test_bad_k():
    with pytest.raises(ValueError, match="k must be an int >= 1"):
        ef.index_recall({"q": {"a": 1.0}}, {"q": {"a": 1.0}}, k=0)


def test_bundled_hnsw_against_exact():
    ds = ef.datasets.load_cranfield()
    runs = ds.runs
    ir = ef.index_recall(runs[runs.system == "dense_hnsw"], runs[runs.system == "dense_exact"], k=10)
    assert len(ir) == 225
    # PROVENANCE: about 0.95 at k = 10 on Cranfield
    assert 0.9 < ir.value.mean() < 0.99


def test_evaluate_leaves_out_the_diagnostics_table_it_does_not_return(monkeypatch):
    # evaluate() returns the per-question table only: the in-memory engine does not build the
    # diagnostics table (a fixed cost per call) and the table and warnings are those of
    # evaluate_with_diagnostics
    import warnings

    import evalframe._diagnostic_records as records
    from evalframe.evaluation import evaluate_with_diagnostics
    made = []
    real = records.diagnostics_table
    monkeypatch.setattr(records, "diagnostics_table", lambda recs: made.append(len(recs)) or real(recs))
    run = pd.DataFrame({"query_id": ["q1", "q1", "q2", "q3"], "doc_id": ["a", "b", "c", "d"],
                        "score": [2.0, 1.0, 1.0, 0.5]})
    qrels = pd.DataFrame({"query_id": ["q1", "q2", "q4"], "doc_id": ["a", "x", "y"], "relevance": [1, 1, 2]})
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        table = ef.evaluate(run, qrels, ["P@5", "nDCG@10"])
    assert made == []
    with warnings.catch_warnings(record=True) as seen_too:
        warnings.simplefilter("always")
        want, diag = evaluate_with_diagnostics(run, qrels, ["P@5", "nDCG@10"])
    assert made and len(diag) >= 2  # shallow rankings, questions the golden set lacks
    pd.testing.assert_frame_equal(table, want)
    assert [(w.category, str(w.message)) for w in seen] == [(w.category, str(w.message)) for w in seen_too]
