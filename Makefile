PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
# One stamp per extra: `make demo` installs only what the demo needs, `make test` the test
# and docs extras (it builds the site after the suite), `make setup` the test extra.
STAMP := $(VENV)/.installed
TEST_STAMP := $(VENV)/.installed-test
DOCS_STAMP := $(VENV)/.installed-docs

.PHONY: demo test test-fast fuzz docs setup clean

$(BIN)/python:
	@command -v $(PYTHON) >/dev/null 2>&1 || { echo "need $(PYTHON) (or run: make PYTHON=python3 ...)"; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet -e .
	touch $(STAMP)

$(TEST_STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP) $(TEST_STAMP)

$(DOCS_STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet -e '.[test,docs]'
	touch $(STAMP) $(TEST_STAMP) $(DOCS_STAMP)

setup: $(TEST_STAMP)

demo: $(STAMP)
	$(BIN)/evalframe report data/cranfield/qrels.txt data/cranfield/runs.parquet --segments data/cranfield/segments.parquet --baseline bm25 --out out/demo

# test-fast runs on every core (pytest-xdist: 110 s against 197 s in one process on 2 cores);
# tests marked xdist_group share one worker (one Spark session, one Dask cluster).
# `make test-fast PYTEST_WORKERS=0` runs in one process (for --pdb, or a failure's order).
PYTEST_WORKERS ?= auto
XDIST := -n $(PYTEST_WORKERS) --dist loadgroup
XDIST_TEST ?=

# The suite, then the site: the notebooks run once (the suite leaves executed copies in
# build/notebooks/, which the docs build renders). In one process: the engines' tests start
# processes of their own (Dask workers, Spark, notebook kernels), and on 2 cores two xdist
# workers made the whole suite slower (548 s against 380 s); `make test XDIST_TEST="-n auto --dist loadgroup"`.
test: $(TEST_STAMP) $(DOCS_STAMP)
	$(BIN)/python -m pytest -q $(XDIST_TEST)
	$(MAKE) docs

# While you work: the suite without the tests marked slow (the engines, the notebooks), under
# 3 minutes on 2 cores; `make test` runs everything, as CI does.
test-fast: $(TEST_STAMP)
	$(BIN)/python -m pytest -q -m "not slow" $(XDIST)

# The property tests with new random examples each run (`make test` draws fixed ones).
fuzz: $(TEST_STAMP)
	HYPOTHESIS_PROFILE=explore $(BIN)/python -m pytest -q -p no:cacheprovider tests/engine/test_partition.py \
		tests/oracles/test_pytrec_eval.py tests/engine/test_streaming.py tests/engine/test_dask.py tests/oracles/test_pytrec_eval_families.py

# The documentation site in docs/_build/html: warnings are errors, nitpicky references.
docs: $(DOCS_STAMP)
	$(BIN)/python -m sphinx -b html -W --keep-going -n -q docs docs/_build/html
	@! grep -rlE '<(script|link)[^>]+(src|href)="https?://' docs/_build/html --include='*.html' \
		|| { echo "docs: a page loads a script or style from the network (listed above)"; exit 1; }

clean:
	rm -rf $(VENV) build *.egg-info docs/_build docs/api/generated docs/tutorials/*.ipynb
