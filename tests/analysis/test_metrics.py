import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps
from simulate import MODELS, SimModel, frame, make_row, simulate

from blindmcq import stats
from blindmcq.analysis import Baseline, analyze, gate, item_sets, prepare, split_halves
from blindmcq.analysis import metrics as m
from blindmcq.errors import InputError


@pytest.fixture(scope="module")
def analysis(predictions):
    g = gate(predictions, gate_model="gate", k=5)
    return analyze(predictions, gate=g, sample_sizes=[200], seed=0)


def test_always_first_has_zero_excess_on_every_set(items):
    # published order only: key shares are far from uniform on the customs bank
    df = simulate(items, MODELS, seed=2, blind_orders=("rot0",), forced=False)
    key0 = float(np.mean([it.key == 0 for it in items]))
    g = gate(simulate(items, MODELS[:1], seed=3), gate_model="gate")
    a = analyze(df, gate=g, sample_sizes=[150], seed=4)
    first = a.summary[a.summary["model"] == "first"].set_index("set")
    assert set(first.index) == {"all", "accepted", "rejected", "sample150"}
    assert np.allclose(first["excess"], 0.0, atol=1e-12)
    assert first.loc["all", "habit"] == pytest.approx(key0)
    assert first.loc["all", "key_0"] == pytest.approx(key0) and key0 > 0.3


def test_habit_and_slot_shares(analysis):
    s = analysis.summary
    picks = s[[f"pick_{i}" for i in range(4)]].sum(axis=1)
    assert np.allclose(picks, 1 - s["blind_unparseable"])
    keys = s[[f"key_{i}" for i in range(4)]].to_numpy()
    assert np.allclose(keys.sum(axis=1), 1.0)
    for row in s.itertuples():
        pick = [getattr(row, f"pick_{i}") for i in range(4)]
        key = [getattr(row, f"key_{i}") for i in range(4)]
        assert row.habit == pytest.approx(stats.habit(pick, key))
        assert row.excess == pytest.approx(row.blind_acc - row.habit)
    good = s[(s["model"] == "good") & (s["set"] == "all")].iloc[0]
    assert good["excess"] > 0.15  # extracts 30% of items


def test_blind_accuracy_matches_counts(analysis, predictions):
    rows = predictions[(predictions["condition"] == "blind") & predictions["forced_slot"].isna()]
    want = rows.groupby("model")["correct"].mean()
    got = analysis.summary[analysis.summary["set"] == "all"].set_index("model")["blind_acc"]
    assert np.allclose(got.sort_index(), want.sort_index())
    # eight orders per item: calls are correlated, so the interval is over item means, at their effective
    # sample size (their spread with one pseudo-item at 0 and one at 1): between the item count (items all
    # agree) and the call count (calls independent); the beta (Clopper-Pearson) quantiles at that size
    for model in ("good", "gate"):
        row = analysis.summary.query("set == 'all' and model == @model").iloc[0]
        item_means = rows[rows["model"] == model].groupby("item_id")["correct"].mean()
        p, m = item_means.mean(), item_means.size
        padded = np.append(item_means.to_numpy(dtype=float), [0.0, 1.0])
        n_eff = np.clip(padded.mean() * (1 - padded.mean()) / (padded.var(ddof=1) / m), m, 8 * m)
        x = p * n_eff
        want = (sps.beta.ppf(0.025, x, n_eff - x + 1), sps.beta.ppf(0.975, x + 1, n_eff - x))
        assert row["blind_ci"] == "item-level" and row["blind_items"] == m
        assert (row["blind_lo"], row["blind_hi"]) == pytest.approx(want)
        wilson = stats.wilson(row["blind_k"], row["blind_n"])
        assert row["blind_hi"] - row["blind_lo"] > wilson[1] - wilson[0]  # wider than calls as independent


def test_forced_placement_content_blind_is_quarter(items):
    blind_models = [SimModel("first", (1, 0, 0, 0), 0, 0), SimModel("habit", (0.1, 0.2, 0.3, 0.4), 0, 0)]
    df = simulate(items, blind_models, seed=5, conditions=("blind",))
    f = m.forced_placement(prepare(df), Baseline()).set_index("model")
    first = f.loc["first"]
    assert first["position_free"] == 0.25 and first["sum"] == 1.0 and first["spread"] == 1.0
    # every item scores exactly 1 of 4 placements: no item-level noise, the interval is that of the calls
    assert first["pf_lo"] < 0.25 < first["pf_hi"] and first["pf_hi"] - first["pf_lo"] < 0.1
    habit = f.loc["habit"]
    assert habit["pf_lo"] < 0.25 < habit["pf_hi"]
    assert habit["acc_3"] > habit["acc_0"]  # the position habit shows in the slot accuracies


