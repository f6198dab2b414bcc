"""Chunks rolled up to pages, measures at a token budget, shallow rankings.

Oracles: a slow loop written here (sort each list, map chunk -> page, keep the
first chunk of each page; sum tokens) and pytrec_eval on the rolled-up run.
"""
import warnings

import numpy as np
import pandas as pd
import pytest

import evalframe as ef
from evalframe.errors import EvalframeInputError, ShallowRankingWarning
from evalframe.evaluation import evaluate_with_diagnostics
from evalframe.measures import parse_measure

pytrec_eval = pytest.importorskip("pytrec_eval")


def chunk_case(seed: int, n_q: int = 12, n_pages: int = 15, systems=("a", "b")):
    """A chunk-level run (ties included), a chunk -> page map, page- and chunk-level golden sets."""
    rng = np.random.default_rng(seed)
    chunks = [f"p{p}_c{c}" for p in range(n_pages) for c in range(rng.integers(1, 5))]
    mapping = {c: c.split("_")[0] for c in chunks}
    rows = []
    for s in systems:
        for q in range(n_q):
            picked = rng.choice(chunks, size=rng.integers(1, min(25, len(chunks))), replace=False)
            for c in picked:
                rows.append((s, str(q), c, float(rng.integers(0, 6)), int(rng.integers(0, 120))))
    run = pd.DataFrame(rows, columns=["system", "query_id", "doc_id", "score", "tokens"])
    pages = sorted(set(mapping.values()))
    qp = [(str(q), p, int(rng.integers(0, 3))) for q in range(n_q) for p in rng.choice(pages, 4, replace=False)]
    qrels_pages = pd.DataFrame(qp, columns=["query_id", "doc_id", "relevance"])
    qc = [(str(q), c, int(rng.integers(0, 3))) for q in range(n_q) for c in rng.choice(chunks, 6, replace=False)]
    qrels_chunks = pd.DataFrame(qc, columns=["query_id", "doc_id", "relevance"])
    return run, mapping, qrels_pages, qrels_chunks


def slow_rollup(run: pd.DataFrame, mapping: dict) -> pd.DataFrame:
    """The page-level run by a loop: rank each list (score desc, doc_id desc), keep the
    first chunk of each page, tokens read from the previous kept page through this one."""
    out = []
    for (s, q), g in run.groupby(["system", "query_id"], sort=False):
        ranked = sorted(g.itertuples(index=False), key=lambda r: (-r.score, tuple(-b for b in r.doc_id.encode())))
        seen, cum, last = set(), 0, 0
        for r in ranked:
            cum += r.tokens
            page = mapping.get(r.doc_id, r.doc_id)
            if page in seen:
                continue
            seen.add(page)
            out.append((s, q, page, cum - last))
            last = cum
    df = pd.DataFrame(out, columns=["system", "query_id", "doc_id", "tokens"])
    df["score"] = -df.groupby(["system", "query_id"]).cumcount().astype(float)  # rank order, no ties
    return df


def pytrec(qrels: pd.DataFrame, run: pd.DataFrame, measures) -> dict:
    qd = {}
    for q, d, r in qrels[["query_id", "doc_id", "relevance"]].itertuples(index=False):
        qd.setdefault(q, {})[d] = int(r)
    out = {}
    for s, g in run.groupby("system", sort=False):
        rd = {}
        for q, d, sc in g[["query_id", "doc_id", "score"]].itertuples(index=False):
            rd.setdefault(q, {})[d] = float(sc)
        res = pytrec_eval.RelevanceEvaluator(qd, measures).evaluate(rd)
        out.update({(s, q, m): v for q, vals in res.items() for m, v in vals.items()})
    return out


def values(table: pd.DataFrame) -> dict:
    return {(r.system, r.query_id, r.measure): r.value for r in table.itertuples(index=False)}


