"""trec_eval's other measures (the trec_eval families of evalframe.measures) against pytrec_eval.

pytrec_eval is trec_eval 9's C code.  Its Python wrapper rewrites measure
parameters (it splits them on commas and sorts them), so the C evaluator is
called directly with trec_eval's own parameter strings.

Scores are drawn from values exactly representable in float32: trec_eval 9
stores scores as 32-bit floats, trec_eval 10 and evalframe as 64-bit, and the
two agree only when float32 loses nothing.  Where trec_eval 9 and 10 differ
(iprec_at_recall and 11pt_avg: 9 turns recall * R into a number of relevant
documents by adding 0.9 and truncating, 10 rounds), evalframe follows 10: such
values are compared only where both rules give the same number, and the
difference itself is tested below.  RBP and Unjudged@k, which trec_eval 9 lacks,
are checked against slow loops written here.
"""
import math
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import evalframe as ef
from tests.strategies import SCORES, cases
from evalframe.measures import FAMILIES, resolve

pytrec_eval = pytest.importorskip("pytrec_eval")
_Evaluator = next(c for c in pytrec_eval.RelevanceEvaluator.__mro__[1:] if c.__name__ == "RelevanceEvaluator")

RECALLS = (0.0, 0.1, 0.2, 0.25, 0.3, 0.5, 0.7, 1.0)
MULTS = (0.2, 0.5, 1.0, 1.5, 2.0)
RELP = (1, 3, 5, 10)

# (pytrec_eval request, {pytrec_eval key: evalframe name})
_A = {
    "iprec_at_recall." + ",".join(map(str, RECALLS)): {
        f"iprec_at_recall_{r:3.2f}": f"IPrec(recall={r!r})" for r in RECALLS},
    "11pt_avg": {"11pt_avg": "IPrecAvg"},
    "infAP": {"infAP": "infAP"},
    "gm_map": {"gm_map": "GMAP"},
    "gm_bpref": {"gm_bpref": "GMbpref"},
    "Rprec_mult." + ",".join(map(str, MULTS)): {f"Rprec_mult_{x:3.2f}": f"Rprec(mult={x!r})" for x in MULTS},
    "utility": {"utility": "Utility"},
    "binG": {"binG": "binG"},
    "G": {"G": "G"},
    "ndcg": {"ndcg": "nDCG(gain='linear')"},
    "ndcg_rel": {"ndcg_rel": "nDCGrel"},
    "Rndcg": {"Rndcg": "RnDCG"},
    "relative_P." + ",".join(map(str, RELP)): {f"relative_P_{k}": f"RelP@{k}" for k in RELP},
    "set_P": {"set_P": "SetP"},
    "set_relative_P": {"set_relative_P": "SetRelP"},
    "set_recall": {"set_recall": "SetR"},
    "set_map": {"set_map": "SetAP"},
    "set_F": {"set_F": "SetF"},
    "num_nonrel_judged_ret": {"num_nonrel_judged_ret": "NumNonrelJudgedRet"},
}
# The same measures with non-default parameters (gains differ by >= 1: see evalframe.measures.dcg's docstring)
_GAINS = "((1, 3.0), (2, 9.0), (3, 5.5))"
_B = {
    "11pt_avg.0.25,0.5,0.75": {"11pt_avg": "IPrecAvg(recalls=(0.25, 0.5, 0.75))"},
    "utility.2,-1,0.5,0.25": {"utility": "Utility(weights=(2.0, -1.0, 0.5, 0.25))"},
    "G.1=3,2=9,3=5.5": {"G": f"G(gains={_GAINS})"},
    "ndcg.1=3,2=9,3=5.5": {"ndcg": f"nDCG(gain='linear',gains={_GAINS})"},
    "ndcg_rel.1=3,2=9,3=5.5": {"ndcg_rel": f"nDCGrel(gains={_GAINS})"},
    "Rndcg.1=3,2=9,3=5.5": {"Rndcg": f"RnDCG(gains={_GAINS})"},
    "set_F.0.25": {"set_F": "SetF(beta=0.5)"},
}
_C = {  # gains that are negative, zero, and given to an unseen label
    "ndcg.0=1,1=-2,3=5,7=2": {"ndcg": "nDCG(gain='linear',gains=((0, 1.0), (1, -2.0), (3, 5.0), (7, 2.0)))"},
    "G.1=0,2=6": {"G": "G(gains=((1, 0.0), (2, 6.0)))"},
    "ndcg_rel.2=-1": {"ndcg_rel": "nDCGrel(gains=((2, -1.0),))"},
    "Rndcg.1=2,2=2": {"Rndcg": "RnDCG(gains=((1, 2.0), (2, 2.0)))"},
}
CONFIGS = {"defaults": _A, "parameters": _B, "odd_gains": _C}

