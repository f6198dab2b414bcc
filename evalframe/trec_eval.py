"""``evalframe trec-eval``: a drop-in trec_eval (version 10) on evalframe's engine.

Same flags, same measure names and parameter syntax, same output, byte for
byte::

    evalframe trec-eval [-q] [-c] [-n] [-J] [-M N] [-l N] [-N N] [-m MEASURE[.PARAMS]] ... QRELS RUN

``RUN`` may be ``-`` (standard input).  The files are read by
:func:`evalframe.read_qrels` / :func:`evalframe.read_run`, ranked and judged by
:func:`evalframe.ranking.judge` and measured by
:func:`evalframe.measures.compute`; this module only translates trec_eval's
command line into evalframe measures and prints trec_eval's format.

Flags map onto evalframe's conventions: ``-c`` is ``missing="zero"`` (default
``missing="drop"``), ``-M`` is ``depth``, ``-l`` is ``rel``, ``-J`` evaluates
the condensed (judged-only) lists.  Differences from trec_eval 10: a question
of the golden set that the run does not answer is left out without ``-c``
(trec_eval 10 stops with "result qid not found"; trec_eval 9 and the manual
leave it out); the preference (``-R prefs``), ``qrels_jg`` and z-score
(``-Z``) modes and the measures ``dcg``, ``ideal_dcg`` and ``yaap`` are not
provided; ``--memory-budget SIZE`` (evalframe's) bounds the memory a large run
file takes (it is read a block of whole questions at a time).  Files are read as
trec_eval reads them (ids as bytes, through latin-1; a first line is data unless
it cannot be; indented ``#`` comments in a run; C's ``isspace`` separators); the behaviours of trec_eval 10 not copied
are listed, with the reason, in the README ("trec_eval 9 vs 10").
"""
from __future__ import annotations

__all__ = ["main", "TREC_MEASURES", "NICKNAMES"]

import gc
import getopt
import os
import re
import sys
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

from ._validation import error

_LONG_CUTS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
_ELEVEN = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
_RPREC_MULT = (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)


@dataclass(frozen=True)
class TrecMeasure:
    """One of trec_eval's measures: how its parameters are read and printed,
    and which evalframe measures compute it."""

    name: str
    kind: str  # single | cut_long | cut_double | p_double | p_pair | runid | num_q | relstring
    build: Callable | None = None  # (values, opts) -> evalframe measure name(s)
    default: tuple = ()
    per_query: bool = True
    integer: bool = False  # printed as a count


def _g(x: float) -> str:
    return repr(float(x))


def _gains_text(pairs, name: str = "ndcg") -> str:
    """trec_eval's ``level=gain`` pairs as evalframe's gains parameter (integer
    levels only, as trec_eval's setup_gains).

    A level given twice: trec_eval ranks with the entry found first after
    sorting the levels by gain and builds the ideal ranking with the entry given
    first.  When the first given gain is the smallest (by 1 or more, trec_eval's
    comparator truncates gain differences to integers) both are the first, which
    is kept; otherwise the two disagree and the parameters are refused."""
    levels: dict[int, list[float]] = {}
    for k, v in pairs:
        if re.fullmatch(r"[+-]?[0-9]+", k):
            levels.setdefault(int(k), []).append(v)
    for level, gains in levels.items():
        first = gains[0]
        if any(g != first and g - first < 1 for g in gains[1:]):
            text = ",".join(f"{k}={v:g}" for k, v in pairs)
            raise ValueError(
                f"{name}: each gain level must be given once, got {text!r} (level {level} twice: "
                f"trec_eval 10 ranks with one gain and builds the ideal ranking with the other)")
    kept = [(k, g[0]) for k, g in levels.items()]
    return "(" + "".join(f"({k}, {_g(v)}), " for k, v in kept) + ")" if kept else ""


def _with_gains(base: str, pairs, extra: str = "", name: str = "ndcg") -> str:
    g = _gains_text(pairs, name) if pairs else ""
    params = [p for p in (extra, f"gains={g}" if g else "") if p]
    if not params:
        return base
    if base.endswith(")"):
        return base[:-1] + "," + ",".join(params) + ")"
    return base + "(" + ",".join(params) + ")"


def _rbp(residual: bool):
    def build(pairs, opts):
        p = next((v for k, v in pairs if k == "p"), 0.9)
        extra = f"p={_g(p)}" + (",residual=True" if residual else "")
        return _with_gains("RBP", [] if residual else pairs, extra, "rbp")
    return build


@dataclass(frozen=True)
class Derived:
    """A trec_eval value computed here from evalframe measures (``inputs``, by
    name) with trec_eval's own arithmetic: ``fn(*columns) -> values``."""

    inputs: tuple[str, ...]
    fn: Callable


def _setf(vals, opts):
    """set_F.x is (x + 1) P R / (x P + R) with x as given (trec_eval's m_set_F.c):
    evalframe's SetF(beta=sqrt(x)) squares beta back, and sqrt(0.5)**2 is
    0.5000000000000001, which can move the 4th decimal."""
    x = vals[0] if vals else 1.0
    if x < 0:
        raise error("set_F", "the parameter", "a float >= 0", x)

    def fn(num_ret, num_rel, num_rel_ret):
        with np.errstate(divide="ignore", invalid="ignore"):
            P = num_rel_ret / num_ret
            R = num_rel_ret / num_rel
            f = (x + 1.0) * P * R / (x * P + R)
        return np.where(num_rel_ret > 0, f, 0.0)
    return Derived(("NumRet", "NumRel", "NumRelRet"), fn)


def _iprec_avg(vals, opts):
    """11pt_avg: the mean of iprec_at_recall at the given levels, summed from the
    last level to the first as trec_eval's m_11pt_avg.c does (IPrecAvg sums from
    the first: the last bit can differ, and with it a rounding half)."""
    def fn(*columns):
        total = np.zeros_like(columns[0])
        for col in reversed(columns):
            total = total + col
        return total / float(len(columns))
    return Derived(tuple(f"IPrec(recall={_g(x)})" for x in vals), fn)


def _utility(vals, opts):
    if len(vals) != 4:
        raise ValueError("utility needs 4 coefficients, e.g. utility.1,-1,0,0")
    w = "(" + ", ".join(_g(v) for v in vals) + ")"
    return f"Utility(weights={w}" + (f",docs={opts['docs']}" if opts["docs"] else "") + ")"


def _single(name: str, **kw) -> TrecMeasure:
    return TrecMeasure(name, "single", build=kw.pop("ef"), **kw)


