"""AnswerPool: several questions sharing a context answer from one pooled, numbered option list.

Groups. The usable items of one context (``group_by``: the bank, or an item ``meta`` key such as
``act``) are shuffled with the seed and split into groups of ``group_size`` (the last groups one
smaller when the count does not divide: ``numpy.array_split``).
Pool. All options of a group, deduplicated (case and whitespace folded), shuffled with the seed,
numbered from 1. Deletion: ``delete_share`` of all usable items (seeded, exact count rounded) lose
their key's entry from their group's pool, so their correct response is abstention ("немає"/"none").
Any question whose key text no longer appears in its pool is unanswerable, so ground truth is exact.
Conditions. ``full``: the pool and the question stems. ``blind``: the pool and the question *slots*
only ("Питання 1" .. "Питання n", no stem). Since the slots are in random order, a blind per-slot
hit is chance by construction; what a blind model can exploit is pool structure only, which entries
look like answers. So the blind condition also reports ``set_hit``: the picked entry answers *some*
question of the group (order-free), against its chance, answer entries / (pool size + 1).
Asking. ``generate``: one request per group, one line per question ("1: 17" or "1: немає"),
parsed by ``parse_assignment``. ``score`` (the default for the local base model): one request per
question, the prompt ending "Питання k:", the choices = the entry labels and the abstain word, the
best log-probability wins (the backend's choices mechanism). Heuristic backends score too (they get
the pool texts, abstain as an empty text).
Entry labels (``entry_labels``): ``numbers`` "1".."P" or ``letters`` "A".."Z". ``auto`` = letters
when scoring a pool of at most 26 entries, because " A" and " немає" are single Gemma tokens, so one
forward pass scores every choice (" 17" is three tokens: one pass per choice); numbers otherwise.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from blindmcq.backends.base import Abilities, Backend, ModelRequest
from blindmcq.backends.registry import abilities_for, make_backend
from blindmcq.config.schema import AnswerPoolIntervention, ModelSchema
from blindmcq.datasets.items import Item
from blindmcq.engine.run import Result, run_requests
from blindmcq.errors import ConfigError
from blindmcq.tasks.bank_words import bank_words, fill_bank
from blindmcq.tasks.probe import effective_max_tokens
from blindmcq.vocabulary import FAILED_STATUSES, PromptLanguage

ABSTAIN = -1  # a parsed answer: abstention; ``None`` means no usable answer for the question
LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"

# the prompt's words in each of ``vocabulary.PROMPT_LANGUAGES`` (tests check the two name the same)
TEXT: dict[PromptLanguage, dict[str, str]] = {
    "uk": {
        "none": "немає",
        "full_intro": (
            "Нижче наведено {n} тестових запитань {exam_uk} і спільний перелік "
            "варіантів відповіді до них. Кожному запитанню відповідає щонайбільше один варіант із "
            "переліку; для деяких запитань правильного варіанта в переліку може не бути."
        ),
        "blind_intro": (
            "Нижче наведено спільний перелік варіантів відповіді до {n} тестових запитань {exam_uk}. "
            "Самі запитання не наведено: вони позначені лише номерами 1–{n}. "
            "Кожному запитанню відповідає щонайбільше один варіант із переліку; для деяких запитань "
            "правильного варіанта в переліку може не бути."
        ),
        "pool": "Перелік варіантів:",
        "questions": "Запитання:",
        "question": "Питання {k}",
        "hidden": "(текст запитання не наведено)",
        "instruction": (
            "Для кожного запитання напишіть окремий рядок у формі «номер запитання: {what} варіанта», "
            "наприклад «1: {example}», або «1: немає», якщо правильного варіанта в переліку немає."
        ),
        "answers": "Відповіді:",
        "numbers": "номер",
        "letters": "літера",
    },
    "en": {
        "none": "none",
        "full_intro": (
            "Below are {n} questions from {pool_exam_en} and one shared list of answer options. "
            "Each question has at most one correct option in the list; for some questions the correct "
            "option may be missing."
        ),
        "blind_intro": (
            "Below is one shared list of answer options to {n} questions from {pool_exam_en}. "
            "The questions themselves are not shown: they are numbered 1–{n} only. Each question has at "
            "most one correct option in the list; for some questions the correct option may be missing."
        ),
        "pool": "Options:",
        "questions": "Questions:",
        "question": "Question {k}",
        "hidden": "(question text not shown)",
        "instruction": (
            'For each question write one line "question number: option {what}", e.g. "1: {example}", or '
            '"1: none" when the list has no correct option for it.'
        ),
        "answers": "Answers:",
        "numbers": "number",
        "letters": "letter",
    },
}

# the bank placeholders of the intros and their neutral words; the dataset's ``description`` fills them
# (``tasks.bank_words``: ``pool_exam_en`` falls back to ``exam_en``)
BANK: dict[PromptLanguage, dict[str, str]] = {
    "uk": {"exam_uk": "з кількома варіантами відповіді"},
    "en": {"pool_exam_en": "a multiple-choice test"},
}


def intro(condition: str, language: PromptLanguage, n: int, description: Any = None) -> str:
    """The pooled prompt's first paragraph: ``n`` questions of the bank, named as the dataset's
    ``description`` says (neutral words without one)."""
    words = bank_words(BANK[language], description)
    return fill_bank(TEXT[language][f"{condition}_intro"], words, ("n",)).format(n=n)


_SCHEMA = AnswerPoolIntervention()


@dataclass(frozen=True)
class PoolConfig:
    """The fields of ``intervention.answerpool`` the pooled task reads, built from the schema's record
    (``of``): its defaults, types and ranges are the schema's, checked there only."""

    group_size: int = _SCHEMA.group_size
    group_by: str = _SCHEMA.group_by  # "bank" or a key of item.meta (e.g. "act")
    delete_share: float = _SCHEMA.delete_share
    seed: int = _SCHEMA.seed
    conditions: tuple[str, ...] = tuple(_SCHEMA.conditions)
    language: PromptLanguage = _SCHEMA.language
    scoring: str = _SCHEMA.scoring  # auto = score for local/heuristic backends, generate otherwise
    max_tokens: int = _SCHEMA.max_tokens
    entry_labels: str = _SCHEMA.entry_labels  # auto = letters when scoring and the pool has <= 26 entries

    @classmethod
    def of(cls, schema: AnswerPoolIntervention) -> PoolConfig:
        """The pooled task's fields of a checked ``intervention.answerpool``."""
        values = {f.name: getattr(schema, f.name) for f in dataclasses.fields(cls)}
        return cls(**{**values, "conditions": tuple(values["conditions"])})


