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

from reportlab.lib.pagesizes import A4, landscape
from reportlab.pdfbase import pdfmetrics
from reportlab.pdfbase.ttfonts import TTFont
from reportlab.pdfgen.canvas import Canvas

from blindmcq.corpus.strikes import STRUCK_NOTE
from blindmcq.datasets.items import FLAGS, Item, invariant_flags, item_id

FONT, BOLD = "DejaVuSans", "DejaVuSans-Bold"
FONT_DIR = Path("/usr/share/fonts/truetype/dejavu")
SIZE, LEADING, PAD = 9.0, 11.0, 3.0
MARGIN, FOOTER = 36.0, 24.0
WIDTHS = (36.0, 186.0, 231.0, 70.0)  # № | Питання | Варіанти відповіді | Позначка
HEADER = ("№", "Питання", "Варіанти відповіді", "Позначка")
RIGHT, WRONG = "правильна", "неправильна"
NOTE = "Виключено рішенням Комісії від 14.02.2019 № 23/зп-19"
WORD_NOTE = "Виключено."  # the stem replaced by the word alone
TITLE = "Перелік тестових питань"
OVERRUN_MIN = 8.0  # pt: words run on past a cell's rule reach at least this far into the next column


@dataclass(frozen=True)
class Style:
    """How a bank is printed; the defaults are the layout above (the committed default bank)."""

    font: str = FONT
    bold: str = BOLD
    size: float = SIZE
    leading: float = LEADING
    widths: tuple[float, float, float, float] = WIDTHS
    landscape: bool = False
    header: tuple[str, str, str, str] = HEADER
    # Further header rows under it; None: the cell above spans into this row (no rule between)
    header_rows: tuple[tuple[str | None, str | None, str | None, str | None], ...] = ()
    number_format: str = "{n}"
    marks: tuple[str, str] = (RIGHT, WRONG)
    key_column: bool = False  # the fourth column holds the right option's letter, one cell per item
    key_letters: str = "АБВГДЕ"
    wrap_marks: bool = False  # marks wrap (and hyphenate) in a narrow column
    annex: tuple[str, ...] = ()  # lines printed top right on page 1 (the decision's annex heading)
    running_title: str | None = None  # printed above the table on pages after the first
    footer: str = "Сторінка {page}"  # {page} and {pages}
    split_rows: bool = False  # an option row may break across a page (its mark/key stays on the first part)
    split_stems: bool = False  # a stem too tall for the room left continues in the next page's stem cell
    option_labels: str = ""  # labels printed before the options ("АБВГДЕ"); none when empty
    label_format: str = "{label}) "
    # horizontal: no vertical rules; frame: outer only; zebra: no rules, every other row band shaded
    rules: Literal["grid", "horizontal", "frame", "zebra"] = "grid"
    header_split: bool = False  # a split row's rest printed inside the repeated header's option cell
    # /Rotate written on every page, and how the content is drawn for it: "display" (a printer driver:
    # drawn turned, so the displayed page reads upright), "sideways" (the page turned as a whole, as a
    # scanner or a viewer's "rotate" writes it: displayed sideways), "clipped" (the display size given
    # as the page size and the content drawn unturned: part of it lies outside the media box)
    rotate: Literal[0, 90, 180, 270] = 0
    unmerged: bool = False  # every row ruled across: number, stem and key cells not merged over option rows
    landscape_from: int = 0  # pages from this one on are turned (a landscape section), the table centred
    rotate_mode: Literal["display", "sideways", "clipped"] = "display"
    rotate_from: int = 0  # with rotate (display mode): only pages from this one on carry /Rotate


DEFAULT_STYLE = Style()


