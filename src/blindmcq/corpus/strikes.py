"""Struck-through text: a convention for excluded items, found in the page's drawn objects.

An office that withdraws an item often strikes its row through instead of printing a note: a horizontal
line (or a thin filled rectangle) drawn through the text's mid-height from the first glyph of a line to the
last. Such a line is no rule of the table: left among the page's edges it would cut a cell in two for
path 2 and, where it ends within pdfplumber's intersection tolerance of a column rule, for path 1 too.

So, while the page is open (:func:`take_strikes`), the strike lines are found (:func:`find_strikes`),
removed from the page's objects before any reading looks at its edges, and the page's text runs (a cell's
printed line: glyphs no further apart than half their height) are recorded with whether a strike runs
through them. After the items are settled, :func:`exclude_struck` makes an item whose text runs are all
struck (short runs aside: a number, a mark word) ``excluded``, and an item only partly struck disputed.
Pages without a strike line record nothing and are read exactly as before.
"""

from __future__ import annotations

import dataclasses
from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from operator import itemgetter
from typing import Any

from blindmcq.corpus.settle import dispute
from blindmcq.datasets.items import FLAGS, Item

THIN = 1.5  # pt: a filled rectangle at most this tall is a drawn line
STRIKE_TOL = 1.5  # pt: a strike ends this close to the first and last glyph it runs through
MID = 0.3  # the strike lies this share of a glyph's height inside its box, from its top and its bottom
LINE_TOL = 3.0  # pt: glyph tops closer than this share a printed line
COVER = 0.8  # a text run is struck when strikes run through this share of its width
SHORT = 12  # glyphs: a run this short (an item number, a mark word) need not be struck with its row
STRUCK_NOTE = "struck through"  # meta.excluded_note of an item excluded by a strike


@dataclass(frozen=True)
class Run:
    """One printed run of glyphs (a cell's line) on a page with strike lines."""

    top: float
    bottom: float
    x0: float
    x1: float
    glyphs: int
    struck: bool


def _candidates(page: Any) -> list[tuple[str, int, float, float, float]]:
    """(kind, index, y, x0, x1) of the page's horizontal lines and thin rectangles."""
    out = []
    for k, ln in enumerate(page.objects.get("line", [])):
        if abs(ln["bottom"] - ln["top"]) <= THIN and ln["x1"] - ln["x0"] > STRIKE_TOL:
            out.append(("line", k, (ln["top"] + ln["bottom"]) / 2, ln["x0"], ln["x1"]))
    for k, r in enumerate(page.objects.get("rect", [])):
        if r["bottom"] - r["top"] <= THIN and r["x1"] - r["x0"] > STRIKE_TOL:
            out.append(("rect", k, (r["top"] + r["bottom"]) / 2, r["x0"], r["x1"]))
    return out


def find_strikes(
    page: Any, chars: list[dict[str, Any]] | None = None
) -> list[tuple[str, int, float, float, float]]:
    """The page's strike lines (module doc): (kind, index in ``page.objects[kind]``, y, x0, x1)."""
    cands = _candidates(page)
    if not cands:
        return []
    # (top, bottom, x0, x1) of every glyph, sorted as tuples (a sort of dicts by a key costs more)
    glyphs = sorted(
        (c["top"], c["bottom"], c["x0"], c["x1"])
        for c in (page.chars if chars is None else chars)
        if c["bottom"] > c["top"] and c["text"].strip()
    )
    if not glyphs:
        return []
    tops = [g[0] for g in glyphs]
    tallest = max(g[1] - g[0] for g in glyphs)
    found = []
    for kind, k, y, x0, x1 in cands:
        crossed = sorted(
            (g[2], g[3])
            for g in glyphs[bisect_left(tops, y - tallest) : bisect_right(tops, y)]
            # g[1] > y first: implied by the last test, and false for most glyphs of the band
            if g[1] > y
            and g[3] > x0
            and g[2] < x1
            and g[0] + MID * (g[1] - g[0]) < y < g[1] - MID * (g[1] - g[0])
        )
        if crossed and x0 >= crossed[0][0] - STRIKE_TOL and x1 <= max(g[1] for g in crossed) + STRIKE_TOL:
            found.append((kind, k, y, x0, x1))
    return found