@dataclass(frozen=True)
class PoolGroup:
    group_id: str
    context: str
    item_ids: tuple[str, ...]
    questions: tuple[str, ...]
    pool: tuple[str, ...]  # entry number k is pool[k - 1]
    truth: tuple[int | None, ...]  # 0-based pool index per question; None = unanswerable
    deleted: tuple[str, ...]  # items whose key entry was deleted

    @property
    def answer_entries(self) -> set[int]:
        return {t for t in self.truth if t is not None}


def _norm(text: str) -> str:
    return " ".join(text.split()).casefold()


def _seed(*parts: object) -> int:
    return int.from_bytes(hashlib.sha256(repr(parts).encode()).digest()[:8], "big")


def _context(item: Item, group_by: str) -> str:
    if group_by == "bank":
        return item.bank
    value = item.meta.get(group_by)
    if value is None:
        raise ConfigError("intervention.answerpool.group_by", f"item {item.id} has no meta[{group_by!r}]")
    return str(value)


def build_groups(items: Sequence[Item], conf: PoolConfig) -> list[PoolGroup]:
    """Seeded groups of usable items sharing a context, their pools, deletions and exact truth."""
    usable = [item for item in items if item.usable]
    n_delete = round(float(conf.delete_share) * len(usable))
    order = np.random.default_rng(_seed(conf.seed, "delete")).permutation(len(usable))
    deleted = {usable[i].id for i in order[:n_delete]}
    contexts: dict[str, list[Item]] = {}
    for item in usable:
        contexts.setdefault(_context(item, conf.group_by), []).append(item)
    groups: list[PoolGroup] = []
    for context in sorted(contexts):
        members = contexts[context]
        perm = np.random.default_rng(_seed(conf.seed, context)).permutation(len(members))
        for g, chunk in enumerate(np.array_split(perm, math.ceil(len(members) / int(conf.group_size)))):
            groups.append(
                _group(f"{context}-g{g:03d}", context, [members[i] for i in chunk], deleted, conf.seed)
            )
    return groups


