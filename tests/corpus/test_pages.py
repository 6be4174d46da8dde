"""The shared, leaner page parse gives what stock pdfplumber gives: same object dicts, same table cells."""

from __future__ import annotations

import itertools
from pathlib import Path

import pdfplumber
from hypothesis import given
from hypothesis import strategies as st
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


def test_path2_words_equal_extract_words(cases_bank: Rendered) -> None:
    """Path 2's own word builder gives pdfplumber's ``extract_words()``, keys in order, on every page of a
    bank that prints every special case, and on awkward chars: an empty char, a blank, a ligature, a char
    left of the one before, gaps just under and over the tolerance, tops chained 3 pt apart, a rotated
    char (pdfplumber's own extractor then)."""
    from types import SimpleNamespace

    from pdfplumber import utils

    from blindmcq.corpus.path_rules import page_words

    def same(page: object, chars: list[dict]) -> None:
        new, old = page_words(page), utils.extract_words(chars)  # type: ignore[arg-type]
        assert new == old and [list(w) for w in new] == [list(w) for w in old]

    with pdfplumber.open(cases_bank.path) as pdf:
        for page in pdf.pages:
            same(lean(page), page.chars)

    def char(x0: float, text: str, top: float = 10.0, upright: bool = True) -> dict:
        return {"x0": x0, "x1": x0 + 4, "top": top, "bottom": top + 9, "text": text, "upright": upright,
                "doctop": top + 800, "size": 9.0}  # fmt: skip

    rows = [
        [char(0, "а"), char(4, "б"), char(11, "в"), char(18.1, "г"), char(22, ""), char(26, "д")],
        [char(0, "ﬁ"), char(4, " "), char(8, "x"), char(6, "y"), char(30, "z", top=12.9)],
        [char(0, "a", top=10), char(4, "b", top=13.1), char(8, "c", top=16.5), char(50, "d", top=10)],
    ]
    for chars in [*rows, rows[0] + rows[1], [*rows[2], char(60, "e", upright=False)], []]:
        same(SimpleNamespace(chars=chars, extract_words=lambda c=chars: utils.extract_words(c)), chars)


def _tokens(parser_cls: type, data: bytes | list[bytes], bufsize: int) -> list:
    """The (position, object) pairs ``parser_cls`` reads from ``data`` (one stream, or several in turn)."""
    from pdfminer.pdftypes import PDFStream
    from pdfminer.psparser import PSEOF

    streams = []
    for k, chunk in enumerate([data] if isinstance(data, bytes) else data):
        streams.append(PDFStream({}, chunk))
        streams[-1].objid = k + 1
    parser = parser_cls(streams)
    parser.BUFSIZ = bufsize
    out = []
    while True:
        try:
            out.append(parser.nextobject())
        except PSEOF:
            return out
        except Exception as exc:  # what the stock parser refuses, the lean one must refuse alike
            return [*out, ("raised", type(exc).__name__)]


# Pieces of content streams: every kind of token pdfminer reads, the common ones (which the lean parser
# reads by regular expression) and their edge cases (which it must leave to pdfminer's state machine)
_PIECES = [
    b"0", b"12", b"-3", b"+4", b"-", b"+", b".", b"-.", b"-.5", b".25", b"5.", b"1.5", b"-2.75", b"1.2.3",
    b"00", b"12abc", b"3-4", b"BT", b"ET", b"Tj", b"TJ", b"T*", b"Tf", b"re", b"f*", b"true", b"false",
    b"trueX", b"BI", b"ID", b"EI", b"x\x00y", b"Do", b"q", b"Q", b"cm", b"/F1", b"/A#20B", b"/#41", b"//",
    b"/", b"/Name/Other", b"/\xc3\xa9t\xc3\xa9", b"/\xff\xfe", b"(plain)", b"()", b"(\\203\\003)",
    b"(\\1x\\12y)", b"(a(b)c)", b"(\\))", b"(\\n\\t)", b"(line\\\nnext)", b"(\\0123)", b"<41>",
    b"<4 1>", b"<414>", b"<>", b"<41>>", b"<<", b">>", b"<</MCID 0>>", b"[", b"]", b"[(a) -250 (b)]",
    b"{", b"}", b"%comment\n", b"%", b"\x00", b"'", b'"', b"#", b"<zz>", b"(\xd0\x86)",
]  # fmt: skip
_SEPARATORS = [b" ", b"\n", b"\r\n", b"\t", b"", b"  \f", b"\x00"]


