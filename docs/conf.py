"""Sphinx configuration of evalframe's documentation site.

Build it with ``make docs`` (warnings are errors).  Nothing here reads the
network: no intersphinx inventories, no remote images.  The theme loads MathJax
from its CDN when a page with a formula is *viewed*; the build itself is offline.

The tutorials are the notebooks of ``notebooks/``, stored without outputs.
:func:`copy_notebooks` copies each one into ``docs/tutorials/`` (not committed):
the executed copy that ``tests/test_notebooks.py`` leaves in ``build/notebooks/``
when it is newer than the notebook and than every file of the package and has
the same code cells (``make test`` runs the suite first, so the notebooks run
once), otherwise the stored notebook, which myst-nb then executes (its
``auto`` mode executes a notebook without outputs) and a failing cell fails
the build.
"""
from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(ROOT))

import evalframe  # noqa: E402

project = "evalframe"
author = "evalframe developers"
copyright = "evalframe developers, MIT licence"
release = evalframe.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    # MathJax from the site's own _static/, not a CDN: the pages read nothing from the
    # network when opened (sphinx.ext.mathjax alone points at cdn.jsdelivr.net).
    "sphinx-mathjax-offline",
    "numpydoc",
    "myst_nb",
]

source_suffix = {".rst": "restructuredtext", ".md": "myst-nb", ".ipynb": "myst-nb"}
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store", "**.ipynb_checkpoints"]
templates_path = ["_templates"]
root_doc = "index"

# -- warnings as errors, references checked ----------------------------------
nitpicky = True
# Types from other libraries are not linked (no intersphinx: the build is
# offline); the package's own names must resolve.
nitpick_ignore_regex = [
    (r"py:.*", r"(pandas|pd|numpy|np|matplotlib|scipy|pyarrow|fsspec|warnings|os|pathlib|typing|collections|dataclasses|enum)(\..*)?"),
    (r"py:.*", r"(str|int|float|bool|bytes|dict|list|tuple|set|frozenset|object|type|None|callable|iterable|sequence|mapping|optional|default|array-like|array_like|path-like|file-like|DataFrame|Series|Axes|Figure|ndarray|Path|PathLike|Sequence|Mapping|Iterable|Callable|Literal|Any|ParamSpec|Judged|Ties|Missing)"),
    (r"py:.*", r".*\b(or|of|optional|default)\b.*"),
    (r"py:.*", r"['\"].*['\"]"),
    (r"py:.*", r"[0-9.,\[\]() -]+"),
    (r"py:.*", r"(.*\.)?_\w+"),          # private helpers named in a module's layout notes
    (r"py:data", r"MAX_EXAMPLES"),        # evalframe.ranking's constant, not in its __all__
]

# -- autodoc / autosummary / numpydoc ----------------------------------------
autosummary_generate = True
autosummary_imported_members = True
autodoc_typehints = "none"            # numpydoc's Parameters section says the types
numpydoc_show_class_members = False   # class pages list their members through the template
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False

# -- MyST and the notebooks --------------------------------------------------
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "deflist"]
myst_heading_anchors = 3
nb_execution_mode = "auto"
nb_execution_raise_on_error = True
nb_execution_timeout = 300
nb_execution_show_tb = True
nb_merge_streams = True

# -- HTML --------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"evalframe {release}"
html_static_path = ["_static"]
html_css_files = ["evalframe.css"]  # tutorial outputs scroll inside their cells
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "header_links_before_dropdown": 6,
    "navbar_end": ["theme-switcher"],
    "footer_start": ["copyright"],
    "footer_end": [],
}
# pages without sub-pages: no empty "Section Navigation" column
html_sidebars = {"index": [], "getting_started": [], "trec_eval": []}
html_show_sourcelink = False
html_copy_source = False


def _code_cells(nb: dict) -> list[str]:
    return ["".join(c["source"]) if isinstance(c["source"], list) else c["source"]
            for c in nb.get("cells", []) if c.get("cell_type") == "code"]


