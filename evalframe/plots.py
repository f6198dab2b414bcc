"""Plots: thin matplotlib functions over tables already computed.

Each function takes a tidy table (from :func:`evalframe.report`, :mod:`evalframe.stats`
or :func:`evalframe.evaluate`), draws on ``ax`` (a new figure when ``None``) and returns
the ``Axes``. Nothing here computes a statistic; matplotlib is imported when a plot is
drawn, never at import. Colours are the Okabe-Ito colour-blind-safe palette, extended
to ten systems, and every system also gets its own marker, so plots stay readable in
grey and with ten systems.
"""
from __future__ import annotations

__all__ = ["PALETTE", "MARKERS", "MAX_BARS", "system_styles", "plot_sample_size", "plot_power", "plot_forest",
           "plot_segment_forest", "plot_curves", "plot_paired_differences", "plot_segments", "plot_asl_curve"]

from typing import Sequence

import numpy as np
import pandas as pd

#: Okabe & Ito (2008) colour-blind-safe palette (yellow left out: too pale on white),
#: extended with two greys / browns that stay apart from it for 9-10 systems.
PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000",
           "#882255", "#999999", "#8C6D31")
#: plot_paired_differences draws one bar per question up to this many questions
MAX_BARS = 2000
MARKERS = ("o", "s", "D", "^", "v", "P", "X", "h", "<", ">")


def _axes(ax, figsize=(7, 4.5)):
    if ax is None:
        import matplotlib.pyplot as plt
        _, ax = plt.subplots(figsize=figsize)
    return ax


def _need(df: pd.DataFrame, cols: Sequence[str], what: str) -> None:
    missing = [c for c in cols if c not in df.columns]
    if missing:
        raise ValueError(f"{what}: table lacks columns {missing} (found {list(df.columns)})")


def system_styles(systems: Sequence[str]) -> dict[str, dict]:
    """Colour and marker of each system, in order (the same in every plot).

    Examples
    --------
    >>> from evalframe.plots import system_styles
    >>> system_styles(["bm25", "dense"])
    {'bm25': {'color': '#0072B2', 'marker': 'o'}, 'dense': {'color': '#D55E00', 'marker': 's'}}
    """
    return {s: {"color": PALETTE[i % len(PALETTE)], "marker": MARKERS[i % len(MARKERS)]}
            for i, s in enumerate(systems)}


def _systems(df: pd.DataFrame, systems) -> list[str]:
    return list(systems) if systems is not None else list(pd.unique(df["system"]))


def _legend(ax, n: int, outside: bool = False, **kw) -> None:
    if n > 5 or outside:
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False, fontsize="small", **kw)
    else:
        ax.legend(frameon=False, fontsize="small", **kw)


def _first_measure(df: pd.DataFrame, measure):
    if measure is not None:
        return measure
    return df["measure"].dropna().iloc[0]


