"""Compat (Clarke et al.'s compatibility) against ir_measures' compat provider and a
slow loop written here, on random cases with graded labels, to 1e-9 per question."""
import warnings

import numpy as np
import pandas as pd
import pytest

import evalframe as ef

ir_measures = pytest.importorskip("ir_measures")


def _case(seed: int, *, ties: bool):
    rng = np.random.default_rng(seed)
    qrels, run = [], []
    for q in range(1, 9):
        docs = [f"d{d:02d}" for d in rng.choice(60, size=rng.integers(1, 40), replace=False)]
        pool = docs + [f"x{d}" for d in range(8)]
        judged = rng.choice(pool, size=rng.integers(1, len(pool)), replace=False)
        labels = rng.integers(-1, 4, size=len(judged))
        qrels += [(str(q), d, int(lab)) for d, lab in zip(judged, labels)]
        # positive scores: ir_measures puts an unretrieved document at score 0 in its ideal
        scores = 1 + (rng.integers(0, 6, size=len(docs)) / 2 if ties else rng.permutation(len(docs)))
        run += [(str(q), d, float(s)) for d, s in zip(docs, scores)]
    # golden-set rows by doc_id: ir_measures breaks ideal ties (equal label and score) by row order
    qrels = pd.DataFrame(qrels, columns=["query_id", "doc_id", "relevance"]).sort_values(["query_id", "doc_id"])
    return qrels.reset_index(drop=True), pd.DataFrame(run, columns=["query_id", "doc_id", "score"])


NAMES = ["Compat", "Compat(p=0.8)", "Compat(normalize=False)", "Compat(p=1.0,normalize=False)", "Compat(p=0.5)"]


def _ours(qrels, run, names, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ef.EvalframeWarning)
        t = ef.evaluate(run, qrels, names, missing="drop", **kw)
    return {(r.query_id, r.measure): r.value for r in t.itertuples()}


@pytest.mark.parametrize("seed", range(6))
def test_compat_provider(seed):
    """ir_measures' compat breaks score ties by doc_id ascending: ties='doc_id_asc'."""
    qrels, run = _case(seed, ties=seed % 2 == 0)
    ours = _ours(qrels, run, NAMES, ties="doc_id_asc")
    ms = [ir_measures.parse_measure(n) for n in NAMES]
    by = {str(m): n for m, n in zip(ms, NAMES)}
    got = 0
    for r in ir_measures.compat.iter_calc(ms, qrels, run):
        name = str(ef.parse_measure(by[str(r.measure)]))
        assert ours[(r.query_id, name)] == pytest.approx(r.value, abs=1e-9), (name, r.query_id)
        got += 1
    assert got == len(NAMES) * run.query_id.nunique()


def _compat_loop(ranking, labels, p, normalize):
    """ranking: doc ids in order; labels: doc -> label.  The ideal: relevant documents by
    label, ties in the ranking's order, unretrieved ones last (by doc id)."""
    pos = {d: i for i, d in enumerate(ranking)}
    ideal = sorted((d for d, lab in labels.items() if lab > 0),
                   key=lambda d: (-labels[d], pos.get(d, len(ranking)), d))
    depth = max(len(ranking), len(ideal))

    def rbo(a, b):
        s = norm = 0.0
        for i in range(1, depth + 1):
            s += p ** (i - 1) * len(set(a[:i]) & set(b[:i])) / i
            norm += p ** (i - 1)
        return s / norm if norm else 0.0
    v, best = rbo(ranking, ideal), rbo(ideal, ideal)
    return v / best if normalize and best > 0 else v


@pytest.mark.parametrize("seed", range(3))
def test_slow_loop(seed):
    """Ties in score kept, evalframe's order (doc_id descending), negative labels."""
    qrels, run = _case(seed + 20, ties=True)
    ours = _ours(qrels, run, ["Compat(p=0.9)", "Compat(p=0.7,normalize=False)"])
    for q, g in run.groupby("query_id"):
        ranking = [d for _, d in sorted(sorted(zip(g.score, g.doc_id), key=lambda t: t[1], reverse=True),
                                        key=lambda t: -t[0])]  # score desc, then doc_id desc
        labels = dict(zip(qrels.doc_id[qrels.query_id == q], qrels.relevance[qrels.query_id == q]))
        assert ours[(q, "Compat(p=0.9)")] == pytest.approx(_compat_loop(ranking, labels, 0.9, True), abs=1e-9)
        assert ours[(q, "Compat(p=0.7,normalize=False)")] == pytest.approx(
            _compat_loop(ranking, labels, 0.7, False), abs=1e-9)


def test_names_and_edges():
    for name in ["Compat", "Compat(p=0.8)", "Compat(normalize=False)"]:
        assert str(ef.parse_measure(name)) == name
        assert str(ir_measures.parse_measure(name)) == str(ir_measures.parse_measure(str(ef.parse_measure(name))))
    qrels = pd.DataFrame({"query_id": ["q"] * 3 + ["r"], "doc_id": ["a", "b", "c", "a"], "relevance": [2, 1, 0, 0]})
    run = pd.DataFrame({"query_id": ["q", "q", "q", "r"], "doc_id": ["a", "b", "c", "a"], "score": [3.0, 2.0, 1.0, 1.0]})
    v = _ours(qrels, run, ["Compat", "Compat(normalize=False)"])
    assert v[("q", "Compat")] == pytest.approx(1.0)
    assert v[("q", "Compat(normalize=False)")] < 1.0
    assert v[("r", "Compat")] == 0.0  # nothing relevant
    with pytest.raises(ValueError, match=r"^Compat: p must be a number in \[0, 1\], got 1.5$"):
        ef.parse_measure("Compat(p=1.5)")
