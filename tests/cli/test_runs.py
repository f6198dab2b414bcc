"""The commands on the bundled data: evaluate, and the layer every command shares
(one naming rule, --duplicates, one-line errors with exit status 2, warnings)."""
import gzip
import io
import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import pandas as pd
import pytest

from evalframe.cli import main
from evalframe.cli.runs import split_run_arg, system_name

DATA = Path(__file__).resolve().parents[2] / "data"


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


def test_evaluate_json_keeps_every_digit(capsys):
    argv = ["evaluate", str(DATA / "cranfield/qrels.txt"), str(DATA / "cranfield/runs.parquet"), "-m", "nDCG@10",
            "AP", "-q"]
    assert main(argv + ["--format", "json"]) == 0
    got = pd.DataFrame(json.loads(capsys.readouterr().out))
    assert main(argv + ["--format", "csv"]) == 0
    want = pd.read_csv(io.StringIO(capsys.readouterr().out), dtype={"query_id": str})
    assert got["value"].tolist() == want["value"].tolist()  # exact: CSV writes every digit too
    assert got["query_id"].tolist() == want["query_id"].tolist()


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


def _console(argv: list[str], **kw) -> subprocess.CompletedProcess:
    """The ``evalframe`` program (``console_main``, as the installed script runs it), with an
    exit hook that says whether the interpreter's shutdown ran."""
    code = ("import atexit, sys\natexit.register(lambda: sys.stderr.write('[shutdown ran]'))\n"
            "from evalframe.cli import console_main\nconsole_main()")
    return subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, env=_buffered_env(), **kw)


def _buffered_env() -> dict:
    """This environment without ``PYTHONUNBUFFERED`` (which this machine sets): the final
    flush of ``console_main`` is what is tested."""
    return {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}


def test_trec_eval_ends_the_process_without_the_shutdown_and_with_every_line(tmp_path, capsys):
    """``evalframe trec-eval`` exits at once (no interpreter shutdown: 20-25 ms of a small
    file's start-up) with its status, after every line reached the pipe: 2,000 questions'
    lines (far more than a pipe and Python's buffer hold) are the in-process command's."""
    qrels, run = tmp_path / "qrels", tmp_path / "run"
    qrels.write_text("".join(f"q{i} 0 d{i % 7} 1\n" for i in range(2000)))
    run.write_text("".join(f"q{i} Q0 d{j} {j} {9 - j}.0 r\n" for i in range(2000) for j in range(5)))
    argv = ["trec-eval", "-q", "-m", "all_trec", str(qrels), str(run)]
    proc = _console(argv, text=True)
    assert main(argv) == 0
    assert proc.returncode == 0 and proc.stdout == capsys.readouterr().out and len(proc.stdout) > 10 ** 6
    assert "[shutdown ran]" not in proc.stderr
    missing = _console(["trec-eval", str(qrels), str(tmp_path / "nope")], text=True)
    assert missing.returncode == 2 and "cannot read file" in missing.stderr  # a user error: trec_eval's message
    other = _console(["evaluate", str(qrels), str(run), "-m", "P@5"], text=True)  # writes files: shuts down
    assert other.returncode == 0 and "[shutdown ran]" in other.stderr


def test_trec_eval_ends_cleanly_when_its_output_cannot_be_written(tmp_path):
    """Standard output closed (``>&-``): trec_eval's version line is not wanted, a quiet exit 0;
    a full disk (``>/dev/full``) found at the final flush: the command's one-line error, status 2;
    under a profiler the process shuts down as usual (``python -m cProfile`` writes its file)."""
    qrels, run = tmp_path / "qrels", tmp_path / "run"
    qrels.write_text("q1 0 d1 1\n")
    run.write_text("q1 Q0 d1 1 1.0 r\n")
    entry = "from evalframe.cli import console_main; console_main()"
    env = _buffered_env()

    def shell(command: str) -> subprocess.CompletedProcess:
        return subprocess.run(command, shell=True, executable="/bin/bash", capture_output=True, text=True, env=env)

    closed = shell(f"'{sys.executable}' -c '{entry}' trec-eval -v >&-")
    assert closed.returncode == 0 and "Traceback" not in closed.stderr
    if os.path.exists("/dev/full"):
        full = shell(f"'{sys.executable}' -c '{entry}' trec-eval -m P.5 {qrels} {run} >/dev/full")
        assert full.returncode == 2 and full.stderr.startswith("evalframe trec-eval: error: ") \
            and "Traceback" not in full.stderr
    (tmp_path / "script.py").write_text(entry + "\n")  # as the installed script
    profiled = shell(f"'{sys.executable}' -m cProfile -o {tmp_path / 'prof'} {tmp_path / 'script.py'} trec-eval {qrels} {run}")
    assert profiled.returncode == 0 and (tmp_path / "prof").stat().st_size > 0


