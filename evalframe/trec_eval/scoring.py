"""Scoring a run as trec_eval does: judged and measured by evalframe's own steps, ``-c``'s
one-document rankings for unanswered questions, trec_eval 10's duplicate check, and runs
larger than ``--memory-budget`` scored a block of whole questions at a time
(:mod:`evalframe.engine.text_blocks`).
"""
from __future__ import annotations

import gc
import os
from pathlib import Path
import numpy as np
from .. import _arrow_compute as pc
from .._arrow_numpy import arrow_of, repeated_text
from .._id_codes import is_arrow
from .files import ENCODING, read_golden_file, read_run_bytes, refuse_malformed
from .output import relstrings


#: the document trec_eval -c ranks for a question the run does not answer
PLACEHOLDER_DOC = "ceci_nest_pas_un_docno"


def with_placeholders(run, qrels):
    """trec_eval -c: each golden-set question the run does not answer gets a
    one-document ranking (an unjudged document, score 1); returns the run (the
    CheckedRun ``run`` itself when it answers them all, else its table with those
    rows) and the ids of those questions (Arrow strings)."""
    missing = _unanswered(qrels.query.dictionary, run.query.dictionary)
    if len(missing) == 0:
        return run, missing
    extra = _placeholder_rows(missing)
    if is_arrow(run.data):
        import pyarrow as pa
        schema = run.data.schema
        extra = pa.Table.from_arrays([pc.cast(extra.column(f.name), f.type) for f in schema], schema=schema)
        return pa.concat_tables([run.data, extra]), missing
    import pandas as pd

    from ..canonical import arrow_table_frame
    frame = run.frame
    extra = arrow_table_frame(extra).astype({c: frame[c].dtype for c in ("query_id", "doc_id")})
    if "rank" in frame:
        extra["rank"] = 1
    return pd.concat([frame, extra[frame.columns]], ignore_index=True), missing


def _unanswered(golden, answered):
    """The distinct golden-set question ids (Arrow strings, in golden-set order) not among
    the Arrow strings ``answered``."""
    return pc.filter(golden, pc.invert(pc.is_in(golden, value_set=pc.cast(answered, golden.type))))


def _placeholder_rows(missing):
    """trec_eval -c's one-document ranking for each question of ``missing``: an Arrow
    table ``query_id, doc_id, score``."""
    import pyarrow as pa
    return pa.table({"query_id": missing, "doc_id": repeated_text(PLACEHOLDER_DOC, len(missing), missing.type),
                     "score": arrow_of(np.ones(len(missing)))})


def cleared_on_placeholder(name: str) -> bool:
    """The values trec_eval 10 resets after scoring a placeholder ranking: the
    ones named exactly num_ret, utility, relstring or rbp_resid, and unj*.  A
    value with parameters in its name (relstring_5, utility_2,-1,0,0,
    rbp_resid_p=0.5) keeps its placeholder value, as in trec_eval."""
    return name in ("num_ret", "utility", "relstring", "rbp_resid") or name.startswith("unj")


def score_run(opts, measures: list, rel_len: int | None, run, qrels, *, block: bool = False):
    """One run table's questions: their ids (an Arrow string array), their values
    of ``measures`` (questions x measures) and their relevance strings (or None).
    A ``block`` of a larger run keeps only its own questions (-c's other golden-set
    questions are another block's, or placeholders)."""
    from ..measures import compute
    from ..ranking import judge
    if getattr(run, "repeats", None) is not None:
        refuse_repeats_evaluated(run, qrels, opts["depth"])
    missing = "zero" if opts["c"] and not block else "drop"
    J = judge(run, qrels, missing=missing, depth=opts["depth"], warn=False)
    V = J.condensed if opts["J"] else J
    values = compute(V, measures) if measures else np.zeros((V.n_groups, 0))
    rel_str = relstrings(V, rel_len) if rel_len is not None else None
    J.release()  # freed on return: no reference cycle left for the collector
    return _arrow_ids(J.group_ids["query_id"]), values, rel_str