# ----------------------------------------------------------------- sample size, power
def plot_sample_size(planning: pd.DataFrame, *, measure: str | None = None, current_n: int | None = None,
                     quantity: str = "half_width", ax=None):
    """Interval half-width (or standard error) against the number of questions.

    Parameters
    ----------
    planning : DataFrame
        :func:`evalframe.stats.planning_curve` output (``measure, n, se, half_width, ...``).
    measure : str, optional
        Draw one measure; default every measure of the table.
    current_n : int, optional
        The golden set's size, marked with a vertical line and a point per curve.
    quantity : {"half_width", "se"}
        Which column to draw.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt
    >>> import evalframe as ef
    >>> from evalframe import plots, stats
    >>> cran = ef.datasets.load_cranfield()
    >>> per_q = ef.evaluate(cran.runs, cran.qrels, ["nDCG@10", "R@10"])
    >>> ax = plots.plot_sample_size(stats.planning_curve(per_q), measure="nDCG@10", current_n=225)
    >>> ax.get_ylabel()
    '95% interval half-width'
    >>> plt.close(ax.figure)
    """
    _need(planning, ["measure", "n", quantity], "plot_sample_size")
    ax = _axes(ax)
    t = planning.drop_duplicates(["measure", "n"])
    measures = [measure] if measure is not None else list(pd.unique(t["measure"]))
    for i, m in enumerate(measures):
        g = t[t["measure"].astype(object) == m] if not pd.isna(m) else t
        g = g.sort_values("n")
        color, mk = PALETTE[i % len(PALETTE)], MARKERS[i % len(MARKERS)]
        ax.plot(g["n"], g[quantity], color=color, lw=1.8, label=str(m) if not pd.isna(m) else "measure")
        if current_n is not None and (g["n"] == current_n).any():
            y = float(g.loc[g["n"] == current_n, quantity].iloc[0])
            ax.plot([current_n], [y], marker=mk, color=color, ms=7, ls="none")
    if current_n is not None:
        ax.axvline(current_n, color="0.3", ls="--", lw=1)
        ax.annotate(f"this golden set\nn = {current_n}", xy=(current_n, 1), xycoords=("data", "axes fraction"),
                    xytext=(4, -4), textcoords="offset points", va="top", fontsize="small", color="0.2")
    n_min, n_max = float(t["n"].min()), float(t["n"].max())
    if n_min < 50:
        ax.axvspan(n_min, 50, color="#D55E00", alpha=0.07, lw=0)
        ax.annotate("fewer than 50\nquestions", xy=(n_min, 0.02), xycoords=("data", "axes fraction"),
                    xytext=(3, 2), textcoords="offset points", fontsize="small", color="#D55E00")
    _log_n_axis(ax, n_min, n_max)
    conf = planning["confidence"].iloc[0] if "confidence" in planning and len(planning) else 0.95
    ax.set_xlabel("number of questions in the golden set (log scale)")
    ax.set_ylabel(f"{conf:.0%} interval half-width" if quantity == "half_width" else "standard error")
    ax.set_title("How precise is a mean over n questions?" + (f" ({measure})" if measure else ""))
    ax.grid(True, which="major", alpha=0.3)
    ax.set_ylim(bottom=0)
    _legend(ax, len(measures), title="measure")
    return ax


def plot_power(planning: pd.DataFrame, *, measure: str | None = None, current_n: int | None = None, ax=None):
    """Power of the paired t-test against n, one line per true difference ``delta``.

    Parameters
    ----------
    planning : DataFrame
        :func:`evalframe.stats.planning_curve` output (``measure, n, delta, power, sd_diff``).
    measure : str, optional
        Default: the first measure of the table.
    current_n : int, optional
        The golden set's size, marked.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt
    >>> import evalframe as ef
    >>> from evalframe import plots, stats
    >>> cran = ef.datasets.load_cranfield()
    >>> per_q = ef.evaluate(cran.runs, cran.qrels, ["nDCG@10", "R@10"])
    >>> ax = plots.plot_power(stats.planning_curve(per_q), measure="nDCG@10")
    >>> ax.get_ylabel()
    'power of the paired t-test (α = 0.05)'
    >>> plt.close(ax.figure)
    """
    _need(planning, ["measure", "n", "delta", "power"], "plot_power")
    ax = _axes(ax)
    m = _first_measure(planning, measure) if planning["measure"].notna().any() else None
    t = planning[planning["measure"].astype(object) == m] if m is not None else planning
    t = t[t["delta"].notna()]
    for i, (d, g) in enumerate(t.groupby("delta", sort=True)):
        g = g.sort_values("n")
        ax.plot(g["n"], g["power"], color=PALETTE[i % len(PALETTE)], marker=MARKERS[i % len(MARKERS)],
                ms=4, lw=1.8, label=f"Δ = {d:g}")
    ax.axhline(0.8, color="0.3", ls=":", lw=1)
    ax.annotate("80% power", xy=(1, 0.8), xycoords=("axes fraction", "data"), xytext=(-4, 3),
                textcoords="offset points", ha="right", fontsize="small", color="0.3")
    if current_n is not None:
        ax.axvline(current_n, color="0.3", ls="--", lw=1)
        ax.annotate(f"this golden set\nn = {current_n}", xy=(current_n, 0.02), xycoords=("data", "axes fraction"),
                    xytext=(4, 2), textcoords="offset points", fontsize="small", color="0.2")
    _log_n_axis(ax, float(t["n"].min()), float(t["n"].max()))
    ax.set_ylim(0, 1.02)
    sdd = t["sd_diff"].dropna()
    alpha = t["alpha"].iloc[0] if "alpha" in t and len(t) else 0.05
    ax.set_xlabel("number of questions (log scale)")
    ax.set_ylabel(f"power of the paired t-test (α = {alpha:g})")
    ax.set_title(f"Chance to detect a true difference Δ in {m}" if m is not None else "Power against n")
    ax.grid(True, alpha=0.3)
    title = "true difference" + (f"\n(sd of paired d = {sdd.iloc[0]:.3f})" if len(sdd) else "")
    ax.legend(loc="lower right" if current_n is None else "center right", frameon=True, framealpha=0.9,
              fontsize="small", title=title, title_fontsize="small")
    return ax


