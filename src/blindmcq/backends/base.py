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


@dataclass(frozen=True)
class Abilities:
    """What a backend can do, declared by the backend; callers ask this, never the backend's name."""

    generate: bool = True  # answers free text
    score_labels: bool = False  # fills ModelResponse.choice_logprobs for request.choices
    score_options: bool = False  # can score option texts (cloze log-likelihood)
    needs_option_texts: bool = False  # reads the option texts (heuristic strategies), not the prompt
    needs_option_order: bool = False  # also reads the published order and item id (lexical tie-break)
    reasons: bool = False  # may think before answering (needs output-token room)
    logprobs: bool = False  # returns token log-probabilities
    scores_by_default: bool = False  # a base model: answers by label log-probabilities unless told not to
    batch: bool = False  # its requests can go through the provider's batch inference (Bedrock batch)
    catalogue: bool = False  # its model id comes from a provider catalogue whose documentation is
    # checked per model (``verified`` / ``unverified`` in the model config)


class Backend(Protocol):
    """Anything that answers a ModelRequest. ``name`` goes into the cache key.

    ``wire_request`` returns the exact body the backend would send for ``request`` (JSON-serialisable,
    deterministic, after every model-config switch is applied) and ``endpoint`` what it is sent to where
    that changes the answer (e.g. a base URL); ``request_key`` hashes both.
    """

    name: str
    abilities: Abilities

    def complete(self, request: ModelRequest) -> ModelResponse: ...

    def wire_request(self, request: ModelRequest) -> dict[str, Any]: ...


def request_key(backend: Backend, request: ModelRequest) -> str:
    """The response-cache key: the hash of the exact wire request (backends without ``wire_request``
    fall back to the request's own fields)."""
    wire_fn = getattr(backend, "wire_request", None)
    if wire_fn is None:
        return request.cache_key(backend.name)
    payload = {
        "backend": backend.name,
        "endpoint": getattr(backend, "endpoint", None),
        "wire": wire_fn(request),
    }
    text = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
