"""Retrieval measures: names, parameters, and one vectorised function per family.

Conventions (each one tested in ``tests/test_conventions.py``)
-------------------------------------------------------------
Ranking
    Documents are ranked by score descending, scores compared as float64. Ties
    are broken by ``doc_id`` descending (byte-wise), as trec_eval does; the run's
    rank column is ignored.  Options: ``ties="doc_id_asc"``, ``ties="rank"``.
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
"""
from __future__ import annotations

__all__ = ["Measure", "parse_measure", "parse_measures", "FAMILIES", "DEFAULT_MEASURES", "compute"]

import ast
import re
from dataclasses import dataclass
from typing import Callable, Iterable

import numpy as np

from .ranking import Judged


@dataclass(frozen=True)
class Family:
    name: str
    cutoff: str  # "none" | "optional" | "required"
    params: dict  # name -> default
    fn: Callable  # fn(judged, measures) -> list[np.ndarray]
    aggregation: str = "mean"  # "mean" | "sum" | "gmean"
    doc: str = ""


FAMILIES: dict[str, Family] = {}
_LOWER: dict[str, str] = {}


def _register(name, cutoff, params, aggregation="mean", aliases=(), doc=""):
    def deco(fn):
        FAMILIES[name] = Family(name, cutoff, dict(params), fn, aggregation, doc)
        for a in (name,) + tuple(aliases):
            _LOWER[a.lower()] = name
        return fn
    return deco


@dataclass(frozen=True, order=True)
class Measure:
    """A measure: family, cutoff and non-default parameters.

    Create with :func:`parse_measure`; ``str(m)`` is the canonical name.
    """

    family: str
    k: int | None = None
    params: tuple = ()

    def __post_init__(self):
        fam = FAMILIES.get(self.family)
        if fam is None:
            raise ValueError(f"unknown measure family {self.family!r}; known: {', '.join(FAMILIES)}")
        if fam.cutoff == "none" and self.k is not None:
            raise ValueError(f"{self.family} takes no cutoff, got @{self.k}")
        if fam.cutoff == "required" and self.k is None:
            raise ValueError(f"{self.family} needs a cutoff, e.g. {self.family}@10")
        if self.k is not None and (not isinstance(self.k, (int, np.integer)) or isinstance(self.k, bool) or self.k < 1):
            raise ValueError(f"k must be an int >= 1, got {self.k!r}")
        clean = []
        for key, val in self.params:
            if key not in fam.params:
                raise ValueError(f"{self.family} has no parameter {key!r}; parameters: {list(fam.params) or 'none'}")
            _check_param(self.family, key, val)
            default = fam.params[key]
            if isinstance(default, float) and isinstance(val, (int, np.integer)) and not isinstance(val, bool):
                val = float(val)  # Rprec(mult=1) is Rprec(mult=1.0)
            if not (val == default and type(val) is type(default)):
                clean.append((key, val))
        order = list(fam.params)
        object.__setattr__(self, "params", tuple(sorted(clean, key=lambda kv: order.index(kv[0]))))

    def param(self, key):
        value = dict(self.params).get(key, FAMILIES[self.family].params[key])
        return 1 if key == "rel" and value is None else value

    @property
    def aggregation(self) -> str:
        return FAMILIES[self.family].aggregation

    def with_params(self, **kw) -> "Measure":
        d = dict(self.params)
        d.update(kw)
        return Measure(self.family, self.k, tuple(d.items()))

    def __str__(self) -> str:
        s = self.family
        if self.params:
            s += "(" + ",".join(f"{k}={v!r}" for k, v in self.params) + ")"
        if self.k is not None:
            s += f"@{self.k}"
        return s

    def __repr__(self) -> str:
        return f"Measure({str(self)!r})"


_PARAM_TYPES = {"rel": int, "gain": str, "judged_only": bool}


def _check_param(family, key, val):
    if key == "rel" and val is not None and (not isinstance(val, (int, np.integer)) or isinstance(val, bool)):
        raise ValueError(f"{family}: rel must be an int, got {val!r}")
    if key == "gain" and val not in ("exp", "linear"):
        raise ValueError(f"{family}: gain must be 'exp' (2**label - 1) or 'linear' (label), got {val!r}")
    if key == "judged_only" and not isinstance(val, bool):
        raise ValueError(f"{family}: judged_only must be True or False, got {val!r}")


