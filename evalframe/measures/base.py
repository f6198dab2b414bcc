"""Measure, Family and parameter specs; the registry of families.

A :class:`Family` declares everything about a kind of measure: its cutoff
rule, its parameters (a :class:`ParamSpec` each: type, default, allowed
values, one-line description), how it aggregates over questions, its aliases
and its trec_eval names, and the vectorised function that computes it.  A
:class:`Measure` is a family with a cutoff and parameters, checked when it is
built: every parameter error reads ``"<Family>: <param> must be <what>, got
<value!r>"`` and is a ``ValueError``.

Families are registered explicitly (see :mod:`evalframe.measures.registry`);
nothing is patched at import.
"""
from __future__ import annotations

__all__ = ["ParamSpec", "Family", "Measure", "Registry", "REGISTRY", "FAMILIES", "UNIT"]

import math
import numbers
import re
import types
from dataclasses import dataclass, field
from typing import Any, Callable, Literal, Mapping


from .._validation import BOOLEAN, POSITIVE_INT, Constraint, Interval, Options, Satisfies, check, error, is_int, is_number
from .aggregation import MEAN, Aggregation

Cutoff = Literal["none", "optional", "required"]
Kind = Literal["int", "float", "bool", "choice", "floats", "gains"]

#: the value range of a measure whose per-question values lie in [0, 1]
UNIT = (0.0, 1.0)


@dataclass(frozen=True)
class ParamSpec:
    """A family's parameter: its type, default, allowed values and meaning.

    Attributes
    ----------
    kind : {"int", "float", "bool", "choice", "floats", "gains"}
        ``floats`` is a tuple of numbers (``length`` of them, or any non-empty
        number); ``gains`` is a tuple of (label, gain) pairs (or trec_eval's
        text ``'1=3,2=9'``), or None.
    default : the value used when the name does not give one.
    description : one line, shown in listings.
    low, high : allowed range for numbers (and for each number of ``floats``).
    low_open, high_open : whether the range excludes its ends.
    choices : allowed values of a ``choice``, with their meaning.
    none_ok : whether None is allowed (``rel=None``: evaluate()'s convention).
    length : exact number of entries of ``floats``.
    required : whether every name must give it (ir_measures' ``required=True``,
        e.g. ``INST(max_rel=3)``); its ``default`` is then None (``none_ok``).

    Examples
    --------
    >>> from evalframe.measures import FAMILIES
    >>> spec = FAMILIES["RBP"].params["p"]
    >>> spec.kind, spec.default, spec.low, spec.high
    ('float', 0.9, 0, 1)
    >>> import evalframe as ef
    >>> ef.parse_measure("RBP(p=2)")
    Traceback (most recent call last):
    ...
    evalframe.errors.ParameterError: RBP: p must be a number in [0, 1], got 2
    """

    kind: Kind
    default: Any
    description: str
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False
    choices: Mapping[str, str] = field(default_factory=dict)
    none_ok: bool = False
    length: int | None = None
    required: bool = False

    def constraint(self) -> Constraint:
        """What a valid value is, as a constraint of :mod:`evalframe._validation`."""
        closed = {(False, False): "both", (False, True): "left", (True, False): "right",
                  (True, True): "neither"}[(self.low_open, self.high_open)]
        if self.kind in ("int", "float"):
            return Interval(int if self.kind == "int" else numbers.Real, self.low, self.high, closed=closed)
        if self.kind == "bool":
            return BOOLEAN
        if self.kind == "choice":
            return Options(self.choices, " or ".join(f"{c!r} ({d})" if d else repr(c)
                                                     for c, d in self.choices.items()))
        if self.kind == "floats":
            each = Interval(numbers.Real, self.low, self.high, closed=closed)
            rng = each.describe().removeprefix("a number")
            n = f"{self.length} numbers" if self.length else "numbers"
            return Satisfies(lambda v: isinstance(v, (tuple, list)) and len(v) > 0
                             and (self.length is None or len(v) == self.length) and all(each.accepts(x) for x in v),
                             ("a tuple of " if self.length else "a non-empty tuple of ") + n + rng)
        return Satisfies(lambda v: self._gains(v) is not _BAD,
                         "(label, gain) pairs, e.g. gains=((1, 3.0), (2, 9.0)) (trec_eval: '1=3,2=9'), "
                         "with int labels and finite gains")

    def what(self) -> str:
        """What a valid value is, as the error messages say it."""
        return self.constraint().describe()

    def check(self, family: str, name: str, value: Any) -> Any:
        """``value`` in canonical form (ints given for floats become floats,
        tuples of numbers become tuples of floats), or a ``ValueError``."""
        if value is None and self.none_ok:  # allowed, not said: "rel must be an int" (rel=None is evaluate()'s)
            return None
        value = check(family, name, value, self.constraint())
        if self.kind == "floats":
            return tuple(float(x) for x in value)
        if self.kind == "gains":
            return self._gains(value)
        return value

    @staticmethod
    def _gains(value):
        """``(label, gain)`` pairs as a tuple of (int, float), None for none, or ``_BAD``."""
        if value is None or value == "" or value == ():
            return None
        if isinstance(value, str):
            pairs = [part.split("=") for part in value.split(",")]
        elif isinstance(value, (tuple, list)):
            pairs = list(value)
        else:
            return _BAD
        out = []
        for pair in pairs:
            if not isinstance(pair, (tuple, list)) or len(pair) != 2:
                return _BAD
            label, gain = pair
            try:
                if isinstance(label, str):
                    label = int(label)
                if isinstance(gain, str):
                    gain = float(gain)
            except ValueError:
                return _BAD
            if not is_int(label) or not is_number(gain) or not math.isfinite(gain):
                return _BAD
            out.append((int(label), float(gain)))
        return tuple(out)


