"""A judge you plug in: your function labels (question, document) pairs in batches.

``judge(pairs, fn, batch_size=..., cache=PATH, judge_name=...)`` calls ``fn`` on batches
of the pairs to judge (an :func:`evalframe.pool`, or any table of ``query_id, doc_id``),
with a progress bar, an on-disk cache and retries, and returns golden-set rows
``query_id, doc_id, relevance, judge`` that :func:`evalframe.evaluate` reads as they are
(the ``judge`` column is the golden set's provenance, :data:`evalframe.schema.PROVENANCE`).

Conventions
-----------
- ``fn(batch)`` gets a DataFrame of at most ``batch_size`` rows, ``query_id, doc_id``
  and, when given, ``query_text`` (the question) and ``doc_text`` (the document), and
  returns one integer label per row, in the batch's order (a list, an array or a Series;
  booleans read as 1 and 0).
  Nothing ships with evalframe and nothing is downloaded: ``fn`` is yours (a language
  model behind an API, a cross-encoder, a rule).
- The cache is a JSON-lines file, one line per judged pair, ``{"judge", "query_id",
  "doc_id", "relevance"}``, appended and flushed after every batch: a run that crashes
  or is stopped resumes where it was, asking only the pairs the file does not hold for
  this ``judge_name`` (another judge's lines are kept and ignored).  A last line cut
  short by a crash is ignored.
- A batch whose call raises an ``Exception``, or whose answer is not one integer per
  row, is asked again up to ``retries`` times; then the error propagates (the batches
  done are in the cache).
- A pair listed twice is judged once.
"""
from __future__ import annotations

__all__ = ["judge"]

import numbers
import os
import sys
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import pandas as pd

from ._validation import BOOLEAN_OR_NONE, POSITIVE_INT, Interval, IsCallable, Satisfies, error, type_of, validate
from .errors import EvalframeInputError, InputProblem
from .inputs import alias_candidates
from .pooling import Pool
from .schema import ids_to_str


def judge(pairs, fn: Callable[[pd.DataFrame], Any], *, batch_size: int = 32, cache: "str | os.PathLike | None" = None,
          judge_name: str = "model", retries: int = 2, queries=None, documents=None,
          progress: bool | None = None) -> pd.DataFrame:
    """Label (question, document) pairs with your function, in batches, with a cache.

    Parameters
    ----------
    pairs : Pool or DataFrame
        The pairs to judge: an :func:`evalframe.pool` (its ``documents``), or a table
        with ``query_id`` and ``doc_id`` (or their aliases), optionally ``query_text``
        and ``doc_text`` columns.
    fn : callable
        ``fn(batch) -> labels``: one integer label per row of the batch (see the module
        docstring).
    batch_size : int
        Rows per call (>= 1).
    cache : path, optional
        A JSON-lines file: read first (pairs it holds for ``judge_name`` are not asked
        again), appended after every batch.
    judge_name : str
        Written in the ``judge`` column and in the cache's keys (a model and prompt
        version, e.g. ``"gpt-x:prompt-v3"``; a name starting with ``"human"`` would
        read as a person's labels).
    retries : int
        Extra calls of a batch that failed (>= 0).
    queries, documents : DataFrame or dict, optional
        The question texts (``query_id, text`` or ``{query_id: text}``) and document
        texts (``doc_id, text`` or ``{doc_id: text}``), joined into the batches as
        ``query_text`` and ``doc_text``.
    progress : bool, optional
        A progress bar over the pairs (tqdm, on standard error): default on when
        standard error is a terminal.

    Returns
    -------
    DataFrame
        ``query_id`` (str), ``doc_id`` (str), ``relevance`` (int64), ``judge`` (str):
        one row per distinct pair of ``pairs``, in their order.

    Raises
    ------
    EvalframeInputError
        ``pairs`` without question or document ids, a text table without ids.
    Exception
        ``fn``'s own error (or a ``ValueError`` for an answer that is not one integer
        per row) once a batch failed ``retries + 1`` times.

    Examples
    --------
    >>> import evalframe as ef
    >>> cran = ef.datasets.load_cranfield()
    >>> p = ef.pool(cran.runs, depth=2, qrels=cran.qrels)
    >>> labels = ef.judge(p, lambda b: [1] * len(b), judge_name="always-yes", progress=False)
    >>> list(labels.columns), labels["judge"].iloc[0], len(labels) == len(p.documents)
    (['query_id', 'doc_id', 'relevance', 'judge'], 'always-yes', True)
    """
    _check(fn, batch_size, judge_name, retries, progress)
    todo = _pairs_to_judge(pairs)
    todo = _with_text(todo, queries, "query_id", "query_text", "queries")
    todo = _with_text(todo, documents, "doc_id", "doc_text", "documents")
    if cache is not None:
        _check_cache_path(cache)  # before fn is asked anything: its answers must have somewhere to go
    known = _read_cache(cache, judge_name) if cache is not None else _EMPTY.copy()
    key_todo = pd.MultiIndex.from_frame(todo[["query_id", "doc_id"]])
    key_known = pd.MultiIndex.from_frame(known[["query_id", "doc_id"]])
    ask = todo.loc[~key_todo.isin(key_known)].reset_index(drop=True)
    labels = [known]
    with _progress_bar(progress, len(todo)) as bar:
        bar.update(len(todo) - len(ask))
        for lo in range(0, len(ask), batch_size):
            batch = ask.iloc[lo:lo + batch_size].reset_index(drop=True)
            got = batch[["query_id", "doc_id"]].assign(relevance=_ask(fn, batch, retries, judge_name, cache is not None))
            if cache is not None:
                _append(cache, got, judge_name)
            labels.append(got)
            bar.update(len(batch))
    table = pd.concat(labels, ignore_index=True).drop_duplicates(["query_id", "doc_id"], keep="last")
    at = pd.MultiIndex.from_frame(table[["query_id", "doc_id"]]).get_indexer(key_todo)
    out = todo[["query_id", "doc_id"]].copy()
    out["relevance"] = table["relevance"].to_numpy(dtype=np.int64)[at]
    out["judge"] = judge_name
    return out.reset_index(drop=True)


