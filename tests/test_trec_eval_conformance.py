"""``evalframe trec-eval`` against trec_eval 10's own conformance files.

The seven expected outputs in ``tests/data/trec_eval/`` (NIST's, unchanged) are
reproduced line for line by the command lines of that folder's README; then
the command's error handling, standard input, and the library view of the same
numbers (parse_measure + evaluate + aggregate give the ``all`` rows).
"""
import io
import os
import shlex
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import evalframe as ef
from evalframe.cli import main as cli_main
from evalframe.trec_eval import main

DATA = Path(__file__).parent / "data" / "trec_eval"

COMMANDS = {
    "out.test": "qrels.test results.test",
    "out.test.a": "-m all_trec qrels.test results.test",
    "out.test.aq": "-m all_trec -q qrels.test results.test",
    "out.test.aqc": "-m all_trec -q -c qrels.test results.trunc",
    "out.test.aqcM": "-m all_trec -q -c -M100 qrels.test results.trunc",
    "out.test.aql": "-m all_trec -mrelstring.20 -q -l2 qrels.rel_level results.test",
    "out.test.meas_params": ("-q -miprec_at_recall..10,.20,.25,.75,.50 -m P.5,7,3 -m recall.20,2000 "
                             "-m Rprec_mult.5.0,0.2,0.35 -mutility.2,-1,0,0 -m 11pt_avg..25,.5,.75 "
                             "-mndcg.1=3,2=9,4=4.5 -mndcg_cut.10,20,23.4 -msuccess.2,5,20 "
                             "qrels.test results.test"),
}


def _argv(cmd: str) -> list[str]:
    out = []
    for a in shlex.split(cmd):
        out.append(str(DATA / a) if (DATA / a).is_file() else a)
    return out


def _run(argv, capsys, stdin: bytes | None = None, monkeypatch=None):
    if stdin is not None:
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin)))
    code = main(argv)
    cap = capsys.readouterr()
    return code, cap.out, cap.err


def test_readme_lists_the_seven_commands():
    readme = (DATA / "README.md").read_text()
    for expected, cmd in COMMANDS.items():
        assert f"| `{expected}` | `trec_eval {cmd}` |" in readme


@pytest.mark.parametrize("expected", list(COMMANDS))
def test_conformance_output_line_for_line(expected, capsys):
    code, out, err = _run(_argv(COMMANDS[expected]), capsys)
    assert code == 0, err
    want = (DATA / expected).read_text().splitlines()
    got = out.splitlines()
    for i, (g, w) in enumerate(zip(got, want)):
        assert g == w, f"{expected} line {i + 1}: got {g!r}, expected {w!r}"
    assert len(got) == len(want)
    assert out.endswith("\n")


def test_cli_dispatches_trec_eval(capsys):
    assert cli_main(["trec-eval"] + _argv(COMMANDS["out.test"])) == 0
    assert capsys.readouterr().out == (DATA / "out.test").read_text()


