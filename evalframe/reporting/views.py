"""A Report in words, shared by every format: the views (summary grid, comparisons, notes,
warnings, flagged segments, top changes, label and fingerprint lines) and the cell formats.
Each reads only a Report's public surface (:class:`ReportView`).
"""
from __future__ import annotations

import math
from typing import Mapping, Protocol, Sequence

import numpy as np
import pandas as pd


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
        cells[(r.system, r.measure)] = format_ci(r.mean, r.ci_low, r.ci_high, digits) + (
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
    alo, ahi, how = adjusted_columns(c)
    return pd.DataFrame({
        "measure": c["measure"], "system_a": c["system_a"], "system_b": c["system_b"],
        "diff": [format_ci(d, None, None, digits, signed=True) for d in c["diff"]],
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
    how = str(adjusted_columns(c)[2].iloc[0])
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


def adjusted_columns(c: pd.DataFrame):
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


def intervals_sentence(m: Mapping[str, object], escape=lambda x: x) -> str:
    return (f"means with {m['confidence']:.0%} intervals ({escape(str(m['interval']))}"
            + (f", {m['n_resamples']} resamples, seed {m['seed']}" if m['interval'] in ("bootstrap", "bca") else "")
            + ")." + (" Documents are pages (chunks rolled up to their page)." if m.get("unit") == "page" else ""))


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
    return round_floats(c[cols].reset_index(drop=True), digits)


def fingerprint_lines(fp: Mapping[str, object]) -> list[tuple[str, str]]:
    """(what, hash) pairs of a report's fingerprints, for display."""
    out = [("golden set", str(fp.get("golden_set")))]
    out += [(f"run {name}", str(h)) for name, h in (fp.get("runs") or {}).items()]
    if fp.get("chunks"):
        out.append(("chunks", str(fp["chunks"])))
    out += [("conventions", str(fp.get("conventions"))), ("measures", str(fp.get("measures"))),
            ("evalframe", str(fp.get("evalframe_version")))]
    return out


#: diagnostics checks shown under the summary: provenance, PPI and the bounds for the unjudged
LABEL_CHECKS = ("labels_by_judge", "model_labels_at_k", "ppi", "unjudged_bounds")


def label_lines(rep: ReportView) -> list[str]:
    """The details of the report's provenance, PPI and bounds rows (:data:`LABEL_CHECKS`), in
    that order: empty for a report without model labels, ``human_qrels`` or ``unjudged="bounds"``."""
    d = rep.diagnostics
    rows = d[d["check"].isin(LABEL_CHECKS)]
    order = np.argsort([LABEL_CHECKS.index(c) for c in rows["check"]], kind="stable")
    return [str(x) for x in rows["detail"].to_numpy()[order]]


# ------------------------------------------------------------------------ cells
def format_ci(mean, lo, hi, digits: int = 3, signed: bool = False) -> str:
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


def round_floats(df: pd.DataFrame, digits: int = 3) -> pd.DataFrame:
    out = df.copy()
    for c in out.columns:
        if pd.api.types.is_float_dtype(out[c].dtype):
            out[c] = out[c].round(digits)
    return out
