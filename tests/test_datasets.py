"""Tests for evalframe.datasets: the bundled example data and its loaders.

The expected counts come from the PROVENANCE files shipped with the data
(data/cranfield/PROVENANCE.md, data/scifact/PROVENANCE.md) and from the spec's
worked example (data/sso/README.md). Nothing here reads outside the package.
"""
from __future__ import annotations

import dataclasses
import doctest
import hashlib
import math
from importlib.resources import files

import numpy as np
import pandas as pd
import pytest

import evalframe.datasets as datasets
from evalframe.datasets import Dataset, load_cranfield, load_scifact, load_sso

LOADERS = {"sso": load_sso, "cranfield": load_cranfield, "scifact": load_scifact}
SYSTEMS = ("bm25", "tfidf", "dense_exact", "dense_hnsw", "hybrid_rrf")
SPEC_RUN = [
    "enterprise-plan", "page-212", "two-factor", "saml-errors", "page-1140",
    "password-reset", "basic-plan", "release-notes", "page-2306", "invite-team",
]
SPEC_RELEVANT = {"page-212", "page-1140", "page-2306"}

# name -> (queries, judgments, judgments with relevance >= 1, run rows, segment columns)
EXPECTED = {
    "sso": (1, 3, 3, 10, ("segment",)),
    "cranfield": (225, 1837, 1612, 112471, ("length", "question_form")),
    "scifact": (300, 339, 339, 149747, ("length", "claim_label")),
}
# (system, query_id) -> number of results, where a run returns fewer than 100
SHORT_RESULTS = {
    "cranfield": {("tfidf", "192"): 71},
    "scifact": {("bm25", "768"): 66, ("tfidf", "880"): 42, ("tfidf", "115"): 44,
                ("tfidf", "768"): 45, ("tfidf", "198"): 50},
}
_RUN_COLUMNS = ["query_id", "doc_id", "score", "system"]
SEGMENT_LABELS = {
    "segment": {"multi-condition"},
    "length": {"short", "medium", "long"},
    "question_form": {"wh_question", "how_question", "yes_no", "request"},
    "claim_label": {"support", "contradict", "no_rationale"},
}


@pytest.fixture(scope="module", params=list(LOADERS))
def ds(request) -> Dataset:
    return LOADERS[request.param]()


def _is_str_column(s: pd.Series) -> bool:
    return pd.api.types.is_string_dtype(s.dtype) and all(type(v) is str for v in s)


# --- shapes and dtypes -------------------------------------------------------


def test_shapes_and_counts(ds):
    n_queries, n_qrels, n_relevant, n_run_rows, seg_cols = EXPECTED[ds.name]
    assert ds.qrels.shape == (n_qrels, 3)
    assert ds.runs.shape == (n_run_rows, 4)
    assert ds.queries.shape == (n_queries, 2)
    assert ds.segments.shape == (n_queries, 1 + len(seg_cols))
    assert ds.qrels["query_id"].nunique() == n_queries
    assert int((ds.qrels["relevance"] >= 1).sum()) == n_relevant
    assert ds.segment_columns == seg_cols


def test_columns_and_dtypes(ds):
    assert list(ds.qrels.columns) == ["query_id", "doc_id", "relevance"]
    assert list(ds.runs.columns) == ["query_id", "doc_id", "score", "system"]
    assert list(ds.queries.columns) == ["query_id", "text"]
    assert list(ds.segments.columns) == ["query_id", *EXPECTED[ds.name][4]]
    for table, cols in [(ds.qrels, ["query_id", "doc_id"]), (ds.runs, ["query_id", "doc_id", "system"]),
                        (ds.queries, ["query_id", "text"]), (ds.segments, list(ds.segments.columns))]:
        for col in cols:
            assert _is_str_column(table[col]), (ds.name, col, table[col].dtype)
    assert ds.qrels["relevance"].dtype == np.dtype("int64")
    assert ds.runs["score"].dtype == np.dtype("float64")
    # every loader uses one and the same string dtype
    assert ds.qrels["query_id"].dtype == pd.Series(["x"]).astype(str).dtype


