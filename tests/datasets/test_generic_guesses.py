"""The generic loader's guesses are checked against the data: text keys before indices, every row's key,
repeated items, ragged headerless rows, and why an item is skipped. Fixtures generated in tmp_path."""

from __future__ import annotations

import csv
import json
import logging
import random
from pathlib import Path

import pytest

from blindmcq.auditing.audit import skipped_sentence
from blindmcq.config.schema import validate_group
from blindmcq.datasets.generic import load_generic
from blindmcq.datasets.registry import load_dataset
from blindmcq.errors import InputError


def write_csv(path: Path, rows: list[list[object]], header: list[str] | None = None) -> Path:
    with path.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh)
        if header:
            writer.writerow(header)
        writer.writerows(rows)
    return path


HEADER = ["question", "A", "B", "C", "D", "answer"]


def test_numeric_options_keyed_by_their_text_are_not_read_as_indices(tmp_path: Path) -> None:
    rng = random.Random(0)
    rows, truth = [], []
    for i in range(50):
        opts = ["1", "2", "3", "4"]
        rng.shuffle(opts)
        rows.append([f"How many, case {i}?", *opts, opts[i % 4]])
        truth.append(i % 4)
    items = load_generic(write_csv(tmp_path / "num.csv", rows, HEADER))
    assert [item.key for item in items] == truth  # 50 of 50, not the 1-based reading's handful


def test_digit_keys_that_clash_with_option_texts_stop_naming_the_rows(tmp_path: Path) -> None:
    # 1-based positions, options that are numbers too: row 2's key "2" is option 1 by position but the
    # text of option 0, so the reading is ambiguous
    rows = [["q one?", "7", "8", "9", "10", "4"], ["q two?", "2", "5", "6", "11", "2"],
            ["q three?", "12", "13", "14", "15", "1"]]  # fmt: skip
    with pytest.raises(InputError, match=r"name another option at rows 2; say which with key_format"):
        load_generic(write_csv(tmp_path / "clash.csv", rows, HEADER))
    items = load_generic(tmp_path / "clash.csv", key_format="index1")
    assert [item.key for item in items] == [3, 1, 0]


def test_a_guess_that_leaves_later_keys_unmatched_names_the_rows(tmp_path: Path) -> None:
    rows = [[f"question {i}?", f"a{i}", f"b{i}", f"c{i}", f"d{i}", f"b{i}"] for i in range(60)]
    rows[55][5] = "none of them"
    rows[58][5] = "zzz"
    with pytest.raises(InputError) as err:
        load_generic(write_csv(tmp_path / "late.csv", rows, HEADER))
    message = str(err.value)
    assert "2 of 60 rows have a key that does not read as key_format text (row 56, row 59)" in message
    assert "\n" not in message


def test_repeated_items_are_dropped_and_said_or_kept_and_flagged(tmp_path: Path, caplog) -> None:
    rows = [[f"Question {i}?", f"a{i}", f"b{i}", f"c{i}", f"d{i}", "ABCD"[i % 4]] for i in range(40)]
    path = write_csv(tmp_path / "dups.csv", rows + rows[:5], HEADER)
    notes: list[str] = []
    with caplog.at_level(logging.WARNING):
        items = load_generic(path, notes=notes)
    assert len(items) == 40
    assert notes == [
        "5 of 45 rows repeat an earlier item (same question, options and key): row 41 (= row 1), "
        "row 42 (= row 2), row 43 (= row 3), row 44 (= row 4), row 45 (= row 5); dropped "
        "(dataset.duplicates: keep, or --keep-duplicates, keeps them)"
    ]
    assert notes[0] in caplog.text
    kept = load_generic(path, duplicates="keep")
    assert len(kept) == 45 and [i.number for i in kept if "duplicate_item" in i.flags] == [41, 42, 43, 44, 45]
    config = {"name": "d", "loader": "generic", "path": str(path), "duplicates": "keep"}
    assert len(load_dataset(validate_group("dataset", config))) == 45


def test_headerless_rows_with_three_four_and_five_options_read_with_the_key_last(tmp_path: Path) -> None:
    rows = []
    for i in range(12):
        n = 3 + i % 3
        rows.append([f"Q{i}?", *[f"option {j} of {i}" for j in range(n)], "ABCDE"[i % n]])
    items = load_generic(write_csv(tmp_path / "ragged.csv", rows), header=False)
    assert [item.n_options for item in items] == [3 + i % 3 for i in range(12)]
    assert [item.key for item in items] == [i % (3 + i % 3) for i in range(12)]
    assert all(not item.flags for item in items)  # no padding shown as a blank option
    with pytest.raises(InputError, match=r"different numbers of fields.*the key last"):
        load_generic(tmp_path / "ragged.csv", header=False, key="1", question="0", option_columns=["2", "3"])


def test_every_skipped_item_says_why(tmp_path: Path) -> None:
    path = tmp_path / "one.jsonl"
    rows = [{"question": f"Question {i}?", "choices": ["x"] if i == 3 else ["x", "y", "z"], "answer": 0}
            for i in range(6)]  # fmt: skip
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    items = load_generic(path)
    assert skipped_sentence(items) == (
        "1 of 6 items are not usable and were skipped: 1 with 1 option (an item needs two or more): line 4."
    )
