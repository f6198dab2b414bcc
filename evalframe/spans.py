"""Span golden sets and chunk tables: evidence judged once, any chunking scored fairly.

A chunk-level golden set is tied to one chunking: re-chunk the corpus and its ids mean
nothing.  A *span golden set* judges the text itself, as character offsets into each
parent document, and stays valid whatever the chunking:

- span golden set: ``query_id, doc_id, start, end[, relevance]`` (``doc_id`` the parent
  document, offsets in characters, ``end`` exclusive, relevance 1 when absent);
  aliases ``start_char``/``char_start``/``start_offset``..., ``end_char``/``char_end``...
  (``START_NAMES``, ``END_NAMES``), checked by :func:`check_spans`;
- chunk table: ``chunk_id, doc_id, start, end[, tokens][, text]``: each chunk's parent
  document and its offsets there (:func:`check_chunks`);
- :func:`span_labels`: the chunk-level golden set a chunking gets from the spans.  A chunk
  takes the largest label among the spans whose overlap with it is at least
  ``min_overlap`` x min(span length, chunk length) characters; the other chunks of a
  document the question has spans in are judged not relevant (label 0);
- :func:`rechunk`: a chunk-level golden set carried onto a new chunking through the
  offsets, with a drift table (kept / merged / split / moved / orphaned);
- :func:`union_lengths`: the interval arithmetic of the span measures
  (``evalframe.measures.spans``: ``SpanRecall``, ``SpanPrecision``, ``SpanIoU``): characters covered per owner, one sort, no loop.

Overlapping spans of one question, document and label are merged before the overlap
rule (two annotators marking overlapping text mark one piece of evidence); spans that
only touch stay apart.  Coverage (the span measures) counts characters, so merging never
changes it.
"""
from __future__ import annotations

__all__ = ["SpanRows", "Rechunked", "check_spans", "check_chunks", "merge_spans", "span_labels", "rechunk",
           "union_lengths"]

import numbers
from dataclasses import dataclass
from typing import Mapping

import numpy as np
import pandas as pd

from ._validation import Interval, Satisfies, check, error, type_of
from .errors import EvalframeInputError, InputProblem
from .canonical import ALIASES, END_NAMES, START_NAMES, apply_columns, split_question_text
from ._id_bytes import fingerprints
from .schema import clean_qrels, ids_to_str

#: Accepted names of a chunk table's chunk id.
CHUNK_NAMES = ("chunk_id", "chunk", "passage_id", "passage", "node_id", "segment_id", "split_id")
#: Accepted names of the parent document of a span or chunk.
PARENT_NAMES = ("doc_id", "parent_id", "parent", "document_id", "docid", "docno", "doc", "page_id", "page",
                "source_id", "ref_doc_id", "parent_doc_id", "corpus_id", "corpus-id")

#: Accepted names of a chunk table's column giving the parent document's length in
#: characters (optional: spans beyond it are then an input error).
DOC_LENGTH_NAMES = ("doc_length", "document_length", "doc_chars", "parent_length", "doc_len")

#: The default of ``min_overlap``: a chunk holds evidence when it shares at least half of
#: the shorter of the span and the chunk.
MIN_OVERLAP = 0.5

_WHAT_SPANS = "span golden set"


def _norm(c) -> str:
    return str(c).strip().lower()


def _find(df: pd.DataFrame, names: tuple[str, ...], canon: str, problems: list[InputProblem] | None,
          *, exclude=()) -> object | None:
    """The column of ``df`` named ``canon`` or its first alias found (case and blanks
    ignored); a missing one is a problem when ``problems`` is given."""
    lower = {_norm(c): c for c in df.columns if c not in exclude}
    for name in (canon,) + tuple(n for n in names if n != canon):
        if name in lower:
            return lower[name]
    if problems is not None:
        problems.append(InputProblem(
            f"missing column {canon!r} (found columns: {[str(c) for c in df.columns]})",
            f"name a column {canon!r} or one of {', '.join(n for n in names if n != canon)}; "
            "or map your names with columns={'your_name': " + f"{canon!r}" + "}"))
    return None


def is_span_table(table) -> bool:
    """Whether a table has a start and an end offset column (a span golden set or a run
    carrying chunk offsets)."""
    return (isinstance(table, pd.DataFrame) and _find(table, START_NAMES, "start", None) is not None
            and _find(table, END_NAMES, "end", None) is not None)


def _examples(df: pd.DataFrame, mask) -> str:
    return df.loc[np.asarray(mask, dtype=bool)].head(5).to_string()


def _offsets(df: pd.DataFrame, col, name: str, problems: list[InputProblem]) -> np.ndarray:
    """An offset column as int64; missing, fractional or negative offsets are problems."""
    v = pd.to_numeric(df[col], errors="coerce").to_numpy(dtype=float, na_value=np.nan)
    bad = ~np.isfinite(v) | (np.isfinite(v) & (v != np.round(np.nan_to_num(v))))
    if bad.any():
        problems.append(InputProblem(f"{int(bad.sum())} rows have a missing or non-integral {name} offset",
                                     f"give every row an integer character offset in {name!r}",
                                     _examples(df, bad)))
    neg = np.isfinite(v) & (v < 0)
    if neg.any():
        problems.append(InputProblem(f"{int(neg.sum())} rows have a negative {name} offset",
                                     "offsets count characters from the start of the parent document (0)",
                                     _examples(df, neg)))
    return np.where(np.isfinite(v), v, 0).astype(np.int64)


def _ids(df: pd.DataFrame, col, name: str, problems: list[InputProblem]) -> pd.Series:
    s = ids_to_str(df[col]).reset_index(drop=True)
    bad = s.isna().to_numpy() | (s.str.len() == 0).fillna(True).to_numpy(dtype=bool)
    if bad.any():
        problems.append(InputProblem(f"{int(bad.sum())} rows have a missing or empty {name}",
                                     f"drop those rows or fill in their {name}", _examples(df, bad)))
    return s


