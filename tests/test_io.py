"""Loading: every accepted source gives the same canonical table; bad input gives one clear error."""
import gzip
import warnings

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import evalframe as ef
import evalframe.io as evalframe_io

QRELS_TXT = "# a comment line\n1 0 d1 1\n1\t0\td2   0\n2 0 d1 2\n"
RUN_TXT = "# comment\n1 Q0 d1 1  2.5 sysA\n1\tQ0\td2\t2\t  1.5\tsysA\n2 Q0 d9 1 0.5 sysA\n"


def canon_qrels():
    return pd.DataFrame({"query_id": ["1", "1", "2"], "doc_id": ["d1", "d2", "d1"], "relevance": [1, 0, 2]})


def canon_run():
    return pd.DataFrame({"system": ["sysA"] * 3, "query_id": ["1", "1", "2"], "doc_id": ["d1", "d2", "d9"],
                         "score": [2.5, 1.5, 0.5]})


def same(df, expected):
    got = df[expected.columns].astype({c: object for c in expected.columns if expected[c].dtype == object})
    exp = expected.astype({c: object for c in expected.columns if expected[c].dtype == object})
    assert got.reset_index(drop=True).astype(str).equals(exp.astype(str)), (got, exp)


def test_trec_text_tabs_spaces_comments_and_gzip(tmp_path):
    (tmp_path / "q.txt").write_text(QRELS_TXT)
    (tmp_path / "r.trec").write_text(RUN_TXT)
    with gzip.open(tmp_path / "r.trec.gz", "wt") as fh:
        fh.write(RUN_TXT)
    same(ef.read_qrels(tmp_path / "q.txt"), canon_qrels())
    for name in ("r.trec", "r.trec.gz"):
        run = ef.read_run(tmp_path / name)
        same(run, canon_run())
        assert run["score"].dtype == np.float64
        assert run["rank"].tolist() == [1, 2, 1]


def test_csv_tsv_parquet_jsonl_and_aliases(tmp_path):
    q = canon_qrels().rename(columns={"query_id": "qid", "doc_id": "docno", "relevance": "label"})
    r = canon_run().rename(columns={"query_id": "topic", "doc_id": "docid", "score": "sim", "system": "run"})
    q.to_csv(tmp_path / "q.csv", index=False)
    r.to_csv(tmp_path / "r.tsv", sep="\t", index=False)
    r.to_parquet(tmp_path / "r.parquet")
    r.to_json(tmp_path / "r.jsonl", orient="records", lines=True)
    same(ef.read_qrels(tmp_path / "q.csv"), canon_qrels())
    for name in ("r.tsv", "r.parquet", "r.jsonl"):
        same(ef.read_run(tmp_path / name), canon_run())
    same(ef.read_run(r), canon_run())


def test_dict_of_dicts_like_pytrec_eval_and_ranx():
    same(ef.read_qrels({"1": {"d1": 1, "d2": 0}, "2": {"d1": 2}}), canon_qrels())
    run = ef.read_run({"1": {"d1": 2.5, "d2": 1.5}, "2": {"d9": 0.5}}, system="sysA")
    same(run, canon_run())


def test_several_systems_as_list_or_dict(tmp_path):
    a = canon_run().drop(columns="system")
    runs = ef.read_run({"A": a, "B": a.assign(score=-a.score)})
    assert runs.system.unique().tolist() == ["A", "B"]
    a.to_csv(tmp_path / "bm25.csv", index=False)
    a.to_csv(tmp_path / "dense.csv", index=False)
    runs = ef.read_run([tmp_path / "bm25.csv", tmp_path / "dense.csv"])
    assert runs.system.unique().tolist() == ["bm25", "dense"]
    with pytest.raises(ef.EvalframeInputError, match="share the system name"):
        ef.read_run([canon_run(), canon_run()])


def test_ids_are_strings():
    run = ef.read_run(pd.DataFrame({"qid": [1, 2], "docno": [10, 20], "score": [1.0, 2.0]}))
    assert run.query_id.tolist() == ["1", "2"] and run.doc_id.tolist() == ["10", "20"]


def test_callers_dataframe_not_modified():
    r = canon_run().rename(columns={"score": "sim"})
    before = r.copy()
    ef.read_run(r, duplicates="max")
    pd.testing.assert_frame_equal(r, before)


def test_one_error_lists_every_run_problem():
    bad = pd.DataFrame({"query_id": ["1", "1", "1", None], "doc_id": ["a", "a", "b", "c"],
                        "score": [1.0, 2.0, np.nan, np.inf]})
    with pytest.raises(ef.EvalframeInputError) as exc:
        ef.read_run(bad)
    msg = str(exc.value)
    assert "missing or empty query_id" in msg
    assert "2 rows have a missing, NaN, infinite or non-numeric score" in msg
    assert "listed more than once" in msg and "duplicates='max'" in msg
    assert len(exc.value.problems) == 3


def test_non_numeric_scores_reported():
    bad = pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["a", "b"], "score": ["1.5", "high"]})
    with pytest.raises(ef.EvalframeInputError, match="1 non-numeric"):
        ef.read_run(bad)


def test_missing_columns_named_with_aliases():
    with pytest.raises(ef.EvalframeInputError, match="(?s)missing column 'score'.*sim"):
        ef.read_run(pd.DataFrame({"query_id": ["1"], "doc_id": ["a"]}))


def test_duplicates_options():
    dup = pd.DataFrame({"query_id": ["1", "1", "1"], "doc_id": ["a", "a", "b"], "score": [1.0, 3.0, 2.0]})
    assert ef.read_run(dup, duplicates="max").sort_values("doc_id").score.tolist() == [3.0, 2.0]
    assert ef.read_run(dup, duplicates="first").sort_values("doc_id").score.tolist() == [1.0, 2.0]


