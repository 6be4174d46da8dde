"""extract_pdfs end to end: outputs, agreement report, parallel = serial, and bad files named."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from reportlab.lib.pdfencrypt import StandardEncryption
from reportlab.pdfgen.canvas import Canvas

from blindmcq.cli.extract import main
from blindmcq.corpus.extract import extract_items, extract_pdfs
from blindmcq.corpus.render import ItemSpec, Rendered, register_fonts, render_pdf
from blindmcq.datasets.items import read_items
from blindmcq.errors import InputError


def test_outputs_and_report(cases_bank: Rendered, tmp_path: Path) -> None:
    """Pages read in parallel chunks (7 pages, 2 workers) and still exactly the ground truth."""
    report = extract_pdfs([cases_bank.path], tmp_path, source="vkks", workers=2, pilot_per_bank=5, seed=0)
    items = read_items(tmp_path / "items.jsonl")
    assert items == cases_bank.items  # bank "cases" comes from the file name vkks-cases.pdf
    assert all(i.meta["confirmed"] == {"stem": True, "options": True, "key": True} for i in items)
    assert json.loads((tmp_path / "verification.json").read_text(encoding="utf-8")) == report
    assert report["confirmed_rate"] == {"stem": 1.0, "options": 1.0, "key": 1.0, "all": 1.0}
    assert report["failing_ids"] == {k: [] for k in ("stem", "options", "key", "only_path1", "only_path2")}
    want = cases_bank.items
    assert report["counts"]["excluded"] == sum(i.status == "excluded" for i in want) == 2
    assert report["counts"]["recovered"] == 2
    assert report["counts"]["invariant_breaking"] == sum(i.status == "malformed" for i in want) + 1
    (file_report,) = report["files"]
    assert file_report["mark_column"] == {
        "fourth_column": "mark",
        "values": {
            "неправильна": {"count": 117, "means": "wrong"},
            "правильна": {"count": 40, "means": "right"},
        },
    }
    keys = file_report["keys"]
    assert (keys["items"], keys["keyed"], keys["no_single_key"]) == (38, 36, 2)
    assert sum(keys["slots"].values()) == 36
    assert file_report["items_with_option_labels"] == 0
    outside = file_report["outside_cells"]  # the title on page 1, "Сторінка N" on every page
    assert outside["pages"]["1"] == {"lines": 2, "chars": 30} and outside["pages"]["2"]["lines"] == 1
    assert len(outside["pages"]) == cases_bank.n_pages and outside["stray"] == []
    third = file_report["reading3"]  # the line reading, sharing no layout logic with the paths, agrees
    assert third.pop("lines")["pitch"] == 11.0  # the renderer's leading
    assert third == {
        "fourth_column": "marks ('правильна' marks the right option)",
        "items": 40,
        "agree": 40,
        "differ": [],
        "extra": [],
    }
    added = ("mark_column", "keys", "items_with_option_labels", "outside_cells", "reading3", "heading_rows")
    assert [{k: v for k, v in f.items() if k not in added} for f in report["files"]] == [
        {
            "file": "vkks-cases.pdf",
            "bank": "cases",
            "pages": cases_bank.n_pages,
            "layout": {
                "orientation": "portrait",
                "header": ["№", "Питання", "Варіанти відповіді", "Позначка"],
                "fourth_column": "mark",
                "marks_every_option": True,
                "number_forms": ["1"],
                "right_words": ["правильна"],
            },
            "items_path1": 40,
            "items_path2": 40,
            "pages_without_table": [],
        }
    ]
    assert report["settled"] == {"both": 40, "tables": 0, "rules": 0, "correction": 0, "disputed": 0}
    assert report["disputed"] == [] and report["won_by_one_path"] == []
    sample = report["pilot"]["sample"]["cases"]
    assert len(sample) == 5 and len({s["id"] for s in sample}) == 5


def text_pdf(path: Path, *, encrypt: bool = False, pages: int = 1) -> Path:
    register_fonts()
    canvas = Canvas(str(path), encrypt=StandardEncryption("user", "owner") if encrypt else None)
    for _ in range(pages):
        canvas.setFont("DejaVuSans", 10)
        canvas.drawString(72, 720, "Лист без таблиці")
        canvas.showPage()
    canvas.save()
    return path


def three_column_pdf(path: Path) -> Path:
    canvas = Canvas(str(path))
    canvas.drawString(72, 760, "title")
    canvas.showPage()
    for x in (72, 172, 272, 372):
        canvas.line(x, 700, x, 600)
    for y in (700, 650, 600):
        canvas.line(72, y, 372, y)
    canvas.drawString(80, 680, "1")
    canvas.showPage()
    canvas.save()
    return path


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (
            lambda p: p.write_bytes(b"%PDF-1.4\n1 0 obj garbage\n") and p,
            r"file .*bad\.pdf: not a readable PDF",
        ),
        (lambda p: p.write_bytes(b"") or p, r"file .*bad\.pdf: empty file"),
        (lambda p: text_pdf(p, encrypt=True), r"file .*bad\.pdf: encrypted PDF"),
        (lambda p: text_pdf(p, pages=2), r"file .*bad\.pdf: no ruled question table found"),
        (three_column_pdf, r"file .*bad\.pdf, page 2: page could not be read: .*3 columns, expected 4"),
    ],
    ids=["corrupt", "empty", "encrypted", "non-table", "three-columns"],
)
def test_bad_file_named_and_nothing_written(small_bank: Rendered, tmp_path: Path, make, message: str) -> None:
    bad = tmp_path / "bad.pdf"
    make(bad)
    out = tmp_path / "out"
    with pytest.raises(InputError, match=message):
        extract_pdfs([small_bank.path, bad], out, source="vkks", workers=2, seed=0)
    assert not out.exists() or not any(out.iterdir())


def test_missing_file_and_colliding_banks(
    small_bank: Rendered, tmp_path: Path, customs_specs: list[ItemSpec]
) -> None:
    with pytest.raises(InputError, match=r"file .*nope\.pdf: PDF not found"):
        extract_items([tmp_path / "nope.pdf"], source="vkks")
    copy = tmp_path / "vkks-small.pdf"
    copy.write_bytes(small_bank.path.read_bytes())
    for twice in ([small_bank.path, copy], [small_bank.path, small_bank.path]):
        with pytest.raises(InputError, match=r"vkks-small\.pdf: the same PDF is given twice \(also "):
            extract_items(twice, source="vkks", workers=1)
    renumbered = [dataclasses.replace(s, number=n) for n, s in enumerate(customs_specs[6:9], 1)]
    other = render_pdf(renumbered, tmp_path / "other.pdf", source="vkks", bank="small")
    with pytest.raises(InputError, match="item id vkks-small-1 also comes from"):
        extract_items([small_bank.path, other.path], source="vkks", bank="small", workers=1)


def test_cli(small_bank: Rendered, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(small_bank.path), "--out", str(tmp_path), "--source", "vkks", "--workers", "1"]) == 0
    assert "6 items from 1 file(s)" in capsys.readouterr().out
    assert read_items(tmp_path / "items.jsonl") == small_bank.items
    assert main([str(small_bank.path), "--out", str(tmp_path / "x"), "--bank", "x", "--workers", "1"]) == 0
    assert [i.id for i in read_items(tmp_path / "x" / "items.jsonl")] == [f"vkks-x-{n}" for n in range(1, 7)]
    assert main([str(tmp_path / "missing.pdf"), "--out", str(tmp_path / "o")]) == 2
    assert "missing.pdf: PDF not found" in capsys.readouterr().err


def test_number_printed_twice_is_disputed_not_a_stop(tmp_path: Path, customs_specs: list[ItemSpec]) -> None:
    """Item 3 printed twice: the file still extracts; both items kept, ids unique, both disputed, on the
    review page, and read back from items.jsonl."""
    numbers = [1, 2, 3, 3, 4, 5]
    specs = [dataclasses.replace(s, number=n) for n, s in zip(numbers, customs_specs[:6], strict=True)]
    rendered = render_pdf(specs, tmp_path / "vkks-dup.pdf", source="vkks", bank="dup")
    report = extract_pdfs(
        [rendered.path], tmp_path / "out", source="vkks", workers=1, review_dir=tmp_path / "rv", seed=0
    )
    items = read_items(tmp_path / "out" / "items.jsonl")
    assert [i.id for i in items] == [
        "vkks-dup-1",
        "vkks-dup-2",
        "vkks-dup-3",
        "vkks-dup-3~2",
        "vkks-dup-4",
        "vkks-dup-5",
    ]
    truth = rendered.items
    for got, want in zip(items, truth, strict=True):
        assert (got.number, got.question, got.options, got.key) == (
            want.number,
            want.question,
            want.options,
            want.key,
        )
    assert [i.status for i in items] == ["ok", "ok", "disputed", "disputed", "ok", "ok"]
    assert [d["id"] for d in report["disputed"]] == ["vkks-dup-3", "vkks-dup-3~2"]
    assert report["disputed"][0]["why"] == "item number 3 is printed 2 times (pages [1, 1])"
    html = (tmp_path / "rv" / "review.html").read_text(encoding="utf-8")
    assert "vkks-dup-3~2" in html and "vkks-dup-3" in html


def test_corpus_stage_passes_the_banks_option_count(small_bank: Rendered, tmp_path: Path) -> None:
    """``dataset.n_options`` reaches the extractor: items are checked against it (null: four)."""
    from blindmcq.errors import ConfigError
    from blindmcq.stages.corpus import build_corpus

    dataset = {"loader": "pdf", "paths": [str(small_bank.path)], "source": "vkks", "corrections": None}
    build_corpus(dataset, tmp_path / "four")
    assert read_items(tmp_path / "four" / "items.jsonl") == small_bank.items
    build_corpus({**dataset, "n_options": 5}, tmp_path / "five")
    five = read_items(tmp_path / "five" / "items.jsonl")
    assert [i.id for i in five] == [i.id for i in small_bank.items]
    assert all(i.status == "malformed" and "invariant" in i.flags and i.key is None for i in five)
    for bad in ("4", 1, True):
        with pytest.raises(ConfigError, match=r"dataset\.n_options"):
            build_corpus({**dataset, "n_options": bad}, tmp_path / "bad")


def test_reading_pages_restores_gc_and_keeps_pdfminer_debugging_possible(small_bank: Rendered) -> None:
    """The faster page reading is contained: the collector's thresholds come back; pdfminer's debug calls
    become a no-op only while its debug output is off."""
    import gc
    import logging

    from blindmcq.corpus.extract import quiet_pdfminer, read_block

    before = gc.get_threshold()
    assert read_block(str(small_bank.path), [1], ("tables", "rules")).error is None
    assert gc.get_threshold() == before
    logger = logging.getLogger("pdfminer.psparser")
    level = logger.level
    try:
        vars(logger).pop("debug", None)
        logger.setLevel(logging.DEBUG)
        quiet_pdfminer()
        assert "debug" not in vars(logger)  # debugging pdfminer: its log calls are left alone
        logger.setLevel(logging.WARNING)
        quiet_pdfminer()
        assert "debug" in vars(logger) and logger.debug("nexttoken: %r", 1) is None
    finally:
        logger.setLevel(level)
