"""The review page: per disputed item, its page crop beside both paths' readings, and a correction stub.

One self-contained HTML file (crops embedded as PNG data URIs), all text escaped. The stub is what goes
into ``defaults/corrections.yaml`` once the reviewer has filled in the right fields.
"""

from __future__ import annotations

import base64
import html
import io
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pdfplumber
import yaml

from blindmcq.atomic import write_text
from blindmcq.datasets.items import Item

REVIEW_FILE = "review.html"
RESOLUTION = 100  # dpi of the page crops
MARGIN = 4.0  # pt above and below the item's rows


def _crops(pdf: Any, boxes: Sequence[Sequence[float]]) -> list[tuple[int, str]]:
    """PNG data URIs of the item's rows, one per page, with the page number."""
    spans: dict[int, list[float]] = defaultdict(list)
    for page_no, top, bottom in boxes:
        spans[int(page_no)] += [top, bottom]
    out = []
    for page_no in sorted(spans):
        page = pdf.pages[page_no - 1]
        top = max(0.0, min(spans[page_no]) - MARGIN)
        bottom = min(float(page.height), max(spans[page_no]) + MARGIN)
        if bottom <= top:
            top, bottom = 0.0, float(page.height)
        image = page.crop((0, top, float(page.width), bottom)).to_image(resolution=RESOLUTION).original
        buf = io.BytesIO()
        image.save(buf, format="PNG")
        out.append((page_no, "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")))
    return out


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


def review_html(items: Sequence[Item], pdfs: Sequence[Path]) -> str:
    """The page's HTML for the disputed ``items`` (their files among ``pdfs``)."""
    by_name = {p.name: p for p in pdfs}
    disputed = [i for i in items if i.status == "disputed"]
    sections = []
    handles: dict[str, Any] = {}
    try:
        for item in disputed:
            pdf_path = by_name.get(item.file or "")
            crops = []
            if pdf_path is not None:
                if item.file not in handles:
                    handles[item.file or ""] = pdfplumber.open(pdf_path)
                crops = _crops(handles[item.file or ""], item.meta.get("boxes", []))
            images = "".join(
                f'<figure><img alt="page {p}" src="{uri}"><figcaption>page {p}</figcaption></figure>'
                for p, uri in crops
            )
            readings = item.meta.get("readings", {})
            why = item.meta.get("settled", {}).get("why", "")
            sections.append(
                f'<section class="item" id="{html.escape(item.id)}"><h2>{html.escape(item.id)}</h2>'
                f"<p>{html.escape(item.file or '')}, page {item.page}: {html.escape(why)}</p>"
                f'<div class="row"><div class="crops">{images}</div>'
                f"{_reading('path 1 (tables)', readings.get('tables'))}"
                f"{_reading('path 2 (ruling lines)', readings.get('rules'))}</div>"
                f"<pre class=stub>{html.escape(stub(item))}</pre></section>"
            )
    finally:
        for handle in handles.values():
            handle.close()
    body = "".join(sections) or "<p>No disputed items.</p>"
    return (
        '<!DOCTYPE html><html lang="uk"><head><meta charset="utf-8"><title>Disputed items</title><style>'
        "body{font-family:sans-serif;margin:1em}.row{display:flex;gap:1em;align-items:flex-start}"
        ".crops img{max-width:560px;border:1px solid #999}.reading{flex:1}.key{font-weight:bold}"
        "pre{background:#f4f4f4;padding:.5em;white-space:pre-wrap}</style></head><body>"
        f"<h1>Disputed items: {len(disputed)}</h1><p>Copy a stub into defaults/corrections.yaml, fix its "
        "fields from the page image, and re-run the corpus stage.</p>"
        f"{body}</body></html>\n"
    )


def write_review(items: Sequence[Item], pdfs: Sequence[Path], out_dir: str | Path) -> Path:
    """Write ``out_dir/review.html``; returns its path."""
    path = Path(out_dir) / REVIEW_FILE
    write_text(path, review_html(items, pdfs))
    return path
