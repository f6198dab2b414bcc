"""Rendering a Report: HTML (the notebook view and a self-contained page), Markdown, LaTeX
and plain text.

Every function reads only a Report's public surface (:class:`ReportView`), so a renderer
can be added without touching the model.
"""
from __future__ import annotations

from pathlib import Path

__all__ = ["LABEL_CHECKS", "label_lines", "ReportView", "format_p", "significance_marks", "test_description", "interval_note", "procedure_note", "summary_wide", "comparisons_view", "COMPARISON_VIEW_COLUMNS",
           "changes_view", "segment_flags",
           "warning_lines", "COMPACT_ROWS", "COMPACT_MEASURES", "PlotSpec", "plot_specs", "default_pair", "to_html", "to_html_page", "to_markdown", "to_latex", "text_tables", "pipe_table"]

import math
import re
from typing import Callable, Mapping, NamedTuple, Protocol, Sequence

import numpy as np
import pandas as pd

from . import html as H


_TEST_WORDS = {"t": "paired t-test", "randomization": "paired randomisation test",
               "bootstrap": "paired bootstrap test",
               "bootstrap-t": "paired studentized bootstrap test", "wilcoxon": "Wilcoxon signed-rank test",
               "sign": "sign test"}
_CORRECTION_WORDS = {"holm": "Holm-corrected", "bonferroni": "Bonferroni-corrected",
                     "bh": "Benjamini-Hochberg-corrected", "none": "uncorrected",
                     "tukey": "Tukey HSD", "randomized-tukey": "randomised Tukey HSD"}


class ReportView(Protocol):
    """What a renderer reads from a Report (every table a fresh copy)."""

    @property
    def summary(self) -> pd.DataFrame: ...
    @property
    def by_segment(self) -> pd.DataFrame: ...
    @property
    def comparisons(self) -> pd.DataFrame: ...
    @property
    def diagnostics(self) -> pd.DataFrame: ...
    @property
    def stages(self) -> pd.DataFrame: ...
    @property
    def changes(self) -> pd.DataFrame: ...
    @property
    def rankings(self) -> pd.DataFrame: ...
    def explain(self, question, system_a=None, system_b=None) -> pd.DataFrame: ...
    @property
    def metadata(self) -> dict: ...
    @property
    def systems(self) -> list[str]: ...
    @property
    def measures(self) -> list[str]: ...
    @property
    def warnings(self) -> Sequence: ...
    @property
    def warnings_issued(self) -> bool: ...
    @property
    def reference(self) -> str | None: ...
    @property
    def alpha(self) -> float: ...
    @property
    def curves(self) -> pd.DataFrame: ...
    def plot_forest(self, measures=None, *, ax=None): ...
    def plot_curves(self, family=None, *, ax=None): ...
    def plot_differences(self, system_a=None, system_b=None, measure=None, *, ax=None): ...
    def plot_sample_size(self, measure=None, *, ax=None): ...
    def plot_power(self, measure=None, *, ax=None): ...
    def plot_segments(self, measure=None, segment=None, *, ax=None): ...
    def plot_segment_forest(self, measure=None, *, ax=None): ...


# ------------------------------------------------------------------------ views
def significance_marks(rep: ReportView) -> dict[tuple[str, str], str]:
    """(system, measure) -> ``"+"`` / ``"-"`` when significantly above / below the reference
    system (``p_adjusted < alpha``)."""
    ref = rep.reference
    c = rep.comparisons
    out: dict[tuple[str, str], str] = {}
    if ref is None or c.empty:
        return out
    alpha = rep.alpha
    for r in c.itertuples(index=False):
        if not (isinstance(r.p_adjusted, float) and r.p_adjusted < alpha):
            continue
        if r.system_a == ref:
            out[(r.system_b, r.measure)] = "+" if r.diff > 0 else "-"
        elif r.system_b == ref:
            out[(r.system_a, r.measure)] = "-" if r.diff > 0 else "+"
    return out


def test_description(rep: ReportView) -> str:
    """The paired test in words, e.g. ``"paired randomisation test, Holm-corrected, alpha = 0.05"``
    (empty without comparisons)."""
    c = rep.comparisons
    if c.empty:
        return ""
    test, corr = str(c["test"].iloc[0]), str(c["correction"].iloc[0])
    return (f"{_TEST_WORDS.get(test, test)}, {_CORRECTION_WORDS.get(corr, corr)}, "
            f"alpha = {rep.alpha:g}")


def summary_wide(rep: ReportView, digits: int = 3) -> pd.DataFrame:
    """Systems x measures, cells ``mean [ci_low, ci_high]`` (+ ``▲``/``▼`` when significantly
    above/below the reference system), with a first column ``n``."""
    s = rep.summary
    marks = significance_marks(rep)
    cells = {}
    for r in s.itertuples(index=False):
        cells[(r.system, r.measure)] = _fmt_ci(r.mean, r.ci_low, r.ci_high, digits) + (
            {"+": " ▲", "-": " ▼"}.get(marks.get((r.system, r.measure), ""), ""))
    systems, measures = rep.systems, rep.measures
    out = pd.DataFrame([[cells.get((sy, m), "") for m in measures] for sy in systems],
                       index=pd.Index(systems, name="system"), columns=measures)
    n = s.groupby("system", sort=False)["n"].max()
    out.insert(0, "n", [int(n.get(sy, 0)) for sy in systems])
    return out


#: The columns of :func:`comparisons_view`.
COMPARISON_VIEW_COLUMNS = ("measure", "system_a", "system_b", "diff", "CI", "adjusted CI", "adjustment", "interval",
                           "p_adjusted", "test", "significant")


def comparisons_view(rep: ReportView, digits: int = 3) -> pd.DataFrame:
    """The comparisons in words, one short text cell per value, so each stays whole in a
    notebook (pandas cuts cells longer than ``display.max_colwidth``, 50 characters):
    ``measure, system_a, system_b, diff`` (signed), ``CI`` (the comparison's own interval,
    unadjusted, ``"[-0.047, 0.001]"``), ``adjusted CI`` (the interval adjusted as
    ``p_adjusted`` is; empty when nothing is adjusted), ``adjustment`` (``bonferroni``
    for Holm and Bonferroni, ``fcr`` for BH, ``none``), ``interval`` (the intervals'
    method), ``p_adjusted, test`` (test and correction), ``significant`` (``"*"`` when
    ``p_adjusted < alpha``, else ``""``). Every number has ``digits`` decimals."""
    cols = list(COMPARISON_VIEW_COLUMNS)
    c = rep.comparisons
    if c.empty:
        return pd.DataFrame(columns=cols)
    alpha = rep.alpha
    alo, ahi, how = _adjusted_columns(c)
    return pd.DataFrame({
        "measure": c["measure"], "system_a": c["system_a"], "system_b": c["system_b"],
        "diff": [_fmt_ci(d, None, None, digits, signed=True) for d in c["diff"]],
        "CI": [_fmt_interval(lo, hi, digits) for lo, hi in zip(c["ci_low"], c["ci_high"])],
        "adjusted CI": [_fmt_interval(lo, hi, digits) if str(h) not in ("none", "nan") else ""
                        for lo, hi, h in zip(alo, ahi, how)],
        "adjustment": how.astype(str).replace("nan", "none").to_numpy(),
        "interval": c["ci_method"].astype(str), "p_adjusted": [format_p(p) for p in c["p_adjusted"]],
        "test": c["test"].astype(str) + ", " + c["correction"].astype(str),
        "significant": ["*" if p < alpha else "" for p in c["p_adjusted"].fillna(1.0)],
    }, columns=cols)


