"""Plots: rendered with Agg, checked for their artists, saved as PNG."""
from __future__ import annotations

import subprocess
import sys
import warnings

import matplotlib

matplotlib.use("Agg")
import matplotlib.colors as mcolors  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from matplotlib.container import BarContainer, ErrorbarContainer  # noqa: E402

import evalframe as ef  # noqa: E402
from evalframe import plots  # noqa: E402
from evalframe.reporting import report  # noqa: E402

PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def rep():
    cran = ef.datasets.load_cranfield()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return report(cran.runs, cran.qrels, measures=["R@5", "R@100", "nDCG@10"], segments=cran.segments,
                      baseline="bm25", n_resamples=200)


@pytest.fixture(scope="module")
def ten():
    """A summary / curves table of 10 systems (plots must stay legible)."""
    rng = np.random.default_rng(0)
    systems = [f"system_{i}" for i in range(10)]
    rows, curves = [], []
    for i, s in enumerate(systems):
        for m in ["R@5", "R@10", "nDCG@10"]:
            mean = 0.3 + 0.02 * i + rng.normal(0, 0.01)
            rows.append({"system": s, "measure": m, "mean": mean, "ci_low": mean - 0.03, "ci_high": mean + 0.03,
                         "confidence": 0.95})
        for k in range(1, 101):
            mean = min(1, 0.05 * np.log1p(k) * (1 + 0.05 * i))
            curves.append({"system": s, "family": "R", "k": k, "mean": mean, "ci_low": mean - 0.02,
                           "ci_high": mean + 0.02})
    return pd.DataFrame(rows), pd.DataFrame(curves)


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def _save(ax, tmp_path, name):
    path = tmp_path / f"{name}.png"
    ax.figure.savefig(path)
    data = path.read_bytes()
    assert data[:8] == PNG and len(data) > 5000
    return path


def _labels(ax):
    return ax.get_xlabel(), ax.get_ylabel(), ax.get_title()


def test_sample_size(rep, tmp_path):
    ax = rep.plot_sample_size()
    x, y, title = _labels(ax)
    assert "number of questions" in x and "half-width" in y and title
    lines = [l for l in ax.get_lines() if l.get_label() in rep.measures]
    assert len(lines) == 3
    p = rep.planning.drop_duplicates(["measure", "n"])
    want = p[p["measure"] == "R@5"].sort_values("n")
    line = next(l for l in lines if l.get_label() == "R@5")
    np.testing.assert_allclose(line.get_ydata(), want["half_width"])
    # the current golden set is marked
    assert any(list(l.get_xdata()) == [225, 225] for l in ax.get_lines())
    assert ax.get_xscale() == "log"
    _save(ax, tmp_path, "sample_size")
    ax2 = plots.plot_sample_size(rep.planning, measure="R@5", quantity="se")
    assert "standard error" in ax2.get_ylabel()


def test_power(rep, tmp_path):
    ax = rep.plot_power("nDCG@10")
    labels = [l.get_label() for l in ax.get_lines()]
    assert [x for x in labels if x.startswith("Δ")] == ["Δ = 0.01", "Δ = 0.02", "Δ = 0.05", "Δ = 0.1"]
    assert "power" in ax.get_ylabel() and "nDCG@10" in ax.get_title()
    for l in ax.get_lines():
        if l.get_label().startswith("Δ"):
            y = np.asarray(l.get_ydata(), float)
            assert np.isfinite(y).all() and (np.diff(y) >= -1e-9).all()
    _save(ax, tmp_path, "power")


def test_forest(rep, tmp_path):
    ax = rep.plot_forest()
    bars = [c for c in ax.containers if isinstance(c, ErrorbarContainer)]
    assert len(bars) == 5
    assert [t.get_text() for t in ax.get_yticklabels()] == rep.measures
    assert "interval" in ax.get_xlabel() and ax.get_ylabel() == "measure"
    assert [t.get_text() for t in ax.get_legend().get_texts()] == rep.systems
    # points are the summary means
    s = rep.summary
    first = bars[0].lines[0]
    np.testing.assert_allclose(first.get_xdata(), s[s["system"] == "bm25"]["mean"])
    _save(ax, tmp_path, "forest")


