"""The assembler's rules on hand-written rows: line joins, numbering, exclusions, errors."""

from __future__ import annotations

import dataclasses

import pytest

from blindmcq.corpus.assemble import assemble, detect_layout, hyphen_vocabulary, join_lines
from blindmcq.corpus.rows import Fit, Row
from blindmcq.corpus.settle import settle
from blindmcq.errors import InputError

HEADER = Row(1, "№", "Питання", "Варіанти відповіді", "Позначка")
R, W = "правильна", "неправильна"


def item_rows(page: int, number: str | None, question: str | None, options: list[str], key: int) -> list[Row]:
    return [
        Row(page, number if i == 0 else None, question if i == 0 else None, o, R if i == key else W)
        for i, o in enumerate(options)
    ]


def build(rows: list[Row]):
    return assemble([HEADER, *rows], source="vkks", bank="t", file="vkks-t.pdf")


@pytest.mark.parametrize(
    ("text", "vocab", "want"),
    [
        ("митних орган-\nами надано", set(), "митних органами надано"),
        ("Прем'єр-міністр, віце-прем'єр-\nміністри", set(), "Прем'єр-міністр, віце-прем'єрміністри"),
        ("віце-прем'єр-\nміністри", {"прем'єр-міністри"}, "віце-прем'єр-міністри"),
        ("Північно-\nЗахідний регіон", set(), "Північно-Західний регіон"),
        ("перший рядок\nдругий  рядок ", set(), "перший рядок другий рядок"),
        ("тощо -\nі так далі", set(), "тощо - і так далі"),
        ("публічно- правових", set(), "публічно- правових"),
        ("", set(), ""),
    ],
)
def test_join_lines(text: str, vocab: set[str], want: str) -> None:
    assert join_lines(text, vocab) == want


def test_vocabulary_collects_pairs_printed_whole() -> None:
    rows = [Row(1, "1", "Прем'єр-міністр України, віце-прем'єр-", "а-б-в, цивільно-правова", None)]
    assert hyphen_vocabulary(rows) == {"прем'єр-міністр", "віце-прем'єр", "а-б", "б-в", "цивільно-правова"}


def test_merged_number_cell_feeds_the_next_stem() -> None:
    rows = item_rows(1, "7\n8", "Перше?", ["а", "б", "в", "г"], 0) + item_rows(
        1, None, "Друге?", list("ґдеє"), 3
    )
    first, second = build(rows)
    assert (first.number, second.number) == (7, 8)
    assert first.flags == () and second.flags == ("recovered_merge",)
    assert "number_inferred" not in second.meta and second.key == 3 and second.status == "ok"


def test_missing_number_is_inferred_and_flagged() -> None:
    rows = item_rows(1, "7", "Перше?", list("абвг"), 0) + item_rows(1, None, "Друге?", list("ґдеє"), 1)
    _, second = build(rows)
    assert second.id == "vkks-t-8" and second.meta["number_inferred"] is True


def test_page_continuation_and_marks() -> None:
    rows = [
        *item_rows(1, "3", "Питання?", ["а", "б"], 5),
        HEADER,
        Row(2, "", "", "в", R),
        Row(2, None, None, "г", W),
    ]
    (item,) = build(rows)
    assert item.options == ("а", "б", "в", "г") and item.key == 2 and item.meta["pages"] == [1, 2]


def test_excluded_note_in_mark_cell_leaves_no_key() -> None:
    rows = [
        Row(1, "4", "Питання?", "а", "Виключено рішенням\nКомісії від 1.01.2020"),
        Row(1, None, None, "б", None),
        Row(1, None, None, "в", None),
        Row(1, None, None, "г", None),
    ]
    (item,) = build(rows)
    assert item.status == "excluded" and item.key is None
    assert item.flags == ("excluded", "invariant")
    assert item.meta["excluded_note"] == "Виключено рішенням Комісії від 1.01.2020"


def test_malformed_items_kept_as_printed() -> None:
    rows = item_rows(1, "1", "П?", ["а", "", "в", "г"], 0) + item_rows(1, "2", "П?", list("абвгґ"), 0)
    rows += [*item_rows(1, "3", "П?", list("аабв"), 1)]
    rows += [Row(1, "4", "П?", "а", R), Row(1, None, None, "б", R), Row(1, None, None, "в", W)]
    blank, five, dup, two = build(rows)
    assert (blank.status, blank.flags, blank.options[1]) == ("malformed", ("blank_option",), "")
    assert (five.key, five.flags) == (None, ("invariant",))
    assert (dup.key, dup.flags) == (1, ("duplicate_options",))
    assert (two.key, two.flags, two.status) == (None, ("invariant",), "malformed")


