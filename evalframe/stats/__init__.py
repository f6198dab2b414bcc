"""Statistics on the per-question table: intervals, paired tests, sample-size planning.

Everything here takes the tidy per-question table produced by ``evaluate()``
(columns ``system, query_id, measure, value`` plus optional segment columns; one row
per system, question and measure) and returns tidy tables with fixed column names.
The package never looks at runs or qrels.

Conventions, written once:

- A question is the unit of sampling. Intervals and tests treat the questions of the
  golden set as a random sample from a population of similar questions. With
  ``cluster=`` (``summarize`` and ``compare``) the unit is the cluster instead: whole
  clusters are resampled or sign-flipped, and ``t`` uses a cluster-robust standard error.
- A measure is *binary* for a system (and segment) when each of that system's
  per-question values is exactly 0 or 1 (Success@k, a 0/1 Recall@k ...); the decision
  never looks at other systems. Its standard error is the spec's ``sqrt(p (1 - p) / n)``.
- Paired comparisons use ``d = value_b - value_a`` per shared question, so
  ``diff = mean_b - mean_a`` and a positive diff means ``system_b`` scores higher.
  With a ``baseline`` the baseline is always ``system_a``.
- p-values are two-sided unless ``compare(alternative="greater" | "less")`` asks for one
  tail (column ``alternative``).
- Every resampling step starts from ``numpy.random.default_rng(seed)``, separately for
  each set of questions, so one system's interval or one pair's p-value does not depend
  on which other systems are in the table, and the same seed gives the same numbers.
- Resampling is chunked, vectorised numpy: a (resamples x questions) matrix of
  bootstrap counts or sign flips is multiplied by a (questions x columns) matrix of
  values or differences, so every system / pair sharing the questions shares the work.

Layout (each file imports only the ones above it):

- ``validation``: parameter checks (one message template) and the per-question table check;
- ``resampling``: chunked bootstrap means, jackknife, sign flips, cluster sums;
- ``effects``: Cohen's d_z, wins / ties / losses;
- ``pairing``: two systems' values paired by question (``PairedData``), the pairs of systems;
- ``paired_tests``: the registry of paired tests, one function per test;
- ``corrections``: ``adjust_pvalues``, Tukey HSD and randomised Tukey HSD, applied per family;
- ``paired_intervals``: the interval of a paired difference, and adjusted for the family;
- ``intervals``: ``summarize``, one function per interval;
- ``paired``: ``compare``: options, test, interval and correction into one table;
- ``planning``: standard error, half-width, power, sample sizes, ``planning_curve``;
- ``ppi``: ``summarize_ppi``, ``compare_ppi``: model labels corrected with a few human ones (PPI++);
- ``sequential``: anytime-valid statistics: ``confidence_sequence``, ``sequential_compare``
  (betting confidence sequences, e-values, anytime p-values), ``e_bh``;
- ``collection``: evaluating the evaluation: ``rank_correlation``, ``asl_curve``,
  ``discriminative_power``.
"""
from __future__ import annotations

from .collection import asl_curve, discriminative_power, rank_correlation
from .corrections import adjust_pvalues
from .intervals import summarize
from .paired import compare
from .ppi import compare_ppi, summarize_ppi
from .sequential import confidence_sequence, e_bh, sequential_compare
from .planning import (
    detectable_difference,
    half_width,
    n_for_difference,
    n_for_half_width,
    planning_curve,
    power,
    standard_error,
)
from .validation import (
    CiMethod,
    Correction,
    SummaryMethod,
    TestName,
    check_confidence,
    check_resamples,
    check_seed,
)

__all__ = [
    "summarize",
    "compare",
    "summarize_ppi",
    "compare_ppi",
    "adjust_pvalues",
    "standard_error",
    "half_width",
    "n_for_half_width",
    "n_for_difference",
    "detectable_difference",
    "power",
    "planning_curve",
    "rank_correlation",
    "asl_curve",
    "discriminative_power",
    "confidence_sequence",
    "sequential_compare",
    "e_bh",
]
