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

DATA = Path(__file__).parents[1] / "data" / "trec_eval"

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


def test_arrow_memory_pool_is_restored_after_the_command(capsys, tmp_path):
    """main() evaluates on jemalloc (a cold pass over large arrays) and gives the
    process its own pool back, after success and after an error alike."""
    import pyarrow as pa
    before = pa.default_memory_pool().backend_name
    assert _run(_argv(COMMANDS["out.test"]), capsys)[0] == 0
    assert pa.default_memory_pool().backend_name == before
    bad = tmp_path / "run.txt"
    bad.write_text("q1 Q0 d1 1\n")
    assert _run([str(DATA / "qrels.test"), str(bad)], capsys)[0] == 2
    assert pa.default_memory_pool().backend_name == before


def test_allocator_settings_are_restored_after_the_command(capsys, tmp_path):
    """main() turns numpy's huge-page madvise off while it runs (and tunes glibc's
    malloc) and gives the process its setting back, after success and after an
    error alike."""
    from numpy._core.multiarray import _set_madvise_hugepage
    for setting in (True, False):
        _set_madvise_hugepage(setting)
        assert _run(_argv(COMMANDS["out.test"]), capsys)[0] == 0
        assert _set_madvise_hugepage(setting) is setting
        bad = tmp_path / "run.txt"
        bad.write_text("q1 Q0 d1 1\n")
        assert _run([str(DATA / "qrels.test"), str(bad)], capsys)[0] == 2
        assert _set_madvise_hugepage(setting) is setting
    _set_madvise_hugepage(True)  # numpy's default on Linux


@pytest.mark.parametrize("second_tag", ["tagA", "tagB"])
def test_tags_one_or_several_give_trec_eval_runid_and_values(second_tag, tmp_path, capsys):
    """A run file whose lines carry one tag is checked without its tag column; with
    two tags (no document listed twice) the rankings merge: runid is the last line's
    tag either way and the values are those of the one-tag file (an oracle: the
    conformance file's own output, tags rewritten)."""
    lines = (DATA / "results.test").read_text().splitlines()
    half = len(lines) // 2
    tagged = [" ".join(ln.split()[:5] + ["tagA" if i < half else second_tag]) for i, ln in enumerate(lines)]
    run = tmp_path / "run.txt"
    run.write_text("\n".join(tagged) + "\n")
    code, out, err = _run(["-m", "all_trec", "-q", str(DATA / "qrels.test"), str(run)], capsys)
    assert code == 0, err
    want = (DATA / "out.test.aq").read_text().splitlines()
    got = out.splitlines()
    runid = [ln for ln in got if ln.startswith("runid")]
    assert runid == [f"runid                 \tall\t{second_tag}"]
    assert [ln for ln in got if not ln.startswith("runid")] == [ln for ln in want if not ln.startswith("runid")]


def test_a_non_numeric_rank_is_ignored_as_trec_eval_ignores_it(tmp_path, capsys):
    lines = (DATA / "results.test").read_text().splitlines()
    run = tmp_path / "run.txt"
    run.write_text("\n".join(" ".join(f[:3] + ["r"] + f[4:]) for f in (ln.split() for ln in lines)) + "\n")
    code, out, err = _run(["-m", "all_trec", "-q", str(DATA / "qrels.test"), str(run)], capsys)
    assert code == 0, err
    assert out == (DATA / "out.test.aq").read_text()


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
                    reason="set EVALFRAME_TREC_EVAL to a trec_eval 10 binary built without -O "
                           "(docs/trec_eval.md) to compare with it")
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


# ---------------------------------------------------------------------------
# Drop-in details (issue 9, defect 12): each case's expected output is trec_eval
# 10's, written out, so these run without the binary.
# ---------------------------------------------------------------------------

def _files(tmp_path, qrels: bytes, run: bytes):
    q, r = tmp_path / "qrels", tmp_path / "run"
    q.write_bytes(qrels)
    r.write_bytes(run)
    return [str(q), str(r)]


def _bytes_out(argv, capsysbinary):
    code = main(argv)
    cap = capsysbinary.readouterr()
    return code, cap.out, cap.err


def _table(text: str) -> bytes:
    """'name qid value' rows as trec_eval prints them."""
    rows = [ln.split() for ln in text.strip().splitlines()]
    return "".join(f"{n:<22}\t{q}\t{v}\n" for n, q, v in rows).encode()


