# The two commands of the README. Each creates .venv on first use and installs what it needs;
# reinstalling happens only when pyproject.toml changes.
PYTHON ?= python3
VENV ?= .venv
BIN = $(VENV)/bin

.PHONY: run test test-fast test-tools lint readme-figure

# Ctrl-C (or a TERM) stops the service cleanly: the shell waits for it to shut down, and a stop
# by either signal is a clean exit, so make has no failed command to report.
run: $(VENV)/.installed-run
	@echo "$(BIN)/steadyscale serve --data-dir data   (Ctrl-C stops it)"
	@trap true INT TERM; $(BIN)/steadyscale serve --data-dir data; status=$$?; \
	  [ $$status -eq 0 ] || [ $$status -eq 130 ] || [ $$status -eq 143 ] || exit $$status

# pytest runs in two processes on the machine's two cores: the tests marked spark (mostly waiting
# on JVMs) beside all the others, so that their waits overlap the others' work. The spark tests'
# report is printed after the others'; either failing fails the target.
test: $(VENV)/.installed-test test-tools
	$(BIN)/python -m simulator.spark.checks  # PySpark needs Java 17: say so plainly if it is missing
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	@echo "pytest -m spark runs beside pytest -m 'not spark'; its report follows ($(VENV)/spark-tests.log)"
	@$(BIN)/pytest -m spark -p no:cacheprovider --durations=10 > $(VENV)/spark-tests.log 2>&1 & \
	  spark=$$!; $(BIN)/pytest -m "not spark" --durations=15; others=$$?; \
	  wait $$spark; sparks=$$?; echo "== pytest -m spark"; cat $(VENV)/spark-tests.log; \
	  [ $$others -eq 0 ] && [ $$sparks -eq 0 ]

# Everything that needs no JVM, no browser, no Prometheus server and no fresh install (tests
# marked spark, browser, prometheus or slow are left out): about a minute.
test-fast: lint
	$(BIN)/pytest -m "not spark and not browser and not prometheus and not slow"

# The README's picture, from the command its caption quotes (tests/simulator/test_readme.py
# checks that the two agree, and that the caption's numbers are what the command prints).
readme-figure: $(VENV)/.installed-run
	$(BIN)/steadyscale simulate --snr 5 --duration 900 --filter raw --filter default --out out/readme
	cp out/readme/simulate.png docs/img/readme.png

# The linters and the type checker alone: seconds.
lint: $(VENV)/.installed-test
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

# The dashboard's browser test drives Debian's chromium; the Grafana test checks its queries
# with promtool, and the pull tests run a prometheus server, both from Debian's prometheus
# package; the deploy tests render deploy/ with kubectl's kustomize (Debian's kubernetes-client
# where no kubectl is found). Each is found on PATH, or installed here when apt-get can (as
# root); otherwise this says so, and those tests report NOT TESTED.
test-tools:
	@for need in chromium:chromium promtool:prometheus prometheus:prometheus kubectl:kubernetes-client; do \
	  program=$${need%%:*}; package=$${need#*:}; \
	  if ! command -v $$program >/dev/null 2>&1 && [ "$$(id -u)" -eq 0 ] \
	     && command -v apt-get >/dev/null 2>&1; then \
	    echo "$$program: not found, installing Debian's $$package package (apt-get)"; \
	    { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
	        -o DPkg::Lock::Timeout=300 --no-install-recommends $$package; } >/dev/null 2>&1; \
	  fi; \
	  if command -v $$program >/dev/null 2>&1; then echo "$$program: $$(command -v $$program)"; \
	  else echo "$$program: NOT TESTED, not found and not installed (as root: apt-get install $$package)"; fi; \
	done
	@# PostgreSQL's server binaries (initdb, pg_ctl): on PATH or where Debian's package puts them,
	@# as tests/service/conftest.py looks for them (or in STEADYSCALE_PG_BIN).
	@found() { [ -n "$$STEADYSCALE_PG_BIN" ] || command -v initdb >/dev/null 2>&1 \
	    || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; }; \
	if ! found && [ "$$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "postgresql: not found, installing Debian's postgresql package (apt-get)"; \
	  { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
	      -o DPkg::Lock::Timeout=300 --no-install-recommends postgresql; } >/dev/null 2>&1; \
	fi; \
	if found; then echo "postgresql: server binaries found"; \
	else echo "postgresql: NOT TESTED, not found and not installed (as root: apt-get install postgresql)"; fi

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
