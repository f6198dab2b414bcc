"""Integer document ids: evaluated without writing each id as a string, with the
values of the same ids given as strings (ties broken by the id *as a string*,
so "10" comes before "9"), and of pytrec_eval given the strings.

The oracle is the string-id evaluation of the same table (every id written by
``str``) and pytrec_eval (trec_eval's C code), never the integer path itself.
"""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import evalframe as ef
from evalframe.schema import check_qrels, check_run, clean_run

MEASURES = ["P@1", "P@2", "P@3", "P@5", "AP", "AP@3", "nDCG@3", "nDCG", "RR", "R@2", "NumRet", "NumRelRet"]


def _case(seed: int, n_q: int = 40, depth: int = 12, pool: int = 130):
    """Integer ids with many score ties among ids whose string order differs from
    their numeric order (1, 10, 100, 9, 99 ...), some never judged, some judged only."""
    rng = np.random.default_rng(seed)
    rows = []
    for q in range(n_q):
        docs = rng.choice(pool, depth, replace=False)
        scores = rng.choice([1.0, 2.0, 3.0], depth)  # ties on almost every rank
        rows += [(q * 7, int(d), float(s)) for d, s in zip(docs, scores)]
    run = pd.DataFrame(rows, columns=["query_id", "doc_id", "score"])
    judged = run.sample(frac=0.5, random_state=seed)[["query_id", "doc_id"]]
    extra = pd.DataFrame({"query_id": judged["query_id"].to_numpy()[:10],
                          "doc_id": rng.integers(pool, 2 * pool, 10)})  # judged, never retrieved
    qrels = pd.concat([judged, extra], ignore_index=True)
    qrels["relevance"] = rng.integers(0, 3, len(qrels))
    return run.sample(frac=1.0, random_state=seed + 1).reset_index(drop=True), qrels  # shuffled


def _as_str(df: pd.DataFrame) -> pd.DataFrame:
    return df.assign(query_id=df["query_id"].astype(str), doc_id=df["doc_id"].astype(str))


def _evaluate(run, qrels, measures=MEASURES, **options) -> pd.DataFrame:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ef.EvalframeWarning)
        out = ef.evaluate(run, qrels, measures, missing="drop", **options)
    return out.sort_values([c for c in ("system", "query_id", "measure") if c in out]).reset_index(drop=True)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("grouped", [False, True])
def test_integer_ids_give_the_values_of_string_ids(seed, grouped):
    run, qrels = _case(seed)
    if grouped:  # grouped by question, sorted by score: the ties are found in place
        run = run.sort_values(["query_id", "score"], ascending=[True, False], kind="stable").reset_index(drop=True)
    expected = _evaluate(_as_str(run), _as_str(qrels))
    got = _evaluate(run, qrels)
    pd.testing.assert_frame_equal(got, expected)  # bit-identical values, same str question ids


@pytest.mark.parametrize("ties", ["doc_id_asc", "doc_id_desc"])
def test_tie_order_either_way_and_with_systems(ties):
    run, qrels = _case(3)
    run = pd.concat([run.assign(system="a"), run.assign(system="b", score=run["score"][::-1].to_numpy())])
    pd.testing.assert_frame_equal(_evaluate(run, qrels, ties=ties), _evaluate(_as_str(run), _as_str(qrels), ties=ties))


@pytest.mark.parametrize("dtype", ["int32", "uint32", "int64", "uint64"])
def test_integer_dtypes_and_mixed_sides(dtype):
    run, qrels = _case(7)
    expected = _evaluate(_as_str(run), _as_str(qrels))
    typed = run.astype({"doc_id": dtype})
    pd.testing.assert_frame_equal(_evaluate(typed, qrels.astype({"doc_id": dtype})), expected)
    pd.testing.assert_frame_equal(_evaluate(typed, _as_str(qrels)), expected)  # int run, str golden set
    pd.testing.assert_frame_equal(_evaluate(_as_str(run), qrels.astype({"doc_id": dtype})), expected)


def test_ids_of_every_width_and_negative_ids():
    """Ties between ids of 1 to 19 digits (and 0), and negative ids (the string path)."""
    big = np.array([0, 9, 10, 99, 100, 1, 19, 2, 10 ** 17, 10 ** 18 - 1, 10 ** 18, 2 ** 63 - 1, 9 * 10 ** 18,
                    123456789012, 12345678901, 1234567890123456789], dtype=np.int64)
    for docs in (big, np.concatenate([big[:6], -big[1:6]])):
        run = pd.DataFrame({"query_id": 1, "doc_id": docs, "score": 1.0})
        qrels = pd.DataFrame({"query_id": 1, "doc_id": docs[::3], "relevance": np.arange(len(docs[::3])) % 3})
        measures = ["P@1", "P@2", "P@4", "AP", "nDCG@5", "RR"]
        pd.testing.assert_frame_equal(_evaluate(run, qrels, measures), _evaluate(_as_str(run), _as_str(qrels), measures))
        J = ef.ranking.judge(check_run(run), check_qrels(qrels))
        order = sorted(map(str, docs), reverse=True)  # trec_eval: ties by doc id descending, as strings
        labels = dict(zip(map(str, qrels["doc_id"]), qrels["relevance"]))
        assert J.label.tolist() == [labels.get(d, ef.ranking.NOT_JUDGED) for d in order]


