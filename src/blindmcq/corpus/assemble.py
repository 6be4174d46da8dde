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
- A number printed more than once in a file: every occurrence is kept with ``meta.duplicate_number``, the
  later ones with ids ``{id}~2``, ``{id}~3``; settling disputes them all (which one the number belongs to
  cannot be read from the file; a reviewer's correction decides).
- ``invariant``, ``blank_option``, ``duplicate_options`` come from
  ``blindmcq.datasets.items.invariant_flags``;
  status is ``excluded``, else ``malformed`` when one of those holds, else ``ok``; key is null under
  ``invariant``. Malformed items are kept as printed.

Layout (:func:`detect_layout`), found from the rows rather than assumed: the header is the table's first
row when its number cell is not an item number (any words: ``№``, ``№ з/п``), with the rows under it on that
page, before any item, that have no number of their own but some text (sub-headers under a spanning ``№``)
or that number the columns ``1 2 3 4``; a later row equal to a header row (repeated on each page) is
skipped. Item numbers may read ``1``, ``1.``, ``1)`` or ``№ 1``.
The fourth column is a mark column (``правильна``/``неправильна`` and synonyms, any case, stray spaces,
broken across lines) or a key column (one cell per item holding the right option's number or letter).
Anything else stops with an InputError naming the page and what was expected.
In a mark column that marks every option, a page's first row with empty number and mark cells continues
the row above (a row split by the page break): its text is appended, not a new option. In a key column (or
a mark column that leaves wrong options blank) such a row is joined to the option above only where the
count and the print agree (:func:`_resolve_breaks`); otherwise the item is ambiguous, to be disputed.
"""

from __future__ import annotations

import dataclasses
import itertools
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from blindmcq.corpus.rows import Row
from blindmcq.datasets.items import FLAGS, Item, invariant_flags, item_id
from blindmcq.errors import InputError

N_OPTIONS = 4  # the Commission's banks print four options per item

# The Commission's note ("Виключено рішенням ..."), or a cell that holds only the word ("Виключено.")
EXCLUDED = re.compile(r"виключено\s+рішенням|^\s*виключено\s*\.?\s*$", re.IGNORECASE)
_WORD = r"[^\W\d_](?:[\w'’]*[^\W_])?"
_TAIL = re.compile(rf"({_WORD})-$")
_END = re.compile(rf"({_WORD})$")
_HEAD = re.compile(rf"^({_WORD})")
_WORDS = re.compile(rf"{_WORD}")
RIGHT, WRONG = "правильна", "неправильна"


def hyphen_vocabulary(rows: Iterable[Row]) -> set[str]:
    """Hyphenated word pairs printed whole inside a line, casefolded: evidence of hard hyphens."""
    vocab: set[str] = set()
    for row in rows:
        for cell in (row.question, row.option):
            if not cell or "-" not in cell:
                continue
            for line in cell.split("\n"):
                for token in line.split():
                    if "-" not in token:
                        continue
                    parts = token.split("-")
                    for a, b in itertools.pairwise(parts):
                        end, head = _END.search(a), _HEAD.match(b)
                        if end and head:
                            vocab.add(f"{end.group(1)}-{head.group(1)}".casefold())
    return vocab


def solid_words(rows: Iterable[Row]) -> set[str]:
    """Words printed whole (letters only, not at a line end), casefolded: evidence that a word is written
    without a hyphen."""
    words: set[str] = set()
    for row in rows:
        for cell in (row.question, row.option):
            for line in (cell or "").split("\n"):
                # a line's words are its tokens' words (no word spans a space), less its last token when
                # that ends with a hyphen
                head = line.rsplit(None, 1)
                if head and head[-1].endswith("-"):
                    line = head[0] if len(head) == 2 else ""
                words.update(map(str.casefold, _WORDS.findall(line)))
    return words


def hyphen_doubts(text: str, vocab: AbstractSet[str], solid: AbstractSet[str]) -> list[str]:
    """Line-end hyphens :func:`join_lines` cannot decide: the file prints the word both with a hyphen and
    without (``веб-сайті`` and ``вебсайті``), so the hyphen at the line end may be either."""
    out = []
    lines = [line.strip() for line in text.split("\n") if line.strip()]
    for above, below in itertools.pairwise(lines):
        if not above.endswith("-"):  # no line-end hyphen (``_TAIL`` ends with one)
            continue
        tail, head = _TAIL.search(above.split()[-1]), _HEAD.match(below)
        if tail and head and below[0].islower():
            pair = f"{tail.group(1)}-{head.group(1)}".casefold()
            if pair in vocab and pair.replace("-", "") in solid:
                out.append(f"a line-end hyphen in {pair!r}: the file prints the word with and without it")
    return out


def join_lines(text: str, vocab: AbstractSet[str] = frozenset()) -> str:
    """A cell's printed lines as one string: soft hyphens removed, whitespace collapsed."""
    lines = [line.strip() for line in text.split("\n")]
    out = ""
    for line in lines:
        if not line:
            continue
        # A word never spans a space: search only the text after the last one (the same match; searching
        # the whole of ``out`` for each line made long cells quadratic).
        tail = _TAIL.search(out, out.rfind(" ") + 1) if out.endswith("-") else None
        head = _HEAD.match(line) if tail else None
        if tail and head and line[0].islower():
            hard = f"{tail.group(1)}-{head.group(1)}".casefold() in vocab
            out = out + line if hard else out[:-1] + line
        elif tail:
            out += line
        else:
            out = f"{out} {line}" if out else line
    return " ".join(out.split())


@dataclass(frozen=True)
class Vocabulary:
    """One mark vocabulary of ``marks.yaml``: the values (after :func:`mark_word`) meaning right and wrong."""

    name: str
    right: frozenset[str]
    wrong: frozenset[str]


def _vocabularies() -> tuple[Vocabulary, ...]:
    data = yaml.safe_load((Path(__file__).with_name("marks.yaml")).read_text(encoding="utf-8"))
    return tuple(
        Vocabulary(v["name"], frozenset(map(str, v["right"])), frozenset(map(str, v["wrong"])))
        for v in data["vocabularies"]
    )


VOCABULARIES = _vocabularies()
RIGHT_WORDS = VOCABULARIES[0].right
MARK_VALUES = frozenset().union(*(v.right | v.wrong for v in VOCABULARIES))
KEY_LETTERS = "абвгдеєжз"
# Latin key letters, read only in a file whose every letter key is Latin: "B" is the second option there
# and its Cyrillic look-alike "В" the third, so the alphabet is the file's, never guessed per cell
LATIN_KEY_LETTERS = "abcdefgh"
_MARK_NOISE = re.compile(r"[\s\-\u00ad]+")
_KEYS = {
    letters: re.compile(rf"^(?:(\d)|([{letters}]))[.)]?$") for letters in (KEY_LETTERS, LATIN_KEY_LETTERS)
}
_NUMBER = re.compile(r"^№?(\d+)[.)]?$")
MARK, KEY = "mark", "key"


def mark_word(text: str | None) -> str:
    """A mark cell as one word: whitespace, hyphens and soft hyphens gone (line breaks, stray spaces)."""
    return _MARK_NOISE.sub("", text or "").casefold()


def key_indices(text: str | None, letters: str = KEY_LETTERS) -> list[int] | None:
    """A key cell's options, 0-based: ``2``, ``2)``, ``б``, ``Б.``, ``Б, В`` (with ``letters`` the Latin
    ones, ``B``, ``C.``); None otherwise."""
    out = []
    key = _KEYS[letters]
    for part in re.split(r"[,;]", mark_word(text)):
        m = key.match(part)
        if not m:
            return None
        out.append(int(m.group(1)) - 1 if m.group(1) else letters.index(m.group(2)))
    return out


def parse_numbers(cell: str) -> list[int] | None:
    """Numbers in a number cell (``1``, ``1.``, ``1)``, ``№ 1``; several when cells merged); else None."""
    tokens = re.sub(r"№\s*", "№", cell).split()
    found = [_NUMBER.match(t) for t in tokens]
    if not tokens or not all(found):
        return None
    return [int(m.group(1)) for m in found if m]


def number_form(cell: str) -> str:
    token = re.sub(r"№\s*", "№ ", cell.split("\n")[0].strip())
    return re.sub(r"\d+", "1", token)


def _numbers(cell: str, file: str, page: int) -> list[int]:
    numbers = parse_numbers(cell)
    if numbers is None:
        raise InputError(
            f"number cell {cell!r} is not an item number (expected 1, 1., 1) or № 1) nor the header row",
            file=file,
            page=page,
        )
    return numbers


def _flat(cells: tuple[str | None, ...]) -> tuple[str, ...]:
    return tuple(" ".join((c or "").split()) for c in cells)


def _cells(row: Row) -> tuple[str | None, ...]:
    return (row.number, row.question, row.option, row.mark)


@dataclass(frozen=True)
class Layout:
    """What :func:`detect_layout` recognised in one file's rows (recorded in verification.json)."""

    header: tuple[str, ...] | None
    fourth: str  # MARK or KEY
    marks_every_option: bool  # a mark column with a written word for wrong options too
    number_forms: tuple[str, ...]
    right_words: tuple[str, ...] = ()
    more_header: tuple[tuple[str, ...], ...] = ()  # header rows under the first (sub-headers, 1 2 3 4)
    vocabulary: str | None = None  # the marks.yaml vocabulary of a mark column
    key_letters: str = KEY_LETTERS  # the alphabet of a key column's letters (LATIN_KEY_LETTERS: Latin)
    unread: tuple[str, ...] = ()  # fourth-column values read as nothing (:func:`_unread_marks`)

    @property
    def right(self) -> frozenset[str]:
        """The values that mark a right option (the vocabulary's, not only those printed)."""
        voc = next((v for v in VOCABULARIES if v.name == self.vocabulary), VOCABULARIES[0])
        return voc.right

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "header": list(self.header) if self.header else None,
            "fourth_column": self.fourth,
            "marks_every_option": self.marks_every_option,
            "number_forms": list(self.number_forms),
            "right_words": list(self.right_words),
        }
        if self.vocabulary is not None:
            out["mark_vocabulary"] = self.vocabulary
        if self.more_header:
            out["more_header_rows"] = [list(r) for r in self.more_header]
        if self.key_letters != KEY_LETTERS:
            out["key_letters"] = "latin"
        if self.unread:
            out["unread_marks"] = list(self.unread)
        return out


