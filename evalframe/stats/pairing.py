"""Pairing two systems' per-question values: the (family x question) x system matrix, the
pairs of systems, :class:`PairedData` (the differences of each (family, pair) and their
summaries) and the warning about questions only one system answers.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from evalframe.errors import EvalframeInputError, InputProblem, UnpairedQuestionsWarning
from evalframe.errors import warn as warn_user

from .._threads import cached_property
from .resampling import bootstrap_means, cluster_se, same_question_sets
from .validation import run_starts, sorted_codes


#: a spread (sd of d, or the cluster se) at most this times mean(|d|) is float round-off
#: of equal differences (0.19999999999999998, 0.2, ...) and counts as 0, as the
#: randomisation test's guard counts ties at 1e-10 of sum(|d|)
ROUND_OFF = 1e-10


@dataclass
class PairedData:
    """One entry per (family, pair): the paired differences and their summaries."""

    systems: list
    fam: list[tuple]                 #: (by..., measure) of each entry
    a: np.ndarray                    #: system index of system_a
    b: np.ndarray
    rows: list[np.ndarray]           #: rows of ``W`` both systems answer
    dropped: np.ndarray              #: questions only one of them answers
    W: np.ndarray                    #: (family x question) rows x systems, NaN if absent
    fam_rows: dict[tuple, np.ndarray]
    qids: np.ndarray                 #: query_id of each row of ``W``
    xa: list[np.ndarray]
    xb: list[np.ndarray]
    codes: list[np.ndarray] | None   #: cluster codes 0..G-1 per entry's questions
    n: np.ndarray = field(init=False)
    ds: list[np.ndarray] = field(init=False)
    diff: np.ndarray = field(init=False)
    sd: np.ndarray = field(init=False)
    #: bootstrap distributions drawn so far (see :meth:`bootstrap`)
    boots: dict = field(init=False, default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self.n = np.array([len(r) for r in self.rows], dtype=np.int64)
        self.ds = [xb - xa for xa, xb in zip(self.xa, self.xb)]
        self.diff = np.array([d.mean() if d.size else np.nan for d in self.ds])
        sd = np.array([d.std(ddof=1) if d.size > 1 else np.nan for d in self.ds])
        self.sd = np.where(sd <= ROUND_OFF * self.scale, 0.0, sd)

    @cached_property
    def scale(self) -> np.ndarray:
        """mean(|d|) per entry: the scale of the round-off guard."""
        return np.array([np.abs(d).mean() if d.size else np.nan for d in self.ds])

    @property
    def k(self) -> int:
        return len(self.rows)

    @cached_property
    def n_clusters(self) -> np.ndarray | None:
        if self.codes is None:
            return None
        return np.array([len(np.unique(c)) for c in self.codes], dtype=np.int64)

    @cached_property
    def se_df(self) -> tuple[np.ndarray, np.ndarray]:
        """Standard error of mean(d) and degrees of freedom (cluster-robust with clusters)."""
        nf = self.n.astype(np.float64)
        if self.codes is None:
            with np.errstate(divide="ignore", invalid="ignore"):
                return self.sd / np.sqrt(nf), nf - 1
        se = np.array([cluster_se(d, c, m) if d.size else np.nan
                       for d, c, m in zip(self.ds, self.codes, self.diff)])
        se = np.where(se <= ROUND_OFF * self.scale, 0.0, se)
        return se, self.n_clusters.astype(np.float64) - 1

    def usable(self) -> np.ndarray:
        """Entries with >= 2 questions (and >= 2 clusters)."""
        ok = self.n >= 2
        if self.codes is not None:
            ok &= self.n_clusters >= 2
        return ok

    @cached_property
    def question_sets(self) -> list[np.ndarray]:
        """Usable entries grouped by shared questions (one resampling draw per group)."""
        return [np.asarray(i) for i in
                same_question_sets(self.rows, self.qids, np.flatnonzero(self.usable()))]

    def stacked(self, idx: np.ndarray) -> np.ndarray:
        return np.column_stack([self.ds[i] for i in idx])

    def bootstrap(self, entries: np.ndarray, sub: np.ndarray, clusters: np.ndarray | None,
                  n_resamples: int, seed: int, *, threads: int = 1) -> np.ndarray:
        """:func:`bootstrap_means` of ``sub`` (the differences of ``entries``), drawn once per
        (entries, n_resamples, seed): the intervals at other levels (one-sided, adjusted
        for the family) read the same distribution instead of drawing it again."""
        key = (tuple(int(i) for i in entries), n_resamples, seed)
        if key not in self.boots:
            self.boots[key] = bootstrap_means(sub, n_resamples=n_resamples, seed=seed, clusters=clusters,
                                              threads=threads)
        return self.boots[key]


def systems_and_pairs(df: pd.DataFrame, baseline: str | None,
                       ) -> tuple[list, list[tuple[int, int]]]:
    """Systems in order of first appearance; every pair, or baseline vs each other."""
    systems = list(pd.unique(df["system"]))
    problems = []
    if len(systems) < 2:
        problems.append(InputProblem(
            f"only one system ({systems[0] if systems else 'none'!r}); compare() needs at "
            "least two", "evaluate two or more systems on the same questions (column 'system')"))
    if baseline is not None and baseline not in systems:
        problems.append(InputProblem(
            f"baseline {baseline!r} is not a system of the table (systems: {systems[:10]})",
            "pass one of the values of the 'system' column"))
    if problems:
        raise EvalframeInputError("per_question", problems)
    if baseline is None:
        return systems, list(itertools.combinations(range(len(systems)), 2))
    b = systems.index(baseline)
    return systems, [(b, j) for j in range(len(systems)) if j != b]


def _wide(df: pd.DataFrame, systems: list, fam_keys: list[str], cluster: str | None,
          known: dict[str, np.ndarray] | None = None):
    """(family x question) x system matrix, its query ids, clusters and family rows
    (``known``: column codes :func:`clean_table` found)."""
    codes = sorted_codes(df, [*fam_keys, "query_id"], known=known)
    if codes is not None:
        return _wide_from_codes(df, codes, systems, fam_keys, cluster)
    wide = df.set_index([*fam_keys, "query_id", "system"])["value"].unstack("system")
    wide = wide.reindex(columns=systems)
    qids = wide.index.get_level_values("query_id").to_numpy()
    clusters = None
    if cluster:  # a question sits in one cluster (checked by clean_table)
        of_q = df.drop_duplicates("query_id").set_index("query_id")[cluster]
        clusters = pd.factorize(of_q.reindex(qids).to_numpy())[0]
    fam_index = wide.index.droplevel("query_id")
    fam_rows = {
        (key if isinstance(key, tuple) else (key,)): rows
        for key, rows in pd.Series(np.arange(len(wide))).groupby(
            [fam_index.get_level_values(k) for k in fam_keys], sort=False).indices.items()}
    return wide.to_numpy(dtype=np.float64), qids, clusters, fam_rows


def _wide_from_codes(df: pd.DataFrame, codes: list[np.ndarray], systems: list, fam_keys: list[str],
                     cluster: str | None):
    """:func:`_wide` on integer codes: the rows sorted by (family, question) as ``unstack``
    sorts them, one column per system (NaN where a system has no value)."""
    order = np.lexsort(codes[::-1])
    new_row = run_starts([c[order] for c in codes])
    row_of = np.empty(len(df), dtype=np.int64)
    row_of[order] = np.cumsum(new_row) - 1
    first = order[new_row]  # a row of the table for each (family, question)
    col = pd.Index(systems).get_indexer(df["system"])
    W = np.full((len(first), len(systems)), np.nan)
    W[row_of, col] = df["value"].to_numpy(dtype=np.float64)
    qids = df["query_id"].to_numpy()[first]
    clusters = None
    if cluster:  # a question sits in one cluster (checked by clean_table)
        of_q = df.drop_duplicates("query_id").set_index("query_id")[cluster]
        clusters = pd.factorize(of_q.reindex(qids).to_numpy())[0]
    fam_rows = {}
    if len(first):
        starts = np.flatnonzero(run_starts([c[first] for c in codes[:-1]]))
        ends = np.r_[starts[1:], len(first)]
        keys = df[fam_keys].take(first[starts])
        for key, a, b in zip(keys.itertuples(index=False, name=None), starts, ends):
            fam_rows[tuple(key)] = np.arange(a, b)
    return W, qids, clusters, fam_rows


def paired_data(df: pd.DataFrame, systems: list, pairs: list[tuple[int, int]],
                fam_keys: list[str], cluster: str | None, *,
                known: dict[str, np.ndarray] | None = None) -> PairedData:
    """Pair the systems on shared questions within each family (by..., measure);
    ``known``: codes of ``df``'s columns :func:`clean_table` found (reused)."""
    W, qids, clusters, fam_rows = _wide(df, systems, fam_keys, cluster, known)
    fam, a, b, rows, dropped = [], [], [], [], []
    for key, fr in fam_rows.items():
        present = ~np.isnan(W[fr])
        for ia, ib in pairs:
            both = present[:, ia] & present[:, ib]
            either = present[:, ia] | present[:, ib]
            if not either.any():
                continue  # neither system has this measure / segment
            fam.append(key)
            a.append(ia)
            b.append(ib)
            rows.append(fr[both])
            dropped.append(int(either.sum() - both.sum()))
    codes = None if clusters is None else [pd.factorize(clusters[r])[0] for r in rows]
    return PairedData(systems=systems, fam=fam, a=np.array(a, dtype=np.int64),
                      b=np.array(b, dtype=np.int64), rows=rows,
                      dropped=np.array(dropped, dtype=np.int64), W=W, fam_rows=fam_rows,
                      qids=qids, xa=[W[r, i] for r, i in zip(rows, a)],
                      xb=[W[r, i] for r, i in zip(rows, b)], codes=codes)


def warn_dropped(data: PairedData, caller: str = "compare") -> None:
    """The warning that questions only one system of a pair answers were left out."""
    total = int(data.dropped.sum())
    if total:
        w = int(np.argmax(data.dropped))
        warn_user(
            f"{caller}(): {total} questions dropped (summed over pairs) because only one system "
            f"of a pair answers them (e.g. {data.dropped[w]} for {data.systems[data.a[w]]} vs "
            f"{data.systems[data.b[w]]}); see column n_dropped", UnpairedQuestionsWarning)