#: what ``ParamSpec._gains`` answers for a value that is not gains
_BAD = object()


#: a cutoff numpy's int64 holds
_BELOW_2_63 = Satisfies(lambda k: k < 2 ** 63, "an int < 2**63")


#: A trec_eval name: a regular expression matching the whole name, and the
#: evalframe name it stands for (a string, or a function of the match).
TrecName = tuple[str, "str | Callable[[re.Match], str]"]


@dataclass(frozen=True)
class Family:
    """A kind of measure, declared once.

    Attributes
    ----------
    name : the canonical family name (``"nDCG"``).
    cutoff : ``"none"``, ``"optional"`` or ``"required"`` (``@k``).
    params : parameter name -> :class:`ParamSpec`, in canonical order.
    fn : ``fn(judged, measures) -> list[np.ndarray]``, one float64 value per
        group of the :class:`~evalframe.ranking.Judged` table per measure (all
        measures of this family).
    aggregator : how values aggregate over questions (:mod:`.aggregation`).
    aliases : other names (matched case-insensitively).
    trec_names : trec_eval's names for it, with trec_eval's meaning.
    doc : one line.
    validate : ``validate(params) -> None`` or None: checks that involve several
        parameters (``params`` maps every parameter to its value), raising a
        ``ValueError`` (the message of :func:`evalframe._validation.check`) when a Measure is built.
    needs : what the family reads beyond a ranked, labelled table: ``("spans",)`` for
        the span measures (a span golden set and chunk offsets, :mod:`evalframe.spans`).
    value_range : ``(low, high)``, the range every per-question value lies in whatever the
        input (``UNIT``, [0, 1], for most measures), or None when it has no known bound
        (counts, DCG, utility): the anytime-valid statistics
        (:func:`evalframe.stats.confidence_sequence`) need it.

    Examples
    --------
    >>> from evalframe.measures import FAMILIES
    >>> fam = FAMILIES["P"]
    >>> fam.name, fam.cutoff, fam.aggregation, fam.doc
    ('P', 'required', 'mean', 'relevant in top k / k')
    """

    name: str
    cutoff: Cutoff
    params: Mapping[str, ParamSpec]
    fn: Callable
    aggregator: Aggregation = MEAN
    aliases: tuple[str, ...] = ()
    trec_names: tuple[TrecName, ...] = ()
    doc: str = ""
    validate: Callable[[dict[str, Any]], None] | None = None
    needs: tuple[str, ...] = ()
    value_range: tuple[float, float] | None = None

    def __post_init__(self):
        object.__setattr__(self, "params", types.MappingProxyType(dict(self.params)))

    @property
    def aggregation(self) -> str:
        """Name of the aggregation (``"mean"``, ``"sum"``, ``"gmean"``)."""
        return self.aggregator.name

    @property
    def defaults(self) -> dict[str, Any]:
        return {k: p.default for k, p in self.params.items()}


