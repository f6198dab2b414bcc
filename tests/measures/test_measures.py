"""Each convention of evalframe.measures, and properties every measure must have."""
import warnings

import numpy as np
import pandas as pd
import pytest

import evalframe as ef
from evalframe.measures import FAMILIES
from evalframe.evaluation import evaluate_with_diagnostics
from evalframe._sort_kernel import _sorted_order

ALL = ["P@3", "R@3", "R", "RR", "RR@2", "AP", "AP@3", "nDCG", "nDCG@3", "nDCG(gain='linear')@3",
       "Rprec", "Success@3", "Judged@3", "bpref", "AP(judged_only=True)", "nDCG(judged_only=True)@3"]
RANGE_01 = ALL


def vals(run, qrels, measures, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ef.EvalframeWarning)
        out = ef.evaluate(run, qrels, measures, **kw)
    return out


def one(run, qrels, measure, **kw):
    return float(vals(run, qrels, measure, **kw)["value"].iloc[0])


# ---------------------------------------------------------------- ranking and ties
def test_ties_broken_by_doc_id_descending_like_trec_eval():
    qrels = {"q": {"a": 1}}
    run = {"q": {"a": 1.0, "b": 1.0, "c": 1.0}}  # all tied: order c, b, a
    assert one(run, qrels, "RR") == pytest.approx(1 / 3)
    assert one(run, qrels, "RR", ties="doc_id_asc") == 1.0


def test_ties_bytewise_not_numeric():
    # "10" < "9" byte-wise, so descending puts "9" first
    run = {"q": {"10": 0.5, "9": 0.5}}
    assert one(run, {"q": {"9": 1}}, "RR") == 1.0
    assert one(run, {"q": {"10": 1}}, "RR") == 0.5


def test_rank_only_run_ordered_by_rank_repeated_ranks_are_ties():
    qrels = {"q": {"a": 1}}
    ranks = pd.DataFrame({"query_id": "q", "doc_id": ["a", "b", "c"], "rank": [2, 2, 1]})  # c, then b/a tied
    assert one(ranks, qrels, "RR") == 1 / 3  # c, b, a: the tie broken by doc_id descending
    assert one(ranks, qrels, "RR", ties="doc_id_asc") == 0.5  # c, a, b
    assert one(ranks, qrels, "RR", ties="rank") == 1 / 3


def test_rank_column_ignored_by_default_and_used_on_request():
    run = pd.DataFrame({"query_id": ["q", "q"], "doc_id": ["a", "b"], "score": [1.0, 2.0], "rank": [1, 2]})
    qrels = {"q": {"a": 1}}
    assert one(run, qrels, "RR") == 0.5
    assert one(run, qrels, "RR", ties="rank") == 1.0


def test_scores_compared_as_float64():
    # differ only beyond float32 precision: ordered by score, not tied
    run = {"q": {"a": 1.0, "b": 1.0 + 1e-12}}
    assert one(run, {"q": {"b": 1}}, "RR") == 1.0


def test_sorted_order_matches_lexsort():
    rng = np.random.default_rng(3)
    for presorted in (False, True):
        for _ in range(20):
            n = int(rng.integers(1, 400))
            grp = rng.integers(0, 7, n)
            primary = rng.integers(0, 5, n).astype(float)
            tb = rng.permutation(n)
            if presorted:
                o = np.lexsort((tb, primary, grp))
                # shuffle whole groups only
                perm = rng.permutation(7)
                o = o[np.argsort(perm[grp[o]], kind="stable")]
                grp, primary, tb = grp[o], primary[o], tb[o]
            expected = np.lexsort((tb, primary, grp))
            got = _sorted_order(grp, primary, lambda rows: tb[rows])[0]
            assert np.array_equal(got, expected)
    # more groups than 16 bits hold (two radix passes), shuffled, with ties
    n = 200_000
    grp = rng.integers(0, 90_000, n)
    primary = rng.integers(0, 3, n).astype(float)
    tb = rng.permutation(n)
    assert np.array_equal(_sorted_order(grp, primary, lambda rows: tb[rows])[0], np.lexsort((tb, primary, grp)))


