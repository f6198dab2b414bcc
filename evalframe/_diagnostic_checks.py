"""The ranking step's checks: one vectorised function per :class:`Check`.

:func:`check_records` runs the checks of every :func:`evalframe.ranking.judge` call (run
questions absent from the golden set, systems without golden-set questions, golden-set
questions a system does not answer, score ties, golden-set questions without a relevant
label); :func:`unjudged_systems` and :func:`systems_sharing_no_document` find systems the
golden set does not judge (with :func:`clear_judged_elsewhere`, :func:`systems_judged`
and :func:`id_set` for engines that see the golden set in parts);
:func:`shallow_rankings` finds rankings shorter than a cutoff.  Each finding is a
:class:`Diagnostic` record (``evalframe._diagnostic_records``).
"""
from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Callable

import numpy as np
import pyarrow as pa

from . import _arrow_compute as pc
from ._arrow_numpy import arrow_of, distinct
from ._diagnostic_records import HAS_JUDGED, MAX_EXAMPLES, Check, Diagnostic, warn_diagnostics
from ._id_codes import CheckedQrels, CheckedRun, Codes
from ._id_order import DistinctIds, int64_ids, natural_order_rule, natural_permutation
from ._judged import Judged, Missing, Ties, group_starts

if TYPE_CHECKING:
    import pandas as pd


#: Two systems are said to share no judged document only when each retrieves at least
#: this many judged (question, document) pairs: real systems over one corpus share
#: many long before that.
DISJOINT_MIN_JUDGED = 20


#: Key of ``Judged.cache`` holding (systems, each judged row's system, its document's
#: fingerprint): what :func:`systems_sharing_no_document` reads.
JUDGED_DOCS = "judged_docs"


def unjudged_systems(systems: np.ndarray, row_sys: np.ndarray, judged_sys: np.ndarray, run: CheckedRun,
                     kept: np.ndarray | None, qrels: CheckedQrels) -> list[Diagnostic]:
    """A ``system_without_judged_documents`` record per system with rows of golden-set
    questions none of whose documents the golden set judges, for those questions or any
    other (``row_sys``: each kept row's system; ``kept``: the run rows of golden-set
    questions, None: all), and a marker record (:data:`HAS_JUDGED`, dropped from every
    table) per other system, so that a merge of partitions keeps the record only for
    systems judged in none."""
    ns = len(systems)
    if ns == 1:  # one system: the counts are the lengths (a count of millions of rows holds the GIL)
        rows, judged = np.array([len(row_sys)]), np.array([len(judged_sys)])
    else:
        rows, judged = np.bincount(row_sys, minlength=ns), np.bincount(judged_sys, minlength=ns)
    out = []
    for s in np.flatnonzero(rows > 0):
        if not judged[s]:  # no judged pair: is any of its documents judged for another question?
            mine = np.flatnonzero(row_sys == s)
            src = mine if kept is None else kept[mine]
            fp = run.doc_fingerprint[src]
            hit = np.flatnonzero(np.isin(fp, qrels.doc_fingerprint))
            if len(hit):
                golden = pa.chunked_array([qrels.doc.combine_chunks()]).combine_chunks()
                docs = pc.take(run.doc, arrow_of(src[hit]))
                docs = docs.combine_chunks() if isinstance(docs, pa.ChunkedArray) else docs
                judged[s] = int(pc.sum(pc.is_in(pc.cast(docs, golden.type), value_set=golden)).as_py() or 0)
        out.append(Diagnostic(systems[s], Check.SYSTEM_WITHOUT_JUDGED_DOCUMENTS, 0 if judged[s] else int(rows[s]),
                              HAS_JUDGED if judged[s] else
                              "none of its retrieved documents is judged: every measure is 0"))
    return out


