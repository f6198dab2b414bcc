"""Bundled example data, loaded offline.

Three small evaluation sets ship inside the package (folder ``data/`` of the
repository, installed as ``evalframe._data``):

- ``load_sso()``: 1 question, 3 judgments (grade 1), 1 system; segment
  column ``segment``.
- ``load_cranfield()``: 225 questions, 1,837 judgments (graded 0-4),
  5 systems; segment columns ``length`` and ``question_form``.
- ``load_scifact()``: 300 claims, 339 judgments (binary), 5 systems; segment
  columns ``length`` and ``claim_label``.
- ``load_scifact_chunks()``: the same claims and judgments (abstract level) with
  two chunk-level runs (top 100 chunks of 48 words, with a ``tokens`` column) and
  the chunk -> abstract map ``chunks`` (with each chunk's character offsets into its
  abstract): a RAG retriever's view of SciFact.
- ``load_scifact_spans()``: the same claims judged by evidence spans (366 rationale
  sentences as character offsets into their abstracts), with BM25 runs over five
  chunkings of the abstracts and each chunking's chunk table: any chunking can be
  scored against one span golden set.

``sso`` is the worked example of the spec "Measuring Retrieval Quality" (one
question, ten returned pages; recall@5 = 0.67, nDCG@10 = 0.62). Cranfield and
SciFact are real test collections with the top 100 results of five real
retrieval systems (``bm25``, ``tfidf``, ``dense_exact``, ``dense_hnsw``,
``hybrid_rrf``). Where each comes from, its licence and how it was converted are
in the dataset's ``provenance`` text.

Every loader returns a :class:`Dataset` of canonical long tables:

- ``qrels``: ``query_id`` (str), ``doc_id`` (str), ``relevance`` (int64);
- ``runs``: ``query_id`` (str), ``doc_id`` (str), ``score`` (float64),
  ``system`` (str), every system in one table;
- ``segments``: ``query_id`` (str) plus one str column per way of grouping
  the questions;
- ``queries``: ``query_id`` (str), ``text`` (str).

Runs carry no rank column: within a (system, query) the rows are stored in
trec_eval's order (score descending, then ``doc_id`` descending for exact ties),
and the rank is the position in that order.

The files are read once and cached; each call hands out fresh copies of the
tables, so changing a returned table never changes what the next call returns.
"""
from __future__ import annotations

__all__ = ["Dataset", "load_sso", "load_cranfield", "load_scifact", "load_scifact_chunks", "load_scifact_spans"]

import functools
from dataclasses import dataclass
from importlib.resources import files

import pandas as pd

_PACKAGE = "evalframe._data"
_QRELS_COLUMNS = ["query_id", "doc_id", "relevance"]
_RUN_COLUMNS = ["query_id", "doc_id", "score", "system"]


