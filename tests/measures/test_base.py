"""Parameters are declared on each family and checked when a Measure is built
(at parse), with one message template: "<Family>: <param> must be <what>, got <value!r>"."""
import re

import pandas as pd
import pytest

import evalframe as ef
from evalframe.measures import FAMILIES, Family, Measure, ParamSpec, parse_measure

TEMPLATE = re.compile(r"^[A-Za-z]+: [a-z_]+ must be .+, got .+$", re.S)


@pytest.mark.parametrize("bad, message", [
    ("IPrec(recall=-1)", "IPrec: recall must be a number >= 0, got -1"),
    ("IPrec(recall=1e999)", "IPrec: recall must be a number >= 0, got inf"),
    ("IPrec(recall='x')", "IPrec: recall must be a number >= 0, got 'x'"),
    ("IPrecAvg(recalls=())", "IPrecAvg: recalls must be a non-empty tuple of numbers >= 0, got ()"),
    ("IPrecAvg(recalls=(0.5, -1))", "IPrecAvg: recalls must be a non-empty tuple of numbers >= 0, got (0.5, -1)"),
    ("IPrecAvg(recalls=0.5)", "IPrecAvg: recalls must be a non-empty tuple of numbers >= 0, got 0.5"),
    ("Utility(weights=3)", "Utility: weights must be a tuple of 4 numbers, got 3"),
    ("Utility(weights=(1, 2))", "Utility: weights must be a tuple of 4 numbers, got (1, 2)"),
    ("Utility(weights=(1, 2, 'a', 4))", "Utility: weights must be a tuple of 4 numbers, got (1, 2, 'a', 4)"),
    ("Utility(docs=1.5)", "Utility: docs must be an int, got 1.5"),
    ("P@0", "P: k must be an int >= 1, got 0"),
    ("P@-3", "P: k must be an int >= 1, got -3"),
    ("P@9223372036854775808", "P: k must be an int < 2**63, got 9223372036854775808"),
    ("RBP(p=2)", "RBP: p must be a number in [0, 1], got 2"),
    ("RBP(p=-0.1)", "RBP: p must be a number in [0, 1], got -0.1"),
    ("RBP(residual=1)", "RBP: residual must be True or False, got 1"),
    ("Rprec(mult=-1)", "Rprec: mult must be a number >= 0, got -1"),
    ("SetF(beta=-1)", "SetF: beta must be a number >= 0, got -1"),
    ("SetF(beta=True)", "SetF: beta must be a number >= 0, got True"),
    ("P(rel=1.5)@5", "P: rel must be an int, got 1.5"),
    ("G(gain='cubic')", "G: gain must be 'exp' (2**label - 1) or 'linear' (label), got 'cubic'"),
    ("nDCG(gains='1=x')", "nDCG: gains must be (label, gain) pairs"),
    ("nDCG(gains=((1.5, 3.0),))", "nDCG: gains must be (label, gain) pairs"),
    ("nDCG(gains=((1, 1e999),))", "nDCG: gains must be (label, gain) pairs"),
    ("nDCG(gains=3)", "nDCG: gains must be (label, gain) pairs"),
])
def test_bad_parameters_fail_at_parse_with_one_template(bad, message):
    with pytest.raises(ValueError) as info:
        parse_measure(bad)
    assert str(info.value).startswith(message), str(info.value)
    assert TEMPLATE.match(str(info.value)), str(info.value)


def test_bad_parameters_fail_before_reading_any_input():
    # the run given does not exist: the measure is refused first
    with pytest.raises(ValueError, match="RBP: p must be"):
        ef.evaluate("/nonexistent/run.tsv", "/nonexistent/qrels.txt", ["RBP(p=2)"])


def test_parameters_are_declared_on_the_family():
    for fam in FAMILIES.values():
        assert isinstance(fam, Family)
        for name, spec in fam.params.items():
            assert isinstance(spec, ParamSpec)
            assert spec.description, (fam.name, name)
            assert spec.check(fam.name, name, spec.default) == spec.default, (fam.name, name)
    # nDCG's gains and Rprec's mult are parameters of the one nDCG / Rprec family
    assert list(FAMILIES["nDCG"].params) == ["gain", "judged_only", "gains", "tokens"]
    assert list(FAMILIES["Rprec"].params) == ["rel", "judged_only", "mult"]


def test_registry_is_read_only():
    with pytest.raises(TypeError):
        FAMILIES["P"] = FAMILIES["R"]
    with pytest.raises(TypeError):
        FAMILIES["P"].params["rel"] = None


@pytest.mark.parametrize("name", [
    "IPrec(recall=0.2)", "IPrecAvg(recalls=(0.25, 0.5))", "Rprec(rel=2,mult=0.5)",
    "Utility(weights=(2.0, -1.0, 0.0, 0.0),docs=100)", "SetF(beta=0.5)", "RBP(p=0.8,residual=True)",
    "RBP(p=0.8,gain='exp',gains=((1, 3.0),))", "nDCG(gain='linear',gains=((0, 1.0), (1, -2.0)))@10",
    "G(gains=((1, 0.0), (2, 6.0)))", "RnDCG(rel=2)", "Unjudged@5", "RelP(rel=2)@10",
])
def test_non_default_parameters_round_trip(name):
    m = parse_measure(name)
    assert str(m) == name
    assert parse_measure(str(m)) == m


@pytest.mark.parametrize("given, canonical", [
    ("IPrecAvg(recalls=(0, 1))", "IPrecAvg(recalls=(0.0, 1.0))"),
    ("Utility(weights=(2, -1, 0, 0))", "Utility(weights=(2.0, -1.0, 0.0, 0.0))"),
    ("nDCG(gains='1=3,2=9')", "nDCG(gains=((1, 3.0), (2, 9.0)))"),
    ("nDCG(gains=((1, 3), (2, 9)))", "nDCG(gains=((1, 3.0), (2, 9.0)))"),
    ("RBP(p=0.9)", "RBP"), ("SetF(beta=1)", "SetF"), ("IPrec(recall=0)", "IPrec"),
    ("Utility(weights=(1, -1, 0, 0),docs=0)", "Utility"), ("nDCG(gains=())", "nDCG"),
])
def test_parameters_in_canonical_form_and_defaults_left_out(given, canonical):
    assert str(parse_measure(given)) == canonical


def test_measure_checks_its_parameters_when_built_directly():
    with pytest.raises(ValueError, match="RBP: p must be a number in"):
        Measure("RBP", None, (("p", 2.0),))
    with pytest.raises(ValueError, match="P: k must be an int >= 1, got 0"):
        Measure("P", 0)
    assert Measure("P", 5, (("rel", 2),)) == parse_measure("P(rel=2)@5")


def test_same_values_from_canonical_and_trec_eval_gains():
    qrels = pd.DataFrame({"query_id": "a", "doc_id": ["d0", "d1", "d2"], "relevance": [0, 1, 2]})
    run = pd.DataFrame({"query_id": "a", "doc_id": ["d2", "d0", "d1"], "score": [3.0, 2.0, 1.0]})
    got = ef.evaluate(run, qrels, ["nDCG(gains='1=3,2=9')", "nDCG(gains=((1, 3.0), (2, 9.0)))"])
    assert got["measure"].tolist() == ["nDCG(gains=((1, 3.0), (2, 9.0)))"]