def _header_row(row: Row, header: tuple[str, ...], more: tuple[tuple[str, ...], ...]) -> bool:
    number = " ".join((row.number or "").split())  # most rows differ here already: no need to flatten all
    if number != header[0] and all(number != h[0] for h in more):
        return False
    flat = _flat(_cells(row))
    return flat == header or flat in more


def is_header(row: Row, layout: Layout | None) -> bool:
    if layout is None or layout.header is None:
        return False
    return _header_row(row, layout.header, layout.more_header)


def _column_numbers(row: Row) -> bool:
    """A header row numbering the columns, ``1 2 3 4``, as Ukrainian official tables often print."""
    return _flat(_cells(row)) == tuple(str(k) for k in range(1, len(_cells(row)) + 1))


def _more_header(rows: Sequence[Row]) -> tuple[tuple[str, ...], ...]:
    """Header rows under the first, on its page before any item: the column numbers ``1 2 3 4``, or rows
    into which the number header spans (no number cell of their own) with text, and a fourth cell that is
    no mark or key (so that no item row can be taken for one)."""
    out = []
    for row in rows[1:]:
        if row.page != rows[0].page:
            break
        fourth = mark_word(row.mark)
        sub = row.number is None and any((c or "").strip() for c in _cells(row))
        sub = sub and fourth not in MARK_VALUES and key_indices(fourth) is None
        if _column_numbers(row) or sub:
            out.append(_flat(_cells(row)))
        else:
            break
    return tuple(out)