def check_spans(table: pd.DataFrame, *, columns: Mapping[str, str] | None = None) -> pd.DataFrame:
    """Check a span golden set and return its canonical copy.

    Parameters
    ----------
    table : DataFrame
        ``query_id, doc_id, start, end[, relevance]`` or aliases (see the module
        docstring); ``doc_id`` names the parent document.
    columns : dict, optional
        ``{your name: canonical name}``, applied first.

    Returns
    -------
    DataFrame
        ``query_id`` (str), ``doc_id`` (str), ``start``, ``end``, ``relevance`` (int64;
        1 where the table has no label column), in the table's row order.

    Raises
    ------
    EvalframeInputError
        Listing every problem: missing columns or ids, offsets missing, fractional or
        negative, a span with ``end <= start``, a missing or non-integral label.

    Examples
    --------
    >>> import pandas as pd
    >>> check_spans(pd.DataFrame({"qid": ["q1"], "doc_id": ["d1"], "start_char": [10], "end_char": [42]}))
      query_id doc_id  start  end  relevance
    0       q1     d1     10   42          1
    """
    df = split_question_text(apply_columns(table, columns)).reset_index(drop=True)
    problems: list[InputProblem] = []
    q = _find(df, ALIASES["query_id"], "query_id", problems, exclude=("text",))
    d = _find(df, PARENT_NAMES, "doc_id", problems)
    s = _find(df, START_NAMES, "start", problems)
    e = _find(df, END_NAMES, "end", problems)
    r = _find(df, ALIASES["relevance"], "relevance", None)
    if problems:
        raise EvalframeInputError(_WHAT_SPANS, problems)
    if not len(df):
        raise EvalframeInputError(_WHAT_SPANS, [InputProblem("the table is empty",
                                                             "pass at least one evidence span")])
    no_span = (pd.isna(df[s]) & pd.isna(df[e])).to_numpy()
    if no_span.any():  # said once, as what it is, not as two offset problems
        problems.append(InputProblem(
            f"{int(no_span.sum())} rows have neither a start nor an end: a span golden set mixed with "
            "chunk-level rows?", "give every row its evidence span, or keep chunk labels in a golden set of "
            "their own (evalframe.rechunk carries them onto a chunking)", _examples(df, no_span)))
        df = df.loc[~no_span].reset_index(drop=True)
    out = pd.DataFrame({"query_id": _ids(df, q, "query_id", problems), "doc_id": _ids(df, d, "doc_id", problems),
                        "start": _offsets(df, s, "start", problems), "end": _offsets(df, e, "end", problems)})
    empty = out["end"].to_numpy() <= out["start"].to_numpy()
    if empty.any():
        problems.append(InputProblem(f"{int(empty.sum())} spans have end <= start (an empty span holds no evidence)",
                                     "end is exclusive: a span of the first 10 characters is start 0, end 10",
                                     _examples(df, empty)))
    if r is None:
        out["relevance"] = np.ones(len(out), dtype=np.int64)
    else:
        lab = pd.to_numeric(df[r], errors="coerce").to_numpy(dtype=float, na_value=np.nan)
        bad = ~np.isfinite(lab) | (np.isfinite(lab) & (lab != np.round(np.nan_to_num(lab))))
        if bad.any():
            problems.append(InputProblem(
                f"{int(bad.sum())} spans have a missing or non-integral label in {str(r)!r}",
                "give every span an integer grade (relevance 1 when the column is absent), or map text "
                "labels to grades first", _examples(df, bad)))
        out["relevance"] = np.where(np.isfinite(lab), lab, 0).astype(np.int64)
    if problems:
        raise EvalframeInputError(_WHAT_SPANS, problems)
    return out