def test_trec_eval_into_a_closed_pipe_exits_quietly(tmp_path):
    qrels, run = tmp_path / "qrels", tmp_path / "run"
    qrels.write_text("".join(f"q{i} 0 d1 1\n" for i in range(3000)))
    run.write_text("".join(f"q{i} Q0 d1 1 1.0 r\n" for i in range(3000)))
    code = ("import sys\nfrom evalframe.cli import console_main\nconsole_main()")
    head = subprocess.run(f"'{sys.executable}' -c \"{code}\" trec-eval -q {qrels} {run} | head -c 10; "
                          "echo \" status=${PIPESTATUS[0]}\"", shell=True, executable="/bin/bash",
                          capture_output=True, text=True)
    assert head.stdout.endswith(" status=0\n") and head.stderr == ""


# ---------------------------------------------------------------------------
# The shared layer: one naming rule, --duplicates, errors, warnings (issue 9)
# ---------------------------------------------------------------------------


QRELS = str(DATA / "sso/qrels.txt")
RUN = str(DATA / "sso/run.trec")
CRAN_QRELS = str(DATA / "cranfield/qrels.txt")
FAST = ["--n-resamples", "50", "-m", "R@5"]


def _tsv(path: Path, system: str = "bm25") -> str:
    runs = pd.read_parquet(DATA / "cranfield/runs.parquet")
    part = runs[runs.system == system][["query_id", "doc_id", "score"]]
    if path.name.endswith(".gz"):
        with gzip.open(path, "wt") as fh:
            part.to_csv(fh, sep="\t", index=False)
    else:
        part.to_csv(path, sep="\t", index=False)
    return str(path)


def _systems(command: str, runs: list[str], capsys) -> set[str]:
    """The system names a command reports for these run arguments."""
    if command == "evaluate":
        assert main(["evaluate", CRAN_QRELS, *runs, "-m", "R@5", "--format", "csv"]) == 0
        return set(pd.read_csv(io.StringIO(capsys.readouterr().out))["system"])
    assert main(["report", CRAN_QRELS, *runs, *FAST, "--format", "json"]) == 0
    return {row["system"] for row in json.loads(capsys.readouterr().out)["summary"]}


@pytest.mark.parametrize("filename, name", [
    ("bm25.v2.tsv", "bm25.v2"), ("bm25.v2.tsv.gz", "bm25.v2"), ("BM25.CSV.tsv", "BM25.CSV"),
    ("run.bm25", "run.bm25"), ("a=b.tsv", "a=b")])
def test_system_name_rule(filename, name):
    assert system_name(Path("runs") / filename) == name


@pytest.mark.parametrize("command", ["evaluate", "report"])
def test_every_command_names_systems_by_one_rule(command, tmp_path, capsys):
    # issue 9 defect 4: bm25.v2.tsv was "bm25.v2" in evaluate and "bm25" in report
    assert _systems(command, [_tsv(tmp_path / "bm25.v2.tsv")], capsys) == {"bm25.v2"}
    assert _systems(command, [_tsv(tmp_path / "bm25.v3.tsv.gz"), _tsv(tmp_path / "tfidf.x.tsv", "tfidf")],
                    capsys) == {"bm25.v3", "tfidf.x"}


@pytest.mark.parametrize("command", ["evaluate", "report"])
def test_name_equals_path_on_every_command(command, tmp_path, capsys):
    path = _tsv(tmp_path / "bm25.v2.tsv")
    assert _systems(command, [f"mybm25={path}"], capsys) == {"mybm25"}
    # a TREC run's tag is overridden too, and two files with the same tag can be told apart
    other = _tsv(tmp_path / "other.tsv", "tfidf")
    assert _systems(command, [f"a={path}", f"b={other}"], capsys) == {"a", "b"}
    # an argument that exists as a file is a path, '=' and all
    literal = _tsv(tmp_path / "x=y.tsv")
    assert _systems(command, [literal], capsys) == {"x=y"}


