"""Surface strategies past the gate, and lexical search beyond length."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from blindmcq.analysis.findings import past_gate_sentence
from blindmcq.analysis.gate import GateResult
from blindmcq.analysis.leaks import lexical_beyond_length, surface_past_gate
from blindmcq.auditing.surface import surface_strategies
from blindmcq.datasets.items import Item


def _bank(n: int = 200, seed: int = 0) -> list[Item]:
    """Four options of distinct lengths; the key is the longest on a third of the items, the shortest on
    a third, in the middle otherwise."""
    rng = np.random.default_rng(seed)
    items = []
    for i in range(n):
        lengths = rng.permutation([5, 10, 15, 20])
        kind = i % 3
        key = (
            int(np.argmax(lengths))
            if kind == 0
            else int(np.argmin(lengths))
            if kind == 1
            else int(np.flatnonzero(lengths == 10)[0])
        )
        options = tuple("x" * int(k) for k in lengths)
        items.append(Item(f"b-{i}", "t", "b", i + 1, "q", options, key))  # type: ignore[arg-type]
    return items


def _gate(accepted: list[str], rejected: list[str]) -> GateResult:
    return GateResult(pd.DataFrame(), accepted, rejected, 0.5, "lengthy", 5, ["rot0"])


def test_a_gate_that_rejects_longest_keys_leaves_the_shortest_leak_and_says_so() -> None:
    items = _bank()
    picks = surface_strategies(items, seed=0).picks
    longest = picks[(picks["strategy"] == "longest")].set_index("item_id")["correct"]
    gate = _gate(list(longest.index[~longest]), list(longest.index[longest]))
    frame = surface_past_gate(picks, gate).set_index(["set", "strategy"])
    shortest = frame.loc[("accepted", "shortest")]
    assert shortest["n"] == len(gate.accepted)
    # an independent count: the key is the shortest on half the accepted items
    k = sum(it.key == int(np.argmin([len(o) for o in it.options])) for it in items if it.id in gate.accepted)
    assert shortest["k"] == k and shortest["p_above"] == pytest.approx(
        sps.binomtest(k, len(gate.accepted), 0.25, alternative="greater").pvalue
    )
    assert shortest["leaks"] and frame.loc[("accepted", "longest"), "reversed"]
    assert not frame.loc[("rejected", "shortest"), "leaks"]
    sentence = past_gate_sentence(frame.reset_index(), "lengthy")
    assert "`shortest`" in sentence and "left its inverse behind" in sentence and "Holm over" in sentence


def test_no_leak_past_a_gate_on_a_bank_without_surface_signal() -> None:
    rng = np.random.default_rng(3)
    items = [
        Item(f"r-{i}", "t", "b", i + 1, "q", tuple("x" * int(k) for k in rng.permutation([4, 8, 12, 16])),
             int(rng.integers(4)))  # type: ignore[arg-type]
        for i in range(120)
    ]  # fmt: skip
    picks = surface_strategies(items, seed=0).picks
    ids = [it.id for it in items]
    frame = surface_past_gate(picks, _gate(ids[:80], ids[80:]))
    assert not frame["leaks"].any()
    assert "no surface strategy finds the key" in past_gate_sentence(frame, "g")


def test_holm_within_a_set_makes_a_lone_borderline_hit_insignificant() -> None:
    picks = surface_strategies(_bank(60, seed=1), seed=0).picks
    ids = picks["item_id"].unique().tolist()
    frame = surface_past_gate(picks, _gate(ids[:30], ids[30:]))
    acc = frame[frame["set"] == "accepted"]
    assert (acc["holm_above"] >= acc["p_above"]).all() and (acc["holm_above"] <= 1).all()


def test_lexical_beyond_length_counts_only_the_items_where_the_picks_differ() -> None:
    base = pd.DataFrame({
        "strategy": ["lexical_search"] * 4 + ["most_words"] * 4,
        "item_id": ["a", "b", "c", "d"] * 2,
        "picked_option": [0, 1, 2, 3, 0, 0, 0, 3],
        "correct": [True, True, False, True, True, False, False, True],
        "n_options": 4,
    })  # fmt: skip
    out = lexical_beyond_length(base)
    assert (out["n"], out["k"]) == (2, 1) and out["chance"] == 0.25
    assert out["p_above"] == pytest.approx(sps.binomtest(1, 2, 0.25, alternative="greater").pvalue)
