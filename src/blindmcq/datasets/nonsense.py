"""NonsenseQA (MD seed, section 3.1): questions of random words, so any score above chance is bias.

1,000 test and 100 few-shot items, each a run of random words ending in "?", four options of one to three
random words, and a key drawn uniformly (i.i.d.) per item. Words are Ukrainian lemmas (nouns,
adjectives, infinitives, adverbs; no names or abbreviations; at least two vowels) read from pymorphy3's
Ukrainian dictionary, so the word list, and with it the bank, is fixed by the seed and the dictionary's
version (kept in ``meta``).

Few-shot prompts skew the examples' answer distribution (``all_a``, ``a70``, ``uniform``) by moving each
example's key into the chosen slot, distractors keeping their published relative order (as in forced
placement). ``names_pattern`` tells explicit few-shot bias (the response names the examples' pattern)
from implicit.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib.metadata import PackageNotFoundError, version
from typing import Any, NamedTuple

import numpy as np

from blindmcq.config.schema import Labels, NonsenseDataset, default
from blindmcq.datasets.items import Item, item_id
from blindmcq.labels import label_strings, option_line
from blindmcq.vocabulary import FEWSHOT_SKEWS, FewShotSkew

SOURCE = "nonsenseqa"
_ALPHABET = "абвгґдеєжзиіїйклмнопрстуфхцчшщьюя"
_POS = frozenset({"NOUN", "ADJF", "INFN", "ADVB"})
_EXCLUDED = frozenset({"Abbr", "Name", "Surn", "Patr", "Geox", "Orgn", "Trad", "Infr", "Slng", "Erro"})
_VOWELS = "аеєиіїоуюя"
# Abbreviations slip through the tags on some lemmas ("нддкр", "цнап"): demand two vowels and no run of
# four consonants.
_CLUSTER = re.compile(f"[^{_VOWELS}]{{4}}")
_PER_PREFIX = 150  # dictionary entries read per two-letter prefix: spreads words over the alphabet quickly


def _dict_version() -> str:
    try:
        return f"pymorphy3-dicts-uk {version('pymorphy3-dicts-uk')}"
    except PackageNotFoundError:
        return "pymorphy3-dicts-uk unknown"


@lru_cache(maxsize=1)
def ukrainian_words() -> tuple[str, ...]:
    """Sorted Ukrainian lemmas (4-12 letters) from pymorphy3's dictionary, spread over all prefixes."""
    import pymorphy3

    dictionary = pymorphy3.MorphAnalyzer(lang="uk").dictionary
    words: set[str] = set()
    for a, b in itertools.product(_ALPHABET, repeat=2):
        for word, (para_id, idx) in itertools.islice(dictionary.words.iteritems(a + b), _PER_PREFIX):
            if idx != 0 or not word.isalpha() or not 4 <= len(word) <= 12:
                continue  # idx 0 = the paradigm's lemma
            tag = dictionary.build_tag_info(para_id, idx)
            pronounceable = sum(c in _VOWELS for c in word) >= 2 and not _CLUSTER.search(word)
            if pronounceable and tag.POS in _POS and not (_EXCLUDED & tag.grammemes):
                words.add(word)
    return tuple(sorted(words))


class NonsenseQA(NamedTuple):
    test: list[Item]
    fewshot: list[Item]


def _bank(
    rng: np.random.Generator,
    words: Sequence[str],
    bank: str,
    n: int,
    n_options: int,
    meta: dict[str, Any],
) -> list[Item]:
    def phrase(lo: int, hi: int) -> str:
        return " ".join(words[i] for i in rng.integers(0, len(words), size=int(rng.integers(lo, hi + 1))))

    items = []
    for number in range(1, n + 1):
        question = phrase(6, 12)
        options: list[str] = []
        while len(options) < n_options:  # distinct options, so an item never needs a duplicate flag
            candidate = phrase(1, 3)
            if candidate not in options:
                options.append(candidate)
        items.append(
            Item(
                id=item_id(SOURCE, bank, number),
                source=SOURCE,
                bank=bank,
                number=number,
                question=question[0].upper() + question[1:] + "?",
                options=tuple(options),
                key=int(rng.integers(0, n_options)),
                meta=dict(meta),
            )
        )
    return items


def generate_nonsenseqa(
    seed: int = default(NonsenseDataset, "seed"),
    *,
    n_test: int = default(NonsenseDataset, "n_test"),
    n_fewshot: int = default(NonsenseDataset, "n_fewshot"),
    n_options: int = default(NonsenseDataset, "n_options"),
    words: Sequence[str] | None = None,
) -> NonsenseQA:
    """The seeded bank; test and few-shot items come from independent streams of the one seed."""
    if n_options < 2:
        raise ValueError(f"n_options must be >= 2, got {n_options}")
    vocabulary = tuple(words) if words is not None else ukrainian_words()
    if len(vocabulary) < 2 * n_options:
        raise ValueError(f"word list too small: {len(vocabulary)} words")
    meta = {"generator": "nonsenseqa", "seed": seed, "words": _dict_version() if words is None else "custom"}
    return NonsenseQA(
        test=_bank(np.random.default_rng([seed, 0]), vocabulary, "test", n_test, n_options, meta),
        fewshot=_bank(np.random.default_rng([seed, 1]), vocabulary, "fewshot", n_fewshot, n_options, meta),
    )


# ---------------------------------------------------------------- few-shot prompts


