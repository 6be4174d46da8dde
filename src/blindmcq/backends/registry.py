"""Build a backend from a model config (one ``conf/model/<name>.yaml``, as a plain dict)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from blindmcq.backends.base import Backend
from blindmcq.errors import ConfigError

BACKENDS = ("bedrock", "openai", "local", "heuristic", "lexical", "fault", "instant", "slow")
MODEL_CONF_DIR = Path(__file__).resolve().parents[3] / "conf" / "model"


def _number(cfg: Mapping[str, Any], key: str, kind: type, default: Any = None) -> Any:
    """``cfg[key]`` as ``kind`` (int or float), or a ConfigError naming the key."""
    value = cfg.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ConfigError(key, f"expected a number, got {value!r}")
    return kind(value)


def make_backend(model_cfg: Mapping[str, Any]) -> Backend:
    """Dispatch on ``backend:``. Heavy libraries (torch, boto3) load only for the backend asked for.

    ``bedrock`` with ``api: responses`` goes to the OpenAI-style backend (Bedrock's ``bedrock-mantle``
    endpoint); ``api: converse`` (the default) to the Converse backend.
    ``fault`` wraps ``inner:`` (another model config, default the constant-slot-0 heuristic) with the
    rates under ``faults:``; ``instant`` and ``slow`` (``latency_s``) are the benchmark fakes.
    """
    if not isinstance(model_cfg, Mapping):
        raise ConfigError("model", f"expected a mapping, got {type(model_cfg).__name__}")
    kind = model_cfg.get("backend")
    if kind == "openai" or (kind == "bedrock" and model_cfg.get("api", "converse") == "responses"):
        # one backend for OpenAI-style APIs: local servers (chat) and Bedrock's bedrock-mantle (responses)
        from blindmcq.backends.openai_api import OpenAIBackend

        return OpenAIBackend(model_cfg, seed=_number(model_cfg, "seed", int, 0))
    if kind == "bedrock":
        if model_cfg.get("api", "converse") != "converse":
            raise ConfigError("api", f"bedrock takes converse or responses, got {model_cfg['api']!r}")
        from blindmcq.backends.bedrock import BedrockBackend

        return BedrockBackend(model_cfg, seed=_number(model_cfg, "seed", int, 0))
    if kind == "local":
        from blindmcq.backends.local import LocalBackend

        return LocalBackend(model_cfg)
    if kind == "heuristic":
        from blindmcq.backends.heuristic import HeuristicBackend

        return HeuristicBackend(model_cfg)
    if kind == "lexical":
        from blindmcq.backends.lexical import LexicalBackend

        return LexicalBackend(model_cfg)
    if kind == "fault":
        from blindmcq.backends.bedrock import RetryPolicy
        from blindmcq.backends.fault import FaultBackend, FaultRates

        inner_cfg = model_cfg.get("inner") or {"backend": "heuristic", "strategy": "constant", "slot": 0}
        fault = FaultBackend(
            make_backend(inner_cfg),
            FaultRates.from_cfg(model_cfg.get("faults")),
            seed=_number(model_cfg, "seed", int, 0),
            policy=RetryPolicy.from_cfg(model_cfg.get("retry")),
        )
        fault.concurrency = _number(model_cfg, "concurrency", int, fault.concurrency)
        return fault
    if kind == "instant":
        from blindmcq.backends.fault import InstantBackend

        return InstantBackend()
    if kind == "slow":
        from blindmcq.backends.fault import SlowBackend

        if "latency_s" not in model_cfg:
            raise ConfigError("latency_s", "the slow backend needs a latency in seconds")
        return SlowBackend(
            _number(model_cfg, "latency_s", float), concurrency=_number(model_cfg, "concurrency", int, 8)
        )
    raise ConfigError("backend", f"unknown backend {kind!r}; expected one of {', '.join(BACKENDS)}")


def load_model_config(name_or_path: str | Path, conf_dir: str | Path | None = None) -> dict[str, Any]:
    """Read ``conf/model/<name>.yaml`` (or a YAML path) into a dict; ``name`` defaults to the file stem."""
    import yaml

    path = Path(name_or_path)
    if path.suffix not in (".yaml", ".yml"):
        path = Path(conf_dir or MODEL_CONF_DIR) / f"{name_or_path}.yaml"
    if not path.is_file():
        raise ConfigError("model", f"no model config at {path}")
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise ConfigError("model", f"{path} is not a YAML mapping")
    data = _inherit(data, path, conf_dir)
    data.setdefault("name", path.stem)
    from blindmcq.config.schema import validate_group  # the model schema, checked where the file enters

    validate_group("model", data, file=str(path))
    return data


def _inherit(data: dict[str, Any], path: Path, conf_dir: str | Path | None, depth: int = 0) -> dict[str, Any]:
    """Hydra's defaults list inside a model config, as Hydra composes it: each listed model config of
    the same folder first, then this file's own keys (``_self_``, last unless placed elsewhere)."""
    import yaml

    defaults = data.pop("defaults", None)
    if defaults is None:
        return data
    if depth > 8 or not isinstance(defaults, list):
        raise ConfigError("model.defaults", f"{path}: expected a short list of model config names")
    merged: dict[str, Any] = {}
    entries = defaults if "_self_" in defaults else [*defaults, "_self_"]
    for entry in entries:
        if entry == "_self_":
            merged |= data
            continue
        if not isinstance(entry, str):
            raise ConfigError("model.defaults", f"{path}: expected model config names, got {entry!r}")
        base_path = path.parent / f"{entry}.yaml"
        if not base_path.is_file():
            raise ConfigError("model.defaults", f"{path}: no model config {entry!r} at {base_path}")
        base = yaml.safe_load(base_path.read_text(encoding="utf-8"))
        merged |= _inherit(dict(base or {}), base_path, conf_dir, depth + 1)
    return merged
