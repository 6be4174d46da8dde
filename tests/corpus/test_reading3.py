"""The third reading: its own header, column, mark and page-top rules; it disputes what it reads otherwise."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

from blindmcq.corpus import reading3
from blindmcq.corpus.assemble import KEY, assemble, detect_layout
from blindmcq.corpus.rows import Row

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
