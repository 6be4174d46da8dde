"""Whole-file plausibility: a misread mark or key column stops the file with one line, nothing written."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from blindmcq.cli.extract import main
from blindmcq.corpus.plausible import check_file, key_slots
from blindmcq.corpus.render import ItemSpec, render_pdf
from blindmcq.datasets.items import Item
from blindmcq.errors import InputError


def items(keys: list[int | None], n_options: int = 4) -> list[Item]:
    return [
        Item(
            id=f"v-b-{n}",
            source="v",
            bank="b",
            number=n,
            question="П?",
            options=tuple("абвгде"[:n_options]),
            key=k,
            status="ok" if k is not None else "malformed",
            flags=() if k is not None else ("invariant",),
        )
        for n, k in enumerate(keys, 1)
    ]


def test_keys_all_in_one_slot_stop_the_file() -> None:
    with pytest.raises(
        InputError, match=r"^file f\.pdf: every one of 12 keys is option 1 \(fourth column values"
    ):
        check_file(items([0] * 12), file="f.pdf", values={"1": {}, "": {}})
    assert key_slots(items([0] * 11))["slots"] == {"1": 11}
    check_file(items([0] * 11), file="f.pdf")  # too few items to tell


def test_keys_nearly_all_in_one_slot_stop_the_file() -> None:
    with pytest.raises(InputError, match=r"option 1 holds 38 of 40 keys \(fourth column"):
        check_file(items([0] * 38 + [1, 2]), file="f.pdf", values={"1": {}})
    # a real sample (hyphen-narrow, seed 1: 90 of 196 in option 1; 37% of all customs items) passes
    check_file(items([0] * 90 + [1] * 36 + [2] * 35 + [3] * 35), file="f.pdf")
    # the real banks' most skewed act (Митний кодекс: 25, 8, 10, 19 of 62) passes
    summary = check_file(items([0] * 25 + [1] * 8 + [2] * 10 + [3] * 19), file="f.pdf")
    assert summary == {
        "items": 62,
        "keyed": 62,
        "no_single_key": 0,
        "slots": {"1": 25, "2": 8, "3": 10, "4": 19},
    }


def test_most_items_without_a_single_key_stop_the_file() -> None:
    with pytest.raises(InputError, match=r"^file f\.pdf: 7 of 13 items have no single key"):
        check_file(items([None] * 7 + [0, 1, 2, 3, 0, 1]), file="f.pdf")
    check_file(items([None] * 6 + [0, 1, 2, 3, 0, 1, 2]), file="f.pdf")


def test_a_bank_keyed_all_alike_stops_the_cli_with_exit_2(
    customs_specs: list[ItemSpec], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    specs = [dataclasses.replace(s, keys=(0,)) for s in customs_specs[:14]]
    pdf = render_pdf(specs, tmp_path / "vkks-same.pdf", source="vkks", bank="same").path
    out = tmp_path / "out"
    assert main([str(pdf), "--out", str(out), "--source", "vkks", "--workers", "1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "vkks-same.pdf" in err[0] and "every one of 14 keys is option 1" in err[0]
    assert not (out / "items.jsonl").exists()
