"""Diversity (intent-aware) families on a golden set with subtopics, against
ir_measures' pyndeval provider (ndeval's C code) and slow loops written here from
the definitions, on random cases with score ties and graded labels, to 1e-9 per
question; and the subtopic column's way in (read_qrels, ordinary measures)."""
import math
import warnings

import numpy as np
import pandas as pd
import pytest

import evalframe as ef

ir_measures = pytest.importorskip("ir_measures")


def _case(seed: int, *, ties: bool = True, empty: bool = False):
    """8 questions with 1-5 subtopics each, labels -1..2 per (subtopic, document),
    each judged document judged for a random subset of its question's subtopics."""
    rng = np.random.default_rng(seed)
    qrels, run = [], []
    for q in range(1, 9):
        subs = rng.choice(9, size=rng.integers(1, 6), replace=False) + 1
        docs = [f"d{d}" for d in rng.choice(80, size=rng.integers(1, 45), replace=False)]
        pool = docs + [f"x{d}" for d in range(6)]
        for d in rng.choice(pool, size=rng.integers(1, len(pool)), replace=False):
            for s in rng.choice(subs, size=rng.integers(1, len(subs) + 1), replace=False):
                lab = 0 if empty and q == 8 else int(rng.choice([-1, 0, 0, 1, 1, 2]))
                qrels.append((str(q), str(s), d, lab))
        scores = rng.integers(0, 6, size=len(docs)) / 2 if ties else rng.permutation(len(docs)) + 0.5
        run += [(str(q), d, float(s)) for d, s in zip(docs, scores)]
    return (pd.DataFrame(qrels, columns=["query_id", "subtopic", "doc_id", "relevance"]),
            pd.DataFrame(run, columns=["query_id", "doc_id", "score"]))


def _ours(qrels, run, names, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ef.EvalframeWarning)
        t = ef.evaluate(run, qrels, names, missing="drop", **kw)
    return {(r.query_id, r.measure): r.value for r in t.itertuples()}


