"""Session fixtures: simulated predictions over real customs items."""

from __future__ import annotations

import pandas as pd
import pytest
from simulate import CUSTOMS, MODELS, customs_items, simulate


@pytest.fixture(scope="session")
def bank():
    """Every four-option item of the customs bank (2,950)."""
    if not CUSTOMS.exists():
        pytest.skip(f"shared data not found at {CUSTOMS}")
    return customs_items()


@pytest.fixture(scope="session")
def items(bank):
    return bank[:600]


@pytest.fixture(scope="session")
def predictions(items) -> pd.DataFrame:
    return simulate(items, MODELS, seed=1)
