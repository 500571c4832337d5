# Two commands for learners and CI: `make lab` and `make test`.
# Both create or update .venv from requirements.txt first.

PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
NB ?= 03_metrics_by_hand
PORT ?= 8888

.PHONY: lab test lint unit nbval browser student app bench notebooks nav clean

$(STAMP): requirements.txt pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet -r requirements.txt
	touch $(STAMP)

## lab: start JupyterLab on the first chapter
ROOT_FLAG := $(if $(filter 0,$(shell id -u)),--allow-root,)

lab: $(STAMP)
	$(BIN)/jupyter lab --notebook-dir=notebooks $(ROOT_FLAG) notebooks/00_welcome.ipynb

## test: lint, unit + property tests, every notebook under nbval, then the browser tests
test: lint unit nbval browser

lint: $(STAMP)
	$(BIN)/ruff check labkit tests bench tools notebooks/src data/build_queries.py
	$(BIN)/ruff format --check labkit tests bench tools data/build_queries.py

unit: $(STAMP)
	$(BIN)/python -m pytest -q -m "not browser" tests --durations=8

nbval: $(STAMP)
	$(BIN)/python -m pytest -q --nbval notebooks --nbval-sanitize-with tests/nbval_sanitize.cfg -p no:randomly

browser: $(STAMP)
	$(BIN)/python -m pytest -q -m browser tests --durations=12

## notebooks: rebuild every notebook from notebooks/src and execute it (maintainers)
notebooks: $(STAMP)
	$(BIN)/python tools/build_notebooks.py

## student: build/student/ with solution cells emptied
student: $(STAMP)
	$(BIN)/python tools/make_student.py

## app: serve one notebook with Voila, code hidden (make app NB=03_metrics_by_hand)
app: $(STAMP)
	$(BIN)/voila --port=$(PORT) --no-browser notebooks/$(NB).ipynb

bench: $(STAMP)
	$(BIN)/python bench/metrics_bench.py
	$(BIN)/python bench/retrieval_bench.py

clean:
	rm -rf build .pytest_cache