def runs(chars: list[dict[str, Any]], strikes: list[tuple[str, int, float, float, float]]) -> list[Run]:
    """The page's printed runs of glyphs, each with whether strikes run through most of its width."""
    glyphs = sorted((c for c in chars if c["text"].strip()), key=itemgetter("top", "x0"))
    lines: list[list[dict[str, Any]]] = []
    for c in glyphs:
        if lines and c["top"] - lines[-1][0]["top"] < LINE_TOL:
            lines[-1].append(c)
        else:
            lines.append([c])
    out = []
    for line in lines:
        line.sort(key=itemgetter("x0"))
        groups: list[list[dict[str, Any]]] = []
        for c in line:
            if groups and c["x0"] - groups[-1][-1]["x1"] < 0.5 * (c["bottom"] - c["top"]):
                groups[-1].append(c)
            else:
                groups.append([c])
        for g in groups:
            top, bottom = min(c["top"] for c in g), max(c["bottom"] for c in g)
            x0, x1 = g[0]["x0"], max(c["x1"] for c in g)
            covered = sum(
                max(0.0, min(x1, s1) - max(x0, s0))
                for _, _, y, s0, s1 in strikes
                if top + MID * (bottom - top) < y < bottom - MID * (bottom - top)
            )
            out.append(Run(top, bottom, x0, x1, len(g), covered >= COVER * (x1 - x0)))
    return out


def take_strikes(page: Any) -> list[Run]:
    """Remove the page's strike lines from its objects (so no reading takes them for rules) and return its
    text runs; empty (and the page untouched) where nothing is struck through."""
    strikes = find_strikes(page)
    if not strikes:
        return []
    text = runs(page.chars, strikes)
    gone = {(kind, k) for kind, k, *_ in strikes}
    objects = page.objects
    for kind in ("line", "rect"):
        if kind in objects:
            objects[kind] = [o for k, o in enumerate(objects[kind]) if (kind, k) not in gone]
    page.flush_cache(["_rect_edges", "_curve_edges", "_edges"])
    return text


def exclude_struck(
    items: list[Item], struck: dict[int, list[Run]], paths: dict[str, dict[str, Item]]
) -> list[Item]:
    """``items`` with each whose rows are struck through ``excluded`` (``meta.excluded_note`` "struck
    through", ``meta.struck`` the pages), and each only partly struck disputed (which runs, per page)."""
    if not struck:
        return list(items)
    out = []
    for it in items:
        boxes = {
            (int(b[0]), float(b[1]), float(b[2]))
            for m in ("tables", "rules")
            if (p := paths[m].get(it.id))
            for b in p.meta.get("boxes", [])
        }
        mine = {
            r
            for page, top, bottom in boxes
            for r in struck.get(page, [])
            if top <= (r.top + r.bottom) / 2 <= bottom
        }
        hit = [r for r in mine if r.struck]
        if not hit:
            out.append(it)
            continue
        pages = sorted(
            {
                page
                for page, top, bottom in boxes
                for r in struck.get(page, [])
                if r.struck and top <= (r.top + r.bottom) / 2 <= bottom
            }
        )
        left = [r for r in mine if not r.struck and r.glyphs > SHORT]
        if left or it.status == "disputed":
            n = sum(1 for r in mine if r.glyphs > SHORT)
            at = f"page {', '.join(map(str, pages))}"
            why = (
                f"{at}: part of the item struck through ({len(hit)} of its printed lines struck, {len(left)} "
                f"of {n} longer than {SHORT} glyphs not): excluded or not cannot be told"
                if left
                else f"{at}: the item's rows are struck through (an exclusion), but its readings are disputed"
            )
            out.append(dispute(it, why, paths))
            continue
        flags = set(it.flags) | {"excluded"}
        # an item excluded by a printed note as well keeps the note
        meta = {**it.meta, "excluded_note": it.meta.get("excluded_note") or STRUCK_NOTE, "struck": pages}
        out.append(
            dataclasses.replace(it, status="excluded", flags=tuple(f for f in FLAGS if f in flags), meta=meta)
        )
    return out
