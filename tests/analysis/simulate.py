"""Seeded simulator of prediction rows over real items, for analysis tests and the benchmark.

A simulated model either *extracts* the answer from the options (then picks the key) or answers
by its position habit (a distribution over slots). Extraction is per model and item, fixed across
orders: item ``i`` has a latent leak ``u_i`` shared by all models, and model ``m`` extracts it when
``u_i < rate_m`` (plus the presentation's effect), so leaky items leak for every model, as in the
paper. ``unparseable`` calls pick nothing and count as wrong.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from blindmcq.answers.records import PREDICTION_COLUMNS
from blindmcq.datasets.items import Item

ORDERS8 = ("rot0", "rot1", "rot2", "rot3", "rev0", "rev1", "rev2", "rev3")


def customs_items(path: Path, limit: int | None = None) -> list[Item]:
    """The real four-option items of a customs bank file (legislation first), keys as published."""
    data = json.loads(path.read_text(encoding="utf-8"))
    raw = [q for qs in data["legislation"].values() for q in qs]
    for comp in data["operational_competencies"].values():
        for qs in comp["levels"].values():
            raw.extend(qs)
    items = []
    for q in raw:
        options = tuple(a["text"] for a in q["answers"])
        if len(options) != 4:
            continue
        items.append(
            Item(
                id=f"customs-bank-{q['uid']}",
                source="customs",
                bank="bank",
                number=int(q["number"]),
                question=q["question"],
                options=options,
                key=int(q["correct_index"]),
            )
        )
        if limit is not None and len(items) >= limit:
            break
    return items


@dataclass(frozen=True)
class SimModel:
    name: str
    habit: tuple[float, ...]  # probability of each slot when not extracting
    blind_rate: float  # share of items (by leak rank) extracted blind
    full_rate: float  # share of items answered from the question
    unparseable: float = 0.0
    effects: Mapping[str, float] = field(default_factory=dict)  # presentation value -> added rate
    tokens: Mapping[str, int] = field(default_factory=lambda: {"direct": 4})


def sim_panel(n: int) -> list[SimModel]:
    """``n`` simulated models ``m00``.. with varied position habits and extraction rates, each a little
    unparseable: the panel the analysis and release benchmarks simulate."""
    return [
        SimModel(
            f"m{i:02d}",
            tuple(w / (7 + i % 4 + (i * 7) % 5) for w in (1 + i % 4, 2, 3, 1 + (i * 7) % 5)),
            0.02 * i,
            min(0.95, 0.02 * i + 0.5),
            unparseable=0.01 * (i % 3),
        )
        for i in range(n)
    ]


def order_slots(order_id: str, n: int) -> np.ndarray:
    """Original option index in each slot for ``rotK``/``revK`` (rotations of published / reversed)."""
    base = np.arange(n) if order_id.startswith("rot") else np.arange(n)[::-1]
    return np.roll(base, -int(order_id[3:]))


def simulate(
    items: Sequence[Item],
    models: Sequence[SimModel],
    *,
    seed: int = 0,
    conditions: Sequence[str] = ("blind", "full"),
    blind_orders: Sequence[str] = ORDERS8,
    full_orders: Sequence[str] = ("rot0",),
    forced: bool = True,
    phrasings: Sequence[str] = ("original",),
    labels: Sequence[str] = ("latin",),
    reasoning: Sequence[str] = ("direct",),
) -> pd.DataFrame:
    """Rows with exactly ``PREDICTION_COLUMNS``: every model x condition x presentation x order x item."""
    rng = np.random.default_rng(seed)
    n_items = len(items)
    n = items[0].n_options
    if any(it.n_options != n for it in items):
        raise ValueError("simulate expects one option count")
    keys = np.array([it.key for it in items])
    ids = np.array([it.id for it in items], dtype=object)
    leak = {"blind": rng.random(n_items), "full": rng.random(n_items)}
    parts = []
    for m in models:
        habit = np.asarray(m.habit, dtype=float)
        for cond in conditions:
            orders = list(blind_orders) if cond == "blind" else list(full_orders)
            if forced and cond == "blind":
                orders += [f"forced{s}" for s in range(n)]
            rate = m.blind_rate if cond == "blind" else m.full_rate
            for ph in phrasings:
                for lab in labels:
                    for rs in reasoning:
                        eff = rate + sum(m.effects.get(v, 0.0) for v in (ph, lab, rs))
                        knows = leak[cond] < eff
                        for oid in orders:
                            parts.append(_calls(rng, m, cond, ph, lab, rs, oid, ids, keys, knows, habit, n))
    df = pd.concat(parts, ignore_index=True)
    return df[list(PREDICTION_COLUMNS)]


def _calls(rng, m, cond, ph, lab, rs, oid, ids, keys, knows, habit, n) -> pd.DataFrame:
    size = ids.size
    if oid.startswith("forced"):
        s = int(oid[6:])
        key_slot = np.full(size, s)
        # distractors keep their published order around the key
        orders = [
            [*[o for o in range(n) if o != k][:s], k, *[o for o in range(n) if o != k][s:]] for k in range(n)
        ]
        order_col = [orders[k] for k in keys]
        forced_slot = np.full(size, float(s))
    else:
        slots = order_slots(oid, n)
        inv = np.argsort(slots)
        key_slot = inv[keys]
        order_col = [slots.tolist()] * size
        forced_slot = np.full(size, np.nan)
    guess = rng.choice(n, size=size, p=habit)
    picked = np.where(knows, key_slot, guess).astype(float)
    bad = rng.random(size) < m.unparseable
    picked[bad] = np.nan
    if oid.startswith("forced"):
        d = np.where(picked < key_slot, picked, picked - 1)  # distractor rank
        d_opt = np.where(d >= keys, d + 1, d)
        picked_option = np.where(picked == key_slot, keys, d_opt)
    else:
        picked_option = np.where(np.isnan(picked), np.nan, slots[np.nan_to_num(picked).astype(int)])
    picked_option = np.where(np.isnan(picked), np.nan, picked_option)
    tokens = m.tokens.get(rs, 400)
    h = hashlib.sha1(f"{m.name}|{cond}|{ph}|{lab}|{rs}|{oid}".encode()).hexdigest()[:12]
    return pd.DataFrame(
        {
            "item_id": ids,
            "model": m.name,
            "condition": cond,
            "phrasing": ph,
            "labels": lab,
            "protocol": "sl",
            "reasoning": rs,
            "order": order_col,
            "order_id": oid,
            "forced_slot": forced_slot,
            "key_slot": key_slot,
            "n_options": n,
            "picked_slot": picked,
            "picked_option": picked_option,
            "correct": picked == key_slot,
            "parse_status": np.where(bad, "unparseable", "ok"),
            "raw_response": np.where(bad, "?", "A"),
            "input_tokens": 100,
            "output_tokens": tokens,
            "latency_s": 0.1,
            "region": "local",
            "request_hash": h,
            "time": "2025-01-01T00:00:00Z",
            "backend": "sim",
            "cached": False,
            "error": None,
            "setting": "",
            "stop_reason": "end_turn",
        }
    )


def make_row(**kw: Any) -> dict[str, Any]:
    """One prediction row with every released column; keyword arguments override the defaults."""
    row: dict[str, Any] = {
        "item_id": "i1",
        "model": "m",
        "condition": "blind",
        "phrasing": "original",
        "labels": "latin",
        "protocol": "sl",
        "reasoning": "direct",
        "order": [0, 1, 2, 3],
        "order_id": "rot0",
        "forced_slot": None,
        "key_slot": 0,
        "n_options": 4,
        "picked_slot": 0,
        "picked_option": 0,
        "correct": True,
        "parse_status": "ok",
        "raw_response": "A",
        "input_tokens": 10,
        "output_tokens": 1,
        "latency_s": 0.1,
        "region": None,
        "request_hash": "h",
        "time": "2025-01-01T00:00:00Z",
        "backend": "test",
        "cached": False,
        "error": None,
        "setting": "",
        "stop_reason": "end_turn",
    }
    row.update(kw)
    if "correct" not in kw:
        row["correct"] = row["picked_slot"] is not None and row["picked_slot"] == row["key_slot"]
    return row


def frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=list(PREDICTION_COLUMNS))


MODELS = (
    SimModel("gate", (0.4, 0.3, 0.2, 0.1), 0.15, 0.6, unparseable=0.02),
    SimModel("first", (1.0, 0.0, 0.0, 0.0), 0.0, 0.3),
    SimModel("good", (0.25, 0.25, 0.25, 0.25), 0.3, 0.9),
    SimModel("mid", (0.1, 0.2, 0.3, 0.4), 0.1, 0.7),
    SimModel("weak", (0.3, 0.3, 0.2, 0.2), 0.05, 0.45),
)