_HEADING = re.compile(r"^[^\W\d_]")  # a heading starts with a letter (an item number does not)


def heading_row(row: Row, header: tuple[str, ...] | None) -> bool:
    """A full-width section heading row (``Розділ 2. ...``): text from the number cell on that is no item
    number and starts with a letter, no option text, no mark; not the header. A path that cuts the row at
    the columns' rules finds its words in the number and stem cells, one that keeps merged cells finds them
    all in the number cell."""
    number = (row.number or "").strip()
    if not number or not _HEADING.match(number) or parse_numbers(number) is not None:
        return False
    if (row.option or "").strip() or (row.mark or "").strip():
        return False
    return header is None or _flat(_cells(row)) != header


def split_header_rows(rows: Sequence[Row]) -> tuple[list[Row], int]:
    """``rows`` with full-width heading rows dropped (their count returned), and a repeated header row
    whose option cell also holds the rest of a row split by the page break (a word processor prints it in
    the repeated header's cell) cut in two: the header row, and a row holding only that rest. Every other
    header cell must read as the header's. The rest's line geometry is the cell's from its first line under
    the header's words (``fit`` None where the lines do not match up: a join that needs it stays disputed)."""
    if not rows or not rows[0].number or parse_numbers(rows[0].number) is not None:
        return list(rows), 0
    first = rows[0]
    header = _flat(_cells(first))
    head_option = (first.option or "").split("\n")
    out: list[Row] = [first]
    headings = 0
    for row in rows[1:]:
        if heading_row(row, header):
            headings += 1
            continue
        lines = (row.option or "").split("\n")
        same = _flat((row.number, row.question, row.mark)) == (header[0], header[1], header[3])
        if (
            same
            and len(lines) > len(head_option)
            and _flat(tuple(lines[: len(head_option)])) == tuple(" ".join(h.split()) for h in head_option)
        ):
            out.append(dataclasses.replace(row, option=first.option, fit=None))
            rest = "\n".join(lines[len(head_option) :])
            fit = row.fit
            if fit is not None and len(fit.leads) == len(lines):  # the rest's lines, as measured
                n = len(head_option)
                fit = dataclasses.replace(fit, lead=fit.leads[n], leads=fit.leads[n:])
            else:
                fit = None
            out.append(dataclasses.replace(row, number="", question="", option=rest, mark="", fit=fit))
            continue
        out.append(row)
    return out, headings


def detect_layout(rows: Sequence[Row], file: str) -> Layout:
    """The file's header row and fourth column, from its rows; InputError naming the page otherwise."""
    if not rows:
        raise InputError("no table rows to read", file=file)
    first = rows[0]
    header = None
    more: tuple[tuple[str, ...], ...] = ()
    if first.number and first.number.strip() and parse_numbers(first.number) is None:
        header = _flat(_cells(first))
        more = _more_header(rows)
    body = [r for r in rows if header is None or not _header_row(r, header, more)]
    forms: list[str] = []
    for r in body:
        if r.number and r.number.strip():
            _numbers(r.number, file, r.page)
            form = number_form(r.number)
            if form not in forms:
                forms.append(form)
    marks = [
        (r.page, r.mark)
        for r in body
        if r.mark is not None and not EXCLUDED.search(r.mark) and not _spanning_note(r.option)
    ]
    words = [(p, mark_word(m)) for p, m in marks]
    seen = {w for _, w in words}
    unread = _unread_marks([w for _, w in words])
    seen -= unread
    voc = next((v for v in VOCABULARIES if seen <= v.right | v.wrong), None)
    keys = all(not w or all(k >= 0 for k in key_indices(w) or [-1]) for w in seen)
    if voc is not None and (not keys or voc is VOCABULARIES[0] or _marks_later_rows(body)):
        right = tuple(sorted(seen & voc.right))
        every = any(w and w in voc.wrong for w in seen)
        name = None if voc is VOCABULARIES[0] else voc.name  # the Commission's words: as before
        return Layout(header, MARK, every, tuple(forms), right, more, name, unread=tuple(sorted(unread)))
    if keys:
        return Layout(header, KEY, False, tuple(forms), (), more, unread=tuple(sorted(unread)))
    if voc is None and all(
        not w or all(k >= 0 for k in key_indices(w, LATIN_KEY_LETTERS) or [-1]) for w in seen
    ):
        return Layout(
            header,
            KEY,
            False,
            tuple(forms),
            (),
            more,
            key_letters=LATIN_KEY_LETTERS,
            unread=tuple(sorted(unread)),
        )
    page, bad = next((p, m) for p, m in marks if mark_word(m) not in MARK_VALUES)
    raise InputError(
        f"fourth-column cell {bad!r} is neither a mark (правильна/неправильна) nor an option key "
        f"(1-9 or а-е) in a file whose other cells read {sorted(seen)[:4]}",
        file=file,
        page=page,
    )


UNREAD_SHARE = 0.01  # at most this share of a file's fourth-column cells (and at least one) may be unread


def _unread_marks(words: Sequence[str]) -> set[str]:
    """The fourth-column values (after :func:`mark_word`) that are no value of any vocabulary and no option
    key (Cyrillic or Latin), where they fill at most UNREAD_SHARE of the cells: an option's text run on into
    its mark cell. Each item printing one is disputed (:func:`_item`) and the rest of the file read; more of
    them, and the file's fourth column is not read at all (the caller stops it)."""
    odd = [
        w
        for w in words
        if w not in MARK_VALUES and key_indices(w) is None and key_indices(w, LATIN_KEY_LETTERS) is None
    ]
    return set(odd) if odd and len(odd) <= max(1, UNREAD_SHARE * len(words)) else set()


