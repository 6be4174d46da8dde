"""The words the intervention prompts (rewrite, AnswerPool) name a bank with, from the dataset config.

As for the probe's phrasings (``tasks.presentations.for_bank``), a template declares its placeholders and
their neutral words; the dataset's ``description`` mapping fills them. A placeholder the description
leaves out takes the description's more general entry where one is named (``FALLBACK``: a bank that
names its exam once, ``exam_uk``, is named by it everywhere), else the neutral words: a bank with no
description is never called a legal exam.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# a template's own placeholder -> the general description entry it falls back to
FALLBACK: dict[str, str] = {
    "rewrite_exam_uk": "exam_uk",
    "rewrite_exam_en": "exam_en",
    "pool_exam_en": "exam_en",
}


def bank_words(neutral: Mapping[str, str], description: Any) -> dict[str, str]:
    """Per placeholder of ``neutral``: the description's words for it, its fallback's, or the neutral
    words. ``description``: the dataset's (a mapping; a plain-text note for people, or none, names
    nothing)."""
    given = description if isinstance(description, Mapping) else {}
    words = {}
    for key, plain in neutral.items():
        value = given.get(key, given.get(FALLBACK.get(key, key), plain))
        words[key] = str(value)
    return words


def fill_bank(template: str, words: Mapping[str, str], keep: tuple[str, ...]) -> str:
    """``template`` with its bank placeholders filled and the per-request ones (``keep``) left for
    ``str.format``; braces in the bank's words are escaped so they stay text."""
    escaped = {k: v.replace("{", "{{").replace("}", "}}") for k, v in words.items()}
    return template.format(**escaped, **{k: "{" + k + "}" for k in keep})
