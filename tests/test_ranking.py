"""Per-question steps whose cost must grow with rows, not questions (issue 11),
checked against the plain ways they replace."""
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pytest

import evalframe as ef
from evalframe.engine.steps import _tiled_strings
from evalframe import _id_codes
from evalframe._id_codes import position_in


def _index_in(values, value_set):
    return pc.index_in(values.cast(value_set.type), value_set=value_set).fill_null(-1).to_numpy()


@pytest.mark.parametrize("n_values,n_set", [(5, 3), (20_000, 3_000), (40_000, 30_000)])
def test_position_in_is_index_in(n_values, n_set):
    rng = np.random.default_rng(n_values)
    value_set = pa.array(sorted({f"x{i}" for i in rng.integers(0, 2 * n_set, n_set)}), pa.large_string())
    values = pa.array(list(dict.fromkeys(f"x{i}" for i in rng.integers(0, 2 * n_set, n_values))), pa.string())
    got = position_in(values, value_set)
    assert got.dtype == np.int32
    assert np.array_equal(got, _index_in(values, value_set))
    assert (got >= 0).any() and (got < 0).any()  # both outcomes are exercised


def test_position_in_exact_when_fingerprints_collide(monkeypatch):
    """A string absent from the set whose fingerprint equals a present one's is absent;
    a set with two equal fingerprints falls back to the exact probe."""
    def weak(arr):  # x<i> -> i mod 2000: unique on x0..x1999, shared by x2000..x3999
        return np.array([int(s[1:]) % 2000 for s in arr.to_pylist()], dtype=np.uint64)

    monkeypatch.setattr(_id_codes, "fingerprints", weak)
    value_set = pa.array([f"x{i}" for i in range(2000)], pa.large_string())
    values = pa.array([f"x{i}" for i in np.random.default_rng(0).permutation(40_000)[:20_000]])
    got = position_in(values, value_set)
    assert np.array_equal(got, _index_in(values, value_set))
    assert (got < 0).sum() > 10_000  # the colliding absent ids were not matched
    clash = pa.array([f"x{i}" for i in range(4000)], pa.large_string())  # fingerprints repeat
    assert np.array_equal(position_in(values, clash), _index_in(values, clash))


