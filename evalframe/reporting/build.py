"""report(): validate every argument, evaluate once, then build each table with the
public function of its section::

    report_options -> evaluate_with_diagnostics -> report_per_question -> join_segments
      -> stats.summarize -> segment_table -> comparison_table -> curve_table
      -> stage_table -> planning_table -> report_diagnostics -> change_table -> Report
"""
from __future__ import annotations

import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Literal, Mapping, Sequence

import numpy as np
import pandas as pd

from .. import stats
from .._threads import resolve_threads
from .._validation import CONFIDENCE, POSITIVE_INT, SEED, InstanceOf, IsCallable, Options, Satisfies, check, validate
from ..stats.resampling import distribution_memory
from .._version import __version__
from ..errors import EvalframeInputError, InputProblem
from ..engine.bounds import BOUND_FAMILIES
from ..engine.chunkings import is_span_input
from ..engine.memory import Conventions, evaluate_partition
from ..evaluation import aggregate, evaluate_with_diagnostics
from ..spans import MIN_OVERLAP
from ..canonical import alias_candidates, check_columns, question_texts
from .._fingerprint import digest_json, digest_path, digest_table, fingerprints, run_digests, source_digests
from ..io import read_chunks, read_golden_set, read_qrels, read_run_as_given
from .._conflicts import is_human
from ..measures import FAMILIES, Measure, parse_measures, resolve
from .changes import RANKINGS_DEPTH, change_table, query_texts, question_rows, ranking_table
from .comparisons import comparison_table
from .curves import CURVE_KS, curve_measures, curve_table
from .diagnostics import diagnostic_row, issue_warnings, report_diagnostics, labels_by_judge
from .model import Report
from .planning import planning_table
from .segments import join_segments, resolve_segments, segment_table
from .stages import stage_measures, stage_spec, stage_table
from .tables import MeasureRows, order_rows

Interval = Literal["bootstrap", "bca", "t", "auto"]
#: the evaluation conventions report() accepts as keywords, with their defaults
CONVENTIONS = {"rel": 1, "ties": "doc_id_desc", "missing": "zero", "depth": None, "duplicates": "error",
               "conflicts": "error", "no_relevant": "zero", "ascending": False}


@dataclass(frozen=True)
class ReportOptions:
    """The arguments of :func:`report`, checked and normalised by :func:`report_options`.

    Examples
    --------
    >>> from evalframe.reporting import report_options
    >>> opts = report_options(measures=["R@5"], seed=1)
    >>> type(opts).__name__, opts.seed, opts.conventions["missing"]
    ('ReportOptions', 1, 'zero')
    """

    measures: tuple[Measure, ...]
    baseline: str | None
    stages: tuple[tuple[str, "int | str"], ...]
    confidence: float
    n_resamples: int
    seed: int
    interval: str
    test: str
    correction: str | None
    curve: str
    curve_ks: tuple[int, ...]
    conventions: Mapping[str, object]
    #: threads of the resampling (``threads=``, else ``EVALFRAME_THREADS``, else the cores)
    threads: int = 1

    @property
    def names(self) -> list[str]:
        """The canonical names of the measures, in the order given."""
        return [str(m) for m in self.measures]

    @property
    def judged_ks(self) -> list[int]:
        """Cutoffs of the Judged@k diagnostics: the measures' cutoffs (10 without any)."""
        return sorted({m.k for m in self.measures if m.k is not None}) or [10]

    @property
    def judged_names(self) -> list[str]:
        """The Judged@k measures of the diagnostics."""
        return [f"Judged@{k}" for k in self.judged_ks]

    @property
    def unjudged_names(self) -> list[str]:
        """The Unjudged@k measures of the diagnostics (with Judged@k: the positions filled)."""
        return [f"Unjudged@{k}" for k in self.judged_ks]

    @property
    def curve_names(self) -> list[str]:
        """The measures of the metric@k curve, in the order of k."""
        return [str(m) for m in curve_measures(self.curve, self.curve_ks, rel=self.conventions["rel"])]

    @property
    def stage_names(self) -> list[str]:
        """``R@k`` of every stage, first stage first."""
        return [str(m) for m in stage_measures(self.stages, rel=self.conventions["rel"])]

    @property
    def resampling(self) -> dict:
        """The interval keywords of :func:`stats.summarize` (with the threads it runs on)."""
        return dict(method=self.interval, confidence=self.confidence, n_resamples=self.n_resamples,
                    seed=self.seed, threads=self.threads)

    def all_measures(self) -> list[Measure]:
        """Every measure one ranking pass computes: the measures, Judged@k, the curve, the stages."""
        rel = self.conventions["rel"]
        extra = [resolve(m, rel=rel) for m in parse_measures(self.judged_names + self.unjudged_names)]
        return list(dict.fromkeys([*self.measures, *extra,
                                   *curve_measures(self.curve, self.curve_ks, rel=rel),
                                   *stage_measures(self.stages, rel=rel)]))