def _log_n_axis(ax, lo: float, hi: float) -> None:
    ax.set_xscale("log")
    ax.set_xlim(lo * 0.9, hi * 1.1)
    ticks = [t for t in (10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10_000, 20_000, 50_000)
             if lo * 0.9 <= t <= hi * 1.1]
    ax.set_xticks(ticks)
    ax.set_xticklabels([f"{t:,}" for t in ticks])
    ax.minorticks_off()


# ---------------------------------------------------------------------------- forests
def _dodge(n: int, width: float = 0.8) -> np.ndarray:
    if n == 1:
        return np.zeros(1)
    return np.linspace(-width / 2, width / 2, n)


def plot_forest(summary: pd.DataFrame, *, measures: Sequence[str] | None = None,
                systems: Sequence[str] | None = None, ax=None):
    """Means with confidence intervals, systems x measures (one band per measure).

    Parameters
    ----------
    summary : DataFrame
        ``system, measure, mean, ci_low, ci_high`` (the report's ``summary`` or
        :func:`evalframe.stats.summarize` output).
    measures, systems : lists, optional
        Which and in what order (default: order of appearance).

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt
    >>> import evalframe as ef
    >>> from evalframe import plots, stats
    >>> cran = ef.datasets.load_cranfield()
    >>> per_q = ef.evaluate(cran.runs, cran.qrels, ["nDCG@10", "R@10"])
    >>> ax = plots.plot_forest(stats.summarize(per_q))
    >>> ax.get_xlabel()
    'mean over questions with 95% interval'
    >>> plt.close(ax.figure)
    """
    _need(summary, ["system", "measure", "mean", "ci_low", "ci_high"], "plot_forest")
    systems = _systems(summary, systems)
    measures = list(measures) if measures is not None else list(pd.unique(summary["measure"]))
    ax = _axes(ax, figsize=(8, 1 + 0.3 * len(systems) * len(measures)))
    styles = system_styles(systems)
    offs = _dodge(len(systems), 0.8 if len(systems) > 1 else 0)
    for j, s in enumerate(systems):
        g = summary[summary["system"] == s].set_index("measure").reindex(measures)
        y = np.arange(len(measures)) + offs[j]
        ok = g["mean"].notna().to_numpy()
        lo = (g["mean"] - g["ci_low"]).to_numpy()
        hi = (g["ci_high"] - g["mean"]).to_numpy()
        ax.errorbar(g["mean"].to_numpy()[ok], y[ok], xerr=np.vstack([lo, hi])[:, ok], ls="none",
                    capsize=2.5, elinewidth=1.4, ms=5, label=s, **styles[s])
    for i in range(1, len(measures)):
        ax.axhline(i - 0.5, color="0.85", lw=0.8)
    ax.set_yticks(np.arange(len(measures)))
    ax.set_yticklabels(measures)
    ax.set_ylim(len(measures) - 0.5, -0.5)
    conf = summary["confidence"].iloc[0] if "confidence" in summary and len(summary) else 0.95
    ax.set_xlabel(f"mean over questions with {conf:.0%} interval")
    ax.set_ylabel("measure")
    ax.set_title("Systems by measure")
    ax.grid(True, axis="x", alpha=0.3)
    _legend(ax, len(systems), outside=True, title="system")
    return ax