# float32-exact scores, with many ties


def _pytrec(qrels, run, request, rel, judged_only):
    qd: dict = {}
    for q, d, r in qrels.itertuples(index=False):
        qd.setdefault(q, {})[d] = int(r)
    rd: dict = {}
    for q, d, s in run.itertuples(index=False):
        rd.setdefault(q, {})[d] = float(s)
    ev = _Evaluator(qd, set(request), rel, judged_only)
    return ev.evaluate(rd)


def _v9_cut(x, R):
    return int(x * R + 0.9)


def _v10_cut(x, R):
    v = x * R
    return int(math.floor(v) + (v - math.floor(v) >= 0.5))


def _compare(qrels, run, config, rel=1, judged_only=False):
    spec = CONFIGS[config]
    expected = _pytrec(qrels, run, spec, rel, judged_only)
    names = {k: v for d in spec.values() for k, v in d.items()}
    ms = [ef.parse_measure(v) for v in names.values()]
    if judged_only:
        ms = [m.with_params(judged_only=True) if "judged_only" in FAMILIES[m.family].params else m for m in ms]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ef.EvalframeWarning)
        got = ef.evaluate(run, qrels, ms, missing="drop", rel=rel)
    table = got.pivot(index="query_id", columns="measure", values="value")
    assert set(table.index) == set(expected)
    R = qrels[qrels.relevance >= rel].groupby("query_id").size()
    compared = 0
    for key, m in zip(names, ms):
        if judged_only and "judged_only" not in FAMILIES[m.family].params:
            continue  # (gm_bpref: bpref ignores unjudged documents anyway)
        canon = str(resolve(m, rel=rel))
        for q, vals in expected.items():
            want = vals[key]
            got_v = table.loc[q, canon]
            if m.family in ("IPrec", "IPrecAvg"):
                r_q = int(R.get(q, 0))
                levels = [m.param("recall")] if m.family == "IPrec" else m.param("recalls")
                if any(_v9_cut(x, r_q) != _v10_cut(x, r_q) for x in levels):
                    continue  # trec_eval 9 and 10 differ here; 10 is tested below
            if m.family in ("GMAP", "GMbpref"):  # trec_eval keeps log(max(value, 1e-5)) per question
                got_v = math.log(max(got_v, 1e-5))
            if math.isnan(want):
                # trec_eval divides 0 by 0 (iprec on an empty condensed list under -J); evalframe: 0
                assert judged_only and got_v == 0.0, (q, key, canon)
                continue
            assert got_v == pytest.approx(want, abs=1e-9), (q, key, canon)
            compared += 1
    assert compared > 0


_SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)


@settings(max_examples=120, **_SETTINGS)
@given(cases(), st.sampled_from(list(CONFIGS)))
def test_random_cases_match_pytrec_eval(case, config):
    qrels, run, rel = case
    _compare(qrels, run, config, rel=rel)


@settings(max_examples=40, **_SETTINGS)
@given(cases())
def test_condensed_lists_match_trec_eval_J(case):
    qrels, run, rel = case
    _compare(qrels, run, "defaults", rel=rel, judged_only=True)


