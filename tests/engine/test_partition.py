"""The per-partition contract of evalframe.ranking: a partition holds whole questions
(the golden-set rows and every system's run rows of those questions); evaluating
partitions independently and concatenating gives the whole input's per-question
table bit for bit, and their diagnostics merge into the whole input's by summing
counts (ranking.merge_diagnostics)."""
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import evalframe as ef
from evalframe._diagnostic_checks import clear_judged_elsewhere, shallow_rankings
from evalframe._diagnostic_records import diagnostics_table, merge_diagnostics
from evalframe.ranking import judge
from tests.make_snapshot import MEASURES
from tests.strategies import cases

KEYS = ["system", "query_id", "measure"]


def per_question(run, qrels, measures, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ef.EvalframeWarning)
        return ef.evaluate(run, qrels, measures, missing="zero", **kw)


def records(run, qrels, **kw):
    return judge(ef.read_run(run), ef.read_qrels(qrels), missing="zero", warn=False, **kw).records


def check_partitions(run, qrels, parts, measures, **kw):
    """parts: lists of question ids covering the run's and the golden set's questions."""
    whole = per_question(run, qrels, measures, **kw)
    pieces = [per_question(run[run.query_id.isin(p)], qrels[qrels.query_id.isin(p)], measures, **kw)
              for p in parts]
    merged = pd.concat(pieces, ignore_index=True)
    assert len(merged) == len(whole)
    merged = merged.set_index(KEYS).loc[pd.MultiIndex.from_frame(whole[KEYS])].reset_index()
    for col in KEYS:
        assert (merged[col].to_numpy() == whole[col].to_numpy()).all(), col
    a, b = merged["value"].to_numpy(), whole["value"].to_numpy()
    assert ((a == b) | (np.isnan(a) & np.isnan(b))).all()  # bit for bit, not approximately
    rel = kw.get("rel", 1)
    got = diagnostics_table(merged_as_the_engines_do(
        [records(run[run.query_id.isin(p)], qrels[qrels.query_id.isin(p)], rel=rel) for p in parts],
        ef.read_run(run), qrels))
    pd.testing.assert_frame_equal(got, diagnostics_table(records(run, qrels, rel=rel)))


def merged_as_the_engines_do(recs, run, qrels):
    """Partition records merged, then a system flagged by every partition that retrieves,
    for a golden-set question, a document the whole golden set judges (for any question)
    cleared, as the engines decide it on the whole golden set (a loop, not the engines' code)."""
    systems = list(dict.fromkeys(run.system))
    golden_q, golden_d = set(qrels.query_id.astype(str)), set(qrels.doc_id.astype(str))
    def judged(flagged):
        return {s for s in flagged if any(q in golden_q and d in golden_d for q, d in zip(
            run.query_id[run.system == s].astype(str), run.doc_id[run.system == s].astype(str)))}
    return clear_judged_elsewhere(merge_diagnostics(recs, systems=systems), judged)


#: trec_measures' DCG variants sum gains with one running sum over every row
#: (``_cumsum_by``: a global cumsum minus each group's start), so their last bits
#: depend on the rows before the group (differences up to ~1e-13 on Cranfield).
#: The measures package's shared within-group DCG is meant to remove this.
GLOBAL_RUNNING_SUM = ["nDCGrel", "RnDCG", "nDCG(gain='linear',gains=((1, 3.0), (2, 9.0)))"]


def three_parts(ds):
    qs = ds.qrels.query_id.unique()
    part = np.random.default_rng(9).integers(0, 3, len(qs))
    return [qs[part == i].tolist() for i in range(3)]


@pytest.mark.parametrize("name", ["cranfield", "scifact"])
def test_three_partitions_of_a_bundled_collection_give_the_whole(name):
    ds = getattr(ef.datasets, f"load_{name}")()
    check_partitions(ds.runs, ds.qrels, three_parts(ds), [m for m in MEASURES if m not in GLOBAL_RUNNING_SUM])
    assert len(diagnostics_table(records(ds.runs, ds.qrels))), "the diagnostics merge must be exercised"


def test_dcg_variants_are_partition_exact():
    """nDCGrel, RnDCG and nDCG with gains once used one running sum over all rows."""
    ds = ef.datasets.load_cranfield()
    check_partitions(ds.runs, ds.qrels, three_parts(ds), GLOBAL_RUNNING_SUM)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases(), st.lists(st.integers(0, 2), min_size=6, max_size=6))
