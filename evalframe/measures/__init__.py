"""Retrieval measures: names, parameters, and one vectorised function per family.

Conventions (each one tested in ``tests/measures/test_measures.py``)
--------------------------------------------------------------------
Ranking
    Documents are ranked by score descending, scores compared as float64. Ties
    are broken by ``doc_id`` descending (byte-wise), as trec_eval does; the run's
    rank column is ignored.  Options: ``ties="doc_id_asc"``, ``ties="rank"``.
    A run with ranks and no scores is ordered by rank ascending: its score is
    ``-rank`` (:mod:`evalframe.canonical`), so repeated ranks are ties, broken as above.
Which questions count
    By default every question of the golden set (``missing="zero"``): a question
    a system did not answer scores 0 on every measure.  ``missing="drop"`` gives
    trec_eval's default: only questions both in the run and the golden set.
    Run questions absent from the golden set are always dropped, with a warning.
Relevant
    A document is relevant when its label is ``>= rel`` (default 1).  A retrieved
    document the golden set does not judge is not relevant.  Labels below 0 are
    handled as trec_eval handles them: not relevant for every measure, and
    *unjudged* for ``bpref``, ``Judged@k`` and the condensed (``judged_only``)
    lists.
Empty relevant set
    A question with no relevant document scores 0 on R@k, AP, RR, nDCG, Rprec,
    bpref and Success@k (it still counts in the mean; a warning names it).
Cutoffs
    ``P@k`` divides by k even when fewer than k documents were returned; ``R@k``
    divides by the number of relevant documents; ``AP@k`` (trec_eval's
    ``map_cut``) also divides by the number of relevant documents.
nDCG
    gain ``2**label - 1`` by default (the spec's), ``gain="linear"`` for trec_eval's
    (gain = label); labels <= 0 gain 0.  Discount ``log2(rank + 1)``.  The ideal
    ranking orders *all* judged documents of the question by gain; nDCG is 0 when
    the ideal DCG is 0.  ``nDCG`` has no relevance threshold: every positive
    label earns its gain.
Aggregation
    Means over questions, except the counts ``NumRet``, ``NumRel``,
    ``NumRelRet`` which trec_eval sums (see :func:`evalframe.aggregate`).

Names
-----
A measure is an immutable :class:`Measure` whose canonical name round-trips::

    >>> str(parse_measure("nDCG@10"))
    'nDCG@10'
    >>> str(parse_measure("ndcg_cut_10"))   # trec_eval's name, trec_eval's meaning
    "nDCG(gain='linear')@10"
    >>> str(parse_measure("P(rel=2)@5"))
    'P(rel=2)@5'

Parameters equal to their default are left out of the name.

Every family of trec_eval's (version 10) other measures follows the same
conventions; where trec_eval defines a measure in a particular way, the family
follows trec_eval and its module says so.  ``parse_measure`` also reads
trec_eval's names of them: ``iprec_at_recall_0.20`` is ``IPrec(recall=0.2)``,
``11pt_avg`` ``IPrecAvg``, ``gm_map`` ``GMAP`` (geometric mean, values floored
at :data:`MIN_GEO_MEAN`), ``Rprec_mult_0.20`` ``Rprec(mult=0.2)``, ``utility``
``Utility``, ``ndcg.1=3,2=9`` ``nDCG(gains=((1, 3.0), (2, 9.0)))``,
``ndcg_rel`` ``nDCGrel``, ``Rndcg`` ``RnDCG``, ``relative_P_5`` ``RelP@5``,
``set_P``/``set_recall``/``set_relative_P``/``set_map``/``set_F`` ``SetP``,
``SetR``, ``SetRelP``, ``SetAP``, ``SetF(beta=1.0)`` (trec_eval's parameter x
is beta ** 2), ``num_nonrel_judged_ret`` ``NumNonrelJudgedRet``, ``rbp`` /
``rbp_resid`` ``RBP(p=0.9)`` / ``RBP(residual=True)``, ``unj_5``
``Unjudged@5``; ``infAP``, ``binG`` and ``G`` keep their names.  trec_eval's
``runid``, ``num_q`` and ``relstring`` are not per-question numbers;
``evalframe trec-eval`` prints them (:mod:`evalframe.trec_eval`).

Unjudged and negative labels (trec_eval's measures)
    A retrieved document the golden set does not judge is "not in the pool";
    one with a negative label is "in the pool but unjudged" (infAP skips the
    first and counts the second; both are unjudged for ``Unjudged@k`` and
    ``RBP(residual=True)``).

Other evaluators' measures (ir_measures' names)
    ``ERR@k`` and ``nERR@k`` (cascade model, :mod:`.cascade`; ``max_rel=4`` as
    gdeval), ``DCG@k`` (not normalised, nDCG's gains), ``R_cap@k`` (BEIR's
    capped recall: an alias of ``RelP@k``), ``Hole@k`` (an alias of
    ``Unjudged@k``); ir_measures' ``nDCG(dcg='exp-log2')@10`` is ``nDCG@10``
    and its ``nDCG@10`` (``dcg='log2'``) is ``nDCG(gain='linear')@10``.
    The C/W/L measures of cwl_eval (``cwl.py``: ``SDCG(max_rel=3)@10``,
    ``INST(T=1,max_rel=3)``, ``INSQ``, ``BPM@k``, ``NERR8@k`` .. ``NERR11``;
    gains scaled to [0, 1] by ``min_rel``/``max_rel``, rankings read to 1000
    ranks), ``Compat(p=0.95)`` (``compat.py``) and ndeval's intent-aware
    measures (``diversity.py``: ``alpha_nDCG@20``, ``alpha_DCG@20``,
    ``ERR_IA@20``, ``nERR_IA@20``, ``NRBP``, ``nNRBP``, ``AP_IA``,
    ``P_IA@10``, ``StRecall@10``) keep ir_measures' names and parameters.
Diversity golden sets
    A golden set may carry a ``subtopic`` column (TREC Web's diversity qrels):
    one label per (question, subtopic, document).  The intent-aware measures
    read it (a document is relevant to a subtopic when its label for it is
    >= ``rel``; a golden set without one is one subtopic per question); every
    other measure reads each document's largest label over its subtopics.

Layout
------
``base`` (Measure, Family, ParamSpec, the registry), ``names`` (the parser),
``aggregation`` (Mean, Sum, GeoMean: ``partial`` -> ``combine`` ->
``finalize``), ``intermediates`` (what families share: running counts, one
DCG, one ideal DCG), the families by kind (``cutoff``, ``rank``, ``ap``,
``dcg``, ``sets``, ``cascade``, ``cwl``, ``compat``, ``diversity``),
``registry`` (one line per family) and ``custom``
(:func:`register_measure`: your own family, registered at run time).  Parameters are
checked when a Measure is built: ``RBP(p=2)`` fails at parse with
``RBP: p must be a number in [0, 1], got 2``; a required parameter
(``ParamSpec(required=True)``) must be given (``INST`` alone fails, ``INST(max_rel=3)``
parses), and a family's ``validate`` checks its parameters together
(``SDCG(min_rel=2,max_rel=2)@10`` fails).
"""
from __future__ import annotations

