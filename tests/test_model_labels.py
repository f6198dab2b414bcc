"""ef.judge_agreement (issue 29): tau against scipy.stats.kendalltau, tau_ap against a loop
written from Yilmaz, Aslam and Robertson (SIGIR 2008), each bootstrap resample against
the same statistics recomputed in the test, paired conclusions against stats.compare."""
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

import evalframe as ef


def _case(seed: int, n_sys: int = 6, n_q: int = 40, flip: float = 0.25):
    """Runs of ``n_sys`` systems of different quality, human labels, and model labels
    that flip a share of them (and label some unjudged documents)."""
    rng = np.random.default_rng(seed)
    qrels = pd.DataFrame([(f"q{q}", f"d{d}", int(rng.random() < 0.3)) for q in range(n_q) for d in range(30)],
                         columns=["query_id", "doc_id", "relevance"])
    rows = []
    for s in range(n_sys):
        for q in range(n_q):
            rel = qrels[(qrels["query_id"] == f"q{q}")]
            score = rng.random(30) + (0.15 * s) * rel["relevance"].to_numpy()
            rows += [(f"s{s}", f"q{q}", d, x) for d, x in zip(rel["doc_id"], score)]
    runs = pd.DataFrame(rows, columns=["system", "query_id", "doc_id", "score"])
    model = qrels.assign(relevance=np.where(rng.random(len(qrels)) < flip, 1 - qrels["relevance"], qrels["relevance"]))
    return runs, qrels, model


def _tau_ap_loop(reference: list, estimated: list) -> float:
    """Yilmaz et al. (2008): going down the estimated ranking, the share of the systems
    above position i that the reference also ranks above it, averaged, scaled to [-1, 1]."""
    n = len(estimated)
    total = 0.0
    for i in range(1, n):
        above = estimated[:i]
        total += sum(reference.index(x) < reference.index(estimated[i]) for x in above) / i
    return 2 * total / (n - 1) - 1


def _ranking(means: pd.Series) -> list:
    return list(means.rename_axis("system").reset_index(name="m").sort_values(
        ["m", "system"], ascending=[False, True], kind="stable")["system"])


def _stats(mh: pd.Series, mm: pd.Series, top_k: int) -> dict:
    mh, mm = mh.round(12), mm.round(12)  # equal means are tied, whatever the order of the sums
    rh, rm = _ranking(mh), _ranking(mm)
    return {"kendall_tau": sps.kendalltau(mh.to_numpy(), mm[mh.index].to_numpy()).statistic,
            "tau_ap": _tau_ap_loop(rh, rm), "top_k_overlap": len(set(rh[:top_k]) & set(rm[:top_k])) / top_k,
            "same_best": float(rh[0] == rm[0])}


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_ranking_statistics_and_their_bootstrap(seed):
    runs, human, model = _case(seed)
    n_res = 300  # more than one chunk of draws
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = ef.judge_agreement(human, model, runs, ["P@10", "RR"], n_resamples=n_res, seed=seed, top_k=3)
        ph = ef.evaluate(runs, human, ["P@10", "RR"])
        pm = ef.evaluate(runs, model, ["P@10", "RR"])
    for measure in ["P@10", "RR"]:
        vh = ph[ph["measure"] == measure].pivot(index="query_id", columns="system", values="value")
        vm = pm[pm["measure"] == measure].pivot(index="query_id", columns="system", values="value").loc[vh.index]
        want = _stats(vh.mean(), vm.mean(), 3)
        r = got.ranking[got.ranking["measure"] == measure].set_index("statistic")
        for stat, v in want.items():
            assert r.loc[stat, "value"] == pytest.approx(v, abs=1e-12), stat
        # every resample: the same questions for both golden sets, the statistics recomputed here
        idx = np.random.default_rng(seed).integers(0, len(vh), size=(n_res, len(vh)))
        boot = {k: [] for k in want}
        for row in idx:
            for k, v in _stats(vh.iloc[row].mean(), vm.iloc[row].mean(), 3).items():
                boot[k].append(v)
        for stat in want:
            lo, hi = np.nanquantile(boot[stat], [0.025, 0.975])
            assert r.loc[stat, "ci_low"] == pytest.approx(lo, abs=1e-12), stat
            assert r.loc[stat, "ci_high"] == pytest.approx(hi, abs=1e-12), stat
        assert r.loc["kendall_tau", "n_systems"] == 6 and r.loc["kendall_tau", "n_questions"] == 40