# ---------------------------------------------------------------- roll-up
@pytest.mark.parametrize("seed", range(4))
def test_rollup_of_a_chunk_run_matches_pytrec_eval_on_the_rolled_up_run(seed):
    run, mapping, qrels, _ = chunk_case(seed)
    got = values(ef.evaluate(run, qrels, ["P@5", "R@5", "R@10", "nDCG(gain='linear')@10", "AP", "RR"],
                             rollup=mapping, missing="drop"))
    want = pytrec(qrels, slow_rollup(run, mapping), {"P_5", "recall_5", "recall_10", "ndcg_cut_10", "map",
                                                     "recip_rank"})
    names = {"P_5": "P@5", "recall_5": "R@5", "recall_10": "R@10", "ndcg_cut_10": "nDCG(gain='linear')@10",
             "map": "AP", "recip_rank": "RR"}
    want = {(s, q, names[m]): v for (s, q, m), v in want.items()}
    assert want.keys() == got.keys()
    for key, v in want.items():
        assert got[key] == pytest.approx(v, abs=1e-12), key


def test_golden_set_at_chunk_level_evaluated_at_page_level():
    run, mapping, _, qrels_chunks = chunk_case(7)
    # oracle: a page is as relevant as its most relevant chunk (a loop)
    best: dict = {}
    for q, c, r in qrels_chunks.itertuples(index=False):
        key = (q, mapping[c])
        best[key] = max(best.get(key, r), r)
    page_qrels = pd.DataFrame([(q, p, r) for (q, p), r in best.items()], columns=["query_id", "doc_id", "relevance"])
    got = values(ef.evaluate(run, qrels_chunks, ["R@5", "nDCG(gain='linear')@10"], rollup=mapping, missing="drop"))
    want = pytrec(page_qrels, slow_rollup(run, mapping), {"recall_5", "ndcg_cut_10"})
    names = {"recall_5": "R@5", "ndcg_cut_10": "nDCG(gain='linear')@10"}
    want = {(s, q, names[m]): v for (s, q, m), v in want.items()}
    assert want.keys() == got.keys()
    for key, v in want.items():
        assert got[key] == pytest.approx(v, abs=1e-12), key
    d = ef.diagnostics(run, qrels_chunks, rollup=mapping)
    merged = d[d["check"] == "rollup_golden_rows_merged"]
    assert merged["count"].tolist() == [len(qrels_chunks) - len(page_qrels)]


def loop_qrels(qrels: pd.DataFrame, mapping: dict) -> pd.DataFrame:
    """The page-level golden set by a loop: every id becomes its page (an id the map does
    not name is a page already), a page takes its most relevant chunk's label."""
    best: dict = {}
    for q, c, r in qrels[["query_id", "doc_id", "relevance"]].itertuples(index=False):
        key = (q, mapping.get(c, c))
        best[key] = max(best.get(key, r), r)
    return pd.DataFrame([(q, p, r) for (q, p), r in best.items()], columns=["query_id", "doc_id", "relevance"])


@pytest.mark.parametrize("seed", range(6))
def test_rollup_matches_the_loop_whatever_merges_and_page_ids_in_the_tables(seed):
    """Golden sets with one judged chunk per page (nothing to merge) in some questions or all,
    and ids that are pages already (page names in the run and the golden set, a page also
    reached through its chunks): every id is rolled up, page names meet their chunks."""
    run, mapping, _, qrels = chunk_case(seed)
    rng = np.random.default_rng(100 + seed)
    if seed % 2:  # one chunk per (question, page): no row merged anywhere
        qrels = qrels[~qrels.assign(p=qrels.doc_id.map(mapping)).duplicated(["query_id", "p"])]
    else:  # merges in a few questions only
        qrels = qrels[qrels.query_id.isin(["0", "1"]) | ~qrels.assign(p=qrels.doc_id.map(mapping))
                      .duplicated(["query_id", "p"])]
    pages = sorted(set(mapping.values()))
    extra_q = pd.DataFrame({"query_id": [str(q) for q in range(6)], "doc_id": rng.choice(pages, 6),
                            "relevance": rng.integers(0, 3, 6)})
    qrels = pd.concat([qrels, extra_q], ignore_index=True)
    qrels = qrels[~qrels.duplicated(["query_id", "doc_id"])]
    extra_r = pd.DataFrame({"system": "a", "query_id": [str(q) for q in range(8)], "doc_id": rng.choice(pages, 8),
                            "score": rng.integers(0, 6, 8).astype(float), "tokens": 10})
    run = pd.concat([run, extra_r], ignore_index=True)
    run = run[~run.duplicated(["system", "query_id", "doc_id"])]
    ms = ["P@5", "R@10", "nDCG(gain='linear')@10", "AP", "RR", "NumRel", "NumRet"]
    got = values(ef.evaluate(run, qrels, ms, rollup=mapping, missing="drop"))
    names = {"P_5": "P@5", "recall_10": "R@10", "ndcg_cut_10": "nDCG(gain='linear')@10", "map": "AP",
             "recip_rank": "RR", "num_rel": "NumRel", "num_ret": "NumRet"}
    want = pytrec(loop_qrels(qrels, mapping), slow_rollup(run, mapping), set(names))
    want = {(s, q, names[m]): v for (s, q, m), v in want.items()}
    assert want.keys() == got.keys()
    for key, v in want.items():
        assert got[key] == pytest.approx(v, abs=1e-12), key


