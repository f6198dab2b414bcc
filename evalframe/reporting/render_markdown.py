"""A Report as Markdown: :func:`to_markdown`, and :func:`pipe_table` (a GitHub pipe table
written by hand, no ``tabulate``) with the escaping of its cells.
"""
from __future__ import annotations

import re

import numpy as np
import pandas as pd

from .views import (
    ReportView,
    changes_view,
    comparisons_view,
    fingerprint_lines,
    format_ci,
    interval_note,
    intervals_sentence,
    label_lines,
    round_floats,
    segment_flags,
    summary_wide,
    test_description,
    warning_lines,
)


def to_markdown(rep: ReportView, digits: int = 3) -> str:
    """The report as Markdown (pipe tables; no ``tabulate`` needed)."""
    m = rep.metadata
    lines = ["# evalframe report", "",
             f"{len(m['systems'])} system(s), {m['n_questions']} questions, evalframe {m['version']}; "
             + intervals_sentence(m), ""]
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
        lines += ["## Pipeline stages", "", pipe_table(round_floats(st, digits)), ""]
    ch = changes_view(rep, digits)
    if len(ch):
        lines += ["## Top regressions and improvements", "", pipe_table(ch), ""]
    seg = rep.by_segment
    if not seg.empty:
        flagged, rest = segment_flags(seg)
        lines += ["## Segments", "", f"{len(flagged)} of {len(seg)} segment rows flagged "
                  "(too small to judge; below overall after Benjamini-Hochberg across segments).", ""]
        if len(flagged):
            v = flagged.assign(**{"mean [CI]": [format_ci(a, b, c, digits) for a, b, c in
                                                zip(flagged["mean"], flagged["ci_low"], flagged["ci_high"])]})
            lines += [pipe_table(round_floats(
                v[["system", "segment", "segment_value", "measure", "n", "mean [CI]", "overall_mean",
                   "flags"]], digits)), ""]
        lines += [f"{rest} segments not flagged.", ""]
    d = rep.diagnostics
    lines += ["## Diagnostics", "", pipe_table(round_floats(
        d[~d["check"].isin(["measure", "convention"])].drop(columns=["action", "examples"], errors="ignore"),
        digits)), "",
        "## Measures and conventions", ""]
    lines += [f"- `{r.measure if isinstance(r.measure, str) else r.system}`: {r.detail}"
              for r in d[d["check"].isin(["measure", "convention"])].itertuples(index=False)]
    if m.get("fingerprints"):
        lines += ["", "## Fingerprints", ""]
        lines += [f"- {md_text(k)}: `{v}`" for k, v in fingerprint_lines(m["fingerprints"])]
    return "\n".join(lines) + "\n"


def pipe_table(df: pd.DataFrame) -> str:
    """A GitHub pipe table written by hand (numbers right-aligned, ``|`` escaped).

    Examples
    --------
    >>> import pandas as pd
    >>> from evalframe.reporting import pipe_table
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
