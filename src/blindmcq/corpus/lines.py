"""Table rows read from the page's text lines, for the reading that shares no layout logic with the paths.

Paths 1 and 2 cut cells from the ruled grid (pdfplumber's table finder; the vertical and horizontal rules)
and share ``assemble`` for everything after. This module starts from the character stream instead and
decides the table's shape by its own rules, from its own code (it imports no other corpus module but the
``Row`` type):

- **Words**: a page's chars grouped by height into lines, split into words at spaces and gaps
  (:func:`page_text`, run while the page is open; the rest works on what it returns).
- **Table**: on each page, the text between the topmost and the lowest horizontal rule (any rule, so a
  table ruled only horizontally, or only framed, reads too); titles, running titles and footers lie
  outside.
- **Columns**: the file's table words piled up along the page width; the four columns are the runs of x
  that words cover, separated by corridors that (nearly) no word crosses, found over the whole file. Not
  four runs: the file cannot be read this way (:class:`LinesError`, naming the file).
- **Spanning text**: a phrase (words a plain word space apart) that crosses a corridor is one text over
  several columns: from the number or stem column on, a heading row (skipped, counted); from the
  option column on, a note inside the item (put in the fourth cell, where an exclusion note is looked for).
- **Rows**: a horizontal rule crossing the option column starts a row; within that, a new text block in the
  option column, or in the fourth column below the option text above it, starts one (a block: lines no
  further apart than the file's usual line pitch, 1.3x), so tables with no inner rules still split into
  rows. A column's block belongs to the row where it starts. Each row carries where its option text's lines
  end and how wide its first word is (``Row.fit``, from its words), for reading3's page-top rows.

A cell no text reaches is ``""`` (never ``None``): without the grid this reading cannot tell a merged cell
from an empty one, and does not need to.
"""

from __future__ import annotations

import itertools
from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Any

from blindmcq.corpus.rows import Fit, Row

Word = tuple[float, float, float, float, str]  # x0, x1, top, bottom, text
Rule = tuple[float, float, float]  # y, x0, x1

LINE_TOL = 3.0  # pt: word tops closer than this share a printed line
GAP = 0.6  # pt: chars further apart than this (or a space) end a word
RULE_TOL = 1.5  # pt: rules closer than this are one rule
CROSSERS = 0.02  # a corridor may be crossed by this share of the table's printed lines (headings, notes)
PITCH_SLACK = 1.3  # lines further apart than this times the usual pitch start a new block
N_COLUMNS = 4


class LinesError(ValueError):
    """The text lines do not form the four columns this reading expects (``page``: where, when known)."""

    def __init__(self, message: str, page: int | None = None) -> None:
        super().__init__(message)
        self.page = page


@dataclass
class PageText:
    """What the line reading keeps of one page: its words and horizontal rules."""

    page: int
    width: float
    words: list[Word] = field(default_factory=list)
    rules: list[Rule] = field(default_factory=list)
    # Print faults, (what, top, bottom): glyphs printed over other glyphs, glyphs a rule runs through
    faults: list[tuple[str, float, float]] = field(default_factory=list)


def page_text(page: Any, page_no: int) -> PageText:
    """The words (from chars) and horizontal rules of an open pdfplumber page."""
    chars = sorted(page.chars, key=itemgetter("top", "x0"))
    lines: list[list[dict[str, Any]]] = []
    top = None
    for c in chars:
        if top is None or c["top"] - top >= LINE_TOL:
            lines.append([])
            top = c["top"]
        lines[-1].append(c)
    words: list[Word] = []
    for line in lines:
        line.sort(key=itemgetter("x0"))
        cur: list[dict[str, Any]] = []
        for c in line:
            blank = not c["text"].strip()
            if cur and (blank or c["x0"] - cur[-1]["x1"] > GAP):
                words.append(_word(cur))
                cur = []
            if not blank:
                cur.append(c)
        if cur:
            words.append(_word(cur))
    rules = [
        (float(e["top"]), float(e["x0"]), float(e["x1"]))
        for e in page.edges
        if e["orientation"] == "h" and e["x1"] - e["x0"] > RULE_TOL
    ]
    columns = [
        (float(e["x0"]), float(e["top"]), float(e["bottom"]))
        for e in page.edges
        if e["orientation"] == "v" and e["bottom"] - e["top"] > RULE_TOL
    ]
    return PageText(page_no, float(page.width), words, rules, print_faults(lines, rules, columns))


