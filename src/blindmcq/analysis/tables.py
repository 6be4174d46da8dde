"""Tables 2-10 of the paper from an ``Analysis``: numbers as DataFrames (CSV), text as Markdown.

``TABLES`` is the registry: one ``TableSpec`` per table (key, title, what it needs, its builder, the
metrics it contributes). The report order (``build_tables``), ``TITLES``, ``NEEDS``, the per-model metric
kinds of ``reports/metrics.json`` (``headline_metrics``) and MLflow (``reporting/tracking.py``) and the
tables of the HTML report (``tables.json``) all derive from it, so a new statistic is one entry.

Every number shown is rounded by ``rounded`` (3 decimals), and ``headline_metrics`` uses the same
function, so the Markdown, the CSV-derived report and the MLflow/DVC metrics agree digit for digit.
A table without the predictions it needs is still written, with a note naming what is missing.
"""

from __future__ import annotations

import json
import math
import re
import string
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from blindmcq import stats
from blindmcq.analysis import leaks
from blindmcq.analysis.gate import gate_nulls
from blindmcq.analysis.metrics import BOOTSTRAP_RESAMPLES, Analysis, spread
from blindmcq.atomic import csv_text, write_text
from blindmcq.datasets.items import Item
from blindmcq.errors import InputError
from blindmcq.labels import combined_label
from blindmcq.vocabulary import CONDITIONS

DECIMALS = 3
BASELINE_COLUMNS = ("strategy", "item_id", "picked_option", "correct")


def rounded(x: float) -> float:
    """The number as shown: 3 decimals (NaN stays NaN)."""
    return math.nan if x is None or not np.isfinite(x) else float(f"{x:.{DECIMALS}f}")


def fmt(x: float, signed: bool = False) -> str:
    if x is None or not np.isfinite(x):
        return "—"
    return f"{x:+.{DECIMALS}f}" if signed else f"{x:.{DECIMALS}f}"


def fmt_ci(value: float, lo: float, hi: float, signed: bool = False) -> str:
    """``0.515 [0.504, 0.526]``: the bounds written like the value (leading zero; with ``signed``, every
    number carries its sign, as for a difference: ``+0.017 [-0.019, +0.052]``)."""
    if not np.isfinite(value):
        return "—"
    if not (np.isfinite(lo) and np.isfinite(hi)):
        return fmt(value, signed)
    return f"{fmt(value, signed)} [{fmt(lo, signed)}, {fmt(hi, signed)}]"


def fmt_p(p: float) -> str:
    if p is None or not np.isfinite(p):
        return "—"
    return "<.001" if p < 0.001 else fmt(p)


def slot_name(s: int) -> str:
    """Slot s (0-based) as the Latin labels name it, going on past Z: A..Z, AA, AB, ... (``labels``).
    Metric names use it whatever the bank's labels (``bank/key_share/B``)."""
    return combined_label(string.ascii_uppercase, s)


def bank_slot(s: int, labels: Sequence[str] = ()) -> str:
    """Slot s (0-based) by position, with the bank's own label where it has one: "2 (Б)"; "2" without."""
    return f"{s + 1} ({labels[s]})" if s < len(labels) else f"{s + 1}"


def slot_heading(s: int, labels: Sequence[str] | None = None) -> str:
    """Slot s as a table's column names it: the Latin letter (the probe's) where the bank has no labels
    of its own or writes its keys in Latin ones, else by position and the bank's label ("1 (А)"), so a
    Cyrillic-keyed bank's Б is not read as the Latin B (its В)."""
    if not labels or all(label == slot_name(i) for i, label in enumerate(labels)):
        return slot_name(s)
    return bank_slot(s, labels)


