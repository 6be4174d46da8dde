"""Path 1: pdfplumber's table extraction, ruling-line strategy, one row per table row.

Cell text is what ``Table.extract()`` returns (same chars, same ``utils.extract_text``), but each row's chars
are found by bisection on their vertical centres instead of a scan of every char on the page per row (the
scan was a fifth of the whole extraction's time), and the table finder's cells are found per intersection
by position (:func:`find_tables`, pdfplumber's cells). Two departures from ``Table.extract()``: chars
printed past the table's right rule that continue a word of the last column belong to it (a word wider
than its column), and a number cell merged over rows whose first has no stem gives its number to the row
beside the stem where it is printed (``Row.cut_number``).
"""

from __future__ import annotations

import itertools
from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from operator import itemgetter
from typing import Any

from pdfplumber import utils
from pdfplumber.page import Page
from pdfplumber.table import Table, TableFinder, TableSettings, cells_to_tables, edges_to_intersections
from pdfplumber.utils.geometry import obj_to_bbox
from pdfplumber.utils.text import (
    DEFAULT_Y_TOLERANCE,
    WordExtractor,
    get_line_cluster_key,
)

from blindmcq.corpus.pages import cluster_objects, word_chars
from blindmcq.corpus.rows import COLUMNS, LINE_TOL, Fit, Row, fit_of

OPTION = COLUMNS.index("option")
SETTINGS = {"vertical_strategy": "lines", "horizontal_strategy": "lines"}


class TableShapeError(ValueError):
    """A table on the page does not have the Commission's four columns."""


_TOP = itemgetter("top")
_WORDS = WordExtractor()  # stateless once built: the extractor utils.extract_text builds for every call
_LINE_KEY = get_line_cluster_key(_WORDS.line_dir)
_PLAIN_DIRECTIONS = (_WORDS.line_dir, _WORDS.char_dir) == ("ttb", "ltr")

# WordExtractor's defaults, as its word test reads them (no tolerance ratios, no punctuation split)
_SIMPLE = (
    _WORDS.x_tolerance_ratio is None
    and _WORDS.y_tolerance_ratio is None
    and not _WORDS.keep_blank_chars
    and not _WORDS.use_text_flow
    and not _WORDS.extra_attrs
    and _WORDS.split_at_punctuation == ""
)


def _upright_words(chars: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``WordExtractor().extract_words(chars)`` of upright chars (``pages.word_chars``), each word its text
    and top only, without the word dicts' bounding boxes (a third of path 1's time)."""
    expand = _WORDS.expansions
    return [
        {
            "text": "".join(expand.get(c["text"], c["text"] or "") for c in word),
            "top": min(map(_TOP, word)),
        }
        for word in word_chars(chars)
    ]


def cell_text(chars: list[dict[str, Any]]) -> str:
    """``utils.extract_text(chars)``: the same words and lines, without building an extractor per cell and a
    ``TextMap`` of one tuple per character (which, for top-to-bottom lines of left-to-right text, returns
    the joined string unchanged)."""
    if not _PLAIN_DIRECTIONS:
        return utils.extract_text(chars)
    if _SIMPLE and chars and all(c["upright"] for c in chars):
        words = _upright_words(chars)
    else:
        words = _WORDS.extract_words(chars)
    lines = cluster_objects(words, _LINE_KEY, DEFAULT_Y_TOLERANCE)
    return "\n".join(" ".join(word["text"] for word in line) for line in lines)


def centres(chars: list[dict[str, Any]]) -> list[tuple[float, int]]:
    """(vertical centre, index) of each of ``chars``, sorted (by centre, then index: a stable sort by the
    centre alone, cheaper than comparing tuples)."""
    mid = [(c["top"] + c["bottom"]) / 2 for c in chars]
    return [(mid[i], i) for i in sorted(range(len(mid)), key=mid.__getitem__)]


def extract_table(
    table: Table,
    chars: list[dict[str, Any]],
    mids: list[tuple[float, int]],
    fits: list[Fit | None] | None = None,
    cut: set[int] | None = None,
) -> list[list[Any]]:
    """``table.extract()``, with ``mids`` the (vertical centre, index) of ``chars``, sorted; ``fits``, when
    given, receives each row's option-cell :class:`Fit` (a row of another shape gets None)."""
    keys = [m for m, _ in mids]
    out = []
    firsts: list[float | None] = []  # the top of each row's number cell text, when it has any
    for row in table.rows:
        x0, top, x1, bottom = row.bbox
        span = sorted(i for _, i in mids[bisect_left(keys, top) : bisect_left(keys, bottom)])
        # A row's cells do not overlap horizontally: each char can only be in the cell whose x-range holds
        # its centre, found by bisection (the same test as the stock scan of every cell).
        placed = sorted((cell[0], k) for k, cell in enumerate(row.cells) if cell is not None)
        lefts = [x for x, _ in placed]
        disjoint = all(row.cells[a][2] <= row.cells[b][0] for (_, a), (_, b) in itertools.pairwise(placed))
        found: list[list[dict[str, Any]]] = [[] for _ in row.cells]
        past: list[dict[str, Any]] = []  # chars right of the table, in the row's band
        cells, order = row.cells, [k for _, k in placed]
        for i in span:
            c = chars[i]
            h_mid = (c["x0"] + c["x1"]) / 2
            if not x0 <= h_mid < x1:
                if h_mid >= x1:
                    past.append(c)
                continue
            if disjoint:
                at = bisect_right(lefts, h_mid) - 1
                if at >= 0:
                    k = order[at]
                    cell = cells[k]
                    if cell[0] <= h_mid < cell[2] and cell[1] <= (c["top"] + c["bottom"]) / 2 < cell[3]:
                        found[k].append(c)
                continue
            # overlapping cells (not a Commission table): test every cell, as the stock scan does
            v_mid = (c["top"] + c["bottom"]) / 2
            for k in order:
                cell = cells[k]
                if cell[0] <= h_mid < cell[2] and cell[1] <= v_mid < cell[3]:
                    found[k].append(c)
        if past and placed and row.cells[placed[-1][1]][2] >= x1 - 1:
            _overflow(found[placed[-1][1]], past)
        if fits is not None:
            box = row.cells[OPTION] if len(row.cells) == len(COLUMNS) else None
            fits.append(fit_of(found[OPTION], box[2], words=False) if box is not None else None)
        out.append(
            [
                None if cell is None else cell_text(cs) if cs else ""
                for cell, cs in zip(row.cells, found, strict=True)
            ]
        )
        firsts.append(min(c["top"] for c in found[0]) if found and found[0] else None)
    moved = _number_beside_stem(out, firsts, [r.bbox[1] for r in table.rows])
    if cut is not None:
        cut.update(moved)
    return out


