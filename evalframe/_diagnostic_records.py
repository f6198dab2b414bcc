"""Diagnostics records: the facts found while judging, as rows of the diagnostics table.

:class:`Check` names each kind of fact; :class:`Diagnostic` is one record (a row of
:func:`diagnostics_table`); :func:`merge_diagnostics` merges the records of partitions of
the questions into those of the whole input (the contract is in :mod:`evalframe.ranking`);
:func:`conflicts_record` is the golden set's record of conflicting labels resolved; and
:func:`warn_diagnostics` issues each record's structured warning.  The checks that find
them are in ``evalframe._diagnostic_checks``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Iterable, Sequence

import numpy as np

from ._conflicts import ResolvedConflicts
from ._id_order import natural_order
from .errors import warn as _warn_user
from .errors import (ChunkingsDifferWarning, IdSchemeWarning, NoRelevantWarning, QuestionsDroppedWarning,
                     QuestionsScoredZeroWarning, ShallowRankingWarning)

if TYPE_CHECKING:
    import pandas as pd


#: Columns of the diagnostics table.
DIAGNOSTIC_COLUMNS = ["system", "check", "count", "action", "examples"]

#: Examples shown per diagnostic.
MAX_EXAMPLES = 5


class Check(str, Enum):
    """What a diagnostic reports; the values are the diagnostics table's ``check`` column."""

    #: Run questions absent from the golden set (dropped); count: questions.
    RUN_QUESTIONS_NOT_IN_GOLDEN_SET = "run_questions_not_in_golden_set"
    #: A system that answers none of the golden set's questions; count: 1.
    SYSTEM_WITHOUT_GOLDEN_QUESTIONS = "system_without_golden_questions"
    #: Golden-set questions a system does not answer (scored 0 or dropped); count: questions.
    GOLDEN_QUESTIONS_NOT_IN_RUN = "golden_questions_not_in_run"
    #: Rows whose score equals another row's of the same ranking; count: rows.
    SCORE_TIES = "score_ties"
    #: Golden-set questions without a label >= rel; count: questions.
    GOLDEN_QUESTIONS_WITHOUT_RELEVANT = "golden_questions_without_relevant"
    #: A system none of whose retrieved documents is judged for its question (a
    #: different id scheme, or a re-chunked corpus); count: its rows.
    SYSTEM_WITHOUT_JUDGED_DOCUMENTS = "system_without_judged_documents"
    #: Two systems that each retrieve judged documents, none in common (a golden set
    #: holding two chunkings' labels); one record per system, examples: the other
    #: systems; count: its judged rows.
    SYSTEMS_SHARE_NO_JUDGED_DOCUMENTS = "systems_share_no_judged_documents"
    #: (question, document) pairs of the golden set whose conflicting labels were resolved
    #: (``conflicts=``); count: pairs.
    GOLDEN_SET_CONFLICTING_LABELS = "golden_set_conflicting_labels"
    #: Run rows removed by a roll-up: later chunks of a page already ranked at its best
    #: chunk (see :mod:`evalframe.rollup`); count: rows.
    ROLLUP_RUN_ROWS_COLLAPSED = "rollup_run_rows_collapsed"
    #: Golden-set rows merged by a roll-up: chunks of one page, the page keeping its most
    #: relevant chunk's label; count: rows.
    ROLLUP_GOLDEN_ROWS_MERGED = "rollup_golden_rows_merged"
    #: Rankings shorter than the deepest cutoff asked for (see
    #: :func:`shallow_rankings`); count: questions.
    SHALLOW_RANKINGS = "shallow_rankings"
    #: Chunk-level measures asked of systems whose chunkings differ; count: chunkings.
    CHUNKINGS_DIFFER = "chunkings_differ"
    #: Systems whose retrieved chunks differ in size (median tokens 1.5x apart or more),
    #: asked for no measure at a token budget; count: systems (a suggestion, no warning).
    CHUNK_SIZES_DIFFER = "chunk_sizes_differ"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class Diagnostic:
    """One fact found while judging: a row of the diagnostics table.

    Attributes
    ----------
    system : str or None
        The system it concerns (None: the golden set, or a run without systems).
    check : Check
    count : int
        Questions or rows concerned (see :class:`Check`).
    action : str
        What evalframe did about it.
    examples : tuple of str
        Up to :data:`MAX_EXAMPLES` examples, in natural order.
    numeric : bool or None
        Whether ``examples`` were ordered numerically, every id of the set they
        were ordered in (the golden set's questions, or the questions dropped)
        being an integer; None: not said (a merge orders the union naturally).
    bytewise : tuple of str
        When ``numeric``: the first examples byte-wise, which a merge with a part
        whose ids are not all integers lists (the whole call's order is byte-wise).

    ``numeric`` and ``bytewise`` say how to merge; records compare without them.
    """

    system: str | None
    check: Check
    count: int
    action: str
    examples: tuple[str, ...] = ()
    numeric: bool | None = field(default=None, compare=False)
    bytewise: tuple[str, ...] = field(default=(), compare=False)

    def row(self) -> dict:
        """The diagnostics table's row (``check`` as its string value)."""
        return {"system": self.system, "check": self.check.value, "count": int(self.count),
                "action": self.action, "examples": ", ".join(self.examples[:MAX_EXAMPLES])}


