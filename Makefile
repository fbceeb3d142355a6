# The two commands of the README. Each creates .venv on first use and installs what it needs;
# reinstalling happens only when pyproject.toml changes.
PYTHON ?= python3
VENV ?= .venv
BIN = $(VENV)/bin

.PHONY: run test test-fast

# Ctrl-C (or a TERM) stops the service cleanly: the shell waits for it to shut down, and a stop
# by either signal is a clean exit, so make has no failed command to report.
run: $(VENV)/.installed-run
	@echo "$(BIN)/steadyscale serve --data-dir data   (Ctrl-C stops it)"
	@trap true INT TERM; $(BIN)/steadyscale serve --data-dir data; status=$$?; \
	  [ $$status -eq 0 ] || [ $$status -eq 130 ] || [ $$status -eq 143 ] || exit $$status

test: $(VENV)/.installed-test
	$(BIN)/python -m simulator.spark  # PySpark needs Java 17: say so plainly if it is missing
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/pytest

# Everything that needs no JVM (tests marked spark are left out): about a minute.
test-fast: $(VENV)/.installed-test
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/pytest -m "not spark"

$(VENV)/bin/python:
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || \
	  { echo "steadyscale needs Python >= 3.11 (found: $$($(PYTHON) --version 2>&1)); set PYTHON=..."; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

# make run needs the service extra (plots: so that denoise and simulate work too); RUN_EXTRAS=all
# (the Dockerfile's) adds Spark.
RUN_EXTRAS ?= service,plots

$(VENV)/.installed-run: pyproject.toml | $(VENV)/bin/python
	$(BIN)/python -m pip install -q -e '.[$(RUN_EXTRAS)]'
	touch $@

# The test extra holds every other (steadyscale[all]): what it installs serves make run too.
$(VENV)/.installed-test: pyproject.toml | $(VENV)/bin/python
	$(BIN)/python -m pip install -q -e '.[test]'
	touch $@ $(VENV)/.installed-run
