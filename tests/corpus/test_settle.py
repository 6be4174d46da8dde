"""Settling the paths' disagreements: the reading that keeps the invariants wins; otherwise disputed."""

from __future__ import annotations

import dataclasses

from hypothesis import given
from hypothesis import strategies as st

from blindmcq.corpus.settle import (
    cut_words,
    dispute_gaps,
    dispute_text,
    failures,
    find_gaps,
    settle,
    text_faults,
)
from blindmcq.datasets.items import Item, invariant_flags
from blindmcq.tasks.probe import sample_items


def item(number: int, options: tuple[str, ...] = ("а", "б", "в", "г"), key: int | None = 0, **kw) -> Item:
    flags = tuple(invariant_flags(options, [] if key is None else [key], 4))
    status = "malformed" if flags else "ok"
    return Item(
        id=f"s-b-{number}",
        source="s",
        bank="b",
        number=number,
        question=kw.pop("question", f"Питання {number}?"),
        options=options,
        key=None if "invariant" in flags else key,
        status=status,
        flags=flags,
        **kw,
    )


def test_agreeing_paths_keep_path_1() -> None:
    (got,) = settle([item(1)], [item(1, question="Питання  1?")], n_options=4)
    assert got == item(1) and got.meta["settled"] == {"path": "both", "why": "the paths agree"}
    assert got.meta["confirmed"] == {"stem": True, "options": True, "key": True}


def test_page_break_swallow_is_settled_by_path_2() -> None:
    """Path 1 gives item 5 the next item's options (7) and loses item 6; path 2 reads both right."""
    first = [item(4), item(5, options=("а", "б", "в", "г", "ґ", "д", "е"), key=None), item(7)]
    second = [item(4), item(5), item(6), item(7)]
    got = settle(first, second, n_options=4)
    assert [i.id for i in got] == ["s-b-4", "s-b-5", "s-b-6", "s-b-7"]
    assert got[1] == item(5) and got[1].status == "ok"
    assert got[1].meta["settled"]["path"] == "rules"
    assert "7 options, expected 4" in got[1].meta["settled"]["why"]
    assert got[2].meta["settled"] == {"path": "rules", "why": "path 1 breaks: not read"}
    assert got[3].meta["settled"]["path"] == "both"


def test_path_1_wins_when_path_2_breaks_the_number_sequence() -> None:
    first = [item(1), item(2, options=("а", "б", "в", "г"))]
    second = [item(1), item(3, options=("а", "б", "в", "г")), item(2, options=("а", "б", "x", "г"))]
    got = {i.id: i for i in settle(first, second, n_options=4)}
    assert got["s-b-2"].meta["settled"]["path"] == "tables"
    assert "number 2 does not follow 3" in got["s-b-2"].meta["settled"]["why"]


def test_both_or_neither_is_disputed_never_silently_path_1() -> None:
    both = settle([item(1, key=0)], [item(1, key=1)], n_options=4)[0]
    assert both.status == "disputed" and both.meta["settled"]["path"] is None
    assert "both readings satisfy" in both.meta["settled"]["why"]
    assert both.meta["readings"]["tables"]["key"] == 0 and both.meta["readings"]["rules"]["key"] == 1
    neither = settle([item(1, options=("а", "б", "в"))], [item(1, options=("а", "б"))], n_options=4)[0]
    assert neither.status == "disputed"
    assert neither.meta["settled"]["why"] == (
        "path 1 breaks: 3 options, expected 4; not exactly one key; "
        "path 2 breaks: 2 options, expected 4; not exactly one key"
    )
    # A disputed item is kept, but never probed by default (Item.usable, used by probe.sample_items).
    assert sample_items([item(2), both, neither], None, 0) == [item(2)]


def test_failures_lists_each_broken_invariant() -> None:
    bad = dataclasses.replace(item(9, options=("а", "", "в", "г"), key=None), question=" ")
    assert failures(bad, 7, 4) == [
        "no stem",
        "not exactly one key",
        "a blank option",
        "number 9 does not follow 7",
    ]
    assert failures(item(8), 7, 4) == [] and failures(None, None, 4) == ["not read"]


def test_fingerprint_changes_with_either_reading() -> None:
    a = settle([item(1, key=0)], [item(1, key=1)], n_options=4)[0].meta["fingerprint"]
    b = settle([item(1, key=0)], [item(1, key=2)], n_options=4)[0].meta["fingerprint"]
    c = settle([item(1, key=0)], [item(1, key=1)], n_options=4)[0].meta["fingerprint"]
    assert a != b and a == c and len(a) == 16


