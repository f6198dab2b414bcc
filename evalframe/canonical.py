"""The input boundary: tables as their users store them, mapped onto canonical columns.

Everything here runs before the checks of :mod:`evalframe.schema` and changes only the
*shape* of a table, never its values:

- ``columns=``: ``{your name: canonical name}`` (as ranx's ``from_df``), applied first;
  a column displaced by the mapping (one already named like its target) is left out.
- Aliases (:data:`ALIASES`): ``question_id``, ``chunk_id``, ``passage_id``, ``page_id``...
- Question text beside a question id: a golden set with ``question_id`` (the id) and
  ``question`` (the text) is not an ambiguity; the text becomes the :data:`TEXT_COLUMN`
  column (:func:`question_texts` reads it back).
- List runs: one row per question with an ordered list of document ids (and optionally
  lists of scores or ranks), as RAG logs store them: exploded with Arrow's
  ``list_flatten`` / ``list_parent_indices`` (no Python loop per row); each document's
  ``rank`` is its 1-based position in its list. A score or rank column beside the lists
  holds lists too: one value per row (a question's score) is refused, as every listed
  document would get it and the list's order would be lost to the tie-break; so is a
  question listed in two rows of a run ranked by position (both lists start at rank 1).
- Rank-only runs: a ``rank`` column and no score (or a score column without a single
  value) gives ``score = -rank``, so the run is ordered by rank ascending; documents
  sharing a rank are a tie on score, broken by the ``ties`` convention (doc_id
  descending by default) and counted in the ``score_ties`` diagnostics, exactly as
  ``ties="rank"`` orders the same table.
- Other frames (:func:`arrow_frame`): pyarrow Tables, RecordBatches and
  RecordBatchReaders, polars DataFrames and anything exposing ``__arrow_c_stream__``
  (DuckDB results) become pandas DataFrames with Arrow-backed strings and lists, without
  a round trip through Python objects.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import re

from collections.abc import Mapping

import numpy as np

from .errors import InputProblem

if TYPE_CHECKING:
    import pandas as pd

#: Accepted column names, canonical name first.
ALIASES: dict[str, tuple[str, ...]] = {
    "query_id": ("query_id", "qid", "query", "topic", "topic_id", "question_id", "question", "queryid", "q_id",
                 "query-id"),
    "doc_id": ("doc_id", "docno", "docid", "doc", "document", "document_id", "page", "page_id", "did", "pid",
               "chunk_id", "passage_id", "doc_ids", "docids", "docnos", "chunk_ids", "passage_ids", "page_ids",
               "retrieved_ids", "corpus-id", "corpus_id"),
    "relevance": ("relevance", "rel", "label", "grade", "judgment", "judgement"),
    "score": ("score", "sim", "similarity", "scores"),
    "system": ("system", "run", "run_id", "runid", "run_tag", "tag"),
    "rank": ("rank", "ranks"),
    "subtopic": ("subtopic", "subtopic_id", "intent", "intent_id"),
    "tokens": ("tokens", "n_tokens", "num_tokens", "token_count", "length_tokens"),
    # a golden set's provenance: who or what labelled the row, and how sure it was
    "judge": ("judge", "annotator", "labeled_by", "labelled_by", "source", "assessor"),
    "confidence": ("confidence", "judge_confidence", "label_confidence"),
}

#: Accepted names of a span's or chunk's first character offset (inclusive).
START_NAMES = ("start", "start_char", "char_start", "start_offset", "offset_start", "span_start", "begin",
               "start_index", "start_idx", "start_char_idx")
#: Accepted names of the offset one past its last character (exclusive).
END_NAMES = ("end", "end_char", "char_end", "end_offset", "offset_end", "span_end", "stop", "end_index",
             "end_idx", "end_char_idx")

#: The column of a golden set holding the question text (kept by :func:`evalframe.read_qrels`).
TEXT_COLUMN = "text"
#: Names of a question-text column; ``question`` and ``query`` are the text when another
#: column is the question id (alone, they are the id, as in :data:`ALIASES`).
TEXT_ALIASES = ("text", "question_text", "query_text", "question", "query")

#: Canonical names a ``columns=`` mapping may give (other modules' optional columns
#: belong here too).
COLUMN_NAMES = ("query_id", "doc_id", "relevance", "score", "rank", "system", "subtopic", "tokens", TEXT_COLUMN,
                "start", "end", "chunk_id", "parent_id", "judge", "confidence")


def _norm(c) -> str:
    return str(c).strip().lower()


def check_columns(columns, *, caller: str) -> dict[str, str]:
    """A ``columns=`` argument as a dict ``{your name: canonical name}`` (None: empty).

    Raises
    ------
    ValueError
        Not a mapping of str to one of :data:`COLUMN_NAMES`, or two names mapped to one.
    """
    if columns is None:
        return {}
    ok = isinstance(columns, Mapping) and all(isinstance(k, str) and v in COLUMN_NAMES
                                              for k, v in columns.items())
    if not ok or len(set(columns.values())) < len(columns):
        raise ValueError(f"{caller}: columns must map column names to distinct canonical names "
                         f"({', '.join(COLUMN_NAMES)}), got {columns!r}")
    return dict(columns)


def apply_columns(df: pd.DataFrame, columns: Mapping[str, str] | None) -> pd.DataFrame:
    """``df`` with the columns of ``columns`` renamed (a name ``df`` lacks is skipped, so one
    mapping serves a run and a golden set); a column already named like a target is left out."""
    if not columns:
        return df
    by_name = {str(c): c for c in df.columns}
    mapping = {by_name[k]: v for k, v in columns.items() if k in by_name and by_name[k] != v}
    if not mapping:
        return df
    displaced = [c for c in df.columns if str(c) in set(mapping.values()) and c not in mapping]
    return df.drop(columns=displaced).rename(columns=mapping)


def alias_candidates(df: pd.DataFrame, canon: str) -> list:
    """The columns of ``df`` that could be ``canon``: the canonical name when present, else
    every alias found (case and blanks ignored)."""
    if canon in df.columns:
        return [canon]
    lower = {_norm(c): c for c in df.columns}
    return [lower[a] for a in ALIASES[canon] if a in lower]


def split_question_text(df: pd.DataFrame) -> pd.DataFrame:
    """Rename the question-text column to :data:`TEXT_COLUMN` when another column is the
    question id (``question_id`` + ``question``, ``qid`` + ``query``...)."""
    if TEXT_COLUMN in df.columns:
        return df
    ids = [c for c in alias_candidates(df, "query_id") if _norm(c) not in TEXT_ALIASES]
    if len(ids) != 1:
        return df  # no id besides a text-like name (it is the id), or several: the checks list them
    lower = {_norm(c): c for c in df.columns}
    texts = [lower[a] for a in TEXT_ALIASES if a in lower and lower[a] != ids[0]]
    return df.rename(columns={texts[0]: TEXT_COLUMN}) if len(texts) == 1 else df


def qrels_table(qrels: pd.DataFrame, *, columns: Mapping[str, str] | None = None) -> pd.DataFrame:
    """A golden set's columns as the checks expect them: ``columns=``, the question text,
    and a column named ``score`` as the label when no column names one (BEIR's qrels:
    ``query-id, corpus-id, score``; a run passed by mistake fails the integer-label check)."""
    df = split_question_text(apply_columns(qrels, columns))
    if not alias_candidates(df, "relevance"):
        score = [c for c in df.columns if _norm(c) == "score"]
        if len(score) == 1:
            df = df.rename(columns={score[0]: "relevance"})
    return df


def run_table(run: pd.DataFrame, problems: list[InputProblem], *,
              columns: Mapping[str, str] | None = None, duplicates: str = "error",
              ascending: bool = False) -> pd.DataFrame:
    """A run's columns as the checks expect them: ``columns=``, the question text, list
    runs exploded, rank-only runs given ``score = -rank``; problems found are appended.
    ``duplicates="first"``: whole repeated rows of a list run (same question, same list)
    count once.  ``ascending``: the caller negates the scores (distances) next, so a
    rank-only run's score is its rank, negated with them."""
    df = split_question_text(apply_columns(run, columns))
    df = _explode(df, problems, duplicates)
    return _rank_only(df, problems, ascending)