OVERLAP = 0.25  # two glyph boxes sharing more than this share of the smaller one: one printed over the other
KERN = 0.5  # pt: neighbouring glyphs of one line may overlap this much (kerning, italics)
SAME_GLYPH = 1.5  # pt: the same glyph drawn again this close (a simulated bold) is not an overprint
STRIKE_TOL = 1.5  # pt: a line ending this close to the first and last glyph it crosses strikes them through
THROUGH = 0.3  # a rule this far inside a glyph's box from its top or bottom runs through the glyph
# Glyphs either side of a column's rule closer than this share of their height are one run of text printed
# past the rule (a word space is about 0.3; text kept inside two cells is at least both cells' padding apart)
OVERRUN_GAP = 0.4
OVERRUN = "text runs past a column's rule into the next column"


def _overprinted(
    a: tuple[float, float, float, float, str], b: tuple[float, float, float, float, str]
) -> bool:
    ix = min(a[1], b[1]) - max(a[0], b[0])
    iy = min(a[3], b[3]) - max(a[2], b[2])
    if ix <= 0 or iy <= 0:
        return False
    if a[4] == b[4] and abs(a[0] - b[0]) < SAME_GLYPH and abs(a[2] - b[2]) < SAME_GLYPH:
        return False  # the same glyph drawn twice (a simulated bold)
    return ix * iy > OVERLAP * min((a[1] - a[0]) * (a[3] - a[2]), (b[1] - b[0]) * (b[3] - b[2]))


def _under(
    line: list[tuple[float, float, float, float, str]], starts: list[float], widest: float, b: Any
) -> list[tuple[float, float, float, float, str]]:
    """The glyphs of ``line`` (left to right, ``starts`` their x0) whose x range meets glyph ``b``'s."""
    return line[bisect_left(starts, b[0] - widest) : bisect_left(starts, b[1])]


def _segments(line: list[Any]) -> list[tuple[float, float, list[float], float, list[Any]]]:
    """A printed line's runs of glyphs (no gap wider than half a glyph's height): x0, x1, the glyphs'
    starts, the widest glyph, the glyphs."""
    runs: list[list[Any]] = []
    run: list[Any] = []
    for b in line:
        if run:
            end = run[-1][1]  # the right end of the run's last three glyphs
            if len(run) > 1:
                end = max(end, run[-2][1], run[-3][1]) if len(run) > 2 else max(end, run[-2][1])
            if b[0] - end < 0.5 * (b[3] - b[2]):
                run.append(b)
                continue
        run = [b]
        runs.append(run)
    return [
        (min(g[0] for g in r), max(g[1] for g in r), [g[0] for g in r], max(g[1] - g[0] for g in r), r)
        for r in runs
    ]


