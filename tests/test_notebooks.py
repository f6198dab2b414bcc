"""The tutorial notebooks: stored without outputs, and each one runs headless.

Every notebook asserts its own key numbers (the spec's worked example, index
recall ranges, interval widths shrinking like 1/sqrt(n), ...), so executing it
is a test: a silent regression in evalframe fails here.

Commit policy: notebooks are stored with outputs stripped. To strip them after
working in Jupyter::

    .venv/bin/python tests/test_notebooks.py --strip          # every notebook
    .venv/bin/python tests/test_notebooks.py --strip notebooks/03_how_many_questions.ipynb

Each executed notebook is also written (without the test's probe cell) to
``build/notebooks/``: the documentation build (``docs/conf.py``) renders those
copies when they are fresh instead of executing the notebooks a second time.

To run one notebook and keep the executed copy, or its plots as PNG files::

    .venv/bin/python tests/test_notebooks.py --run notebooks/01_quickstart.ipynb --out /tmp/01.ipynb
    .venv/bin/python tests/test_notebooks.py --run --images /tmp/plots   # every notebook
"""
from __future__ import annotations

import base64
import json
import os
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # `make test-fast` leaves this file out

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK_DIR = ROOT / "notebooks"
#: executed copies for the documentation build (docs/conf.py reads them)
EXECUTED_DIR = ROOT / "build" / "notebooks"
NOTEBOOKS = sorted(NOTEBOOK_DIR.glob("[0-9][0-9]_*.ipynb"))
KERNEL_NAME = "evalframe-notebook-test"
#: seconds for one notebook (all eight together take well under a minute on an idle machine)
CELL_TIMEOUT = 300


def strip_outputs(nb: dict) -> dict:
    """Remove outputs, execution counts and per-run metadata from a notebook (in place)."""
    for cell in nb.get("cells", []):
        if cell.get("cell_type") == "code":
            cell["outputs"] = []
            cell["execution_count"] = None
        md = cell.get("metadata", {})
        for key in ("execution", "collapsed", "scrolled"):
            md.pop(key, None)
    nb.get("metadata", {}).pop("widgets", None)
    return nb


def strip_file(path: Path) -> bool:
    """Strip one notebook file; return True when it changed."""
    import nbformat

    text = path.read_text(encoding="utf-8")
    nb = nbformat.reads(text, as_version=4)
    strip_outputs(nb)
    new = nbformat.writes(nb) + "\n"
    if new != text:
        path.write_text(new, encoding="utf-8")
        return True
    return False


def stored_problems(nb: dict) -> list[str]:
    """What breaks the commit policy: outputs or execution counts left in."""
    problems = []
    for i, cell in enumerate(nb.get("cells", [])):
        if cell.get("cell_type") != "code":
            continue
        if cell.get("outputs"):
            problems.append(f"cell {i} has {len(cell['outputs'])} outputs")
        if cell.get("execution_count") is not None:
            problems.append(f"cell {i} has execution_count {cell['execution_count']}")
    return problems


def _kernel_env(tmp: Path) -> dict:
    """A kernelspec that runs *this* interpreter (the venv's), found through JUPYTER_PATH."""
    from ipykernel.kernelspec import install

    install(kernel_name=KERNEL_NAME, prefix=str(tmp))
    spec = tmp / "share" / "jupyter" / "kernels" / KERNEL_NAME / "kernel.json"
    data = json.loads(spec.read_text())
    data["argv"][0] = sys.executable  # never a bare "python" resolved through PATH
    spec.write_text(json.dumps(data))
    return {"JUPYTER_PATH": str(tmp / "share" / "jupyter"), "MPLBACKEND": "module://matplotlib_inline.backend_inline"}


