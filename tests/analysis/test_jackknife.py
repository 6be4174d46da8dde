"""The O(items) leave-one-item-out of habit and excess equals recomputing every mean without the item,
and the bincount resampler draws items with replacement as indexing would."""

from __future__ import annotations

import numpy as np
import pytest

from blindmcq.analysis import metrics as m

SLOTS = 5


def recomputed(groups, weights, x):
    """The definition: each item left out in turn, every mean recomputed over the rest (O(items^2))."""
    item_n = {int(j): n for n, g in groups.items() for j in g}
    at = np.sort(np.concatenate(list(groups.values())))

    def without(j):
        return {
            n: x[g[g != j] if n == item_n[int(j)] else g].mean(axis=0, keepdims=True)
            for n, g in groups.items()
        }

    rows = [m._habit_values(without(j), weights, SLOTS)[0] for j in at if groups[item_n[int(j)]].size > 1]
    return np.array(rows)


@pytest.mark.parametrize("seed", range(5))
def test_leave_one_out_matches_the_definition(seed):
    rng = np.random.default_rng(seed)
    sizes = {4: int(rng.integers(2, 60)), 5: int(rng.integers(1, 30)), 3: 1}  # N = 3 holds one item: kept
    at = rng.permutation(sum(sizes.values()) + 7)[: sum(sizes.values())] + 3  # gaps, as a model's rows
    at.sort()
    groups = {}
    rest = at.copy()
    for n, size in sizes.items():
        groups[n] = np.sort(rng.choice(rest, size=size, replace=False))
        rest = np.setdiff1d(rest, groups[n])
    weights = {n: g.size / at.size for n, g in groups.items()}
    rows = int(at.max()) + 1
    x = np.column_stack(
        [rng.dirichlet(np.ones(SLOTS), size=rows), rng.dirichlet(np.ones(SLOTS), size=rows), rng.random(rows)]
    )
    fast = m._leave_one_out(groups, weights, x, SLOTS)
    ref = recomputed(groups, weights, x)
    assert fast.shape == ref.shape == (sizes[4] + (sizes[5] if sizes[5] > 1 else 0), len(m.HABIT_STATS))
    np.testing.assert_allclose(fast, ref, rtol=0, atol=1e-12)


def test_no_item_can_be_left_out():
    groups = {4: np.array([0]), 5: np.array([1])}
    x = np.column_stack([np.ones((2, SLOTS)) / SLOTS, np.ones((2, SLOTS)) / SLOTS, np.ones(2)])
    assert m._leave_one_out(groups, {4: 0.5, 5: 0.5}, x, SLOTS).shape == (0, len(m.HABIT_STATS))


def test_resampled_means_are_means_over_items_drawn_with_replacement():
    """Each resample's mean is a mean of whole items' rows (the counts sum to the item count), and over
    many resamples it centres on the items' mean with the bootstrap's variance, var / m."""
    rng = np.random.default_rng(3)
    x = rng.random((40, 3))
    means = m._resampled_means(x, 4000, np.random.default_rng(0))
    assert means.shape == (4000, 3)
    np.testing.assert_allclose(means.mean(axis=0), x.mean(axis=0), atol=4 * x.std(axis=0).max() / 40 / 8)
    np.testing.assert_allclose(means.var(axis=0), x.var(axis=0) / 40, rtol=0.1)
    # one resample of one item: the item itself
    assert np.array_equal(m._resampled_means(x[:1], 3, rng), np.repeat(x[:1], 3, axis=0))
