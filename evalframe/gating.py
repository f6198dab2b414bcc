"""``gate``: is a candidate not worse than the baseline? A decision for CI.

Per measure, a one-sided non-inferiority test of the paired differences
``d = candidate - baseline`` with a margin, Holm across the measures:

- **pass** when ``H0: E[d] <= -margin`` is rejected (the candidate is not worse than the
  baseline by more than the margin) for the measure;
- **fail** when ``H0: E[d] >= -margin`` is rejected (the candidate is significantly worse
  than the baseline beyond the margin);
- **inconclusive** otherwise: the questions cannot tell at this n; the planning
  functions (:func:`evalframe.stats.n_for_difference`) say how many would.

The gate as a whole fails if any measure fails, passes if every measure passes, and is
inconclusive otherwise (exit statuses 1, 0 and 3 of ``evalframe gate``).
"""
from __future__ import annotations

import contextlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from html import escape

import numpy as np
import pandas as pd

from .errors import EvalframeInputError, InputProblem

__all__ = ["gate", "GateResult", "gate_per_question", "EXIT_STATUS"]

#: exit status of ``evalframe gate`` for each decision (2 is a user error, as every command)
EXIT_STATUS = {"pass": 0, "fail": 1, "inconclusive": 3}

#: the power the "questions needed" of an inconclusive measure aims at
PLANNING_POWER = 0.8


@dataclass(frozen=True)
class GateResult:
    """The gate's decision and the per-measure table behind it.

    Attributes
    ----------
    decision : {"pass", "fail", "inconclusive"}
    table : DataFrame
        One row per measure: ``measure, n, mean_baseline, mean_candidate, diff, ci_low,
        ci_high, p_noninferior, p_noninferior_adjusted, p_worse, p_worse_adjusted,
        decision, n_needed`` (``ci_low, ci_high``: the ``1 - 2 alpha`` interval of diff,
        whose ends are the one-sided ``1 - alpha`` bounds; ``n_needed``: questions an
        inconclusive measure would need, <NA> otherwise).
    margin, alpha : float
    method : str, ``"t"`` (paired t) or ``"betting"`` (anytime-valid, ``sequential=True``)
    baseline, candidate : str, the systems' names

    Examples
    --------
    >>> import evalframe as ef
    >>> qrels = {f"q{i}": {"r": 1} for i in range(40)}
    >>> run = {f"q{i}": {"r": 2.0, "x": 1.0} for i in range(40)}
    >>> g = ef.gate(qrels, run, run, "RR", margin=0.01)
    >>> g.decision, g.exit_status, g.table.loc[0, "decision"]
    ('pass', 0, 'pass')
    >>> print(g.to_markdown().splitlines()[0])
    ## Retrieval gate: PASS
    """

    decision: str
    table: pd.DataFrame
    margin: float
    alpha: float
    method: str
    baseline: str = "baseline"
    candidate: str = "candidate"

    @property
    def exit_status(self) -> int:
        """0 pass, 1 fail, 3 inconclusive."""
        return EXIT_STATUS[self.decision]

    def _reason(self, row) -> str:
        if row.decision == "pass":
            return f"not worse than the baseline by more than {self.margin:g}"
        if row.decision == "fail":
            return f"worse than the baseline by more than {self.margin:g}"
        need = "" if pd.isna(row.n_needed) else f"; about {int(row.n_needed)} questions would tell"
        return f"cannot tell at n = {int(row.n)}{need}"

    def to_text(self) -> str:
        """Plain text: the decision, then one line per measure."""
        lines = [f"gate: {self.decision.upper()} ({self.candidate} vs {self.baseline}, margin {self.margin:g}, "
                 f"alpha {self.alpha:g}, {self.method}, Holm across {len(self.table)} measures)"]
        for row in self.table.itertuples(index=False):
            lines.append(f"  {row.decision:<12} {row.measure}: {row.mean_baseline:.4f} -> {row.mean_candidate:.4f} "
                         f"(diff {row.diff:+.4f} [{row.ci_low:+.4f}, {row.ci_high:+.4f}]) - {self._reason(row)}")
        return "\n".join(lines) + "\n"

    def __str__(self) -> str:
        return self.to_text()

    def to_markdown(self) -> str:
        """Markdown for a CI job summary: a heading with the decision and a table."""
        def cell(v) -> str:
            return escape(str(v)).replace("|", "\\|")
        out = [f"## Retrieval gate: {self.decision.upper()}", "",
               f"{cell(self.candidate)} vs {cell(self.baseline)}: margin {self.margin:g}, alpha {self.alpha:g}, "
               f"{self.method}, Holm across {len(self.table)} measures.", "",
               "| measure | decision | baseline | candidate | diff | interval | p (not worse) | p (worse) | n | "
               "questions needed |",
               "|---|---|---:|---:|---:|---|---:|---:|---:|---:|"]
        for row in self.table.itertuples(index=False):
            need = "" if pd.isna(row.n_needed) else str(int(row.n_needed))
            out.append(f"| {cell(row.measure)} | {row.decision} | {row.mean_baseline:.4f} | {row.mean_candidate:.4f} "
                       f"| {row.diff:+.4f} | [{row.ci_low:+.4f}, {row.ci_high:+.4f}] "
                       f"| {row.p_noninferior_adjusted:.4g} | {row.p_worse_adjusted:.4g} | {int(row.n)} | {need} |")
        return "\n".join(out) + "\n"

    def to_junit(self) -> str:
        """JUnit XML: one test case per measure; a fail is a failure, an inconclusive a skip."""
        from xml.etree import ElementTree as ET
        n_fail = int((self.table.decision == "fail").sum())
        n_skip = int((self.table.decision == "inconclusive").sum())
        suite = ET.Element("testsuite", name="evalframe gate", tests=str(len(self.table)),
                           failures=str(n_fail), errors="0", skipped=str(n_skip))
        for row in self.table.itertuples(index=False):
            case = ET.SubElement(suite, "testcase", classname="evalframe.gate", name=str(row.measure))
            msg = (f"{row.measure}: diff {row.diff:+.4f} [{row.ci_low:+.4f}, {row.ci_high:+.4f}], "
                   f"{self._reason(row)}")
            if row.decision == "fail":
                ET.SubElement(case, "failure", message=msg, type="worse")
            elif row.decision == "inconclusive":
                ET.SubElement(case, "skipped", message=msg)
        suites = ET.Element("testsuites", name="evalframe gate", tests=str(len(self.table)),
                            failures=str(n_fail), errors="0", skipped=str(n_skip))
        suites.append(suite)
        return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"


