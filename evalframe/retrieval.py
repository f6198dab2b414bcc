"""Retrieval: call your retriever over the golden set's questions and get a run table.

``retrieve(fn, questions)`` calls ``fn`` with each question's text (or with lists of
texts, ``batch_size=n``), reads what it returns, and gives a :class:`Retrieval`: the run
(``[system,] query_id, doc_id, rank, score, latency_s``, ready for
:func:`evalframe.evaluate`) and the questions that failed. The loop over questions is
Python's (each call is the user's); an answer's documents are read in C (``map``, ``zip``,
NumPy; ids of mixed types are looked at one by one), and the run is assembled once, with
NumPy and pandas.

What ``fn`` may return for one question
---------------------------------------
- a list of ids, best first (no scores: ``score`` is NaN and the run is ordered by rank);
- a tuple ``(ids, scores)`` of two sequences of the same length (a tuple of length 2
  whose items are both sequences is always read this way; give pairs in a list);
- a list of ``(id, score)`` pairs;
- a list of dicts holding an id under ``doc_id``, ``chunk_id`` or ``id`` (:data:`ID_KEYS`;
  the key is the one the first dict has, and a dict holding two of them is refused as
  ambiguous) and, optionally, ``score``; other keys are ignored;
- a dict ``{id: score}``, best first.

"A list" is a list, a tuple, a 1-d NumPy array or a pandas Series. Ids are str or int
(NumPy ints too) and become strings as everywhere in evalframe (``7`` and ``"7"`` are the
same document); scores are numbers (float64). With ``batch_size=n``, ``fn`` gets a list of
at most n texts, in the questions' order, and returns a list of such answers, one per text.
Objects of retrieval libraries (LangChain ``Document``, LlamaIndex ``NodeWithScore``...)
are read through a one-line adapter, e.g.
``lambda q: [(n.node_id, n.score) for n in retriever.retrieve(q)]``.

Conventions
-----------
- ``rank`` is the position in ``fn``'s answer (1 = first). A document returned twice for
  one question keeps its first position; later copies are removed before the cutoff ``k``,
  as ``evaluate(duplicates="first")`` and page roll-up do (so the top k holds k distinct
  documents), and a :class:`~evalframe.errors.RetrieverOutputWarning` counts them.
- ``k``: the first ``k`` distinct documents of each answer are kept (``None``: all).
- ``score`` is what ``fn`` gave, NaN where it gave none. :func:`evalframe.evaluate`
  ranks by score (ties by ``doc_id``, trec_eval's rule), and a run without scores by
  ``rank``. When the scores do not descend along ``fn``'s order (distances, where lower
  is better), or only some documents have one, a ``RetrieverOutputWarning`` says so:
  ``evaluate(run, qrels, ties="rank")`` ranks by ``fn``'s order.
- ``latency_s``: the seconds ``fn``'s call took, per question; for a batch, the batch's
  wall time divided by its number of questions (every question of a batch gets the same).
- ``errors="record"``: a question whose call raises an ``Exception``, or whose answer
  cannot be read, has no rows in the run (so ``evaluate`` scores it 0, as an unanswered
  question); it is a row of the ``failures`` table, and a
  :class:`~evalframe.errors.QuestionsFailedWarning` counts them, with examples. In batch
  mode a batch that raises, or returns the wrong number of answers, fails each of its
  questions. ``errors="raise"``: the first failure propagates (``fn``'s own exception,
  with a note naming the question). A question answered with an empty list is no failure.
"""
from __future__ import annotations

import sys
import traceback
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from operator import itemgetter, methodcaller
from time import perf_counter
from typing import Any, Literal

import numpy as np
import pandas as pd

from ._validation import BOOLEAN_OR_NONE, POSITIVE_INT, InstanceOf, IsCallable, Options, error, type_of, validate
from .errors import (EvalframeInputError, InputProblem, QuestionsFailedWarning, RetrieverOutputWarning,
                     warn)
from .inputs import TEXT_ALIASES, TEXT_COLUMN, alias_candidates, arrow_frame, split_question_text
from .ranking import list_ranks
from .schema import ids_to_str

__all__ = ["retrieve", "Retrieval", "ID_KEYS", "SCORE_KEY"]

