"""The backend interface: a request in, a response out. Backends never parse answers."""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field, fields
from typing import Any, Protocol

from blindmcq.vocabulary import CALL_STATUSES, CallStatus


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
    status: CallStatus = "ok"
    input_tokens: int | None = None
    output_tokens: int | None = None
    latency_s: float | None = None
    region: str | None = None
    error: str | None = None
    choice_logprobs: list[float] | None = None  # one per request.choices, for scoring backends
    meta: dict[str, Any] = field(default_factory=dict)


# Model scores are kept on a fixed grid: rounded to SCORE_DECIMALS decimals (nats) by ``quantise_score``.
# torch's CPU kernels differ between processors in the last bits of a float32 score (up to 4e-4 on a
# cloze sum, relative 7e-6); a score changes its grid point between two machines with a chance of about
# that difference over the step, so equality is likely, not certain (docs/cache.md). 4 decimals keep every
# gap between two options of the default run (the smallest is 2.9e-4).
SCORE_DECIMALS = 4
# How far apart two machines' figures resting on model scores may be: three grid steps (a mean of scores
# on the grid moves by at most one step when its scores move by less than one; the figure's own rounding
# to 4 decimals adds at most one more). Structure and model-free figures are compared exactly.
SCORE_FIGURE_TOLERANCE = 3 * 10.0**-SCORE_DECIMALS
# The ``meta`` entries of a response that are model scores (one number, or one per option).
SCORE_META_KEYS = ("logprob", "per_token", "per_char", "prob_mass")


def quantise_score(value: float) -> float:
    """A model score on the grid: ``value`` rounded to ``SCORE_DECIMALS`` decimals (Python's correctly
    rounded ``round``, so the result depends on the double alone, and quantising twice changes
    nothing). NaN and infinities pass through."""
    if not math.isfinite(value):
        return float(value)
    return round(float(value), SCORE_DECIMALS) + 0.0  # + 0.0: no -0.0 beside 0.0


def quantise_response(response: ModelResponse) -> ModelResponse:
    """``response`` with every model score on the grid (``quantise_score``), in place; returned for
    chaining: ``choice_logprobs`` and the ``SCORE_META_KEYS`` entries of ``meta``. The one place scores
    are quantised: the local backend before it picks, the response cache before it stores a row and
    when it reads one back (so rows stored before are served on the grid too)."""
    if response.choice_logprobs is not None:
        response.choice_logprobs = [_on_grid(v) for v in response.choice_logprobs]
    meta = response.meta
    if isinstance(meta, dict):
        for name in SCORE_META_KEYS:
            value = meta.get(name)
            if isinstance(value, list):
                meta[name] = [_on_grid(v) for v in value]
            elif value is not None:
                meta[name] = _on_grid(value)
    return response


def _on_grid(value: Any) -> Any:
    """A number on the grid; anything else (a malformed row's string) as it is, for the schema to name."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return value
    return quantise_score(value)


_OPTIONAL_STR = ("region", "error")
# No one call reads or writes a billion tokens (the longest context windows hold a few million): a count
# above it is junk from the server, and one past int64 breaks the predictions file.
MAX_TOKENS_COUNT = 10**9


def coerce_tokens(value: Any) -> int | None:
    """A provider's usage count as an int: ``10``, ``"10"`` and ``10.0`` give 10; anything else
    (missing, negative, above ``MAX_TOKENS_COUNT``, ``"n/a"``, ``true``, 10.5) gives None.
    OpenAI-compatible servers sometimes send the counts as strings."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            return None
    if isinstance(value, float):
        if not math.isfinite(value) or not value.is_integer():
            return None
        value = int(value)
    if not isinstance(value, int) or not 0 <= value <= MAX_TOKENS_COUNT:
        return None
    return value


def conform_usage(response: ModelResponse) -> ModelResponse:
    """``response`` with its token counts coerced (``coerce_tokens``), in place; returned for chaining."""
    response.input_tokens = coerce_tokens(response.input_tokens)
    response.output_tokens = coerce_tokens(response.output_tokens)
    return response


def response_from_dict(data: Any) -> ModelResponse:
    """The one typed schema of a stored response (the response cache's rows): a ``ModelResponse`` from
    its JSON object, or ValueError naming the first field that does not fit. Nothing is coerced here:
    a row that does not fit is a miss and is replaced by the next answer."""
    if not isinstance(data, dict):
        raise ValueError(f"expected a JSON object, got {type(data).__name__}")
    known = {f.name for f in fields(ModelResponse)}
    unknown = sorted(set(data) - known)
    if unknown:
        raise ValueError(f"unknown field {unknown[0]!r}")
    if not isinstance(data.get("text"), str):
        raise ValueError(f"text: expected a string, got {_kind(data.get('text'))}")
    status = data.get("status", "ok")
    if status not in CALL_STATUSES:
        raise ValueError(f"status: {status!r} is not one of {', '.join(CALL_STATUSES)}")
    for name in ("input_tokens", "output_tokens"):
        value = data.get(name)
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_TOKENS_COUNT
        ):
            limit = f"an integer from 0 to {MAX_TOKENS_COUNT:,} or null"
            raise ValueError(f"{name}: expected {limit}, got {_kind(value)}")
    latency = data.get("latency_s")
    if latency is not None and (isinstance(latency, bool) or not isinstance(latency, int | float)):
        raise ValueError(f"latency_s: expected a number or null, got {_kind(latency)}")
    for name in _OPTIONAL_STR:
        value = data.get(name)
        if value is not None and not isinstance(value, str):
            raise ValueError(f"{name}: expected a string or null, got {_kind(value)}")
    logprobs = data.get("choice_logprobs")
    if logprobs is not None and (
        not isinstance(logprobs, list)
        or any(isinstance(v, bool) or not isinstance(v, int | float) for v in logprobs)
    ):
        raise ValueError("choice_logprobs: expected a list of numbers or null")
    meta = data.get("meta", {})
    if not isinstance(meta, dict):
        raise ValueError(f"meta: expected an object, got {_kind(meta)}")
    return ModelResponse(**data)


def response_problem(response: ModelResponse) -> str | None:
    """Why ``response`` does not fit the stored schema (``response_from_dict``), in one line; None when
    it fits. What a backend hands back is checked with the same rule the cache reads rows by."""
    try:
        response_from_dict({f.name: getattr(response, f.name) for f in fields(ModelResponse)})
    except ValueError as exc:
        return str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return None


def _kind(value: Any) -> str:
    return "null" if value is None else f"{type(value).__name__} {value!r}"[:80]


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
    many: bool = False  # answers several requests in one call (``complete_many``), e.g. one forward pass
    catalogue: bool = False  # its model id comes from a provider catalogue whose documentation is
    # checked per model (``verified`` / ``unverified`` in the model config)
    reads_statutes: bool = False  # judges options against the statute index (in the statutes' language only)


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
