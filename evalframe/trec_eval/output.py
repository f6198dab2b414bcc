"""trec_eval's output: per-question lines written as bytes, vectorised (no Python loop per
question or per value; only a chunk whose ids hold a NUL byte is written line by line), and
the writer that keeps the files' bytes.
"""
from __future__ import annotations

import functools

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


#: A float slot's %6.4f is laid out by the tables when its value times 10^4 rounds below
#: this (values below 100: "dd.dddd"), a count's %d when it is below ``_COUNT_LIMIT``: both
#: then fill one 8-byte word with their newline.
_FLOAT_LIMIT = 10 ** 6
_COUNT_LIMIT = 10 ** 7
_MINUS = np.uint64(ord("-")) << np.uint64(56)  # a word: NULs, then "-"


@functools.lru_cache(maxsize=1)
def _digit_words() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Lookup tables of ASCII digits as little-endian uint64 words, NUL where a leading
    zero is not written: ``four[x]`` the 4 digits of x (0-9999, zero-padded, bytes 0-3);
    ``bare[x]`` those of x without leading zeros (right-aligned in bytes 0-3); ``units[x]``
    x (0-99) and a dot, right-aligned in bytes 0-2 ("dd."); ``three[x]`` x (0-999) without
    leading zeros, right-aligned in bytes 0-2."""
    def word(digits: list[np.ndarray], shown: list[np.ndarray]) -> np.ndarray:
        w = np.zeros(len(digits[0]), dtype=np.uint64)
        for j, (d, keep) in enumerate(zip(digits, shown)):
            w |= np.where(keep, d + 48, 0).astype(np.uint64) << np.uint64(8 * j)
        return w
    x = np.arange(10000)
    d4 = [(x // 1000) % 10, (x // 100) % 10, (x // 10) % 10, x % 10]
    four = word(d4, [True] * 4)
    bare = word(d4, [x >= 1000, x >= 100, x >= 10, True])
    u = np.arange(100)
    units = word([u // 10, u % 10, np.full(100, ord(".") - 48)], [u >= 10, True, True])
    t = np.arange(1000)
    three = word([t // 100, (t // 10) % 10, t % 10], [t >= 100, t >= 10, True])
    return four, bare, units, three


def _number_words(kind: np.ndarray, block: np.ndarray):
    """The value and newline of each measured slot as one 8-byte word (questions x slots of
    kinds 0 and 1, uint64; NUL bytes are not written), whether a minus sign goes before it
    (in a word of its own), and the few values written by Python instead, ``{(question,
    column of block): bytes}``.  Kind 0: ``%6.4f`` (the magnitude times 10^4 rounded as
    printf rounds it: the exact product, half to even, from Dekker's product; its digits
    from the tables; magnitudes from 100 up and values not finite are written by Python);
    kind 1: ``%d`` of C's (long) cast of a count (negative or from 10^7 up: by Python)."""
    four, bare, units, three = _digit_words()
    measured = kind[kind != 2]
    fcol, ccol = np.flatnonzero(measured == 0), np.flatnonzero(measured == 1)
    words = np.empty(block.shape, dtype=np.uint64)
    negative = np.zeros(block.shape, dtype=bool)
    pieces = {}
    newline = np.uint64(10) << np.uint64(56)
    if len(fcol):
        v = np.abs(block[:, fcol])  # a sign: one more word (below)
        with np.errstate(invalid="ignore"):
            p = v * 1e4
            base = np.floor(p)
            frac = p - base  # exact; p and the true product are on one side of a half unless p is it
            up = frac > 0.5
            exact = np.isfinite(v) & (p < _FLOAT_LIMIT)
        half = np.flatnonzero((frac == 0.5) & exact)
        if len(half):  # printf: the exact product, half to even (Dekker: v 10^4 = p + e exactly)
            vh, ph = v.flat[half], p.flat[half]
            split = vh * 134217729.0  # 2^27 + 1 (10^4 is its own high half)
            high = split - (split - vh)
            e = (high * 1e4 - ph) + (vh - high) * 1e4
            up.flat[half] = (e > 0) | ((e == 0) & (base.flat[half] % 2 == 1))
        k = np.where(exact, base + up, 0).astype(np.int64)
        exact &= k < _FLOAT_LIMIT  # (a value rounding up to 100)
        k[~exact] = 0
        words[:, fcol] = units[k // 10000] | (four[k % 10000] << np.uint64(24)) | newline
        negative[:, fcol] = exact & np.signbit(block[:, fcol])  # (-0.0 too, as printf writes it)
        for i, j in zip(*np.nonzero(~exact)):
            pieces[i, fcol[j]] = f"{float(block[i, fcol[j]]):6.4f}\n".encode()
    if len(ccol):
        with np.errstate(invalid="ignore"):
            c = block[:, ccol].astype(np.int64)  # as C's (long) cast of a count
        plain = (c >= 0) & (c < _COUNT_LIMIT)
        cc = np.where(plain, c, 0)
        hi, lo = cc // 10000, cc % 10000
        words[:, ccol] = np.where(hi > 0, three[hi] | (four[lo] << np.uint64(24)),
                                  bare[lo] << np.uint64(24)) | newline
        for i, j in zip(*np.nonzero(~plain)):
            pieces[i, ccol[j]] = f"{int(c[i, j])}\n".encode()
    return words, negative, pieces


def _padded_words(pieces: list[bytes], least: int = 8) -> np.ndarray:
    """``pieces`` (bytes without NUL) as rows of one width (a multiple of 8, at least
    ``least``), NUL-padded after, as uint64 words (rows x words)."""
    lens = np.array([len(b) for b in pieces], dtype=np.int64)
    width = -(-max(int(lens.max(initial=0)), least) // 8) * 8
    out = np.zeros((len(pieces), width), dtype=np.uint8)
    flat = np.frombuffer(b"".join(pieces), dtype=np.uint8)
    starts = np.cumsum(lens) - lens
    out.reshape(-1)[np.repeat(np.arange(len(pieces)) * width - starts, lens) + np.arange(len(flat))] = flat
    return out.view("<u8")


def _per_question_text(heads: list[bytes], kind: np.ndarray, block: np.ndarray, rel: list[str] | None,
                       ids) -> bytes:
    """The trec_eval -q lines (``heads[s]``, the question id, a tab, the value, a
    newline) of a chunk of questions, question-major, as UTF-8 bytes.  ``ids``: the
    questions' ids (an Arrow string array); ``kind`` per slot: 0 ``%6.4f`` of a measured
    value, 1 ``%d`` of a count, 2 the quoted relevance string (from ``rel``); ``block``:
    questions x the slots of kinds 0 and 1, in slot order.

    Each question's lines are laid out in one row of 8-byte words, NUL where nothing is
    written (each line as its name, its id and tab, its value and newline: whole words,
    filled by numpy broadcasts and table lookups, no Python call per line or per value),
    and the NULs are dropped in one pass.  Ids holding a NUL byte are written by Python
    (:func:`_per_question_lines`)."""
    import pyarrow as pa
    m, n_s = len(ids), len(heads)
    bufs = ids.buffers()
    off_type = np.int64 if pa.types.is_large_string(ids.type) else np.int32
    off = np.frombuffer(bufs[1], dtype=off_type)[ids.offset: ids.offset + m + 1].astype(np.int64)
    data = np.frombuffer(bufs[2], dtype=np.uint8) if bufs[2] is not None and len(bufs[2]) else np.zeros(1, np.uint8)
    if m and not data[off[0]:off[-1]].all():  # a NUL byte in an id
        return _per_question_lines(heads, kind, block, rel, ids)
    qlen = np.diff(off)
    qw = -(-(int(qlen.max(initial=0)) + 1) // 8) * 8  # the id and its tab, in whole words
    qid = data[np.minimum(off[:-1, None] + np.arange(qw), len(data) - 1)]
    qid[np.arange(qw) > qlen[:, None]] = 0
    qid[np.arange(m), qlen] = 9  # the tab after the id
    words, negative, pieces = _number_words(kind, block)
    signed = np.flatnonzero(negative.any(axis=0))
    measured_slot = np.flatnonzero(kind != 2)
    rslots = np.flatnonzero(kind == 2)
    rel_words = _padded_words([("'" + r + "'\n").encode("utf-8") for r in (rel or [""] * m)]) if len(rslots) else None
    vwords = np.ones(n_s, dtype=np.int64)  # value words per slot
    vwords[measured_slot[signed]] = 2
    if rel_words is not None:
        vwords[rslots] = rel_words.shape[1]
    for (_, j), b in pieces.items():
        vwords[measured_slot[j]] = max(vwords[measured_slot[j]], -(-len(b) // 8))
    head = _padded_words(heads)  # (heads hold no NUL: measure names)
    hwords = np.array([-(-len(h) // 8) for h in heads])
    qwords = qw // 8
    slot_words = hwords + qwords + vwords
    start = np.cumsum(slot_words) - slot_words
    template = np.zeros(int(slot_words.sum()), dtype="<u8")
    for s in range(n_s):  # one per slot, not per line
        template[start[s]:start[s] + hwords[s]] = head[s, :hwords[s]]
    rec = np.empty((m, len(template)), dtype="<u8")
    rec[:] = template
    qid_words = qid.view("<u8")
    for j in range(qwords):
        rec[:, start + hwords + j] = qid_words[:, j:j + 1]
    value_end = start + slot_words  # a value ends its slot's words
    rec[:, value_end[measured_slot] - 1] = words
    rec[:, value_end[measured_slot[signed]] - 2] = np.where(negative[:, signed], _MINUS, np.uint64(0))
    if rel_words is not None:
        for j in range(rel_words.shape[1]):
            rec[:, value_end[rslots] - rel_words.shape[1] + j] = rel_words[:, j:j + 1]
    text = rec.view(np.uint8).reshape(m, -1)
    for (i, j), b in pieces.items():
        s = measured_slot[j]
        text[i, 8 * (value_end[s] - vwords[s]):8 * value_end[s]] = 0
        text[i, 8 * value_end[s] - len(b):8 * value_end[s]] = np.frombuffer(b, dtype=np.uint8)
    flat = text.reshape(-1)
    return flat[flat != 0].tobytes()


def _per_question_lines(heads: list[bytes], kind: np.ndarray, block: np.ndarray, rel: list[str] | None,
                        ids) -> bytes:
    """:func:`_per_question_text` line by line in Python: for ids holding a NUL byte."""
    measured = kind[kind != 2]
    with np.errstate(invalid="ignore"):
        counts = block.astype(np.int64)  # as C's (long) cast of a count
    out = []
    for i, q in enumerate(ids.to_pylist()):
        col = 0
        for s, h in enumerate(heads):
            if kind[s] == 2:
                value = "'" + (rel[i] if rel is not None else "") + "'"
            else:
                value = f"{int(counts[i, col])}" if measured[col] == 1 else f"{float(block[i, col]):6.4f}"
                col += 1
            out.append(h + (q + "\t" + value + "\n").encode("utf-8"))
    return b"".join(out)


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