@pytest.mark.parametrize("ids", ["text", "integer"])
@pytest.mark.parametrize("duplicates", ["first", "max"])
def test_duplicates_keep_the_rows_pandas_keeps(duplicates, ids):
    """Against pandas' drop_duplicates on the whole table: many systems, repeats of 2-4 copies with
    tied scores, in grouped and shuffled order; the kept rows keep the input's order."""
    rng = np.random.default_rng(7)
    n = 3000
    run = pd.DataFrame({"system": rng.choice(["a", "b", "c"], n), "query_id": rng.integers(0, 40, n),
                        "doc_id": rng.integers(0, 60, n), "score": rng.integers(0, 4, n).astype(float)})
    if ids == "text":
        run = run.astype({"query_id": str, "doc_id": str})
        run["doc_id"] = "d" + run["doc_id"]
    for frame in (run.sort_values(["system", "query_id"], kind="stable"), run):
        frame = frame.reset_index(drop=True)
        keys = ["system", "query_id", "doc_id"]
        order = frame.sort_values("score", ascending=False, kind="stable").index if duplicates == "max" else frame.index
        expected = frame.loc[order].drop_duplicates(keys, keep="first").sort_index()
        got = ef.read_run(frame, duplicates=duplicates)
        assert len(expected) < len(frame) - 100
        assert got["score"].tolist() == expected["score"].tolist()
        for c in keys:
            assert got[c].astype(str).tolist() == expected[c].astype(str).tolist()


def test_qrels_problems():
    bad = pd.DataFrame({"query_id": ["1", "1", "1", "2"], "doc_id": ["a", "b", "c", "d"],
                        "relevance": [1, 0.5, "x", np.nan]})
    with pytest.raises(ef.EvalframeInputError) as exc:
        ef.read_qrels(bad)
    msg = str(exc.value)
    assert "2 rows have a missing or non-numeric relevance label" in msg
    assert "1 rows have a non-integral relevance label" in msg
    conflict = pd.DataFrame({"query_id": ["1", "1", "1"], "doc_id": ["a", "a", "a"], "relevance": [1, 2, 1]})
    with pytest.raises(ef.EvalframeInputError, match="conflicting relevance"):
        ef.read_qrels(conflict)
    same_twice = pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["a", "a"], "relevance": [1, 1]})
    assert len(ef.read_qrels(same_twice)) == 1


def test_empty_tables():
    with pytest.raises(ef.EvalframeInputError, match="empty"):
        ef.read_qrels(pd.DataFrame({"query_id": [], "doc_id": [], "relevance": []}))
    with pytest.raises(ef.EvalframeInputError, match="empty"):
        ef.read_run(pd.DataFrame({"query_id": [], "doc_id": [], "score": []}))


def test_malformed_trec_line_reports_line(tmp_path):
    p = tmp_path / "r.trec"
    p.write_text("1 Q0 a 1 1.0 s\n1 Q0 b 2 s\n")
    with pytest.raises(ef.EvalframeInputError, match="malformed"):
        ef.read_run(p)


def test_non_numeric_score_in_trec_file_reported_by_schema(tmp_path):
    p = tmp_path / "r.trec"
    p.write_text("1 Q0 a 1 1.0 s\n1 Q0 b 2 oops s\n")
    with pytest.raises(ef.EvalframeInputError, match="non-numeric"):
        ef.read_run(p)


def test_missing_file():
    with pytest.raises(FileNotFoundError, match="no such file"):
        ef.read_run("/nonexistent/run.trec")


def test_malformed_line_number_counts_comment_lines(tmp_path):
    p = tmp_path / "r.trec"
    p.write_text("# header comment\n1 Q0 a 1 1.0 s\n1 Q0 b 2 s\n")
    with pytest.raises(ef.EvalframeInputError, match="line 3: .1 Q0 b 2 s. \\(5 fields\\)"):
        ef.read_run(p)


@pytest.mark.parametrize("sep", ["\t", " ", "  ", " \t "])
def test_every_blank_separator_parses_the_same(tmp_path, sep):
    p = tmp_path / "r.trec"
    p.write_text("".join(sep.join(["1", "Q0", d, str(r), s, "run"]) + "\n"
                         for d, r, s in [("a", 1, "2.5"), ("b", 2, "1.5")]))
    run = ef.read_run(p)
    assert run.doc_id.tolist() == ["a", "b"] and run.score.tolist() == [2.5, 1.5]


@pytest.mark.parametrize("read, texts", [
    # a doubled blank on line 1 and one field fewer on line 2: blank counts match a clean
    # file, but the parse must not produce an empty field
    (ef.read_qrels, ["1 0  d1 1\n1 0 d2\n", "1\t0\t\td1\t1\n1\t0\td2\n"]),
    # the rank column is not parsed: its empty field (a doubled blank) leaves a line of
    # five fields once blanks are normalised, refused as trec_eval refuses it
    (ef.read_run, ["1 Q0 a 1 2.5 run\n1 Q0 b  1.5 run\n", "1\tQ0\ta\t1\t2.5\trun\n1\t\tb\t2\t1.5\trun\n"]),
], ids=["qrels doubled blank", "run field not parsed"])
def test_an_empty_field_is_refused_with_its_line(read, texts, tmp_path):
    p = tmp_path / "f.txt"
    for text in texts:
        p.write_text(text)
        with pytest.raises(ef.EvalframeInputError, match="line 2"):
            read(p)


def test_csv_ids_keep_their_spelling_whatever_the_header_case(tmp_path):
    p = tmp_path / "q.csv"
    p.write_text("QID,DocID,Rel\n1,0012,1\n")
    q = ef.read_qrels(p)
    assert q.doc_id.tolist() == ["0012"]
    out = ef.evaluate({"1": {"0012": 1.0}}, q, "RR")
    assert out.value.tolist() == [1.0]


def test_blanks_around_ids_are_removed(tmp_path):
    run = pd.DataFrame({"query_id": [" 1"], "doc_id": ["d1 "], "score": [1.0]})
    qrels = pd.DataFrame({"query_id": ["1"], "doc_id": ["d1"], "relevance": [1]})
    assert ef.evaluate(run, qrels, "RR").value.tolist() == [1.0]
    p = tmp_path / "q.csv"
    p.write_text("query_id, doc_id, relevance\n1, 0012, 1\n")
    assert ef.read_qrels(p).doc_id.tolist() == ["0012"]


def test_runs_in_a_list_may_not_share_a_system():
    x = ef.read_run({"q": {"a": 1.0}}, system="x")
    y = ef.read_run({"q": {"b": 1.0}}, system="y")
    with pytest.raises(ef.EvalframeInputError, match="share the system name"):
        ef.read_run([pd.concat([x, y]), y])


