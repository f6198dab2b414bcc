"""The report's diagnostics table (what was counted, dropped, unjudged, how wide the
intervals are, which measures and conventions were used) and the warnings it issues."""
from __future__ import annotations

__all__ = ["MIN_QUESTIONS", "MIN_JUDGED", "CONVENTION_DOCS", "WARNING_CHECKS", "diagnostic_row",
           "report_diagnostics", "unjudged_summary", "issue_warnings", "ReportWarning", "ReportWarnings",
           "report_warnings", "labels_by_judge"]

import warnings as _warnings

import math
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from .. import stats
from ..errors import (ChunkingsDifferWarning, EvalframeWarning, IdSchemeWarning, NoRelevantWarning, QuestionsDroppedWarning,
                      QuestionsScoredZeroWarning, ShallowRankingWarning, SmallGoldenSetWarning,
                      UnjudgedDocumentsWarning, warn)
from ..measures import FAMILIES, Measure
from .._conflicts import is_human
from .tables import DIAGNOSTIC_COLUMNS

#: the spec's "working minimum" of questions
MIN_QUESTIONS = 50
#: Judged@k below this raises an UnjudgedDocumentsWarning
MIN_JUDGED = 0.9
CONVENTION_DOCS = {
    "rel": "a document is relevant when its label >= rel",
    "ties": "order of equal scores (doc_id_desc = trec_eval's)",
    "missing": "golden-set questions a system did not answer: scored 0 (zero) or left out (drop)",
    "depth": "only the top `depth` documents of each ranking are evaluated (None: all)",
    "duplicates": "a document listed twice for one question: error, keep max score, keep first row",
    "conflicts": "several labels of one (question, document): error, keep max, min or the majority label, "
                 "or a person's over a model's (human)",
    "no_relevant": "golden-set questions with no relevant document: kept, recall-type measures scoring 0 (zero), "
                   "or left out (drop)",
    "ascending": "True: the run's scores are distances, the lowest ranked first; False: the highest score first",
}
#: checks of :func:`evalframe.diagnostics` reported at level "warning"
WARNING_CHECKS = ("system_without_judged_documents", "systems_share_no_judged_documents", "chunkings_differ",
                  "run_questions_not_in_golden_set", "golden_questions_not_in_run",
                  "golden_questions_without_relevant", "shallow_rankings")
#: checks shown first: they say the numbers below them mean something else than they seem
_FIRST = ("system_without_judged_documents", "systems_share_no_judged_documents", "chunkings_differ")
_WHAT = {"run_questions_not_in_golden_set": "run questions not in the golden set",
         "golden_questions_not_in_run": "golden-set questions the system did not answer",
         "golden_questions_without_relevant": "golden-set questions without a relevant document",
         "score_ties": "rows tied on score with the row above",
         "golden_set_conflicting_labels": "golden-set (question, document) pairs with conflicting labels",

         "shallow_rankings": "questions whose ranking is shorter than the deepest cutoff",
         "rollup_run_rows_collapsed": "chunk rows of a page already ranked",
         "rollup_golden_rows_merged": "golden-set chunk rows merged into their page",
         "system_without_judged_documents": "retrieved rows, none judged (a different id scheme or chunking? "
                                            "see span golden sets and rollup=)",
         "systems_share_no_judged_documents": "judged rows, none shared with another system (a golden set "
                                              "of two chunkings?)",
         "chunkings_differ": "chunkings among the systems",
         "chunk_sizes_differ": "systems whose chunks differ in size"}
_DUPLICATES = {
    "error": "duplicates='error': a document listed twice for one question would have raised; none found",
    "max": "duplicates='max': a document listed twice keeps its highest score",
    "first": "duplicates='first': a document listed twice keeps its first row"}


def diagnostic_row(check: str, *, system: str | None = None, measure: str | None = None,
                   count: int | None = None, value: float = np.nan, level: str = "info",
                   detail: str = "", action: str | None = None, examples: str | None = None) -> dict:
    """One row of the diagnostics table (``check, system, measure, count, value, level, detail,
    action, examples``; the last two as :func:`evalframe.diagnostics` gives them, else None)."""
    return {"check": check, "system": system, "measure": measure,
            "count": pd.NA if count is None else int(count), "value": float(value), "level": level,
            "detail": detail, "action": action, "examples": examples}


