"""Bounds for the unjudged (``unjudged=``): the families whose upper bound is true
(:data:`BOUND_FAMILIES`), every unjudged document of a cutoff counted relevant, and the table
of both bounds.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Literal, Sequence

import numpy as np
import pandas as pd

from .._validation import Options, check
from ..errors import EvalframeInputError, InputProblem
from ..measures import Measure, compute
from .._judged import Judged, group_starts
from .chunkings import is_span_input
from .steps import long_table


#: What the unjudged retrieved documents count as (:func:`evalframe.evaluate`'s ``unjudged=``).
Unjudged = Literal["nonrelevant", "relevant", "bounds"]


#: The families whose value with every unjudged document of the top k (every retrieved
#: document without a cutoff) counted relevant is the largest value any labelling of the
#: unjudged documents gives: P, Success and RR read only the top k, and grow with each
#: document made relevant; R@k = hits / relevant grows too when the documents made
#: relevant are those of the top k, (h + u) / (R + u) >= h / R, while a relevant document
#: outside the top k (retrieved lower or never) only lowers it.  nDCG@k and AP are not
#: among them: a relevant document ranked low raises the ideal (nDCG) or the denominator
#: (AP) more than the gain, e.g. AP 1 -> 0.6 with one more relevant document at rank 10.
BOUND_FAMILIES = ("P", "R", "Success", "RR")


def check_unjudged(unjudged, ms: Sequence[Measure], caller: str = "evaluate") -> None:
    """``unjudged=`` checked: None or one of :data:`Unjudged`; with ``"relevant"`` or
    ``"bounds"`` every measure of ``ms`` must be one whose upper bound is true
    (:data:`BOUND_FAMILIES`, without a token budget or ``judged_only``)."""
    check(caller, "unjudged", unjudged, Options((None, "nonrelevant", "relevant", "bounds"),
                                                "None, 'nonrelevant', 'relevant' or 'bounds'"))
    if unjudged not in ("relevant", "bounds"):
        return
    bad = [str(m) for m in ms if m.family not in BOUND_FAMILIES or set(dict(m.params)) - {"rel"}]
    if bad:
        raise EvalframeInputError("measures", [InputProblem(
            f"unjudged={unjudged!r} has no true upper bound for {bad[:6]}: counting every unjudged retrieved "
            "document relevant can lower nDCG and AP (a relevant document ranked low raises the ideal ranking or "
            "the number of relevant documents more than it adds), and the other measures (bpref, token budgets, "
            "judged_only, ...) read the unjudged documents otherwise",
            f"ask for the bounds of {', '.join(BOUND_FAMILIES)} (@k, rel=) only, and evaluate the other measures "
            "in a second call without unjudged=")])


def refuse_unjudged_with_spans(unjudged, chunks, qrels, columns=None) -> None:
    """``unjudged="relevant"`` or ``"bounds"`` refused with ``chunks=`` or a span golden set,
    on every engine (a chunk's label comes from the spans; a run of whole documents on a span
    golden set too, judged in memory as chunks and by the partitioning engines on document labels)."""
    if unjudged in ("relevant", "bounds") and (chunks is not None or is_span_input(qrels, columns)):
        raise ValueError(f"evaluate: unjudged={unjudged!r} is not available with chunks= or a span golden set "
                         "(a chunk's label comes from the spans): evaluate without unjudged=")


def unjudged_relevant(J: Judged, k: int | None, label: int) -> Judged:
    """``J`` with every unjudged document (absent from the golden set, or a negative label:
    as ``Unjudged@k`` counts them) of each ranking's top ``k`` (every one when ``k`` is
    None) labelled ``label``, and added to the golden set of that ranking alone: each
    group (system, question) gets its own copy of its question's golden set, so the
    relevant documents one system's bound adds are not another system's.

    The measures of :data:`BOUND_FAMILIES` computed on it give their upper bound."""
    flip = J.label < 0
    if k is not None:
        flip &= J.rank <= k
    G = J.n_groups
    # each group's copy of its question's golden-set rows
    per_q = np.bincount(J.qrels_query, minlength=J.n_queries)
    starts = group_starts(J.qrels_query, J.n_queries)
    n = per_q[J.group_query]
    owner = np.repeat(np.arange(G, dtype=np.int64), n)
    offset = np.arange(int(n.sum()), dtype=np.int64) - np.repeat(np.cumsum(n) - n, n)
    rows = np.repeat(starts[J.group_query], n) + offset
    owner = np.concatenate([owner, J.grp[flip].astype(np.int64)])
    qlabel = np.concatenate([J.qrels_label[rows], np.full(int(flip.sum()), label, dtype=J.qrels_label.dtype)])
    order = np.lexsort((-qlabel, owner))  # by group, then label descending
    label_rows = np.where(flip, np.asarray(label, dtype=J.label.dtype), J.label)
    return replace(J, group_query=np.arange(G, dtype=J.group_query.dtype), label=label_rows,
                   qrels_query=owner[order].astype(J.qrels_query.dtype), qrels_label=qlabel[order],
                   n_queries=G, cache={}, source_row=None, subtopics=None, spans=None)


def upper_bounds(J: Judged, ms: list[Measure]) -> np.ndarray:
    """The (groups x measures) values of ``ms`` on ``J`` with every unjudged document of each
    measure's cutoff counted relevant (:func:`unjudged_relevant`): their true upper bound
    (the measures checked by :func:`check_unjudged`)."""
    label = max([m.param("rel") for m in ms] + [1])
    high = np.zeros((J.n_groups, len(ms)), dtype=np.float64)
    by_k: dict = {}
    for i, m in enumerate(ms):
        by_k.setdefault(m.k, []).append(i)
    for k, idx in by_k.items():  # one relabelled table per cutoff
        high[:, idx] = np.asarray(compute(unjudged_relevant(J, k, label), [ms[i] for i in idx]),
                                  dtype=np.float64).reshape(J.n_groups, len(idx))
    return high


def bound_table(J: Judged, ms: list[Measure], unjudged: str, keep: np.ndarray | None = None) -> pd.DataFrame:
    """The long table of ``ms`` on ``J`` with the unjudged documents counted relevant
    (``unjudged="relevant"``: ``value`` is the upper bound), or both bounds
    (``"bounds"``: ``value`` and ``value_low`` today's value, ``value_high`` the upper
    bound); the measures checked by :func:`check_unjudged`; ``keep``: the groups kept
    (:func:`kept_groups`; None: all)."""
    low = compute(J, ms) if unjudged == "bounds" else None
    high = upper_bounds(J, ms)
    names = [str(m) for m in ms]
    groups = J.groups
    if keep is not None:
        groups, high = groups.loc[keep].reset_index(drop=True), high[keep]
        low = None if low is None else np.asarray(low)[keep]
    if low is None:
        return long_table(groups, high, names)
    table = long_table(groups, low, names)
    table["value_low"] = table["value"].to_numpy()
    table["value_high"] = high.reshape(-1)
    return table