def _theirs(qrels, run, names):
    ms = [ir_measures.parse_measure(n) for n in names]
    by = {str(m): n for m, n in zip(ms, names)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = ir_measures.pyndeval.iter_calc(ms, qrels.rename(columns={"subtopic": "iteration"}), run)
        return {(r.query_id, by[str(r.measure)]): r.value for r in got}


# one pyndeval invocation (same rel, alpha, beta): ir_measures' provider reads the run once
NAMES = ["alpha_nDCG@5", "alpha_nDCG@20", "alpha_DCG@10", "alpha_DCG@20", "ERR_IA@5", "ERR_IA@20", "nERR_IA@10",
         "nERR_IA@20", "NRBP", "nNRBP", "AP_IA", "P_IA@5", "P_IA@20", "StRecall@5", "StRecall@20"]


@pytest.mark.parametrize("seed", range(6))
def test_pyndeval_provider(seed):
    """pyndeval sorts ties by doc_id ascending: ties='doc_id_asc'."""
    qrels, run = _case(seed, ties=seed % 3 != 2)
    ours = _ours(qrels, run, NAMES, ties="doc_id_asc")
    theirs = _theirs(qrels, run, NAMES)
    assert len(theirs) == len(NAMES) * run.query_id.nunique()
    for (q, name), value in theirs.items():
        if math.isnan(value):  # ndeval's nNRBP is 0/0 when no subtopic has a relevant document: 0 here
            assert name == "nNRBP" and ours[(q, name)] == 0.0
            continue
        assert ours[(q, str(ef.parse_measure(name)))] == pytest.approx(value, abs=1e-9), (name, q)


@pytest.mark.parametrize("rel,alpha,beta", [(2, 0.5, 0.5), (1, 0.3, 0.8), (1, 1.0, 0.5), (1, 0.0, 0.2)])
def test_pyndeval_parameters(rel, alpha, beta):
    qrels, run = _case(7, ties=True)
    names = [f"alpha_nDCG(alpha={alpha},rel={rel})@10", f"alpha_DCG(alpha={alpha},rel={rel})@20",
             f"NRBP(alpha={alpha},beta={beta},rel={rel})", f"nNRBP(alpha={alpha},beta={beta},rel={rel})"]
    ours = _ours(qrels, run, names, ties="doc_id_asc")
    for name in names:  # one invocation each (ir_measures' provider reads the run once)
        for (q, n), value in _theirs(qrels, run, [name]).items():
            if math.isnan(value):  # ndeval's 0/0 when no subtopic has a relevant document
                assert ours[(q, str(ef.parse_measure(n)))] == 0.0
                continue
            assert ours[(q, str(ef.parse_measure(n)))] == pytest.approx(value, abs=1e-9), (n, q)


def test_where_evalframe_differs_from_ndeval():
    """ndeval leaves alpha-DCG@1 and ERR-IA@1 unnormalised (S times evalframe's), and
    nNRBP is 0/0 (NaN) there when no subtopic has a relevant document: 0 here."""
    qrels, run = _case(3, empty=True)
    ours = _ours(qrels, run, ["alpha_DCG@1", "ERR_IA@1", "nNRBP", "alpha_nDCG@1"], ties="doc_id_asc")
    theirs = _theirs(qrels, run, ["alpha_DCG@1", "ERR_IA@1", "nNRBP", "alpha_nDCG@1"])
    lab = qrels[qrels.relevance >= 1]
    for q in run.query_id.unique():
        S = lab[lab.query_id == q].subtopic.nunique()
        assert ours[(q, "alpha_DCG@1")] * S == pytest.approx(theirs[(q, "alpha_DCG@1")], abs=1e-12)
        assert ours[(q, "ERR_IA@1")] * S == pytest.approx(theirs[(q, "ERR_IA@1")], abs=1e-12)
        assert ours[(q, "alpha_nDCG@1")] == pytest.approx(theirs[(q, "alpha_nDCG@1")], abs=1e-12)
        if S == 0:
            assert math.isnan(theirs[(q, "nNRBP")]) and ours[(q, "nNRBP")] == 0.0
    assert any(lab[lab.query_id == q].empty for q in run.query_id.unique())


# --- slow loops, written from the definitions ---------------------------------------------

def _loops(qrels, run, q, k, alpha, beta, rel):
    g = qrels[qrels.query_id == q]
    relsub = {}  # doc -> subtopics it is relevant to
    for _, r in g.iterrows():
        if r.relevance >= rel:
            relsub.setdefault(r.doc_id, set()).add(r.subtopic)
    subs = set().union(*relsub.values()) if relsub else set()
    S = len(subs)
    gr = run[run.query_id == q]
    ranking = [d for _, d in sorted(sorted(zip(gr.score, gr.doc_id), key=lambda t: t[1], reverse=True),
                                    key=lambda t: -t[0])]  # score desc, then doc_id desc

    def gains(docs):
        seen, out = {}, []
        for d in docs:
            out.append(sum((1 - alpha) ** seen.get(s, 0) for s in relsub.get(d, ())))
            for s in relsub.get(d, ()):
                seen[s] = seen.get(s, 0) + 1
        return out
    ideal, left, seen = [], set(relsub), {}
    while left:  # greedy; ties to the larger doc id
        best = max(left, key=lambda d: (round(sum((1 - alpha) ** seen.get(s, 0) for s in relsub[d]), 11), d))
        ideal.append(best)
        left.remove(best)
        for s in relsub[best]:
            seen[s] = seen.get(s, 0) + 1
    run_g, ideal_g = gains(ranking), gains(ideal)
    dcg = sum(x / math.log2(i + 2) for i, x in enumerate(run_g[:k]))
    idcg = sum(x / math.log2(i + 2) for i, x in enumerate(ideal_g[:k]))
    err = sum(x / (i + 1) for i, x in enumerate(run_g[:k]))
    ii_err = S * sum((1 - alpha) ** i / (i + 1) for i in range(k))
    nrbp = sum(x * beta ** i for i, x in enumerate(run_g))
    inrbp = sum(x * beta ** i for i, x in enumerate(ideal_g))
    covered = set().union(*(relsub.get(d, set()) for d in ranking[:k])) if ranking else set()
    ap = 0.0
    for s in subs:
        n_s = sum(1 for d in relsub if s in relsub[d])
        hits, tot = 0, 0.0
        for i, d in enumerate(ranking, start=1):
            if s in relsub.get(d, ()):
                hits += 1
                tot += hits / i
        ap += tot / n_s
    return {"alpha_nDCG": dcg / idcg if dcg else 0.0, "ERR_IA": err / ii_err if S else 0.0,
            "nNRBP": nrbp / inrbp if inrbp else 0.0,
            "NRBP": (1 - (1 - alpha) * beta) * nrbp / S if S else 0.0,
            "StRecall": len(covered) / S if S else 0.0, "AP_IA": ap / S if S else 0.0,
            "P_IA": sum(len(relsub.get(d, ())) for d in ranking[:k]) / (k * S) if S else 0.0}


@pytest.mark.parametrize("seed", range(3))
def test_slow_loops(seed):
    """Deeper than ndeval's 20 ranks, evalframe's tie order (doc_id descending)."""
    qrels, run = _case(seed + 40, ties=True)
    k, alpha, beta, rel = 30, 0.4, 0.7, 1
    names = {"alpha_nDCG": f"alpha_nDCG(alpha={alpha})@{k}", "ERR_IA": f"ERR_IA@{k}",
             "nNRBP": f"nNRBP(alpha={alpha},beta={beta})", "NRBP": f"NRBP(alpha={alpha},beta={beta})",
             "StRecall": f"StRecall@{k}", "AP_IA": "AP_IA", "P_IA": f"P_IA@{k}"}
    ours = _ours(qrels, run, list(names.values()))
    for q in run.query_id.unique():
        want = _loops(qrels, run, q, k, alpha, beta, rel)
        want_err = _loops(qrels, run, q, k, 0.5, beta, rel)["ERR_IA"]  # ERR-IA's alpha is ndeval's 0.5
        for fam, name in names.items():
            expect = want_err if fam == "ERR_IA" else want[fam]
            assert ours[(q, str(ef.parse_measure(name)))] == pytest.approx(expect, abs=1e-9), (name, q)


def test_judged_only_condenses_the_ranking():
    qrels, run = _case(5, ties=False)
    flat = qrels.groupby(["query_id", "doc_id"], as_index=False).relevance.max()
    judged = run.merge(flat[flat.relevance >= 0][["query_id", "doc_id"]], on=["query_id", "doc_id"])
    a = _ours(qrels, run, ["alpha_nDCG(judged_only=True)@10", "P_IA(judged_only=True)@5"])
    b = _ours(qrels, judged, ["alpha_nDCG@10", "P_IA@5"])
    assert len(judged) < len(run)
    for q in judged.query_id.unique():
        assert a[(q, "alpha_nDCG(judged_only=True)@10")] == pytest.approx(b[(q, "alpha_nDCG@10")], abs=1e-12)
        assert a[(q, "P_IA(judged_only=True)@5")] == pytest.approx(b[(q, "P_IA@5")], abs=1e-12)


# --- the subtopic column -------------------------------------------------------------------

def test_read_qrels_keeps_trec_web_subtopics(tmp_path):
    """TREC Web diversity qrels: 'topic subtopic docno judgment'."""
    path = tmp_path / "qrels.diversity.txt"
    path.write_text("51 1 a 1\n51 2 a 0\n51 2 b 1\n51 3 c 1\n52 1 a 0\n")
    q = ef.read_qrels(path)
    assert list(q.columns) == ["query_id", "subtopic", "doc_id", "relevance"] and len(q) == 5
    assert q.subtopic.tolist() == ["1", "2", "2", "3", "1"]
    plain = tmp_path / "qrels.txt"
    plain.write_text("51 0 a 1\n51 0 b 0\n52 0 a 1\n")
    assert list(ef.read_qrels(plain).columns) == ["query_id", "doc_id", "relevance"]
    rounds = tmp_path / "rounds.txt"  # an iteration column that varies, no repeated document: not subtopics
    rounds.write_text("1 0.5 a 1\n1 1 b 0\n2 2 a 1\n")
    assert list(ef.read_qrels(rounds).columns) == ["query_id", "doc_id", "relevance"]
    again = ef.read_qrels(q)  # idempotent
    pd.testing.assert_frame_equal(again, q)


def test_conflicting_subtopic_labels_are_one_error():
    q = pd.DataFrame({"query_id": ["1", "1", "1"], "subtopic": ["a", "a", "b"], "doc_id": ["d", "d", "d"],
                      "relevance": [1, 0, 1]})
    with pytest.raises(ef.EvalframeInputError, match=r"1 \(query_id, subtopic, doc_id\) triples have conflicting"):
        ef.read_qrels(q)
    with pytest.raises(ef.EvalframeInputError, match=r"missing or empty subtopic"):
        ef.read_qrels(q.assign(subtopic=[None, "a", "b"]))


@pytest.mark.parametrize("seed", range(3))
def test_ordinary_measures_read_the_largest_label(seed):
    """A document is as relevant as its most relevant subtopic makes it (ndeval's own MAP:
    relevant to any subtopic, relevant).  ir_measures' pytrec_eval provider keeps the last
    row of each (query, doc): with the largest label last, the two agree."""
    qrels, run = _case(seed + 60)
    names = ["AP", "P@10", "nDCG(gain='linear')@10", "R@20"]
    ours = _ours(qrels, run, names)
    flat = qrels.groupby(["query_id", "doc_id"], as_index=False).relevance.max()
    assert ours == _ours(flat, run, names)
    last = qrels.sort_values("relevance", kind="stable").rename(columns={"subtopic": "iteration"})
    ms = [ir_measures.parse_measure(n) for n in ["AP", "P@10", "nDCG@10", "R@20"]]
    for r in ir_measures.pytrec_eval.iter_calc(ms, last, run):
        name = dict(zip(map(str, ms), names))[str(r.measure)]
        assert ours[(r.query_id, str(ef.parse_measure(name)))] == pytest.approx(r.value, abs=1e-9)


def test_names_round_trip_with_ir_measures():
    for name in ["alpha_nDCG@20", "alpha_nDCG(alpha=0.3)@10", "alpha_nDCG", "alpha_DCG@20", "ERR_IA@20",
                 "nERR_IA@20", "nERR_IA(rel=2)@10", "NRBP", "NRBP(alpha=0.3,beta=0.9)", "nNRBP", "AP_IA",
                 "P_IA@10", "StRecall@10", "StRecall", "AP_IA(judged_only=True)"]:
        m = ef.parse_measure(name)
        assert str(m) == name and ef.parse_measure(str(m)) == m
        assert str(ir_measures.parse_measure(name)) == str(ir_measures.parse_measure(str(m)))
    with pytest.raises(ValueError, match="alpha_DCG needs a cutoff"):
        ef.parse_measure("alpha_DCG")


def test_without_subtopics_each_question_is_one_subtopic():
    qrels, run = _case(9)
    flat = qrels.groupby(["query_id", "doc_id"], as_index=False).relevance.max()
    one = flat.assign(subtopic="0")
    names = ["alpha_nDCG@10", "ERR_IA@10", "StRecall@5", "AP_IA", "nNRBP"]
    assert _ours(flat, run, names) == pytest.approx(_ours(one, run, names))


def test_partitions_of_questions_give_the_same_bits():
    """The per-partition contract holds with subtopics (the greedy ideal is per question)."""
    qrels, run = _case(11)
    names = ["alpha_nDCG@10", "nERR_IA@20", "nNRBP", "AP_IA", "StRecall@5", "P_IA@10"]
    whole = pd.Series(_ours(qrels, run, names))
    qs = sorted(qrels.query_id.unique())
    for part in (qs[:3], qs[3:]):
        got = _ours(qrels[qrels.query_id.isin(part)], run[run.query_id.isin(part)], names)
        for (q, name), value in got.items():
            assert value == whole[(q, name)]


def test_agreement_pairs_diversity_labels_per_subtopic():
    """Two diversity golden sets agree per (question, subtopic, document); against a golden
    set without subtopics each document's largest label counts.  (Before, the subtopic rows
    were paired across subtopics: counts of 'only in one' went negative.)"""
    a = pd.DataFrame({"query_id": ["1"] * 4, "subtopic": ["s1", "s2", "s1", "s2"], "doc_id": ["d", "d", "e", "e"],
                      "relevance": [1, 0, 0, 0]})
    b = a.assign(relevance=[1, 0, 0, 1])
    t = ef.agreement(a, b, n_resamples=0).set_index("statistic")
    assert t.loc["observed_agreement", "value"] == pytest.approx(3 / 4)
    assert (t.only_a == 0).all() and (t.only_b == 0).all()
    flat = pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["d", "e"], "relevance": [1, 1]})
    t = ef.agreement(a, flat, n_resamples=0).set_index("statistic")  # a's largest labels: d 1, e 0
    assert t.loc["observed_agreement", "value"] == pytest.approx(1 / 2)
    assert (t.only_a == 0).all() and (t.only_b == 0).all()


