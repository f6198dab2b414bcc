"""Aggregation objects (partial -> combine -> finalize), declared on each family and
used by aggregate() and by `evalframe trec-eval`'s `all` lines."""
import math

import numpy as np
import pandas as pd
import pytest

import evalframe as ef
from evalframe.measures import FAMILIES, MIN_GEO_MEAN, Aggregation, GeoMean, Mean, Sum, parse_measure


def test_each_family_declares_an_aggregation_object():
    for fam in FAMILIES.values():
        assert isinstance(fam.aggregator, Aggregation)
        assert fam.aggregation == fam.aggregator.name
    assert isinstance(FAMILIES["NumRet"].aggregator, Sum)
    assert FAMILIES["GMAP"].aggregator == GeoMean(floor=MIN_GEO_MEAN)
    assert isinstance(FAMILIES["AP"].aggregator, Mean)
    assert parse_measure("gm_bpref").aggregation == "gmean"


@pytest.mark.parametrize("agg", [Mean(), Sum(), GeoMean()])
def test_chunks_combined_give_the_whole(agg):
    rng = np.random.default_rng(0)
    x = rng.random(1000)
    whole = agg.finalize(agg.partial(x))
    parts = agg.finalize(agg.combine([agg.partial(c) for c in np.array_split(x, 7)]))
    assert parts == pytest.approx(whole, rel=1e-12)
    expect = {"mean": x.mean(), "sum": x.sum(), "gmean": math.exp(np.log(np.maximum(x, 1e-5)).mean())}
    assert whole == pytest.approx(expect[agg.name], rel=1e-12)


def test_counts_are_summed_exactly_in_parts():
    x = np.arange(100, dtype=float)
    parts = [Sum().partial(c) for c in np.array_split(x, 3)]
    assert Sum().finalize(Sum().combine(parts)) == 4950.0


def test_grouped_partial_is_one_state_per_group():
    x = np.array([0.5, 0.0, 1.0, 0.25, 0.75])
    g = np.array([0, 1, 0, 1, 2])
    for agg in (Mean(), Sum(), GeoMean()):
        got = agg.finalize(agg.partial(x, g, 4))
        each = [agg.finalize(agg.partial(x[g == k])) for k in range(4)]
        assert got.tolist() == each  # a group without values: 0
    assert each[3] == 0.0


def test_sums_follow_the_order_of_the_values_as_trec_eval():
    x = np.array([1e16, 1.0, -1e16, 1.0])
    assert Sum().finalize(Sum().partial(x)) == ((1e16 + 1.0) - 1e16) + 1.0


def test_geomean_floor_is_checked():
    assert GeoMean().finalize(GeoMean().partial([0.0, 1.0])) == pytest.approx(math.sqrt(1e-5))
    with pytest.raises(ValueError, match="GeoMean: floor must be a number > 0, got 0"):
        GeoMean(floor=0)


def test_aggregate_uses_each_measures_aggregation():
    per_q = ef.evaluate({"a": {"d1": 1.0, "x": 0.5}, "b": {"x": 1.0}}, {"a": {"d1": 1}, "b": {"d2": 1}},
                        ["AP", "NumRet", "GMAP"])
    agg = ef.aggregate(per_q).set_index("measure")
    assert agg["aggregation"].to_dict() == {"AP": "mean", "NumRet": "sum", "GMAP": "gmean"}
    assert agg.loc["NumRet", "value"] == 3.0 and agg.loc["NumRet", "mean"] == 1.5
    assert agg.loc["GMAP", "value"] == pytest.approx(math.sqrt(1e-5))


def test_aggregate_refuses_an_unknown_measure_name():
    table = pd.DataFrame({"query_id": ["q1", "q2"], "measure": ["NotAMeasure@3"] * 2, "value": [1.0, 0.0]})
    with pytest.raises(ef.EvalframeInputError, match="'NotAMeasure@3' is not a known measure"):
        ef.aggregate(table)


def test_aggregate_takes_index_recall():
    out = ef.index_recall({"q": {"a": 1.0, "b": 0.5}}, {"q": {"a": 1.0, "c": 0.5}}, k=2)
    agg = ef.aggregate(out)
    assert agg["measure"].tolist() == ["IndexRecall@2"] and agg["value"].tolist() == [0.5]


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_aggregate_refuses_non_finite_values(bad):
    """Defect 7: a NaN was silently left out of the mean (and n)."""
    table = pd.DataFrame({"system": ["A", "A", "B", "B"], "query_id": ["q1", "q2"] * 2,
                          "measure": ["nDCG@10"] * 4, "value": [0.5, bad, 0.25, 0.75]})
    with pytest.raises(ef.EvalframeInputError, match=r"1 values are NaN or infinite") as info:
        ef.aggregate(table)
    assert "A, nDCG@10: 1" in str(info.value)
    assert "B, nDCG@10" not in str(info.value)


