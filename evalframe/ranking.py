"""Rank and judge: turn a cleaned run and golden set into one sorted, judged table.

This is the step every measure reads.  Its output, :class:`Judged`, holds flat
numpy arrays, one entry per retrieved document, sorted by (group, rank), where a
*group* is one (system, question) pair that is scored.  Measures reduce these
arrays per group with ``numpy.bincount``; no Python loop runs per question or
per document.

Conventions (see :mod:`evalframe.measures` for the full list):

- Ranking is by score descending (compared as float64); ties are broken by
  ``doc_id`` descending, byte-wise, as trec_eval does (``ties="doc_id_desc"``).
  ``ties="doc_id_asc"`` breaks them the other way; ``ties="rank"`` orders by the
  run's own ``rank`` column (ties in it by doc_id descending).
- ``missing="zero"`` (default): every question of the golden set counts; a
  question a system did not answer is a group with no documents and scores 0.
  ``missing="drop"``: only the questions a system answered and the golden set
  judges count (trec_eval's default).
- Run questions absent from the golden set are dropped (with a warning).
- ``depth``: only the top ``depth`` documents of each ranking are kept
  (trec_eval's ``-M``).
"""
from __future__ import annotations

__all__ = ["Judged", "judge", "NOT_JUDGED"]

from dataclasses import dataclass, field
from functools import cached_property
from typing import Literal

import numpy as np
import pandas as pd

from .errors import warn as _warn_user
from .errors import (EvalframeInputError, InputProblem, NoRelevantWarning,
                     QuestionsDroppedWarning, QuestionsScoredZeroWarning)

#: Label given to a retrieved document that the golden set does not judge.
NOT_JUDGED = np.int64(-(2 ** 62))

Ties = Literal["doc_id_desc", "doc_id_asc", "rank"]
Missing = Literal["zero", "drop"]


def _natural_order(ids: np.ndarray) -> np.ndarray:
    """Sorted unique ids: numerically when every id is an integer, else as strings."""
    uniq = pd.unique(pd.Series(ids, dtype=object))
    s = pd.Series(uniq, dtype=object)
    num = pd.to_numeric(s, errors="coerce")
    if num.notna().all() and (s.astype(str) == num.astype(np.int64).astype(str)).all():
        return s.iloc[np.argsort(num.to_numpy(), kind="stable")].to_numpy(dtype=object)
    return np.sort(s.to_numpy(dtype=object))


@dataclass(frozen=True, eq=False)
class Judged:
    """A ranked, judged run: flat arrays sorted by (group, rank).

    Attributes
    ----------
    groups : DataFrame
        One row per scored (system, question): ``[system,] query_id``.
    group_query : int array (G,)
        Index of each group's question in the golden-set question list.
    grp, rank, label : arrays (N,)
        Per retrieved document: its group, its 1-based rank, its label
        (:data:`NOT_JUDGED` when the golden set does not judge it).
    n_groups : int
    qrels_query, qrels_label : arrays
        The golden set's labels, sorted by question and then label descending
        (``qrels_query`` indexes the question list); used for ideal rankings and
        for counts of relevant and judged non-relevant documents.
    n_queries : int
    diagnostics : DataFrame
        ``system, check, count, action, examples``.
    source_row : int array (N,) or None
        Position of each row in the run given to :func:`judge` (only with
        ``keep_rows=True``).
    """

    groups: pd.DataFrame
    group_query: np.ndarray
    grp: np.ndarray
    rank: np.ndarray
    label: np.ndarray
    qrels_query: np.ndarray
    qrels_label: np.ndarray
    n_queries: int
    diagnostics: pd.DataFrame = field(repr=False)
    source_row: np.ndarray | None = field(default=None, repr=False)
    cache: dict = field(default_factory=dict, repr=False, compare=False)

    def cached(self, key, make):
        """Per-row intermediates computed once per ranked table (measures share them)."""
        if key not in self.cache:
            self.cache[key] = make()
        return self.cache[key]

    @property
    def n_groups(self) -> int:
        return len(self.group_query)

    def per_group(self, weights: np.ndarray | None = None) -> np.ndarray:
        """Sum ``weights`` (default: 1) over each group's rows."""
        return np.bincount(self.grp, weights=weights, minlength=self.n_groups).astype(np.float64)

    def per_query_qrels(self, mask: np.ndarray) -> np.ndarray:
        """Count golden-set rows satisfying ``mask`` per group (via its question)."""
        counts = np.bincount(self.qrels_query, weights=mask, minlength=self.n_queries)
        return counts[self.group_query]

    @cached_property
    def qrels_irank(self) -> np.ndarray:
        """Rank of each golden-set row in its question's ideal ordering (1-based)."""
        starts = np.searchsorted(self.qrels_query, np.arange(self.n_queries))
        return np.arange(len(self.qrels_query)) - starts[self.qrels_query] + 1

    @cached_property
    def condensed(self) -> "Judged":
        """The judged-only (condensed) list: unjudged documents removed, ranks closed up.

        A document is judged when the golden set gives it a label >= 0 (trec_eval's
        ``-J``; negative labels count as unjudged)."""
        keep = self.label >= 0
        grp = self.grp[keep]
        starts = np.searchsorted(grp, np.arange(self.n_groups))
        rank = (np.arange(len(grp)) - starts[grp] + 1).astype(np.int64)
        return Judged(self.groups, self.group_query, grp, rank, self.label[keep],
                      self.qrels_query, self.qrels_label, self.n_queries, self.diagnostics,
                      None if self.source_row is None else self.source_row[keep])


