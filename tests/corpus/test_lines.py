"""The line reading (lines.py + reading3): independent of the paths' layout code, and a check on them."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest
from corpus_support import items_json

import blindmcq
from blindmcq.corpus import assemble as assemble_module
from blindmcq.corpus import extract as extract_module
from blindmcq.corpus import lines, reading3
from blindmcq.corpus.extract import extract_items
from blindmcq.corpus.lines import LinesError, PageText, file_rows
from blindmcq.corpus.variants import BY_NAME, customs_records, render_variant

SRC = Path(blindmcq.__file__).resolve().parent
# The modules that decide the first reading's layout: cells (paths 1 and 2), header, columns, page breaks,
# exclusions (assemble), and who wins (settle).
FIRST_READING = {
    "blindmcq.corpus.assemble",
    "blindmcq.corpus.path_tables",
    "blindmcq.corpus.path_rules",
    "blindmcq.corpus.settle",
    "blindmcq.corpus.pages",
}


def closure(module: str) -> set[str]:
    """Every blindmcq module ``module`` imports, directly or through others (read from the source)."""
    seen: set[str] = set()
    todo = [module]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        path = SRC.parent / (name.replace(".", "/") + ".py")
        if not path.exists():
            path = path.with_suffix("") / "__init__.py"
        if not path.exists():
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("blindmcq"):
                todo.append(node.module)
                todo += [f"{node.module}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                todo += [a.name for a in node.names if a.name.startswith("blindmcq")]
    return seen


@pytest.mark.parametrize("module", ["blindmcq.corpus.lines", "blindmcq.corpus.reading3"])
def test_the_line_reading_imports_nothing_of_the_first(module: str) -> None:
    found = closure(module)
    assert module in found and not found & FIRST_READING, found & FIRST_READING


def test_the_closure_check_can_fail() -> None:
    assert "blindmcq.corpus.assemble" in closure("blindmcq.corpus.extract")


def _page(words: list[tuple[float, float, float, str]], rules: list[float]) -> PageText:
    """A page from (x0, x1, top, text) words, 9 pt high, and full-width horizontal rules at ``rules``."""
    ws = [(x0, x1, top, top + 9.0, text) for x0, x1, top, text in words]
    return PageText(1, 595.0, ws, [(y, 36.0, 560.0) for y in rules])


def test_a_table_framed_only_still_splits_into_rows() -> None:
    """No inner rules at all: rows begin where an option or mark block begins (more than a pitch apart)."""
    words = [(40, 48, 52, "№"), (80, 120, 52, "Питання"), (300, 380, 52, "Варіанти"), (500, 540, 52, "Ключ")]
    top = 72.0
    for n in (1, 2):
        words += [(40, 46, top, str(n)), (80, 200, top, "Питання"), (80, 150, top + 11, "далі")]
        for k, opt in enumerate(("перший", "другий", "третій")):
            words += [(300, 360, top + 17 * k, opt), (500, 510, top + 17 * k, "*" if k == n else "")]
        words += [(300, 340, top + 17 * 2 + 11, "кінець")]
        top += 17 * 3 + 11 + 6
    words = [w for w in words if w[3]]
    rows, info = file_rows([_page(words, [46.0, top])], "f.pdf")
    assert info["pitch"] == 11.0
    assert [r.option for r in rows] == ["Варіанти", *(["перший", "другий", "третій\nкінець"] * 2)]
    items, how = reading3.read(rows)
    assert how.startswith("marks") and [(r.number, r.key, len(r.options)) for r in items] == [
        (1, 1, 3),
        (2, 2, 3),
    ]
    assert items[0].stem == ["Питання\nдалі"]


def test_a_spanning_heading_row_is_skipped_and_an_option_spanning_note_kept() -> None:
    words = [(40, 48, 52, "№"), (80, 120, 52, "Питання"), (300, 380, 52, "Варіанти"), (500, 540, 52, "Ключ")]
    words += [
        (40, 80, 72, "Розділ"),
        (82, 100, 72, "1."),
        (102, 300, 72, "Загальні"),
        (303, 400, 72, "положення"),
    ]
    words += [(40, 46, 90, "1"), (80, 200, 90, "Питання"), (300, 360, 90, "перший"), (500, 510, 90, "*")]
    words += [(300, 360, 107, "другий")]
    words += [
        (40, 46, 124, "2"),
        (80, 200, 124, "Друге"),
        (300, 420, 124, "Виключено"),
        (423, 520, 124, "рішенням"),
    ]
    rows, info = file_rows([_page(words, [46.0, 66.0, 86.0, 103.0, 120.0, 140.0])], "f.pdf")
    assert info["heading_lines"] == 1
    assert [r.number for r in rows] == ["№", "1", "", "2"]
    items, _ = reading3.read(rows)
    assert [(r.number, r.excluded) for r in items] == [(1, False), (2, True)]


def test_text_that_is_not_four_columns_stops_naming_the_file() -> None:
    words = [(40, 48, 52 + 12 * k, "№") for k in range(10)] + [
        (300, 380, 52 + 12 * k, "x") for k in range(10)
    ]
    with pytest.raises(LinesError, match=r"f\.pdf: page 1: the text lines form 2 columns, not 4"):
        file_rows([_page(words, [46.0, 200.0])], "f.pdf")


@pytest.fixture(scope="module")
def score_bank(tmp_path_factory: pytest.TempPathFactory):
    records = customs_records(items_json())
    return render_variant(
        BY_NAME["score-column"], records, tmp_path_factory.mktemp("score"), n_items=30, seed=1
    )


def test_a_misread_score_column_is_disputed_never_settled(score_bank, monkeypatch) -> None:
    """Paths 1 and 2 both made to take the "1" score column for a key column (the old misread: key 0 for
    every item): they agree with each other, and the line reading disputes every item whose key is not 0."""
    real = assemble_module.detect_layout

    def misread(rows, file):
        return dataclasses.replace(real(rows, file), fourth=assemble_module.KEY)

    monkeypatch.setattr(extract_module, "detect_layout", misread)
    monkeypatch.setattr(extract_module, "check_file", lambda items, **kw: {})  # past the whole-file check
    items, _report = extract_items([score_bank.path], source="var", workers=1)
    truth = {i.id: i for i in score_bank.items}
    wrong_key = [
        i for i in items if i.id in truth and i.key != truth[i.id].key and truth[i.id].status == "ok"
    ]
    assert len(wrong_key) >= 10  # the misread happened
    assert all(i.status == "disputed" for i in wrong_key)
    assert all("reading3" in i.meta["settled"]["why"] for i in wrong_key)
    assert not [i for i in items if i.status == "ok" and i.key != truth[i.id].key]


def test_the_right_reading_of_the_score_column_settles(score_bank) -> None:
    items, report = extract_items([score_bank.path], source="var", workers=1)
    third = report["files"][0]["reading3"]
    assert third["differ"] == [] and third["lines"]["pitch"] > 0
    assert sum(i.status == "disputed" for i in items) <= 1
    assert lines.N_COLUMNS == 4


def test_a_mark_centred_beside_a_tall_option_starts_no_row() -> None:
    """Ruled rows; the mark printed beside the middle of a three-line option (vertically centred): one row,
    not a row of its own (which would read as a blank option)."""
    words = [(40, 48, 52, "№"), (80, 120, 52, "Питання"), (300, 380, 52, "Варіанти"), (500, 540, 52, "Ключ")]
    words += [(40, 46, 72, "1"), (80, 200, 72, "Питання")]
    words += [(300, 360, 72 + 11 * k, f"рядок{k}") for k in range(3)] + [(500, 510, 83, "*")]
    words += [(300, 360, 109, "другий"), (500, 540, 109, "ні")]
    rows, _ = file_rows([_page(words, [46.0, 66.0, 105.0, 125.0])], "f.pdf")
    assert [(r.option, r.mark) for r in rows[1:]] == [("рядок0\nрядок1\nрядок2", "*"), ("другий", "ні")]


def test_print_faults_find_overprinted_glyphs_and_rules_through_text_not_plain_lines() -> None:
    """Glyphs of one line side by side, and lines one pitch apart, are no fault; a line printed half a
    line over another, the same glyph drawn again at a slant offset (simulated bold) aside, is; so is a
    rule through the middle of a line, but not one under it."""
    from blindmcq.corpus.lines import print_faults

    def line(top: float, x: float = 40.0, n: int = 12, text: str = "а") -> list[dict]:
        return [
            {"x0": x + 5 * k, "x1": x + 5 * k + 5, "top": top, "bottom": top + 9, "text": text}
            for k in range(n)
        ]

    plain = [line(100), line(111), line(122)]
    assert print_faults(plain, [(98.0, 30.0, 300.0), (110.5, 30.0, 300.0)]) == []
    bold = [line(100) + line(100.4, x=40.3)]
    assert print_faults([sorted(bold[0], key=lambda c: c["x0"])], []) == []
    over = [line(100), line(104.5, x=42.0, text="б")]
    assert [f[0] for f in print_faults(over, [])] == ["glyphs printed over other glyphs"]
    assert print_faults([line(100)], [(104.5, 30.0, 300.0)]) == [("a rule runs through the text", 100, 109)]
    assert print_faults([line(100, x=400)], [(104.5, 30.0, 300.0)]) == []  # the rule ends left of the line


def test_print_faults_find_a_line_run_past_an_inner_column_rule() -> None:
    """A line whose glyphs a column's inner rule runs through, or whose words sit a word space apart across
    it, overruns its cell; text kept inside two cells (each cell's padding apart), a rule that does not
    reach the line's height, and the table's outermost rules (text past them is in no cell) are no fault."""
    from blindmcq.corpus.lines import OVERRUN, print_faults

    def run(top: float, x0: float, x1: float) -> list[dict]:  # glyphs 5 pt wide from x0 to x1
        return [
            {"x0": x0 + 5 * k, "x1": x0 + 5 * k + 5, "top": top, "bottom": top + 10, "text": "а"}
            for k in range(int((x1 - x0) // 5))
        ]

    columns = [(36.0, 90.0, 200.0), (200.0, 90.0, 200.0), (400.0, 90.0, 200.0), (480.0, 90.0, 200.0)]
    crossed = run(100, 40, 260)  # glyphs straight through the rule at x 200
    assert print_faults([crossed], [], columns) == [(OVERRUN, 100, 110)]
    spaced = run(100, 43, 198) + run(100, 201, 260)  # a word space (3 pt) straddling the rule at 200
    assert print_faults([spaced], [], columns) == [(OVERRUN, 100, 110)]
    padded = run(100, 42, 197) + run(100, 203, 260)  # each cell's 3 pt of padding: two cells' text
    assert print_faults([padded], [], columns) == []
    short = [(36.0, 90.0, 200.0), (200.0, 120.0, 200.0), (480.0, 90.0, 200.0)]  # the rule starts below
    assert print_faults([crossed], [], short) == []
    past = run(100, 420, 500)  # over the table's right rule, as a mark word wider than its column prints
    assert print_faults([past], [], columns) == []


def test_a_line_drawn_over_text_alone_reads_as_struck_through_not_as_a_rule() -> None:
    from blindmcq.corpus.lines import print_faults

    glyphs = [
        {"x0": 40.0 + 5 * k, "x1": 45.0 + 5 * k, "top": 100.0, "bottom": 109.0, "text": "а"} for k in range(8)
    ]
    assert print_faults([glyphs], [(104.5, 40.5, 79.5)]) == [
        ("text struck through (an exclusion?)", 100.0, 109.0)
    ]
    assert print_faults([glyphs], [(104.5, 36.0, 300.0)]) == [("a rule runs through the text", 100.0, 109.0)]


def test_each_row_carries_where_its_option_lines_end() -> None:
    """The line reading's own measure of a row's option text (for page-top rows): the right end of its last
    and longest lines, the width of its first word and the narrowest space, from the words."""
    words = [(40, 48, 52, "№"), (80, 120, 52, "Питання"), (300, 380, 52, "Варіанти"), (500, 540, 52, "Ключ")]
    words += [(40, 46, 72, "1"), (80, 200, 72, "Питання"), (300, 330, 72, "один"), (333, 420, 72, "два")]
    words += [(300, 360, 83, "три"), (500, 508, 72, "А")]
    rows, _ = file_rows([_page(words, [46.0, 66.0, 100.0])], "f.pdf")
    fit = rows[1].fit
    assert fit is not None and (fit.last, fit.widest, fit.lead, fit.space, fit.leads) == (
        360,
        420,
        30,
        3,
        (30, 60),
    )
    assert 420 < fit.right < 500  # the corridor after the option column