@dataclass(frozen=True)
class Table:
    name: str
    title: str
    frame: pd.DataFrame  # full-precision numbers (the CSV)
    shown: pd.DataFrame  # formatted strings (the Markdown)
    note: str = ""

    def markdown(self) -> str:
        lines = [f"### {self.title}", ""]
        if not self.shown.empty:
            cols = [str(c) for c in self.shown.columns]
            lines += ["| " + " | ".join(cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
            lines += ["| " + " | ".join(map(str, row)) + " |" for row in self.shown.itertuples(index=False)]
            lines.append("")
        if self.note:
            lines += [self.note, ""]
        return "\n".join(lines)

    def cells(self) -> dict[str, object]:
        """The table as the HTML report shows it (``tables.json``): title, column names, rows of cell
        text and note paragraphs, each exactly as in :meth:`markdown` (cells trimmed, as a Markdown cell
        is: Table 2 past the gate tells its second "vs chance " column apart by a trailing space)."""
        shown = not self.shown.empty
        return {
            "name": self.name,
            "title": self.title,
            "columns": [str(c).strip() for c in self.shown.columns] if shown else [],
            "rows": [[str(v).strip() for v in r] for r in self.shown.itertuples(index=False)]
            if shown
            else [],
            "notes": [line for line in self.note.rstrip().splitlines() if line.strip()],
        }


def _empty(name: str) -> Table:
    return Table(
        name, TITLES[name], pd.DataFrame(), pd.DataFrame(), f"No data: this table needs {NEEDS[name]}."
    )


def _at(frame: pd.DataFrame, set_name: str) -> pd.DataFrame:
    if frame.empty or "set" not in frame:
        return pd.DataFrame()
    return frame[frame["set"] == set_name].reset_index(drop=True)


def _slots(frame: pd.DataFrame, prefix: str) -> list[int]:
    return sorted(int(c[len(prefix) :]) for c in frame.columns if re.fullmatch(rf"{prefix}\d+", c))


def _model_label(a: Analysis, model: str) -> str:
    return f"{model} (gate)" if a.gate is not None and model == a.gate.gate_model else model


def check_baselines(baselines: pd.DataFrame, source: str = "baselines") -> pd.DataFrame:
    missing = [c for c in BASELINE_COLUMNS if c not in baselines.columns]
    if missing:
        raise InputError(f"missing baseline columns {missing}", file=source)
    return baselines


def table_2(
    baselines: pd.DataFrame | None,
    *,
    chance: float = 0.25,
    item_ids: Sequence[str] | None = None,
    absent: str | None = None,
) -> Table:
    """Surface strategies: accuracy with Wilson interval per strategy (in the frame's order), under a
    chance row, with the number of tied items beside it. With a ``credit`` column (as
    ``blindmcq.auditing.surface`` writes) a tie earns 1/k of the k tied options when the key is among
    them, the expectation of a random break; otherwise ``correct`` counts. With an ``n_options`` column,
    chance is the mean of 1/N over the items counted, per strategy and overall; otherwise ``chance``.
    ``absent`` says why a strategy's row is missing (lexical search on a bank in another language).
    """
    if baselines is None or baselines.empty:
        return _empty("table2")
    b = check_baselines(baselines)
    if item_ids is not None:
        b = b[b["item_id"].isin(list(item_ids))]
    n_opt = b["n_options"] if "n_options" in b else pd.Series(1.0 / chance, index=b.index)
    credit = leaks.credit_of(b)
    tie = b["tie"].astype(bool) if "tie" in b else pd.Series(False, index=b.index)
    rows = pd.DataFrame(
        {"strategy": b["strategy"].astype(str), "credit": credit, "inv": 1.0 / n_opt, "tie": tie}
    )
    frame = rows.groupby("strategy", sort=False).agg(
        n=("credit", "size"), k=("credit", "sum"), chance=("inv", "mean"), ties=("tie", "sum")
    )
    frame["acc"], frame["lo"], frame["hi"] = stats.wilson_columns(frame["k"], frame["n"])
    frame = frame.reset_index()
    overall = float((1.0 / n_opt[~b["item_id"].duplicated()]).mean())
    chance_row = pd.DataFrame(
        [{"strategy": "Chance", "n": np.nan, "k": np.nan, "acc": overall, "chance": overall, "ties": np.nan}]
    )
    frame = pd.concat([chance_row, frame], ignore_index=True)
    shown = pd.DataFrame(
        {
            "Strategy": frame["strategy"],
            "n": frame["n"].map(lambda x: "" if not np.isfinite(x) else f"{int(x)}"),
            "Accuracy": [fmt_ci(v, lo, hi) for v, lo, hi in frame[["acc", "lo", "hi"]].to_numpy()],
            "Tied items": frame["ties"].map(lambda x: "" if not np.isfinite(x) else f"{int(x)}"),
        }
    )
    note = (
        f"Chance is {fmt(overall)} (mean of 1/N). n counts items a strategy applies to; 95% Wilson intervals "
        "(one pick per item). A tie at the extreme earns 1/k when the key is among the k tied options "
        "(the expected score of a random break; the first option would inherit the key-position skew)."
    )
    constants = frame[frame["strategy"].str.startswith("constant_")]
    if not constants.empty:
        best = constants.loc[constants["acc"].idxmax()]
        note += f" Best constant position: {best['strategy']} ({fmt(best['acc'])}), chosen after the fact."
    beyond = leaks.lexical_beyond_length(b)
    if beyond:
        note += (
            f" Lexical search beyond length: on the {beyond['n']} items where its pick differs from "
            f"most_words' (items where either ties left out, so no tie break enters), it is right "
            f"{beyond['k']} of {beyond['n']} ({fmt(beyond['acc'])}, chance "
            f"{fmt(beyond['chance'])}, one-sided exact binomial p {fmt_p(beyond['p_above'])})."
        )
    if absent:
        note += f" No lexical row: {absent}"
    return Table("table2", TITLES["table2"], frame, shown, note)


def surface_gate_table(baselines: pd.DataFrame | None, a: Analysis) -> Table:
    """Every Table 2 strategy on the accepted and the rejected items (``leaks.surface_past_gate``)."""
    frame = leaks.surface_past_gate(baselines, a.gate)
    if frame.empty:
        t = _empty("surface_gate")
        return Table(t.name, t.title, frame, t.shown, t.note)

    strategies = list(dict.fromkeys(frame["strategy"]))

    def side(set_name: str) -> tuple[str, list[str], list[str]]:
        part = frame[frame["set"] == set_name].set_index("strategy").reindex(strategies)
        cells = ["" if pd.isna(r.n) else fmt_ci(r.acc, r.lo, r.hi) for r in part.itertuples()]
        verdict = [
            "" if pd.isna(r.n)
            else f"above (Holm p {fmt_p(r.holm_above)})" if r.leaks
            else f"below (Holm p {fmt_p(r.holm_below)})" if r.reversed
            else "at chance"
            for r in part.itertuples()
        ]  # fmt: skip
        n = int(part["n"].max()) if part["n"].notna().any() else 0
        return f"{set_name.capitalize()} ({n} items)", cells, verdict

    chance = frame.drop_duplicates("strategy").set_index("strategy").reindex(strategies)["chance"]
    shown = pd.DataFrame({"Strategy": strategies, "Chance": chance.map(fmt).to_numpy()})
    for set_name, suffix in (("accepted", ""), ("rejected", " ")):
        title, cells, verdict = side(set_name)
        shown[title], shown[f"vs chance{suffix}"] = cells, verdict
    gate_model = a.gate.gate_model if a.gate is not None else "?"
    note = (
        "One pick per item, ties credited 1/k. Tests: one-sided exact binomial on items against chance "
        "(mean 1/N), Holm-adjusted over every strategy and both directions within a set. A strategy above "
        "chance on the accepted items is a leak the gate left; one below chance there shows the gate "
        f"selected on its surface feature. The gate model ({gate_model}) selected these sets, so its own "
        "strategy is below chance on the accepted items by construction."
    )
    return Table("surface_gate", TITLES["surface_gate"], frame, shown, note)


def bank_profile(items: Sequence[Item], labels: Sequence[str] | None = None) -> Table:
    """Key-position shares and mean key minus mean distractor length (characters) of usable items.
    With ``labels`` (the bank's label of each slot, ``datasets.registry.bank_key_labels``; empty: the
    bank has none), each key slot is named by position and label ("key in slot 2 (Б)") and its item
    count stands beside its share; without, slots are named by their Latin letters."""
    usable = [it for it in items if it.usable]
    if not usable:
        return Table(
            "bank_profile", TITLES["bank_profile"], pd.DataFrame(), pd.DataFrame(), "No usable items."
        )
    n = max(it.n_options for it in usable)
    keys = np.array([it.key for it in usable])
    key_len = np.array([len(it.options[it.key]) for it in usable])
    dis_len = np.array([np.mean([len(o) for j, o in enumerate(it.options) if j != it.key]) for it in usable])
    name = slot_name if labels is None else (lambda s: bank_slot(s, labels))
    rows = [{"measure": f"key in slot {name(s)}", "value": float(np.mean(keys == s))} for s in range(n)]
    rows.append({"measure": "mean key length (chars)", "value": float(key_len.mean())})
    rows.append({"measure": "mean distractor length (chars)", "value": float(dis_len.mean())})
    rows.append(
        {"measure": "key minus distractor length (chars)", "value": float(key_len.mean() - dis_len.mean())}
    )
    frame = pd.DataFrame(rows)
    shown = pd.DataFrame({"Measure": frame["measure"], "Value": frame["value"].map(fmt)})
    if labels is not None:  # each slot's count before its share: "103 (0.303)"
        counted = Counter(int(k) for k in keys)
        counts = [counted.get(s, 0) for s in range(n)]
        frame["items"] = pd.array([*counts, *[None] * (len(frame) - n)], dtype="Int64")
        values = shown["Value"][:n]
        shown.loc[: n - 1, "Value"] = [f"{int(c)} ({v})" for c, v in zip(counts, values, strict=True)]
    return Table("bank_profile", f"{TITLES['bank_profile']} ({len(usable)} usable items)", frame, shown)


FAILURES = ("n_error", "n_refused", "n_truncated")


def mixed_n_note(frame: pd.DataFrame | None) -> str:
    """What the note says about option counts: nothing for one N, the weighting for several."""
    if frame is None or frame.empty or "n_options" not in frame or frame["n_options"].nunique() < 2:
        return ""
    ns = ", ".join(str(int(n)) for n in sorted(frame["n_options"].unique()))
    return (
        f" Items have N = {ns} options: each rate is computed per N and combined with weights equal to "
        "each N's share of the items measured (habit_by_n.csv has the per-N values)."
    )


def failed_note(a: Analysis) -> str:
    how = (
        "dropped from every rate (n excludes them)"
        if a.failed_calls == "drop"
        else "counted as wrong answers (n includes them)"
    )
    note = (
        " Failed calls (errors, refusals, responses truncated at the token limit without an answer) are "
        f"{how}"
        " (analysis.failed_calls); Err/Ref/Trunc count them per model before any is dropped."
    )
    if a.failed_calls == "wrong":
        note += " Chance is scaled by each item's share of answered calls, as a content-blind picker's is."
    dependent = a.failure_slots[a.failure_slots["dependent"]] if not a.failure_slots.empty else None
    if dependent is not None and not dependent.empty:
        note += (
            f" Warning: the failures of {', '.join(dependent['model'])} depend on the key's slot "
            "(chi-square, "
            "Holm over models, p < 0.05), so their accuracy is biased under either policy."
        )
    return note


def interval_note(frame: pd.DataFrame, prefix: str) -> str:
    kinds = set()
    for c in frame.columns:
        if re.fullmatch(rf"{prefix}ci(_.*)?", c):
            kinds |= set(frame[c].dropna().astype(str))
    if kinds == {"wilson"}:
        return "95% Wilson intervals over calls (one call per item)."
    if kinds == {"item-level"}:
        return (
            "95% item-level intervals (several calls per item are pooled, so items, not calls, are the "
            "independent unit: the beta interval at the items' effective sample size)."
        )
    return (
        "95% intervals: Wilson where each item has one call, item-level (the beta interval at the items' "
        "effective sample size) where an item has several correlated calls."
    )


def _failure_shown(frame: pd.DataFrame, cond: str, st: str) -> list[str]:
    """``errors/refusals/truncations``, or "—" where the model made no such call."""
    cols = [f"{cond}_{c}_{st}" for c in FAILURES]
    calls = f"{cond}_n_calls_{st}"
    if not all(c in frame for c in cols):
        return ["—"] * len(frame)
    made = frame[calls].fillna(0).to_numpy() if calls in frame else np.ones(len(frame))
    return [
        "/".join("0" if pd.isna(v) else str(int(v)) for v in row) if m > 0 else "—"
        for row, m in zip(frame[cols].to_numpy(), made, strict=True)
    ]


def table_3(a: Analysis) -> Table:
    # every item first, then the gate's two sides: a model's all-items figure is never hidden behind
    # the gate model's own selection
    sets = ["all", "accepted", "rejected"] if a.gate is not None else ["all"]
    s = a.summary
    if s.empty:
        return _empty("table3")
    s = s[s["set"].isin(sets)]
    cols = ["blind_n", "blind_items", "blind_acc", "blind_lo", "blind_hi", "blind_ci"]
    cols += ["full_n", "full_items", "full_acc", "full_lo", "full_hi", "full_ci"]
    cols += [f"{cond}_{c}" for cond in CONDITIONS for c in ("n_calls", *FAILURES)]
    cols = [c for c in cols if c in s]
    frame = s.pivot(index="model", columns="set", values=cols)
    frame.columns = [f"{c}_{st}" for c, st in frame.columns]
    order_by = f"full_acc_{sets[0]}" if f"full_acc_{sets[0]}" in frame else f"blind_acc_{sets[0]}"
    frame = frame.sort_values(order_by, ascending=False).reset_index()
    shown = pd.DataFrame({"Model": [_model_label(a, m) for m in frame["model"]]})
    for cond in CONDITIONS:
        for st in sets:
            if f"{cond}_acc_{st}" not in frame or frame[f"{cond}_acc_{st}"].isna().all():
                continue
            shown[f"{cond.capitalize()}, {st}"] = [
                fmt_ci(*v)
                for v in frame[[f"{cond}_acc_{st}", f"{cond}_lo_{st}", f"{cond}_hi_{st}"]].to_numpy()
            ]
            shown[f"n {cond}, {st}"] = frame[f"{cond}_n_{st}"].map(
                lambda x: "—" if pd.isna(x) else f"{int(x)}"
            )
            if st == sets[0]:  # failed calls on a subset are among these
                shown[f"Err/Ref/Trunc {cond}, {st}"] = _failure_shown(frame, cond, st)
    chances = s.groupby("set")["chance"].mean()  # the same items for every model unless calls failed
    chance = "; ".join(f"{fmt(float(chances[st]))} on {st}" for st in sets if st in chances)
    note = (
        f"Chance is {chance} (mean of 1/N over items). n counts calls; each item counts once "
        f"(its accuracy is the mean over its calls). {interval_note(frame, 'blind_')}"
    )
    if a.gate is not None:
        note += (
            f" Accepted and rejected are the gate's sides ({a.gate.gate_model} answering blind in at least k"
            " of the 2N orders rejects an item); the gate model's own accepted figure is low by construction."
        )
    note += mixed_n_note(_at(a.by_n, sets[0])) + failed_note(a)
    return Table("table3", TITLES["table3"], frame, shown, note)


def table_4(a: Analysis, labels: Sequence[str] | None = None) -> Table:
    """Positional habit; ``labels``: the bank's slot labels, which name the per-slot columns
    (``slot_heading``)."""
    sets = list(dict.fromkeys(["all", a.headline_set]))
    s = a.summary[a.summary["set"].isin(sets)] if not a.summary.empty else a.summary
    if s.empty or "habit" not in s:
        return _empty("table4")
    slots = _slots(s, "pick_")
    cols = [
        "set",
        "model",
        *[f"pick_{i}" for i in slots],
        *[f"key_{i}" for i in slots],
        "blind_n",
        "blind_acc",
        "habit",
        "excess",
        *[c for c in ("habit_lo", "habit_hi", "excess_lo", "excess_hi") if c in s],
        *[
            c
            for st in ("habit_corrected", "excess_corrected")
            for c in (st, f"{st}_lo", f"{st}_hi")
            if c in s
        ],
        "blind_items",
        *[f"blind_{c}" for c in FAILURES if f"blind_{c}" in s],
    ]
    order = {name: i for i, name in enumerate(sets)}
    frame = s[cols].assign(_set=s["set"].map(order)).dropna(subset=["habit"])
    frame = frame.sort_values(["_set", "excess"], ascending=[True, False]).drop(columns="_set")
    frame = frame.reset_index(drop=True)
    shown = pd.DataFrame({"Set": frame["set"], "Model": [_model_label(a, m) for m in frame["model"]]})
    for i in slots:
        shown[f"Pick {slot_heading(i, labels)}"] = frame[f"pick_{i}"].map(fmt)
    for i in slots:
        shown[f"Key {slot_heading(i, labels)}"] = frame[f"key_{i}"].map(fmt)
    shown["Blind"] = frame["blind_acc"].map(fmt)
    # the corrected habit and excess first: they are the ones to quote (the note says why)
    for name, label, signed in (
        ("habit_corrected", "Habit*", False),
        ("excess_corrected", "Excess*", True),
        ("habit", "Habit", False),
        ("excess", "Excess", True),
    ):
        if name not in frame:
            continue
        shown[label] = frame[name].map(lambda x, signed=signed: fmt(x, signed=signed))
        if f"{name}_lo" in frame:
            bounds = frame[[f"{name}_lo", f"{name}_hi"]].to_numpy()
            shown[f"{label} 95% CI"] = [f"[{fmt(lo, signed)}, {fmt(hi, signed)}]" for lo, hi in bounds]
    shown["n"] = frame["blind_n"].map(lambda x: "—" if pd.isna(x) else f"{int(x)}")
    if all(f"blind_{c}" in frame for c in FAILURES):
        shown["Err/Ref/Trunc"] = [
            "/".join(str(int(v)) if pd.notna(v) else "0" for v in row)
            for row in frame[[f"blind_{c}" for c in FAILURES]].to_numpy()
        ]
    by_n = _at(a.by_n, a.headline_set)
    mixed = not by_n.empty and by_n["n_options"].nunique() > 1
    note = (
        f"Sets: {' and '.join(sets)}. Habit = sum over slots of pick rate x key rate on the same blind calls"
        + (", computed per option count N and combined by each N's share of the items" if mixed else "")
        + "; pick rates are shares of all calls (unparsed answers pick no slot), each item counting once. "
        "Excess = blind - habit. Habit counts picks on items the model answers by content too, so where "
        "keys sit unevenly it is biased (up or down, as the keys and the habit sit) and excess with it; "
        "Habit* and Excess* take that bias out (the model knows some items and otherwise follows a position "
        "habit, docs/statistics.md). Quote Habit* and Excess*: their intervals aim at the model's true habit "
        "and excess; Habit and Excess are the paper's definition, kept for reproduction, and their "
        "intervals cover only what that definition measures. Intervals: 95% item-level BCa bootstrap "
        f"({BOOTSTRAP_RESAMPLES:,} resamples of the items within each N, seeded), so calls of one "
        "item move together."
    )
    note += habit_coverage_note(frame)
    if a.gate is not None and a.headline_set == "accepted":
        note += (
            f" On the accepted set the gate model ({a.gate.gate_model}) is below its all-items figure by "
            "construction: the gate removed the items it answers."
        )
    if mixed:
        note += " The pick and key columns are item-share weighted means over N; habit is not their product."
    note += failed_note(a)
    return Table("table4", TITLES["table4"], frame, shown, note)


# The cells of the simulated grid (benchmarks/bench_habit_coverage.py --banks 800 --resamples 1000, the
# table in docs/statistics.md) where the Habit* or Excess* interval covered the true value less than 0.94
# of the time: (design, items, share of items known) -> the lowest coverage over the key splits and
# habits simulated there.
HABIT_SHORT_CELLS: dict[tuple[str, int, float], float] = {
    ("published", 60, 0.0): 0.934,
    ("published", 60, 0.3): 0.939,
    ("published", 60, 0.9): 0.894,
    ("published", 340, 0.0): 0.935,
    ("published", 340, 0.3): 0.934,
    ("published", 340, 0.9): 0.932,
    ("8 orders", 60, 0.3): 0.939,
    ("8 orders", 340, 0.0): 0.939,
    ("8 orders", 340, 0.3): 0.938,
    ("8 orders", 340, 0.9): 0.931,
}
_GRID_ITEMS = (60, 340)
_GRID_KNOW = (0.0, 0.3, 0.9)


def habit_coverage_note(frame: pd.DataFrame) -> str:
    """A sentence naming the rows that fall in a cell of the simulated grid where the Habit* or Excess*
    interval covers less than 0.94: the design (one call per item, or several), the nearer simulated
    item count and the share of items the model knows, estimated as ``Excess* / (1 - Habit*)`` (the
    kappa of the corrected habit's model; between two simulated shares, the worse). Empty when none."""
    if "excess_corrected" not in frame or "blind_items" not in frame or not HABIT_SHORT_CELLS:
        return ""
    flagged = []
    for row in frame.itertuples(index=False):
        h, e, items = row.habit_corrected, row.excess_corrected, row.blind_items
        if not (np.isfinite(h) and np.isfinite(e) and h < 1 and items > 0):
            continue
        know = min(max(e / (1 - h), 0.0), 1.0)
        design = "published" if row.blind_n <= items else "8 orders"
        size = min(_GRID_ITEMS, key=lambda n: abs(math.log(items / n)))
        lower = max(k for k in _GRID_KNOW if k <= know)
        upper = min((k for k in _GRID_KNOW if k >= know), default=_GRID_KNOW[-1])
        worst = min(HABIT_SHORT_CELLS.get((design, size, k), 1.0) for k in (lower, upper))
        if worst < 0.94:
            flagged.append(
                f"{row.model} ({row.set}: {int(items)} items, knows about {know:.0%}; {worst:.2f})"
            )
    if not flagged:
        return ""
    return (
        " Coverage: in the simulated banks nearest these rows (docs/statistics.md) the Habit* or Excess* "
        "interval covered the true value less than 0.94 of the time (as little as the figure in brackets), "
        "so read it as that much too narrow: " + ", ".join(flagged) + "."
    )


def habit_by_n_table(a: Analysis) -> Table:
    """Blind accuracy, habit and excess per option count N (the parts the combined Table 4 weighs)."""
    title = TITLES["habit_by_n"]
    by_n = _at(a.by_n, a.headline_set)
    if by_n.empty:
        return Table("habit_by_n", title, pd.DataFrame(), pd.DataFrame(), "No blind predictions.")
    frame = by_n.drop(columns="set").sort_values(["model", "n_options"]).reset_index(drop=True)
    shown = pd.DataFrame(
        {
            "Model": frame["model"],
            "N": frame["n_options"].map(lambda x: f"{int(x)}"),
            "Items": frame["items"].map(lambda x: f"{int(x)}"),
            "Weight": frame["weight"].map(fmt),
            "Blind": frame["blind_acc"].map(fmt),
            "Habit": frame["habit"].map(fmt),
            "Excess": frame["excess"].map(lambda x: fmt(x, signed=True)),
            "Chance": frame["chance"].map(fmt),
        }
    )
    note = (
        f"Set: {a.headline_set}. Weight = the share of the model's items with N options; Table 4's blind, "
        "habit and excess are the weighted sums of these rows."
    )
    return Table("habit_by_n", title, frame, shown, note)


def table_5(a: Analysis) -> Table:
    g = _at(a.agreement, a.agreement_set)
    if a.gate is None or g.empty:
        return _empty("table5")
    frame = g.drop(columns="set").sort_values("agreement", ascending=False, na_position="last")
    frame = frame[frame["model"] != a.gate.gate_model].reset_index(drop=True)
    if frame.empty:  # never a heading over nothing: say why
        return Table(
            "table5", TITLES["table5"], frame, pd.DataFrame(),
            f"No data: only the gate model ({a.gate.gate_model}) answered the gated items; this table "
            "compares other models with it. List more models under panel.models (docs/panel.md).",
        )  # fmt: skip

    def col(name: str) -> pd.Series:
        return frame[name] if name in frame else pd.Series(np.nan, index=frame.index)

    shown = pd.DataFrame(
        {
            "Model": frame["model"],
            f"Agrees with {a.gate.gate_model}": col("agreement").map(fmt),
            "Expected, independent given the key's slot": col("expected").map(fmt),
            "Agreement - expected [95% CI]": [
                fmt_ci(d, lo, hi, signed=True)
                for d, lo, hi in zip(
                    col("agreement_gap"), col("agreement_lo"), col("agreement_hi"), strict=True
                )
            ],
            "Pairs": col("n_pairs").map(lambda x: "—" if pd.isna(x) else f"{int(x)}"),
            "Accepted": col("blind_accepted").map(fmt),
            "Rejected": col("blind_rejected").map(fmt),
            "Gap [95% CI]": [
                fmt_ci(g, lo, hi, signed=True)
                for g, lo, hi in zip(col("gap"), col("gap_lo"), col("gap_hi"), strict=True)
            ],
            "Gap, chance-adjusted": col("gap_adjusted").map(lambda x: fmt(x, signed=True)),
        }
    )
    where = "all gated items (accepted and rejected)" if a.agreement_set == "all" else a.agreement_set
    note = (
        f"Agreement is measured on {where}: the share of presentations (item, order, labels, phrasing) where "
        "the model picks the gate model's option, over those both answered, each item counting once. "
        "Expected = the agreement of two pickers independent given the key's slot: sum over key slots k of "
        "the share of calls with the key in k x sum over slots s of the model's and the gate model's rates "
        "of picking s when the key is in k, measured on the same presentations, per option count N, "
        "combined by each N's share of the items. It holds for content-blind pickers with any position "
        "habits, shared or opposite, and for models that each know some items independently; agreement "
        "above it points to a shared leak (the same items known by both): the 95% interval of agreement - "
        "expected is a percentile cluster bootstrap over items (2,000 resamples within each N, the null "
        "re-estimated in each; no correction across the models, each row its own test), and an interval "
        "wholly above 0 is that evidence; one that holds 0 cannot tell. "
        "Accepted and Rejected are blind accuracy on each set (Table 3); Gap = rejected - accepted, with no "
        "chance adjustment: the two sets' chance can differ on a mixed bank."
    )
    return Table("table5", TITLES["table5"], frame, shown, note)


def _sweep_table(a: Analysis, name: str, sweep_frame: pd.DataFrame, conditions: Sequence[str]) -> Table:
    rows = _at(sweep_frame, a.detail_set)
    rows = rows[rows["condition"].isin(list(conditions))] if not rows.empty else rows
    if rows.empty:
        return _empty(name)
    spreads = spread(rows)
    wide = rows.pivot_table(index="value", columns=["model", "condition"], values="acc", observed=True)
    wide.loc["Spread"] = spreads.set_index(["model", "condition"])["spread"].reindex(wide.columns).to_numpy()
    frame = wide.copy()
    frame.columns = [f"{m}/{c}" for m, c in frame.columns]
    frame = frame.reset_index()
    shown = frame.copy()
    for c in shown.columns[1:]:
        shown[c] = shown[c].map(fmt)
    shown = shown.rename(columns={"value": name_value(name)})
    note = f"Set: {a.detail_set}; other presentation fields at baseline. Spread = max - min over the values."
    other_line = ""
    if name == "table7" and "other_scheme" in rows:
        other = rows.groupby(["model", "value"], observed=True)["other_scheme"].max()
        other_line = f" Highest other-scheme answer rate: {fmt(float(other.max()))}."
    if rows["value"].nunique() < 2:  # one row repeating Table 3 and a spread of 0: no table, one line
        only = f"{name_value(name).lower()} {rows['value'].iloc[0]}"
        return Table(name, TITLES[name], frame, pd.DataFrame(),
                     f"No data: only one value present ({only}); this table needs {NEEDS[name]}."
                     + other_line)  # fmt: skip
    return Table(name, TITLES[name], frame, shown, note + other_line)


def name_value(name: str) -> str:
    return {"table6": "Phrasing", "table7": "Labels"}[name]


def table_6(a: Analysis) -> Table:
    return _sweep_table(a, "table6", a.phrasing, ("blind",))


def table_7(a: Analysis) -> Table:
    return _sweep_table(a, "table7", a.labels, CONDITIONS)


def table_8(a: Analysis, labels: Sequence[str] | None = None) -> Table:
    f = _at(a.forced, a.detail_set)
    if f.empty:
        return _empty("table8")
    slots = _slots(f, "acc_")
    frame = f.drop(columns="set")
    shown = pd.DataFrame({"Model": [_model_label(a, m) for m in frame["model"]]})
    for i in slots:
        shown[f"Key at {slot_heading(i, labels)}"] = frame[f"acc_{i}"].map(fmt)
    shown["Slot spread"] = frame["spread"].map(fmt)
    shown["Sum"] = frame["sum"].map(fmt)
    shown["Position-free"] = [fmt_ci(*v) for v in frame[["position_free", "pf_lo", "pf_hi"]].to_numpy()]
    shown["Items"] = frame["n_items"].map(lambda x: f"{int(x)}")
    shown["Single-order"] = frame["single_order"].map(fmt)
    note = (
        f"Set: {a.detail_set}. Position-free = the mean over items of each item's accuracy over its N forced "
        "placements (the bank's mean of 1/N when the choice ignores content); 95% item-level interval over "
        "those item means (the beta interval at their effective sample size). Sum = the slot accuracies "
        "summed per N (1 when the choice ignores content). Single-order = blind accuracy on the baseline "
        "orders of the same set."
    )
    if frame["chance"].nunique() > 1 or _mixed(a, a.detail_set):
        note += (
            " Items differ in N: Key-at columns pool the items that have that slot; Sum is combined over N "
            "by each N's share of the items, and chance is the mean of 1/N."
        )
    missing = frame[frame["missing_slots"] > 0] if "missing_slots" in frame else frame.iloc[0:0]
    if not missing.empty:
        note += (
            " Sum leaves out slots with no forced call: "
            + ", ".join(
                f"{m} ({int(k)} slot{'s' if k > 1 else ''})"
                for m, k in zip(missing["model"], missing["missing_slots"], strict=True)
            )
            + "; their Sum is short by those slots' accuracy."
        )
    return Table("table8", TITLES["table8"], frame, shown, note)


def table_9(a: Analysis) -> Table:
    r = _at(a.reasoning, a.detail_set)
    if r.empty:
        return _empty("table9")
    frame = r.drop(columns="set").sort_values(["model", "reasoning"]).reset_index(drop=True)

    def col(name: str) -> pd.Series:
        return frame[name] if name in frame else pd.Series(np.nan, index=frame.index)

    shown = pd.DataFrame(
        {
            "Model": frame["model"],
            "Reasoning": frame["reasoning"],
            "Blind": col("blind_acc").map(fmt),
            "p (blind)": col("p_blind").map(fmt_p),
            "Full": col("full_acc").map(fmt),
            "p (full)": col("p_full").map(fmt_p),
            "Out tok.": col("output_tokens").map(lambda x: "—" if pd.isna(x) else f"{x:.0f}"),
        }
    )
    ref = a.base.reasoning or "direct"
    if frame["reasoning"].nunique() < 2:  # nothing to compare against: no table, one line
        only = frame["reasoning"].iloc[0]
        why = f"No data: only one mode present ({only}); this table needs {NEEDS['table9']}."
        return Table("table9", TITLES["table9"], frame, pd.DataFrame(), why)
    note = f"Set: {a.detail_set}. p: exact McNemar on paired presentations against '{ref}'."
    return Table("table9", TITLES["table9"], frame, shown, note)


def table_10(a: Analysis) -> Table:
    s = a.second_bank
    if s.empty:
        return _empty("table10")
    frame = s.sort_values(["model", "condition"]).reset_index(drop=True)
    shown = pd.DataFrame(
        {
            "Model": frame["model"],
            "Condition": frame["condition"],
            "n": frame["n"].map(lambda x: "0" if pd.isna(x) else f"{int(x)}"),
            "Unparsed": frame["unparsed"].map(lambda x: "0" if pd.isna(x) else f"{int(x)}"),
            "Accuracy [95% CI]": [fmt_ci(*v) for v in frame[["acc", "lo", "hi"]].to_numpy()],
        }
    )
    note = f"Chance is {fmt(float(frame['chance'].mean()))}. n counts responses whose answer parsed."
    return Table("table10", TITLES["table10"], frame, shown, note)


# Fewer models than this and r across them is shown, not tested: with n - 2 <= 3 degrees of freedom one
# model moves r's sign, and the p and the Fisher-z interval rest on a normality no 5 points can check.
MIN_MODELS_TESTED = 6


def correlation_tested(n_models: int) -> bool:
    """Whether r over ``n_models`` models gets a p and an interval (``MIN_MODELS_TESTED``)."""
    return n_models >= MIN_MODELS_TESTED


def untested_line(n_models: int) -> str:
    """Why r over ``n_models`` models carries no p and no interval."""
    return (
        f"r over {n_models} models is not tested (no p, no Fisher-z interval): below "
        f"{MIN_MODELS_TESTED} models a single model can decide r, so the data cannot decide whether blind "
        "and full accuracy go together."
    )


def correlation_table(a: Analysis) -> Table:
    c = a.correlation
    if c.empty or c["n_models"].max() < 3:
        t = _empty("correlation")
        return Table(t.name, t.title, c, t.shown, t.note)
    tested = c["n_models"].map(correlation_tested)
    shown = pd.DataFrame({"Items": c["kind"]})
    if tested.any():
        shown["r [95% CI]"] = [
            fmt_ci(r, lo, hi) if ok else fmt(r)
            for (r, lo, hi), ok in zip(c[["r", "lo", "hi"]].to_numpy(), tested, strict=True)
        ]
        shown["p"] = [fmt_p(p) if ok else "—" for p, ok in zip(c["p"], tested, strict=True)]
    else:
        shown["r"] = c["r"].map(fmt)
    shown["Models"] = c["n_models"].map(str)
    note = (
        f"Set: {a.headline_set}; disjoint halves: blind on one seeded half of the items, full on the other."
    )
    if not tested.all():
        note += " " + untested_line(int(c.loc[~tested, "n_models"].max()))
    if a.correlation_excluded:
        note += (
            f" Left out: {', '.join(a.correlation_excluded)} (the gate model, which selected the items, and "
            "models that read the options alone, whose blind and full answers agree by construction)."
        )
    return Table("correlation", TITLES["correlation"], c, shown, note)


def _mixed(a: Analysis, set_name: str) -> bool:
    by_n = _at(a.by_n, set_name)
    return not by_n.empty and by_n["n_options"].nunique() > 1


def gate_table(a: Analysis) -> Table:
    if a.gate is None:
        return _empty("gate")
    g = a.gate
    counts = g.counts
    n_orders = int(counts["n_orders"].max())
    observed = np.bincount(counts["solved"], minlength=n_orders + 1)
    expected = stats.chance_histogram(counts["n_options"], counts["n_orders"])
    consistent = stats.consistent_histogram(counts["n_options"], counts["n_orders"])
    frame = pd.DataFrame(
        {
            "solved": np.arange(n_orders + 1),
            "observed": observed,
            "expected": expected,
            "expected_consistent": consistent,
        }
    )
    ns = sorted(int(n) for n in counts["n_options"].unique())
    label = (
        f"Expected, redrawing picker: Binomial({2 * ns[0]}, 1/{ns[0]})"
        if len(ns) == 1
        else "Expected, redrawing picker: mixture of Binomial(2N, 1/N)"
    )
    shown = pd.DataFrame(
        {
            "Solved blind (of orders)": frame["solved"].map(str),
            "Items": frame["observed"].map(str),
            label: frame["expected"].map(lambda x: f"{x:.1f}"),
            "Expected, consistent picker: 1/N at all orders": frame["expected_consistent"].map(
                lambda x: f"{x:.1f}"
            ),
        }
    )
    if g.false_rejection is not None:
        rule = (
            "k per N chosen so a content-blind picker redrawing in each order is rejected with probability "
            f"at most {g.false_rejection}"
        )
    else:
        rule = f"k = {g.k} for every N"
    note = (
        f"Gate model {g.gate_model}, {rule}: {g.describe_thresholds()}. {len(g.accepted)} accepted, "
        f"{len(g.rejected)} rejected, retained share {fmt(g.retained_share)}. {gate_nulls(g).sentence()}"
        " A redrawing picker draws anew in each order; a consistent one picks the same option in every "
        "order, so it solves an item in all its orders (1/N of the items) or in none."
    )
    if g.untestable:
        note += (
            f" {len(g.untestable)} items cannot be rejected at this rate (too few options for any count of "
            "their orders to be rare by chance); they are reported as the set 'untestable', not accepted."
        )
    if len(ns) > 1:
        note += (
            " Expected counts are the sum over items of Binomial(2N, 1/N) for each item's own N, not one "
            "Binomial at the mean of 1/N."
        )
    failed = int(counts["n_failed"].sum()) if "n_failed" in counts else 0
    if failed:
        note += f" {failed} failed calls of the gate model count as not solved."
    return Table("gate", TITLES["gate"], frame, shown, note)


@dataclass(frozen=True)
class TableInputs:
    """What the builders read: the analysis, the baselines' picks, the bank's items (the bank profile is
    built only with them) and why Table 2 has no lexical row (``statutes.language``)."""

    analysis: Analysis
    baselines: pd.DataFrame | None = None
    items: Sequence[Item] | None = None
    lexical_absent: str | None = None
    slot_labels: Sequence[str] | None = None  # the bank's label of each slot (None: not known, Latin)

    @property
    def chance(self) -> float:
        a = self.analysis
        return float(a.summary["chance"].mean()) if not a.summary.empty else 0.25


@dataclass(frozen=True)
class TableSpec:
    """One table of the report and the metrics it contributes.

    ``needs`` completes the empty table's note ("No data: this table needs ..."); ``build`` returns the
    table, or None where it is not built (the bank profile without items). Per-model metric kinds (each
    a column of the analysis frame named): ``set_kinds`` -> ``{kind}/{model}/{set}`` from the summary,
    ``detail_kinds`` -> ``{kind}/{model}/{detail set}`` from the forced-placement frame, ``pair_kinds``
    -> ``{kind}/{model}`` from the agreement with the gate model. ``metrics``: the table's other figures.
    ``summary_metrics``: its figures from the baselines' ``summary.csv`` (one row per surface strategy),
    which the report and the audit both take through ``summary_figures``; ``facts_metrics``: its figures
    from the bank's facts (``facts.json``, ``auditing.surface.FACT_KEYS``), taken through ``facts_figures``.
    """

    key: str
    title: str
    build: Callable[[TableInputs], Table | None]
    needs: str = ""
    set_kinds: tuple[str, ...] = ()
    detail_kinds: tuple[str, ...] = ()
    pair_kinds: tuple[str, ...] = ()
    metrics: Callable[[Analysis], dict[str, float]] | None = None
    summary_metrics: Callable[[pd.DataFrame], dict[str, float]] | None = None
    facts_metrics: Callable[[Mapping[str, Any]], dict[str, float]] | None = None

    @property
    def kinds(self) -> tuple[str, ...]:
        return self.set_kinds + self.detail_kinds + self.pair_kinds


def _gate_metrics(a: Analysis) -> dict[str, float]:
    if a.gate is None:
        return {}
    return {
        "gate/retained_share": rounded(a.gate.retained_share),
        "gate/n_accepted": float(len(a.gate.accepted)),
        "gate/n_rejected": float(len(a.gate.rejected)),
    }


def _surface_metrics(summary: pd.DataFrame) -> dict[str, float]:
    """``table2/<strategy>``: each surface strategy's accuracy on all usable items, as Table 2 shows it."""
    return {f"table2/{row.strategy}": rounded(float(row.accuracy)) for row in summary.itertuples()}


def _length_metrics(facts: Mapping[str, Any]) -> dict[str, float]:
    """``bank/key_minus_distractor_chars``: the key's mean length minus the distractors', under Table 2."""
    return {"bank/key_minus_distractor_chars": rounded(float(facts["key_minus_distractor_chars"]))}


def _correlation_metrics(a: Analysis) -> dict[str, float]:
    return {
        metric_name("r", row["kind"].replace(" ", "_")): rounded(row["r"])
        for row in a.correlation.to_dict(orient="records")
        if np.isfinite(row["r"])
    }


# The registry, in report order.
TABLES: tuple[TableSpec, ...] = (
    TableSpec(
        "gate", "Gate: items by blind-solved count against two pickers that read nothing",
        lambda i: gate_table(i.analysis), needs="a gate (the gate model's blind calls over all orders)",
        metrics=_gate_metrics,
    ),
    TableSpec(
        "table2", "Table 2: Surface strategies (accuracy without reasoning over the question)",
        lambda i: table_2(i.baselines, chance=i.chance, absent=i.lexical_absent),
        needs="a baselines frame (columns strategy, item_id, picked_option, correct)",
        summary_metrics=_surface_metrics, facts_metrics=_length_metrics,
    ),
    TableSpec(
        "surface_gate", "Table 2 past the gate: each surface strategy on the accepted and the rejected items",
        lambda i: surface_gate_table(i.baselines, i.analysis), needs="a baselines frame and a gate",
    ),
    TableSpec(
        "bank_profile", "Bank profile",
        lambda i: bank_profile(i.items, i.slot_labels) if i.items is not None else None,
    ),
    TableSpec(
        "table3",
        "Table 3: Blind (options only) and full accuracy, on all items and on each side of the gate",
        lambda i: table_3(i.analysis), needs="blind or full predictions on the baseline presentation",
        # blind_p_holm: blind accuracy above chance, Holm over the models (the opening quotes it)
        set_kinds=("blind_acc", "blind_lo", "blind_hi", "full_acc", "blind_p_holm"),
    ),
    TableSpec(
        "table4", "Table 4: Positional habit and excess over it, on all items and on the headline set",
        lambda i: table_4(i.analysis, i.slot_labels), needs="blind predictions on the baseline presentation",
        set_kinds=("habit", "excess"),
    ),
    TableSpec("habit_by_n", "Habit and excess per option count", lambda i: habit_by_n_table(i.analysis)),
    TableSpec(
        "table5", "Table 5: Agreement with the gate model's blind pick, and the accepted/rejected gap",
        lambda i: table_5(i.analysis),
        needs="a gate (the gate model's blind calls over all orders) and blind calls of other models",
        pair_kinds=("agreement", "expected", "gap"),
    ),
    TableSpec(
        "table6", "Table 6: Blind accuracy under each prompt phrasing", lambda i: table_6(i.analysis),
        needs="blind predictions under two or more phrasings (phrasing sweep)",
    ),
    TableSpec(
        "table7", "Table 7: Accuracy under each label scheme", lambda i: table_7(i.analysis),
        needs="predictions under two or more label schemes (label sweep)",
    ),
    TableSpec(
        "table8", "Table 8: Forced placement: blind solvability with position bias removed by construction",
        lambda i: table_8(i.analysis, i.slot_labels),
        needs="forced-placement predictions (blind rows with forced_slot set)",
        detail_kinds=("position_free",),
    ),
    TableSpec(
        "table9", "Table 9: Reasoning modes against direct answer", lambda i: table_9(i.analysis),
        needs="predictions under two or more reasoning modes, one of them the baseline's",
    ),
    TableSpec(
        "table10", "Table 10: The blind probe on a second bank", lambda i: table_10(i.analysis),
        needs="predictions on a second bank (e.g. LEXam)",
    ),
    TableSpec(
        "correlation", "Blind vs full accuracy across models (Pearson r, Fisher-z 95% interval)",
        lambda i: correlation_table(i.analysis),
        needs="blind and full accuracy of at least three models on the same items",
        metrics=_correlation_metrics,
    ),
)  # fmt: skip
TITLES = {spec.key: spec.title for spec in TABLES}
NEEDS = {spec.key: spec.needs for spec in TABLES if spec.needs}
# The per-model metric kinds, as reports/metrics.json writes them and MLflow names them by role
SET_KINDS = tuple(k for spec in TABLES for k in spec.set_kinds)  # ``{kind}/{model}/{set}``
DETAIL_KINDS = tuple(k for spec in TABLES for k in spec.detail_kinds)  # ``{kind}/{model}/{detail set}``
PAIR_KINDS = tuple(k for spec in TABLES for k in spec.pair_kinds)  # ``{kind}/{model}``
PER_MODEL_KINDS = SET_KINDS + DETAIL_KINDS  # the three-part names


def summary_figures(summary: pd.DataFrame) -> dict[str, float]:
    """The figures the tables of ``TABLES`` take from the baselines' summary (``table2/<strategy>``)."""
    out: dict[str, float] = {}
    for spec in TABLES:
        if spec.summary_metrics is not None:
            out |= spec.summary_metrics(summary)
    return out


def facts_figures(facts: Mapping[str, Any]) -> dict[str, float]:
    """The figures the tables of ``TABLES`` take from the bank's facts (``bank/key_minus_distractor_chars``
    from the baselines' ``facts.json`` or the audit's bank profile)."""
    out: dict[str, float] = {}
    for spec in TABLES:
        if spec.facts_metrics is not None:
            out |= spec.facts_metrics(facts)
    return out


def build_tables(
    a: Analysis,
    *,
    baselines: pd.DataFrame | None = None,
    items: Sequence[Item] | None = None,
    lexical_absent: str | None = None,
    slot_labels: Sequence[str] | None = None,
) -> dict[str, Table]:
    """Every table of ``TABLES``, in report order: gate, Tables 2-10, correlation (and the bank profile
    with items). ``lexical_absent``: why Table 2 has no lexical row (``statutes.language``);
    ``slot_labels``: the bank's own label of each slot, which name slots for a reader (the bank profile,
    Tables 4 and 8; metric names stay Latin)."""
    inputs = TableInputs(a, baselines=baselines, items=items, lexical_absent=lexical_absent,
                         slot_labels=slot_labels)  # fmt: skip
    tables = [spec.build(inputs) for spec in TABLES]
    return {t.name: t for t in tables if t is not None}


def write_tables(out_dir: str | Path, tables: Mapping[str, Table]) -> dict[str, Path]:
    """Write ``{name}.csv`` and ``{name}.md`` per table, all of them in ``tables.md``, and
    ``tables.json`` (each table's ``cells``, which the HTML report shows), each atomically."""
    out = Path(out_dir)
    paths: dict[str, Path] = {}
    for name, t in tables.items():
        csv = out / f"{name}.csv"
        write_text(csv, csv_text(t.frame) if not t.frame.empty else f"# {t.note}\n")
        md = out / f"{name}.md"
        write_text(md, t.markdown())
        paths[f"{name}.csv"], paths[f"{name}.md"] = csv, md
    combined = out / "tables.md"
    write_text(combined, "\n".join(t.markdown() for t in tables.values()))
    paths["tables.md"] = combined
    cells = out / "tables.json"
    write_text(cells, json.dumps([t.cells() for t in tables.values()], ensure_ascii=False, indent=1) + "\n")
    paths["tables.json"] = cells
    return paths


_UNSAFE = re.compile(r"[^A-Za-z0-9_\-./ ]")


def metric_name(*parts: str) -> str:
    """``kind/model/set`` with characters MLflow rejects (e.g. ':' in Bedrock ids) replaced by '_'."""
    return "/".join(_UNSAFE.sub("_", str(p)) for p in parts)


PANEL_PREFIX = "panel"


def metric_key(kind: str, model: str, set_name: str | None = None, *, own: str | None = None) -> str:
    """A metric's name. Without ``own``: ``kind/model[/set]`` (the analysis' plain names). With ``own``
    (the run's probed model): that model's metrics carry no model name (``blind_acc/all``), so runs of
    different models share a column, and every other model's are ``panel/<model>/kind[/set]``."""
    tail = (set_name,) if set_name is not None else ()
    if own is None:
        return metric_name(kind, model, *tail)
    if metric_name(model) == metric_name(own):
        return metric_name(kind, *tail)
    return metric_name(PANEL_PREFIX, model, kind, *tail)


def headline_metrics(a: Analysis, *, model: str | None = None) -> dict[str, float]:
    """Flat metrics, rounded exactly as the tables show them, for MLflow and DVC: what each ``TableSpec``
    of ``TABLES`` contributes.

    Names (``model`` None): ``{kind}/{model}/{set}`` for ``SET_KINDS`` (blind_acc, blind_lo, blind_hi,
    full_acc, blind_p_holm, habit, excess), ``{kind}/{model}/{detail set}`` for ``DETAIL_KINDS``
    (position_free), ``{kind}/{model}`` for ``PAIR_KINDS`` (agreement, expected: agreement under
    independence, gap), ``gate/{retained_share,n_accepted,n_rejected}``, ``r/{same_items,disjoint_halves}``.
    With ``model`` (the run's probed model, as the pipeline writes ``reports/metrics.json``), see
    :func:`metric_key`: ``blind_acc/all`` for it and ``panel/<other>/blind_acc/all`` for the others.
    """
    out: dict[str, float] = {}
    for row in a.summary.to_dict(orient="records"):
        for kind in SET_KINDS:
            value = row.get(kind, math.nan)
            if value is not None and np.isfinite(value):
                out[metric_key(kind, row["model"], row["set"], own=model)] = rounded(value)
    for row in _at(a.forced, a.detail_set).to_dict(orient="records"):
        for kind in DETAIL_KINDS:
            out[metric_key(kind, row["model"], a.detail_set, own=model)] = rounded(row[kind])
    for row in _at(a.agreement, a.agreement_set).to_dict(orient="records"):
        for kind in PAIR_KINDS:
            if np.isfinite(row.get(kind, math.nan)):
                out[metric_key(kind, row["model"], own=model)] = rounded(row[kind])
    for spec in TABLES:
        if spec.metrics is not None:
            out |= spec.metrics(a)
    return out