@given(
    st.lists(st.tuples(st.sampled_from(_PIECES), st.sampled_from(_SEPARATORS)), max_size=40),
    st.lists(st.integers(0, 400), max_size=2),
    st.sampled_from([1, 2, 3, 5, 7, 16, 64, 4096]),
)
def test_content_parser_reads_every_token_as_pdfminer_does(
    pieces: list[tuple[bytes, bytes]], cuts: list[int], bufsize: int
) -> None:
    """On generated content streams (tokens of every kind, their edge cases next to each other, the data
    cut into several streams and read through buffers of every size), the lean parser gives pdfminer's
    objects at pdfminer's positions, and refuses what pdfminer refuses."""
    from pdfminer.pdfinterp import PDFContentParser

    from blindmcq.corpus.pages import _ContentParser

    data = b"".join(p + sep for p, sep in pieces)
    bounds = sorted({min(c, len(data)) for c in cuts} | {0, len(data)})
    streams = [data[a:b] for a, b in itertools.pairwise(bounds)] or [data]
    assert _tokens(_ContentParser, streams, bufsize) == _tokens(PDFContentParser, streams, bufsize)


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
        assert _tokens(cls, big, 4096)[-1] == ("raised", "AssertionError")


def test_lean_objects_equal_stock_on_spaced_scaled_turned_text(tmp_path: Path) -> None:
    """Text set with char and word spacing, a rise, horizontal scaling, kerned glyph runs (TJ), colours,
    turned, slanted and sideways text matrices, lines of every kind the lean device builds itself or leaves
    to pdfminer, and a page box whose origin is not (0, 0): the chars and lines the lean device builds as
    it prints are pdfminer's (through pdfplumber), field for field."""
    path = tmp_path / "spaced.pdf"
    canvas = Canvas(str(path))
    canvas.setPageSize((500, 700))
    canvas.setFillColorRGB(0.2, 0.4, 0.6)
    text = canvas.beginText(40, 650)
    text.setFont("Helvetica", 11)
    text.setCharSpace(1.5)
    text.setWordSpace(4)
    text.textLine("spaced words, and more")
    text.setRise(3)
    text.setHorizScale(80)
    text.textLine("risen and narrowed")
    text.setTextTransform(0.9, 0.3, -0.3, 0.9, 60, 400)
    text.textLine("turned a little")
    text.setTextTransform(-1, 0, 0, -1, 300, 200)
    text.textLine("upside down")
    text.setTextTransform(1, 0, 0.3, 1, 50, 100)
    text.textLine("slanted")
    text.setTextTransform(0, 1, -1, 0, 450, 300)
    text.textLine("a quarter turn")
    canvas.drawText(text)
    canvas._code.append("BT /F1 12 Tf 1 0 0 1 100 300 Tm [(A) -120 (V) 250.5 (Wa) -33 (y)] TJ ET")
    # lines: plain, dashed and coloured, in a scaled and turned frame, several in one path, one in marked
    # content, one as a curve's neighbour
    canvas.line(20, 20, 480, 20)
    canvas.setDash(3, 2)
    canvas.setStrokeColorRGB(0.9, 0.1, 0.1)
    canvas.setLineWidth(1.7)
    canvas.line(20, 40, 20, 600)
    canvas.saveState()
    canvas.translate(250, 350)
    canvas.rotate(30)
    canvas.scale(1.5, 0.5)
    canvas.line(0, 0, 100, 0)
    canvas.restoreState()
    canvas.setDash()
    canvas._code.append("n 30 60 m 200 60 l 30 70 m 200 70 l S")
    canvas._code.append("/P <</MCID 7>> BDC n 30 80 m 200 80 l S EMC")
    canvas._code.append("n 30 90 m 200 90 l 250 120 l S")
    canvas.showPage()
    canvas.setPageSize((400, 400))
    canvas.drawString(60, 200, "Офсетна сторінка ﬁ")
    canvas.line(10, 10, 390, 10)
    canvas.line(10, 10, 10, 390)
    canvas.showPage()
    canvas.save()
    data = path.read_bytes()  # the second page's box moved off (0, 0), the file's offsets kept
    assert data.count(b"/MediaBox [ 0 0 400 400 ]") == 1
    path.write_bytes(data.replace(b"/MediaBox [ 0 0 400 400 ]", b"/MediaBox [ 7 9 400 400 ]"))
    with pdfplumber.open(path) as pdf:
        assert pdf.pages[1].mediabox[0] != 0
        for page in pdf.pages:
            mine = lean(page)
            assert_same_objects(page, mine)
            assert mine.objects["char"]
        assert not all(c["upright"] for c in lean(pdf.pages[0]).chars)
        assert len(lean(pdf.pages[0]).lines) == 6 and len(lean(pdf.pages[1]).lines) == 2
        assert {ln["mcid"] for ln in lean(pdf.pages[0]).lines} == {None, 7}


