"""Several labels for one (question, document): the ``conflicts=`` choices and their resolution.

A golden set may label one (question, document) pair several times (several annotators,
a model's label beside a person's).  :data:`Conflicts` names the choices of
``conflicts=`` (raise, keep the highest, the lowest or the most frequent label, or a
person's over a model's: :func:`is_human` reads the :data:`PROVENANCE` columns);
:func:`resolved_labels` resolves pairs numbered on codes, :func:`resolve_conflicts` a
table of repeated pairs, :func:`provenance_rows` picks the row whose judge and confidence
a resolved pair keeps; :class:`ResolvedConflicts` records what was resolved (the parts'
records merged by :func:`merge_conflicts`).  The check that finds repeated pairs is
:func:`evalframe.schema.check_qrels`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

import numpy as np

from ._validation import Options, check

if TYPE_CHECKING:
    import pandas as pd


#: Examples shown: rows of an input problem, pairs of conflicting labels.
MAX_EXAMPLES = 5


#: How :func:`check_qrels` resolves several labels of one (question, document);
#: ``"human"``: a person's label outranks a model's (:func:`is_human`), people's
#: labels then resolved by majority.
Conflicts = Literal["error", "max", "min", "majority", "human"]
CONFLICTS = ("error", "max", "min", "majority", "human")
#: A golden set's optional provenance columns: who or what labelled each row
#: (``"human"``, ``"gpt-x:prompt-v3"``...; aliases ``annotator``, ``labeled_by``, ``source``)
#: and how sure it was; kept through reading, checking and ``conflicts=``.
PROVENANCE = ("judge", "confidence")


def is_human(judge) -> np.ndarray:
    """Per row: the label is a person's: its judge is missing (a golden set without
    provenance is people's), ``"human"``, or starts with ``"human:"`` (``"human:alice"``).
    Any other judge is a model's (``ef.judge`` names its rows ``judge_name``)."""
    import pandas as pd
    j = pd.Series(judge).reset_index(drop=True)
    text = j.astype("string").str.strip().str.lower()
    return (j.isna() | (text == "human") | text.str.startswith("human:").fillna(False)).to_numpy(dtype=bool)


def check_conflicts(conflicts, *, caller: str) -> None:
    """Raise ``ParameterError`` (a ``ValueError``) unless ``conflicts`` is one of ``CONFLICTS``."""
    check(caller, "conflicts", conflicts, Options(CONFLICTS))


@dataclass(frozen=True)
class ResolvedConflicts:
    """(question, document) pairs whose conflicting labels were resolved.

    Attributes
    ----------
    how : "max", "min" or "majority"
    count : int
        Pairs with more than one distinct label.
    examples : tuple of str
        A few of them, as ``query_id:doc_id``: the first pairs of the table.
    first_rows : tuple of int
        The row of the checked table where each example pair first appears (to merge
        the examples of parts of a larger table in its order).
    """

    how: str
    count: int
    examples: tuple[str, ...] = ()
    first_rows: tuple[int, ...] = field(default=(), compare=False)


def resolved_labels(pair: np.ndarray, first: np.ndarray, labels: np.ndarray, how: str) -> tuple[np.ndarray, np.ndarray]:
    """(label of each pair, the pairs with more than one distinct label), ``how`` as
    :func:`resolve_conflicts`: every row is a vote."""
    order = np.lexsort((labels, pair))
    p, v = pair[order], labels[order]
    new = np.empty(len(p), dtype=bool)
    new[:1] = True
    new[1:] = (p[1:] != p[:-1]) | (v[1:] != v[:-1])
    at = np.flatnonzero(new)  # one run per (pair, label), labels ascending within a pair
    run_pair, run_label = p[at], v[at]
    conflicted = np.flatnonzero(np.bincount(run_pair, minlength=len(first)) > 1)
    if how == "majority":  # the most votes, a tie going to the higher label
        votes = np.diff(np.append(at, len(p)))
        pick = np.lexsort((run_label, votes, run_pair))
        run_pair, run_label = run_pair[pick], run_label[pick]
    edge = np.empty(len(run_pair), dtype=bool)
    if how == "min":  # the first run of each pair
        edge[:1] = True
        edge[1:] = run_pair[1:] != run_pair[:-1]
    else:  # "max" and "majority": the last
        edge[-1:] = True
        edge[:-1] = run_pair[1:] != run_pair[:-1]
    return run_label[edge], conflicted


def provenance_rows(out: pd.DataFrame, pair: np.ndarray, labels: np.ndarray, label: np.ndarray) -> np.ndarray:
    """For each pair, the row its resolved ``label`` comes from: a person's row giving that
    label before a model's, else the first (its judge and confidence are kept)."""
    rows = np.arange(len(pair))
    match = labels == label[pair]
    human = is_human(out["judge"]) if "judge" in out else np.ones(len(pair), dtype=bool)
    rank = np.where(match, np.where(human, rows, rows + len(pair)), 2 * len(pair) + rows)
    best = np.full(len(label), np.iinfo(np.int64).max)
    np.minimum.at(best, pair, rank)
    return best % len(pair) if len(pair) else best


def resolve_conflicts(qrels: pd.DataFrame, how: str) -> tuple[pd.DataFrame, ResolvedConflicts]:
    """One row per (query_id, doc_id) of a canonical golden set with repeated pairs.

    ``how``: ``"max"`` / ``"min"`` label, or ``"majority"``: the label of most rows of the
    pair (every row is a vote, identical rows included), a tie going to the higher
    label.  Rows keep the position of their pair's first row.
    """
    import pandas as pd
    keys = ["query_id", "doc_id"]
    first = qrels.drop_duplicates(keys)
    n_labels = qrels.drop_duplicates(keys + ["relevance"]).groupby(keys, sort=False).size()
    conflicted = n_labels[n_labels > 1]
    if how == "majority":
        votes = qrels.groupby(keys + ["relevance"], sort=False).size().reset_index(name="votes")
        best = votes.sort_values(["votes", "relevance"], ascending=False, kind="stable").drop_duplicates(keys)
        label = best.set_index(keys)["relevance"]
    else:
        label = qrels.groupby(keys, sort=False)["relevance"].agg(how)
    idx = pd.MultiIndex.from_frame(first[keys])
    at = pd.Series(first.index.to_numpy(), index=idx)
    out = first.assign(relevance=label.reindex(idx).to_numpy(dtype=np.int64)).reset_index(drop=True)
    shown = conflicted.index[:MAX_EXAMPLES]
    examples = tuple(f"{q}:{d}" for q, d in shown)
    return out, ResolvedConflicts(how, int(len(conflicted)), examples, tuple(int(r) for r in at.loc[shown]))


def merge_conflicts(parts: list[ResolvedConflicts | None]) -> ResolvedConflicts | None:
    """The conflicts of the parts of a golden set (:func:`check_qrels_part`) as those of
    the whole: their count, and as examples the pairs that appear first in the whole."""
    parts = [c for c in parts if c is not None]
    if not parts:
        return None
    first = sorted((r, e) for c in parts for r, e in zip(c.first_rows, c.examples))[:MAX_EXAMPLES]
    return ResolvedConflicts(parts[0].how, sum(c.count for c in parts), tuple(e for _, e in first),
                             tuple(r for r, _ in first))
