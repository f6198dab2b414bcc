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
    "ParameterError",
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
    """Raised once per input table, listing every problem found in it.

    Examples
    --------
    >>> import pandas as pd
    >>> import evalframe as ef
    >>> run = pd.DataFrame({"query_id": ["q1"], "doc_id": ["d1"], "score": [float("nan")]})
    >>> try:
    ...     ef.read_run(run)
    ... except ef.EvalframeInputError as err:
    ...     print(err.table, len(err.problems))
    run 1
    """

    def __init__(self, table: str, problems: list[InputProblem]):
        self.table = table
        self.problems = list(problems)
        n = len(self.problems)
        head = f"{table}: {n} problem{'s' if n != 1 else ''} found"
        super().__init__(head + "\n" + "\n".join(p.format() for p in self.problems))

    def __reduce__(self):  # pickled with its table and problems (raised on a Dask worker, re-raised here)
        return (type(self), (self.table, self.problems))


class ParameterError(ValueError, TypeError):
    """A parameter outside what the function takes, said with one template:
    ``"<function>: <param> must be <what>, got <value!r>"``
    (see :mod:`evalframe._validation`).

    Both a ``ValueError`` and a ``TypeError`` (a value of the wrong type is a bad value
    too), so code catching either keeps working, as with scikit-learn's
    ``InvalidParameterError``.

    Examples
    --------
    >>> import evalframe as ef
    >>> try:
    ...     ef.parse_measure("RBP(p=2)")
    ... except ValueError as exc:
    ...     print(type(exc).__name__, exc)
    ParameterError RBP: p must be a number in [0, 1], got 2
    """


class EvalframeWarning(UserWarning):
    """Base category of every evalframe warning (filter it to silence them all).

    Examples
    --------
    Silence every evalframe warning for a block:

    >>> import warnings
    >>> import evalframe as ef
    >>> cran = ef.datasets.load_cranfield()
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore", ef.EvalframeWarning)
    ...     per_q = ef.evaluate(cran.runs, cran.qrels, "P@5")
    >>> issubclass(ef.QuestionsScoredZeroWarning, ef.EvalframeWarning)
    True
    """


class QuestionsDroppedWarning(EvalframeWarning):
    """Run questions absent from the golden set were dropped.

    Examples
    --------
    >>> import warnings
    >>> import pandas as pd
    >>> import evalframe as ef
    >>> sso = ef.datasets.load_sso()
    >>> extra = pd.DataFrame({"query_id": ["other"], "doc_id": ["d1"], "score": [1.0],
    ...                       "system": ["librarian"]})
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     per_q = ef.evaluate(pd.concat([sso.runs, extra]), sso.qrels, "P@5")
    >>> [w.category.__name__ for w in caught]
    ['QuestionsDroppedWarning']
    """


class QuestionsScoredZeroWarning(EvalframeWarning):
    """Golden-set questions the run does not answer were scored 0.

    Examples
    --------
    >>> import warnings
    >>> import pandas as pd
    >>> import evalframe as ef
    >>> sso = ef.datasets.load_sso()
    >>> qrels = pd.concat([sso.qrels, pd.DataFrame({"query_id": ["other"], "doc_id": ["d1"],
    ...                                             "relevance": [1]})])
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     per_q = ef.evaluate(sso.runs, qrels, "P@5")
    >>> [w.category.__name__ for w in caught]
    ['QuestionsScoredZeroWarning']
    >>> per_q[["query_id", "value"]].values.tolist()
    [['other', 0.0], ['sso', 0.4]]
    """


class NoRelevantWarning(EvalframeWarning):
    """Some golden-set questions have no relevant document.

    Examples
    --------
    >>> import warnings
    >>> import evalframe as ef
    >>> sso = ef.datasets.load_sso()
    >>> qrels = sso.qrels.assign(relevance=0)        # judged, none relevant
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     per_q = ef.evaluate(sso.runs, qrels, "R@10")
    >>> [w.category.__name__ for w in caught]
    ['NoRelevantWarning']
    """