@pytest.mark.slow
def test_sorted_order_shuffled_close_scores_signed_zeros_and_many_groups():
    # one combined sort key holds the group and the score's top bits: scores
    # closer than those bits, -0.0 next to 0.0, infinities, and tie-breaking keys
    # that repeat must still give the stable (group, score, tiebreak) order
    rng = np.random.default_rng(5)
    n = 60_000
    for n_groups in (3, 70_000, 2 ** 30):
        grp = rng.integers(0, n_groups, n)
        base = rng.choice([10.0, -3.5, 0.0, -0.0, np.inf, -np.inf, 1e300], n)
        primary = np.where(np.isinf(base), base, base + rng.integers(0, 4, n) * np.spacing(base))  # ulps apart
        primary[rng.random(n) < 0.3] = -0.0
        tb = rng.integers(0, 5, n)  # repeats: equal keys keep their row order
        got = _sorted_order(grp, primary, lambda rows: tb[rows])[0]
        assert np.array_equal(got, np.lexsort((tb, primary, grp)))
        grouped = np.lexsort((primary, grp))  # grouped and sorted: the other path, same answer
        g, p, t = grp[grouped], primary[grouped], tb[grouped]
        assert np.array_equal(_sorted_order(g, p, lambda rows: t[rows])[0], np.lexsort((t, p, g)))


# ---------------------------------------------------------------- which questions count
def test_missing_questions_score_zero_by_default_and_warn():
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}}
    run = {"q1": {"a": 1.0}}
    with pytest.warns(ef.QuestionsScoredZeroWarning, match="q2"):
        out = ef.evaluate(run, qrels, "RR")
    assert dict(zip(out.query_id, out.value)) == {"q1": 1.0, "q2": 0.0}
    out = vals(run, qrels, "RR", missing="drop")
    assert out.query_id.tolist() == ["q1"]


def test_run_questions_not_in_golden_set_dropped_with_warning():
    with pytest.warns(ef.QuestionsDroppedWarning, match="extra"):
        out = ef.evaluate({"q1": {"a": 1.0}, "extra": {"a": 1.0}}, {"q1": {"a": 1}}, "RR")
    assert out.query_id.tolist() == ["q1"]


def test_no_shared_question_is_an_error():
    with pytest.raises(ef.EvalframeInputError, match="share no question"):
        ef.evaluate({"x": {"a": 1.0}}, {"q": {"a": 1}}, "RR")


def test_int_and_str_question_ids_match():
    run = pd.DataFrame({"query_id": [1, 1, 2], "doc_id": ["a", "b", "a"], "score": [2.0, 1.0, 1.0]})
    qrels = pd.DataFrame({"query_id": ["1", "2"], "doc_id": ["b", "a"], "relevance": [1, 1]})
    out = vals(run, qrels, "RR")
    assert dict(zip(out.query_id, out.value)) == {"1": 0.5, "2": 1.0}
    # float ids as pandas reads an int column with gaps
    run2 = run.assign(query_id=run.query_id.astype(float))
    assert vals(run2, qrels, "RR")["value"].tolist() == [0.5, 1.0]


def test_diagnostics_table_has_the_same_facts():
    d = ef.diagnostics({"q1": {"a": 1.0}, "x": {"a": 1.0}}, {"q1": {"a": 1}, "q2": {"b": 0}})
    checks = dict(zip(d["check"], d["count"]))
    assert checks == {"run_questions_not_in_golden_set": 1, "golden_questions_not_in_run": 1,
                      "golden_questions_without_relevant": 1}


# ---------------------------------------------------------------- relevance
def test_rel_threshold():
    qrels = {"q": {"a": 1, "b": 2}}
    run = {"q": {"a": 2.0, "b": 1.0}}
    assert one(run, qrels, "RR") == 1.0
    assert one(run, qrels, "RR", rel=2) == 0.5
    out = vals(run, qrels, ["P@2", "P(rel=1)@2"], rel=2)
    assert out.measure.tolist() == ["P(rel=2)@2", "P(rel=1)@2"]
    assert out.value.tolist() == [0.5, 1.0]


def test_negative_labels_nonrelevant_but_unjudged_for_bpref_and_judged():
    qrels = {"q": {"r": 1, "n": 0, "neg": -1}}
    run = {"q": {"neg": 3.0, "r": 2.0, "n": 1.0}}
    v = vals(run, qrels, ["P@3", "bpref", "Judged@3", "RR", "AP(judged_only=True)"]).set_index("measure").value
    assert v["P@3"] == pytest.approx(1 / 3)
    assert v["RR"] == 0.5
    assert v["bpref"] == 1.0          # the negative label above r is not a judged non-relevant doc
    assert v["Judged@3"] == pytest.approx(2 / 3)
    assert v["AP(judged_only=True)"] == 1.0  # condensed list drops neg


def test_question_with_only_negative_labels_counts_and_scores_zero():
    out = vals({"q": {"a": 1.0}, "p": {"a": 1.0}}, {"q": {"a": -1}, "p": {"a": 1}}, ["AP", "NumRel"])
    v = out.set_index(["query_id", "measure"]).value
    assert v[("q", "AP")] == 0.0 and v[("q", "NumRel")] == 0.0 and v[("p", "AP")] == 1.0


