"""The spec's worked example (the SSO list of ten pages, three relevant), exactly."""
import math

import pytest

import evalframe as ef
from evalframe.datasets import load_sso


@pytest.fixture(scope="module")
def sso_values():
    sso = load_sso()
    per_q = ef.evaluate(sso.runs, sso.qrels, ["R@3", "R@5", "R@10", "P@5", "RR", "nDCG@10"])
    return dict(zip(per_q["measure"], per_q["value"]))


def test_spec_table(sso_values):
    # Metric / Value table of "A worked example: every metric on one list"
    assert round(sso_values["R@3"], 2) == 0.33
    assert round(sso_values["R@5"], 2) == 0.67
    assert round(sso_values["R@10"], 2) == 1.00
    assert round(sso_values["P@5"], 2) == 0.40
    assert round(sso_values["RR"], 2) == 0.50
    assert round(sso_values["nDCG@10"], 2) == 0.62


def test_spec_exact_fractions(sso_values):
    assert sso_values["R@3"] == pytest.approx(1 / 3, abs=1e-15)
    assert sso_values["R@5"] == pytest.approx(2 / 3, abs=1e-15)
    assert sso_values["P@5"] == pytest.approx(2 / 5, abs=1e-15)
    # DCG 1.319 / IDCG 2.131 by hand: relevant at ranks 2, 5, 9; ideal ranks 1, 2, 3
    dcg = 1 / math.log2(3) + 1 / math.log2(6) + 1 / math.log2(10)
    idcg = 1 + 1 / math.log2(3) + 1 / math.log2(4)
    assert round(dcg, 3) == 1.319 and round(idcg, 3) == 2.131
    assert sso_values["nDCG@10"] == pytest.approx(dcg / idcg, abs=1e-15)


def test_spec_mrr_example():
    # "Ours scores 0.5, a second question's first hit is at rank 1, a third's at rank 4": MRR 0.58
    run = {"a": {"x": 3, "r": 2}, "b": {"r": 3, "x": 2}, "c": {"x1": 4, "x2": 3, "x3": 2, "r": 1}}
    qrels = {"a": {"r": 1}, "b": {"r": 1}, "c": {"r": 1}}
    agg = ef.aggregate(ef.evaluate(run, qrels, "RR"))
    assert round(float(agg["mean"].iloc[0]), 2) == 0.58


def test_spec_delete_page_1140_mrr_does_not_move():
    sso = load_sso()
    without = sso.runs[sso.runs.doc_id != "page-1140"]
    before = ef.evaluate(sso.runs, sso.qrels, ["RR", "R@5"]).set_index("measure")["value"]
    after = ef.evaluate(without, sso.qrels, ["RR", "R@5"]).set_index("measure")["value"]
    assert before["RR"] == after["RR"] == 0.5
    assert after["R@5"] < before["R@5"]


def test_spec_graded_gains():
    # "A grade-2 page gains 2^2 - 1 = 3 points ... grade-3 gains 7": one page at rank 1
    for grade, gain in [(1, 1), (2, 3), (3, 7)]:
        qrels = {"q": {"p": grade, "best": 3}}
        run = {"q": {"p": 2.0, "best": 1.0}}
        v = ef.evaluate(run, qrels, "nDCG@2")["value"].iloc[0]
        ideal = 7 + gain / math.log2(3)
        assert v == pytest.approx((gain + 7 / math.log2(3)) / ideal, abs=1e-12)


def test_spec_under_the_hood_functions_agree():
    """The spec's own reference functions, run in the test, on random lists."""
    import numpy as np

    def recall_at_k(ranked, relevant, k):
        return len(set(ranked[:k]) & set(relevant)) / max(len(relevant), 1)

    def ndcg_at_k(ranked, relevance, k):
        gains = [(2 ** relevance.get(d, 0) - 1) / np.log2(i + 2) for i, d in enumerate(ranked[:k])]
        ideal = sorted(relevance.values(), reverse=True)[:k]
        idcg = [(2 ** g - 1) / np.log2(i + 2) for i, g in enumerate(ideal)]
        return sum(gains) / sum(idcg) if sum(idcg) else 0.0

    rng = np.random.default_rng(7)
    for trial in range(30):
        docs = [f"d{i}" for i in range(20)]
        ranked = list(rng.permutation(docs)[: rng.integers(1, 20)])
        grades = {d: int(rng.integers(0, 4)) for d in rng.choice(docs, 8, replace=False)}
        run = {"q": {d: float(len(ranked) - i) for i, d in enumerate(ranked)}}
        per_q = ef.evaluate(run, {"q": grades}, ["R@5", "nDCG@10"]).set_index("measure")["value"]
        relevant = [d for d, g in grades.items() if g >= 1]
        assert per_q["R@5"] == pytest.approx(recall_at_k(ranked, relevant, 5) if relevant else 0.0)
        assert per_q["nDCG@10"] == pytest.approx(ndcg_at_k(ranked, grades, 10))
