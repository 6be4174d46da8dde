"""Settle the two paths' disagreements per item, by the item invariants; what cannot be settled is disputed.

Per item id of one file:
- both paths read it and agree (whitespace- and hyphen-insensitive, :func:`verify.confirm`): path 1's reading;
- they disagree, or one path lacks it: the reading that satisfies the invariants wins (one stem, N options,
  exactly one key unless excluded, no blank option, its number one more than the number before it in that
  path's reading of the file);
- the file itself is ambiguous (its number is printed twice, ``meta.duplicate_number``; or
  ``meta.ambiguous`` from the assembler): ``disputed``, whatever the paths read;
- both or neither satisfy them: the item is kept with status ``disputed`` (never probed by default) and
  both readings in ``meta.readings``.
``meta.settled`` records which path won and why; ``meta.fingerprint`` hashes both paths' readings, so a
correction can check it still corrects the text it was written against.

Item numbers missing from a file (gaps): a number between two printed ones that no item carries; the item
was lost (its rows read into a neighbour, or not read at all) or the bank does not print it. Which one
cannot be told from the numbers, so each gap is reported (``files[].gaps`` of ``verification.json``, with a
correction stub to fill in) and the items on either side of it are disputed (:func:`dispute_gaps`): the lost
item's text may be in either. A reviewed correction for the missing id adds the item, or, with
``absent: true``, records that the bank prints no such item
(:func:`blindmcq.corpus.corrections.apply_corrections`).
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import json
import re
from collections.abc import Sequence
from typing import Any

from blindmcq.corpus.verify import confirm
from blindmcq.datasets.items import Item
from blindmcq.datasets.items import item_id as make_id


def reading(item: Item | None) -> dict[str, Any] | None:
    """What one path read for an item: the fields a reviewer compares."""
    if item is None:
        return None
    return {
        "question": item.question,
        "options": list(item.options),
        "key": item.key,
        "status": item.status,
        "page": item.page,
    }


def fingerprint(a: Item | None, b: Item | None) -> str:
    """Short hash of both paths' readings of an item (its source text as extracted)."""
    text = json.dumps([reading(a), reading(b)], ensure_ascii=False, sort_keys=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def failures(item: Item | None, previous: int | None, n_options: int | None) -> list[str]:
    """The item invariants one reading breaks; empty when it satisfies them all."""
    if item is None:
        return ["not read"]
    out = []
    if not item.question.strip():
        out.append("no stem")
    if n_options is not None and len(item.options) != n_options:
        out.append(f"{len(item.options)} options, expected {n_options}")
    if item.status != "excluded" and (item.key is None or "invariant" in item.flags):
        out.append("not exactly one key")
    if "blank_option" in item.flags:
        out.append("a blank option")
    if previous is not None and item.number != previous + 1:
        out.append(f"number {item.number} does not follow {previous}")
    return out


def _undecided(a: Item | None, b: Item | None) -> str | None:
    """Why an item cannot be settled from either reading whatever they say (the file itself is ambiguous)."""
    for it in (a, b):
        if it is None:
            continue
        dup = it.meta.get("duplicate_number")
        if dup:
            return f"item number {it.number} is printed {dup['count']} times (pages {dup['pages']})"
        if it.meta.get("ambiguous"):
            return str(it.meta["ambiguous"])
    return None


def _previous(items: Sequence[Item]) -> dict[str, int | None]:
    return {it.id: (items[k - 1].number if k else None) for k, it in enumerate(items)}


def settle(first: Sequence[Item], second: Sequence[Item], *, n_options: int | None) -> list[Item]:
    """One file's items from both paths' readings, ordered by number."""
    a_by, b_by = {i.id: i for i in first}, {i.id: i for i in second}
    prev_a, prev_b = _previous(first), _previous(second)

    def order(i: str) -> tuple[int, int]:
        it = a_by.get(i) or b_by[i]
        return it.number, it.meta.get("duplicate_number", {}).get("occurrence", 0)

    ids = sorted(set(a_by) | set(b_by), key=order)
    out = []
    for item_id in ids:
        a, b = a_by.get(item_id), b_by.get(item_id)
        meta: dict[str, Any] = {"fingerprint": fingerprint(a, b), "confirmed": confirm(a, b)}
        undecided = _undecided(a, b)
        if undecided:
            chosen, settled = a or b, {"path": None, "why": undecided}
            meta["readings"] = {"tables": reading(a), "rules": reading(b)}
        elif a is not None and b is not None and all(meta["confirmed"].values()):
            chosen, settled = a, {"path": "both", "why": "the paths agree"}
        else:
            fa = failures(a, prev_a.get(item_id), n_options)
            fb = failures(b, prev_b.get(item_id), n_options)
            if not fa and fb:
                chosen, settled = a, {"path": "tables", "why": "path 2 breaks: " + "; ".join(fb)}
            elif fa and not fb:
                chosen, settled = b, {"path": "rules", "why": "path 1 breaks: " + "; ".join(fa)}
            else:
                chosen = a or b
                why = (
                    "both readings satisfy the invariants but differ"
                    if not fa and not fb
                    else f"path 1 breaks: {'; '.join(fa)}; path 2 breaks: {'; '.join(fb)}"
                )
                settled = {"path": None, "why": why}
                meta["readings"] = {"tables": reading(a), "rules": reading(b)}
        assert chosen is not None
        base = {k: v for k, v in chosen.meta.items() if k != "boxes" or settled["path"] is None}
        if settled["path"] is None:
            boxes = [*(a.meta.get("boxes", []) if a else []), *(b.meta.get("boxes", []) if b else [])]
            base["boxes"] = boxes
        fields: dict[str, Any] = {"meta": {**base, **meta, "settled": settled}}
        if settled["path"] is None:
            fields["status"] = "disputed"
        out.append(dataclasses.replace(chosen, **fields))
    return out


STUB_LIMIT = 20  # a gap of more numbers than this gets one entry and no stubs (a misread number, likely)


def _gap_fingerprint(file: str, before: Item, after: Item, first: int, last: int) -> str:
    text = "|".join(
        [file, str(before.meta.get("fingerprint")), str(after.meta.get("fingerprint")), str(first), str(last)]
    )
    return "gap-" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def find_gaps(items: Sequence[Item]) -> list[dict[str, Any]]:
    """The runs of numbers missing between two printed item numbers of one file (``items`` of one file, in
    number order); each with the ids around it, their pages, and the stub ids to fill in."""
    printed = sorted({i.number: i for i in reversed(items)}.values(), key=lambda i: i.number)
    out = []
    for before, after in itertools.pairwise(printed):
        if after.number - before.number <= 1:
            continue
        first, last = before.number + 1, after.number - 1
        count = last - first + 1
        out.append(
            {
                "first": first,
                "last": last,
                "count": count,
                "after": before.id,
                "before": after.id,
                "pages": sorted({p for p in (before.page, after.page) if p is not None}),
                "fingerprint": _gap_fingerprint(before.file or "", before, after, first, last),
                "ids": [make_id(before.source, before.bank, n) for n in range(first, last + 1)]
                if count <= STUB_LIMIT
                else [],
            }
        )
    return out


def leading_gaps(items: Sequence[Item]) -> list[dict[str, Any]]:
    """Per bank, the numbers missing before its lowest printed one when that is not 1 (a bank numbers its
    items from 1: the first item lost, read as a heading, say); the gap's ``after`` and ``before`` are both
    that first item, ``leading`` marks it."""
    first: dict[str, Item] = {}
    for it in items:
        if it.bank not in first or it.number < first[it.bank].number:
            first[it.bank] = it
    out = []
    for it in first.values():
        if it.number <= 1:
            continue
        last = it.number - 1
        out.append(
            {
                "first": 1,
                "last": last,
                "count": last,
                "after": it.id,
                "before": it.id,
                "leading": True,
                "pages": [it.page] if it.page is not None else [],
                "fingerprint": _gap_fingerprint(it.file or "", it, it, 1, last),
                "ids": [make_id(it.source, it.bank, n) for n in range(1, last + 1)]
                if last <= STUB_LIMIT
                else [],
            }
        )
    return out


def gap_text(gap: dict[str, Any]) -> str:
    numbers = str(gap["first"]) if gap["count"] == 1 else f"{gap['first']} to {gap['last']}"
    plural = "s" if gap["count"] > 1 else ""
    if gap.get("leading"):
        return (
            f"item number{plural} {numbers} missing before {gap['before']}, the bank's first printed number"
        )
    return f"item number{plural} {numbers} missing between {gap['after']} and {gap['before']}"


def dispute(item: Item, why: str, paths: dict[str, dict[str, Item]]) -> Item:
    """``item`` made disputed with ``why`` (added to any reason it already had), its page boxes and both
    paths' readings (``paths``: each path's items by id) kept for the review page."""
    meta = dict(item.meta)
    old = meta.get("settled", {})
    if item.status == "disputed" and old.get("why"):
        why = f"{old['why']}; {why}"
    meta["settled"] = {"path": None, "why": why}
    found = {m: paths[m].get(item.id) for m in ("tables", "rules")}
    boxes = [b for it in found.values() if it is not None for b in it.meta.get("boxes", [])]
    if boxes and "boxes" not in meta:
        meta["boxes"] = boxes
    meta.setdefault("readings", {m: reading(it) for m, it in found.items()})
    return dataclasses.replace(item, status="disputed", meta=meta)


def with_boxes(items: Sequence[Item], paths: dict[str, dict[str, Item]]) -> list[Item]:
    """``items`` with every disputed one holding its rows' page boxes as both paths read them (an item
    disputed after it was settled, by the line reading say, kept none): the review page crops them."""
    out = []
    for it in items:
        if it.status == "disputed" and not it.meta.get("boxes"):
            found = [paths[m].get(it.id) for m in ("tables", "rules")]
            boxes = [b for p in found if p is not None for b in p.meta.get("boxes", [])]
            if boxes:
                it = dataclasses.replace(it, meta={**it.meta, "boxes": boxes})
        out.append(it)
    return out


def dispute_gaps(
    items: Sequence[Item], paths: dict[str, dict[str, Item]]
) -> tuple[list[Item], list[dict[str, Any]]]:
    """One file's items with those beside a gap in the numbers disputed, and the gaps."""
    gaps = find_gaps(items)
    why: dict[str, list[str]] = {}
    for gap in gaps:
        for side in ("after", "before"):
            why.setdefault(gap[side], []).append(gap_text(gap))
    out = [dispute(i, "; ".join(why[i.id]), paths) if i.id in why else i for i in items]
    return out, gaps


# Characters no printed text holds: C0/C1 controls (NUL where a font maps a glyph to no character) and the
# replacement character (a byte sequence no encoding decoded); tab and newline are layout, not text.
UNREADABLE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ufffd]")
FAULT_TOL = 1.0  # pt: a print fault this close to an item's rows may belong to it