def test_ten_systems_are_distinct(ten, tmp_path):
    summary, curves = ten
    fig, ax = plt.subplots(figsize=(8, 9))
    plots.plot_forest(summary, ax=ax)
    bars = [c for c in ax.containers if isinstance(c, ErrorbarContainer)]
    assert len(bars) == 10
    colors = {mcolors.to_hex(b.lines[0].get_color()) for b in bars}
    markers = {b.lines[0].get_marker() for b in bars}
    assert len(colors) == 10 and len(markers) == 10
    assert len(ax.get_legend().get_texts()) == 10
    _save(ax, tmp_path, "forest10")
    ax2 = plots.plot_curves(curves)
    assert len([l for l in ax2.get_lines() if l.get_label().startswith("system_")]) == 10
    _save(ax2, tmp_path, "curves10")


def test_palette_is_okabe_ito():
    assert plots.PALETTE[:7] == ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000")
    assert len(set(plots.PALETTE)) == len(plots.PALETTE) == 10


def test_curves(rep, tmp_path):
    ax = rep.plot_curves()
    lines = {l.get_label(): l for l in ax.get_lines()}
    assert set(rep.systems) <= set(lines)
    c = rep.curves
    np.testing.assert_allclose(lines["bm25"].get_ydata(), c[c["system"] == "bm25"].sort_values("k")["mean"])
    assert len(ax.collections) == 5  # one band per system
    assert "R@k" in ax.get_ylabel() and "k" in ax.get_xlabel() and "1..100" in ax.get_title()
    _save(ax, tmp_path, "curves")


def test_paired_differences(rep, tmp_path):
    ax = rep.plot_differences("bm25", "hybrid_rrf", "R@5")
    bars = [c for c in ax.containers if isinstance(c, BarContainer)][0]
    pq = rep.per_question
    w = pq[pq["measure"] == "R@5"].pivot(index="query_id", columns="system", values="value")
    d = np.sort((w["hybrid_rrf"] - w["bm25"]).to_numpy())
    np.testing.assert_allclose([b.get_height() for b in bars], d)
    row = rep.comparisons.query("measure == 'R@5' and system_b == 'hybrid_rrf'").iloc[0]
    mean_line = [l for l in ax.get_lines() if l.get_label().startswith("mean difference")]
    assert mean_line and mean_line[0].get_ydata()[0] == pytest.approx(row["diff"])
    assert "hybrid_rrf − bm25" in ax.get_ylabel() and "sorted" in ax.get_xlabel()
    _save(ax, tmp_path, "differences")
    # reversed pair: the sign flips
    ax2 = plots.plot_paired_differences(pq, system_a="hybrid_rrf", system_b="bm25", measure="R@5",
                                        comparison=rep.comparisons.query("measure == 'R@5' and system_b == 'hybrid_rrf'"))
    ml = [l for l in ax2.get_lines() if l.get_label().startswith("mean difference")][0]
    assert ml.get_ydata()[0] == pytest.approx(-row["diff"])


def test_segments(rep, tmp_path):
    ax = rep.plot_segments("R@5")
    bars = [c for c in ax.containers if isinstance(c, BarContainer)]
    errs = [c for c in ax.containers if isinstance(c, ErrorbarContainer)]
    assert len(bars) == 5 and len(errs) == 5
    assert len(ax.get_xticklabels()) == 7  # 3 lengths + 4 question forms
    seg = rep.by_segment
    want = seg[(seg["system"] == "bm25") & (seg["measure"] == "R@5")]["mean"]
    np.testing.assert_allclose([b.get_height() for b in bars[0]], want)
    assert "R@5" in ax.get_ylabel() and "segment" in ax.get_xlabel()
    _save(ax, tmp_path, "segments")
    ax2 = rep.plot_segments("R@5", "length")
    assert len(ax2.get_xticklabels()) == 3


