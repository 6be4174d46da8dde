"""The review page: per disputed item, its page crops beside every reading, and a correction stub.

One self-contained HTML file (crops embedded as PNG data URIs), all text escaped. The stub is what goes
into ``defaults/corrections.yaml`` once the reviewer has filled in the right fields.

A crop must let the reviewer settle the item from the page alone: it covers every row the item may own and
the page's neighbouring rows (from the rule above the row above the item to the rule under the row below
it), and, where the item's rows reach the last rule of its page, the top rows of the next page (where its
missing option or stem may continue). Crops are rendered at 150 dpi, shown at the page's full width and
linked to the full-size image (zoom). Beside them: paths 1 and 2, the line reading where it read the item
otherwise, and for an item that may be made up of another's rest (a number not printed, stem text at a page
top) the item printed above it.
"""

from __future__ import annotations

import base64
import html
import io
import itertools
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pdfplumber
import yaml
from pdfplumber.display import PageImage, get_page_image

from blindmcq.atomic import write_text
from blindmcq.corpus.pages import PageFrameError, lean, upright
from blindmcq.datasets.items import Item

REVIEW_FILE = "review.html"
RESOLUTION = 150  # dpi of the page crops (9 pt text is about 19 px high)
MARGIN = 4.0  # pt above and below the crop's rules
RULE_TOL = 1.5  # pt: horizontal rules closer than this are one
NEXT_ROWS = 3  # rules from the top of the next page shown (header, then the first rows)


_NONE = Item(id="", source="", bank="", number=0, question="", options=(), key=None)


def _rules(page: Any) -> list[float]:
    ys: list[float] = []
    for y in sorted(float(e["top"]) for e in page.edges if e["orientation"] == "h"):
        if not ys or y - ys[-1] > RULE_TOL:
            ys.append(y)
    return ys


def _page(pdf: Any, page_no: int, image: bool = True) -> tuple[Any, Any]:
    """The page in the frame the extraction read it in (:func:`blindmcq.corpus.pages.upright`), and, where
    that is not the displayed frame, the page's image turned into it (None: the displayed one will do)."""
    page = pdf.pages[page_no - 1]
    if not page.rotation:
        return page, None
    try:
        turned = upright(lean(page))
    except PageFrameError:
        return page, None
    if turned.rotation == page.rotation or not image:
        return (page if turned.rotation == page.rotation else turned), None
    shown = get_page_image(pdf.stream, pdf.path, page_no - 1, RESOLUTION, pdf.password)
    # PIL turns counter-clockwise: the displayed image turned back by what the read frame differs by
    return turned, shown.rotate(-((turned.rotation - page.rotation) % 360), expand=True)


def _png(page: Any, top: float, bottom: float, original: Any = None) -> str:
    crop = page.crop((0, top, float(page.width), bottom))
    image = PageImage(crop, original=original, resolution=RESOLUTION).original
    buf = io.BytesIO()
    image.save(buf, format="PNG")
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def _whole_lines(page: Any, top: float, bottom: float) -> tuple[float, float]:
    """``top`` and ``bottom`` moved out until no printed glyph is cut by either (a line overflowing its
    cell, a tail printed across a rule, an overprint: text outside the rules shown whole)."""
    chars = [c for c in page.chars if c["text"].strip()]
    for _ in range(20):  # each pass takes in one more cut line at each edge; a page has fewer
        cut_top = [c["top"] for c in chars if c["top"] < top < c["bottom"]]
        cut_bottom = [c["bottom"] for c in chars if c["top"] < bottom < c["bottom"]]
        if not cut_top and not cut_bottom:
            break
        top = max(0.0, min(cut_top) - MARGIN) if cut_top else top
        bottom = min(float(page.height), max(cut_bottom) + MARGIN) if cut_bottom else bottom
    return top, bottom


