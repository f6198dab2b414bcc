"""Roll chunks up to pages: a chunk-level run or golden set evaluated at page level.

A RAG retriever returns chunks (passages of a page); a golden set is often written
for pages.  ``rollup`` maps each chunk id to its page id, and :func:`rollup_run` /
:func:`rollup_qrels` turn the checked tables into page-level ones before
:func:`evalframe.ranking.judge`, as table operations (no loop per question):

- the run: every chunk becomes its page; each (system, question) ranking is ordered
  by the ``ties`` convention, and each page keeps its best chunk's position (later
  chunks of the same page are removed before any cutoff).  The page rows are given
  ``score = -(position of the best chunk)`` (and ``rank`` = their new position), so
  ranking them again keeps that order whatever the convention.  A ``tokens``
  column becomes the tokens read from the previous page's best chunk through this
  page's best chunk, so a page's cumulative tokens are those of the chunk list
  through its best chunk (a token budget keeps the pages one of whose chunks fits);
- the golden set: every labelled chunk becomes its page, and a page is as relevant
  as its most relevant chunk (the maximum label).

Ids absent from the map are kept as they are (they are pages already).  The
number of rows collapsed is a diagnostics record
(:attr:`~evalframe._diagnostic_records.Check.ROLLUP_RUN_ROWS_COLLAPSED`,
:attr:`~evalframe._diagnostic_records.Check.ROLLUP_GOLDEN_ROWS_MERGED`).
"""
from __future__ import annotations

from typing import Mapping, Union

import numpy as np
import pandas as pd
import pyarrow as pa

from . import _arrow_compute as pc
from ._validation import error, type_of
from .errors import EvalframeInputError, InputProblem
from ._diagnostic_records import Check, Diagnostic, MAX_EXAMPLES
from ._judged import Ties
from ._conflicts import PROVENANCE
from ._id_codes import CheckedQrels, CheckedRun, Codes
from ._id_order import natural_order_rule
from .schema import ALIASES, ids_to_str

#: What a rolled-up table's documents are (the ``unit`` column of evaluate()'s output).
UNIT = "page"

#: A chunk -> page map: a two-column table (chunk, page), a dict, or the name of a run column.
Rollup = Union[pd.DataFrame, Mapping, str]

_CHUNK_NAMES = ("chunk_id", "chunk", "passage_id", "passage", "doc_id", "docid", "docno")
_PAGE_NAMES = ("page_id", "page", "parent_id", "parent", "document_id", "doc_id")


def rollup_map(rollup: Rollup | pd.Series) -> pd.Series:
    """The chunk -> page map as a Series of str page ids indexed by str chunk ids.

    Parameters
    ----------
    rollup : DataFrame, dict or Series
        A table of two columns (chunk, page: named ``chunk_id``/``passage_id``... and
        ``page_id``/``page``..., or any two columns in that order), a dict
        ``{chunk_id: page_id}``, or a Series (index: chunk ids).

    Raises
    ------
    TypeError
        ``rollup`` is none of these.
    EvalframeInputError
        Not two columns, a missing id, or a chunk mapped to two pages.
    """
    if isinstance(rollup, pd.Series):
        frame = pd.DataFrame({"chunk": rollup.index.to_numpy(), "page": rollup.to_numpy()})
    elif isinstance(rollup, Mapping):
        frame = pd.DataFrame({"chunk": list(rollup.keys()), "page": list(rollup.values())})
    elif isinstance(rollup, pd.DataFrame):
        frame = _two_columns(rollup)
    else:
        raise error(None, "rollup", "a chunk -> page table (two columns), a dict, or the name of a "
                    "run column holding the page id", type_of(rollup))
    problems = []
    missing = frame["chunk"].isna() | frame["page"].isna()
    if missing.any():
        problems.append(InputProblem(f"{int(missing.sum())} rows have a missing chunk or page id",
                                     "give every chunk its page id (or drop the rows)",
                                     frame.loc[missing].head(MAX_EXAMPLES).to_string()))
    frame = frame.loc[~missing]
    chunk = ids_to_str(frame["chunk"].reset_index(drop=True))
    page = ids_to_str(frame["page"].reset_index(drop=True))
    pairs = pd.DataFrame({"chunk": chunk, "page": page}).drop_duplicates()
    twice = pairs["chunk"].duplicated(keep=False)
    if twice.any():
        problems.append(InputProblem(
            f"{int(pairs.loc[twice, 'chunk'].nunique())} chunks are mapped to more than one page",
            "map every chunk to exactly one page",
            pairs.loc[twice].sort_values(["chunk", "page"]).head(MAX_EXAMPLES).to_string(index=False)))
    if problems:
        raise EvalframeInputError("rollup (chunk -> page map)", problems)
    return pd.Series(pairs["page"].to_numpy(dtype=object), index=pd.Index(pairs["chunk"].to_numpy(dtype=object)),
                     name="page_id")