class UnpairedQuestionsWarning(EvalframeWarning):
    """A paired comparison dropped questions that only one of the two systems answers.

    Examples
    --------
    >>> import warnings
    >>> import evalframe as ef
    >>> from evalframe import stats
    >>> cran = ef.datasets.load_cranfield()
    >>> per_q = ef.evaluate(cran.runs, cran.qrels, "P@5", missing="drop")
    >>> per_q = per_q[~((per_q["system"] == "tfidf") & (per_q["query_id"] == "1"))]
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     cmp = stats.compare(per_q[per_q["system"].isin(["bm25", "tfidf"])], baseline="bm25")
    >>> [w.category.__name__ for w in caught], int(cmp["n_dropped"].iloc[0])
    (['UnpairedQuestionsWarning'], 1)
    """


class UnjudgedDocumentsWarning(EvalframeWarning):
    """Many of a system's top-k documents are not in the golden set (scores are lower bounds).

    Examples
    --------
    Most of Cranfield's top 10 was never judged:

    >>> import warnings
    >>> import evalframe as ef
    >>> cran = ef.datasets.load_cranfield()
    >>> runs = cran.runs[cran.runs["system"] == "bm25"]
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     rep = ef.report(runs, cran.qrels, measures=["nDCG@10"], n_resamples=200)
    >>> [w.category.__name__ for w in caught]
    ['UnjudgedDocumentsWarning']
    """


class SmallGoldenSetWarning(EvalframeWarning):
    """The golden set is too small for the intervals to be narrow (below 50 questions).

    Examples
    --------
    >>> import warnings
    >>> import evalframe as ef
    >>> sso = ef.datasets.load_sso()                  # one question
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     rep = ef.report(sso.runs, sso.qrels, measures=["R@5"], n_resamples=200)
    >>> "SmallGoldenSetWarning" in [w.category.__name__ for w in caught]
    True
    """


__all__ += ["UnpairedQuestionsWarning", "UnjudgedDocumentsWarning", "SmallGoldenSetWarning"]


class FewHumanLabelsWarning(EvalframeWarning):
    """A prediction-powered interval rests on fewer than 10 human-labelled questions: its
    normal approximation is not valid that small (:func:`evalframe.stats.summarize_ppi`).

    Examples
    --------
    >>> import warnings
    >>> import pandas as pd
    >>> from evalframe import stats
    >>> model = pd.DataFrame({"system": "s", "query_id": list("abcdefgh"), "measure": "P@5",
    ...                       "value": [0.2, 0.4, 0.6, 0.8, 0.2, 0.4, 0.6, 0.8]})
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     s = stats.summarize_ppi(model, model.iloc[:4])
    >>> [w.category.__name__ for w in caught]
    ['FewHumanLabelsWarning']
    """


__all__ += ["FewHumanLabelsWarning"]


class ShallowRankingWarning(EvalframeWarning):
    """Some rankings hold fewer documents than a measure's cutoff (R@100 of a 20-deep run is R@20).

    Examples
    --------
    >>> import warnings
    >>> import evalframe as ef
    >>> sso = ef.datasets.load_sso()
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     per_q = ef.evaluate(sso.runs, sso.qrels, "R@1000")
    >>> "ShallowRankingWarning" in [w.category.__name__ for w in caught]
    True
    """


__all__ += ["ShallowRankingWarning"]


class IdSchemeWarning(EvalframeWarning):
    """A system's documents and the golden set's do not meet: none of the system's
    retrieved documents is judged (a different id scheme, or a re-chunked corpus scored
    against the old chunks), or two systems that both retrieve judged documents share
    none (a golden set holding two chunkings' labels, each system able to return only
    its own).  Every measure of such a system is 0 for a reason other than its quality.

    Examples
    --------
    >>> import warnings
    >>> import pandas as pd
    >>> import evalframe as ef
    >>> sso = ef.datasets.load_sso()
    >>> rechunked = sso.runs.assign(doc_id="new-" + sso.runs["doc_id"])
    >>> both = pd.concat([sso.runs, rechunked.assign(system="rechunked")])
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     per_q = ef.evaluate(both, sso.qrels, "P@5")
    >>> [w.category.__name__ for w in caught]
    ['IdSchemeWarning']
    """


