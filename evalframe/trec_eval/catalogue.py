"""trec_eval's measures: each one's name, how its parameters are read and printed, and the
evalframe measures that compute it (``TREC_MEASURES``), and the nicknames (``NICKNAMES``).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable
import numpy as np

from .._validation import error


_LONG_CUTS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)


_ELEVEN = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)


_RPREC_MULT = (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)


@dataclass(frozen=True)
class TrecMeasure:
    """One of trec_eval's measures: how its parameters are read and printed,
    and which evalframe measures compute it."""

    name: str
    kind: str  # single | cut_long | cut_double | p_double | p_pair | runid | num_q | relstring
    build: Callable | None = None  # (values, opts) -> evalframe measure name(s)
    default: tuple = ()
    per_query: bool = True
    integer: bool = False  # printed as a count


def _g(x: float) -> str:
    return repr(float(x))


def _gains_text(pairs, name: str = "ndcg") -> str:
    """trec_eval's ``level=gain`` pairs as evalframe's gains parameter (integer
    levels only, as trec_eval's setup_gains).

    A level given twice: trec_eval ranks with the entry found first after
    sorting the levels by gain and builds the ideal ranking with the entry given
    first.  When the first given gain is the smallest (by 1 or more, trec_eval's
    comparator truncates gain differences to integers) both are the first, which
    is kept; otherwise the two disagree and the parameters are refused."""
    levels: dict[int, list[float]] = {}
    for k, v in pairs:
        if re.fullmatch(r"[+-]?[0-9]+", k):
            levels.setdefault(int(k), []).append(v)
    for level, gains in levels.items():
        first = gains[0]
        if any(g != first and g - first < 1 for g in gains[1:]):
            text = ",".join(f"{k}={v:g}" for k, v in pairs)
            raise ValueError(
                f"{name}: each gain level must be given once, got {text!r} (level {level} twice: "
                f"trec_eval 10 ranks with one gain and builds the ideal ranking with the other)")
    kept = [(k, g[0]) for k, g in levels.items()]
    return "(" + "".join(f"({k}, {_g(v)}), " for k, v in kept) + ")" if kept else ""


def _with_gains(base: str, pairs, extra: str = "", name: str = "ndcg") -> str:
    g = _gains_text(pairs, name) if pairs else ""
    params = [p for p in (extra, f"gains={g}" if g else "") if p]
    if not params:
        return base
    if base.endswith(")"):
        return base[:-1] + "," + ",".join(params) + ")"
    return base + "(" + ",".join(params) + ")"


def _rbp(residual: bool):
    def build(pairs, opts):
        p = next((v for k, v in pairs if k == "p"), 0.9)
        extra = f"p={_g(p)}" + (",residual=True" if residual else "")
        return _with_gains("RBP", [] if residual else pairs, extra, "rbp")
    return build


@dataclass(frozen=True)
class Derived:
    """A trec_eval value computed here from evalframe measures (``inputs``, by
    name) with trec_eval's own arithmetic: ``fn(*columns) -> values``."""

    inputs: tuple[str, ...]
    fn: Callable


def _setf(vals, opts):
    """set_F.x is (x + 1) P R / (x P + R) with x as given (trec_eval's m_set_F.c):
    evalframe's SetF(beta=sqrt(x)) squares beta back, and sqrt(0.5)**2 is
    0.5000000000000001, which can move the 4th decimal."""
    x = vals[0] if vals else 1.0
    if x < 0:
        raise error("set_F", "the parameter", "a float >= 0", x)

    def fn(num_ret, num_rel, num_rel_ret):
        with np.errstate(divide="ignore", invalid="ignore"):
            P = num_rel_ret / num_ret
            R = num_rel_ret / num_rel
            f = (x + 1.0) * P * R / (x * P + R)
        return np.where(num_rel_ret > 0, f, 0.0)
    return Derived(("NumRet", "NumRel", "NumRelRet"), fn)


def _iprec_avg(vals, opts):
    """11pt_avg: the mean of iprec_at_recall at the given levels, summed from the
    last level to the first as trec_eval's m_11pt_avg.c does (IPrecAvg sums from
    the first: the last bit can differ, and with it a rounding half)."""
    def fn(*columns):
        total = np.zeros_like(columns[0])
        for col in reversed(columns):
            total = total + col
        return total / float(len(columns))
    return Derived(tuple(f"IPrec(recall={_g(x)})" for x in vals), fn)


def _utility(vals, opts):
    if len(vals) != 4:
        raise ValueError("utility needs 4 coefficients, e.g. utility.1,-1,0,0")
    w = "(" + ", ".join(_g(v) for v in vals) + ")"
    return f"Utility(weights={w}" + (f",docs={opts['docs']}" if opts["docs"] else "") + ")"


def _single(name: str, **kw) -> TrecMeasure:
    return TrecMeasure(name, "single", build=kw.pop("ef"), **kw)


#: trec_eval's measures, in trec_eval's order (the order it prints them).
TREC_MEASURES: list[TrecMeasure] = [
    TrecMeasure("runid", "runid"),
    TrecMeasure("num_q", "num_q"),
    _single("num_ret", ef="NumRet", integer=True),
    _single("num_rel", ef="NumRel", integer=True),
    _single("num_rel_ret", ef="NumRelRet", integer=True),
    _single("map", ef="AP"),
    _single("gm_map", ef="GMAP", per_query=False),
    _single("Rprec", ef="Rprec"),
    _single("bpref", ef="bpref"),
    _single("recip_rank", ef="RR"),
    TrecMeasure("iprec_at_recall", "cut_double", lambda x, o: f"IPrec(recall={_g(x)})", _ELEVEN),
    TrecMeasure("P", "cut_long", lambda k, o: f"P@{k}", _LONG_CUTS),
    TrecMeasure("relstring", "relstring", default=(10.0,)),
    TrecMeasure("recall", "cut_long", lambda k, o: f"R@{k}", _LONG_CUTS),
    _single("infAP", ef="infAP"),
    _single("gm_bpref", ef="GMbpref", per_query=False),
    TrecMeasure("Rprec_mult", "cut_double", lambda x, o: f"Rprec(mult={_g(x)})", _RPREC_MULT),
    TrecMeasure("utility", "p_double", _utility, (1.0, -1.0, 0.0, 0.0)),
    TrecMeasure("11pt_avg", "p_double", _iprec_avg, _ELEVEN),
    _single("binG", ef="binG"),
    TrecMeasure("G", "p_pair", lambda p, o: _with_gains("G", p, name="G")),
    TrecMeasure("ndcg", "p_pair", lambda p, o: _with_gains("nDCG(gain='linear')", p, name="ndcg")),
    TrecMeasure("ndcg_rel", "p_pair", lambda p, o: _with_gains("nDCGrel", p, name="ndcg_rel")),
    TrecMeasure("Rndcg", "p_pair", lambda p, o: _with_gains("RnDCG", p, name="Rndcg")),
    TrecMeasure("ndcg_cut", "cut_long", lambda k, o: f"nDCG(gain='linear')@{k}", _LONG_CUTS),
    TrecMeasure("map_cut", "cut_long", lambda k, o: f"AP@{k}", _LONG_CUTS),
    TrecMeasure("relative_P", "cut_long", lambda k, o: f"RelP@{k}", _LONG_CUTS),
    TrecMeasure("success", "cut_long", lambda k, o: f"Success@{k}", (1, 5, 10)),
    _single("set_P", ef="SetP"),
    _single("set_relative_P", ef="SetRelP"),
    _single("set_recall", ef="SetR"),
    _single("set_map", ef="SetAP"),
    TrecMeasure("set_F", "p_double", _setf, (1.0,)),
    _single("num_nonrel_judged_ret", ef="NumNonrelJudgedRet", integer=True),
    TrecMeasure("rbp", "p_pair", _rbp(False)),
    TrecMeasure("rbp_resid", "p_pair", _rbp(True)),
    TrecMeasure("unj", "cut_long", lambda k, o: f"Unjudged@{k}", (5, 10, 20)),
]


BY_NAME = {t.name: t for t in TREC_MEASURES}


#: trec_eval's nicknames for sets of measures.
NICKNAMES: dict[str, tuple[str, ...]] = {
    "official": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map",
                 "Rprec", "bpref", "recip_rank", "iprec_at_recall", "P"),
    "all_trec": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map",
                 "Rprec", "bpref", "recip_rank", "iprec_at_recall", "P", "relstring",
                 "recall", "unj", "rbp", "rbp_resid", "infAP", "gm_bpref",
                 "utility", "11pt_avg", "ndcg", "relative_P", "Rprec_mult", "success",
                 "map_cut", "ndcg_cut", "ndcg_rel", "Rndcg", "binG", "G",
                 "set_P", "set_recall", "set_relative_P", "set_map", "set_F",
                 "num_nonrel_judged_ret"),
    "set": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "utility", "set_P",
            "set_recall", "set_relative_P", "set_map", "set_F"),
}


NOT_PROVIDED = {"dcg", "ideal_dcg", "yaap", "prefs_num_prefs_poss", "prefs_num_prefs_ful",
                 "prefs_num_prefs_ful_ret", "prefs_simp", "prefs_pair", "prefs_avgjg",
                 "prefs_avgjg_Rnonrel", "prefs_simp_ret", "prefs_pair_ret", "prefs_avgjg_ret",
                 "prefs_avgjg_Rnonrel_ret", "prefs_simp_imp", "prefs_pair_imp", "prefs_avgjg_imp",
                 "map_avgjg", "P_avgjg", "Rprec_mult_avgjg", "all_prefs", "prefs", "qrels_jg"}
