"""evaluate(..., unjudged=...): the bounds for the unjudged documents (issue 29).

Oracles: a golden set built in the test where every unjudged document a system retrieves
within the measure's cutoff is labelled relevant (``value_high`` equals the value on it),
and, on small cases, every labelling of the unjudged documents enumerated (the upper
bound is the largest value any labelling gives)."""
import itertools
import warnings

import numpy as np
import pandas as pd
import pytest

import evalframe as ef
from evalframe.errors import EvalframeInputError, UnjudgedDocumentsWarning

SUPPORTED = ["P@1", "P@5", "R@3", "R@10", "R", "Success@2", "Success@10", "RR", "RR@3", "P(rel=2)@5", "R(rel=2)@4"]


def _random_case(seed: int, n_q: int = 12, n_docs: int = 30, systems=("a", "b", "c")):
    """A run of several systems (distinct scores: ranks known in the test) and a sparse
    graded golden set with negative labels, questions without a relevant document, a
    question no system answers and questions only in the run."""
    rng = np.random.default_rng(seed)
    rows = []
    for s in systems:
        for q in range(n_q + 2):  # two questions only in the run
            if q == 3:
                continue  # in the golden set, answered by no system
            n = int(rng.integers(0, 15))
            docs = rng.choice(n_docs, size=n, replace=False)
            scores = rng.permutation(n * 7)[:n] / 7 + rng.random(n) * 1e-3
            rows += [(s, f"q{q}", f"d{d}", float(x)) for d, x in zip(docs, scores)]
    run = pd.DataFrame(rows, columns=["system", "query_id", "doc_id", "score"])
    qrows = []
    for q in range(n_q):
        docs = rng.choice(n_docs, size=int(rng.integers(1, 8)), replace=False)
        labels = rng.choice([-1, 0, 0, 1, 2, 3], size=len(docs)) if q != 5 else np.zeros(len(docs), dtype=int)
        qrows += [(f"q{q}", f"d{d}", int(x)) for d, x in zip(docs, labels)]
    qrels = pd.DataFrame(qrows, columns=["query_id", "doc_id", "relevance"])
    return run, qrels


