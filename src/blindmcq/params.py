"""Read the composed configuration (``params.yaml``) and check the keys a stage needs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from blindmcq.errors import ConfigError, InputError

PARAMS_FILE = "params.yaml"


def load_params(path: str | Path = PARAMS_FILE) -> dict[str, Any]:
    path = Path(path)
    if not path.exists():
        raise InputError("parameters file not found (run from the project root)", file=str(path))
    try:
        params = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise InputError(f"not valid YAML: {exc}", file=str(path)) from exc
    if not isinstance(params, dict):
        raise InputError("expected a mapping at the top level", file=str(path))
    return params


def require(params: dict[str, Any], dotted: str) -> Any:
    """The value at a dotted key, or a ConfigError naming the key."""
    node: Any = params
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            raise ConfigError(dotted, "missing")
        node = node[part]
    return node


def section(params: dict[str, Any], name: str) -> dict[str, Any]:
    value = require(params, name)
    if not isinstance(value, dict):
        raise ConfigError(name, f"expected a mapping, got {type(value).__name__}")
    return value