#: ``curve=``: a family whose measures take a cutoff
_CURVE = Satisfies(lambda v: isinstance(v, str) and v in FAMILIES, "a measure family with a cutoff, e.g. 'R'")
#: ``curve_ks=``
_CURVE_KS = Satisfies(lambda v: isinstance(v, Iterable) and not isinstance(v, str) and len(list(v)) > 0
                      and all(POSITIVE_INT.accepts(k) for k in v), "a non-empty list of ints >= 1")


def report_options(*, measures=None, baseline: str | None = None,
                   stages: Sequence | Mapping[str, int] | None = None, confidence: float = 0.95,
                   n_resamples: int = 10_000, seed: int = 0, interval: str = "bootstrap",
                   test: str = "t", correction: str | None = None, curve: str = "R",
                   curve_ks: Iterable[int] = CURVE_KS, progress: Callable[[str], None] | None = None,
                   threads: int | None = None, **conventions) -> ReportOptions:
    """Check every argument of :func:`report` before any work is done.

    Raises
    ------
    TypeError
        An unknown keyword argument, or ``stages`` neither a list nor a dict.
    ValueError
        One message per bad argument, ``"report: <param> must be <what>, got <value>"``
        (:class:`EvalframeInputError` for bad stages, measure names by their parser),
        a bad ``threads`` or environment variable ``EVALFRAME_THREADS`` included.

    Examples
    --------
    >>> from evalframe.reporting import report_options
    >>> opts = report_options(measures=["nDCG@10"], baseline="bm25")
    >>> opts.measures, opts.baseline, opts.test, opts.n_resamples
    ((Measure('nDCG@10'),), 'bm25', 't', 10000)
    >>> report_options(confidence=2)
    Traceback (most recent call last):
    ...
    evalframe.errors.ParameterError: report: confidence must be a float in (0, 1), got 2
    """
    unknown = sorted(set(conventions) - set(CONVENTIONS))
    if unknown:
        raise TypeError(f"report() got unknown keyword argument(s) {unknown}; conventions are "
                        f"{list(CONVENTIONS)}")
    ks = list(curve_ks) if isinstance(curve_ks, Iterable) and not isinstance(curve_ks, str) else curve_ks
    validate(
        "report", confidence=(confidence, CONFIDENCE), n_resamples=(n_resamples, POSITIVE_INT))
    distribution_memory(n_resamples, 1, func="report")  # refused before any work
    validate("report", seed=(seed, SEED),
             interval=(interval, Options(typing.get_args(Interval))),
             test=(test, Options(typing.get_args(stats.TestName))),
             correction=(correction, None, Options(typing.get_args(stats.Correction))),
             baseline=(baseline, InstanceOf(str, "a system name (str)"), None),
             progress=(progress, IsCallable(), None),
             curve=(curve, _CURVE), curve_ks=(ks, _CURVE_KS))
    conv = {**CONVENTIONS, **conventions}
    checked = Conventions(**{k: v for k, v in conv.items() if k != "no_relevant"}, caller="report")  # checked once
    conv |= {"rel": int(checked.rel), "depth": None if checked.depth is None else int(checked.depth),
             "ascending": checked.ascending}  # plain values (numpy's too): the metadata is JSON
    check("report", "no_relevant", conv["no_relevant"], Options(("zero", "drop")))
    ms = tuple(resolve(m, rel=conv["rel"]) for m in parse_measures(measures))
    spec = tuple(stage_spec(stages))
    curve_measures(curve, ks, rel=conv["rel"])  # a family without a cutoff fails here
    n_threads = resolve_threads(threads, caller="report")
    return ReportOptions(measures=ms, baseline=baseline, stages=spec, confidence=float(confidence),
                         n_resamples=int(n_resamples), seed=int(seed), interval=interval, test=test,
                         correction=correction, curve=curve, curve_ks=tuple(sorted({int(k) for k in ks})),
                         conventions=conv, threads=n_threads)


def report_per_question(rows: MeasureRows, measures: Sequence[str], systems: Sequence[str]) -> pd.DataFrame:
    """The rows of ``measures`` in (system, query_id, measure) order, as :func:`evaluate`
    returns them (questions in their first-seen order in the evaluation)."""
    pos = rows.positions(measures)
    system_rank = pd.Index(systems).get_indexer(rows.system_names)
    q_rank = rows.question_order()
    key = system_rank[rows.system_codes(pos)].astype(np.int64) * len(q_rank) + q_rank[rows.query_codes(pos)]
    return rows.take(pos[np.argsort(key, kind="stable")])


