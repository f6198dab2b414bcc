"""Write the per-question snapshot that tests/test_snapshot.py compares against.

Run it only when a change is *meant* to change numbers, and say so in the commit:
``python tests/make_snapshot.py``.  The snapshot was first written before the
restructuring of issue 9, so the test proves that restructuring changed no value.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

import evalframe as ef

HERE = Path(__file__).parent / "data"

MEASURES = [
    "P@1", "P@5", "P@10", "P@100", "R@5", "R@10", "R@100", "R", "Success@1", "Success@10",
    "RR", "RR@10", "AP", "AP@100", "Rprec", "nDCG", "nDCG@10", "nDCG(gain='linear')@10",
    "nDCG(gain='linear')", "bpref", "Judged@10", "NumRet", "NumRel", "NumRelRet",
    "P(rel=2)@10", "AP(rel=2)", "nDCG(judged_only=True)@10", "AP(judged_only=True)",
    "IPrec(recall=0.2)", "IPrecAvg", "GMAP", "GMbpref", "infAP", "Rprec(mult=0.2)",
    "Utility(weights=(2.0, -1.0, 0.0, 0.0))", "SetP", "SetR", "SetRelP", "SetAP", "SetF",
    "NumNonrelJudgedRet", "RelP@5", "Unjudged@10", "binG", "G", "nDCGrel", "RnDCG",
    "RBP(p=0.95)", "RBP(residual=True)", "nDCG(gain='linear',gains=((1, 3.0), (2, 9.0)))",
]


#: Values of a snapshot may differ from the saved table by this much (absolute) on a CPU of
#: another kind than the one it was saved on: numpy runs other SIMD code there (Intel's SVML
#: for ``np.power`` on CPUs with AVX-512, other reduction loops), whose results differ in the
#: last bits.  Measured between an AVX-512 machine (where the tables were saved) and an AVX2
#: one: 576 of 262,500 per-question values (RBP) within 2.3e-16, 31 of 5,062 resampled
#: numbers within 1.2e-16.
OTHER_CPU_ABS = 1e-15

#: ... and at most this share of the values: a change of summation order or of an algorithm
#: moves many more of them
OTHER_CPU_SHARE = 0.01


def unchanged(now, saved):
    """Whether each value of ``now`` equals ``saved`` (float arrays): the same bits (NaN
    as NaN), or, for at most :data:`OTHER_CPU_SHARE` of them, within :data:`OTHER_CPU_ABS`
    (another CPU's last bits); all True when so."""
    same = (now == saved) | (np.isnan(now) & np.isnan(saved))
    near = np.abs(now - saved) <= OTHER_CPU_ABS
    if (~same).sum() <= OTHER_CPU_SHARE * len(same):
        same |= near
    return same


def snapshot() -> pd.DataFrame:
    parts = []
    for name in ("cranfield", "scifact"):
        ds = getattr(ef.datasets, f"load_{name}")()
        for missing in ("zero", "drop"):
            per_q = ef.evaluate(ds.runs, ds.qrels, MEASURES, missing=missing)
            per_q.insert(0, "case", f"{name}/{missing}")
            parts.append(per_q)
    out = pd.concat(parts, ignore_index=True)
    return out.astype({c: str for c in ("case", "system", "query_id", "measure")})


if __name__ == "__main__":
    HERE.mkdir(exist_ok=True)
    snapshot().to_parquet(HERE / "snapshot_per_question.parquet", index=False)
