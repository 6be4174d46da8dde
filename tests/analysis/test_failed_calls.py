"""Failed calls at the right unit: chance under ``wrong``, and failures that depend on the key's slot."""

from __future__ import annotations

import numpy as np
import pytest
from simulate import frame, make_row

from blindmcq.analysis import analyze, build_tables
from blindmcq.analysis.findings import findings

ORDERS = ("rot0", "rot1", "rot2", "rot3", "rev0", "rev1", "rev2", "rev3")


def _blind(n_items: int, fail, seed: int = 0) -> list[dict]:
    """A content-blind uniform picker on 4-option items over 8 orders; ``fail(key_slot, rng)`` says
    whether a call fails (an error, no answer)."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n_items):
        for k, order_id in enumerate(ORDERS):
            key = (i + k) % 4
            if fail(key, rng):
                rows.append(make_row(item_id=f"i{i}", order_id=order_id, key_slot=key, picked_slot=None,
                                     picked_option=None, correct=False, parse_status="error",
                                     raw_response=None, error="HTTP 500"))  # fmt: skip
                continue
            pick = int(rng.integers(4))
            rows.append(make_row(item_id=f"i{i}", order_id=order_id, key_slot=key, picked_slot=pick,
                                 picked_option=pick, correct=pick == key))  # fmt: skip
    return rows


def test_under_wrong_chance_is_that_of_a_picker_failing_as_often() -> None:
    """20% failures: a content-blind picker reads about 0.20 under `wrong`; chance must say 0.20, not 0.25,
    or the model looks below chance for nothing."""
    df = frame(_blind(300, lambda key, rng: rng.random() < 0.2))
    a = analyze(df, failed_calls="wrong")
    row = a.summary[a.summary["set"] == "all"].iloc[0]
    answered = 1 - (df["parse_status"] == "error").mean()
    assert row["chance"] == pytest.approx(0.25 * answered, abs=0.005)
    assert row["blind_lo"] <= row["chance"] <= row["blind_hi"]
    dropped = analyze(df, failed_calls="drop").summary.iloc[0]
    assert dropped["chance"] == 0.25


def test_failures_only_when_the_key_is_in_slot_a_are_flagged_in_the_tables_and_the_opening() -> None:
    df = frame(_blind(60, lambda key, rng: key == 0 and rng.random() < 0.8))
    a = analyze(df)
    slots = a.failure_slots.set_index("model")
    assert bool(slots.loc["m", "dependent"]) and slots.loc["m", "p_holm"] < 1e-6
    assert "depend on the key's slot" in build_tables(a)["table4"].note
    assert any("failed calls depend on where the key is shown" in line for line in findings(a, model="m"))


def test_failures_independent_of_the_key_raise_no_warning() -> None:
    df = frame(_blind(60, lambda key, rng: rng.random() < 0.2, seed=4))
    a = analyze(df)
    assert not a.failure_slots["dependent"].any()
    assert "depend on the key's slot" not in build_tables(a)["table4"].note


def test_corrected_habit_removes_the_content_bias_of_the_papers_habit() -> None:
    """A model that knows 30% of the items (right in every order) and otherwise keeps to slot A, on a
    bank whose keys sit in A 40% of the time, asked in the published order only: the paper's habit takes
    the known items' picks for habit (0.364 here, down; up on other banks); the corrected one recovers
    the true 0.40."""
    rng = np.random.default_rng(5)
    rows = []
    for i in range(4000):
        key = int(rng.choice(4, p=[0.4, 0.2, 0.2, 0.2]))
        pick = key if rng.random() < 0.3 else 0
        rows.append(make_row(item_id=f"i{i}", key_slot=key, picked_slot=pick, picked_option=pick,
                             correct=pick == key))  # fmt: skip
    s = analyze(frame(rows)).summary.iloc[0]
    assert abs(s["habit"] - 0.40) > 0.03  # the paper's definition, biased
    assert s["habit_corrected"] == pytest.approx(0.40, abs=0.02)
    assert s["excess_corrected"] == pytest.approx(0.3 * (1 - 0.40), abs=0.02)
    assert "Habit*" in build_tables(analyze(frame(rows)))["table4"].shown.columns


def test_the_opening_names_its_test_and_corrects_for_the_models_it_scans() -> None:
    """Seven content-blind models and one that reads 0.45 of 60 items blind: only that one is said to
    answer above chance, the sentence names the item-level test and Holm over all eight, and each model's
    adjusted p is at least its raw one."""
    rng = np.random.default_rng(2)
    rows = []
    for m in range(8):
        for i in range(60):
            key = int(rng.integers(4))
            right = rng.random() < (0.45 if m == 0 else 0.25)
            pick = key if right else (key + 1 + int(rng.integers(3))) % 4
            rows.append(make_row(item_id=f"i{i}", model=f"m{m}", key_slot=key, picked_slot=pick,
                                 picked_option=pick, correct=pick == key))  # fmt: skip
    a = analyze(frame(rows))
    s = a.summary[a.summary["set"] == "all"].set_index("model")
    assert (s["blind_p_holm"] >= s["blind_p"]).all()
    opening = " ".join(findings(a, model="m0"))
    assert "Holm over the 8 models" in opening
    listed = [m for m in s.index if s.loc[m, "blind_p_holm"] < 0.05 and s.loc[m, "blind_lo"] > 0.25]
    assert "m0" in listed
    for m in s.index:
        assert (f"{m} 0." in opening.split("Options alone")[0]) == (m in listed) or m == "m0"