def interval_note(rep: ReportView) -> str:
    """What the two intervals (``CI``, ``adjusted CI``) are, which procedure gives them and which
    gives p, and what the adjusted interval promises (empty without comparisons)."""
    c = rep.comparisons
    if c.empty:
        return ""
    how = str(_adjusted_columns(c)[2].iloc[0])
    conf = f"{float(c['confidence'].iloc[0]):.0%}"
    words = {"bonferroni": "Bonferroni-simultaneous over each measure's comparisons (all of them "
                           f"cover their true differences together with probability >= {conf})",
             "fcr": "false-coverage-rate adjusted (Benjamini-Yekutieli), as the BH p_adjusted"}
    if how not in words:
        return (f"CI: the {conf} interval of each comparison (unadjusted, as p_adjusted). "
                + procedure_note(c))
    return (f"CI: the {conf} interval of each comparison alone (unadjusted); adjusted CI: the "
            f"{how}-adj. interval, {words[how]}. " + procedure_note(c))


def procedure_note(c: pd.DataFrame) -> str:
    """Whether the intervals and p come from one procedure, and what an adjusted interval
    clear of 0 says about ``p_adjusted`` under the correction applied."""
    methods = set(map(str, pd.unique(c["ci_method"])))
    tests = set(map(str, pd.unique(c["test"])))
    corrections = set(map(str, pd.unique(c["correction"])))
    same = {"randomization": ("randomisation test", "sign flips"), "t": ("t-test", "t distribution"),
            "bootstrap-t": ("studentized bootstrap test", "resamples")}
    if len(methods) == 1 and methods == tests and next(iter(methods)) in same:
        name, shared = same[next(iter(methods))]
        one = (f"Intervals and p come from one procedure: the intervals invert the {name} that "
               f"gives p (the same {shared}), so the unadjusted interval excludes 0 exactly when "
               "p_value is below 1 - confidence, and the Bonferroni-adjusted one exactly when "
               "Bonferroni's p_adjusted is.")
    else:
        one = (f"The intervals ({', '.join(sorted(methods))}) and p ({', '.join(sorted(tests))}) "
               "come from two procedures and can disagree near the threshold: p_adjusted decides.")
    if "holm" in corrections:
        one += (" With Holm's step-down, an adjusted interval clear of 0 means the difference "
                "is significant, but Holm also finds significant some differences whose "
                "adjusted interval touches or crosses 0: p_adjusted decides.")
    if corrections & {"tukey", "randomized-tukey"}:
        one += " Tukey's p_adjusted comes from the studentized range, not from these intervals."
    return one


def _adjusted_columns(c: pd.DataFrame):
    """The adjusted interval columns (NaN / "none" in a table written before they existed)."""
    nan = pd.Series(np.nan, index=c.index)
    return (c.get("ci_low_adjusted", nan), c.get("ci_high_adjusted", nan),
            c.get("ci_adjustment", pd.Series("none", index=c.index)))


def _fmt_interval(lo, hi, digits: int) -> str:
    """``"[lo, hi]"`` with ``digits`` decimals; ``""`` when either end is missing."""
    if lo is None or hi is None or pd.isna(lo) or pd.isna(hi):
        return ""
    return f"[{lo:.{digits}f}, {hi:.{digits}f}]"


def warning_lines(rep: ReportView) -> list[str]:
    """The warnings in words, one line each (Judged@k warnings grouped over systems): the
    messages of ``rep.warnings``."""
    return [str(w.message) for w in rep.warnings]


def _intervals_sentence(m: Mapping[str, object], escape=lambda x: x) -> str:
    return (f"means with {m['confidence']:.0%} intervals ({escape(str(m['interval']))}"
            + (f", {m['n_resamples']} resamples, seed {m['seed']}" if m['interval'] in ("bootstrap", "bca") else "")
            + ")." + (" Documents are pages (chunks rolled up to their page)." if m.get("unit") == "page" else ""))


# ------------------------------------------------------------------------ HTML
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


#: The notebook view's limits: comparison rows, measures in its forest plot.
COMPACT_ROWS, COMPACT_MEASURES = 40, 6


def to_html(rep: ReportView) -> str:
    """The notebook view (``Report._repr_html_``): the compact form of :func:`to_html_page`
    — the question, warnings, summary, comparisons (the first :data:`COMPACT_ROWS`) and a
    small forest plot (the first :data:`COMPACT_MEASURES` measures); no links, the
    stylesheet follows JupyterLab's light and dark themes."""
    parts = ["<div class='evalframe-report ef-compact'>", f"<style>{H.CSS}</style>",
             "<h3>evalframe report</h3>", f"<p>{_question_html(rep)} {_method_html(rep)}</p>",
             _warnings_html(rep, level="h3", collapsed=rep.warnings_issued), "<h3>Summary</h3>", _summary_html(rep)]
    if not rep.comparisons.empty:
        parts += ["<h3>Comparisons</h3>", _comparisons_html(rep, limit=COMPACT_ROWS)]
    conf = f"{rep.metadata['confidence']:.0%}"
    shown = rep.measures[:COMPACT_MEASURES]
    words = f"Means with {conf} intervals" + (f" (the first {len(shown)} measures)." if len(shown) < len(rep.measures)
                                               else ".")
    size = (6.4, 0.8 + 0.075 * len(rep.systems) * len(shown) + 0.2 * len(shown))
    parts.append(_figure_html(PlotSpec("forest", size, words, lambda ax: rep.plot_forest(shown, ax=ax)),
                              "nb", wide=True))
    parts.append("<p class='ef-note'>The whole report as one page (segments, stages, diagnostics, every "
                 "plot, how to read it): <code>report.to_html(\"report.html\")</code> or "
                 "<code>evalframe report ... --out DIR</code>.</p></div>")
    return "\n".join(p for p in parts if p)


