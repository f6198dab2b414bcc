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
