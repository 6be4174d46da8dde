"""Seeded simulated banks for the coverage checks of habit, excess and the item-level intervals, shared
by ``tests/analysis/test_coverage.py`` (a few cells, seconds) and the benchmarks that print the full
grids (``benchmarks/bench_habit_coverage.py``, ``benchmarks/bench_interval_coverage.py``).

Habit banks: 4-option items whose published key sits in slot s with probability ``keys[s]``; the model
knows a share ``know`` of the items (picks the key in every order) and answers the rest by its position
habit (slot s with probability ``habit[s]``), blind to content. Each bank is one ``model`` of one frame,
so one call of the analysis measures every bank.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

SLOTS = 4
KEY_SPLITS: dict[str, tuple[float, ...]] = {
    "balanced": (0.25, 0.25, 0.25, 0.25),
    ".4/.3/.2/.1": (0.4, 0.3, 0.2, 0.1),
    "default bank": (0.303, 0.215, 0.188, 0.294),  # the default bank's published key shares
}
HABITS = ("most-keyed", "least-keyed", "none")
DESIGNS = ("published", "8 orders")
# the 8 orders: the four rotations of the published order and of its reverse; order o shows published
# option p in slot SHOWN[o, p]
_ORDERS = [[(s + k) % SLOTS for s in range(SLOTS)] for k in range(SLOTS)]
_ORDERS += [[SLOTS - 1 - (s + k) % SLOTS for s in range(SLOTS)] for k in range(SLOTS)]
SHOWN = np.array([[o.index(p) for p in range(SLOTS)] for o in _ORDERS])


def habit_probs(keys: tuple[float, ...], habit: str) -> np.ndarray:
    """0.7 on the most- or least-keyed slot (the first such), 0.1 on each other; uniform for ``none``."""
    if habit == "none":
        return np.full(SLOTS, 1.0 / SLOTS)
    q = np.asarray(keys)
    at = int(np.argmax(q)) if habit == "most-keyed" else int(np.argmin(q) if np.ptp(q) else SLOTS - 1)
    out = np.full(SLOTS, 0.1)
    out[at] = 0.7
    return out


@dataclass(frozen=True)
class HabitTruth:
    """The population values a bank's estimates aim at: the true habit ``pi . q`` and excess
    ``kappa (1 - h)``, and what the paper's definition converges to, ``kappa Q + (1 - kappa) h`` and
    ``kappa (1 - Q)`` (``q`` the key shares of the slots shown: uniform over the 8 orders)."""

    habit: float
    excess: float
    paper_habit: float
    paper_excess: float


def habit_truth(keys: tuple[float, ...], habit: str, know: float, design: str) -> HabitTruth:
    q = np.full(SLOTS, 1.0 / SLOTS) if design == "8 orders" else np.asarray(keys)
    h, big_q = float(habit_probs(keys, habit) @ q), float(q @ q)
    return HabitTruth(h, know * (1 - h), know * big_q + (1 - know) * h, know * (1 - big_q))


def habit_banks(
    rng: np.random.Generator, n_banks: int, n_items: int, keys: tuple[float, ...], habit: str, know: float,
    design: str,
) -> pd.DataFrame:  # fmt: skip
    """Blind rows of ``n_banks`` banks (one ``model`` each) of ``n_items`` items: one row an item in the
    published order, eight (each slot keyed twice) over the 8 orders."""
    total = n_banks * n_items
    published = np.minimum(np.searchsorted(np.cumsum(keys), rng.random(total), side="right"), SLOTS - 1)
    knows = rng.random(total) < know
    calls = 1 if design == "published" else len(SHOWN)
    item = np.repeat(np.arange(total), calls)
    order = np.tile(np.arange(calls), total)
    key_slot = published[item] if calls == 1 else SHOWN[order, published[item]]
    pi = np.cumsum(habit_probs(keys, habit))
    by_habit = np.minimum(np.searchsorted(pi, rng.random(item.size), side="right"), SLOTS - 1)
    picked = np.where(knows[item], key_slot, by_habit)
    return pd.DataFrame({
        "model": pd.Categorical.from_codes(item // n_items, [f"b{b:05d}" for b in range(n_banks)]),
        "item_id": pd.Categorical.from_codes(item, [f"i{i}" for i in range(total)]),
        "n_options": SLOTS, "key_slot": key_slot.astype(float), "picked_slot": picked.astype(float),
        "correct": picked == key_slot,
    })  # fmt: skip


def habit_coverage(bounds: pd.DataFrame, truth: HabitTruth) -> dict[str, float]:
    """Share of banks whose interval covers its target: the corrected habit and excess the true ones,
    the paper's the values its definition converges to (a bank with no interval counts as missed)."""
    targets = {
        "habit_corrected": truth.habit,
        "excess_corrected": truth.excess,
        "habit": truth.paper_habit,
        "excess": truth.paper_excess,
    }
    return {
        name: float(np.mean((bounds[f"{name}_lo"] <= t + 1e-12) & (t - 1e-12 <= bounds[f"{name}_hi"])))
        for name, t in targets.items()
    }


SHARES = (0.05, 0.25, 0.5, 0.95)
CONSISTENT = (0.0, 0.5, 1.0)
SPREADS = ("homogeneous", "Beta(2s, 2(1-s))", "Beta(0.2s, 0.2(1-s))")


def item_means(
    rng: np.random.Generator, n_banks: int, share: float, consistent: float, spread: str, n_items: int,
    calls: int,
) -> np.ndarray:  # fmt: skip
    """(n_banks, n_items) item means of 0/1 calls: item i is right with probability p_i (all ``share``,
    or Beta with mean ``share``); a share ``consistent`` of the items is answered the same in every call
    (one draw for all its calls), the rest call by call."""
    shape = (n_banks, n_items)
    if spread == "homogeneous":
        p = np.full(shape, share)
    else:
        scale = 2.0 if spread.startswith("Beta(2s") else 0.2
        p = rng.beta(scale * share, scale * (1 - share), shape)
    once = (rng.random(shape) < p).astype(float)
    each = rng.binomial(calls, p) / calls
    return np.where(rng.random(shape) < consistent, once, each)
