"""Tables as RAG teams store them (evalframe.canonical): every shape must give, bit for bit, the
numbers of the same table in canonical columns through the existing path (the oracle)."""
import json
import warnings

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import evalframe as ef
from evalframe.errors import EvalframeWarning
from evalframe.canonical import TEXT_COLUMN, arrow_frame, question_texts
from evalframe.evaluation import evaluate_with_diagnostics
from evalframe.reporting import read_segments

MEASURES = ["R@5", "R@10", "P@5", "RR", "nDCG@10", "AP"]


@pytest.fixture(scope="module")
def data():
    cran = ef.datasets.load_cranfield()
    keep = set(pd.unique(cran.qrels["query_id"])[:40])
    qrels = cran.qrels[cran.qrels["query_id"].isin(keep)].reset_index(drop=True)
    runs = cran.runs[cran.runs["query_id"].isin(keep) & cran.runs["system"].isin(["bm25", "tfidf"])]
    run = runs.reset_index(drop=True)
    # each list in the order evalframe ranks it (score descending, ties by doc_id descending)
    run = run.sort_values(["system", "query_id", "score", "doc_id"], ascending=[True, True, False, False],
                          kind="stable").reset_index(drop=True)
    run["rank"] = run.groupby(["system", "query_id"]).cumcount() + 1
    return run, qrels, cran.queries


def expected(run, qrels, **kw):
    return ef.evaluate(run[["system", "query_id", "doc_id", "score"]], qrels, MEASURES, **kw)


def same(got, want):
    key = [c for c in ("system", "query_id", "measure") if c in want]
    g = got.sort_values(key).reset_index(drop=True)
    w = want.sort_values(key).reset_index(drop=True)
    assert g[key].astype(str).equals(w[key].astype(str))
    np.testing.assert_array_equal(g["value"].to_numpy(), w["value"].to_numpy())


# ---------------------------------------------------------------- columns= and aliases
def test_columns_mapping_gives_the_canonical_numbers(data):
    run, qrels, _ = data
    r = run.rename(columns={"query_id": "qa", "doc_id": "chunk", "score": "cos", "system": "model"})
    q = qrels.rename(columns={"query_id": "qa", "doc_id": "chunk", "relevance": "stars"})
    cols = {"qa": "query_id", "chunk": "doc_id", "cos": "score", "model": "system", "stars": "relevance"}
    before = r.copy()
    want = expected(run, qrels)
    same(ef.evaluate(r, q, MEASURES, columns=cols), want)
    pd.testing.assert_frame_equal(ef.read_qrels(q, columns=cols), ef.read_qrels(qrels))
    pd.testing.assert_frame_equal(ef.read_run(r.drop(columns="rank"), columns=cols),
                                  ef.read_run(run.drop(columns="rank")))
    d1 = ef.diagnostics(r, q, columns=cols)
    pd.testing.assert_frame_equal(d1, ef.diagnostics(run.drop(columns="rank"), qrels))
    per, diag = evaluate_with_diagnostics(r, q, MEASURES, columns=cols)
    same(per, want)
    pd.testing.assert_frame_equal(r, before)  # the caller's frame is not modified


def test_columns_mapping_wins_over_a_column_of_the_same_name():
    q = pd.DataFrame({"query_id": ["x", "y"], "qa": ["1", "1"], "doc_id": ["a", "b"], "relevance": [1, 0]})
    got = ef.read_qrels(q, columns={"qa": "query_id"})
    assert got["query_id"].tolist() == ["1", "1"]


@pytest.mark.parametrize("bad", [{"a": "nope"}, {"a": "doc_id", "b": "doc_id"}, [("a", "doc_id")]])
def test_columns_must_map_to_distinct_canonical_names(data, bad):
    run, qrels, _ = data
    with pytest.raises(ValueError, match="columns must map"):
        ef.read_qrels(qrels, columns=bad)


