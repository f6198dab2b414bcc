"""Parameter checks: constraint objects, one :func:`check` and one message template.

Every public function checks its parameters up front with :func:`check` (or
:func:`validate` for several at once), so the maths after it stays short.  A bad
value raises :class:`~evalframe.errors.ParameterError` (a ``ValueError`` and a
``TypeError``) with one message::

    "<func>: <param> must be <what>, got <value!r>"

where ``<what>`` is said by the constraints the value failed, joined by "or":
``check("report", "n_resamples", 0, Interval(int, 1, None))`` raises
``report: n_resamples must be an int >= 1, got 0``.  ``None`` among the
constraints allows None (and nothing else does).

The idea is scikit-learn's ``sklearn.utils._param_validation`` (constraint objects,
one validation function); the code is evalframe's own.  Table contents (a golden set,
a run, a per-question table) are not parameters: :mod:`evalframe.schema` and
:func:`evalframe.stats.validation.clean_table` list every problem of a table at once.

Examples
--------
>>> from evalframe._validation import Interval, Options, check
>>> check("report", "seed", 3, Interval(int, 0, None))
3
>>> check("report", "confidence", 1, Interval(float, 0, 1, closed="neither"))
Traceback (most recent call last):
...
evalframe.errors.ParameterError: report: confidence must be a float in (0, 1), got 1
>>> check("fuse", "depth", None, Interval(int, 1, None), None) is None
True
>>> check("pool", "method", "max", Options(["depth", "rrf"]))
Traceback (most recent call last):
...
evalframe.errors.ParameterError: pool: method must be one of ['depth', 'rrf'], got 'max'
"""
from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Iterable
from typing import Any, Literal

import numpy as np

from evalframe.errors import ParameterError

__all__ = [
    "ParameterError", "Constraint", "Interval", "Options", "InstanceOf", "Boolean", "IsCallable",
    "Satisfies", "check", "validate", "error", "type_of", "is_int", "is_number",
    "CONFIDENCE", "SEED", "POSITIVE_INT", "BOOLEAN", "BOOLEAN_OR_NONE",
]

Closed = Literal["both", "left", "right", "neither"]

#: the longest ``repr`` of a bad value a message quotes whole (longer ones are cut).
MAX_REPR = 200


def _quote(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= MAX_REPR else text[: MAX_REPR - 3] + "..."


def error(func: str | None, param: str, what: str, value: Any) -> ParameterError:
    """The one message template: ``"<func>: <param> must be <what>, got <value!r>"``
    (``"<param> must be ..."`` when ``func`` is None)."""
    prefix = f"{func}: " if func else ""
    return ParameterError(f"{prefix}{param} must be {what}, got {_quote(value)}")


class _TypeName(str):
    def __repr__(self) -> str:
        return str(self)


def type_of(value: Any) -> str:
    """A value said by its type's name: ``error(..., type_of(table))`` ends "got DataFrame"
    (a table's ``repr`` is its rows)."""
    return _TypeName(type(value).__name__)


def is_int(value: Any) -> bool:
    """An integer (Python's or numpy's), not a bool."""
    return isinstance(value, (numbers.Integral, np.integer)) and not isinstance(value, (bool, np.bool_))


def is_number(value: Any) -> bool:
    """A real number (Python's or numpy's, int or float), not a bool."""
    return isinstance(value, (numbers.Real, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))


class Constraint:
    """What a valid value is: :meth:`accepts` says whether ``value`` is one,
    :meth:`describe` says it in the message's words ("an int >= 1"), :meth:`cast`
    returns the accepted value in canonical form."""

    def accepts(self, value: Any) -> bool:  # pragma: no cover - abstract
        raise NotImplementedError

    def describe(self) -> str:  # pragma: no cover - abstract
        raise NotImplementedError

    def cast(self, value: Any) -> Any:
        return value

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.describe()!r})"


def _bound(x: float) -> str:
    if isinstance(x, (int, np.integer)):
        return str(int(x))
    return f"{x:g}"


class Interval(Constraint):
    """A number in a range: ``Interval(int, 1, None)`` is "an int >= 1",
    ``Interval(float, 0, 1, closed="neither")`` "a float in (0, 1)".

    Parameters
    ----------
    type : ``int`` (integers, Python's or numpy's, never a bool), ``float`` (any
        real number, said "a float") or ``numbers.Real`` (the same, said "a number").
    low, high : the ends, None for no end.
    closed : which ends belong to the range: ``"both"`` (the default), ``"left"``,
        ``"right"`` or ``"neither"``.
    finite : whether a float must be finite (the default); NaN is always refused.
    """

    def __init__(self, type: type, low: float | None = None, high: float | None = None, *,
                 closed: Closed = "both", finite: bool = True) -> None:
        if type not in (int, float, numbers.Real):
            raise ValueError(f"Interval: type must be int, float or numbers.Real, got {type!r}")
        if closed not in ("both", "left", "right", "neither"):
            raise ValueError(f"Interval: closed must be 'both', 'left', 'right' or 'neither', got {closed!r}")
        self.type, self.low, self.high, self.closed, self.finite = type, low, high, closed, finite

    def accepts(self, value: Any) -> bool:
        if self.type is int:
            if not is_int(value):
                return False
        elif not is_number(value) or math.isnan(value) or (self.finite and not math.isfinite(value)):
            return False
        if self.low is not None:
            if value < self.low or (value == self.low and self.closed in ("right", "neither")):
                return False
        if self.high is not None:
            if value > self.high or (value == self.high and self.closed in ("left", "neither")):
                return False
        return True

    def describe(self) -> str:
        noun = {int: "an int", float: "a float"}.get(self.type, "a number")
        low_in, high_in = self.closed in ("both", "left"), self.closed in ("both", "right")
        if self.low is not None and self.high is not None:
            return (f"{noun} in {'[' if low_in else '('}{_bound(self.low)}, "
                    f"{_bound(self.high)}{']' if high_in else ')'}")
        if self.low is not None:
            return f"{noun} {'>=' if low_in else '>'} {_bound(self.low)}"
        if self.high is not None:
            return f"{noun} {'<=' if high_in else '<'} {_bound(self.high)}"
        return noun

    def cast(self, value: Any) -> Any:
        return int(value) if self.type is int else float(value)