def clear_judged_elsewhere(records: list[Diagnostic], find_judged: Callable[[list], set]) -> list[Diagnostic]:
    """``records`` with the ``system_without_judged_documents`` record of each system
    ``find_judged(flagged systems)`` names turned into the marker :data:`HAS_JUDGED` (an
    engine that sees a partition's labels asks the whole golden set; ``find_judged`` is
    called only when a system is flagged)."""
    flagged = [r.system for r in records if r.check is Check.SYSTEM_WITHOUT_JUDGED_DOCUMENTS
               and r.action != HAS_JUDGED]
    if not flagged:
        return records
    judged = find_judged(flagged)
    return [Diagnostic(r.system, r.check, 0, HAS_JUDGED) if r.check is Check.SYSTEM_WITHOUT_JUDGED_DOCUMENTS
            and r.system in judged else r for r in records]


def id_set(ids) -> "pa.Array":
    """Distinct ids (a pandas Index or Series of strings) as the Arrow value set
    :func:`systems_judged` probes: built once by a caller that probes many partitions."""
    import pandas as pd
    import pyarrow as pa
    return pa.array(pd.unique(np.asarray(ids, dtype=object)), pa.large_string())


def systems_judged(part: pd.DataFrame, flagged: list, questions, docs) -> set:
    """The ``flagged`` systems of a run partition that retrieve, for a golden-set
    question, a document the golden set judges (for any question); ``questions`` and
    ``docs``: :func:`id_set` value sets (or a pandas Index of strings), probed by Arrow's
    hash (no Python string per row or per id)."""
    import pyarrow as pa

    from .schema import ids_to_str
    part = part.reset_index() if "query_id" not in part.columns else part
    has_system = "system" in part.columns
    if has_system:
        part = part[part["system"].isin(flagged)]

    def among(column: pd.Series, values) -> np.ndarray:
        values = values if isinstance(values, pa.Array) else id_set(values)
        arr = pa.array(ids_to_str(column).to_numpy(dtype=object) if not len(column) else ids_to_str(column))
        arr = arr.combine_chunks() if isinstance(arr, pa.ChunkedArray) else arr
        return np.asarray(pc.is_in(arr.cast(pa.large_string()), value_set=values).to_numpy(zero_copy_only=False),
                          dtype=bool)
    hit = among(part["query_id"], questions) & among(part["doc_id"], docs)
    if not has_system:
        return {None} if hit.any() else set()
    return set(part["system"].to_numpy()[hit])


def systems_sharing_no_document(J: "Judged") -> list[Diagnostic]:
    """``systems_share_no_judged_documents`` records: systems that each retrieve at least
    :data:`DISJOINT_MIN_JUDGED` judged (question, document) pairs, none of whose documents
    another such system retrieves (all of a system's judged documents are needed at
    once: the in-memory engine checks it)."""
    if JUDGED_DOCS not in J.cache:
        return []
    systems, judged_sys, judged_doc, judged_q = J.cache[JUDGED_DOCS]
    judged = np.bincount(judged_sys, minlength=len(systems))
    big = np.flatnonzero(judged >= DISJOINT_MIN_JUDGED)
    if len(big) < 2:
        return []
    out = []
    for s in big:
        apart = []
        for t in big:
            if t == s:
                continue
            a, b = judged_sys == s, judged_sys == t
            common = np.intersect1d(judged_q[a], judged_q[b])  # on the questions both answer with judged documents
            a &= np.isin(judged_q, common)
            b &= np.isin(judged_q, common)
            if a.sum() >= DISJOINT_MIN_JUDGED and b.sum() >= DISJOINT_MIN_JUDGED and not np.isin(
                    judged_doc[a], judged_doc[b]).any():
                apart.append(str(systems[t]))
        if apart:
            out.append(Diagnostic(systems[s], Check.SYSTEMS_SHARE_NO_JUDGED_DOCUMENTS, int(judged[s]),
                                  "retrieves judged documents, none of which another system retrieves",
                                  tuple(apart[:MAX_EXAMPLES])))
    return out


def check_records(run_queries: Codes, systems: np.ndarray, sys_codes: np.ndarray, rq: np.ndarray,
                 queries: np.ndarray, answered: np.ndarray, g_sys: np.ndarray, g_q: np.ndarray,
                 tied_groups: np.ndarray, qq: np.ndarray, ql: np.ndarray, *, rel: int, ties: Ties,
                 missing: Missing) -> list[Diagnostic]:
    """Every check's records, in :class:`Check` order."""
    return (_run_questions_not_in_golden_set(run_queries, systems, sys_codes, rq)
            + _systems_without_golden_questions(systems, answered, missing)
            + _golden_questions_not_in_run(systems, queries, answered, missing)
            + _score_ties(systems, queries, g_sys, g_q, tied_groups, ties)
            + _golden_questions_without_relevant(queries, qq, ql, rel))


