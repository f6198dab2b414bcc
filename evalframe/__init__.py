"""evalframe: trustworthy, fast retrieval evaluation.

>>> import evalframe
>>> sso = evalframe.datasets.load_sso()
>>> evalframe.evaluate(sso.runs, sso.qrels, "P@5")["value"].tolist()
[0.4]

The public names are imported on first use (PEP 562): ``import evalframe`` loads
neither scipy.stats nor the report, so a command that needs only reading and
measuring (``evalframe trec-eval``) starts without them.
"""
from __future__ import annotations

import importlib

from ._version import __version__
from .errors import (EvalframeInputError, EvalframeWarning, NoRelevantWarning,
                     QuestionsDroppedWarning, QuestionsFailedWarning, QuestionsScoredZeroWarning,
                     RetrieverOutputWarning, ShallowRankingWarning, SmallGoldenSetWarning,
                     UnjudgedDocumentsWarning, UnpairedQuestionsWarning, IdSchemeWarning, ChunkingsDifferWarning,
                     MemoryBudgetWarning, FewClustersWarning, FewHumanLabelsWarning)

__all__ = [
    "evaluate", "aggregate", "diagnostics", "index_recall", "report", "Report", "read_report",
    "read_qrels", "read_golden_set", "read_run", "read_chunks", "span_labels", "rechunk", "retrieve", "Retrieval",
    "fuse", "pool", "Pool", "agreement", "judge", "judge_agreement", "JudgeAgreement", "gate", "GateResult",
    "diff", "ReportDiff",
    "Measure", "parse_measure", "parse_measures", "register_measure",
    "datasets", "stats",
    "EvalframeInputError", "EvalframeWarning", "QuestionsDroppedWarning",
    "QuestionsScoredZeroWarning", "NoRelevantWarning", "UnpairedQuestionsWarning",
    "UnjudgedDocumentsWarning", "SmallGoldenSetWarning", "ShallowRankingWarning",
    "IdSchemeWarning", "ChunkingsDifferWarning", "QuestionsFailedWarning", "RetrieverOutputWarning",
    "MemoryBudgetWarning", "FewClustersWarning", "FewHumanLabelsWarning",
]

#: public name -> the module that defines it, imported when the name is first used
LAZY_NAMES: dict[str, str] = {
    **dict.fromkeys(("evaluate", "aggregate", "diagnostics", "index_recall"), "evaluation"),
    **dict.fromkeys(("report", "Report", "read_report"), "reporting"),
    **dict.fromkeys(("read_qrels", "read_golden_set", "read_run", "read_chunks"), "io"),
    **dict.fromkeys(("span_labels", "rechunk"), "spans"),
    **dict.fromkeys(("retrieve", "Retrieval"), "retrieval"),
    "fuse": "fusion", "agreement": "label_agreement", "judge": "judging",
    **dict.fromkeys(("judge_agreement", "JudgeAgreement"), "model_labels"),
    **dict.fromkeys(("pool", "Pool"), "pooling"),
    **dict.fromkeys(("gate", "GateResult"), "gating"),
    **dict.fromkeys(("diff", "ReportDiff"), "diffing"),
    **dict.fromkeys(("Measure", "parse_measure", "parse_measures", "register_measure"), "measures"),
}
#: public subpackages, imported when first used
LAZY_MODULES = ("datasets", "stats")


def __getattr__(name: str):
    if name in LAZY_NAMES:
        value = getattr(importlib.import_module(f".{LAZY_NAMES[name]}", __name__), name)
    elif name in LAZY_MODULES:
        value = importlib.import_module(f".{name}", __name__)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value  # later look-ups are plain attribute reads
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
