"""The one type both extraction paths emit: a table row of four cells.

A cell is ``None`` when the cell above spans into this row (a merged cell continues), and a string
(possibly empty) when a new cell starts in this row. Lines inside a cell are joined with ``\\n``,
as printed, so the assembler can undo line-break hyphenation.
"""

from __future__ import annotations

from dataclasses import dataclass

COLUMNS = ("number", "question", "option", "mark")


@dataclass(frozen=True)
class Row:
    page: int  # 1-based page number
    number: str | None
    question: str | None
    option: str | None
    mark: str | None
    top: float | None = None  # pt from the page top: where the row band begins (for page crops)
    bottom: float | None = None