def test_empty_relevant_set_scores_zero_and_warns():
    with pytest.warns(ef.NoRelevantWarning):
        out = ef.evaluate({"q": {"a": 1.0}}, {"q": {"a": 0}}, ["R@5", "AP", "RR", "nDCG@5", "Rprec", "bpref",
                                                                "Success@5"])
    assert (out.value == 0).all()


# ---------------------------------------------------------------- cutoffs and nDCG
def test_precision_divides_by_k_even_for_short_lists():
    assert one({"q": {"a": 1.0}}, {"q": {"a": 1}}, "P@10") == 0.1


def test_recall_divides_by_relevant():
    assert one({"q": {"a": 1.0}}, {"q": {"a": 1, "b": 1, "c": 1, "d": 1}}, "R@10") == 0.25


def test_ndcg_gain_exp_vs_linear_and_ideal_from_all_judged():
    qrels = {"q": {"a": 1, "b": 3}}
    run = {"q": {"a": 2.0}}  # b never retrieved, still in the ideal ranking
    exp = one(run, qrels, "nDCG@5")
    lin = one(run, qrels, "nDCG(gain='linear')@5")
    assert exp == pytest.approx(1 / (7 + 1 / np.log2(3)))
    assert lin == pytest.approx(1 / (3 + 1 / np.log2(3)))
    assert one(run, qrels, "ndcg_cut_5") == lin


@pytest.mark.parametrize("measure", ["nDCG@5", "nDCG", "nDCGrel(gain='exp')", "G(gain='exp')",
                                     "RnDCG(gain='exp')", "RBP(gain='exp')"])
def test_labels_whose_exp_gain_overflows_are_an_error(measure):
    """Defect 7: 2**1024 - 1 is inf in float64; nDCG was NaN, silently."""
    qrels = {"q": {"a": 1024, "b": 1}, "p": {"a": 1}}
    run = {"q": {"a": 2.0, "b": 1.0}, "p": {"a": 1.0}}
    with pytest.raises(ef.EvalframeInputError, match=r"(?s)1024.*gain='linear'"):
        vals(run, qrels, measure)
    linear = vals(run, qrels, measure.replace("gain='exp'", "gain='linear'").replace("nDCG", "nDCG(gain='linear')", 1)
                  if measure.startswith("nDCG@") or measure == "nDCG" else measure.replace("'exp'", "'linear'"))
    assert np.isfinite(linear["value"]).all()


def test_labels_whose_ideal_dcg_overflows_are_an_error():
    qrels = {"q": {"a": 1023, "b": 1023, "c": 1023}}
    with pytest.raises(ef.EvalframeInputError, match="ideal DCG overflows"):
        vals({"q": {"a": 2.0}}, qrels, "nDCG")
    assert one({"q": {"a": 2.0}}, {"q": {"a": 1023, "b": 1}}, "nDCG@1") == 1.0  # still finite: fine


def test_a_gain_given_to_a_large_label_is_used():
    qrels = {"q": {"a": 2000, "b": 1}}
    assert one({"q": {"a": 2.0, "b": 1.0}}, qrels, "nDCG(gains=((2000, 5.0),))") == 1.0


def test_depth_truncates_rankings():
    run = {"q": {"a": 3.0, "b": 2.0, "c": 1.0}}
    qrels = {"q": {"c": 1}}
    assert one(run, qrels, "R@100") == 1.0
    assert one(run, qrels, "R@100", depth=2) == 0.0


# ---------------------------------------------------------------- properties of every measure
def _random_case(seed, n_q=6, n_d=12):
    rng = np.random.default_rng(seed)
    run_rows, qrels_rows = [], []
    for q in range(n_q):
        for d in rng.choice(n_d, int(rng.integers(1, n_d)), replace=False):
            run_rows.append((f"q{q}", f"d{d}", float(rng.integers(0, 4))))
        for d in rng.choice(n_d, int(rng.integers(1, n_d)), replace=False):
            qrels_rows.append((f"q{q}", f"d{d}", int(rng.integers(-1, 4))))
    return (pd.DataFrame(run_rows, columns=["query_id", "doc_id", "score"]),
            pd.DataFrame(qrels_rows, columns=["query_id", "doc_id", "relevance"]))


@pytest.mark.parametrize("seed", range(5))
def test_row_order_does_not_matter(seed):
    run, qrels = _random_case(seed)
    a = vals(run, qrels, ALL)
    b = vals(run.sample(frac=1, random_state=seed), qrels.sample(frac=1, random_state=seed + 1), ALL)
    pd.testing.assert_frame_equal(a, b)