def report_diagnostics(per_question: pd.DataFrame, raw: pd.DataFrame, judged: pd.DataFrame,
                      summary: pd.DataFrame, *, conventions: Mapping[str, object],
                      measures: Sequence[Measure], n_questions: int, systems: Sequence[str],
                      confidence: float = 0.95, extra_rows: Sequence[dict] = (),
                      unjudged: str | None = None) -> pd.DataFrame:
    """The report's diagnostics table.

    Parameters
    ----------
    per_question : DataFrame
        ``system, query_id, measure, value``: the questions in every mean.
    raw : DataFrame
        :func:`evalframe.diagnostics` (``system, check, count, action, examples``).
    judged : DataFrame
        :func:`evalframe.aggregate` of ``Judged@k`` and ``Unjudged@k`` (``system, measure, n,
        mean``): a ``judged_at_k`` row's value is the judged share of the top-k positions the
        run filled, ``Judged@k / (Judged@k + Unjudged@k)`` (``Judged@k`` alone divides by k,
        so a fully judged run of 3 documents would read 70% unjudged at k = 10).
    summary : DataFrame
        The report's summary (observed interval half-widths).
    conventions, measures : what the numbers mean (one row each).
    n_questions : size of the golden set.
    systems : row order.
    confidence : level of the intervals the text and the half-width values refer to.
    extra_rows : rows from other sections (segments), placed before the measures.
    unjudged : None, ``"nonrelevant"`` or ``"bounds"``
        How the caller declared the unjudged documents (:func:`evalframe.report`'s
        ``unjudged=``): when declared, the ``judged_at_k`` rows stay but at level
        ``"info"`` (no :class:`~evalframe.errors.UnjudgedDocumentsWarning`).

    Returns
    -------
    DataFrame
        ``check, system, measure, count (Int64), value, level ("info" / "warning"), detail,
        action, examples``: every row of :func:`evalframe.diagnostics` (``system, check,
        count, action, examples``) appears with the same values, plus the report's own checks.
    """
    rows = []
    raw = pd.concat([raw[raw["check"].isin(_FIRST)], raw[~raw["check"].isin(_FIRST)]])
    counted = per_question.groupby("system", sort=False)["query_id"].nunique()
    first = int(raw["check"].isin(_FIRST).sum())
    for s in systems:
        rows.append(diagnostic_row("questions_counted", system=s, count=counted.get(s, 0),
                                   detail=f"{int(counted.get(s, 0))} questions in every mean"))
    for i, r in enumerate(raw.itertuples(index=False)):
        sysname = None if r.system is None or (not isinstance(r.system, str) and pd.isna(r.system)) else str(r.system)
        rows.append(diagnostic_row(r.check, system=sysname, count=r.count,
                                   level="warning" if r.check in WARNING_CHECKS else "info",
                                   detail=f"{r.count} {_WHAT.get(r.check, r.check)}: {r.action} (e.g. {r.examples})",
                                   action=r.action, examples=r.examples))
        if i < first:  # before the questions counted
            rows.insert(i, rows.pop())
    unjudged_share = {(str(r.system), str(r.measure).split("@")[1]): float(r.mean)
                for r in judged.itertuples(index=False) if str(r.measure).startswith("Unjudged@")}
    for r in judged.itertuples(index=False):
        if not str(r.measure).startswith("Judged@"):
            continue
        k = int(str(r.measure).split("@")[1])
        filled = float(r.mean) + unjudged_share.get((str(r.system), str(k)), 1 - float(r.mean))
        share = float(r.mean) / filled if filled > 0 else 1.0  # of the positions the run filled
        unj = 1 - share
        bad = share < MIN_JUDGED and unjudged is None
        shallow = "" if filled >= 1 - 1e-12 else f" ({filled:.0%} of the top-{k} positions filled)"
        declared = {"nonrelevant": " (count as not relevant: unjudged='nonrelevant' declared)",
                    "bounds": " (count as not relevant in the means; unjudged='bounds': see unjudged_bounds)"}
        rows.append(diagnostic_row(
            "judged_at_k", system=str(r.system), measure=str(r.measure), count=int(r.n),
            value=share, level="warning" if bad else "info",
            detail=(f"{unj:.0%} of the top-{k} documents retrieved are unjudged{shallow} and count as not "
                    "relevant, so scores are lower bounds; judge the pooled top documents "
                    f"of every system" if bad else f"{unj:.0%} of the top-{k} documents retrieved unjudged{shallow}"
                    + declared.get(str(unjudged), ""))))
    hw = stats.half_width(p=0.5, n=max(n_questions, 1), confidence=confidence) if n_questions >= 1 else np.nan
    small = n_questions < MIN_QUESTIONS
    rows.append(diagnostic_row(
        "golden_set_size", count=n_questions, value=hw, level="warning" if small else "info",
        detail=(f"{n_questions} questions: a proportion near 0.5 has a {confidence:.0%} interval of "
                f"+-{hw:.3f}" + (f"; below the working minimum of {MIN_QUESTIONS} questions "
                                  "(200 is comfortable)" if small else ""))))
    for r in summary.itertuples(index=False):
        if not (isinstance(r.ci_high, float) and math.isnan(r.ci_high)):
            rows.append(diagnostic_row("interval_half_width", system=str(r.system), measure=str(r.measure),
                                       count=int(r.n), value=(r.ci_high - r.ci_low) / 2,
                                       detail=f"observed {r.method} interval half-width"))
    rows.append(diagnostic_row("duplicates", detail=_DUPLICATES[str(conventions["duplicates"])]))
    rows += list(extra_rows)
    for m in measures:
        fam = FAMILIES[m.family]
        rows.append(diagnostic_row("measure", measure=str(m), detail=f"{fam.doc}" + (f", k = {m.k}" if m.k else "")
                                   + (f"; parameters {dict(m.params)}" if m.params else "")
                                   + f"; aggregated by {fam.aggregation}"))
    for k, v in conventions.items():
        rows.append(diagnostic_row("convention", system=k, detail=f"{k}={v!r}: {CONVENTION_DOCS[k]}"))
    out = pd.DataFrame(rows, columns=list(DIAGNOSTIC_COLUMNS))
    out["count"] = out["count"].astype("Int64")
    return out


