"""Clean and check input tables: one step, one error listing every problem.

:func:`clean_qrels` and :func:`clean_run` take a DataFrame with canonical or
alias column names and return a new DataFrame with canonical columns and dtypes:

- golden set (qrels): ``query_id`` (str), ``doc_id`` (str), ``relevance`` (int64)
- run: ``query_id`` (str), ``doc_id`` (str), ``score`` (float64), plus
  ``system`` (str) when the input has one (or the ``system`` argument is given)
  and ``rank`` (int64) when the input has one.

Ids are strings after cleaning, so an integer question id in one table matches
the same id written as text in the other.  Integral floats (``1.0``, as pandas
reads an integer column with gaps) become ``"1"``.  The caller's DataFrame is
never modified.
"""
from __future__ import annotations

__all__ = ["clean_qrels", "clean_run", "ALIASES"]

from typing import Literal

import numpy as np
import pandas as pd

from .errors import EvalframeInputError, InputProblem

#: Accepted column names, canonical name first.
ALIASES: dict[str, tuple[str, ...]] = {
    "query_id": ("query_id", "qid", "query", "topic", "topic_id", "question_id", "question", "queryid", "q_id"),
    "doc_id": ("doc_id", "docno", "docid", "doc", "document", "document_id", "page", "page_id", "did", "pid"),
    "relevance": ("relevance", "rel", "label", "grade", "judgment", "judgement"),
    "score": ("score", "sim", "similarity"),
    "system": ("system", "run", "run_id", "runid", "run_tag", "tag"),
    "rank": ("rank",),
}

_MAX_EXAMPLES = 5


def _examples(df: pd.DataFrame, mask: np.ndarray | pd.Series) -> str:
    rows = df.loc[np.asarray(mask)].head(_MAX_EXAMPLES)
    return rows.to_string(index=True, max_colwidth=40)


def _rename(df: pd.DataFrame, wanted: tuple[str, ...], optional: tuple[str, ...],
            problems: list[InputProblem]) -> pd.DataFrame:
    """Map alias columns to canonical names; report missing or ambiguous ones."""
    lower = {str(c).strip().lower(): c for c in df.columns}
    mapping: dict[object, str] = {}
    for canon in wanted + optional:
        found = [lower[a] for a in ALIASES[canon] if a in lower]
        if canon in df.columns:
            found = [canon]
        if len(found) > 1:
            problems.append(InputProblem(
                f"several columns could be {canon!r}: {found}",
                f"rename or drop all but one of them (accepted names: {', '.join(ALIASES[canon])})"))
        elif found:
            mapping[found[0]] = canon
        elif canon in wanted:
            problems.append(InputProblem(
                f"missing column {canon!r} (found columns: {[str(c) for c in df.columns]})",
                f"name a column {canon!r} or one of its aliases: {', '.join(ALIASES[canon][1:])}"))
    out = df[list(mapping)].rename(columns=mapping)
    return out


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
    if pd.api.types.is_string_dtype(s.dtype) and s.dtype != object:
        if not trim:
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


#: Relevance labels must lie strictly between -LABEL_LIMIT and LABEL_LIMIT (the
#: ranking step marks unjudged documents with -2^62).
LABEL_LIMIT = 2 ** 62


def _integer_labels(rel: pd.Series) -> tuple[np.ndarray, np.ndarray] | None:
    """(int64 labels, out-of-range mask) of an integer column without missing
    values, read exactly (no trip through float64); None for other columns."""
    if not pd.api.types.is_integer_dtype(rel.dtype) or bool(rel.isna().any()):
        return None
    v = rel.to_numpy()
    if v.dtype.kind == "u":
        huge = v >= np.uint64(LABEL_LIMIT)
    else:
        v = v.astype(np.int64)
        huge = (v >= LABEL_LIMIT) | (v <= -LABEL_LIMIT)
    return np.where(huge, 0, v).astype(np.int64), huge


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


def _check_ids(df: pd.DataFrame, problems: list[InputProblem], cols=("query_id", "doc_id")) -> None:
    for col in cols:
        if col not in df:
            continue
        bad = df[col].isna() | (df[col].astype(str).str.strip() == "")
        if bad.any():
            problems.append(InputProblem(
                f"{int(bad.sum())} rows have a missing or empty {col}",
                f"drop those rows or fill in their {col}", _examples(df, bad)))


def clean_qrels(qrels: pd.DataFrame) -> pd.DataFrame:
    """Check a golden set and return a canonical copy.

    Parameters
    ----------
    qrels : DataFrame
        Columns ``query_id, doc_id, relevance`` or aliases
        (``qid/query/topic``, ``docno/docid/doc``, ``rel/label/grade``).

    Returns
    -------
    DataFrame
        ``query_id`` (str), ``doc_id`` (str), ``relevance`` (int64); one row
        per (query_id, doc_id) (exact duplicate rows are merged).

    Raises
    ------
    EvalframeInputError
        Listing every problem: missing columns, missing ids, missing or
        non-numeric or non-integral labels, conflicting duplicate rows, an
        empty table.
    """
    if not isinstance(qrels, pd.DataFrame):
        raise TypeError(f"qrels must be a pandas DataFrame, got {type(qrels).__name__}; "
                        "use evalframe.read_qrels() for files and dicts")
    problems: list[InputProblem] = []
    df = _rename(qrels, ("query_id", "doc_id", "relevance"), (), problems)
    if problems:
        raise EvalframeInputError("golden set (qrels)", problems)
    if len(df) == 0:
        raise EvalframeInputError("golden set (qrels)", [InputProblem(
            "the table is empty", "pass a golden set with at least one judged (query_id, doc_id, relevance) row")])
    _check_ids(df, problems)
    rel = df["relevance"]
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
    if problems:
        raise EvalframeInputError("golden set (qrels)", problems)
    trim = not qrels.attrs.get("evalframe_ids_trimmed", False)
    out = pd.DataFrame({
        "query_id": ids_to_str(df["query_id"], trim=trim).to_numpy(),
        "doc_id": ids_to_str(df["doc_id"], trim=trim).to_numpy(),
        "relevance": values,
    })
    dup = _duplicated(out, ["query_id", "doc_id"])
    if dup.any():
        out = out.drop_duplicates(ignore_index=True)  # identical rows are harmless
        dup = out.duplicated(["query_id", "doc_id"], keep=False)
    if dup.any():
        n_pairs = int(out.loc[dup, ["query_id", "doc_id"]].drop_duplicates().shape[0])
        raise EvalframeInputError("golden set (qrels)", [InputProblem(
            f"{n_pairs} (query_id, doc_id) pairs have conflicting relevance labels",
            "keep one label per judged document (e.g. the adjudicated or the maximum label)",
            _examples(out.sort_values(["query_id", "doc_id"]), dup.loc[out.sort_values(["query_id", "doc_id"]).index]))])
    return out


