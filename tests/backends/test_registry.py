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
from blindmcq.backends.registry import make_backend
from blindmcq.config.files import load_model_file
from blindmcq.config.schema import InstantModel, SlowModel, model_config
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
    cfg = load_model_file(path)
    assert cfg["name"] == path.stem  # the file name is the model name the records carry
    backend = make_backend(model_config(cfg))  # builds only; no model load, no AWS call
    assert isinstance(backend, KINDS[cfg["backend"]])
    assert backend.name and backend.concurrency >= 1


def test_load_by_name_and_default_is_local() -> None:
    cfg = load_model_file("gemma3-270m", MODEL_DIR)
    assert cfg["backend"] == "local" and cfg["path"] is None


def test_fault_config_wraps_its_inner_strategy() -> None:
    backend = make_backend(model_config(load_model_file("fault-demo", MODEL_DIR)))
    assert isinstance(backend, FaultBackend)
    assert backend.inner.name == "heuristic:longest" and backend.concurrency == 16


def test_fakes_for_benchmarks() -> None:
    assert isinstance(make_backend(InstantModel(backend="instant")), InstantBackend)
    slow = make_backend(SlowModel(backend="slow", latency_s=0.01, concurrency=3))
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
        make_backend(model_config(cfg))


def test_missing_config_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no model config"):
        load_model_file("nope", tmp_path)


@pytest.mark.parametrize("path", sorted(MODEL_DIR.glob("*.yaml")), ids=lambda p: p.stem)
def test_declared_abilities_match_the_built_backend(path: Path) -> None:
    """The class declares, without being built, exactly what the built backend reports."""
    from blindmcq.backends.registry import abilities_of

    cfg = model_config(load_model_file(path))
    assert abilities_of(cfg) == make_backend(cfg).abilities


def test_declared_abilities_load_no_heavy_library() -> None:
    import subprocess
    import sys

    code = (
        "import sys; from blindmcq.backends import registry; "
        "from blindmcq.config.schema import HeuristicModel; "
        "registry.abilities_of(HeuristicModel(backend='heuristic', strategy='longest')); "
        "print('torch' in sys.modules, 'boto3' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


def test_no_backend_name_is_compared_outside_backends() -> None:
    import re

    src = Path(__file__).resolve().parents[2] / "src" / "blindmcq"
    pattern = re.compile(r"backend.{0,20}(==|!=| in )")
    hits = [
        f"{p.relative_to(src)}:{n}"
        for p in src.rglob("*.py")
        if "backends" not in p.relative_to(src).parts
        for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if pattern.search(line)
    ]
    assert hits == []
