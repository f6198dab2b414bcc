"""summarize/compare group on integer codes (fast at 10^6 questions); the pandas path is the oracle.

A segment column of Python objects takes the pandas path (sort_values, groupby, unstack);
the same column as strings takes the integer-code path: the tables must be identical, bit
for bit, seeded resampling included.
"""
import numpy as np
import pandas as pd
import pytest

from evalframe import EvalframeInputError, stats


def _table(seed=0, n=300):
    rng = np.random.default_rng(seed)
    rows = []
    for s in ("b", "a", "c"):  # not in sorted order
        for m in ("nDCG@10", "Success@10"):
            q = rng.permutation(n)[: n - int(rng.integers(0, 20))]  # holes: unpaired questions
            v = rng.random(len(q)).round(2) if m == "nDCG@10" else (rng.random(len(q)) < 0.4) * 1.0
            rows.append(pd.DataFrame({"system": s, "query_id": [f"q{i}" for i in q], "measure": m, "value": v}))
    t = pd.concat(rows, ignore_index=True).sample(frac=1, random_state=seed)
    t["seg"] = pd.Series([f"s{int(x[1:]) % 4}" for x in t["query_id"]], index=t.index, dtype=str)
    return t


@pytest.mark.parametrize("call", [
    lambda t: stats.summarize(t, by="seg"),
    lambda t: stats.summarize(t, by="seg", method="bootstrap", n_resamples=200, seed=4),
    lambda t: stats.summarize(t, by="seg", method="bca", n_resamples=200),
    lambda t: stats.compare(t, by="seg"),
    lambda t: stats.compare(t, by="seg", test="randomization", n_resamples=200),
    lambda t: stats.compare(t, by="seg", baseline="a", test="bootstrap", ci="bca", n_resamples=200),
])
def test_integer_code_path_equals_the_pandas_path(call):
    t = _table()
    fast = call(t)
    slow = call(t.assign(seg=t["seg"].astype(object)))
    fast["seg"], slow["seg"] = fast["seg"].astype(object), slow["seg"].astype(object)
    pd.testing.assert_frame_equal(fast, slow, check_exact=True)


def test_duplicate_rows_still_refused():
    t = _table()
    with pytest.raises(EvalframeInputError, match="share the same"):
        stats.summarize(pd.concat([t, t.iloc[:3]]))


CALLS = [
    lambda t: stats.summarize(t),
    lambda t: stats.summarize(t, method="bootstrap", n_resamples=150, seed=2),
    lambda t: stats.summarize(t, by="seg", method="bca", n_resamples=100),
    lambda t: stats.compare(t, test="randomization", n_resamples=100, adjusted_ci=True),
    lambda t: stats.compare(t, baseline="a", test="bootstrap", ci="bca", n_resamples=100, by="seg"),
    lambda t: stats.planning_curve(t, n=[10, 50]),
]


@pytest.mark.parametrize("call", CALLS)
def test_categorical_keys_read_through_codes_equal_strings(call):
    """Key columns as categoricals of strings (sorted, unsorted, with unused categories)
    give the table the string columns give, bit for bit (the report passes categoricals)."""
    t = _table(seed=5)
    want = call(t)
    cat = t.copy()
    for c in ("system", "query_id", "measure"):
        cat[c] = cat[c].astype("category")
    shuffled = t.copy()
    ids = sorted(set(t["query_id"]))
    shuffled["query_id"] = pd.Categorical(t["query_id"], categories=ids[::-1] + ["zz_unused", "a_unused"])
    shuffled["system"] = pd.Categorical(t["system"], categories=["c", "a", "b"])
    for variant in (cat, shuffled):
        pd.testing.assert_frame_equal(call(variant), want, check_exact=True)


def test_unique_key_order_is_lexsort():
    from evalframe.stats.validation import unique_key_order
    rng = np.random.default_rng(0)
    for sizes in [(3, 13, 500), (2, 7, 10 ** 6), (4, 3, 2 ** 40)]:  # dense, sparse, beyond the dense count
        n = 4000
        keys = {tuple(int(rng.integers(0, s)) for s in sizes) for _ in range(n)}
        codes = [np.array(c, dtype=np.int64) for c in zip(*sorted(keys, key=lambda k: rng.random()))]
        np.testing.assert_array_equal(unique_key_order(codes), np.lexsort(codes[::-1]))


def test_duplicate_keys_found_densely_and_sparsely():
    t = _table(seed=1)
    for extra in (t.iloc[[3]], t.iloc[[3, 7]].assign(query_id="q99999999")):  # dense; one more id
        bad = pd.concat([t, extra, extra.iloc[:1]], ignore_index=True)
        with pytest.raises(EvalframeInputError, match="rows share the same"):
            stats.summarize(bad)


def test_adjusted_interval_reuses_the_bootstrap(monkeypatch):
    """compare(adjusted_ci=True) draws each bootstrap once: the adjusted (and one-sided)
    intervals read the same distribution at another level."""
    from evalframe.stats import pairing

    calls = []
    orig = pairing.bootstrap_means
    monkeypatch.setattr(pairing, "bootstrap_means", lambda *a, **k: (calls.append(1), orig(*a, **k))[1])
    t = _table(seed=2)
    out = stats.compare(t, test="bootstrap", n_resamples=100, adjusted_ci=True, correction="bonferroni")
    n_sets = len(calls)
    calls.clear()
    stats.compare(t, test="bootstrap", n_resamples=100)
    assert n_sets == len(calls) >= 1
    # the adjusted interval is the percentile interval of the same draws at level 1 - alpha/m
    assert (out["ci_low_adjusted"] <= out["ci_low"]).all() and (out["ci_high_adjusted"] >= out["ci_high"]).all()
