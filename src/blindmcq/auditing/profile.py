"""Option-format profile of a bank: does its format let an option be judged without the stem?

The paper's contrast (Figure 4): LEXam's options are pointers into the stem ("i and iii", never
longer than 33 characters), the judge bank's are self-contained legal propositions. A profile
measures that from the items alone.

Conventions (written down because they move the numbers):
- Length is counted on whitespace-normalised text (runs of spaces and line breaks become one space,
  ends stripped); words are whitespace-separated tokens (``blindmcq.surface.chars``/``words``, the
  measures of the surface strategies).
- Option lengths and pointer shares use every option of every item, as published (malformed items
  included: their options are still text a reader sees). Key statistics use usable items only.
- Key length minus distractor length is pooled: mean over all keys minus mean over all distractors.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from blindmcq.datasets.items import Item
from blindmcq.surface import chars, collapse_whitespace, words

QUANTILES = (0.1, 0.25, 0.5, 0.75, 0.9)
LONG_OPTION_CHARS = 33  # LEXam's longest option; the paper reports the share above it

_ROMAN = frozenset("i ii iii iv v vi vii viii ix x xi xii xiii xiv xv xvi xvii xviii xix xx".split())
_CONNECTORS = frozenset("and und et e y or oder ou sowie і й та або чи".split())
_ONLY = frozenset("only nur just lediglich seulement лише тільки both beide all alle".split())
_TOKEN = re.compile(r"\w+|[^\w\s]")
_LETTER = re.compile(r"^[^\W\d_]$")  # one letter of any script: "A", "Б"

# Whole-option phrases (case-insensitive, after normalisation and trailing punctuation strip).
PHRASES: dict[str, re.Pattern[str]] = {
    # Checked first: "all answers are wrong" is a none-of-the-above.
    "none_of_the_above": re.compile(
        r"^(?:none of the (?:above|statements|answers|options)(?: (?:is|are) (?:correct|true))?"
        r"|no (?:statement|answer) is (?:correct|true)"
        r"|neither\b.* nor\b.*"
        r"|keine (?:der )?(?:obigen |oben genannten |genannten )?(?:aussagen|antworten)?"
        r"(?: (?:ist|sind) (?:richtig|korrekt))?"
        r"|weder\b.* noch\b.*"
        r"|(?:усі|всі) (?:відповіді|варіанти)(?: \w+)? (?:неправильні|невірні)"
        r"|жодн(?:а|ий|е|ої)(?: з| із)?(?: \w+){0,4}"
        r"|(?:немає|відсутня) правильн\w* відповід\w*"
        r"|правильн\w* відповід\w* (?:немає|відсутня))$",
        re.IGNORECASE,
    ),
    "all_of_the_above": re.compile(
        r"^(?:all (?:of )?the (?:above|statements|answers|options)(?: are (?:correct|true))?"
        r"|all (?:statements|answers) are (?:correct|true)"
        r"|alle (?:der )?(?:obigen |oben genannten |genannten )?(?:aussagen|antworten)"
        r"(?: sind (?:richtig|korrekt))?"
        r"|(?:усі|всі) (?:відповіді|варіанти|перелічені|наведені|вищезазначені|зазначені)(?: \w+){0,3}"
        r"|(?:усе|все) (?:вище)?(?:перелічене|перераховане|зазначене|наведене)(?: \w+){0,2})$",
        re.IGNORECASE,
    ),
}
POINTER_KINDS = ("roman_list", "letter_reference", "all_of_the_above", "none_of_the_above")


def pointer_kind(option: str) -> str | None:
    """The stem-pointer category of an option ("i and iii", "A and B", "none of the above"), or None.

    A roman list or letter reference is an option made only of numerals/single letters, connectors
    ("and", "und", "і", ","), and "only"/"nur"; phrases are matched whole.
    """
    text = collapse_whitespace(option).rstrip(".!").strip().casefold()
    if not text:
        return None
    words = [t for t in _TOKEN.findall(text) if t.isalnum()]
    rest = [t for t in words if t not in _CONNECTORS and t not in _ONLY]
    if rest and all(t in _ROMAN for t in rest):
        return "roman_list"
    letters = [t for t in rest if _LETTER.match(t)]
    if rest and len(letters) == len(rest) and (len(letters) > 1 or len(words) > 1):
        return "letter_reference"
    for kind, pattern in PHRASES.items():
        if pattern.match(text):
            return kind
    return None


def option_table(items: Sequence[Item]) -> pd.DataFrame:
    """One row per option: item_id, slot, n_options, is_key, chars, words, pointer (kind or None)."""
    columns = ["item_id", "bank", "slot", "n_options", "usable", "is_key", "chars", "words", "pointer"]
    # numpy columns filled in place, never a Python object per number: a million-item bank's four
    # million options took gigabytes as lists of ints and dicts
    total = sum(item.n_options for item in items)
    ids, banks, pointer = (np.empty(total, dtype=object) for _ in range(3))
    slot, n_options, n_chars, n_words = (np.empty(total, dtype=np.int64) for _ in range(4))
    usable, is_key = np.empty(total, dtype=bool), np.zeros(total, dtype=bool)
    row = 0
    for item in items:
        n = item.n_options
        span = slice(row, row + n)
        ids[span], banks[span], n_options[span], usable[span] = item.id, item.bank, n, item.usable
        slot[span] = np.arange(n)
        if item.usable and 0 <= int(item.key) < n:  # type: ignore[arg-type]
            is_key[row + int(item.key)] = True  # type: ignore[arg-type]
        for j, option in enumerate(item.options):
            n_chars[row + j] = chars(option)  # the surface strategies' measures
            n_words[row + j] = words(option)
            pointer[row + j] = pointer_kind(option)
        row += n
    data = {"item_id": ids, "bank": banks, "slot": slot, "n_options": n_options, "usable": usable,
            "is_key": is_key, "chars": n_chars, "words": n_words, "pointer": pointer}  # fmt: skip
    return pd.DataFrame(data, columns=columns)


def _distribution(values: pd.Series) -> dict[str, float]:
    if values.empty:
        return {
            "mean": float("nan"),
            "max": float("nan"),
            **{f"q{int(q * 100)}": float("nan") for q in QUANTILES},
        }
    out = {"mean": float(values.mean()), "max": float(values.max())}
    out.update({f"q{int(q * 100)}": float(values.quantile(q)) for q in QUANTILES})
    return out


def profile_bank(items: Sequence[Item], *, long_option_chars: int = LONG_OPTION_CHARS) -> dict[str, Any]:
    """Option-format profile of a bank (see module docstring for the conventions)."""
    table = option_table(items)
    usable = [item for item in items if item.usable]
    keyed = table[table["usable"]]
    keys, distractors = keyed[keyed["is_key"]], keyed[~keyed["is_key"]]
    max_n = max((item.n_options for item in usable), default=0)
    key_counts = Counter(item.key for item in usable)
    pointer_counts = Counter(k for k in table["pointer"] if k is not None)
    n_opts = len(table)
    key_chars = float(keys["chars"].mean()) if len(keys) else float("nan")
    distractor_chars = float(distractors["chars"].mean()) if len(distractors) else float("nan")
    return {
        "n_items": len(items),
        "n_usable": len(usable),
        "n_options_total": n_opts,
        "n_options_distribution": dict(sorted(Counter(item.n_options for item in items).items())),
        "option_chars": _distribution(table["chars"]),
        "option_words": _distribution(table["words"]),
        "long_option_chars": long_option_chars,
        "share_options_longer": float((table["chars"] > long_option_chars).mean())
        if n_opts
        else float("nan"),
        "pointer_share": float(table["pointer"].notna().mean()) if n_opts else float("nan"),
        "pointer_share_by_kind": {
            k: pointer_counts.get(k, 0) / n_opts if n_opts else float("nan") for k in POINTER_KINDS
        },
        "key_chars_mean": key_chars,
        "distractor_chars_mean": distractor_chars,
        "key_minus_distractor_chars": key_chars - distractor_chars,
        "key_words_mean": float(keys["words"].mean()) if len(keys) else float("nan"),
        "distractor_words_mean": float(distractors["words"].mean()) if len(distractors) else float("nan"),
        "key_slot_counts": [key_counts.get(s, 0) for s in range(max_n)],
        "key_slot_shares": [key_counts.get(s, 0) / len(usable) for s in range(max_n)] if usable else [],
        "chance": float(np.mean([1 / item.n_options for item in usable])) if usable else float("nan"),
    }
