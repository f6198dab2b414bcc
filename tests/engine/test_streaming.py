"""The streaming engine (evalframe.engine.streaming): a Parquet-dataset run larger than the memory
budget is evaluated in parts (grouped batches, or hash buckets on disk), and the
per-question table, the diagnostics table and the warnings are exactly those of the
in-memory call on the same rows (the oracle: evaluate() on the DataFrame)."""
import os
import tempfile
import warnings

import numpy as np
import pandas as pd
import pyarrow.dataset as pads
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evalframe.engine import budget as sizing
import evalframe as ef
from tests.engine_checks import with_warnings
from evalframe.engine import assembly, streaming
from evalframe.evaluation import evaluate_with_diagnostics
from tests.make_snapshot import MEASURES
from tests.strategies import cases

pytestmark = pytest.mark.slow  # `make test-fast` leaves this file out

#: Not partition-exact yet (see tests/engine/test_partition.py: GLOBAL_RUNNING_SUM).
GLOBAL_RUNNING_SUM = ["nDCGrel", "RnDCG", "nDCG(gain='linear',gains=((1, 3.0), (2, 9.0)))"]
PARTITION_EXACT = [m for m in MEASURES if m not in GLOBAL_RUNNING_SUM]


def write_parts(run: pd.DataFrame, directory, n_files: int) -> str:
    os.makedirs(directory, exist_ok=True)
    for i, rows in enumerate(np.array_split(np.arange(len(run)), n_files)):
        run.iloc[rows].to_parquet(os.path.join(directory, f"part-{i:03d}.parquet"), index=False)
    return str(directory)


def budget_for(run, qrels, parts: int) -> int:
    """A memory budget that streams ``run`` in about ``parts`` partitions."""
    return len(qrels) * sizing.QRELS_BYTES_PER_ROW + 2 * sizing.BYTES_PER_ROW * len(run) // parts


def messages(caught) -> list:
    """The warnings caught, but the MemoryBudgetWarning of the tests' tiny budgets."""
    return [(w.category, str(w.message)) for w in caught if w.category is not ef.MemoryBudgetWarning]


def both(run_df, source, qrels, measures, *, streamed_qrels=None, **kw):
    """(in-memory answer, streamed answer), each (per_q, diagnostics, warnings); the streamed
    call reads ``streamed_qrels`` (a dataset of the same rows) when given."""
    out = []
    for arg, golden, extra in ((run_df, qrels, {}), (source, qrels if streamed_qrels is None else streamed_qrels,
                                                     {"memory_budget": kw.pop("memory_budget", 1)})):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            per_q, diag = evaluate_with_diagnostics(arg, golden, measures, **kw, **extra)
        out.append((per_q, diag, messages(caught)))
    return out


def assert_same(a, b):
    pd.testing.assert_frame_equal(a[0], b[0])  # same rows, same order, values equal to the bit
    pd.testing.assert_frame_equal(a[1], b[1])
    assert a[2] == b[2]


class Spy:
    """Counts the partitions judged and the bucket directories made."""

    def __init__(self, monkeypatch):
        self.parts, self.tempdirs = 0, []
        evaluate_part, mkdtemp = assembly.evaluate_part, tempfile.mkdtemp

        def counting(*a, **k):
            self.parts += 1
            return evaluate_part(*a, **k)

        def recording(*a, **k):
            d = mkdtemp(*a, **k)
            self.tempdirs.append(d)
            return d
        monkeypatch.setattr(assembly, "evaluate_part", counting)
        monkeypatch.setattr(tempfile, "mkdtemp", recording)


@pytest.mark.parametrize("name", ["cranfield", "scifact"])
@pytest.mark.parametrize("layout", ["grouped", "shuffled", "by_system"])
def test_bundled_collection_split_into_parquet_files(name, layout, tmp_path, monkeypatch):
    ds = getattr(ef.datasets, f"load_{name}")()
    run = with_warnings(ds)
    if layout == "grouped":
        run = run.sort_values("query_id", kind="stable", ignore_index=True)
    elif layout == "shuffled":
        run = run.sample(frac=1, random_state=3, ignore_index=True)
    # by_system: each system's questions in turn, so every question reappears
    source = write_parts(run, tmp_path / "run", 9)
    spy = Spy(monkeypatch)
    a, b = both(run, source, ds.qrels, PARTITION_EXACT, memory_budget=budget_for(run, ds.qrels, 8))
    assert_same(a, b)
    assert a[2], "the warnings must be exercised"
    assert spy.parts >= 6
    if layout == "grouped":
        assert spy.tempdirs == []
    else:
        assert len(spy.tempdirs) == 1 and not os.path.exists(spy.tempdirs[0])  # removed on success