def test_duplicate_number_keeps_every_occurrence_for_dispute() -> None:
    """A repeated number no longer stops the file: both items are kept, ids unique, marked for dispute."""
    rows = item_rows(1, "5", "А?", list("абвг"), 0) + item_rows(2, "5", "Б?", list("абвг"), 1)
    rows += item_rows(2, "6", "В?", list("абвг"), 2)
    first, second, six = build(rows)
    assert [first.id, second.id, six.id] == ["vkks-t-5", "vkks-t-5~2", "vkks-t-6"]
    assert (first.number, first.question, second.number, second.question) == (5, "А?", 5, "Б?")
    assert first.meta["duplicate_number"] == {"occurrence": 1, "count": 2, "pages": [1, 2]}
    assert second.meta["duplicate_number"] == {"occurrence": 2, "count": 2, "pages": [1, 2]}
    assert "duplicate_number" not in six.meta


def test_bad_number_cell_and_orphan_rows_name_the_page() -> None:
    with pytest.raises(InputError, match=r"page 3: number cell 'x1'"):
        build(item_rows(3, "x1", "А?", list("абвг"), 0))
    with pytest.raises(InputError, match=r"page 1: table row before any item number"):
        build([Row(1, "", "", "а", W)])


def test_header_by_structure_and_number_forms() -> None:
    header = Row(1, "№ з/п", "Зміст питання", "Відповіді", "Відмітка")
    rows = [header, *item_rows(1, "1.", "А?", list("абвг"), 0), *item_rows(1, "2)", "Б?", list("абвг"), 1)]
    rows += [Row(2, "№ з/п", "Зміст  питання", "Відповіді", "Відмітка")]  # repeated on the next page
    rows += item_rows(2, "№ 3", "В?", list("абвг"), 2)
    items = assemble(rows, source="vkks", bank="t", file="vkks-t.pdf")
    assert [(i.number, i.key, i.status) for i in items] == [(1, 0, "ok"), (2, 1, "ok"), (3, 2, "ok")]
    layout = detect_layout(rows, "vkks-t.pdf")
    assert layout.header == ("№ з/п", "Зміст питання", "Відповіді", "Відмітка")
    assert layout.number_forms == ("1.", "1)", "№ 1") and layout.fourth == "mark"


@pytest.mark.parametrize(
    ("right", "wrong"),
    [("ПРАВИЛЬНА", "Неправильна"), ("прави-\nльна", "не\nправильна"), (" правильна ", "непра вильна")],
)
def test_mark_words_any_case_spaces_and_breaks(right: str, wrong: str) -> None:
    rows = [
        Row(1, None if k else "1", None if k else "А?", o, right if k == 2 else wrong)
        for k, o in enumerate("абвг")
    ]
    (item,) = assemble(rows, source="vkks", bank="t", file="f.pdf")
    assert (item.key, item.status) == (2, "ok")


def test_key_column() -> None:
    rows = [HEADER]
    for n, key in ((1, "Б"), (2, "3"), (3, "а, в")):
        rows += [
            Row(1, None if k else str(n), None if k else "П?", o, None if k else key)
            for k, o in enumerate("абвг")
        ]
    one, two, three = build(rows)
    assert (one.key, two.key, three.key, three.flags) == (1, 2, None, ("invariant",))


def test_row_split_by_a_page_break_continues_the_option() -> None:
    rows = [
        *item_rows(1, "1", "А?", ["а", "б", "в", "перша частина"], 3),
        HEADER,
        Row(2, "", "", "друга", ""),
    ]
    rows += item_rows(2, "2", "Б?", list("абвг"), 0)
    first, second = build(rows)
    assert first.options[3] == "перша частина друга" and first.meta["pages"] == [1, 2]
    assert second.number == 2 and second.status == "ok"


def test_unknown_mark_word_names_the_page() -> None:
    rows = [Row(4, None if k else "1", "А?", o, "можливо" if k else "так") for k, o in enumerate("абвг")]
    with pytest.raises(InputError, match=r"page 4: fourth-column cell 'можливо' is neither a mark"):
        build(rows)


