"""A real bank with mixed option counts: the customs items, a third each with 3, 4 and 5 options.

Deterministic from the source file: items in source order (legislation acts, then competencies),
item i gets N = 3, 4, 5 for i mod 3 = 0, 1, 2. A 3-option item drops one distractor chosen by a hash
of its uid; a 5-option item gains a distractor of the next item of the same act (or competency),
inserted at a slot chosen by the same hash. Keys move with their options.

``python tests/analysis/mixed_bank.py`` rewrites the committed sample
``tests/fixtures/stats/customs_mixed_sample.jsonl`` from the full inputs (``data/``, or
``$BLINDMCQ_SHARED_DATA``; as the tests find them).
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

from blindmcq.datasets.items import Item

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "stats" / "customs_mixed_sample.jsonl"
SAMPLE_SIZE = 150


def _hash(uid: str) -> int:
    return int(hashlib.sha256(uid.encode("utf-8")).hexdigest(), 16)


def _grouped(data: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    out = [(f"act:{act}", q) for act, qs in data["legislation"].items() for q in qs]
    for code, comp in data["operational_competencies"].items():
        out += [(f"competency:{code}", q) for qs in comp["levels"].values() for q in qs]
    # four options and a key (one source item has correct_index -1)
    return [(g, q) for g, q in out if len(q["answers"]) == 4 and 0 <= int(q["correct_index"]) < 4]


def mixed_records(data: dict[str, Any]) -> list[dict[str, Any]]:
    """Records ``{id, group, question, options, key}`` of the mixed bank, in source order."""
    rows = _grouped(data)
    by_group: dict[str, list[int]] = {}
    for i, (g, _) in enumerate(rows):
        by_group.setdefault(g, []).append(i)
    out = []
    for i, (group, q) in enumerate(rows):
        options = [a["text"] for a in q["answers"]]
        key = int(q["correct_index"])
        h = _hash(str(q["uid"]))
        n = 3 + i % 3
        if n == 3:
            drop = [j for j in range(4) if j != key][h % 3]
            options.pop(drop)
            key -= drop < key
        elif n == 5:
            members = by_group[group]
            at_self = members.index(i)
            candidates: list[str] = []
            for step in range(1, len(members)):  # the next item of the group with a distractor not present
                donor = rows[members[(at_self + step) % len(members)]][1]
                candidates = [
                    a["text"]
                    for j, a in enumerate(donor["answers"])
                    if j != int(donor["correct_index"]) and a["text"] not in options
                ]
                if candidates:
                    break
            if not candidates:
                raise ValueError(f"no distractor to borrow for {q['uid']}")
            extra = candidates[h % len(candidates)]
            at = (h // 7) % 5
            options.insert(at, extra)
            key += at <= key
        out.append({"id": f"customs-mixed-{q['uid']}", "group": group, "question": q["question"],
                    "options": options, "key": key})  # fmt: skip
    return out


def to_items(records: list[dict[str, Any]]) -> list[Item]:
    return [
        Item(
            id=r["id"],
            source="customs",
            bank="mixed",
            number=i + 1,
            question=r["question"],
            options=tuple(r["options"]),
            key=int(r["key"]),
        )
        for i, r in enumerate(records)
    ]


def read_records(path: Path = FIXTURE) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def main() -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: conftest finds the inputs
    from conftest import full_data_dir

    shared = full_data_dir()
    if shared is None:
        sys.exit("mixed_bank: the full inputs are not found (run `make data` or set BLINDMCQ_SHARED_DATA)")
    data = json.loads((shared / "ua-customs-exam" / "questions.json").read_text(encoding="utf-8"))
    records = mixed_records(data)[:SAMPLE_SIZE]
    FIXTURE.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    print(f"{len(records)} items -> {FIXTURE}", file=sys.stderr)


if __name__ == "__main__":
    main()
