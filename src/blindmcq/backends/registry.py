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
from blindmcq.config.schema import (
    BedrockModel,
    FaultModel,
    HeuristicModel,
    InstantModel,
    ModelSchema,
    SlowModel,
    StandInModel,
    any_model_config,
    model_config,
)
from blindmcq.errors import ConfigError

ModelConfig = Mapping[str, Any] | ModelSchema  # a plain mapping (tests, notebooks) or its typed dataclass


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

    def abilities(self, model_cfg: ModelConfig) -> Abilities:
        cfg = model_config(model_cfg)
        if self.wraps is not None:
            return abilities_of(self.wraps(cfg))
        return self.load().declared_abilities(cfg)

    def make(self, model_cfg: ModelConfig) -> Backend:
        cls, cfg = self.load(), model_config(model_cfg)
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


def fault_inner_cfg(model_cfg: ModelConfig) -> ModelSchema:
    """The model config a ``fault`` config wraps (``inner:``, by default the constant-slot-0 heuristic)."""
    cfg = model_config(model_cfg, FaultModel)
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


def entry_for(model_cfg: ModelConfig) -> Entry:
    """The entry a model config's ``backend:`` asks for. ``bedrock`` with ``api: responses`` goes to
    the OpenAI-style backend (Bedrock's ``bedrock-mantle`` endpoint); ``api: converse`` (the default)
    to the Converse backend. A mapping is checked against the model schema here (unknown keys, types)."""
    cfg = model_config(model_cfg)
    if isinstance(cfg, BedrockModel) and cfg.api == "responses":
        return REGISTRY["openai"]
    if cfg.backend not in REGISTRY:
        raise ConfigError(
            "backend", f"unknown backend {cfg.backend!r}; expected one of {', '.join(REGISTRY)}"
        )
    return REGISTRY[cfg.backend]


def abilities_of(model_cfg: ModelConfig) -> Abilities:
    """What the backend of ``model_cfg`` can do, from its class: nothing is built, no model loads."""
    cfg = model_config(model_cfg)
    return entry_for(cfg).abilities(cfg)


def typed_model(model_cfg: ModelConfig) -> ModelSchema:
    """A model config as its typed schema: its registered kind's, or ``StandInModel`` for a stand-in
    whose ``backend`` names no registered kind (a test's own backend object answers for it)."""
    return any_model_config(model_cfg, REGISTRY)


def abilities_for(model_cfg: ModelConfig, backend: object | None = None) -> Abilities:
    """The abilities of ``backend`` where one is given and declares them, else those of the config's
    registered kind; a stand-in backend of no registered kind (tests) declares only ``generate``."""
    declared = getattr(backend, "abilities", None)
    if isinstance(declared, Abilities):
        return declared
    cfg = typed_model(model_cfg)
    if isinstance(cfg, StandInModel):
        return Abilities()
    return abilities_of(cfg)


def make_backend(model_cfg: ModelConfig) -> Backend:
    """Build the backend ``backend:`` names. Heavy libraries (torch, boto3) load only for the backend
    asked for. ``fault`` wraps ``inner:`` (another model config, default the constant-slot-0
    heuristic) with the rates under ``faults:``; ``instant`` and ``slow`` (``latency_s``) are the
    benchmark fakes. A mapping is turned into its typed dataclass once, here."""
    cfg = model_config(model_cfg)
    return entry_for(cfg).make(cfg)
