"""Pooling: which documents to judge next.

``pool(runs, depth=k, qrels=None)`` takes every system's top ``k`` for every question
(ranked as everywhere in evalframe: score descending, ties by ``doc_id`` descending),
removes what the golden set already judges, and says which systems retrieved each
document and its best rank: the list a judging round needs, in the order assessors
usually want it (question, then best rank). A document with a negative label counts as
unjudged (evalframe's convention for labels below 0), so it is pooled again.

The :class:`Pool` also reports, per system, the share of its top ``k`` that is judged
before the round and after it (once every pooled document has a label): a system that
did not contribute to the pool (``systems=`` picks the contributors) shows how much of
its top ``k`` the round leaves unjudged.
"""
from __future__ import annotations

from dataclasses import dataclass
from os import PathLike
from typing import Sequence

import numpy as np
import pandas as pd
import pyarrow as pa

from . import _arrow_compute as pc
from ._validation import POSITIVE_INT, check
from .io import local_path, read_qrels, read_run
from .ranking import list_ranks, ranked_order


@dataclass(frozen=True)
class Pool:
    """The documents to judge and the judged share of every system's top ``depth``.

    Attributes
    ----------
    documents : DataFrame
        ``query_id, doc_id, best_rank, n_systems, systems``: one row per document to
        judge; ``systems`` lists the contributing systems that retrieved it, comma-separated.
    coverage : DataFrame
        ``system, depth, retrieved, judged_before, judged_after``: per system, how many
        (question, document) positions its top ``depth`` fills, and the share of them
        judged now and once the pool is judged.
    depth : int

    Examples
    --------
    >>> import evalframe as ef
    >>> cran = ef.datasets.load_cranfield()
    >>> p = ef.pool(cran.runs, depth=10, qrels=cran.qrels)
    >>> p.depth, list(p.documents.columns)
    (10, ['query_id', 'doc_id', 'best_rank', 'n_systems', 'systems'])
    >>> list(p.coverage.columns)
    ['system', 'depth', 'retrieved', 'judged_before', 'judged_after']
    """

    documents: pd.DataFrame
    coverage: pd.DataFrame
    depth: int

    def to_csv(self, path: "str | PathLike[str]") -> None:
        """Write :attr:`documents` as CSV (one row per document to judge) to a local path
        (a URL-looking path is refused: nothing is sent) or an opened file object."""
        self.documents.to_csv(_out(path), index=False)

    def to_trec(self, path: "str | PathLike[str]") -> None:
        """Write :attr:`documents` as a TREC qrels file to be filled in by assessors.

        Each line is ``query_id 0 doc_id -1``: the label -1 means "not judged yet", so a
        file fed back before it is filled in still counts its documents as unjudged."""
        d = self.documents
        lines = d["query_id"].astype(str) + " 0 " + d["doc_id"].astype(str) + " -1\n"
        with open(_out(path), "w", encoding="utf-8", newline="") as f:
            f.write("".join(lines))


def _out(path):
    """A writer's path as a local path (a URL-looking one refused); a file object as is."""
    if isinstance(path, (str, bytes, PathLike)):
        return local_path(path, "pool output", write=True)
    return path


def pool(runs, *, depth: int = 10, qrels=None, systems: Sequence[str] | None = None) -> Pool:
    """The documents to judge next: every system's top ``depth``, minus what is judged.

    Parameters
    ----------
    runs : run table with a ``system`` column, list or dict of runs
    depth : int
        Pool depth k (each system contributes its top k per question).
    qrels : golden set, optional
        What is judged already (labels >= 0); without it every pooled document is new.
    systems : list of str, optional
        The systems that contribute to the pool (default: all); coverage is reported
        for every system of ``runs``.

    Returns
    -------
    Pool

    Examples
    --------
    >>> import evalframe as ef
    >>> cran = ef.datasets.load_cranfield()
    >>> p = ef.pool(cran.runs, depth=10, qrels=cran.qrels)
    >>> p.documents.columns.tolist()
    ['query_id', 'doc_id', 'best_rank', 'n_systems', 'systems']
    >>> bool((p.coverage["judged_after"] == 1.0).all())
    True
    """
    check("pool", "depth", depth, POSITIVE_INT)
    table = read_run(runs)
    if "system" not in table:
        table = table.assign(system="run")
    names = pd.unique(table["system"]).tolist()
    contributors = names if systems is None else list(systems)
    unknown = sorted(set(contributors) - set(names))
    if unknown or not contributors:
        raise ValueError(f"pool: systems must name systems of the runs ({names!r}), got {systems!r}")

    top = _top(table, depth)
    judged = _judged(top, None if qrels is None else read_qrels(qrels))
    top = top.assign(judged=judged)
    pooled = top[top["system"].isin(contributors) & ~top["judged"]]
    return Pool(_documents(pooled, contributors), _coverage(top, pooled, names, depth), int(depth))


