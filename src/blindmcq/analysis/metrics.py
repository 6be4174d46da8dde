"""Per-model, per-set measurements of the paper (SPEC, "Statistics"), vectorised over prediction rows.

Conventions, fixed here so every table means the same thing (docs/statistics.md has the definitions):
- Items are the unit. Every rate is computed per option count N and combined with weights equal to
  the share of items with that N (``by_n`` frames hold the per-N values). Within N each item counts
  once: its value is the mean over its calls. With one call per item this is k/n over calls.
- Failed calls (error, refusal, truncated without an answer) are dropped from every rate under
  ``failed_calls="drop"`` (the paper's n) or kept as wrong under ``"wrong"``; their counts are
  reported either way. An unparseable answer is a response and always counts as wrong.
- Accuracy carries a Wilson interval when every item has one call, else an item-level interval (calls of
  one item are correlated: the beta interval at the items' effective sample size).
- Habit per N is sum_s pick_N(s) * key_N(s) on the same calls; pick rates are shares of all calls
  (they sum to 1 minus the unparsed share), so a model that always answers slot 0 has excess 0.
- Agreement with the gate model is over presentations both answered with an option; its null is
  sum_s pick_model(s) * pick_gate(s) per N on the same presentations, combined by item share.
- Chance is the mean of 1/N over the items measured.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy import special
from scipy import stats as sps

from blindmcq import stats
from blindmcq.analysis.frame import PRESENTATION, Baseline, ensure, failed_mask, failure_counts, select
from blindmcq.analysis.gate import GateResult
from blindmcq.config.schema import Analysis as AnalysisGroup
from blindmcq.config.schema import choices, default
from blindmcq.errors import ConfigError
from blindmcq.vocabulary import CONDITIONS

ItemSets = dict[str, list[str] | None]  # set name -> item ids (None: every item)
PAIR_KEYS = ("item_id", "order_id", *PRESENTATION)  # one presentation of one item


def item_sets(
    gate: GateResult | None, *, sample_sizes: Iterable[int] = (), seed: int, sample_from: str = "accepted"
) -> ItemSets:
    """Named item sets: "all", and with a gate "accepted"/"rejected", plus seeded samples ``sample{n}``.

    A sample is drawn without replacement from ``sample_from`` (sorted ids, numpy default_rng(seed));
    a size not below that set's size is skipped with a warning, since it would be the set itself.
    """
    sets: ItemSets = {"all": None}
    if gate is not None:
        sets["accepted"] = list(gate.accepted)
        sets["rejected"] = list(gate.rejected)
        if gate.untestable:  # items the gate cannot reject at its rate (N = 2): shown, never hidden
            sets["untestable"] = list(gate.untestable)
    source = sets.get(sample_from)
    if source is None:
        source = sorted(gate.counts["item_id"]) if gate is not None else None
    for size in sample_sizes:
        if source is None:
            warnings.warn(
                f"analysis.sample_sizes: no sample{size} set (blind accuracy on a seeded sample of {size} "
                f"{sample_from} items, as the paper's 400): there is no gate, so no {sample_from} set",
                stacklevel=2,
            )
            continue
        if size >= len(source):
            warnings.warn(
                f"analysis.sample_sizes: no sample{size} set (blind accuracy on a seeded sample of {size} "
                f"{sample_from} items, as the paper's 400): the {sample_from} set has only {len(source)} "
                "items, so that sample would be the set itself; the tables show the set whole",
                stacklevel=2,
            )
            continue
        rng = np.random.default_rng(seed)
        sets[f"sample{size}"] = sorted(rng.choice(sorted(source), size=int(size), replace=False).tolist())
    return sets


def split_halves(item_ids: Iterable[str], seed: int) -> tuple[list[str], list[str]]:
    """Seeded split of items into two disjoint halves (first half one longer when the count is odd)."""
    ids = np.array(sorted(set(map(str, item_ids))), dtype=object)
    perm = np.random.default_rng(seed).permutation(ids.size)
    half = (ids.size + 1) // 2
    return sorted(ids[perm[:half]].tolist()), sorted(ids[perm[half:]].tolist())


def _restrict(df: pd.DataFrame, ids: list[str] | None) -> pd.DataFrame:
    return df if ids is None else df.loc[df["item_id"].isin(ids).to_numpy()]


def _on_sets(
    df: pd.DataFrame, sets: ItemSets, fns: Mapping[str, Callable[[pd.DataFrame], Any]]
) -> dict[str, dict[str, Any]]:
    """Each of ``fns`` on each item set's rows: function name -> set name -> result. A set's rows are
    taken from ``df`` once for all the functions (taking them is a pass over every prediction row)."""
    out: dict[str, dict[str, Any]] = {key: {} for key in fns}
    for name, ids in sets.items():
        rows = _restrict(df, ids)
        for key, fn in fns.items():
            out[key][name] = fn(rows)
    return out


def _gathered(parts: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """Per-set frames stacked in set order with a leading ``set`` column (empty ones left out), models
    as text."""
    kept = [part.assign(set=name) for name, part in parts.items() if not part.empty]
    if not kept:
        return pd.DataFrame()
    out = pd.concat(kept, ignore_index=True)
    if "model" in out:
        out["model"] = out["model"].astype(str)
    return out[["set", *[c for c in out.columns if c != "set"]]]


ANSWERED = "_answered"  # set under analysis.failed_calls = wrong: whether the call returned an answer


def accuracy_table(rows: pd.DataFrame, by: Sequence[str] = ("model",)) -> pd.DataFrame:
    """Per group of ``rows``: ``n`` calls, ``k`` correct, ``items``, ``acc``, its 95% ``lo``/``hi``,
    ``ci`` (which interval) and ``chance``.

    ``acc`` is the mean over items of each item's share of correct calls, i.e. per option count N
    weighted by the share of items with that N; with one call per item it is k/n and its interval
    is Wilson's. Where some item has several calls (several orders, phrasings...), the calls are
    correlated and the interval is over item means instead (``stats.item_share_bounds``: the beta
    interval at the items' effective sample size, which keeps its width at 0 and 1 where a t interval
    collapses).
    ``chance`` is the mean of 1/N over the items; where failed calls are kept as wrong (an ``_answered``
    column), each item's 1/N is scaled by its share of answered calls, the chance a content-blind picker
    that fails as often actually has.
    """
    by = list(by)
    cols = [*by, "n", "k", "items", "acc", "lo", "hi", "ci", "chance"]
    if rows.empty:
        return pd.DataFrame(columns=cols)
    g = rows.groupby([*by, "item_id"], observed=True)
    # size/sum/max run in Cython; "first" and "mean" per group cost twice as much on a million rows
    items = pd.DataFrame({"calls": g.size(), "k": g["correct"].sum(), "n_options": g["n_options"].max()})
    items["y"] = items["k"] / items["calls"]
    items["inv"] = 1.0 / items["n_options"]
    if ANSWERED in rows:  # failed calls kept as wrong: a content-blind picker earns 1/N only when it answers
        items["inv"] *= g[ANSWERED].mean()
    out = (
        items.groupby(level=by, observed=True)
        .agg(
            n=("calls", "sum"),
            k=("k", "sum"),
            items=("calls", "size"),
            most=("calls", "max"),
            acc=("y", "mean"),
            sd=("y", "std"),
            chance=("inv", "mean"),
        )
        .reset_index()
    )
    _, w_lo, w_hi = stats.wilson_columns(out["k"], out["n"])
    i_lo, i_hi = stats.item_share_bounds(out["acc"], out["sd"].fillna(0.0), out["items"], out["n"])
    single = (out["most"] <= 1).to_numpy()
    out["lo"] = np.where(single, w_lo, i_lo)
    out["hi"] = np.where(single, w_hi, i_hi)
    out["ci"] = np.where(single, "wilson", "item-level")
    out["k"] = out["k"].astype(int)
    return out[cols]


def _item_shares(rows: pd.DataFrame, column: str, n_slots: int) -> pd.DataFrame:
    """Per (model, item): share of the item's calls with ``column`` == s, s in 0..n_slots-1 (a NaN
    pick counts in the calls and in no slot)."""
    calls = rows.groupby(["model", "item_id"], observed=True).size()
    counts = rows.groupby(["model", "item_id", column], observed=True).size().unstack(fill_value=0)
    counts.columns = counts.columns.astype(int)
    counts = counts.reindex(index=calls.index, columns=range(n_slots), fill_value=0)
    # one block: reindex adds each missing slot as its own block, which a wide bank (200 options)
    # carries into every later frame as pandas' PerformanceWarning
    shares = counts.to_numpy() / calls.to_numpy()[:, None]
    return pd.DataFrame(shares, index=counts.index, columns=counts.columns)


def _by_n(item_values: pd.DataFrame | pd.Series, n_options: pd.Series) -> pd.DataFrame | pd.Series:
    """Mean of per-(model, item) values per (model, N)."""
    model = item_values.index.get_level_values("model")
    return item_values.groupby([model, n_options.to_numpy()], observed=True).mean()


def _weights(n_options: pd.Series) -> pd.Series:
    """Per (model, N): the share of the model's items with N options."""
    model = n_options.index.get_level_values("model")
    count = n_options.groupby([model, n_options.to_numpy()], observed=True).size()
    return count / count.groupby(level=0, observed=True).transform("sum")