def refuse_repeats_evaluated(run, qrels, depth: int | None) -> None:
    """trec_eval 10's duplicate check (form_res_rels.c): a golden-set question's lines
    sorted by score (docno descending on ties), the first ``depth`` (-M) kept, and a
    docno listed twice among them stops the program.  Repeats anywhere else (below
    the cutoff, or in a question the golden set lacks) are never looked at; the run
    keeps each document's best-ranked line, which is the line trec_eval ranks."""
    import pandas as pd
    repeats = run.repeats
    asked = pd.unique(repeats["query_id"].to_numpy(dtype=object))
    asked = asked[pd.Series(asked).isin(qrels.frame["query_id"]).to_numpy()]
    if not len(asked):
        return
    cols = ["query_id", "doc_id", "score"]
    frame = run.frame[cols]
    rows = pd.concat([frame[frame["query_id"].isin(asked)], repeats[cols][repeats["query_id"].isin(asked)]],
                     ignore_index=True)
    # trec_eval's order: score descending, then docno descending (strcmp: bytes, as read)
    rows = rows.sort_values(["query_id", "score", "doc_id"], ascending=[True, False, False], kind="stable")
    if depth is not None:
        rows = rows[rows.groupby("query_id", sort=False).cumcount().to_numpy() < depth]
    twice = rows.duplicated(["query_id", "doc_id"]).to_numpy()
    if twice.any():
        from ..errors import EvalframeInputError, InputProblem
        first = rows[twice].iloc[0]
        raise EvalframeInputError("run", [InputProblem(
            f"document {first['doc_id']!r} is listed more than once for question {first['query_id']!r} within "
            f"the ranking evaluated ({int(twice.sum())} such repeats; trec_eval 10 stops on them: "
            f"\"duplicate docs {first['doc_id']}\")",
            "remove the repeated lines (evalframe evaluate --duplicates max keeps each document's highest "
            "score); a repeat below the -M cutoff, or in a question the golden set lacks, is ignored as "
            "trec_eval ignores it")])


def _arrow_ids(query_id):
    """Question ids as one Arrow string array."""
    import pyarrow as pa
    ids = pc.cast(query_id, pa.string()) if isinstance(query_id, (pa.Array, pa.ChunkedArray)) \
        else pa.array(query_id, pa.string())
    return ids.combine_chunks() if isinstance(ids, pa.ChunkedArray) else ids


def larger_than(run_path: str, budget: int) -> bool:
    from ..engine.budget import WHOLE_FILE_BYTES_PER_LINE, text_run_rows
    return text_run_rows(run_path) * WHOLE_FILE_BYTES_PER_LINE > budget


#: lines of a run file per thread from which it is scored in blocks on threads (``threads``
#: > 1), though it fits the budget: each block costs a few milliseconds of its own, and
#: blocks hold less memory at once than the whole file (fewer pages touched).  Measured with
#: benchmarks/bench_trec_eval.py (2 threads, 10000x100, -m all_trec, --repeat 5, interleaved):
#: 500,000 lines a thread (the file read whole) 1.07 s, 310 MiB; 125,000 (four blocks of
#: 227,000 lines) 0.95 s, 253 MiB
THREADED_BLOCK_LINES = 125_000


def in_blocks(run_path: str, budget: int, threads: int) -> bool:
    """Whether ``run_path`` is scored in blocks: larger than ``budget``, or worth cutting
    for ``threads`` threads (at least ``THREADED_BLOCK_LINES`` lines per thread) and
    grouped by question as far as its first lines tell (:func:`_head_grouped`)."""
    from ..engine.budget import text_run_rows
    return larger_than(run_path, budget) or (threads > 1 and text_run_rows(run_path) >= THREADED_BLOCK_LINES * threads
                                             and _head_grouped(run_path))


#: bytes of a run file's first lines :func:`_head_grouped` looks at
HEAD_BYTES = 1 << 16


def _head_grouped(run_path: str) -> bool:
    """Whether each question of the run file's first lines (:data:`HEAD_BYTES`) has its
    lines together, as in a file grouped by question: a shuffled file's first lines
    meet a question again after another (blocks would be read, then dropped, before the
    file is read whole)."""
    from .._text_tables import open_binary
    with open_binary(run_path) as f:
        head = f.read(HEAD_BYTES)
    firsts = [line.split(None, 1)[0] for line in head.split(b"\n")[:-1] if line.strip()]  # (the last may be cut)
    firsts = [f for f in firsts if not f.startswith(b"#")]  # comment lines (trec_eval's rule for runs)
    changes = sum(a != b for a, b in zip(firsts, firsts[1:]))
    return changes + 1 <= len(set(firsts)) or not firsts


