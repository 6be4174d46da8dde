"""Review workflow: a disputed item on the review page (and in Chromium), then a correction round trip."""

from __future__ import annotations

import base64
import dataclasses
import io
import re
from pathlib import Path

import pytest
import yaml
from PIL import Image

from blindmcq.cli.extract import main
from blindmcq.corpus import extract, path_rules, review
from blindmcq.corpus.extract import extract_pdfs
from blindmcq.corpus.render import Rendered
from blindmcq.datasets.items import read_items
from blindmcq.errors import InputError

EVIL = "<script>alert(1)</script> & змінений текст"


@pytest.fixture
def misread(monkeypatch: pytest.MonkeyPatch) -> str:
    """Path 2 misreads item 2's second option (text that would break the page if not escaped).

    Both readings then keep the invariants but differ: item 2 is disputed. Only in-process (workers=1).
    """

    def rows(page, page_no):
        out = path_rules.page_rows(page, page_no)
        starts = [k for k, r in enumerate(out) if (r.number or "").strip() == "2"]
        if starts:
            k = starts[0] + 1
            out[k] = dataclasses.replace(out[k], option=EVIL)
        return out

    monkeypatch.setitem(extract.METHODS, "rules", rows)
    return "vkks-small-2"


def extract_small(small_bank: Rendered, out: Path, **kw):
    kw = {"seed": 0, **kw}
    return extract_pdfs([small_bank.path], out, source="vkks", workers=1, pilot_per_bank=2, **kw)


def test_review_page_shows_crop_and_both_readings(small_bank: Rendered, misread: str, tmp_path: Path) -> None:
    report = extract_small(small_bank, tmp_path / "out", review_dir=tmp_path / "review")
    assert [d["id"] for d in report["disputed"]] == [misread]
    assert report["settled"]["disputed"] == 1 == report["n_disputed"]
    assert report["counts"]["status"]["disputed"] == 1
    items = {i.id: i for i in read_items(tmp_path / "out" / "items.jsonl")}
    assert items[misread].status == "disputed" and not items[misread].usable
    assert items[misread].meta["readings"]["rules"]["options"][1] == EVIL
    page = (tmp_path / "review" / "review.html").read_text(encoding="utf-8")
    assert "<script>alert" not in page and "&lt;script&gt;alert(1)&lt;/script&gt; &amp; змінений" in page
    assert f'id="{misread}"' in page and items[misread].meta["fingerprint"] in page
    (uri,) = set(re.findall(r'src="data:image/png;base64,([^"]+)"', page))  # linked too: zoom
    crop = Image.open(io.BytesIO(base64.b64decode(uri)))
    assert 30 < crop.height < crop.width  # a band of the page, not the whole page
    # at 150 dpi, the page's full width
    assert crop.width == pytest.approx(595.28 * review.RESOLUTION / 72, abs=2) and review.RESOLUTION >= 150
    # every row of the item and its neighbours: the item's own rows are less than the crop
    boxes = items[misread].meta["boxes"]
    own = (max(b[2] for b in boxes) - min(b[1] for b in boxes)) * review.RESOLUTION / 72
    assert crop.height > own + 2 * 11 * review.RESOLUTION / 72  # at least a line of the rows above and below


def test_correction_round_trip(small_bank: Rendered, misread: str, tmp_path: Path) -> None:
    extract_small(small_bank, tmp_path / "out", review_dir=tmp_path / "review")
    disputed = {i.id: i for i in read_items(tmp_path / "out" / "items.jsonl")}[misread]
    truth = {i.id: i for i in small_bank.items}[misread]
    # The reviewer fills in the stub from the page image: here, the printed truth.
    entry = {"fingerprint": disputed.meta["fingerprint"], "options": list(truth.options), "key": truth.key}
    fixes = tmp_path / "corrections.yaml"
    fixes.write_text(yaml.safe_dump({misread: entry}, allow_unicode=True), encoding="utf-8")
    report = extract_small(small_bank, tmp_path / "fixed", corrections=fixes)
    items = read_items(tmp_path / "fixed" / "items.jsonl")
    assert items == small_bank.items  # every field the truth has, status ok again
    fixed = {i.id: i for i in items}[misread]
    assert fixed.meta["settled"]["path"] == "correction" and fixed.meta["corrected"] == ["key", "options"]
    assert report["corrections"]["applied"] == [misread] and report["disputed"] == []
    # Same run again: the same items (reproducible).
    extract_small(small_bank, tmp_path / "again", corrections=fixes)
    assert read_items(tmp_path / "again" / "items.jsonl") == items


