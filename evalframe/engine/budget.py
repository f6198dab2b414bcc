"""How much memory each step of an evaluation may take: every sizing figure of the
engines (streaming partitions, ``evalframe trec-eval``'s text blocks, the commands'
spill pass) and the budget they are planned from, in one place.  Each figure says
where it was measured; change one here and every engine plans with it."""
from __future__ import annotations

__all__ = ["BYTES_PER_ROW", "OUT_BYTES_PER_ROW", "READ_BYTES", "WHOLE_BYTES_PER_ROW", "FIRST_USE_BYTES",
           "TEXT_BYTES_PER_ROW", "QRELS_BYTES_PER_ROW", "MIN_BATCH_ROWS", "MAX_BUCKETS", "SPILL_MIN_BYTES",
           "MIN_BLOCK_BYTES", "WHOLE_FILE_BYTES_PER_LINE", "BLOCK_BYTES_PER_LINE", "TEXT_BLOCK_BYTES",
           "text_run_rows", "default_memory_budget", "memory_budget", "reader_bytes", "held_bytes",
           "plan_batch_rows", "mib", "warn_budget", "warn_small_budget"]

import os
import re

import numpy as np

from .._validation import error

#: Memory the in-memory engine holds per run row while it judges and measures a
#: partition (string ids of about 10 bytes, the batch as Arrow and as the partition's
#: frame, codes, fingerprints, sort keys and the per-row intermediates of the measures),
#: measured on the benchmark's data (benchmarks/bench_scale.py, the 20M-row slice,
#: grouped, partitions of 0.35M to 4.1M rows): peak RSS grows by 200 to 225 bytes per
#: partition row (the allocator's slack included); partitions are sized with 300.  Longer
#: ids cost more (each id byte is held about three times).
BYTES_PER_ROW = 300

#: Memory held per row of the per-question table while the parts are evaluated: each part
#: keeps its values as float64 (8 bytes per row) and per (system, question) group two int64
#: codes and the part's golden-set question ids (about 13 bytes per row with 7 measures,
#: 8 + 40 / measures in general); the long table of strings is built once, at the end.
OUT_BYTES_PER_ROW = 24

#: Memory of the reader beyond the batch it hands over (a Parquet row group being
#: decoded, its compressed pages, the writers of the partition pass).
READ_BYTES = 128 * 2 ** 20

#: Peak memory of the in-memory engine per run row of a table read whole (reading,
#: cleaning, judging, measuring at once): measured 170 bytes per row on a 5M-row Parquet
#: file of the benchmark's data and 218 per estimated row (:func:`text_run_rows`) for the
#: evaluate command on a 7M-line TREC text run (benchmarks' real_run_7000x1000, the seven
#: default measures), with margin.  A run is read whole when its rows at this figure fit the
#: budget (then streamed in partitions sized with :data:`BYTES_PER_ROW`).
WHOLE_BYTES_PER_ROW = 300

#: Memory the first partition makes resident beyond the imports, whatever its size: the
#: code and caches of the libraries' functions first called then (Parquet reading, Arrow
#: compute kernels, the measures), measured 38 to 43 MiB on a 20,000-row run.
FIRST_USE_BYTES = 48 * 2 ** 20

#: Bytes of a TREC text run per row, about (to estimate a text run's size in memory).
TEXT_BYTES_PER_ROW = 40


def text_run_rows(path: str) -> int:
    """About how many rows the TREC text run file at ``path`` holds (from its size;
    a gzip file is taken to hold four times its size)."""
    return os.path.getsize(path) * (4 if str(path).endswith(".gz") else 1) // TEXT_BYTES_PER_ROW


#: Memory held per golden-set row (the cleaned table, Arrow strings, and its question index;
#: measured as RSS on the benchmark's golden set of 3 M rows: 41 bytes of data, 135 held
#: with the allocator's slack, 165 at the peak of reading it, before any partition).
QRELS_BYTES_PER_ROW = 150

