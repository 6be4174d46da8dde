"""One typed path: a model config read as a mapping becomes its schema dataclass once, where it enters
(``config.schema.model_config`` for a conf/model file, ``validate`` for the composed config's ``model``
group); both doors give the same record, so the same backend, wire requests and abilities. The registry
and the backends take only the typed record."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from blindmcq.backends.base import ModelRequest, request_key
from blindmcq.backends.bedrock import BedrockBackend, RetryPolicy
from blindmcq.backends.fault import FaultRates
from blindmcq.backends.registry import abilities_of, make_backend
from blindmcq.config.files import load_model_file
from blindmcq.config.schema import (
    MODEL_SCHEMAS,
    BedrockModel,
    FaultModel,
    Faults,
    HeuristicModel,
    Retry,
    model_config,
    validate,
    validate_group,
)
from blindmcq.errors import ConfigError

MODEL_DIR = Path(__file__).resolve().parents[2] / "conf" / "model"
SYSTEM = "Ви складаєте іспит."
OPTIONS = ["перше", "друге довше", "третє", "четверте"]
EXTRA = {"option_texts": OPTIONS, "label_strings": ["А", "Б", "В", "Г"], "item_id": "i-1",
         "option_order": [1, 0, 3, 2]}  # fmt: skip
REQUESTS = [
    ModelRequest("m", SYSTEM, "А) перше\nБ) друге довше\nВідповідь:", max_tokens=16, extra=EXTRA),
    ModelRequest("m", None, "Q?\nА) перше\nВідповідь:", temperature=None, max_tokens=32, extra=EXTRA),
    ModelRequest("m", SYSTEM, "А) перше\nВідповідь:", choices=("А", "Б"), max_tokens=1, extra=EXTRA),
    ModelRequest("m", SYSTEM, "Q?", max_tokens=64, reasoning="thinking",
                 extra={**EXTRA, "thinking_budget_tokens": 1024}),
]  # fmt: skip


def configs(tmp_path: Path) -> list[tuple[str, dict[str, Any]]]:
    (tmp_path / "meta.json").write_text('{"index": 1}', encoding="utf-8")
    out = []
    for path in sorted(MODEL_DIR.glob("*.yaml")):
        cfg = load_model_file(path)
        if cfg["backend"] == "lexical":
            cfg = {**cfg, "index": str(tmp_path)}
        out.append((path.stem, cfg))
        if cfg["backend"] == "bedrock":
            out.append((f"{path.stem}+responses", {**cfg, "api": "responses"}))
        if cfg["backend"] == "openai":
            out.append((f"{path.stem}+logprobs", {**cfg, "logprobs": True, "top_logprobs": 5}))
    return out


def _wire(backend: Any, request: ModelRequest) -> Any:
    try:
        return backend.wire_request(request), request_key(backend, request)
    except ConfigError as exc:  # e.g. thinking asked of a model without it: the same error either way
        return str(exc)


def test_both_doors_give_the_same_record_backend_wire_and_abilities(tmp_path: Path) -> None:
    for name, cfg in configs(tmp_path):
        typed = model_config(cfg)
        assert isinstance(typed, tuple(MODEL_SCHEMAS.values())), name
        composed = validate({"model": cfg}, file=None).group("model")  # the composed config's door
        assert composed == typed and abilities_of(composed) == abilities_of(typed), name
        from_file, from_params = make_backend(typed), make_backend(composed)
        assert (from_file.name, from_file.abilities) == (from_params.name, from_params.abilities), name
        assert from_file.abilities == abilities_of(typed), name
        for request in REQUESTS:
            assert _wire(from_file, request) == _wire(from_params, request), (name, request.reasoning)


def test_a_typed_config_passes_through_unchanged() -> None:
    cfg = load_model_file(MODEL_DIR / "sonnet-4.6.yaml")
    typed = model_config(cfg)
    assert isinstance(typed, BedrockModel)
    assert model_config(typed) is typed
    assert validate_group("model", typed) is typed  # a union of schemas keeps its member
    assert BedrockBackend(typed).cfg is typed


@pytest.mark.parametrize(
    ("cfg", "key"),
    [
        ({"backend": "heuristic", "strategy": "longest", "temprature": 0}, "temprature"),
        ({"name": "x", "backend": "bedrock", "model_id": "m", "regions": ["r"], "thinking": {"budget": 1}},
         "thinking.budget"),
        ({"backend": "fault", "inner": {"backend": "heuristic", "strategy": "loudest"}}, "inner.strategy"),
        ({"backend": "fault", "retry": {"attempts": 2}}, "retry.attempts"),
        ({"backend": "fault", "faults": {"throttel": 0.1}}, "faults.throttel"),
        ({"backend": "heuristic", "strategy": "longest", "api_key": "sk-1"}, "api_key"),
    ],
)  # fmt: skip
def test_an_unknown_or_bad_model_key_stops_with_one_line_naming_it(cfg: dict[str, Any], key: str) -> None:
    with pytest.raises(ConfigError) as caught:
        model_config(cfg)
    message = str(caught.value)
    assert f"'{key}'" in message and "\n" not in message, message


def test_the_retry_and_fault_defaults_live_in_the_schema() -> None:
    assert dataclasses.asdict(RetryPolicy()) == dataclasses.asdict(Retry())
    assert dataclasses.asdict(FaultRates()) == dataclasses.asdict(Faults())
    assert RetryPolicy.from_cfg(None) == RetryPolicy() == RetryPolicy.from_cfg(Retry())
    assert RetryPolicy.from_cfg(Retry(max_attempts=3)) == RetryPolicy(max_attempts=3)
    fault = make_backend(FaultModel(backend="fault"))  # no inner: the constant-slot-0 heuristic
    assert fault.inner.name == make_backend(HeuristicModel(backend="heuristic", strategy="constant")).name
    assert fault.policy == RetryPolicy() and fault.rates == FaultRates()