@dataclass(frozen=True)
class ItemSpec:
    """One item to print: ``keys`` are the options marked ``правильна`` (any count, to allow malformed)."""

    number: int
    question: str
    options: tuple[str, ...]
    keys: tuple[int, ...]
    # span: the note over option and mark; word: the stem cell holds only "Виключено." (options printed)
    excluded: Literal["question", "mark", "span", "word"] | None = None
    fused: Literal["number", "blank"] | None = None
    labels: str | None = None  # printed option labels in place of the style's (out of sequence, say)
    tail: int = 0  # the stem's last words printed below the table's last rule (when the item ends a page)
    heading: str | None = None  # a full-width section heading row printed above the item
    tail_across: bool = False  # the tail printed across the page's last rule (the rule runs through it)
    overprint: str | None = None  # text printed over the stem, half a line down (a cell above run over)
    # row: every line of the item's cells struck through (an exclusion: the truth is excluded); option:
    # only its first option's lines (the truth as printed: the extractor cannot tell, and disputes it)
    struck: Literal["row", "option"] | None = None
    # (field, words): words printed on at the end of a cell's last line, unwrapped, past the cell's right
    # rule into the next column (field -1: the stem; k: option k); they belong to that field
    overrun: tuple[int, str] | None = None
    # a stem the page break splits (Style.split_stems) printed only up to the break, its last printed word
    # cut with a hyphen and nothing of it on the next page (a cut word; the truth is the whole stem)
    stem_lost: bool = False


@dataclass
class Rendered:
    path: Path
    items: list[Item]  # ground truth, in print order
    n_pages: int
    crossing: list[str] = field(default_factory=list)  # ids of items continued on a next page
    page_enders: list[int] = field(default_factory=list)  # numbers of items last on a page, wholly on it
    stem_splits: list[int] = field(default_factory=list)  # numbers of items whose stem a page break split