def _executed(interpreter_cls: type, parser_cls: type, data: bytes | list[bytes], bufsize: int) -> list:
    """The operators ``interpreter_cls`` runs on ``data`` (one stream, or several in turn) with
    ``parser_cls`` as pdfminer's content parser: each as (name, arguments), then the operands left on the
    stack; the exception type where it raises."""
    from unittest import mock

    from pdfminer import pdfinterp
    from pdfminer.pdftypes import PDFStream

    record: list = []

    def recorder(name: str) -> object:
        """A method that records its call, taking as many arguments as pdfminer's (the interpreter pops
        that many operands)."""
        nargs = getattr(interpreter_cls, name).__code__.co_argcount - 1
        params = "".join(f", a{i}" for i in range(nargs))
        scope: dict = {"record": record}
        exec(f"def op(self{params}): record.append(({name!r}, [{params[2:]}]))", scope)
        return scope["op"]

    ops = {k: recorder(k) for k in dir(interpreter_cls) if k.startswith("do_")}
    cls = type("Recording", (interpreter_cls,), ops)
    streams = []
    for k, chunk in enumerate([data] if isinstance(data, bytes) else data):
        streams.append(PDFStream({}, chunk))
        streams[-1].objid = k + 1
    interp = cls.__new__(cls)
    interp.argstack, interp.stream_ids, interp.parent_stream_ids = [], set(), set()

    class Parser(parser_cls):  # type: ignore[misc, valid-type]
        BUFSIZ = bufsize

    with mock.patch.object(pdfinterp, "PDFContentParser", Parser):
        try:
            interp.execute(streams)
        except Exception as exc:
            return [*record, ("raised", type(exc).__name__)]
    return [*record, ("left", interp.argstack)]


# Operators and operands of content streams, with what the interpreter reads itself: arrays (TJ's), nested
# arrays, operators and dicts inside arrays, an unbalanced bracket, inline images, unknown operators
_OPS_PIECES = [
    *_PIECES, b"[(a) -250 (b)] TJ", b"[[1 2] 3]", b"[1 Tj 2]", b"[/A <</B 1>>]", b"[<41> (x)]", b"]",
    b"[ ]", b"BT /F1 12 Tf 1 0 0 1 39 796 Tm (\\021) Tj T* ET", b"1 0 0 1 0 0 cm", b"n 36 805 m 72 805 l S",
    b"0.5 w", b"q", b"Q", b"1 2 3 4 5 6 cm", b"xyz", b"BI /W 1 ID \x00 EI", b"/P <</MCID 3>> BDC", b"EMC",
]  # fmt: skip