_EMPTY = pd.DataFrame({"query_id": pd.Series(dtype=object), "doc_id": pd.Series(dtype=object),
                       "relevance": pd.Series(dtype=np.int64)})


def _check(fn, batch_size, judge_name, retries, progress) -> None:
    validate("judge", fn=(fn, IsCallable("callable (fn(batch) -> labels)")),
             batch_size=(batch_size, POSITIVE_INT), retries=(retries, Interval(int, 0, None)),
             judge_name=(judge_name, Satisfies(lambda v: isinstance(v, str) and v.strip(), "a non-empty str")),
             progress=(progress, BOOLEAN_OR_NONE))


def _pairs_to_judge(pairs) -> pd.DataFrame:
    """The distinct pairs to judge, ids as strings, texts kept."""
    if isinstance(pairs, Pool):
        pairs = pairs.documents
    if not isinstance(pairs, pd.DataFrame):
        raise error("judge", "pairs", "a Pool (ef.pool) or a DataFrame of query_id, doc_id", type_of(pairs))
    ids, problems = {}, []
    for canon in ("query_id", "doc_id"):
        found = alias_candidates(pairs, canon)
        if len(found) != 1:
            problems.append(InputProblem(
                f"{'no' if not found else 'several'} {canon} column{'s' if found else ''} "
                f"(found columns {[str(c) for c in pairs.columns]})", f"name one column {canon!r}"))
            continue
        col = pairs[found[0]].reset_index(drop=True)
        if col.isna().any():
            problems.append(InputProblem(f"{int(col.isna().sum())} rows have no {canon}", "drop them"))
        ids[canon] = ids_to_str(col.astype(object).where(col.notna(), "")).to_numpy(dtype=object)
    if problems:
        raise EvalframeInputError("pairs to judge", problems)
    out = pd.DataFrame(ids)
    for col in ("query_text", "doc_text"):
        if col in pairs.columns:
            out[col] = pairs[col].to_numpy(dtype=object)
    return out.drop_duplicates(["query_id", "doc_id"]).reset_index(drop=True)


def _with_text(todo: pd.DataFrame, texts, key: str, col: str, what: str) -> pd.DataFrame:
    """``todo`` with ``col`` from ``texts`` (a ``key, text`` table or a dict), by ``key``."""
    if texts is None:
        return todo
    if isinstance(texts, Mapping):
        by_id = pd.Series({str(k): v for k, v in texts.items()}, dtype=object)
    elif isinstance(texts, pd.DataFrame):
        name = key if key in texts.columns else next((c for c in texts.columns if c in ("id", "_id")), None)
        text = next((c for c in ("text", col, "body", "contents") if c in texts.columns), None)
        if name is None or text is None:
            raise EvalframeInputError(what, [InputProblem(
                f"expected columns {key!r} (or 'id') and 'text', found {list(texts.columns)}",
                f"pass a table of {key} and text, or a dict {{{key}: text}}")])
        by_id = pd.Series(texts[text].to_numpy(dtype=object), index=texts[name].astype(str).to_numpy(dtype=object))
        by_id = by_id[~by_id.index.duplicated()]
    else:
        raise error("judge", what, "a DataFrame or a dict", type_of(texts))
    return todo.assign(**{col: by_id.reindex(todo[key].to_numpy(dtype=object)).to_numpy(dtype=object)})


