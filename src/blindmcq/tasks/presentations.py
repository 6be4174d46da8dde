"""Turn items into presentations: orders, forced placement, label schemes and prompt rendering (SPEC,
"Presentations"), and the backend request for each. Plain functions over the typed groups of
``config/schema.py`` (``Prompt``, ``Labels``, ``Reasoning``, ``Protocol``, checked where configuration
enters); nothing here is random, so the same config yields byte-identical prompts.
Reading an answer back, the inverse of this rendering, is ``tasks/parsing.py``.
"""

from __future__ import annotations

import dataclasses
import string
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from blindmcq.backends.base import ModelRequest
from blindmcq.config.schema import Labels, Prompt, Protocol, Reasoning
from blindmcq.datasets.items import Item
from blindmcq.errors import ConfigError, InputError
from blindmcq.labels import (  # noqa: F401 (re-exported)
    EXTENSIONS,
    extended_symbols,
    label_list,
    label_strings,
)
from blindmcq.tasks.bank_words import bank_words
from blindmcq.vocabulary import ANSWER_PROTOCOLS, CONDITIONS, PUBLISHED_ORDER, Condition

# Placeholders a phrasing template may use; {question} only in `full`.
TEMPLATE_FIELDS = frozenset({"options", "question", "answer_instruction"})
INSTRUCTION_FIELDS = frozenset({"label_list", "label_noun"})
# Matched-and-Dashed: a complete sentence as the final answer (seed 002), on a line the matcher's regex finds.
MD_INSTRUCTIONS = {
    "uk": "Наприкінці напишіть правильний варіант повним реченням в окремому рядку у форматі "
    "«Відповідь: <речення>».",
    "en": "Please provide a complete sentence as your final answer, on a last line of the form "
    '"Answer: <sentence>".',
}


@dataclass(frozen=True)
class Presentation:
    """One prompt as shown to a model, with everything needed to score the answer."""

    item_id: str
    condition: Condition
    phrasing: str
    labels: str  # label scheme name
    protocol: str  # sl | md
    reasoning: str  # direct | step_by_step | thinking
    order: tuple[int, ...]  # original option index shown in each slot
    order_id: str  # rot0.., rev0.., forced0..
    forced_slot: int | None
    key_slot: int | None
    n_options: int
    label_strings: tuple[str, ...]  # label shown in each slot
    option_texts: tuple[str, ...]  # option text shown in each slot, as published
    system: str | None
    user: str
    language: str = "uk"
    answer_cue: str = ""  # appended to `user` when a base model is scored by label log-probabilities
    shared_chars: int = 0  # the leading part of `user` before the options, the same in every order


# ---------------------------------------------------------------- orders


def orders(n: int) -> list[tuple[str, tuple[int, ...]]]:
    """The N rotations of the published order and the N rotations of its reverse (2N orders).

    ``rotK`` shows option ``(s + K) % n`` in slot s; ``revK`` rotates the reversed order the same way.
    Each family puts every option in every slot once, so across the 2N each option is in each slot twice.
    For N=2 the families coincide as sets (rot1 == rev0); both are kept so the balance still holds.
    """
    if n < 2:
        raise ValueError(f"orders need at least 2 options, got {n}")
    rot = [(f"rot{k}", tuple((s + k) % n for s in range(n))) for k in range(n)]
    rev = [(f"rev{k}", tuple(n - 1 - (s + k) % n for s in range(n))) for k in range(n)]
    return rot + rev


def forced_order(n: int, key: int, slot: int) -> tuple[str, tuple[int, ...]]:
    """Key in ``slot``, the distractors in their published relative order elsewhere; id ``forced{slot}``."""
    if not 0 <= key < n or not 0 <= slot < n:
        raise ValueError(f"key {key} and slot {slot} must lie in 0..{n - 1}")
    order = [i for i in range(n) if i != key]
    order.insert(slot, key)
    return f"forced{slot}", tuple(order)


