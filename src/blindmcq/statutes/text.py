"""Ukrainian text analysis for retrieval: normalise, tokenise, lemmatise (pymorphy3, Ukrainian dictionary).

Normalisation (`fold_for_search`): Unicode NFC; soft hyphens (U+00AD) removed; every apostrophe variant
(ʼ U+02BC, ’ U+2019, ‘ U+2018, ` U+0060, ´ U+00B4, ′ U+2032) becomes the ASCII apostrophe U+0027, the
form the pymorphy3 Ukrainian dictionary uses; then case folding.

Tokens (`tokenize`): maximal runs of Latin or Cyrillic letters (Ukrainian і ї є ґ included; other
scripts are dropped) that may contain an apostrophe between two letters (``здоров'я``), and maximal runs
of digits. Hyphens, punctuation and underscores separate tokens, so ``будь-який`` gives ``будь``,
``який`` and ``1700-18`` gives ``1700``, ``18``.

Lemmas (`Lemmatizer`): pymorphy3 has no frequency model for Ukrainian, so its parses come in dictionary
order with equal scores and the first is often wrong (``людина`` -> ``людин``, an adjective reading;
``дані`` -> ``дан``, a first name). The lemma is therefore the word itself when any parse has it as its
normal form, else the normal form of the first parse that is not a personal name (Name, Surn, Patr),
else of the first parse. Each distinct word is lemmatised once and cached (a dict), because a legal corpus
repeats a few hundred thousand word forms millions of times. Digits pass through.

Stopwords (`STOPWORDS_UK`, off by default): a short hand-written list of Ukrainian function-word lemmas
(prepositions, conjunctions, particles, personal and demonstrative pronouns, forms of "бути"). BM25's IDF
already discounts such words, so the default keeps them, as rank-bm25 would on the same tokens.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any

APOSTROPHE = "'"
# str.replace per variant: several times faster than str.translate with a dict on Cyrillic text
_REPLACEMENTS = (("\u00ad", ""), *((ch, APOSTROPHE) for ch in "\u02bc\u2019\u2018\u0060\u00b4\u2032"))
_NAME_GRAMMEMES = frozenset({"Name", "Surn", "Patr"})
# Latin and Cyrillic letters spelled out: a negated class like [^\W\d_] is ~1.6x slower
_LETTERS = "[a-z\u00df-\u00f6\u00f8-\u024f\u0400-\u0481\u048a-\u052f]+"
TOKEN_RE = re.compile(rf"{_LETTERS}(?:'{_LETTERS})*|\d+")

STOPWORDS_UK: frozenset[str] = frozenset(
    """
    а або аж але би бо б був бути в від до ж же за з зі із й і к крізь ледь лише між мов на над не
    ні ніж о об однак от отже по поза понад попри поміж при про проте та так також те тим то тобто тощо
    у увесь усе усі це цей ця ці чи через що щоб як який яка яке які якщо весь все всі свій себе
    він вона воно вони я ти ми ви його її їх їй йому їм нього неї них той та те ті цього цієї цих
    """.split()
)


def fold_for_search(text: str) -> str:
    """NFC, soft hyphens removed, apostrophes unified, case folded."""
    text = unicodedata.normalize("NFC", text)
    for old, new in _REPLACEMENTS:
        text = text.replace(old, new)
    return text.casefold()


def tokenize(text: str) -> list[str]:
    """Normalised word and number tokens, in order."""
    return TOKEN_RE.findall(fold_for_search(text))


class Lemmatizer:
    """pymorphy3 normal forms for Ukrainian, cached per distinct word (the cache is a plain dict)."""

    def __init__(self) -> None:
        import pymorphy3  # heavy dictionary load; only when lemmas are wanted

        self._morph = pymorphy3.MorphAnalyzer(lang="uk")
        self._cache: dict[str, str] = {}

    def lemma_uncached(self, word: str) -> str:
        """The word itself when some parse says it is a lemma; else the first parse not a personal name."""
        if word.isdigit():
            return word
        parses = self._morph.parse(word)
        if not parses or any(p.normal_form == word for p in parses):
            return word
        for p in parses:
            if not _NAME_GRAMMEMES & p.tag.grammemes:
                return p.normal_form
        return parses[0].normal_form

    def lemma(self, word: str) -> str:
        lemma = self._cache.get(word)
        if lemma is None:
            lemma = self._cache[word] = self.lemma_uncached(word)
        return lemma

    def lemmas(self, words: Iterable[str]) -> list[str]:
        cache, lemma = self._cache, self.lemma
        return [cache.get(w) or lemma(w) for w in words]


@dataclass(frozen=True)
class TextConfig:
    """How text becomes index terms; stored with an index so queries are analysed the same way."""

    lemmatize: bool = True
    stopwords: bool = False

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, record: dict[str, Any]) -> TextConfig:
        return cls(lemmatize=bool(record["lemmatize"]), stopwords=bool(record["stopwords"]))


class Analyzer:
    """Text -> index terms under one `TextConfig`."""

    def __init__(self, config: TextConfig | None = None, lemmatizer: Lemmatizer | None = None) -> None:
        self.config = config = config or TextConfig()
        self.lemmatizer = (lemmatizer or Lemmatizer()) if config.lemmatize else None

    def terms_of_words(self, words: Iterable[str]) -> list[str]:
        terms = self.lemmatizer.lemmas(words) if self.lemmatizer else list(words)
        if self.config.stopwords:
            terms = [t for t in terms if t not in STOPWORDS_UK]
        return terms

    def __call__(self, text: str) -> list[str]:
        return self.terms_of_words(tokenize(text))