#: trec_eval's measures, in trec_eval's order (the order it prints them).
TREC_MEASURES: list[TrecMeasure] = [
    TrecMeasure("runid", "runid"),
    TrecMeasure("num_q", "num_q"),
    _single("num_ret", ef="NumRet", integer=True),
    _single("num_rel", ef="NumRel", integer=True),
    _single("num_rel_ret", ef="NumRelRet", integer=True),
    _single("map", ef="AP"),
    _single("gm_map", ef="GMAP", per_query=False),
    _single("Rprec", ef="Rprec"),
    _single("bpref", ef="bpref"),
    _single("recip_rank", ef="RR"),
    TrecMeasure("iprec_at_recall", "cut_double", lambda x, o: f"IPrec(recall={_g(x)})", _ELEVEN),
    TrecMeasure("P", "cut_long", lambda k, o: f"P@{k}", _LONG_CUTS),
    TrecMeasure("relstring", "relstring", default=(10.0,)),
    TrecMeasure("recall", "cut_long", lambda k, o: f"R@{k}", _LONG_CUTS),
    _single("infAP", ef="infAP"),
    _single("gm_bpref", ef="GMbpref", per_query=False),
    TrecMeasure("Rprec_mult", "cut_double", lambda x, o: f"Rprec(mult={_g(x)})", _RPREC_MULT),
    TrecMeasure("utility", "p_double", _utility, (1.0, -1.0, 0.0, 0.0)),
    TrecMeasure("11pt_avg", "p_double", _iprec_avg, _ELEVEN),
    _single("binG", ef="binG"),
    TrecMeasure("G", "p_pair", lambda p, o: _with_gains("G", p, name="G")),
    TrecMeasure("ndcg", "p_pair", lambda p, o: _with_gains("nDCG(gain='linear')", p, name="ndcg")),
    TrecMeasure("ndcg_rel", "p_pair", lambda p, o: _with_gains("nDCGrel", p, name="ndcg_rel")),
    TrecMeasure("Rndcg", "p_pair", lambda p, o: _with_gains("RnDCG", p, name="Rndcg")),
    TrecMeasure("ndcg_cut", "cut_long", lambda k, o: f"nDCG(gain='linear')@{k}", _LONG_CUTS),
    TrecMeasure("map_cut", "cut_long", lambda k, o: f"AP@{k}", _LONG_CUTS),
    TrecMeasure("relative_P", "cut_long", lambda k, o: f"RelP@{k}", _LONG_CUTS),
    TrecMeasure("success", "cut_long", lambda k, o: f"Success@{k}", (1, 5, 10)),
    _single("set_P", ef="SetP"),
    _single("set_relative_P", ef="SetRelP"),
    _single("set_recall", ef="SetR"),
    _single("set_map", ef="SetAP"),
    TrecMeasure("set_F", "p_double", _setf, (1.0,)),
    _single("num_nonrel_judged_ret", ef="NumNonrelJudgedRet", integer=True),
    TrecMeasure("rbp", "p_pair", _rbp(False)),
    TrecMeasure("rbp_resid", "p_pair", _rbp(True)),
    TrecMeasure("unj", "cut_long", lambda k, o: f"Unjudged@{k}", (5, 10, 20)),
]
_BY_NAME = {t.name: t for t in TREC_MEASURES}

#: trec_eval's nicknames for sets of measures.
NICKNAMES: dict[str, tuple[str, ...]] = {
    "official": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map",
                 "Rprec", "bpref", "recip_rank", "iprec_at_recall", "P"),
    "all_trec": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map",
                 "Rprec", "bpref", "recip_rank", "iprec_at_recall", "P", "relstring",
                 "recall", "unj", "rbp", "rbp_resid", "infAP", "gm_bpref",
                 "utility", "11pt_avg", "ndcg", "relative_P", "Rprec_mult", "success",
                 "map_cut", "ndcg_cut", "ndcg_rel", "Rndcg", "binG", "G",
                 "set_P", "set_recall", "set_relative_P", "set_map", "set_F",
                 "num_nonrel_judged_ret"),
    "set": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "utility", "set_P",
            "set_recall", "set_relative_P", "set_map", "set_F"),
}
_NOT_PROVIDED = {"dcg", "ideal_dcg", "yaap", "prefs_num_prefs_poss", "prefs_num_prefs_ful",
                 "prefs_num_prefs_ful_ret", "prefs_simp", "prefs_pair", "prefs_avgjg",
                 "prefs_avgjg_Rnonrel", "prefs_simp_ret", "prefs_pair_ret", "prefs_avgjg_ret",
                 "prefs_avgjg_Rnonrel_ret", "prefs_simp_imp", "prefs_pair_imp", "prefs_avgjg_imp",
                 "map_avgjg", "P_avgjg", "Rprec_mult_avgjg", "all_prefs", "prefs", "qrels_jg"}

USAGE = """Usage: evalframe trec-eval [-h] [-q] {-m measure}* trec_rel_file trec_top_file
   -h: Give full help information, including other options
   -q: In addition to summary evaluation, give evaluation for each query
   -m: calculate and print measures indicated by 'measure'
       ('-m all_trec' prints all measures, '-m official' is default)
"""

HELP = USAGE + """
Options (as trec_eval 10):
   -c       average over every question of the qrels (a question missing from the run scores 0)
   -n       no summary ('all') rows
   -l N     a document is relevant when its label is >= N (default 1)
   -M N     use only the top N documents of each ranking
   -J       evaluate only judged documents (unjudged ones are removed first)
   -N N     number of documents in the collection (for utility)
   -m name[.params]   e.g. P.5,10  ndcg_cut.10  iprec_at_recall..1,.5  ndcg.1=3,2=9
                      utility.2,-1,0,0  Rprec_mult.0.5  relstring.20  set_F.0.5  rbp.p=0.95
evalframe's own:
   --memory-budget SIZE   memory a run may take at once, e.g. 2GiB (default: a quarter of the
                          memory available); a larger run file is evaluated a block of whole
                          questions at a time, with the same output
RUN may be '-' for standard input.  Measures: """ + ", ".join(t.name for t in TREC_MEASURES) + "\n"


class _Usage(Exception):
    pass


# ---------------------------------------------------------------------------
# Parameters, the way trec_eval reads them (atol / atof on comma-separated parts)
# ---------------------------------------------------------------------------

_ATOL = re.compile(r"\s*([+-]?\d+)")
_ATOF = re.compile(r"\s*([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)")


def _atol(s: str) -> int:
    m = _ATOL.match(s)
    return int(m[1]) if m else 0


def _atof(s: str) -> float:
    m = _ATOF.match(s)
    return float(m[1]) if m else 0.0


@dataclass
class _Slot:
    """One printed measure: its trec_eval name and the evalframe measure behind it."""

    name: str
    spec: TrecMeasure
    measure: object = None  # evalframe Measure
    column: int = -1


@dataclass
class _Request:
    slots: list = field(default_factory=list)
    relstring_len: int | None = None
    relstring_name: str = "relstring"
    runid: bool = False
    num_q: bool = False


