"""evalframe.agreement against scikit-learn's Cohen's kappa, the krippendorff package's
alpha, loops for the bootstrap over questions, and hand-worked small cases."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import evalframe as ef

krippendorff = pytest.importorskip("krippendorff")
metrics = pytest.importorskip("sklearn.metrics")


def two_annotators(seed: int, n_q: int = 20, per_q: int = 15, levels: int = 4, noise: float = 0.4):
    rng = np.random.default_rng(seed)
    rows_a, rows_b = [], []
    for q in range(n_q):
        truth = rng.integers(0, levels, size=per_q)
        for d, t in enumerate(truth):
            a = t if rng.random() > noise else rng.integers(0, levels)
            b = t if rng.random() > noise else rng.integers(0, levels)
            rows_a.append((f"q{q}", f"d{d}", int(a)))
            rows_b.append((f"q{q}", f"d{d}", int(b)))
    cols = ["query_id", "doc_id", "relevance"]
    return pd.DataFrame(rows_a, columns=cols), pd.DataFrame(rows_b, columns=cols)


def values(table: pd.DataFrame) -> dict:
    return table.set_index("statistic")["value"].to_dict()


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("rel", [None, 2])
def test_matches_sklearn_and_krippendorff(seed, rel):
    a, b = two_annotators(seed)
    v = values(ef.agreement(a, b, rel=rel, n_resamples=0))
    la, lb = a["relevance"].to_numpy(), b["relevance"].to_numpy()
    if rel is not None:
        la, lb = (la >= rel).astype(int), (lb >= rel).astype(int)
    assert v["observed_agreement"] == pytest.approx(np.mean(la == lb), abs=1e-12)
    assert v["cohen_kappa"] == pytest.approx(metrics.cohen_kappa_score(la, lb), abs=1e-12)
    assert v["weighted_kappa_linear"] == pytest.approx(metrics.cohen_kappa_score(la, lb, weights="linear"), abs=1e-12)
    assert v["weighted_kappa_quadratic"] == pytest.approx(metrics.cohen_kappa_score(la, lb, weights="quadratic"), abs=1e-12)
    data = np.vstack([la, lb]).astype(float)
    for kind in ("nominal", "ordinal", "interval"):
        expected = krippendorff.alpha(reliability_data=data, level_of_measurement=kind)
        assert v[f"krippendorff_alpha_{kind}"] == pytest.approx(expected, abs=1e-12), kind


def test_only_pairs_both_judged_count_and_negative_labels_are_not_judgments():
    a = pd.DataFrame({"query_id": ["q1"] * 4, "doc_id": ["d1", "d2", "d3", "d4"], "relevance": [1, 0, -1, 1]})
    b = pd.DataFrame({"query_id": ["q1"] * 3 + ["q2"], "doc_id": ["d1", "d2", "d3", "d9"], "relevance": [1, 1, 1, 0]})
    t = ef.agreement(a, b, n_resamples=0)
    assert t["n_pairs"].iloc[0] == 2  # d1, d2 (d3 is -1 in a)
    assert (t["only_a"].iloc[0], t["only_b"].iloc[0]) == (1, 2)  # a: d4; b: d3, q2/d9
    assert values(t)["observed_agreement"] == 0.5


def test_perfect_agreement():
    a, _ = two_annotators(0)
    v = values(ef.agreement(a, a, n_resamples=0))
    assert all(x == pytest.approx(1.0) for x in v.values())


def loop_bootstrap(a, b, n_resamples, seed):
    """The question bootstrap written with a loop: resample questions, recompute kappa."""
    rng = np.random.default_rng(seed)
    both = a.merge(b, on=["query_id", "doc_id"])
    questions = list(dict.fromkeys(both["query_id"]))
    groups = {q: part for q, part in both.groupby("query_id")}
    out = []
    for _ in range(n_resamples):
        w = rng.multinomial(len(questions), np.full(len(questions), 1 / len(questions)))
        parts = [groups[q] for q, k in zip(questions, w) for _ in range(k)]
        s = pd.concat(parts)
        out.append(metrics.cohen_kappa_score(s["relevance_x"], s["relevance_y"]))
    return np.array(out)


def test_interval_is_the_question_bootstrap():
    a, b = two_annotators(3, n_q=12, per_q=8)
    t = ef.agreement(a, b, n_resamples=300, seed=11, confidence=0.9).set_index("statistic")
    boot = loop_bootstrap(a, b, 300, 11)
    assert t.loc["cohen_kappa", "ci_low"] == pytest.approx(np.quantile(boot, 0.05), abs=1e-12)
    assert t.loc["cohen_kappa", "ci_high"] == pytest.approx(np.quantile(boot, 0.95), abs=1e-12)
    lo, v, hi = t.loc["cohen_kappa", ["ci_low", "value", "ci_high"]]
    assert lo < v < hi


def test_same_seed_same_interval():
    a, b = two_annotators(1)
    pd.testing.assert_frame_equal(ef.agreement(a, b, seed=5), ef.agreement(a, b, seed=5))


@pytest.mark.parametrize("kwargs, message", [
    ({"confidence": 1.0}, "agreement: confidence must be a float in \\(0, 1\\), got 1.0"),
    ({"n_resamples": -1}, "agreement: n_resamples must be an int >= 0, got -1"),
    ({"seed": None}, "agreement: seed must be an int >= 0, got None"),
    ({"rel": 1.5}, "agreement: rel must be an int or None, got 1.5"),
])
def test_parameter_errors(kwargs, message):
    a, b = two_annotators(0, n_q=2)
    with pytest.raises(ValueError, match=message):
        ef.agreement(a, b, **kwargs)


def test_nothing_shared_is_an_error():
    a = pd.DataFrame({"query_id": ["q1"], "doc_id": ["d1"], "relevance": [1]})
    b = pd.DataFrame({"query_id": ["q2"], "doc_id": ["d1"], "relevance": [1]})
    with pytest.raises(ValueError, match="share no judged"):
        ef.agreement(a, b)