def _per_system(check: Check, action: str, systems: np.ndarray, sys_idx: np.ndarray,
                key: np.ndarray, names, counts: np.ndarray | None = None, *,
                numeric: bool | None) -> list[Diagnostic]:
    """One record per system from distinct (system, item) pairs: the count of
    items (or ``counts``) and the names of the first items in ``key`` order (the
    natural order, numeric when ``numeric``: then also the first byte-wise)."""
    if not len(sys_idx):
        return []
    order = np.lexsort((key, sys_idx))
    n_items = np.bincount(sys_idx, minlength=len(systems))
    starts = np.cumsum(n_items) - n_items
    shown = order[np.arange(len(order)) - starts[sys_idx[order]] < MAX_EXAMPLES]
    shown_sys = sys_idx[shown]
    counts = n_items if counts is None else counts
    return [Diagnostic(systems[s], check, int(counts[s]), action,
                       tuple(str(x) for x in names[shown[shown_sys == s]]), numeric,
                       _bytewise_first(names[order[starts[s]:starts[s] + n_items[s]]]) if numeric else ())
            for s in np.flatnonzero(n_items)]  # one record per system, at most 5 examples each


def _bytewise_first(names) -> tuple[str, ...]:
    """The first :data:`MAX_EXAMPLES` of some distinct ids (``DistinctIds``, an Arrow or an
    object array) byte-wise, found by Arrow's top-k (no sort of them all)."""
    arr = names.arrow if isinstance(names, DistinctIds) else names
    arr = arr if isinstance(arr, (pa.Array, pa.ChunkedArray)) else pa.array(np.asarray(arr, dtype=object), pa.large_string())
    if len(arr) > MAX_EXAMPLES:
        arr = pc.take(arr, pc.select_k_unstable(arr, k=MAX_EXAMPLES, sort_keys=[("dummy", "ascending")]))
    return tuple(sorted(str(x) for x in arr.to_pylist()))


def _run_questions_not_in_golden_set(run_queries: Codes, systems, sys_codes, rq) -> list[Diagnostic]:
    unknown = np.flatnonzero(rq < 0)
    if not len(unknown):
        return []
    nu = len(run_queries)
    pairs = distinct(sys_codes[unknown].astype(np.int64) * nu + run_queries.codes[unknown])
    s, q = np.divmod(pairs, nu)
    dropped = distinct(q)
    natural = np.zeros(nu, dtype=np.int64)  # each dropped question's position in natural order
    rule = natural_permutation(pc.take(run_queries.dictionary, arrow_of(dropped)))  # Arrow: no Python strings
    if rule is not None:
        perm, numeric = rule
        natural[dropped[perm]] = np.arange(len(dropped))
        names = DistinctIds(run_queries.dictionary)
    else:  # the general rule, on Python objects (integers beyond int64)
        import pandas as pd
        names = run_queries.names
        sorted_ids, numeric = natural_order_rule(names[dropped])
        natural[dropped] = pd.Index(sorted_ids).get_indexer(names[dropped])
    return _per_system(Check.RUN_QUESTIONS_NOT_IN_GOLDEN_SET, "dropped", systems, s, natural[q], names[q],
                       numeric=numeric)


def _systems_without_golden_questions(systems, answered, missing) -> list[Diagnostic]:
    action = "scored 0 on every question" if missing == "zero" else "dropped"
    return [Diagnostic(systems[s], Check.SYSTEM_WITHOUT_GOLDEN_QUESTIONS, 1, action, (str(systems[s]),))
            for s in np.flatnonzero(~answered.any(axis=1))]


def _golden_questions_not_in_run(systems, queries, answered, missing) -> list[Diagnostic]:
    s, q = np.nonzero(~answered)
    return _per_system(Check.GOLDEN_QUESTIONS_NOT_IN_RUN, "scored 0" if missing == "zero" else "dropped",
                       systems, s, q, queries[q], numeric=queries.numeric)


