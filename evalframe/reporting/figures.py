"""The report's plots as specifications: file stem, size, caption in words and ``draw(ax)``,
in the order the page shows them (drawn by :mod:`.render_html` and ``Report.save_plots``).
"""
from __future__ import annotations

from typing import Callable, NamedTuple

from .views import ReportView


class PlotSpec(NamedTuple):
    """One plot of the report: file stem, figure size (inches), caption in words, and
    ``draw(ax)`` (a :class:`Report` ``plot_*`` method)."""

    name: str
    figsize: tuple[float, float]
    caption: str
    draw: Callable[[object], object]


def default_pair(rep: ReportView, measure: str, system_a: str | None = None,
                 system_b: str | None = None) -> tuple[str, str]:
    """The pair a per-question difference plot shows by default: the reference system
    against the other system with the highest mean on ``measure``."""
    if len(rep.systems) < 2:
        raise ValueError("paired differences need two systems; the report has one")
    a = system_a or rep.reference
    if system_b is None:
        s = rep.summary
        s = s[(s["measure"] == measure) & (s["system"] != a)]
        system_b = str(s.sort_values("mean", ascending=False, kind="stable")["system"].iloc[0])
    return a, system_b


def plot_specs(rep: ReportView) -> list[PlotSpec]:
    """The plots the report holds data for, in the order the page shows them: forest,
    metric@k curves, per-question differences (two systems or more), sample size, power,
    and, with segments, the segment bars and the segment forest."""
    m = rep.metadata
    ns, nm = len(rep.systems), len(rep.measures)
    conf = f"{m['confidence']:.0%}"
    first = rep.measures[0]
    specs = [PlotSpec("forest", (8, 1.2 + 0.13 * ns * nm + 0.25 * nm),
                      f"Mean of every measure per system with its {conf} interval ({m['interval']}). "
                      "Overlapping intervals do not mean 'no difference': the paired comparisons decide.",
                      lambda ax: rep.plot_forest(ax=ax))]
    if not rep.curves.empty:
        fam = str(m.get("curve") or rep.curves["family"].iloc[0])
        specs.append(PlotSpec("curves", (8, 5),
                              f"{fam}@k against k with {conf} bands: how much of the relevant set each "
                              "system reaches by depth k (what a reranker reading the top k can at best recover).",
                              lambda ax: rep.plot_curves(ax=ax)))
    if ns >= 2:
        a, b = default_pair(rep, first)
        specs.append(PlotSpec("differences", (8, 4.5),
                              f"{first} of {b} minus {a}, one bar per question, sorted: above zero, {b} "
                              "scores higher. The dashed line is the mean difference, the band its interval.",
                              lambda ax: rep.plot_differences(a, b, first, ax=ax)))
    specs += [PlotSpec("sample_size", (7, 4.5),
                       f"Half-width of a {conf} interval of each measure against the number of questions "
                       "(t quantiles, z for 0/1 measures, from this golden set's spread); dashed: this golden set.",
                       lambda ax: rep.plot_sample_size(ax=ax)),
              PlotSpec("power", (7, 4.5),
                       f"Chance that the paired t-test detects a true difference Δ in {first} against "
                       "the number of questions (noncentral t); dotted: 80% power.",
                       lambda ax: rep.plot_power(ax=ax))]
    seg = rep.by_segment
    if not seg.empty:
        nv = seg[["segment", "segment_value"]].drop_duplicates().shape[0]
        specs += [PlotSpec("segments", (min(14, max(7, 1.0 * nv + 0.1 * ns * nv)), 4.8),
                           f"{first} per question segment and system with intervals; hatched: too few "
                           "questions to say anything.", lambda ax: rep.plot_segments(ax=ax)),
                  PlotSpec("segment_forest", (8.5, 1.2 + 0.17 * ns * nv + 0.3 * nv),
                           f"{first} of every segment with its interval; * marks a segment whose interval "
                           "lies below its system's overall mean.", lambda ax: rep.plot_segment_forest(ax=ax))]
    return specs