@dataclass(frozen=True, eq=False, repr=False)
class Dataset:
    """A bundled evaluation set: golden set, runs, segments and question texts.

    Attributes
    ----------
    name : str
        Short name: ``"sso"``, ``"cranfield"``, ``"scifact"``, ``"scifact_chunks"`` or
        ``"scifact_spans"``.
    qrels : pandas.DataFrame
        Judgments, columns ``query_id`` (str), ``doc_id`` (str),
        ``relevance`` (int64). A document is relevant when ``relevance >= 1``.
        A span golden set (``scifact_spans``) also has ``start`` and ``end`` (int64):
        the judged span is characters ``start:end`` (end exclusive) of the document.
    runs : pandas.DataFrame
        Ranked results of every system, columns ``query_id`` (str), ``doc_id``
        (str), ``score`` (float64), ``system`` (str). Higher score ranks
        first.
    segments : pandas.DataFrame
        One row per question: ``query_id`` (str) plus one str column per
        segmentation.
    queries : pandas.DataFrame
        Question texts, columns ``query_id`` (str), ``text`` (str).
    description : str
        One-paragraph summary.
    provenance : str
        Where the data comes from, its licence and how it was converted
        (the Markdown file shipped with it).
    chunks : pandas.DataFrame, dict of str to pandas.DataFrame, or None
        Only for chunk-level collections: ``chunk_id`` (str), ``doc_id`` (str, the
        page the chunk belongs to), ``tokens`` (int64), ``start`` and ``end`` (int64,
        the chunk's character offsets into its page, end exclusive): the ``rollup=``
        map. When the systems chunk the pages differently (``scifact_spans``), a dict
        from each system's name to its own chunk table, as chunk ids of different
        chunkings name different text.

    Notes
    -----
    The dataclass is frozen, but pandas DataFrames are mutable; the loaders
    therefore return new copies on every call.

    Examples
    --------
    >>> import evalframe as ef
    >>> sso = ef.datasets.load_sso()
    >>> sso
    Dataset(name='sso', queries=1, qrels=3, runs=10, systems=['librarian'], segments=['segment'])
    >>> sso.queries["text"].tolist()
    ['Does the Pro plan include single sign-on?']
    """

    name: str
    qrels: pd.DataFrame
    runs: pd.DataFrame
    segments: pd.DataFrame
    queries: pd.DataFrame
    description: str
    provenance: str
    chunks: pd.DataFrame | dict[str, pd.DataFrame] | None = None

    @property
    def systems(self) -> tuple[str, ...]:
        """Names of the systems in ``runs``, in the order they are stored."""
        return tuple(str(s) for s in pd.unique(self.runs["system"]))

    @property
    def segment_columns(self) -> tuple[str, ...]:
        """Names of the segment columns (every column of ``segments`` but ``query_id``)."""
        return tuple(c for c in self.segments.columns if c != "query_id")

    def __repr__(self) -> str:
        return (
            f"Dataset(name={self.name!r}, queries={len(self.queries)}, "
            f"qrels={len(self.qrels)}, runs={len(self.runs)}, systems={list(self.systems)}, "
            f"segments={list(self.segment_columns)})"
        )


def load_sso() -> Dataset:
    """Load the spec's worked example: one question, three relevant pages, one run.

    The golden set holds the question ``"sso"`` ("Does the Pro plan include
    single sign-on?") with pages ``page-212``, ``page-1140`` and ``page-2306``
    at grade 1. The run ``librarian`` returns ten pages with scores 10 down to
    1; the relevant pages sit at ranks 2, 5 and 9.

    Returns
    -------
    Dataset
        ``qrels`` 3 rows, ``runs`` 10 rows (system ``"librarian"``),
        ``segments`` one row with column ``segment`` = ``"multi-condition"``,
        ``queries`` one row.

    Notes
    -----
    The spec's numbers for this list: recall@3 = 0.33, recall@5 = 0.67,
    recall@10 = 1.00, precision@5 = 0.40, reciprocal rank = 0.50 and
    nDCG@10 = DCG / IDCG = 1.319 / 2.131 = 0.62. The files are plain TREC text
    (``data/sso/qrels.txt``, ``data/sso/run.trec``).

    Examples
    --------
    >>> from evalframe.datasets import load_sso
    >>> sso = load_sso()
    >>> sso.qrels.shape
    (3, 3)
    >>> sso.runs.shape
    (10, 4)
    >>> sso.systems
    ('librarian',)
    >>> sso.runs["doc_id"].head(3).tolist()
    ['enterprise-plan', 'page-212', 'two-factor']
    >>> sorted(sso.qrels["doc_id"])
    ['page-1140', 'page-212', 'page-2306']
    """
    return _copy(_load_sso())


def load_cranfield() -> Dataset:
    """Load Cranfield: 225 aeronautics questions, graded judgments, five runs.

    Returns
    -------
    Dataset
        ``qrels`` 1,837 rows with relevance 0-4 (1,612 with relevance >= 1;
        each question has one judged-non-relevant document, see provenance),
        ``runs`` 112,471 rows from ``bm25``, ``tfidf``, ``dense_exact``,
        ``dense_hnsw`` and ``hybrid_rrf`` (top 100 per question; ``tfidf``
        returns 71 for question ``"192"``), ``segments`` with columns
        ``length`` (``short``/``medium``/``long``) and ``question_form``
        (``wh_question``/``how_question``/``yes_no``/``request``), ``queries``
        225 rows.

    Examples
    --------
    >>> from evalframe.datasets import load_cranfield
    >>> cran = load_cranfield()
    >>> cran.qrels.shape
    (1837, 3)
    >>> cran.runs.shape
    (112471, 4)
    >>> cran.systems
    ('bm25', 'tfidf', 'dense_exact', 'dense_hnsw', 'hybrid_rrf')
    >>> cran.segment_columns
    ('length', 'question_form')
    >>> int((cran.qrels["relevance"] >= 1).sum())
    1612
    """
    return _copy(_load_parquet_collection("cranfield"))