def _combine(per_n: pd.DataFrame | pd.Series, weights: pd.Series) -> pd.DataFrame | pd.Series:
    """Sum over N of the per-N values times the item share of N, per model."""
    w = weights.reindex(per_n.index)
    weighted = per_n.mul(w, axis=0)
    return weighted.groupby(level=0, observed=True).sum()


def habit_parts(blind: pd.DataFrame, n_slots: int) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Per N and combined: (``by_n`` frame, pick rates, key rates) of blind calls.

    ``by_n`` has per (model, n_options): items, weight, blind_acc, habit, excess, chance. Habit per N
    is sum_s pick_N(s) key_N(s), each an item-mean share; the combined habit is the item-share
    weighted sum over N, which is not the dot product of the combined rates when N varies.
    """
    items = blind.groupby(["model", "item_id"], observed=True).agg(
        n_options=("n_options", "first"), y=("correct", "mean")
    )
    pick = _item_shares(blind, "picked_slot", n_slots)
    key = _item_shares(blind, "key_slot", n_slots)
    weights = _weights(items["n_options"])
    pick_n = _by_n(pick, items["n_options"])
    key_n = _by_n(key, items["n_options"])
    by_n = pd.DataFrame(
        {
            "items": items["n_options"]
            .groupby([items.index.get_level_values("model"), items["n_options"].to_numpy()], observed=True)
            .size(),
            "weight": weights,
            "blind_acc": _by_n(items["y"], items["n_options"]),
            "habit": stats.habit(pick_n, key_n),
            "key_sq": (key_n**2).sum(axis=1),
        }
    )
    by_n["excess"] = by_n["blind_acc"] - by_n["habit"]
    by_n["habit_corrected"] = corrected_habit(by_n["habit"], by_n["blind_acc"], by_n.pop("key_sq"))
    by_n.index = by_n.index.set_names(["model", "n_options"])
    by_n = by_n.reset_index()
    by_n["chance"] = 1.0 / by_n["n_options"]
    return by_n, _combine(pick_n, weights), _combine(key_n, weights)


BOOTSTRAP_RESAMPLES = 2000
_ROWS_AT_ONCE = 200
HABIT_STATS = ("habit", "excess", "habit_corrected", "excess_corrected")


def _habit_values(means: Mapping[int, np.ndarray], weights: Mapping[int, float], n_slots: int) -> np.ndarray:
    """Rows x HABIT_STATS from per-N item means: ``means`` maps N to (rows, 2 n_slots + 1) arrays of the
    mean pick shares, key shares and accuracy (rows broadcast: a (1, F) array is the same in every row).

    Per N: the paper's habit ``H = pick . key`` and the corrected one (:func:`corrected_habit`); both
    combined by each N's item share, excess = accuracy - habit. An N whose corrected habit is undefined
    adds nothing to it, as in the point estimate; it is NaN only where every N's is."""
    rows = max(a.shape[0] for a in means.values())
    habit, acc, corrected = np.zeros(rows), np.zeros(rows), np.zeros(rows)
    defined = np.zeros(rows, dtype=bool)
    for n, x in means.items():
        pick, key, y = x[:, :n_slots], x[:, n_slots : 2 * n_slots], x[:, 2 * n_slots]
        h = np.einsum("bs,bs->b", pick, key)
        c = corrected_habit(h, y, np.einsum("bs,bs->b", key, key))
        habit = habit + weights[n] * h
        acc = acc + weights[n] * y
        corrected = corrected + weights[n] * np.nan_to_num(c)
        defined = defined | np.isfinite(c)
    corrected = np.where(defined, corrected, np.nan)
    return np.stack([habit, acc - habit, corrected, acc - corrected], axis=1)


