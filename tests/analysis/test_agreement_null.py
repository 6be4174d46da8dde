"""Table 5's null: two pickers independent given the key's slot, from their measured picks. Shared and
opposite position habits, none, balanced and unbalanced keys: the null is the true agreement of
independent pickers (within the interval's width), the interval covers 0 in about 95% of banks, and a
shared leak (the same items known by both) lies above it."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps
from simulate import SimModel, simulate

from blindmcq import stats
from blindmcq.analysis import analyze, build_tables, gate

SHARED = {"ha": (0.7, 0.1, 0.1, 0.1), "hb": (0.7, 0.1, 0.1, 0.1)}
OPPOSITE = {"ha": (0.7, 0.1, 0.1, 0.1), "hb": (0.1, 0.1, 0.1, 0.7)}
NONE = {"ha": (0.25,) * 4, "hb": (0.25,) * 4}
UNBALANCED = (0.4, 0.2, 0.2, 0.2)


def pickers(rng, m, *, ha, hb, a=0.3, b=0.3, keys=(0.25,) * 4, orders=8, shared=False):
    """Paired calls of two pickers over m items and ``orders`` rotations: each knows an item (picks the key
    in every order) with probability a (b), independently unless ``shared``, else picks by its habit."""
    key = rng.choice(4, m, p=keys)
    know_a = rng.random(m) < a
    know_b = know_a if shared else rng.random(m) < b
    item = np.repeat(np.arange(m), orders)
    slot = (np.repeat(key, orders) + np.tile(np.arange(orders) % 4, m)) % 4
    pick_a = np.where(np.repeat(know_a, orders), slot, rng.choice(4, item.size, p=ha))
    pick_b = np.where(np.repeat(know_b, orders), slot, rng.choice(4, item.size, p=hb))
    return item, np.full(item.size, 4), slot, pick_a, pick_b


def true_agreement(ha, hb, a=0.3, b=0.3, keys=(0.25,) * 4, orders=8) -> float:
    """Exact agreement of independent pickers: over the key's slot (the keys' shares rotated by the
    orders), sum_s P_a(s|k) P_b(s|k) with P(s|k) = knows [s = k] + (1 - knows) habit(s)."""
    q = np.mean([np.roll(keys, r % 4) for r in range(orders)], axis=0)
    eye = np.eye(4)
    pa = a * eye + (1 - a) * np.asarray(ha)[None, :]
    pb = b * eye + (1 - b) * np.asarray(hb)[None, :]
    return float(q @ (pa * pb).sum(axis=1))


def test_the_issue_figures() -> None:
    assert true_agreement(**SHARED) == pytest.approx(0.450, abs=0.0005)
    # one order, keys unbalanced: the slot shares are the keys' own
    assert true_agreement(**SHARED, keys=UNBALANCED, orders=1) == pytest.approx(0.488, abs=0.0005)


@pytest.mark.parametrize("habits", [SHARED, OPPOSITE, NONE], ids=["shared", "opposite", "none"])
@pytest.mark.parametrize("keys", [(0.25,) * 4, UNBALANCED], ids=["balanced", "unbalanced"])
def test_null_is_the_agreement_of_independent_pickers(habits, keys) -> None:
    rng = np.random.default_rng(5)
    r = stats.agreement_given_key(*pickers(rng, 4000, keys=keys, orders=1, **habits), n_boot=400, seed=0)
    truth = true_agreement(**habits, keys=keys, orders=1)
    assert r.lo <= 0 <= r.hi and r.hi - r.lo < 0.03
    assert abs(r.expected - truth) < r.hi - r.lo and abs(r.agreement - truth) < r.hi - r.lo
    old = 0.3 * 0.3 + (1 - 0.3) * (1 - 0.3) / 3  # a g + (1-a)(1-g)/(N-1) with a, g the accuracies
    if habits is SHARED:
        assert r.expected > old + 0.1  # the old null would call this shared habit a shared leak


def test_interval_covers_zero_for_independent_pickers() -> None:
    rng = np.random.default_rng(11)
    covered = total = 0
    for habits in (SHARED, OPPOSITE, NONE):
        for rep in range(40):
            r = stats.agreement_given_key(*pickers(rng, 60, **habits), n_boot=400, seed=rep)
            covered += r.lo <= 0 <= r.hi
            total += 1
    assert covered / total >= 0.88  # nominal 0.95; 120 banks of 60 items, as the default run's 60 pairs


def test_a_shared_leak_lies_above_the_null() -> None:
    rng = np.random.default_rng(3)
    r = stats.agreement_given_key(*pickers(rng, 300, shared=True, **SHARED), n_boot=400, seed=0)
    assert r.lo > 0.1 and r.items == 300 and r.pairs == 2400


def test_one_item_per_n_has_no_interval() -> None:
    r = stats.agreement_given_key(["i"] * 4, [4] * 4, [0, 1, 2, 3], [0, 0, 0, 0], [0, 1, 0, 0], seed=0)
    assert r.agreement == 0.75 and np.isnan(r.lo) and np.isnan(r.hi)


def test_table5_shows_the_null_and_the_gap(bank) -> None:
    models = [
        SimModel("gate", (0.7, 0.1, 0.1, 0.1), 0.0, 0.5),
        SimModel("same-habit", (0.7, 0.1, 0.1, 0.1), 0.0, 0.5),
    ]
    preds = simulate(bank[:200], models, seed=2, forced=False, conditions=("blind",))
    a = analyze(preds, gate=gate(preds, gate_model="gate"), sample_sizes=[])
    row = a.agreement.query("set == 'all' and model == 'same-habit'").iloc[0]
    truth = true_agreement(ha=models[0].habit, hb=models[1].habit, a=0.0, b=0.0)
    assert row["expected"] == pytest.approx(truth, abs=0.02)
    assert row["agreement_lo"] <= 0 <= row["agreement_hi"]
    shown = build_tables(a)["table5"].shown.set_index("Model").loc["same-habit"]
    assert shown["Expected, independent given the key's slot"] == f"{row['expected']:.3f}"
    assert shown["Agreement - expected [95% CI]"].startswith(f"{row['agreement_gap']:+.3f} [")


def test_bootstrap_draws_are_one_generator_over_the_strata_and_reused_unchanged() -> None:
    """The cached counts are the seeded generator's multinomial draws, stratum after stratum, and a
    repeated call (a later model on the same items) gets the same interval, whatever ran between."""
    rng = np.random.default_rng(0)
    want = [rng.multinomial(m, np.full(m, 1.0 / m), size=50) for m in (7, 3)]
    got = stats._boot_counts(0, 50, (7, 3))
    assert all(np.array_equal(g, w) for g, w in zip(got, want, strict=True))
    assert not got[0].flags.writeable  # shared between calls: nobody may scale it in place
    bank = pickers(np.random.default_rng(9), 80, **SHARED)
    first = stats.agreement_given_key(*bank, n_boot=300, seed=4)
    stats.agreement_given_key(*bank, n_boot=300, seed=5)
    stats._boot_counts.cache_clear()
    assert stats.agreement_given_key(*bank, n_boot=300, seed=4) == first
    assert stats.agreement_given_key(*bank, n_boot=300, seed=4) == first


def test_resized_draws_are_a_multinomial_over_the_paired_items() -> None:
    """A draw over a universe of 6 items, resized to a pairing's 4, is Multinomial(4, 1/4): every row
    holds 4 balls and the rows' compositions follow the multinomial's probabilities (thinned rows and
    topped-up rows both among them); a pairing of the whole universe gets the draw itself."""
    counts = np.random.default_rng(1).multinomial(6, np.full(6, 1 / 6), size=40_000)
    first = counts[:, :4].sum(axis=1)
    assert (first > 4).any() and (first < 4).any()
    rows, slots, change = stats._resize_delta(counts, 4, np.random.default_rng(2))
    out = counts[:, :4].astype(int)
    np.add.at(out, (rows, slots), change)
    assert out.shape == (40_000, 4) and (out.sum(axis=1) == 4).all() and (out >= 0).all()
    assert (out[first == 4] == counts[first == 4, :4]).all()  # rows with 4 balls already stay as drawn
    outcomes, seen = np.unique(out, axis=0, return_counts=True)
    want = sps.multinomial.pmf(outcomes, 4, np.full(4, 0.25)) * len(out)
    assert len(outcomes) == 35  # every composition of 4 balls over 4 slots
    assert sps.chisquare(seen, want).pvalue > 0.001
    assert all(x.size == 0 for x in stats._resize_delta(counts, 6, np.random.default_rng(2)))


def test_thinning_takes_distinct_balls_uniformly() -> None:
    """A row of 9 balls in the first 2 slots (8 and 1) thinned to 2: the lone ball in slot 1 survives with
    probability C(8, 1) / C(9, 2) = 8/36 (distinct balls drawn uniformly), so slot 1 keeps 1 ball in about
    2/9 of the draws, never 2."""
    counts = np.tile([8, 1, 0], (20_000, 1))
    rows, slots, change = stats._resize_delta(counts, 2, np.random.default_rng(5))
    out = counts[:, :2].copy()
    np.add.at(out, (rows, slots), change)
    assert (out.sum(axis=1) == 2).all() and (out >= 0).all() and set(out[:, 1]) == {0, 1}
    assert abs(out[:, 1].mean() - 8 / 36) < 0.01


def test_a_universe_as_large_as_the_pairs_keeps_the_draws() -> None:
    rng = np.random.default_rng(8)
    item, n_opt, key, a, b = pickers(rng, 90, **SHARED)
    n_opt = np.where(item % 3 == 0, 3, n_opt)  # a mixed bank: two strata drawn from one generator
    key, a, b = key % n_opt, a % n_opt, b % n_opt
    bank = (item, n_opt, key, a, b)
    plain = stats.agreement_given_key(*bank, n_boot=300, seed=2)
    assert stats.agreement_given_key(*bank, n_boot=300, seed=2, universe={3: 30, 4: 60}) == plain
    assert np.isfinite(plain.lo) and plain.items == 90


def test_a_larger_universe_keeps_the_point_and_the_interval_within_its_noise() -> None:
    """Paired on 500 of the reference's 520 items: the point is the pairs' own, and the interval from the
    shared, resized draws is the one of a draw over the 500 items alone up to the bootstrap's noise."""
    item, n_opt, key, a, b = pickers(np.random.default_rng(4), 520, **SHARED, a=0.5, b=0.5)
    keep = item < 500
    bank = tuple(x[keep] for x in (item, n_opt, key, a, b))
    own = stats.agreement_given_key(*bank, seed=3)
    shared = stats.agreement_given_key(*bank, seed=3, universe={4: 520})
    assert (shared.agreement, shared.expected, shared.gap, shared.items) == (
        own.agreement, own.expected, own.gap, own.items,
    )  # fmt: skip
    width = own.hi - own.lo
    assert (shared.lo, shared.hi) != (own.lo, own.hi)
    assert abs(shared.lo - own.lo) < 0.15 * width and abs(shared.hi - own.hi) < 0.15 * width


