"""Arrow's compute functions without importing ``pyarrow.compute``.

Importing ``pyarrow.compute`` writes a docstring and a signature for each of Arrow's 286
functions: 30-35 ms, about 15% of ``evalframe trec-eval``'s start-up on a two-line file
(issue 31).  This module calls the same kernels through Arrow's function registry and
builds a function's wrapper on first use, so ``from evalframe import _arrow_compute as pc``
reads as ``pyarrow.compute`` does: ``pc.sort_indices(values, sort_keys=[...])``,
``pc.match_substring_regex(ids, "^x")``, ``pc.SortOptions``; positional arguments past
the function's arity and keyword arguments build its options class, as in pyarrow.

``cast``, ``take`` and ``fill_null``, which pyarrow writes in Python, are written here the same way;
every other name pyarrow writes in Python (``field``, ``index``, ...) comes from
``pyarrow.compute`` itself, imported on that first use.  So do all names when pyarrow's
compute extension does not offer the registry this module reads (then this module is
``pyarrow.compute``, at its import cost).

pyarrow's own methods (``Array.cast``, ``take``, ``filter``, ``unique``, ``Table.sort_by``)
import ``pyarrow.compute``: code on ``evalframe trec-eval``'s path calls the functions here
instead (a fresh-process test checks the command leaves ``pyarrow.compute`` unloaded).
"""
from __future__ import annotations

try:
    from pyarrow import _compute as _kernels
    _REGISTRY = _kernels.function_registry()
    _kernels.CastOptions.safe  # noqa: B018 (names used below)
    _kernels.Expression._call  # noqa: B018
except (ImportError, AttributeError):  # pragma: no cover (a pyarrow that moved its extension's names)
    _REGISTRY = None

#: pyarrow.compute's names for the registry itself, taken from its extension as it takes them
_REGISTRY_NAMES = frozenset({"call_function", "function_registry", "get_function", "list_functions"})
# Names pyarrow.compute writes in Python over the kernels, or in a different shape:
# taken from it (``cast``, ``take`` and ``fill_null`` are written below).
_PYTHON_ONLY = frozenset({"index", "top_k_unstable", "bottom_k_unstable", "random", "field",
                          "scalar", "utf8_zfill"})


def cast(arr, target_type=None, safe=None, options=None, memory_pool=None):
    """``pyarrow.compute.cast``: ``arr`` as ``target_type`` (``safe=False``: without overflow checks)."""
    if options is None:
        import pyarrow as pa
        target_type = pa.types.lib.ensure_type(target_type)
        options = _kernels.CastOptions.unsafe(target_type) if safe is False \
            else _kernels.CastOptions.safe(target_type)
    elif safe is not None or target_type is not None:
        raise ValueError("Must either pass values for 'target_type' and 'safe' or pass a value for 'options'")
    return _kernels.call_function("cast", [arr], options, memory_pool)


def take(data, indices, *, boundscheck=True, memory_pool=None):
    """``pyarrow.compute.take``: the values of ``data`` at ``indices``."""
    return _kernels.call_function("take", [data, indices], _kernels.TakeOptions(boundscheck=boundscheck),
                                  memory_pool)


def fill_null(values, fill_value):
    """``pyarrow.compute.fill_null``: ``values`` with each null replaced by ``fill_value``
    (a scalar or an array of the same length)."""
    import pyarrow as pa
    if not isinstance(fill_value, (pa.Array, pa.ChunkedArray, pa.Scalar)):
        fill_value = pa.scalar(fill_value, type=values.type)
    elif values.type != fill_value.type:
        fill_value = pa.scalar(fill_value.as_py(), type=values.type)
    return _kernels.call_function("coalesce", [values, fill_value])


def _wrapper(name: str):
    func = _REGISTRY.get_function("and" if name == "and_" else "or" if name == "or_" else name)
    arity = func.arity
    options_name = func._doc.options_class
    options_class = getattr(_kernels, options_name) if options_name else None

    def call(*args, memory_pool=None, options=None, **kwargs):
        values, option_args = (args, ()) if arity is Ellipsis else (args[:arity], args[arity:])
        if arity is not Ellipsis and len(values) < arity:
            raise TypeError(f"{name} takes {arity} positional argument(s), but {len(values)} were given")
        if options_class is None:
            if option_args or kwargs or options is not None:
                raise TypeError(f"{name} takes {arity} positional argument(s) and no options")
        elif option_args or kwargs:
            if options is not None:
                raise TypeError(f"Function {name!r} called with both an 'options' argument and additional arguments")
            options = options_class(*option_args, **kwargs)
        elif isinstance(options, dict):
            options = options_class(**options)
        elif options is not None and not isinstance(options, options_class):
            raise TypeError(f"Function {name!r} expected a {options_class} parameter, got {type(options)}")
        if values and isinstance(values[0], _kernels.Expression):
            return _kernels.Expression._call(func.name, list(values), options)
        return func.call(values, options, memory_pool)

    call.__name__ = call.__qualname__ = name
    call.__doc__ = f"Arrow's compute function {func.name!r} (as pyarrow.compute.{name})."
    return call


def __getattr__(name: str):
    if name.startswith("_"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    if _REGISTRY is None or name in _PYTHON_ONLY:
        import pyarrow.compute
        value = getattr(pyarrow.compute, name)
    elif name[:1].isupper() or name in _REGISTRY_NAMES:  # options classes, Expression, call_function
        value = getattr(_kernels, name)
    else:
        try:
            value = _wrapper(name)
        except KeyError:  # not a function: pyarrow.compute raises the AttributeError, if any
            import pyarrow.compute
            value = getattr(pyarrow.compute, name)
    globals()[name] = value
    return value


if _REGISTRY is None:  # pragma: no cover (every name from pyarrow.compute, through __getattr__)
    del cast, take, fill_null