def to_html_page(rep: ReportView, *, title: str | None = None, golden_set: str | None = None,
                 plots: bool = True, png_dir=None, dpi: int = 130, diff=None) -> str:
    """The report as one self-contained HTML page (what :meth:`Report.to_html` writes).

    In order: the question the report answers (systems, golden set, questions, measures,
    method, seed), warnings, the summary (intervals, ▲/▼ against the reference system, the
    best system per measure emphasised), comparisons, top regressions and improvements,
    flagged segments, pipeline stages, diagnostics, plots (inline SVG), and how to read
    them. No script and no external address: the file opens alone, offline.

    Parameters
    ----------
    title : str, optional
        The page title (default: ``"evalframe report: <systems> on <n> questions"``).
    golden_set : str, optional
        What the golden set is called (a file name, a collection), shown in the question.
    plots : bool
        Draw the plots (matplotlib's SVG backend); False leaves the section out.
    png_dir : path, optional
        Also write each plot as ``<name>.png`` there (at ``dpi``, the size
        :meth:`Report.save_plots` uses), from the figure drawn for the page.
    diff : ReportDiff, optional
        What changed since an earlier report (:func:`evalframe.diff`): a section after
        the comparisons.

    Returns
    -------
    str
        The page, from ``<!DOCTYPE html>`` to ``</html>``.

    Examples
    --------
    >>> import warnings
    >>> import evalframe as ef
    >>> from evalframe.report.render import to_html_page
    >>> cran = ef.datasets.load_cranfield()
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     rep = ef.report(cran.runs, cran.qrels, measures=["R@5", "nDCG@10"], baseline="bm25",
    ...                     n_resamples=100)
    >>> page = to_html_page(rep, plots=False)
    >>> page.startswith("<!DOCTYPE html>"), page.count("<table"), "hybrid_rrf" in page
    (True, 30, True)
    """
    m = rep.metadata
    ns = len(rep.systems)
    title = title or (f"evalframe report: {ns} system{'s' if ns != 1 else ''} on {m['n_questions']} questions")
    sections: list[tuple[str, str, str]] = []  # (id, heading, html)
    sections.append(("summary", "Summary", _summary_html(rep)))
    labels = label_lines(rep)
    if labels:
        sections.append(("labels", "Model labels and unjudged documents",
                         "<ul>" + "".join(f"<li>{H.escape(x)}</li>" for x in labels) + "</ul>"))
    if not rep.comparisons.empty:
        sections.append(("comparisons", "Comparisons", _comparisons_html(rep)))
    if diff is not None:
        sections.append(("diff", "What changed since the earlier report", diff.to_html_section()))
    ch = _changes_html(rep)
    if ch:
        sections.append(("changes", "Top regressions and improvements", ch))
    if not rep.by_segment.empty:
        sections.append(("segments", "Flagged segments", _segments_html(rep)))
    if not rep.stages.empty:
        sections.append(("stages", "Pipeline stages", _stages_html(rep)))
    sections.append(("diagnostics", "Diagnostics", _diagnostics_html(rep)))
    if plots:
        figs = [_figure_html(s, "p", png=None if png_dir is None else (Path(png_dir) / f"{s.name}.png", s.figsize, dpi))
                for s in plot_specs(rep)]
        sections.append(("plots", "Plots", "<div class='ef-figures'>" + "".join(figs) + "</div>"))
    sections.append(("how-to-read", "How to read this", _howto_html(rep)))
    toc = " ".join(f"<a href='#{i}'>{H.escape(h)}</a>" for i, h, _ in sections)
    body = [f"<header><h1>{H.escape(title)}</h1>",
            f"<p class='ef-lead'>{_question_html(rep, golden_set)}</p>", _meta_html(rep, golden_set), "</header>",
            f"<nav class='ef-toc' aria-label='sections'>{toc}</nav>", _warnings_html(rep, level="h2")]
    body += [f"<section id='{i}'><h2>{H.escape(h)}</h2>\n{x}\n</section>" for i, h, x in sections]
    body.append(f"<footer>evalframe {H.escape(m.get('version', ''))}. Every number on this page is a cell of "
                "the Report's tables (<code>Report.to_csv</code>, <code>to_parquet</code>; the "
                "<code>csv/</code> and <code>parquet/</code> folders of <code>evalframe report --out</code>)."
                "</footer>")
    return H.document(title, "\n".join(body))


def _names(xs: Sequence[str]) -> str:
    xs = [f"<b>{H.escape(x)}</b>" for x in xs]
    return xs[0] if len(xs) == 1 else ", ".join(xs[:-1]) + " and " + xs[-1]


def _question_html(rep: ReportView, golden_set: str | None = None) -> str:
    m = rep.metadata
    on = (f"on the golden set {H.escape(golden_set)} ({m['n_questions']} questions)" if golden_set
          else f"on a golden set of {m['n_questions']} questions")
    measures = ", ".join(H.escape(x) for x in rep.measures)
    if len(rep.systems) == 1:
        return f"How well does {_names(rep.systems)} retrieve {on}, measured by {measures}?"
    if m.get("baseline"):
        others = [s for s in rep.systems if s != m["baseline"]]
        return (f"Do {_names(others)} retrieve better or worse than the baseline "
                f"{_names([m['baseline']])} {on}, measured by {measures}?")
    return f"How do {_names(rep.systems)} compare, pair by pair, {on}, measured by {measures}?"


def _method_html(rep: ReportView) -> str:
    m = rep.metadata
    out = H.escape(_intervals_sentence(m).capitalize())
    if not rep.comparisons.empty:
        out += f" Comparisons: {H.escape(test_description(rep))}."
    return out


def _meta_html(rep: ReportView, golden_set: str | None) -> str:
    m = rep.metadata
    ref = rep.reference
    systems = ", ".join(H.escape(s) + (" <span class='ef-tag'>baseline</span>" if s == m.get("baseline") else
                                       " <span class='ef-tag'>reference</span>" if s == ref else "")
                        for s in rep.systems)
    d = rep.diagnostics
    size = d.loc[d["check"] == "golden_set_size", "detail"].str.split(": ", n=1).str[-1]
    conv = m.get("conventions", {})
    gold = (H.escape(golden_set) + ", " if golden_set else "") + f"{m['n_questions']} questions"
    if "rel" in conv:
        gold += f"; a document is relevant when its label is at least {H.escape(conv['rel'])}"
    if len(size):
        gold += f" <span class='ef-muted'>({H.escape(str(size.iloc[0]))})</span>"
    method = H.escape(f"{m['confidence']:.0%} {m['interval']} intervals"
                      + (f", {m['n_resamples']} resamples" if m["interval"] in ("bootstrap", "bca") else ""))
    if not rep.comparisons.empty:
        method += "; " + H.escape(test_description(rep))
    rows = [(f"Systems ({len(rep.systems)})", systems), ("Golden set", gold),
            (f"Measures ({len(rep.measures)})", ", ".join(f"<code>{H.escape(x)}</code>" for x in rep.measures)),
            ("Method", method), ("Seed", H.escape(m.get("seed"))),
            ("Conventions", ", ".join(f"<code>{H.escape(k)}={H.escape(str(v))}</code>" for k, v in conv.items())),
            ("evalframe", H.escape(m.get("version", "")))]
    if m.get("fingerprints"):
        rows.append(("Fingerprints", "; ".join(f"{H.escape(k)} <code>{H.escape(v)}</code>"
                                               for k, v in fingerprint_lines(m["fingerprints"]))))
    return "<dl class='ef-meta'>" + "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in rows) + "</dl>"


