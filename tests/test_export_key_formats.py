"""``blindmcq export`` reads a bank's key in every format ``blindmcq audit`` reads (``KEY_FORMATS``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from blindmcq.cli import export as export_cli
from blindmcq.vocabulary import KEY_FORMATS

# the key of each row (Berlin, then Pacific) written in each format
KEYS = {"index": ("2", "1"), "index1": ("3", "2"), "label": ("C", "B"), "text": ("Berlin", "Pacific")}


def test_every_key_format_has_a_case() -> None:
    assert set(KEYS) == set(KEY_FORMATS)


@pytest.mark.parametrize("key_format", KEY_FORMATS)
def test_export_reads_the_key_in_each_format(tmp_path: Path, key_format: str) -> None:
    first, second = KEYS[key_format]
    bank = tmp_path / "bank.csv"
    rows = ["question,A,B,C,D,answer", f"Capital of Germany?,Paris,Rome,Berlin,Madrid,{first}",
            f"Largest ocean?,Atlantic,Pacific,Indian,Arctic,{second}"]  # fmt: skip
    bank.write_text("\n".join(rows) + "\n", encoding="utf-8")
    out = tmp_path / "out"
    argv = ["lm-eval", str(bank), "--out", str(out), "--sample", "all", "--key", "answer",
            "--key-format", key_format]  # fmt: skip
    assert export_cli.main(argv) == 0
    items = [json.loads(line) for line in (out / "items.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [(it["question"], it["key"]) for it in items] == [
        ("Capital of Germany?", 2),
        ("Largest ocean?", 1),
    ]