class Registry:
    """Families by name, filled by explicit :meth:`register` calls."""

    def __init__(self) -> None:
        self._families: dict[str, Family] = {}
        self._lower: dict[str, str] = {}
        self._trec: list[tuple[re.Pattern, Callable[[re.Match], str]]] = []
        self._trec_owner: list[str] = []
        self.families: Mapping[str, Family] = types.MappingProxyType(self._families)

    def register(self, family: Family, *, replace: bool = False) -> Family:
        """Add a family; its name and aliases must be new, unless ``replace``
        (then a family of the same name is replaced, its aliases and trec_eval
        names with it; another family's names stay taken)."""
        if family.name in self._families and not replace:
            raise ValueError(f"measure family {family.name!r} is already registered; "
                             "pass replace=True to replace it")
        for a in (family.name,) + tuple(family.aliases):
            if self._lower.get(a.lower(), family.name) != family.name:
                raise ValueError(f"alias {a!r} of {family.name} is already {self._lower[a.lower()]}'s")
        # a replaced family is never missing (a Dask worker registers a shipped family while
        # another thread computes): the new tables are built aside, then swapped in
        old = family.name in self._families
        lower = {a: f for a, f in self._lower.items() if f != family.name} if old else dict(self._lower)
        keep = [i for i, owner in enumerate(self._trec_owner) if owner != family.name]
        trec, owners = [self._trec[i] for i in keep], [self._trec_owner[i] for i in keep]
        for a in (family.name,) + tuple(family.aliases):
            lower[a.lower()] = family.name
        for pattern, convert in family.trec_names:
            conv = convert if callable(convert) else (lambda _m, s=convert: s)
            trec.append((re.compile(pattern, re.ASCII), conv))  # \d: the digits 0-9 only
            owners.append(family.name)
        self._families[family.name] = family
        self._lower, self._trec, self._trec_owner = lower, trec, owners
        return family

    def unregister(self, name: str) -> Family:
        """Remove a family (with its aliases and trec_eval names); returns it."""
        family = self.get(name)
        self._drop(name)
        return family

    def _drop(self, name: str) -> None:
        self._families.pop(name)
        self._lower = {a: f for a, f in self._lower.items() if f != name}
        keep = [i for i, owner in enumerate(self._trec_owner) if owner != name]
        self._trec = [self._trec[i] for i in keep]
        self._trec_owner = [self._trec_owner[i] for i in keep]

    def get(self, name: str) -> Family:
        try:
            return self._families[name]
        except KeyError:
            raise ValueError(f"unknown measure family {name!r}; known: {', '.join(self._families)}") from None

    def lookup(self, name: str) -> str | None:
        """Family name for a name or alias (case-insensitive), or None."""
        return self._lower.get(name.lower())

    def trec_names(self) -> tuple[tuple[re.Pattern, Callable[[re.Match], str]], ...]:
        """Every family's trec_eval names (compiled) with their converters."""
        return tuple(self._trec)


#: The registry every Measure is checked against (filled in :mod:`.registry`).
REGISTRY = Registry()
#: Family name -> Family, read-only.
FAMILIES: Mapping[str, Family] = REGISTRY.families


@dataclass(frozen=True, order=True)
class Measure:
    """A measure: family, cutoff and the parameters that differ from their defaults.

    Create with :func:`~evalframe.measures.parse_measure` (or directly,
    ``Measure("P", 5, (("rel", 2),))``); ``str(m)`` is the canonical name.
    The cutoff and every parameter are checked here.

    Examples
    --------
    >>> import evalframe as ef
    >>> m = ef.parse_measure("nDCG@10")
    >>> m.family, m.k, str(m)
    ('nDCG', 10, 'nDCG@10')
    >>> str(ef.Measure("P", 5, (("rel", 2),)))
    'P(rel=2)@5'
    """

    family: str
    k: int | None = None
    params: tuple = ()

    def __post_init__(self):
        fam = REGISTRY.get(self.family)
        if fam.cutoff == "none" and self.k is not None:
            raise ValueError(f"{self.family} takes no cutoff, got @{self.k}")
        budget = any(key == "tokens" and val is not None for key, val in self.params)
        if fam.cutoff == "required" and self.k is None and not budget:
            raise ValueError(f"{self.family} needs a cutoff, e.g. {self.family}@10")
        if self.k is not None:
            k = check(self.family, "k", self.k, POSITIVE_INT)
            object.__setattr__(self, "k", check(self.family, "k", k, _BELOW_2_63))
        given = {}
        for key, val in self.params:
            spec = fam.params.get(key)
            if spec is None:
                raise ValueError(f"{self.family} has no parameter {key!r}; parameters: {list(fam.params) or 'none'}")
            given[key] = spec.check(self.family, key, val)
        for key, spec in fam.params.items():
            if spec.required and given.get(key) is None:
                raise error(self.family, key, f"given ({spec.what()}), e.g. {self.family}({key}=...)",
                            given.get(key))
        if fam.validate is not None:
            fam.validate({key: given.get(key, spec.default) for key, spec in fam.params.items()})
        clean = [(key, given[key]) for key in fam.params
                 if key in given and not _same(given[key], fam.params[key].default)]
        object.__setattr__(self, "params", tuple(clean))

    def param(self, key: str):
        """The parameter's value (its default when the name leaves it out);
        ``rel`` left to evaluate()'s convention reads as 1."""
        value = dict(self.params).get(key, REGISTRY.get(self.family).params[key].default)
        return 1 if key == "rel" and value is None else value

    @property
    def aggregator(self) -> Aggregation:
        return REGISTRY.get(self.family).aggregator

    @property
    def aggregation(self) -> str:
        """Name of the aggregation (``"mean"``, ``"sum"``, ``"gmean"``)."""
        return self.aggregator.name

    def with_params(self, **kw) -> "Measure":
        d = dict(self.params)
        d.update(kw)
        return Measure(self.family, self.k, tuple(d.items()))

    def __str__(self) -> str:
        s = self.family
        if self.params:
            s += "(" + ",".join(f"{k}={v!r}" for k, v in self.params) + ")"
        if self.k is not None:
            s += f"@{self.k}"
        return s

    def __repr__(self) -> str:
        return f"Measure({str(self)!r})"


def _same(value, default) -> bool:
    return value == default and type(value) is type(default)
