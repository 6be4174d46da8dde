"""Render PDFs in the Commission's layout from real items (test support and the default sample).

Layout (SPEC, "The Commission's PDFs"): a ruled four-column table (№ | Питання | Варіанти відповіді |
Позначка) with its header row repeated on every page; one row per option, marked ``правильна`` or
``неправильна``; number and question cells span the option rows. Ruling is drawn as explicit line
segments, one per cell edge, as word processors export it.

Choices made here, and undone by the assembler:
- A long cell wraps at spaces; where ``hyphenate`` is on, a word is split with ``-`` when its two parts
  are letters and the second starts lower-case. A line never ends in a letter and ``-`` otherwise
  (a token such as ``віце-`` is kept on the line with the next word), so printed line ends are unambiguous.
- An item crosses a page break between option rows: its remaining rows continue on the next page under
  the header, with new, empty number and question cells. Rows never split, and the stem stays whole
  on the first page (the row it ends in grows to fit it).
- ``excluded="question"`` prints the Commission's note below the stem; ``excluded="mark"`` replaces the
  marks by one mark cell, spanning the option rows, that holds the note.
- ``fused="number"`` drops the ruling above the item's number cell, so a table parser sees one number
  cell holding two numbers; ``fused="blank"`` also drops the number itself.

The ground truth returned beside the PDF is what a faithful extraction must yield.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from reportlab.lib.pagesizes import A4
from reportlab.pdfbase import pdfmetrics
from reportlab.pdfbase.ttfonts import TTFont
from reportlab.pdfgen.canvas import Canvas

from blindmcq.items import FLAGS, Item, invariant_flags, item_id

FONT, BOLD = "DejaVuSans", "DejaVuSans-Bold"
FONT_DIR = Path("/usr/share/fonts/truetype/dejavu")
SIZE, LEADING, PAD = 9.0, 11.0, 3.0
MARGIN, FOOTER = 36.0, 24.0
WIDTHS = (36.0, 186.0, 231.0, 70.0)  # № | Питання | Варіанти відповіді | Позначка
HEADER = ("№", "Питання", "Варіанти відповіді", "Позначка")
RIGHT, WRONG = "правильна", "неправильна"
NOTE = "Виключено рішенням Комісії від 14.02.2019 № 23/зп-19"
TITLE = "Перелік тестових питань"


@dataclass(frozen=True)
class ItemSpec:
    """One item to print: ``keys`` are the options marked ``правильна`` (any count, to allow malformed)."""

    number: int
    question: str
    options: tuple[str, ...]
    keys: tuple[int, ...]
    excluded: Literal["question", "mark"] | None = None
    fused: Literal["number", "blank"] | None = None


@dataclass
class Rendered:
    path: Path
    items: list[Item]  # ground truth, in print order
    n_pages: int
    crossing: list[str] = field(default_factory=list)  # ids of items continued on a next page


def register_fonts() -> None:
    if FONT not in pdfmetrics.getRegisteredFontNames():
        pdfmetrics.registerFont(TTFont(FONT, str(FONT_DIR / "DejaVuSans.ttf")))
        pdfmetrics.registerFont(TTFont(BOLD, str(FONT_DIR / "DejaVuSans-Bold.ttf")))


def _width(text: str) -> float:
    return pdfmetrics.stringWidth(text, FONT, SIZE)


def _soft_split(word: str, room: float) -> int:
    """Longest prefix length p such that ``word[:p] + '-'`` fits in ``room``; 0 when no legal split."""
    if "-" in word:
        return 0
    for p in range(len(word) - 3, 2, -1):
        head = word[:p]
        tail = word[p]
        if (
            head.isalpha()
            and tail.isalpha()
            and tail.islower()
            and tail not in "ьй"
            and _width(head + "-") <= room
        ):
            return p
    return 0


def wrap(text: str, width: float, *, hyphenate: bool) -> list[str]:
    """Greedy wrap at spaces, with optional soft hyphenation; never a space break after ``letter-``."""
    inner = width - 2 * PAD
    lines: list[str] = []
    cur: list[str] = []
    words = text.split()
    i = 0
    while i < len(words):
        word = words[i]
        cand = " ".join([*cur, word])
        if _width(cand) <= inner:
            cur.append(word)
            i += 1
            continue
        room = inner - (_width(" ".join(cur)) + _width(" ") if cur else 0.0)
        p = _soft_split(word, room) if hyphenate else 0
        if p:
            lines.append(" ".join([*cur, word[:p] + "-"]))
            cur, words[i] = [], word[p:]
            continue
        if not cur:
            raise ValueError(f"word {word!r} is wider than its column ({width} pt)")
        # A line ending in 'letter-' would read as a soft hyphen: carry that word down with the next.
        while cur and len(cur[-1]) > 1 and cur[-1].endswith("-") and cur[-1][-2].isalpha():
            words.insert(i, cur.pop())
            if not cur:
                raise ValueError(f"cannot wrap {text!r} without an ambiguous line end")
        lines.append(" ".join(cur))
        cur = []
    if cur:
        lines.append(" ".join(cur))
    return lines


def normalise(text: str) -> str:
    return " ".join(text.split())


def expected_item(spec: ItemSpec, *, source: str, bank: str, file: str, page: int, fused: bool) -> Item:
    """The record a faithful extraction yields for ``spec`` (SPEC, "Items")."""
    options = tuple(normalise(o) for o in spec.options)
    keys = [] if spec.excluded == "mark" else list(spec.keys)
    flags = set(invariant_flags(options, keys, 4))
    if spec.excluded:
        flags.add("excluded")
    if fused:
        flags.add("recovered_merge")
    status = "excluded" if spec.excluded else "malformed" if flags & set(FLAGS[1:4]) else "ok"
    meta = {"excluded_note": NOTE} if spec.excluded else {}
    if spec.fused == "blank":
        meta["number_inferred"] = True
    return Item(
        id=item_id(source, bank, spec.number),
        source=source,
        bank=bank,
        number=spec.number,
        question=normalise(spec.question),
        options=options,
        key=keys[0] if "invariant" not in flags else None,
        status=status,
        flags=tuple(f for f in FLAGS if f in flags),
        file=file,
        page=page,
        meta=meta,
    )


@dataclass
class _Layout:
    """Wrapped text and row heights of one item."""

    number: list[str]
    question: list[str]
    options: list[list[str]]
    marks: list[list[str]]  # one per row; the spanning note sits in marks[0] when excluded="mark"
    heights: list[float]
    stem_height: float


def _layout(spec: ItemSpec, hyphenate: bool) -> _Layout:
    q = wrap(spec.question, WIDTHS[1], hyphenate=hyphenate)
    if spec.excluded == "question":
        q += wrap(NOTE, WIDTHS[1], hyphenate=False)
    options = [wrap(o, WIDTHS[2], hyphenate=hyphenate) for o in spec.options]
    if spec.excluded == "mark":
        marks = [wrap(NOTE, WIDTHS[3], hyphenate=False)] + [[] for _ in options[1:]]
        spanning = len(marks[0])
    else:
        marks = [[RIGHT if i in spec.keys else WRONG] for i in range(len(options))]
        spanning = 0
    heights = [
        max(1, len(o), 1 if spec.excluded == "mark" else len(m)) * LEADING + 2 * PAD
        for o, m in zip(options, marks, strict=True)
    ]
    stem = max(len(q), spanning, 1) * LEADING + 2 * PAD
    number = [] if spec.fused == "blank" else [str(spec.number)]
    return _Layout(number, q, options, marks, heights, stem)


class _Page:
    """Draws one page's table, top-down coordinates; ruling as one segment per cell edge."""

    def __init__(self, canvas: Canvas, number: int, *, title: str | None) -> None:
        self.canvas, self.number = canvas, number
        self.width, self.height = A4
        self.xs = [MARGIN]
        for w in WIDTHS:
            self.xs.append(self.xs[-1] + w)
        self.bottom = self.height - MARGIN - FOOTER
        self.y = MARGIN
        canvas.setLineWidth(0.5)
        if title:
            canvas.setFont(BOLD, 11)
            canvas.drawString(MARGIN, self.height - self.y - 11, title)
            self.y += 22
        self.top = self.y
        self.rows_drawn = 0
        self._header()

    def _text(self, col: int, top: float, lines: Sequence[str], font: str = FONT) -> None:
        self.canvas.setFont(font, SIZE)
        ascent = pdfmetrics.getAscent(font, SIZE)
        for i, line in enumerate(lines):
            self.canvas.drawString(self.xs[col] + PAD, self.height - (top + PAD + ascent + i * LEADING), line)

    def _hline(self, y: float, col: int) -> None:
        self.canvas.line(self.xs[col], self.height - y, self.xs[col + 1], self.height - y)

    def _vlines(self, top: float, bottom: float) -> None:
        for x in self.xs:
            self.canvas.line(x, self.height - top, x, self.height - bottom)

    def _header(self) -> None:
        h = LEADING + 2 * PAD
        for col, name in enumerate(HEADER):
            self._hline(self.y, col)
            self._text(col, self.y, [name], BOLD)
        self._vlines(self.y, self.y + h)
        self.y += h

    def row(self, height: float, cells: Sequence[list[str] | None], *, skip_rule: Iterable[int] = ()) -> None:
        """One row band; a ``None`` cell continues the cell above (no ruling above it)."""
        for col, lines in enumerate(cells):
            if lines is None or col in skip_rule:
                continue
            self._hline(self.y, col)
        for col, lines in enumerate(cells):
            if lines:
                self._text(col, self.y, lines)
        self._vlines(self.y, self.y + height)
        self.y += height
        self.rows_drawn += 1

    def close(self) -> None:
        for col in range(len(WIDTHS)):
            self._hline(self.y, col)
        self.canvas.setFont(FONT, 8)
        self.canvas.drawString(MARGIN, MARGIN / 2, f"Сторінка {self.number}")
        self.canvas.showPage()