# trec_eval names -> evalframe measure (with trec_eval's meaning)
_TREC_PATTERNS: list[tuple[re.Pattern, Callable[[re.Match], str]]] = [
    (re.compile(r"P_(\d+)"), lambda m: f"P@{m[1]}"),
    (re.compile(r"recall_(\d+)"), lambda m: f"R@{m[1]}"),
    (re.compile(r"success_(\d+)"), lambda m: f"Success@{m[1]}"),
    (re.compile(r"map_cut_(\d+)"), lambda m: f"AP@{m[1]}"),
    (re.compile(r"ndcg_cut_(\d+)"), lambda m: f"nDCG(gain='linear')@{m[1]}"),
    (re.compile(r"map"), lambda m: "AP"),
    (re.compile(r"recip_rank"), lambda m: "RR"),
    (re.compile(r"ndcg"), lambda m: "nDCG(gain='linear')"),
    (re.compile(r"num_ret"), lambda m: "NumRet"),
    (re.compile(r"num_rel"), lambda m: "NumRel"),
    (re.compile(r"num_rel_ret"), lambda m: "NumRelRet"),
]

_NAME = re.compile(r"^\s*([A-Za-z][A-Za-z0-9_]*)\s*(?:\((.*)\))?\s*(?:@\s*(\S+))?\s*$")


def parse_measure(name: "str | Measure") -> Measure:
    """Parse a measure name (evalframe's or trec_eval's) into a :class:`Measure`.

    Accepted forms: ``P@5``, ``R@100``, ``RR``, ``RR@10``, ``MRR@10`` (alias of
    RR: MRR is RR's mean), ``AP``, ``AP@100``, ``nDCG``, ``nDCG@10``,
    ``Rprec``, ``Success@10``, ``Judged@10``, ``bpref``, ``NumRet``, ``NumRel``,
    ``NumRelRet``, with parameters ``P(rel=2)@5``, ``nDCG(gain='linear')@10``,
    ``AP(judged_only=True)``; and trec_eval's names ``P_5``, ``recall_100``,
    ``map``, ``map_cut_10``, ``recip_rank``, ``ndcg``, ``ndcg_cut_10`` (linear
    gain, as in trec_eval), ``success_1``, ``num_ret``, ``num_rel``,
    ``num_rel_ret``, ``Rprec``, ``bpref``.

    Raises
    ------
    ValueError
        For an unknown family, a bad cutoff or parameter, with the accepted forms.
    """
    if isinstance(name, Measure):
        return name
    if not isinstance(name, str):
        raise TypeError(f"a measure name must be a str, got {type(name).__name__}")
    for pat, conv in _TREC_PATTERNS:
        m = pat.fullmatch(name.strip())
        if m:
            return parse_measure(conv(m))
    m = _NAME.match(name)
    if not m:
        raise ValueError(f"cannot parse measure {name!r}; expected e.g. 'nDCG@10', 'P(rel=2)@5', 'AP'")
    fam_raw, params_raw, k_raw = m.groups()
    fam = _LOWER.get(fam_raw.lower())
    if fam is None:
        raise ValueError(f"unknown measure {fam_raw!r} in {name!r}; known: {', '.join(FAMILIES)} "
                         "(and trec_eval names such as P_5, map, ndcg_cut_10)")
    k = None
    if k_raw is not None:
        try:
            k = int(k_raw)
        except ValueError:
            raise ValueError(f"{name!r}: cutoff must be an int >= 1, got {k_raw!r}") from None
    params = []
    if params_raw and params_raw.strip():
        for part in _split_params(params_raw):
            if "=" not in part:
                raise ValueError(f"{name!r}: parameters are key=value, got {part!r}")
            key, val = (x.strip() for x in part.split("=", 1))
            try:
                v = ast.literal_eval(val)
            except (ValueError, SyntaxError):
                v = val  # bare word, e.g. gain=linear
            params.append((key, v))
    return Measure(fam, k, tuple(params))


def _split_params(text: str) -> list[str]:
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
            continue
        depth += ch in "([{"
        depth -= ch in ")]}"
        cur += ch
    parts.append(cur)
    return [p for p in parts if p.strip()]


