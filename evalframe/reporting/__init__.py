"""report(): the whole evaluation of one or many systems, as one immutable object of tables.

A thin composition of the public functions a notebook calls::

    evaluate_with_diagnostics -> summarize / compare / planning_curve -> Report

Every table is long and tidy (see :class:`Report`); the Report renders itself as HTML in
Jupyter, as Markdown and LaTeX, writes CSV / Parquet (read back by :func:`read_report`),
and draws the plots of :mod:`evalframe.plots` (matplotlib is imported only when a plot is
drawn).

Files, in import order (a file imports only files above it):

- ``tables``: table names, fixed columns, row order;
- ``diagnostics``: the diagnostics table and the report's warnings;
- ``segments``, ``stages``, ``curves``, ``planning``, ``comparisons``, ``changes``: one section each;
- ``html``: the page's building blocks (stylesheet, tables, plots as inline SVG);
- ``views``: the Report in words for every format (summary grid, comparisons, notes, flagged
  segments, top changes) and the cell formats; ``figures``: the plots as specifications;
- ``render_html`` (notebook view, self-contained page), ``render_markdown``, ``render_latex``,
  ``render_text``: one format each (they read a Report's public surface only);
  ``render``: all of them under the one name they had;
- ``persist``: CSV / Parquet writing and reading;
- ``model``: the immutable :class:`Report`, :func:`read_report`;
- ``build``: argument checks (:func:`report_options`) and :func:`report`.
"""
from ..errors import SmallGoldenSetWarning, UnjudgedDocumentsWarning
from .build import CONVENTIONS, ReportOptions, report, report_options
from .changes import top_changes
from .curves import CURVE_KS
from .diagnostics import MIN_JUDGED, MIN_QUESTIONS
from .model import Report, read_report
from .render_markdown import pipe_table
from .render_text import text_tables
from .segments import MIN_SEGMENT_QUESTIONS, read_segments
from .tables import TABLES

__all__ = ["report", "top_changes", "Report", "read_report", "read_segments", "text_tables", "pipe_table",
           "report_options", "ReportOptions", "CONVENTIONS", "CURVE_KS", "TABLES",
           "MIN_QUESTIONS", "MIN_SEGMENT_QUESTIONS", "MIN_JUDGED",
           "UnjudgedDocumentsWarning", "SmallGoldenSetWarning"]
