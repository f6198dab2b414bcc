"""The report as a page (``Report.to_html``) and the notebook view (``_repr_html_``),
read back with the standard library's HTML parser: every table present, every number equal
to the Report's tables (formatted the way the page shows them, by code written here), no
external address, no file needed beside the page, the notebook view the compact one."""
from __future__ import annotations

import re
import warnings
from html.parser import HTMLParser

import numpy as np
import pandas as pd
import pytest

import evalframe as ef
from evalframe.reporting import report
from evalframe.reporting.render_html import to_html_page

MEASURES = ["R@5", "nDCG@10", "AP"]
VOID = {"br", "hr", "img", "meta", "link", "input", "col", "source", "wbr", "area", "base", "param", "track", "embed"}


class Page(HTMLParser):
    """The parts of a page the tests read: tables (by ``data-table``), every attribute,
    the stylesheets, element ids in order, and a count of every tag."""

    def __init__(self, text: str):
        super().__init__(convert_charrefs=True)
        self.tables: dict[str, dict] = {}
        self.attrs: list[tuple[str, str, str]] = []
        self.styles: list[str] = []
        self.ids: list[str] = []
        self.tags: dict[str, int] = {}
        self.stack: list[str] = []
        self._table = None
        self._cell = None
        self._in_style = False
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        self.tags[tag] = self.tags.get(tag, 0) + 1
        a = dict(attrs)
        for k, v in attrs:
            self.attrs.append((tag, k, v or ""))
        if "id" in a:
            self.ids.append(a["id"])
        if tag == "style":
            self._in_style = True
        if tag == "table":
            self._table = {"head": [], "rows": [], "classes": [], "head_rows": 0, "section": None}
            self.tables[a.get("data-table", f"table{len(self.tables)}")] = self._table
        elif tag == "tr" and self._table is not None:
            if "thead" in self.stack:
                self._table["head_rows"] += 1
            else:
                self._table["rows"].append([])
                self._table["classes"].append([])
        elif tag in ("td", "th") and self._table is not None:
            self._cell = {"text": [], "cls": a.get("class", ""), "head": "thead" in self.stack}
        if tag not in VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag):
        if tag == "style":
            self._in_style = False
        if tag in ("td", "th") and self._cell is not None:
            text = re.sub(r"\s+", " ", "".join(self._cell["text"])).strip()
            if self._cell["head"]:
                self._table["head"].append(text)
            else:
                self._table["rows"][-1].append(text)
                self._table["classes"][-1].append(self._cell["cls"])
            self._cell = None
        if tag == "table":
            self._table = None
        if tag in self.stack:
            while self.stack and self.stack.pop() != tag:
                pass

    def handle_data(self, data):
        if self._in_style:
            self.styles.append(data)
        if self._cell is not None:
            self._cell["text"].append(data)


@pytest.fixture(scope="module")
def cran():
    return ef.datasets.load_cranfield()


def _segments(cran):
    seg = cran.segments.copy()
    # a value held by 8 questions: "too small to judge", so the page has flagged segments
    seg.loc[seg.index[:8], "length"] = "tiny"
    return seg


@pytest.fixture(scope="module")
def rep(cran):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # tfidf answers two questions fewer: a warning row in the diagnostics table
        runs = cran.runs[~((cran.runs.system == "tfidf") & cran.runs.query_id.isin(["1", "2"]))]
        return report(runs, cran.qrels, measures=MEASURES, segments=_segments(cran), baseline="bm25",
                      stages={"bm25": 100, "hybrid_rrf": 5}, n_resamples=200, seed=3, queries=cran.queries)


@pytest.fixture(scope="module")
def written(rep, tmp_path_factory):
    d = tmp_path_factory.mktemp("page")
    path = rep.to_html(d / "report.html", golden_set="cranfield/qrels.txt")
    return d, path, path.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def page(written):
    return Page(written[2])


@pytest.fixture(scope="module")
def notebook(rep):
    return rep._repr_html_()


def f3(x):
    return f"{x:.3f}"


# ------------------------------------------------------------------ the file itself
def test_to_html_writes_one_self_contained_file(written, page):
    d, path, text = written
    assert path == d / "report.html"
    assert [p.name for p in d.iterdir()] == ["report.html"]
    assert text.startswith("<!DOCTYPE html>") and "<meta charset='utf-8'>" in text
    # nothing is fetched: no script, no stylesheet link, no frame, no external image
    for tag in ("script", "link", "iframe", "img", "object", "embed", "base"):
        assert page.tags.get(tag, 0) == 0, tag
    ids = set(page.ids)
    for tag, attr, value in page.attrs:
        if attr in ("src", "href", "xlink:href", "srcset", "action", "data"):
            # every reference points into the page itself (or is inline data)
            assert value.startswith("#") and value[1:] in ids or value.startswith("data:"), (tag, attr, value)


