"""Write the per-question snapshot that tests/test_snapshot.py compares against.

Run it only when a change is *meant* to change numbers, and say so in the commit:
``python tests/make_snapshot.py``.  The snapshot was first written before the
restructuring of issue 9, so the test proves that restructuring changed no value.
"""
from __future__ import annotations

from pathlib import Path

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