def test_duplicate_numbers_are_disputed_even_when_the_paths_agree() -> None:
    def dup(number: int, k: int, question: str) -> Item:
        it = item(
            number,
            question=question,
            meta={"duplicate_number": {"occurrence": k, "count": 2, "pages": [1, 2]}},
        )
        return dataclasses.replace(it, id=it.id if k == 1 else f"{it.id}~{k}")

    readings = [item(4), dup(5, 1, "А?"), dup(5, 2, "Б?"), item(6)]
    got = settle(readings, list(readings), n_options=4)
    assert [(i.id, i.status) for i in got] == [
        ("s-b-4", "ok"),
        ("s-b-5", "disputed"),
        ("s-b-5~2", "disputed"),
        ("s-b-6", "ok"),
    ]
    assert got[1].meta["settled"] == {"path": None, "why": "item number 5 is printed 2 times (pages [1, 2])"}
    assert got[2].question == "Б?" and got[2].meta["readings"]["rules"]["question"] == "Б?"
    assert [i.id for i in sample_items(got, None, 0)] == ["s-b-4", "s-b-6"]


@given(st.sets(st.integers(1, 60), min_size=1, max_size=40))
def test_gaps_are_exactly_the_numbers_missing_between_printed_ones(printed: set[int]) -> None:
    """Whatever numbers a file prints (a number printed twice counted once), the gaps cover exactly the
    numbers between its lowest and highest that no item carries, each run once, with the ids around it;
    the items beside a gap, and only they, are disputed, with the gap named."""
    items = [item(n) for n in sorted(printed)] + [dataclasses.replace(item(min(printed)), id="x~2")]
    items.sort(key=lambda i: i.number)
    gaps = find_gaps(items)
    missing = set(range(min(printed), max(printed) + 1)) - printed
    assert {n for g in gaps for n in range(g["first"], g["last"] + 1)} == missing
    assert sum(g["count"] for g in gaps) == len(missing)
    for g in gaps:
        assert g["first"] - 1 in printed and g["last"] + 1 in printed
        assert g["ids"] == (
            [f"s-b-{n}" for n in range(g["first"], g["last"] + 1)] if g["count"] <= 20 else []
        )
    out, _ = dispute_gaps(items, {"tables": {}, "rules": {}})
    beside = {g[side] for g in gaps for side in ("after", "before")}
    assert {i.id for i in out if i.status == "disputed"} == beside
    assert all("missing between" in i.meta["settled"]["why"] for i in out if i.id in beside)


def test_text_faults_name_control_and_replacement_characters_only() -> None:
    fine = item(1, options=("перший\tрядок", "другий\nрядок", "пʼяти", "в"))
    assert text_faults(fine) == []
    bad = dataclasses.replace(fine, question="рівноправ\x00я", options=("а", "п\ufffdяти", "в", "г"))
    assert text_faults(bad) == [
        "the stem holds U+0000: a glyph the PDF's font maps to no character",
        "the option 2 holds U+FFFD: the replacement character: text the PDF's font could not decode",
    ]


def test_a_field_ending_in_a_cut_word_is_disputed_only_where_the_item_crosses_a_page() -> None:
    """A stem or option ending in a letter and a hyphen, in an item printed on two pages, is a word the
    page break cut with its rest printed nowhere: disputed with the field and the word in the reason. On
    one page such an ending may be as printed ("це-"), and a dash after a space is no cut word."""
    one_page = item(1, question="Митна справа це-", meta={"pages": [3]})
    dashed = item(2, question="Митна справа -", options=("а", "б -", "в", "г"), meta={"pages": [3, 4]})
    assert cut_words(one_page) == [] and cut_words(dashed) == []
    cut = item(
        3, question="Митна справа це митно-", options=("а", "б", "в\u00ad", "г"), meta={"pages": [3, 4]}
    )
    assert cut_words(cut) == [
        "the stem ends in a word cut by a hyphen ('митно-') and the item runs on to the next page: the rest "
        "of the word not printed after it?",
        "the option 3 ends in a word cut by a hyphen ('в\\xad') and the item runs on to the next page: the "
        "rest of the word not printed after it?",
    ]
    excluded = dataclasses.replace(cut, status="excluded", flags=("excluded",))
    assert cut_words(excluded) == []
    settled = settle([one_page, dashed, cut], [one_page, dashed, cut], n_options=4)
    by_path = {m: {i.id: i for i in (one_page, dashed, cut)} for m in ("tables", "rules")}
    out = dispute_text(settled, {}, by_path)
    assert [i.status for i in out] == ["ok", "ok", "disputed"]
    assert "митно-" in out[2].meta["settled"]["why"]
