"""evalframe.engine.conventions and evalframe.engine.choice: the conventions every engine
applies, validated once (a distance score declared with ascending=True among them), and
the one place an engine is chosen for a run."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import evalframe as ef
from evalframe import datasets
from evalframe.engine import Conventions
from evalframe.engine.choice import choose

MEASURES = ["P@5", "R@10", "nDCG@10", "AP", "RR", "bpref"]

pytestmark = pytest.mark.filterwarnings("ignore::evalframe.EvalframeWarning")  # the conventions, not the warnings, are checked here


def _random_case(seed: int, n_q: int = 25, n_d: int = 30):
    rng = np.random.default_rng(seed)
    rows = []
    for s in ("a", "b"):
        for q in range(n_q):
            docs = rng.choice(n_d, size=rng.integers(1, 20), replace=False)
            score = rng.integers(0, 6, size=len(docs)).astype(float)  # many ties
            rows.append(pd.DataFrame({"system": s, "query_id": f"q{q}", "doc_id": [f"d{d}" for d in docs],
                                      "score": score}))
    run = pd.concat(rows, ignore_index=True)
    qrels = pd.DataFrame({"query_id": [f"q{q}" for q in range(n_q) for _ in range(4)],
                          "doc_id": [f"d{d}" for _ in range(n_q) for d in rng.choice(n_d, 4, replace=False)],
                          "relevance": rng.integers(0, 3, size=4 * n_q)})
    return run, qrels


def _by_hand(run: pd.DataFrame, qrels: pd.DataFrame, k: int) -> pd.Series:
    """P@k by a loop written here: lowest score first, ties by doc_id descending (trec_eval's order)."""
    rel = {(q, d) for q, d, r in qrels.itertuples(index=False) if r >= 1}
    out = {}
    for (s, q), g in run.groupby(["system", "query_id"]):
        by_doc = sorted(g.itertuples(index=False), key=lambda r: r.doc_id.encode(), reverse=True)
        ranked = sorted(by_doc, key=lambda r: r.score)  # stable: equal distances keep doc_id descending
        out[(s, q)] = sum((q, r.doc_id) in rel for r in ranked[:k]) / k
    return pd.Series(out)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_ascending_ranks_the_lowest_score_first(seed):
    run, qrels = _random_case(seed)
    got = ef.evaluate(run, qrels, ["P@5"], ascending=True, missing="drop")
    want = _by_hand(run, qrels, 5)
    got = got.set_index(["system", "query_id"])["value"]
    pd.testing.assert_series_equal(got.sort_index(), want.reindex(got.index).sort_index(), check_names=False)


def test_a_distance_declared_scores_as_its_negation_does():
    run, qrels = _random_case(3)
    want = ef.evaluate(run, qrels, MEASURES)
    got = ef.evaluate(run.assign(score=-run["score"]), qrels, MEASURES, ascending=True)
    pd.testing.assert_frame_equal(got, want, check_exact=True)
    # one convention among others: ties, depth and duplicates="max" (the lowest distance kept)
    dup = pd.concat([run, run.iloc[:40].assign(score=run["score"].iloc[:40] - 3)], ignore_index=True)
    want = ef.evaluate(dup, qrels, MEASURES, ties="doc_id_asc", depth=7, duplicates="max")
    got = ef.evaluate(dup.assign(score=-dup["score"]), qrels, MEASURES, ties="doc_id_asc", depth=7,
                      duplicates="max", ascending=True)
    pd.testing.assert_frame_equal(got, want, check_exact=True)


def test_a_rank_only_run_is_ordered_by_rank_either_way():
    run, qrels = _random_case(4)
    run = run.drop_duplicates(["system", "query_id", "doc_id"])
    run["rank"] = run.groupby(["system", "query_id"]).cumcount() + 1
    ranked = run.drop(columns="score")
    want = ef.evaluate(ranked, qrels, MEASURES)
    pd.testing.assert_frame_equal(ef.evaluate(ranked, qrels, MEASURES, ascending=True), want, check_exact=True)
    pd.testing.assert_frame_equal(ef.evaluate({"a": ranked[ranked.system == "a"].drop(columns="system"),
                                               "b": ranked[ranked.system == "b"].drop(columns="system")},
                                              qrels, MEASURES, ascending=True), want, check_exact=True)


def test_the_callers_table_is_not_modified():
    run, qrels = _random_case(5)
    before = run.copy()
    ef.evaluate(run, qrels, ["P@5"], ascending=True)
    pd.testing.assert_frame_equal(run, before)


def test_report_and_streaming_take_ascending(tmp_path):
    cran = datasets.load_cranfield()
    runs = cran.runs.assign(score=-cran.runs["score"])
    want = ef.report(cran.runs, cran.qrels, measures=["nDCG@10", "R@5"], n_resamples=200, baseline="bm25")
    got = ef.report(runs, cran.qrels, measures=["nDCG@10", "R@5"], n_resamples=200, baseline="bm25",
                    ascending=True)
    pd.testing.assert_frame_equal(got.per_question, want.per_question, check_exact=True)
    assert got.metadata["conventions"]["ascending"] is True
    # the rankings behind the top changes show the distances as given, lowest first
    r = got.rankings
    if len(r):
        first = r.groupby(["system", "query_id"], sort=False)["score"].apply(lambda s: s.is_monotonic_increasing)
        assert first.all()
        assert (r["score"] <= 0).all()  # the negated Cranfield scores, not their negation again
    # a streamed Parquet dataset (several files: the streaming engine)
    for i, part in enumerate(np.array_split(np.arange(len(runs)), 3)):
        runs.iloc[part].to_parquet(tmp_path / f"p{i}.parquet", index=False)
    streamed = ef.evaluate(str(tmp_path), cran.qrels, ["nDCG@10"], ascending=True, memory_budget=1)
    memory = ef.evaluate(cran.runs, cran.qrels, ["nDCG@10"])
    key = ["system", "query_id", "measure"]
    pd.testing.assert_frame_equal(streamed.sort_values(key).reset_index(drop=True),
                                  memory.sort_values(key).reset_index(drop=True), check_exact=True)


@pytest.mark.parametrize("bad, message", [
    ({"rel": 1.5}, "evaluate: rel must be an int, got 1.5"),
    ({"ties": "random"}, "ties must be 'doc_id_desc', 'doc_id_asc' or 'rank', got 'random'"),
    ({"missing": "skip"}, "missing must be 'zero' or 'drop', got 'skip'"),
    ({"depth": 0}, "depth must be an int >= 1 or None, got 0"),
    ({"duplicates": "min"}, "evaluate: duplicates must be 'error', 'max' or 'first', got 'min'"),
    ({"conflicts": "mean"}, "evaluate: conflicts must be one of"),
    ({"columns": {"a": "nope"}}, "evaluate: columns must map column names"),
    ({"ascending": "yes"}, "evaluate: ascending must be True or False, got 'yes'"),
    ({"min_overlap": 2}, "evaluate: min_overlap must be a number in [0, 1]"),
])
def test_conventions_are_checked_when_built(bad, message):
    with pytest.raises(ValueError) as e:
        Conventions(**bad)
    assert message in str(e.value)
    run, qrels = _random_case(0, n_q=3)
    with pytest.raises(ValueError) as e:  # evaluate builds them first: the same message
        ef.evaluate(run, qrels, ["P@5"], **bad)
    assert message in str(e.value)


def test_conventions_travel_whole():
    import pickle
    c = Conventions(rel=2, ties="doc_id_asc", ascending=True, columns={"qid": "query_id"})
    assert pickle.loads(pickle.dumps(c)) == c
    assert c.judging == {"rel": 2, "ties": "doc_id_asc", "missing": "zero", "depth": None}
    assert c.but(columns=None).columns is None and c.columns == {"qid": "query_id"}
    with pytest.raises(Exception):
        c.rel = 3  # frozen


def test_choose_names_one_engine_per_run(tmp_path):
    run, _ = _random_case(0, n_q=3)
    assert choose(run).name == "memory"
    run.to_parquet(tmp_path / "one.parquet")
    assert choose(str(tmp_path / "one.parquet")).name == "memory"  # a file that fits: read whole
    small = choose(str(tmp_path / "one.parquet"), memory_budget=1)
    assert (small.name, small.rows, small.dataset) == ("streaming", len(run), True)
    assert choose(str(tmp_path)).name == "streaming"  # a directory: the streaming engine plans it
    assert choose(run, engine="dask").name == "dask"
    for bad in ({"a": run}, [run], str(tmp_path / "run.trec")):  # a dict, a list, a text file: read them first
        with pytest.raises(ValueError, match="engine='dask' takes a dask.dataframe, a pandas DataFrame or a "
                                             "Parquet dataset"):
            choose(bad, engine="dask")
    with pytest.raises(ValueError, match="engine must be 'auto', 'memory', 'dask' or 'spark', got 'gpu'"):
        choose(run, engine="gpu")
    with pytest.raises(ValueError, match="engine='spark' evaluates a pyspark.sql.DataFrame run"):
        choose(run, engine="spark")
    dd = pytest.importorskip("dask.dataframe")
    with pytest.raises(ValueError, match="engine must be 'auto' or 'dask' for a dask.dataframe run"):
        choose(dd.from_pandas(run, npartitions=1), engine="memory")


def test_evaluate_probes_a_dataset_once(tmp_path, monkeypatch):
    """The engine is chosen once: a Parquet file is opened to count its rows once."""
    import evalframe.engine.choice as choice
    import evalframe.evaluation as evaluate_module
    import evalframe.engine.streaming as streaming
    run, qrels = _random_case(1, n_q=5)
    run.to_parquet(tmp_path / "run.parquet")
    opened = []
    real = choice.open_run_dataset

    def counting(*a, **k):
        opened.append(a[0])
        return real(*a, **k)
    for module in (choice, evaluate_module, streaming):
        monkeypatch.setattr(module, "open_run_dataset", counting)
    ef.evaluate(str(tmp_path / "run.parquet"), qrels, ["P@5"], unjudged="bounds")
    assert len(opened) == 1


def test_commands_take_ascending(tmp_path):
    """--ascending on evaluate, report and gate: the numbers of the scores as similarities;
    --duplicates max keeps the lowest distance."""
    from evalframe.cli import main
    cran = datasets.load_cranfield()
    qrels = tmp_path / "qrels.txt"
    cran.qrels.assign(it=0)[["query_id", "it", "doc_id", "relevance"]].to_csv(qrels, sep=" ", header=False,
                                                                                index=False)
    runs = cran.runs[cran.runs.system.isin(["bm25", "tfidf"])]
    dist = runs.assign(score=-runs["score"])
    dup = pd.concat([dist, dist.iloc[:50].assign(score=dist["score"].iloc[:50] + 100)], ignore_index=True)
    dup.to_parquet(tmp_path / "dist.parquet", index=False)
    runs.to_parquet(tmp_path / "sim.parquet", index=False)
    for name, extra in (("sim", []), ("dist", ["--ascending", "--duplicates", "max"])):
        assert main(["evaluate", str(qrels), str(tmp_path / f"{name}.parquet"), "-m", "nDCG@10", "-m", "P@5",
                     "--per-question", "--out", str(tmp_path / f"{name}.csv"), *extra]) == 0
    a, b = pd.read_csv(tmp_path / "sim.csv"), pd.read_csv(tmp_path / "dist.csv")
    pd.testing.assert_frame_equal(a, b)


def test_index_recall_of_distances():
    sci = datasets.load_scifact()
    hnsw = sci.runs[sci.runs["system"] == "dense_hnsw"]
    exact = sci.runs[sci.runs["system"] == "dense_exact"]
    want = ef.index_recall(hnsw, exact, k=10)
    got = ef.index_recall(hnsw.assign(score=-hnsw["score"]), exact.assign(score=-exact["score"]), k=10,
                          ascending=True)
    pd.testing.assert_frame_equal(got, want, check_exact=True)
    assert not ef.index_recall(hnsw.assign(score=-hnsw["score"]), exact.assign(score=-exact["score"]),
                               k=10).equals(want)  # undeclared, the distances rank backwards


@pytest.mark.parametrize("given", ["table", "path"])
def test_report_rankings_of_distances_keep_the_lowest_copy(given, tmp_path):
    """The rankings behind the top changes, of distances with a document repeated: ranked
    lowest first, the repeated document shown once with its lowest distance (duplicates='max'
    keeps the best row), for a run in memory and one given by path."""
    cran = datasets.load_cranfield()
    runs = cran.runs[cran.runs.system.isin(["bm25", "tfidf"])]
    dist = runs.assign(score=-runs["score"])
    worse = dist.groupby(["system", "query_id"]).head(1).assign(score=lambda d: d["score"] + 1000)
    dup = pd.concat([dist, worse], ignore_index=True)
    run = dup
    if given == "path":
        dup.to_parquet(tmp_path / "run.parquet", index=False)
        run = str(tmp_path / "run.parquet")
    rep = ef.report(run, cran.qrels, measures=["nDCG@10"], n_resamples=200, baseline="bm25", ascending=True,
                    duplicates="max")
    plain = ef.report(runs, cran.qrels, measures=["nDCG@10"], n_resamples=200, baseline="bm25")
    pd.testing.assert_frame_equal(rep.per_question, plain.per_question, check_exact=True)
    r = rep.rankings
    assert len(r)
    assert r.groupby(["system", "query_id"], sort=False)["score"].apply(lambda s: s.is_monotonic_increasing).all()
    assert (r["score"] < 500).all()  # never the repeated copy's distance
    assert not r.duplicated(["system", "query_id", "doc_id"]).any()


def test_a_part_result_crosses_as_arrow():
    """PartResult.to_arrow / from_arrow (what a Spark task sends its driver): every field back,
    equal, for parts with systems, records, conflicts, token counts and none of those."""
    from evalframe.engine import Conventions
    from evalframe.engine.partition import PartResult, Plan, evaluate_part
    cran = datasets.load_cranfield()
    runs = cran.runs.assign(tokens=np.arange(len(cran.runs)) % 7 + 1)
    qids = sorted(cran.qrels.query_id.unique())[:20]
    part = runs[runs.query_id.isin(qids[:15])]  # some golden questions unanswered in this part
    qrels = cran.qrels[cran.qrels.query_id.isin(qids)]
    qrels = pd.concat([qrels, qrels.iloc[:3].assign(relevance=qrels.relevance.iloc[:3] + 1)], ignore_index=True)
    systems = list(pd.unique(runs.system)) + ["absent"]
    for conv, unjudged in ((Conventions(conflicts="max"), None),
                           (Conventions(conflicts="max", missing="drop", no_relevant="drop"), None),
                           (Conventions(conflicts="max"), "bounds")):
        measures = ["P@5", "R@10"] if unjudged else ["P@5", "nDCG@10"]
        plan = Plan(ef.parse_measures(measures), conv, systems, unjudged=unjudged)
        res = evaluate_part(part.reset_index(drop=True), qrels, plan, qrels_rows=np.arange(len(qrels)))
        assert (res.high is not None) == (unjudged == "bounds")
        res.extra["bucket"] = 3
        assert res.records and res.conflicts is not None and res.tokens and res.silent == ["absent"]
        back = PartResult.from_arrow(res.to_arrow())
        pd.testing.assert_frame_equal(back.groups, res.groups, check_dtype=False)
        np.testing.assert_array_equal(back.values, res.values)
        if res.high is not None:
            np.testing.assert_array_equal(back.high, res.high)
            assert (res.high >= res.values).all() and (res.high > res.values).any()
            pd.testing.assert_frame_equal(back.table, res.table, check_dtype=False)
        assert back.records == res.records
        assert [(r.numeric, r.bytewise) for r in back.records] == [(r.numeric, r.bytewise) for r in res.records]
        assert (back.names, back.silent, back.conflicts, back.integer_questions, back.chunkings, back.unit,
                back.extra) == (res.names, res.silent, res.conflicts, res.integer_questions, res.chunkings,
                                res.unit, res.extra)
        assert back.conflicts.first_rows == res.conflicts.first_rows
        assert set(back.tokens) == set(res.tokens)
        for s in res.tokens:
            np.testing.assert_array_equal(back.tokens[s].to_numpy(), res.tokens[s].to_numpy())
            np.testing.assert_array_equal(back.tokens[s].index.to_numpy(), res.tokens[s].index.to_numpy())
    empty = PartResult(pd.DataFrame({"query_id": pd.Series(dtype=object)}), np.empty((0, 0)), [], [], [None])
    assert PartResult.from_arrow(empty.to_arrow()).values.shape == (0, 0)


# ---------------------------------------------------------------- found in review (issue 28/30)
def _ranked_with_unanswered(rank_only: bool):
    """Ten questions answered (ranked by a rank column the distances contradict), ten golden
    questions the run does not answer (evaluated on an empty part of the run)."""
    run = pd.DataFrame({"query_id": np.repeat([f"q{i:02d}" for i in range(10)], 5),
                        "doc_id": [f"d{i}" for i in range(5)] * 10,
                        "score": [0.5, 0.4, 0.3, 0.2, 0.1] * 10, "rank": [1, 2, 3, 4, 5] * 10})
    qrels = pd.DataFrame({"query_id": [f"q{i:02d}" for i in range(20)], "doc_id": "d1", "relevance": 1})
    return (run.drop(columns="score") if rank_only else run), qrels


@pytest.mark.parametrize("rank_only", [True, False])
def test_ties_rank_streamed_with_golden_questions_the_run_lacks(rank_only, tmp_path):
    """ties='rank' streamed (grouped): the golden questions no part holds are evaluated on an
    empty run part that keeps the run's rank column (a rank-only run was refused)."""
    from tests.engine_checks import streamed
    run, qrels = _ranked_with_unanswered(rank_only)
    want = ef.evaluate(run, qrels, ["RR", "P@5"], ties="rank", ascending=True)
    got = streamed(run, qrels, ["RR", "P@5"], tmp_path, files=2, parts=4, ties="rank", ascending=True)[0]
    pd.testing.assert_frame_equal(got, want, check_exact=True)


@pytest.mark.slow  # a Spark session (`make test-fast` leaves it out)
@pytest.mark.xdist_group("spark")
@pytest.mark.parametrize("rank_only", [True, False])
def test_ties_rank_on_spark_with_buckets_of_unanswered_questions(rank_only, spark):
    """ties='rank' on Spark: the golden questions of buckets without a run row are evaluated
    on an empty run that keeps the rank column (refused before, rank column or not)."""
    run, qrels = _ranked_with_unanswered(rank_only)
    want = ef.evaluate(run, qrels, ["RR", "P@5"], ties="rank", ascending=True)
    got = ef.evaluate(spark.createDataFrame(run), qrels, ["RR", "P@5"], ties="rank", ascending=True).toPandas()
    key = ["query_id", "measure"]
    pd.testing.assert_frame_equal(got.sort_values(key).reset_index(drop=True),
                                  want.sort_values(key).reset_index(drop=True), check_exact=True)


def test_tokens_keep_the_lowest_distance_of_a_repeated_document():
    """tokens= with ascending=True and duplicates='max': the repeated document keeps its lowest
    distance, as without tokens= (the run was read for its token counts keeping the highest)."""
    run = pd.DataFrame({"query_id": ["q1"] * 4, "doc_id": ["a", "b", "c", "a"], "score": [0.1, 0.2, 0.3, 9.0]})
    qrels = pd.DataFrame({"query_id": ["q1"], "doc_id": ["a"], "relevance": [1]})
    tokens = pd.DataFrame({"doc_id": ["a", "b", "c"], "tokens": [10, 10, 10]})
    got = ef.evaluate(run, qrels, ["RR", "R(tokens=10)"], ascending=True, duplicates="max", tokens=tokens)
    assert got["value"].tolist() == [1.0, 1.0]


def test_no_relevant_drop_refused_with_a_span_golden_set_on_dask():
    """no_relevant='drop' with a span golden set is refused on Dask as in memory (a run without
    offsets was accepted there, its documents judged whole)."""
    dd = pytest.importorskip("dask.dataframe")
    from tests.test_spans import help_centre
    spans, _, _, run = help_centre(6)
    with pytest.raises(ValueError, match="no_relevant='drop' is not available with chunks= or a span golden set"):
        ef.evaluate(run, spans, ["R@5"], no_relevant="drop")
    with pytest.raises(ValueError, match="no_relevant='drop' is not available with chunks= or a span golden set"):
        ef.evaluate(dd.from_pandas(run, npartitions=2), spans, ["R@5"], no_relevant="drop")


def test_gate_against_a_report_of_distances_keeps_the_lowest_copy(tmp_path):
    """evalframe gate --baseline-report of a report computed with ascending=True: the candidate,
    read before the report's conventions apply to it, keeps each repeated document's lowest
    distance under --duplicates max also when --ascending is left out (the report's conventions
    apply), as with --ascending."""
    import contextlib
    import io
    from evalframe.cli import main
    cran = datasets.load_cranfield()
    qrels = tmp_path / "qrels.txt"
    cran.qrels.assign(it=0)[["query_id", "it", "doc_id", "relevance"]].to_csv(qrels, sep=" ", header=False,
                                                                                index=False)
    dist = cran.runs.assign(score=-cran.runs["score"])
    base = dist[dist.system == "bm25"].drop(columns="system")
    cand = dist[dist.system == "tfidf"].drop(columns="system")
    worse = cand.sort_values("score").groupby("query_id").head(1).assign(score=lambda d: d["score"] + 1000)
    pd.concat([cand, worse], ignore_index=True).to_parquet(tmp_path / "cand.parquet", index=False)
    ef.report({"bm25": base}, cran.qrels, measures=["nDCG@10"], n_resamples=200, ascending=True,
              duplicates="max").to_parquet(tmp_path / "rep")
    outs = []
    for extra in ([], ["--ascending"]):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            main(["gate", str(qrels), str(tmp_path / "cand.parquet"), "--baseline-report", str(tmp_path / "rep"),
                  "-m", "nDCG@10", "--duplicates", "max", *extra])
        outs.append(out.getvalue())
    want = ef.evaluate(cand, cran.qrels, ["nDCG@10"], ascending=True)["value"].mean()
    assert f"-> {want:.4f}" in outs[1]
    assert outs[0] == outs[1]


def test_report_fingerprints_the_distances_evaluated():
    """A report of a table with rollup= (its run fingerprinted from the table read again),
    ascending=True and duplicates='max': two runs whose repeated document differs only in its
    lowest distance (other numbers) get other fingerprints (it was read keeping the highest)."""
    qrels = pd.DataFrame({"query_id": ["q1", "q2"], "doc_id": ["a#1", "b#1"], "relevance": [1, 1]})
    base = pd.DataFrame({"query_id": ["q1"] * 3 + ["q2"] * 3, "doc_id": ["a#1", "b#1", "a#1", "b#1", "a#1", "c#1"],
                         "score": [0.5, 0.3, 9.0, 0.2, 0.4, 0.6]})
    other = base.assign(score=[0.1, 0.3, 9.0, 0.2, 0.4, 0.6])  # a#1's lowest copy now ranks first
    reps = [ef.report(r, qrels, measures=["RR"], rollup={"a#1": "a", "b#1": "b", "c#1": "c"}, ascending=True,
                      duplicates="max", n_resamples=50) for r in (base, other)]
    assert reps[0].summary["mean"].tolist() != reps[1].summary["mean"].tolist()
    assert reps[0].metadata["fingerprints"]["runs"] != reps[1].metadata["fingerprints"]["runs"]
    assert "run system" in ef.diff(*reps).fingerprints["what"].tolist()


def test_report_takes_numpy_conventions(tmp_path):
    """report(ascending=np.True_, depth=np.int64(10), rel=np.int64(1)) (values Conventions
    takes) is computed and saved, its conventions plain JSON values (a TypeError before)."""
    cran = datasets.load_cranfield()
    runs = cran.runs[cran.runs.system.isin(["bm25", "tfidf"])]
    dist = runs.assign(score=-runs["score"])
    rep = ef.report(dist, cran.qrels, measures=["nDCG@10"], n_resamples=50, ascending=np.bool_(True),
                    depth=np.int64(10), rel=np.int64(1))
    want = ef.report(runs, cran.qrels, measures=["nDCG@10"], n_resamples=50, depth=10)
    pd.testing.assert_frame_equal(rep.per_question, want.per_question, check_exact=True)
    rep.to_parquet(tmp_path / "rep")
    conv = ef.read_report(tmp_path / "rep").metadata["conventions"]
    assert (conv["ascending"], conv["depth"], conv["rel"]) == (True, 10, 1)


@pytest.mark.parametrize("call", ["read_run", "index_recall"])
def test_ascending_must_be_a_bool_everywhere(call):
    """ascending='no' is refused by read_run and index_recall as by evaluate and report (it
    was taken as true: the scores negated)."""
    run = pd.DataFrame({"query_id": ["q1"] * 3, "doc_id": ["a", "b", "c"], "score": [0.3, 0.2, 0.1]})
    with pytest.raises(ValueError, match="ascending must be True or False, got 'no'"):
        if call == "read_run":
            ef.read_run(run, ascending="no")
        else:
            ef.index_recall(run, run, k=1, ascending="no")
    assert ef.read_run(run, ascending=np.bool_(True))["score"].tolist() == [-0.3, -0.2, -0.1]


@pytest.mark.parametrize("answered", [["q00", "q01"], ["q02", "q03"], ["q04", "q05"], ["q06", "q07"]])
def test_streamed_buckets_of_unanswered_questions_first(answered, tmp_path):
    """A shuffled run streamed through hash buckets whose first bucket holds only golden
    questions the run does not answer: evaluated on an empty run part (it was refused, 'missing
    column doc_id', when no part with rows came before it)."""
    from tests.engine_checks import streamed
    run = pd.DataFrame({"query_id": answered * 6, "doc_id": np.repeat([7, 3, 5, 1, 2, 9], 2),
                        "score": np.repeat([0.6, 0.1, 0.1, 0.3, 0.2, 0.9], 2),  # questions interleaved
                        "rank": np.repeat([6, 1, 2, 4, 3, 5], 2)})
    qrels = pd.DataFrame({"query_id": [f"q{i:02d}" for i in range(24)], "doc_id": "3", "relevance": 1})
    for ties in ("doc_id_desc", "rank"):
        want = ef.evaluate(run, qrels, ["RR", "P@5"], ascending=True, ties=ties)
        got = streamed(run, qrels, ["RR", "P@5"], tmp_path / ties, files=2, parts=3, ascending=True, ties=ties)[0]
        key = ["query_id", "measure"]
        pd.testing.assert_frame_equal(got.sort_values(key).reset_index(drop=True),
                                      want.sort_values(key).reset_index(drop=True), check_exact=True)


def test_gate_a_distance_candidate_against_a_similarity_report(tmp_path):
    """ascending= describes the candidate's scores: a candidate of distances gates against a
    report computed on similarities (no conventions clash), with the numbers of the same
    candidate given as similarities."""
    cran = datasets.load_cranfield()
    base = cran.runs[cran.runs.system == "bm25"].drop(columns="system")
    cand = cran.runs[cran.runs.system == "tfidf"].drop(columns="system")
    ef.report({"bm25": base}, cran.qrels, measures=["nDCG@10"], n_resamples=200).to_parquet(tmp_path / "rep")
    rep = ef.read_report(str(tmp_path / "rep"))
    want = ef.gate(cran.qrels, rep, cand, ["nDCG@10"], margin=0.01)
    got = ef.gate(cran.qrels, rep, cand.assign(score=-cand["score"]), ["nDCG@10"], margin=0.01, ascending=True)
    pd.testing.assert_frame_equal(got.table, want.table)
    assert got.decision == want.decision
