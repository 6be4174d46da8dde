"""Before/after tables for the repairs (``tasks/rewrite.py``, ``tasks/answerpool.py``), from their predictions
frames; plain pandas, Markdown via ``Table``.

Rewriting: blind (or any condition's) accuracy before and after. The unit is the item: a model answers
an item the same way in most of its orders (lexical search in all of them), so its calls are not
independent draws. Intervals and chance tests are the Rao-Scott ones (the beta interval and the one-sided
binomial at the effective sample size, calls divided by the item design effect; chance = mean 1/N over the
calls), and before against after is the exact sign test on items (a rewritten item keeps its id): how
many items' accuracy went up, how many down. Fluency: from the rewrite stage's fluency scores
(``read_fluency``), never from a model.
AnswerPool: pooled accuracy on the answerable questions against the ordinary accuracy of the same
items in the same condition; the difference is the elimination credit.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from blindmcq.analysis.tables import Table, fmt, fmt_ci, fmt_p
from blindmcq.errors import InputError
from blindmcq.jsonl import jsonl_records
from blindmcq.stats import (
    accuracy,
    chance_test,
    clustered_chance_test,
    clustered_proportion,
    holm,
    item_sign_test,
)
from blindmcq.vocabulary import CONDITIONS

ALPHA = 0.05


def accuracy_row(predictions: pd.DataFrame) -> dict[str, Any]:
    """Accuracy with its item-level interval, chance and the two one-sided item-level tests."""
    n = len(predictions)
    acc = clustered_proportion(predictions["correct"].astype(float), predictions["item_id"].astype(str))
    chance = float((1.0 / predictions["n_options"]).mean()) if n else float("nan")
    # no calls: the share, its size and so both tests are NaN
    p_above = clustered_chance_test(acc, chance, "greater")
    p_below = clustered_chance_test(acc, chance, "less")
    return {
        "calls": n, "items": acc.items, "correct": int(predictions["correct"].sum()),
        "acc": acc.value, "lo": acc.lo, "hi": acc.hi, "n_eff": acc.n_eff, "chance": chance,
        "p_above": p_above, "p_below": p_below,
        "above_chance": bool(p_above < ALPHA), "below_chance": bool(p_below < ALPHA),
    }  # fmt: skip


def _item_means(calls: pd.DataFrame) -> pd.Series:
    return calls.assign(correct=calls["correct"].astype(float)).groupby("item_id")["correct"].mean()


def _paired(before: pd.DataFrame, after: pd.DataFrame) -> dict[str, Any]:
    """The exact sign test on items' accuracy before and after (items probed on both sides)."""
    if before.empty or after.empty:
        return {"items_paired": 0, "items_up": 0, "items_down": 0, "sign_p": float("nan")}
    t = item_sign_test(_item_means(before), _item_means(after))
    return {"items_paired": t.items, "items_up": t.up, "items_down": t.down, "sign_p": t.p}


def rewrite_comparison(
    before: pd.DataFrame, after: pd.DataFrame, conditions: Sequence[str] = CONDITIONS
) -> pd.DataFrame:
    """Rows (model, condition, version before|after) with accuracy, item-level interval and chance tests,
    and on the after row the item sign test; models in the order they first appear in ``before``."""
    rows = []
    for model in dict.fromkeys([*before["model"], *after["model"]]):
        mb, ma = before[before["model"] == model], after[after["model"] == model]
        for condition in conditions:
            b, a = mb[mb["condition"] == condition], ma[ma["condition"] == condition]
            if b.empty and a.empty:
                continue
            row = {"model": model, "condition": condition}
            rows.append({**row, "version": "before", **accuracy_row(b)})
            rows.append({**row, "version": "after", **accuracy_row(a), **_paired(b, a)})
    out = pd.DataFrame(rows)
    if "sign_p" in out:  # every model and condition compared is one test of the family
        out["sign_p_holm"] = holm(out["sign_p"])
    return out


def rewrite_table(comparison: pd.DataFrame) -> Table:
    def col(name: str) -> pd.Series:
        return comparison.get(name, pd.Series(np.nan, index=comparison.index))

    moved = [
        "" if not np.isfinite(u) else f"{int(u)} / {int(d)}"
        for u, d in zip(col("items_up"), col("items_down"), strict=True)
    ]
    shown = pd.DataFrame({
        "model": comparison["model"],
        "condition": comparison["condition"], "version": comparison["version"],
        "items": comparison["items"], "calls": comparison["calls"],
        "accuracy [95% CI]": [fmt_ci(r.acc, r.lo, r.hi) for r in comparison.itertuples()],
        "chance": comparison["chance"].map(fmt),
        "p (above chance)": comparison["p_above"].map(fmt_p),
        "p (below chance)": comparison["p_below"].map(fmt_p),
        "items up / down": moved,
        "sign test p": col("sign_p").map(fmt_p),
        "Holm p": col("sign_p_holm").map(fmt_p),
    })  # fmt: skip
    note = (
        "Unit: the item (its calls in several orders are not independent). Intervals and one-sided "
        "tests against chance (mean 1/N) are Rao-Scott: the beta interval and the binomial at the effective "
        "sample size, calls divided by the item design effect. Before against after: the exact two-sided "
        "sign test on the items whose accuracy moved; Holm p adjusts it for the family of "
        "comparisons in this table."
    )
    return Table("rewrite", "Distractor rewriting: accuracy before and after", comparison, shown, note)


FLUENCY_VERSIONS = ("before", "after", "key")


