"""The O(items) leave-one-item-out of habit and excess equals recomputing every mean without the item."""

from __future__ import annotations

import numpy as np
import pytest

from blindmcq.analysis import metrics as m


def recomputed(groups, weights, pick, key, y):
    """The definition: each item left out in turn, every mean recomputed over the rest (O(items^2))."""
    item_n = {int(j): n for n, g in groups.items() for j in g}
    at = np.sort(np.concatenate(list(groups.values())))
    rows = [
        m._habit_excess(
            {n: (g[g != j] if n == item_n[int(j)] else g)[None, :] for n, g in groups.items()},
            weights, pick, key, y,
        )
        for j in at
        if groups[item_n[int(j)]].size > 1
    ]  # fmt: skip
    return np.array([float(h[0]) for h, _ in rows]), np.array([float(e[0]) for _, e in rows])


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
    pick = rng.dirichlet(np.ones(5), size=rows)
    key = rng.dirichlet(np.ones(5), size=rows)
    y = rng.random(rows)
    h_fast, e_fast = m._leave_one_out(groups, weights, pick, key, y)
    h_ref, e_ref = recomputed(groups, weights, pick, key, y)
    assert h_fast.shape == h_ref.shape == (sizes[4] + (sizes[5] if sizes[5] > 1 else 0),)
    np.testing.assert_allclose(h_fast, h_ref, rtol=0, atol=1e-12)
    np.testing.assert_allclose(e_fast, e_ref, rtol=0, atol=1e-12)


def test_no_item_can_be_left_out():
    groups = {4: np.array([0]), 5: np.array([1])}
    h, e = m._leave_one_out(groups, {4: 0.5, 5: 0.5}, np.ones((2, 5)) / 5, np.ones((2, 5)) / 5, np.ones(2))
    assert h.size == 0 and e.size == 0