def print_faults(
    lines: Sequence[Sequence[dict[str, Any]]],
    rules: Sequence[Rule],
    columns: Sequence[tuple[float, float, float]] = (),
) -> list[tuple[str, float, float]]:
    """Where the page's glyphs are not legible as separate text, from its chars grouped into printed lines
    (each left to right): a glyph overlapping another (text printed over text, such as a long cell's lines
    run into the cell below), a glyph a horizontal rule runs through (a line printed across the cell's
    edge), and a line of text running past an inner vertical rule (``columns``: (x, top, bottom) of each;
    a glyph the rule runs through, or glyphs on either side of it no further apart than a word space: text
    overrunning its cell into the next column; the table's outermost rules aside, as text past them is read
    by no cell); each as (what, top, bottom), merged per line. Lines are compared with their neighbours
    only where their heights overlap, so a page costs little more than one pass over its chars."""
    boxed = [[b for b in map(_BOX, line) if b[1] > b[0] and b[3] > b[2] and b[4].strip()] for line in lines]
    boxed = [line for line in boxed if line]
    spans = [(min(b[2] for b in line), max(b[3] for b in line)) for line in boxed]
    segments = [_segments(line) for line in boxed]
    found: list[tuple[str, float, float]] = []
    over = "glyphs printed over other glyphs"
    for k, line in enumerate(boxed):
        # glyphs of one line that merely touch (kerning) are skipped before the full test
        hits = [b for a, b in itertools.pairwise(line) if a[1] - b[0] > KERN and _overprinted(a, b)]
        for j in range(k + 1, len(boxed)):
            if spans[j][0] >= spans[k][1]:
                break
            height = min(spans[k][1] - spans[k][0], spans[j][1] - spans[j][0])
            if spans[k][1] - spans[j][0] <= OVERLAP * height:
                continue
            # lines that share some height (text in another column, or printed over this) are compared
            # where their runs of text meet
            for a0, a1, starts, widest, glyphs in segments[k]:
                for b0, b1, _, _, others in segments[j]:
                    if a0 < b1 and b0 < a1:
                        hits += [
                            b
                            for b in others
                            if any(_overprinted(a, b) for a in _under(glyphs, starts, widest, b))
                        ]
        found += [(over, b[2], b[3]) for b in hits]
    ys = sorted(rules)
    at = [r[0] for r in ys]
    for (top, bottom), line in zip(spans, boxed, strict=True):
        h = bottom - top
        near = ys[bisect_right(at, top + THROUGH * h * 0.5) : bisect_right(at, bottom - THROUGH * h * 0.5)]
        for r in near:
            crossed = [
                b
                for b in line
                if r[1] < b[1]
                and b[0] < r[2]
                and b[2] + THROUGH * (b[3] - b[2]) < r[0] < b[3] - THROUGH * (b[3] - b[2])
            ]
            if not crossed:
                continue
            # a line that starts and ends with the glyphs it crosses is drawn over the text (struck through);
            # a cell's rule reaches past them to the cell's border
            struck = r[1] >= crossed[0][0] - STRIKE_TOL and r[2] <= crossed[-1][1] + STRIKE_TOL
            what = "text struck through (an exclusion?)" if struck else "a rule runs through the text"
            found += [(what, b[2], b[3]) for b in crossed]
    found += _overruns(boxed, spans, columns)
    merged: list[tuple[str, float, float]] = []
    for what, t, b in sorted(found):
        if merged and merged[-1][0] == what and t <= merged[-1][2] + LINE_TOL:
            merged[-1] = (what, merged[-1][1], max(b, merged[-1][2]))
        else:
            merged.append((what, t, b))
    return merged


def _overruns(
    boxed: Sequence[Sequence[tuple[float, float, float, float, str]]],
    spans: Sequence[tuple[float, float]],
    columns: Sequence[tuple[float, float, float]],
) -> list[tuple[str, float, float]]:
    """(OVERRUN, top, bottom) of each printed line that runs past an inner vertical rule (see
    :func:`print_faults`)."""
    if not columns:
        return []
    left, right = min(c[0] for c in columns), max(c[0] for c in columns)
    inner = sorted(c for c in columns if left + RULE_TOL < c[0] < right - RULE_TOL)
    found = []
    for (top, bottom), line in zip(spans, boxed, strict=True):
        mid, h = (top + bottom) / 2, bottom - top
        starts = [b[0] for b in line]
        for x, r_top, r_bottom in inner:
            if not r_top < mid < r_bottom or not line[0][0] < x < line[-1][1]:
                continue
            k = bisect_left(starts, x)  # line[k - 1] is the last glyph starting left of the rule
            if k == 0:
                continue
            a = line[k - 1]
            if a[1] > x + KERN or (k < len(line) and line[k][0] - a[1] < OVERRUN_GAP * h):
                found.append((OVERRUN, top, bottom))
                break
    return found


def horizontal_only(pt: PageText) -> bool:
    """Whether the page holds text between two horizontal rules (and no vertical rules were needed to
    find it): asked only of a file where neither path found a ruled table."""
    table = _table_words(pt)
    return table is not None and bool(table[0])


def _word(chars: list[dict[str, Any]]) -> Word:
    return (
        chars[0]["x0"],
        max(map(_X1, chars)),
        min(map(_TOP, chars)),
        max(map(_BOTTOM, chars)),
        "".join(map(_TEXT, chars)),
    )


_X1, _TOP, _BOTTOM, _TEXT = itemgetter("x1"), itemgetter("top"), itemgetter("bottom"), itemgetter("text")
_BOX = itemgetter("x0", "x1", "top", "bottom", "text")


