"""C/W/L families (SDCG, INST, INSQ) against ir_measures' cwl_eval provider and
against slow loops written here from the definitions, on random cases with score
ties and graded labels, to 1e-9 per question."""
import math
import warnings

import numpy as np
import pandas as pd
import pytest

import evalframe as ef

ir_measures = pytest.importorskip("ir_measures")


def _case(seed: int, *, max_label: int = 3, long: bool = False):
    """8 questions, graded labels -1..max_label, score ties; ``long``: rankings past 1000."""
    rng = np.random.default_rng(seed)
    qrels, run = [], []
    for q in range(1, 9):
        n = int(rng.integers(990, 1100)) if long and q % 2 else int(rng.integers(1, 40))
        docs = [f"d{d}" for d in rng.choice(3 * n + 60, size=n, replace=False)]
        pool = docs + [f"x{d}" for d in range(5)]
        judged = rng.choice(pool, size=int(rng.integers(1, min(len(pool), 80))), replace=False)
        labels = rng.integers(-1, max_label + 1, size=len(judged))
        qrels += [(str(q), d, int(lab)) for d, lab in zip(judged, labels)]
        scores = rng.integers(0, 6, size=len(docs)) / 2
        run += [(str(q), d, float(s)) for d, s in zip(docs, scores)]
    return (pd.DataFrame(qrels, columns=["query_id", "doc_id", "relevance"]),
            pd.DataFrame(run, columns=["query_id", "doc_id", "score"]))


def _ours(qrels, run, names):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ef.EvalframeWarning)
        t = ef.evaluate(run, qrels, names, missing="drop")
    return {(r.query_id, r.measure): r.value for r in t.itertuples()}


def _in_our_order(run):
    """The run sorted as evalframe ranks it (score desc, doc_id desc): cwl_eval's stable
    sort by score then keeps our tie order."""
    return run.sort_values(["query_id", "score", "doc_id"], ascending=[True, False, False]).reset_index(drop=True)


NAMES = ["SDCG(max_rel=3)@5", "SDCG(max_rel=3)@20", "SDCG(min_rel=1,max_rel=2)@10", "INST(max_rel=3)",
         "INST(T=2.5,max_rel=3)", "INST(T=0.25,max_rel=3)", "INST(T=0.5,max_rel=3)", "INSQ(max_rel=3)",
         "INSQ(T=3.0,max_rel=2)", "BPM(max_rel=3)@10", "BPM(T=2.5,max_rel=3)@5", "BPM(T=0.5,max_rel=3)@1200",
         "NERR8(max_rel=3)@10", "NERR8(max_rel=2)@1500", "NERR9(max_rel=3)@10", "NERR9(max_rel=3)@1200",
         "NERR10(max_rel=3)", "NERR10(p=0.5,max_rel=2)", "NERR10(p=1.0,max_rel=3)", "NERR11(max_rel=3)",
         "NERR11(T=2.0,min_rel=1,max_rel=3)"]


@pytest.mark.parametrize("seed", range(5))
def test_cwl_eval_provider(seed):
    qrels, run = _case(seed, long=seed == 4)
    run = _in_our_order(run)
    ours = _ours(qrels, run, NAMES)
    ms = [ir_measures.parse_measure(n) for n in NAMES]
    by = {str(m): n for m, n in zip(ms, NAMES)}
    got = 0
    for r in ir_measures.cwl_eval.iter_calc(ms, qrels, run):
        name = by[str(r.measure)]
        assert ours[(r.query_id, str(ef.parse_measure(name)))] == pytest.approx(r.value, abs=1e-9), (name, r.query_id)
        got += 1
    assert got == len(NAMES) * run.query_id.nunique()


def _ranked(qrels, run):
    lab = {(q, d): int(r) for q, d, r in qrels.itertuples(index=False)}
    out = {}
    for q, g in run.groupby("query_id"):
        docs = sorted(sorted(zip(g["score"], g["doc_id"]), key=lambda t: t[1], reverse=True), key=lambda t: -t[0])
        out[q] = [lab.get((q, d)) for _, d in docs]
    return out


def _gain(lab, lo, hi):
    return 0.0 if lab is None else (min(max(max(lab, 0), lo), hi) - lo) / (hi - lo)


def _cwl_loop(labels, lo, hi, cont):
    """sum_i W(i) g(i) with W from the continuation probabilities C(i) over 1000 ranks."""
    g = [_gain(lab, lo, hi) for lab in labels[:1000]] + [0.0] * max(0, 1000 - len(labels))
    weights, w, cum = [], 1.0, 0.0
    for i, gi in enumerate(g, start=1):
        weights.append(w)
        cum += gi
        w *= cont(i, cum, gi)
    return sum(wi * gi for wi, gi in zip(weights, g)) / sum(weights)


