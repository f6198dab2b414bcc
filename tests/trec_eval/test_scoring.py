"""``evalframe trec-eval --memory-budget``: a run file larger than the budget is
evaluated a block of whole questions at a time (a file not grouped by question:
hashed into temporary files first), with trec_eval's output byte for byte.

Oracles: trec_eval 10's own expected files, and the in-memory command (itself
checked against those files and against the trec_eval binary) on random runs.
"""
import gzip
import os
import shlex
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import pytest

from evalframe.engine import budget as sizing
from evalframe.trec_eval import command, files, main, scoring

from tests.oracles.test_trec_eval_conformance import COMMANDS, DATA, _argv

TINY = ["--memory-budget", "1KiB"]  # blocks of sizing.MIN_BLOCK_BYTES (4 KiB)


@pytest.fixture(autouse=True)
def small_blocks(monkeypatch):
    """Blocks of 100 rows (4 KB) at least, not the engine's 1,000: many blocks per file."""
    monkeypatch.setattr(sizing, "MIN_BATCH_ROWS", 100)


@pytest.fixture
def spy(monkeypatch):
    """Counts of blocks read grouped and of blocks hashed into buckets."""
    calls = {"blocks": 0, "buckets": 0}
    blocks, buckets = scoring._block_run, scoring._write_buckets

    def block_run(*a, **k):
        calls["blocks"] += 1
        return blocks(*a, **k)

    def write_buckets(*a, **k):
        calls["buckets"] += 1
        return buckets(*a, **k)
    monkeypatch.setattr(scoring, "_block_run", block_run)
    monkeypatch.setattr(scoring, "_write_buckets", write_buckets)
    return calls


def _out(argv, capsysbinary):
    code = main(argv)
    cap = capsysbinary.readouterr()
    assert code == 0, cap.err
    return cap.out


@pytest.mark.parametrize("expected", list(COMMANDS))
def test_conformance_files_in_blocks(expected, spy, capsysbinary):
    out = _out(TINY + _argv(COMMANDS[expected]), capsysbinary)
    assert out == (DATA / expected).read_bytes()
    assert spy["blocks"] >= 2  # really evaluated in parts (results.test: 3 questions of about 20 KB)
    # results.trunc interleaves its questions: it is hashed into buckets
    assert (spy["buckets"] > 0) == ("results.trunc" in COMMANDS[expected])


def _random_files(tmp_path, *, shuffled: bool, seed: int = 3, latin1: bool = False):
    rng = np.random.default_rng(seed)
    qrels_lines, run_lines = [], []
    for q in range(120):
        qid = f"q{q}" + ("\xe9" if latin1 and q % 3 == 0 else "")
        docs = rng.choice(300, 60, replace=False)
        if q % 7:  # some questions only in the qrels (-c), some only in the run
            qrels_lines += [f"{qid} 0 D{d} {lab}" for d, lab in zip(docs[:30], rng.integers(-1, 4, 30))]
        if q % 11:
            n = int(rng.integers(1, 50))
            scores = np.round(rng.random(n) * 3, 1)  # many ties
            run_lines += [f"{qid} Q0 D{d} {i + 1} {s} tag{q % 2}" for i, (d, s) in enumerate(zip(docs[5:5 + n], scores))]
    if shuffled:
        run_lines = [run_lines[i] for i in rng.permutation(len(run_lines))]
    qrels, run = tmp_path / "q.txt", tmp_path / "r.txt"
    qrels.write_bytes(("\n".join(qrels_lines) + "\n").encode("latin-1"))
    run.write_bytes(("\n".join(run_lines) + "\n").encode("latin-1"))
    return qrels, run


FLAGS = ["-q -m all_trec", "-q -c -m all_trec", "-q -J -l2 -M7 -m all_trec -m relstring.15", "-c -m all_trec -n -q"]


@pytest.mark.parametrize("shuffled", [False, True], ids=["grouped", "shuffled"])
@pytest.mark.parametrize("flags", FLAGS)
def test_random_runs_give_the_in_memory_output(flags, shuffled, tmp_path, spy, capsysbinary):
    qrels, run = _random_files(tmp_path, shuffled=shuffled, latin1=True)
    argv = shlex.split(flags) + [str(qrels), str(run)]
    want = _out(argv, capsysbinary)
    assert spy["blocks"] == 0  # the default budget holds it
    got = _out(TINY + argv, capsysbinary)
    assert got == want
    assert spy["blocks"] >= 5
    assert (spy["buckets"] > 0) == shuffled