def _number_beside_stem(out: list[list[Any]], firsts: list[float | None], tops: list[float]) -> set[int]:
    """A number cell merged over several rows whose first row has no stem, its number printed beside a
    stem that begins lower in the cell (a row continued from the page before, merged with the next item's
    number cell), is cut there: the number goes to the row where that stem begins (``out`` changes in
    place; ``firsts``: where each row's number text begins, ``tops``: where each row begins). Returns the
    rows that received a number."""
    moved = set()
    for r, cells in enumerate(out):
        if firsts[r] is None or len(cells) != len(COLUMNS) or cells[1] != "":
            continue
        first = bisect_right(tops, firsts[r] + LINE_TOL) - 1  # the row its first printed line lies in
        q = next((q for q in range(r + 1, first + 1) if out[q][0] is None and out[q][1]), None)
        if q is None or any(out[k][0] is not None for k in range(r + 1, q)):
            continue
        out[q][0], cells[0] = cells[0], ""
        moved.add(q)
    return moved


def _overflow(cell: list[dict[str, Any]], past: list[dict[str, Any]]) -> None:
    """Append to the last cell's ``cell`` chars the chars of ``past`` (right of the table) that continue one
    of its words: on its line and no further from the word's end than a word's char gap. A word printed
    wider than the last column runs past the table's right rule and is the cell's whole; text beside the
    table, a space or more away, is not."""
    ends: list[dict[str, Any]] = []  # per printed line of the cell, its rightmost char
    for c in cell:
        same = next((k for k, e in enumerate(ends) if abs(e["top"] - c["top"]) <= _WORDS.y_tolerance), None)
        if same is None:
            ends.append(c)
        elif c["x1"] > ends[same]["x1"]:
            ends[same] = c
    for c in sorted(past, key=itemgetter("x0")):
        if not c["text"].strip():
            continue
        for k, e in enumerate(ends):
            if (
                abs(e["top"] - c["top"]) <= _WORDS.y_tolerance
                and e["x1"] - 1 <= c["x0"] <= e["x1"] + _WORDS.x_tolerance
            ):
                cell.append(c)
                ends[k] = c
                break


@dataclass(frozen=True)
class Outside:
    """A printed line outside every ruled table of a page (title, running title, footer, or a stray)."""

    top: float
    bottom: float
    text: str
    gap: float | None  # pt from the bottom rule of the nearest table above it; None when none is above


