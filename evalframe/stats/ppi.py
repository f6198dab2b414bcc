"""Prediction-powered inference (PPI++) on per-question tables: means and paired
differences measured with a model's labels on every question, corrected with people's
labels on a few of them (Angelopoulos et al., Science 2023; PPI++, Angelopoulos, Duchi
and Zrnic 2023; for IR measures, Oosterhuis et al., KDD 2024).

For one system and measure, ``Y`` are the values with human labels on the ``n``
questions people judged, ``Yhat`` the values with model labels on the same questions and
``Yhat_u`` the values with model labels on the ``N`` other questions.  The estimate

    theta = lambda * mean(Yhat_u) + mean(Y - lambda * Yhat)

is unbiased for the mean with human labels whatever the model's bias, and

    se^2 = lambda^2 var(Yhat_u) / N + var(Y - lambda * Yhat) / n

(population variances), with the normal interval ``theta +- z se``.  ``lambda = 1`` is
PPI; PPI++ estimates it, ``lambda = cov(Y, Yhat) / ((1 + n / N) var(Yhat, Yhat_u))``
clipped to [0, 1] (``ppi_py.ppi_mean_ci(Y, Yhat, Yhat_unlabeled, lam=None)``, with which
the numbers agree: ``tests/stats/test_ppi.py``).  Paired differences are the same estimate on
the per-question differences of two systems.
"""
from __future__ import annotations


import numpy as np
import pandas as pd
from scipy import stats as sps

from ..errors import EvalframeInputError, FewHumanLabelsWarning, InputProblem, UnpairedQuestionsWarning, warn
from .corrections import adjust_pvalues
from .._validation import Interval, Options, check
from .validation import Correction, check_choice, check_confidence, clean_table

#: Fewer human-labelled questions than this and the normal interval is not to be trusted.
MIN_HUMAN = 10


def _check_lam(lam, func: str) -> None:
    check(func, "lam", lam, Options((None,), "None (estimated, PPI++)"), Interval(float, 0, 1))


def _aligned(model: pd.DataFrame, human: pd.DataFrame, func: str) -> pd.DataFrame:
    """One row per (system, measure, question) of ``model``: ``yhat`` (model labels),
    ``y`` (human labels, NaN where people did not judge the question) and ``labelled``.
    Rows of ``human`` whose (system, question, measure) ``model`` lacks are dropped (warned)."""
    m = clean_table(model, by=[], cluster=None, table="model")
    h = clean_table(human, by=[], cluster=None, table="human")
    keys = ["system", "query_id", "measure"]
    for t in (m, h):
        for c in keys:
            t[c] = t[c].astype(str)
    at = pd.MultiIndex.from_frame(h[keys]).get_indexer(pd.MultiIndex.from_frame(m[keys]))
    found = np.zeros(len(h), dtype=bool)
    found[at[at >= 0]] = True
    if not found.all():
        miss = h.loc[~found, keys]
        warn(f"{func}: {int((~found).sum())} rows of the human table have no row in the model table and were "
             f"dropped (e.g. {miss.head(3).to_dict('records')}); the model table should hold every question",
             UnpairedQuestionsWarning)
    out = m[keys].copy()
    out["yhat"] = m["value"].to_numpy(dtype=np.float64)
    out["y"] = np.where(at >= 0, h["value"].to_numpy(dtype=np.float64)[np.maximum(at, 0)] if len(h) else np.nan,
                        np.nan)
    out["labelled"] = at >= 0
    return out


