"""Input validation for the statistics functions, done up front so the maths stays short.

Parameter errors are checked by :mod:`evalframe._validation` (one template,
``"<function>: <param> must be <what>, got <value!r>"``); the ``check_*`` helpers
here name the statistics' common parameters as its constraints.  Problems in the per-question
table are one :class:`~evalframe.errors.EvalframeInputError` listing every problem.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

import numpy as np
import pandas as pd

from evalframe._validation import CONFIDENCE, POSITIVE_INT, SEED, InstanceOf, Interval, Options, check
from evalframe.errors import EvalframeInputError, InputProblem

__all__ = [
    "SummaryMethod", "TestName", "Correction", "CiMethod", "PValueAdjustment", "Alternative",
    "WilcoxonMethod", "SUMMARY_METHODS", "TESTS", "CORRECTIONS", "CI_METHODS", "ADJUSTMENTS",
    "ALTERNATIVES", "WILCOXON_METHODS", "SINGLE_SYSTEM", "RESERVED_COLUMNS",
    "check_choice", "check_confidence", "check_resamples", "check_seed",
    "check_n", "check_tie_threshold", "check_cluster", "as_list", "clean_table",
    "sorted_codes", "run_starts", "combined_codes", "unique_key_order", "key_array",
    "is_string_categorical",
]

SummaryMethod = Literal["auto", "t", "normal", "bootstrap", "bca", "wilson", "clopper-pearson"]
TestName = Literal["t", "randomization", "bootstrap", "bootstrap-t", "wilcoxon", "sign"]
Correction = Literal["holm", "bonferroni", "bh", "none", "tukey", "randomized-tukey"]
CiMethod = Literal["t", "randomization", "bootstrap", "bootstrap-t", "bca", "none"]
PValueAdjustment = Literal["holm", "bonferroni", "bh", "none"]
Alternative = Literal["two-sided", "greater", "less"]
WilcoxonMethod = Literal["exact", "normal"]

SUMMARY_METHODS = ("auto", "t", "normal", "bootstrap", "bca", "wilson", "clopper-pearson")
TESTS = ("t", "randomization", "bootstrap", "bootstrap-t", "wilcoxon", "sign")
CORRECTIONS = ("holm", "bonferroni", "bh", "none", "tukey", "randomized-tukey")
CI_METHODS = ("t", "randomization", "bootstrap", "bootstrap-t", "bca", "none")
ADJUSTMENTS = ("holm", "bonferroni", "bh", "none")
ALTERNATIVES = ("two-sided", "greater", "less")
WILCOXON_METHODS = ("exact", "normal")

#: the system name of a table without a ``system`` column.
SINGLE_SYSTEM = "system"

#: input and output column names a segment / cluster column may not take.
RESERVED_COLUMNS = ("system", "query_id", "measure", "value", "n", "mean", "sd", "se", "ci_low",
             "ci_high", "method", "confidence", "n_resamples", "seed", "system_a", "system_b",
             "diff", "p_value", "p_adjusted", "statistic", "mean_a", "mean_b")


def check_choice(func: str | None, param: str, value: object, choices: Sequence[str]) -> None:
    """Raise unless ``value`` is one of ``choices``."""
    check(func, param, value, Options(choices))


def check_confidence(confidence: float, name: str = "confidence", *,
                     func: str | None = None) -> None:
    """Raise unless ``confidence`` (or an ``alpha``, a ``power``: ``name``) is in (0, 1)."""
    check(func, name, confidence, CONFIDENCE)


def check_resamples(n_resamples: int, *, func: str | None = None) -> None:
    """Raise unless ``n_resamples`` is an int >= 1."""
    check(func, "n_resamples", n_resamples, POSITIVE_INT)


def check_seed(seed: int, *, func: str | None = None) -> None:
    """Raise unless ``seed`` is an int >= 0 (what ``numpy.random.default_rng`` takes)."""
    check(func, "seed", seed, SEED)


def check_n(n: int, minimum: int = 1, *, func: str | None = None) -> None:
    """Raise unless ``n`` (a number of questions) is an int >= ``minimum``."""
    check(func, "n", n, Interval(int, minimum, None))


#: a threshold of differences (infinite allowed: every difference a tie)
TIE_THRESHOLD = Interval(float, 0, None, finite=False)


def check_tie_threshold(tie_threshold: float, *, func: str | None = None) -> None:
    """Raise unless ``tie_threshold`` is a float >= 0."""
    check(func, "tie_threshold", tie_threshold, TIE_THRESHOLD)


def check_cluster(cluster: str | None, *, func: str | None = None) -> None:
    """Raise unless ``cluster`` is a column name or None."""
    check(func, "cluster", cluster, COLUMN_NAME, None)


#: a column's name
COLUMN_NAME = InstanceOf(str, "a column name (str)")


def as_list(cols: str | Sequence[str] | None) -> list[str]:
    """``None`` -> [], ``"a"`` -> ["a"], a sequence -> a list."""
    if cols is None:
        return []
    if isinstance(cols, str):
        return [cols]
    return list(cols)


def _examples(df: pd.DataFrame, mask) -> str:
    return df.loc[np.asarray(mask)].head(3).to_string()


def _column_problems(df: pd.DataFrame, extra: list[str]) -> list[InputProblem]:
    """Missing or reserved columns."""
    problems = []
    required = ["query_id", "measure", "value", *extra]
    missing = [c for c in required if c not in df.columns]
    if missing:
        problems.append(InputProblem(
            f"missing column{'s' if len(missing) > 1 else ''} {missing} (found {list(df.columns)})",
            "pass the per-question table of evaluate(): columns system, query_id, measure, "
            "value (+ the segment / cluster columns you name in by= or cluster=)"))
    reserved = [c for c in extra if c in RESERVED_COLUMNS]
    if reserved:
        problems.append(InputProblem(
            f"by= / cluster= name reserved column{'s' if len(reserved) > 1 else ''} {reserved}",
            "rename the segment column (e.g. 'segment' or 'size'): these names are input or "
            "output columns"))
    return problems


def _value_problems(df: pd.DataFrame) -> list[InputProblem]:
    """Non-numeric, NaN and infinite values."""
    if "value" not in df.columns:
        return []
    problems = []
    raw = df["value"]
    num = pd.to_numeric(raw, errors="coerce")
    not_num = num.isna() & raw.notna()
    if not_num.any():
        problems.append(InputProblem(
            f"{int(not_num.sum())} rows have a non-numeric value",
            "values must be floats (one per-question score per row)", _examples(df, not_num)))
    nan = raw.isna()
    if nan.any():
        problems.append(InputProblem(
            f"{int(nan.sum())} rows have a missing (NaN) value",
            "drop those rows or score the question (evaluate() scores unanswered questions 0)",
            _examples(df, nan)))
    inf = np.isinf(num.to_numpy(dtype=float, na_value=np.nan))
    if inf.any():
        problems.append(InputProblem(
            f"{int(inf.sum())} rows have an infinite value",
            "per-question values must be finite", _examples(df, inf)))
    return problems


def _null_key_problems(df: pd.DataFrame, extra: list[str]) -> list[InputProblem]:
    problems = []
    for col in ["system", "query_id", "measure", *extra]:
        if col in df.columns:
            null = df[col].isna()
            if null.any():
                problems.append(InputProblem(
                    f"{int(null.sum())} rows have a missing {col}",
                    f"fill or drop the rows without a {col}", _examples(df, null)))
    return problems


def _duplicated(df: pd.DataFrame, key: list[str], known: dict[str, np.ndarray] | None = None) -> np.ndarray:
    """Rows whose ``key`` repeats another row's (all copies), on integer codes when it can
    (each column's codes kept in ``known``): a count per key when the keys are dense (as
    a per-question table's are), a hash otherwise."""
    codes = sorted_codes(df, key, known=known)
    combined = None if codes is None else combined_codes(codes)
    if combined is None:
        return df.duplicated(key, keep=False).to_numpy()
    combined, size = combined
    if size <= DENSE_KEYS_PER_ROW * len(df) + 1_000_000:
        return np.bincount(combined, minlength=size)[combined] > 1
    return pd.Series(combined).duplicated(keep=False).to_numpy()


def _key_problems(df: pd.DataFrame, out: pd.DataFrame, by: list[str],
                  cluster: str | None, known: dict[str, np.ndarray] | None = None) -> list[InputProblem]:
    """Duplicate (system, by..., query_id, measure) rows; questions in several clusters."""
    problems = []
    key = ["system", *by, "query_id", "measure"]
    dup = _duplicated(out, key, known)
    if dup.any():
        problems.append(InputProblem(
            f"{int(dup.sum())} rows share the same ({', '.join(key)})",
            "keep one row per system, question and measure"
            + (" (and segment)" if by else "") + "; average or drop duplicates first",
            _examples(df, dup)))
    if cluster:
        per_q = out.groupby("query_id", sort=False)[cluster].nunique(dropna=False)
        bad = per_q[per_q > 1]
        if len(bad):
            problems.append(InputProblem(
                f"{len(bad)} questions belong to more than one {cluster!r} cluster",
                "a question must sit in exactly one cluster",
                "\n".join(f"query_id={q!r}" for q in bad.index[:3])))
    return problems


def clean_table(per_question: pd.DataFrame, *, by: list[str], cluster: str | None,
                table: str = "per_question", codes: dict[str, np.ndarray] | None = None) -> pd.DataFrame:
    """Return a checked copy with str ids, float64 values and a ``system`` column.

    ``codes``, a dict, receives the key columns' sorted codes found while checking
    (see :func:`sorted_codes`; rows as the copy's), for the caller to reuse; with it, key
    columns that are categoricals of strings stay categorical (see :func:`key_array`).

    Raises
    ------
    EvalframeInputError
        One error listing every problem found (columns, values, keys, clusters).
    """
    if not isinstance(per_question, pd.DataFrame):
        raise EvalframeInputError(table, [InputProblem(
            f"expected a pandas DataFrame, got {type(per_question).__name__}",
            "pass the per-question table returned by evalframe.evaluate()")])
    df = per_question
    extra = list(dict.fromkeys(by + ([cluster] if cluster else [])))
    problems = [*_column_problems(df, extra), *_value_problems(df),
                *_null_key_problems(df, extra)]
    if problems:
        raise EvalframeInputError(table, problems)
    keep = codes is not None  # a caller grouping on codes reads categoricals through theirs
    out = pd.DataFrame({  # string columns keep their arrays (no Python object per row)
        "system": (key_array(df["system"], keep) if "system" in df.columns
                   else np.full(len(df), SINGLE_SYSTEM, dtype=object)),
        "query_id": key_array(df["query_id"], keep),
        "measure": key_array(df["measure"], keep),
        "value": pd.to_numeric(df["value"]).to_numpy(dtype=np.float64),
    })
    for col in extra:
        out[col] = df[col].to_numpy()
    problems = _key_problems(df, out, by, cluster, codes)
    if problems:
        raise EvalframeInputError(table, problems)
    return out


def is_string_categorical(dtype) -> bool:
    """A categorical dtype whose categories are strings."""
    return isinstance(dtype, pd.CategoricalDtype) and pd.api.types.is_string_dtype(dtype.categories.dtype) \
        and (dtype.categories.dtype != object or all(isinstance(c, str) for c in dtype.categories))


def key_array(col: pd.Series, keep_categorical: bool = True):
    """A key column's values as strings: a categorical of strings stays categorical (its
    codes are the ids' codes: no string per row is built or hashed again) when
    ``keep_categorical``, anything else is converted with ``astype(str)``."""
    if keep_categorical and is_string_categorical(col.dtype):
        return col.array
    return col.astype(str).array


def sorted_codes(df: pd.DataFrame, columns: list[str],
                 known: dict[str, np.ndarray] | None = None) -> list[np.ndarray] | None:
    """Integer codes of each column, ordered as the column's values sort (so sorting the
    codes sorts the table as ``sort_values(columns)`` does), or None when a column is not
    of strings or numbers or has missing values.

    ``known``: codes of ``df``'s columns found before (reused), and where the codes
    found now are kept (each column is factorised once)."""
    out = []
    for c in columns:
        if known is not None and c in known:
            out.append(known[c])
            continue
        col = df[c]
        if is_string_categorical(col.dtype) and not bool(col.isna().any()):
            cats = col.cat.categories
            codes = col.cat.codes.to_numpy().astype(np.int64)
            if not cats.is_monotonic_increasing:  # codes ranked as the categories sort
                rank = np.empty(len(cats), dtype=np.int64)
                rank[cats.argsort()] = np.arange(len(cats))
                codes = rank[codes]
            out.append(codes)
            if known is not None:
                known[c] = codes
            continue
        if not (pd.api.types.is_string_dtype(col.dtype) or pd.api.types.is_numeric_dtype(col.dtype)) \
                or isinstance(col.dtype, pd.CategoricalDtype) or col.dtype == object and c not in (
                    "system", "query_id", "measure") or bool(col.isna().any()):
            return None
        out.append(pd.factorize(col, sort=True)[0].astype(np.int64))
        if known is not None:
            known[c] = out[-1]
    return out


#: a key space up to this many slots per row (plus a million) is counted densely
DENSE_KEYS_PER_ROW = 2


def combined_codes(codes: list[np.ndarray]) -> tuple[np.ndarray, int] | None:
    """One int64 code per row that orders as the tuple of ``codes`` does
    (lexicographically, first column first), and the size of its range; None when the
    range passes 2**62."""
    ranges = [int(c.max(initial=0)) + 1 for c in codes]
    size = math.prod(ranges)
    if size >= 2 ** 62:
        return None
    combined = np.zeros(len(codes[0]) if codes else 0, dtype=np.int64)
    for c, r in zip(codes, ranges):
        combined *= r
        combined += c
    return combined, size


def unique_key_order(codes: list[np.ndarray]) -> np.ndarray:
    """Row positions that sort the rows by ``codes`` (first column first), for keys that
    are unique: ``np.lexsort(codes[::-1])`` (any sort gives the same order when no two
    rows tie), by placing each row at its key when the key space is dense, else by one
    sort of the combined code."""
    combined = combined_codes(codes)
    if combined is None:
        return np.lexsort(codes[::-1])
    combined, size = combined
    if size <= DENSE_KEYS_PER_ROW * len(combined) + 1_000_000:
        slot = np.full(size, -1, dtype=np.int64)
        slot[combined] = np.arange(len(combined))
        return slot[slot >= 0]
    return np.argsort(combined)


def run_starts(codes: list[np.ndarray]) -> np.ndarray:
    """True at each row that starts a new run of equal keys (codes of rows already sorted)."""
    n = len(codes[0]) if codes else 0
    new = np.zeros(n, dtype=bool)
    new[:1] = True
    for c in codes:
        new[1:] |= c[1:] != c[:-1]
    return new
