"""Resampling engines: chunked bootstrap means, jackknife, sign flips, cluster sums.

Every engine works on a (questions x columns) matrix, so all the systems or pairs that
share a set of questions share one draw: a (resamples x questions) matrix of bootstrap
counts or sign flips times the value matrix, chunk by chunk, so memory stays bounded at
any size. Every engine starts from ``numpy.random.default_rng(seed)``.

Threads (``threads=``): the chunks of one random stream are drawn in the calling thread,
in order and of the sizes they have on one thread, and what is computed from each chunk
(counts, matrix products, comparisons, partial sorts) runs on threads, ``threads`` chunks
in flight while the next is drawn (:func:`map_draws`); the partial results are combined in
the chunks' order.  The numbers are therefore the same under any thread count, bit for bit.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TypeVar

import numpy as np

from .._threads import InOrder

D = TypeVar("D")
R = TypeVar("R")

#: elements of one resampling chunk (float64: 32 MB); bounds memory at any size.
CHUNK_ELEMENTS = 4_000_000
#: randomisation tests enumerate all 2**n sign flips up to this many questions.
EXACT_MAX_N = 20
#: fewer clusters than this: ``summarize(method="auto")`` takes the cluster t, and a cluster
#: bootstrap warns (FewClustersWarning). Measured by ``benchmarks/sim_coverage.py clusters``
#: (1,000 simulations each, the docs' statistics page): the cluster bootstrap's shift test
#: rejects 0.101 at alpha 0.05 with 10 clusters and 0.068 with 30, its 95% interval covers
#: 0.904 and 0.937; the cluster t: 0.056 / 0.945 and 0.053 / 0.953.
FEW_CLUSTERS = 30


def chunk_rows(width: int) -> int:
    """Rows of a chunk whose width is ``width`` (at least 1)."""
    return max(1, CHUNK_ELEMENTS // max(width, 1))


def column_batches(k: int, n: int, n_resamples: int) -> list[np.ndarray]:
    """Split k columns so that a (n_resamples x columns) bootstrap table stays < ~256 MB."""
    per = max(1, 32_000_000 // max(n_resamples, 1))
    return [np.arange(s, min(k, s + per)) for s in range(0, k, per)]


def cluster_sums(X: np.ndarray, clusters: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-cluster column sums (G x k) and cluster sizes (G,), codes 0..G-1 per row of X."""
    units = int(clusters.max()) + 1
    S = np.zeros((units, X.shape[1]))
    np.add.at(S, clusters, X)
    return S, np.bincount(clusters, minlength=units).astype(np.float64)


def cluster_se(x: np.ndarray, clusters: np.ndarray, mean: float) -> float:
    """Cluster-robust standard error of the mean of x (codes 0..G-1 per value).

    ``se^2 = G / (G - 1) * sum_g (S_g - n_g mean)^2 / n^2`` with cluster sums S_g and
    sizes n_g; NaN with fewer than two clusters. With one question per cluster it is
    algebraically ``sd / sqrt(n)``.
    """
    s_g = np.bincount(clusters, weights=x)
    n_g = np.bincount(clusters).astype(np.float64)
    G = s_g.size
    if G < 2:
        return math.nan
    return math.sqrt(G / (G - 1) * ((s_g - n_g * mean) ** 2).sum()) / x.size


def map_draws(work: Callable[[D], R], draws: Iterable[D], *, threads: int = 1) -> Iterator[R]:
    """``work(d)`` of every ``d`` of ``draws``, in order: the draws are taken in the calling
    thread, in order (a random stream is drawn as on one thread), and their work runs on
    ``threads`` threads (:class:`evalframe._threads.InOrder`): ``threads`` draws in flight
    while the next is drawn (a stream of one chunk runs in the calling thread)."""
    it = iter(draws)
    if threads > 1:
        first = next(it, None)
        second = next(it, None) if first is not None else None
        if second is not None:
            with InOrder(threads) as queue:
                for d in (first, second):
                    yield from queue.submit(work, d)
                for d in it:
                    yield from queue.submit(work, d)
                yield from queue.drain()
            return
        if first is not None:
            yield work(first)
        return
    for d in it:
        yield work(d)


