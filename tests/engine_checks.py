"""What the engines' tests share: every engine is checked against the in-memory call on
the same inputs (tables sorted when an engine's rows come in partition order, the same
warnings), with the warning cases built the same way."""
from __future__ import annotations

import os
import warnings

import numpy as np
import pandas as pd
import pytest

from evalframe.engine import budget as sizing
import evalframe as ef
from evalframe.engine import streaming
from evalframe.evaluation import evaluate_with_diagnostics


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


def streamed(rows: pd.DataFrame, qrels, measures, directory, *, files: int = 3, parts: int = 3, **kw):
    """``evaluate_with_diagnostics`` of ``rows`` written as ``files`` Parquet files to
    ``directory`` and streamed in partitions of about ``len(rows) / parts`` rows (the
    planner's floor for real budgets is far above these runs: patched)."""
    os.makedirs(directory, exist_ok=True)
    for i, at in enumerate(np.array_split(np.arange(len(rows)), files)):
        rows.iloc[at].to_parquet(os.path.join(directory, f"part-{i}.parquet"), index=False)
    budget = len(getattr(qrels, "frame", qrels)) * sizing.QRELS_BYTES_PER_ROW + 2 * sizing.BYTES_PER_ROW * len(rows) // parts
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(sizing, "plan_batch_rows", lambda *a, **k: max(4, len(rows) // parts))
        return evaluate_with_diagnostics(str(directory), qrels, measures, memory_budget=budget, **kw)
