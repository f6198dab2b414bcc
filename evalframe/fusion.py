"""Run fusion: combine several systems' rankings into one run.

``fuse(runs, method=..., norm=..., weights=...)`` takes the runs as every evalframe
function does (a table with a ``system`` column, a list or a dict of runs) and returns
one run table, ``system, query_id, doc_id, score``, whose system name records the recipe
(``"rrf(k=60):bm25+dense"``), so a fused run evaluates and reports like any other.

Conventions
-----------
- Each system's list for a question is ranked as everywhere in evalframe: score
  descending, ties broken by ``doc_id`` descending (byte-wise), so rank-based methods
  (``rrf``, ``norm="rank"``) give tied documents distinct ranks deterministically.
- Normalisation is per (system, question) list, before fusing:

  ``min-max``  (s - min) / max(max - min, 1e-9)
  ``zmuv``     (s - mean) / max(std, 1e-9)   (population standard deviation)
  ``rank``     1 - (rank - 1) / n            (n documents in the list)
  ``none``     s

  The 1e-9 floors keep a list of equal scores finite (it normalises to 0), as ranx does.
- A document a system did not return for a question contributes nothing to that
  question's fused score; a question is fused over the systems that answered it.

Methods, for document d with normalised scores s_i(d) from the systems i that returned it
and weights w_i (default 1):

=========  ==================================================
``rrf``    sum_i w_i / (k + rank_i(d))   (Cormack et al., 2009; ``norm`` must be "none")
``combsum``  sum_i w_i s_i(d)
``wsum``   the same, weights required (ranx's name)
``combmnz``  |{i}| * sum_i s_i(d)
``combmax``  max_i s_i(d)
``combmin``  min_i s_i(d)
=========  ==================================================
"""
from __future__ import annotations

import numbers
from collections.abc import Mapping, Sequence
from typing import Literal

import numpy as np
import pandas as pd
import pyarrow as pa

from ._validation import POSITIVE_INT, Interval, Options, check, error, validate
from .io import read_run
from .ranking import list_ranks, ranked_order

Method = Literal["rrf", "combsum", "wsum", "combmnz", "combmax", "combmin"]
Norm = Literal["min-max", "zmuv", "rank", "none"]

METHODS = ("rrf", "combsum", "wsum", "combmnz", "combmax", "combmin")
NORMS = ("min-max", "zmuv", "rank", "none")
WEIGHTED = ("rrf", "combsum", "wsum")
FLOOR = 1e-9  # denominators of min-max and zmuv (a list of equal scores normalises to 0)

__all__ = ["fuse", "METHODS", "NORMS"]


def fuse(runs, *, method: Method = "rrf", norm: Norm | None = None,
         weights: "Mapping[str, float] | Sequence[float] | None" = None, k: float = 60,
         depth: int | None = None, name: str | None = None,
         duplicates: Literal["error", "max", "first"] = "error") -> pd.DataFrame:
    """Fuse several systems' runs into one run.

    Parameters
    ----------
    runs : run table with a ``system`` column, list or dict of runs
        At least two systems (anything :func:`evalframe.read_run` reads).
    method : {"rrf", "combsum", "wsum", "combmnz", "combmax", "combmin"}
        See the module docstring.
    norm : {"min-max", "zmuv", "rank", "none"}, optional
        Per-list score normalisation before fusing; default "none" for ``rrf`` (which
        uses ranks only) and "min-max" for the score-based methods.
    weights : dict {system: weight} or sequence (in the runs' system order), optional
        For ``rrf``, ``combsum`` and ``wsum`` (required there); 1 for every system otherwise.
    k : float
        RRF's constant (> 0; 60 in Cormack et al.).
    depth : int, optional
        Keep the fused top ``depth`` of each question.
    name : str, optional
        The fused run's system name (default: the recipe).
    duplicates : {"error", "max", "first"}
        A document listed twice by one system for one question (see :func:`read_run`).

    Returns
    -------
    DataFrame
        ``system, query_id, doc_id, score``: questions in their first-appearance order,
        each ranked by fused score (ties by ``doc_id`` descending).

    Examples
    --------
    >>> import evalframe as ef
    >>> cran = ef.datasets.load_cranfield()
    >>> fused = ef.fuse(cran.runs[cran.runs.system.isin(["bm25", "dense_exact"])], method="rrf")
    >>> fused["system"].iloc[0]
    'rrf(k=60):bm25+dense_exact'
    """
    method, norm, depth = _check(method, norm, k, depth)
    table = read_run(runs, duplicates=duplicates)
    if "system" not in table:
        raise ValueError("fuse: runs must name at least two systems, got one unnamed run")
    sys_codes, systems = pd.factorize(table["system"], sort=False)
    systems = [str(s) for s in systems]
    if len(systems) < 2:
        raise ValueError(f"fuse: runs must name at least two systems, got {systems!r}")
    w = _weights(method, weights, systems)

    q_codes, queries = pd.factorize(table["query_id"], sort=False)
    d_codes, docs = pd.factorize(table["doc_id"], sort=False)
    docs = pa.array(np.asarray(docs, dtype=object), type=pa.string())
    order = ranked_order(sys_codes, q_codes, table["score"].to_numpy(dtype=np.float64), d_codes, docs)
    s, q, d = sys_codes[order], q_codes[order], d_codes[order]
    score = table["score"].to_numpy(dtype=np.float64)[order]
    starts, sizes, rank = list_ranks(s.astype(np.int64) * len(queries) + q)

    value = 1.0 / (k + rank) if method == "rrf" else _normalised(score, starts, sizes, rank, norm)
    q_out, d_out, fused = _combine(method, q, d, value * w[s] if method in WEIGHTED else value, len(docs))
    out = _ranked_output(q_out, d_out, fused, docs, depth)
    label = name if name is not None else _recipe(method, norm, w, k, systems, weights is not None)
    return pd.DataFrame({
        "system": pd.Series([label] * len(out[0]), dtype=table["system"].dtype),
        "query_id": pd.Series(np.asarray(queries, dtype=object)[out[0]], dtype=table["query_id"].dtype),
        "doc_id": pd.Series(docs.take(pa.array(out[1])).to_numpy(zero_copy_only=False),
                            dtype=table["doc_id"].dtype),
        "score": out[2],
    })


