"""stats.summarize_ppi / stats.compare_ppi (issue 29): prediction-powered means and paired
differences, against the ppi-python package (``ppi_py.ppi_mean_ci``, with and without
power tuning) and a seeded coverage simulation with a biased judge."""
import warnings

import numpy as np
import pandas as pd
import pytest

from evalframe import stats
from evalframe.errors import EvalframeInputError, FewHumanLabelsWarning, UnpairedQuestionsWarning

ppi_py = pytest.importorskip("ppi_py")


def _tables(seed: int, systems=("a", "b", "c"), measures=("R@5", "P@10"), n_q: int = 150, n_h: int = 40):
    """Per-question tables: human values on ``n_h`` questions, a biased noisy model on all."""
    rng = np.random.default_rng(seed)
    rows = []
    for s_i, s in enumerate(systems):
        for m in measures:
            truth = np.clip(rng.beta(2, 3, n_q) + 0.05 * s_i, 0, 1)
            model = np.clip(truth + rng.normal(0.08, 0.15, n_q), 0, 1)
            rows.append(pd.DataFrame({"system": s, "query_id": [f"q{i}" for i in range(n_q)], "measure": m,
                                      "value": model, "truth": truth}))
    t = pd.concat(rows, ignore_index=True)
    human_q = set(rng.choice(n_q, n_h, replace=False))
    human = t[t["query_id"].str[1:].astype(int).isin(human_q)]
    return (t.drop(columns="truth"), human.drop(columns="value").rename(columns={"truth": "value"}), human_q)


@pytest.mark.parametrize("lam", [None, 1.0, 0.3])
@pytest.mark.parametrize("confidence", [0.95, 0.8])
def test_summarize_ppi_is_ppi_py(lam, confidence):
    model, human, _ = _tables(0)
    got = stats.summarize_ppi(model, human, lam=lam, confidence=confidence)
    assert len(got) == 6
    for r in got.itertuples(index=False):
        mm = model[(model["system"] == r.system) & (model["measure"] == r.measure)]
        hh = human[(human["system"] == r.system) & (human["measure"] == r.measure)].set_index("query_id")["value"]
        lab = mm["query_id"].isin(hh.index).to_numpy()
        Y = hh.loc[mm["query_id"][lab]].to_numpy()
        Yhat, Yu = mm["value"].to_numpy()[lab], mm["value"].to_numpy()[~lab]
        lo, hi = ppi_py.ppi_mean_ci(Y, Yhat, Yu, alpha=1 - confidence, lam=lam)
        est = ppi_py.ppi_mean_pointestimate(Y, Yhat, Yu, lam=lam) if lam is not None else (lo + hi) / 2
        assert r.ci_low == pytest.approx(float(np.ravel(lo)[0]), abs=1e-10)
        assert r.ci_high == pytest.approx(float(np.ravel(hi)[0]), abs=1e-10)
        assert r.mean == pytest.approx(float(np.ravel(est)[0]), abs=1e-10)
        assert (r.n, r.n_human, r.n_model, r.method) == (150, 40, 150, "ppi")
        assert 0 <= r[got.columns.get_loc("lambda")] <= 1
    if lam is not None:
        assert (got["lambda"] == lam).all()
    else:
        assert got["lambda"].nunique() > 1  # estimated per system and measure


@pytest.mark.parametrize("lam", [None, 1.0])
def test_compare_ppi_is_ppi_py_on_the_differences(lam):
    model, human, _ = _tables(1)
    got = stats.compare_ppi(model, human, lam=lam)
    assert list(got[["system_a", "system_b"]].drop_duplicates().itertuples(index=False, name=None)) == [
        ("a", "b"), ("a", "c"), ("b", "c")]
    assert list(pd.unique(got["measure"])) == ["R@5", "P@10"]
    for r in got.itertuples(index=False):
        def vals(t, s):
            return t[(t["system"] == s) & (t["measure"] == r.measure)].set_index("query_id")["value"]
        dm = vals(model, r.system_b) - vals(model, r.system_a)
        dh = (vals(human, r.system_b) - vals(human, r.system_a))
        lab = dm.index.isin(dh.index)
        lo, hi = ppi_py.ppi_mean_ci(dh.loc[dm.index[lab]].to_numpy(), dm.to_numpy()[lab], dm.to_numpy()[~lab],
                                    alpha=0.05, lam=lam)
        p = ppi_py.ppi_mean_pval(dh.loc[dm.index[lab]].to_numpy(), dm.to_numpy()[lab], dm.to_numpy()[~lab],
                                 lam=lam)
        assert r.ci_low == pytest.approx(float(np.ravel(lo)[0]), abs=1e-10)
        assert r.ci_high == pytest.approx(float(np.ravel(hi)[0]), abs=1e-10)
        assert r.p_value == pytest.approx(float(np.ravel(p)[0]), rel=1e-6, abs=1e-12)
        assert r.method == "ppi" and r.correction == "holm" and r.p_adjusted >= r.p_value
    base = stats.compare_ppi(model, human, baseline="c", lam=lam, correction="none")
    assert set(base["system_a"]) == {"c"} and (base["p_adjusted"] == base["p_value"]).all()


