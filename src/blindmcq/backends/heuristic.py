"""Surface strategies (paper Table 2) as "models", so they flow through the same runner and analysis.

Contract with the presentation layer: ``request.extra["option_texts"]`` holds the option text shown in
each slot (display order), and the answer is that slot's label from ``request.choices`` (or, when the
request has no choices, ``request.extra["label_strings"]``). When the labels do not tell slots apart
(the uniform dash of Matched-and-Dashed), the answer is the option text itself.
A tie at the extreme (longest, shortest, most_words) is broken uniformly at random, seeded by the
strategy's seed and the request, so an answer is reproducible and cached like any other; breaking it
towards the earliest slot would turn the bank's key-position skew into accuracy.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from blindmcq.backends.base import Abilities, ModelRequest, ModelResponse
from blindmcq.config.schema import HeuristicModel, model_config
from blindmcq.errors import ConfigError, InputError

STRATEGIES = ("constant", "longest", "shortest", "most_words", "random")


def _tied_best(values: Sequence[float], sign: int) -> list[int]:
    """Indices of every largest ``sign * value``, in slot order."""
    best = max(sign * v for v in values)
    return [i for i, v in enumerate(values) if sign * v == best]


TIED = ("longest", "shortest", "most_words")  # strategies whose pick can tie; broken at random


class HeuristicBackend:
    """Answers from the option texts alone. ``strategy``: constant (with ``slot``), longest, shortest,
    most_words, random (with ``seed``; the draw depends only on the seed and the request)."""

    @classmethod
    def declared_abilities(cls, model_cfg: HeuristicModel | Mapping[str, Any]) -> Abilities:
        """Judges the option texts, never the prompt."""
        return Abilities(generate=True, needs_option_texts=True)

    def __init__(self, model_cfg: HeuristicModel | Mapping[str, Any]) -> None:
        # the schema checks strategy (one of STRATEGIES) and slot (>= 0)
        self.cfg: HeuristicModel = model_config(model_cfg, HeuristicModel)
        self.strategy = str(self.cfg.strategy)
        self.slot = self.cfg.slot
        self.seed = self.cfg.seed
        detail = {"constant": f":{self.slot}", "random": f":{self.seed}"}.get(self.strategy, "")
        self.name = f"heuristic:{self.strategy}{detail}"
        self.concurrency = self.cfg.calls_in_flight  # null: 64 (an answer costs nothing)
        self.abilities = self.declared_abilities(self.cfg)

    def wire_request(self, request: ModelRequest) -> dict[str, Any]:
        """Everything the answer depends on: the strategy, its slot or seed, the option texts and
        labels it reads, and for ``random`` the request hash its seeded draw is made from."""
        wire: dict[str, Any] = {
            "strategy": self.strategy,
            "option_texts": [str(o) for o in request.extra.get("option_texts") or []],
            "labels": list(request.choices) or list(request.extra.get("label_strings") or []),
        }
        if self.strategy == "constant":
            wire["slot"] = self.slot
        if self.strategy == "random":
            wire["seed"] = self.seed
            wire["draw"] = self._draw_key(request)
        if self.strategy in TIED:  # the tie break draws from what the strategy reads, nothing else
            wire["seed"] = self.seed
            wire["tie_break"] = "random"
        return wire

    def _draw_key(self, request: ModelRequest) -> str:
        return request.cache_key(self.name)

    def pick(self, request: ModelRequest, options: Sequence[str]) -> int:
        """The slot this strategy picks for ``options`` (display order)."""
        n = len(options)
        rules: dict[str, Callable[[], list[int]]] = {
            "constant": lambda: [self.slot],
            "longest": lambda: _tied_best([len(o) for o in options], +1),
            "shortest": lambda: _tied_best([len(o) for o in options], -1),
            "most_words": lambda: _tied_best([len(o.split()) for o in options], +1),
            "random": lambda: [self._rng(request).randrange(n)],
        }
        candidates = rules[self.strategy]()
        slot = candidates[0] if len(candidates) == 1 else self._tie_rng(request, options).choice(candidates)
        if slot >= n:
            raise ConfigError("slot", f"slot {slot} does not exist for an item with {n} options")
        return slot

    def _tie_rng(self, request: ModelRequest, options: Sequence[str]) -> random.Random:
        """Seeded by the strategy, its seed, the options in display order and their labels: the same
        presentation breaks its tie the same way whatever question text the request carries."""
        labels = list(request.choices) or list(request.extra.get("label_strings") or [])
        text = json.dumps([self.name, self.seed, list(options), labels], ensure_ascii=False)
        return random.Random(int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big"))

    def _rng(self, request: ModelRequest) -> random.Random:
        digest = hashlib.sha256(f"{self.seed}:{self._draw_key(request)}".encode()).digest()
        return random.Random(int.from_bytes(digest[:8], "big"))

    def complete(self, request: ModelRequest) -> ModelResponse:
        options, labels = option_fields(request)
        slot = self.pick(request, options)
        return ModelResponse(
            text=answer_text(options, labels, slot),
            input_tokens=0,
            output_tokens=0,
            latency_s=0.0,
            meta={"slot": slot},
        )


def option_fields(request: ModelRequest) -> tuple[list[str], list[str]]:
    """The option texts (display order) and labels an option-only backend reads, checked."""
    options = request.extra.get("option_texts")
    item = request.extra.get("item_id")
    if not isinstance(options, list | tuple) or not options:
        raise InputError("request.extra['option_texts'] is missing or empty", item=item)
    labels = list(request.choices) or list(request.extra.get("label_strings") or [])
    if labels and len(labels) != len(options):
        raise InputError(f"{len(labels)} labels for {len(options)} options", item=item)
    return [str(o) for o in options], labels


def answer_text(options: Sequence[str], labels: Sequence[str], slot: int) -> str:
    """The answer for ``slot``: its label, or the option text when the labels do not tell slots apart."""
    distinct = len(set(labels)) == len(labels) and labels
    return str(labels[slot]) if distinct else str(options[slot])
