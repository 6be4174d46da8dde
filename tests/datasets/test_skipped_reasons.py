"""Every skipped item says why: the corpus loader (``datasets.registry.read_dataset``: its log line and
its verification report) and the audit name each unusable item with its reason."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from blindmcq.auditing.audit import AUDIT_GROUPS, Mapping, run_audit
from blindmcq.config.files import load_groups
from blindmcq.config.schema import validate_group
from blindmcq.datasets.items import Item, write_items
from blindmcq.datasets.registry import build_corpus, read_dataset

GOOD = [Item(f"t-b-{i}", "t", "b", i, f"Q{i}?", (f"a{i}", f"bb{i}", f"ccc{i}"), i % 3) for i in range(6)]
BAD = [
    Item("t-b-one", "t", "b", 90, "Q?", ("only",), None, status="malformed", flags=("invariant",)),
    Item("t-b-nokey", "t", "b", 91, "Q?", ("x", "y"), None, status="malformed", flags=("invariant",)),
    Item("t-b-out", "t", "b", 92, "Q?", ("x", "y", "z"), None, status="excluded"),
]
REASONS = {
    "t-b-one": "1 option (an item needs two or more)",
    "t-b-nokey": "no key among its options",
    "t-b-out": "excluded by the bank",
}


def test_the_corpus_loader_says_why_each_item_is_skipped(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "items.jsonl"
    write_items(path, [*GOOD, *BAD])
    dataset = {"name": "mixed", "loader": "items", "path": str(path)}
    with caplog.at_level(logging.WARNING, logger="blindmcq.datasets.registry"):
        items, report = read_dataset(validate_group("dataset", dataset), seed=0)
    assert len(items) == 9  # skipped items stay in the corpus, flagged, never dropped in silence
    sentence = report["skipped"]
    assert sentence.startswith("3 of 9 items are not usable and were skipped: ")
    for item_id, reason in REASONS.items():
        assert f"1 with {reason}: {item_id}" in sentence
    assert [r.getMessage() for r in caplog.records] == [f"mixed: {sentence}"]
    out = tmp_path / "corpus"
    build_corpus(dataset, out)
    verification = json.loads((out / "verification.json").read_text(encoding="utf-8"))
    assert verification["skipped"] == sentence


def test_a_bank_with_every_item_usable_reports_no_skip(tmp_path: Path) -> None:
    path = tmp_path / "items.jsonl"
    write_items(path, GOOD)
    _, report = read_dataset(
        validate_group("dataset", {"name": "clean", "loader": "items", "path": str(path)}), seed=0
    )
    assert "skipped" not in report


def test_the_audit_names_each_skipped_row_and_why(tmp_path: Path) -> None:
    bank = tmp_path / "bank.jsonl"
    rows = [
        {"question": f"Q{i}?", "choices": [f"a{i}", f"bb{i}", f"ccc{i}"], "answer": i % 3} for i in range(6)
    ]
    rows.insert(2, {"question": "Lonely?", "choices": ["only one"], "answer": 0})
    bank.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    mapping = Mapping(question="question", options=["choices"], key="answer", key_format="index")
    result = run_audit(bank, tmp_path / "out", mapping, model=None, configs=load_groups(AUDIT_GROUPS))
    (warning,) = [w for w in result.warnings if "not usable" in w]
    assert warning == (
        "1 of 7 items are not usable and were skipped: 1 with 1 option (an item needs two or more): line 3."
    )
    assert warning in (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
