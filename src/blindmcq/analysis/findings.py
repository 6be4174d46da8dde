"""The report's opening: a few plain sentences saying what this run shows and how sure it is.

Every sentence is generated from the analysis (the same rounded numbers as the tables); nothing here is
written for one particular result. "Above chance" means the 95% interval's lower bound is above the
chance rate (mean of 1/N over the items); "below" its upper bound is under it; otherwise the sentence
says the interval includes chance.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from blindmcq.analysis.gate import gate_nulls
from blindmcq.analysis.metrics import Analysis
from blindmcq.analysis.tables import fmt, fmt_ci, fmt_p
from blindmcq.analysis.verdict import ALPHA, detectable_clause


def _row(a: Analysis, model: str, set_name: str) -> pd.Series | None:
    s = a.summary
    if s.empty:
        return None
    rows = s[(s["set"] == set_name) & (s["model"] == model)]
    return None if rows.empty else rows.iloc[0]


def _blind(row: pd.Series) -> str:
    return fmt_ci(row["blind_acc"], row["blind_lo"], row["blind_hi"])


def _full(row: pd.Series) -> str:
    return fmt_ci(row.get("full_acc", np.nan), row.get("full_lo", np.nan), row.get("full_hi", np.nan))


def _versus_chance(row: pd.Series, prefix: str = "blind") -> str:
    lo, hi, chance = row[f"{prefix}_lo"], row[f"{prefix}_hi"], row["chance"]
    if not (np.isfinite(lo) and np.isfinite(hi)):
        return "unknown"
    return "above" if lo > chance else "below" if hi < chance else "within"


def _names(models: Sequence[str]) -> str:
    models = list(models)
    return models[0] if len(models) == 1 else ", ".join(models[:-1]) + " and " + models[-1]


def findings(
    a: Analysis,
    *,
    model: str,
    labels: Mapping[str, str] | None = None,
    variants: Sequence[str] = (),
    surface_gate: pd.DataFrame | None = None,
    absent: str | None = None,
    bank: Sequence[str] = (),
) -> list[str]:
    """Markdown lines: the opening paragraph(s), and for ``variants`` (the probed model under other
    scorings, e.g. cloze) a small table of its blind and full accuracy under each. ``labels`` describe
    models in prose (e.g. ``{"gemma3-270m": "letter scoring"}``). ``surface_gate`` (the surface
    strategies on each side of the gate, ``leaks.surface_past_gate``) adds what the gate left behind;
    ``absent`` (``statutes.language``) says why lexical search was not run. ``bank`` (``verdict.
    bank_verdict``, from Table 2 alone) opens the report: the bank's answer, whatever the panel."""
    labels = dict(labels or {})
    opening = [f"**The bank.** {' '.join(bank)}", ""] if bank else []
    if a.summary.empty:
        nothing = "This run has no predictions on the baseline presentation, so it shows nothing yet."
        return [*opening, nothing, ""]

    def name(m: str) -> str:
        return f"{m} ({labels[m]})" if m in labels else m

    everything = a.summary[a.summary["set"] == "all"].dropna(subset=["blind_acc"])
    n_items = int(everything["blind_items"].max()) if "blind_items" in everything else 0
    chance = float(everything["chance"].mean())
    paragraph = [
        "**The models.**" if bank else "",
        f"This run asked {len(everything)} models {n_items} items each, once with the question (full) and "
        f"with the options alone (blind); chance is {fmt(chance)}.",
    ]
    holm = everything["blind_p_holm"] if "blind_p_holm" in everything else everything["blind_lo"] * np.nan
    above = everything[(everything["blind_lo"] > everything["chance"]) & (holm < 0.05)].sort_values(
        "blind_acc", ascending=False
    )
    test = f"one-sided exact binomial on items, Holm over the {len(everything)} models"
    if not above.empty:
        listed = "; ".join(
            f"{name(r['model'])} {_blind(r)} (Holm p {fmt_p(r['blind_p_holm'])})" for _, r in above.iterrows()
        )
        paragraph.append(
            f"On all items, {len(above)} of them {'answers' if len(above) == 1 else 'answer'} blind above "
            f"chance ({test}; its 95% interval wholly above it): "
            f"{listed}. Options alone give these answers away."
        )
    else:
        best = everything.sort_values("blind_acc", ascending=False).iloc[0]
        raw = best.get("blind_p", np.nan)
        caveat = (
            " (its unadjusted 95% interval excludes chance; the Holm-adjusted test, which is the claim, does "
            "not)"
            if best["blind_lo"] > best["chance"]
            else ""
        )
        # Holm's first step tests at alpha / m: what the best model had to reach
        clause = detectable_clause(int(best["blind_items"]), float(best["chance"]), ALPHA / len(everything))
        paragraph.append(
            f"No model answers blind above chance on all items ({test}); the best, {name(best['model'])}, "
            f"reads {_blind(best)}, p {fmt_p(raw)}, Holm p {fmt_p(best.get('blind_p_holm', np.nan))}"
            f"{caveat}; {clause}."
        )
    own = _row(a, model, "all")
    if own is not None and "habit" in own and np.isfinite(own.get("habit", np.nan)):
        paragraph.append(
            f"The probed model, {name(model)}, answers {_blind(own)} blind and {_full(own)} with the "
            f"question; its answer-position habit alone earns {fmt(own['habit'])}, an excess of "
            f"{fmt(own['excess'], signed=True)}."
        )
    if absent:
        paragraph.append(f"There is no lexical row (Table 2, panel): {absent}")
    lines = [*opening, " ".join(p for p in paragraph if p), ""]

    if a.gate is not None:
        g = a.gate
        others = [m for m in everything["model"] if m != g.gate_model]
        total = len(g.accepted) + len(g.rejected) + len(g.untestable)
        gate_par = [
            f"The gate, built on {name(g.gate_model)}, rejects an item it answers blind in at least "
            f"k of the item's orders ({g.describe_thresholds()}): {len(g.rejected)} of {total} items "
            f"rejected, {len(g.accepted)} accepted.",
            gate_nulls(g).sentence(),
        ]
        rows = [(m, _row(a, m, "accepted"), _row(a, m, "rejected")) for m in others]
        rows = [(m, acc, rej) for m, acc, rej in rows if acc is not None]
        if rows:
            cells = []
            for m, acc, rej in rows:
                cell = f"{name(m)} {_blind(acc)}"
                if rej is not None and np.isfinite(rej["blind_acc"]):
                    cell += f" (rejected items {fmt(rej['blind_acc'])})"
                cells.append(cell)
            gate_par.append("On the accepted items the other models answer blind: " + "; ".join(cells) + ".")
            open_to = [m for m, acc, _ in rows if _versus_chance(acc) == "above"]
            if open_to:
                gate_par.append(
                    f"The gate stays open to {_names(open_to)}: on the items it accepted, their intervals "
                    "still lie above chance, so a bank filtered with one model still leaks to another."
                )
            else:
                # carried over: the model solves the rejected items above chance, not the accepted ones
                closed = [m for m, _, rej in rows if rej is not None and _versus_chance(rej) == "above"]
                n_accepted = min(int(acc["blind_items"]) for _, acc, _ in rows)
                # the check is the 95% interval's lower side: a one-sided test at 0.025
                clause = detectable_clause(
                    n_accepted, float(rows[0][1]["chance"]), ALPHA / 2,
                    test="a one-sided exact binomial at 0.025 (the 95% interval's lower side)",
                )  # fmt: skip
                gate_par.append(
                    "No other model answers the accepted items above chance (its 95% interval wholly above "
                    f"it); {clause}"
                    + (
                        f". {_names(closed)} answer the rejected items above chance, so the leaks they find "
                        "overlap the gate's (Table 5's gap); whether the gate carries over to them wholly, "
                        "this sample cannot decide."
                        if closed
                        else "."
                    )
                )
        if surface_gate is not None:
            gate_par.append(past_gate_sentence(surface_gate, name(g.gate_model)))
        lines += [" ".join(p for p in gate_par if p), ""]

    slots = a.failure_slots
    if not slots.empty and slots["dependent"].any():
        named = ", ".join(
            f"{name(r.model)} ({r.failed} of {r.calls} blind calls failed, Holm p {fmt_p(r.p_holm)})"
            for r in slots[slots["dependent"]].itertuples()
        )
        lines += [
            f"Warning: failed calls depend on where the key is shown for {named} (chi-square test of failed "
            "x key slot, Holm over models): dropping or counting them biases those models' accuracy, habit "
            "and excess.",
            "",
        ]

    widths = (everything["blind_hi"] - everything["blind_lo"]).dropna()
    if not widths.empty:
        half = float(widths.max()) / 2
        lines += [
            f"How sure: each blind figure rests on {n_items} items, and its 95% interval is "
            f"{fmt(float(widths.min()))} to {fmt(float(widths.max()))} wide (up to ±{fmt(half)}), so "
            "differences between models smaller than that are not resolved; more items (`probe.sample`) "
            "narrow the intervals.",
            "",
        ]

    present = [m for m in [model, *variants] if _row(a, m, "all") is not None]
    if len(present) > 1:
        lines += [
            f"{model} under each scoring (all items; cloze ranks each option's text by its "
            "log-likelihood, so it is position-free by construction):",
            "",
            "| Model | Scoring | Blind | Full |",
            "|---|---|---|---|",
        ]
        for m in present:
            r = _row(a, m, "all")
            lines.append(f"| {m} | {labels.get(m, '')} | {_blind(r)} | {_full(r)} |")
        lines.append("")
    return lines