@pytest.mark.parametrize("qrels, run, flags, want", [
    # iteration 0 and tag 'run' on the first run line are data, not a header
    (b"1 0 d1 1\n1 0 d2 0\n1 0 d3 2\n2 0 doc 1\n",
     b"1 0 d1 1 0.9 run\n1 0 d2 2 0.8 run\n2 0 doc 1 0.5 run\n",
     "-q -m num_ret -m map",
     "num_ret 1 2\nmap 1 0.5000\nnum_ret 2 1\nmap 2 1.0000\nnum_ret all 3\nmap all 0.7500"),
    # iteration 'iter', tag 'system', doc ids 'doc' and 'score', question 'query'
    (b"query 0 doc 1\n1 0 score 2\n1 0 d1 1\n",
     b"x iter doc 1 0.3 system\n1 iter score 1 0.5 system\nquery iter doc 1 0.2 system\n",
     "-q -m runid -m num_rel -m map",
     "num_rel 1 2\nmap 1 0.5000\nnum_rel query 1\nmap query 1.0000\nrunid all system\nnum_rel all 3\n"
     "map all 0.7500"),
], ids=["iteration-0-tag-run", "iter-system-doc-score-query"])
def test_first_lines_that_look_like_a_header_are_data(qrels, run, flags, want, tmp_path, capsysbinary):
    code, out, err = _bytes_out(shlex.split(flags) + _files(tmp_path, qrels, run), capsysbinary)
    assert code == 0, err
    assert out == _table(want)


def test_latin1_ids_are_read_and_printed_back_byte_for_byte(tmp_path, capsysbinary):
    qrels = b"1 0 d\xe9 1\n1 0 d2 0\nq\xff 0 x 1\n"
    run = b"q\xff 0 x 1 0.9 r\xe9n\n1 0 d\xe9 1 0.5 r\xe9n\n1 0 d2 2 0.7 r\xe9n\n"
    code, out, err = _bytes_out(["-q", "-m", "runid", "-m", "recip_rank"] + _files(tmp_path, qrels, run),
                                capsysbinary)
    assert code == 0, err
    assert out == (b"recip_rank            \t1\t0.5000\n"
                   b"recip_rank            \tq\xff\t1.0000\n"
                   b"runid                 \tall\tr\xe9n\n"
                   b"recip_rank            \tall\t0.7500\n")


def test_utf8_ids_are_printed_back_unchanged(tmp_path, capsysbinary):
    qrels = "é 0 d€ 1\n".encode()
    run = "é Q0 d€ 1 0.9 rün\n".encode()
    code, out, err = _bytes_out(["-q", "-m", "runid", "-m", "map"] + _files(tmp_path, qrels, run), capsysbinary)
    assert code == 0, err
    assert out == "map                   \té\t1.0000\nrunid                 \tall\trün\nmap                   \tall\t1.0000\n".encode()


def test_indented_comments_and_vertical_tab_form_feed_separators(tmp_path, capsysbinary):
    code, out, err = _bytes_out(
        ["-q", "-m", "num_ret", "-m", "recip_rank"]
        + _files(tmp_path, b"1 0 d1 1\n1 0 d2 0\n", b"1\vQ0\fd2 1 0.9 r\n   # indented comment\n1 Q0\t\vd1 2 0.5 r\n"),
        capsysbinary)
    assert code == 0, err
    assert out == _table("num_ret 1 2\nrecip_rank 1 0.5000\nnum_ret all 2\nrecip_rank all 0.5000")


def test_complete_num_rel_counts_labels_above_zero_whatever_l(tmp_path, capsysbinary):
    """-c: the 'all' num_rel is every qrels label > 0 (m_num_rel.c), not the sum of
    the questions' num_rel (labels >= -l)."""
    files = _files(tmp_path, b"1 0 d1 1\n1 0 d2 2\n1 0 d3 0\n2 0 d1 2\n2 0 d4 1\n2 0 d5 0\n",
                   b"1 Q0 d1 1 0.9 r\n1 Q0 d3 2 0.5 r\n")
    code, out, err = _bytes_out(["-q", "-c", "-l2", "-m", "num_rel"] + files, capsysbinary)
    assert code == 0, err
    assert out == _table("num_rel 1 1\nnum_rel 2 1\nnum_rel all 4")