class ChunkingsDifferWarning(EvalframeWarning):
    """Chunk-level measures (R@k, nDCG@k...) compare systems whose chunkings differ: a
    chunk of 40 words and one of 100 are not the same unit, so their @k values are not
    comparable; the span measures (SpanRecall@k, SpanRecall(tokens=N)) are.

    Examples
    --------
    >>> import warnings
    >>> import pandas as pd
    >>> import evalframe as ef
    >>> spans = pd.DataFrame({"query_id": ["q"], "doc_id": ["d"], "start": [0], "end": [40]})
    >>> small = pd.DataFrame({"chunk_id": ["d#0", "d#1"], "doc_id": ["d", "d"], "start": [0, 50], "end": [50, 100]})
    >>> large = pd.DataFrame({"chunk_id": ["d#0"], "doc_id": ["d"], "start": [0], "end": [100]})
    >>> run = pd.DataFrame({"system": ["small", "large"], "query_id": ["q", "q"], "doc_id": ["d#0", "d#0"],
    ...                     "score": [1.0, 1.0]})
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     per_q = ef.evaluate(run, spans, ["R@1", "SpanPrecision@1"], chunks={"small": small, "large": large})
    >>> [w.category.__name__ for w in caught]
    ['ChunkingsDifferWarning']
    >>> per_q[["system", "measure", "value"]]
      system          measure  value
    0  small              R@1    1.0
    1  small  SpanPrecision@1    0.8
    2  large              R@1    1.0
    3  large  SpanPrecision@1    0.4
    """


__all__ += ["IdSchemeWarning", "ChunkingsDifferWarning"]


class QuestionsFailedWarning(EvalframeWarning):
    """Questions whose retriever call raised, or whose answer could not be read, have no rows in the run.

    :func:`evalframe.retrieve` records them in its ``failures`` table and goes on;
    :func:`evalframe.evaluate` then scores them 0, as unanswered questions.

    Examples
    --------
    >>> import warnings
    >>> import evalframe as ef
    >>> def search(text):
    ...     raise TimeoutError("index unreachable")
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     run, failures = ef.retrieve(search, {"q1": "single sign-on"}, progress=False)
    >>> [w.category.__name__ for w in caught], failures["error"].tolist()
    (['QuestionsFailedWarning'], ['TimeoutError'])
    """


class RetrieverOutputWarning(EvalframeWarning):
    """A retriever's answers disagree with themselves: a document returned twice for one
    question (later copies removed), or scores that do not descend along the returned order
    (distances?) or are missing for some documents.

    Examples
    --------
    >>> import warnings
    >>> import evalframe as ef
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     run, failures = ef.retrieve(lambda text: ["d1", "d2", "d1"], {"q1": "sso"}, progress=False)
    >>> [w.category.__name__ for w in caught], run["doc_id"].tolist()
    (['RetrieverOutputWarning'], ['d1', 'd2'])
    """


__all__ += ["QuestionsFailedWarning", "RetrieverOutputWarning"]


class MemoryBudgetWarning(EvalframeWarning):
    """The memory budget of a streamed evaluation cannot be kept: what must be held at once
    (the golden set, the per-question table, the libraries' first use, or one question's
    rows, which are never split) needs more than the budget; the message says how much.

    Examples
    --------
    >>> import warnings
    >>> from evalframe.engine.budget import warn_budget
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     warn_budget("q7", 2_000_000, 1_000)
    >>> caught[0].category.__name__
    'MemoryBudgetWarning'
    """


__all__ += ["MemoryBudgetWarning"]


class FewClustersWarning(EvalframeWarning):
    """A cluster bootstrap was asked for with fewer clusters than
    ``stats.resampling.FEW_CLUSTERS`` (30): its test rejects too often and its interval
    covers too rarely there (``benchmarks/sim_coverage.py clusters``); the cluster t
    (``method="t"``, ``test="t"``) or the cluster randomisation test keep their level.

    Examples
    --------
    >>> import warnings
    >>> import pandas as pd
    >>> from evalframe import stats
    >>> t = pd.DataFrame({"system": "a", "query_id": [str(i) for i in range(20)],
    ...                   "measure": "AP", "value": [i / 20 for i in range(20)],
    ...                   "topic": [str(i % 5) for i in range(20)]})
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     s = stats.summarize(t, cluster="topic", method="bootstrap", n_resamples=100)
    >>> caught[0].category.__name__
    'FewClustersWarning'
    """


__all__ += ["FewClustersWarning"]
