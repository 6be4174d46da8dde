from __future__ import annotations

from pathlib import Path

import pytest

from blindmcq.backends.base import ModelRequest
from blindmcq.backends.bedrock import BedrockBackend
from blindmcq.backends.fault import FaultBackend, InstantBackend, SlowBackend
from blindmcq.backends.heuristic import HeuristicBackend
from blindmcq.backends.lexical import LexicalBackend
from blindmcq.backends.local import LocalBackend
from blindmcq.backends.openai_api import OpenAIBackend
from blindmcq.backends.registry import load_model_config, make_backend
from blindmcq.errors import ConfigError

MODEL_DIR = Path(__file__).resolve().parents[2] / "conf" / "model"
KINDS = {
    "lexical": LexicalBackend,
    "bedrock": BedrockBackend,
    "openai": OpenAIBackend,
    "local": LocalBackend,
    "heuristic": HeuristicBackend,
    "fault": FaultBackend,
}


@pytest.mark.parametrize("path", sorted(MODEL_DIR.glob("*.yaml")), ids=lambda p: p.stem)
def test_every_model_config_builds_its_backend(path: Path) -> None:
    cfg = load_model_config(path)
    assert cfg["name"] == path.stem  # the file name is the model name the records carry
    backend = make_backend(cfg)  # builds only; no model load, no AWS call
    assert isinstance(backend, KINDS[cfg["backend"]])
    assert backend.name and backend.concurrency >= 1


def test_load_by_name_and_default_is_local() -> None:
    cfg = load_model_config("gemma3-270m", MODEL_DIR)
    assert cfg["backend"] == "local" and cfg["path"] is None


def test_fault_config_wraps_its_inner_strategy() -> None:
    backend = make_backend(load_model_config("fault-demo", MODEL_DIR))
    assert isinstance(backend, FaultBackend)
    assert backend.inner.name == "heuristic:longest" and backend.concurrency == 16


def test_fakes_for_benchmarks() -> None:
    assert isinstance(make_backend({"backend": "instant"}), InstantBackend)
    slow = make_backend({"backend": "slow", "latency_s": 0.01, "concurrency": 3})
    assert isinstance(slow, SlowBackend) and slow.concurrency == 3
    req = ModelRequest(model="s", system=None, user="q", choices=("A", "B"))
    assert slow.complete(req).text == "A"


@pytest.mark.parametrize(
    ("cfg", "key"),
    [
        ({"backend": "psychic"}, "'backend'"),
        ({"backend": "openai"}, "'model_id'"),
        ({"backend": "openai", "model_id": "m"}, "'base_url'"),
        ({"backend": "openai", "model_id": "m", "base_url": "x", "api": "chat"}, "'base_url'"),
        ({"backend": "openai", "model_id": "m", "base_url": "http://h/v1", "api": "rpc"}, "'api'"),
        ({}, "'backend'"),
        ({"backend": "slow"}, "'latency_s'"),
        ({"backend": "local", "path": "/nonexistent/model.gguf"}, "'path'"),
        ({"backend": "heuristic", "strategy": "psychic"}, "'strategy'"),
    ],
)
def test_unknown_or_bad_values_name_the_key(cfg: dict, key: str) -> None:
    with pytest.raises(ConfigError, match=key):
        make_backend(cfg)


def test_missing_config_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no model config"):
        load_model_config("nope", tmp_path)
