"""Segments: reading the segment table, joining it to the per-question table, and the
``by_segment`` table (means with intervals per segment value, flagged when too small or
below the system's overall mean)."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from .. import stats
from .._validation import error, type_of
from ..errors import EvalframeInputError, EvalframeWarning, InputProblem, warn
from ..canonical import TEXT_COLUMN, alias_candidates, apply_columns, arrow_frame, check_columns, split_question_text
from ..schema import ids_to_str
from ..stats.validation import RESERVED_COLUMNS
from .diagnostics import diagnostic_row
from .tables import BY_SEGMENT_COLUMNS, order_rows

#: the segment value of a question the segment table does not list
MISSING_SEGMENT = "(none)"
#: a segment with fewer questions than this is "too small to say anything" (spec: 20 -> +-22 points)
MIN_SEGMENT_QUESTIONS = 20


#: a default segment column with at least this share of distinct values per question (in a
#: table of at least :data:`MIN_SEGMENT_QUESTIONS` questions) is free text, not a segment
NEARLY_UNIQUE = 0.9
#: column names a segment column cannot have: the per-question and by-segment tables use
#: them, and the by-segment step summarises by the segment column (:func:`stats.summarize`)
RESERVED = tuple(dict.fromkeys(("system", "measure", "value", "segment_value", *RESERVED_COLUMNS)))


def read_segments(source, *, segments: Sequence[str] | None = None,
                  columns: Mapping[str, str] | None = None) -> pd.DataFrame:
    """Read a segment table: the question id plus one or more segment columns.

    Parameters
    ----------
    source : DataFrame, Arrow table or stream, polars DataFrame, or path
        A frame, or a ``.tsv`` / ``.csv`` / ``.parquet`` file with a header row.  The
        question id is ``query_id`` or one of its aliases (``question_id``, ``qid``...);
        a column may be named ``segment``.  A missing or empty segment value is
        ``"(none)"``; text such as ``NA`` is a value.
    segments : list of str, optional
        The segment columns to keep.  Default: every column except the question id and
        the question text (``text``, or ``question`` / ``query`` beside an id); a column
        with nearly one value per question (at least 90% distinct values, 20 questions
        or more) is free text, not a segment: it is left out with a warning.
    columns : dict, optional
        ``{your column name: canonical name}``, e.g. ``{"qa": "query_id"}``.

    Returns
    -------
    DataFrame
        ``query_id`` (str) plus every segment column as str, one row per question.

    Raises
    ------
    EvalframeInputError
        No question id column, no segment column, a segment column named in
        ``segments`` that the table lacks, or a question listed twice with different values.

    Examples
    --------
    >>> import evalframe as ef
    >>> from evalframe.reporting import read_segments
    >>> read_segments(ef.datasets.load_cranfield().segments).head(2)
      query_id  length question_form
    0        1  medium   wh_question
    1        2  medium   wh_question
    """
    df = _segment_frame(source)
    df = split_question_text(apply_columns(df, check_columns(columns, caller="read_segments")))
    problems = []
    qids = alias_candidates(df, "query_id")
    if len(qids) != 1:
        problems.append(InputProblem(
            f"no query_id column (found {list(df.columns)})" if not qids else
            f"several columns could be the question id: {qids}",
            "name the question id column query_id (or question_id, qid...), or pass columns={'your_name': 'query_id'}"))
    qid = qids[0] if qids else None
    others = [c for c in df.columns if c != qid and c != TEXT_COLUMN]
    if segments is not None:
        names = [segments] if isinstance(segments, str) else list(segments)
        absent = [c for c in names if c not in df.columns]
        if absent:
            problems.append(InputProblem(f"segment column(s) {absent} not in the table (found {list(df.columns)})",
                                         "name columns of the segment table"))
        cols = [c for c in names if c in df.columns]
    else:
        cols = _segment_columns(df, qid, others)
    if not cols and segments is None:
        problems.append(InputProblem("no segment column", "add one or more columns besides query_id, "
                                     "e.g. question_form = lookup / natural / multi-condition"
                                     + (f" (left out as free text: {others}; name them in segments= to keep them)"
                                        if others else "")))
    reserved = [c for c in cols if c in RESERVED]
    if reserved:
        problems.append(InputProblem(f"segment columns use reserved names {reserved}",
                                     "rename them (e.g. 'question_type')"))
    if problems:
        raise EvalframeInputError("segments", problems)
    # the same id rules as the run and the golden set, so segment ids match theirs
    out = pd.DataFrame({"query_id": ids_to_str(df[qid]).to_numpy(dtype=object)})
    for c in cols:
        v = df[c].astype(str).to_numpy()  # an empty cell (a CSV's missing value) is missing too
        out[str(c)] = np.where(df[c].isna().to_numpy() | (v == ""), MISSING_SEGMENT, v)
    out = out.drop_duplicates()
    dup = out["query_id"].duplicated(keep=False)
    if dup.any():
        raise EvalframeInputError("segments", [InputProblem(
            f"{int(out.loc[dup, 'query_id'].nunique())} questions have more than one row with different values",
            "give each question one row (one value per segment column)",
            out.loc[dup].head(4).to_string(index=False))])
    return out.reset_index(drop=True)


def _segment_frame(source) -> pd.DataFrame:
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        if not path.exists():
            raise FileNotFoundError(f"segments file not found: {path}")
        suffix = "".join(path.suffixes[-2:]).lower()
        if path.suffix.lower() == ".parquet":
            return pd.read_parquet(path)
        if path.suffix.lower() in (".tsv", ".txt", ".tab") or suffix.endswith(".tsv.gz"):
            return pd.read_csv(path, sep="\t", dtype=str, keep_default_na=False)
        if path.suffix.lower() == ".csv" or suffix.endswith(".csv.gz"):
            return pd.read_csv(path, dtype=str, keep_default_na=False)
        raise EvalframeInputError("segments", [InputProblem(
            f"{path}: unknown file type {path.suffix!r}",
            "give a .tsv, .csv or .parquet file with a header: query_id, segment columns...")])
    if isinstance(source, pd.DataFrame):
        return source
    frame = arrow_frame(source)
    if frame is not None:
        return frame
    raise error(None, "segments", "a DataFrame, a file path or a column name", type_of(source))


def _segment_columns(df: pd.DataFrame, qid, candidates: list) -> list:
    """The default segment columns: every candidate except free text (nearly one value per
    question), which is left out with a warning."""
    n = df[qid].nunique() if qid is not None else 0
    if n < MIN_SEGMENT_QUESTIONS:
        return list(candidates)
    keep, text = [], []
    for c in candidates:
        (text if df[c].nunique() >= NEARLY_UNIQUE * n else keep).append(c)
    if text:
        warn(f"segments: column(s) {text} have nearly one value per question ({n} questions), so they are "
             "free text, not segments, and were left out (name them in segments= to keep them)", EvalframeWarning)
    return keep


def resolve_segments(segments, qrels, *, columns: Mapping[str, str] | None = None) -> pd.DataFrame | None:
    """The segment table ``report(segments=...)`` names: None, a table or file
    (:func:`read_segments`), or column name(s) of the golden-set DataFrame."""
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
        mapped = apply_columns(qrels, columns)
        qcol = next(iter(alias_candidates(mapped, "query_id")), None)
        if qcol is None:
            raise EvalframeInputError("segments", [InputProblem(
                "the golden set has no query_id column", "name the question column query_id")])
        return read_segments(mapped[[qcol, *names]].rename(columns={qcol: "query_id"}), segments=names)
    return read_segments(segments, columns=columns)


def join_segments(per_question: pd.DataFrame, segments: pd.DataFrame | None
                  ) -> tuple[pd.DataFrame, list[str], list[dict]]:
    """Add the segment columns to the per-question table.

    Returns
    -------
    (per_question with the segment columns, the segment column names, diagnostics rows)
        A question without a segment row gets the value ``"(none)"`` (and a warning row);
        segment rows of questions outside the golden set are ignored (an info row).
    """
    if segments is None:
        return per_question, [], []
    seg_cols = [c for c in segments.columns if c != "query_id"]
    clash = [c for c in seg_cols if c in per_question.columns]
    if clash:
        raise EvalframeInputError("segments", [InputProblem(
            f"segment columns {clash} clash with the per-question table's columns", "rename them")])
    golden_q = pd.unique(per_question["query_id"])
    known = set(segments["query_id"])
    unassigned = [q for q in golden_q if q not in known]
    extra_q = len(known - set(golden_q))
    out = per_question.merge(segments, on="query_id", how="left", sort=False)
    for c in seg_cols:
        out[c] = out[c].fillna(MISSING_SEGMENT)
    rows = []
    if unassigned:
        rows.append(diagnostic_row(
            "segments_missing_questions", count=len(unassigned), level="warning",
            detail=f"{len(unassigned)} golden-set questions have no segment row; "
                   f"segment value {MISSING_SEGMENT!r} (e.g. {', '.join(unassigned[:5])})"))
    if extra_q:
        rows.append(diagnostic_row(
            "segments_extra_questions", count=extra_q,
            detail=f"{extra_q} segment rows name questions outside the golden set; ignored"))
    return out, seg_cols, rows


def segment_table(per_question: pd.DataFrame, segment_columns: Sequence[str], summary: pd.DataFrame, *,
                  interval: Mapping[str, object], systems: Sequence[str],
                  measures: Sequence[str]) -> pd.DataFrame:
    """The ``by_segment`` table: :func:`stats.summarize` by each segment column.

    Parameters
    ----------
    per_question : DataFrame
        ``system, query_id, measure, value`` + the segment columns.
    segment_columns : names of the segment columns (none: an empty table).
    summary : DataFrame
        The overall summary (``system, measure, mean``), for ``overall_mean`` and the flags.
    interval : mapping
        ``method, confidence, n_resamples, seed[, threads]`` of :func:`stats.summarize`.
    systems, measures : row order.

    Returns
    -------
    DataFrame
        ``system, segment, segment_value, measure, n, mean, se, ci_low, ci_high, method,
        overall_mean, gap, too_small, below_overall, flag, p_below, p_below_bh,
        below_overall_bh``.

    Notes
    -----
    Two flags, in their own columns: ``too_small`` (fewer than :data:`MIN_SEGMENT_QUESTIONS`
    questions) and the below-overall flags. ``below_overall`` is the unadjusted screen (the
    segment's interval lies entirely below the system's overall mean). ``p_below`` is the
    one-sided one-sample t-test of the segment's per-question values against the overall mean
    (H1: segment mean < overall mean; the overall mean taken as fixed); ``p_below_bh`` is that
    p-value adjusted by Benjamini-Hochberg (:func:`stats.adjust_pvalues`) across every segment
    value of every segment column of the same (system, measure), so the flag accounts for the
    number of segments tested; ``below_overall_bh`` is ``p_below_bh < 1 - confidence``.
    A segment without spread (every value equal, up to float round-off) has the one-sided
    sign test's p = 0.5^n when its mean is below (all n values below the overall mean),
    else 1; a segment of one question has p = NaN (never flagged below).
    """
    cols = list(BY_SEGMENT_COLUMNS)
    if not segment_columns:
        return pd.DataFrame(columns=cols)
    overall = summary.set_index(["system", "measure"])["mean"]
    parts = []
    for c in segment_columns:
        s = stats.summarize(per_question[["system", "query_id", "measure", "value", c]], by=c, **interval)
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
    t = pd.concat([t, below_overall_tests(per_question, segment_columns, t,
                                          alpha=1 - float(interval.get("confidence", 0.95)))], axis=1)
    t = order_rows(t, systems, measures, extra=["segment"])
    return t[cols]


def below_overall_tests(per_question: pd.DataFrame, segment_columns: Sequence[str], table: pd.DataFrame,
                        *, alpha: float) -> pd.DataFrame:
    """``p_below, p_below_bh, below_overall_bh`` for the rows of a by-segment ``table``
    (``system, segment, segment_value, measure, overall_mean``), aligned to its index.

    One-sided one-sample t-test of each segment's values against the overall mean (a
    one-sided sign test, p = 0.5^n, when the segment's values are all equal), then
    Benjamini-Hochberg across the segments of each (system, measure).
    """
    from scipy import stats as sps
    parts = []
    for c in segment_columns:
        g = per_question.groupby(["system", "measure", c], sort=False, observed=True)["value"]
        a = g.agg(["mean", "std", "count"]).reset_index().rename(columns={c: "segment_value"})
        a.insert(0, "segment", c)
        parts.append(a)
    a = pd.concat(parts, ignore_index=True)
    a["segment_value"] = a["segment_value"].astype(str)
    key = ["system", "segment", "segment_value", "measure"]
    m = table[key + ["overall_mean"]].merge(a, on=key, how="left")
    n = m["count"].to_numpy(dtype=float)
    sd = m["std"].to_numpy(dtype=float)
    # values equal up to round-off (sd ~ 1e-17 of 0.2) have no spread: the guard of compare()
    sd = np.where(sd <= 1e-10 * np.abs(m["mean"].to_numpy(dtype=float)), 0.0, sd)
    se = sd / np.sqrt(n)
    with np.errstate(divide="ignore", invalid="ignore"):
        tstat = (m["mean"].to_numpy(dtype=float) - m["overall_mean"].to_numpy(dtype=float)) / se
        # no spread (every value the same): the t statistic is undefined; a one-sided sign
        # test instead: all n values below the overall mean has probability 0.5^n
        p = np.where(se > 0, sps.t.cdf(tstat, df=np.maximum(n - 1, 1)),
                     np.where(m["mean"].to_numpy(dtype=float) < m["overall_mean"].to_numpy(dtype=float),
                              0.5 ** n, 1.0))
        p = np.where(n >= 2, p, np.nan)
    m["p_below"] = p
    m["p_below_bh"] = np.nan
    for _, idx in m.groupby(["system", "measure"], sort=False).indices.items():
        m.loc[m.index[idx], "p_below_bh"] = stats.adjust_pvalues(p[idx], "bh")
    m["below_overall_bh"] = (m["p_below_bh"] < alpha).fillna(False).astype(bool)
    out = m[["p_below", "p_below_bh", "below_overall_bh"]]
    out.index = table.index
    return out
