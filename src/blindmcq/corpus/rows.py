"""The one type both extraction paths emit: a table row of four cells.

A cell is ``None`` when the cell above spans into this row (a merged cell continues), and a string
(possibly empty) when a new cell starts in this row. Lines inside a cell are joined with ``\\n``,
as printed, so the assembler can undo line-break hyphenation.

``Row.fit`` is the printed geometry of the option cell's lines (:class:`Fit`): the assembler uses it to
tell a page-top row that continues the option above (its first word could not have fitted on the last
line above) from a new option. Each path measures it from what it reads (path 1 chars, path 2 words).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from operator import itemgetter
from typing import Any

COLUMNS = ("number", "question", "option", "mark")
LINE_TOL = 3.0  # pt: boxes whose tops differ by less share a printed line
JOIN_GAP = 0.5  # pt: chars closer than this belong to one word (a space is wider, even condensed)


@dataclass(frozen=True)
class Fit:
    """Where an option cell's lines end, in pt from the page's left edge."""

    right: float  # the cell's right border
    widest: float  # the right end of its longest line
    last: float  # the right end of its last line
    lead: float  # the width of the first word of its first line
    space: float = 0.0  # the narrowest space between two words on one of its lines, as printed (0: none)
    leads: tuple[float, ...] = ()  # the width of the first word of each line, top to bottom


@dataclass(frozen=True)
class Row:
    page: int  # 1-based page number
    number: str | None
    question: str | None
    option: str | None
    mark: str | None
    top: float | None = None  # pt from the page top: where the row band begins (for page crops)
    bottom: float | None = None
    fit: Fit | None = None  # the option cell's line geometry, when it has text
    # the number cell was cut from a number cell merged over the rows above (its number printed here)
    cut_number: bool = False


def fit_of(boxes: Sequence[Mapping[str, Any]], right: float, *, words: bool) -> Fit | None:
    """The :class:`Fit` of a cell's chars (``words=False``) or word boxes; None when it has no text."""
    boxes = [b for b in boxes if b["text"].strip()]
    if not boxes:
        return None
    bottom = max(b["top"] for b in boxes)
    lines: list[list[Mapping[str, Any]]] = []
    for b in sorted(boxes, key=itemgetter("top")):
        if lines and b["top"] - lines[-1][0]["top"] < LINE_TOL:
            lines[-1].append(b)
        else:
            lines.append([b])
    leads, gaps = [], []
    for line in lines:
        line.sort(key=itemgetter("x0"))
        end = line[0]["x1"]
        in_first = True
        for a, b in itertools.pairwise(line):
            gap = b["x0"] - a["x1"]
            if words or gap > JOIN_GAP:  # a word boundary (spaces were dropped above)
                in_first = False
                if gap > 0:
                    gaps.append(gap)
            elif in_first:
                end = max(end, b["x1"])
        leads.append(end - line[0]["x0"])
    return Fit(
        right=right,
        widest=max(b["x1"] for b in boxes),
        last=max(b["x1"] for b in boxes if bottom - b["top"] < LINE_TOL),
        lead=leads[0],
        space=min(gaps, default=0.0),
        leads=tuple(leads),
    )