def test_system_argument_may_not_merge_systems():
    both = pd.concat([ef.read_run({"q": {"a": 1.0}}, system="x"), ef.read_run({"q": {"b": 1.0}}, system="y")])
    with pytest.raises(ef.EvalframeInputError, match="would merge"):
        ef.read_run({"z": both})


def test_categorical_and_mixed_ids():
    qrels = pd.DataFrame({"query_id": ["1", "2"], "doc_id": ["a", "a"], "relevance": [1, 1]})
    run = pd.DataFrame({"query_id": pd.Categorical([1.0, 2.0]), "doc_id": ["a", "a"], "score": [1.0, 1.0]})
    assert ef.evaluate(run, qrels, "RR").value.tolist() == [1.0, 1.0]
    run = pd.DataFrame({"query_id": pd.Series([1, 2.0], dtype=object), "doc_id": ["a", "a"], "score": [1.0, 1.0]})
    assert ef.read_run(run).query_id.tolist() == ["1", "2"]


# ---------------------------------------------------------------------------
# TREC files as trec_eval reads them (issue 9, defect 12)
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("first", ["1 0 d1 1 0.9 run", "1 iter d1 1 0.9 system", "1 Q0 doc 1 0.9 tag"])
def test_a_run_first_line_that_can_be_data_is_data(tmp_path, first):
    p = tmp_path / "r.trec"
    p.write_text(first + "\n1 Q0 d2 2 0.5 " + first.split()[-1] + "\n")
    run = ef.read_run(p)
    assert run.doc_id.tolist() == [first.split()[2], "d2"]
    assert run.score.tolist() == [0.9, 0.5]


@pytest.mark.parametrize("first", ["1 0 doc 1", "1 0 score 2", "query 0 d1 1", "qid 0 docno 0"])
def test_a_qrels_first_line_that_can_be_data_is_data(tmp_path, first):
    p = tmp_path / "q.txt"
    p.write_text(first + "\n1 0 d9 1\n")
    q = ef.read_qrels(p)
    assert len(q) == 2 and first.split()[2] in q.doc_id.tolist()


@pytest.mark.parametrize("text, kind", [
    ("query_id Q0 doc_id rank score system\n1 Q0 d1 1 0.5 s\n", "run"),
    ("qid docno score\n1 d1 0.5\n", "run"),
    ("qid iter docno rel\n1 0 d1 1\n", "qrels"),
    ("query_id doc_id relevance\n1 d1 1\n", "qrels"),
])
def test_a_header_is_a_line_that_cannot_be_data(tmp_path, text, kind):
    p = tmp_path / "f.txt"
    p.write_text(text)
    df = ef.read_run(p) if kind == "run" else ef.read_qrels(p)
    assert df.query_id.tolist() == ["1"] and df.doc_id.tolist() == ["d1"]


def test_non_utf8_file_gives_a_clear_error_and_latin1_reads_it(tmp_path):
    p = tmp_path / "r.trec"
    p.write_bytes(b"1 Q0 d1 1 0.9 r\n1 Q0 d\xe9 2 0.5 r\n")
    with pytest.raises(ef.EvalframeInputError, match="(?s)not UTF-8 text.*line 2.*encoding='latin-1'"):
        ef.read_run(p)
    assert ef.read_run(p, encoding="latin-1").doc_id.tolist() == ["d1", "d\xe9"]
    q = tmp_path / "q.txt"
    q.write_bytes(b"1 0 d\xe9 1\n")
    with pytest.raises(ef.EvalframeInputError, match="not UTF-8 text"):
        ef.read_qrels(q)
    assert ef.read_qrels(q, encoding="latin-1").doc_id.tolist() == ["d\xe9"]


def test_indented_comment_in_a_run_and_c_isspace_separators(tmp_path):
    p = tmp_path / "r.trec"
    p.write_bytes(b"  # an indented comment\n1\vQ0\fd1 1 0.9 r\n\t# another\n1 Q0 d2\r2 0.5 r\r\n")
    run = ef.read_run(p)
    assert run.doc_id.tolist() == ["d1", "d2"] and run.score.tolist() == [0.9, 0.5]
    q = tmp_path / "q.txt"
    q.write_bytes(b"1\v0\fd1 1\n")
    assert ef.read_qrels(q).doc_id.tolist() == ["d1"]


# ---------------------------------------------------------------------------
# No network read by accident (issue 9, defect 10)
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("url", ["s3://bucket/run.parquet", "http://example.invalid/run.jsonl",
                                 "gs://bucket/run.parquet", "hdfs://namenode/run.jsonl", "https://x.invalid/r.trec"])
def test_url_looking_path_is_refused_before_any_io(url, monkeypatch):
    import builtins
    import pathlib

    def no_io(*args, **kwargs):
        raise AssertionError("I/O attempted")
    for target, name in [(pd, "read_parquet"), (pd, "read_json"), (pd, "read_csv"), (builtins, "open"),
                         (pathlib.Path, "read_bytes"), (pathlib.Path, "open")]:
        monkeypatch.setattr(target, name, no_io)
    with pytest.raises(ef.EvalframeInputError, match="(?s)looks like a URL.*filesystem="):
        ef.read_run(url)
    with pytest.raises(ef.EvalframeInputError, match="looks like a URL"):
        ef.read_qrels(url)
    with pytest.raises(ef.EvalframeInputError, match="looks like a URL"):
        ef.read_run(pathlib.Path(url))


def test_filesystem_argument_and_opened_files_are_the_explicit_choice(tmp_path):
    import pyarrow.fs as pafs

    r = canon_run()
    r.to_parquet(tmp_path / "r.parquet")
    r.to_json(tmp_path / "r.jsonl", orient="records", lines=True)
    (tmp_path / "r.trec").write_text(RUN_TXT)
    fs = pafs.SubTreeFileSystem(str(tmp_path), pafs.LocalFileSystem())
    for name in ("r.parquet", "r.jsonl", "r.trec"):
        same(ef.read_run(name, filesystem=fs), canon_run())
        with open(tmp_path / name, "rb") as fh:
            same(ef.read_run(fh), canon_run())
    (tmp_path / "q.txt").write_text(QRELS_TXT)
    same(ef.read_qrels("q.txt", filesystem=fs), canon_qrels())
    with pytest.raises(TypeError, match="filesystem must be"):
        ef.read_run("r.trec", filesystem=object())