def test_complete_scores_a_placeholder_ranking_for_unanswered_questions(tmp_path, capsysbinary):
    """-c: question 2 is not in the run; trec_eval ranks one unjudged document for it
    and clears only num_ret, unj* and the values named exactly relstring, utility,
    rbp_resid (with parameters in the name they keep the placeholder's value)."""
    files = _files(tmp_path, b"1 0 d1 1\n1 0 d2 2\n1 0 d3 0\n2 0 d1 2\n2 0 d4 1\n2 0 d5 0\n",
                   b"1 Q0 d1 1 0.9 r\n1 Q0 d3 2 0.5 r\n")
    argv = ["-q", "-c", "-l2", "-m", "num_rel", "-m", "num_ret", "-m", "relstring.5", "-m", "utility.2,-1,0,0",
            "-m", "rbp_resid.p=0.5", "-m", "unj.3"]
    code, out, err = _bytes_out(argv + files, capsysbinary)
    assert code == 0, err
    assert out == _table("""
num_ret 1 2
num_rel 1 1
relstring_5 1 '10'
utility_2,-1,0,0 1 -2.0000
rbp_resid_p=0.5 1 0.0000
unj_3 1 0.0000
num_ret 2 0
num_rel 2 1
relstring_5 2 '-'
utility_2,-1,0,0 2 -1.0000
rbp_resid_p=0.5 2 1.0000
unj_3 2 0.0000
num_ret all 2
num_rel all 4
utility_2,-1,0,0 all -1.5000
rbp_resid_p=0.5 all 0.5000
unj_3 all 0.0000""")
    code, out, err = _bytes_out(["-q", "-c", "-m", "relstring", "-m", "utility", "-m", "rbp_resid"] + files,
                                capsysbinary)
    assert code == 0, err
    assert out == (_table("relstring 1 '10'\nutility 1 0.0000\nrbp_resid 1 0.0000")
                   + b"relstring             \t2\t''\n"
                   + _table("utility 2 0.0000\nrbp_resid 2 0.0000\nutility all 0.0000\nrbp_resid all 0.0000"))


def test_set_F_uses_its_parameter_as_given(tmp_path, capsysbinary):
    """set_F.0.5 on P = 1/2, R = 1/28 is exactly 0.09375 (printed 0.0938); beta =
    sqrt(0.5) squared back gives 0.09374999999999999 (0.0937)."""
    qrels = b"1 0 d1 1\n" + b"".join(b"1 0 r%d 1\n" % i for i in range(2, 29))
    files = _files(tmp_path, qrels, b"1 Q0 d1 1 0.9 r\n1 Q0 x 2 0.5 r\n")
    code, out, err = _bytes_out(["-m", "set_F.0.5"] + files, capsysbinary)
    assert code == 0, err
    assert out == _table("set_F_0.5 all 0.0938")


def test_a_gain_level_given_twice(tmp_path, capsysbinary):
    """ndcg.1=3,1=5: trec_eval ranks with the smaller gain and builds the ideal
    ranking with the first given; both are 3 here, as for ndcg.1=3.  When they
    differ (1=5,1=3) the numbers mix two gains, and evalframe refuses."""
    files = _files(tmp_path, b"1 0 d1 1\n1 0 d2 2\n", b"1 Q0 d2 1 0.9 r\n1 Q0 d1 2 0.5 r\n")
    code, out, err = _bytes_out(["-q", "-m", "ndcg.1=3,1=5"] + files, capsysbinary)
    assert code == 0, err
    assert out == _table("ndcg_1=3,1=5 1 0.9134\nndcg_1=3,1=5 all 0.9134")
    code, out, err = _bytes_out(["-m", "ndcg.1=5,1=3"] + files, capsysbinary)
    assert code == 2 and out == b""
    assert b"ndcg: each gain level must be given once" in err and b"Traceback" not in err


@pytest.mark.parametrize("flag", ["-M0", "-MX", "-M-1"])
def test_bad_depth_is_a_user_error(flag, tmp_path, capsysbinary):
    files = _files(tmp_path, b"1 0 d1 1\n", b"1 Q0 d1 1 0.9 r\n")
    code, out, err = _bytes_out([flag] + files, capsysbinary)
    assert code == 2 and out == b""
    assert err.count(b"\n") == 1 and b"-M must be an int >= 1" in err


