"""A Report as HTML: the notebook view (:func:`to_html`) and the self-contained page
(:func:`to_html_page`), section by section, from the building blocks of :mod:`.html`.
"""
from __future__ import annotations

from pathlib import Path

from typing import Sequence

import numpy as np
import pandas as pd

from . import html as H
from .figures import PlotSpec, plot_specs
from .views import (
    ReportView,
    adjusted_columns,
    fingerprint_lines,
    format_p,
    intervals_sentence,
    label_lines,
    procedure_note,
    segment_flags,
    significance_marks,
    test_description,
    warning_lines,
)


# ------------------------------------------------------------------------ HTML
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
    >>> from evalframe.reporting.render_html import to_html_page
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
    out = H.escape(intervals_sentence(m).capitalize())
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
    adj_lo, adj_hi, adj_how = (list(x) for x in adjusted_columns(c))
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
