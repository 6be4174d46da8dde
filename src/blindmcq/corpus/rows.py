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


def fit_of(boxes: Sequence[Mapping[str, Any]], right: float, *, words: bool) -> Fit | None:
    """The :class:`Fit` of a cell's chars (``words=False``) or word boxes; None when it has no text."""
    boxes = [b for b in boxes if b["text"].strip()]
    if not boxes:
        return None
    tops = [b["top"] for b in boxes]
    top, bottom = min(tops), max(tops)
    first = sorted((b for b in boxes if b["top"] - top < LINE_TOL), key=lambda b: b["x0"])
    end = first[0]["x1"]
    if not words:  # the first word: chars up to the first gap (spaces were dropped above)
        for b in first[1:]:
            if b["x0"] - end > JOIN_GAP:
                break
            end = max(end, b["x1"])
    return Fit(
        right=right,
        widest=max(b["x1"] for b in boxes),
        last=max(b["x1"] for b in boxes if bottom - b["top"] < LINE_TOL),
        lead=end - first[0]["x0"],
        space=_space(boxes, words=words),
    )


def _space(boxes: Sequence[Mapping[str, Any]], *, words: bool) -> float:
    """The narrowest gap between two words on one line: between word boxes, or between chars further apart
    than JOIN_GAP (space chars were dropped); 0.0 when no line holds two words."""
    gaps = []
    ordered = sorted(boxes, key=lambda b: (round(b["top"] / LINE_TOL), b["x0"]))
    for a, b in itertools.pairwise(ordered):
        if abs(a["top"] - b["top"]) < LINE_TOL:
            gap = b["x0"] - a["x1"]
            if gap > (0.0 if words else JOIN_GAP):
                gaps.append(gap)
    return min(gaps, default=0.0)