def check_chunks(table: pd.DataFrame, *, columns: Mapping[str, str] | None = None, disjoint: bool = False,
                 what: str = "chunk table") -> pd.DataFrame:
    """Check a chunk table and return its canonical copy.

    Parameters
    ----------
    table : DataFrame
        ``chunk_id, doc_id, start, end[, tokens][, text]`` or aliases: each chunk's
        parent document and its character offsets there (``end`` exclusive; a chunk
        holding no text of its document, such as a title, has ``end == start``).
    columns : dict, optional
        ``{your name: canonical name}``, applied first.
    disjoint : bool
        Whether the chunks of one document must not overlap (a chunking without
        overlap windows): overlapping chunks are then an error.
    what : str
        The table's name in error messages.

    Returns
    -------
    DataFrame
        ``chunk_id, doc_id`` (str), ``start, end`` (int64), and ``tokens`` (int64),
        ``doc_length`` (int64: the parent document's length in characters, which spans
        must not pass; aliases ``document_length``, ``doc_chars``...) and ``text`` (str)
        when given; one row per chunk id (exact repeats dropped).

    Raises
    ------
    EvalframeInputError
        Listing every problem: missing columns or ids, bad offsets, ``end < start``,
        a chunk id given two different places, overlapping chunks with ``disjoint``,
        a missing or negative token count.
    """
    df = apply_columns(table, columns).reset_index(drop=True)
    problems: list[InputProblem] = []
    c = _find(df, CHUNK_NAMES, "chunk_id", problems)
    d = _find(df, PARENT_NAMES, "doc_id", problems, exclude=(c,))
    s = _find(df, START_NAMES, "start", problems)
    e = _find(df, END_NAMES, "end", problems)
    if problems:
        raise EvalframeInputError(what, problems)
    out = pd.DataFrame({"chunk_id": _ids(df, c, "chunk_id", problems), "doc_id": _ids(df, d, "doc_id", problems),
                        "start": _offsets(df, s, "start", problems), "end": _offsets(df, e, "end", problems)})
    back = out["end"].to_numpy() < out["start"].to_numpy()
    if back.any():
        problems.append(InputProblem(f"{int(back.sum())} chunks have end < start",
                                     "end is exclusive and at least start", _examples(df, back)))
    t = _find(df, ALIASES["tokens"], "tokens", None)
    if t is not None:
        tok = pd.to_numeric(df[t], errors="coerce").to_numpy(dtype=float, na_value=np.nan)
        bad = ~np.isfinite(tok) | (tok < 0) | (np.isfinite(tok) & (tok != np.round(np.nan_to_num(tok))))
        if bad.any():
            problems.append(InputProblem(f"{int(bad.sum())} chunks have a missing, negative or fractional token count",
                                         "give every chunk its number of tokens (an int >= 0), or drop the column",
                                         _examples(df, bad)))
        out["tokens"] = np.where(np.isfinite(tok), tok, 0).astype(np.int64)
    n = _find(df, DOC_LENGTH_NAMES, "doc_length", None)
    if n is not None:
        length = _offsets(df, n, "doc_length", problems)
        beyond = out["end"].to_numpy() > length
        if beyond.any():
            problems.append(InputProblem(f"{int(beyond.sum())} chunks end beyond their document's length",
                                         "check the offsets and the doc_length column", _examples(df, beyond)))
        out["doc_length"] = length
    x = _find(df, ("text", "content", "chunk_text", "page_content"), "text", None)
    if x is not None:
        out["text"] = df[x].astype(str).to_numpy()
    if problems:
        raise EvalframeInputError(what, problems)
    import pyarrow as pa
    fp = fingerprints(pa.chunked_array([pa.array(out["chunk_id"]).cast(pa.large_string())]))
    srt = np.sort(fp)
    repeated = out["chunk_id"].duplicated(keep=False).to_numpy() if (srt[1:] == srt[:-1]).any() \
        else np.zeros(len(out), dtype=bool)  # distinct fingerprints: distinct ids, no hash of the strings
    if repeated.any():
        same = out.loc[repeated].drop_duplicates(["chunk_id", "doc_id", "start", "end"])
        clash = same["chunk_id"].duplicated(keep=False).to_numpy()
        if clash.any():
            problems.append(InputProblem(
                f"{same.loc[clash, 'chunk_id'].nunique()} chunk ids are given two different documents or ranges",
                "give each chunk id one place (a run of several chunkings needs one chunk table per system: "
                "chunks={system: table})", same.loc[clash].head(5).to_string()))
        out = out.drop_duplicates("chunk_id").reset_index(drop=True)
    if disjoint and not problems:
        srt = out.sort_values(["doc_id", "start", "end"], kind="stable")
        same_doc = srt["doc_id"].to_numpy()[1:] == srt["doc_id"].to_numpy()[:-1]
        big = int(srt["end"].max()) + 1
        prev_end = np.maximum.accumulate(_segment_key(srt["doc_id"].to_numpy(), srt["end"].to_numpy(), big))[:-1]
        cur_key = _segment_key(srt["doc_id"].to_numpy(), srt["start"].to_numpy(), big)[1:]
        over = same_doc & (cur_key < prev_end)
        if over.any():
            rows = srt.iloc[np.flatnonzero(np.r_[False, over])]
            problems.append(InputProblem(
                f"{int(over.sum())} chunks overlap an earlier chunk of their document, and disjoint=True says "
                "the chunking has none", "check the offsets, or pass disjoint=False for overlapping windows",
                rows.head(5).to_string()))
    if problems:
        raise EvalframeInputError(what, problems)
    return out


def _segment_key(segment, values: np.ndarray, big: int) -> np.ndarray:
    """``values`` (each < ``big``) shifted so that each segment's (in sorted order) lie
    above every earlier segment's: a running maximum then restarts at each segment.
    Keys of two columns compare across them only when built with the same ``big``."""
    seg = np.asarray(segment)
    code = _segment_codes(seg) if len(seg) else np.zeros(0, np.int64)
    return code.astype(np.int64) * np.int64(big) + values


def merge_spans(spans: pd.DataFrame) -> pd.DataFrame:
    """Overlapping spans of one (question, document, label) merged into one (spans that
    only touch stay apart); sorted by question, document, label, start.

    Examples
    --------
    >>> import pandas as pd
    >>> s = pd.DataFrame({"query_id": ["q"] * 3, "doc_id": ["d"] * 3, "start": [0, 5, 20],
    ...                   "end": [10, 12, 30], "relevance": [1, 1, 1]})
    >>> merge_spans(s)[["start", "end"]].values.tolist()
    [[0, 12], [20, 30]]
    """
    cols = ["query_id", "doc_id", "relevance"]
    srt = spans.sort_values(cols + ["start"], kind="stable").reset_index(drop=True)
    if not len(srt):
        return srt[cols[:2] + ["start", "end", "relevance"]]
    code = _segment_codes(*(srt[c].to_numpy() for c in cols))
    big = int(srt["end"].max()) + 1
    key_start = _segment_key(code, srt["start"].to_numpy(), big)
    reach = np.r_[np.iinfo(np.int64).min, np.maximum.accumulate(_segment_key(code, srt["end"].to_numpy(), big))[:-1]]
    first = np.flatnonzero(np.r_[True, code[1:] != code[:-1]] | (key_start >= reach))
    out = srt.iloc[first][cols[:2] + ["start"]].reset_index(drop=True)
    out["end"] = np.maximum.reduceat(srt["end"].to_numpy(), first)
    out["relevance"] = srt["relevance"].to_numpy()[first]
    return out


def _segment_codes(*columns: np.ndarray) -> np.ndarray:
    """0, 1, 2...: a new code wherever any of the (sorted) columns changes."""
    change = np.zeros(len(columns[0]), dtype=bool)
    change[0] = True
    for c in columns:
        change[1:] |= c[1:] != c[:-1]
    return np.cumsum(change) - 1