def test_missing_column_hint_names_columns_mapping():
    with pytest.raises(ef.EvalframeInputError, match=r"columns=\{'your_name': 'doc_id'\}"):
        ef.read_qrels(pd.DataFrame({"query_id": ["1"], "thing": ["a"], "relevance": [1]}))


@pytest.mark.parametrize("doc", ["chunk_id", "passage_id", "page_id"])
def test_rag_aliases(data, doc):
    run, qrels, _ = data
    r = run.drop(columns="rank").rename(columns={"query_id": "question_id", "doc_id": doc})
    q = qrels.rename(columns={"query_id": "question_id", "doc_id": doc})
    same(ef.evaluate(r, q, MEASURES), expected(run, qrels))


def test_beir_qrels_files_and_tables(data, tmp_path):
    """BEIR's qrels (``qrels/test.tsv``: a header ``query-id corpus-id score``, the score
    being the label) read as they are, and its runs' ``corpus-id`` as the document."""
    run, qrels, _ = data
    beir = qrels.rename(columns={"query_id": "query-id", "doc_id": "corpus-id", "relevance": "score"})
    path = tmp_path / "test.tsv"
    beir.to_csv(path, sep="\t", index=False)
    r = run.drop(columns="rank").rename(columns={"query_id": "query-id", "doc_id": "corpus-id"})
    for q in (beir, path):
        got = ef.read_qrels(q)
        assert got.columns.tolist() == ["query_id", "doc_id", "relevance"]
        same(ef.evaluate(r, q, MEASURES), expected(run, qrels))
    with pytest.raises(ef.EvalframeInputError, match="non-integral"):  # a run passed as the golden set
        ef.read_qrels(run[["query_id", "doc_id", "score"]])


def test_question_text_beside_the_id_is_kept(data):
    run, qrels, queries = data
    text = queries.set_index("query_id")["text"]
    q = qrels.rename(columns={"query_id": "question_id"})
    q["question"] = text.reindex(q["question_id"]).to_numpy()
    q["question_id"] = q["question_id"].astype(int)  # ids as a RAG team stores them
    got = ef.read_qrels(q)
    assert TEXT_COLUMN in got.columns
    assert (got["text"].to_numpy() == text.reindex(got["query_id"]).to_numpy()).all()
    pd.testing.assert_frame_equal(got.drop(columns="text"), ef.read_qrels(qrels))
    same(ef.evaluate(run.drop(columns="rank"), q, MEASURES), expected(run, qrels))
    qt = question_texts(got)
    assert qt["query_id"].is_unique and len(qt) == qrels["query_id"].nunique()
    assert question_texts(ef.read_qrels(qrels)) is None
    # several id columns are still an ambiguity
    with pytest.raises(ef.EvalframeInputError, match="several columns could be 'query_id'"):
        ef.read_qrels(q.assign(qid=q["question_id"]))


def test_report_changes_show_the_golden_sets_question_text(data):
    run, qrels, queries = data
    q = qrels.rename(columns={"query_id": "question_id"})
    q["question"] = queries.set_index("query_id")["text"].reindex(q["question_id"]).to_numpy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rep = ef.report(run.drop(columns="rank"), q, measures=["nDCG@10"], n_resamples=50)
        ref = ef.report(run.drop(columns="rank"), qrels, measures=["nDCG@10"], n_resamples=50, queries=queries)
    assert len(rep.changes) and rep.changes["text"].notna().all()
    pd.testing.assert_frame_equal(rep.changes, ref.changes)
    pd.testing.assert_frame_equal(rep.summary, ref.summary)


# ---------------------------------------------------------------- rank-only runs
def test_rank_only_run_is_ordered_by_rank(data):
    run, qrels, _ = data
    want = expected(run, qrels)
    ranks = run.drop(columns="score").sample(frac=1, random_state=1)  # row order must not matter
    same(ef.evaluate(ranks, qrels, MEASURES), want)
    same(ef.evaluate(ranks, qrels, MEASURES, ties="rank"), want)
    # a score column without a single value is no score
    same(ef.evaluate(ranks.assign(score=np.nan), qrels, MEASURES), want)


