"""The Report: an immutable set of long, tidy tables plus the metadata that says how they
were made.  Rendering (:mod:`.views` and the ``render_*`` modules), files (:mod:`.persist`) and plots
(:mod:`evalframe.plots`) live elsewhere; the Report's methods only delegate to them."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Literal, Mapping, Sequence

import pandas as pd

from . import figures, persist, render_html, render_latex, render_markdown, views
from .diagnostics import ReportWarnings, report_warnings
from .tables import TABLES


@dataclass(frozen=True, eq=False, repr=False)
class Report:
    """The evaluation of one or many systems: tables, views, exports and plots.

    Every attribute returns a fresh copy, so changing a returned table never changes
    the Report. Build one with :func:`evalframe.report`, or :meth:`from_tables`.

    Attributes
    ----------
    summary : DataFrame
        One row per (system, measure): ``system, measure, n, mean, sd, se, ci_low,
        ci_high, method, confidence, n_resamples, seed`` (as :func:`stats.summarize`).
    per_question : DataFrame
        ``system, query_id, measure, value`` (:func:`evaluate`) + the segment columns.
    by_segment : DataFrame
        One row per (system, segment, segment_value, measure): ``n, mean, se, ci_low,
        ci_high, method, overall_mean, gap`` (``mean - overall_mean``), ``too_small``
        (n < 20), ``below_overall`` (the unadjusted screen: the whole interval lies below
        the system's overall mean), ``flag`` (text of those two), ``p_below`` (one-sided
        one-sample t-test of the segment against the overall mean), ``p_below_bh``
        (Benjamini-Hochberg across the segments of the system and measure) and
        ``below_overall_bh`` (``p_below_bh < 1 - confidence``): the flag the rendered
        report lists, with ``too_small``, before the segments not flagged.
    comparisons : DataFrame
        Paired comparisons (:func:`stats.compare`) against the baseline, or all pairs,
        plus ``significant`` (``p_adjusted < 1 - confidence``); empty with one system.
    diagnostics : DataFrame
        ``check, system, measure, count, value, level, detail, action, examples``
        (every row of :func:`evalframe.diagnostics` with its values): questions counted,
        dropped and scored 0, Judged@k, golden-set size and the interval half-width it
        implies, score ties, duplicates, measure definitions and conventions.
        ``level`` is ``"info"`` or ``"warning"``.
    stages : DataFrame
        For pipeline stages: ``stage, system, measure, k, n, mean, ci_low, ci_high,
        ceiling, share_of_ceiling, lost, method`` (empty without ``stages``).
    curves : DataFrame
        metric@k for every system: ``system, family, k, measure, n, mean, se, ci_low,
        ci_high`` (t intervals).
    planning : DataFrame
        :func:`stats.planning_curve` of the measures, with the golden set's own n, and
        ``method`` (``"t(n-1) half-width (z for 0/1 measures), noncentral-t power"``).
    changes : DataFrame
        Top regressions and improvements (:func:`top_changes`) of the baseline (or the first
        system) against each other system, per measure: ``system_a, system_b, measure,
        query_id, value_a, value_b, diff, direction, rank, text`` (text from ``queries=``).
    rankings : DataFrame
        The top 10 of the two rankings behind every top change: ``system, query_id, rank,
        doc_id, score, label`` (label NaN: not judged), ranked as the measures rank them
        (:meth:`explain` reads it). A run given by path gives them too: a Parquet file or
        dataset is read again for those questions alone (a filter on its question column),
        a text file read again whole; empty when the run was rolled up (``rollup=``) or
        given with ``chunks=``.
    metadata : dict
        evalframe version, measures, conventions, confidence, seed, n_resamples, test,
        correction, interval method, baseline, stages, systems, n_questions.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt
    >>> import evalframe as ef
    >>> cran = ef.datasets.load_cranfield()
    >>> runs = cran.runs[cran.runs["system"].isin(["bm25", "hybrid_rrf"])]
    >>> rep = ef.report(runs, cran.qrels, segments=cran.segments, measures=["nDCG@10"],
    ...                 baseline="bm25", n_resamples=200)
    >>> rep.systems, rep.measures, rep.reference
    (['bm25', 'hybrid_rrf'], ['nDCG@10'], 'bm25')
    >>> rep.summary[["system", "measure", "n", "mean"]].round(3)
           system  measure    n   mean
    0        bm25  nDCG@10  225  0.359
    1  hybrid_rrf  nDCG@10  225  0.405
    >>> sorted(rep.tables)[:4]
    ['by_segment', 'changes', 'comparisons', 'curves']
    """

    _tables: Mapping[str, pd.DataFrame] = field(repr=False)
    _metadata: Mapping[str, object] = field(repr=False)
    _warnings_issued: bool = field(default=False, repr=False)

    @classmethod
    def from_tables(cls, tables: Mapping[str, pd.DataFrame], metadata: Mapping[str, object], *,
                    warnings_issued: bool = False) -> "Report":
        """A Report of these tables (one per name of :data:`TABLES`) and metadata (copied).

        ``warnings_issued``: its warnings were issued as Python warnings when it was
        computed (:func:`evalframe.report` says so); see :attr:`warnings_issued`."""
        missing = [n for n in TABLES if n not in tables]
        if missing:
            raise ValueError(f"Report: tables must hold {list(TABLES)}, got {sorted(tables)!r}")
        return cls(MappingProxyType({n: tables[n].reset_index(drop=True) for n in TABLES}),
                   MappingProxyType(json.loads(json.dumps(dict(metadata)))), bool(warnings_issued))

    @property
    def warnings_issued(self) -> bool:
        """True when this Report's warnings were issued as Python warnings as it was computed
        (a Report from :func:`evalframe.report`, in this process); False for one read back
        (:func:`read_report`) or built from tables. The notebook view then lists them
        collapsed, under one line, rather than a second time (see :func:`evalframe.report`)."""
        return self._warnings_issued

    # ---- tables (copies)
    @property
    def summary(self) -> pd.DataFrame:
        return self._tables["summary"].copy()

    @property
    def per_question(self) -> pd.DataFrame:
        return self._tables["per_question"].copy()

    @property
    def by_segment(self) -> pd.DataFrame:
        return self._tables["by_segment"].copy()

    @property
    def comparisons(self) -> pd.DataFrame:
        return self._tables["comparisons"].copy()

    @property
    def diagnostics(self) -> pd.DataFrame:
        return self._tables["diagnostics"].copy()

    @property
    def stages(self) -> pd.DataFrame:
        return self._tables["stages"].copy()

    @property
    def curves(self) -> pd.DataFrame:
        return self._tables["curves"].copy()

    @property
    def planning(self) -> pd.DataFrame:
        return self._tables["planning"].copy()

    @property
    def changes(self) -> pd.DataFrame:
        return self._tables["changes"].copy()

    @property
    def rankings(self) -> pd.DataFrame:
        return self._tables["rankings"].copy()

    def explain(self, question, system_a: str | None = None, system_b: str | None = None) -> pd.DataFrame:
        """The two rankings behind a top change, side by side: which documents, at which
        ranks, with which labels.

        Parameters
        ----------
        question : str
            A ``query_id`` of the ``changes`` table.
        system_a, system_b : str, optional
            Default: the reference system and the system of the question's largest change.

        Returns
        -------
        DataFrame
            ``rank, doc_a, label_a, doc_b, label_b`` (label NaN: not judged); a system's
            first relevant rank is its first row with a label >= ``rel`` (none when no
            such row is within the kept depth).

        Raises
        ------
        ValueError
            The question is not among the top changes (only their rankings are kept), or
            the report kept no rankings (the run was rolled up or given with chunks, or
            the report was saved before rankings were kept). A run in Dask or Spark is
            reported from Parquet: ``ddf.to_parquet(path)`` / ``sdf.write.parquet(path)``,
            then ``ef.report(path, ...)`` reads only the top changes' questions again.

        Examples
        --------
        >>> import warnings
        >>> import evalframe as ef
        >>> cran = ef.datasets.load_cranfield()
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     rep = ef.report(cran.runs, cran.qrels, measures=["RR"], baseline="bm25", n_resamples=20)
        >>> q = rep.changes["query_id"].iloc[0]
        >>> t = rep.explain(q)
        >>> list(t.columns), len(t) <= 10
        (['rank', 'doc_a', 'label_a', 'doc_b', 'label_b'], True)
        """
        from .changes import explain_table
        ch = self._tables["changes"]
        rk = self._tables["rankings"]
        q = str(question)
        rows = ch[ch["query_id"].astype(str) == q]
        if rk.empty:
            raise ValueError("explain: this report kept no rankings (the run was rolled up with rollup= or given "
                             "with chunks=, or the report was saved before reports kept them); build the report "
                             "from the run itself: a table in memory, a run file or a Parquet dataset (a Dask or "
                             "Spark run: write it to Parquet, ddf.to_parquet(path) or sdf.write.parquet(path), and "
                             "pass the path: only the top changes' questions are read again)")
        if rows.empty:
            raise ValueError(f"explain: question {question!r} is not among the top changes (only their rankings "
                             f"are kept), e.g. {list(pd.unique(ch['query_id'].astype(str)))[:5]}")
        if system_a is None:
            system_a = str(rows["system_a"].iloc[0])
        if system_b is None:
            system_b = str(rows.loc[rows["diff"].abs().idxmax(), "system_b"])
        kept = rk[rk["query_id"].astype(str) == q]["system"].astype(str)
        absent = [str(s) for s in (system_a, system_b) if str(s) not in set(kept)]
        if absent:
            raise ValueError(f"explain: no ranking of {absent} is kept for question {question!r} (the report keeps "
                             f"the rankings behind its top changes: {sorted(set(kept))} here)")
        conv = self._metadata.get("conventions") or {}
        return explain_table(rk, q, system_a, system_b, rel=int(conv.get("rel", 1)))

    @property
    def tables(self) -> dict[str, pd.DataFrame]:
        """Every table by name (copies), in the order of :data:`TABLES`."""
        return {n: self._tables[n].copy() for n in TABLES}

    @property
    def metadata(self) -> dict:
        return json.loads(json.dumps(dict(self._metadata)))

    @property
    def systems(self) -> list[str]:
        return list(self._metadata["systems"])

    @property
    def measures(self) -> list[str]:
        return list(self._metadata["measures"])

    @property
    def alpha(self) -> float:
        """Significance level of the markers: ``1 - confidence``."""
        return 1.0 - float(self._metadata["confidence"])

    @property
    def reference(self) -> str | None:
        """The system significance markers refer to: the baseline, else the first system
        (None with one system)."""
        if len(self._metadata["systems"]) < 2:
            return None
        return self._metadata["baseline"] or self._metadata["systems"][0]

    @property
    def warnings(self) -> ReportWarnings:
        """The warnings, one :class:`~evalframe.reporting.diagnostics.ReportWarning` (a
        :class:`warnings.WarningMessage`: ``message``, ``category``) per warning line shown;
        ``.table`` (and ``warnings["check"]``...) the diagnostics rows at level ``"warning"``."""
        return report_warnings(self._tables["diagnostics"])

    def warning_lines(self) -> list[str]:
        """The warnings in words, one line each (Judged@k warnings grouped over systems).

        Examples
        --------
        >>> import evalframe as ef
        >>> cran = ef.datasets.load_cranfield()
        >>> runs = cran.runs[cran.runs["system"].isin(["bm25", "hybrid_rrf"])]
        >>> rep = ef.report(runs, cran.qrels, segments=cran.segments, measures=["nDCG@10"],
        ...                 baseline="bm25", n_resamples=200)
        >>> rep.warning_lines()[0][:40]
        'unjudged documents in the top k (66%-69%'
        """
        return views.warning_lines(self)

    def __repr__(self) -> str:
        m = self._metadata
        return (f"Report(systems={list(m['systems'])}, questions={m['n_questions']}, "
                f"measures={list(m['measures'])}, baseline={m['baseline']!r}, "
                f"warnings={len(self.warnings)})")

    # ---- views and text (evalframe.reporting.views, render_html, render_markdown, render_latex)
    def summary_wide(self, digits: int = 3) -> pd.DataFrame:
        """Systems x measures, cells ``mean [ci_low, ci_high]`` (+ ``▲``/``▼`` when
        significantly above/below the reference system), the view the HTML and Markdown show.

        Examples
        --------
        >>> import evalframe as ef
        >>> cran = ef.datasets.load_cranfield()
        >>> runs = cran.runs[cran.runs["system"].isin(["bm25", "hybrid_rrf"])]
        >>> rep = ef.report(runs, cran.qrels, segments=cran.segments, measures=["nDCG@10"],
        ...                 baseline="bm25", n_resamples=200)
        >>> wide = rep.summary_wide()
        >>> wide.loc["hybrid_rrf", "nDCG@10"]
        '0.405 [0.370, 0.440] ▲'
        """
        return views.summary_wide(self, digits)

    def comparisons_view(self, digits: int = 3) -> pd.DataFrame:
        """The comparisons in words, one short cell per value (whole in a notebook's table):
        ``measure, system_a, system_b, diff, CI`` (unadjusted), ``adjusted CI`` (adjusted as
        ``p_adjusted`` is), ``adjustment, interval, p_adjusted, test, significant``; see
        ``evalframe.reporting.views.comparisons_view``.

        Examples
        --------
        >>> import evalframe as ef
        >>> cran = ef.datasets.load_cranfield()
        >>> runs = cran.runs[cran.runs["system"].isin(["bm25", "hybrid_rrf"])]
        >>> rep = ef.report(runs, cran.qrels, segments=cran.segments, measures=["nDCG@10"],
        ...                 baseline="bm25", n_resamples=200)
        >>> view = rep.comparisons_view()
        >>> view[["measure", "system_a", "system_b", "significant"]]
           measure system_a    system_b significant
        0  nDCG@10     bm25  hybrid_rrf           *
        """
        return views.comparisons_view(self, digits)

    def _repr_html_(self) -> str:
        """The notebook view: warnings, summary, comparisons and a small forest plot
        (the compact form of :meth:`to_html`)."""
        return render_html.to_html(self)

    def to_html(self, path, *, title: str | None = None, golden_set: str | None = None,
                plots_dir=None, dpi: int = 130, diff=None) -> Path:
        """Write the report as one self-contained HTML page and return its path.

        The page holds the question the report answers, warnings, the summary (intervals,
        significance marks, best system per measure emphasised), comparisons, flagged
        segments, pipeline stages, diagnostics, every plot (inline SVG) and how to read
        them. It needs no other file and no network: no script, no external address.

        Parameters
        ----------
        path : str or Path
            The file to write (e.g. ``"report.html"``); its folder is created.
        title : str, optional
            The page title (default: systems and number of questions).
        golden_set : str, optional
            What the golden set is called (a file or collection name), shown in the question.
        plots_dir : str or Path, optional
            Also write every plot as PNG there, as :meth:`save_plots` does (same names and
            sizes, ``dpi``), from the figures drawn for the page: each plot is built once
            for both (the ``evalframe report`` command writes its ``plots/`` this way).
        diff : ReportDiff, optional
            ``ef.diff(earlier, self)``: a section saying what changed since the earlier
            report (``evalframe report --previous DIR``).

        Returns
        -------
        Path
            The file written.

        Examples
        --------
        >>> import tempfile, warnings
        >>> from pathlib import Path
        >>> import evalframe as ef
        >>> cran = ef.datasets.load_cranfield()
        >>> runs = cran.runs[cran.runs["system"].isin(["bm25", "hybrid_rrf"])]
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")  # Judged@k is low on Cranfield: the page says so
        ...     rep = ef.report(runs, cran.qrels, measures=["R@5"], baseline="bm25", n_resamples=100)
        >>> path = rep.to_html(Path(tempfile.mkdtemp()) / "report.html", golden_set="Cranfield")
        >>> text = path.read_text()
        >>> path.name, text.count("<svg "), "http://" in text or "https://" in text  # 5 plots, no address
        ('report.html', 5, False)
        """
        p = persist.output_dir(path, "report.html")
        if plots_dir is not None:
            plots_dir = persist.output_dir(plots_dir, "plots_dir")
        p.parent.mkdir(parents=True, exist_ok=True)
        if plots_dir is not None:
            plots_dir.mkdir(parents=True, exist_ok=True)
        p.write_text(render_html.to_html_page(self, title=title, golden_set=golden_set, png_dir=plots_dir, dpi=dpi,
                                         diff=diff), encoding="utf-8")
        return p

    def to_markdown(self, digits: int = 3) -> str:
        """The report as Markdown (pipe tables; no ``tabulate`` needed).

        Examples
        --------
        >>> import evalframe as ef
        >>> cran = ef.datasets.load_cranfield()
        >>> runs = cran.runs[cran.runs["system"].isin(["bm25", "hybrid_rrf"])]
        >>> rep = ef.report(runs, cran.qrels, segments=cran.segments, measures=["nDCG@10"],
        ...                 baseline="bm25", n_resamples=200)
        >>> print(rep.to_markdown().splitlines()[0])
        # evalframe report
        """
        return render_markdown.to_markdown(self, digits)

    def to_latex(self, *, digits: int = 3, caption: str | None = None, label: str = "tab:evalframe",
                 intervals: bool = False) -> str:
        """The summary as a booktabs LaTeX table: systems x measures, best value bold,
        significance markers (test and correction named in the caption); no jinja2.

        Examples
        --------
        >>> import evalframe as ef
        >>> cran = ef.datasets.load_cranfield()
        >>> runs = cran.runs[cran.runs["system"].isin(["bm25", "hybrid_rrf"])]
        >>> rep = ef.report(runs, cran.qrels, segments=cran.segments, measures=["nDCG@10"],
        ...                 baseline="bm25", n_resamples=200)
        >>> "begin{table}" in rep.to_latex()
        True
        """
        return render_latex.to_latex(self, digits=digits, caption=caption, label=label, intervals=intervals)

    # ---- files (evalframe.reporting.persist)
    def to_csv(self, directory) -> Path:
        """Write every table as ``<name>.csv`` plus ``metadata.json`` (with column dtypes).

        Examples
        --------
        >>> import evalframe as ef
        >>> cran = ef.datasets.load_cranfield()
        >>> runs = cran.runs[cran.runs["system"].isin(["bm25", "hybrid_rrf"])]
        >>> rep = ef.report(runs, cran.qrels, segments=cran.segments, measures=["nDCG@10"],
        ...                 baseline="bm25", n_resamples=200)
        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     names = sorted(p.name for p in rep.to_csv(tmp).iterdir())
        >>> "summary.csv" in names, "comparisons.csv" in names
        (True, True)
        """
        return persist.write_csv(self._tables, self._metadata, directory)

    def to_parquet(self, directory) -> Path:
        """Write every table as ``<name>.parquet``; each file's schema metadata (key
        ``evalframe``) holds the version, conventions, seed, measures... as JSON.

        Examples
        --------
        >>> import evalframe as ef
        >>> cran = ef.datasets.load_cranfield()
        >>> runs = cran.runs[cran.runs["system"].isin(["bm25", "hybrid_rrf"])]
        >>> rep = ef.report(runs, cran.qrels, segments=cran.segments, measures=["nDCG@10"],
        ...                 baseline="bm25", n_resamples=200)
        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     back = ef.read_report(rep.to_parquet(tmp))
        >>> back.comparisons.equals(rep.comparisons)
        True
        """
        return persist.write_parquet(self._tables, self._metadata, directory)

    @classmethod
    def read_parquet(cls, directory) -> "Report":
        """Read a Report written by :meth:`to_parquet`."""
        return cls.from_tables(*persist.read_parquet_tables(directory))

    @classmethod
    def read_csv(cls, directory) -> "Report":
        """Read a Report written by :meth:`to_csv` (dtypes restored from metadata.json)."""
        return cls.from_tables(*persist.read_csv_tables(directory))

    # ---- plots (thin wrappers over evalframe.plots; matplotlib loads on the first plot)
    def plot_sample_size(self, measure: str | None = None, *, ax=None, quantity="half_width"):
        """Interval half-width (or se) against the number of questions; this golden set marked.

        Examples
        --------
        >>> import matplotlib
        >>> matplotlib.use("Agg")
        >>> import matplotlib.pyplot as plt
        >>> import evalframe as ef
        >>> cran = ef.datasets.load_cranfield()
        >>> runs = cran.runs[cran.runs["system"].isin(["bm25", "hybrid_rrf"])]
        >>> rep = ef.report(runs, cran.qrels, segments=cran.segments, measures=["nDCG@10"],
        ...                 baseline="bm25", n_resamples=200)
        >>> ax = rep.plot_sample_size()
        >>> ax.get_ylabel()
        '95% interval half-width'
        >>> plt.close(ax.figure)
        """
        from .. import plots
        return plots.plot_sample_size(self._tables["planning"], measure=measure,
                                      current_n=self._metadata["n_questions"], quantity=quantity, ax=ax)

    def plot_power(self, measure: str | None = None, *, ax=None):
        """Power of the paired t-test against n for a few true differences.

        Examples
        --------
        >>> import matplotlib
        >>> matplotlib.use("Agg")
        >>> import matplotlib.pyplot as plt
        >>> import evalframe as ef
        >>> cran = ef.datasets.load_cranfield()
        >>> runs = cran.runs[cran.runs["system"].isin(["bm25", "hybrid_rrf"])]
        >>> rep = ef.report(runs, cran.qrels, segments=cran.segments, measures=["nDCG@10"],
        ...                 baseline="bm25", n_resamples=200)
        >>> ax = rep.plot_power()
        >>> ax.get_ylabel()
        'power of the paired t-test (α = 0.05)'
        >>> plt.close(ax.figure)
        """
        from .. import plots
        return plots.plot_power(self._tables["planning"], measure=measure,
                                current_n=self._metadata["n_questions"], ax=ax)

    def plot_forest(self, measures: Sequence[str] | None = None, *, ax=None):
        """Means with intervals: systems x measures.

        Examples
        --------
        >>> import matplotlib
        >>> matplotlib.use("Agg")
        >>> import matplotlib.pyplot as plt
        >>> import evalframe as ef
        >>> cran = ef.datasets.load_cranfield()
        >>> runs = cran.runs[cran.runs["system"].isin(["bm25", "hybrid_rrf"])]
        >>> rep = ef.report(runs, cran.qrels, segments=cran.segments, measures=["nDCG@10"],
        ...                 baseline="bm25", n_resamples=200)
        >>> ax = rep.plot_forest()
        >>> ax.get_xlabel()
        'mean over questions with 95% interval'
        >>> plt.close(ax.figure)
        """
        from .. import plots
        return plots.plot_forest(self._tables["summary"], measures=measures, systems=self.systems, ax=ax)

    def plot_segment_forest(self, measure: str | None = None, *, ax=None):
        """Means with intervals of every segment within one measure.

        Examples
        --------
        >>> import matplotlib
        >>> matplotlib.use("Agg")
        >>> import matplotlib.pyplot as plt
        >>> import evalframe as ef
        >>> cran = ef.datasets.load_cranfield()
        >>> runs = cran.runs[cran.runs["system"].isin(["bm25", "hybrid_rrf"])]
        >>> rep = ef.report(runs, cran.qrels, segments=cran.segments, measures=["nDCG@10"],
        ...                 baseline="bm25", n_resamples=200)
        >>> ax = rep.plot_segment_forest()
        >>> ax.get_xlabel().splitlines()[0]
        'nDCG@10: mean with interval'
        >>> plt.close(ax.figure)
        """
        from .. import plots
        return plots.plot_segment_forest(self._tables["by_segment"], measure=measure or self.measures[0],
                                         systems=self.systems, ax=ax)

    def plot_segments(self, measure: str | None = None, segment: str | None = None, *, ax=None):
        """Bars of one measure per segment value and system, with intervals.

        Examples
        --------
        >>> import matplotlib
        >>> matplotlib.use("Agg")
        >>> import matplotlib.pyplot as plt
        >>> import evalframe as ef
        >>> cran = ef.datasets.load_cranfield()
        >>> runs = cran.runs[cran.runs["system"].isin(["bm25", "hybrid_rrf"])]
        >>> rep = ef.report(runs, cran.qrels, segments=cran.segments, measures=["nDCG@10"],
        ...                 baseline="bm25", n_resamples=200)
        >>> ax = rep.plot_segments("nDCG@10", "length")
        >>> ax.get_ylabel()
        'nDCG@10, mean with interval'
        >>> plt.close(ax.figure)
        """
        from .. import plots
        return plots.plot_segments(self._tables["by_segment"], measure=measure or self.measures[0],
                                   segment=segment, systems=self.systems, ax=ax)

    def plot_curves(self, family: str | None = None, *, ax=None):
        """metric@k for every system, with interval bands.

        Examples
        --------
        >>> import matplotlib
        >>> matplotlib.use("Agg")
        >>> import matplotlib.pyplot as plt
        >>> import evalframe as ef
        >>> cran = ef.datasets.load_cranfield()
        >>> runs = cran.runs[cran.runs["system"].isin(["bm25", "hybrid_rrf"])]
        >>> rep = ef.report(runs, cran.qrels, segments=cran.segments, measures=["nDCG@10"],
        ...                 baseline="bm25", n_resamples=200)
        >>> ax = rep.plot_curves()
        >>> ax.get_ylabel()
        'R@k (recall@k), mean'
        >>> plt.close(ax.figure)
        """
        from .. import plots
        return plots.plot_curves(self._tables["curves"], family=family, systems=self.systems, ax=ax)

    def plot_differences(self, system_a: str | None = None, system_b: str | None = None,
                         measure: str | None = None, *, ax=None):
        """Per-question paired differences (b - a), sorted; defaults: reference vs the best other system.

        Examples
        --------
        >>> import matplotlib
        >>> matplotlib.use("Agg")
        >>> import matplotlib.pyplot as plt
        >>> import evalframe as ef
        >>> cran = ef.datasets.load_cranfield()
        >>> runs = cran.runs[cran.runs["system"].isin(["bm25", "hybrid_rrf"])]
        >>> rep = ef.report(runs, cran.qrels, segments=cran.segments, measures=["nDCG@10"],
        ...                 baseline="bm25", n_resamples=200)
        >>> ax = rep.plot_differences("bm25", "hybrid_rrf", "nDCG@10")
        >>> ax.get_ylabel()
        'nDCG@10: hybrid_rrf − bm25'
        >>> plt.close(ax.figure)
        """
        from .. import plots
        measure = measure or self.measures[0]
        a, b = figures.default_pair(self, measure, system_a, system_b)
        c = self._tables["comparisons"]
        row = c[(c["measure"] == measure) & (((c["system_a"] == a) & (c["system_b"] == b)) |
                                             ((c["system_a"] == b) & (c["system_b"] == a)))]
        return plots.plot_paired_differences(self._tables["per_question"], system_a=a, system_b=b,
                                             measure=measure, comparison=row if len(row) else None, ax=ax)

    def save_plots(self, directory, *, dpi: int = 130) -> list[Path]:
        """Render every plot to PNG in ``directory``; returns the files written.

        Examples
        --------
        >>> import matplotlib
        >>> matplotlib.use("Agg")
        >>> import matplotlib.pyplot as plt
        >>> import evalframe as ef
        >>> cran = ef.datasets.load_cranfield()
        >>> runs = cran.runs[cran.runs["system"].isin(["bm25", "hybrid_rrf"])]
        >>> rep = ef.report(runs, cran.qrels, segments=cran.segments, measures=["nDCG@10"],
        ...                 baseline="bm25", n_resamples=200)
        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     names = [p.name for p in rep.save_plots(tmp)]
        >>> names[0], "power.png" in names
        ('forest.png', True)
        """
        import matplotlib
        import matplotlib.pyplot as plt

        d = persist.output_dir(directory, "plots")
        d.mkdir(parents=True, exist_ok=True)
        written = []
        with matplotlib.rc_context({"figure.dpi": dpi, "text.parse_math": False}):  # names are text, not TeX
            for spec in figures.plot_specs(self):
                fig, ax = plt.subplots(figsize=spec.figsize)
                try:
                    spec.draw(ax)
                    fig.tight_layout()
                    path = d / f"{spec.name}.png"
                    fig.savefig(path, dpi=dpi)
                    written.append(path)
                finally:
                    plt.close(fig)
        return written


def read_report(directory, *, format: Literal["auto", "parquet", "csv"] = "auto") -> Report:
    """Read a Report written by :meth:`Report.to_parquet` or :meth:`Report.to_csv`.

    Parameters
    ----------
    directory : path
        The directory the tables were written to, or the ``--out`` folder of
        ``evalframe report`` (its ``parquet/`` tables, else its ``csv/`` ones).
    format : {"auto", "parquet", "csv"}
        ``"auto"``: Parquet when ``summary.parquet`` is there, else CSV.

    Returns
    -------
    Report
        Tables equal to the ones written, and the same metadata.

    Examples
    --------
    >>> import tempfile
    >>> import evalframe as ef
    >>> sso = ef.datasets.load_sso()
    >>> rep = ef.report(sso.runs, sso.qrels, measures=["R@5"], n_resamples=200)
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     back = ef.read_report(rep.to_parquet(tmp))
    >>> back.summary.equals(rep.summary), back.systems
    (True, ['librarian'])
    """
    directory = persist.tables_directory(directory, format)
    if persist.detect_format(directory, format) == "parquet":
        return Report.read_parquet(directory)
    return Report.read_csv(directory)
