"""Issue 30: each warning of a report is shown once, in a script and in a notebook.

Scripts and CI: every warning is a Python warning (``-W error``, ``pytest.warns`` work).
Notebooks: the same Python warnings show under the cell, so the notebook view
(``_repr_html_``) lists them collapsed under one line instead of a second time; a report
read back (its warnings never issued in this session) lists them open. Oracle of "every
warning of the box was issued": the Python warnings recorded while the report is built."""
from __future__ import annotations

import html
import re
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import evalframe as ef
from evalframe import errors
from evalframe.reporting import text_tables

ROOT = Path(__file__).resolve().parents[2]


def tiny_case() -> tuple[pd.DataFrame, pd.DataFrame]:
    """Two systems, 12 questions: one run question not in the golden set, one golden
    question no system answers (and one system misses another), one golden question without
    a relevant document, rankings shorter than 10, most of the top k unjudged, a small
    golden set: six kinds of warning."""
    rng = np.random.default_rng(0)
    rows = [(s, f"q{q}", f"d{d}", rng.random()) for s in ("a", "b") for q in range(12) for d in range(8)]
    run = pd.DataFrame(rows, columns=["system", "query_id", "doc_id", "score"])
    run = run[~((run.query_id == "q11") & (run.system == "b"))]
    qrels = pd.DataFrame([(f"q{q}", f"d{d}", int(d < 2 and q != 3)) for q in [*range(11), 20] for d in range(3)],
                         columns=["query_id", "doc_id", "relevance"])
    return run, qrels


KINDS = {errors.UnjudgedDocumentsWarning, errors.QuestionsDroppedWarning, errors.QuestionsScoredZeroWarning,
         errors.NoRelevantWarning, errors.ShallowRankingWarning, errors.SmallGoldenSetWarning}


@pytest.fixture(scope="module")
def built():
    run, qrels = tiny_case()
    with warnings.catch_warnings(record=True) as issued:
        warnings.simplefilter("always")
        rep = ef.report(run, qrels, measures=["R@5", "nDCG@10"], baseline="a", n_resamples=50)
    return rep, issued


def test_every_warning_of_the_report_is_a_python_warning(built):
    rep, issued = built
    assert {w.category for w in rep.warnings} == KINDS  # the case exercises six kinds
    assert {w.category for w in rep.warnings} <= {w.category for w in issued}
    assert rep.warnings_issued
    run, qrels = tiny_case()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the other kinds, re-issued by pytest.warns
        with pytest.warns(errors.UnjudgedDocumentsWarning), pytest.warns(errors.SmallGoldenSetWarning):
            ef.report(run, qrels, measures=["R@5"], n_resamples=20)


def test_python_W_error_stops_a_script():
    code = textwrap.dedent("""
        import evalframe as ef
        cran = ef.datasets.load_cranfield()
        ef.report(cran.runs, cran.qrels, measures=["R@5"], n_resamples=20)
        print("no warning raised")
    """)
    r = subprocess.run([sys.executable, "-W", "error::UserWarning", "-c", code], capture_output=True, text=True,
                       cwd=ROOT, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}, timeout=300)
    assert r.returncode != 0 and "no warning raised" not in r.stdout
    assert "UnjudgedDocumentsWarning" in r.stderr


def _shown(page: str) -> str:
    """The text a reader sees without opening anything: the page without its closed
    ``<details>`` bodies (their ``<summary>`` kept), tags and styles removed."""
    page = re.sub(r"<style>.*?</style>", "", page, flags=re.S)
    page = re.sub(r"<details(?![^>]*\bopen\b)[^>]*>\s*<summary>(.*?)</summary>.*?</details>", r"\1", page,
                  flags=re.S)
    return html.unescape(re.sub(r"<[^>]+>", " ", page))


def test_the_notebook_view_does_not_repeat_warnings_issued(built):
    rep, _ = built
    page = rep._repr_html_()
    n = len(rep.warnings)
    box = re.findall(r"<details class='ef-warnings'[^>]*>(.*?)</details>", page, re.S)
    assert len(box) == 1 and "open" not in re.search(r"<details class='ef-warnings'[^>]*>", page).group(0)
    assert f"{n} warnings, issued as Python warnings" in html.unescape(box[0])
    seen = _shown(page)
    for line in rep.warning_lines():
        assert line in html.unescape(box[0])  # one click away
        assert line[:60] not in seen  # not shown a second time
    # the page, the Markdown and the text list them all, open
    md, text = rep.to_markdown(), text_tables(rep)
    for line in rep.warning_lines():
        assert line[:60] in md and line[:60] in text


def test_a_report_read_back_lists_its_warnings_open(built, tmp_path):
    rep, _ = built
    back = ef.read_report(rep.to_parquet(tmp_path / "r"))
    assert not back.warnings_issued and len(back.warnings) == len(rep.warnings)
    seen = _shown(back._repr_html_())
    for line in back.warning_lines():
        assert line[:60] in seen
    assert not ef.Report.from_tables(rep.tables, rep.metadata).warnings_issued
    page = (tmp_path / "p.html")
    rep.to_html(page)
    seen = _shown(page.read_text())
    for line in rep.warning_lines():
        assert line[:60] in seen  # the page is a file read later: always open


def test_the_shown_text_helper_can_fail():
    assert "hidden" not in _shown("<details><summary>s</summary>hidden</details>")
    assert "visible" in _shown("<details open><summary>s</summary>visible</details>")