def unjudged_summary(judged: pd.DataFrame) -> str:
    """One sentence for the ``judged_at_k`` warning rows: the unjudged share per cutoff."""
    parts, systems = [], list(dict.fromkeys(judged["system"].astype(str)))
    for measure, g in judged.groupby("measure", sort=False):
        k = str(measure).split("@")[1]
        lo, hi = 1 - g["value"].max(), 1 - g["value"].min()
        parts.append(f"{lo:.0%} at k = {k}" if round(lo, 2) == round(hi, 2) else f"{lo:.0%}-{hi:.0%} at k = {k}")
    who = ", ".join(systems[:5]) + ("..." if len(systems) > 5 else "")
    return (f"unjudged documents in the top k ({'; '.join(parts)}) of {len(systems)} system(s) ({who}) "
            "count as not relevant, so scores are lower bounds (judge the pooled top documents of every "
            "system; see the report's diagnostics)")


def issue_warnings(diagnostics: pd.DataFrame) -> None:
    """Issue the report's own warnings: one :class:`UnjudgedDocumentsWarning` for every
    ``judged_at_k`` warning row, a :class:`SmallGoldenSetWarning` for a small golden set."""
    d = diagnostics[diagnostics["level"] == "warning"]
    j = d[d["check"] == "judged_at_k"]
    if len(j):
        warn(unjudged_summary(j), UnjudgedDocumentsWarning)
    for r in d.itertuples(index=False):
        if r.check == "golden_set_size":
            warn(r.detail, SmallGoldenSetWarning)


#: the warning category of each warning check (others: :class:`EvalframeWarning`)
_CATEGORY = {"judged_at_k": UnjudgedDocumentsWarning, "golden_set_size": SmallGoldenSetWarning,
             "run_questions_not_in_golden_set": QuestionsDroppedWarning,
             "golden_questions_not_in_run": QuestionsScoredZeroWarning,
             "golden_questions_without_relevant": NoRelevantWarning,
             "shallow_rankings": ShallowRankingWarning,
             "system_without_judged_documents": IdSchemeWarning,
             "systems_share_no_judged_documents": IdSchemeWarning,
             "chunkings_differ": ChunkingsDifferWarning}


