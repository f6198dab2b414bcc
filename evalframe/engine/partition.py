"""What every engine that cuts an input into partitions of whole questions shares (the
cutting itself, stretches and buckets of question ids, is :mod:`~evalframe.engine.cutting`):
one index of a golden set held whole that hands each partition its questions' rows, one
:class:`Plan` (what every part is evaluated with), one step that evaluates a partition
(:func:`evaluate_part`, a :class:`PartResult`), one that merges the partitions' diagnostics
(:func:`merge`) and the driver's last steps (:func:`finish`).
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable, Iterable, Sequence

import numpy as np
import pandas as pd
import pyarrow as pa

from ..errors import EvalframeInputError, InputProblem
from ..measures import Measure, compute
from .._diagnostic_checks import clear_judged_elsewhere, id_set
from .._diagnostic_records import Check, Diagnostic, conflicts_record, merge_diagnostics, warn_diagnostics
from .._id_order import str_column
from ..rollup import UNIT, Rollup
from .._conflicts import Conflicts, ResolvedConflicts, merge_conflicts
from .._id_codes import CheckedQrels, RowsByCode
from ..schema import check_qrels_part, ids_to_str
from ..io import read_checked_qrels, read_checked_run, read_golden_set
from .conventions import Conventions
from .bounds import upper_bounds
from .chunkings import (Chunkings, chunkings_record, judge_chunked, merge_chunkings, sizes_compared, sizes_record, token_counts)
from .foreign import every_system_unjudged, refuse_foreign_run
from .memory import prepare
from .steps import kept_groups, no_relevant_records, long_table, with_shallow_rankings


def held_golden_set(qrels, columns=None, conflicts: Conflicts = "error") -> "tuple[pd.DataFrame, ResolvedConflicts | None]":
    """A golden set held whole by a driver (a DataFrame, a path, Arrow, a checked golden
    set...): checked, its conflicting labels resolved once (:func:`evalframe.read_golden_set`),
    and that resolution (None: none), reported once by the driver rather than by each partition."""
    golden = read_golden_set(qrels, columns=columns, conflicts=conflicts)
    if isinstance(golden, pd.DataFrame):  # a span golden set
        return golden, None
    frame = golden.frame if isinstance(qrels, (pd.DataFrame, CheckedQrels)) else golden.table
    return frame, golden.conflicts


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
        self.by_question = RowsByCode(codes, len(ids))
        self.seen = np.zeros(len(ids), dtype=bool)
        self._arrow_ids: pa.Array | None = None  # ``ids`` as Arrow strings, made on the first lookup

    def __len__(self) -> int:
        return len(self.ids)

    def lookup(self, qids) -> np.ndarray:
        """The position of each question id (strings, cleaned) in ``ids`` (-1: not in the
        golden set), found by Arrow's hash (no Python string per id when ``qids`` are Arrow
        or Arrow-backed strings)."""
        from .. import _arrow_compute as pc
        if self._arrow_ids is None:
            self._arrow_ids = pa.array(np.asarray(self.ids, dtype=object), pa.large_string())
        if isinstance(qids, pd.Series):
            qids = qids.array
        try:
            found = pc.index_in(pa.array(qids, pa.large_string()), value_set=self._arrow_ids)
        except (pa.ArrowInvalid, pa.ArrowTypeError):  # not all strings (never after ids_to_str)
            return self.ids.get_indexer(qids)
        return found.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64)

    def positions(self, questions) -> np.ndarray:
        """The rows (positions in ``frame``, ascending) of the questions ``questions``."""
        return self.by_question.positions(questions)

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


@dataclass(frozen=True)
class Plan:
    """What every part of one evaluation is evaluated with, the same on every engine and
    sent whole to every worker (pickled; the measures ``evalframe.measures.custom.shipped``
    by the engines that leave the process).

    Attributes
    ----------
    ms : the measures
    conv : the conventions, ``columns`` applied and ``conflicts`` resolved by the engine
        before the parts are cut (a part's own rows may still be resolved: ``qrels_rows``)
    systems : every system of the run in order of first appearance (``[None]``: a run
        without a system column): a part without some system's rows still reports it
    shallow : the measures whose deepest cutoff the rankings are checked against (None: ``ms``)
    chunkings : ``chunks=`` and a span golden set resolved once
        (:func:`~evalframe.engine.chunkings.resolve_chunkings`)
    unjudged : ``None``, ``"relevant"`` (the upper bounds as values) or ``"bounds"``
    rollup : a chunk -> page map (:func:`evalframe.rollup.rollup_map`) applied in each part
    """

    ms: list
    conv: Conventions
    systems: list
    shallow: list | None = None
    chunkings: Chunkings | None = None
    unjudged: str | None = None
    rollup: Rollup | None = None

    def but(self, **changes) -> "Plan":
        """This plan with ``changes``."""
        return replace(self, **changes)


@dataclass
class PartResult:
    """What one partition of whole questions gives back.

    Attributes
    ----------
    groups : its (system, question) groups, ``[system,] query_id`` (its questions, every
        system of the run)
    values : float64 array (groups, measures), each group's values of the measures ``names``
    names : the measures' names
    records : its diagnostics records (judged without warning)
    silent : the systems that answer none of its golden-set questions
    conflicts : its golden-set rows' conflicting labels resolved here (None: none, or
        resolved before, on the whole golden set)
    integer_questions : whether every golden-set question id of it is an integer (the
        order of the merged examples; None: it has no golden-set question)
    tokens : per system, how many retrieved rows hold each token count
        (:func:`~evalframe.engine.chunkings.token_counts`; the chunk sizes are compared on the sums)
    chunkings : how many chunkings its systems use (1 without chunk offsets)
    unit : the unit column of a rolled-up table (None: none)
    extra : what an engine adds for its own checks (the Dask engine: the partition's
        question fingerprints, systems and golden-set questions)
    high : with ``unjudged="bounds"``, the upper bounds (groups x measures) beside ``values``
        (today's values, the lower bounds); the table then has ``value_low`` and ``value_high``
    """

    groups: pd.DataFrame
    values: np.ndarray
    names: list
    records: list
    silent: list
    conflicts: ResolvedConflicts | None = None
    integer_questions: bool | None = None
    tokens: dict = field(default_factory=dict)
    chunkings: int = 1
    unit: str | None = None
    extra: dict = field(default_factory=dict)
    high: np.ndarray | None = None

    @property
    def table(self) -> pd.DataFrame:
        """Its per-question table, ``[system,] query_id, [unit,] measure, value[, value_low,
        value_high]``."""
        table = long_table(self.groups, self.values, self.names)
        if self.unit is not None:
            table.insert(table.columns.get_loc("measure"), "unit", self.unit)
        if self.high is not None:
            table["value_low"] = table["value"].to_numpy()
            table["value_high"] = np.asarray(self.high, dtype=np.float64).reshape(-1)
        return table

    def summary(self) -> "PartResult":
        """The result without its groups' rows (what a driver gathers from its workers)."""
        empty = pd.DataFrame({c: pd.Series(dtype=t) for c, t in self.groups.dtypes.items()})  # not a slice: a
        high = None if self.high is None else np.empty((0, self.values.shape[1]))  # slice keeps the whole
        return replace(self, groups=empty, values=np.empty((0, self.values.shape[1])), high=high)

    def to_arrow(self) -> pa.Table:
        """The result as one Arrow table, to cross a process boundary without pickle: the
        groups' columns (strings), the values as ``value_0 .. value_{M-1}`` (float64), and
        everything else as JSON in the schema's metadata (``extra`` must hold JSON values).
        :meth:`from_arrow` reads it back, equal.

        Examples
        --------
        >>> import numpy as np, pandas as pd
        >>> r = PartResult(pd.DataFrame({"query_id": ["q1"]}), np.array([[0.5]]), ["P@5"], [], [None])
        >>> PartResult.from_arrow(r.to_arrow()).values.tolist()
        [[0.5]]
        """
        import json
        cols = {c: pa.array(self.groups[c].to_numpy(dtype=object), pa.large_string()) for c in self.groups.columns}
        values = np.asarray(self.values, dtype=np.float64).reshape(len(self.groups), len(self.names))
        cols |= {f"value_{i}": pa.array(values[:, i]) for i in range(len(self.names))}
        if self.high is not None:
            high = np.asarray(self.high, dtype=np.float64).reshape(len(self.groups), len(self.names))
            cols |= {f"high_{i}": pa.array(high[:, i]) for i in range(len(self.names))}
        about = {"names": list(self.names), "records": [_record_json(r) for r in self.records],
                 "silent": list(self.silent), "integer_questions": self.integer_questions,
                 "conflicts": None if self.conflicts is None else {
                     "how": self.conflicts.how, "count": int(self.conflicts.count),
                     "examples": list(self.conflicts.examples), "first_rows": [int(x) for x in self.conflicts.first_rows]},
                 "tokens": [[s, counts.index.tolist(), counts.to_numpy().tolist()] for s, counts in self.tokens.items()],
                 "chunkings": int(self.chunkings), "unit": self.unit, "extra": self.extra,
                 "groups": list(self.groups.columns), "high": self.high is not None}
        return pa.table(cols).replace_schema_metadata({PART_METADATA: json.dumps(about)})

    @classmethod
    def from_arrow(cls, table: pa.Table) -> "PartResult":
        """The result :meth:`to_arrow` wrote."""
        import json
        about = json.loads(table.schema.metadata[PART_METADATA])
        groups = pd.DataFrame({c: str_column(table.column(c).combine_chunks()) for c in about["groups"]})
        M = len(about["names"])
        values = np.column_stack([table.column(f"value_{i}").to_numpy() for i in range(M)]) if M else \
            np.empty((table.num_rows, 0))
        c = about["conflicts"]
        high = None
        if about["high"]:
            high = (np.column_stack([table.column(f"high_{i}").to_numpy() for i in range(M)]) if M else
                    np.empty((table.num_rows, 0))).reshape(table.num_rows, M)
        return cls(groups, values.reshape(table.num_rows, M), about["names"], [_record_of(r) for r in about["records"]],
                   about["silent"], None if c is None else ResolvedConflicts(
                       c["how"], c["count"], tuple(c["examples"]), tuple(c["first_rows"])),
                   about["integer_questions"],
                   tokens={s: pd.Series(n, index=pd.Index(t)) for s, t, n in about["tokens"]},
                   chunkings=about["chunkings"], unit=about["unit"], extra=about["extra"], high=high)


#: The schema metadata key of :meth:`PartResult.to_arrow`'s JSON.
PART_METADATA = b"evalframe.part"


def _record_json(r: Diagnostic) -> dict:
    return {"system": r.system, "check": r.check.value, "count": int(r.count), "action": r.action,
            "examples": list(r.examples), "numeric": r.numeric, "bytewise": list(r.bytewise)}


def _record_of(d: dict) -> Diagnostic:
    return Diagnostic(d["system"], Check(d["check"]), d["count"], d["action"], tuple(d["examples"]), d["numeric"],
                      tuple(d["bytewise"]))


def evaluate_part(run: pd.DataFrame, qrels: pd.DataFrame, plan: Plan, *,
                  qrels_rows: np.ndarray | None = None) -> PartResult:
    """Evaluate the questions of one partition as ``plan`` says, knowing every system of the run.

    ``run`` and ``qrels`` hold the rows of whole questions, with canonical column names;
    ``plan.conv.conflicts`` resolves the partition's golden-set rows when ``qrels_rows``
    gives their positions in the whole golden set (whole questions, so the same pairs as
    on the whole golden set; counted in its order, :func:`~evalframe.schema.check_qrels_part`);
    with ``plan.chunkings``, ``qrels`` is the partition's rows of the span golden set (or of
    the chunk-level one); ``plan.unjudged="relevant"``: the values are the upper bounds
    (:func:`~evalframe.engine.bounds.upper_bounds`), ``"bounds"``: today's values and the
    upper bounds beside them (``high``).
    """
    ms, conv, systems, shallow, rollup, unjudged = plan.ms, plan.conv, plan.systems, plan.shallow, plan.rollup, plan.unjudged
    chunkings = plan.chunkings
    qrels = qrels.reset_index(drop=True)
    resolved = None
    within = systems if "system" in run.columns else [None]
    conv = conv.but(columns=None)  # the engine renamed the columns
    if chunkings is not None:
        return _evaluate_chunked(run, qrels, within, ms, chunkings, shallow, conv)
    if conv.conflicts != "error" and qrels_rows is not None:  # whole questions: resolved here, merged by the driver
        qrels, resolved = check_qrels_part(qrels, conv.conflicts, qrels_rows)
        conv = conv.but(conflicts="error")  # no repeated pair is left
    J = no_relevant_records(prepare(run, qrels, conv, warn=False, rollup=rollup, systems=within), conv)
    J = with_shallow_rankings(J, shallow if shallow is not None else ms, warn=False)
    groups, high = J.groups, None
    values = upper_bounds(J, ms) if unjudged == "relevant" else compute(J, ms)
    if unjudged == "bounds":
        high = upper_bounds(J, ms)
    keep = kept_groups(J, conv)
    if keep is not None:  # no_relevant="drop": the questions without a relevant document left out
        groups, values = groups.loc[keep].reset_index(drop=True), np.asarray(values)[keep]
        high = None if high is None else high[keep]
    result = PartResult(groups, values, [str(m) for m in ms], list(J.records), _silent(J, systems), resolved,
                        J.integer_questions, tokens=token_counts(J) if sizes_compared(systems, ms) else {},
                        unit=UNIT if rollup is not None else None, high=high)
    J.release()  # freed on return: no reference cycle left for the collector
    return result


def _silent(J, systems: list) -> list:
    """The systems of ``systems`` that answer none of ``J``'s golden-set questions."""
    not_in_run = {r.system: r.count for r in J.records if r.check is Check.GOLDEN_QUESTIONS_NOT_IN_RUN}
    return [s for s in systems if not_in_run.get(s, 0) == J.n_queries]


def _evaluate_chunked(run: pd.DataFrame, qrels: pd.DataFrame, systems: list, ms: list[Measure],
                      chunkings: Chunkings, shallow: list[Measure] | None, conv: Conventions) -> PartResult:
    """:func:`evaluate_part` of a run whose chunkings are judged each on its own labels."""
    checked = read_checked_run(run, duplicates=conv.duplicates, ties=conv.ties, part=True, ascending=conv.ascending)
    if chunkings.spans is not None:
        golden, chunkings = None, replace(chunkings, spans=qrels)
    else:
        golden = read_checked_qrels(qrels, part=True)
    judged = judge_chunked(checked, golden, chunkings, systems=systems, whole=False, **conv.judging)
    records, groups, values, tokens, silent = [], [], [], {}, set()
    for J, names in zip(judged, chunkings.groups(systems).values()):
        J = with_shallow_rankings(J, shallow if shallow is not None else ms, warn=False)
        records.append(list(J.records))
        groups.append(J.groups)
        values.append(compute(J, ms))
        if sizes_compared(systems, ms):
            tokens.update(token_counts(J))
        silent.update(_silent(J, names))
        J.release()  # freed with the part: no reference cycle left for the collector
    table = pd.concat(groups, ignore_index=True) if len(groups) > 1 else groups[0]
    values = np.concatenate(values) if len(values) > 1 else values[0]
    if len(groups) > 1 and "system" in table:  # systems in the run's order, as the in-memory engine orders them
        order = np.argsort(pd.Index(systems).get_indexer(table["system"].to_numpy(dtype=object)), kind="stable")
        table, values = table.iloc[order].reset_index(drop=True), values[order]
    flags = [J.integer_questions for J in judged]
    return PartResult(table, values, [str(m) for m in ms], merge_chunkings(records), [s for s in systems if s in silent],
                      None, None if None in flags else all(flags), tokens=tokens, chunkings=len(judged))


def merge(results: Sequence[PartResult], plan: Plan, *, resolved: ResolvedConflicts | None = None) -> list[Diagnostic]:
    """The whole input's diagnostics records from its partitions' ``results`` (summaries
    will do): records merged by :func:`~evalframe._diagnostic_records.merge_diagnostics`, a system that
    answers no golden-set question of any partition reported (and the run refused when no
    system answers any), the golden set's conflicting labels recorded once (``resolved``:
    resolved on the whole golden set; else the partitions' merged), and the chunk sizes
    (their token counts added up) and chunkings compared on the plan's measures."""
    systems, missing, ms = plan.systems, plan.conv.missing, plan.ms
    nowhere = [s for s in systems if all(s in r.silent for r in results)]
    if len(nowhere) == len(systems):
        raise EvalframeInputError("run", [InputProblem(
            "the run and the golden set share no question id",
            "check that both tables use the same question ids (ids are compared as strings)")])
    action = "scored 0 on every question" if missing == "zero" else "dropped"  # as judge() says it
    quiet = [Diagnostic(s, Check.SYSTEM_WITHOUT_GOLDEN_QUESTIONS, 1, action, (str(s),)) for s in nowhere]
    flags = [r.integer_questions for r in results]  # the whole golden set's: every question is in a part
    records = merge_diagnostics([list(r.records) + quiet for r in results], systems=systems,
                                integer_questions=None if None in flags else all(flags))
    more = conflicts_record(resolved or merge_conflicts([r.conflicts for r in results]))
    more += sizes_record([r.tokens for r in results], systems, list(ms))
    more += chunkings_record(max((r.chunkings for r in results), default=1), list(ms))
    checks = list(Check)
    return sorted(records + more, key=lambda r: checks.index(r.check))  # stable: each check's order kept


def finish(results: Sequence[PartResult], plan: Plan, *, resolved: ResolvedConflicts | None = None,
           judged_elsewhere: Callable[[list, "pd.Index | None"], set] | None = None,
           run_docs: Callable[["pa.Array"], Iterable[tuple[bool, list]]] | None = None,
           golden_docs: "pd.Series | Callable[[], pd.Series] | None" = None, warn: bool = True) -> list[Diagnostic]:
    """The driver's last steps, once every part is evaluated: the records :func:`merge`
    gives, a system flagged as retrieving no judged document cleared when
    ``judged_elsewhere(flagged systems, judged)`` finds it retrieving a document the golden
    set judges for another part's question (``judged``: the documents judged when they are not
    the golden set's: the chunks a span golden set labels) (one more pass over the run, only when a system is
    flagged; None: the engine cleared them part by part), the run refused when no system
    retrieves a judged document and its ids are foreign to the golden set's ``golden_docs``
    (or what calling it gives: read only then) (``run_docs(value set of the golden set's documents)``: the run's pieces'
    :func:`~evalframe.engine.foreign.doc_summary`, in the run's order), and the warnings."""
    records = merge(results, plan, resolved=resolved)
    if plan.rollup is None and judged_elsewhere is not None:
        spans = plan.chunkings is not None and plan.chunkings.spans is not None
        records = clear_judged_elsewhere(records, lambda flagged: judged_elsewhere(  # called when a system is flagged
            flagged, plan.chunkings.judged_chunks() if spans else None))  # the chunks labelled from the spans
    if (plan.rollup is None and plan.chunkings is None and run_docs is not None
            and every_system_unjudged(records, plan.systems)):  # as in memory: one more pass over doc_id
        docs = golden_docs() if callable(golden_docs) else golden_docs
        refuse_foreign_run(run_docs(id_set(ids_to_str(docs).unique())), docs)
    if warn:
        warn_diagnostics(records, plan.conv.rel)
    return records