def diagnostics_table(records: Iterable[Diagnostic]) -> pd.DataFrame:
    """The diagnostics table ``system, check, count, action, examples`` of some records."""
    import pandas as pd
    return pd.DataFrame([r.row() for r in records if r.action != HAS_JUDGED], columns=DIAGNOSTIC_COLUMNS)


#: Checks whose examples are listed in the golden set's natural order (the others: in
#: their own, as the questions dropped (all systems') or a system's short rankings).
_GOLDEN_ORDERED = frozenset({Check.GOLDEN_QUESTIONS_NOT_IN_RUN, Check.SCORE_TIES,
                            Check.GOLDEN_QUESTIONS_WITHOUT_RELEVANT})


#: Checks about a system as a whole: kept by a merge only when every partition reports them.
_EVERY_PART = frozenset({Check.SYSTEM_WITHOUT_GOLDEN_QUESTIONS})


def conflicts_record(resolved: ResolvedConflicts | None) -> list[Diagnostic]:
    """The ``golden_set_conflicting_labels`` record of the golden set's conflicting labels
    resolved (``resolved``: the whole golden set's, or its partitions' merged), as a list
    of one, or none when there were none.

    Examples
    --------
    >>> from evalframe.schema import ResolvedConflicts
    >>> [r.action for r in conflicts_record(ResolvedConflicts("max", 2, ("q1:d1",)))]
    ['resolved: max label']
    >>> conflicts_record(None)
    []
    """
    if not isinstance(resolved, ResolvedConflicts) or not resolved.count:
        return []
    return [Diagnostic(None, Check.GOLDEN_SET_CONFLICTING_LABELS, resolved.count,
                       f"resolved: {resolved.how} label", tuple(resolved.examples))]


