"""trec_eval's output: per-question lines written as bytes, vectorised (no Python loop per
question or per value), and the writer that keeps the files' bytes.
"""
from __future__ import annotations

import numpy as np
from .files import ENCODING


def relstrings(V, n: int) -> list[str]:
    from .._judged import NOT_JUDGED
    top = V.rank <= n
    lab = V.label[top]
    chars = np.where(lab > 9, ">", np.where(lab >= 0, np.clip(lab, 0, 9).astype(str),
                                            np.where(lab == NOT_JUDGED, "-", ".")))
    grp = V.grp[top]
    bounds = np.searchsorted(grp, np.arange(V.n_groups + 1))
    joined = "".join(chars.tolist())
    return [joined[bounds[g]:bounds[g + 1]] for g in range(V.n_groups)]


def _decimal_digits(n: np.ndarray, least: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """ASCII decimal digits of non-negative int64s, right-aligned in at least ``least``
    bytes (leading zeros), one row per value, and each value's number of digits (0 has one)."""
    width = max(len(str(int(n.max()))) if n.size else 1, least)
    out = np.empty(n.shape + (width,), dtype=np.uint8)
    x = n.copy()
    count = np.ones(n.shape, dtype=np.int64)
    for j in range(width):
        out[..., width - 1 - j] = x % 10
        x //= 10
        if j:
            count += n >= 10 ** j
    out += 48
    return out, count


def _value_field(kind: np.ndarray, block: np.ndarray, rel: list[str] | None):
    """Each line's value and newline as bytes right-aligned in one width (questions x
    slots x width, uint8) and their lengths.  ``kind`` per slot: 0 ``%6.4f`` of a
    measured value (the value times 10^4 rounded to an integer, written digit by digit:
    below 10^5 the product is off by less than 1.2e-7; values within 1e-6 of a half,
    negative, large or not finite are written by Python), 1 ``%d`` of a count, 2 the
    quoted relevance string (from ``rel``); ``block``: questions x the slots of kinds 0
    and 1, in slot order."""
    m, n_s = len(block), len(kind)
    measured = kind[kind != 2]
    fslots, cslots = np.flatnonzero(kind == 0), np.flatnonzero(kind == 1)
    v = block[:, measured == 0]
    scaled = v * 1e4
    with np.errstate(invalid="ignore"):
        frac = scaled - np.floor(scaled)
        exact = np.isfinite(v) & ~np.signbit(v) & (v < 1e5) & (np.abs(frac - 0.5) > 1e-6)
    k = np.floor(np.where(exact, scaled, 0.0) + 0.5).astype(np.int64)
    with np.errstate(invalid="ignore"):
        counts = block[:, measured == 1].astype(np.int64)  # as C's (long) cast of a count
    counts_plain = counts >= 0
    fd, fn = _decimal_digits(k, least=5)  # at least "0.0000"
    cd, cn = _decimal_digits(np.where(counts_plain, counts, 0))
    pieces = {}  # (question, slot) -> the bytes Python writes (rare)
    for i, j in zip(*np.nonzero(~exact)):
        pieces[i, fslots[j]] = f"{float(v[i, j]):6.4f}\n".encode()
    for i, j in zip(*np.nonzero(~counts_plain)):
        pieces[i, cslots[j]] = f"{int(counts[i, j])}\n".encode()
    rel_bytes = [("'" + r + "'\n").encode("utf-8") for r in rel] if rel is not None and (kind == 2).any() else []
    width = max([fd.shape[-1] + 2, cd.shape[-1] + 1] + [len(b) for b in pieces.values()]
                + [len(b) for b in rel_bytes])
    out = np.zeros((m, n_s, width), dtype=np.uint8)
    length = np.zeros((m, n_s), dtype=np.int64)
    out[:, :, -1] = 10
    if len(fslots):
        wd = fd.shape[-1]
        f = out[:, fslots]  # (a copy: filled, then put back)
        f[..., -5:-1] = fd[..., wd - 4:]
        f[..., -6] = 46  # "."
        f[..., -2 - wd:-6] = fd[..., :wd - 4]
        out[:, fslots] = f
        length[:, fslots] = np.maximum(fn, 5) + 2
    if len(cslots):
        wd = cd.shape[-1]
        out[:, cslots, width - 1 - wd:width - 1] = cd
        length[:, cslots] = cn + 1
    if rel_bytes:
        rslot = np.flatnonzero(kind == 2)
        joined = np.frombuffer(b"".join(rel_bytes), dtype=np.uint8)
        lens = np.array([len(b) for b in rel_bytes], dtype=np.int64)
        ends = np.cumsum(lens)
        pos = ends[:, None] - width + np.arange(width)  # right-aligned: each row ends its bytes
        row = np.where(pos >= (ends - lens)[:, None], joined[np.clip(pos, 0, None)], 0)
        out[:, rslot] = row[:, None, :]
        length[:, rslot] = lens[:, None]
    for (i, s), b in pieces.items():
        out[i, s, width - len(b):] = np.frombuffer(b, dtype=np.uint8)
        length[i, s] = len(b)
    return out, length


def _per_question_text(heads: list[bytes], kind: np.ndarray, block: np.ndarray, rel: list[str] | None,
                       ids) -> bytes:
    """The trec_eval -q lines (``heads[s]``, the question id, a tab, the value, a
    newline) of a chunk of questions, question-major, as UTF-8 bytes.  ``ids``: the
    questions' ids (an Arrow string array); ``kind``, ``block``, ``rel``: as
    :func:`_value_field`.  Each line is laid out in a fixed-width record (name, id,
    value: numpy broadcasts and digit arithmetic, no Python call per line or per
    value) and the records are squeezed to their bytes by one boolean mask."""
    import pyarrow as pa
    m, n_s = len(ids), len(heads)
    hw = max(len(h) for h in heads)
    head = np.zeros((n_s, hw), dtype=np.uint8)
    for s, h in enumerate(heads):
        head[s, :len(h)] = np.frombuffer(h, dtype=np.uint8)
    head_len = np.array([len(h) for h in heads], dtype=np.int64)
    bufs = ids.buffers()
    off_type = np.int64 if pa.types.is_large_string(ids.type) else np.int32
    off = np.frombuffer(bufs[1], dtype=off_type)[ids.offset: ids.offset + m + 1].astype(np.int64)
    data = np.frombuffer(bufs[2], dtype=np.uint8) if bufs[2] is not None and len(bufs[2]) else np.zeros(1, np.uint8)
    qlen = np.diff(off)
    qw = int(qlen.max(initial=0)) + 1
    qid = data[np.minimum(off[:-1, None] + np.arange(qw), len(data) - 1)]
    qid[np.arange(m), qlen] = 9  # the tab after the id
    value, value_len = _value_field(kind, block, rel)
    vw = value.shape[-1]
    width = hw + qw + vw
    template = np.zeros((n_s, width), dtype=np.uint8)  # one question's records: the names
    template[:, :hw] = head
    rec = np.empty((m, n_s, width), dtype=np.uint8)
    rec[:] = template  # (a copy of n_s records at a time, not of a name at a time)
    rec[:, :, hw:hw + qw] = qid[:, None, :]
    rec[:, :, hw + qw:] = value
    keep_template = np.zeros((n_s, width), dtype=bool)
    keep_template[:, :hw] = np.arange(hw) < head_len[:, None]
    keep = np.empty(rec.shape, dtype=bool)
    keep[:] = keep_template
    keep[:, :, hw:hw + qw] = (np.arange(qw) <= qlen[:, None])[:, None, :]
    keep[:, :, hw + qw:] = np.arange(vw) >= vw - value_len[:, :, None]
    return rec[keep].tobytes()


#: Lines of -q output built at once (a chunk of questions): its records stay a few MB.
PER_QUESTION_CHUNK_LINES = 200_000

#: Chunks of -q output laid out at once at most, whatever the threads: each holds about
#: 30 MB while it is laid out, and the writing, in order, is one thread's
PER_QUESTION_CHUNKS_IN_FLIGHT = 4


def write_per_question(write, rows, table, rel_str, ids, threads: int = 1) -> None:
    """trec_eval -q lines (measure, question, value), question by question, a chunk
    of questions at a time (:func:`_per_question_text`), ``threads`` chunks at once (at
    most :data:`PER_QUESTION_CHUNKS_IN_FLIGHT`; numpy's array work releases the GIL),
    written in order."""
    from .. import _arrow_compute as pc
    from .._threads import InOrder
    n_q, n_s = len(ids), len(rows)
    heads = [f"{s.name:<22}\t".encode("utf-8") for s in rows]
    kinds = np.array([2 if s.spec.kind == "relstring" else 1 if s.spec.integer else 0 for s in rows])
    measured = [table[id(s)] for s in rows if s.spec.kind != "relstring"]
    ascii_only = all(s.name.isascii() for s in rows) and (not n_q or bool(pc.all(pc.string_is_ascii(ids)).as_py()))
    step = max(1, PER_QUESTION_CHUNK_LINES // n_s)

    def text(lo: int) -> bytes:
        hi = min(lo + step, n_q)
        block = np.column_stack([v[lo:hi] for v in measured]) if measured else np.zeros((hi - lo, 0))
        return _per_question_text(heads, kinds, block, None if rel_str is None else rel_str[lo:hi],
                                  ids.slice(lo, hi - lo))

    def put(done: list[bytes]) -> None:
        for data in done:
            write(data if ascii_only else data.decode("utf-8"))  # ASCII bytes are written as they are

    with InOrder(min(threads, PER_QUESTION_CHUNKS_IN_FLIGHT, -(-n_q // step))) as chunks:
        for lo in range(0, n_q, step):
            put(chunks.submit(text, lo))
        put(chunks.drain())


def make_writer(out):
    """Write text whose ids hold one character per byte of the input files."""
    buf = getattr(out, "buffer", None)

    def write(text: str | bytes) -> None:
        """Write ``text``; bytes are written as they are (they hold ASCII only)."""
        data = text if isinstance(text, bytes) else text.encode(ENCODING, errors="replace")  # ids, ASCII, and measure names from argv
        if buf is not None:
            out.flush()
            buf.write(data)
        else:
            out.write(data.decode("utf-8", errors="surrogateescape"))
    return write