def question_texts(qrels: pd.DataFrame) -> pd.DataFrame | None:
    """``query_id, text`` (one row per question) of a golden set read with its question
    text (:func:`evalframe.read_qrels`); None when it has none."""
    if TEXT_COLUMN not in qrels.columns:
        return None
    return qrels[["query_id", TEXT_COLUMN]].drop_duplicates("query_id").reset_index(drop=True)


# ---------------------------------------------------------------- list runs
def _is_list_column(s: pd.Series) -> bool:
    import pandas as pd
    if isinstance(s.dtype, pd.ArrowDtype):
        import pyarrow as pa
        t = s.dtype.pyarrow_dtype
        return pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t)
    if s.dtype != object or not len(s):
        return False
    if isinstance(s.iloc[0], (list, tuple, np.ndarray, str)):  # the common cases, without a scan
        return not isinstance(s.iloc[0], str)
    i = s.first_valid_index()
    return i is not None and isinstance(s.loc[i], (list, tuple, np.ndarray))


def _not_lists(s: pd.Series) -> np.ndarray | None:
    """Rows of a list column (an object column whose first value is a list) that are
    neither a list nor missing, or None when there is none (looked for only once Arrow
    has refused the column)."""
    if s.dtype != object:
        return None
    bad = ~s.map(lambda v: isinstance(v, (list, tuple, np.ndarray)), na_action="ignore").fillna(True).to_numpy(dtype=bool)
    return bad if bad.any() else None


