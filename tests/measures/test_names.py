"""Measure names: canonical forms round-trip, trec_eval names keep trec_eval's meaning."""
import pandas as pd
import pytest

import evalframe as ef
from evalframe import parse_measure

CANONICAL = ["P@5", "R@10", "R", "RR", "RR@10", "AP", "AP@100", "nDCG", "nDCG@10", "Rprec", "Success@1",
             "Judged@10", "bpref", "NumRet", "NumRel", "NumRelRet", "P(rel=2)@5", "nDCG(gain='linear')@10",
             "AP(judged_only=True)", "nDCG(gain='linear',judged_only=True)@5", "P(rel=1)@5"]


@pytest.mark.parametrize("name", CANONICAL)
def test_round_trip(name):
    assert str(parse_measure(name)) == name
    assert parse_measure(str(parse_measure(name))) == parse_measure(name)


@pytest.mark.parametrize("trec, ours", [
    ("P_5", "P@5"), ("recall_100", "R@100"), ("map", "AP"), ("map_cut_10", "AP@10"),
    ("recip_rank", "RR"), ("ndcg", "nDCG(gain='linear')"), ("ndcg_cut_10", "nDCG(gain='linear')@10"),
    ("success_1", "Success@1"), ("num_ret", "NumRet"), ("num_rel", "NumRel"), ("num_rel_ret", "NumRelRet"),
    ("Rprec", "Rprec"), ("bpref", "bpref"),
])
def test_trec_eval_names(trec, ours):
    assert str(parse_measure(trec)) == ours


@pytest.mark.parametrize("alias, ours", [("MRR", "RR"), ("MRR@10", "RR@10"), ("ndcg@10", "nDCG@10"),
                                         ("Recall@5", "R@5"), ("MAP", "AP"), ("HitRate@3", "Success@3"),
                                         ("nDCG(gain=linear)@3", "nDCG(gain='linear')@3"),
                                         ("nDCG(gain='exp')@3", "nDCG@3")])
def test_aliases_and_defaults_left_out(alias, ours):
    assert str(parse_measure(alias)) == ours


@pytest.mark.parametrize("bad, msg", [
    ("P", "needs a cutoff"), ("P@0", "k must be an int >= 1, got 0"), ("P@x", "cutoff must be an int"),
    ("Foo@3", "unknown measure"), ("nDCG(gain='cubic')@3", "gain must be"), ("bpref@3", "takes no cutoff"),
    ("P(alpha=1)@3", "has no parameter 'alpha'"), ("AP(judged_only=1)", "judged_only must be True or False"),
])
def test_bad_names_explain_themselves(bad, msg):
    with pytest.raises(ValueError, match=msg):
        parse_measure(bad)


def test_measures_are_immutable_values():
    m = parse_measure("nDCG@10")
    with pytest.raises(Exception):
        m.k = 5
    assert {m, parse_measure("nDCG@10")} == {m}
    assert ef.parse_measures(None) == [parse_measure(x) for x in ("R@5", "R@10", "R@100", "P@5", "RR", "nDCG@10", "AP")]


# ---------------------------------------------------------------- parsing quirks (issue 32)

@pytest.mark.parametrize("name", ["P@1_0", "P@٥", "P@５", "P_٥", "recall_1_0", "ndcg_cut_١٠", "P(rel=1_0)@5",
                                  "AP(rel=٢)"])
def test_cutoffs_and_numbers_are_ascii_digits_only(name):
    # Python's int() takes '1_0' as 10 and Arabic-Indic or full-width digits as numbers
    with pytest.raises(ValueError):
        ef.parse_measure(name)


@pytest.mark.parametrize("name", ["P(rel=2,rel=3)@5", "nDCG(gain='linear', gain='exp')@10", "P(rel=2, rel = 2)@5"])
def test_a_parameter_given_twice_is_refused(name):
    with pytest.raises(ValueError, match="more than once"):
        ef.parse_measure(name)


def test_measures_that_are_not_names_are_one_clear_error():
    qrels = pd.DataFrame({"query_id": ["q1"], "doc_id": ["d1"], "relevance": [1]})
    run = pd.DataFrame({"query_id": ["q1"], "doc_id": ["d1"], "score": [1.0]})
    for bad in (123, 1.5, object()):
        with pytest.raises(TypeError, match="measures must be"):
            ef.evaluate(run, qrels, bad)