@pytest.mark.skipif(not os.environ.get("EVALFRAME_TREC_EVAL"),
                    reason="set EVALFRAME_TREC_EVAL to a trec_eval 10 binary built without -O "
                           "(docs/trec_eval.md) to compare with it")
@pytest.mark.parametrize("shuffled", [False, True], ids=["grouped", "shuffled"])
def test_random_runs_in_blocks_match_the_trec_eval_binary(shuffled, tmp_path, capsysbinary):
    qrels, run = _random_files(tmp_path, shuffled=shuffled)
    argv = ["-q", "-c", "-m", "all_trec", str(qrels), str(run)]
    want = subprocess.run([os.environ["EVALFRAME_TREC_EVAL"], *argv], capture_output=True, check=True).stdout
    assert _out(TINY + argv, capsysbinary) == want


def test_a_question_longer_than_a_block_is_not_split(tmp_path, spy, capsysbinary):
    qrels = tmp_path / "q.txt"
    qrels.write_text("".join(f"{q} 0 D{d} {d % 3}\n" for q in (1, 2, 3) for d in range(0, 3000, 7)))
    run = tmp_path / "r.txt"  # question 2: about 60 KB of lines, 15 blocks' worth
    run.write_text("".join(f"{q} Q0 D{d} {d} {1 / (d + 1):.6f} t\n"
                           for q, n in ((1, 50), (2, 1500), (3, 50)) for d in range(n)))
    argv = ["-q", "-m", "all_trec", str(qrels), str(run)]
    assert _out(TINY + argv, capsysbinary) == _out(argv, capsysbinary)
    assert spy["blocks"] == 3 and spy["buckets"] == 0


def test_gzip_run_and_comments_and_blank_lines(tmp_path, capsysbinary):
    qrels, run = _random_files(tmp_path, shuffled=False)
    lines = run.read_bytes().split(b"\n")
    lines[40:40] = [b"", b"  # an indented comment", b""]
    gz = tmp_path / "r.txt.gz"
    gz.write_bytes(gzip.compress(b"\n".join(lines)))
    argv = ["-q", "-m", "all_trec", str(qrels)]
    assert _out(TINY + argv + [str(gz)], capsysbinary) == _out(argv + [str(run)], capsysbinary)


@pytest.mark.parametrize("shuffled", [False, True], ids=["grouped", "shuffled"])
def test_a_malformed_line_is_named_by_its_line_in_the_file(shuffled, tmp_path, capsysbinary):
    qrels, run = _random_files(tmp_path, shuffled=shuffled)
    lines = run.read_text().splitlines()
    lines[1500] = "q5 Q0 D1 1"  # far beyond the first block
    run.write_text("\n".join(lines) + "\n")
    code = main(TINY + [str(qrels), str(run)])
    err = capsysbinary.readouterr().err.decode()
    assert code == 2
    assert "1 malformed lines" in err and "line 1501:" in err


@pytest.mark.parametrize("shuffled", [False, True], ids=["grouped", "shuffled"])
def test_temporary_files_are_removed_on_success_and_on_error(shuffled, tmp_path, monkeypatch, capsysbinary):
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    qrels, run = _random_files(tmp_path, shuffled=shuffled)
    _out(TINY + ["-q", str(qrels), str(run)], capsysbinary)
    assert list(scratch.iterdir()) == []
    lines = run.read_text().splitlines()
    lines[900] = "q5 Q0 D1 1"
    run.write_text("\n".join(lines) + "\n")
    assert main(TINY + [str(qrels), str(run)]) == 2
    assert list(scratch.iterdir()) == []


def test_bad_memory_budget_is_a_user_error(capsys):
    code = main(["--memory-budget", "lots", str(DATA / "qrels.test"), str(DATA / "results.test")])
    cap = capsys.readouterr()
    assert code == 2 and cap.out == ""
    assert "--memory-budget must be a size such as 2GiB or 500MB, got 'lots'" in cap.err


def test_a_file_of_several_runs_is_refused_in_blocks(tmp_path, capsysbinary):
    qrels, run = _random_files(tmp_path, shuffled=False)
    lines = run.read_text().splitlines()
    extra = [ln.rsplit(" ", 1)[0] + " other" for ln in lines if ln.startswith("q3 ")]
    at = max(i for i, ln in enumerate(lines) if ln.startswith("q3 "))
    run.write_text("\n".join(lines[:at + 1] + extra + lines[at + 1:]) + "\n")
    code = main(TINY + [str(qrels), str(run)])
    err = capsysbinary.readouterr().err.decode()
    assert code == 2 and "trec_eval evaluates one run per file" in err


