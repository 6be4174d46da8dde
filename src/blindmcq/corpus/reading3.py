"""A third reading of a file's table rows that shares no layout logic with :mod:`blindmcq.corpus.assemble`.

Paths 1 and 2 differ only in how they cut cells; header detection, the meaning of the fourth column,
page-break continuations and exclusions all go through ``assemble``. This reading takes path 2's rows (cells
cut from the ruling) and decides all of that by its own, simpler rules, from its own code (it imports
nothing from ``assemble``):

- **Header**: the rows before the first row whose number cell holds a digit; a later row whose cells read
  the same (whitespace aside) is a repeated header.
- **Headings**: a row whose number cell holds words but no digit, with no option or fourth-column text.
- **Items**: a number cell with digits starts an item (several numbers in one cell: the others wait for the
  next stems); a new stem beside an item that has options starts the next one (waiting number, else + 1).
- **Page tops**: a page's first body row with no number continues the item above: its stem text is the
  rest of the stem; its option text is the rest of the option above where the fourth column prints a value
  for every option and this row has none, or where it is printed in the repeated header's option cell
  under the header's words (the page broke inside that row); else a new option or the rest of the one
  above, decided by the file's usual option count, or, where the items unbroken by a page print several
  counts, by the print (:func:`_print_says`, on each row's own :class:`~blindmcq.corpus.rows.Fit` from
  :mod:`blindmcq.corpus.lines`); an item whose page-top row the print does not settle is disputed.
- **Fourth column**, by counting, not by a word list: the value that occurs exactly once in most items (80%)
  is the right mark; otherwise, where each item prints one value on its first row and the values read as
  option numbers or letters, it is a key column; otherwise unread (no keys: compared on text only).
- **Excluded**: "Виключено рішенням" anywhere in the item.
- **Labels**: a label (``А)``, ``1.``) at the start of every option of at least half the items is dropped.

Texts are compared with whitespace and hyphens removed (line joins and soft hyphens are path matters).
:func:`compare` lists where the settled items and this reading differ (``verification.json``,
``files[].reading3``); :func:`dispute` makes each such item disputed, naming the fields: an item is settled
only where this reading agrees with the paths.
"""

from __future__ import annotations

import dataclasses
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from blindmcq.corpus.rows import Row
from blindmcq.datasets.items import Item

_DIGITS = re.compile(r"\d+")
# in squashed fourth cells too (no space); or a line that is only the word ("Виключено.")
_NOTE = re.compile(r"виключено\s*рішенням|^\s*виключено\s*\.?\s*$", re.IGNORECASE)
_SQUASH = re.compile(r"[\s\-\u00ad]+")
_SENTENCE_END = re.compile(r"[.!?…]\s*$")
_LABEL3 = re.compile(r"^\s*(?:[^\W\d_]|\d{1,2})[.)](?!(?<=\d\.)\d)")
LETTERS = "абвгдеєжз"
LATIN = "abcdefgh"  # a Latin letter is read in the Latin order (its Cyrillic look-alike is another char)
SHARE = 0.8


def squash(text: str | None) -> str:
    return _SQUASH.sub("", text or "").casefold()


@dataclass
class Reading:
    number: int
    stem: list[str] = field(default_factory=list)
    options: list[str] = field(default_factory=list)
    fourth: list[str] = field(default_factory=list)  # one per option row (blank where none printed)
    first_fourth: str = ""  # the fourth cell of the item's first row
    key: int | None = None
    excluded: bool = False
    breaks: list[int] = field(default_factory=list)  # page-top options that may continue the one above
    stem_top: bool = False  # stem text found at a page top with no number
    top_split: tuple[int, int] = (0, 0)  # (options, stem lines) before that stem text
    boxes: list[tuple[int, float, float]] = field(default_factory=list)  # (page, top, bottom) of its rows
    last_row: Row | None = None  # the row its last option was read from
    break_rows: dict[int, tuple[Row, Row]] = field(default_factory=dict)  # break -> (row above, page-top row)
    unsettled: str = ""  # why the print does not say whether a page-top row is a new option


def _cells(row: Row) -> tuple[str, ...]:
    return tuple(" ".join((c or "").split()) for c in (row.number, row.question, row.option, row.mark))