def crop_spans(
    pdf: Any, boxes: Sequence[Sequence[float]], pages: Sequence[int] = ()
) -> list[tuple[int, float, float]]:
    """(page, top, bottom) of each crop of an item whose rows are ``boxes`` (page, top, bottom) and which
    touches ``pages``: per page, its rows with the neighbouring rows, no glyph cut at either edge; the
    whole page where the item touches a page and no row of it was placed there; and the next page's top
    rows where the item's rows reach the last rule of their page."""
    spans: dict[int, list[float]] = defaultdict(list)
    for page_no, top, bottom in boxes:
        spans[int(page_no)] += [float(top), float(bottom)]
    n_pages = len(pdf.pages)
    whole = {int(p) for p in pages if 1 <= int(p) <= n_pages} - set(spans)
    out = []
    for page_no in sorted(set(spans) | whole):
        if not 1 <= page_no <= n_pages:
            continue
        page, _ = _page(pdf, page_no, image=False)
        if page_no in whole:
            out.append((page_no, 0.0, float(page.height)))
            continue
        ys = _rules(page)
        top, bottom = min(spans[page_no]), max(spans[page_no])
        above = [y for y in ys if y < top - RULE_TOL]
        below = [y for y in ys if y > bottom + RULE_TOL]
        # the row above and the row below: two rules beyond the item's own (one where there is no second)
        crop_top = max(0.0, (above[-2] if len(above) > 1 else above[-1] if above else 0.0) - MARGIN)
        crop_bottom = below[1] if len(below) > 1 else below[0] if below else float(page.height)
        crop_bottom = min(float(page.height), crop_bottom + MARGIN)
        if crop_bottom <= crop_top:
            crop_top, crop_bottom = 0.0, float(page.height)
        out.append((page_no, *_whole_lines(page, crop_top, crop_bottom)))
        last_page = page_no == max(spans) and page_no < n_pages
        if last_page and ys and not below and page_no + 1 not in spans and page_no + 1 not in whole:
            nxt, _ = _page(
                pdf, page_no + 1, image=False
            )  # the item ends its page: what the next page's top holds
            nys = _rules(nxt)
            end = nys[min(NEXT_ROWS, len(nys) - 1)] + MARGIN if nys else float(nxt.height) / 3
            out.append((page_no + 1, *_whole_lines(nxt, 0.0, min(float(nxt.height), end))))
    return out


def _crops(pdf: Any, boxes: Sequence[Sequence[float]], pages: Sequence[int] = ()) -> list[tuple[int, str]]:
    """PNG data URIs of the crops of :func:`crop_spans`, with their page numbers."""
    out = []
    for page_no, top, bottom in crop_spans(pdf, boxes, pages):
        page, original = _page(pdf, page_no)
        out.append((page_no, _png(page, top, bottom, original)))
    return out


def item_boxes(item: Item) -> list[list[float]]:
    """The rows an item may own: both paths' boxes and the line reading's, where it read the item."""
    return [*item.meta.get("boxes", []), *item.meta.get("reading3", {}).get("boxes", [])]


def item_pages(item: Item) -> list[int]:
    return [int(p) for p in item.meta.get("pages", [item.page] if item.page else [])]


def _reading(name: str, r: dict[str, Any] | None) -> str:
    if r is None:
        return f'<div class="reading"><h3>{html.escape(name)}</h3><p>not read</p></div>'
    options = "".join(
        f"<li{' class=key' if k == r['key'] else ''}>{html.escape(o)}</li>"
        for k, o in enumerate(r["options"])
    )
    return (
        f'<div class="reading"><h3>{html.escape(name)}</h3>'
        f'<p class="stem">{html.escape(r["question"])}</p><ol start="0">{options}</ol>'
        f"<p>key: {html.escape(str(r['key']))}; status: {html.escape(str(r['status']))}</p></div>"
    )


def _may_be_rest(item: Item) -> bool:
    """An item that may be made up of the rest of the one above (or have lost its rest to it)."""
    why = str(item.meta.get("settled", {}).get("why", "")) + str(item.meta.get("ambiguous", ""))
    return bool(item.meta.get("number_inferred")) or "recovered_merge" in item.flags or "top of page" in why


def _as_reading(item: Item) -> dict[str, Any]:
    return {"question": item.question, "options": list(item.options), "key": item.key, "status": item.status}


def stub(item: Item) -> str:
    """A corrections.yaml entry to fill in: the fingerprint and path 1's fields (or path 2's)."""
    readings = item.meta.get("readings", {})
    base = readings.get("tables") or readings.get("rules") or {}
    entry = {
        item.id: {
            "fingerprint": item.meta["fingerprint"],
            "question": base.get("question", item.question),
            "options": base.get("options", list(item.options)),
            "key": base.get("key", item.key),
        }
    }
    return yaml.safe_dump(entry, allow_unicode=True, sort_keys=False, width=100)


def gap_stub(gap: dict[str, Any]) -> str:
    """corrections.yaml entries for a gap's missing numbers: fill in the item, or set ``absent: true``."""
    entry = {
        item_id: {
            "fingerprint": gap["fingerprint"],
            "question": "",
            "options": [],
            "key": None,
            "absent": False,
        }
        for item_id in gap["ids"]
    }
    return yaml.safe_dump(entry, allow_unicode=True, sort_keys=False, width=100) if entry else ""


