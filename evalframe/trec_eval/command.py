"""``evalframe trec-eval``'s command: the arguments checked, the files read and scored, the
output written, trec_eval's messages and exit statuses.
"""
from __future__ import annotations

import os
import sys
from contextlib import contextmanager
import numpy as np
from .._arrow_numpy import arrow_of, numpy_of
from .arguments import HELP, IllegalMeasure, Request, USAGE, UsageError, parse_args, plan_request
from .catalogue import Derived, NICKNAMES
from .files import ENCODING, read_inputs, read_run_file, starts_with_bom
from .output import make_writer, write_per_question
from .._threads import resolve_threads
from .scoring import cleared_on_placeholder, in_blocks, refuse_repeats_evaluated, score_in_blocks, score_run, with_placeholders


def _evaluate(opts, req: Request, qrels_path: str, run_path: str, out) -> None:
    from ..measures import Mean, parse_measure, resolve

    measures = []

    def column(m) -> int:
        m = resolve(m, rel=opts["rel"])
        if m not in measures:
            measures.append(m)
        return measures.index(m)

    for s in req.slots:
        if isinstance(s.measure, Derived):
            s.column = [column(parse_measure(name)) for name in s.measure.inputs]
        elif s.measure is not None:
            s.column = column(s.measure)
    rel_len = req.relstring_len if opts["q"] else None

    from .. import _arrow_compute as pc
    budget = opts["budget"]
    if budget is None and run_path != "-":
        from ..engine.budget import memory_budget
        budget = memory_budget(None)
    threads = resolve_threads(opts["threads"])
    qrels = blocks = None
    if run_path != "-" and in_blocks(run_path, budget, threads):  # larger than the budget, or cut for the threads
        qrels, blocks = score_in_blocks(opts, measures, rel_len, qrels_path, run_path, budget, threads)
    if blocks is not None:
        (ids, values, rel_str), placeholders, runid = blocks
    else:  # read whole (also a file cut for the threads whose questions are not grouped: its golden set read)
        if qrels is None:
            qrels, run, runid = read_inputs(qrels_path, run_path)
        else:
            run, runid = read_run_file(run_path)
        placeholders = ()
        if opts["c"]:
            if run.repeats is not None:  # before the placeholders make the run a plain table
                refuse_repeats_evaluated(run, qrels, opts["depth"])
            run, placeholders = with_placeholders(run, qrels)
        ids, values, rel_str = score_run(opts, measures, rel_len, run, qrels)
    order = numpy_of(pc.sort_indices(ids))  # trec_eval: strcmp order of question ids (byte-wise)
    ids = pc.take(ids, arrow_of(order))
    values = values[order]
    n_q = len(ids)
    unanswered = None
    if len(placeholders):
        unanswered = numpy_of(pc.is_in(ids, value_set=pc.cast(placeholders, ids.type)))

    def slot_values(s) -> np.ndarray:
        if isinstance(s.measure, Derived):
            v = s.measure.fn(*(values[:, c] for c in s.column))
        else:
            v = values[:, s.column]
        if unanswered is not None and cleared_on_placeholder(s.name):
            v = np.where(unanswered, 0.0, v)
        return v

    table = {id(s): slot_values(s) for s in req.slots if s.measure is not None}

    write = make_writer(out)
    if opts["q"]:
        if rel_str is not None:
            rel_str = [rel_str[i] for i in order]
            if unanswered is not None and cleared_on_placeholder(req.relstring_name):
                rel_str = ["" if u else r for r, u in zip(rel_str, unanswered.tolist())]
        rows = [s for s in req.slots if s.spec.per_query and s.spec.kind not in ("runid", "num_q")]
        if rows:
            write_per_question(write, rows, table, rel_str, ids, threads)
    if opts["n"]:
        return
    lines = []
    for s in req.slots:
        kind = s.spec.kind
        if kind == "runid":
            lines.append(f"{'runid':<22}\tall\t{runid}\n")
        elif kind == "num_q":
            lines.append(f"{'num_q':<22}\tall\t{n_q}\n")
        elif kind == "relstring":
            continue
        else:
            if opts["c"] and s.name == "num_rel":
                # trec_eval -c (m_num_rel.c): every golden-set label > 0, whatever -l
                v = float((qrels.numbers("relevance", np.int64) > 0).sum())
            else:  # trec_eval's order of summation: the questions'
                agg = Mean() if isinstance(s.measure, Derived) else measures[s.column].aggregator
                v = agg.finalize(agg.partial(table[id(s)]))
            lines.append(f"{s.name:<22}\tall\t{int(v)}\n" if s.spec.integer else f"{s.name:<22}\tall\t{v:6.4f}\n")
    write("".join(lines))


#: glibc's mallopt parameters (malloc.h) and their defaults
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3


_GLIBC_DEFAULT_THRESHOLD = 128 * 1024