def _items(rows: Sequence[Row]) -> list[Reading]:
    numbered = ("1", "2", "3", "4")  # a header row numbering the columns
    start = next(
        (k for k, r in enumerate(rows) if _DIGITS.search(r.number or "") and _cells(r) != numbered), len(rows)
    )
    header = {_cells(r) for r in rows[:start]}
    body, rests = _unheaded(rows[start:], [_cells(r) for r in rows[:start]])
    rows = [*rows[:start], *body]
    every = _marks_every_option(rows[start:])
    out: list[Reading] = []
    waiting: list[int] = []
    page = None
    for at, row in enumerate(rows[start:]):
        if _cells(row) in header:
            continue
        top, page = row.page != page, row.page
        cur = out[-1] if out else None
        numbers = [int(n) for n in _DIGITS.findall(row.number or "")]
        if (row.number or "").strip() and not numbers and not squash(row.option) and not squash(row.mark):
            continue  # words, no digits, in the number cell and nothing beside: a section heading row
        stem = (row.question or "").strip()
        if numbers:
            cur = Reading(numbers[0], first_fourth=squash(row.mark))
            waiting = numbers[1:]
            out.append(cur)
        elif cur is None:
            continue
        elif top:
            if stem:
                cur.top_split = (len(cur.options), len(cur.stem))
                cur.stem.append(stem)
                cur.stem_top = True
            # the rest printed in the repeated header's option cell: the page broke inside that row (a new
            # option would begin a row of its own under the header)
            rest = at in rests
            if (row.option or "").strip() and (every or rest) and cur.options and not squash(row.mark):
                cur.options[-1] += " " + (row.option or "")
                if row.top is not None and row.bottom is not None:
                    cur.boxes.append((row.page, row.top, row.bottom))
                continue
            if (row.option or "").strip() and not squash(row.mark) and cur.options:
                cur.breaks.append(len(cur.options))
                if cur.last_row is not None:
                    cur.break_rows[len(cur.options)] = (cur.last_row, row)
            stem = ""
        elif stem and cur.options:
            cur = Reading(waiting.pop(0) if waiting else cur.number + 1, first_fourth=squash(row.mark))
            out.append(cur)
        if row.top is not None and row.bottom is not None:
            cur.boxes.append((row.page, row.top, row.bottom))
        if stem:
            cur.stem.append(stem)
        if row.option is not None:
            cur.options.append(row.option)
            cur.fourth.append(squash(row.mark))
            cur.last_row = row
        elif row.mark is not None and cur.fourth:
            cur.fourth[-1] += squash(row.mark)
    return out


def _unheaded(rows: Sequence[Row], header: list[tuple[str, ...]]) -> tuple[list[Row], set[int]]:
    """A repeated header row whose option cell reads the header's words and then more (the rest of a row
    split by the page break, printed in the header's cell) becomes a row of that rest alone; returned with
    the positions of those rows."""
    if not header:
        return list(rows), set()
    out = []
    rests = set()
    for row in rows:
        cells = _cells(row)
        head = next((h for h in header if (h[0], h[1], h[3]) == (cells[0], cells[1], cells[3])), None)
        if head is not None and head[2] and cells[2].startswith(head[2] + " ") and cells != head:
            row = Row(row.page, "", "", cells[2][len(head[2]) + 1 :], "", top=row.top, bottom=row.bottom)
            rests.add(len(out))
        out.append(row)
    return out, rests


def _marks_every_option(rows: Sequence[Row]) -> bool:
    cells = [squash(r.mark) for r in rows if r.option is not None]  # None: a key cell spanning down
    return bool(cells) and sum(1 for c in cells if c) >= 0.9 * len(cells)


def _keys(items: list[Reading]) -> str:
    """Set each item's key from the fourth column; return how the column was read."""
    live = [it for it in items if not it.excluded]
    once: Counter[str] = Counter()
    for it in live:
        counts = Counter(v for v in it.fourth if v)
        once.update(v for v, n in counts.items() if n == 1)
    right = next((v for v, n in once.most_common(1) if n >= SHARE * len(live)), None) if live else None
    if right is not None:
        for it in live:
            hits = [k for k, v in enumerate(it.fourth) if v == right]
            it.key = hits[0] if len(hits) == 1 else None
        return f"marks ({right!r} marks the right option)"
    keyed = [it for it in live if it.first_fourth]
    if live and len(keyed) >= SHARE * len(live):
        for it in keyed:
            value = it.first_fourth.rstrip(".)")
            k = (
                int(value) - 1
                if value.isdigit()
                else (LETTERS.find(value) if value in LETTERS else LATIN.find(value))
                if len(value) == 1
                else -1
            )
            it.key = k if 0 <= k < len(it.options) else None
        return "keys (one option number or letter per item)"
    return "unread"


