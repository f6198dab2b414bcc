"""The engines: one partition contract, every engine thin over it.

:mod:`~evalframe.engine.memory` evaluates a table held in memory; the partitioning engines
(:mod:`~evalframe.engine.streaming`, :mod:`~evalframe.engine.dask`, :mod:`~evalframe.engine.spark`)
cut a run into parts of whole questions and call :func:`~evalframe.engine.partition.evaluate_part`
on each, then :func:`~evalframe.engine.partition.merge`; :func:`~evalframe.engine.choice.choose`
picks one.  The user guide's "How the engines work" draws the flow.
"""
from __future__ import annotations

import importlib

__all__ = ["Conventions", "DEFAULT", "Choice", "choose", "evaluate_partition", "Plan", "PartResult", "GoldenIndex",
           "question_buckets", "evaluate_part", "merge", "finish"]

#: public name -> the module that defines it, imported when the name is first used (PEP 562):
#: importing one engine module (``engine.budget``, as ``evalframe trec-eval`` does) loads no other
LAZY_NAMES: dict[str, str] = {
    **dict.fromkeys(("Choice", "choose"), "choice"),
    **dict.fromkeys(("DEFAULT", "Conventions"), "conventions"),
    "evaluate_partition": "memory",
    **dict.fromkeys(("GoldenIndex", "PartResult", "Plan", "evaluate_part", "finish", "merge"), "partition"),
    "question_buckets": "cutting",
}


def __getattr__(name: str):
    if name not in LAZY_NAMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{LAZY_NAMES[name]}", __name__), name)
    globals()[name] = value  # later look-ups are plain attribute reads
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