def copy_notebooks(*, src: Path = ROOT / "notebooks", executed: Path = ROOT / "build" / "notebooks",
                   dest: Path = DOCS / "tutorials") -> dict[str, str]:
    """Copy the tutorial notebooks into the docs, preferring fresh executed copies.

    An executed copy is used when it is newer than its notebook and than every
    file of the package, and has the same code cells; it is marked
    ``mystnb.execution_mode = "off"`` (myst-nb's ``auto`` mode would execute any
    notebook with one code cell without output).  Returns
    ``{notebook name: "executed" | "source"}``: which copy each page renders.
    """
    package_mtime = max(p.stat().st_mtime for p in (ROOT / "evalframe").rglob("*.py"))
    used = {}
    for nb_path in sorted(src.glob("[0-9][0-9]_*.ipynb")):
        source = json.loads(nb_path.read_text(encoding="utf-8"))
        ran = executed / nb_path.name
        chosen = source
        if ran.exists() and ran.stat().st_mtime > max(nb_path.stat().st_mtime, package_mtime):
            nb = json.loads(ran.read_text(encoding="utf-8"))
            if _code_cells(nb) == _code_cells(source):
                nb.setdefault("metadata", {})["mystnb"] = {"execution_mode": "off"}
                chosen = nb
        text = json.dumps(chosen, indent=1, ensure_ascii=False) + "\n"
        target = dest / nb_path.name
        if not target.exists() or target.read_text(encoding="utf-8") != text:
            target.write_text(text, encoding="utf-8")
        used[nb_path.name] = "source" if chosen is source else "executed"
    return used



# -- references to re-exported names -----------------------------------------
# Docstrings name objects where they are defined (``evalframe.measures.parse_measure``,
# ``judge`` inside evalframe.ranking); the site documents each object once, under
# its public name (``evalframe.parse_measure``).  A reference Sphinx cannot resolve
# is looked up by identity: the object it names, imported, under the name it is
# documented with.  Anything else still fails the build (nitpicky).

def _lookup(path: str):
    """The object a dotted path names (module attributes and class members), or None."""
    import importlib

    parts = path.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        try:
            for p in parts[i:]:
                obj = obj.__dict__[p] if isinstance(obj, type) and p in obj.__dict__ else getattr(obj, p)
        except AttributeError:
            return None
        return obj
    return None


def _documented(env) -> dict[int, str]:
    cache = getattr(env, "_evalframe_documented", None)
    if cache is None or len(cache[0]) != len(env.get_domain("py").objects):
        objects = env.get_domain("py").objects
        by_id = {}
        for name in sorted(objects, key=lambda n: (n.count("."), n)):   # shortest public name wins
            obj = _lookup(name)
            if obj is not None and not isinstance(obj, (int, float, str, bool, tuple)):
                by_id.setdefault(id(obj), name)
        cache = (dict(objects), by_id)
        env._evalframe_documented = cache
    return cache[1]


def _resolve_alias(app, env, node, contnode):
    if node.get("refdomain") != "py":
        return None
    target = node["reftarget"].lstrip("~.")
    mod, cls = node.get("py:module"), node.get("py:class")
    candidates = [target]
    if mod:
        candidates[:0] = [f"{mod}.{cls}.{target}"] if cls else []
        candidates.append(f"{mod}.{target}")
        package = mod.rsplit(".", 1)[0]
        candidates.append(f"{package}.{target}")
    # where the docstring was written: "...py:docstring of evalframe.reporting.build.report"
    import re
    where = re.search(r"docstring of ([\w.]+)", str(node.source or ""))
    if where:
        parts = where.group(1).split(".")
        candidates += [".".join(parts[:i] + [target]) for i in range(len(parts), 0, -1)]
    candidates.append(f"evalframe.{target}")
    domain = env.get_domain("py")
    for cand in candidates:
        if cand in domain.objects or cand in domain.modules:
            name = cand
        else:
            obj = _lookup(cand)
            if obj is None or isinstance(obj, (int, float, str, bool, tuple)):
                continue
            name = _documented(env).get(id(obj))
            if name is None:
                continue
        new = domain.resolve_any_xref(env, node["refdoc"], app.builder, name, node, contnode)
        if new:
            return new[0][1]
    # a short name documented exactly once ("DEFAULT_MEASURES" in a summary line)
    if "." not in target:
        names = [n for n in domain.objects if n.endswith("." + target)]
        if len(names) == 1:
            new = domain.resolve_any_xref(env, node["refdoc"], app.builder, names[0], node, contnode)
            if new:
                return new[0][1]
    return None


