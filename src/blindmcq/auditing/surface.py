"""Surface strategies of Table 2: what a bank gives away without reading the question or reasoning.

Each strategy picks one option per item from the options alone, by the rules of
:mod:`blindmcq.surface` (the one definition the probed heuristic models use too):
- ``constant_{s}``: always slot s (0-based), for every s up to the largest N. An item with N <= s
  has no slot s and does not count for that strategy (``n`` shrinks; the summary says how many).
- ``longest`` / ``shortest``: most / fewest characters (whitespace-normalised).
- ``most_words``: most whitespace-separated words.

Ties are credited as an expectation: an item whose extreme is shared by k options earns ``credit``
1/k when the key is among them (0 otherwise), which is the mean accuracy of a uniformly random tie
break. Picking the first tied option instead would inherit the bank's key-position skew (keys in slot
A on 30% of the default bank), the bias already rejected for lexical search. ``picked_option`` is one
such random break, seeded by (seed, strategy, the item's option texts), so the per-item picks stay
reproducible and equal the probed heuristic's pick on the same item; ``tie`` marks the item and
``n_tied`` says how many options shared the extreme. Accuracy is the mean credit. Only usable items
count; the summary reports how many were skipped and how many were tied.
Chance is the mean of 1/N over the counted items.
Lexical search over statutes lives in :mod:`blindmcq.statutes`; its picks share these columns.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from blindmcq.auditing.profile import profile_bank
from blindmcq.datasets.items import Item
from blindmcq.stats import wilson_columns
from blindmcq.surface import SCORED, pick, tie_credit
from blindmcq.vocabulary import LEXICAL

PICK_COLUMNS = (
    "strategy", "item_id", "n_options", "picked_option", "key", "correct", "tie", "n_tied", "credit",
)  # fmt: skip
SUMMARY_COLUMNS = (
    "strategy", "n", "n_correct", "accuracy", "ci_low", "ci_high", "chance",
    "n_ties", "n_not_applicable", "n_skipped",
)  # fmt: skip

FACT_KEYS = (
    "n_usable", "key_slot_counts", "key_slot_shares",
    "key_chars_mean", "distractor_chars_mean", "key_minus_distractor_chars",
)  # fmt: skip


@dataclass(frozen=True)
class SurfaceResult:
    picks: pd.DataFrame  # one row per strategy and item (PICK_COLUMNS)
    summary: pd.DataFrame  # one row per strategy (SUMMARY_COLUMNS)
    n_skipped: int  # items not usable (no key, or status not ok)
    facts: dict[str, Any]  # key-position shares and key-minus-distractor length (Table 2's last lines)


def strategy_names(items: Sequence[Item]) -> list[str]:
    max_n = max((item.n_options for item in items), default=0)
    return [f"constant_{s}" for s in range(max_n)] + list(SCORED)


def surface_picks(items: Sequence[Item], seed: int) -> pd.DataFrame:
    """Every strategy's pick on every usable item (PICK_COLUMNS), in the published order, by the rules
    of :mod:`blindmcq.surface` (a tie broken by the seed and the item's option texts).

    Built a column at a time (numpy arrays per strategy, never a Python tuple per pick): a million-item
    bank's seven million picks stay a few hundred bytes each (the constants are computed whole; the
    scored strategies call ``pick`` per item, so a tie is broken exactly as the probed heuristic does)."""
    usable = [item for item in items if item.usable]
    if not usable:
        return pd.DataFrame([], columns=list(PICK_COLUMNS))
    n = len(usable)
    ids = np.array([item.id for item in usable], dtype=object)
    n_options = np.fromiter((item.n_options for item in usable), dtype=np.int64, count=n)
    keys = np.fromiter((item.key for item in usable), dtype=np.int64, count=n)
    parts: list[dict[str, Any]] = []
    for name in strategy_names(usable):
        if name not in SCORED:  # constant_s: slot s wherever the item has one, never a tie
            slot = int(name.removeprefix("constant_"))
            has = n_options > slot
            correct = keys[has] == slot
            parts.append({
                "item_id": ids[has], "n_options": n_options[has],
                "picked_option": np.full(int(has.sum()), slot, dtype=np.int64), "key": keys[has],
                "correct": correct, "tie": np.zeros(correct.size, dtype=bool),
                "n_tied": np.ones(correct.size, dtype=np.int64), "credit": correct.astype(np.float64),
            })  # fmt: skip
            continue
        picked = np.empty(n, dtype=np.int64)
        n_tied = np.empty(n, dtype=np.int64)
        credit = np.empty(n, dtype=np.float64)
        for i, item in enumerate(usable):
            chosen = pick(name, item.options, seed=seed)
            picked[i], n_tied[i] = chosen.slot, len(chosen.tied)
            credit[i] = tie_credit(item.key, chosen.tied)
        parts.append({
            "item_id": ids, "n_options": n_options, "picked_option": picked, "key": keys,
            "correct": picked == keys, "tie": n_tied > 1, "n_tied": n_tied, "credit": credit,
        })  # fmt: skip
    names = strategy_names(usable)
    sizes = [len(part["item_id"]) for part in parts]
    columns: dict[str, Any] = {"strategy": np.repeat(np.array(names, dtype=object), sizes)}
    for column in PICK_COLUMNS[1:]:
        columns[column] = np.concatenate([part[column] for part in parts])
    return pd.DataFrame(columns, columns=list(PICK_COLUMNS))


def lexical_picks(lexical: pd.DataFrame) -> pd.DataFrame:
    """The usable rows of a ``lexical_search`` result as strategy picks (the columns of ``surface_picks``)."""
    lexical = lexical[lexical["usable"]]
    return pd.DataFrame(
        {
            "strategy": LEXICAL,
            "item_id": lexical["item_id"],
            "n_options": lexical["n_options"],
            "picked_option": lexical["picked_option"],
            "key": lexical["key"],
            "correct": lexical["correct"].astype(bool),
            "tie": lexical["tie"].astype(bool),
            "n_tied": lexical["tied_options"].map(len),
            "credit": [
                tie_credit(k, list(t)) for k, t in zip(lexical["key"], lexical["tied_options"], strict=True)
            ],
        }
    )


def summarise(picks: pd.DataFrame, *, n_usable: int, n_skipped: int) -> pd.DataFrame:
    """Accuracy per strategy (mean tie credit) with its Wilson interval and chance (SUMMARY_COLUMNS).
    ``n_correct`` is the summed credit (an expected count, so not always whole)."""
    rows = []
    for name, group in picks.groupby("strategy", sort=False):
        n, k = len(group), float(group["credit"].sum())
        _, low, high = (float(v[0]) for v in wilson_columns([k], [n]))
        chance = float((1 / group["n_options"]).mean())
        ties = int(group["tie"].sum())
        rows.append((name, n, k, k / n, low, high, chance, ties, n_usable - n, n_skipped))
    return pd.DataFrame(rows, columns=list(SUMMARY_COLUMNS))


def surface_strategies(
    items: Sequence[Item], seed: int, profile: dict[str, Any] | None = None
) -> SurfaceResult:
    """Table 2's surface strategies on a bank: per-item picks and the summary. ``profile``: the bank's
    ``profile_bank``, where the caller has it (a big bank's profile is measured once)."""
    n_usable = sum(item.usable for item in items)
    picks = surface_picks(items, seed)
    n_skipped = len(items) - n_usable
    profile = profile if profile is not None else profile_bank(items)
    facts = {key: profile[key] for key in FACT_KEYS}
    return SurfaceResult(picks, summarise(picks, n_usable=n_usable, n_skipped=n_skipped), n_skipped, facts)