@pytest.mark.parametrize("threads", [1, 2])
def test_a_block_is_freed_before_the_next_is_read(threads, tmp_path, monkeypatch, capsysbinary):
    """A block's judged table is freed when the block is scored: left to the collector's
    own pace, blocks piled up (about 100 MB each on 300k rows; the table's cached
    intermediates refer back to it, and a collection run by one thread while another's
    table was in use moved that table to the oldest generation).  On threads, the blocks
    in flight are alive, no more."""
    import gc
    import weakref

    from evalframe import ranking
    qrels, run = _random_files(tmp_path, shuffled=False)
    refs, alive = [], []
    judge, read = ranking.judge, scoring._block_run

    def judged(*a, **k):
        out = judge(*a, **k)
        refs.append(weakref.ref(out))
        gc.collect(1)  # a collection another block's thread runs while this table is in use
        return out

    def block_run(*a, **k):
        alive.append(sum(r() is not None for r in refs))
        return read(*a, **k)
    monkeypatch.setattr(ranking, "judge", judged)
    monkeypatch.setattr(scoring, "_block_run", block_run)
    gc.disable()  # the collector's own passes, which come at their own pace, are off
    try:
        _out(TINY + ["--threads", str(threads), "-q", "-m", "all_trec", str(qrels), str(run)], capsysbinary)
    finally:
        gc.enable()
    assert len(alive) >= 5 and max(alive) <= (0 if threads == 1 else threads)  # on threads: the blocks in flight


def test_a_gzip_run_without_its_extension_is_read_in_blocks_as_whole(tmp_path, capsysbinary):
    """The block reader tells gzip by its first bytes, as the whole-file reader does."""
    qrels, run = _random_files(tmp_path, shuffled=False)
    gz = tmp_path / "r.run"
    gz.write_bytes(gzip.compress(run.read_bytes()))
    argv = ["-q", "-m", "all_trec", str(qrels)]
    assert _out(TINY + argv + [str(gz)], capsysbinary) == _out(argv + [str(run)], capsysbinary)


def test_fields_after_the_sixth_are_ignored_in_blocks_too(spy, tmp_path, capsysbinary):
    """A run whose lines (some, in later blocks) carry fields after the sixth, read in
    blocks: trec_eval ignores them, so the output is the conformance file's; each block
    is read as it is first, and only blocks with such lines are cut."""
    lines = (DATA / "results.test").read_text().splitlines()
    run = tmp_path / "run.txt"
    run.write_text("\n".join(ln + (" extra fields" if i % 997 == 5 else "") for i, ln in enumerate(lines)) + "\n")
    assert _out(TINY + ["-q", "-m", "all_trec", str(DATA / "qrels.test"), str(run)], capsysbinary) \
        == (DATA / "out.test.aq").read_bytes()
    assert spy["blocks"] > 1


def test_sigterm_during_the_bucket_pass_removes_the_temporary_files(tmp_path):
    """SIGTERM (sent by the process itself after the first bucket write): the bucket
    directory is removed and the process ends by the signal, as on Ctrl-C."""
    import signal
    import sys
    qrels, run = _random_files(tmp_path, shuffled=True)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    script = f"""
import os, signal, sys
from evalframe import trec_eval
from evalframe.trec_eval import scoring
from evalframe.engine import budget as sizing
sizing.MIN_BATCH_ROWS = 100
write = scoring._write_buckets
def then_term(*a, **k):
    write(*a, **k)
    assert os.listdir({str(scratch)!r}), "a bucket directory exists"
    os.kill(os.getpid(), signal.SIGTERM)
scoring._write_buckets = then_term
sys.exit(trec_eval.main({TINY + ["-q", str(qrels), str(run)]!r}))
"""
    done = subprocess.run([sys.executable, "-c", script], env={**os.environ, "TMPDIR": str(scratch)},
                          capture_output=True, timeout=120)
    assert done.returncode == -signal.SIGTERM, done.stderr[-2000:]
    assert list(scratch.iterdir()) == []


# ---------------------------------------------------------------- blocks on threads
@pytest.fixture
def threaded_blocks(monkeypatch):
    """Files of any size are cut into blocks for the threads (not only those of 125,000 lines a thread)."""
    monkeypatch.setattr(scoring, "THREADED_BLOCK_LINES", 50)