def text_faults(item: Item) -> list[str]:
    """What in the item's own text cannot be printed text, field by field (empty when none)."""
    out = []
    fields = [("stem", item.question), *((f"option {k}", o) for k, o in enumerate(item.options, 1))]
    for name, text in fields:
        bad = sorted(set(UNREADABLE.findall(text)))
        if bad:
            codes = ", ".join(f"U+{ord(c):04X}" for c in bad)
            what = (
                "a glyph the PDF's font maps to no character"
                if any(c != "\ufffd" for c in bad)
                else "the replacement character: text the PDF's font could not decode"
            )
            out.append(f"the {name} holds {codes}: {what}")
    return out


# A field ending in a letter and a hyphen (or a soft hyphen): a word broken at a line end with no line after
CUT_WORD = re.compile(r"[^\W\d_][-\u00ad]\s*$")


def cut_words(item: Item) -> list[str]:
    """The fields of an item printed across a page break that end in a word cut by a hyphen (``митно-``):
    the break cut the cell, and the word's rest (with whatever followed) is printed nowhere the readings
    found it, so the text is short. A field of an item on one page may end so as printed (``це-``)."""
    if item.status == "excluded" or len(item.meta.get("pages") or ()) < 2:
        return []
    fields = [("stem", item.question), *((f"option {k}", o) for k, o in enumerate(item.options, 1))]
    return [
        f"the {name} ends in a word cut by a hyphen ({text.split()[-1]!r}) and the item runs on to the next "
        "page: the rest of the word not printed after it?"
        for name, text in fields
        if CUT_WORD.search(text)
    ]


