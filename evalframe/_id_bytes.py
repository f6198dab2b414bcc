"""Ids read as bytes, straight from their Arrow buffers (no Python object per row).

The byte kernels under the checks (:mod:`evalframe.schema`) and the ranking step: the
Arrow string array behind a column and its raw chunks; whether an id column is clean (no
missing or blank id, no blank at either end: :func:`arrow_id_status`, from the first and
last byte of each id); a 64-bit fingerprint of each id's bytes (:func:`fingerprints`;
:func:`int_fingerprints` for integer ids) and one key per (code, fingerprint) pair
(:func:`pair_keys`); keys whose order is the ids' byte-wise order (:func:`byte_order_keys`;
:func:`decimal_order_keys` for integer ids) and the prefix every id shares; integer
document ids kept as integers (:func:`integer_ids`, :func:`parse_decimal_ids`).  Passes
run :data:`BLOCK_ROWS` rows at a time, so their temporaries stay in cache.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from . import _arrow_compute as pc
from ._arrow_numpy import arrow_of, numpy_of

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa


#: First or last bytes that may belong to a blank (ASCII controls, space, DEL, any
#: byte of a multi-byte character): rows with one are checked exactly.
_SUSPECT = np.zeros(256, dtype=bool)
_SUSPECT[:33] = True
_SUSPECT[127:] = True


def arrow_backing(s: "pd.Series | pa.Array | pa.ChunkedArray"):
    """The pyarrow (chunked) string array behind an Arrow-backed string column (or an
    Arrow string array itself), or None."""
    import pyarrow as pa
    if isinstance(s, (pa.Array, pa.ChunkedArray)):
        if not (pa.types.is_string(s.type) or pa.types.is_large_string(s.type)):
            return None
        return s if isinstance(s, pa.ChunkedArray) else pa.chunked_array([s])
    import pandas as pd  # a pandas column: pandas is loaded already
    dtype = s.dtype
    if getattr(dtype, "storage", None) != "pyarrow" and not (
            isinstance(dtype, pd.ArrowDtype) and str(dtype.pyarrow_dtype) in ("string", "large_string")):
        return None
    values = s.array
    # the column's own buffers, zero-copy (pandas' Arrow protocol: pyarrow.array of a Series
    # costs about 50x more per call, in its checks of the Series)
    arr = values.__arrow_array__() if hasattr(values, "__arrow_array__") else pa.array(s)
    if not (pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type)):
        return None
    return arr if isinstance(arr, pa.ChunkedArray) else pa.chunked_array([arr])


def _string_chunks(arr):
    """(offsets int64 (n+1,), bytes uint8) of each chunk of a string array, zero-copy."""
    import pyarrow as pa
    for ch in arr.chunks:
        bufs = ch.buffers()
        odt = np.int64 if pa.types.is_large_string(ch.type) else np.int32
        off = np.frombuffer(bufs[1], dtype=odt)[ch.offset: ch.offset + len(ch) + 1].astype(np.int64)
        data = np.frombuffer(bufs[2], dtype=np.uint8) if bufs[2] is not None else np.zeros(1, np.uint8)
        yield ch, off, data


def clean_arrow_ids(s: pd.Series, *, trim: bool) -> bool:
    """True when an Arrow-backed id column needs no change and has no problem: no
    missing or blank id, and (``trim``) no id with leading or trailing blanks."""
    status = arrow_id_status(s)
    return status == "clean" or (status == "blank-edged" and not trim)


def arrow_id_status(s: pd.Series) -> str | None:
    """``"clean"``: an Arrow-backed id column without a missing or blank id and
    without leading or trailing blanks; ``"blank-edged"``: no missing or blank
    id, but some with leading or trailing blanks; None: anything else.

    Only the first and last byte of each id are read, and not even those in a
    chunk whose bytes hold no possible blank at all (one pass over its bytes:
    ids split from a text file on blanks); the few ids starting or ending with a
    possible blank are checked exactly (with the whitespace of pandas'
    ``str.strip`` on Arrow strings)."""
    arr = arrow_backing(s)
    if arr is None or arr.null_count:
        return None
    status = "clean"
    for ch, (off, data) in zip(arr.chunks, raw_chunks(arr)):  # offsets as stored: no int64 copy
        if not len(ch):
            continue
        if not (off[1:] != off[:-1]).all():  # an empty id
            return None
        if not _suspect_bytes(data[off[0]:off[-1]]):  # no byte of any id can be a blank
            continue
        suspect = np.flatnonzero(_SUSPECT[data[off[:-1]]] | _SUSPECT[data[off[1:] - 1]])
        if len(suspect):
            few = pc.take(ch, arrow_of(suspect))
            stripped = numpy_of(pc.utf8_length(pc.utf8_trim_whitespace(few)))
            if not stripped.all():
                return None
            if (stripped != numpy_of(pc.utf8_length(few))).any():
                status = "blank-edged"
    return status


def _suspect_bytes(data: np.ndarray) -> bool:
    """Whether the bytes ``data`` (uint8) hold one of :data:`_SUSPECT` (a control byte,
    space, DEL or a byte of a multi-byte character): Arrow's least and greatest byte in one
    pass, no temporary (half the time of numpy's two reductions from about 4 MB; a few
    microseconds more below 1 MB)."""
    if not len(data):
        return False
    ends = pc.min_max(arrow_of(data))
    return ends["min"].as_py() < 33 or ends["max"].as_py() >= 127


_MIX = np.uint64(0x9E3779B97F4A7C15)


def _mix(h: np.ndarray) -> np.ndarray:
    """A bijective 64-bit mixer (multiply by an odd constant, xor-shift), in place."""
    h *= _MIX
    h ^= h >> np.uint64(29)
    h *= _MIX
    h ^= h >> np.uint64(32)
    return h


#: Rows per block of the row-wise passes over id bytes: their temporaries stay
#: in cache (and below the allocator's mmap threshold), whatever the run's size.
BLOCK_ROWS = 1 << 16

_WORD_MASKS = np.array([(1 << (8 * k)) - 1 for k in range(8)] + [2 ** 64 - 1], dtype=np.uint64)


def raw_chunks(arr):
    """(offsets as stored (int32 or int64, n+1), bytes uint8) of each chunk, zero-copy."""
    import pyarrow as pa
    for ch in arr.chunks:
        bufs = ch.buffers()
        odt = np.int64 if pa.types.is_large_string(ch.type) else np.int32
        off = np.frombuffer(bufs[1], dtype=odt)[ch.offset: ch.offset + len(ch) + 1]
        data = np.frombuffer(bufs[2], dtype=np.uint8) if bufs[2] is not None else np.zeros(1, np.uint8)
        yield off, data


#: Bytes of each id read at once by :func:`fingerprints` (one gather of
#: fixed-width records per block, not one unaligned word after another), and the
#: id bytes per block: a block's records stay in the core's cache while their
#: words are mixed in (about 9,000 rows of 55-byte URLs, :data:`BLOCK_ROWS` of
#: short ids).
FINGERPRINT_SPAN = 64
FINGERPRINT_BYTES = 1 << 19


def fingerprints(arr) -> np.ndarray:
    """64-bit fingerprint of each string from its bytes (its length, then each
    8-byte little-endian word, the last one zero-padded, mixed in turn), read
    straight from the Arrow buffers a block of rows at a time."""
    out = np.empty(sum(len(ch) for ch in arr.chunks), dtype=np.uint64)
    at = 0
    for off_all, data in raw_chunks(arr):
        n = len(off_all) - 1
        end = int(off_all[-1]) if n >= 0 else 0
        mean = (end - int(off_all[0])) // max(n, 1) if n >= 0 else 0
        rows = max(1024, min(BLOCK_ROWS, FINGERPRINT_BYTES // max(mean, 8)))
        for b0 in range(0, n, rows):
            o = off_all[b0: b0 + rows + 1].astype(np.int64)
            out[at + b0: at + b0 + len(o) - 1] = _block_fingerprints(data, end, o[:-1], np.diff(o))
        at += max(n, 0)
    return out


#: Integer document ids in [0, INT_ID_LIMIT) are kept as integers (their decimal strings
#: have at most 18 digits); other integers are written as strings.
INT_ID_LIMIT = 10 ** 18


def integer_ids(s: pd.Series) -> np.ndarray | None:
    """A numpy integer id column as int64 when every id lies in [0, :data:`INT_ID_LIMIT`),
    else None (such ids are written as strings by :func:`ids_to_str`); None for an Arrow array."""
    if not isinstance(getattr(s, "dtype", None), np.dtype) or s.dtype.kind not in "iu" or not len(s):
        return None
    v = s.to_numpy()
    if v.min() < 0 or v.max() >= INT_ID_LIMIT:
        return None
    return v.astype(np.int64, copy=False)


def int_fingerprints(ids: np.ndarray) -> np.ndarray:
    """A 64-bit fingerprint of each int64 id (a bijection: distinct ids, distinct
    fingerprints), :data:`BLOCK_ROWS` at a time (the temporaries stay in cache).
    Not comparable with :func:`fingerprints` of strings."""
    v = ids.astype(np.int64, copy=False).view(np.uint64)
    out = np.empty(len(v), dtype=np.uint64)
    for lo in range(0, len(v), BLOCK_ROWS):
        block = out[lo:lo + BLOCK_ROWS]
        np.bitwise_xor(v[lo:lo + BLOCK_ROWS], np.uint64(0x94D049BB133111EB), out=block)
        _mix(block)
    return out


_POW10 = 10 ** np.arange(19, dtype=np.uint64)


def decimal_order_keys(ids: np.ndarray) -> list[np.ndarray]:
    """Keys whose lexicographic order is the byte-wise order of the decimal strings
    of ``ids`` (int64 in [0, :data:`INT_ID_LIMIT`)): their digits left-aligned in 18
    places (``"9"`` above ``"10"``), then their number of digits (``"1"`` below
    ``"10"``); most significant first, as :func:`byte_order_keys`."""
    v = ids.astype(np.uint64)
    digits = np.searchsorted(_POW10, v, side="right").astype(np.uint64)  # 0 has one digit
    digits = np.maximum(digits, np.uint64(1))
    return [v * _POW10[(18 - digits).astype(np.int64)], digits]


def parse_decimal_ids(arr) -> np.ndarray:
    """Each string of ``arr`` (a pyarrow string array) as the int64 whose decimal
    string it is (``"12"``; not ``"012"``, ``"+12"`` or 19 digits), else a distinct
    negative number (``-1 - row``), which no integer id equals."""
    import pyarrow as pa
    arr = arr.combine_chunks() if isinstance(arr, pa.ChunkedArray) else arr
    out = -1 - np.arange(len(arr), dtype=np.int64)
    if not len(arr):
        return out
    try:  # every id a number (ids written from integers): read, then kept when written back alike
        value = numpy_of(pc.cast(arr, pa.int64()))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        ok = pc.match_substring_regex(arr, r"^(0|[1-9][0-9]{0,17})$").fill_null(False)
        ok = np.asarray(numpy_of(ok), dtype=bool)
        if ok.any():
            out[ok] = numpy_of(pc.cast(arr.filter(arrow_of(ok)), pa.int64()))
        return out
    ok = (value >= 0) & (value < INT_ID_LIMIT)
    digits = np.maximum(np.searchsorted(_POW10, np.where(ok, value, 0).astype(np.uint64), side="right"), 1)
    ok &= numpy_of(pc.binary_length(arr)) == digits  # no sign, blank or leading zero
    out[ok] = value[ok]
    return out


def _block_fingerprints(data: np.ndarray, end: int, start: np.ndarray, length: np.ndarray) -> np.ndarray:
    """:func:`fingerprints` of the strings at ``start`` (``length`` bytes each)
    in ``data`` (``end``: the bytes in use): their bytes :data:`FINGERPRINT_SPAN`
    at a time, as (rows, words) of those still that long."""
    h = length.astype(np.uint64)
    h *= _MIX
    shortest = int(length.min())
    for k in range(0, int(length.max()), FINGERPRINT_SPAN):
        rows = None if shortest > k else np.flatnonzero(length > k)
        left = (length - k if k else length) if rows is None else length[rows] - k  # bytes from byte k on, > 0
        width = min(FINGERPRINT_SPAN, (int(left.max()) + 7) // 8 * 8)
        words = _records(data, end, start + k if rows is None else start[rows] + k, width)
        if rows is None:
            _mix_words(h, words, left)
        else:
            part = h[rows]
            _mix_words(part, words, left)
            h[rows] = part
    return _mix(h)


def _step(h: np.ndarray) -> np.ndarray:
    """One word's mixing step (multiply by an odd constant, xor-shift: a bijection), in
    place; :func:`_block_fingerprints` ends with the full :func:`_mix`."""
    h *= _MIX
    h ^= h >> np.uint64(32)
    return h


def _mix_words(h: np.ndarray, words: np.ndarray, left: np.ndarray) -> None:
    """Mix into ``h`` (in place) each row's words (``words``: rows x words) up to
    its ``left`` bytes, the last one masked to them."""
    shortest = int(left.min())
    for j in range(words.shape[1]):
        k = 8 * j
        if shortest >= k + 8:  # every row has all 8 bytes of word j
            h ^= words[:, j]
            _step(h)
            continue
        rows = None if shortest > k else np.flatnonzero(left > k)  # the rows with a byte in word j
        rest = left - k if rows is None else left[rows] - k
        w = (words[:, j] if rows is None else words[rows, j]) & _WORD_MASKS[np.minimum(rest, 8)]
        if rows is None:
            h ^= w
            _step(h)
        else:
            h[rows] = _step(h[rows] ^ w)


def _records(data: np.ndarray, end: int, pos: np.ndarray, width: int) -> np.ndarray:
    """(len(pos), width // 8) little-endian words: the ``width`` bytes of
    ``data`` from each of ``pos`` (increasing), zeros past ``end``; the last
    records come from a zero-padded copy of the buffer's last bytes, so no read
    passes its end."""
    kind = np.dtype("<u8") if width == 8 else np.dtype((np.void, width))
    tail0 = max(end - width, 0)  # records starting after tail0 would pass the buffer's end
    n_safe = int(np.searchsorted(pos, tail0, side="right")) if end >= width else 0
    if n_safe:
        direct = np.ndarray((end - width + 1,), dtype=kind, buffer=data, strides=(1,))
    if n_safe and n_safe == len(pos):
        out = direct[pos]
    else:
        tail = np.concatenate([data[tail0:end], np.zeros(width, np.uint8)])
        out = np.empty(len(pos), dtype=kind)
        if n_safe:
            out[:n_safe] = direct[pos[:n_safe]]
        out[n_safe:] = np.ndarray((len(tail) - width + 1,), dtype=kind, buffer=tail, strides=(1,))[pos[n_safe:] - tail0]
    return out.view("<u8").reshape(len(pos), width // 8)


def byte_order_keys(arr, max_bytes: int = 16, *, skip: int = 0) -> list[np.ndarray] | None:
    """Numeric keys whose lexicographic order is the strings' byte-wise order:
    the first bytes as big-endian 64-bit words (zero-padded), then the length;
    None when a string is longer than ``max_bytes`` (not counting the first ``skip``
    bytes, left out of the keys: a prefix every string shares, see
    :func:`common_prefix_length`)."""
    import pyarrow as pa
    arr = arr if isinstance(arr, pa.ChunkedArray) else pa.chunked_array([arr])
    chunks = list(_string_chunks(arr))
    longest = max((int(np.diff(off).max(initial=0)) for _, off, _ in chunks), default=0) - skip
    if longest > max_bytes:
        return None
    n_words = max((longest + 7) // 8, 1)
    parts: list[list[np.ndarray]] = [[] for _ in range(n_words + 1)]
    for _, off, data in chunks:
        length = np.diff(off) - skip
        padded = np.concatenate([data[off[0]:off[-1]], np.zeros(8, np.uint8)])
        start = off[:-1] - off[0] + skip
        words = np.ndarray((len(padded) - 7,), dtype=">u8", buffer=padded, strides=(1,))
        for k in range(n_words):
            w = words[np.minimum(start + 8 * k, len(words) - 1)].astype(np.uint64)
            keep = np.clip(length - 8 * k, 0, 8)  # bytes of this word inside the string
            drop = np.minimum((8 - keep) * 8, 63).astype(np.uint64)
            parts[k].append(np.where(keep > 0, (w >> drop) << drop, np.uint64(0)))
        parts[n_words].append(length)
    return [np.concatenate(p) for p in parts]


def common_prefix_length(arr) -> int:
    """The number of leading bytes every string of ``arr`` shares (0 for none or no
    string): those of the byte-wise least and greatest strings."""
    import pyarrow as pa
    arr = arr if isinstance(arr, pa.ChunkedArray) else pa.chunked_array([arr])
    if len(arr) - arr.null_count < 2:
        return 0
    ends = pc.min_max(arr)
    lo, hi = (ends["min"].as_py(), ends["max"].as_py())
    lo, hi = (x.encode("utf-8") if isinstance(x, str) else x for x in (lo, hi))
    n = min(len(lo), len(hi))
    differ = np.flatnonzero(np.frombuffer(lo[:n], np.uint8) != np.frombuffer(hi[:n], np.uint8))
    return int(differ[0]) if len(differ) else n


def pair_keys(codes: np.ndarray, fingerprint: np.ndarray) -> np.ndarray:
    """One 64-bit key per (integer code, doc fingerprint) pair: a (question, doc)
    or (system and question, doc) key.  Equal pairs, equal keys; distinct pairs
    almost never collide, and callers confirm matches on the strings."""
    return _mix(fingerprint ^ (codes.astype(np.uint64) * np.uint64(0xD6E8FEB86659FD93)))


#: Keys (or keys plus probes) from which :class:`KeyIndex` hashes (pandas' hash table, the
#: fastest at hand: 27 ms for 300k keys and 1M probes, against 199 ms for a sort and a
#: binary search in numpy and 280 ms for Arrow's ``index_in``).  Below it, or below
#: :data:`HASH_KEYS_LOADED` when pandas is loaded already, the keys are sorted and searched:
#: importing pandas (0.17 s) costs more than the search saves up to about 1.3M keys and
#: probes (264k: 32 ms against 5 ms; 1.3M: 199 ms against 27 ms).
HASH_KEYS = 1 << 20
#: Keys (or keys plus probes) from which :class:`KeyIndex` hashes when pandas is loaded already.
HASH_KEYS_LOADED = 1 << 10


def _hashed(n: int) -> bool:
    import sys
    return n >= HASH_KEYS or (n >= HASH_KEYS_LOADED and "pandas" in sys.modules)


class KeyIndex:
    """uint64 keys (well mixed: fingerprints, pair keys) indexed for look-ups of their
    positions; ``distinct``: no key repeats (look-ups are for distinct keys only).
    ``probes``: about how many keys will be looked up (the choice of hash or sort counts them)."""

    def __init__(self, keys: np.ndarray, probes: int = 0):
        self.keys, self.hash, self.order, self.sorted = keys, None, None, None
        if _hashed(len(keys) + probes):
            self._hash()
            self.distinct = bool(self.hash.is_unique)
        else:
            self.order = np.argsort(keys, kind="stable")
            self.sorted = keys[self.order]
            self.distinct = not bool((self.sorted[1:] == self.sorted[:-1]).any())

    def _hash(self):
        import pandas as pd
        self.hash = pd.Index(self.keys)

    def positions(self, probe: np.ndarray) -> np.ndarray:
        """Each of ``probe``'s position among the keys, -1 where absent."""
        if self.hash is None and _hashed(len(self.keys) + len(probe)):
            self._hash()
        if self.hash is not None:
            return self.hash.get_indexer(probe)
        if not len(self.sorted):
            return np.full(len(probe), -1, dtype=np.int64)
        at = np.minimum(np.searchsorted(self.sorted, probe), len(self.sorted) - 1)
        return np.where(self.sorted[at] == probe, self.order[at], -1)
