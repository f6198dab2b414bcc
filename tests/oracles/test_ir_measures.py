"""ir_measures' names and its providers as oracles (pytrec_eval, gdeval, judged),
plus slow loops written here from the definitions, on random cases with score
ties and graded labels.  Where a provider disagrees with evalframe (or another
provider) the test says how, and README's "Measures from other evaluators"
table documents it."""
import math
import shutil
import warnings

import numpy as np
import pandas as pd
import pytest

import evalframe as ef

ir_measures = pytest.importorskip("ir_measures")


def _case(seed: int, *, ties: bool = True, negative: bool = False, max_label: int = 4):
    """A random golden set and run: 8 numeric questions, graded labels 0..max_label
    (every question has a relevant document), scores with ties when ``ties``."""
    rng = np.random.default_rng(seed)
    qrels, run = [], []
    for q in range(1, 9):
        docs = [f"d{d}" for d in rng.choice(60, size=rng.integers(5, 40), replace=False)]
        pool = docs + [f"x{d}" for d in range(5)]
        judged = rng.choice(pool, size=rng.integers(3, len(pool)), replace=False)
        labels = rng.integers(-1 if negative else 0, max_label + 1, size=len(judged))
        labels[0] = max(labels[0], 1)
        qrels += [(str(q), d, int(lab)) for d, lab in zip(judged, labels)]
        scores = rng.integers(0, 6, size=len(docs)) / 2 if ties else rng.permutation(len(docs)) + 0.5
        run += [(str(q), d, float(s)) for d, s in zip(docs, scores)]
    return (pd.DataFrame(qrels, columns=["query_id", "doc_id", "relevance"]),
            pd.DataFrame(run, columns=["query_id", "doc_id", "score"]))


def _ours(qrels, run, names, **conv):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ef.EvalframeWarning)
        t = ef.evaluate(run, qrels.rename(columns={"relevance": "label"}), names, missing="drop", **conv)
    return {(r.query_id, r.measure): r.value for r in t.itertuples()}


def _theirs(provider, qrels, run, names):
    ms = [ir_measures.parse_measure(n) for n in names]
    name = {str(m): n for m, n in zip(ms, names)}
    return {(m.query_id, name[str(m.measure)]): m.value for m in provider.iter_calc(ms, qrels, run)}


# (evalframe name, ir_measures name): the same measure
PYTREC = [("P(rel=2)@10", "P(rel=2)@10"), ("P@5", "P@5"), ("R@100", "R@100"), ("R(rel=3)@10", "R(rel=3)@10"),
          ("RR", "RR"), ("AP", "AP"), ("AP(rel=2)", "AP(rel=2)"), ("Rprec", "Rprec"), ("Success@10", "Success@10"),
          ("NumRet", "NumRet"), ("NumRelRet", "NumRelRet"), ("bpref", "Bpref"),
          ("nDCG(gain='linear')@10", "nDCG@10"), ("nDCG(gain='linear')", "nDCG"), ("RelP@10", "P@10")]


@pytest.mark.parametrize("seed", range(6))
def test_pytrec_eval_provider(seed):
    """pytrec_eval breaks score ties as trec_eval does (doc_id descending): cases with ties."""
    qrels, run = _case(seed, negative=seed % 2 == 1)
    ours = _ours(qrels, run, [a for a, _ in PYTREC[:-1]])
    theirs = _theirs(ir_measures.pytrec_eval, qrels, run, [b for _, b in PYTREC[:-1]])
    for a, b in PYTREC[:-1]:
        for q in qrels["query_id"].unique():
            assert ours[(q, str(ef.parse_measure(a)))] == pytest.approx(theirs[(q, b)], abs=1e-9), (a, q)


def test_ir_measures_names_parse_to_the_same_measure():
    for name in ["ERR@20", "nDCG(dcg='exp-log2')@10", "P(rel=2)@10", "Judged@10", "R@100", "RR", "AP",
                 "Rprec", "Success@10", "NumRet", "NumRel", "NumRelRet", "RR@10", "AP@100", "nDCG@10"]:
        m = ef.parse_measure(name)
        assert ef.parse_measure(str(m)) == m
    assert str(ef.parse_measure("nDCG(dcg='exp-log2')@10")) == "nDCG@10"
    # ir_measures' nDCG@10 is pytrec_eval's (linear gain): evalframe's is the spec's (2**label - 1)
    assert str(ef.parse_measure("nDCG(dcg='log2')@10")) == "nDCG(gain='linear')@10"
    assert str(ef.parse_measure("R_cap@10")) == "RelP@10" and str(ef.parse_measure("Hole@10")) == "Unjudged@10"
    with pytest.raises(ValueError, match=r"^nDCG: dcg must be 'log2' \(gain='linear'\) or 'exp-log2'"):
        ef.parse_measure("nDCG(dcg='log')@10")
    with pytest.raises(ValueError, match=r"^ERR: max_rel must be an int in \[1, 1000\], got 0$"):
        ef.parse_measure("ERR(max_rel=0)@10")


@pytest.mark.skipif(shutil.which("perl") is None, reason="gdeval needs perl")
@pytest.mark.parametrize("seed", range(4))
def test_gdeval_provider(seed):
    """gdeval (ir_measures' ERR) sorts ties by docno descending, as trec_eval; it prints
    5 decimals, so the check is to 5e-6 (the slow loops below check 1e-9)."""
    qrels, run = _case(seed + 10)
    names = ["ERR@5", "ERR@20", "nDCG(dcg='exp-log2')@10"]
    ours = _ours(qrels, run, names)
    theirs = _theirs(ir_measures.gdeval, qrels, run, names)
    for n in names:
        for q in qrels["query_id"].unique():
            assert ours[(q, str(ef.parse_measure(n)))] == pytest.approx(theirs[(q, n)], abs=5.01e-6), (n, q)


