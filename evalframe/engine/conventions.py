"""The conventions of one evaluation, validated once where they are built and carried
whole by every engine (:class:`Conventions`)."""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Literal, Mapping, Sequence

from .._validation import BOOLEAN, Options, check
from ..canonical import check_columns
from .._judged import Missing, Ties
from ..ranking import check_conventions
from ..schema import ALIASES
from .._conflicts import Conflicts, check_conflicts
from ..spans import MIN_OVERLAP, check_min_overlap

Duplicates = Literal["error", "max", "first"]
NoRelevant = Literal["zero", "drop"]


@dataclass(frozen=True)
class Conventions:
    """How every question is counted: the options of :func:`evalframe.evaluate` that every
    engine applies the same way (a frozen value, validated when built; engines pass it to
    their partitions, pickled or broadcast, as it is).

    Attributes
    ----------
    rel : the lowest relevant label
    ties : how rows of equal score are ordered (``"doc_id_desc"``: trec_eval's order)
    missing : a golden-set question a system does not answer: ``"zero"`` or ``"drop"``
    depth : rankings cut at this rank (None: whole)
    duplicates : a document repeated in one ranking: ``"error"``, ``"max"``, ``"first"``
    conflicts : a (question, document) pair labelled twice in the golden set
    columns : ``{your column name: canonical name}`` for the run and the golden set
    ascending : the run's ``score`` is a distance: lower ranks first
    min_overlap : the share of a chunk a span must cover to label it (span golden sets)
    no_relevant : a golden-set question with no relevant document: kept (``"zero"``) or left
        out of the per-question table (``"drop"``), in each partition
    caller : the function named in the messages of invalid values

    Examples
    --------
    >>> Conventions(ties="doc_id_asc", ascending=True).judging["ties"]
    'doc_id_asc'
    >>> Conventions(depth=0)
    Traceback (most recent call last):
    ...
    evalframe.errors.ParameterError: evaluate: depth must be an int >= 1 or None, got 0
    """

    rel: int = 1
    ties: Ties = "doc_id_desc"
    missing: Missing = "zero"
    depth: int | None = None
    duplicates: Duplicates = "error"
    conflicts: Conflicts = "error"
    columns: Mapping[str, str] | None = None
    ascending: bool = False
    min_overlap: float = MIN_OVERLAP
    no_relevant: NoRelevant = "zero"
    caller: str = field(default="evaluate", compare=False, repr=False)

    def __post_init__(self) -> None:
        check_conventions(rel=self.rel, ties=self.ties, missing=self.missing, depth=self.depth, caller=self.caller)
        check(self.caller, "duplicates", self.duplicates, Options(("error", "max", "first"), "'error', 'max' or 'first'"))
        check_conflicts(self.conflicts, caller=self.caller)
        columns = check_columns(self.columns, caller=self.caller)
        object.__setattr__(self, "columns", columns or None)
        object.__setattr__(self, "ascending", check(self.caller, "ascending", self.ascending, BOOLEAN))
        object.__setattr__(self, "min_overlap", check_min_overlap(self.min_overlap, self.caller))
        check(self.caller, "no_relevant", self.no_relevant, Options(("zero", "drop")))

    @property
    def judging(self) -> dict:
        """The keyword arguments of :func:`evalframe.ranking.judge` (``ascending`` is
        applied where the run is checked: :func:`evalframe.schema.check_run`)."""
        return dict(rel=self.rel, ties=self.ties, missing=self.missing, depth=self.depth)

    def but(self, **changes) -> "Conventions":
        """These conventions with ``changes`` (validated again)."""
        return replace(self, **changes)


#: The defaults of :func:`evalframe.evaluate`.
DEFAULT = Conventions()


def run_column_map(names: Sequence[str], columns: Mapping[str, str] | None = None) -> dict[str, str] | None:
    """Canonical name of each run column the engine reads, as :func:`~evalframe.schema.clean_run`
    maps them after ``columns=`` renamed them (:func:`~evalframe.canonical.apply_columns`); None
    when a column is missing or ambiguous: the engine's check says so."""
    renamed = {c: c for c in names}  # dataset column -> its name after columns=
    if columns:
        moved = {c: columns[c] for c in names if c in columns and columns[c] != c}
        renamed = {c: moved.get(c, c) for c in names if c in moved or c not in set(moved.values())}
    by_name = {v: c for c, v in renamed.items()}
    lower = {str(v).strip().lower(): c for c, v in renamed.items()}
    out = {}
    for canon in ("query_id", "doc_id", "score", "system", "rank", "tokens"):
        found = [by_name[canon]] if canon in by_name else [lower[a] for a in ALIASES[canon] if a in lower]
        if len(found) > 1 or (not found and canon in ("query_id", "doc_id")):
            return None
        if found:
            out[found[0]] = canon
    if "score" not in out.values() and "rank" not in out.values():
        return None  # a rank-only run is ordered by its rank (each partition's check gives score = -rank)
    return out