def dispute_text(
    items: Sequence[Item],
    faults: dict[int, list[tuple[str, float, float]]],
    paths: dict[str, dict[str, Item]],
) -> list[Item]:
    """``items`` with each whose text fails a check that does not depend on the readings agreeing made
    disputed: characters that are no printed text (:func:`text_faults`), a word cut by a hyphen at the end
    of a field of an item crossing a page (:func:`cut_words`), and print faults on its rows
    (``faults``: per page, from :func:`blindmcq.corpus.lines.print_faults`: glyphs printed over glyphs, a
    rule running through a line)."""
    out = []
    for it in items:
        why = text_faults(it) + cut_words(it)
        boxes = [
            b for m in ("tables", "rules") if (p := paths[m].get(it.id)) for b in p.meta.get("boxes", [])
        ]
        seen: set[tuple[int, str]] = set()
        for page, top, bottom in boxes:
            for what, t, b in faults.get(int(page), []):
                if t <= bottom + FAULT_TOL and b >= top - FAULT_TOL and (int(page), what) not in seen:
                    seen.add((int(page), what))
                    why.append(
                        f"page {int(page)}: {what} (y {t:.0f}-{b:.0f}); the text read may be garbled or cut"
                    )
        out.append(dispute(it, "; ".join(why), paths) if why else it)
    return out
