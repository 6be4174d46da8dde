"""The gate (SPEC, "Statistics"): reject items the gate model answers blind in at least k of the 2N orders.

Counts come from the gate model's blind calls on the baseline presentation over the rotations and
reversals (``rot*``/``rev*``); an item's count is how many of those calls were correct.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from blindmcq.analysis.frame import Baseline, Orders, ensure, select
from blindmcq.analysis.stats import smallest_significant_k
from blindmcq.atomic import write_text
from blindmcq.errors import ConfigError, InputError

__all__ = ["GateResult", "gate", "read_gate", "smallest_significant_k", "write_gate"]


@dataclass(frozen=True)
class GateResult:
    """Per-item counts (``item_id, n_options, n_orders, solved``), the split, and the gate's settings."""

    counts: pd.DataFrame
    accepted: list[str]
    rejected: list[str]
    retained_share: float
    gate_model: str
    k: int
    orders: list[str]

    def item_set(self, name: str) -> list[str] | None:
        """Ids of a named set: "all" (None: no restriction), "accepted" or "rejected"."""
        if name == "all":
            return None
        if name in ("accepted", "rejected"):
            return getattr(self, name)
        raise ConfigError("analysis.sets", f"unknown item set {name!r}")


def gate(
    predictions: pd.DataFrame,
    *,
    gate_model: str,
    k: int = 5,
    orders: Orders = "all",
    base: Baseline | None = None,
    require_complete: bool = True,
) -> GateResult:
    """Count each item's blind-solved orders for ``gate_model`` and split at ``k``.

    ``require_complete`` (default) raises InputError naming the first item with a missing order, so
    an interrupted probe is never gated on fewer orders than the threshold assumes; a repeated call
    of the same order is always an error.
    """
    base = base or Baseline()
    base = Baseline(base.phrasing, base.labels, base.protocol, base.reasoning, base.setting, orders)
    df = ensure(predictions)
    if k < 1:
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
    counts = (
        rows.groupby("item_id", observed=True)
        .agg(n_options=("n_options", "first"), n_orders=("order_id", "size"), solved=("correct", "sum"))
        .reset_index()
    )
    counts["item_id"] = counts["item_id"].astype(str)
    counts["solved"] = counts["solved"].astype(int)
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
    if k > counts["n_orders"].max():
        raise ConfigError("gate.k", f"{k} exceeds the {counts['n_orders'].max()} orders available")
    counts = counts.sort_values("item_id", ignore_index=True)
    rejected_mask = counts["solved"] >= k
    accepted = counts.loc[~rejected_mask, "item_id"].tolist()
    rejected = counts.loc[rejected_mask, "item_id"].tolist()
    return GateResult(
        counts=counts,
        accepted=accepted,
        rejected=rejected,
        retained_share=len(accepted) / len(counts),
        gate_model=gate_model,
        k=k,
        orders=order_ids,
    )


def write_gate(path: str | Path, result: GateResult) -> Path:
    """Write the gate (settings, accepted and rejected ids, per-item counts) as one JSON file, atomically."""
    record: dict[str, Any] = {
        "gate_model": result.gate_model,
        "k": result.k,
        "orders": result.orders,
        "n_items": len(result.counts),
        "retained_share": result.retained_share,
        "accepted": result.accepted,
        "rejected": result.rejected,
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
            k=int(record["k"]),
            orders=list(record["orders"]),
        )
    except FileNotFoundError as exc:
        raise InputError("gate file not found", file=str(path)) from exc
    except (json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
        raise InputError(f"not a gate file: {exc}", file=str(path)) from exc
