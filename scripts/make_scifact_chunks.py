"""Make the chunk- and span-level SciFact data bundled in data/scifact/ (run by hand, offline).

    python scripts/make_scifact_chunks.py /work/shared/data/scifact/docs.jsonl [evidence_spans.tsv]

Reads the 5,183 SciFact abstracts (``docs.jsonl``: ``doc_id, title, text``), the
rationale sentences as character spans of ``text`` (``evidence_spans.tsv``, by default
next to ``docs.jsonl``; see data/scifact/PROVENANCE.md) and the bundled claims, and
writes

- ``data/scifact/chunks.parquet``: ``chunk_id, doc_id, tokens, start, end``, one row per
  chunk: every abstract (its title first) cut into windows of ``WINDOW`` = 48 words,
  chunk ``<doc_id>#<i>``; ``tokens`` is the chunk's number of whitespace-separated words
  (a stand-in for a tokenizer's count); ``start, end`` (see *Offsets* below);
- ``data/scifact/chunk_runs.parquet``: ``system, query_id, doc_id, score, tokens``,
  the top ``DEPTH`` chunks of each claim for two systems:

  - ``bm25_chunks``: BM25 (k1 = 0.9, b = 0.4, Anserini's defaults) over the chunks,
    lower-cased alphanumeric terms, a short stop-word list, no stemming;
  - ``reranked``: the same 100 chunks reordered by ``0.5 * bm25' + 0.5 * dense'``, where
    ``bm25'`` is the chunk's BM25 min-max scaled within the claim and ``dense'`` the
    bundled ``dense_exact`` run's score of the chunk's abstract, min-max scaled within
    the claim (0 for an abstract outside its top 100): a page-level dense signal
    mixed into the ranking, as a hybrid reranker would;

- ``data/scifact/evidence_spans.parquet``: the span golden set, ``query_id, doc_id,
  start, end, relevance, label, rationale, sentence``: the 366 rationale sentences of
  ``evidence_spans.tsv`` in its order, ``relevance`` = 1 for every span.  Checked:
  ``0 <= start < end <= len(text)``, ``text[start:end]`` is non-empty and has no
  surrounding whitespace, and every (claim, abstract) pair is in the bundled qrels;
- ``data/scifact/span_chunks.parquet``: ``chunking, chunk_id, doc_id, start, end, tokens``
  for five chunkings of the same abstracts (``CHUNKINGS``): ``w32``, ``w48``, ``w64``,
  ``w128`` (non-overlapping windows of that many words, as above; ``w48`` is
  ``chunks.parquet`` again) and ``sent``: whole sentences packed greedily, a chunk
  taking the next sentence while its words stay within ``SENT_LIMIT`` = 64 (the title's
  words count towards the first chunk's 64; every chunk holds at least one sentence, so
  a chunk is longer than 64 words only when one sentence, or the title plus the first
  sentence, is).  Sentences: ``text`` is cut at every single space preceded by ``.``,
  ``?`` or ``!`` and followed by an ASCII uppercase letter or digit (``SENT_END``).
  Chunk ids are ``<doc_id>#<i>`` within each chunking, so the same id names different
  text in different chunkings;
- ``data/scifact/span_runs.parquet``: ``system, query_id, doc_id, score, tokens``: the
  same BM25 over each chunking's chunks (statistics of that chunking), top ``DEPTH``
  chunks per claim, systems ``bm25_<chunking>``; ``bm25_w48`` is ``bm25_chunks``.

Offsets: ``start, end`` are character offsets into the abstract's ``text`` (the
coordinates of the spans), end exclusive: from the start of the chunk's first word of
``text`` to the end of its last.  The title words the first chunk begins with are not
part of ``text`` and do not move ``start``.  A chunk holding no word of ``text`` (title
only, or an empty abstract) gets ``start = end`` = the offset where the text's first
word starts (0).  Runs are in trec_eval's order (score descending, then chunk id
descending byte-wise); chunks with score 0 are left out.

No text is bundled, only ids, offsets and counts.  Deterministic: the same input gives
the same files.  The script checks the offsets (chunk ranges in order, not overlapping,
their words equal to the chunk's words; spans inside their abstract's text) and prints
the counts quoted in data/scifact/PROVENANCE.md.
"""
from __future__ import annotations

