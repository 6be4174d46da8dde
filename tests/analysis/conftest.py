"""Shared fixtures: simulated predictions over real customs items, and a hand-built row factory."""

from __future__ import annotations

from typing import Any

import pandas as pd
import pytest
from simulate import SimModel, customs_items, simulate

from blindmcq.records import PREDICTION_COLUMNS


def make_row(**kw: Any) -> dict[str, Any]:
    """One prediction row with every released column; keyword arguments override the defaults."""
    row: dict[str, Any] = {
        "item_id": "i1",
        "model": "m",
        "condition": "blind",
        "phrasing": "original",
        "labels": "latin",
        "protocol": "sl",
        "reasoning": "direct",
        "order": [0, 1, 2, 3],
        "order_id": "rot0",
        "forced_slot": None,
        "key_slot": 0,
        "n_options": 4,
        "picked_slot": 0,
        "picked_option": 0,
        "correct": True,
        "parse_status": "ok",
        "raw_response": "A",
        "input_tokens": 10,
        "output_tokens": 1,
        "latency_s": 0.1,
        "region": None,
        "request_hash": "h",
        "time": "2025-01-01T00:00:00Z",
        "backend": "test",
        "cached": False,
        "error": None,
        "setting": "",
    }
    row.update(kw)
    if "correct" not in kw:
        row["correct"] = row["picked_slot"] is not None and row["picked_slot"] == row["key_slot"]
    return row


def frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=list(PREDICTION_COLUMNS))


MODELS = (
    SimModel("gate", (0.4, 0.3, 0.2, 0.1), 0.15, 0.6, unparseable=0.02),
    SimModel("first", (1.0, 0.0, 0.0, 0.0), 0.0, 0.3),
    SimModel("good", (0.25, 0.25, 0.25, 0.25), 0.3, 0.9),
    SimModel("mid", (0.1, 0.2, 0.3, 0.4), 0.1, 0.7),
    SimModel("weak", (0.3, 0.3, 0.2, 0.2), 0.05, 0.45),
)


@pytest.fixture(scope="session")
def items():
    return customs_items(600)


@pytest.fixture(scope="session")
def predictions(items) -> pd.DataFrame:
    return simulate(items, MODELS, seed=1)
