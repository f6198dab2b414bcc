"""Rendering a Report: HTML (Jupyter), Markdown, LaTeX and plain text.

Every function reads only a Report's public surface (:class:`ReportView`), so a renderer
can be added without touching the model.
"""
from __future__ import annotations

__all__ = ["ReportView", "significance_marks", "test_description", "interval_note", "summary_wide", "comparisons_view",
           "changes_view", "segment_flags", "SEGMENT_VIEW",
           "warning_lines", "to_html", "to_markdown", "to_latex", "text_tables", "pipe_table"]

import html
import math
from typing import Mapping, Protocol, Sequence

import numpy as np
import pandas as pd


_TEST_WORDS = {"t": "paired t-test", "randomization": "paired randomisation test",
               "bootstrap": "paired bootstrap test", "wilcoxon": "Wilcoxon signed-rank test",
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
    def metadata(self) -> dict: ...
    @property
    def systems(self) -> list[str]: ...
    @property
    def measures(self) -> list[str]: ...
    @property
    def warnings(self) -> Sequence: ...
    @property
    def reference(self) -> str | None: ...
    @property
    def alpha(self) -> float: ...


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


def comparisons_view(rep: ReportView, digits: int = 3) -> pd.DataFrame:
    """The comparisons in words: ``measure, system_a, system_b, diff [CI], interval`` (the
    interval's method), ``p_adjusted, test`` (test and correction), ``significant`` (``"*"`` when ``p_adjusted < alpha``, else ``""``).

    ``diff [CI]`` reads ``diff [unadjusted interval]; adjusted [interval adjusted as
    p_adjusted is]`` (``bonferroni-adj.`` for Holm and Bonferroni, ``fcr-adj.`` for BH), so
    the interval next to ``p_adjusted`` is adjusted for the same family."""
    cols = ["measure", "system_a", "system_b", "diff [CI]", "interval", "p_adjusted", "test", "significant"]
    c = rep.comparisons
    if c.empty:
        return pd.DataFrame(columns=cols)
    alpha = rep.alpha
    return pd.DataFrame({
        "measure": c["measure"], "system_a": c["system_a"], "system_b": c["system_b"],
        "diff [CI]": [_fmt_ci(d, lo, hi, digits, signed=True) + _adjusted(alo, ahi, how, digits)
                      for d, lo, hi, alo, ahi, how in zip(c["diff"], c["ci_low"], c["ci_high"],
                                                          *_adjusted_columns(c))],
        "interval": c["ci_method"].astype(str), "p_adjusted": [_fmt_p(p) for p in c["p_adjusted"]],
        "test": c["test"].astype(str) + ", " + c["correction"].astype(str),
        "significant": ["*" if p < alpha else "" for p in c["p_adjusted"].fillna(1.0)],
    }, columns=cols)


def interval_note(rep: ReportView) -> str:
    """What the two intervals of ``diff [CI]`` are (empty without comparisons)."""
    c = rep.comparisons
    if c.empty:
        return ""
    how = str(_adjusted_columns(c)[2].iloc[0])
    conf = f"{float(c['confidence'].iloc[0]):.0%}"
    words = {"bonferroni": "Bonferroni-simultaneous over each measure's comparisons, as the "
                           "Holm/Bonferroni p_adjusted",
             "fcr": "false-coverage-rate adjusted (Benjamini-Yekutieli), as the BH p_adjusted"}
    if how not in words:
        return f"diff [CI]: {conf} interval of each comparison (unadjusted, as p_adjusted)."
    return (f"diff [CI]: the {conf} interval of each comparison alone (unadjusted), then the "
            f"{how}-adj. interval, {words[how]}: it excludes 0 when the difference is significant "
            "after adjustment.")


def _adjusted_columns(c: pd.DataFrame):
    """The adjusted interval columns (NaN / "none" in a table written before they existed)."""
    nan = pd.Series(np.nan, index=c.index)
    return (c.get("ci_low_adjusted", nan), c.get("ci_high_adjusted", nan),
            c.get("ci_adjustment", pd.Series("none", index=c.index)))


def _adjusted(lo, hi, how, digits: int) -> str:
    if str(how) in ("none", "nan") or lo is None or (isinstance(lo, float) and math.isnan(lo)):
        return " (unadjusted)" if str(how) == "none" else ""
    return f"; {how}-adj. [{lo:.{digits}f}, {hi:.{digits}f}]"


def warning_lines(rep: ReportView) -> list[str]:
    """The warnings in words, one line each (Judged@k warnings grouped over systems): the
    messages of ``rep.warnings``."""
    return [str(w.message) for w in rep.warnings]


def _intervals_sentence(m: Mapping[str, object], escape=lambda x: x) -> str:
    return (f"means with {m['confidence']:.0%} intervals ({escape(str(m['interval']))}"
            + (f", {m['n_resamples']} resamples, seed {m['seed']}" if m['interval'] in ("bootstrap", "bca") else "")
            + ")." + (" Documents are pages (chunks rolled up to their page)." if m.get("unit") == "page" else ""))


# ------------------------------------------------------------------------ HTML
def to_html(rep: ReportView) -> str:
    """The report as an HTML fragment (what Jupyter shows)."""
    m = rep.metadata
    parts = [f"<div class='evalframe-report'><h3>evalframe report</h3>"
             f"<p>{len(m['systems'])} system(s), {m['n_questions']} questions, "
             f"{len(m['measures'])} measures; " + _intervals_sentence(m, html.escape) + "</p>"]
    if len(rep.warnings):
        lines = warning_lines(rep)
        items = "".join(f"<li>{html.escape(x)}</li>" for x in lines)
        parts.append("<div style='border-left:4px solid #D55E00;padding:4px 8px;background:#fff4ec'>"
                     f"<b>&#9888; {len(lines)} warning(s)</b><ul style='margin:2px 0'>{items}</ul></div>")
    parts.append("<h4>Summary</h4>" + summary_wide(rep).to_html(escape=True))
    ref = rep.reference
    if ref and not rep.comparisons.empty:
        parts.append(f"<p>▲ / ▼: significantly above / below {html.escape(ref)} "
                     f"({html.escape(test_description(rep))}).</p>")
        parts.append("<h4>Comparisons</h4>" + comparisons_view(rep).to_html(index=False, escape=True)
                     + f"<p>{html.escape(interval_note(rep))}</p>")
    st = rep.stages
    if not st.empty:
        parts.append("<h4>Pipeline stages</h4>" + _round(st).to_html(index=False))
    ch = changes_view(rep)
    if len(ch):
        parts.append("<h4>Top regressions and improvements</h4>" + ch.to_html(index=False, escape=True))
    seg = rep.by_segment
    if not seg.empty:
        flagged, rest = segment_flags(seg)
        parts.append(f"<h4>Segments</h4><p>{len(seg)} rows; {len(flagged)} flagged.</p>")
        if len(flagged):
            parts.append(_round(flagged[SEGMENT_VIEW]).head(30).to_html(index=False))
        parts.append(f"<p>{rest} segments not flagged.</p>")
    parts.append("</div>")
    return "\n".join(parts)


def segment_flags(seg: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    """The flagged rows of a by-segment table, with a ``flags`` column in words, and the
    number of rows not flagged.

    A row is flagged when it is too small to judge (``too_small``) or below the overall mean
    after Benjamini-Hochberg across the segments of its (system, measure)
    (``below_overall_bh``, from the one-sided one-sample t-test ``p_below``); the two flags
    are named separately. Flagged rows come in table order.
    """
    small = seg["too_small"].astype(bool).to_numpy()
    below = (seg["below_overall_bh"].astype(bool).to_numpy() if "below_overall_bh" in seg
             else seg["below_overall"].astype(bool).to_numpy())
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


SEGMENT_VIEW = ["system", "segment", "segment_value", "measure", "n", "mean", "ci_low", "ci_high",
                "overall_mean", "flags"]


# ------------------------------------------------------------------------ Markdown
def to_markdown(rep: ReportView, digits: int = 3) -> str:
    """The report as Markdown (pipe tables; no ``tabulate`` needed)."""
    m = rep.metadata
    lines = ["# evalframe report", "",
             f"{len(m['systems'])} system(s), {m['n_questions']} questions, evalframe {m['version']}; "
             + _intervals_sentence(m), ""]
    if len(rep.warnings):
        lines += ["## Warnings", ""]
        lines += [f"- {x}" for x in warning_lines(rep)]
        lines.append("")
    lines += ["## Summary", "", pipe_table(summary_wide(rep, digits).reset_index()), ""]
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


# ------------------------------------------------------------------------ text
def text_tables(rep: ReportView, digits: int = 3) -> str:
    """Aligned plain-text summary, comparisons and warnings (the CLI's terminal output)."""
    m = rep.metadata
    out = ["Summary (mean [%d%% interval], %s%s)" % (round(100 * m["confidence"]), m["interval"],
                                                     ", documents are pages" if m.get("unit") == "page" else ""),
           summary_wide(rep, digits).to_string()]
    ref = rep.reference
    if ref and not rep.comparisons.empty:
        out += ["", f"▲/▼ significantly above/below {ref} ({test_description(rep)})", "",
                "Comparisons", comparisons_view(rep, digits).to_string(index=False), interval_note(rep)]
    st = rep.stages
    if not st.empty:
        out += ["", "Pipeline stages", _round(st, digits).to_string(index=False)]
    ch = changes_view(rep, digits)
    if len(ch):
        out += ["", "Top regressions and improvements", ch.to_string(index=False)]
    seg = rep.by_segment
    if not seg.empty:
        fl, rest = segment_flags(seg)
        out += ["", f"Segments: {len(seg)} rows, {len(fl)} flagged "
                f"(intervals: {', '.join(map(str, pd.unique(seg['method'])))}; below overall: one-sided "
                "t-test, Benjamini-Hochberg across segments)"]
        if len(fl):
            out.append(_round(fl[["system", "segment", "segment_value", "measure", "n", "mean",
                                  "overall_mean", "flags"]], digits).head(40).to_string(index=False))
        out.append(f"{rest} segments not flagged")
    if len(rep.warnings):
        lines = warning_lines(rep)
        out += ["", f"Warnings ({len(lines)})"] + [f"- {x}" for x in lines]
    return "\n".join(out) + "\n"


def pipe_table(df: pd.DataFrame) -> str:
    """A GitHub pipe table written by hand (numbers right-aligned, ``|`` escaped)."""
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


def _fmt_p(p) -> str:
    if p is None or pd.isna(p):
        return ""
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def _round(df: pd.DataFrame, digits: int = 3) -> pd.DataFrame:
    out = df.copy()
    for c in out.columns:
        if pd.api.types.is_float_dtype(out[c].dtype):
            out[c] = out[c].round(digits)
    return out


def _cell(v) -> str:
    if v is None or (not isinstance(v, str) and pd.isna(v)):
        return ""
    if isinstance(v, (float, np.floating)):
        return f"{v:.4g}"
    return str(v).replace("|", "\\|").replace("\n", " ")


_TEX = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
        "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}


def _tex(s: str) -> str:
    return "".join(_TEX.get(ch, ch) for ch in str(s))