@contextlib.contextmanager
def _quiet_unpaired():
    """Silence the unpaired-questions warning of a repeated test of the same pairs."""
    import warnings

    from .errors import UnpairedQuestionsWarning
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnpairedQuestionsWarning)
        yield


def _check(margin, alpha) -> None:
    from ._validation import CONFIDENCE, Interval, Satisfies, check
    check("gate", "margin", margin, Interval(float, 0, None))
    check("gate", "alpha", alpha, CONFIDENCE)
    check("gate", "alpha", alpha, Satisfies(  # at 0.5 both one-sided tests could reject at once
        lambda a: a < 0.5, "a level in (0, 0.5): at 0.5 or more the tests of 'not worse' and 'worse' can both reject"))


def gate_per_question(per_question: pd.DataFrame, *, baseline: str, candidate: str, margin: float = 0.0,
                      alpha: float = 0.05, sequential: bool = False) -> GateResult:
    """The gate on a per-question table already computed (see :func:`gate`).

    Parameters
    ----------
    per_question : DataFrame
        ``system, query_id, measure, value`` holding both systems.
    baseline, candidate : str
        The two systems' names in the ``system`` column.
    margin, alpha, sequential
        As :func:`gate`.

    Returns
    -------
    GateResult
    """
    from .stats import adjust_pvalues, compare, n_for_difference, sequential_compare
    _check(margin, alpha)
    from ._validation import BOOLEAN, check
    check("gate", "sequential", sequential, BOOLEAN)
    systems = set(per_question["system"]) if "system" in per_question.columns else set()
    missing = [s for s in (baseline, candidate) if s not in systems]
    if missing or baseline == candidate:
        raise EvalframeInputError("per_question", [InputProblem(
            f"the gate needs two systems, baseline {baseline!r} and candidate {candidate!r} "
            f"(found {sorted(map(str, systems))[:10]})", "name two different systems of the table")])
    pq = per_question[per_question["system"].isin([baseline, candidate])]
    if sequential:
        from .stats.sequential import measure_bounds
        measure_bounds(list(pd.unique(pq["measure"])), None, func="gate")  # a range for each, or one clear error
        ni = sequential_compare(pq, baseline=baseline, null=-margin, alternative="greater",
                                confidence=1 - alpha)
        with _quiet_unpaired():  # the same questions as the first: told once
            worse = sequential_compare(pq, baseline=baseline, null=-margin, alternative="less",
                                       confidence=1 - alpha)
            two = sequential_compare(pq, baseline=baseline, confidence=1 - 2 * alpha)
        method = "betting"
    else:
        shifted = pq.assign(value=np.where(pq["system"] == candidate, pq["value"] + margin, pq["value"]))
        ni = compare(shifted, baseline=baseline, alternative="greater", correction="none")
        with _quiet_unpaired():
            worse = compare(shifted, baseline=baseline, alternative="less", correction="none")
            two = compare(pq, baseline=baseline, correction="none", confidence=1 - 2 * alpha)
        method = "t"
    m = len(ni)
    out = pd.DataFrame({"measure": ni["measure"].to_numpy(), "n": ni["n"].to_numpy()})
    out["mean_baseline"] = ni["mean_a"].to_numpy()
    out["mean_candidate"] = (ni["mean_b"].to_numpy() - (0 if sequential else margin))
    out["diff"] = out["mean_candidate"] - out["mean_baseline"]
    out["ci_low"], out["ci_high"] = two["ci_low"].to_numpy(), two["ci_high"].to_numpy()
    p_ni = ni["p_value"].to_numpy(dtype=float)
    p_w = worse["p_value"].to_numpy(dtype=float)
    out["p_noninferior"] = p_ni
    out["p_noninferior_adjusted"] = adjust_pvalues(p_ni, "holm") if m else p_ni
    out["p_worse"] = p_w
    out["p_worse_adjusted"] = adjust_pvalues(p_w, "holm") if m else p_w
    decision = np.where(out["p_worse_adjusted"] < alpha, "fail",
                        np.where(out["p_noninferior_adjusted"] < alpha, "pass", "inconclusive"))
    out["decision"] = decision
    # questions needed: a one-sided test at Holm's strictest level (alpha / m) for the
    # distance between the observed diff and the margin, at the observed sd of d
    sd = _sd_diff(pq, baseline, candidate, out["measure"])
    need = []
    for dec, d, s in zip(decision, out["diff"].to_numpy() + margin, sd):
        if sequential or dec != "inconclusive" or not (s > 0) or not np.isfinite(d) \
                or abs(d) <= 1e-12 * max(1.0, float(s)):  # no difference to detect (float noise)
            need.append(pd.NA)
        else:
            need.append(n_for_difference(abs(float(d)), sd_diff=float(s), alpha=alpha / max(m, 1),
                                         power=PLANNING_POWER, two_sided=False))
    out["n_needed"] = pd.array(need, dtype="Int64")
    overall = "fail" if (decision == "fail").any() else "pass" if m and (decision == "pass").all() \
        else "inconclusive"
    return GateResult(decision=overall, table=out, margin=float(margin), alpha=float(alpha), method=method,
                      baseline=str(baseline), candidate=str(candidate))