@pytest.mark.filterwarnings("ignore::evalframe.NoRelevantWarning")
def test_float_ids_beyond_int64_stay_distinct():
    # issue 9, defect 8: float ids went through int64, so every id >= 2^63 became
    # -9223372036854775808 and different questions merged
    big = [2.0 ** 63, 2.0 ** 64, 1e19, -1e19]
    names = ["9223372036854775808", "18446744073709551616", "10000000000000000000", "-10000000000000000000"]
    run = pd.DataFrame({"query_id": big, "doc_id": [1e30, 2.0, 3.0, 4.0], "score": [1.0] * 4})
    out = ef.read_run(run)
    assert out.query_id.tolist() == names
    assert out.doc_id.tolist() == ["1000000000000000019884624838656", "2", "3", "4"]
    qrels = pd.DataFrame({"query_id": big, "doc_id": [1e30, 2.0, 9.0, 4.0], "relevance": [1, 1, 1, 0]})
    per_q = ef.evaluate(run, qrels, "RR", missing="drop")
    assert dict(zip(per_q.query_id, per_q.value)) == dict(zip(names, [1.0, 1.0, 0.0, 0.0]))


@pytest.mark.parametrize("label", [2 ** 63, 1e19, -1e19, "99999999999999999999", 2 ** 62])
def test_labels_beyond_int64_are_an_error_not_wrapped(label):
    # issue 9, defect 8: labels above int64 wrapped negative and counted as not relevant
    col = pd.Series([1, label], dtype=np.uint64) if label == 2 ** 63 else pd.Series([1, label], dtype=object)
    qrels = pd.DataFrame({"query_id": ["q", "q"], "doc_id": ["a", "b"], "relevance": col})
    with pytest.raises(ef.EvalframeInputError, match=r"1 rows have a relevance label out of range"):
        ef.read_qrels(qrels)


def test_large_integer_labels_within_range_are_exact():
    qrels = pd.DataFrame({"query_id": ["q", "q"], "doc_id": ["a", "b"],
                          "relevance": np.array([2 ** 53 + 1, -(2 ** 61)], dtype=np.int64)})
    assert ef.read_qrels(qrels).relevance.tolist() == [2 ** 53 + 1, -(2 ** 61)]


def test_duplicate_check_confirms_fingerprint_matches_on_the_strings(monkeypatch):
    # every doc id gets the same fingerprint: only a real repeat may be reported
    import evalframe._id_codes as id_codes
    monkeypatch.setattr(id_codes, "fingerprints", lambda arr: np.zeros(len(arr), dtype=np.uint64))
    run = pd.DataFrame({"query_id": ["q"] * 3, "doc_id": ["a", "b", "c"], "score": [3.0, 2.0, 1.0]})
    assert ef.read_run(run).doc_id.tolist() == ["a", "b", "c"]
    with pytest.raises(ef.EvalframeInputError, match="1 documents are listed more than once"):
        ef.read_run(pd.concat([run, run.iloc[:1]]))
    qrels = pd.DataFrame({"query_id": ["q"] * 2, "doc_id": ["a", "b"], "relevance": [1, 0]})
    assert len(ef.read_qrels(qrels)) == 2


@pytest.mark.parametrize("block_bytes", [None, 64])
def test_fingerprints_match_a_slow_loop_on_every_length_chunking_and_string_type(monkeypatch, block_bytes):
    # ids of 0 to 150 bytes: several 64-byte spans, a short last word, records
    # read near the buffer's end; blocks of 1,024 rows (the fewest) with block_bytes=64
    import pyarrow as pa
    from evalframe._id_bytes import fingerprints
    import evalframe._id_bytes as id_bytes
    masks = [(1 << (8 * k)) - 1 for k in range(8)] + [2 ** 64 - 1]

    M, W = 0x9E3779B97F4A7C15, 2 ** 64 - 1

    def slow(ids):  # per word: xor it in, multiply, xor-shift 32; at the end the full mixer
        out = []
        for s in ids:
            b = s.encode()
            h = len(b) * M & W
            for k in range(0, len(b), 8):
                h ^= int.from_bytes(b[k:k + 8].ljust(8, b"\0"), "little") & masks[min(len(b) - k, 8)]
                h = h * M & W
                h ^= h >> 32
            h = h * M & W
            h ^= h >> 29
            h = h * M & W
            h ^= h >> 32
            out.append(h)
        return np.array(out, dtype=np.uint64)

    if block_bytes is not None:
        monkeypatch.setattr(id_bytes, "FINGERPRINT_BYTES", block_bytes)
    rng = np.random.default_rng(5)
    for _ in range(100):
        ids = ["".join(rng.choice(list("ab\x00zé0/"), int(rng.integers(int(rng.choice([0, 9, 20, 60])),
                                                                        int(rng.choice([70, 150]))))))
               for _ in range(int(rng.integers(1, 20 if rng.random() < 0.9 else 2500)))]
        arr = pa.array(ids, pa.string() if rng.random() < 0.5 else pa.large_string())
        cut = int(rng.integers(0, len(ids) + 1))
        got = fingerprints(pa.chunked_array([arr.slice(0, cut), arr.slice(cut)], type=arr.type))
        assert (got == slow(ids)).all()


def test_a_list_of_run_files_is_named_by_the_commands_rule(tmp_path):
    """read_run([paths]) and every command name an unnamed run file by one rule (io.system_name)."""
    from evalframe.cli.runs import system_name as cli_rule
    path = tmp_path / "bm25.v2.tsv.gz"
    with gzip.open(path, "wt") as f:
        f.write("query_id\tdoc_id\tscore\nq1\td1\t1.0\n")
    other = tmp_path / "dense.parquet"
    pd.DataFrame({"query_id": ["q1"], "doc_id": ["d2"], "score": [0.5]}).to_parquet(other)
    run = ef.read_run([path, other])
    assert pd.unique(run["system"]).tolist() == ["bm25.v2", "dense"]
    assert cli_rule is evalframe_io.system_name


