"""One assembler for both paths: table rows -> items, with the Commission's quirks undone or flagged.

Rules, in the order a row is read (header rows, whose number cell reads ``№``, are skipped):
- A number cell with text starts an item. A merged number cell holding several numbers (its ruling was
  missed) starts the first; the others wait for the next stems.
- A new question cell with text while the current item already has options starts a new item too
  (the item was fused into the one above): flag ``recovered_merge``; its number is the next waiting number
  or, when none is printed, the previous number + 1 (``meta.number_inferred``).
- New empty number and question cells (the top of a page) continue the current item.
- "Виключено рішенням ..." in any cell marks the item ``excluded``; the note is cut from the stem and kept
  in ``meta.excluded_note``; a mark cell holding it is no mark.
- Line breaks: ``letter-`` at a line end followed by a lower-case letter is a soft hyphen and is removed,
  unless the hyphenated pair occurs unbroken elsewhere in the file (``прем'єр-міністри``); any other line
  break is a space. Whitespace is then collapsed.
- Numbers must be unique within a file (ids would collide): a repeat is an InputError naming file, number
  and pages.
- ``invariant``, ``blank_option``, ``duplicate_options`` come from ``blindmcq.items.invariant_flags``;
  status is ``excluded``, else ``malformed`` when one of those holds, else ``ok``; key is null under
  ``invariant``. Malformed items are kept as printed.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from typing import Any

from blindmcq.corpus.rows import Row
from blindmcq.errors import InputError
from blindmcq.items import FLAGS, Item, invariant_flags, item_id

EXCLUDED = re.compile(r"виключено\s+рішенням", re.IGNORECASE)
_WORD = r"[^\W\d_](?:[\w'’]*[^\W_])?"
_TAIL = re.compile(rf"({_WORD})-$")
_END = re.compile(rf"({_WORD})$")
_HEAD = re.compile(rf"^({_WORD})")
RIGHT, WRONG = "правильна", "неправильна"


def hyphen_vocabulary(rows: Iterable[Row]) -> set[str]:
    """Hyphenated word pairs printed whole inside a line, casefolded: evidence of hard hyphens."""
    vocab: set[str] = set()
    for row in rows:
        for cell in (row.question, row.option):
            for line in (cell or "").split("\n"):
                for token in line.split():
                    parts = token.split("-")
                    for a, b in itertools.pairwise(parts):
                        end, head = _END.search(a), _HEAD.match(b)
                        if end and head:
                            vocab.add(f"{end.group(1)}-{head.group(1)}".casefold())
    return vocab


def join_lines(text: str, vocab: AbstractSet[str] = frozenset()) -> str:
    """A cell's printed lines as one string: soft hyphens removed, whitespace collapsed."""
    lines = [line.strip() for line in text.split("\n")]
    out = ""
    for line in lines:
        if not line:
            continue
        tail = _TAIL.search(out)
        head = _HEAD.match(line)
        if tail and head and line[0].islower():
            hard = f"{tail.group(1)}-{head.group(1)}".casefold() in vocab
            out = out + line if hard else out[:-1] + line
        elif tail:
            out += line
        else:
            out = f"{out} {line}" if out else line
    return " ".join(out.split())


def _mark(text: str | None) -> bool:
    return " ".join((text or "").split()).casefold() == RIGHT


def _numbers(cell: str, file: str, page: int) -> list[int]:
    tokens = [t.rstrip(".") for t in cell.split()]
    if not all(t.isdigit() for t in tokens):
        raise InputError(f"number cell {cell!r} is not an item number", file=file, page=page)
    return [int(t) for t in tokens]


@dataclass
class _Draft:
    number: int
    page: int
    question: str
    inferred: bool = False
    recovered: bool = False
    options: list[str] = field(default_factory=list)
    marks: list[str | None] = field(default_factory=list)
    pages: list[int] = field(default_factory=list)


def _is_header(row: Row) -> bool:
    return (row.number or "").strip() == "№"


def _drafts(rows: Sequence[Row], file: str) -> list[_Draft]:
    drafts: list[_Draft] = []
    waiting: list[int] = []
    for row in rows:
        if _is_header(row):
            continue
        cur = drafts[-1] if drafts else None
        numbers = _numbers(row.number, file, row.page) if row.number and row.number.strip() else []
        stem = row.question is not None and row.question.strip() != ""
        if numbers:
            cur = _Draft(numbers[0], row.page, row.question or "")
            waiting = numbers[1:]
            drafts.append(cur)
        elif stem and cur is not None and cur.options:
            inferred = not waiting
            number = waiting.pop(0) if waiting else cur.number + 1
            cur = _Draft(number, row.page, row.question or "", inferred=inferred, recovered=True)
            drafts.append(cur)
        elif cur is None:
            if any((c or "").strip() for c in (row.number, row.question, row.option, row.mark)):
                raise InputError("table row before any item number", file=file, page=row.page)
            continue
        elif stem:  # a stem cell split by a rule before any option: one stem
            cur.question += "\n" + (row.question or "")
        if row.page not in cur.pages:
            cur.pages.append(row.page)
        if row.option is not None:
            cur.options.append(row.option)
            cur.marks.append(row.mark)
        elif row.mark is not None and cur.marks:
            cur.marks[-1] = f"{cur.marks[-1] or ''}\n{row.mark}"
    return drafts


def _item(
    d: _Draft, vocab: AbstractSet[str], *, source: str, bank: str, file: str, n_options: int | None
) -> Item:
    question = join_lines(d.question, vocab)
    options = [join_lines(o, vocab) for o in d.options]
    marks = [join_lines(m or "") for m in d.marks]
    meta: dict[str, Any] = {"pages": d.pages}
    note = next((m for m in marks if EXCLUDED.search(m)), None)
    hit = EXCLUDED.search(question)
    if hit:
        question, note = question[: hit.start()].strip(), question[hit.start() :]
    note = note or next((o for o in options if EXCLUDED.search(o)), None)
    keys = [i for i, m in enumerate(marks) if _mark(m)]
    flags = set(invariant_flags(options, keys, n_options))
    if note:
        flags.add("excluded")
        meta["excluded_note"] = note
    if d.recovered:
        flags.add("recovered_merge")
    if d.inferred:
        meta["number_inferred"] = True
    status = (
        "excluded"
        if note
        else "malformed"
        if flags & {"invariant", "blank_option", "duplicate_options"}
        else "ok"
    )
    return Item(
        id=item_id(source, bank, d.number),
        source=source,
        bank=bank,
        number=d.number,
        question=question,
        options=tuple(options),
        key=keys[0] if "invariant" not in flags else None,
        status=status,
        flags=tuple(f for f in FLAGS if f in flags),
        file=file,
        page=d.page,
        meta=meta,
    )


def assemble(
    rows: Sequence[Row], *, source: str, bank: str, file: str, n_options: int | None = 4
) -> list[Item]:
    """Items of one file from its rows in page order (either path's)."""
    drafts = _drafts(rows, file)
    seen: dict[int, int] = {}
    for d in drafts:
        if d.number in seen:
            raise InputError(
                f"item number {d.number} appears twice (pages {seen[d.number]} and {d.page})",
                file=file,
                page=d.page,
            )
        seen[d.number] = d.page
    vocab = hyphen_vocabulary(rows)
    return [_item(d, vocab, source=source, bank=bank, file=file, n_options=n_options) for d in drafts]