def parse_measures(measures: "str | Measure | Iterable[str | Measure] | None") -> list[Measure]:
    """Parse one or many measure names; ``None`` gives :data:`DEFAULT_MEASURES`.

    Names that denote the same measure (``ndcg_cut_10`` and
    ``nDCG(gain='linear')@10``) are computed and reported once, under the
    canonical name, in the order of their first appearance."""
    if measures is None:
        measures = DEFAULT_MEASURES
    if isinstance(measures, (str, Measure)):
        measures = [measures]
    out: list[Measure] = []
    for m in measures:
        pm = parse_measure(m)
        if pm not in out:
            out.append(pm)
    if not out:
        raise ValueError("measures is empty; pass at least one measure name, e.g. ['nDCG@10']")
    return out


# ---------------------------------------------------------------------------
# Families.  Each takes a Judged table and a list of measures of that family
# and returns one float64 array (one value per group) per measure.
# ---------------------------------------------------------------------------

def _view(J: Judged, m: Measure) -> Judged:
    return J.condensed if m.param("judged_only") else J


def _num_rel(J: Judged, rel: int) -> np.ndarray:
    return J.per_query_qrels(J.qrels_label >= rel)


def _safe_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    out = np.zeros_like(a, dtype=np.float64)
    np.divide(a, b, out=out, where=b > 0)
    return out


# ---------------------------------------------------------------------------
# Shared intermediates.  Each per-row array is computed once per ranked table
# (``J`` or ``J.condensed``) and parameter, cached on the table; a cutoff then
# costs O(groups), not O(rows).
# ---------------------------------------------------------------------------

def _memo(V: Judged, key, make):
    """Compute an intermediate once per ranked table (cached on the table)."""
    return V.cached(key, make)


def _group_first_row(V: Judged) -> np.ndarray:
    """Row index of each group's first document (== its end when empty)."""
    return _memo(V, "first", lambda: np.searchsorted(V.grp, np.arange(V.n_groups)))


def _nret(V: Judged) -> np.ndarray:
    """Documents retrieved per group (int)."""
    return _memo(V, "nret", lambda: np.bincount(V.grp, minlength=V.n_groups))


def _isrel(V: Judged, rel: int) -> np.ndarray:
    return _memo(V, ("isrel", rel), lambda: V.label >= rel)


def _R(V: Judged, rel: int) -> np.ndarray:
    """Relevant documents in the golden set, per group (float)."""
    return _memo(V, ("R", rel), lambda: _num_rel(V, rel))


def _count_in_group(V: Judged, mask: np.ndarray) -> np.ndarray:
    """Inclusive running count of ``mask`` within each group (int64)."""
    c = np.cumsum(mask, dtype=np.int64)
    if len(c) == 0:
        return c
    first = _group_first_row(V)
    offs = np.where(first > 0, c[np.maximum(first - 1, 0)], 0)
    return c - np.repeat(offs, _nret(V))


def _cumrel(V: Judged, rel: int) -> np.ndarray:
    """Relevant documents at or above each row, within its group (int64)."""
    return _memo(V, ("cumrel", rel), lambda: _count_in_group(V, _isrel(V, rel)))


def _nrelret(V: Judged, rel: int) -> np.ndarray:
    return _memo(V, ("nrr", rel), lambda: np.bincount(V.grp[_isrel(V, rel)], minlength=V.n_groups))


def _count_at(V: Judged, running: np.ndarray, k) -> np.ndarray:
    """Value of a running count at rank k (a number or one per group), as float;
    the group's total when it has fewer than k documents."""
    n = np.minimum(np.asarray(k, dtype=np.float64), _nret(V)).astype(np.int64)
    idx = _group_first_row(V) + n - 1
    if len(running) == 0:
        return np.zeros(V.n_groups)
    return np.where(n > 0, running[np.maximum(idx, 0)], 0).astype(np.float64)


def _disc(V: Judged) -> np.ndarray:
    """1 / log2(rank + 1) per row."""
    return _memo(V, "disc", lambda: 1.0 / np.log2(V.rank + 1.0))


def _sums_at_cutoffs(owner: np.ndarray, pos: np.ndarray, w: np.ndarray, n: int, ks) -> list[np.ndarray]:
    """For each cutoff k in ``ks`` (None: no cutoff), the sum of ``w`` over the
    entries at position <= k of each owner (group or question): n values.

    Entries are sorted by (owner, position).  The sums are accumulated entry by
    entry in that order, through one cutoff interval after the other, so they are
    bit-for-bit those of ``np.bincount(owner, w * (pos <= k))``; each entry is read
    once, and each cutoff costs O(n)."""
    bounds = sorted({k for k in ks if k is not None})
    interval = np.searchsorted(np.asarray(bounds, dtype=np.int64), pos)  # first cutoff >= pos
    total = np.zeros(n)
    at = {}
    for j, k in enumerate(bounds + [None]):
        if k is None and None not in ks:
            break
        rows = np.flatnonzero(interval == j)
        o = owner[rows]
        wj = w[rows].copy()
        head = np.concatenate(([True], o[1:] != o[:-1])) if len(o) else np.zeros(0, bool)
        wj[head] = total[o[head]] + wj[head]  # carry on from the sum through the last cutoff
        seen = np.bincount(o, minlength=n) > 0
        total = np.where(seen, np.bincount(o, weights=wj, minlength=n), total)
        at[k] = total
    return [at[k] for k in ks]


