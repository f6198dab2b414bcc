"""Every renderer of a Report under one name, as ``evalframe.reporting.render`` has always
offered them; each lives in the module of its job: :mod:`.views` (the Report in words, cell
formats), :mod:`.figures` (plot specifications), :mod:`.render_html`,
:mod:`.render_markdown`, :mod:`.render_latex`, :mod:`.render_text`.
"""
from __future__ import annotations

__all__ = ["LABEL_CHECKS", "label_lines", "ReportView", "format_p", "significance_marks", "test_description", "interval_note", "procedure_note", "summary_wide", "comparisons_view", "COMPARISON_VIEW_COLUMNS",
           "changes_view", "segment_flags",
           "warning_lines", "COMPACT_ROWS", "COMPACT_MEASURES", "PlotSpec", "plot_specs", "default_pair", "to_html", "to_html_page", "to_markdown", "to_latex", "text_tables", "pipe_table",
           "fingerprint_lines", "changes_line_view", "md_text"]

from .figures import PlotSpec, default_pair, plot_specs
from .render_html import COMPACT_MEASURES, COMPACT_ROWS, to_html, to_html_page
from .render_latex import to_latex
from .render_markdown import md_text, pipe_table, to_markdown
from .render_text import changes_line_view, text_tables
from .views import (
    COMPARISON_VIEW_COLUMNS,
    LABEL_CHECKS,
    ReportView,
    changes_view,
    comparisons_view,
    fingerprint_lines,
    format_p,
    interval_note,
    label_lines,
    procedure_note,
    segment_flags,
    significance_marks,
    summary_wide,
    test_description,
    warning_lines,
)
