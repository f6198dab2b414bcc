"""``evalframe.engine.text_blocks``: blocks of whole questions, a question met again, and the
bucket pass, each against a plain Python loop over the file's lines (``bytes.split()``,
a set of the ids seen), on random files with random block sizes."""
from __future__ import annotations

import gzip
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from evalframe.engine.cutting import question_buckets
from evalframe.engine.partition import evaluate_part
from evalframe.engine.text_blocks import (SeenQuestions, bucket_files, line_questions, question_blocks,
                                          write_buckets)


def _random_file(rng, *, grouped: bool, trailing_newline: bool = True) -> bytes:
    """A run file: questions of 1-40 lines (ids of 1-12 bytes, some latin-1, some alike
    in their first bytes), comments, blank lines, leading and odd separators."""
    questions = [b"q%d" % q + (b"\xe9" * int(q % 4 == 0)) + b"x" * int(rng.integers(0, 10))
                 for q in range(int(rng.integers(1, 60)))]
    rows = []
    for q in questions:
        rows += [(q, d) for d in range(int(rng.integers(1, 40)))]
    if not grouped:
        rows = [rows[i] for i in rng.permutation(len(rows))]
    lines = []
    for q, d in rows:
        r = rng.random()
        if r < 0.03:
            lines.append(b"")
        elif r < 0.06:
            lines.append(b"  # a comment " + q)
        sep = [b" ", b"\t", b" \t ", b"\x0b"][int(rng.integers(0, 4))]
        lead = b"" if rng.random() < 0.9 else b" \t"
        lines.append(lead + sep.join([q, b"Q0", b"D%d" % d, b"%d" % d, b"%.3f" % rng.random(), b"tag"]))
    data = b"\n".join(lines)
    return data + b"\n" if trailing_newline else data


def _data_ids(data: bytes) -> list[bytes]:
    """The question id of each data line (the loop the tests trust)."""
    return [f[0] for f in (line.split() for line in data.split(b"\n")) if f and not f[0].startswith(b"#")]


def _write(tmp_path, data: bytes, *, gz: bool = False) -> str:
    path = tmp_path / ("run.gz" if gz else "run")
    path.write_bytes(gzip.compress(data) if gz else data)
    return str(path)


@pytest.mark.parametrize("seed", range(12))
def test_line_questions_are_the_first_fields(seed):
    rng = np.random.default_rng(seed)
    data = _random_file(rng, grouped=bool(seed % 2), trailing_newline=bool(seed % 3))
    q = line_questions(data)
    lines = data.split(b"\n")
    if data.endswith(b"\n"):
        lines = lines[:-1]
    want = [(line.split() or [b""])[0] for line in lines]
    assert q.ids.cast(pa.large_binary()).to_pylist() == want
    assert q.data.tolist() == [bool(w) and not w.startswith(b"#") for w in want]
    assert q.ends.tolist() == np.cumsum([len(line) + 1 for line in lines]).clip(max=len(data)).tolist()


@pytest.mark.parametrize("seed", range(20))
def test_blocks_hold_whole_questions(seed, tmp_path):
    """Blocks put back together are the file; their line numbers are the file's; a
    question's run of lines is never split; a grouped file's questions each sit in one
    block; a block is no larger than the size asked, a line and a question."""
    rng = np.random.default_rng(seed)
    grouped = seed % 4 != 3
    data = _random_file(rng, grouped=grouped, trailing_newline=bool(seed % 5))
    size = int(rng.integers(1, 3000))
    blocks = list(question_blocks(_write(tmp_path, data, gz=seed % 3 == 0), size))
    assert b"".join(b for b, _ in blocks).strip() == data.strip()
    line = 1
    for b, first in blocks:
        assert first == line
        line += b.count(b"\n")
    ids = [_data_ids(b) for b, _ in blocks]
    for before, after in zip(ids, ids[1:]):  # the cut falls between two questions
        assert before and after and before[-1] != after[0]
    if grouped:
        owner = {}
        for i, block_ids in enumerate(ids):
            for q in block_ids:
                assert owner.setdefault(q, i) == i, q
    longest_line = max(len(x) for x in data.split(b"\n")) + 1
    by_question: dict[bytes, int] = {}
    for x in data.split(b"\n"):
        f = x.split()
        if f:
            by_question[f[0]] = by_question.get(f[0], 0) + len(x) + 1
    assert max(len(b) for b, _ in blocks) <= size + longest_line + max(by_question.values()) + 64
    if len(data) > 4 * (size + longest_line + max(by_question.values())):
        assert len(blocks) > 1