def _marks_later_rows(rows: Sequence[Row]) -> bool:
    """Whether a value is printed in the fourth cell of an option row that is not its item's first (the
    number cell above spans into it): a mark column; a key column prints one key per item, on its first row.
    """
    return any(r.number is None and r.option is not None and mark_word(r.mark) for r in rows)


def mark_values(rows: Sequence[Row], layout: Layout) -> dict[str, dict[str, Any]]:
    """The values printed in the fourth column (after :func:`mark_word`), how often, and the meaning taken:
    ``right``/``wrong`` in a mark column, ``key N`` (1-based) in a key column, ``blank``."""
    counts: dict[str, int] = {}
    for r in rows:
        if r.mark is not None and not EXCLUDED.search(r.mark) and not _spanning_note(r.option):
            if is_header(r, layout):
                continue
            w = mark_word(r.mark)
            counts[w] = counts.get(w, 0) + 1
    out: dict[str, dict[str, Any]] = {}
    for w in sorted(counts):
        if w in layout.unread:
            means = "unread (its item disputed)"
        elif layout.fourth == MARK:
            means = "right" if w in layout.right else "wrong" if w else "blank (wrong)"
        else:
            keys = key_indices(w, layout.key_letters) or []
            means = "blank" if not w else "key " + ", ".join(str(k + 1) for k in keys)
        out[w] = {"count": counts[w], "means": means}
    return out


def _spanning_note(option: str | None) -> bool:
    """An option cell that begins with the exclusion note: the note printed over the option and mark cells
    (a path that cuts at the column rules finds its tail in the mark cell)."""
    return bool(option) and EXCLUDED.match(" ".join((option or "").split())) is not None


def _is_mark_value(text: str) -> bool:
    return mark_word(text) in MARK_VALUES or key_indices(text) is not None


def _mark(text: str | None, right: AbstractSet[str] = RIGHT_WORDS) -> bool:
    return mark_word(text) in right


# A printed option label at the start of an option: ``А) ``, ``Б.``, ``a) ``, ``A. ``, ``1) `` (also alone:
# a blank option printed as its label), or typed with no space before the text (``А)текст``, ``Б)10``;
# not ``1.5``). Stripped where most of a file's options carry one (``labelled``).
_LABEL = re.compile(r"^\s*([^\W\d_]|\d{1,2})([.)])(?!(?<=\d\.)\d)\s*")
LABEL_SEQUENCES = ("АБВГДЕЄЖЗ", "АБВГҐДЕЄЖЗ", "ABCDEFGHI", "123456789")
_LATIN_TO_CYRILLIC = str.maketrans("ABCEHKMOPTX", "АВСЕНКМОРТХ")


def labelled(options: Iterable[str]) -> bool:
    """Whether a file prints option labels: at least half its options, and at least one, begin with one."""
    options = list(options)
    return bool(options) and 2 * sum(bool(_LABEL.match(o)) for o in options) >= len(options)


def strip_labels(options: Sequence[str]) -> tuple[list[str], list[str | None], list[str]]:
    """Options without their printed labels, the labels as printed (None where missing), and why the labels
    leave the item in doubt: a missing label, a sequence other than А Б В Г (A B C D, 1 2 3 4), an option
    printed as its label alone."""
    out, labels, doubts = [], [], []
    for k, o in enumerate(options, 1):
        m = _LABEL.match(o)
        labels.append(f"{m.group(1)}{m.group(2)}" if m else None)
        text = o[m.end() :] if m else o
        out.append(text)
        if m and not text.strip():
            doubts.append(f"option {k} is printed as its label alone ({labels[-1]!r})")
    if any(lab is None for lab in labels):
        doubts.append(
            f"option(s) {[k for k, lab in enumerate(labels, 1) if lab is None]} carry no printed label"
        )
    else:
        chars = "".join(lab[:-1].upper() for lab in labels if lab)
        seps = {lab[-1] for lab in labels if lab}
        ok = len(seps) == 1 and any(
            chars == seq[: len(chars)] or chars.translate(_LATIN_TO_CYRILLIC) == seq[: len(chars)]
            for seq in LABEL_SEQUENCES
        )
        if not ok:
            doubts.append(f"printed option labels {labels} are out of sequence")
    return out, labels, doubts


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
    boxes: list[tuple[int, float, float]] = field(default_factory=list)  # (page, top, bottom) per row
    breaks: list[int] = field(default_factory=list)  # options that may instead continue the one above
    option_rows: list[list[Row]] = field(default_factory=list)  # the printed rows of each option
    # stem text at a page top with no number: (page, text, page and bottom edge of the row above)
    stem_breaks: list[tuple[int, str, int, float]] = field(default_factory=list)


def _continues_row(row: Row, cur: _Draft | None, layout: Layout, page_top: bool) -> bool:
    """A page's first row that carries on the row above (split by the page break), not a new option."""
    if not (page_top and layout.fourth == MARK and layout.marks_every_option and cur and cur.options):
        return False
    if (row.number or "").strip() or (row.mark or "").strip() or row.mark is None:
        return False
    return not any(m and EXCLUDED.search(m) for m in cur.marks)


def _may_continue(row: Row, cur: _Draft | None, layout: Layout, page_top: bool) -> bool:
    """A page's first row that is either a new option or the rest of the option above, split by the page
    break: in a key column, or a mark column that leaves wrong options blank, nothing printed tells."""
    if not (page_top and cur and cur.options) or (layout.fourth == MARK and layout.marks_every_option):
        return False
    if (row.number or "").strip() or (row.question or "").strip() or not (row.option or "").strip():
        return False
    return row.mark is not None and not (row.mark or "").strip()


