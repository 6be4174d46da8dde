"""The backend registry: backends register by name as lazy entries, and declare what they can do.

An entry names its class by import path, so building a registry imports no heavy library (torch, boto3);
the class loads when a backend of that kind is asked for (``make_backend``) or its declared abilities
are (``abilities_of``: a classmethod, no backend is built). Code outside ``backends/`` asks abilities,
never a backend's name. Every function here takes a typed model config (``config.schema``'s model records);
a mapping becomes one where configuration enters (``config.schema.model_config``).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from blindmcq.backends.base import Abilities, Backend
from blindmcq.config.schema import (
    BedrockModel,
    FaultModel,
    HeuristicModel,
    InstantModel,
    ModelSchema,
    SlowModel,
    StandInModel,
)
from blindmcq.errors import ConfigError


@dataclass(frozen=True)
class Entry:
    """One registered backend: its class is ``module.attr`` (a module path the stage-deps check can
    see); ``build`` makes it from a typed model config (default: ``Class(model_cfg)``)."""

    name: str
    module: str
    attr: str
    build: Callable[[type, Any], Backend] | None = None
    # a wrapper (``fault``): the model config it wraps, whose abilities it declares
    wraps: Callable[[Any], Any] | None = None

    def load(self) -> type:
        return getattr(importlib.import_module(self.module), self.attr)

    def abilities(self, cfg: ModelSchema) -> Abilities:
        if self.wraps is not None:
            return abilities_of(self.wraps(cfg))
        return self.load().declared_abilities(cfg)

    def make(self, cfg: ModelSchema) -> Backend:
        cls = self.load()
        return self.build(cls, cfg) if self.build is not None else cls(cfg)


REGISTRY: dict[str, Entry] = {}


def register(entry: Entry) -> Entry:
    """Add (or replace) a backend kind; its name is what ``backend:`` in a model config says."""
    REGISTRY[entry.name] = entry
    return entry


def _seeded(cls: type, cfg: Any) -> Backend:
    return cls(cfg, seed=cfg.seed)


# what a ``fault`` config without ``inner:`` wraps
DEFAULT_FAULT_INNER = HeuristicModel(backend="heuristic", strategy="constant", slot=0)


def fault_inner_cfg(cfg: FaultModel) -> ModelSchema:
    """The model config a ``fault`` config wraps (``inner:``, by default the constant-slot-0 heuristic)."""
    return cfg.inner or DEFAULT_FAULT_INNER


def _fault(cls: type, cfg: FaultModel) -> Backend:
    from blindmcq.backends.bedrock import RetryPolicy
    from blindmcq.backends.fault import FaultRates

    fault = cls(
        make_backend(fault_inner_cfg(cfg)),
        FaultRates.from_cfg(cfg.faults),
        seed=cfg.seed,
        policy=RetryPolicy.from_cfg(cfg.retry),
    )
    if cfg.concurrency is not None:  # else the wrapped backend's
        fault.concurrency = cfg.concurrency
    return fault


def _instant(cls: type, cfg: InstantModel) -> Backend:
    return cls()


def _slow(cls: type, cfg: SlowModel) -> Backend:
    return cls(cfg.latency_s, concurrency=cfg.calls_in_flight)  # the schema requires latency_s


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


def entry_for(cfg: ModelSchema) -> Entry:
    """The entry a model config's ``backend:`` asks for. ``bedrock`` with ``api: responses`` goes to
    the OpenAI-style backend (Bedrock's ``bedrock-mantle`` endpoint); ``api: converse`` (the default)
    to the Converse backend."""
    if isinstance(cfg, BedrockModel) and cfg.api == "responses":
        return REGISTRY["openai"]
    if cfg.backend not in REGISTRY:
        raise ConfigError(
            "backend", f"unknown backend {cfg.backend!r}; expected one of {', '.join(REGISTRY)}"
        )
    return REGISTRY[cfg.backend]


def abilities_of(cfg: ModelSchema) -> Abilities:
    """What the backend of ``cfg`` can do, from its class: nothing is built, no model loads."""
    return entry_for(cfg).abilities(cfg)


def abilities_for(cfg: ModelSchema, backend: object | None = None) -> Abilities:
    """The abilities of ``backend`` where one is given and declares them, else those of the config's
    registered kind; a stand-in backend of no registered kind (tests) declares only ``generate``."""
    declared = getattr(backend, "abilities", None)
    if isinstance(declared, Abilities):
        return declared
    if isinstance(cfg, StandInModel):
        return Abilities()
    return abilities_of(cfg)


def make_backend(cfg: ModelSchema) -> Backend:
    """Build the backend ``backend:`` names. Heavy libraries (torch, boto3) load only for the backend
    asked for. ``fault`` wraps ``inner:`` (another model config, default the constant-slot-0
    heuristic) with the rates under ``faults:``; ``instant`` and ``slow`` (``latency_s``) are the
    benchmark fakes."""
    return entry_for(cfg).make(cfg)