# rel=None means "evaluate()'s rel convention (default 1)"; an explicit rel=1 is
# kept in the name because it pins the threshold whatever the convention.
_COMMON = {"rel": None, "judged_only": False}


def _by_view_rel(ms):
    """Indices of ``ms`` grouped by (judged_only, rel)."""
    out: dict = {}
    for i, m in enumerate(ms):
        out.setdefault((m.param("judged_only"), m.param("rel")), []).append(i)
    return out.items()


def _hits(J: Judged, m: Measure) -> np.ndarray:
    V = _view(J, m)
    rel = m.param("rel")
    return _count_at(V, _cumrel(V, rel), m.k) if m.k is not None else _nrelret(V, rel).astype(np.float64)


@_register("P", "required", _COMMON, aliases=("Precision",), doc="relevant in top k / k")
def _precision(J, ms):
    return [_hits(J, m) / m.k for m in ms]


@_register("R", "optional", _COMMON, aliases=("Recall",), doc="relevant in top k / relevant")
def _recall(J, ms):
    return [_safe_div(_hits(J, m), _R(_view(J, m), m.param("rel"))) for m in ms]


@_register("Success", "required", _COMMON, aliases=("HitRate", "Hit", "S"), doc="1 if any relevant in top k")
def _success(J, ms):
    return [(_hits(J, m) > 0).astype(np.float64) for m in ms]


def _first_rel_rank(V: Judged, rel: int) -> np.ndarray:
    """Rank of each group's first relevant document (inf when none)."""
    def make():
        rows = np.flatnonzero(_isrel(V, rel) & (_cumrel(V, rel) == 1))
        first = np.full(V.n_groups, np.inf)
        first[V.grp[rows]] = np.maximum(V.rank[rows], 1)
        return first
    return _memo(V, ("firstrel", rel), make)


@_register("RR", "optional", _COMMON, aliases=("MRR", "RecipRank"), doc="1 / rank of the first relevant")
def _rr(J, ms):
    out = []
    for m in ms:
        first = _first_rel_rank(_view(J, m), m.param("rel"))
        out.append(np.where(first <= (m.k or np.inf), 1.0 / first, 0.0))  # 1 / inf == 0
    return out


def _prec_at_rel(V: Judged, rel: int):
    """Relevant rows, and the precision at each of them (AP's terms)."""
    def make():
        rows = np.flatnonzero(_isrel(V, rel))
        return rows, _cumrel(V, rel)[rows] / np.maximum(V.rank[rows], 1)
    return _memo(V, ("precrel", rel), make)


@_register("AP", "optional", _COMMON, aliases=("MAP",), doc="mean of precision at each relevant / relevant")
def _ap(J, ms):
    out = [None] * len(ms)
    for (_, rel), idx in _by_view_rel(ms):
        V = _view(J, ms[idx[0]])
        rows, prec = _prec_at_rel(V, rel)
        sums = _sums_at_cutoffs(V.grp[rows], V.rank[rows], prec, V.n_groups, [ms[i].k for i in idx])
        for i, s in zip(idx, sums):
            out[i] = _safe_div(s, _R(V, rel))
    return out


@_register("Rprec", "none", _COMMON, aliases=("R-prec", "RPrec"), doc="precision at rank R (R = relevant)")
def _rprec(J, ms):
    out = []
    for m in ms:
        V = _view(J, m)
        rel = m.param("rel")
        R = _R(V, rel)
        out.append(_safe_div(_count_at(V, _cumrel(V, rel), R), R))
    return out


def _gain(labels: np.ndarray, kind: str) -> np.ndarray:
    lab = np.maximum(labels, 0).astype(np.float64)
    return np.exp2(lab) - 1.0 if kind == "exp" else lab