def _labelled(items: list[Reading]) -> bool:
    """Whether every option of at least half the items carries a label."""
    labelled = [it for it in items if it.options and all(_LABEL3.match(o) for o in it.options)]
    return bool(items) and 2 * len(labelled) >= len(items)


def _by_count(items: list[Reading], labels: bool = False, sheets: _Sheets | None = None) -> list[Reading]:
    """Page-top rows decided by the file's usual option count M (of items with no page-top doubt): the rows
    of an item with M options once they are joined are joined; stem text at a page top beside an item that
    already had M options before it is a new item (its number not printed)."""
    usual = Counter(len(it.options) for it in items if not it.breaks and not it.stem_top).most_common(1)
    m = usual[0][0] if usual else None
    printed = {it.number for it in items}
    out = []
    for it in items:
        out.append(it)
        n_opts, n_stem = it.top_split
        if it.stem_top and m is not None and n_opts >= m and it.number + 1 not in printed:
            new = Reading(it.number + 1, stem=it.stem[n_stem:], options=it.options[n_opts:])
            new.fourth, new.first_fourth = it.fourth[n_opts:], it.fourth[n_opts] if it.fourth[n_opts:] else ""
            new.boxes = list(it.boxes)  # which of the rows each owns is what the review is for
            it.stem, it.options, it.fourth = it.stem[:n_stem], it.options[:n_opts], it.fourth[:n_opts]
            out.append(new)
    items = out
    sheets = sheets or _Sheets({}, {})
    several = _several_counts(items, m)
    for it in items:
        unbroken = [o for k, o in enumerate(it.options) if k not in it.breaks]
        if it.breaks and labels and 0 not in it.breaks and all(_LABEL3.match(o) for o in unbroken):
            # options labelled: a page-top row without a label is the rest of the option above
            _join(it, [k for k in it.breaks if not _LABEL3.match(it.options[k])])
        elif it.breaks and several:
            # items with several option counts: the count is no evidence, the print decides each row
            said = {k: _print_says(it, k, sheets) for k in it.breaks}
            doubts = [why for why in said.values() if why not in (JOIN, NEW)]
            if doubts:
                it.unsettled = "; ".join(doubts)
            else:
                _join(it, [k for k, why in said.items() if why == JOIN])
        elif it.breaks and m is not None and len(it.options) - len(it.breaks) == m:
            _join(it, it.breaks)
    return items


def _join(it: Reading, breaks: Sequence[int]) -> None:
    for k in sorted(breaks, reverse=True):
        it.options[k - 1] += " " + it.options.pop(k)
        it.fourth[k - 1] += it.fourth.pop(k)


MIXED = 0.05  # a file where this share of the items unbroken by a page (and 3 or more) has another count


def _several_counts(items: Sequence[Reading], usual: int | None) -> bool:
    """Whether the items that no page breaks print several option counts (3, 4 and 5 options in one file)."""
    counts = Counter(len(it.options) for it in items if it.options and not it.breaks and not it.stem_top)
    off = sum(n for c, n in counts.items() if c != usual)
    return usual is not None and off >= max(3, MIXED * sum(counts.values()))


@dataclass(frozen=True)
class _Sheets:
    """Per page layout (the option column's right corridor), the foot that a row broken by a page break
    reaches (the lowest row edge) and the right end of the option column's longest line."""

    foot: dict[int, float]
    widest: dict[int, float]

    @classmethod
    def of(cls, rows: Sequence[Row]) -> _Sheets:
        foot: dict[int, float] = {}
        widest: dict[int, float] = {}
        for row in rows:
            if row.fit is None:
                continue
            k = round(row.fit.right)
            widest[k] = max(widest.get(k, row.fit.widest), row.fit.widest)
            if row.bottom is not None:
                foot[k] = max(foot.get(k, row.bottom), row.bottom)
        return cls(foot, widest)


