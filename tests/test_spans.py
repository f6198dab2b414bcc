"""Span golden sets, chunk tables and the span measures, checked against slow oracles.

The oracles below work on Python sets of character positions (``set(range(s, e))``) and
plain loops, written from the definitions (not from the implementation):

- per question, E = the evidence characters (spans labelled >= rel), R_k = the characters
  of the top-k retrieved chunks (union); SpanRecall = |E∩R|/|E|, SpanPrecision =
  |E∩R|/|R|, SpanIoU = |E∩R|/|E∪R| (0 on an empty denominator); ranking by score
  descending, ties by chunk id descending; ``tokens=N``: the leading chunks whose
  cumulative tokens fit in N (at most k with @k);
- span_labels: overlapping spans of one (question, document, label) merged (touching
  ones apart); a chunk takes the largest label among the spans overlapping it by
  >= min_overlap * min(span length, chunk length) characters and > 0; every other chunk
  of a document the question has spans in: 0;
- rechunk: kept / merged / split / moved / orphaned per labelled old chunk.
"""
from __future__ import annotations

import importlib
import warnings
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

import evalframe as ef
from evalframe.spans import check_chunks, check_spans, merge_spans

evaluate_with_diagnostics = importlib.import_module("evalframe.evaluation").evaluate_with_diagnostics

FAMILIES = ("SpanRecall", "SpanPrecision", "SpanIoU")

# warnings the random cases may raise and these tests do not assert
QUIET = [pytest.mark.filterwarnings("ignore::evalframe.ShallowRankingWarning"),
         pytest.mark.filterwarnings("ignore::evalframe.QuestionsScoredZeroWarning"),
         pytest.mark.filterwarnings("ignore::evalframe.QuestionsDroppedWarning"),
         pytest.mark.filterwarnings("ignore::evalframe.NoRelevantWarning"),
         pytest.mark.filterwarnings("ignore::evalframe.IdSchemeWarning")]


def quiet(f):
    for mark in QUIET:
        f = mark(f)
    return f


