"""A Report as aligned plain text to fit a screen (the CLI's terminal output):
:func:`text_tables`.
"""
from __future__ import annotations

__all__ = ["text_tables", "changes_line_view"]

import pandas as pd

from .._validation import Interval, check
from .views import (
    ReportView,
    changes_view,
    comparisons_view,
    interval_note,
    label_lines,
    round_floats,
    segment_flags,
    summary_wide,
    test_description,
    warning_lines,
)


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
    >>> from evalframe.reporting import text_tables
    >>> sso = ef.datasets.load_sso()
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     rep = ef.report(sso.runs, sso.qrels, n_resamples=200, seed=0)
    >>> text_tables(rep).splitlines()[0]
    'Summary (mean [95% interval], bootstrap)'
    """
    check("text_tables", "changes", changes, Interval(int, 0, None))
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
        out += ["", "Pipeline stages", round_floats(st, digits).to_string(index=False)]
    seg = rep.by_segment
    if not seg.empty:
        fl, rest = segment_flags(seg)
        out += ["", f"Segments: {len(seg)} rows, {len(fl)} flagged "
                f"(intervals: {', '.join(map(str, pd.unique(seg['method'])))}; below overall: one-sided "
                "t-test, Benjamini-Hochberg across segments)"]
        if len(fl):
            out.append(round_floats(fl[["system", "segment", "segment_value", "measure", "n", "mean",
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