def _plan(marked: list[str], params: dict[str, str], opts: dict) -> _Request:
    """trec_eval's measure list, in trec_eval's order, as evalframe measures."""
    from .measures import parse_measure as _parse

    def parse_measure(built):
        return built if isinstance(built, Derived) else _parse(built)

    req = _Request()
    for spec in TREC_MEASURES:
        if spec.name not in marked:
            continue
        text = params.get(spec.name)
        if spec.kind == "runid":
            req.runid = True
            req.slots.append(_Slot("runid", spec))
            continue
        if spec.kind == "num_q":
            req.num_q = True
            req.slots.append(_Slot("num_q", spec))
            continue
        if spec.kind == "relstring":
            req.relstring_len = int(_atof(text.split(",")[0])) if text else int(spec.default[0])
            req.relstring_name = f"relstring_{text}" if text else "relstring"
            req.slots.append(_Slot(req.relstring_name, spec))
            continue
        if spec.kind == "single":
            req.slots.append(_Slot(spec.name, spec, parse_measure(spec.build)))
        elif spec.kind == "cut_long":
            cuts = sorted(_atol(p) for p in text.split(",")) if text else list(spec.default)
            if cuts[0] <= 0:
                raise ValueError(f"{spec.name}: cutoffs must be positive (got {text!r})")
            if len(set(cuts)) < len(cuts):
                raise ValueError(f"{spec.name}: duplicate cutoffs in {text!r}")
            for k in cuts:
                req.slots.append(_Slot(f"{spec.name}_{k}", spec, parse_measure(spec.build(k, opts))))
        elif spec.kind == "cut_double":
            cuts = sorted(_atof(p) for p in text.split(",")) if text else list(spec.default)
            if len(set(cuts)) < len(cuts):
                raise ValueError(f"{spec.name}: duplicate cutoffs in {text!r}")
            for x in cuts:
                req.slots.append(_Slot(f"{spec.name}_{x:3.2f}", spec, parse_measure(spec.build(x, opts))))
        elif spec.kind == "p_double":
            vals = [_atof(p) for p in text.split(",")] if text else list(spec.default)
            name = f"{spec.name}_{text}" if text else spec.name
            req.slots.append(_Slot(name, spec, parse_measure(spec.build(vals, opts))))
        elif spec.kind == "p_pair":
            pairs = _pairs(spec.name, text) if text else []
            name = f"{spec.name}_{text}" if text else spec.name
            req.slots.append(_Slot(name, spec, parse_measure(spec.build(pairs, opts))))
    return req


def _pairs(name: str, text: str) -> list[tuple[str, float]]:
    out = []
    for part in text.split(","):
        key, sep, val = part.partition("=")
        if not sep or not key:
            raise ValueError(f"malformed pair parameters in '{text}' (expected name=value,...)")
        out.append((key, _atof(val)))
    return out


def _parse_args(argv: list[str]):
    try:
        optlist, args = getopt.gnu_getopt(argv, "hvqm:cl:nD:JN:M:R:T:oZ:", [
            "help", "version", "query_eval_wanted", "measure=", "complete_rel_info_wanted",
            "level_for_rel=", "nosummary", "Debug_level=", "Judged_docs_only",
            "Number_docs_in_coll=", "Max_retrieved_per_topic=", "Rel_info_format=",
            "Results_format=", "Output_old_results_format=", "Zscore=", "memory-budget="])
    except getopt.GetoptError as exc:
        raise _Usage(str(exc)) from None
    opts = {"q": False, "c": False, "n": False, "J": False, "rel": 1, "depth": None, "docs": 0,
            "help": False, "version": False, "budget": None}
    marked: list[str] = []
    params: dict[str, str] = {}
    for flag, val in optlist:
        if flag in ("-h", "--help"):
            opts["help"] = True
        elif flag in ("-v", "--version"):
            opts["version"] = True
        elif flag in ("-q", "--query_eval_wanted"):
            opts["q"] = True
        elif flag in ("-c", "--complete_rel_info_wanted"):
            opts["c"] = True
        elif flag in ("-n", "--nosummary"):
            opts["n"] = True
        elif flag in ("-J", "--Judged_docs_only"):
            opts["J"] = True
        elif flag in ("-l", "--level_for_rel"):
            opts["rel"] = _atol(val)
        elif flag in ("-M", "--Max_retrieved_per_topic"):
            opts["depth"] = _atol(val)
            if opts["depth"] < 1:
                raise error(None, "-M", "an int >= 1 (documents per question)", val)
        elif flag in ("-N", "--Number_docs_in_coll"):
            opts["docs"] = _atol(val)
        elif flag in ("-R", "--Rel_info_format"):
            if val != "qrels":
                raise ValueError(f"rel_info format {val!r} is not provided (only 'qrels')")
        elif flag in ("-T", "--Results_format"):
            if val != "trec_results":
                raise ValueError(f"results format {val!r} is not provided (only 'trec_results')")
        elif flag == "--memory-budget":
            from .engine.budget import memory_budget
            try:
                opts["budget"] = memory_budget(val)
            except ValueError:
                raise error(None, "--memory-budget", "a size such as 2GiB or 500MB", val) from None
        elif flag in ("-Z", "--Zscore"):
            raise ValueError("-Z (z-scores) is not provided by evalframe trec-eval")
        elif flag in ("-m", "--measure"):
            name, dot, text = val.partition(".")
            if dot and text == "":
                raise _Illegal(val, f"improper measure in parameter '{name}'")
            if name in _NOT_PROVIDED:
                raise _Illegal(val, f"measure '{name}' is not provided by evalframe trec-eval")
            names = NICKNAMES.get(name, (name,))
            for n in names:
                if n not in _BY_NAME:
                    raise _Illegal(val)
                if n not in marked:
                    marked.append(n)
            if dot and name not in params:
                params[name] = text
        # -D (debug level) and -o (obsolete) are accepted and ignored, as in trec_eval
    return opts, marked, params, args


class _Illegal(Exception):
    def __init__(self, arg: str, why: str = ""):
        super().__init__(why)
        self.arg = arg
        self.why = why


# ---------------------------------------------------------------------------
# Evaluation and output
# ---------------------------------------------------------------------------

#: trec_eval compares and prints ids as bytes: reading every file as latin-1 maps
#: each byte to one character (lossless, any bytes, UTF-8 or not, in the same
#: order as strcmp), and the output is encoded back the same way.
_ENCODING = "latin-1"


def _read(qrels_path: str, run_path: str):
    from concurrent.futures import ThreadPoolExecutor

    # the qrels are read in a second thread while the run is read (Arrow's parser
    # and most array work release the GIL)
    with ThreadPoolExecutor(1) as pool:
        pending = pool.submit(_read_qrels, qrels_path)
        run, runid = _read_run(run_path)
        qrels = pending.result()
    return qrels, run, runid


def _read_qrels(qrels_path: str):
    """The golden set checked, its ids factorised once for judge (a CheckedQrels)."""
    from .errors import EvalframeInputError
    from .io import read_checked_qrels
    from .schema import check_qrels
    try:
        qrels = read_checked_qrels(qrels_path, encoding=_ENCODING)  # ids factorised once, for judge
        if qrels.subtopics is not None:  # trec_eval has no subtopics: one label per (query, doc), as before
            qrels = check_qrels(qrels.subtopics.drop(columns="subtopic"))  # one check: merges repeats, refuses conflicts
        return qrels
    except EvalframeInputError:
        _raise_malformed(Path(qrels_path).read_bytes(), qrels_path, 4, 4)
        raise


