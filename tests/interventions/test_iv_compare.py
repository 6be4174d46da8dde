"""Comparison tables: counts, item-level intervals, chance tests both ways, item sign test, credit."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from blindmcq.analysis.interventions import pool_comparison, pool_table, rewrite_comparison, rewrite_table
from blindmcq.stats import clustered_proportion, holm, item_sign_test
from blindmcq.tasks.rewrite import FLUENCY_COLUMNS


def _calls(
    correct: list[bool], condition: str = "blind", n_options: int = 4, model: str = "m"
) -> pd.DataFrame:
    return pd.DataFrame({
        "model": model,
        "item_id": [f"i{k // 8}" for k in range(len(correct))],
        "order_id": [f"rot{k % 8}" for k in range(len(correct))],
        "condition": condition, "n_options": n_options, "correct": correct,
    })  # fmt: skip


def test_rewrite_comparison_tests_both_sides_of_chance() -> None:
    rng = np.random.default_rng(0)
    before = _calls(list(rng.random(400) < 0.40))
    after = _calls(list(rng.random(400) < 0.15))
    table = rewrite_comparison(before, after, ["blind"]).set_index("version")
    k_b, k_a = int(before["correct"].sum()), int(after["correct"].sum())
    assert table.loc["before", "correct"] == k_b and table.loc["after", "calls"] == 400
    assert table.loc["after", "items"] == 50
    # independent calls: the design effect is about 1, so the interval is close to the call-level Wilson
    ci = sps.binomtest(k_a, 400).proportion_ci(method="wilson")
    assert (table.loc["after", "lo"], table.loc["after", "hi"]) == pytest.approx((ci.low, ci.high), abs=0.03)
    assert table.loc["before", "above_chance"] and not table.loc["before", "below_chance"]
    assert table.loc["after", "below_chance"] and not table.loc["after", "above_chance"]
    up, down = table.loc["after", "items_up"], table.loc["after", "items_down"]
    assert down > 3 * up and table.loc["after", "sign_p"] == pytest.approx(
        sps.binomtest(int(up), int(up + down), 0.5).pvalue
    )
    md = rewrite_table(rewrite_comparison(before, after, ["blind"])).markdown()
    assert "| m | blind | after | 50 | 400 |" in md and "Unit: the item" in md


def test_an_item_answered_the_same_in_every_order_counts_once() -> None:
    """A model whose 8 orders of an item agree: the interval and the tests are those of the items,
    not of 8 times as many independent calls (the call-level McNemar would call 5 up / 10 down
    significant, as it did for `longest` in the rewrite)."""
    before_items = [True] * 12 + [False] * 38  # 50 items, 8 identical calls each
    after_items = [True] * 7 + [False] * 5 + [True] * 0 + [False] * 38
    after_items[12:17] = [True] * 5  # 5 items up, 5 down
    after_items[7:12] = [False] * 5
    after_items[:2] = [False] * 2  # 7 down in all
    before = _calls([c for c in before_items for _ in range(8)])
    after = _calls([c for c in after_items for _ in range(8)])
    table = rewrite_comparison(before, after, ["blind"]).set_index("version")
    per_item = clustered_proportion(before_items, range(50))
    assert (table.loc["before", "lo"], table.loc["before", "hi"]) == pytest.approx((per_item.lo, per_item.hi))
    assert table.loc["before", "n_eff"] == pytest.approx(50)
    sign = item_sign_test(pd.Series(before_items, dtype=float), pd.Series(after_items, dtype=float))
    assert (sign.up, sign.down) == (5, 7) and table.loc["after", "sign_p"] == pytest.approx(sign.p)
    assert sign.p > 0.7
    calls_wilson = sps.binomtest(96, 400).proportion_ci(method="wilson")
    assert table.loc["before", "hi"] - table.loc["before", "lo"] > 2 * (calls_wilson.high - calls_wilson.low)


def test_holm_matches_its_definition() -> None:
    p = [0.01, 0.04, float("nan"), 0.03, 0.5]
    assert list(holm(p)[[0, 1, 3, 4]]) == pytest.approx([0.04, 0.09, 0.09, 0.5])
    assert np.isnan(holm(p)[2])


def test_rewrite_comparison_keeps_each_models_calls_apart() -> None:
    """Two models probed before and after: each row counts, tests and pairs its own model's calls."""
    rng = np.random.default_rng(1)
    a_b, a_a = (_calls(list(rng.random(160) < p), model="longest") for p in (0.5, 0.25))
    b_b, b_a = (_calls(list(rng.random(160) < 0.25), model="lexical") for _ in range(2))
    table = rewrite_comparison(pd.concat([a_b, b_b]), pd.concat([a_a, b_a]), ["blind"])
    assert list(table["model"]) == ["longest", "longest", "lexical", "lexical"]
    rows = table.set_index(["model", "version"])
    assert rows.loc[("longest", "before"), "correct"] == a_b["correct"].sum()
    assert rows.loc[("lexical", "after"), "correct"] == b_a["correct"].sum()
    assert (
        rows.loc[("lexical", "after"), "items_paired"] == 20
        and rows.loc[("longest", "after"), "calls"] == 160
    )


