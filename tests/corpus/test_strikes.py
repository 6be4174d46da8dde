"""Strike lines: found among the page's drawn lines and thin rectangles, never a table rule."""

from __future__ import annotations

from types import SimpleNamespace

from blindmcq.corpus.strikes import find_strikes, runs


def _chars(x0: float, text: str, top: float = 100.0, size: float = 9.0) -> list[dict]:
    return [
        {"x0": x0 + 5 * k, "x1": x0 + 5 * k + 5, "top": top, "bottom": top + size, "text": t}
        for k, t in enumerate(text)
    ]


def _page(chars: list[dict], lines: list[tuple[float, float, float]], rects=()) -> SimpleNamespace:
    objects = {
        "char": chars,
        "line": [{"x0": a, "x1": b, "top": y, "bottom": y} for y, a, b in lines],
        "rect": [{"x0": a, "x1": b, "top": y - 0.4, "bottom": y + 0.4} for y, a, b in rects],
    }
    return SimpleNamespace(objects=objects, chars=chars)


def test_a_line_through_the_text_mid_height_from_its_first_to_last_glyph_is_a_strike() -> None:
    chars = _chars(50, "виключене") + _chars(200, "сусідня клітинка")
    page = _page(chars, [(104.5, 50, 95), (100.0, 40, 300), (109.0, 40, 300), (104.5, 190, 300)])
    # through the word alone: a strike; the rules above and below the line, and one through the
    # neighbouring cell's text that reaches the cell's border (a line printed across a rule): none
    assert [s[:3] for s in find_strikes(page)] == [("line", 0, 104.5)]
    struck = runs(chars, find_strikes(page))
    assert [(r.x0, r.struck) for r in struck] == [(50, True), (200, False), (240, False)]  # two words


def test_a_thin_filled_rectangle_strikes_as_a_line_does_and_an_underline_does_not() -> None:
    chars = _chars(50, "текст")
    assert [s[0] for s in find_strikes(_page(chars, [], rects=[(104.5, 50, 75)]))] == ["rect"]
    assert find_strikes(_page(chars, [(108.5, 50, 75)])) == []  # at the glyphs' foot: underline
    assert find_strikes(_page([], [(104.5, 50, 75)])) == []
