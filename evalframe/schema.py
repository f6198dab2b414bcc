"""Clean and check input tables: one step, one error listing every problem.

:func:`clean_qrels` and :func:`clean_run` take a DataFrame with canonical or
alias column names (mapped first by :mod:`evalframe.canonical`: ``columns=``, list and
rank-only runs) and return a new DataFrame with canonical columns and dtypes:

- golden set (qrels): ``query_id`` (str), ``doc_id`` (str), ``relevance`` (int64),
  plus ``text`` (the question text) when the input has one
- run: ``query_id`` (str), ``doc_id`` (str), ``score`` (float64), plus
  ``system`` (str) when the input has one (or the ``system`` argument is given)
  and ``rank`` (int64) when the input has one.

Ids are strings after cleaning, so an integer question id in one table matches
the same id written as text in the other.  Integral floats (``1.0``, as pandas
reads an integer column with gaps) become ``"1"``, also beyond int64.  The
caller's DataFrame is never modified.

:func:`check_run` and :func:`check_qrels` run the same checks and also return
the ids factorised once (:class:`CheckedRun`, :class:`CheckedQrels`), which the
ranking step reuses: question and system ids as int32 codes (pyarrow
``dictionary_encode``), document ids as 64-bit fingerprints of their bytes
(:func:`~evalframe._id_bytes.fingerprints`) -- a run has about as many distinct documents as rows, so
they are never hashed into one big table; every fingerprint match is confirmed
on the strings.

The ids' codes are made in ``evalframe._id_codes``, the byte kernels under them are in
``evalframe._id_bytes``, and the ``conflicts=`` choices and their resolution in
``evalframe._conflicts``; this module's ``__all__`` lists their public names too, as before.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Literal

import numpy as np
import pandas as pd

from ._validation import Boolean, Options, check
from ._conflicts import (MAX_EXAMPLES, PROVENANCE, Conflicts, ResolvedConflicts, check_conflicts, is_human,
                         provenance_rows, resolve_conflicts, resolved_labels)
from ._id_bytes import BLOCK_ROWS, arrow_id_status, clean_arrow_ids, integer_ids
from ._id_codes import (LABEL_LIMIT, RUNS_SHARE, CheckedQrels, CheckedRun, any_repeated, encode_ids, encode_qrels,
                        encode_run, id_strings, labels_in_range)
from .errors import EvalframeInputError, InputProblem
from .canonical import ALIASES, TEXT_COLUMN, alias_candidates, check_columns, qrels_table, run_table


def _examples(df: pd.DataFrame, mask: np.ndarray | pd.Series) -> str:
    rows = df.loc[np.asarray(mask)].head(MAX_EXAMPLES)
    return rows.to_string(index=True, max_colwidth=40)


def _rename(df: pd.DataFrame, wanted: tuple[str, ...], optional: tuple[str, ...],
            problems: list[InputProblem]) -> pd.DataFrame:
    """Map alias columns to canonical names; report missing or ambiguous ones."""
    mapping: dict[object, str] = {}
    for canon in wanted + optional:
        found = alias_candidates(df, canon)
        if len(found) > 1:
            problems.append(InputProblem(
                f"several columns could be {canon!r}: {found}",
                f"rename or drop all but one of them (accepted names: {', '.join(ALIASES[canon])}), "
                "or pick one with columns={'your_name': " + f"{canon!r}" + "}"))
        elif found:
            mapping[found[0]] = canon
        elif canon in wanted and (index := _index_level(df, canon)) is not None:
            problems.append(InputProblem(
                f"missing column {canon!r}: it is the index ({index!r}), not a column",
                "make it a column first: df.reset_index()"))
        elif canon in wanted:
            problems.append(InputProblem(
                f"missing column {canon!r} (found columns: {[str(c) for c in df.columns]})",
                f"name a column {canon!r} or one of its aliases: {', '.join(ALIASES[canon][1:])}"
                + (" (or give a 'rank' column: a run without scores is ordered by rank)" if canon == "score" else "")
                + "; or map your column names with columns={'your_name': " + f"{canon!r}" + "}"))
    if _ALWAYS_COPY_ON_WRITE and list(mapping) == list(df.columns) and all(k == v for k, v in mapping.items()):
        # the canonical columns in canonical order: a shallow copy (selecting and renaming
        # took 1.2 ms per table, 9% of evaluate() at 1,000 x 100); copy-on-write keeps any
        # later change off the caller's table
        return df.copy(deep=False)
    return df[list(mapping)].rename(columns=mapping)


#: pandas >= 3: a shallow copy's changes never reach the table it was copied from
_ALWAYS_COPY_ON_WRITE = int(pd.__version__.split(".")[0]) >= 3


def _index_level(df: pd.DataFrame, canon: str):
    """The name of an index level of ``df`` that could be the column ``canon``, or None."""
    names = [n for n in df.index.names if n is not None]
    return next((n for n in names if alias_candidates(pd.DataFrame(columns=[n]), canon)), None)


#: The dtype of ``Series.astype(str)`` (pandas' default string dtype).
_STR = pd.Series([0]).astype(str).dtype


def ids_to_str(s: pd.Series, *, trim: bool = True) -> pd.Series:
    """Ids as strings: integral numbers lose any '.0' (so 1, 1.0 and '1' match),
    categories are converted through their categories, and leading or trailing
    blanks are removed (``trim``; a TREC file split on blanks has none).

    String columns (including Arrow-backed ones) are kept without a per-row
    Python conversion."""
    if isinstance(s.dtype, pd.CategoricalDtype):
        cats = ids_to_str(pd.Series(s.cat.categories), trim=trim).to_numpy(dtype=object)
        codes = s.cat.codes.to_numpy()
        vals = np.where(codes >= 0, cats[np.maximum(codes, 0)] if len(cats) else None, None)
        return pd.Series(vals, index=s.index, dtype=object).astype(str).where(codes >= 0, None)
    if pd.api.types.is_float_dtype(s.dtype):
        v = s.to_numpy(dtype=float, na_value=np.nan)
        if np.isfinite(v).all() and (v == np.round(v)).all():
            big = np.abs(v) >= 2.0 ** 63
            if not big.any():
                return pd.Series(v.astype(np.int64), index=s.index).astype(str)
            # beyond int64: the float's exact integer value, written out (rare rows only)
            out = np.where(big, 0, v).astype(np.int64).astype(str).astype(object)
            out[big] = np.char.mod("%.0f", v[big]).astype(object)
            return pd.Series(out, index=s.index, dtype=str)
    if s.dtype.kind in "iu" and _STR != object:  # numpy integers: Arrow's cast (no blank to trim; pandas >= 3)
        return pd.Series(pd.array(_int_strings(s.to_numpy()), dtype=_STR), index=s.index)
    if pd.api.types.is_string_dtype(s.dtype) and s.dtype != object:
        if not trim or clean_arrow_ids(s, trim=True):
            return s
        stripped = s.str.strip()
        # keep the caller's buffers (no second copy of a large column) when nothing changed
        return s if stripped.str.len().sum() == s.str.len().sum() else stripped
    if s.dtype == object:
        # mixed Python objects: integral floats as ints, one value at a time
        # (object columns are the slow path of pandas anyway)
        s = s.map(lambda v: int(v) if isinstance(v, float) and v.is_integer() else v, na_action="ignore")
    out = s.astype(str)
    if trim:
        out = out.str.strip()
    return out.where(s.notna(), None) if s.isna().any() else out


def _int_strings(v: np.ndarray):
    """Integers as Arrow large strings; a column whose equal values come in runs (a
    run grouped by question: few runs) writes each run's value once (half the time
    of writing every row at 10,000 runs of 100 rows)."""
    import pyarrow as pa
    if len(v) > BLOCK_ROWS:
        starts = np.flatnonzero(v[1:] != v[:-1]) + 1
        if len(starts) < RUNS_SHARE * len(v):
            starts = np.concatenate(([0], starts))
            lengths = np.diff(np.append(starts, len(v)))
            values = pa.array(v[starts]).cast(pa.large_string())
            return values.take(pa.array(np.repeat(np.arange(len(starts), dtype=np.int32), lengths)))
    return pa.array(v).cast(pa.large_string())


def _integer_labels(rel: pd.Series) -> tuple[np.ndarray, np.ndarray] | None:
    """(int64 labels, out-of-range mask) of an integer column without missing
    values, read exactly (no trip through float64); None for other columns."""
    if not pd.api.types.is_integer_dtype(rel.dtype) or bool(rel.isna().any()):
        return None
    return labels_in_range(rel.to_numpy())


def _duplicated(df: pd.DataFrame, keys: list[str]) -> np.ndarray:
    """Rows whose key columns repeat another row's (all copies marked).

    The common case, no duplicates, is settled by one integer sort; the mask is
    only built (with a hash table) when there are duplicates."""
    key = np.zeros(len(df), dtype=np.int64)
    for col in keys:
        codes, uniq = pd.factorize(df[col], sort=False)
        if key.max(initial=0) >= (2 ** 62) // max(len(uniq), 1):
            key = pd.factorize(key)[0].astype(np.int64)
        key = key * max(len(uniq), 1) + codes
    srt = np.sort(key, kind="stable")
    if not (srt[1:] == srt[:-1]).any():
        return np.zeros(len(df), dtype=bool)
    return pd.Series(key).duplicated(keep=False).to_numpy()


#: Python and numpy values that are not one id (a list run's nested items, a Parquet struct)
_NESTED = (list, tuple, dict, set, frozenset, np.ndarray)


def _nested_ids(s: pd.Series) -> np.ndarray | None:
    """Rows of an id column holding a list, tuple, dict or struct instead of one id (None: no such row).

    Settled without a per-row scan for every column but an object column of mixed types."""
    if isinstance(s.dtype, pd.ArrowDtype):
        import pyarrow as pa
        return s.notna().to_numpy() if pa.types.is_nested(s.dtype.pyarrow_dtype) else None
    if s.dtype != object or pd.api.types.infer_dtype(s, skipna=True) != "mixed":
        return None
    bad = s.map(lambda v: isinstance(v, _NESTED), na_action="ignore").fillna(False).to_numpy(dtype=bool)
    return bad if bad.any() else None


#: The number types a score or a label may not be: complex numbers, dates and durations
_NOT_REAL = "cmM"


def _not_real(s: pd.Series) -> np.ndarray | None:
    """Rows of a score or label column holding a complex number, a date or a duration
    (pandas would turn them into a number without a word), or None."""
    if s.dtype.kind in _NOT_REAL:
        return s.notna().to_numpy()
    if isinstance(s.dtype, pd.ArrowDtype):
        import pyarrow as pa
        t = s.dtype.pyarrow_dtype
        return s.notna().to_numpy() if pa.types.is_temporal(t) or pa.types.is_nested(t) else None
    if isinstance(s.dtype, pd.DatetimeTZDtype):
        return s.notna().to_numpy()
    if s.dtype != object or pd.api.types.infer_dtype(s, skipna=True) in ("string", "integer", "floating",
                                                                         "mixed-integer-float", "boolean", "empty"):
        return None
    import datetime
    kinds = (complex, np.complexfloating, datetime.date, datetime.time, datetime.timedelta, np.datetime64,
             np.timedelta64, *_NESTED)
    bad = s.map(lambda v: isinstance(v, kinds), na_action="ignore").fillna(False).to_numpy(dtype=bool)
    return bad if bad.any() else None


def _not_real_problem(df: pd.DataFrame, col: str, bad: np.ndarray, fix: str) -> InputProblem:
    return InputProblem(f"{int(bad.sum())} rows have a {col} that is not a real number "
                        f"(a complex number, a date or a duration: {df.loc[bad, col].iloc[0]!r})", fix,
                        _examples(df, bad))


def _check_ids(df: pd.DataFrame, problems: list[InputProblem], cols=("query_id", "doc_id"),
               status: dict | None = None) -> None:
    """Report missing, blank or nested ids (``status``: :func:`arrow_id_status` per column, if known)."""
    for col in cols:
        if col not in df:
            continue
        if (status[col] if status and col in status else arrow_id_status(df[col])) is not None:
            continue
        if df[col].dtype.kind in "iu":  # numpy integers: never missing, never blank
            continue
        nested = _nested_ids(df[col])
        if nested is not None:
            problems.append(InputProblem(
                f"{int(nested.sum())} rows have a {col} that is not a single id "
                f"(a list, tuple, dict or struct: {df.loc[nested, col].iloc[0]!r})",
                f"give one {col} (text or integer) per row; a list run lists plain ids "
                f"(['d1', 'd2'], not [['d1'], ['d2']]); a struct's id field can be taken with "
                f"df[{col!r}].str[FIELD] or pyarrow.compute.struct_field", _examples(df, nested)))
            continue
        bad = df[col].isna() | (df[col].astype(str).str.strip() == "")
        if bad.any():
            problems.append(InputProblem(
                f"{int(bad.sum())} rows have a missing or empty {col}",
                f"drop those rows or fill in their {col}", _examples(df, bad)))


def clean_qrels(qrels: pd.DataFrame, *, columns: Mapping[str, str] | None = None,
                conflicts: Conflicts = "error", trimmed: bool = False) -> pd.DataFrame:
    """Check a golden set and return a canonical copy.

    The same checks as :func:`check_qrels`, which also returns the factorised ids.

    Parameters
    ----------
    qrels : DataFrame
        Columns ``query_id, doc_id, relevance`` or aliases
        (``qid/query/topic/question_id``, ``docno/docid/doc/chunk_id/passage_id/page_id``,
        ``rel/label/grade``); a question text column beside the question id (``question``,
        ``query``, ``text``...) is kept.
    columns : dict, optional
        ``{your column name: canonical name}`` (e.g. ``{"qa_id": "query_id"}``), applied
        before the aliases; names the table lacks are skipped.
    conflicts : {"error", "max", "min", "majority", "human"}
        Several rows of one (question, document) with different labels (several
        annotators): raise (default), keep the highest or the lowest label, or the most
        frequent one (every row is a vote; a tie goes to the higher label); ``"human"``:
        a person's label outranks a model's (:func:`is_human` reads the ``judge``
        column; people's labels then by majority).  The pairs
        resolved are counted in the diagnostics (``golden_set_conflicting_labels``).
        The kept row's ``judge`` and ``confidence`` are those of a row giving the
        resolved label (a person's first).
    trimmed : bool
        The table's ids hold no leading or trailing blank already (a TREC text file split
        on blanks, ``evalframe.io.read_raw``): the pass that trims them is skipped.

    Returns
    -------
    DataFrame
        ``query_id`` (str), ``doc_id`` (str), ``relevance`` (int64), and ``text``
        (the question text, :data:`~evalframe.canonical.TEXT_COLUMN`) when the table has one;
        ``judge`` and ``confidence`` (:data:`PROVENANCE`) when it has them;
        one row per (query_id, doc_id) (exact duplicate rows are merged).  A golden set
        with a ``subtopic`` column (diversity qrels, one label per question,
        subtopic and document) keeps it: ``query_id, subtopic, doc_id,
        relevance``, one row per (query_id, subtopic, doc_id).  Measures other
        than the intent-aware ones read it as one label per document, its
        largest over the subtopics (:class:`CheckedQrels`).

    Raises
    ------
    EvalframeInputError
        Listing every problem: missing columns, missing ids, missing or
        non-numeric or non-integral labels, conflicting duplicate rows, an
        empty table.
    """
    return check_qrels(qrels, columns=columns, conflicts=conflicts, trimmed=trimmed).table


def check_qrels(qrels: pd.DataFrame, *, columns: Mapping[str, str] | None = None,
                conflicts: Conflicts = "error", resolve: bool = True, part: bool = False,
                trimmed: bool = False) -> CheckedQrels:
    """Check a golden set and return the canonical copy with its ids factorised once.

    Parameters and errors as :func:`clean_qrels`; ``resolve=False`` keeps repeated
    (query_id, doc_id) rows as they are (``conflicts`` unused): a part of a larger
    golden set, checked again once all the rows of its questions are together;
    ``part=True``: a partition of a golden set, which may hold no row.

    Returns
    -------
    CheckedQrels
        ``frame`` is :func:`clean_qrels`'s table; ``conflicts`` the conflicting labels
        resolved (None: none).
    """
    if not isinstance(qrels, pd.DataFrame):
        raise TypeError(f"qrels must be a pandas DataFrame, got {type(qrels).__name__}; "
                        "use evalframe.read_qrels() for files and dicts")
    check_conflicts(conflicts, caller="check_qrels")
    table = qrels_table(qrels, columns=check_columns(columns, caller="check_qrels"))
    checked = _check_qrels(table, conflicts, resolve, part, trim=not trimmed)
    if TEXT_COLUMN in table.columns:
        checked = replace(checked, data=_with_text(checked.frame, table))
    return checked


def _with_text(frame: pd.DataFrame, table: pd.DataFrame) -> pd.DataFrame:
    """The cleaned golden set with each question's text (its first in ``table``)."""
    qid = alias_candidates(table, "query_id")[0]
    text = table[TEXT_COLUMN]
    by_query = pd.Series(text.astype(str).where(text.notna(), None).to_numpy(dtype=object),
                         index=ids_to_str(table[qid]).to_numpy(dtype=object))
    by_query = by_query[~by_query.index.duplicated()]
    return frame.assign(**{TEXT_COLUMN: by_query.reindex(frame["query_id"].to_numpy(dtype=object)).to_numpy()})


def _check_qrels(qrels: pd.DataFrame, conflicts: Conflicts, resolve: bool = True, part: bool = False,
                 trim: bool = True) -> CheckedQrels:
    """:func:`check_qrels` on a table whose columns are mapped (:func:`~evalframe.canonical.qrels_table`);
    ``trim=False``: its ids hold no blank to trim."""
    problems: list[InputProblem] = []
    df = _rename(qrels, ("query_id", "doc_id", "relevance"), ("subtopic", *PROVENANCE), problems)
    if problems:
        raise EvalframeInputError("golden set (qrels)", problems)
    if len(df) == 0 and not part:
        raise EvalframeInputError("golden set (qrels)", [InputProblem(
            "the table is empty", "pass a golden set with at least one judged (query_id, doc_id, relevance) row")])
    status = {c: arrow_id_status(df[c]) for c in ("query_id", "doc_id")}
    _check_ids(df, problems, ("query_id", "doc_id"), status)
    rel = df["relevance"]
    unreal = _not_real(rel)
    if unreal is not None:
        problems.append(_not_real_problem(df, "relevance", unreal, "give every row an integer label (0 = judged "
                                          "not relevant)"))
        raise EvalframeInputError("golden set (qrels)", problems)
    exact = _integer_labels(rel)
    if exact is None:
        rel = pd.to_numeric(rel, errors="coerce")
        exact = _integer_labels(rel)
    rel_f = rel.to_numpy(dtype=float, na_value=np.nan)
    bad = ~np.isfinite(rel_f)
    if bad.any():
        problems.append(InputProblem(
            f"{int(bad.sum())} rows have a missing or non-numeric relevance label",
            "give every row an integer label (0 = judged not relevant)", _examples(df, bad)))
    frac = np.isfinite(rel_f) & (rel_f != np.round(np.where(np.isfinite(rel_f), rel_f, 0)))
    if frac.any():
        problems.append(InputProblem(
            f"{int(frac.sum())} rows have a non-integral relevance label",
            "relevance labels are integer grades (0, 1, 2, ...); round or map them to integers",
            _examples(df, frac)))
    if exact is not None:
        values, huge = exact
    else:
        huge = np.isfinite(rel_f) & (np.abs(rel_f) >= LABEL_LIMIT)
        values = np.where(huge | ~np.isfinite(rel_f), 0, rel_f).astype(np.int64)
    if huge.any():
        problems.append(InputProblem(
            f"{int(huge.sum())} rows have a relevance label out of range (|label| >= 2^62)",
            "relevance labels are integer grades (0, 1, 2, ...); map them to small integers",
            _examples(df, huge)))
    if "subtopic" in df:
        _check_ids(df, problems, ("subtopic",), {"subtopic": arrow_id_status(df["subtopic"])})
    extra = _provenance(df, problems)
    if problems:
        raise EvalframeInputError("golden set (qrels)", problems)
    ids = {c: (df[c] if status[c] == "clean" else ids_to_str(df[c], trim=trim)).reset_index(drop=True)
           for c in ("query_id", "doc_id")}  # ids already clean are kept as they are
    out = pd.DataFrame({**ids, "relevance": values, **({} if "subtopic" in df else extra)})
    if conflicts == "human" and resolve and "subtopic" not in df:
        return _prefer_human(out)
    if not resolve:
        if "subtopic" in df:
            out.insert(1, "subtopic", ids_to_str(df["subtopic"], trim=trim).reset_index(drop=True))
        return CheckedQrels(out, encode_ids(out["query_id"]), id_strings(out["doc_id"]))
    if "subtopic" in df:
        return _check_subtopics(out, ids_to_str(df["subtopic"], trim=trim).reset_index(drop=True))
    coded = encode_qrels(out)
    key = coded.pair_keys()
    if not any_repeated(key):  # equal keys: maybe a repeated pair (checked exactly below)
        return coded
    pairs = _pairs(coded, key)
    if pairs is not None:  # one group per (query_id, doc_id): resolved on codes
        label, conflicted = resolved_labels(*pairs, values, "max" if conflicts == "error" else conflicts)
        if not len(conflicted) or conflicts != "error":  # identical repeats only, or resolved
            first = pairs[1]
            rows = provenance_rows(out, pairs[0], values, label) if "judge" in out or "confidence" in out else first
            out = out.iloc[rows].reset_index(drop=True).assign(relevance=label)
            if not len(conflicted):
                return encode_qrels(out)
            shown = conflicted[:MAX_EXAMPLES]
            examples = tuple(f"{q}:{d}" for q, d in out.iloc[shown][["query_id", "doc_id"]].itertuples(index=False))
            return replace(encode_qrels(out), conflicts=ResolvedConflicts(
                conflicts, len(conflicted), examples, tuple(int(r) for r in first[shown])))
    dup = _duplicated(out, ["query_id", "doc_id"])
    votes = out
    if dup.any():
        out = out.drop_duplicates(["query_id", "doc_id", "relevance"], ignore_index=True)  # identical labels are harmless
        dup = out.duplicated(["query_id", "doc_id"], keep=False)
    if dup.any() and conflicts != "error":
        out, resolved = resolve_conflicts(votes, conflicts)
        return replace(encode_qrels(out), conflicts=resolved)
    if dup.any():
        n_pairs = int(out.loc[dup, ["query_id", "doc_id"]].drop_duplicates().shape[0])
        raise EvalframeInputError("golden set (qrels)", [InputProblem(
            f"{n_pairs} (query_id, doc_id) pairs have conflicting relevance labels",
            "keep one label per judged document (the adjudicated one), or pass conflicts='max', "
            "conflicts='min' or conflicts='majority' to keep the highest, the lowest or the most frequent label"
            + (", or conflicts='human' to keep a person's label over a model's (the judge column)" if "judge" in out
               else ""),
            _examples(out.sort_values(["query_id", "doc_id"]), dup.loc[out.sort_values(["query_id", "doc_id"]).index]))])
    return encode_qrels(out)


def _pairs(coded: CheckedQrels, key: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """(pair number of each row, first row of each pair): the (query_id, doc_id) pairs
    numbered in order of first appearance, from the rows' 64-bit pair keys, confirmed on
    the ids themselves; None when two different pairs share a key (then the caller
    compares the strings)."""
    import pyarrow as pa
    from . import _arrow_compute as pc
    order = np.argsort(key, kind="stable")
    sk = key[order]
    start = np.empty(len(sk), dtype=bool)
    start[:1] = True
    np.not_equal(sk[1:], sk[:-1], out=start[1:])
    del sk
    group = np.cumsum(start) - 1
    firsts = order[start]  # stable: the earliest row of each key
    rows, ref = order[~start], firsts[group[~start]]
    q = coded.query.codes
    if not (q[rows] == q[ref]).all() or not pc.all(pc.equal(coded.doc.take(pa.array(rows)),
                                                            coded.doc.take(pa.array(ref)))).as_py():
        return None
    by_row = np.argsort(firsts, kind="stable")
    number = np.empty(len(firsts), dtype=np.int64)
    number[by_row] = np.arange(len(firsts))
    pair = np.empty(len(key), dtype=np.int64)
    pair[order] = number[group]
    return pair, firsts[by_row]


def _check_subtopics(out: pd.DataFrame, subtopic: pd.Series) -> CheckedQrels:
    """A diversity golden set: one label per (query_id, subtopic, doc_id)."""
    out.insert(1, "subtopic", subtopic)
    keys = ["query_id", "subtopic", "doc_id"]
    out = out.drop_duplicates(ignore_index=True)  # identical rows are harmless
    dup = out.duplicated(keys, keep=False)
    if dup.any():
        shown = out.sort_values(keys)
        raise EvalframeInputError("golden set (qrels)", [InputProblem(
            f"{int(out.loc[dup, keys].drop_duplicates().shape[0])} (query_id, subtopic, doc_id) triples have "
            "conflicting relevance labels",
            "keep one label per judged document and subtopic", _examples(shown, dup.loc[shown.index]))])
    return encode_qrels(out)


def _provenance(df: pd.DataFrame, problems: list[InputProblem]) -> dict:
    """The provenance columns of a golden set, cleaned: ``judge`` as strings (missing
    stays missing), ``confidence`` as float64 in [0, 1] (missing: NaN)."""
    out = {}
    if "judge" in df:
        j = df["judge"].reset_index(drop=True)
        out["judge"] = j.astype("string").str.strip().astype(object).where(j.notna(), None)
    if "confidence" in df:
        c = pd.to_numeric(df["confidence"], errors="coerce").reset_index(drop=True)
        bad = (c.isna() & df["confidence"].reset_index(drop=True).notna()) | (c < 0) | (c > 1)
        if bad.any():
            problems.append(InputProblem(
                f"{int(bad.sum())} rows have a confidence that is not a number in [0, 1]",
                "give each label's confidence as a probability (or leave it empty)", _examples(df, bad.to_numpy())))
        out["confidence"] = c.astype(np.float64)
    return out


def _prefer_human(out: pd.DataFrame) -> CheckedQrels:
    """``conflicts="human"``: the model rows of a (question, document) some person labelled
    are dropped, the rest resolved by majority; every pair with more than one distinct
    label among all its rows is counted (``ResolvedConflicts("human", ...)``)."""
    human = is_human(out["judge"]) if "judge" in out else np.ones(len(out), dtype=bool)
    keys = [out["query_id"].to_numpy(dtype=object), out["doc_id"].to_numpy(dtype=object)]
    pair = pd.MultiIndex.from_arrays(keys).factorize()[0]
    has_human = np.bincount(pair, weights=human, minlength=pair.max() + 1 if len(pair) else 0) > 0
    keep = human | ~has_human[pair]
    n_labels = pd.DataFrame({"p": pair, "r": out["relevance"].to_numpy()}).drop_duplicates().groupby("p").size()
    conflicted = n_labels.index[n_labels.to_numpy() > 1].to_numpy()
    first = pd.Series(np.arange(len(pair))).groupby(pair).min().to_numpy()
    rows = np.flatnonzero(keep)
    rows = rows[np.argsort(first[pair[rows]], kind="stable")]  # each pair where its first row was
    kept = _check_qrels(out.iloc[rows].reset_index(drop=True), "majority")
    shown = conflicted[:MAX_EXAMPLES]
    examples = tuple(f"{q}:{d}" for q, d in out.iloc[first[shown]][["query_id", "doc_id"]].itertuples(index=False))
    if not len(conflicted):
        return replace(kept, conflicts=None)
    return replace(kept, conflicts=ResolvedConflicts("human", int(len(conflicted)), examples,
                                                      tuple(int(first[c]) for c in shown)))


def check_qrels_part(qrels: pd.DataFrame, conflicts: Conflicts,
                     rows: np.ndarray) -> tuple[pd.DataFrame, ResolvedConflicts | None]:
    """A part of a larger golden set holding whole questions (its rows at positions
    ``rows`` of the whole), checked and its conflicting labels resolved: the canonical
    table (its subtopic table for diversity qrels) and the pairs resolved, ``first_rows``
    counted in the whole golden set (to merge the parts, :func:`merge_conflicts`)."""
    checked = check_qrels(qrels, conflicts=conflicts)
    frame = checked.table
    c = checked.conflicts
    return frame, None if c is None else replace(c, first_rows=tuple(int(rows[r]) for r in c.first_rows))


def clean_run(run: pd.DataFrame, *, system: str | None = None,
              duplicates: Literal["error", "max", "first"] = "error",
              columns: Mapping[str, str] | None = None, ties: str = "doc_id_desc",
              trimmed: bool = False, ascending: bool = False) -> pd.DataFrame:
    """Check a run (one or many systems) and return a canonical copy.

    The same checks as :func:`check_run`, which also returns the factorised ids.

    Parameters
    ----------
    run : DataFrame
        Columns ``query_id, doc_id, score`` or aliases (``qid``, ``question_id``,
        ``docno``, ``chunk_id``, ``sim``...), optionally ``system`` (or ``run``/``tag``)
        and ``rank``.  A run with a ``rank`` column and no score is ordered by rank
        (``score = -rank``; repeated ranks are ties, see :mod:`evalframe.canonical`); a
        run whose document column holds lists (one row per question) is exploded, each
        document ranked by its position in its list;
        ``tokens`` (each row's token count, for measures at a token budget).
    system : str, optional
        Name for the system; overrides a ``system`` column.
    duplicates : {"error", "max", "first"}
        What to do with a document listed twice for the same question (and
        system): raise (default), keep its highest score, or keep its first row.
    columns : dict, optional
        ``{your column name: canonical name}``, applied before the aliases (names the
        table lacks are skipped).
    ties : {"doc_id_desc", "doc_id_asc", "rank"}
        The order the run will be ranked in; with ``"rank"`` the scores are not used,
        so a missing or NaN score is no error.
    trimmed : bool
        The table's ids hold no leading or trailing blank already (a TREC text file split
        on blanks, ``evalframe.io.read_raw``): the pass that trims them is skipped.
    ascending : bool
        The scores are distances (lower is better): the table's ``score`` is their
        negation, so that every step after it ranks higher scores first (a rank-only run
        is ordered by its rank either way).

    Returns
    -------
    DataFrame
        ``[system,] query_id, doc_id, score[, rank][, tokens]`` with str ids, float64 score.

    Raises
    ------
    EvalframeInputError
        Listing every problem: missing columns, missing ids, missing, NaN,
        infinite or non-numeric scores, duplicate documents, an empty table.
    """
    frame = check_run(run, system=system, duplicates=duplicates, columns=columns, ties=ties, trimmed=trimmed,
                      ascending=ascending).frame
    if frame["doc_id"].dtype.kind in "iu":  # integer doc ids kept as integers by check_run: str ids here
        frame = frame.assign(doc_id=ids_to_str(frame["doc_id"]))
    return frame


def _tokens(df: pd.DataFrame, problems: list[InputProblem]) -> np.ndarray | None:
    """The ``tokens`` column (token count of each retrieved row, for measures at a
    token budget) as int64 (float64 when not whole), or a problem when a value is
    missing, negative or not a number."""
    t = df["tokens"]
    t = t if pd.api.types.is_numeric_dtype(t.dtype) and not pd.api.types.is_bool_dtype(t.dtype) \
        else pd.to_numeric(t, errors="coerce")
    v = t.to_numpy(dtype=np.float64, na_value=np.nan)
    bad = ~np.isfinite(v) | (v < 0)
    if bad.any():
        problems.append(InputProblem(f"{int(bad.sum())} rows have a missing, negative or non-numeric token count",
                                     "give every retrieved row its number of tokens (an int >= 0), "
                                     "or drop the tokens column", _examples(df, bad)))
        return None
    return v.astype(np.int64) if (v == np.round(v)).all() else v


def check_run(run: pd.DataFrame, *, system: str | None = None,
              duplicates: Literal["error", "max", "first"] = "error",
              columns: Mapping[str, str] | None = None, ties: str = "doc_id_desc", part: bool = False,
              trimmed: bool = False, ascending: bool = False) -> CheckedRun:
    """Check a run and return the canonical copy with its ids factorised once.

    Parameters and errors as :func:`clean_run`; ``part=True``: a partition of a run,
    which may hold no row.

    Returns
    -------
    CheckedRun
        ``frame`` is :func:`clean_run`'s table; the codes are shared with the
        ranking step (:func:`evalframe.ranking.judge`), so that no id column is
        factorised twice.
    """
    check("check_run", "duplicates", duplicates, Options(("error", "max", "first"), "'error', 'max' or 'first'"))
    check("check_run", "ascending", ascending, Boolean())  # a truthy 'no' would negate the scores
    if not isinstance(run, pd.DataFrame):
        raise TypeError(f"run must be a pandas DataFrame, got {type(run).__name__}; "
                        "use evalframe.read_run() for files and dicts")
    problems: list[InputProblem] = []
    run = run_table(run, problems, columns=check_columns(columns, caller="check_run"), duplicates=duplicates,
                    ascending=ascending)
    df = _rename(run, ("query_id", "doc_id", "score"), ("system", "rank", "tokens"), problems)
    if problems:
        raise EvalframeInputError("run", problems)
    if len(df) == 0 and not part:
        raise EvalframeInputError("run", [InputProblem(
            "the table is empty", "pass a run with at least one (query_id, doc_id, score) row")])
    id_cols = ("query_id", "doc_id") + (("system",) if "system" in df and system is None else ())
    status = {c: arrow_id_status(df[c]) for c in id_cols}
    _check_ids(df, problems, id_cols, status)
    score = df["score"]
    unreal = _not_real(score)
    if unreal is not None:
        problems.append(_not_real_problem(df, "score", unreal, "give every retrieved document a finite real "
                                          "number as its score (a date: its timestamp, e.g. .astype('int64'))"))
        raise EvalframeInputError("run", problems)
    if not pd.api.types.is_numeric_dtype(score.dtype) or pd.api.types.is_bool_dtype(score.dtype):
        score = pd.to_numeric(score, errors="coerce")
    sc = score.to_numpy(dtype=np.float64, na_value=np.nan)
    bad = ~np.isfinite(sc)
    if bad.any() and ties != "rank":  # ranked by the rank column, the scores are not used
        nonnum = bad & df["score"].notna().to_numpy() & ~np.isinf(sc)
        what = f"{int(bad.sum())} rows have a missing, NaN, infinite or non-numeric score"
        if nonnum.any():
            what += f" ({int(nonnum.sum())} non-numeric)"
        problems.append(InputProblem(what, "give every retrieved document a finite numeric score "
                                     "(drop the rows, or map -inf/inf to the lowest/highest finite score)"
                                     + ("; or order the run by its rank column with ties='rank'" if "rank" in df else ""),
                                     _examples(df, bad)))
    if ascending:
        sc = -sc  # a distance: its negation (a new array, never the caller's), before duplicates="max"
    rank = None
    if "rank" in df:
        r = df["rank"]
        r = r if pd.api.types.is_numeric_dtype(r.dtype) else pd.to_numeric(r, errors="coerce")
        r = r.to_numpy(dtype=float, na_value=np.nan)
        if np.isfinite(r).all():
            rank = r
    tokens = _tokens(df, problems) if "tokens" in df else None
    trim = not trimmed
    data = {}
    if system is not None:
        if "system" in df and df["system"].nunique() > 1:
            problems.append(InputProblem(
                f"system={system!r} would merge the run's {df['system'].nunique()} systems "
                f"({list(df['system'].unique()[:5])}) into one ranking",
                "leave system= out to keep the run's own system column, or pass one system"))
        data["system"] = pd.Series([str(system)] * len(df), dtype=str)
    for col in id_cols:  # ids already clean are kept as they are (same buffers)
        ints = integer_ids(df[col]) if col == "doc_id" else None
        if ints is not None:  # kept as integers (CheckedRun.doc_ids): never written as strings
            data[col] = pd.Series(ints)
            continue
        data[col] = (df[col] if status[col] == "clean" else ids_to_str(df[col], trim=trim)).reset_index(drop=True)
    data = {c: data[c] for c in ("system", "query_id", "doc_id") if c in data}
    data["score"] = sc
    if rank is not None:
        data["rank"] = rank
    if tokens is not None:
        data["tokens"] = tokens
    out = pd.DataFrame(data)
    keys = [c for c in ("system", "query_id", "doc_id") if c in out]
    coded = None
    if problems:  # ids or scores are bad: the error also reports duplicates
        dup = _duplicated(out, keys)
    else:
        coded = encode_run(out)
        dup = coded.repeated_docs()
    if dup.any() and duplicates == "error":
        n = int(out.loc[dup, keys].drop_duplicates().shape[0])
        srt = out.sort_values(keys)
        problems.append(InputProblem(
            f"{n} documents are listed more than once for the same question"
            + (" and system" if "system" in out else "") + f" ({int(dup.sum())} rows)",
            "pass duplicates='max' to keep each document's highest score, or duplicates='first' "
            "to keep its first row, or remove them",
            _examples(srt, dup[srt.index.to_numpy()])))
    if problems:
        raise EvalframeInputError("run", problems)
    if dup.any():  # only the (few) repeated rows are compared: the rest is kept as it is
        copies = np.flatnonzero(dup)
        if duplicates == "max":  # the highest score first, ties in the input's order
            copies = copies[np.argsort(-sc[copies], kind="stable")]
        keep = np.ones(len(out), dtype=bool)
        keep[copies[out.iloc[copies].duplicated(keys, keep="first").to_numpy()]] = False
        repeats = out[~keep].reset_index(drop=True)
        out = out[keep].reset_index(drop=True)
        if "rank" in out:
            repeats["rank"] = _integral(repeats["rank"])
            out["rank"] = _integral(out["rank"])
        return replace(encode_run(out), repeats=repeats)
    if "rank" in out:
        out["rank"] = _integral(out["rank"])
    # ``coded.frame`` is ``out`` itself: returning it keeps the fingerprints computed above
    return coded


def _integral(rank: pd.Series) -> pd.Series:
    """A rank column as int64 when every rank is a whole number."""
    return rank.astype(np.int64) if (rank == np.round(rank)).all() else rank