def plot_segment_forest(by_segment: pd.DataFrame, *, measure: str, systems: Sequence[str] | None = None,
                        ax=None):
    """Means with intervals of every segment value within one measure.

    Parameters
    ----------
    by_segment : DataFrame
        The report's ``by_segment`` table (``system, segment, segment_value, measure, mean,
        ci_low, ci_high``, optionally ``overall_mean`` and ``flag``).
    measure : str
        The measure to draw.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt
    >>> import evalframe as ef
    >>> from evalframe import plots
    >>> cran = ef.datasets.load_cranfield()
    >>> runs = cran.runs[cran.runs["system"].isin(["bm25", "hybrid_rrf"])]
    >>> rep = ef.report(runs, cran.qrels, segments=cran.segments, measures=["nDCG@10"],
    ...                 baseline="bm25", n_resamples=200)
    >>> ax = plots.plot_segment_forest(rep.by_segment, measure="nDCG@10")
    >>> ax.get_xlabel().splitlines()[0]
    'nDCG@10: mean with interval'
    >>> plt.close(ax.figure)
    """
    _need(by_segment, ["system", "segment", "segment_value", "measure", "mean", "ci_low", "ci_high"],
          "plot_segment_forest")
    t = by_segment[by_segment["measure"] == measure]
    if t.empty:
        raise ValueError(f"plot_segment_forest: no rows for measure {measure!r}")
    systems = _systems(t, systems)
    rows = list(dict.fromkeys(zip(t["segment"], t["segment_value"])))
    ax = _axes(ax, figsize=(8, 1 + 0.26 * len(systems) * len(rows)))
    styles = system_styles(systems)
    offs = _dodge(len(systems), 0.8 if len(systems) > 1 else 0)
    pos = {r: i for i, r in enumerate(rows)}
    for j, s in enumerate(systems):
        g = t[t["system"] == s]
        if g.empty:
            continue
        y = np.array([pos[(a, b)] for a, b in zip(g["segment"], g["segment_value"])]) + offs[j]
        ax.errorbar(g["mean"], y, xerr=np.vstack([g["mean"] - g["ci_low"], g["ci_high"] - g["mean"]]),
                    ls="none", capsize=2.5, elinewidth=1.4, ms=5, label=s, **styles[s])
        if "overall_mean" in g and j == 0 and len(systems) == 1:
            ax.axvline(float(g["overall_mean"].iloc[0]), color=styles[s]["color"], ls="--", lw=1)
    labels = []
    for seg, val in rows:
        flag = ""
        if "flag" in t:
            f = t[(t["segment"] == seg) & (t["segment_value"] == val)]["flag"]
            flag = " *" if (f == "below overall").any() else (" (small)" if f.str.startswith("too small").any() else "")
        n = t[(t["segment"] == seg) & (t["segment_value"] == val)]["n"].max() if "n" in t else None
        labels.append(f"{seg} = {val}" + (f"  (n={n})" if n is not None else "") + flag)
    prev = None
    for i, (seg, _) in enumerate(rows):
        if prev is not None and seg != prev:
            ax.axhline(i - 0.5, color="0.6", lw=1)
        elif i:
            ax.axhline(i - 0.5, color="0.9", lw=0.6)
        prev = seg
    ax.set_yticks(np.arange(len(rows)))
    ax.set_yticklabels(labels)
    ax.set_ylim(len(rows) - 0.5, -0.5)
    ax.set_xlabel(f"{measure}: mean with interval\n(* some system's interval lies below its overall mean)")
    ax.set_ylabel("question segment")
    ax.set_title(f"{measure} by question segment")
    ax.grid(True, axis="x", alpha=0.3)
    _legend(ax, len(systems), outside=True, title="system")
    return ax