def _augmented(run_s: pd.DataFrame, qrels: pd.DataFrame, k: int | None, label: int) -> pd.DataFrame:
    """The golden set with every document of the system's top k (all without k) that the
    golden set does not judge (absent or negative) labelled ``label``: the oracle."""
    ranked = run_s.sort_values(["query_id", "score", "doc_id"], ascending=[True, False, False])
    ranked = ranked[ranked["query_id"].isin(qrels["query_id"])]
    if k is not None:
        ranked = ranked.groupby("query_id").head(k)
    judged = qrels[qrels["relevance"] >= 0]
    key = set(zip(judged["query_id"], judged["doc_id"]))
    add = ranked[[(q, d) not in key for q, d in zip(ranked["query_id"], ranked["doc_id"])]]
    out = qrels[~qrels.set_index(["query_id", "doc_id"]).index.isin(
        add.set_index(["query_id", "doc_id"]).index)]
    return pd.concat([out, add[["query_id", "doc_id"]].assign(relevance=label)], ignore_index=True)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_value_high_is_the_value_on_a_golden_set_with_the_unjudged_relevant(seed):
    run, qrels = _random_case(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = ef.evaluate(run, qrels, SUPPORTED, unjudged="bounds")
        today = ef.evaluate(run, qrels, SUPPORTED)
        high = ef.evaluate(run, qrels, SUPPORTED, unjudged="relevant")
        for name in SUPPORTED:
            m = ef.measures.parse_measure(name)
            label = max(m.param("rel"), 1)
            for s, run_s in run.groupby("system"):
                want = ef.evaluate(run_s.drop(columns="system"), _augmented(run_s, qrels, m.k, label), [name])
                mine = got[(got["system"] == s) & (got["measure"] == name)]
                assert list(mine["query_id"]) == list(want["query_id"])
                np.testing.assert_allclose(mine["value_high"].to_numpy(), want["value"].to_numpy(), rtol=0, atol=1e-12,
                                           err_msg=f"{s} {name}")
    pd.testing.assert_frame_equal(got[["system", "query_id", "measure", "value"]], today)
    np.testing.assert_array_equal(got["value_low"].to_numpy(), today["value"].to_numpy())
    np.testing.assert_array_equal(high["value"].to_numpy(), got["value_high"].to_numpy())
    assert list(high.columns) == list(today.columns)
    assert (got["value_high"] >= got["value_low"]).all()
    assert (got["value_high"] > got["value_low"]).any()  # the case has unjudged documents in reach


def test_nonrelevant_is_todays_table():
    run, qrels = _random_case(3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pd.testing.assert_frame_equal(ef.evaluate(run, qrels, ["nDCG@10", "AP", "P@5"], unjudged="nonrelevant"),
                                      ef.evaluate(run, qrels, ["nDCG@10", "AP", "P@5"]))


def _labellings_max(run_s, qrels, name):
    """The largest value of ``name`` (one question) over every labelling (0 or 1) of the
    unjudged documents the system retrieves and of two unjudged documents it does not."""
    unj = [d for d in run_s["doc_id"] if d not in set(qrels["doc_id"])] + ["x1", "x2"]
    best = -1.0
    for bits in itertools.product([0, 1], repeat=len(unj)):
        extra = pd.DataFrame({"query_id": "q", "doc_id": unj, "relevance": list(bits)})
        v = ef.evaluate(run_s, pd.concat([qrels, extra], ignore_index=True), [name])["value"].iloc[0]
        best = max(best, v)
    return best


@pytest.mark.parametrize("name", ["P@3", "R@3", "R", "Success@2", "RR", "RR@2"])
def test_the_upper_bound_is_the_largest_value_of_any_labelling(name):
    run_s = pd.DataFrame({"query_id": "q", "doc_id": ["j1", "u1", "j2", "u2", "u3", "u4"],
                          "score": [6.0, 5, 4, 3, 2, 1]})
    qrels = pd.DataFrame({"query_id": "q", "doc_id": ["j1", "j2", "j3"], "relevance": [1, 0, 1]})
    high = ef.evaluate(run_s, qrels, [name], unjudged="relevant")["value"].iloc[0]
    assert high == pytest.approx(_labellings_max(run_s, qrels, name), abs=1e-12)


def test_ndcg_and_ap_are_refused_with_the_reason():
    # why: one more relevant document at rank 6 lowers both (their labelling-all is no upper bound)
    run_s = pd.DataFrame({"query_id": "q", "doc_id": ["j1", "n1", "n2", "n3", "n4", "u1"],
                          "score": [6.0, 5, 4, 3, 2, 1]})
    qrels = pd.DataFrame({"query_id": "q", "doc_id": ["j1", "n1", "n2", "n3", "n4"], "relevance": [1, 0, 0, 0, 0]})
    for name in ["nDCG@6", "AP"]:
        today = ef.evaluate(run_s, qrels, [name])["value"].iloc[0]
        all_rel = ef.evaluate(run_s, _augmented(run_s.assign(system="s"), qrels, None, 1), [name])["value"].iloc[0]
        assert all_rel < today
        with pytest.raises(EvalframeInputError, match="no true upper bound"):
            ef.evaluate(run_s, qrels, ["P@5", name], unjudged="bounds")
    for name in ["P(tokens=100)", "P(judged_only=True)@5", "bpref", "Judged@5"]:
        with pytest.raises(EvalframeInputError, match="no true upper bound"):
            ef.evaluate(run_s.assign(tokens=10), qrels, [name], unjudged="relevant")
    with pytest.raises(ValueError, match="unjudged must be None, 'nonrelevant', 'relevant' or 'bounds'"):
        ef.evaluate(run_s, qrels, ["P@5"], unjudged="upper")


def test_aggregate_and_summarize_carry_the_bounds():
    run, qrels = _random_case(4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = ef.evaluate(run, qrels, ["P@5", "R@10", "RR"], unjudged="bounds")
    agg = ef.aggregate(t)
    want = t.groupby(["system", "measure"], sort=False)[["value_low", "value_high"]].mean().reset_index()
    merged = agg.merge(want, on=["system", "measure"], suffixes=("", "_want"))
    assert len(merged) == len(agg) == 9
    np.testing.assert_allclose(merged["value_low"], merged["value_low_want"], atol=1e-12)
    np.testing.assert_allclose(merged["value_high"], merged["value_high_want"], atol=1e-12)
    np.testing.assert_allclose(agg["value_low"], agg["mean"], atol=1e-12)
    s = ef.stats.summarize(t, method="t")
    merged = s.merge(want, on=["system", "measure"])
    np.testing.assert_allclose(merged["mean_low"], merged["value_low"], atol=1e-12)
    np.testing.assert_allclose(merged["mean_high"], merged["value_high"], atol=1e-12)
    assert "mean_low" not in ef.stats.summarize(t.drop(columns=["value_low", "value_high"]), method="t")


def test_chunk_offsets_are_refused():
    run, qrels = _random_case(5)
    chunks = pd.DataFrame({"chunk_id": ["d1#0"], "doc_id": ["d1"], "start": [0], "end": [10]})
    with pytest.raises(ValueError, match="not available with chunks="):
        ef.evaluate(run.assign(doc_id="d1#0").drop_duplicates(["system", "query_id"]), qrels, ["P@5"],
                    chunks=chunks, unjudged="bounds")



@pytest.mark.parametrize("engine", ["memory", "streaming"])
def test_a_span_golden_set_is_refused_on_every_engine(engine, tmp_path):
    """A span golden set with a run of whole documents (no offsets): refused in memory and
    streamed alike (the streamed run was evaluated on document labels, the in-memory one refused)."""
    from tests.engine_checks import streamed
    run, _ = _random_case(6)
    spans = pd.DataFrame({"query_id": ["0", "1"], "doc_id": ["d1", "d2"], "start": [0, 5], "end": [10, 20],
                          "relevance": [1, 1]})
    with pytest.raises(ValueError, match="not available with chunks= or a span golden set"):
        if engine == "streaming":
            streamed(run, spans, ["P@5"], tmp_path / "run", unjudged="bounds")
        else:
            ef.evaluate(run, spans, ["P@5"], unjudged="bounds")


@pytest.mark.slow
@pytest.mark.xdist_group("spark")  # the worker holding the Spark session
@pytest.mark.parametrize("unjudged", ["bounds", "relevant"])
def test_every_engine_gives_the_in_memory_bounds(unjudged, tmp_path, spark):
    """The bounds are computed inside each partition: streamed (several files, a budget that
    forces parts, grouped and shuffled), Dask (3 partitions, shuffled) and Spark give the
    in-memory table bit for bit, value_low and value_high included."""
    import dask.dataframe as dd
    from tests.engine_checks import sorted_table, streamed
    run, qrels = _random_case(6)
    measures = ["P@5", "R@10", "RR", "Success@3"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = sorted_table(ef.evaluate(run, qrels, measures, unjudged=unjudged))
        assert ("value_high" in want) == (unjudged == "bounds")
        for layout, rows in (("grouped", run.sort_values("query_id", kind="stable")),
                             ("shuffled", run.sample(frac=1, random_state=1))):
            got = streamed(rows, qrels, measures, tmp_path / layout, files=3, parts=4, unjudged=unjudged)[0]
            pd.testing.assert_frame_equal(sorted_table(got), want, check_exact=True)
        got = ef.evaluate(dd.from_pandas(run.sample(frac=1, random_state=2), npartitions=3), qrels, measures,
                          unjudged=unjudged).compute()
        pd.testing.assert_frame_equal(sorted_table(got), want, check_exact=True)
        got = ef.evaluate(spark.createDataFrame(run), qrels, measures, unjudged=unjudged).toPandas()
        pd.testing.assert_frame_equal(sorted_table(got), want, check_exact=True)


def test_rollup_bounds_are_at_page_level():
    run = pd.DataFrame({"query_id": "q", "doc_id": ["p1#0", "p2#0", "p1#1", "p3#0"], "score": [4.0, 3, 2, 1]})
    qrels = pd.DataFrame({"query_id": "q", "doc_id": ["p1#1"], "relevance": [1]})
    pages = {"p1#0": "p1", "p1#1": "p1", "p2#0": "p2", "p3#0": "p3"}
    t = ef.evaluate(run, qrels, ["P@2", "R@2"], rollup=pages, unjudged="bounds")
    assert list(t["unit"]) == ["page", "page"]
    assert t["value_low"].tolist() == [0.5, 1.0]
    assert t["value_high"].tolist() == [1.0, 1.0]


def _report_warnings(**kw):
    run, qrels = _random_case(6, n_q=20)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rep = ef.report(run, qrels, measures=["R@5", "nDCG@5"], n_resamples=50, **kw)
    return rep, [w.category for w in caught], run, qrels


def test_report_declared_nonrelevant_has_no_unjudged_warning_but_keeps_the_row():
    rep, cats, _, _ = _report_warnings()
    assert UnjudgedDocumentsWarning in cats
    rows = rep.diagnostics[rep.diagnostics["check"] == "judged_at_k"]
    assert (rows["level"] == "warning").any()
    for mode in ["nonrelevant", "bounds"]:
        rep2, cats2, _, _ = _report_warnings(unjudged=mode)
        assert UnjudgedDocumentsWarning not in cats2
        rows2 = rep2.diagnostics[rep2.diagnostics["check"] == "judged_at_k"]
        assert len(rows2) == len(rows) and (rows2["level"] == "info").all()
        np.testing.assert_allclose(rows2["value"], rows["value"])
        assert "judged_at_k" not in set(rep2.warnings.table["check"])
        pd.testing.assert_frame_equal(rep2.summary[rep.summary.columns], rep.summary)
    with pytest.raises(ValueError, match="report: unjudged must be None, 'nonrelevant' or 'bounds'"):
        _report_warnings(unjudged="relevant")


def test_report_bounds_are_evaluates():
    rep, _, run, qrels = _report_warnings(unjudged="bounds")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = ef.aggregate(ef.evaluate(run, qrels, ["R@5"], unjudged="bounds"))
    s = rep.summary
    r5 = s[s["measure"] == "R@5"].merge(want, on=["system", "measure"], suffixes=("", "_e"))
    assert len(r5) == 3
    np.testing.assert_allclose(r5["mean_low"], r5["value_low"], atol=1e-12)
    np.testing.assert_allclose(r5["mean_high"], r5["value_high"], atol=1e-12)
    assert s.loc[s["measure"] == "nDCG@5", "mean_high"].isna().all()
    rows = rep.diagnostics[rep.diagnostics["check"] == "unjudged_bounds"]
    assert len(rows) == 3 and rows["detail"].str.contains("between").all()
    np.testing.assert_allclose(rows["value"].to_numpy(), r5["value_high"].to_numpy(), atol=1e-12)


def test_report_text_and_commands_show_bounds_and_ppi(tmp_path, capsys):
    from evalframe.cli import main
    from evalframe.reporting import text_tables
    cran = ef.datasets.load_cranfield()
    runs = cran.runs[cran.runs["system"].isin(["bm25", "tfidf"])]
    human = cran.qrels[cran.qrels["query_id"].isin(cran.qrels["query_id"].unique()[:50])]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rep = ef.report(runs, cran.qrels, measures=["R@5"], n_resamples=50, unjudged="bounds", human_qrels=human)
    checks = rep.diagnostics["check"].tolist()
    assert checks.count("ppi") == 2 and checks.count("unjudged_bounds") == 2  # both, neither replacing the other
    text = text_tables(rep)
    assert "Model labels and unjudged documents" in text and "bm25: R@5 0.297, between 0.297 and" in text
    assert "corrected with 50 human-labelled questions" in rep.to_markdown()
    from evalframe.reporting.render_html import to_html_page
    page = to_html_page(rep, plots=False)
    assert "<section id='labels'>" in page and "between 0.297 and" in page
    runs.to_parquet(tmp_path / "runs.parquet")
    human.to_csv(tmp_path / "human.csv", index=False)
    cran.qrels.to_csv(tmp_path / "qrels.csv", index=False)
    assert main(["evaluate", str(tmp_path / "qrels.csv"), str(tmp_path / "runs.parquet"), "-m", "R@5", "P@5",
                 "--unjudged", "bounds", "--format", "csv", "-q"]) == 0
    out = pd.read_csv(__import__("io").StringIO(capsys.readouterr().out))
    assert {"value_low", "value_high"} <= set(out.columns)
    assert main(["report", str(tmp_path / "qrels.csv"), str(tmp_path / "runs.parquet"), "-m", "R@5",
                 "--n-resamples", "50", "--unjudged", "bounds", "--human-qrels", str(tmp_path / "human.csv")]) == 0
    captured = capsys.readouterr()
    assert "between 0.297 and" in captured.out and "PPI++" in captured.out
    assert "UnjudgedDocumentsWarning" not in captured.err


def test_report_bounds_and_ppi_leave_out_the_questions_no_relevant_drop_leaves_out():
    # no_relevant='drop' is applied to every table of the report: the bounds and the
    # human-labelled table lose the questions without a relevant document, as the summary does
    import warnings
    rng = np.random.default_rng(7)
    qs = [f"q{i}" for i in range(30)]
    qrels = pd.DataFrame([(q, f"d{j}", int(rng.integers(0, 2)) if i % 5 else 0)
                          for i, q in enumerate(qs) for j in range(4)], columns=["query_id", "doc_id", "relevance"])
    run = pd.DataFrame([(s, q, f"d{j}", float(rng.random())) for s in ("a", "b") for q in qs for j in range(6)],
                       columns=["system", "query_id", "doc_id", "score"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rep = ef.report(run, qrels, measures=["P@5", "R@5"], no_relevant="drop", unjudged="bounds",
                        human_qrels=qrels, n_resamples=200)
    relevant = qrels.groupby("query_id")["relevance"].max()
    n_kept = int((relevant >= 1).sum())
    assert n_kept < len(qs)
    s = rep.summary.set_index(["system", "measure"])
    assert (s["n"] == n_kept).all()
    assert (s["n_human"] == n_kept).all()
    # the bound's low end is the summary's mean (same questions)
    assert np.allclose(s["mean_low"], s["mean"])
