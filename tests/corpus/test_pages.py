"""The shared, leaner page parse gives what stock pdfplumber gives: same object dicts, same table cells."""

from __future__ import annotations

from pathlib import Path

import pdfplumber
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