#: Keys of a result dict that hold its id (the first dict's key is used for all).
ID_KEYS = ("doc_id", "chunk_id", "id")
#: The key of a result dict that holds its score.
SCORE_KEY = "score"
#: Examples named in a warning.
MAX_EXAMPLES = 3

_SEQUENCES = (list, tuple, np.ndarray, pd.Series)
_SHAPES = (f"a list of ids, a tuple (ids, scores), a list of (id, score) pairs, a list of dicts with an id key "
           f"({', '.join(ID_KEYS)}) or a dict {{id: score}}")


@dataclass(frozen=True, eq=False)
class Retrieval:
    """A retriever's run over the questions, and the questions that failed.

    Unpacks as ``run, failures = ef.retrieve(...)``.

    Attributes
    ----------
    run : DataFrame
        One row per (question, returned document), questions in the input's order,
        each by rank:

        ========== ======= ===================================================
        system     str     present when ``system=`` names it
        query_id   str
        doc_id     str
        rank       int64   position in ``fn``'s answer, 1.. (duplicates removed)
        score      float64 ``fn``'s score, NaN when it gave none
        latency_s  float64 seconds per question (a batch: its time / its size)
        ========== ======= ===================================================

    failures : DataFrame
        One row per failed question: ``query_id, text`` (str), ``error`` (the
        exception's class name), ``message`` (its text), ``latency_s`` (float64: until
        it raised), ``traceback`` (the formatted traceback, str). Empty when none failed.

    Examples
    --------
    >>> import evalframe as ef
    >>> result = ef.retrieve(lambda text: ["d1", "d2"], {"q1": "sso", "q2": "mfa"}, progress=False)
    >>> result
    Retrieval(run: 4 rows, 2 questions answered; 0 failed)
    >>> run, failures = result
    >>> run["doc_id"].tolist(), len(failures)
    (['d1', 'd2', 'd1', 'd2'], 0)
    """

    run: pd.DataFrame
    failures: pd.DataFrame

    def __iter__(self):
        return iter((self.run, self.failures))

    def __repr__(self) -> str:
        n = self.run["query_id"].nunique() if len(self.run) else 0
        return f"Retrieval(run: {len(self.run)} rows, {n} questions answered; {len(self.failures)} failed)"


