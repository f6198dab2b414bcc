"""engine.cutting: the stretches of rows of one question id, on one thread or several."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from evalframe.engine.cutting import run_starts


def _loop_starts(ids: list) -> list[int]:
    """A row starts a stretch when it is the first, a missing id, or differs from the row before."""
    return [i for i, v in enumerate(ids) if i == 0 or v is None or v != ids[i - 1]]


@pytest.mark.parametrize("seed", range(12))
def test_stretches_on_any_thread_count_are_a_loops(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.choice([0, 1, 2, 3, 7, 50, 1000]))
    lengths = rng.integers(1, 6 if seed % 3 else 300, n + 1)
    ids = np.repeat(rng.integers(0, 4, len(lengths)), lengths)[:n]  # few values: equal neighbours across cuts
    as_str = [None if (seed % 2 and rng.random() < 0.05) else f"q{v}" for v in ids.tolist()]
    forms = {"int": (pd.Series(ids, dtype=np.int64), ids.tolist()),
             "object": (pd.Series(as_str, dtype=object), as_str),
             "arrow": (pa.array(as_str, pa.string()), as_str),
             "chunked": (pa.chunked_array([pa.array(as_str[:n // 2], pa.large_string()),
                                          pa.array(as_str[n // 2:], pa.large_string())]), as_str)}
    for name, (column, values) in forms.items():
        want = _loop_starts(values)
        for threads in (1, 2, 3, 4):
            assert run_starts(column, threads=threads).tolist() == want, (name, threads)