def test_matches_pytrec_eval():
    pytrec_eval = pytest.importorskip("pytrec_eval")
    run, qrels = _case(11)
    qd: dict = {}
    for q, d, r in qrels.itertuples(index=False):
        qd.setdefault(str(q), {})[str(d)] = int(r)
    rd: dict = {}
    for q, d, s in run.itertuples(index=False):
        rd.setdefault(str(q), {})[str(d)] = float(s)
    expected = pytrec_eval.RelevanceEvaluator(qd, {"P.1,2,3,5", "map", "recip_rank", "ndcg_cut.3"}).evaluate(rd)
    got = _evaluate(run, qrels, ["P@1", "P@2", "P@3", "P@5", "AP", "RR", "nDCG(gain='linear')@3"])
    table = got.pivot(index="query_id", columns="measure", values="value")
    names = {"P@1": "P_1", "P@2": "P_2", "P@3": "P_3", "P@5": "P_5", "AP": "map", "RR": "recip_rank",
             "nDCG(gain='linear')@3": "ndcg_cut_3"}
    assert set(table.index) == set(expected)
    for q, vals in expected.items():
        for ours, theirs in names.items():
            assert table.loc[q, ours] == pytest.approx(vals[theirs], abs=1e-12), (q, ours)


def test_duplicates_found_and_clean_run_gives_strings():
    run = pd.DataFrame({"query_id": [1, 1, 1, 2], "doc_id": [10, 9, 10, 10], "score": [1.0, 2.0, 3.0, 1.0]})
    with pytest.raises(ef.EvalframeInputError, match="listed more than once"):
        check_run(run)
    checked = check_run(run, duplicates="max")
    assert len(checked.frame) == 3 and checked.repeats is not None and len(checked.repeats) == 1
    assert checked.doc.to_pylist() == ["9", "10", "10"]  # the strings, whatever is kept inside
    cleaned = clean_run(run, duplicates="max")
    assert cleaned["doc_id"].tolist() == ["9", "10", "10"] and pd.api.types.is_string_dtype(cleaned["doc_id"])
    assert cleaned["score"].tolist() == [2.0, 3.0, 1.0]  # the highest score kept


NUMBERS = ["0", "7", "12", "012", "-0", "-5", "00", "999999999999999999", "1000000000000000000",
           "9223372036854775807", "1" * 18]


@pytest.mark.parametrize("texts", [NUMBERS,  # all numbers to Arrow's cast: read, then checked
                                   NUMBERS + ["+12", " 12", "d7", "99999999999999999999"]])  # the pattern
def test_golden_set_ids_read_as_the_integers_they_write(texts):
    import pyarrow as pa

    from evalframe._id_bytes import parse_decimal_ids
    got = parse_decimal_ids(pa.chunked_array([pa.array(texts, pa.large_string())]))
    for row, (text, value) in enumerate(zip(texts, got)):
        canonical = text.isdigit() and str(int(text)) == text and int(text) < 10 ** 18  # the oracle: Python's str
        assert value == (int(text) if canonical else -1 - row), text


def test_grouped_integer_question_ids_written_as_strings():
    from evalframe.schema import ids_to_str
    q = pd.Series(np.repeat(np.array([5, 12, 5, 100000], dtype=np.int64), 40_000))  # runs, one repeated
    assert ids_to_str(q).tolist() == [str(v) for v in q]


@pytest.mark.parametrize("canonical", [True, False], ids=["canonical columns", "aliases"])
def test_the_callers_tables_are_left_as_they_were(canonical):
    """Tables whose columns are already canonical are checked on a shallow copy (pandas >= 3:
    copy-on-write): ids trimmed of blanks, integer ids written as strings, duplicates
    dropped and ranks filled in the checked tables, never in the caller's."""
    run = pd.DataFrame({"query_id": [" q1", "q1", "q1", "q2"], "doc_id": ["d1", "d2 ", "d2 ", "d3"],
                        "score": [3.0, 2.0, 1.0, 1.0]})
    qrels = pd.DataFrame({"query_id": [" q1", "q2", "q2"], "doc_id": [1, 3, 3], "relevance": [1, 1, 2]})
    if not canonical:
        run = run.rename(columns={"query_id": "qid", "doc_id": "docno"})
        qrels = qrels.rename(columns={"relevance": "label"})
    before = run.copy(deep=True), qrels.copy(deep=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = ef.evaluate(run, qrels, ["P@1", "AP"], duplicates="first", conflicts="max")
        check_run(run, duplicates="first")
    assert len(table) == 4 and table["value"].notna().all()
    pd.testing.assert_frame_equal(run, before[0])
    pd.testing.assert_frame_equal(qrels, before[1])
