"""max_tokens: one precedence between the model's limit and the reasoning mode.

The reasoning mode's ``max_tokens`` caps the answer; a model that reasons by default gets
``max(model.max_tokens, reasoning.max_tokens)``. Checked through the path the probe uses: presentations
-> ``make_jobs`` -> the Bedrock backend's Converse parameters.
"""

from __future__ import annotations

import pytest

from blindmcq.backends.bedrock import BedrockBackend
from blindmcq.config.files import load_group
from blindmcq.config.schema import HeuristicModel, Reasoning, StandInModel, model_config
from blindmcq.datasets.items import Item
from blindmcq.tasks.presentations import build_presentations
from blindmcq.tasks.probe import effective_max_tokens, make_jobs

ITEM = Item(id="t-b-1", source="t", bank="b", number=1, question="Q?", options=("a", "bb", "ccc", "dddd"),
            key=3, status="ok", flags=())  # fmt: skip


def _sent_max_tokens(model: str, reasoning: str) -> set[int]:
    model_cfg, reasoning_cfg = model_config(load_group("model", model)), load_group("reasoning", reasoning)
    presentations = build_presentations(
        [ITEM], conditions=["blind"], blind_orders=["rot0"], full_orders=[], forced=False,
        prompt=load_group("prompt", "original"), labels=load_group("labels", "latin"),
        reasoning=reasoning_cfg,
    )  # fmt: skip
    jobs = make_jobs(presentations, model_cfg=model_cfg, reasoning=reasoning_cfg)
    backend = BedrockBackend(model_cfg, client_factory=lambda region: None)
    return {backend.converse_params(job.request)[0]["inferenceConfig"]["maxTokens"] for job in jobs}


def test_max_tokens_reasoning_model_keeps_its_room_under_direct() -> None:
    # gpt-5.6 reasons by default and asks 4096; reasoning=direct caps at 64, which cut its answers off
    assert load_group("model", "gpt-5.6").reasons_by_default is True
    assert _sent_max_tokens("gpt-5.6", "direct") == {4096}
    assert _sent_max_tokens("deepseek-r1", "direct") == {4096}


def test_max_tokens_ordinary_model_takes_the_reasoning_cap() -> None:
    assert load_group("model", "nova-pro").reasons_by_default is False
    assert _sent_max_tokens("nova-pro", "direct") == {64}  # the mode's cap, above the model's 16
    assert _sent_max_tokens("nova-pro", "step_by_step") == {2048}
    assert _sent_max_tokens("gpt-5.6", "step_by_step") == {4096}  # the larger of the two


@pytest.mark.parametrize(
    ("model", "cap", "expected"),
    [
        ({"max_tokens": 4096, "reasons_by_default": True}, 64, 4096),
        ({"max_tokens": 4096, "reasons_by_default": True}, 8192, 8192),
        ({"max_tokens": 4096}, 64, 64),
        ({"max_tokens": 16, "reasons_by_default": False}, 2048, 2048),
        ({"max_tokens": 100}, None, 100),
        ({}, None, 16),
        ({"reasons_by_default": True}, 64, 64),
    ],
)
def test_max_tokens_precedence_table(model: dict, cap: int | None, expected: int) -> None:
    """``cap``: the reasoning mode's ``max_tokens`` (null in the typed group: no cap)."""
    assert effective_max_tokens(StandInModel(**model), cap) == expected


def test_a_reasoning_mode_without_max_tokens_leaves_the_model_s_limit() -> None:
    """The typed ``Reasoning.max_tokens`` defaults to null, as the mapping's missing key did (16)."""
    reasoning = Reasoning(name="bare")
    presentations = build_presentations(
        [ITEM], conditions=["blind"], blind_orders=["rot0"], full_orders=[], forced=False,
        prompt=load_group("prompt", "original"), labels=load_group("labels", "latin"), reasoning=reasoning,
    )  # fmt: skip
    jobs = make_jobs(
        presentations,
        model_cfg=HeuristicModel(name="m", backend="heuristic", strategy="constant"),
        reasoning=reasoning,
    )
    assert {job.request.max_tokens for job in jobs} == {16}
