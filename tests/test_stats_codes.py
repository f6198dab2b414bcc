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