def test_tied_means_are_kendall_tau_b():
    runs, human, _ = _case(3, n_sys=4)
    tied = pd.concat([runs, runs[runs["system"] == "s3"].assign(system="s3_copy")], ignore_index=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = ef.judge_agreement(human, human, tied, ["P@5"], n_resamples=20).ranking.set_index("statistic")
        means = ef.aggregate(ef.evaluate(tied, human, ["P@5"])).set_index("system")["mean"]
    assert got.loc["kendall_tau", "value"] == pytest.approx(sps.kendalltau(means, means).statistic)
    assert got.loc["tau_ap", "value"] == 1.0 and got.loc["pair_agreement", "value"] == 1.0


def test_paired_conclusions_are_compares():
    runs, human, model = _case(4, flip=0.4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = ef.judge_agreement(human, model, runs, ["P@10"], n_resamples=10, alpha=0.05).pairs
        ch = ef.stats.compare(ef.evaluate(runs, human, ["P@10"]))
        cm = ef.stats.compare(ef.evaluate(runs, model, ["P@10"]))
    assert len(got) == 15
    np.testing.assert_allclose(got["p_human"], ch["p_adjusted"])
    np.testing.assert_allclose(got["diff_model"], cm["diff"])
    def word(d, p):
        return "better" if p < 0.05 and d > 0 else "worse" if p < 0.05 else "no difference"
    want = [word(d, p) == word(e, q) for d, p, e, q in zip(ch["diff"], ch["p_adjusted"], cm["diff"], cm["p_adjusted"])]
    assert got["agree"].tolist() == want
    assert not all(want) and any(want)  # the case has both


def test_bad_arguments():
    runs, human, model = _case(5, n_sys=2, n_q=5)
    with pytest.raises(ValueError, match="top_k must be an int >= 1, got 0"):
        ef.judge_agreement(human, model, runs, ["P@5"], top_k=0)
    with pytest.raises(ef.EvalframeInputError, match="fewer than two"):
        ef.judge_agreement(human, model, runs[runs["system"] == "s0"], ["P@5"])


def test_missing_drop_ranks_by_the_means_over_answered_questions(monkeypatch):
    # with missing='drop' a system that answers half the questions is ranked by its mean over
    # those (evaluate's mean), not with the others scored 0
    import warnings
    from evalframe import model_labels as ml
    rng = np.random.default_rng(1)
    qh = pd.DataFrame([(f"q{i}", f"d{j}", int(rng.random() < .4)) for i in range(20) for j in range(5)],
                      columns=["query_id", "doc_id", "relevance"])
    allq = [f"q{i}" for i in range(20)]

    def run(s, qs, good):
        return pd.DataFrame([(s, q, d, float(r * good + rng.random())) for q, d, r in qh.itertuples(index=False)
                             if q in qs], columns=["system", "query_id", "doc_id", "score"])
    runs = pd.concat([run("A", allq, 0.3), run("B", allq, 0.0), run("C", allq[10:], 5.0)])
    seen = []
    real = ml._statistics
    monkeypatch.setattr(ml, "_statistics", lambda mh, mm, k: (seen.append(mh.copy()), real(mh, mm, k))[1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        means = ef.evaluate(runs, qh, ["P@3"], missing="drop").groupby("system")["value"].mean()
        ef.judge_agreement(qh, qh, runs, ["P@3"], n_resamples=20, missing="drop")
    assert np.allclose(seen[0][0], means.loc[["A", "B", "C"]].to_numpy())
    # every resample's means are over the answered questions drawn: C's stays in [0, 1] and differs from 'zero'
    assert np.nanmax(seen[1][:, 2]) <= 1.0