def _loop_blocks(data: bytes, size: int) -> list[tuple[bytes, int]]:
    """The blocks cut by a loop over lines: read ``size`` bytes, to the end of a line; cut
    after the last data line whose question is not the last data line's."""
    from evalframe._text_tables import line_blocks
    import io
    out, carry, line = [], b"", 1
    for block in line_blocks(io.BytesIO(data), size):
        block = carry + block
        lines = block.splitlines(keepends=True)
        ids = [(x.split() or [b""])[0] for x in lines]
        data_rows = [i for i, q in enumerate(ids) if q and not q.startswith(b"#")]
        other = [i for i in data_rows if ids[i] != ids[data_rows[-1]]] if data_rows else []
        if not other:
            carry = block
            continue
        cut = sum(len(x) for x in lines[:other[-1] + 1])
        out.append((block[:cut], line))
        line += block[:cut].count(b"\n")
        carry = block[cut:]
    if carry.strip():
        out.append((carry, line))
    return out


@pytest.mark.parametrize("seed", range(30))
def test_blocks_are_the_loops(seed, tmp_path, monkeypatch):
    """The blocks are those of a loop over lines, however little of a block's end is
    read first (the search for the last question's start grows from there)."""
    from evalframe.engine import text_blocks
    rng = np.random.default_rng(seed)
    data = _random_file(rng, grouped=seed % 3 != 0, trailing_newline=bool(seed % 4))
    monkeypatch.setattr(text_blocks, "_TAIL", int(rng.integers(1, 400)))
    size = int(rng.integers(1, 4000))
    assert list(question_blocks(_write(tmp_path, data), size)) == _loop_blocks(data, size)


@pytest.mark.parametrize("seed", range(20))
def test_a_question_met_again_is_detected(seed, tmp_path):
    """SeenQuestions says "met again" at the first block holding a question of an earlier
    block, as a set of the ids seen says."""
    rng = np.random.default_rng(seed)
    data = _random_file(rng, grouped=seed % 2 == 0)
    seen, loop, first_true, want = SeenQuestions(), set(), None, None
    for i, (b, _) in enumerate(question_blocks(_write(tmp_path, data), int(rng.integers(50, 2000)))):
        q = line_questions(b)
        ids = q.ids.filter(pa.array(q.data))
        block_ids = set(_data_ids(b))
        if want is None and block_ids & loop:
            want = i
        loop |= block_ids
        if first_true is None and seen.met_again(ids):
            first_true = i
    assert first_true == want
    if seed % 2 == 0:
        assert want is None


def test_a_question_split_across_the_file_is_detected(tmp_path):
    data = b"".join(b"%s Q0 D%d %d 1.0 t\n" % (q, d, d) for q in (b"a", b"b", b"c", b"a") for d in range(30))
    seen = SeenQuestions()
    met = [seen.met_again(line_questions(b).ids) for b, _ in question_blocks(_write(tmp_path, data), 200)]
    assert met[-1] and not any(met[:-1])


@pytest.mark.parametrize("seed", range(10))
def test_bucket_files_hold_each_question_once(seed, tmp_path):
    """Every line lands in exactly one bucket file, a question's lines all in one, in the
    file's order; the bucket is question_buckets' (the one hash of every engine); the last
    data line is the file's."""
    rng = np.random.default_rng(seed)
    data = _random_file(rng, grouped=False, trailing_newline=bool(seed % 2))
    path = _write(tmp_path, data, gz=seed % 3 == 0)
    (tmp_path / "buckets").mkdir()
    n = int(rng.integers(1, 9))
    buckets = bucket_files(path, int(rng.integers(1, 1500)), str(tmp_path / "buckets"), n)
    assert len(buckets.paths) == n
    held = [Path(p).read_bytes() for p in buckets.paths]
    lines = [x for x in data.split(b"\n") if x]
    assert sorted(x for h in held for x in h.split(b"\n") if x) == sorted(lines)
    owner = {}
    for b, h in enumerate(held):
        for q in set(_data_ids(h)):
            assert owner.setdefault(q, b) == b, q
        for q in set(_data_ids(h)):  # in their order
            assert [x for x in h.split(b"\n") if x.split()[:1] == [q]] == [x for x in lines if x.split()[:1] == [q]]
    utf8 = [q for q in owner if b"\xe9" not in q]
    assert [owner[q] for q in utf8] == question_buckets(pa.array([q.decode() for q in utf8]), n).tolist()
    assert buckets.last_line == [x for x in lines if x.split() and not x.split()[0].startswith(b"#")][-1].strip()


def test_bucket_files_close_every_file_on_error(tmp_path):
    data = b"".join(b"q%d Q0 D%d 1 1.0 t\n" % (q % 7, q) for q in range(100))
    path = _write(tmp_path, data)
    opened = []

    def failing(block, files):
        opened.extend(files)
        write_buckets(block, files)
        raise OSError("disk full")
    with pytest.raises(OSError, match="disk full"):
        bucket_files(path, 300, str(tmp_path), 4, write=failing)
    assert opened and all(f.closed for f in opened)


