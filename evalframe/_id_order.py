"""The natural order of ids, and distinct ids held as Arrow strings.

Questions are listed, and examples shown, in their natural order: numerically when every
id is an integer (int64), else byte-wise (:func:`natural_order`; :func:`natural_order_rule`
also says which; :func:`natural_permutation` on Arrow strings, without a Python string
per id).  :class:`DistinctIds` holds distinct ids as an Arrow array indexed like a numpy
array, and :func:`str_column` makes pandas' ``str`` column of Arrow strings.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import re

import numpy as np
import pyarrow as pa

from . import _arrow_compute as pc
from ._arrow_numpy import arrow_of, numpy_of
from .canonical import pandas_strings_are_large

if TYPE_CHECKING:
    import pandas as pd


def natural_permutation(arr: pa.Array) -> tuple[np.ndarray, bool] | None:
    """The permutation putting distinct Arrow string ids in natural order
    (numerically when every id is an int64 integer, else byte-wise) and whether
    it is numeric, or None when the general rule of :func:`_natural_order` is needed."""
    try:
        if not int64_ids(arr):
            return numpy_of(pc.sort_indices(arr)), False  # byte-wise = code point order
        return np.argsort(numpy_of(pc.cast(arr, pa.int64())), kind="stable"), True
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return None


_INT64_ID = r"^(0|-?[1-9][0-9]{0,18})$"


def int64_ids(arr: pa.Array) -> bool:
    """Whether every string id is an int64 integer written plainly (the ids natural
    order sorts numerically).  The first and last ids are looked at first: text ids
    are told without a pass over them all."""
    if len(arr) and not all(re.match(_INT64_ID, arr[i].as_py()) for i in (0, len(arr) - 1)):
        return False
    return bool(pc.all(pc.match_substring_regex(arr, _INT64_ID)).as_py())


class DistinctIds:
    """Distinct ids held as an Arrow array, indexed like a numpy array; Python
    strings are made only for the few that are shown (examples, messages)."""

    def __init__(self, arr: pa.Array, numeric: bool | None = None):
        self.arrow = arr
        #: whether their natural order is numeric (every id an integer); None: not known
        self.numeric = numeric

    def __len__(self) -> int:
        return len(self.arrow)

    def __getitem__(self, idx) -> "DistinctIds":
        if isinstance(idx, slice):
            return DistinctIds(self.arrow[idx])
        idx = np.asarray(idx)
        if idx.dtype == bool:
            idx = np.flatnonzero(idx)
        return DistinctIds(pc.take(self.arrow, arrow_of(idx.astype(np.int64, copy=False))))

    def __iter__(self):
        return iter(self.arrow.to_pylist())

    def series(self) -> pd.Series:
        """The ids as a pandas ``str`` column (object before pandas 3), without Python objects."""
        return str_column(self.arrow)


def str_column(a) -> pd.Series:
    """An Arrow string array as pandas' ``str`` column (object before pandas 3)."""
    import pandas as pd
    return pd.Series(str_array(a), copy=False)


def str_array(a):
    """An Arrow string array (or chunked array) as the values of pandas' ``str`` column:
    an ``ArrowStringArray`` on its buffers (pandas >= 3), else numpy objects.  A frame
    made of such arrays can take them with ``copy=False``: Arrow buffers are never
    written to, the objects are new."""
    import pandas as pd
    if pandas_strings_are_large():
        return pd.arrays.ArrowStringArray(a, dtype=pd.StringDtype("pyarrow", na_value=np.nan))
    return a.to_numpy(zero_copy_only=False).astype(object, copy=False)


def _natural_order(ids: np.ndarray) -> np.ndarray:
    """Sorted unique ids: numerically when every id is an integer, else as strings."""
    return natural_order_rule(ids)[0]


def natural_order_rule(ids: np.ndarray) -> tuple[np.ndarray, bool]:
    """:func:`_natural_order` and whether it sorted numerically (every id an integer)."""
    import pandas as pd
    uniq = pd.unique(pd.Series(ids, dtype=object))
    try:
        natural = natural_permutation(pa.array(uniq, type=pa.large_string()))
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        natural = None  # not all strings: the general rule below
    if natural is not None:  # else also an integer beyond int64
        return uniq[natural[0]].astype(object), natural[1]
    s = pd.Series(uniq, dtype=object)
    num = pd.to_numeric(s, errors="coerce")
    if num.notna().all() and (s.astype(str) == num.astype(np.int64).astype(str)).all():
        return s.iloc[np.argsort(num.to_numpy(), kind="stable")].to_numpy(dtype=object), True
    return np.sort(s.to_numpy(dtype=object)), False


def natural_order(ids: np.ndarray) -> np.ndarray:
    """The distinct ids in the order :func:`judge` lists questions: numerically when
    every id is an integer, else byte-wise (engines that evaluate in parts sort by it)."""
    return _natural_order(ids)
