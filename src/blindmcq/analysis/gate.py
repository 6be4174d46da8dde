"""The gate (SPEC, "Statistics"): reject items the gate model answers blind in at least k of the 2N orders,
k chosen per option count N so that a content-blind picker is rejected at most at a stated rate.

Counts come from the gate model's blind calls on the baseline presentation over the rotations and
reversals (``rot*``/``rev*``); an item's count is how many of those calls were correct.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from blindmcq.analysis.frame import Baseline, Orders, ensure, failed_mask, select
from blindmcq.atomic import write_text
from blindmcq.config.schema import Gate, default
from blindmcq.errors import ConfigError, InputError
from blindmcq.stats import count_test, false_rejection_rate, gate_threshold, holm, smallest_significant_k

__all__ = [
    "CONSISTENT_SHARE",
    "GateNulls",
    "GateResult",
    "gate",
    "gate_nulls",
    "read_gate",
    "smallest_significant_k",
    "thresholds_for",
    "write_gate",
]

# a gate model that picks the same option in every order on at least this share of the items is taken
# as deterministic: the null its rejections are read against is then the consistent picker's
CONSISTENT_SHARE = 0.9


@dataclass(frozen=True)
class GateResult:
    """Per-item counts (``item_id, n_options, n_orders, solved, n_failed, same_pick, k``), the split, and
    the settings. ``same_pick``: the gate model picked the same option in every order of the item (absent
    from gate files written before it was recorded).

    ``untestable`` holds items no count of their orders can reject at the gate's false-rejection rate
    (N = 2: 4 of 4 orders happens by chance with p = 0.0625); they are in neither ``accepted`` nor
    ``rejected``. ``thresholds`` maps each option count N to its k (None: untestable).
    """

    counts: pd.DataFrame
    accepted: list[str]
    rejected: list[str]
    retained_share: float
    gate_model: str
    k: int | None
    orders: list[str]
    false_rejection: float | None = None
    thresholds: dict[int, int | None] = field(default_factory=dict)
    untestable: list[str] = field(default_factory=list)

    def item_set(self, name: str) -> list[str] | None:
        """Ids of a named set: "all" (None: no restriction), "accepted", "rejected" or "untestable"."""
        if name == "all":
            return None
        if name in ("accepted", "rejected", "untestable"):
            return getattr(self, name)
        raise ConfigError("analysis.sets", f"unknown item set {name!r}")

    def describe_thresholds(self) -> str:
        """``N=3: k=5 of 6 (p=0.018); N=2: untestable`` — what the gate did per option count."""
        parts = []
        design = {}
        if not self.counts.empty and "n_orders" in self.counts:
            design = self.counts.groupby("n_options")["n_orders"].max().to_dict()
        for n, k in sorted(self.thresholds.items()):
            m = int(design.get(n, 2 * n))
            if k is None:
                parts.append(f"N={n}: cannot reject (no count of {m} orders is that rare by chance)")
            else:
                p = false_rejection_rate(m, 1.0 / n, k)
                parts.append(f"N={n}: k={k} of {m} (P for a picker redrawing in each order {p:.3f})")
        return "; ".join(parts)


GATE_ORDERS: Orders = default(Gate, "orders")  # the orders a gate counts unless told


def thresholds_for(
    option_counts: list[int] | set[int],
    *,
    k: int | None = None,
    false_rejection: float | None = default(Gate, "false_rejection"),
    n_orders: int | None = None,
) -> dict[int, int | None]:
    """k per option count N over its orders (2N, or ``n_orders`` when the gate uses a fixed list of
    orders): a fixed ``k`` for every N (None where k exceeds the orders), or the smallest k whose chance
    of being reached by a content-blind picker is at most ``false_rejection``."""
    out: dict[int, int | None] = {}
    for n in sorted({int(x) for x in option_counts}):
        m = 2 * n if n_orders is None else int(n_orders)
        if k is not None:
            out[n] = int(k) if k <= m else None
        else:
            if false_rejection is None:
                raise ConfigError("gate.false_rejection", "set gate.k or gate.false_rejection")
            try:
                out[n] = gate_threshold(m, 1.0 / n, float(false_rejection))
            except ValueError as exc:
                raise ConfigError("gate.false_rejection", str(exc)) from exc
    return out


def gate(
    predictions: pd.DataFrame,
    *,
    gate_model: str,
    k: int | None = None,
    false_rejection: float | None = default(Gate, "false_rejection"),
    orders: Orders = GATE_ORDERS,
    base: Baseline | None = None,
    require_complete: bool = True,
) -> GateResult:
    """Count each item's blind-solved orders for ``gate_model`` and split at each item's threshold.

    The threshold depends on the item's option count N (``thresholds_for``): by default the smallest
    k whose chance probability over 2N orders is at most ``false_rejection`` (0.05: k = 5 for N = 3,
    4 and 5); a fixed ``k`` overrides it for every N. A failed call (error, refusal) counts as not
    solved, which can only keep an item in. ``require_complete`` (default) raises InputError naming the
    first item with a missing order, so an interrupted probe is never gated on fewer orders than the
    threshold assumes; a repeated call of the same order is always an error.
    """
    base = base or Baseline()
    base = Baseline(base.phrasing, base.labels, base.protocol, base.reasoning, base.setting, orders)
    df = ensure(predictions)
    if k is not None and k < 1:
        raise ConfigError("gate.k", f"must be at least 1, got {k}")
    rows = select(df[df["model"] == gate_model], base, condition="blind")
    if rows.empty:
        raise InputError(f"no blind calls of gate model {gate_model!r} on the baseline presentation")
    order_ids = sorted(map(str, rows["order_id"].unique()))
    dup = rows.duplicated(["item_id", "order_id"], keep=False).to_numpy()
    if dup.any():
        raise InputError(
            "gate model called twice on the same order", item=str(rows["item_id"].iat[dup.argmax()])
        )
    picked = pd.to_numeric(rows["picked_option"], errors="coerce")
    rows = rows.assign(_failed=failed_mask(rows), _picked=picked, _unpicked=picked.isna())
    counts = (
        rows.groupby("item_id", observed=True)
        .agg(
            n_options=("n_options", "first"),
            n_orders=("order_id", "size"),
            solved=("correct", "sum"),
            n_failed=("_failed", "sum"),
            _distinct=("_picked", "nunique"),
            _unpicked=("_unpicked", "sum"),
        )
        .reset_index()
    )
    counts["same_pick"] = (counts.pop("_distinct") == 1) & (counts.pop("_unpicked") == 0)
    counts["item_id"] = counts["item_id"].astype(str)
    counts["solved"] = counts["solved"].astype(int)
    counts["n_failed"] = counts["n_failed"].astype(int)
    # "all" means the N rotations of the published order and N of its reverse: 2N per item
    expected = 2 * counts["n_options"] if isinstance(orders, str) else len(list(orders or order_ids))
    short = counts["n_orders"] < expected
    if require_complete and short.any():
        first = counts.loc[short].iloc[0]
        raise InputError(
            f"gate model has {first['n_orders']} orders, fewer than the design "
            f"({int(short.sum())} items short)",
            item=str(first["item_id"]),
        )
    if k is not None and k > counts["n_orders"].max():
        raise ConfigError("gate.k", f"{k} exceeds the {counts['n_orders'].max()} orders available")
    fixed_orders = None if isinstance(orders, str) else len(list(orders or order_ids))
    thresholds = thresholds_for(
        set(counts["n_options"]), k=k, false_rejection=false_rejection, n_orders=fixed_orders
    )
    counts = counts.sort_values("item_id", ignore_index=True)
    counts["k"] = counts["n_options"].map(lambda n: thresholds[int(n)]).astype(float)  # NaN: untestable
    untestable_mask = counts["k"].isna()
    rejected_mask = ~untestable_mask & (counts["solved"] >= counts["k"])
    accepted_mask = ~untestable_mask & ~rejected_mask
    return GateResult(
        counts=counts,
        accepted=counts.loc[accepted_mask, "item_id"].tolist(),
        rejected=counts.loc[rejected_mask, "item_id"].tolist(),
        retained_share=float(accepted_mask.mean()),
        gate_model=gate_model,
        k=k,
        orders=order_ids,
        false_rejection=None if k is not None else false_rejection,
        thresholds=thresholds,
        untestable=counts.loc[untestable_mask, "item_id"].tolist(),
    )


@dataclass(frozen=True)
class GateNulls:
    """The gate's rejections against two pickers that read nothing, over the testable items.

    ``redraw``: a picker that draws anew in each order (item i rejected with P(Binomial(2N_i, 1/N_i) >=
    k_i)); ``consistent``: one that picks the same option in every order, so it rejects an item exactly
    when that pick is the key (1/N_i). Each is ``(expected rejections, one-sided exact p of the observed
    count or more)``, the items independent; ``p_holm`` the two p-values Holm-adjusted (the verdict reads
    both). ``same_pick``: the share of the items on which the gate model picked the same option in every
    order (NaN: not recorded); at ``CONSISTENT_SHARE`` or more the gate is deterministic and the
    consistent picker is the null that holds.
    """

    gate_model: str
    items: int
    rejected: int
    same_pick: float
    redraw: tuple[float, float]
    consistent: tuple[float, float]
    p_holm: tuple[float, float]

    @property
    def deterministic(self) -> bool:
        return bool(self.same_pick >= CONSISTENT_SHARE)

    def sentence(self) -> str:
        """What the rejection count shows, leading with the null that holds for this gate model."""
        if self.items == 0:
            return "No item can be rejected, so the rejection count tests nothing."
        (e_r, _), (e_c, _) = self.redraw, self.consistent
        p_r, p_c = self.p_holm
        above_r, above_c = p_r < 0.05, p_c < 0.05
        test = (
            f"one-sided exact binomial over the {self.items} items, Holm over the two nulls: "
            f"p {_p(p_c)} against the consistent picker, {_p(p_r)} against the redrawing one"
        )
        consistent = (
            f"{e_c:.0f}",
            "a consistent picker that reads nothing (it rejects an item exactly when its one pick is the "
            "key: the sum of 1/N)",
        )
        redraw = (f"{e_r:.1f}", "a picker that redraws in each order (the per-N thresholds' tails)")
        if math.isnan(self.same_pick):
            how = "whether the gate model picks the same option in every order was not recorded"
        else:
            how = (
                f"`{self.gate_model}` picks the same option in every order on {self.same_pick:.0%} of the "
                "items"
            )
        if above_c and above_r:
            verdict = "more than either null expects: evidence of a leak"
        elif above_c:
            verdict = "more than a consistent picker that reads nothing expects: evidence of a leak"
        elif not above_r:
            verdict = "no more than either null expects: no evidence of a leak"
        elif self.deterministic:
            verdict = (
                "no evidence of a leak: more than the redrawing picker's count, which does not hold for a "
                "gate this consistent, and no more than the consistent picker's"
            )
        else:
            verdict = (
                "the data cannot decide: more than a redrawing picker rejects, no more than a consistent "
                "one, and this gate model is in between"
            )
        first, second = (consistent, redraw) if self.deterministic else (redraw, consistent)
        which = "it is read as deterministic" if self.deterministic else "the redrawing picker leads"
        lead = (
            f"{how}, so {which}: about {first[0]} rejections expected from {first[1]}, "
            f"about {second[0]} from {second[1]}"
        )
        return f"{lead[0].upper()}{lead[1:]}; {self.rejected} seen: {verdict} ({test})."


def _p(p: float) -> str:
    return "<.001" if p < 0.001 else f"{p:.3f}"


def gate_nulls(g: GateResult) -> GateNulls:
    """The gate's rejections against the redrawing and the consistent picker (``GateNulls``)."""
    c = g.counts
    testable = c[c["k"].notna()] if "k" in c else c.iloc[0:0]
    n, m, k = (testable[col].to_numpy(dtype=float) for col in ("n_options", "n_orders", "k"))
    # one binomial tail per distinct (orders, N, k): a paper-scale bank has 12,000 items and a few triples
    triples, where = np.unique(np.stack([m, n, k], axis=1), axis=0, return_inverse=True)
    rates = np.array([false_rejection_rate(int(a), 1.0 / b, int(t)) for a, b, t in triples])
    redraw_q = rates[where.reshape(-1)]
    consistent_q = np.where(k <= m, 1.0 / n, 0.0)
    rejected = int((testable["solved"] >= testable["k"]).sum())
    redraw = count_test(rejected, redraw_q)
    consistent = count_test(rejected, consistent_q)
    same = (
        float(testable["same_pick"].astype(bool).mean())
        if "same_pick" in testable and len(testable)
        else math.nan
    )
    adjusted = holm([redraw[1], consistent[1]])
    return GateNulls(
        g.gate_model,
        len(testable),
        rejected,
        same,
        redraw,
        consistent,
        (float(adjusted[0]), float(adjusted[1])),
    )