def test_as_a_subprocess():
    """The command as a user types it (through the CLI module), bytes on stdout."""
    code = "import sys; from evalframe.cli import main; sys.exit(main())"
    res = subprocess.run([sys.executable, "-c", code, "trec-eval", *_argv(COMMANDS["out.test.a"])],
                         capture_output=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert res.stdout == (DATA / "out.test.a").read_bytes()


def test_run_from_standard_input(capsys, monkeypatch):
    argv = ["-m", "all_trec", "-q", str(DATA / "qrels.test"), "-"]
    code, out, err = _run(argv, capsys, stdin=(DATA / "results.test").read_bytes(), monkeypatch=monkeypatch)
    assert code == 0, err
    assert out == (DATA / "out.test.aq").read_text()


def test_no_summary_flag_keeps_only_question_rows(capsys):
    code, out, _ = _run(["-q", "-n", *_argv("qrels.test results.test")], capsys)
    assert code == 0
    rows = [ln.split("\t") for ln in out.splitlines()]
    assert rows and all(r[1] in {"301", "302", "303"} for r in rows)
    want = [ln for ln in (DATA / "out.test.aq").read_text().splitlines()
            if ln.split("\t")[0].strip() in {"num_ret", "map", "P_5"} and "\tall\t" not in ln]
    assert [ln for ln in out.splitlines() if ln.split("\t")[0].strip() in {"num_ret", "map", "P_5"}] == want


def test_measure_order_is_trec_eval_order_not_command_order(capsys):
    code, out, _ = _run(["-m", "P.5", "-m", "map", *_argv("qrels.test results.test")], capsys)
    assert code == 0
    assert [ln.split()[0] for ln in out.splitlines()] == ["map", "P_5"]


def test_judged_only_changes_precision_as_trec_eval_J(capsys):
    """-J removes unjudged documents first: in 303 of qrels.rel_level, label -1
    documents count as unjudged, so P_10 rises."""
    args = _argv("qrels.rel_level results.test")
    _, plain, _ = _run(["-q", "-m", "P.10", *args], capsys)
    _, judged, _ = _run(["-q", "-J", "-m", "P.10", *args], capsys)
    val = {ln.split("\t")[1]: float(ln.split("\t")[2]) for ln in plain.splitlines()}
    valJ = {ln.split("\t")[1]: float(ln.split("\t")[2]) for ln in judged.splitlines()}
    assert valJ["303"] > val["303"]
    assert valJ["302"] == val["302"]  # every retrieved document of 302 is judged


@pytest.mark.parametrize("argv, code, message", [
    (["-m", "no_such_measure"], 1, "illegal measure 'no_such_measure'"),
    (["-m", "P.0"], 2, "cutoffs must be positive"),
    (["-m", "P.5,5"], 2, "duplicate cutoffs"),
    (["-m", "ndcg.1=3,2"], 2, "malformed pair parameters"),
    (["-m", "utility.1,2"], 2, "utility needs 4 coefficients"),
    (["-x"], 1, "Usage"),
])
def test_bad_measures_and_flags_fail_on_stderr(argv, code, message, capsys):
    got, out, err = _run(argv + _argv("qrels.test results.test"), capsys)
    assert got == code
    assert out == ""
    assert message in err


def test_missing_file_fails(capsys, tmp_path):
    got, out, err = _run([str(DATA / "qrels.test"), str(tmp_path / "nope.txt")], capsys)
    assert got == 2 and out == ""
    assert "nope.txt" in err


def test_malformed_run_line_is_reported_with_its_line_number(capsys, tmp_path):
    lines = (DATA / "results.test").read_text().splitlines()
    lines[6] = "301 Q0 FR940202-2-00150"
    bad = tmp_path / "bad.run"
    bad.write_text("\n".join(lines) + "\n")
    got, out, err = _run([str(DATA / "qrels.test"), str(bad)], capsys)
    assert got == 2 and out == ""
    assert "line 7" in err


def test_wrong_number_of_files_prints_usage(capsys):
    got, out, err = _run([str(DATA / "qrels.test")], capsys)
    assert got == 1 and "Usage" in err


def test_every_trec_name_parses_and_library_gives_the_all_rows():
    """Each measure row of out.test.a, through parse_measure + evaluate + aggregate
    (missing='drop', trec_eval's default), gives the printed 'all' value."""
    rows = [ln.split("\t") for ln in (DATA / "out.test.a").read_text().splitlines()]
    rows = [(name.strip(), float(val)) for name, _, val in rows if name.strip() not in ("runid", "num_q")]
    ms = [ef.parse_measure(name) for name, _ in rows]
    run = ef.read_run(DATA / "results.test").drop(columns="system")
    per_q = ef.evaluate(run, DATA / "qrels.test", ms, missing="drop")
    agg = ef.aggregate(per_q).set_index("measure")["value"]
    for (name, want), m in zip(rows, ms):
        got = agg[str(m)]
        if m.aggregation == "sum":
            assert int(got) == want, name
        else:
            assert f"{got:6.4f}" == f"{want:6.4f}", (name, str(m), got)


def test_gm_map_is_a_geometric_mean_with_trec_eval_floor():
    per_q = ef.evaluate({"a": {"d1": 1.0}, "b": {"x": 1.0}}, {"a": {"d1": 1}, "b": {"d2": 1}}, ["GMAP", "AP"])
    agg = ef.aggregate(per_q).set_index("measure")
    assert agg.loc["GMAP", "aggregation"] == "gmean"
    assert agg.loc["GMAP", "value"] == pytest.approx((1.0 * 1e-5) ** 0.5)
    assert agg.loc["AP", "value"] == pytest.approx(0.5)


@pytest.mark.skipif(not os.environ.get("EVALFRAME_TREC_EVAL"),
                    reason="set EVALFRAME_TREC_EVAL to a trec_eval 10 binary to compare with it")
@pytest.mark.parametrize("flags", [
    "-q -m all_trec", "-q -c -m all_trec", "-q -J -l2 -M7 -m all_trec -m relstring.15",
    "-q -m ndcg.1=3,2=9 -m G.2=5 -m Rndcg.1=4 -m ndcg_rel.2=2.5 -m rbp.p=0.8,2=7 -m set_F.0.3 "
    "-m utility.2,-1,1,0.5 -N 5000",
])
def test_random_files_match_the_trec_eval_binary(flags, tmp_path, capsys):
    """Byte-identical output on a random run with many ties (two-decimal scores),
    graded and negative labels, unjudged documents and questions missing on either side."""
    rng = np.random.default_rng(7)
    qrels_lines, run_lines = [], []
    for q in range(60):
        docs = rng.choice(80, 40, replace=False)
        if q % 7:  # some questions only in the qrels (-c), some only in the run
            qrels_lines += [f"{q} 0 D{d} {lab}" for d, lab in zip(docs[:25], rng.integers(-1, 4, 25))]
        if q % 11:
            scores = np.round(rng.random(30) * 3, 1)
            run_lines += [f"{q} Q0 D{d} {i + 1} {s} tag" for i, (d, s) in enumerate(zip(docs[5:35], scores))]
    qrels, run = tmp_path / "q.txt", tmp_path / "r.txt"
    qrels.write_text("\n".join(qrels_lines) + "\n")
    run.write_text("\n".join(run_lines) + "\n")
    argv = shlex.split(flags) + [str(qrels), str(run)]
    if "-c" not in argv:  # trec_eval 10 stops on a qrels question missing from the run
        kept = {ln.split()[0] for ln in run_lines}
        qrels.write_text("\n".join(ln for ln in qrels_lines if ln.split()[0] in kept) + "\n")
    want = subprocess.run([os.environ["EVALFRAME_TREC_EVAL"], *argv], capture_output=True, check=True).stdout
    code, out, err = _run(argv, capsys)
    assert code == 0, err
    assert out.encode() == want
