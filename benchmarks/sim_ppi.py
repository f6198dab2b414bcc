"""Coverage and width of prediction-powered intervals (issue 29), by simulation.

Golden sets of ``Q`` questions, 10 retrieved documents each; people's labels are
Bernoulli(p_q) with p_q ~ Beta(2, 3), so the true P@10 is 0.4 exactly.  A model judge
labels every document: a relevant one relevant with probability ``hit``, a non-relevant
one relevant with probability ``false + slope * rank`` (a lenient judge whose bias grows
down the ranking).  People label ``n`` of the questions.  For each setting, over ``sets``
simulated golden sets (one call of ``stats.summarize_ppi``: each set is one "system"):

- ``model``: the t interval of P@10 from the model's labels on every question;
- ``human``: the t interval from people's labels on the n questions alone;
- ``ppi``: PPI (lambda = 1); ``ppi++``: PPI++ (lambda estimated), both 95%.

Prints coverage of the true mean and mean width.  About half a minute on one core::

    PYTHONPATH=. nice -n 10 python benchmarks/sim_ppi.py
"""
from __future__ import annotations

import time
import warnings

import numpy as np
import pandas as pd

from evalframe import stats

JUDGES = {"good (0.95 / 0.05)": (0.95, 0.05, 0.0), "lenient, rank-biased (0.9 / 0.15 + 0.03 r)": (0.9, 0.15, 0.03),
          "harsh (0.6 / 0.02)": (0.6, 0.02, 0.0)}


def simulate(sets: int, Q: int, n: int, judge: tuple, seed: int):
    hit, false, slope = judge
    rng = np.random.default_rng(seed)
    p = rng.beta(2, 3, (sets, Q, 1))
    human = rng.random((sets, Q, 10)) < p
    says = np.where(human, hit, false + slope * np.arange(1, 11))
    model = rng.random((sets, Q, 10)) < says
    sys_ = np.repeat([f"s{i}" for i in range(sets)], Q)
    qid = np.tile([f"q{i}" for i in range(Q)], sets)
    m = pd.DataFrame({"system": sys_, "query_id": qid, "measure": "P@10", "value": model.mean(-1).ravel()})
    h = pd.DataFrame({"system": sys_, "query_id": qid, "measure": "P@10", "value": human.mean(-1).ravel()})
    return m, h[np.tile(np.arange(Q) < n, sets)]


def covers(t: pd.DataFrame) -> tuple[float, float]:
    return float(((t["ci_low"] <= 0.4) & (0.4 <= t["ci_high"])).mean()), float((t["ci_high"] - t["ci_low"]).mean())


def main() -> None:
    rows = []
    start = time.perf_counter()
    for name, judge in JUDGES.items():
        for n in (10, 30, 60, 100):
            model, human = simulate(2000, 200, n, judge, seed=29 + n)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out = {"model": stats.summarize(model, method="t"), "human": stats.summarize(human, method="t"),
                       "ppi": stats.summarize_ppi(model, human, lam=1.0), "ppi++": stats.summarize_ppi(model, human)}
            for method, t in out.items():
                c, w = covers(t)
                rows.append({"judge": name, "n_human": n, "method": method, "coverage": c, "width": w})
    table = pd.DataFrame(rows).pivot_table(index=["judge", "n_human"], columns="method",
                                           values=["coverage", "width"], sort=False)
    with pd.option_context("display.width", 250, "display.precision", 3, "display.max_columns", 20):
        print("2000 golden sets of 200 questions per row, true P@10 = 0.4, 95% intervals")
        print(table)
    print(f"{time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
