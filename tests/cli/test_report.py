"""evalframe report: the CLI on the bundled data."""
from __future__ import annotations

import io
import json
from pathlib import Path

import pandas as pd
import pytest

from evalframe import cli
from evalframe.cli.report import Progress, main

ROOT = Path(__file__).resolve().parents[2]
QRELS = str(ROOT / "data" / "cranfield" / "qrels.txt")
RUNS = str(ROOT / "data" / "cranfield" / "runs.parquet")
SEGMENTS = str(ROOT / "data" / "cranfield" / "segments.parquet")
FAST = ["--n-resamples", "200", "-m", "R@5", "nDCG@10"]


@pytest.fixture(scope="module")
def out_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("report")
    return d


def test_full_run_writes_everything(out_dir, capsys):
    rc = main([QRELS, RUNS, "--segments", SEGMENTS, "--baseline", "bm25", "--out", str(out_dir), *FAST])
    assert rc == 0
    out = capsys.readouterr()
    assert "Summary" in out.out and "Comparisons" in out.out and "hybrid_rrf" in out.out
    assert "▲" in out.out
    for sub in ("csv", "parquet"):
        for name in ("summary", "per_question", "by_segment", "comparisons", "diagnostics"):
            assert (out_dir / sub / f"{name}.{sub}").exists()
    pngs = sorted(p.name for p in (out_dir / "plots").glob("*.png"))
    assert "forest.png" in pngs and "segments.png" in pngs and len(pngs) == 7
    md = (out_dir / "report.md").read_text()
    assert md.startswith("# evalframe report") and "| system" in md
    page = (out_dir / "report.html").read_text()  # issue 14: the page beside the rest
    assert page.startswith("<!DOCTYPE html>") and "data-table='summary'" in page and QRELS in page
    assert page.count("<svg ") == len(pngs)
    s = pd.read_parquet(out_dir / "parquet" / "summary.parquet")
    assert set(s["system"]) == {"bm25", "tfidf", "dense_exact", "dense_hnsw", "hybrid_rrf"}
    assert "wrote" in out.err


def test_terminal_table_is_aligned(capsys):
    assert main([QRELS, RUNS, *FAST]) == 0
    lines = capsys.readouterr().out.splitlines()
    i = lines.index(next(l for l in lines if l.startswith("system")))
    body = lines[i - 1:i + 6]
    assert len({len(l) for l in body}) == 1