def _cut_last_word(lines: Sequence[str]) -> list[str]:
    """``lines`` with the last word of four letters or more on the last line cut to its first half and a
    hyphen, the words after it dropped (a word broken at the line end whose rest is lost)."""
    words = lines[-1].split(" ")
    k = max((i for i, w in enumerate(words) if len(w.rstrip("-")) >= 4), default=len(words) - 1)
    word = words[k].rstrip("-")
    return [*lines[:-1], " ".join([*words[:k], word[: max(2, len(word) // 2)] + "-"])]


def register_fonts(style: Style = DEFAULT_STYLE) -> None:
    for name in (style.font, style.bold):  # each font is its own file in FONT_DIR
        if name not in pdfmetrics.getRegisteredFontNames():
            pdfmetrics.registerFont(TTFont(name, str(FONT_DIR / f"{name}.ttf")))


_STYLE = [DEFAULT_STYLE]  # the style being rendered (wrap measures text in its font)


def _width(text: str) -> float:
    return pdfmetrics.stringWidth(text, _STYLE[0].font, _STYLE[0].size)


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
    spec = _overrun_truth(spec)
    options = () if spec.excluded == "span" else tuple(normalise(o) for o in spec.options)
    keys = [] if spec.excluded in ("mark", "span") else list(spec.keys)
    flags = set(invariant_flags(options, keys, 4))
    excluded = spec.excluded is not None or spec.struck == "row"
    if excluded:
        flags.add("excluded")
    if fused:
        flags.add("recovered_merge")
    status = "excluded" if excluded else "malformed" if flags & set(FLAGS[1:4]) else "ok"
    note = WORD_NOTE if spec.excluded == "word" else NOTE if spec.excluded else STRUCK_NOTE
    meta = {"excluded_note": note} if excluded else {}
    if spec.fused == "blank":
        meta["number_inferred"] = True
    return Item(
        id=item_id(source, bank, spec.number),
        source=source,
        bank=bank,
        number=spec.number,
        question="" if spec.excluded == "word" else normalise(spec.question),
        options=options,
        key=keys[0] if "invariant" not in flags else None,
        status=status,
        flags=tuple(f for f in FLAGS if f in flags),
        file=file,
        page=page,
        meta=meta,
    )


def _overrun_truth(spec: ItemSpec) -> ItemSpec:
    """``spec`` with its overrun words (:attr:`ItemSpec.overrun`) part of the field they are printed in."""
    if spec.overrun is None:
        return spec
    field_, words = spec.overrun
    if field_ < 0:
        return dataclasses.replace(spec, question=f"{spec.question} {words}")
    options = tuple(f"{o} {words}" if k == field_ else o for k, o in enumerate(spec.options))
    return dataclasses.replace(spec, options=options)


def overrun_words(spec: ItemSpec, field_: int, text: str, style: Style = DEFAULT_STYLE) -> str | None:
    """The first words of ``text`` that, printed on at the end of the last line of ``spec``'s stem
    (``field_`` -1) or option ``field_``, run past the cell's right rule by at least ``OVERRUN_MIN`` and
    end inside the next column; None where none do, or where something is printed beside that line in the
    next column (the words would print over it)."""
    if spec.excluded is not None or spec.fused is not None or style.unmerged or style.wrap_marks:
        return None
    register_fonts(style)
    _STYLE[0] = style
    try:
        lay = _layout(spec, True, style)
        col = 1 if field_ < 0 else 2
        line = lay.question[-1] if field_ < 0 else lay.options[field_][-1]
        words = text.split()
        fits = [
            " ".join(words[:n])
            for n in range(1, len(words) + 1)
            if style.widths[col] + OVERRUN_MIN
            < PAD + _width(f"{line} {' '.join(words[:n])}")
            < style.widths[col] + style.widths[col + 1] - PAD
        ]
    finally:
        _STYLE[0] = DEFAULT_STYLE
    if not fits:
        return None
    if field_ >= 0:  # the mark (or key) is printed on the row's first line only
        return fits[0] if len(lay.options[field_]) >= 2 else None
    # the stem's last line against the option lines beside it (each row: padding, then its lines)
    last = PAD + (len(lay.question) - 1) * style.leading
    row_top = 0.0
    for height, lines in zip(lay.heights, lay.options, strict=True):
        if last + style.leading > row_top + PAD and last < row_top + PAD + len(lines) * style.leading:
            return None
        row_top += height
    return fits[0]


@dataclass
class _Layout:
    """Wrapped text and row heights of one item."""

    number: list[str]
    question: list[str]
    options: list[list[str]]
    marks: list[list[str]]  # one per row; the spanning note sits in marks[0] when excluded="mark"
    heights: list[float]
    stem_height: float


def _layout(spec: ItemSpec, hyphenate: bool, style: Style = DEFAULT_STYLE) -> _Layout:
    widths, leading = style.widths, style.leading
    q = wrap(spec.question, widths[1], hyphenate=hyphenate)
    full = len(q)  # the stem cell keeps the full stem's height when its tail is printed below the table
    if spec.tail:
        q = wrap(" ".join(spec.question.split()[: -spec.tail]), widths[1], hyphenate=hyphenate)
    if spec.excluded == "question":
        q += wrap(NOTE, widths[1], hyphenate=False)
    if spec.excluded == "word":
        q = [WORD_NOTE]
    letters = spec.labels if spec.labels is not None else style.option_labels
    printed = [
        (style.label_format.format(label=letters[k]) if k < len(letters) else "") + o
        for k, o in enumerate(spec.options)
    ]
    options = [wrap(o, widths[2], hyphenate=hyphenate) for o in printed]
    if spec.overrun is not None:  # printed on, unwrapped, past the cell's right rule
        field_, words = spec.overrun
        cell = q if field_ < 0 else options[field_]
        cell[-1] = f"{cell[-1]} {words}"
    if spec.excluded == "span":  # one cell over the option and mark columns holds the note
        options = [wrap(NOTE, widths[2] + widths[3], hyphenate=False)]
        marks = [[]]
        spanning = 0
    elif spec.excluded == "mark":
        marks = [wrap(NOTE, widths[3], hyphenate=style.wrap_marks)] + [[] for _ in options[1:]]
        spanning = len(marks[0])
    elif style.key_column:
        key = ", ".join(style.key_letters[k] for k in spec.keys)
        marks = [[key] if key else []] + [[] for _ in options[1:]]
        spanning = len(marks[0])
    else:
        right, wrong = style.marks
        marks = [
            wrap(right if i in spec.keys else wrong, widths[3], hyphenate=True)
            if style.wrap_marks
            else [right if i in spec.keys else wrong]
            for i in range(len(options))
        ]
        spanning = 0
    heights = [
        max(1, len(o), 1 if spanning else len(m)) * leading + 2 * PAD
        for o, m in zip(options, marks, strict=True)
    ]
    stem = max(full, len(q), spanning, 1) * leading + 2 * PAD
    number = [] if spec.fused == "blank" else style.number_format.format(n=spec.number).split("\n")
    return _Layout(number, q, options, marks, heights, stem)


class _Page:
    """Draws one page's table, top-down coordinates; ruling as one segment per cell edge."""

    def __init__(
        self,
        canvas: Canvas,
        number: int,
        *,
        title: str | None,
        style: Style = DEFAULT_STYLE,
        pages: int | None = None,
        rest: Sequence[str] = (),
    ) -> None:
        self.canvas, self.number, self.style, self.pages = canvas, number, style, pages
        self.width, self.height = landscape(A4) if style.landscape else A4
        left = MARGIN
        if style.landscape_from and number >= style.landscape_from:
            self.width, self.height = self.height, self.width
            canvas.setPageSize((self.width, self.height))
            left = (self.width - sum(style.widths)) / 2
        if style.rotate and number >= style.rotate_from:
            canvas.setPageRotation(style.rotate)
            if style.rotate_mode == "display":  # user space (height x width) turned back to the display
                turn = {90: (self.height, 0.0), 180: (self.width, self.height), 270: (0.0, self.width)}
                canvas.translate(*turn[style.rotate])
                canvas.rotate(style.rotate)
        self.xs = [left]
        for w in style.widths:
            self.xs.append(self.xs[-1] + w)
        self.bottom = self.height - MARGIN - FOOTER
        self.y = MARGIN
        canvas.setLineWidth(0.5)
        if number == 1 and style.annex:
            canvas.setFont(style.font, 9)
            for line in style.annex:
                canvas.drawRightString(self.width - MARGIN, self.height - self.y - 9, line)
                self.y += 11
            self.y += 6
        if number > 1 and style.running_title:
            canvas.setFont(style.font, 8)
            canvas.drawCentredString(self.width / 2, self.height - self.y - 8, style.running_title)
            self.y += 14
        if title:
            canvas.setFont(style.bold, 11)
            canvas.drawString(MARGIN, self.height - self.y - 11, title)
            self.y += 22
        self.top = self.y
        self.rows_drawn = 0
        self.struck: frozenset[int] = frozenset()  # columns whose text lines are drawn struck through
        self._header(rest)

    def _text(self, col: int, top: float, lines: Sequence[str], font: str | None = None) -> None:
        font = font or self.style.font
        size, leading = self.style.size, self.style.leading
        self.canvas.setFont(font, size)
        ascent = pdfmetrics.getAscent(font, size)
        for i, line in enumerate(lines):
            base = self.height - (top + PAD + ascent + i * leading)
            self.canvas.drawString(self.xs[col] + PAD, base, line)
            if col in self.struck and line.strip():  # a word processor's strikethrough: the line's width
                x = self.xs[col] + PAD
                y = base + 0.3 * size
                self.canvas.line(x, y, x + pdfmetrics.stringWidth(line.rstrip(), font, size), y)

    def _hline(self, y: float, col: int, *, edge: bool = False) -> None:
        if (self.style.rules == "frame" and not edge) or self.style.rules == "zebra":
            return
        self.canvas.line(self.xs[col], self.height - y, self.xs[col + 1], self.height - y)

    def _vlines(self, top: float, bottom: float) -> None:
        xs = {"grid": self.xs, "horizontal": [], "frame": [self.xs[0], self.xs[-1]], "zebra": []}[
            self.style.rules
        ]
        for x in xs:
            self.canvas.line(x, self.height - top, x, self.height - bottom)

    def heading(self, text: str) -> None:
        """A full-width row holding one line (a section heading)."""
        height = self.style.leading + 2 * PAD
        for col in range(len(self.style.widths)):
            self._hline(self.y, col)
        self._text(0, self.y, [text], self.style.bold)
        xs = {
            "grid": [self.xs[0], self.xs[-1]],
            "horizontal": [],
            "frame": [self.xs[0], self.xs[-1]],
            "zebra": [],
        }
        for x in xs[self.style.rules]:
            self.canvas.line(x, self.height - self.y, x, self.height - self.y - height)
        self.y += height
        self.rows_drawn += 1

    def _header(self, rest: Sequence[str] = ()) -> None:
        cells = [name.split("\n") for name in self.style.header]
        h = max(len(c) for c in cells) * self.style.leading + 2 * PAD
        below = len(cells[2]) * self.style.leading
        if rest:  # the rest of a split row inside the header's option cell, under the header's words
            h = max(h, below + len(rest) * self.style.leading + 2 * PAD)
        for col, lines in enumerate(cells):
            self._hline(self.y, col, edge=True)
            self._text(col, self.y, lines, self.style.bold)
        if rest:
            self._text(2, self.y + below, list(rest))
        self._vlines(self.y, self.y + h)
        self.y += h
        for extra in self.style.header_rows:
            cells = [None if name is None else name.split("\n") for name in extra]
            h = max(len(c or [""]) for c in cells) * self.style.leading + 2 * PAD
            for col, lines in enumerate(cells):
                if lines is not None:
                    self._hline(self.y, col)
                    self._text(col, self.y, lines, self.style.bold)
            self._vlines(self.y, self.y + h)
            self.y += h

    def row(
        self,
        height: float,
        cells: Sequence[list[str] | None],
        *,
        skip_rule: Iterable[int] = (),
        span: bool = False,
    ) -> None:
        """One row band; a ``None`` cell continues the cell above (no ruling above it). With ``span``, the
        option cell covers the mark column too (no rule between them)."""
        for col, lines in enumerate(cells):
            if lines is None or col in skip_rule:
                continue
            self._hline(self.y, col)
        if self.style.rules == "zebra" and self.rows_drawn % 2:
            self.canvas.setFillGray(0.9)
            self.canvas.rect(
                self.xs[0], self.height - self.y - height, self.xs[-1] - self.xs[0], height, 0, 1
            )
            self.canvas.setFillGray(0)
        for col, lines in enumerate(cells):
            if lines:
                self._text(col, self.y, lines)
        if span and self.style.rules == "grid":
            for x in self.xs[:3] + self.xs[4:]:
                self.canvas.line(x, self.height - self.y, x, self.height - self.y - height)
        else:
            self._vlines(self.y, self.y + height)
        self.y += height
        self.rows_drawn += 1
        self.tail: list[str] = []  # a stem tail to print below the last rule, if this row ends the page

    def close(self) -> None:
        if getattr(self, "tail", None):
            across = getattr(self, "tail_across", False)
            self._text(1, self.y - PAD - 0.55 * self.style.size if across else self.y, self.tail)

        for col in range(len(self.style.widths)):
            self._hline(self.y, col, edge=True)
        self.canvas.setFont(self.style.font, 8)
        self.canvas.drawString(
            MARGIN, MARGIN / 2, self.style.footer.format(page=self.number, pages=self.pages)
        )
        self.canvas.showPage()


def render_pdf(
    specs: Sequence[ItemSpec],
    path: str | Path,
    *,
    source: str,
    bank: str,
    hyphenate: bool = True,
    title: str | None = TITLE,
    style: Style = DEFAULT_STYLE,
) -> Rendered:
    """Write ``specs`` as a Commission-layout PDF at ``path``; return it with the ground-truth items."""
    register_fonts(style)
    pages = None
    if "{pages}" in style.footer:  # the page count is known after a first rendering (same layout)
        pages = _render(specs, path, source=source, bank=bank, hyphenate=hyphenate, title=title, style=style)
        pages = pages.n_pages
    return _render(
        specs, path, source=source, bank=bank, hyphenate=hyphenate, title=title, style=style, pages=pages
    )


def _render(
    specs: Sequence[ItemSpec],
    path: str | Path,
    *,
    source: str,
    bank: str,
    hyphenate: bool,
    title: str | None,
    style: Style,
    pages: int | None = None,
) -> Rendered:
    _STYLE[0] = style
    try:
        return _draw(specs, path, source=source, bank=bank, hyphenate=hyphenate, title=title, pages=pages)
    finally:
        _STYLE[0] = DEFAULT_STYLE


def _draw(
    specs: Sequence[ItemSpec],
    path: str | Path,
    *,
    source: str,
    bank: str,
    hyphenate: bool,
    title: str | None,
    pages: int | None,
) -> Rendered:
    style = _STYLE[0]
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    size = landscape(A4) if style.landscape else A4
    if style.rotate in (90, 270) and style.rotate_mode == "sideways":
        size = (size[1], size[0])  # reportlab swaps the media box of a page turned by 90: unswapped
    canvas = Canvas(str(path), pagesize=size, pageCompression=1, invariant=1)
    canvas.setTitle(title or bank)

    def new_page(number: int, title: str | None = None, rest: Sequence[str] = ()) -> _Page:
        return _Page(canvas, number, title=title, style=style, pages=pages, rest=rest)

    page = new_page(1, title)
    result = Rendered(path=path, items=[], n_pages=0)
    above_starts_here = False  # the number cell right above was begun on this page (not a continuation)
    spans = style.key_column  # the fourth column holds one cell per item
    for spec in specs:
        if not spec.options:
            raise ValueError(f"item {spec.number} has no options to print")
        lay = _layout(spec, hyphenate, style)
        if style.unmerged and spec.excluded != "mark":  # the stem sits in the first option's row
            lay.heights[0] = max(lay.heights[0], lay.stem_height)
        remaining = list(range(len(lay.options)))
        if spec.heading is not None:
            if page.bottom - page.y < style.leading + 2 * PAD + lay.stem_height:
                if result.items:
                    result.page_enders.append(result.items[-1].number)
                page.close()
                page = new_page(page.number + 1)
            page.heading(spec.heading)
        first, start_page, fused = True, page.number, False
        lead_done = False  # a split row's continuation already opened this page's part of the item
        stem_rest: list[str] = []  # stem lines still to print (a stem split by the page break)
        stem_cut = 0
        stem_print: list[str] | None = None  # the stem lines printed on the first page, where cut (stem_lost)
        while remaining:
            room = page.bottom - page.y
            need = (
                lay.stem_height if first else len(stem_rest) * style.leading + 2 * PAD if stem_rest else 0.0
            )
            k, acc = 0, 0.0
            for r in remaining:
                if max(acc + lay.heights[r], need) > room:
                    break
                acc += lay.heights[r]
                k += 1
            plain = spec.excluded is None and spec.fused is None
            if style.split_stems and first and k == 0 and page.rows_drawn > 0 and plain:
                k2, acc2 = 0, 0.0
                for r in remaining:
                    if acc2 + lay.heights[r] > room:
                        break
                    acc2 += lay.heights[r]
                    k2 += 1
                lines = int((room - 2 * PAD) // style.leading)
                if 0 < k2 < len(remaining) and 0 < lines < len(lay.question):
                    # the stem's first lines fill this page beside the rows that fit; the rest goes on
                    k, acc, stem_cut, need = k2, acc2, lines, room
                    stem_rest = lay.question[lines:]
                    result.stem_splits.append(spec.number)
                    if spec.stem_lost:
                        stem_print, stem_rest = _cut_last_word(lay.question[:lines]), []
            split = 0
            # a page that cuts the stem breaks no option row as well: the next page's first row carries the
            # stem's rest beside whole options (a broken row's continuation row has no stem cell to hold it)
            stem_cut_here = first and bool(stem_rest)
            if (
                style.split_rows
                and k < len(remaining)
                and spec.excluded not in ("mark", "span")
                and not stem_cut_here
            ):
                r = remaining[k]
                fit = int((room - acc - 2 * PAD) // style.leading)
                if (not first or need <= room) and len(lay.marks[r]) <= fit < len(lay.options[r]) and fit:
                    split = fit
            if k == 0 and not split:
                if page.rows_drawn == 0:
                    raise ValueError(f"item {spec.number} is taller than a page")
                if first and result.items:
                    result.page_enders.append(result.items[-1].number)
                page.close()
                page = new_page(page.number + 1)
                lead_done = False
                continue
            if first:
                start_page = page.number
                # A number can only be fused into a number cell begun on this page.
                merge_rule = spec.fused is not None and page.rows_drawn > 0
                merge_rule = merge_rule and (spec.fused == "blank" or above_starts_here)
                fused = spec.fused == "blank" or merge_rule
            drawn = remaining[: k + 1] if split else remaining[:k]
            for j, r in enumerate(drawn):
                height = lay.heights[r]
                if j == len(drawn) - 1:
                    height = max(height, need - sum(lay.heights[x] for x in drawn[:-1]))
                lead = j == 0 and not lead_done
                is_split = bool(split) and j == k
                if is_split:
                    height = room - acc
                option = lay.options[r][:split] if is_split else lay.options[r]
                cells: list[list[str] | None] = [
                    (lay.number if first else []) if lead else None,
                    (
                        (stem_print if stem_print is not None else lay.question[: stem_cut or None])
                        if first
                        else stem_rest
                    )
                    if lead
                    else None,
                    option,
                    lay.marks[r]
                    if not (spans or spec.excluded == "mark") or r == 0 or (lead and not first)
                    else None,
                ]
                if style.unmerged and spec.excluded != "mark":
                    cells = [[] if c is None else c for c in cells]
                if spans and lead and not first:
                    cells[3] = []
                skip = (0,) if first and lead and merge_rule else ()
                row_top = page.y
                page.struck = (
                    frozenset(range(4))
                    if spec.struck == "row"
                    else frozenset({2})
                    if spec.struck == "option" and r == 0
                    else frozenset()
                )
                page.row(height, cells, skip_rule=skip, span=spec.excluded == "span")
                page.struck = frozenset()
                if spec.overprint and first and lead:
                    over = wrap(spec.overprint, style.widths[1], hyphenate=False)
                    page._text(1, row_top + 0.45 * style.leading, over[: len(lay.question)])
                if lead and not first:
                    stem_rest = []
            remaining = remaining[k:]
            above_starts_here = first
            lead_done = False
            if split:
                if first:
                    result.crossing.append(item_id(source, bank, spec.number))
                page.close()
                r = remaining[0]
                rest = lay.options[r][split:]
                if style.header_split:  # Word-style: the rest sits in the repeated header's option cell
                    page = new_page(page.number + 1, rest=rest)
                else:
                    page = new_page(page.number + 1)
                    page.struck = frozenset(range(4)) if spec.struck == "row" else frozenset()
                    page.row(len(rest) * style.leading + 2 * PAD, [[], [], rest, []])
                    page.struck = frozenset()
                remaining = remaining[1:]
                lead_done, first = True, False
                continue
            if remaining:
                if first:
                    result.crossing.append(item_id(source, bank, spec.number))
                page.close()
                page = new_page(page.number + 1)
            first = False
        if spec.tail and not remaining:
            page.tail = " ".join(spec.question.split()[-spec.tail :]).split("\n")
            page.tail_across = spec.tail_across
        result.items.append(
            expected_item(spec, source=source, bank=bank, file=path.name, page=start_page, fused=fused)
        )
    if result.items:
        result.page_enders.append(result.items[-1].number)
    page.close()
    canvas.save()
    result.n_pages = page.number
    return result


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
