"""The item record shared by every bank: one JSON object a line in ``items.jsonl``.

Malformed items are kept as published and flagged, never silently repaired (SPEC, "Items").
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from blindmcq.atomic import atomic_path
from blindmcq.errors import InputError
from blindmcq.vocabulary import ITEM_STATUSES, ItemStatus

FLAGS = ("excluded", "invariant", "blank_option", "duplicate_options", "recovered_merge")


@dataclass(frozen=True)
class Item:
    id: str
    source: str
    bank: str
    number: int
    question: str
    options: tuple[str, ...]
    key: int | None
    status: ItemStatus = "ok"
    flags: tuple[str, ...] = ()
    file: str | None = None
    page: int | None = None
    meta: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    @property
    def n_options(self) -> int:
        return len(self.options)

    @property
    def usable(self) -> bool:
        """True when the item can be probed: status ok, with a key."""
        return self.status == "ok" and self.key is not None

    def to_json(self) -> dict[str, Any]:
        # the fields as they are (json.dumps copies nothing); asdict's deep copy of every item's meta was
        # the largest cost of writing a big bank's items.jsonl
        record = {f.name: getattr(self, f.name) for f in fields(self)}
        record["options"] = list(self.options)
        record["flags"] = list(self.flags)
        record["meta"] = dict(self.meta)  # a caller editing the record leaves the item as it was
        return record

    @classmethod
    def from_json(cls, record: dict[str, Any]) -> Item:
        return cls(
            id=str(record["id"]),
            source=str(record["source"]),
            bank=str(record["bank"]),
            number=_int(record["number"], "number"),
            question=str(record["question"]),
            options=tuple(str(o) for o in record["options"]),
            key=None if record.get("key") is None else _int(record["key"], "key"),
            status=record.get("status", "ok"),
            flags=tuple(record.get("flags", ())),
            file=record.get("file"),
            page=record.get("page"),
            meta=dict(record.get("meta") or {}),
        )


def _int(value: Any, name: str) -> int:
    """An integer field: JSON ``true`` is not 1 and ``2.5`` is not 2 (ValueError, reported with the line)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    return value


def item_id(source: str, bank: str, number: int | str) -> str:
    """Stable id ``{source}-{bank}-{number}`` (SPEC, "Items")."""
    return f"{source}-{bank}-{number}"


def unusable_reason(item: Item) -> str | None:
    """Why ``item`` cannot be probed, in a few words (None: it can)."""
    if item.usable:
        return None
    n = len(item.options)
    if n < 2:
        return f"{n} option{'' if n == 1 else 's'} (an item needs two or more)"
    if item.status == "excluded":
        return "excluded by the bank"
    if item.key is None:
        return "no key among its options"
    return f"status {item.status} ({', '.join(item.flags) or 'no flag'})"


def skipped_sentence(items: Sequence[Item]) -> str:
    """One sentence: how many items are skipped, and why, each reason with its rows (or ids); the audit's
    warning and the corpus stage's log line and verification report (``datasets.registry``)."""
    by_reason: dict[str, list[str]] = {}
    for item in items:
        reason = unusable_reason(item)
        if reason is not None:
            by_reason.setdefault(reason, []).append(str(item.meta.get("row") or item.id))
    parts = []
    for reason, where in by_reason.items():
        shown = ", ".join(where[:5]) + (f" and {len(where) - 5} more" if len(where) > 5 else "")
        parts.append(f"{len(where)} with {reason}: {shown}")
    n_bad = sum(len(w) for w in by_reason.values())
    return f"{n_bad} of {len(items)} items are not usable and were skipped: {'; '.join(parts)}."


def invariant_flags(options: Iterable[str], keys: Iterable[int], n_expected: int | None) -> list[str]:
    """Flags for a candidate item: ``invariant`` unless N options (when given) and exactly one key."""
    options = list(options)
    keys = list(keys)
    flags: list[str] = []
    if (n_expected is not None and len(options) != n_expected) or len(keys) != 1 or len(options) < 2:
        flags.append("invariant")
    if any(not o.strip() for o in options):
        flags.append("blank_option")
    normalised = [" ".join(o.split()).casefold() for o in options if o.strip()]
    if len(set(normalised)) != len(normalised):
        flags.append("duplicate_options")
    return flags


def validate_item(item: Item, *, file: str | None = None, line: int | None = None) -> None:
    """Raise InputError naming the item when the record itself is inconsistent."""
    if item.status not in ITEM_STATUSES:
        raise InputError(f"unknown status {item.status!r}", file=file, line=line, item=item.id)
    if item.key is not None and not 0 <= item.key < len(item.options):
        raise InputError(
            f"key {item.key} outside 0..{len(item.options) - 1}", file=file, line=line, item=item.id
        )
    if item.status == "ok" and (item.key is None or "invariant" in item.flags):
        raise InputError("status ok but the one-key invariant fails", file=file, line=line, item=item.id)


def read_items(path: str | Path) -> list[Item]:
    """Read ``items.jsonl``; a malformed line stops with the file and line number."""
    path = Path(path)
    if not path.exists():
        raise InputError("items file not found", file=str(path))
    items: list[Item] = []
    seen: set[str] = set()
    with path.open("rb") as fh:
        for lineno, raw in enumerate(fh, start=1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise InputError(f"not UTF-8 (byte {exc.start})", file=str(path), line=lineno) from None
            if not line.strip():
                continue
            try:
                record = json.loads(line)
                item = Item.from_json(record)
            except (json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
                raise InputError(f"malformed item record: {exc}", file=str(path), line=lineno) from exc
            validate_item(item, file=str(path), line=lineno)
            if item.id in seen:
                raise InputError("duplicate item id", file=str(path), line=lineno, item=item.id)
            seen.add(item.id)
            items.append(item)
    return items


def write_items(path: str | Path, items: Iterable[Item]) -> int:
    """Write items atomically, one JSON object a line; returns the count."""
    n = 0
    with atomic_path(path) as tmp, tmp.open("w", encoding="utf-8") as fh:
        for item in items:
            fh.write(json.dumps(item.to_json(), ensure_ascii=False) + "\n")
            n += 1
    return n
