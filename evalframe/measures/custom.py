"""Your own measures: :func:`register_measure`.

A registered measure is a :class:`~evalframe.measures.Family` like the
built-in ones: its names parse (``parse_measure("MeanLabel@5")``), and it
works in :func:`evalframe.evaluate`, :func:`evalframe.aggregate`,
:func:`evalframe.report` and the commands' ``-m`` (in the same process), and on Dask
workers: the Dask engine ships the families registered here with its tasks
(:func:`shipped`), and a worker registers them before it computes.
"""
from __future__ import annotations

__all__ = ["register_measure", "shipped", "ShippedMeasures", "received"]

import uuid
from typing import Callable, Mapping, Sequence

import numpy as np

from .aggregation import GEO_MEAN, MEAN, SUM, Aggregation
from .._validation import BOOLEAN, InstanceOf, IsCallable, Options, Satisfies, check, validate
from .base import REGISTRY, Family, ParamSpec

_AGGREGATIONS = {"mean": MEAN, "sum": SUM, "gmean": GEO_MEAN}
_CUTOFFS = ("none", "optional", "required")
#: a token per family registered in this process by register_measure (a new one each time)
_TOKENS: dict[str, str] = {}
#: the tokens of the families another process shipped here and this one registered
_RECEIVED: dict[str, str] = {}


def _checked(name: str, fn: Callable) -> Callable:
    """``fn`` with its result checked: one finite float per group per measure."""
    def run(J, measures):
        values = list(fn(J, measures))
        if len(values) != len(measures):
            raise ValueError(f"{name}: the measure function must return one array per measure "
                             f"({len(measures)}), got {len(values)}")
        out = []
        for m, v in zip(measures, values):
            v = np.asarray(v, dtype=np.float64)
            if v.shape != (J.n_groups,):
                raise ValueError(f"{name}: the values of {m} must be an array of shape ({J.n_groups},) "
                                 f"(one per group of the Judged table), got shape {v.shape}")
            if not np.isfinite(v).all():
                raise ValueError(f"{name}: the values of {m} must be finite, got "
                                 f"{int((~np.isfinite(v)).sum())} NaN or infinite value(s)")
            out.append(v)
        return out
    run.__name__ = getattr(fn, "__name__", name)
    run.__doc__ = getattr(fn, "__doc__", None)
    return run


#: a measure's name: what the parser reads as a family
_NAME = Satisfies(lambda v: isinstance(v, str) and v[:1].isalpha() and v.replace("_", "a").isalnum() and v.isascii(),
                  "a letter then letters, digits or '_'")
_PARAM_NAME = Satisfies(lambda v: isinstance(v, str) and v.isidentifier() and v != "k", "identifiers other than 'k'")
_ALIASES = Satisfies(lambda v: not isinstance(v, str) and all(isinstance(a, str) and a for a in v),
                     "a sequence of names")