def test_many_questions_match_the_small_path():
    """A run of more questions than the fingerprint probe's threshold (some not in the
    golden set) scores every question as its halves do, each below the threshold."""
    rng = np.random.default_rng(7)
    n_q, depth = 24_000, 3
    q = np.repeat(np.arange(n_q), depth)
    run = pd.DataFrame({"query_id": "q" + pd.Series(q).astype(str), "doc_id": "d" + pd.Series(rng.integers(0, 50, len(q))).astype(str),
                        "score": rng.normal(size=len(q))}).drop_duplicates(["query_id", "doc_id"], ignore_index=True)
    judged = run.sample(frac=0.5, random_state=1)
    qrels = pd.DataFrame({"query_id": judged["query_id"], "doc_id": judged["doc_id"],
                          "relevance": rng.integers(0, 3, len(judged))})
    qrels = qrels[~qrels["query_id"].isin(["q5", "q12001", "q23999"])]  # run questions the golden set lacks
    measures = ["P@2", "RR", "nDCG@3", "AP", "R@10"]
    with pytest.warns(ef.EvalframeWarning):
        whole = ef.evaluate(run, qrels, measures)
    first = run["query_id"].isin([f"q{i}" for i in range(n_q // 2)])
    halves = []
    for part in (first, ~first):
        with pytest.warns(ef.EvalframeWarning):
            halves.append(ef.evaluate(run[part], qrels[qrels["query_id"].isin(run.loc[part, "query_id"])], measures))
    key = ["query_id", "measure"]
    a = whole.sort_values(key, ignore_index=True)
    b = pd.concat(halves).sort_values(key, ignore_index=True)
    pd.testing.assert_frame_equal(a, b)
    assert "q5" not in set(whole["query_id"]) and len(a) == qrels["query_id"].nunique() * len(measures)


def test_tiled_strings_is_a_tile():
    names = ["R@5", "", "nDCG@10", "é"]
    for times in (0, 1, 3):
        got = _tiled_strings(names, times)
        got.validate(full=True)
        assert got.to_pylist() == names * times
    assert _tiled_strings([], 4).to_pylist() == []


def _id_column(ids) -> pd.Series:
    return pd.Series(pa.array([f"q{i}" for i in ids], pa.large_string()), dtype=pd.StringDtype("pyarrow"))


@pytest.mark.parametrize("layout", ["grouped", "comes_back", "half_grouped", "shuffled"])
def test_encode_is_dictionary_encode(layout):
    """Question codes and dictionary, by whichever path (a run grouped by question with
    every question once, a question coming back, a golden set half grouped, no order),
    are Arrow's dictionary_encode of the column."""
    from evalframe._id_codes import BLOCK_ROWS, encode_ids
    rng = np.random.default_rng(3)
    n_q = BLOCK_ROWS // 2
    grouped = np.repeat(rng.permutation(n_q), 5)
    ids = {"grouped": grouped,
           "comes_back": np.concatenate([grouped, grouped[:7]]),
           "half_grouped": np.concatenate([grouped, rng.integers(0, 2 * n_q, len(grouped) // 3)]),
           "shuffled": rng.permutation(grouped)}[layout]
    s = _id_column(ids)
    got = encode_ids(s)
    enc = pc.dictionary_encode(pa.chunked_array([pa.array(s)]).combine_chunks())
    assert got.codes.dtype == np.int32
    assert np.array_equal(got.codes, enc.indices.to_numpy())
    assert got.dictionary.equals(enc.dictionary)
    assert got.names.tolist() == enc.dictionary.to_pylist()


def test_encode_exact_when_fingerprints_collide(monkeypatch):
    """Distinct grouped ids two of which share a fingerprint are still told apart."""
    from evalframe import _id_codes
    real = _id_codes.fingerprints

    def weak(arr):  # q<i> and q<i + 1000> collide
        fp = real(pa.chunked_array([pa.array([f"q{int(s[1:]) % 1000}" for s in arr.to_pylist()])]))
        return fp

    ids = np.repeat(np.arange(_id_codes.BLOCK_ROWS // 4), 5)
    s = _id_column(ids)
    monkeypatch.setattr(_id_codes, "fingerprints", weak)
    got = _id_codes.encode_ids(s)
    enc = pc.dictionary_encode(pa.chunked_array([pa.array(s)]).combine_chunks())
    assert np.array_equal(got.codes, enc.indices.to_numpy()) and got.dictionary.equals(enc.dictionary)
    assert len(got.dictionary) == len(np.unique(ids))


@pytest.mark.parametrize("prefix", ["q", ""])
def test_dropped_run_questions_examples(prefix):
    """The run questions the golden set lacks: count, and the first examples in natural
    order (numeric for integer ids), as a plain sort of their ids says."""
    rng = np.random.default_rng(11)
    n_q = 30_000
    q = np.repeat(rng.permutation(n_q), 2)
    run = pd.DataFrame({"query_id": [f"{prefix}{i}" for i in q], "doc_id": np.tile(["a", "b"], n_q),
                        "score": rng.normal(size=2 * n_q)})
    lacking = set(rng.choice(n_q, 40, replace=False).tolist()) | {0, 7, 10, 100}
    qrels = run[~np.isin(q, list(lacking))].assign(relevance=1)[["query_id", "doc_id", "relevance"]]
    diag = ef.diagnostics(run, qrels)
    row = diag[diag["check"] == "run_questions_not_in_golden_set"].iloc[0]
    ids = [f"{prefix}{i}" for i in lacking]
    expected = sorted(ids, key=int) if prefix == "" else sorted(ids)
    assert row["count"] == len(lacking)
    assert row["examples"] == ", ".join(expected[:5])


@pytest.mark.parametrize("with_system", [False, True])
def test_long_table_is_the_plain_long_table(with_system):
    """The long table built from Arrow takes is the one pandas builds row by row; it holds
    its own values (writing to it changes neither the groups nor the values given)."""
    from evalframe.engine.steps import long_table
    groups = pd.DataFrame({"query_id": ["q2", "q10", "é"]})
    if with_system:
        groups.insert(0, "system", ["a", "a", "b"])
    values = np.arange(6, dtype=np.float64).reshape(3, 2)
    got = long_table(groups, values, ["R@5", "nDCG@10"])
    rows = [{**{c: groups[c][g] for c in groups.columns}, "measure": m, "value": values[g, j]}
            for g in range(3) for j, m in enumerate(["R@5", "nDCG@10"])]
    pd.testing.assert_frame_equal(got, pd.DataFrame(rows))
    got.loc[0, "value"] = -1.0
    got.loc[0, "query_id"] = "x"
    assert values[0, 0] == 0.0 and groups["query_id"][0] == "q2"


def test_new_records_keep_the_groups_table():
    """A ranked table given more diagnostics records keeps its groups' table (made once),
    and its diagnostics table is made anew."""
    from evalframe.engine.steps import with_records
    from evalframe.ranking import judge
    from evalframe._diagnostic_records import Check, Diagnostic
    run = pd.DataFrame({"query_id": ["q1", "q1", "q2"], "doc_id": ["a", "b", "c"], "score": [2.0, 1.0, 1.0]})
    qrels = pd.DataFrame({"query_id": ["q1", "q2", "q3"], "doc_id": ["a", "c", "x"], "relevance": [1, 1, 1]})
    J = judge(run, qrels, warn=False)
    groups, before = J.groups, len(J.diagnostics)
    K = with_records(J, [Diagnostic(None, Check.SHALLOW_RANKINGS, 2, "fewer", ("q1", "q2"))])
    assert K is not J and K.groups is groups and list(K.groups["query_id"]) == ["q1", "q2", "q3"]
    assert len(K.diagnostics) == before + 1 and len(J.diagnostics) == before