def _check(method, norm, k, depth):
    check("fuse", "method", method, Options(METHODS, f"one of {', '.join(METHODS)}"))
    if norm is None:
        norm = "none" if method == "rrf" else "min-max"
    check("fuse", "norm", norm, Options(NORMS, f"one of {', '.join(NORMS)}"))
    if method == "rrf":
        check("fuse", "norm", norm, Options(("none",), "'none' with method='rrf' (RRF uses ranks only)"))
    validate("fuse", k=(k, Interval(numbers.Real, 0, None, closed="neither")), depth=(depth, POSITIVE_INT, None))
    return method, norm, depth


def _weights(method, weights, systems: list[str]) -> np.ndarray:
    if weights is None:
        if method == "wsum":
            raise error("fuse", "weights", "given with method='wsum' (one per system)", None)
        return np.ones(len(systems))
    if method not in WEIGHTED:
        raise ValueError(f"fuse: weights apply to {', '.join(WEIGHTED)} only, got weights with {method!r}")
    if isinstance(weights, Mapping):
        unknown = sorted(set(map(str, weights)) - set(systems))
        missing = [s for s in systems if s not in weights]
        if unknown or missing:
            raise ValueError(f"fuse: weights must name every system exactly ({systems!r}), got {dict(weights)!r}")
        w = np.array([weights[s] for s in systems], dtype=np.float64)
    else:
        w = np.asarray(list(weights), dtype=np.float64)
        if w.shape != (len(systems),):
            raise error("fuse", "weights", f"{len(systems)} numbers (systems {systems!r})", weights)
    if not np.isfinite(w).all():
        raise error("fuse", "weights", "finite numbers", weights)
    return w


def _normalised(score, starts, sizes, rank, norm) -> np.ndarray:
    if norm == "none" or len(score) == 0:
        return score
    if norm == "rank":
        return 1.0 - (rank - 1.0) / np.repeat(sizes, sizes)
    if norm == "min-max":
        lo = np.minimum.reduceat(score, starts)
        hi = np.maximum.reduceat(score, starts)
        return (score - np.repeat(lo, sizes)) / np.repeat(np.maximum(hi - lo, FLOOR), sizes)
    mean = np.add.reduceat(score, starts) / sizes
    centred = score - np.repeat(mean, sizes)
    std = np.sqrt(np.add.reduceat(centred * centred, starts) / sizes)
    return centred / np.repeat(np.maximum(std, FLOOR), sizes)


def _combine(method, q, d, value, n_docs: int):
    """Fused value per (question, document) over the systems that returned it."""
    key = q.astype(np.int64) * max(n_docs, 1) + d
    order = np.argsort(key, kind="stable")
    key, value = key[order], value[order]
    starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]]) if len(key) else np.zeros(0, np.int64)
    uniq = key[starts]
    if len(key) == 0:
        fused = np.zeros(0)
    elif method == "combmax":
        fused = np.maximum.reduceat(value, starts)
    elif method == "combmin":
        fused = np.minimum.reduceat(value, starts)
    else:
        fused = np.add.reduceat(value, starts)
        if method == "combmnz":
            fused = fused * np.diff(np.r_[starts, len(key)])
    return uniq // max(n_docs, 1), uniq % max(n_docs, 1), fused


def _ranked_output(q, d, fused, docs: pa.Array, depth):
    order = ranked_order(np.zeros(len(q), np.int64), q, fused, d, docs)
    q, d, fused = q[order], d[order], fused[order]
    if depth is not None:
        _, _, rank = list_ranks(q)
        keep = rank <= depth
        q, d, fused = q[keep], d[keep], fused[keep]
    return q, d, fused


def _recipe(method, norm, w, k, systems, weighted: bool) -> str:
    params = []
    if method == "rrf":
        params.append(f"k={k:g}")
    else:
        params.append(f"norm={norm}")
    if weighted:
        params.append("weights=" + "/".join(f"{x:g}" for x in w))
    return f"{method}({','.join(params)}):{'+'.join(systems)}"
