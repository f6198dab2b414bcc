"""Per-question values on both bundled collections equal a table saved before the
restructuring (issue 9) and the speed work: every family, both `missing` modes.

The snapshot is data, not code under test: it was written once by
``tests/make_snapshot.py`` and is rewritten only by a change that means to change
numbers (and says so in its commit)."""
from pathlib import Path

import pandas as pd
import pytest

from tests.make_snapshot import snapshot, unchanged

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
    same = unchanged(a, b)  # the same bits (on a CPU of another kind: see unchanged)
    assert same.all(), now.loc[~same].head()


def test_only_another_cpus_last_bits_pass_for_unchanged():
    """The allowance for another CPU's last bits does not let a real change through: every
    value one unit in the last place off, or a few far off, is a change; a few values
    2e-16 off is another CPU's."""
    import numpy as np
    rng = np.random.default_rng(0)
    saved = rng.random(10_000)
    saved[:3] = np.nan
    assert unchanged(saved.copy(), saved).all()
    few = saved.copy()
    few[10:60] += 2e-16
    assert unchanged(few, saved).all()
    assert not unchanged(np.nextafter(saved, 2.0), saved).all()  # every value moved: a change
    far = saved.copy()
    far[10] += 1e-9
    assert not unchanged(far, saved).all()
    nan = saved.copy()
    nan[20] = np.nan
    assert not unchanged(nan, saved).all()