def _next_numbers(rows: Sequence[Row]) -> list[int | None]:
    """For each row, the first item number printed in a later row (None after the last)."""
    out: list[int | None] = [None] * len(rows)
    after: int | None = None
    for k in range(len(rows) - 1, -1, -1):
        out[k] = after
        found = parse_numbers(rows[k].number or "") if (rows[k].number or "").strip() else None
        after = found[0] if found else after
    return out


def _drafts(rows: Sequence[Row], file: str, layout: Layout, sheet: _Sheet | None = None) -> list[_Draft]:
    drafts: list[_Draft] = []
    waiting: list[int] = []
    page = None
    page_top = False
    next_numbers = _next_numbers(rows)
    for k, row in enumerate(rows):
        if row.page != page:
            page, page_top = row.page, True
        if is_header(row, layout):
            continue
        if all(c is not None and not c.strip() for c in (row.number, row.question, row.option, row.mark)):
            continue  # a ruled row with nothing printed and no cell merged into it: no blank option
        cur = drafts[-1] if drafts else None
        if _continues_row(row, cur, layout, page_top) and cur is not None:
            page_top = False
            if (row.question or "").strip():
                cur.question += "\n" + (row.question or "")
            if (row.option or "").strip():
                cur.options[-1] = f"{cur.options[-1]}\n{row.option}"
                cur.option_rows[-1].append(row)
            cur.pages += [] if row.page in cur.pages else [row.page]
            cur.boxes.append((row.page, row.top or 0.0, row.bottom or 0.0))
            continue
        maybe = _may_continue(row, cur, layout, page_top)
        at_top, page_top = page_top, False
        numbers = _numbers(row.number, file, row.page) if row.number and row.number.strip() else []
        stem = row.question is not None and row.question.strip() != ""
        above = cur.boxes[-1] if cur is not None and cur.boxes else (0, 0.0, 0.0)
        foot = sheet.foot(int(above[0])) if sheet is not None else None
        printed_join = (
            foot is not None and above[2] >= foot - BOTTOM_TOL and (row.question or "").lstrip()[:1].islower()
        )
        taken = (waiting[0] if waiting else cur.number + 1) == next_numbers[k] if cur is not None else False
        if stem and not numbers and at_top and cur is not None and cur.options and (printed_join or taken):
            # Stem text at a page top with no number, where the print says the stem cell continues (the row
            # above fills its page, the text starts lower-case) or the number a new item would take is
            # printed next: the rest of the stem, never a made-up item; ambiguous unless the print says so
            # (:func:`_item`). Otherwise, as elsewhere, an item whose number was not printed.
            cur.stem_breaks.append((row.page, row.question or "", int(above[0]), above[2]))
            cur.question += "\n" + (row.question or "")
            stem = False
            maybe = _may_continue(dataclasses.replace(row, question=""), cur, layout, True)
        if numbers:
            # a number cut from a cell merged with the one above is a merge recovered too
            cur = _Draft(numbers[0], row.page, row.question or "", recovered=row.cut_number)
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
        cur.boxes.append((row.page, row.top or 0.0, row.bottom or 0.0))
        if row.option is not None:
            if maybe:
                cur.breaks.append(len(cur.options))
            cur.options.append(row.option)
            cur.option_rows.append([row])
            cur.marks.append(row.mark)
        elif row.mark is not None and cur.marks:
            cur.marks[-1] = f"{cur.marks[-1] or ''}\n{row.mark}"
        elif row.mark is not None and layout.fourth == KEY:
            cur.marks.append(row.mark)
    return drafts


@dataclass(frozen=True)
class _Sheet:
    """Geometry of one path's rows, the yardsticks of :func:`_against_join`, per layout section: the pages
    of one size whose option column has one right border (a portrait and a landscape section, or two
    offices' tables, in one file), each with its own foot."""

    feet: dict[tuple[Any, ...], float]  # section -> the lowest row edge on its pages: where a split row ends
    widest: dict[int, float]  # option column (its right border, rounded) -> right end of its longest line
    sections: dict[int, tuple[Any, ...]] = field(default_factory=dict)  # page -> section
    # section -> (page, number): a page whose last row is whole (the next page opens with that item
    # number) and ends at the section's foot, so reaching the foot is no sign of a row split by the break
    whole: dict[tuple[Any, ...], tuple[int, int | None]] = field(default_factory=dict)

    @property
    def bottom(self) -> float | None:
        """The lowest row edge on any page (None: no row has one)."""
        return max(self.feet.values(), default=None)

    def foot(self, page: int) -> float | None:
        """Where a row split by the page break ends on ``page``: the lowest row edge of its section."""
        section = self.sections.get(page)
        return self.feet.get(section) if section is not None else None

    def whole_at_foot(self, page: int) -> tuple[int, int | None] | None:
        """(page, number) of a whole row ending at the foot of ``page``'s section (see ``whole``)."""
        section = self.sections.get(page)
        return self.whole.get(section) if section is not None else None

    @classmethod
    def of(
        cls,
        rows: Sequence[Row],
        sizes: Mapping[int, tuple[float, float]] | None = None,
        layout: Layout | None = None,
    ) -> _Sheet:
        widest: dict[int, float] = {}
        borders: dict[int, Counter[int]] = {}
        for r in rows:
            borders.setdefault(r.page, Counter())
            if r.fit is not None:
                k = round(r.fit.right)
                widest[k] = max(widest.get(k, r.fit.widest), r.fit.widest)
                borders[r.page][k] += 1
        sections: dict[int, tuple[Any, ...]] = {}
        pages = sorted(borders)
        # a page with no option text takes the border of the nearest page before it (else after it)
        known = [borders[p].most_common(1)[0][0] if borders[p] else None for p in pages]
        for order in (range(len(pages)), range(len(pages) - 1, -1, -1)):
            last = None
            for k in order:
                known[k] = last = known[k] if known[k] is not None else last
        for page, border in zip(pages, known, strict=True):
            size = (sizes or {}).get(page)
            sections[page] = (round(size[0]), round(size[1])) if size else (), border
        feet: dict[tuple[Any, ...], float] = {}
        for r in rows:
            if r.bottom is not None:
                section = sections[r.page]
                feet[section] = max(feet.get(section, r.bottom), r.bottom)
        return cls(feet, widest, sections, _whole_at_feet(rows, sections, feet, widest, layout))