def test_a_glob_and_a_pyarrow_dataset(tmp_path):
    ds = ef.datasets.load_cranfield()
    run = ds.runs.reset_index(drop=True)
    write_parts(run, tmp_path / "run", 4)
    whole = ef.evaluate(run, ds.qrels, ["AP", "nDCG@10"])
    for source in (str(tmp_path / "run" / "part-*.parquet"), pads.dataset(str(tmp_path / "run"))):
        pd.testing.assert_frame_equal(ef.evaluate(source, ds.qrels, ["AP", "nDCG@10"],
                                                  memory_budget=budget_for(run, ds.qrels, 4)), whole)


def test_diagnostics_streamed(tmp_path):
    ds = ef.datasets.load_cranfield()
    run = with_warnings(ds).sample(frac=1, random_state=5, ignore_index=True)
    source = write_parts(run, tmp_path / "run", 5)
    pd.testing.assert_frame_equal(ef.diagnostics(source, ds.qrels, memory_budget=budget_for(run, ds.qrels, 6)),
                                  ef.diagnostics(run, ds.qrels))
    # with measures: rankings checked against their deepest cutoff, as in memory
    want = ef.diagnostics(run, ds.qrels, ["nDCG@10", "R@1000"])
    assert "shallow_rankings" in set(want["check"])
    pd.testing.assert_frame_equal(ef.diagnostics(source, ds.qrels, ["nDCG@10", "R@1000"],
                                                 memory_budget=budget_for(run, ds.qrels, 6)), want)


def test_a_run_that_fits_stays_in_memory(tmp_path, monkeypatch):
    ds = ef.datasets.load_cranfield()
    source = write_parts(ds.runs.reset_index(drop=True), tmp_path / "run", 3)
    spy = Spy(monkeypatch)
    got = ef.evaluate(source, ds.qrels, ["AP"], memory_budget="4GiB")
    assert spy.parts == 0
    pd.testing.assert_frame_equal(got, ef.evaluate(ds.runs.reset_index(drop=True), ds.qrels, ["AP"]))


def test_a_golden_set_larger_than_the_budget_is_partitioned_too(tmp_path, monkeypatch):
    ds = ef.datasets.load_cranfield()
    qs = list(pd.unique(ds.qrels.query_id))[:40]
    qrels = ds.qrels[ds.qrels.query_id.isin(qs)].reset_index(drop=True)
    run = with_warnings(ds)
    run = run[run.query_id.isin(qs + ["runonly-" + q for q in qs])].sample(frac=1, random_state=2, ignore_index=True)
    source = write_parts(run, tmp_path / "run", 4)
    qrels_dir = write_parts(qrels.sample(frac=1, random_state=1, ignore_index=True), tmp_path / "qrels", 3)
    budget = len(qrels) * sizing.QRELS_BYTES_PER_ROW * 2 - 1  # more than half the budget
    assert len(run) // sizing.MIN_BATCH_ROWS < 30
    spy = Spy(monkeypatch)
    a, b = both(run, source, qrels, ["AP", "RR", "NumRel", "P@5"], memory_budget=budget)
    assert_same(a, b)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        per_q, diag = evaluate_with_diagnostics(source, qrels_dir, ["AP", "RR", "NumRel", "P@5"],
                                                memory_budget=budget)
    assert_same(a, (per_q, diag, messages(caught)))
    assert any(os.path.basename(d).startswith("evalframe-buckets-") for d in spy.tempdirs)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("stop", [KeyboardInterrupt, RuntimeError])