def retrieve(fn: Callable[[Any], Any], questions, *, k: int | None = 10, system: str | None = None,
             batch_size: int | None = None, progress: bool | None = None,
             errors: Literal["record", "raise"] = "record") -> Retrieval:
    """Call a retriever over the questions and return its run (and its failures).

    Parameters
    ----------
    fn : callable
        Your retriever: called with one question's text (``batch_size=None``), or with a
        list of at most ``batch_size`` texts. Its answers are read as the module
        docstring lists (ids; ``(ids, scores)``; ``(id, score)`` pairs; dicts with
        ``doc_id``/``chunk_id``/``id`` and ``score``; ``{id: score}``).
    questions : DataFrame, dict or Series
        ``query_id`` and the question text (``text``; or the aliases of
        :mod:`evalframe.inputs`: ``question_id`` + ``question``, ``qid`` + ``query``...),
        e.g. a golden set that carries its questions (one call per question: repeated
        rows keep the first text); ``{query_id: text}``; or a Series of texts indexed by
        question id. Arrow tables and polars frames are read as DataFrames.
    k : int, optional
        Keep the first ``k`` distinct documents of each answer (default 10; None: all).
    system : str, optional
        The run's system name (a first column ``system``); none by default.
    batch_size : int, optional
        Call ``fn`` with lists of at most ``batch_size`` texts, in order.
    progress : bool, optional
        A progress bar over questions on standard error: default on when standard error
        is a terminal (not in notebooks); True or False to choose.
    errors : {"record", "raise"}
        A question whose call raises (or whose answer cannot be read): record it in
        ``failures`` and go on, with a :class:`~evalframe.errors.QuestionsFailedWarning`
        (default), or let the first exception propagate.

    Returns
    -------
    Retrieval
        ``run``: ``[system,] query_id, doc_id, rank, score, latency_s``; ``failures``:
        ``query_id, text, error, message, latency_s, traceback`` (see :class:`Retrieval`).

    Raises
    ------
    EvalframeInputError
        The questions lack an id or a text column, or hold missing ids or texts.

    Notes
    -----
    The run feeds :func:`evalframe.evaluate` as it is; a failed question has no rows,
    so it scores 0 there (``missing="zero"``). Why a result object, not a DataFrame:
    calling a retriever is the expensive step, and its failures must not be lost when
    warnings are filtered (nor kept on ``DataFrame.attrs``, which pandas drops).

    Examples
    --------
    A retriever over a toy index (any callable from a question's text to ranked ids):
    pages scored by the words they share with the question.

    >>> import evalframe as ef
    >>> sso = ef.datasets.load_sso()
    >>> pages = {"page-212": "single sign-on with SAML on the Pro plan", "page-1140": "Pro plan features",
    ...          "basic-plan": "what the Basic plan includes", "two-factor": "two-factor sign-in"}
    >>> def search(text):
    ...     words = set(text.lower().rstrip("?").split())
    ...     hits = [(page, len(words & set(body.lower().split()))) for page, body in pages.items()]
    ...     return sorted(hits, key=lambda hit: -hit[1])
    >>> run, failures = ef.retrieve(search, sso.queries, k=3, system="overlap", progress=False)
    >>> run[["query_id", "doc_id", "rank", "score"]]
      query_id      doc_id  rank  score
    0      sso    page-212     1    5.0
    1      sso   page-1140     2    2.0
    2      sso  basic-plan     3    2.0
    >>> ef.evaluate(run, sso.qrels, ["R@3", "RR"]).round(2)
        system query_id measure  value
    0  overlap      sso     R@3   0.67
    1  overlap      sso      RR   1.00
    """
    _check(fn, k, system, batch_size, progress, errors)
    qids, texts = _questions(questions)
    n = len(qids)
    size = 1 if batch_size is None else int(batch_size)
    latency = np.zeros(n)
    answered: list[int] = []
    lengths: list[int] = []
    ids: list = []
    scores: list[np.ndarray] = []
    failed: list[tuple[int, tuple[str, str, str]]] = []

    def fail(indices: range, exc: Exception) -> None:
        if errors == "raise":
            where = (f"question {qids[indices[0]]!r}" if len(indices) == 1 else
                     f"the batch of questions {qids[indices[0]]!r} to {qids[indices[-1]]!r}")
            exc.add_note(f"retrieve: raised for {where} (errors='record' records it and goes on)")
            raise exc
        info = (type(exc).__name__, str(exc), "".join(traceback.format_exception(exc)))
        failed.extend((i, info) for i in indices)

    with _progress_bar(progress, n) as bar:
        for start in range(0, n, size):
            part = range(start, min(start + size, n))
            t0 = perf_counter()
            try:
                out = fn(texts[start]) if batch_size is None else fn(texts[part.start:part.stop])
                error = None
            except Exception as exc:  # noqa: BLE001 (the user's retriever may raise anything)
                out, error = None, exc
            latency[part.start:part.stop] = (perf_counter() - t0) / len(part)
            answers = []
            if error is None:
                try:
                    answers = [out] if batch_size is None else _batch_answers(out, len(part), qids[start])
                except (TypeError, ValueError) as exc:
                    error = exc
            if error is not None:
                fail(part, error)
            for i, answer in zip(part, answers):
                try:
                    got_ids, got_scores = _answer(answer, qids[i])
                except (TypeError, ValueError) as exc:
                    fail(range(i, i + 1), exc)
                    continue
                answered.append(i)
                lengths.append(len(got_ids))
                ids.extend(got_ids)
                scores.append(got_scores)
            bar.update(len(part))
            if failed:
                bar.set_postfix(failed=len(failed))

    run = _assemble(qids, np.repeat(np.asarray(answered, np.int64), lengths), ids, scores, latency, k, system)
    failures = _failures(qids, texts, failed, latency)
    if len(failures):
        examples = "; ".join(f"{r.query_id}: {r.error}: {r.message}"[:200]
                             for r in failures.head(MAX_EXAMPLES).itertuples())
        warn(f"retrieve: {len(failures)} of {n} questions failed and have no rows in the run (evaluate() "
             f"scores them 0), e.g. {examples}; the failures table holds each error and traceback",
             QuestionsFailedWarning)
    return Retrieval(run, failures)


