"""Fingerprints: what an evaluation was computed from, as short hashes.

A report records the SHA-256 (first 16 hex digits) of its golden set (question ids,
document ids and labels, in a canonical order: the file's row order does not matter), of
each run (per system: question, document and score; a run given as a file path is hashed
by its bytes), of the chunk table when spans are used, of the conventions and of the
measures, and the evalframe version. Two reports with the same golden-set fingerprint
were computed on the same judgments; a different one says the golden set changed.

Tables are hashed column by column on Arrow buffers (no Python object per row).
"""
from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd

#: hex digits kept of each SHA-256
DIGITS = 16


def digest_table(df: pd.DataFrame, columns: Sequence[str]) -> str:
    """The hash of ``df[columns]``, whatever the row order and the columns' dtypes (every
    value is hashed as its text: ids ``1`` and ``"1"`` are the same id, as everywhere after
    loading)."""
    import pyarrow as pa
    from . import _arrow_compute as pc

    arrays = []
    for c in columns:
        col = df[c]
        if pd.api.types.is_numeric_dtype(col.dtype) and not isinstance(col.dtype, pd.CategoricalDtype):
            arr = pa.array(col.to_numpy())
        else:
            arr = pa.array(col.astype(str).to_numpy(dtype=object))
        arrays.append(pc.cast(arr, pa.large_string()))
    table = pa.table(dict(zip(columns, arrays)))
    if len(table):
        table = table.take(pc.sort_indices(table, sort_keys=[(c, "ascending") for c in columns]))
    h = hashlib.sha256()
    h.update(json.dumps(list(columns)).encode())
    for c in columns:
        chunk = table.column(c).combine_chunks()
        _validity, offsets, data = chunk.buffers()
        h.update(memoryview(offsets) if offsets is not None else b"")
        h.update(memoryview(data) if data is not None else b"")
    return h.hexdigest()[:DIGITS]


def digest_json(obj: object) -> str:
    """The hash of a JSON-able object (keys sorted)."""
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=str).encode()).hexdigest()[:DIGITS]


def digest_path(path: str | Path) -> str | None:
    """The hash of a file's bytes (of every file's, in name order, for a directory); None
    when it cannot be read."""
    p = Path(path)
    files = sorted(x for x in p.rglob("*") if x.is_file()) if p.is_dir() else [p]
    h = hashlib.sha256()
    try:
        for f in files:
            h.update(str(f.relative_to(p) if p.is_dir() else "").encode())
            with open(f, "rb") as fh:
                for block in iter(lambda: fh.read(1 << 20), b""):
                    h.update(block)
    except OSError:
        return None
    return h.hexdigest()[:DIGITS]


def run_digests(run: pd.DataFrame) -> dict[str, str]:
    """One hash per system of a canonical run table (``query_id, doc_id, score`` [+ ``system``])."""
    cols = [c for c in ("query_id", "doc_id", "score") if c in run.columns]
    if "system" not in run.columns:
        return {"system": digest_table(run, cols)}
    return {str(name): digest_table(part, cols) for name, part in run.groupby("system", sort=True, observed=True)}


def source_digests(run, read_run, **kwargs) -> dict[str, str | None]:
    """Hashes of a report's run argument: a path (or paths) by the files' bytes, keyed by
    path; a table, dict or list of them by each system's canonical rows (``read_run``
    reads it, with ``kwargs``); {} when it is neither (a dataset object) or ``read_run``
    does not take it (the fingerprint is a record: it never stops a report)."""
    if isinstance(run, (str, Path)):
        return {str(run): digest_path(run)}
    if isinstance(run, (list, tuple)) and run and all(isinstance(r, (str, Path)) for r in run):
        return {str(r): digest_path(r) for r in run}
    if isinstance(run, (pd.DataFrame, dict, list, tuple)):
        try:
            return run_digests(read_run(run, **kwargs))
        except (ValueError, TypeError, KeyError, OSError):  # evaluated already: a form read_run does not take
            return {}
    return {}


def golden_digest(golden: pd.DataFrame) -> str:
    """The hash of a golden set read by ``read_qrels``: its ids, labels (and spans, subtopics)."""
    cols = [c for c in ("query_id", "doc_id", "relevance", "start", "end", "subtopic") if c in golden.columns]
    return digest_table(golden, cols)


def fingerprints(golden: pd.DataFrame, runs: Mapping[str, str | None], *, conventions: Mapping[str, object],
                 measures: Sequence[str], version: str, chunks: str | None = None) -> dict:
    """The fingerprint record a report keeps in its metadata (``ascending=False``, the
    default added after reports were first saved, is left out of the conventions' hash, so
    a report saved before it keeps its fingerprint)."""
    conventions = {k: v for k, v in conventions.items() if not (k == "ascending" and v is False)}
    return {"golden_set": golden_digest(golden), "runs": dict(runs), "chunks": chunks,
            "conventions": digest_json(dict(conventions)), "measures": digest_json(list(measures)),
            "evalframe_version": version}
