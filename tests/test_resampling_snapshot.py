"""The resampled numbers of report() and of the statistics layer equal a table main saved
before the resampling ran on threads (issue 31), under 1, 2 and 4 threads and with
``EVALFRAME_THREADS``; and the threads do run (the oracle is main's numbers, not the code
compared with itself).

The table is data, not code under test: ``tests/make_resampling_snapshot.py`` wrote it
from main at 0212e1f, with resampling chunks small enough that every random stream is
drawn in several chunks."""
import pandas as pd
import pytest

from evalframe.stats import resampling
from tests.make_resampling_snapshot import SAVED, snapshot
from tests.make_snapshot import unchanged


def same_as_saved(now: pd.DataFrame) -> None:
    saved = pd.read_parquet(SAVED)
    assert list(now.columns) == list(saved.columns)
    assert len(now) == len(saved)
    for col in ("case", "column", "row"):
        assert (now[col].to_numpy() == saved[col].to_numpy()).all(), col
    a, b = now["value"].to_numpy(dtype=float), saved["value"].to_numpy(dtype=float)
    same = unchanged(a, b)  # the same bits (on a CPU of another kind: see unchanged)
    assert same.all(), now.loc[~same].head()


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("threads", [1, 2, 4])
def test_resampled_numbers_identical_to_saved_table(threads):
    same_as_saved(snapshot(threads=threads))


@pytest.mark.filterwarnings("ignore")
def test_identical_with_the_environment_variable_and_the_threads_run(monkeypatch):
    """``EVALFRAME_THREADS=3``: the same numbers, and chunks of one stream ran three at a time."""
    seen = []

    class Spy(resampling.InOrder):
        def submit(self, fn, *args):
            out = super().submit(fn, *args)
            seen.append((self.threads, len(out)))
            return out

    monkeypatch.setattr(resampling, "InOrder", Spy)
    monkeypatch.setenv("EVALFRAME_THREADS", "3")
    same_as_saved(snapshot())
    assert seen and {t for t, _ in seen} == {3}
    assert sum(1 for _, done in seen if done == 0) > 0  # chunks waited in flight