def test_no_missing_values_or_blank_ids(ds):
    for table in (ds.qrels, ds.runs, ds.segments, ds.queries):
        assert not table.isna().any().any()
    for table in (ds.qrels, ds.runs):
        for col in ("query_id", "doc_id"):
            assert (table[col].str.strip() == table[col]).all()
            assert (table[col] != "").all()
    assert (ds.queries["text"].str.len() > 0).all()


def test_index_is_a_plain_range(ds):
    for table in (ds.qrels, ds.runs, ds.segments, ds.queries):
        assert table.index.equals(pd.RangeIndex(len(table)))


# --- consistency between tables ---------------------------------------------


def test_qrels_have_one_row_per_pair_and_sensible_grades(ds):
    assert not ds.qrels.duplicated(["query_id", "doc_id"]).any()
    assert ds.qrels["relevance"].between(0, 4).all()
    # every question has at least one relevant document
    assert ds.qrels.groupby("query_id")["relevance"].max().min() >= 1


def test_queries_qrels_and_segments_cover_the_same_questions(ds):
    golden = set(ds.qrels["query_id"])
    assert set(ds.queries["query_id"]) == golden
    assert ds.queries["query_id"].is_unique
    assert ds.segments["query_id"].is_unique
    assert set(ds.segments["query_id"]) == golden


def test_segment_labels(ds):
    for col in ds.segment_columns:
        assert set(ds.segments[col]) <= SEGMENT_LABELS[col], col


def test_every_run_question_is_in_the_golden_set_and_every_system_answers_all(ds):
    golden = set(ds.qrels["query_id"])
    assert set(ds.runs["query_id"]) <= golden
    for system, per_system in ds.runs.groupby("system"):
        assert set(per_system["query_id"]) == golden, system


def test_runs_have_no_duplicate_documents(ds):
    assert not ds.runs.duplicated(["system", "query_id", "doc_id"]).any()


def test_runs_are_stored_in_trec_eval_order(ds):
    """Score descending, then doc_id descending (byte-wise) for ties: rank = row position."""
    runs = ds.runs
    key = runs.assign(_doc=[d.encode() for d in runs["doc_id"]], _pos=np.arange(len(runs)))
    ordered = key.sort_values(["score", "_doc"], ascending=[False, False], kind="stable")
    ordered = ordered.sort_values(["system", "query_id"], kind="stable")
    stored = key.sort_values(["system", "query_id"], kind="stable")
    assert ordered["_pos"].tolist() == stored["_pos"].tolist()
    # and each (system, query) is one contiguous block
    block = runs["system"] + "\x00" + runs["query_id"]
    assert (block != block.shift()).sum() == block.nunique()


# --- Cranfield and SciFact ----------------------------------------------------


@pytest.mark.parametrize("name", ["cranfield", "scifact"])
def test_five_systems_with_top_100_except_the_documented_queries(name):
    ds = LOADERS[name]()
    assert ds.systems == SYSTEMS
    sizes = ds.runs.groupby(["system", "query_id"]).size()
    short = {key: int(n) for key, n in sizes.items() if n != 100}
    assert short == SHORT_RESULTS[name]
    assert len(sizes) == len(SYSTEMS) * EXPECTED[name][0]


def test_cranfield_grades():
    counts = load_cranfield().qrels["relevance"].value_counts().to_dict()
    assert counts == {0: 225, 1: 363, 2: 734, 3: 387, 4: 128}
    # exactly one judged-non-relevant document per question (the −1 code)
    zero = load_cranfield().qrels.query("relevance == 0")
    assert zero["query_id"].is_unique and len(zero) == 225


def test_scifact_is_binary():
    assert set(load_scifact().qrels["relevance"]) == {1}


