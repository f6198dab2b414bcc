"""The ranking step's sort: rows by (group, primary key, tie-breaking key), all ascending.

:func:`sort_plan` says how to sort the rows, as a :class:`RowOrder`: a run already grouped
by question and sorted by score (the usual case, detected in O(n)) moves whole groups as
blocks, with no n-sized permutation; otherwise one in-place sort of a single uint64 key
per row (:func:`_group_primary_order`).  Either way the tie-breaking key is read, and
sorted, only inside blocks of tied rows (:func:`_tie_order`, :func:`_sort_in_blocks`).
No Python loop per group or per row.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._arrow_numpy import distinct
from ._id_bytes import BLOCK_ROWS
from ._id_codes import contiguous_groups


def _both_sides(pairs: np.ndarray) -> np.ndarray:
    """Rows i and i + 1 of every adjacent pair marked True in ``pairs`` (length n - 1)."""
    rows = np.zeros(len(pairs) + 1, dtype=bool)
    rows[1:] |= pairs
    rows[:-1] |= pairs
    return rows


def _run_heads(idx: np.ndarray, pairs: np.ndarray) -> np.ndarray:
    """Of the rows ``idx`` (ascending: the rows of :func:`_both_sides`' pairs), those that
    start a run of rows tied pair by pair: a row not tied with the row before it."""
    return (idx == 0) | ~pairs[np.maximum(idx - 1, 0)]


def _sorted_order(grp: np.ndarray, primary: np.ndarray, tiebreak) -> tuple[np.ndarray, np.ndarray | None]:
    """Permutation sorting rows by (grp, primary, tiebreak) and the tied pairs:
    :func:`_sort_rows` with the permutation always an array."""
    order, _, tied = _sort_rows(grp, primary, tiebreak)
    return (np.arange(len(grp)) if order is None else order), tied


def _sort_rows(grp: np.ndarray, primary: np.ndarray, tiebreak
               ) -> tuple[np.ndarray | None, np.ndarray, np.ndarray | None]:
    """Permutation sorting rows by (grp, primary, tiebreak), all ascending, the
    sorted ``grp`` and the rows tied on (grp, primary) (a mask of the input's
    rows; None when no row is tied): :func:`sort_plan` with the permutation as
    an array (None when no row moves)."""
    plan, g_s, tied_rows = sort_plan(grp, primary, tiebreak)
    return plan.array(), g_s, tied_rows


@dataclass(frozen=True, eq=False)
class RowOrder:
    """Where each of ``n`` rows goes when they are sorted.

    Either an explicit permutation (``order``: sorted position -> row), or, for a
    run already grouped and sorted inside its groups, whole groups moving as
    blocks (``shift``: per group code, how far its rows move; None: no block
    moves; ``grp``: each row's group code) after the rows of each block of ties
    are permuted in place (``tie_rows``: those rows, ascending; ``tie_sub``: row
    ``tie_rows[j]``'s place takes row ``tie_rows[tie_sub[j]]``).  The block form
    puts a few rows (the judged ones) in their places without an n-sized
    permutation (:meth:`scatter`)."""

    n: int
    order: np.ndarray | None = None
    grp: np.ndarray | None = None
    shift: np.ndarray | None = None
    tie_rows: np.ndarray | None = None
    tie_sub: np.ndarray | None = None

    def array(self) -> np.ndarray | None:
        """The permutation (sorted position -> row), None when no row moves."""
        if self.order is not None:
            return self.order
        if self.shift is None and self.tie_rows is None:
            return None
        out = np.arange(self.n)
        if self.shift is not None:
            out[self.positions(out)] = out.copy()
        elif self.tie_rows is not None:
            out[self.tie_rows] = self.tie_rows[self.tie_sub]
        return out

    def positions(self, rows: np.ndarray) -> np.ndarray:
        """The sorted position of each of ``rows`` (block form only)."""
        pos = np.asarray(rows, dtype=np.int64).copy()
        if self.tie_rows is not None and len(pos):
            inv = np.empty(len(self.tie_sub), dtype=np.int64)
            inv[self.tie_sub] = np.arange(len(self.tie_sub))
            k = np.minimum(np.searchsorted(self.tie_rows, pos), len(self.tie_rows) - 1)
            hit = self.tie_rows[k] == pos
            pos[hit] = self.tie_rows[inv[k[hit]]]
        if self.shift is not None:
            pos += self.shift[self.grp[rows]]
        return pos

    def take(self, values: np.ndarray) -> np.ndarray:
        """``values`` (one per row) in sorted order (``values`` itself when no row moves)."""
        order = self.array()
        return values if order is None else values[order]

    def scatter(self, rows: np.ndarray, values: np.ndarray, fill) -> np.ndarray:
        """An array in sorted order holding ``values`` at the places of ``rows``, ``fill`` elsewhere."""
        out = np.full(self.n, fill, dtype=values.dtype)
        if self.order is not None:
            out[rows] = values
            return out[self.order]
        out[self.positions(rows) if self.shift is not None or self.tie_rows is not None else rows] = values
        return out


def sort_plan(grp: np.ndarray, primary: np.ndarray, tiebreak) -> tuple[RowOrder, np.ndarray, np.ndarray | None]:
    """How to sort rows by (grp, primary, tiebreak), all ascending (a
    :class:`RowOrder`), the sorted ``grp``, and the rows tied on (grp, primary)
    with another row (a mask of the input's rows; None when no row is tied).

    ``tiebreak(rows)`` returns the tie-breaking key of the given rows (or a
    list of keys, least significant first, as for ``numpy.lexsort``); it is
    called only for rows whose (grp, primary) is tied with another row's.  Runs
    usually arrive grouped by question and sorted by score: that is detected in
    O(n) and only whole groups move, with no n-sized permutation built.
    Otherwise one stable argsort of a combined key (:func:`_group_primary_order`).
    Either way the tie-breaking key is sorted only inside blocks of ties.
    """
    n = len(grp)
    if n == 0:
        return RowOrder(0), grp, None
    same_g = grp[1:] == grp[:-1]
    starts = np.flatnonzero(np.concatenate(([True], ~same_g)))
    grouped = contiguous_groups(grp, starts)
    if grouped and np.all((primary[1:] >= primary[:-1]) | ~same_g):
        # Grouped and sorted within groups: ties are found in place, only the blocks move.
        tied = primary[1:] == primary[:-1]
        tied &= same_g
        del same_g
        heads = grp[starts]
        shift = g_s = None
        if np.all(heads[1:] > heads[:-1]):
            g_s = grp  # already in order: no block moves
        else:
            block_order = np.argsort(heads, kind="stable")
            lengths = np.diff(np.append(starts, n))[block_order]
            shift = np.zeros(int(heads.max()) + 1, dtype=np.int64)
            shift[heads[block_order]] = (np.cumsum(lengths) - lengths) - starts[block_order]
            g_s = np.repeat(heads[block_order], lengths)
        if not tied.any():
            return RowOrder(n, grp=grp, shift=shift), g_s, None
        tied_rows = _both_sides(tied)
        idx = np.flatnonzero(tied_rows)
        first = np.flatnonzero(_run_heads(idx, tied))
        return RowOrder(n, grp=grp, shift=shift, tie_rows=idx,
                         tie_sub=_tie_order(first, tiebreak(idx))), g_s, tied_rows
    del same_g
    order, g_s, p_s = _group_primary_order(grp, primary, grouped=grouped)
    tied = p_s[1:] == p_s[:-1]
    del p_s
    tied &= g_s[1:] == g_s[:-1]
    if not tied.any():
        return RowOrder(n, order=order), g_s, None
    idx = np.flatnonzero(_both_sides(tied))
    first = np.flatnonzero(_run_heads(idx, tied))
    rows = order[idx]
    order[idx] = rows[_tie_order(first, tiebreak(rows))]  # inside blocks of one group: the sorted groups stay
    tied_rows = np.zeros(n, dtype=bool)
    tied_rows[rows] = True
    return RowOrder(n, order=order), g_s, tied_rows


def _tie_order(first: np.ndarray, keys) -> np.ndarray:
    """The permutation sorting contiguous blocks of tied rows (starting at ``first``)
    by their tie-breaking key(s), stably, blocks in place: ``numpy.lexsort((*keys,
    block))``.  Several keys (least significant first) are sorted by the most
    significant one, and only the runs of rows still tied on it (few: ids that share
    their first bytes) by the others."""
    if not isinstance(keys, (list, tuple)):
        return _sort_in_blocks(first, keys)
    *rest, top = keys
    sub = _sort_in_blocks(first, top)
    if not rest:
        return sub
    m = len(top)
    block = np.repeat(np.arange(len(first)), np.diff(np.append(first, m)))
    t = top[sub]
    same = t[1:] == t[:-1]
    same &= block[1:] == block[:-1]
    if not same.any():
        return sub
    idx = np.flatnonzero(_both_sides(same))
    again = np.flatnonzero(_run_heads(idx, same))
    rows = sub[idx]
    sub[idx] = rows[_tie_order(again, [k[rows] for k in rest])]
    return sub


_SIGN = np.uint64(1 << 63)
_ALL = np.uint64(2 ** 64 - 1)


def _float_order_keys(x: np.ndarray) -> np.ndarray:
    """uint64 keys ordered as the float64 values ``x`` are (-0.0 and 0.0 equal);
    :data:`~evalframe.schema.BLOCK_ROWS` rows at a time (temporaries stay in cache)."""
    x = np.asarray(x, dtype=np.float64)
    out = np.empty(len(x), dtype=np.uint64)
    for lo in range(0, len(x), BLOCK_ROWS):
        u = out[lo:lo + BLOCK_ROWS]
        np.add(x[lo:lo + BLOCK_ROWS], 0.0, out=u.view(np.float64))  # -0.0 + 0.0 is 0.0
        flip = u >> np.uint64(63)
        flip *= _ALL  # all ones for negatives (whose order reverses), else 0
        flip |= _SIGN
        u ^= flip
    return out


def _group_primary_order(grp: np.ndarray, primary: np.ndarray, *, grouped: bool = False
                         ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The stable permutation sorting rows by (grp, primary), ``grp`` >= 0, with
    ``grp`` and ``primary`` in that order.

    One in-place sort of a single uint64 key per row: the group code in the high
    bits, then the top bits of ``primary``'s order key (offset by the smallest,
    so that a narrow range of scores keeps more of its bits), then the row
    number, which makes the sort stable and gives the permutation without an
    argsort.  Rows whose keys tie on (group, score bits) but whose ``primary``
    differ (values closer than the bits kept) are then ordered by (primary, row)
    inside their blocks, so the result is exactly the stable sort by (grp, primary).

    ``grouped``: every group's rows are contiguous; then a stable argsort of the
    (group, score bits) key, which runs along the groups already in place, is the
    faster sort."""
    n = len(grp)
    bits = max(int(grp.max()).bit_length(), 1)
    rbits = max((n - 1).bit_length(), 1)
    if grouped and bits <= 40:
        key = _float_order_keys(primary)
        key >>= np.uint64(bits)
        high = grp.astype(np.uint64)
        high <<= np.uint64(64 - bits)
        key |= high
        del high
        order = np.argsort(key, kind="stable")
        key = key[order]
        same = key[1:] == key[:-1]
        del key
        return _exact_in_blocks(order, same, grp[order], primary)
    if 64 - bits - rbits < 16:  # too many groups or rows to leave enough bits to the score: two stable sorts
        order = np.argsort(primary, kind="stable")
        order = order[np.argsort(grp[order], kind="stable")]
        return order, grp[order], primary[order]
    key = _float_order_keys(primary)
    low = key.min()
    key -= low
    drop = max(int(key.max()).bit_length() - (64 - bits - rbits), 0)
    if drop:
        key >>= np.uint64(drop)
    key <<= np.uint64(rbits)
    key |= np.arange(n, dtype=np.uint64)
    high = grp.astype(np.uint64)
    high <<= np.uint64(64 - bits)
    key |= high
    del high
    key.sort()
    order = (key & np.uint64((1 << rbits) - 1)).view(np.int64)  # < 2^63: the same bits
    key >>= np.uint64(rbits)  # (group, score bits)
    same = key[1:] == key[:-1]
    key >>= np.uint64(64 - bits - rbits)
    g_s = key.astype(grp.dtype)
    del key
    return _exact_in_blocks(order, same, g_s, primary)


def _exact_in_blocks(order: np.ndarray, same: np.ndarray, g_s: np.ndarray, primary: np.ndarray
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``order`` (sorted by truncated keys; ``same``: adjacent sorted rows share their
    key) with the blocks of equal keys whose ``primary`` differ re-sorted by
    (primary, row), and the sorted groups and ``primary``."""
    p_s = primary[order]
    close = same & (p_s[1:] != p_s[:-1])
    if close.any():  # keys too short for some values: order those blocks exactly
        idx = np.flatnonzero(_both_sides(same))
        block = np.cumsum(_run_heads(idx, same)) - 1
        fix = np.zeros(int(block[-1]) + 1, dtype=bool)
        fix[block[np.searchsorted(idx, np.flatnonzero(close))]] = True
        keep = fix[block]
        idx, block = idx[keep], block[keep]
        rows = order[idx]
        order[idx] = rows = rows[np.lexsort((rows, primary[rows], block))]
        p_s[idx] = primary[rows]
    return order, g_s, p_s


def _sort_in_blocks(first: np.ndarray, key: np.ndarray) -> np.ndarray:
    """The permutation sorting each block of ``key`` stably (blocks are
    contiguous and start at ``first``; float keys are finite), blocks in place.

    Blocks (ties, or one question's ranking) are small: those of one
    power-of-two size class are the rows of one padded matrix, sorted along its
    rows (no global sort, no lexsort)."""
    m = len(key)
    sizes = np.diff(np.append(first, m))
    klass = np.ceil(np.log2(sizes)).astype(np.int64)
    sub = np.empty(m, dtype=np.int64)
    pad = np.inf if key.dtype.kind == "f" else np.iinfo(key.dtype).max
    block_of_row = np.repeat(np.arange(len(first)), sizes)
    within = np.arange(m) - first[block_of_row]
    for c in distinct(klass):  # at most 64 classes, not one pass per block
        blocks = np.flatnonzero(klass == c)
        rows = np.flatnonzero(klass[block_of_row] == c)  # block-major, like the matrix
        local = np.empty(len(first), dtype=np.int64)
        local[blocks] = np.arange(len(blocks))
        mat = np.full((len(blocks), 1 << int(c)), pad, dtype=key.dtype)
        mat[local[block_of_row[rows]], within[rows]] = key[rows]
        perm = np.argsort(mat, axis=1, kind="stable")  # padding sorts last
        real = np.arange(mat.shape[1]) < sizes[blocks][:, None]
        sub[rows] = (first[blocks][:, None] + perm)[real]
    return sub