def load_scifact() -> Dataset:
    """Load SciFact: 300 scientific claims, binary judgments, five runs.

    Returns
    -------
    Dataset
        ``qrels`` 339 rows, all relevance 1 (the abstracts each claim cites),
        ``runs`` 149,747 rows from ``bm25``, ``tfidf``, ``dense_exact``,
        ``dense_hnsw`` and ``hybrid_rrf`` (top 100 per claim; the lexical runs
        return fewer for a few claims), ``segments`` with columns ``length``
        (``short``/``medium``/``long``) and ``claim_label``
        (``support``/``contradict``/``no_rationale``), ``queries`` 300 rows.

    Examples
    --------
    >>> from evalframe.datasets import load_scifact
    >>> sci = load_scifact()
    >>> sci.qrels.shape
    (339, 3)
    >>> sci.runs.shape
    (149747, 4)
    >>> sci.segments["claim_label"].value_counts().to_dict()
    {'support': 124, 'no_rationale': 112, 'contradict': 64}
    """
    return _copy(_load_parquet_collection("scifact"))


def load_scifact_chunks() -> Dataset:
    """Load SciFact as a RAG retriever sees it: chunks of abstracts, judged at abstract level.

    Every abstract (title first) is cut into windows of 48 words, ``<doc_id>#<i>``
    (25,799 chunks of 5,183 abstracts); the runs are made offline by
    ``scripts/make_scifact_chunks.py`` (BM25 over the chunks, and a reranker mixing
    in the bundled ``dense_exact`` abstract scores; see ``provenance``).

    Returns
    -------
    Dataset
        ``qrels``, ``segments`` and ``queries`` of :func:`load_scifact` (the golden
        set is at abstract = page level); ``runs`` 60,000 rows, systems
        ``bm25_chunks`` and ``reranked`` (top 100 chunks per claim), columns
        ``query_id, doc_id`` (a chunk id), ``score, system, tokens``; ``chunks``
        the chunk -> abstract map ``chunk_id, doc_id, tokens, start, end``: ``start``
        and ``end`` are the chunk's character offsets into the abstract's text (end
        exclusive; the title words the first chunk begins with are not part of the
        text), the coordinates of :func:`load_scifact_spans`' spans.

    Examples
    --------
    >>> from evalframe.datasets import load_scifact_chunks
    >>> rag = load_scifact_chunks()
    >>> rag.runs.shape, rag.chunks.shape
    ((60000, 5), (25799, 5))
    >>> rag.systems
    ('bm25_chunks', 'reranked')
    """
    return _copy(_load_chunks())