def _top(table: pd.DataFrame, depth: int) -> pd.DataFrame:
    s, _ = pd.factorize(table["system"], sort=False)
    q, queries = pd.factorize(table["query_id"], sort=False)
    d, docs = pd.factorize(table["doc_id"], sort=False)
    order = ranked_order(s, q, table["score"].to_numpy(dtype=np.float64), d,
                         pa.array(np.asarray(docs, dtype=object), type=pa.string()))
    _, _, rank = list_ranks(s[order].astype(np.int64) * len(queries) + q[order])
    keep = order[rank <= depth]
    out = table.iloc[keep][["system", "query_id", "doc_id"]].reset_index(drop=True)
    return out.assign(rank=rank[rank <= depth].astype(np.int64), q=q[keep])


def _judged(top: pd.DataFrame, qrels: pd.DataFrame | None) -> np.ndarray:
    if qrels is None:
        return np.zeros(len(top), dtype=bool)
    known = qrels[qrels["relevance"] >= 0]
    keys = pd.MultiIndex.from_arrays([known["query_id"].astype(str), known["doc_id"].astype(str)])
    mine = pd.MultiIndex.from_arrays([top["query_id"].astype(str), top["doc_id"].astype(str)])
    return mine.isin(keys)


def _documents(pooled: pd.DataFrame, contributors: list[str]) -> pd.DataFrame:
    """One row per (question, document), systems listed by rank, then by their order given."""
    order = {name: i for i, name in enumerate(contributors)}
    def strings(col: str) -> pa.Array:  # typed, so an empty pool (all judged already) is an empty table
        return pa.array(pooled[col].astype(str).to_numpy(dtype=object), pa.string())
    t = pa.table({"q": pa.array(pooled["q"].to_numpy(), pa.int64()), "query_id": strings("query_id"),
                  "doc_id": strings("doc_id"), "rank": pa.array(pooled["rank"].to_numpy(), pa.int64()),
                  "o": pa.array(pooled["system"].map(order).to_numpy(), pa.int64()), "system": strings("system")})
    t = t.sort_by([("q", "ascending"), ("rank", "ascending"), ("o", "ascending")])
    g = t.group_by(["q", "query_id", "doc_id"], use_threads=False).aggregate(
        [("rank", "min"), ("system", "count"), ("system", "list")])
    g = g.sort_by([("q", "ascending"), ("rank_min", "ascending"), ("doc_id", "ascending")])
    return pd.DataFrame({
        "query_id": g["query_id"].to_numpy(zero_copy_only=False).astype(object),
        "doc_id": g["doc_id"].to_numpy(zero_copy_only=False).astype(object),
        "best_rank": g["rank_min"].to_numpy().astype(np.int64),
        "n_systems": g["system_count"].to_numpy().astype(np.int64),
        "systems": pc.binary_join(g["system_list"], ",").to_numpy(zero_copy_only=False).astype(object),
    })


def _coverage(top: pd.DataFrame, pooled: pd.DataFrame, names: list[str], depth: int) -> pd.DataFrame:
    newly = pd.MultiIndex.from_arrays([pooled["query_id"], pooled["doc_id"]])
    after = top["judged"].to_numpy() | pd.MultiIndex.from_arrays([top["query_id"], top["doc_id"]]).isin(newly)
    stats = top.assign(after=after).groupby("system", sort=False).agg(
        retrieved=("judged", "size"), judged_before=("judged", "mean"), judged_after=("after", "mean"))
    stats = stats.reindex(names).reset_index()
    stats.insert(1, "depth", depth)
    return stats[["system", "depth", "retrieved", "judged_before", "judged_after"]]
