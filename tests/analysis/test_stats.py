import math

import numpy as np
import pytest
from scipy import stats as sps

from blindmcq import stats


def test_wilson_matches_paper_table3():
    n = 8128
    k = round(0.515 * n)
    lo, hi = stats.wilson(k, n)
    assert f"{lo:.3f}" == "0.504" and f"{hi:.3f}" == "0.526"


def test_wilson_matches_closed_form():
    k, n, z = 37, 120, sps.norm.ppf(0.975)
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    assert stats.wilson(k, n) == pytest.approx((centre - half, centre + half), abs=1e-12)
    value, lo, hi = stats.wilson_columns([k, 0], [n, 0])
    assert hi[0] == pytest.approx(centre + half)
    assert lo[0] == pytest.approx(centre - half) and math.isnan(value[1]) and math.isnan(lo[1])


def test_vectorised_wilson_equals_scipy():
    k = np.array([0, 1, 5, 37, 119, 120, 4186, 8128])
    n = np.array([10, 10, 40, 120, 120, 120, 8128, 8128])
    value, lo, hi = stats.wilson_columns(k, n)
    want = np.array([stats.wilson(a, b) for a, b in zip(k, n, strict=True)])
    assert np.allclose(lo, want[:, 0], atol=1e-12) and np.allclose(hi, want[:, 1], atol=1e-12)
    assert np.allclose(value, k / n)


def test_habit_of_sonnet_published_rates():
    h = stats.habit([0.08, 0.20, 0.30, 0.42], [0.289, 0.248, 0.248, 0.215])
    assert 0.237 <= h <= 0.238
    with pytest.raises(ValueError):
        stats.habit([0.5, 0.5], [1.0])


def test_habit_per_row_is_the_same_definition_and_an_absent_slot_counts_zero():
    """One habit: the per-model-and-N habit of ``metrics.habit_parts`` is ``stats.habit``."""
    import pandas as pd

    pick = pd.DataFrame([[0.08, 0.20, 0.30, 0.42], [0.5, 0.25, 0.25, np.nan]])
    key = pd.DataFrame([[0.289, 0.248, 0.248, 0.215], [0.2, 0.4, 0.4, np.nan]])
    rows = stats.habit(pick, key)
    assert rows.iloc[0] == pytest.approx(stats.habit(pick.iloc[0], key.iloc[0]))
    assert rows.iloc[1] == pytest.approx(0.5 * 0.2 + 0.25 * 0.4 + 0.25 * 0.4)


def test_chance_histogram_paper_figure1():
    hist = stats.chance_histogram(np.full(11990, 4))
    assert f"{hist[8]:.2f}" == "0.18"
    assert hist.sum() == pytest.approx(11990)
    assert np.allclose(hist, 11990 * sps.binom.pmf(np.arange(9), 8, 0.25))


def test_chance_histogram_is_a_mixture_over_items():
    # a third each of 3, 4 and 5 options (300 items): each item its own Binomial(2N, 1/N)
    n_opt = np.repeat([3, 4, 5], 100)
    hist = stats.chance_histogram(n_opt)
    pmfs = [np.pad(sps.binom.pmf(np.arange(2 * n + 1), 2 * n, 1 / n), (0, 10 - 2 * n)) for n in (3, 4, 5)]
    want = 100 * sum(pmfs)
    assert np.allclose(hist, want) and hist.sum() == pytest.approx(300)
    # not one Binomial(10, mean 1/N): that badly misstates the items never solved
    pooled = 300 * sps.binom.pmf(np.arange(11), 10, float(np.mean(1 / n_opt)))
    assert hist[0] > 1.5 * pooled[0]
    uneven = stats.chance_histogram([4, 4], [8, 6])  # an item's own order count
    six = np.pad(sps.binom.pmf(np.arange(7), 6, 0.25), (0, 2))
    assert np.allclose(uneven, sps.binom.pmf(np.arange(9), 8, 0.25) + six)
    with pytest.raises(ValueError):
        stats.chance_histogram([4, 4], [8])


