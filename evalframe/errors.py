"""Exceptions and warning categories shared by every evalframe module.

Bad input raises :class:`EvalframeInputError` (a ``ValueError``) whose message lists
every problem found at once.  Recoverable surprises (questions dropped, questions
scored 0, unjudged documents...) are issued as :class:`EvalframeWarning`
subclasses, which users can filter with the :mod:`warnings` machinery, and are
also returned as rows of a diagnostics table.
"""
from __future__ import annotations

__all__ = [
    "EvalframeInputError",
    "EvalframeWarning",
    "QuestionsDroppedWarning",
    "QuestionsScoredZeroWarning",
    "NoRelevantWarning",
    "InputProblem",
]

import os
import sys
import warnings
from dataclasses import dataclass

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def warn(message: str, category: type[Warning]) -> None:
    """Issue a warning attributed to the first caller outside evalframe, so that it
    points at the user's line (and ``-W`` filters by module work as expected)."""
    level, frame = 2, sys._getframe(1)  # stacklevel 2 is warn()'s caller
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE_DIR):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, category, stacklevel=level)


@dataclass(frozen=True)
class InputProblem:
    """One problem found in an input table.

    Attributes
    ----------
    what : short description ("3 rows have a missing score").
    fix : what the user should do about it.
    examples : a few offending rows, already formatted as text.
    """

    what: str
    fix: str
    examples: str = ""

    def format(self) -> str:
        text = f"- {self.what}\n  fix: {self.fix}"
        if self.examples:
            text += "\n  e.g.\n" + "\n".join("    " + line for line in self.examples.splitlines())
        return text


class EvalframeInputError(ValueError):
    """Raised once per input table, listing every problem found in it."""

    def __init__(self, table: str, problems: list[InputProblem]):
        self.table = table
        self.problems = list(problems)
        n = len(self.problems)
        head = f"{table}: {n} problem{'s' if n != 1 else ''} found"
        super().__init__(head + "\n" + "\n".join(p.format() for p in self.problems))


class EvalframeWarning(UserWarning):
    """Base category of every evalframe warning (filter it to silence them all)."""


class QuestionsDroppedWarning(EvalframeWarning):
    """Run questions absent from the golden set were dropped."""


class QuestionsScoredZeroWarning(EvalframeWarning):
    """Golden-set questions the run does not answer were scored 0."""


class NoRelevantWarning(EvalframeWarning):
    """Some golden-set questions have no relevant document."""


class UnpairedQuestionsWarning(EvalframeWarning):
    """A paired comparison dropped questions that only one of the two systems answers."""


class UnjudgedDocumentsWarning(EvalframeWarning):
    """Many of a system's top-k documents are not in the golden set (scores are lower bounds)."""


class SmallGoldenSetWarning(EvalframeWarning):
    """The golden set is too small for the intervals to be narrow (below 50 questions)."""


__all__ += ["UnpairedQuestionsWarning", "UnjudgedDocumentsWarning", "SmallGoldenSetWarning"]


class ShallowRankingWarning(EvalframeWarning):
    """Some rankings hold fewer documents than a measure's cutoff (R@100 of a 20-deep run is R@20)."""


__all__ += ["ShallowRankingWarning"]
