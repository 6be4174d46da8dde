"""The analysis's view of the predictions: the analysed columns only (``ANALYSED``), read with the one
predictions reader (``answers.predictions.read_table``), compacted (categories for labels, float for
nullable slots, so a million rows fit and group quickly) and checked once where they are loaded
(``prepare``); and the rows of one presentation (``select`` of a ``Baseline``: what headline numbers
are measured on; sweeps vary one field at a time). The gate, the metrics and the tables read this view.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd

from blindmcq.answers.predictions import read_table
from blindmcq.config.schema import Analysis as AnalysisConfig
from blindmcq.config.schema import Config, Labels, Protocol, default
from blindmcq.errors import ConfigError, InputError
from blindmcq.vocabulary import CONDITIONS, FAILED_STATUSES

# Columns the analysis reads; the rest (raw text, hashes, latency) stay in the release only.
ANALYSED = (
    "item_id",
    "model",
    "condition",
    "phrasing",
    "labels",
    "protocol",
    "reasoning",
    "setting",
    "order_id",
    "forced_slot",
    "key_slot",
    "n_options",
    "picked_slot",
    "picked_option",
    "correct",
    "parse_status",
    "output_tokens",
    "stop_reason",
)
# Read when present, filled when absent: older predictions files have no stop reason (truncation 0).
ANALYSED_FILL = {"stop_reason": ""}
# A failed call: no answer came back (a backend error or a refusal), or the answer was cut off at the
# token limit before any option could be parsed. ``analysis.failed_calls`` decides how rates count them.
TRUNCATED = "max_tokens"
FLOATS = ("forced_slot", "key_slot", "picked_slot", "picked_option", "output_tokens")
# every other analysed column but the option count and the verdict is a label: a category
CATEGORIES = tuple(c for c in ANALYSED if c not in (*FLOATS, "n_options", "correct"))
PRESENTATION = ("phrasing", "labels", "protocol", "reasoning", "setting")
ORDER_RE = re.compile(r"^(rot|rev)\d+$")
ROTATION_RE = re.compile(r"^rot\d+$")


def read_analysis_frame(path: str | Path) -> pd.DataFrame:
    """Read released predictions (Parquet, or JSONL with one record a line) with the one predictions
    reader (``read_table``), asking it for the analysed columns only (``ANALYSED``: raw responses never enter
    memory), and ``prepare`` them. The file must carry every released column.
    """
    path = Path(path)
    if not path.exists():
        raise InputError("predictions file not found", file=str(path))
    # plain NumPy dtypes (not the records' nullable ones): what ``prepare`` compacts into categories
    return prepare(read_table(path, columns=ANALYSED).to_pandas(), source=str(path))


def check_item_ids(predictions: pd.DataFrame, known: Iterable[str], *, source: str, corpus: str) -> None:
    """Every item a predictions file answers must be one of ``known`` (the run's corpus): answers to other
    items would join tables they do not belong to. One InputError naming ``source`` otherwise."""
    known = set(known)
    ids = set(predictions["item_id"].astype(str))
    unknown = sorted(ids - known)
    if unknown:
        shared = len(ids) - len(unknown)
        raise InputError(
            f"{len(unknown)} of its {len(ids)} item ids are not in {corpus} ({shared} shared; first unknown: "
            f"{unknown[0]}): these answers are to another bank's items",
            file=source,
        )


def _category(values: pd.Series) -> pd.Series:
    """Labels as a categorical of strings, missing as "" (converting categories, not every row)."""
    cat = values.astype("category")
    if not all(isinstance(c, str) for c in cat.cat.categories):
        cat = values.astype(str).where(values.notna(), "").astype("category")
    if cat.isna().any():
        cat = cat.cat.add_categories([""]) if "" not in cat.cat.categories else cat
        cat = cat.fillna("")
    return cat


def prepare(predictions: pd.DataFrame, *, source: str = "predictions") -> pd.DataFrame:
    """Check the analysed columns (``ANALYSED``) and return them with compact dtypes.

    Raises InputError naming ``source`` (and the first offending item) on missing columns, unknown
    conditions, slots outside ``0..N-1``, or a row marked correct whose pick is not the key.
    """
    missing = [c for c in ANALYSED if c not in predictions.columns and c not in ANALYSED_FILL]
    if missing:
        raise InputError(f"missing prediction columns {missing}", file=source)
    extra = {c: v for c, v in ANALYSED_FILL.items() if c not in predictions.columns}
    df = (predictions.assign(**extra) if extra else predictions).loc[:, list(ANALYSED)].copy()
    for col in CATEGORIES:
        df[col] = _category(df[col])
    for col in FLOATS:
        df[col] = pd.to_numeric(df[col], errors="coerce").astype(float)
    df["n_options"] = pd.to_numeric(df["n_options"], errors="coerce")
    df["correct"] = df["correct"].astype(bool)

    def fail(mask: np.ndarray | pd.Series, what: str) -> None:
        bad = np.flatnonzero(np.asarray(mask))
        if bad.size:
            row = int(bad[0])
            raise InputError(
                f"{what} ({bad.size} rows; first at row {row})", file=source, item=str(df["item_id"].iat[row])
            )

    fail(df["n_options"].isna() | (df["n_options"] < 2), "n_options missing or below 2")
    df["n_options"] = df["n_options"].astype(int)
    fail(~df["condition"].isin(CONDITIONS), f"condition not one of {CONDITIONS}")
    for col in ("key_slot", "picked_slot", "forced_slot"):
        fail((df[col] < 0) | (df[col] >= df["n_options"]), f"{col} outside 0..n_options-1")
    fail(
        df["correct"] & (df["picked_slot"] != df["key_slot"]), "marked correct but picked slot is not the key"
    )
    fail(df["forced_slot"].notna() & (df["forced_slot"] != df["key_slot"]), "forced slot is not the key slot")
    return df


def failed_mask(df: pd.DataFrame) -> np.ndarray:
    """Rows whose call failed: an error or refusal, or a truncated response with no parsed answer."""
    status = df["parse_status"].astype(str).to_numpy() if len(df) else np.array([], dtype=str)
    failed = np.isin(status, FAILED_STATUSES)
    if "stop_reason" in df:
        failed |= (df["stop_reason"].astype(str).to_numpy() == TRUNCATED) & (status != "ok")
    return failed


def failure_counts(df: pd.DataFrame, by: Sequence[str] = ("model",)) -> pd.DataFrame:
    """Per group: calls, errors, refusals and truncated calls (``stop_reason`` max_tokens, parsed or not)."""
    cols = ["n_calls", "n_error", "n_refused", "n_truncated"]
    if df.empty:
        return pd.DataFrame(columns=[*by, *cols])
    status = df["parse_status"].astype(str)
    trunc = df["stop_reason"].astype(str) == TRUNCATED if "stop_reason" in df else pd.Series(False, df.index)
    flags = pd.DataFrame(
        {"n_calls": 1, "n_error": status == "error", "n_refused": status == "refused", "n_truncated": trunc},
        index=df.index,
    ).astype(int)
    keys = [df[b] for b in by]
    return flags.groupby(keys, observed=True).sum().reset_index()


def is_prepared(df: pd.DataFrame) -> bool:
    return list(df.columns) == list(ANALYSED) and isinstance(df["model"].dtype, pd.CategoricalDtype)


def ensure(df: pd.DataFrame) -> pd.DataFrame:
    """``prepare`` unless already prepared (so public functions accept either)."""
    return df if is_prepared(df) else prepare(df)


Orders = Literal["all", "rotations"] | Sequence[str] | None


def order_mask(order_id: pd.Series, orders: Orders) -> np.ndarray:
    """Rows whose order is selected: "all" = every rotation/reversal (rot*/rev*), "rotations" = rot*,
    None = any unforced."""
    if orders is None:
        return np.ones(len(order_id), dtype=bool)
    if isinstance(orders, str):
        if orders not in ("all", "rotations"):
            raise ConfigError("orders", f"expected 'all', 'rotations' or a list of order ids, got {orders!r}")
        pattern = ORDER_RE if orders == "all" else ROTATION_RE
        cats = order_id.cat.categories if isinstance(order_id.dtype, pd.CategoricalDtype) else None
        if cats is not None:  # match on the categories once, not on every row
            good = np.array([bool(pattern.match(c)) for c in cats], dtype=bool)
            codes = order_id.cat.codes.to_numpy()
            return np.where(codes >= 0, good[codes], False)
        return order_id.astype(str).str.match(pattern).to_numpy()
    return order_id.isin(list(orders)).to_numpy()


HEADLINE_ORDERS: Orders = default(AnalysisConfig, "headline_orders")  # the analysis group's


def _kind(protocol: Protocol) -> str:
    """A protocol's name in the presentation columns: ``md`` when it matches a sentence, else ``sl``."""
    return "md" if protocol.extraction == "match" else "sl"


@dataclass(frozen=True)
class Baseline:
    """The presentation headline numbers are measured on; a field set to None matches any value.

    Defaults are the presentation conf/config.yaml composes (prompt ``original``, labels ``latin``,
    protocol ``sl``, reasoning ``direct``), for a caller that names none; the stages, the sweep and the
    audit pass their own (:func:`baseline_from_params`). The analysis reads no conf/ file (a stage's
    dependencies stay its own), so they are written here, and a test holds them to what the default
    config composes. ``orders`` selects unforced orders: "all" = rot*/rev*, or a list of ids.
    """

    phrasing: str | None = "original"
    labels: str | None = "latin"
    protocol: str | None = "sl"
    reasoning: str | None = "direct"
    setting: str | None = None
    orders: Orders = HEADLINE_ORDERS

    def without(self, field: str) -> Baseline:
        """The same baseline with one presentation field left free (for a sweep over it)."""
        return replace(self, **{field: None})


def baseline_from_params(params: Config, *, orders: Any) -> Baseline:
    """The headline presentation of the composed config (phrasing, labels, protocol, reasoning)."""
    protocol: Protocol = params.group("protocol")
    labels: Labels = params.group("labels")
    return Baseline(
        phrasing=params.group("prompt").name,
        labels=protocol.labels or labels.name,
        protocol=_kind(protocol),
        reasoning=params.group("reasoning").name,
        orders=orders,
    )


def select(
    df: pd.DataFrame,
    base: Baseline,
    *,
    condition: str | None = None,
    forced: bool = False,
    items: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Rows of the baseline presentation; ``forced`` picks forced-placement rows instead of orders."""
    mask = np.ones(len(df), dtype=bool)
    for field in PRESENTATION:
        value = getattr(base, field)
        if value is not None:
            mask &= (df[field] == value).to_numpy()
    if condition is not None:
        mask &= (df["condition"] == condition).to_numpy()
    forced_rows = df["forced_slot"].notna().to_numpy()
    mask &= forced_rows if forced else (~forced_rows & order_mask(df["order_id"], base.orders))
    if items is not None:
        mask &= df["item_id"].isin(list(items)).to_numpy()
    return df.loc[mask]