# -- the measure families' tables --------------------------------------------
from sphinx.util.docutils import SphinxDirective  # noqa: E402


def family_rows(module: str) -> list[list[str]]:
    """One row per registered family whose function lives in ``module``."""
    import re

    from evalframe.measures import FAMILIES

    rows = []
    for fam in FAMILIES.values():
        if fam.fn.__module__ != module:
            continue
        name = f"``{fam.name}@k``" if fam.cutoff == "required" else (
            f"``{fam.name}``, ``{fam.name}@k``" if fam.cutoff == "optional" else f"``{fam.name}``")
        params = ", ".join(f"``{k}={p.default!r}``" for k, p in fam.params.items()) or "none"
        trec = ", ".join("``" + re.sub(r"\(\\d\+\)", "k", re.sub(r"\(\\d\*.*\)", "x", pat)) + "``"
                         for pat, _ in fam.trec_names) or "none"
        aliases = ", ".join(f"``{a}``" for a in fam.aliases) or "none"
        rows.append([name, (fam.doc or "").replace("*", "\\*"), params, fam.aggregation, aliases, trec])
    return rows


class MeasureFamilies(SphinxDirective):
    """``.. measure-families:: evalframe.measures.cutoff``: the registry's table of them."""

    required_arguments = 1

    def run(self):
        rows = family_rows(self.arguments[0])
        if not rows:
            raise self.error(f"no registered family in {self.arguments[0]}")
        lines = [".. list-table::", "   :header-rows: 1", "",
                 "   * - name", "     - meaning", "     - parameters (defaults)", "     - aggregation",
                 "     - aliases", "     - trec_eval names"]
        for r in rows:
            lines.append(f"   * - {r[0]}")
            lines.extend(f"     - {c}" for c in r[1:])
        # the table is reStructuredText whatever the page's own markup (MyST pages too)
        from docutils.parsers.rst import Parser
        from docutils.utils import new_document

        doc = new_document("<measure-families>", self.state.document.settings)
        Parser().parse("\n".join(lines), doc)
        return doc.children


# -- constants re-exported from internal modules -------------------------------
# evalframe.schema and evalframe.ranking list names defined in internal modules
# (``evalframe._id_bytes``, ``evalframe._judged``...).  A constant's documentation is
# the ``#:`` comment where it is defined, which autodoc reads only in the module it
# documents (and without one it leaves the constant out): the comment is given to the
# public module's analyzer, read from the internal module that defines the constant.

def _reexported_constant_docs(app) -> None:
    import importlib
    import inspect
    import pkgutil

    from sphinx.pycode import ModuleAnalyzer

    internal = [importlib.import_module(info.name)
                for info in pkgutil.iter_modules(evalframe.__path__, "evalframe.")
                if info.name.rpartition(".")[2].startswith("_")]
    for public in ("evalframe.schema", "evalframe.ranking"):
        module = importlib.import_module(public)
        analyzer = ModuleAnalyzer.for_module(public)
        analyzer.analyze()
        for name in module.__all__:
            value = getattr(module, name)
            if ("", name) in analyzer.attr_docs or inspect.isfunction(value) or inspect.isclass(value):
                continue
            for home in internal:
                if vars(home).get(name, None) is value:
                    comment = ModuleAnalyzer.for_module(home.__name__).find_attr_docs().get(("", name))
                    if comment:
                        analyzer.attr_docs["", name] = list(comment)
                        break


def setup(app):
    from sphinx.util import logging

    used = copy_notebooks()
    logging.getLogger(__name__).info(
        "tutorials: %s", ", ".join(f"{name} ({how})" for name, how in used.items()))
    app.connect("missing-reference", _resolve_alias)
    app.connect("builder-inited", _reexported_constant_docs)
    app.add_directive("measure-families", MeasureFamilies)