def summary_table(per_question: pd.DataFrame, *, resampling: Mapping[str, object],
                  systems: Sequence[str], measures: Sequence[str]) -> pd.DataFrame:
    """:func:`stats.summarize` of the measures, rows in the order of systems and measures."""
    s = stats.summarize(per_question[["system", "query_id", "measure", "value"]], **resampling)
    return order_rows(s, systems, measures)


def report_metadata(opts: ReportOptions, *, systems: Sequence[str], segments: Sequence[str],
                    n_questions: int, comparisons: pd.DataFrame) -> dict:
    """The Report's metadata: evalframe version, measures, conventions, resampling, test,
    correction (as :func:`stats.compare` applied it), baseline, stages, systems, segments,
    n_questions, curve."""
    correction = str(comparisons["correction"].iloc[0]) if len(comparisons) else opts.correction or "none"
    return {
        "evalframe_version": __version__, "version": __version__, "measures": opts.names,
        "conventions": dict(opts.conventions), "confidence": opts.confidence, "seed": opts.seed,
        "n_resamples": opts.n_resamples, "interval": opts.interval, "test": opts.test,
        "correction": correction, "baseline": opts.baseline, "stages": [list(s) for s in opts.stages],
        "systems": list(systems), "segments": list(segments), "n_questions": int(n_questions),
        "curve": opts.curve, "curve_ks": list(opts.curve_ks),
    }


def _run_table(run, columns, conv, *, plain: bool) -> pd.DataFrame | None:
    """The run as a canonical table when it is given as one in memory (a DataFrame, a dict
    or a list of them) and evaluated as is (no roll-up, no chunks); else None."""
    if not plain or not isinstance(run, (pd.DataFrame, dict, list, tuple)):
        return None
    if isinstance(run, (list, tuple)) and not all(isinstance(r, (pd.DataFrame, dict)) for r in run):
        return None
    try:
        return read_run_as_given(run, columns=columns, duplicates=conv["duplicates"], ascending=conv["ascending"])
    except (ValueError, TypeError, KeyError, OSError):  # evaluated already: a form read_run does not take
        return None


def _chunks_digest(chunks) -> str | None:
    """The fingerprint of ``chunks=``: a file by its bytes, a table by its rows, a dict
    ``{system: table or path}`` by its systems' fingerprints; None without chunks."""
    if chunks is None:
        return None
    if isinstance(chunks, (str, Path)):
        return digest_path(chunks)
    if isinstance(chunks, pd.DataFrame):
        return digest_table(chunks, list(chunks.columns))
    if isinstance(chunks, Mapping):
        return digest_json({str(k): _chunks_digest(v) for k, v in sorted(chunks.items(), key=lambda kv: str(kv[0]))})
    return None


def _check_systems(systems: list[str], opts: ReportOptions) -> None:
    if opts.baseline is not None and opts.baseline not in systems:
        raise EvalframeInputError("report", [InputProblem(
            f"baseline {opts.baseline!r} is not a system of the run (systems: {systems[:10]})",
            "pass one of the names in the run's system column")])
    missing_stage = [st for st, _ in opts.stages if st not in systems]
    if missing_stage:
        raise EvalframeInputError("stages", [InputProblem(
            f"stage(s) {missing_stage} are not systems of the run (systems: {systems[:10]})",
            "use the names in the run's system column")])


#: The report's default measures on a span golden set: the span measures first.
SPAN_MEASURES = ("SpanRecall@5", "SpanRecall@10", "SpanPrecision@5", "SpanIoU@5", "R@5", "nDCG@10")
#: The token budget of the default budget measure.
SPAN_BUDGET = 512


def span_defaults(run, chunks) -> list[str]:
    """The default measures of a report on a span golden set: :data:`SPAN_MEASURES`, and
    ``SpanRecall(tokens=512)`` when every chunk table (or the run) has token counts."""
    tables = list(chunks.values()) if isinstance(chunks, Mapping) else [chunks]
    if chunks is not None:
        tokens = all("tokens" in read_chunks(t).columns for t in tables)
    else:
        tokens = isinstance(run, pd.DataFrame) and bool(alias_candidates(run, "tokens"))
    return list(SPAN_MEASURES) + ([f"SpanRecall(tokens={SPAN_BUDGET})"] if tokens else [])


