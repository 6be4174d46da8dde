"""Path 1: pdfplumber's table extraction, ruling-line strategy, one row per table row."""

from __future__ import annotations

from pdfplumber.page import Page

from blindmcq.corpus.rows import COLUMNS, Row

SETTINGS = {"vertical_strategy": "lines", "horizontal_strategy": "lines"}


class TableShapeError(ValueError):
    """A table on the page does not have the Commission's four columns."""


def page_rows(page: Page, page_no: int) -> list[Row]:
    """Rows of every table on ``page``, top to bottom; ``None`` marks a cell merged with the one above."""
    rows: list[Row] = []
    for table in sorted(page.find_tables(SETTINGS), key=lambda t: (t.bbox[1], t.bbox[0])):
        for cells, trow in zip(table.extract(), table.rows, strict=True):
            if len(cells) != len(COLUMNS):
                raise TableShapeError(f"table has {len(cells)} columns, expected {len(COLUMNS)}")
            rows.append(Row(page_no, *cells, top=trow.bbox[1], bottom=trow.bbox[3]))
    return rows