#: Rows of a partition at least, whatever the budget (smaller parts cost more than they save).
MIN_BATCH_ROWS = 1000

#: Bucket files written at most, by the streaming engine and by ``evalframe trec-eval``
#: (each is an open file during the partition pass).
MAX_BUCKETS = 512

_UNITS = {"": 1, "b": 1, "k": 10 ** 3, "kb": 10 ** 3, "m": 10 ** 6, "mb": 10 ** 6, "g": 10 ** 9,
          "gb": 10 ** 9, "t": 10 ** 12, "tb": 10 ** 12, "kib": 2 ** 10, "mib": 2 ** 20,
          "gib": 2 ** 30, "tib": 2 ** 40}


def default_memory_budget() -> int:
    """A quarter of the memory available now (``MemAvailable`` of ``/proc/meminfo``,
    else of the physical memory), at least 256 MiB."""
    avail = None
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    avail = int(line.split()[1]) * 1024
                    break
    except OSError:
        pass
    if avail is None:
        try:
            avail = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        except (ValueError, OSError, AttributeError):
            avail = 8 * 2 ** 30
    return max(avail // 4, 256 * 2 ** 20)


def memory_budget(value: "int | str | None") -> int:
    """A memory budget in bytes: an int, a string with a unit (``"2GiB"``,
    ``"500MB"``, ``"1.5G"``; K/M/G/T are powers of 10, KiB/MiB/GiB/TiB of 2) or
    None (:func:`default_memory_budget`).

    Examples
    --------
    >>> memory_budget("2GiB"), memory_budget("500MB"), memory_budget(4096)
    (2147483648, 500000000, 4096)
    """
    if value is None:
        return default_memory_budget()
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        if value < 1:
            raise error("evaluate", "memory_budget", "a number of bytes >= 1", value)
        return int(value)
    if isinstance(value, str):
        m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]*)?)\s*([a-zA-Z]*)\s*", value)
        if m and m.group(2).lower() in _UNITS and float(m.group(1)) * _UNITS[m.group(2).lower()] >= 1:
            return int(float(m.group(1)) * _UNITS[m.group(2).lower()])
    raise error("evaluate", "memory_budget", "an int >= 1 (bytes) or a size such as '2GiB' or '500MB'", value)


