"""Per-model, per-set measurements of the paper (SPEC, "Statistics"), vectorised over prediction rows.

Conventions, fixed here so every table means the same thing:
- Accuracy counts every call, an unparseable one as wrong; its Wilson interval treats calls as
  independent, so where an item has several orders the CSV also carries an item-level t interval.
- Pick rates are shares of all blind calls (they sum to 1 minus the unparsed share), key rates shares
  of the same calls, so habit = sum_s pick(s) * key(s) is on the same footing as accuracy and a
  model that always answers slot 0 has excess exactly 0.
- Agreement with the gate model is over presentations both answered with an option (0.25 at chance).
- Chance is the mean of 1/N over the calls measured.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from blindmcq.analysis import stats
from blindmcq.analysis.frame import PRESENTATION, Baseline, ensure, select
from blindmcq.analysis.gate import GateResult

ItemSets = dict[str, list[str] | None]  # set name -> item ids (None: every item)
PAIR_KEYS = ("item_id", "order_id", *PRESENTATION)  # one presentation of one item


def item_sets(
    gate: GateResult | None, *, sample_sizes: Iterable[int] = (), seed: int = 0, sample_from: str = "accepted"
) -> ItemSets:
    """Named item sets: "all", and with a gate "accepted"/"rejected", plus seeded samples ``sample{n}``.

    A sample is drawn without replacement from ``sample_from`` (sorted ids, numpy default_rng(seed));
    a size not below that set's size is skipped with a warning, since it would be the set itself.
    """
    sets: ItemSets = {"all": None}
    if gate is not None:
        sets["accepted"] = list(gate.accepted)
        sets["rejected"] = list(gate.rejected)
    source = sets.get(sample_from)
    if source is None:
        source = sorted(gate.counts["item_id"]) if gate is not None else None
    for size in sample_sizes:
        if source is None:
            warnings.warn(f"sample{size}: no item list to sample from without a gate", stacklevel=2)
            continue
        if size >= len(source):
            warnings.warn(f"sample{size}: {sample_from} has only {len(source)} items; skipped", stacklevel=2)
            continue
        rng = np.random.default_rng(seed)
        sets[f"sample{size}"] = sorted(rng.choice(sorted(source), size=int(size), replace=False).tolist())
    return sets


def split_halves(item_ids: Iterable[str], seed: int = 0) -> tuple[list[str], list[str]]:
    """Seeded split of items into two disjoint halves (first half one longer when the count is odd)."""
    ids = np.array(sorted(set(map(str, item_ids))), dtype=object)
    perm = np.random.default_rng(seed).permutation(ids.size)
    half = (ids.size + 1) // 2
    return sorted(ids[perm[:half]].tolist()), sorted(ids[perm[half:]].tolist())


def _restrict(df: pd.DataFrame, ids: list[str] | None) -> pd.DataFrame:
    return df if ids is None else df.loc[df["item_id"].isin(ids).to_numpy()]


def _per_set(df: pd.DataFrame, sets: ItemSets, fn: Callable[[pd.DataFrame], pd.DataFrame]) -> pd.DataFrame:
    parts = []
    for name, ids in sets.items():
        part = fn(_restrict(df, ids))
        if not part.empty:
            parts.append(part.assign(set=name))
    if not parts:
        return pd.DataFrame()
    out = pd.concat(parts, ignore_index=True)
    return out[["set", *[c for c in out.columns if c != "set"]]]


def accuracy_table(rows: pd.DataFrame, by: Sequence[str] = ("model",)) -> pd.DataFrame:
    """``n, k, acc, lo, hi`` (Wilson) and ``chance`` per group of ``rows``."""
    if rows.empty:
        return pd.DataFrame(columns=[*by, "n", "k", "acc", "lo", "hi", "chance"])
    g = rows.assign(_chance=1.0 / rows["n_options"]).groupby(list(by), observed=True)
    out = g.agg(n=("correct", "size"), k=("correct", "sum"), chance=("_chance", "mean")).reset_index()
    out["acc"], out["lo"], out["hi"] = stats.wilson_columns(out["k"], out["n"])
    return out[[*by, "n", "k", "acc", "lo", "hi", "chance"]]


def _item_interval(rows: pd.DataFrame) -> pd.DataFrame:
    """Per model: t interval over item means (items, not calls, as the independent unit)."""
    means = rows.groupby(["model", "item_id"], observed=True)["correct"].mean()
    agg = means.groupby(level="model", observed=True).agg(["mean", "std", "count"])
    lo, hi = stats.t_bounds(agg["mean"], agg["std"], agg["count"])
    return pd.DataFrame({"n_items": agg["count"], "item_lo": lo, "item_hi": hi}, index=agg.index)


def _shares(rows: pd.DataFrame, column: str, n_slots: int) -> pd.DataFrame:
    """Per model: share of ``rows`` with ``column`` == s for s in 0..n_slots-1 (NaN counts in the total)."""
    total = rows.groupby("model", observed=True).size()
    counts = rows.groupby(["model", column], observed=True).size().unstack(fill_value=0)
    counts.columns = counts.columns.astype(int)
    counts = counts.reindex(index=total.index, columns=range(n_slots), fill_value=0)
    return counts.div(total, axis=0)


def _rate(rows: pd.DataFrame, status: str) -> pd.Series:
    return (rows["parse_status"] == status).groupby(rows["model"], observed=True).mean()


def model_summary(df: pd.DataFrame, base: Baseline) -> pd.DataFrame:
    """One row per model on the rows given: blind/full accuracy, slot shares, habit, excess, rates."""
    blind = select(df, base, condition="blind")
    full = select(df, base, condition="full")
    if blind.empty and full.empty:
        return pd.DataFrame()
    n_slots = int(df["n_options"].max())
    b = accuracy_table(blind).set_index("model").add_prefix("blind_")
    f = accuracy_table(full).set_index("model").drop(columns="chance").add_prefix("full_")
    out = b.join(f, how="outer")
    out["chance"] = out.pop("blind_chance").fillna(accuracy_table(full).set_index("model")["chance"])
    if not blind.empty:
        out = out.join(_item_interval(blind).add_prefix("blind_"))
        pick = _shares(blind, "picked_slot", n_slots)
        key = _shares(blind, "key_slot", n_slots)
        out = out.join(pick.add_prefix("pick_")).join(key.add_prefix("key_"))
        out["habit"] = (pick * key).sum(axis=1)
        out["excess"] = out["blind_acc"] - out["habit"]
        out["blind_unparseable"] = _rate(blind, "unparseable")
        out["blind_other_scheme"] = _rate(blind, "other_scheme")
    if not full.empty:
        out["full_unparseable"] = _rate(full, "unparseable")
        out["full_other_scheme"] = _rate(full, "other_scheme")
    return out.reset_index()


def agreement(df: pd.DataFrame, base: Baseline, gate_model: str) -> pd.DataFrame:
    """Per model: share of presentations answered with the gate model's option (both parsed)."""
    blind = select(df, base, condition="blind")
    keys = list(PAIR_KEYS)
    ref = blind.loc[blind["model"] == gate_model, [*keys, "picked_option"]]
    ref = ref.drop_duplicates(keys, keep="last").rename(columns={"picked_option": "gate_option"})
    pairs = blind[["model", *keys, "picked_option"]].merge(ref, on=keys, how="inner")
    pairs = pairs[pairs["picked_option"].notna() & pairs["gate_option"].notna()]
    if pairs.empty:
        return pd.DataFrame(columns=["model", "agreement", "n_pairs"])
    same = pairs["picked_option"] == pairs["gate_option"]
    out = same.groupby(pairs["model"], observed=True).agg(["mean", "size"])
    return out.rename(columns={"mean": "agreement", "size": "n_pairs"}).reset_index()


