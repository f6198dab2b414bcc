"""HTML building blocks for the report: one stylesheet, tables written by hand, plots as
inline SVG, the page around them.

Nothing here knows a Report (:mod:`.render_html` composes the sections). What comes out is
self-contained: no script, no external address (no CDN, no font, no image file); plots are
drawn by :mod:`evalframe.plots` into an inline ``<svg>`` with matplotlib's SVG backend
(matplotlib is imported when a plot is drawn, never at import; pyplot is not used, so
nothing touches the caller's figures or backend).

Colours: ink and rules read JupyterLab's theme variables (``--jp-content-font-color1``,
``--jp-border-color2`` ...) with light fallbacks, so the notebook view follows JupyterLab's
light and dark themes; the stand-alone page (``.ef-page``) picks dark fallbacks under
``prefers-color-scheme: dark`` and prints black on white (``@media print``). Accents are
the Okabe-Ito blue and vermillion of :data:`evalframe.plots.PALETTE`.
"""
from __future__ import annotations

import io
import re
from dataclasses import dataclass
from html import escape as _escape
from typing import Callable, Sequence

CSS = """
.evalframe-report {
  --ef-fg: var(--jp-content-font-color1, #1f2328);
  --ef-muted: var(--jp-content-font-color2, #57606a);
  --ef-bg: var(--jp-layout-color0, #ffffff);
  --ef-head: var(--jp-layout-color2, #eef1f4);
  --ef-stripe: var(--jp-layout-color1, #f8f9fa);
  --ef-rule: var(--jp-border-color2, #d8dee4);
  --ef-rule-strong: var(--jp-border-color1, #8c959f);
  --ef-accent: var(--jp-brand-color1, #0072B2);
  --ef-up: var(--jp-brand-color1, #0072B2);
  --ef-down: var(--jp-warn-color1, #D55E00);
  --ef-warn: var(--jp-warn-color1, #D55E00);
  --ef-warn-bg: rgba(213, 94, 0, 0.10);
  --ef-best-bg: rgba(0, 114, 178, 0.13);
  color: var(--ef-fg);
  font-family: var(--jp-content-font-family, system-ui, -apple-system, "Segoe UI", Roboto,
               "Helvetica Neue", Arial, sans-serif);
  font-size: 14px;
  line-height: 1.45;
}
.evalframe-report h1 { font-size: 1.6em; margin: 0 0 0.3em; }
.evalframe-report h2 { font-size: 1.25em; margin: 1.6em 0 0.4em; padding-bottom: 0.2em;
  border-bottom: 1px solid var(--ef-rule); }
.evalframe-report h3 { font-size: 1.05em; margin: 1.1em 0 0.3em; }
.evalframe-report p { margin: 0.35em 0 0.6em; }
.evalframe-report .ef-lead { font-size: 1.12em; margin: 0.2em 0 0.8em; }
.evalframe-report .ef-note, .evalframe-report .ef-muted { color: var(--ef-muted); font-size: 0.92em; }
.evalframe-report code { font-family: var(--jp-code-font-family, ui-monospace, SFMono-Regular, Menlo,
  Consolas, monospace); font-size: 0.92em; }
.evalframe-report dl.ef-meta { display: grid; grid-template-columns: max-content 1fr; gap: 0.15em 1.2em;
  margin: 0.4em 0 1em; }
.evalframe-report dl.ef-meta dt { color: var(--ef-muted); font-weight: 600; }
.evalframe-report dl.ef-meta dd { margin: 0; }
.evalframe-report nav.ef-toc { font-size: 0.92em; margin: 0.6em 0 1em; }
.evalframe-report nav.ef-toc a { color: var(--ef-accent); text-decoration: none; margin-right: 1em;
  white-space: nowrap; }
.evalframe-report .ef-warnings { border-left: 4px solid var(--ef-warn); background: var(--ef-warn-bg);
  padding: 0.5em 0.9em; margin: 0.8em 0 1em; border-radius: 0 4px 4px 0; }
.evalframe-report .ef-warnings h2, .evalframe-report .ef-warnings h3 { border: 0; margin: 0.1em 0 0.2em;
  color: var(--ef-warn); font-size: 1.05em; }
.evalframe-report .ef-warnings ul { margin: 0.2em 0; padding-left: 1.2em; }
.evalframe-report details.ef-warnings summary { color: var(--ef-warn); font-weight: 600; cursor: pointer; }
.evalframe-report .ef-ok { color: var(--ef-muted); }
.evalframe-report .ef-scroll { overflow-x: auto; max-width: 100%; }
.evalframe-report table.ef-table { border-collapse: collapse; border: 0; margin: 0.3em 0 0.5em;
  table-layout: auto; font-size: 0.95em; font-variant-numeric: tabular-nums; color: var(--ef-fg); }
.evalframe-report table.ef-table caption { caption-side: bottom; text-align: left; color: var(--ef-muted);
  font-size: 0.9em; padding-top: 0.35em; }
.evalframe-report table.ef-table th, .evalframe-report table.ef-table td { padding: 0.28em 0.65em;
  border: 0; border-bottom: 1px solid var(--ef-rule); text-align: left; vertical-align: top;
  max-width: none; white-space: nowrap; background: transparent; color: inherit; }
.evalframe-report table.ef-table thead th { background: var(--ef-head); border-bottom: 2px solid
  var(--ef-rule-strong); font-weight: 600; vertical-align: bottom; }
.evalframe-report table.ef-table tbody tr:nth-child(odd), .evalframe-report table.ef-table tbody
  tr:nth-child(even) { background: transparent; }
.evalframe-report table.ef-table tbody tr:hover { background: var(--ef-stripe); }
.evalframe-report table.ef-table tbody th { font-weight: 600; }
.evalframe-report table.ef-table .ef-num { text-align: right; }
.evalframe-report table.ef-table .ef-wrap { white-space: normal; min-width: 24em; max-width: 40em; }
.evalframe-report table.ef-table tr.ef-group td, .evalframe-report table.ef-table tr.ef-group th {
  border-top: 2px solid var(--ef-rule-strong); }
.evalframe-report table.ef-table tr.ef-warning td, .evalframe-report table.ef-table tr.ef-warning th {
  background: var(--ef-warn-bg); }
.evalframe-report table.ef-table td.ef-best { background: var(--ef-best-bg);
  background: color-mix(in srgb, var(--ef-accent) 17%, transparent); }
.evalframe-report table.ef-table td.ef-warn-cell { background: var(--ef-warn-bg); color: var(--ef-warn);
  font-weight: 600; }
.evalframe-report .ef-best strong { font-weight: 700; }
.evalframe-report .ef-cell { display: inline-grid; grid-template-columns: auto 1.1em; column-gap: 0.15em;
  justify-items: end; align-items: baseline; }
.evalframe-report .ef-cell .ef-mean { grid-column: 1; grid-row: 1; }
.evalframe-report .ef-cell .ef-mark { grid-column: 2; grid-row: 1; justify-self: start; }
.evalframe-report .ef-ci { grid-column: 1; grid-row: 2; color: var(--ef-muted); font-size: 0.86em; }
.evalframe-report .ef-up { color: var(--ef-up); font-weight: 700; }
.evalframe-report .ef-down { color: var(--ef-down); font-weight: 700; }
.evalframe-report .ef-sig { font-weight: 700; }
.evalframe-report .ef-tag { display: inline-block; font-size: 0.75em; font-weight: 600; padding: 0 0.45em;
  margin-left: 0.2em; border: 1px solid var(--ef-rule-strong); border-radius: 0.8em; color: var(--ef-muted);
  vertical-align: 0.1em; }
.evalframe-report .ef-figures { display: grid; grid-template-columns: repeat(auto-fit, minmax(440px, 1fr));
  gap: 1em 1.4em; align-items: start; }
.evalframe-report figure { margin: 0.4em 0 0.8em; }
.evalframe-report figure.ef-wide { grid-column: 1 / -1; }
.evalframe-report figure .ef-plot { background: #ffffff; border: 1px solid var(--ef-rule); border-radius: 4px;
  padding: 4px; display: inline-block; max-width: 100%; box-sizing: border-box; }
.evalframe-report figure svg { display: block; max-width: 100%; height: auto; }
.evalframe-report figcaption { color: var(--ef-muted); font-size: 0.9em; margin-top: 0.3em; max-width: 60em; }
.evalframe-report .ef-howto dt { font-weight: 600; margin-top: 0.5em; }
.evalframe-report .ef-howto dd { margin: 0.1em 0 0.3em 1.2em; max-width: 60em; }
.evalframe-report ul.ef-defs { padding-left: 1.2em; margin: 0.3em 0; }
.evalframe-report footer { margin-top: 2em; color: var(--ef-muted); font-size: 0.88em;
  border-top: 1px solid var(--ef-rule); padding-top: 0.5em; }

.evalframe-report.ef-compact { font-size: 13px; }
.evalframe-report.ef-compact h3 { font-size: 1.02em; margin: 0.9em 0 0.25em; }
.evalframe-report.ef-compact figure .ef-plot { max-width: 640px; }

@media print {
  html.ef-page, html.ef-page body { background: #ffffff; }
  .evalframe-report, .evalframe-report.ef-page { --ef-fg: #000000; --ef-muted: #3d3d3d; --ef-head: #eeeeee;
    --ef-stripe: transparent; --ef-rule: #bbbbbb; --ef-rule-strong: #555555; --ef-accent: #000000;
    --ef-up: #0072B2; --ef-down: #D55E00; --ef-warn: #D55E00; --ef-warn-bg: #fff1e8;
    --ef-best-bg: #e3eff7; font-size: 9.5pt; max-width: none; padding: 0; }
  .evalframe-report * { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
  .evalframe-report nav.ef-toc { display: none; }
  .evalframe-report .ef-scroll { overflow: visible; }
  .evalframe-report h2, .evalframe-report h3 { break-after: avoid; page-break-after: avoid; }
  .evalframe-report table.ef-table thead { display: table-header-group; }
  .evalframe-report table.ef-table tr { break-inside: avoid; page-break-inside: avoid; }
  .evalframe-report table.ef-table tbody tr:hover { background: transparent; }
  .evalframe-report figure, .evalframe-report .ef-warnings { break-inside: avoid; page-break-inside: avoid; }
  .evalframe-report .ef-figures { display: block; }
  .evalframe-report figure svg { max-height: 190mm; width: auto; max-width: 100%; }
  .evalframe-report .ef-howto dt { break-after: avoid; page-break-after: avoid; }
}
"""

