"""Path 2, independent of pdfplumber's table finder: the grid from ruling lines, text from word boxes.

Rows come from the horizontal rules, columns from the vertical ones. A cell begins in a row band when a
horizontal rule at the band's top crosses the column; otherwise it continues the cell above (a merged
cell). Each word goes to the cell holding its centre (a word begun in the last column and printed past the
table's right rule, to that column); a cell's lines are its words grouped by height. A number cell merged
over bands whose first has no stem gives its number to the band beside the stem where it is printed.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import defaultdict
from operator import itemgetter
from typing import Any

from pdfplumber.page import Page
from pdfplumber.utils.text import LIGATURES

from blindmcq.corpus.pages import word_chars
from blindmcq.corpus.rows import COLUMNS, Row, fit_of

N_COLUMNS = 4
OPTION = COLUMNS.index("option")
TOL = 2.0  # pt: rules closer than this are one rule
LINE_TOL = 3.0  # pt: words whose tops differ by less share a printed line
_TOP, _BOTTOM, _X0, _X1 = itemgetter("top"), itemgetter("bottom"), itemgetter("x0"), itemgetter("x1")


def page_words(page: Page) -> list[dict[str, Any]]:
    """``page.extract_words()`` (pdfplumber's defaults): the same words, keys and values, in the same
    order, built from ``pages.word_chars`` (pdfplumber's word extractor runs a generator and a method call
    per char). A page with a char that is not upright is left to pdfplumber's own extractor."""
    chars = page.chars
    if not all(c["upright"] for c in chars):
        return page.extract_words()
    out: list[dict[str, Any]] = []
    expand = LIGATURES

    def emit(word: list[dict[str, Any]]) -> None:
        top = min(map(_TOP, word))
        x0, x1 = min(map(_X0, word)), max(map(_X1, word))
        bottom = max(map(_BOTTOM, word))
        first = word[0]
        out.append(
            {
                "text": "".join(expand.get(c["text"], c["text"] or "") for c in word),
                "x0": x0,
                "x1": x1,
                "top": top,
                "doctop": top + (first["doctop"] - first["top"]),
                "bottom": bottom,
                "upright": first["upright"],
                "height": bottom - top,
                "width": x1 - x0,
                "direction": "ltr",
            }
        )

    for word in word_chars(chars):  # chars grouped by upright: one group here
        emit(word)
    return out


class GridShapeError(ValueError):
    """The ruled grid on the page does not have the Commission's four columns."""


def _cluster(values: list[float]) -> list[float]:
    """Sorted positions, merged where closer than TOL (a rule drawn twice, or as a thin rectangle)."""
    groups: list[list[float]] = []
    for v in sorted(values):
        if groups and v - groups[-1][-1] <= TOL:
            groups[-1].append(v)
        else:
            groups.append([v])
    return [sum(g) / len(g) for g in groups]


def _cell_text(words: list[dict[str, Any]]) -> str:
    lines: list[list[dict[str, Any]]] = []
    for w in sorted(words, key=itemgetter("top", "x0")):
        if lines and abs(w["top"] - lines[-1][0]["top"]) < LINE_TOL:
            lines[-1].append(w)
        else:
            lines.append([w])
    return "\n".join(" ".join(w["text"] for w in sorted(line, key=itemgetter("x0"))) for line in lines)


def _number_beside_stem(
    owner: list[list[int]], words: dict[tuple[int, int], list[dict[str, Any]]], ys: list[float]
) -> set[int]:
    """A number cell merged over several bands whose first band has no stem, its number printed beside a
    stem that begins lower in the cell (a row continued from the page before, merged with the next item's
    number cell), is cut there: the number belongs to the band where that stem begins, not the row above.
    ``owner`` and ``words`` change in place; returns the bands that received a number."""
    cut = set()
    for o in sorted({owner[i][0] for i in range(len(owner))}):
        cell = words.get((o, 0))
        if not cell or owner[o][1] != o or words.get((o, 1)):
            continue
        first = bisect_right(ys, min(w["top"] for w in cell)) - 1  # the band of its first printed line
        stems = [
            q for q in range(o + 1, first + 1) if owner[q][0] == o and owner[q][1] == q and words.get((q, 1))
        ]
        if not stems:
            continue
        q = stems[0]
        for i in range(q, len(owner)):
            if owner[i][0] == o:
                owner[i][0] = q
        words[(q, 0)] = words.pop((o, 0))
        words[(o, 0)] = []
        cut.add(q)
    return cut


def page_rows(page: Page, page_no: int) -> list[Row]:
    """Rows of the ruled grid on ``page``, top to bottom; ``None`` marks a cell merged with the one above."""
    edges = page.edges
    vert = [e for e in edges if e["orientation"] == "v" and e["bottom"] - e["top"] > TOL]
    horiz = [e for e in edges if e["orientation"] == "h" and e["x1"] - e["x0"] > TOL]
    if not vert or not horiz:
        return []
    xs = _cluster([e["x0"] for e in vert])
    if len(xs) == 2 and not any(e.get("stroke", True) for e in vert + horiz):
        # every edge is a side of a filled, unstroked rectangle: shading, not rules
        shaded = sum(1 for r in page.rects if r.get("fill") and not r.get("stroke"))
        raise GridShapeError(
            f"the table has no ruling lines: its rows are told apart by shading ({shaded} filled rectangles "
            "the width of the table, no stroked line between its columns or rows); the two paths read a "
            "table whose columns are ruled"
        )
    if len(xs) == 2:  # two verticals: the frame of a table whose columns are not ruled
        raise GridShapeError(
            "the table is ruled by its outer frame only (no vertical rules between its columns); the two "
            "paths read a table whose columns are ruled"
        )
    if len(xs) != N_COLUMNS + 1:
        raise GridShapeError(f"ruled grid has {len(xs) - 1} columns, expected {N_COLUMNS}")
    top, bottom = min(e["top"] for e in vert), max(e["bottom"] for e in vert)
    horiz = [
        e
        for e in horiz
        if top - TOL <= e["top"] <= bottom + TOL and e["x1"] > xs[0] + TOL and e["x0"] < xs[-1] - TOL
    ]
    ys = _cluster([e["top"] for e in horiz])
    if len(ys) < 2:
        return []
    # Which columns each rule crosses, by the rule's cluster index.
    mids = [(xs[j] + xs[j + 1]) / 2 for j in range(N_COLUMNS)]
    crossed: dict[int, set[int]] = defaultdict(set)
    for e in horiz:
        i = min(range(len(ys)), key=lambda k: abs(ys[k] - e["top"]))
        crossed[i].update(j for j, m in enumerate(mids) if e["x0"] - TOL <= m <= e["x1"] + TOL)
    n_bands = len(ys) - 1
    owner = [[0] * N_COLUMNS for _ in range(n_bands)]  # band where the cell covering (band, col) begins
    for i in range(n_bands):
        for j in range(N_COLUMNS):
            owner[i][j] = i if i == 0 or j in crossed[i] else owner[i - 1][j]
    words: dict[tuple[int, int], list[dict[str, Any]]] = defaultdict(list)
    for w in page_words(page):
        cx, cy = (w["x0"] + w["x1"]) / 2, (w["top"] + w["bottom"]) / 2
        j, i = bisect_right(xs, cx) - 1, bisect_right(ys, cy) - 1
        if j == N_COLUMNS and w["x0"] < xs[-1]:
            j = N_COLUMNS - 1  # a word wider than the last column runs past the table's right rule: its own
        if 0 <= j < N_COLUMNS and 0 <= i < n_bands:
            words[(owner[i][j], j)].append(w)
    cut = _number_beside_stem(owner, words, ys)
    return [
        Row(
            page_no,
            *(_cell_text(words[(i, j)]) if owner[i][j] == i else None for j in range(N_COLUMNS)),
            top=ys[i],
            bottom=ys[i + 1],
            fit=fit_of(words[(i, OPTION)], xs[OPTION + 1], words=True) if owner[i][OPTION] == i else None,
            cut_number=i in cut,
        )
        for i in range(n_bands)
    ]
