"""Write the resampled numbers that tests/test_resampling_snapshot.py compares against.

The saved table holds, for a few reports on the Cranfield collection and a few
:func:`evalframe.stats.compare` / :func:`evalframe.stats.summarize` calls, every float of
the resampled tables (bootstrap and BCa intervals, randomisation, bootstrap and
bootstrap-t tests and their intervals, randomised Tukey HSD, segments, stages, clusters).
It was written by main before report() ran its resampling on threads (issue 31), with
resampling chunks made small (:data:`CHUNK_ELEMENTS`) so that every random stream is drawn
in several chunks: the test proves that threads change no number.  Rewrite it only with a
change that means to change numbers, and say so in the commit:
``python tests/make_resampling_snapshot.py``.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

import evalframe as ef
from evalframe.stats import resampling

SAVED = Path(__file__).parent / "data" / "snapshot_resampling.parquet"
#: resampling chunks of this many elements (the default is 4,000,000): several chunks per stream
CHUNK_ELEMENTS = 20_000
#: report() cases: keyword arguments on Cranfield (n_resamples=2000, seed=3 unless given)
REPORTS = {
    "bootstrap/randomization": dict(interval="bootstrap", test="randomization", segments=True,
                                    stages={"bm25": 100, "hybrid_rrf": 10}),
    "bca/bootstrap/randomized-tukey": dict(interval="bca", test="bootstrap", correction="randomized-tukey"),
    "bootstrap/bootstrap-t/baseline": dict(test="bootstrap-t", baseline="bm25", seed=11),
}
#: report tables whose floats are saved
TABLES = ("summary", "by_segment", "comparisons", "stages")


def per_question() -> pd.DataFrame:
    """Cranfield's per-question table (R@10, AP) with its two segment columns."""
    c = ef.datasets.load_cranfield()
    pq = ef.evaluate(c.runs, c.qrels, ["R@10", "AP"])
    return pq.merge(c.segments, on="query_id", how="left")


def calls(**threads) -> dict[str, pd.DataFrame]:
    """Every saved table by name, computed now (``threads``: passed to every call)."""
    c = ef.datasets.load_cranfield()
    out = {}
    for case, kw in REPORTS.items():
        kw = {"n_resamples": 2000, "seed": 3, **kw}
        if kw.pop("segments", False):
            kw["segments"] = c.segments
        r = ef.report(c.runs, c.qrels, measures=["R@10", "nDCG@10", "AP"], **kw, **threads)
        for t in TABLES:
            out[f"report {case}: {t}"] = getattr(r, t)
    pq = per_question()
    st = ef.stats
    out["compare randomization by length"] = st.compare(
        pq, test="randomization", by="length", n_resamples=3000, seed=5, adjusted_ci=True, **threads)
    first = pq[pq["query_id"].isin(pq["query_id"].unique()[:18])]
    out["compare randomization exact (18 questions)"] = st.compare(
        first.drop(columns="length"), test="randomization", by="question_form", adjusted_ci=True, **threads)
    out["compare bootstrap bca clustered"] = st.compare(
        pq.drop(columns="length"), test="bootstrap", ci="bca", cluster="question_form", n_resamples=1500,
        seed=2, **threads)
    out["compare bootstrap-t one-sided"] = st.compare(
        pq, test="bootstrap-t", alternative="greater", n_resamples=2500, seed=4, **threads)
    out["summarize bca by length"] = st.summarize(pq, by="length", method="bca", n_resamples=2000, seed=6,
                                                  **threads)
    out["summarize bootstrap clustered"] = st.summarize(pq.drop(columns="length"), method="bootstrap",
                                                        cluster="question_form", n_resamples=2000, seed=7,
                                                        **threads)
    return out


def floats(tables: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Every float column of every table, long: ``case, column, row, value``."""
    parts = []
    for case, t in tables.items():
        for col in t.columns:
            if t[col].dtype == np.float64:
                parts.append(pd.DataFrame({"case": case, "column": col, "row": np.arange(len(t)),
                                           "value": t[col].to_numpy()}))
    return pd.concat(parts, ignore_index=True)


def snapshot(**threads) -> pd.DataFrame:
    """:func:`floats` of :func:`calls`, resampling in chunks of :data:`CHUNK_ELEMENTS`."""
    saved = resampling.CHUNK_ELEMENTS
    resampling.CHUNK_ELEMENTS = CHUNK_ELEMENTS
    try:
        return floats(calls(**threads))
    finally:
        resampling.CHUNK_ELEMENTS = saved


if __name__ == "__main__":
    import warnings
    warnings.simplefilter("ignore")
    snapshot().to_parquet(SAVED, index=False)