def _group(group_id: str, context: str, members: list[Item], deleted: set[str], seed: int) -> PoolGroup:
    removed = {_norm(m.options[m.key]) for m in members if m.id in deleted}  # type: ignore[index]
    entries: dict[str, str] = {}
    for member in members:
        for option in member.options:
            if option.strip() and _norm(option) not in removed:
                entries.setdefault(_norm(option), option)
    keys = list(entries)
    perm = np.random.default_rng(_seed(seed, group_id)).permutation(len(keys))
    pool = [entries[keys[i]] for i in perm]
    index = {_norm(text): i for i, text in enumerate(pool)}
    return PoolGroup(
        group_id=group_id,
        context=context,
        item_ids=tuple(m.id for m in members),
        questions=tuple(m.question for m in members),
        pool=tuple(pool),
        truth=tuple(index.get(_norm(m.options[m.key])) for m in members),  # type: ignore[index]
        deleted=tuple(m.id for m in members if m.id in deleted),
    )


# ------------------------------------------------------------------- prompts and parsing


def entry_labels(pool_size: int, style: str = "numbers") -> tuple[str, ...]:
    """Pool entry labels: "1".."P", or "A".. (single tokens, so one forward pass scores them all)."""
    if style == "letters":
        if pool_size > len(LETTERS):
            raise ConfigError(
                "intervention.answerpool.entry_labels", f"letters label at most 26 entries, not {pool_size}"
            )
        return tuple(LETTERS[:pool_size])
    return tuple(str(k) for k in range(1, pool_size + 1))


def render_prompt(
    group: PoolGroup,
    condition: str,
    language: PromptLanguage,
    slot: int | None = None,
    style: str = "numbers",
    description: Any = None,
) -> str:
    """The pooled prompt; with ``slot`` (0-based) it ends "Питання k:" for log-probability scoring.
    ``description``: the dataset's, naming the bank (``intro``)."""
    t = TEXT[language]
    n = len(group.item_ids)
    labels = entry_labels(len(group.pool), style)
    lines = [intro(condition, language, n, description), "", t["pool"]]
    lines += [f"{label}. {text}" for label, text in zip(labels, group.pool, strict=True)]
    lines += ["", t["questions"]]
    for k, question in enumerate(group.questions, start=1):
        shown = question if condition == "full" else t["hidden"]
        lines.append(f"{t['question'].format(k=k)}: {shown}")
    example = labels[min(16, len(labels) - 1)] if labels else "1"
    lines += ["", t["instruction"].format(what=t[style], example=example)]
    if slot is not None:
        lines += ["", t["answers"], f"{t['question'].format(k=slot + 1)}:"]
    return "\n".join(lines)


_ABSTAIN_WORDS = r"немає|нема|жоден|жодного|none|no answer|n/a|—|–"
_LINE = re.compile(
    r"^[\W_]*(?:питання|запитання|question|q)?\s*№?\s*(\d+)\s*\**\s*[:.)=–—-]\s*\**\s*"
    r"(?:варіант|option|entry|№|#)?\s*(\d+|" + _ABSTAIN_WORDS + r"|[A-Z]\b)",
    re.IGNORECASE,
)


def _labels(pool: int | Sequence[str]) -> tuple[str, ...]:
    return entry_labels(pool) if isinstance(pool, int) else tuple(pool)


def parse_answer_token(token: str, pool: int | Sequence[str]) -> int | None:
    """One answer: a 0-based entry, ``ABSTAIN``, or None (not a label of the pool).

    ``pool``: the entry labels, or the pool size for the labels "1".."P"."""
    token = token.strip()
    if re.fullmatch(_ABSTAIN_WORDS, token, re.IGNORECASE):
        return ABSTAIN
    labels = _labels(pool)
    return labels.index(token) if token in labels else None