def _score_ties(systems, queries, g_sys, g_q, tied_groups, ties) -> list[Diagnostic]:
    if not len(tied_groups):
        return []
    rows = np.bincount(g_sys[tied_groups], minlength=len(systems))
    u = distinct(tied_groups)
    action = f"ordered by doc_id {'descending' if ties == 'doc_id_desc' else 'ascending'}"
    return _per_system(Check.SCORE_TIES, action, systems, g_sys[u], g_q[u], queries[g_q[u]], counts=rows,
                       numeric=queries.numeric)


def _golden_questions_without_relevant(queries, qq, ql, rel) -> list[Diagnostic]:
    norel = np.bincount(qq, weights=ql >= rel, minlength=len(queries)) == 0
    if not norel.any():
        return []
    return [Diagnostic(None, Check.GOLDEN_QUESTIONS_WITHOUT_RELEVANT, int(norel.sum()),
                       "counted (most measures score 0)",
                       tuple(str(x) for x in queries[norel][:MAX_EXAMPLES]), queries.numeric,
                       _bytewise_first(queries[norel]) if queries.numeric else ())]


def _first_examples(ids: pd.Series) -> Diagnostic:
    """The first :data:`MAX_EXAMPLES` of some of one system's group question ids
    (``ids``, in group order) in their natural order, as a record's ``examples``,
    ``numeric`` and ``bytewise`` (the other fields empty).

    Groups are in natural question order (:func:`judge`), so the first ids are the
    answer and only they become Python strings; unless all of ``ids`` are integers
    out of numeric order (the golden set's other ids made its order byte-wise):
    then they are sorted."""
    try:
        arr = pa.array(ids)
        numeric = int64_ids(arr)
        in_order = not numeric or bool((np.diff(pc.cast(arr, pa.int64()).to_numpy()) > 0).all())
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        arr, in_order = None, False
    if in_order:
        first = tuple(str(x) for x in ids.iloc[:MAX_EXAMPLES].to_numpy(dtype=object))
    else:
        natural, numeric = natural_order_rule(ids.to_numpy(dtype=object))
        first = tuple(str(x) for x in natural[:MAX_EXAMPLES])
    bytewise = _bytewise_first(arr if arr is not None else ids.to_numpy(dtype=object)) if numeric else ()
    return Diagnostic(None, Check.SHALLOW_RANKINGS, 0, "", first, numeric, bytewise)


def shallow_rankings(J: Judged, k: int, *, warn: bool = True) -> list[Diagnostic]:
    """Records of the rankings that hold fewer than ``k`` documents (but at least one).

    A measure at cutoff k reads such a ranking whole: R@100 of a 20-deep ranking is its
    R@20.  One :attr:`~evalframe._diagnostic_records.Check.SHALLOW_RANKINGS` record per system (count: questions;
    examples: questions in natural order), and a
    :class:`~evalframe.errors.ShallowRankingWarning` each when ``warn``.
    """
    import pandas as pd
    n = np.diff(np.append(group_starts(J.grp, J.n_groups), len(J.grp)))  # rows sorted by group
    short = np.flatnonzero((n > 0) & (n < k))
    if not len(short):
        return []
    if "system" in J.groups:
        sys_idx, systems = pd.factorize(J.groups["system"].to_numpy(dtype=object))
        systems = np.asarray(systems, dtype=object)
    else:
        systems, sys_idx = np.array([None], dtype=object), np.zeros(J.n_groups, np.int64)
    query_ids = J.groups["query_id"]
    records = []
    for s in distinct(sys_idx[short]):  # one record per system
        rows = short[sys_idx[short] == s]
        action = (f"fewer than {k} retrieved documents: measured on what was returned, so a measure at "
                  f"k = {k} equals its value at the ranking's length")  # the same in every partition
        first = _first_examples(query_ids.iloc[rows])
        records.append(replace(first, system=systems[s], count=len(rows), action=action))
    if warn:
        warn_diagnostics(records, 1)
    return records
