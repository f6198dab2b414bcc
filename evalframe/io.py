"""Read golden sets and runs from files, DataFrames and dicts.

Accepted sources (for both :func:`read_qrels` and :func:`read_run`):

- TREC text files: whitespace separated (tabs or runs of spaces), ``#`` comment
  lines, optionally gzip-compressed (``.gz``).  Qrels: ``query_id iter doc_id
  relevance``; runs: ``query_id Q0 doc_id rank score tag``.
- CSV / TSV with a header line, Parquet, JSON lines (``.jsonl``), using the
  canonical column names or the aliases in :data:`evalframe.schema.ALIASES`.
- pandas DataFrames (copied, never modified).
- The dict-of-dicts used by pytrec_eval and ranx: ``{query_id: {doc_id: value}}``.

Several systems: a table with a ``system`` column, a list of runs, or a dict
``{system_name: run}``.  A TREC run file's tag column becomes ``system``.
"""
from __future__ import annotations

__all__ = ["read_qrels", "read_run"]

import gzip
import io as _io
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Literal, Union

import numpy as np
import pandas as pd

from .errors import EvalframeInputError, InputProblem
from .schema import ALIASES, clean_qrels, clean_run

Source = Union[str, os.PathLike, pd.DataFrame, Mapping]

_QRELS_COLS = ["query_id", "iteration", "doc_id", "relevance"]
_RUN_COLS = ["query_id", "q0", "doc_id", "rank", "score", "system"]
_KNOWN = {a for names in ALIASES.values() for a in names}


def _read_bytes(path: Path) -> bytes:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise FileNotFoundError(f"no such file: {str(path)!r}") from None
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    return data


def _strip_ext(path: Path) -> str:
    name = path.name.lower()
    if name.endswith(".gz"):
        name = name[:-3]
    return name


_NUMERIC = {"score": "float64", "rank": "float64", "relevance": "int64"}


def malformed_lines(original: bytes, least: int, most: int | None) -> tuple[int, list[str]]:
    """Count and show the data lines of a file with fewer than ``least`` or more
    than ``most`` fields, numbered as in the file (error path only)."""
    if original[:2] == b"\x1f\x8b":
        original = gzip.decompress(original)
    bad, shown = 0, []
    for number, line in enumerate(original.split(b"\n"), start=1):
        fields = line.split()
        if not fields or fields[0].startswith(b"#"):
            continue
        if len(fields) < least or (most is not None and len(fields) > most):
            bad += 1
            if len(shown) < _MAX:
                shown.append(f"line {number}: {line.decode(errors='replace').strip()!r} ({len(fields)} fields)")
    return bad, shown