def test_split_run_arg(tmp_path):
    (tmp_path / "k=v.trec").write_text("")
    assert split_run_arg("mybm25=runs/bm25.v2.tsv") == ("mybm25", "runs/bm25.v2.tsv")
    assert split_run_arg(str(tmp_path / "k=v.trec")) == (None, str(tmp_path / "k=v.trec"))
    assert split_run_arg("runs/bm25.tsv") == (None, "runs/bm25.tsv")
    assert split_run_arg("=x") == (None, "=x") and split_run_arg("x=") == (None, "x=")


def test_same_system_in_two_files_is_refused_with_a_way_out(tmp_path, capsys):
    other = tmp_path / "other.trec"
    other.write_text(Path(RUN).read_text())
    assert main(["evaluate", QRELS, RUN, str(other)]) == 2
    err = capsys.readouterr().err
    assert "librarian" in err and "other.trec" in err and "=" in err
    assert main(["evaluate", QRELS, f"a={RUN}", f"b={other}", "-m", "P@5"]) == 0


def _duplicated_run(tmp_path) -> str:
    p = tmp_path / "dup.tsv"
    p.write_text("query_id\tdoc_id\tscore\nsso\tpage-212\t1\nsso\tenterprise-plan\t5\nsso\tpage-212\t9\n")
    return str(p)


def test_evaluate_duplicates_flag_is_used(tmp_path, capsys):
    # issue 9 defect 5: --duplicates was ignored (read_run raised before evaluate saw it)
    dup = _duplicated_run(tmp_path)
    assert main(["evaluate", QRELS, dup, "-m", "RR"]) == 2
    assert f"{dup}: " in capsys.readouterr().err
    assert main(["evaluate", QRELS, dup, "-m", "RR", "--duplicates", "max", "--format", "csv"]) == 0
    assert pd.read_csv(io.StringIO(capsys.readouterr().out))["value"].tolist() == [1.0]  # page-212 first
    assert main(["evaluate", QRELS, dup, "-m", "RR", "--duplicates", "first", "--format", "csv"]) == 0
    assert pd.read_csv(io.StringIO(capsys.readouterr().out))["value"].tolist() == [0.5]


@pytest.mark.parametrize("command", ["evaluate", "report"])
def test_error_names_the_file_at_fault(command, tmp_path, capsys):
    good = _tsv(tmp_path / "good.tsv")
    bad = tmp_path / "bad.tsv"
    bad.write_text("query_id\tdoc_id\tscore\n1\t51\tnot-a-number\n")
    extra = FAST if command == "report" else ["-m", "R@5"]
    assert main([command, CRAN_QRELS, good, str(bad), *extra]) == 2
    err = capsys.readouterr().err
    assert f"{bad}:" in err and f"{good}:" not in err
    assert main([command, CRAN_QRELS, good, _duplicated_run(tmp_path), *extra]) == 2
    assert "dup.tsv:" in capsys.readouterr().err


def _user_error_cases(tmp_path) -> dict[str, list[str]]:
    gz = tmp_path / "corrupt.trec.gz"
    gz.write_bytes(b"\x1f\x8b" + b"not gzip at all")
    truncated = tmp_path / "truncated.trec.gz"
    truncated.write_bytes(gzip.compress(Path(RUN).read_bytes())[:40])
    folder = tmp_path / "folder"
    folder.mkdir()
    a_file = tmp_path / "a_file"
    a_file.write_text("x")
    return {
        "corrupt gz run": [QRELS, str(gz)],
        "corrupt gz qrels": [str(gz), RUN],
        "truncated gz run": [QRELS, str(truncated)],
        "truncated gz qrels": [str(truncated), RUN],
        "directory as run": [QRELS, str(folder)],
        "directory as qrels": [str(folder), RUN],
        "missing run": [QRELS, str(tmp_path / "missing.trec")],
        "missing qrels": [str(tmp_path / "missing.txt"), RUN],
        "unknown measure": [QRELS, RUN, "-m", "Foo@3"],
        "cutoff >= 2^63": [QRELS, RUN, "-m", "nDCG@99999999999999999999"],
        "cutoff >= 2^63 (AP)": [QRELS, RUN, "-m", "AP@9223372036854775808"],
        "out under a file": [QRELS, RUN, "--out", str(a_file / "x.csv")],
        "out in a missing directory": [QRELS, RUN, "--out", str(tmp_path / "nope" / "x.csv")],
        "out is a directory": [QRELS, RUN, "--out", str(folder)],
        "out is a file": [QRELS, RUN, "--out", str(a_file)],
    }


