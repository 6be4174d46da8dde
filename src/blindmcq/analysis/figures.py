"""Figures 1-4 of the paper as PNG (matplotlib, Agg), each readable on its own: title, axis labels,
chance line, 95% intervals. A figure without data still renders, saying what it needs. Layout is
matplotlib's constrained layout, so titles, axis labels and tick labels never run into each other; point
labels (Figure 2) are placed so that no two overlap (``place_labels``).
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.text import Annotation

from blindmcq import stats
from blindmcq.analysis.gate import GateResult, gate_nulls
from blindmcq.analysis.metrics import Analysis
from blindmcq.analysis.tables import NEEDS, correlation_tested, slot_name
from blindmcq.atomic import atomic_path
from blindmcq.datasets.items import Item
from blindmcq.surface import chars

DPI = 150
OBSERVED, EXPECTED, POINTS = "#2b6cb0", "#c0c0c0", "#c53030"


def save(fig: Figure, path: str | Path) -> Path:
    """Write a PNG atomically and close the figure."""
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png", dpi=DPI, bbox_inches="tight")
    plt.close(fig)
    return Path(path)


def _placeholder(title: str, needs: str) -> Figure:
    fig, ax = plt.subplots(figsize=(6, 3), layout="constrained")
    ax.set_title(title)
    ax.text(0.5, 0.5, f"No data: this figure needs\n{needs}.", ha="center", va="center", wrap=True)
    ax.set_axis_off()
    return fig


def figure_1(gate: GateResult | None) -> Figure:
    """Items by blind-solved count over the orders, beside two nulls that read nothing: a picker redrawing
    in each order (the mixture of Binomial(2N, 1/N) over items; one Binomial when every item has the same
    N) and a consistent picker (the same option in every order: 1/N of the items solved in all orders)."""
    title = "Figure 1: How often each item is answered blind"
    if gate is None or gate.counts.empty:
        return _placeholder(title, NEEDS["gate"])
    counts = gate.counts
    n_orders = int(counts["n_orders"].max())
    observed = np.bincount(counts["solved"], minlength=n_orders + 1)
    expected = stats.chance_histogram(counts["n_options"], counts["n_orders"])
    consistent = stats.consistent_histogram(counts["n_options"], counts["n_orders"])
    x = np.arange(n_orders + 1)
    fig, ax = plt.subplots(figsize=(7.5, 4.2), layout="constrained")
    w = 0.28
    ax.bar(x - w, observed, w, color=OBSERVED, label=f"observed ({gate.gate_model})")
    ax.bar(x, expected, w, color=EXPECTED, edgecolor="black", label=chance_label(counts))
    ax.bar(
        x + w, consistent, w, color="white", edgecolor="black", hatch="//",
        label="consistent picker: same option in every order, 1/N of items at all orders",
    )  # fmt: skip
    for xi, o, e in zip(x, observed, expected, strict=True):
        ax.annotate(f"{o}", (xi - w, max(o, 0.05)), ha="center", va="bottom", fontsize=7)
        ax.annotate(f"{e:.1f}", (xi, max(e, 0.05)), ha="center", va="bottom", fontsize=7, color="dimgray")
    ax.set_yscale("log")
    ax.set_ylim(0.05, max(observed.max(), expected.max(), consistent.max()) * 3)
    ks = sorted({k for k in gate.thresholds.values() if k is not None} or ({gate.k} if gate.k else set()))
    for k in ks:  # one line per distinct threshold over the option counts present
        ns = [n for n, kn in sorted(gate.thresholds.items()) if kn == k]
        ax.axvline(k - 0.5, color="black", linestyle="--", linewidth=1)
        which = f" (N={','.join(map(str, ns))})" if len(ks) > 1 else ""
        ax.text(k - 0.42, 0.07, f"rejected at >= {k}{which}", fontsize=8, rotation=90, va="bottom")
    ax.set_xticks(x)
    ax.set_xlabel(f"orders answered correctly with the question hidden (of {n_orders})")
    ax.set_ylabel("items (log scale)")
    ax.set_title(
        f"{title}\n{len(counts)} items; {len(gate.rejected)} rejected, {len(gate.accepted)} accepted"
        + (f", {len(gate.untestable)} cannot be rejected" if gate.untestable else "")
        + f"\n{lead_null(gate)}",
        fontsize=9,
    )
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1))
    return fig


def lead_null(gate: GateResult) -> str:
    """The null the figure's gate is read against, and what it expects (``gate.gate_nulls``)."""
    nulls = gate_nulls(gate)
    if nulls.deterministic:
        e, p = nulls.consistent[0], nulls.p_holm[1]
        which = f"same option in every order on {nulls.same_pick:.0%} of items: consistent picker"
    else:
        e, p = nulls.redraw[0], nulls.p_holm[0]
        which = "redrawing picker" + (" (same picks not recorded)" if math.isnan(nulls.same_pick) else "")
    shown = "<.001" if p < 0.001 else f"{p:.3f}"
    return f"null: {which}, {e:.1f} rejections expected; one-sided exact binomial, Holm p {shown}"