@given(
    st.lists(st.tuples(st.sampled_from(_OPS_PIECES), st.sampled_from(_SEPARATORS)), max_size=40),
    st.lists(st.integers(0, 400), max_size=2),
    st.sampled_from([1, 2, 3, 7, 64, 4096]),
)
def test_interpreter_runs_the_operators_pdfminer_runs(
    pieces: list[tuple[bytes, bytes]], cuts: list[int], bufsize: int
) -> None:
    """On generated content streams, the lean interpreter with the lean parser runs pdfminer's operators
    with pdfminer's arguments in pdfminer's order (stock interpreter, stock parser), leaves the same
    operands, and raises where pdfminer raises."""
    from pdfminer.pdfinterp import PDFContentParser, PDFPageInterpreter

    from blindmcq.corpus.pages import _ContentParser, _Interpreter

    data = b"".join(p + sep for p, sep in pieces)
    bounds = sorted({min(c, len(data)) for c in cuts} | {0, len(data)})
    streams = [data[a:b] for a, b in itertools.pairwise(bounds)] or [data]
    mine = _executed(_Interpreter, _ContentParser, streams, bufsize)
    stock = _executed(PDFPageInterpreter, PDFContentParser, streams, bufsize)
    assert repr(mine) == repr(stock)  # repr: an int and an equal float differ


def test_path1_tables_equal_pdfplumbers(cases_bank: Rendered) -> None:
    """Path 1's table finder finds pdfplumber's tables (the same cells, rows and order) on every page of a
    bank that prints every special case."""
    with pdfplumber.open(cases_bank.path) as pdf:
        for page in pdf.pages:
            page = lean(page)
            mine, stock = path_tables.find_tables(page), page.find_tables(path_tables.SETTINGS)
            assert mine and [t.cells for t in mine] == [t.cells for t in stock]


_EDGE = st.tuples(st.integers(0, 6), st.integers(0, 6), st.integers(1, 6))


@given(st.lists(_EDGE, max_size=14), st.lists(_EDGE, max_size=14))
def test_cells_equal_pdfplumbers_on_generated_grids(
    horizontal: list[tuple[int, int, int]], vertical: list[tuple[int, int, int]]
) -> None:
    """On generated rules (horizontal and vertical, overlapping, touching, broken, some at half points),
    path 1's cells are pdfplumber's ``intersections_to_cells``: the same cells in the same order."""
    from pdfplumber.table import edges_to_intersections, intersections_to_cells

    def edge(orientation: str, at: int, start: int, length: int) -> dict:
        lo, hi = start * 10 / (2 if at % 3 == 0 else 1), start * 10 + length * 10
        if orientation == "h":
            return {"x0": lo, "x1": hi, "top": at * 10, "bottom": at * 10, "orientation": "h"}
        return {"x0": at * 10, "x1": at * 10, "top": lo, "bottom": hi, "orientation": "v"}

    edges = [edge("h", *e) for e in horizontal] + [edge("v", *e) for e in vertical]
    intersections = edges_to_intersections(edges)
    assert path_tables._cells(intersections) == intersections_to_cells(intersections)


@given(
    st.lists(st.one_of(st.integers(-5, 30), st.floats(-5, 30, allow_nan=False)), max_size=40),
    st.sampled_from([0, 1, 1.5, 3]),
)
def test_cluster_objects_equals_pdfplumbers(tops: list[float], tolerance: float) -> None:
    """The groups of objects by a key within a tolerance are pdfplumber's ``cluster_objects``: the same
    objects in the same groups, in the same order (equal keys, close keys chained, ints beside floats)."""
    from operator import itemgetter

    from pdfplumber.utils.clustering import cluster_objects as stock

    from blindmcq.corpus.pages import cluster_objects

    objs = [{"top": t, "k": k} for k, t in enumerate(tops)]
    assert cluster_objects(objs, itemgetter("top"), tolerance) == stock(objs, itemgetter("top"), tolerance)