def merge_diagnostics(parts: Iterable[Sequence[Diagnostic]], *,
                      systems: Sequence[str | None] | None = None,
                      integer_questions: bool | None = None) -> list[Diagnostic]:
    """Merge the diagnostics of partitions of the questions (see the module docstring).

    Parameters
    ----------
    parts : iterable of sequences of Diagnostic
        Each partition's records (``Judged.records``).
    systems : sequence of str, optional
        The systems in the whole run's order (first appearance), which is the
        order :func:`judge` reports them in; default: first appearance in ``parts``.
    integer_questions : bool, optional
        Whether every question id of the whole golden set is an integer (the
        parts' ``Judged.integer_questions`` all true), which decides the order
        of examples that are golden-set questions; default: whether every
        record merged says its examples were numeric (a part without records
        may hold the only text id: engines pass it).

    Returns
    -------
    list of Diagnostic
        Counts summed per (check, system, action); examples the first
        :data:`MAX_EXAMPLES` of the union in the whole call's natural order;
        ``system_without_golden_questions`` kept when every partition reports it.
        Ordered by check, then by system (the golden set's records of one check, without a
        system, by action).
    """
    parts = [list(p) for p in parts]
    judged_somewhere = {r.system for p in parts for r in p if r.action == HAS_JUDGED}
    parts = [[r for r in p if r.check is not Check.SYSTEM_WITHOUT_JUDGED_DOCUMENTS or r.action == HAS_JUDGED
              or r.system not in judged_somewhere] for p in parts]
    merged: dict[tuple, list[Diagnostic]] = {}
    for part in parts:
        for r in part:
            merged.setdefault((r.check, r.system, r.action), []).append(r)
    dropped_numeric = all(r.numeric for part in parts for r in part  # one order for all systems
                          if r.check is Check.RUN_QUESTIONS_NOT_IN_GOLDEN_SET)
    checks = list(Check)
    position = {name: i for i, name in enumerate(systems or ())}
    out = []
    for (check, system, action), records in sorted(  # stable: first appearance (golden-set records of one check, by action)
            merged.items(), key=lambda kv: (checks.index(kv[0][0]), position.get(kv[0][1], len(position)),
                                            kv[0][2] if kv[0][1] is None else "")):
        count = sum(int(r.count) for r in records)
        if check in _EVERY_PART:  # a fact of the whole run only when every part finds it
            if len(records) < len(parts):
                continue
            out.append(Diagnostic(system, check, 1, action, records[0].examples[:1]))
            continue
        if any(r.numeric is None for r in records):  # order not said: the union's natural order
            examples = [e for r in records for e in r.examples]
            ex = tuple(str(e) for e in natural_order(np.array(examples, dtype=object))[:MAX_EXAMPLES])
            out.append(Diagnostic(system, check, count, action, ex))
            continue
        numeric = (dropped_numeric if check is Check.RUN_QUESTIONS_NOT_IN_GOLDEN_SET
                   else integer_questions if integer_questions is not None and check in _GOLDEN_ORDERED
                   else all(r.numeric for r in records))
        bytewise = tuple(sorted({e for r in records for e in (r.bytewise if r.numeric else r.examples)})[:MAX_EXAMPLES])
        if not numeric:
            out.append(Diagnostic(system, check, count, action, bytewise, False))
            continue
        examples = np.array([e for r in records for e in r.examples], dtype=object)
        ex = tuple(str(e) for e in natural_order(examples)[:MAX_EXAMPLES])
        out.append(Diagnostic(system, check, count, action, ex, True, bytewise))
    return out
#: The action of a marker record: the system has judged documents in this partition (a
#: merge then drops the system's ``system_without_judged_documents`` records; never shown).
HAS_JUDGED = "has judged documents"


#: The action of a ``golden_questions_without_relevant`` record whose questions
#: ``no_relevant="drop"`` left out of the per-question table (no warning then).
LEFT_OUT = "left out (no_relevant='drop')"


_WARNINGS = {
    Check.SYSTEM_WITHOUT_GOLDEN_QUESTIONS: QuestionsDroppedWarning,
    Check.RUN_QUESTIONS_NOT_IN_GOLDEN_SET: QuestionsDroppedWarning,
    Check.GOLDEN_QUESTIONS_NOT_IN_RUN: QuestionsScoredZeroWarning,
    Check.GOLDEN_QUESTIONS_WITHOUT_RELEVANT: NoRelevantWarning,
    Check.SHALLOW_RANKINGS: ShallowRankingWarning,
    Check.SYSTEM_WITHOUT_JUDGED_DOCUMENTS: IdSchemeWarning,
    Check.SYSTEMS_SHARE_NO_JUDGED_DOCUMENTS: IdSchemeWarning,
    Check.CHUNKINGS_DIFFER: ChunkingsDifferWarning,
}


