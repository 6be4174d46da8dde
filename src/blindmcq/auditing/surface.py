"""Surface strategies of Table 2: what a bank gives away without reading the question or reasoning.

Each strategy picks one option per item from the options alone:
- ``constant_{s}``: always slot s (0-based), for every s up to the largest N. An item with N <= s
  has no slot s and does not count for that strategy (``n`` shrinks; the summary says how many).
- ``longest`` / ``shortest``: most / fewest characters (whitespace-normalised, as in
  :mod:`blindmcq.auditing.profile`).
- ``most_words``: most whitespace-separated words.

Ties: the first tied option in published order is picked (deterministic, and the same rule the
constant strategies imply); ``tie`` marks the item and ``n_tied`` says how many options shared the
extreme, so a reader can see how much the rule matters. Only usable items count; the summary
reports how many were skipped. Chance is the mean of 1/N over the counted items.
Lexical search over statutes lives in :mod:`blindmcq.statutes`; its picks share these columns.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from blindmcq.analysis.stats import wilson
from blindmcq.auditing.profile import collapse_whitespace, profile_bank
from blindmcq.datasets.items import Item

PICK_COLUMNS = ("strategy", "item_id", "n_options", "picked_option", "key", "correct", "tie", "n_tied")
SUMMARY_COLUMNS = (
    "strategy", "n", "n_correct", "accuracy", "ci_low", "ci_high", "chance",
    "n_ties", "n_not_applicable", "n_skipped",
)  # fmt: skip

FACT_KEYS = (
    "n_usable", "key_slot_counts", "key_slot_shares",
    "key_chars_mean", "distractor_chars_mean", "key_minus_distractor_chars",
)  # fmt: skip

Score = Callable[[str], float]


def _chars(option: str) -> float:
    return len(collapse_whitespace(option))


def _words(option: str) -> float:
    return len(option.split())


SCORED: dict[str, tuple[Score, int]] = {
    # name: (score per option, +1 to pick the highest / -1 the lowest)
    "longest": (_chars, 1),
    "shortest": (_chars, -1),
    "most_words": (_words, 1),
}


def pick_extreme(options: Sequence[str], score: Score, sign: int = 1) -> tuple[int, int]:
    """(picked index, number of options tied at the extreme); the first in published order wins a tie."""
    values = [sign * score(o) for o in options]
    best = max(values)
    return values.index(best), values.count(best)


@dataclass(frozen=True)
class SurfaceResult:
    picks: pd.DataFrame  # one row per strategy and item (PICK_COLUMNS)
    summary: pd.DataFrame  # one row per strategy (SUMMARY_COLUMNS)
    n_skipped: int  # items not usable (no key, or status not ok)
    facts: dict[str, Any]  # key-position shares and key-minus-distractor length (Table 2's last lines)


def strategy_names(items: Sequence[Item]) -> list[str]:
    max_n = max((item.n_options for item in items), default=0)
    return [f"constant_{s}" for s in range(max_n)] + list(SCORED)


def surface_picks(items: Sequence[Item]) -> pd.DataFrame:
    """Every strategy's pick on every usable item (PICK_COLUMNS)."""
    usable = [item for item in items if item.usable]
    rows = []
    for name in strategy_names(usable):
        for item in usable:
            if name.startswith("constant_"):
                slot = int(name.removeprefix("constant_"))
                if slot >= item.n_options:
                    continue
                picked, n_tied = slot, 1
            else:
                score, sign = SCORED[name]
                picked, n_tied = pick_extreme(item.options, score, sign)
            rows.append(
                (name, item.id, item.n_options, picked, item.key, picked == item.key, n_tied > 1, n_tied)
            )
    return pd.DataFrame(rows, columns=list(PICK_COLUMNS))


LEXICAL = "lexical_search"


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
        }
    )


def summarise(picks: pd.DataFrame, *, n_usable: int, n_skipped: int) -> pd.DataFrame:
    """Accuracy per strategy with its Wilson interval and chance (SUMMARY_COLUMNS)."""
    rows = []
    for name, group in picks.groupby("strategy", sort=False):
        n, k = len(group), int(group["correct"].sum())
        low, high = wilson(k, n)
        chance = float((1 / group["n_options"]).mean())
        ties = int(group["tie"].sum())
        rows.append((name, n, k, k / n, low, high, chance, ties, n_usable - n, n_skipped))
    return pd.DataFrame(rows, columns=list(SUMMARY_COLUMNS))


def surface_strategies(items: Sequence[Item]) -> SurfaceResult:
    """Table 2's surface strategies on a bank: per-item picks and the summary."""
    n_usable = sum(item.usable for item in items)
    picks = surface_picks(items)
    n_skipped = len(items) - n_usable
    profile = profile_bank(items)
    facts = {key: profile[key] for key in FACT_KEYS}
    return SurfaceResult(picks, summarise(picks, n_usable=n_usable, n_skipped=n_skipped), n_skipped, facts)


def best_constant(summary: pd.DataFrame) -> pd.Series:
    """The constant-position row with the highest accuracy (chosen after the fact, as in the paper)."""
    constants = summary[summary["strategy"].str.startswith("constant_")]
    return constants.loc[constants["accuracy"].idxmax()]