# ----------------------------------------------------------------------- metric@k curves
def plot_curves(curves: pd.DataFrame, *, family: str | None = None, systems: Sequence[str] | None = None,
                bands: bool = True, ax=None):
    """metric@k against k for every system, with interval bands.

    Parameters
    ----------
    curves : DataFrame
        The report's ``curves`` table: ``system, k, mean, ci_low, ci_high`` (+ ``family``).
    family : str, optional
        Measure family to draw when the table holds several (e.g. ``"R"``).
    bands : bool
        Shade the intervals.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt
    >>> import evalframe as ef
    >>> from evalframe import plots
    >>> cran = ef.datasets.load_cranfield()
    >>> runs = cran.runs[cran.runs["system"].isin(["bm25", "hybrid_rrf"])]
    >>> rep = ef.report(runs, cran.qrels, segments=cran.segments, measures=["nDCG@10"],
    ...                 baseline="bm25", n_resamples=200)
    >>> ax = plots.plot_curves(rep.curves)
    >>> ax.get_xlabel()
    'k (documents retrieved, log scale)'
    >>> plt.close(ax.figure)
    """
    _need(curves, ["system", "k", "mean", "ci_low", "ci_high"], "plot_curves")
    t = curves
    if family is not None and "family" in t:
        t = t[t["family"] == family]
    fam = family or (t["family"].iloc[0] if "family" in t and len(t) else "metric")
    systems = _systems(t, systems)
    ax = _axes(ax, figsize=(8, 5))
    styles = system_styles(systems)
    for s in systems:
        g = t[t["system"] == s].sort_values("k")
        st = styles[s]
        ax.plot(g["k"], g["mean"], color=st["color"], marker=st["marker"], ms=3.5, lw=1.6, label=s,
                markevery=max(1, len(g) // 8))
        if bands:
            ax.fill_between(g["k"], g["ci_low"], g["ci_high"], color=st["color"], alpha=0.12, lw=0)
    ax.set_xscale("log")
    ks = sorted(set(t["k"]))
    ticks = [k for k in (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000) if ks and ks[0] <= k <= ks[-1]]
    ax.set_xticks(ticks)
    ax.set_xticklabels([str(k) for k in ticks])
    ax.set_xlabel("k (documents retrieved, log scale)")
    name = {"R": "recall", "P": "precision", "nDCG": "nDCG", "Success": "success", "AP": "AP"}.get(fam, fam)
    ax.set_ylabel(f"{fam}@k ({name}@k), mean")
    conf = t["confidence"].iloc[0] if "confidence" in t and len(t) else 0.95
    ax.set_title(f"{name}@k for k = {ks[0]}..{ks[-1]}" + (f" with {conf:.0%} bands" if bands else "")
                 if ks else f"{name}@k")
    ax.set_ylim(0, min(1.02, max(1e-9, float(t["ci_high"].max())) * 1.05) if len(t) else 1)
    ax.grid(True, which="both", alpha=0.25)
    _legend(ax, len(systems), title="system")
    return ax


# ---------------------------------------------------------------- paired differences
def plot_paired_differences(per_question: pd.DataFrame, *, system_a: str, system_b: str, measure: str,
                            comparison: pd.DataFrame | None = None, ax=None):
    """Per-question differences ``b - a`` on one measure, sorted, one bar per question
    (beyond ``MAX_BARS`` (2000) questions, one area per sign through that many evenly spaced
    ranks: the same picture, drawn in constant time).

    Parameters
    ----------
    per_question : DataFrame
        ``system, query_id, measure, value`` (the report's ``per_question``).
    system_a, system_b : str
        The pair; bars above zero are questions where ``system_b`` scores higher.
    measure : str
    comparison : DataFrame, optional
        The pair's row of the comparisons table: its mean difference, interval and
        adjusted p-value are drawn and written on the plot.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt
    >>> import evalframe as ef
    >>> from evalframe import plots, stats
    >>> cran = ef.datasets.load_cranfield()
    >>> per_q = ef.evaluate(cran.runs, cran.qrels, ["nDCG@10", "R@10"])
    >>> ax = plots.plot_paired_differences(per_q, system_a="bm25", system_b="hybrid_rrf",
    ...                                    measure="nDCG@10")
    >>> ax.get_xlabel()
    'questions, sorted by difference'
    >>> plt.close(ax.figure)
    """
    _need(per_question, ["system", "query_id", "measure", "value"], "plot_paired_differences")
    t = per_question[(per_question["measure"] == measure) & per_question["system"].isin([system_a, system_b])]
    w = t.pivot(index="query_id", columns="system", values="value")
    for s in (system_a, system_b):
        if s not in w:
            raise ValueError(f"plot_paired_differences: no {measure} values for system {s!r}")
    d = (w[system_b] - w[system_a]).dropna().sort_values().to_numpy()
    ax = _axes(ax, figsize=(8, 4.5))
    x = np.arange(1, len(d) + 1)
    if len(d) <= MAX_BARS:
        colors = np.where(d > 0, PALETTE[0], np.where(d < 0, PALETTE[1], "0.6"))
        ax.bar(x, d, width=1.0, color=colors, lw=0)
    else:  # one area per sign through MAX_BARS evenly spaced ranks of the sorted differences
        at = np.unique(np.linspace(0, len(d) - 1, MAX_BARS).round().astype(np.int64))
        for sign, color in ((1, PALETTE[0]), (-1, PALETTE[1])):
            ax.fill_between(x[at], d[at], 0, where=np.sign(d[at]) == sign, color=color, lw=0, step="mid",
                            label="_nolegend_")
    ax.axhline(0, color="0.2", lw=0.8)
    wins, losses = int((d > 0).sum()), int((d < 0).sum())
    ties = len(d) - wins - losses
    text = f"{system_b} higher on {wins}, lower on {losses}, tied on {ties} questions"
    if comparison is not None and len(comparison):
        r = comparison.iloc[0]
        sign = 1.0 if (r["system_a"] == system_a) else -1.0
        diff = sign * float(r["diff"])
        lo, hi = sorted([sign * float(r["ci_low"]), sign * float(r["ci_high"])])
        ax.axhline(diff, color="0.1", ls="--", lw=1.2, label=f"mean difference {diff:+.3f}")
        ax.axhspan(lo, hi, color="0.5", alpha=0.2, lw=0, label=f"interval [{lo:+.3f}, {hi:+.3f}]")
        text += f"\nadjusted p = {float(r['p_adjusted']):.3g} ({r['test']}, {r['correction']})"
        ax.legend(loc="lower right", frameon=False, fontsize="small")
    ax.text(0.01, 0.98, text, transform=ax.transAxes, va="top", fontsize="small")
    ax.set_xlim(0.5, len(d) + 0.5)
    ax.set_xlabel("questions, sorted by difference")
    ax.set_ylabel(f"{measure}: {system_b} − {system_a}")
    ax.set_title(f"Per-question differences in {measure}: {system_b} vs {system_a}")
    ax.grid(True, axis="y", alpha=0.3)
    return ax


# ------------------------------------------------------------------------- segment bars
def plot_segments(by_segment: pd.DataFrame, *, measure: str, segment: str | None = None,
                  systems: Sequence[str] | None = None, ax=None):
    """Bars of one measure per segment value (grouped) and system, with interval whiskers.

    Parameters
    ----------
    by_segment : DataFrame
        The report's ``by_segment`` table.
    measure : str
    segment : str, optional
        One segment column; default all of them, side by side.

    Segments flagged too small are hatched; a dashed line per system is its overall mean
    when ``overall_mean`` is present and there is one system.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt
    >>> import evalframe as ef
    >>> from evalframe import plots
    >>> cran = ef.datasets.load_cranfield()
    >>> runs = cran.runs[cran.runs["system"].isin(["bm25", "hybrid_rrf"])]
    >>> rep = ef.report(runs, cran.qrels, segments=cran.segments, measures=["nDCG@10"],
    ...                 baseline="bm25", n_resamples=200)
    >>> ax = plots.plot_segments(rep.by_segment, measure="nDCG@10", segment="length")
    >>> ax.get_xlabel()
    'question segment (hatched: too few questions to say anything)'
    >>> plt.close(ax.figure)
    """
    _need(by_segment, ["system", "segment", "segment_value", "measure", "mean", "ci_low", "ci_high"],
          "plot_segments")
    t = by_segment[by_segment["measure"] == measure]
    if segment is not None:
        t = t[t["segment"] == segment]
    if t.empty:
        raise ValueError(f"plot_segments: no rows for measure {measure!r}" + (f", segment {segment!r}" if segment else ""))
    systems = _systems(t, systems)
    groups = list(dict.fromkeys(zip(t["segment"], t["segment_value"])))
    ax = _axes(ax, figsize=(min(14, max(7, 0.9 * len(groups) + 0.08 * len(systems) * len(groups))), 4.8))
    styles = system_styles(systems)
    width = 0.8 / len(systems)
    offs = _dodge(len(systems), 0.8 - width)
    gpos = {g: i for i, g in enumerate(groups)}
    for j, s in enumerate(systems):
        g = t[t["system"] == s]
        if g.empty:
            continue
        x = np.array([gpos[(a, b)] for a, b in zip(g["segment"], g["segment_value"])]) + offs[j]
        small = g["too_small"].to_numpy(dtype=bool) if "too_small" in g else np.zeros(len(g), bool)
        bars = ax.bar(x, g["mean"], width=width * 0.95, color=styles[s]["color"], label=s, alpha=0.9)
        for b, sm in zip(bars, small):
            if sm:
                b.set_hatch("///")
                b.set_alpha(0.45)
        ax.errorbar(x, g["mean"], yerr=np.vstack([g["mean"] - g["ci_low"], g["ci_high"] - g["mean"]]),
                    ls="none", color="0.15", capsize=2, elinewidth=1)
        if len(systems) == 1 and "overall_mean" in g:
            ax.axhline(float(g["overall_mean"].iloc[0]), color="0.2", ls="--", lw=1, label="overall mean")
    labels = []
    for seg, val in groups:
        n = t[(t["segment"] == seg) & (t["segment_value"] == val)]["n"].max() if "n" in t else None
        labels.append(f"{val}\n(n={n})" if n is not None else str(val))
    ax.set_xticks(np.arange(len(groups)))
    ax.set_xticklabels(labels, fontsize="small")
    segs = list(dict.fromkeys(seg for seg, _ in groups))
    prev = None
    for i, (seg, _) in enumerate(groups):
        if prev is not None and seg != prev:
            ax.axvline(i - 0.5, color="0.5", lw=1)
        prev = seg
    for seg in segs:
        idx = [i for i, (sg, _) in enumerate(groups) if sg == seg]
        ax.annotate(seg, xy=((np.mean(idx) + 0.5) / len(groups), 1.0), xycoords="axes fraction",
                    xytext=(0, 3), textcoords="offset points", ha="center", va="bottom",
                    fontsize="small", fontweight="bold")
    ax.set_ylabel(f"{measure}, mean with interval")
    ax.set_xlabel("question segment (hatched: too few questions to say anything)")
    ax.set_title(f"{measure} by question segment", pad=18)
    ax.set_ylim(0, min(1.05, float(t["ci_high"].max()) * 1.1 if len(t) else 1))
    ax.grid(True, axis="y", alpha=0.3)
    _legend(ax, len(systems), outside=True, title="system")
    return ax


# ------------------------------------------------------------------------ ASL curves
def plot_asl_curve(curve: pd.DataFrame, *, measures: Sequence[str] | None = None, alpha: float | None = 0.05,
                   ax=None):
    """Sakai's achieved-significance-level curves: each measure's pair p-values, sorted.

    A curve that stays low over more pairs belongs to the more discriminative measure.

    Parameters
    ----------
    curve : DataFrame
        :func:`evalframe.stats.asl_curve` output (``measure, pair_rank, p_value``).
    measures : list of str, optional
        Default: every measure of the table, in its order.
    alpha : float, optional
        A significance level to mark (None: no line).

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt
    >>> import evalframe as ef
    >>> from evalframe import plots, stats
    >>> cran = ef.datasets.load_cranfield()
    >>> per_q = ef.evaluate(cran.runs, cran.qrels, ["nDCG@10", "R@10"])
    >>> asl = stats.asl_curve(per_q, n_resamples=200)
    >>> ax = plots.plot_asl_curve(asl)
    >>> ax.get_ylabel()
    'achieved significance level (p-value)'
    >>> plt.close(ax.figure)
    """
    _need(curve, ["measure", "pair_rank", "p_value"], "plot_asl_curve")
    ax = _axes(ax)
    names = list(measures) if measures is not None else list(pd.unique(curve["measure"]))
    for i, m in enumerate(names):
        g = curve[curve["measure"] == m].sort_values("pair_rank")
        ax.plot(g["pair_rank"], g["p_value"], color=PALETTE[i % len(PALETTE)], marker=MARKERS[i % len(MARKERS)],
                ms=3, lw=1.6, label=str(m))
    if alpha is not None:
        ax.axhline(alpha, color="0.3", ls=":", lw=1)
        ax.annotate(f"α = {alpha:g}", xy=(0, alpha), xycoords=("axes fraction", "data"), xytext=(4, 3),
                    textcoords="offset points", fontsize="small", color="0.3")
    ax.set_ylim(0, min(1.0, max(0.2, float(curve["p_value"].max()) * 1.05)) if len(curve) else 1.0)
    ax.set_xlabel("system pairs, sorted by p-value")
    ax.set_ylabel("achieved significance level (p-value)")
    ax.set_title("Discriminative power: ASL curves")
    ax.grid(True, alpha=0.3)
    _legend(ax, len(names))
    return ax