class Options(Constraint):
    """One of a few values (``Options(["zero", "drop"])`` is "one of ['zero', 'drop']");
    ``what`` says them otherwise (``"'error', 'max' or 'first'"``). A value of another
    type than the options' is refused (``True`` is not the option ``1``)."""

    def __init__(self, values: Iterable, what: str | None = None) -> None:
        self.values = tuple(values)
        self.what = what

    def accepts(self, value: Any) -> bool:
        return any(type(value) is type(v) or isinstance(value, str) and isinstance(v, str)
                   for v in self.values if _equal(v, value))

    def describe(self) -> str:
        return self.what if self.what is not None else f"one of {list(self.values)}"


def _equal(a: Any, b: Any) -> bool:
    try:
        return bool(a == b)
    except (TypeError, ValueError):  # an array compared with a str
        return False


class InstanceOf(Constraint):
    """An instance of ``types`` (``InstanceOf(str, what="a system name (str)")``)."""

    def __init__(self, types: type | tuple[type, ...], what: str | None = None) -> None:
        self.types = types if isinstance(types, tuple) else (types,)
        self.what = what

    def accepts(self, value: Any) -> bool:
        return isinstance(value, self.types)

    def describe(self) -> str:
        if self.what is not None:
            return self.what
        names = [t.__name__ for t in self.types]
        return "a " + " or ".join(names)


class Boolean(Constraint):
    """``True`` or ``False`` (numpy's too), not 0 or 1."""

    def accepts(self, value: Any) -> bool:
        return isinstance(value, (bool, np.bool_))

    def describe(self) -> str:
        return "True or False"

    def cast(self, value: Any) -> bool:
        return bool(value)


class IsCallable(Constraint):
    """A callable; ``what`` says which (``"callable (fn(batch) -> labels)"``)."""

    def __init__(self, what: str = "a callable") -> None:
        self.what = what

    def accepts(self, value: Any) -> bool:
        return callable(value)

    def describe(self) -> str:
        return self.what


class Satisfies(Constraint):
    """Whatever ``predicate`` accepts, said ``what`` (for the rare check no other
    constraint states: "a measure family with a cutoff, e.g. 'R'")."""

    def __init__(self, predicate: Callable[[Any], bool], what: str) -> None:
        self.predicate, self.what = predicate, what

    def accepts(self, value: Any) -> bool:
        try:
            return bool(self.predicate(value))
        except (TypeError, ValueError):
            return False

    def describe(self) -> str:
        return self.what


def describe(constraints: Iterable[Constraint | None]) -> str:
    """The constraints in words, joined by "or" (None is "None")."""
    return " or ".join("None" if c is None else c.describe() for c in constraints)


def check(func: str | None, param: str, value: Any, *constraints: Constraint | None) -> Any:
    """``value`` if one of ``constraints`` accepts it (cast by that constraint:
    ``np.int64(3)`` for ``Interval(int, ...)`` is returned as ``3``), else
    :class:`ParameterError` ``"<func>: <param> must be <what>, got <value!r>"``.

    ``None`` among the constraints allows None; nothing else does.
    """
    if not constraints:
        raise TypeError("check: give at least one constraint")
    for c in constraints:
        if c is None:
            if value is None:
                return None
        elif c.accepts(value):
            return c.cast(value)
    raise error(func, param, describe(constraints), value)


def validate(func: str | None, **specs: tuple) -> dict[str, Any]:
    """Check several parameters, in the order given: ``param=(value, *constraints)``
    each; the checked (cast) values by name, or the first parameter's error.

    >>> validate("summarize", confidence=(0.9, CONFIDENCE), seed=(0, SEED))
    {'confidence': 0.9, 'seed': 0}
    """
    return {param: check(func, param, spec[0], *spec[1:]) for param, spec in specs.items()}


#: a confidence level (or an alpha, a power): a float in (0, 1).
CONFIDENCE = Interval(float, 0, 1, closed="neither")
#: a seed of ``numpy.random.default_rng``: an int >= 0.
SEED = Interval(int, 0, None)
#: a count of one or more (resamples, documents, changes): an int >= 1.
POSITIVE_INT = Interval(int, 1, None)
#: True or False.
BOOLEAN = Boolean()
#: True, False or None (a switch whose default is decided later: ``progress=None``).
BOOLEAN_OR_NONE = Satisfies(lambda v: v is None or BOOLEAN.accepts(v), "True, False or None")