@pytest.mark.parametrize("seed", range(5))
def test_renaming_ids_does_not_matter_when_order_is_kept(seed):
    run, qrels = _random_case(seed)
    # An order-preserving renaming keeps tie order; question names are arbitrary.
    ren_d = lambda s: "doc-" + s.str[1:].str.zfill(3)
    ren_q = lambda s: "Q" + s
    run2 = run.assign(doc_id=ren_d(run.doc_id.str.replace("d", "x")), query_id=ren_q(run.query_id))
    qrels2 = qrels.assign(doc_id=ren_d(qrels.doc_id.str.replace("d", "x")), query_id=ren_q(qrels.query_id))
    # zero-padding is order-preserving only numerically; use integer ranks to avoid ties
    run = run.assign(score=run.score + np.arange(len(run)) * 1e-6)
    run2 = run2.assign(score=run.score.to_numpy())
    a, b = vals(run, qrels, ALL), vals(run2, qrels2, ALL)
    assert np.allclose(a.value.to_numpy(), b.value.to_numpy())


@pytest.mark.parametrize("seed", range(5))
def test_values_in_range(seed):
    run, qrels = _random_case(seed)
    v = vals(run, qrels, RANGE_01).value
    assert ((v >= 0) & (v <= 1)).all()


def test_perfect_ranking_scores_one():
    qrels = {"q": {"a": 3, "b": 2, "c": 1, "n": 0}}
    run = {"q": {"a": 4.0, "b": 3.0, "c": 2.0, "n": 1.0}}
    v = vals(run, qrels, ["R", "RR", "AP", "nDCG", "nDCG@3", "Rprec", "bpref", "Success@1", "P@3"])
    assert (v.value == 1.0).all(), v


@pytest.mark.parametrize("seed", range(5))
def test_documents_below_k_do_not_change_at_k(seed):
    run, qrels = _random_case(seed)
    at_k = ["P@3", "R@3", "RR@3", "AP@3", "nDCG@3", "Success@3", "Judged@3"]
    a = vals(run, qrels, at_k)
    w = warnings.catch_warnings()
    # keep the top 3 of each question only
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ranked = ef.evaluate(run, qrels, "NumRet")  # noqa: F841  (exercise)
    top = (run.assign(neg=-run.score).sort_values(["query_id", "neg", "doc_id"], ascending=[True, True, False])
           .groupby("query_id").head(3).drop(columns="neg"))
    b = vals(top, qrels, at_k)
    pd.testing.assert_frame_equal(a, b)


@pytest.mark.parametrize("seed", range(3))
def test_partitions_of_questions_give_the_same_values(seed):
    run, qrels = _random_case(seed, n_q=9)
    whole = vals(run, qrels, ALL)
    qs = sorted(qrels.query_id.unique())
    parts = [vals(run[run.query_id.isin(p)], qrels[qrels.query_id.isin(p)], ALL)
             for p in (qs[:3], qs[3:7], qs[7:])]
    merged = pd.concat(parts).sort_values(["query_id"], kind="stable").reset_index(drop=True)
    pd.testing.assert_frame_equal(whole.sort_values(["query_id"], kind="stable").reset_index(drop=True), merged)


GAIN_FAMILIES = ["nDCGrel", "RnDCG", "G", "nDCG(gain='linear',gains=((1, 3.0), (2, 9.5)))", "G(gains=((1, 2.5),))",
                 "nDCGrel(gain='exp')", "RBP(p=0.8)"]


@pytest.mark.parametrize("name", ["cranfield", "scifact"])
def test_partitions_are_bit_exact_for_the_running_dcg_families(name):
    """Every running DCG (and ideal DCG) starts from 0 at each question: the
    values of a question do not depend on the questions before it."""
    ds = getattr(ef.datasets, f"load_{name}")()
    ms = GAIN_FAMILIES
    whole = vals(ds.runs, ds.qrels, ms)
    qs = ds.qrels.query_id.unique()
    part = np.random.default_rng(9).integers(0, 3, len(qs))
    pieces = [vals(ds.runs[ds.runs.query_id.isin(qs[part == i])], ds.qrels[ds.qrels.query_id.isin(qs[part == i])], ms)
              for i in range(3)]
    keys = ["system", "query_id", "measure"]
    merged = pd.concat(pieces).set_index(keys).loc[pd.MultiIndex.from_frame(whole[keys])]
    assert (merged["value"].to_numpy() == whole["value"].to_numpy()).all()