def test_no_external_address_anywhere(written, page, notebook):
    text = written[2]
    for doc in (text, notebook):
        assert "http://" not in doc and "https://" not in doc
        assert re.search(r"""url\(\s*['"]?(?!#)""", doc) is None  # url() only to #ids (SVG clip paths)
    for _, attr, value in page.attrs:
        assert not re.match(r"\s*(https?:)?//", value), (attr, value)
    css = "".join(page.styles)
    assert "@import" not in css and "@font-face" not in css


def test_sections_in_order(page, written):
    order = ["warnings", "summary", "comparisons", "changes", "segments", "stages", "diagnostics", "plots",
             "how-to-read"]
    pos = [page.ids.index(i) for i in order]
    assert pos == sorted(pos)
    text = written[2]
    # the question comes first, with systems, golden set, questions, measures, method and seed
    head = text[text.index("<header>"):text.index("</header>")]
    for word in ("tfidf", "hybrid_rrf", "bm25", "cranfield/qrels.txt", "225 questions", "nDCG@10",
                 "bootstrap", "200 resamples", "t-test", "Holm", "<dt>Seed</dt><dd>3</dd>"):
        assert word in head, word
    assert text.index("</header>") < text.index("class='ef-warnings'") < text.index("id='summary'")
    assert "How to read this" in text and "unjudged" in text.split("id='how-to-read'")[1]


def test_every_table_present(page, rep):
    assert set(page.tables) == {"summary", "comparisons", "changes", "segments", "stages", "diagnostics",
                                "interval_half_width", "judged_at_k", "explain"}
    for name, t in page.tables.items():
        # one header row, no empty header cell (pandas' index-name row outside Jupyter)
        assert t["head_rows"] == 1 and all(t["head"]), name
        assert all(len(r) == len(t["head"]) for r in t["rows"]), name


# ------------------------------------------------------------------ numbers equal the Report's
def test_summary_cells_equal_the_summary_table(page, rep):
    t = page.tables["summary"]
    assert t["head"] == ["system", "n", *MEASURES]
    s = rep.summary.set_index(["system", "measure"])
    c = rep.comparisons
    alpha = 1 - rep.metadata["confidence"]
    sig = c[c["p_adjusted"] < alpha]
    up = {(r.system_b, r.measure) for r in sig.itertuples() if r.diff > 0}
    down = {(r.system_b, r.measure) for r in sig.itertuples() if r.diff < 0}
    assert up  # the test means something: hybrid_rrf is significantly above bm25
    best = rep.summary.loc[rep.summary.groupby("measure")["mean"].idxmax(), ["system", "measure"]]
    best = set(map(tuple, best.to_numpy()))
    assert [r[0].split(" ")[0] for r in t["rows"]] == rep.systems
    assert t["rows"][0][0] == "bm25 baseline"
    for row, classes in zip(t["rows"], t["classes"]):
        sy = row[0].split(" ")[0]
        assert row[1] == str(int(s.loc[(sy, MEASURES[0]), "n"]))
        for mm, cell, cls in zip(MEASURES, row[2:], classes[2:]):
            r = s.loc[(sy, mm)]
            mark = " ▲" if (sy, mm) in up else " ▼" if (sy, mm) in down else ""
            assert cell == f"{f3(r['mean'])} [{f3(r['ci_low'])}, {f3(r['ci_high'])}]{mark}", (sy, mm)
            assert ("ef-best" in cls) == ((sy, mm) in best), (sy, mm)


def test_comparison_rows_equal_the_comparisons_table(page, rep):
    t = page.tables["comparisons"]
    assert t["head"] == ["measure", "system_a", "system_b", "n", "difference", "95% interval", "adjusted interval",
                         "p adjusted", "significant", "effect size d_z", "wins / ties / losses"]
    c = rep.comparisons
    assert (c["ci_adjustment"] != "none").all()  # adjusted as the p-values are (Holm: Bonferroni-simultaneous)
    assert len(t["rows"]) == len(c) == 4 * len(MEASURES)
    for row, r in zip(t["rows"], c.itertuples()):
        p = "<0.001" if r.p_adjusted < 0.001 else f3(r.p_adjusted)
        assert row == [r.measure, r.system_a, r.system_b, str(r.n), f"{r.diff:+.3f}",
                       f"[{r.ci_low:+.3f}, {r.ci_high:+.3f}]", f"[{r.ci_low_adjusted:+.3f}, {r.ci_high_adjusted:+.3f}]",
                       p, "yes" if r.p_adjusted < 0.05 else "no",
                       f"{r.effect_size:+.2f} [{r.effect_size_low:+.2f}, {r.effect_size_high:+.2f}]",
                       f"{r.wins} / {r.ties} / {r.losses}"]


