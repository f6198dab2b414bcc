"""The golden-set and run files read as trec_eval reads them (ids as bytes through latin-1,
its malformed-line rules), into checked tables.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path


#: trec_eval compares and prints ids as bytes: reading every file as latin-1 maps
#: each byte to one character (lossless, any bytes, UTF-8 or not, in the same
#: order as strcmp), and the output is encoded back the same way.
ENCODING = "latin-1"


def read_inputs(qrels_path: str, run_path: str):
    from concurrent.futures import ThreadPoolExecutor

    # the qrels are read in a second thread while the run is read (Arrow's parser
    # and most array work release the GIL)
    with ThreadPoolExecutor(1) as pool:
        pending = pool.submit(read_golden_file, qrels_path)
        try:
            run, runid = read_run_file(run_path)
        except Exception:
            pending.result()  # trec_eval reads the golden set first: its error, if any, comes first
            raise
        qrels = pending.result()
    return qrels, run, runid


def read_golden_file(qrels_path: str):
    """The golden set checked, its ids factorised once for judge (a CheckedQrels): an
    Arrow table from the file to the output when the file needs nothing more than
    :func:`~evalframe._id_codes.checked_text_qrels` does (no pandas), else read and
    checked by :func:`evalframe.io.read_checked_qrels` (which finds what is wrong)."""
    from .._id_codes import checked_text_qrels
    from .._text_tables import plain_trec_text
    table = plain_trec_text(qrels_path, "qrels", encoding=ENCODING)
    checked = None if table is None else checked_text_qrels(table)
    if checked is not None:
        return checked
    from ..errors import EvalframeInputError
    from ..io import read_checked_qrels
    from ..schema import check_qrels
    try:
        qrels = read_checked_qrels(qrels_path, encoding=ENCODING)  # ids factorised once, for judge
        if qrels.subtopics is not None:  # trec_eval has no subtopics: one label per (query, doc), as before
            qrels = check_qrels(qrels.subtopics.drop(columns="subtopic"))  # one check: merges repeats, refuses conflicts
        return qrels
    except EvalframeInputError:
        _raise_malformed(Path(qrels_path).read_bytes(), qrels_path, 4, 4)
        raise


def read_run_file(run_path: str):
    """The run checked, its ids factorised once for judge (a CheckedRun), and its tag."""
    from ..errors import EvalframeInputError

    if run_path == "-":
        return read_run_bytes(sys.stdin.buffer.read(), "standard input")
    try:
        return _checked_run(run_path, run_path)
    except EvalframeInputError:
        # trec_eval ignores anything after a run line's sixth field
        data = Path(run_path).read_bytes()
        if not _EXTRA_FIELDS.search(data):
            _raise_malformed(data, run_path, 6, None)
            raise
        return read_run_bytes(data, run_path, as_is=False)


def _checked_run(source, where: str):
    """The run file ``source`` (a path or an opened binary file) checked (a CheckedRun, without its tag column) and
    its tag, the last line's; refuses a file of several runs whose rankings would
    merge.  trec_eval reads neither the Q0 nor the rank column; a file whose lines
    all carry one tag is checked without the tag column (it would only be
    factorised to be dropped)."""
    import pyarrow as pa

    from .._id_codes import checked_text_run
    from .._text_tables import plain_trec_text
    table = plain_trec_text(source, "run", drop=("rank",), encoding=ENCODING)
    if table is not None:  # the Arrow table as it is, when it needs no more (no pandas)
        tag = _one_tag(table["system"]) if "system" in table.column_names else ""
        if tag:
            table = table.drop_columns("system")  # (its buffers freed before the check)
        checked = None if tag is None else checked_text_run(table)
        del table
        if checked is not None:
            return checked, tag
    from ..io import read_raw
    from ..schema import check_run
    raw, trimmed = read_raw(source, "run", drop=("rank",), encoding=ENCODING)
    if "system" in raw and trimmed and len(raw):
        last = _one_tag(pa.array(raw["system"]))  # the column's own buffers
        if last:
            return check_run(raw.drop(columns="system"), duplicates="max", trimmed=True), last
    return _one_run(check_run(raw, duplicates="max", trimmed=trimmed), where)


def _one_tag(tags) -> str | None:
    """The tag every line of a run carries (Arrow strings), None when they differ or it is blank."""
    from .. import _arrow_compute as pc
    if not len(tags):
        return None
    last = tags[len(tags) - 1]
    if last.as_py().strip() and pc.all(pc.equal(tags, last)).as_py():
        return last.as_py()
    return None


def _one_run(run, where: str):
    """The run without its tag column, and its tag (the last line's); refuses a
    file of several runs whose rankings would merge."""
    runid = ""
    if "system" in run.frame:
        tags = run.frame["system"]
        runid = str(tags.iloc[len(tags) - 1]) if len(tags) else ""
        several = run.system is not None and len(run.system) > 1
        run = run.without_system()
        if several and run.frame.duplicated(["query_id", "doc_id"]).any():
            from ..errors import EvalframeInputError, InputProblem
            names = list(dict.fromkeys(tags.astype(str)))
            shown = ", ".join(names[:5]) + (", ..." if len(names) > 5 else "")
            raise EvalframeInputError("run", [InputProblem(
                f"{where} holds {len(names)} runs (run tags {shown}), and trec_eval evaluates one run "
                "per file: their rankings would merge (a document is listed by more than one of them)",
                "split the file by its sixth field (the run tag), one file per run, or use "
                "'evalframe evaluate QRELS RUN', which evaluates each run tag as a system")])
    return run, runid


_EXTRA_FIELDS = re.compile(rb"(?m)^([ \t]*(?:\S+[ \t]+){5}\S+)[ \t]+[^\s][^\n]*$")


def _raise_malformed(data: bytes, path: str, least: int, most: int | None, *, start: int = 1) -> None:
    """Raise trec_eval's error for lines with too few (or too many) fields,
    naming their line numbers in the file (``data``'s first line is number
    ``start``); return when there are none."""
    from .._text_tables import malformed_lines

    refuse_malformed(path, *malformed_lines(data, least, most, start=start), least, most)


def refuse_malformed(path: str, count: int, shown: list[str], least: int, most: int | None) -> None:
    """Raise the error of :func:`_raise_malformed` for ``count`` such lines, ``shown``."""
    from ..errors import EvalframeInputError, InputProblem
    if count:
        want = f"{least}" if least == most else f"at least {least}"
        raise EvalframeInputError("golden set (qrels)" if most == 4 else "run", [InputProblem(
            f"{path}: {count} malformed lines (expected {want} whitespace-separated fields)",
            "fix or remove those lines", "\n".join(shown))])


def read_run_bytes(data: bytes, path: str, first_line: int = 1, *, as_is: bool = True):
    """Read a TREC run given as bytes, ignoring fields after the sixth (``first_line``:
    the number of the first line of ``data`` in the file, for messages).  The bytes
    are read as they are (``as_is``) and, only when that fails and some line has
    more than six fields, again with those fields cut (a regular expression over
    every line: 13 s over the 10M lines of a 100000x100 run read in blocks)."""
    import io as _io

    from ..errors import EvalframeInputError

    if data[:2] == b"\x1f\x8b":
        import gzip
        data = gzip.decompress(data)
    for cut in ((False, True) if as_is else (True,)):
        if cut:
            data = _EXTRA_FIELDS.sub(rb"\1", data.replace(b"\r\n", b"\n"))
        try:
            return _checked_run(_io.BytesIO(data), path)
        except EvalframeInputError:
            if cut or not _EXTRA_FIELDS.search(data):  # no line has fields to cut: malformed
                _raise_malformed(data, path, 6, None, start=first_line)
                raise


def starts_with_bom(path: str) -> bool:
    """Whether the (possibly gzipped) file ``path`` starts with a UTF-8 byte-order mark."""
    from .._text_tables import open_binary
    try:
        with open_binary(path) as f:
            return f.read(3) == b"\xef\xbb\xbf"
    except (OSError, EOFError):
        return False  # the reader reports it