def load_scifact_spans() -> Dataset:
    """Load SciFact with a span golden set and runs over five chunkings of the abstracts.

    The golden set is the annotators' rationale sentences, each a character span
    ``start:end`` (end exclusive) of its abstract's text: 366 spans (235 SUPPORT, 131
    CONTRADICT) of 209 (claim, abstract) pairs, 188 claims. The abstracts are chunked
    five ways, each chunk knowing its character offsets into the same text: windows of
    32, 48, 64 and 128 words (title first) and whole sentences packed up to 64 words;
    the runs are BM25 over each chunking (top 100 chunks per claim), made offline by
    ``scripts/make_scifact_chunks.py`` (see ``provenance``). ``bm25_w48`` is
    :func:`load_scifact_chunks`' ``bm25_chunks``.

    Returns
    -------
    Dataset
        ``qrels`` 366 rows, columns ``query_id, doc_id, start, end, relevance, label``
        (relevance 1 for every span; ``label`` SUPPORT or CONTRADICT); ``runs`` 150,000
        rows, systems ``bm25_w32``, ``bm25_w48``, ``bm25_w64``, ``bm25_w128`` and
        ``bm25_sent``, columns ``query_id, doc_id`` (a chunk id), ``score, system,
        tokens``; ``chunks`` a dict from each system to its chunk table ``chunk_id,
        doc_id, start, end, tokens`` (chunk ids ``<doc_id>#<i>`` repeat across
        chunkings with different text, hence one table per system); ``segments`` and
        ``queries`` of :func:`load_scifact`.

    Examples
    --------
    >>> from evalframe.datasets import load_scifact_spans
    >>> spans = load_scifact_spans()
    >>> spans.qrels.shape, spans.runs.shape
    ((366, 6), (150000, 5))
    >>> spans.systems
    ('bm25_w32', 'bm25_w48', 'bm25_w64', 'bm25_w128', 'bm25_sent')
    >>> {system: table.shape for system, table in spans.chunks.items()}  # doctest: +NORMALIZE_WHITESPACE
    {'bm25_w32': (37298, 5), 'bm25_w48': (25799, 5), 'bm25_w64': (20044, 5),
     'bm25_w128': (11453, 5), 'bm25_sent': (23041, 5)}
    """
    return _copy(_load_spans())


_OFFSETS = {"start": "int64", "end": "int64"}


@functools.cache
def _load_chunks() -> Dataset:
    base = _load_parquet_collection("scifact")
    runs = _read_parquet("scifact", "chunk_runs.parquet")
    runs = _canonical_runs(runs).assign(tokens=runs["tokens"].astype("int64").to_numpy())
    chunks = _as_str(_read_parquet("scifact", "chunks.parquet"), ["chunk_id", "doc_id"])
    return Dataset(name="scifact_chunks", qrels=base.qrels, runs=runs, segments=base.segments,
                   queries=base.queries, description=_DESCRIPTIONS["scifact_chunks"],
                   provenance=base.provenance,
                   chunks=chunks.astype({"tokens": "int64", **_OFFSETS}))


@functools.cache
def _load_spans() -> Dataset:
    base = _load_parquet_collection("scifact")
    spans = _read_parquet("scifact", "evidence_spans.parquet")
    qrels = _as_str(spans[["query_id", "doc_id", "start", "end", "relevance", "label"]],
                    ["query_id", "doc_id", "label"]).astype({**_OFFSETS, "relevance": "int64"})
    runs = _read_parquet("scifact", "span_runs.parquet")
    runs = _canonical_runs(runs).assign(tokens=runs["tokens"].astype("int64").to_numpy())
    table = _read_parquet("scifact", "span_chunks.parquet")
    chunks = {}
    for chunking, t in table.groupby("chunking", sort=False):
        t = _as_str(t[["chunk_id", "doc_id", "start", "end", "tokens"]], ["chunk_id", "doc_id"])
        chunks[f"bm25_{chunking}"] = t.astype({**_OFFSETS, "tokens": "int64"}).reset_index(drop=True)
    return Dataset(name="scifact_spans", qrels=qrels.reset_index(drop=True), runs=runs,
                   segments=base.segments, queries=base.queries,
                   description=_DESCRIPTIONS["scifact_spans"], provenance=base.provenance, chunks=chunks)


_DESCRIPTIONS = {
    "sso": (
        "Worked example of the spec 'Measuring Retrieval Quality': the question "
        "'Does the Pro plan include single sign-on?', three relevant pages (grade 1) "
        "and the Librarian's ten results, with relevant pages at ranks 2, 5 and 9."
    ),
    "cranfield": (
        "Cranfield II: 1,400 aeronautics abstracts, 225 questions, 1,837 graded "
        "judgments (0-4), top-100 runs of five systems (bm25, tfidf, dense_exact, "
        "dense_hnsw, hybrid_rrf). Research/teaching data with no explicit licence."
    ),
    "scifact_chunks": (
        "SciFact cut into chunks of 48 words (25,799 chunks of 5,183 abstracts), 300 claims "
        "judged at abstract level, top-100 chunk runs of bm25_chunks and reranked, with "
        "token counts; the chunk -> abstract map is `chunks`."
    ),
    "scifact_spans": (
        "SciFact with a span golden set: 366 rationale sentences (character offsets into "
        "their abstracts) of 209 (claim, abstract) pairs, 188 claims; top-100 BM25 runs over "
        "five chunkings of the 5,183 abstracts (windows of 32, 48, 64, 128 words and "
        "sentences packed up to 64 words), each with its chunk table in `chunks`."
    ),
    "scifact": (
        "SciFact (BEIR test split): 5,183 biomedical abstracts, 300 claims, 339 binary "
        "judgments, top-100 runs of five systems (bm25, tfidf, dense_exact, dense_hnsw, "
        "hybrid_rrf). Claims CC BY 4.0, abstracts ODC-By 1.0."
    ),
}