def test_slow_loop_oracle_for_judged_and_bpref():
    run, qrels = _random_case(11)
    got = vals(run, qrels, ["Judged@5", "bpref"]).set_index(["query_id", "measure"]).value
    lab = {(q, d): r for q, d, r in qrels.itertuples(index=False)}
    for q, grp in run.groupby("query_id"):
        ranked = grp.assign(neg=-grp.score).sort_values(["neg", "doc_id"], ascending=[True, False]).doc_id.tolist()
        judged = sum(1 for d in ranked[:5] if lab.get((q, d), -9) >= 0)
        assert got[(q, "Judged@5")] == pytest.approx(judged / 5)
        R = sum(1 for (qq, _), r in lab.items() if qq == q and r >= 1)
        N = sum(1 for (qq, _), r in lab.items() if qq == q and 0 <= r < 1)
        total, nonrel = 0.0, 0
        for d in ranked:
            r = lab.get((q, d))
            if r is None or r < 0:
                continue
            if r < 1:
                nonrel += 1
            else:
                total += 1.0 - (min(nonrel, R) / min(N, R) if nonrel else 0.0)
        assert got[(q, "bpref")] == pytest.approx(total / R if R else 0.0)


def test_every_family_is_tested_here():
    names = {ef.parse_measure(m).family for m in ALL} | {"NumRet", "NumRel", "NumRelRet"}
    assert set(FAMILIES) - names <= {f for f in FAMILIES if f not in
                                     {"P", "R", "RR", "AP", "nDCG", "Rprec", "Success", "Judged", "bpref",
                                      "NumRet", "NumRel", "NumRelRet"}}


def test_inputs_are_not_modified():
    run, qrels = _random_case(1)
    run_c, qrels_c = run.copy(), qrels.copy()
    vals(run, qrels, ALL)
    pd.testing.assert_frame_equal(run, run_c)
    pd.testing.assert_frame_equal(qrels, qrels_c)


def test_many_systems_in_one_call():
    run, qrels = _random_case(2)
    both = pd.concat([run.assign(system="A"), run.assign(system="B", score=-run.score)])
    out = vals(both, qrels, ["AP", "nDCG@3"])
    a = vals(run, qrels, ["AP", "nDCG@3"])
    b = vals(run.assign(score=-run.score), qrels, ["AP", "nDCG@3"])
    assert np.allclose(out[out.system == "A"].value, a.value)
    assert np.allclose(out[out.system == "B"].value, b.value)
    agg = ef.aggregate(out)
    assert agg.columns.tolist() == ["system", "measure", "n", "mean", "value", "aggregation"]
    assert agg.n.tolist() == [6, 6, 6, 6]


def test_score_ties_diagnostic_counts_every_tied_row():
    ds = ef.datasets.load_cranfield()
    bm25 = ds.runs[ds.runs.system == "bm25"]
    d = ef.diagnostics(bm25, ds.qrels)
    row = d[d.check == "score_ties"].iloc[0]
    # PROVENANCE.md: bm25 has ties in 24 Cranfield queries (103 rows)
    assert row["count"] == 103
    assert len(row["examples"].split(", ")) == 5


@pytest.mark.parametrize("shuffled", [False, True])
def test_score_ties_diagnostic_matches_a_slow_loop(shuffled):
    # the tied rows come from the ordering step: compare with counting them by hand
    rng = np.random.default_rng(11)
    n = 3000
    run = pd.DataFrame({"system": rng.choice(["A", "B"], n), "query_id": rng.integers(0, 40, n).astype(str),
                        "doc_id": [f"d{i}" for i in rng.permutation(n)], "score": rng.integers(0, 30, n) / 4})
    run = run.sort_values(["system", "query_id", "score"], ascending=[True, True, False], ignore_index=True)
    if shuffled:
        run = run.sample(frac=1, random_state=3, ignore_index=True)
    qrels = pd.DataFrame({"query_id": [str(q) for q in range(40)], "doc_id": "d0", "relevance": 1})
    d = ef.diagnostics(run, qrels)
    for system, rows in run.groupby("system"):
        sizes = rows.groupby(["query_id", "score"]).size()
        expected_rows = int(sizes[sizes > 1].sum())
        expected_questions = sorted({q for (q, _), k in sizes.items() if k > 1}, key=int)
        got = d[(d.check == "score_ties") & (d.system == system)].iloc[0]
        assert got["count"] == expected_rows
        assert got["examples"].split(", ") == expected_questions[:5]


def test_same_measure_under_two_names_reported_once():
    out = vals({"q": {"a": 1.0}}, {"q": {"a": 1}}, ["nDCG(gain='linear')@10", "ndcg_cut_10"])
    assert out.measure.tolist() == ["nDCG(gain='linear')@10"]