def _resampled_means(x: np.ndarray, resamples: int, rng: np.random.Generator) -> np.ndarray:
    """(models, resamples, F) means of each model's item rows ``x`` (models, items, F) over resamples of
    the items drawn with replacement, the same draws for every model: each resample's item counts (one
    bincount) times the items' rows, a matrix product rather than a gather of resamples x items x F."""
    models, m, f = x.shape
    flat = x.transpose(1, 0, 2).reshape(m, models * f)
    out = np.empty((resamples, models * f))
    for start in range(0, resamples, _ROWS_AT_ONCE):
        b = min(_ROWS_AT_ONCE, resamples - start)
        drawn = rng.integers(0, m, size=(b, m)) + m * np.arange(b)[:, None]
        counts = np.bincount(drawn.ravel(), minlength=b * m).reshape(b, m)
        out[start : start + b] = counts.astype(float) @ flat / m  # a float product runs in BLAS
    return out.reshape(resamples, models, f).transpose(1, 0, 2)


def _leave_one_out(
    groups: Mapping[int, np.ndarray], weights: Mapping[int, float], n_slots: int
) -> np.ndarray:
    """(models, items left out, HABIT_STATS): each item left out in turn (the jackknife of :func:`_bca`),
    ``groups`` mapping N to the (models, items, F) rows of its items.

    Leaving item j out changes only its own option count's means, each the group's sum less j's row
    over one item fewer: O(items) in all. Items alone in their N are not left out."""
    whole = {n: g.mean(axis=1) for n, g in groups.items()}
    parts = []
    for n, g in groups.items():
        models, m, f = g.shape
        if m < 2:
            continue
        out = (g.sum(axis=1, keepdims=True) - g) / (m - 1)
        means = {k: np.repeat(v, m, axis=0) for k, v in whole.items()}
        means[n] = out.reshape(models * m, f)
        parts.append(_habit_values(means, weights, n_slots).reshape(models, m, len(HABIT_STATS)))
    if not parts:
        return np.empty((next(iter(groups.values())).shape[0], 0, len(HABIT_STATS)))
    return np.concatenate(parts, axis=1)


