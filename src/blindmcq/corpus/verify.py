"""Compare the two extraction paths item by item and summarise what a reader must know.

Fields are compared insensitive to whitespace and to hyphens (a line-break hyphen one path kept and the
other removed is no disagreement). An item one path lacks counts as unconfirmed in every field.
"""

from __future__ import annotations

import random
import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from typing import Any

from blindmcq.datasets.items import FLAGS, Item

FIELDS = ("stem", "options", "key")
_IGNORED = re.compile(r"[\s\-\u00ad]+")


def norm(text: str) -> str:
    return _IGNORED.sub("", text)


def confirm(a: Item | None, b: Item | None) -> dict[str, bool]:
    """Per field: do both paths give the same value?"""
    if a is None or b is None:
        return dict.fromkeys(FIELDS, False)
    return {
        "stem": norm(a.question) == norm(b.question),
        "options": [norm(o) for o in a.options] == [norm(o) for o in b.options],
        "key": a.key == b.key,
    }


def pilot_sample(items: Sequence[Item], *, per_bank: int, seed: int) -> dict[str, list[dict[str, Any]]]:
    """Up to ``per_bank`` items per bank, drawn with one seeded generator, for a person to check."""
    by_bank: dict[str, list[Item]] = defaultdict(list)
    for item in items:
        by_bank[item.bank].append(item)
    rng = random.Random(seed)
    sample: dict[str, list[dict[str, Any]]] = {}
    for bank in sorted(by_bank):
        pool = sorted(by_bank[bank], key=lambda i: i.number)
        drawn = sorted(rng.sample(pool, min(per_bank, len(pool))), key=lambda i: i.number)
        sample[bank] = [{"id": i.id, "file": i.file, "page": i.page} for i in drawn]
    return sample


def compare(
    primary: Sequence[Item], secondary: Sequence[Item], *, per_bank: int = 20, seed: int
) -> tuple[dict[str, Any], dict[str, dict[str, bool]]]:
    """Report of the two paths' agreement, and each id's per-field confirmation."""
    first = {i.id: i for i in primary}
    second = {i.id: i for i in secondary}
    ids = list(first) + [i for i in second if i not in first]
    confirmed = {i: confirm(first.get(i), second.get(i)) for i in ids}
    n = len(ids)
    counts = {f: sum(c[f] for c in confirmed.values()) for f in FIELDS}
    counts["all"] = sum(all(c.values()) for c in confirmed.values())
    items = [first.get(i) or second[i] for i in ids]
    statuses = Counter(i.status for i in items)
    flags = Counter(f for i in items for f in i.flags)
    report = {
        "n_items": n,
        "n_items_path1": len(first),
        "n_items_path2": len(second),
        "confirmed_count": counts,
        "confirmed_rate": {f: (counts[f] / n if n else None) for f in counts},
        "failing_ids": {
            **{f: [i for i in ids if not confirmed[i][f]] for f in FIELDS},
            "only_path1": [i for i in first if i not in second],
            "only_path2": [i for i in second if i not in first],
        },
        "counts": {
            "status": {s: statuses.get(s, 0) for s in ("ok", "excluded", "malformed")},
            "flags": {f: flags.get(f, 0) for f in FLAGS},
            "excluded": flags.get("excluded", 0),
            "invariant_breaking": sum(
                1 for i in items if {"invariant", "blank_option", "duplicate_options"} & set(i.flags)
            ),
            "recovered": flags.get("recovered_merge", 0),
        },
        "pilot": {
            "seed": seed,
            "per_bank": per_bank,
            "sample": pilot_sample(items, per_bank=per_bank, seed=seed),
        },
    }
    return report, confirmed
