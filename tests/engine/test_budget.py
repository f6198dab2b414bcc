"""The streaming engine's memory bound: partitions are sized so that the golden set, the
per-question table being assembled, the reader and one partition fit the budget, and a
small-budget run's peak RSS (VmHWM, measured in a child process after its imports) stays
within the budget."""
import json
import os
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from evalframe.engine import budget as sizing
from evalframe.engine import assembly, streaming


def test_batch_sizing_leaves_room_for_the_golden_set_the_output_and_the_reader():
    for budget, golden, out in [(2 * 2 ** 30, 3_000_000, 7_000_000), (600 * 2 ** 20, 600_000, 1_400_000),
                                (128 * 2 ** 20, 9_000, 21_000), (2 ** 30, 0, 0)]:
        rows = sizing.plan_batch_rows(budget, golden_rows=golden, out_rows=out)
        held = (golden * sizing.QRELS_BYTES_PER_ROW + out * sizing.OUT_BYTES_PER_ROW
                + min(sizing.READ_BYTES, budget // 4) + sizing.FIRST_USE_BYTES)
        assert held + rows * sizing.BYTES_PER_ROW <= budget < held + (rows + 1) * sizing.BYTES_PER_ROW
    # a budget the fixed parts fill: a quarter of the budget's worth, and never fewer than the smallest partition
    assert sizing.plan_batch_rows(2 ** 20, golden_rows=10 ** 6, out_rows=10 ** 7) == sizing.MIN_BATCH_ROWS
    assert sizing.plan_batch_rows(128 * 2 ** 20, golden_rows=10 ** 6, out_rows=10 ** 7) == (
        128 * 2 ** 20 // 4 // sizing.BYTES_PER_ROW)


def synthetic(directory, n_q: int, docs: int, files: int) -> tuple[str, pd.DataFrame]:
    rng = np.random.default_rng(0)
    q = np.repeat(np.arange(n_q), docs)
    run = pd.DataFrame({"query_id": [f"q{i:06d}" for i in q],
                        "doc_id": [f"d{i:07d}" for i in (q * 7919 + np.tile(np.arange(docs), n_q) * 104729) % 10 ** 7],
                        "score": np.round(rng.random(len(q)) * 20, 1)})
    qrels = run.iloc[::37][["query_id", "doc_id"]].assign(relevance=rng.integers(0, 4, len(run[::37])))
    os.makedirs(directory, exist_ok=True)
    for i, rows in enumerate(np.array_split(np.arange(len(run)), files)):  # grouped: whole questions in order
        run.iloc[rows].to_parquet(os.path.join(directory, f"part-{i:03d}.parquet"), index=False, row_group_size=20_000)
    return str(directory), qrels.reset_index(drop=True)


@pytest.mark.filterwarnings("ignore::evalframe.errors.MemoryBudgetWarning")  # 8 MiB: the smallest partitions
def test_partitions_never_exceed_the_planned_rows(tmp_path, monkeypatch):
    source, qrels = synthetic(tmp_path / "run", 600, 50, 3)
    budget = 8 * 2 ** 20
    planned = sizing.plan_batch_rows(budget, golden_rows=len(qrels), out_rows=qrels.query_id.nunique() * 2)
    sizes = []
    prepare = assembly.evaluate_part

    def counting(run, *a, **k):
        sizes.append(len(run))
        return prepare(run, *a, **k)
    monkeypatch.setattr(assembly, "evaluate_part", counting)
    import evalframe as ef
    with pytest.warns(ef.errors.NoRelevantWarning):
        ef.evaluate(source, qrels, ["AP", "RR"], memory_budget=budget)
    assert len(sizes) >= 3 and max(sizes) <= planned


CHILD = r"""
import json, re, sys, warnings
import pandas as pd
import evalframe as ef
def status(key):
    with open("/proc/self/status") as f:
        return int(re.search(key + r":\s+(\d+)", f.read()).group(1)) * 1024
qrels = pd.read_parquet(sys.argv[2])
base = status("VmRSS")
warnings.simplefilter("ignore")
ef.evaluate(sys.argv[1], qrels, ["R@5", "R@10", "R@100", "P@5", "RR", "nDCG@10", "AP"],
            memory_budget=int(sys.argv[3]))
print(json.dumps({"base": base, "peak": status("VmHWM")}))
"""


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="VmHWM is Linux's")
def test_a_small_budget_run_peaks_within_the_budget(tmp_path):
    source, qrels = synthetic(tmp_path / "run", 4000, 100, 4)  # 400,000 rows
    qrels.to_parquet(tmp_path / "qrels.parquet", index=False)
    budget = 96 * 2 ** 20
    assert 400_000 * sizing.BYTES_PER_ROW > budget  # streamed, not read whole
    out = subprocess.run([sys.executable, "-c", CHILD, source, str(tmp_path / "qrels.parquet"), str(budget)],
                         capture_output=True, text=True, check=True)
    r = json.loads(out.stdout.strip().splitlines()[-1])
    assert r["peak"] - r["base"] <= budget, (r["peak"] - r["base"]) / 2 ** 20


def test_reading_a_dataset_file_by_file_holds_no_more_after_many_files(tmp_path):
    """Each file is closed once read: an open Parquet file read to its end keeps its last
    row group's buffers, so memory held grew with every file of the dataset (about 40 MiB per
    file on the benchmark's 1M-row groups, 0.16 GiB over a 20M-row slice of four files)."""
    import pyarrow as pa
    import pyarrow.dataset as pads
    import pyarrow.parquet as pq
    n = 50_000
    for i in range(6):
        q = np.repeat(np.arange(i * 500, (i + 1) * 500), 100)
        pq.write_table(pa.table({"query_id": pa.array([f"q{x:07d}" for x in q]),
                                 "doc_id": pa.array([f"d{x:08d}" for x in range(n)]), "score": np.zeros(n)}),
                       tmp_path / f"part-{i}.parquet", row_group_size=25_000)
    dataset = pads.dataset(str(tmp_path), format="parquet")
    held = []
    for j, t in enumerate(streaming._file_batches(dataset, ["query_id", "doc_id", "score"], 5_000)):
        del t
        if j % 10 == 9:  # the end of each file
            held.append(pa.total_allocated_bytes())
    assert len(held) == 6
    assert held[-1] - held[0] < 2 ** 20, [h // 2 ** 10 for h in held]


def shuffled(directory, n_q: int, docs: int, files: int, big: int = 0) -> tuple[str, pd.DataFrame]:
    """A run scattered over ``files`` Parquet files (rows of a question in every file, in
    random order); ``big`` rows of a question "huge" among them."""
    rng = np.random.default_rng(1)
    q = np.repeat(np.arange(n_q), docs)
    run = pd.DataFrame({"query_id": [f"q{i:06d}" for i in q], "doc_id": [f"d{i:07d}" for i in range(len(q))],
                        "score": np.round(rng.random(len(q)) * 20, 1)})
    if big:
        run = pd.concat([run, pd.DataFrame({"query_id": "huge", "doc_id": [f"h{i}" for i in range(big)],
                                            "score": rng.random(big)})], ignore_index=True)
    run = run.iloc[rng.permutation(len(run))]
    qrels = run.drop_duplicates("query_id")[["query_id", "doc_id"]].assign(relevance=1)
    os.makedirs(directory, exist_ok=True)
    for i, rows in enumerate(np.array_split(np.arange(len(run)), files)):
        run.iloc[rows].to_parquet(os.path.join(directory, f"part-{i:03d}.parquet"), index=False, row_group_size=5_000)
    return str(directory), qrels.reset_index(drop=True)


def test_bucket_files_hold_large_batches_not_a_piece_per_read(tmp_path, monkeypatch):
    """The bucket pass buffers each read batch's pieces and writes them together: once each
    batch's pieces were written at once (row groups of ~60 rows at 128 MiB, 0.8 GiB peak
    on 15M rows from the writers' metadata and buckets slow to read back)."""
    import pyarrow as pa
    import evalframe as ef
    source, qrels = shuffled(tmp_path / "run", 4000, 100, 4)  # 400,000 rows
    budget = 96 * 2 ** 20
    assert 400_000 * sizing.WHOLE_BYTES_PER_ROW > budget  # streamed, not read whole
    batches, reads = [], []
    read_bucket = streaming._read_bucket

    def counting(path):
        if os.path.exists(path) and os.path.basename(path).startswith("run-"):
            with pa.ipc.open_stream(path) as f:
                batches.append(sum(1 for _ in f))
        return read_bucket(path)
    monkeypatch.setattr(streaming, "_read_bucket", counting)
    batch_rows = sizing.plan_batch_rows(budget, golden_rows=len(qrels), out_rows=4000 * 2)
    reads = -(-400_000 // (batch_rows // 4))  # batches the reader hands over
    got = ef.evaluate(source, qrels, ["AP", "RR"], memory_budget=budget)
    assert len(batches) >= 2 and max(batches) < reads / 4, (batches, reads)
    want = ef.evaluate(pd.read_parquet(source), qrels, ["AP", "RR"])
    pd.testing.assert_frame_equal(got, want)


@pytest.mark.parametrize("layout", ["grouped", "shuffled"])
def test_a_question_larger_than_a_partition_is_named_with_its_size(tmp_path, layout):
    import evalframe as ef
    source, qrels = shuffled(tmp_path / "run", 300, 20, 2, big=4000)
    if layout == "grouped":
        run = pd.read_parquet(source).sort_values("query_id", kind="stable")
        source = str(tmp_path / "grouped.parquet")
        run.to_parquet(source, index=False, row_group_size=500)
    budget = 2 * 2 ** 20  # below what is held besides a partition: partitions of a quarter of the budget
    assert 10_000 * sizing.WHOLE_BYTES_PER_ROW > budget  # streamed, not read whole
    rows = sizing.plan_batch_rows(budget, golden_rows=len(qrels), out_rows=len(qrels))
    assert rows == budget // 4 // sizing.BYTES_PER_ROW < 4000
    with pytest.warns(ef.MemoryBudgetWarning) as caught:
        got = ef.evaluate(source, qrels, ["AP"], memory_budget=budget)
    messages = [str(w.message) for w in caught if w.category is ef.MemoryBudgetWarning]
    assert any("budget of 2 MiB cannot be kept" in m and f"partitions of {rows:,} rows" in m for m in messages), messages
    assert [m for m in messages if "'huge' has 4,000 run rows" in m and f"({rows:,})" in m], messages
    pd.testing.assert_frame_equal(got, ef.evaluate(pd.read_parquet(source), qrels, ["AP"]))
