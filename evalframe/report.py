"""report(): the whole evaluation of one or many systems, as one immutable object of tables.

A thin composition of the public functions a notebook calls::

    evaluate_with_diagnostics -> summarize / compare / planning_curve -> Report

Every table is long and tidy (see :class:`Report`); the Report renders itself as HTML in
Jupyter, as Markdown and LaTeX, writes CSV / Parquet, and draws the plots of
:mod:`evalframe.plots` (matplotlib is imported only when a plot is drawn).
"""
from __future__ import annotations

__all__ = ["report", "Report", "read_segments", "UnjudgedDocumentsWarning", "SmallGoldenSetWarning"]

import html
import json
import math
import os
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Callable, Iterable, Literal, Mapping, Sequence

import numpy as np
import pandas as pd

from ._version import __version__
from .errors import warn as _warn_user
from .schema import ids_to_str
from .errors import EvalframeInputError, EvalframeWarning, InputProblem
from .evaluate import aggregate, evaluate_with_diagnostics
from .measures import FAMILIES, parse_measures, resolve
from . import stats

Interval = Literal["bootstrap", "bca", "t", "auto"]


class UnjudgedDocumentsWarning(EvalframeWarning):
    """Many of a system's top-k documents are not in the golden set (scores are lower bounds)."""


class SmallGoldenSetWarning(EvalframeWarning):
    """The golden set is too small for the intervals to be narrow (below 50 questions)."""


#: the spec's "working minimum" of questions
MIN_QUESTIONS = 50
#: a segment with fewer questions than this is "too small to say anything" (spec: 20 -> +-22 points)
MIN_SEGMENT_QUESTIONS = 20
#: Judged@k below this raises an UnjudgedDocumentsWarning
MIN_JUDGED = 0.9
#: cutoffs of the metric@k curve: a log-spaced grid from 1 to 100 (pass range(1, 101) for every k)
CURVE_KS = (1, 2, 3, 4, 5, 7, 10, 15, 20, 30, 50, 70, 100)
_CONVENTIONS = {"rel": 1, "ties": "doc_id_desc", "missing": "zero", "depth": None, "duplicates": "error"}
_CONVENTION_DOCS = {
    "rel": "a document is relevant when its label >= rel",
    "ties": "order of equal scores (doc_id_desc = trec_eval's)",
    "missing": "golden-set questions a system did not answer: scored 0 (zero) or left out (drop)",
    "depth": "only the top `depth` documents of each ranking are evaluated (None: all)",
    "duplicates": "a document listed twice for one question: error, keep max score, keep first row",
}
_TABLES = ("summary", "per_question", "by_segment", "comparisons", "diagnostics", "stages",
           "curves", "planning")
_MISSING_SEGMENT = "(none)"


# ------------------------------------------------------------------------- segments
def read_segments(source) -> pd.DataFrame:
    """Read a segment table: ``query_id`` plus one or more segment columns.

    Parameters
    ----------
    source : DataFrame or path
        A DataFrame, or a ``.tsv`` / ``.csv`` / ``.parquet`` file with a header row.

    Returns
    -------
    DataFrame
        ``query_id`` (str) plus every other column as str, one row per question.

    Raises
    ------
    EvalframeInputError
        No ``query_id`` column, no segment column, or a question listed twice with
        different values.
    """
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        if not path.exists():
            raise FileNotFoundError(f"segments file not found: {path}")
        suffix = "".join(path.suffixes[-2:]).lower()
        if path.suffix.lower() == ".parquet":
            df = pd.read_parquet(path)
        elif path.suffix.lower() in (".tsv", ".txt", ".tab") or suffix.endswith(".tsv.gz"):
            df = pd.read_csv(path, sep="\t", dtype=str, keep_default_na=False)
        elif path.suffix.lower() == ".csv" or suffix.endswith(".csv.gz"):
            df = pd.read_csv(path, dtype=str, keep_default_na=False)
        else:
            raise EvalframeInputError("segments", [InputProblem(
                f"{path}: unknown file type {path.suffix!r}",
                "give a .tsv, .csv or .parquet file with a header: query_id, segment columns...")])
    elif isinstance(source, pd.DataFrame):
        df = source
    else:
        raise TypeError(f"segments must be a DataFrame, a file path or a column name, "
                        f"got {type(source).__name__}")
    problems = []
    if "query_id" not in df.columns:
        problems.append(InputProblem(f"no query_id column (found {list(df.columns)})",
                                     "name the question id column query_id"))
    cols = [c for c in df.columns if c != "query_id"]
    if not cols:
        problems.append(InputProblem("no segment column", "add one or more columns besides query_id, "
                                     "e.g. question_form = lookup / natural / multi-condition"))
    reserved = [c for c in cols if c in ("system", "measure", "value", "segment", "segment_value")]
    if reserved:
        problems.append(InputProblem(f"segment columns use reserved names {reserved}",
                                     "rename them (e.g. 'question_type')"))
    if problems:
        raise EvalframeInputError("segments", problems)
    # the same id rules as the run and the golden set, so segment ids match theirs
    out = pd.DataFrame({"query_id": ids_to_str(df["query_id"]).to_numpy(dtype=object)})
    for c in cols:
        v = df[c]
        out[str(c)] = np.where(v.isna().to_numpy(), _MISSING_SEGMENT, v.astype(str).to_numpy())
    out = out.drop_duplicates()
    dup = out["query_id"].duplicated(keep=False)
    if dup.any():
        raise EvalframeInputError("segments", [InputProblem(
            f"{int(out.loc[dup, 'query_id'].nunique())} questions have more than one row with different values",
            "give each question one row (one value per segment column)",
            out.loc[dup].head(4).to_string(index=False))])
    return out.reset_index(drop=True)


def _segments_from(segments, qrels) -> pd.DataFrame | None:
    if segments is None:
        return None
    if isinstance(segments, str) and not Path(segments).exists() or (
            isinstance(segments, (list, tuple)) and all(isinstance(c, str) for c in segments)):
        names = [segments] if isinstance(segments, str) else list(segments)
        if not isinstance(qrels, pd.DataFrame) or not set(names) <= set(qrels.columns):
            found = list(qrels.columns) if isinstance(qrels, pd.DataFrame) else "a file"
            raise EvalframeInputError("segments", [InputProblem(
                f"segment column(s) {names} not found in the golden set (found {found}) "
                "and no such file exists",
                "pass a table query_id + segment columns, a .tsv/.csv/.parquet file, or the name of "
                "a column of the golden-set DataFrame")])
        qcol = "query_id" if "query_id" in qrels.columns else next(
            (c for c in ("qid", "query", "topic") if c in qrels.columns), None)
        if qcol is None:
            raise EvalframeInputError("segments", [InputProblem(
                "the golden set has no query_id column", "name the question column query_id")])
        return read_segments(qrels[[qcol, *names]].rename(columns={qcol: "query_id"}))
    return read_segments(segments)