@pytest.mark.parametrize("expected", list(COMMANDS))
@pytest.mark.parametrize("threads", [2, 3])
def test_conformance_files_in_blocks_on_threads(expected, threads, threaded_blocks, spy, capsysbinary):
    argv = _argv(COMMANDS[expected])
    assert _out(["--threads", str(threads)] + argv, capsysbinary) == (DATA / expected).read_bytes()
    questions = [line.split()[0] for line in Path(argv[-1]).read_bytes().splitlines() if line.strip()]
    grouped = sum(a != b for a, b in zip(questions, questions[1:])) + 1 == len(set(questions))
    # cut for the threads, though the budget holds the file; one not grouped (results.trunc) read whole
    assert spy["blocks"] >= 2 if grouped else spy["blocks"] == 0
    assert _out(TINY + ["--threads", str(threads)] + argv, capsysbinary) == (DATA / expected).read_bytes()


@pytest.mark.parametrize("shuffled", [False, True], ids=["grouped", "shuffled"])
@pytest.mark.parametrize("flags", FLAGS)
def test_random_runs_on_threads_give_the_one_thread_output(flags, shuffled, tmp_path, threaded_blocks, spy,
                                                           capsysbinary):
    qrels, run = _random_files(tmp_path, shuffled=shuffled, latin1=True)
    argv = shlex.split(flags) + [str(qrels), str(run)]
    want = _out(["--threads", "1"] + argv, capsysbinary)
    assert spy["blocks"] == 0  # one thread: read whole
    for threads in ("2", "4"):
        assert _out(["--threads", threads] + argv, capsysbinary) == want
    assert spy["blocks"] >= 4 if not shuffled else spy["blocks"] == 0  # the budget holds it: a shuffled one read whole
    assert spy["buckets"] == 0
    assert _out(TINY + ["--threads", "2"] + argv, capsysbinary) == want  # larger than the budget
    assert (spy["buckets"] > 0) == shuffled


def test_a_shuffled_file_cut_for_the_threads_is_read_whole(tmp_path, threaded_blocks, spy, monkeypatch,
                                                           capsysbinary):
    """A file the budget holds, cut only for the threads, is read whole (the one-thread
    output) when it is not grouped by question: at once when its first lines say so; else
    the first block whose questions interleave ends the blocks before any is scored."""
    qrels, run = _random_files(tmp_path, shuffled=True)
    argv = ["-q", "-m", "all_trec", str(qrels), str(run)]
    want = _out(["--threads", "1"] + argv, capsysbinary)
    assert _out(["--threads", "2"] + argv, capsysbinary) == want
    assert spy["blocks"] == 0  # its first lines meet a question again: no block read

    (tmp_path / "grouped").mkdir()
    _, grouped = _random_files(tmp_path / "grouped", shuffled=False)
    lines = grouped.read_text(encoding="latin-1").splitlines()
    head, rest = lines[:3], lines[3:]  # grouped in its first three lines only
    rest = [rest[i] for i in np.random.default_rng(5).permutation(len(rest))]
    run.write_text("\n".join(head + rest) + "\n", encoding="latin-1")
    monkeypatch.setattr(scoring, "HEAD_BYTES", len("\n".join(head)) + 1)
    want = _out(["--threads", "1"] + argv, capsysbinary)
    scored = []
    real = scoring.score_run

    def counted(*a, **k):
        scored.append(k.get("block", False))
        return real(*a, **k)
    monkeypatch.setattr(scoring, "score_run", counted)
    monkeypatch.setattr(command, "score_run", counted)
    golden_reads = []
    read_golden = files.read_golden_file

    def golden_counted(*a, **k):
        golden_reads.append(a)
        return read_golden(*a, **k)
    monkeypatch.setattr(files, "read_golden_file", golden_counted)
    monkeypatch.setattr(scoring, "read_golden_file", golden_counted)
    assert _out(["--threads", "2"] + argv, capsysbinary) == want
    assert spy["blocks"] >= 1 and spy["buckets"] == 0
    assert scored == [False]  # no block scored: the whole file, once
    assert len(golden_reads) == 1  # the golden set read by the blocks is kept for the whole file


@pytest.mark.parametrize("shuffled", [False, True], ids=["grouped", "shuffled"])
def test_on_threads_a_malformed_line_is_the_same_error(shuffled, tmp_path, threaded_blocks, capsysbinary):
    qrels, run = _random_files(tmp_path, shuffled=shuffled)
    lines = run.read_text().splitlines()
    lines[1500] = "q5 Q0 D1 1"
    lines[2200] = "q6 Q0 D1"
    run.write_text("\n".join(lines) + "\n")
    errors = []
    for threads in ("1", "2", "3"):
        assert main(TINY + ["--threads", threads, str(qrels), str(run)]) == 2
        errors.append(capsysbinary.readouterr().err)
    assert errors[1] == errors[0] and errors[2] == errors[0] and b"line 1501:" in errors[0]


