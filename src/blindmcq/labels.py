"""Label sequences that go on past their symbols, one rule for every place that names a slot.

``combined(symbols, n)``: the first n labels made of ``symbols`` the way spreadsheet columns go on (A..Z,
AA..AZ, BA.., ZZ, AAA..): the label of slot i is the bijective base-len(symbols) numeral of i + 1. The
label schemes' ``extend: combine`` (tasks/presentations.py), the names of slots in tables and figures
(analysis/tables.slot_name) and letter keys past Z (datasets/generic.py) all use it.
"""

from __future__ import annotations

from collections.abc import Sequence


def combined_label(symbols: Sequence[str], i: int) -> str:
    """The label of slot i (0-based): slot 0 is ``symbols[0]``, slot len(symbols) the first pair."""
    base, digits, k = len(symbols), [], i + 1
    while k:
        k, r = divmod(k - 1, base)
        digits.append(str(symbols[r]))
    return "".join(reversed(digits))


def combined(symbols: Sequence[str], n: int) -> list[str]:
    """The labels of the first ``max(n, len(symbols))`` slots: the symbols, then their combinations."""
    return [*map(str, symbols), *(combined_label(symbols, i) for i in range(len(symbols), n))]