def select_orders(n: int, wanted: str | Sequence[str], *, key: str) -> list[tuple[str, tuple[int, ...]]]:
    """``"all"`` (the 2N orders), ``"rotations"`` (the N rotations: each option in each slot once, half
    the calls) or a list of order ids (``rot0``, ``rev2``, ...) for N options; unknown ids are an error."""
    available = orders(n)
    if wanted == "all":
        return available
    if wanted == "rotations":
        return available[:n]
    if isinstance(wanted, str):
        raise ConfigError(key, f"expected 'all', 'rotations' or a list of order ids, got {wanted!r}")
    by_id = dict(available)
    unknown = [w for w in wanted if w not in by_id]
    if unknown:
        raise ConfigError(key, f"unknown order ids {unknown} for {n} options (have {list(by_id)})")
    return [(w, by_id[w]) for w in wanted]


# ---------------------------------------------------------------- label schemes


def _fields(template: Any, key: str) -> set[str]:
    if not isinstance(template, str):
        raise ConfigError(key, f"expected a template string, got {type(template).__name__}")
    try:
        return {f for _, f, _, _ in string.Formatter().parse(template) if f is not None}
    except ValueError as exc:
        raise ConfigError(key, f"bad template: {exc}") from exc


def _check_prompt(prompt: Prompt) -> None:
    name = prompt.name or "?"
    for field in ("name", "language", "blind", "full", "answer_instruction"):
        if not getattr(prompt, field):
            raise ConfigError(f"prompt.{name}.{field}", "missing")
    clash = (TEMPLATE_FIELDS | INSTRUCTION_FIELDS) & set(prompt.bank)
    if clash:
        raise ConfigError(f"prompt.{name}.bank.{sorted(clash)[0]}", "names a placeholder the template fills")
    allowed = TEMPLATE_FIELDS | set(prompt.bank)
    if prompt.system and prompt.bank:  # a system prompt is a template only where the phrasing names the bank
        unknown = _fields(prompt.system, f"prompt.{name}.system") - set(prompt.bank)
        if unknown:
            raise ConfigError(f"prompt.{name}.system", f"unknown placeholders {sorted(unknown)}")
    for condition in CONDITIONS:
        key = f"prompt.{name}.{condition}"
        used = _fields(getattr(prompt, condition), key)
        if used - allowed:
            raise ConfigError(key, f"unknown placeholders {sorted(used - allowed)}")
        required = {"options", "answer_instruction"} | ({"question"} if condition == "full" else set())
        if required - used:
            raise ConfigError(key, f"missing placeholders {sorted(required - used)}")
        if condition == "blind" and "question" in used:
            raise ConfigError(key, "the blind template must not show {question}")
    key = f"prompt.{name}.answer_instruction"
    if _fields(prompt.answer_instruction, key) - INSTRUCTION_FIELDS:
        raise ConfigError(key, f"only {sorted(INSTRUCTION_FIELDS)} may be used")


LINE_FIELDS = {"label", "text"}


def for_bank(prompt: Prompt, description: str | Mapping[str, str] | None) -> Prompt:
    """``prompt`` with its bank placeholders (``prompt.bank``) filled from a dataset's ``description``
    mapping (one entry per placeholder); a placeholder it does not fill, a plain-text description or none
    keeps the phrasing's neutral words. The phrasing's name stays: it is the same phrasing of another bank."""
    if not isinstance(description, Mapping) or not prompt.bank:
        return prompt
    return dataclasses.replace(prompt, bank=bank_words(prompt.bank, description))


def _check_line(labels: Labels) -> None:
    """The option-line template (``labels.line``) may use only {label} and {text}."""
    key = f"labels.{labels.name}.line"
    used = _fields(labels.line, key)
    if not used <= LINE_FIELDS or "text" not in used:
        raise ConfigError(key, f"must use {{text}}, may use only {sorted(LINE_FIELDS)}; got {sorted(used)}")


