"""The third reading: its own header, column, mark and page-top rules; it disputes what it reads otherwise."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

from blindmcq.corpus import reading3
from blindmcq.corpus.assemble import KEY, assemble, detect_layout
from blindmcq.corpus.rows import Fit, Row
from blindmcq.datasets.items import Item

HEADER = Row(1, "№", "Питання", "Варіанти відповіді", "Бал")


def score_rows(keys: list[int]) -> list[Row]:
    rows = [HEADER]
    for n, key in enumerate(keys, 1):
        rows += [
            Row(
                1,
                None if k else str(n),
                None if k else f"Питання {n}?",
                f"варіант {o}",
                "1" if k == key else "",
            )
            for k, o in enumerate("абвг")
        ]
    return rows


def test_it_imports_nothing_from_assemble() -> None:
    tree = ast.parse(Path(reading3.__file__).read_text(encoding="utf-8"))
    modules = [n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    modules += [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    assert not any("assemble" in (m or "") for m in modules)


def test_it_reads_a_score_column_by_counting() -> None:
    keys = [2, 0, 3, 1, 1]
    items, how = reading3.read(score_rows(keys))
    assert how == "marks ('1' marks the right option)" and [r.key for r in items] == keys
    assert [r.number for r in items] == [1, 2, 3, 4, 5] and items[0].options[3] == "варіант г"


def test_a_misread_column_is_disputed_by_the_third_reading() -> None:
    """The old misread (the score column taken for a key column: every key 0) agrees between paths 1 and 2,
    which share assemble; the third reading disagrees on every key but the first option's and disputes."""
    keys = [2, 0, 3, 1, 1]
    rows = score_rows(keys)
    misread = dataclasses.replace(detect_layout(rows, "f.pdf"), fourth=KEY)
    items = assemble(rows, source="v", bank="b", file="f.pdf", layout=misread)
    assert [i.key for i in items] == [0] * 5 and {i.status for i in items} == {"ok"}
    report = reading3.compare(items, rows)
    assert [d["id"] for d in report["differ"]] == ["v-b-1", "v-b-3", "v-b-4", "v-b-5"]
    assert all(d["fields"] == ["key"] for d in report["differ"]) and report["agree"] == 1
    disputed = reading3.dispute(items, report)
    assert [i.status for i in disputed] == ["disputed", "ok", "disputed", "disputed", "disputed"]
    assert disputed[0].meta["settled"] == {"path": None, "why": "the third reading (reading3) differs: key"}
    right = assemble(rows, source="v", bank="b", file="f.pdf")
    assert reading3.compare(right, rows)["differ"] == []


def test_page_top_rows_by_its_own_count_rule() -> None:
    """A key column: a page-top option row with no key is joined where that gives the file's usual count,
    and stem text at a page top beside a complete item is an item whose number was not printed."""
    rows = [Row(1, "№", "Питання", "Варіанти", "Ключ")]
    for n in (1, 2, 3):
        rows += [
            Row(1, None if k else str(n), None if k else "П?", o, None if k else "Б")
            for k, o in enumerate("абвг")
        ]
    rows += [Row(1, "4", "П4?", "а", "В"), Row(1, None, None, "б", None), Row(1, None, None, "в пер-", None)]
    rows += [
        Row(2, "№", "Питання", "Варіанти", "Ключ"),
        Row(2, "", "", "ша", ""),
        Row(2, None, None, "г", None),
    ]
    rows += [Row(2, "", "П5?", "а", "А")] + [Row(2, None, None, o, None) for o in "бвг"]
    items, how = reading3.read(rows)
    assert how.startswith("keys") and [r.number for r in items] == [1, 2, 3, 4, 5]
    assert reading3.squash(items[3].options[2]) == "вперша" and len(items[3].options) == 4
    assert items[4].stem == ["П5?"] and items[4].key == 0


def test_a_key_this_reading_cannot_read_is_not_confirmed() -> None:
    """A fourth column it cannot make sense of (here: blank everywhere) leaves every ok item's key confirmed
    by the paths alone: each is disputed naming the key, never settled on one reading."""
    rows = score_rows([0, 1, 2])
    right = assemble(rows, source="v", bank="b", file="f.pdf")
    blank = [dataclasses.replace(r, mark="") if r.number != "№" else r for r in rows]
    report = reading3.compare(right, blank)
    assert report["fourth_column"] == "unread"
    assert [d["fields"] for d in report["differ"]] == [["key"]] * 3
    assert report["differ"][0]["reading"]["key"] is None