def _read_run(run_path: str):
    """The run checked, its ids factorised once for judge (a CheckedRun), and its tag."""
    from .errors import EvalframeInputError

    if run_path == "-":
        return _read_run_bytes(sys.stdin.buffer.read(), "standard input")
    try:
        return _checked_run(run_path, run_path)
    except EvalframeInputError:
        # trec_eval ignores anything after a run line's sixth field
        data = Path(run_path).read_bytes()
        if not _EXTRA_FIELDS.search(data):
            _raise_malformed(data, run_path, 6, None)
            raise
        return _read_run_bytes(data, run_path, as_is=False)


def _checked_run(source, where: str):
    """The run file ``source`` (a path or an opened binary file) checked (a CheckedRun, without its tag column) and
    its tag, the last line's; refuses a file of several runs whose rankings would
    merge.  trec_eval reads neither the Q0 nor the rank column; a file whose lines
    all carry one tag is checked without the tag column (it would only be
    factorised to be dropped)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from .io import read_raw
    from .schema import check_run
    raw, trimmed = read_raw(source, "run", drop=("rank",), encoding=_ENCODING)
    if "system" in raw and trimmed and len(raw):
        tags = pa.array(raw["system"])  # the column's own buffers
        last = tags[len(tags) - 1].as_py()
        if last.strip() and pc.all(pc.equal(tags, pa.scalar(last, tags.type))).as_py():
            return check_run(raw.drop(columns="system"), duplicates="max", trimmed=True), last
    return _one_run(check_run(raw, duplicates="max", trimmed=trimmed), where)


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
            from .errors import EvalframeInputError, InputProblem
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
    from .io import malformed_lines

    _refuse_malformed(path, *malformed_lines(data, least, most, start=start), least, most)


def _refuse_malformed(path: str, count: int, shown: list[str], least: int, most: int | None) -> None:
    """Raise the error of :func:`_raise_malformed` for ``count`` such lines, ``shown``."""
    from .errors import EvalframeInputError, InputProblem
    if count:
        want = f"{least}" if least == most else f"at least {least}"
        raise EvalframeInputError("golden set (qrels)" if most == 4 else "run", [InputProblem(
            f"{path}: {count} malformed lines (expected {want} whitespace-separated fields)",
            "fix or remove those lines", "\n".join(shown))])


def _read_run_bytes(data: bytes, path: str, first_line: int = 1, *, as_is: bool = True):
    """Read a TREC run given as bytes, ignoring fields after the sixth (``first_line``:
    the number of the first line of ``data`` in the file, for messages).  The bytes
    are read as they are (``as_is``) and, only when that fails and some line has
    more than six fields, again with those fields cut (a regular expression over
    every line: 13 s over the 10M lines of a 100000x100 run read in blocks)."""
    import io as _io

    from .errors import EvalframeInputError

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


def _relstrings(V, n: int) -> list[str]:
    from .ranking import NOT_JUDGED
    top = V.rank <= n
    lab = V.label[top]
    chars = np.where(lab > 9, ">", np.where(lab >= 0, np.clip(lab, 0, 9).astype(str),
                                            np.where(lab == NOT_JUDGED, "-", ".")))
    grp = V.grp[top]
    bounds = np.searchsorted(grp, np.arange(V.n_groups + 1))
    joined = "".join(chars.tolist())
    return [joined[bounds[g]:bounds[g + 1]] for g in range(V.n_groups)]


def _decimal_digits(n: np.ndarray, least: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """ASCII decimal digits of non-negative int64s, right-aligned in at least ``least``
    bytes (leading zeros), one row per value, and each value's number of digits (0 has one)."""
    width = max(len(str(int(n.max()))) if n.size else 1, least)
    out = np.empty(n.shape + (width,), dtype=np.uint8)
    x = n.copy()
    count = np.ones(n.shape, dtype=np.int64)
    for j in range(width):
        out[..., width - 1 - j] = x % 10
        x //= 10
        if j:
            count += n >= 10 ** j
    out += 48
    return out, count


def _value_field(kind: np.ndarray, block: np.ndarray, rel: list[str] | None):
    """Each line's value and newline as bytes right-aligned in one width (questions x
    slots x width, uint8) and their lengths.  ``kind`` per slot: 0 ``%6.4f`` of a
    measured value (the value times 10^4 rounded to an integer, written digit by digit:
    below 10^5 the product is off by less than 1.2e-7; values within 1e-6 of a half,
    negative, large or not finite are written by Python), 1 ``%d`` of a count, 2 the
    quoted relevance string (from ``rel``); ``block``: questions x the slots of kinds 0
    and 1, in slot order."""
    m, n_s = len(block), len(kind)
    measured = kind[kind != 2]
    fslots, cslots = np.flatnonzero(kind == 0), np.flatnonzero(kind == 1)
    v = block[:, measured == 0]
    scaled = v * 1e4
    with np.errstate(invalid="ignore"):
        frac = scaled - np.floor(scaled)
        exact = np.isfinite(v) & ~np.signbit(v) & (v < 1e5) & (np.abs(frac - 0.5) > 1e-6)
    k = np.floor(np.where(exact, scaled, 0.0) + 0.5).astype(np.int64)
    with np.errstate(invalid="ignore"):
        counts = block[:, measured == 1].astype(np.int64)  # as C's (long) cast of a count
    counts_plain = counts >= 0
    fd, fn = _decimal_digits(k, least=5)  # at least "0.0000"
    cd, cn = _decimal_digits(np.where(counts_plain, counts, 0))
    pieces = {}  # (question, slot) -> the bytes Python writes (rare)
    for i, j in zip(*np.nonzero(~exact)):
        pieces[i, fslots[j]] = f"{float(v[i, j]):6.4f}\n".encode()
    for i, j in zip(*np.nonzero(~counts_plain)):
        pieces[i, cslots[j]] = f"{int(counts[i, j])}\n".encode()
    rel_bytes = [("'" + r + "'\n").encode("utf-8") for r in rel] if rel is not None and (kind == 2).any() else []
    width = max([fd.shape[-1] + 2, cd.shape[-1] + 1] + [len(b) for b in pieces.values()]
                + [len(b) for b in rel_bytes])
    out = np.zeros((m, n_s, width), dtype=np.uint8)
    length = np.zeros((m, n_s), dtype=np.int64)
    out[:, :, -1] = 10
    if len(fslots):
        wd = fd.shape[-1]
        f = out[:, fslots]  # (a copy: filled, then put back)
        f[..., -5:-1] = fd[..., wd - 4:]
        f[..., -6] = 46  # "."
        f[..., -2 - wd:-6] = fd[..., :wd - 4]
        out[:, fslots] = f
        length[:, fslots] = np.maximum(fn, 5) + 2
    if len(cslots):
        wd = cd.shape[-1]
        out[:, cslots, width - 1 - wd:width - 1] = cd
        length[:, cslots] = cn + 1
    if rel_bytes:
        rslot = np.flatnonzero(kind == 2)
        joined = np.frombuffer(b"".join(rel_bytes), dtype=np.uint8)
        lens = np.array([len(b) for b in rel_bytes], dtype=np.int64)
        ends = np.cumsum(lens)
        pos = ends[:, None] - width + np.arange(width)  # right-aligned: each row ends its bytes
        row = np.where(pos >= (ends - lens)[:, None], joined[np.clip(pos, 0, None)], 0)
        out[:, rslot] = row[:, None, :]
        length[:, rslot] = lens[:, None]
    for (i, s), b in pieces.items():
        out[i, s, width - len(b):] = np.frombuffer(b, dtype=np.uint8)
        length[i, s] = len(b)
    return out, length


