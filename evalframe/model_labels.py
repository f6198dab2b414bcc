"""Do model labels lead to the same conclusions as people's?  ``judge_agreement`` evaluates
the same runs under two golden sets and compares what a reader would conclude: the
systems' ranking (Kendall's tau-b, tau_ap, the top systems) and each paired comparison
(better / no difference / worse), with bootstrap intervals over questions.

Label agreement itself (kappa, alpha) is :func:`evalframe.agreement`; the means and
differences corrected with a few human labels are :func:`evalframe.stats.summarize_ppi`
and :func:`evalframe.stats.compare_ppi`.
"""
from __future__ import annotations

__all__ = ["judge_agreement", "JudgeAgreement"]

from dataclasses import dataclass

import numpy as np
import pandas as pd

from . import stats
from ._validation import CONFIDENCE, POSITIVE_INT, SEED, validate
from .errors import EvalframeInputError, InputProblem
from .evaluation import evaluate


@dataclass(frozen=True)
class JudgeAgreement:
    """What :func:`judge_agreement` found.

    Attributes
    ----------
    ranking : DataFrame
        ``measure, statistic, value, ci_low, ci_high, n_systems, n_questions``: rows
        ``kendall_tau`` (tau-b between the systems' means under human and under model
        labels), ``tau_ap`` (Yilmaz et al. 2008, the human ranking the reference),
        ``top_k_overlap`` (the share of the human top ``top_k`` systems in the model's
        top ``top_k``), ``same_best`` (1 when both put the same system first) and
        ``pair_agreement`` (the share of system pairs whose paired conclusion is the same;
        no interval).  Intervals: percentile bootstrap over the questions.
    pairs : DataFrame
        ``measure, system_a, system_b, diff_human, diff_model, p_human, p_model,
        conclusion_human, conclusion_model, agree``: each pair's difference
        (``mean_b - mean_a``) and adjusted p-value under each golden set
        (:func:`evalframe.stats.compare`), its conclusion (``"better"``: b above a,
        ``"worse"``, ``"no difference"`` at ``alpha``) and whether both agree.

    Examples
    --------
    >>> import pandas as pd
    >>> from evalframe.model_labels import JudgeAgreement
    >>> found = JudgeAgreement(ranking=pd.DataFrame({"statistic": ["kendall_tau"], "value": [0.8]}),
    ...                        pairs=pd.DataFrame({"agree": [True, False]}))
    >>> float(found.pairs["agree"].mean())
    0.5
    """

    ranking: pd.DataFrame
    pairs: pd.DataFrame


