import json

import pytest
from simulate import frame, make_row

from blindmcq.analysis import gate, read_gate, write_gate
from blindmcq.errors import ConfigError, InputError

ORDERS = ("rot0", "rot1", "rot2", "rot3", "rev0", "rev1", "rev2", "rev3")


def gate_rows(item: str, solved: int, model: str = "g", orders=ORDERS):
    # key always in slot 1; the first `solved` orders are answered correctly, the rest pick slot 0
    return [
        make_row(item_id=item, model=model, order_id=o, key_slot=1, picked_slot=1 if i < solved else 0)
        for i, o in enumerate(orders)
    ]


@pytest.fixture
def hand():
    rows = gate_rows("a", 8) + gate_rows("b", 5) + gate_rows("c", 4) + gate_rows("d", 0)
    # rows the gate must ignore: another model, the full condition, forced placement, another phrasing
    rows += gate_rows("c", 8, model="other")
    rows += [make_row(item_id="c", model="g", condition="full", key_slot=1, picked_slot=1)]
    rows += [
        make_row(item_id="c", model="g", order_id=f"forced{s}", forced_slot=s, key_slot=s, picked_slot=s)
        for s in range(4)
    ]
    rows += [
        make_row(item_id="c", model="g", phrasing="minimal", order_id=o, key_slot=1, picked_slot=1)
        for o in ORDERS
    ]
    return frame(rows)


def test_counts_and_split_by_hand(hand):
    g = gate(hand, gate_model="g", k=5)
    assert dict(zip(g.counts["item_id"], g.counts["solved"], strict=True)) == {"a": 8, "b": 5, "c": 4, "d": 0}
    assert set(g.counts["n_orders"]) == {8}
    assert g.rejected == ["a", "b"] and g.accepted == ["c", "d"]
    assert g.retained_share == 0.5
    assert g.orders == sorted(ORDERS)
    strict = gate(hand, gate_model="g", k=4)
    assert strict.rejected == ["a", "b", "c"]


def test_named_orders_subset(hand):
    g = gate(hand, gate_model="g", k=2, orders=["rot0", "rot1"])
    assert dict(zip(g.counts["item_id"], g.counts["solved"], strict=True)) == {"a": 2, "b": 2, "c": 2, "d": 0}
    assert g.accepted == ["d"]


def test_incomplete_and_duplicate_orders_are_named():
    short = frame(gate_rows("a", 3) + gate_rows("z", 3, orders=ORDERS[:6]))
    with pytest.raises(InputError, match="item z"):
        gate(short, gate_model="g")
    g = gate(short, gate_model="g", require_complete=False)
    assert dict(zip(g.counts["item_id"], g.counts["n_orders"], strict=True)) == {"a": 8, "z": 6}
    dup = frame(gate_rows("a", 3) + gate_rows("a", 3, orders=("rot0",)))
    with pytest.raises(InputError, match="item a"):
        gate(dup, gate_model="g")


def test_bad_settings(hand):
    with pytest.raises(InputError, match="nobody"):
        gate(hand, gate_model="nobody")
    with pytest.raises(ConfigError, match=r"gate\.k"):
        gate(hand, gate_model="g", k=9)
    with pytest.raises(ConfigError, match="orders"):
        gate(hand, gate_model="g", orders="some")


def test_write_read_roundtrip(tmp_path, hand):
    g = gate(hand, gate_model="g", k=5)
    path = write_gate(tmp_path / "gate" / "gate.json", g)
    back = read_gate(path)
    assert (back.accepted, back.rejected, back.k, back.gate_model) == (g.accepted, g.rejected, 5, "g")
    assert back.counts.equals(g.counts)
    assert json.loads(path.read_text())["retained_share"] == 0.5
    assert [p.name for p in path.parent.iterdir()] == ["gate.json"]  # no temp file left behind
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    with pytest.raises(InputError, match=r"bad\.json"):
        read_gate(bad)


def test_simulated_gate_rejects_leaky_items(predictions):
    g = gate(predictions, gate_model="gate", k=5)
    assert len(g.accepted) + len(g.rejected) == predictions["item_id"].nunique()
    # a model that extracts 15% of items rejects at least those (all 8 orders right), plus a few by chance
    assert 0.1 < len(g.rejected) / len(g.counts) < 0.25