@functools.lru_cache(maxsize=1024)
def _expanded_quantile(items: int, confidence: float) -> float:
    """``stats.expanded_quantile``, remembered: one habit interval per model and set asks for few sizes."""
    return float(stats.expanded_quantile(items, confidence))


def _bca(
    boot: np.ndarray, estimate: np.ndarray, jack: np.ndarray, confidence: float = 0.95
) -> tuple[np.ndarray, np.ndarray]:
    """Bias-corrected and accelerated bootstrap bounds (Efron 1987) of each column of ``boot``
    (resamples x statistics; ``estimate`` one value a column, ``jack`` the leave-one-item-out values):
    the percentiles are moved by the bootstrap's median bias and by the skewness of the jackknife,
    which the plain percentile interval ignores and which matters near 0 and 1. The quantile is
    Hesterberg's expanded one for the items left out. Resamples where a statistic is undefined are left
    out; NaN where the estimate is."""
    boot = np.atleast_2d(np.asarray(boot, dtype=float).T).T
    estimate = np.atleast_1d(np.asarray(estimate, dtype=float))
    jack = np.atleast_2d(np.asarray(jack, dtype=float).T).T
    finite = np.isfinite(boot)
    n = finite.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        below = np.sum(finite & (boot < estimate), axis=0) + 0.5 * np.sum(finite & (boot == estimate), axis=0)
        z0 = special.ndtri(np.clip(below / n, 1e-6, 1 - 1e-6))
        known = np.isfinite(jack)
        centre = np.where(known, jack, 0.0).sum(axis=0) / np.maximum(known.sum(axis=0), 1)
        d = np.where(known, centre - jack, 0.0)
        denominator = 6.0 * np.sum(d**2, axis=0) ** 1.5
        accel = np.where(denominator > 0, np.sum(d**3, axis=0) / denominator, 0.0)
    expanded = _expanded_quantile(max(jack.shape[0], 2), confidence)
    ordered = np.sort(np.where(finite, boot, np.inf), axis=0)  # undefined resamples sort last
    out = []
    for z in (-expanded, expanded):
        level = special.ndtr(z0 + (z0 + z) / (1 - accel * (z0 + z)))
        ok = np.isfinite(estimate) & (n > 0) & np.isfinite(level)
        pos = np.clip(np.where(ok, level * (n - 1), 0.0), 0, np.maximum(n - 1, 0))  # linear, as numpy
        low = np.floor(pos).astype(int)
        high = np.minimum(low + 1, np.maximum(n - 1, 0))
        cols = np.arange(boot.shape[1])
        with np.errstate(invalid="ignore"):
            value = ordered[low, cols] + (pos - low) * (ordered[high, cols] - ordered[low, cols])
        value = np.where(high == low, ordered[low, cols], value)
        out.append(np.where(ok, value, np.nan))
    return out[0], out[1]


def habit_intervals(
    blind: pd.DataFrame, n_slots: int, *, seed: int, resamples: int = BOOTSTRAP_RESAMPLES
) -> pd.DataFrame:
    """Per model: 95% item-level BCa bootstrap bounds of the paper's habit and excess and of the corrected
    ones (``habit_lo``, ``habit_hi``, ``excess_lo``, ``excess_hi``, ``habit_corrected_lo`` ...).

    Items are resampled with replacement within each option count N (each N keeps its share of the
    items, as the point estimate weights it), and every statistic is recomputed from the resampled
    items' pick shares, key shares and accuracies, so the calls of one item always move together. The
    bounds are bias-corrected and accelerated (leave-one-item-out jackknife): the plain percentile
    interval covered 0.91 near the boundary in simulation. Models with as many items of each N share
    the resampled positions (one matrix product for all), so their bounds are paired. Seeded, so a rerun
    prints the same bounds.
    """
    items = blind.groupby(["model", "item_id"], observed=True).agg(
        n_options=("n_options", "first"), y=("correct", "mean")
    )
    pick = _item_shares(blind, "picked_slot", n_slots).reindex(items.index).to_numpy()
    key = _item_shares(blind, "key_slot", n_slots).reindex(items.index).to_numpy()
    x = np.column_stack([pick, key, items["y"].to_numpy(dtype=float)])
    n_of = items["n_options"].to_numpy()
    shapes: dict[tuple[tuple[int, int], ...], list[tuple[object, dict[int, np.ndarray]]]] = {}
    for model, at in items.groupby(level="model", observed=True, sort=False).indices.items():
        groups = {int(n): at[n_of[at] == n] for n in np.unique(n_of[at])}
        shapes.setdefault(tuple((n, g.size) for n, g in groups.items()), []).append((model, groups))
    rng = np.random.default_rng(seed)
    rows = []
    for shape, members in shapes.items():
        total = sum(size for _, size in shape)
        weights = {n: size / total for n, size in shape}
        stacked = {n: np.stack([x[groups[n]] for _, groups in members]) for n, _ in shape}
        boot = {n: _resampled_means(g, resamples, rng) for n, g in stacked.items()}
        models, stat = len(members), len(HABIT_STATS)
        boot_values = _habit_values({n: b.reshape(models * resamples, -1) for n, b in boot.items()}, weights,
                                    n_slots).reshape(models, resamples, stat)  # fmt: skip
        whole = _habit_values({n: g.mean(axis=1) for n, g in stacked.items()}, weights, n_slots)
        jack = _leave_one_out(stacked, weights, n_slots)
        lo, hi = _bca(
            boot_values.transpose(1, 0, 2).reshape(resamples, models * stat),
            whole.reshape(models * stat),
            jack.transpose(1, 0, 2).reshape(jack.shape[1], models * stat),
        )
        for i, (model, _) in enumerate(members):
            row: dict[str, object] = {"model": model}
            for j, name in enumerate(HABIT_STATS):
                row[f"{name}_lo"], row[f"{name}_hi"] = float(lo[i * stat + j]), float(hi[i * stat + j])
            rows.append(row)
    return pd.DataFrame(rows).set_index("model")


