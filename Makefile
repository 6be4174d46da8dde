# Two commands a user needs: `make run` (the default pipeline) and `make test` (lint + tests).
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
SHARED_DATA ?= ../shared/data
STAMP := $(VENV)/.installed

.PHONY: run test install data lint bench clean-results

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet torch==2.13.0
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

# data/ (DVC-tracked by data.dvc): copied from the shared inputs when they sit beside the clone,
# otherwise pulled from the DVC remote (see README, "Released artifacts").
data: $(STAMP)
	@if [ -d data ]; then echo "data/ present"; \
	elif [ -d "$(SHARED_DATA)" ]; then cp -r --no-preserve=mode "$(SHARED_DATA)" data && $(BIN)/dvc add -q data; \
	else $(BIN)/dvc pull data.dvc || echo "data/ unavailable (no $(SHARED_DATA), no DVC remote): the default run needs only defaults/"; fi

# OMP_WAIT_POLICY=PASSIVE: torch threads sleep instead of spinning when the two cores are shared.
run: data
	PATH="$(abspath $(BIN)):$$PATH" OMP_WAIT_POLICY=PASSIVE $(BIN)/dvc repro

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks scripts

test: lint
	$(BIN)/python -m pytest

bench: $(STAMP)
	@for b in benchmarks/bench_*.py; do echo "== $$b"; $(BIN)/python $$b || exit 1; done
