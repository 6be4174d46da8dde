"""Before/after tables for the repairs, from predictions frames; plain pandas, Markdown via ``Table``.

Rewriting: blind (or any condition's) accuracy before and after, Wilson 95% intervals, one-sided exact
binomial p-values against chance both ways (chance = mean 1/N over the calls), and the exact McNemar
test on calls paired by (item, condition, order), since a rewritten item keeps its id.
AnswerPool: pooled accuracy on the answerable questions against the ordinary accuracy of the same
items in the same condition; the difference is the elimination credit.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from blindmcq.analysis.stats import accuracy, chance_test, mcnemar
from blindmcq.analysis.tables import Table, fmt, fmt_ci, fmt_p
from blindmcq.tasks.answerpool import score_pool

ALPHA = 0.05


def accuracy_row(predictions: pd.DataFrame) -> dict[str, Any]:
    """Accuracy with interval, chance and the two one-sided tests against chance."""
    k, n = int(predictions["correct"].sum()), len(predictions)
    acc = accuracy(k, n)
    chance = float((1.0 / predictions["n_options"]).mean()) if n else float("nan")
    p_above, p_below = chance_test(k, n, chance, "greater"), chance_test(k, n, chance, "less")
    return {
        "calls": n, "items": int(predictions["item_id"].nunique()) if n else 0, "correct": k,
        "acc": acc.value, "lo": acc.lo, "hi": acc.hi, "chance": chance,
        "p_above": p_above, "p_below": p_below,
        "above_chance": bool(p_above < ALPHA), "below_chance": bool(p_below < ALPHA),
    }  # fmt: skip


def _paired(before: pd.DataFrame, after: pd.DataFrame) -> tuple[int, float]:
    keys = ["item_id", "condition", "order_id"]
    both = before[[*keys, "correct"]].merge(after[[*keys, "correct"]], on=keys, suffixes=("_b", "_a"))
    if both.empty:
        return 0, float("nan")
    return len(both), mcnemar(both["correct_b"].to_numpy(), both["correct_a"].to_numpy()).p


def rewrite_comparison(
    before: pd.DataFrame, after: pd.DataFrame, conditions: Sequence[str] = ("blind", "full")
) -> pd.DataFrame:
    """Rows (model, condition, version before|after) with accuracy, interval, chance tests, McNemar p;
    models in the order they first appear in ``before``."""
    rows = []
    for model in dict.fromkeys([*before["model"], *after["model"]]):
        mb, ma = before[before["model"] == model], after[after["model"] == model]
        for condition in conditions:
            b, a = mb[mb["condition"] == condition], ma[ma["condition"] == condition]
            if b.empty and a.empty:
                continue
            pairs, p = _paired(b, a)
            row = {"model": model, "condition": condition}
            rows.append({**row, "version": "before", **accuracy_row(b)})
            rows.append({**row, "version": "after", **accuracy_row(a), "pairs": pairs, "mcnemar_p": p})
    return pd.DataFrame(rows)


def rewrite_table(comparison: pd.DataFrame) -> Table:
    shown = pd.DataFrame({
        "model": comparison["model"],
        "condition": comparison["condition"], "version": comparison["version"], "calls": comparison["calls"],
        "accuracy [95% CI]": [fmt_ci(r.acc, r.lo, r.hi) for r in comparison.itertuples()],
        "chance": comparison["chance"].map(fmt),
        "p (above chance)": comparison["p_above"].map(fmt_p),
        "p (below chance)": comparison["p_below"].map(fmt_p),
        "McNemar p": comparison.get("mcnemar_p", pd.Series(np.nan, index=comparison.index)).map(fmt_p),
    })  # fmt: skip
    note = (
        "One-sided exact binomial tests against chance (mean 1/N); McNemar: exact, two-sided, "
        "on calls paired by item, condition and order."
    )
    return Table("rewrite", "Distractor rewriting: accuracy before and after", comparison, shown, note)


def pool_comparison(pooled: pd.DataFrame, ordinary: pd.DataFrame) -> pd.DataFrame:
    """Per condition: ordinary vs pooled accuracy on the answerable questions, and the credit."""
    scores = score_pool(pooled).set_index("condition")
    rows = []
    for condition, part in pooled.groupby("condition", sort=True):
        ids = set(part.loc[part["answerable"], "item_id"])
        same = ordinary[(ordinary["condition"] == condition) & ordinary["item_id"].isin(ids)]
        base = (
            accuracy_row(same) if not same.empty else {"acc": np.nan, "lo": np.nan, "hi": np.nan, "calls": 0}
        )
        s = scores.loc[condition]
        rows.append({
            "condition": condition, "ordinary_calls": base["calls"],
            "ordinary_acc": base["acc"], "ordinary_lo": base["lo"], "ordinary_hi": base["hi"],
            "pooled_n": int(s["answerable_acc_n"]), "pooled_acc": s["answerable_acc"],
            "pooled_lo": s["answerable_acc_lo"], "pooled_hi": s["answerable_acc_hi"],
            "elimination_credit": base["acc"] - s["answerable_acc"],
            "pooled_all_acc": s["pooled_acc"], "chance": s["chance"], "p_above": s["p_above"],
            "abstention_n": int(s["abstention_n"]), "abstention": s["abstention"],
            "abstention_lo": s["abstention_lo"], "abstention_hi": s["abstention_hi"],
            "false_abstention": s["false_abstention"], "unparseable": s["unparseable"],
            "set_hit": s["set_hit"], "set_chance": s["set_chance"],
            "group_acc": s["group_acc"], "group_chance": s["group_chance"],
        })  # fmt: skip
    return pd.DataFrame(rows)


def pool_table(comparison: pd.DataFrame) -> Table:
    rows = list(comparison.itertuples())
    shown = pd.DataFrame({
        "condition": comparison["condition"],
        "ordinary [95% CI]": [fmt_ci(r.ordinary_acc, r.ordinary_lo, r.ordinary_hi) for r in rows],
        "pooled [95% CI]": [fmt_ci(r.pooled_acc, r.pooled_lo, r.pooled_hi) for r in rows],
        "elimination credit": comparison["elimination_credit"].map(lambda x: fmt(x, signed=True)),
        "abstention on unanswerable": [fmt_ci(r.abstention, r.abstention_lo, r.abstention_hi) for r in rows],
        "false abstention": comparison["false_abstention"].map(fmt),
        "chance / question": comparison["chance"].map(fmt),
        "set hit (chance)": [f"{fmt(r.set_hit)} ({fmt(r.set_chance)})" for r in rows],
        "group right (chance)": [f"{fmt(r.group_acc)} ({r.group_chance:.1e})" for r in rows],
    })  # fmt: skip
    note = (
        "Ordinary and pooled accuracy on the same answerable items; credit = ordinary - pooled. "
        "Chance per question: 1/(pool size + 1). Blind pooled prompts hide the stems, so a per-slot hit is "
        "chance by construction; set hit = the pick answers some question of the group."
    )
    return Table("answerpool", "AnswerPool: pooled against ordinary accuracy", comparison, shown, note)