def skew_slots(n_shots: int, skew: FewShotSkew, n_options: int, seed: int) -> tuple[int, ...]:
    """Key slot of each example: ``all_a`` all slot 0; ``a70`` round(0.7 n) in slot 0 and the rest spread
    evenly over the other slots; ``uniform`` spread evenly over all. A remainder goes to randomly chosen
    slots; the sequence is shuffled. Counts are exact, not sampled."""
    if skew not in FEWSHOT_SKEWS:
        raise ValueError(f"skew must be one of {FEWSHOT_SKEWS}, got {skew!r}")
    if n_shots < 0 or n_options < 2:
        raise ValueError(f"need n_shots >= 0 and n_options >= 2, got {n_shots}, {n_options}")
    rng = np.random.default_rng(seed)

    def spread(count: int, slots: list[int]) -> list[int]:
        base, extra = divmod(count, len(slots))
        lucky = set(rng.choice(slots, size=extra, replace=False).tolist()) if extra else set()
        return [s for s in slots for _ in range(base + (s in lucky))]

    if skew == "all_a":
        out = [0] * n_shots
    elif skew == "a70":
        n_a = round(0.7 * n_shots)
        out = [0] * n_a + spread(n_shots - n_a, list(range(1, n_options)))
    else:
        out = spread(n_shots, list(range(n_options)))
    return tuple(int(s) for s in rng.permutation(out))


def key_at(item: Item, slot: int) -> tuple[str, ...]:
    """The item's options with the key in ``slot`` and the distractors in published relative order."""
    if item.key is None:
        raise ValueError(f"{item.id}: no key to place")
    rest = [o for i, o in enumerate(item.options) if i != item.key]
    return (*rest[:slot], item.options[item.key], *rest[slot:])


_HEADINGS = {
    "en": ("Question", "Answer", "Final answer: The correct option is “{text}”."),
    "uk": ("Питання", "Відповідь", "Остаточна відповідь: правильний варіант — «{text}»."),
}


@dataclass(frozen=True)
class FewShotBlock:
    text: str
    key_slots: tuple[int, ...]
    item_ids: tuple[str, ...]

    def __str__(self) -> str:
        return self.text


def fewshot_block(
    examples: Sequence[Item],
    *,
    skew: FewShotSkew,
    labels: Labels,
    n_shots: int,
    seed: int,
    language: str = "en",
) -> FewShotBlock:
    """Worked examples whose answers land on ``skew_slots``; SL style ("Answer: A") for letter schemes,
    MD style (dash options, a final-answer sentence) for a uniform scheme such as ``dash``."""
    if language not in _HEADINGS:
        raise ValueError(f"language must be one of {sorted(_HEADINGS)}, got {language!r}")
    if n_shots > len(examples):
        raise ValueError(f"{n_shots} shots requested but only {len(examples)} examples")
    scheme = labels
    rng = np.random.default_rng(seed)
    chosen = [examples[i] for i in rng.choice(len(examples), size=n_shots, replace=False)]
    n_options = {e.n_options for e in chosen}
    if len(n_options) > 1:
        raise ValueError("few-shot examples must share one number of options")
    slots = skew_slots(n_shots, skew, n_options.pop() if chosen else 4, seed)
    question_word, answer_word, md_answer = _HEADINGS[language]
    line = option_line(scheme)
    blocks = []
    for example, slot in zip(chosen, slots, strict=True):
        options = key_at(example, slot)
        shown = label_strings(scheme, len(options))
        listed = "\n".join(
            line.format(label=lab, text=text) for lab, text in zip(shown, options, strict=True)
        )
        answer = md_answer.format(text=options[slot]) if scheme.uniform else f"{answer_word}: {shown[slot]}"
        blocks.append(f"{question_word}: {example.question}\n{listed}\n{answer}")
    return FewShotBlock("\n\n".join(blocks), slots, tuple(e.id for e in chosen))


# ---------------------------------------------------------------- explicit few-shot bias

# The response names the examples' answer pattern (seed: "according to the previous examples ...").
_PATTERN_CUES = re.compile(
    r"(?ix)"
    r"\b(?:always|every\s+time|each\s+time|all\s+(?:the\s+)?(?:previous\s+|other\s+)?(?:answers|examples))\b"
    r"|\b(?:previous|preceding|above|earlier|prior|given)\s+(?:examples?|questions?|answers?)\b"
    r"|\b(?:the\s+)?(?:pattern|trend)\s+(?:in|of|from)\b|\bfollow(?:s|ing)?\s+the\s+pattern\b"
    r"|\bmost\s+(?:of\s+the\s+)?(?:answers|examples)\b|\bin\s+the\s+examples\b"
    r"|\bзавжди\b|\bщоразу\b|\bкожного\s+разу\b"
    r"|\b(?:усі|всі|більшість)\s+(?:\w+\s+)?(?:відповіді|відповідей|приклад\w*)\b"
    r"|\b(?:попередні\w*|наведені\w*|вищенаведені\w*)\s+(?:приклад\w*|питан\w*|відповід\w*)\b"
    r"|\b(?:у|в)\s+приклад(?:ах|і)\b|\bза\s+зразком\b|\bзакономірн\w*"
)


def names_pattern(response_text: str) -> bool:
    """True when the response refers to the examples' answers or their pattern (explicit few-shot bias)."""
    return bool(_PATTERN_CUES.search(response_text or ""))
