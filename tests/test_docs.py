"""The documentation's promises: every public function and class has a numpydoc
``Examples`` section with a doctest (pytest runs them: ``--doctest-modules``), and the
API reference (docs/api/index.rst) lists every public name.

The site itself is built by ``make docs`` (``make test`` runs it after the suite), with
warnings as errors.
"""
from __future__ import annotations

import importlib
import inspect
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
API_INDEX = ROOT / "docs" / "api" / "index.rst"

#: The public surface, listed here once: the packages whose ``__all__`` is what users import
#: (every function and class with an Examples section, every name in the API reference) ...
PUBLIC_MODULES = ["evalframe", "evalframe.stats", "evalframe.measures", "evalframe.plots",
                  "evalframe.datasets", "evalframe.reporting"]
#: ... and the modules a tool built on evalframe imports from (the warning categories, the span
#: helpers, the engines' partition contract, the drop-in trec_eval, the commands' entry point),
#: documented on the API reference's "Packages" and "Building blocks" pages.  No other module
#: of the package has an ``__all__``: internals are imported by name, inside the package.
EXTENSION_MODULES = ["evalframe.errors", "evalframe.spans", "evalframe.engine", "evalframe.trec_eval",
                     "evalframe.cli"]

#: public names without an Examples section yet, and why.
EXEMPT: dict[str, str] = {}


def _module(name: str):
    importlib.import_module(name)
    return sys.modules[name]   # evalframe.report is also the name of a function


def public_objects() -> dict[str, object]:
    """``{public name: object}`` of every public function and class, each object once,
    plus the public methods of :class:`evalframe.Report`."""
    out, seen = {}, set()
    for modname in PUBLIC_MODULES:
        mod = _module(modname)
        for name in mod.__all__:
            obj = getattr(mod, name)
            if inspect.ismodule(obj) or not (inspect.isclass(obj) or inspect.isfunction(obj)):
                continue
            if id(obj) in seen:
                continue
            seen.add(id(obj))
            out[f"{modname}.{name}"] = obj
    from evalframe import Report
    for name, value in vars(Report).items():
        if not name.startswith("_") and inspect.isfunction(value):
            out[f"evalframe.Report.{name}"] = value
    return out


def examples_section(doc: str) -> str | None:
    """The text of a numpydoc ``Examples`` section, or None."""
    m = re.search(r"^Examples\n-{8,}\n(.*?)(?=^\w[^\n]*\n-{3,}\n|\Z)", doc, flags=re.M | re.S)
    return m.group(1) if m else None


def test_examples_section_parser():
    doc = "Summary.\n\nExamples\n--------\n>>> 1 + 1\n2\n\nNotes\n-----\nText."
    assert examples_section(doc) == ">>> 1 + 1\n2\n\n"
    assert examples_section("Summary.\n\nNotes\n-----\n>>> 1\n") is None
    assert examples_section(inspect.cleandoc('''Summary.

        Examples
        --------
        >>> 2
        2
        ''')) == ">>> 2\n2"


def test_public_surface_is_found():
    names = public_objects()
    for expected in ("evalframe.evaluate", "evalframe.stats.compare", "evalframe.measures.GeoMean",
                     "evalframe.plots.plot_forest", "evalframe.datasets.load_sso",
                     "evalframe.reporting.top_changes", "evalframe.Report.to_markdown"):
        assert expected in names
    assert len(names) > 70


@pytest.mark.parametrize("name", sorted(public_objects()))
def test_public_name_has_examples(name):
    if name in EXEMPT:
        pytest.skip(EXEMPT[name])
    doc = inspect.getdoc(public_objects()[name]) or ""
    section = examples_section(doc)
    assert section is not None, f"{name} has no numpydoc 'Examples' section"
    assert ">>>" in section, f"{name}'s Examples section has no doctest"


def test_exemptions_are_still_needed():
    objects = public_objects()
    stale = [n for n in EXEMPT if n not in objects or examples_section(inspect.getdoc(objects[n]) or "")]
    assert not stale, f"remove from EXEMPT: {stale}"


