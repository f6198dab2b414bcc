"""evalframe._arrow_compute against its oracle, pyarrow.compute: the same kernels, called
through Arrow's function registry without pyarrow.compute's 30 ms import."""
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as oracle
import pytest

from evalframe import _arrow_compute as pc

PACKAGE = Path(__file__).resolve().parents[1] / "evalframe"


def _names_used() -> set[str]:
    """Every ``pc.NAME`` in evalframe's source."""
    return {m for f in PACKAGE.rglob("*.py") for m in re.findall(r"\bpc\.([A-Za-z_]\w*)", f.read_text())}


def test_every_name_evalframe_uses_is_pyarrow_computes_function_or_class():
    names = _names_used()
    assert {"sort_indices", "index_in", "cast", "take", "equal"} <= names  # the scan finds them
    for name in sorted(names):
        ours, theirs = getattr(pc, name), getattr(oracle, name)
        if isinstance(theirs, type):
            assert ours is theirs, name
        elif hasattr(theirs, "__arrow_compute_function__"):  # a registry function: same options class
            meta = theirs.__arrow_compute_function__
            assert ours.__name__ == name
            if meta["options_class"]:
                assert getattr(pc, meta["options_class"]) is getattr(
                    oracle, meta["options_class"]), name


def test_what_pyarrow_writes_in_python_over_a_registry_name_is_pyarrows_or_written_alike():
    """A name pyarrow.compute defines in Python over a kernel of the same name (``cast``,
    ``take``, ``index``, ``random``; a later pyarrow may add one): the stand-in takes
    pyarrow's function, or is one of the three written alike (tested below)."""
    registry = set(oracle.function_registry().list_functions())
    written = {"cast", "take", "fill_null"}
    overrides = [n for n, v in vars(oracle).items() if callable(v) and not isinstance(v, type)
                 and not hasattr(v, "__arrow_compute_function__") and n in registry]
    assert {"cast", "take"} <= set(overrides)
    for name in overrides:
        assert name in written or getattr(pc, name) is getattr(oracle, name), name
    for name in ("call_function", "list_functions", "get_function", "function_registry"):
        assert getattr(pc, name) is getattr(oracle, name)


def _same(a, b):
    assert type(a) is type(b)
    assert a.equals(b) if hasattr(a, "equals") else a == b


values = pa.array([3, 1, None, 2, 1, 7])
strings = pa.array(["b", "a", None, "ab", "a", "ca"])
CALLS = [
    ("sort_indices", (values,), {}),
    ("sort_indices", (strings,), {"sort_keys": [("", "descending", "at_start")]}),
    ("sort_indices", (values,), {"options": oracle.SortOptions([("", "descending")])}),
    ("index_in", (strings,), {"value_set": pa.array(["a", "ca"])}),
    ("is_in", (values,), {"value_set": pa.array([1, 7]), "skip_nulls": True}),
    ("match_substring_regex", (strings, "^a"), {}),  # an option given by position
    ("match_substring_regex", (strings,), {"options": {"pattern": "b$"}}),  # options as a dict
    ("equal", (values, 1), {}),
    ("and_", (pa.array([True, False, None]), pa.array([True, True, True])), {}),
    ("binary_join", (pa.array([["a", "b"], ["c"]]), "-"), {}),
    ("min_max", (values,), {}),
    ("min_max", (values,), {"skip_nulls": False}),
    ("unique", (strings,), {}),
    ("dictionary_encode", (strings,), {"null_encoding": "encode"}),
    ("fill_null", (values, 0), {}),
    ("fill_null", (values, pa.array([9] * 6)), {}),
    ("fill_null", (pa.array([1.5, None]), pa.scalar(2, pa.int64())), {}),
    ("cast", (values, pa.float64()), {}),
    ("cast", (pa.array([300]), pa.int8()), {"safe": False}),
    ("cast", (values,), {"options": oracle.CastOptions.safe(pa.string())}),
    ("take", (strings, pa.array([5, 0, 2])), {}),
    ("take", (pa.table({"x": values}), pa.array([1, 1])), {}),
    ("filter", (values, pa.array([True, False, None, True, True, False])), {}),
    ("rank", (values,), {"sort_keys": "descending", "tiebreaker": "first"}),
    ("run_end_encode", (pa.array([1, 1, 2]),), {}),
    ("list_flatten", (pa.array([[1], [2, 3]]),), {}),
    ("select_k_unstable", (values,), {"k": 2, "sort_keys": [("dummy", "descending")]}),
]