__all__ = ["Measure", "Family", "ParamSpec", "parse_measure", "parse_measures", "FAMILIES", "DEFAULT_MEASURES",
           "resolve", "compute", "register_measure", "Aggregation", "Mean", "Sum", "GeoMean", "MIN_GEO_MEAN"]

import numpy as np

from .._judged import Judged
from .aggregation import MIN_GEO_MEAN, Aggregation, GeoMean, Mean, Sum
from .base import FAMILIES, Family, Measure, ParamSpec
from .custom import register_measure
from .names import DEFAULT_MEASURES, parse_measure, parse_measures
from .registry import REGISTRY


def resolve(m: Measure, *, rel: int = 1) -> Measure:
    """Apply evaluate()'s ``rel`` convention to a measure that does not pin its own.

    Examples
    --------
    >>> from evalframe.measures import parse_measure, resolve
    >>> str(resolve(parse_measure("P@5"), rel=2))
    'P(rel=2)@5'
    >>> str(resolve(parse_measure("P(rel=3)@5"), rel=2))   # a measure's own rel is kept
    'P(rel=3)@5'
    """
    if rel != 1 and "rel" in FAMILIES[m.family].params and dict(m.params).get("rel") is None:
        return m.with_params(rel=rel)
    return m


def compute(J: Judged, measures: list[Measure]) -> np.ndarray:
    """Values of ``measures`` on every group of ``J``: array (n_groups, n_measures).

    Examples
    --------
    >>> import evalframe as ef
    >>> from evalframe.engine.memory import prepare
    >>> from evalframe.measures import compute, parse_measures
    >>> sso = ef.datasets.load_sso()
    >>> compute(prepare(sso.runs, sso.qrels), parse_measures(["P@5", "RR"])).tolist()
    [[0.4, 0.5]]
    """
    out = np.zeros((J.n_groups, len(measures)), dtype=np.float64)
    by_family: dict[str, list[int]] = {}
    for i, m in enumerate(measures):
        by_family.setdefault(m.family, []).append(i)
    for fam, idx in by_family.items():
        vals = REGISTRY.get(fam).fn(J, [measures[i] for i in idx])
        for i, v in zip(idx, vals):
            out[:, i] = v
    return out