def test_a_golden_set_with_nothing_to_merge_is_still_rolled_up():
    rollup = {"doc1#c0": "doc1", "doc1#c1": "doc1", "doc2#c0": "doc2"}
    run = pd.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["doc1#c0", "doc2#c0"], "score": [0.9, 0.8]})
    qrels = pd.DataFrame({"query_id": ["q1"], "doc_id": ["doc1#c1"], "relevance": [1]})
    assert ef.evaluate(run, qrels, ["RR", "R@1"], rollup=rollup)["value"].tolist() == [1.0, 1.0]
    d = ef.diagnostics(run, qrels, rollup=rollup)
    assert "rollup_golden_rows_merged" not in set(d["check"])


def test_an_id_the_map_does_not_name_is_the_page_of_that_name():
    run = pd.DataFrame({"query_id": ["1"] * 3, "doc_id": ["c1", "x", "p"], "score": [.9, .8, .7]})
    qrels = pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["p", "x"], "relevance": [1, 1]})
    got = ef.evaluate(run, qrels, ["NumRet", "R@2", "P@3", "AP"], rollup={"c1": "p"})["value"].tolist()
    assert got == pytest.approx([2, 1, 2 / 3, 1.0])
    qrels = pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["p", "c1"], "relevance": [1, 2]})
    run = pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["c1", "x"], "score": [.9, .5]})
    assert ef.evaluate(run, qrels, ["NumRel", "R@1", "AP"], rollup={"c1": "p"})["value"].tolist() == [1, 1, 1]
    qrels = pd.DataFrame({"query_id": ["1"] * 4, "doc_id": ["c1", "c2", "c3", "p2"], "relevance": [3, 2, 2, 1]})
    run = pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["c1", "c3"], "score": [1.0, 0.5]})
    assert ef.evaluate(run, qrels, ["RR", "NumRel"], rollup={"c1": "p1", "c2": "p1", "c3": "p2"})[
        "value"].tolist() == [1.0, 2.0]


def test_rows_collapsed_are_counted_per_system():
    run, mapping, qrels, _ = chunk_case(3)
    d = ef.diagnostics(run, qrels, rollup=mapping)
    rows = d[d["check"] == "rollup_run_rows_collapsed"]
    slow = slow_rollup(run, mapping)
    want = (run.groupby("system").size() - slow.groupby("system").size()).to_dict()
    assert dict(zip(rows["system"], rows["count"])) == want
    assert list(d.columns) == ["system", "check", "count", "action", "examples"]


