# Two commands: `make app` and `make test`. Both create .venv on first use and reinstall only when
# requirements.txt or pyproject.toml change. `make lint` checks the architecture, `make docs` builds the docs site.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
DOCS_STAMP := $(VENV)/.installed-docs
PORT   ?= 8501
# the dashboard has no login: it listens on this machine only unless ADDRESS says otherwise (docs/security.md)
ADDRESS ?= 127.0.0.1

.PHONY: app test lint install bench docs clean

install: $(STAMP)

$(STAMP): requirements.txt pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt
	$(PY) -m pip install --quiet --no-deps --no-build-isolation -e .
	@touch $(STAMP)

app: $(STAMP)
	$(PY) -m streamlit run app.py --server.address $(ADDRESS) --server.port $(PORT) --browser.gatherUsageStats false

# The whole suite: the tests that may run side by side on $(TEST_WORKERS) workers (pytest-xdist), then those marked
# `serial` (a real browser, Ctrl-C to a process, a live writer racing the follower, a port) one at a time; both parts
# run, the first failure's exit code is make's.
# With PYTEST_ARGS (`make test PYTEST_ARGS=tests/test_data.py`): those, in one process.
# pytest exits 5 when it collects no test; that is not a failure of the code.
TEST_WORKERS ?= 2
test: $(STAMP)
ifeq ($(strip $(PYTEST_ARGS)),)
	$(PY) -m pytest -q -n $(TEST_WORKERS) -m "not serial"; rc=$$?; if [ $$rc -eq 5 ]; then rc=0; fi; \
	$(PY) -m pytest -q -m serial; rc2=$$?; if [ $$rc2 -eq 5 ]; then rc2=0; fi; \
	if [ $$rc -ne 0 ]; then exit $$rc; fi; exit $$rc2
else
	$(PY) -m pytest -q $(PYTEST_ARGS); rc=$$?; if [ $$rc -eq 5 ]; then rc=0; fi; exit $$rc
endif

# the documentation site (mkdocs.yml, docs/) into site/; --strict: a warning (a broken link, a docstring that
# does not parse) fails the build. Its own stamp: the docs tools are installed on top of the app's install.
$(DOCS_STAMP): $(STAMP) requirements-docs.txt
	$(PY) -m pip install --quiet -r requirements-docs.txt
	@touch $(DOCS_STAMP)

docs: $(DOCS_STAMP)
	NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs build --strict --site-dir site

# the architecture (.importlinter): front ends on top, fairaudit.base at the bottom, engines independent, no cycles
lint: $(STAMP)
	$(VENV)/bin/lint-imports --no-cache

bench: $(STAMP)
	@for b in bench/*.py; do echo "== $$b"; $(PY) $$b || exit 1; done

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis *.egg-info site
