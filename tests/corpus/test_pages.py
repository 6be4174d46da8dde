"""The shared, leaner page parse gives what stock pdfplumber gives: same object dicts, same table cells."""

from __future__ import annotations

from pathlib import Path

import pdfplumber
import pytest
from reportlab.pdfgen.canvas import Canvas

from blindmcq.corpus import path_tables
from blindmcq.corpus.pages import LeanPage, lean
from blindmcq.corpus.render import ItemSpec, Rendered, Style, render_pdf


def assert_same_objects(stock: pdfplumber.page.Page, mine: LeanPage) -> None:
    a, b = stock.objects, mine.objects
    assert a.keys() == b.keys()
    for kind in a:
        assert len(a[kind]) == len(b[kind]), kind
        for x, y in zip(a[kind], b[kind], strict=True):
            assert x == y, (kind, x, y)
            assert list(x) == list(y)  # the same keys in the same order


def test_lean_objects_equal_stock(cases_bank: Rendered) -> None:
    with pdfplumber.open(cases_bank.path) as pdf:
        assert len(pdf.pages) > 1
        for page in pdf.pages:
            mine = lean(page)
            assert isinstance(mine, LeanPage) and mine.page_number == page.page_number
            assert mine.initial_doctop == page.initial_doctop
            assert_same_objects(page, mine)
            assert {o["object_type"] for o in mine.objects["char"]} == {"char"}


def test_lean_objects_equal_stock_on_a_landscape_page_with_curves(
    tmp_path: Path, customs_specs: list[ItemSpec]
) -> None:
    """Another page size and font, and a curve (drawn here), so the non-char branch is exercised too."""
    style = Style(landscape=True, widths=(40.0, 320.0, 330.0, 80.0), footer="Сторінка {page} з {pages}")
    rendered = render_pdf(
        customs_specs[:8], tmp_path / "vkks-land.pdf", source="vkks", bank="land", style=style
    )
    with pdfplumber.open(rendered.path) as pdf:
        for page in pdf.pages:
            assert page.width > page.height
            assert_same_objects(page, lean(page))
    path = tmp_path / "curve.pdf"
    canvas = Canvas(str(path))
    p = canvas.beginPath()
    p.moveTo(50, 50)
    p.curveTo(100, 200, 200, 200, 250, 50)
    canvas.drawPath(p)
    canvas.rect(300, 300, 50, 20, fill=1)
    canvas.drawString(100, 700, "Тест ﬁ")
    canvas.showPage()
    canvas.save()
    with pdfplumber.open(path) as pdf:
        mine = lean(pdf.pages[0])
        assert_same_objects(pdf.pages[0], mine)
        assert {"curve", "rect", "char"} <= set(mine.objects)


def test_path1_cells_equal_table_extract(cases_bank: Rendered) -> None:
    """Path 1's cell texts are ``Table.extract()``'s, on every page of a bank with every special case."""
    with pdfplumber.open(cases_bank.path) as pdf:
        for page in pdf.pages:
            page = lean(page)
            tables = page.find_tables(path_tables.SETTINGS)
            assert tables
            chars = page.chars
            mids = sorted(((c["top"] + c["bottom"]) / 2, i) for i, c in enumerate(chars))
            for table in tables:
                assert path_tables.extract_table(table, chars, mids) == table.extract()


def test_cell_text_equals_pdfplumber_extract_text_on_awkward_chars() -> None:
    """The word breaks path 1 computes itself are pdfplumber's: an empty char, a blank, a ligature, a char
    left of the one before, gaps just under and over the tolerance, a line 3 pt lower, a rotated char."""
    from pdfplumber import utils

    def char(x0: float, text: str, top: float = 10.0, upright: bool = True) -> dict:
        return {"x0": x0, "x1": x0 + 4, "top": top, "bottom": top + 9, "text": text, "upright": upright,
                "doctop": top, "size": 9.0}  # fmt: skip

    rows = [
        [char(0, "а"), char(4, "б"), char(11, "в"), char(18.1, "г"), char(22, ""), char(26, "д")],
        [char(0, "ﬁ"), char(4, " "), char(8, "x"), char(6, "y"), char(30, "z", top=12.9)],
        [char(0, "a", top=10), char(4, "b", top=13.1), char(8, "c", top=16.5), char(50, "d", top=10)],
    ]
    for chars in [*rows, rows[0] + rows[1], [*rows[2], char(60, "e", upright=False)]]:
        assert path_tables.cell_text(chars) == utils.extract_text(chars)


def _tokens(parser_cls: type, data: bytes, bufsize: int) -> list:
    from pdfminer.pdftypes import PDFStream
    from pdfminer.psparser import PSEOF

    stream = PDFStream({}, data)
    stream.objid = 1
    parser = parser_cls([stream])
    parser.BUFSIZ = bufsize
    out = []
    while True:
        try:
            out.append(parser.nextobject())
        except PSEOF:
            return out


def test_content_parser_reads_literal_strings_as_pdfminer_does() -> None:
    """The leaner content-stream parser gives pdfminer's tokens for every kind of literal string, however
    the buffer cuts it: octal escapes of 1-3 digits, one followed by a digit, one of 400 and more (pdfminer
    refuses those), named escapes, nested and escaped parentheses, a line continued by a backslash."""
    from pdfminer.pdfinterp import PDFContentParser

    from blindmcq.corpus.pages import _ContentParser

    data = (
        b"BT (\\021\\001\\013 ab) Tj (\\1x\\12y\\0123\\7) Tj (a(b)c\\)\\(\\\\) Tj "
        b"(\\n\\t\\r\\b\\f\\q) Tj (line\\\r\nnext\\\nend) Tj [(\\203\\003) -250 (\\377)] TJ "
        b"<0041 42> Tj (plain text) Tj () Tj ((())) Tj ET"
    )
    for size in (1, 2, 3, 5, 7, 4096):
        assert _tokens(_ContentParser, data, size) == _tokens(PDFContentParser, data, size), size
    big = b"BT (\\477) Tj ET"  # 0o477 > 255: pdfminer's own assertion, unchanged
    for cls in (PDFContentParser, _ContentParser):
        with pytest.raises(AssertionError):
            _tokens(cls, big, 4096)
