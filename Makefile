# make run: install, bring the database DATABASE_URL names (by default an SQLite file in
#   instance/) to the newest schema, build the demo world only in an empty one (a database
#   holding imported leagues is served as it is), serve on $(HOST):$(PORT), 127.0.0.1:8000 by
#   default (make run PORT=8080).
# make demo: build the demo world again, at this moment, in an emptied database.
# make worker: the worker beside it (the schedule and the webhooks), on the same database.
# make test: install, run the test suite (all of it; PYTEST_ARGS=... adds pytest's options).
# make test-fast: the suite without the tests marked slow, on every core (pytest-xdist): the loop
#   to run while working.
# make test-figures: time make test-fast, write its figures into docs/testing.md.
# make requirements: requirements.txt, the runtime dependencies pinned for a platform to install,
#   resolved from setup.cfg by pip-tools (a tool of this target only); pins that still fit are
#   kept (make requirements UPGRADE=1 moves each to the newest release in its range).
# make check-requirements: fail, saying why, when requirements.txt no longer matches setup.cfg.
VENV   := .venv
PYTHON := $(VENV)/bin/python
FLASK  := $(VENV)/bin/flask --app app
STAMP  := $(VENV)/.installed
HOST   ?= 127.0.0.1
PORT   ?= 8000
PIP_TOOLS := pip-tools==7.6.2

.PHONY: install run demo worker test test-fast test-figures lint bench bench-smoke clean requirements check-requirements mutate

$(PYTHON):
	python3 -m venv $(VENV)

$(STAMP): setup.cfg pyproject.toml | $(PYTHON)
	$(PYTHON) -m pip install --quiet --upgrade pip
	$(PYTHON) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

run: install
	$(FLASK) db upgrade
	$(FLASK) data demo --if-empty
	HOST=$(HOST) PORT=$(PORT) $(VENV)/bin/gunicorn --config gunicorn.conf.py wsgi:app

demo: install
	$(FLASK) db init
	$(FLASK) data demo --rebuild

worker: install
	$(PYTHON) -m worker

test: install
	$(PYTHON) -m pytest $(PYTEST_ARGS)

test-fast: install
	$(PYTHON) -m pytest -m "not slow" -q -n auto

test-figures: install
	$(PYTHON) -m tools.test_figures --write $(if $(CI_LOG),--ci-log $(CI_LOG))

lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

bench: install
	$(PYTHON) -m bench.engine

# Every benchmark once at its smallest sizes, one after another, each one's name and time printed;
# fails at the first that no longer runs (python -m bench.smoke NAME ... runs some).
bench-smoke: install
	$(PYTHON) -m bench.smoke

requirements: install
	$(PYTHON) -m pip install --quiet '$(PIP_TOOLS)'
	CUSTOM_COMPILE_COMMAND='make requirements' $(VENV)/bin/pip-compile --quiet --strip-extras \
		--no-emit-options $(if $(UPGRADE),--upgrade) --output-file requirements.txt setup.cfg
	printf '%s\n' '# The service itself, at the pins above: its version is read from its' \
		'# installed metadata.' '.' >> requirements.txt
	$(PYTHON) tools/check_requirements.py

check-requirements: install
	$(PYTHON) tools/check_requirements.py

# Mutation testing (mutmut, a tool of this target only) of the modules holding the rules users
# depend on, each mutant against the fast tests that call its function (pyproject.toml's
# [tool.mutmut]), from scratch in mutants/; prints each module's score and the mutants left alive,
# and fails when a module scores under 90 %. About half an hour on two cores.
mutate: install
	$(PYTHON) -m pip install --quiet 'mutmut==3.8.1'
	rm -rf mutants
	$(VENV)/bin/mutmut run
	$(PYTHON) tools/mutation_score.py --fail-under 90

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache *.egg-info
