"""Make the chunk-level SciFact runs bundled in data/scifact/ (run by hand, offline).

    python scripts/make_scifact_chunks.py /work/shared/data/scifact/docs.jsonl

Reads the 5,183 SciFact abstracts (``docs.jsonl``: ``doc_id, title, text``; see
data/scifact/PROVENANCE.md) and the 300 bundled claims, and writes

- ``data/scifact/chunks.parquet``: ``chunk_id, doc_id, tokens``, one row per chunk:
  every abstract (its title first) cut into windows of ``WINDOW`` words, chunk
  ``<doc_id>#<i>``; ``tokens`` is the chunk's number of whitespace-separated words (a
  stand-in for a tokenizer's count);
- ``data/scifact/chunk_runs.parquet``: ``system, query_id, doc_id, score, tokens``,
  the top ``DEPTH`` chunks of each claim for two systems:

  - ``bm25_chunks``: BM25 (k1 = 0.9, b = 0.4, Anserini's defaults) over the chunks,
    lower-cased alphanumeric terms, a short stop-word list, no stemming;
  - ``reranked``: the same 100 chunks reordered by ``0.5 * bm25' + 0.5 * dense'``, where
    ``bm25'`` is the chunk's BM25 min-max scaled within the claim and ``dense'`` the
    bundled ``dense_exact`` run's score of the chunk's abstract, min-max scaled within
    the claim (0 for an abstract outside its top 100): a page-level dense signal
    mixed into the ranking, as a hybrid reranker would.

No text is bundled, only ids and counts.  Deterministic: the same input gives the
same files.
"""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import sparse

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "data" / "scifact"
WINDOW = 48
DEPTH = 100
K1, B = 0.9, 0.4
STOP = set("a an and are as at be by for from has have in is it its of on or that the this to was were "
           "with which not no we our than".split())
TERM = re.compile(r"[a-z0-9]+")


def chunks(docs_path: Path) -> pd.DataFrame:
    rows = []
    with open(docs_path, encoding="utf-8") as fh:
        for line in fh:
            d = json.loads(line)
            words = (d["title"] + " " + d["text"]).split()
            for i in range(0, max(len(words), 1), WINDOW):
                piece = words[i:i + WINDOW]
                rows.append((f"{d['doc_id']}#{i // WINDOW}", str(d["doc_id"]), len(piece), " ".join(piece)))
    return pd.DataFrame(rows, columns=["chunk_id", "doc_id", "tokens", "text"])


def terms(text: str) -> list[str]:
    return [t for t in TERM.findall(text.lower()) if t not in STOP]


def bm25(texts: list[str], queries: list[str]) -> sparse.csr_matrix:
    vocab: dict[str, int] = {}
    indptr, indices = [0], []
    for t in texts:
        for w in terms(t):
            indices.append(vocab.setdefault(w, len(vocab)))
        indptr.append(len(indices))
    tf = sparse.csr_matrix((np.ones(len(indices)), indices, indptr), shape=(len(texts), len(vocab)))
    tf.sum_duplicates()
    dl = np.asarray(tf.sum(axis=1)).ravel()
    df = np.bincount(tf.indices, minlength=len(vocab))
    idf = np.log(1 + (len(texts) - df + 0.5) / (df + 0.5))
    tf = tf.tocoo()
    w = tf.data * (K1 + 1) / (tf.data + K1 * (1 - B + B * dl[tf.row] / dl.mean())) * idf[tf.col]
    W = sparse.csr_matrix((w, (tf.row, tf.col)), shape=tf.shape)
    q_rows, q_cols = [], []
    for i, q in enumerate(queries):
        for w_ in set(terms(q)):
            if w_ in vocab:
                q_rows.append(i)
                q_cols.append(vocab[w_])
    Q = sparse.csr_matrix((np.ones(len(q_rows)), (q_rows, q_cols)), shape=(len(queries), len(vocab)))
    return (Q @ W.T).tocsr()


def top(scores: sparse.csr_matrix, qids: list[str], chunk_ids: np.ndarray) -> pd.DataFrame:
    out = []
    for i, q in enumerate(qids):
        row = scores.getrow(i)
        idx, val = row.indices, row.data
        keep = val > 0
        idx, val = idx[keep], val[keep]
        # trec_eval's order: score descending, then chunk id descending (byte-wise)
        order = np.lexsort((-np.argsort(np.argsort(chunk_ids[idx])), -val))[:DEPTH]
        out.append(pd.DataFrame({"query_id": q, "doc_id": chunk_ids[idx[order]], "score": val[order]}))
    return pd.concat(out, ignore_index=True)


def minmax(x: pd.Series) -> pd.Series:
    lo, hi = x.min(), x.max()
    return (x - lo) / (hi - lo) if hi > lo else x * 0.0


def main(docs_path: str) -> None:
    ch = chunks(Path(docs_path))
    queries = pd.read_parquet(OUT / "queries.parquet")
    first = top(bm25(ch["text"].tolist(), queries["text"].tolist()), queries["query_id"].tolist(),
                ch["chunk_id"].to_numpy())
    page = ch.set_index("chunk_id")["doc_id"]
    tokens = ch.set_index("chunk_id")["tokens"]
    first["page"] = first["doc_id"].map(page)
    runs = pd.read_parquet(OUT / "runs.parquet")
    dense = runs[runs["system"] == "dense_exact"].rename(columns={"doc_id": "page", "score": "dense"})
    rr = first.merge(dense[["query_id", "page", "dense"]], on=["query_id", "page"], how="left")
    rr["dense"] = rr.groupby("query_id")["dense"].transform(minmax).fillna(0.0)
    rr["score"] = 0.5 * rr.groupby("query_id")["score"].transform(minmax) + 0.5 * rr["dense"]
    rr = rr.round({"score": 6})
    out = []
    for name, t in (("bm25_chunks", first), ("reranked", rr)):
        t = t[["query_id", "doc_id", "score"]].copy()
        t.insert(0, "system", name)
        t["tokens"] = t["doc_id"].map(tokens).astype(np.int64)
        out.append(t)
    run = pd.concat(out, ignore_index=True)
    ch[["chunk_id", "doc_id", "tokens"]].to_parquet(OUT / "chunks.parquet", index=False, compression="zstd",
                                                    compression_level=19)
    run.to_parquet(OUT / "chunk_runs.parquet", index=False, compression="zstd", compression_level=19)
    print(f"{len(ch)} chunks of {ch['doc_id'].nunique()} abstracts; {len(run)} run rows")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "/work/shared/data/scifact/docs.jsonl")