def judge_agreement(human_qrels, model_qrels, runs, measures, *, top_k: int = 3, test: str = "t",
                    alpha: float = 0.05, confidence: float = 0.95, n_resamples: int = 1000, seed: int = 0,
                    **conventions) -> JudgeAgreement:
    """Compare the conclusions drawn from human labels and from model labels.

    Parameters
    ----------
    human_qrels, model_qrels : golden sets (DataFrame, path, dict)
        The same questions labelled by people and by a model (only the questions both
        label are used).
    runs : run
        Two systems or more (see :func:`evalframe.evaluate`).
    measures : name or list of names
    top_k : int
        How many top systems ``top_k_overlap`` compares.
    test : str
        The paired test of :func:`evalframe.stats.compare` (Holm-adjusted per measure).
    alpha : float
        Significance level of a paired conclusion.
    confidence : float
        Level of the bootstrap intervals.
    n_resamples, seed : int
        Bootstrap resamples of the questions and their seed.
    **conventions
        ``rel, ties, missing, depth, duplicates, conflicts`` as in :func:`evalframe.evaluate`.

    Returns
    -------
    JudgeAgreement

    Notes
    -----
    tau_ap = 2 / (N - 1) * sum_{i=2..N} C(i) / (i - 1) - 1, where, going down the model's
    ranking, C(i) counts the systems above position i that people also rank above it
    (as :func:`evalframe.stats.rank_correlation`).  Each bootstrap resample draws the
    questions with replacement (the same draw for both golden sets) and recomputes the
    systems' means, hence the statistics.

    Examples
    --------
    >>> import numpy as np, evalframe as ef
    >>> cran = ef.datasets.load_cranfield()
    >>> noisy = cran.qrels.assign(relevance=np.where(np.arange(len(cran.qrels)) % 7 == 0, 0,
    ...                                              cran.qrels["relevance"]))
    >>> import warnings
    >>> with warnings.catch_warnings():       # the noisy labels leave questions without a relevant one
    ...     warnings.simplefilter("ignore")
    ...     a = ef.judge_agreement(cran.qrels, noisy, cran.runs, ["P@10"], n_resamples=200)
    >>> a.ranking["statistic"].tolist()
    ['kendall_tau', 'tau_ap', 'top_k_overlap', 'same_best', 'pair_agreement']
    """
    validate("judge_agreement", top_k=(top_k, POSITIVE_INT), n_resamples=(n_resamples, POSITIVE_INT),
             seed=(seed, SEED), confidence=(confidence, CONFIDENCE), alpha=(alpha, CONFIDENCE))
    human = evaluate(runs, human_qrels, measures, **conventions)
    model = evaluate(runs, model_qrels, measures, **conventions)
    for t in (human, model):
        if "system" not in t.columns or t["system"].nunique() < 2:
            raise EvalframeInputError("runs", [InputProblem(
                "judge_agreement compares systems: the run holds fewer than two",
                "pass the runs of two systems or more, with a system column")])
    shared = np.intersect1d(human["query_id"].unique(), model["query_id"].unique())
    human, model = human[human["query_id"].isin(shared)], model[model["query_id"].isin(shared)]
    ranking, pairs = [], []
    for measure in pd.unique(human["measure"]):
        vh = human[human["measure"] == measure].pivot(index="query_id", columns="system", values="value")
        vm = model[model["measure"] == measure].pivot(index="query_id", columns="system", values="value")
        systems = sorted(set(vh.columns) & set(vm.columns))  # name order: ties broken by name
        questions = vh.index.intersection(vm.index)
        left = sorted(set(vh.columns) ^ set(vm.columns))
        if left:
            import warnings
            warnings.warn(f"judge_agreement: {measure}: systems {left[:5]} have values under one golden set only "
                          "(missing='drop' and no question answered under the other): left out of the ranking "
                          "statistics", UserWarning, stacklevel=2)
        # a question a system did not answer (missing='drop') is NaN: means over its answered questions
        vh = vh.loc[questions, systems].to_numpy(dtype=np.float64)
        vm = vm.loc[questions, systems].to_numpy(dtype=np.float64)
        with np.errstate(invalid="ignore"):
            point = _statistics(_nan_means(vh)[None, :], _nan_means(vm)[None, :], top_k)
        boot = _statistics(*_bootstrap_means([vh, vm], n_resamples, seed), top_k)
        lo_q, hi_q = (1 - confidence) / 2, (1 + confidence) / 2
        for stat in point:
            ranking.append({"measure": measure, "statistic": stat, "value": float(point[stat][0]),
                            "ci_low": float(np.nanquantile(boot[stat], lo_q)),
                            "ci_high": float(np.nanquantile(boot[stat], hi_q)),
                            "n_systems": len(systems), "n_questions": len(questions)})
        p = _conclusions(human[human["measure"] == measure], model[model["measure"] == measure], test, alpha)
        pairs.append(p)
        ranking.append({"measure": measure, "statistic": "pair_agreement", "value": float(p["agree"].mean()),
                        "ci_low": np.nan, "ci_high": np.nan, "n_systems": len(systems),
                        "n_questions": len(questions)})
    return JudgeAgreement(pd.DataFrame(ranking), pd.concat(pairs, ignore_index=True))


#: Resamples drawn and multiplied at once (a CHUNK x questions count matrix).
CHUNK = 256