def test_empty_condensed_list_gives_zero_where_trec_eval_divides_0_by_0(tmp_path, capsysbinary):
    """-J with no judged document retrieved: trec_eval 10 prints nan for
    iprec_at_recall and 11pt_avg (0/0); evalframe 0 (README)."""
    files = _files(tmp_path, b"1 0 d1 1\n", b"1 Q0 x 1 0.9 r\n")
    code, out, err = _bytes_out(["-J", "-m", "iprec_at_recall.0", "-m", "11pt_avg"] + files, capsysbinary)
    assert code == 0, err
    assert out == _table("iprec_at_recall_0.00 all 0.0000\n11pt_avg all 0.0000")


@pytest.mark.parametrize("labels", [b"-2", b"-1"])
def test_all_negative_question_is_counted(labels, tmp_path, capsysbinary):
    """trec_eval 10 crashes (every label <= -2) or stops with "Can't calculate
    measure" (best label -1); evalframe counts the question, with no relevant
    document (README)."""
    qrels = b"1 0 d1 " + labels + b"\n2 0 d1 1\n"
    files = _files(tmp_path, qrels, b"1 Q0 d1 1 0.9 r\n2 Q0 d1 1 0.9 r\n")
    code, out, err = _bytes_out(["-q", "-m", "num_rel", "-m", "map"] + files, capsysbinary)
    assert code == 0, err
    assert out == _table("num_rel 1 0\nmap 1 0.0000\nnum_rel 2 1\nmap 2 1.0000\nnum_rel all 1\nmap all 0.5000")


def test_rndcg_with_l0_on_a_question_of_zero_labels_is_zero(tmp_path, capsysbinary):
    """trec_eval 10 prints nan (0/0: relevant under -l0, but every gain is 0);
    evalframe 0 (README)."""
    files = _files(tmp_path, b"1 0 d1 0\n1 0 d2 0\n2 0 d1 1\n", b"1 Q0 d1 1 0.9 r\n2 Q0 d1 1 0.9 r\n")
    code, out, err = _bytes_out(["-q", "-l0", "-m", "Rndcg"] + files, capsysbinary)
    assert code == 0, err
    assert out == _table("Rndcg 1 0.0000\nRndcg 2 1.0000\nRndcg all 0.5000")


def test_rbp_resid_powers_differ_from_trec_eval_in_the_last_bits(tmp_path, capsysbinary):
    """0.9^4 + 0.1 is 0.7561 with numpy.power, 0.7561000000000001 with trec_eval's
    repeated products: the mean 0.37805 prints 0.3780 here, 0.3781 in trec_eval
    (README; the per-question values of the snapshot stay bit-identical)."""
    files = _files(tmp_path, b"1 0 d2 1\n1 0 d3 0\n1 0 d4 0\n2 0 d1 1\n",
                   b"1 Q0 x 1 0.9 r\n1 Q0 d2 2 0.8 r\n1 Q0 d3 3 0.7 r\n1 Q0 d4 4 0.6 r\n2 Q0 d1 1 0.9 r\n")
    code, out, err = _bytes_out(["-m", "rbp_resid"] + files, capsysbinary)
    assert code == 0, err
    assert out == _table("rbp_resid all 0.3780")


# ---------------------------------------------------------------------------
# Differential fuzz against the binary: random small files with ties, graded and
# negative labels, missing questions, header-like first lines, Latin-1 ids,
# comments and odd blanks, under many flag sets; byte for byte, except the
# README's documented differences.
# ---------------------------------------------------------------------------

FUZZ_FLAGS = ["-q -m all_trec", "-q -c -m all_trec", "-c -l2 -m all_trec", "-q -c -l2 -m num_rel -m map",
              "-q -J -m all_trec", "-q -c -J -m all_trec", "-q -M3 -m all_trec", "-q -c -M2 -l2 -m all_trec",
              "-q -c -m relstring.5 -m utility.2,-1,0,0 -m rbp_resid.p=0.5 -m unj.3 -m num_ret",
              "-q -m set_F.0.5 -m set_F.0.25 -m set_F.2 -m set_F.0.3", "-q -c -m set_F.0.5",
              "-q -m ndcg.1=3,1=5 -m G.2=4,2=7", "-q -c -J -l2 -M4 -m all_trec", "-q -l0 -m all_trec"]