@pytest.mark.parametrize("threads", ["1", "2"])
def test_when_both_files_are_malformed_the_golden_sets_error_comes_first(tmp_path, threads, threaded_blocks,
                                                                         capsysbinary):
    """trec_eval reads the golden set first: its error is the one given, whether the run is
    read whole (one thread) or in blocks while the golden set is read (two)."""
    qrels, run = _random_files(tmp_path, shuffled=False)
    lines = run.read_text().splitlines()
    lines[3] = lines[3].split()[0] + " Q0 D1"  # (its question's: the file stays grouped)
    run.write_text("\n".join(lines) + "\n")
    qlines = qrels.read_text().splitlines()
    qlines[2] = "q1 0 D1"
    qrels.write_text("\n".join(qlines) + "\n")
    assert main(["--threads", threads, str(qrels), str(run)]) == 2
    err = capsysbinary.readouterr().err
    assert b"golden set (qrels)" in err and b"line 3:" in err and b"run:" not in err


def _grouped_lines(tmp_path):
    qrels, run = _random_files(tmp_path, shuffled=False)
    return qrels, run, run.read_text(encoding="latin-1").splitlines()


def test_on_threads_a_question_met_again_after_a_blocks_error_is_read_whole(tmp_path, threaded_blocks, spy,
                                                                              monkeypatch, capsysbinary):
    """A block holding the first part of a question that comes back at the end of the file:
    within -M's cutoff that part lists a document twice, the whole question does not (its
    last lines rank first).  The block's error is not raised: the file is read whole, as
    with one thread (review of this change: exit 2 'duplicate docs' before)."""
    qrels, run, lines = _grouped_lines(tmp_path)
    first = lines[0].split()[0]
    part = [ln for ln in lines if ln.split()[0] == first]
    rest = [ln for ln in lines if ln.split()[0] != first]
    part = part[:3] + [f"{first} Q0 DUP 4 -1.0 r", f"{first} Q0 DUP 5 -1.0 r"]
    late = [f"{first} Q0 TOP{i} 1 99.0 r" for i in range(3)]
    run.write_text("\n".join(part + rest + late) + "\n", encoding="latin-1")
    monkeypatch.setattr(scoring, "HEAD_BYTES", 400)  # the file's first lines look grouped: cut into blocks
    argv = ["-q", "-M", "5", "-m", "all_trec", str(qrels), str(run)]
    want = _out(["--threads", "1"] + argv, capsysbinary)
    assert _out(["--threads", "2"] + argv, capsysbinary) == want  # (_out: exit status 0)
    assert spy["blocks"] >= 2 and spy["buckets"] == 0


def test_on_threads_malformed_lines_in_several_blocks_are_the_whole_files_error(tmp_path, threaded_blocks, spy,
                                                                                 capsysbinary):
    """Malformed lines in two blocks of a grouped file: the error counts and shows both, as
    with one thread (each block counted its own before)."""
    qrels, run, lines = _grouped_lines(tmp_path)
    for i in (40, len(lines) - 40):
        lines[i] = lines[i].split()[0] + " Q0 D1"  # (its question's: the file stays grouped)
    run.write_text("\n".join(lines) + "\n", encoding="latin-1")
    errors = []
    for threads in ("1", "2", "3"):
        assert main(["--threads", threads, str(qrels), str(run)]) == 2
        errors.append(capsysbinary.readouterr().err)
    assert errors[1] == errors[0] and errors[2] == errors[0]
    assert b"2 malformed lines" in errors[0] and spy["blocks"] >= 2


def test_comment_lines_between_questions_keep_a_file_grouped(tmp_path, threaded_blocks, spy, capsysbinary):
    """Comment lines (trec_eval skips a run line starting with '#') between the questions of
    a grouped file: it is still cut into blocks for the threads."""
    qrels, run, lines = _grouped_lines(tmp_path)
    out, previous = [], None
    for ln in lines:
        if ln.split()[0] != previous:
            out.append("# next question")
            previous = ln.split()[0]
        out.append(ln)
    run.write_text("\n".join(out) + "\n", encoding="latin-1")
    argv = ["-q", "-m", "all_trec", str(qrels), str(run)]
    want = _out(["--threads", "1"] + argv, capsysbinary)
    assert _out(["--threads", "2"] + argv, capsysbinary) == want
    assert spy["blocks"] >= 2


def test_a_bad_thread_count_is_a_user_error(capsys):
    code = main(["--threads", "0", str(DATA / "qrels.test"), str(DATA / "results.test")])
    cap = capsys.readouterr()
    assert code == 2 and cap.out == ""
    assert "threads must be an int >= 1, got 0" in cap.err