def _warnings_html(rep: ReportView, level: str, collapsed: bool = False) -> str:
    """The warnings box; ``collapsed`` (the notebook view of a report whose warnings were
    issued as Python warnings): one line that opens to the list, so a notebook shows each
    warning once."""
    lines = warning_lines(rep)
    if not lines:
        return "<p class='ef-ok' id='warnings'>No warnings.</p>" if level == "h2" else ""
    items = "".join(f"<li>{H.escape(x)}</li>" for x in lines)
    n = len(lines)
    head = f"&#9888; {n} warning{'s' if n > 1 else ''}"
    if collapsed:
        return (f"<details class='ef-warnings' role='note' id='warnings'><summary>{head}, issued as Python "
                f"warning{'s' if n > 1 else ''} when this report was computed (<code>.warnings</code>)"
                f"</summary><ul>{items}</ul></details>")
    return f"<div class='ef-warnings' role='note' id='warnings'><{level}>{head}</{level}><ul>{items}</ul></div>"


def _summary_html(rep: ReportView, digits: int = 3) -> str:
    s = rep.summary
    marks = significance_marks(rep)
    ref = rep.reference
    systems, measures = rep.systems, rep.measures
    best = s.groupby("measure", sort=False)["mean"].max() if len(systems) > 1 else pd.Series(dtype=float)
    by = {(r.system, r.measure): r for r in s.itertuples(index=False)}
    n = s.groupby("system", sort=False)["n"].max()
    cols = [H.Column("system"), H.Column("n", numeric=True, title="questions in the means"),
            *[H.Column(mm, numeric=True) for mm in measures]]
    rows = []
    for sy in systems:
        tag = (" <span class='ef-tag'>baseline</span>" if sy == rep.metadata.get("baseline") else
               " <span class='ef-tag'>reference</span>" if sy == ref else "")
        cells: list = [H.escape(sy) + tag, str(int(n.get(sy, 0)))]
        for mm in measures:
            r = by.get((sy, mm))
            if r is None or pd.isna(r.mean):
                cells.append("")
                continue
            is_best = mm in best and np.isclose(r.mean, best[mm])
            mean = f"{r.mean:.{digits}f}"
            # text order "mean [low, high] ▲" (as in Markdown and text); the grid shows the
            # mark beside the mean and the interval on a line of its own
            cell = f"<span class='ef-mean'>{f'<strong>{mean}</strong>' if is_best else mean}</span>"
            if not pd.isna(r.ci_low):
                cell += f" <span class='ef-ci'>[{r.ci_low:.{digits}f}, {r.ci_high:.{digits}f}]</span>"
            mk = marks.get((sy, mm), "")
            if mk:
                word, cls, sym = ("above", "up", "▲") if mk == "+" else ("below", "down", "▼")
                cell += f" <span class='ef-mark ef-{cls}' title='significantly {word} {H.escape(ref)}'>{sym}</span>"
            cell = f"<span class='ef-cell'>{cell}</span>"
            cells.append((cell, "ef-best") if is_best else cell)
        rows.append(cells)
    m = rep.metadata
    notes = [f"Mean over the questions, its {m['confidence']:.0%} interval below it."]
    if len(systems) > 1:
        notes.append("Bold on a tint: the highest mean of the measure.")
    if ref and not rep.comparisons.empty:
        notes.append(f"▲ / ▼: significantly above / below {H.escape(ref)} ({H.escape(test_description(rep))}).")
    return H.table(cols, rows, caption=" ".join(notes), name="summary")


def _comparisons_html(rep: ReportView, digits: int = 3, limit: int | None = None) -> str:
    c = rep.comparisons
    more = len(c) - limit if limit is not None and len(c) > limit else 0
    c = c.head(limit) if more else c
    conf = f"{rep.metadata['confidence']:.0%}"
    cols = [H.Column("measure"), H.Column("system_a"), H.Column("system_b"), H.Column("n", numeric=True),
            H.Column("difference", numeric=True, title="mean of system_b - system_a over the paired questions"),
            H.Column(f"{conf} interval", numeric=True),
            H.Column("adjusted interval", numeric=True,
                     title="the interval adjusted for the same family of comparisons as p (see the caption)"),
            H.Column("p adjusted", numeric=True), H.Column("significant"), H.Column("effect size d_z", numeric=True, title="mean difference / sd of differences, with its interval (noncentral t)"),
            H.Column("wins / ties / losses", numeric=True, title="questions where system_b is higher / equal / lower")]
    rows, classes, prev = [], [], None
    adj_lo, adj_hi, adj_how = (list(x) for x in _adjusted_columns(c))
    for i, r in enumerate(c.itertuples(index=False)):
        sig = bool(r.significant)
        diff = f"{r.diff:+.{digits}f}"
        adjusted = ("" if pd.isna(adj_lo[i]) or str(adj_how[i]) == "none"
                    else f"[{adj_lo[i]:+.{digits}f}, {adj_hi[i]:+.{digits}f}]")
        if sig:
            diff = f"<span class='ef-{'up' if r.diff > 0 else 'down'}'>{diff}</span>"
        p = format_p(r.p_adjusted)
        rows.append([H.escape(r.measure), H.escape(r.system_a), H.escape(r.system_b), str(int(r.n)), diff,
                     "" if pd.isna(r.ci_low) else f"[{r.ci_low:+.{digits}f}, {r.ci_high:+.{digits}f}]",
                     adjusted, f"<span class='ef-sig'>{p}</span>" if sig else p, "yes" if sig else "no",
                     _effect_cell(r),
                     f"{int(r.wins)} / {int(r.ties)} / {int(r.losses)}"])
        classes.append("ef-group" if prev is not None and r.measure != prev else "")
        prev = r.measure
    cap = (f"difference = mean of system_b minus system_a over the questions both answered; {conf} "
           f"interval of it ({H.escape(', '.join(map(str, pd.unique(c['ci_method']))))}), unadjusted; "
           f"adjusted interval: {H.escape(', '.join(map(str, pd.unique(pd.Series(adj_how, dtype=object)))))}-adjusted "
           "for the same family of comparisons as p adjusted (read the two together: an unadjusted interval "
           f"clear of 0 next to a non-significant adjusted p is not a finding). {H.escape(procedure_note(c))} "
           f"p adjusted: {H.escape(test_description(rep))}; wins / ties / losses count the questions "
           "where system_b is higher / equal / lower.")
    if more:
        cap = f"The first {len(c)} of {len(c) + more} comparisons (all of them: <code>.comparisons</code>). " + cap
    return H.table(cols, rows, row_header=False, row_classes=classes, caption=cap, name="comparisons")


def _effect_cell(r) -> str:
    """d_z and, when the table has it (tables written before issue 33 do not), its interval."""
    if pd.isna(r.effect_size):
        return ""
    lo, hi = getattr(r, "effect_size_low", np.nan), getattr(r, "effect_size_high", np.nan)
    return f"{r.effect_size:+.2f}" + ("" if pd.isna(lo) else f" [{lo:+.2f}, {hi:+.2f}]")