def test_document_ids_are_fingerprinted_once_per_table(monkeypatch):
    # the checked run hands its fingerprints to the ranking step: one pass over the
    # run's doc ids and one over the golden set's, whatever reads the input
    import evalframe._id_codes as id_codes
    calls = []
    real = id_codes.fingerprints
    monkeypatch.setattr(id_codes, "fingerprints", lambda arr: calls.append(len(arr)) or real(arr))
    run = pd.DataFrame({"query_id": ["q1"] * 3 + ["q2"], "doc_id": ["a", "b", "c", "a"], "score": [3.0, 2.0, 1.0, 1.0]})
    qrels = pd.DataFrame({"query_id": ["q1", "q2"], "doc_id": ["b", "a"], "relevance": [1, 1]})
    ef.evaluate(run, qrels, ["RR"])
    assert sorted(calls) == [2, 4]
    calls.clear()
    ef.evaluate({"q1": {"a": 1.0, "b": 0.5}}, {"q1": {"b": 1}}, ["RR"])
    assert sorted(calls) == [1, 2]


@pytest.mark.parametrize("shuffled", [False, True])
def test_duplicate_documents_found_in_any_block_of_a_large_run(monkeypatch, shuffled):
    # the duplicate check sorts keys block by block of whole questions in a grouped run
    from evalframe import _id_bytes, _id_codes, schema
    for module in (schema, _id_bytes, _id_codes):  # every module that was schema.py
        monkeypatch.setattr(module, "BLOCK_ROWS", 8)
    q = np.repeat([f"q{i}" for i in range(9)], 5)
    d = np.tile(list("abcde"), 9)
    d[15] = d[19]  # a repeat in the fourth question, whose rows straddle row 16
    run = pd.DataFrame({"query_id": q, "doc_id": d, "score": np.arange(45.0)[::-1]})
    if shuffled:
        run = run.sample(frac=1, random_state=1)
    with pytest.raises(ef.EvalframeInputError, match="1 documents are listed more than once"):
        ef.read_run(run)
    assert len(ef.read_run(run, duplicates="first")) == 44
    assert len(ef.read_run(run.drop_duplicates(["query_id", "doc_id"]))) == 44


@pytest.mark.parametrize("seed", range(8))
def test_duplicate_documents_are_the_rows_pandas_finds(monkeypatch, seed):
    # one sort per block of 64 rows (grouped runs; a shuffled one: one block): the
    # duplicates are pandas' duplicated rows
    from evalframe import _id_bytes, _id_codes, schema
    for module in (schema, _id_bytes, _id_codes):  # every module that was schema.py
        monkeypatch.setattr(module, "BLOCK_ROWS", 64)
    rng = np.random.default_rng(seed)
    q = np.repeat([f"q{i}" for i in range(40)], rng.integers(1, 30, 40))
    d = rng.integers(0, 25, len(q)).astype(str)
    run = pd.DataFrame({"query_id": q, "doc_id": d, "score": rng.random(len(q))})
    if seed % 2:
        run = run.sample(frac=1, random_state=seed)
    want = run.duplicated(["query_id", "doc_id"], keep=False)
    assert want.any()
    with pytest.raises(ef.EvalframeInputError, match=f"\\({int(want.sum())} rows\\)"):
        ef.read_run(run)
    kept = ef.read_run(run, duplicates="first")
    assert len(kept) == len(run.drop_duplicates(["query_id", "doc_id"]))
    unique = run[~want]
    assert len(ef.read_run(unique)) == len(unique)


@pytest.mark.parametrize("seed", range(6))
def test_duplicate_docs_confirmed_on_the_strings_as_a_loop_finds_them(seed):
    # every fingerprint equal: every row is a candidate, and the exact step alone decides;
    # a null doc id repeats another null of its group, as pandas' duplicated() counted it
    import pyarrow as pa
    from evalframe._id_codes import duplicate_docs
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 400))
    group = rng.integers(0, 1 + n // 8, n).astype(np.int64)
    docs = [None if rng.random() < 0.05 else str(rng.integers(0, 30)) for _ in range(n)]
    cut = int(rng.integers(0, n + 1))
    arr = pa.array(docs, pa.string())
    got = duplicate_docs(group, pa.chunked_array([arr.slice(0, cut), arr.slice(cut)]), np.zeros(n, np.uint64))
    seen = {}
    for g, d in zip(group.tolist(), docs):
        seen[g, d] = seen.get((g, d), 0) + 1
    assert got.tolist() == [seen[g, d] > 1 for g, d in zip(group.tolist(), docs)]


@pytest.mark.parametrize("seed", range(12))
def test_any_blank_layout_parses_as_split_on_blanks(tmp_path, seed):
    """Random mixes of separators (single or doubled spaces and tabs, leading and
    trailing blanks, blank lines, CRLF, \\v \\f) read as Python's bytes.split() reads
    each line; a line with a field missing is refused with its line number."""
    rng = np.random.default_rng(seed)
    blanks = [b" ", b"\t"] if seed % 3 else [b" ", b"\t", b"  ", b" \t", b"\v", b"\f"]
    rows, lines = [], []
    for i in range(40):
        fields = [f"q{rng.integers(3)}".encode(), b"Q0", f"d{i}".encode(), str(i + 1).encode(),
                  f"{rng.random():.3f}".encode(), b"tag"]
        rows.append(fields)
        seps = [blanks[rng.integers(len(blanks))] if rng.random() < 0.1 * (seed % 4)
                else (b"\t" if seed % 2 else b" ") for _ in range(5)]
        line = fields[0] + b"".join(s + f for s, f in zip(seps, fields[1:]))
        if seed % 4 == 3 and rng.random() < 0.1:
            line = b" " + line + b"\t"
        lines.append(line + (b"\r\n" if seed == 5 else b"\n"))
        if seed in (7, 11) and rng.random() < 0.05:
            lines.append(b"\n")
    p = tmp_path / "r.trec"
    p.write_bytes(b"".join(lines))
    run = ef.read_run(p)
    want = [[f.decode() for f in line.split()] for line in b"".join(lines).split(b"\n") if line.split()]
    assert run.doc_id.tolist() == [w[2] for w in want] and run.query_id.tolist() == [w[0] for w in want]
    assert run.score.tolist() == [float(w[4]) for w in want]
    bad = list(lines)
    bad[17] = b" ".join(rows[17][:2] + rows[17][3:]) + b"\n"  # the doc id left out
    p.write_bytes(b"".join(bad))
    with pytest.raises(ef.EvalframeInputError, match="line 18: "):
        ef.read_run(p)


def test_read_table_drops_trec_run_columns_unparsed(tmp_path):
    """read_table gives the TREC run as read (without Q0); a column in drop= is left
    out unparsed (a rank that is not a number is no error), the others are those of
    the full read, compared with the file's own fields."""
    lines = ["q1 Q0 d1 1 2.5 tagA", "q1 Q0 d2 x 1.5 tagA", "q2 Q0 d1 3 0.5 tagB"]
    path = tmp_path / "run.txt"
    path.write_text("\n".join(lines) + "\n")
    fields = [ln.split() for ln in lines]
    got = evalframe_io.read_table(path, "run", drop=("rank",))
    assert got.columns.tolist() == ["query_id", "doc_id", "score", "system"]
    assert got["query_id"].tolist() == [f[0] for f in fields]
    assert got["doc_id"].tolist() == [f[2] for f in fields]
    assert got["score"].tolist() == [float(f[4]) for f in fields]
    assert got["system"].tolist() == [f[5] for f in fields]
    full = evalframe_io.read_table(path, "run")
    assert full.columns.tolist() == ["query_id", "doc_id", "rank", "score", "system"]
    assert full["rank"].tolist() == [f[3] for f in fields]  # not a number: read as text
    with pytest.raises(ValueError, match="kind must be"):
        evalframe_io.read_table(path, "runs")


@pytest.mark.parametrize("seed", range(6))
def test_empty_field_scan_matches_splitting_on_the_delimiter(monkeypatch, seed):
    """has_empty_field finds a doubled, leading or trailing delimiter as splitting each
    line on it does, across its block boundaries (tiny blocks here)."""
    from evalframe import _text_tables
    monkeypatch.setattr(_text_tables, "_SCAN_BYTES", 7)
    rng = np.random.default_rng(seed)
    for _ in range(200):
        n = int(rng.integers(1, 40))
        data = bytes(rng.choice(list(b"ab \t\n"), size=n, p=[0.3, 0.3, 0.2, 0.1, 0.1]).astype(np.uint8))
        for delim in (" ", "\t"):
            lines = [ln for ln in data.split(b"\n") if ln]  # empty lines are skipped by the parser
            want = any(b"" in ln.split(delim.encode()) for ln in lines)
            assert _text_tables.has_empty_field(data, delim) == want, (data, delim)


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.uint64, np.int8])
def test_integer_ids_as_strings_are_pandas_own(dtype):
    from evalframe.schema import ids_to_str
    info = np.iinfo(dtype)
    s = pd.Series(np.array([0, 7, info.max, info.min, 42], dtype=dtype), index=[5, 3, 1, 2, 9])
    got = ids_to_str(s)
    expected = s.astype(str)
    pd.testing.assert_series_equal(got, expected)
    assert got.tolist() == [str(int(v)) for v in s]