def _gap_section(gap: dict[str, Any], items: dict[str, Item], crops: list[tuple[int, str]]) -> str:
    numbers = str(gap["first"]) if gap["count"] == 1 else f"{gap['first']} to {gap['last']}"
    images = "".join(
        f'<figure><a href="{uri}" target="_blank"><img alt="page {p}" src="{uri}"></a>'
        f"<figcaption>page {p} (click to zoom)</figcaption></figure>"
        for p, uri in crops
    )
    near = "".join(
        _reading(f"{side}: {gap[key]} (as settled)", _as_reading(items[gap[key]]))
        for side, key in (("printed above", "after"), ("printed below", "before"))
        if gap[key] in items and not (gap.get("leading") and key == "after")
    )
    stubs = gap_stub(gap) or f"{gap['count']} numbers: too many for stubs (a misread number?)"
    return (
        f'<section class="item gap" id="gap-{html.escape(gap["after"])}"><h2>missing: item number '
        f"{html.escape(numbers)}</h2><p>{html.escape(gap.get('file', ''))}, pages "
        f"{html.escape(', '.join(map(str, gap['pages'])))}: no item carries this number; its text may be "
        "read into the item above or below (both disputed). Fill in the item from the page, or set "
        "absent: true where the bank prints no such number.</p>"
        f'<div class="row"><div class="crops">{images}</div>{near}'
        f"</div><pre class=stub>{html.escape(stubs)}</pre></section>"
    )


def review_html(items: Sequence[Item], pdfs: Sequence[Path], gaps: Sequence[dict[str, Any]] = ()) -> str:
    """The page's HTML for the disputed ``items`` (their files among ``pdfs``) and the ``gaps`` in their
    numbers (``files[].gaps`` of the report, each with its ``file``)."""
    by_name = {p.name: p for p in pdfs}
    disputed = [i for i in items if i.status == "disputed"]
    above = {b.id: a for a, b in itertools.pairwise(items) if a.file == b.file and _may_be_rest(b)}
    sections = []
    handles: dict[str, Any] = {}
    try:
        for item in disputed:
            pdf_path = by_name.get(item.file or "")
            crops = []
            if pdf_path is not None:
                if item.file not in handles:
                    handles[item.file or ""] = pdfplumber.open(pdf_path)
                crops = _crops(handles[item.file or ""], item_boxes(item), item_pages(item))
            images = "".join(
                f'<figure><a href="{uri}" target="_blank"><img alt="page {p}" src="{uri}"></a>'
                f"<figcaption>page {p} (click to zoom)</figcaption></figure>"
                for p, uri in crops
            )
            readings = item.meta.get("readings", {})
            why = item.meta.get("settled", {}).get("why", "")
            extra = ""
            if "reading3" in item.meta:
                extra += _reading("line reading (its own rules)", item.meta["reading3"])
            neighbour = above.get(item.id)
            if neighbour is not None:
                extra += _reading(
                    f"the item printed above: {neighbour.id} (as settled)", _as_reading(neighbour)
                )
            sections.append(
                f'<section class="item" id="{html.escape(item.id)}"><h2>{html.escape(item.id)}</h2>'
                f"<p>{html.escape(item.file or '')}, page {item.page}: {html.escape(why)}</p>"
                f'<div class="row"><div class="crops">{images}</div>'
                f"{_reading('path 1 (tables)', readings.get('tables'))}"
                f"{_reading('path 2 (ruling lines)', readings.get('rules'))}{extra}</div>"
                f"<pre class=stub>{html.escape(stub(item))}</pre></section>"
            )
        by_id = {i.id: i for i in items}
        for gap in gaps:
            pdf_path = by_name.get(gap.get("file", ""))
            crops = []
            if pdf_path is not None:
                if gap["file"] not in handles:
                    handles[gap["file"]] = pdfplumber.open(pdf_path)
                boxes = [
                    b for key in ("after", "before") for b in by_id.get(gap[key], _NONE).meta.get("boxes", [])
                ]
                crops = _crops(handles[gap["file"]], boxes)
            sections.append(_gap_section(gap, by_id, crops))
    finally:
        for handle in handles.values():
            handle.close()
    body = "".join(sections) or "<p>No disputed items.</p>"
    return (
        '<!DOCTYPE html><html lang="uk"><head><meta charset="utf-8"><title>Disputed items</title><style>'
        "body{font-family:sans-serif;margin:1em}.row{display:flex;gap:1em;align-items:flex-start}"
        ".row{flex-wrap:wrap}.crops{flex:1 1 100%}.crops img{width:100%;border:1px solid #999}"
        ".reading{flex:1;min-width:20em}.key{font-weight:bold}"
        "pre{background:#f4f4f4;padding:.5em;white-space:pre-wrap}</style></head><body>"
        f"<h1>Disputed items: {len(disputed)}</h1>"
        + (
            f"<p>Missing item numbers: {sum(g['count'] for g in gaps)} in {len(gaps)} gap(s).</p>"
            if gaps
            else ""
        )
        + "<p>Copy a stub into defaults/corrections.yaml, fix its "
        "fields from the page image, and re-run the corpus stage.</p>"
        f"{body}</body></html>\n"
    )


def write_review(
    items: Sequence[Item], pdfs: Sequence[Path], out_dir: str | Path, gaps: Sequence[dict[str, Any]] = ()
) -> Path:
    """Write ``out_dir/review.html``; returns its path."""
    path = Path(out_dir) / REVIEW_FILE
    write_text(path, review_html(items, pdfs, gaps))
    return path
