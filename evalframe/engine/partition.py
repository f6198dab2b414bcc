"""What every engine that cuts an input into partitions of whole questions shares: one
hash of question ids to buckets, and one index of a golden set held whole that hands
each partition its questions' rows.

A question id is hashed as a string (``evalframe.schema.ids_to_str``), so question
``1`` of one table and ``"1"`` of another fall in the same bucket, on every engine and
in every process (the fingerprint is a fixed function of the id's bytes, not Python's
salted ``hash``).
"""
from __future__ import annotations

__all__ = ["question_fingerprints", "question_buckets", "GoldenIndex", "conflicts_record"]

import numpy as np
import pandas as pd
import pyarrow as pa

from ..ranking import Check, Diagnostic
from ..schema import ResolvedConflicts, fingerprints, ids_to_str


def question_fingerprints(query_id: "pd.Series | pa.Array | pa.ChunkedArray") -> np.ndarray:
    """The 64-bit fingerprint of each question id, compared as a string.

    Examples
    --------
    >>> import pandas as pd
    >>> a = question_fingerprints(pd.Series([1, 2]))
    >>> b = question_fingerprints(pd.Series(["1", "2"]))
    >>> bool((a == b).all()), a.dtype.name
    (True, 'uint64')
    """
    if isinstance(query_id, pd.Series):
        query_id = pa.array(ids_to_str(query_id), type=pa.large_string())  # Arrow strings stay Arrow
    if not isinstance(query_id, pa.ChunkedArray):
        query_id = pa.chunked_array([query_id])
    if query_id.type != pa.large_string():
        query_id = query_id.cast(pa.large_string())
    return fingerprints(query_id)


def question_buckets(query_id: "pd.Series | pa.Array | pa.ChunkedArray", n_buckets: int) -> np.ndarray:
    """The bucket (0 .. n_buckets - 1) of each question id: its fingerprint modulo n.

    Examples
    --------
    >>> import pandas as pd
    >>> b = question_buckets(pd.Series(["q1", "q2", "q1"]), 4)
    >>> b.dtype.name, bool(b[0] == b[2]), bool(((0 <= b) & (b < 4)).all())
    ('int64', True, True)
    """
    return (question_fingerprints(query_id) % np.uint64(n_buckets)).astype(np.int64)


class GoldenIndex:
    """A golden set held whole, indexed by question: :meth:`rows` gives the rows of any
    questions in the golden set's own order (what the whole input's judge sees of them).

    Attributes
    ----------
    frame : the golden set (its rows in their order)
    ids : pandas.Index of its distinct question ids, as strings, in order of first row
    seen : bool array, per question: handed to a partition by :meth:`hand_out`

    Examples
    --------
    >>> import pandas as pd
    >>> g = GoldenIndex(pd.DataFrame({"query_id": ["b", "a", "b"], "doc_id": ["d1", "d2", "d3"],
    ...                               "relevance": [1, 0, 2]}))
    >>> list(g.ids), g.lookup(["a", "x"]).tolist()
    (['b', 'a'], [1, -1])
    >>> g.hand_out([0])["doc_id"].tolist(), g.unseen()["doc_id"].tolist()
    (['d1', 'd3'], ['d2'])
    """

    def __init__(self, frame: pd.DataFrame):
        codes, ids = pd.factorize(ids_to_str(frame["query_id"]), sort=False)
        self.frame = frame
        self.ids = pd.Index(np.asarray(ids, dtype=object))
        self.order = np.argsort(codes, kind="stable")  # rows grouped by question, in order within
        self.starts = np.concatenate(([0], np.cumsum(np.bincount(codes, minlength=len(ids)))))
        self.seen = np.zeros(len(ids), dtype=bool)

    def __len__(self) -> int:
        return len(self.ids)

    def lookup(self, qids) -> np.ndarray:
        """The position of each question id in ``ids`` (-1: not in the golden set)."""
        return self.ids.get_indexer(qids)

    def positions(self, questions) -> np.ndarray:
        """The rows (positions in ``frame``, ascending) of the questions ``questions``."""
        questions = np.asarray(questions, dtype=np.int64)
        lo, n = self.starts[questions], self.starts[questions + 1] - self.starts[questions]
        at = np.repeat(lo - np.cumsum(n) + n, n) + np.arange(int(n.sum()))
        return np.sort(self.order[at])

    def rows(self, questions) -> pd.DataFrame:
        """The golden-set rows of the questions ``questions`` (positions in ``ids``), in
        the golden set's order."""
        return self.frame.iloc[self.positions(questions)]

    def hand_out(self, questions) -> pd.DataFrame:
        """:meth:`rows`, the questions marked ``seen`` (an engine that streams parts
        gives the questions no part held to the last one: :meth:`unseen`)."""
        questions = np.asarray(questions, dtype=np.int64)
        self.seen[questions] = True
        return self.rows(questions)

    def unseen(self) -> pd.DataFrame:
        """The rows of the questions no :meth:`hand_out` call handed out yet."""
        return self.hand_out(np.flatnonzero(~self.seen))


def conflicts_record(resolved: "ResolvedConflicts | None") -> list[Diagnostic]:
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