def clean_run(run: pd.DataFrame, *, system: str | None = None,
              duplicates: Literal["error", "max", "first"] = "error") -> pd.DataFrame:
    """Check a run (one or many systems) and return a canonical copy.

    Parameters
    ----------
    run : DataFrame
        Columns ``query_id, doc_id, score`` or aliases (``qid``, ``docno``,
        ``sim``...), optionally ``system`` (or ``run``/``tag``) and ``rank``.
    system : str, optional
        Name for the system; overrides a ``system`` column.
    duplicates : {"error", "max", "first"}
        What to do with a document listed twice for the same question (and
        system): raise (default), keep its highest score, or keep its first row.

    Returns
    -------
    DataFrame
        ``[system,] query_id, doc_id, score[, rank]`` with str ids, float64 score.

    Raises
    ------
    EvalframeInputError
        Listing every problem: missing columns, missing ids, missing, NaN,
        infinite or non-numeric scores, duplicate documents, an empty table.
    """
    if duplicates not in ("error", "max", "first"):
        raise ValueError(f"duplicates must be 'error', 'max' or 'first', got {duplicates!r}")
    if not isinstance(run, pd.DataFrame):
        raise TypeError(f"run must be a pandas DataFrame, got {type(run).__name__}; "
                        "use evalframe.read_run() for files and dicts")
    problems: list[InputProblem] = []
    df = _rename(run, ("query_id", "doc_id", "score"), ("system", "rank"), problems)
    if problems:
        raise EvalframeInputError("run", problems)
    if len(df) == 0:
        raise EvalframeInputError("run", [InputProblem(
            "the table is empty", "pass a run with at least one (query_id, doc_id, score) row")])
    _check_ids(df, problems, ("query_id", "doc_id") + (("system",) if "system" in df and system is None else ()))
    score = df["score"]
    if not pd.api.types.is_numeric_dtype(score.dtype) or pd.api.types.is_bool_dtype(score.dtype):
        score = pd.to_numeric(score, errors="coerce")
    sc = score.to_numpy(dtype=np.float64, na_value=np.nan)
    bad = ~np.isfinite(sc)
    if bad.any():
        nonnum = bad & df["score"].notna().to_numpy() & ~np.isinf(sc)
        what = f"{int(bad.sum())} rows have a missing, NaN, infinite or non-numeric score"
        if nonnum.any():
            what += f" ({int(nonnum.sum())} non-numeric)"
        problems.append(InputProblem(what, "give every retrieved document a finite numeric score "
                                     "(drop the rows, or map -inf/inf to the lowest/highest finite score)",
                                     _examples(df, bad)))
    rank = None
    if "rank" in df:
        r = df["rank"]
        r = r if pd.api.types.is_numeric_dtype(r.dtype) else pd.to_numeric(r, errors="coerce")
        r = r.to_numpy(dtype=float, na_value=np.nan)
        if np.isfinite(r).all():
            rank = r
    trim = not run.attrs.get("evalframe_ids_trimmed", False)
    data = {}
    if system is not None:
        if "system" in df and df["system"].nunique() > 1:
            problems.append(InputProblem(
                f"system={system!r} would merge the run's {df['system'].nunique()} systems "
                f"({list(df['system'].unique()[:5])}) into one ranking",
                "leave system= out to keep the run's own system column, or pass one system"))
        data["system"] = pd.Series([str(system)] * len(df), dtype=str)
    elif "system" in df:
        data["system"] = ids_to_str(df["system"], trim=trim).reset_index(drop=True)
    data["query_id"] = ids_to_str(df["query_id"], trim=trim).reset_index(drop=True)
    data["doc_id"] = ids_to_str(df["doc_id"], trim=trim).reset_index(drop=True)
    data["score"] = sc
    if rank is not None:
        data["rank"] = rank
    out = pd.DataFrame(data)
    keys = [c for c in ("system", "query_id", "doc_id") if c in out]
    dup = _duplicated(out, keys)
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
    if dup.any():
        if duplicates == "max":
            order = out.sort_values("score", ascending=False, kind="stable").index
            out = out.loc[order].drop_duplicates(keys, keep="first").sort_index()
        else:
            out = out.drop_duplicates(keys, keep="first")
        out = out.reset_index(drop=True)
    if "rank" in out:
        out["rank"] = out["rank"].astype(np.int64) if (out["rank"] == np.round(out["rank"])).all() else out["rank"]
    return out