def interval_kind(frame: pd.DataFrame) -> str:
    """How the bars were computed: Wilson over calls, or item-level where items have several calls."""
    kinds = {str(v) for c in ("blind_ci", "full_ci", "ci") if c in frame for v in frame[c].dropna()}
    if kinds == {"wilson"}:
        return "Wilson intervals"
    if kinds == {"item-level"}:
        return "item-level intervals"
    return "intervals (Wilson, or item-level with several calls per item)"


def chance_text(chance: float) -> str:
    """Chance as the fraction it is (``1/16``, never a rounded ``0.06``), or 3 significant digits when it is
    a mixture of option counts."""
    for n in range(2, 101):
        if abs(chance - 1 / n) < 1e-9:
            return f"1/{n}"
    return f"{chance:.3g}"


def chance_label(counts: pd.DataFrame) -> str:
    """``redrawing picker: Binomial(8, 1/4)``, or the mixture over the option counts present."""
    ns = sorted(int(n) for n in counts["n_options"].unique())
    if len(ns) == 1:
        return f"redrawing picker: Binomial({2 * ns[0]}, 1/{ns[0]})"
    return "redrawing picker: mixture of Binomial(2N, 1/N), N = " + ", ".join(map(str, ns))


def figure_2(a: Analysis) -> Figure:
    """Blind against full accuracy per model (headline set), 95% bars on both axes, r annotated."""
    title = "Figure 2: Blind vs full accuracy"
    s = a.summary
    s = s[s["set"] == a.headline_set] if not s.empty else s
    if s.empty or "full_acc" not in s or s["full_acc"].isna().all() or s["blind_acc"].isna().all():
        return _placeholder(title, "blind and full predictions on the baseline presentation")
    s = s.dropna(subset=["blind_acc", "full_acc"])
    chance = float(s["chance"].mean())
    fig, ax = plt.subplots(figsize=(8.5, 5.5), layout="constrained")
    gate_model = a.gate.gate_model if a.gate is not None else None
    everything = a.summary[a.summary["set"] == "all"].set_index("model") if a.headline_set != "all" else None
    moved = False
    for row in s.itertuples(index=False):  # the gate's effect: each model from all items to the headline set
        if everything is None or row.model not in everything.index:
            continue
        before = everything.loc[row.model]
        if not (math.isfinite(before["full_acc"]) and math.isfinite(before["blind_acc"])):
            continue
        ax.annotate(
            "", xy=(row.full_acc, row.blind_acc), xytext=(before["full_acc"], before["blind_acc"]),
            arrowprops={"arrowstyle": "->", "color": "lightgray", "linewidth": 1},
        )  # fmt: skip
        ax.plot(before["full_acc"], before["blind_acc"], "o", color="lightgray", markersize=4)
        moved = True
    for row in s.itertuples(index=False):
        is_gate = row.model == gate_model
        ax.errorbar(
            row.full_acc,
            row.blind_acc,
            xerr=[[row.full_acc - row.full_lo], [row.full_hi - row.full_acc]],
            yerr=[[row.blind_acc - row.blind_lo], [row.blind_hi - row.blind_acc]],
            fmt="s" if is_gate else "o",
            mfc="white" if is_gate else OBSERVED,
            color=OBSERVED,
            capsize=2,
        )
    ax.axhline(chance, color="gray", linestyle="--", linewidth=1, label=f"chance {chance_text(chance)}")
    ax.axvline(chance, color="gray", linestyle=":", linewidth=1)
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_xlabel(f"full accuracy (question shown), {a.headline_set} items")
    ax.set_ylabel(f"blind accuracy (options only), {a.headline_set} items")
    lines = []
    for row in a.correlation.itertuples(index=False):
        if not math.isfinite(row.r):
            continue
        if correlation_tested(int(row.n_models)):
            ci = f" [{row.lo:.2f}, {row.hi:.2f}]" if math.isfinite(row.lo) else ""
            lines.append(f"r = {row.r:.3f}{ci} ({row.kind}, {row.n_models} models)")
        else:  # analysis.tables.MIN_MODELS_TESTED: shown, not tested
            lines.append(f"r = {row.r:.3f} ({row.kind}, {row.n_models} models: too few to test)")
    single = s["model"].nunique() == 1
    if single:  # what one model allows: its point against chance (and the gate's effect), no correlation
        lines = [f"one model ({s['model'].iloc[0]}): its blind and full accuracy against chance;",
                 "r across models needs 3 or more models"]  # fmt: skip
    elif not lines:
        lines.append("r not defined for fewer than 3 models")
    ax.text(0.02, 0.98, "\n".join(lines), transform=ax.transAxes, va="top", fontsize=8)
    ax.set_title(
        f"{title}{' (one model)' if single else ''}\nbars: 95% {interval_kind(s)}"
        + (f"; gate model {gate_model} hollow, not in r" if gate_model else "")
        + ("; gray: all items, arrow to the gate's set" if moved else ""),
        fontsize=10,
    )
    # each point carries a number and the key beside the axes names it: names written at the points ran
    # into each other where models sit close ("longest" on "most-words")
    rows = list(s.itertuples(index=False))
    key = [
        Line2D([], [], linestyle="none", marker=f"${i}$", color="black", markersize=6,
               label=f"{r.model}{' (gate)' if r.model == gate_model else ''}")
        for i, r in enumerate(rows, start=1)
    ]  # fmt: skip
    handles, names = ax.get_legend_handles_labels()
    ax.legend([*handles, *key], [*names, *(h.get_label() for h in key)], fontsize=7, loc="upper left",
              bbox_to_anchor=(1.02, 1), borderaxespad=0, title="models", title_fontsize=8)  # fmt: skip
    place_labels(ax, [(r.full_acc, r.blind_acc, str(i)) for i, r in enumerate(rows, start=1)])
    return fig