def reader_bytes(budget: int) -> int:
    """Bytes the reader may hold: :data:`READ_BYTES`, at most a quarter of ``budget``."""
    return min(READ_BYTES, budget // 4)  # a small budget reads small batches


def held_bytes(budget: int, *, golden_rows: int, out_rows: int) -> int:
    """What a streamed evaluation holds besides its partition: the golden set
    (:data:`QRELS_BYTES_PER_ROW` per row), the per-question table being put together
    (:data:`OUT_BYTES_PER_ROW` per row it will have), the reader (:data:`READ_BYTES`, at
    most a quarter of the budget: a small budget reads small batches) and the libraries'
    first use (:data:`FIRST_USE_BYTES`, whatever the budget)."""
    return (golden_rows * QRELS_BYTES_PER_ROW + out_rows * OUT_BYTES_PER_ROW + reader_bytes(budget)
            + FIRST_USE_BYTES)


def plan_batch_rows(budget: int, *, golden_rows: int, out_rows: int,
                    bytes_per_row: int = BYTES_PER_ROW) -> int:
    """Run rows a partition may hold: the budget less what is held besides
    (:func:`held_bytes`), at ``bytes_per_row`` (:data:`BYTES_PER_ROW`) per row; at least a
    quarter of the budget's worth (when what is held besides leaves less, the budget is
    passed anyway, and smaller partitions would only cost time: each costs about 40 ms
    whatever its size, a 15M-row run took 647 s in 1,000-row partitions, 9 s in 290,000-row
    ones), and at least ``MIN_BATCH_ROWS`` (1,000).

    Examples
    --------
    >>> plan_batch_rows(2 * 2 ** 30, golden_rows=0, out_rows=0) == (
    ...     2 * 2 ** 30 - READ_BYTES - FIRST_USE_BYTES) // BYTES_PER_ROW
    True
    >>> plan_batch_rows(128 * 2 ** 20, golden_rows=10 ** 6, out_rows=0) == 128 * 2 ** 20 // 4 // BYTES_PER_ROW
    True
    """
    room = budget - held_bytes(budget, golden_rows=golden_rows, out_rows=out_rows)
    return max(MIN_BATCH_ROWS, room // bytes_per_row, budget // 4 // bytes_per_row)


def mib(n: int) -> str:
    """``n`` bytes as MiB (KiB below 1 MiB), for messages."""
    return f"{n / 2 ** 20:,.0f} MiB" if n >= 2 ** 20 else f"{n / 2 ** 10:,.0f} KiB"


def warn_budget(question, rows: int, batch_rows: int) -> None:
    """Warn that one question's ``rows`` (more than a partition's ``batch_rows``) are held
    whole: a question is never split, so the peak passes the budget by about its size."""
    import warnings
    from ..errors import MemoryBudgetWarning
    warnings.warn(f"question {question!r} has {rows:,} run rows, more than a partition of the memory budget "
                  f"holds ({batch_rows:,}): a question is evaluated whole, so peak memory passes the budget by "
                  f"about {mib((rows - batch_rows) * BYTES_PER_ROW)}", MemoryBudgetWarning, stacklevel=2)


def warn_small_budget(budget: int, golden_rows: int, out_rows: int, batch_rows: int) -> None:
    """Warn when what is held besides a partition of ``batch_rows`` passes ``budget``."""
    import warnings
    from ..errors import MemoryBudgetWarning
    held = held_bytes(budget, golden_rows=golden_rows, out_rows=out_rows)
    peak = held + batch_rows * BYTES_PER_ROW
    if peak <= budget:
        return
    warnings.warn(f"a memory budget of {mib(budget)} cannot be kept: the golden set "
                  f"({golden_rows:,} rows, {mib(golden_rows * QRELS_BYTES_PER_ROW)}), the per-question table "
                  f"({out_rows:,} rows, {mib(out_rows * OUT_BYTES_PER_ROW)}), the reader "
                  f"({mib(reader_bytes(budget))}) and the libraries' first use ({mib(FIRST_USE_BYTES)}) "
                  f"hold {mib(held)} together; with partitions of {batch_rows:,} rows "
                  f"({mib(batch_rows * BYTES_PER_ROW)}) the peak is about {mib(peak)} beyond the interpreter "
                  "and imports", MemoryBudgetWarning, stacklevel=3)


#: Bytes of run rows (as Arrow) the bucket pass buffers at least before writing them out.
SPILL_MIN_BYTES = 8 * 2 ** 20


#: The smallest block of a run file read at once (a tiny --memory-budget).
MIN_BLOCK_BYTES = 4096

#: Peak memory of the whole-file command per run line, about: measured 215 bytes
#: (peak RSS 2.0 GB on 9.4 M lines, ``-q -m all_trec``, benchmarks/bench_trec_eval.py's
#: 100000x100), with margin.
WHOLE_FILE_BYTES_PER_LINE = 300

#: Peak memory per run line of a block (its text, the parsed table, the judged rows and
#: every measure's intermediates; measured with this figure: ``-q -m all_trec`` at 512 MiB
#: peaked at 0.59 GiB): blocks are sized with it by :func:`plan_batch_rows`.
BLOCK_BYTES_PER_LINE = 800


#: Bytes of a TREC text run read at once by the commands when it is larger than the
#: memory budget (``evaluate``/``report`` spill it to Parquet in such blocks).
TEXT_BLOCK_BYTES = 64 * 2 ** 20