def test_a_few_unread_mark_cells_dispute_their_items_and_the_rest_is_read() -> None:
    """An option's text run on into its mark cell ("правильна\nзаходів") is no mark and no key: where such
    cells are at most 1% of the file's, each item holding one is disputed with the cell in the reason and
    the others are read; more of them, and the file stops naming the page, as before."""
    rows = [r for n in range(1, 101) for r in item_rows(1 + n // 10, str(n), f"П{n}?", list("абвг"), n % 4)]
    run_on = {7: 2, 40: 0, 41: 0}  # item number -> option whose mark cell holds the run-on text
    for n, opt in run_on.items():
        k = 4 * (n - 1) + opt
        rows[k] = dataclasses.replace(rows[k], mark=rows[k].mark + "\nзаходів")
    items = build(rows)
    layout = detect_layout([HEADER, *rows], "vkks-t.pdf")
    assert layout.fourth == "mark" and layout.unread == ("неправильназаходів", "правильназаходів")
    assert layout.to_json()["unread_marks"] == list(layout.unread)
    doubted = {i.number: i.meta["ambiguous"] for i in items if "ambiguous" in i.meta}
    assert set(doubted) == set(run_on)
    assert all("заходів" in why and "neither a mark nor an option key" in why for why in doubted.values())
    settled = settle(items, items, n_options=4)
    assert {i.number for i in settled if i.status == "disputed"} == set(run_on)
    assert all(i.status == "ok" and i.key == i.number % 4 for i in settled if i.number not in run_on)
    for n in (50, 60):  # five such cells of 400: more than 1%, the fourth column is not read
        k = 4 * (n - 1)
        rows[k] = dataclasses.replace(rows[k], mark=rows[k].mark + "\nзаходів")
    with pytest.raises(InputError, match=r"page \d+: fourth-column cell '(не)?правильна\\nзаходів'"):
        build(rows)


KEY_HEADER = Row(1, "№", "Питання", "Варіанти відповіді", "Ключ")


def key_rows(page: int, number: str, question: str, options: list[str], key: str) -> list[Row]:
    return [
        Row(page, number if i == 0 else None, question if i == 0 else None, o, key if i == 0 else None)
        for i, o in enumerate(options)
    ]


def build_key(rows: list[Row], n_options: int | None = 4):
    return assemble([KEY_HEADER, *rows], source="vkks", bank="t", file="vkks-t.pdf", n_options=n_options)


def page_top(page: int, option: str) -> Row:
    """The first row of a page inside an item, in a key column: new empty number, stem and key cells."""
    return Row(page, "", "", option, "")


def test_key_column_row_split_by_the_page_break_is_disputed_not_guessed() -> None:
    """Five options as printed, four expected: the page-top row may be the rest of the option above, or
    a fifth option of a malformed item; the print does not tell, so the item is disputed (never wrong)."""
    rows = key_rows(1, "1", "П?", ["перша", "друга довга від-"], "2")
    rows += [
        page_top(2, "повідь далі"),
        Row(2, None, None, "третя", None),
        Row(2, None, None, "четверта", None),
    ]
    rows += key_rows(2, "2", "Д?", list("абвг"), "1")
    one, two = build_key(rows)
    assert one.meta["ambiguous"] == (
        "a row at the top of page(s) [2] is a new option or the rest of the one above: "
        "5 options as printed, 4 expected; "
        "not joined: page 2: the row above does not reach the foot of its page"
    )
    assert len(one.options) == 5 and one.meta["pages"] == [1, 2]
    (settled, _) = settle([one, two], [one, two], n_options=4)
    assert settled.status == "disputed" and settled.meta["readings"]["tables"]["options"] == list(one.options)
    assert "ambiguous" not in two.meta and two.options == tuple("абвг")


def test_key_column_page_break_between_options_keeps_them() -> None:
    rows = key_rows(1, "1", "П?", ["перша", "друга"], "3")
    rows += [page_top(2, "третя"), Row(2, None, None, "четверта", None)]
    (one,) = build_key(rows)
    assert one.options == ("перша", "друга", "третя", "четверта") and one.key == 2
    assert "ambiguous" not in one.meta


def test_key_column_page_break_that_no_reading_explains_is_disputed() -> None:
    """Six options as printed (a malformed item, or two split rows?): no reading gives four; disputed."""
    rows = [*key_rows(1, "1", "П?", ["а", "б", "в", "г", "ґ"], "2"), page_top(2, "д")]
    (one,) = build_key(rows)
    assert one.meta["ambiguous"].startswith("a row at the top of page(s) [2] is a new option or the rest")
    (settled,) = settle([one], [one], n_options=4)
    assert settled.status == "disputed" and settled.meta["settled"]["path"] is None
    # Without an expected number of options nothing tells the two readings apart.
    rows = [*key_rows(1, "1", "П?", ["а", "б"], "2"), page_top(2, "в")]
    (free,) = build_key(rows, n_options=None)
    assert "no expected number of options" in free.meta["ambiguous"]
    assert settle([free], [free], n_options=None)[0].status == "disputed"


def test_mark_column_with_every_option_marked_is_not_ambiguous() -> None:
    """Where wrong options carry a word, a page-top row without one is a continuation (joined, no doubt)."""
    rows = [*item_rows(1, "1", "П?", ["а", "б"], 0), Row(2, "", "", "далі", "")]
    rows += [Row(2, None, None, "в", W), Row(2, None, None, "г", W)]
    (one,) = build(rows)
    assert one.options == ("а", "б далі", "в", "г") and "ambiguous" not in one.meta


def test_two_and_three_row_headers_are_found_and_skipped_on_every_page() -> None:
    """A spanning "№" with sub-headers under it, then the column numbers 1 2 3 4; repeated on page 2."""
    head = [
        Row(1, "№\nз/п", "Зміст питання", "Варіанти", "Позначка"),
        Row(1, None, None, "відповідей", "правильності"),
        Row(1, "1", "2", "3", "4"),
    ]
    rows = head + item_rows(1, "1.", "А?", list("абвг"), 0)
    rows += [dataclasses.replace(r, page=2) for r in head] + item_rows(2, "2.", "Б?", list("абвг"), 3)
    layout = detect_layout(rows, "vkks-t.pdf")
    assert layout.header == ("№ з/п", "Зміст питання", "Варіанти", "Позначка")
    assert layout.more_header == (("", "", "відповідей", "правильності"), ("1", "2", "3", "4"))
    assert layout.to_json()["more_header_rows"] == [
        ["", "", "відповідей", "правильності"],
        ["1", "2", "3", "4"],
    ]
    one, two = assemble(rows, source="vkks", bank="t", file="vkks-t.pdf")
    assert (one.number, one.question, one.options, one.key) == (1, "А?", tuple("абвг"), 0)
    assert (two.number, two.question, two.options, two.key) == (2, "Б?", tuple("абвг"), 3)
    # A one-row header records no more rows (verification.json as before).
    assert (
        "more_header_rows"
        not in detect_layout([HEADER, *item_rows(1, "1", "А?", list("абвг"), 0)], "f").to_json()
    )


def test_rows_under_the_header_that_could_be_item_rows_are_not_header_rows() -> None:
    """A row of its own number cell, or with a mark in the fourth cell, stays a body row (an error here)."""
    for orphan in (Row(1, "", "", "текст", ""), Row(1, None, None, "текст", W)):
        rows = [HEADER, orphan, *item_rows(1, "1", "А?", list("абвг"), 0)]
        assert detect_layout(rows, "f").more_header == ()
        with pytest.raises(InputError, match=r"page 1: table row before any item number"):
            assemble(rows, source="vkks", bank="t", file="f")


# A key column printed on pages whose table body ends at 780 pt; option cells span x 100..300 and their
# longest line ends at 296 (the cell's padding lies beyond).
FOOT, RIGHT, WIDEST = 780.0, 300.0, 296.0


def placed(row: Row, top: float, bottom: float, last: float, lead: float) -> Row:
    return dataclasses.replace(row, top=top, bottom=bottom, fit=Fit(RIGHT, WIDEST, last, lead))


def split_item(
    *, above_bottom: float = FOOT, last: float = 290.0, lead: float = 30.0, key: str = "2", tail="ення"
):
    """Item 1: options 'перша', 'друга ... вивез-' (the last row of page 1), then at the top of page 2 the
    row ``tail``, then two more options; item 2 fills page 2 down to the foot, so the file's foot is FOOT."""
    first = key_rows(1, "1", "П?", ["перша", "друга, тимчасового вивез-"], key)
    rows = [placed(first[0], 600, 640, 200, 40), placed(first[1], 640, above_bottom, last, 60)]
    rows += [
        placed(page_top(2, tail), 60, 80, 150, lead),
        placed(Row(2, None, None, "третя", None), 80, 100, 150, 40),
        placed(Row(2, None, None, "четверта", None), 100, 120, 150, 50),
    ]
    second = key_rows(2, "2", "Д?", list("абвг"), "1")
    rows += [placed(r, 120 + 20 * k, 140 + 20 * k if k < 3 else FOOT, 150, 10) for k, r in enumerate(second)]
    return rows


def test_key_column_row_split_by_the_page_break_is_joined_when_the_print_says_so() -> None:
    """Five options as printed, four expected, and the print agrees: the row above fills page 1 to its foot,
    and the page-top row's first word (30 pt) is wider than the room left on the line above (6 pt), so a
    typesetter could only have put it on the next page. Joined (soft hyphen undone), key kept, both
    paths agree: settled, not disputed."""
    one, two = build_key(split_item())
    assert one.options == ("перша", "друга, тимчасового вивезення", "третя", "четверта")
    assert one.key == 1 and one.status == "ok" and "ambiguous" not in one.meta
    assert one.meta["joined_rows"] == [{"page": 2, "option": 2}]
    first, _ = settle([one, two], [one, two], n_options=4)
    assert first.status == "ok" and first.meta["settled"]["path"] == "both"


@pytest.mark.parametrize("whole_row_at_foot", [False, True])
def test_a_row_near_the_foot_is_no_sign_of_a_split_where_a_whole_row_ends_at_the_foot(
    whole_row_at_foot: bool,
) -> None:
    """Item 1 breaks between its third and fourth options; its third option's row ends 0.5 pt above the
    lowest row edge (within the foot's tolerance) and the page-top row's first word could not have fitted
    on the line above, so the print seems to say "the rest of the option above" against the count of 4: a
    dispute. Where a row the print shows whole (the next page opens with a numbered item) ends exactly at
    that lowest edge, the foot is where whole rows happen to end, so reaching it is no sign of a split:
    the row is the fourth option, as the count says."""
    first = key_rows(1, "1", "П?", ["перша", "друга", "третя"], "2")
    rows = [placed(first[0], 600, 640, 200, 40), placed(first[1], 640, 700, 150, 40)]
    rows += [placed(first[2], 700, FOOT - 0.5, 290, 40), placed(page_top(2, "четверта"), 60, 80, 150, 30)]
    second = key_rows(2, "2", "Д?", list("абвг"), "1")
    rows += [placed(r, 80 + 20 * k, 100 + 20 * k if k < 3 else FOOT, 150, 10) for k, r in enumerate(second)]
    if whole_row_at_foot:  # page 3 opens with item 3: item 2's last row on page 2 was whole
        rows += [
            placed(r, 60 + 20 * k, 80 + 20 * k, 150, 10)
            for k, r in enumerate(key_rows(3, "3", "Т?", list("абвг"), "3"))
        ]
    one, *_ = build_key(rows)
    assert one.options == ("перша", "друга", "третя", "четверта") and one.meta["pages"] == [1, 2]
    if whole_row_at_foot:
        assert "ambiguous" not in one.meta and one.key == 1 and one.status == "ok"
    else:
        assert "continue the option above" in one.meta["ambiguous"]


@pytest.mark.parametrize(
    ("change", "why"),
    [
        ({"above_bottom": 700.0}, "the row above does not reach the foot of its page"),
        ({"lead": 5.0}, "its first word (5.0 pt) would have fitted on the line above (6.0 pt left)"),
        (
            {"last": 200.0, "lead": 60.0},
            "its first word (60.0 pt) would have fitted on the line above (96.0 pt",
        ),
        ({"key": "5"}, "a printed key points past option 4"),
        ({"tail": "Наступне речення"}, None),
    ],
)
def test_key_column_look_alike_of_a_split_row_is_not_joined_but_disputed(
    change: dict, why: str | None
) -> None:
    """An item printed with five options whose fifth starts page 2 looks like a split row; where any of the
    print's evidence speaks against the join, the item keeps its five options and is disputed."""
    one, _ = build_key(split_item(**change))
    if why is None:  # the sentence test: the row above must end a sentence for the veto to apply
        assert "ambiguous" not in one.meta and len(one.options) == 4
        rows = split_item(**change)
        rows[1] = dataclasses.replace(rows[1], option="друга закінчена.")
        one, _ = build_key(rows)
        why = "the row above ends a sentence and the row starts one"
    assert len(one.options) == 5 and "joined_rows" not in one.meta
    assert one.meta["ambiguous"].startswith("a row at the top of page(s) [2] is a new option or the rest")
    assert why in one.meta["ambiguous"]
    (settled,) = [i for i in settle([one], [one], n_options=4) if i.number == 1]
    assert settled.status == "disputed" and settled.meta["settled"]["path"] is None


def test_key_column_join_needs_both_paths() -> None:
    """Path 1 joins, path 2 (whose geometry speaks against it) does not: the item is disputed, not path 1."""
    joined, two = build_key(split_item())
    kept, _ = build_key(split_item(lead=5.0))
    assert len(joined.options) == 4 and len(kept.options) == 5
    first = settle([joined, two], [kept, two], n_options=4)[0]
    assert first.status == "disputed" and first.meta["settled"]["path"] is None


def mark_rows(marks: tuple[str, str], keys: list[int]) -> list[Row]:
    rows = [HEADER]
    for n, key in enumerate(keys, 1):
        rows += [
            Row(1, None if k else str(n), None if k else f"П{n}?", o, marks[0] if k == key else marks[1])
            for k, o in enumerate("абвг")
        ]
    return rows


@pytest.mark.parametrize(
    ("marks", "vocabulary", "every"),
    [(("1", ""), "score", False), (("1", "0"), "score", True), (("*", ""), "star", False)],
)
def test_score_and_star_columns_are_read_as_marks(
    marks: tuple[str, str], vocabulary: str, every: bool
) -> None:
    """A fourth column of "1" in the key's row (blank or "0" elsewhere), or "*": marks, not option keys
    (read as a key column, "1" gave every item key 0)."""
    from blindmcq.corpus.assemble import mark_values

    keys = [2, 0, 3, 1, 1]
    rows = mark_rows(marks, keys)
    layout = detect_layout(rows, "f.pdf")
    assert (layout.fourth, layout.vocabulary, layout.marks_every_option) == ("mark", vocabulary, every)
    items = build(rows[1:])
    assert [i.key for i in items] == keys and {i.status for i in items} == {"ok"}
    values = mark_values(rows, layout)
    assert values[marks[0]] == {"count": 5, "means": "right"}
    assert values[marks[1]]["count"] == 15 and values[marks[1]]["means"].startswith(
        "wrong" if marks[1] else "blank"
    )
    assert layout.to_json()["mark_vocabulary"] == vocabulary


def test_a_key_column_of_ones_on_first_rows_stays_a_key_column() -> None:
    rows = [HEADER]
    for n in (1, 2):
        rows += [
            Row(1, None if k else str(n), None if k else "П?", o, None if k else "1")
            for k, o in enumerate("абвг")
        ]
    assert detect_layout(rows, "f.pdf").fourth == "key"
    assert [i.key for i in build(rows[1:])] == [0, 0]


def test_printed_option_labels_are_stripped_and_recorded() -> None:
    rows = item_rows(1, "1", "П1?", ["А) перша", "Б) друга", "В) третя", "Г) четверта"], 1)
    rows += item_rows(1, "2", "П2?", ["A. one", "B. two", "C. three", "D. four"], 0)
    rows += item_rows(1, "3", "П3?", ["1) один", "2) два", "3) три", "4) чотири"], 3)
    one, two, three = build(rows)
    assert one.options == ("перша", "друга", "третя", "четверта") and one.status == "ok"
    assert one.meta["option_labels"] == ["А)", "Б)", "В)", "Г)"] and "ambiguous" not in one.meta
    assert two.options == ("one", "two", "three", "four") and three.options[3] == "чотири"


@pytest.mark.parametrize(
    ("options", "why"),
    [
        (["А) а", "В) б", "Б) в", "Г) г"], "out of sequence"),
        (["А) а", "Б)", "В) в", "Г) г"], "option 2 is printed as its label alone ('Б)')"),
        (["А) а", "б", "В) в", "Г) г"], "option(s) [2] carry no printed label"),
        (["А) а", "Б. б", "В) в", "Г) г"], "out of sequence"),
    ],
)
def test_option_labels_that_leave_the_item_in_doubt_dispute_it(options: list[str], why: str) -> None:
    rows = item_rows(1, "1", "П1?", ["А) а", "Б) б", "В) в", "Г) г"], 0)
    rows += item_rows(1, "2", "П2?", options, 0)
    first, second = build(rows)
    assert "ambiguous" not in first.meta and why in second.meta["ambiguous"]
    (settled,) = [i for i in settle([second], [second], n_options=4)]
    assert settled.status == "disputed"


def test_duplicate_options_differing_only_by_label_are_flagged() -> None:
    (item,) = build(item_rows(1, "1", "П?", ["А) так", "Б) так", "В) ні", "Г) можливо"], 0))
    assert item.flags == ("duplicate_options",) and item.status == "malformed"


def test_a_few_options_that_begin_like_a_label_are_left_alone() -> None:
    rows = item_rows(1, "1", "П1?", ["1) перше, 2) друге", "лише друге", "жодне", "обидва"], 0)
    (item,) = build(rows)
    assert item.options[0] == "1) перше, 2) друге" and "option_labels" not in item.meta


def test_three_option_item_whose_third_option_breaks_across_the_page_is_disputed_not_four() -> None:
    """Options 'перша', 'друга', 'третя ... вивез-' + page-top 'ення': four rows, four expected, but the
    print says the page-top row is the rest of the third (the row above fills page 1, the first word could
    not have fitted above). Read as four options (key 3, ok) before; now disputed."""
    first = key_rows(1, "1", "П?", ["перша", "друга", "третя, тимчасового вивез-"], "3")
    rows = [
        placed(first[0], 600, 620, 200, 40),
        placed(first[1], 620, 640, 200, 40),
        placed(first[2], 640, FOOT, 290, 60),
        placed(page_top(2, "ення"), 60, 80, 150, 30),
    ]
    second = key_rows(2, "2", "Д?", list("абвг"), "1")
    rows += [placed(r, 80 + 20 * k, 100 + 20 * k if k < 3 else FOOT, 150, 10) for k, r in enumerate(second)]
    one, two = build_key(rows)
    assert (
        "the print says the row(s) at the top of page(s) [2] continue the option above"
        in one.meta["ambiguous"]
    )
    assert "ambiguous" not in two.meta
    (settled,) = [i for i in settle([one, two], [one, two], n_options=4) if i.number == 1]
    assert settled.status == "disputed"
    # A first word that would only just have fitted above (3 pt of 6 pt left, the space not counted) is no
    # proof of a new option: still disputed. One that fits with room for a space is a new option, as before.
    rows[3] = placed(page_top(2, "ення"), 60, 80, 150, 3)
    one, _ = build_key(rows)
    assert "continue the option above" in one.meta["ambiguous"]
    rows[3] = placed(page_top(2, "ення"), 60, 80, 150, 1)
    one, _ = build_key(rows)
    assert len(one.options) == 4 and "ambiguous" not in one.meta


def stem_split_rows(continuation: str, above_bottom: float | None) -> list[Row]:
    """Item 1's stem cell runs past page 1 (its option rows end at ``above_bottom``); page 2 repeats the
    header and continues the stem beside options в and г; item 2 follows and ends at the page foot."""
    rows = [
        dataclasses.replace(r, top=600.0 + 20 * k, bottom=above_bottom if k == 1 else 620.0)
        for k, r in enumerate(item_rows(1, "1", "Початок питання,", ["а", "б"], 0))
    ]
    rows += [
        dataclasses.replace(HEADER, page=2, top=40.0, bottom=60.0),
        Row(2, "", continuation, "в", W, top=60.0, bottom=80.0),
        Row(2, None, None, "г", W, top=80.0, bottom=100.0),
    ]
    rows += [
        dataclasses.replace(r, top=100.0 + 20 * k, bottom=FOOT if k == 3 else 120.0 + 20 * k)
        for k, r in enumerate(item_rows(2, "2", "Друге?", list("абвг"), 1))
    ]
    return rows


def test_stem_continued_at_a_page_top_is_joined_when_the_print_says_so() -> None:
    """Before, the page-top stem text became a made-up item 2 (number inferred) and the real item 2 was
    "printed 2 times". Now it is the rest of item 1's stem: joined (the row above fills page 1, the text
    starts lower-case), or kept in the stem and disputed where the print does not say so."""
    one, two = build(stem_split_rows("закінчення питання?", FOOT))
    assert one.question == "Початок питання, закінчення питання?" and one.options == tuple("абвг")
    assert one.meta["joined_stem"] == [2] and "ambiguous" not in one.meta and one.status == "ok"
    assert two.number == 2 and "duplicate_number" not in two.meta
    for continuation, bottom, why in (
        ("закінчення питання?", 700.0, "the row above does not reach the foot of its page"),
        ("Закінчення питання?", FOOT, "it starts with a capital"),
    ):
        one, two = build(stem_split_rows(continuation, bottom))
        assert len(one.options) == 4 and two.number == 2 and "duplicate_number" not in two.meta
        assert one.meta["ambiguous"] == (
            f"stem text at the top of page 2 with no item number, not joined: {why}"
        )
        first, second = settle([one, two], [one, two], n_options=4)
        assert first.status == "disputed" and second.status == "ok"


def test_the_space_before_the_first_word_counts_where_it_was_printed() -> None:
    """The first word (5 pt) fits in the 6 pt left on the line above, but not with the space the cell above
    prints between its words (2.5 pt): a typesetter could not have put it there, and the row is joined.
    Without a measured space (0), the word alone decides, as before: disputed."""

    def spaced(rows: list[Row], space: float) -> list[Row]:
        return [
            dataclasses.replace(r, fit=dataclasses.replace(r.fit, space=space)) if r.fit else r for r in rows
        ]

    one, _ = build_key(spaced(split_item(lead=5.0), 2.5))
    assert len(one.options) == 4 and one.meta["joined_rows"] == [{"page": 2, "option": 2}]
    one, _ = build_key(spaced(split_item(lead=3.0), 2.5))
    assert len(one.options) == 5
    assert (
        "its first word (3.0 pt) with the space before it (2.5 pt) would have fitted" in one.meta["ambiguous"]
    )
    one, _ = build_key(spaced(split_item(lead=5.0), 0.0))
    assert len(one.options) == 5 and "ambiguous" in one.meta


def test_fit_measures_the_printed_space() -> None:
    from blindmcq.corpus.rows import fit_of

    words = [
        {"text": "перше", "x0": 100.0, "x1": 130.0, "top": 10.0},
        {"text": "слово", "x0": 132.5, "x1": 160.0, "top": 10.0},
        {"text": "далі", "x0": 100.0, "x1": 120.0, "top": 21.0},
    ]
    fit = fit_of(words, 300.0, words=True)
    assert fit is not None and fit.space == pytest.approx(2.5) and fit.lead == 30.0
    assert fit_of(words[2:], 300.0, words=True).space == 0.0


def test_a_line_end_hyphen_the_file_prints_both_ways_is_disputed() -> None:
    """'веб-' at a line end then 'сайті': the file prints 'веб-сайті' and 'вебсайті' elsewhere, so the hyphen
    may be hard or soft; the item is disputed, not guessed. With only one form printed, it is joined."""
    other = item_rows(2, "2", "Б?", ["веб-сайті", "вебсайті", "в", "г"], 0)
    rows = [HEADER, *item_rows(1, "1", "А?", ["на веб-\nсайті", "б", "в", "г"], 0), *other]
    one, _ = assemble(rows, source="v", bank="b", file="f.pdf")
    assert "a line-end hyphen in 'веб-сайті'" in one.meta["ambiguous"]
    settled, _ = settle([one, _], [one, _], n_options=4)
    assert settled.status == "disputed"
    alone = [HEADER, *item_rows(1, "1", "А?", ["на веб-\nсайті", "б", "в", "г"], 0)]
    alone += item_rows(2, "2", "Б?", ["веб-сайті", "д", "в", "г"], 0)
    one, _ = assemble(alone, source="v", bank="b", file="f.pdf")
    assert one.options[0] == "на веб-сайті" and "ambiguous" not in one.meta


def test_each_layout_section_has_its_own_page_foot() -> None:
    """Pages of one size whose option column ends at one border are a section, its foot the lowest row
    edge on its pages (a portrait and a landscape section: each its own); a page without option text
    belongs to the section of the page before it."""
    from blindmcq.corpus.assemble import _Sheet

    def row(page: int, bottom: float, right: float | None) -> Row:
        fit = Fit(right=right, widest=right - 5, last=right - 50, lead=20) if right else None
        return Row(
            page, "1", "Питання", "варіант" if right else None, "", top=bottom - 30, bottom=bottom, fit=fit
        )

    rows = [row(1, 773, 489), row(2, 735, 489), row(3, 533, 612), row(4, 520, 612), row(5, 400, None)]
    sizes = {1: (595.3, 841.9), 2: (595.3, 841.9), 3: (841.9, 595.3), 4: (841.9, 595.3), 5: (841.9, 595.3)}
    sheet = _Sheet.of(rows, sizes)
    assert [sheet.foot(p) for p in range(1, 6)] == [773, 773, 533, 533, 533]
    assert sheet.bottom == 773 and sheet.foot(9) is None
    # the same sizes, the option column elsewhere from page 3 (another office's table): sections still
    assert [_Sheet.of(rows, {p: (595.3, 841.9) for p in sizes}).foot(p) for p in (2, 4)] == [773, 533]