def _two_columns(table: pd.DataFrame) -> pd.DataFrame:
    lower = {str(c).strip().lower(): c for c in table.columns}
    chunk = next((lower[n] for n in _CHUNK_NAMES if n in lower), None)
    page = next((lower[n] for n in _PAGE_NAMES if n in lower and lower[n] != chunk), None)
    if chunk is None or page is None:
        if table.shape[1] != 2:
            raise EvalframeInputError("rollup (chunk -> page map)", [InputProblem(
                f"cannot tell the chunk and page columns apart (found columns {[str(c) for c in table.columns]})",
                "pass two columns, chunk id then page id, or name them chunk_id and page_id")])
        chunk, page = table.columns[0], table.columns[1]
    return pd.DataFrame({"chunk": table[chunk].to_numpy(), "page": table[page].to_numpy()})


def rollup_column(run: pd.DataFrame, column: str) -> tuple[pd.DataFrame, pd.Series]:
    """Split a run whose column ``column`` holds each row's page id into the run
    without that column and the chunk -> page map it defines.

    The chunk id is the run's doc-id column (``doc_id``, ``chunk_id``,
    ``passage_id`` or another alias of ``doc_id`` other than ``column``).

    Raises
    ------
    EvalframeInputError
        No such column, no chunk-id column, or a chunk given two pages.
    """
    if column not in run.columns:
        raise EvalframeInputError("run", [InputProblem(
            f"rollup={column!r} names no column of the run (found {[str(c) for c in run.columns]})",
            "name the run column holding each chunk's page id, or pass a chunk -> page table or dict")])
    lower = {str(c).strip().lower(): c for c in run.columns if c != column}
    names = ("chunk_id", "passage_id") + ALIASES["doc_id"]
    chunk = next((lower[n] for n in names if n in lower), None)
    if chunk is None:
        raise EvalframeInputError("run", [InputProblem(
            f"no chunk-id column beside the page column {column!r} (found {[str(c) for c in run.columns]})",
            "name the chunk id column doc_id or chunk_id")])
    mapping = rollup_map(pd.DataFrame({"chunk": run[chunk].to_numpy(), "page": run[column].to_numpy()}))
    rest = run.drop(columns=[column])
    if chunk != "doc_id" and str(chunk).lower() not in ALIASES["doc_id"]:
        rest = rest.rename(columns={chunk: "doc_id"})
    return rest, mapping


def _arrow_map(mapping: pd.Series) -> tuple[pa.Array, np.ndarray, pa.Array]:
    """The map as Arrow: chunk ids, each chunk's page code, the page names."""
    chunks = pa.array(mapping.index.to_numpy(dtype=object), type=pa.large_string())
    enc = pc.dictionary_encode(pa.array(mapping.to_numpy(dtype=object), type=pa.large_string()))
    return chunks, enc.indices.to_numpy().astype(np.int64), enc.dictionary


def _pages(ids: pa.ChunkedArray | pa.Array, mapping: pd.Series) -> tuple[np.ndarray, pa.Array, np.ndarray]:
    """Each id's page as a code (an id the map does not name is a page already: the map's
    page of that name, or its own page, coded after the map's pages), the page ids as
    Arrow strings, and whether it was mapped."""
    values = pa.chunked_array([ids]) if isinstance(ids, pa.Array) else ids
    values = values.cast(pa.large_string())
    chunks, page_code, page_names = _arrow_map(mapping)
    at = pc.index_in(values, value_set=chunks)
    mapped = at.is_valid().to_numpy(zero_copy_only=False)
    code = np.empty(len(values), dtype=np.int64)
    where = at.to_numpy(zero_copy_only=False)
    code[mapped] = page_code[where[mapped].astype(np.int64)]
    if mapped.all():
        return code, page_names.cast(pa.large_string()).take(pa.array(code)), mapped
    rest = np.flatnonzero(~mapped)
    rest_ids = values.take(pa.array(rest)).combine_chunks()
    page = pc.index_in(rest_ids, value_set=page_names.cast(pa.large_string()))
    named = page.is_valid().to_numpy(zero_copy_only=False)  # the name of a page of the map
    code[rest[named]] = page.to_numpy(zero_copy_only=False)[named].astype(np.int64)
    rest = rest[~named]
    if not len(rest):
        return code, page_names.cast(pa.large_string()).take(pa.array(code)), mapped
    own = pc.dictionary_encode(values.take(pa.array(rest)).combine_chunks())
    code[rest] = len(page_names) + own.indices.to_numpy().astype(np.int64)
    names = pa.concat_arrays([page_names.cast(pa.large_string()), own.dictionary.cast(pa.large_string())])
    return code, names.take(pa.array(code)), mapped