def _fuzz_case(rng, fmt):
    """(qrels text, run text) or None; ids are str whose characters are bytes (latin-1)."""
    ql, rl = [], []
    tag = rng.choice(["run", "tag", "system", "r1"])
    it = rng.choice(["Q0", "0", "iter", "q0"])
    for q in range(rng.integers(1, 7)):
        qid = f"q\xe9{q}" if fmt == "latin1" else str(rng.choice([str(q), f"q{q}", f"{q:03d}"]))
        docs = [(f"d\xe9{i}" if i % 2 else f"d{i}\xff") if fmt == "latin1" else f"d{i}"
                for i in range(rng.integers(1, 13))]
        judged = rng.permutation(docs)[:rng.integers(0, len(docs) + 1)]
        graded = rng.random() > 0.2
        for d in judged:
            ql.append((qid, d, int(rng.choice([-2, -1, 0, 1, 2, 3]) if graded else rng.integers(0, 2))))
        if rng.random() < 0.85:
            ret = rng.permutation(docs)[:rng.integers(1, len(docs) + 1)]
            for i, d in enumerate(ret):
                s = rng.choice([1.0, 0.5, round(float(rng.random() * 2), 1)])
                rl.append((qid, d, i + 1, s))
    best = {}
    for q, d, lab in ql:
        best[q] = max(best.get(q, -9), lab)
    ql = [x for x in ql if best[x[0]] >= 0]  # trec_eval 10 crashes on all-negative questions
    if not ql or not rl:
        return None
    head = None
    if fmt == "header_run":
        head = [("1", "0", "d1", 1, 0.9, "run"), ("x", "iter", "doc", 1, 0.3, "system")][rng.integers(2)]
        rl = [x for x in rl if (x[0], x[1]) != (head[0], head[2])]
    lines = []
    for q, d, r, s in rl:
        sep = str(rng.choice([" ", "\t", "\v", "\f", " \t "])) if fmt == "space" else " "
        lines.append(sep.join([q, it, d, str(r), str(s), tag]))
    if head:
        lines.insert(0, " ".join(map(str, head)))
    if fmt == "comments":
        lines.insert(int(rng.integers(0, len(lines) + 1)), "   # indented comment")
        lines.insert(0, "# first comment")
    qlines = [f"{q} 0 {d} {lab}" for q, d, lab in ql]
    if fmt == "header_qrels":
        qlines.insert(0, str(rng.choice(["query 0 doc 1", "1 0 score 2", "1 0 doc 0"])))
    return "\n".join(qlines) + "\n", "\n".join(lines) + "\n"


def _documented_difference(ours: bytes, theirs: bytes) -> bool:
    """Only the README's: 0/0 printed as nan by trec_eval (iprec_at_recall,
    11pt_avg on an empty -J list; Rndcg with -l0), and rbp's last bits."""
    a, b = ours.split(b"\n"), theirs.split(b"\n")
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if x == y:
            continue
        name = y.split(b"\t")[0].strip()
        if b"nan" in y and name.startswith((b"iprec_at_recall", b"11pt_avg", b"Rndcg")):
            continue
        if name.startswith(b"rbp") and abs(float(x.split(b"\t")[2]) - float(y.split(b"\t")[2])) < 1.5e-4:
            continue
        return False
    return True


@pytest.mark.skipif(not os.environ.get("EVALFRAME_TREC_EVAL"),
                    reason="set EVALFRAME_TREC_EVAL to a trec_eval 10 binary built without -O "
                           "(docs/trec_eval.md) to compare with it")
@pytest.mark.parametrize("fmt", ["plain", "header_run", "header_qrels", "latin1", "comments", "space"])
def test_fuzz_against_the_trec_eval_binary(fmt, tmp_path, capsysbinary):
    rng = np.random.default_rng(sum(map(ord, fmt)))
    q_all, q_ans, r = tmp_path / "qrels", tmp_path / "qrels_answered", tmp_path / "run"
    compared = 0
    for case in range(25):
        made = _fuzz_case(rng, fmt)
        if made is None:
            continue
        qt, rt = made
        answered = {ln.split()[0] for ln in rt.splitlines() if ln.split() and not ln.lstrip().startswith("#")}
        q_all.write_bytes(qt.encode("latin-1"))
        # without -c trec_eval 10 stops on a qrels question the run does not answer
        q_ans.write_bytes("".join(ln + "\n" for ln in qt.splitlines() if ln.split()[0] in answered).encode("latin-1"))
        r.write_bytes(rt.encode("latin-1"))
        for flags in rng.choice(FUZZ_FLAGS, 3, replace=False):
            argv = shlex.split(flags) + [str(q_all if "-c" in flags else q_ans), str(r)]
            want = subprocess.run([os.environ["EVALFRAME_TREC_EVAL"], *argv], capture_output=True)
            if want.returncode != 0:  # e.g. every qrels line dropped above
                continue
            code, out, err = _bytes_out(argv, capsysbinary)
            assert code == 0, (flags, err, qt, rt)
            assert out == want.stdout or _documented_difference(out, want.stdout), (flags, qt, rt)
            compared += 1
    assert compared > 30