@pytest.mark.parametrize("name", ["cranfield", "scifact"])
def test_ties_occur_where_documented(name):
    runs = LOADERS[name]().runs
    tied = runs.duplicated(["system", "query_id", "score"], keep=False)
    by_system = tied.groupby(runs["system"]).sum()
    assert by_system["tfidf"] == 0
    assert by_system["hybrid_rrf"] > 1000
    assert by_system["bm25"] > 0


@pytest.mark.parametrize("name", ["cranfield", "scifact"])
def test_bundled_qrels_text_matches_the_parquet(name):
    text = files("evalframe._data").joinpath(name, "qrels.txt").read_text(encoding="utf-8")
    rows = [line.split() for line in text.splitlines()]
    expected = [(q, d, int(r)) for q, _, d, r in rows]
    qrels = LOADERS[name]().qrels
    assert list(zip(qrels["query_id"], qrels["doc_id"], qrels["relevance"].tolist())) == expected


# --- SSO: the spec's worked example ------------------------------------------


def test_sso_holds_exactly_the_spec_example():
    ds = load_sso()
    assert ds.queries.to_dict("records") == [
        {"query_id": "sso", "text": "Does the Pro plan include single sign-on?"}
    ]
    assert set(ds.qrels["doc_id"]) == SPEC_RELEVANT
    assert ds.qrels["relevance"].tolist() == [1, 1, 1]
    assert set(ds.runs["system"]) == {"librarian"}
    assert set(ds.runs["query_id"]) == {"sso"}
    by_score = ds.runs.sort_values("score", ascending=False)["doc_id"].tolist()
    assert by_score == SPEC_RUN
    assert ds.runs["doc_id"].tolist() == SPEC_RUN
    assert (np.diff(ds.runs["score"].to_numpy()) < 0).all()  # strictly decreasing: no ties
    assert ds.runs["score"].tolist() == [float(s) for s in range(10, 0, -1)]
    assert ds.segments.to_dict("records") == [{"query_id": "sso", "segment": "multi-condition"}]


def test_sso_run_file_ranks_match_the_spec_order():
    text = files("evalframe._data").joinpath("sso", "run.trec").read_text(encoding="utf-8")
    rows = [line.split() for line in text.splitlines()]
    assert [r[2] for r in rows] == SPEC_RUN
    assert [int(r[3]) for r in rows] == list(range(1, 11))
    assert {r[1] for r in rows} == {"Q0"}


def test_sso_gives_the_spec_numbers_with_simple_loops():
    ds = load_sso()
    ranked = ds.runs.sort_values("score", ascending=False)["doc_id"].tolist()
    grades = dict(zip(ds.qrels["doc_id"], ds.qrels["relevance"]))
    relevant = {d for d, g in grades.items() if g >= 1}

    def hits(k):
        return sum(d in relevant for d in ranked[:k])

    assert round(hits(3) / len(relevant), 2) == 0.33
    assert round(hits(5) / len(relevant), 2) == 0.67
    assert hits(10) / len(relevant) == 1.0
    assert hits(5) / 5 == 0.4
    assert 1 / next(i for i, d in enumerate(ranked, 1) if d in relevant) == 0.5
    dcg = sum((2 ** grades.get(d, 0) - 1) / math.log2(i + 1) for i, d in enumerate(ranked[:10], 1))
    ideal = sorted(grades.values(), reverse=True)[:10]
    idcg = sum((2**g - 1) / math.log2(i + 1) for i, g in enumerate(ideal, 1))
    assert (round(dcg, 3), round(idcg, 3), round(dcg / idcg, 2)) == (1.319, 2.131, 0.62)


# --- immutability and copies ---------------------------------------------------


@pytest.mark.parametrize("name", list(LOADERS))
def test_returned_tables_are_fresh_copies(name):
    load = LOADERS[name]
    first = load()
    before = {f: getattr(first, f).copy(deep=True) for f in ("qrels", "runs", "segments", "queries")}
    first.qrels.loc[0, "relevance"] = 99
    first.qrels.loc[0, "doc_id"] = "changed"
    first.runs["score"] = 0.0
    first.runs.loc[first.runs.index[:3], "doc_id"] = "changed"
    first.segments.iloc[0, 1] = "changed"
    first.queries["text"] = "changed"
    first.queries["extra"] = 1
    second = load()
    for field, table in before.items():
        pd.testing.assert_frame_equal(getattr(second, field), table)
    assert second.qrels is not load().qrels


