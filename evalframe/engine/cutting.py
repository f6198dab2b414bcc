"""How a run is cut into parts of whole questions, on every engine: the stretches of rows
of one question id (:func:`run_starts`), and a question id's bucket (:func:`question_buckets`).

A question id is hashed as a string (``evalframe.schema.ids_to_str``), so question
``1`` of one table and ``"1"`` of another fall in the same bucket, on every engine and
in every process (the fingerprint is a fixed function of the id's bytes, not Python's
salted ``hash``).  pandas is imported only for a pandas column given: ``evalframe
trec-eval`` cuts its text blocks with Arrow alone.
"""
from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from .. import _arrow_compute as pc
from .._arrow_numpy import numpy_of
from .._id_bytes import fingerprints

if TYPE_CHECKING:
    import pandas as pd


def _is_series(x) -> bool:
    # pandas not imported, or being imported on another thread (no Series class yet):
    # x cannot be one of its Series
    series = getattr(sys.modules.get("pandas"), "Series", None)
    return series is not None and isinstance(x, series)


def question_fingerprints(query_id: "pd.Series | pa.Array | pa.ChunkedArray") -> np.ndarray:
    """The 64-bit fingerprint of each question id, compared as a string.

    Examples
    --------
    >>> import pandas as pd
    >>> a = question_fingerprints(pd.Series([1, 2]))
    >>> b = question_fingerprints(pd.Series(["1", "2"]))
    >>> bool((a == b).all()), a.dtype.name
    (True, 'uint64')
    """
    if _is_series(query_id):
        from ..schema import ids_to_str
        query_id = pa.array(ids_to_str(query_id), type=pa.large_string())  # Arrow strings stay Arrow
    if not isinstance(query_id, pa.ChunkedArray):
        query_id = pa.chunked_array([query_id])
    if query_id.type != pa.large_string():
        query_id = pc.cast(query_id, pa.large_string())
    return fingerprints(query_id)


def question_buckets(query_id: "pd.Series | pa.Array | pa.ChunkedArray", n_buckets: int) -> np.ndarray:
    """The bucket (0 .. n_buckets - 1) of each question id: its fingerprint modulo n.

    Examples
    --------
    >>> import pandas as pd
    >>> b = question_buckets(pd.Series(["q1", "q2", "q1"]), 4)
    >>> b.dtype.name, bool(b[0] == b[2]), bool(((0 <= b) & (b < 4)).all())
    ('int64', True, True)
    """
    return (question_fingerprints(query_id) % np.uint64(n_buckets)).astype(np.int64)


def run_starts(ids: "pd.Series | pa.Array | pa.ChunkedArray", threads: int = 1) -> np.ndarray:
    """The first row of each stretch of equal ids (one vectorised comparison of each row with
    the row before; a missing id starts a stretch): one per question when the rows of each
    question are together.  With ``threads`` > 1, a slice of rows per thread, each compared
    from the row before it (Arrow's comparison releases the GIL).

    Examples
    --------
    >>> import pandas as pd
    >>> run_starts(pd.Series(["a", "a", "b", "a"])).tolist()
    [0, 2, 3]
    >>> run_starts(pd.Series(["a", "a", "b", "a"]), threads=2).tolist()
    [0, 2, 3]
    """
    n = len(ids)
    if threads <= 1 or n < 2 * threads:
        return _starts(ids)
    from .._threads import map_in_order
    cuts = [n * i // threads for i in range(threads + 1)]

    def sliced(j: int) -> np.ndarray:
        lo = max(cuts[j] - 1, 0)  # from the row before the slice: is its first row a start?
        rows = ids.iloc[lo:cuts[j + 1]] if _is_series(ids) else ids[lo:cuts[j + 1]]
        found = _starts(rows) + lo
        return found if j == 0 else found[1:]
    return np.concatenate(map_in_order(sliced, range(threads), threads=threads))


def _starts(ids) -> np.ndarray:
    n = len(ids)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    if _is_series(ids) and ids.dtype.kind in "iub":
        v = ids.to_numpy()
        change = v[1:] != v[:-1]
    else:
        try:
            arr = ids if isinstance(ids, (pa.Array, pa.ChunkedArray)) else pa.array(ids, from_pandas=True)
        except (pa.ArrowInvalid, pa.ArrowTypeError):  # mixed types: every row its own stretch
            return np.arange(n, dtype=np.int64)
        change = numpy_of(pc.fill_null(pc.not_equal(arr[1:], arr[:-1]), True))
    return np.concatenate(([0], np.flatnonzero(change) + 1)).astype(np.int64)
