"""Per-N gate thresholds, items the gate cannot reject, the failed-call policy and the per-N habit on
banks of mixed option counts."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps
from simulate import frame, make_row

from blindmcq.analysis import Baseline, analyze, build_tables, gate, prepare, read_gate, write_gate
from blindmcq.analysis import metrics as m
from blindmcq.analysis.gate import thresholds_for
from blindmcq.errors import ConfigError


def orders(n: int) -> list[str]:
    return [f"rot{i}" for i in range(n)] + [f"rev{i}" for i in range(n)]


def item_rows(item: str, n: int, solved: int, model: str = "g", **kw) -> list[dict]:
    # key in slot 0 of every order (hand-made); the first `solved` orders pick it, the rest slot 1
    return [
        make_row(item_id=item, model=model, order_id=o, n_options=n, order=list(range(n)), key_slot=0,
                 picked_slot=0 if i < solved else 1, picked_option=0 if i < solved else 1, **kw)
        for i, o in enumerate(orders(n))
    ]  # fmt: skip


def test_threshold_per_n_from_the_false_rejection_rate():
    ks = thresholds_for({2, 3, 4, 5, 10})
    assert ks[4] == 5 and ks[2] is None
    for n, k in ks.items():
        if k is not None:  # the smallest k a content-blind picker reaches with probability <= 0.05
            assert sps.binom.sf(k - 1, 2 * n, 1 / n) <= 0.05 < sps.binom.sf(k - 2, 2 * n, 1 / n)
    assert thresholds_for({2, 4}, k=5) == {2: None, 4: 5}  # a fixed k beyond 2N cannot reject either
    with pytest.raises(ConfigError, match=r"gate\.false_rejection"):
        thresholds_for({4}, false_rejection=1.5)
    with pytest.raises(ConfigError, match=r"gate\.false_rejection"):
        thresholds_for({4}, false_rejection=None)


def test_gate_splits_mixed_n_and_reports_what_it_cannot_reject(tmp_path):
    rows = (
        item_rows("two", 2, 4) + item_rows("three", 3, 5) + item_rows("four", 4, 4) + item_rows("five", 5, 5)
    )
    g = gate(frame(rows), gate_model="g")
    assert g.thresholds == {2: None, 3: 5, 4: 5, 5: 5} and g.false_rejection == 0.05 and g.k is None
    # "two" answered blind in 4 of 4 orders is neither accepted nor rejected: it cannot be tested
    assert g.untestable == ["two"] and g.rejected == ["five", "three"] and g.accepted == ["four"]
    assert g.retained_share == pytest.approx(0.25)
    assert "N=2: cannot reject" in g.describe_thresholds()
    back = read_gate(write_gate(tmp_path / "gate.json", g))
    assert (back.thresholds, back.untestable, back.false_rejection) == (g.thresholds, g.untestable, 0.05)
    a = analyze(frame(rows), gate=g)
    assert a.sets["untestable"] == ["two"]
    note = build_tables(a)["gate"].note
    assert "1 items cannot be rejected" in note and "N=3: k=5 of 6" in note
    expected = build_tables(a)["gate"].frame["expected"].to_numpy()
    want = sum(
        np.pad(sps.binom.pmf(np.arange(2 * n + 1), 2 * n, 1 / n), (0, 10 - 2 * n)) for n in (2, 3, 4, 5)
    )
    assert np.allclose(expected, want)
    fixed = gate(frame(rows), gate_model="g", k=4)
    assert fixed.false_rejection is None and fixed.rejected == ["five", "four", "three", "two"]


def failing_rows(stop_reason: bool) -> pd.DataFrame:
    """An always-A model on 40 items, one call each; items 0-5 fail (error, refusal, truncation)."""
    rows = []
    for i in range(40):
        key = 0 if i % 3 == 0 else 1 + i % 3
        status = {0: "error", 1: "refused", 2: "error", 3: "unparseable"}.get(i, "ok")
        ok = status == "ok"
        row = make_row(item_id=f"i{i:02d}", model="first", key_slot=key, picked_slot=0 if ok else None,
                       picked_option=0 if ok else None, parse_status=status)  # fmt: skip
        if stop_reason:
            row["stop_reason"] = "max_tokens" if i in (3, 4) else "end_turn"
        rows.append(row)
    df = frame(rows)
    if stop_reason:
        df["stop_reason"] = [r["stop_reason"] for r in rows]
    return df


def test_failed_calls_drop_or_count_as_wrong():
    df = failing_rows(stop_reason=True)
    drop = analyze(df, failed_calls="drop").summary.set_index("model").loc["first"]
    wrong = analyze(df, failed_calls="wrong").summary.set_index("model").loc["first"]
    # failed: 2 errors, 1 refusal, 1 unparseable truncated call; item 4 is truncated but parsed: kept
    assert (drop["blind_n_error"], drop["blind_n_refused"], drop["blind_n_truncated"]) == (2, 1, 2)
    assert (wrong["blind_n_error"], wrong["blind_n_refused"], wrong["blind_n_truncated"]) == (2, 1, 2)
    assert drop["blind_n"] == 36 and wrong["blind_n"] == 40
    keyed_a = sum(1 for i in range(4, 40) if i % 3 == 0)  # answered items with the key in A
    assert drop["blind_acc"] == pytest.approx(keyed_a / 36)
    assert wrong["blind_acc"] == pytest.approx(keyed_a / 40)
    # dropping the failed calls keeps "a constant-slot model has excess exactly 0"
    assert drop["excess"] == pytest.approx(0.0, abs=1e-12)
    with pytest.raises(ConfigError, match=r"analysis\.failed_calls"):
        analyze(df, failed_calls="ignore")
    t3 = build_tables(analyze(df, failed_calls="drop"))["table3"]
    assert t3.shown["Err/Ref/Trunc blind, all"].iloc[0] == "2/1/2"
    assert "dropped from every rate" in t3.note
    assert "counted as wrong" in build_tables(analyze(df, failed_calls="wrong"))["table4"].note


def test_without_a_stop_reason_column_truncation_is_zero():
    df = failing_rows(stop_reason=False).drop(columns=["stop_reason"], errors="ignore")
    s = analyze(df).summary.set_index("model").loc["first"]
    assert s["blind_n_truncated"] == 0 and s["blind_n"] == 37  # errors and refusals still dropped


def test_mixed_n_habit_is_per_n_then_weighted():
    # 3-option items keyed A, 5-option items keyed E; a picker always answering A on 3, E on 5 scores 1
    rows = [make_row(item_id=f"a{i}", model="p", n_options=3, order=[0, 1, 2], key_slot=0, picked_slot=0,
                     picked_option=0) for i in range(10)]  # fmt: skip
    rows += [make_row(item_id=f"b{i}", model="p", n_options=5, order=list(range(5)), key_slot=4,
                      picked_slot=4, picked_option=4) for i in range(30)]  # fmt: skip
    df = prepare(frame(rows))
    by_n, pick, key = m.habit_parts(df, 5)
    by_n = by_n.set_index("n_options")
    assert by_n.loc[3, "weight"] == 0.25 and by_n.loc[5, "weight"] == 0.75
    assert by_n["habit"].tolist() == [1.0, 1.0] and by_n["excess"].tolist() == [0.0, 0.0]
    s = analyze(df, base=Baseline()).summary.iloc[0]
    assert s["habit"] == 1.0 and s["excess"] == 0.0 and s["chance"] == pytest.approx(0.25 / 3 + 0.75 / 5)
    # the pooled columns would say otherwise: sum_s pick(s) key(s) = 0.25^2 + 0.75^2
    assert float((pick.iloc[0] * key.iloc[0]).sum()) == pytest.approx(0.625)


def test_threshold_follows_a_fixed_list_of_orders():
    rows = item_rows("a", 4, 3) + item_rows("b", 4, 2)
    few = [r for r in rows if r["order_id"] in ("rot0", "rot1", "rot2", "rot3")]
    g = gate(frame(few), gate_model="g", orders=["rot0", "rot1", "rot2", "rot3"])
    # 4 orders at chance 1/4: P(X >= 3) = 0.051 > 0.05, P(X >= 4) = 0.004
    assert g.thresholds == {4: 4} and g.rejected == [] and "k=4 of 4" in g.describe_thresholds()
