"""The shared intermediates against slow loops written here."""
import numpy as np
import pytest

from evalframe.measures.intermediates import sums_at_cutoffs


@pytest.mark.parametrize("depth", [3, 5, 40])
def test_sums_at_cutoffs_is_bincount_per_cutoff(depth):
    # cutoffs beyond every position (no entry in their interval) keep the sums through the last one
    rng = np.random.default_rng(depth)
    n = 50
    owner = np.sort(rng.integers(0, n, 400))
    pos = np.concatenate([np.arange(1, c + 1) for c in np.bincount(owner, minlength=n)])
    pos = np.minimum(pos, depth)
    w = rng.random(len(owner))
    ks = [5, 10, None, 100, 2]
    got = sums_at_cutoffs(owner, pos, w, n, ks)
    for k, g in zip(ks, got):
        expected = np.zeros(n)
        for o, p, x in zip(owner, pos, w):  # entry by entry, in order
            if k is None or p <= k:
                expected[o] += x
        assert g.tobytes() == expected.tobytes()
    assert len({id(g) for g in got}) == len(ks)  # each cutoff its own array


def _table(rng, n_groups):
    import pandas as pd

    from evalframe.ranking import Judged
    sizes = rng.integers(0, 12, n_groups)  # some groups empty
    grp = np.repeat(np.arange(n_groups), sizes)
    rank = np.concatenate([np.arange(1, s + 1) for s in sizes]) if len(grp) else np.zeros(0, np.int64)
    return Judged(pd.DataFrame(), np.arange(n_groups), grp, rank, np.zeros(len(grp), np.int64),
                  np.zeros(0, np.int64), np.zeros(0, np.int64), n_groups, pd.DataFrame())


@pytest.mark.parametrize("density", [0.0, 0.02, 0.1, 0.5, 1.0])
def test_running_count_is_a_loop_sparse_or_dense(density):
    # a sparse mask is kept as its rows, a dense one as its cumulative count: the same counts
    from evalframe.measures.intermediates import RunningCount
    rng = np.random.default_rng(int(density * 100))
    V = _table(rng, 300)
    mask = rng.random(len(V.grp)) < density
    rc = RunningCount(V, mask)
    assert rc.sparse == (mask.sum() <= len(mask) / 8)
    running, seen = [], {}
    for g, x in zip(V.grp, mask):  # row by row, restarting at each group
        seen[g] = seen.get(g, 0) + int(x)
        running.append(seen[g])
    running = np.array(running, dtype=np.int64)
    rows = np.sort(rng.choice(len(mask), 200, replace=False))
    assert (rc.at(rows) == running[rows]).all()
    assert (rc.at(np.arange(len(mask))) == running).all()
    per_group_k = rng.integers(0, 15, V.n_groups)
    for k in (0, 1, 5, 11, np.inf, per_group_k):
        kk = np.broadcast_to(k, V.n_groups)
        want = np.array([mask[(V.grp == g) & (V.rank <= kk[g])].sum() for g in range(V.n_groups)], float)
        wont = np.array([(~mask)[(V.grp == g) & (V.rank <= kk[g])].sum() for g in range(V.n_groups)], float)
        assert (rc.at_rank(k) == want).all()
        assert (rc.at_rank(k, holds=False) == wont).all()


@pytest.mark.parametrize("n_codes, n_rows", [(0, 0), (1, 0), (5, 0), (1, 1), (3, 40), (1000, 3000), (1000, 50), (50, 1000)])
def test_group_starts_is_searchsorted_over_the_codes(n_codes, n_rows):
    # both ways (counted when codes are many for the rows, binary search when few),
    # with codes that have no row at the start, in the middle and at the end
    from evalframe._judged import group_starts
    rng = np.random.default_rng(n_codes * 7 + n_rows)
    codes = np.sort(rng.integers(1, max(n_codes - 1, 2), n_rows)) if n_codes else np.zeros(0, np.int64)
    codes = codes[codes < n_codes]
    assert np.array_equal(group_starts(codes, n_codes), np.searchsorted(codes, np.arange(n_codes)))