def test_bucket_files_are_removed_on_error_and_ctrl_c(stop, threads, tmp_path, monkeypatch):
    ds = ef.datasets.load_cranfield()
    run = ds.runs.reset_index(drop=True).sample(frac=1, random_state=4, ignore_index=True)
    source = write_parts(run, tmp_path / "run", 4)
    parent = tmp_path / "tmp"
    parent.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(parent))
    calls = []

    def stopping(*a, **k):
        calls.append(1)
        if len(calls) == 2:
            assert any(parent.iterdir()), "the bucket files exist while buckets are evaluated"
            raise stop()
        return evaluate_part(*a, **k)
    evaluate_part = assembly.evaluate_part
    monkeypatch.setattr(assembly, "evaluate_part", stopping)
    monkeypatch.setattr(sizing, "MIN_BATCH_ROWS", 100)  # small parts may go on threads too
    with pytest.raises(stop):
        ef.evaluate(source, ds.qrels, ["AP"], memory_budget=budget_for(run, ds.qrels, 6), threads=threads)
    assert 2 <= len(calls) <= 2 + (threads - 1)  # on threads: the part in flight beside the one stopped
    assert list(parent.iterdir()) == []


def test_progress_bar_on_request_only(tmp_path, capsys):
    ds = ef.datasets.load_cranfield()
    run = ds.runs.reset_index(drop=True)
    source = write_parts(run, tmp_path / "run", 3)
    budget = budget_for(run, ds.qrels, 3)
    ef.evaluate(source, ds.qrels, ["AP"], memory_budget=budget)  # stderr is not a terminal here
    assert capsys.readouterr().err == ""
    ef.evaluate(source, ds.qrels, ["AP"], memory_budget=budget, progress=True)
    err = capsys.readouterr().err
    assert "rows" in err and "\r" in err
    with pytest.raises(ValueError, match="progress must be"):
        ef.evaluate(source, ds.qrels, ["AP"], progress="yes")


def test_memory_budget_values():
    assert sizing.memory_budget("2GiB") == 2 * 2 ** 30
    assert sizing.memory_budget("1.5 GB") == 1_500_000_000
    assert sizing.memory_budget(123) == 123
    assert sizing.memory_budget(None) >= 256 * 2 ** 20
    for bad in ("lots", "2 parsecs", 0, -5, True, 1.5, "0MB"):
        with pytest.raises(ValueError, match="memory_budget must be"):
            sizing.memory_budget(bad)
    with pytest.raises(ValueError, match="memory_budget must be"):
        ef.evaluate(ef.datasets.load_sso().runs, ef.datasets.load_sso().qrels, memory_budget="x")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(cases(), st.sampled_from(["grouped", "shuffled"]), st.sampled_from(["zero", "drop"]),
       st.sampled_from(["doc_id_desc", "doc_id_asc"]), st.sampled_from(["error", "max", "first"]),
       st.integers(0, 2 ** 16))
