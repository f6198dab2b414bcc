"""--memory-budget on the commands: a run larger than the budget (TREC text read in blocks,
a Parquet directory, several runs) gives the same output as the in-memory command."""
import warnings

import pandas as pd
import pytest

from evalframe.engine import budget as sizing
import evalframe as ef
from evalframe.cli import main
from evalframe.cli import runs as common


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
    monkeypatch.setattr(sizing, "TEXT_BLOCK_BYTES", 50_000)  # many blocks per file
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
    figure (sizing.WHOLE_BYTES_PER_ROW) fit the budget, whatever a partition's own figure."""
    from evalframe.engine import streaming
    _, texts, _ = cranfield_files
    rows = sum(sizing.text_run_rows(p) for p in texts)
    monkeypatch.setattr(sizing, "BYTES_PER_ROW", 10 ** 9)  # a partition's figure plays no part
    with common.run_source(texts, budget=rows * sizing.WHOLE_BYTES_PER_ROW) as runs:
        assert isinstance(runs, pd.DataFrame)
    monkeypatch.setattr(sizing, "BYTES_PER_ROW", 1)
    with common.run_source(texts, budget=rows * sizing.WHOLE_BYTES_PER_ROW - 1) as runs:
        assert not isinstance(runs, pd.DataFrame)  # blocks written to a temporary dataset


def test_sigterm_removes_the_runs_copied_for_the_commands(tmp_path):
    """Text runs larger than the budget are copied to a Parquet directory for the command:
    SIGTERM while it is in use removes it, and the process ends by the signal."""
    import os
    import signal
    import subprocess
    import sys
    runs = []
    for tag in "ab":  # two runs naming their own systems: copied (one, or named ones, are read where they are)
        run = tmp_path / f"{tag}.trec"
        run.write_text("".join(f"q{q} Q0 d{d} {d + 1} {1.0 / (d + 1)} {tag}\n" for q in range(20) for d in range(30)))
        runs.append(str(run))
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    script = f"""
import os, signal
from evalframe.cli.runs import run_source
with run_source({runs!r}, budget=1) as source:
    assert os.listdir(source), "the run was copied"
    os.kill(os.getpid(), signal.SIGTERM)
"""
    done = subprocess.run([sys.executable, "-c", script], env={**os.environ, "TMPDIR": str(scratch)},
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == -signal.SIGTERM, done.stderr[-2000:]
    assert list(scratch.iterdir()) == []


def test_text_runs_larger_than_the_budget_are_streamed_where_they_are(cranfield_files, capsys):
    """A text run larger than --memory-budget, or several named ones, are handed to the streaming
    engine as they are (read in blocks of whole questions, not copied to Parquet), with the
    output of the in-memory command; several unnamed ones are still copied."""
    qrels, texts, _ = cranfield_files
    with common.run_source(texts[:1], budget=1) as runs:
        assert runs == texts[0]
    named = [f"s{i}={p}" for i, p in enumerate(texts)]
    with common.run_source(named, budget=1) as runs:
        assert runs == {f"s{i}": p for i, p in enumerate(texts)}
    with common.run_source(texts, budget=1) as runs:
        assert isinstance(runs, str) and runs != texts[0]  # the temporary Parquet directory
    for args in (texts[:1], named):
        small = command(["evaluate", qrels, *args, "--memory-budget", "1MB"], capsys)
        whole = command(["evaluate", qrels, *args], capsys)
        assert small[0] == 0 and small[1] == whole[1]