def _overlaps(box: Any, boxes: Sequence[Any]) -> bool:
    return any(box.overlaps(other) for other in boxes)


def place_labels(ax: Any, points: Sequence[tuple[float, float, str]], fontsize: float = 7) -> list[Any]:
    """Label each point so that no two labels overlap: each label goes to the first free place beside its
    point (right, then left, stepping up and down by a line), checked in display units after the layout
    is fixed; points at one spot share one label. Returns the label artists."""
    fig = ax.figure
    fig.canvas.draw()  # the constrained layout settles here; it is then frozen so the boxes stay true
    fig.set_layout_engine("none")
    renderer = fig.canvas.get_renderer()
    grouped: dict[tuple[float, float], list[str]] = {}
    for x, y, text in points:
        grouped.setdefault((round(float(x), 3), round(float(y), 3)), []).append(text)
    frame = ax.get_window_extent(renderer)
    # the r lines' box; the gray arrows are annotations too, and their boxes span the plot
    taken = [t.get_window_extent(renderer) for t in ax.texts if not isinstance(t, Annotation)]
    step = fontsize * 1.3
    tries = [(dx, dy * step) for dy in (0, -1, 1, -2, 2, -3, 3, -4, 4, -5, 5, -6, 6) for dx in (1, -1)]
    placed = []
    for (x, y), names in sorted(grouped.items(), key=lambda kv: (-kv[0][1], kv[0][0])):
        label = ", ".join(names)
        artist = None
        for side, dy in tries:
            if artist is not None:
                artist.remove()
            artist = ax.annotate(
                label, (x, y), xytext=(4 * side, 3 + dy), textcoords="offset points", fontsize=fontsize,
                ha="left" if side > 0 else "right", va="bottom",
            )  # fmt: skip
            box = artist.get_window_extent(renderer)
            inside = frame.x0 <= box.x0 and box.x1 <= frame.x1 and frame.y0 <= box.y0 and box.y1 <= frame.y1
            if inside and not _overlaps(box, taken):
                break
        taken.append(artist.get_window_extent(renderer))
        placed.append(artist)
    return placed