def test_stale_correction_fails_loudly(small_bank: Rendered, tmp_path: Path, capsys) -> None:
    """Without the misreading, the source text differs from what the correction was written against."""
    fixes = tmp_path / "corrections.yaml"
    fixes.write_text("vkks-small-2:\n  fingerprint: 0123456789abcdef\n  key: 1\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"corrections\.yaml, item vkks-small-2: correction written for"):
        extract_small(small_bank, tmp_path / "out", corrections=fixes)
    assert not (tmp_path / "out").exists()
    argv = [str(small_bank.path), "--out", str(tmp_path / "o"), "--workers", "1", "--corrections", str(fixes)]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "item vkks-small-2" in err and "corrections.yaml" in err
    fixes.write_text("vkks-small-99:\n  fingerprint: 0123456789abcdef\n  key: 1\n", encoding="utf-8")
    with pytest.raises(
        InputError, match=r"item vkks-small-99: correction for an item the extraction no longer"
    ):
        extract_small(small_bank, tmp_path / "out", corrections=fixes)
    fixes.write_text("vkks-small-2:\n  fingerprint: x\n  answer: 1\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"item vkks-small-2: unknown fields \['answer'\]"):
        extract_small(small_bank, tmp_path / "out", corrections=fixes)


def test_committed_corrections_file_is_valid(repo_root: Path) -> None:
    from blindmcq.corpus.corrections import load_corrections

    assert isinstance(load_corrections(repo_root / "defaults" / "corrections.yaml"), dict)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--workers", "-1"], "--workers must be at least 1, got -1"),
        (["--pilot-per-bank", "-1"], "--pilot-per-bank must be 0 or more, got -1"),
        (["--page-timeout", "0"], "--page-timeout must be positive"),
    ],
)
def test_cli_rejects_bad_arguments(small_bank: Rendered, tmp_path: Path, capsys, extra, message) -> None:
    assert main([str(small_bank.path), "--out", str(tmp_path / "o"), *extra]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and message in err
    assert not (tmp_path / "o").exists()


def test_cli_rejects_out_that_is_a_file(small_bank: Rendered, tmp_path: Path, capsys) -> None:
    target = tmp_path / "taken"
    target.write_text("keep me", encoding="utf-8")
    assert main([str(small_bank.path), "--out", str(target), "--workers", "1"]) == 2
    assert "--out names an existing file" in capsys.readouterr().err
    assert target.read_text(encoding="utf-8") == "keep me"


def test_page_time_limit_names_the_page(small_bank: Rendered, tmp_path: Path) -> None:
    with pytest.raises(
        InputError, match=r"vkks-small\.pdf, page 1: page could not be read: page took longer"
    ):
        extract_small(small_bank, tmp_path / "out", page_timeout=1e-6)


# --- in the browser ----------------------------------------------------------------------------------


@pytest.mark.slow
def test_review_page_in_chromium(small_bank: Rendered, misread: str, tmp_path: Path, browser) -> None:
    extract_small(small_bank, tmp_path / "out", review_dir=tmp_path / "review")
    browser.get((tmp_path / "review" / "review.html").as_uri())
    sections = browser.execute_script("return [...document.querySelectorAll('section.item')].map(s => s.id);")
    assert sections == [misread]
    sizes = browser.execute_script(
        "return [...document.querySelectorAll('section.item img')]"
        ".map(i => [i.complete, i.naturalWidth, i.naturalHeight]);"
    )
    assert len(sizes) == 1 and sizes[0][0] and sizes[0][1] > 500 and sizes[0][2] > 30
    text = browser.execute_script("return document.body.innerText;")
    assert EVIL in text  # shown as text, not run
    assert browser.execute_script("return typeof window.alert_ran;") == "undefined"
    errors = [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]
    assert errors == []


def test_corpus_stage_applies_the_corrections_file(
    small_bank: Rendered, tmp_path: Path, repo_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from blindmcq.config.schema import PdfDataset
    from blindmcq.datasets.registry import build_corpus, corrections_path

    monkeypatch.chdir(repo_root)
    assert corrections_path(PdfDataset()) == Path("defaults/corrections.yaml")
    assert corrections_path(PdfDataset(corrections=None)) is None
    fixes = tmp_path / "corrections.yaml"
    fixes.write_text("vkks-small-2:\n  fingerprint: 0123456789abcdef\n  key: 1\n", encoding="utf-8")
    dataset = {"loader": "pdf", "paths": [str(small_bank.path)], "source": "vkks", "corrections": str(fixes)}
    with pytest.raises(InputError, match=r"item vkks-small-2: correction written for fingerprint"):
        build_corpus(dataset, tmp_path / "out")
    report = build_corpus({**dataset, "corrections": None}, tmp_path / "out")
    assert report["n_items"] == 6 and report["corrections"]["applied"] == []


def test_a_crop_of_an_item_ending_its_page_shows_the_next_page_top(cases_bank: Rendered) -> None:
    """The rows an item may own go on at the next page's top (a split option, a stem's rest)."""
    import pdfplumber
    from corpus_support import rows_of

    rows = rows_of(cases_bank.path, "tables")
    last = [r for r in rows if r.page == 1][-1]
    with pdfplumber.open(cases_bank.path) as pdf:
        crops = review._crops(pdf, [(1, last.top, last.bottom)])
        middle = next(r for r in rows if r.page == 1 and r.bottom < last.bottom - 40)
        alone = review._crops(pdf, [(1, middle.top, middle.bottom)])
    assert [p for p, _ in crops] == [1, 2] and [p for p, _ in alone] == [1]


def test_an_item_that_may_be_made_up_shows_the_item_above() -> None:
    from blindmcq.datasets.items import Item

    def item(n: int, **kw) -> Item:
        base = {"question": f"Питання {n}", "options": ("а", "б"), "key": 0, "status": "ok", "flags": ()}
        return Item(id=f"v-b-{n}", source="v", bank="b", number=n, file="f.pdf", page=1, **{**base, **kw})

    above = item(1, meta={})
    made_up = item(
        2,
        status="disputed",
        flags=("recovered_merge",),
        meta={"number_inferred": True, "fingerprint": "x", "settled": {"path": None, "why": "differ"}},
    )
    page = review.review_html([above, made_up], [])
    assert "the item printed above: v-b-1" in page and "Питання 1" in page
    page = review.review_html([above, dataclasses.replace(made_up, flags=(), meta={"fingerprint": "x"})], [])
    assert "the item printed above" not in page


def test_crops_of_a_page_read_turned_are_in_the_frame_it_was_read_in(tmp_path) -> None:
    """A page turned as a whole (/Rotate 270, displayed sideways) is read unturned; its crops are cut from
    the page image turned the same way, so they span the read page's width, not the displayed one's."""
    import pdfplumber
    from corpus_support import items_json

    from blindmcq.corpus.review import RESOLUTION, _crops
    from blindmcq.corpus.variants import BY_NAME, customs_records, render_variant

    bank = render_variant(
        BY_NAME["rotated-sideways"], customs_records(items_json()), tmp_path, n_items=16, seed=0
    )
    with pdfplumber.open(bank.path) as pdf:
        shown = pdf.pages[0]
        assert shown.rotation == 270 and shown.width > shown.height  # displayed landscape, sideways
        ((page_no, uri),) = _crops(pdf, [(1, 200.0, 260.0)])
    image = Image.open(io.BytesIO(base64.b64decode(uri.split(",", 1)[1])))
    assert page_no == 1 and abs(image.width - shown.height * RESOLUTION / 72) <= 2


def _line_reading_differs_on(monkeypatch: pytest.MonkeyPatch, number: int) -> None:
    """The line reading reads item ``number``'s first option otherwise (one word more), so that it disputes
    the item the paths settled: the case of a dispute made after settling, whatever the bank holds."""
    real = extract.file_rows

    def rows(pages, file=""):
        out, info = real(pages, file)
        k = next(k for k, r in enumerate(out) if (r.number or "").strip() == str(number))
        out[k] = dataclasses.replace(out[k], option=f"{out[k].option} зайве")
        return out, info

    monkeypatch.setattr(extract, "file_rows", rows)


@pytest.mark.parametrize("name", ["stem-tail-below", "tail-across-rule", "overprint", "key-split-3"])
def test_every_disputed_item_is_cropped_whole_on_every_page_it_touches(
    tmp_path: Path, name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each disputed item (the line reading's disputes included, whose item was settled by the paths and
    kept no boxes) has a crop on every page it touches; each crop holds all the rows the paths and the line
    reading gave it, cuts no printed glyph, and shows text printed outside the rules beside it (a stem's
    tail under the last rule, a line across it, an overprint). In ``key-split-3`` the line reading is made
    to read an item that a page break crosses otherwise (the bank itself may have no such dispute)."""
    import pdfplumber
    from corpus_support import items_json

    from blindmcq.corpus.outside import STRAY_GAP
    from blindmcq.corpus.variants import BY_NAME, customs_records, render_variant

    bank = render_variant(BY_NAME[name], customs_records(items_json()), tmp_path, n_items=80, seed=0)
    crossing = None
    if name == "key-split-3":
        truth = {i.id: i for i in bank.items}
        crossing = next(k for k in bank.crossing if truth[k].status == "ok")
        _line_reading_differs_on(monkeypatch, truth[crossing].number)
    items, _ = extract.extract_items([bank.path], source="var", workers=1)
    disputed = [i for i in items if i.status == "disputed"]
    assert disputed
    if crossing is not None:
        (made,) = [i for i in disputed if i.id == crossing]
        assert made.meta["settled"]["why"].startswith("the third reading (reading3) differs: options")
        assert len(review.item_pages(made)) == 2
    with pdfplumber.open(bank.path) as pdf:
        for item in disputed:
            boxes = review.item_boxes(item)
            assert boxes, f"{item.id}: no rows to crop"
            spans = review.crop_spans(pdf, boxes, review.item_pages(item))
            by_page = {p: (t, b) for p, t, b in spans}
            assert {int(b[0]) for b in boxes} | set(review.item_pages(item)) <= set(by_page)
            for page_no, top, bottom in boxes:
                t, b = by_page[int(page_no)]
                assert t <= top + 0.01 and bottom - 0.01 <= b, f"{item.id}: a row outside its crop"
            for page_no, (t, b) in by_page.items():
                page = pdf.pages[page_no - 1]
                chars = [c for c in page.chars if c["text"].strip()]
                assert not any(c["top"] < t < c["bottom"] or c["top"] < b < c["bottom"] for c in chars)
                if "text printed below the table" in item.meta["settled"]["why"] and page_no == item.page:
                    last = max(e["top"] for e in page.edges if e["orientation"] == "h")
                    tail = [c for c in chars if last - 6 < c["top"] < last + STRAY_GAP]
                    assert tail and all(t <= c["top"] and c["bottom"] <= b for c in tail)