def _block_bytes(budget: int, golden_rows: int, threads: int = 1) -> int:
    """Bytes of run file per block: the rows :func:`evalframe.engine.budget.plan_batch_rows`
    gives the budget after the golden set held (the per-question values, 8 bytes per
    question and measure, are small beside a block's rows), shared by the blocks in flight
    on ``threads`` threads and the next one read."""
    from ..engine.budget import BLOCK_BYTES_PER_LINE, MIN_BLOCK_BYTES, TEXT_BYTES_PER_ROW, plan_batch_rows
    rows = plan_batch_rows(budget, golden_rows=golden_rows, out_rows=0, bytes_per_row=BLOCK_BYTES_PER_LINE)
    return max(MIN_BLOCK_BYTES, rows // (threads + 1 if threads > 1 else 1) * TEXT_BYTES_PER_ROW)


#: lines of a block cut for the threads at most: the blocks in flight, and the next one read,
#: are what the command holds besides the golden set (about 150 bytes a line each)
THREADED_BLOCK_MAX_LINES = 1_000_000


def _threads_block_bytes(run_path: str, threads: int) -> int:
    """Bytes of run file per block for a file that fits the budget, cut for ``threads``
    threads: about two blocks per thread, of ``THREADED_BLOCK_LINES / 2`` to
    ``THREADED_BLOCK_MAX_LINES`` lines."""
    from ..engine.budget import TEXT_BYTES_PER_ROW, text_run_rows
    lines = min(max(text_run_rows(run_path) // (2 * threads), THREADED_BLOCK_LINES // 2), THREADED_BLOCK_MAX_LINES)
    return lines * TEXT_BYTES_PER_ROW


def score_in_blocks(opts, measures: list, rel_len: int | None, qrels_path: str, run_path: str, budget: int,
                    threads: int = 1):
    """:func:`score_run` over a run file larger than ``budget`` (or cut for ``threads``
    threads), a block of whole questions at a time (:mod:`evalframe.engine.text_blocks`: a run grouped by question, as run files
    are, is read once), ``threads`` blocks at once, each read and scored on its own thread;
    a question met again after its block means the file is not grouped, and the run is then
    hashed on its question ids into temporary files, each evaluated whole.  Returns the
    golden set, and the questions' (ids, values, relevance strings), the -c placeholder
    questions and the run tag.

    Those are None for a file cut only for the threads (the budget holds it whole) whose
    questions are not grouped (a block's questions interleave, or a question is met again),
    or one of whose blocks raises an error: the caller reads the run whole, as with one
    thread (faster than the partition pass, and its errors are the whole file's), with the
    golden set already read.

    The golden set is read on a thread of its own while the first blocks are read (a
    block is scored once it is read, and its errors raised after the golden set's)."""
    from concurrent.futures import ThreadPoolExecutor

    import pyarrow as pa

    from ..engine.text_blocks import question_blocks
    fits = not larger_than(run_path, budget)
    with ThreadPoolExecutor(1) as pool:
        golden = pool.submit(read_golden_file, qrels_path)
        size = _threads_block_bytes(run_path, threads) if fits else _block_bytes(budget, len(golden.result()), threads)
        scored = _Blocks(opts, measures, rel_len, golden, threads, grouped_only=fits)
        try:
            grouped = scored.grouped_pass(question_blocks(run_path, size), run_path)
        except Exception:
            golden.result()  # the golden set's error, if any, comes first
            raise
        qrels = golden.result()
    if not grouped:  # a question met again
        if fits:
            return qrels, None
        scored = _Blocks(opts, measures, rel_len, qrels)
        _score_buckets(scored, run_path, size)
    parts, seen, runid = scored.finish()
    placeholders = ()
    if opts["c"]:
        golden_ids = qrels.query.dictionary
        answered = pa.concat_arrays([pc.cast(a, golden_ids.type) for a in seen]) if seen else golden_ids[:0]
        placeholders = _unanswered(golden_ids, answered)
        if len(placeholders):
            parts.append(score_run(opts, measures, rel_len, _placeholder_rows(placeholders), qrels, block=True))
    return qrels, (_joined(parts, len(measures), rel_len), placeholders, runid)


class _Blocks:
    """The questions scored so far, block by block (:func:`score_in_blocks`)."""

    def __init__(self, opts, measures: list, rel_len: int | None, qrels, threads: int = 1, *,
                 grouped_only: bool = False):
        """``qrels``: the checked golden set, or the future of its reading (waited for
        where a block is first scored).  ``grouped_only`` (the budget holds the file): a
        block whose questions interleave (a question's lines not together) ends
        :meth:`grouped_pass` before it is scored (the file is not grouped), and so does a
        block's error (see :meth:`keep`)."""
        from ..engine.text_blocks import SeenQuestions
        self.args = (opts, measures, rel_len)
        self._qrels = qrels
        self.parts, self.seen, self.runid = [], [], ""
        self.met = SeenQuestions()
        self.unshared = None  # a block sharing no question with the golden set, while all have
        self.threads = threads
        self.grouped_only = grouped_only

    @property
    def qrels(self):
        """The checked golden set (its reading's error raised here, in every thread asking)."""
        return self._qrels.result() if hasattr(self._qrels, "result") else self._qrels

    def grouped_pass(self, blocks, run_path: str) -> bool:
        """Read and score the ``blocks`` (bytes, number of their first line), ``threads`` at
        once, kept in the file's order; False as soon as a block holds a question an
        earlier block held (the file is not grouped: what was scored is dropped)."""
        from .._threads import InOrder
        with InOrder(self.threads) as queue:
            for block, first_line in blocks:
                for done in queue.submit(self.scored, block, run_path, first_line):
                    if not self.keep(*done):
                        return False
                del block  # before the next block is read
            return all(self.keep(*done) for done in queue.drain())

    def scored(self, block: bytes, run_path: str, first_line: int | None):
        """A block read and scored (on a worker thread: nothing of ``self`` changes); an
        error is returned, to be raised where the block's turn comes (:meth:`keep`)."""
        try:
            run, tag = _block_run(block, run_path, first_line)
        except Exception as exc:  # noqa: BLE001 - raised in the file's order, by keep()
            return exc, "", None, None, None
        return self.outcome(run, tag)

    def outcome(self, run, tag: str):
        """What :meth:`keep` takes of a block read: (None, its tag, its questions, the run when
        it holds no golden-set question, its scores or the error scoring it raised)."""
        asked = _question_ids(run)
        if self.grouped_only and not _together(run.query):
            return None, tag, asked, None, _INTERLEAVED
        held = self.qrels.lookup(asked)  # Arrow strings: no Python string per id
        held = held[held >= 0]
        if not len(held):  # only run-only questions: nothing to score
            return None, tag, asked, run, None
        try:
            return None, tag, asked, None, score_run(*self.args, run, _golden_rows(self.qrels, held), block=True)
        except Exception as exc:  # noqa: BLE001 - raised after the block's questions are checked
            return None, tag, asked, None, exc

    def add(self, run) -> None:
        """Score a bucket of whole questions (the partition pass: no question is met again)."""
        self.keep(*self.outcome(run, ""), grouped=False)

    def keep(self, failed, tag: str, asked, unshared, result, *, grouped: bool = True) -> bool:
        """A block's outcome, in the file's order: its error raised; False when it holds a
        question an earlier block held (``grouped``); else its questions and values kept.

        With ``grouped_only`` (the budget holds the file) a block's error is not raised
        but False returned: the file is then read whole, which gives the one-thread
        answer (a block holding only part of a question that comes back later can fail
        where the whole question does not, -M's duplicate check; and a block counts only
        its own malformed lines or repeats)."""
        if failed is not None:
            self.qrels  # noqa: B018 - the golden set's error, if any, comes first
            if self.grouped_only:
                return False
            raise failed
        self.runid = tag or self.runid
        if grouped and (result is _INTERLEAVED or self.met.met_again(asked)):
            return False
        if isinstance(result, BaseException):
            if self.grouped_only:
                return False
            raise result
        self.seen.append(asked)
        if result is None:  # only run-only questions: nothing scored
            if not self.parts and self.unshared is None:
                self.unshared = unshared
            return True
        self.parts.append(result)
        self.unshared = None
        # a block read through pandas (one the Arrow path hands on: repeats, blanks...) leaves
        # its frames in reference cycles (pandas' block references): collected now, the young
        # generations only (a few ms), they do not pile up until the collector's next full
        # pass (100 MB a block on 300k rows)
        gc.collect(1)
        return True

    def finish(self):
        """(parts, question ids seen, run tag); a run sharing no question with the
        golden set fails as the in-memory command does."""
        opts, measures, rel_len = self.args
        if not self.parts and self.unshared is not None and not opts["c"]:
            score_run(opts, measures, rel_len, self.unshared, self.qrels, block=True)  # raises judge's error
        return self.parts, self.seen, self.runid


#: :meth:`_Blocks.outcome` of a block whose questions interleave (``grouped_only``)
_INTERLEAVED = object()


def _together(query) -> bool:
    """Whether each question's rows come together (``query``: the block's question Codes,
    in first-appearance order: one run of equal codes per question)."""
    codes = query.codes
    return not len(codes) or int(np.count_nonzero(codes[1:] != codes[:-1])) + 1 == len(query)


def _golden_rows(qrels, held):
    """The golden set's rows of the questions ``held`` (positions among its questions),
    checked: a question's values depend on its own rows only, and judging a block against
    the whole golden set sorted and hashed all of it again for every block."""
    if len(held) == len(qrels.query):
        return qrels
    return qrels.questions_rows(held)


def _score_buckets(scored: _Blocks, run_path: str, size: int) -> None:
    """The partition pass of :func:`score_in_blocks` (:func:`evalframe.engine.text_blocks.bucket_files`),
    in a temporary directory removed on success, error, Ctrl-C and SIGTERM (a full disk:
    one error naming it)."""
    from ..engine.scratch import scratch_directory
    from ..engine.text_blocks import bucket_files
    from ..errors import EvalframeInputError
    with scratch_directory("evalframe-trec-eval-") as tmp:
        buckets = bucket_files(run_path, size, tmp, write=lambda block, files: _write_buckets(block, files))
        for path in buckets.paths:
            data = Path(path).read_bytes()
            os.unlink(path)
            if not data.strip():
                continue
            try:
                run, _ = _block_run(data, run_path, None)
            except EvalframeInputError:
                _malformed_in_blocks(run_path, size)
                raise
            scored.add(run)
            del run
        fields = buckets.last_line.split()
        scored.runid = fields[5].decode(ENCODING) if len(fields) > 5 else ""


def _write_buckets(block: bytes, files: list) -> bytes:
    """One block of the bucket pass (:func:`evalframe.engine.text_blocks.write_buckets`):
    the seam where the tests count and interrupt the pass."""
    from ..engine.text_blocks import write_buckets
    return write_buckets(block, files)


def _block_run(block: bytes, run_path: str, first_line: int | None):
    """A block of a run file as :func:`read_run_file` reads a whole file: the checked
    run and its tag.  ``first_line`` numbers the block's lines in messages (None: a
    bucket of the partition pass, whose lines are not the file's)."""
    return read_run_bytes(block, run_path, first_line or 1)


def _question_ids(run):
    """The run's distinct question ids (first appearance order), as Arrow strings."""
    return _arrow_ids(run.query.dictionary)


def _joined(parts: list, n_measures: int, rel_len: int | None):
    import pyarrow as pa
    if not parts:
        return pa.array([], pa.string()), np.zeros((0, n_measures)), ([] if rel_len is not None else None)
    ids = pa.concat_arrays([p[0] for p in parts])
    values = np.concatenate([p[1] for p in parts])
    rel = [r for p in parts for r in p[2]] if rel_len is not None else None
    return ids, values, rel


def _malformed_in_blocks(run_path: str, size: int) -> None:
    """Raise trec_eval's malformed-lines error for the run file read in blocks,
    naming the file's line numbers; return when it has none."""
    from .._text_tables import line_blocks, malformed_lines, open_binary
    count, shown, line = 0, [], 1
    with open_binary(run_path) as f:
        for block in line_blocks(f, size):
            c, s = malformed_lines(block, 6, None, start=line)  # fields beyond the sixth do not count
            count += c
            shown += s[:5 - len(shown)] if len(shown) < 5 else []
            line += block.count(b"\n")
    refuse_malformed(run_path, count, shown, 6, None)
