"""Helpers for the corpus tests (a uniquely named module: test folders are not packages)."""

from __future__ import annotations

import os
from pathlib import Path

import pdfplumber

from blindmcq.corpus import path_rules, path_tables
from blindmcq.corpus.rows import Row

REPO = Path(__file__).resolve().parents[2]
PATHS = {"tables": path_tables.page_rows, "rules": path_rules.page_rows}


def rows_of(path: Path, method: str) -> list[Row]:
    with pdfplumber.open(path) as pdf:
        return [r for n, page in enumerate(pdf.pages, 1) for r in PATHS[method](page, n)]


SAMPLE = REPO / "tests" / "fixtures" / "corpus" / "customs_sample.json"


def full_questions_json() -> Path | None:
    env = os.environ.get("BLINDMCQ_SHARED_DATA")
    for candidate in ([Path(env)] if env else []) + [REPO.parent / "shared" / "data", REPO / "data"]:
        path = candidate / "ua-customs-exam" / "questions.json"
        if path.exists():
            return path
    return None


def questions_json(data: Path) -> Path:
    """The customs bank file inside a data folder (the full inputs or tests/fixtures/samples)."""
    return data / "ua-customs-exam" / "questions.json"


def items_json() -> Path:
    """The full bank when present, else the committed real sample (Customs Code items included)."""
    return full_questions_json() or SAMPLE