def write_gate(path: str | Path, result: GateResult) -> Path:
    """Write the gate (settings, accepted and rejected ids, per-item counts) as one JSON file, atomically."""
    record: dict[str, Any] = {
        "gate_model": result.gate_model,
        "k": result.k,
        "false_rejection": result.false_rejection,
        "thresholds": {str(n): k for n, k in result.thresholds.items()},
        "orders": result.orders,
        "n_items": len(result.counts),
        "retained_share": result.retained_share,
        "accepted": result.accepted,
        "rejected": result.rejected,
        "untestable": result.untestable,
        "counts": result.counts.to_dict(orient="list"),
    }
    write_text(path, json.dumps(record, ensure_ascii=False, indent=1) + "\n")
    return Path(path)


def read_gate(path: str | Path) -> GateResult:
    """Read a file written by ``write_gate``; InputError names the file when it is not one."""
    path = Path(path)
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
        counts = pd.DataFrame(record["counts"])
        return GateResult(
            counts=counts,
            accepted=list(record["accepted"]),
            rejected=list(record["rejected"]),
            retained_share=float(record["retained_share"]),
            gate_model=str(record["gate_model"]),
            k=None if record["k"] is None else int(record["k"]),
            orders=list(record["orders"]),
            false_rejection=record.get("false_rejection"),
            thresholds={
                int(n): (None if k is None else int(k)) for n, k in record.get("thresholds", {}).items()
            },
            untestable=list(record.get("untestable", [])),
        )
    except FileNotFoundError as exc:
        raise InputError("gate file not found", file=str(path)) from exc
    except (json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
        raise InputError(f"not a gate file: {exc}", file=str(path)) from exc