def parse_assignment(text: str, n_questions: int, pool: int | Sequence[str]) -> list[int | None]:
    """Per question (in order) its 0-based entry, ``ABSTAIN``, or None when no valid line names it.

    Reads lines such as "1: 17", "Питання 2 — немає", "**3**: 5", "4) 12"; the first line for a
    question wins; a question number outside 1..n is ignored.
    """
    labels = _labels(pool)
    answers: list[int | None] = [None] * n_questions
    seen: set[int] = set()
    for line in text.splitlines():
        match = _LINE.match(line.strip())
        if not match:
            continue
        q = int(match.group(1)) - 1
        if 0 <= q < n_questions and q not in seen:
            seen.add(q)
            answers[q] = parse_answer_token(match.group(2), labels)
    return answers


# ------------------------------------------------------------------- exact chance rates


def chance_question(pool_size: int) -> Fraction:
    """A uniform guess among the P entries and abstention (the prompt always offers it): 1/(P+1),
    whatever the truth."""
    return Fraction(1, pool_size + 1)


def chance_group(pool_size: int, n_questions: int) -> Fraction:
    """Probability that uniform guessing answers every question of a group correctly: (P + 1)^-n.

    Each question is guessed on its own, because nothing in the prompt or the scoring keeps two
    questions from sharing an entry (deduplicated pools can make two keys one entry). The AnswerPool
    paper's abstract counts assignments of distinct entries without abstention instead
    (1 / P!/(P-n)!, its 5e-7 for five four-option questions); the report does not print that count.
    """
    return Fraction(1, (pool_size + 1) ** n_questions)


# ------------------------------------------------------------------- running


def _scoring(conf: PoolConfig, model_cfg: ModelSchema, abilities: Abilities | None = None) -> str:
    if conf.scoring != "auto":
        return conf.scoring
    abilities = abilities or abilities_for(model_cfg)
    return "score" if abilities.scores_by_default or abilities.needs_option_texts else "generate"


def label_style(
    conf: PoolConfig, model_cfg: ModelSchema, pool_size: int, abilities: Abilities | None = None
) -> str:
    if conf.entry_labels != "auto":
        return conf.entry_labels
    scored = _scoring(conf, model_cfg, abilities) == "score"
    return "letters" if scored and pool_size <= len(LETTERS) else "numbers"


class PoolCall(NamedTuple):
    """What a pool request asks: one group under one condition, and for a scored call one question
    (0-based; None: the generation that assigns every question)."""

    group_id: str
    condition: str
    question: int | None


def pool_requests(
    groups: Sequence[PoolGroup],
    conf: PoolConfig,
    model_cfg: ModelSchema,
    abilities: Abilities | None = None,
    description: Any = None,
) -> list[tuple[PoolCall, ModelRequest]]:
    """The calls: per group and condition one generation, or per question one scored request;
    ``description``: the dataset's, naming the bank in the prompt."""
    name, none = model_cfg.name, TEXT[conf.language]["none"]
    abilities = abilities or abilities_for(model_cfg)
    heuristic = abilities.needs_option_texts
    calls = []
    for group in groups:
        style = label_style(conf, model_cfg, len(group.pool), abilities)
        for condition in conf.conditions:
            if _scoring(conf, model_cfg, abilities) == "generate":
                user = render_prompt(group, condition, conf.language, style=style, description=description)
                request = ModelRequest(
                    model=name, system=None, user=user,
                    max_tokens=effective_max_tokens(model_cfg, conf.max_tokens),
                    extra={"answer_prefix": "", "item_id": group.group_id},
                )  # fmt: skip
                calls.append((PoolCall(group.group_id, condition, None), request))
                continue
            choices = (*entry_labels(len(group.pool), style), none)
            extra: dict[str, Any] = {"answer_prefix": "", "item_id": group.group_id}
            if heuristic:  # surface strategies judge the entry texts; abstention has none
                extra |= {"option_texts": [*group.pool, ""], "label_strings": list(choices)}
            for slot in range(len(group.item_ids)):
                user = render_prompt(
                    group, condition, conf.language, slot=slot, style=style, description=description
                )
                # the pool and questions are shared by the group's slots: only the last line differs
                shared = {"shared_prefix_chars": user.rindex("\n") + 1}
                request = ModelRequest(
                    model=name, system=None, user=user, choices=choices, extra={**extra, **shared}
                )
                calls.append((PoolCall(group.group_id, condition, slot), request))
    return calls