def _ask(fn, batch: pd.DataFrame, retries: int, judge_name: str, cached: bool) -> np.ndarray:
    """``fn``'s labels of one batch (retried ``retries`` times), checked."""
    for attempt in range(retries + 1):
        try:
            return _labels(fn(batch.copy()), len(batch))
        except Exception as exc:  # the user's function: any failure is retried
            if attempt == retries:
                exc.add_note(f"evalframe.judge ({judge_name}): the batch of {len(batch)} pairs starting at "
                             f"{batch['query_id'].iloc[0]}:{batch['doc_id'].iloc[0]} failed {retries + 1} times; "
                             + ("the batches before it are in the cache (call again to resume)"
                                if cached else "pass cache= to keep the answers of the batches before it"))
                raise
    raise AssertionError("not reached")


def _labels(answer, n: int) -> np.ndarray:
    """One integer label per row, or a ValueError saying what came back."""
    values = np.asarray(answer.to_numpy() if isinstance(answer, pd.Series) else answer)
    if values.ndim != 1 or len(values) != n:
        raise ValueError(f"judge: fn must return one integer label per row of its batch ({n}), "
                         f"got {values.shape if values.ndim else type(answer).__name__}")
    if values.dtype.kind not in "biuf" and not all(isinstance(v, numbers.Integral) for v in values.tolist()):
        raise ValueError(f"judge: fn must return integer labels, got {values.dtype} values such as {values[:3]!r}")
    out = values.astype(np.float64)
    if not np.all(np.isfinite(out)) or not np.all(out == np.round(out)):
        raise ValueError(f"judge: fn must return integer labels, got {values[:3]!r}")
    return out.astype(np.int64)


def _check_cache_path(path) -> None:
    """One clear error when the cache cannot be written: its folder missing, or a folder given."""
    p = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(p))
    if os.path.isdir(p) or not os.path.isdir(folder):
        raise EvalframeInputError("judge cache", [InputProblem(
            f"{p} " + ("is a folder" if os.path.isdir(p) else f"cannot be written: its folder {folder} does not exist"),
            "pass cache= a file path in an existing folder (it is created on the first batch)")])


def _read_cache(path, judge_name: str) -> pd.DataFrame:
    """The pairs the cache file holds for ``judge_name`` (the last line of a pair wins; a
    last line cut short by a crash is ignored)."""
    if not os.path.exists(path):
        return _EMPTY.copy()
    with open(path, "rb") as fh:
        raw = fh.read()
    if raw and not raw.endswith(b"\n"):
        raw = raw[: raw.rfind(b"\n") + 1]  # a line cut short
    if not raw.strip():
        return _EMPTY.copy()
    import pyarrow as pa
    import pyarrow.json as pj
    schema = pa.schema([("judge", pa.string()), ("query_id", pa.string()), ("doc_id", pa.string()),
                        ("relevance", pa.int64())])
    try:
        table = pj.read_json(pa.BufferReader(raw), parse_options=pj.ParseOptions(explicit_schema=schema))
    except pa.ArrowInvalid as exc:
        raise EvalframeInputError("judge cache", [InputProblem(
            f"{os.fspath(path)} is not a judge cache (JSON lines of judge, query_id, doc_id, relevance): {exc}",
            "pass another cache= path, or remove the file")]) from None
    t = table.to_pandas()
    t = t[t["judge"] == judge_name]
    return t[["query_id", "doc_id", "relevance"]].drop_duplicates(["query_id", "doc_id"], keep="last")


def _append(path, got: pd.DataFrame, judge_name: str) -> None:
    """Append a batch's labels to the cache and flush them to disk."""
    lines = pd.DataFrame({"judge": judge_name, "query_id": got["query_id"].to_numpy(dtype=object),
                          "doc_id": got["doc_id"].to_numpy(dtype=object),
                          "relevance": got["relevance"].to_numpy(dtype=np.int64)}).to_json(
        orient="records", lines=True, force_ascii=False)
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(lines if lines.endswith("\n") else lines + "\n")
        fh.flush()
        os.fsync(fh.fileno())


def _progress_bar(enabled: bool | None, total: int):
    from tqdm.auto import tqdm
    if enabled is None:
        enabled = sys.stderr.isatty()
    return tqdm(total=total, desc="judging", unit="pair", disable=not enabled, file=sys.stderr, leave=False)
