"""Both paths recover every rendered item exactly: stem, options in order, key, status, flags, page."""

from __future__ import annotations

import dataclasses
import re

import pytest
from corpus_support import PATHS, rows_of

from blindmcq.corpus.assemble import assemble
from blindmcq.corpus.render import ItemSpec, Rendered, render_pdf
from blindmcq.corpus.rows import Row
from blindmcq.datasets.items import Item


def extract(rendered: Rendered, method: str, rows: list[Row] | None = None) -> list[Item]:
    rows = rows if rows is not None else rows_of(rendered.path, method)
    first = rendered.items[0]
    return assemble(rows, source=first.source, bank=first.bank, file=rendered.path.name)


def assert_same(got: list[Item], want: list[Item]) -> None:
    assert [i.id for i in got] == [i.id for i in want]
    for g, w in zip(got, want, strict=True):
        assert g == w, g.id
        for key in ("excluded_note", "number_inferred"):
            assert g.meta.get(key) == w.meta.get(key), (g.id, key)


@pytest.mark.parametrize("method", sorted(PATHS))
def test_every_case_recovered_exactly(
    cases_bank: Rendered, cases_rows: dict[str, list[Row]], method: str
) -> None:
    assert_same(extract(cases_bank, method, cases_rows[method]), cases_bank.items)


def test_bank_covers_every_case(cases_bank: Rendered, cases_rows: dict[str, list[Row]]) -> None:
    """The fixture really contains what the round trip claims to cover."""
    flags = {f for i in cases_bank.items for f in i.flags}
    assert flags == {"excluded", "invariant", "blank_option", "duplicate_options", "recovered_merge"}
    assert {i.status for i in cases_bank.items} == {"ok", "excluded", "malformed"}
    assert cases_bank.n_pages >= 3 and cases_bank.crossing
    assert any(len(i.options) == 5 for i in cases_bank.items)
    assert sum(i.meta.get("number_inferred", False) for i in cases_bank.items) == 1
    cells = [c for r in cases_rows["tables"] for c in (r.question, r.option) if c]
    soft = [c for c in cells if re.search(r"[^\W\d_]-\n[^\W\d_]", c)]
    assert soft, "no hyphenated line break was printed"


def test_crossing_item_continues_on_next_page(cases_bank: Rendered, cases_rows: dict[str, list[Row]]) -> None:
    items = {i.id: i for i in extract(cases_bank, "rules", cases_rows["rules"])}
    for item_id in cases_bank.crossing:
        pages = items[item_id].meta["pages"]
        assert len(pages) == 2 and pages[1] == pages[0] + 1


def test_fused_number_cell_holds_two_numbers(cases_bank: Rendered, cases_rows: dict[str, list[Row]]) -> None:
    """The missing rule really fuses the number cells; the assembler splits them again."""
    fused = [i for i in cases_bank.items if "recovered_merge" in i.flags and "number_inferred" not in i.meta]
    assert len(fused) == 1
    numbers = [r.number for r in cases_rows["tables"] if r.number and "\n" in r.number]
    assert numbers == [f"{fused[0].number - 1}\n{fused[0].number}"]


@pytest.mark.parametrize("method", sorted(PATHS))
def test_tall_items_cross_several_pages(tmp_path, customs_specs: list[ItemSpec], method: str) -> None:
    """Items with long options spread over pages; no hyphenation, so only wrapping is exercised."""
    long = [
        dataclasses.replace(s, options=tuple(" ".join([o] * 6) for o in s.options))
        for s in customs_specs[:12]
    ]
    rendered = render_pdf(long, tmp_path / "vkks-long.pdf", source="vkks", bank="long", hyphenate=False)
    assert len(rendered.crossing) >= 2
    assert_same(extract(rendered, method), rendered.items)


def test_fused_blank_at_page_top_is_still_recovered(tmp_path, customs_specs: list[ItemSpec]) -> None:
    """A missing number on the first row of a page: nothing to fuse into, the number is still inferred."""
    specs = list(customs_specs[:24])
    probe = render_pdf(specs, tmp_path / "probe.pdf", source="vkks", bank="t")
    items = probe.items
    top = next(
        i
        for i in range(1, len(items))
        if items[i].page == items[i - 1].page + 1 and items[i - 1].id not in probe.crossing
    )
    specs[top] = dataclasses.replace(specs[top], fused="blank")
    rendered = render_pdf(specs, tmp_path / "vkks-t.pdf", source="vkks", bank="t")
    assert rendered.items[top].flags == ("recovered_merge",)
    assert rendered.items[top].meta["number_inferred"]
    for method in PATHS:
        assert_same(extract(rendered, method), rendered.items)
