"""The shipped data: ``../shared/data`` beside the repository (as in CI), else the DVC copy ``data/``."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def shared_data() -> Path:
    for candidate in (REPO.parent / "shared" / "data", REPO / "data"):
        if (candidate / "lexam" / "MCQs_test.xlsx").exists():
            return candidate
    raise FileNotFoundError(f"shipped data not found at {REPO.parent / 'shared' / 'data'} or {REPO / 'data'}")


@pytest.fixture(scope="session")
def data_dir() -> Path:
    return shared_data()