def test_latin1_run_on_standard_input(tmp_path, capsysbinary, monkeypatch):
    q = tmp_path / "qrels"
    q.write_bytes(b"q\xff 0 d\xe9 1\n")
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"q\xff Q0 d\xe9 1 0.9 r extra\n")))
    code, out, err = _bytes_out(["-q", "-m", "map", str(q), "-"], capsysbinary)
    assert code == 0, err
    assert out == b"map                   \tq\xff\t1.0000\nmap                   \tall\t1.0000\n"


def test_errors_name_utf8_ids_as_written(tmp_path, capsysbinary):
    files = _files(tmp_path, "é 0 d€ 1\né 0 d€ 2\n".encode(), "é Q0 d€ 1 0.9 r\n".encode())
    code, out, err = _bytes_out(files, capsysbinary)
    assert code == 2 and out == b""
    assert "d€".encode() in err and b"Traceback" not in err


def test_11pt_avg_sums_its_levels_in_trec_eval_order(tmp_path, capsysbinary):
    """100 documents, relevant at ranks 1, 16, 31, 40, 71, 91, 96, 10 relevant in
    all: trec_eval sums the 11 interpolated precisions from recall 1.0 down to 0,
    giving 0.2313; summed from 0 up, the last bit changes and it prints 0.2312."""
    relevant = {1, 16, 31, 40, 71, 91, 96}
    qrels = b"".join(b"1 0 d%d %d\n" % (r, r in relevant) for r in range(1, 101))
    qrels += b"1 0 x1 1\n1 0 x2 1\n1 0 x3 1\n"
    run = b"".join(b"1 Q0 d%d %d %d r\n" % (r, r, 200 - r) for r in range(1, 101))
    code, out, err = _bytes_out(["-m", "11pt_avg", "-m", "num_rel"] + _files(tmp_path, qrels, run), capsysbinary)
    assert code == 0, err
    assert out == _table("num_rel all 10\n11pt_avg all 0.2313")


@pytest.mark.parametrize("threads", [1, 2, 3, 8])  # (8: at most PER_QUESTION_CHUNKS_IN_FLIGHT at once)
def test_per_question_numbers_are_printed_as_printf_does(monkeypatch, threads):
    # -q lines are laid out with numpy; the oracle is Python's own f-strings, line by line
    # (%6.4f values at and beside the rounding boundaries, negative, large, not finite;
    # counts; relevance strings; a name longer than 22 characters; ids of one to many
    # bytes, non-ASCII among them, one holding a NUL byte), over chunks of a few questions laid out ``threads``
    # at once (written in order)
    import types

    import pyarrow as pa

    from evalframe.trec_eval import output as te
    monkeypatch.setattr(te, "PER_QUESTION_CHUNK_LINES", 97)
    rng = np.random.default_rng(11)
    halves = (np.arange(20000) + 0.5) / 1e4  # the rounding boundaries themselves
    v = np.concatenate([rng.random(20000), rng.integers(0, 9, 2000) / 8, halves, np.nextafter(halves, 0),
                        np.nextafter(halves, 1), [0.0, -0.0, 1.0, -1e-5, -0.3, 12345.678, 1e12, np.nan, np.inf,
                                                  -np.inf, 0.03125, 0.00005, 0.99995, 9.99995e4, 10.5, 99999.4,
                                                  # beside the tables' limit (what rounds to 100 and up: Python)
                                                  9.99995, 10.0, 99.0, 99.99994, 99.999949, 99.99995, 99.99996,
                                                  100.0, 100.00004]])
    n_q = len(v) // 2
    ids = sorted({f"q{i}" for i in range(n_q - 4)} | {"\u00e9t\u00e9", "x" * 40, "7", "n\x00ul"})
    slot = lambda name, kind, integer: types.SimpleNamespace(  # noqa: E731
        name=name, spec=types.SimpleNamespace(kind=kind, integer=integer, per_query=True))
    rows = [slot("num_ret", "count", True), slot("map", "value", False), slot("relstring", "relstring", False),
            slot("a_name_longer_than_22_chars", "value", False), slot("num_rel", "count", True)]
    counts = rng.integers(0, 10 ** rng.integers(1, 12, n_q), n_q).astype(float)
    counts[:12] = [0, -4, 10 ** 15, 999, 1000, 9999, 10000, 10001, 10 ** 7 - 1, 10 ** 7, 10 ** 7 + 1, 1]
    table = {id(rows[0]): counts, id(rows[1]): v[:n_q], id(rows[3]): v[n_q:2 * n_q],
             id(rows[4]): rng.integers(0, 7, n_q).astype(float)}
    rel = ["".join(rng.choice(list("-0123>."), rng.integers(0, 12))) for _ in range(n_q)]
    got = []
    te.write_per_question(got.append, rows, table, rel, pa.array(ids, pa.string()), threads)
    got = "".join(g if isinstance(g, str) else g.decode("latin-1") for g in got)
    want = []
    for i, q in enumerate(ids):
        for r in rows:
            if r.spec.kind == "relstring":
                val = "'" + rel[i] + "'"
            elif r.spec.integer:
                val = str(int(table[id(r)][i]))
            else:
                val = f"{table[id(r)][i]:6.4f}"
            want.append(f"{r.name:<22}\t{q}\t{val}\n")
    assert got.splitlines() == "".join(want).splitlines()
    assert got == "".join(want)


