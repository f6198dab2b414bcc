"""evalframe: trustworthy, fast retrieval evaluation.

>>> import evalframe
>>> sso = evalframe.datasets.load_sso()
>>> evalframe.evaluate(sso.runs, sso.qrels, "P@5")["value"].tolist()
[0.4]
"""
from ._version import __version__

from . import datasets, stats
from .agreement import agreement
from .errors import (EvalframeInputError, EvalframeWarning, NoRelevantWarning,
                     QuestionsDroppedWarning, QuestionsScoredZeroWarning, ShallowRankingWarning,
                     SmallGoldenSetWarning, UnjudgedDocumentsWarning, UnpairedQuestionsWarning)
from .evaluate import aggregate, diagnostics, evaluate, index_recall
from .fusion import fuse
from .io import read_qrels, read_run
from .pooling import Pool, pool
from .measures import Measure, parse_measure, parse_measures, register_measure
from .report import Report, read_report, report

__all__ = [
    "evaluate", "aggregate", "diagnostics", "index_recall", "report", "Report", "read_report",
    "read_qrels", "read_run", "fuse", "pool", "Pool", "agreement",
    "Measure", "parse_measure", "parse_measures", "register_measure",
    "datasets", "stats",
    "EvalframeInputError", "EvalframeWarning", "QuestionsDroppedWarning",
    "QuestionsScoredZeroWarning", "NoRelevantWarning", "UnpairedQuestionsWarning",
    "UnjudgedDocumentsWarning", "SmallGoldenSetWarning", "ShallowRankingWarning",
]