def _span_chunk_pairs(span_doc: np.ndarray, chunk_doc: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every (span, chunk of the span's document) pair as two index arrays: the chunks
    sorted by document once, each span's chunks a contiguous range found by search."""
    order = np.argsort(chunk_doc, kind="stable")
    srt = chunk_doc[order]
    lo = np.searchsorted(srt, span_doc, "left")
    n = np.searchsorted(srt, span_doc, "right") - lo
    span = np.repeat(np.arange(len(span_doc)), n)
    within = np.arange(len(span)) - np.repeat(np.cumsum(n) - n, n)
    return span, order[np.repeat(lo, n) + within]


def _overlap_pairs(span_doc, s, e, chunk_doc, cs, ce) -> tuple[np.ndarray, np.ndarray]:
    """The (span, chunk) pairs whose ranges may overlap, as two index arrays: the chunks
    sorted by (document, start) once; a span's candidates are the chunks of its document
    starting in [start - (longest chunk of the document) + 1, end), a contiguous range
    found by search, so a document of many chunks costs only the chunks near each span."""
    if not len(span_doc) or not len(chunk_doc):
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    n_docs = int(max(chunk_doc.max(), span_doc.max())) + 1
    longest = np.zeros(n_docs, dtype=np.int64)
    np.maximum.at(longest, chunk_doc, ce - cs)
    big = np.int64(int(max(ce.max(), e.max())) + 1)
    key = chunk_doc * big + cs
    order = np.argsort(key, kind="stable")
    srt = key[order]
    lo = np.searchsorted(srt, span_doc * big + np.maximum(s - longest[span_doc] + 1, 0), "left")
    hi = np.searchsorted(srt, span_doc * big + e, "left")
    n = np.maximum(hi - lo, 0)
    span = np.repeat(np.arange(len(span_doc)), n)
    within = np.arange(len(span)) - np.repeat(np.cumsum(n) - n, n)
    return span, order[np.repeat(lo, n) + within]


def doc_codes(chunks: pd.DataFrame, spans: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, int]:
    """One integer code per parent document, shared by a chunk table and a span golden
    set: (each chunk's, each span's, how many codes)."""
    codes, names = pd.factorize(pd.concat([chunks["doc_id"].reset_index(drop=True),
                                           spans["doc_id"].reset_index(drop=True)], ignore_index=True))
    codes = codes.astype(np.int64)
    return codes[:len(chunks)], codes[len(chunks):], len(names)


#: ``min_overlap=``: a share of a chunk
_MIN_OVERLAP = Satisfies(Interval(numbers.Real, 0, 1).accepts, "a number in [0, 1] (0: any overlap)")


def check_min_overlap(min_overlap, caller: str) -> float:
    return float(check(caller, "min_overlap", min_overlap, _MIN_OVERLAP))


def span_labels(spans, chunks, *, min_overlap: float = MIN_OVERLAP, columns: Mapping[str, str] | None = None
                ) -> pd.DataFrame:
    """The chunk-level golden set a chunking gets from a span golden set.

    Parameters
    ----------
    spans : DataFrame
        A span golden set (see :func:`check_spans`).
    chunks : DataFrame
        A chunk table (see :func:`check_chunks`).
    min_overlap : float in [0, 1]
        A chunk takes the largest label among the spans (overlapping spans of one
        question, document and label merged) whose overlap with it is at least
        ``min_overlap`` x min(span length, chunk length) characters (default 0.5: half
        of the shorter one); 0 means any overlap of one character or more.
    columns : dict, optional
        ``{your name: canonical name}`` for both tables.

    Returns
    -------
    DataFrame
        ``query_id, doc_id, relevance``: ``doc_id`` is the chunk id.  Every chunk of a
        document the question has spans in has a row; the chunks that meet no span's
        rule get label 0 (the annotator read that document).  Sorted by question, then
        by the chunk table's row order.

    Raises
    ------
    EvalframeInputError
        A bad table (see :func:`check_spans`, :func:`check_chunks`), or a chunk table
        whose documents match no span's document.

    Examples
    --------
    >>> import pandas as pd
    >>> spans = pd.DataFrame({"query_id": ["q1"], "doc_id": ["d1"], "start": [40], "end": [80]})
    >>> chunks = pd.DataFrame({"chunk_id": ["d1#0", "d1#1", "d1#2"], "doc_id": ["d1"] * 3,
    ...                        "start": [0, 50, 100], "end": [50, 100, 150]})
    >>> span_labels(spans, chunks)
      query_id doc_id  relevance
    0       q1   d1#0          0
    1       q1   d1#1          1
    2       q1   d1#2          0
    """
    min_overlap = check_min_overlap(min_overlap, "span_labels")
    spans = check_spans(spans, columns=columns)
    chunks = check_chunks(chunks, columns=columns)
    return chunk_labels(merge_spans(spans), chunks, min_overlap)


def check_chunk_documents(chunks: pd.DataFrame, merged: pd.DataFrame,
                          codes: tuple[np.ndarray, np.ndarray, int] | None = None) -> None:
    """An input error when no chunk of a chunk table has a document of the span golden
    set (the two tables name documents differently); ``codes``: their :func:`doc_codes`."""
    chunk_doc, span_doc, _ = doc_codes(chunks, merged) if codes is None else codes
    if not np.isin(chunk_doc, span_doc).any():
        raise EvalframeInputError("chunk table", [InputProblem(
            "no chunk's document is a document of the span golden set "
            f"(chunk documents e.g. {chunks['doc_id'].head(3).tolist()}, "
            f"span documents e.g. {merged['doc_id'].head(3).tolist()})",
            "check that both tables name parent documents the same way (the chunk table's doc_id is the "
            "parent document, chunk_id the chunk)")])


def chunk_labels(merged: pd.DataFrame, chunks: pd.DataFrame, min_overlap: float,
                 codes: tuple[np.ndarray, np.ndarray, int] | None = None, *, check: bool = True) -> pd.DataFrame:
    """:func:`span_labels` of spans already merged (:func:`merge_spans`) and a checked
    chunk table; ``codes``: their :func:`doc_codes`, when known; ``check=False``: the
    tables' documents were checked (:func:`check_chunk_documents`) on the whole input, and
    ``merged`` and ``chunks`` are the part of them one partition reads."""
    import pyarrow as pa
    codes = doc_codes(chunks, merged) if codes is None else codes
    chunk_doc, span_doc, _ = codes
    if check:
        check_chunk_documents(chunks, merged, codes)
    if "doc_length" in chunks:  # the documents' known lengths: no span may end beyond its own
        known = np.full(max(int(chunk_doc.max(initial=-1)), int(span_doc.max(initial=-1))) + 1, -1, dtype=np.int64)
        np.maximum.at(known, chunk_doc, chunks["doc_length"].to_numpy())
        beyond = (known[span_doc] >= 0) & (merged["end"].to_numpy() > known[span_doc])
        if beyond.any():
            raise EvalframeInputError("span golden set", [InputProblem(
                f"{int(beyond.sum())} spans end beyond their document's length (the chunk table's doc_length)",
                "check the offsets: a span counts characters of the parent document's text, end exclusive",
                merged.loc[beyond].head(5).to_string())])
    q, qnames = pd.factorize(merged["query_id"])
    q = q.astype(np.int64)
    s, e = merged["start"].to_numpy(), merged["end"].to_numpy()
    cs, ce = chunks["start"].to_numpy(), chunks["end"].to_numpy()
    # every chunk of a document a question has spans in: label 0 (the annotator read it)
    qd = np.unique(q * (int(max(chunk_doc.max(initial=0), span_doc.max(initial=0))) + 1) + span_doc,
                   return_index=True)[1]
    zq, zc = _span_chunk_pairs(span_doc[qd], chunk_doc)
    zq = q[qd][zq]
    # the chunks a span's evidence reaches: its label
    sp, ch = _overlap_pairs(span_doc, s, e, chunk_doc, cs, ce)
    overlap = np.minimum(e[sp], ce[ch]) - np.maximum(s[sp], cs[ch])
    hit = (overlap > 0) & (overlap >= min_overlap * np.minimum(e[sp] - s[sp], ce[ch] - cs[ch]) - 1e-9)
    all_q = np.concatenate([zq, q[sp[hit]]])
    all_c = np.concatenate([zc, ch[hit]])
    label = np.concatenate([np.zeros(len(zq), np.int64), merged["relevance"].to_numpy()[sp[hit]].astype(np.int64)])
    # one row per (question, chunk), its largest label; sorted by question, then chunk order
    key = all_q * len(chunks) + all_c
    order = np.argsort(key, kind="stable")
    starts = np.flatnonzero(np.r_[True, key[order][1:] != key[order][:-1]]) if len(order) else order
    pick = order[starts]
    if len(order):
        label[pick] = np.maximum.reduceat(label[order], starts)  # its largest label
    def strings(values, at):  # an id column taken by Arrow (no Python string per row)
        arr = pa.array(values) if isinstance(values, pd.Series) else pa.array(np.asarray(values, dtype=object))
        arr = arr.combine_chunks() if isinstance(arr, pa.ChunkedArray) else arr
        return pd.Series(pd.arrays.ArrowStringArray(arr.cast(pa.large_string()).take(pa.array(at)))
                         if hasattr(pd.arrays, "ArrowStringArray") else arr.take(pa.array(at)).to_pylist())
    return pd.DataFrame({"query_id": strings(pd.Series(np.asarray(qnames, dtype=object)), all_q[pick]),
                         "doc_id": strings(chunks["chunk_id"], all_c[pick]),
                         "relevance": label[pick].astype(np.int64)})


# ---------------------------------------------------------------- runs that carry offsets
def split_run_offsets(run: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame] | None:
    """A run whose rows carry chunk offsets (``start``/``end`` and the parent document,
    as many RAG logs store node metadata): the run with a chunk id per row, and the chunk
    table ``[system,] chunk_id, doc_id, start, end``; None for a run without offsets.

    The parent document is a ``parent_id``-like column (``parent_id``, ``document_id``,
    ``page_id``...) when the run has one, and then the chunk id is its ``chunk_id``-like
    column or else its ``doc_id``; without a parent column, ``doc_id`` is the parent and
    the chunk id its ``chunk_id``-like column or else the row's document and range,
    ``"<doc>[start:end]"``.
    """
    if not is_span_table(run):
        return None
    s = _find(run, START_NAMES, "start", None)
    e = _find(run, END_NAMES, "end", None)
    chunk = _find(run, CHUNK_NAMES, "chunk_id", None)
    # the parent: a parent_id-like column beside doc_id (doc_id is then the chunk), else doc_id
    other = _find(run, tuple(n for n in PARENT_NAMES if n != "doc_id"), "parent_id", None,
                  exclude=tuple(c for c in (chunk,) if c is not None))
    doc_col = _find(run, ("doc_id",), "doc_id", None)
    if other is not None and doc_col is not None and chunk is None:
        parent, chunk = other, doc_col
    else:
        parent = other if other is not None else doc_col
    problems: list[InputProblem] = []
    start, end = _offsets(run, s, "start", problems), _offsets(run, e, "end", problems)
    if problems:
        raise EvalframeInputError("run", problems)
    doc = ids_to_str(run[parent]).reset_index(drop=True)
    if chunk is not None:
        cid = ids_to_str(run[chunk]).reset_index(drop=True)
    else:
        cid = doc.astype(str) + "[" + pd.Series(start).astype(str) + ":" + pd.Series(end).astype(str) + "]"
    table = pd.DataFrame({"chunk_id": cid.to_numpy(dtype=object), "doc_id": doc.to_numpy(dtype=object),
                          "start": start, "end": end})
    sys_col = _find(run, ALIASES["system"], "system", None)
    if sys_col is not None:
        table.insert(0, "system", run[sys_col].astype(str).to_numpy())
    drop = [c for c in (s, e, parent, chunk) if c is not None]
    rest = run.drop(columns=drop).reset_index(drop=True)
    rest.insert(0, "doc_id", cid.to_numpy(dtype=object))
    return rest, table


# ---------------------------------------------------------------- token counts by id
def with_tokens(run: pd.DataFrame, tokens, *, columns: Mapping[str, str] | None = None) -> pd.DataFrame:
    """A run (already read) with a ``tokens`` column from ``tokens=``: a two-column table
    (id, count; or columns named ``chunk_id``/``doc_id`` and ``tokens``), a dict or a
    Series of id -> token count.  Every retrieved id needs a count (how many lack one,
    examples); a run that has its own ``tokens`` column is an error (say which)."""
    if isinstance(tokens, pd.Series):
        ids, counts = tokens.index.to_numpy(), tokens.to_numpy()
    elif isinstance(tokens, Mapping):
        ids, counts = np.array(list(tokens.keys()), dtype=object), np.array(list(tokens.values()))
    elif isinstance(tokens, pd.DataFrame):
        t = apply_columns(tokens, columns)
        cid = _find(t, CHUNK_NAMES + PARENT_NAMES, "chunk_id", None)
        cnt = _find(t, ALIASES["tokens"], "tokens", None, exclude=(cid,))
        if cid is None or cnt is None:
            if t.shape[1] != 2:
                raise EvalframeInputError("tokens", [InputProblem(
                    f"cannot tell the id and the count columns apart (found {[str(c) for c in t.columns]})",
                    "pass two columns (id, tokens), or name them chunk_id and tokens")])
            cid, cnt = t.columns
        ids, counts = t[cid].to_numpy(), t[cnt].to_numpy()
    else:
        raise error(None, "tokens", "a table (id, count), a dict or a Series", type_of(tokens))
    if "tokens" in run.columns:
        raise EvalframeInputError("run", [InputProblem(
            "the run has a tokens column and tokens= gives counts too", "drop one of them")])
    counts = pd.to_numeric(pd.Series(counts), errors="coerce").to_numpy(dtype=float, na_value=np.nan)
    bad = ~np.isfinite(counts) | (counts < 0)
    if bad.any():
        raise EvalframeInputError("tokens", [InputProblem(
            f"{int(bad.sum())} token counts are missing or negative", "give every id a count >= 0")])
    lookup = pd.Series(counts, index=ids_to_str(pd.Series(ids)).to_numpy(dtype=object))
    lookup = lookup[~lookup.index.duplicated()]
    got = lookup.reindex(run["doc_id"].to_numpy(dtype=object)).to_numpy()
    missing = np.isnan(got)
    if missing.any():
        lacking = pd.unique(run["doc_id"].to_numpy(dtype=object)[missing])
        raise EvalframeInputError("tokens", [InputProblem(
            f"{len(lacking)} retrieved ids have no token count (e.g. {list(lacking[:5])})",
            "give every retrieved id its count in tokens=")])
    return run.assign(tokens=got)


# ---------------------------------------------------------------- the rows span measures read
@dataclass(frozen=True, eq=False)
class SpanRows:
    """Chunk offsets of each ranked row and the evidence of each question, as the span
    measures read them (attached to the ranked table by the engine).

    Attributes
    ----------
    doc, start, end : int64 arrays (N,)
        Per ranked row: its chunk's parent document (a code shared with ``ev_doc``)
        and character range.
    ev_query : int64 array (E,)
        Per evidence span (merged per question, document and label): its question
        (the ranked table's question index), sorted.
    ev_doc, ev_start, ev_end, ev_label : int64 arrays (E,)
    n_docs : int
        Number of document codes.
    """

    doc: np.ndarray
    start: np.ndarray
    end: np.ndarray
    ev_query: np.ndarray
    ev_doc: np.ndarray
    ev_start: np.ndarray
    ev_end: np.ndarray
    ev_label: np.ndarray
    n_docs: int

    def keep_rows(self, keep: np.ndarray) -> "SpanRows":
        return SpanRows(self.doc[keep], self.start[keep], self.end[keep], self.ev_query, self.ev_doc,
                        self.ev_start, self.ev_end, self.ev_label, self.n_docs)


def union_lengths(owner: np.ndarray, segment: np.ndarray, start: np.ndarray, end: np.ndarray,
                  n_owners: int) -> np.ndarray:
    """Characters covered by each owner's intervals (overlaps counted once).

    Entries are sorted by (segment, start); a segment (one owner's intervals in one
    document) belongs to one owner.  One running maximum of the ends, restarted at each
    segment, gives each interval the characters it adds past those before it.

    Examples
    --------
    >>> import numpy as np
    >>> union_lengths(np.array([0, 0, 0, 1]), np.array([0, 0, 1, 2]), np.array([0, 5, 0, 3]),
    ...               np.array([10, 12, 4, 4]), 2).tolist()
    [16.0, 1.0]
    """
    if not len(segment):
        return np.zeros(n_owners)
    new = np.r_[True, segment[1:] != segment[:-1]]
    code = (np.cumsum(new) - 1).astype(np.int64)
    big = np.int64(int(end.max()) + 1)
    reach = np.maximum.accumulate(code * big + end)
    before = np.r_[np.int64(-1), reach[:-1]] - code * big  # the segment's furthest end so far (< 0: none)
    added = end - np.maximum(start, before)
    return np.bincount(owner, weights=np.maximum(added, 0), minlength=n_owners)


def chunk_offsets(chunks: pd.DataFrame, chunk_ids, what: str = "chunk table", *,
                  fingerprint: np.ndarray | None = None) -> np.ndarray:
    """Each chunk id's row in a chunk table (ids: Arrow strings or an array; their
    :func:`~evalframe._id_bytes.fingerprints` when known); ids the table lacks are an input
    error (how many, examples).

    A probe of 64-bit fingerprints into the table's, every match confirmed on the
    strings (Arrow's hash of the strings when two chunk ids share a fingerprint)."""
    import pyarrow as pa
    from . import _arrow_compute as pc
    ids = chunk_ids if isinstance(chunk_ids, (pa.Array, pa.ChunkedArray)) else pa.array(chunk_ids, pa.large_string())
    ids = ids if ids.type == pa.large_string() else ids.cast(pa.large_string())
    table_ids = pa.array(chunks["chunk_id"].to_numpy(dtype=object), pa.large_string()) \
        if not isinstance(chunks["chunk_id"].dtype, pd.ArrowDtype) and chunks["chunk_id"].dtype == object \
        else pa.array(chunks["chunk_id"]).cast(pa.large_string())
    table_fp = pd.Index(fingerprints(pa.chunked_array([table_ids])))
    if table_fp.is_unique:
        fp = fingerprints(ids if isinstance(ids, pa.ChunkedArray) else pa.chunked_array([ids])) \
            if fingerprint is None else fingerprint
        where = table_fp.get_indexer(fp).astype(np.int64)
        hit = np.flatnonzero(where >= 0)
        same = pc.equal(ids.take(pa.array(hit)), table_ids.take(pa.array(where[hit])))
        where[hit[~np.asarray(same.to_numpy(zero_copy_only=False), dtype=bool)]] = -1
    else:
        where = np.asarray(pc.index_in(ids, value_set=table_ids).fill_null(-1).to_numpy(), dtype=np.int64)
    chunk_ids = ids
    if (where < 0).any():
        missing = pd.unique(np.asarray(chunk_ids.take(pa.array(np.flatnonzero(where < 0))).to_pylist(), dtype=object))
        raise EvalframeInputError(what, [InputProblem(
            f"{len(missing)} chunk ids the run retrieves are not in the chunk table (e.g. {list(missing[:5])})",
            "give every retrieved chunk its document and offsets (a re-chunked run needs its own chunk "
            "table: chunks={system: table})")])
    return where


def chunks_in_run(chunks, systems: list[str], what: str = "chunks") -> dict[str, object]:
    """Each system's chunk table source from ``chunks=``: one table for all, or a dict
    ``{system: table}`` naming every system."""
    if isinstance(chunks, Mapping):
        missing = [s for s in systems if s not in chunks]
        if missing:
            raise EvalframeInputError(what, [InputProblem(
                f"chunks= names no chunk table for the systems {missing[:5]} (it names {list(chunks)[:5]})",
                "give every system of the run its chunk table: chunks={system: table}")])
        return {s: chunks[s] for s in systems}
    return {s: chunks for s in systems}


# ---------------------------------------------------------------- re-chunking a golden set
@dataclass(frozen=True)
class Rechunked:
    """What :func:`rechunk` returns.

    Attributes
    ----------
    qrels : DataFrame
        The golden set on the new chunking: ``query_id, doc_id, relevance``, plus the
        rows of documents the old chunk table does not name, kept as they are.
    drift : DataFrame
        One row per labelled old chunk: ``query_id, doc_id`` (the old chunk id),
        ``relevance``, ``status`` (``kept``, ``merged``, ``split``, ``moved``,
        ``orphaned``), ``new_ids`` (the new chunks that took its label, comma-separated),
        ``conflicting`` (True when the new chunk it merged into received several
        different labels, the largest kept).
    """

    qrels: pd.DataFrame
    drift: pd.DataFrame

    def counts(self) -> pd.Series:
        """Old labelled chunks per status."""
        return self.drift["status"].value_counts().reindex(_STATUSES, fill_value=0)


_STATUSES = ["kept", "merged", "split", "moved", "orphaned"]


def rechunk(qrels, old_chunks, new_chunks, *, min_overlap: float = MIN_OVERLAP,
            columns: Mapping[str, str] | None = None) -> Rechunked:
    """Carry a chunk-level golden set onto a new chunking through the chunks' offsets.

    Parameters
    ----------
    qrels : DataFrame
        The chunk-level golden set (``query_id, doc_id, relevance``; ``doc_id`` an old
        chunk id).
    old_chunks, new_chunks : DataFrame
        Chunk tables (:func:`check_chunks`) of the old and the new chunking; with a
        ``text`` column in both, a chunk whose text moved to other offsets is matched
        by its content.
    min_overlap : float in [0, 1]
        The overlap rule of :func:`span_labels` for split chunks (default 0.5).

    Returns
    -------
    Rechunked
        ``qrels`` and ``drift``.  Each labelled old chunk is:

        - ``kept``: a new chunk has its document and offsets;
        - ``merged``: it lies inside one larger new chunk (several labelled old chunks
          in one new chunk: the largest label, and ``conflicting`` when they differ);
        - ``split``: it spreads over several new chunks; its label goes to those
          that meet the overlap rule (none may: then it is lost, and the status
          says so through an empty ``new_ids``);
        - ``moved``: not at its offsets, but a new chunk has exactly its text: for a chunk
          the offsets call split (an edited document), a chunk of its own document; for
          one they call orphaned, of any document (a renamed one); its label goes to that
          chunk only.  A chunk inside a larger new chunk stays merged;
        - ``orphaned``: its document, or its range, is in no new chunk.

        Labels of chunks the old table does not name are kept as they are (they may
        be pages or other units) and counted as ``orphaned`` when the new table does
        not name them either.

    Examples
    --------
    >>> import pandas as pd
    >>> old = pd.DataFrame({"chunk_id": ["a", "b"], "doc_id": ["d", "d"], "start": [0, 50], "end": [50, 100]})
    >>> new = pd.DataFrame({"chunk_id": ["x"], "doc_id": ["d"], "start": [0], "end": [100]})
    >>> q = pd.DataFrame({"query_id": ["q", "q"], "doc_id": ["a", "b"], "relevance": [1, 2]})
    >>> r = rechunk(q, old, new)
    >>> r.qrels
      query_id doc_id  relevance
    0        q      x          2
    >>> r.drift[["doc_id", "status", "new_ids", "conflicting"]]
      doc_id  status new_ids  conflicting
    0      a  merged       x         True
    1      b  merged       x         True
    """
    min_overlap = check_min_overlap(min_overlap, "rechunk")
    if not isinstance(qrels, pd.DataFrame):
        raise error("rechunk", "qrels", "a DataFrame (read files with evalframe.read_qrels)", type_of(qrels))
    golden = clean_qrels(qrels, columns=columns)[["query_id", "doc_id", "relevance"]]
    old = check_chunks(old_chunks, columns=columns, what="old chunk table")
    new = check_chunks(new_chunks, columns=columns, what="new chunk table")
    where = pd.Index(old["chunk_id"]).get_indexer(golden["doc_id"].to_numpy(dtype=object))
    known = where >= 0
    lab = golden.loc[known].reset_index(drop=True)
    o = old.iloc[where[known]].reset_index(drop=True)
    # the labelled old chunks as spans of their documents
    spans = pd.DataFrame({"query_id": lab["query_id"].to_numpy(), "doc_id": o["doc_id"].to_numpy(),
                          "start": o["start"].to_numpy(), "end": o["end"].to_numpy(),
                          "relevance": lab["relevance"].to_numpy(), "old": lab["doc_id"].to_numpy(),
                          "row": np.arange(len(lab))})
    pairs = spans.merge(new[["chunk_id", "doc_id", "start", "end"]], on="doc_id", suffixes=("", "_n"))
    s, e = pairs["start"].to_numpy(), pairs["end"].to_numpy()
    ns, ne = pairs["start_n"].to_numpy(), pairs["end_n"].to_numpy()
    overlap = np.minimum(e, ne) - np.maximum(s, ns)
    meets = (overlap > 0) | ((s == ns) & (e == ne))  # an empty chunk (a title) meets its twin only
    pairs = pairs.loc[meets].reset_index(drop=True)
    overlap = overlap[meets]
    s, e = pairs["start"].to_numpy(), pairs["end"].to_numpy()
    ns, ne = pairs["start_n"].to_numpy(), pairs["end_n"].to_numpy()
    exact = (s == ns) & (e == ne)
    inside = (ns <= s) & (ne >= e)
    hit = overlap >= min_overlap * np.minimum(e - s, ne - ns) - 1e-9
    pairs["exact"], pairs["inside"], pairs["hit"] = exact, inside, hit
    row = pairs["row"].to_numpy()
    n = len(spans)
    n_over = np.bincount(row, minlength=n)
    any_exact = np.bincount(row, weights=exact, minlength=n) > 0
    any_inside = np.bincount(row, weights=inside, minlength=n) > 0
    status = np.full(n, "orphaned", dtype=object)
    status[n_over >= 1] = "split"
    status[(n_over >= 1) & any_inside] = "merged"
    status[any_exact] = "kept"
    taken = pairs.loc[pairs["hit"].to_numpy() | pairs["inside"].to_numpy(), ["query_id", "row", "chunk_id", "relevance"]]
    moved_rows = pd.DataFrame(columns=["query_id", "row", "chunk_id", "relevance"])
    if "text" in old.columns and "text" in new.columns:
        # not at its offsets, but a new chunk holds exactly its text: moved.  A chunk spread over
        # new chunks (an edited document) is looked for in its own document; one found nowhere
        # (orphaned: a renamed document), in any; a chunk inside a larger new one stays merged.
        lost = np.flatnonzero((status == "split") | (status == "orphaned"))
        in_doc = new.drop_duplicates(["doc_id", "text"]).set_index(["doc_id", "text"])["chunk_id"]
        anywhere = new.drop_duplicates("text").set_index("text")["chunk_id"]
        found = in_doc.reindex(pd.MultiIndex.from_arrays(
            [o["doc_id"].to_numpy()[lost], o["text"].to_numpy()[lost]])).to_numpy()
        elsewhere = pd.isna(found) & (status[lost] == "orphaned")
        found[elsewhere] = anywhere.reindex(o["text"].to_numpy()[lost][elsewhere]).to_numpy()
        ok = pd.notna(found)
        status[lost[ok]] = "moved"
        taken = taken.loc[~np.isin(taken["row"].to_numpy(), lost[ok])]
        moved_rows = pd.DataFrame({"query_id": spans["query_id"].to_numpy()[lost[ok]], "row": lost[ok],
                                   "chunk_id": found[ok], "relevance": spans["relevance"].to_numpy()[lost[ok]]})
    taken = pd.concat([taken, moved_rows], ignore_index=True)
    taken["relevance"] = taken["relevance"].astype(np.int64)
    # one label per (question, new chunk): the largest; conflicting when several differ
    per_new = taken.groupby(["query_id", "chunk_id"], sort=False)["relevance"]
    spread = per_new.transform("nunique").to_numpy() > 1
    taken["conflict"] = spread
    conflict_rows = np.zeros(n, dtype=bool)
    conflict_rows[taken.loc[spread, "row"].to_numpy(dtype=np.int64)] = True
    new_ids = taken.groupby("row", sort=False)["chunk_id"].agg(lambda x: ",".join(map(str, x)))
    labelled = per_new.max().reset_index()
    out = pd.DataFrame({"query_id": labelled["query_id"].to_numpy(), "doc_id": labelled["chunk_id"].to_numpy(),
                        "relevance": labelled["relevance"].to_numpy(dtype=np.int64)})
    untouched = golden.loc[~known]  # units the old table does not name: kept as they are
    out = pd.concat([out, untouched], ignore_index=True)
    out = out.groupby(["query_id", "doc_id"], sort=False, as_index=False)["relevance"].max()  # one label a pair
    drift = pd.DataFrame({"query_id": spans["query_id"].to_numpy(), "doc_id": spans["old"].to_numpy(),
                          "relevance": spans["relevance"].to_numpy(), "status": status,
                          "new_ids": new_ids.reindex(np.arange(n)).fillna("").to_numpy(dtype=object),
                          "conflicting": conflict_rows})
    if (~known).any():
        other = golden.loc[~known]
        in_new = other["doc_id"].isin(new["chunk_id"]).to_numpy()
        drift = pd.concat([drift, pd.DataFrame({
            "query_id": other["query_id"].to_numpy(), "doc_id": other["doc_id"].to_numpy(),
            "relevance": other["relevance"].to_numpy(),
            "status": np.where(in_new, "kept", "orphaned").astype(object),
            "new_ids": np.where(in_new, other["doc_id"].to_numpy(dtype=object), ""), "conflicting": False})],
            ignore_index=True)
    return Rechunked(out.reset_index(drop=True), drift)
