"""The parameter checks (``evalframe/_validation.py``): the constraint objects against
expectations written here, the one message template, and a few messages end to end."""
from __future__ import annotations

import math
import numbers

import numpy as np
import pandas as pd
import pytest

import evalframe as ef
from evalframe import stats
from evalframe.errors import ParameterError
from evalframe._validation import (
    BOOLEAN,
    CONFIDENCE,
    SEED,
    Boolean,
    InstanceOf,
    Interval,
    IsCallable,
    Options,
    Satisfies,
    check,
    error,
    type_of,
    validate,
)


# ---------------------------------------------------------------- Interval

@pytest.mark.parametrize("value, ok", [
    (1, True), (5, True), (0, False), (-3, False),
    (np.int64(1), True), (np.int32(7), True), (np.uint8(2), True),  # numpy ints are ints
    (True, False), (np.bool_(True), False),  # a bool is not an int
    (1.0, False), (np.float64(2.0), False), ("1", False), (None, False),
])
def test_interval_int(value, ok):
    assert Interval(int, 1, None).accepts(value) is ok


@pytest.mark.parametrize("value, ok", [
    (0.5, True), (1, True), (np.float32(0.25), True), (np.int64(0), True),  # numbers of any kind
    (math.nan, False), (np.float64("nan"), False),  # NaN is in no interval
    (math.inf, False), (-math.inf, False),  # finite by default
    (True, False), (False, False), ("0.5", False), (None, False), (1 + 0j, False),
])
def test_interval_float(value, ok):
    assert Interval(float, None, None).accepts(value) is ok


def test_interval_nan_refused_even_with_infinite_allowed():
    assert Interval(float, 0, None, finite=False).accepts(math.inf)
    assert not Interval(float, 0, None, finite=False).accepts(math.nan)
    assert not Interval(float, None, None, finite=False).accepts(math.nan)


@pytest.mark.parametrize("closed, at_low, at_high", [
    ("both", True, True), ("left", True, False), ("right", False, True), ("neither", False, False),
])
def test_interval_ends(closed, at_low, at_high):
    iv = Interval(float, 0, 1, closed=closed)
    assert iv.accepts(0) is at_low
    assert iv.accepts(1.0) is at_high
    assert iv.accepts(0.5) and not iv.accepts(-1e-12) and not iv.accepts(1 + 1e-12)


@pytest.mark.parametrize("iv, words", [
    (Interval(int, 1, None), "an int >= 1"),
    (Interval(int, 0, None, closed="neither"), "an int > 0"),
    (Interval(int, None, 5), "an int <= 5"),
    (Interval(int, None, 5, closed="left"), "an int < 5"),
    (Interval(int, 10, 100000), "an int in [10, 100000]"),
    (Interval(float, 0, 1, closed="neither"), "a float in (0, 1)"),
    (Interval(float, 0, 1, closed="left"), "a float in [0, 1)"),
    (Interval(float, 0, 0.5, closed="right"), "a float in (0, 0.5]"),
    (Interval(numbers.Real, 0, 1), "a number in [0, 1]"),
    (Interval(float, None, None), "a float"),
])
def test_interval_words(iv, words):
    assert iv.describe() == words


def test_interval_casts():
    assert type(check("f", "n", np.int64(3), Interval(int, 1, None))) is int
    assert type(check("f", "x", 1, Interval(float, 0, 2))) is float


def test_interval_refuses_a_bad_definition():
    with pytest.raises(ValueError):
        Interval(str, 0, 1)
    with pytest.raises(ValueError):
        Interval(int, 0, 1, closed="open")


# ---------------------------------------------------------------- the others

def test_options():
    opts = Options(["zero", "drop"])
    assert opts.accepts("zero") and opts.accepts(np.str_("drop"))
    assert not opts.accepts("Zero") and not opts.accepts(None) and not opts.accepts(["zero"])
    assert opts.describe() == "one of ['zero', 'drop']"
    assert Options(["error", "max"], what="'error' or 'max'").describe() == "'error' or 'max'"


def test_options_compare_types_too():
    assert Options([0, 1]).accepts(1)
    assert not Options([0, 1]).accepts(True)  # True == 1, but a bool is not the option 1
    assert not Options(["a"]).accepts(np.array(["a", "b"]))  # an array is not an option either


def test_boolean():
    assert BOOLEAN.accepts(True) and BOOLEAN.accepts(np.bool_(False))
    assert not BOOLEAN.accepts(1) and not BOOLEAN.accepts(0) and not BOOLEAN.accepts("True")
    assert check("f", "b", np.bool_(True), Boolean()) is True


def test_instance_of_and_callable_and_satisfies():
    assert InstanceOf(str).describe() == "a str"
    assert InstanceOf((str, int)).describe() == "a str or int"
    assert InstanceOf(str, what="a system name (str)").accepts("bm25")
    assert not InstanceOf(str).accepts(3)
    assert IsCallable().accepts(len) and not IsCallable().accepts(3)
    even = Satisfies(lambda v: v % 2 == 0, "an even number")
    assert even.accepts(4) and not even.accepts(3) and not even.accepts("x")  # a raising predicate refuses


# ---------------------------------------------------------------- check, validate, the message

def test_none_only_when_listed():
    with pytest.raises(ParameterError):
        check("f", "depth", None, Interval(int, 1, None))
    assert check("f", "depth", None, Interval(int, 1, None), None) is None