def test_ties_rank_needs_a_rank_for_every_row():
    a = ef.read_run(pd.DataFrame({"query_id": ["q"], "doc_id": ["a"], "score": [1.0], "rank": [1]}), system="A")
    b = ef.read_run({"q": {"a": 2.0, "b": 1.0}}, system="B")
    with pytest.raises(ef.EvalframeInputError, match="rank"):
        ef.evaluate(pd.concat([a, b]), {"q": {"a": 1}}, "RR", ties="rank")


def test_system_answering_no_golden_question_is_named():
    run = pd.concat([ef.read_run({"q": {"a": 1.0}}, system="A"), ef.read_run({"x": {"a": 1.0}}, system="B")])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = ef.evaluate(run, {"q": {"a": 1}}, "RR", missing="drop")
    assert any("system 'B' answers none" in str(w.message) and w.category is ef.QuestionsDroppedWarning
               for w in caught)
    assert out.system.unique().tolist() == ["A"]


def test_aggregate_refuses_duplicated_rows():
    per_q = vals({"q": {"a": 1.0}, "p": {"a": 1.0}}, {"q": {"a": 1}, "p": {"a": 1}}, "RR")
    with pytest.raises(ef.EvalframeInputError, match="counted twice"):
        ef.aggregate(pd.concat([per_q, per_q.iloc[:1]]))


def test_rel_pinned_to_one_stays_pinned_in_every_family():
    qrels = {"q": {"a": 1, "b": 2}}
    run = {"q": {"a": 2.0, "b": 1.0}}
    out = vals(run, qrels, ["SetP(rel=1)", "SetP", "P(rel=1)@2"], rel=2).set_index("measure").value
    assert out["SetP(rel=1)"] == 1.0 and out["SetP(rel=2)"] == 0.5 and out["P(rel=1)@2"] == 1.0


def test_int_and_float_parameters_name_the_same_measure():
    assert ef.parse_measure("Rprec(mult=1)") == ef.parse_measure("Rprec")


def test_warnings_point_at_the_callers_line():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ef.evaluate({"q": {"a": 1.0}}, {"q": {"a": 1}, "p": {"b": 1}}, "RR")
    assert caught and all(w.filename == __file__ for w in caught)


def test_rel_threshold_sets_the_no_relevant_check():
    # issue 9, defect 1: with rel=2 a question without a label >= 2 gave no warning
    # and no diagnostic (the check was hard-coded to label >= 1)
    qrels = {"q": {"a": 1, "b": 0}, "p": {"c": 2}}
    run = {"q": {"a": 1.0}, "p": {"c": 1.0}}
    with pytest.warns(ef.NoRelevantWarning, match=r"1 golden-set questions .*label >= 2.*e\.g\. q\)"):
        ef.evaluate(run, qrels, "RR", rel=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ef.NoRelevantWarning)
        tables = (evaluate_with_diagnostics(run, qrels, "RR", rel=2)[1], ef.diagnostics(run, qrels, rel=2))
    for d in tables:
        row = d[d.check == "golden_questions_without_relevant"]
        assert row["count"].tolist() == [1] and row["examples"].tolist() == ["q"]
    assert "golden_questions_without_relevant" not in ef.diagnostics(run, qrels)["check"].tolist()


def test_labels_confirmed_on_the_strings_whatever_the_fingerprints(monkeypatch):
    # the golden-set lookup probes (question, doc) fingerprint keys and confirms each
    # match on the strings; colliding keys fall back to an exact probe
    import evalframe.ranking as ranking
    ds = ef.datasets.load_cranfield()
    ms = ["AP", "nDCG@10", "bpref", "infAP", "Judged@10"]
    expected = vals(ds.runs, ds.qrels, ms)
    monkeypatch.setattr(ranking, "pair_keys", lambda codes, fp: np.zeros(len(codes), dtype=np.uint64))
    pd.testing.assert_frame_equal(vals(ds.runs, ds.qrels, ms), expected)
    # one key per question: unique in a golden set of one document per question, so
    # every retrieved document matches it and only the string check rejects "b"
    monkeypatch.setattr(ranking, "pair_keys", lambda codes, fp: codes.astype(np.uint64))
    assert one({"q": {"a": 1.0, "b": 2.0}}, {"q": {"a": 1}}, "RR") == 0.5


@pytest.mark.parametrize("ids", [["b", "ab", "a", "a\x00", "é", "z", "ß", "aaaaaaaab", "aaaaaaaa"],
                                 ["https://x.org/é", "https://x.org/e", "https://x.org/b", "short", "shor",
                                  "ß", "https://x.org/e/longer/than/sixteen"]])
