"""Read an answer back: the slot a response picks among the labels its presentation showed
(``interpret``; SPEC, parse statuses), the inverse of ``tasks/presentations.py``'s rendering.

An answer is read per label scheme, strict first, then lenient. Rules, in order:
1. Markdown, ``<think>`` blocks and LaTeX ``\\boxed{}`` are stripped; empty text is ``unparseable``.
2. The last answer line ("Відповідь: Б", "Answer: B", "The answer is B", "Правильна відповідь — В") is
   read first; when it names no label at all, the whole text is read instead.
3. Within that text the strongest tier that finds any label decides: the text is exactly a label (any
   case) > it starts with one ("Б) ...", "B. ...") > marked labels ("(B)", "B)", "варіант Б", "option B")
   > standalone capital labels (only on a single line). One distinct label: ``ok``; a label beyond the
   item's N options, or two different labels: ``unparseable``.
4. Nothing in the asked scheme, but exactly one label of another scheme: ``other_scheme``, the label kept
   and never mapped. Schemes are told apart by code point, never by shape: Latin "B" (U+0042) answering
   Cyrillic labels is ``other_scheme`` although it looks like Cyrillic "В" (U+0412), and vice versa.
5. No single label and a refusal phrase (Ukrainian, English, Russian): ``refused``; else ``unparseable``.
A hedged guess that names one label ("Не можу знати напевно, але Б") counts as an answer.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

from blindmcq.backends.base import ModelResponse
from blindmcq.errors import ConfigError
from blindmcq.tasks.presentations import Presentation
from blindmcq.vocabulary import FAILED_STATUSES, ParseStatus

MdMatcher = Callable[[str, Sequence[str]], tuple[int | None, str]]


@dataclass(frozen=True)
class Parsed:
    slot: int | None  # picked slot, None unless status is ok
    status: ParseStatus
    label: str | None  # the label as answered (also for other_scheme and out-of-range labels)


REFUSALS = (
    # Ukrainian
    "не можу",
    "неможливо визначити",
    "неможливо відповісти",
    "неможливо дати",
    "не маю змоги",
    "не в змозі",
    "без тексту запитання",
    "без самого запитання",
    "без запитання",
    "без питання",
    "відмовляюся",
    # English
    "i cannot",
    "i can't",
    "i can not",
    "i'm unable",
    "i am unable",
    "i'm not able",
    "i am not able",
    "unable to determine",
    "cannot determine",
    "can't determine",
    "not possible to determine",
    "without the question",
    "i won't",
    "i will not",
    # Russian (models sometimes switch)
    "не могу",
    "невозможно",
)

_THINK = re.compile(r"<think>.*?(</think>|$)", re.S | re.I)
_MARKDOWN = re.compile(r"\*+|_{2,}|`+|^\s*[#>]+\s*", re.M)
_BOXED = re.compile(r"\$?\\boxed\{([^{}]*)\}\$?")
_ANSWER_LINE = re.compile(
    r"(?i)\b(?:final\s+answer|answer|відповідь|ответ)\b(?:\s+(?:is|є))?\s*[:：—–-]?\s*(?P<rest>\S.*)$"
)
_WRAP = " \t\r\n.,;:!?()[]{}«»\"'“”„‘’"
# a run of whitespace becomes one character (a newline if it holds one): the label patterns' adjacent
# ``\s*`` would otherwise backtrack quadratically over a long run of spaces
_RUNS = re.compile(r"\s+")
_ORDER = ("latin", "cyrillic", "numerals")  # fixed order for the other-scheme search, then the rest


def _clean(text: str) -> str:
    """The answer without hidden reasoning, ``\\boxed{}`` and markdown, each whitespace run one character
    (so every pattern below runs in time linear in the answer's length)."""
    text = _THINK.sub("", text)
    text = _BOXED.sub(r"\1", text)
    text = _RUNS.sub(lambda m: "\n" if "\n" in m.group() else " ", text)
    return _MARKDOWN.sub("", text).strip()


def _answer_segment(text: str) -> str | None:
    for line in reversed(text.splitlines()):
        match = _ANSWER_LINE.search(line)
        if match:
            return match.group("rest").strip()
    return None


@lru_cache(maxsize=512)
def _tiers(label: str) -> tuple[re.Pattern[str], ...]:
    lab = re.escape(label)
    # Singular forms only: "варіантів А, Б, В чи Г" lists the labels, it does not pick one.
    keyword = (
        r"(?i:варіант(?:а|у|ом|і)?|відповід(?:ь|і|ю)|літер(?:а|у|ою)|цифр(?:а|у|ою)"
        r"|option|answer|choice|letter|number)(?!\w)"
    )
    return (
        re.compile(rf"^{lab}(?=\s*[).:,;\]»\"]|\s+[-—–]|\s*$)"),
        # "(b)", "b)" in any case; after a keyword only the capital ("відповідь в статті" is no label)
        re.compile(
            rf"(?i:\({lab}\)|\[{lab}\]|(?<!\w){lab}\))|{keyword}\s*(?:is\s+)?[:—–-]?\s*[«\"'“]?{lab}(?!\w)"
        ),
        re.compile(rf"(?<!\w){lab}(?!\w)"),
    )


def _find(segment: str, symbols: Sequence[str], n: int, single_line: bool) -> list[str]:
    """Distinct labels of the strongest tier that finds any (see module docstring, rule 3)."""
    bare = segment.strip(_WRAP)
    for symbol in symbols:  # tier 0: the text is exactly a label, any case, even beyond N
        if bare.casefold() == symbol.casefold():
            return [symbol]
    per_tier = [_tiers(s) for s in symbols[:n]]
    for tier in range(3 if single_line else 2):
        found = [s for s, pats in zip(symbols[:n], per_tier, strict=True) if pats[tier].search(segment)]
        if found:
            return found
    return []


def _decide(label: str, symbols: Sequence[str], n: int) -> Parsed:
    slot = list(symbols).index(label)
    if slot >= n:  # a label of this scheme the item does not have
        return Parsed(None, "unparseable", label)
    return Parsed(slot, "ok", label)


def parse_answer(text: str, scheme: str, n: int, *, symbols: Mapping[str, Sequence[str]]) -> Parsed:
    """Parse a free-text answer to an item of ``n`` options labelled with ``scheme``.

    ``symbols`` maps every scheme name to its symbols (``labels.label_symbols_by_scheme``); the other schemes
    are what ``other_scheme`` is detected against.
    """
    if scheme not in symbols:
        raise ConfigError(
            "labels", f"no symbols for scheme {scheme!r} (have {sorted(symbols)}; the dash is read by md)"
        )
    target = [str(s) for s in symbols[scheme]]
    if len(set(target)) < max(2, len(target)):
        raise ConfigError(f"labels.{scheme}", "symbols repeat: a uniform scheme is read by the md matcher")
    others = sorted(
        (k for k in symbols if k != scheme and len(set(symbols[k])) == len(symbols[k]) > 1),
        key=lambda k: (_ORDER.index(k) if k in _ORDER else len(_ORDER), k),
    )
    clean = _clean(text or "")
    if not clean:
        return Parsed(None, "unparseable", None)
    segments: list[tuple[str, bool]] = []
    answer = _answer_segment(clean)
    if answer:
        segments.append((answer, True))
    segments.append((clean, "\n" not in clean))
    for segment, single_line in segments:
        found = _find(segment, target, n, single_line)
        if found:  # two labels on the answer line do not fall back to the whole text
            if len(found) == 1:
                return _decide(found[0], target, n)
            break
        for other in others:
            found_other = _find(segment, [str(s) for s in symbols[other]], n, single_line)
            if len(found_other) == 1:
                return Parsed(None, "other_scheme", found_other[0])
    lowered = clean.casefold().replace("’", "'")
    if any(phrase in lowered for phrase in REFUSALS):
        return Parsed(None, "refused", None)
    return Parsed(None, "unparseable", None)


def interpret(
    p: Presentation,
    response: ModelResponse,
    *,
    symbols: Mapping[str, Sequence[str]],
    md_matcher: MdMatcher | None = None,
) -> Parsed:
    """The answer a response gives to a presentation.

    Backend ``error``/``refused`` pass through. Matched-and-Dashed calls ``md_matcher(text, option_texts)``.
    Scored calls (``choice_logprobs``) take the argmax; an exact tie is ``tie`` (no slot), so that a
    degenerate distribution never adds a first-slot bias; NaN scores are ``error``.
    Otherwise the text is parsed against the presentation's label scheme; ``symbols`` are every scheme's
    symbols (``labels.label_symbols_by_scheme``), what an answer in another scheme is told by.
    """
    if response.status in FAILED_STATUSES:
        return Parsed(None, response.status, None)
    if p.protocol == "md":
        if md_matcher is None:
            raise ConfigError("md_matcher", "protocol 'md' needs a matcher (blindmcq.protocols)")
        slot, status = md_matcher(response.text, p.option_texts)
        return Parsed(slot, status, None)
    scores = response.choice_logprobs
    if scores is not None:
        if len(scores) != p.n_options:
            raise ValueError(f"{len(scores)} label scores for {p.n_options} options (item {p.item_id})")
        if any(math.isnan(s) for s in scores):
            return Parsed(None, "error", None)
        best = max(scores)
        winners = [i for i, s in enumerate(scores) if s == best]
        if len(winners) > 1:
            return Parsed(None, "tie", None)
        return Parsed(winners[0], "ok", p.label_strings[winners[0]])
    table = dict(symbols)
    table.setdefault(p.labels, list(p.label_strings))
    return parse_answer(response.text, p.labels, p.n_options, symbols=table)