def test_stage_segment_change_and_diagnostic_rows(page, rep):
    st = rep.stages
    assert page.tables["stages"]["rows"] == [
        [str(r.stage), r.system, r.measure, str(r.k), str(r.n), f3(r.mean), f"[{f3(r.ci_low)}, {f3(r.ci_high)}]",
         f3(r.ceiling), f"{100 * r.share_of_ceiling:.1f}%", f3(r.lost)] for r in st.itertuples()]
    seg = rep.by_segment
    flagged = seg[seg["too_small"] | seg["below_overall_bh"]]
    assert len(flagged) >= 5  # the 8-question segment of every system
    rows = page.tables["segments"]["rows"]
    assert [r[:5] for r in rows] == [[r.system, r.segment, r.segment_value, r.measure, str(r.n)]
                                     for r in flagged.itertuples()]
    assert [r[5:9] for r in rows] == [[f3(r.mean), f"[{f3(r.ci_low)}, {f3(r.ci_high)}]", f3(r.overall_mean),
                                       f"{r.mean - r.overall_mean:+.3f}"] for r in flagged.itertuples()]
    assert all("too small to judge" in r[9] for r in rows if r[2] == "tiny")
    ch = rep.changes
    ch = ch[(ch["measure"] == MEASURES[0]) & (ch["rank"] <= 3)]
    got = page.tables["changes"]["rows"]
    assert [r[:7] for r in got] == [[r.system_a, r.system_b, r.direction, r.query_id, f3(r.value_a), f3(r.value_b),
                                     f"{r.diff:+.3f}"] for r in ch.itertuples()]
    d = rep.diagnostics
    d = d[~d["check"].isin(["measure", "convention", "interval_half_width", "judged_at_k"])]
    d = pd.concat([d[d["level"] == "warning"], d[d["level"] != "warning"]])
    rows = page.tables["diagnostics"]["rows"]
    assert [r[:2] for r in rows] == [[r.level, r.check] for r in d.itertuples()]
    assert [r[4:] for r in rows] == [["" if pd.isna(r.count) else str(r.count),
                                      "" if pd.isna(r.value) else f3(r.value), r.detail] for r in d.itertuples()]
    assert rows[0][0] == "warning" and rows[-1][0] == "info"  # warnings first
    w = rep.diagnostics.query("check == 'interval_half_width'").set_index(["system", "measure"])["value"]
    assert [r[0] for r in page.tables["interval_half_width"]["rows"]] == rep.systems
    for row in page.tables["interval_half_width"]["rows"]:
        assert row[1:] == [f3(w.loc[(row[0], mm)]) for mm in MEASURES]
    j = rep.diagnostics.query("check == 'judged_at_k'")
    t = page.tables["judged_at_k"]
    ks = list(dict.fromkeys(j["measure"]))
    assert t["head"] == ["system", *ks] and len(ks) >= 2
    j = j.set_index(["system", "measure"])
    for row, cls in zip(t["rows"], t["classes"]):
        assert row[1:] == [f3(j.loc[(row[0], k), "value"]) for k in ks]
        assert [("ef-warn-cell" in c) for c in cls[1:]] == [j.loc[(row[0], k), "level"] == "warning" for k in ks]


def test_plots_are_inline_svg_one_per_plot(written, rep):
    text = written[2]
    plots = text[text.index("id='plots'"):text.index("id='how-to-read'")]
    names = re.findall(r"<figure id='p-(\w+)'", plots)
    assert names == ["forest", "curves", "differences", "sample_size", "power", "segments", "segment_forest"]
    assert plots.count("<svg ") == len(names) and "xmlns" not in plots
    ids = re.findall(r'\bid="([^"]+)"', text)
    assert len(ids) == len(set(ids))  # several SVGs share the page without clashing ids
    # matplotlib's stylesheet stays inside its plot (a bare `*{...}` would style the whole page)
    for css in re.findall(r"<style[^>]*>(.*?)</style>", plots, flags=re.S):
        assert all(rule.strip().startswith(".ef-p-") for rule in re.findall(r"([^{}]+)\{", css))