def figure_3(a: Analysis) -> Figure:
    """Per model: accuracy with the key forced into each slot (bars) against the slot's pick rate (points)."""
    title = "Figure 3: Forced-slot accuracy against pick rate"
    f = a.forced
    f = f[f["set"] == a.detail_set] if not f.empty else f
    if f.empty:
        return _placeholder(title, NEEDS["table8"])
    s = (
        a.summary[a.summary["set"] == a.detail_set].set_index("model")
        if not a.summary.empty
        else pd.DataFrame()
    )
    slots = sorted(int(c[4:]) for c in f.columns if c.startswith("acc_") and c[4:].isdigit())
    n = len(f)
    cols = min(n, 3)
    rows = math.ceil(n / cols)
    fig, axes = plt.subplots(
        rows, cols, figsize=(3.6 * cols, 3.2 * rows), squeeze=False, sharey=True, layout="constrained"
    )
    x = np.arange(len(slots))
    for ax, row in zip(axes.flat, f.itertuples(index=False), strict=False):
        acc = np.array([getattr(row, f"acc_{i}") for i in slots], dtype=float)
        ax.bar(x, acc, color=OBSERVED, label="accuracy, key forced here")
        if row.model in s.index and f"pick_{slots[0]}" in s:
            pick = np.array([s.loc[row.model, f"pick_{i}"] for i in slots], dtype=float)
            ax.plot(x, pick, "o", color=POINTS, label="pick rate of the slot")
        ax.axhline(row.chance, color="gray", linestyle="--", linewidth=1, label=f"chance {row.chance:.2f}")
        ax.set_xticks(x, [slot_name(i) for i in slots])
        ax.set_ylim(0, 1)
        ax.set_title(
            f"{row.model}\nposition-free {row.position_free:.3f} [{row.pf_lo:.3f}, {row.pf_hi:.3f}]",
            fontsize=9,
        )
        ax.set_xlabel("slot holding the key")
    for ax in axes[:, 0]:
        ax.set_ylabel("share of calls")
    for ax in list(axes.flat)[n:]:
        ax.set_axis_off()
    axes.flat[0].legend(fontsize=7, loc="upper right")
    fig.suptitle(f"{title} ({a.detail_set} items)\nunder content-independence bars equal points and sum to 1")
    return fig


def figure_4(banks: Mapping[str, Sequence[Item]] | None, bank_accuracy: pd.DataFrame | None) -> Figure:
    """Left: CDF of option length (characters) per bank. Right: blind accuracy per bank and model."""
    title = "Figure 4: Option length and blind accuracy by bank"
    if not banks:
        return _placeholder(title, "the items of two banks and their blind accuracies")
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.6), layout="constrained")
    for name, items in banks.items():
        lengths = np.sort([chars(o) for it in items for o in it.options])  # the bank profile's measure
        if lengths.size:
            left.step(
                lengths,
                np.arange(1, lengths.size + 1) / lengths.size,
                where="post",
                label=f"{name} (max {lengths[-1]} chars)",
            )
    left.set_xscale("symlog", linthresh=10)
    left.set_xlabel("option length (characters, log scale above 10)")
    left.set_ylabel("share of options at or below this length")
    left.set_ylim(0, 1.01)
    left.set_title("Option length, cumulative")
    left.legend(fontsize=8, loc="lower right")
    if bank_accuracy is None or bank_accuracy.empty:
        right.text(0.5, 0.5, "No blind predictions per bank", ha="center", va="center")
        right.set_axis_off()
    else:
        bank_names = list(dict.fromkeys(bank_accuracy["bank"]))
        models = list(dict.fromkeys(bank_accuracy["model"]))
        w = 0.8 / len(bank_names)
        x = np.arange(len(models))
        for j, bank in enumerate(bank_names):
            b = bank_accuracy[bank_accuracy["bank"] == bank].set_index("model").reindex(models)
            right.bar(
                x + (j - (len(bank_names) - 1) / 2) * w,
                b["acc"],
                w,
                label=bank,
                yerr=[b["acc"] - b["lo"], b["hi"] - b["acc"]],
                capsize=2,
            )
        chance = float(bank_accuracy["chance"].mean())
        right.axhline(chance, color="gray", linestyle="--", linewidth=1, label=f"chance {chance:.2f}")
        right.set_xticks(x, models, rotation=20, ha="right", fontsize=8)
        right.set_ylim(0, 1)
        # wrapped: one line of the interval's name ran the label past the axes into the title
        right.set_ylabel(textwrap.fill(f"blind accuracy (95% {interval_kind(bank_accuracy)})", 45))
        right.set_title("Blind accuracy, question hidden")
        right.legend(fontsize=8)
    fig.suptitle(title)
    return fig


def write_figures(
    out_dir: str | Path,
    a: Analysis,
    *,
    banks: Mapping[str, Sequence[Item]] | None = None,
    bank_accuracy: pd.DataFrame | None = None,
) -> dict[str, Path]:
    """Render Figures 1-4 into ``out_dir`` as ``figure{1..4}.png``; returns name -> path."""
    out = Path(out_dir)
    makers = {
        "figure1": lambda: figure_1(a.gate),
        "figure2": lambda: figure_2(a),
        "figure3": lambda: figure_3(a),
        "figure4": lambda: figure_4(banks, bank_accuracy),
    }
    return {name: save(make(), out / f"{name}.png") for name, make in makers.items()}  # one open at a time
