"""Surface strategies (paper Table 2) as "models", so they flow through the same runner and analysis.

Contract with the presentation layer: ``request.extra["option_texts"]`` holds the option text shown in
each slot (display order), and the answer is that slot's label from ``request.choices`` (or, when the
request has no choices, ``request.extra["label_strings"]``). When the labels do not tell slots apart
(the uniform dash of Matched-and-Dashed), the answer is the option text itself.
``constant``, ``longest``, ``shortest`` and ``most_words`` pick by the rules of :mod:`blindmcq.surface`,
the ones Table 2 uses: a tie at the extreme is broken uniformly at random, seeded by the strategy's seed
and the item's option texts alone, so the same item gives the same picked option whatever its order,
labels or phrasing, and the option Table 2 picks in the published order. Breaking it towards the
earliest slot would turn the bank's key-position skew into accuracy.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Sequence
from typing import Any

from blindmcq import surface
from blindmcq.backends.base import Abilities, ModelRequest, ModelResponse
from blindmcq.config.schema import HeuristicModel
from blindmcq.errors import ConfigError, InputError

TIED = tuple(surface.SCORED)  # strategies whose pick can tie; broken by the option texts
TIE_BREAK = "uniform, seeded by the sorted option texts"  # in the wire: a new rule is a new cache key


class HeuristicBackend:
    """Answers from the option texts alone. ``strategy``: constant (with ``slot``), longest, shortest,
    most_words, random (with ``seed``; the draw depends only on the seed and the request)."""

    @classmethod
    def declared_abilities(cls, model_cfg: HeuristicModel) -> Abilities:
        """Judges the option texts, never the prompt."""
        return Abilities(generate=True, needs_option_texts=True)

    def __init__(self, model_cfg: HeuristicModel) -> None:
        # the schema checks strategy (a surface strategy or random) and slot (>= 0)
        self.cfg = model_cfg
        self.strategy = str(self.cfg.strategy)
        self.slot = self.cfg.slot
        self.seed = self.cfg.seed
        detail = {"constant": f":{self.slot}", "random": f":{self.seed}"}.get(self.strategy, "")
        self.name = f"heuristic:{self.strategy}{detail}"
        self.concurrency = self.cfg.calls_in_flight  # null: 64 (an answer costs nothing)
        self.abilities = self.declared_abilities(self.cfg)

    def wire_request(self, request: ModelRequest) -> dict[str, Any]:
        """Everything the answer depends on: the strategy, its slot or seed, the option texts it picks
        from, the labels it answers with, and for ``random`` the request hash its seeded draw is made
        from (a tie break reads the option texts and the seed only)."""
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
        if self.strategy in TIED:
            wire["seed"] = self.seed
            wire["tie_break"] = TIE_BREAK
        return wire

    def _draw_key(self, request: ModelRequest) -> str:
        return request.cache_key(self.name)

    def pick(self, request: ModelRequest, options: Sequence[str]) -> surface.Pick:
        """The slot this strategy picks for ``options`` (display order) and every slot that shared the
        extreme (``random``: the draw alone)."""
        n = len(options)
        if self.strategy == "random":
            slot = self._rng(request).randrange(n)
            return surface.Pick(slot, (slot,))
        chosen = surface.pick(self.strategy, options, seed=self.seed, slot=self.slot)
        if chosen.slot is None:
            raise ConfigError("slot", f"slot {self.slot} does not exist for an item with {n} options")
        return chosen

    def _rng(self, request: ModelRequest) -> random.Random:
        digest = hashlib.sha256(f"{self.seed}:{self._draw_key(request)}".encode()).digest()
        return random.Random(int.from_bytes(digest[:8], "big"))

    def complete(self, request: ModelRequest) -> ModelResponse:
        options, labels = option_fields(request)
        chosen = self.pick(request, options)
        slot = chosen.slot
        assert slot is not None  # pick raises where the strategy does not apply
        return ModelResponse(
            text=answer_text(options, labels, slot),
            input_tokens=0,
            output_tokens=0,
            latency_s=0.0,
            meta={"slot": slot, "tied": list(chosen.tied)},
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