def _parse_whitespace(data: bytes, names: list[str], what: str, path: str, *,
                      normalise: bool = False) -> pd.DataFrame:
    """Parse a whitespace-separated file with a fixed number of columns (pyarrow).

    Files separated by single tabs or single spaces are parsed as they are; any
    other mix of blanks is first normalised to single spaces."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pacsv

    original = data
    n = len(names)
    if b"\r" in data:
        data = data.replace(b"\r", b"")
    if b"#" in data and (data.startswith(b"#") or b"\n#" in data):
        data = re.sub(rb"(?m)^#[^\n]*\n?", b"", data)
    # Fast path: every line holds exactly n fields separated by one tab or one space
    # (single-byte counts only; a doubled blank would leave an empty field, which is
    # checked after parsing).  Anything else is normalised to single spaces.
    lines = data.count(b"\n") + (0 if data.endswith(b"\n") else 1)
    n_tab, n_space = data.count(b"\t"), data.count(b" ")
    simple = True
    if not normalise and n_space == 0 and n_tab == (n - 1) * lines:
        delimiter = "\t"
    elif not normalise and n_tab == 0 and n_space == (n - 1) * lines:
        delimiter = " "
    else:
        simple, delimiter = False, " "
        data = re.sub(rb"[ \t]+", b" ", data)
        data = re.sub(rb"(?m)^ | $", b"", data)
        if b"\n\n" in data or data.startswith(b"\n"):
            data = re.sub(rb"\n\n+", b"\n", data).lstrip(b"\n")
    if not data.strip():
        raise EvalframeInputError(what, [InputProblem(f"{path} holds no data lines", "check the file")])
    n_bad = 0

    def on_invalid(row):
        nonlocal n_bad
        n_bad += 1
        return "skip"

    def parse(typed: bool):
        types = {c: (pa.from_numpy_dtype(np.dtype(_NUMERIC[c])) if typed and c in _NUMERIC else pa.string())
                 for c in names}
        return pacsv.read_csv(
            _io.BytesIO(data),
            read_options=pacsv.ReadOptions(column_names=names, block_size=1 << 26),
            parse_options=pacsv.ParseOptions(delimiter=delimiter, quote_char=False, double_quote=False,
                                             invalid_row_handler=on_invalid),
            convert_options=pacsv.ConvertOptions(column_types=types, strings_can_be_null=False),
        )

    try:
        table = parse(typed=True)
    except pa.ArrowInvalid:
        # A value that is not a number: read everything as text so that the
        # schema step can report every bad row at once.
        n_bad = 0
        table = parse(typed=False)
    if n_bad:
        count, shown = malformed_lines(original, n, n)
        raise EvalframeInputError(what, [InputProblem(
            f"{path}: {max(count, n_bad)} malformed lines (expected {n} fields: {' '.join(names)})",
            "fix or remove those lines", "\n".join(shown))])
    if simple and any(table.column(c).type == pa.string() and pc.any(pc.equal(table.column(c), "")).as_py()
                      for c in names):
        # an empty field: blanks were doubled somewhere after all; normalise and parse again
        return _parse_whitespace(original, names, what, path, normalise=True)
    df = table.to_pandas(types_mapper=_string_mapper)
    df.attrs["evalframe_ids_trimmed"] = True  # split on blanks: ids hold none
    return df


def _string_mapper(t):
    import pyarrow as pa
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return pd.StringDtype("pyarrow", na_value=np.nan) if _PANDAS_STR else pd.ArrowDtype(t)
    return None


_PANDAS_STR = int(pd.__version__.split(".")[0]) >= 3


_MAX = 5


def _read_table_file(path: Path, kind: Literal["qrels", "run"]) -> pd.DataFrame:
    name = _strip_ext(path)
    what = "golden set (qrels)" if kind == "qrels" else "run"
    if name.endswith((".parquet", ".pq")):
        return pd.read_parquet(path)
    if name.endswith((".jsonl", ".ndjson")):
        return pd.read_json(path, lines=True, dtype=False)
    if name.endswith(".json"):
        import json
        with (gzip.open(path, "rt") if path.name.endswith(".gz") else open(path)) as fh:
            obj = json.load(fh)
        return _from_mapping(obj, kind)
    data = _read_bytes(path)
    first = next((ln for ln in data[:1 << 16].splitlines() if ln.strip() and not ln.startswith(b"#")), b"")
    tokens = [t.decode(errors="replace").strip().strip('"').lower() for t in re.split(rb"[,\t ]+", first.strip())]
    has_header = any(t in _KNOWN for t in tokens) and not (
        kind == "run" and len(tokens) == 6 and tokens[1].lower() == "q0")
    if has_header or name.endswith(".csv"):
        sep = "," if (name.endswith(".csv") or (b"," in first and b"\t" not in first)) else ("\t" if b"\t" in first else r"\s+")
        # Every column as text: ids keep their exact spelling ("0012") whatever the
        # header's case; the schema step converts scores, labels and ranks.
        return pd.read_csv(_io.BytesIO(data), sep=sep, dtype=str, keep_default_na=False, na_values=[""],
                           comment=None, skip_blank_lines=True)
    ntok = len(first.split())
    if kind == "qrels":
        if ntok == 4:
            df = _parse_whitespace(data, _QRELS_COLS, what, str(path))
            return df[["query_id", "doc_id", "relevance"]]
        if ntok == 3:
            return _parse_whitespace(data, ["query_id", "doc_id", "relevance"], what, str(path))
        raise EvalframeInputError(what, [InputProblem(
            f"{path}: first line has {ntok} fields: {first[:200]!r}",
            "TREC qrels lines are 'query_id iteration doc_id relevance' (4 fields)")])
    if ntok == 6:
        df = _parse_whitespace(data, _RUN_COLS, what, str(path))
        return df[["query_id", "doc_id", "rank", "score", "system"]]
    if ntok == 3:
        return _parse_whitespace(data, ["query_id", "doc_id", "score"], what, str(path))
    raise EvalframeInputError(what, [InputProblem(
        f"{path}: first line has {ntok} fields: {first[:200]!r}",
        "TREC run lines are 'query_id Q0 doc_id rank score tag' (6 fields)")])


def _from_mapping(obj: Mapping, kind: str) -> pd.DataFrame:
    """{query_id: {doc_id: value}} (pytrec_eval/ranx) to a long table."""
    value = "relevance" if kind == "qrels" else "score"
    q, d, v = [], [], []
    for qid, docs in obj.items():
        if not isinstance(docs, Mapping):
            raise EvalframeInputError("golden set (qrels)" if kind == "qrels" else "run", [InputProblem(
                f"dict value for {qid!r} is {type(docs).__name__}, not a dict of doc_id -> {value}",
                "pass {query_id: {doc_id: value}} (pytrec_eval/ranx style)")])
        n = len(docs)
        q.append(np.full(n, str(qid), dtype=object))
        d.append(np.fromiter((str(k) for k in docs.keys()), dtype=object, count=n))
        v.append(np.fromiter(docs.values(), dtype=float, count=n))
    if not q:
        return pd.DataFrame({"query_id": [], "doc_id": [], value: []})
    return pd.DataFrame({"query_id": np.concatenate(q), "doc_id": np.concatenate(d), value: np.concatenate(v)})


def _is_nested_run_mapping(obj: Mapping) -> bool:
    """True for {system: run} where each run is itself a dict-of-dicts or a table."""
    for v in obj.values():
        if isinstance(v, pd.DataFrame) or isinstance(v, (str, os.PathLike)):
            return True
        if isinstance(v, Mapping):
            inner = next(iter(v.values()), None)
            return isinstance(inner, Mapping)
        return False
    return False


def _raw(source, kind: Literal["qrels", "run"]) -> pd.DataFrame:
    if isinstance(source, pd.DataFrame):
        return source
    if isinstance(source, (str, os.PathLike)):
        return _read_table_file(Path(source), kind)
    if isinstance(source, Mapping):
        return _from_mapping(source, kind)
    raise TypeError(f"cannot read a {'golden set' if kind == 'qrels' else 'run'} from "
                    f"{type(source).__name__}: pass a file path, a DataFrame or a dict of dicts")


def read_qrels(source: Source) -> pd.DataFrame:
    """Read a golden set (qrels) into a canonical DataFrame.

    Parameters
    ----------
    source : path, DataFrame or dict
        See the module docstring for the accepted formats.

    Returns
    -------
    DataFrame
        ``query_id`` (str), ``doc_id`` (str), ``relevance`` (int64).

    Examples
    --------
    >>> read_qrels({"q1": {"d1": 1, "d2": 0}}).shape
    (2, 3)
    """
    return clean_qrels(_raw(source, "qrels"))


def read_run(source: Source | Sequence[Source], *, system: str | None = None,
             duplicates: Literal["error", "max", "first"] = "error") -> pd.DataFrame:
    """Read a run (one or many systems) into a canonical DataFrame.

    Parameters
    ----------
    source : path, DataFrame, dict, or a list / dict of those
        A single run, a list of runs, or ``{system_name: run}``.
    system : str, optional
        System name for a single run (overrides its tag / ``system`` column).
    duplicates : {"error", "max", "first"}
        See :func:`evalframe.schema.clean_run`.

    Returns
    -------
    DataFrame
        ``system, query_id, doc_id, score`` (+ ``rank`` when the source has it);
        ``system`` is present when the source names systems (TREC tag column,
        a ``system`` column, a list or dict of runs, or the argument).

    Examples
    --------
    >>> read_run({"q1": {"d1": 2.0, "d2": 1.0}}, system="bm25").columns.tolist()
    ['system', 'query_id', 'doc_id', 'score']
    """
    if isinstance(source, Mapping) and _is_nested_run_mapping(source):
        if system is not None:
            raise ValueError("system= names a single run; a dict of runs is already named by its keys")
        parts = [read_run(v, system=str(k), duplicates=duplicates) for k, v in source.items()]
        return pd.concat(parts, ignore_index=True)
    if isinstance(source, Sequence) and not isinstance(source, (str, bytes, os.PathLike)):
        if system is not None:
            raise ValueError("system= names a single run; name each run in a dict {name: run} instead")
        parts = []
        for i, src in enumerate(source):
            part = read_run(src, duplicates=duplicates)
            if "system" not in part:
                name = Path(src).stem if isinstance(src, (str, os.PathLike)) else f"run{i + 1}"
                part.insert(0, "system", name)
            parts.append(part)
        if not parts:
            raise EvalframeInputError("run", [InputProblem("the list of runs is empty", "pass at least one run")])
        seen: dict[str, int] = {}
        shared = set()
        for i, part in enumerate(parts):
            for name in part["system"].unique():
                if name in seen:
                    shared.add(name)
                seen[name] = i
        if shared:
            raise EvalframeInputError("run", [InputProblem(
                f"{len(parts)} runs share the system name(s) {sorted(shared)[:5]}, which would merge their rankings",
                "give each run its own name: pass a dict {name: run}")])
        return pd.concat(parts, ignore_index=True)
    return clean_run(_raw(source, "run"), system=system, duplicates=duplicates)