@pytest.mark.parametrize("name", ["cranfield", "scifact"])
def test_bundled_collections_match_pytrec_eval(name):
    ds = getattr(ef.datasets, f"load_{name}")()
    run = ds.runs[ds.runs["system"] == ds.runs["system"].iloc[0]].drop(columns="system")
    run = run[["query_id", "doc_id", "score"]]
    run = run.assign(score=run["score"].astype(np.float32).astype(np.float64))
    for config in CONFIGS:
        _compare(ds.qrels[["query_id", "doc_id", "relevance"]], run, config)


# --- trec_eval 10 where it differs from 9 ------------------------------------

def test_iprec_rounds_recall_times_R_as_trec_eval_10():
    """7 relevant documents; recall 0.2 * 7 = 1.4 relevant: trec_eval 10 rounds to 1
    (interpolated precision at the first relevant: 1.0), trec_eval 9 took
    int(1.4 + 0.9) = 2 (0.667, what pytrec_eval says)."""
    qrels = pd.DataFrame({"query_id": "a", "doc_id": [f"r{i}" for i in range(7)], "relevance": 1})
    run = pd.DataFrame({"query_id": "a", "doc_id": ["r0", "x1", "x2", "r1", "r2", "r3"],
                        "score": [10.0, 9, 8, 7, 6, 5]})
    got = ef.evaluate(run, qrels, ["IPrec(recall=0.2)", "IPrecAvg(recalls=(0.2,))"]).set_index("measure")["value"]
    assert got["IPrec(recall=0.2)"] == 1.0
    assert got["IPrecAvg(recalls=(0.2,))"] == 1.0
    v9 = _pytrec(qrels, run, {"iprec_at_recall.0.2"}, 1, False)["a"]["iprec_at_recall_0.20"]
    assert v9 == pytest.approx(2 / 3)


def test_scores_are_compared_as_64_bit():
    """Two scores equal in float32 but not in float64: evalframe (and trec_eval 10)
    order them by score; trec_eval 9 ties them and orders by doc_id (descending)."""
    qrels = pd.DataFrame({"query_id": "a", "doc_id": ["a1", "z9"], "relevance": [1, 0]})
    run = pd.DataFrame({"query_id": "a", "doc_id": ["a1", "z9"], "score": [1.00000001, 1.0]})
    assert np.float32(1.00000001) == np.float32(1.0)
    assert ef.evaluate(run, qrels, ["RR"])["value"].iloc[0] == 1.0
    assert _pytrec(qrels, run, {"recip_rank"}, 1, False)["a"]["recip_rank"] == 0.5


# --- measures trec_eval 9 lacks: slow loops ---------------------------------

def _slow_rbp(labels, p, residual, max_level):
    """trec_eval 10's rbp / rbp_resid on one ranking (labels: None = unjudged)."""
    if residual:
        unj = [i for i, lab in enumerate(labels) if lab is None or lab < 0]
        return p ** len(labels) + (1 - p) * sum(p ** i for i in unj) if unj else 0.0
    hi = max(max_level, 0)
    scale = hi if hi > 1 else 1.0
    return (1 - p) * sum((lab / scale) * p ** i for i, lab in enumerate(labels) if lab is not None and lab > 0)


def _ranked(run, q):
    r = run[run.query_id == q].sort_values(["score", "doc_id"], ascending=[False, False])
    return list(r.doc_id)