@pytest.mark.parametrize("seed", range(3))
def test_slow_loops(seed):
    qrels, run = _case(seed + 10, max_label=4, long=seed == 2)
    loops = {  # name: (min_rel, C(i, cumulative gain through i, gain at i))
        "SDCG(max_rel=4)@10": (0, lambda i, c, g: math.log2(i + 1) / math.log2(i + 2) if i < 10 else 0.0),
        "INST(T=2.0,max_rel=4)": (0, lambda i, c, g: ((i + 2.0 + 2.0 - c - 1) / (i + 2.0 + 2.0 - c)) ** 2),
        "INSQ(T=1.5,min_rel=1,max_rel=4)": (1, lambda i, c, g: ((i + 3.0 - 1) / (i + 3.0)) ** 2),
        "BPM(T=1.5,max_rel=4)@8": (0, lambda i, c, g: 1.0 if c < 1.5 and i < 8 else 0.0),
        "NERR8(max_rel=4)@7": (0, lambda i, c, g: 1 - g if i < 7 else 0.0),
        "NERR9(max_rel=4)@30": (0, lambda i, c, g: i / (i + 1) * (1 - g) if i < 30 else 0.0),
        "NERR10(p=0.8,max_rel=4)": (0, lambda i, c, g: 0.8 * (1 - g)),
        "NERR11(T=0.5,max_rel=4)": (0, lambda i, c, g: ((i + 1.0 - 1) / (i + 1.0)) ** 2 * (1 - g)),
    }
    ours = _ours(qrels, run, list(loops))
    for q, labels in _ranked(qrels, run).items():
        for name, (lo, cont) in loops.items():
            assert ours[(q, name)] == pytest.approx(_cwl_loop(labels, lo, 4, cont), abs=1e-9), (name, q)


def test_names_round_trip_and_max_rel_is_required():
    for name in ["SDCG(max_rel=3)@10", "INST(max_rel=3)", "INST(T=2.0,max_rel=1)", "INSQ(T=0.5,min_rel=1,max_rel=4)"]:
        m = ef.parse_measure(name)
        assert str(m) == name and ef.parse_measure(str(m)) == m
        assert str(ir_measures.parse_measure(name)) == str(ir_measures.parse_measure(str(m)))
    assert str(ef.parse_measure("INST(T=1.0,max_rel=3)")) == "INST(max_rel=3)"  # the default left out
    with pytest.raises(ValueError, match=r"^INST: max_rel must be given \(an int\), e\.g\. INST\(max_rel=\.\.\.\), got None$"):
        ef.parse_measure("INST")
    with pytest.raises(ValueError, match=r"^SDCG: max_rel must be an int > min_rel \(2\), got 2$"):
        ef.parse_measure("SDCG(min_rel=2,max_rel=2)@10")
    with pytest.raises(ValueError, match=r"^INSQ: T must be a number in \(0, 1e\+12\], got 0$"):
        ef.parse_measure("INSQ(T=0,max_rel=2)")
    with pytest.raises(ValueError, match="SDCG needs a cutoff"):
        ef.parse_measure("SDCG(max_rel=2)")


def test_a_perfect_ranking_and_an_empty_one():
    qrels = pd.DataFrame({"query_id": ["q"] * 3, "doc_id": ["a", "b", "c"], "relevance": [2, 2, 2]})
    run = pd.DataFrame({"query_id": ["q"] * 3, "doc_id": ["a", "b", "c"], "score": [3.0, 2.0, 1.0]})
    v = _ours(qrels, run, ["SDCG(max_rel=2)@3", "SDCG(max_rel=2)@4"])
    assert v[("q", "SDCG(max_rel=2)@3")] == pytest.approx(1.0)
    assert v[("q", "SDCG(max_rel=2)@4")] < 1.0
    none = run.assign(doc_id=["x", "y", "z"])
    v = _ours(qrels, none, ["INST(max_rel=2)", "INSQ(max_rel=2)"])
    assert v[("q", "INST(max_rel=2)")] == 0.0 and v[("q", "INSQ(max_rel=2)")] == 0.0


@pytest.mark.parametrize("p", [0.5, 0.8, 0.95])
def test_ir_measures_rbp_is_a_binary_gain_rbp(p):
    """ir_measures' RBP(rel=r,p=p) (cwl_eval: gain 1 from label r, W normalised over 1000
    ranks) is evalframe's (trec_eval's) RBP with gains 0 below r and 1 from r, times
    1 / (1 - p**1000): the same to 1e-9 when p**1000 is below that, on rankings within 1000."""
    qrels, run = _case(31)
    run = _in_our_order(run)
    ours = _ours(qrels, run, [f"RBP(p={p},gains=((1, 0.0), (2, 1.0), (3, 1.0)))"])
    name = str(ef.parse_measure(f"RBP(p={p},gains=((1, 0.0), (2, 1.0), (3, 1.0)))"))
    for r in ir_measures.cwl_eval.iter_calc([ir_measures.parse_measure(f"RBP(rel=2,p={p})")], qrels, run):
        assert ours[(r.query_id, name)] / (1 - p ** 1000) == pytest.approx(r.value, abs=1e-9)


@pytest.mark.parametrize("seed", range(3))
def test_cwl_eval_p_rr_ap(seed):
    """ir_measures also sends P@k, RR and AP to cwl_eval (binary gains from rel): P and RR
    agree with evalframe's (trec_eval's); cwl_eval's AP divides by the relevant documents
    retrieved (Harman's original AP, C/W/L's), trec_eval's and evalframe's by all relevant."""
    qrels, run = _case(seed + 50)
    run = _in_our_order(run)
    names = {"P(rel=2)@10": "P(rel=2)@10", "RR": "RR", "AP": "AP"}
    ours = _ours(qrels, run, list(names.values()) + ["NumRel", "NumRelRet"])
    ms = {str(ir_measures.parse_measure(n)): v for n, v in names.items()}
    seen = 0
    for r in ir_measures.cwl_eval.iter_calc([ir_measures.parse_measure(n) for n in names], qrels, run):
        ev = str(ef.parse_measure(ms[str(r.measure)]))
        want = r.value
        if ev == "AP":
            R, got = ours[(r.query_id, "NumRel")], ours[(r.query_id, "NumRelRet")]
            want = r.value * got / R if R else 0.0
            seen += got < R
        assert ours[(r.query_id, ev)] == pytest.approx(want, abs=1e-9), (ev, r.query_id)
    assert seen  # some question has a relevant document not retrieved: the two APs differ there
