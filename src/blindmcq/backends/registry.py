"""The backend registry: backends register by name as lazy entries, and declare what they can do.

An entry names its class by import path, so building a registry imports no heavy library (torch, boto3);
the class loads when a backend of that kind is asked for (``make_backend``) or its declared abilities
are (``abilities_of``: a classmethod, no backend is built). Code outside ``backends/`` asks abilities,
never a backend's name.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from blindmcq.backends.base import Abilities, Backend
from blindmcq.errors import ConfigError


@dataclass(frozen=True)
class Entry:
    """One registered backend: its class is ``module.attr`` (a module path the stage-deps check can
    see); ``build`` makes it from a model config (default: ``Class(model_cfg)``)."""

    name: str
    module: str
    attr: str
    build: Callable[[type, Mapping[str, Any]], Backend] | None = None
    # a wrapper (``fault``): the model config it wraps, whose abilities it declares
    wraps: Callable[[Mapping[str, Any]], Mapping[str, Any]] | None = None

    def load(self) -> type:
        return getattr(importlib.import_module(self.module), self.attr)

    def abilities(self, model_cfg: Mapping[str, Any]) -> Abilities:
        if self.wraps is not None:
            return abilities_of(self.wraps(model_cfg))
        return self.load().declared_abilities(model_cfg)

    def make(self, model_cfg: Mapping[str, Any]) -> Backend:
        cls = self.load()
        return self.build(cls, model_cfg) if self.build is not None else cls(model_cfg)


REGISTRY: dict[str, Entry] = {}


def register(entry: Entry) -> Entry:
    """Add (or replace) a backend kind; its name is what ``backend:`` in a model config says."""
    REGISTRY[entry.name] = entry
    return entry


def _number(cfg: Mapping[str, Any], key: str, kind: type, default: Any = None) -> Any:
    """``cfg[key]`` as ``kind`` (int or float), or a ConfigError naming the key."""
    value = cfg.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ConfigError(key, f"expected a number, got {value!r}")
    return kind(value)


def _seeded(cls: type, cfg: Mapping[str, Any]) -> Backend:
    return cls(cfg, seed=_number(cfg, "seed", int, 0))


def fault_inner_cfg(model_cfg: Mapping[str, Any]) -> Mapping[str, Any]:
    """The model config a ``fault`` config wraps (``inner:``, by default the constant-slot-0 heuristic)."""
    return model_cfg.get("inner") or {"backend": "heuristic", "strategy": "constant", "slot": 0}


def _fault(cls: type, cfg: Mapping[str, Any]) -> Backend:
    from blindmcq.backends.bedrock import RetryPolicy
    from blindmcq.backends.fault import FaultRates

    fault = cls(
        make_backend(fault_inner_cfg(cfg)),
        FaultRates.from_cfg(cfg.get("faults")),
        seed=_number(cfg, "seed", int, 0),
        policy=RetryPolicy.from_cfg(cfg.get("retry")),
    )
    fault.concurrency = _number(cfg, "concurrency", int, fault.concurrency)
    return fault


def _instant(cls: type, cfg: Mapping[str, Any]) -> Backend:
    return cls()


def _slow(cls: type, cfg: Mapping[str, Any]) -> Backend:
    if "latency_s" not in cfg:
        raise ConfigError("latency_s", "the slow backend needs a latency in seconds")
    return cls(_number(cfg, "latency_s", float), concurrency=_number(cfg, "concurrency", int, 8))


for _entry in (
    Entry("bedrock", "blindmcq.backends.bedrock", "BedrockBackend", _seeded),
    Entry("openai", "blindmcq.backends.openai_api", "OpenAIBackend", _seeded),
    Entry("local", "blindmcq.backends.local", "LocalBackend"),
    Entry("heuristic", "blindmcq.backends.heuristic", "HeuristicBackend"),
    Entry("lexical", "blindmcq.backends.lexical", "LexicalBackend"),
    Entry("fault", "blindmcq.backends.fault", "FaultBackend", _fault, wraps=fault_inner_cfg),
    Entry("instant", "blindmcq.backends.fault", "InstantBackend", _instant),
    Entry("slow", "blindmcq.backends.fault", "SlowBackend", _slow),
):
    register(_entry)
BACKENDS = tuple(REGISTRY)


def entry_for(model_cfg: Mapping[str, Any]) -> Entry:
    """The entry a model config's ``backend:`` asks for. ``bedrock`` with ``api: responses`` goes to
    the OpenAI-style backend (Bedrock's ``bedrock-mantle`` endpoint); ``api: converse`` (the default)
    to the Converse backend."""
    if not isinstance(model_cfg, Mapping):
        raise ConfigError("model", f"expected a mapping, got {type(model_cfg).__name__}")
    kind = model_cfg.get("backend")
    if kind == "bedrock":
        api = model_cfg.get("api", "converse")
        if api == "responses":
            return REGISTRY["openai"]
        if api != "converse":
            raise ConfigError("api", f"bedrock takes converse or responses, got {model_cfg['api']!r}")
    if not isinstance(kind, str) or kind not in REGISTRY:
        raise ConfigError("backend", f"unknown backend {kind!r}; expected one of {', '.join(REGISTRY)}")
    return REGISTRY[kind]


def abilities_of(model_cfg: Mapping[str, Any]) -> Abilities:
    """What the backend of ``model_cfg`` can do, from its class: nothing is built, no model loads."""
    return entry_for(model_cfg).abilities(model_cfg)


def abilities_for(model_cfg: Mapping[str, Any], backend: object | None = None) -> Abilities:
    """The abilities of ``backend`` where one is given and declares them, else those of the config's
    registered kind; a stand-in backend of no registered kind (tests) declares only ``generate``."""
    declared = getattr(backend, "abilities", None)
    if isinstance(declared, Abilities):
        return declared
    if isinstance(model_cfg, Mapping) and model_cfg.get("backend") not in REGISTRY:
        return Abilities()
    return abilities_of(model_cfg)


def make_backend(model_cfg: Mapping[str, Any]) -> Backend:
    """Build the backend ``backend:`` names. Heavy libraries (torch, boto3) load only for the backend
    asked for. ``fault`` wraps ``inner:`` (another model config, default the constant-slot-0
    heuristic) with the rates under ``faults:``; ``instant`` and ``slow`` (``latency_s``) are the
    benchmark fakes."""
    return entry_for(model_cfg).make(model_cfg)
