"""Properties every measure of the registry keeps, on random cases (ties, graded and
negative labels, unjudged documents, questions only in the run or only in the golden set),
the measures taken from the registry itself, so a family registered later is checked too:

- the run's row order does not change any value (bit for bit);
- evaluating any partition of the questions apart and concatenating gives the whole;
- a score transform that keeps the order and the ties (x -> 2x + 1) changes nothing, and
  neither do the scores stored as distances (their negation) declared ``ascending=True``;
- a second system that is a copy of the first gets the first's values;
- every value lies in the family's declared ``value_range`` (when it declares one).
"""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import evalframe as ef
from evalframe.measures import FAMILIES, parse_measure
from tests.strategies import cases

#: Families left out, and why (each has tests of its own).
EXCLUDED = {
    "SpanRecall": "reads a span golden set and chunk offsets (tests/test_spans.py, tests/engine/test_every_engine_spans.py)",
    "SpanPrecision": "reads a span golden set and chunk offsets (tests/test_spans.py, tests/engine/test_every_engine_spans.py)",
    "SpanIoU": "reads a span golden set and chunk offsets (tests/test_spans.py, tests/engine/test_every_engine_spans.py)",
}
#: Parameters a family needs given (no default): the cases' labels go up to 3.
REQUIRED = {"max_rel": 3}


def registry_measures() -> list[str]:
    """One measure per family with its defaults (and the parameters it needs), at @5 when it
    takes a cutoff, and also without one when the cutoff is optional."""
    names = []
    for name, fam in sorted(FAMILIES.items()):
        if name in EXCLUDED:
            continue
        given = {k: v for k, v in REQUIRED.items() if k in fam.params and fam.params[k].default is None}
        base = name + (f"({', '.join(f'{k}={v}' for k, v in given.items())})" if given else "")
        if fam.cutoff in ("required", "optional"):
            names.append(base + "@5")
        if fam.cutoff in ("none", "optional"):
            names.append(base)
    return names


MEASURES = registry_measures()


def test_every_family_is_checked_or_excluded_with_a_reason():
    checked = {parse_measure(m).family for m in MEASURES}
    assert checked | set(EXCLUDED) == set(FAMILIES)
    assert not checked & set(EXCLUDED)


def _two_systems(run: pd.DataFrame) -> pd.DataFrame:
    """The case's run as system "a", and "b": a copy of it with every other row's score
    lowered (so b differs from a where a question has two rows)."""
    b = run.copy()
    b.loc[b.index[::2], "score"] = b.loc[b.index[::2], "score"] - 0.5
    return pd.concat([run.assign(system="a"), b.assign(system="b")], ignore_index=True)


def _evaluate(run, qrels, rel, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ef.evaluate(run, qrels, MEASURES, rel=rel, **kw)


def _same(a: pd.DataFrame, b: pd.DataFrame) -> None:
    keys = ["system", "query_id", "measure"]
    a = a.sort_values(keys, kind="stable").reset_index(drop=True)
    b = b.sort_values(keys, kind="stable").reset_index(drop=True)
    for c in keys:
        assert (a[c].astype(str).to_numpy() == b[c].astype(str).to_numpy()).all(), c
    x, y = a["value"].to_numpy(), b["value"].to_numpy()
    bad = ~((x == y) | (np.isnan(x) & np.isnan(y)))
    assert not bad.any(), a.loc[bad, keys].assign(got=x[bad], want=y[bad]).head(10).to_string()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases(), st.randoms(use_true_random=False), st.lists(st.integers(0, 2), min_size=6, max_size=6))
def test_registry_measures_keep_their_properties(case, rnd, parts):
    qrels, run, rel = case
    run = _two_systems(run)
    whole = _evaluate(run, qrels, rel)
    # row order
    order = list(range(len(run)))
    rnd.shuffle(order)
    _same(_evaluate(run.iloc[order].reset_index(drop=True), qrels, rel), whole)
    # partitions of the questions
    qids = sorted(set(run.query_id) | set(qrels.query_id))
    part_of = {q: parts[i % len(parts)] for i, q in enumerate(qids)}
    pieces = []
    for p in set(part_of.values()):
        qs = [q for q in qids if part_of[q] == p]
        r, g = run[run.query_id.isin(qs)], qrels[qrels.query_id.isin(qs)]
        if len(g) and len(r) and set(r.query_id) & set(g.query_id):
            pieces.append(_evaluate(r, g, rel))
        elif len(g):  # a part whose golden questions no system answers: scored 0 as missing questions
            pieces.append(whole[whole.query_id.isin(g.query_id)])
    _same(pd.concat(pieces, ignore_index=True), whole[whole.query_id.isin(qrels.query_id)])
    # order-keeping score transforms
    _same(_evaluate(run.assign(score=2 * run["score"] + 1), qrels, rel), whole)
    _same(_evaluate(run.assign(score=-run["score"]), qrels, rel, ascending=True), whole)
    # a copy of a system scores as the system
    a = whole[whole.system == "a"].drop(columns="system").reset_index(drop=True)
    copy = _evaluate(pd.concat([run[run.system == "a"], run[run.system == "a"].assign(system="c")],
                               ignore_index=True), qrels, rel)
    c = copy[copy.system == "c"].drop(columns="system").reset_index(drop=True)
    pd.testing.assert_frame_equal(c, a, check_exact=True)
    # declared ranges
    for name in MEASURES:
        rng = FAMILIES[parse_measure(name).family].value_range
        if rng is None:
            continue
        v = whole.loc[whole.measure == name, "value"].to_numpy()
        v = v[~np.isnan(v)]
        assert ((v >= rng[0]) & (v <= rng[1])).all(), (name, v[(v < rng[0]) | (v > rng[1])][:5])