def forced_placement(df: pd.DataFrame, base: Baseline) -> pd.DataFrame:
    """Per model: accuracy with the key forced into each slot, Sum, position-free mean, spread.

    Position-free solvability is the mean of the slot accuracies; its interval is
    mean -+ t * sd(item means) / sqrt(items), each item's mean taken over its forced placements.
    """
    rows = select(df, base, condition="blind", forced=True)
    if rows.empty:
        return pd.DataFrame()
    n_slots = int(rows["n_options"].max())
    acc = rows.groupby(["model", "forced_slot"], observed=True)["correct"].mean().unstack()
    acc.columns = acc.columns.astype(int)
    acc = acc.reindex(columns=range(n_slots))
    out = acc.add_prefix("acc_")
    out["sum"] = acc.sum(axis=1, min_count=1)
    out["position_free"] = acc.mean(axis=1)
    out["spread"] = acc.max(axis=1) - acc.min(axis=1)
    items = rows.groupby(["model", "item_id"], observed=True)["correct"].mean()
    agg = items.groupby(level="model", observed=True).agg(["std", "count"])
    out["n_items"] = agg["count"]
    out["pf_lo"], out["pf_hi"] = stats.t_bounds(out["position_free"], agg["std"], agg["count"])
    out["chance"] = (1.0 / rows["n_options"]).groupby(rows["model"], observed=True).mean()
    single = accuracy_table(select(df, base, condition="blind")).set_index("model")["acc"]
    out["single_order"] = single.reindex(out.index)
    return out.reset_index()