import json
import re
import sys
from bisect import bisect_left
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
from scipy import sparse

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "data" / "scifact"
WINDOW = 48
WINDOWS = (32, 48, 64, 128)
SENT_LIMIT = 64
CHUNKINGS = ("w32", "w48", "w64", "w128", "sent")
DEPTH = 100
K1, B = 0.9, 0.4
STOP = set("a an and are as at be by for from has have in is it its of on or that the this to was were "
           "with which not no we our than".split())
TERM = re.compile(r"[a-z0-9]+")
WORD = re.compile(r"\S+")  # the words of str.split(), with their offsets
SENT_END = re.compile(r"(?<=[.?!]) (?=[A-Z0-9])")  # the space between two sentences


def read_docs(docs_path: Path) -> list[dict]:
    with open(docs_path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh]


def words_of(text: str) -> list[tuple[int, int]]:
    """(start, end) of every whitespace-separated word of ``text``."""
    return [m.span() for m in WORD.finditer(text)]


def sentences(text: str) -> list[tuple[int, int]]:
    """(start, end) of every sentence of ``text`` by ``SENT_END``."""
    cuts = [m.start() for m in SENT_END.finditer(text)]
    return list(zip([0] + [c + 1 for c in cuts], cuts + [len(text)]))


def _row(doc: dict, i: int, lead: list[str], offs: list[tuple[int, int]], lo: int, hi: int) -> tuple:
    """Chunk ``i`` of ``doc``: the title words ``lead``, then the text words ``lo:hi``."""
    text = doc["text"]
    piece = lead + [text[s:e] for s, e in offs[lo:hi]]
    if hi > lo:
        start, end = offs[lo][0], offs[hi - 1][1]
    else:  # no word of the text: an empty range where the text starts
        start = end = offs[0][0] if offs else 0
    return (f"{doc['doc_id']}#{i}", str(doc["doc_id"]), len(piece), start, end, " ".join(piece))


COLUMNS = ["chunk_id", "doc_id", "tokens", "start", "end", "text"]