def _list_array(s: pd.Series):
    import pandas as pd
    import pyarrow as pa
    arr = pa.array(s) if isinstance(s.dtype, pd.ArrowDtype) else pa.array(s.to_numpy(dtype=object),
                                                                          from_pandas=True)
    return arr.combine_chunks() if isinstance(arr, pa.ChunkedArray) else arr


def _lengths(arr) -> np.ndarray:
    from . import _arrow_compute as pc
    return pc.fill_null(pc.list_value_length(arr), 0).to_numpy(zero_copy_only=False).astype(np.int64)


#: a list written as text, as a CSV file stores one: "['d1', 'd2']", '["d1"]', "(1, 2)"
_LIST_TEXT = r"^\s*(\[.*\]|\(.*\))\s*$"


def _lists_as_text(s: pd.Series) -> str | None:
    """An example value when every value of a text column is a list written as text (with
    a comma or a quote: a lone id like ``[A]`` is an id), else None."""
    import pandas as pd
    if not (pd.api.types.is_string_dtype(s.dtype) or s.dtype == object) or not len(s):
        return None
    i = s.first_valid_index()
    if i is None or not isinstance(s.loc[i], str) or not re.match(_LIST_TEXT, s.loc[i]):
        return None
    t = s.dropna().astype(str)
    if not t.str.match(_LIST_TEXT).all() or not t.str.contains("[,'\"]", regex=True).any():
        return None
    return str(s.loc[i])


def _drop_repeated_rows(df: pd.DataFrame) -> pd.DataFrame:
    """A list run without its whole repeated rows (every column equal, lists compared as
    their joined text, computed by Arrow), the first kept."""
    import pandas as pd
    import pyarrow as pa
    from . import _arrow_compute as pc
    key = {}
    for c in df.columns:
        if _is_list_column(df[c]):
            a = pc.cast(_list_array(df[c]), pa.list_(pa.string()))
            key[c] = pc.binary_join(a, "\x1f").to_pandas()
        else:
            key[c] = df[c].reset_index(drop=True)
    repeated = pd.DataFrame(key).duplicated(keep="first").to_numpy()
    return df.loc[~repeated].reset_index(drop=True) if repeated.any() else df