def test_partitions_of_random_cases_give_the_whole(case, assignment):
    qrels, run, rel = case
    # two systems that answer the same questions, with different rankings
    run = pd.concat([run.assign(system="A"), run.assign(system="B", score=-run.score)], ignore_index=True)
    golden, answered = list(dict.fromkeys(qrels.query_id)), set(run.query_id)
    shared = [q for q in golden if q in answered]
    part_of = {q: assignment[i % len(assignment)] for i, q in enumerate(golden)}
    # a partition needs a question its run answers (else it is an input error, as any input is)
    ok = {part_of[q] for q in shared}
    part_of = {q: (p if p in ok else part_of[shared[0]]) for q, p in part_of.items()}
    for q in answered - set(golden):  # run-only questions go to any partition
        part_of[q] = part_of[shared[-1]]
    parts = [[q for q, p in part_of.items() if p == i] for i in sorted(set(part_of.values()))]
    check_partitions(run, qrels, parts, ["AP", "nDCG@3", "RR", "P@2", "R", "bpref", "infAP", "NumRel",
                                         "AP(judged_only=True)", "Rprec", "RBP(residual=True)"], rel=rel)


def test_mixed_integer_and_text_question_ids_keep_the_whole_calls_examples():
    """Question ids 1..20 and "x": the whole golden set is not all integers, so the whole
    call lists examples byte-wise (1, 10, 11, 12, 13), while a partition holding only
    integer ids orders its own numerically; merged partitions must show the whole's."""
    ids = [str(i) for i in range(1, 21)] + ["x"]
    qrels = pd.DataFrame({"query_id": ids, "doc_id": "d", "relevance": 0})  # no relevant document anywhere
    run = pd.DataFrame({"query_id": ids, "doc_id": "d", "score": 1.0, "system": "s"})
    whole = diagnostics_table(records(run, qrels))
    assert whole.loc[whole["check"] == "golden_questions_without_relevant", "examples"].tolist() == ["1, 10, 11, 12, 13"]
    for parts in ([ids[:10], ids[10:]], [ids[10:], ids[:10]], [ids[:5], ids[5:12], ids[12:]]):
        got = diagnostics_table(merge_diagnostics(
            (records(run[run.query_id.isin(p)], qrels[qrels.query_id.isin(p)]) for p in parts), systems=["s"]))
        pd.testing.assert_frame_equal(got, whole)


def judged_records(run, qrels, k=3):
    """(records with the shallow rankings at cutoff k, whether every golden-set id is an integer)."""
    J = judge(ef.read_run(run), ef.read_qrels(qrels), missing="zero", warn=False)
    return list(J.records) + shallow_rankings(J, k, warn=False), J.integer_questions


def merged_parts(run, qrels, parts):
    """The diagnostics table of the parts merged as the engines merge them."""
    judged = [judged_records(run[run.query_id.isin(p)], qrels[qrels.query_id.isin(p)]) for p in parts]
    return diagnostics_table(merge_diagnostics(
        [r for r, _ in judged], systems=list(dict.fromkeys(run.system)),
        integer_questions=all(flag for _, flag in judged)))


def test_a_part_without_records_may_hold_the_only_text_id():
    """Questions 1..20 have no relevant document, "x" has one: the part holding "x"
    has no golden_questions_without_relevant record, yet makes the whole's order byte-wise."""
    ids = [str(i) for i in range(1, 21)] + ["x"]
    qrels = pd.DataFrame({"query_id": ids, "doc_id": "d", "relevance": [0] * 20 + [1]})
    run = pd.DataFrame({"query_id": ids, "doc_id": "d", "score": 1.0, "system": "s"})
    whole = diagnostics_table(judged_records(run, qrels)[0])
    assert whole.loc[whole["check"] == "golden_questions_without_relevant", "examples"].tolist() == ["1, 10, 11, 12, 13"]
    pd.testing.assert_frame_equal(merged_parts(run, qrels, [ids[:20], ["x"]]), whole)


