"""Fake backends for tests, demos and benchmarks.

``FaultBackend`` wraps a real answering backend (a heuristic, say) and injects, at seeded rates,
the failures a Bedrock sweep meets: throttling bursts, timeouts and 5xx (raised as the very botocore
exceptions Bedrock raises, and retried by the same ``call_with_retries`` the Bedrock backend uses),
truncated and empty answers, refusals, and a slow latency tail. The faults a request meets depend only
on the seed and the request, never on timing or thread order, so a faulty run is reproducible.
``InstantBackend`` and ``SlowBackend`` measure the runner's own overhead and its concurrency.
"""

from __future__ import annotations

import hashlib
import random
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from blindmcq.backends.base import Abilities, Backend, ModelRequest, ModelResponse, request_key
from blindmcq.backends.bedrock import RetryPolicy, call_with_retries
from blindmcq.config.schema import Faults, ModelSchema, default


@dataclass(frozen=True)
class FaultRates(Faults):
    """Probabilities per request (``throttle``) or per attempt (``timeout``, ``server_error``) or per
    answer (the rest). A throttled request meets 1..``throttle_burst`` throttles in a row. ``latency_s``
    is the median latency of one attempt (log-normal, sigma 0.5; 0 = none), ``tail_rate`` the share of
    attempts that take ``tail_s`` instead. The fields, their ranges and defaults: ``config.schema.Faults``."""

    @classmethod
    def from_cfg(cls, cfg: Faults | None) -> FaultRates:
        """The rates of a model config's typed ``faults:`` (none: the schema's defaults, no faults)."""
        if cfg is None:
            return cls()
        if isinstance(cfg, cls):
            return cfg
        return cls(**asdict(cfg))


def _client_error(code: str, status: int, message: str) -> Exception:
    from botocore.exceptions import ClientError

    body = {"Error": {"Code": code, "Message": message}, "ResponseMetadata": {"HTTPStatusCode": status}}
    return ClientError(body, "Converse")  # type: ignore[arg-type]


def _timeout_error() -> Exception:
    from botocore.exceptions import ReadTimeoutError

    return ReadTimeoutError(endpoint_url="https://fault.invalid")


