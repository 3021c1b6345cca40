# make run: install, initialise the SQLite database, build the demo world when it holds none,
#   serve on $(HOST):$(PORT), 127.0.0.1:8000 by default (make run PORT=8080).
# make demo: build the demo world again, at this moment, in an emptied database.
# make worker: the worker beside it (the schedule and the webhooks), on the same database.
# make test: install, run the test suite.
VENV   := .venv
PYTHON := $(VENV)/bin/python
FLASK  := $(VENV)/bin/flask --app app
STAMP  := $(VENV)/.installed
HOST   ?= 127.0.0.1
PORT   ?= 8000

.PHONY: install run demo worker test lint bench clean

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

demo: install
	$(FLASK) db init
	$(FLASK) data demo --rebuild

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
