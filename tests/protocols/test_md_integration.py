"""conf/protocol/md.yaml through presentations and parsing: the prompt asks for what the matcher reads."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from blindmcq.backends.base import ModelResponse
from blindmcq.config.files import load_group
from blindmcq.datasets.nonsense import generate_nonsenseqa
from blindmcq.protocols.md import make_md_matcher
from blindmcq.tasks.parsing import interpret
from blindmcq.tasks.presentations import present


class NoEmbedder:
    name = "none"

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        raise AssertionError(f"embeddings were not needed: {texts}")


def test_md_prompt_and_matcher_on_a_nonsense_item() -> None:
    item = generate_nonsenseqa(seed=2, n_test=1, n_fewshot=0, words=[f"слово{i}" for i in range(50)]).test[0]
    protocol = load_group("protocol", "md")
    p = present(
        item,
        condition="full",
        order_id="rot1",
        order=[1, 2, 3, 0],
        prompt=load_group("prompt", "original"),
        labels=load_group("labels", protocol.labels),
        reasoning=load_group("reasoning", "direct"),
        protocol="md",
        protocol_cfg=protocol,
    )
    assert all(f"- {item.options[i]}" in p.user for i in range(4))
    assert "Остаточна відповідь" in p.user
    matcher = make_md_matcher(protocol, embedder=NoEmbedder())
    answer = f"Міркую.\nОстаточна відповідь: правильний варіант — «{item.options[item.key]}»."
    parsed = interpret(p, ModelResponse(text=answer), symbols={}, md_matcher=matcher)  # md reads no labels
    assert (parsed.slot, parsed.status) == (p.key_slot, "ok")