def sweep(df: pd.DataFrame, base: Baseline, field_name: str) -> pd.DataFrame:
    """Accuracy per model, condition and value of one presentation field, the others at baseline."""
    rows = select(df, base.without(field_name))
    if rows.empty or rows[field_name].nunique() == 0:
        return pd.DataFrame()
    out = accuracy_table(rows, by=("model", "condition", field_name)).rename(columns={field_name: "value"})
    other = (rows["parse_status"] == "other_scheme").groupby(
        [rows["model"], rows["condition"], rows[field_name]], observed=True
    )
    out["other_scheme"] = other.mean().to_numpy()
    out["value"] = out["value"].astype(str)
    return out


def spread(sweep_rows: pd.DataFrame) -> pd.DataFrame:
    """Max minus min accuracy over a sweep's values, per model and condition (and set)."""
    if sweep_rows.empty:
        return pd.DataFrame(columns=["model", "condition", "spread", "n_values"])
    by = [c for c in ("set", "model", "condition") if c in sweep_rows.columns]
    g = sweep_rows.groupby(by, observed=True)["acc"]
    return (g.max() - g.min()).rename("spread").to_frame().join(g.size().rename("n_values")).reset_index()


def reasoning_modes(df: pd.DataFrame, base: Baseline, reference: str = "direct") -> pd.DataFrame:
    """Per model and reasoning mode: blind/full accuracy, exact McNemar p against ``reference`` on the
    presentations both modes answered, and mean output tokens over the mode's calls (both conditions).
    """
    rows = select(df, base.without("reasoning"))
    if rows.empty:
        return pd.DataFrame()
    acc = accuracy_table(rows, by=("model", "reasoning", "condition"))
    wide = acc.pivot_table(
        index=["model", "reasoning"], columns="condition", values=["acc", "n"], observed=True
    )
    wide.columns = [f"{cond}_{stat}" for stat, cond in wide.columns]
    tokens = (
        rows.groupby(["model", "reasoning"], observed=True)["output_tokens"].mean().rename("output_tokens")
    )
    out = wide.join(tokens).reset_index()
    keys = ["model", "condition", *[k for k in PAIR_KEYS if k != "reasoning"]]
    ref = rows.loc[rows["reasoning"] == reference, [*keys, "correct"]].drop_duplicates(keys, keep="last")
    paired = rows.loc[rows["reasoning"] != reference, [*keys, "reasoning", "correct"]].merge(
        ref, on=keys, suffixes=("", "_ref")
    )
    for cond in ("blind", "full"):
        col = f"p_{cond}"
        out[col] = np.nan
        part = paired[paired["condition"] == cond]
        for (model, mode), g in part.groupby(["model", "reasoning"], observed=True):
            p = stats.mcnemar(g["correct"].to_numpy(), g["correct_ref"].to_numpy()).p
            out.loc[(out["model"] == model) & (out["reasoning"] == mode), col] = p
    out["reasoning"] = out["reasoning"].astype(str)
    return out


def blind_full_correlation(
    df: pd.DataFrame, base: Baseline, ids: list[str] | None, *, exclude: Sequence[str] = (), seed: int = 0
) -> pd.DataFrame:
    """Pearson r of blind vs full accuracy across models: on the same items, and on disjoint halves
    (blind on one seeded half, full on the other, so item-level leakage cannot correlate the axes).
    """
    rows = _restrict(df, ids)
    rows = rows.loc[~rows["model"].isin(list(exclude)).to_numpy()]
    blind = select(rows, base, condition="blind")
    full = select(rows, base, condition="full")
    half_a, half_b = split_halves(rows["item_id"].astype(str).unique(), seed)
    out = []
    for kind, b_rows, f_rows in (
        ("same items", blind, full),
        ("disjoint halves", _restrict(blind, half_a), _restrict(full, half_b)),
    ):
        b = accuracy_table(b_rows).set_index("model")["acc"]
        f = accuracy_table(f_rows).set_index("model")["acc"]
        both = pd.concat([b.rename("blind"), f.rename("full")], axis=1, join="inner")
        c = stats.pearson(both["full"], both["blind"])
        out.append({"kind": kind, "r": c.r, "lo": c.lo, "hi": c.hi, "p": c.p, "n_models": c.n})
    return pd.DataFrame(out)


def parsed_accuracy(df: pd.DataFrame, base: Baseline) -> pd.DataFrame:
    """Per model and condition, accuracy over calls whose answer parsed (``n`` counts those), with the
    count of calls that did not parse beside it (the paper's Table 10 convention)."""
    rows = select(df, base)
    if rows.empty:
        return pd.DataFrame()
    ok = rows["parse_status"] == "ok"
    out = accuracy_table(rows.loc[ok.to_numpy()], by=("model", "condition"))
    failed = (~ok).groupby([rows["model"], rows["condition"]], observed=True).sum().rename("unparsed")
    out = out.merge(failed.reset_index(), on=["model", "condition"], how="outer")
    out["model"] = out["model"].astype(str)
    out["condition"] = out["condition"].astype(str)
    return out


