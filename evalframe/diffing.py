"""``diff``: what changed between two reports (saved ones too, via ``read_report``).

Per system and measure the change of the mean, with a paired interval when both
per-question tables hold the same questions of the same golden set; the systems,
measures and questions added or removed; and the fingerprints that differ (golden set,
runs, conventions, measures, evalframe version). A paired comparison across different
golden sets (their fingerprints differ) is refused unless asked for
(``across_golden_sets=True``): the same question id may not mean the same question.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from html import escape

import numpy as np
import pandas as pd

__all__ = ["diff", "ReportDiff"]


@dataclass(frozen=True)
class ReportDiff:
    """The difference between two reports.

    Attributes
    ----------
    changes : DataFrame
        One row per (system, measure) in both reports: ``system, measure, mean_old,
        mean_new, change, n_paired, change_paired, ci_low, ci_high, p_value, method``
        (``change = mean_new - mean_old`` over each report's own questions;
        ``change_paired``, its interval and p-value: the mean of ``new - old`` on the
        ``n_paired`` shared questions and the paired t-test's, NaN when not paired;
        ``method``: ``"paired t"`` or why it is not paired).
    systems_added, systems_removed, measures_added, measures_removed : list of str
    questions_added, questions_removed : list of str
        Question ids in the new (old) per-question table only.
    fingerprints : DataFrame
        ``what, old, new`` for every fingerprint that differs.
    notes : list of str
        What the reader must know (golden sets differ, pairing refused...).
    confidence : float

    Examples
    --------
    >>> import warnings
    >>> import evalframe as ef
    >>> sso = ef.datasets.load_sso()
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     rep = ef.report(sso.runs, sso.qrels, measures=["R@5"], n_resamples=20)
    >>> d = ef.diff(rep, rep)
    >>> d.changes[["system", "measure", "change"]].values.tolist(), d.fingerprints.empty
    ([['librarian', 'R@5', 0.0]], True)
    """

    changes: pd.DataFrame
    systems_added: list = field(default_factory=list)
    systems_removed: list = field(default_factory=list)
    measures_added: list = field(default_factory=list)
    measures_removed: list = field(default_factory=list)
    questions_added: list = field(default_factory=list)
    questions_removed: list = field(default_factory=list)
    fingerprints: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=["what", "old", "new"]))
    notes: list = field(default_factory=list)
    confidence: float = 0.95

    def _added_removed(self) -> list[str]:
        out = []
        for what, added, removed in (("systems", self.systems_added, self.systems_removed),
                                     ("measures", self.measures_added, self.measures_removed),
                                     ("questions", self.questions_added, self.questions_removed)):
            if added:
                out.append(f"{what} added ({len(added)}): {', '.join(map(str, added[:10]))}"
                           + (" ..." if len(added) > 10 else ""))
            if removed:
                out.append(f"{what} removed ({len(removed)}): {', '.join(map(str, removed[:10]))}"
                           + (" ..." if len(removed) > 10 else ""))
        return out

    def to_text(self) -> str:
        """Plain text: notes, what was added or removed, fingerprints, the changes table."""
        lines = ["Changes of the means (new - old" + (
            f"; paired: on the shared questions, {self.confidence:.0%} interval"
            if (self.changes["method"] == "paired t").any() else "") + ")"]
        if len(self.changes):
            view = self._view()
            lines.append(view.to_string(index=False))
        else:
            lines.append("(no system and measure in both reports)")
        extra = self._added_removed()
        if extra:
            lines += ["", *extra]
        if len(self.fingerprints):
            lines += ["", "Fingerprints that differ"]
            lines += [f"- {r.what}: {r.old} -> {r.new}" for r in self.fingerprints.itertuples(index=False)]
        if self.notes:
            lines += ["", "Notes"] + [f"- {n}" for n in self.notes]
        return "\n".join(lines) + "\n"

    def __str__(self) -> str:
        return self.to_text()

    def _view(self) -> pd.DataFrame:
        c = self.changes
        ci = [("" if np.isnan(lo) else f"{d:+.4f} [{lo:+.4f}, {hi:+.4f}]")
              for d, lo, hi in zip(c["change_paired"], c["ci_low"], c["ci_high"])]
        return pd.DataFrame({"system": c["system"], "measure": c["measure"],
                             "old": c["mean_old"].map("{:.4f}".format), "new": c["mean_new"].map("{:.4f}".format),
                             "change": c["change"].map("{:+.4f}".format), "paired change [interval]": ci,
                             "n paired": c["n_paired"].astype(str), "method": c["method"]})

    def to_markdown(self) -> str:
        """Markdown: a heading, the changes as a pipe table, then the lists."""
        def cell(v) -> str:
            return escape(str(v)).replace("|", "\\|")
        lines = ["## What changed", ""]
        if len(self.changes):
            view = self._view()
            lines.append("| " + " | ".join(view.columns) + " |")
            lines.append("|" + "---|" * len(view.columns))
            lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in view.itertuples(index=False)]
            lines.append("")
        lines += [f"- {cell(x)}" for x in self._added_removed()]
        if len(self.fingerprints):
            lines += ["", "### Fingerprints that differ", ""]
            lines += [f"- {cell(r.what)}: `{r.old}` → `{r.new}`" for r in self.fingerprints.itertuples(index=False)]
        if self.notes:
            lines += ["", "### Notes", ""] + [f"- {cell(n)}" for n in self.notes]
        return "\n".join(lines) + "\n"


    def to_html_section(self) -> str:
        """The diff as an HTML fragment (a table and lists), the section of report.html
        that ``Report.to_html(..., diff=...)`` and ``evalframe report --previous DIR`` add."""
        from .reporting import html as H
        parts = []
        if len(self.changes):
            view = self._view()
            cols = [H.Column(c, numeric=c in ("old", "new", "change", "n paired")) for c in view.columns]
            rows = [[H.escape(v) for v in row] for row in view.itertuples(index=False)]
            parts.append(H.table(cols, rows, name="diff"))
        lists = [H.escape(x) for x in self._added_removed()]
        if len(self.fingerprints):
            lists += [f"fingerprint of {H.escape(r.what)}: <code>{H.escape(r.old)}</code> → "
                      f"<code>{H.escape(r.new)}</code>" for r in self.fingerprints.itertuples(index=False)]
        lists += [H.escape(n) for n in self.notes]
        if lists:
            parts.append("<ul>" + "".join(f"<li>{x}</li>" for x in lists) + "</ul>")
        return "\n".join(parts) or "<p>Nothing changed.</p>"

    def to_html(self, path=None, *, title: str = "evalframe: what changed") -> str:
        """The diff as a self-contained HTML page (written to ``path`` when given)."""
        from .reporting import html as H
        page = H.document(title, f"<header><h1>{H.escape(title)}</h1></header>\n<section id='diff'>"
                                 f"<h2>Changes</h2>\n{self.to_html_section()}\n</section>")
        if path is not None:
            from .io import local_path
            local_path(path, "diff output", write=True).write_text(page, encoding="utf-8")
        return page


def _fingerprint_rows(old: dict, new: dict) -> pd.DataFrame:
    rows = []
    for key in ("golden_set", "chunks", "conventions", "measures", "evalframe_version"):
        a, b = _digest(old.get(key)), _digest(new.get(key))
        if a != b:
            rows.append((key.replace("_", " "), a, b))
    ra, rb = old.get("runs") or {}, new.get("runs") or {}
    for name in dict.fromkeys([*ra, *rb]):
        a, b = _digest(ra.get(name)), _digest(rb.get(name))
        if a != b:
            rows.append((f"run {name}", a, b))
    return pd.DataFrame(rows, columns=["what", "old", "new"])


def _digest(value) -> str:
    """A fingerprint as text; ``"absent"`` for none (None in memory, NaN after a CSV round trip)."""
    return "absent" if value is None or (isinstance(value, float) and value != value) or value == "" else str(value)


def diff(old, new, *, across_golden_sets: bool = False, confidence: float = 0.95) -> ReportDiff:
    """What changed between two reports.

    Parameters
    ----------
    old, new : Report
        Two reports (``ef.report(...)`` or ``ef.read_report(dir)``).
    across_golden_sets : bool
        Pair questions by id even when the golden sets' fingerprints differ (default:
        refused, with a note saying why; the changes of the means are still given).
    confidence : float
        Level of the paired intervals.

    Returns
    -------
    ReportDiff
        ``changes`` (per system and measure), systems / measures / questions added and
        removed, ``fingerprints`` that differ, ``notes``; ``to_text()``, ``to_markdown()``,
        ``to_html()`` (a page) and ``to_html_section()`` (report.html's section:
        ``new.to_html(path, diff=ef.diff(old, new))``).

    Notes
    -----
    The paired interval is the t interval of ``mean(d)`` with ``d = new - old`` per shared
    question (:func:`evalframe.stats.compare`, ``test="t"``); the two reports' values of a
    question differ only if the system or its run changed, so ``change`` and its interval
    say how much a re-run moved the mean, question by question.

    Examples
    --------
    >>> import warnings
    >>> import evalframe as ef
    >>> cran = ef.datasets.load_cranfield()
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     old = ef.report(cran.runs, cran.qrels, measures=["nDCG@10"], n_resamples=20)
    ...     new = ef.report(cran.runs[cran.runs.system != "tfidf"], cran.qrels, measures=["nDCG@10"],
    ...                     n_resamples=20)
    >>> d = ef.diff(old, new)
    >>> d.systems_removed, float(d.changes["change"].abs().max())
    (['tfidf'], 0.0)
    """
    from .reporting import Report
    from .stats import compare
    from ._validation import BOOLEAN, CONFIDENCE, check, error
    for name, r in (("old", old), ("new", new)):
        if not isinstance(r, Report):
            raise error("diff", name, "a Report (ef.report(...) or ef.read_report(DIR))", type(r).__name__)
    check("diff", "across_golden_sets", across_golden_sets, BOOLEAN)
    check("diff", "confidence", confidence, CONFIDENCE)
    fa = old.metadata.get("fingerprints") or {}
    fb = new.metadata.get("fingerprints") or {}
    fps = _fingerprint_rows(fa, fb) if fa and fb else pd.DataFrame(columns=["what", "old", "new"])
    notes = []
    if not (fa and fb):
        notes.append("a report has no fingerprints (written before evalframe recorded them): whether the "
                     "golden sets are the same is unknown")
    golden_differs = bool(fa and fb and fa.get("golden_set") != fb.get("golden_set"))
    paired_ok = not golden_differs or across_golden_sets
    if golden_differs:
        notes.append("the golden sets differ (their fingerprints do): " + (
            "questions were paired by id as asked (across_golden_sets=True)" if across_golden_sets else
            "no paired comparison (a question id may not mean the same question, or its labels changed); "
            "pass across_golden_sets=True to pair by id anyway"))
    if fa and fb and fa.get("conventions") != fb.get("conventions"):
        notes.append("the conventions differ: " + _convention_change(old.metadata, new.metadata))

    sa, sb = old.systems, new.systems
    ma, mb = old.measures, new.measures
    pa, pb = old.per_question, new.per_question
    qa, qb = pd.unique(pa["query_id"].astype(str)), pd.unique(pb["query_id"].astype(str))
    sum_a = old.summary.set_index(["system", "measure"])["mean"]
    sum_b = new.summary.set_index(["system", "measure"])["mean"]
    both = [(s, m) for s in sa if s in sb for m in ma if m in mb
            if (s, m) in sum_a.index and (s, m) in sum_b.index]
    changes = pd.DataFrame({"system": [s for s, _ in both], "measure": [m for _, m in both]})
    changes["mean_old"] = [float(sum_a.loc[k]) for k in both]
    changes["mean_new"] = [float(sum_b.loc[k]) for k in both]
    changes["change"] = changes["mean_new"] - changes["mean_old"]
    changes["n_paired"] = 0
    changes["change_paired"] = np.nan
    changes["ci_low"] = np.nan
    changes["ci_high"] = np.nan
    changes["p_value"] = np.nan
    changes["method"] = "not paired: golden sets differ" if not paired_ok else "not paired: no shared questions"
    shared = np.intersect1d(qa, qb)
    if paired_ok and len(both) and len(shared) >= 2:
        cols = ["system", "query_id", "measure", "value"]
        keep = lambda t: t.loc[t["query_id"].astype(str).isin(shared), cols]  # noqa: E731
        ta, tb = keep(pa), keep(pb)
        table = pd.concat([ta.rename(columns={"system": "series"}).assign(system="old"),
                           tb.rename(columns={"system": "series"}).assign(system="new")], ignore_index=True)
        pairs = set(both)
        table = table[[(s, m) in pairs for s, m in zip(table["series"], table["measure"])]]
        c = compare(table, baseline="old", by="series", correction="none", confidence=confidence)
        c = c.set_index(["series", "measure"])
        idx = pd.MultiIndex.from_frame(changes[["system", "measure"]])
        got = c.reindex(idx)
        changes["n_paired"] = got["n"].fillna(0).astype(int).to_numpy()
        changes["change_paired"] = got["diff"].to_numpy(dtype=float)
        changes["ci_low"] = got["ci_low"].to_numpy(dtype=float)
        changes["ci_high"] = got["ci_high"].to_numpy(dtype=float)
        changes["p_value"] = got["p_value"].to_numpy(dtype=float)
        changes["method"] = np.where(changes["n_paired"] >= 2, "paired t", "not paired: no shared questions")
    return ReportDiff(
        changes=changes,
        systems_added=[s for s in sb if s not in sa], systems_removed=[s for s in sa if s not in sb],
        measures_added=[m for m in mb if m not in ma], measures_removed=[m for m in ma if m not in mb],
        questions_added=sorted(set(qb) - set(qa)), questions_removed=sorted(set(qa) - set(qb)),
        fingerprints=fps, notes=notes, confidence=float(confidence))


def _convention_change(a: dict, b: dict) -> str:
    ca, cb = a.get("conventions") or {}, b.get("conventions") or {}
    return ", ".join(f"{k} {ca.get(k)!r} -> {cb.get(k)!r}" for k in dict.fromkeys([*ca, *cb])
                     if ca.get(k) != cb.get(k)) or "(details not recorded)"