def test_warnings_come_first_and_print_styles(written, rep):
    text = written[2]
    import html as _html
    warn = _html.unescape(text[text.index("class='ef-warnings'"):text.index("id='summary'")])
    for line in rep.warning_lines():
        assert line.split(" (")[0] in warn
    assert "@media print" in text and "prefers-color-scheme: dark" in text


# ------------------------------------------------------------------ the notebook view
def test_notebook_view_is_the_compact_one(notebook, page):
    nb = Page(notebook)
    assert set(nb.tables) == {"summary", "comparisons"}
    # the same renderer: the same cells as the page
    for name in ("summary", "comparisons"):
        assert nb.tables[name]["head"] == page.tables[name]["head"]
        assert nb.tables[name]["rows"] == page.tables[name]["rows"]
    assert nb.tags.get("a", 0) == 0 and nb.tags.get("nav", 0) == 0  # no links
    assert nb.tags.get("svg", 0) == 1 and "Systems by measure" in notebook  # one small forest plot
    assert "ef-warnings" in notebook and "warning" in notebook
    assert "<!DOCTYPE" not in notebook and "@page" not in notebook and "<html" not in notebook
    # JupyterLab theme variables with light fallbacks: readable in the light and the dark theme
    for var in ("--jp-content-font-color1", "--jp-layout-color0", "--jp-border-color2"):
        assert f"var({var}," in notebook
    assert notebook.index("ef-warnings") < notebook.index("data-table='summary'")


def test_old_defects_are_gone(notebook):
    # pandas' to_html: border="1" class="dataframe", a second header row for the index name
    assert 'border="1"' not in notebook and "dataframe" not in notebook
    nb = Page(notebook)
    t = nb.tables["summary"]
    assert t["head_rows"] == 1 and t["head"][0] == "system"
    assert any("ef-best" in c for row in t["classes"] for c in row)  # emphasis
    assert "<strong>" in notebook


# ------------------------------------------------------------------ other shapes of report
def test_one_system_and_all_pairs(cran):
    runs = cran.runs
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        one = report(runs[runs.system == "bm25"], cran.qrels, measures=["R@5"], n_resamples=50)
        pairs = report(runs[runs.system.isin(["bm25", "tfidf", "dense_exact"])], cran.qrels,
                       measures=["R@5", "AP"], n_resamples=50)
    p = Page(to_html_page(one, plots=False))
    assert set(p.tables) == {"summary", "diagnostics", "interval_half_width", "judged_at_k"}
    assert not any("ef-best" in c for row in p.tables["summary"]["classes"] for c in row)
    assert "How well does <b>bm25</b> retrieve" in to_html_page(one, plots=False)
    assert Page(one._repr_html_()).tables.keys() == {"summary"}
    text = to_html_page(pairs, plots=False)
    assert "pair by pair" in text and "<span class='ef-tag'>reference</span>" in text
    assert len(Page(text).tables["comparisons"]["rows"]) == 3 * 2


def test_names_are_escaped(cran):
    runs = cran.runs[cran.runs.system.isin(["bm25", "tfidf"])].copy()
    runs["system"] = runs["system"].map({"bm25": "<b>&base", "tfidf": "t'f\"idf"})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = report(runs, cran.qrels, measures=["R@5"], n_resamples=50, baseline="<b>&base")
    text = to_html_page(r, plots=False, title="<i>x</i>")
    assert "<b>&base" not in text and "&lt;b&gt;&amp;base" in text and "<title>&lt;i&gt;x" in text
    p = Page(text)
    assert [row[0] for row in p.tables["summary"]["rows"]] == ["<b>&base baseline", "t'f\"idf"]
    np.testing.assert_equal(len(p.tables["comparisons"]["rows"]), 1)


def test_notebook_view_stays_compact_with_many_measures_and_pairs(rep):
    from evalframe.reporting import Report
    from evalframe.reporting.render_html import COMPACT_MEASURES, COMPACT_ROWS

    t = rep.tables
    names = {m: [m] + [f"{m}_{i}" for i in (1, 2, 3)] for m in MEASURES}  # 12 measures, 48 comparisons
    for name in ("summary", "comparisons"):
        t[name] = pd.concat([t[name].assign(measure=t[name]["measure"].map(lambda m: names[m][i]))
                             for i in range(4)], ignore_index=True)
    meta = {**rep.metadata, "measures": [names[m][i] for i in range(4) for m in MEASURES]}
    big = Report.from_tables(t, meta)
    assert len(big.comparisons) > COMPACT_ROWS and len(big.measures) > COMPACT_MEASURES
    nb = big._repr_html_()
    p = Page(nb)
    assert len(p.tables["comparisons"]["rows"]) == COMPACT_ROWS
    assert f"The first {COMPACT_ROWS} of {len(big.comparisons)} comparisons" in nb
    assert len(p.tables["summary"]["head"]) == 2 + len(big.measures)  # the summary keeps every measure
    svg = nb[nb.index("<svg "):nb.index("</svg>")]
    shown, hidden = big.measures[:COMPACT_MEASURES], big.measures[COMPACT_MEASURES:]
    assert all(f">{m}<" in svg for m in shown) and not any(f">{m}<" in svg for m in hidden)
    assert "(the first 6 measures)" in nb