def test_repeated_ranks_are_ties_broken_by_the_ties_convention():
    qrels = pd.DataFrame({"query_id": "1", "doc_id": ["a", "b", "c"], "relevance": [1, 0, 0]})
    ranks = pd.DataFrame({"query_id": "1", "doc_id": ["a", "b", "c"], "rank": [1, 1, 2]})
    scores = ranks.assign(score=[5.0, 5.0, 1.0]).drop(columns="rank")  # the same order as scores
    for ties in ("doc_id_desc", "doc_id_asc"):
        same(ef.evaluate(ranks, qrels, ["RR"], ties=ties), ef.evaluate(scores, qrels, ["RR"], ties=ties))
    assert ef.evaluate(ranks, qrels, ["RR"])["value"].item() == 0.5  # b before a: doc_id descending
    same(ef.evaluate(ranks, qrels, ["RR"], ties="rank"), ef.evaluate(ranks, qrels, ["RR"]))
    d = ef.diagnostics(ranks, qrels)
    assert d.loc[d["check"] == "score_ties", "count"].tolist() == [2]


def test_nan_score_is_no_error_when_ranking_by_rank(data):
    run, qrels, _ = data
    holes = run.copy()
    holes.loc[holes.index[::7], "score"] = np.nan
    with pytest.raises(ef.EvalframeInputError, match="ties='rank'"):
        ef.evaluate(holes, qrels, MEASURES)
    same(ef.evaluate(holes, qrels, MEASURES, ties="rank"), ef.evaluate(run, qrels, MEASURES, ties="rank"))


def test_rank_only_errors_speak_of_ranks():
    bad = pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["a", "b"], "rank": [1, None]})
    with pytest.raises(ef.EvalframeInputError) as exc:
        ef.read_run(bad)
    assert "missing or non-numeric rank" in str(exc.value) and "missing column 'score'" not in str(exc.value)
    assert "non-numeric score" not in str(exc.value)
    with pytest.raises(ef.EvalframeInputError, match="'rank' column"):
        ef.read_run(pd.DataFrame({"query_id": ["1"], "doc_id": ["a"]}))


# ---------------------------------------------------------------- list runs
def _lists(run, scores=True):
    g = run.groupby(["system", "query_id"], sort=False)
    out = g["doc_id"].agg(list).rename("doc_ids").reset_index()
    if scores:
        out["scores"] = g["score"].agg(list).to_numpy()
    return out


def test_list_runs_pandas_arrow_jsonl_parquet(data, tmp_path):
    run, qrels, _ = data
    want = expected(run, qrels)
    for scores in (True, False):
        lists = _lists(run, scores)
        same(ef.evaluate(lists, qrels, MEASURES), want)
        table = pa.Table.from_pandas(lists, preserve_index=False)
        assert pa.types.is_list(table.schema.field("doc_ids").type)
        same(ef.evaluate(table, qrels, MEASURES), want)
        path = tmp_path / f"log{scores}.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in lists.to_dict("records")))
        same(ef.evaluate(path, qrels, MEASURES), want)
        lists.to_parquet(tmp_path / f"log{scores}.parquet")
        same(ef.evaluate(tmp_path / f"log{scores}.parquet", qrels, MEASURES), want)
    got = ef.read_run(_lists(run, False))
    assert got.groupby(["system", "query_id"])["rank"].apply(lambda r: (np.diff(r) == 1).all()).all()