@pytest.mark.parametrize("constraints, value, message", [
    ((Interval(int, 1, None),), 0, "fuse: depth must be an int >= 1, got 0"),
    ((Interval(int, 1, None), None), 0, "fuse: depth must be an int >= 1 or None, got 0"),
    ((None, Options(["holm", "bh"])), "x", "fuse: depth must be None or one of ['holm', 'bh'], got 'x'"),
    ((Interval(int, 1, None),), True, "fuse: depth must be an int >= 1, got True"),
    ((CONFIDENCE,), math.nan, "fuse: depth must be a float in (0, 1), got nan"),
])
def test_the_message_exactly(constraints, value, message):
    with pytest.raises(ParameterError) as info:
        check("fuse", "depth", value, *constraints)
    assert str(info.value) == message


def test_the_error_is_a_value_error_and_a_type_error():
    exc = error("report", "seed", "an int >= 0", -1)
    assert isinstance(exc, ValueError) and isinstance(exc, TypeError)
    assert str(exc) == "report: seed must be an int >= 0, got -1"
    assert str(error(None, "seed", "an int >= 0", -1)) == "seed must be an int >= 0, got -1"


def test_a_long_value_is_cut():
    msg = str(error("f", "x", "a str", "a" * 1000))
    assert len(msg) < 260 and msg.endswith("...")


def test_a_table_is_said_by_its_type():
    table = pd.DataFrame({"a": range(100)})
    assert str(error("judge", "pairs", "a DataFrame", type_of(table))) == "judge: pairs must be a DataFrame, got DataFrame"
    assert str(error(None, "tokens", "a dict", type_of([1]))) == "tokens must be a dict, got list"


def test_validate_checks_in_order():
    assert validate("f", seed=(np.int64(2), SEED), confidence=(0.5, CONFIDENCE)) == {"seed": 2, "confidence": 0.5}
    with pytest.raises(ParameterError, match=r"^f: seed must be an int >= 0, got -1$"):
        validate("f", seed=(-1, SEED), confidence=(5, CONFIDENCE))


# ---------------------------------------------------------------- end to end

RUN = pd.DataFrame({"query_id": ["q1", "q1", "q2"], "doc_id": ["d1", "d2", "d1"], "score": [2.0, 1.0, 1.0]})
QRELS = pd.DataFrame({"query_id": ["q1", "q2"], "doc_id": ["d1", "d1"], "relevance": [1, 1]})


def _message(fn) -> str:
    with pytest.raises(ValueError) as info:
        fn()
    return str(info.value)


def test_evaluate_messages():
    assert _message(lambda: ef.evaluate(RUN, QRELS, "P@1", progress="yes")) == \
        "evaluate: progress must be True, False or None, got 'yes'"
    assert _message(lambda: ef.evaluate(RUN, QRELS, "P@1", no_relevant="keep")) == \
        "evaluate: no_relevant must be one of ['zero', 'drop'], got 'keep'"
    assert _message(lambda: ef.evaluate(RUN, QRELS, "P@1", ascending=1)) == \
        "evaluate: ascending must be True or False, got 1"


def test_aggregate_message():
    per_q = ef.evaluate(RUN, QRELS, "P@1")
    assert _message(lambda: ef.aggregate(per_q, by=3)) == \
        "aggregate: by must be a column name or a list of them or None, got 3"


def test_type_errors_of_data_arguments():
    with pytest.raises(TypeError, match=r"^judge: pairs must be a Pool \(ef.pool\) or a DataFrame of query_id, "
                                        r"doc_id, got list$"):
        ef.judge([("q1", "d1")], lambda batch: [1] * len(batch))


def test_measures_and_stages_of_the_wrong_type():
    assert _message(lambda: ef.evaluate(RUN, QRELS, 123)) == \
        "measures must be a measure name, a Measure or a list of them (e.g. ['nDCG@10', 'R@5']), got 123"
    assert _message(lambda: ef.report(RUN, QRELS, measures="P@1", stages=3)) == \
        "stages must be a list of system names (first stage first) or a dict {system: k}, got int"


def test_index_recall_message():
    assert _message(lambda: ef.index_recall(RUN, RUN, k=True)) == "index_recall: k must be an int >= 1, got True"


def test_report_messages():
    assert _message(lambda: ef.report(RUN, QRELS, measures="P@1", confidence=1.0)) == \
        "report: confidence must be a float in (0, 1), got 1.0"
    assert _message(lambda: ef.report(RUN, QRELS, measures="P@1", n_resamples=True)) == \
        "report: n_resamples must be an int >= 1, got True"
    assert _message(lambda: ef.report(RUN, QRELS, measures="P@1", correction="x")) == \
        "report: correction must be None or one of ['holm', 'bonferroni', 'bh', 'none', 'tukey', " \
        "'randomized-tukey'], got 'x'"


def test_stats_messages():
    per_q = ef.evaluate(pd.concat([RUN.assign(system="a"), RUN.assign(system="b")]), QRELS, "P@1")
    assert _message(lambda: stats.compare(per_q, seed=np.int64(-1))) == \
        f"compare: seed must be an int >= 0, got {np.int64(-1)!r}"
    assert _message(lambda: stats.compare(per_q, confidence=math.nan)) == \
        "compare: confidence must be a float in (0, 1), got nan"
    assert _message(lambda: stats.compare(per_q, n_resamples=False)) == \
        "compare: n_resamples must be an int >= 1, got False"
    stats.compare(per_q, seed=np.int64(3), n_resamples=np.int32(50), test="randomization")  # numpy ints taken


def test_measure_parameter_messages():
    assert _message(lambda: ef.parse_measure("RBP(p=2)")) == "RBP: p must be a number in [0, 1], got 2"
    assert _message(lambda: ef.parse_measure("RBP(p=nan)")).startswith("RBP: p must be a number in [0, 1], got ")
    assert _message(lambda: ef.parse_measure("P@0")) == "P: k must be an int >= 1, got 0"