def _diag_row(system, check, count, action, examples=()) -> dict:
    ex = ", ".join(map(str, list(examples)[:5]))
    return {"system": system, "check": check, "count": int(count), "action": action, "examples": ex}


def judge(run: pd.DataFrame, qrels: pd.DataFrame, *, ties: Ties = "doc_id_desc",
          missing: Missing = "zero", depth: int | None = None, warn: bool = True,
          keep_rows: bool = False) -> Judged:
    """Join a cleaned run with a cleaned golden set, rank it, and label every row.

    Parameters
    ----------
    run, qrels : DataFrame
        Outputs of :func:`evalframe.schema.clean_run` / :func:`clean_qrels`.
    ties, missing, depth
        Conventions; see the module docstring.
    warn : bool
        Issue the structured warnings (they are always in ``diagnostics``).
    keep_rows : bool
        Also return each ranked row's position in ``run`` (``source_row``).

    Returns
    -------
    Judged
    """
    if ties not in ("doc_id_desc", "doc_id_asc", "rank"):
        raise ValueError(f"ties must be 'doc_id_desc', 'doc_id_asc' or 'rank', got {ties!r}")
    if missing not in ("zero", "drop"):
        raise ValueError(f"missing must be 'zero' or 'drop', got {missing!r}")
    if depth is not None and (not isinstance(depth, (int, np.integer)) or isinstance(depth, bool) or depth < 1):
        raise ValueError(f"depth must be an int >= 1 or None, got {depth!r}")
    if ties == "rank" and ("rank" not in run or not bool(np.isfinite(run["rank"].to_numpy(dtype=float, na_value=np.nan)).all())):
        raise EvalframeInputError("run", [InputProblem(
            "ties='rank' needs a numeric 'rank' column, and the run has none (or it has missing values)",
            "add a rank column, or use ties='doc_id_desc' (trec_eval's order)")])

    has_system = "system" in run
    q_codes, q_uniq = pd.factorize(qrels["query_id"], sort=False)
    queries = _natural_order(np.asarray(q_uniq, dtype=object))
    nq = len(queries)
    qindex = pd.Index(queries)

    # --- golden set: sorted by (question, label descending)
    qq = qindex.get_indexer(np.asarray(q_uniq, dtype=object))[q_codes]
    ql = qrels["relevance"].to_numpy(dtype=np.int64)
    order = np.lexsort((-ql, qq))
    qq, ql = qq[order], ql[order]
    qdocs = qrels["doc_id"].iloc[order]

    # --- systems and questions of the run, factorised once (cheap on Arrow strings)
    if has_system:
        sys_codes, systems = pd.factorize(run["system"], sort=False)
        systems = np.asarray(systems, dtype=object)
    else:
        sys_codes, systems = np.zeros(len(run), dtype=np.int64), np.array([None], dtype=object)
    ns = len(systems)

    rq_codes, rq_uniq = pd.factorize(run["query_id"], sort=False)
    rq_uniq = np.asarray(rq_uniq, dtype=object)
    rq = qindex.get_indexer(rq_uniq)[rq_codes]
    diag: list[dict] = []
    unknown = rq < 0
    if unknown.all():
        raise EvalframeInputError("run", [InputProblem(
            "the run and the golden set share no question id "
            f"(run ids e.g. {list(rq_uniq[:3])}, golden-set ids e.g. {list(queries[:3])})",
            "check that both tables use the same question ids (ids are compared as strings)")])
    any_unknown = bool(unknown.any())
    if any_unknown:
        for s in range(ns):
            m = unknown & (sys_codes == s)
            if m.any():
                dropped = rq_uniq[np.unique(rq_codes[m])]
                diag.append(_diag_row(systems[s], "run_questions_not_in_golden_set", len(dropped),
                                      "dropped", dropped))

    # --- groups
    answered = np.zeros((ns, nq), dtype=bool)
    answered[sys_codes[~unknown], rq[~unknown]] = True
    if missing == "zero":
        in_group = np.ones((ns, nq), dtype=bool)
    else:
        in_group = answered
    for s in range(ns):
        if not answered[s].any():
            diag.append(_diag_row(systems[s], "system_without_golden_questions", 1,
                                  "scored 0 on every question" if missing == "zero" else "dropped",
                                  [systems[s]]))
        miss = np.flatnonzero(~answered[s])
        if len(miss):
            diag.append(_diag_row(systems[s], "golden_questions_not_in_run", len(miss),
                                  "scored 0" if missing == "zero" else "dropped", queries[miss]))
    gid = np.full(ns * nq, -1, dtype=np.int64)
    flat = np.flatnonzero(in_group.ravel())
    gid[flat] = np.arange(len(flat))
    g_sys, g_q = np.divmod(flat, nq)

    # --- judge each row: look its (question, doc) up in the golden set.  Doc codes
    # follow byte-wise doc_id order (used to break score ties).
    keep = ~unknown if any_unknown else slice(None)
    d_codes, d_uniq = pd.factorize(run["doc_id"], sort=False)
    d_uniq = np.asarray(d_uniq, dtype=object)
    nd = max(len(d_uniq), 1)
    rcode = d_codes[keep]
    qd_codes, qd_uniq = pd.factorize(qdocs, sort=False)
    qcode = pd.Index(d_uniq).get_indexer(np.asarray(qd_uniq, dtype=object))[qd_codes]  # -1: never retrieved
    rkey = rq[keep].astype(np.int64) * nd + rcode
    retrieved = np.flatnonzero(qcode >= 0)  # judged documents some system retrieved
    qkey = qq[retrieved].astype(np.int64) * nd + qcode[retrieved]
    qorder = np.argsort(qkey, kind="stable")
    qkey_sorted = qkey[qorder]
    if len(qkey_sorted):
        pos = np.minimum(np.searchsorted(qkey_sorted, rkey), len(qkey_sorted) - 1)
        hit = qkey_sorted[pos] == rkey
        label = np.where(hit, ql[retrieved][qorder][pos], NOT_JUDGED)
        del pos, hit  # large temporaries: free them before the sort
    else:
        label = np.full(len(rkey), NOT_JUDGED, dtype=np.int64)

    del rkey
    grp = gid[sys_codes[keep].astype(np.int64) * nq + rq[keep]]
    del sys_codes, rq, rq_codes
    score = run["score"].to_numpy(dtype=np.float64)[keep]
    if ties == "rank":
        primary = run["rank"].to_numpy(dtype=np.float64)[keep]
    else:
        primary = -score
    def tiebreak(rows: np.ndarray) -> np.ndarray:
        """Byte-wise doc_id order of the given rows (ascending or descending)."""
        codes = rcode[rows]
        u, inv = np.unique(codes, return_inverse=True)
        pos = np.argsort(np.argsort(d_uniq[u].astype(str), kind="stable"))[inv]
        return pos if ties == "doc_id_asc" else -pos

    order = _order_rows(grp, primary, tiebreak)
    del primary
    grp, label = grp[order], label[order]
    n_groups = len(flat)
    starts = np.searchsorted(grp, np.arange(n_groups))
    rank = np.arange(len(grp)) - starts[grp] + 1

    if ties != "rank":
        s_sorted = score[order]
        tied = (np.diff(s_sorted) == 0) & (np.diff(grp) == 0)
        if tied.any():
            tgrp = grp[_both_sides(tied)]  # every row sharing its score with another
            for s in range(ns):
                mine = g_sys[tgrp] == s
                n_tied = int(np.count_nonzero(mine))
                if n_tied:
                    diag.append(_diag_row(systems[s], "score_ties", n_tied,
                                          f"ordered by doc_id {'descending' if ties == 'doc_id_desc' else 'ascending'}",
                                          queries[np.unique(g_q[tgrp[mine]])]))
    source_row = None
    if keep_rows:
        source_row = (np.flatnonzero(~unknown) if any_unknown else np.arange(len(unknown)))[order]
    if depth is not None:
        cut = rank <= depth
        grp, label, rank = grp[cut], label[cut], rank[cut]
        source_row = None if source_row is None else source_row[cut]

    norel = np.bincount(qq, weights=ql >= 1, minlength=nq) == 0
    if norel.any():
        diag.append(_diag_row(None, "golden_questions_without_relevant", int(norel.sum()),
                              "counted (most measures score 0)", queries[norel]))

    groups = pd.DataFrame({"query_id": queries[g_q].astype(str)})
    if has_system:
        groups.insert(0, "system", systems[g_sys].astype(str))
    diagnostics = pd.DataFrame(diag, columns=["system", "check", "count", "action", "examples"])
    if warn:
        _warn(diagnostics)
    return Judged(groups, g_q, grp.astype(np.int64), rank.astype(np.int64), label.astype(np.int64),
                  qq.astype(np.int64), ql, nq, diagnostics, source_row)