WHOLE_TOL = 0.05  # pt: a whole row ending this close to a section's foot ends where the foot was measured


def _whole_at_feet(
    rows: Sequence[Row],
    sections: Mapping[int, tuple[Any, ...]],
    feet: Mapping[tuple[Any, ...], float],
    widest: Mapping[int, float],
    layout: Layout | None,
) -> dict[tuple[Any, ...], tuple[int, int | None]]:
    """Per section, the first page whose last row ends at the section's foot (the lowest row edge of its
    pages) although the print shows it whole: the next page's first row under the header opens an item
    (its number printed), or begins a new option (its first word, with the space before it, would have
    fitted on the last line of the row above). A row split by the page break ends at the foot, but where
    a whole row ends exactly there, the foot is where rows happened to end (a section whose rows never
    split), and a row reaching it shows nothing about the page break."""
    if layout is None:
        return {}
    last: dict[int, Row] = {}
    first: dict[int, Row] = {}
    for r in rows:
        last[r.page] = r
        if r.page not in first and not is_header(r, layout):
            first[r.page] = r
    out: dict[tuple[Any, ...], tuple[int, int]] = {}
    for page in sorted(last):
        r, top = last[page], first.get(page + 1)
        section = sections.get(page)
        foot = feet.get(section) if section is not None else None
        if r.bottom is None or foot is None or top is None or section in out:
            continue
        if sections.get(page + 1) != section or r.bottom < foot - WHOLE_TOL:
            continue
        numbers = parse_numbers(top.number) if top.number and top.number.strip() else None
        a, b = r.fit, top.fit
        fits = (
            a is not None
            and b is not None
            and abs(a.right - b.right) <= BOTTOM_TOL
            and b.lead + a.space <= widest.get(round(a.right), a.right) - a.last
        )
        if numbers or fits:
            out[section] = (page, numbers[0] if numbers else None)
    return out


BOTTOM_TOL = 1.0  # pt: a row ending this close to the lowest row edge of its section reaches the page's foot
_SENTENCE_END = re.compile(r"[.!?…]\s*$")


def _against_join(
    above: Row, below: Row, text_above: str, sheet: _Sheet, *, space: bool = False
) -> str | None:
    """Why the page-top row ``below`` may not be the rest of the option ending in ``above``; None when all
    the print's evidence says it is: ``above`` is the last row of the page before and reaches the page's
    foot (a row split by the break fills its page), and the first word of ``below`` is wider than the room
    left on the last line of ``above`` (a line-wrapping typesetter would have put it there otherwise; the
    room is measured to the right end of the column's longest line in the file, as the room to the border
    would include the cell's padding), and the two do not read as two sentences."""
    if below.page != above.page + 1:
        return "the row above is not on the page before"
    foot = sheet.foot(above.page)
    if above.bottom is None or foot is None or above.bottom < foot - BOTTOM_TOL:
        return "the row above does not reach the foot of its page"
    whole = sheet.whole_at_foot(above.page)
    if whole is not None and whole[0] != above.page:  # this page's own row: the tests below tell
        opens = f"item {whole[1]}" if whole[1] is not None else "a new option by its first word"
        return (
            f"the row above reaches the foot of its page, but so does a whole row (page {whole[0]}'s last, "
            f"page {whole[0] + 1} opening with {opens}): the foot is no sign of a split row"
        )
    a, b = above.fit, below.fit
    if a is None or b is None or abs(a.right - b.right) > BOTTOM_TOL:
        return "no line geometry of the two rows"
    room = sheet.widest.get(round(a.right), a.right) - a.last
    # With ``space``, the word needs the space before it too, as printed in the cell above (its narrowest:
    # a justified line's spaces are wider); without, the caller allows for it.
    gap = a.space if space else 0.0
    if b.lead + gap <= room:
        with_space = f" with the space before it ({gap:.1f} pt)" if gap else ""
        return (
            f"its first word ({b.lead:.1f} pt){with_space} would have fitted on the line above "
            f"({room:.1f} pt left)"
        )
    start = (below.option or "").lstrip()[:1]
    if _SENTENCE_END.search(text_above) and start.isupper():
        return "the row above ends a sentence and the row starts one"
    return None


SPACE_MAX = 4.0  # pt: the widest space before a word in body text (about a third of a 12 pt font)


def _wider(row: Row) -> Row:
    """``row`` with its first word taken SPACE_MAX wider (the space before it on the line above)."""
    if row.fit is None:
        return row
    return dataclasses.replace(row, fit=dataclasses.replace(row.fit, lead=row.fit.lead + SPACE_MAX))


def _join(
    d: _Draft, joins: Sequence[int]
) -> tuple[list[str], list[str | None], str | None, list[dict[str, Any]]]:
    options, marks, joined = list(d.options), list(d.marks), []
    for i in sorted(joins, reverse=True):  # from the last, so that the indices stay valid
        options[i - 1] = f"{options[i - 1]}\n{options.pop(i)}"
        if i < len(marks) and not (marks[i] or "").strip():
            marks.pop(i)
        joined.append({"page": d.option_rows[i][0].page, "option": i})
    return options, marks, None, joined[::-1]


