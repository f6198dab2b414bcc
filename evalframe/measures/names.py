"""Measure names: the parser for evalframe's names and trec_eval's.

Canonical names round-trip (``str(parse_measure(s))`` parses back to the same
measure); parameters equal to their default are left out.  trec_eval's names
(``ndcg_cut_10``, ``P_5``, ``map``...) keep trec_eval's meaning; each family
declares its own (``Family.trec_names``).
"""
from __future__ import annotations

__all__ = ["parse_measure", "parse_measures", "DEFAULT_MEASURES", "IR_MEASURES_PARAMS"]

import ast
import re
from typing import Iterable

from .._validation import Options, check, error, type_of
from .base import FAMILIES, REGISTRY, Measure

#: The spec's default measures.
DEFAULT_MEASURES = ("R@5", "R@10", "R@100", "P@5", "RR", "nDCG@10", "AP")

#: ir_measures' spellings of a parameter: (family, its name there) -> (evalframe's
#: parameter, value there -> value here).
IR_MEASURES_PARAMS = {
    ("nDCG", "dcg"): ("gain", {"log2": "linear", "exp-log2": "exp"}),
    ("DCG", "dcg"): ("gain", {"log2": "linear", "exp-log2": "exp"}),
}

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
    ``num_rel_ret``, ``Rprec``, ``bpref`` (and the other families' names, see
    :data:`FAMILIES`).

    Raises
    ------
    ValueError
        For an unknown family, a bad cutoff or parameter, with the accepted forms.

    Examples
    --------
    >>> import evalframe as ef
    >>> ef.parse_measure("nDCG@10")
    Measure('nDCG@10')
    >>> str(ef.parse_measure("ndcg_cut_10"))      # trec_eval's name, trec_eval's meaning
    "nDCG(gain='linear')@10"
    >>> str(ef.parse_measure("P(rel=2)@5"))
    'P(rel=2)@5'
    """
    if isinstance(name, Measure):
        return name
    if not isinstance(name, str):
        raise error(None, "a measure name", "a str", type_of(name))
    for pat, conv in REGISTRY.trec_names():
        m = pat.fullmatch(name.strip())
        if m:
            return parse_measure(conv(m))
    m = _NAME.match(name)
    if not m:
        raise ValueError(f"cannot parse measure {name!r}; expected e.g. 'nDCG@10', 'P(rel=2)@5', 'AP'")
    fam_raw, params_raw, k_raw = m.groups()
    fam = REGISTRY.lookup(fam_raw)
    if fam is None:
        raise ValueError(f"unknown measure {fam_raw!r} in {name!r}; known: {', '.join(FAMILIES)} "
                         "(and trec_eval names such as P_5, map, ndcg_cut_10)")
    k = None
    if k_raw is not None:
        if not _DIGITS.fullmatch(k_raw):  # int() would take '1_0', '٥' or '５'
            raise error(repr(name), "cutoff", "an int >= 1 written in the digits 0-9", k_raw)
        k = int(k_raw)
    params = []
    if params_raw and params_raw.strip():
        for part in _split_params(params_raw):
            if "=" not in part:
                raise ValueError(f"{name!r}: parameters are key=value, got {part!r}")
            key, val = (x.strip() for x in part.split("=", 1))
            try:
                v = ast.literal_eval(val)
            except (ValueError, SyntaxError, MemoryError, RecursionError):
                v = val  # bare word, e.g. gain=linear
            if isinstance(v, (int, float)) and not isinstance(v, bool) and "_" in val:
                v = val  # '1_0' is not a number here: the parameter's check refuses the text
            key, v = _ir_measures_param(fam, key, v)
            if any(key == k_ for k_, _ in params):
                raise ValueError(f"{name!r}: parameter {key!r} is given more than once")
            params.append((key, v))
    return Measure(fam, k, tuple(params))


#: a cutoff as written: ASCII digits only
_DIGITS = re.compile(r"[-+]?[0-9]+")  # a sign too: the family then says k must be >= 1


def _ir_measures_param(fam: str, key: str, value):
    """An ir_measures parameter (``nDCG(dcg='exp-log2')``) as evalframe's (``gain='exp'``)."""
    spelling = IR_MEASURES_PARAMS.get((fam, key))
    if spelling is None:
        return key, value
    param, values = spelling
    value = check(fam, key, value, Options(values, " or ".join(f"{v!r} ({param}={w!r})" for v, w in values.items())))
    return param, values[value]


def _split_params(text: str) -> list[str]:
    """Split ``key=value`` parts on the commas outside brackets and quotes."""
    parts, depth, cur, quote = [], 0, "", ""
    for ch in text:
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
            continue
        else:
            depth += ch in "([{"
            depth -= ch in ")]}"
        cur += ch
    parts.append(cur)
    return [p for p in parts if p.strip()]


def parse_measures(measures: "str | Measure | Iterable[str | Measure] | None") -> list[Measure]:
    """Parse one or many measure names; ``None`` gives :data:`DEFAULT_MEASURES`.

    Names that denote the same measure (``ndcg_cut_10`` and
    ``nDCG(gain='linear')@10``) are computed and reported once, under the
    canonical name, in the order of their first appearance.

    Examples
    --------
    >>> import evalframe as ef
    >>> ef.parse_measures(["P@5", "ndcg_cut_10"])
    [Measure('P@5'), Measure("nDCG(gain='linear')@10")]
    >>> [str(m) for m in ef.parse_measures("RR")]
    ['RR']
    """
    if measures is None:
        measures = DEFAULT_MEASURES
    if isinstance(measures, (str, Measure)):
        measures = [measures]
    elif not isinstance(measures, Iterable):
        raise error(None, "measures", "a measure name, a Measure or a list of them (e.g. ['nDCG@10', 'R@5'])",
                    measures)
    out: list[Measure] = []
    for m in measures:
        pm = parse_measure(m)
        if pm not in out:
            out.append(pm)
    if not out:
        raise ValueError("measures is empty; pass at least one measure name, e.g. ['nDCG@10']")
    return out
