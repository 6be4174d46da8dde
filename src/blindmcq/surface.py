"""The surface rules: how an option-only strategy picks one option from the option texts alone.

The one definition Table 2 and the audit (:mod:`blindmcq.auditing.surface`) and the probed heuristic
models (:mod:`blindmcq.backends.heuristic`) both use, so they answer the same item the same way.

- An option's text is whitespace-normalised (``collapse_whitespace``: runs of spaces, tabs, line
  breaks and no-break spaces become one space, ends stripped); ``chars`` counts its characters,
  ``words`` its whitespace-separated words.
- ``longest`` / ``shortest``: the most / fewest ``chars``; ``most_words``: the most ``words``.
- ``constant`` with slot s: the option shown in slot s; an item with N <= s has none.
- A tie: the k options sharing the extreme are all candidates. ``tie_credit`` is 1/k when the key is
  among them (the expected score of a uniform break). ``pick`` breaks it uniformly with a generator
  seeded by the seed, the strategy and the item's option texts sorted (``tie_seed``), choosing among the
  tied texts in sorted order and mapping the text back to the slot that shows it. Labels, display
  order and phrasing never enter, so one item gives the same picked option under every presentation.
  Options with identical text cannot be told apart; the earliest slot showing the chosen text is picked.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from blindmcq.vocabulary import CONSTANT_SLOT
from blindmcq.vocabulary import SURFACE_STRATEGIES as STRATEGIES


def collapse_whitespace(text: str) -> str:
    """Runs of whitespace (any Unicode space, tab or line break) as one space, ends stripped."""
    return " ".join(text.split())


def chars(option: str) -> int:
    """Characters of the whitespace-normalised option."""
    return len(collapse_whitespace(option))


def words(option: str) -> int:
    """Whitespace-separated words of the option."""
    return len(option.split())


SCORED: dict[str, tuple[Callable[[str], int], int]] = {
    # name: (score per option, +1 to pick the highest / -1 the lowest)
    "longest": (chars, 1),
    "shortest": (chars, -1),
    "most_words": (words, 1),
}


def tied_extremes(options: Sequence[str], score: Callable[[str], float], sign: int = 1) -> list[int]:
    """Slots of every option at the extreme (highest ``sign * score``), in display order."""
    values = [sign * score(o) for o in options]
    best = max(values)
    return [i for i, v in enumerate(values) if v == best]


def candidates(strategy: str, options: Sequence[str], slot: int) -> list[int]:
    """The slots ``strategy`` finds best (several on a tie); ``constant``: ``[slot]``, or ``[]`` when the
    item has no such slot."""
    if strategy == "constant":
        return [slot] if 0 <= slot < len(options) else []
    if strategy not in SCORED:
        raise ValueError(f"unknown surface strategy {strategy!r} (one of {', '.join(STRATEGIES)})")
    score, sign = SCORED[strategy]
    return tied_extremes(options, score, sign)


def tie_seed(seed: int, strategy: str, options: Sequence[str]) -> int:
    """The tie break's seed: a hash of the seed, the strategy and the item's normalised option texts in
    sorted order (so neither the display order nor the labels nor the prompt change it)."""
    texts = sorted(collapse_whitespace(o) for o in options)
    text = json.dumps([int(seed), strategy, texts], ensure_ascii=False)
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")


def break_tie(tied: Sequence[int], options: Sequence[str], seed: int, strategy: str) -> int:
    """One of the ``tied`` slots: a text drawn uniformly by ``tie_seed`` from the tied texts in sorted
    order, and the earliest tied slot showing it."""
    if len(tied) == 1:
        return tied[0]
    ranked = sorted(collapse_whitespace(options[s]) for s in tied)
    chosen = ranked[random.Random(tie_seed(seed, strategy, options)).randrange(len(ranked))]
    return next(s for s in tied if collapse_whitespace(options[s]) == chosen)


@dataclass(frozen=True)
class Pick:
    """A strategy's pick on one item: ``slot`` (None when the strategy does not apply) and every slot
    that shared the extreme (``tied``, display order)."""

    slot: int | None
    tied: tuple[int, ...]

    @property
    def tie(self) -> bool:
        return len(self.tied) > 1


def pick(strategy: str, options: Sequence[str], *, seed: int, slot: int = CONSTANT_SLOT) -> Pick:
    """``strategy``'s pick among ``options`` (display order), ties broken by ``break_tie``."""
    tied = candidates(strategy, options, slot)
    if not tied:
        return Pick(None, ())
    return Pick(break_tie(tied, options, seed, strategy), tuple(tied))


def tie_credit(key: int | None, tied: Sequence[int]) -> float:
    """1/k when the key is among the k tied options, else 0: a uniformly random break's expected score."""
    return (key in tied) / len(tied) if tied else 0.0
