"""Anytime-valid statistics: betting confidence sequences, e-values, e-BH.

A fixed-n interval is valid at the one number of questions chosen in advance; looked at
again after every new batch of labelled questions, it excludes the truth far more often
than its level says (see ``tests/stats/test_sequential.py``: 2,000 streams). A
*confidence sequence* is valid at every n at once: the chance that it *ever* excludes
the true mean, however often it is looked at and whenever one stops, is at most
``1 - confidence``.

The one used here is Waudby-Smith and Ramdas' hedged-capital betting confidence
sequence (JRSS-B 2024, section 4) for values in a known range, scaled to [0, 1], with
their predictable plug-in bets, as ``confseq.betting.hedged_cs`` computes it (same grid,
truncation 1/2, prior mean 1/2 and variance 1/4 with one pseudo-observation):

- for a candidate mean m and x_i in [0, 1] seen in order,
  ``K+_t(m) = prod_{i <= t} (1 + l+_i(m) (x_i - m))`` and
  ``K-_t(m) = prod_{i <= t} (1 - l-_i(m) (x_i - m))``, with the bets
  ``l_i = sqrt(2 log(1 / a) / (v_{i-1} i log(1 + i)))`` (``a = alpha / 2`` for a
  two-sided sequence, ``alpha`` for a one-sided bound) truncated at ``1/2 / m``
  (``l+``) and ``1/2 / (1 - m)`` (``l-``); ``v_i = (1/4 + sum_{j <= i} (x_j - mu_j)^2) / (i + 1)``
  and ``mu_j = (1/2 + sum_{k <= j} x_k) / (j + 1)`` use only the values seen before;
- the hedged capital ``K_t(m) = max(K+_t(m), K-_t(m)) / 2`` is a nonnegative martingale
  when m is the true mean, so by Ville's inequality ``P(exists t: K_t(m) >= 1/alpha) <= alpha``;
- the confidence sequence at t is ``{m : K_t(m) <= 1/alpha}``. Each factor of ``K+`` falls
  and each of ``K-`` rises with m, so the set is an interval ``[L_t, U_t]``: found on a
  grid of m (``grid`` points, widened by one step, as ``confseq`` does) and intersected
  over time (the running intersection is valid too, and never wider).

The e-value of a null mean m0 after t questions is ``K_t(m0)`` (one-sided: ``K+_t(m0)``
alone, bounds ``L_t`` from ``K+ <= 1/alpha``); the anytime p-value is
``min(1, 1 / max_{s <= t} K_s(m0))``: it is below alpha exactly when the sequence has
excluded m0 at some n. e-BH (Wang and Ramdas, JRSS-B 2022) controls the false discovery
rate over many comparisons under any dependence.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

from evalframe.errors import EvalframeInputError, InputProblem

from .pairing import paired_data, systems_and_pairs, warn_dropped
from .._validation import BOOLEAN, Interval, Satisfies, check, error
from .validation import as_list, check_choice, check_confidence, check_seed, clean_table

Order = Literal["table", "random"]
SeqAlternative = Literal["two-sided", "greater", "less"]

#: the bets' truncation (Waudby-Smith and Ramdas' c; confseq's ``trunc_scale``)
TRUNCATION = 0.5
#: streams processed together: (streams x grid x n) floats stay near this many
CHUNK_FLOATS = 4_000_000


@dataclass(frozen=True)
class SequentialOptions:
    """The validated options of one anytime-valid call."""

    confidence: float
    order: str
    seed: int
    grid: int
    alternative: str = "two-sided"

    @property
    def alpha(self) -> float:
        return 1.0 - self.confidence


#: a finite number
_FINITE = Satisfies(Interval(float).accepts, "a finite number")
#: a measure's range
_BOUNDS = Satisfies(lambda b: isinstance(b, (tuple, list)) and len(b) == 2 and all(_FINITE.accepts(v) for v in b)
                    and b[0] < b[1], "a (low, high) pair of finite numbers with low < high, "
                    "or a dict measure -> (low, high)")


def _options(func: str, confidence, order, seed, grid, alternative="two-sided") -> SequentialOptions:
    check_confidence(confidence, func=func)
    check_choice(func, "order", order, ("table", "random"))
    check_seed(seed, func=func)
    check_choice(func, "alternative", alternative, ("two-sided", "greater", "less"))
    check(func, "grid", grid, Interval(int, 10, 100_000))
    return SequentialOptions(float(confidence), order, int(seed), int(grid), alternative)


# ------------------------------------------------------------------ the maths
def _bets(x: np.ndarray, alpha: float) -> np.ndarray:
    """Predictable plug-in bets (streams x n) for values x in [0, 1] (streams x n)."""
    n = x.shape[1]
    t = np.arange(1, n + 1, dtype=np.float64)
    mu = (0.5 + np.cumsum(x, axis=1)) / (t + 1)
    var = (0.25 + np.cumsum((x - mu) ** 2, axis=1)) / (t + 1)
    var_prev = np.concatenate([np.full((x.shape[0], 1), 0.25), var[:, :-1]], axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        lam = np.sqrt(2.0 * math.log(1.0 / alpha) / (t * np.log1p(t) * var_prev))
    return np.where(np.isnan(lam), 0.0, lam)


def hedged_capital(x: np.ndarray, m: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """``log K+_t(m)`` and ``log K-_t(m)`` (streams x n) for one candidate mean per stream.

    Parameters
    ----------
    x : (streams, n) float array in [0, 1]
    m : (streams,) float array in [0, 1]
    alpha : float, the level the bets are tuned to (``alpha / 2`` for a two-sided sequence)
    """
    lam = _bets(x, alpha)
    m = np.asarray(m, dtype=np.float64)[:, None]
    with np.errstate(divide="ignore"):
        lp = np.minimum(lam, TRUNCATION / m)
        lm = np.minimum(lam, TRUNCATION / (1.0 - m))
    return np.cumsum(np.log1p(lp * (x - m)), axis=1), np.cumsum(np.log1p(-lm * (x - m)), axis=1)


def hedged_bounds(x: np.ndarray, alpha: float, *, grid: int = 1000,
                  alternative: str = "two-sided") -> tuple[np.ndarray, np.ndarray]:
    """The running-intersection confidence sequence ``(L, U)`` (streams x n) of the mean of
    each row of ``x`` (values in [0, 1]), at level ``1 - alpha`` at every n at once.

    ``alternative="greater"`` gives the one-sided lower sequence (``U = 1``), ``"less"``
    the upper one (``L = 0``). Chunked over the streams: memory stays bounded.
    """
    x = np.asarray(x, dtype=np.float64)
    s, n = x.shape
    ms = np.arange(grid + 1, dtype=np.float64) / grid
    lam_all = _bets(x, alpha / 2 if alternative == "two-sided" else alpha) if s else np.zeros((0, n))
    # one-sided: the whole alpha on one side; two-sided: the hedge halves each capital
    thr = math.log((1.0 if alternative != "two-sided" else 2.0) / alpha)
    low = np.zeros((s, n))
    high = np.ones((s, n))
    step = max(1, CHUNK_FLOATS // max(1, (grid + 1) * n))
    with np.errstate(divide="ignore"):
        tp = np.minimum(TRUNCATION / ms, np.inf)
        tm = np.minimum(TRUNCATION / (1.0 - ms), np.inf)
    for a in range(0, s, step):
        xs, lam = x[a:a + step], lam_all[a:a + step]
        dev = xs[:, None, :] - ms[None, :, None]                  # (chunk, grid, n)
        excl_low = excl_high = None
        if alternative != "less":
            kp = np.cumsum(np.log1p(np.minimum(lam[:, None, :], tp[None, :, None]) * dev), axis=2)
            excl_low = (kp > thr).sum(axis=1)                    # leading grid points excluded
        if alternative != "greater":
            km = np.cumsum(np.log1p(-np.minimum(lam[:, None, :], tm[None, :, None]) * dev), axis=2)
            excl_high = (km > thr).sum(axis=1)                   # trailing grid points excluded
        if excl_low is not None:
            low[a:a + step] = np.maximum(0.0, (excl_low - 1) / grid)
        if excl_high is not None:
            high[a:a + step] = np.minimum(1.0, (grid - excl_high + 1) / grid)
    empty = low > high  # no candidate left (cannot happen for a true sequence; kept whole)
    low[empty], high[empty] = 0.0, 1.0
    return np.maximum.accumulate(low, axis=1), np.minimum.accumulate(high, axis=1)


def e_bh(e_values: Sequence[float] | np.ndarray, alpha: float = 0.05) -> np.ndarray:
    """e-BH: which hypotheses to reject from their e-values, false discovery rate <= alpha.

    Parameters
    ----------
    e_values : array of float >= 0
    alpha : float in (0, 1)

    Returns
    -------
    ndarray of bool
        True for the rejected hypotheses: the k* largest e-values, with
        ``k* = max{k : e_(k) >= K / (alpha k)}`` (``e_(k)`` the k-th largest of K).

    Notes
    -----
    Wang and Ramdas (JRSS-B 2022): valid under any dependence between the e-values.

    Examples
    --------
    >>> e_bh([100.0, 50.0, 1.0, 0.5], alpha=0.05).tolist()
    [True, True, False, False]
    """
    check_confidence(alpha, "alpha", func="e_bh")
    e = np.asarray(e_values, dtype=np.float64)
    if e.ndim != 1 or np.isnan(e).any() or (e < 0).any():
        raise error("e_bh", "e_values", "a 1-d array of numbers >= 0", e_values)
    k = len(e)
    order = np.argsort(-e, kind="stable")
    ranks = np.arange(1, k + 1)
    ok = np.flatnonzero(e[order] >= k / (alpha * ranks))
    out = np.zeros(k, dtype=bool)
    if ok.size:
        out[order[:ok[-1] + 1]] = True
    return out


# ------------------------------------------------------------------ ranges
def measure_bounds(measures: Sequence[str], bounds, *, func: str) -> dict[str, tuple[float, float]]:
    """The value range of each measure: ``bounds`` (a (low, high) pair for all, or a dict
    measure -> pair), else the range the measure's family declares
    (``Family.value_range``). One error lists every measure without a known range."""
    pair = None
    given: Mapping = {}
    if bounds is not None:
        if isinstance(bounds, Mapping):
            given = bounds
        else:
            pair = bounds
    out, problems = {}, []
    for name in measures:
        b = pair if pair is not None else given.get(name)
        if b is None:
            b = _declared_range(name)
        if b is None:
            problems.append(InputProblem(
                f"measure {name!r} has no known range (counts, DCG and utility are unbounded)",
                (f"pass bounds=(low, high) (or bounds={{{name!r}: (low, high)}}) if its values "
                 "cannot leave a range you know; anytime-valid sequences need one") if func != "gate" else
                "gate with --sequential takes measures of a known range (P, R, RR, nDCG, AP, ...): "
                "gate this one without --sequential"))
            continue
        check(func, "bounds", b, _BOUNDS)
        out[name] = (float(b[0]), float(b[1]))
    if problems:
        raise EvalframeInputError("per_question", problems)
    return out


def _declared_range(name: str) -> tuple[float, float] | None:
    from evalframe.measures import REGISTRY, parse_measure
    try:
        fam = REGISTRY.get(parse_measure(name).family)
    except (ValueError, KeyError):
        return None
    return None if fam is None else fam.value_range


def _check_in_range(df: pd.DataFrame, ranges: dict[str, tuple[float, float]]) -> None:
    lo = df["measure"].map({k: v[0] for k, v in ranges.items()}).to_numpy(dtype=np.float64)
    hi = df["measure"].map({k: v[1] for k, v in ranges.items()}).to_numpy(dtype=np.float64)
    v = df["value"].to_numpy()
    bad = (v < lo) | (v > hi)
    if bad.any():
        ex = df.loc[bad].head(3)
        raise EvalframeInputError("per_question", [InputProblem(
            f"{int(bad.sum())} values lie outside their measure's range "
            f"({', '.join(f'{m}: {ranges[m]}' for m in pd.unique(ex['measure']))})",
            "pass bounds=(low, high) covering every value the measure can take",
            ex.to_string())])


# ------------------------------------------------------------------ order of the questions
def _order(qids: np.ndarray, first_seen: pd.Index, opts: SequentialOptions) -> np.ndarray:
    """Positions of ``qids`` in the order questions are taken: the table's (first
    appearance) or a seeded random permutation of the question ids (the same question
    order for every system, measure and pair, whatever the table's row order)."""
    if opts.order == "random":
        ids = first_seen.sort_values()
        perm = np.random.default_rng(opts.seed).permutation(len(ids))
        pos = perm[ids.get_indexer(qids)]
    else:
        pos = first_seen.get_indexer(qids)
    return np.argsort(pos, kind="stable")


def _sequences(series: list[np.ndarray], opts: SequentialOptions, steps: bool
               ) -> list[tuple[np.ndarray, np.ndarray]]:
    """Bounds (on [0, 1]) of each series, every step or the last one; series of equal
    length share the work."""
    out: list = [None] * len(series)
    lengths = np.array([len(s) for s in series])
    for n in np.unique(lengths):
        idx = np.flatnonzero(lengths == n)
        if n == 0:
            for i in idx:
                out[i] = (np.array([0.0]), np.array([1.0]))
            continue
        lo, hi = hedged_bounds(np.stack([series[i] for i in idx]), opts.alpha, grid=opts.grid,
                               alternative=opts.alternative)
        for j, i in enumerate(idx):
            out[i] = (lo[j], hi[j]) if steps else (lo[j, -1:], hi[j, -1:])
    return out


# ------------------------------------------------------------------ public functions
def confidence_sequence(per_question: pd.DataFrame, *, confidence: float = 0.95,
                        bounds: tuple[float, float] | Mapping[str, tuple[float, float]] | None = None,
                        by: str | Sequence[str] | None = None, order: Order = "table",
                        seed: int = 0, steps: bool = False, grid: int = 1000) -> pd.DataFrame:
    """Anytime-valid confidence sequence of each system's mean (per measure).

    Valid at every number of questions at once: look after each new question, stop when
    you like; the chance the sequence ever excludes the true mean is at most
    ``1 - confidence`` (a fixed-n interval looked at repeatedly misses far more often).

    Parameters
    ----------
    per_question : DataFrame
        Tidy per-question table ``system, query_id, measure, value``.
    confidence : float
        Level of the sequence, in (0, 1).
    bounds : (low, high) or dict measure -> (low, high), optional
        The range every value of a measure lies in. Default: the range its family
        declares (``[0, 1]`` for P, R, nDCG, AP, RR ...); a measure without one (counts,
        DCG) is refused unless given here.
    by : str or list of str, optional
        Segment columns: a sequence per segment.
    order : {"table", "random"}
        The order questions are taken in: their first appearance in the table (the order
        they were labelled, if the table is kept that way) or a seeded random order.
    seed : int
        Seed of ``order="random"``.
    steps : bool
        One row per number of questions seen (1..n) instead of the last one only.
    grid : int
        Grid points over the range (the bounds are exact to one grid step, outwards).

    Returns
    -------
    DataFrame
        One row per (system, by..., measure) (and per step with ``steps``):

        ================  ===========================================================
        system, *by*,     the series
        measure
        n                 int, questions seen
        mean              float, their mean
        ci_low, ci_high   float, the confidence sequence at n (running intersection)
        confidence        float
        method            str, ``"betting"``
        ================  ===========================================================

    Notes
    -----
    The hedged-capital betting sequence of Waudby-Smith and Ramdas (2024) on values
    rescaled to [0, 1]; the formulas are in the docstring of ``evalframe/stats/sequential.py``.

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"system": "a", "query_id": [f"q{i}" for i in range(200)],
    ...                   "measure": "Success@5", "value": [1.0, 0.0, 1.0, 1.0] * 50})
    >>> r = confidence_sequence(t)
    >>> int(r.n[0]), float(r["mean"][0]), bool(r.ci_low[0] < 0.75 < r.ci_high[0])
    (200, 0.75, True)
    """
    opts = _options("confidence_sequence", confidence, order, seed, grid)
    check("confidence_sequence", "steps", steps, BOOLEAN)
    by = as_list(by)
    df = clean_table(per_question, by=by, cluster=None)
    ranges = measure_bounds(list(pd.unique(df["measure"])), bounds, func="confidence_sequence")
    _check_in_range(df, ranges)
    first_seen = pd.Index(pd.unique(df["query_id"]))
    keys = ["system", *by, "measure"]
    groups = df.groupby(keys, sort=False).indices
    series, meta = [], []
    for key, rows in groups.items():
        rows = rows[_order(df["query_id"].to_numpy()[rows], first_seen, opts)]
        lo, hi = ranges[key[-1]]
        v = df["value"].to_numpy()[rows]
        series.append((v - lo) / (hi - lo))
        meta.append((key, v, lo, hi))
    bounds_ = _sequences(series, opts, steps)
    parts = []
    for (key, v, lo, hi), (l01, h01) in zip(meta, bounds_):
        n = np.arange(1, len(v) + 1) if steps else np.array([len(v)])
        mean = (np.cumsum(v) / np.maximum(1, np.arange(1, len(v) + 1)))[n - 1] if len(v) else np.array([np.nan])
        part = pd.DataFrame({k: [key[i]] * len(n) for i, k in enumerate(keys)})
        part["n"] = n
        part["mean"] = mean
        part["ci_low"] = lo + l01 * (hi - lo)
        part["ci_high"] = lo + h01 * (hi - lo)
        parts.append(part)
    out = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(
        columns=[*keys, "n", "mean", "ci_low", "ci_high"])
    out["confidence"] = opts.confidence
    out["method"] = "betting"
    return out


def sequential_compare(per_question: pd.DataFrame, *, baseline: str | None = None,
                       confidence: float = 0.95, null: float = 0.0,
                       alternative: SeqAlternative = "two-sided",
                       bounds: tuple[float, float] | Mapping[str, tuple[float, float]] | None = None,
                       by: str | Sequence[str] | None = None, order: Order = "table",
                       seed: int = 0, grid: int = 1000) -> pd.DataFrame:
    """Anytime-valid paired comparison: a confidence sequence of ``mean_b - mean_a``, its
    e-value and anytime p-value, and e-BH across the comparisons.

    Parameters
    ----------
    per_question : DataFrame
        Tidy per-question table ``system, query_id, measure, value`` with >= 2 systems.
    baseline : str, optional
        Compare this system (``system_a``) with every other; default every pair.
    confidence : float
        Level of the sequences; ``1 - confidence`` is also the e-BH level.
    null : float
        The difference under H0 (``d = value_b - value_a``): ``E[d] = null`` two-sided;
        ``alternative="greater"`` tests H0: ``E[d] <= null`` (a non-inferiority test with
        ``null = -margin``), ``"less"`` H0: ``E[d] >= null``.
    alternative : {"two-sided", "greater", "less"}
        Side of H1; one-sided sequences are one-sided bounds (``ci_high`` or ``ci_low``
        is the end of the range).
    bounds : (low, high) or dict measure -> (low, high), optional
        Range of each measure's values (default: the measure's declared range; refused
        when it has none): a difference lies in ``[low - high, high - low]``.
    by, order, seed, grid
        As :func:`confidence_sequence` (the pairs' shared questions, in one order).

    Returns
    -------
    DataFrame
        One row per (measure, by..., system_a, system_b):

        ==================  ========================================================
        measure, *by*       the family
        system_a, system_b  str
        n                   int, questions both answer (in order)
        n_dropped           int, questions only one answers
        mean_a, mean_b      float
        diff                float, mean_b - mean_a
        ci_low, ci_high     float, the confidence sequence of diff at n
        null                float
        e_value             float, the capital at ``null`` after n questions
        p_value             float, anytime p-value: ``min(1, 1 / max_t capital_t)``
        significant         bool, rejected by e-BH over all rows at ``1 - confidence``
        alternative         str
        confidence          float
        method              str, ``"betting"``
        ==================  ========================================================

    Notes
    -----
    With the measure's range ``[lo, hi]`` and ``w = hi - lo``, ``x = (d + w) / (2 w)``
    is in [0, 1] and the sequence of its mean is mapped back. Stopping when
    ``p_value < 1 - confidence`` (or whenever else) keeps the error rate: the p-value is
    valid at any stopping time.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> rng = np.random.default_rng(0)
    >>> a = rng.uniform(0, 0.6, 400); b = np.clip(a + 0.2, 0, 1)
    >>> t = pd.DataFrame({"system": ["a"] * 400 + ["b"] * 400,
    ...                   "query_id": [f"q{i}" for i in range(400)] * 2,
    ...                   "measure": "nDCG@10", "value": np.r_[a, b]})
    >>> r = sequential_compare(t)
    >>> bool(r.ci_low[0] > 0), bool(r.p_value[0] < 0.05), bool(r.significant[0])
    (True, True, True)
    """
    opts = _options("sequential_compare", confidence, order, seed, grid, alternative)
    check("sequential_compare", "null", null, _FINITE)
    by = as_list(by)
    known: dict[str, np.ndarray] = {}
    df = clean_table(per_question, by=by, cluster=None, codes=known)
    ranges = measure_bounds(list(pd.unique(df["measure"])), bounds, func="sequential_compare")
    _check_in_range(df, ranges)
    systems, pairs = systems_and_pairs(df, baseline)
    data = paired_data(df, systems, pairs, [*by, "measure"], None, known=known)
    warn_dropped(data, "sequential_compare")
    first_seen = pd.Index(pd.unique(df["query_id"]))
    series, ws, xs_a, xs_b = [], [], [], []
    for fam, rows, xa, xb in zip(data.fam, data.rows, data.xa, data.xb):
        o = _order(data.qids[rows], first_seen, opts)
        lo, hi = ranges[fam[-1]]
        w = hi - lo
        d = (xb - xa)[o]
        series.append((d + w) / (2 * w))
        ws.append(w)
        xs_a.append(xa)
        xs_b.append(xb)
    seq = _sequences(series, opts, steps=False)
    k = data.k
    e_value = np.full(k, np.nan)
    p_value = np.full(k, np.nan)
    for i, (x, w) in enumerate(zip(series, ws)):
        m0 = (null + w) / (2 * w)
        if len(x) == 0:
            continue
        if not 0.0 <= m0 <= 1.0:  # a null outside the range of a mean difference:
            # impossible (rejected outright) unless the one-sided H0 holds for every mean
            certain = (alternative == "greater" and m0 > 1.0) or (alternative == "less" and m0 < 0.0)
            e_value[i], p_value[i] = (1.0, 1.0) if certain else (math.inf, 0.0)
            continue
        log_kp, log_km = hedged_capital(x[None, :], np.array([m0]),
                                        opts.alpha / 2 if alternative == "two-sided" else opts.alpha)
        if alternative == "greater":
            log_k = log_kp[0]
        elif alternative == "less":
            log_k = log_km[0]
        else:
            log_k = np.maximum(log_kp[0], log_km[0]) - math.log(2.0)
        e_value[i] = math.exp(min(log_k[-1], 700.0))
        p_value[i] = min(1.0, math.exp(-max(0.0, float(log_k.max()))))
    out = pd.DataFrame({"measure": [f[-1] for f in data.fam]})
    for j, col in enumerate(by):
        out[col] = [f[j] for f in data.fam]
    out["system_a"] = [systems[i] for i in data.a]
    out["system_b"] = [systems[i] for i in data.b]
    out["n"] = data.n
    out["n_dropped"] = data.dropped
    out["mean_a"] = np.array([x.mean() if len(x) else np.nan for x in xs_a])
    out["mean_b"] = np.array([x.mean() if len(x) else np.nan for x in xs_b])
    out["diff"] = data.diff
    out["ci_low"] = [-w + 2 * w * s[0][-1] for s, w in zip(seq, ws)]
    out["ci_high"] = [-w + 2 * w * s[1][-1] for s, w in zip(seq, ws)]
    out["null"] = float(null)
    out["e_value"] = e_value
    out["p_value"] = p_value
    ok = ~np.isnan(e_value)
    sig = np.zeros(k, dtype=bool)
    if ok.any():
        sig[ok] = e_bh(e_value[ok], opts.alpha)
    out["significant"] = sig
    out["alternative"] = alternative
    out["confidence"] = opts.confidence
    out["method"] = "betting"
    return out
