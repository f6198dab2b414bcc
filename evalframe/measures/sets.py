"""Set-based families (the retrieved set as a whole) and counts.

SetP, SetR, SetRelP, SetAP, SetF, Utility; NumRet, NumRel, NumRelRet,
NumNonrelJudgedRet (counts, summed over questions as trec_eval reports them).
"""
from __future__ import annotations

import numpy as np

from .aggregation import SUM
from .base import UNIT, Family, ParamSpec
from .intermediates import COMMON, nrelret, nret, num_rel, relevant, safe_div, view


def _set_counts(J, m):
    V = view(J, m)
    rel = m.param("rel")
    return V, nret(V).astype(np.float64), nrelret(V, rel).astype(np.float64), relevant(V, rel)


def _utility(J, ms):
    out = []
    for m in ms:
        w = m.param("weights")
        _, ret, relret, R = _set_counts(J, m)
        n = float(m.param("docs"))
        out.append(w[0] * relret + w[1] * (ret - relret) + w[2] * (R - relret) + w[3] * (n + relret - ret - R))
    return out


def _setp(J, ms):
    return [safe_div(rr, ret) for _, ret, rr, _R in (_set_counts(J, m) for m in ms)]


def _setr(J, ms):
    return [safe_div(rr, R) for _, ret, rr, R in (_set_counts(J, m) for m in ms)]


def _setrelp(J, ms):
    return [safe_div(rr, np.minimum(ret, R)) for _, ret, rr, R in (_set_counts(J, m) for m in ms)]


def _setap(J, ms):
    return [safe_div(rr * rr, ret * R) for _, ret, rr, R in (_set_counts(J, m) for m in ms)]


def _setf(J, ms):
    out = []
    for m in ms:
        _, ret, rr, R = _set_counts(J, m)
        x = float(m.param("beta")) ** 2
        P, Rc = safe_div(rr, ret), safe_div(rr, R)
        out.append(np.where(rr > 0, safe_div((x + 1.0) * P * Rc, x * P + Rc), 0.0))
    return out


def _numret(J, ms):
    return [nret(view(J, m)).astype(np.float64) for m in ms]


def _numrel(J, ms):
    return [num_rel(J, m.param("rel")) for m in ms]


def _numrelret(J, ms):
    return [nrelret(view(J, m), m.param("rel")).astype(np.float64) for m in ms]


def _num_nonrel_judged_ret(J, ms):
    out = []
    for m in ms:
        V = view(J, m)
        judged = nrelret(V, 0)  # label >= 0
        out.append((judged - nrelret(V, m.param("rel"))).astype(np.float64) if m.param("rel") >= 0
                   else V.per_group((V.label >= 0) & (V.label < m.param("rel"))))
    return out


UTILITY = Family(
    "Utility", "none",
    {"weights": ParamSpec("floats", (1.0, -1.0, 0.0, 0.0), "w1..w4 of relret, nonrelret, relnotret, nonrelnotret",
                          length=4),
     "docs": ParamSpec("int", 0, "documents in the collection (trec_eval's -N)"), **COMMON},
    _utility, aliases=("utility",), trec_names=((r"utility", "Utility"),),
    doc="w1*relret + w2*nonrelret + w3*relnotret + w4*nonrelnotret")
SET_P = Family("SetP", "none", COMMON, _setp, aliases=("set_P",), trec_names=((r"set_P", "SetP"),),
               doc="relevant retrieved / retrieved", value_range=UNIT)
SET_R = Family("SetR", "none", COMMON, _setr, aliases=("set_recall", "SetRecall"),
               trec_names=((r"set_recall", "SetR"),), doc="relevant retrieved / relevant", value_range=UNIT)
SET_REL_P = Family("SetRelP", "none", COMMON, _setrelp, aliases=("set_relative_P",),
                   trec_names=((r"set_relative_P", "SetRelP"),), doc="relevant retrieved / min(retrieved, relevant)", value_range=UNIT)
SET_AP = Family("SetAP", "none", COMMON, _setap, aliases=("set_map",), trec_names=((r"set_map", "SetAP"),),
                doc="SetP x SetR", value_range=UNIT)
SET_F = Family("SetF", "none",
               {"beta": ParamSpec("float", 1.0, "weight of recall (trec_eval's parameter is beta ** 2)", low=0),
                **COMMON},
               _setf, aliases=("set_F",), trec_names=((r"set_F", "SetF"),),
               doc="F-measure of the retrieved set: (1 + beta^2) P R / (beta^2 P + R)", value_range=UNIT)
NUM_RET = Family("NumRet", "none", {"judged_only": COMMON["judged_only"]}, _numret, aggregator=SUM,
                 trec_names=((r"num_ret", "NumRet"),), doc="documents retrieved")
NUM_REL = Family("NumRel", "none", {"rel": COMMON["rel"]}, _numrel, aggregator=SUM,
                 trec_names=((r"num_rel", "NumRel"),), doc="relevant documents in the golden set")
NUM_REL_RET = Family("NumRelRet", "none", COMMON, _numrelret, aggregator=SUM,
                     trec_names=((r"num_rel_ret", "NumRelRet"),), doc="relevant documents retrieved")
NUM_NONREL_JUDGED_RET = Family(
    "NumNonrelJudgedRet", "none", COMMON, _num_nonrel_judged_ret, aggregator=SUM,
    aliases=("num_nonrel_judged_ret",), trec_names=((r"num_nonrel_judged_ret", "NumNonrelJudgedRet"),),
    doc="judged non-relevant documents retrieved")