def _cluster(ys: Sequence[float]) -> list[float]:
    out: list[float] = []
    for y in sorted(ys):
        if not out or y - out[-1] > RULE_TOL:
            out.append(y)
    return out


def _lines(words: Sequence[Word]) -> list[list[Word]]:
    """Words grouped into printed lines (by top), each line left to right."""
    out: list[list[Word]] = []
    for w in sorted(words, key=itemgetter(2, 0)):
        if out and w[2] - out[-1][0][2] < LINE_TOL:
            out[-1].append(w)
        else:
            out.append([w])
    return [sorted(line) for line in out]


def _table_words(pt: PageText) -> tuple[list[Word], float, float] | None:
    ys = _cluster([r[0] for r in pt.rules])
    if len(ys) < 2:
        return None
    top, bottom = ys[0], ys[-1]
    return [w for w in pt.words if top <= (w[2] + w[3]) / 2 <= bottom], top, bottom


class _Runs:
    """The runs of x that a set of pages' table words cover (see :func:`columns`)."""

    def __init__(self, pages: Sequence[PageText]) -> None:
        width = int(max((p.width for p in pages), default=0)) + 2
        cover = [0] * (width + 1)
        self.n_lines = 0
        heights: list[float] = []
        for pt in pages:
            table = _table_words(pt)
            if table is None:
                continue
            heights += [w[3] - w[2] for w in table[0][:50]]
            for line in _lines(table[0]):
                self.n_lines += 1
                for x0, x1, *_ in line:
                    cover[min(width, max(0, int(x0)))] += 1
                    cover[min(width, max(0, int(x1) + 1))] -= 1
        level, runs, start = 0, [], None
        floor = max(1, CROSSERS * self.n_lines)
        for x in range(width + 1):
            level += cover[x]
            inside = level > floor
            if inside and start is None:
                start = x
            elif not inside and start is not None:
                runs.append((start, x))
                start = None
        # A gap no wider than a word space is not a corridor ("№" and the number printed after it)
        space = sorted(h)[len(h) // 2] * 0.5 if (h := heights) else 0.0
        merged: list[tuple[int, int]] = []
        for a, b in runs:
            if merged and a - merged[-1][1] <= space:
                merged[-1] = (merged[-1][0], b)
            else:
                merged.append((a, b))
        self.runs = merged

    def said(self) -> str:
        return f"{len(self.runs)} columns, not {N_COLUMNS} (x {', '.join(f'{a}-{b}' for a, b in self.runs)})"


def columns(pages: Sequence[PageText], file: str = "") -> list[float]:
    """The three x positions that separate the four text columns, from the corridors of the given pages
    (one page size: :func:`file_rows` groups a file's pages by size). Not four: :class:`LinesError` naming
    the first page whose own text lines do not form four columns, else the pages' first and last."""
    found = _Runs(pages)
    if not found.n_lines:
        raise LinesError(f"{file}: no text between horizontal rules on any page")
    if len(found.runs) != N_COLUMNS:
        for pt in sorted(pages, key=lambda p: p.page):
            alone = _Runs([pt])
            if alone.n_lines and len(alone.runs) != N_COLUMNS:
                raise LinesError(f"{file}: page {pt.page}: the text lines form {alone.said()}", page=pt.page)
        numbers = sorted(p.page for p in pages)
        raise LinesError(
            f"{file}: pages {numbers[0]} to {numbers[-1]} (each page alone forms {N_COLUMNS} columns, their "
            f"columns do not line up): together the text lines form {found.said()}",
            page=numbers[0],
        )
    runs = found.runs
    return [(runs[k][1] + runs[k + 1][0]) / 2 for k in range(N_COLUMNS - 1)]


def _pitch(pages: Sequence[PageText], bounds: list[float]) -> float:
    """The file's usual distance between line tops inside one column (a cell's line pitch)."""
    diffs: Counter[float] = Counter()
    for pt in pages:
        table = _table_words(pt)
        if table is None:
            continue
        by_col: list[list[Word]] = [[] for _ in range(N_COLUMNS)]
        for w in table[0]:
            by_col[bisect_right(bounds, (w[0] + w[1]) / 2)].append(w)
        for col in by_col:
            tops = [line[0][2] for line in _lines(col)]
            diffs.update(round(b - a, 1) for a, b in itertools.pairwise(tops) if b - a > LINE_TOL)
    # A cell's line pitch is the smallest regular distance: the most common one can be the distance
    # between rows where most cells hold one line (a landscape page).
    total = sum(diffs.values())
    for d in sorted(diffs):
        if sum(n for e, n in diffs.items() if abs(e - d) <= 0.5) >= 0.05 * total:
            return d
    return 0.0


def _phrases(line: list[Word], bounds: list[float]) -> list[tuple[int | None, list[Word]]]:
    """A printed line cut into phrases (words a plain word space apart), each with its column, or None
    for a phrase over a column boundary (text of neighbouring cells is further apart than a space)."""
    out: list[list[Word]] = []
    for w in line:
        if out and w[0] - out[-1][-1][1] < 0.5 * (w[3] - w[2]):
            out[-1].append(w)
        else:
            out.append([w])
    found: list[tuple[int | None, list[Word]]] = []
    for ph in out:
        cols = {bisect_right(bounds, (w[0] + w[1]) / 2) for w in ph}
        over = any(w[0] < x < w[1] for w in ph for x in bounds)
        found.append((cols.pop() if len(cols) == 1 and not over else None, ph))
    return found


@dataclass
class _Block:
    col: int
    top: float
    lines: list[str]
    bottom: float = 0.0  # the bottom of its last line
    words: list[list[Word]] = field(default_factory=list)  # each line's words, left to right


def _blocks(lines: list[list[Word]], col: int, pitch: float, rules: list[float]) -> list[_Block]:
    """The column's text blocks: a rule across the column, or more than the usual pitch, between lines."""
    out: list[_Block] = []
    last = None
    for line in lines:
        top = line[0][2]
        ruled = last is not None and bisect_right(rules, top) != bisect_right(rules, last)
        if last is None or ruled or (pitch and top - last > PITCH_SLACK * pitch):
            out.append(_Block(col, top, []))
        out[-1].lines.append(" ".join(w[4] for w in line))
        out[-1].words.append(line)
        out[-1].bottom = max(w[3] for w in line)
        last = top
    return out


def page_rows(pt: PageText, bounds: list[float], pitch: float) -> tuple[list[Row], int]:
    """The rows of one page's table, and how many heading rows (spanning text from the left) it skipped."""
    table = _table_words(pt)
    if table is None:
        return [], 0
    words, top, bottom = table
    option_x = (bounds[1] + bounds[2]) / 2
    starts = _cluster([y for y, x0, x1 in pt.rules if x0 - RULE_TOL <= option_x <= x1 + RULE_TOL])
    starts = [y for y in starts if y < bottom - RULE_TOL] or [top]
    by_col: list[list[Word]] = [[] for _ in range(N_COLUMNS)]
    notes: list[tuple[float, str]] = []
    heading_tops: list[float] = []
    for line in _lines(words):
        for col, phrase in _phrases(line, bounds):
            if col is not None:
                by_col[col].extend(phrase)
                continue
            start = bisect_right(bounds, (phrase[0][0] + phrase[0][1]) / 2)
            if start >= 2:  # over the option and fourth columns: a note inside the item
                notes.append((phrase[0][2], " ".join(w[4] for w in phrase)))
            else:  # from the number or stem column across: a heading row
                heading_tops.append(phrase[0][2])
    edges = [-1.0, *bounds, pt.width + 1]
    across = [
        _cluster(
            [y for y, x0, x1 in pt.rules if x0 - RULE_TOL <= (edges[c] + edges[c + 1]) / 2 <= x1 + RULE_TOL]
        )
        for c in range(N_COLUMNS)
    ]
    blocks = [b for c in range(N_COLUMNS) for b in _blocks(_lines(by_col[c]), c, pitch, across[c])]
    # Rows begin at rules over the option column, and at blocks starting between them in the option or
    # fourth column (a table with no inner rules).
    begins = sorted(starts)
    # A fourth-column block starts a row only below the option text above it (a mark centred beside a
    # tall option starts none; a mark beside a blank option in an unruled table does).
    new: list[float] = []
    firsts: dict[int, float] = {}  # per band, where its first option or fourth-column block starts
    ends: dict[int, float] = {}  # per band, where its option text so far ends
    for b in sorted((b for b in blocks if b.col >= 2), key=lambda b: b.top):
        band = _band(begins, b.top)
        if band not in firsts:
            firsts[band] = b.top
        elif b.top - firsts[band] > LINE_TOL and (b.col == 2 or b.top > ends.get(band, 0.0)):
            new.append(b.top - LINE_TOL / 2)
        if b.col == 2:
            ends[band] = max(ends.get(band, 0.0), b.bottom)
    ruled = set(begins)
    begins = sorted(set(begins + new))
    cells: list[list[list[str]]] = [[[] for _ in range(N_COLUMNS)] for _ in begins]
    option_lines: list[list[list[Word]]] = [[] for _ in begins]
    for b in blocks:
        at = bisect_right(begins, b.top) - 1
        if at >= 0:
            cells[at][b.col] += b.lines
            if b.col == 2:
                option_lines[at] += b.words
    extra: dict[int, list[str]] = {}
    for y, text in notes:
        extra.setdefault(max(0, bisect_right(begins, y) - 1), []).append(text)
    spanned = {max(0, bisect_right(begins, y) - 1) for y in heading_tops}
    rows = []
    for k, y in enumerate(begins):
        texts = ["\n".join(c) for c in cells[k]]
        if k in extra:
            texts[3] = "\n".join([texts[3], *extra[k]]).strip("\n")
        end = begins[k + 1] if k + 1 < len(begins) else bottom
        # an empty ruled row is a blank cell (a blank option); a row holding only a heading is none
        if any(texts) or (y in ruled and k not in spanned):
            rows.append(Row(pt.page, *texts, top=y, bottom=end, fit=_geometry(option_lines[k], bounds[2])))
    return rows, len(heading_tops)


def _geometry(lines: list[list[Word]], column: float) -> Fit | None:
    """Where the option text of a row ends, from its words (``right``: the corridor after the option
    column, which names the column's page layout): the reading's own measure of whether a page-top row's
    first word could have fitted on the last line above it."""
    lines = [line for line in lines if line]
    if not lines:
        return None
    gaps = [b[0] - a[1] for line in lines for a, b in itertools.pairwise(line) if b[0] > a[1]]
    return Fit(
        right=column,
        widest=max(w[1] for line in lines for w in line),
        last=max(w[1] for w in lines[-1]),
        lead=lines[0][0][1] - lines[0][0][0],
        space=min(gaps, default=0.0),
        leads=tuple(line[0][1] - line[0][0] for line in lines),
    )


def _band(begins: list[float], y: float) -> int:
    return bisect_right(begins, y) - 1


def _size(pt: PageText) -> int:
    return round(pt.width)


def file_rows(pages: Sequence[PageText], file: str = "") -> tuple[list[Row], dict[str, Any]]:
    """Every page's rows, in page order, and what was found (column bounds, pitch, heading rows).

    Pages of one width share their columns and pitch; a file with portrait and landscape sections (or
    pages of other widths) is read per width, ``columns_by_width`` recording each.
    """
    pages = sorted(pages, key=lambda p: p.page)
    groups: dict[int, list[PageText]] = {}
    for pt in pages:
        groups.setdefault(_size(pt), []).append(pt)
    found: dict[int, tuple[list[float], float]] = {}
    for size, group in groups.items():
        bounds = columns(group, file)
        found[size] = (bounds, _pitch(group, bounds))
    rows: list[Row] = []
    headings = 0
    for pt in pages:
        bounds, pitch = found[_size(pt)]
        got, skipped = page_rows(pt, bounds, pitch)
        rows += got
        headings += skipped
    first_bounds, first_pitch = found[_size(pages[0])] if pages else ([], 0.0)
    info: dict[str, Any] = {
        "columns_at": [round(b, 1) for b in first_bounds],
        "pitch": first_pitch,
        "heading_lines": headings,
    }
    if len(found) > 1:
        info["columns_by_width"] = {
            str(size): {"columns_at": [round(b, 1) for b in bounds], "pitch": pitch}
            for size, (bounds, pitch) in found.items()
        }
    return rows, info