def test_segment_forest(rep, tmp_path):
    ax = rep.plot_segment_forest("nDCG@10")
    errs = [c for c in ax.containers if isinstance(c, ErrorbarContainer)]
    assert len(errs) == 5
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert len(labels) == 7 and labels[0].startswith("length = ")
    assert "nDCG@10" in ax.get_xlabel()
    _save(ax, tmp_path, "segment_forest")


def test_small_segments_are_hatched():
    t = pd.DataFrame({"system": "a", "segment": "s", "segment_value": ["x", "y"], "measure": "R@5",
                      "n": [5, 80], "mean": [0.2, 0.5], "ci_low": [0.0, 0.4], "ci_high": [0.5, 0.6],
                      "too_small": [True, False], "overall_mean": 0.45})
    ax = plots.plot_segments(t, measure="R@5")
    bars = [c for c in ax.containers if isinstance(c, BarContainer)][0]
    assert bars[0].get_hatch() == "///" and not bars[1].get_hatch()
    assert any(l.get_label() == "overall mean" for l in ax.get_lines())


def test_ax_in_ax_out(rep):
    fig, axes = plt.subplots(1, 2)
    assert rep.plot_forest(ax=axes[1]) is axes[1]
    assert plots.plot_curves(rep.curves, ax=axes[0]) is axes[0]


def test_missing_columns_raise():
    with pytest.raises(ValueError, match="lacks columns"):
        plots.plot_forest(pd.DataFrame({"system": ["a"], "measure": ["R@5"]}))


def test_save_plots(rep, tmp_path):
    files = rep.save_plots(tmp_path)
    assert {f.name for f in files} == {"forest.png", "sample_size.png", "power.png", "curves.png",
                                       "differences.png", "segments.png", "segment_forest.png"}
    for f in files:
        assert f.read_bytes()[:8] == PNG
    assert not plt.get_fignums()


def test_import_does_not_load_matplotlib():
    code = "import sys, evalframe, evalframe.plots, evalframe.reporting; print('matplotlib' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_asl_curve(tmp_path):
    from evalframe import stats
    cran = ef.datasets.load_cranfield()
    curve = stats.asl_curve(ef.evaluate(cran.runs, cran.qrels, ["AP", "P@5"]), test="t")
    ax = plots.plot_asl_curve(curve)
    lines = {l.get_label(): l for l in ax.get_lines()}
    assert list(lines)[:2] == ["AP", "P@5"]
    y = np.asarray(lines["AP"].get_ydata(), float)
    assert y.tolist() == sorted(curve[curve.measure == "AP"]["p_value"])  # drawn, not recomputed
    assert "p-value" in ax.get_ylabel()
    _save(ax, tmp_path, "asl")


def test_paired_differences_many_questions_bounded():
    """Defect: one bar per question made report.html take ~10 minutes at 200,000 questions;
    beyond MAX_BARS questions the sorted differences are two areas through MAX_BARS ranks."""
    from matplotlib.collections import PolyCollection

    rng = np.random.default_rng(0)
    n = plots.MAX_BARS * 5 + 3
    q = [f"q{i}" for i in range(n)]
    pq = pd.DataFrame({"system": ["a"] * n + ["b"] * n, "query_id": q * 2, "measure": "AP",
                       "value": np.r_[rng.random(n), rng.random(n)]})
    ax = plots.plot_paired_differences(pq, system_a="a", system_b="b", measure="AP")
    assert not ax.patches and len(ax.collections) == 2
    assert all(isinstance(c, PolyCollection) for c in ax.collections)
    w = pq.pivot(index="query_id", columns="system", values="value")
    d = np.sort((w["b"] - w["a"]).to_numpy())  # slow reference: the sorted differences
    ys = np.concatenate([c.get_paths()[0].vertices[:, 1] for c in ax.collections if c.get_paths()])
    assert ys.min() == pytest.approx(d[0]) and ys.max() == pytest.approx(d[-1])
    assert ax.get_xlim() == (0.5, n + 0.5)
    plt.close(ax.figure)