def _per_question_text(heads: list[bytes], kind: np.ndarray, block: np.ndarray, rel: list[str] | None,
                       ids) -> bytes:
    """The trec_eval -q lines (``heads[s]``, the question id, a tab, the value, a
    newline) of a chunk of questions, question-major, as UTF-8 bytes.  ``ids``: the
    questions' ids (an Arrow string array); ``kind``, ``block``, ``rel``: as
    :func:`_value_field`.  Each line is laid out in a fixed-width record (name, id,
    value: numpy broadcasts and digit arithmetic, no Python call per line or per
    value) and the records are squeezed to their bytes by one boolean mask."""
    import pyarrow as pa
    m, n_s = len(ids), len(heads)
    hw = max(len(h) for h in heads)
    head = np.zeros((n_s, hw), dtype=np.uint8)
    for s, h in enumerate(heads):
        head[s, :len(h)] = np.frombuffer(h, dtype=np.uint8)
    head_len = np.array([len(h) for h in heads], dtype=np.int64)
    bufs = ids.buffers()
    off_type = np.int64 if pa.types.is_large_string(ids.type) else np.int32
    off = np.frombuffer(bufs[1], dtype=off_type)[ids.offset: ids.offset + m + 1].astype(np.int64)
    data = np.frombuffer(bufs[2], dtype=np.uint8) if bufs[2] is not None and len(bufs[2]) else np.zeros(1, np.uint8)
    qlen = np.diff(off)
    qw = int(qlen.max(initial=0)) + 1
    qid = data[np.minimum(off[:-1, None] + np.arange(qw), len(data) - 1)]
    qid[np.arange(m), qlen] = 9  # the tab after the id
    value, value_len = _value_field(kind, block, rel)
    vw = value.shape[-1]
    width = hw + qw + vw
    template = np.zeros((n_s, width), dtype=np.uint8)  # one question's records: the names
    template[:, :hw] = head
    rec = np.empty((m, n_s, width), dtype=np.uint8)
    rec[:] = template  # (a copy of n_s records at a time, not of a name at a time)
    rec[:, :, hw:hw + qw] = qid[:, None, :]
    rec[:, :, hw + qw:] = value
    keep_template = np.zeros((n_s, width), dtype=bool)
    keep_template[:, :hw] = np.arange(hw) < head_len[:, None]
    keep = np.empty(rec.shape, dtype=bool)
    keep[:] = keep_template
    keep[:, :, hw:hw + qw] = (np.arange(qw) <= qlen[:, None])[:, None, :]
    keep[:, :, hw + qw:] = np.arange(vw) >= vw - value_len[:, :, None]
    return rec[keep].tobytes()


#: Lines of -q output built at once (a chunk of questions): its records stay a few MB.
PER_QUESTION_CHUNK_LINES = 200_000


