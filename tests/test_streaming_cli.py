"""--memory-budget on the commands: a run larger than the budget (TREC text read in blocks,
a Parquet directory, several runs) gives the same output as the in-memory command."""
import warnings

import pandas as pd
import pytest

import evalframe as ef
from evalframe.cli import common, main


@pytest.fixture
def cranfield_files(tmp_path):
    ds = ef.datasets.load_cranfield()
    runs = ds.runs.reset_index(drop=True)
    qrels = tmp_path / "qrels.tsv"
    ds.qrels.to_csv(qrels, sep="\t", index=False)
    texts = []
    for s, part in runs.groupby("system", sort=False):
        path = tmp_path / f"{s}.trec"
        ranked = part.assign(rank=part.groupby("query_id").cumcount() + 1)
        path.write_text("".join(f"{q} Q0 {d} {r} {x!r} {s}\n" for q, d, r, x in
                                ranked[["query_id", "doc_id", "rank", "score"]].itertuples(index=False)))
        texts.append(str(path))
    pdir = tmp_path / "runs_dir"
    pdir.mkdir()
    for i in range(3):
        runs.iloc[i::3].to_parquet(pdir / f"part-{i}.parquet", index=False)
    return str(qrels), texts, str(pdir)


def command(argv, capsys):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        status = main(argv)
    out = capsys.readouterr()
    return status, out.out, out.err


def test_trec_text_runs_in_blocks(cranfield_files, capsys, monkeypatch):
    qrels, texts, _ = cranfield_files
    argv = ["evaluate", qrels, *texts, "-q", "--format", "csv", "-m", "AP", "nDCG@10", "RR"]
    whole = command(argv, capsys)
    monkeypatch.setattr(common, "TEXT_BLOCK_BYTES", 50_000)  # many blocks per file
    streamed = command(argv + ["--memory-budget", "1MB"], capsys)
    assert whole[0] == streamed[0] == 0
    assert whole[1] == streamed[1]
    assert whole[2] == streamed[2]  # the same warnings


def test_a_parquet_directory_and_the_report(cranfield_files, capsys):
    qrels, _, pdir = cranfield_files
    base = ["evaluate", qrels, pdir, "-m", "AP", "P@5"]
    small = command(base + ["--memory-budget", "1MB"], capsys)
    big = command(base + ["--memory-budget", "8GiB"], capsys)
    assert small[0] == big[0] == 0 and small[1] == big[1]
    rep = ["report", qrels, pdir, "-m", "AP", "--n-resamples", "100", "--format", "json"]
    assert command(rep + ["--memory-budget", "1MB"], capsys)[1] == command(rep, capsys)[1]


def test_a_bad_memory_budget_is_one_line(cranfield_files, capsys):
    qrels, texts, _ = cranfield_files
    status, out, err = command(["evaluate", qrels, texts[0], "--memory-budget", "lots"], capsys)
    assert status == 2 and "--memory-budget must be a size" in err and "Traceback" not in err


def test_a_run_is_read_whole_by_the_whole_table_figure(cranfield_files, monkeypatch):
    """The commands read the runs whole when their rows at the in-memory engine's whole-table
    figure (streaming.WHOLE_BYTES_PER_ROW) fit the budget, whatever a partition's own figure."""
    from evalframe import streaming
    _, texts, _ = cranfield_files
    rows = sum(streaming.text_run_rows(p) for p in texts)
    monkeypatch.setattr(streaming, "BYTES_PER_ROW", 10 ** 9)  # a partition's figure plays no part
    with common.run_source(texts, budget=rows * streaming.WHOLE_BYTES_PER_ROW) as runs:
        assert isinstance(runs, pd.DataFrame)
    monkeypatch.setattr(streaming, "BYTES_PER_ROW", 1)
    with common.run_source(texts, budget=rows * streaming.WHOLE_BYTES_PER_ROW - 1) as runs:
        assert not isinstance(runs, pd.DataFrame)  # blocks written to a temporary dataset
