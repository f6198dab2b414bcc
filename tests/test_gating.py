"""The gate (evalframe.gating, ``evalframe gate``): a pass, a fail and an inconclusive on
constructed runs with known per-question values; p-values against scipy's one-sided
paired t-test and a Holm step-down written here; exit statuses through the command's
entry point; the Markdown summary and the JUnit XML parsed back."""
from __future__ import annotations

import math
import re
import warnings
from xml.etree import ElementTree as ET

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

import evalframe as ef
from evalframe.cli import main


def _case(base_ranks, cand_ranks):
    """Golden set: one relevant document 'r' per question; each run ranks 'r' at the
    given rank (1..3) among three documents, so RR = 1 / rank and Success@1 = rank == 1."""
    qrels = pd.DataFrame({"query_id": [f"q{i:03d}" for i in range(len(base_ranks))], "doc_id": "r",
                          "relevance": 1})

    def run(ranks):
        rows = []
        for i, rank in enumerate(ranks):
            docs = ["x", "y"]
            docs.insert(rank - 1, "r")
            rows += [(f"q{i:03d}", d, float(3 - j)) for j, d in enumerate(docs)]
        return pd.DataFrame(rows, columns=["query_id", "doc_id", "score"])
    return qrels, run(base_ranks), run(cand_ranks)


def _ranks(n, worse=(), better=(), base_second=()):
    base = np.ones(n, dtype=int)
    base[list(base_second)] = 2
    cand = base.copy()
    cand[list(worse)] = 3
    cand[list(better)] = 1
    return base, cand


PASS = _ranks(60, worse=[0, 1, 2], better=range(10, 20), base_second=range(10, 25))
FAIL = _ranks(40, worse=range(0, 40, 4))
INCONCLUSIVE = _ranks(12, worse=[0, 1], better=[5], base_second=[5, 6])


def _holm(p):
    p = np.asarray(p, dtype=float)
    order = np.argsort(p)
    adj = np.empty_like(p)
    running = 0.0
    for i, j in enumerate(order):
        running = max(running, min(1.0, (len(p) - i) * p[j]))
        adj[j] = running
    return adj


def _gate(case, margin=0.01, **kw):
    qrels, b, c = _case(*case)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ef.ShallowRankingWarning)
        return ef.gate(qrels, b, c, ["RR", "Success@1"], margin=margin, **kw)


@pytest.mark.parametrize("case, decision", [(PASS, "pass"), (FAIL, "fail"), (INCONCLUSIVE, "inconclusive")])
def test_decisions_and_p_values_against_scipy(case, decision):
    g = _gate(case)
    assert g.decision == decision and g.exit_status == {"pass": 0, "fail": 1, "inconclusive": 3}[decision]
    base, cand = case
    values = {"RR": (1 / base, 1 / cand), "Success@1": ((base == 1) * 1.0, (cand == 1) * 1.0)}
    p_ni, p_w = [], []
    for m in g.table.measure:
        a, b = values[m]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # constant differences: t = +-inf
            p_ni.append(sps.ttest_rel(b + 0.01, a, alternative="greater").pvalue)
            p_w.append(sps.ttest_rel(b + 0.01, a, alternative="less").pvalue)
        row = g.table.set_index("measure").loc[m]
        assert row["diff"] == pytest.approx(b.mean() - a.mean())
        assert row["n"] == len(a)
    p_ni, p_w = np.nan_to_num(p_ni, nan=1.0), np.nan_to_num(p_w, nan=1.0)
    np.testing.assert_allclose(g.table.p_noninferior, p_ni, atol=1e-12)
    np.testing.assert_allclose(g.table.p_noninferior_adjusted, _holm(p_ni), atol=1e-12)
    np.testing.assert_allclose(g.table.p_worse_adjusted, _holm(p_w), atol=1e-12)