def _order(run: CheckedRun, ties: Ties) -> np.ndarray:
    """Row order by (system, question, the ``ties`` convention), as judge() ranks; the
    doc ids are compared only inside blocks of tied rows."""
    frame = run.frame
    s = run.system.codes if run.system is not None else np.zeros(len(frame), np.int32)
    primary = frame["rank"].to_numpy(np.float64) if ties == "rank" else -frame["score"].to_numpy(np.float64)
    q = run.query.codes
    order = np.lexsort((primary, q, s))
    ps, qs, ss = primary[order], q[order], s[order]
    tied = (ps[1:] == ps[:-1]) & (qs[1:] == qs[:-1]) & (ss[1:] == ss[:-1])
    if not tied.any():
        return order
    rows = np.zeros(len(order), dtype=bool)
    rows[1:] |= tied
    rows[:-1] |= tied
    idx = np.flatnonzero(rows)
    block = np.cumsum(np.r_[True, ~tied[idx[1:] - 1] | (np.diff(idx) > 1)])
    doc_rank = pc.rank(run.doc.take(pa.array(order[idx])), sort_keys="ascending",
                       tiebreaker="dense").to_numpy().astype(np.int64)
    key = doc_rank if ties == "doc_id_asc" else -doc_rank
    order[idx] = order[idx][np.lexsort((key, block))]
    return order


def rollup_run(run: CheckedRun, mapping: pd.Series, *, ties: Ties = "doc_id_desc"
               ) -> tuple[CheckedRun, list[Diagnostic]]:
    """The run at page level (see the module docstring) and its diagnostics records.

    Returns
    -------
    (CheckedRun, list of Diagnostic)
        ``[system,] query_id, doc_id, score, rank[, tokens]`` with one row per
        (system, question, page), rows in ranking order; one
        ``rollup_run_rows_collapsed`` record per system that lost rows (count:
        rows removed; examples: questions).
    """
    order = _order(run, ties)
    code, pages, _ = _pages(run.doc.take(pa.array(order)), mapping)
    s = (run.system.codes if run.system is not None else np.zeros(len(order), np.int32))[order].astype(np.int64)
    q = run.query.codes[order].astype(np.int64)
    group = s * max(len(run.query), 1) + q
    n = len(group)
    starts = np.flatnonzero(np.r_[True, group[1:] != group[:-1]]) if n else np.zeros(0, np.int64)
    sizes = np.diff(np.r_[starts, n])
    position = np.arange(n) - np.repeat(starts, sizes) + 1
    first = np.zeros(n, dtype=bool)
    first[np.unique(group * (int(code.max(initial=0)) + 1) + code, return_index=True)[1]] = True
    kept = np.flatnonzero(first)
    src = order[kept]  # rows of the checked run
    kept_group = group[kept]
    head = np.flatnonzero(np.r_[True, kept_group[1:] != kept_group[:-1]]) if len(kept) else np.zeros(0, np.int64)
    new_rank = np.arange(len(kept)) - np.repeat(head, np.diff(np.r_[head, len(kept)])) + 1
    frame = run.frame
    out = {c: frame[c].iloc[src].reset_index(drop=True) for c in ("system", "query_id") if c in frame}
    doc = pages.take(pa.array(kept))
    out["doc_id"] = pd.Series(pd.arrays.ArrowStringArray(doc))
    out["score"] = -position[kept].astype(np.float64)
    out["rank"] = new_rank.astype(np.int64)
    if "tokens" in frame:
        tok = frame["tokens"].to_numpy()[order]
        cum = np.cumsum(tok)
        before = np.where(starts > 0, cum[np.maximum(starts - 1, 0)], 0)
        through = (cum - np.repeat(before, sizes))[kept]  # tokens read through each kept row
        prev = np.r_[0, through[:-1]]
        prev[head] = 0
        out["tokens"] = through - prev
    rolled = CheckedRun(pd.DataFrame(out),
                        None if run.system is None else Codes(run.system.codes[src], run.system.dictionary),
                        Codes(run.query.codes[src], run.query.dictionary), pa.chunked_array([doc]))
    return rolled, _collapsed(run, order, first)