def test_commands_read_diversity_qrels(tmp_path, capsys):
    """`evaluate` computes the diversity measures from a TREC Web qrels file; `trec-eval`,
    like trec_eval 10 ("duplicate docs"), refuses a document with two labels (as before)."""
    from evalframe.cli import main
    qrels, run = tmp_path / "div.qrels", tmp_path / "div.run"
    qrels.write_text("1 1 a 0\n1 2 a 1\n1 2 b 1\n1 3 c 1\n2 1 a 1\n2 2 a 0\n2 1 b 1\n")
    run.write_text("1 Q0 a 1 3 sys\n1 Q0 c 2 2 sys\n1 Q0 b 3 1 sys\n2 Q0 a 1 1 sys\n2 Q0 x 2 0.5 sys\n")
    assert main(["evaluate", str(qrels), str(run), "-m", "StRecall@1", "StRecall@2", "AP", "-q", "--format", "csv"]) == 0
    out = pd.read_csv(__import__("io").StringIO(capsys.readouterr().out))
    got = out.set_index(["query_id", "measure"]).value
    # question 1: subtopics 2 and 3 have a relevant document (1 has none); a covers 2, c covers 3
    assert got[(1, "StRecall@1")] == pytest.approx(1 / 2) and got[(1, "StRecall@2")] == pytest.approx(1.0)
    assert got[(2, "AP")] == pytest.approx(0.5)  # a relevant (largest label 1), b not retrieved
    assert main(["trec-eval", "-m", "map", str(qrels), str(run)]) == 2
    assert "conflicting relevance labels" in capsys.readouterr().err