def _simulate(n_sets: int, n_q: int, n_h: int, seed: int):
    """``n_sets`` golden sets of ``n_q`` questions, 10 retrieved documents each; people's
    labels Bernoulli(p_q), p_q ~ Beta(2, 3) (so E[P@10] = 0.4 exactly); a lenient judge that
    calls a relevant document relevant with probability 0.9 and a non-relevant one with
    0.15 + 0.03 * rank (a model's bias grows down the ranking).  Each set is one 'system'."""
    rng = np.random.default_rng(seed)
    p = rng.beta(2, 3, (n_sets, n_q, 1))
    human = rng.random((n_sets, n_q, 10)) < p
    ranks = np.arange(1, 11)
    says = np.where(human, 0.9, 0.15 + 0.03 * ranks)
    model = rng.random((n_sets, n_q, 10)) < says
    sys_ = np.repeat([f"s{i}" for i in range(n_sets)], n_q)
    qid = np.tile([f"q{i}" for i in range(n_q)], n_sets)
    m = pd.DataFrame({"system": sys_, "query_id": qid, "measure": "P@10", "value": model.mean(-1).ravel()})
    h = pd.DataFrame({"system": sys_, "query_id": qid, "measure": "P@10", "value": human.mean(-1).ravel()})
    return m, h[np.tile(np.arange(n_q) < n_h, n_sets)]


def test_ppi_covers_where_the_model_alone_does_not():
    model, human = _simulate(2000, 200, 60, seed=29)
    ppi = stats.summarize_ppi(model, human)
    naive = stats.summarize(model, method="t")
    cover_ppi = float(((ppi["ci_low"] <= 0.4) & (0.4 <= ppi["ci_high"])).mean())
    cover_naive = float(((naive["ci_low"] <= 0.4) & (0.4 <= naive["ci_high"])).mean())
    cover_ppi1 = stats.summarize_ppi(model, human, lam=1.0)
    cover_ppi1 = float(((cover_ppi1["ci_low"] <= 0.4) & (0.4 <= cover_ppi1["ci_high"])).mean())
    print(f"coverage of 95% intervals over 2000 golden sets: PPI++ {cover_ppi:.3f}, PPI (lambda=1) "
          f"{cover_ppi1:.3f}, model labels alone {cover_naive:.3f}")
    assert 0.93 <= cover_ppi <= 0.97
    assert 0.93 <= cover_ppi1 <= 0.97
    assert cover_naive < 0.2  # the judge's bias: far less
    # and PPI++ is narrower than the human labels alone (same coverage target)
    human_only = stats.summarize(human, method="t")
    assert float((ppi["ci_high"] - ppi["ci_low"]).mean()) < float((human_only["ci_high"] - human_only["ci_low"]).mean())