def _changes_html(rep: ReportView, n: int = 3, digits: int = 3) -> str:
    c = rep.changes
    if c.empty:
        return ""
    first = rep.measures[0]
    c = c[(c["measure"] == first) & (c["rank"] <= n)]
    if c.empty:
        return ""
    text = "text" in c and c["text"].notna().any()
    cols = [H.Column("system_a"), H.Column("system_b"), H.Column("direction"), H.Column("query_id"),
            H.Column("value_a", numeric=True), H.Column("value_b", numeric=True), H.Column("difference", numeric=True)]
    if text:
        cols.append(H.Column("question", wrap=True))
    rows, classes, prev = [], [], None
    for r in c.itertuples(index=False):
        row = [H.escape(r.system_a), H.escape(r.system_b), H.escape(r.direction), H.escape(r.query_id),
               f"{r.value_a:.{digits}f}", f"{r.value_b:.{digits}f}", f"{r.diff:+.{digits}f}"]
        if text:
            t = r.text if isinstance(r.text, str) else ""
            row.append(f"<span title='{H.escape(t)}'>{H.escape(t if len(t) <= 90 else t[:87] + '...')}</span>")
        rows.append(row)
        classes.append("ef-group" if prev is not None and (r.system_a, r.system_b) != prev else "")
        prev = (r.system_a, r.system_b)
    return (f"<p>The {n} questions where {H.escape(first)} fell and rose most, per pair (every measure and "
            "more questions: the Report's <code>changes</code> table).</p>"
            + H.table(cols, rows, row_header=False, row_classes=classes, name="changes")
            + _rankings_html(rep, c, digits))


def _first_relevant_rank(t: pd.DataFrame, side: str, rel: int) -> int | None:
    """The first rank of side ``side`` ("a" or "b") of an explained pair whose label is
    >= ``rel`` (None: none within the kept depth)."""
    hit = t.loc[t[f"label_{side}"] >= rel, "rank"]
    return int(hit.min()) if len(hit) else None


def _rankings_html(rep: ReportView, c: pd.DataFrame, digits: int = 3) -> str:
    """For each top change shown, the two top-k lists side by side with their labels and
    the first relevant rank, collapsed (``<details>``); nothing when the report kept no
    rankings."""
    rk = getattr(rep, "rankings", None)
    if rk is None or rk.empty:
        return ""
    out = []
    for r in c.drop_duplicates(["system_a", "system_b", "query_id"]).itertuples(index=False):
        try:
            t = rep.explain(r.query_id, r.system_a, r.system_b)
        except ValueError:  # a ranking not kept (a file run's, or beyond the kept depth)
            continue
        if t.empty:
            continue
        rel = (rep.metadata.get("conventions") or {}).get("rel", 1)
        first = {name: _first_relevant_rank(t, side, rel) for side, name in (("a", r.system_a), ("b", r.system_b))}
        fr = "; ".join(f"first relevant of {H.escape(k)}: " + (str(v) if v is not None else f"not in the top {len(t)}")
                       for k, v in first.items())
        cols = [H.Column("rank", numeric=True), H.Column(f"{r.system_a}"), H.Column("label", numeric=True),
                H.Column(f"{r.system_b}"), H.Column("label", numeric=True)]
        lab = lambda v: "" if v != v else f"{v:g}"  # noqa: E731  (NaN: not judged)
        rows = [[str(x.rank), H.escape(x.doc_a), lab(x.label_a), H.escape(x.doc_b), lab(x.label_b)]
                for x in t.itertuples(index=False)]
        out.append(f"<details class='ef-explain'><summary>question {H.escape(r.query_id)}: "
                   f"{H.escape(r.system_a)} vs {H.escape(r.system_b)} ({fr})</summary>"
                   + H.table(cols, rows, row_header=False, name="explain") + "</details>")
    return "".join(out)


def _segments_html(rep: ReportView, digits: int = 3, limit: int = 60) -> str:
    seg = rep.by_segment
    flagged, rest = segment_flags(seg)
    how = ("A segment row is flagged when it is too small to judge (fewer than 20 questions) or "
           "below its system's overall mean after Benjamini-Hochberg across the segments of the "
           "system and measure (one-sided one-sample t-test).")
    segs = ", ".join(f"<code>{H.escape(x)}</code>" for x in pd.unique(seg["segment"]))
    head = (f"<p>{len(flagged)} of {len(seg)} segment rows flagged (segments: {segs}; {rest} not flagged). "
            f"{how}</p>")
    if flagged.empty:
        return head
    cols = [H.Column("system"), H.Column("segment"), H.Column("value"), H.Column("measure"),
            H.Column("n", numeric=True), H.Column("mean", numeric=True), H.Column("interval", numeric=True),
            H.Column("overall mean", numeric=True), H.Column("gap", numeric=True), H.Column("flags", wrap=True)]
    rows = [[H.escape(r.system), H.escape(r.segment), H.escape(r.segment_value), H.escape(r.measure),
             str(int(r.n)), f"{r.mean:.{digits}f}",
             "" if pd.isna(r.ci_low) else f"[{r.ci_low:.{digits}f}, {r.ci_high:.{digits}f}]",
             f"{r.overall_mean:.{digits}f}", f"{r.mean - r.overall_mean:+.{digits}f}", H.escape(r.flags)]
            for r in flagged.head(limit).itertuples(index=False)]
    more = (f" The first {limit} of {len(flagged)}; all of them: the Report's <code>by_segment</code> table."
            if len(flagged) > limit else "")
    return head + H.table(cols, rows, row_header=False, name="segments", caption=more or None)


def _stages_html(rep: ReportView, digits: int = 3) -> str:
    st = rep.stages
    cols = [H.Column("stage", numeric=True), H.Column("system"), H.Column("measure"), H.Column("k", numeric=True),
            H.Column("n", numeric=True), H.Column("mean", numeric=True), H.Column("interval", numeric=True),
            H.Column("ceiling", numeric=True, title="the first stage's recall at its k: the best a later stage can reach"),
            H.Column("share of ceiling", numeric=True), H.Column("lost", numeric=True)]
    rows = [[str(int(r.stage)), H.escape(r.system), H.escape(r.measure), str(int(r.k)), str(int(r.n)),
             f"{r.mean:.{digits}f}", "" if pd.isna(r.ci_low) else f"[{r.ci_low:.{digits}f}, {r.ci_high:.{digits}f}]",
             f"{r.ceiling:.{digits}f}", f"{r.share_of_ceiling:.1%}", f"{r.lost:.{digits}f}"]
            for r in st.itertuples(index=False)]
    return ("<p>Each stage's recall at its depth k against the ceiling the first stage sets: a later stage "
            "only reorders what the earlier one retrieved, so <i>lost</i> is what the pipeline cannot win back.</p>"
            + H.table(cols, rows, row_header=False, name="stages"))


_GRIDS = {"judged_at_k": ("Judged@k", "the share of each system's top k documents that has a label in the "
                                      "golden set (the rest count as not relevant); tinted: below the warning level"),
          "interval_half_width": ("Interval half-widths", "how far each mean may be off: half the width of its "
                                                          "interval")}