@pytest.mark.parametrize("name, args, kwargs", CALLS, ids=[f"{c[0]}-{i}" for i, c in enumerate(CALLS)])
def test_a_call_gives_what_pyarrow_compute_gives(name, args, kwargs):
    _same(getattr(pc, name)(*args, **kwargs), getattr(oracle, name)(*args, **kwargs))


def test_chunked_arrays_and_expressions():
    ch = pa.chunked_array([[1, 2], [2, None]])
    _same(pc.equal(ch, 2), oracle.equal(ch, 2))
    _same(pc.cast(ch, pa.string()), oracle.cast(ch, pa.string()))
    assert str(pc.equal(oracle.field("x"), 1)) == str(oracle.equal(oracle.field("x"), 1))
    assert pc.field is oracle.field  # written in Python by pyarrow: taken from it


MISUSES = [
    ("cast", (pa.array([300]), pa.int8()), {}),  # safe by default: an overflow is refused
    ("cast", (values, pa.int8()), {"options": oracle.CastOptions.safe(pa.int8())}),
    ("equal", (values,), {}),
    ("equal", (values, 1, 2), {}),
    ("equal", (values, 1), {"options": {}}),
    ("sort_indices", (values,), {"options": oracle.SortOptions(), "sort_keys": [("", "ascending")]}),
    ("sort_indices", (values,), {"options": oracle.CastOptions.safe(pa.int8())}),  # another options class
    ("is_in", (values,), {"options": oracle.SortOptions()}),
]


@pytest.mark.parametrize("name, args, kwargs", MISUSES, ids=[f"{c[0]}-{i}" for i, c in enumerate(MISUSES)])
def test_misuse_is_refused_as_pyarrow_refuses_it(name, args, kwargs):
    with pytest.raises(Exception) as theirs:
        getattr(oracle, name)(*args, **kwargs)
    with pytest.raises(theirs.type):
        getattr(pc, name)(*args, **kwargs)


def test_unknown_and_private_names_are_attribute_errors():
    with pytest.raises(AttributeError):
        pc.no_such_function  # noqa: B018
    with pytest.raises(AttributeError):
        pc._private  # noqa: B018


def test_wrappers_are_built_once_on_first_use():
    first = pc.not_equal
    assert pc.not_equal is first and "not_equal" in vars(pc)
    np.testing.assert_array_equal(first(pa.array([1, 2]), 1).to_numpy(zero_copy_only=False), [False, True])


def test_importing_it_leaves_pyarrow_compute_unloaded():
    # (pyarrow.array of a list imports pandas, which imports pyarrow.compute: numpy in, numpy out)
    code = ("import sys, numpy as np, pyarrow as pa\nfrom evalframe import _arrow_compute as pc\n"
            "from evalframe._arrow_numpy import arrow_of, numpy_of\n"
            "assert numpy_of(pc.sort_indices(arrow_of(np.array([2, 1])))).tolist() == [1, 0]\n"
            "s = pc.take(pc.cast(arrow_of(np.array([1])), pa.string()), arrow_of(np.array([0, 0])))\n"
            "assert pc.all(pc.equal(s, pc.cast(arrow_of(np.array([1, 1])), pa.string()))).as_py()\n"
            "print(sorted({'pyarrow.compute', 'pandas'} & set(sys.modules)))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64, np.uint32, np.uint64, np.float64, np.bool_])
def test_distinct_is_numpys_unique(dtype):
    """_arrow_numpy.distinct (Arrow's hash, then a sort) against np.unique: random values
    with repeats, empty, one value, extremes of the type, a non-contiguous view."""
    from evalframe._arrow_numpy import distinct
    rng = np.random.default_rng(3)
    info = np.iinfo(dtype) if np.dtype(dtype).kind in "iu" else None
    cases = [rng.integers(0, 50, 1000), np.zeros(0), np.array([7]), rng.integers(0, 3, 200_000)]
    if info is not None:
        cases.append(np.array([info.max, info.min, info.max, 0, info.min]))
    if np.dtype(dtype) == np.float64:
        cases.append(np.array([np.nan, 1.0, np.nan, -0.0, 0.0, np.inf]))
    for values in cases:
        values = values.astype(dtype)
        for v in (values, values[::3]):
            got = distinct(v)
            want = np.unique(v)
            assert got.dtype == want.dtype and np.array_equal(got, want, equal_nan=got.dtype.kind == "f")