#: What only the stand-alone page adds: its own background, width, dark fallbacks, paper size.
PAGE_CSS = """
html.ef-page, html.ef-page body { background: #ffffff; }
html.ef-page body { margin: 0; }
.evalframe-report.ef-page { max-width: 1180px; margin: 0 auto; padding: 1.6em 2em 2.5em; }
@media (prefers-color-scheme: dark) {
  html.ef-page, html.ef-page body { background: #0d1117; }
  .evalframe-report.ef-page { --ef-fg: #e6edf3; --ef-muted: #9da7b3; --ef-head: #161b22; --ef-stripe: #161b22;
    --ef-rule: #30363d; --ef-rule-strong: #6e7681; --ef-accent: #56B4E9; --ef-up: #56B4E9;
    --ef-down: #F0894F; --ef-warn: #F0894F; --ef-warn-bg: rgba(240, 137, 79, 0.14);
    --ef-best-bg: rgba(86, 180, 233, 0.16); }
}
@media (max-width: 700px) {
  .evalframe-report.ef-page { padding: 1em 0.8em; }
  .evalframe-report .ef-figures { grid-template-columns: 1fr; }
}
@page { size: A4; margin: 14mm 12mm; }
"""


@dataclass(frozen=True)
class Column:
    """One column of :func:`table`: its header text, whether it holds numbers (right
    aligned), a tooltip, and ``wrap`` for long text cells."""

    name: str
    numeric: bool = False
    title: str | None = None
    wrap: bool = False


