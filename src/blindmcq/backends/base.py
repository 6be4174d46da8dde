"""The backend interface: a request in, a response out. Backends never parse answers."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field, fields
from typing import Any, Protocol


@dataclass(frozen=True)
class ModelRequest:
    """What is sent to a model. ``choices`` are the label strings a scoring backend ranks."""

    model: str  # the model config name, e.g. "sonnet-4.6" or "gemma3-270m"
    system: str | None
    user: str
    choices: tuple[str, ...] = ()
    temperature: float | None = 0.0
    max_tokens: int = 16
    reasoning: str = "direct"  # direct | step_by_step | thinking
    extra: dict[str, Any] = field(default_factory=dict)

    def cache_key(self, backend: str) -> str:
        """Hash of (backend, model, full request): the response-cache key."""
        # A shallow field dict gives the same JSON as dataclasses.asdict without its deep copy.
        request = {f.name: getattr(self, f.name) for f in fields(self)}
        payload = json.dumps({"backend": backend, **request}, sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()


@dataclass
class ModelResponse:
    text: str
    status: str = "ok"  # ok | refused | error
    input_tokens: int | None = None
    output_tokens: int | None = None
    latency_s: float | None = None
    region: str | None = None
    error: str | None = None
    choice_logprobs: list[float] | None = None  # one per request.choices, for scoring backends
    meta: dict[str, Any] = field(default_factory=dict)


class Backend(Protocol):
    """Anything that answers a ModelRequest. ``name`` goes into the cache key."""

    name: str

    def complete(self, request: ModelRequest) -> ModelResponse: ...