#: Said of a golden-set record that depends on a chunking's labels (questions without a
#: relevant chunk), when the systems chunk in several ways: which systems' chunking.
CHUNKING_OF = "in the chunking of systems "


def warn_diagnostics(records: Sequence[Diagnostic], rel: int) -> None:
    """Issue the structured warnings of some records (those of one call, or of
    partitions merged with :func:`merge_diagnostics`); ``rel`` as given to :func:`judge`."""
    for r in records:
        cat = _WARNINGS.get(r.check)
        if cat is None or r.action == HAS_JUDGED:
            continue
        if r.check is Check.GOLDEN_QUESTIONS_NOT_IN_RUN and r.action == "dropped":
            continue  # missing="drop" asked for exactly this
        if r.check is Check.GOLDEN_QUESTIONS_WITHOUT_RELEVANT and r.action == LEFT_OUT:
            continue  # no_relevant="drop" asked for exactly this
        if r.check is Check.SYSTEM_WITHOUT_GOLDEN_QUESTIONS:
            _warn_user(f"system {r.system!r} answers none of the golden set's questions: "
                       f"{r.action} (check its question ids)", cat)
            continue
        if r.check is Check.SYSTEM_WITHOUT_JUDGED_DOCUMENTS:
            who = "the run" if r.system is None else f"system {r.system!r}"
            _warn_user(f"0% of the documents {who} retrieved are judged ({r.count} rows; none is in the golden "
                       "set), so every measure scores it 0: a different id scheme, or a re-chunked corpus scored "
                       "against the old chunks? Use a span golden set with chunks= (evalframe.spans) or rollup=", cat)
            continue
        if r.check is Check.SYSTEMS_SHARE_NO_JUDGED_DOCUMENTS:
            _warn_user(f"system {r.system!r} retrieves {r.count} judged documents and none of those of "
                       f"{', '.join(map(repr, r.examples))}: does the golden set hold the labels of two chunkings "
                       "(or id schemes)? Each question's relevant set then holds documents only the other can "
                       "return, and recall is lower for both; judge spans once (evalframe.spans)", cat)
            continue
        if r.check is Check.CHUNKINGS_DIFFER:
            _warn_user(f"the systems chunk in {r.count} different ways, so their {r.action.split(': ', 1)[-1]} "
                       "are not comparable (a chunk of one chunking is not a chunk of another): compare "
                       "SpanRecall@k or SpanRecall(tokens=N)", cat)
            continue
        who = f"system {r.system!r}: " if r.system is not None else ""
        examples = ", ".join(r.examples[:MAX_EXAMPLES])
        msg = {
            Check.RUN_QUESTIONS_NOT_IN_GOLDEN_SET: f"{who}{r.count} run questions are not in the golden set and were dropped (e.g. {examples})",
            Check.GOLDEN_QUESTIONS_NOT_IN_RUN: f"{who}{r.count} golden-set questions have no retrieved documents and score 0 (e.g. {examples}); pass missing='drop' to leave them out, as trec_eval does without -c",
            Check.SHALLOW_RANKINGS: f"{who}{r.count} questions have {r.action} (e.g. {examples}; R@100 of a 20-deep ranking is its R@20)",
            Check.GOLDEN_QUESTIONS_WITHOUT_RELEVANT: f"{r.count} golden-set questions have no relevant document (label >= {rel}){' ' + CHUNKING_OF + r.action.split(CHUNKING_OF, 1)[1] if CHUNKING_OF in r.action else ''}, so recall-type measures score 0 on them (e.g. {examples}); no_relevant='drop' (--no-relevant drop) leaves them out",
        }[r.check]
        _warn_user(msg, cat)