def bootstrap_draws(units: int, *, n_resamples: int, seed: int) -> Iterator[tuple[int, np.ndarray]]:
    """Bootstrap resamples of ``units`` units, chunk by chunk: ``(start, idx)`` with the
    units drawn, shape (chunk, units), from ``numpy.random.default_rng(seed)`` (turned
    into counts by :func:`resample_counts`)."""
    rng = np.random.default_rng(seed)
    step = chunk_rows(units)
    for start in range(0, n_resamples, step):
        c = min(step, n_resamples - start)
        yield start, rng.integers(0, units, size=(c, units))


def resample_counts(idx: np.ndarray) -> np.ndarray:
    """The counts (times each unit is drawn, float64) of the resamples ``idx`` (chunk x
    units) of :func:`bootstrap_draws`; ``idx`` is used up."""
    c, units = idx.shape
    idx += np.arange(c)[:, None] * units
    return np.bincount(idx.ravel(), minlength=c * units).reshape(c, units).astype(np.float64)


def bootstrap_count_chunks(units: int, *, n_resamples: int, seed: int):
    """Bootstrap resamples of ``units`` units as counts (times each unit is drawn),
    chunk by chunk: ``(start, counts)`` with counts of shape (chunk, units), drawn from
    ``numpy.random.default_rng(seed)``."""
    for start, idx in bootstrap_draws(units, n_resamples=n_resamples, seed=seed):
        yield start, resample_counts(idx)