def test_the_constructed_cases_are_what_they_claim():
    t = _gate(PASS).table.set_index("measure")
    assert t.loc["RR", "diff"] == pytest.approx((10 * 0.5 - 3 * (1 - 1 / 3)) / 60)
    assert (t.decision == "pass").all() and t.n_needed.isna().all()
    f = _gate(FAIL).table.set_index("measure")
    assert f.loc["RR", "diff"] == pytest.approx(-10 * (1 - 1 / 3) / 40) and f.loc["RR", "decision"] == "fail"
    i = _gate(INCONCLUSIVE).table.set_index("measure")
    assert (i.decision == "inconclusive").all()


def test_inconclusive_says_how_many_questions_would_tell():
    g = _gate(INCONCLUSIVE)
    base, cand = INCONCLUSIVE
    d = 1 / cand - 1 / base
    row = g.table.set_index("measure").loc["RR"]
    delta, sd, alpha = abs(d.mean() + 0.01), d.std(ddof=1), 0.05 / 2

    def power(n):  # one-sided paired t at alpha, noncentral t (scipy)
        return sps.nct.sf(sps.t.ppf(1 - alpha, n - 1), n - 1, delta / sd * math.sqrt(n))
    n = int(row["n_needed"])
    assert n > len(d) and power(n) >= 0.8 > power(n - 1)
    assert f"about {n} questions" in g.to_text()


def test_margin_moves_the_decision():
    # a small loss: within a margin of 0.1 it passes, with no margin it fails
    case = _ranks(200, worse=range(0, 200, 20))
    assert _gate(case, margin=0.1).decision == "pass"
    assert _gate(case, margin=0.0).decision == "fail"


def test_sequential_gate_is_anytime_valid_and_more_cautious():
    g = _gate(FAIL, sequential=True)
    assert g.method == "betting" and g.table.n_needed.isna().all()
    assert g.decision in ("fail", "inconclusive")
    big = _ranks(400, worse=range(0, 400, 4))
    assert _gate(big, sequential=True).decision == "fail"
    same = _ranks(400)
    assert _gate(same, sequential=True).decision == "inconclusive"  # 0.01 of a range of 2: 400 are too few
    assert _gate(same, sequential=True, margin=0.05).decision == "pass"
    # its p-values are sequential_compare's, Holm-adjusted
    qrels, b, c = _case(*big)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ef.ShallowRankingWarning)
        pq = ef.evaluate({"baseline": b, "candidate": c}, qrels, ["RR", "Success@1"])
    s = ef.stats.sequential_compare(pq, baseline="baseline", null=-0.01, alternative="less")
    np.testing.assert_allclose(_gate(big, sequential=True).table.p_worse, s.p_value)


def _files(tmp_path, case):
    qrels, b, c = _case(*case)
    q = tmp_path / "qrels.txt"
    q.write_text("".join(f"{r.query_id} 0 {r.doc_id} {r.relevance}\n" for r in qrels.itertuples()))
    paths = []
    for name, run in (("base", b), ("cand", c)):
        p = tmp_path / f"{name}.trec"
        p.write_text("".join(f"{r.query_id} Q0 {r.doc_id} {i + 1} {r.score} {name}\n"
                             for i, r in enumerate(run.itertuples())))
        paths.append(str(p))
    return [str(q), *paths]