def _by_language(value: Any, language: str, key: str) -> str | None:
    """A reasoning/protocol text: a plain string or a mapping keyed by prompt language."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, Mapping):
        if language not in value:
            raise ConfigError(key, f"no text for language {language!r}")
        return str(value[language])
    raise ConfigError(key, f"expected a string or a mapping by language, got {type(value).__name__}")


def _answer_instruction(
    prompt: Prompt,
    labels: Labels,
    reasoning: Reasoning,
    protocol: str,
    protocol_cfg: Protocol | None,
    shown: Sequence[str],
) -> str:
    language = str(prompt.language)
    rname = reasoning.name
    prefix = _by_language(reasoning.prefix, language, f"reasoning.{rname}.prefix")
    own_instruction = protocol_cfg.answer_instruction if protocol_cfg is not None else None
    if protocol == "md":
        text = _by_language(own_instruction or MD_INSTRUCTIONS, language, "protocol.answer_instruction")
    else:
        final_line = _by_language(reasoning.final_line, language, f"reasoning.{rname}.final_line")
        # A protocol-level instruction (conf/protocol/sl.yaml, null by default) overrides the phrasing's.
        own = _by_language(own_instruction, language, "protocol.answer_instruction")
        text = final_line or own or str(prompt.answer_instruction)
        source = f"reasoning.{rname}.final_line" if final_line else "protocol.answer_instruction"
        if not (final_line or own):
            source = f"prompt.{prompt.name}.answer_instruction"
        nouns = labels.noun
        noun = _by_language(nouns, language, f"labels.{labels.name}.noun") if nouns else ""
        try:
            text = text.format(label_list=label_list(shown, str(prompt.or_word)), label_noun=noun)
        except (KeyError, IndexError, ValueError) as exc:
            raise ConfigError(
                source, f"{text!r}: only {{label_list}} and {{label_noun}} can be filled ({exc})"
            ) from None
    return f"{prefix} {text}" if prefix else str(text)


def _option_line(line: str, label: str, text: str) -> str:
    # Collapse line breaks and runs of spaces from the PDF so each option stays one list line.
    return line.format(label=label, text=" ".join(text.split())).rstrip()


# ---------------------------------------------------------------- presentations


@dataclass
class _Setup:
    """One validated (phrasing, labels, reasoning, protocol) combination; instructions cached per N."""

    prompt: Prompt
    labels: Labels
    reasoning: Reasoning
    protocol: str
    protocol_cfg: Protocol | None
    per_n: dict[int, tuple[tuple[str, ...], str]]

    @classmethod
    def make(
        cls,
        prompt: Prompt,
        labels: Labels,
        reasoning: Reasoning,
        protocol: str,
        protocol_cfg: Protocol | None,
    ) -> _Setup:
        if protocol not in ANSWER_PROTOCOLS:
            raise ConfigError("protocol", f"{protocol!r} is not one of {ANSWER_PROTOCOLS}")
        # Dash labels only make sense with the Matched-and-Dashed protocol, and MD always uses them.
        if (protocol == "md") != labels.uniform:
            raise ConfigError("labels", f"protocol {protocol!r} cannot use label scheme {labels.name!r}")
        setup = cls(prompt, labels, reasoning, protocol, protocol_cfg, {})
        _check_prompt(setup.prompt)
        _check_line(setup.labels)
        return setup

    def labels_and_instruction(self, n: int) -> tuple[tuple[str, ...], str]:
        if n not in self.per_n:
            shown = label_strings(self.labels, n)
            instruction = _answer_instruction(
                self.prompt, self.labels, self.reasoning, self.protocol, self.protocol_cfg, shown
            )
            self.per_n[n] = (shown, instruction)
        return self.per_n[n]


def _system(prompt: Prompt) -> str | None:
    if prompt.system and prompt.bank:
        return prompt.system.format(**prompt.bank)
    return prompt.system or None


def _render(item: Item, condition: str, order_id: str, order: Sequence[int], setup: _Setup) -> Presentation:
    n = item.n_options
    order = tuple(int(i) for i in order)
    if sorted(order) != list(range(n)):
        raise InputError(f"order {order} is not a permutation of {n} options", item=item.id)
    if condition not in CONDITIONS:
        raise ConfigError("condition", f"{condition!r} is not one of {CONDITIONS}")
    prompt = setup.prompt
    shown, instruction = setup.labels_and_instruction(n)
    line = setup.labels.line
    options = "\n".join(_option_line(line, lab, item.options[i]) for lab, i in zip(shown, order, strict=True))
    fields = {**prompt.bank, "options": options, "answer_instruction": instruction}
    if condition == "full":
        fields["question"] = " ".join(item.question.split())
    template = str(getattr(prompt, condition))
    user = template.format(**fields)
    # what comes before the options is the same in every order (blind: in every item): a local model
    # computes it once (backends/local.py, shared prefixes)
    head = template.split("{options}", 1)[0].format(**fields) if "{options}" in template else ""
    return Presentation(
        item_id=item.id,
        condition=condition,
        phrasing=prompt.name,
        labels=setup.labels.name,
        protocol=setup.protocol,
        reasoning=setup.reasoning.name,
        order=order,
        order_id=order_id,
        forced_slot=int(order_id[6:]) if order_id.startswith("forced") else None,
        key_slot=None if item.key is None else order.index(item.key),
        n_options=n,
        label_strings=shown,
        option_texts=tuple(item.options[i] for i in order),
        system=_system(prompt),
        user=user,
        language=prompt.language,
        answer_cue=prompt.answer_cue or "",
        shared_chars=len(head) if head and user.startswith(head) else 0,
    )


def present(
    item: Item,
    *,
    condition: str,
    order_id: str,
    order: Sequence[int],
    prompt: Prompt,
    labels: Labels,
    reasoning: Reasoning,
    protocol: str = "sl",
    protocol_cfg: Protocol | None = None,
) -> Presentation:
    """Render one item in one order under one phrasing, label scheme, reasoning mode and protocol."""
    return _render(
        item, condition, order_id, order, _Setup.make(prompt, labels, reasoning, protocol, protocol_cfg)
    )


def build_presentations(
    items: Iterable[Item],
    *,
    conditions: Sequence[str],
    blind_orders: str | Sequence[str],
    full_orders: str | Sequence[str] = (PUBLISHED_ORDER,),
    forced: bool,
    prompt: Prompt,
    labels: Labels,
    reasoning: Reasoning,
    protocol: str = "sl",
    protocol_cfg: Protocol | None = None,
    forced_conditions: Sequence[str] = ("blind",),
) -> list[Presentation]:
    """Every presentation of a probe, in a fixed order: item, condition, order, then forced slots.

    ``blind_orders``/``full_orders`` are ``"all"`` (the 2N orders) or lists of order ids; ``forced`` adds,
    for each condition in ``forced_conditions`` that is also in ``conditions``, the key in each slot.
    """
    wanted = {"blind": blind_orders, "full": full_orders}
    setup = _Setup.make(prompt, labels, reasoning, protocol, protocol_cfg)
    out: list[Presentation] = []
    for item in items:
        n = item.n_options
        try:
            setup.labels_and_instruction(n)
        except ConfigError as exc:  # e.g. a 30-option item against 26 labels: name the item
            raise InputError(f"{n} options: {exc}", file=item.file, item=item.id) from None
        for condition in conditions:
            if condition not in CONDITIONS:
                raise ConfigError("conditions", f"{condition!r} is not one of {CONDITIONS}")
            chosen = select_orders(n, wanted[condition], key=f"{condition}_orders")
            if forced and condition in forced_conditions:
                if item.key is None:
                    raise InputError("forced placement needs a key", item=item.id)
                chosen = chosen + [forced_order(n, item.key, s) for s in range(n)]
            out.extend(_render(item, condition, order_id, order, setup) for order_id, order in chosen)
    return out


def to_request(
    p: Presentation,
    *,
    model: str,
    temperature: float | None,
    max_tokens: int,
    score_labels: bool,
    thinking_budget: int | None = None,
) -> ModelRequest:
    """The backend request for a presentation.

    ``score_labels``: the backend ranks ``choices`` (the slot labels) by log-probability after the prompt;
    the phrasing's answer cue ("Відповідь:") then ends the user text, as lm-evaluation-harness does.
    ``thinking`` reasoning needs ``thinking_budget`` (conf/reasoning/thinking.yaml), sent in ``extra``.
    """
    if score_labels and p.protocol == "md":
        raise ConfigError("score_labels", "the Matched-and-Dashed protocol generates; it cannot be scored")
    extra: dict[str, Any] = {}
    if p.reasoning == "thinking":
        if not thinking_budget:
            raise ConfigError("reasoning.thinking_budget_tokens", "thinking needs a positive token budget")
        extra["thinking_budget_tokens"] = int(thinking_budget)
    user = f"{p.user}\n{p.answer_cue}" if score_labels and p.answer_cue else p.user
    if score_labels and p.shared_chars:
        extra["shared_prefix_chars"] = p.shared_chars
    return ModelRequest(
        model=model,
        system=p.system,
        user=user,
        choices=p.label_strings if score_labels else (),
        temperature=temperature,
        max_tokens=max_tokens,
        reasoning=p.reasoning,
        extra=extra,
    )
