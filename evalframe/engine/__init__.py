"""The engines: one partition contract, every engine thin over it.

:mod:`~evalframe.engine.memory` evaluates a table held in memory; the partitioning engines
(:mod:`~evalframe.engine.streaming`, :mod:`~evalframe.engine.dask`, :mod:`~evalframe.engine.spark`)
cut a run into parts of whole questions and call :func:`~evalframe.engine.partition.evaluate_part`
on each, then :func:`~evalframe.engine.partition.merge`; :func:`~evalframe.engine.choice.choose`
picks one.  The user guide's "How the engines work" draws the flow.
"""
from __future__ import annotations

__all__ = ["Conventions", "DEFAULT", "Choice", "choose", "evaluate_partition", "evaluate_part", "merge"]

from .choice import Choice, choose
from .conventions import DEFAULT, Conventions
from .memory import evaluate_partition
from .partition import evaluate_part, merge