def test_trec_eval_fingerprints_each_file_once(tmp_path, monkeypatch, capsys):
    # the checked run (its tag column dropped) goes to the ranking step as it is
    import evalframe._id_codes as id_codes
    from evalframe.trec_eval import main
    calls = []
    real = id_codes.fingerprints
    monkeypatch.setattr(id_codes, "fingerprints", lambda arr: calls.append(len(arr)) or real(arr))
    (tmp_path / "qrels").write_text("q1 0 a 1\nq1 0 b 0\nq2 0 c 2\n")
    (tmp_path / "run").write_text("q1 Q0 a 1 2.0 t\nq1 Q0 x 2 1.0 t\nq2 Q0 c 1 1.0 t\nq2 Q0 y 2 0.5 t\n")
    assert main(["-m", "map", str(tmp_path / "qrels"), str(tmp_path / "run")]) == 0
    assert sorted(calls) == [3, 4]
    assert "map" in capsys.readouterr().out


def test_per_question_output_is_the_same_in_one_chunk_or_many(tmp_path, capsys):
    """-q prints in chunks of questions: on 5,000 questions (several chunks, ids of
    several lengths, so strcmp order interleaves them) the lines are those of the
    same command run on each half of the questions alone (one chunk each)."""
    rng = np.random.default_rng(3)
    ids = sorted({f"q{rng.integers(10 ** rng.integers(1, 6))}" for _ in range(9000)})[:5000]
    qrels, run = [], []
    for q in ids:
        docs = rng.choice(50, 6, replace=False)
        qrels += [f"{q} 0 D{d} {lab}" for d, lab in zip(docs[:4], rng.integers(0, 4, 4))]
        run += [f"{q} Q0 D{d} {i + 1} {s:.2f} tag" for i, (d, s) in enumerate(zip(docs[1:], rng.random(5)))]

    def out(keep):
        (tmp_path / "q.txt").write_text("".join(ln + "\n" for ln in qrels if ln.split()[0] in keep))
        (tmp_path / "r.txt").write_text("".join(ln + "\n" for ln in run if ln.split()[0] in keep))
        code, text, err = _run(["-q", "-n", "-m", "all_trec", str(tmp_path / "q.txt"), str(tmp_path / "r.txt")],
                               capsys)
        assert code == 0, err
        return text

    whole = out(set(ids))
    assert whole.count("\n") > 300_000 and whole == out(set(ids[:2500])) + out(set(ids[2500:]))


@pytest.mark.parametrize("score", ["nan", "inf", "-inf", "1e309", "0x10", "1f", "1,5"])
def test_scores_c_atof_would_read_are_refused(score, tmp_path, capsysbinary):
    # trec_eval reads these with atof and exits 0; evalframe refuses them (README's table)
    argv = ["-q"] + _files(tmp_path, b"1 0 d1 1\n1 0 d2 0\n", f"1 Q0 d1 0 {score} r\n1 Q0 d2 1 0.5 r\n".encode())
    code, out, err = _bytes_out(argv, capsysbinary)
    assert code == 2 and out == b"" and b"score" in err


