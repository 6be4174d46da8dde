import json
from pathlib import Path

import pandas as pd
import pytest

from blindmcq.auditing.surface import surface_strategies
from blindmcq.datasets.customs import load_customs
from blindmcq.datasets.items import Item
from blindmcq.stats import wilson
from blindmcq.surface import tie_credit, tied_extremes


def item(number: int, options: tuple[str, ...], key: int | None, status: str = "ok") -> Item:
    return Item(f"t-b-{number}", "t", "b", number, "q", options, key, status=status)  # type: ignore[arg-type]


TINY = [
    item(1, ("a", "bbbb", "cc", "d d d"), 1),
    item(2, ("xx", "yy", "z"), 0),
    item(3, ("one two", "three"), 1),
    item(4, ("p", "q"), None, status="malformed"),  # skipped
]


def by_strategy(picks: pd.DataFrame, name: str) -> list[tuple[float, bool]]:
    rows = picks[picks["strategy"] == name]
    return list(zip(rows["credit"], rows["tie"], strict=True))


def test_hand_counted_picks_on_a_tiny_mixed_n_bank():
    result = surface_strategies(TINY, seed=0)
    picks, summary = result.picks, result.summary.set_index("strategy")
    assert result.n_skipped == 1
    # item 1: lengths 1, 4, 2, 5 -> longest 3 (wrong), shortest 0 (wrong); words 1, 1, 1, 3 -> 3 (wrong)
    # item 2: lengths 2, 2, 1 -> longest ties 0 and 1, key 0: credit 1/2; shortest 2 (wrong);
    #         words all 1 -> a three-way tie holding the key: credit 1/3
    # item 3: lengths 7, 5 -> longest 0 (wrong), shortest 1 (right); words 2, 1 -> 0 (wrong)
    assert by_strategy(picks, "longest") == [(0.0, False), (0.5, True), (0.0, False)]
    assert by_strategy(picks, "shortest") == [(0.0, False), (0.0, False), (1.0, False)]
    assert by_strategy(picks, "most_words") == [(0.0, False), (pytest.approx(1 / 3), True), (0.0, False)]
    assert summary.loc["longest", "accuracy"] == pytest.approx(0.5 / 3)
    assert summary.loc["most_words", "n_correct"] == pytest.approx(1 / 3)
    tied = picks[picks["tie"]]
    assert all(
        p in tied_extremes(TINY[1].options, len, 1) or s == "most_words"
        for p, s in zip(tied["picked_option"], tied["strategy"], strict=True)
    )
    assert picks.loc[picks["strategy"] == "most_words", "n_tied"].tolist() == [1, 3, 1]
    assert list(summary.index) == [f"constant_{s}" for s in range(4)] + ["longest", "shortest", "most_words"]
    assert summary.loc["constant_0", ["n", "n_correct"]].tolist() == [3, 1]
    assert summary.loc["constant_1", ["n", "n_correct"]].tolist() == [3, 2]
    # slot 2 exists only on items 1 and 2, slot 3 only on item 1
    assert summary.loc["constant_2", ["n", "n_correct", "n_not_applicable"]].tolist() == [2, 0, 1]
    assert summary.loc["constant_3", ["n", "n_correct", "n_not_applicable"]].tolist() == [1, 0, 2]
    assert summary.loc["constant_0", "chance"] == pytest.approx((1 / 4 + 1 / 3 + 1 / 2) / 3)
    assert summary.loc["constant_3", "chance"] == pytest.approx(1 / 4)
    assert summary.loc["longest", "n_ties"] == 1 and (summary["n_skipped"] == 1).all()
    assert result.facts["key_slot_counts"] == [1, 2, 0, 0]


def test_wilson_interval_known_values():
    low, high = wilson(5, 10)
    assert (round(low, 4), round(high, 4)) == (0.2366, 0.7634)
    assert wilson(0, 20)[0] == 0.0 and wilson(20, 20)[1] == 1.0


def test_ties_are_credited_as_the_expectation_of_a_random_break():
    assert tied_extremes(["ab", "cd", "e"], len) == [0, 1]
    assert tied_extremes(["ab", "c", "d"], len, -1) == [1, 2]
    assert tie_credit(1, [1, 2]) == 0.5 and tie_credit(0, [1, 2]) == 0.0 and tie_credit(2, [2]) == 1.0


def test_a_first_option_rule_would_turn_key_position_skew_into_accuracy():
    # every item: all options equally long, key in slot A. The first-tied rule would score 1.0.
    bank = [item(n, tuple(f"{c}{n}" for c in "abcd"), 0) for n in range(1, 41)]
    summary = surface_strategies(bank, seed=0).summary.set_index("strategy")
    for name in ("longest", "shortest", "most_words"):
        assert summary.loc[name, "accuracy"] == pytest.approx(0.25)
        assert summary.loc[name, "n_ties"] == 40
    picks = surface_strategies(bank, seed=3).picks
    chosen = picks.loc[picks["strategy"] == "longest", "picked_option"]
    assert chosen.nunique() > 1  # the break, seeded by each item's texts, spreads over the tied slots
    assert (
        chosen.tolist()
        == surface_strategies(bank, seed=3)
        .picks.loc[picks["strategy"] == "longest", "picked_option"]
        .tolist()
    )


def legislation_against_an_independent_count(path: Path) -> int:
    raw = json.loads(path.read_text(encoding="utf-8"))
    records = [r for act in raw["legislation"].values() for r in act]
    result = surface_strategies(load_customs(path, parts=["legislation"]), seed=0)
    summary = result.summary.set_index("strategy")
    assert result.n_skipped == 0 and summary.loc["constant_0", "n"] == len(records)
    for slot in range(4):
        expected = sum(r["answers"][slot]["is_correct"] for r in records)
        assert summary.loc[f"constant_{slot}", "n_correct"] == expected
    # longest by characters after collapsing whitespace, a tie credited 1/k when it holds the key
    lengths = [[len(" ".join(a["text"].split())) for a in r["answers"]] for r in records]
    longest_credit = sum(
        sum(a["is_correct"] for a, n in zip(r["answers"], ls, strict=True) if n == max(ls))
        / ls.count(max(ls))
        for r, ls in zip(records, lengths, strict=True)
    )
    assert summary.loc["longest", "n_correct"] == pytest.approx(longest_credit)
    assert summary.loc["longest", "n_ties"] == sum(ls.count(max(ls)) > 1 for ls in lengths)
    assert result.facts["key_slot_counts"][0] == summary.loc["constant_0", "n_correct"]
    return len(records)


def test_legislation_sample_against_an_independent_count(samples: Path):
    assert legislation_against_an_independent_count(samples / "ua-customs-exam" / "questions.json") == 70


def test_legislation_bank_against_an_independent_count(shared_data: Path):
    assert legislation_against_an_independent_count(shared_data / "ua-customs-exam" / "questions.json") == 340


def test_ten_option_bank():
    options = tuple(f"option {'x' * k}" for k in range(10))
    bank = [item(n, options, n % 10) for n in range(1, 21)]
    result = surface_strategies(bank, seed=0)
    summary = result.summary.set_index("strategy")
    assert [f"constant_{s}" for s in range(10)] == list(summary.index[:10])
    assert (summary.loc["constant_0":"constant_9", "n_correct"] == 2).all()
    assert summary["chance"].tolist() == pytest.approx([0.1] * len(summary))
    assert summary.loc["longest", "n_correct"] == 2 and summary.loc["shortest", "n_correct"] == 2