def past_gate_sentence(frame: pd.DataFrame, gate_model: str) -> str:
    """What the accepted items still give away by surface (``leaks.surface_past_gate``), naming its
    test and correction; empty without such a table."""
    accepted = frame[frame["set"] == "accepted"] if not frame.empty else frame
    if accepted.empty:
        return ""
    n_items, scanned = int(accepted["n"].max()), len(accepted)
    test = f"exact binomial on items against chance, Holm over {scanned} strategies and both directions"
    leaks = accepted[accepted["leaks"].astype(bool)].sort_values("acc", ascending=False)
    reverse = accepted[accepted["reversed"].astype(bool)]
    if leaks.empty:  # Holm's first step: alpha over the strategies and both directions
        chance = float(accepted["chance"].mean()) if "chance" in accepted else float("nan")
        clause = detectable_clause(n_items, chance, ALPHA / (2 * scanned)) if chance == chance else ""
        return (
            f"Past the gate, no surface strategy finds the key on the {n_items} accepted items above "
            f"chance ({test})" + (f"; {clause}." if clause else ".")
        )
    listed = "; ".join(
        f"`{r.strategy}` {fmt_ci(r.acc, r.lo, r.hi)} (Holm p {fmt_p(r.holm_above)})"
        for r in leaks.itertuples()
    )
    sentence = (
        f"Past the gate, built on {gate_model}, a surface leak remains on the {n_items} items it accepts: "
        f"{listed}, above chance ({test})"
    )
    if not reverse.empty:
        below = ", ".join(f"`{r.strategy}` {fmt_ci(r.acc, r.lo, r.hi)}" for r in reverse.itertuples())
        sentence += (
            f", while {below} {'falls' if len(reverse) == 1 else 'fall'} below chance there: the gate "
            "selected on that surface feature and left its inverse behind"
        )
    return sentence + "."