def _both_sides(pairs: np.ndarray) -> np.ndarray:
    """Rows i and i + 1 of every adjacent pair marked True in ``pairs`` (length n - 1)."""
    rows = np.zeros(len(pairs) + 1, dtype=bool)
    rows[1:] |= pairs
    rows[:-1] |= pairs
    return rows


def _order_rows(grp: np.ndarray, primary: np.ndarray, tiebreak) -> np.ndarray:
    """Permutation sorting rows by (grp, primary, tiebreak), all ascending.

    ``tiebreak(rows)`` returns the tie-breaking key of the given rows; it is
    called only for rows whose (grp, primary) is tied with another row's.  Runs
    usually arrive grouped by question and sorted by score: that is detected in
    O(n) and only whole groups move.  Otherwise two stable argsorts (primary,
    then group).  Either way the tie-breaking key is sorted only inside blocks
    of ties.
    """
    n = len(grp)
    if n == 0:
        return np.arange(0)
    same_g = grp[1:] == grp[:-1]
    starts = np.flatnonzero(np.concatenate(([True], ~same_g)))
    if np.all(~same_g | (primary[1:] >= primary[:-1])) and len(starts) == len(np.unique(grp[starts])):
        # Grouped and sorted within groups: only the blocks move.
        block_order = np.argsort(grp[starts], kind="stable")
        lengths = np.diff(np.append(starts, n))[block_order]
        first = starts[block_order]
        offsets = np.cumsum(lengths) - lengths
        order = np.repeat(first - offsets, lengths) + np.arange(n)
    else:
        order = np.argsort(primary, kind="stable")
        gkey = grp[order]
        if gkey.max(initial=0) < 2 ** 16:
            gkey = gkey.astype(np.uint16)  # radix sort
        order = order[np.argsort(gkey, kind="stable")]
    g_s, p_s = grp[order], primary[order]
    tied = (g_s[1:] == g_s[:-1]) & (p_s[1:] == p_s[:-1])
    if tied.any():
        idx = np.flatnonzero(_both_sides(tied))
        block = np.cumsum(np.concatenate(([True], ~tied)))[idx]
        sub = np.lexsort((tiebreak(order[idx]), block))
        order[idx] = order[idx][sub]
    return order