def test_a_universe_smaller_than_the_pairs_is_refused() -> None:
    bank = pickers(np.random.default_rng(0), 20, **SHARED)
    with pytest.raises(ValueError, match="20 paired items of 4 options, but a draw universe of 19"):
        stats.agreement_given_key(*bank, seed=0, universe={4: 19})


def test_table5_draws_once_over_the_gate_items(bank, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every model's pairing is drawn over the gate's answered items: one answering all of them gets the
    interval of a draw over its own pairs; one that failed on some items is paired on fewer, its draw
    resized from the same one."""
    models = [
        SimModel("gate", (0.7, 0.1, 0.1, 0.1), 0.0, 0.5),
        SimModel("whole", (0.4, 0.2, 0.2, 0.2), 0.0, 0.5),
        SimModel("failing", (0.4, 0.2, 0.2, 0.2), 0.0, 0.5, unparseable=0.3),
    ]
    preds = simulate(bank[:120], models, seed=6, forced=False, conditions=("blind",))
    lost = preds["item_id"].isin([it.id for it in bank[:10]]) & (preds["model"] == "failing")
    preds = preds[~lost]  # "failing" never answered 10 of the items
    calls: list[tuple[tuple, dict]] = []
    real = stats.agreement_given_key

    def spy(*args, **kwargs):
        calls.append((args, kwargs))
        return real(*args, **kwargs)

    monkeypatch.setattr(stats, "agreement_given_key", spy)
    a = analyze(preds, gate=gate(preds, gate_model="gate"), sample_sizes=[])
    rows = a.agreement.query("set == 'all'").set_index("model")
    by_model = {r.model: r for r in a.agreement.query("set == 'all'").itertuples()}
    assert set(by_model) == {"gate", "whole", "failing"} and by_model["failing"].n_items == 110
    universes = {tuple(sorted(kw["universe"].items())) for _, kw in calls[:3]}  # set "all" comes first
    assert universes == {((4, 120),)}
    for args, kwargs in calls[:3]:
        own = real(*args, **{**kwargs, "universe": None})
        model = next(
            m for m, r in by_model.items() if r.n_pairs == own.pairs and r.agreement == own.agreement
        )
        got = rows.loc[model]
        assert got["n_items"] == own.items
        if own.items == 120:
            assert (got["agreement_lo"], got["agreement_hi"]) == (own.lo, own.hi)
        else:
            assert model == "failing" and (got["agreement_lo"], got["agreement_hi"]) != (own.lo, own.hi)