def escape(value: object) -> str:
    """``value`` as HTML text (``None`` and NaN as an empty cell)."""
    if value is None or (isinstance(value, float) and value != value):
        return ""
    return _escape(str(value), quote=True)


def table(columns: Sequence[Column], rows: Sequence[Sequence[str | tuple[str, str]]], *, row_header: bool = True,
          row_classes: Sequence[str] | None = None, caption: str | None = None, name: str | None = None) -> str:
    """A table of pre-rendered (escaped) cells.

    One header row; the first cell of a row is its ``<th scope="row">`` when ``row_header``.
    A cell is HTML, or ``(html, css_class)`` (``ef-best``: the best value of its column).
    ``row_classes`` per row: ``ef-group`` opens a group with a rule, ``ef-warning`` tints
    the row. ``caption`` is HTML; ``name`` sets ``data-table`` (what tests and scripts
    find the table by).

    Examples
    --------
    >>> from evalframe.reporting.html import Column, escape, table
    >>> t = table([Column("system"), Column("R@5", numeric=True)],
    ...           [[escape("bm25"), "0.297"], [escape("a<b"), ("0.325", "ef-best")]], name="summary")
    >>> "<th scope='row'>a&lt;b</th><td class='ef-num ef-best'>0.325</td>" in t
    True
    """
    head = "".join(
        f"<th scope='col'{_cls(c)}" + (f" title='{escape(c.title)}'" if c.title else "") + f">{escape(c.name)}</th>"
        for c in columns)
    body = []
    for i, cells in enumerate(rows):
        rc = row_classes[i] if row_classes is not None and row_classes[i] else ""
        tds = []
        for j, (c, v) in enumerate(zip(columns, cells)):
            v, extra = v if isinstance(v, tuple) else (v, "")
            tag = "th scope='row'" if j == 0 and row_header else "td"
            tds.append(f"<{tag}{_cls(c, extra)}>{v}</{tag[:2]}>")
        body.append((f"<tr class='{rc}'>" if rc else "<tr>") + "".join(tds) + "</tr>")
    cap = f"<caption>{caption}</caption>" if caption else ""
    data = f" data-table='{escape(name)}'" if name else ""
    return (f"<div class='ef-scroll'><table class='ef-table'{data}>{cap}<thead><tr>{head}</tr></thead>"
            f"<tbody>{''.join(body)}</tbody></table></div>")


