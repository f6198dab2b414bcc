"""What a wheel ships: every package of evalframe/ is listed in pyproject.toml (a package
left out installs in editable mode, which finds it by path, and is missing from a wheel)."""
from __future__ import annotations

import pathlib
import tomllib

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_every_package_directory_is_listed_in_pyproject():
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "evalframe").rglob("__init__.py")
             if "__pycache__" not in p.parts}
    assert found - listed == set(), f"packages missing from pyproject.toml: {sorted(found - listed)}"
