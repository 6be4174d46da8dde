"""Whether the statutes cover a bank, so that lexical search over them measures anything on it.

Lexical search picks the option whose best BM25 match in the statutes scores highest. On a bank the
statutes do not cover (a geography bank in the statutes' language) most options match nothing, or only
common words, and the pick is a coin toss the strategy table would report as a strategy. So it is
measured first, at the item unit: an item is *matched* when its best-scoring option scores above the
threshold that random words reach on 5% of items (the null: every option replaced by as many random words
of the bank's language, ``NULL_DRAWS`` draws per item, seeded). Lexical search applies when at least
``MIN_COVERAGE`` of the usable items are matched and that share is above the null's (one-sided exact
binomial on items, alpha 0.05); else it is left out of the strategy table and of every multiplicity
family the table's rows join, and the report says why in one sentence. Either way the items with no
statute match at all (every option tied at 0) and those whose options all tie are counted.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from blindmcq.config.schema import Config
from blindmcq.datasets.items import Item
from blindmcq.stats import binomial_tail
from blindmcq.statutes.bm25 import BM25Index
from blindmcq.statutes.text import Analyzer

MIN_COVERAGE = 0.5  # the least share of items matched for lexical search to count as a strategy
NULL_QUANTILE = 0.95
NULL_DRAWS = 3
ALPHA = 0.05


@dataclass(frozen=True)
class Coverage:
    """How far the statutes cover a bank's options (module docstring)."""

    n: int  # usable items
    matched: int  # items whose best option scores above ``threshold``
    threshold: float  # the null's 95th percentile of an item's best score
    null_share: float  # share of null items above the threshold
    p: float  # one-sided exact binomial of ``matched`` of ``n`` against ``null_share``
    no_match: int  # items where no option shares a term with the statutes
    all_tied: int  # items whose options all score the same (the pick is a coin toss)

    @property
    def share(self) -> float:
        return self.matched / self.n if self.n else 0.0

    @property
    def applies(self) -> bool:
        return self.n > 0 and self.share >= MIN_COVERAGE and self.p < ALPHA

    def sentence(self) -> str:
        """One sentence: whether lexical search applies, the figures and the test it rests on."""
        test = (
            f"one-sided exact binomial on items against the {self.null_share:.3f} random words reach, "
            f"p {_p(self.p)}; threshold BM25 {self.threshold:.2f}, the random-word 95th percentile"
        )
        share = f"{self.matched} of {self.n} items ({self.share:.1%})"
        head = f"{share} have an option matching a statute ({test})"
        tail = f"; {self.no_match} match no statute at all and {self.all_tied} have all options tied."
        if self.applies:
            return f"Lexical search applies: {head}{tail}"
        short = (
            f"below the {MIN_COVERAGE:.0%} it needs"
            if self.share < MIN_COVERAGE
            else "not above random words"
        )
        return f"Lexical search left out: the statutes do not cover this bank ({head}, {short}){tail}"

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "share": self.share, "applies": self.applies, "min_coverage": MIN_COVERAGE}


def null_words(language: str) -> Sequence[str] | None:
    """Random words of ``language`` for the null (None where the project has no word list: only ``uk``,
    the NonsenseQA lemmas)."""
    if language != "uk":
        return None
    from blindmcq.datasets.nonsense import ukrainian_words

    return ukrainian_words()


def run_coverage(
    config: Config, items: Sequence[Item], index_dir: str | Path, *, seed: int
) -> tuple[str | None, Coverage | None]:
    """In a pipeline run (``config``: the typed composed config): why lexical search is left out (None:
    it applies) and the statute index's coverage of ``items`` (None where not measured: another language,
    or no random-word list for the statutes' language). The baselines and probe stages share it."""
    from blindmcq.config.schema import Statutes
    from blindmcq.statutes.index import load_statute_index
    from blindmcq.statutes.language import STATUTES_LANGUAGE, lexical_absent

    absent = lexical_absent(config, items)
    if absent is not None:
        return absent, None
    statutes = config.statutes or Statutes()
    words = null_words(statutes.language or STATUTES_LANGUAGE)
    if words is None:
        return None, None
    index, analyzer = load_statute_index(index_dir)
    coverage = statute_coverage(items, index, analyzer, words, seed=seed)
    return (None if coverage.applies else coverage.sentence()), coverage


def _p(p: float) -> str:
    return "< 0.001" if p < 0.001 else f"{p:.3f}"


def _scores(items: Sequence[Item], index: BM25Index, analyzer: Analyzer) -> tuple[np.ndarray, np.ndarray]:
    """Per option (items' options in order): the best BM25 score and whether any term is known."""
    queries = [analyzer(option) for item in items for option in item.options]
    if not queries:
        return np.zeros(0), np.zeros(0, dtype=bool)
    _, best = index.best_matches(queries)
    known = np.array([index.known_terms(q) > 0 for q in queries], dtype=bool)
    return np.asarray(best, dtype=float), known


def random_options(items: Sequence[Item], words: Sequence[str], seed: int) -> list[Item]:
    """Each item with every option replaced by as many random ``words`` (at least one), seeded."""
    rng = np.random.default_rng([seed, 7919])
    vocabulary = np.asarray(list(words))
    out = []
    for item in items:
        options = tuple(
            " ".join(rng.choice(vocabulary, size=max(1, len(option.split())))) for option in item.options
        )
        out.append(Item(id=item.id, source=item.source, bank=item.bank, number=item.number,
                        question="", options=options, key=item.key))  # fmt: skip
    return out


def _best_per_item(items: Sequence[Item], scores: np.ndarray) -> np.ndarray:
    ends = np.cumsum([item.n_options for item in items])
    return np.array([scores[e - item.n_options : e].max() for item, e in zip(items, ends, strict=True)])


def statute_coverage(
    items: Sequence[Item], index: BM25Index, analyzer: Analyzer, words: Sequence[str], *, seed: int
) -> Coverage:
    """The statutes' coverage of the usable ``items``; ``words``: the null's vocabulary (random words of
    the bank's language, e.g. ``datasets.nonsense.ukrainian_words``)."""
    usable = [item for item in items if item.usable and item.n_options >= 2]
    if not usable:
        return Coverage(0, 0, float("nan"), float("nan"), float("nan"), 0, 0)
    scores, known = _scores(usable, index, analyzer)
    best = _best_per_item(usable, scores)
    null_items = [it for d in range(NULL_DRAWS) for it in random_options(usable, words, seed + d)]
    null_best = _best_per_item(null_items, _scores(null_items, index, analyzer)[0])
    threshold = float(np.quantile(null_best, NULL_QUANTILE))
    # at least one null draw's worth above the threshold, so a null that never matches is no certainty
    null_share = max(float(np.mean(null_best > threshold)), 1.0 / len(null_best))
    matched = int(np.sum(best > threshold))
    ends = np.cumsum([item.n_options for item in usable])
    no_match = all_tied = 0
    for item, e in zip(usable, ends, strict=True):
        span = slice(e - item.n_options, e)
        no_match += int(not known[span].any())
        s = scores[span]
        all_tied += int(np.allclose(s, s.max(), rtol=1e-9, atol=0.0))
    p = binomial_tail(matched, len(usable), null_share) if null_share < 1 else 1.0
    return Coverage(len(usable), matched, threshold, null_share, float(p), no_match, all_tied)
