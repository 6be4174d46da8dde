"""The bank's verdict: can its items be answered from the options alone? One answer from bank-level
evidence only (Table 2: the surface strategies and lexical search on every item), so it is the same
whatever models a panel holds, in the pipeline's report, a release's and the audit's.

The multiplicity policy (docs/statistics.md): the verdict's family is the option-text strategies that ran
on the bank (longest, shortest, most words, lexical search where the statutes apply); each is tested
against chance with a one-sided exact binomial on items (ties credited 1/k, continued through the
regularised incomplete beta), Holm over that family. The constant slots are no leak of an item's content:
the keys' spread over slots is tested once, by a chi-square against uniform slots.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd
from scipy.stats import binom, chisquare, combine_pvalues
from statsmodels.stats.power import GofChisquarePower

from blindmcq.analysis.tables import fmt, fmt_ci, fmt_p
from blindmcq.stats import binomial_tail, holm

ALPHA = 0.05
POWER = 0.8


def content_family(summary: pd.DataFrame) -> pd.DataFrame:
    """Table 2's option-text strategies (not the constant slots) with their raw one-sided p against
    chance (``p``) and Holm's adjusted p over the family (``holm``)."""
    content = summary[~summary["strategy"].astype(str).str.startswith("constant_")].reset_index(drop=True)
    content = content[content["n"] > 0].reset_index(drop=True)
    if content.empty:
        return content.assign(p=pd.Series(dtype=float), holm=pd.Series(dtype=float))
    p = [binomial_tail(r.n_correct, r.n, r.chance) for r in content.itertuples()]
    return content.assign(p=p, holm=holm(p))


def detectable_accuracy(n: int, chance: float, alpha: float, power: float = POWER) -> float:
    """The smallest accuracy that a one-sided exact binomial test at level ``alpha`` on ``n`` items
    detects with probability ``power``: what a non-significant result can rule out."""
    if n <= 0:
        return float("nan")
    k_crit = int(binom.isf(alpha, n, chance)) + 1  # smallest k with P(X >= k) <= alpha
    lo, hi = chance, 1.0
    for _ in range(60):  # bisection on the true rate p: P(X >= k_crit | p) = power
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if binom.sf(k_crit - 1, n, mid) < power else (lo, mid)
    return hi


def detectable_clause(n: int, chance: float, alpha: float, test: str = "the test") -> str:
    """What a non-significant one-sided exact binomial at level ``alpha`` on ``n`` items could have seen:
    the clause every sentence that concludes from a null result carries (``detectable_accuracy``)."""
    return (
        f"at {n} items {test} would detect an accuracy of {fmt(detectable_accuracy(n, chance, alpha))} "
        f"or more with {POWER:.0%} power, so a smaller leak is not ruled out"
    )


def content_sentence(summary: pd.DataFrame) -> str:
    """Whether an option-text strategy finds the key above chance on the bank's items (see module doc);
    when none does, the smallest accuracy the sample could have detected."""
    content = content_family(summary)
    if content.empty:
        return ""
    best = content.loc[content["accuracy"].idxmax()]
    test = (
        f"one-sided binomial on items against chance (exact for whole counts; ties credited 1/k continue "
        f"it through the regularised incomplete beta, which is conservative), Holm over the "
        f"{len(content)} option-text strategies of Table 2"
    )
    head = (
        f"The best option-text strategy, `{best['strategy']}`, finds the key on "
        f"{fmt_ci(best['accuracy'], best['ci_low'], best['ci_high'])} of {int(best['n'])} items against "
        f"chance {fmt(best['chance'])} (p {fmt_p(best['p'])}, Holm p {fmt_p(best['holm'])}; {test}). "
    )
    if best["holm"] < ALPHA:
        return head + "The option texts alone give the key away."
    clause = detectable_clause(int(best["n"]), float(best["chance"]), ALPHA / len(content))
    return head + f"That is not shown to be above chance; {clause}."


def position_sentence(key_counts: Mapping[int, Sequence[int]]) -> str:
    """Key-position balance, a fact about the bank (not a leak of any item): chi-square goodness of fit
    of the key slots against uniform, per option count N (``key_counts[N]``: items keyed in each slot),
    combined over N (Fisher)."""
    p_values = [
        float(chisquare(counts).pvalue) for counts in key_counts.values() if sum(counts) >= 5 * len(counts)
    ]
    if not p_values:
        return ""
    p = p_values[0] if len(p_values) == 1 else float(combine_pvalues(p_values).pvalue)
    verdict = "The keys sit unevenly across slots" if p < ALPHA else "No key-position imbalance is shown"
    power = "" if p < ALPHA else f"; {detectable_imbalance_clause(key_counts)}"
    return (
        f"{verdict} (chi-square against uniform slots, per N, p {fmt_p(p)}{power}): a bank-level fact "
        "that a model's position habit can turn into accuracy, which habit and excess separate; it is no "
        "leak of any one item."
    )


def detectable_imbalance_clause(key_counts: Mapping[int, Sequence[int]]) -> str:
    """What a non-significant chi-square against uniform slots could have seen: the smallest Cohen's w
    it detects at level ``ALPHA`` with ``POWER`` on the largest option count's items (statsmodels'
    ``GofChisquarePower``), and as one slot's share of the keys with the others even
    (1/N + w sqrt(N - 1) / N)."""
    n_options, counts = max(key_counts.items(), key=lambda kv: sum(kv[1]))
    n = sum(counts)
    w = float(GofChisquarePower().solve_power(effect_size=None, nobs=n, alpha=ALPHA, power=POWER,
                                              n_bins=n_options))  # fmt: skip
    share = 1 / n_options + w * (n_options - 1) ** 0.5 / n_options
    return (
        f"at the {n} items with N={n_options} that test would detect an imbalance of Cohen's w "
        f"{fmt(w)} or more with {POWER:.0%} power (one slot holding {fmt(share)} of the keys where "
        f"{fmt(1 / n_options)} is even), so a smaller one is not ruled out"
    )


def bank_verdict(summary: pd.DataFrame, key_counts: Mapping[int, Sequence[int]]) -> list[str]:
    """The verdict's sentences: the option-text evidence, then the keys' spread over slots."""
    return [s for s in (content_sentence(summary), position_sentence(key_counts)) if s]


def key_counts_of(items: Sequence[object]) -> dict[int, list[int]]:
    """``{N: items keyed in each slot}`` over the usable items."""
    by_n: dict[int, list[int]] = {}
    for item in items:
        if getattr(item, "usable", False):
            n = int(item.n_options)  # type: ignore[attr-defined]
            by_n.setdefault(n, [0] * n)[int(item.key)] += 1  # type: ignore[attr-defined]
    return by_n
