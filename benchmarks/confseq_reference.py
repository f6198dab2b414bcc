"""The reference values of ``tests/stats/test_sequential.py::test_agrees_with_confseq``.

confseq 0.0.11 (Waudby-Smith, Howard, Ramdas; PyPI) does not build here (its C++ part
needs Boost), but its betting module is pure Python. Unpack its sdist and run

    curl -sLO <confseq-0.0.11.tar.gz from PyPI> && tar xzf confseq-0.0.11.tar.gz
    python benchmarks/confseq_reference.py confseq-0.0.11/src

which imports ``confseq.betting`` from that tree (``multiprocess`` stubbed when
missing: only its parallel option uses it) and prints ``hedged_cs`` on the fixed
streams of the test (two-sided, and the one-sided lower bound with theta = 1) next to
evalframe's, for the test to hold.
"""
from __future__ import annotations

import sys
import types

import numpy as np

sys.path.insert(0, sys.argv[1])
sys.modules.setdefault("multiprocess", types.ModuleType("multiprocess"))
import importlib  # noqa: E402

if not hasattr(np, "float_"):  # confseq 0.0.11 predates NumPy 2 (annotations only)
    np.float_ = np.float64

pkg = types.ModuleType("confseq")  # skip the package __init__ (it loads the C++ extension)
pkg.__path__ = [sys.argv[1] + "/confseq"]
sys.modules["confseq"] = pkg
betting = importlib.import_module("confseq.betting")

from evalframe.stats.sequential import hedged_bounds  # noqa: E402


def streams():
    """The test's streams: deterministic arithmetic, no random generator."""
    x1 = ((np.arange(60) * 37) % 101) / 100          # spread over [0, 1]
    x2 = 0.3 + 0.4 * (((np.arange(80) * 13) % 29) / 28) ** 2  # skewed, in [0.3, 0.7]
    return {"x1": x1, "x2": x2}


np.set_printoptions(precision=3, linewidth=200)
for name, x in streams().items():
    for alpha in (0.05, 0.1):
        lo, hi = betting.hedged_cs(x, alpha=alpha, breaks=1000, running_intersection=True)
        elo, ehi = hedged_bounds(x[None, :], alpha, grid=1000)
        print(f"{name} alpha={alpha} two-sided: confseq L[-1]={lo[-1]:.3f} U[-1]={hi[-1]:.3f}; "
              f"max |diff| over every n: {np.abs(lo - elo[0]).max():.2e}, {np.abs(hi - ehi[0]).max():.2e}")
        print("  L every 10:", lo[9::10], " U every 10:", hi[9::10])
    lam = importlib.import_module("confseq.betting_strategies").lambda_predmix_eb
    lo, hi = betting.betting_cs(x, lambdas_fns_positive=[lambda x, m: lam(x, alpha=0.05)], alpha=0.05,
                                breaks=1000, running_intersection=True, theta=1, trunc_scale=0.5)
    elo, ehi = hedged_bounds(x[None, :], 0.05, grid=1000, alternative="greater")
    print(f"{name} alpha=0.05 one-sided lower (theta=1): max |diff| over every n: "
          f"{np.abs(lo - elo[0]).max():.2e}; L every 10:", lo[9::10])