def read_fluency(path: str | Path) -> pd.DataFrame:
    """The rewrite stage's fluency scores (``fluency.jsonl``: one object a line, with at least
    ``item_id``, ``version`` (before | after | key) and ``per_token``), in file order; a line that does not
    fit is an InputError naming the file and line. Numbers are read as the very doubles written."""
    rows = []
    for line, row in jsonl_records(path):
        missing = [c for c in ("item_id", "version", "per_token") if c not in row]
        if missing:
            raise InputError(f"no {missing[0]!r}", file=str(path), line=line)
        if row["version"] not in FLUENCY_VERSIONS:
            raise InputError(
                f"version {row['version']!r} is not one of {', '.join(FLUENCY_VERSIONS)}",
                file=str(path),
                line=line,
            )
        score = row["per_token"]
        if isinstance(score, bool) or not isinstance(score, int | float):
            raise InputError(f"per_token: expected a number, got {score!r}", file=str(path), line=line)
        rows.append(row)
    columns = list(dict.fromkeys(["item_id", "version", "per_token", *(c for r in rows for c in r)]))
    return pd.DataFrame(rows, columns=columns)


def fluency_change(scores: pd.DataFrame) -> dict[str, float]:
    """How natural the rewritten distractors read against the originals, from the stage's fluency scores
    (``read_fluency``: per text, its mean per-token log-likelihood after the answer cue alone, the blind
    cloze context): the changed distractors' mean before and after, and the exact sign test over items
    (the unit of every test here: an item's changed distractors, mean before against mean after, since
    the distractors of one item were rewritten together). A rewrite that leaves the distractors less
    fluent than before gives the key away as the one well-formed option; the keys' own score is given
    for reference. Items in the order of their first row, texts in row order."""
    before: list[float] = []
    after: list[float] = []
    keys: list[float] = []
    item_before, item_after = [], []
    for _, part in scores.groupby("item_id", sort=False):
        old_scores = [float(v) for v in part.loc[part["version"] == "before", "per_token"]]
        new_scores = [float(v) for v in part.loc[part["version"] == "after", "per_token"]]
        if not old_scores or not new_scores:
            continue
        before += old_scores
        after += new_scores
        item_before.append(float(np.mean(old_scores)))
        item_after.append(float(np.mean(new_scores)))
        keys += [float(v) for v in part.loc[part["version"] == "key", "per_token"]]
    if not before:
        return {"fluency_n": 0.0}
    b, a = pd.Series(before), pd.Series(after)
    test = item_sign_test(pd.Series(item_before), pd.Series(item_after))
    return {
        "fluency_n": float(len(b)), "fluency_items": float(len(item_before)),
        "fluency_before": round(float(b.mean()), 4),
        "fluency_after": round(float(a.mean()), 4), "fluency_keys": round(float(np.mean(keys)), 4),
        "fluency_up": float(test.up), "fluency_down": float(test.down), "fluency_sign_p": test.p,
    }  # fmt: skip


def fluency_note(f: dict[str, float], model: str) -> str:
    """The fluency measurement as one Markdown paragraph (empty without one)."""
    if not f.get("fluency_n"):
        return ""
    return (
        f"Fluency ({model}, mean per-token log-likelihood after the answer cue alone): the "
        f"{int(f['fluency_n'])} changed distractors read {f['fluency_before']:.3f} before and "
        f"{f['fluency_after']:.3f} after; of the {int(f.get('fluency_items', 0))} items they belong to, "
        f"{int(f['fluency_up'])} read more fluent on average, {int(f['fluency_down'])} less (exact sign "
        f"test over items, p {fmt_p(f['fluency_sign_p'])}); the keys "
        f"read {f['fluency_keys']:.3f}."
    )


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


# ------------------------------------------------------------------- AnswerPool's scores


def _share(mask: pd.Series, within: pd.Series) -> tuple[int, int]:
    return int((mask & within).sum()), int(within.sum())


def score_pool(frame: pd.DataFrame) -> pd.DataFrame:
    """Per condition: pooled accuracy, accuracy on answerable questions, abstention on unanswerable
    (its correct response), false abstention on answerable, unparseable rate, order-free set hits,
    whole-group success, each with its exact chance (the test uses the mean per-question chance:
    a binomial at the mean chance is conservative for the Poisson-binomial of unequal pools)."""
    rows = []
    for condition, part in frame.groupby("condition", sort=True):
        every = pd.Series(True, index=part.index)
        answerable, unanswerable = part["answerable"], ~part["answerable"]
        k, n = _share(part["correct"], every)
        acc = accuracy(k, n)
        groups = part.groupby("group_id").agg(ok=("correct", "all"), chance=("group_chance", "first"))
        row: dict[str, Any] = {"condition": condition, "questions": n, "groups": len(groups)}
        row |= {"pooled_acc": acc.value, "pooled_lo": acc.lo, "pooled_hi": acc.hi}
        row |= {"chance": float(part["chance"].mean())}
        row |= {"p_above": chance_test(k, n, row["chance"], "greater")}
        row |= {"p_below": chance_test(k, n, row["chance"], "less")}
        for name, (hits, within) in {
            "answerable_acc": _share(part["correct"], answerable),
            "abstention": _share(part["abstained"], unanswerable),
            "false_abstention": _share(part["abstained"], answerable),
            "unparseable": _share(part["parse_status"] != "ok", every),
            "set_hit": _share(part["set_hit"], every),
        }.items():
            p = accuracy(hits, within)
            row |= {f"{name}_n": within, name: p.value, f"{name}_lo": p.lo, f"{name}_hi": p.hi}
        row |= {"set_chance": float(part["set_chance"].mean())}
        row |= {"group_acc": float(groups["ok"].mean()), "group_chance": float(groups["chance"].mean())}
        rows.append(row)
    return pd.DataFrame(rows)