@pytest.mark.parametrize("second", [["d3", "d4"], ["d3 ", "d4"], ["\xa0d3", "d4"], ["d3", "\x1fd4"],
                                    ["d3", "é"], ["d3", " "], ["d3", ""]],
                         ids=["clean", "trailing space", "leading nbsp", "leading control", "non-ascii",
                              "blank id", "empty id"])
def test_arrow_ids_checked_chunk_by_chunk_as_python_strips_them(second):
    """Arrow-backed ids, a clean chunk then ``second``: the ids kept are Python's
    ``str.strip`` of each (a loop here), and a blank or empty one is refused, whichever
    chunk holds it (a chunk with no byte that may be a blank is not read id by id)."""
    docs = ["d1", "d2"] + second
    column = pd.Series(pd.arrays.ArrowExtensionArray(pa.chunked_array([pa.array(docs[:2]), pa.array(second)])))
    run = pd.DataFrame({"query_id": ["q"] * 4, "doc_id": column, "score": [4.0, 3.0, 2.0, 1.0]})
    expected = [d.strip() for d in docs]
    if not all(expected):
        with pytest.raises(ef.EvalframeInputError, match="missing or empty doc_id"):
            ef.read_run(run)
        return
    assert ef.read_run(run)["doc_id"].tolist() == expected


# ---------------------------------------------------------------- rough edges: every bad file is one clear error
# (issue 32: each of these ended in a raw library message, or was read wrong without a word)

def _input_error(fn, *needles):
    """The call raises EvalframeInputError whose text holds every needle (case-insensitive)."""
    with pytest.raises(ef.EvalframeInputError) as exc:
        fn()
    text = str(exc.value).lower()
    for n in needles:
        assert n.lower() in text, (n, str(exc.value))
    return str(exc.value)


def test_truncated_jsonl_line_is_named_with_file_and_line(tmp_path):
    p = tmp_path / "run.jsonl"
    p.write_text('{"query_id": "q1", "doc_id": "d1", "score": 1}\n'
                 '{"query_id": "q1", "doc_id": "d2", "score": 0.5}\n'
                 '{"query_id": "q1", "doc_id": "d3", "sco\n')
    _input_error(lambda: ef.read_run(p), "run.jsonl", "line 3")


def test_jsonl_integer_ids_beyond_64_bits_are_read_exactly(tmp_path):
    p = tmp_path / "run.jsonl"
    big = 10 ** 22 + 7
    p.write_text(f'{{"query_id": 1, "doc_id": {big}, "score": 1}}\n{{"query_id": 1, "doc_id": 5, "score": 0.5}}\n')
    run = ef.read_run(p)
    assert run["doc_id"].tolist() == [str(big), "5"]
    assert run["query_id"].tolist() == ["1", "1"]


def test_corrupt_and_doubly_gzipped_files_are_named(tmp_path):
    import gzip
    line = b"q1 Q0 d1 1 1.0 r\n"
    cut = tmp_path / "cut.trec.gz"
    cut.write_bytes(gzip.compress(line * 50)[:30])
    _input_error(lambda: ef.read_run(cut), "cut.trec.gz", "gzip")
    with open(cut, "rb") as f:  # an opened file: its name is still given
        _input_error(lambda: ef.read_run(f), "cut.trec.gz", "gzip")
    twice = tmp_path / "twice.trec.gz"
    twice.write_bytes(gzip.compress(gzip.compress(line)))
    _input_error(lambda: ef.read_run(twice), "twice.trec.gz", "compressed twice")