def test_forced_placement_sees_extraction(analysis):
    f = analysis.forced[analysis.forced["set"] == "all"].set_index("model")
    # extraction e: position-free = e + (1 - e) / 4 in expectation
    assert f.loc["good", "position_free"] == pytest.approx(0.3 + 0.7 / 4, abs=0.04)
    assert f.loc["good", "n_items"] == 600


def test_agreement_and_gap(analysis):
    assert set(analysis.agreement["set"]) >= {"all", "accepted", "rejected"}
    agree = analysis.agreement[analysis.agreement["set"] == "all"].set_index("model")
    assert agree.loc["gate", "agreement"] == 1.0
    # the null under independence uses both habits: "first" always picks A, so it is the gate's A rate
    gate_a = analysis.summary.query("set == 'all' and model == 'gate'")["pick_0"].iloc[0]
    assert agree.loc["first", "expected"] == pytest.approx(gate_a, abs=0.02)
    assert agree.loc["first", "agreement"] == pytest.approx(agree.loc["first", "expected"], abs=0.03)
    # "good" guesses uniformly on items it does not extract; it agrees above 0.25 only via shared leaks
    assert 0.25 < agree.loc["good", "agreement"] < 0.6
    acc = analysis.summary.pivot(index="model", columns="set", values="blind_acc")
    assert agree.loc["mid", "gap"] == pytest.approx(acc.loc["mid", "rejected"] - acc.loc["mid", "accepted"])
    assert agree.loc["first", "gap"] == pytest.approx(0.0, abs=0.05)


def test_agreement_pairs_on_same_presentation():
    rows = [
        make_row(item_id="a", model="g", order_id="rot0", picked_slot=0, picked_option=0),
        make_row(item_id="a", model="x", order_id="rot0", picked_slot=0, picked_option=0),
        make_row(item_id="a", model="g", order_id="rot1", picked_slot=1, picked_option=2, key_slot=1),
        make_row(item_id="a", model="x", order_id="rot1", picked_slot=0, picked_option=1, key_slot=1),
        make_row(item_id="a", model="x", order_id="rot2", picked_slot=0, picked_option=2),  # no gate call
        make_row(item_id="b", model="g", picked_slot=None, picked_option=None, parse_status="unparseable"),
        make_row(item_id="b", model="x", picked_slot=0, picked_option=0),
    ]
    out = m.agreement(prepare(frame(rows)), Baseline(), "g", seed=0).set_index("model")
    assert out.loc["x", "agreement"] == 0.5 and out.loc["x", "n_pairs"] == 2
    # x picks slot 0 on both paired presentations, g slot 0 on one and 1 on the other
    assert out.loc["x", "expected"] == 0.5 and out.loc["x", "n_items"] == 1


def test_sweeps_and_reasoning(bank):
    sims = [
        SimModel(
            "a",
            (0.25,) * 4,
            0.2,
            0.6,
            effects={"minimal": 0.1, "step": 0.15},
            tokens={"direct": 4, "step": 300},
        ),
        SimModel("b", (0.7, 0.1, 0.1, 0.1), 0.05, 0.5),
    ]
    df = prepare(
        simulate(
            bank[:300],
            sims,
            seed=6,
            phrasings=("original", "minimal"),
            labels=("latin", "cyrillic"),
            reasoning=("direct", "step"),
            forced=False,
        )
    )
    ph = m.sweep(df, Baseline(), "phrasing")
    blind_a = ph[(ph["model"] == "a") & (ph["condition"] == "blind")].set_index("value")["acc"]
    assert blind_a["minimal"] > blind_a["original"]
    sp = m.spread(ph).set_index(["model", "condition"])
    assert sp.loc[("a", "blind"), "spread"] == pytest.approx(blind_a.max() - blind_a.min())
    assert set(m.sweep(df, Baseline(), "labels")["value"]) == {"latin", "cyrillic"}
    r = m.reasoning_modes(df, Baseline(), "direct").set_index(["model", "reasoning"])
    assert r.loc[("a", "step"), "p_blind"] < 0.001 and np.isnan(r.loc[("a", "direct"), "p_blind"])
    assert r.loc[("a", "step"), "output_tokens"] == 300 and r.loc[("b", "direct"), "output_tokens"] == 4
    # the p-value is the exact McNemar test on the paired presentations
    base = Baseline(reasoning=None)
    sel = m.select(df, base, condition="blind")
    sel = sel[sel["model"] == "b"]
    keys = ["item_id", "order_id"]
    pairs = sel[sel["reasoning"] == "step"].merge(sel[sel["reasoning"] == "direct"], on=keys)
    want = stats.mcnemar(pairs["correct_x"], pairs["correct_y"]).p
    assert r.loc[("b", "step"), "p_blind"] == pytest.approx(want)