# ----------------------------------------------------------------------- the Report
def _frozen(df: pd.DataFrame) -> pd.DataFrame:
    return df.reset_index(drop=True)


@dataclass(frozen=True, eq=False, repr=False)
class Report:
    """The evaluation of one or many systems: tables, views, exports and plots.

    Every attribute returns a fresh copy, so changing a returned table never changes
    the Report. Build one with :func:`report`.

    Attributes
    ----------
    summary : DataFrame
        One row per (system, measure): ``system, measure, n, mean, sd, se, ci_low,
        ci_high, method, confidence, n_resamples, seed`` (as :func:`stats.summarize`).
    per_question : DataFrame
        ``system, query_id, measure, value`` (:func:`evaluate`) + the segment columns.
    by_segment : DataFrame
        One row per (system, segment, segment_value, measure): ``n, mean, se, ci_low,
        ci_high, method, overall_mean, gap`` (``mean - overall_mean``), ``too_small``
        (n < 20), ``below_overall`` (the whole interval lies below the system's overall
        mean), ``flag`` (text).
    comparisons : DataFrame
        Paired comparisons (:func:`stats.compare`) against the baseline, or all pairs;
        empty with one system.
    diagnostics : DataFrame
        ``check, system, measure, count, value, level, detail``: questions counted,
        dropped and scored 0, Judged@k, golden-set size and the interval half-width it
        implies, score ties, duplicates, measure definitions and conventions.
        ``level`` is ``"info"`` or ``"warning"``.
    stages : DataFrame
        For pipeline stages: ``stage, system, measure, k, n, mean, ci_low, ci_high,
        ceiling, share_of_ceiling, lost`` (empty without ``stages``).
    curves : DataFrame
        metric@k for every system: ``system, family, k, measure, n, mean, se, ci_low,
        ci_high`` (t intervals).
    planning : DataFrame
        :func:`stats.planning_curve` of the measures, with the golden set's own n.
    metadata : mapping
        evalframe version, measures, conventions, confidence, seed, n_resamples, test,
        correction, interval method, baseline, stages, systems, n_questions.
    """

    _tables: Mapping[str, pd.DataFrame] = field(repr=False)
    _metadata: Mapping[str, object] = field(repr=False)

    # ---- tables (copies)
    def _t(self, name: str) -> pd.DataFrame:
        return self._tables[name]

    @property
    def summary(self) -> pd.DataFrame:
        return self._t("summary").copy()

    @property
    def per_question(self) -> pd.DataFrame:
        return self._t("per_question").copy()

    @property
    def by_segment(self) -> pd.DataFrame:
        return self._t("by_segment").copy()

    @property
    def comparisons(self) -> pd.DataFrame:
        return self._t("comparisons").copy()

    @property
    def diagnostics(self) -> pd.DataFrame:
        return self._t("diagnostics").copy()

    @property
    def stages(self) -> pd.DataFrame:
        return self._t("stages").copy()

    @property
    def curves(self) -> pd.DataFrame:
        return self._t("curves").copy()

    @property
    def planning(self) -> pd.DataFrame:
        return self._t("planning").copy()

    @property
    def metadata(self) -> dict:
        return json.loads(json.dumps(dict(self._metadata)))

    @property
    def systems(self) -> list[str]:
        return list(self._metadata["systems"])

    @property
    def measures(self) -> list[str]:
        return list(self._metadata["measures"])

    def warning_lines(self) -> list[str]:
        """The warnings in words, one line each (Judged@k warnings grouped over systems)."""
        w = self.warnings
        judged = w[w["check"] == "judged_at_k"]
        lines = [_unjudged_summary(judged)] if len(judged) else []
        for r in w[w["check"] != "judged_at_k"].itertuples(index=False):
            lines.append(f"{r.check}" + (f" [{r.system}]" if isinstance(r.system, str) else "") + f": {r.detail}")
        return lines

    @property
    def warnings(self) -> pd.DataFrame:
        """The diagnostics rows at level ``"warning"``."""
        d = self._t("diagnostics")
        return d[d["level"] == "warning"].reset_index(drop=True)

    def __repr__(self) -> str:
        m = self._metadata
        return (f"Report(systems={list(m['systems'])}, questions={m['n_questions']}, "
                f"measures={list(m['measures'])}, baseline={m['baseline']!r}, "
                f"warnings={len(self.warnings)})")

    # ---- formatting helpers
    @property
    def _alpha(self) -> float:
        return 1.0 - float(self._metadata["confidence"])

    def _reference(self) -> str | None:
        """The system significance markers refer to: the baseline, else the first system."""
        if len(self._metadata["systems"]) < 2:
            return None
        return self._metadata["baseline"] or self._metadata["systems"][0]

    def _marks(self) -> dict[tuple[str, str], str]:
        """(system, measure) -> '+' / '-' when significantly above / below the reference."""
        ref = self._reference()
        c = self._t("comparisons")
        out: dict[tuple[str, str], str] = {}
        if ref is None or c.empty:
            return out
        for r in c.itertuples(index=False):
            if not (isinstance(r.p_adjusted, float) and r.p_adjusted < self._alpha):
                continue
            if r.system_a == ref:
                out[(r.system_b, r.measure)] = "+" if r.diff > 0 else "-"
            elif r.system_b == ref:
                out[(r.system_a, r.measure)] = "-" if r.diff > 0 else "+"
        return out

    def _test_words(self) -> str:
        c = self._t("comparisons")
        if c.empty:
            return ""
        test = str(c["test"].iloc[0])
        corr = str(c["correction"].iloc[0])
        tname = {"t": "paired t-test", "randomization": "paired randomisation test",
                 "bootstrap": "paired bootstrap test", "wilcoxon": "Wilcoxon signed-rank test",
                 "sign": "sign test"}.get(test, test)
        cname = {"holm": "Holm-corrected", "bonferroni": "Bonferroni-corrected",
                 "bh": "Benjamini-Hochberg-corrected", "none": "uncorrected",
                 "tukey": "Tukey HSD", "randomized-tukey": "randomised Tukey HSD"}.get(corr, corr)
        return f"{tname}, {cname}, alpha = {self._alpha:g}"

    def summary_wide(self, digits: int = 3) -> pd.DataFrame:
        """Systems x measures, cells ``mean [ci_low, ci_high]`` (+ ``+``/``-`` when
        significantly above/below the reference system), the view the HTML and Markdown show."""
        s = self._t("summary")
        marks = self._marks()
        cells = {}
        for r in s.itertuples(index=False):
            cells[(r.system, r.measure)] = _fmt_ci(r.mean, r.ci_low, r.ci_high, digits) + (
                {"+": " ▲", "-": " ▼"}.get(marks.get((r.system, r.measure), ""), ""))
        systems, measures = self.systems, [m for m in self.measures]
        out = pd.DataFrame([[cells.get((sy, m), "") for m in measures] for sy in systems],
                           index=pd.Index(systems, name="system"), columns=measures)
        n = s.groupby("system", sort=False)["n"].max()
        out.insert(0, "n", [int(n.get(sy, 0)) for sy in systems])
        return out

    def comparisons_view(self, digits: int = 3) -> pd.DataFrame:
        """The comparisons in words: ``measure, system_a, system_b, diff [CI], p_adjusted, significant``."""
        c = self._t("comparisons")
        if c.empty:
            return pd.DataFrame(columns=["measure", "system_a", "system_b", "diff [CI]", "p_adjusted", "sig"])
        return pd.DataFrame({
            "measure": c["measure"], "system_a": c["system_a"], "system_b": c["system_b"],
            "diff [CI]": [_fmt_ci(d, lo, hi, digits, signed=True)
                          for d, lo, hi in zip(c["diff"], c["ci_low"], c["ci_high"])],
            "p_adjusted": [_fmt_p(p) for p in c["p_adjusted"]],
            "sig": ["*" if p < self._alpha else "" for p in c["p_adjusted"].fillna(1.0)],
        })

    # ---- Jupyter
    def _repr_html_(self) -> str:
        m = self._metadata
        parts = [f"<div class='evalframe-report'><h3>evalframe report</h3>"
                 f"<p>{len(m['systems'])} system(s), {m['n_questions']} questions, "
                 f"{len(m['measures'])} measures; means with {m['confidence']:.0%} intervals "
                 f"({html.escape(str(m['interval']))}"
                 + (f", {m['n_resamples']} resamples, seed {m['seed']}" if m['interval'] in ("bootstrap", "bca") else "")
                 + ").</p>"]
        w = self.warnings
        if len(w):
            lines = self.warning_lines()
            items = "".join(f"<li>{html.escape(x)}</li>" for x in lines)
            parts.append("<div style='border-left:4px solid #D55E00;padding:4px 8px;background:#fff4ec'>"
                         f"<b>&#9888; {len(lines)} warning(s)</b><ul style='margin:2px 0'>{items}</ul></div>")
        parts.append("<h4>Summary</h4>" + self.summary_wide().to_html(escape=True))
        if self._reference() and not self._t("comparisons").empty:
            parts.append(f"<p>▲ / ▼: significantly above / below {html.escape(self._reference())} "
                         f"({html.escape(self._test_words())}).</p>")
            cv = self.comparisons_view()
            parts.append("<h4>Comparisons</h4>" + cv.to_html(index=False, escape=True))
        st = self._t("stages")
        if not st.empty:
            parts.append("<h4>Pipeline stages</h4>" + _round(st).to_html(index=False))
        seg = self._t("by_segment")
        if not seg.empty:
            flagged = seg[seg["flag"] != ""]
            parts.append(f"<h4>Segments</h4><p>{len(seg)} rows; {len(flagged)} flagged.</p>")
            if len(flagged):
                parts.append(_round(flagged[["system", "segment", "segment_value", "measure", "n",
                                             "mean", "ci_low", "ci_high", "overall_mean", "flag"]]
                                    ).head(30).to_html(index=False))
        parts.append("</div>")
        return "\n".join(parts)

    # ---- text exports
    def to_markdown(self, digits: int = 3) -> str:
        """The report as Markdown (pipe tables; no ``tabulate`` needed)."""
        m = self._metadata
        lines = ["# evalframe report", "",
                 f"{len(m['systems'])} system(s), {m['n_questions']} questions, evalframe {m['version']}; "
                 f"means with {m['confidence']:.0%} intervals ({m['interval']}"
                 + (f", {m['n_resamples']} resamples, seed {m['seed']}" if m['interval'] in ("bootstrap", "bca") else "")
                 + ").", ""]
        w = self.warnings
        if len(w):
            lines += ["## Warnings", ""]
            lines += [f"- {x}" for x in self.warning_lines()]
            lines.append("")
        lines += ["## Summary", "", _pipe_table(self.summary_wide(digits).reset_index()), ""]
        if self._reference() and not self._t("comparisons").empty:
            lines += [f"▲ / ▼: significantly above / below `{self._reference()}` ({self._test_words()}).", "",
                      "## Comparisons", "", _pipe_table(self.comparisons_view(digits)), ""]
        st = self._t("stages")
        if not st.empty:
            lines += ["## Pipeline stages", "", _pipe_table(_round(st, digits)), ""]
        seg = self._t("by_segment")
        if not seg.empty:
            v = seg.assign(**{"mean [CI]": [_fmt_ci(a, b, c, digits) for a, b, c in
                                            zip(seg["mean"], seg["ci_low"], seg["ci_high"])]})
            lines += ["## Segments", "", _pipe_table(_round(
                v[["system", "segment", "segment_value", "measure", "n", "mean [CI]", "overall_mean", "flag"]],
                digits)), ""]
        d = self._t("diagnostics")
        lines += ["## Diagnostics", "", _pipe_table(_round(
            d[~d["check"].isin(["measure", "convention"])], digits)), "",
            "## Measures and conventions", ""]
        lines += [f"- `{r.measure if isinstance(r.measure, str) else r.system}`: {r.detail}"
                  for r in d[d["check"].isin(["measure", "convention"])].itertuples(index=False)]
        return "\n".join(lines) + "\n"

    def to_latex(self, *, digits: int = 3, caption: str | None = None, label: str = "tab:evalframe",
                 intervals: bool = False) -> str:
        """The summary as a booktabs LaTeX table: systems x measures, best value bold,
        significance markers (test and correction named in the caption); no jinja2."""
        s = self._t("summary")
        marks = self._marks()
        systems, measures = self.systems, self.measures
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
        ref = self._reference()
        if ref and not self._t("comparisons").empty:
            cap += (f" $\\dagger$ / $\\ddagger$: significantly better / worse than {_tex(ref)} "
                    f"({_tex(self._test_words())}).")
        head = " & ".join(["System", *[_tex(mm) for mm in measures]]) + r" \\"
        return "\n".join([
            r"\begin{table}[t]", r"\centering", f"\\caption{{{cap}}}", f"\\label{{{label}}}",
            r"\begin{tabular}{l" + "r" * len(measures) + "}", r"\toprule", head, r"\midrule",
            *rows, r"\bottomrule", r"\end{tabular}", r"\end{table}", ""])

    # ---- files
    def to_csv(self, directory) -> Path:
        """Write every table as ``<name>.csv`` plus ``metadata.json`` (with column dtypes)."""
        d = Path(directory)
        d.mkdir(parents=True, exist_ok=True)
        dtypes = {}
        for name in _TABLES:
            t = self._tables[name]
            t.to_csv(d / f"{name}.csv", index=False)
            # "str?" marks a text column with missing values (written as empty fields)
            dtypes[name] = {c: (("str?" if t[c].isna().any() else "str") + ":" + str(t[c].dtype)
                                if _is_text(t[c]) else str(t[c].dtype)) for c in t.columns}
        (d / "metadata.json").write_text(json.dumps({**dict(self._metadata), "dtypes": dtypes}, indent=1))
        return d

    def to_parquet(self, directory) -> Path:
        """Write every table as ``<name>.parquet``; each file's schema metadata (key
        ``evalframe``) holds the version, conventions, seed, measures... as JSON."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        d = Path(directory)
        d.mkdir(parents=True, exist_ok=True)
        meta = json.dumps(dict(self._metadata))
        for name in _TABLES:
            t = pa.Table.from_pandas(self._tables[name], preserve_index=False)
            t = t.replace_schema_metadata({**(t.schema.metadata or {}), b"evalframe": meta.encode()})
            pq.write_table(t, d / f"{name}.parquet")
        (d / "metadata.json").write_text(json.dumps(dict(self._metadata), indent=1))
        return d

    @classmethod
    def read_parquet(cls, directory) -> "Report":
        """Read a Report written by :meth:`to_parquet`."""
        import pyarrow.parquet as pq

        d = Path(directory)
        tables, meta = {}, None
        for name in _TABLES:
            t = pq.read_table(d / f"{name}.parquet")
            meta = json.loads(t.schema.metadata[b"evalframe"])
            tables[name] = t.to_pandas()
        return cls(MappingProxyType(tables), MappingProxyType(meta))

    @classmethod
    def read_csv(cls, directory) -> "Report":
        """Read a Report written by :meth:`to_csv` (dtypes restored from metadata.json)."""
        d = Path(directory)
        meta = json.loads((d / "metadata.json").read_text())
        dtypes = meta.pop("dtypes")
        tables = {}
        for name in _TABLES:
            dt = dtypes[name]
            text = [c for c, v in dt.items() if v.startswith(("str:", "str?:"))]
            other = {c: v for c, v in dt.items() if c not in text and v not in ("bool", "float64")}
            t = pd.read_csv(d / f"{name}.csv", dtype={**{c: str for c in text}, **other},
                            keep_default_na=False, na_values={c: ["", "NaN", "nan", "<NA>"] for c in dt
                                                               if c not in text})
            for c, v in dt.items():
                if v == "bool":
                    t[c] = t[c].astype(str).str.lower().map({"true": True, "false": False})
                elif c in text:
                    kind, orig = v.split(":", 1)
                    col = t[c].astype(object)
                    if kind == "str?":
                        col = col.where(col != "", None)
                    t[c] = col if orig == "object" else col.astype(orig)
            tables[name] = t[list(dt)] if dt else pd.DataFrame()
        return cls(MappingProxyType(tables), MappingProxyType(meta))

    # ---- plots (thin wrappers over evalframe.plots)
    def plot_sample_size(self, measure: str | None = None, *, ax=None, quantity="half_width"):
        """Interval half-width (or se) against the number of questions; this golden set marked."""
        from . import plots
        return plots.plot_sample_size(self._t("planning"), measure=measure, current_n=self._metadata["n_questions"],
                                      quantity=quantity, ax=ax)

    def plot_power(self, measure: str | None = None, *, ax=None):
        """Power of the paired t-test against n for a few true differences."""
        from . import plots
        return plots.plot_power(self._t("planning"), measure=measure, current_n=self._metadata["n_questions"], ax=ax)

    def plot_forest(self, measures: Sequence[str] | None = None, *, ax=None):
        """Means with intervals: systems x measures."""
        from . import plots
        return plots.plot_forest(self._t("summary"), measures=measures, systems=self.systems, ax=ax)

    def plot_segment_forest(self, measure: str | None = None, *, ax=None):
        """Means with intervals of every segment within one measure."""
        from . import plots
        return plots.plot_segment_forest(self._t("by_segment"), measure=measure or self.measures[0],
                                         systems=self.systems, ax=ax)

    def plot_segments(self, measure: str | None = None, segment: str | None = None, *, ax=None):
        """Bars of one measure per segment value and system, with intervals."""
        from . import plots
        return plots.plot_segments(self._t("by_segment"), measure=measure or self.measures[0],
                                   segment=segment, systems=self.systems, ax=ax)

    def plot_curves(self, family: str | None = None, *, ax=None):
        """metric@k for every system, with interval bands."""
        from . import plots
        return plots.plot_curves(self._t("curves"), family=family, systems=self.systems, ax=ax)

    def plot_differences(self, system_a: str | None = None, system_b: str | None = None,
                         measure: str | None = None, *, ax=None):
        """Per-question paired differences (b - a), sorted; defaults: reference vs the best other system."""
        from . import plots
        measure = measure or self.measures[0]
        a, b = self._default_pair(measure, system_a, system_b)
        c = self._t("comparisons")
        row = c[(c["measure"] == measure) & (((c["system_a"] == a) & (c["system_b"] == b)) |
                                             ((c["system_a"] == b) & (c["system_b"] == a)))]
        return plots.plot_paired_differences(self._t("per_question"), system_a=a, system_b=b,
                                             measure=measure, comparison=row if len(row) else None, ax=ax)

    def _default_pair(self, measure, a, b):
        systems = self.systems
        if len(systems) < 2:
            raise ValueError("paired differences need two systems; the report has one")
        a = a or self._reference()
        if b is None:
            s = self._t("summary")
            s = s[(s["measure"] == measure) & (s["system"] != a)]
            b = str(s.sort_values("mean", ascending=False)["system"].iloc[0])
        return a, b

    def save_plots(self, directory, *, dpi: int = 130) -> list[Path]:
        """Render every plot to PNG in ``directory``; returns the files written."""
        import matplotlib
        import matplotlib.pyplot as plt

        d = Path(directory)
        d.mkdir(parents=True, exist_ok=True)
        written = []
        ns, nm = len(self.systems), len(self.measures)
        jobs = [("forest", (8, 1.2 + 0.17 * ns * nm + 0.3 * nm), lambda ax: self.plot_forest(ax=ax)),
                ("sample_size", (7, 4.5), lambda ax: self.plot_sample_size(ax=ax)),
                ("power", (7, 4.5), lambda ax: self.plot_power(ax=ax)),
                ("curves", (8, 5), lambda ax: self.plot_curves(ax=ax))]
        if ns >= 2:
            jobs.append(("differences", (8, 4.5), lambda ax: self.plot_differences(ax=ax)))
        seg = self._t("by_segment")
        if not seg.empty:
            nv = seg[["segment", "segment_value"]].drop_duplicates().shape[0]
            jobs.append(("segments", (min(14, max(7, 1.0 * nv + 0.1 * ns * nv)), 4.8), lambda ax: self.plot_segments(ax=ax)))
            jobs.append(("segment_forest", (8.5, 1.2 + 0.17 * ns * nv + 0.3 * nv),
                         lambda ax: self.plot_segment_forest(ax=ax)))
        with matplotlib.rc_context({"figure.dpi": dpi}):
            for name, size, draw in jobs:
                fig, ax = plt.subplots(figsize=size)
                try:
                    draw(ax)
                    fig.tight_layout()
                    path = d / f"{name}.png"
                    fig.savefig(path, dpi=dpi)
                    written.append(path)
                finally:
                    plt.close(fig)
        return written


# ---------------------------------------------------------------------- formatting
def _fmt_ci(mean, lo, hi, digits: int = 3, signed: bool = False) -> str:
    f = f"{{:{'+' if signed else ''}.{digits}f}}"
    if mean is None or (isinstance(mean, float) and math.isnan(mean)):
        return ""
    if lo is None or hi is None or (isinstance(lo, float) and math.isnan(lo)) or pd.isna(lo):
        return f.format(mean)
    g = f"{{:.{digits}f}}"
    return f"{f.format(mean)} [{g.format(lo)}, {g.format(hi)}]"


def _is_text(s: pd.Series) -> bool:
    return s.dtype == object or pd.api.types.is_string_dtype(s.dtype)


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


def _pipe_table(df: pd.DataFrame) -> str:
    """A GitHub pipe table written by hand (numbers right-aligned)."""
    cols = [str(c) for c in df.columns]
    num = [pd.api.types.is_numeric_dtype(df[c].dtype) and not pd.api.types.is_bool_dtype(df[c].dtype)
           for c in df.columns]
    rows = [[_cell(v) for v in r] for r in df.itertuples(index=False)]
    width = [max([len(c), 3] + [len(r[i]) for r in rows]) for i, c in enumerate(cols)]
    def line(cells):
        return "| " + " | ".join(c.rjust(w) if nm else c.ljust(w) for c, w, nm in zip(cells, width, num)) + " |"
    sep = "| " + " | ".join(("-" * (w - 1) + ":") if nm else "-" * w for w, nm in zip(width, num)) + " |"
    return "\n".join([line(cols), sep, *[line(r) for r in rows]])


_TEX = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
        "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}


def _tex(s: str) -> str:
    return "".join(_TEX.get(ch, ch) for ch in str(s))


def text_tables(rep: Report, digits: int = 3) -> str:
    """Aligned plain-text summary, comparisons and warnings (the CLI's terminal output)."""
    out = ["Summary (mean [%d%% interval], %s)" % (round(100 * rep._metadata["confidence"]),
                                                 rep._metadata["interval"]),
           rep.summary_wide(digits).to_string()]
    if rep._reference() and not rep._t("comparisons").empty:
        out += ["", f"▲/▼ significantly above/below {rep._reference()} ({rep._test_words()})", "",
                "Comparisons", rep.comparisons_view(digits).to_string(index=False)]
    st = rep._t("stages")
    if not st.empty:
        out += ["", "Pipeline stages", _round(st, digits).to_string(index=False)]
    seg = rep._t("by_segment")
    if not seg.empty:
        fl = seg[seg["flag"] != ""]
        out += ["", f"Segments: {len(seg)} rows, {len(fl)} flagged"]
        if len(fl):
            out.append(_round(fl[["system", "segment", "segment_value", "measure", "n", "mean",
                                  "overall_mean", "flag"]], digits).head(40).to_string(index=False))
    w = rep.warnings
    if len(w):
        lines = rep.warning_lines()
        out += ["", f"Warnings ({len(lines)})"] + [f"- {x}" for x in lines]
    return "\n".join(out) + "\n"


# ------------------------------------------------------------------------- report()
def _cutoffs(measures) -> list[int]:
    ks = sorted({m.k for m in measures if m.k is not None})
    return ks or [10]


def _stage_spec(stages) -> list[tuple[str, int]]:
    """``stages`` as [(system, k)], first stage first."""
    if stages is None:
        return []
    if isinstance(stages, Mapping):
        spec = [(str(s), k) for s, k in stages.items()]
    elif isinstance(stages, (list, tuple)):
        spec = []
        for i, s in enumerate(stages):
            if isinstance(s, (list, tuple)) and len(s) == 2:
                spec.append((str(s[0]), s[1]))
            else:
                spec.append((str(s), 100 if i == 0 else 5 if i == len(stages) - 1 else 20))
    else:
        raise TypeError("stages must be a list of system names (first stage first) or a dict {system: k}")
    problems = []
    if len(spec) < 2:
        problems.append(InputProblem(f"stages names {len(spec)} system(s)",
                                     "name at least two: the first stage and the final context, "
                                     "e.g. stages={'first_stage': 100, 'reranked': 5}"))
    for s, k in spec:
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
            problems.append(InputProblem(f"stage {s!r}: k must be an int >= 1, got {k!r}",
                                         "give each stage the number of documents it passes on"))
    if problems:
        raise EvalframeInputError("stages", problems)
    return [(s, int(k)) for s, k in spec]


def report(run, qrels, *, measures=None, segments=None, baseline: str | None = None,
           stages: "Sequence[str] | Mapping[str, int] | None" = None, confidence: float = 0.95,
           n_resamples: int = 10_000, seed: int = 0, interval: Interval = "bootstrap",
           test: stats.TestName = "randomization", correction: stats.Correction | None = None,
           curve: str = "R", curve_ks: Iterable[int] = CURVE_KS,
           progress: Callable[[str], None] | None = None, **conventions) -> Report:
    """Evaluate one or many systems and gather every table a decision needs.

    Parameters
    ----------
    run : DataFrame, path, dict, or list/dict of those
        One or many systems (see :func:`evalframe.read_run`).
    qrels : DataFrame, path or dict
        The golden set.
    measures : names, optional
        Default: the spec's ``R@5, R@10, R@100, P@5, RR, nDCG@10, AP``.
    segments : DataFrame, path, or column name(s) of the golden-set DataFrame, optional
        ``query_id`` plus one or more segment columns (question type, length...).
    baseline : str, optional
        Compare every system with this one; without it, every pair.
    stages : list of system names or dict {system: k}, optional
        Pipeline stages, first stage first, e.g. ``{"first_stage": 100, "reranked": 5}``
        (a list uses k = 100 for the first stage and 5 for the last).
    confidence : float
        Confidence level of every interval.
    n_resamples, seed : int
        Bootstrap / randomisation resamples and seed.
    interval : {"bootstrap", "bca", "t", "auto"}
        Interval of the means (summary, segments, stages); the spec's bootstrap by default.
    test, correction
        Paired test and multiple-comparison correction (see :func:`stats.compare`);
        default the randomisation test with Holm's correction.
    curve, curve_ks
        Measure family and cutoffs of the metric@k curve (default recall at 13 cutoffs
        from 1 to 100; pass ``range(1, 101)`` for every k).
    progress : callable, optional
        Called with a short label before each step (the CLI draws a progress bar).
    **conventions
        ``rel, ties, missing, depth, duplicates`` as in :func:`evalframe.evaluate`.

    Returns
    -------
    Report

    Examples
    --------
    >>> import evalframe as ef
    >>> cran = ef.datasets.load_cranfield()
    >>> r = ef.report(cran.runs, cran.qrels, measures=["R@10", "nDCG@10"], segments=cran.segments,
    ...               baseline="bm25", n_resamples=200)            # doctest: +SKIP
    >>> r.summary[["system", "measure", "mean", "ci_low", "ci_high"]]  # doctest: +SKIP
    """
    step = progress or (lambda label: None)
    unknown = sorted(set(conventions) - set(_CONVENTIONS))
    if unknown:
        raise TypeError(f"report() got unknown keyword argument(s) {unknown}; conventions are "
                        f"{list(_CONVENTIONS)}")
    conv = {**_CONVENTIONS, **conventions}
    stats.check_confidence(confidence)
    stats.check_resamples(n_resamples)
    if interval not in ("bootstrap", "bca", "t", "auto"):
        raise ValueError(f"interval must be one of ['bootstrap', 'bca', 't', 'auto'], got {interval!r}")
    if curve not in FAMILIES:
        raise ValueError(f"curve must be a measure family with a cutoff, e.g. 'R', got {curve!r}")
    ks = sorted({int(k) for k in curve_ks})
    if not ks or ks[0] < 1:
        raise ValueError(f"curve_ks must be ints >= 1, got {list(curve_ks)!r}")
    ms = [resolve(m, rel=conv["rel"]) for m in parse_measures(measures)]
    names = [str(m) for m in ms]
    seg_table = _segments_from(segments, qrels)

    # ---- one ranking pass for everything
    judged_ks = _cutoffs(ms)
    extra = [f"Judged@{k}" for k in judged_ks] + [f"{curve}@{k}" for k in ks]
    stage_spec = _stage_spec(stages)
    all_ms = list(dict.fromkeys([*ms, *[resolve(m, rel=conv["rel"]) for m in parse_measures(
        extra + [f"R@{k}" for _, k in stage_spec])]]))
    step("ranking and judging")
    per_all, diag_raw = evaluate_with_diagnostics(run, qrels, all_ms, **conv)
    if "system" not in per_all.columns:
        per_all.insert(0, "system", "system")
    systems = list(pd.unique(per_all["system"]))
    if baseline is not None and baseline not in systems:
        raise EvalframeInputError("report", [InputProblem(
            f"baseline {baseline!r} is not a system of the run (systems: {systems[:10]})",
            "pass one of the names in the run's system column")])
    missing_stage = [st for st, _ in stage_spec if st not in systems]
    if missing_stage:
        raise EvalframeInputError("stages", [InputProblem(
            f"stage(s) {missing_stage} are not systems of the run (systems: {systems[:10]})",
            "use the names in the run's system column")])

    by_measure = dict(tuple(per_all.groupby("measure", sort=False)))
    def pick(name_list):
        parts = [by_measure[n] for n in name_list if n in by_measure]
        return pd.concat(parts, ignore_index=True) if parts else per_all.iloc[:0]
    per_q = pick(names)
    # the long table in (system, query_id, measure) order, as evaluate() returns it
    per_q = per_q.sort_values(["system", "query_id"], kind="stable", key=_order_key(systems, per_all)).reset_index(drop=True)
    n_questions = int(per_q.groupby("system")["query_id"].nunique().max())

    # ---- segments joined
    seg_cols: list[str] = []
    seg_diag = []
    if seg_table is not None:
        seg_cols = [c for c in seg_table.columns if c != "query_id"]
        clash = [c for c in seg_cols if c in per_q.columns]
        if clash:
            raise EvalframeInputError("segments", [InputProblem(
                f"segment columns {clash} clash with the per-question table's columns",
                "rename them")])
        golden_q = pd.unique(per_q["query_id"])
        known = set(seg_table["query_id"])
        unassigned = [q for q in golden_q if q not in known]
        extra_q = len(known - set(golden_q))
        per_q = per_q.merge(seg_table, on="query_id", how="left", sort=False)
        for c in seg_cols:
            per_q[c] = per_q[c].fillna(_MISSING_SEGMENT)
        if unassigned:
            seg_diag.append(_drow("segments_missing_questions", count=len(unassigned), level="warning",
                                  detail=f"{len(unassigned)} golden-set questions have no segment row; "
                                         f"segment value {_MISSING_SEGMENT!r} (e.g. {', '.join(unassigned[:5])})"))
        if extra_q:
            seg_diag.append(_drow("segments_extra_questions", count=extra_q,
                                  detail=f"{extra_q} segment rows name questions outside the golden set; ignored"))

    # ---- summary
    step("resampling: summary intervals")
    skw = dict(method=interval, confidence=confidence, n_resamples=n_resamples, seed=seed)
    summary = stats.summarize(per_q[["system", "query_id", "measure", "value"]], **skw)
    summary = _order(summary, systems, names)

    # ---- segments
    step("resampling: segments")
    by_segment = _by_segment(per_q, seg_cols, summary, skw, systems, names)

    # ---- comparisons
    step("resampling: paired comparisons")
    if len(systems) >= 2:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            comparisons = stats.compare(per_q[["system", "query_id", "measure", "value"]], baseline=baseline,
                                        test=test, correction=correction, n_resamples=n_resamples,
                                        seed=seed, confidence=confidence)
        for w in caught:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
        comparisons["significant"] = comparisons["p_adjusted"] < (1 - confidence)
        spos = {x: i for i, x in enumerate(systems)}
        mpos = {x: i for i, x in enumerate(names)}
        comparisons = comparisons.sort_values(
            ["measure", "system_a", "system_b"], kind="stable",
            key=lambda c: c.map(mpos) if c.name == "measure" else c.map(spos)).reset_index(drop=True)
    else:
        comparisons = pd.DataFrame(columns=["measure", "system_a", "system_b", "n", "n_dropped", "cluster",
                                            "n_clusters", "mean_a",
                                            "mean_b", "diff", "sd_diff", "ci_low", "ci_high", "ci_method",
                                            "statistic", "p_value", "p_adjusted", "test", "correction",
                                            "effect_size", "wins", "ties", "losses", "confidence",
                                            "n_resamples", "seed", "significant"])

    # ---- curves (analytic t intervals: cheap for many cutoffs)
    step("metric@k curves")
    curve_names = [f"{curve}@{k}" for k in ks]
    cq = pick([str(resolve(m, rel=conv["rel"])) for m in parse_measures(curve_names)])
    curves = stats.summarize(cq, method="t", confidence=confidence)
    kmap = {str(resolve(m, rel=conv["rel"])): m.k for m in parse_measures(curve_names)}
    curves.insert(1, "family", curve)
    curves.insert(2, "k", curves["measure"].map(kmap).astype(np.int64))
    curves = curves[["system", "family", "k", "measure", "n", "mean", "se", "ci_low", "ci_high", "method",
                     "confidence"]]
    curves = curves.sort_values(["system", "k"], key=_sys_key(systems), kind="stable").reset_index(drop=True)

    # ---- stages
    stages_t = _stages_table(stage_spec, pick, skw, conv)

    # ---- planning
    step("sample-size planning")
    grid = sorted({*[10, 20, 30, 50, 75, 100, 150, 200, 300, 500, 750, 1000, 2000, 5000],
                   *([n_questions] if n_questions >= 2 else [])})
    grid = [g for g in grid if g <= max(2000, 4 * n_questions)]
    planning = stats.planning_curve(per_q[["system", "query_id", "measure", "value"]], n=grid,
                                    deltas=(0.01, 0.02, 0.05, 0.1), confidence=confidence, alpha=1 - confidence)

    # ---- diagnostics
    step("diagnostics")
    judged = aggregate(pick([f"Judged@{k}" for k in judged_ks]))
    diagnostics = _diagnostics(per_q, diag_raw, judged, summary, conv, ms, n_questions, systems, seg_diag)
    _issue(diagnostics)

    metadata = {
        "evalframe_version": __version__, "version": __version__, "measures": names,
        "conventions": {k: v for k, v in conv.items()}, "confidence": float(confidence),
        "seed": int(seed), "n_resamples": int(n_resamples), "interval": interval, "test": test,
        "correction": correction or "none",
        "baseline": baseline, "stages": [list(s) for s in stage_spec], "systems": systems,
        "segments": seg_cols, "n_questions": n_questions, "curve": curve, "curve_ks": ks,
    }
    if not comparisons.empty:
        metadata["correction"] = str(comparisons["correction"].iloc[0])
    per_q = per_q.reset_index(drop=True)
    tables = {"summary": summary, "per_question": per_q, "by_segment": by_segment,
              "comparisons": comparisons.reset_index(drop=True), "diagnostics": diagnostics,
              "stages": stages_t, "curves": curves, "planning": planning}
    return Report(MappingProxyType({k: _frozen(v) for k, v in tables.items()}), MappingProxyType(metadata))


def _sys_key(systems):
    pos = {s: i for i, s in enumerate(systems)}
    def key(col):
        if col.name == "system":
            return col.map(pos)
        return col
    return key


def _order_key(systems, per_all):
    pos = {s: i for i, s in enumerate(systems)}
    qpos = {q: i for i, q in enumerate(pd.unique(per_all["query_id"]))}
    def key(col):
        if col.name == "system":
            return col.map(pos)
        if col.name == "query_id":
            return col.map(qpos)
        return col
    return key


def _order(df: pd.DataFrame, systems, names, extra: Sequence[str] = ()) -> pd.DataFrame:
    spos = {s: i for i, s in enumerate(systems)}
    mpos = {m: i for i, m in enumerate(names)}
    keys = ["system", *extra, "measure"]
    def key(col):
        if col.name == "system":
            return col.map(spos)
        if col.name == "measure":
            return col.map(mpos)
        return col
    return df.sort_values(keys, key=key, kind="stable").reset_index(drop=True)


def _by_segment(per_q, seg_cols, summary, skw, systems, names) -> pd.DataFrame:
    cols = ["system", "segment", "segment_value", "measure", "n", "mean", "se", "ci_low", "ci_high",
            "method", "overall_mean", "gap", "too_small", "below_overall", "flag"]
    if not seg_cols:
        return pd.DataFrame(columns=cols)
    overall = summary.set_index(["system", "measure"])["mean"]
    parts = []
    for c in seg_cols:
        s = stats.summarize(per_q[["system", "query_id", "measure", "value", c]], by=c, **skw)
        s = s.rename(columns={c: "segment_value"})
        s.insert(1, "segment", c)
        parts.append(s)
    t = pd.concat(parts, ignore_index=True)
    t["segment_value"] = t["segment_value"].astype(str)
    t["overall_mean"] = overall.reindex(pd.MultiIndex.from_arrays([t["system"], t["measure"]])).to_numpy()
    t["gap"] = t["mean"] - t["overall_mean"]
    t["too_small"] = t["n"] < MIN_SEGMENT_QUESTIONS
    t["below_overall"] = (t["ci_high"] < t["overall_mean"]).fillna(False).astype(bool)
    t["flag"] = np.where(t["too_small"], f"too small (n < {MIN_SEGMENT_QUESTIONS})",
                         np.where(t["below_overall"], "below overall", ""))
    t = _order(t, systems, names, extra=["segment"])
    return t[cols]


def _stages_table(spec, pick, skw, conv) -> pd.DataFrame:
    cols = ["stage", "system", "measure", "k", "n", "mean", "ci_low", "ci_high", "ceiling",
            "share_of_ceiling", "lost"]
    if not spec:
        return pd.DataFrame(columns=cols)
    rows = []
    ceiling = None
    for i, (system, k) in enumerate(spec):
        name = str(resolve(parse_measures(f"R@{k}")[0], rel=conv["rel"]))
        pq = pick([name])
        pq = pq[pq["system"] == system]
        s = stats.summarize(pq[["system", "query_id", "measure", "value"]], **skw).iloc[0]
        if ceiling is None:
            ceiling = float(s["mean"])
        share = float(s["mean"]) / ceiling if ceiling else np.nan
        rows.append({"stage": i + 1, "system": system, "measure": name, "k": k, "n": int(s["n"]),
                     "mean": float(s["mean"]), "ci_low": float(s["ci_low"]), "ci_high": float(s["ci_high"]),
                     "ceiling": ceiling, "share_of_ceiling": share, "lost": ceiling - float(s["mean"])})
    return pd.DataFrame(rows, columns=cols)


def _drow(check, *, system=None, measure=None, count=None, value=np.nan, level="info", detail=""):
    return {"check": check, "system": system, "measure": measure,
            "count": pd.NA if count is None else int(count), "value": float(value), "level": level,
            "detail": detail}


def _diagnostics(per_q, diag_raw, judged, summary, conv, ms, n_questions, systems, seg_diag) -> pd.DataFrame:
    rows = []
    counted = per_q.groupby("system", sort=False)["query_id"].nunique()
    for s in systems:
        rows.append(_drow("questions_counted", system=s, count=counted.get(s, 0),
                          detail=f"{int(counted.get(s, 0))} questions in every mean"))
    for r in diag_raw.itertuples(index=False):
        sysname = None if r.system is None or (not isinstance(r.system, str) and pd.isna(r.system)) else str(r.system)
        level = "warning" if r.check in ("run_questions_not_in_golden_set", "golden_questions_not_in_run",
                                         "golden_questions_without_relevant") else "info"
        what = {"run_questions_not_in_golden_set": "run questions not in the golden set",
                "golden_questions_not_in_run": "golden-set questions the system did not answer",
                "golden_questions_without_relevant": "golden-set questions without a relevant document",
                "score_ties": "rows tied on score with the row above"}.get(r.check, r.check)
        rows.append(_drow(r.check, system=sysname, count=r.count, level=level,
                          detail=f"{r.count} {what}: {r.action} (e.g. {r.examples})"))
    for r in judged.itertuples(index=False):
        k = int(str(r.measure).split("@")[1])
        unj = 1 - float(r.mean)
        bad = float(r.mean) < MIN_JUDGED
        rows.append(_drow("judged_at_k", system=str(r.system), measure=str(r.measure), count=int(r.n),
                          value=float(r.mean), level="warning" if bad else "info",
                          detail=(f"{unj:.0%} of the top-{k} documents are unjudged and count as not "
                                  "relevant, so scores are lower bounds; judge the pooled top documents "
                                  "of every system" if bad else f"{unj:.0%} of the top-{k} documents unjudged")))
    hw = stats.half_width(p=0.5, n=max(n_questions, 1)) if n_questions >= 1 else np.nan
    small = n_questions < MIN_QUESTIONS
    rows.append(_drow("golden_set_size", count=n_questions, value=hw, level="warning" if small else "info",
                      detail=(f"{n_questions} questions: a proportion near 0.5 has a 95% interval of "
                              f"+-{hw:.3f}" + (f"; below the working minimum of {MIN_QUESTIONS} questions "
                                                "(200 is comfortable)" if small else ""))))
    for r in summary.itertuples(index=False):
        if not (isinstance(r.ci_high, float) and math.isnan(r.ci_high)):
            rows.append(_drow("interval_half_width", system=str(r.system), measure=str(r.measure),
                              count=int(r.n), value=(r.ci_high - r.ci_low) / 2,
                              detail=f"observed {r.method} interval half-width"))
    dup = conv["duplicates"]
    rows.append(_drow("duplicates", detail={
        "error": "duplicates='error': a document listed twice for one question would have raised; none found",
        "max": "duplicates='max': a document listed twice keeps its highest score",
        "first": "duplicates='first': a document listed twice keeps its first row"}[dup]))
    rows += seg_diag
    for m in ms:
        fam = FAMILIES[m.family]
        rows.append(_drow("measure", measure=str(m), detail=f"{fam.doc}" + (f", k = {m.k}" if m.k else "")
                          + (f"; parameters {dict(m.params)}" if m.params else "") + f"; aggregated by {fam.aggregation}"))
    for k, v in conv.items():
        rows.append(_drow("convention", system=k, detail=f"{k}={v!r}: {_CONVENTION_DOCS[k]}"))
    out = pd.DataFrame(rows, columns=["check", "system", "measure", "count", "value", "level", "detail"])
    out["count"] = out["count"].astype("Int64")
    return out


def _unjudged_summary(judged: pd.DataFrame) -> str:
    """One sentence for every judged_at_k warning row: the unjudged share per cutoff."""
    parts, systems = [], list(dict.fromkeys(judged["system"].astype(str)))
    for measure, g in judged.groupby("measure", sort=False):
        k = str(measure).split("@")[1]
        lo, hi = 1 - g["value"].max(), 1 - g["value"].min()
        parts.append(f"{lo:.0%} at k = {k}" if round(lo, 2) == round(hi, 2) else f"{lo:.0%}-{hi:.0%} at k = {k}")
    who = ", ".join(systems[:5]) + ("..." if len(systems) > 5 else "")
    return (f"unjudged documents in the top k ({'; '.join(parts)}) of {len(systems)} system(s) ({who}) "
            "count as not relevant, so scores are lower bounds (judge the pooled top documents of every "
            "system; see the report's diagnostics)")


def _issue(diagnostics: pd.DataFrame) -> None:
    d = diagnostics[diagnostics["level"] == "warning"]
    j = d[d["check"] == "judged_at_k"]
    if len(j):
        _warn_user(_unjudged_summary(j), UnjudgedDocumentsWarning)
    for r in d.itertuples(index=False):
        if r.check == "golden_set_size":
            _warn_user(r.detail, SmallGoldenSetWarning)