_NOT_FOR = {"report": {"out in a missing directory", "out is a directory"},  # report makes its folder
            "evaluate": {"out is a file"}}                                   # evaluate overwrites it


_CASES = ["corrupt gz run", "corrupt gz qrels", "truncated gz run", "truncated gz qrels", "directory as run",
          "directory as qrels", "missing run", "missing qrels", "unknown measure", "cutoff >= 2^63", "cutoff >= 2^63 (AP)", "out under a file",
          "out in a missing directory", "out is a directory", "out is a file"]


@pytest.mark.parametrize("command, case", [(c, k) for c in ("evaluate", "report") for k in _CASES
                                           if k not in _NOT_FOR[c]])
def test_user_error_is_one_line_and_exit_2(command, case, tmp_path, capsys):
    # issue 9 defect 6: each of these was a traceback (or silently accepted)
    argv = _user_error_cases(tmp_path)[case]
    assert main([command, *argv, "--n-resamples", "50"] if command == "report" else [command, *argv]) == 2
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if line.startswith(f"evalframe {command}: error: ")]
    others = [line for line in err.splitlines() if line and not line.startswith("warning: ")]
    assert len(errors) == 1 and others == errors, err
    assert "Traceback" not in err


def test_report_out_may_be_a_new_directory(tmp_path, capsys):
    out = tmp_path / "new" / "deeper"
    assert main(["report", CRAN_QRELS, _tsv(tmp_path / "bm25.tsv"), *FAST, "--out", str(out)]) == 0
    assert (out / "report.md").exists()


def test_trec_eval_errors_exit_2_without_traceback(tmp_path, capsys):
    cases = _user_error_cases(tmp_path)
    for case in ("corrupt gz run", "corrupt gz qrels", "truncated gz run", "truncated gz qrels",
                 "directory as run", "missing run"):
        assert main(["trec-eval", *cases[case]]) == 2, case
        err = capsys.readouterr().err
        assert err and "Traceback" not in err


@pytest.mark.parametrize("argv", [
    ["evaluate", QRELS, RUN, "-m", "P@5"],
    ["evaluate", QRELS, "nope.trec"],
    ["report", QRELS, RUN, *FAST],
    ["trec-eval", QRELS, RUN],
    ["evaluate", "--help"],
])
def test_warning_hook_is_restored(argv, capsys):
    # issue 9 defect 9: cli.main replaced warnings.showwarning for good
    original, filters = warnings.showwarning, list(warnings.filters)
    main(argv)
    assert warnings.showwarning is original and warnings.filters == filters


def test_warnings_are_shown_on_stderr(tmp_path, capsys):
    run = tmp_path / "partial.trec"
    run.write_text("sso Q0 page-212 1 2.0 s\nother Q0 d1 1 1.0 s\n")  # "other" is not in the golden set
    assert main(["evaluate", QRELS, str(run), "-m", "P@5"]) == 0
    err = capsys.readouterr().err
    assert any(line.startswith("warning: ") for line in err.splitlines())


def test_top_level_usage_returns_2(capsys):
    assert main([]) == 2
    assert main(["nope"]) == 2
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    assert "evaluate" in out and "NAME=PATH" in out


