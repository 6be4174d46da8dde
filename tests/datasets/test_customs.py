import json
import re
from collections import Counter
from pathlib import Path

import pytest

from blindmcq.datasets.customs import load_customs
from blindmcq.errors import ConfigError, InputError


@pytest.fixture(scope="module")
def raw(inputs: Path) -> dict:
    return json.loads((inputs / "ua-customs-exam" / "questions.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def bank(inputs: Path):
    return load_customs(inputs / "ua-customs-exam" / "questions.json")


@pytest.fixture(scope="module")
def full_raw(shared_data: Path) -> dict:
    return json.loads((shared_data / "ua-customs-exam" / "questions.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def full_bank(shared_data: Path):
    return load_customs(shared_data / "ua-customs-exam" / "questions.json")


def test_whole_bank_has_every_item_once_with_stable_ids(bank, raw):
    raw_count = sum(len(v) for v in raw["legislation"].values()) + sum(
        len(items) for comp in raw["operational_competencies"].values() for items in comp["levels"].values()
    )
    assert len(bank) == raw_count
    assert len({i.id for i in bank}) == len(bank)
    assert all(re.fullmatch(r"dmsu-[a-z0-9-]+-\d+", i.id) and i.id.endswith(f"-{i.number}") for i in bank)
    assert sorted(i.meta["uid"] for i in bank) == [i.meta["uid"] for i in bank]  # published order
    assert {i.n_options for i in bank} == {4}


def test_full_bank_counts(full_bank):
    assert len(full_bank) == 2950


def test_legislation_banks_use_the_pdf_slugs(full_bank):
    bank = full_bank
    counts = Counter(i.bank for i in bank if i.meta["part"] == "legislation")
    assert counts == {"constitution": 100, "civil-service": 78, "customs-code": 62, "anticorruption": 100}
    first = next(i for i in bank if i.id == "dmsu-constitution-1")
    assert first.question == "Якою є Україна за державним устроєм?"
    assert first.options[first.key] == "унітарною державою"


def test_operational_levels_include_the_folded_level_one(full_bank, full_raw):
    bank, raw = full_bank, full_raw
    ops = [i for i in bank if i.meta["part"] == "operational"]
    assert len(ops) == 2610
    folded = [i for i in ops if i.meta["source_level"] == "null"]
    assert folded and all(i.meta["level"] == 1 for i in folded)
    assert Counter(i.bank for i in ops)["ok-2-l1"] == len(
        raw["operational_competencies"]["ОК-2"]["levels"]["null"]
    )
    assert Counter(i.bank for i in ops)["ok-17-l3"] == 70


def test_keys_come_from_the_marked_option(bank, raw):
    by_uid = {i.meta["uid"]: i for i in bank}
    every = list(raw["legislation"].values()) + [
        items for comp in raw["operational_competencies"].values() for items in comp["levels"].values()
    ]
    for items in every:
        for r in items:
            marked = [j for j, a in enumerate(r["answers"]) if a["is_correct"]]
            item = by_uid[r["uid"]]
            assert item.key == (marked[0] if len(marked) == 1 else None)


def test_item_without_a_marked_key_is_kept_and_flagged(bank):
    bad = [i for i in bank if not i.usable]
    assert [i.meta["uid"] for i in bad] == ["q00452"]
    assert bad[0].status == "malformed" and "invariant" in bad[0].flags and bad[0].key is None


def test_selection_by_part_act_competency_and_level(shared_data):
    path = shared_data / "ua-customs-exam" / "questions.json"
    assert len(load_customs(path, parts=["legislation"])) == 340
    assert {i.bank for i in load_customs(path, parts=["legislation"], acts=["customs-code"])} == {
        "customs-code"
    }
    some = load_customs(path, parts=["operational"], competencies=["ОК-3", "ok-7"], levels=[1])
    assert Counter(i.bank for i in some) == {"ok-3-l1": 50, "ok-7-l1": 50}
    with pytest.raises(ConfigError, match=r"'dataset\.acts'"):
        load_customs(path, acts=["tax-code"])
    with pytest.raises(ConfigError, match=r"'dataset\.parts'"):
        load_customs(path, parts=["exam"])


def test_broken_file_is_named(tmp_path):
    bad = tmp_path / "questions.json"
    bad.write_text("{not json", encoding="utf-8")
    with pytest.raises(InputError, match=r"questions\.json.*not valid JSON"):
        load_customs(bad)
    with pytest.raises(InputError, match="not found"):
        load_customs(tmp_path / "missing.json")


def test_repeated_number_within_a_bank_is_an_error(tmp_path):
    item = {"uid": "q1", "number": 1, "question": "?", "correct_index": 0,
            "answers": [{"text": t, "is_correct": t == "a"} for t in "abcd"]}  # fmt: skip
    data = {
        "legislation": {"Конституція України": [item, {**item, "uid": "q2"}]},
        "operational_competencies": {},
    }
    path = tmp_path / "q.json"
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    with pytest.raises(InputError, match=r"dmsu-constitution-1.*repeats"):
        load_customs(path, parts=["legislation"])