def _mixed_rows(last: Row, top_rows: list[Row]) -> list[Row]:
    """A key-column file whose unbroken items print 3, 4 and 5 options (so the count is no evidence), and
    whose item 9 has three options on page 1 (the third ``last``) and ``top_rows`` after page 2's header."""
    fit = Fit(right=400.0, widest=390.0, last=300.0, lead=30.0, space=2.5)
    rows = [Row(1, "№", "Питання", "Варіанти", "Ключ", top=30.0, bottom=50.0)]
    y = 50.0
    for n, count in enumerate((4, 3, 5, 4, 3, 5, 4, 5), 1):
        for k in range(count):
            first = k == 0
            rows.append(
                Row(
                    1,
                    str(n) if first else None,
                    f"П{n}?" if first else None,
                    f"варіант {n}{k}",
                    "Б" if first else None,
                    top=y,
                    bottom=y + 10.0,
                    fit=fit,
                )
            )
            y += 10.0
    rows += [
        Row(1, "9", "П9?", "перший", "А", top=y, bottom=y + 10.0, fit=fit),
        Row(1, None, None, "другий", None, top=y + 10.0, bottom=y + 20.0, fit=fit),
        last,
    ]
    foot = Row(3, "10", "П10?", "край сторінки", "А", top=770.0, bottom=780.0, fit=fit)  # the file's foot
    return [*rows, *top_rows, foot, *(Row(3, None, None, o, None, top=780.0, bottom=780.0) for o in "бвг")]


def _rows_at(fit_above: Fit, bottom: float, lead: float) -> list[Row]:
    above = Row(
        1, None, None, "третій варіант, що триває", None, top=bottom - 20.0, bottom=bottom, fit=fit_above
    )
    head = Row(2, "№", "Питання", "Варіанти", "Ключ", top=30.0, bottom=50.0)
    fit = Fit(right=400.0, widest=390.0, last=200.0, lead=lead, space=2.5)
    tops = [
        Row(2, "", "", "далі текст", "", top=50.0, bottom=60.0, fit=fit),
        Row(2, None, None, "п'ятий", None, top=60.0, bottom=70.0, fit=fit),
    ]
    return _mixed_rows(above, [head, *tops])


def test_page_top_rows_in_a_file_of_mixed_counts_go_by_the_print_not_the_count() -> None:
    """Items with 3, 4 and 5 options: a page-top row is a new option where the row above ends short of the
    page's foot (the page broke between rows), or where its first word would have fitted on the line above;
    it is the rest of the option above where the row above reaches the foot and the word could not have
    fitted. Before, the usual count (4) decided: the five-option item 9 was read with four options."""
    above = Fit(right=400.0, widest=390.0, last=380.0, lead=30.0, space=2.5)
    short = reading3.read(_rows_at(above, 700.0, 40.0))[0]
    assert len(short[8].options) == 5 and short[8].unsettled == ""
    fits = reading3.read(_rows_at(dataclasses.replace(above, last=300.0), 780.0, 40.0))[0]
    assert len(fits[8].options) == 5 and fits[8].unsettled == ""
    cut = reading3.read(_rows_at(above, 780.0, 40.0))[0]
    assert len(cut[8].options) == 4 and reading3.squash(cut[8].options[2]).endswith("триваєдалітекст")
    assert cut[9].number == 10 and len(cut[9].options) == 4


def test_a_page_top_row_the_print_does_not_settle_disputes_the_item() -> None:
    """The row above reaches the foot and the first word fits on its last line only without the space
    before it: the print does not say, so the item the paths settled is disputed, naming the page."""
    above = Fit(right=400.0, widest=390.0, last=380.0, lead=30.0, space=2.5)
    rows = _rows_at(above, 780.0, 9.0)
    readings = reading3.read(rows)[0]
    assert "page 2: its first word (9.0 pt) fits the line above (10.0 pt left) only with no space" in (
        readings[8].unsettled
    )
    settled = Item(
        id="v-b-9",
        source="v",
        bank="b",
        number=9,
        question="П9?",
        options=("перший", "другий", "третій варіант, що триває", "далі текст", "п'ятий"),
        key=None,
        status="malformed",
        flags=("invariant",),
        file="f.pdf",
        page=1,
    )
    report = reading3.compare([settled], rows)
    assert report["differ"][0]["fields"] == ["options"]
    assert report["differ"][0]["why"].startswith("page-top rows not settled by the print: page 2")
    assert reading3.dispute([settled], report)[0].status == "disputed"


def test_the_rest_of_a_row_printed_in_the_repeated_header_cell_continues_the_row() -> None:
    """The rest of a row cut by the page break, printed under the header's words in the repeated header's
    option cell, is the rest of the option above whatever the count (a new option begins a row of its own):
    item 9 then has five options. Before, it was a page-top row decided by the usual count of four, and
    the five-option item was read with six."""
    above = Fit(right=400.0, widest=390.0, last=380.0, lead=30.0, space=2.5)
    last = Row(1, None, None, "третій варіант, що", None, top=760.0, bottom=780.0, fit=above)
    fit = Fit(right=400.0, widest=390.0, last=200.0, lead=40.0, space=2.5)
    tops = [
        Row(2, "№", "Питання", "Варіанти\nтриває далі", "Ключ", top=30.0, bottom=60.0, fit=fit),
        Row(2, None, None, "четвертий", None, top=60.0, bottom=70.0, fit=fit),
        Row(2, None, None, "п'ятий", None, top=70.0, bottom=80.0, fit=fit),
    ]
    items = reading3.read(_mixed_rows(last, tops))[0]
    assert len(items[8].options) == 5 and items[8].unsettled == ""
    assert reading3.squash(items[8].options[2]) == "третійваріант,щотриваєдалі"