def test_the_map_as_a_dict_a_table_or_a_run_column_gives_the_same_values():
    run, mapping, qrels, _ = chunk_case(5)
    by_dict = ef.evaluate(run, qrels, ["R@5", "nDCG@10"], rollup=mapping)
    table = pd.DataFrame({"chunk_id": list(mapping), "page_id": list(mapping.values())})
    by_table = ef.evaluate(run, qrels, ["R@5", "nDCG@10"], rollup=table)
    by_column = ef.evaluate(run.assign(page_id=run["doc_id"].map(mapping)), qrels, ["R@5", "nDCG@10"],
                            rollup="page_id")
    two = pd.DataFrame({"x": list(mapping), "y": list(mapping.values())})
    by_two = ef.evaluate(run, qrels, ["R@5", "nDCG@10"], rollup=two)
    for other in (by_table, by_column, by_two):
        pd.testing.assert_frame_equal(by_dict, other)


def test_the_unit_is_named_only_when_rolled_up():
    run, mapping, qrels, _ = chunk_case(1)
    plain = ef.evaluate(run, qrels, ["R@5"])
    assert list(plain.columns) == ["system", "query_id", "measure", "value"]
    rolled = ef.evaluate(run, qrels, ["R@5"], rollup=mapping)
    assert list(rolled.columns) == ["system", "query_id", "unit", "measure", "value"]
    assert set(rolled["unit"]) == {"page"}
    agg = ef.aggregate(rolled)
    assert "unit" in agg.columns and set(agg["unit"]) == {"page"}
    assert "unit" not in ef.aggregate(plain).columns


def test_a_chunk_mapped_to_two_pages_is_an_error():
    run, mapping, qrels, _ = chunk_case(2)
    table = pd.DataFrame({"chunk_id": ["p0_c0", "p0_c0"], "page_id": ["p0", "p1"]})
    with pytest.raises(EvalframeInputError, match="more than one page"):
        ef.evaluate(run, qrels, ["R@5"], rollup=table)
    with pytest.raises(TypeError, match="rollup must be"):
        ef.evaluate(run, qrels, ["R@5"], rollup=3)
    with pytest.raises(EvalframeInputError, match="names no column"):
        ef.evaluate(run, qrels, ["R@5"], rollup="page_id")


def test_rollup_with_ties_rank_and_depth():
    run, mapping, qrels, _ = chunk_case(4)
    ranked = run.assign(rank=run.groupby(["system", "query_id"])["score"].rank(method="first", ascending=False))
    a = ef.evaluate(ranked, qrels, ["R@5"], rollup=mapping, ties="rank")
    # ranked by the rank column: the same order as a run whose scores are the negated ranks
    b = ef.evaluate(ranked.assign(score=-ranked["rank"]), qrels, ["R@5"], rollup=mapping)
    pd.testing.assert_frame_equal(a, b)
    # depth cuts the page list (after the roll-up)
    deep = ef.evaluate(run, qrels, ["R@3"], rollup=mapping)
    cut = ef.evaluate(run, qrels, ["R@100"], rollup=mapping, depth=3)
    assert deep["value"].tolist() == cut["value"].tolist()


# ---------------------------------------------------------------- token budgets
def slow_budget(run: pd.DataFrame, qrels: pd.DataFrame, budget: int, k=None) -> dict:
    """R, P, Success and nDCG (exponential gain) at a token budget, by a loop."""
    lab = {(q, d): r for q, d, r in qrels[["query_id", "doc_id", "relevance"]].itertuples(index=False)}
    out = {}
    for (s, q), g in run.groupby(["system", "query_id"], sort=False):
        ranked = sorted(g.itertuples(index=False), key=lambda r: (-r.score, tuple(-b for b in r.doc_id.encode())))
        fit, cum = [], 0
        for r in ranked:
            cum += r.tokens
            if cum > budget or (k is not None and len(fit) == k):
                break
            fit.append(r.doc_id)
        labels = [lab.get((q, d), 0) for d in fit]
        n_rel = sum(1 for (qq, _), r in lab.items() if qq == q and r >= 1)
        hits = sum(1 for x in labels if x >= 1)
        dcg = sum((2 ** x - 1) / np.log2(i + 2) for i, x in enumerate(labels) if x > 0)
        ideal = sorted((r for (qq, _), r in lab.items() if qq == q and r > 0), reverse=True)[:len(fit)]
        idcg = sum((2 ** x - 1) / np.log2(i + 2) for i, x in enumerate(ideal))
        out[(s, q)] = {"R": hits / n_rel if n_rel else 0.0, "P": hits / len(fit) if fit else 0.0,
                       "Success": float(hits > 0), "nDCG": dcg / idcg if idcg > 0 else 0.0}
    return out


