"""Reviewed corrections: a committed YAML mapping, item id -> corrected fields, applied reproducibly.

Each entry names the ``fingerprint`` (``meta.fingerprint``: both paths' readings of the item, hashed) it was
written against, and any of ``question``, ``options``, ``key`` (0-based), ``status``. An entry for a bank
this run extracts must find its item with that fingerprint; otherwise the source text has changed under
it and the run stops (InputError naming the item and the corrections file). Entries for banks this run does
not extract are left alone and counted.

An entry for an item number the extraction found missing (a gap, :func:`blindmcq.corpus.settle.find_gaps`)
names the gap's fingerprint and either the item's ``question`` and ``options`` (and ``key``, ``status``): the
item is added, or ``absent: true``: the bank prints no such item, and nothing is added.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from blindmcq.datasets.items import FLAGS, Item, invariant_flags
from blindmcq.errors import InputError
from blindmcq.vocabulary import ITEM_STATUSES

FIELDS = ("question", "options", "key", "status")
GAP_FIELDS = (*FIELDS, "absent")


def load_corrections(path: str | Path) -> dict[str, dict[str, Any]]:
    """The corrections file as a mapping; every entry checked for shape."""
    path = Path(path)
    if not path.is_file():
        raise InputError("corrections file not found", file=str(path))
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise InputError(f"not valid YAML: {str(exc).splitlines()[0]}", file=str(path)) from exc
    data = data or {}
    if not isinstance(data, dict):
        raise InputError("expected a mapping from item id to corrected fields", file=str(path))
    for item_id, entry in data.items():
        if not isinstance(entry, dict) or not isinstance(entry.get("fingerprint"), str):
            raise InputError("entry needs a mapping with a 'fingerprint'", file=str(path), item=str(item_id))
        unknown = sorted(set(entry) - {"fingerprint", *GAP_FIELDS})
        if unknown:
            raise InputError(
                f"unknown fields {unknown}; allowed {list(FIELDS)} (and 'absent' for a missing number)",
                file=str(path),
                item=item_id,
            )
        if "absent" in entry and not isinstance(entry["absent"], bool):
            raise InputError("absent must be true or false", file=str(path), item=item_id)
        if "options" in entry and not (
            isinstance(entry["options"], list) and all(isinstance(o, str) for o in entry["options"])
        ):
            raise InputError("options must be a list of strings", file=str(path), item=item_id)
        if "key" in entry and entry["key"] is not None and not isinstance(entry["key"], int):
            raise InputError("key must be a 0-based integer or null", file=str(path), item=item_id)
        if "status" in entry and entry["status"] not in ITEM_STATUSES:
            raise InputError(f"status must be one of {list(ITEM_STATUSES)}", file=str(path), item=item_id)
    return {str(k): v for k, v in data.items()}


def corrected(item: Item, entry: dict[str, Any], *, n_options: int | None, file: str) -> Item:
    question = str(entry.get("question", item.question))
    options = tuple(entry.get("options", item.options))
    key = entry.get("key", item.key)
    if key is not None and not 0 <= key < len(options):
        raise InputError(f"corrected key {key} outside 0..{len(options) - 1}", file=file, item=item.id)
    flags = set(invariant_flags(options, [] if key is None else [key], n_options))
    flags |= set(item.flags) & {"excluded", "recovered_merge"}
    status = entry.get("status") or (
        "excluded" if "excluded" in flags else "malformed" if flags - {"recovered_merge"} else "ok"
    )
    if status == "ok" and (key is None or "invariant" in flags):
        raise InputError("corrected to status ok but the one-key invariant fails", file=file, item=item.id)
    meta = {**item.meta, "corrected": sorted(set(entry) - {"fingerprint"})}
    meta["settled"] = {"path": "correction", "why": f"reviewed correction in {Path(file).name}"}
    meta.pop("boxes", None)
    return dataclasses.replace(
        item,
        question=question,
        options=options,
        key=key,
        status=status,
        flags=tuple(f for f in FLAGS if f in flags),
        meta=meta,
    )


def _missing(gap: dict[str, Any], number: int, item_id: str, items: dict[str, Item]) -> Item:
    """A blank item for a number missing from the file, to be filled in by its correction."""
    near = items[gap["after"]]
    return Item(
        id=item_id,
        source=near.source,
        bank=near.bank,
        number=number,
        question="",
        options=(),
        key=None,
        status="disputed",
        file=near.file,
        page=near.page,
        meta={"fingerprint": gap["fingerprint"], "missing_number": True},
    )


def apply_corrections(
    items: Sequence[Item],
    corrections: dict[str, dict[str, Any]],
    *,
    file: str,
    n_options: int | None,
    gaps: Sequence[dict[str, Any]] = (),
) -> tuple[list[Item], dict[str, Any]]:
    """Items with corrections applied (an entry for a missing number adds the item unless it says
    ``absent``), and a summary for verification.json; InputError on a stale entry."""
    by_id = {i.id: i for i in items}
    banks = {f"{i.source}-{i.bank}-" for i in items}
    missing = {item_id: (g, g["first"] + k) for g in gaps for k, item_id in enumerate(g["ids"])}
    applied, elsewhere, absent = [], [], []
    added: list[Item] = []
    for item_id, entry in corrections.items():
        item = by_id.get(item_id)
        if item is None and item_id in missing:
            gap, number = missing[item_id]
            if entry["fingerprint"] != gap["fingerprint"]:
                raise InputError(
                    f"correction written for fingerprint {entry['fingerprint']}, but the missing number now "
                    f"reads {gap['fingerprint']}: review the gap again",
                    file=file,
                    item=item_id,
                )
            if entry.get("absent"):
                absent.append(item_id)
                continue
            if not entry.get("question") or not entry.get("options"):
                raise InputError(
                    "an entry for a missing number needs its question and options, or absent: true",
                    file=file,
                    item=item_id,
                )
            added.append(
                corrected(_missing(gap, number, item_id, by_id), entry, n_options=n_options, file=file)
            )
            applied.append(item_id)
            continue
        if item is not None and "absent" in entry:
            raise InputError("absent is for a missing item number only", file=file, item=item_id)
        if item is None:
            if any(item_id.startswith(b) for b in banks):
                raise InputError(
                    "correction for an item the extraction no longer finds", file=file, item=item_id
                )
            elsewhere.append(item_id)
            continue
        if item.meta.get("fingerprint") != entry["fingerprint"]:
            raise InputError(
                f"correction written for fingerprint {entry['fingerprint']}, but the source now reads "
                f"{item.meta.get('fingerprint')}: review the item again",
                file=file,
                item=item_id,
            )
        by_id[item_id] = corrected(item, entry, n_options=n_options, file=file)
        applied.append(item_id)
    out = [by_id[i.id] for i in items]
    for new in sorted(added, key=lambda i: i.number):  # after the last item of its file numbered below it
        at = max(
            (k + 1 for k, i in enumerate(out) if i.file == new.file and i.number < new.number), default=0
        )
        out.insert(at, new)
    summary: dict[str, Any] = {"file": file, "applied": applied, "other_banks": len(elsewhere)}
    if absent:
        summary["absent"] = absent
    return out, summary