def render_pdf(
    specs: Sequence[ItemSpec],
    path: str | Path,
    *,
    source: str,
    bank: str,
    hyphenate: bool = True,
    title: str | None = TITLE,
) -> Rendered:
    """Write ``specs`` as a Commission-layout PDF at ``path``; return it with the ground-truth items."""
    register_fonts()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    canvas = Canvas(str(path), pagesize=A4, pageCompression=1, invariant=1)
    canvas.setTitle(title or bank)
    page = _Page(canvas, 1, title=title)
    result = Rendered(path=path, items=[], n_pages=0)
    above_starts_here = False  # the number cell right above was begun on this page (not a continuation)
    for spec in specs:
        if not spec.options:
            raise ValueError(f"item {spec.number} has no options to print")
        lay = _layout(spec, hyphenate)
        remaining = list(range(len(spec.options)))
        first, start_page, fused = True, page.number, False
        while remaining:
            room = page.bottom - page.y
            need = lay.stem_height if first else 0.0
            k, acc = 0, 0.0
            for r in remaining:
                if max(acc + lay.heights[r], need) > room:
                    break
                acc += lay.heights[r]
                k += 1
            if k == 0:
                if page.rows_drawn == 0:
                    raise ValueError(f"item {spec.number} is taller than a page")
                page.close()
                page = _Page(canvas, page.number + 1, title=None)
                continue
            if first:
                start_page = page.number
                # A number can only be fused into a number cell begun on this page.
                merge_rule = spec.fused is not None and page.rows_drawn > 0
                merge_rule = merge_rule and (spec.fused == "blank" or above_starts_here)
                fused = spec.fused == "blank" or merge_rule
            for j, r in enumerate(remaining[:k]):
                height = lay.heights[r]
                if j == k - 1:
                    height = max(height, need - sum(lay.heights[x] for x in remaining[: k - 1]))
                lead = j == 0
                cells: list[list[str] | None] = [
                    (lay.number if first else []) if lead else None,
                    (lay.question if first else []) if lead else None,
                    lay.options[r],
                    lay.marks[r] if spec.excluded != "mark" or r == 0 or (lead and not first) else None,
                ]
                skip = (0,) if first and lead and merge_rule else ()
                page.row(height, cells, skip_rule=skip)
            remaining = remaining[k:]
            above_starts_here = first
            if remaining:
                if first:
                    result.crossing.append(item_id(source, bank, spec.number))
                page.close()
                page = _Page(canvas, page.number + 1, title=None)
            first = False
        result.items.append(
            expected_item(spec, source=source, bank=bank, file=path.name, page=start_page, fused=fused)
        )
    page.close()
    canvas.save()
    result.n_pages = page.number
    return result