def test_random_cases(tmp_path_factory, case, layout, missing, ties, duplicates, seed):
    qrels, run, rel = case
    run = pd.concat([run.assign(system="A"), run.assign(system="B", score=-run.score),
                     run.iloc[: max(1, len(run) // 3)].assign(system="C")], ignore_index=True)
    if duplicates != "error":  # a document listed twice, with another score
        run = pd.concat([run, run.iloc[:2].assign(score=lambda d: d.score + 0.5)], ignore_index=True)
    rng = np.random.default_rng(seed)
    run = run.iloc[rng.permutation(len(run))] if layout == "shuffled" else run.sort_values("query_id", kind="stable")
    run = run.reset_index(drop=True)
    source = write_parts(run, tmp_path_factory.mktemp("run"), 3)
    kw = dict(rel=rel, missing=missing, ties=ties, duplicates=duplicates)
    a, b = both(run, source, qrels, ["AP", "nDCG@3", "RR", "P@2", "R", "bpref", "NumRel", "Rprec",
                                     "AP(judged_only=True)"], **kw)
    if duplicates == "max":
        # The in-memory engine orders systems by their first row kept; the streaming engine
        # by their first row (documented): they differ when that row is a duplicate dropped.
        a = (in_system_order(a[0], run), in_system_order(a[1], run, "check"), sorted(a[2], key=str))
        b = (b[0], b[1], sorted(b[2], key=str))
    assert_same(a, b)


def in_system_order(table, run, first="query_id"):
    """Rows ordered by (system in order of first row, then as they were), stable."""
    pos = {s: i for i, s in enumerate(pd.unique(run.system))}
    if first == "check":  # the diagnostics: by check, then system
        from evalframe._diagnostic_records import Check
        checks = {c: i for i, c in enumerate(Check)}
        key = [table.system.map(lambda s: pos.get(s, len(pos))).to_numpy(),
               table.check.map(lambda c: checks[Check(c)]).to_numpy()]
    else:
        key = [table.system.map(pos).to_numpy()]
    return table.take(np.lexsort(key)).reset_index(drop=True)


def test_a_dict_of_datasets_one_system_each(tmp_path):
    ds = ef.datasets.load_cranfield()
    runs = with_warnings(ds)
    sources, frames = {}, {}
    for s, part in runs.groupby("system", sort=False):
        frames[s] = part.drop(columns="system").reset_index(drop=True)
        sources[s] = write_parts(frames[s], tmp_path / s, 2)
    a, b = both(frames, sources, ds.qrels, ["AP", "nDCG@10", "NumRel"],
                memory_budget=budget_for(runs, ds.qrels, 6))
    assert_same(a, b)


@pytest.mark.parametrize("layout", ["grouped", "shuffled"])
def test_conflicts_resolved_once_up_front(layout, tmp_path):
    ds = ef.datasets.load_cranfield()
    run = with_warnings(ds)
    run = run.sort_values("query_id", kind="stable", ignore_index=True) if layout == "grouped" else \
        run.sample(frac=1, random_state=7, ignore_index=True)
    qrels = ds.qrels.reset_index(drop=True)
    twice = qrels.iloc[::25].assign(relevance=lambda d: d.relevance + 1)  # conflicting labels in many questions
    qrels = pd.concat([qrels, twice], ignore_index=True)
    source = write_parts(run, tmp_path / "run", 6)
    a, b = both(run, source, qrels, ["AP", "nDCG@10", "NumRel"], conflicts="max",
                memory_budget=budget_for(run, qrels, 6))
    assert_same(a, b)
    assert "golden_set_conflicting_labels" in set(a[1]["check"])


@pytest.mark.parametrize("ids", ["integers", "beyond_int64", "mixed"])
@pytest.mark.parametrize("missing", ["zero", "drop"])
def test_question_order_of_the_parts_table_is_the_in_memory_one(ids, missing, tmp_path):
    """The parts' table is put together from codes, ordered by the golden set's natural
    order (numeric for integer ids: 2 before 10), decided on every golden-set question,
    also one no run row answers (missing='drop': it has no row in the table)."""
    n = 40
    names = {"integers": [str(i) for i in range(n)],
             "beyond_int64": [str(i) for i in range(n - 1)] + ["99999999999999999999"],
             "mixed": [str(i) for i in range(n - 1)] + ["x"]}[ids]
    rng = np.random.default_rng(3)
    run = pd.DataFrame({"query_id": np.repeat(names[:-1], 6), "doc_id": [f"d{i % 9}" for i in range((n - 1) * 6)],
                        "score": rng.integers(0, 4, (n - 1) * 6).astype(float)})
    run = pd.concat([run.assign(system="A"), run.assign(system="B", score=-run.score)], ignore_index=True)
    qrels = pd.DataFrame({"query_id": np.repeat(names, 2), "doc_id": [f"d{i % 5}" for i in range(2 * n)],
                          "relevance": rng.integers(0, 3, 2 * n)})
    run = run.sort_values("query_id", kind="stable", ignore_index=True)  # byte-wise: 10 before 2
    source = write_parts(run, tmp_path / "run", 4)
    a, b = both(run, source, qrels, ["AP", "P@2"], missing=missing, memory_budget=budget_for(run, qrels, 5))
    assert_same(a, b)  # the diagnostics' examples too: byte-wise unless every golden-set id is an integer
    bytewise = a[1]["examples"].str.startswith("0, 1, 10, 11, 12")  # not 0, 1, 2, 3, 4
    assert bytewise.any() == (ids != "integers")


@pytest.mark.parametrize("layout", ["grouped", "shuffled"])
def test_dropped_questions_of_a_part_without_some_system_keep_the_whole_order(layout, tmp_path):
    """A part that system C does not answer gets a placeholder question for C (dropped, its
    record removed): an integer id, so A's dropped integer questions there are still listed
    numerically (20000 before 100000), as in the whole call."""
    n = 2000  # parts hold at least sizing.MIN_BATCH_ROWS rows
    names = [str(i) for i in range(1, n + 1)]
    rng = np.random.default_rng(5)
    run = pd.DataFrame({"query_id": np.repeat(names, 4), "doc_id": [f"d{i % 6}" for i in range(4 * n)],
                        "score": rng.integers(0, 5, 4 * n).astype(float)})
    run = pd.concat([run.assign(system="A"), run.iloc[:12].assign(system="C"),
                     pd.DataFrame({"query_id": ["100000", "20000", "3000000"], "doc_id": "d0", "score": 1.0,
                                   "system": "A"})], ignore_index=True)
    qrels = pd.DataFrame({"query_id": np.repeat(names, 2), "doc_id": [f"d{i % 4}" for i in range(2 * n)],
                          "relevance": rng.integers(0, 3, 2 * n)})
    run = run.sort_values("query_id", kind="stable", ignore_index=True) if layout == "grouped" else \
        run.sample(frac=1, random_state=2, ignore_index=True)
    source = write_parts(run, tmp_path / "run", 4)
    a, b = both(run, source, qrels, ["AP", "P@2"], memory_budget=budget_for(run, qrels, 5))
    assert_same(a, b)
    dropped = a[1].loc[a[1]["check"] == "run_questions_not_in_golden_set", "examples"].tolist()
    assert dropped == ["20000, 100000, 3000000"]


@pytest.mark.parametrize("layout", ["grouped", "shuffled"])
def test_system_without_judged_documents_as_in_memory(layout, tmp_path):
    """A system none of whose documents is judged is named; one whose documents are judged
    only for questions another part holds is not (as in memory, which sees every label)."""
    n = 2000  # parts hold at least sizing.MIN_BATCH_ROWS rows
    names = [f"q{i:05d}" for i in range(n)]
    qrels = pd.DataFrame({"query_id": names, "doc_id": [f"d{i}" for i in range(n)], "relevance": 1})
    run = pd.concat([pd.DataFrame({"system": "a", "query_id": names, "doc_id": [f"d{i}" for i in range(n)]}),
                     pd.DataFrame({"system": "b", "query_id": names, "doc_id": [f"x{i}" for i in range(n)]}),
                     pd.DataFrame({"system": "c", "query_id": names,  # judged, for a question far away
                                   "doc_id": [f"d{(i + n // 2) % n}" for i in range(n)]})],
                    ignore_index=True).assign(score=1.0)
    run = run.sort_values("query_id", kind="stable", ignore_index=True) if layout == "grouped" else \
        run.sample(frac=1, random_state=2, ignore_index=True)
    source = write_parts(run, tmp_path / "run", 4)
    a, b = both(run, source, qrels, ["P@1"], memory_budget=budget_for(run, qrels, 5))
    flagged = a[1][a[1]["check"] == "system_without_judged_documents"]
    assert flagged["system"].tolist() == ["b"] and flagged["count"].tolist() == [n]
    assert_same(a, b)


@pytest.mark.parametrize("layout", ["grouped", "shuffled"])
def test_columns_renamed_at_read(layout, tmp_path, monkeypatch):
    """columns= maps the dataset's own names (a column already named like a target is left
    out, as apply_columns does) and the golden set's, as in memory."""
    ds = ef.datasets.load_cranfield()
    run = with_warnings(ds)
    run = run.sort_values("query_id", kind="stable", ignore_index=True) if layout == "grouped" else \
        run.sample(frac=1, random_state=4, ignore_index=True)
    run = run.rename(columns={"query_id": "qid", "doc_id": "docno", "score": "sim", "system": "tag"}).assign(
        score=1.0)  # displaced by sim -> score
    qrels = ds.qrels.rename(columns={"query_id": "qid", "doc_id": "docno"})
    columns = {"qid": "query_id", "docno": "doc_id", "sim": "score", "tag": "system"}
    source = write_parts(run, tmp_path / "run", 6)
    spy = Spy(monkeypatch)
    a, b = both(run, source, qrels, ["AP", "nDCG@10", "NumRel"], columns=columns,
                memory_budget=budget_for(run, qrels, 6))
    assert_same(a, b)
    assert a[2] and spy.parts >= 4


@pytest.mark.parametrize("layout", ["grouped", "shuffled"])
def test_rollup_per_partition(layout, tmp_path, monkeypatch):
    """A chunk -> page table rolls every part up (a question's rows are all in one part):
    the table (with its unit column), the roll-up diagnostics and warnings are the in-memory ones."""
    ds = ef.datasets.load_cranfield()
    run = with_warnings(ds)
    run = run[~run.query_id.str.startswith("runonly-")]  # integer ids only: mixed ids' examples differ by part
    run = run.sort_values("query_id", kind="stable", ignore_index=True) if layout == "grouped" else \
        run.sample(frac=1, random_state=6, ignore_index=True)
    docs = pd.unique(pd.concat([run.doc_id, ds.qrels.doc_id]))
    pages = pd.DataFrame({"chunk": docs, "page": [f"p{int(d) // 3}" for d in docs]})
    source = write_parts(run, tmp_path / "run", 6)
    spy = Spy(monkeypatch)
    a, b = both(run, source, ds.qrels, ["AP", "nDCG@10", "NumRel"], rollup=pages,
                memory_budget=budget_for(run, ds.qrels, 6))
    assert_same(a, b)
    assert "unit" in a[0].columns and "rollup_run_rows_collapsed" in set(a[1]["check"])
    assert spy.parts >= 4


@pytest.mark.parametrize("layout", ["grouped", "shuffled"])
def test_rollup_by_a_run_column_when_streamed(layout, tmp_path, monkeypatch):
    """rollup='page' (a run column naming each chunk's page): the map is the whole run's
    (chunk, page) pairs, so a part's golden-set chunks that no run row of that part holds are
    rolled up too; table, diagnostics and warnings as the in-memory call."""
    ds = ef.datasets.load_cranfield()
    run = with_warnings(ds)
    run = run[~run.query_id.str.startswith("runonly-")]  # integer ids only: mixed ids' examples differ by part
    run = run.sort_values("query_id", kind="stable", ignore_index=True) if layout == "grouped" else \
        run.sample(frac=1, random_state=6, ignore_index=True)
    run = run.assign(page=lambda d: "p" + (d.doc_id.astype(int) // 3).astype(str))
    source = write_parts(run, tmp_path / "run", 6)
    spy = Spy(monkeypatch)
    a, b = both(run, source, ds.qrels, ["AP", "nDCG@10", "NumRel"], rollup="page",
                memory_budget=budget_for(run, ds.qrels, 6))
    assert_same(a, b)
    assert "unit" in a[0].columns and "rollup_run_rows_collapsed" in set(a[1]["check"])
    assert "rollup_golden_rows_merged" in set(a[1]["check"])
    assert spy.parts >= 4
    twice = run.assign(page=lambda d: d.page.where(d.index != 7, "other"))  # one chunk, two pages
    source = write_parts(twice, tmp_path / "twice", 3)
    same_error(lambda: ef.evaluate(twice, ds.qrels, ["AP"], rollup="page"),
               lambda: ef.evaluate(source, ds.qrels, ["AP"], rollup="page", memory_budget=budget_for(run, ds.qrels, 4)))


def test_rollup_by_a_run_column_with_columns_is_refused_when_streamed(tmp_path):
    ds = ef.datasets.load_cranfield()
    run = ds.runs.reset_index(drop=True).assign(page=lambda d: "p" + d.doc_id).rename(columns={"doc_id": "docno"})
    source = write_parts(run, tmp_path / "run", 3)
    with pytest.raises(ValueError, match="rollup must be a chunk -> page table"):
        ef.evaluate(source, ds.qrels, ["AP"], rollup="page", columns={"docno": "doc_id"},
                    memory_budget=budget_for(run, ds.qrels, 4))


def test_a_run_shuffled_within_its_first_batch_is_partitioned_without_evaluating_it(tmp_path, monkeypatch):
    """A batch whose question ids are not grouped sends the run to the partition pass at
    once: no partition is judged (and thrown away) before the buckets are written."""
    ds = ef.datasets.load_cranfield()
    run = with_warnings(ds).sample(frac=1, random_state=11, ignore_index=True)
    source = write_parts(run, tmp_path / "run", 4)
    spy = Spy(monkeypatch)
    judged_before = []
    buckets = streaming._stream_buckets

    def recording(*a, **k):
        judged_before.append(spy.parts)
        return buckets(*a, **k)
    monkeypatch.setattr(streaming, "_stream_buckets", recording)
    a, b = both(run, source, ds.qrels, ["AP", "nDCG@10"], memory_budget=budget_for(run, ds.qrels, 6))
    assert_same(a, b)
    assert judged_before == [0] and spy.parts >= 4


def conflicting(ds, qs=None):
    qrels = ds.qrels.reset_index(drop=True)
    if qs is not None:
        qrels = qrels[qrels.query_id.isin(qs)].reset_index(drop=True)
    twice = qrels.iloc[::9].assign(relevance=lambda d: d.relevance + 1)  # conflicting labels in many questions
    return pd.concat([qrels, twice], ignore_index=True).sample(frac=1, random_state=8, ignore_index=True)


def same_error(in_memory, streamed):
    with pytest.raises(ef.EvalframeInputError) as a:
        in_memory()
    with pytest.raises(ef.EvalframeInputError) as b:
        streamed()
    assert str(b.value) == str(a.value)


@pytest.mark.parametrize("conflicts", ["error", "max", "majority"])
@pytest.mark.parametrize("layout", ["grouped", "shuffled"])
def test_conflicts_of_a_parquet_golden_set(conflicts, layout, tmp_path):
    """A golden set given as a (small) Parquet file: conflicting labels raise the in-memory
    call's error (conflicts='error') or are resolved once, as in memory."""
    ds = ef.datasets.load_cranfield()
    run = with_warnings(ds)
    run = run.sort_values("query_id", kind="stable", ignore_index=True) if layout == "grouped" else \
        run.sample(frac=1, random_state=7, ignore_index=True)
    qrels = conflicting(ds)
    qpath = tmp_path / "qrels.parquet"
    qrels.to_parquet(qpath, index=False)
    source = write_parts(run, tmp_path / "run", 6)
    budget = budget_for(run, qrels, 6)
    measures = ["AP", "nDCG@10", "NumRel"]
    if conflicts == "error":
        same_error(lambda: ef.evaluate(run, str(qpath), measures),
                   lambda: ef.evaluate(source, str(qpath), measures, memory_budget=budget))
        return
    a, b = both(run, source, str(qpath), measures, conflicts=conflicts, memory_budget=budget)
    assert_same(a, b)
    assert "golden_set_conflicting_labels" in set(a[1]["check"])


@pytest.mark.parametrize("conflicts", ["error", "max", "min", "majority"])
@pytest.mark.parametrize("layout", ["grouped", "shuffled"])
def test_conflicts_of_a_golden_set_partitioned_by_the_hash(conflicts, layout, tmp_path):
    """A golden set larger than half the budget is hashed into buckets with the run: its
    conflicting labels (spread over its files) are an input error, as in memory (the message
    is the partition's, as for any input error found per partition), or are resolved in the
    bucket holding all their rows: the table, the diagnostics (count, and the first pairs of
    the whole golden set as examples) and the warnings of the in-memory call."""
    ds = ef.datasets.load_cranfield()
    qs = list(pd.unique(ds.qrels.query_id))[:40]
    qrels = conflicting(ds, qs)
    votes = qrels.iloc[::4].assign(relevance=lambda d: d.relevance + 2)  # more votes: majority is not max
    qrels = pd.concat([qrels, votes, votes.iloc[::2]], ignore_index=True)
    run = with_warnings(ds)
    run = run[run.query_id.isin(qs + ["runonly-" + q for q in qs])]
    run = run.sort_values("query_id", kind="stable", ignore_index=True) if layout == "grouped" else \
        run.sample(frac=1, random_state=2, ignore_index=True)
    source = write_parts(run, tmp_path / "run", 4)
    qrels_dir = write_parts(qrels, tmp_path / "qrels", 3)
    budget = len(qrels) * sizing.QRELS_BYTES_PER_ROW * 2 - 1  # more than half the budget
    if conflicts == "error":
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(ef.EvalframeInputError, match="pairs have conflicting relevance labels"):
                ef.evaluate(run, qrels, ["AP"])
            with pytest.raises(ef.EvalframeInputError, match="pairs have conflicting relevance labels"):
                ef.evaluate(source, qrels_dir, ["AP"], memory_budget=budget)
        return
    a, b = both(run, source, qrels, ["AP", "nDCG@10", "NumRel"], streamed_qrels=qrels_dir, conflicts=conflicts,
                memory_budget=budget)
    assert_same(a, b)
    row = a[1][a[1]["check"] == "golden_set_conflicting_labels"]
    assert row["count"].item() > 10 and len(row["examples"].item().split(", ")) >= 5


@pytest.mark.parametrize("layout", ["grouped", "shuffled"])
def test_a_rank_only_run_streams_as_in_memory(layout, tmp_path):
    """No score column: ordered by rank (repeated ranks are ties), as in memory; a system
    missing from some partitions included."""
    ds = ef.datasets.load_cranfield()
    run = with_warnings(ds)
    run["rank"] = run.groupby(["system", "query_id"])["score"].rank(method="min", ascending=False).astype(int)
    run = run.drop(columns="score")
    run = run.sort_values("query_id", kind="stable", ignore_index=True) if layout == "grouped" else \
        run.sample(frac=1, random_state=3, ignore_index=True)
    source = write_parts(run, tmp_path / "run", 5)
    a, b = both(run, source, ds.qrels, ["AP", "nDCG@10", "RR"], memory_budget=budget_for(run, ds.qrels, 5))
    assert_same(a, b)


def _bucketed_case(tmp_path):
    """A shuffled run that streams through the bucket pass at a small budget."""
    rng = np.random.default_rng(3)
    n = 6000
    run = pd.DataFrame({"query_id": rng.integers(0, 1500, n).astype(str), "doc_id": rng.integers(0, 10**6, n).astype(str),
                        "score": rng.random(n)}).drop_duplicates(["query_id", "doc_id"], ignore_index=True)
    qrels = pd.DataFrame({"query_id": np.arange(1500).astype(str), "doc_id": "1", "relevance": 1})
    return run, write_parts(run, tmp_path / "run", 3), qrels


def test_a_full_temp_directory_is_one_error_naming_it(tmp_path, monkeypatch, capfd):
    """A disk that fills up during the bucket pass (every write and close fails as on a
    full disk): one OSError naming the directory and TMPDIR, every writer closed (no
    finaliser traceback), the bucket directory removed."""
    import errno
    import gc
    import signal

    import pyarrow as pa
    run, source, qrels = _bucketed_case(tmp_path)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    calls = {"n": 0}

    def full(self, *a, **k):
        calls["n"] += 1
        if calls["n"] > 3:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_write(self, *a, **k)

    def full_close(self):
        raise OSError(errno.ENOSPC, "No space left on device")

    real_write = pa.ipc.RecordBatchStreamWriter.write_table
    monkeypatch.setattr(pa.ipc.RecordBatchStreamWriter, "write_table", full)
    monkeypatch.setattr(pa.ipc.RecordBatchStreamWriter, "close", full_close)
    monkeypatch.setenv("TMPDIR", str(scratch))
    monkeypatch.setattr(tempfile, "tempdir", None)
    with pytest.raises(OSError, match=f"no space left in the temporary directory {scratch}.*TMPDIR"):
        ef.evaluate(source, qrels, "P@5", memory_budget=budget_for(run, qrels, 8))
    gc.collect()
    assert "Exception ignored" not in capfd.readouterr().err
    assert list(scratch.iterdir()) == []
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL  # the default handler back


def test_sigterm_removes_the_bucket_directory(tmp_path):
    """SIGTERM during the bucket pass (sent by the process itself after the first bucket
    files are written): the bucket directory is removed and the process ends by the signal."""
    import signal
    import subprocess
    import sys
    run, source, qrels = _bucketed_case(tmp_path)
    qrels.to_csv(tmp_path / "qrels.csv", index=False)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    script = f"""
import os, signal, pandas as pd, evalframe as ef
from evalframe.engine import streaming
flush = streaming._Spill.flush
def then_term(*a, **k):
    flush(*a, **k)
    assert os.listdir({str(scratch)!r}), "a bucket directory exists"
    os.kill(os.getpid(), signal.SIGTERM)
streaming._Spill.flush = then_term
ef.evaluate({source!r}, pd.read_csv({str(tmp_path / 'qrels.csv')!r}, dtype=str).astype({{"relevance": int}}),
            "P@5", memory_budget={budget_for(run, qrels, 8)})
"""
    done = subprocess.run([sys.executable, "-c", script], env={**os.environ, "TMPDIR": str(scratch)},
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == -signal.SIGTERM, done.stderr[-2000:]
    assert list(scratch.iterdir()) == []