@st.composite
def mixed_id_cases(draw):
    """Two systems over questions drawn from integers (also negative, beyond 9), ids that
    look like integers but are not ("007", "+3") and text; run-only and unanswered
    questions, ties, questions without a relevant document, short rankings."""
    pool = ["1", "2", "3", "9", "10", "11", "12", "20", "100", "-3", "0", "007", "+3", "x", "a1", "B"]
    ids = draw(st.lists(st.sampled_from(pool), min_size=3, max_size=12, unique=True))
    golden = draw(st.lists(st.sampled_from(ids), min_size=2, max_size=len(ids), unique=True))
    answered = draw(st.lists(st.sampled_from(ids), min_size=1, max_size=len(ids), unique=True))
    shared = [q for q in answered if q in golden]
    if not shared:
        answered.append(golden[0])
    qrels, run = [], []
    for q in golden:
        for d in range(draw(st.integers(1, 3))):
            qrels.append((q, f"d{d}", draw(st.integers(0, 2))))
    for system in ("A", "B"):
        for q in answered:
            for d in range(draw(st.integers(1, 4))):
                run.append((system, q, f"d{d}", float(draw(st.integers(0, 2)))))
    qrels = pd.DataFrame(qrels, columns=["query_id", "doc_id", "relevance"])
    run = pd.DataFrame(run, columns=["system", "query_id", "doc_id", "score"])
    part_of = {q: draw(st.integers(0, 2)) for q in ids}
    return run, qrels, part_of


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mixed_id_cases())
def test_merged_examples_of_mixed_ids_are_the_whole_calls(case):
    run, qrels, part_of = case
    shared = [q for q in dict.fromkeys(run.query_id) if q in set(qrels.query_id)]
    ok = {part_of[q] for q in shared}  # a part must share a question with the run (else an input error)
    part_of = {q: (p if p in ok else part_of[shared[0]]) for q, p in part_of.items()}
    parts = [[q for q, p in part_of.items() if p == i] for i in sorted(set(part_of.values()))]
    whole = diagnostics_table(judged_records(run, qrels)[0])
    pd.testing.assert_frame_equal(merged_parts(run, qrels, parts), whole)


def test_integer_question_ids_list_examples_numerically_whole_and_in_parts():
    ids = [str(i) for i in range(1, 21)]
    ints = pd.DataFrame({"query_id": ids, "doc_id": "d", "relevance": 0})
    run = pd.DataFrame({"query_id": ids, "doc_id": "d", "score": 1.0, "system": "s"})
    whole = diagnostics_table(records(run, ints))
    assert whole.loc[whole["check"] == "golden_questions_without_relevant", "examples"].tolist() == ["1, 2, 3, 4, 5"]
    parts = [ids[15:20], ids[:15]]
    got = diagnostics_table(merge_diagnostics(
        (records(run[run.query_id.isin(p)], ints[ints.query_id.isin(p)]) for p in parts), systems=["s"]))
    pd.testing.assert_frame_equal(got, whole)


def judged_part(run, qrels, systems, **kw):
    """A partition judged knowing every system of the run (prepare(systems=))."""
    from evalframe.engine.memory import prepare
    from evalframe.engine import Conventions
    return prepare(run.reset_index(drop=True), qrels.reset_index(drop=True), Conventions(**kw), warn=False, systems=systems)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases(), st.lists(st.integers(0, 3), min_size=6, max_size=6), st.sampled_from(["zero", "drop"]))
def test_partitions_told_every_system_may_be_empty_or_lack_a_system(case, assignment, missing):
    """Any assignment of questions to four partitions: a partition may hold no run row, no
    golden-set row, share no question, or lack a system (C answers a third of the
    questions); told the run's systems, each is judged, and their tables concatenated are
    the whole input's bit for bit, their diagnostics merged the whole's (with
    system_without_judged_documents decided on the whole golden set, as the engines do)."""
    from evalframe.engine.steps import per_question_table
    from evalframe.measures.names import parse_measures
    qrels, run, rel = case
    run = pd.concat([run.assign(system="A"), run.assign(system="B", score=-run.score),
                     run[run.query_id.isin(run.query_id.unique()[::3])].assign(system="C")], ignore_index=True)
    questions = list(dict.fromkeys(list(qrels.query_id) + list(run.query_id)))
    part_of = {q: assignment[i % len(assignment)] for i, q in enumerate(questions)}
    ms = parse_measures(["AP", "nDCG@3", "RR", "P@2", "bpref", "NumRel", "Rprec"])
    systems = list(dict.fromkeys(run.system))
    tables, recs = [], []
    for p in range(4):  # every partition, the empty ones too
        qs = [q for q, i in part_of.items() if i == p]
        J = judged_part(run[run.query_id.isin(qs)], qrels[qrels.query_id.isin(qs)], systems, rel=rel,
                        missing=missing)
        tables.append(per_question_table(J, ms))
        recs.append(J.records)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ef.EvalframeWarning)
        whole = ef.evaluate(run, qrels, ms, missing=missing)
    merged = pd.concat(tables, ignore_index=True).set_index(KEYS).loc[pd.MultiIndex.from_frame(whole[KEYS])]
    assert len(pd.concat(tables)) == len(whole)
    a, b = merged["value"].to_numpy(), whole["value"].to_numpy()
    assert ((a == b) | (np.isnan(a) & np.isnan(b))).all()
    got = diagnostics_table(merged_as_the_engines_do(recs, run, qrels))
    want = diagnostics_table(judge(ef.read_run(run), ef.read_qrels(qrels), missing=missing, rel=rel,
                                   warn=False).records)
    pd.testing.assert_frame_equal(got, want)
