"""SL against MD on a predictions frame (columns of ``blindmcq.answers.records``).

- ``accuracy_by_protocol``: accuracy with Wilson 95% intervals, and the rates of the MD statuses.
  ``uncertain``, ``tie`` and ``unparseable`` count as wrong (SPEC: nothing is dropped).
- ``order_variance``: accuracy per option order (``order_id``), then its variance across orders. The
  orders are a fixed design (the 2N rotations), not a sample, so the default is the population variance
  (``ddof=0``).
- ``variance_ratio``: sigma^2_MD / sigma^2_SL per group (seed, section 4.1); NaN when SL's variance is 0.
- ``fewshot_bias``: accuracy, and the share of responses that name the examples' answer pattern
  (explicit bias) with accuracy on those and on the rest (implicit bias).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from blindmcq.datasets.nonsense import names_pattern
from blindmcq.stats import wilson_columns
from blindmcq.vocabulary import ANSWER_PROTOCOLS

STATUSES = ("uncertain", "tie", "unparseable")


def _need(df: pd.DataFrame, columns: Sequence[str]) -> None:
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise ValueError(f"predictions lack columns {missing}")


def accuracy_by_protocol(df: pd.DataFrame, by: Sequence[str] = ("model", "protocol")) -> pd.DataFrame:
    """One row per group: n, correct, accuracy, ci_low, ci_high, and {status}_rate for the MD statuses."""
    by = list(by)
    _need(df, [*by, "correct", "parse_status"])
    rows = df.assign(correct=df["correct"].astype(bool))
    for status in STATUSES:
        rows[f"{status}_rate"] = rows["parse_status"].eq(status)
    out = (
        rows.groupby(by, sort=True)
        .agg(
            n=("correct", "size"),
            correct=("correct", "sum"),
            **{f"{s}_rate": (f"{s}_rate", "mean") for s in STATUSES},
        )
        .reset_index()
    )
    out["accuracy"], out["ci_low"], out["ci_high"] = wilson_columns(out["correct"], out["n"])
    return out[[*by, "n", "correct", "accuracy", "ci_low", "ci_high", *(f"{s}_rate" for s in STATUSES)]]


def order_variance(
    df: pd.DataFrame, by: Sequence[str] = ("model", "protocol"), ddof: int = 0
) -> pd.DataFrame:
    """Per group: n_orders, the variance and range of the per-order accuracies."""
    by = list(by)
    _need(df, [*by, "order_id", "correct"])
    per_order = df.assign(correct=df["correct"].astype(float)).groupby([*by, "order_id"])["correct"].mean()
    out = per_order.groupby(level=by).agg(
        n_orders="size", variance=lambda s: s.var(ddof=ddof), acc_min="min", acc_max="max"
    )
    return out.reset_index()


def variance_ratio(df: pd.DataFrame, by: Sequence[str] = ("model",), ddof: int = 0) -> pd.DataFrame:
    """Per group: var_sl, var_md and ratio = var_md / var_sl (NaN when var_sl is 0 or a side is missing)."""
    by = list(by)
    var = order_variance(df, [*by, "protocol"], ddof=ddof)
    wide = var.pivot_table(index=by, columns="protocol", values="variance", aggfunc="first")
    wide = wide.reindex(columns=list(ANSWER_PROTOCOLS))
    out = pd.DataFrame({"var_sl": wide["sl"], "var_md": wide["md"]}).reset_index()
    with np.errstate(divide="ignore", invalid="ignore"):
        out["ratio_md_sl"] = np.where(out["var_sl"] > 0, out["var_md"] / out["var_sl"], np.nan)
    return out


def fewshot_bias(df: pd.DataFrame, by: Sequence[str] = ("model", "protocol", "setting")) -> pd.DataFrame:
    """Per group: n, accuracy, explicit_rate, accuracy_explicit, accuracy_implicit (NaN when empty)."""
    by = list(by)
    _need(df, [*by, "correct", "raw_response"])
    rows = df.assign(
        correct=df["correct"].astype(float),
        explicit=df["raw_response"].fillna("").map(names_pattern).astype(bool),
    )
    rows["correct_explicit"] = rows["correct"].where(rows["explicit"])
    rows["correct_implicit"] = rows["correct"].where(~rows["explicit"])
    out = rows.groupby(by, sort=True).agg(
        n=("correct", "size"),
        accuracy=("correct", "mean"),
        explicit_rate=("explicit", "mean"),
        accuracy_explicit=("correct_explicit", "mean"),
        accuracy_implicit=("correct_implicit", "mean"),
    )
    return out.reset_index()