def _bootstrap_means(values: list[np.ndarray], n_resamples: int, seed: int) -> list[np.ndarray]:
    """The column means of each (questions x systems) array of ``values`` under the same
    ``n_resamples`` resamples of the questions: the draws ``default_rng(seed).integers(0,
    Q, (n, Q))`` taken CHUNK rows at a time, each chunk a count matrix times the values."""
    rng = np.random.default_rng(seed)
    Q = values[0].shape[0]
    out = [np.empty((n_resamples, v.shape[1])) for v in values]
    answered = [~np.isnan(v) for v in values]
    filled = [np.nan_to_num(v, nan=0.0) for v in values]
    for lo in range(0, n_resamples, CHUNK):
        b = min(CHUNK, n_resamples - lo)
        idx = rng.integers(0, Q, size=(b, Q))
        counts = np.bincount((np.arange(b)[:, None] * Q + idx).ravel(), minlength=b * Q).reshape(b, Q)
        for o, v, w in zip(out, filled, answered):
            with np.errstate(invalid="ignore", divide="ignore"):
                o[lo:lo + b] = counts @ v / (counts @ w)  # NaN: no answered question drawn
    return out


def _nan_means(v: np.ndarray) -> np.ndarray:
    """Column means over the answered (non-NaN) questions; NaN for a column with none."""
    n = (~np.isnan(v)).sum(0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.nan_to_num(v, nan=0.0).sum(0) / n


def _statistics(mh: np.ndarray, mm: np.ndarray, top_k: int) -> dict[str, np.ndarray]:
    """Per row (a resample) of the systems' means under human (``mh``) and model (``mm``)
    labels, systems in name order: tau-b, tau_ap, top-k overlap, same best system.  Means
    equal to 12 decimals are tied (sums in another order differ in the last bits)."""
    mh, mm = np.round(mh, 12), np.round(mm, 12)
    S = mh.shape[1]
    dh = np.sign(mh[:, :, None] - mh[:, None, :])
    dm = np.sign(mm[:, :, None] - mm[:, None, :])
    upper = np.triu(np.ones((S, S), dtype=bool), 1)
    num = (dh * dm)[:, upper].sum(1)
    with np.errstate(invalid="ignore", divide="ignore"):
        tau = num / np.sqrt((dh ** 2)[:, upper].sum(1) * (dm ** 2)[:, upper].sum(1))
    # positions, best first, equal means by name (the columns' order): a stable sort
    pos_h = np.argsort(np.argsort(-mh, axis=1, kind="stable"), axis=1)
    pos_m = np.argsort(np.argsort(-mm, axis=1, kind="stable"), axis=1)
    above_m = pos_m[:, None, :] < pos_m[:, :, None]  # [b, i, j]: the model ranks j above i
    above_h = pos_h[:, None, :] < pos_h[:, :, None]
    c = (above_m & above_h).sum(2)  # per system i: systems above it in both
    at = np.maximum(pos_m, 1)
    tau_ap = 2.0 / (S - 1) * np.where(pos_m > 0, c / at, 0.0).sum(1) - 1.0
    k = min(top_k, S)
    top = (pos_h < k) & (pos_m < k)
    return {"kendall_tau": tau, "tau_ap": tau_ap, "top_k_overlap": top.sum(1) / k,
            "same_best": ((pos_h == 0) & (pos_m == 0)).any(1).astype(np.float64)}


def _conclusions(human: pd.DataFrame, model: pd.DataFrame, test: str, alpha: float) -> pd.DataFrame:
    """Each pair's paired conclusion under both golden sets (:func:`stats.compare`)."""
    ch = stats.compare(human, test=test)
    cm = stats.compare(model, test=test)
    keys = ["measure", "system_a", "system_b"]
    both = ch[keys + ["diff", "p_adjusted"]].merge(cm[keys + ["diff", "p_adjusted"]], on=keys,
                                                   suffixes=("_human", "_model"))
    out = both.rename(columns={"p_adjusted_human": "p_human", "p_adjusted_model": "p_model"})
    for who in ("human", "model"):
        d, p = out[f"diff_{who}"].to_numpy(), out[f"p_{who}"].to_numpy()
        out[f"conclusion_{who}"] = np.where(p < alpha, np.where(d > 0, "better", "worse"), "no difference")
    out["agree"] = out["conclusion_human"] == out["conclusion_model"]
    return out[keys + ["diff_human", "diff_model", "p_human", "p_model", "conclusion_human", "conclusion_model",
                       "agree"]]