@pytest.mark.parametrize("budget", [1, 60, 250, 5000])
def test_measures_at_a_token_budget_match_a_loop(budget):
    run, _, _, qrels = chunk_case(11)
    names = [f"{f}(tokens={budget})" for f in ("R", "P", "Success", "nDCG")]
    got = values(ef.evaluate(run, qrels, names, missing="drop"))
    want = slow_budget(run, qrels, budget)
    for (s, q), vals in want.items():
        for f, v in vals.items():
            assert got[(s, q, f"{f}(tokens={budget})")] == pytest.approx(v, abs=1e-12), (s, q, f)


def test_a_budget_and_a_cutoff_read_the_shorter_prefix():
    run, _, _, qrels = chunk_case(12)
    got = values(ef.evaluate(run, qrels, ["P(tokens=300)@3", "nDCG(tokens=300)@3"], missing="drop"))
    want = slow_budget(run, qrels, 300, k=3)
    for (s, q), vals in want.items():
        assert got[(s, q, "P(tokens=300)@3")] == pytest.approx(vals["P"], abs=1e-12)
        assert got[(s, q, "nDCG(tokens=300)@3")] == pytest.approx(vals["nDCG"], abs=1e-12)


def test_a_huge_budget_is_the_whole_ranking():
    run, _, qrels, _ = chunk_case(13)
    a = ef.evaluate(run, qrels, ["R(tokens=1000000)", "Success(tokens=1000000)"])
    b = ef.evaluate(run, qrels, ["R", "Success@1000"])
    assert a["value"].tolist() == b["value"].tolist()


def test_budget_names_round_trip():
    for name in ("R(tokens=2000)", "P(tokens=2000)", "nDCG(tokens=2000)", "Success(tokens=2000)",
                 "P(tokens=500)@10", "nDCG(gain='linear',tokens=2000)@10"):
        assert str(parse_measure(name)) == name
        assert parse_measure(str(parse_measure(name))) == parse_measure(name)
    with pytest.raises(ValueError, match="tokens must be an int >= 1"):
        parse_measure("R(tokens=0)")
    with pytest.raises(ValueError, match="needs a cutoff"):
        parse_measure("P")


def test_a_budget_needs_a_tokens_column_and_good_counts():
    run, _, qrels, _ = chunk_case(14)
    with pytest.raises(EvalframeInputError, match="no tokens column"):
        ef.evaluate(run.drop(columns="tokens"), qrels, ["R(tokens=100)"])
    bad = run.copy()
    bad.loc[0, "tokens"] = -1
    with pytest.raises(EvalframeInputError, match="negative or non-numeric token count"):
        ef.evaluate(bad, qrels, ["R@5"])
    # the tokens column changes nothing else
    pd.testing.assert_frame_equal(ef.evaluate(run, qrels, ["R@5", "nDCG@10"]),
                                  ef.evaluate(run.drop(columns="tokens"), qrels, ["R@5", "nDCG@10"]))


def test_a_budget_on_rolled_up_pages_counts_the_chunks_read():
    run, mapping, qrels, _ = chunk_case(15)
    got = values(ef.evaluate(run, qrels, ["R(tokens=200)", "P(tokens=200)"], rollup=mapping, missing="drop"))
    slow = slow_rollup(run, mapping)  # page tokens: the chunks read since the previous page
    want = slow_budget(slow, qrels, 200)
    for (s, q), vals in want.items():
        assert got[(s, q, "R(tokens=200)")] == pytest.approx(vals["R"], abs=1e-12)
        assert got[(s, q, "P(tokens=200)")] == pytest.approx(vals["P"], abs=1e-12)