class FaultBackend:
    """Injects faults around ``inner``; ``sleep`` is injectable so tests never really wait."""

    # Its declared abilities are the wrapped model's: the registry resolves them (Entry.wraps), so this
    # module never imports the registry (no import circle).

    def __init__(
        self,
        inner: Backend,
        rates: FaultRates,
        *,
        seed: int = default(ModelSchema, "seed"),
        policy: RetryPolicy | None = None,
        sleep: Callable[[float], None] = time.sleep,
        region: str = "fault-1",
    ) -> None:
        self.inner, self.rates, self.seed = inner, rates, seed
        self.policy = policy or RetryPolicy()
        tag = hashlib.sha256(repr(rates).encode()).hexdigest()[:8]  # other rates, other answers
        self.name = f"fault:{seed}:{tag}:{inner.name}"
        self.concurrency = int(getattr(inner, "concurrency", 8))
        self.region = region
        self._sleep = sleep
        self.abilities: Abilities = getattr(inner, "abilities", Abilities())
        self.endpoint = getattr(inner, "endpoint", None)

    def wire_request(self, request: ModelRequest) -> dict[str, Any]:
        """The inner backend's request key plus what decides the injected faults: seed, rates, retry
        budget, and the request hash the seeded draws are made from."""
        return {
            "inner": request_key(self.inner, request),
            "seed": self.seed,
            "faults": asdict(self.rates),
            "retry": asdict(self.policy),
            "draw": self._draw_key(request),
        }

    def _draw_key(self, request: ModelRequest) -> str:
        return request.cache_key(self.inner.name)

    def _rng(self, request: ModelRequest) -> random.Random:
        digest = hashlib.sha256(f"{self.seed}:{self._draw_key(request)}".encode()).digest()
        return random.Random(int.from_bytes(digest[:8], "big"))

    def complete(self, request: ModelRequest) -> ModelResponse:
        rng = self._rng(request)
        r = self.rates
        throttles = rng.randint(1, max(1, r.throttle_burst)) if rng.random() < r.throttle else 0

        def attempt(n: int) -> ModelResponse:
            self._wait(rng)
            if n < throttles:
                raise _client_error("ThrottlingException", 429, "Too many requests (injected)")
            if rng.random() < r.timeout:
                raise _timeout_error()
            if rng.random() < r.server_error:
                raise _client_error("ServiceUnavailableException", 503, "Service unavailable (injected)")
            return self._answer(request, rng)

        response = call_with_retries(attempt, self.policy, sleep=self._sleep, rng=rng)
        response.region = response.region or self.region
        return response

    def _wait(self, rng: random.Random) -> None:
        r = self.rates
        if r.tail_rate and rng.random() < r.tail_rate:
            self._sleep(r.tail_s)
        elif r.latency_s:
            self._sleep(r.latency_s * rng.lognormvariate(0.0, 0.5))

    def _answer(self, request: ModelRequest, rng: random.Random) -> ModelResponse:
        r = self.rates
        draw = rng.random()
        if draw < r.refuse:
            return ModelResponse(text="I can't help with that.", status="refused", meta={"fault": "refused"})
        draw -= r.refuse
        response = self.inner.complete(request)
        if draw < r.empty:
            response.text, response.output_tokens = "", 0
            response.meta["fault"] = "empty"
        elif draw - r.empty < r.truncate:
            response.text = response.text[: len(response.text) // 2]
            response.meta.update(fault="truncated", stop_reason="max_tokens")
        return response


def _fake_wire(request: ModelRequest, text: str) -> dict[str, Any]:
    """What a fake's answer depends on: the prompt, the choices (it answers the first) and its text."""
    return {"system": request.system, "user": request.user, "choices": list(request.choices), "text": text}


class InstantBackend:
    """Answers at once with the first choice (or ``text``): the runner's overhead with no model cost."""

    @classmethod
    def declared_abilities(cls, model_cfg: Any) -> Abilities:
        return Abilities(generate=True)

    def __init__(self, text: str = "A", *, name: str = "instant") -> None:
        self.text, self.name = text, name
        self.concurrency = 1
        self.abilities = Abilities(generate=True)

    def wire_request(self, request: ModelRequest) -> dict[str, Any]:
        return _fake_wire(request, self.text)

    def complete(self, request: ModelRequest) -> ModelResponse:
        text = request.choices[0] if request.choices else self.text
        return ModelResponse(text=text, input_tokens=len(request.user), output_tokens=1, latency_s=0.0)


class SlowBackend:
    """Sleeps ``latency_s`` per call (releasing the GIL, like a network call) and counts the peak
    number of calls in flight, so a benchmark can show the concurrency the runner achieved."""

    @classmethod
    def declared_abilities(cls, model_cfg: Any) -> Abilities:
        return Abilities(generate=True)

    def __init__(self, latency_s: float, *, text: str = "A", concurrency: int = 8) -> None:
        import threading

        self.latency_s, self.text, self.concurrency = float(latency_s), text, int(concurrency)
        self.name = f"slow:{self.latency_s}"
        self.in_flight = 0
        self.peak_in_flight = 0
        self._lock = threading.Lock()
        self.abilities = Abilities(generate=True)

    def wire_request(self, request: ModelRequest) -> dict[str, Any]:
        return _fake_wire(request, self.text)

    def complete(self, request: ModelRequest) -> ModelResponse:
        with self._lock:
            self.in_flight += 1
            self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
        try:
            time.sleep(self.latency_s)
        finally:
            with self._lock:
                self.in_flight -= 1
        text = request.choices[0] if request.choices else self.text
        return ModelResponse(
            text=text, input_tokens=len(request.user), output_tokens=1, latency_s=self.latency_s
        )