def test_few_human_questions_warn_and_bad_input_is_refused():
    model, human, qs = _tables(2, n_h=8)
    with pytest.warns(FewHumanLabelsWarning, match="fewer than 10 human-labelled questions"):
        stats.summarize_ppi(model, human)
    with pytest.warns(FewHumanLabelsWarning):
        stats.compare_ppi(model, human)
    model, human, _ = _tables(3)
    extra = human.iloc[:2].assign(query_id=["not-in-model-1", "not-in-model-2"])
    with pytest.warns(UnpairedQuestionsWarning, match="2 rows of the human table have no row in the model table"):
        got = stats.summarize_ppi(model, pd.concat([human, extra]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pd.testing.assert_frame_equal(got, stats.summarize_ppi(model, human))
    with pytest.raises(ValueError, match=r"lam must be None \(estimated, PPI\+\+\) or a float in \[0, 1\]"):
        stats.summarize_ppi(model, human, lam=2)
    with pytest.raises(EvalframeInputError, match="baseline 'zz' is not a system"):
        stats.compare_ppi(model, human, baseline="zz")
    with pytest.raises(EvalframeInputError, match="two systems or more"):
        stats.compare_ppi(model[model["system"] == "a"], human[human["system"] == "a"])


def test_report_with_human_qrels_adds_the_ppi_summary():
    import evalframe as ef
    cran = ef.datasets.load_cranfield()
    rng = np.random.default_rng(0)
    model_q = cran.qrels.assign(relevance=np.where(rng.random(len(cran.qrels)) < 0.2, 0, cran.qrels["relevance"]))
    human_q = cran.qrels[cran.qrels["query_id"].isin(cran.qrels["query_id"].unique()[:60])]
    runs = cran.runs[cran.runs["system"].isin(["bm25", "hybrid_rrf"])]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rep = ef.report(runs, model_q, measures=["R@5", "nDCG@10"], n_resamples=50, human_qrels=human_q)
        want = stats.summarize_ppi(ef.evaluate(runs, model_q, ["R@5", "nDCG@10"]),
                                   ef.evaluate(runs, human_q, ["R@5", "nDCG@10"]))
    got = rep.summary.merge(want, on=["system", "measure"], suffixes=("", "_want"))
    assert len(got) == 4 and (got["n_human"] == 60).all()
    np.testing.assert_allclose(got["ppi_mean"], got["mean_want"], atol=1e-12)
    np.testing.assert_allclose(got["ppi_ci_low"], got["ci_low_want"], atol=1e-12)
    np.testing.assert_allclose(got["ppi_lambda"], got["lambda"], atol=1e-12)
    rows = rep.diagnostics[rep.diagnostics["check"] == "ppi"]
    assert len(rows) == 4 and rows["detail"].str.contains("corrected with 60 human-labelled questions").all()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want_c = stats.compare_ppi(ef.evaluate(runs, model_q, ["R@5", "nDCG@10"]),
                                   ef.evaluate(runs, human_q, ["R@5", "nDCG@10"]))
    c = rep.comparisons.merge(want_c, on=["measure", "system_a", "system_b"])
    assert len(c) == 2
    np.testing.assert_allclose(c["ppi_diff"], c["diff_y"], atol=1e-12)
    np.testing.assert_allclose(c["ppi_ci_high"], c["ci_high_y"], atol=1e-12)
    np.testing.assert_allclose(c["ppi_p_adjusted"], c["p_adjusted_y"], atol=1e-12)


def test_report_warns_when_qrels_mixes_people_labels_into_the_model_labels():
    # the PPI mean takes qrels as the model's labels on every question: people's labels mixed in
    # (pd.concat([human, model]) with conflicts='human') bias it; the report says so
    import evalframe as ef
    rng = np.random.default_rng(3)
    qs = [f"q{i}" for i in range(30)]
    human = pd.DataFrame([(q, f"d{j}", int(rng.integers(0, 2)), "human") for q in qs[:15] for j in range(4)],
                         columns=["query_id", "doc_id", "relevance", "judge"])
    model = pd.DataFrame([(q, f"d{j}", int(rng.integers(0, 2)), "llm") for q in qs for j in range(4)],
                         columns=["query_id", "doc_id", "relevance", "judge"])
    run = pd.DataFrame([(s, q, f"d{j}", float(rng.random())) for s in ("a", "b") for q in qs for j in range(4)],
                       columns=["system", "query_id", "doc_id", "score"])
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        ef.report(run, pd.concat([human, model]), measures=["P@3"], conflicts="human", human_qrels=human,
                  n_resamples=50)
    assert any("labels by people" in str(w.message) for w in got)
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        ef.report(run, model, measures=["P@3"], human_qrels=human, n_resamples=50)
    assert not any("labels by people" in str(w.message) for w in got)


def test_lambda_zero_is_the_human_labels_alone_even_when_every_question_is_human_labelled():
    # lam=0 is documented as the classical interval of the human labels: it was NaN when no
    # question was left unlabelled
    from scipy import stats as st
    rng = np.random.default_rng(5)
    y = rng.uniform(0, 1, 40)
    t = lambda v: pd.DataFrame({"system": "s", "query_id": [f"q{i}" for i in range(40)], "measure": "P@5",
                                "value": v})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = stats.summarize_ppi(t(np.clip(y + 0.2, 0, 1)), t(y), lam=0)
    assert r["mean"].iloc[0] == pytest.approx(y.mean())
    half = st.norm.ppf(0.975) * y.std(ddof=0) / np.sqrt(40)  # the ppi_py classical (z) interval
    assert r["ci_high"].iloc[0] - r["mean"].iloc[0] == pytest.approx(half, rel=1e-9)