def _resource(name: str, filename: str):
    return files(_PACKAGE).joinpath(name, filename)


def _read_parquet(name: str, filename: str) -> pd.DataFrame:
    with _resource(name, filename).open("rb") as fh:
        return pd.read_parquet(fh)


def _read_text(name: str, filename: str) -> str:
    return _resource(name, filename).read_text(encoding="utf-8")


def _read_tsv(name: str, filename: str) -> pd.DataFrame:
    with _resource(name, filename).open("rb") as fh:
        return pd.read_csv(fh, sep="\t", dtype=str, keep_default_na=False, quoting=3)


def _read_whitespace(name: str, filename: str, columns: list[str]) -> pd.DataFrame:
    with _resource(name, filename).open("rb") as fh:
        return pd.read_csv(fh, sep=r"\s+", header=None, names=columns, dtype=str)


def _as_str(df: pd.DataFrame, columns) -> pd.DataFrame:
    return df.astype({c: str for c in columns})


def _canonical_qrels(df: pd.DataFrame) -> pd.DataFrame:
    df = _as_str(df[_QRELS_COLUMNS], ["query_id", "doc_id"])
    return df.astype({"relevance": "int64"}).reset_index(drop=True)


def _canonical_runs(df: pd.DataFrame) -> pd.DataFrame:
    df = _as_str(df[_RUN_COLUMNS], ["query_id", "doc_id", "system"])
    return df.astype({"score": "float64"}).reset_index(drop=True)


@functools.cache
def _load_sso() -> Dataset:
    qrels = _read_whitespace("sso", "qrels.txt", ["query_id", "iteration", "doc_id", "relevance"])
    runs = _read_whitespace("sso", "run.trec", ["query_id", "q0", "doc_id", "rank", "score", "system"])
    segments = _read_tsv("sso", "segments.tsv")
    queries = _read_tsv("sso", "queries.tsv")
    return Dataset(
        name="sso",
        qrels=_canonical_qrels(qrels),
        runs=_canonical_runs(runs),
        segments=_as_str(segments, segments.columns),
        queries=_as_str(queries[["query_id", "text"]], ["query_id", "text"]),
        description=_DESCRIPTIONS["sso"],
        provenance=_read_text("sso", "README.md"),
    )


@functools.cache
def _load_parquet_collection(name: str) -> Dataset:
    segments = _read_parquet(name, "segments.parquet")
    return Dataset(
        name=name,
        qrels=_canonical_qrels(_read_parquet(name, "qrels.parquet")),
        runs=_canonical_runs(_read_parquet(name, "runs.parquet")),
        segments=_as_str(segments, segments.columns),
        queries=_as_str(_read_parquet(name, "queries.parquet")[["query_id", "text"]], ["query_id", "text"]),
        description=_DESCRIPTIONS[name],
        provenance=_read_text(name, "PROVENANCE.md"),
    )


def _copy(ds: Dataset) -> Dataset:
    return Dataset(
        name=ds.name,
        qrels=ds.qrels.copy(deep=True),
        runs=ds.runs.copy(deep=True),
        segments=ds.segments.copy(deep=True),
        queries=ds.queries.copy(deep=True),
        description=ds.description,
        provenance=ds.provenance,
        chunks=_copy_chunks(ds.chunks),
    )


def _copy_chunks(chunks):
    if chunks is None:
        return None
    if isinstance(chunks, dict):
        return {system: table.copy(deep=True) for system, table in chunks.items()}
    return chunks.copy(deep=True)
