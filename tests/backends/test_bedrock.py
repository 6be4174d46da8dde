"""Bedrock backend against real boto3 clients answered by botocore's Stubber (no network, fake keys).

Each test states the exact Converse request it expects; the Stubber fails on any difference.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from blindmcq.backends.base import ModelRequest
from blindmcq.backends.bedrock import BedrockBackend, RegionPool, RetryPolicy, default_client_factory
from blindmcq.config.files import load_model_file
from blindmcq.config.schema import BedrockModel, model_config
from blindmcq.errors import ConfigError

MODEL_DIR = Path(__file__).resolve().parents[2] / "conf" / "model"

SYSTEM = "Ви складаєте іспит."
USER = "А. перше\nБ. друге\nВ. третє\nГ. четверте"

# The paper's Table 11 models (and the others of the issue): config name -> (model id, temperature sent)
EXPECTED = {
    "gpt-5.6": ("global.openai.gpt-5.6-sol", False),
    "deepseek-r1": ("us.deepseek.r1-v1:0", True),
    "sonnet-4.6": ("eu.anthropic.claude-sonnet-4-6", True),
    "haiku-4.5": ("eu.anthropic.claude-haiku-4-5-20251001-v1:0", True),
    "nova-pro": ("eu.amazon.nova-pro-v1:0", True),
    "nova-micro": ("eu.amazon.nova-micro-v1:0", True),
    "nova-2-lite": ("global.amazon.nova-2-lite-v1:0", True),
    "qwen3-32b": ("qwen.qwen3-32b-v1:0", True),
    "pixtral-large": ("eu.mistral.pixtral-large-2502-v1:0", True),
    "ministral-8b": ("mistral.ministral-3-8b-instruct", True),
    "llama-3.3-70b": ("us.meta.llama3-3-70b-instruct-v1:0", True),
    "llama-3.1-8b": ("us.meta.llama3-1-8b-instruct-v1:0", True),
    "gemma": ("google.gemma-3-27b-it", True),
}
PAPER_REGIONS = {"gpt-5.6": "eu-central-1", "deepseek-r1": "us-east-1", "sonnet-4.6": "eu-central-1"}


def load(name: str) -> dict[str, Any]:
    """The model config as the run composes it (a config may inherit another through ``defaults``)."""
    return load_model_file(name, MODEL_DIR)


def backend(cfg: dict[str, Any], stubs: Any, sleeps: list[float] | None = None) -> BedrockBackend:
    sink = sleeps if sleeps is not None else []
    return BedrockBackend(model_config(cfg), client_factory=stubs, sleep=sink.append)


def request(cfg: dict[str, Any], reasoning: str = "direct") -> ModelRequest:
    return ModelRequest(
        model=cfg["name"], system=SYSTEM, user=USER, max_tokens=cfg["max_tokens"], reasoning=reasoning
    )


def test_every_bedrock_config_is_covered() -> None:
    names = {p.stem for p in MODEL_DIR.glob("*.yaml") if load(p.stem)["backend"] == "bedrock"}
    assert names == set(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_exact_converse_request_per_model(name: str, stubs: Any, converse_response: Any) -> None:
    cfg = load(name)
    model_id, temperature_sent = EXPECTED[name]
    inference: dict[str, Any] = {"maxTokens": cfg["max_tokens"]}
    if temperature_sent:
        inference["temperature"] = 0.0
    expected = {
        "modelId": model_id,
        "system": [{"text": SYSTEM}],
        "messages": [{"role": "user", "content": [{"text": USER}]}],
        "inferenceConfig": inference,
    }
    region = cfg["regions"][0]
    if name in PAPER_REGIONS:
        assert region == PAPER_REGIONS[name]
    stubs.stub(region).add_response("converse", converse_response("Б"), expected)

    response = backend(cfg, stubs).complete(request(cfg))

    assert (response.status, response.text, response.region) == ("ok", "Б", region)
    assert (response.input_tokens, response.output_tokens) == (120, 3)
    assert response.meta["temperature_sent"] is temperature_sent
    assert response.meta["stop_reason"] == "end_turn"
    assert response.latency_s is not None and response.latency_s >= 0
    assert response.meta["cost_usd_estimate"] == pytest.approx(
        (120 * cfg["price_per_1k_input"] + 3 * cfg["price_per_1k_output"]) / 1000
    )


def test_thinking_request_shape_drops_temperature(stubs: Any, converse_response: Any) -> None:
    cfg = load("sonnet-4.6")
    expected = {
        "modelId": "eu.anthropic.claude-sonnet-4-6",
        "system": [{"text": SYSTEM}],
        "messages": [{"role": "user", "content": [{"text": USER}]}],
        "inferenceConfig": {"maxTokens": 16 + 2048},
        "additionalModelRequestFields": {"thinking": {"type": "enabled", "budget_tokens": 2048}},
    }
    body = converse_response("В", reasoning="Варіант В прямо випливає з норми.")
    stubs.stub("eu-central-1").add_response("converse", body, expected)

    response = backend(cfg, stubs).complete(request(cfg, reasoning="thinking"))

    assert response.text == "В"  # the reasoning block is not part of the answer
    assert response.meta["reasoning_text"] == "Варіант В прямо випливає з норми."
    assert response.meta["temperature_sent"] is False


def test_thinking_budget_from_the_request_wins(stubs: Any, converse_response: Any) -> None:
    cfg = load("haiku-4.5")
    expected = {
        "modelId": "eu.anthropic.claude-haiku-4-5-20251001-v1:0",
        "system": [{"text": SYSTEM}],
        "messages": [{"role": "user", "content": [{"text": USER}]}],
        "inferenceConfig": {"maxTokens": 16 + 1024},
        "additionalModelRequestFields": {"thinking": {"type": "enabled", "budget_tokens": 1024}},
    }
    stubs.stub("eu-central-1").add_response("converse", converse_response("А"), expected)
    asked = ModelRequest(
        model="haiku-4.5",
        system=SYSTEM,
        user=USER,
        max_tokens=16,
        reasoning="thinking",
        extra={"thinking_budget_tokens": 1024},
    )
    assert backend(cfg, stubs).complete(asked).text == "А"


def test_thinking_on_a_model_without_it_names_the_key(stubs: Any) -> None:
    cfg = load("llama-3.1-8b")
    with pytest.raises(ConfigError, match="'thinking'"):
        backend(cfg, stubs).complete(request(cfg, reasoning="thinking"))


def test_model_without_system_prompt_gets_it_in_the_user_turn(stubs: Any, converse_response: Any) -> None:
    cfg = {**load("llama-3.1-8b"), "accepts_system": False}
    expected = {
        "modelId": "us.meta.llama3-1-8b-instruct-v1:0",
        "messages": [{"role": "user", "content": [{"text": f"{SYSTEM}\n\n{USER}"}]}],
        "inferenceConfig": {"maxTokens": 16, "temperature": 0.0},
    }
    stubs.stub("us-east-1").add_response("converse", converse_response(), expected)
    assert backend(cfg, stubs).complete(request(cfg)).status == "ok"


def test_throttling_is_retried_in_the_next_region(stubs: Any, converse_response: Any) -> None:
    cfg = load("sonnet-4.6")
    stubs.stub("eu-central-1").add_client_error(
        "converse", service_error_code="ThrottlingException", http_status_code=429
    )
    stubs.stub("eu-west-1").add_client_error(
        "converse", service_error_code="ThrottlingException", http_status_code=429
    )
    stubs.stub("eu-north-1").add_response("converse", converse_response("Г"))
    sleeps: list[float] = []

    response = backend(cfg, stubs, sleeps).complete(request(cfg))

    assert (response.status, response.text, response.region) == ("ok", "Г", "eu-north-1")
    assert response.meta["regions_tried"] == ["eu-central-1", "eu-west-1", "eu-north-1"]
    assert response.meta["attempts"] == 3
    assert response.meta["retried_codes"] == ["ThrottlingException"] * 2
    assert len(sleeps) == 2 and all(0 <= s <= 2.0 for s in sleeps)  # base 1 s, full jitter


def test_single_region_retries_in_place_then_succeeds(stubs: Any, converse_response: Any) -> None:
    cfg = load("gpt-5.6")
    stub = stubs.stub("eu-central-1")
    stub.add_client_error("converse", service_error_code="ThrottlingException", http_status_code=429)
    stub.add_client_error("converse", service_error_code="ServiceUnavailableException", http_status_code=503)
    stub.add_response("converse", converse_response("A"))

    response = backend(cfg, stubs).complete(request(cfg))

    assert (response.status, response.text, response.region) == ("ok", "A", "eu-central-1")
    assert response.meta["retried_codes"] == ["ThrottlingException", "ServiceUnavailableException"]


def test_retry_budget_ends_in_a_recorded_error(stubs: Any) -> None:
    cfg = {**load("gpt-5.6"), "retry": {"max_attempts": 3, "base_s": 0.5}}
    for _ in range(3):
        stubs.stub("eu-central-1").add_client_error(
            "converse", service_error_code="ThrottlingException", service_message="Rate exceeded"
        )
    sleeps: list[float] = []

    response = backend(cfg, stubs, sleeps).complete(request(cfg))  # must not raise

    assert response.status == "error" and response.text == ""
    assert response.error is not None and response.error.startswith("ThrottlingException")
    assert response.meta["error_code"] == "ThrottlingException"
    assert response.meta["attempts"] == 3
    assert response.region == "eu-central-1"
    assert len(sleeps) == 2  # no sleep after the last attempt


def test_validation_error_is_final_at_once(stubs: Any) -> None:
    cfg = load("haiku-4.5")
    stubs.stub("eu-central-1").add_client_error(
        "converse", service_error_code="ValidationException", service_message="temperature not supported"
    )
    sleeps: list[float] = []
    response = backend(cfg, stubs, sleeps).complete(request(cfg))
    assert response.status == "error"
    assert response.meta["error_code"] == "ValidationException"
    assert "temperature not supported" in (response.error or "")
    assert sleeps == []


@pytest.mark.parametrize("stop", ["content_filtered", "guardrail_intervened"])
def test_filtered_answers_are_refusals(stop: str, stubs: Any, converse_response: Any) -> None:
    cfg = load("nova-micro")
    stubs.stub("eu-central-1").add_response("converse", converse_response("", stop=stop))
    response = backend(cfg, stubs).complete(request(cfg))
    assert response.status == "refused"
    assert response.meta["stop_reason"] == stop


def test_no_credentials_in_what_is_recorded(stubs: Any, converse_response: Any) -> None:
    cfg = load("nova-pro")
    stubs.stub("eu-central-1").add_response("converse", converse_response())
    response = backend(cfg, stubs).complete(request(cfg))
    assert "testing" not in repr(response)


def test_region_pool_round_robin_skips_cooling_regions() -> None:
    now = [100.0]
    pool = RegionPool(["r1", "r2", "r3"], clock=lambda: now[0])
    assert [pool.pick() for _ in range(4)] == ["r1", "r2", "r3", "r1"]
    pool.throttled("r2", 10.0)
    assert [pool.pick() for _ in range(3)] == ["r3", "r1", "r3"]
    pool.throttled("r1", 5.0)
    pool.throttled("r3", 20.0)
    assert pool.pick() == "r1"  # all cooling: the one free soonest
    now[0] = 111.0
    assert {pool.pick(), pool.pick()} == {"r1", "r2"}


@pytest.mark.parametrize(
    ("cfg", "key"),
    [
        ({"name": "x", "backend": "bedrock", "regions": ["us-east-1"]}, "model_id"),
        ({"name": "x", "backend": "bedrock", "model_id": "m", "regions": []}, "regions"),
        ({"name": "x", "model_id": "m", "regions": ["r"], "retry": {"attempts": 2}}, "retry.attempts"),
        (
            {"name": "x", "model_id": "m", "regions": ["r"], "retry": {"max_attempts": 0}},
            "retry.max_attempts",
        ),
    ],
)
def test_bad_config_names_the_key(cfg: dict[str, Any], key: str, stubs: Any) -> None:
    with pytest.raises(ConfigError, match=re.escape(f"'{key}'")):
        BedrockBackend(model_config(cfg, BedrockModel), client_factory=stubs)


def test_backoff_is_capped_and_jittered() -> None:
    import random

    policy = RetryPolicy(max_attempts=10, base_s=1.0, max_s=8.0)
    rng = random.Random(0)
    delays = [policy.delay(k, rng) for k in range(10) for _ in range(50)]
    assert max(delays) <= 8.0 and min(delays) >= 0.0
    assert len(set(delays)) > 400  # jittered, not a fixed ladder


def test_default_clients_carry_botocore_retry_config() -> None:
    cfg = {"model_id": "m", "regions": ["eu-central-1"]}
    factory = default_client_factory(
        model_config({**cfg, "botocore_retries": {"mode": "standard", "max_attempts": 4}}, BedrockModel)
    )
    client = factory("eu-central-1")
    assert client.meta.region_name == "eu-central-1"
    # botocore counts retries; it stores the total attempts, the first one included
    assert client.meta.config.retries == {"mode": "standard", "total_max_attempts": 5}
    with pytest.raises(ConfigError, match=r"botocore_retries\.mode"):
        default_client_factory(model_config({**cfg, "botocore_retries": {"mode": "eager"}}, BedrockModel))
