"""The order keywords a condition may name: "all" (2N orders), "rotations" (N) or a list of ids."""

from __future__ import annotations

from collections import Counter

import pandas as pd
import pytest

from blindmcq.analysis.frame import order_mask
from blindmcq.errors import ConfigError
from blindmcq.tasks.presentations import select_orders


@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_rotations_put_every_option_in_every_slot_once(n: int) -> None:
    chosen = select_orders(n, "rotations", key="k")
    assert [order_id for order_id, _ in chosen] == [f"rot{k}" for k in range(n)]
    placed = Counter((slot, option) for _, order in chosen for slot, option in enumerate(order))
    assert set(placed.values()) == {1} and len(placed) == n * n
    assert chosen == select_orders(n, "all", key="k")[:n]


def test_an_unknown_keyword_names_the_key() -> None:
    with pytest.raises(ConfigError, match=r"intervention\.rewrite\.blind_orders"):
        select_orders(4, "rotation", key="intervention.rewrite.blind_orders")


@pytest.mark.parametrize("categorical", [False, True])
def test_order_mask_selects_rotations_only(categorical: bool) -> None:
    ids = pd.Series(["rot0", "rev0", "rot3", "forced1", "rev2", "rot11"])
    if categorical:
        ids = ids.astype("category")
    assert order_mask(ids, "rotations").tolist() == [True, False, True, False, False, True]
    assert order_mask(ids, "all").tolist() == [True, True, True, False, True, True]


def test_the_gate_and_the_interventions_build_their_condition_group_typed() -> None:
    """The gate's blind-only condition (one definition for the stage and the sweep) and an intervention's
    are the schema's ``Condition``, never forced, with an order keyword kept as the keyword."""
    from blindmcq.config.schema import Condition, Gate, validate_group
    from blindmcq.wiring.probe import gate_condition, probe_condition

    gate = gate_condition(Gate(orders="rotations"))
    assert isinstance(gate, Condition) and gate == validate_group(
        "condition", {"name": "gate", "conditions": ["blind"], "blind_orders": "rotations", "full_orders": []}
    )
    own = probe_condition(["blind", "full"], "all", "rotations")
    assert (own.conditions, own.blind_orders, own.full_orders, own.forced) == (
        ["blind", "full"], "all", "rotations", False,
    )  # fmt: skip