def test_html_and_pngs_build_each_plot_once(rep, tmp_path, monkeypatch):
    """Defect: report.html and save_plots built every plot twice (the command wrote both);
    to_html(plots_dir=) builds each figure once and writes it as SVG and PNG."""
    from evalframe.reporting.model import Report

    calls = []
    for name in ("plot_forest", "plot_curves", "plot_differences", "plot_sample_size", "plot_power",
                 "plot_segments", "plot_segment_forest"):
        orig = getattr(Report, name)
        monkeypatch.setattr(Report, name, lambda self, *a, _o=orig, _n=name, **k: (calls.append(_n), _o(self, *a, **k))[1])
    rep.to_html(tmp_path / "report.html", plots_dir=tmp_path / "plots")
    assert sorted(calls) == sorted(set(calls)) and len(calls) == 7
    pngs = sorted(p.name for p in (tmp_path / "plots").glob("*.png"))
    assert pngs == sorted(p.name for p in rep.save_plots(tmp_path / "saved"))
    from PIL import Image
    for name in pngs:  # the sizes save_plots writes
        assert Image.open(tmp_path / "plots" / name).size == Image.open(tmp_path / "saved" / name).size


def test_dollar_signs_in_names_are_text_not_tex(tmp_path):
    """A '$' in a system name is not TeX: an invalid expression used to crash the page and
    save_plots, a valid one ('$0-$50') was drawn garbled (issue 30)."""
    import warnings

    import evalframe as ef
    cran = ef.datasets.load_cranfield()
    names = {"bm25": "$0-$50", "tfidf": "x$\\frac{$y"}
    runs = cran.runs[cran.runs.system.isin(list(names))].replace({"system": names})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rep = ef.report(runs, cran.qrels, measures=["R@5"], n_resamples=20)
    page = rep.to_html(tmp_path / "report.html").read_text()
    svg_text = " ".join(re.findall(r"<svg .*?</svg>", page, re.S))
    assert ">$0-$50<" in svg_text and ">x$\\frac{$y<" in svg_text  # drawn verbatim, as one text
    assert len(rep.save_plots(tmp_path / "plots")) >= 3
    assert "$0-$50" in rep._repr_html_()


def test_markdown_names_are_not_live_html():
    """report.md copies names: a system named <script>... is escaped as report.html does
    (a '<' that could open a tag becomes &lt;), comparisons' '<0.001' are left alone."""
    import warnings

    import evalframe as ef
    from evalframe.reporting.render_markdown import md_text
    cran = ef.datasets.load_cranfield()
    evil = "<script>alert(1)</script>"
    runs = cran.runs[cran.runs.system.isin(["bm25", "hybrid_rrf"])].replace({"system": {"hybrid_rrf": evil}})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rep = ef.report(runs, cran.qrels, measures=["R@5", "nDCG@10"], n_resamples=20, baseline="bm25")
    md = rep.to_markdown()
    assert "<script" not in md and "</script" not in md and "&lt;script>alert(1)&lt;/script>" in md
    assert "<0.001" in md  # a p-value is not a tag
    assert md_text("a <b> & p < 0.05 <!-- x -->") == "a &lt;b> & p < 0.05 &lt;!-- x -->"


def test_a_segment_too_small_is_not_also_below_overall():
    """The flagged segments name a too-small segment only as too small (issue 30): it was
    also flagged 'below overall', filling the list with segments nobody can judge."""
    import pandas as pd

    from evalframe.reporting.views import segment_flags
    seg = pd.DataFrame({"system": ["a"] * 3, "segment": "len", "segment_value": ["tiny", "big", "mid"],
                        "measure": "AP", "n": [5, 80, 60], "too_small": [True, False, False],
                        "below_overall_bh": [True, True, False], "p_below_bh": [0.01, 0.02, 0.5]})
    flagged, rest = segment_flags(seg)
    assert flagged["flags"].tolist() == ["too small to judge", "below overall (BH p=0.02)"] and rest == 1