def _ppi(codes: np.ndarray, n_groups: int, y: np.ndarray, yhat: np.ndarray, labelled: np.ndarray, lam,
         ) -> dict[str, np.ndarray]:
    """PPI++ per group from group sums (one pass, no loop per group): the labelled and
    unlabelled counts, lambda, the estimate and its standard error (NaN where a group has
    no labelled or no unlabelled question)."""
    def s(w):
        return np.bincount(codes, weights=w, minlength=n_groups)
    L, U = labelled, ~labelled
    yl = np.where(L, y, 0.0)
    hl = np.where(L, yhat, 0.0)
    hu = np.where(U, yhat, 0.0)
    n = s(L.astype(np.float64))
    N = s(U.astype(np.float64))
    with np.errstate(invalid="ignore", divide="ignore"):
        my, mh, mu = s(yl) / n, s(hl) / n, s(hu) / N
        var_y = s(yl * yl) / n - my ** 2
        var_h = s(hl * hl) / n - mh ** 2
        var_u = s(hu * hu) / N - mu ** 2
        cov = s(yl * hl) / n - my * mh
        if lam is None:
            tot = n + N
            m_all = (s(hl) + s(hu)) / tot
            var_all = (s(hl * hl) + s(hu * hu) - tot * m_all ** 2) / (tot - 1)  # ddof = 1, as np.cov
            lam_g = cov / ((1 + n / N) * var_all)
            lam_g = np.clip(np.where(np.isfinite(lam_g), lam_g, 0.0), 0.0, 1.0)
        else:
            lam_g = np.full(n_groups, float(lam))
        theta = lam_g * mu + my - lam_g * mh
        rect = np.maximum(var_y + lam_g ** 2 * var_h - 2 * lam_g * cov, 0.0)
        se = np.sqrt(np.maximum(lam_g ** 2 * var_u, 0.0) / N + rect / n)
        if lam is not None and float(lam) == 0.0:  # the human labels alone: no unlabelled term at all
            theta, se = my, np.sqrt(rect / n)
    return {"n_human": n.astype(np.int64), "n_unlabelled": N.astype(np.int64), "lambda": lam_g,
            "mean": theta, "se": se}


def _warn_few(n_human: np.ndarray, func: str) -> None:
    few = n_human < MIN_HUMAN
    if few.any():
        warn(f"{func}: {int(few.sum())} groups have fewer than {MIN_HUMAN} human-labelled questions (as few as "
             f"{int(n_human.min())}): the normal interval of PPI is not valid that small; label more questions",
             FewHumanLabelsWarning)


def summarize_ppi(model: pd.DataFrame, human: pd.DataFrame, *, confidence: float = 0.95,
                  lam: float | None = None) -> pd.DataFrame:
    """Mean and interval per system and measure from model labels on every question,
    corrected with human labels on some (prediction-powered inference, PPI++).

    Parameters
    ----------
    model : DataFrame
        ``system, query_id, measure, value``: :func:`evalframe.evaluate` with the
        model's golden set, on every question.
    human : DataFrame
        The same with people's golden set, on the questions people judged (those are
        the questions present in it; the others are the unlabelled part).  A row
        ``model`` lacks is dropped (:class:`~evalframe.errors.UnpairedQuestionsWarning`).
    confidence : float
        Level of the normal interval.
    lam : float in [0, 1], optional
        The power-tuning parameter: None (default) estimates it per system and measure
        (PPI++); 1 is PPI; 0 the classical interval from the human labels alone.

    Returns
    -------
    DataFrame
        One row per (system, measure) of ``model``: ``system, measure, n`` (questions in
        ``model``), ``n_human`` (of them, judged by people), ``n_model`` (questions with
        model labels: ``n``), ``mean`` (the PPI estimate), ``se, ci_low, ci_high,
        lambda, method`` (``"ppi"``), ``confidence``.  NaN where a group has no human
        question or no unlabelled one.

    Warns
    -----
    FewHumanLabelsWarning
        When a group has fewer than 10 human-labelled questions (``MIN_HUMAN``).

    Notes
    -----
    See the docstring of ``evalframe.stats.ppi`` for the formulas (those of ``ppi_py.ppi_mean_ci``).

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from evalframe import stats
    >>> rng = np.random.default_rng(0)
    >>> truth = rng.random(200)
    >>> model = pd.DataFrame({"system": "bm25", "query_id": [str(i) for i in range(200)],
    ...                       "measure": "R@5", "value": np.clip(truth + 0.1, 0, 1)})   # biased up
    >>> human = model.iloc[:40].assign(value=truth[:40])
    >>> s = stats.summarize_ppi(model, human)
    >>> s[["n", "n_human", "method"]].values.tolist(), bool(abs(s["mean"][0] - truth.mean()) < 0.05)
    ([[200, 40, 'ppi']], True)
    """
    check_confidence(confidence, func="summarize_ppi")
    _check_lam(lam, "summarize_ppi")
    t = _aligned(model, human, "summarize_ppi")
    codes, first = _codes(t, ["system", "measure"])
    r = _ppi(codes, len(first), t["y"].to_numpy(), t["yhat"].to_numpy(), t["labelled"].to_numpy(), lam)
    _warn_few(r["n_human"], "summarize_ppi")
    z = sps.norm.ppf(0.5 + confidence / 2)
    out = t[["system", "measure"]].iloc[first].reset_index(drop=True)
    out["n"] = (r["n_human"] + r["n_unlabelled"]).astype(np.int64)
    out["n_human"] = r["n_human"]
    out["n_model"] = out["n"].to_numpy()
    out["mean"] = r["mean"]
    out["se"] = r["se"]
    out["ci_low"] = r["mean"] - z * r["se"]
    out["ci_high"] = r["mean"] + z * r["se"]
    out["lambda"] = r["lambda"]
    out["method"] = "ppi"
    out["confidence"] = float(confidence)
    return out


