"""trec_eval's command line: its getopt flags, the parameters read as its ``atol``/``atof``
read them, and the measure list asked for (:func:`plan_request`), in trec_eval's order.
"""
from __future__ import annotations

import getopt
import re
from dataclasses import dataclass, field
from .._validation import error
from .catalogue import BY_NAME, Derived, NICKNAMES, NOT_PROVIDED, TREC_MEASURES, TrecMeasure


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
   --threads N            threads to score on (default: EVALFRAME_THREADS, else the cores): a run
                          file of at least 125,000 lines per thread, grouped by question, is read
                          and scored in blocks of whole questions, N at once, with the same output
RUN may be '-' for standard input.  Measures: """ + ", ".join(t.name for t in TREC_MEASURES) + "\n"


class UsageError(Exception):
    pass


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
class Request:
    slots: list = field(default_factory=list)
    relstring_len: int | None = None
    relstring_name: str = "relstring"
    runid: bool = False
    num_q: bool = False


def plan_request(marked: list[str], params: dict[str, str], opts: dict) -> Request:
    """trec_eval's measure list, in trec_eval's order, as evalframe measures."""
    from ..measures import parse_measure as _parse

    def parse_measure(built):
        return built if isinstance(built, Derived) else _parse(built)

    req = Request()
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
            pairs = _gain_pairs(spec.name, text) if text else []
            name = f"{spec.name}_{text}" if text else spec.name
            req.slots.append(_Slot(name, spec, parse_measure(spec.build(pairs, opts))))
    return req


def _gain_pairs(name: str, text: str) -> list[tuple[str, float]]:
    out = []
    for part in text.split(","):
        key, sep, val = part.partition("=")
        if not sep or not key:
            raise ValueError(f"malformed pair parameters in '{text}' (expected name=value,...)")
        out.append((key, _atof(val)))
    return out


def parse_args(argv: list[str]):
    try:
        optlist, args = getopt.gnu_getopt(argv, "hvqm:cl:nD:JN:M:R:T:oZ:", [
            "help", "version", "query_eval_wanted", "measure=", "complete_rel_info_wanted",
            "level_for_rel=", "nosummary", "Debug_level=", "Judged_docs_only",
            "Number_docs_in_coll=", "Max_retrieved_per_topic=", "Rel_info_format=",
            "Results_format=", "Output_old_results_format=", "Zscore=", "memory-budget=", "threads="])
    except getopt.GetoptError as exc:
        raise UsageError(str(exc)) from None
    opts = {"q": False, "c": False, "n": False, "J": False, "rel": 1, "depth": None, "docs": 0,
            "help": False, "version": False, "budget": None, "threads": None}
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
            from ..engine.budget import memory_budget
            try:
                opts["budget"] = memory_budget(val)
            except ValueError:
                raise error(None, "--memory-budget", "a size such as 2GiB or 500MB", val) from None
        elif flag == "--threads":
            try:
                opts["threads"] = int(val)
            except ValueError:
                opts["threads"] = val
            from .._threads import resolve_threads
            resolve_threads(opts["threads"], caller=None)  # checked here: an int >= 1
        elif flag in ("-Z", "--Zscore"):
            raise ValueError("-Z (z-scores) is not provided by evalframe trec-eval")
        elif flag in ("-m", "--measure"):
            name, dot, text = val.partition(".")
            if dot and text == "":
                raise IllegalMeasure(val, f"improper measure in parameter '{name}'")
            if name in NOT_PROVIDED:
                raise IllegalMeasure(val, f"measure '{name}' is not provided by evalframe trec-eval")
            names = NICKNAMES.get(name, (name,))
            for n in names:
                if n not in BY_NAME:
                    raise IllegalMeasure(val)
                if n not in marked:
                    marked.append(n)
            if dot and name not in params:
                params[name] = text
        # -D (debug level) and -o (obsolete) are accepted and ignored, as in trec_eval
    return opts, marked, params, args


class IllegalMeasure(Exception):
    def __init__(self, arg: str, why: str = ""):
        super().__init__(why)
        self.arg = arg
        self.why = why