@contextmanager
def _command_allocator():
    """Memory allocation tuned for one command over large arrays, restored on exit.

    The command allocates and frees arrays of the run's length (tens of MB) a few
    hundred times.  Two process-wide defaults make that cost more in the kernel than
    the array work itself (measured at 7000x1000, ``-q -m all_trec``: system time
    5.1 s of 9.2 s of CPU, and 1.5 s with both changes):

    - numpy asks for transparent huge pages on every large array (``madvise``), and
      the kernel's default ``defrag=madvise`` then compacts memory on the page fault,
      a stall that grows with the page cache; huge pages are not asked for here;
    - glibc's ``malloc`` gives each such array its own ``mmap`` and unmaps it when
      freed, so the next array faults every page in again; here arrays up to 1 GiB
      come from the heap, and freed memory is kept for the next one (the process ends
      soon after).

    Both are left as they are where unavailable (not glibc, another numpy)."""
    import ctypes
    try:
        from numpy._core.multiarray import _set_madvise_hugepage  # numpy >= 2
    except ImportError:  # pragma: no cover - numpy 1.x
        from numpy.core.multiarray import _set_madvise_hugepage
    hugepage = _set_madvise_hugepage(False)
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (AttributeError, OSError):  # pragma: no cover - not glibc
        mallopt = None
    tuned = mallopt is not None and mallopt(_M_MMAP_THRESHOLD, 1 << 30) == 1 and mallopt(_M_TRIM_THRESHOLD, 1 << 31) == 1
    try:
        yield
    finally:
        _set_madvise_hugepage(hugepage)
        if tuned:  # glibc's defaults (its mmap threshold no longer adapts, as after any mallopt call)
            mallopt(_M_MMAP_THRESHOLD, _GLIBC_DEFAULT_THRESHOLD)
            mallopt(_M_TRIM_THRESHOLD, _GLIBC_DEFAULT_THRESHOLD)


def main(argv: list[str] | None = None) -> int:
    """Run ``evalframe trec-eval`` with trec_eval's arguments; returns the exit status."""
    from ..errors import EvalframeInputError

    argv = list(sys.argv[1:] if argv is None else argv)
    err = sys.stderr
    try:
        opts, marked, params, args = parse_args(argv)
    except UsageError as exc:
        err.write(f"trec_eval: {exc}\n{USAGE}")
        return 1
    except IllegalMeasure as exc:
        if exc.why:
            err.write(f"trec_eval: {exc.why}\n")
        err.write(f"trec_eval: illegal measure '{exc.arg}'\n")
        return 1
    except ValueError as exc:  # a flag's value (-M, -R, -T, -Z): a user error, as every command's
        err.write(f"trec_eval: {exc}\n")
        return 2
    if opts["help"]:
        sys.stdout.write(HELP)
        return 0
    if opts["version"]:
        err.write("trec_eval version 10.0 (evalframe)\n")
        return 0
    if len(args) != 2:
        err.write(USAGE)
        return 1
    if not marked:
        marked = list(NICKNAMES["official"])
    try:
        req = plan_request(marked, params, opts)
    except ValueError as exc:
        err.write(f"trec_eval: {exc}\ntrec_eval: Cannot initialize measures\n")
        return 2
    qrels_path, run_path = args
    for path in (qrels_path,) + (() if run_path == "-" else (run_path,)):
        if not os.path.isfile(path) or not os.access(path, os.R_OK):
            err.write(f"trec_eval: cannot read file '{path}'\ntrec_eval: Quit in file '{path}'\n")
            return 2
    for path in (qrels_path,) + (() if run_path == "-" else (run_path,)):
        if starts_with_bom(path):
            err.write(f"trec_eval: warning: {path} starts with a UTF-8 byte-order mark: as trec_eval does, it is "
                      f"kept in the file's first id (which then matches no id of the other file); evalframe "
                      f"evaluate and report remove it. To match them, remove it from the file\n")
    import warnings

    import pyarrow as pa

    from .._text_tables import parse_pool
    pool = pa.default_memory_pool()
    try:
        with warnings.catch_warnings(), _command_allocator():
            warnings.simplefilter("ignore")
            pa.set_memory_pool(parse_pool())  # one cold pass over large arrays: see parse_pool
            _evaluate(opts, req, qrels_path, run_path, sys.stdout)
    except EvalframeInputError as exc:
        text = f"trec_eval: {exc}\n"
        try:  # ids in the message are the files' bytes, one character each
            text.encode(ENCODING)
        except UnicodeEncodeError:
            err.write(text)
        else:
            make_writer(err)(text)
        return 2
    except (FileNotFoundError, PermissionError, IsADirectoryError, UnicodeDecodeError) as exc:
        err.write(f"trec_eval: {exc}\n")
        return 2
    except ValueError as exc:
        err.write(f"trec_eval: {exc}\n")
        return 2
    except BrokenPipeError:  # pragma: no cover - e.g. piped into head
        return 0
    finally:
        pa.set_memory_pool(pool)
    return 0
