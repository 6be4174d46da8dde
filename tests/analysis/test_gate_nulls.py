"""The gate's rejections against both pickers that read nothing: one redrawing in each order
(Binomial(2N, 1/N) per item) and one picking the same option in every order (1/N of the items)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps
from simulate import ORDERS8, frame, make_row, order_slots

from blindmcq.analysis import gate
from blindmcq.analysis.gate import gate_nulls


def picker_rows(picks: np.ndarray, keys: np.ndarray, n: int = 4) -> list[dict]:
    """Blind calls of model ``g`` over the eight orders; ``picks[i, j]`` is the option picked on item i in
    order j."""
    rows = []
    for i, key in enumerate(keys):
        for j, oid in enumerate(ORDERS8):
            slots = order_slots(oid, n)
            where = {int(o): s for s, o in enumerate(slots)}
            pick = int(picks[i, j])
            rows.append(
                make_row(
                    item_id=f"i{i:04d}", model="g", order_id=oid, order=slots.tolist(), n_options=n,
                    key_slot=where[int(key)], picked_slot=where[pick], picked_option=pick,
                )
            )  # fmt: skip
    return rows


def consistent_bank(right: int, items: int = 897, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """A consistent picker: one option per item in all eight orders, the key on ``right`` items."""
    rng = np.random.default_rng(seed)
    keys = rng.integers(0, 4, items)
    pick = (keys + rng.integers(1, 4, items)) % 4  # a distractor
    hit = rng.choice(items, right, replace=False)
    pick[hit] = keys[hit]
    return np.repeat(pick[:, None], 8, axis=1), keys


def test_a_consistent_picker_that_reads_nothing_is_no_leak() -> None:
    picks, keys = consistent_bank(201)  # ZNO geography under `longest`: 201 of 897, 1/4 expected
    g = gate(frame(picker_rows(picks, keys)), gate_model="g")
    nulls = gate_nulls(g)
    assert len(g.rejected) == nulls.rejected == 201 and nulls.items == 897
    assert nulls.same_pick == 1.0 and nulls.deterministic
    assert nulls.consistent[0] == pytest.approx(897 / 4)
    assert nulls.redraw[0] == pytest.approx(897 * sps.binom.sf(4, 8, 0.25))  # P(5 or more of 8) = 0.027
    assert nulls.consistent[1] > 0.9 and nulls.redraw[1] < 1e-6
    text = nulls.sentence()
    assert "about 224 rejections expected from a consistent picker that reads nothing" in text
    assert "201 seen: no evidence of a leak" in text
    assert "same option in every order on 100%" in text and "deterministic" in text
    assert "one-sided exact binomial over the 897 items" in text and "Holm" in text


def test_a_consistent_picker_that_knows_items_is_a_leak() -> None:
    picks, keys = consistent_bank(300)  # 1/4 of 897 is 224: 300 is far above it
    nulls = gate_nulls(gate(frame(picker_rows(picks, keys)), gate_model="g"))
    assert nulls.consistent[1] < 0.001 and "300 seen: more than either null expects: evidence of a leak" in (
        nulls.sentence()
    )


def test_a_redrawing_picker_leads_with_the_binomial_null() -> None:
    rng = np.random.default_rng(1)
    keys = rng.integers(0, 4, 600)
    picks = rng.integers(0, 4, (600, 8))  # draws anew in every order
    nulls = gate_nulls(gate(frame(picker_rows(picks, keys)), gate_model="g"))
    assert nulls.same_pick < 0.01 and not nulls.deterministic
    assert nulls.sentence().index("redraws in each order") < nulls.sentence().index("consistent picker")
    assert "no evidence of a leak" in nulls.sentence() and nulls.redraw[1] > 0.05
    # a redrawing picker that knows 10% of the items: above its own null, below the consistent one's
    known = rng.choice(600, 60, replace=False)
    picks[known] = keys[known, None]
    nulls = gate_nulls(gate(frame(picker_rows(picks, keys)), gate_model="g"))
    assert nulls.redraw[1] < 0.001 and nulls.consistent[1] > 0.05
    assert "the data cannot decide" in nulls.sentence()


def test_mixed_option_counts_sum_one_over_n() -> None:
    rows = []
    for n, count in ((3, 30), (5, 20)):
        for i in range(count):  # always option 0, the key always option 1: never right
            for oid in [f"rot{r}" for r in range(n)] + [f"rev{r}" for r in range(n)]:
                slots = order_slots(oid, n)
                where = {int(o): s for s, o in enumerate(slots)}
                rows.append(
                    make_row(
                        item_id=f"n{n}-{i}", model="g", order_id=oid, order=slots.tolist(), n_options=n,
                        key_slot=where[1], picked_slot=where[0], picked_option=0,
                    )
                )  # fmt: skip
    nulls = gate_nulls(gate(frame(rows), gate_model="g"))
    assert nulls.consistent[0] == pytest.approx(30 / 3 + 20 / 5)
    assert nulls.rejected == 0 and nulls.consistent[1] == 1.0


def test_consistent_histogram_puts_one_over_n_of_the_items_at_all_orders() -> None:
    from blindmcq import stats

    hist = stats.consistent_histogram([3, 3, 4, 5], [6, 6, 8, 10])
    assert hist.shape == (11,) and hist.sum() == pytest.approx(4)
    assert hist[[6, 8, 10]] == pytest.approx([2 / 3, 1 / 4, 1 / 5])
    assert hist[0] == pytest.approx(4 - 2 / 3 - 1 / 4 - 1 / 5) and hist[[1, 2, 3, 4, 5, 7, 9]].sum() == 0


def test_the_report_opening_and_figure_1_give_both_nulls() -> None:
    from blindmcq.analysis import analyze, build_tables
    from blindmcq.analysis.figures import figure_1
    from blindmcq.analysis.findings import findings

    picks, keys = consistent_bank(201)
    preds = frame(picker_rows(picks, keys))
    a = analyze(preds, gate=gate(preds, gate_model="g"), sample_sizes=[])
    opening = "\n".join(findings(a, model="g"))
    assert "about 224 rejections expected from a consistent picker that reads nothing" in opening
    assert "201 seen: no evidence of a leak" in opening and "about 24.5 from a picker that redraws" in opening
    table = build_tables(a)["gate"]
    assert table.frame["expected_consistent"].iloc[[0, 8]].tolist() == pytest.approx([897 * 0.75, 897 / 4])
    fig = figure_1(a.gate)
    legend = " ".join(t.get_text() for t in fig.axes[0].get_legend().get_texts())
    assert "redrawing picker: Binomial(8, 1/4)" in legend and "consistent picker" in legend
    assert "consistent picker, 224.2 rejections expected" in fig.axes[0].get_title()