@dataclass
class Analysis:
    """Everything the tables and figures are built from; each frame has a ``set`` column where relevant."""

    base: Baseline
    sets: ItemSets
    headline_set: str
    detail_set: str
    gate: GateResult | None
    summary: pd.DataFrame
    agreement: pd.DataFrame
    forced: pd.DataFrame
    phrasing: pd.DataFrame
    labels: pd.DataFrame
    reasoning: pd.DataFrame
    correlation: pd.DataFrame
    second_bank: pd.DataFrame = field(default_factory=pd.DataFrame)
    models: list[str] = field(default_factory=list)

    def params(self) -> dict[str, str]:
        """What the numbers were measured on, as flat strings (MLflow params)."""
        b = self.base
        out = {f"base.{f}": str(getattr(b, f)) for f in (*PRESENTATION, "orders")}
        out.update(headline_set=self.headline_set, detail_set=self.detail_set, models=",".join(self.models))
        if self.gate is not None:
            out.update({"gate.model": self.gate.gate_model, "gate.k": str(self.gate.k)})
            out["gate.orders"] = ",".join(self.gate.orders)
        return out


def analyze(
    predictions: pd.DataFrame,
    *,
    gate: GateResult | None = None,
    base: Baseline | None = None,
    sample_sizes: Iterable[int] = (),
    seed: int = 0,
    headline_set: str | None = None,
    detail_set: str | None = None,
    correlation_exclude: Sequence[str] | None = None,
    second_bank: pd.DataFrame | None = None,
) -> Analysis:
    """Compute every per-model, per-set measurement from prediction rows.

    ``headline_set`` (Tables 3-5, Figure 2; default "accepted" with a gate, else "all") and
    ``detail_set`` (Tables 6-9, Figure 3; default: the first seeded sample, else the headline set)
    choose which set each table shows; the frames hold every set. ``correlation_exclude`` defaults
    to the gate model, which selected the items. ``second_bank`` is another bank's predictions
    (Table 10), measured over parsed answers.
    """
    base = base or Baseline()
    df = ensure(predictions)
    sets = item_sets(gate, sample_sizes=sample_sizes, seed=seed)
    headline = headline_set or ("accepted" if gate is not None else "all")
    detail = detail_set or next((s for s in sets if s.startswith("sample")), headline)
    for name in (headline, detail):
        if name not in sets:
            raise ValueError(f"item set {name!r} not among {list(sets)}")
    summary = _per_set(df, sets, lambda d: model_summary(d, base))
    agree = pd.DataFrame()
    if gate is not None:
        agree = agreement(df, base, gate.gate_model)
        acc = summary.pivot(index="model", columns="set", values="blind_acc") if not summary.empty else None
        acc = (acc if acc is not None else pd.DataFrame()).reindex(columns=["accepted", "rejected"])
        acc["gap"] = acc["rejected"] - acc["accepted"]  # NaN when a side has no items
        acc = acc.rename(columns={"accepted": "blind_accepted", "rejected": "blind_rejected"})
        agree = agree.set_index("model").join(acc, how="outer").reset_index()
    exclude = correlation_exclude if correlation_exclude is not None else ([gate.gate_model] if gate else [])
    return Analysis(
        base=base,
        sets=sets,
        headline_set=headline,
        detail_set=detail,
        gate=gate,
        summary=summary,
        agreement=agree,
        forced=_per_set(df, sets, lambda d: forced_placement(d, base)),
        phrasing=_per_set(df, sets, lambda d: sweep(d, base, "phrasing")),
        labels=_per_set(df, sets, lambda d: sweep(d, base, "labels")),
        reasoning=_per_set(df, sets, lambda d: reasoning_modes(d, base, base.reasoning or "direct")),
        correlation=blind_full_correlation(df, base, sets[headline], exclude=exclude, seed=seed),
        second_bank=parsed_accuracy(ensure(second_bank), base) if second_bank is not None else pd.DataFrame(),
        models=sorted(map(str, df["model"].unique())),
    )


def bank_blind_accuracy(banks: Mapping[str, pd.DataFrame], base: Baseline | None = None) -> pd.DataFrame:
    """Blind accuracy per bank and model (Figure 4, right), from each bank's predictions."""
    base = base or Baseline()
    parts = [
        accuracy_table(select(ensure(df), base, condition="blind")).assign(bank=name)
        for name, df in banks.items()
    ]
    out = pd.concat(parts, ignore_index=True)
    out["model"] = out["model"].astype(str)
    return out[["bank", "model", "n", "k", "acc", "lo", "hi", "chance"]]