@pytest.mark.parametrize("command", ["evaluate", "report"])
def test_help_documents_the_naming_rule(command, capsys):
    assert main([command, "--help"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "NAME=PATH" in out and "bm25.v2" in out and "--duplicates" in out


def test_name_for_a_file_of_many_systems_is_refused(capsys):
    runs = str(DATA / "cranfield/runs.parquet")
    assert main(["evaluate", CRAN_QRELS, f"x={runs}", "-m", "P@5"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("evalframe evaluate: error: x=") and "holds 5" in err and len(err.splitlines()) == 1


def test_docs_document_the_naming_rule():
    from evalframe.cli.runs import RUN_EXTENSIONS
    readme = " ".join((Path(__file__).resolve().parents[2] / "docs" / "user_guide" / "commands.md").read_text().split())
    assert "`NAME=PATH`" in readme and "bm25.v2" in readme
    assert "`" + " ".join(RUN_EXTENSIONS) + "`" in readme


def test_warning_turned_error_is_one_line(tmp_path, capsys):
    run = tmp_path / "partial.trec"
    run.write_text("sso Q0 page-212 1 2.0 s\nother Q0 d1 1 1.0 s\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert main(["evaluate", QRELS, str(run), "-m", "P@5"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("evalframe evaluate: error: ") and len(err.splitlines()) == 1


# ---------------------------------------------------------------- issue 12: RAG tables on the command line
def _rag_tables(tmp_path):
    """A golden set and a run as a RAG team stores them, and the same in canonical columns."""
    q = tmp_path / "golden.csv"
    q.write_text("question_id,chunk,stars\n1,c1,2\n1,c2,0\n1,c1,1\n2,c3,1\n")
    r = tmp_path / "run.csv"
    r.write_text("question_id,chunk,cos\n1,c2,0.9\n1,c1,0.5\n2,c3,0.7\n")
    canon_q = tmp_path / "canon_q.tsv"
    canon_q.write_text("query_id\tdoc_id\trelevance\n1\tc1\t2\n1\tc2\t0\n2\tc3\t1\n")  # max label
    canon_r = tmp_path / "canon_r.tsv"
    canon_r.write_text("query_id\tdoc_id\tscore\n1\tc2\t0.9\n1\tc1\t0.5\n2\tc3\t0.7\n")
    return str(q), str(r), str(canon_q), str(canon_r)


def test_columns_and_conflicts_flags_give_the_canonical_numbers(tmp_path, capsys):
    q, r, cq, cr = _rag_tables(tmp_path)
    args = ["-m", "RR", "nDCG@10", "-q", "--format", "csv"]
    assert main(["evaluate", q, f"run={r}", "--columns", "chunk=doc_id,stars=relevance,cos=score",
                 "--conflicts", "max", *args]) == 0
    got = pd.read_csv(io.StringIO(capsys.readouterr().out))
    assert main(["evaluate", cq, f"run={cr}", *args]) == 0
    want = pd.read_csv(io.StringIO(capsys.readouterr().out))
    pd.testing.assert_frame_equal(got, want)
    assert main(["evaluate", q, r, "--columns", "nonsense"]) == 2
    assert "--columns" in capsys.readouterr().err


def test_report_shows_the_conflicts_resolved(tmp_path, capsys):
    q, r, _, _ = _rag_tables(tmp_path)
    assert main(["report", q, r, "--columns", "chunk=doc_id,stars=relevance,cos=score", "--conflicts",
                 "majority", "-m", "RR", "--n-resamples", "20", "--format", "json"]) == 0
    diag = pd.DataFrame(json.loads(capsys.readouterr().out)["diagnostics"])
    row = diag[diag["check"] == "golden_set_conflicting_labels"]
    assert row["count"].tolist() == [1] and row["action"].tolist() == ["resolved: majority label"]


def test_messages_use_the_command_lines_words(tmp_path, capsys):
    q, r, _, _ = _rag_tables(tmp_path)
    assert main(["evaluate", q, r, "--columns", "chunk=doc_id,stars=relevance,cos=score"]) == 2
    err = capsys.readouterr().err
    assert "--conflicts max" in err and "conflicts='max'" not in err
    dup = _duplicated_run(tmp_path)
    assert main(["evaluate", QRELS, dup, "-m", "RR"]) == 2
    err = capsys.readouterr().err
    assert "--duplicates max" in err and "duplicates=" not in err
    sparse = tmp_path / "sparse.tsv"  # answers none of the golden set's questions but one: a warning
    sparse.write_text("query_id\tdoc_id\tscore\nsso\tpage-212\t1\n")
    two = tmp_path / "two_q.txt"
    two.write_text(Path(QRELS).read_text() + "other 0 page-1 1\n")
    assert main(["evaluate", str(two), str(sparse), "-m", "RR"]) == 0
    err = capsys.readouterr().err
    assert "--missing drop" in err and "missing='drop'" not in err


def test_trec_eval_names_the_runs_of_a_file_holding_several(tmp_path, capsys):
    run = tmp_path / "two_runs.trec"
    run.write_text("sso Q0 page-212 1 2.0 bm25\nsso Q0 page-1 2 1.0 bm25\nsso Q0 page-212 1 3.0 dense\n")
    assert main(["trec-eval", QRELS, str(run)]) == 2
    err = capsys.readouterr().err
    assert "holds 2 runs (run tags bm25, dense)" in err and "one file per run" in err
    assert "listed more than once" not in err


def test_report_segment_columns_and_aliases(tmp_path, capsys):
    seg = tmp_path / "seg.tsv"
    seg.write_text("question_id\tsegment\tasked_by\nsso\tlookup\tana\n")
    argv = ["report", QRELS, RUN, *FAST, "--segments", str(seg), "--format", "json"]
    assert main([*argv, "--segment-columns", "segment"]) == 0
    by_segment = pd.DataFrame(json.loads(capsys.readouterr().out)["by_segment"])
    assert set(by_segment["segment"]) == {"segment"} and set(by_segment["segment_value"]) == {"lookup"}
    assert main(argv) == 0
    assert set(pd.DataFrame(json.loads(capsys.readouterr().out)["by_segment"])["segment"]) == {"segment", "asked_by"}


# ---------------------------------------------------------------- rough edges of the inputs (issue 32)

def test_standard_input_as_the_run_or_the_golden_set():
    run = (DATA / "sso/run.trec").read_bytes()
    cmd = [sys.executable, "-m", "evalframe.cli", "evaluate"]
    proc = subprocess.run(cmd + [QRELS, "-", "-m", "P@5"], input=run, capture_output=True)
    assert proc.returncode == 0 and b"0.4000" in proc.stdout, proc.stderr
    proc = subprocess.run(cmd + ["-", RUN, "-m", "P@5"], input=(DATA / "sso/qrels.txt").read_bytes(),
                          capture_output=True)
    assert proc.returncode == 0 and b"0.4000" in proc.stdout, proc.stderr
    proc = subprocess.run(cmd + ["-", "-"], input=run, capture_output=True)
    assert proc.returncode == 2 and b"more than once" in proc.stderr


def test_a_directory_without_files_or_a_looping_link_is_named(tmp_path, capsys):
    empty = tmp_path / "runs"
    empty.mkdir()
    assert main(["evaluate", QRELS, str(empty)]) == 2
    err = capsys.readouterr().err
    assert "directory with no file" in err and "missing column" not in err
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    assert main(["evaluate", QRELS, str(loop)]) == 2
    err = capsys.readouterr().err
    assert "symbolic link" in err and "no such file" not in err


def test_a_stages_error_keeps_its_example_in_the_command_words(capsys):
    assert main(["report", CRAN_QRELS, str(DATA / "cranfield/runs.parquet"), "--stages", "bm25:0"]) == 2
    err = capsys.readouterr().err
    assert "e.g. --stages first_stage:100 reranked:5" in err, err


@pytest.mark.parametrize("command", ["evaluate", "report"])
def test_measures_given_with_m_twice_are_both_kept(command, tmp_path, capsys):
    # `-m nDCG@10 -m P@5` kept P@5 alone (the gate's own -m already extended)
    argv = [command, str(DATA / "cranfield/qrels.txt"), str(DATA / "cranfield/runs.parquet"),
            "-m", "nDCG@10", "-m", "P@5"]
    if command == "evaluate":
        assert main([*argv, "--format", "csv", "--per-question"]) == 0
        measures = set(pd.read_csv(io.StringIO(capsys.readouterr().out))["measure"])
    else:
        assert main([*argv, "--n-resamples", "50", "--out", str(tmp_path / "r")]) == 0
        measures = set(pd.read_parquet(tmp_path / "r" / "parquet" / "summary.parquet")["measure"])
    assert measures == {"nDCG@10", "P@5"}


def test_evaluate_threads_flag_gives_the_same_table(tmp_path, capsys, monkeypatch):
    from evalframe.engine import parts
    monkeypatch.setattr(parts, "MIN_ROWS_PER_THREAD", 1)  # the bundled runs are cut too
    args = ["evaluate", str(DATA / "cranfield/qrels.txt"), str(DATA / "cranfield/runs.parquet"), "-q", "--format", "csv"]
    outs = []
    for n in ("1", "3"):
        assert main(args + ["--threads", n]) == 0
        outs.append(capsys.readouterr().out)
    assert outs[0] == outs[1] and outs[0].count("\n") > 1000
    assert main(args + ["--threads", "0"]) == 2
    assert "threads must be an int >= 1, got 0" in capsys.readouterr().err
