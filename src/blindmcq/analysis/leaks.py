"""What the surface strategies still find past the gate, and what lexical search finds beyond length.

A gate built on one model's blind answers selects items; it can select on a surface feature. If the
rejected items are those whose key is the longest option, the accepted ones lean towards a short key,
and ``shortest`` then finds it: the gate has left the inverse leak behind. ``surface_past_gate`` scores
every Table 2 strategy (one pick per item, ties credited 1/k) on the accepted and on the rejected items
and tests each against chance both ways: exact one-sided binomial on items, Holm-adjusted over every
strategy and direction scanned in that set. The gate model's own strategy is selected on by
construction, which the table says.

``lexical_beyond_length``: lexical search and ``most_words`` share one length signal (BM25 sums over
more terms for longer options). On the items where their picks differ, lexical search's accuracy
against chance shows the statute signal that is not length.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from blindmcq import stats
from blindmcq.analysis.gate import GateResult

ALPHA = 0.05
SETS = ("accepted", "rejected")
COLUMNS = ["set", "strategy", "n", "k", "acc", "lo", "hi", "chance", "p_above", "p_below", "holm_above",
           "holm_below", "leaks", "reversed"]  # fmt: skip


def credit_of(baselines: pd.DataFrame) -> pd.Series:
    """Each pick's score: its tie credit (1/k of a k-way tie holding the key) where the frame has one,
    else whether it is right (frames written before tie credit)."""
    return baselines["credit"].astype(float) if "credit" in baselines else baselines["correct"].astype(float)


def _binomial_tails(k: float, n: int, chance: float) -> tuple[float, float]:
    """One-sided exact binomial p-values of ``k`` (possibly fractional, from tie credit) of ``n``."""
    return stats.binomial_tail(k, n, chance, "greater"), stats.binomial_tail(k, n, chance, "less")


def score_sets(baselines: pd.DataFrame, sets: dict[str, Sequence[str]]) -> pd.DataFrame:
    """Per named item set and strategy: accuracy (mean credit), Wilson interval, chance and both tests,
    Holm-adjusted over the strategies and directions of that set (COLUMNS)."""
    b = baselines.assign(credit=credit_of(baselines), inv=1.0 / baselines["n_options"])
    rows = []
    for set_name, ids in sets.items():
        part = b[b["item_id"].isin(list(ids))]
        for strategy, g in part.groupby("strategy", sort=False):
            n, k, chance = len(g), float(g["credit"].sum()), float(g["inv"].mean())
            _, lo, hi = stats.wilson_columns([k], [n])
            above, below = _binomial_tails(k, n, chance)
            rows.append({"set": set_name, "strategy": str(strategy), "n": n, "k": k, "acc": k / n,
                         "lo": float(lo[0]), "hi": float(hi[0]), "chance": chance,
                         "p_above": above, "p_below": below})  # fmt: skip
    out = pd.DataFrame(rows, columns=COLUMNS[:10])
    if out.empty:
        return pd.DataFrame(columns=COLUMNS)
    for _, idx in out.groupby("set", sort=False).groups.items():
        adjusted = stats.holm(np.concatenate([out.loc[idx, "p_above"], out.loc[idx, "p_below"]]))
        out.loc[idx, "holm_above"], out.loc[idx, "holm_below"] = adjusted[: len(idx)], adjusted[len(idx) :]
    out["leaks"] = out["holm_above"] < ALPHA
    out["reversed"] = out["holm_below"] < ALPHA
    return out[COLUMNS]


def surface_past_gate(baselines: pd.DataFrame | None, gate: GateResult | None) -> pd.DataFrame:
    """Every Table 2 strategy on the gate's accepted and rejected items (:func:`score_sets`)."""
    if baselines is None or baselines.empty or gate is None:
        return pd.DataFrame(columns=COLUMNS)
    return score_sets(baselines, {name: gate.item_set(name) or [] for name in SETS})


def lexical_beyond_length(
    baselines: pd.DataFrame | None, lexical: str = "lexical_search", length: str = "most_words"
) -> dict[str, float]:
    """Lexical search on the items where its pick differs from ``length``'s: n, right, accuracy, chance
    and the one-sided exact binomial p against chance (empty when either strategy is missing).

    Items where either strategy ties are left out: there a pick is a tie break's draw, and the figure
    would move with its seed; what is left are the items where both picks are settled by print."""
    if baselines is None or baselines.empty:
        return {}
    picks = baselines.pivot_table(
        index="item_id", columns="strategy", values="picked_option", aggfunc="first"
    )
    if lexical not in picks or length not in picks:
        return {}
    both = baselines[baselines["strategy"].isin([lexical, length])]
    tied = set(both.loc[both["tie"].astype(bool), "item_id"]) if "tie" in both else set()
    differ = picks.index[(picks[lexical] != picks[length]) & ~picks.index.isin(tied)]
    rows = baselines[(baselines["strategy"] == lexical) & baselines["item_id"].isin(differ)]
    n = len(rows)
    if n == 0:
        return {}
    k = int(rows["correct"].astype(bool).sum())
    chance = float((1.0 / rows["n_options"]).mean())
    return {"n": n, "k": k, "acc": k / n, "chance": chance, "p_above": stats.chance_test(k, n, chance)}


def leak_metrics(past_gate: pd.DataFrame, beyond: dict[str, float]) -> dict[str, float]:
    """Flat metrics: per set, how many strategies are above and below chance after Holm
    (``surface_gate/<set>/n_above``, ``n_below``) and each strategy's accuracy there; lexical search
    beyond length (``lexical_beyond_length/{n,acc,p}``)."""
    out: dict[str, float] = {}
    for set_name, part in past_gate.groupby("set", sort=False):
        out[f"surface_gate/{set_name}/n_above"] = float(part["leaks"].astype(bool).sum())
        out[f"surface_gate/{set_name}/n_below"] = float(part["reversed"].astype(bool).sum())
        for row in part.itertuples():
            out[f"surface_gate/{set_name}/{row.strategy}"] = round(float(row.acc), 3)
    if beyond:
        out |= {f"lexical_beyond_length/{k}": float(beyond[k]) for k in ("n", "acc", "p_above")}
    return out