@pytest.mark.parametrize("ties", ["doc_id_desc", "doc_id_asc"])
def test_ties_ordered_byte_wise_for_short_long_and_non_ascii_ids(ids, ties):
    from evalframe.ranking import judge
    run = ef.read_run(pd.DataFrame({"query_id": "q", "doc_id": ids, "score": 1.0}))
    J = judge(run, ef.read_qrels({"q": {ids[0]: 1}}), ties=ties, warn=False, keep_rows=True)
    got = [ids[i] for i in J.source_row]
    assert got == sorted(ids, key=lambda d: d.encode(), reverse=ties == "doc_id_desc")


def test_labels_confirmed_on_the_question_too(monkeypatch):
    # keys that ignore the question: a document judged for another question must
    # not lend its label
    import evalframe.ranking as ranking
    monkeypatch.setattr(ranking, "pair_keys", lambda codes, fp: fp.copy())
    qrels = {"q": {"a": 1}, "p": {"b": 1}}
    assert one({"q": {"b": 2.0, "a": 1.0}}, qrels, "RR", missing="drop") == 0.5


def test_row_order_scatter_and_positions_match_the_permutation():
    # the block form (grouped runs: whole groups move, rows move only inside blocks of
    # ties) puts the judged rows in place without a permutation: it must agree with one
    from evalframe._sort_kernel import sort_plan
    rng = np.random.default_rng(11)
    for case in range(40):
        n_groups = int(rng.integers(1, 30))
        sizes = rng.integers(1, 12, n_groups)
        grp = np.repeat(rng.permutation(n_groups) if case % 2 else np.arange(n_groups), sizes)
        block = np.repeat(np.arange(n_groups), sizes)
        primary = rng.integers(0, 4, len(grp)).astype(float)
        primary = primary[np.lexsort((primary, block))]  # sorted inside each (contiguous) group
        tb = rng.permutation(len(grp))
        plan, g_s, tied_rows = sort_plan(grp, primary, lambda rows: tb[rows])
        assert plan.order is None  # the block form
        expected = np.lexsort((tb, primary, grp))
        order = plan.array()
        assert np.array_equal(np.arange(len(grp)) if order is None else order, expected)
        assert np.array_equal(g_s, grp[expected])
        rows = np.flatnonzero(rng.random(len(grp)) < 0.4)
        values = rng.integers(0, 9, len(rows))
        full = np.full(len(grp), -1)
        full[rows] = values
        assert np.array_equal(plan.scatter(rows, values, -1), full[expected])
        tied = (primary[1:] == primary[:-1]) & (grp[1:] == grp[:-1])
        want = np.zeros(len(grp), bool)
        want[1:] |= tied
        want[:-1] |= tied
        assert np.array_equal(np.zeros(len(grp), bool) if tied_rows is None else tied_rows, want)


def test_shallow_rankings_examples_are_the_first_short_questions_in_natural_order():
    # examples are taken from the first groups (already in natural order); integer ids
    # among other ids sort byte-wise in the groups but numerically among themselves
    from evalframe._diagnostic_checks import shallow_rankings
    from evalframe._id_order import natural_order
    from evalframe.ranking import judge
    rng = np.random.default_rng(2)
    for case in range(30):
        pool = np.array([str(i) for i in rng.integers(0, 200, 12)] + ["a", "q7", "b2"], dtype=object)
        golden = np.unique(pool if case % 3 else pool[:12])
        qrels = pd.DataFrame({"query_id": golden, "doc_id": "d0", "relevance": 1})
        asked = golden[rng.random(len(golden)) < 0.7]
        if not len(asked):
            continue
        depth = rng.integers(1, 4, len(asked))
        run = pd.DataFrame({"query_id": np.repeat(asked, depth),
                            "doc_id": [f"d{j}" for d in depth for j in range(d)], "score": 1.0})
        J = judge(run, qrels, missing="drop", warn=False)
        short = asked[depth < 3]
        recs = shallow_rankings(J, 3, warn=False)
        assert (recs[0].examples if recs else ()) == tuple(natural_order(short)[:5]) if len(short) else not recs


def test_golden_set_order_is_question_then_label_descending_then_row():
    from evalframe.ranking import _question_label_order
    rng = np.random.default_rng(4)
    for n in (0, 1, 7, 5000):
        for lo, hi in ((0, 4), (-3, 3), (-(2 ** 40), 2 ** 40)):
            qq = rng.integers(0, 50, n)
            ql = rng.integers(lo, hi, n)
            assert np.array_equal(_question_label_order(qq, ql), np.lexsort((-ql, qq)))


