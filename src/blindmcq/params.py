"""Read the composed configuration (``params.yaml``), check it against the schemas once, and hand it on.

``load_config`` validates (:func:`blindmcq.config.schema.validate`: unknown keys, wrong types and
out-of-range values stop with one line naming the file and key) and returns the typed
:class:`~blindmcq.config.schema.Config`, what the core takes. ``load_params`` returns the same checked
config as the mapping ``params.yaml`` holds: what MLflow logs and what a stage hands the core, which types
it once at its door (``config.schema.as_config``). Both resolve ``${secret:NAME}`` references as they
load, so a secret is read where the calls are made and registered for scrubbing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from blindmcq.config.schema import Config, validate
from blindmcq.errors import ConfigError, InputError
from blindmcq.secrets import resolve_secret_refs

PARAMS_FILE = "params.yaml"


def load_params(path: str | Path = PARAMS_FILE) -> dict[str, Any]:
    """``params.yaml`` as a mapping, after the schema check (a ConfigError names the file and key); the
    typed view is ``load_config``."""
    params = _read(Path(path))
    validate(params, file=str(path))
    # ${secret:NAME} left a reference in params.yaml; the value is read now, where the calls are made
    return resolve_secret_refs(params)


def load_config(path: str | Path = PARAMS_FILE) -> Config:
    """``params.yaml`` as the typed :class:`Config`, its ``${secret:NAME}`` references resolved (the
    typed groups' reprs mask them: ``config.schema``)."""
    params = _read(Path(path))
    validate(params, file=str(path))  # the references checked as written, as load_params does
    return validate(resolve_secret_refs(params), file=str(path))


def _read(path: Path) -> dict[str, Any]:
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