def _explode(df: pd.DataFrame, problems: list[InputProblem], duplicates: str = "error") -> pd.DataFrame:
    """One row per (question, listed document) of a run whose document column holds lists."""
    import pandas as pd
    docs = alias_candidates(df, "doc_id")
    if len(docs) == 1 and (example := _lists_as_text(df[docs[0]])) is not None:
        problems.append(InputProblem(
            f"the {docs[0]!r} column holds lists written as text (e.g. {example[:60]!r}): a CSV file stores "
            "a list as its text",
            f"parse it first: df[{docs[0]!r}] = df[{docs[0]!r}].map(ast.literal_eval) (json.loads for JSON "
            "lists), or keep list runs in Parquet or JSONL, which store lists"))
        if not alias_candidates(df, "score") and not alias_candidates(df, "rank"):
            df = df.assign(rank=1)  # a list run ranks by position: no "missing score" beside this problem
        return df
    if len(docs) != 1 or not _is_list_column(df[docs[0]]):
        return df
    if duplicates == "first":
        df = _drop_repeated_rows(df)
    from . import _arrow_compute as pc
    import pyarrow as pa
    try:
        arr = _list_array(df[docs[0]])
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        mixed = _not_lists(df[docs[0]])
        if mixed is None:
            raise
        problems.append(InputProblem(
            f"the {docs[0]!r} column mixes lists of documents with {int(mixed.sum())} rows that are not lists "
            f"(e.g. {df.loc[mixed, docs[0]].iloc[0]!r})",
            "give every row a list (['d3'] for one document), or one document per row without lists",
            df.loc[mixed].head(5).to_string(max_colwidth=40)))
        return df
    lengths = _lengths(arr)
    parents = pc.list_parent_indices(arr).to_numpy()
    starts = np.cumsum(lengths) - lengths
    position = np.arange(len(parents), dtype=np.int64) - starts[parents] + 1
    used = {c for canon in ("score", "rank") for c in alias_candidates(df, canon)}
    out = {}
    for c in df.columns:
        s = df[c]
        if c == docs[0]:
            out[c] = _from_arrow_array(pc.list_flatten(arr))
        elif _is_list_column(s):
            other = _list_array(s)
            bad = _lengths(other) != lengths
            if not bad.any():
                out[c] = _from_arrow_array(pc.list_flatten(other))
            elif c in used:
                problems.append(InputProblem(
                    f"{int(bad.sum())} rows have a {c!r} list of another length than their {docs[0]!r} list",
                    f"give one {c} per listed document", df.loc[bad].head(5).to_string(max_colwidth=40)))
                out[c] = pd.Series(np.zeros(len(parents)))
        else:
            if c in used and not bool(s.isna().all()):
                problems.append(_one_value_per_row(df, c, docs[0]))
            out[c] = s.take(parents).reset_index(drop=True)
    if not alias_candidates(df, "rank"):
        out["rank"] = position
    if not any(_is_list_column(df[c]) for c in used):
        _check_one_list_per_question(df, lengths, problems)
    return pd.DataFrame(out)


def _check_one_list_per_question(df: pd.DataFrame, lengths: np.ndarray, problems: list[InputProblem]) -> None:
    """A list run ranked by list position gives one list per (system, question): the
    first documents of two lists would both have rank 1, a tie broken by doc_id."""
    systems, queries = alias_candidates(df, "system"), alias_candidates(df, "query_id")
    if len(systems) > 1 or len(queries) != 1:
        return  # several id columns, or none: the checks list them
    listed = df.loc[lengths > 0]
    dup = listed.duplicated([*systems, *queries], keep=False).to_numpy()
    if dup.any():
        problems.append(InputProblem(
            f"{int((~listed[dup].duplicated([*systems, *queries])).sum())} questions have more than one row "
            "with a list of documents (ranked by list position, their lists' documents would share ranks)",
            "give each question one list (join them in ranked order), or add a list of scores; a row "
            "repeated whole counts once with duplicates='first' (--duplicates first)",
            listed[dup].head(5).to_string(max_colwidth=40)))


def _one_value_per_row(df: pd.DataFrame, c, docs) -> InputProblem:
    """A score or rank column with one value per row beside a list of documents: every
    listed document would get that value, a tie that loses the list's order."""
    return InputProblem(
        f"{c!r} holds one value per row beside the {docs!r} list (each listed document would get it, "
        "and the list's order would be lost)",
        f"give {c!r} as lists, one value per listed document; or drop or rename it (the list's order "
        "then ranks the documents)", df.head(5).to_string(max_colwidth=40))


def _from_arrow_array(arr) -> pd.Series:
    import pyarrow as pa
    return pa.table({"v": arr}).to_pandas(types_mapper=_types_mapper)["v"]