def test_json_and_markdown(capsys):
    assert main([QRELS, RUNS, "--format", "json", "--baseline", "bm25", *FAST]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert {"metadata", "summary", "comparisons", "diagnostics"} <= set(payload)
    assert payload["metadata"]["n_resamples"] == 200 and len(payload["summary"]) == 10
    assert main([QRELS, RUNS, "--format", "markdown", *FAST]) == 0
    assert capsys.readouterr().out.startswith("# evalframe report")


def test_several_run_files_and_csv_segments(tmp_path, capsys):
    runs = pd.read_parquet(RUNS)
    paths = []
    for s in ("bm25", "tfidf"):
        p = tmp_path / f"{s}.tsv"
        runs[runs.system == s][["query_id", "doc_id", "score"]].to_csv(p, sep="\t", index=False)
        paths.append(str(p))
    seg = tmp_path / "seg.csv"
    pd.read_parquet(SEGMENTS).to_csv(seg, index=False)
    assert main([QRELS, *paths, "--segments", str(seg), "--stages", "bm25:100", "tfidf:5", *FAST]) == 0
    out = capsys.readouterr().out
    assert "bm25" in out and "tfidf" in out and "Pipeline stages" in out and "Segments" in out


def test_dispatch_from_main_cli(capsys):
    assert cli.main(["report", QRELS, RUNS, *FAST]) == 0
    assert "Summary" in capsys.readouterr().out


@pytest.mark.parametrize("argv, message", [
    (["missing.txt", RUNS], "missing.txt"),
    ([QRELS, RUNS, "--baseline", "nope"], "baseline 'nope'"),
    ([QRELS, RUNS, "--segments", "nope.tsv"], "nope.tsv"),
    ([QRELS, RUNS, "-m", "XYZ@5"], "unknown measure"),
    ([QRELS, RUNS, "--stages", "bm25"], "at least two"),
])
def test_bad_input_exits_2(argv, message, capsys):
    assert main([*argv, "--n-resamples", "50"]) == 2
    err = capsys.readouterr().err
    assert "error" in err and message in err


def test_usage_error_and_help(capsys):
    assert main([]) == 2
    assert main(["--help"]) == 0
    assert "--segments" in capsys.readouterr().out


def test_progress_bar_only_on_a_terminal():
    class Tty(io.StringIO):
        def isatty(self):
            return True
    s = Tty()
    p = Progress(3, stream=s)
    p.step("reading")
    p.step("resampling")
    p.close()
    assert "reading" in s.getvalue() and "[" in s.getvalue() and "\r" in s.getvalue()
    quiet = io.StringIO()
    q = Progress(3, stream=quiet)
    q.step("reading")
    q.close()
    assert quiet.getvalue() == ""


def test_demo_fits_a_screen_and_more_changes_on_request(capsys):
    """`make demo`'s terminal output (stdout and stderr) stays under 80 lines: the top
    changes are one line per (pair, measure) and the warnings are shown once (stderr);
    --changes N shows N per direction, --changes 0 none."""
    from pathlib import Path

    from evalframe.cli import main as cli_main
    data = Path(__file__).resolve().parents[2] / "data" / "cranfield"
    argv = ["report", str(data / "qrels.txt"), str(data / "runs.parquet"), "--segments",
            str(data / "segments.parquet"), "--baseline", "bm25", "--n-resamples", "200"]
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("default")  # as in a terminal (the test config ignores some)
        assert cli_main(argv) == 0
    cap = capsys.readouterr()
    lines = cap.out.splitlines() + cap.err.splitlines()
    assert len(lines) < 80, len(lines)
    assert "Top regression and improvement per pair and measure" in cap.out
    assert sum(line.lstrip().startswith("bm25 ") and "->" in line for line in cap.out.splitlines()) == 4 * 7
    assert "Warnings (" not in cap.out and "unjudged documents" in cap.err  # once
    assert cli_main(argv + ["--changes", "3"]) == 0
    more = capsys.readouterr().out
    assert "Top regressions and improvements" in more and len(more.splitlines()) > 4 * 7 * 6
    assert cli_main(argv + ["--changes", "0"]) == 0
    assert "Top regression" not in capsys.readouterr().out


def test_out_dir_holds_one_consistent_report(tmp_path, capsys):
    """report --out DIR into the folder of an earlier run: the earlier run's plots do not
    stay beside the new ones (issue 30); files evalframe did not write are kept."""
    from pathlib import Path

    from evalframe.cli import main as cli_main
    data = Path(__file__).resolve().parents[2] / "data" / "cranfield"
    out = tmp_path / "out"
    base = ["report", str(data / "qrels.txt"), str(data / "runs.parquet"), "-m", "R@5", "--n-resamples", "20",
            "--out", str(out)]
    assert cli_main(base + ["--segments", str(data / "segments.parquet")]) == 0
    first = {p.name for p in (out / "plots").iterdir()}
    (out / "notes.txt").write_text("mine")
    assert cli_main(base) == 0
    second = {p.name for p in (out / "plots").iterdir()}
    assert first - second, "the segment plots of the first run should be gone"
    assert second < first
    assert (out / "notes.txt").read_text() == "mine"
    assert not [p for p in out.iterdir() if p.name.startswith(".evalframe-report-")]
    assert set(pd.read_csv(out / "csv" / "summary.csv")["measure"]) == {"R@5"}
    capsys.readouterr()


def test_out_dir_never_removes_folders_it_did_not_write(tmp_path, capsys):
    """--out . in a folder whose csv/ holds the user's own files: the command stops before
    writing, nothing is removed."""
    from pathlib import Path

    from evalframe.cli import main as cli_main
    data = Path(__file__).resolve().parents[2] / "data" / "sso"
    (tmp_path / "csv").mkdir()
    (tmp_path / "csv" / "mine.csv").write_text("a,b\n1,2\n")
    argv = ["report", str(data / "qrels.txt"), str(data / "run.trec"), "--n-resamples", "20", "--out", str(tmp_path)]
    assert cli_main(argv) == 2
    assert "csv/ there is not an earlier evalframe report's" in capsys.readouterr().err
    assert (tmp_path / "csv" / "mine.csv").read_text() == "a,b\n1,2\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["csv"]


def test_dollar_signs_in_system_segment_and_question_names(tmp_path, capsys):
    """Issue 30: a '$' in a system, segment or question name was parsed as TeX; with an
    invalid expression `report --out` exited 2 after writing everything but report.html.
    Names are text: the command writes the whole report, the page draws them verbatim."""
    runs = pd.read_parquet(RUNS)
    runs = runs[runs.system.isin(["bm25", "tfidf"])].replace({"system": {"tfidf": "x$\\frac{$y"}})
    runs["query_id"] = "$" + runs["query_id"].astype(str)
    run_path = tmp_path / "runs.parquet"
    runs.to_parquet(run_path)
    qrels = pd.read_csv(QRELS, sep=r"\s+", header=None, names=["query_id", "it", "doc_id", "relevance"],
                        dtype=str)
    qrels["query_id"] = "$" + qrels["query_id"]
    qrels_path = tmp_path / "qrels.tsv"
    qrels[["query_id", "doc_id", "relevance"]].to_csv(qrels_path, sep="\t", index=False)
    seg = pd.read_parquet(SEGMENTS)
    seg["query_id"] = "$" + seg["query_id"].astype(str)
    seg["length"] = seg["length"].map({"short": "$0-$50", "medium": "$50-$1{00", "long": "$$"})
    seg_path = tmp_path / "seg.parquet"
    seg.to_parquet(seg_path)
    out = tmp_path / "out"
    assert main([str(qrels_path), str(run_path), "--segments", str(seg_path), "--baseline", "bm25",
                 "--out", str(out), *FAST]) == 0, capsys.readouterr().err
    page = (out / "report.html").read_text()
    assert "x$\\frac{$y" in page and "$0-$50" in page
    assert len(list((out / "plots").glob("*.png"))) >= 3


def test_threads_flag(capsys):
    """``--threads N``: the same report as one thread; a bad count is a one-line error."""
    assert main([QRELS, RUNS, "--format", "json", "--test", "randomization", "--threads", "1", *FAST]) == 0
    one = capsys.readouterr().out
    assert main([QRELS, RUNS, "--format", "json", "--test", "randomization", "--threads", "2", *FAST]) == 0
    assert capsys.readouterr().out == one
    assert main([QRELS, RUNS, "--threads", "0", *FAST]) == 2
    assert "--threads must be an int >= 1, got 0" in capsys.readouterr().err
