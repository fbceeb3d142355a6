# The two commands of the README. Each creates .venv on first use and installs what it needs;
# reinstalling happens only when pyproject.toml changes.
PYTHON ?= python3
VENV ?= .venv
BIN = $(VENV)/bin

.PHONY: run test

run: $(VENV)/.installed-run
	$(BIN)/steadyscale serve --data-dir data

test: $(VENV)/.installed-test
	$(BIN)/python -m simulator.spark  # PySpark needs Java 17: say so plainly if it is missing
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/pytest

$(VENV)/bin/python:
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || \
	  { echo "steadyscale needs Python >= 3.11 (found: $$($(PYTHON) --version 2>&1)); set PYTHON=..."; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(VENV)/.installed-run: pyproject.toml | $(VENV)/bin/python
	$(BIN)/python -m pip install -q -e .
	touch $@

$(VENV)/.installed-test: pyproject.toml | $(VENV)/bin/python
	$(BIN)/python -m pip install -q -e '.[test]'
	touch $@ $(VENV)/.installed-run