@pytest.mark.parametrize("case, status", [(PASS, 0), (FAIL, 1), (INCONCLUSIVE, 3)])
def test_command_exit_status_summary_and_junit(case, status, tmp_path, capsys):
    md, xml = tmp_path / "summary.md", tmp_path / "junit.xml"
    argv = ["gate", *_files(tmp_path, case), "-m", "RR", "-m", "Success@1", "--margin", "0.01",
            "--summary", str(md), "--junit", str(xml)]
    assert main(argv) == status
    out = capsys.readouterr().out
    decision = {0: "pass", 1: "fail", 3: "inconclusive"}[status]
    assert out.startswith(f"gate: {decision.upper()}")
    # the Markdown summary: a heading with the decision and a table with one row per measure
    text = md.read_text()
    assert text.splitlines()[0] == f"## Retrieval gate: {decision.upper()}"
    rows = [line for line in text.splitlines() if line.startswith("|")]
    header = [c.strip() for c in rows[0].strip("|").split("|")]
    assert header[:2] == ["measure", "decision"] and re.fullmatch(r"\|(-+:?\|)+|\|(:?-+:?\|)+", rows[1])
    body = [dict(zip(header, (c.strip() for c in r.strip("|").split("|")))) for r in rows[2:]]
    assert [r["measure"] for r in body] == ["RR", "Success@1"]
    assert all(len(r) == len(header) for r in body)
    g = _gate(case)
    assert [r["decision"] for r in body] == g.table.decision.tolist()
    # JUnit: one test case per measure, failures and skips as decided
    root = ET.parse(xml).getroot()
    suite = root.find("testsuite")
    cases = suite.findall("testcase")
    assert [c.get("name") for c in cases] == ["RR", "Success@1"]
    failed = [c.get("name") for c in cases if c.find("failure") is not None]
    skipped = [c.get("name") for c in cases if c.find("skipped") is not None]
    assert failed == g.table.measure[g.table.decision == "fail"].tolist()
    assert skipped == g.table.measure[g.table.decision == "inconclusive"].tolist()
    assert int(suite.get("failures")) == len(failed) and int(suite.get("tests")) == 2


def test_command_user_errors_exit_2(tmp_path, capsys):
    files = _files(tmp_path, PASS)
    assert main(["gate", *files, "-m", "Foo@3"]) == 2
    assert main(["gate", files[0], files[1], str(tmp_path / "missing.trec"), "-m", "RR"]) == 2
    assert main(["gate", *files, "-m", "RR", "--margin", "-1"]) == 2
    assert "margin must be a float >= 0" in capsys.readouterr().err
    assert main(["gate", *files, "-m", "RR", "--summary", str(tmp_path / "no/dir/s.md")]) == 2
    assert "--summary" in capsys.readouterr().err
    assert main(["gate", *files]) == 2  # -m is required


def test_api_refusals():
    qrels, b, c = _case(*PASS)
    with pytest.raises(ValueError, match="alpha must be"):
        ef.gate(qrels, b, c, "RR", alpha=1.5)
    with pytest.raises(ef.EvalframeInputError, match="holds 2 systems"):
        ef.gate(qrels, pd.concat([b.assign(system="x"), b.assign(system="y")]), c, "RR")


def test_gate_against_a_saved_report(tmp_path, capsys):
    """The baseline's values read from a saved report (evalframe report --out DIR) equal
    gating the two runs; another golden set or other conventions are refused."""
    qrels, b, c = _case(*FAIL)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rep = ef.report({"main": b}, qrels, measures=["RR", "Success@1"], n_resamples=20)
        direct = ef.gate(qrels, b, c, ["RR", "Success@1"], margin=0.01)
        saved = ef.gate(qrels, rep, c, ["RR", "Success@1"], margin=0.01)
    pd.testing.assert_frame_equal(saved.table, direct.table)
    assert saved.decision == "fail"
    other = qrels.assign(relevance=np.where(np.arange(len(qrels)) == 0, 2, 1))
    with pytest.raises(ef.EvalframeInputError, match="not the one the saved report was computed on"):
        ef.gate(other, rep, c, ["RR"])
    with pytest.raises(ef.EvalframeInputError, match="conventions differ"):
        ef.gate(qrels, rep, c, ["RR"], rel=2)
    with pytest.raises(ef.EvalframeInputError, match="has no"):
        ef.gate(qrels, rep, c, ["AP"])
    # the command, with the --out folder of evalframe report
    files = _files(tmp_path, FAIL)
    assert main(["report", files[0], f"main={files[1]}", "-m", "RR", "Success@1", "--n-resamples", "20",
                 "--out", str(tmp_path / "main")]) == 0
    capsys.readouterr()
    assert main(["gate", files[0], files[2], "--baseline-report", str(tmp_path / "main"), "-m", "RR",
                 "--margin", "0.01"]) == 1
    assert capsys.readouterr().out.startswith("gate: FAIL")
    assert main(["gate", files[0], files[1], files[2], "--baseline-report", str(tmp_path / "main"),
                 "-m", "RR"]) == 2
    assert main(["gate", files[0], files[2], "--baseline-report", str(tmp_path / "main"), "-m", "RR",
                 "--rel", "2"]) == 2
    assert "conventions differ" in capsys.readouterr().err