def _dcg_terms(V: Judged, kind: str):
    """Rows with a non-zero gain and their discounted gains; the same for each
    question's ideal ranking (golden-set rows)."""
    def make():
        g = _gain(V.label, kind)
        rows = np.flatnonzero(g != 0)
        ig = _gain(V.qrels_label, kind)
        irows = np.flatnonzero(ig != 0)
        return rows, g[rows] * _disc(V)[rows], irows, ig[irows] / np.log2(V.qrels_irank[irows] + 1.0)
    return _memo(V, ("dcg", kind), make)


@_register("nDCG", "optional", {"gain": "exp", "judged_only": False}, aliases=("NDCG",),
           doc="DCG@k / ideal DCG@k")
def _ndcg(J, ms):
    out = [None] * len(ms)
    groups: dict = {}
    for i, m in enumerate(ms):
        groups.setdefault((m.param("judged_only"), m.param("gain")), []).append(i)
    for (_, kind), idx in groups.items():
        V = _view(J, ms[idx[0]])
        rows, dg, irows, idg = _dcg_terms(V, kind)
        ks = [ms[i].k for i in idx]
        dcg = _sums_at_cutoffs(V.grp[rows], V.rank[rows], dg, V.n_groups, ks)
        idcg = _sums_at_cutoffs(V.qrels_query[irows], V.qrels_irank[irows], idg, V.n_queries, ks)
        for i, d, ideal in zip(idx, dcg, idcg):
            out[i] = _safe_div(d, ideal[V.group_query])
    return out


@_register("bpref", "none", {"rel": None}, aliases=("BPref",),
           doc="preference of each relevant over judged non-relevant above it")
def _bpref(J, ms):
    out = []
    for m in ms:
        rel = m.param("rel")
        rows = np.flatnonzero(_isrel(J, rel))  # only relevant documents contribute
        g = J.grp[rows]
        R = _R(J, rel)
        N = J.per_query_qrels((J.qrels_label >= 0) & (J.qrels_label < rel))
        above = _count_in_group(J, (J.label >= 0) & (J.label < rel))[rows].astype(np.float64)
        Rg, Ng = R[g], N[g]
        denom = np.minimum(Ng, Rg)
        frac = np.divide(np.minimum(above, Rg), denom, out=np.zeros_like(above), where=denom > 0)
        contrib = np.where(above > 0, 1.0 - frac, 1.0)
        out.append(_safe_div(np.bincount(g, weights=contrib, minlength=J.n_groups), R))
    return out


@_register("Judged", "required", {}, doc="judged documents in top k / k")
def _judged(J, ms):
    running = _memo(J, "judged", lambda: _count_in_group(J, J.label >= 0))
    return [_count_at(J, running, m.k) / m.k for m in ms]


@_register("NumRet", "none", {"judged_only": False}, aggregation="sum", doc="documents retrieved")
def _numret(J, ms):
    return [_view(J, m).per_group() for m in ms]


@_register("NumRel", "none", {"rel": None}, aggregation="sum", doc="relevant documents in the golden set")
def _numrel(J, ms):
    return [_num_rel(J, m.param("rel")) for m in ms]


@_register("NumRelRet", "none", _COMMON, aggregation="sum", doc="relevant documents retrieved")
def _numrelret(J, ms):
    return [_nrelret(_view(J, m), m.param("rel")).astype(np.float64) for m in ms]


#: The spec's default measures.
DEFAULT_MEASURES = ("R@5", "R@10", "R@100", "P@5", "RR", "nDCG@10", "AP")


def resolve(m: Measure, *, rel: int = 1) -> Measure:
    """Apply evaluate()'s ``rel`` convention to a measure that does not pin its own."""
    if rel != 1 and "rel" in FAMILIES[m.family].params and dict(m.params).get("rel") is None:
        return m.with_params(rel=rel)
    return m


def compute(J: Judged, measures: list[Measure]) -> np.ndarray:
    """Values of ``measures`` on every group of ``J``: array (n_groups, n_measures)."""
    out = np.zeros((J.n_groups, len(measures)), dtype=np.float64)
    by_family: dict[str, list[int]] = {}
    for i, m in enumerate(measures):
        by_family.setdefault(m.family, []).append(i)
    for fam, idx in by_family.items():
        vals = FAMILIES[fam].fn(J, [measures[i] for i in idx])
        for i, v in zip(idx, vals):
            out[:, i] = v
    return out


from . import trec_measures as _trec_measures  # noqa: E402,F401  (registers trec_eval's other families)
