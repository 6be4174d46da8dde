from __future__ import annotations

from pathlib import Path

import pytest

from blindmcq.statutes.corpus import Provision, read_provisions
from blindmcq.statutes.text import Lemmatizer

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_STATUTES = ROOT / "defaults/statutes/provisions-default.jsonl"
CUSTOMS_BANK = ROOT / "tests/fixtures/samples/ua-customs-exam/questions.json"  # real items, committed


@pytest.fixture(scope="session")
def default_statutes() -> Path:
    return DEFAULT_STATUTES


@pytest.fixture(scope="session")
def customs_bank() -> Path:
    return CUSTOMS_BANK


@pytest.fixture(scope="session")
def lemmatizer() -> Lemmatizer:
    return Lemmatizer()


@pytest.fixture(scope="session")
def default_provisions() -> list[Provision]:
    return read_provisions(DEFAULT_STATUTES)