def test_a_directory_or_a_symlink_loop_as_a_file_is_named(tmp_path):
    d = tmp_path / "runs"
    d.mkdir()
    _input_error(lambda: ef.read_run(d), str(d), "directory")
    _input_error(lambda: ef.read_qrels(d), str(d), "directory")
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    _input_error(lambda: ef.read_run(loop), str(loop), "symbolic links")


def test_dict_run_with_a_text_score_names_the_pair():
    _input_error(lambda: ef.read_run({"q1": {"d1": 1.0, "d2": "high"}}), "q1", "d2", "'high'")
    _input_error(lambda: ef.read_qrels({"q1": {"d1": "yes"}}), "q1", "d1", "'yes'")


def test_a_list_of_tuples_is_not_taken_for_a_list_of_files():
    rows = [("q1", "d1", 1.0), ("q1", "d2", 0.5)]
    msg = _input_error(lambda: ef.read_run(rows), "tuple", "DataFrame")
    assert "no such file" not in msg
    _input_error(lambda: ef.evaluate(rows, {"q1": {"d1": 1}}, "P@1"), "tuple")


@pytest.mark.parametrize("values", [[["d1"], ["d2"]], [{"id": "d1"}, {"id": "d2"}]])
def test_list_run_items_that_are_lists_or_structs_are_refused(values):
    run = pd.DataFrame({"query_id": ["q1"], "doc_id": [values]})
    _input_error(lambda: ef.read_run(run), "doc_id", "not a single id")


def test_a_parquet_struct_or_list_id_column_is_refused(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq
    p = tmp_path / "run.parquet"
    pq.write_table(pa.table({"query_id": ["q1"], "doc_id": pa.array([{"a": "d1"}]), "score": [1.0]}), p)
    _input_error(lambda: ef.read_run(p), "doc_id", "not a single id")
    p2 = tmp_path / "run2.parquet"
    pq.write_table(pa.table({"query_id": ["q1", "q1"], "doc_id": pa.array([[{"a": "d1"}], [{"a": "d2"}]]),
                             "score": pa.array([[1.0], [0.5]])}), p2)
    _input_error(lambda: ef.read_run(p2), "doc_id", "not a single id")
    _input_error(lambda: ef.read_qrels(pd.DataFrame({"query_id": ["q1"], "doc_id": [("d1", "d2")],
                                                     "relevance": [1]})), "doc_id", "not a single id")


def test_a_list_column_mixing_lists_and_single_ids_is_named():
    run = pd.DataFrame({"query_id": ["q1", "q2"], "doc_id": [["d1", "d2"], "d3"]})
    _input_error(lambda: ef.read_run(run), "doc_id", "mixes lists", "q2")


@pytest.mark.parametrize("score", [pd.Series([1 + 2j]), pd.Series(pd.to_datetime(["2020-01-01"])),
                                   pd.Series([np.timedelta64(5, "s")]), pd.Series([1 + 2j], dtype=object)])
def test_complex_and_date_scores_are_refused(score):
    run = pd.DataFrame({"query_id": ["q1"], "doc_id": ["d1"], "score": score})
    _input_error(lambda: ef.read_run(run), "score", "number")


def test_complex_or_date_labels_are_refused():
    for rel in (pd.Series([1 + 0j]), pd.Series(pd.to_datetime(["2020-01-01"]))):
        _input_error(lambda: ef.read_qrels(pd.DataFrame({"query_id": ["q1"], "doc_id": ["d1"], "relevance": rel})),
                     "relevance")


def test_a_directory_of_parquet_files_is_read_as_one_table(tmp_path):
    d = tmp_path / "run"
    d.mkdir()
    pd.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["d1", "d2"], "score": [2.0, 1.0]}).to_parquet(d / "a.parquet")
    pd.DataFrame({"query_id": ["q2"], "doc_id": ["d3"], "score": [1.0]}).to_parquet(d / "b.parquet")
    run = ef.read_run(d)
    assert sorted(zip(run["query_id"], run["doc_id"])) == [("q1", "d1"), ("q1", "d2"), ("q2", "d3")]


def test_ids_of_a_trec_text_file_skip_the_trim_pass_by_an_explicit_flag(tmp_path):
    """A TREC text file is split on blanks, so its ids hold none: the reader says so
    (``read_raw``'s flag, passed as ``trimmed=``, never DataFrame.attrs) and the checks
    skip their trim pass.  An id ending in a no-break space (not a field separator) is
    then kept whole, as trec_eval keeps it; the same table without the flag is trimmed."""
    from evalframe.io import read_raw
    nbsp = "d1\u00a0"
    run_path, qrels_path, csv_path = tmp_path / "run.txt", tmp_path / "qrels.txt", tmp_path / "run.csv"
    run_path.write_text(f"q1 Q0 {nbsp} 1 2.0 sys\nq1 Q0 d2 2 1.0 sys\n", encoding="utf-8")
    qrels_path.write_text(f"q1 0 {nbsp} 1\nq1 0 d2 0\n", encoding="utf-8")
    csv_path.write_text(f"query_id,doc_id,score\nq1,{nbsp},2.0\n", encoding="utf-8")
    raw, trimmed = read_raw(run_path, "run")
    assert trimmed and not raw.attrs  # the fact is returned, not carried on the table
    assert read_raw(csv_path, "run")[1] is False and read_raw(raw, "run")[1] is False
    assert ef.read_run(run_path)["doc_id"].tolist() == [nbsp, "d2"]
    assert ef.read_qrels(qrels_path)["doc_id"].tolist() == [nbsp, "d2"]
    assert ef.read_golden_set(qrels_path).frame["doc_id"].tolist() == [nbsp, "d2"]
    # the same table, as a DataFrame (no flag): trimmed, as every table is
    assert ef.read_run(raw)["doc_id"].tolist() == ["d1", "d2"]
    assert ef.schema.clean_run(raw, trimmed=True)["doc_id"].tolist() == [nbsp, "d2"]
    assert ef.read_run(csv_path)["doc_id"].tolist() == ["d1"]  # a CSV cell is trimmed


