# make run: install, initialise the SQLite database with the demo world, serve on 127.0.0.1:8000.
# make worker: the worker beside it (the schedule and the webhooks), on the same database.
# make test: install, run the test suite.
VENV   := .venv
PYTHON := $(VENV)/bin/python
FLASK  := $(VENV)/bin/flask --app app
STAMP  := $(VENV)/.installed
HOST   ?= 127.0.0.1
PORT   ?= 8000

.PHONY: install run worker test lint bench clean

$(PYTHON):
	python3 -m venv $(VENV)

$(STAMP): setup.cfg pyproject.toml | $(PYTHON)
	$(PYTHON) -m pip install --quiet --upgrade pip
	$(PYTHON) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

run: install
	$(FLASK) db upgrade
	$(FLASK) data demo
	HOST=$(HOST) PORT=$(PORT) $(VENV)/bin/gunicorn --config gunicorn.conf.py wsgi:app

worker: install
	$(PYTHON) -m worker

test: install
	$(PYTHON) -m pytest

lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

bench: install
	$(PYTHON) -m bench.engine

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache *.egg-info