# ---------------------------------------------------------------- rank-only runs
def _rank_only(df: pd.DataFrame, problems: list[InputProblem], ascending: bool = False) -> pd.DataFrame:
    import pandas as pd
    ranks = alias_candidates(df, "rank")
    if len(ranks) != 1:
        return df
    scores = alias_candidates(df, "score")
    if scores and (len(scores) > 1 or not len(df) or pd.notna(df[scores[0]].iloc[0])
                   or not bool(df[scores[0]].isna().all())):
        return df  # a run with scores (the first row's settles most without a scan)
    r = df[ranks[0]]
    r = pd.to_numeric(r, errors="coerce") if not pd.api.types.is_numeric_dtype(r.dtype) else r
    r = r.to_numpy(dtype=np.float64, na_value=np.nan)
    bad = ~np.isfinite(r)
    if bad.any():
        problems.append(InputProblem(
            f"{int(bad.sum())} rows have a missing or non-numeric rank (the run has no scores, so it is "
            "ordered by rank)", "give every row a numeric rank, or add a score column",
            df.loc[bad].head(5).to_string(max_colwidth=40)))
    return df.drop(columns=scores).assign(score=np.where(bad, 0.0, r if ascending else -r))


# ---------------------------------------------------------------- other frames
def pandas_strings_are_large() -> bool:
    """Whether pandas' ``str`` columns hold Arrow large strings (pandas >= 3); imports pandas."""
    import pandas as pd
    return int(pd.__version__.split(".")[0]) >= 3


def _types_mapper(t):
    """Arrow strings as pandas' Arrow-backed strings, lists as Arrow lists; others: numpy."""
    import pyarrow as pa

    import pandas as pd
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return pd.StringDtype("pyarrow", na_value=np.nan) if pandas_strings_are_large() else pd.ArrowDtype(t)
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        return pd.ArrowDtype(t)
    return None


def _plain_type(t):
    """``t`` with view types (polars' ``string_view``, list views) as their large forms."""
    import pyarrow as pa
    if pa.types.is_string_view(t):
        return pa.large_string()
    if pa.types.is_binary_view(t):
        return pa.large_binary()
    if pa.types.is_list_view(t) or pa.types.is_large_list_view(t):
        return pa.large_list(_plain_type(t.value_type))
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        value = _plain_type(t.value_type)
        return t if value == t.value_type else pa.large_list(value)
    if pa.types.is_dictionary(t):
        return pa.dictionary(t.index_type, _plain_type(t.value_type), t.ordered)
    return t


def arrow_frame(obj) -> pd.DataFrame | None:
    """A pyarrow Table / RecordBatch / RecordBatchReader, a polars DataFrame or any object
    exposing ``__arrow_c_stream__`` (DuckDB results) as a pandas DataFrame (Arrow-backed
    strings and lists); None for anything else (a pandas DataFrame included)."""
    import pandas as pd
    if isinstance(obj, pd.DataFrame):
        return None
    module = type(obj).__module__.split(".")[0]
    if not (hasattr(obj, "__arrow_c_stream__") or module in ("pyarrow", "polars")):
        return None
    import pyarrow as pa
    if isinstance(obj, pa.Table):
        table = obj
    elif isinstance(obj, pa.RecordBatch):
        table = pa.Table.from_batches([obj])
    elif isinstance(obj, pa.RecordBatchReader):
        table = obj.read_all()
    elif hasattr(obj, "__arrow_c_stream__"):
        table = pa.RecordBatchReader.from_stream(obj).read_all()
    elif hasattr(obj, "to_arrow"):  # an older polars frame
        table = obj.to_arrow()
    else:
        return None
    schema = pa.schema([f.with_type(_plain_type(f.type)) for f in table.schema])
    if not schema.equals(table.schema):
        table = table.cast(schema)
    return arrow_table_frame(table)


def arrow_table_frame(table) -> pd.DataFrame:
    """A pyarrow Table as a pandas DataFrame: strings as pandas' Arrow-backed ``str``
    columns (their own buffers), lists as Arrow lists, numbers as numpy."""
    return table.to_pandas(types_mapper=_types_mapper)