def _provenance_rows(run, golden: pd.DataFrame, opts: ReportOptions, cols, rollup, judged: pd.DataFrame
                     ) -> list[dict]:
    """:func:`~evalframe.reporting.diagnostics.labels_by_judge` of the golden set, with each
    system's share of judged top-k documents (k: the deepest of the measures, 10 without
    one) whose label is a model's: ``Judged@k`` on the model's rows over ``Judged@k`` on all
    (``judged``: the report's aggregate of ``Judged@k``, already computed)."""
    k = max(opts.judged_ks)
    model = golden[~is_human(golden["judge"])]
    shares = None
    if len(model):
        conv = _partition_conventions(opts, cols, conflicts="error")  # golden is resolved already
        m = [resolve(x, rel=conv.rel) for x in parse_measures([f"Judged@{k}"])]
        t = evaluate_partition(run, model, m, conv, warn=False, rollup=rollup)[0]
        if "system" not in t.columns:
            t.insert(0, "system", "system")
        by_model = t.groupby(t["system"].astype(str), sort=False)["value"].sum()
        j = judged[judged["measure"] == f"Judged@{k}"]
        everything = pd.Series((j["mean"] * j["n"]).to_numpy(), index=j["system"].astype(str).to_numpy())
        share = (by_model.reindex(everything.index).fillna(0) / everything.where(everything > 0)).fillna(0.0)
        shares = pd.DataFrame({"system": share.index, "model_share": share.to_numpy()})
    return labels_by_judge(golden, rel=opts.conventions["rel"], judged=shares, k=k)


def _ppi_comparisons(comparisons: pd.DataFrame, per_q: pd.DataFrame, human_pq: pd.DataFrame, opts: ReportOptions
                     ) -> pd.DataFrame:
    """The comparisons with the prediction-powered difference of each pair
    (:func:`stats.compare_ppi`, same pairs and orientation, Holm within a measure):
    ``ppi_diff, ppi_ci_low, ppi_ci_high, ppi_p_value, ppi_p_adjusted``."""
    keys = ["system", "query_id", "measure", "value"]
    c = stats.compare_ppi(per_q[keys], human_pq[keys], baseline=opts.baseline, confidence=opts.confidence)
    pairs = ["measure", "system_a", "system_b"]
    c = c[pairs + ["diff", "ci_low", "ci_high", "p_value", "p_adjusted"]].rename(
        columns={x: f"ppi_{x}" for x in ("diff", "ci_low", "ci_high", "p_value", "p_adjusted")})
    return comparisons.merge(c.astype({k: str for k in pairs}), on=pairs, how="left")


def _partition_conventions(opts: ReportOptions, columns, **changes) -> Conventions:
    """The report's conventions as :func:`~evalframe.engine.memory.evaluate_partition` takes them."""
    return Conventions(**{**opts.conventions, **changes}, columns=columns, caller="report")


def _with_ppi(summary: pd.DataFrame, per_q: pd.DataFrame, run, human_qrels, opts: ReportOptions, cols, rollup
              ) -> tuple[pd.DataFrame, list[dict], pd.DataFrame]:
    """The summary with the prediction-powered means (:func:`stats.summarize_ppi` of the
    per-question table, the model's, and of the run evaluated on ``human_qrels``) and a
    ``ppi`` diagnostics row per system and measure."""
    conv = _partition_conventions(opts, cols, no_relevant="zero")  # the model's table decides (below)
    human = read_qrels(human_qrels, columns=cols, conflicts=conv.conflicts)
    table = evaluate_partition(run, human, list(opts.measures), conv, warn=False, rollup=rollup)[0]
    if opts.conventions["no_relevant"] == "drop":  # the questions the model's table kept
        table = table[table["query_id"].isin(per_q["query_id"])]
    if "system" not in table.columns:
        table.insert(0, "system", "system")
    keys = ["system", "query_id", "measure", "value"]
    ppi = stats.summarize_ppi(per_q[keys], table[keys], confidence=opts.confidence)
    at = pd.MultiIndex.from_frame(ppi[["system", "measure"]].astype(str)).get_indexer(
        pd.MultiIndex.from_frame(summary[["system", "measure"]].astype(str)))
    out = summary.copy()
    for col, src in (("ppi_mean", "mean"), ("ppi_ci_low", "ci_low"), ("ppi_ci_high", "ci_high"),
                     ("n_human", "n_human"), ("ppi_lambda", "lambda")):
        values = ppi[src].to_numpy(dtype=np.float64)
        out[col] = np.where(at >= 0, values[np.maximum(at, 0)] if len(values) else np.nan, np.nan)
    out["n_human"] = out["n_human"].astype("Int64")
    rows = [diagnostic_row("ppi", system=str(r.system), measure=str(r.measure), count=int(r.n_human),
                           value=float(r.ppi_mean), detail=(
                               f"{r.system}: {r.measure} {r.mean:.3f} with the model's labels; {r.ppi_mean:.3f} "
                               f"[{r.ppi_ci_low:.3f}, {r.ppi_ci_high:.3f}] corrected with {int(r.n_human)} "
                               f"human-labelled questions (PPI++, lambda {r.ppi_lambda:.2f})" if np.isfinite(r.ppi_mean)
                               else f"{r.system}: {r.measure}: no PPI interval, {int(r.n_human)} of {int(r.n)} questions "
                                    "are human-labelled (PPI needs questions with model labels only; with every "
                                    "question judged by people, use their labels)"))
            for r in out[at >= 0].itertuples(index=False)]
    return out, rows, table


