"""Measure names: canonical forms round-trip, trec_eval names keep trec_eval's meaning."""
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
