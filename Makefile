# Two commands a user needs: `make run` (the default pipeline) and `make test` (lint + tests).
# `make data` fetches the full inputs into data/ (only configs such as dataset=customs-full need them).
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
SHARED_DATA ?= ../shared/data
STAMP := $(VENV)/.installed

.PHONY: run test test-data install data lint bench clean-results

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet torch==2.13.0
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

# data/ (DVC-tracked by data.dvc), from the first source that has it: data/ itself, $(SHARED_DATA), the DVC
# remote, the public upstreams (data-sources.yaml, sha256-checked). `dvc add data` then caches it, so
# `dvc status` is clean; data.dvc changes only if the files differ from the ones it records.
data: $(STAMP)
	$(BIN)/python -m blindmcq.fetch fill --shared "$(SHARED_DATA)"
	@if [ -d data ]; then PATH="$(abspath $(BIN)):$$PATH" $(BIN)/dvc add -q data; fi

# OMP_WAIT_POLICY=PASSIVE: torch threads sleep instead of spinning when the two cores are shared.
run: $(STAMP)
	PATH="$(abspath $(BIN)):$$PATH" OMP_WAIT_POLICY=PASSIVE $(BIN)/dvc repro

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks scripts

test: lint
	$(BIN)/python -m pytest

# the tests that need the full inputs (marked needs_data); after `make data`, a skip among them is a failure
test-data: data
	BLINDMCQ_REQUIRE_DATA=1 $(BIN)/python -m pytest -m needs_data

bench: $(STAMP)
	@for b in benchmarks/bench_*.py; do echo "== $$b"; $(BIN)/python $$b || exit 1; done