def _with_bounds(summary: pd.DataFrame, run, golden: pd.DataFrame, opts: ReportOptions, cols, rollup
                 ) -> tuple[pd.DataFrame, list[dict]]:
    """The summary with ``mean_low`` and ``mean_high`` (NaN for measures without a true
    upper bound) and an ``unjudged_bounds`` diagnostics row per system and measure."""
    ms = [m for m in opts.measures if m.family in BOUND_FAMILIES and not set(dict(m.params)) - {"rel"}]
    out = summary.assign(mean_low=np.nan, mean_high=np.nan)
    if not ms:
        return out, [diagnostic_row("unjudged_bounds", detail=(
            f"no measure of P, R, Success or RR was asked for: none of {opts.names[:4]} has a true upper bound "
            "when unjudged documents count as relevant"))]
    table = evaluate_partition(run, golden, ms, _partition_conventions(opts, cols), warn=False, rollup=rollup,
                               unjudged="bounds")[0]
    if "system" not in table.columns:
        table.insert(0, "system", "system")
    means = aggregate(table)[["system", "measure", "value_low", "value_high"]]
    at = pd.MultiIndex.from_frame(means[["system", "measure"]].astype(str)).get_indexer(
        pd.MultiIndex.from_frame(out[["system", "measure"]].astype(str)))
    hit = at >= 0
    out.loc[hit, "mean_low"] = means["value_low"].to_numpy()[at[hit]]
    out.loc[hit, "mean_high"] = means["value_high"].to_numpy()[at[hit]]
    rows = [diagnostic_row("unjudged_bounds", system=str(r.system), measure=str(r.measure),
                           value=float(r.mean_high), detail=(
                               f"{r.system}: {r.measure} {r.mean_low:.3f}, between {r.mean_low:.3f} and {r.mean_high:.3f} "
                               "if every unjudged retrieved document (in the cutoff) were relevant"))
            for r in out[hit].itertuples(index=False)]
    return out, rows


