"""A run whose document ids are foreign to the golden set (another id scheme): noted while
judging, refused with examples of both, in memory and by the engines that evaluate in parts.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import EvalframeInputError, InputProblem
from .._diagnostic_records import Check, HAS_JUDGED
from .._judged import Judged
from .._id_codes import CheckedRun
from ..schema import ids_to_str


#: The run and the golden set are said to use different document ids (an input error) only
#: when the run holds at least FOREIGN_MIN_RUN_DOCS distinct documents and the golden set
#: FOREIGN_MIN_GOLDEN_DOCS, none shared: a real system retrieving that many documents finds
#: some judged one (below, a system with no judged document is a warning).
FOREIGN_MIN_RUN_DOCS = 100
#: See :data:`FOREIGN_MIN_RUN_DOCS`.
FOREIGN_MIN_GOLDEN_DOCS = 20


def note_foreign_ids(J: Judged, run: CheckedRun, qrels) -> Judged:
    """``J``, noting in its cache when no system's retrieved document is judged and none
    appears anywhere in the golden set, the run holding at least :data:`FOREIGN_MIN_RUN_DOCS`
    documents and the golden set :data:`FOREIGN_MIN_GOLDEN_DOCS` (checked only when no system
    has a judged document: one membership test)."""
    unjudged = sum(r.check is Check.SYSTEM_WITHOUT_JUDGED_DOCUMENTS and r.action != HAS_JUDGED for r in J.records)
    if not unjudged:  # the usual case, decided without the groups' table
        return J
    if unjudged < (J.groups["system"].nunique() if "system" in J.groups else 1):
        return J
    import pyarrow as pa
    from .. import _arrow_compute as pc
    docs = run.doc.combine_chunks() if isinstance(run.doc, pa.ChunkedArray) else run.doc
    golden = qrels.doc.combine_chunks() if isinstance(qrels.doc, pa.ChunkedArray) else qrels.doc
    golden_docs = pc.unique(golden.cast(docs.type))
    if len(golden_docs) < FOREIGN_MIN_GOLDEN_DOCS or len(pc.unique(docs)) < FOREIGN_MIN_RUN_DOCS:
        return J  # too few documents to tell a different id scheme from a system that found nothing
    if pc.any(pc.is_in(docs, value_set=golden_docs)).as_py():
        return J
    J.cache["foreign_ids"] = (pc.unique(docs)[:3].to_pylist(), pc.unique(golden)[:3].to_pylist())
    return J


def refuse_foreign_ids(J: Judged) -> None:
    """An input error when :func:`note_foreign_ids` found that the run and the golden set
    share no document: the two tables speak of different documents."""
    if "foreign_ids" not in J.cache:
        return
    _foreign(*J.cache["foreign_ids"])


def every_system_unjudged(records, systems: list) -> bool:
    """Whether merged records say that no system retrieves a judged document (every one has a
    ``system_without_judged_documents`` record): when an engine that evaluated in parts looks
    for :func:`refuse_foreign_run`'s error (the in-memory engine checks it on the whole run)."""
    flagged = {r.system for r in records if r.check is Check.SYSTEM_WITHOUT_JUDGED_DOCUMENTS
               and r.action != HAS_JUDGED}
    return bool(systems) and all(s_ in flagged for s_ in systems)


def doc_summary(doc_ids: pd.Series, golden_docs) -> tuple[bool, list]:
    """What :func:`refuse_foreign_run` needs of one piece of a run: whether any of its
    document ids (cleaned as ``ids_to_str`` cleans them) is one of
    ``golden_docs`` (an :func:`~evalframe._diagnostic_checks.id_set`), and its first
    ``FOREIGN_MIN_RUN_DOCS`` distinct ids in order."""
    import pyarrow as pa
    from .. import _arrow_compute as pc
    ids = pa.array(ids_to_str(doc_ids.reset_index(drop=True)).to_numpy(dtype=object), pa.large_string())
    hit = bool(len(ids)) and pc.any(pc.is_in(ids, value_set=golden_docs)).as_py()
    return bool(hit), pc.unique(ids)[:FOREIGN_MIN_RUN_DOCS].to_pylist()


def refuse_foreign_run(summaries, golden_doc_ids: pd.Series) -> None:
    """The input error of :func:`refuse_foreign_ids` for an engine that evaluated a run in
    parts: ``summaries`` are :func:`doc_summary` of the run's pieces, in the run's order;
    the same thresholds (``FOREIGN_MIN_RUN_DOCS``, ``FOREIGN_MIN_GOLDEN_DOCS``) and
    the same examples as in memory."""
    golden = pd.unique(ids_to_str(pd.Series(golden_doc_ids).reset_index(drop=True)).to_numpy(dtype=object))
    summaries = list(summaries)
    if len(golden) < FOREIGN_MIN_GOLDEN_DOCS or any(hit for hit, _ in summaries):
        return
    docs = pd.unique(np.array([d for _, first in summaries for d in first], dtype=object))
    if len(docs) < FOREIGN_MIN_RUN_DOCS:
        return  # each piece gave all its distinct ids or a hundred: fewer here are all of them
    _foreign(list(docs[:3]), list(golden[:3]))


def _foreign(run_ex: list, golden_ex: list) -> None:
    raise EvalframeInputError("run", [InputProblem(
        f"no retrieved document of any system is a document of the golden set (run documents e.g. {run_ex}, "
        f"golden-set documents e.g. {golden_ex})",
        "check that both tables use the same document ids; a re-chunked corpus needs a span golden set "
        "and chunks= (evalframe.spans) or a chunk -> page map (rollup=)")])
