"""The package's import structure, read with ``ast`` (nothing is imported):

- the layer order is the README's "Layout" list (written once, there): a module imports
  only modules of its own layer or of layers above it in that list;
- no import cycle between modules (a module = one .py file), also inside a package;
- no private name (``_x``, not a dunder) of one module used from another.
"""
from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "evalframe"


def layer_order() -> list[list[str]]:
    """The README's Layout list: each bullet names the modules of one layer."""
    text = (ROOT / "README.md").read_text()
    section = text.split("\n## Layout", 1)[1].split("\n## ", 1)[0]
    layers = []
    for line in section.splitlines():
        if line.startswith("- `"):
            names = re.findall(r"`evalframe/([\w/]+?)(?:\.py|/)`", line.split(":", 1)[0])
            layers.append([n.split("/")[0] for n in names])
    return layers


def modules() -> dict[str, Path]:
    """Dotted module name (``measures.base``, ``io``) -> file; ``__init__`` files as the package."""
    out = {}
    for path in PKG.rglob("*.py"):
        rel = path.relative_to(PKG).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def resolve(module: str, node: ast.ImportFrom | ast.Import, is_package: bool) -> list[tuple[str, list[str]]]:
    """(imported module, names taken from it) for one import statement, evalframe modules only."""
    if isinstance(node, ast.Import):
        return [(a.name.removeprefix("evalframe").lstrip("."), []) for a in node.names
                if a.name == "evalframe" or a.name.startswith("evalframe.")]
    if node.level:
        base = module.split(".") if module else []
        if not is_package:
            base = base[:-1]
        base = base[: len(base) - (node.level - 1)]
        target = ".".join(base + ([node.module] if node.module else []))
    elif node.module and (node.module == "evalframe" or node.module.startswith("evalframe.")):
        target = node.module.removeprefix("evalframe").lstrip(".")
    else:
        return []
    return [(target, [a.name for a in node.names])]


def graph():
    mods = modules()
    edges: dict[str, set[str]] = {m: set() for m in mods}
    private: list[str] = []
    for mod, path in mods.items():
        tree = ast.parse(path.read_text(), str(path))
        is_package = path.name == "__init__.py"
        for node in ast.walk(tree):
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            for target, names in resolve(mod, node, is_package):
                for name in names:
                    sub = f"{target}.{name}" if target else name
                    if sub in mods:  # `from . import stats` imports a module
                        edges[mod].add(sub)
                    else:
                        if target in mods and target != mod:
                            edges[mod].add(target)
                        if name.startswith("_") and not name.startswith("__") and sub not in mods:
                            private.append(f"{mod}: from {target or 'evalframe'} import {name}")
                if not names and target in mods:
                    edges[mod].add(target)
    return mods, edges, private


def test_the_package_is_found():
    assert {"io", "schema", "ranking", "evaluation"} <= set(modules())


def test_readme_layout_lists_every_top_level_module():
    listed = {n for layer in layer_order() for n in layer}
    top = {m.split(".")[0] for m in modules() if m}
    assert top - listed == set(), "modules missing from README Layout"
    assert listed - top == set(), "README Layout names modules that do not exist"


def test_imports_follow_the_layer_order():
    rank = {n: i for i, layer in enumerate(layer_order()) for n in layer}
    _, edges, _ = graph()
    bad = [f"{a} -> {b}" for a, targets in edges.items() if a for b in targets
           if b and rank[b.split(".")[0]] > rank[a.split(".")[0]]]
    assert bad == [], "imports against the README's layer order"


def test_no_import_cycles():
    _, edges, _ = graph()
    edges = {a: {b for b in bs if b} for a, bs in edges.items() if a}  # the package facade is exempt
    state: dict[str, int] = {}
    cycles = []

    assert find_cycles(edges) == []


def find_cycles(edges: dict[str, set[str]]) -> list[str]:
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    cycles: list[str] = []

    def visit(node: str, stack: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                cycles.append(" -> ".join(stack[stack.index(nxt):] + [nxt]))
            elif nxt not in state:
                visit(nxt, stack + [nxt])
        state[node] = 2

    for n in sorted(edges):
        if n not in state:
            visit(n, [n])
    return cycles


def test_no_private_names_across_modules():
    _, _, private = graph()
    assert private == []


def test_no_private_attribute_of_another_module():
    """``module._name`` where ``module`` was imported from evalframe."""
    bad = []
    for mod, path in modules().items():
        tree = ast.parse(path.read_text())
        aliases = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").startswith("evalframe")):
                aliases |= {a.asname or a.name for a in node.names}
            elif isinstance(node, ast.Import):
                aliases |= {a.asname or a.name for a in node.names if a.name.startswith("evalframe")}
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                    and node.value.id in aliases and node.attr.startswith("_")
                    and not node.attr.startswith("__")):
                bad.append(f"{mod}: {node.value.id}.{node.attr}")
    assert bad == []


@pytest.mark.parametrize("source, expected", [
    ("from .x import _y", ["m: from x import _y"]),
    ("from evalframe.x import _y", ["m: from x import _y"]),
    ("from .x import y", []),
])
def test_the_private_name_check_can_fail(tmp_path, monkeypatch, source, expected):
    """The checker itself catches what it claims to (a test that cannot fail is a defect)."""
    (tmp_path / "m.py").write_text(source + "\n")
    (tmp_path / "x.py").write_text("y = _y = 1\n")
    monkeypatch.setattr(sys.modules[__name__], "PKG", tmp_path)
    _, _, private = graph()
    assert private == expected


def test_the_cycle_check_can_fail(tmp_path, monkeypatch):
    (tmp_path / "a.py").write_text("from . import b\n")
    (tmp_path / "b.py").write_text("from .a import f\n")
    monkeypatch.setattr(sys.modules[__name__], "PKG", tmp_path)
    _, edges, _ = graph()
    assert find_cycles(edges) == ["a -> b -> a"]


def test_notebooks_and_benchmarks_import_no_internal_module():
    """What users read (the tutorials) and run (the benchmarks) imports no internal module
    (``evalframe._x``, issue 32): internals may change without notice."""
    import json
    pattern = re.compile(r"(?:from|import)\s+evalframe\._(?!_)\w+|from\s+evalframe\s+import\s+_(?!_)\w+")
    found = []
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        cells = json.loads(path.read_text())["cells"]
        code = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
        found += [f"{path.name}: {m}" for m in pattern.findall(code)]
    for path in sorted((ROOT / "benchmarks").glob("*.py")):
        found += [f"{path.name}: {m}" for m in pattern.findall(path.read_text())]
    assert found == []
    assert pattern.findall("from evalframe._judged import Judged\nimport evalframe.__init__") == [
        "from evalframe._judged"], "the check can fail"
