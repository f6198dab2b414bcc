"""Per-question values on both bundled collections equal a table saved before the
restructuring (issue 9) and the speed work: every family, both `missing` modes.

The snapshot is data, not code under test: it was written once by
``tests/make_snapshot.py`` and is rewritten only by a change that means to change
numbers (and says so in its commit)."""
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests.make_snapshot import snapshot

SAVED = Path(__file__).parent / "data" / "snapshot_per_question.parquet"


@pytest.mark.filterwarnings("ignore")
def test_per_question_values_identical_to_saved_table():
    saved = pd.read_parquet(SAVED)
    now = snapshot()
    assert list(now.columns) == list(saved.columns)
    assert len(now) == len(saved)
    for col in ("case", "system", "query_id", "measure"):
        assert (now[col].to_numpy() == saved[col].to_numpy()).all(), col
    a, b = now["value"].to_numpy(dtype=float), saved["value"].to_numpy(dtype=float)
    same = (a == b) | (np.isnan(a) & np.isnan(b))
    assert same.all(), now.loc[~same].head()