def test_gate_threshold_per_n_at_five_percent():
    # the paper's k = 5 of 8 at N = 4; a content-blind item reaches k with probability <= 0.05
    ks = {n: stats.gate_threshold(2 * n, 1 / n, 0.05) for n in (2, 3, 4, 5, 10)}
    assert ks[4] == 5 and ks[2] is None  # N = 2: even 4 of 4 has p = 1/16
    for n, k in ks.items():
        if k is None:
            continue
        assert sps.binom.sf(k - 1, 2 * n, 1 / n) <= 0.05 < sps.binom.sf(k - 2, 2 * n, 1 / n)
        assert stats.false_rejection_rate(2 * n, 1 / n, k) == pytest.approx(sps.binom.sf(k - 1, 2 * n, 1 / n))
    assert stats.gate_threshold(4, 0.5, 0.07) == 4
    with pytest.raises(ValueError):
        stats.gate_threshold(8, 0.25, 0.0)


def test_smallest_significant_k():
    assert stats.smallest_significant_k(8, 0.25) == 5
    assert stats.smallest_significant_k(8, 0.5) == 7  # P(X>=7)=9/256, P(X>=6)=37/256
    with pytest.raises(ValueError):
        stats.smallest_significant_k(4, 0.5)  # even 4 of 4 has p = 1/16


def test_mcnemar_hand_example():
    # 10 pairs: both right 2, A only 1, B only 6, both wrong 1 -> p = 2 * (1 + 7) / 2**7
    a = [1, 1, 1] + [0] * 6 + [0]
    b = [1, 1, 0] + [1] * 6 + [0]
    res = stats.mcnemar(a, b)
    assert (res.n_pairs, res.b, res.c) == (10, 1, 6)
    assert res.p == pytest.approx(0.125)
    assert stats.mcnemar([1, 0], [1, 0]).p == 1.0
    with pytest.raises(ValueError):
        stats.mcnemar([1, 0], [1])


def test_chance_test_both_directions():
    assert stats.chance_test(5, 8, 0.25) == pytest.approx(sps.binom.sf(4, 8, 0.25))
    assert stats.chance_test(0, 8, 0.25, "less") == pytest.approx(0.75**8)
    assert math.isnan(stats.chance_test(0, 0, 0.25))


def test_pearson_with_fisher_interval():
    x, y = [1, 2, 3, 4, 5], [2, 4, 5, 4, 5]
    c = stats.pearson(x, y)
    assert c.r == pytest.approx(0.7745966692)
    z, se = math.atanh(c.r), 1 / math.sqrt(5 - 3)
    q = sps.norm.ppf(0.975)
    assert (c.lo, c.hi) == pytest.approx((math.tanh(z - q * se), math.tanh(z + q * se)))
    assert math.isnan(stats.pearson([1, 2], [1, 2]).r)
    three = stats.pearson([1, 2, 3], [1, 3, 2])
    assert three.r == pytest.approx(0.5) and math.isnan(three.lo)


def test_wilson_and_mcnemar_agree_with_statsmodels():
    from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar
    from statsmodels.stats.proportion import proportion_confint

    for k, n in [(0, 10), (1, 10), (37, 120), (4186, 8128), (8128, 8128)]:
        assert stats.wilson(k, n) == pytest.approx(proportion_confint(k, n, method="wilson"), abs=1e-12)
        _, lo, hi = stats.wilson_columns([k], [n])
        assert (lo[0], hi[0]) == pytest.approx(proportion_confint(k, n, method="wilson"), abs=1e-12)
    rng = np.random.default_rng(11)
    for _ in range(20):
        a = rng.random(60) < 0.5
        b = rng.random(60) < 0.6
        res = stats.mcnemar(a, b)
        table = [[np.sum(a & b), np.sum(a & ~b)], [np.sum(~a & b), np.sum(~a & ~b)]]
        want = sm_mcnemar(table, exact=True)
        assert res.p == pytest.approx(min(1.0, want.pvalue), abs=1e-12)