def test_rewrite_comparison_at_chance_is_neither_side() -> None:
    same = _calls([k % 4 == 0 for k in range(400)])
    row = rewrite_comparison(same, same, ["blind"]).iloc[1]
    assert row["acc"] == 0.25 and not row["above_chance"] and not row["below_chance"] and row["sign_p"] == 1.0


def test_pool_comparison_credit_is_ordinary_minus_pooled() -> None:
    pooled = pd.DataFrame({
        "group_id": ["g0"] * 4 + ["g1"] * 4, "item_id": [f"i{k}" for k in range(8)], "condition": "full",
        "answerable": [True, True, True, False] * 2,
        "correct": [True, False, False, True, True, False, False, False],
        "abstained": [False, False, True, True, False, False, False, False], "parse_status": "ok",
        "set_hit": [True, True, False, False, True, True, False, False],
        "chance": 1 / 17, "set_chance": 3 / 17, "group_chance": 17.0**-4,
    })  # fmt: skip
    ordinary = _calls([True, True, False, True, True, True, True, False], condition="full")
    ordinary["item_id"] = [f"i{k}" for k in range(8)]
    row = pool_comparison(pooled, ordinary).iloc[0]
    assert row["ordinary_acc"] == pytest.approx(5 / 6)  # i3 and i7 (unanswerable) left out
    assert row["pooled_acc"] == pytest.approx(2 / 6) and row["elimination_credit"] == pytest.approx(0.5)
    assert row["abstention"] == 0.5 and row["false_abstention"] == pytest.approx(1 / 6)
    assert row["group_acc"] == 0.0 and row["pooled_all_acc"] == pytest.approx(3 / 8)
    assert "+0.500" in pool_table(pool_comparison(pooled, ordinary)).markdown()


def test_fluency_change_scores_each_changed_distractor_before_and_after(tmp_path: Path) -> None:
    """The stage's fluency rows (a text less fluent the more it ends mid-phrase, "такого"): the rewritten
    distractors read worse, counted per changed distractor, with the sign test over items; the figures
    come from the file the stage writes, read back as the very doubles written."""
    from blindmcq.analysis.interventions import fluency_change, fluency_note, read_fluency
    from blindmcq.datasets.items import Item
    from blindmcq.tasks.rewrite import fluency_requests, write_fluency

    old = [Item(f"b-{i}", "t", "b", i, "q", ("ключ тут", "такого строку не надається", "інше"), 0)
           for i in range(1, 7)]  # fmt: skip
    new = [o.__class__(**{**o.__dict__, "options": ("ключ тут", "такого", "інше")}) for o in old[:5]] + old[
        5:
    ]
    rows = [row for row, _ in fluency_requests(old, new, "cloze", "Відповідь:")]
    assert [r["version"] for r in rows[:3]] == ["before", "after", "key"] and len(rows) == 15  # item 6: none
    scores = pd.DataFrame(
        [{**r, "per_token": -3.0 if r["text"].endswith("такого") else -1.0 + r["option"] / 3} for r in rows]
    )
    write_fluency(tmp_path / "fluency.jsonl", scores.reindex(columns=FLUENCY_COLUMNS))
    read = read_fluency(tmp_path / "fluency.jsonl")
    assert read["per_token"].tolist() == scores["per_token"].tolist()  # exact: the doubles round-trip
    f = fluency_change(read)
    assert f == fluency_change(scores)
    assert (f["fluency_n"], f["fluency_before"], f["fluency_after"], f["fluency_keys"]) == (
        5,
        -0.6667,
        -3.0,
        -1.0,
    )
    assert (f["fluency_up"], f["fluency_down"]) == (0, 5) and f["fluency_sign_p"] == pytest.approx(0.0625)
    assert "5 changed distractors" in fluency_note(f, "cloze")
    assert fluency_change(scores.iloc[:0]) == {"fluency_n": 0.0}


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ({"item_id": "i", "version": "before"}, "no 'per_token'"),
        ({"item_id": "i", "version": "during", "per_token": -1.0}, "version 'during'"),
        ({"item_id": "i", "version": "key", "per_token": "-1.0"}, "per_token: expected a number"),
    ],
)
def test_a_fluency_line_that_does_not_fit_names_the_file_and_line(
    tmp_path: Path, line: dict, message: str
) -> None:
    import json

    from blindmcq.analysis.interventions import read_fluency
    from blindmcq.errors import InputError

    path = tmp_path / "fluency.jsonl"
    good = {"item_id": "i", "version": "after", "per_token": -2.0}
    path.write_text(f"{json.dumps(good)}\n{json.dumps(line)}\n", encoding="utf-8")
    with pytest.raises(InputError, match=message) as caught:
        read_fluency(path)
    assert "fluency.jsonl" in str(caught.value) and "line 2" in str(caught.value)