@pytest.mark.filterwarnings("ignore::evalframe.errors.QuestionsScoredZeroWarning")
def test_list_run_with_numpy_arrays_and_empty_lists():
    qrels = pd.DataFrame({"query_id": ["1", "2"], "doc_id": ["a", "b"], "relevance": [1, 1]})
    lists = pd.DataFrame({"question_id": ["1", "2"], "chunk_ids": [np.array(["x", "a"]), np.array([], dtype=str)]})
    long = pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["x", "a"], "rank": [1, 2]})
    same(ef.evaluate(lists, qrels, ["RR", "R@5"]), ef.evaluate(long, qrels, ["RR", "R@5"]))


@pytest.mark.parametrize("column", ["score", "rank", "similarity"])
def test_list_run_with_one_score_or_rank_per_row_is_an_error(column):
    # a list of documents beside one score (or rank) per question: every listed document got
    # that one value, a tie broken by doc_id, so the list's order was lost (b ranked above a)
    lists = pd.DataFrame({"question_id": ["1", "2"], "retrieved_ids": [["a", "b"], ["c"]], column: [0.87, 0.5]})
    with pytest.raises(ef.EvalframeInputError, match=f"{column!r} holds one value per row"):
        ef.read_run(lists)


def test_list_run_with_a_question_in_two_rows_is_an_error_when_positions_rank():
    # two lists for one question ranked by position: both first documents had rank 1, a tie
    # broken by doc_id (b above a) whatever the rows' order
    lists = pd.DataFrame({"question_id": ["1", "1", "2"], "retrieved_ids": [["a"], ["b"], ["c"]]})
    with pytest.raises(ef.EvalframeInputError, match="1 questions have more than one row"):
        ef.read_run(lists)
    systems = lists.assign(system=["x", "y", "x"])  # one row per (system, question): no problem
    assert ef.read_run(systems)["rank"].tolist() == [1, 1, 1]
    empty = pd.DataFrame({"question_id": ["1", "1"], "retrieved_ids": [["a"], []]})  # nothing listed twice
    assert ef.read_run(empty)["doc_id"].tolist() == ["a"]
    scored = lists.assign(scores=[[0.2], [0.1], [1.0]])  # scores rank them: no problem
    assert ef.read_run(scored)["doc_id"].tolist() == ["a", "b", "c"]


def test_list_run_with_an_empty_score_column_is_ranked_by_list_position():
    qrels = pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["a", "b"], "relevance": [1, 0]})
    lists = pd.DataFrame({"question_id": ["1"], "retrieved_ids": [["a", "b"]], "score": [np.nan]})
    got = ef.evaluate(lists, qrels, ["P@1", "RR"])
    assert got["value"].tolist() == [1.0, 1.0]  # a is listed first and relevant


def test_list_run_scores_of_another_length_are_an_error():
    lists = pd.DataFrame({"query_id": ["1"], "doc_ids": [["a", "b"]], "scores": [[1.0]]})
    with pytest.raises(ef.EvalframeInputError, match="'scores' list of another length"):
        ef.read_run(lists)


# ---------------------------------------------------------------- other frames
class _Stream:
    """Any object exposing the Arrow C stream interface (as DuckDB results do)."""

    def __init__(self, table):
        self.table = table

    def __arrow_c_stream__(self, requested_schema=None):
        return self.table.__arrow_c_stream__(requested_schema)


def test_arrow_tables_streams_and_c_stream_objects(data):
    run, qrels, _ = data
    want = expected(run, qrels)
    rt = pa.Table.from_pandas(run.drop(columns="rank"), preserve_index=False)
    qt = pa.Table.from_pandas(qrels, preserve_index=False)
    for r, q in [(rt, qt), (rt.to_reader(), _Stream(qt)), (_Stream(rt), qt.to_batches()[0])]:
        same(ef.evaluate(r, q, MEASURES), want)
    frame = arrow_frame(rt)
    assert frame["doc_id"].dtype != object  # Arrow-backed: no Python object per row
    assert arrow_frame(run) is None