def register_measure(name: str, fn: Callable[..., Sequence[np.ndarray]], *, cutoff: str = "optional",
                     params: Mapping[str, ParamSpec] | None = None,
                     aggregation: "str | Aggregation" = "mean", aliases: Sequence[str] = (),
                     doc: str = "", replace: bool = False) -> Family:
    """Register a vectorised measure of your own under ``name``.

    Parameters
    ----------
    name : str
        The family name (a letter, then letters, digits or ``_``): ``NAME``,
        ``NAME@k`` and ``NAME(param=value)@k`` then parse.
    fn : callable ``fn(J, measures) -> list of arrays``
        Computes every measure of this family asked for in one call.  ``J`` is
        the ranked, judged table (:class:`evalframe.ranking.Judged`): one row
        per retrieved document, sorted by group (a (system, question) pair)
        and rank, with the arrays ``J.grp`` (group of each row), ``J.rank``
        (1-based), ``J.label`` (the golden set's label; negative when not
        judged), ``J.group_query`` (each group's question), the golden set's
        ``J.qrels_query`` / ``J.qrels_label`` (sorted by question, label
        descending), ``J.n_groups``, ``J.n_queries``, and the helpers
        ``J.per_group(weights)`` (sum over each group's rows) and
        ``J.per_query_qrels(mask)`` (count of golden-set rows per group's
        question).  ``measures`` is the list of :class:`Measure` of this
        family (read ``m.k`` and ``m.param("p")``).  Return one float array
        of shape ``(J.n_groups,)`` per measure, in order: the value of each
        group.  Work on whole arrays (``np.bincount``, masks), not loops.
    cutoff : {"optional", "required", "none"}
        Whether the name takes ``@k``.
    params : mapping of str to :class:`ParamSpec`, optional
        The parameters, checked when a name is parsed (``ParamSpec("float",
        0.5, "weight", low=0, high=1)``); an error reads ``"NAME: p must be
        ..., got ..."``.
    aggregation : {"mean", "sum", "gmean"} or Aggregation
        How values aggregate over questions in :func:`evalframe.aggregate`
        and the report: :class:`Mean`, :class:`Sum`, :class:`GeoMean` (or an
        instance, e.g. ``GeoMean(floor=1e-3)``).
    aliases : sequence of str
        Other names (case-insensitive).
    doc : str
        One line, shown in listings.
    replace : bool
        Replace a measure already registered under ``name``; without it that
        is an error.

    Returns
    -------
    Family
        The registered family (also in :data:`evalframe.measures.FAMILIES`).

    Raises
    ------
    ValueError
        A bad argument, or ``name`` (or an alias) already taken.

    Examples
    --------
    The mean label of the top k (unjudged documents count 0):

    >>> import numpy as np
    >>> import evalframe as ef
    >>> def mean_label(J, measures):
    ...     gain = np.maximum(J.label, 0).astype(float)
    ...     return [J.per_group(np.where(J.rank <= m.k, gain, 0.0)) / m.k for m in measures]
    >>> fam = ef.register_measure("MeanLabel", mean_label, cutoff="required",
    ...                           doc="mean label of the top k", replace=True)
    >>> sso = ef.datasets.load_sso()
    >>> ef.evaluate(sso.runs, sso.qrels, ["MeanLabel@5", "P@5"])["value"].tolist()
    [0.4, 0.4]
    """
    validate("register_measure", name=(name, _NAME), fn=(fn, IsCallable("callable")),
             cutoff=(cutoff, Options(_CUTOFFS, "'optional', 'required' or 'none'")),
             aggregation=(aggregation, Options(_AGGREGATIONS, "'mean', 'sum', 'gmean'"),
                          InstanceOf(Aggregation, "an Aggregation (Mean(), Sum(), GeoMean(floor=...))")))
    agg = _AGGREGATIONS[aggregation] if isinstance(aggregation, str) else aggregation
    params = dict(params or {})
    for key, spec in params.items():
        check("register_measure", "parameter names", key, _PARAM_NAME)
        check("register_measure", f"params[{key!r}]", spec, InstanceOf(ParamSpec, "a ParamSpec"))
        spec.check(name, key, spec.default)  # the default itself must be valid
    validate("register_measure", aliases=(aliases, _ALIASES), replace=(replace, BOOLEAN))
    if not replace and REGISTRY.lookup(name) is not None:
        raise ValueError(f"register_measure: a measure named {name!r} is already registered "
                         f"({REGISTRY.lookup(name)}); pass replace=True to replace it")
    family = Family(name, cutoff, params, _checked(name, fn), aggregator=agg, aliases=tuple(aliases), doc=doc)
    REGISTRY.register(family, replace=replace)
    _TOKENS[name] = uuid.uuid4().hex
    return family


class ShippedMeasures(list):
    """A list of measures carrying the families of those registered with
    :func:`register_measure`: unpickled in another process (a Dask worker, or the
    scheduler that passes the task on), it registers them there first (:func:`received`)
    and carries them on, so the measures compute there as here."""

    def __init__(self, ms, families: dict):
        super().__init__(ms)
        self.families = families  # name -> (Family, token)

    def __reduce__(self):
        return received, (list(self), self.families)


def shipped(ms: list) -> list:
    """``ms``, as a :class:`ShippedMeasures` when some of them were registered with
    :func:`register_measure` in this process (else ``ms`` itself).

    Examples
    --------
    >>> import evalframe as ef
    >>> fam = ef.register_measure("Firsts", lambda J, ms: [J.per_group(J.rank == 1) for m in ms],
    ...                           cutoff="none", replace=True)
    >>> ms = shipped(ef.parse_measures(["Firsts", "P@5"]))
    >>> type(ms).__name__, sorted(ms.families), [str(m) for m in ms]
    ('ShippedMeasures', ['Firsts'], ['Firsts', 'P@5'])
    >>> _ = ef.measures.REGISTRY.unregister("Firsts")
    """
    families = {m.family: (REGISTRY.get(m.family), _TOKENS[m.family]) for m in ms if m.family in _TOKENS}
    return ShippedMeasures(ms, families) if families else ms


def received(ms: list, families: dict) -> ShippedMeasures:
    """Register the shipped ``families`` (``name -> (Family, token)``) not yet registered
    here under that token (a family re-registered in the client has a new one; the
    process that registered it has it already), then return ``ms`` still carrying them."""
    for name, (family, token) in families.items():
        if token != _TOKENS.get(name) and (_RECEIVED.get(name) != token or name not in REGISTRY.families):
            REGISTRY.register(family, replace=True)
            _RECEIVED[name] = token
    return ShippedMeasures(ms, families)