def test_correlation_same_items_and_halves(analysis):
    c = analysis.correlation.set_index("kind")
    assert c.loc["same items", "n_models"] == 4  # the gate model is left out
    assert c.loc["same items", "r"] > 0.8
    assert np.isfinite(c.loc["disjoint halves", "r"])
    a, b = split_halves([f"x{i}" for i in range(11)], seed=1)
    assert len(a) == 6 and len(b) == 5 and not set(a) & set(b)
    assert split_halves([f"x{i}" for i in range(11)], seed=1) == (a, b)


def test_item_sets_sampling(analysis):
    sets = analysis.sets
    assert len(sets["sample200"]) == 200 and set(sets["sample200"]) <= set(sets["accepted"])
    again = item_sets(analysis.gate, sample_sizes=[200], seed=0)
    assert again["sample200"] == sets["sample200"]
    with pytest.warns(UserWarning, match="sample100000"):
        assert "sample100000" not in item_sets(analysis.gate, sample_sizes=[100000], seed=0)


def test_parsed_accuracy_counts_parsed_only():
    rows = [make_row(item_id=f"i{i}", picked_slot=0) for i in range(3)]
    rows += [make_row(item_id="i9", picked_slot=None, picked_option=None, parse_status="unparseable")]
    out = m.parsed_accuracy(prepare(frame(rows)), Baseline()).iloc[0]
    assert (out["n"], out["unparsed"], out["acc"]) == (3, 1, 1.0)


def test_prepare_names_bad_input():
    with pytest.raises(InputError, match="missing prediction columns"):
        prepare(pd.DataFrame({"item_id": ["a"]}), source="preds.parquet")
    bad = frame([make_row(item_id="zz", key_slot=1, picked_slot=0, correct=True)])
    with pytest.raises(InputError, match="item zz"):
        prepare(bad)
    with pytest.raises(InputError, match="condition"):
        prepare(frame([make_row(condition="half")]))


def test_params_name_the_measurement(analysis):
    p = analysis.params()
    assert p["base.phrasing"] == "original" and p["gate.model"] == "gate" and p["gate.k"] == "5"
    assert p["headline_set"] == "accepted" and p["detail_set"] == "sample200"
    assert p["models"].split(",") == ["first", "gate", "good", "mid", "weak"]


def test_gate_rejecting_nothing_and_full_only(items):
    df = simulate(items[:50], [SimModel("g", (0.25,) * 4, 0.0, 0.5)], seed=8, forced=False)
    g = gate(df, gate_model="g", k=8)
    assert g.rejected == []
    a = analyze(df, gate=g)
    row = a.agreement.iloc[0]
    assert np.isnan(row["gap"]) and row["blind_accepted"] == pytest.approx(a.summary.iloc[0]["blind_acc"])
    full_only = analyze(df[df["condition"] == "full"])
    assert full_only.summary.iloc[0]["chance"] == 0.25 and "habit" not in full_only.summary


def test_sum_says_which_slots_had_no_forced_call(items):
    """Drop every forced3 call of a content-blind picker that prefers slot 3: its Sum is short by that
    slot (about 0.6, not 1), and Table 8 says so instead of printing it as if it were measured."""
    from blindmcq.analysis import analyze, build_tables

    blind_models = [SimModel("first", (0.1, 0.2, 0.3, 0.4), 0, 0)]
    df = prepare(simulate(items, blind_models, seed=5, conditions=("blind",)))
    df = df[~(df["forced_slot"] == 3)]
    f = m.forced_placement(df, Baseline()).set_index("model")
    assert f.loc["first", "missing_slots"] == 1 and f.loc["first", "sum"] == pytest.approx(0.6, abs=0.05)
    assert (
        "Sum leaves out slots with no forced call: first (1 slot)" in build_tables(analyze(df))["table8"].note
    )