def _by_print(
    d: _Draft, sheet: _Sheet, where: str, counts: str
) -> tuple[list[str], list[str | None], str | None, list[dict[str, Any]]]:
    """A file whose items have several option counts: each page-top row as the print alone says (the
    count is no evidence): joined where every test of :func:`_against_join` says it continues the option
    above (its first word, with the space before it, too wide for the line above), kept where a measured
    test says it does not; otherwise the item is ambiguous."""
    joins, unsettled = [], []
    for i in d.breaks:
        why = (
            _against_join(d.option_rows[i - 1][-1], d.option_rows[i][0], d.options[i - 1], sheet, space=True)
            if i
            else "no option above"
        )
        if why is None:
            joins.append(i)
        elif "no line geometry" in why or sheet.bottom is None or i == 0:
            unsettled.append(f"page {d.option_rows[i][0].page}: {why}")
    if unsettled:
        return (
            d.options,
            d.marks,
            f"{where} ({counts}, so the count does not tell): " + "; ".join(unsettled),
            [],
        )
    return _join(d, joins)


def _resolve_breaks(
    d: _Draft,
    n_options: int | None,
    sheet: _Sheet,
    fourth: str,
    mixed: str | None = None,
    letters: str = KEY_LETTERS,
    labels: bool = False,
) -> tuple[list[str], list[str | None], str | None, list[dict[str, Any]]]:
    """Options, marks, the reason the item is ambiguous (None when settled), and the rows joined, of a draft
    whose page-top rows may continue the option above (``d.breaks``).

    Kept as printed when that gives the expected number of options (the page broke between options).
    Joined to the option above when that gives the expected number of options and, for every such row,
    the print's geometry says so too (:func:`_against_join`), and no printed key points past the last
    option. Otherwise the draft is ambiguous (the item is disputed): the count alone is no proof, as an
    item printed with N + 1 options looks the same."""
    if not d.breaks:
        return d.options, d.marks, None, []
    unbroken = [o for k, o in enumerate(d.options) if k not in d.breaks]
    if labels and 0 not in d.breaks and all(_LABEL.match(o) for o in unbroken):
        # In a file that labels its options, and an item whose other options all carry a label, the print
        # says it: a page-top row that begins with a label is a new option, one that does not is the rest
        # of the option above (labels out of sequence after this still dispute the item)
        joins = [i for i in d.breaks if not _LABEL.match(d.options[i])]
        return _join(d, joins) if joins else (d.options, d.marks, None, [])
    where = f"a row at the top of page(s) {d.pages[1:]} is a new option or the rest of the one above"
    if mixed:
        return _by_print(d, sheet, where, mixed)
    if n_options is None:
        return d.options, d.marks, where + " (no expected number of options to tell)", []
    if len(d.options) == n_options:
        # The count says the page broke between options; where the print says every such row continues the
        # option above (a three-option item whose third option broke across the page), the two disagree.
        # Here a first word that would only just have fitted is no proof of a new option: the room is
        # measured without the space before it (up to SPACE_MAX pt), so the word is taken as that much wider.
        joins = [
            i
            for i in d.breaks
            if i > 0
            and not _against_join(
                d.option_rows[i - 1][-1], _wider(d.option_rows[i][0]), d.options[i - 1], sheet
            )
        ]
        if joins and len(joins) == len(d.breaks):
            pages = [d.option_rows[i][0].page for i in joins]
            return (
                d.options,
                d.marks,
                f"{where}: {n_options} options as printed, but the print says the row(s) at the top of "
                f"page(s) {pages} continue the option above ({n_options - len(joins)} options?)",
                [],
            )
        return d.options, d.marks, None, []
    count = f": {len(d.options)} options as printed, {n_options} expected"
    if len(d.options) - len(d.breaks) != n_options or 0 in d.breaks:
        # Neither reading gives the expected count (a malformed item either way): kept as printed where the
        # print's geometry speaks against every join (a row moved whole to the next page), else ambiguous.
        against = [  # the space before the first word counted, as printed: a word that fits only without it
            _against_join(d.option_rows[i - 1][-1], d.option_rows[i][0], d.options[i - 1], sheet, space=True)
            if i
            else None
            for i in d.breaks
        ]
        measured = all(
            i and d.option_rows[i - 1][-1].fit and d.option_rows[i][0].fit and d.option_rows[i - 1][-1].bottom
            for i in d.breaks
        )
        if (
            measured
            and sheet.bottom is not None
            and all(why and "no line geometry" not in why for why in against)
        ):
            return d.options, d.marks, None, []
        return d.options, d.marks, where + count, []
    reasons = []
    for i in d.breaks:
        why = _against_join(
            d.option_rows[i - 1][-1], d.option_rows[i][0], d.options[i - 1], sheet, space=True
        )
        if why:
            reasons.append(f"page {d.option_rows[i][0].page}: {why}")
    if fourth == KEY:
        keys = [k for m in d.marks if (m or "").strip() for k in key_indices(m, letters) or []]
        if any(k >= n_options for k in keys):
            reasons.append(f"a printed key points past option {n_options}")
    if reasons:
        return d.options, d.marks, where + count + "; not joined: " + "; ".join(reasons), []
    return _join(d, d.breaks)


