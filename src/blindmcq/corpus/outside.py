"""Text printed outside the ruled cells: counted per page, and a stray line below a table put to a reviewer.

Path 1 reads only what lies inside its tables' cells; titles, running titles and footers lie outside by
design, but so would a stem's tail printed below the last rule of a page. Every outside line is counted per
page in ``verification.json`` (``files[].outside_cells``). A line is a **stray** when it starts within
``STRAY_GAP`` pt below a table's bottom rule and its text (digits aside) is printed on no other page (a
footer or running title repeats); the item whose rows end last above it on that page gets
``meta.ambiguous`` and is disputed: whether the line belongs to it cannot be told from the file.
"""

from __future__ import annotations

import dataclasses
import re
from collections import Counter
from collections.abc import Sequence
from typing import Any

from blindmcq.corpus.path_tables import Outside
from blindmcq.datasets.items import Item

STRAY_GAP = 16.0  # pt: a line this close under a table's bottom rule reads as part of the table's last row
_DIGITS = re.compile(r"\d+")


def _shape(text: str) -> str:
    return _DIGITS.sub("0", " ".join(text.split()))


def strays(outside: dict[int, list[Outside]]) -> list[tuple[int, Outside]]:
    """(page, line) of every stray line (module doc), in page order."""
    pages_of = Counter(shape for lines in outside.values() for shape in {_shape(o.text) for o in lines})
    return [
        (page, o)
        for page in sorted(outside)
        for o in outside[page]
        if o.gap is not None and o.gap <= STRAY_GAP and pages_of[_shape(o.text)] == 1
    ]


def report(outside: dict[int, list[Outside]]) -> dict[str, Any]:
    """Per page (with any): lines and characters outside the cells; and the stray lines."""
    pages = {
        str(p): {"lines": len(lines), "chars": sum(len(o.text.replace(" ", "")) for o in lines)}
        for p, lines in sorted(outside.items())
        if lines
    }
    return {
        "chars": sum(v["chars"] for v in pages.values()),
        "pages": pages,
        "stray": [{"page": p, "text": o.text} for p, o in strays(outside)],
    }


def dispute_strays(items: Sequence[Item], outside: dict[int, list[Outside]]) -> list[Item]:
    """``items`` with the item above each stray line ambiguous (module doc)."""
    why: dict[str, list[str]] = {}
    for page, line in strays(outside):
        above = [
            (box[2], it.id)
            for it in items
            for box in it.meta.get("boxes", [])
            if box[0] == page and box[2] <= line.top + 1.0
        ]
        if above:
            owner = max(above)[1]
            why.setdefault(owner, []).append(f"page {page}: text printed below the table: {line.text[:60]!r}")
    out = []
    for it in items:
        if it.id in why:
            doubts = [it.meta["ambiguous"]] if it.meta.get("ambiguous") else []
            it = dataclasses.replace(it, meta={**it.meta, "ambiguous": "; ".join(doubts + why[it.id])})
        out.append(it)
    return out
