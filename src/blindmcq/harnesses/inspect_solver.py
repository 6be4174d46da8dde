"""The multiple-choice solver of an exported inspect_ai task (imports inspect_ai: the ``harnesses`` extra).

inspect_ai's own ``multiple_choice()`` rewrites the prompt into its template (Latin letters,
"ANSWER: $LETTER") and would change what the model is shown; this solver keeps blindmcq's rendered
prompt (the phrasing's label scheme and answer instruction), generates with the probe's output-token
limit at temperature 0, and marks the picked choice by blindmcq's own parser
(``tasks.parsing.interpret``), so inspect_ai's ``choice()`` scorer counts what the import will count.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from inspect_ai.model import ChatMessageSystem
from inspect_ai.solver import Generate, Solver, TaskState, solver

from blindmcq.backends.base import ModelResponse
from blindmcq.harnesses.documents import presentation_of
from blindmcq.tasks.parsing import interpret


def picked_slot(doc: Mapping[str, Any], text: str, symbols: Mapping[str, Sequence[str]]) -> int | None:
    """The slot blindmcq's parser reads in ``text`` for the document's presentation (None: no answer)."""
    p = presentation_of(doc, file="inspect sample")
    return interpret(p, ModelResponse(text=text), symbols=symbols).slot


@solver
def blindmcq_choice(symbols: Mapping[str, Sequence[str]]) -> Solver:
    """Show the presentation as blindmcq renders it, generate, and mark the choice blindmcq parses."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        doc = state.metadata
        if doc.get("system"):
            state.messages.insert(0, ChatMessageSystem(content=str(doc["system"])))
        config: dict[str, Any] = {"max_tokens": int(doc.get("max_tokens") or 64)}
        if doc.get("temperature") is not None:
            config["temperature"] = float(doc["temperature"])
        state = await generate(state, **config)
        slot = picked_slot(doc, state.output.completion, symbols)
        for i in range(len(state.choices)):
            state.choices.mark_choice(i, i == slot)
        return state

    return solve