def run_answerpool(
    items: Sequence[Item],
    conf: PoolConfig,
    *,
    model_cfg: ModelSchema,
    cache: str | Path = ":memory:",
    backend: Backend | None = None,
    progress: bool = False,
    description: Any = None,
) -> pd.DataFrame:
    """One row per (group, condition, question): truth, pick, correctness, chance; see ``score``.
    ``description``: the dataset's, naming the bank in the prompt (neutral words without one)."""
    groups = build_groups(items, conf)
    abilities = abilities_for(model_cfg, backend)
    calls = pool_requests(groups, conf, model_cfg, abilities, description)
    backend = backend or make_backend(model_cfg)
    results = run_requests(
        [r for _, r in calls], backend, cache=cache,
        concurrency=model_cfg.concurrency, progress=progress, desc="answerpool",
    )  # fmt: skip
    by_group = {g.group_id: g for g in groups}
    answers: dict[tuple[str, str], list[int | None]] = {}
    result_of: dict[tuple[str, str, int], Result] = {}
    for (call, _), result in zip(calls, results, strict=True):
        group = by_group[call.group_id]
        failed = result.response.status in FAILED_STATUSES or _truncated(result)
        n, labels = (
            len(group.item_ids),
            entry_labels(len(group.pool), label_style(conf, model_cfg, len(group.pool), abilities)),
        )
        slots = range(n) if call.question is None else [call.question]
        text = result.response.text
        parsed = [None] * n if failed else parse_assignment(text, n, labels)
        if call.question is not None and not failed:  # a scored call answers with one bare label
            parsed[slots[0]] = parse_answer_token(text, labels)
        got = answers.setdefault((call.group_id, call.condition), [None] * n)
        for s in slots:
            got[s] = parsed[s]
            result_of[(call.group_id, call.condition, s)] = result
    rows = []
    for group in groups:
        for condition in conf.conditions:
            for s, item_id in enumerate(group.item_ids):
                pick = answers[(group.group_id, condition)][s]
                rows.append(
                    _row(group, condition, s, item_id, pick, result_of[(group.group_id, condition, s)])
                )
    frame = pd.DataFrame(rows)
    return frame.astype({"truth_entry": "Int64", "picked_entry": "Int64"}) if rows else frame


def _truncated(result: Result) -> bool:
    """A generated assignment cut off at the token limit: its last lines are missing, so it is rejected
    whole rather than read in part."""
    response = result.response
    return response.status == "ok" and response.meta.get("stop_reason") == "max_tokens"


def _row(
    group: PoolGroup, condition: str, s: int, item_id: str, pick: int | None, result: Result
) -> dict[str, Any]:
    truth = group.truth[s]
    size = len(group.pool)
    if result.response.status in FAILED_STATUSES:
        status = result.response.status
    elif _truncated(result):
        status = "truncated"
    else:
        status = "unparseable" if pick is None else "ok"
    correct = pick is not None and (pick == ABSTAIN if truth is None else pick == truth)
    return {
        "group_id": group.group_id, "context": group.context, "item_id": item_id, "condition": condition,
        "question": s + 1, "n_questions": len(group.item_ids), "pool_size": size,
        "answerable": truth is not None,
        "truth_entry": None if truth is None else truth + 1,
        "picked_entry": pick + 1 if pick is not None and pick != ABSTAIN else None,
        "abstained": pick == ABSTAIN,
        "parse_status": status,
        "correct": bool(correct),
        "set_hit": pick is not None and pick != ABSTAIN and pick in group.answer_entries,
        "chance": float(chance_question(size)),
        "set_chance": len(group.answer_entries) / (size + 1),
        "group_chance": float(chance_group(size, len(group.truth))),
        "model": result.request.model, "backend": result.backend, "raw_response": result.response.text,
        "request_hash": result.key, "cached": bool(result.cached),
    }  # fmt: skip
