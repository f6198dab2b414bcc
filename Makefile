PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
# One stamp per extra: `make demo` installs only what the demo needs, `make test` the test extra.
STAMP := $(VENV)/.installed
TEST_STAMP := $(VENV)/.installed-test

.PHONY: demo test setup clean

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

setup: $(TEST_STAMP)

demo: $(STAMP)
	$(BIN)/evalframe report data/cranfield/qrels.txt data/cranfield/runs.parquet --segments data/cranfield/segments.parquet --baseline bm25 --out out/demo

test: $(TEST_STAMP)
	$(BIN)/python -m pytest -q

clean:
	rm -rf $(VENV) build *.egg-info
