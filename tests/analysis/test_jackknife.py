"""The O(items) leave-one-item-out of habit and excess equals recomputing every mean without the item,
and the bincount resampler draws items with replacement as indexing would."""

from __future__ import annotations

import numpy as np
import pytest

from blindmcq.analysis import metrics as m

SLOTS = 5


def recomputed(groups, weights):
    """The definition: each item left out in turn, every mean recomputed over the rest (O(items^2))."""
    rows = []
    for n, g in groups.items():
        if g.shape[1] < 2:
            continue
        for j in range(g.shape[1]):
            means = {k: v[0].mean(axis=0, keepdims=True) for k, v in groups.items()}
            means[n] = np.delete(g[0], j, axis=0).mean(axis=0, keepdims=True)
            rows.append(m._habit_values(means, weights, SLOTS)[0])
    return np.array(rows)


def rows_of(rng, size):
    return np.column_stack(
        [rng.dirichlet(np.ones(SLOTS), size=size), rng.dirichlet(np.ones(SLOTS), size=size), rng.random(size)]
    )


@pytest.mark.parametrize("seed", range(5))
def test_leave_one_out_matches_the_definition(seed):
    rng = np.random.default_rng(seed)
    sizes = {4: int(rng.integers(2, 60)), 5: int(rng.integers(1, 30)), 3: 1}  # N = 3 holds one item: kept
    groups = {n: rows_of(rng, size)[None] for n, size in sizes.items()}
    weights = {n: size / sum(sizes.values()) for n, size in sizes.items()}
    fast = m._leave_one_out(groups, weights, SLOTS)
    ref = recomputed(groups, weights)
    assert fast.shape == (1, sizes[4] + (sizes[5] if sizes[5] > 1 else 0), len(m.HABIT_STATS))
    np.testing.assert_allclose(fast[0], ref, rtol=0, atol=1e-12)


def test_leave_one_out_of_stacked_models_is_each_model_alone():
    rng = np.random.default_rng(9)
    stacked = {
        4: np.stack([rows_of(rng, 30) for _ in range(3)]),
        5: np.stack([rows_of(rng, 7) for _ in range(3)]),
    }
    weights = {4: 30 / 37, 5: 7 / 37}
    together = m._leave_one_out(stacked, weights, SLOTS)
    for i in range(3):
        alone = m._leave_one_out({n: g[i : i + 1] for n, g in stacked.items()}, weights, SLOTS)
        np.testing.assert_allclose(together[i], alone[0], rtol=0, atol=1e-12)


def test_no_item_can_be_left_out():
    x = np.column_stack([np.ones((2, SLOTS)) / SLOTS, np.ones((2, SLOTS)) / SLOTS, np.ones(2)])
    groups = {4: x[None, :1], 5: x[None, 1:]}
    assert m._leave_one_out(groups, {4: 0.5, 5: 0.5}, SLOTS).shape == (1, 0, len(m.HABIT_STATS))


def test_resampled_means_are_means_over_items_drawn_with_replacement():
    """Each resample's mean is a mean of whole items' rows, the same draws for every model stacked, and
    over many resamples it centres on the items' mean with the bootstrap's variance, var / m."""
    rng = np.random.default_rng(3)
    x = rng.random((2, 40, 3))
    means = m._resampled_means(x, 4000, np.random.default_rng(0))
    assert means.shape == (2, 4000, 3)
    np.testing.assert_allclose(means[0].mean(axis=0), x[0].mean(axis=0), atol=4 * x.std() / 40 / 8)
    np.testing.assert_allclose(means[0].var(axis=0), x[0].var(axis=0) / 40, rtol=0.1)
    # the same draws for both models: a model whose rows are the other's doubled has doubled means
    twice = m._resampled_means(np.stack([x[0], 2 * x[0]]), 50, np.random.default_rng(1))
    np.testing.assert_allclose(twice[1], 2 * twice[0])
    # one resample of one item: the item itself
    assert np.array_equal(m._resampled_means(x[:1, :1], 3, rng)[0], np.repeat(x[0, :1], 3, axis=0))
