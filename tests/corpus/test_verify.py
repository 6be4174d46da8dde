"""Comparison of the two paths: what counts as agreement, and what is reported."""

from __future__ import annotations

import dataclasses

from blindmcq.corpus.verify import compare, confirm, pilot_sample
from blindmcq.datasets.items import Item


def item(number: int, bank: str = "b", **kw) -> Item:
    base = dict(question="Хто має право?", options=("а", "б", "в", "г"), key=0)
    base.update(kw)
    return Item(id=f"s-{bank}-{number}", source="s", bank=bank, number=number, **base)


def test_whitespace_and_hyphens_are_not_disagreement() -> None:
    a = item(
        1, question="Хто має право законо-давчої ініціативи?", options=("цивільно-правова", "б", "в", "г")
    )
    b = item(
        1, question="Хто  має право законодавчої\nініціативи?", options=("цивільноправова", "б", "в", "г")
    )
    assert confirm(a, b) == {"stem": True, "options": True, "key": True}
    assert confirm(a, None) == {"stem": False, "options": False, "key": False}


def test_report_lists_failing_ids_per_field() -> None:
    first = [item(1), item(2), item(3), item(4, flags=("excluded",), status="excluded")]
    second = [
        item(1),
        item(2, options=("б", "а", "в", "г")),
        dataclasses.replace(item(3), key=1),
        item(5),
    ]
    report, confirmed = compare(first, second, per_bank=2, seed=1)
    assert report["n_items"] == 5
    assert report["failing_ids"] == {
        "stem": ["s-b-4", "s-b-5"],
        "options": ["s-b-2", "s-b-4", "s-b-5"],
        "key": ["s-b-3", "s-b-4", "s-b-5"],
        "only_path1": ["s-b-4"],
        "only_path2": ["s-b-5"],
    }
    assert report["confirmed_count"] == {"stem": 3, "options": 2, "key": 2, "all": 1}
    assert report["confirmed_rate"]["all"] == 0.2
    assert report["counts"]["excluded"] == 1 and report["counts"]["status"]["excluded"] == 1
    assert confirmed["s-b-1"] == {"stem": True, "options": True, "key": True}


def test_pilot_sample_is_stratified_and_seeded() -> None:
    items = [item(n, bank) for bank in ("x", "y") for n in range(1, 31)] + [item(1, "z")]
    one = pilot_sample(items, per_bank=5, seed=7)
    assert one == pilot_sample(list(reversed(items)), per_bank=5, seed=7)
    assert one != pilot_sample(items, per_bank=5, seed=8)
    assert {b: len(s) for b, s in one.items()} == {"x": 5, "y": 5, "z": 1}
    assert all(s["id"].startswith(f"s-{b}-") for b, ss in one.items() for s in ss)
