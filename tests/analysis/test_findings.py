"""The report's opening sentences follow the numbers: above chance, the gate left open or carried over."""

from __future__ import annotations

import pandas as pd
from simulate import frame, make_row

from blindmcq.analysis import analyze, gate
from blindmcq.analysis.findings import findings


def rows(model: str, correct_items: set[int], n: int = 80, key: int = 1) -> list[dict]:
    """A position-free model: right on ``correct_items`` in every order, else a fixed wrong option."""
    out = []
    for i in range(n):
        for k in range(8):  # the 2N orders of a 4-option item (slot = option shifted by k)
            key_slot = (key - k) % 4
            picked = key if i in correct_items else (key + 1) % 4
            slot = (picked - k) % 4
            order_id = f"rot{k}" if k < 4 else f"rev{k - 4}"
            out.append(
                make_row(
                    model=model, item_id=f"i{i:03d}", order_id=order_id, key_slot=key_slot,
                    picked_slot=slot, picked_option=picked, correct=i in correct_items,
                )
            )  # fmt: skip
    return out


def opening(predictions: pd.DataFrame, gate_model: str) -> str:
    a = analyze(predictions, gate=gate(predictions, gate_model=gate_model, k=5))
    return "\n".join(findings(a, model="probed", labels={"probed": "letter scoring"}))


def test_a_leak_the_gate_does_not_see_is_reported_open() -> None:
    gated = set(range(0, 40))  # the gate model solves the first half
    other = set(range(40, 80))  # another model solves the other half: the gate stays open to it
    df = frame(rows("gatekeeper", gated) + rows("other", other) + rows("probed", set()))
    text = opening(df, "gatekeeper")
    assert "The gate stays open to other" in text
    assert "40 of 80 items rejected" in text
    assert "probed (letter scoring)" in text


def test_overlapping_leaks_carry_the_gate_over() -> None:
    same = set(range(0, 40))
    df = frame(rows("gatekeeper", same) + rows("other", same) + rows("probed", set()))
    text = opening(df, "gatekeeper")
    assert "gate stays open" not in text
    assert "other answer the rejected items above chance" in text
    assert "How sure: each blind figure rests on 80 items" in text
