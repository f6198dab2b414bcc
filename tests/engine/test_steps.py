"""no_relevant="zero" | "drop" (issue 30): golden-set questions without a relevant
document kept (scoring 0 on recall-type measures, the default) or left out, in evaluate
(in memory and streamed), report and the commands; the warning names the option."""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import evalframe as ef
from evalframe.engine import budget as sizing
from evalframe.cli import main
from evalframe.evaluation import evaluate_with_diagnostics


@pytest.fixture(scope="module")
def case():
    cran = ef.datasets.load_cranfield()
    qrels = cran.qrels.copy()
    qids = sorted(qrels.query_id.astype(str).unique())
    no_answer = qids[::9]  # every ninth question: all its labels below rel
    qrels.loc[qrels.query_id.astype(str).isin(no_answer), "relevance"] = 0
    return cran.runs, qrels, set(no_answer)


def _eval(run, qrels, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ef.evaluate(run, qrels, ["R@10", "nDCG@10", "AP"], **kw)


def test_drop_leaves_out_exactly_the_questions_without_relevant(case):
    run, qrels, no_answer = case
    zero = _eval(run, qrels)
    drop = _eval(run, qrels, no_relevant="drop")
    # the oracle: the questions whose best label is below rel = 1, found here by a loop
    best = {}
    for q, r in zip(qrels.query_id.astype(str), qrels.relevance):
        best[q] = max(best.get(q, -10), r)
    assert {q for q, b in best.items() if b < 1} == no_answer
    want = zero[~zero.query_id.astype(str).isin(no_answer)].reset_index(drop=True)
    pd.testing.assert_frame_equal(drop, want)
    assert (zero[zero.query_id.astype(str).isin(no_answer) & zero.measure.isin(["R@10", "AP"])].value == 0).all()
    m0, m1 = ef.aggregate(zero), ef.aggregate(drop)
    assert (m1["value"].to_numpy() > m0["value"].to_numpy()).all()  # the zeros no longer pull the means down
    assert (m1["n"] == 225 - len(no_answer)).all()
    # a higher rel makes more questions "no-answer"
    assert _eval(run, qrels, no_relevant="drop", rel=3).query_id.nunique() < drop.query_id.nunique()


def test_streamed_engine_agrees(case, tmp_path):
    run, qrels, no_answer = case
    path = tmp_path / "runs.parquet"
    run.to_parquet(path)
    budget = len(qrels) * sizing.QRELS_BYTES_PER_ROW + 2 * sizing.BYTES_PER_ROW * len(run) // 4
    streamed = _eval(str(path), qrels, no_relevant="drop", memory_budget=budget)
    want = _eval(run, qrels, no_relevant="drop")
    pd.testing.assert_frame_equal(streamed.sort_values(["system", "query_id", "measure"]).reset_index(drop=True),
                                  want.sort_values(["system", "query_id", "measure"]).reset_index(drop=True),
                                  check_dtype=False, check_categorical=False)


def test_warning_names_the_option_and_bad_values(case):
    run, qrels, _ = case
    with pytest.warns(ef.NoRelevantWarning, match="no_relevant='drop'"):
        ef.evaluate(run, qrels, ["R@10"])
    with pytest.raises(ValueError, match="no_relevant must be one of"):
        ef.evaluate(run, qrels, ["R@10"], no_relevant="skip")
    with pytest.raises(ValueError, match="not available with chunks="):
        ef.evaluate(run, qrels, ["R@10"], no_relevant="drop", chunks=pd.DataFrame())


def test_report_and_commands(case, tmp_path, capsys):
    run, qrels, no_answer = case
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rep = ef.report(run, qrels, measures=["R@10"], n_resamples=20, no_relevant="drop")
    assert not set(rep.per_question.query_id.astype(str)) & no_answer
    assert rep.metadata["conventions"]["no_relevant"] == "drop"
    with pytest.raises(ValueError, match="no_relevant must be"):
        ef.report(run, qrels, no_relevant="none")
    q = tmp_path / "qrels.txt"
    q.write_text("".join(f"{r.query_id} 0 {r.doc_id} {r.relevance}\n" for r in qrels.itertuples()))
    r = tmp_path / "bm25.parquet"
    run[run.system == "bm25"].to_parquet(r)
    counts = {}
    for mode in ("zero", "drop"):
        assert main(["evaluate", str(q), str(r), "-m", "R@10", "--no-relevant", mode, "--format", "csv"]) == 0
        counts[mode] = int(pd.read_csv(pd.io.common.StringIO(capsys.readouterr().out))["n"].iloc[0])
    assert counts == {"zero": 225, "drop": 225 - len(no_answer)}
    assert main(["evaluate", str(q), str(r), "--no-relevant", "maybe"]) == 2


def test_drop_says_so_and_does_not_warn(case):
    """With no_relevant='drop' the diagnostics say the questions were left out, and no
    NoRelevantWarning advises passing the option already passed (the report's neither)."""
    run, qrels, no_answer = case
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        per_q, diag = evaluate_with_diagnostics(run, qrels, ["R@10"], no_relevant="drop")
    assert not [x for x in w if issubclass(x.category, ef.NoRelevantWarning)]
    row = diag[diag.check == "golden_questions_without_relevant"]
    assert row["action"].tolist() == ["left out (no_relevant='drop')"] and row["count"].tolist() == [len(no_answer)]
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        rep = ef.report(run, qrels, measures=["R@10"], n_resamples=100, no_relevant="drop")
    assert not [x for x in w if issubclass(x.category, ef.NoRelevantWarning)]
    assert not any("no relevant document" in str(x) for x in rep.warnings)
    with warnings.catch_warnings(record=True) as w:  # the default still warns, naming the option
        warnings.simplefilter("always")
        ef.evaluate(run, qrels, ["R@10"])
    assert any(issubclass(x.category, ef.NoRelevantWarning) and "no_relevant='drop'" in str(x.message) for x in w)
