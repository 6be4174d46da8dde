"""The statistics the paper reports (SPEC, "Statistics"), as small functions over counts and arrays.

Every interval is two-sided 95% unless a ``confidence`` argument says otherwise. Chance is ``1/N``.
Where scipy has the test, it is scipy's: these wrappers only fix the conventions (two-sided McNemar,
Wilson without continuity correction, Fisher-z interval for Pearson r) and the degenerate cases.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, overload

import numpy as np
import pandas as pd
from scipy import special
from scipy import stats as sps

CONFIDENCE = 0.95


@dataclass(frozen=True)
class Proportion:
    """``k`` successes of ``n`` with a Wilson interval; all NaN when ``n`` is 0."""

    k: int
    n: int
    value: float
    lo: float
    hi: float


def wilson(k: int, n: int, confidence: float = CONFIDENCE) -> tuple[float, float]:
    """Wilson score interval for ``k`` of ``n`` (scipy's ``binomtest(...).proportion_ci``)."""
    if n <= 0:
        return (math.nan, math.nan)
    ci = sps.binomtest(int(k), int(n)).proportion_ci(confidence_level=confidence, method="wilson")
    lo, hi = contain(k / n, ci.low, ci.high)
    return (float(lo), float(hi))


def contain(
    p: float | np.ndarray, lo: float | np.ndarray, hi: float | np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Bounds widened to hold the estimate ``p`` and clipped to [0, 1]: at k = 0 or k = n the closed
    form lands one rounding step inside the estimate (hi = 0.9999999999999999 at p = 1), which would
    give an interval that misses its own point and a negative error bar. NaN stays NaN."""
    with np.errstate(invalid="ignore"):
        return np.clip(np.minimum(lo, p), 0.0, 1.0), np.clip(np.maximum(hi, p), 0.0, 1.0)


def accuracy(k: int, n: int, confidence: float = CONFIDENCE) -> Proportion:
    """Accuracy ``k/n`` with its Wilson interval."""
    lo, hi = wilson(k, n, confidence)
    return Proportion(int(k), int(n), k / n if n > 0 else math.nan, lo, hi)


def wilson_columns(k: Sequence[int] | np.ndarray, n: Sequence[int] | np.ndarray) -> tuple[np.ndarray, ...]:
    """Value, lower and upper 95% Wilson bound for arrays of counts (NaN where n is 0).

    The closed form scipy's ``proportion_ci(method="wilson")`` evaluates, vectorised: binomtest
    also computes an exact p-value per call, which dominates the cost over hundreds of groups.
    Tests check both agree.
    """
    k_arr = np.asarray(k, dtype=float)
    n_arr = np.asarray(n, dtype=float)
    z = sps.norm.ppf(0.5 + CONFIDENCE / 2)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = np.where(n_arr > 0, k_arr / n_arr, np.nan)
        centre = (k_arr + z * z / 2) / (n_arr + z * z)
        half = z * np.sqrt(n_arr * p * (1 - p) + z * z / 4) / (n_arr + z * z)
    return (p, *contain(p, centre - half, centre + half))


@dataclass(frozen=True)
class McNemar:
    """Exact McNemar test: ``b`` = pairs right only under A, ``c`` = right only under B."""

    n_pairs: int
    b: int
    c: int
    p: float


def mcnemar(correct_a: Sequence[bool] | np.ndarray, correct_b: Sequence[bool] | np.ndarray) -> McNemar:
    """Two-sided exact McNemar test on paired outcomes (binomial test of ``b`` in ``b + c`` at 1/2).

    With no discordant pair the two conditions cannot be told apart and p is 1.
    """
    a = np.asarray(correct_a, dtype=bool)
    b_arr = np.asarray(correct_b, dtype=bool)
    if a.shape != b_arr.shape:
        raise ValueError(f"paired outcomes differ in length: {a.shape} vs {b_arr.shape}")
    b = int(np.sum(a & ~b_arr))
    c = int(np.sum(~a & b_arr))
    p = 1.0 if b + c == 0 else float(sps.binomtest(b, b + c, 0.5).pvalue)
    return McNemar(int(a.size), b, c, p)


def chance_test(k: int, n: int, chance: float, alternative: Literal["greater", "less"] = "greater") -> float:
    """One-sided exact binomial p-value of ``k`` of ``n`` against ``chance`` (above or below it)."""
    if n <= 0:
        return math.nan
    return float(sps.binomtest(int(k), int(n), chance, alternative=alternative).pvalue)


def _options_and_orders(
    n_options: Sequence[int] | np.ndarray, n_orders: Sequence[int] | np.ndarray | None
) -> tuple[np.ndarray, np.ndarray]:
    """Per item: option count and order count (default 2N, the design), checked to pair up."""
    n_opt = np.asarray(n_options, dtype=int)
    orders = 2 * n_opt if n_orders is None else np.asarray(n_orders, dtype=int)
    if n_opt.shape != orders.shape:
        raise ValueError(f"option and order counts differ in length: {n_opt.shape} vs {orders.shape}")
    return n_opt, orders


def chance_histogram(
    n_options: Sequence[int] | np.ndarray, n_orders: Sequence[int] | np.ndarray | None = None
) -> np.ndarray:
    """Expected number of items answered blind in 0..max(orders) orders if every pick were chance.

    A mixture over items: item i contributes Binomial(orders_i, 1/N_i) (orders default to 2N_i, the
    design), so a bank of mixed option counts is not treated as one Binomial at the mean of 1/N.
    """
    n_opt, orders = _options_and_orders(n_options, n_orders)
    if n_opt.size == 0:
        return np.zeros(1)
    top = int(orders.max())
    out = np.zeros(top + 1)
    pairs, counts = np.unique(np.stack([n_opt, orders], axis=1), axis=0, return_counts=True)
    for (n, m), c in zip(pairs, counts, strict=True):  # one pmf per distinct (N, orders), not per item
        out[: m + 1] += c * sps.binom.pmf(np.arange(m + 1), m, 1.0 / n)
    return out


def consistent_histogram(
    n_options: Sequence[int] | np.ndarray, n_orders: Sequence[int] | np.ndarray | None = None
) -> np.ndarray:
    """Expected number of items answered blind in 0..max(orders) orders by a content-blind picker that
    picks the same option in every order: item i is solved in all its orders with probability 1/N_i
    (its one pick is the key), else in none. The null of a deterministic gate, beside
    ``chance_histogram``'s picker that redraws in each order."""
    n_opt, orders = _options_and_orders(n_options, n_orders)
    if n_opt.size == 0:
        return np.zeros(1)
    out = np.zeros(int(orders.max()) + 1)
    np.add.at(out, orders, 1.0 / n_opt)
    out[0] += float((1.0 - 1.0 / n_opt).sum())
    return out


def smallest_significant_k(n_orders: int = 8, chance: float = 0.25, alpha: float = 0.05) -> int:
    """Smallest count k with one-sided P(X >= k) < alpha for X ~ Binomial(n_orders, chance).

    For 8 orders at chance 0.25 this is 5 (P(X >= 5) = 0.027; P(X >= 4) = 0.114).
    """
    k = gate_threshold(n_orders, chance, alpha, strict=True)
    if k is None:
        raise ValueError(f"no k of {n_orders} orders reaches p < {alpha} at chance {chance}")
    return k


def gate_threshold(
    n_orders: int, chance: float, false_rejection: float, *, strict: bool = False
) -> int | None:
    """Smallest k with P(X >= k) <= false_rejection for X ~ Binomial(n_orders, chance), or None.

    None means no count of ``n_orders`` is that unlikely under chance: such an item cannot be
    rejected at this rate (N = 2 over 4 orders: P(4 of 4) = 0.0625 > 0.05). ``strict`` uses ``<``.
    """
    if not 0 < false_rejection < 1:
        raise ValueError(f"false-rejection rate must be in (0, 1), got {false_rejection}")
    tail = sps.binom.sf(np.arange(n_orders + 1) - 1, n_orders, chance)  # P(X >= k) for k = 0..n
    below = np.flatnonzero(tail < false_rejection if strict else tail <= false_rejection)
    return int(below[0]) if below.size else None


def false_rejection_rate(n_orders: int, chance: float, k: int) -> float:
    """P(X >= k) for X ~ Binomial(n_orders, chance): the share of chance-level items a gate at k rejects."""
    return float(sps.binom.sf(k - 1, n_orders, chance))


def count_test(observed: int, probabilities: Sequence[float] | np.ndarray) -> tuple[float, float]:
    """Expected count and one-sided exact p-value P(X >= observed) for X the number of events among
    independent units, unit i having probability ``probabilities[i]`` (a Poisson-binomial: the
    convolution of one Binomial per distinct probability, so one probability is the binomial test)."""
    q = np.asarray(probabilities, dtype=float)
    if q.size == 0:
        return (0.0, math.nan)
    pmf = np.ones(1)
    values, sizes = np.unique(q, return_counts=True)
    for value, size in zip(values, sizes, strict=True):
        pmf = np.convolve(pmf, sps.binom.pmf(np.arange(size + 1), size, value))
    return (float(q.sum()), float(min(1.0, pmf[max(int(observed), 0) :].sum())))


@overload
def habit(pick_rates: pd.DataFrame, key_rates: pd.DataFrame) -> pd.Series: ...
@overload
def habit(pick_rates: Sequence[float] | np.ndarray, key_rates: Sequence[float] | np.ndarray) -> float: ...
def habit(pick_rates: Any, key_rates: Any) -> float | pd.Series:
    """Score the answer-position distribution alone earns: sum over slots of pick rate x key rate (SPEC,
    "Habit"; the one definition, ``metrics.habit_parts`` calls it). Frames with one column a slot give
    one habit a row (per model and N), a slot an N lacks (NaN) counting 0."""
    if isinstance(pick_rates, pd.DataFrame):
        return (pick_rates * key_rates).sum(axis=1)
    p = np.asarray(pick_rates, dtype=float)
    q = np.asarray(key_rates, dtype=float)
    if p.shape != q.shape:
        raise ValueError(f"pick and key rates differ in slots: {p.shape} vs {q.shape}")
    return float(np.dot(p, q))


@dataclass(frozen=True)
class Correlation:
    """Pearson r with its Fisher-z interval and two-sided p; NaN where n is too small."""

    r: float
    lo: float
    hi: float
    p: float
    n: int


def pearson(x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray) -> Correlation:
    """Pearson r across paired values (scipy.stats.pearsonr); the interval needs n >= 4."""
    xa = np.asarray(x, dtype=float)
    ya = np.asarray(y, dtype=float)
    keep = ~(np.isnan(xa) | np.isnan(ya))
    xa, ya = xa[keep], ya[keep]
    n = int(xa.size)
    if n < 3 or np.ptp(xa) == 0 or np.ptp(ya) == 0:
        return Correlation(math.nan, math.nan, math.nan, math.nan, n)
    res = sps.pearsonr(xa, ya)
    lo = hi = math.nan
    if n >= 4:
        ci = res.confidence_interval(confidence_level=CONFIDENCE)
        lo, hi = float(ci.low), float(ci.high)
    return Correlation(float(res.statistic), lo, hi, float(res.pvalue), n)


def item_share_bounds(
    mean: np.ndarray | pd.Series,
    std: np.ndarray | pd.Series,
    items: np.ndarray | pd.Series,
    calls: np.ndarray | pd.Series,
    confidence: float = CONFIDENCE,
) -> tuple[np.ndarray, np.ndarray]:
    """Vectorised 95% bounds of a mean of ``items`` item-level shares (``std`` their standard deviation,
    ``calls`` the calls behind them): the beta (Clopper-Pearson) interval at the items' effective sample
    size (:func:`effective_size`). NaN where ``items`` < 2.

    Calls of one item are correlated, so the items' own spread says how many independent calls they are
    worth. The effective size counts one pseudo-item at 0 and one at 1 in that spread: a sample that has
    not yet met the rare items of a bank mixing easy and hard ones would otherwise claim a size near the
    call count and an interval too narrow near 0 and 1. The beta interval, not Wilson's, because Wilson
    itself covers under 0.94 of a binomial share of 0.05 at 340 (docs/statistics.md has the grid)."""
    p = np.asarray(mean, dtype=float)
    sd = np.asarray(std, dtype=float)
    m = np.asarray(items, dtype=float)
    total = np.maximum(np.asarray(calls, dtype=float), m)
    with np.errstate(invalid="ignore", divide="ignore"):
        squares = (m - 1) * np.nan_to_num(sd) ** 2  # the items' sum of squares about their mean
        p_aug = (m * p + 1) / (m + 2)
        squares_aug = squares + m * (p - p_aug) ** 2 + p_aug**2 + (1 - p_aug) ** 2
        n_eff = effective_size(p_aug, squares_aug / ((m + 1) * m), m, total)
        lo, hi = beta_bounds(p, n_eff, confidence)
    return np.where(m >= 2, lo, np.nan), np.where(m >= 2, hi, np.nan)


def effective_size(p: np.ndarray, variance: np.ndarray, items: np.ndarray, calls: np.ndarray) -> np.ndarray:
    """Independent calls a share ``p`` whose estimate has ``variance`` is worth, ``p(1 - p) / variance``,
    clipped to [``items``, ``calls``]: never more than the calls, never fewer than the items, since a
    mean of shares in [0, 1] has at most a binomial share's variance over its items."""
    with np.errstate(invalid="ignore", divide="ignore"):
        raw = np.where(variance > 0, p * (1 - p) / variance, calls)
    return np.clip(raw, items, calls)


def beta_bounds(
    p: float | np.ndarray, n: float | np.ndarray, confidence: float = CONFIDENCE
) -> tuple[np.ndarray, np.ndarray]:
    """Clopper-Pearson bounds of a share ``p`` of ``n`` (which may be an effective, non-whole size): the
    beta quantiles at ``x = p n`` successes, 0 below ``x = 0`` and 1 above ``x = n``; inside [0, 1]."""
    p_arr, n_arr = np.broadcast_arrays(np.asarray(p, dtype=float), np.asarray(n, dtype=float))
    x = p_arr * n_arr
    tail = (1 - confidence) / 2
    with np.errstate(invalid="ignore", divide="ignore"):
        lo = np.where(x > 0, sps.beta.ppf(tail, np.maximum(x, 1e-12), n_arr - x + 1), 0.0)
        hi = np.where(x < n_arr, sps.beta.ppf(1 - tail, x + 1, np.maximum(n_arr - x, 1e-12)), 1.0)
    bad = ~np.isfinite(x)
    lo, hi = contain(p_arr, lo, hi)
    return np.where(bad, np.nan, lo), np.where(bad, np.nan, hi)


def expanded_quantile(items: float | np.ndarray, confidence: float = CONFIDENCE) -> float | np.ndarray:
    """The two-sided normal quantile expanded for a mean of ``items`` (m) items: sqrt(m/(m-1)) t(m-1)
    (Hesterberg's expansion), since a spread estimated from m items is too narrow by that much."""
    m = np.asarray(items, dtype=float)
    z = np.sqrt(m / (m - 1)) * sps.t.ppf(0.5 + confidence / 2, m - 1)
    return float(z) if z.ndim == 0 else z


@dataclass(frozen=True)
class ClusteredProportion:
    """A proportion over calls grouped by item, with the Rao-Scott design effect.

    ``deff`` is the ratio of the item-clustered (sandwich) variance to the binomial one; ``n_eff =
    calls / deff`` is the number of independent calls the data are worth, clipped to [items, calls]
    (:func:`effective_size`), with one pseudo-item at 0 and one at 1 (each of the mean call count) in
    the clustered variance, as :func:`item_share_bounds` does. The interval is the beta one at
    ``n_eff``: items answered the same in every order get an interval at the item count, not the
    call count; with equal calls per item it is :func:`item_share_bounds`'s.
    """

    value: float
    lo: float
    hi: float
    calls: int
    items: int
    n_eff: float
    deff: float


def clustered_proportion(
    correct: Sequence[float] | np.ndarray | pd.Series,
    items: Sequence[object] | np.ndarray | pd.Series,
    confidence: float = CONFIDENCE,
) -> ClusteredProportion:
    """Share of correct calls (0/1, or fractional credit) with the Rao-Scott design-effect beta
    interval; ``items`` names each call's item (the unit that calls share)."""
    frame = pd.DataFrame({"y": np.asarray(correct, dtype=float), "item": np.asarray(items)})
    if frame.empty:
        return ClusteredProportion(math.nan, math.nan, math.nan, 0, 0, math.nan, math.nan)
    g = frame.groupby("item", sort=False)["y"].agg(["sum", "size"])
    n, k, m = float(g["size"].sum()), float(g["sum"].sum()), len(g)
    p = k / n
    if m < 2:  # one item: its calls say nothing about the next item
        return ClusteredProportion(p, 0.0, 1.0, int(n), m, 1.0, n)
    size = n / m
    sums = np.append(g["sum"].to_numpy(dtype=float), [0.0, size])
    sizes = np.append(g["size"].to_numpy(dtype=float), [size, size])
    n_aug, p_aug = float(sizes.sum()), float(sums.sum() / sizes.sum())
    clustered = (m + 2) / (m + 1) * float(((sums - p_aug * sizes) ** 2).sum()) / n_aug**2
    # the augmented variance is of a mean over m + 2 items; scaled back to the n real calls
    n_eff = float(
        effective_size(
            np.asarray(p_aug), np.asarray(clustered * n_aug / n), np.asarray(float(m)), np.asarray(n)
        )
    )
    lo, hi = beta_bounds(p, n_eff, confidence)
    return ClusteredProportion(p, float(lo), float(hi), int(n), m, n_eff, n / n_eff)


def clustered_chance_test(
    share: ClusteredProportion, chance: float, alternative: Literal["greater", "less"] = "greater"
) -> float:
    """One-sided binomial p-value of ``share`` against ``chance`` at the effective sample size (the
    Rao-Scott adjustment: counts divided by the design effect; the binomial tail is evaluated through
    the regularised incomplete beta, which takes the non-whole counts this gives)."""
    return binomial_tail(share.value * share.n_eff, share.n_eff, chance, alternative)


def binomial_tail(
    k: float, n: float, chance: float, alternative: Literal["greater", "less"] = "greater"
) -> float:
    """One-sided binomial p-value P(X >= k) (``greater``) or P(X <= k) (``less``) for X ~ Bin(n, chance),
    through the regularised incomplete beta, which equals the exact tail for whole counts and extends it
    to fractional ones (tie credit, effective sample sizes)."""
    if not n > 0 or not 0 < chance < 1:
        return math.nan
    if alternative == "greater":
        return 1.0 if k <= 0 else float(special.betainc(k, n - k + 1, chance))
    return 1.0 if k >= n else float(special.betainc(n - k, k + 1, 1 - chance))


@dataclass(frozen=True)
class AgreementGap:
    """Agreement of two pickers on the same presentations against independence given the key's slot.

    ``agreement``: share of paired calls where both picked the same slot (each item counting once, per N
    weighted by the item share of N). ``expected``: the agreement of two pickers independent given the
    key's slot, ``sum_k q_k sum_s P_a(s|k) P_b(s|k)`` with each picker's measured pick rates among calls
    with the key in slot k (so shared and opposite position habits, and independent knowledge, are in it).
    ``gap = agreement - expected`` with a percentile cluster-bootstrap interval (items resampled within each
    N, the null re-estimated in each resample); NaN where an N has fewer than 2 items.
    """

    agreement: float
    expected: float
    gap: float
    lo: float
    hi: float
    items: int
    pairs: int


def _agreement_parts(tensors: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Agreement and its null from mean (key slot, slot a, slot b) shares, last axis flattened."""
    t = tensors.reshape(*tensors.shape[:-1], n, n, n)
    same = np.einsum("...kss->...", t)
    a, b = t.sum(axis=-1), t.sum(axis=-2)  # (..., k, s): joint share of key in k and a (b) in s
    q = t.sum(axis=(-1, -2))
    with np.errstate(invalid="ignore", divide="ignore"):
        null = np.where(q > 0, (a * b).sum(axis=-1) / q, 0.0).sum(axis=-1)
    return same, null


DENSE_AGREEMENT_N = 16  # up to here the point holds the joint (key, a, b) shares whole; past it, marginals
_BOOT_ROWS = 250  # bootstrap draws weighed at once (bounded memory: rows x items float64)


@functools.lru_cache(maxsize=1)
def _boot_counts(seed: int, n_boot: int, sizes: tuple[int, ...]) -> tuple[np.ndarray, ...]:
    """Item counts of the cluster-bootstrap draws of each stratum (``sizes``: its items, strata that
    draw, in order), from one generator seeded ``seed``. Every model of an item set is drawn over the same
    items (the gate's: ``agreement_given_key``'s ``universe``), so the same draws recur model after
    model: drawn once, kept compact (read-only). One is kept: the sets are drawn one after another, and
    a set's draws (rows x items) are not held past the next set's."""
    rng = np.random.default_rng(seed)
    out = []
    for m in sizes:
        counts = rng.multinomial(m, np.full(m, 1.0 / m), size=n_boot)
        counts = counts.astype(np.min_scalar_type(int(counts.max(initial=0))))
        counts.flags.writeable = False
        out.append(counts)
    return tuple(out)


def _resize_delta(
    counts: np.ndarray, m: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The change that turns each row of Multinomial(M, 1/M) counts (``counts``: draws x M, M >= m) into
    Multinomial(m, 1/m) counts over its first m slots, one (row, slot, +1 or -1) per ball moved.

    Given their total T, a row's balls in the first m slots are independent and uniform over those
    slots; a row with T > m loses T - m of them picked uniformly without replacement, a row with T < m
    gains m - T balls drawn uniformly from the m slots. Either way m independent uniform balls: the
    counts a bootstrap resample of m items draws. Nothing moves where M = m."""
    none = np.empty(0, dtype=np.int64)
    if counts.shape[1] == m:
        return none, none, none
    head = counts[:, :m]
    total = head.sum(axis=1, dtype=np.int64)
    surplus = total - m
    short = np.flatnonzero(surplus < 0)
    add_rows = np.repeat(short, -surplus[short])
    add_slots = rng.integers(0, m, add_rows.size)
    # the balls of the rows over m numbered row after row; each row draws numbers in its own range, with
    # replacement, only as many as it still lacks, until it holds as many distinct ones as its surplus:
    # the first distinct numbers of a uniform sequence, so a uniform set
    over = np.flatnonzero(surplus > 0)
    first = np.cumsum(total[over]) - total[over]
    need = surplus[over]
    picked, have = none, np.zeros(over.size, dtype=np.int64)
    while (missing := need - have).any():
        row = np.repeat(np.arange(over.size), missing)
        picked = np.unique(np.concatenate([picked, first[row] + rng.integers(0, total[over][row])]))
        have = np.bincount(np.searchsorted(first, picked, side="right") - 1, minlength=over.size)
    # ball j sits in the first slot whose running count of balls exceeds j
    running = head[over].ravel().astype(np.int64)
    at = np.searchsorted(np.cumsum(running, out=running), picked, side="right")  # in place: no casting pass
    drop_rows, drop_slots = np.divmod(at, m)
    return (
        np.concatenate([add_rows, over[drop_rows]]),
        np.concatenate([add_slots, drop_slots]),
        np.concatenate([np.ones(add_rows.size, dtype=np.int64), np.full(at.size, -1, dtype=np.int64)]),
    )


def _marginal_parts(y: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Agreement and its null from rows of mean features (``_boot_agreement``'s): the share of a == b,
    then the (key, a) and the (key, b) shares, N x N each; the key's share is the (key, a) row's sum."""
    ka = y[:, 1 : 1 + n * n].reshape(-1, n, n)
    kb = y[:, 1 + n * n :].reshape(-1, n, n)
    q = ka.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        null = np.where(q > 0, (ka * kb).sum(axis=-1) / q, 0.0).sum(axis=-1)
    return y[:, 0], null


def _boot_agreement(
    counts: np.ndarray, m: int, delta: tuple[np.ndarray, np.ndarray, np.ndarray], features: np.ndarray, n: int
) -> tuple[np.ndarray, np.ndarray]:
    """Agreement and its null in each bootstrap draw. A draw weighs the items by its counts over the
    first m slots (``counts``, changed by ``delta``: ``_resize_delta``) over m; the items' ``features``
    (m x (1 + 2 N^2): share of a == b, (key, a) and (key, b) shares) are linear in those weights, so each
    draw's means are one product, a block of draws at a time, and the null follows from them."""
    y = np.empty((len(counts), features.shape[1]))
    for start in range(0, len(counts), _BOOT_ROWS):
        block = counts[start : start + _BOOT_ROWS, :m].astype(np.float64)
        np.matmul(block, features, out=y[start : start + _BOOT_ROWS])
    rows, slots, change = delta
    np.add.at(y, rows, change[:, None] * features[slots])
    y /= m
    return _marginal_parts(y, n)


def _joint_features(shares: np.ndarray, n: int) -> np.ndarray:
    """Per item, from its joint (key, a, b) shares: the share of a == b, the (key, a) and (key, b) shares."""
    t = shares.reshape(-1, n, n, n)
    m = len(t)
    return np.column_stack(
        [np.einsum("ikss->i", t), t.sum(axis=3).reshape(m, -1), t.sum(axis=2).reshape(m, -1)]
    )


def _agreement_marginal(
    part: pd.DataFrame, code: np.ndarray, m: int, n: int
) -> tuple[tuple[float, float], np.ndarray]:
    """``_agreement_parts`` of one option count from per-item marginals, and the items' bootstrap
    features (``_boot_agreement``): agreement is linear in the items' shares of a == b, its null needs
    only the (key, a) and (key, b) shares and the key's, so memory is items x N^2, not items x N^3."""
    k, a, b = (part[c].to_numpy() for c in ("k", "a", "b"))
    calls = np.bincount(code, minlength=m).astype(float)[:, None]

    def shares(index: np.ndarray, size: int) -> np.ndarray:
        counts = np.bincount(code * size + index, minlength=m * size).reshape(m, size)
        return counts / calls

    same_i = np.bincount(code, weights=(a == b).astype(float), minlength=m) / calls[:, 0]
    a_i, b_i, q_i = shares(k * n + a, n * n), shares(k * n + b, n * n), shares(k, n)
    weights = np.full((1, m), 1.0 / m)
    ka = (weights @ a_i).reshape(-1, n, n)
    kb = (weights @ b_i).reshape(-1, n, n)
    q = weights @ q_i
    with np.errstate(invalid="ignore", divide="ignore"):
        null = np.where(q > 0, (ka * kb).sum(axis=-1) / q, 0.0).sum(axis=-1)
    return (float((weights @ same_i)[0]), float(null[0])), np.column_stack([same_i, a_i, b_i])


def agreement_given_key(
    items: Sequence[object] | np.ndarray,
    n_options: Sequence[int] | np.ndarray,
    key_slot: Sequence[int] | np.ndarray,
    pick_a: Sequence[int] | np.ndarray,
    pick_b: Sequence[int] | np.ndarray,
    *,
    n_boot: int = 2000,
    seed: int,
    confidence: float = CONFIDENCE,
    universe: Mapping[int, int] | None = None,
) -> AgreementGap:
    """``AgreementGap`` of paired calls (one row per presentation both pickers answered): each row's
    item, option count, key slot and the two picked slots.

    ``universe``: per option count, how many items the bootstrap draws are made over, at least the pairs'
    own (the items the reference picker answered, of which each pairing's are a subset). The draw of each
    option count is then one multinomial over the universe, shared by every pairing with the same
    reference and seed; a pairing's m items take its first m slots, resized to exactly m balls
    (``_resize_delta``, with a second generator seeded ``[seed, 1]``), which is the same distribution as
    a draw over the m items alone, and the very same draw where m is the universe's count. None: the
    universe is the pairs' own items."""
    frame = pd.DataFrame(
        {
            "item": np.asarray(items),
            "n": np.asarray(n_options, dtype=int),
            "k": np.asarray(key_slot, dtype=int),
            "a": np.asarray(pick_a, dtype=int),
            "b": np.asarray(pick_b, dtype=int),
        }
    )
    if frame.empty:
        return AgreementGap(math.nan, math.nan, math.nan, math.nan, math.nan, 0, 0)
    total = frame["item"].nunique()
    point = np.zeros(2)
    boot = np.zeros((n_boot, 2))
    tested = True
    strata = []
    for n, part in frame.groupby("n", sort=True):
        code, _ = pd.factorize(part["item"])
        strata.append((int(n), part, code, int(code.max()) + 1))
    sizes = (
        {n: m for n, _, _, m in strata} if universe is None else {int(n): int(m) for n, m in universe.items()}
    )
    for n, _, _, m in strata:
        if m > sizes.get(n, 0):
            raise ValueError(f"{m} paired items of {n} options, but a draw universe of {sizes.get(n, 0)}")
    # one generator over the universe's strata in order; a stratum of one item draws nothing
    drawn = [n for n in sorted(sizes) if sizes[n] >= 2]
    boot_counts = dict(zip(drawn, _boot_counts(seed, n_boot, tuple(sizes[n] for n in drawn)), strict=True))
    resize = np.random.default_rng([seed, 1])
    for n, part, code, m in strata:
        w = m / total
        if n > DENSE_AGREEMENT_N:  # a wide bank: its N^3 joint cells would not fit in memory
            (same, null), features = _agreement_marginal(part, code, m, n)
        else:
            cell = (part["k"].to_numpy() * n + part["a"].to_numpy()) * n + part["b"].to_numpy()
            counts = np.bincount(code * n**3 + cell, minlength=m * n**3).reshape(m, n**3).astype(float)
            shares = counts / counts.sum(axis=1, keepdims=True)  # each item counts once
            same, null = _agreement_parts(shares.mean(axis=0), n)
            features = _joint_features(shares, n)
        point += w * np.array([same, null])
        if m < 2:  # a pairing of one item of this N draws nothing
            tested = False
            continue
        drawn_n = boot_counts[n]
        b_same, b_null = _boot_agreement(drawn_n, m, _resize_delta(drawn_n, m, resize), features, n)
        boot += w * np.stack([b_same, b_null], axis=1)
    lo = hi = math.nan
    if tested:
        gaps = np.round(boot[:, 0] - boot[:, 1], 12)  # a constant picker's gap is 0, not -1e-17
        lo, hi = (float(x) for x in np.quantile(gaps, [(1 - confidence) / 2, (1 + confidence) / 2]))
    agree, null = (float(np.clip(x, 0.0, 1.0)) for x in point[:2])  # sums of shares: rounding past 1
    return AgreementGap(agree, null, round(agree - null, 12), lo, hi, int(total), len(frame))


@dataclass(frozen=True)
class SignTest:
    """Items whose mean went up, down or stayed under a paired change, and the exact two-sided sign test."""

    items: int
    up: int
    down: int
    p: float


def item_sign_test(before: pd.Series, after: pd.Series) -> SignTest:
    """Exact sign test on item means: ``before`` and ``after`` are per-item accuracies indexed by item
    (items present on both sides only). Items that did not move carry no information and are left out."""
    both = pd.concat([before.rename("b"), after.rename("a")], axis=1, join="inner").dropna()
    up, down = int((both["a"] > both["b"]).sum()), int((both["a"] < both["b"]).sum())
    p = 1.0 if up + down == 0 else float(sps.binomtest(up, up + down, 0.5).pvalue)
    return SignTest(len(both), up, down, p)


def holm(p_values: Sequence[float] | np.ndarray | pd.Series) -> np.ndarray:
    """Holm's step-down adjusted p-values (family-wise error), NaN kept where a p-value is missing."""
    p = np.asarray(p_values, dtype=float)
    out = np.full(p.shape, np.nan)
    ok = np.flatnonzero(~np.isnan(p))
    if ok.size == 0:
        return out
    order = ok[np.argsort(p[ok], kind="stable")]
    m = order.size
    adjusted = np.maximum.accumulate((m - np.arange(m)) * p[order])
    out[order] = np.minimum(adjusted, 1.0)
    return out