def test_polars_frames(data):
    pl = pytest.importorskip("polars")
    run, qrels, _ = data
    want = expected(run, qrels)
    same(ef.evaluate(pl.from_pandas(run.drop(columns="rank")), pl.from_pandas(qrels), MEASURES), want)
    lists = pl.from_pandas(_lists(run, False).astype({"doc_ids": object}))
    same(ef.evaluate(lists, qrels, MEASURES), want)
    frame = arrow_frame(pl.from_pandas(run))
    assert frame["doc_id"].dtype != object


def test_duckdb_results(data):
    duckdb = pytest.importorskip("duckdb")
    run, qrels, _ = data
    con = duckdb.connect()
    con.register("run", run.drop(columns="rank"))
    con.register("qrels", qrels)
    got = ef.evaluate(con.sql("select * from run"), con.sql("select query_id as question_id, doc_id as chunk_id, "
                                                            "relevance from qrels"), MEASURES)
    same(got, expected(run, qrels))


def test_unknown_source_message_names_the_accepted_frames():
    with pytest.raises(TypeError, match="polars"):
        ef.read_run(3.5)


# ---------------------------------------------------------------- conflicting labels
def _votes(seed=0, n=400):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"query_id": rng.integers(1, 6, n).astype(str), "doc_id": rng.integers(0, 30, n).astype(str),
                         "relevance": rng.integers(0, 4, n)})


def _resolved_by_loop(votes, how):
    """The oracle: one label per (question, document), written as a plain loop."""
    labels = {}
    for q, d, r in votes.itertuples(index=False):
        labels.setdefault((q, d), []).append(int(r))
    rows = []
    for (q, d), ls in labels.items():
        if how == "max":
            v = max(ls)
        elif how == "min":
            v = min(ls)
        else:
            counts = {x: ls.count(x) for x in ls}
            v = max(counts, key=lambda x: (counts[x], x))  # most votes, then the higher label
        rows.append((q, d, v))
    conflicted = sum(len(set(ls)) > 1 for ls in labels.values())
    return pd.DataFrame(rows, columns=["query_id", "doc_id", "relevance"]), conflicted


