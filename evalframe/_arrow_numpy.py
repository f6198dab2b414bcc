"""numpy arrays to and from Arrow arrays through their buffers, without pandas.

pyarrow's own conversions (``pyarrow.array`` of a numpy array or a list, ``Array.to_numpy``,
``pyarrow.scalar``) import pandas on first use when it is installed (0.2 s: its C++
conversion code looks up pandas' missing-value objects), and ``evalframe trec-eval``
imports no pandas.  Numbers without missing values, and booleans, are moved here as
their buffers instead: zero-copy for numbers both ways, as pyarrow's conversion is; other
arrays (strings to Python objects, arrays with nulls) go through pyarrow's conversion.
"""
from __future__ import annotations

import numpy as np
import pyarrow as pa

_DTYPES = {"int8": np.int8, "int16": np.int16, "int32": np.int32, "int64": np.int64, "uint8": np.uint8,
           "uint16": np.uint16, "uint32": np.uint32, "uint64": np.uint64, "halffloat": np.float16,
           "float": np.float32, "double": np.float64}
_TYPES = {np.dtype(v): getattr(pa, "float16" if k == "halffloat" else "float32" if k == "float"
                               else "float64" if k == "double" else k)() for k, v in _DTYPES.items()}


def numpy_of(arr: pa.Array | pa.ChunkedArray, *, null=None) -> np.ndarray:
    """An Arrow array as numpy: numbers without nulls as a read-only view of the array's
    buffer (with nulls and a ``null`` value: a copy, ``null`` where they were), booleans
    without nulls unpacked; other arrays as ``to_numpy(zero_copy_only=False)``."""
    if isinstance(arr, pa.ChunkedArray):  # (no chunks: combine_chunks would build pyarrow.array([]))
        arr = arr.chunk(0) if arr.num_chunks == 1 else pa.concat_arrays(arr.chunks) if arr.num_chunks \
            else pa.nulls(0, arr.type)
    dtype = _DTYPES.get(str(arr.type))
    if dtype is not None and (arr.null_count == 0 or null is not None):
        buf = arr.buffers()[1]
        if buf is None or not len(arr):
            return np.zeros(0, dtype=dtype)
        values = np.frombuffer(buf, dtype=dtype)[arr.offset: arr.offset + len(arr)]
        return values if arr.null_count == 0 else np.where(_bits(arr.buffers()[0], arr), values, null).astype(dtype)
    if arr.null_count == 0 and pa.types.is_boolean(arr.type):
        if not len(arr):
            return np.zeros(0, dtype=bool)
        return _bits(arr.buffers()[1], arr)
    return arr.to_numpy(zero_copy_only=False)


def _bits(buf: pa.Buffer, arr: pa.Array) -> np.ndarray:
    """The bits of a bitmap buffer (validity or boolean values) of ``arr``, as booleans."""
    bits = np.unpackbits(np.frombuffer(buf, dtype=np.uint8), bitorder="little")
    return bits[arr.offset: arr.offset + len(arr)].astype(bool)


def arrow_of(values: np.ndarray) -> pa.Array:
    """A one-dimensional numpy array of numbers or booleans as an Arrow array (numbers: the
    same buffer, no copy when contiguous); anything else through ``pyarrow.array``."""
    values = np.asarray(values)
    if values.ndim == 1 and values.dtype in _TYPES:
        values = np.ascontiguousarray(values)
        return pa.Array.from_buffers(_TYPES[values.dtype], len(values), [None, pa.py_buffer(values)])
    if values.ndim == 1 and values.dtype == bool:
        return pa.Array.from_buffers(pa.bool_(), len(values),
                                     [None, pa.py_buffer(np.packbits(values, bitorder="little"))])
    return pa.array(values)


def distinct(values: np.ndarray) -> np.ndarray:
    """``np.unique(values)`` (the distinct values, ascending) of a 1-d array of integers, by
    Arrow's hash: numpy 2's ``np.unique`` imports ``numpy.ma`` on its first call (12 ms,
    which ``evalframe trec-eval`` otherwise never loads).  Other arrays: ``np.unique``."""
    if values.dtype.kind not in "iu":
        return np.unique(values)
    from . import _arrow_compute as pc
    return np.sort(numpy_of(pc.unique(arrow_of(np.ascontiguousarray(values)))))


def repeated_text(text: str, n: int, type_: pa.DataType) -> pa.Array:
    """``text`` ``n`` times as an Arrow string array of type ``type_`` (string or large string)."""
    data = text.encode("utf-8")
    offsets = np.array([0, len(data)], dtype=np.int64 if pa.types.is_large_string(type_) else np.int32)
    one = pa.Array.from_buffers(type_, 1, [None, pa.py_buffer(offsets), pa.py_buffer(data)])
    from . import _arrow_compute as pc
    return pc.take(one, arrow_of(np.zeros(n, dtype=np.int64)))