# ---------------------------------------------------------------- checks
def _check(fn, k, system, batch_size, progress, errors) -> None:
    validate("retrieve", fn=(fn, IsCallable("callable")), k=(k, POSITIVE_INT, None),
             batch_size=(batch_size, POSITIVE_INT, None), system=(system, InstanceOf(str), None),
             progress=(progress, BOOLEAN_OR_NONE), errors=(errors, Options(("record", "raise"), "'record' or 'raise'")))


def _questions(questions) -> tuple[list[str], list]:
    """(query ids as str, texts): one per question, in first-appearance order."""
    problems: list[InputProblem] = []
    if isinstance(questions, Mapping):
        ids, texts = pd.Series(list(questions.keys()), dtype=object), pd.Series(list(questions.values()), dtype=object)
    elif isinstance(questions, pd.Series):
        index = questions.index
        if isinstance(index, pd.RangeIndex) and index.name is None:
            raise EvalframeInputError("questions", [InputProblem(
                "a Series of question texts must be indexed by question id (this one has a default 0..n-1 index)",
                "index it by id (golden.drop_duplicates('question_id').set_index('question_id')['question']), "
                "or pass a DataFrame with query_id and text columns, or a dict {query_id: text}")])
        ids, texts = pd.Series(index.to_numpy(), dtype=object), pd.Series(questions.to_numpy(), dtype=object)
    else:
        frame = questions if isinstance(questions, pd.DataFrame) else arrow_frame(questions)
        if frame is None:
            raise error("retrieve", "questions", "a DataFrame (query_id, text), a dict {query_id: text} "
                        "or a Series of texts indexed by query_id", type_of(questions))
        frame = split_question_text(frame)
        found = alias_candidates(frame, "query_id")
        if len(found) > 1:  # a text-like name beside an id is the text (inputs.split_question_text)
            found = [c for c in found if str(c).strip().lower() not in TEXT_ALIASES] or found
        if len(found) != 1:
            problems.append(InputProblem(
                f"no question id column (found {list(frame.columns)})" if not found else
                f"several columns could be the question id: {found}",
                "name one column query_id (or question_id, qid...)"))
        if TEXT_COLUMN not in frame:
            problems.append(InputProblem(
                f"no question text column beside the id (found {list(frame.columns)})",
                f"name the question's text {TEXT_COLUMN!r} (or question, query, question_text, query_text)"))
        if problems:
            raise EvalframeInputError("questions", problems)
        ids, texts = frame[found[0]].reset_index(drop=True), frame[TEXT_COLUMN].reset_index(drop=True)
    if len(ids) == 0:
        raise EvalframeInputError("questions", [InputProblem("there are no questions", "pass at least one question")])
    ids = ids_to_str(ids)
    bad_id = (ids.isna() | (ids.str.strip() == "")).to_numpy()
    if bad_id.any():
        problems.append(InputProblem(f"{int(bad_id.sum())} questions have a missing or empty question id",
                                     "drop those rows or fill in their id",
                                     pd.DataFrame({"query_id": ids, "text": texts})[bad_id].head(5).to_string()))
    keep = ~ids.duplicated().to_numpy()
    ids, texts = ids[keep].tolist(), texts[keep].tolist()
    states = np.array([_text_state(t) for t in texts], dtype=np.int8)  # a look per question, not per document
    for state, what in ((1, "a missing or empty text"), (2, "a text that is not a str")):
        bad = states == state
        if bad.any():
            problems.append(InputProblem(f"{int(bad.sum())} questions have {what}",
                                         "give every question its text (a str), or drop it",
                                         pd.DataFrame({"query_id": ids, "text": texts})[bad].head(5).to_string()))
    if problems:
        raise EvalframeInputError("questions", problems)
    return ids, texts


def _text_state(t) -> int:
    """0: a text; 1: missing or blank; 2: not a str."""
    if isinstance(t, str):
        return 0 if t.strip() else 1
    return 1 if t is None or (np.ndim(t) == 0 and pd.isna(t)) else 2


# ---------------------------------------------------------------- reading answers
def _batch_answers(out, n: int, first: str) -> list:
    if not isinstance(out, _SEQUENCES):
        raise TypeError(f"retrieve: with batch_size, fn must return a list of answers (one per question), "
                        f"got {type(out).__name__} for the batch starting at question {first!r}")
    if len(out) != n:
        raise ValueError(f"retrieve: fn returned {len(out)} results for a batch of {n} questions (from question "
                         f"{first!r}); with batch_size, fn must return one answer per question, in order")
    return list(out)