def _sd_diff(pq: pd.DataFrame, baseline: str, candidate: str, measures: Iterable[str]) -> np.ndarray:
    wide = pq.pivot_table(index=["measure", "query_id"], columns="system", values="value", aggfunc="first")
    d = (wide[candidate] - wide[baseline]).dropna()
    sd = d.groupby(level="measure").std(ddof=1)
    return sd.reindex(list(measures)).to_numpy(dtype=float)


def gate(qrels, baseline, candidate, measures: str | Sequence[str], *, margin: float = 0.0,
         alpha: float = 0.05, sequential: bool = False, names: tuple[str, str] = ("baseline", "candidate"),
         baseline_system: str | None = None, **evaluate_options) -> GateResult:
    """Is the candidate run not worse than the baseline run? A decision for CI.

    Parameters
    ----------
    qrels : DataFrame, path or dict
        The golden set.
    baseline, candidate : DataFrame, path or dict
        The two runs (one system each). ``baseline`` may also be a saved report
        (:class:`evalframe.Report`, e.g. ``ef.read_report(DIR)`` of the main branch): its
        per-question values of ``baseline_system`` are the baseline's, the candidate is
        evaluated with the report's conventions, and a golden set whose fingerprint is
        not the report's is refused.
    measures : name or list of names
        The measures that must not get worse (e.g. ``["R@5", "nDCG@10"]``).
    margin : float
        How much worse still counts as not worse (in the measure's units, e.g. 0.01).
    alpha : float
        Level of each one-sided test, Holm-adjusted across the measures.
    sequential : bool
        Anytime-valid tests (:func:`evalframe.stats.sequential_compare`): valid however
        often the gate is re-run as labelled questions arrive; less powerful at one n.
    names : (str, str)
        The systems' names in the result.
    baseline_system : str, optional
        With a saved report: its system to gate against (default: the report's baseline,
        or its only system).
    **evaluate_options
        Passed to :func:`evalframe.evaluate` (``rel``, ``ties``, ``missing``...).

    Returns
    -------
    GateResult
        ``decision`` ("pass", "fail", "inconclusive"), ``exit_status`` (0, 1, 3), the
        per-measure ``table``, and ``to_text()``, ``to_markdown()``, ``to_junit()``.

    Notes
    -----
    With ``d = candidate - baseline`` per question and ``delta = margin``: the
    non-inferiority test rejects ``H0: E[d] <= -delta`` (paired t on ``d + delta``,
    one-sided), the inferiority test ``H0: E[d] >= -delta``; each family of m p-values
    is Holm-adjusted. A measure passes (fails) when its adjusted non-inferiority
    (inferiority) p-value is below alpha. An inconclusive measure gets the n at which a
    one-sided t-test at ``alpha / m`` would have power 0.8 for the observed
    ``|diff + delta|`` at the observed sd of d (:func:`evalframe.stats.n_for_difference`;
    not given with ``sequential=True``: there the answer is to keep labelling).

    Examples
    --------
    The candidate loses the relevant document's first place on one question in four:

    >>> import evalframe as ef
    >>> qrels = {f"q{i}": {"r": 1} for i in range(40)}
    >>> base = {f"q{i}": {"r": 2.0, "x": 1.0} for i in range(40)}
    >>> cand = {f"q{i}": {"r": 2.0 if i % 4 else 0.5, "x": 1.0} for i in range(40)}
    >>> g = ef.gate(qrels, base, cand, ["RR"], margin=0.01)
    >>> g.decision, g.exit_status, round(float(g.table["diff"][0]), 3)
    ('fail', 1, -0.125)
    """
    from .evaluation import evaluate
    from .measures import parse_measures
    if isinstance(measures, str):
        measures = [measures]
    from ._validation import Satisfies, check, error
    check("gate", "names", names, Satisfies(lambda v: isinstance(v, tuple) and len(v) == 2 and v[0] != v[1]
                                            and all(isinstance(n, str) for n in v), "two different names (str, str)"))
    measures = [str(m) for m in parse_measures(list(measures))]
    from .reporting import Report
    if isinstance(baseline, Report):
        per_q = _against_report(qrels, baseline, candidate, measures, names, baseline_system, evaluate_options)
        return gate_per_question(per_q, baseline=names[0], candidate=names[1], margin=margin, alpha=alpha,
                                 sequential=sequential)
    if baseline_system is not None:
        raise error("gate", "baseline_system", "None unless baseline is a saved report", baseline_system)
    runs = {names[0]: _one_system(baseline, "baseline"), names[1]: _one_system(candidate, "candidate")}
    per_q = evaluate(runs, qrels, measures, **evaluate_options)
    return gate_per_question(per_q, baseline=names[0], candidate=names[1], margin=margin, alpha=alpha,
                             sequential=sequential)


