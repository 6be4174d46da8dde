"""The item record: JSONL round trip, and bad files that stop with the file, line and item named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from blindmcq.datasets.items import Item, invariant_flags, read_items, write_items
from blindmcq.errors import InputError

ITEM = Item(
    id="dmsu-constitution-1",
    source="dmsu",
    bank="constitution",
    number=1,
    question="Якою є Україна за державним устроєм?",
    options=("федеративною державою", "конфедеративною державою", "унітарною державою", "республікою"),
    key=2,
    file="dmsu-constitution.pdf",
    page=1,
)


def test_round_trip_keeps_every_field(tmp_path: Path) -> None:
    path = tmp_path / "items.jsonl"
    assert write_items(path, [ITEM]) == 1
    (back,) = read_items(path)
    assert back == ITEM
    assert json.loads(path.read_text(encoding="utf-8"))["options"][2] == "унітарною державою"


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{not json", "line 2: malformed item record"),
        (json.dumps({"id": "x"}), "line 2: malformed item record"),
        (json.dumps({**ITEM.to_json(), "id": "dmsu-constitution-2", "key": 7}), "item dmsu-constitution-2"),
        (json.dumps({**ITEM.to_json(), "status": "odd", "id": "b"}), "unknown status"),
        (json.dumps(ITEM.to_json()), "duplicate item id"),
    ],
)
def test_bad_line_names_file_and_line(tmp_path: Path, line: str, message: str) -> None:
    path = tmp_path / "items.jsonl"
    path.write_text(json.dumps(ITEM.to_json(), ensure_ascii=False) + "\n" + line + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=message) as info:
        read_items(path)
    assert str(path) in str(info.value)


def test_missing_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="items file not found"):
        read_items(tmp_path / "nope.jsonl")


def test_failed_write_leaves_the_old_file_whole(tmp_path: Path) -> None:
    path = tmp_path / "items.jsonl"
    write_items(path, [ITEM])
    before = path.read_bytes()

    def broken():
        yield ITEM
        raise RuntimeError("disk on fire")

    with pytest.raises(RuntimeError):
        write_items(path, broken())
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["items.jsonl"]  # no temporary file left behind


def test_invariant_flags() -> None:
    assert invariant_flags(["a", "b", "c", "d"], [1], 4) == []
    assert invariant_flags(["a", "b", "c", "d", "e"], [1], 4) == ["invariant"]
    assert invariant_flags(["a", "b", "c", "d"], [0, 1], 4) == ["invariant"]
    assert invariant_flags(["a", "", "c", "d"], [0], 4) == ["blank_option"]
    assert invariant_flags(["a", "A ", "c", "d"], [0], 4) == ["duplicate_options"]


def test_written_files_get_the_usual_mode_not_mkstemps_0600(tmp_path: Path) -> None:
    import os

    path = tmp_path / "items.jsonl"
    write_items(path, [ITEM])
    mask = os.umask(0)
    os.umask(mask)
    assert path.stat().st_mode & 0o777 == 0o666 & ~mask
