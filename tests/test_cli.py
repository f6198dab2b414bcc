"""The evaluate command on the bundled data, and its errors."""
import subprocess
import sys
from pathlib import Path

import pandas as pd

from evalframe.cli import main

DATA = Path(__file__).resolve().parents[1] / "data"


def test_evaluate_sso(capsys):
    assert main(["evaluate", str(DATA / "sso/qrels.txt"), str(DATA / "sso/run.trec"),
                 "-m", "R@3", "R@5", "R@10", "P@5", "RR", "nDCG@10"]) == 0
    out = capsys.readouterr().out
    assert "librarian" in out
    for v in ("0.3333", "0.6667", "1.0000", "0.4000", "0.5000", "0.6189"):
        assert v in out


def test_evaluate_cranfield_csv_and_out(tmp_path, capsys):
    out_file = tmp_path / "per_q.parquet"
    assert main(["evaluate", str(DATA / "cranfield/qrels.txt"), str(DATA / "cranfield/runs.parquet"),
                 "-m", "nDCG@10", "-q", "--format", "csv", "--out", str(out_file)]) == 0
    table = pd.read_parquet(out_file)
    assert len(table) == 5 * 225 and set(table.columns) == {"system", "query_id", "measure", "value"}


def test_errors_go_to_stderr_with_nonzero_status(tmp_path, capsys):
    bad = tmp_path / "bad.trec"
    bad.write_text("1 Q0 a 1 1.0 s\n1 Q0 b 2 s\n")
    assert main(["evaluate", str(DATA / "sso/qrels.txt"), str(bad)]) == 2
    assert "malformed" in capsys.readouterr().err
    assert main(["evaluate", str(DATA / "sso/qrels.txt"), str(DATA / "sso/run.trec"), "-m", "Foo@3"]) == 2


def test_console_script_runs():
    proc = subprocess.run([sys.executable, "-m", "evalframe.cli", "evaluate", str(DATA / "sso/qrels.txt"),
                           str(DATA / "sso/run.trec"), "-m", "P@5"], capture_output=True, text=True)
    assert proc.returncode == 0 and "0.4000" in proc.stdout