def test_sorted_order_grouped_but_unsorted_inside_groups():
    # contiguous groups (as a run file), scores in any order inside them: the stable
    # argsort path, with scores ulps apart and repeated tie-breaking keys
    rng = np.random.default_rng(8)
    for n_groups in (1, 40, 3000):
        sizes = rng.integers(1, 30, n_groups)
        grp = np.repeat(rng.permutation(n_groups), sizes)
        base = rng.choice([2.0, -1.0, 0.0, -0.0], len(grp))
        primary = base + rng.integers(0, 3, len(grp)) * np.spacing(base)
        tb = rng.integers(0, 4, len(grp))
        got = _sorted_order(grp, primary, lambda rows: tb[rows])[0]
        assert np.array_equal(got, np.lexsort((tb, primary, grp)))


@pytest.mark.parametrize("tail", [6, 20, 60])  # what follows the shared prefix: one word, several, past the keys
@pytest.mark.parametrize("shuffled", [False, True])
@pytest.mark.parametrize("ties", ["doc_id_desc", "doc_id_asc"])
def test_tied_long_ids_sharing_a_prefix_ordered_byte_wise(tail, shuffled, ties):
    # URL-like ids: a long shared prefix, then tails of varying length, some the prefix
    # of another, some equal in their first words, a few non-ASCII; a loop is the oracle
    from evalframe.ranking import judge
    rng = np.random.default_rng(tail)
    alphabet = list("ab0#-") + ["é"]
    rows = []
    for q in range(60):
        docs = set()
        while len(docs) < 12:
            stem = "".join(rng.choice(alphabet, int(rng.integers(0, tail))))
            docs.add(stem)
            docs.add(stem + "".join(rng.choice(alphabet, int(rng.integers(1, 4)))))
        for d in sorted(docs):
            rows.append((f"q{q}", "https://en.wikipedia.org/wiki/Article_" + d, float(rng.integers(0, 3))))
    run_df = pd.DataFrame(rows, columns=["query_id", "doc_id", "score"])
    if shuffled:
        run_df = run_df.iloc[rng.permutation(len(run_df))].reset_index(drop=True)
    run = ef.read_run(run_df)
    qrels = ef.read_qrels(run_df[["query_id", "doc_id"]].assign(relevance=1))
    J = judge(run, qrels, ties=ties, warn=False, keep_rows=True)
    got = run_df.iloc[J.source_row][["query_id", "doc_id"]].apply(tuple, axis=1).tolist()
    desc = ties == "doc_id_desc"
    expected = []
    for q, part in run_df.groupby("query_id"):  # questions in byte order, as judge lists them
        ranked = sorted(zip(part["score"], part["doc_id"]),
                        key=lambda sd: (-sd[0], tuple(-b for b in sd[1].encode()) + (1,) if desc else sd[1].encode()))
        expected += [(q, d) for _, d in ranked]
    assert got == expected


def test_tie_order_with_several_keys_is_lexsort_in_blocks():
    from evalframe._sort_kernel import _tie_order
    rng = np.random.default_rng(5)
    for m in (2, 50, 4000):
        first = np.flatnonzero(np.concatenate(([True], rng.random(m - 1) < 0.3)))
        block = np.repeat(np.arange(len(first)), np.diff(np.append(first, m)))
        keys = [rng.integers(0, 3, m).astype(np.uint64) for _ in range(3)]
        assert np.array_equal(_tie_order(first, keys), np.lexsort((*keys, block)))


@pytest.mark.parametrize("ids, numeric", [
    (["10", "9", "-3", "0"], True),
    (["10", "x", "9"], False),          # a text id between integers: the whole column is looked at
    (["a", "10", "9"], False),
    (["10", "9", "1\n"], False),        # a newline is not part of an integer (Python's $ would allow it)
    (["10", "09", "9"], False),         # a leading zero: text
    (["9223372036854775807", "1"], True),
])
def test_question_ids_sort_numerically_only_when_every_id_is_an_integer(ids, numeric):
    from evalframe._id_order import natural_order
    expected = sorted(ids, key=int) if numeric else sorted(ids, key=lambda s: s.encode())
    assert list(natural_order(np.array(ids, dtype=object))) == expected


@pytest.mark.parametrize("seed", range(3))
def test_declared_value_range_holds(seed):
    """Every family that declares a value range (the anytime-valid statistics rely on it)
    keeps its values in it; the span families need a span golden set and are covered in
    test_spans."""
    run, qrels = _random_case(seed)
    names = [f"{n}@5" if f.cutoff == "required" else n for n, f in FAMILIES.items()
             if f.value_range is not None and "spans" not in f.needs]
    assert len(names) > 25
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        v = ef.evaluate(run, qrels, names)
    for name, fam in FAMILIES.items():
        if fam.value_range is None or "spans" in fam.needs:
            continue
        got = v.value[v.measure.str.startswith(name)]
        lo, hi = fam.value_range
        assert len(got) and got.between(lo, hi).all(), name