def _answer(answer, qid: str) -> tuple[list, np.ndarray]:
    """(ids, float64 scores, NaN where none) of one question's answer, checked."""
    head = f"retrieve: fn's result for question {qid!r}"
    if (isinstance(answer, tuple) and len(answer) == 2 and isinstance(answer[0], _SEQUENCES)
            and isinstance(answer[1], _SEQUENCES)):
        ids = _items(answer[0])
        score = _scores(answer[1], head)
        if len(score) != len(ids):
            raise ValueError(f"{head} holds {len(ids)} ids and {len(score)} scores; (ids, scores) must be as long")
    elif isinstance(answer, Mapping):
        ids, score = list(answer.keys()), _scores(list(answer.values()), head)
    elif isinstance(answer, _SEQUENCES):
        items = _items(answer)
        first = items[0] if items else None
        if isinstance(first, Mapping):
            ids, score = _from_dicts(items, head)
        elif isinstance(first, (tuple, list)):
            try:
                sizes = set(map(len, items))
            except TypeError:
                sizes = set()
            if sizes != {2}:
                raise ValueError(f"{head} is a list whose items are not all (id, score) pairs, e.g. {items[0]!r}")
            ids, raw = zip(*items)
            ids, score = list(ids), _scores(raw, head)
        else:
            ids, score = items, np.full(len(items), np.nan)
    else:
        raise TypeError(f"{head} must be {_SHAPES}; got {type(answer).__name__}")
    _check_ids(ids, head)
    return ids, score


def _items(seq) -> list:
    return seq.tolist() if isinstance(seq, (np.ndarray, pd.Series)) else list(seq)


def _scores(values, head: str) -> np.ndarray:
    try:
        out = np.asarray(_items(values) if isinstance(values, pd.Series) else values, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{head}: scores must be numbers, got {list(values)[:3]!r}...") from None
    if out.ndim != 1:
        raise ValueError(f"{head}: scores must be one number per id, got an array of shape {out.shape}")
    return out


def _from_dicts(items: list, head: str) -> tuple[list, np.ndarray]:
    keys = [key for key in ID_KEYS if key in items[0]]
    if not keys:
        raise ValueError(f"{head} is a list of dicts with no id key ({', '.join(ID_KEYS)}), "
                         f"e.g. keys {list(items[0])[:6]}")
    if len(keys) > 1:
        raise ValueError(f"{head} is a list of dicts holding both {keys[0]!r} and {keys[1]!r}, so which id to "
                         f"evaluate is ambiguous; return the ids, e.g. [(r[{keys[0]!r}], r['score']) for r in hits]")
    try:
        ids = list(map(itemgetter(keys[0]), items))
        raw = list(map(methodcaller("get", SCORE_KEY), items))
    except (KeyError, TypeError, AttributeError, IndexError):
        raise ValueError(f"{head}: a result lacks its {keys[0]!r} key (the key of the first result), "
                         "or is not a dict") from None
    return ids, _scores(raw, head)


def _check_ids(ids: list, head: str) -> None:
    """Ids are str or int (integral floats too), none missing or blank."""
    kind = pd.api.types.infer_dtype(ids, skipna=False)
    if kind in ("integer", "empty"):
        return
    if kind == "string":  # the common case: the look runs in C (map of a builtin), no array is built
        n_blank = list(map(str.strip, ids)).count("")
    else:  # mixed or unusual ids: one look at each
        states = [_id_state(x) for x in ids]
        if 2 in states:
            raise ValueError(f"{head}: ids must be str or int, got {ids[states.index(2)]!r}")
        n_blank = states.count(1)
    if n_blank:
        raise ValueError(f"{head} holds {n_blank} missing or empty ids")


def _id_state(x) -> int:
    """0: an id; 1: missing or blank; 2: not an id (a float with decimals, a list, bytes...)."""
    if isinstance(x, str):
        return 0 if x.strip() else 1
    if isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_)):
        return 0
    if x is None:
        return 1
    if isinstance(x, (float, np.floating)):
        return 1 if np.isnan(x) else 0 if float(x).is_integer() else 2
    return 2


