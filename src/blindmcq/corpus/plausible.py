"""Whole-file plausibility of one reading, checked before anything is written.

A misread layout (a score column taken for a key column, a mark vocabulary taken the wrong way round) does
not show in any one item: every item can look well formed while all keys are wrong. Over a whole file it
shows, so a file stops (InputError, one line naming the file and the reason) when

- at least ``MIN_ITEMS`` items carry a key and every one of them sits in the same option slot;
- at least ``MIN_SKEWED`` items carry a key and one slot holds ``SKEW`` of them or more. (Real banks are
  far from uniform: 37% of the 2,950 customs items have their key in option 1, and a 196-item sample of
  them held 46%; a test against equal slots would stop real banks.)
- more than half of at least ``MIN_ITEMS`` items that are not excluded have no single key: the printed
  marks do not imply one key per item as read.

:func:`key_slots` is recorded in ``verification.json`` (``files[].keys``) either way.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from blindmcq.datasets.items import Item
from blindmcq.errors import InputError

MIN_ITEMS = 12
MIN_SKEWED, SKEW = 30, 0.9


def key_slots(items: Sequence[Item]) -> dict[str, Any]:
    """How many items carry a key, how many of those sit in each option slot (1-based), and how many items
    that are not excluded have no single key."""
    live = [i for i in items if i.status != "excluded"]
    keyed = [i.key for i in live if i.key is not None and "invariant" not in i.flags]
    slots = Counter(keyed)
    return {
        "items": len(live),
        "keyed": len(keyed),
        "no_single_key": len(live) - len(keyed),
        "slots": {str(k + 1): slots[k] for k in sorted(slots)},
    }


def check_file(items: Sequence[Item], *, file: str, values: dict[str, Any] | None = None) -> dict[str, Any]:
    """:func:`key_slots` of one reading of ``file``; InputError when it is implausible (module doc)."""
    summary = key_slots(items)
    seen = f" (fourth column values seen: {sorted(values)[:6]})" if values is not None else ""
    n, keyed, slots = summary["items"], summary["keyed"], summary["slots"]
    if n >= MIN_ITEMS and summary["no_single_key"] > n / 2:
        raise InputError(
            f"{summary['no_single_key']} of {n} items have no single key as the fourth column was read"
            f"{seen}: a misread mark column?",
            file=file,
        )
    if keyed >= MIN_ITEMS:
        slot, top = max(slots.items(), key=lambda kv: kv[1])
        if len(slots) == 1:
            raise InputError(
                f"every one of {keyed} keys is option {slot}{seen}: a misread mark or key column?", file=file
            )
        if keyed >= MIN_SKEWED and top >= SKEW * keyed:
            raise InputError(
                f"option {slot} holds {top} of {keyed} keys{seen}: a misread mark or key column?", file=file
            )
    return summary
