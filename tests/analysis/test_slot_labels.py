"""Slots named for a reader by the bank's own labels: the default bank is keyed А, Б, В, Г,
so its bank profile names "key in slot 2 (Б)" with the count beside the share, and Tables 4 and 8 name
their per-slot columns "Pick 2 (Б)" / "Key at 2 (Б)"; a Latin-keyed bank keeps "Pick B"; metric names
stay Latin whatever the labels."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from simulate import SimModel, simulate

from blindmcq.analysis import analyze, build_tables, gate
from blindmcq.analysis.tables import headline_metrics, slot_heading
from blindmcq.config.schema import validate_group
from blindmcq.datasets.registry import bank_key_labels

CYRILLIC = ["А", "Б", "В", "Г"]


@pytest.mark.parametrize(
    ("dataset", "labels"),
    [
        ({"name": "d", "loader": "pdf", "paths": ["x/*.pdf"]}, CYRILLIC),
        ({"name": "d", "loader": "customs", "path": "q.json"}, CYRILLIC),
        ({"name": "d", "loader": "lexam", "path": "l.jsonl"}, ["A", "B", "C", "D"]),
        ({"name": "d", "loader": "generic", "path": "b.csv", "key_format": "index"}, []),
        (
            {"name": "d", "loader": "generic", "path": "b.csv", "key_format": "label", "labels": "abcd"},
            ["a", "b", "c", "d"],
        ),
    ],
)
def test_the_banks_labels_come_from_its_loader_or_its_config(dataset: dict, labels: list[str]) -> None:
    assert bank_key_labels(validate_group("dataset", dataset), 4) == labels


def test_a_generic_banks_labels_are_read_from_its_first_key(tmp_path: Path) -> None:
    (tmp_path / "b.jsonl").write_text(
        json.dumps({"question": "q", "options": ["x", "y", "z", "w"], "answer": "В"}, ensure_ascii=False)
        + "\n",
        encoding="utf-8",
    )
    dataset = {"name": "d", "loader": "generic", "path": "b.jsonl", "options": "options", "key": "answer",
               "key_format": "label"}  # fmt: skip
    assert bank_key_labels(validate_group("dataset", dataset), 4, root=tmp_path) == CYRILLIC
    assert (
        bank_key_labels(validate_group("dataset", dataset), 4, root=tmp_path / "gone") == []
    )  # no file (a release): by position


def test_slot_headings_keep_latin_where_the_bank_is_latin_keyed() -> None:
    assert [slot_heading(s) for s in range(3)] == ["A", "B", "C"]
    assert [slot_heading(s, ["A", "B", "C"]) for s in range(3)] == ["A", "B", "C"]
    assert [slot_heading(s, CYRILLIC) for s in range(4)] == ["1 (А)", "2 (Б)", "3 (В)", "4 (Г)"]


def test_tables_name_a_cyrillic_keyed_banks_slots_by_its_labels(bank) -> None:
    items = bank[:120]
    models = [SimModel("gate", (0.4, 0.3, 0.2, 0.1), 0.15, 0.6),
              SimModel("m", (0.3, 0.3, 0.2, 0.2), 0.2, 0.7)]  # fmt: skip
    preds = simulate(items, models, seed=1)
    a = analyze(preds, gate=gate(preds, gate_model="gate"), sample_sizes=[40])
    latin = build_tables(a, items=items)
    own = build_tables(a, items=items, slot_labels=CYRILLIC)
    cols = list(own["table4"].shown.columns)
    assert {"Pick 1 (А)", "Pick 2 (Б)", "Key 3 (В)", "Key 4 (Г)"} <= set(cols)
    assert "Pick B" not in cols and "Pick B" in list(latin["table4"].shown.columns)
    # the numbers are the same; only the names a reader sees differ
    assert own["table4"].frame.equals(latin["table4"].frame)
    assert own["table4"].shown.to_numpy().tolist() == latin["table4"].shown.to_numpy().tolist()
    keys = Counter(it.key for it in items if it.usable)
    usable = sum(keys.values())
    shown = own["bank_profile"].shown.set_index("Measure")["Value"]
    for s, label in enumerate(CYRILLIC):
        assert shown[f"key in slot {s + 1} ({label})"] == f"{keys[s]} ({keys[s] / usable:.3f})"
    assert list(own["bank_profile"].frame["items"][:4]) == [keys[s] for s in range(4)]
    assert "key in slot B" in set(latin["bank_profile"].shown["Measure"])
    assert not any("Б" in k for k in headline_metrics(a))  # metric names stay Latin