def _write_per_question(write, rows, table, rel_str, ids) -> None:
    """trec_eval -q lines (measure, question, value), question by question, a chunk
    of questions at a time (:func:`_per_question_text`)."""
    import pyarrow.compute as pc
    n_q, n_s = len(ids), len(rows)
    heads = [f"{s.name:<22}\t".encode("utf-8") for s in rows]
    kinds = np.array([2 if s.spec.kind == "relstring" else 1 if s.spec.integer else 0 for s in rows])
    measured = [table[id(s)] for s in rows if s.spec.kind != "relstring"]
    ascii_only = all(s.name.isascii() for s in rows) and (not n_q or bool(pc.all(pc.string_is_ascii(ids)).as_py()))
    step = max(1, PER_QUESTION_CHUNK_LINES // n_s)
    for lo in range(0, n_q, step):
        hi = min(lo + step, n_q)
        block = np.column_stack([v[lo:hi] for v in measured]) if measured else np.zeros((hi - lo, 0))
        data = _per_question_text(heads, kinds, block, None if rel_str is None else rel_str[lo:hi],
                                  ids.slice(lo, hi - lo))
        write(data if ascii_only else data.decode("utf-8"))  # ASCII bytes are written as they are


#: the document trec_eval -c ranks for a question the run does not answer
PLACEHOLDER_DOC = "ceci_nest_pas_un_docno"


def _with_placeholders(run, qrels):
    """trec_eval -c: each golden-set question the run does not answer gets a
    one-document ranking (an unjudged document, score 1); returns the run and
    the ids of those questions."""
    import pandas as pd

    missing = _unanswered(qrels, pd.unique(run["query_id"].to_numpy(dtype=object)))
    if len(missing) == 0:
        return run, missing
    return pd.concat([run, _placeholder_rows(missing, run)], ignore_index=True), missing


def _unanswered(qrels, answered) -> np.ndarray:
    """The golden set's question ids not among ``answered``, in golden-set order."""
    import pandas as pd
    golden = pd.unique(qrels["query_id"].to_numpy(dtype=object))
    return golden[~pd.Series(golden).isin(answered).to_numpy()]


def _placeholder_rows(missing, like):
    """trec_eval -c's one-document ranking for each question of ``missing``, with
    the columns and id dtypes of the run table ``like``."""
    import pandas as pd
    extra = {"query_id": missing, "doc_id": [PLACEHOLDER_DOC] * len(missing), "score": 1.0}
    if "rank" in like:
        extra["rank"] = 1
    extra = pd.DataFrame(extra).astype({c: like[c].dtype for c in ("query_id", "doc_id")})
    return extra[like.columns]


def _cleared_on_placeholder(name: str) -> bool:
    """The values trec_eval 10 resets after scoring a placeholder ranking: the
    ones named exactly num_ret, utility, relstring or rbp_resid, and unj*.  A
    value with parameters in its name (relstring_5, utility_2,-1,0,0,
    rbp_resid_p=0.5) keeps its placeholder value, as in trec_eval."""
    return name in ("num_ret", "utility", "relstring", "rbp_resid") or name.startswith("unj")


def _writer(out):
    """Write text whose ids hold one character per byte of the input files."""
    buf = getattr(out, "buffer", None)

    def write(text: str | bytes) -> None:
        """Write ``text``; bytes are written as they are (they hold ASCII only)."""
        data = text if isinstance(text, bytes) else text.encode(_ENCODING, errors="replace")  # ids, ASCII, and measure names from argv
        if buf is not None:
            out.flush()
            buf.write(data)
        else:
            out.write(data.decode("utf-8", errors="surrogateescape"))
    return write


def _scored(opts, measures: list, rel_len: int | None, run, qrels, *, block: bool = False):
    """One run table's questions: their ids (an Arrow string array), their values
    of ``measures`` (questions x measures) and their relevance strings (or None).
    A ``block`` of a larger run keeps only its own questions (-c's other golden-set
    questions are another block's, or placeholders)."""
    from .measures import compute
    from .ranking import judge
    if getattr(run, "repeats", None) is not None:
        _refuse_repeats_evaluated(run, qrels, opts["depth"])
    missing = "zero" if opts["c"] and not block else "drop"
    J = judge(run, qrels, missing=missing, depth=opts["depth"], warn=False)
    V = J.condensed if opts["J"] else J
    values = compute(V, measures) if measures else np.zeros((V.n_groups, 0))
    return _arrow_ids(J.groups["query_id"]), values, (_relstrings(V, rel_len) if rel_len is not None else None)


def _refuse_repeats_evaluated(run, qrels, depth: int | None) -> None:
    """trec_eval 10's duplicate check (form_res_rels.c): a golden-set question's lines
    sorted by score (docno descending on ties), the first ``depth`` (-M) kept, and a
    docno listed twice among them stops the program.  Repeats anywhere else (below
    the cutoff, or in a question the golden set lacks) are never looked at; the run
    keeps each document's best-ranked line, which is the line trec_eval ranks."""
    import pandas as pd
    repeats = run.repeats
    asked = pd.unique(repeats["query_id"].to_numpy(dtype=object))
    asked = asked[pd.Series(asked).isin(qrels.frame["query_id"]).to_numpy()]
    if not len(asked):
        return
    cols = ["query_id", "doc_id", "score"]
    frame = run.frame[cols]
    rows = pd.concat([frame[frame["query_id"].isin(asked)], repeats[cols][repeats["query_id"].isin(asked)]],
                     ignore_index=True)
    # trec_eval's order: score descending, then docno descending (strcmp: bytes, as read)
    rows = rows.sort_values(["query_id", "score", "doc_id"], ascending=[True, False, False], kind="stable")
    if depth is not None:
        rows = rows[rows.groupby("query_id", sort=False).cumcount().to_numpy() < depth]
    twice = rows.duplicated(["query_id", "doc_id"]).to_numpy()
    if twice.any():
        from .errors import EvalframeInputError, InputProblem
        first = rows[twice].iloc[0]
        raise EvalframeInputError("run", [InputProblem(
            f"document {first['doc_id']!r} is listed more than once for question {first['query_id']!r} within "
            f"the ranking evaluated ({int(twice.sum())} such repeats; trec_eval 10 stops on them: "
            f"\"duplicate docs {first['doc_id']}\")",
            "remove the repeated lines (evalframe evaluate --duplicates max keeps each document's highest "
            "score); a repeat below the -M cutoff, or in a question the golden set lacks, is ignored as "
            "trec_eval ignores it")])


def _arrow_ids(query_id):
    """Question ids as one Arrow string array."""
    import pyarrow as pa
    ids = pa.array(query_id, pa.string())
    return ids.combine_chunks() if isinstance(ids, pa.ChunkedArray) else ids


# ---------------------------------------------------------------------------
# Runs larger than --memory-budget: evaluated a block of whole questions at a time
# ---------------------------------------------------------------------------

def _larger_than(run_path: str, budget: int) -> bool:
    from .engine.budget import WHOLE_FILE_BYTES_PER_LINE, text_run_rows
    return text_run_rows(run_path) * WHOLE_FILE_BYTES_PER_LINE > budget


def _block_bytes(budget: int, golden_rows: int) -> int:
    """Bytes of run file per block: the rows :func:`evalframe.engine.budget.plan_batch_rows`
    gives the budget after the golden set held (the per-question values, 8 bytes per
    question and measure, are small beside a block's rows)."""
    from .engine.budget import BLOCK_BYTES_PER_LINE, MIN_BLOCK_BYTES, TEXT_BYTES_PER_ROW, plan_batch_rows
    rows = plan_batch_rows(budget, golden_rows=golden_rows, out_rows=0, bytes_per_row=BLOCK_BYTES_PER_LINE)
    return max(MIN_BLOCK_BYTES, rows * TEXT_BYTES_PER_ROW)


def _score_in_blocks(opts, measures: list, rel_len: int | None, qrels_path: str, run_path: str, budget: int):
    """:func:`_scored` over a run file larger than ``budget``, a block of whole
    questions at a time (:mod:`evalframe.engine.text_blocks`: a run grouped by
    question, as run files are, is read once); a question met again after its block
    means the file is not grouped, and the run is then hashed on its question ids into
    temporary files, each evaluated whole.  Returns the golden set, the questions'
    (ids, values, relevance strings), the -c placeholder questions and the run tag."""
    import pyarrow as pa

    from .engine.partition import GoldenIndex
    from .engine.text_blocks import question_blocks
    qrels = _read_qrels(qrels_path)
    golden = GoldenIndex(qrels.frame)
    size = _block_bytes(budget, len(qrels.frame))
    scored = _Blocks(opts, measures, rel_len, qrels, golden)
    for block, first_line in question_blocks(run_path, size):
        run, tag = _block_run(block, run_path, first_line)
        scored.runid = tag or scored.runid
        if not scored.add(run):  # a question met again: the file is not grouped
            del run
            scored = _Blocks(opts, measures, rel_len, qrels, golden)
            _score_buckets(scored, run_path, size)
            break
        del run  # before the next block is read
    parts, seen, runid = scored.finish()
    placeholders = ()
    if opts["c"]:
        answered = pa.concat_arrays(seen).to_numpy(zero_copy_only=False) if seen else np.array([], dtype=object)
        placeholders = _unanswered(qrels.frame, answered)
        if len(placeholders):
            like = qrels.frame[["query_id", "doc_id"]].assign(score=1.0)  # the run's columns: ids and score
            parts.append(_scored(opts, measures, rel_len, _placeholder_rows(placeholders, like), qrels, block=True))
    return qrels, _joined(parts, len(measures), rel_len), placeholders, runid


class _Blocks:
    """The questions scored so far, block by block (:func:`_score_in_blocks`)."""

    def __init__(self, opts, measures: list, rel_len: int | None, qrels, golden):
        from .engine.text_blocks import SeenQuestions
        self.args = (opts, measures, rel_len)
        self.qrels, self.golden = qrels, golden
        self.parts, self.seen, self.runid = [], [], ""
        self.met = SeenQuestions()
        self.unshared = None  # a block sharing no question with the golden set, while all have

    def add(self, run, *, grouped: bool = True) -> bool:
        """Score a block of whole questions; False (and nothing scored) when a
        ``grouped`` block holds a question an earlier block held."""
        asked = _question_ids(run)
        if grouped and self.met.met_again(asked):
            return False
        self.seen.append(asked)
        held = self.golden.lookup(asked.to_numpy(zero_copy_only=False))
        held = held[held >= 0]
        if not len(held):  # only run-only questions: nothing to score
            if not self.parts and self.unshared is None:
                self.unshared = run
            return True
        self.parts.append(_scored(*self.args, run, _golden_rows(self.qrels, self.golden, held), block=True))
        self.unshared = None
        # the block's pandas frames sit in reference cycles (pandas' block references):
        # collected now, the young generations only (a few ms), they do not pile up
        # until the collector's next full pass (100 MB a block on 300k rows)
        gc.collect(1)
        return True

    def finish(self):
        """(parts, question ids seen, run tag); a run sharing no question with the
        golden set fails as the in-memory command does."""
        opts, measures, rel_len = self.args
        if not self.parts and self.unshared is not None and not opts["c"]:
            _scored(opts, measures, rel_len, self.unshared, self.qrels, block=True)  # raises judge's error
        return self.parts, self.seen, self.runid


def _golden_rows(qrels, golden, held):
    """The golden set's rows of the questions ``held`` (positions in ``golden``, the
    :class:`~evalframe.engine.partition.GoldenIndex` of ``qrels``), checked: a question's
    values depend on its own rows only, and judging a block against the whole golden set
    sorted and hashed all of it again for every block."""
    from .schema import encode_qrels
    if len(held) == len(golden):
        return qrels
    return encode_qrels(golden.rows(held).reset_index(drop=True))


def _score_buckets(scored: _Blocks, run_path: str, size: int) -> None:
    """The partition pass of :func:`_score_in_blocks` (:func:`evalframe.engine.text_blocks.bucket_files`),
    in a temporary directory removed on success, error, Ctrl-C and SIGTERM (a full disk:
    one error naming it)."""
    from .engine.scratch import scratch_directory
    from .engine.text_blocks import bucket_files
    from .errors import EvalframeInputError
    with scratch_directory("evalframe-trec-eval-") as tmp:
        buckets = bucket_files(run_path, size, tmp, write=lambda block, files: _write_buckets(block, files))
        for path in buckets.paths:
            data = Path(path).read_bytes()
            os.unlink(path)
            if not data.strip():
                continue
            try:
                run, _ = _block_run(data, run_path, None)
            except EvalframeInputError:
                _malformed_in_blocks(run_path, size)
                raise
            scored.add(run, grouped=False)
            del run
        fields = buckets.last_line.split()
        scored.runid = fields[5].decode(_ENCODING) if len(fields) > 5 else ""


def _write_buckets(block: bytes, files: list) -> bytes:
    """One block of the bucket pass (:func:`evalframe.engine.text_blocks.write_buckets`):
    the seam where the tests count and interrupt the pass."""
    from .engine.text_blocks import write_buckets
    return write_buckets(block, files)


def _block_run(block: bytes, run_path: str, first_line: int | None):
    """A block of a run file as :func:`_read_run` reads a whole file: the checked
    run and its tag.  ``first_line`` numbers the block's lines in messages (None: a
    bucket of the partition pass, whose lines are not the file's)."""
    return _read_run_bytes(block, run_path, first_line or 1)


def _question_ids(run):
    import pyarrow.compute as pc
    return pc.unique(_arrow_ids(run.frame["query_id"]))


def _joined(parts: list, n_measures: int, rel_len: int | None):
    import pyarrow as pa
    if not parts:
        return pa.array([], pa.string()), np.zeros((0, n_measures)), ([] if rel_len is not None else None)
    ids = pa.concat_arrays([p[0] for p in parts])
    values = np.concatenate([p[1] for p in parts])
    rel = [r for p in parts for r in p[2]] if rel_len is not None else None
    return ids, values, rel


def _malformed_in_blocks(run_path: str, size: int) -> None:
    """Raise trec_eval's malformed-lines error for the run file read in blocks,
    naming the file's line numbers; return when it has none."""
    from .io import line_blocks, malformed_lines, open_binary
    count, shown, line = 0, [], 1
    with open_binary(run_path) as f:
        for block in line_blocks(f, size):
            c, s = malformed_lines(block, 6, None, start=line)  # fields beyond the sixth do not count
            count += c
            shown += s[:5 - len(shown)] if len(shown) < 5 else []
            line += block.count(b"\n")
    _refuse_malformed(run_path, count, shown, 6, None)


def _evaluate(opts, req: _Request, qrels_path: str, run_path: str, out) -> None:
    from .measures import Mean, parse_measure, resolve

    measures = []

    def column(m) -> int:
        m = resolve(m, rel=opts["rel"])
        if m not in measures:
            measures.append(m)
        return measures.index(m)

    for s in req.slots:
        if isinstance(s.measure, Derived):
            s.column = [column(parse_measure(name)) for name in s.measure.inputs]
        elif s.measure is not None:
            s.column = column(s.measure)
    rel_len = req.relstring_len if opts["q"] else None

    import pyarrow as pa
    import pyarrow.compute as pc
    budget = opts["budget"]
    if budget is None and run_path != "-":
        from .engine.budget import memory_budget
        budget = memory_budget(None)
    if run_path != "-" and _larger_than(run_path, budget):
        qrels, (ids, values, rel_str), placeholders, runid = _score_in_blocks(
            opts, measures, rel_len, qrels_path, run_path, budget)
    else:
        qrels, run, runid = _read(qrels_path, run_path)
        placeholders = ()
        if opts["c"]:
            if run.repeats is not None:  # before the placeholders make the run a plain table
                _refuse_repeats_evaluated(run, qrels, opts["depth"])
            run, placeholders = _with_placeholders(run.frame, qrels.frame)
        ids, values, rel_str = _scored(opts, measures, rel_len, run, qrels)
    order = pc.sort_indices(ids).to_numpy()  # trec_eval: strcmp order of question ids (byte-wise)
    ids = ids.take(pa.array(order))
    qids = ids.to_numpy(zero_copy_only=False)
    values = values[order]
    n_q = len(qids)
    unanswered = None
    if len(placeholders):
        import pandas as pd
        unanswered = pd.Series(qids).isin(placeholders).to_numpy()

    def slot_values(s) -> np.ndarray:
        if isinstance(s.measure, Derived):
            v = s.measure.fn(*(values[:, c] for c in s.column))
        else:
            v = values[:, s.column]
        if unanswered is not None and _cleared_on_placeholder(s.name):
            v = np.where(unanswered, 0.0, v)
        return v

    table = {id(s): slot_values(s) for s in req.slots if s.measure is not None}

    write = _writer(out)
    if opts["q"]:
        if rel_str is not None:
            rel_str = [rel_str[i] for i in order]
            if unanswered is not None and _cleared_on_placeholder(req.relstring_name):
                rel_str = ["" if u else r for r, u in zip(rel_str, unanswered.tolist())]
        rows = [s for s in req.slots if s.spec.per_query and s.spec.kind not in ("runid", "num_q")]
        if rows:
            _write_per_question(write, rows, table, rel_str, ids)
    if opts["n"]:
        return
    lines = []
    for s in req.slots:
        kind = s.spec.kind
        if kind == "runid":
            lines.append(f"{'runid':<22}\tall\t{runid}\n")
        elif kind == "num_q":
            lines.append(f"{'num_q':<22}\tall\t{n_q}\n")
        elif kind == "relstring":
            continue
        else:
            if opts["c"] and s.name == "num_rel":
                # trec_eval -c (m_num_rel.c): every golden-set label > 0, whatever -l
                v = float((qrels.frame["relevance"].to_numpy() > 0).sum())
            else:  # trec_eval's order of summation: the questions'
                agg = Mean() if isinstance(s.measure, Derived) else measures[s.column].aggregator
                v = agg.finalize(agg.partial(table[id(s)]))
            lines.append(f"{s.name:<22}\tall\t{int(v)}\n" if s.spec.integer else f"{s.name:<22}\tall\t{v:6.4f}\n")
    write("".join(lines))


def _starts_with_bom(path: str) -> bool:
    """Whether the (possibly gzipped) file ``path`` starts with a UTF-8 byte-order mark."""
    from .io import open_binary
    try:
        with open_binary(path) as f:
            return f.read(3) == b"\xef\xbb\xbf"
    except (OSError, EOFError):
        return False  # the reader reports it


#: glibc's mallopt parameters (malloc.h) and their defaults
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
_GLIBC_DEFAULT_THRESHOLD = 128 * 1024


@contextmanager
def _command_allocator():
    """Memory allocation tuned for one command over large arrays, restored on exit.

    The command allocates and frees arrays of the run's length (tens of MB) a few
    hundred times.  Two process-wide defaults make that cost more in the kernel than
    the array work itself (measured at 7000x1000, ``-q -m all_trec``: system time
    5.1 s of 9.2 s of CPU, and 1.5 s with both changes):

    - numpy asks for transparent huge pages on every large array (``madvise``), and
      the kernel's default ``defrag=madvise`` then compacts memory on the page fault,
      a stall that grows with the page cache; huge pages are not asked for here;
    - glibc's ``malloc`` gives each such array its own ``mmap`` and unmaps it when
      freed, so the next array faults every page in again; here arrays up to 1 GiB
      come from the heap, and freed memory is kept for the next one (the process ends
      soon after).

    Both are left as they are where unavailable (not glibc, another numpy)."""
    import ctypes
    try:
        from numpy._core.multiarray import _set_madvise_hugepage  # numpy >= 2
    except ImportError:  # pragma: no cover - numpy 1.x
        from numpy.core.multiarray import _set_madvise_hugepage
    hugepage = _set_madvise_hugepage(False)
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (AttributeError, OSError):  # pragma: no cover - not glibc
        mallopt = None
    tuned = mallopt is not None and mallopt(_M_MMAP_THRESHOLD, 1 << 30) == 1 and mallopt(_M_TRIM_THRESHOLD, 1 << 31) == 1
    try:
        yield
    finally:
        _set_madvise_hugepage(hugepage)
        if tuned:  # glibc's defaults (its mmap threshold no longer adapts, as after any mallopt call)
            mallopt(_M_MMAP_THRESHOLD, _GLIBC_DEFAULT_THRESHOLD)
            mallopt(_M_TRIM_THRESHOLD, _GLIBC_DEFAULT_THRESHOLD)


def main(argv: list[str] | None = None) -> int:
    """Run ``evalframe trec-eval`` with trec_eval's arguments; returns the exit status."""
    from .errors import EvalframeInputError

    argv = list(sys.argv[1:] if argv is None else argv)
    err = sys.stderr
    try:
        opts, marked, params, args = _parse_args(argv)
    except _Usage as exc:
        err.write(f"trec_eval: {exc}\n{USAGE}")
        return 1
    except _Illegal as exc:
        if exc.why:
            err.write(f"trec_eval: {exc.why}\n")
        err.write(f"trec_eval: illegal measure '{exc.arg}'\n")
        return 1
    except ValueError as exc:  # a flag's value (-M, -R, -T, -Z): a user error, as every command's
        err.write(f"trec_eval: {exc}\n")
        return 2
    if opts["help"]:
        sys.stdout.write(HELP)
        return 0
    if opts["version"]:
        err.write("trec_eval version 10.0 (evalframe)\n")
        return 0
    if len(args) != 2:
        err.write(USAGE)
        return 1
    if not marked:
        marked = list(NICKNAMES["official"])
    try:
        req = _plan(marked, params, opts)
    except ValueError as exc:
        err.write(f"trec_eval: {exc}\ntrec_eval: Cannot initialize measures\n")
        return 2
    qrels_path, run_path = args
    for path in (qrels_path,) + (() if run_path == "-" else (run_path,)):
        if not os.path.isfile(path) or not os.access(path, os.R_OK):
            err.write(f"trec_eval: cannot read file '{path}'\ntrec_eval: Quit in file '{path}'\n")
            return 2
    for path in (qrels_path,) + (() if run_path == "-" else (run_path,)):
        if _starts_with_bom(path):
            err.write(f"trec_eval: warning: {path} starts with a UTF-8 byte-order mark: as trec_eval does, it is "
                      f"kept in the file's first id (which then matches no id of the other file); evalframe "
                      f"evaluate and report remove it. To match them, remove it from the file\n")
    import warnings

    import pyarrow as pa

    from .io import parse_pool
    pool = pa.default_memory_pool()
    try:
        with warnings.catch_warnings(), _command_allocator():
            warnings.simplefilter("ignore")
            pa.set_memory_pool(parse_pool())  # one cold pass over large arrays: see parse_pool
            _evaluate(opts, req, qrels_path, run_path, sys.stdout)
    except EvalframeInputError as exc:
        text = f"trec_eval: {exc}\n"
        try:  # ids in the message are the files' bytes, one character each
            text.encode(_ENCODING)
        except UnicodeEncodeError:
            err.write(text)
        else:
            _writer(err)(text)
        return 2
    except (FileNotFoundError, PermissionError, IsADirectoryError, UnicodeDecodeError) as exc:
        err.write(f"trec_eval: {exc}\n")
        return 2
    except ValueError as exc:
        err.write(f"trec_eval: {exc}\n")
        return 2
    except BrokenPipeError:  # pragma: no cover - e.g. piped into head
        return 0
    finally:
        pa.set_memory_pool(pool)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
