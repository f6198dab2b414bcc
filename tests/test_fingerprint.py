"""Fingerprints (evalframe/_fingerprint.py): a report records hashes of its golden set,
runs, conventions and measures and the evalframe version; they survive CSV / Parquet and
read_report, are shown in report.html and report.md, and change exactly when their input
changes (row order and id dtype do not count)."""
from __future__ import annotations

import hashlib
import json
import warnings

import pandas as pd
import pytest

import evalframe as ef
from evalframe._fingerprint import digest_path, digest_table


@pytest.fixture(scope="module")
def cran():
    return ef.datasets.load_cranfield()


def _report(runs, qrels, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ef.report(runs, qrels, measures=["R@10", "nDCG@10"], n_resamples=50, **kw)


@pytest.fixture(scope="module")
def rep(cran):
    return _report(cran.runs, cran.qrels)


def test_what_is_recorded(rep, cran):
    fp = rep.metadata["fingerprints"]
    assert set(fp) == {"golden_set", "runs", "chunks", "conventions", "measures", "evalframe_version"}
    assert set(fp["runs"]) == set(cran.runs.system.unique()) and fp["chunks"] is None
    assert fp["evalframe_version"] == ef.__version__
    # the golden set's hash is its sorted (query_id, doc_id, relevance) as text, hashed here
    # with the standard library alone, column by column (Arrow's offsets and bytes)
    q = cran.qrels[["query_id", "doc_id", "relevance"]].astype(str).sort_values(["query_id", "doc_id", "relevance"])
    h = hashlib.sha256(json.dumps(["query_id", "doc_id", "relevance"]).encode())
    for c in q.columns:
        data = "".join(q[c]).encode()
        ends, pos = [0], 0
        for v in q[c]:
            pos += len(v.encode())
            ends.append(pos)
        h.update(pd.Series(ends, dtype="int64").to_numpy().tobytes())
        h.update(data)
    assert fp["golden_set"] == h.hexdigest()[:16]


def test_order_and_id_dtype_do_not_count_changes_do(rep, cran):
    fp = rep.metadata["fingerprints"]
    shuffled = _report(cran.runs.sample(frac=1, random_state=1), cran.qrels.sample(frac=1, random_state=2))
    assert shuffled.metadata["fingerprints"] == fp
    q2 = cran.qrels.copy()
    q2.loc[q2.index[0], "relevance"] += 1
    other = _report(cran.runs, q2).metadata["fingerprints"]
    assert other["golden_set"] != fp["golden_set"] and other["runs"] == fp["runs"]
    r2 = cran.runs.copy()
    first = r2.index[r2.system == "bm25"][0]
    r2.loc[first, "score"] += 0.5
    changed = _report(r2, cran.qrels).metadata["fingerprints"]["runs"]
    assert [s for s in fp["runs"] if changed[s] != fp["runs"][s]] == ["bm25"]
    assert _report(cran.runs, cran.qrels, rel=2).metadata["fingerprints"]["conventions"] != fp["conventions"]
    ints = pd.DataFrame({"query_id": [1, 2], "doc_id": ["a", "b"], "relevance": [1, 0]})
    assert digest_table(ints, ["query_id", "doc_id", "relevance"]) == digest_table(
        ints.astype({"query_id": str}), ["query_id", "doc_id", "relevance"])


def test_saved_and_shown(rep, tmp_path):
    fp = rep.metadata["fingerprints"]
    rep.to_csv(tmp_path / "csv")
    rep.to_parquet(tmp_path / "pq")
    assert ef.read_report(tmp_path / "csv").metadata["fingerprints"] == fp
    assert ef.read_report(tmp_path / "pq").metadata["fingerprints"] == fp
    import pyarrow.parquet as pq
    meta = json.loads(pq.read_schema(tmp_path / "pq" / "summary.parquet").metadata[b"evalframe"])
    assert meta["fingerprints"] == fp
    rep.to_html(tmp_path / "report.html")
    html = (tmp_path / "report.html").read_text()
    assert "Fingerprints" in html and fp["golden_set"] in html and fp["runs"]["bm25"] in html
    md = rep.to_markdown()
    assert "## Fingerprints" in md and f"- golden set: `{fp['golden_set']}`" in md


def test_a_run_file_is_hashed_by_its_bytes(tmp_path):
    sso = ef.datasets.load_sso()
    path = tmp_path / "run.trec"
    path.write_text("".join(f"{r.query_id} Q0 {r.doc_id} 0 {r.score} x\n" for r in sso.runs.itertuples()))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = ef.report(str(path), sso.qrels, n_resamples=20)
    assert r.metadata["fingerprints"]["runs"] == {str(path): hashlib.sha256(path.read_bytes()).hexdigest()[:16]}
    assert digest_path(tmp_path / "missing") is None


def test_the_chunk_table_is_fingerprinted(tmp_path):
    """Issue 30: "of the chunk table when spans are used" -- a table, a file, and a dict
    {system: table} (recorded as None before); a moved chunk boundary changes it, row
    order does not."""
    from tests.test_spans import CHUNKS_A, CHUNKS_B, help_centre
    spans, _a, _b, run = help_centre()

    def fp(chunks):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = ef.report(run, spans, chunks=chunks, measures=["SpanRecall@5"], n_resamples=20)
        return r.metadata["fingerprints"]["chunks"]

    both = {"a": CHUNKS_A, "b": CHUNKS_B}
    d = fp(both)
    assert isinstance(d, str) and len(d) == 16
    assert fp({"b": CHUNKS_B.iloc[::-1], "a": CHUNKS_A.sample(frac=1, random_state=0)}) == d
    moved = CHUNKS_B.copy()
    moved.loc[moved.index[0], "end"] = moved["end"].iloc[0] - 1
    assert fp({"a": CHUNKS_A, "b": moved}) != d
    one = pd.concat([CHUNKS_A, CHUNKS_B], ignore_index=True)
    assert fp(one) == digest_table(one, list(one.columns))
    path = tmp_path / "chunks.parquet"
    one.to_parquet(path)
    assert fp(str(path)) == digest_path(path)