def _collapsed(run: CheckedRun, order: np.ndarray, first: np.ndarray) -> list[Diagnostic]:
    gone = np.flatnonzero(~first)
    if not len(gone):
        return []
    s = (run.system.codes if run.system is not None else np.zeros(len(order), np.int32))[order][gone]
    q = run.query.codes[order][gone]
    names = run.system.names if run.system is not None else np.array([None], dtype=object)
    out = []
    for code in np.unique(s):
        qs = np.unique(q[s == code])
        out.append(Diagnostic(names[code], Check.ROLLUP_RUN_ROWS_COLLAPSED, int((s == code).sum()),
                              "removed: each page ranks at its best chunk", *_examples(run.query.names[qs])))
    return out  # one record per system (a handful), not per question


def _examples(ids: np.ndarray) -> tuple[tuple[str, ...], bool, tuple[str, ...]]:
    """The first questions of ``ids`` in natural order (numerically when every one is an
    integer, else byte-wise), whether that was numeric, and then the first byte-wise: what
    a merge of partitions needs to list the whole run's first (``Diagnostic.bytewise``)."""
    ordered, numeric = natural_order_rule(np.asarray(ids, dtype=object))
    bytewise = tuple(str(x) for x in np.sort(ordered.astype(str))[:MAX_EXAMPLES]) if numeric else ()
    return tuple(str(x) for x in ordered[:MAX_EXAMPLES]), numeric, bytewise


def rollup_qrels(qrels: CheckedQrels, mapping: pd.Series) -> tuple[CheckedQrels, list[Diagnostic]]:
    """The golden set at page level: a page is as relevant as its most relevant chunk.

    Returns
    -------
    (CheckedQrels, list of Diagnostic)
        ``query_id, doc_id, relevance`` (and the provenance columns, ``judge`` and
        ``confidence``, of the chunk whose label the page takes) with one row per (question, page); a
        ``rollup_golden_rows_merged`` record when rows were merged (count: rows
        removed; examples: questions).
    """
    code, pages, mapped = _pages(qrels.doc, mapping)
    if not mapped.any():
        return qrels, []
    frame = qrels.frame
    q = qrels.query.codes.astype(np.int64)
    key = q * (int(code.max(initial=0)) + 1) + code
    label = frame["relevance"].to_numpy(np.int64)
    order = np.lexsort((-label, key))  # the most relevant row of each (question, page) first
    first_of_key = np.r_[True, key[order][1:] != key[order][:-1]] if len(key) else np.zeros(0, bool)
    kept = np.sort(order[first_of_key])  # the golden set's row order
    n_gone = len(key) - len(kept)
    records = []
    if n_gone:  # else every row is its page's only one: the ids still become pages
        inverse = np.unique(key, return_inverse=True)[1]
        merged = np.bincount(inverse)[inverse] > 1  # rows of a (question, page) with several chunks
        qs = np.unique(q[merged])
        records = [Diagnostic(None, Check.ROLLUP_GOLDEN_ROWS_MERGED, int(n_gone),
                              "merged: a page takes its most relevant chunk's label",
                              *_examples(qrels.query.names[qs]))]
    doc = pages.take(pa.array(kept))
    out = pd.DataFrame({"query_id": frame["query_id"].iloc[kept].reset_index(drop=True),
                        "doc_id": pd.Series(pd.arrays.ArrowStringArray(doc)),
                        "relevance": label[kept]})
    for col in [c for c in PROVENANCE if c in frame.columns]:  # the kept chunk's judge and confidence
        out[col] = frame[col].iloc[kept].to_numpy()
    return CheckedQrels(out, Codes(qrels.query.codes[kept], qrels.query.dictionary), pa.chunked_array([doc])), records