# ---------------------------------------------------------------- the tables
def _assemble(qids: list[str], qpos: np.ndarray, ids: list, scores: list[np.ndarray], latency: np.ndarray,
              k: int | None, system: str | None) -> pd.DataFrame:
    """The run: duplicates after their first copy removed, then the first k of each question."""
    doc = ids_to_str(pd.Series(ids, dtype=_id_dtype(ids)))
    score = np.concatenate(scores) if scores else np.zeros(0)
    codes, _ = pd.factorize(doc)
    dup = pd.Series(qpos * max(len(codes), 1) + codes).duplicated().to_numpy()
    if dup.any():
        where = pd.DataFrame({"query_id": np.asarray(qids, dtype=object)[qpos[dup]], "doc_id": doc[dup].to_numpy()})
        examples = ", ".join(f"{q}: {d}" for q, d in where.drop_duplicates().head(MAX_EXAMPLES).itertuples(index=False))
        warn(f"retrieve: {where['query_id'].nunique()} questions had documents returned twice ({int(dup.sum())} "
             f"copies removed, the first kept, before the cutoff k; e.g. {examples})", RetrieverOutputWarning)
    keep = ~dup
    _, _, rank = list_ranks(qpos[keep])
    rows = np.flatnonzero(keep)
    if k is not None:
        rows, rank = rows[rank <= k], rank[rank <= k]
    q = qpos[rows]
    out = {}
    if system is not None:
        out["system"] = pd.Series([system] * len(rows), dtype=str)
    out["query_id"] = pd.Series(np.asarray(qids, dtype=object)[q], dtype=str)
    out["doc_id"] = doc.take(rows).reset_index(drop=True).astype(str)
    out["rank"] = rank.astype(np.int64)
    out["score"] = score[rows]
    out["latency_s"] = latency[q]
    run = pd.DataFrame(out)
    _warn_score_order(run, q)
    return run


def _id_dtype(ids: list):
    kind = pd.api.types.infer_dtype(ids, skipna=False)
    return None if kind in ("string", "integer") else object


def _warn_score_order(run: pd.DataFrame, q: np.ndarray) -> None:
    """Scores that rank the run otherwise than fn did: rising along a question's answer,
    or missing for some documents only."""
    score = run["score"].to_numpy()
    has = ~np.isnan(score)
    if not has.any():
        return
    hint = "evaluate() ranks by score, descending; evaluate(run, qrels, ties='rank') ranks by fn's order"
    if not has.all():
        qs = run["query_id"][~has].unique()
        warn(f"retrieve: {len(qs)} questions have documents without a score (e.g. "
             f"{', '.join(map(str, qs[:MAX_EXAMPLES]))}): {hint}", RetrieverOutputWarning)
    rising = np.flatnonzero((q[1:] == q[:-1]) & (score[1:] > score[:-1]))
    if len(rising):
        qs = pd.unique(run["query_id"].to_numpy()[rising])
        warn(f"retrieve: {len(qs)} questions have scores that do not descend along fn's order (distances, where "
             f"lower is better? e.g. {', '.join(map(str, qs[:MAX_EXAMPLES]))}): {hint}, evaluate(..., ascending=True) "
             "ranks lower scores first, or return -distance as the score", RetrieverOutputWarning)


def _failures(qids: list[str], texts: list, failed: list, latency: np.ndarray) -> pd.DataFrame:
    at = np.asarray([i for i, _ in failed], dtype=np.int64)
    info = [x for _, x in failed]
    return pd.DataFrame({
        "query_id": pd.Series([qids[i] for i in at], dtype=str),
        "text": pd.Series([texts[i] for i in at], dtype=str),
        "error": pd.Series([x[0] for x in info], dtype=str),
        "message": pd.Series([x[1] for x in info], dtype=str),
        "latency_s": latency[at],
        "traceback": pd.Series([x[2] for x in info], dtype=str),
    })


def _progress_bar(enabled: bool | None, total: int):
    """tqdm over questions; by default on when standard error is a terminal (not in
    notebooks), as :func:`evalframe.evaluate`'s streaming bar."""
    from tqdm.auto import tqdm
    if enabled is None:
        enabled = sys.stderr.isatty() and "ipykernel" not in sys.modules
    return tqdm(total=total, desc="retrieving", unit="question", disable=not enabled, file=sys.stderr, leave=False)