@pytest.mark.parametrize("seed", range(4))
def test_judged_provider(seed):
    """ir_measures' Judged@k breaks ties by doc_id ascending and divides by the
    documents in the top k (min(k, retrieved)); evalframe's, as its P@k, by k."""
    qrels, run = _case(seed + 20)
    ours = _ours(qrels, run, ["Judged@10", "NumRet"], ties="doc_id_asc")
    theirs = _theirs(ir_measures.judged, qrels, run, ["Judged@10"])
    for q in qrels["query_id"].unique():
        n = min(10, ours[(q, "NumRet")])
        assert ours[(q, "Judged@10")] * 10 / n == pytest.approx(theirs[(q, "Judged@10")], abs=1e-12)


# --- slow loops, written from the definitions ---------------------------------------------

def _ranked(qrels, run):
    """Per question: the labels of the ranking in trec_eval's order (score desc, doc_id desc),
    None for unjudged, and the question's labels."""
    lab = {(q, d): int(r) for q, d, r in qrels.itertuples(index=False)}
    out = {}
    for q, g in run.groupby("query_id"):
        docs = sorted(sorted(zip(g["score"], g["doc_id"]), key=lambda t: t[1], reverse=True), key=lambda t: -t[0])
        out[q] = ([lab.get((q, d)) for _, d in docs], [r for (qq, _), r in lab.items() if qq == q])
    return out


def _err_loop(labels, k, max_rel):
    score, keep = 0.0, 1.0
    for i, lab in enumerate(labels[:k], start=1):
        r = (2 ** max(lab or 0, 0) - 1) / 2 ** max_rel
        score += keep * r / i
        keep *= 1 - r
    return score


def _dcg_loop(labels, k, gain):
    return sum(gain(max(lab or 0, 0)) / math.log2(i + 1) for i, lab in enumerate(labels[:k], start=1))


@pytest.mark.parametrize("seed", range(5))
def test_slow_loops(seed):
    qrels, run = _case(seed + 30, negative=True, max_label=3 + seed % 2)
    names = ["ERR@5", "ERR", "nERR@10", "nERR(max_rel=6)", "ERR(max_rel=7,judged_only=True)@10",
             "DCG@10", "DCG(gain='linear')", "R_cap@5", "R_cap(rel=2)@20", "Hole@10", "Hole@50"]
    ours = _ours(qrels, run, names)
    for q, (labels, golden) in _ranked(qrels, run).items():
        ideal = sorted((g for g in golden if g >= 0), reverse=True)
        condensed = [lab for lab in labels if lab is not None and lab >= 0]
        R = lambda rel: sum(g >= rel for g in golden)  # noqa: E731
        hits = lambda k, rel: sum((lab or -1) >= rel for lab in labels[:k])  # noqa: E731
        want = {
            "ERR@5": _err_loop(labels, 5, 4), "ERR": _err_loop(labels, None, 4),
            "nERR@10": _err_loop(labels, 10, 4) / _err_loop(ideal, 10, 4),
            "nERR(max_rel=6)": _err_loop(labels, None, 6) / _err_loop(ideal, None, 6),
            "ERR(max_rel=7,judged_only=True)@10": _err_loop(condensed, 10, 7),
            "DCG@10": _dcg_loop(labels, 10, lambda g: 2 ** g - 1),
            "DCG(gain='linear')": _dcg_loop(labels, None, lambda g: g),
            "R_cap@5": hits(5, 1) / min(5, R(1)), "R_cap(rel=2)@20": hits(20, 2) / min(20, R(2)) if R(2) else 0.0,
            "Hole@10": sum(lab is None or lab < 0 for lab in labels[:10]) / 10,
            "Hole@50": sum(lab is None or lab < 0 for lab in labels[:50]) / 50,
        }
        for n, v in want.items():
            assert ours[(q, str(ef.parse_measure(n)))] == pytest.approx(v, abs=1e-9), (n, q)


def test_err_label_above_max_rel_is_an_input_error():
    qrels, run = _case(1, max_label=6)
    with pytest.raises(ef.EvalframeInputError, match=r"(?s)ERR: .*above max_rel=4.*ERR\(max_rel=N\)"):
        _ours(qrels, run, ["ERR@10"])
    assert _ours(qrels, run, ["ERR(max_rel=6)@10"])


def test_err_of_no_relevant_is_zero_and_vectorised_families_partition():
    qrels, run = _case(3)
    qrels = pd.concat([qrels, pd.DataFrame({"query_id": ["99"], "doc_id": ["d1"], "relevance": [0]})])
    run = pd.concat([run, pd.DataFrame({"query_id": ["99"], "doc_id": ["d1"], "score": [1.0]})])
    names = ["ERR@10", "nERR@10", "DCG@10"]
    ours = _ours(qrels, run, names)
    assert all(ours[("99", n)] == 0.0 for n in names)
    part = _ours(qrels[qrels.query_id.isin(["1", "2"])], run[run.query_id.isin(["1", "2"])], names)
    assert all(part[key] == ours[key] for key in part)  # a question's value does not depend on the others