def spec_from_item(item: Item) -> ItemSpec:
    keys = () if item.key is None else (item.key,)
    return ItemSpec(number=item.number, question=item.question, options=item.options, keys=keys)


def with_cases(specs: Sequence[ItemSpec], start: int = 1) -> list[ItemSpec]:
    """Inject one of each malformed/special case, at fixed positions from ``start`` (needs 12+ specs).

    Cases: blank option, two identical options, five options, two keys, excluded (note under the
    stem), excluded (note in the mark column), fused with its number, fused without it.
    """
    out = list(specs)
    if len(out) < start + 12:
        raise ValueError(f"need at least {start + 12} specs to inject every case")
    s = start

    def opts(i: int) -> list[str]:
        return list(out[i].options)

    o = opts(s)
    o[1] = ""
    out[s] = dataclasses.replace(out[s], options=tuple(o))
    o = opts(s + 2)
    o[2] = o[1]
    out[s + 2] = dataclasses.replace(out[s + 2], options=tuple(o))
    o = opts(s + 4)
    out[s + 4] = dataclasses.replace(out[s + 4], options=(*o, out[s + 5].options[0]))
    k = out[s + 6].keys[0]
    out[s + 6] = dataclasses.replace(out[s + 6], keys=(k, (k + 1) % len(out[s + 6].options)))
    out[s + 7] = dataclasses.replace(out[s + 7], excluded="question")
    out[s + 8] = dataclasses.replace(out[s + 8], excluded="mark")
    out[s + 9] = dataclasses.replace(out[s + 9], fused="number")
    out[s + 11] = dataclasses.replace(out[s + 11], fused="blank")
    return out
