"""The audit's bounded-memory paths give the whole computation's results: lexical search in
chunks of items picks what one search over the bank picks, and the columnar surface picks and option
table equal a per-item construction, on the default bank's 340 items."""

from __future__ import annotations

import pandas as pd
import pytest

from blindmcq.auditing import audit
from blindmcq.auditing.profile import option_table, pointer_kind
from blindmcq.auditing.surface import PICK_COLUMNS, lexical_picks, strategy_names, surface_picks
from blindmcq.datasets.items import read_items
from blindmcq.surface import SCORED, chars, pick, tie_credit, words

ITEMS = audit.ROOT / "releases" / "default" / "results" / "corpus" / "items.jsonl"


@pytest.fixture(scope="module")
def items():
    return read_items(ITEMS)


def test_lexical_search_in_chunks_picks_what_one_search_picks(items, monkeypatch) -> None:
    from blindmcq.statutes.corpus import read_provisions
    from blindmcq.statutes.index import build_index
    from blindmcq.statutes.lexical import lexical_search
    from blindmcq.statutes.text import Analyzer, TextConfig

    monkeypatch.setattr(audit, "LEXICAL_CHUNK", 37)  # 340 items: ten chunks, the last one short
    chunked, _ = audit.lexical_picks(items, audit.STATUTES, seed=0)
    text = TextConfig()
    analyzer = Analyzer(text)
    index = build_index(read_provisions(audit.STATUTES), text, analyzer=analyzer)
    whole = lexical_picks(lexical_search(items, index, analyzer, seed=0))
    pd.testing.assert_frame_equal(chunked, whole.reset_index(drop=True))
    assert len(chunked) == sum(it.usable for it in items)


def test_columnar_surface_picks_equal_one_pick_per_item(items) -> None:
    usable = [it for it in items if it.usable]
    rows = []
    for name in strategy_names(usable):
        strategy, slot = (name, 0) if name in SCORED else ("constant", int(name.removeprefix("constant_")))
        for it in usable:
            chosen = pick(strategy, it.options, seed=0, slot=slot)
            rows.append((name, it.id, it.n_options, chosen.slot, it.key, chosen.slot == it.key, chosen.tie,
                         len(chosen.tied), tie_credit(it.key, chosen.tied)))  # fmt: skip
    expected = pd.DataFrame(rows, columns=list(PICK_COLUMNS))
    pd.testing.assert_frame_equal(surface_picks(items, seed=0), expected)


def test_columnar_option_table_equals_one_row_per_option(items) -> None:
    rows = [
        (
            it.id,
            it.bank,
            s,
            it.n_options,
            it.usable,
            it.usable and s == it.key,
            chars(o),
            words(o),
            pointer_kind(o),
        )
        for it in items
        for s, o in enumerate(it.options)
    ]
    columns = ["item_id", "bank", "slot", "n_options", "usable", "is_key", "chars", "words", "pointer"]
    pd.testing.assert_frame_equal(option_table(items), pd.DataFrame(rows, columns=columns))