def _per_q(a, b, measure="P@5"):
    n = len(a)
    return pd.DataFrame({"system": ["base"] * n + ["cand"] * n, "query_id": [f"q{i}" for i in range(n)] * 2,
                         "measure": measure, "value": np.r_[a, b]})


def test_alpha_of_a_half_or_more_is_refused():
    # at alpha >= 0.5 'not worse' and 'worse' could both reject: an equal candidate failed
    from evalframe.gating import gate_per_question
    rng = np.random.default_rng(1)
    a = rng.integers(0, 2, 40).astype(float)
    with pytest.raises(ValueError, match=r"alpha must be a level in \(0, 0.5\)"):
        gate_per_question(_per_q(a, rng.permutation(a)), baseline="base", candidate="cand", alpha=0.7)


def test_a_difference_of_float_noise_is_inconclusive_without_questions_needed():
    # equal means up to round-off (1e-17): inconclusive at margin 0, and no 'questions needed'
    # (n_for_difference used to overflow scipy's t quantile here)
    from evalframe.gating import gate_per_question
    a = np.array([0.1, 0.7, 0.2] * 10)
    b = np.array([0.7, 0.2, 0.1] * 10)
    b[0] += 1e-16
    g = gate_per_question(_per_q(a, b), baseline="base", candidate="cand")
    assert g.decision == "inconclusive" and pd.isna(g.table.loc[0, "n_needed"])


def test_questions_needed_for_a_tiny_difference_is_the_normal_answer():
    # beyond 10^7 questions the normal approximation's n is returned (t and z agree there)
    from scipy import stats as st
    d, sd = 1e-6, 0.3
    z = st.norm.ppf(0.95) + st.norm.ppf(0.8)
    assert ef.stats.n_for_difference(d, sd_diff=sd, two_sided=False) == math.ceil((z * sd / d) ** 2)


def test_sequential_gate_on_a_measure_without_a_range_says_what_the_gate_takes():
    # the message told gate users to pass bounds=, which the gate does not take
    from evalframe.gating import gate_per_question
    rng = np.random.default_rng(2)
    a = rng.uniform(0, 3, 30)
    with pytest.raises(ef.errors.EvalframeInputError, match="without --sequential"):
        gate_per_question(_per_q(a, a + 0.1, measure="DCG@10"), baseline="base", candidate="cand", sequential=True)


@pytest.mark.parametrize("sequential", [False, True])
def test_unpaired_questions_are_told_once(sequential):
    # the gate's three tests pair the same questions: the warning came three times (and never
    # from sequential_compare)
    from evalframe.gating import gate_per_question
    rng = np.random.default_rng(4)
    t = _per_q(rng.uniform(0, 1, 30), rng.uniform(0, 1, 30))
    t = t.drop(index=[0, 1])  # two questions only the candidate answers
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        gate_per_question(t, baseline="base", candidate="cand", sequential=sequential)
    told = [w for w in got if issubclass(w.category, ef.errors.UnpairedQuestionsWarning)]
    assert len(told) == 1 and "2 questions dropped" in str(told[0].message)


@pytest.mark.parametrize("margin, status", [("0.01", 3), ("0.05", 0)])
def test_command_sequential_flag(margin, status, tmp_path, capsys):
    """--sequential on the command: the anytime-valid gate, its decision the API's
    (oracle: ef.gate(..., sequential=True), itself checked against sequential_compare);
    the fixed-n gate decides otherwise on the same 400 questions at margin 0.01."""
    same = _ranks(400)
    files = _files(tmp_path, same)
    args = ["gate", *files, "-m", "RR", "-m", "Success@1", "--margin", margin]
    assert main([*args, "--sequential"]) == status
    api = _gate(same, margin=float(margin), sequential=True)
    assert api.exit_status == status
    assert capsys.readouterr().out.startswith(f"gate: {api.decision.upper()}")
    assert main(args) == 0  # the fixed-n t-test passes identical systems at 400 questions