def _codes(t: pd.DataFrame, keys: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Each row's group of ``keys`` (in order of first appearance) and each group's first row."""
    codes = pd.MultiIndex.from_frame(t[keys]).factorize()[0] if len(t) else np.zeros(0, dtype=np.int64)
    _, first = np.unique(codes, return_index=True)
    order = np.argsort(first, kind="stable")
    remap = np.empty(len(first), dtype=np.int64)
    remap[order] = np.arange(len(first))
    return remap[codes] if len(codes) else codes, first[order]


def compare_ppi(model: pd.DataFrame, human: pd.DataFrame, *, baseline: str | None = None,
                confidence: float = 0.95, lam: float | None = None,
                correction: Correction | None = None) -> pd.DataFrame:
    """Paired differences of systems from model labels on every question, corrected
    with human labels on some (PPI++ on the per-question differences).

    Parameters
    ----------
    model, human : DataFrame
        As in :func:`summarize_ppi`, with two systems or more.
    baseline : str, optional
        Compare this system (``system_a``) with every other; without it, every pair.
    confidence : float
        Level of the normal interval.
    lam : float in [0, 1], optional
        As in :func:`summarize_ppi` (estimated per pair and measure by default).
    correction : {"holm", "bonferroni", "bh", "none"}, optional
        Adjustment of the p-values over the comparisons of one measure (default: Holm
        with several comparisons, none for one).

    Returns
    -------
    DataFrame
        One row per (measure, system_a, system_b): ``measure, system_a, system_b, n``
        (questions both answer in ``model``), ``n_human``, ``n_model``, ``mean_a,
        mean_b`` (each system's PPI mean on those questions), ``diff`` (the PPI estimate
        of ``mean_b - mean_a``), ``se, ci_low, ci_high, statistic`` (diff / se),
        ``p_value`` (two-sided, normal), ``p_adjusted, correction, lambda, method``
        (``"ppi"``), ``confidence``.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from evalframe import stats
    >>> rng = np.random.default_rng(1)
    >>> q = [str(i) for i in range(300)]
    >>> a, b = rng.random(300), rng.random(300) * 0.8 + 0.25
    >>> human = pd.DataFrame({"system": ["a"] * 300 + ["b"] * 300, "query_id": q * 2,
    ...                       "measure": "P@5", "value": np.r_[a, b]})
    >>> model = human.assign(value=np.clip(human["value"] + rng.normal(0.1, 0.1, 600), 0, 1))
    >>> c = stats.compare_ppi(model, human[human["query_id"].astype(int) < 60])
    >>> c[["system_a", "system_b", "n", "n_human"]].values.tolist(), bool(c["ci_low"][0] < b.mean() - a.mean() < c["ci_high"][0])
    ([['a', 'b', 300, 60]], True)
    """
    check_confidence(confidence, func="compare_ppi")
    _check_lam(lam, "compare_ppi")
    if correction is not None:
        check_choice("compare_ppi", "correction", correction, ["holm", "bonferroni", "bh", "none"])
    t = _aligned(model, human, "compare_ppi")
    systems = list(pd.unique(t["system"]))
    if baseline is not None and baseline not in systems:
        raise EvalframeInputError("model", [InputProblem(
            f"baseline {baseline!r} is not a system of the table (systems: {systems[:10]})",
            "pass one of the names in the system column")])
    if len(systems) < 2:
        raise EvalframeInputError("model", [InputProblem(
            f"compare_ppi needs two systems or more, got {systems}", "pass the per-question tables of several systems")])
    pairs = ([(baseline, s) for s in systems if s != baseline] if baseline is not None else
             [(systems[i], systems[j]) for i in range(len(systems)) for j in range(i + 1, len(systems))])
    wide = t.pivot_table(index=["measure", "query_id"], columns="system", values=["yhat", "y"], aggfunc="first",
                         dropna=False, sort=False)
    labelled = t.pivot_table(index=["measure", "query_id"], columns="system", values="labelled", aggfunc="first",
                             dropna=False, sort=False)
    measure = wide.index.get_level_values("measure").to_numpy(dtype=object)
    pieces = []
    for a, b in pairs:  # one vectorised pass per pair over every measure and question
        ha, hb = wide[("yhat", a)].to_numpy(dtype=np.float64), wide[("yhat", b)].to_numpy(dtype=np.float64)
        ya, yb = wide[("y", a)].to_numpy(dtype=np.float64), wide[("y", b)].to_numpy(dtype=np.float64)
        both = ~np.isnan(ha) & ~np.isnan(hb)
        lab = both & labelled[a].fillna(False).to_numpy(dtype=bool) & labelled[b].fillna(False).to_numpy(dtype=bool)
        codes, names = pd.factorize(measure[both])
        sel = dict(codes=codes, n_groups=len(names), labelled=lab[both])
        d = _ppi(y=(yb - ya)[both], yhat=(hb - ha)[both], lam=lam, **sel)
        ma = _ppi(y=ya[both], yhat=ha[both], lam=lam, **sel)
        mb = _ppi(y=yb[both], yhat=hb[both], lam=lam, **sel)
        pieces.append(pd.DataFrame({
            "measure": np.asarray(names, dtype=object), "system_a": a, "system_b": b,
            "n": d["n_human"] + d["n_unlabelled"], "n_human": d["n_human"],
            "n_model": d["n_human"] + d["n_unlabelled"], "mean_a": ma["mean"], "mean_b": mb["mean"],
            "diff": d["mean"], "se": d["se"], "lambda": d["lambda"]}))
    out = pd.concat(pieces, ignore_index=True)
    _warn_few(out["n_human"].to_numpy(), "compare_ppi")
    z = sps.norm.ppf(0.5 + confidence / 2)
    out.insert(out.columns.get_loc("lambda"), "ci_low", out["diff"] - z * out["se"])
    out.insert(out.columns.get_loc("lambda"), "ci_high", out["diff"] + z * out["se"])
    with np.errstate(invalid="ignore", divide="ignore"):
        stat = out["diff"].to_numpy() / out["se"].to_numpy()
    out.insert(out.columns.get_loc("lambda"), "statistic", stat)
    out.insert(out.columns.get_loc("lambda"), "p_value", 2 * sps.norm.sf(np.abs(stat)))
    order = pd.Index(list(dict.fromkeys(t["measure"]))).get_indexer(out["measure"])
    out = out.iloc[np.argsort(order, kind="stable")].reset_index(drop=True)
    adjusted = np.empty(len(out))
    used = np.empty(len(out), dtype=object)
    for _, idx in out.groupby("measure", sort=False).indices.items():  # one family per measure
        how = correction or ("holm" if len(idx) > 1 else "none")
        adjusted[idx] = adjust_pvalues(out["p_value"].to_numpy()[idx], how)
        used[idx] = how
    out.insert(out.columns.get_loc("lambda"), "p_adjusted", adjusted)
    out.insert(out.columns.get_loc("lambda"), "correction", used)
    out["method"] = "ppi"
    out["confidence"] = float(confidence)
    return out