def _one_name_per_family():
    names = {"P": "P@3", "Success": "Success@3", "Judged": "Judged@3", "RelP": "RelP@3", "Unjudged": "Unjudged@3",
             "SDCG": "SDCG(max_rel=3)@3", "INST": "INST(max_rel=3)", "INSQ": "INSQ(max_rel=3)",
             "alpha_DCG": "alpha_DCG@3", "ERR_IA": "ERR_IA@3", "P_IA": "P_IA@3", "BPM": "BPM(max_rel=3)@3",
             "NERR8": "NERR8(max_rel=3)@3", "NERR9": "NERR9(max_rel=3)@3", "NERR10": "NERR10(max_rel=3)",
             "NERR11": "NERR11(max_rel=3)"}
    return [names.get(f, f) for f, fam in FAMILIES.items() if not fam.needs]  # span families: tests/test_spans.py


def test_every_family_evaluated_in_parts_and_combined_gives_the_whole():
    """The engine seam: questions split into partitions, each evaluated alone,
    their aggregation states combined, give aggregate() of the whole."""
    import warnings
    rng = np.random.default_rng(5)
    rows = [(f"q{q}", f"d{d}", float(rng.integers(0, 4))) for q in range(12) for d in rng.choice(15, 8, replace=False)]
    run = pd.DataFrame(rows, columns=["query_id", "doc_id", "score"])
    rows = [(f"q{q}", f"d{d}", int(rng.integers(-1, 4))) for q in range(12) for d in rng.choice(15, 6, replace=False)]
    qrels = pd.DataFrame(rows, columns=["query_id", "doc_id", "relevance"])
    names = _one_name_per_family()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        whole = ef.aggregate(ef.evaluate(run, qrels, names)).set_index("measure")
        qs = sorted(qrels.query_id.unique())
        parts = [ef.evaluate(run[run.query_id.isin(p)], qrels[qrels.query_id.isin(p)], names)
                 for p in (qs[:5], qs[5:9], qs[9:])]
    for name in whole.index:
        agg = parse_measure(name).aggregator
        states = [agg.partial(p.loc[p.measure == name, "value"].to_numpy()) for p in parts]
        assert agg.finalize(agg.combine(states)) == pytest.approx(whole.loc[name, "value"], rel=1e-12, abs=1e-15), name


def test_aggregate_groups_match_a_slow_loop():
    """Groups in order of first appearance (a missing segment its own group), n, sums
    in row order (the mean to the bit) and each measure's own aggregation, on a shuffled
    table with systems, a segment column with missing values and a sum-aggregated measure."""
    rng = np.random.default_rng(7)
    rows = [(s, f"q{q}", m) for s in ("b", "a") for q in range(40) for m in ("AP", "NumRel", "P@5")]
    t = pd.DataFrame(rows, columns=["system", "query_id", "measure"]).iloc[rng.permutation(len(rows))]
    t["value"] = rng.random(len(t)) * np.where(t["measure"] == "NumRel", 10, 1)
    seg = pd.Series(rng.choice(["x", "y", None], len(t)), index=t.index, dtype=object)
    t["seg"] = seg.where(seg.notna(), np.nan)
    t = t.reset_index(drop=True)
    got = ef.aggregate(t, by="seg")
    groups: dict[tuple, list[float]] = {}
    for r in t.itertuples(index=False):
        key = (r.system, "NaN" if pd.isna(r.seg) else r.seg, r.measure)
        groups.setdefault(key, []).append(r.value)
    assert [(a, "NaN" if pd.isna(b) else b, c) for a, b, c in got[["system", "seg", "measure"]].itertuples(index=False)] \
        == list(groups)
    for row, vals in zip(got.itertuples(index=False), groups.values()):
        total = 0.0
        for v in vals:
            total += v
        assert row.n == len(vals)
        assert row.mean == total / len(vals)
        assert row.value == (total if row.measure == "NumRel" else total / len(vals))
        assert row.aggregation == ("sum" if row.measure == "NumRel" else "mean")


@pytest.mark.parametrize("n", [10, 1500])  # few (question, group) pairs: counted densely; many: hashed
def test_aggregate_refuses_a_repeated_system_question_measure(n):
    t = pd.DataFrame({"system": "s", "query_id": [f"q{i}" for i in range(n)], "measure": "AP",
                      "value": 0.5, "seg": [f"g{i}" for i in range(n)]})
    ef.aggregate(t, by="seg")
    bad = pd.concat([t, t.iloc[[n // 2]]], ignore_index=True)
    with pytest.raises(ef.EvalframeInputError, match="1 rows repeat|2 rows repeat"):
        ef.aggregate(bad, by="seg")
    other_measure = pd.concat([t, t.iloc[[n // 2]].assign(measure="RR")], ignore_index=True)
    assert len(ef.aggregate(other_measure, by="seg")) == n + 1


def test_aggregate_refuses_values_that_are_not_numbers_and_reads_numbers_as_text():
    import pandas as pd

    import evalframe as ef
    table = pd.DataFrame({"system": ["a", "a"], "query_id": ["q1", "q2"], "measure": ["P@1", "P@1"],
                          "value": ["x", "0.5"]})
    with pytest.raises(ef.EvalframeInputError, match="not a number"):
        ef.aggregate(table)
    with pytest.raises(ef.EvalframeInputError, match="not a number"):
        ef.aggregate(table.assign(value=[1 + 1j, 0.5]))
    assert ef.aggregate(table.assign(value=["1", "0.5"]))["mean"].tolist() == [0.75]
    assert ef.aggregate(table.assign(value=[True, False]))["mean"].tolist() == [0.5]  # hits as 0/1