def report(run, qrels, *, measures=None, segments=None, baseline: str | None = None,
           stages: "Sequence[str] | Mapping[str, int] | None" = None, confidence: float = 0.95,
           n_resamples: int = 10_000, seed: int = 0, interval: Interval = "bootstrap",
           test: stats.TestName = "t", correction: stats.Correction | None = None,
           curve: str = "R", curve_ks: Iterable[int] = CURVE_KS, queries=None, n_changes: int = 10,
           columns: Mapping[str, str] | None = None, progress: Callable[[str], None] | None = None,
           memory_budget: "int | str | None" = None, rollup=None, chunks=None,
           min_overlap: float = MIN_OVERLAP, tokens=None, unjudged: "str | None" = None,
           human_qrels=None, threads: int | None = None, **conventions) -> Report:
    """Evaluate one or many systems and gather every table a decision needs.

    Parameters
    ----------
    run : DataFrame, path, dict, or list/dict of those
        One or many systems (see :func:`evalframe.read_run`).
    qrels : DataFrame, path, dict or CheckedQrels
        The golden set (a checked one, :func:`evalframe.read_golden_set`, reports the
        conflicting labels it resolved).
    measures : names, optional
        Default: the spec's ``R@5, R@10, R@100, P@5, RR, nDCG@10, AP``.
    segments : DataFrame, path, or column name(s) of the golden-set DataFrame, optional
        ``query_id`` (or an alias) plus one or more segment columns (question type,
        length...); see :func:`read_segments` (``read_segments(table, segments=[...])``
        keeps only the columns named).
    baseline : str, optional
        Compare every system with this one; without it, every pair.
    stages : list of system names or dict {system: k}, optional
        Pipeline stages, first stage first, e.g. ``{"first_stage": 100, "reranked": 5}``
        (a list uses k = 100 for the first stage and 5 for the last); a stage may pass on
        a token budget instead of k, ``{"first_stage": 100, "reranked": "tokens=2000"}``
        (the run needs a ``tokens`` column).
    confidence : float
        Confidence level of every interval (and of the diagnostics' texts).
    n_resamples : int
        Bootstrap / randomisation resamples (>= 1).
    seed : int
        Seed of every resampling step (an int >= 0).
    threads : int, optional
        Threads of the evaluation (see :func:`evalframe.evaluate`) and of the resampling:
        the bootstrap of the summary, segments and
        stages, the randomisation, bootstrap and bootstrap-t tests and intervals of the
        comparisons, the randomised Tukey HSD (sets of shared questions side by side, or
        the chunks of resamples of one random stream, drawn in order, computed from on
        the threads; numpy releases the GIL in that work). Default: the environment
        variable ``EVALFRAME_THREADS``, else every core this process may use. The
        numbers are the same under any count; checked before any work is done (an int
        >= 1, a ValueError otherwise).
    interval : {"bootstrap", "bca", "t", "auto"}
        Interval of the means (summary, segments, stages); the spec's bootstrap by default.
    test, correction
        Paired test and multiple-comparison correction (see :func:`stats.compare`);
        default the paired t-test with Holm's correction. Each comparison's intervals
        are the test's own (:func:`stats.compare`'s default ``ci``): the t interval for
        the t-test, the inversion of the randomisation test for ``"randomization"``.
        The t is the default because its Bonferroni-simultaneous intervals cover at
        0.94-0.97 (0.95 within Monte Carlo error) from 15 questions, where the
        percentile bootstrap (the default before, 0.80-0.87 at n = 15) and the
        randomisation test's inversion on skewed differences (0.917) do not
        (``benchmarks/sim_coverage.py``; the docs' statistics page).
    curve, curve_ks
        Measure family and cutoffs of the metric@k curve (default recall at 13 cutoffs
        from 1 to 100; pass ``range(1, 101)`` for every k).
    queries : DataFrame, optional
        ``query_id, text``: the question text shown in the ``changes`` table (the bundled
        datasets have one: ``load_cranfield().queries``); default: the golden set's own
        question text when it has one (:func:`evalframe.canonical.question_texts`).
    n_changes : int
        Regressions and improvements per (pair, measure) in the ``changes`` table
        (:func:`top_changes` of the baseline, or the first system, against each other).
    columns : dict, optional
        ``{your column name: canonical name}`` for the run, the golden set and the
        segments (as in :func:`evalframe.evaluate`).
    progress : callable, optional
        Called with a short label before each step (the CLI draws a progress bar).
    memory_budget : int or str, optional
        A Parquet-dataset run larger than this is evaluated in parts (see
        :func:`evalframe.evaluate`); the report's tables are then built from the
        per-question table as always.
    rollup : DataFrame, dict or str, optional
        A chunk -> page map (see :func:`evalframe.evaluate`): every table is then at page
        level; the metadata's ``unit`` is ``"page"`` (``"document"`` without it) and the
        diagnostics have a ``unit`` row and the roll-up's counts.
    chunks : DataFrame, path or dict {system: table}, optional
        Each retrieved chunk's document and offsets (``chunk_id, doc_id, start, end[,
        tokens]``, see :mod:`evalframe.spans`): with a span golden set every chunking is
        judged on the labels it gets from the spans, and the default measures are the
        span measures (``SpanRecall@5``, ``SpanRecall@10``, ``SpanPrecision@5``,
        ``SpanIoU@5``; ``SpanRecall(tokens=512)`` when token counts are known) beside
        ``R@5`` and ``nDCG@10``; chunk-level measures of systems whose chunkings differ
        are flagged (``chunkings_differ``).  A ``tokens`` column feeds every budget measure.
    min_overlap : float
        The overlap rule of :func:`evalframe.span_labels` (default 0.5).
    tokens : DataFrame, dict or Series, optional
        Token counts by retrieved id for the budget measures (see :func:`evalframe.evaluate`).
    unjudged : {None, "nonrelevant", "bounds"}
        None (default): unjudged retrieved documents count as not relevant, and an
        :class:`~evalframe.errors.UnjudgedDocumentsWarning` says so when more than 10% of
        a top k is unjudged.  ``"nonrelevant"`` declares it (a golden set complete by
        construction): no warning, the ``judged_at_k`` diagnostics rows stay.
        ``"bounds"``: no warning either; the summary gains ``mean_low`` and ``mean_high``
        (the mean if every unjudged document in the cutoff were relevant: see
        :func:`evalframe.evaluate`'s ``unjudged``) for the measures of P, R, Success and
        RR (NaN for the others), and the diagnostics an ``unjudged_bounds`` row per
        system and measure ("R@5 0.620, between 0.620 and 0.710 if ...").
    human_qrels : DataFrame, path or dict, optional
        People's labels on some of the questions, when ``qrels`` holds a model's labels on
        every question (e.g. from :func:`evalframe.judge`): the summary gains the
        prediction-powered mean and interval (:func:`evalframe.stats.summarize_ppi`, PPI++)
        as ``ppi_mean, ppi_ci_low, ppi_ci_high, n_human, ppi_lambda``, and the diagnostics a
        ``ppi`` row per system and measure, and the comparisons the prediction-powered
        difference of each pair (:func:`evalframe.stats.compare_ppi`: ``ppi_diff,
        ppi_ci_low, ppi_ci_high, ppi_p_value, ppi_p_adjusted``); fewer than 10 human
        questions warn (:class:`~evalframe.errors.FewHumanLabelsWarning`).
    **conventions
        ``rel, ties, missing, depth, duplicates, conflicts`` as in :func:`evalframe.evaluate`.

    Returns
    -------
    Report

    Raises
    ------
    TypeError, ValueError, EvalframeInputError
        Every argument is checked before the run is read (:func:`report_options`).

    Notes
    -----
    The global warning state is left alone: evalframe's warnings
    (:class:`~evalframe.errors.UnjudgedDocumentsWarning`, ...) are issued to the caller,
    so reports built in several threads at once lose none.

    Warnings are shown once, in scripts, CI and notebooks alike: every warning of the
    report is issued as a Python warning while it is computed, so ``python -W error``,
    ``warnings.filterwarnings`` and ``pytest.warns`` work as everywhere, and a notebook
    cell ``rep = ef.report(...)`` that displays nothing still shows them. The Report
    keeps them (:attr:`Report.warnings`, the diagnostics rows at level ``"warning"``);
    its notebook view (``_repr_html_``) then does not repeat them: its warnings box is
    one line ("2 warnings, issued as Python warnings when this report was computed")
    that opens to the list (:attr:`Report.warnings_issued`). A report read back with
    :func:`read_report`, whose warnings this session never issued, lists them open, as
    the page (:meth:`Report.to_html`), Markdown and text always do.

    Examples
    --------
    >>> import evalframe as ef
    >>> cran = ef.datasets.load_cranfield()
    >>> r = ef.report(cran.runs, cran.qrels, measures=["R@10", "nDCG@10"], segments=cran.segments,
    ...               baseline="bm25", n_resamples=200)            # doctest: +SKIP
    >>> r.summary[["system", "measure", "mean", "ci_low", "ci_high"]]  # doctest: +SKIP
    """
    options = dict(baseline=baseline, stages=stages, confidence=confidence, n_resamples=n_resamples, seed=seed,
                   interval=interval, test=test, correction=correction, curve=curve, curve_ks=curve_ks,
                   progress=progress, threads=threads, **conventions)
    opts = report_options(measures=measures, **options)
    if human_qrels is not None and chunks is not None:
        raise ValueError("report: human_qrels= takes chunk-level or page-level golden sets, not chunks= "
                         "(evaluate both golden sets and call stats.summarize_ppi)")
    check("report", "unjudged", unjudged, Options((None, "nonrelevant", "bounds"), "None, 'nonrelevant' or 'bounds' "
                                                  "(the upper bound alone: evaluate(..., unjudged='relevant'))"))
    if type(run).__module__.startswith(("dask.", "pyspark.")):  # told before evaluating a whole cluster's run
        raise TypeError("report() takes a run held in memory, a file or a Parquet dataset (streamed), not a "
                        f"{type(run).__module__}.{type(run).__name__}: evaluate it there (ef.evaluate, "
                        "ef.diagnostics) and report from the per-question table, or write the run to Parquet "
                        "and pass the path")
    query_texts(queries, caller="report")
    check("report", "n_changes", n_changes, POSITIVE_INT)
    cols = check_columns(columns, caller="report")
    step = progress or (lambda label: None)
    seg_table = resolve_segments(segments, qrels, columns=cols)
    conv, names, rel = opts.conventions, opts.names, opts.conventions["rel"]
    # read once, text kept; the conflicting labels resolved travel on the checked golden set
    checked = read_golden_set(qrels, columns=cols, conflicts=conv["conflicts"])
    golden = checked if isinstance(checked, pd.DataFrame) else checked.table
    if measures is None and "start" in golden.columns and (chunks is not None or is_span_input(run, cols)):
        opts = report_options(measures=span_defaults(run, chunks), **options)  # a span golden set, chunks known
        conv, names, rel = opts.conventions, opts.names, opts.conventions["rel"]
    if queries is None:
        queries = question_texts(golden)

    step("ranking and judging")
    # rankings are checked against the cutoffs asked for (measures, stages), not the curve's
    asked = list(dict.fromkeys([*opts.measures, *stage_measures(opts.stages, rel=conv["rel"])]))
    per_all, raw = evaluate_with_diagnostics(run, checked, opts.all_measures(), columns=cols,
                                               memory_budget=memory_budget, rollup=rollup, chunks=chunks,
                                               min_overlap=min_overlap, tokens=tokens, shallow=asked,
                                               threads=opts.threads, **conv)
    unit = str(per_all.pop("unit").iloc[0]) if "unit" in per_all.columns else "document"
    if "system" not in per_all.columns:
        per_all.insert(0, "system", "system")
    systems = list(pd.unique(per_all["system"]))
    _check_systems(systems, opts)
    rows = MeasureRows(per_all)
    del per_all  # held compactly by rows from here on
    per_q = report_per_question(rows, names, systems)
    n_questions = int(per_q.groupby("system")["query_id"].nunique().max())
    per_q, seg_cols, seg_diag = join_segments(per_q, seg_table)

    step("resampling: summary intervals")
    summary = summary_table(per_q, resampling=opts.resampling, systems=systems, measures=names)
    bound_rows: list[dict] = []
    human_pq = None
    if human_qrels is not None:
        step("prediction-powered intervals")
        if "judge" in golden.columns and is_human(golden["judge"]).any():
            import warnings
            warnings.warn(f"report: qrels holds {int(is_human(golden['judge']).sum()):,} labels by people (judge "
                          "column) while human_qrels= is given: the prediction-powered mean takes qrels as the "
                          "model's labels on every question, so people's labels mixed into it bias the "
                          "correction; pass the model's labels alone as qrels", UserWarning, stacklevel=2)
        summary, ppi_rows, human_pq = _with_ppi(summary, per_q, run, human_qrels, opts, cols, rollup)
        bound_rows += ppi_rows
    if unjudged == "bounds":
        step("bounds for the unjudged")
        summary, rows_b = _with_bounds(summary, run, golden, opts, cols, rollup)
        bound_rows += rows_b
    step("resampling: segments")
    by_segment = segment_table(per_q, seg_cols, summary, interval=opts.resampling, systems=systems,
                               measures=names)
    step("resampling: paired comparisons")
    comparisons = comparison_table(per_q, systems=systems, measures=names, baseline=opts.baseline,
                                   test=opts.test, correction=opts.correction,
                                   n_resamples=opts.n_resamples, seed=opts.seed, confidence=opts.confidence,
                                   threads=opts.threads)
    if human_pq is not None and len(comparisons):
        comparisons = _ppi_comparisons(comparisons, per_q, human_pq, opts)
    changes = change_table(per_q, systems=systems, measures=names, baseline=opts.baseline, n=n_changes,
                           queries=queries)
    step("metric@k curves")
    curves = curve_table(rows.select(opts.curve_names, compact=True), opts.curve, opts.curve_ks, rel=rel,
                         confidence=opts.confidence, systems=systems)
    stages_t = stage_table(rows.select(opts.stage_names, compact=True), opts.stages, rel=rel, interval=opts.resampling)
    step("sample-size planning")
    planning = planning_table(per_q, n_questions=n_questions, confidence=opts.confidence)
    step("diagnostics")
    judged = aggregate(rows.select(opts.judged_names + opts.unjudged_names))
    provenance = _provenance_rows(run, golden, opts, cols, rollup, judged) if "judge" in golden.columns else []
    unit_rows = [diagnostic_row("unit", detail=(
        "documents are pages: the chunks were rolled up with rollup= (each page ranks at its best "
        "chunk, a page is as relevant as its most relevant chunk)" if unit == "page"
        else "documents are the run's own ids (no roll-up)"))]
    diagnostics = report_diagnostics(per_q, raw, judged, summary, conventions=conv, measures=opts.measures,
                                    n_questions=n_questions, systems=systems, confidence=opts.confidence,
                                    extra_rows=[*seg_diag, *unit_rows, *bound_rows, *provenance],
                                    unjudged=unjudged)
    issue_warnings(diagnostics)

    metadata = report_metadata(opts, systems=systems, segments=seg_cols, n_questions=n_questions,
                               comparisons=comparisons)
    metadata["unit"] = unit
    # the run as a table once more when it is one in memory (files: hashed by their bytes),
    # for its fingerprint and the rankings behind the top changes
    plain = rollup is None and chunks is None
    table = _run_table(run, cols, conv, plain=plain)
    # a run given by path: only the top changes' questions are read (a filter on a Parquet dataset)
    ranked = table if table is not None or not plain or changes.empty else question_rows(
        run, changes["query_id"], columns=cols, duplicates=conv["duplicates"], ascending=conv["ascending"])
    rankings = ranking_table(ranked, golden, changes, rel=rel, ties=conv["ties"], ascending=conv["ascending"],
                             k=min(RANKINGS_DEPTH, conv["depth"] or RANKINGS_DEPTH))
    metadata["fingerprints"] = fingerprints(
        golden, (run_digests(table) if table is not None
                 else source_digests(run, read_run_as_given, columns=cols, duplicates=conv["duplicates"],
                                     ascending=conv["ascending"])),
        conventions=conv, measures=names, version=__version__,
        chunks=_chunks_digest(chunks))
    tables = {"summary": summary, "per_question": per_q, "by_segment": by_segment, "comparisons": comparisons,
              "diagnostics": diagnostics, "stages": stages_t, "curves": curves, "planning": planning, "changes": changes,
              "rankings": rankings}
    return Report.from_tables(tables, metadata, warnings_issued=True)
