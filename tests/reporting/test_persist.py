"""Writers get the readers' URL guard (issue 30): a URL-looking path given to a writer
(Pool.to_csv / to_trec, Report.to_csv / to_parquet / to_html / save_plots, read_report,
ReportDiff.to_html, report --out, gate --summary) is refused before anything is created or
sent; pandas and pyarrow would otherwise send it over the network or make local 's3:'
folders."""
from __future__ import annotations

import io
import warnings

import pytest

import evalframe as ef
from evalframe.cli import main


@pytest.fixture(scope="module")
def rep():
    sso = ef.datasets.load_sso()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ef.report(sso.runs, sso.qrels, measures=["R@5"], n_resamples=20)


URLS = ["http://127.0.0.1:9/out", "s3://bucket/out", "gs://bucket/out"]


@pytest.mark.parametrize("url", URLS)
def test_writers_refuse_urls_and_create_nothing(url, rep, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    sso = ef.datasets.load_sso()
    p = ef.pool(sso.runs, depth=2)
    calls = [lambda: p.to_csv(url + ".csv"), lambda: p.to_trec(url + ".txt"), lambda: rep.to_csv(url),
             lambda: rep.to_parquet(url), lambda: rep.to_html(url + "/report.html"),
             lambda: rep.save_plots(url), lambda: ef.read_report(url),
             lambda: ef.diff(rep, rep).to_html(url + ".html")]
    for call in calls:
        with pytest.raises(ef.EvalframeInputError, match="looks like a URL"):
            call()
    assert list(tmp_path.iterdir()) == []  # no 'http:' / 's3:' folder made locally


def test_local_writers_still_work(rep, tmp_path):
    sso = ef.datasets.load_sso()
    p = ef.pool(sso.runs, depth=2)
    p.to_csv(tmp_path / "pool.csv")
    buf = io.StringIO()
    p.to_csv(buf)  # a file object is written as before
    assert buf.getvalue().splitlines()[0].startswith("query_id")
    assert ef.read_report(rep.to_parquet(tmp_path / "r")).systems == rep.systems


def test_commands_refuse_url_outputs(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    from pathlib import Path
    data = Path(__file__).resolve().parents[2] / "data" / "sso"
    assert main(["report", str(data / "qrels.txt"), str(data / "run.trec"), "--n-resamples", "20",
                 "--out", "s3://bucket/report"]) == 2
    assert "looks like a URL" in capsys.readouterr().err
    assert main(["evaluate", str(data / "qrels.txt"), str(data / "run.trec"), "--out", "http://h/x.csv"]) == 2
    assert list(tmp_path.iterdir()) == []
