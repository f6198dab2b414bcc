"""How a measure's per-question values become one number per system.

Each aggregation is an object that works in parts, so that any engine
(chunked, streaming, distributed) can evaluate the questions in pieces::

    state = agg.partial(values)                 # one chunk of questions
    state = agg.combine([state_a, state_b])     # merge chunks, in order
    value = agg.finalize(state)                 # the number reported

``partial`` also takes ``groups`` (an int code per value) and ``n_groups``
and then returns one state per group, which is how
:func:`evalframe.aggregate` summarises every (system, measure) at once.
Sums run in the order of the values (sequentially, as trec_eval sums), so
evaluating all questions at once, or in chunks combined in question order,
gives the same number up to the order of the additions.
"""
from __future__ import annotations

__all__ = ["Aggregation", "Mean", "Sum", "GeoMean", "MIN_GEO_MEAN", "MEAN", "SUM", "GEO_MEAN"]

import math
import numbers
from dataclasses import dataclass
from typing import ClassVar, Sequence

import numpy as np

from .._validation import Interval, check

#: trec_eval's floor for geometric means (gm_map, gm_bpref): values below it count as it.
MIN_GEO_MEAN = 1e-5

#: State of a chunk: (sum of the transformed values, number of values); arrays
#: with one entry per group, or 0-d arrays without groups.
State = tuple[np.ndarray, np.ndarray]


def _sums(x: np.ndarray, groups: np.ndarray | None, n_groups: int | None) -> State:
    """Sequential sums and counts of ``x``, per group or over all of it."""
    x = np.asarray(x, dtype=np.float64)
    if groups is None:
        if len(x) == 0:
            return np.zeros(()), np.zeros(())
        return np.asarray(np.bincount(np.zeros(len(x), dtype=np.intp), weights=x)[0]), np.asarray(float(len(x)))
    groups = np.asarray(groups, dtype=np.intp)
    n = int(n_groups if n_groups is not None else (groups.max() + 1 if len(groups) else 0))
    return (np.bincount(groups, weights=x, minlength=n),
            np.bincount(groups, minlength=n).astype(np.float64))


@dataclass(frozen=True)
class Aggregation:
    """An aggregation over questions: ``partial`` -> ``combine`` -> ``finalize``.

    Subclasses set :attr:`name` and implement :meth:`transform` (applied to each
    value before summing) and :meth:`finish` (from the sum and count to the value).

    Examples
    --------
    The same mean, computed at once or in two chunks:

    >>> from evalframe.measures import Mean
    >>> agg = Mean()
    >>> float(agg.finalize(agg.partial([0.25, 0.5, 0.75])))
    0.5
    >>> a, b = agg.partial([0.25, 0.5]), agg.partial([0.75])
    >>> float(agg.finalize(agg.combine([a, b])))
    0.5
    """

    name: ClassVar[str] = ""

    def transform(self, values: np.ndarray) -> np.ndarray:
        return values

    def finish(self, total: np.ndarray, count: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def partial(self, values: np.ndarray, groups: np.ndarray | None = None,
                n_groups: int | None = None) -> State:
        """State of one chunk of per-question values (per group with ``groups``).

        Parameters
        ----------
        values : float array
            Per-question values.
        groups : int array, optional
            Group code of each value (0 .. n_groups - 1).
        n_groups : int, optional
            Number of groups (default: ``groups.max() + 1``).
        """
        return _sums(self.transform(np.asarray(values, dtype=np.float64)), groups, n_groups)

    def combine(self, states: Sequence[State]) -> State:
        """Merge chunk states (added in the order given)."""
        states = list(states)
        if not states:
            return np.zeros(()), np.zeros(())
        total, count = (np.array(s, dtype=np.float64) for s in states[0])
        for t, c in states[1:]:
            total = total + t
            count = count + c
        return total, count

    def finalize(self, state: State) -> "float | np.ndarray":
        """The aggregate value(s): a float for a 0-d state, else an array."""
        total, count = (np.asarray(s, dtype=np.float64) for s in state)
        out = self.finish(total, count)
        return float(out) if out.ndim == 0 else out

    def __str__(self) -> str:
        return self.name


def _mean(total: np.ndarray, count: np.ndarray) -> np.ndarray:
    out = np.zeros(np.shape(total))
    np.divide(total, count, out=out, where=count > 0)  # no questions: 0, as trec_eval
    return out


@dataclass(frozen=True)
class Mean(Aggregation):
    """Arithmetic mean over questions (0 for no questions).

    Examples
    --------
    >>> from evalframe.measures import Mean
    >>> float(Mean().finalize(Mean().partial([0.0, 0.5, 1.0])))
    0.5
    """

    name: ClassVar[str] = "mean"

    def finish(self, total, count):
        return _mean(total, count)


@dataclass(frozen=True)
class Sum(Aggregation):
    """Sum over questions (trec_eval's counts: num_ret, num_rel, num_rel_ret).

    Examples
    --------
    >>> from evalframe.measures import Sum
    >>> float(Sum().finalize(Sum().partial([3.0, 4.0, 5.0])))      # NumRelRet over three questions
    12.0
    """

    name: ClassVar[str] = "sum"

    def finish(self, total, count):
        return np.array(total, dtype=np.float64)


@dataclass(frozen=True)
class GeoMean(Aggregation):
    """Geometric mean over questions, each value floored at ``floor``:
    ``exp(mean(log(max(value, floor))))`` (trec_eval's gm_map, gm_bpref).

    Examples
    --------
    >>> from evalframe.measures import GeoMean
    >>> float(GeoMean().finalize(GeoMean().partial([0.25, 1.0])))
    0.5
    >>> GeoMean(floor=0.01).floor
    0.01
    """

    name: ClassVar[str] = "gmean"
    floor: float = MIN_GEO_MEAN

    def __post_init__(self):
        check("GeoMean", "floor", self.floor, Interval(numbers.Real, 0, None, closed="neither"))

    def transform(self, values):
        return np.log(np.maximum(values, self.floor))

    def finish(self, total, count):
        m = _mean(total, count)
        exp = np.vectorize(math.exp, otypes=[np.float64])  # libm's exp, as trec_eval (one call per group)
        return np.where(count > 0, exp(m), 0.0)


MEAN = Mean()
SUM = Sum()
GEO_MEAN = GeoMean()