def outside_lines(
    chars: list[dict[str, Any]], tables: list[Table], mids: list[tuple[float, int]] | None = None
) -> list[Outside]:
    """The page's text lines whose chars lie outside every table's vertical band (their centres), top to
    bottom. (Text beside a table, in its band, is not looked for: a page's chars are found by bisection on
    ``mids``, their sorted vertical centres, without a pass over every char.)"""
    boxes = [t.bbox for t in tables]
    if mids is None:
        mids = centres(chars)
    keys = [m for m, _ in mids]
    bands = sorted((bisect_left(keys, top), bisect_right(keys, bottom)) for _, top, _, bottom in boxes)
    picked, at = [], 0
    for lo, hi in bands:
        picked += mids[at:lo] if lo > at else []
        at = max(at, hi)
    picked += mids[at:]
    out = [chars[i] for _, i in picked]
    lines: list[list[dict[str, Any]]] = []
    for c in sorted(out, key=itemgetter("top", "x0")):
        if lines and abs(c["top"] - lines[-1][0]["top"]) < LINE_TOL:
            lines[-1].append(c)
        else:
            lines.append([c])
    found = []
    for line in (ln for ln in lines if any(c["text"].strip() for c in ln)):
        top, bottom = min(c["top"] for c in line), max(c["bottom"] for c in line)
        above = [b[3] for b in boxes if b[3] <= top + LINE_TOL]
        found.append(Outside(top, bottom, cell_text(line), top - max(above) if above else None))
    return found


def _cells(intersections: dict[tuple[float, float], dict[str, list[dict[str, Any]]]]) -> list[tuple]:
    """pdfplumber's ``intersections_to_cells``: the same cells in the same order, each point's edges made a
    set once (not at every test of two points) and the points below and right of a point looked up by its
    x and top (not found by a scan of every later point)."""
    vs = {p: set(map(obj_to_bbox, e["v"])) for p, e in intersections.items()}
    hs = {p: set(map(obj_to_bbox, e["h"])) for p, e in intersections.items()}

    def connects(p1: tuple[float, float], p2: tuple[float, float]) -> bool:
        return (p1[0] == p2[0] and not vs[p1].isdisjoint(vs[p2])) or (
            p1[1] == p2[1] and not hs[p1].isdisjoint(hs[p2])
        )

    points = sorted(intersections)
    by_x: dict[float, list[tuple[float, float]]] = {}
    by_top: dict[float, list[tuple[float, float]]] = {}
    for p in points:  # each list in the points' order
        by_x.setdefault(p[0], []).append(p)
        by_top.setdefault(p[1], []).append(p)
    cells = []
    for pt in points:
        # the later points (the points are distinct and sorted) with the same x, and with the same top
        below = [q for q in by_x[pt[0]] if q > pt]
        right = [q for q in by_top[pt[1]] if q > pt]
        cell = None
        for below_pt in below:
            if not connects(pt, below_pt):
                continue
            for right_pt in right:
                if not connects(pt, right_pt):
                    continue
                bottom_right = (right_pt[0], below_pt[1])
                if (
                    bottom_right in intersections
                    and connects(bottom_right, right_pt)
                    and connects(bottom_right, below_pt)
                ):
                    cell = (pt[0], pt[1], bottom_right[0], bottom_right[1])
                    break
            if cell is not None:
                break
        if cell is not None:
            cells.append(cell)
    return cells


def find_tables(page: Page) -> list[Table]:
    """``page.find_tables(SETTINGS)``: pdfplumber's ``TableFinder`` with its cells found by :func:`_cells`
    (the finder's steps, its edges, intersections and tables, are pdfplumber's own)."""
    settings = TableSettings.resolve(SETTINGS)
    finder = TableFinder.__new__(TableFinder)
    finder.page, finder.settings = page, settings
    finder.edges = finder.get_edges()
    finder.intersections = edges_to_intersections(
        finder.edges, settings.intersection_x_tolerance, settings.intersection_y_tolerance
    )
    finder.cells = _cells(finder.intersections)
    finder.tables = [Table(page, group) for group in cells_to_tables(finder.cells)]
    return finder.tables


def page_rows(page: Page, page_no: int) -> list[Row]:
    """Rows of every table on ``page``, top to bottom; ``None`` marks a cell merged with the one above."""
    return page_reading(page, page_no)[0]


def page_reading(page: Page, page_no: int) -> tuple[list[Row], list[Outside]]:
    """:func:`page_rows` and the page's lines outside the tables (:func:`outside_lines`)."""
    rows: list[Row] = []
    tables = sorted(find_tables(page), key=lambda t: (t.bbox[1], t.bbox[0]))
    chars = page.chars
    if not tables:
        return rows, outside_lines(chars, [])
    mids = centres(chars)
    for table in tables:
        fits: list[Fit | None] = []
        cut: set[int] = set()
        read = extract_table(table, chars, mids, fits, cut)
        for k, (cells, trow, fit) in enumerate(zip(read, table.rows, fits, strict=True)):
            if len(cells) != len(COLUMNS):
                raise TableShapeError(f"table has {len(cells)} columns, expected {len(COLUMNS)}")
            rows.append(
                Row(page_no, *cells, top=trow.bbox[1], bottom=trow.bbox[3], fit=fit, cut_number=k in cut)
            )
    return rows, outside_lines(chars, tables, mids)