def _diagnostics_html(rep: ReportView, digits: int = 3) -> str:
    d = rep.diagnostics
    defs = d["check"].isin(["measure", "convention"])
    grids = d["check"].isin(list(_GRIDS))
    t = d[~defs & ~grids]
    t = pd.concat([t[t["level"] == "warning"], t[t["level"] != "warning"]])
    cols = [H.Column("level"), H.Column("check"), H.Column("system"), H.Column("measure"),
            H.Column("count", numeric=True), H.Column("value", numeric=True), H.Column("detail", wrap=True)]
    rows = [[H.escape(r.level), H.escape(r.check), H.escape(r.system), H.escape(r.measure),
             "" if pd.isna(r.count) else str(int(r.count)), "" if pd.isna(r.value) else f"{r.value:.{digits}f}",
             H.escape(r.detail)] for r in t.itertuples(index=False)]
    classes = ["ef-warning" if r.level == "warning" else "" for r in t.itertuples(index=False)]
    out = ("<p>What was counted, dropped and assumed, warnings first: the rows of the Report's "
           "<code>diagnostics</code> table (the per-system, per-measure rows as grids below).</p>"
           + H.table(cols, rows, row_header=False, row_classes=classes, name="diagnostics"))
    for check, (heading, words) in _GRIDS.items():
        g = d[d["check"] == check]
        if len(g):
            out += f"<h3>{heading}</h3>" + _grid_html(rep, g, check, words, digits)
    items = []
    for r in d[defs].itertuples(index=False):
        name, detail = (r.measure, str(r.detail)) if r.check == "measure" else (str(r.detail).split(": ", 1) + [""])[:2]
        items.append(f"<li><code>{H.escape(name)}</code>: {H.escape(detail)}</li>")
    if items:
        out += "<h3>Measures and conventions</h3><ul class='ef-defs'>" + "".join(items) + "</ul>"
    return out


def _grid_html(rep: ReportView, rows: pd.DataFrame, check: str, words: str, digits: int) -> str:
    """Diagnostics rows of one check as a systems x measures grid of their ``value``
    (warning rows tinted)."""
    by = {(r.system, r.measure): r for r in rows.itertuples(index=False)}
    systems = [s for s in rep.systems if any(k[0] == s for k in by)]
    measures = list(dict.fromkeys(rows["measure"]))
    cells = []
    for sy in systems:
        row: list = [H.escape(sy)]
        for mm in measures:
            r = by.get((sy, mm))
            v = "" if r is None or pd.isna(r.value) else f"{r.value:.{digits}f}"
            row.append((v, "ef-warn-cell") if r is not None and r.level == "warning" else v)
        cells.append(row)
    return H.table([H.Column("system"), *[H.Column(mm, numeric=True) for mm in measures]], cells,
                   caption=f"The diagnostics rows <code>{check}</code>: {words}.", name=check)


def _figure_html(spec: PlotSpec, prefix: str, *, wide: bool | None = None, png=None) -> str:
    wide = spec.name in ("forest", "segment_forest", "segments") if wide is None else wide
    # half-width figures are drawn a fifth smaller, so their text is not shrunk as much on screen
    size = spec.figsize if wide else (spec.figsize[0] * 0.8, spec.figsize[1] * 0.8)
    try:
        svg = H.svg_figure(spec.draw, size, prefix=f"ef-{prefix}-{spec.name}", label=spec.caption, png=png)
    except ImportError:  # matplotlib is a dependency; a trimmed install still gets the tables
        return f"<figure><figcaption>(not drawn: matplotlib is not installed) {H.escape(spec.caption)}</figcaption></figure>"
    return (f"<figure id='{prefix}-{spec.name}'{' class=ef-wide' if wide else ''}><div class='ef-plot'>{svg}</div>"
            f"<figcaption>{H.escape(spec.caption)}</figcaption></figure>")


def _howto_html(rep: ReportView) -> str:
    m = rep.metadata
    conf = f"{m['confidence']:.0%}"
    alpha = f"{rep.alpha:g}"
    items = [
        ("The interval",
         f"Each mean comes with a {conf} interval ({H.escape(m['interval'])}): the range of means the "
         f"questions are compatible with. A new golden set drawn the same way would give a different mean; "
         f"about {conf} of such intervals hold the true mean. Wide intervals mean too few questions, "
         "not a bad system."),
        ("The difference and its interval",
         "A comparison pairs the two systems question by question. When the interval of the difference "
         "excludes 0, the data point to a real difference in that direction; its width says how large "
         "the difference may be. Two summary intervals that overlap can still give a clear paired difference."),
        ("The adjusted p",
         f"The chance of a difference at least this large if the systems were equally good, "
         f"corrected for testing many pairs and measures at once "
         f"({H.escape(test_description(rep)) if not rep.comparisons.empty else 'no comparisons here'}). "
         f"Below {alpha}: significant (▲ / ▼ in the summary). A large p is not evidence that the systems are "
         "equal; it says these questions cannot tell them apart."),
        ("The effect size and wins / ties / losses",
         "d_z is the mean difference divided by the spread of the per-question differences (around 0.2 "
         "small, 0.5 medium, 0.8 large), its interval beside it (the noncentral t: how precisely these "
         "questions pin it down); wins / ties / losses count the questions where system_b scores "
         "higher, the same or lower: a small mean gain can hide many losses."),
        ("The unjudged share (Judged@k)",
         "Documents that nobody judged count as not relevant. Judged@k is the share of the top k that "
         "has a label: where it is low, scores are lower bounds, and systems that retrieve documents the "
         "judges never saw (often the new ones) are penalised most. Judging the pooled top documents of "
         "every system fixes it."),
        ("Segments, stages, diagnostics",
         "A flagged segment is a group of questions where a system does worse than on the whole set; "
         "segments with fewer than 20 questions are too small to judge. Pipeline stages show how much of "
         "the first stage's recall the last stage keeps. The diagnostics list every question dropped or "
         "scored 0, ties and the conventions used, so the numbers can be reproduced."),
    ]
    return "<dl class='ef-howto'>" + "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in items) + "</dl>"