# ---------------------------------------------------------------- plain tables checked without pandas
def _plain_pair(seed: int = 3):
    """A run and golden set as users hold them: pandas' Arrow-backed string ids, float64
    scores with ties, int64 graded labels (0 and -1 among them), questions of either only."""
    rng = np.random.default_rng(seed)
    q = np.repeat([f"q{i}" for i in range(12)], 15)
    d = np.concatenate([rng.choice(80, 15, replace=False) for _ in range(12)])
    run = pd.DataFrame({"query_id": q, "doc_id": [f"D{x}" for x in d],
                        "score": rng.choice([1.0, 1.5, 2.0, 3.25], len(q))})
    judged = rng.random(len(q)) < 0.4
    qrels = pd.DataFrame({"query_id": np.append(q[judged], ["q99", "q99"]),
                          "doc_id": [f"D{x}" for x in d[judged]] + ["D1", "D2"],
                          "relevance": np.append(rng.choice([-1, 0, 1, 2, 3], int(judged.sum())), [1, 0])})
    return run, qrels


def _variants():
    run, qrels = _plain_pair()
    out = {"plain": (run, qrels),
           "shuffled, own index": (run.sample(frac=1, random_state=1).set_index(np.arange(len(run)) * 3), qrels)}
    r = run.copy(); r.loc[5, "doc_id"] = r.loc[4, "doc_id"]; out["a document twice"] = (r, qrels)
    r = run.copy(); r.loc[7, "score"] = np.nan; out["a NaN score"] = (r, qrels)
    r = run.copy(); r.loc[3, "doc_id"] = " D3"; out["a blank-edged id"] = (r, qrels)
    out["object ids"] = (run.astype({"query_id": object, "doc_id": object}), qrels)
    out["float32 scores"] = (run.astype({"score": np.float32}), qrels)
    out["int scores"] = (run.assign(score=np.arange(len(run)) % 7), qrels)
    out["a system column"] = (run.assign(system="s"), qrels)
    g = pd.concat([qrels, qrels.iloc[[0]]], ignore_index=True); out["a judgement twice"] = (run, g)
    g = pd.concat([qrels, qrels.iloc[[0]].assign(relevance=qrels["relevance"].iloc[0] + 1)], ignore_index=True)
    out["conflicting labels"] = (run, g)
    g = qrels.copy(); g.loc[2, "relevance"] = 2 ** 62; out["a label out of range"] = (run, g)
    out["float labels"] = (run, qrels.astype({"relevance": np.float64}))
    out["int32 labels"] = (run, qrels.astype({"relevance": np.int32}))
    return out


def _outcome(run, qrels, **kw):
    from evalframe.evaluation import evaluate_with_diagnostics
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            got = evaluate_with_diagnostics(run, qrels, ["nDCG@5", "AP", "P@3", "R@10", "RR", "NumRet"], **kw)
        except ef.EvalframeInputError as exc:
            got = str(exc)
    return got, sorted(f"{type(w.message).__name__}: {w.message}" for w in caught)


@pytest.mark.parametrize("name", list(_variants()))
@pytest.mark.parametrize("kw", [{}, {"duplicates": "max", "conflicts": "max"}], ids=["defaults", "resolve"])
def test_a_plain_table_checked_without_pandas_gives_check_runs_answer(name, kw, monkeypatch):
    """evaluate() checks a plain run or golden set (only its canonical columns, Arrow-backed
    string ids, float64 scores or int64 labels) on Arrow, as trec-eval checks a text file; the
    per-question table, diagnostics, warnings and errors are those of the pandas checks
    (the oracle: the same call with the Arrow checks turned off)."""
    run, qrels = _variants()[name]
    fast = _outcome(run, qrels, **kw)
    monkeypatch.setattr(evalframe_io, "plain_table", lambda *a, **k: None)
    slow = _outcome(run, qrels, **kw)
    assert fast[1] == slow[1]
    if isinstance(slow[0], str):
        assert fast[0] == slow[0]
        return
    for a, b in zip(fast[0], slow[0]):
        pd.testing.assert_frame_equal(a, b)


@pytest.mark.filterwarnings("ignore::evalframe.EvalframeWarning")
def test_plain_tables_take_the_arrow_checks(monkeypatch):
    """The plain pair is checked on Arrow (both tables); object ids and float labels by the pandas checks."""
    from evalframe import _id_codes
    seen = []
    for name in ("checked_text_run", "checked_text_qrels"):
        real = getattr(_id_codes, name)
        def answered(t, real=real, name=name):
            out = real(t)
            seen.extend([name] if out is not None else [])
            return out
        monkeypatch.setattr(evalframe_io, name, answered)
    run, qrels = _plain_pair()
    ef.evaluate(run, qrels, ["AP"])
    assert seen == ["checked_text_run", "checked_text_qrels"]
    seen.clear()
    ef.evaluate(run.astype({"query_id": object, "doc_id": object}), qrels.astype({"relevance": np.float64}), ["AP"])
    assert seen == []


def test_arrow_backing_gives_the_columns_own_chunks():
    # pandas' Arrow protocol, not pyarrow.array of the Series: the same answer (the column's
    # own chunks and buffers; None for other columns)
    import pyarrow as pa

    from evalframe._id_bytes import arrow_backing
    one = pd.Series(["q1", "q2", "q10"], dtype="str")
    got = arrow_backing(one)
    assert got.num_chunks == 1 and got.to_pylist() == ["q1", "q2", "q10"]
    own = one.array.__arrow_array__().chunk(0).buffers()[2].address
    assert got.chunk(0).buffers()[2].address == own
    chunks = pa.chunked_array([["a", "b"], ["c"]], pa.large_string())
    many = pd.Series(pd.arrays.ArrowStringArray(chunks))
    got = arrow_backing(many)
    assert got.num_chunks == 2 and got.to_pylist() == ["a", "b", "c"] and got.type == pa.large_string()
    assert got.chunk(1).buffers()[2].address == chunks.chunk(1).buffers()[2].address
    small = arrow_backing(pd.Series(["x", "y"], dtype=pd.ArrowDtype(pa.string())))
    assert small.type == pa.string() and small.to_pylist() == ["x", "y"]
    assert arrow_backing(pd.Series([1, 2], dtype=pd.ArrowDtype(pa.int64()))) is None
    assert arrow_backing(pd.Series(["x"], dtype=object)) is None