def execute(path: Path, workdir: Path):
    """Execute a notebook in memory and return the executed copy.

    A first cell, added only in memory, records the kernel's interpreter so the
    test can check that the venv's Python ran the notebook.
    """
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    probe = nbformat.v4.new_code_cell("import sys; print(sys.executable)")
    probe.id = "test-probe"
    nb.cells.insert(0, probe)
    client = NotebookClient(nb, kernel_name=KERNEL_NAME, timeout=CELL_TIMEOUT,
                            resources={"metadata": {"path": str(NOTEBOOK_DIR)}})
    old = {k: os.environ.get(k) for k in ("JUPYTER_PATH", "MPLBACKEND")}
    os.environ.update(_kernel_env(workdir))
    try:
        client.execute()
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return nb


def test_notebooks_exist():
    names = [p.name for p in NOTEBOOKS]
    assert names == ["01_quickstart.ipynb", "02_is_the_new_system_better.ipynb",
                     "03_how_many_questions.ipynb", "04_the_two_recalls.ipynb",
                     "05_unjudged_documents.ipynb", "06_evaluating_a_rag_retriever.ipynb",
                     "07_which_chunk_size.ipynb", "08_model_labels.ipynb"], names


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_stored_without_outputs(path):
    nb = json.loads(path.read_text(encoding="utf-8"))
    problems = stored_problems(nb)
    assert not problems, (f"{path.name} is stored with outputs ({'; '.join(problems[:5])}). "
                          "Strip it: .venv/bin/python tests/test_notebooks.py --strip")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_runs(path, tmp_path):
    pytest.importorskip("nbclient")
    nb = execute(path, tmp_path)
    probe = "".join(o.get("text", "") for o in nb.cells[0].outputs).strip()
    assert Path(probe).resolve() == Path(sys.executable).resolve(), (
        f"the notebook ran on {probe!r}, not on this interpreter {sys.executable!r}")
    # an error in any cell raises CellExecutionError inside execute(); a cell that
    # printed a traceback without raising would still show up here
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs
              if o.get("output_type") == "error"]
    assert not errors
    save_executed(nb, EXECUTED_DIR / path.name)


def save_executed(nb, target: Path) -> None:
    """Write an executed notebook without the probe cell (for the docs build)."""
    import nbformat

    nb = nbformat.from_dict(nb)
    nb.cells = [c for c in nb.cells if c.get("id") != "test-probe"]
    target.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, target)


def test_strip_outputs_round_trip(tmp_path):
    import nbformat

    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("1 + 1")
    cell.outputs = [nbformat.v4.new_output("execute_result", {"text/plain": "2"}, execution_count=1)]
    cell.execution_count = 1
    nb.cells = [cell]
    path = tmp_path / "x.ipynb"
    nbformat.write(nb, path)
    assert stored_problems(json.loads(path.read_text()))
    assert strip_file(path)
    assert not stored_problems(json.loads(path.read_text()))
    assert not strip_file(path)  # idempotent


def _main(argv: list[str]) -> int:
    import argparse
    import tempfile

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--strip", action="store_true", help="strip outputs from the notebooks")
    ap.add_argument("--run", action="store_true", help="execute the notebooks")
    ap.add_argument("--out", help="with --run and one notebook: write the executed copy here")
    ap.add_argument("--images", type=Path, help="with --run: save every PNG output to this folder")
    ap.add_argument("paths", nargs="*", type=Path)
    args = ap.parse_args(argv)
    paths = [p.resolve() for p in args.paths] or NOTEBOOKS
    if args.strip:
        for p in paths:
            print(("stripped " if strip_file(p) else "clean    ") + str(p))
    if args.run:
        import nbformat

        for p in paths:
            t = time.perf_counter()
            with tempfile.TemporaryDirectory() as tmp:
                nb = execute(p, Path(tmp))
            print(f"ran {p.name} in {time.perf_counter() - t:.1f} s")
            nb.cells.pop(0)
            if args.out:
                nbformat.write(nb, args.out)
            if args.images:
                args.images.mkdir(parents=True, exist_ok=True)
                k = 0
                for cell in nb.cells:
                    for out in cell.get("outputs", []):
                        if "image/png" in out.get("data", {}):
                            k += 1
                            (args.images / f"{p.stem}_{k}.png").write_bytes(
                                base64.b64decode(out["data"]["image/png"]))
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