@pytest.mark.parametrize("how", ["max", "min", "majority"])
def test_conflicts_resolved_as_a_loop_would(how):
    votes = _votes()
    oracle, n_conflicted = _resolved_by_loop(votes, how)
    got = ef.read_qrels(votes, conflicts=how)  # one row per pair, where the pair first appears
    pd.testing.assert_frame_equal(got.reset_index(drop=True), oracle, check_dtype=False)
    run = pd.DataFrame({"query_id": votes["query_id"], "doc_id": votes["doc_id"]}).drop_duplicates()
    run["score"] = np.arange(len(run), dtype=float)
    same(ef.evaluate(run, votes, MEASURES, conflicts=how), ef.evaluate(run, oracle, MEASURES))
    d = ef.diagnostics(run, votes, conflicts=how)
    row = d[d["check"] == "golden_set_conflicting_labels"]
    assert row["count"].tolist() == [n_conflicted] and row["action"].item() == f"resolved: {how} label"
    # read first, evaluate after: the count travels on the checked golden set (no DataFrame.attrs)
    checked = ef.read_golden_set(votes, conflicts=how)
    pd.testing.assert_frame_equal(checked.table, got)
    d2 = ef.diagnostics(run, checked)
    assert d2[d2["check"] == "golden_set_conflicting_labels"]["count"].tolist() == [n_conflicted]
    # the table read_qrels gives holds the resolved labels, not the record: a later call,
    # whatever its conflicts=, has none to report (no hidden channel, no double count)
    d3 = ef.diagnostics(run, got.copy(), conflicts=how)
    assert "golden_set_conflicting_labels" not in set(d3["check"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rep = ef.report(run, votes, measures=["RR"], n_resamples=20, conflicts=how)
    assert rep.diagnostics.loc[rep.diagnostics["check"] == "golden_set_conflicting_labels", "count"].tolist() == [n_conflicted]


@pytest.mark.parametrize("how", ["max", "min", "majority"])
@pytest.mark.parametrize("ids", ["text", "integer", "long text"])
def test_many_votes_resolved_as_a_loop_would(how, ids):
    """Every pair judged by several annotators, labels far apart (negative and large): the
    whole table is conflicted, in first-appearance order, examples the first conflicted pairs."""
    rng = np.random.default_rng(3)
    n = 20000
    votes = pd.DataFrame({"query_id": rng.integers(0, 300, n), "doc_id": rng.integers(0, 40, n),
                          "relevance": rng.choice([-1, 0, 1, 2, 10**12], n)})
    if ids != "integer":
        pad = "https://example.org/collection/documents/" if ids == "long text" else "d"
        votes["doc_id"] = pad + votes["doc_id"].astype(str)
        votes["query_id"] = votes["query_id"].astype(str)
    oracle, n_conflicted = _resolved_by_loop(votes.astype({"query_id": str, "doc_id": str}), how)
    got = ef.read_qrels(votes, conflicts=how)
    assert got["relevance"].tolist() == oracle["relevance"].tolist()
    assert got["query_id"].astype(str).tolist() == oracle["query_id"].tolist()
    assert got["doc_id"].astype(str).tolist() == oracle["doc_id"].tolist()
    run = oracle[["query_id", "doc_id"]].assign(score=1.0)
    d = ef.diagnostics(run, votes.astype({"query_id": str, "doc_id": str}), conflicts=how)
    row = d[d["check"] == "golden_set_conflicting_labels"]
    assert row["count"].tolist() == [n_conflicted] and 0 < n_conflicted < len(oracle)


@pytest.mark.parametrize("keys", ["one key", "question ignored"])
@pytest.mark.parametrize("how", ["error", "max", "majority"])
def test_conflicts_confirmed_on_the_ids_whatever_the_pair_keys(monkeypatch, how, keys):
    # pairs are grouped by 64-bit keys and confirmed on the ids: colliding keys
    # (every row one key, or keys blind to the question) fall back to comparing the strings
    import evalframe._id_codes as id_codes  # where the golden set's pair keys are made (CheckedQrels.pair_keys)
    votes = _votes(seed=5)
    if how == "error":
        votes = votes.drop_duplicates(["query_id", "doc_id"]).iloc[np.r_[0:60, 0:60]]  # identical repeats
        oracle = votes.iloc[:60].reset_index(drop=True)
    else:
        oracle, _ = _resolved_by_loop(votes, how)
    monkeypatch.setattr(id_codes, "pair_keys", (lambda codes, fp: np.zeros(len(codes), dtype=np.uint64))
                        if keys == "one key" else (lambda codes, fp: fp.copy()))
    pd.testing.assert_frame_equal(ef.read_qrels(votes, conflicts=how).reset_index(drop=True), oracle,
                                  check_dtype=False)


def test_identical_rows_only_are_dropped_keeping_the_first():
    rows = pd.DataFrame({"query_id": ["2", "1", "2", "1", "2"], "doc_id": ["b", "a", "b", "c", "b"],
                         "relevance": [1, 0, 1, 2, 1]})
    for conflicts in ("error", "max"):
        got = ef.read_qrels(rows, conflicts=conflicts)
        assert got[["query_id", "doc_id"]].astype(str).values.tolist() == [["2", "b"], ["1", "a"], ["1", "c"]]
        assert got["relevance"].tolist() == [1, 0, 2]


def test_majority_tie_goes_to_the_higher_label_and_identical_rows_are_votes():
    votes = pd.DataFrame({"query_id": "1", "doc_id": ["a", "a", "a", "b", "b"], "relevance": [0, 0, 2, 1, 2]})
    got = ef.read_qrels(votes, conflicts="majority").set_index("doc_id")["relevance"]
    assert got.to_dict() == {"a": 0, "b": 2}


def test_conflicts_default_is_an_error_that_names_the_way_out():
    with pytest.raises(ef.EvalframeInputError, match="conflicts='max'"):
        ef.read_qrels(_votes())
    with pytest.raises(ValueError, match="conflicts must be one of"):
        ef.read_qrels(_votes(), conflicts="mean")
    no_conflict = ef.diagnostics(pd.DataFrame({"query_id": ["1"], "doc_id": ["0"], "score": [1.0]}),
                                 pd.DataFrame({"query_id": ["1"], "doc_id": ["0"], "relevance": [1]}), conflicts="max")
    assert "golden_set_conflicting_labels" not in set(no_conflict["check"])


# ---------------------------------------------------------------- segments
def test_segments_aliases_segment_column_and_free_text(data):
    run, qrels, queries = data
    qs = pd.unique(qrels["query_id"])
    seg = pd.DataFrame({"question_id": qs.astype(int), "segment": np.where(np.arange(len(qs)) % 2, "a", "b")})
    seg["question"] = queries.set_index("query_id")["text"].reindex(qs).to_numpy()  # the question text
    seg["asked_at"] = [f"2026-01-{i:02d}" for i in range(len(qs))]  # one value per question
    with pytest.warns(EvalframeWarning, match="asked_at"):
        got = read_segments(seg)
    assert got.columns.tolist() == ["query_id", "segment"]
    kept = read_segments(seg, segments=["segment", "asked_at"])
    assert kept.columns.tolist() == ["query_id", "segment", "asked_at"]
    with pytest.raises(ef.EvalframeInputError, match="not in the table"):
        read_segments(seg, segments=["kind"])
    renamed = read_segments(seg.rename(columns={"question_id": "qa"}), columns={"qa": "query_id"}, segments="segment")
    pd.testing.assert_frame_equal(renamed, got)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rep = ef.report(run.drop(columns="rank"), qrels, measures=["RR"], n_resamples=50, segments=got)
        ref = ef.report(run.drop(columns="rank"), qrels, measures=["RR"], n_resamples=50,
                        segments=got.rename(columns={"segment": "kind"}))
    assert set(rep.by_segment["segment"]) == {"segment"}
    a = rep.by_segment.drop(columns="segment").reset_index(drop=True)
    b = ref.by_segment.drop(columns="segment").reset_index(drop=True)
    pd.testing.assert_frame_equal(a, b)


@pytest.mark.parametrize("call", ["evaluate", "diagnostics", "read_qrels", "report"])
def test_bad_conflicts_and_columns_name_the_function_called(call):
    fn = getattr(ef, call)
    args = ({"q": {"a": 1.0}}, {"q": {"a": 1}}) if call != "read_qrels" else ({"q": {"a": 1}},)
    with pytest.raises(ValueError, match=f"^{call}: conflicts must be one of"):
        fn(*args, conflicts="mean")
    with pytest.raises(ValueError, match=f"^{call}: columns must map"):
        fn(*args, columns={"a": "nope"})


@pytest.mark.parametrize("seed", range(4))
def test_ids_in_runs_get_the_codes_of_hashing_every_row(seed):
    """encode_run's question codes of a grouped run (encoded run by run) and of a
    shuffled one (every row hashed) are pyarrow's dictionary_encode of the column."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from evalframe.schema import BLOCK_ROWS, encode_run
    rng = np.random.default_rng(seed)
    n = BLOCK_ROWS * 3 + 17
    sizes = rng.integers(1, 400, n // 50)
    q = np.repeat(rng.integers(0, 300, len(sizes)).astype(str), sizes)[:n]  # runs, some ids coming back
    if seed % 2:
        q = rng.permutation(q)
    frame = pd.DataFrame({"query_id": pd.array(q, dtype="string[pyarrow]"), "doc_id": pd.array(
        np.arange(n).astype(str), dtype="string[pyarrow]"), "score": np.zeros(n)})
    codes = encode_run(frame).query
    want = pc.dictionary_encode(pa.array(q, pa.large_string()))
    assert codes.codes.dtype == np.int32
    np.testing.assert_array_equal(codes.codes, want.indices.to_numpy())
    assert codes.dictionary.to_pylist() == want.dictionary.to_pylist()


def test_an_id_in_the_index_is_named_in_the_error(data):
    run, qrels, _ = data
    with pytest.raises(ef.EvalframeInputError, match=r"(?s)it is the index \('query_id'\).*reset_index"):
        ef.evaluate(run.set_index("query_id"), qrels)
    with pytest.raises(ef.EvalframeInputError, match=r"it is the index \('qid'\)"):
        ef.read_qrels(qrels.rename(columns={"query_id": "qid"}).set_index(["qid", "doc_id"]))
    same(ef.evaluate(run.set_index("query_id").reset_index(), qrels, MEASURES), expected(run, qrels))


def test_a_list_column_read_from_csv_as_text_is_named(tmp_path):
    """A list run saved as CSV comes back with lists as text ("['a', 'b']"): one error says
    so and how to parse it (issue 30); before, the texts were taken as document ids and
    nothing matched the golden set."""
    run = pd.DataFrame({"query_id": ["q1", "q2"], "doc_id": [["d1", "d2"], ["d3"]]})
    path = tmp_path / "run.csv"
    run.to_csv(path, index=False)
    for source in (str(path), pd.read_csv(path)):
        with pytest.raises(ef.EvalframeInputError) as e:
            ef.read_run(source)
        msg = str(e.value)
        assert "holds lists written as text" in msg and "ast.literal_eval" in msg
        assert "missing column 'score'" not in msg and "1 problem" in msg
    json_lists = pd.DataFrame({"query_id": ["q1"], "doc_id": ['["d1", "d2"]'], "score": [1.0]})
    with pytest.raises(ef.EvalframeInputError, match="json.loads"):
        ef.read_run(json_lists)
    # ids that merely contain brackets are ids
    ids = pd.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["[A]", "d(2)"], "score": [2.0, 1.0]})
    assert ef.read_run(ids)["doc_id"].tolist() == ["[A]", "d(2)"]
    # a real list column is exploded as before
    assert len(ef.read_run(run)) == 3


def test_whole_repeated_rows_of_a_list_run_with_duplicates_first(tmp_path, capsys):
    """A list run with a row repeated whole is accepted with duplicates='first' (and
    --duplicates first), as a long run's repeated rows are (issue 30); two different lists
    for one question stay an error, and without it the error names the option."""
    import json

    from evalframe.cli import main
    run = pd.DataFrame({"query_id": ["q1", "q1", "q2"], "doc_id": [["d1", "d2"], ["d1", "d2"], ["d3"]]})
    with pytest.raises(ef.EvalframeInputError, match="duplicates='first'"):
        ef.read_run(run)
    got = ef.read_run(run, duplicates="first")
    want = ef.read_run(run.iloc[[0, 2]].reset_index(drop=True))
    pd.testing.assert_frame_equal(got, want)
    differ = pd.DataFrame({"query_id": ["q1", "q1"], "doc_id": [["d1", "d2"], ["d2", "d1"]]})
    with pytest.raises(ef.EvalframeInputError, match="more than one row with a list"):
        ef.read_run(differ, duplicates="first")
    path = tmp_path / "run.jsonl"
    path.write_text("".join(json.dumps({"query_id": q, "doc_id": d}) + "\n" for q, d in zip(run.query_id, run.doc_id)))
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d2 1\nq2 0 d3 1\n")
    from evalframe.cli import main
    assert main(["evaluate", str(qrels), str(path), "-m", "RR"]) == 2
    assert main(["evaluate", str(qrels), str(path), "-m", "RR", "--duplicates", "first", "--format", "csv"]) == 0
    assert "0.75" in capsys.readouterr().out  # RR (0.5 + 1) / 2