class ReportWarning(_warnings.WarningMessage):
    """One warning of a report, as :func:`warnings.catch_warnings` records them
    (``message``, ``category``, ``filename``, ``lineno``) plus ``check`` and ``system``."""

    def __init__(self, message: str, category: type[Warning], check: str, system: str | None = None):
        super().__init__(category(message), category, "evalframe.reporting", 0)
        self.check = check
        self.system = system

    def __str__(self) -> str:
        return str(self.message)


class ReportWarnings(tuple):
    """The warnings of a report: a tuple of :class:`ReportWarning` (one per warning shown in
    the text), with ``.table`` the diagnostics rows at level ``"warning"`` behind them; a
    column name indexes that table (``warnings["check"]``), as when this was a DataFrame."""

    table: pd.DataFrame

    def __new__(cls, items, table: pd.DataFrame):
        self = super().__new__(cls, items)
        self.table = table
        return self

    def __getitem__(self, key):
        if isinstance(key, str):
            return self.table[key]
        return super().__getitem__(key)


def report_warnings(diagnostics: pd.DataFrame) -> ReportWarnings:
    """The warnings of a diagnostics table: one per warning line (the ``judged_at_k`` rows of
    every system grouped in one :class:`UnjudgedDocumentsWarning`), in table order."""
    w = diagnostics[diagnostics["level"] == "warning"].reset_index(drop=True)
    judged = w[w["check"] == "judged_at_k"]
    items = [ReportWarning(unjudged_summary(judged), UnjudgedDocumentsWarning, "judged_at_k")] if len(judged) else []
    for r in w[w["check"] != "judged_at_k"].itertuples(index=False):
        system = r.system if isinstance(r.system, str) else None
        items.append(ReportWarning(f"{r.check}" + (f" [{system}]" if system else "") + f": {r.detail}",
                                   _CATEGORY.get(r.check, EvalframeWarning), r.check, system))
    return ReportWarnings(items, w)


def labels_by_judge(golden: pd.DataFrame, *, rel: int = 1, judged: pd.DataFrame | None = None,
                    k: int = 10) -> list[dict]:
    """The diagnostics rows of a golden set's provenance (its ``judge`` column; none
    without one): a ``labels_by_judge`` row per judge (its labels, their share of the
    golden set, how many relevant, and whether a person or a model gave them,
    :func:`evalframe.schema.is_human`), and, with ``judged`` (``system, model_share``:
    per system the share of its judged top-``k`` documents whose label is a model's), a
    ``model_labels_at_k`` row per system: every measure rests on model labels in that share."""
    if "judge" not in golden.columns or not len(golden):
        return []
    judge = golden["judge"].astype(object).where(golden["judge"].notna(), "(none)")
    human = is_human(golden["judge"])
    relevant = golden["relevance"].to_numpy() >= rel
    t = pd.DataFrame({"judge": judge.to_numpy(), "human": human, "relevant": relevant})
    g = t.groupby("judge", sort=False).agg(n=("human", "size"), human=("human", "all"), relevant=("relevant", "sum"))
    rows = [diagnostic_row("labels_by_judge", system=str(name), count=int(r.n), value=r.n / len(t),
                           detail=f"{int(r.n)} labels ({r.n / len(t):.0%} of the golden set) by "
                                  f"{'a person' if r.human else 'a model'} ({name}), {int(r.relevant)} relevant")
            for name, r in g.iterrows()]
    model_rel = float(relevant[~human].sum()) / max(float(relevant.sum()), 1.0)
    rows.append(diagnostic_row("labels_by_judge", count=int((~human).sum()), value=model_rel, detail=(
        f"{int((~human).sum())} labels by a model; {model_rel:.0%} of the relevant labels are a model's "
        "(recall's denominator and the ideal rankings rest on them in that share)")))
    for r in (judged.itertuples(index=False) if judged is not None else ()):
        rows.append(diagnostic_row("model_labels_at_k", system=str(r.system), measure=f"Judged@{k}",
                                   value=float(r.model_share), detail=(
                                       f"{r.model_share:.0%} of the judged top-{k} documents retrieved carry a model's "
                                       "label: every measure at this depth rests on model labels in that share")))
    return rows