def segment_flags(seg: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    """The flagged rows of a by-segment table, with a ``flags`` column in words, and the
    number of rows not flagged.

    A row is flagged when it is too small to judge (``too_small``) or below the overall mean
    after Benjamini-Hochberg across the segments of its (system, measure)
    (``below_overall_bh``, from the one-sided one-sample t-test ``p_below``). A segment too
    small to judge is only that: it is not also called below overall (its mean is too
    uncertain to say so). Flagged rows come in table order.
    """
    small = seg["too_small"].astype(bool).to_numpy()
    below = (seg["below_overall_bh"].astype(bool).to_numpy() if "below_overall_bh" in seg
             else seg["below_overall"].astype(bool).to_numpy()) & ~small
    pbh = seg["p_below_bh"].to_numpy(dtype=float) if "p_below_bh" in seg else np.full(len(seg), np.nan)
    words = [", ".join(w for w, on in (("too small to judge", s_), (f"below overall (BH p={p:.3g})"
                                      if p == p else "below overall", b)) if on)
             for s_, b, p in zip(small, below, pbh)]
    keep = small | below
    return seg.assign(flags=words)[keep].reset_index(drop=True), int((~keep).sum())


def changes_view(rep: ReportView, digits: int = 3, n: int = 5) -> pd.DataFrame:
    """The top ``n`` regressions and improvements of every (pair, measure) of the ``changes``
    table: ``system_a, system_b, measure, direction, query_id, value_a, value_b, diff`` and
    ``text`` when the report has question texts (cut to 60 characters)."""
    c = rep.changes
    cols = ["system_a", "system_b", "measure", "direction", "query_id", "value_a", "value_b", "diff"]
    if c.empty:
        return pd.DataFrame(columns=cols)
    c = c[c["rank"] <= n]
    if c["text"].notna().any():
        c = c.assign(text=[t if not isinstance(t, str) or len(t) <= 60 else t[:57] + "..."
                           for t in c["text"]])
        cols = [*cols, "text"]
    return _round(c[cols].reset_index(drop=True), digits)



# ------------------------------------------------------------------------ Markdown
def fingerprint_lines(fp: Mapping[str, object]) -> list[tuple[str, str]]:
    """(what, hash) pairs of a report's fingerprints, for display."""
    out = [("golden set", str(fp.get("golden_set")))]
    out += [(f"run {name}", str(h)) for name, h in (fp.get("runs") or {}).items()]
    if fp.get("chunks"):
        out.append(("chunks", str(fp["chunks"])))
    out += [("conventions", str(fp.get("conventions"))), ("measures", str(fp.get("measures"))),
            ("evalframe", str(fp.get("evalframe_version")))]
    return out


def to_markdown(rep: ReportView, digits: int = 3) -> str:
    """The report as Markdown (pipe tables; no ``tabulate`` needed)."""
    m = rep.metadata
    lines = ["# evalframe report", "",
             f"{len(m['systems'])} system(s), {m['n_questions']} questions, evalframe {m['version']}; "
             + _intervals_sentence(m), ""]
    if len(rep.warnings):
        lines += ["## Warnings", ""]
        lines += [f"- {md_text(x)}" for x in warning_lines(rep)]
        lines.append("")
    lines += ["## Summary", "", pipe_table(summary_wide(rep, digits).reset_index()), ""]
    labels = label_lines(rep)
    if labels:
        lines += ["## Model labels and unjudged documents", ""] + [f"- {x}" for x in labels] + [""]
    ref = rep.reference
    if ref and not rep.comparisons.empty:
        lines += [f"▲ / ▼: significantly above / below `{ref}` ({test_description(rep)}).", "",
                  "## Comparisons", "", pipe_table(comparisons_view(rep, digits)), "", interval_note(rep), ""]
    st = rep.stages
    if not st.empty:
        lines += ["## Pipeline stages", "", pipe_table(_round(st, digits)), ""]
    ch = changes_view(rep, digits)
    if len(ch):
        lines += ["## Top regressions and improvements", "", pipe_table(ch), ""]
    seg = rep.by_segment
    if not seg.empty:
        flagged, rest = segment_flags(seg)
        lines += ["## Segments", "", f"{len(flagged)} of {len(seg)} segment rows flagged "
                  "(too small to judge; below overall after Benjamini-Hochberg across segments).", ""]
        if len(flagged):
            v = flagged.assign(**{"mean [CI]": [_fmt_ci(a, b, c, digits) for a, b, c in
                                                zip(flagged["mean"], flagged["ci_low"], flagged["ci_high"])]})
            lines += [pipe_table(_round(
                v[["system", "segment", "segment_value", "measure", "n", "mean [CI]", "overall_mean",
                   "flags"]], digits)), ""]
        lines += [f"{rest} segments not flagged.", ""]
    d = rep.diagnostics
    lines += ["## Diagnostics", "", pipe_table(_round(
        d[~d["check"].isin(["measure", "convention"])].drop(columns=["action", "examples"], errors="ignore"),
        digits)), "",
        "## Measures and conventions", ""]
    lines += [f"- `{r.measure if isinstance(r.measure, str) else r.system}`: {r.detail}"
              for r in d[d["check"].isin(["measure", "convention"])].itertuples(index=False)]
    if m.get("fingerprints"):
        lines += ["", "## Fingerprints", ""]
        lines += [f"- {md_text(k)}: `{v}`" for k, v in fingerprint_lines(m["fingerprints"])]
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------ LaTeX
def to_latex(rep: ReportView, *, digits: int = 3, caption: str | None = None, label: str = "tab:evalframe",
             intervals: bool = False) -> str:
    """The summary as a booktabs LaTeX table: systems x measures, best value bold,
    significance markers (test and correction named in the caption); no jinja2."""
    s = rep.summary
    marks = significance_marks(rep)
    systems, measures = rep.systems, rep.measures
    means = s.pivot(index="system", columns="measure", values="mean")
    best = {mm: means[mm].max() for mm in measures if mm in means}
    rows = []
    for sy in systems:
        cells = [_tex(sy)]
        for mm in measures:
            r = s[(s["system"] == sy) & (s["measure"] == mm)]
            if r.empty:
                cells.append("--")
                continue
            r = r.iloc[0]
            v = f"{r['mean']:.{digits}f}"
            if np.isclose(r["mean"], best[mm]):
                v = f"\\textbf{{{v}}}"
            mk = marks.get((sy, mm))
            if mk:
                v += "$^{\\dagger}$" if mk == "+" else "$^{\\ddagger}$"
            if intervals:
                v += f" {{\\scriptsize [{r['ci_low']:.{digits}f}, {r['ci_high']:.{digits}f}]}}"
            cells.append(v)
        rows.append(" & ".join(cells) + r" \\")
    n = int(s["n"].max()) if len(s) else 0
    cap = caption or (f"Means over {n} questions (best in bold).")
    ref = rep.reference
    if ref and not rep.comparisons.empty:
        cap += (f" $\\dagger$ / $\\ddagger$: significantly better / worse than {_tex(ref)} "
                f"({_tex(test_description(rep))}).")
    head = " & ".join(["System", *[_tex(mm) for mm in measures]]) + r" \\"
    return "\n".join([
        r"\begin{table}[t]", r"\centering", f"\\caption{{{cap}}}", f"\\label{{{label}}}",
        r"\begin{tabular}{l" + "r" * len(measures) + "}", r"\toprule", head, r"\midrule",
        *rows, r"\bottomrule", r"\end{tabular}", r"\end{table}", ""])


#: diagnostics checks shown under the summary: provenance, PPI and the bounds for the unjudged
LABEL_CHECKS = ("labels_by_judge", "model_labels_at_k", "ppi", "unjudged_bounds")


def label_lines(rep: ReportView) -> list[str]:
    """The details of the report's provenance, PPI and bounds rows (:data:`LABEL_CHECKS`), in
    that order: empty for a report without model labels, ``human_qrels`` or ``unjudged="bounds"``."""
    d = rep.diagnostics
    rows = d[d["check"].isin(LABEL_CHECKS)]
    order = np.argsort([LABEL_CHECKS.index(c) for c in rows["check"]], kind="stable")
    return [str(x) for x in rows["detail"].to_numpy()[order]]


# ------------------------------------------------------------------------ text
def text_tables(rep: ReportView, digits: int = 3, *, changes: int = 1, warnings: bool = True) -> str:
    """Aligned plain-text report, to fit a screen (the CLI's terminal output): summary,
    comparisons, stages, segments, warnings, then the top changes.

    ``changes``: rows of top changes per (pair, measure) and direction; 1 (the default)
    puts the largest regression and the largest improvement of each (pair, measure) on
    one line, 0 leaves them out (the ``changes`` table and report.html hold them all).
    ``warnings``: list the report's warnings (the command leaves them out: it has shown
    each one on standard error already).

    Examples
    --------
    >>> import warnings
    >>> import evalframe as ef
    >>> from evalframe.report import text_tables
    >>> sso = ef.datasets.load_sso()
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     rep = ef.report(sso.runs, sso.qrels, n_resamples=200, seed=0)
    >>> text_tables(rep).splitlines()[0]
    'Summary (mean [95% interval], bootstrap)'
    """
    if isinstance(changes, bool) or not isinstance(changes, int) or changes < 0:
        raise ValueError(f"text_tables: changes must be an int >= 0, got {changes!r}")
    m = rep.metadata
    out = ["Summary (mean [%d%% interval], %s%s)" % (round(100 * m["confidence"]), m["interval"],
                                                     ", documents are pages" if m.get("unit") == "page" else ""),
           summary_wide(rep, digits).to_string()]
    labels = label_lines(rep)
    if labels:
        out += ["", "Model labels and unjudged documents"] + [f"- {x}" for x in labels]
    ref = rep.reference
    if ref and not rep.comparisons.empty:
        out += ["", f"Comparisons (▲/▼ above: significantly above/below {ref}; {test_description(rep)})",
                comparisons_view(rep, digits).to_string(index=False), interval_note(rep)]
    st = rep.stages
    if not st.empty:
        out += ["", "Pipeline stages", _round(st, digits).to_string(index=False)]
    seg = rep.by_segment
    if not seg.empty:
        fl, rest = segment_flags(seg)
        out += ["", f"Segments: {len(seg)} rows, {len(fl)} flagged "
                f"(intervals: {', '.join(map(str, pd.unique(seg['method'])))}; below overall: one-sided "
                "t-test, Benjamini-Hochberg across segments)"]
        if len(fl):
            out.append(_round(fl[["system", "segment", "segment_value", "measure", "n", "mean",
                                  "overall_mean", "flags"]], digits).head(40).to_string(index=False))
    if warnings and len(rep.warnings):
        lines = warning_lines(rep)
        out += ["", f"Warnings ({len(lines)})"] + [f"- {x}" for x in lines]
    if changes:
        ch = changes_view(rep, digits, n=changes) if changes > 1 else changes_line_view(rep, digits)
        if len(ch):
            title = ("Top regression and improvement per pair and measure (more: --changes N)"
                     if changes == 1 else "Top regressions and improvements")
            out += ["", title, ch.to_string(index=False)]
    return "\n".join(out) + "\n"


def changes_line_view(rep: ReportView, digits: int = 3) -> pd.DataFrame:
    """One line per (pair, measure): its largest regression and largest improvement, as
    ``question: value_a -> value_b`` (empty when there is none)."""
    c = rep.changes
    cols = ["system_a", "system_b", "measure", "largest regression", "largest improvement"]
    if c.empty:
        return pd.DataFrame(columns=cols)
    c = c[c["rank"] == 1]
    fmt = f"{{:.{digits}f}}"
    c = c.assign(cell=[f"{q}: {fmt.format(a)} -> {fmt.format(b)}"
                       for q, a, b in zip(c["query_id"], c["value_a"], c["value_b"])])
    key = ["system_a", "system_b", "measure"]
    wide = c.pivot_table(index=key, columns="direction", values="cell", aggfunc="first", sort=False)
    out = wide.reindex(columns=["regression", "improvement"]).fillna("").reset_index()
    return out.rename(columns={"regression": "largest regression", "improvement": "largest improvement"})[cols]


def pipe_table(df: pd.DataFrame) -> str:
    """A GitHub pipe table written by hand (numbers right-aligned, ``|`` escaped).

    Examples
    --------
    >>> import pandas as pd
    >>> from evalframe.report import pipe_table
    >>> print(pipe_table(pd.DataFrame({"system": ["bm25", "a|b"], "mean": [0.25, 0.5]})))
    | system | mean |
    | ------ | ---: |
    | bm25   | 0.25 |
    | a\\|b   |  0.5 |
    """
    cols = [str(c) for c in df.columns]
    num = [pd.api.types.is_numeric_dtype(df[c].dtype) and not pd.api.types.is_bool_dtype(df[c].dtype)
           for c in df.columns]
    rows = [[_cell(v) for v in r] for r in df.itertuples(index=False)]
    width = [max([len(c), 3] + [len(r[i]) for r in rows]) for i, c in enumerate(cols)]

    def line(cells):
        return "| " + " | ".join(c.rjust(w) if nm else c.ljust(w) for c, w, nm in zip(cells, width, num)) + " |"
    sep = "| " + " | ".join(("-" * (w - 1) + ":") if nm else "-" * w for w, nm in zip(width, num)) + " |"
    return "\n".join([line(cols), sep, *[line(r) for r in rows]])


# ------------------------------------------------------------------------ cells
def _fmt_ci(mean, lo, hi, digits: int = 3, signed: bool = False) -> str:
    f = f"{{:{'+' if signed else ''}.{digits}f}}"
    if mean is None or (isinstance(mean, float) and math.isnan(mean)):
        return ""
    if lo is None or hi is None or (isinstance(lo, float) and math.isnan(lo)) or pd.isna(lo):
        return f.format(mean)
    g = f"{{:.{digits}f}}"
    return f"{f.format(mean)} [{g.format(lo)}, {g.format(hi)}]"


def format_p(p) -> str:
    """A p-value in 3 decimals, ``"<0.001"`` below that, ``""`` when missing."""
    if p is None or pd.isna(p):
        return ""
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def _round(df: pd.DataFrame, digits: int = 3) -> pd.DataFrame:
    out = df.copy()
    for c in out.columns:
        if pd.api.types.is_float_dtype(out[c].dtype):
            out[c] = out[c].round(digits)
    return out


#: a "<" that could open inline HTML in Markdown (a tag, a closing tag, a comment)
_MD_TAG = re.compile(r"<(?=[A-Za-z/!?])")


def md_text(text: str) -> str:
    """Text (a name, a warning) made inert in Markdown: a ``<`` that could open an HTML tag
    is written ``&lt;`` (viewers that pass inline HTML show it as text), so a system named
    ``<script>...`` is not live HTML in report.md; ``p < 0.05`` is left alone."""
    return _MD_TAG.sub("&lt;", text)


def _cell(v) -> str:
    if v is None or (not isinstance(v, str) and pd.isna(v)):
        return ""
    if isinstance(v, (float, np.floating)):
        return f"{v:.4g}"
    return md_text(str(v)).replace("|", "\\|").replace("\n", " ")


_TEX = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
        "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}


def _tex(s: str) -> str:
    return "".join(_TEX.get(ch, ch) for ch in str(s))
