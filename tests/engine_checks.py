"""What the engines' tests share: every engine is checked against the in-memory call on
the same inputs (tables sorted when an engine's rows come in partition order, the same
warnings), with the warning cases built the same way."""
from __future__ import annotations

import warnings

import pandas as pd

import evalframe as ef


def sorted_table(df: pd.DataFrame) -> pd.DataFrame:
    """A per-question table in (system, question, measure) order."""
    keys = [c for c in ("system", "query_id", "measure") if c in df.columns]
    return df.sort_values(keys, kind="stable").reset_index(drop=True)


def caught(fn):
    """``fn()`` and the evalframe warnings it gave, as (category, message) pairs."""
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        out = fn()
    return out, [(x.category, str(x.message)) for x in w if issubclass(x.category, ef.EvalframeWarning)]


def with_warnings(ds):
    """The collection's runs with every warning case: a system missing questions, run-only
    questions, a system that answers only a few questions (absent from most partitions)."""
    runs = ds.runs.reset_index(drop=True)
    systems = list(pd.unique(runs.system))
    qs = list(pd.unique(ds.qrels.query_id))
    drop = runs.system.eq(systems[1]) & runs.query_id.isin(qs[::7])
    few = runs.system.eq(systems[2]) & ~runs.query_id.isin(qs[:3])
    extra = runs[runs.system.eq(systems[0]) & runs.query_id.isin(qs[:2])].assign(
        query_id=lambda d: "runonly-" + d.query_id)
    return pd.concat([runs[~drop & ~few], extra], ignore_index=True)