def blind_chance_tests(summary: pd.DataFrame) -> pd.DataFrame:
    """Per model: one-sided binomial p of blind accuracy above chance at the item level (``blind_p``:
    exact with one call per item; with several, the items counted once each, the conservative effective
    size) and ``blind_p_holm``, Holm-adjusted over the models of the frame, since the opening scans them
    all for one that answers blind above chance."""
    size = np.where(summary["blind_n"] > summary["blind_items"], summary["blind_items"], summary["blind_n"])
    p = [
        stats.binomial_tail(acc * n, n, chance) if np.isfinite(acc) else np.nan
        for acc, n, chance in zip(summary["blind_acc"], size, summary["chance"], strict=True)
    ]
    return pd.DataFrame({"blind_p": p, "blind_p_holm": stats.holm(p)}, index=summary.index)


def corrected_habit(
    habit: pd.Series | np.ndarray, blind_acc: pd.Series | np.ndarray, key_sq: pd.Series | np.ndarray
) -> pd.Series | np.ndarray:
    """Habit with the content bias taken out (per N; not the paper's definition, shown beside it).

    The paper's habit takes pick rates over every blind call, including items the model knows, whose
    picks follow the keys; with uneven key shares that leans habit up and excess down. If the model
    knows a share kappa of the items and otherwise picks by a position habit pi, the pick rates are
    ``p = kappa q + (1 - kappa) pi`` (q the key shares) and ``acc = kappa + (1 - kappa) h`` with
    ``h = pi . q`` the true habit; solving both gives ``h = (H - acc Q) / (1 + H - acc - Q)``, where
    ``H = p . q`` is the paper's habit and ``Q = q . q``. NaN where that is undefined (Q = 1, one slot;
    or accuracy 1). A Series in gives a Series out."""
    h, acc, q = (np.asarray(v, dtype=float) for v in (habit, blind_acc, key_sq))
    denominator = 1 + h - acc - q
    with np.errstate(invalid="ignore", divide="ignore"):
        value = np.where(np.abs(denominator) > 1e-9, (h - acc * q) / denominator, np.nan)
    return pd.Series(value, index=habit.index) if isinstance(habit, pd.Series) else value


def _rate(rows: pd.DataFrame, status: str) -> pd.Series:
    return (rows["parse_status"] == status).groupby(rows["model"], observed=True).mean()