def api_reference_names() -> set[str]:
    """Fully qualified names listed by the autosummary blocks of docs/api/index.rst."""
    names, current = set(), "evalframe"
    in_summary = False
    for line in API_INDEX.read_text(encoding="utf-8").splitlines():
        if line.startswith(".. currentmodule::"):
            current = line.split("::", 1)[1].strip()
        elif line.startswith(".. autosummary::"):
            in_summary = True
        elif in_summary and line.startswith("   ") and not line.strip().startswith(":"):
            entry = line.strip()
            names.add(entry if entry.startswith("evalframe") else f"{current}.{entry}")
        elif line and not line.startswith(" "):
            in_summary = False
    return names


def test_api_reference_lists_every_public_name():
    listed = api_reference_names()
    listed_ids = set()
    for full in listed:
        modname, _, attr = full.rpartition(".")
        try:
            listed_ids.add(id(getattr(_module(modname), attr)))
        except (ImportError, AttributeError, KeyError):
            pass
    missing = [n for n, obj in public_objects().items()
               if not n.startswith("evalframe.Report.") and id(obj) not in listed_ids
               and n not in EXEMPT]
    assert not missing, f"add to docs/api/index.rst: {missing}"


def _load_conf():
    pytest.importorskip("sphinx")
    pytest.importorskip("myst_nb")
    import importlib.util

    spec = importlib.util.spec_from_file_location("evalframe_docs_conf", ROOT / "docs" / "conf.py")
    conf = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(conf)
    return conf


def test_docs_render_fresh_executed_notebooks_only(tmp_path):
    """The site renders the suite's executed copy of a notebook only when it is fresh
    and has the notebook's code; otherwise the stored notebook, which myst-nb executes."""
    import json
    import os
    import time

    conf = _load_conf()
    src, ran, dest = tmp_path / "src", tmp_path / "ran", tmp_path / "dest"
    for d in (src, ran, dest):
        d.mkdir()

    def notebook(code, outputs):
        cell = {"cell_type": "code", "source": code, "metadata": {}, "execution_count": None,
                "outputs": outputs}
        return {"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}

    (src / "01_x.ipynb").write_text(json.dumps(notebook("1 + 1", [])))
    out = [{"output_type": "execute_result", "data": {"text/plain": "2"}, "metadata": {},
            "execution_count": 1}]
    (ran / "01_x.ipynb").write_text(json.dumps(notebook("1 + 1", out)))
    future = time.time() + 3600            # newer than the notebook and every package file
    os.utime(ran / "01_x.ipynb", (future, future))

    assert conf.copy_notebooks(src=src, executed=ran, dest=dest) == {"01_x.ipynb": "executed"}
    page = json.loads((dest / "01_x.ipynb").read_text())
    assert page["cells"][0]["outputs"] == out
    assert page["metadata"]["mystnb"] == {"execution_mode": "off"}

    (src / "01_x.ipynb").write_text(json.dumps(notebook("1 + 2", [])))   # code changed
    os.utime(src / "01_x.ipynb", (future - 10, future - 10))
    assert conf.copy_notebooks(src=src, executed=ran, dest=dest) == {"01_x.ipynb": "source"}
    assert json.loads((dest / "01_x.ipynb").read_text())["cells"][0]["outputs"] == []

    (src / "01_x.ipynb").write_text(json.dumps(notebook("1 + 1", [])))   # same code, but newer
    os.utime(src / "01_x.ipynb", (future + 10, future + 10))
    assert conf.copy_notebooks(src=src, executed=ran, dest=dest) == {"01_x.ipynb": "source"}


def test_only_the_listed_modules_have_an_all():
    """``__all__`` only where users look (issue 32): the modules listed above, and no other."""
    import ast
    package = ROOT / "evalframe"
    having = set()
    for path in package.rglob("*.py"):
        tree = ast.parse(path.read_text())
        if any(isinstance(n, (ast.Assign, ast.AugAssign)) and "__all__" in ast.dump(n) for n in tree.body):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            having.add(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    assert having == set(PUBLIC_MODULES) | set(EXTENSION_MODULES)


def test_the_extension_modules_export_what_they_define_or_gather():
    for modname in EXTENSION_MODULES:
        mod = _module(modname)
        assert mod.__all__ and all(hasattr(mod, n) for n in mod.__all__), modname