def _cls(c: Column, extra: str = "") -> str:
    names = " ".join(n for n, on in (("ef-num", c.numeric), ("ef-wrap", c.wrap), (extra, bool(extra))) if on)
    return f" class='{names}'" if names else ""


_SVG_DROP = [re.compile(p, re.S) for p in (r"<\?xml.*?\?>\s*", r"<!DOCTYPE.*?>\s*", r"<metadata>.*?</metadata>\s*",
                                            r'\s+xmlns(:\w+)?="[^"]*"')]


def svg_figure(draw: Callable[[object], object], figsize: tuple[float, float], *, prefix: str,
               label: str = "", png: "tuple[object, tuple[float, float], int] | None" = None) -> str:
    """Draw ``draw(ax)`` on a new matplotlib figure and return it as inline ``<svg>`` markup.

    Text stays text (``svg.fonttype = "none"``: small, sharp, selectable); the XML prologue,
    the metadata block and the namespace declarations (addresses, which an HTML page does
    not need) are dropped; every ``id`` is prefixed with ``prefix`` so that several plots can
    share a page, and matplotlib's stylesheet is scoped to this plot (class ``prefix``). ``label`` becomes the ``aria-label``.
    ``png = (path, figsize, dpi)`` also writes the same figure (drawn once: its artists are
    not built again) as a PNG of that size.

    Examples
    --------
    >>> from evalframe.reporting.html import svg_figure
    >>> svg = svg_figure(lambda ax: ax.plot([1, 2], [3, 4]), (3, 2), prefix="demo")
    >>> svg.startswith("<svg "), "xmlns" in svg, 'id="demo-' in svg
    (True, False, True)
    """
    import matplotlib
    from matplotlib.figure import Figure

    # names are text: a "$" in a system, segment or question name is not TeX (text.parse_math)
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "evalframe", "figure.dpi": 100,
                                "text.parse_math": False}):
        fig = Figure(figsize=figsize)
        ax = fig.subplots()
        draw(ax)
        fig.tight_layout()
        buf = io.StringIO()
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None, "Format": None, "Type": None})
        if png is not None:
            path, png_size, dpi = png
            fig.set_size_inches(*png_size)
            fig.tight_layout()
            fig.savefig(path, dpi=dpi)
    svg = buf.getvalue()
    for p in _SVG_DROP:
        svg = p.sub("", svg)
    svg = re.sub(r'\bid="([^"]+)"', rf'id="{prefix}-\1"', svg)
    svg = re.sub(r"url\(#([^)]+)\)", rf"url(#{prefix}-\1)", svg)
    svg = re.sub(r'href="#([^"]+)"', rf'href="#{prefix}-\1"', svg)
    # matplotlib's `*{stroke-linejoin: ...}` would style every SVG of the page (and of JupyterLab)
    svg = re.sub(r"<style([^>]*)>(.*?)</style>", lambda m: f"<style{m[1]}>{m[2].replace('*', f'.{prefix} *')}</style>",
                 svg, flags=re.S)
    return svg.replace("<svg ", f"<svg class='{prefix}' role='img' aria-label='{escape(label)}' ", 1).strip()


def document(title: str, body: str) -> str:
    """A complete, self-contained HTML page: ``body`` inside ``<main class="evalframe-report
    ef-page">``, the stylesheet inline."""
    return ("<!DOCTYPE html>\n<html lang='en' class='ef-page'>\n<head>\n<meta charset='utf-8'>\n"
            "<meta name='viewport' content='width=device-width, initial-scale=1'>\n"
            "<meta name='color-scheme' content='light dark'>\n"
            f"<title>{escape(title)}</title>\n<style>{CSS}{PAGE_CSS}</style>\n</head>\n<body>\n"
            f"<main class='evalframe-report ef-page'>\n{body}\n</main>\n</body>\n</html>\n")