_WARNINGS = {
    "system_without_golden_questions": QuestionsDroppedWarning,
    "run_questions_not_in_golden_set": QuestionsDroppedWarning,
    "golden_questions_not_in_run": QuestionsScoredZeroWarning,
    "golden_questions_without_relevant": NoRelevantWarning,
}


def _warn(diagnostics: pd.DataFrame) -> None:
    for row in diagnostics.itertuples(index=False):
        cat = _WARNINGS.get(row.check)
        if cat is None:
            continue
        if row.check == "golden_questions_not_in_run" and row.action == "dropped":
            continue  # missing="drop" asked for exactly this
        if row.check == "system_without_golden_questions":
            _warn_user(f"system {row.system!r} answers none of the golden set's questions: "
                          f"{row.action} (check its question ids)", cat)
            continue
        who = f"system {row.system!r}: " if row.system is not None else ""
        msg = {
            "run_questions_not_in_golden_set": f"{who}{row.count} run questions are not in the golden set and were dropped (e.g. {row.examples})",
            "golden_questions_not_in_run": f"{who}{row.count} golden-set questions have no retrieved documents and score 0 (e.g. {row.examples}); pass missing='drop' to leave them out, as trec_eval does without -c",
            "golden_questions_without_relevant": f"{row.count} golden-set questions have no relevant document (label >= 1), so recall-type measures score 0 on them (e.g. {row.examples})",
        }[row.check]
        _warn_user(msg, cat)