def _summary(
    df: pd.DataFrame, base: Baseline, *, habit_ci: bool = True, seed: int
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """One row per model on the rows given (blind/full accuracy, slot shares, habit, excess with their
    bootstrap bounds drawn with ``seed`` unless ``habit_ci`` is False, rates), and the per-N habit rows."""
    blind = select(df, base, condition="blind")
    full = select(df, base, condition="full")
    if blind.empty and full.empty:
        return pd.DataFrame(), pd.DataFrame()
    n_slots = int(df["n_options"].max())
    b_acc = accuracy_table(blind).set_index("model")
    f_acc = accuracy_table(full).set_index("model")
    out = b_acc.add_prefix("blind_").join(f_acc.drop(columns="chance").add_prefix("full_"), how="outer")
    out["chance"] = out.pop("blind_chance").fillna(f_acc["chance"])
    by_n = pd.DataFrame()
    if not blind.empty:
        by_n, pick, key = habit_parts(blind, n_slots)
        out = out.join(pick.add_prefix("pick_")).join(key.add_prefix("key_"))
        out["habit"] = (by_n["habit"] * by_n["weight"]).groupby(by_n["model"], observed=True).sum()
        out["excess"] = out["blind_acc"] - out["habit"]
        corrected = (by_n["habit_corrected"] * by_n["weight"]).groupby(by_n["model"], observed=True)
        out["habit_corrected"] = corrected.sum(min_count=1)
        out["excess_corrected"] = out["blind_acc"] - out["habit_corrected"]
        if habit_ci:
            out = out.join(habit_intervals(blind, n_slots, seed=seed))
        out["blind_unparseable"] = _rate(blind, "unparseable")
        out["blind_other_scheme"] = _rate(blind, "other_scheme")
        out = out.join(blind_chance_tests(out))
    if not full.empty:
        out["full_unparseable"] = _rate(full, "unparseable")
        out["full_other_scheme"] = _rate(full, "other_scheme")
    return out.reset_index(), by_n


def failure_summary(df: pd.DataFrame, base: Baseline) -> pd.DataFrame:
    """Per model, before any call is dropped: calls, errors, refusals and truncations, blind and full."""
    parts = []
    for cond in CONDITIONS:
        counts = failure_counts(select(df, base, condition=cond)).set_index("model")
        parts.append(counts.add_prefix(f"{cond}_"))
    out = parts[0].join(parts[1], how="outer")
    return out.fillna(0).astype(int).reset_index() if not out.empty else pd.DataFrame()


AGREEMENT_COLUMNS = ["model", "agreement", "expected", "agreement_gap", "agreement_lo", "agreement_hi",
                     "n_pairs", "n_items"]  # fmt: skip


def agreement(df: pd.DataFrame, base: Baseline, gate_model: str, *, seed: int) -> pd.DataFrame:
    """Per model: share of presentations answered with the gate model's option (both parsed), and
    ``expected``, the agreement of two pickers independent given the key's slot
    (``stats.agreement_given_key``: each model's pick rates among the paired calls with the key in each
    slot, so shared or opposite position habits and independent knowledge are in the null), with the
    gap ``agreement_gap`` = agreement - expected and its 95% item cluster-bootstrap interval
    (``agreement_lo``, ``agreement_hi``; seeded; the draws are made once over the gate's answered items
    and shared by the models, each resized to its own paired items).

    Both are computed per option count N (items as the unit: each item's share over its paired
    presentations) and combined with the share of paired items with that N.
    """
    blind = select(df, base, condition="blind")
    keys = list(PAIR_KEYS)
    ref = blind.loc[blind["model"] == gate_model, [*keys, "n_options", "picked_option", "picked_slot"]]
    ref = ref.drop_duplicates(keys, keep="last")
    # the gate's answered items, of which every model's paired items are a subset: one bootstrap draw
    # over them serves every model (stats.agreement_given_key's universe)
    answered = ref.loc[ref["picked_option"].notna()].drop_duplicates("item_id")["n_options"]
    universe = {int(n): int(c) for n, c in answered.value_counts().items()}
    ref = ref.drop(columns="n_options").rename(
        columns={"picked_option": "gate_option", "picked_slot": "gate_slot"}
    )
    mine = blind[["model", *keys, "n_options", "key_slot", "picked_option", "picked_slot"]]
    pairs = mine.merge(ref, on=keys, how="inner")
    pairs = pairs[pairs["picked_option"].notna() & pairs["gate_option"].notna()]
    if pairs.empty:
        return pd.DataFrame(columns=AGREEMENT_COLUMNS)
    rows = []
    for model, p in pairs.groupby("model", observed=True, sort=True):
        items = p["item_id"].astype(str).to_numpy()
        r = stats.agreement_given_key(
            items,
            p["n_options"],
            p["key_slot"],
            p["picked_slot"],
            p["gate_slot"],
            seed=seed,
            universe=universe,
        )
        rows.append([model, r.agreement, r.expected, r.gap, r.lo, r.hi, r.pairs, r.items])
    return pd.DataFrame(rows, columns=AGREEMENT_COLUMNS)


def forced_placement(df: pd.DataFrame, base: Baseline) -> pd.DataFrame:
    """Per model: accuracy with the key forced into each slot, Sum, position-free mean, spread.

    Position-free solvability is the mean over items of each item's accuracy over its N forced
    placements (equivalently, per N the mean of the N slot accuracies, weighted by the item share
    of N), so a content-blind picker scores exactly the bank's mean of 1/N. Its interval is the
    item-level interval over those item means (``stats.item_share_bounds``). ``acc_s`` pools
    the items that have a slot s; Sum is per N the sum of the slot accuracies (1 for a content-blind
    picker), weighted by item share.
    """
    rows = select(df, base, condition="blind", forced=True)
    if rows.empty:
        return pd.DataFrame()
    n_slots = int(rows["n_options"].max())
    acc = rows.groupby(["model", "forced_slot"], observed=True)["correct"].mean().unstack()
    acc.columns = acc.columns.astype(int)
    acc = acc.reindex(columns=range(n_slots))
    out = acc.add_prefix("acc_")
    items = rows.groupby(["model", "item_id"], observed=True).agg(
        n_options=("n_options", "first"), y=("correct", "mean")
    )
    weights = _weights(items["n_options"])
    slot_n = rows.groupby(["model", "n_options", "forced_slot"], observed=True)["correct"].mean()
    out["sum"] = _combine(slot_n.groupby(level=[0, 1], observed=True).sum(), weights)
    # a slot with no forced call is absent from its N's sum, not a 0: count such slots so the table says it
    seen = slot_n.groupby(level=[0, 1], observed=True).size()
    expected = seen.index.get_level_values(1).astype(int)
    out["missing_slots"] = (expected - seen).groupby(level=0, observed=True).sum()
    agg = items["y"].groupby(level="model", observed=True).agg(["mean", "std", "count"])
    out["position_free"] = agg["mean"]
    out["spread"] = acc.max(axis=1) - acc.min(axis=1)
    out["n_items"] = agg["count"]
    calls = rows.groupby("model", observed=True).size()
    out["pf_lo"], out["pf_hi"] = stats.item_share_bounds(
        agg["mean"], agg["std"].fillna(0.0), agg["count"], calls.reindex(agg.index)
    )
    out["chance"] = (1.0 / items["n_options"]).groupby(level="model", observed=True).mean()
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
    for cond in CONDITIONS:
        col = f"p_{cond}"
        out[col] = np.nan
        part = paired[paired["condition"] == cond]
        for (model, mode), g in part.groupby(["model", "reasoning"], observed=True):
            p = stats.mcnemar(g["correct"].to_numpy(), g["correct_ref"].to_numpy()).p
            out.loc[(out["model"] == model) & (out["reasoning"] == mode), col] = p
    out["reasoning"] = out["reasoning"].astype(str)
    return out


def blind_full_correlation(
    df: pd.DataFrame, base: Baseline, ids: list[str] | None, *, exclude: Sequence[str] = (), seed: int
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
    by_n: pd.DataFrame = field(default_factory=pd.DataFrame)  # habit and excess per set, model and N
    failed_calls: str = default(AnalysisGroup, "failed_calls")
    agreement_set: str = "all"
    correlation_excluded: list[str] = field(default_factory=list)  # models left out of the correlation
    failure_slots: pd.DataFrame = field(default_factory=pd.DataFrame)  # failed calls vs the key's slot

    def params(self) -> dict[str, str]:
        """What the numbers were measured on, as flat strings (MLflow params)."""
        b = self.base
        out = {f"base.{f}": str(getattr(b, f)) for f in (*PRESENTATION, "orders")}
        out.update(headline_set=self.headline_set, detail_set=self.detail_set, models=",".join(self.models))
        out["failed_calls"] = self.failed_calls
        if self.gate is not None:
            out.update({"gate.model": self.gate.gate_model, "gate.k": str(self.gate.k)})
            out["gate.false_rejection"] = str(self.gate.false_rejection)
            out["gate.thresholds"] = ",".join(f"{n}:{k}" for n, k in sorted(self.gate.thresholds.items()))
            out["gate.orders"] = ",".join(self.gate.orders)
        return out


FAILED_CALLS = choices(AnalysisGroup, "failed_calls")


def apply_failed_calls(df: pd.DataFrame, policy: str) -> pd.DataFrame:
    """Drop failed calls (``"drop"``) or keep them as wrong answers (``"wrong"``)."""
    if policy not in FAILED_CALLS:
        raise ConfigError("analysis.failed_calls", f"expected one of {FAILED_CALLS}, got {policy!r}")
    if policy == "wrong":
        return df.assign(**{ANSWERED: ~failed_mask(df)})
    return df.loc[~failed_mask(df)]


def failure_key_dependence(df: pd.DataFrame, base: Baseline) -> pd.DataFrame:
    """Per model: whether its failed blind calls depend on where the key is shown (chi-square test of
    independence of failed x key slot, Holm over the models tested). Failures that happen only when the
    key is in one slot bias accuracy under either policy; the report warns when ``dependent``."""
    blind = select(df, base, condition="blind")
    rows = []
    for model, g in blind.groupby("model", observed=True):
        failed = failed_mask(g)
        if failed.sum() == 0 or failed.all():
            continue
        table = pd.crosstab(failed, g["key_slot"].to_numpy())
        if table.shape[1] < 2:
            continue
        test = sps.chi2_contingency(table.to_numpy())
        rows.append(
            {"model": str(model), "failed": int(failed.sum()), "calls": len(g), "p": float(test.pvalue)}
        )
    out = pd.DataFrame(rows, columns=["model", "failed", "calls", "p"])
    out["p_holm"] = stats.holm(out["p"]) if not out.empty else []
    out["dependent"] = out["p_holm"] < 0.05
    return out


def analyze(
    predictions: pd.DataFrame,
    *,
    gate: GateResult | None = None,
    base: Baseline | None = None,
    sample_sizes: Iterable[int] = (),
    seed: int = default(AnalysisGroup, "seed"),
    headline_set: str | None = None,
    detail_set: str | None = None,
    correlation_exclude: Sequence[str] | None = None,
    second_bank: pd.DataFrame | None = None,
    failed_calls: str = default(AnalysisGroup, "failed_calls"),
) -> Analysis:
    """Compute every per-model, per-set measurement from prediction rows.

    ``headline_set`` (Tables 3-5, Figure 2; default "accepted" with a gate, else "all") and
    ``detail_set`` (Tables 6-9, Figure 3; default: the first seeded sample, else the headline set)
    choose which set each table shows; the frames hold every set. ``correlation_exclude`` defaults
    to the gate model, which selected the items; models that read the option texts alone, whose blind
    and full answers are the same by construction, belong there too. ``second_bank`` is another bank's
    predictions
    (Table 10), measured over parsed answers. ``failed_calls`` ("drop", the paper's n, or "wrong")
    decides how errors, refusals and truncated calls without an answer enter every rate; their
    counts per model are in the summary (``blind_n_error`` ...) either way.
    """
    base = base or Baseline()
    raw = ensure(predictions)
    df = apply_failed_calls(raw, failed_calls)
    sets = item_sets(gate, sample_sizes=sample_sizes, seed=seed)
    headline = headline_set or ("accepted" if gate is not None else "all")
    detail = detail_set or next((s for s in sets if s.startswith("sample")), headline)
    for name in (headline, detail):
        if name not in sets:
            raise ValueError(f"item set {name!r} not among {list(sets)}")
    fns: dict[str, Callable[[pd.DataFrame], Any]] = {
        "summary": lambda d: _summary(d, base, seed=seed),
        "forced": lambda d: forced_placement(d, base),
        "phrasing": lambda d: sweep(d, base, "phrasing"),
        "labels": lambda d: sweep(d, base, "labels"),
        "reasoning": lambda d: reasoning_modes(d, base, base.reasoning or "direct"),
    }
    if gate is not None:
        fns["agreement"] = lambda d: agreement(d, base, gate.gate_model, seed=seed)
    per_set = _on_sets(df, sets, fns)
    parts = per_set["summary"]
    summary = _stack({name: p[0] for name, p in parts.items()})
    by_n = _stack({name: p[1] for name, p in parts.items()})
    failures = _gathered(_on_sets(raw, sets, {"failures": lambda d: failure_summary(d, base)})["failures"])
    if not summary.empty and not failures.empty:
        summary = summary.merge(failures, on=["set", "model"], how="left")
    agree = pd.DataFrame()
    if gate is not None:
        agree = _gathered(per_set["agreement"])
        acc = summary.pivot(index="model", columns="set", values="blind_acc") if not summary.empty else None
        acc = (acc if acc is not None else pd.DataFrame()).reindex(columns=["accepted", "rejected"])
        acc["gap"] = acc["rejected"] - acc["accepted"]  # NaN when a side has no items
        acc = acc.join(gap_interval(summary))
        acc = acc.rename(columns={"accepted": "blind_accepted", "rejected": "blind_rejected"})
        if agree.empty:
            agree = pd.DataFrame({"set": "all", "model": acc.index})
        agree = agree.merge(acc.reset_index(), on="model", how="outer")
        agree["set"] = agree["set"].fillna("all")
    exclude = correlation_exclude if correlation_exclude is not None else ([gate.gate_model] if gate else [])
    return Analysis(
        base=base,
        sets=sets,
        headline_set=headline,
        detail_set=detail,
        gate=gate,
        summary=summary,
        agreement=agree,
        forced=_gathered(per_set["forced"]),
        phrasing=_gathered(per_set["phrasing"]),
        labels=_gathered(per_set["labels"]),
        reasoning=_gathered(per_set["reasoning"]),
        correlation=blind_full_correlation(df, base, sets[headline], exclude=exclude, seed=seed),
        second_bank=parsed_accuracy(ensure(second_bank), base) if second_bank is not None else pd.DataFrame(),
        models=sorted(map(str, df["model"].unique())),
        by_n=by_n,
        failed_calls=failed_calls,
        correlation_excluded=sorted(set(map(str, exclude)) & set(map(str, df["model"].unique()))),
        failure_slots=failure_key_dependence(raw, base),
    )


def gap_interval(summary: pd.DataFrame) -> pd.DataFrame:
    """Per model: the 95% interval of the gap (rejected - accepted blind accuracy), Newcombe's hybrid
    score interval from the two sets' own (item-level) intervals, the sets being disjoint items; and
    ``gap_adjusted``, the gap less the difference of the two sets' chance (they differ on a mixed bank)."""
    cols = ["gap_lo", "gap_hi", "gap_adjusted"]
    if summary.empty or not {"accepted", "rejected"} <= set(summary["set"]):
        return pd.DataFrame(columns=cols)
    fields = ["blind_acc", "blind_lo", "blind_hi", "chance"]
    a = summary[summary["set"] == "accepted"].set_index("model")[fields]
    r = summary[summary["set"] == "rejected"].set_index("model")[fields]
    both = a.add_suffix("_a").join(r.add_suffix("_r"), how="inner")  # every field is on both sides
    gap = both["blind_acc_r"] - both["blind_acc_a"]
    out = pd.DataFrame(index=both.index)
    out["gap_lo"] = gap - np.sqrt(
        (both["blind_acc_r"] - both["blind_lo_r"]) ** 2 + (both["blind_hi_a"] - both["blind_acc_a"]) ** 2
    )
    out["gap_hi"] = gap + np.sqrt(
        (both["blind_hi_r"] - both["blind_acc_r"]) ** 2 + (both["blind_acc_a"] - both["blind_lo_a"]) ** 2
    )
    out["gap_adjusted"] = gap - (both["chance_r"] - both["chance_a"])
    return out


def _stack(frames: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    parts = [f.assign(set=name) for name, f in frames.items() if not f.empty]
    if not parts:
        return pd.DataFrame()
    out = pd.concat(parts, ignore_index=True)
    out["model"] = out["model"].astype(str)
    return out[["set", *[c for c in out.columns if c != "set"]]]


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
