"""evalframe.register_measure: a user's vectorised measure works everywhere a
built-in one does (parse, evaluate, aggregate, report, ``evalframe evaluate -m``)."""
import json
import warnings

import numpy as np
import pytest

import evalframe as ef
from evalframe.cli import main
from evalframe.measures import FAMILIES, GeoMean, ParamSpec, Sum, parse_measure
from evalframe.measures.base import REGISTRY

from tests.cli.test_runs import DATA


@pytest.fixture(autouse=True, scope="module")
def _restore_registry():
    """Leave the registry as this module found it."""
    before = set(FAMILIES)
    yield
    for name in set(FAMILIES) - before:
        REGISTRY.unregister(name)


def _weighted_hits(J, measures):
    """w * relevant-in-top-k (labels >= 1), a parameterised cutoff measure."""
    out = []
    for m in measures:
        top = (J.rank <= m.k) if m.k is not None else np.ones(len(J.rank), bool)
        out.append(m.param("w") * J.per_group((top & (J.label >= 1)).astype(float)))
    return out


@pytest.fixture(scope="module")
def hits():
    fam = ef.register_measure("WHits", _weighted_hits, params={"w": ParamSpec("float", 1.0, "weight", low=0)},
                              aggregation="sum", aliases=("weighted_hits",), doc="w * relevant in top k",
                              replace=True)
    return fam


@pytest.fixture(scope="module")
def cran():
    return ef.datasets.load_cranfield()


def _quiet(f, *a, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ef.EvalframeWarning)
        return f(*a, **kw)


def test_names_round_trip_and_params_are_checked(hits):
    assert FAMILIES["WHits"] is hits
    assert str(parse_measure("WHits(w=2)@10")) == "WHits(w=2.0)@10"
    assert parse_measure("weighted_hits@10") == parse_measure("WHits@10")
    with pytest.raises(ValueError, match=r"^WHits: w must be a number >= 0, got -1$"):
        parse_measure("WHits(w=-1)@3")


def test_evaluate_and_aggregate(hits, cran):
    per_q = _quiet(ef.evaluate, cran.runs, cran.qrels, ["WHits@10", "WHits(w=0.5)@10", "P@10"])
    wide = per_q.pivot_table(index=["system", "query_id"], columns="measure", values="value")
    np.testing.assert_allclose(wide["WHits@10"], 10 * wide["P@10"], rtol=0, atol=1e-12)
    np.testing.assert_allclose(wide["WHits(w=0.5)@10"], 5 * wide["P@10"], rtol=0, atol=1e-12)
    agg = ef.aggregate(per_q)
    a = agg.set_index(["system", "measure"])["value"]
    s = per_q.groupby(["system", "measure"])["value"].sum()
    for system in cran.runs["system"].unique():
        assert a[(system, "WHits@10")] == pytest.approx(s[(system, "WHits@10")], abs=1e-9)  # summed
        assert a[(system, "P@10")] == pytest.approx(s[(system, "P@10")] / 225, abs=1e-12)  # averaged


def test_report(hits, cran):
    r = _quiet(ef.report, cran.runs, cran.qrels, measures=["WHits@5", "P@5"], n_resamples=20)
    pq = r.per_question.pivot_table(index=["system", "query_id"], columns="measure", values="value")
    np.testing.assert_allclose(pq["WHits@5"], 5 * pq["P@5"], rtol=0, atol=1e-12)
    assert set(r.summary["measure"]) == {"WHits@5", "P@5"}


def test_cli_evaluate(hits, capsys):
    assert main(["evaluate", str(DATA / "sso/qrels.txt"), str(DATA / "sso/run.trec"),
                 "-m", "WHits@5", "P@5", "--format", "json"]) == 0
    rows = {r["measure"]: r["value"] for r in json.loads(capsys.readouterr().out)}
    assert rows == {"WHits@5": pytest.approx(2.0), "P@5": pytest.approx(0.4)}


def test_registering_a_taken_name_is_an_error(hits):
    with pytest.raises(ValueError, match="already registered.*replace=True"):
        ef.register_measure("WHits", _weighted_hits)
    with pytest.raises(ValueError, match="already registered"):
        ef.register_measure("P", _weighted_hits)  # a built-in
    with pytest.raises(ValueError, match="already registered"):
        ef.register_measure("mrr", _weighted_hits)  # a built-in's alias, any case
    assert FAMILIES["WHits"] is hits and FAMILIES["P"].doc == "relevant in top k / k"


def test_replace_drops_the_old_aliases():
    ef.register_measure("Tmp1", _weighted_hits, aliases=("tmp_one",), replace=True)
    assert parse_measure("tmp_one@3").family == "Tmp1"
    ef.register_measure("Tmp1", _weighted_hits, aggregation=GeoMean(floor=1e-3), replace=True)
    assert isinstance(FAMILIES["Tmp1"].aggregator, GeoMean) and FAMILIES["Tmp1"].aggregator.floor == 1e-3
    with pytest.raises(ValueError, match="unknown measure 'tmp_one'"):
        parse_measure("tmp_one@3")
    ef.register_measure("Tmp1", _weighted_hits, aggregation=Sum(), replace=True)
    assert FAMILIES["Tmp1"].aggregation == "sum"


@pytest.mark.parametrize("kwargs, message", [
    ({"name": "1abc"}, "register_measure: name must be a letter"),
    ({"name": "a b"}, "register_measure: name must be"),
    ({"fn": 3}, "register_measure: fn must be callable, got 3"),
    ({"cutoff": "yes"}, "register_measure: cutoff must be 'optional', 'required' or 'none', got 'yes'"),
    ({"aggregation": "median"}, "register_measure: aggregation must be"),
    ({"params": {"k": ParamSpec("int", 1, "")}}, "register_measure: parameter names"),
    ({"params": {"p": 0.5}}, r"register_measure: params\['p'\] must be a ParamSpec"),
    ({"params": {"p": ParamSpec("float", 2.0, "", low=0, high=1)}}, r"Bad: p must be a number in \[0, 1\], got 2.0"),
    ({"aliases": "x"}, "register_measure: aliases must be"),
])
def test_bad_arguments(kwargs, message):
    args = {"name": "Bad", "fn": _weighted_hits, **kwargs}
    with pytest.raises(ValueError, match=message):
        ef.register_measure(args.pop("name"), args.pop("fn"), **args)
    assert "Bad" not in FAMILIES


@pytest.mark.parametrize("fn, message", [
    (lambda J, ms: [], "must return one array per measure"),
    (lambda J, ms: [np.zeros(J.n_groups + 1) for _ in ms], "must be an array of shape"),
    (lambda J, ms: [np.full(J.n_groups, np.nan) for _ in ms], "must be finite"),
])
def test_bad_results_are_named(fn, message):
    ef.register_measure("BadOut", fn, replace=True)
    sso = ef.datasets.load_sso()
    with pytest.raises(ValueError, match="BadOut: .*" + message):
        ef.evaluate(sso.runs, sso.qrels, "BadOut@3")