def test_dataset_is_frozen():
    ds = load_sso()
    with pytest.raises(dataclasses.FrozenInstanceError):
        ds.qrels = ds.qrels.head(1)  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        ds.name = "other"  # type: ignore[misc]


def test_description_and_provenance(ds):
    assert ds.description
    assert ds.name in {"sso", "cranfield", "scifact"}
    assert repr(ds).startswith(f"Dataset(name={ds.name!r}")
    if ds.name == "sso":
        assert "R@5" in ds.provenance and "0.62" in ds.provenance
    else:
        assert "License" in ds.provenance and "What evalframe bundles" in ds.provenance


# --- public surface ------------------------------------------------------------


def test_public_surface():
    assert datasets.__all__ == ["Dataset", "load_sso", "load_cranfield", "load_scifact", "load_scifact_chunks",
                                "load_scifact_spans"]


def test_docstring_examples_run():
    result = doctest.testmod(datasets, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted >= 10
    assert result.failed == 0


def test_scifact_chunks_are_consistent():
    rag = datasets.load_scifact_chunks()
    sci = datasets.load_scifact()
    assert rag.runs.shape == (60_000, 5) and rag.systems == ("bm25_chunks", "reranked")
    pd.testing.assert_frame_equal(rag.qrels, sci.qrels)
    tokens = rag.chunks.set_index("chunk_id")["tokens"]
    assert rag.chunks["chunk_id"].is_unique and rag.runs["doc_id"].isin(tokens.index).all()
    assert (rag.runs["tokens"].to_numpy() == tokens.loc[rag.runs["doc_id"]].to_numpy()).all()
    assert (rag.chunks["chunk_id"].str.split("#").str[0] == rag.chunks["doc_id"]).all()
    assert set(sci.qrels["doc_id"]) <= set(rag.chunks["doc_id"]) and rag.chunks["doc_id"].nunique() == 5183
    assert rag.chunks["tokens"].between(1, 48).all()
    # the same 100 chunks per claim for both systems (the reranker reorders them)
    a, b = (rag.runs[rag.runs.system == s].groupby("query_id")["doc_id"].apply(frozenset) for s in rag.systems)
    assert a.equals(b) and rag.runs.groupby(["system", "query_id"]).size().eq(100).all()
    rag.chunks.loc[0, "tokens"] = -1
    assert datasets.load_scifact_chunks().chunks.loc[0, "tokens"] > 0  # fresh copies


# --- SciFact spans: a span golden set and five chunkings (data/scifact/PROVENANCE.md) ---

SPAN_SYSTEMS = ("bm25_w32", "bm25_w48", "bm25_w64", "bm25_w128", "bm25_sent")
# system -> (chunks, chunks holding no text word, spans inside a single chunk)
SPAN_CHUNKS = {"bm25_w32": (37_298, 9, 74), "bm25_w48": (25_799, 0, 166), "bm25_w64": (20_044, 0, 214),
               "bm25_w128": (11_453, 0, 285), "bm25_sent": (23_041, 0, 364)}
# sha256 of "chunk_id doc_id tokens" lines of chunks.parquet before the offsets were added
CHUNKS_DIGEST = "eb5f9b36ce9532a0ae354c4880a20af46aba93ebca07ce88f889b92236d0e597"
WIDTH = {"bm25_w32": 32, "bm25_w48": 48, "bm25_w64": 64, "bm25_w128": 128}


@pytest.fixture(scope="module")
def spans() -> Dataset:
    return datasets.load_scifact_spans()


def _chunk_index(t: pd.DataFrame) -> np.ndarray:
    return t["chunk_id"].str.split("#").str[1].astype("int64").to_numpy()


def test_scifact_spans_shapes_and_dtypes(spans):
    sci = load_scifact()
    q = spans.qrels
    assert spans.name == "scifact_spans" and spans.description and "evidence_spans.parquet" in spans.provenance
    assert list(q.columns) == ["query_id", "doc_id", "start", "end", "relevance", "label"]
    assert all(_is_str_column(q[c]) for c in ("query_id", "doc_id", "label"))
    assert all(q[c].dtype == np.int64 for c in ("start", "end", "relevance"))
    assert q.shape == (366, 6) and (q["relevance"] == 1).all() and (q["start"] < q["end"]).all()
    assert (q["start"] >= 0).all() and not q.duplicated(["query_id", "doc_id", "start"]).any()
    assert q["label"].value_counts().to_dict() == {"SUPPORT": 235, "CONTRADICT": 131}
    assert q["query_id"].nunique() == 188 and q.groupby(["query_id", "doc_id"]).ngroups == 209
    assert set(zip(q["query_id"], q["doc_id"])) <= set(zip(sci.qrels["query_id"], sci.qrels["doc_id"]))
    pd.testing.assert_frame_equal(spans.queries, sci.queries)
    pd.testing.assert_frame_equal(spans.segments, sci.segments)

    r = spans.runs
    assert list(r.columns) == _RUN_COLUMNS + ["tokens"] and r.shape == (150_000, 5)
    assert all(_is_str_column(r[c]) for c in ("query_id", "doc_id", "system"))
    assert r["score"].dtype == np.float64 and r["tokens"].dtype == np.int64
    assert spans.systems == SPAN_SYSTEMS and (r.groupby(["system", "query_id"]).size() == 100).all()
    assert set(r["query_id"]) == set(sci.queries["query_id"]) and (r["score"] > 0).all()
    # trec_eval's order within each (system, claim): score descending
    same = r["system"].eq(r["system"].shift()) & r["query_id"].eq(r["query_id"].shift())
    assert (r["score"].diff()[same] <= 0).all()

    assert isinstance(spans.chunks, dict) and tuple(spans.chunks) == SPAN_SYSTEMS
    for system, t in spans.chunks.items():
        assert list(t.columns) == ["chunk_id", "doc_id", "start", "end", "tokens"], system
        assert _is_str_column(t["chunk_id"]) and _is_str_column(t["doc_id"])
        assert all(t[c].dtype == np.int64 for c in ("start", "end", "tokens")), system
        assert len(t) == SPAN_CHUNKS[system][0] and t["chunk_id"].is_unique, system
        assert t["doc_id"].nunique() == 5183 and (t["tokens"] >= 1).all(), system
        # every retrieved chunk is in the system's own table, with its token count
        run = r[r["system"] == system]
        tokens = t.set_index("chunk_id")["tokens"]
        assert run["doc_id"].isin(tokens.index).all(), system
        assert (run["tokens"].to_numpy() == tokens.loc[run["doc_id"]].to_numpy()).all(), system


def test_scifact_span_chunks_in_order_without_overlap(spans):
    for system, t in spans.chunks.items():
        assert (t["chunk_id"].str.split("#").str[0] == t["doc_id"]).all(), system
        by_doc = t.groupby("doc_id", sort=False)
        # a document's chunks are consecutive rows numbered 0, 1, ... in text order
        assert t["doc_id"].ne(t["doc_id"].shift()).sum() == t["doc_id"].nunique(), system
        assert (_chunk_index(t) == by_doc.cumcount().to_numpy()).all(), system
        assert (t["start"] >= 0).all() and (t["start"] <= t["end"]).all(), system
        previous_end = by_doc["end"].shift()
        assert (t["start"][previous_end.notna()] >= previous_end.dropna()).all(), system
        # chunks holding no word of the text: title-only first chunks, empty ranges at 0
        empty = t[t["start"] == t["end"]]
        assert len(empty) == SPAN_CHUNKS[system][1], system
        assert (empty["start"] == 0).all() and (_chunk_index(empty) == 0).all(), system
        if system in WIDTH:  # full windows but for each document's last
            last = by_doc.cumcount(ascending=False).to_numpy() == 0
            assert (t["tokens"][~last] == WIDTH[system]).all() and (t["tokens"] <= WIDTH[system]).all()
    assert (spans.chunks["bm25_sent"]["tokens"] > 64).sum() == 304  # one long sentence, or title + sentence


def test_scifact_span_window_offsets_agree_across_chunkings(spans):
    # a window of 2w words holds the windows 2k and 2k + 1 of w words: same text range
    for small, large in (("bm25_w32", "bm25_w64"), ("bm25_w64", "bm25_w128")):
        s, big = spans.chunks[small].copy(), spans.chunks[large]
        s = s[s["start"] < s["end"]]  # the ranges of title-only chunks are empty
        s["parent"] = s["doc_id"] + "#" + (_chunk_index(s) // 2).astype(str)
        union = s.groupby("parent").agg(start=("start", "min"), end=("end", "max"))
        b = big[big["start"] < big["end"]].set_index("chunk_id")
        assert b.index.sort_values().equals(union.index.sort_values())
        assert (b[["start", "end"]] == union.loc[b.index, ["start", "end"]]).all().all()


def test_scifact_spans_lie_within_their_documents_chunks(spans):
    q = spans.qrels
    for system, t in spans.chunks.items():
        extent = t.groupby("doc_id").agg(lo=("start", "min"), hi=("end", "max"))
        m = q.join(extent, on="doc_id")
        assert m["lo"].notna().all(), system
        assert ((m["lo"] <= m["start"]) & (m["end"] <= m["hi"])).all(), system
        # spans that fit in a single chunk of this chunking
        pairs = q.reset_index().merge(t, on="doc_id", suffixes=("", "_chunk"))
        inside = pairs[(pairs["start_chunk"] <= pairs["start"]) & (pairs["end"] <= pairs["end_chunk"])]
        assert inside["index"].nunique() == SPAN_CHUNKS[system][2], system


def test_scifact_spans_w48_is_the_chunk_collection(spans):
    rag = datasets.load_scifact_chunks()
    assert list(rag.chunks.columns) == ["chunk_id", "doc_id", "tokens", "start", "end"]
    pd.testing.assert_frame_equal(spans.chunks["bm25_w48"], rag.chunks[["chunk_id", "doc_id", "start", "end", "tokens"]])
    w48 = spans.runs[spans.runs["system"] == "bm25_w48"].drop(columns="system").reset_index(drop=True)
    first = rag.runs[rag.runs["system"] == "bm25_chunks"].drop(columns="system").reset_index(drop=True)
    pd.testing.assert_frame_equal(w48, first, check_exact=True)


def test_scifact_chunk_files_unchanged_by_offsets():
    # adding the offsets left chunk_runs.parquet byte for byte and chunks.parquet's first columns as they were
    folder = files("evalframe._data").joinpath("scifact")
    runs = folder.joinpath("chunk_runs.parquet").read_bytes()
    assert hashlib.sha256(runs).hexdigest() == "5df70d0ddfb1a6a44c60762eb5652085ae47e24fcd8186b217de8c7b55ad0c76"
    chunks = datasets.load_scifact_chunks().chunks
    text = "\n".join(f"{c} {d} {t}" for c, d, t in zip(chunks["chunk_id"], chunks["doc_id"], chunks["tokens"]))
    assert hashlib.sha256(text.encode()).hexdigest() == CHUNKS_DIGEST


def test_scifact_spans_fresh_copies():
    spans = datasets.load_scifact_spans()
    spans.chunks["bm25_w32"].loc[0, "start"] = -1
    spans.chunks.pop("bm25_sent")
    spans.qrels.loc[0, "start"] = -1
    again = datasets.load_scifact_spans()
    assert again.chunks["bm25_w32"].loc[0, "start"] == 0 and "bm25_sent" in again.chunks
    assert again.qrels.loc[0, "start"] == 476