def _print_says(it: Reading, k: int, sheets: _Sheets) -> str:
    """Whether the page-top row that gave option ``k`` is the rest of the option above (:data:`JOIN`) or a
    new option (:data:`NEW`) as the print says, else why the print does not tell: a row cut by the page
    break fills its page to the foot, where a row moved whole leaves a gap; the rest of a cut row starts
    with a word too wide for the room left on the last line above (a wrapping typesetter would have put it
    there), where a new option's first word may fit."""
    pair = it.break_rows.get(k)
    if pair is None:
        return "no row above the page-top row"
    above, below = pair
    page = f"page {below.page}"
    a, b = above.fit, below.fit
    if below.page != above.page + 1:
        return f"{page}: the option above is not on the page before"
    if a is None or b is None or above.bottom is None or round(a.right) != round(b.right):
        return f"{page}: no line geometry of the two rows"
    key = round(a.right)
    if above.bottom < sheets.foot[key] - FOOT_TOL:
        return NEW  # the page broke between rows: the row above ends short of the foot
    room = sheets.widest[key] - a.last
    space = a.space or b.space
    if b.lead + space <= room:
        return NEW  # its first word, and the space before it, would have fitted on the line above
    if b.lead <= room:
        fits = f"its first word ({b.lead:.1f} pt) fits the line above ({room:.1f} pt left) only with no space"
        return f"{page}: {fits}"
    if _SENTENCE_END.search(it.options[k - 1]) and (below.option or "").lstrip()[:1].isupper():
        return f"{page}: the row above reaches the foot, but ends a sentence where the row starts one"
    return JOIN


JOIN, NEW = "joined", "new"
FOOT_TOL = 1.0  # pt: a row ending this close to the foot of its layout's pages was cut by the page break


def read(rows: Sequence[Row]) -> tuple[list[Reading], str]:
    """This reading's items of one file, and how it read the fourth column."""
    raw = _items(rows)
    items = _by_count(raw, labels=_labelled(raw), sheets=_Sheets.of(rows))
    for it in items:
        it.excluded = any(_NOTE.search(t) for t in [*it.stem, *it.options, *it.fourth])
    if _labelled(items):
        for it in items:
            it.options = [_LABEL3.sub("", o, count=1) for o in it.options]
    return items, _keys(items)


def compare(items: Sequence[Item], rows: Sequence[Row]) -> dict[str, Any]:
    """Where the settled ``items`` of one file and this reading differ (stem, options, key; excluded and
    disputed items on text only, and not at all when disputed)."""
    readings, fourth = read(rows)
    by_number: dict[int, list[Reading]] = {}
    for r in readings:
        by_number.setdefault(r.number, []).append(r)
    differ = []
    agree = 0
    for it in items:
        if it.status == "disputed":
            continue
        found = by_number.get(it.number, [])
        if len(found) != 1:
            differ.append({"id": it.id, "fields": ["item"], "why": f"read {len(found)} times"})
            continue
        r = found[0]
        fields = []
        stem = squash(" ".join(r.stem))
        if stem != squash(it.question) and not (r.excluded and squash(it.question) in stem):
            fields.append("stem")
        if [squash(o) for o in r.options] != [squash(o) for o in it.options] and not r.excluded:
            fields.append("options")
        if it.status == "ok" and (fourth == "unread" or r.key != it.key):
            fields.append("key")  # a key this reading could not read is not confirmed
        if r.unsettled and "options" not in fields:
            fields.append("options")  # the print does not say how many options it has
        if fields:
            key = r.key if fourth != "unread" else None
            reading = {
                "question": " ".join(r.stem),
                "options": r.options,
                "key": key,
                "status": "as read",
                "boxes": [[p, round(t, 2), round(b, 2)] for p, t, b in r.boxes],  # its rows, for the crops
            }
            why = {"why": f"page-top rows not settled by the print: {r.unsettled}"} if r.unsettled else {}
            differ.append({"id": it.id, "fields": fields, **why, "reading": reading})
        else:
            agree += 1
    read_numbers = {r.number for r in readings}
    extra = sorted(read_numbers - {it.number for it in items})
    return {"fourth_column": fourth, "items": len(readings), "agree": agree, "differ": differ, "extra": extra}


def dispute(items: Sequence[Item], report: dict[str, Any]) -> list[Item]:
    """``items`` with each one :func:`compare` found different made disputed (the fields named)."""
    differ = {d["id"]: d for d in report["differ"]}
    out = []
    for it in items:
        d = differ.get(it.id)
        if d is not None:
            why = f"the third reading (reading3) differs: {', '.join(d['fields'])}" + (
                f" ({d['why']})" if d.get("why") else ""
            )
            settled = {"path": None, "why": why}
            meta = {**it.meta, "settled": settled}
            if "reading" in d:
                meta["reading3"] = d["reading"]  # shown on the review page beside the paths' readings
            it = dataclasses.replace(it, status="disputed", meta=meta)
        out.append(it)
    return out