def test_the_commands_read_a_header_line_with_a_question_larger_than_a_block(tmp_path, capsys, monkeypatch):
    """A text run with a header line whose first question fills blocks: the header is read
    with the lines after it (alone, it would be an empty run)."""
    from evalframe.cli import main
    from evalframe.engine import budget as sizing
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"q{q} 0 d{d} {d % 3}\n" for q in range(3) for d in range(0, 400, 9)))
    run = tmp_path / "run.txt"
    run.write_text("query_id doc_id score\n" + "".join(f"q{q} d{d} {1 / (d + 1):.6f}\n"
                                                       for q in range(3) for d in range(400)))

    def out(*extra):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            status = main(["evaluate", str(qrels), str(run), "-q", "--format", "csv", "-m", "AP", "nDCG@10", *extra])
        cap = capsys.readouterr()
        assert status == 0, cap.err
        return cap.out
    whole = out()
    monkeypatch.setattr(sizing, "TEXT_BLOCK_BYTES", 1000)
    assert out("--memory-budget", "1KB") == whole


def _trec_lines(frame) -> str:
    return "".join(f"{q} Q0 {d} {r} {x!r} {t}\n" for q, d, r, x, t in
                   frame[["query_id", "doc_id", "rank", "score", "system"]].itertuples(index=False))


@pytest.mark.parametrize("layout", ["grouped", "shuffled", "gzipped", "two tags"])
def test_evaluate_streams_a_text_run_larger_than_the_budget(layout, tmp_path, monkeypatch):
    """evaluate() on a TREC text run file larger than memory_budget reads it in blocks of whole
    questions (TextRun) through the streaming engine: the in-memory table, bit for bit."""
    import gzip

    import evalframe as ef
    from evalframe.engine import budget as sizing
    from evalframe.engine import assembly
    from evalframe.engine.choice import choose
    ds = ef.datasets.load_cranfield()
    systems = list(pd.unique(ds.runs.system))[:2 if layout == "two tags" else 1]
    runs = ds.runs[ds.runs.system.isin(systems)].reset_index(drop=True)
    runs = runs.assign(rank=runs.groupby(["system", "query_id"]).cumcount() + 1)
    if layout == "shuffled":
        runs = runs.sample(frac=1, random_state=3)
    text = _trec_lines(runs)
    path = tmp_path / ("run.txt.gz" if layout == "gzipped" else "run.txt")
    path.write_bytes(gzip.compress(text.encode()) if layout == "gzipped" else text.encode())
    measures = ["AP", "nDCG@10", "P@5", "RR"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        whole = ef.evaluate(str(path), ds.qrels, measures)
        budget = sizing.text_run_rows(str(path)) * sizing.WHOLE_BYTES_PER_ROW - 1
        assert choose(str(path), memory_budget=budget).name == "streaming"
        parts = []
        monkeypatch.setattr(assembly, "evaluate_part", lambda *a, **k: parts.append(1) or evaluate_part(*a, **k))
        monkeypatch.setattr(sizing, "plan_batch_rows", lambda *a, **k: 2000)  # many parts
        got = ef.evaluate(str(path), ds.qrels, measures, memory_budget=budget)
    assert len(parts) > 3
    pd.testing.assert_frame_equal(got, whole)


def test_a_dict_of_text_runs_and_datasets_is_streamed(tmp_path, monkeypatch):
    import evalframe as ef
    from evalframe.engine import budget as sizing
    from evalframe.engine.choice import choose
    ds = ef.datasets.load_cranfield()
    a, b = list(pd.unique(ds.runs.system))[:2]
    ra = ds.runs[ds.runs.system == a].assign(rank=1)
    (tmp_path / "a.txt").write_text(_trec_lines(ra))
    ds.runs[ds.runs.system == b].drop(columns="system").to_parquet(tmp_path / "b.parquet")
    source = {"A": str(tmp_path / "a.txt"), "B": str(tmp_path / "b.parquet")}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        whole = ef.evaluate(source, ds.qrels, ["AP", "P@5"])
        assert choose(source, memory_budget=1).name == "streaming"
        monkeypatch.setattr(sizing, "plan_batch_rows", lambda *a, **k: 2000)
        got = ef.evaluate(source, ds.qrels, ["AP", "P@5"], memory_budget=1)
    pd.testing.assert_frame_equal(got, whole)


def test_a_text_run_block_with_a_malformed_line_names_where_it_starts(tmp_path):
    """A malformed line in a later block: the error says from which line of the file the block's
    line numbers count."""
    import evalframe as ef
    from evalframe.engine.text_blocks import TextRun
    lines = [f"q{q} Q0 d{d} {d + 1} {1.0 / (d + 1)} r\n" for q in range(40) for d in range(20)]
    lines[700] = "q35 Q0 broken\n"
    path = tmp_path / "run.txt"
    path.write_text("".join(lines))
    with pytest.raises(ef.EvalframeInputError, match="count from line "):
        list(TextRun(path).tables(4096))