def distribution_memory(n_resamples: int, k: int, *, func: str = "bootstrap") -> None:
    """Refuse, before allocating it, a (n_resamples x k) float64 bootstrap distribution
    larger than the memory budget (a quarter of the memory available,
    :func:`evalframe.engine.budget.default_memory_budget`): a ValueError saying how much it
    needs and the most resamples that fit (instead of a MemoryError traceback)."""
    from evalframe.engine.budget import default_memory_budget, mib
    need = int(n_resamples) * max(int(k), 1) * 8
    budget = default_memory_budget()
    if need > budget:
        fit = max(1, budget // (8 * max(int(k), 1)))
        raise ValueError(f"{func}: n_resamples={n_resamples} needs {mib(need)} for the bootstrap distribution "
                         f"of {k} column(s) ({n_resamples} x {k} floats), more than the memory budget "
                         f"{mib(budget)} (a quarter of the memory available); use n_resamples <= {fit} "
                         "(the default is 10,000)")


def bootstrap_means(X: np.ndarray, *, n_resamples: int, seed: int,
                    clusters: np.ndarray | None = None, threads: int = 1) -> np.ndarray:
    """Bootstrap distribution of column means, shape (n_resamples, k).

    ``X`` is (n questions x k columns). Questions (or whole clusters, given integer
    cluster codes 0..G-1 per question) are resampled with replacement; each resample is
    a row of counts, and the means of all columns come from one matrix product
    (chunks of resamples on ``threads`` threads, the same numbers under any count).
    """
    n, k = X.shape
    if clusters is None:
        S, sizes = X, None
    else:
        S, sizes = cluster_sums(X, clusters)
    distribution_memory(n_resamples, k)
    out = np.empty((n_resamples, k))
    # the counts of each chunk on our threads, the products in the calling thread (BLAS
    # runs them on its own threads) while the next chunks' counts are made
    draws = bootstrap_draws(S.shape[0], n_resamples=n_resamples, seed=seed)
    for start, counts in map_draws(lambda d: (d[0], resample_counts(d[1])), draws, threads=threads):
        sums = counts @ S
        denom = float(n) if sizes is None else (counts @ sizes)[:, None]
        out[start:start + counts.shape[0]] = sums / denom
    return out


def bootstrap_t_statistics(X: np.ndarray, *, n_resamples: int, seed: int, threads: int = 1) -> np.ndarray:
    """Studentized bootstrap: ``t* = mean(x*) / (sd(x*) / sqrt(n))`` of each resample of
    each column of X (n questions x k), shape (n_resamples, k); the same resamples as
    :func:`bootstrap_means` with the same seed (chunks on ``threads`` threads). A resample
    without spread has t* = +-inf (NaN when its mean is 0 too); a variance within
    round-off of 0 counts as 0."""
    n, k = X.shape
    X2 = X * X
    distribution_memory(n_resamples, k)
    out = np.empty((n_resamples, k))
    draws = bootstrap_draws(n, n_resamples=n_resamples, seed=seed)
    for start, counts in map_draws(lambda d: (d[0], resample_counts(d[1])), draws, threads=threads):
        s1 = counts @ X
        s2 = counts @ X2
        mean = s1 / n
        var = (s2 - n * mean * mean) / (n - 1)
        var = np.where(var <= 1e-12 * s2 / max(n - 1, 1), 0.0, var)
        with np.errstate(divide="ignore", invalid="ignore"):
            out[start:start + counts.shape[0]] = mean / np.sqrt(var / n)
    return out


def jackknife_means(X: np.ndarray, clusters: np.ndarray | None = None) -> np.ndarray:
    """Leave-one-question (or one-cluster) -out means, shape (units, k)."""
    n = X.shape[0]
    total = X.sum(axis=0)
    if clusters is None:
        return (total[None, :] - X) / (n - 1)
    S, sizes = cluster_sums(X, clusters)
    return (total[None, :] - S) / (n - sizes)[:, None]


def percentile_ci(boot: np.ndarray, confidence: float) -> tuple[np.ndarray, np.ndarray]:
    """Percentile interval of each column of a bootstrap distribution."""
    a = (1 - confidence) / 2
    lo, hi = np.quantile(boot, [a, 1 - a], axis=0)
    return lo, hi


def bca_ci(boot: np.ndarray, observed: np.ndarray, jack: np.ndarray,
           confidence: float) -> tuple[np.ndarray, np.ndarray]:
    """BCa interval (Efron & Tibshirani 1993, 14.3), computed as scipy.stats.bootstrap."""
    from scipy.special import ndtr, ndtri

    B = boot.shape[0]
    frac = ((boot < observed).sum(axis=0) + (boot <= observed).sum(axis=0)) / (2 * B)
    u = jack.mean(axis=0) - jack
    with np.errstate(divide="ignore", invalid="ignore"):
        z0 = ndtri(frac)
        a_hat = (u ** 3).sum(axis=0) / (6 * ((u ** 2).sum(axis=0)) ** 1.5)
        z_a = ndtri((1 - confidence) / 2)
        lo_q = ndtr(z0 + (z0 + z_a) / (1 - a_hat * (z0 + z_a)))
        hi_q = ndtr(z0 + (z0 - z_a) / (1 - a_hat * (z0 - z_a)))
    lo = np.full(boot.shape[1], np.nan)
    hi = np.full(boot.shape[1], np.nan)
    for j in range(boot.shape[1]):  # loop over columns (systems / pairs), not resamples
        if np.isfinite(lo_q[j]) and np.isfinite(hi_q[j]):
            lo[j], hi[j] = np.quantile(boot[:, j], [lo_q[j], hi_q[j]])
        elif np.ptp(boot[:, j]) == 0:  # every resample equal: a point interval
            lo[j] = hi[j] = observed[j]
    return lo, hi


def _flip_count(kept: np.ndarray, total: np.ndarray, tol: np.ndarray, alternative: str) -> np.ndarray:
    """How many sign vectors give a sum T* at least as extreme as the observed T
    (``kept``: ``bits @ D``, the sums of the differences whose sign is kept)."""
    T = 2.0 * kept - total
    if alternative == "greater":
        return (T >= total - tol).sum(axis=0)
    if alternative == "less":
        return (T <= total + tol).sum(axis=0)
    return (np.abs(T) >= np.abs(total) - tol).sum(axis=0)


def sign_flip_draws(n: int, *, n_resamples: int, seed: int, exact: bool) -> Iterator[np.ndarray]:
    """The sign vectors of :func:`sign_flip_chunks` as drawn, chunk by chunk (turned into
    bits by :func:`flip_bits`): exact, the numbers of the vectors (int64); Monte Carlo,
    random bytes of ``default_rng(seed)``, shape (chunk, ceil(n / 8))."""
    step = chunk_rows(n)
    if exact:
        n_total = 2 ** n
        for start in range(0, n_total, step):
            yield np.arange(start, min(n_total, start + step), dtype=np.int64)
        return
    rng = np.random.default_rng(seed)
    width = (n + 7) // 8
    for start in range(0, n_resamples, step):
        c = min(step, n_resamples - start)
        yield rng.integers(0, 256, size=(c, width), dtype=np.uint8)


def flip_bits(drawn: np.ndarray, n: int) -> np.ndarray:
    """The 0/1 bits (float64, shape (chunk, n)) of a chunk of :func:`sign_flip_draws`."""
    if drawn.ndim == 1:  # exact: the bits of the vectors' numbers
        return ((drawn[:, None] >> np.arange(n, dtype=np.int64)) & 1).astype(np.float64)
    return np.unpackbits(drawn, axis=1, count=n).astype(np.float64)


def sign_flip_chunks(n: int, *, n_resamples: int, seed: int, exact: bool):
    """The sign vectors of the randomisation test, chunk by chunk, as 0/1 bits (1: the
    sign is kept, 0: flipped), shape (chunk, n). Exact: all 2**n vectors in the order of
    their binary number (the first is all flipped, the last the identity). Monte Carlo:
    ``n_resamples`` vectors from random bytes of ``default_rng(seed)``. The test and the
    interval that inverts it read the same vectors."""
    for drawn in sign_flip_draws(n, n_resamples=n_resamples, seed=seed, exact=exact):
        yield flip_bits(drawn, n)


def sign_flip_pvalues(D: np.ndarray, *, n_resamples: int, seed: int, exact: bool,
                      alternative: str = "two-sided", threads: int = 1) -> tuple[np.ndarray, int]:
    """Randomisation p-values of the mean of each column of D (n x k).

    Two-sided counts ``|T*| >= |T|``, ``"greater"`` counts ``T* >= T`` and ``"less"``
    ``T* <= T``. Exact: all 2**n sign vectors, p = count / 2**n (the exact permutation
    p-value, never 0 since the identity flip counts). Monte Carlo: B random sign vectors
    from random bytes, p = (count + 1) / (B + 1), never 0. T* for every column comes
    from one product (signs @ D) per chunk, written as 2 * (bits @ D) - sum(D); chunks
    on ``threads`` threads (integer counts: the same under any count).
    """
    n, k = D.shape
    total = D.sum(axis=0)
    tol = 1e-10 * np.abs(D).sum(axis=0)  # float round-off guard
    count = np.zeros(k, dtype=np.int64)
    # the products in the calling thread (BLAS runs them on its own threads), the
    # comparisons of each chunk on ours
    kept = (flip_bits(drawn, n) @ D for drawn in sign_flip_draws(n, n_resamples=n_resamples, seed=seed, exact=exact))
    for c in map_draws(lambda s: _flip_count(s, total, tol, alternative), kept, threads=threads):
        count += c
    if exact:
        return count / 2 ** n, 2 ** n
    return (count + 1) / (n_resamples + 1), n_resamples


def _keep_extremes(kept: np.ndarray | None, new: np.ndarray, r: int, largest: bool) -> np.ndarray:
    """The r largest (or smallest) values of each column of ``kept`` and ``new`` together."""
    both = new if kept is None else np.concatenate([kept, new])
    if both.shape[0] <= r:
        return both
    if largest:
        return np.partition(both, both.shape[0] - r, axis=0)[-r:]
    return np.partition(both, r - 1, axis=0)[:r]


def sign_flip_interval(S: np.ndarray, sizes: np.ndarray, *, n_resamples: int, seed: int,
                       exact: bool, confidence: float, alternative: str = "two-sided",
                       threads: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """The interval of the mean difference that inverts :func:`sign_flip_pvalues`.

    ``S`` (units x k) holds the sums of the differences of each unit (a question, or a
    cluster), ``sizes`` (units,) its questions. The interval is every shift delta at
    which the randomisation test of ``d - delta``, with the same sign vectors (same
    ``seed``), has ``p >= 1 - confidence``: it excludes 0 exactly when the test's p is
    below ``1 - confidence`` (up to the test's round-off guard).

    Notes
    -----
    For the mean statistic the inversion is closed-form. A sign vector keeps units K
    and flips units F; with ``m_K`` and ``m_F`` the mean difference of the questions in
    each, ``|T*(delta)| >= |T(delta)|`` holds exactly when delta lies between ``m_F``
    and ``m_K`` (the identity and the all-flipped vector: for every delta). Each such
    segment holds ``mean(d)``, so the count ``N(delta)`` falls on both sides of it and
    the accepted set is an interval: with ``r = ceil(alpha (B + 1) - 1)`` (Monte Carlo,
    ``p = (N + 1) / (B + 1)``) or ``r = ceil(alpha 2**n)`` (exact, ``p = N / 2**n``),
    its upper end is the r-th largest ``max(m_F, m_K)`` and its lower end the r-th
    smallest ``min(m_F, m_K)`` (infinite when fewer than r vectors are drawn).
    One-sided: ``T*(delta) >= T(delta)`` exactly when ``delta >= m_F``, so
    ``"greater"`` gives ``[r-th smallest m_F, inf)`` and ``"less"`` ``(-inf, r-th
    largest m_F]``, inverting the one-sided test at level ``confidence``.
    """
    S = np.asarray(S, dtype=np.float64)
    n, k = S.shape
    sizes = np.asarray(sizes, dtype=np.float64)
    total, n_q = S.sum(axis=0), sizes.sum()
    snap = 5e-11 * np.abs(S).sum(axis=0)  # the test's round-off guard, on the mean scale below
    alpha = 1 - confidence
    if exact:
        r = math.ceil(alpha * 2 ** n - 1e-9)
    else:
        r = math.ceil(alpha * (n_resamples + 1) - 1 - 1e-9)
    lo = np.full(k, -np.inf)
    hi = np.full(k, np.inf)
    if r <= 0:
        return lo, hi

    def products(drawn: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        bits = flip_bits(drawn, n)
        return bits @ S, (bits @ sizes)[:, None]

    def extremes(kept: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray | None, np.ndarray | None]:
        """The r smallest ends ``low`` and r largest ends ``high`` of one chunk's vectors."""
        s_keep, n_keep = kept
        n_flip = n_q - n_keep
        s_flip = total - s_keep
        with np.errstate(divide="ignore", invalid="ignore"):
            m_keep = np.where(np.abs(s_keep) <= snap, 0.0, s_keep / n_keep)
            m_flip = np.where(np.abs(s_flip) <= snap, 0.0, s_flip / n_flip)
        every = (n_keep == 0) | (n_flip == 0)  # identity / all flipped: extreme at every delta
        if alternative == "two-sided":
            low = np.where(every, -np.inf, np.minimum(m_keep, m_flip))
            high = np.where(every, np.inf, np.maximum(m_keep, m_flip))
        else:
            low = high = np.where(n_flip == 0, -np.inf if alternative == "greater" else np.inf,
                                  m_flip)
        return (_keep_extremes(None, low, r, largest=False) if alternative in ("two-sided", "greater") else None,
                _keep_extremes(None, high, r, largest=True) if alternative in ("two-sided", "less") else None)

    # the r extremes of all vectors are those of the chunks' r extremes: the same values
    # (a selection, not a sum) whatever the chunks' order or thread
    kept_lo = kept_hi = None
    # the products in the calling thread (BLAS runs them on its own threads), the
    # comparisons and partial sorts of each chunk on ours
    kept = (products(d) for d in sign_flip_draws(n, n_resamples=n_resamples, seed=seed, exact=exact))
    for low, high in map_draws(extremes, kept, threads=threads):
        if low is not None:
            kept_lo = _keep_extremes(kept_lo, low, r, largest=False)
        if high is not None:
            kept_hi = _keep_extremes(kept_hi, high, r, largest=True)
    if kept_lo is not None and kept_lo.shape[0] >= r:
        lo = kept_lo.max(axis=0)
    if kept_hi is not None and kept_hi.shape[0] >= r:
        hi = kept_hi.min(axis=0)
    return lo, hi


def same_question_sets(rows: Sequence[np.ndarray], qids: np.ndarray,
                       members: Sequence[int]) -> list[list[int]]:
    """Group ``members`` whose rows hold the same questions (in the same order);
    ``qids`` are the question ids, or integer codes of them."""
    by_key: dict[bytes, list[int]] = {}
    for i in members:
        q = qids[rows[i]]
        key = q.tobytes() if q.dtype.kind in "iu" else np.asarray(q, dtype=str).tobytes()
        by_key.setdefault(key, []).append(i)
    return list(by_key.values())
