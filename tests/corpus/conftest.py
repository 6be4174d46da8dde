"""Rendered banks from real customs items, shared by the corpus tests."""

from __future__ import annotations

import json

import pytest
from corpus_support import PATHS, items_json, rows_of

from blindmcq.corpus.default_bank import spec
from blindmcq.corpus.render import ItemSpec, Rendered, render_pdf, with_cases
from blindmcq.corpus.rows import Row


@pytest.fixture(scope="session")
def customs_specs() -> list[ItemSpec]:
    records = json.loads(items_json().read_text(encoding="utf-8"))["legislation"]["Митний кодекс України"]
    return [spec(r) for r in records]


@pytest.fixture(scope="session")
def cases_bank(tmp_path_factory: pytest.TempPathFactory, customs_specs: list[ItemSpec]) -> Rendered:
    """40 real items with every special case injected; several pages, items crossing page breaks."""
    path = tmp_path_factory.mktemp("bank") / "vkks-cases.pdf"
    return render_pdf(with_cases(customs_specs[:40], start=3), path, source="vkks", bank="cases")


@pytest.fixture(scope="session")
def cases_rows(cases_bank: Rendered) -> dict[str, list[Row]]:
    """Each path's rows of ``cases_bank``, read once."""
    return {m: rows_of(cases_bank.path, m) for m in PATHS}


@pytest.fixture(scope="session")
def small_bank(tmp_path_factory: pytest.TempPathFactory, customs_specs: list[ItemSpec]) -> Rendered:
    """Six real items on one page: for tests about files, not layout."""
    path = tmp_path_factory.mktemp("small") / "vkks-small.pdf"
    return render_pdf(customs_specs[:6], path, source="vkks", bank="small")