# ---------------------------------------------------------------- shallow rankings
def test_shallow_rankings_are_reported_and_warned():
    run = pd.DataFrame({"query_id": ["1"] * 3 + ["2"] * 20, "doc_id": [f"d{i}" for i in range(23)],
                        "score": np.arange(23, 0, -1.0)})
    qrels = pd.DataFrame({"query_id": ["1", "2"], "doc_id": ["d0", "d22"], "relevance": [1, 1]})
    with pytest.warns(ShallowRankingWarning, match="2 questions have fewer than 100"):
        per_q, diag = evaluate_with_diagnostics(run, qrels, ["R@100", "R@20"])
    row = diag[diag["check"] == "shallow_rankings"]
    assert row["count"].tolist() == [2] and row["examples"].tolist() == ["1, 2"]
    # R@100 of a 20-deep ranking is its R@20
    v = per_q.pivot(index="query_id", columns="measure", values="value")
    assert (v["R@100"] == v["R@20"]).all()
    d = ef.diagnostics(run, qrels, ["R@10"])
    assert d.loc[d["check"] == "shallow_rankings", "count"].tolist() == [1]
    with warnings.catch_warnings():
        warnings.simplefilter("error", ShallowRankingWarning)
        ef.evaluate(run, qrels, ["R@3"])  # deep enough: no warning


# ---------------------------------------------------------------- the commands
def test_rollup_and_budget_stages_on_the_commands(tmp_path, capsys):
    import io
    import json

    from evalframe.cli import main
    run, mapping, qrels, _ = chunk_case(21, n_q=60)
    qrels.to_csv(tmp_path / "qrels.csv", index=False)
    pd.DataFrame({"chunk_id": list(mapping), "page_id": list(mapping.values())}).to_csv(
        tmp_path / "map.tsv", sep="\t", index=False)
    files = []
    for s in ("a", "b"):
        run[run.system == s].drop(columns="system").to_csv(tmp_path / f"{s}.csv", index=False)
        files.append(str(tmp_path / f"{s}.csv"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(["evaluate", str(tmp_path / "qrels.csv"), *files, "-m", "R@5", "R(tokens=200)",
                     "--rollup", str(tmp_path / "map.tsv"), "--format", "csv"]) == 0
        got = pd.read_csv(io.StringIO(capsys.readouterr().out))
        want = ef.aggregate(ef.evaluate(run, qrels, ["R@5", "R(tokens=200)"], rollup=mapping))
        assert main(["evaluate", str(tmp_path / "qrels.csv"), files[0], "-m", "R@5",
                     "--rollup", str(tmp_path / "map.tsv")]) == 0
        assert "documents are pages" in capsys.readouterr().out
    assert set(got["unit"]) == {"page"}
    assert got["mean"].tolist() == pytest.approx(want["mean"].tolist(), abs=1e-12)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(["report", str(tmp_path / "qrels.csv"), *files, "-m", "R@5", "--rollup",
                     str(tmp_path / "map.tsv"), "--stages", "a:20", "b:tokens=300",
                     "--n-resamples", "50", "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [s["measure"] for s in out["stages"]] == ["R@20", "R(tokens=300)"]


def test_a_streamed_run_rolls_up_each_partition_as_the_whole(tmp_path):
    # whether a question's golden rows are rolled up must not depend on the other
    # questions of its partition (one had rows to merge, the other none)
    rollup = {"p#1": "p", "p#2": "p", "r#1": "r", "r#2": "r"}
    run = pd.DataFrame({"query_id": ["1", "1", "2"], "doc_id": ["p#1", "d", "r#1"], "score": [2., 1., 1.]})
    qrels = pd.DataFrame({"query_id": ["1", "1", "2", "2"], "doc_id": ["p#2", "d", "r#1", "r#2"],
                          "relevance": [1, 1, 1, 0]})
    run.to_parquet(tmp_path / "run.parquet", index=False)
    in_memory = ef.evaluate(run, qrels, ["RR", "AP"], rollup=rollup)
    assert in_memory["value"].tolist() == [1.0, 1.0, 1.0, 1.0]
    pd.testing.assert_frame_equal(ef.evaluate(str(tmp_path / "run.parquet"), qrels, ["RR", "AP"], rollup=rollup,
                                              memory_budget=1), in_memory)