def window_chunks(docs: list[dict], window: int) -> pd.DataFrame:
    """Every abstract, title first, cut into windows of ``window`` words."""
    rows = []
    for d in docs:
        title, offs = d["title"].split(), words_of(d["text"])
        n, nt = len(title) + len(offs), len(title)
        for i in range(0, max(n, 1), window):
            lo, hi = max(i - nt, 0), max(min(i + window, n) - nt, 0)
            rows.append(_row(d, i // window, title[i:i + window], offs, lo, hi))
    return pd.DataFrame(rows, columns=COLUMNS)


def sentence_chunks(docs: list[dict], limit: int) -> pd.DataFrame:
    """Every abstract's sentences packed greedily into chunks of at most ``limit`` words."""
    rows = []
    for d in docs:
        title, offs = d["title"].split(), words_of(d["text"])
        starts = [s for s, _ in offs]
        # word range [a, b) of every sentence; a sentence always holds a word
        bounds = [bisect_left(starts, s) for s, _ in sentences(d["text"])] + [len(offs)]
        sents = [(a, b) for a, b in zip(bounds[:-1], bounds[1:]) if b > a]
        groups, current, n = [], [], len(title)
        for a, b in sents:
            if current and n + (b - a) > limit:
                groups.append(current)
                current, n = [], 0
            current.append((a, b))
            n += b - a
        groups.append(current)
        for i, g in enumerate(groups):
            lo, hi = (g[0][0], g[-1][1]) if g else (0, 0)
            rows.append(_row(d, i, title if i == 0 else [], offs, lo, hi))
    return pd.DataFrame(rows, columns=COLUMNS)


def check_chunks(docs: list[dict], ch: pd.DataFrame, name: str) -> None:
    """Ranges in order and not overlapping; the text words of each range are the chunk's."""
    by_doc = {d["doc_id"]: d for d in docs}
    assert ch["chunk_id"].is_unique, name
    for doc_id, g in ch.groupby("doc_id", sort=False):
        d = by_doc[doc_id]
        title, text = d["title"].split(), d["text"]
        assert g["chunk_id"].tolist() == [f"{doc_id}#{i}" for i in range(len(g))], (name, doc_id)
        st, en = g["start"].to_numpy(), g["end"].to_numpy()
        assert (st <= en).all() and (st[1:] >= en[:-1]).all() and en[-1] <= len(text), (name, doc_id)
        words, own_words = [], []
        for k, (s, e, piece, n) in enumerate(zip(st, en, g["text"], g["tokens"])):
            own, piece = text[s:e].split(), piece.split()
            assert len(piece) == n and piece[len(piece) - len(own):] == own, (name, doc_id, k)
            words += piece
            own_words += own
        assert own_words == text.split(), (name, doc_id)  # every text word in exactly one chunk
        assert words == title + text.split(), (name, doc_id)  # the title, then the text


def read_spans(spans_path: Path, docs: list[dict]) -> pd.DataFrame:
    sp = pd.read_csv(spans_path, sep="\t", dtype={"query_id": str, "doc_id": str, "label": str})
    texts = {d["doc_id"]: d["text"] for d in docs}
    for r in sp.itertuples():
        text = texts[r.doc_id]
        assert 0 <= r.start < r.end <= len(text), r
        piece = text[r.start:r.end]
        assert piece and piece == piece.strip(), r
    qrels = pd.read_parquet(OUT / "qrels.parquet")
    pairs = set(zip(qrels["query_id"], qrels["doc_id"]))
    assert set(zip(sp["query_id"], sp["doc_id"])) <= pairs
    assert set(sp["label"]) <= {"SUPPORT", "CONTRADICT"}
    sp["relevance"] = 1
    sp = sp[["query_id", "doc_id", "start", "end", "relevance", "label", "rationale", "sentence"]]
    return sp.astype({c: "int64" for c in ("start", "end", "relevance", "rationale", "sentence")})


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


def bm25_run(ch: pd.DataFrame, queries: pd.DataFrame) -> pd.DataFrame:
    return top(bm25(ch["text"].tolist(), queries["text"].tolist()), queries["query_id"].tolist(),
               ch["chunk_id"].to_numpy())


def with_tokens(t: pd.DataFrame, name: str, ch: pd.DataFrame) -> pd.DataFrame:
    t = t[["query_id", "doc_id", "score"]].copy()
    t.insert(0, "system", name)
    t["tokens"] = t["doc_id"].map(ch.set_index("chunk_id")["tokens"]).astype(np.int64)
    return t


def minmax(x: pd.Series) -> pd.Series:
    lo, hi = x.min(), x.max()
    return (x - lo) / (hi - lo) if hi > lo else x * 0.0


def write(df: pd.DataFrame, path: Path) -> None:
    """Plain Arrow types (string, int64, float64), no pandas metadata, zstd level 19.

    Dictionary encoding for the columns with few distinct values, prefix (delta) encoding
    for the chunk ids of a chunk table, byte-stream-split for the scores, plain otherwise:
    the smallest files of the encodings tried.
    """
    table = pa.Table.from_pandas(df, preserve_index=False).replace_schema_metadata(None)
    table = table.cast(pa.schema([pa.field(f.name, pa.string() if pa.types.is_large_string(f.type) else f.type)
                                  for f in table.schema]))
    few = {"chunking", "system", "query_id", "label", "relevance", "rationale", "sentence", "tokens"}
    if "chunking" not in df.columns:  # in a run or the span table, the ids repeat
        few.add("doc_id")
    plain = [c for c in df.columns if c not in few]
    pq.write_table(table, path, compression="zstd", compression_level=19,
                   use_dictionary=[c for c in df.columns if c in few],
                   column_encoding={c: "DELTA_BYTE_ARRAY" if c == "chunk_id" else
                                    "BYTE_STREAM_SPLIT" if c == "score" else "PLAIN" for c in plain})


def main(docs_path: str, spans_path: str | None = None) -> None:
    docs = read_docs(Path(docs_path))
    spans = read_spans(Path(spans_path) if spans_path else Path(docs_path).with_name("evidence_spans.tsv"), docs)
    queries = pd.read_parquet(OUT / "queries.parquet")

    tables = {f"w{w}": window_chunks(docs, w) for w in WINDOWS}
    tables["sent"] = sentence_chunks(docs, SENT_LIMIT)
    for name, ch in tables.items():
        check_chunks(docs, ch, name)
    firsts = {name: bm25_run(ch, queries) for name, ch in tables.items()}

    # chunks.parquet and chunk_runs.parquet: the 48-word chunks
    ch, first = tables[f"w{WINDOW}"], firsts[f"w{WINDOW}"]
    first = first.copy()
    first["page"] = first["doc_id"].map(ch.set_index("chunk_id")["doc_id"])
    runs = pd.read_parquet(OUT / "runs.parquet")
    dense = runs[runs["system"] == "dense_exact"].rename(columns={"doc_id": "page", "score": "dense"})
    rr = first.merge(dense[["query_id", "page", "dense"]], on=["query_id", "page"], how="left")
    rr["dense"] = rr.groupby("query_id")["dense"].transform(minmax).fillna(0.0)
    rr["score"] = 0.5 * rr.groupby("query_id")["score"].transform(minmax) + 0.5 * rr["dense"]
    rr = rr.round({"score": 6})
    run = pd.concat([with_tokens(first, "bm25_chunks", ch), with_tokens(rr, "reranked", ch)], ignore_index=True)
    ch[["chunk_id", "doc_id", "tokens", "start", "end"]].to_parquet(
        OUT / "chunks.parquet", index=False, compression="zstd", compression_level=19)
    run.to_parquet(OUT / "chunk_runs.parquet", index=False, compression="zstd", compression_level=19)
    print(f"{len(ch)} chunks of {ch['doc_id'].nunique()} abstracts; {len(run)} run rows")

    # the span golden set, the five chunkings and their BM25 runs
    write(spans, OUT / "evidence_spans.parquet")
    span_chunks = pd.concat([t.drop(columns="text").assign(chunking=name) for name, t in tables.items()],
                            ignore_index=True)[["chunking", "chunk_id", "doc_id", "start", "end", "tokens"]]
    write(span_chunks, OUT / "span_chunks.parquet")
    span_runs = pd.concat([with_tokens(firsts[name], f"bm25_{name}", tables[name]) for name in tables],
                          ignore_index=True)
    assert span_runs[span_runs["system"] == "bm25_w48"].drop(columns="system").reset_index(drop=True).equals(
        run[run["system"] == "bm25_chunks"].drop(columns="system").reset_index(drop=True))
    write(span_runs, OUT / "span_runs.parquet")
    report(docs, spans, tables, span_runs)


def report(docs: list[dict], spans: pd.DataFrame, tables: dict[str, pd.DataFrame], span_runs: pd.DataFrame) -> None:
    texts = {d["doc_id"]: d["text"] for d in docs}
    n_sent = sum(len(sentences(t)) for t in texts.values())
    cut = {k: sentences(t) for k, t in texts.items()}
    at_start = spans.apply(lambda r: r["start"] in {s for s, _ in cut[r["doc_id"]]}, axis=1)
    at_end = spans.apply(lambda r: r["end"] in {e for _, e in cut[r["doc_id"]]}, axis=1)
    cut_inside = spans.apply(lambda r: any(r["start"] < e < r["end"] for _, e in cut[r["doc_id"]]), axis=1)
    print(f"{len(spans)} spans ({spans['label'].value_counts().to_dict()}), {spans['query_id'].nunique()} claims, "
          f"{spans.groupby(['query_id', 'doc_id']).ngroups} pairs")
    print(f"{n_sent} sentences by SENT_END; spans starting at a sentence start {at_start.sum()}, ending at a "
          f"sentence end {at_end.sum()}, both {(at_start & at_end).sum()} of {len(spans)} "
          f"({(at_start & at_end).mean():.1%}); spans with a sentence end inside {cut_inside.sum()}")
    for r in spans[~(at_start & at_end) | cut_inside].itertuples():
        print(f"  claim {r.query_id} doc {r.doc_id} sentence {r.sentence} [{r.start}, {r.end})")
    for name, ch in tables.items():
        empty = ch[ch["start"] == ch["end"]]
        m = spans.merge(ch, on="doc_id", suffixes=("", "_c"))
        inside = m[(m["start_c"] <= m["start"]) & (m["end"] <= m["end_c"])].groupby(["query_id", "doc_id", "start"]).size()
        hit = m[(m["start_c"] < m["end"]) & (m["start"] < m["end_c"])]
        rows = span_runs[span_runs["system"] == f"bm25_{name}"]
        print(f"{name}: {len(ch)} chunks, tokens {ch['tokens'].min()}-{ch['tokens'].max()} "
              f"(mean {ch['tokens'].mean():.1f}, over 64: {(ch['tokens'] > 64).sum()}), no text word: {len(empty)} "
              f"({empty['tokens'].sum()} title words); spans inside one chunk: {len(inside)} of {len(spans)}; "
              f"chunks holding evidence: {hit['chunk_id'].nunique()}; run rows {len(rows)}, claims with < {DEPTH}: "
              f"{(rows.groupby('query_id').size() < DEPTH).sum()}")
    for f in ("chunks", "chunk_runs", "evidence_spans", "span_chunks", "span_runs"):
        print(f"{f}.parquet: {(OUT / f'{f}.parquet').stat().st_size:,} bytes")


if __name__ == "__main__":
    main(*(sys.argv[1:] or ["/work/shared/data/scifact/docs.jsonl"]))
