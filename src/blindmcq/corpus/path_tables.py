"""Path 1: pdfplumber's table extraction, ruling-line strategy, one row per table row.

Cell text is what ``Table.extract()`` returns (same chars, same ``utils.extract_text``), but each row's chars
are found by bisection on their vertical centres instead of a scan of every char on the page per row (the
scan was a fifth of the whole extraction's time).
"""

from __future__ import annotations

from bisect import bisect_left
from typing import Any

from pdfplumber import utils
from pdfplumber.page import Page
from pdfplumber.table import Table

from blindmcq.corpus.rows import COLUMNS, Row

SETTINGS = {"vertical_strategy": "lines", "horizontal_strategy": "lines"}


class TableShapeError(ValueError):
    """A table on the page does not have the Commission's four columns."""


def _inside(char: dict[str, Any], x0: float, x1: float) -> bool:
    h_mid = (char["x0"] + char["x1"]) / 2
    return x0 <= h_mid < x1


def extract_table(
    table: Table, chars: list[dict[str, Any]], mids: list[tuple[float, int]]
) -> list[list[Any]]:
    """``table.extract()``, with ``mids`` the (vertical centre, index) of ``chars``, sorted."""
    keys = [m for m, _ in mids]
    out = []
    for row in table.rows:
        x0, top, x1, bottom = row.bbox
        span = sorted(i for _, i in mids[bisect_left(keys, top) : bisect_left(keys, bottom)])
        row_chars = [chars[i] for i in span if _inside(chars[i], x0, x1)]
        cells: list[str | None] = []
        for cell in row.cells:
            if cell is None:
                cells.append(None)
                continue
            cell_chars = [
                c
                for c in row_chars
                if _inside(c, cell[0], cell[2]) and cell[1] <= (c["top"] + c["bottom"]) / 2 < cell[3]
            ]
            cells.append(utils.extract_text(cell_chars) if cell_chars else "")
        out.append(cells)
    return out


def page_rows(page: Page, page_no: int) -> list[Row]:
    """Rows of every table on ``page``, top to bottom; ``None`` marks a cell merged with the one above."""
    rows: list[Row] = []
    tables = sorted(page.find_tables(SETTINGS), key=lambda t: (t.bbox[1], t.bbox[0]))
    if not tables:
        return rows
    chars = page.chars
    mids = sorted(((c["top"] + c["bottom"]) / 2, i) for i, c in enumerate(chars))
    for table in tables:
        for cells, trow in zip(extract_table(table, chars, mids), table.rows, strict=True):
            if len(cells) != len(COLUMNS):
                raise TableShapeError(f"table has {len(cells)} columns, expected {len(COLUMNS)}")
            rows.append(Row(page_no, *cells, top=trow.bbox[1], bottom=trow.bbox[3]))
    return rows