# ====================================================================== random inputs
def random_chunking(rng, doc: str, length: int, prefix: str, *, zero_length: bool = True,
                    kinds=(0, 1, 2, 3)) -> list[tuple[str, str, int, int]]:
    """Chunks ``(chunk_id, doc, start, end)`` of one document: overlapping windows,
    windows with gaps, random (nested, overlapping, repeated) intervals, or a partition."""
    kind = int(rng.choice(kinds))
    ranges: list[tuple[int, int]] = []
    if kind in (0, 1):
        size = int(rng.integers(4, 40))
        stride = int(rng.integers(max(1, size // 2), size + 1)) if kind == 0 else size + int(rng.integers(1, 12))
        s = int(rng.integers(0, 5)) if kind == 1 else 0
        while s < length:
            ranges.append((s, min(s + size, length)))
            s += stride
    elif kind == 2:
        for _ in range(int(rng.integers(1, 9))):
            a = int(rng.integers(0, length))
            b = int(rng.integers(a if zero_length else a + 1, min(length, a + 70) + 1))
            ranges.append((a, b))
    else:
        cuts = sorted(set(rng.integers(1, length, size=int(rng.integers(0, 7))).tolist()))
        bounds = [0] + cuts + [length]
        ranges = list(zip(bounds[:-1], bounds[1:]))
    return [(f"{prefix}{doc}#{i}", doc, a, b) for i, (a, b) in enumerate(ranges)]


def random_spans(rng, docs: dict[str, int], questions: list[str]) -> pd.DataFrame:
    """Spans per question: 1-3 documents, random spans plus nested and touching ones,
    labels 0-2; some questions have only spans labelled 0 (no evidence at rel=1)."""
    rows = []
    names = list(docs)
    for q in questions:
        only_zero = rng.random() < 0.2
        for d in rng.choice(names, size=int(rng.integers(1, min(3, len(names)) + 1)), replace=False):
            d = str(d)
            n = docs[d]
            for _ in range(int(rng.integers(1, 4))):
                a = int(rng.integers(0, n - 1))
                b = int(rng.integers(a + 1, min(n, a + 50) + 1))
                lab = 0 if only_zero else int(rng.integers(0, 3))
                rows.append((q, d, a, b, lab))
                r = rng.random()
                if r < 0.25 and b - a >= 3:  # nested
                    x = int(rng.integers(a, b - 1))
                    rows.append((q, d, x, int(rng.integers(x + 1, b + 1)), 0 if only_zero else int(rng.integers(0, 3))))
                elif r < 0.5 and b < n:  # touching
                    rows.append((q, d, b, int(rng.integers(b + 1, min(n, b + 20) + 1)), lab))
    return pd.DataFrame(rows, columns=["query_id", "doc_id", "start", "end", "relevance"])


def random_case(seed: int):
    """A span golden set, per-system chunk tables (with tokens) and a run."""
    rng = np.random.default_rng(seed)
    docs = {f"d{i}": int(rng.integers(20, 160)) for i in range(int(rng.integers(1, 5)))}
    questions = [f"q{i}" for i in range(int(rng.integers(1, 6)))]
    span_docs = dict(docs)
    if rng.random() < 0.3:
        span_docs["dx"] = 60  # evidence in a document no chunking has
    spans = random_spans(rng, span_docs, questions)
    spans.loc[len(spans)] = (questions[0], "d0", 0, int(rng.integers(1, 10)), int(rng.integers(0, 3)))
    n_chunkings = int(rng.integers(1, 4))
    shared_ids = rng.random() < 0.3  # chunkings reusing chunk ids for different ranges
    tables = []
    for c in range(n_chunkings):
        rows = []
        for d, n in docs.items():
            rows += random_chunking(rng, d, n, "" if shared_ids else f"c{c}-")
        t = pd.DataFrame(rows, columns=["chunk_id", "doc_id", "start", "end"])
        t["tokens"] = rng.integers(0, 15, size=len(t))
        tables.append(t)
    systems = [f"s{i}" for i in range(int(rng.integers(1, 4)))]
    chunking_of = {s: int(rng.integers(0, n_chunkings)) for s in systems}
    chunking_of[systems[0]] = 0
    span_doc_set = set(spans["doc_id"])
    rows = []
    for s in systems:
        t = tables[chunking_of[s]]
        for q in questions + (["q_not_golden"] if rng.random() < 0.2 else []):
            if q != questions[0] and rng.random() < 0.15:
                continue  # the system skips this question (scored 0)
            m = int(rng.integers(1, min(10, len(t)) + 1))
            pick = rng.choice(len(t), size=m, replace=False)
            if q == questions[0]:  # every system retrieves some chunk of a document with spans
                in_spans = np.flatnonzero(t["doc_id"].isin(span_doc_set).to_numpy())
                pick = np.unique(np.r_[pick, rng.choice(in_spans)])
            if rng.random() < 0.5:
                scores = rng.integers(0, 4, size=len(pick)).astype(float)  # many ties
            else:
                scores = np.round(rng.random(len(pick)), 2)
            for i, sc in zip(pick, scores):
                rows.append((s, q, t["chunk_id"].iat[int(i)], float(sc)))
    run = pd.DataFrame(rows, columns=["system", "query_id", "doc_id", "score"])
    if rng.random() < 0.5:
        run = run.sample(frac=1, random_state=int(rng.integers(1 << 30))).reset_index(drop=True)
    table_of = {s: tables[chunking_of[s]] for s in systems}
    if n_chunkings == 1 and rng.random() < 0.5:
        chunks = tables[0]
    else:
        chunks = dict(table_of)
    return spans, table_of, chunks, run


# ====================================================================== oracles
def ranked(run: pd.DataFrame, system, q) -> list[tuple[str, float]]:
    """(chunk, score) of one system's question: score descending, chunk id descending."""
    sel = run[run["query_id"] == q]
    if system is not None:
        sel = sel[sel["system"] == system]
    rows = sorted(zip(sel["doc_id"], sel["score"]), key=lambda r: r[0], reverse=True)
    return sorted(rows, key=lambda r: -r[1])


def chars(doc, start, end) -> set:
    return {(doc, p) for p in range(start, end)}


def span_oracle(run, spans, table_of, specs) -> dict:
    """{(system, query, spec): value} of span measures ``(family, k, tokens, rel)``,
    from sets of characters."""
    evidence = {}
    for q, d, s, e, lab in spans[["query_id", "doc_id", "start", "end", "relevance"]].itertuples(index=False):
        evidence.setdefault(q, []).append((d, s, e, lab))
    out = {}
    for system, table in table_of.items():
        where = {c: (d, s, e, t) for c, d, s, e, t in zip(table["chunk_id"], table["doc_id"], table["start"],
                                                          table["end"], table["tokens"])}
        mine = run[run["system"] == system] if "system" in run else run
        for q in pd.unique(spans["query_id"]):
            ranking = [where[c] for c, _ in ranked(mine, None, q)]
            E_of, R_of = {}, {}
            for spec in specs:
                fam, k, tokens, rel = spec
                rel = 1 if rel is None else rel
                if rel not in E_of:
                    E_of[rel] = set()
                    for d, s, e, lab in evidence[q]:
                        if lab >= rel:
                            E_of[rel] |= chars(d, s, e)
                E = E_of[rel]
                n = len(ranking) if k is None else min(k, len(ranking))
                if tokens is not None:
                    total, fit = 0, 0
                    for _, _, _, t in ranking:
                        total += t
                        if total > tokens:
                            break
                        fit += 1
                    n = min(n, fit)
                if n not in R_of:
                    R_of[n] = set()
                    for d, s, e, _ in ranking[:n]:
                        R_of[n] |= chars(d, s, e)
                R = R_of[n]
                inter = len(E & R)
                if fam == "SpanRecall":
                    v = inter / len(E) if E else 0.0
                elif fam == "SpanPrecision":
                    v = inter / len(R) if R else 0.0
                else:
                    v = inter / len(E | R) if E | R else 0.0
                out[(system, q, spec)] = v
    return out


def measure_name(fam, k=None, tokens=None, rel=None) -> str:
    params = [f"rel={rel}"] if rel is not None else []
    params += [f"tokens={tokens}"] if tokens is not None else []
    return fam + (f"({','.join(params)})" if params else "") + (f"@{k}" if k is not None else "")


def as_dict(out: pd.DataFrame) -> dict:
    return {(s, q, m): v for s, q, m, v in zip(out["system"], out["query_id"], out["measure"], out["value"])}


# ====================================================================== 1. span measures
SPECS = [(fam, k, tok, rel) for fam in FAMILIES for k in (1, 2, 5, None) for tok in (None, 12, 30)
         for rel in (None, 2)]


NAMES = [measure_name(*spec) for spec in SPECS]
CANONICAL = {n: str(ef.parse_measure(n)) for n in NAMES}


@quiet
@pytest.mark.parametrize("seed", range(60))
def test_span_measures_match_character_set_oracle(seed):
    spans, table_of, chunks, run = random_case(seed)
    names = NAMES
    out = ef.evaluate(run, spans, names, chunks=chunks)
    got = as_dict(out)
    canonical = CANONICAL
    name_of = dict(zip(SPECS, names))
    expected = {(s, q, canonical[name_of[spec]]): v
                for (s, q, spec), v in span_oracle(run, spans, table_of, SPECS).items()}
    assert set(got) == set(expected)
    bad = {key: (got[key], v) for key, v in expected.items() if abs(got[key] - v) > 1e-12}
    assert not bad, f"{len(bad)} values differ, e.g. {list(bad.items())[:5]}"


@quiet
@pytest.mark.parametrize("seed", range(5))
def test_rel_argument_equals_rel_parameter(seed):
    spans, table_of, chunks, run = random_case(1000 + seed)
    a = ef.evaluate(run, spans, ["SpanRecall@5", "SpanPrecision", "SpanIoU(tokens=30)"], chunks=chunks, rel=2)
    b = ef.evaluate(run, spans, ["SpanRecall(rel=2)@5", "SpanPrecision(rel=2)", "SpanIoU(rel=2,tokens=30)"],
                    chunks=chunks)
    np.testing.assert_allclose(a["value"].to_numpy(), b["value"].to_numpy(), atol=1e-12)
    exp = {(s, q): v for (s, q, _), v in span_oracle(run, spans, table_of, [("SpanRecall", 5, None, 2)]).items()}
    got = {(s, q): v for s, q, m, v in zip(a["system"], a["query_id"], a["measure"], a["value"])
           if m.startswith("SpanRecall")}
    assert got.keys() == exp.keys()
    assert all(abs(got[key] - exp[key]) <= 1e-12 for key in exp)


# ====================================================================== 2. span_labels, rechunk, merge_spans
def merged_oracle(spans: pd.DataFrame) -> list[tuple]:
    """Overlapping spans of one (question, document, label) merged; touching ones apart."""
    groups: dict = {}
    for q, d, s, e, lab in spans[["query_id", "doc_id", "start", "end", "relevance"]].itertuples(index=False):
        groups.setdefault((q, d, lab), []).append((s, e))
    out = []
    for (q, d, lab), iv in groups.items():
        iv.sort()
        cur = list(iv[0])
        for s, e in iv[1:]:
            if s < cur[1]:
                cur[1] = max(cur[1], e)
            else:
                out.append((q, d, lab, cur[0], cur[1]))
                cur = [s, e]
        out.append((q, d, lab, cur[0], cur[1]))
    return sorted(out)


def meets(ov: int, a: int, b: int, min_overlap) -> bool:
    """The overlap rule, exactly (min_overlap as the decimal it was written as)."""
    return ov > 0 and ov >= Fraction(str(min_overlap)) * min(a, b)


def labels_oracle(spans: pd.DataFrame, chunks: pd.DataFrame, min_overlap) -> dict:
    merged = merged_oracle(spans)
    out = {}
    for q in set(spans["query_id"]):
        mine = [m for m in merged if m[0] == q]
        docs = {m[1] for m in mine}
        for c, d, cs, ce in chunks[["chunk_id", "doc_id", "start", "end"]].itertuples(index=False):
            if d not in docs:
                continue
            best = 0
            for _, sd, lab, s, e in mine:
                if sd == d and meets(min(e, ce) - max(s, cs), e - s, ce - cs, min_overlap):
                    best = max(best, lab)
            out[(q, c)] = best
    return out


def rows_dict(df: pd.DataFrame) -> dict:
    keys = list(zip(df["query_id"], df["doc_id"]))
    assert len(keys) == len(set(keys)), "one row per (question, chunk)"
    return dict(zip(keys, df["relevance"].astype(int)))


@pytest.mark.parametrize("seed", range(30))
def test_merge_spans_matches_oracle(seed):
    rng = np.random.default_rng(500 + seed)
    docs = {f"d{i}": int(rng.integers(10, 120)) for i in range(int(rng.integers(1, 4)))}
    spans = random_spans(rng, docs, [f"q{i}" for i in range(int(rng.integers(1, 5)))])
    got = merge_spans(check_spans(spans))
    assert sorted(zip(got["query_id"], got["doc_id"], got["relevance"], got["start"], got["end"])) == \
        merged_oracle(spans)


@pytest.mark.filterwarnings("ignore::evalframe.QuestionsScoredZeroWarning")
def test_merge_spans_keeps_disjoint_spans_apart_after_a_long_span():
    # a long span of one question, then two disjoint one-character spans of another:
    # the second question's spans must stay apart (2 characters of evidence, not 3)
    s = pd.DataFrame({"query_id": ["q1", "q2", "q2"], "doc_id": ["d1"] * 3, "start": [0, 0, 2],
                      "end": [100, 1, 3], "relevance": [1, 1, 1]})
    got = merge_spans(s)
    assert got[["query_id", "start", "end"]].values.tolist() == [["q1", 0, 100], ["q2", 0, 1], ["q2", 2, 3]]
    chunks = pd.DataFrame({"chunk_id": ["c1"], "doc_id": ["d1"], "start": [1], "end": [3]})
    run = pd.DataFrame({"query_id": ["q2"], "doc_id": ["c1"], "score": [1.0]})
    out = ef.evaluate(run, s, ["SpanRecall", "SpanPrecision"], chunks=chunks)
    out = out[out["query_id"] == "q2"]
    assert out["value"].tolist() == [0.5, 0.5]


@pytest.mark.parametrize("seed", range(30))
def test_span_labels_matches_oracle(seed):
    rng = np.random.default_rng(700 + seed)
    docs = {f"d{i}": int(rng.integers(10, 150)) for i in range(int(rng.integers(1, 5)))}
    spans = random_spans(rng, docs, [f"q{i}" for i in range(int(rng.integers(1, 5)))])
    rows = []
    for d, n in docs.items():
        if d == "d0" or rng.random() < 0.8:  # some documents are not chunked
            rows += random_chunking(rng, d, n, "")
    chunks = pd.DataFrame(rows, columns=["chunk_id", "doc_id", "start", "end"])
    if not chunks["doc_id"].isin(spans["doc_id"]).any():
        spans.loc[len(spans)] = ("q0", "d0", 0, 5, 1)
    for m in (0, 0.25, 0.3, 0.5, 0.7, 1):
        got = ef.span_labels(spans, chunks, min_overlap=m)
        assert list(got.columns) == ["query_id", "doc_id", "relevance"]
        assert rows_dict(got) == labels_oracle(spans, chunks, m), f"min_overlap={m}"


def test_span_labels_examples():
    spans = pd.DataFrame({"query_id": ["q"] * 4, "doc_id": ["d"] * 4, "start": [0, 20, 40, 50],
                          "end": [30, 40, 50, 60], "relevance": [1, 1, 2, 2]})
    # [0, 30) and [20, 40) overlap: one span [0, 40); [40, 50) and [50, 60) only touch
    chunks = pd.DataFrame({"chunk_id": ["a", "b", "c", "e"], "doc_id": ["d"] * 4,
                           "start": [25, 44, 60, 10], "end": [42, 56, 100, 10]})
    got = rows_dict(ef.span_labels(spans, chunks))
    # a: 15 chars of [0,40) >= 0.5 * min(40, 17) -> 1; 2 chars of [40,50) < 0.5 * min(10, 17)
    # b: 6 of [40,50) and 6 of [50,60), each >= 0.5 * min(10, 12) -> 2
    # c: touches [50,60) only -> 0;  e: an empty chunk (a title) -> 0
    assert got == {("q", "a"): 1, ("q", "b"): 2, ("q", "c"): 0, ("q", "e"): 0}
    assert rows_dict(ef.span_labels(spans, chunks, min_overlap=0)) == {
        ("q", "a"): 2, ("q", "b"): 2, ("q", "c"): 0, ("q", "e"): 0}
    assert rows_dict(ef.span_labels(spans, chunks, min_overlap=1)) == {
        ("q", "a"): 0, ("q", "b"): 0, ("q", "c"): 0, ("q", "e"): 0}


def rechunk_oracle(qrels: pd.DataFrame, old: pd.DataFrame, new: pd.DataFrame, min_overlap):
    """(new golden set {(q, chunk): label}, drift {(q, old chunk): (label, status, new ids, conflicting)})."""
    old_at = {c: (d, s, e, t) for c, d, s, e, t in zip(old["chunk_id"], old["doc_id"], old["start"], old["end"],
                                                       old["text"] if "text" in old else [None] * len(old))}
    texts = "text" in old and "text" in new
    news = list(zip(new["chunk_id"], new["doc_id"], new["start"], new["end"],
                    new["text"] if "text" in new else [None] * len(new)))
    drift, received = {}, {}
    untouched = {}
    for q, c, lab in qrels[["query_id", "doc_id", "relevance"]].itertuples(index=False):
        if c not in old_at:
            untouched[(q, c)] = lab
            drift[(q, c)] = (lab, "kept" if c in set(new["chunk_id"]) else "orphaned",
                             {c} if c in set(new["chunk_id"]) else set())
            continue
        d, s, e, text = old_at[c]
        over = [(n, ns, ne) for n, nd, ns, ne, _ in news if nd == d and min(e, ne) - max(s, ns) > 0]
        if any(ns == s and ne == e for _, ns, ne in over):
            status = "kept"
        elif any(ns <= s and ne >= e for _, ns, ne in over):
            status = "merged"
        elif over:
            status = "split"
        else:
            status = "orphaned"
        taken = [n for n, ns, ne in over if meets(min(e, ne) - max(s, ns), e - s, ne - ns, min_overlap)]
        if status in ("split", "orphaned") and texts:  # its text, whole, in a new chunk of its document
            same = [n for n, nd, _, _, t in news if t == text and nd == d]
            if status == "orphaned" and not same:  # of any document (a renamed one)
                same = [n for n, _, _, _, t in news if t == text]
            if same:
                status, taken = "moved", same[:1]
        for n in taken:
            received.setdefault((q, n), []).append(lab)
        drift[(q, c)] = (lab, status, set(taken))
    golden = {key: max(labs) for key, labs in received.items()}
    golden.update(untouched)
    out = {}
    for (q, c), (lab, status, taken) in drift.items():
        conflicting = (q, c) not in untouched and any(len(set(received[(q, n)])) > 1 for n in taken)
        out[(q, c)] = (lab, status, taken, conflicting)
    return golden, out


def random_texts(rng, docs: dict[str, int]) -> dict[str, str]:
    return {d: "".join(rng.choice(list("abcdefghij"), size=n)) for d, n in docs.items()}


@pytest.mark.parametrize("seed", range(25))
def test_rechunk_matches_oracle(seed):
    rng = np.random.default_rng(900 + seed)
    docs = {f"d{i}": int(rng.integers(10, 150)) for i in range(int(rng.integers(1, 5)))}
    texts = random_texts(rng, docs)
    old_rows, new_rows = [], []
    for d, n in docs.items():
        old_rows += random_chunking(rng, d, n, "o", zero_length=False)
        r = rng.random()
        if r < 0.15:
            continue  # the document is gone from the new chunking
        if r < 0.3:  # the document was renamed: same text, new id
            new_rows += [(c, d + "-v2", s, e) for c, _, s, e in random_chunking(rng, d, n, "n", zero_length=False)]
            continue
        new_rows += random_chunking(rng, d, n, "n", zero_length=False)
    old = pd.DataFrame(old_rows, columns=["chunk_id", "doc_id", "start", "end"])
    new = pd.DataFrame(new_rows if new_rows else [("n-x", "dz", 0, 5)], columns=["chunk_id", "doc_id", "start", "end"])
    with_text = rng.random() < 0.6
    if with_text:
        all_text = {**texts, **{d + "-v2": t for d, t in texts.items()}, "dz": "zzzzz"}
        old["text"] = [all_text[d][s:e] for d, s, e in zip(old["doc_id"], old["start"], old["end"])]
        new["text"] = [all_text[d][s:e] for d, s, e in zip(new["doc_id"], new["start"], new["end"])]
    rows = []
    for q in [f"q{i}" for i in range(int(rng.integers(1, 4)))]:
        for c in rng.choice(old["chunk_id"].to_numpy(), size=int(rng.integers(1, min(6, len(old)) + 1)),
                            replace=False):
            rows.append((q, str(c), int(rng.integers(0, 3))))
        if rng.random() < 0.3:
            rows.append((q, f"page-{q}", 1))  # a unit the old chunk table does not name
    qrels = pd.DataFrame(rows, columns=["query_id", "doc_id", "relevance"])
    for m in (0, 0.5, 0.3, 1):
        r = ef.rechunk(qrels, old, new, min_overlap=m)
        golden, drift = rechunk_oracle(qrels, old, new, m)
        assert rows_dict(r.qrels) == golden, f"min_overlap={m}"
        assert list(r.drift.columns) == ["query_id", "doc_id", "relevance", "status", "new_ids", "conflicting"]
        got = {(q, c): (int(lab), st, set(filter(None, ids.split(","))), bool(cf))
               for q, c, lab, st, ids, cf in r.drift.itertuples(index=False)}
        assert len(got) == len(r.drift)
        assert got == drift, f"min_overlap={m}"
        assert r.counts().sum() == len(qrels)


def test_rechunk_statuses_example():
    old = pd.DataFrame({"chunk_id": ["k", "m1", "m2", "s", "o", "mv"], "doc_id": ["d", "d", "d", "d", "d", "e"],
                        "start": [0, 100, 120, 200, 400, 0], "end": [50, 120, 140, 300, 450, 10],
                        "text": ["K", "M1", "M2", "S", "O", "hello"]})
    new = pd.DataFrame({"chunk_id": ["K", "M", "S1", "S2", "S3", "MV"], "doc_id": ["d", "d", "d", "d", "d", "e2"],
                        "start": [0, 90, 200, 240, 290, 0], "end": [50, 150, 240, 290, 390, 10],
                        "text": ["K", "M", "S1", "S2", "S3", "hello"]})
    qrels = pd.DataFrame({"query_id": ["q"] * 6, "doc_id": ["k", "m1", "m2", "s", "o", "mv"],
                          "relevance": [1, 1, 2, 1, 2, 1]})
    r = ef.rechunk(qrels, old, new)
    d = r.drift.set_index("doc_id")
    assert d["status"].to_dict() == {"k": "kept", "m1": "merged", "m2": "merged", "s": "split", "o": "orphaned",
                                     "mv": "moved"}
    assert d["conflicting"].to_dict() == {"k": False, "m1": True, "m2": True, "s": False, "o": False, "mv": False}
    # s = [200, 300): 40 chars of S1 (>= 0.5 * 40), 50 of S2 (>= 0.5 * 50), 10 of S3 (< 0.5 * 100)
    assert set(d.loc["s", "new_ids"].split(",")) == {"S1", "S2"}
    assert rows_dict(r.qrels) == {("q", "K"): 1, ("q", "M"): 2, ("q", "S1"): 1, ("q", "S2"): 1, ("q", "MV"): 1}
    assert r.counts().to_dict() == {"kept": 1, "merged": 2, "split": 1, "moved": 1, "orphaned": 1}


def test_rechunk_golden_set_with_both_chunkings_has_one_row_per_chunk():
    # the golden set already holds a label of the new chunk b0 (it holds both chunkings'
    # labels); b0 also receives the labels of a0 and a1: one row (q, b0), the largest label
    old = pd.DataFrame({"chunk_id": ["a0", "a1"], "doc_id": ["d", "d"], "start": [0, 50], "end": [50, 100]})
    new = pd.DataFrame({"chunk_id": ["b0"], "doc_id": ["d"], "start": [0], "end": [100]})
    qrels = pd.DataFrame({"query_id": ["q"] * 3, "doc_id": ["a0", "a1", "b0"], "relevance": [1, 0, 2]})
    r = ef.rechunk(qrels, old, new)
    assert r.qrels[["query_id", "doc_id"]].duplicated().sum() == 0, r.qrels.to_string()
    assert rows_dict(r.qrels) == {("q", "b0"): 2}
    # the result is a golden set evaluate accepts as it is
    run = pd.DataFrame({"query_id": ["q"], "doc_id": ["b0"], "score": [1.0]})
    assert ef.evaluate(run, r.qrels, ["R@1"])["value"].tolist() == [1.0]


def test_rechunk_keeps_an_empty_title_chunk_at_its_offsets():
    # a chunk holding no text (end == start, a title) is a valid chunk; the new chunking
    # has a chunk at the same document and offsets: kept, not orphaned
    old = pd.DataFrame({"chunk_id": ["t", "a"], "doc_id": ["d", "d"], "start": [0, 0], "end": [0, 50]})
    new = pd.DataFrame({"chunk_id": ["T", "A"], "doc_id": ["d", "d"], "start": [0, 0], "end": [0, 50]})
    r = ef.rechunk(pd.DataFrame({"query_id": ["q", "q"], "doc_id": ["t", "a"], "relevance": [1, 1]}), old, new)
    assert r.drift.set_index("doc_id")["status"].to_dict() == {"t": "kept", "a": "kept"}
    assert rows_dict(r.qrels) == {("q", "T"): 1, ("q", "A"): 1}


def test_rechunk_moved_text_in_an_edited_document():
    # ten characters were inserted at the start of d: the old chunks' text now sits 10
    # characters later, in b1 and b2 exactly; the old offsets hold other text
    new_text = "INSERTED: " + "".join(chr(97 + i % 26) for i in range(100))
    old_text = new_text[10:]
    old = pd.DataFrame({"chunk_id": ["a0", "a1"], "doc_id": ["d", "d"], "start": [0, 50], "end": [50, 100],
                        "text": [old_text[0:50], old_text[50:100]]})
    new = pd.DataFrame({"chunk_id": ["b0", "b1", "b2"], "doc_id": ["d"] * 3, "start": [0, 10, 60],
                        "end": [10, 60, 110], "text": [new_text[0:10], new_text[10:60], new_text[60:110]]})
    r = ef.rechunk(pd.DataFrame({"query_id": ["q", "q"], "doc_id": ["a0", "a1"], "relevance": [1, 2]}), old, new)
    d = r.drift.set_index("doc_id")
    assert d["status"].to_dict() == {"a0": "moved", "a1": "moved"}
    assert d["new_ids"].to_dict() == {"a0": "b1", "a1": "b2"}
    assert rows_dict(r.qrels) == {("q", "b1"): 1, ("q", "b2"): 2}  # b0 ("INSERTED: ") holds no evidence


@pytest.mark.parametrize("seed", range(20))
def test_check_chunks_disjoint_matches_oracle(seed):
    rng = np.random.default_rng(1300 + seed)
    rows = []
    for i in range(int(rng.integers(1, 5))):
        rows += random_chunking(rng, f"d{i}", int(rng.integers(10, 120)), "", zero_length=False)
    chunks = pd.DataFrame(rows, columns=["chunk_id", "doc_id", "start", "end"]).sample(
        frac=1, random_state=seed)
    overlapping = any(d1 == d2 and c1 != c2 and min(e1, e2) - max(s1, s2) > 0
                      for c1, d1, s1, e1 in rows for c2, d2, s2, e2 in rows)
    if overlapping:
        with pytest.raises(ef.EvalframeInputError, match="overlap"):
            check_chunks(chunks, disjoint=True)
    else:
        assert len(check_chunks(chunks, disjoint=True)) == len(chunks)
    assert len(check_chunks(chunks)) == len(chunks)


# ====================================================================== 3. the help-centre trap
WORD = 5  # characters per "word"
N_DOCS, DOC_LEN = 12, 1000


def windows(words: int, tag: str) -> pd.DataFrame:
    """Fixed windows of ``words`` words over every document (no overlap)."""
    size = words * WORD
    rows = [(f"{tag}:d{i}#{j}", f"d{i}", s, min(s + size, DOC_LEN), min(size, DOC_LEN - s) // WORD)
            for i in range(N_DOCS) for j, s in enumerate(range(0, DOC_LEN, size))]
    return pd.DataFrame(rows, columns=["chunk_id", "doc_id", "start", "end", "tokens"])


CHUNKS_A, CHUNKS_B = windows(40, "A"), windows(100, "B")


def help_centre(n_questions: int = 12):
    """Evidence spans, the chunk-level golden sets each chunking gets from them, and a
    run of two systems (a: chunking A, b: chunking B) retrieving the chunks of the
    evidence's document."""
    rng = np.random.default_rng(42)
    span_rows, run_rows = [], []
    for i in range(n_questions):
        q = f"q{i}"
        d = f"d{i % N_DOCS}"
        s = int(rng.integers(0, DOC_LEN - 150))
        span_rows.append((q, d, s, s + int(rng.integers(30, 150)), 1))
        for system, table in (("a", CHUNKS_A), ("b", CHUNKS_B)):
            mine = table[table["doc_id"] == d]
            for rank, c in enumerate(mine["chunk_id"].iloc[rng.permutation(len(mine))][:5]):
                run_rows.append((system, q, c, 10.0 - rank))
    spans = pd.DataFrame(span_rows, columns=["query_id", "doc_id", "start", "end", "relevance"])
    run = pd.DataFrame(run_rows, columns=["system", "query_id", "doc_id", "score"])
    return spans, ef.span_labels(spans, CHUNKS_A), ef.span_labels(spans, CHUNKS_B), run


def checks(diag: pd.DataFrame, check: str) -> dict:
    sel = diag[diag["check"] == check]
    return dict(zip(sel["system"], sel["count"]))


@pytest.mark.filterwarnings("ignore::evalframe.ShallowRankingWarning")
def test_run_of_another_chunking_against_a_chunk_level_golden_set():
    spans, golden_a, golden_b, run = help_centre()
    with pytest.warns(ef.IdSchemeWarning, match="system 'b'"):
        out = ef.evaluate(run, golden_a, ["R@5", "P@5"])
    assert (out.loc[out["system"] == "b", "value"] == 0).all()
    assert (out.loc[(out["system"] == "a") & (out["measure"] == "R@5"), "value"] > 0).any()
    diag = ef.diagnostics(run, golden_a)
    assert checks(diag, "system_without_judged_documents") == {"b": int((run["system"] == "b").sum())}  # its rows


@pytest.mark.filterwarnings("ignore::evalframe.ShallowRankingWarning")
def test_golden_set_holding_both_chunkings_labels():
    spans, golden_a, golden_b, run = help_centre()
    both = pd.concat([golden_a, golden_b], ignore_index=True)
    judged = {s: run[run["system"] == s].merge(both, on=["query_id", "doc_id"]).shape[0] for s in ("a", "b")}
    assert min(judged.values()) >= 20
    with pytest.warns(ef.IdSchemeWarning, match="two chunkings"):
        ef.evaluate(run, both, ["R@5"])
    diag = ef.diagnostics(run, both)
    assert checks(diag, "systems_share_no_judged_documents") == judged
    row = diag[(diag["check"] == "systems_share_no_judged_documents") & (diag["system"] == "a")]
    assert "b" in row["examples"].iloc[0]
    assert checks(diag, "system_without_judged_documents") == {}


@pytest.mark.filterwarnings("ignore::evalframe.ShallowRankingWarning")
def test_span_golden_set_scores_both_chunkings_without_id_warnings():
    spans, golden_a, golden_b, run = help_centre()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = ef.evaluate(run, spans, ["SpanRecall@5", "SpanRecall(tokens=200)"],
                          chunks={"a": CHUNKS_A, "b": CHUNKS_B})
    assert not [w for w in caught if issubclass(w.category, ef.IdSchemeWarning)]
    assert (out.groupby("system")["value"].mean() > 0).all()


@pytest.mark.filterwarnings("ignore::evalframe.ShallowRankingWarning")
def test_no_retrieved_document_in_the_golden_set_is_an_input_error():
    from evalframe.engine.memory import FOREIGN_MIN_GOLDEN_DOCS, FOREIGN_MIN_RUN_DOCS
    n_q = FOREIGN_MIN_GOLDEN_DOCS
    golden = pd.DataFrame({"query_id": [f"q{i}" for i in range(n_q)], "doc_id": [f"d{i}" for i in range(n_q)],
                           "relevance": 1})
    per_q = -(-FOREIGN_MIN_RUN_DOCS // n_q)
    run = pd.DataFrame({"query_id": np.repeat([f"q{i}" for i in range(n_q)], per_q),
                        "doc_id": [f"d{i}" for i in range(n_q * per_q)], "score": 1.0})
    foreign = run.assign(doc_id="chunk:" + run["doc_id"])
    with pytest.raises(ef.EvalframeInputError, match="no retrieved document of any system"):
        ef.evaluate(foreign, golden, ["R@5"])
    with pytest.raises(ef.EvalframeInputError, match="no retrieved document of any system"):
        ef.diagnostics(foreign, golden)
    small = foreign.groupby("query_id").head(1)  # too few documents to tell: a warning only
    with pytest.warns(ef.IdSchemeWarning, match="0% of the documents the run retrieved"):
        ef.evaluate(small, golden, ["R@5"])


@quiet
def test_documents_judged_for_other_questions_are_no_id_scheme_alarm():
    golden = pd.DataFrame({"query_id": ["q1", "q2"], "doc_id": ["d1", "d2"], "relevance": [1, 1]})
    run = pd.DataFrame({"query_id": ["q1", "q2"], "doc_id": ["d2", "d1"], "score": [1.0, 1.0]})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ef.evaluate(run, golden, ["R@5"])
    assert not [w for w in caught if issubclass(w.category, ef.IdSchemeWarning)]


@quiet
def test_systems_on_different_questions_are_no_disjoint_alarm():
    n = 30
    golden = pd.DataFrame({"query_id": [f"q{i}" for i in range(2 * n)], "doc_id": [f"d{i}" for i in range(2 * n)],
                           "relevance": 1})
    run = pd.concat([pd.DataFrame({"system": "a", "query_id": [f"q{i}" for i in range(n)],
                                   "doc_id": [f"d{i}" for i in range(n)], "score": 1.0}),
                     pd.DataFrame({"system": "b", "query_id": [f"q{i}" for i in range(n, 2 * n)],
                                   "doc_id": [f"d{i}" for i in range(n, 2 * n)], "score": 1.0})])
    assert "systems_share_no_judged_documents" not in set(ef.diagnostics(run, golden)["check"])


@quiet
def test_offsets_a_run_carries_are_ignored_by_a_chunk_level_golden_set():
    run = pd.DataFrame({"query_id": ["q0"] * 5, "doc_id": [f"c{i}" for i in range(5)], "score": [5., 4, 3, 2, 1],
                        "start": [0, 10, 20, 30, 40], "end": [10, 20, 30, 40, 50]})
    qrels = pd.DataFrame({"query_id": ["q0"], "doc_id": ["c0"], "relevance": [1]})
    assert ef.evaluate(run, qrels, ["R@5"])["value"].tolist() == [1.0]


@quiet
def test_a_run_with_chunk_and_parent_columns():
    spans, _, _, run = help_centre()
    run_a = run[run["system"] == "a"]
    want = ef.evaluate(run_a, spans, ["SpanRecall@3"], chunks=CHUNKS_A)
    meta = CHUNKS_A.set_index("chunk_id")
    log = run_a.assign(parent_id=run_a["doc_id"].map(meta["doc_id"]), start=run_a["doc_id"].map(meta["start"]),
                       end=run_a["doc_id"].map(meta["end"]))  # doc_id the chunk, parent_id the document
    pd.testing.assert_frame_equal(ef.evaluate(log, spans, ["SpanRecall@3"]), want)


@quiet
def test_same_chunks_counted_by_two_tokenizers_are_two_chunkings():
    spans, _, _, run = help_centre()
    both = pd.concat([run[run["system"] == "a"], run[run["system"] == "a"].assign(system="a2")])
    chunks = {"a": CHUNKS_A, "a2": CHUNKS_A.assign(tokens=CHUNKS_A["tokens"] * 3)}
    got = ef.evaluate(both, spans, ["SpanRecall(tokens=20)"], chunks=chunks)
    alone = ef.evaluate(both[both["system"] == "a2"], spans, ["SpanRecall(tokens=20)"], chunks=chunks["a2"])
    np.testing.assert_array_equal(got.loc[got["system"] == "a2", "value"].to_numpy(), alone["value"].to_numpy())


def test_rechunk_does_not_move_a_merged_chunk_to_another_documents_text():
    old = pd.DataFrame({"chunk_id": ["A#0", "A#1"], "doc_id": ["A", "A"], "start": [0, 8], "end": [8, 20],
                        "text": ["Results.", " more text."]})
    new = pd.DataFrame({"chunk_id": ["A#n0", "B#n0"], "doc_id": ["A", "B"], "start": [0, 0], "end": [20, 8],
                        "text": ["Results. more text.", "Results."]})
    q = pd.DataFrame({"query_id": ["q"], "doc_id": ["A#0"], "relevance": [1]})
    r = ef.rechunk(q, old, new)
    assert r.drift["status"].tolist() == ["merged"] and r.qrels["doc_id"].tolist() == ["A#n0"]


# ====================================================================== 4. comparing chunkings
@pytest.mark.filterwarnings("ignore::evalframe.ShallowRankingWarning")
def test_chunk_level_measures_over_two_chunkings_warn_once():
    spans, _, _, run = help_centre()
    chunks = {"a": CHUNKS_A, "b": CHUNKS_B}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out, diag = evaluate_with_diagnostics(run, spans, ["R@5", "SpanRecall@5"], chunks=chunks)
    differ = [w for w in caught if issubclass(w.category, ef.ChunkingsDifferWarning)]
    assert len(differ) == 1 and "R@5" in str(differ[0].message)
    assert "chunkings_differ" in set(diag["check"])
    with pytest.warns(ef.ChunkingsDifferWarning):
        ef.evaluate(run, spans, ["R@5", "SpanRecall@5"], chunks=chunks)
    assert "chunkings_differ" in set(ef.diagnostics(run, spans, ["R@5", "SpanRecall@5"], chunks=chunks)["check"])
    # per system: as evaluating each system alone with its own chunk table
    for system, table in chunks.items():
        alone = ef.evaluate(run[run["system"] == system], spans, ["R@5", "SpanRecall@5"], chunks=table)
        mine = out[out["system"] == system]
        assert mine["query_id"].tolist() == alone["query_id"].tolist()
        assert mine["measure"].tolist() == alone["measure"].tolist()
        np.testing.assert_allclose(mine["value"].to_numpy(), alone["value"].to_numpy(), atol=1e-12)


@pytest.mark.filterwarnings("ignore::evalframe.ShallowRankingWarning")
def test_only_span_measures_over_two_chunkings_do_not_warn():
    spans, _, _, run = help_centre()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _, diag = evaluate_with_diagnostics(run, spans, ["SpanRecall@5", "SpanIoU(tokens=100)", "SpanPrecision"],
                                            chunks={"a": CHUNKS_A, "b": CHUNKS_B})
    assert not [w for w in caught if issubclass(w.category, ef.ChunkingsDifferWarning)]
    assert "chunkings_differ" not in set(diag["check"])


@pytest.mark.filterwarnings("ignore::evalframe.ShallowRankingWarning")
def test_diagnostics_report_chunkings_differ_for_measures_without_cutoff():
    # evaluate warns for RR (a chunk-level measure without @k): diagnostics, "the facts
    # behind evaluate()'s warnings", given the same measures, has the row too
    spans, _, _, run = help_centre()
    chunks = {"a": CHUNKS_A, "b": CHUNKS_B}
    with pytest.warns(ef.ChunkingsDifferWarning):
        ef.evaluate(run, spans, ["RR", "SpanRecall@5"], chunks=chunks)
    assert "chunkings_differ" in set(ef.diagnostics(run, spans, ["RR", "SpanRecall@5"], chunks=chunks)["check"])


# ====================================================================== 5. bad input
def small_case():
    spans = pd.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["d1", "d2"], "start": [10, 0], "end": [40, 5]})
    chunks = pd.DataFrame({"chunk_id": ["c1", "c2", "c3"], "doc_id": ["d1", "d1", "d2"], "start": [0, 30, 0],
                           "end": [30, 60, 50]})
    run = pd.DataFrame({"query_id": ["q1"] * 3, "doc_id": ["c1", "c2", "c3"], "score": [3.0, 2.0, 1.0]})
    return spans, chunks, run


def test_small_case_values():
    spans, chunks, run = small_case()
    out = ef.evaluate(run, spans, ["SpanRecall@1", "SpanPrecision@2", "SpanIoU", "R@1"], chunks=chunks)
    # E = d1[10,40) + d2[0,5) = 35; top 1 = c1 d1[0,30): 20; top 2 adds c2 [30,60): 30 of 60
    # all: 35 of E ∪ R = 60 + 50 = 110; relevant chunks: c1 (20 of 30) and c3 (5 of 5): R@1 = 1/2
    assert out["value"].tolist() == pytest.approx([20 / 35, 30 / 60, 35 / 110, 1 / 2], abs=1e-12)


@pytest.mark.parametrize("start,end", [(10, 10), (10, 5)])
def test_span_with_end_not_after_start(start, end):
    spans, chunks, run = small_case()
    spans.loc[1, ["start", "end"]] = [start, end]
    with pytest.raises(ef.EvalframeInputError, match=r"1 spans have end <= start"):
        ef.evaluate(run, spans, ["SpanRecall@1"], chunks=chunks)
    with pytest.raises(ef.EvalframeInputError, match=r"end <= start"):
        ef.span_labels(spans, chunks)


def test_negative_offsets():
    spans, chunks, run = small_case()
    bad = spans.assign(start=[-1, 0])
    with pytest.raises(ef.EvalframeInputError, match=r"1 rows have a negative start offset"):
        ef.evaluate(run, bad, ["SpanRecall@1"], chunks=chunks)
    with pytest.raises(ef.EvalframeInputError, match=r"negative start offset"):
        ef.evaluate(run, spans, ["SpanRecall@1"], chunks=chunks.assign(start=[-5, 30, 0]))


def test_chunk_table_missing_retrieved_ids():
    spans, chunks, run = small_case()
    run = pd.concat([run, pd.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["zz1", "zz2"], "score": [0.5, 0.4]})])
    with pytest.raises(ef.EvalframeInputError, match=r"2 chunk ids the run retrieves are not in the chunk table"):
        ef.evaluate(run, spans, ["SpanRecall@1"], chunks=chunks)


def test_chunk_documents_match_no_span_document():
    spans, chunks, run = small_case()
    with pytest.raises(ef.EvalframeInputError, match="no chunk's document is a document of the span golden set"):
        ef.evaluate(run, spans, ["SpanRecall@1"], chunks=chunks.assign(doc_id=["D1", "D1", "D2"]))
    with pytest.raises(ef.EvalframeInputError, match="no chunk's document"):
        ef.span_labels(spans, chunks.assign(doc_id=["D1", "D1", "D2"]))


def test_disjoint_chunks_that_overlap():
    _, chunks, _ = small_case()
    overlapping = chunks.assign(start=[0, 25, 0])
    with pytest.raises(ef.EvalframeInputError, match=r"1 chunks overlap an earlier chunk"):
        check_chunks(overlapping, disjoint=True)
    with pytest.raises(ef.EvalframeInputError, match=r"overlap"):
        ef.read_chunks(overlapping, disjoint=True)
    assert len(check_chunks(chunks, disjoint=True)) == 3  # touching chunks do not overlap
    assert len(check_chunks(overlapping)) == 3


def test_disjoint_chunks_of_a_later_document():
    # two documents: the second one's chunks touch, and do not overlap
    chunks = pd.DataFrame({"chunk_id": ["a", "b", "c"], "doc_id": ["d1", "d2", "d2"], "start": [0, 0, 10],
                           "end": [100, 10, 20]})
    assert len(check_chunks(chunks, disjoint=True)) == 3


def test_chunk_id_with_two_ranges():
    spans, chunks, run = small_case()
    twice = pd.concat([chunks, pd.DataFrame({"chunk_id": ["c1"], "doc_id": ["d1"], "start": [5], "end": [30]})])
    with pytest.raises(ef.EvalframeInputError, match=r"1 chunk ids are given two different documents or ranges"):
        ef.evaluate(run, spans, ["SpanRecall@1"], chunks=twice)
    with pytest.raises(ef.EvalframeInputError, match=r"two different documents or ranges"):
        ef.read_chunks(twice)
    # an exact repeat is one chunk
    assert len(check_chunks(pd.concat([chunks, chunks.iloc[:1]]))) == 3


# ====================================================================== 6. a run carrying offsets
MEASURES = ["SpanRecall@2", "SpanPrecision", "SpanIoU@5", "SpanRecall(tokens=150)", "R@2", "nDCG@5", "P@3"]


@pytest.mark.filterwarnings("ignore::evalframe.ShallowRankingWarning")
@pytest.mark.filterwarnings("ignore::evalframe.ChunkingsDifferWarning")
@pytest.mark.parametrize("with_chunk_id", [True, False])
def test_run_carrying_offsets(with_chunk_id):
    spans, _, _, run = help_centre()
    chunks = {"a": CHUNKS_A, "b": CHUNKS_B}
    expected = ef.evaluate(run, spans, MEASURES, chunks=chunks)
    table = pd.concat([CHUNKS_A, CHUNKS_B], ignore_index=True).rename(columns={"chunk_id": "doc_id",
                                                                               "doc_id": "parent"})
    carried = run.merge(table, on="doc_id", how="left").rename(columns={"doc_id": "chunk_id", "parent": "doc_id"})
    if not with_chunk_id:
        carried = carried.drop(columns=["chunk_id"])
    carried = carried.sample(frac=1, random_state=3)  # row order does not matter
    got = ef.evaluate(carried, spans, MEASURES)
    pd.testing.assert_frame_equal(got.reset_index(drop=True), expected.reset_index(drop=True), check_exact=False,
                                  atol=1e-12, rtol=0)
    # one system, without a system column
    one = carried[carried["system"] == "b"].drop(columns=["system"])
    alone = ef.evaluate(run[run["system"] == "b"].drop(columns=["system"]), spans, MEASURES, chunks=CHUNKS_B)
    pd.testing.assert_frame_equal(ef.evaluate(one, spans, MEASURES).reset_index(drop=True),
                                  alone.reset_index(drop=True), check_exact=False, atol=1e-12, rtol=0)


# ====================================================================== 7. tokens from the chunk table
@pytest.mark.filterwarnings("ignore::evalframe.ShallowRankingWarning")
def test_token_budget_from_the_chunk_table():
    _, golden_a, _, run = help_centre()
    run_a = run[run["system"] == "a"].drop(columns=["system"])
    ms = ["R(tokens=100)", "R(tokens=100)@3", "R(tokens=39)", "R@5"]
    joined = run_a.merge(CHUNKS_A[["chunk_id", "tokens"]].rename(columns={"chunk_id": "doc_id"}), on="doc_id")
    expected = ef.evaluate(joined, golden_a, ms)
    got = ef.evaluate(run_a, golden_a, ms, chunks=CHUNKS_A)
    pd.testing.assert_frame_equal(got, expected)
    assert expected.loc[expected["measure"] == "R(tokens=39)", "value"].eq(0).all()  # a chunk is 40 tokens
    with pytest.raises(ef.EvalframeInputError, match="tokens"):
        ef.evaluate(run_a, golden_a, ms)


# ====================================================================== 8. measure names
@pytest.mark.parametrize("name,canonical", [
    ("SpanRecall(tokens=512)", "SpanRecall(tokens=512)"),
    ("SpanIoU@5", "SpanIoU@5"),
    ("SpanPrecision(rel=2)@10", "SpanPrecision(rel=2)@10"),
    ("TokenRecall@5", "SpanRecall@5"),
    ("SpanP(tokens=5,rel=2)@10", "SpanPrecision(rel=2,tokens=5)@10"),
])
def test_measure_names_round_trip(name, canonical):
    m = ef.parse_measure(name)
    assert str(m) == canonical
    assert ef.parse_measure(str(m)) == m


# ---------------------------------------------------------------- tokens=, doc_length, mixed rows, sizes
@quiet
def test_tokens_map_equals_the_tokens_column_joined_by_hand():
    spans, labels_a, _, run = help_centre()
    run_a = run[run["system"] == "a"]
    counts = CHUNKS_A.set_index("chunk_id")["tokens"]
    by_hand = run_a.assign(tokens=run_a["doc_id"].map(counts))
    want = ef.evaluate(by_hand, labels_a, ["R(tokens=30)", "nDCG(tokens=30)"])
    for tokens in (CHUNKS_A[["chunk_id", "tokens"]], counts, counts.to_dict()):
        got = ef.evaluate(run_a, labels_a, ["R(tokens=30)", "nDCG(tokens=30)"], tokens=tokens)
        pd.testing.assert_frame_equal(got, want)
    with pytest.raises(ef.EvalframeInputError, match="1 retrieved ids have no token count"):
        ef.evaluate(run_a, labels_a, ["R(tokens=30)"], tokens=counts.drop(run_a["doc_id"].iloc[0]))
    with pytest.raises(ef.EvalframeInputError, match="tokens column and tokens="):
        ef.evaluate(by_hand, labels_a, ["R(tokens=30)"], tokens=counts)


def test_a_span_golden_set_mixed_with_chunk_level_rows_is_named():
    mixed = pd.DataFrame({"query_id": ["q", "q"], "doc_id": ["d", "d#3"], "start": [0, None],
                          "end": [10, None], "relevance": [1, 1]})
    with pytest.raises(ef.EvalframeInputError, match="mixed with chunk-level rows"):
        ef.read_qrels(mixed)


def test_spans_beyond_the_documents_known_length():
    chunks = CHUNKS_A.assign(doc_length=DOC_LEN)
    ok = pd.DataFrame({"query_id": ["q"], "doc_id": ["d0"], "start": [0], "end": [DOC_LEN]})
    assert ef.span_labels(ok, chunks)["relevance"].max() == 1
    with pytest.raises(ef.EvalframeInputError, match="1 spans end beyond their document's length"):
        ef.span_labels(ok.assign(end=DOC_LEN + 1), chunks)
    with pytest.raises(ef.EvalframeInputError, match="chunks end beyond their document's length"):
        ef.read_chunks(CHUNKS_A.assign(doc_length=10))


@quiet
def test_chunk_sizes_differ_is_a_suggestion_in_the_diagnostics():
    spans, _, _, run = help_centre()
    chunks = {"a": CHUNKS_A, "b": CHUNKS_B}
    d = ef.diagnostics(run, spans, ["R@5"], chunks=chunks)
    row = d[d["check"] == "chunk_sizes_differ"]
    assert len(row) == 1 and "R(tokens=" in row["action"].iloc[0] and row["count"].iloc[0] == 2
    assert "chunk_sizes_differ" not in set(ef.diagnostics(run, spans, ["R(tokens=100)"], chunks=chunks)["check"])
    same = ef.diagnostics(run[run["system"] == "a"], spans, ["R@5"], chunks=CHUNKS_A)
    assert "chunk_sizes_differ" not in set(same["check"])


@quiet
def test_the_commands_read_chunk_tables(tmp_path):
    import subprocess
    import sys
    spans, _, _, run = help_centre()
    spans.to_csv(tmp_path / "spans.csv", index=False)
    run.to_csv(tmp_path / "run.csv", index=False)
    CHUNKS_A.to_parquet(tmp_path / "a.parquet")
    CHUNKS_B.to_csv(tmp_path / "b.tsv", sep="\t", index=False)
    cmd = [sys.executable, "-m", "evalframe.cli", "evaluate", str(tmp_path / "spans.csv"), str(tmp_path / "run.csv"),
           "-m", "SpanRecall@2", "--chunks", f"a={tmp_path / 'a.parquet'}", "--chunks", f"b={tmp_path / 'b.tsv'}",
           "--format", "csv"]
    out = subprocess.run(cmd, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    got = pd.read_csv(__import__("io").StringIO(out.stdout)).set_index("system")
    want = ef.aggregate(ef.evaluate(run, spans, ["SpanRecall@2"], chunks={"a": CHUNKS_A, "b": CHUNKS_B}))
    for r in want.itertuples():
        assert got.loc[r.system, "value"] == pytest.approx(r.value, abs=1e-12)
    bad = subprocess.run(cmd[:-6] + ["-m", "SpanRecall@2", "--chunks", f"a={tmp_path / 'a.parquet'}"],
                         capture_output=True, text=True)
    assert bad.returncode != 0 and "chunks= names no chunk table for the systems ['b']" in bad.stderr