def _item(
    d: _Draft,
    vocab: AbstractSet[str],
    *,
    source: str,
    bank: str,
    file: str,
    n_options: int | None,
    fourth: str = MARK,
    letters: str = KEY_LETTERS,
    sheet: _Sheet = _Sheet({}, {}),
    right: AbstractSet[str] = RIGHT_WORDS,
    labels: bool = False,
    solid: AbstractSet[str] | None = None,
    mixed: str | None = None,
    unread: AbstractSet[str] = frozenset(),
) -> Item:
    raw_options, raw_marks, ambiguous, joined = _resolve_breaks(
        d, n_options, sheet, fourth, mixed, letters, labels
    )

    question = join_lines(d.question, vocab)
    options = [join_lines(o, vocab) for o in raw_options]
    marks = [join_lines(m or "") for m in raw_marks]
    meta: dict[str, Any] = {"pages": d.pages, "boxes": [list(b) for b in d.boxes]}
    doubts = [ambiguous] if ambiguous else []
    doubts += [
        f"fourth-column cell {m!r} is neither a mark nor an option key (text run on into it?)"
        for m in raw_marks
        if m and mark_word(m) in unread
    ]
    for page, text, above_page, above_bottom in d.stem_breaks:
        why = (
            "the row above is not on the page before"
            if above_page != page - 1
            else "the row above does not reach the foot of its page"
            if (foot := sheet.foot(above_page)) is None or above_bottom < foot - BOTTOM_TOL
            else "it starts with a capital"
            if not text.lstrip()[:1].islower()
            else None
        )
        if why:
            doubts.append(f"stem text at the top of page {page} with no item number, not joined: {why}")
        else:
            meta.setdefault("joined_stem", []).append(page)
    if solid is not None:
        for text in (d.question, *raw_options):
            doubts += hyphen_doubts(text, vocab, solid)
    if labels:
        options, printed, label_doubts = strip_labels(options)
        meta["option_labels"] = printed  # as printed, stripped from the options
        doubts += label_doubts
    if doubts:
        meta["ambiguous"] = "; ".join(doubts)
    if joined:
        meta["joined_rows"] = joined  # page-top rows joined to the option above (1-based option = index)
    spanning = [i for i, o in enumerate(options) if _spanning_note(o)]
    note = None
    if spanning:  # the note printed over the option and mark cells, in place of the options
        i = spanning[0]
        rest = "" if marks[i].strip() and _is_mark_value(marks[i]) else marks[i]
        note = " ".join(f"{options[i]} {rest}".split())
        options = [o for k, o in enumerate(options) if k not in spanning]
        marks = [m for k, m in enumerate(marks) if k not in spanning]
    note = note or next((m for m in marks if EXCLUDED.search(m)), None)
    hit = EXCLUDED.search(question)
    if hit:
        question, note = question[: hit.start()].strip(), question[hit.start() :]
    note = note or next((o for o in options if EXCLUDED.search(o)), None)
    if fourth == KEY:
        given = [
            k for m in marks if m.strip() and not EXCLUDED.search(m) for k in key_indices(m, letters) or [-1]
        ]
        keys = [k for k in given if 0 <= k < len(options)]
        keys = keys if len(keys) == len(given) else []
    else:
        keys = [i for i, m in enumerate(marks) if _mark(m, right)]
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


MIXED_SHARE = 0.05  # a file where this share of the unbroken items (and 3 or more) has another option count


def mixed_counts(drafts: Sequence[_Draft], n_options: int | None) -> str | None:
    """Where the file's items unbroken by a page have several option counts (3, 4 and 5 options in one
    bank), what they are (``"items with 3, 4 and 5 options"``): the expected count is then no evidence
    for a page-top row. None where nearly every item has the expected count (a stray malformed item)."""
    counts = Counter(
        len(d.options)
        for d in drafts
        if d.options and not d.breaks and not any(m and EXCLUDED.search(m) for m in d.marks)
    )
    off = sum(n for c, n in counts.items() if c != n_options)
    if n_options is None or off < max(3, MIXED_SHARE * sum(counts.values())):
        return None
    seen = sorted(c for c, n in counts.items() if n >= 2)
    return (
        "items with "
        + (", ".join(map(str, seen[:-1])) + " and " + str(seen[-1]) if len(seen) > 1 else str(seen[0]))
        + " options"
    )


def assemble(
    rows: Sequence[Row],
    *,
    source: str,
    bank: str,
    file: str,
    n_options: int | None = N_OPTIONS,
    layout: Layout | None = None,
    sizes: Mapping[int, tuple[float, float]] | None = None,
) -> list[Item]:
    """Items of one file from its rows in page order (either path's); layout detected when not given.
    ``sizes`` (page -> width, height) tells the file's layout sections apart by page size too."""
    layout = layout or detect_layout(rows, file)
    sheet = _Sheet.of(rows, sizes, layout)
    drafts = _drafts(rows, file, layout, sheet)
    vocab = hyphen_vocabulary(rows)
    solid = solid_words(rows)
    with_labels = labelled(o for d in drafts for o in d.options)
    mixed = mixed_counts(drafts, n_options)
    items = [
        _item(
            d,
            vocab,
            source=source,
            bank=bank,
            file=file,
            n_options=n_options,
            fourth=layout.fourth,
            letters=layout.key_letters,
            sheet=sheet,
            right=layout.right,
            labels=with_labels,
            solid=solid,
            mixed=mixed,
            unread=frozenset(layout.unread),
        )
        for d in drafts
    ]
    return _mark_duplicates(items)


def _mark_duplicates(items: list[Item]) -> list[Item]:
    """A number printed more than once: every occurrence kept, each to be disputed, none guessed.

    Which of them the number belongs to cannot be read from the file, so each keeps the number as printed
    and ``meta.duplicate_number`` (occurrence, count, pages); the k-th occurrence (k > 1) gets the id
    ``{id}~{k}`` so that ids stay unique. :func:`blindmcq.corpus.settle.settle` disputes them all.
    """
    pages: dict[int, list[int]] = {}
    for it in items:
        pages.setdefault(it.number, []).append(it.page)
    seen: dict[int, int] = {}
    out = []
    for it in items:
        if len(pages[it.number]) == 1:
            out.append(it)
            continue
        k = seen[it.number] = seen.get(it.number, 0) + 1
        dup = {"occurrence": k, "count": len(pages[it.number]), "pages": pages[it.number]}
        out.append(
            dataclasses.replace(
                it, id=it.id if k == 1 else f"{it.id}~{k}", meta={**it.meta, "duplicate_number": dup}
            )
        )
    return out
