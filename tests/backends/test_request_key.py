"""One request, one key: the cache key is the hash of the exact wire request, after every model switch.

A change that reaches the wire misses the cache; a config change that does not (price, concurrency,
retries, regions) keeps the key. Every backend sends what its ``wire_request`` returns.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from blindmcq.backends.base import Abilities, ModelRequest, ModelResponse, request_key
from blindmcq.backends.bedrock import BedrockBackend, RetryPolicy
from blindmcq.backends.fault import FaultBackend, FaultRates, InstantBackend, SlowBackend
from blindmcq.backends.heuristic import HeuristicBackend
from blindmcq.backends.local import LocalBackend
from blindmcq.backends.registry import make_backend
from blindmcq.config.schema import HeuristicModel, LocalModel, model_config

MODEL_DIR = Path(__file__).resolve().parents[2] / "conf" / "model"
SYSTEM = "Ви складаєте іспит."
USER = "А. перше\nБ. друге\nВ. третє\nГ. четверте"


def load(name: str) -> dict[str, Any]:
    cfg = yaml.safe_load((MODEL_DIR / f"{name}.yaml").read_text(encoding="utf-8"))
    cfg.setdefault("name", name)
    return cfg


class NoClient:
    """A client factory that fails the test if anything tries to make a client (and so a call)."""

    def __call__(self, region: str) -> Any:
        raise AssertionError(f"a client was made for {region}: wire_request must not need one")


def bedrock(cfg: dict[str, Any]) -> BedrockBackend:
    return BedrockBackend(model_config(cfg), client_factory=NoClient())


def req(reasoning: str = "direct", max_tokens: int = 64, **extra: Any) -> ModelRequest:
    return ModelRequest("sonnet-4.6", SYSTEM, USER, max_tokens=max_tokens, reasoning=reasoning, extra=extra)


def key(cfg: dict[str, Any], request: ModelRequest) -> str:
    return request_key(bedrock(cfg), request)


# each model switch, changed on sonnet-4.6: (what to change, the request to key it with)
SWITCHES = {
    "accepts_temperature": (lambda c: c.update(accepts_temperature=False), req()),
    "accepts_system": (lambda c: c.update(accepts_system=False), req()),
    "additional_fields": (lambda c: c.update(additional_fields={"top_k": 5}), req()),
    "thinking.fields": (
        lambda c: c["thinking"].update(fields={"thinking": {"type": "adaptive", "budget_tokens": 1}}),
        req("thinking"),
    ),
    "thinking.budget_tokens": (lambda c: c["thinking"].update(budget_tokens=1024), req("thinking")),
    "thinking.temperature": (lambda c: c["thinking"].update(temperature=True), req("thinking")),
    "model_id": (lambda c: c.update(model_id="anthropic.claude-sonnet-4-6"), req()),
}


@pytest.mark.parametrize("switch", sorted(SWITCHES))
def test_each_model_switch_that_reaches_the_wire_changes_the_key(switch: str) -> None:
    base = load("sonnet-4.6")
    change, request = SWITCHES[switch]
    changed = copy.deepcopy(base)
    change(changed)
    assert bedrock(changed).wire_request(request) != bedrock(base).wire_request(request)
    assert key(changed, request) != key(base, request)


def test_max_tokens_and_the_runs_thinking_budget_change_the_key() -> None:
    cfg = load("sonnet-4.6")
    assert key(cfg, req(max_tokens=64)) != key(cfg, req(max_tokens=4096))
    assert key(cfg, req("thinking")) != key(cfg, req("thinking", thinking_budget_tokens=512))


@pytest.mark.parametrize(
    "change",
    [
        {"price_per_1k_input": 99.0, "price_per_1k_output": 99.0},
        {"concurrency": 1},
        {"retry": {"max_attempts": 2}},
        {"regions": ["eu-west-1"]},  # the same model id everywhere: the region never changes the answer
        {"read_timeout_s": 5},
        {"name": "renamed"},
    ],
)
def test_config_changes_that_do_not_reach_the_wire_keep_the_key(change: dict[str, Any]) -> None:
    cfg = load("sonnet-4.6")
    for request in (req(), req("thinking")):
        assert key({**cfg, **change}, request) == key(cfg, request)


def test_request_fields_that_are_not_sent_keep_the_key() -> None:
    """gpt-5.6 accepts no temperature: a request differing only in temperature is the same call."""
    cfg = load("gpt-5.6")
    hot = ModelRequest("gpt-5.6", SYSTEM, USER, temperature=0.7, max_tokens=4096)
    cold = ModelRequest("gpt-5.6", SYSTEM, USER, temperature=0.0, max_tokens=4096, extra={"item_id": "x"})
    assert "temperature" not in bedrock(cfg).wire_request(hot)["inferenceConfig"]
    assert key(cfg, hot) == key(cfg, cold)


def test_the_four_requests_of_the_issue_get_four_keys() -> None:
    """Same request, four model configs that send four different Converse bodies: four keys."""
    base = load("sonnet-4.6")
    variants = [
        base,
        {**base, "accepts_temperature": False},
        {**base, "accepts_system": False},
        {**base, "additional_fields": {"top_k": 5}},
    ]
    request = req()
    bodies = [bedrock(cfg).wire_request(request) for cfg in variants]
    assert len({repr(b) for b in bodies}) == 4
    assert len({key(cfg, request) for cfg in variants}) == 4


def test_bedrock_sends_exactly_its_wire_request(stubs: Any, converse_response: Any) -> None:
    cfg = load("sonnet-4.6")
    backend = BedrockBackend(model_config(cfg), client_factory=stubs, sleep=lambda s: None)
    for request in (req(), req("thinking")):
        region = backend.pool.regions[backend.pool._next]
        stubs.stub(region).add_response("converse", converse_response(), backend.wire_request(request))
        assert backend.complete(request).status == "ok"
    assert backend.abilities.reasons and backend.abilities.generate


def test_abilities_are_declared_by_every_backend(tmp_path: Path) -> None:
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"GGUF")
    backends = [
        bedrock(load("gpt-5.6")),
        HeuristicBackend(model_config(load("longest"))),
        FaultBackend(HeuristicBackend(model_config(load("longest"))), FaultRates()),
        InstantBackend(),
        SlowBackend(0.0),
        LocalBackend(LocalModel(name="x", path=str(gguf))),
    ]
    for backend in backends:
        assert isinstance(backend.abilities, Abilities)
        assert isinstance(backend.wire_request(req()), dict)
    assert backends[0].abilities.reasons  # reasons_by_default
    assert not bedrock(load("nova-micro")).abilities.reasons
    assert backends[1].abilities.needs_option_texts and backends[2].abilities.needs_option_texts
    assert backends[5].abilities.score_labels


def _heuristic_request(options: list[str], user: str = USER) -> ModelRequest:
    return ModelRequest(
        "h", None, user, choices=("A", "B", "C"), extra={"option_texts": options, "item_id": "i1"}
    )


def test_heuristic_key_follows_what_it_reads() -> None:
    longest = HeuristicBackend(model_config(load("longest")))
    opts = ["a", "bbb", "cc"]
    # a strategy reading only the options ignores the question text: same call
    assert request_key(longest, _heuristic_request(opts)) == request_key(
        longest, _heuristic_request(opts, user="other")
    )
    assert request_key(longest, _heuristic_request(opts)) != request_key(
        longest, _heuristic_request(["a", "b", "cc"])
    )
    constant = [HeuristicBackend(HeuristicModel(strategy="constant", slot=s)) for s in (0, 1)]
    assert request_key(constant[0], _heuristic_request(opts)) != request_key(
        constant[1], _heuristic_request(opts)
    )
    # random draws from the whole request: another question, another draw, another key
    rnd = HeuristicBackend(HeuristicModel(strategy="random", seed=3))
    assert request_key(rnd, _heuristic_request(opts)) != request_key(rnd, _heuristic_request(opts, "x"))
    answers = {rnd.complete(_heuristic_request(opts, f"q{i}")).text for i in range(3)}
    again = {rnd.complete(_heuristic_request(opts, f"q{i}")).text for i in range(3)}
    assert answers == again


def test_fault_key_has_the_inner_key_and_the_fault_settings() -> None:
    inner = HeuristicBackend(model_config(load("longest")))
    request = _heuristic_request(["a", "bbb", "cc"])
    plain = FaultBackend(inner, FaultRates(), seed=0)
    assert request_key(plain, request) != request_key(FaultBackend(inner, FaultRates(), seed=1), request)
    assert request_key(plain, request) != request_key(FaultBackend(inner, FaultRates(empty=0.5)), request)
    retry = FaultBackend(inner, FaultRates(), policy=RetryPolicy(max_attempts=2))
    assert request_key(plain, request) != request_key(retry, request)
    assert plain.wire_request(request)["inner"] == request_key(inner, request)
    faulty = make_backend(model_config(load("fault-demo")))
    faulty._sleep = lambda s: None  # type: ignore[attr-defined]
    first = [faulty.complete(_heuristic_request(["a", "bbb", "cc"], f"q{i}")) for i in range(20)]
    second = [faulty.complete(_heuristic_request(["a", "bbb", "cc"], f"q{i}")) for i in range(20)]
    assert [(r.status, r.text) for r in first] == [(r.status, r.text) for r in second]


def test_local_wire_needs_no_model_and_keys_what_is_computed(tmp_path: Path) -> None:
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"GGUF")
    local = LocalBackend(LocalModel(name="x", path=str(gguf)))
    score = ModelRequest("x", SYSTEM, USER, choices=("А", "Б"), max_tokens=16)
    wire = local.wire_request(score)
    assert local.model is None  # nothing loaded
    assert (
        wire["mode"] == "score" and wire["prompt"] == f"{SYSTEM}\n\n{USER}" and wire["choices"] == ["А", "Б"]
    )
    # scoring reads no token limit: max_tokens does not reach the wire
    assert request_key(local, score) == request_key(
        local, ModelRequest("x", SYSTEM, USER, ("А", "Б"), 0.0, 512)
    )
    gen = ModelRequest("x", SYSTEM, USER, max_tokens=16)
    assert local.wire_request(gen)["max_new_tokens"] == 16
    assert request_key(local, gen) != request_key(local, ModelRequest("x", SYSTEM, USER, max_tokens=32))
    assert request_key(local, gen) != request_key(local, score)
    other = LocalBackend(LocalModel(name="x", path=str(gguf), label_delimiter=""))
    assert request_key(other, score) != request_key(local, score)


def test_fakes_answer_what_their_wire_says() -> None:
    request = ModelRequest("m", None, "q", choices=("B", "C"))
    for backend in (InstantBackend(), SlowBackend(0.0)):
        assert backend.wire_request(request)["choices"] == ["B", "C"]
        response: ModelResponse = backend.complete(request)
        assert response.text == "B"
