"""Read the composed configuration (``params.yaml``), check it against the schemas once, and hand it on.

``load_params`` resolves the ``${secret:NAME}`` references (so a secret is read where the calls are made
and registered for scrubbing), then validates once (:func:`blindmcq.config.schema.validate`: unknown
keys, wrong types and out-of-range values stop with one line naming the file and the key as written) and
returns the typed :class:`~blindmcq.config.schema.Config`, what the stages and the core take. The
mapping it was checked from, what MLflow logs and a corpus fingerprint hashes, is
``config.schema.as_written(config)``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from blindmcq.config.schema import Config, validate
from blindmcq.errors import ConfigError, InputError
from blindmcq.secrets import resolve_secret_refs

PARAMS_FILE = "params.yaml"


def load_params(path: str | Path = PARAMS_FILE) -> Config:
    """``params.yaml`` as the typed :class:`Config`, its ``${secret:NAME}`` references resolved (the typed
    groups' reprs mask them: ``config.schema``); a ConfigError names the file and the key."""
    # ${secret:NAME} left a reference in params.yaml; the value is read now, where the calls are made (an
    # unset variable is a ConfigError naming the key); an error quoting a resolved value masks it
    # (schema._show)
    return validate(resolve_secret_refs(_read(Path(path))), file=str(path))


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