def _against_report(qrels, rep, candidate, measures: list[str], names: tuple[str, str],
                    system: str | None, options: dict) -> pd.DataFrame:
    """The baseline's per-question values from a saved report and the candidate's,
    evaluated on the same golden set (checked by fingerprint) with the same conventions."""
    from ._fingerprint import golden_digest
    from .evaluation import evaluate
    from .io import read_golden_set
    problems = []
    systems = rep.systems
    if system is None:
        system = rep.metadata.get("baseline") or (systems[0] if len(systems) == 1 else None)
    if system not in systems:
        problems.append(InputProblem(
            f"the saved report's systems are {systems[:10]}; "
            + ("which one is the baseline?" if system is None else f"{system!r} is not one of them"),
            "name it: baseline_system= (evalframe gate --baseline-system NAME)"))
    absent = [m for m in measures if m not in rep.measures]
    if absent:
        problems.append(InputProblem(f"the saved report has no {absent} (it has {rep.measures})",
                                     "gate on the report's measures, or recompute the baseline"))
    conv = {k: v for k, v in (rep.metadata.get("conventions") or {}).items()}
    # columns= and ascending= describe the candidate's table, not how questions are counted
    clash = {k: (v, conv.get(k)) for k, v in options.items()
             if k not in ("columns", "ascending") and k in conv and conv[k] != v}
    if clash:
        problems.append(InputProblem(
            "conventions differ from the saved report's: " + ", ".join(
                f"{k}={v!r} (report: {r!r})" for k, (v, r) in clash.items()),
            "evaluate the candidate with the report's conventions (leave them out), or recompute the baseline"))
    golden = read_golden_set(qrels, columns=options.get("columns"), conflicts=conv.get("conflicts", "error"))
    want = (rep.metadata.get("fingerprints") or {}).get("golden_set")
    got = golden_digest(golden if isinstance(golden, pd.DataFrame) else golden.table)
    if want != got:
        problems.append(InputProblem(
            "the golden set is not the one the saved report was computed on (fingerprint "
            f"{got} vs the report's {want})" if want else
            "the saved report has no golden-set fingerprint (written by an older evalframe): it cannot be "
            "checked against this golden set",
            "gate against a report computed on this golden set (evalframe report --out DIR), or gate two runs"))
    if problems:
        raise EvalframeInputError("baseline report", problems)
    conv.update({k: v for k, v in options.items() if k in ("columns", "ascending")})
    pq = rep.per_question
    base = pq.loc[(pq["system"] == system) & pq["measure"].isin(measures), ["query_id", "measure", "value"]]
    cand = evaluate({names[1]: _one_system(candidate, "candidate")}, golden, measures,
                    **{k: v for k, v in conv.items() if k not in ("conflicts",)})
    return pd.concat([base.assign(system=names[0]), cand[["system", "query_id", "measure", "value"]]],
                     ignore_index=True)


def _one_system(run, what: str):
    """A run table of one system (its ``system`` column dropped); other inputs as given."""
    if isinstance(run, pd.DataFrame) and "system" in run.columns:
        systems = pd.unique(run["system"])
        if len(systems) > 1:
            raise EvalframeInputError(what, [InputProblem(
                f"the {what} run holds {len(systems)} systems ({list(systems)[:5]})",
                f"pass one system's rows, e.g. run[run.system == {systems[0]!r}]")])
        return run.drop(columns="system")
    return run
