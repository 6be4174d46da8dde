"""Session fixtures: simulated predictions over real customs items.

The simulations need a few hundred items for their statistical checks; a clone has only the real-text
sample (about a hundred items), so ``bank`` repeats the sample's real items under distinct ids. Checks of
the published bank facts use the full bank (``full_bank``, needs the full inputs).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pandas as pd
import pytest
from simulate import MODELS, customs_items, simulate

from blindmcq.analysis import analyze, gate
from blindmcq.analysis.metrics import Analysis
from blindmcq.datasets.items import Item

CUSTOMS = Path("ua-customs-exam") / "questions.json"


@pytest.fixture(scope="session")
def full_bank(shared_data: Path) -> list[Item]:
    """Every four-option item of the customs bank (2,950)."""
    return customs_items(shared_data / CUSTOMS)


@pytest.fixture(scope="session")
def bank(samples: Path) -> list[Item]:
    """600 items: the sample's real items, repeated under distinct ids (copy 0 keeps the original id)."""
    real = customs_items(samples / CUSTOMS)
    return [
        dataclasses.replace(it, id=f"{it.id}-{n // len(real)}" if n >= len(real) else it.id)
        for n, it in ((n, real[n % len(real)]) for n in range(600))
    ]


@pytest.fixture(scope="session")
def items(bank: list[Item]) -> list[Item]:
    return bank[:600]


@pytest.fixture(scope="session")
def predictions(items) -> pd.DataFrame:
    return simulate(items, MODELS, seed=1)


@pytest.fixture(scope="session")
def analysis(predictions: pd.DataFrame) -> Analysis:
    """``predictions`` analysed with the gate model's own gate and a 200-item sample: built once per
    worker and read by the tables' and the figures' tests (tests/conftest.py keeps both on one worker)."""
    return analyze(predictions, gate=gate(predictions, gate_model="gate"), sample_sizes=[200])