@settings(max_examples=60, **_SETTINGS)
@given(cases(max_labels=4), st.sampled_from([0.5, 0.8, 0.9]))
def test_rbp_and_unjudged_match_slow_loops(case, p):
    qrels, run, _ = case
    ks = (1, 3, 10)
    ms = [str(ef.parse_measure(n)) for n in
          [f"RBP(p={p})", f"RBP(p={p},residual=True)"] + [f"Unjudged@{k}" for k in ks]]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ef.EvalframeWarning)
        got = ef.evaluate(run, qrels, ms, missing="drop")
    table = got.pivot(index="query_id", columns="measure", values="value")
    for q in table.index:
        judged = dict(zip(qrels[qrels.query_id == q].doc_id, qrels[qrels.query_id == q].relevance))
        labels = [judged.get(d) for d in _ranked(run, q)]
        max_level = max(v for v in judged.values())
        assert table.loc[q, ms[0]] == pytest.approx(_slow_rbp(labels, p, False, max_level), abs=1e-12)
        assert table.loc[q, ms[1]] == pytest.approx(_slow_rbp(labels, p, True, max_level), abs=1e-12)
        for k, name in zip(ks, ms[2:]):
            unj = sum(1 for lab in labels[:k] if lab is None or lab < 0)
            assert table.loc[q, name] == pytest.approx(unj / k, abs=1e-12)


def test_rbp_rescales_gain_levels_to_0_1_as_trec_eval_10():
    """Labels 0..4 and gains 1=6, unjudged (-1, not in the pool) given -2: levels
    0..4 have gains 0, 6, 2, 3, 4 and -2; trec_eval maps them to (g + 2) / 8,
    except a document outside the pool, whose gain stays 0 unless listed."""
    qrels = pd.DataFrame({"query_id": "a", "doc_id": ["d0", "d1", "d2", "d4"], "relevance": [0, 1, 2, 4]})
    run = pd.DataFrame({"query_id": "a", "doc_id": ["d1", "x", "d0", "d4"], "score": [4.0, 3.0, 2.0, 1.0]})
    p = 0.5
    got = ef.evaluate(run, qrels, ["RBP(p=0.5,gains=((1, 6.0), (-1, -2.0)))", "RBP(p=0.5,gains=((1, 6.0),))"])
    with_unj, plain = got["value"]
    norm = [(6 + 2) / 8, (-2 + 2) / 8, (0 + 2) / 8, (4 + 2) / 8]
    assert with_unj == pytest.approx((1 - p) * sum(g * p ** i for i, g in enumerate(norm)))
    norm = [6 / 6, 0.0, 0 / 6, 4 / 6]
    assert plain == pytest.approx((1 - p) * sum(g * p ** i for i, g in enumerate(norm)))


def test_trec_names_map_to_readable_names():
    cases = {
        "iprec_at_recall_0.20": "IPrec(recall=0.2)", "11pt_avg": "IPrecAvg", "gm_map": "GMAP",
        "gm_bpref": "GMbpref", "infAP": "infAP", "Rprec_mult_0.20": "Rprec(mult=0.2)",
        "utility": "Utility", "binG": "binG", "G": "G", "ndcg_rel": "nDCGrel", "Rndcg": "RnDCG",
        "relative_P_5": "RelP@5", "set_P": "SetP", "set_relative_P": "SetRelP", "set_recall": "SetR",
        "set_map": "SetAP", "set_F": "SetF", "num_nonrel_judged_ret": "NumNonrelJudgedRet",
        "rbp": "RBP", "rbp_resid": "RBP(residual=True)", "unj_5": "Unjudged@5",
        "Rprec_mult_1.00": "Rprec",
    }
    for trec, name in cases.items():
        m = ef.parse_measure(trec)
        assert str(m) == name
        assert ef.parse_measure(str(m)) == m


@pytest.mark.parametrize("bad, message", [
    ("IPrec(recall=-0.5)", "recall must be a number >= 0"),
    ("nDCG(gains='1=x')", "gains must be"),
    ("RBP(p=1.5)", "p must be a number in [0, 1]"),
    ("Utility(weights=(1.0, 2.0))", "weights must be a tuple of 4"),
])
def test_bad_parameters_raise_clear_errors(bad, message):
    qrels = pd.DataFrame({"query_id": "a", "doc_id": ["d1"], "relevance": [1]})
    run = pd.DataFrame({"query_id": "a", "doc_id": ["d1"], "score": [1.0]})
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]").replace("(", r"\(")):
        ef.evaluate(run, qrels, [bad])
