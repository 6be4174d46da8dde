# Two commands a user needs: `make run` (the default pipeline) and `make test` (lint + the fast suite;
# `make test-full` runs every test).
# `make data` fetches the full inputs into data/ (only configs such as dataset=customs-full need them).
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
SHARED_DATA ?= ../shared/data
STAMP := $(VENV)/.installed

.PHONY: run test test-full test-data install data lint bench clean-results

# uv installs in seconds what pip takes minutes for. torch is the CPU build: from a local wheel folder when
# pip is configured with one (PIP_FIND_LINKS holding torch 2.13.0+cpu), else from PyTorch's CPU index.
TORCH_WHEEL := $(firstword $(wildcard $(PIP_FIND_LINKS)/torch-2.13.0+cpu-*.whl))
TORCH_FROM := $(if $(TORCH_WHEEL),--find-links $(PIP_FIND_LINKS),--torch-backend cpu)
UV := $(BIN)/uv pip install --quiet --python $(BIN)/python
# Python writes each module's .pyc the first time a process imports it. Where PYTHONDONTWRITEBYTECODE is set
# (many containers set it), every DVC stage, test worker and subprocess would compile every module it
# imports again, mlflow's and torch's thousands included: the recipes here run without it.
unexport PYTHONDONTWRITEBYTECODE

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet 'uv>=0.8,<0.14'
	$(UV) $(TORCH_FROM) torch==2.13.0
	$(UV) -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

# data/, the full inputs, from the first source that has them: data/ itself, $(SHARED_DATA), a DVC remote
# (if you track data/ with data.dvc), the public upstreams; every file sha256-checked (data-sources.yaml).
data: $(STAMP)
	PATH="$(abspath $(BIN)):$$PATH" $(BIN)/python -m blindmcq.cli.data fill --shared "$(SHARED_DATA)"

# OMP_WAIT_POLICY=PASSIVE: torch threads sleep instead of spinning when the two cores are shared.
run: $(STAMP)
	PATH="$(abspath $(BIN)):$$PATH" OMP_WAIT_POLICY=PASSIVE $(BIN)/dvc repro

# the project's code is formatted by ruff format (pyproject's [tool.ruff]; `# fmt: skip` keeps a hand layout)
lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks scripts
	$(BIN)/ruff format --check src tests benchmarks scripts

# two workers (pytest-xdist): the suite's slow tests wait on subprocesses (dvc, mlflow, servers), so two
# share the two cores well; PYTEST_WORKERS=0 runs it in one process
# (tests/conftest.py keeps the tests of a module with a module- or class-scoped fixture, or a costly shared
# one, on one worker, so each such fixture is built once)
PYTEST_WORKERS ?= 2
PYTEST := $(BIN)/python -m pytest -n $(PYTEST_WORKERS) --durations=15

# the fast suite: everything but the tests marked `full` (real servers, a browser, DVC/MLflow pipelines end
# to end, the local model, sweeps); each behaviour those check end to end has a fast test here too
test: lint
	BLINDMCQ_DERANDOMIZE=1 $(PYTEST) -m "not full"

# the full suite: every test; FULL_ONLY=1 runs just the `full` ones (CI, after `make test`)
test-full: lint
	BLINDMCQ_DERANDOMIZE=1 $(PYTEST) $(if $(FULL_ONLY),-m full)

# the tests that need the full inputs (marked needs_data); after `make data`, a skip among them is a failure
test-data: data
	BLINDMCQ_REQUIRE_DATA=1 $(BIN)/python -m pytest -m needs_data

# one line per benchmark (figure, limit or peer, ratio); full logs in results/bench/; BENCH_ARGS=--full for
# the settings the README's Performance table quotes
bench: $(STAMP)
	$(BIN)/python benchmarks/run_all.py $(BENCH_ARGS)