def test_a_blank_line_of_a_qrels_file_is_skipped(tmp_path, capsysbinary):
    # trec_eval stops ("Malformed line"); evalframe skips it (README's table)
    run = b"1 Q0 d1 0 2.0 r\n1 Q0 d2 1 1.0 r\n2 Q0 d1 0 1.0 r\n"
    with_blank = _bytes_out(["-q"] + _files(tmp_path, b"1 0 d1 1\n\n2 0 d1 0\n1 0 d2 1\n", run), capsysbinary)
    without = _bytes_out(["-q"] + _files(tmp_path, b"1 0 d1 1\n2 0 d1 0\n1 0 d2 1\n", run), capsysbinary)
    assert with_blank[0] == 0 and with_blank == without and b"num_rel_ret" in without[1]


@pytest.mark.parametrize("where", ["qrels", "run"])
def test_a_byte_order_mark_is_kept_as_trec_eval_keeps_it_and_warned_of(where, tmp_path, capsys):
    bom = b"\xef\xbb\xbf"
    qrels, run = tmp_path / "q.txt", tmp_path / "r.txt"
    qrels.write_bytes((bom if where == "qrels" else b"") + b"1 0 d1 1\n1 0 d2 1\n")
    run.write_bytes((bom if where == "run" else b"") + b"1 Q0 d1 1 2.0 r\n1 Q0 d3 2 1.0 r\n")
    assert main(["-m", "map", str(qrels), str(run)]) == 0
    out = capsys.readouterr()
    assert "map                   \tall\t0.0000" in out.out  # trec_eval 10: the first id is "\ufeff1"
    assert "byte-order mark" in out.err and str(qrels if where == "qrels" else run) in out.err
    assert float(ef.evaluate(str(run), str(qrels), "AP")["value"].iloc[0]) == 0.5  # evaluate strips it
    run.write_bytes(b"1 Q0 d1 1 2.0 r\n")
    qrels.write_bytes(b"1 0 d1 1\n")
    assert main(["-m", "map", str(qrels), str(run)]) == 0
    assert "byte-order" not in capsys.readouterr().err


def test_duplicate_documents_as_trec_eval_10_reads_them(tmp_path, capsys):
    # trec_eval 10 (form_res_rels.c) sorts a question's lines by score (docno descending on ties), keeps
    # the first -M, and stops on a docno listed twice among those; questions absent from the golden set
    # are never looked at.  Expected values: the same ranking without the repeated line, a loop below.
    qrels, run = tmp_path / "q.txt", tmp_path / "r.txt"
    qrels.write_text("1 0 d1 1\n1 0 d2 0\n1 0 d4 1\n")
    lines = ["1 Q0 d1 1 3.0 r", "1 Q0 d2 2 2.0 r", "1 Q0 d1 3 1.0 r", "1 Q0 d4 4 0.5 r",
             "2 Q0 x 1 1.0 r", "2 Q0 x 2 0.5 r"]  # question 2: not in the golden set
    run.write_text("\n".join(lines) + "\n")
    # -M 2: the second d1 is ranked third, below the cutoff: ignored (ranking d1 d2)
    assert main(["-M", "2", "-m", "map", "-m", "num_ret", str(qrels), str(run)]) == 0
    out = capsys.readouterr().out
    assert "num_ret               \tall\t2" in out and "map                   \tall\t0.5000" in out
    # -M 3 takes both copies of d1: trec_eval stops
    assert main(["-M", "3", "-m", "map", str(qrels), str(run)]) == 2
    err = capsys.readouterr().err
    assert "d1" in err and "duplicates='max'" not in err and "duplicate docs" in err
    # no -M: every line counts: the same stop; with -c too
    assert main(["-c", "-m", "map", str(qrels), str(run)]) == 2
    capsys.readouterr()
    # a repeat only in a question the golden set lacks: never looked at (question 1 alone is scored)
    run.write_text("\n".join([lines[0], lines[1], lines[3], lines[4], lines[5]]) + "\n")
    for flags in ([], ["-c"]):
        assert main(flags + ["-m", "map", "-m", "num_q", str(qrels), str(run)]) == 0
        out = capsys.readouterr().out
        assert "num_q                 \tall\t1" in out
        assert "map                   \tall\t0.8333" in out  # d1 (rel) at 1, d4 (rel) at 3: (1 + 2/3) / 2
