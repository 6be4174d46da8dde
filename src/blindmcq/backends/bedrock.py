"""Amazon Bedrock through boto3's ``bedrock-runtime`` Converse API.

One backend per model config (``conf/model/<name>.yaml``). Several regions per model spread the
per-region quota: each attempt goes to the next region in round-robin order that is not cooling down
after a throttle. Throttling and transient server errors are retried with exponential jittered backoff
up to a budget; after it, and on any non-retryable error, the call returns a response with status
``error`` and the error code instead of raising, so one bad call never stops a sweep. As for the
OpenAI-style backend, ``call_deadline_s`` bounds a call's whole wall time (no attempt starts and no backoff
sleeps past it; botocore's connect and read timeouts are cut to it) and a ``CircuitBreaker`` shared by the
backend's threads ends every call's retries once all attempts for ``breaker_window_s`` have failed.
Credentials come from boto3's usual chain and are never read, logged or recorded here.
"""

from __future__ import annotations

import math
import random
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

from blindmcq.backends.base import Abilities, ModelRequest, ModelResponse, coerce_tokens
from blindmcq.config.schema import BedrockModel, ModelSchema, Retry, Thinking, default
from blindmcq.errors import ConfigError

# Error codes worth another attempt (Bedrock runtime docs); everything else is final.
RETRYABLE_CODES = frozenset(
    {
        "ThrottlingException",
        "TooManyRequestsException",
        "ServiceUnavailableException",
        "InternalServerException",
        "ModelNotReadyException",
        "ModelTimeoutException",
    }
)
THROTTLE_CODES = frozenset({"ThrottlingException", "TooManyRequestsException"})
REFUSAL_STOP_REASONS = frozenset({"content_filtered", "guardrail_intervened"})
RETRY_AFTER_JITTER = 0.2  # a Retry-After wait is stretched by up to this share, at random


class RetryableError(Exception):
    """A transient failure of one attempt; ``code`` names it (e.g. ``ThrottlingException``)."""

    def __init__(
        self, code: str, message: str = "", *, throttle: bool = False, retry_after: float | None = None
    ) -> None:
        super().__init__(f"{code}: {message}" if message else code)
        self.code, self.throttle = code, throttle
        self.retry_after = retry_after  # seconds the provider asked us to wait (Retry-After), if it said


def parse_retry_after(headers: Mapping[str, Any] | None, *, now: float | None = None) -> float | None:
    """Seconds to wait from a response's ``Retry-After`` (delta-seconds or an HTTP date, RFC 9110
    10.2.3) or ``retry-after-ms`` header; None when absent or unreadable. Header names in any case."""
    if not headers:
        return None
    lower = {str(k).lower(): v for k, v in headers.items()}
    millis = lower.get("retry-after-ms")
    if millis is not None:
        try:
            value = float(millis) / 1000.0
            return value if math.isfinite(value) and value >= 0 else None
        except (TypeError, ValueError):
            pass
    raw = lower.get("retry-after")
    if raw is None:
        return None
    try:
        value = float(str(raw).strip())
        return value if math.isfinite(value) and value >= 0 else None
    except ValueError:
        pass
    try:
        from email.utils import parsedate_to_datetime

        when = parsedate_to_datetime(str(raw)).timestamp()
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    return max(0.0, when - (time.time() if now is None else now))


class FinalError(Exception):
    """A failure no retry can fix (bad request, access denied, unknown model)."""

    def __init__(self, code: str, message: str = "") -> None:
        super().__init__(f"{code}: {message}" if message else code)
        self.code = code


@dataclass(frozen=True)
class RetryPolicy(Retry):
    """Our own retries on top of botocore's: the ``retry:`` settings (``config.schema.Retry``, where
    their defaults live) with the backoff they mean."""

    @classmethod
    def from_cfg(cls, cfg: Retry | None) -> RetryPolicy:
        """The policy of a model config's typed ``retry:`` (none: the schema's defaults)."""
        if cfg is None:
            return cls()
        if isinstance(cfg, cls):
            return cfg
        return cls(**asdict(cfg))

    def delay(self, attempt: int, rng: random.Random) -> float:
        """Full-jitter backoff (AWS architecture blog): uniform in [0, min(max, base * 2**attempt)]."""
        return rng.uniform(0.0, min(self.max_s, self.base_s * 2**attempt))

    def retry_after_delay(self, retry_after: float, rng: random.Random) -> float:
        """The provider's ``Retry-After``, honoured but capped at ``max_s`` and jittered up by at most
        20% (so clients told the same instant do not all return at it)."""
        wait = min(max(0.0, retry_after), self.max_s)
        return wait * (1.0 + rng.uniform(0.0, RETRY_AFTER_JITTER))


def classify_exception(exc: BaseException) -> RetryableError | FinalError | None:
    """Map a botocore exception to our two kinds; ``None`` for exceptions that are not API errors."""
    from botocore.exceptions import (
        ClientError,
        ConnectionError,
        ConnectTimeoutError,
        EndpointConnectionError,
        ReadTimeoutError,
    )

    if isinstance(exc, RetryableError | FinalError):
        return exc
    if isinstance(exc, ClientError):
        err = exc.response.get("Error", {})
        code = str(err.get("Code", "ClientError"))
        message = str(err.get("Message", ""))
        if code in RETRYABLE_CODES:
            headers = (exc.response.get("ResponseMetadata") or {}).get("HTTPHeaders")
            return RetryableError(
                code, message, throttle=code in THROTTLE_CODES, retry_after=parse_retry_after(headers)
            )
        return FinalError(code, message)
    if isinstance(exc, ReadTimeoutError | ConnectTimeoutError):
        return RetryableError("Timeout", type(exc).__name__)
    if isinstance(exc, EndpointConnectionError | ConnectionError):
        return RetryableError("ConnectionError", type(exc).__name__)
    return None


class CircuitBreaker:
    """One server's health across the calls of a backend (thread-safe): it opens once every attempt for
    ``window_s`` seconds has failed with a retryable error (no connection, a timeout, 5xx, 429) and at
    least ``min_failures`` did; an answer, or a final error the server sent (a 400), closes the streak.
    Once open it stays open: every retry loop using it ends at once (``CircuitOpen``), so a dead or
    always-failing server costs about ``window_s``, not every call's whole retry budget."""

    def __init__(
        self, window_s: float, min_failures: int = 5, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.window_s, self.min_failures = float(window_s), int(min_failures)
        self._clock = clock
        self._lock = threading.Lock()
        self._since: float | None = None  # when the current streak of failed attempts began
        self._failures = 0
        self.opened: str | None = None  # why it opened (the last failure's code), once it has
        self._open = threading.Event()

    def success(self) -> None:
        with self._lock:
            self._since, self._failures = None, 0

    def failure(self, code: str) -> None:
        with self._lock:
            now = self._clock()
            if self._since is None:
                self._since = now
            self._failures += 1
            if self._failures >= self.min_failures and now - self._since >= self.window_s:
                self.opened = self.opened or code
                self._open.set()

    def sleep(self, seconds: float) -> None:
        """A backoff pause that ends early when the breaker opens (a thread waiting out a minute's backoff
        learns at once that there is nothing left to retry)."""
        self._open.wait(max(0.0, seconds))

    @property
    def is_open(self) -> bool:
        return self.opened is not None

    def why(self) -> str:
        return f"every attempt for {self.window_s:g} s failed (last: {self.opened}); the server is down"


def call_with_retries(
    attempt_fn: Callable[[int], ModelResponse],
    policy: RetryPolicy,
    *,
    sleep: Callable[[float], None],
    rng: random.Random,
    on_retry: Callable[[int, RetryableError], None] | None = None,
    deadline: float | None = None,
    breaker: CircuitBreaker | None = None,
) -> ModelResponse:
    """Run ``attempt_fn(attempt)`` until it returns; retry transient errors within ``policy``.

    Shared by the Bedrock backend and the fault-injecting fake, so tests of one exercise the other's
    retry path. Never raises for API errors: the budget's end is an ``error`` response naming the code.
    ``deadline`` (a ``time.monotonic()`` instant): no attempt starts, and no backoff sleeps, past it
    (``DeadlineExceeded``). ``breaker``: told of every attempt; while it is open nothing is sent
    (``CircuitOpen``).
    """
    started = time.perf_counter()
    codes: list[str] = []
    waited_after = 0.0  # seconds slept because the provider said Retry-After

    def stopped() -> ModelResponse | None:
        if breaker is not None and breaker.is_open:
            return _error_response("CircuitOpen", breaker.why(), codes, started)
        if deadline is not None and time.monotonic() >= deadline:
            what = f"the call's deadline passed after {len(codes)} attempt(s)"
            return _error_response("DeadlineExceeded", what, codes, started)
        return None

    for attempt in range(policy.max_attempts):
        early = stopped()
        if early is not None:
            return early
        try:
            response = attempt_fn(attempt)
        except Exception as exc:
            kind = classify_exception(exc)
            if kind is None:
                raise
            codes.append(kind.code)
            if isinstance(kind, FinalError):
                if breaker is not None:
                    breaker.success()  # the server answered, if only to refuse
                return _error_response(kind.code, str(kind), codes, started)
            if breaker is not None:
                breaker.failure(kind.code)
            if on_retry is not None:
                on_retry(attempt, kind)
            if attempt + 1 < policy.max_attempts:
                if kind.retry_after is not None:
                    pause = policy.retry_after_delay(kind.retry_after, rng)
                    waited_after += pause
                else:
                    pause = policy.delay(attempt, rng)
                if deadline is not None:
                    pause = max(0.0, min(pause, deadline - time.monotonic()))
                sleep(pause)
            continue
        if breaker is not None:
            breaker.success()
        response.meta.setdefault("attempts", attempt + 1)
        response.meta.setdefault("retried_codes", codes)
        if waited_after:
            response.meta.setdefault("retry_after_s", round(waited_after, 3))
        return response
    last = codes[-1] if codes else "RetryBudgetExhausted"
    response = _error_response(last, f"{last} after {policy.max_attempts} attempts", codes, started)
    if waited_after:
        response.meta["retry_after_s"] = round(waited_after, 3)
    return response


def _error_response(code: str, message: str, codes: list[str], started: float) -> ModelResponse:
    return ModelResponse(
        text="",
        status="error",
        error=message if message.startswith(code) else f"{code}: {message}",
        latency_s=time.perf_counter() - started,
        meta={"error_code": code, "attempts": len(codes), "retried_codes": codes},
    )


class RegionPool:
    """Round-robin over regions, skipping those still cooling down after a throttle (thread-safe)."""

    def __init__(self, regions: list[str], clock: Callable[[], float] = time.monotonic) -> None:
        self.regions = list(regions)
        self._cool_until = dict.fromkeys(self.regions, 0.0)
        self._next = 0
        self._clock = clock
        self._lock = threading.Lock()

    def pick(self) -> str:
        with self._lock:
            now = self._clock()
            n = len(self.regions)
            for step in range(n):
                region = self.regions[(self._next + step) % n]
                if self._cool_until[region] <= now:
                    self._next = (self._next + step + 1) % n
                    return region
            # all cooling: the one whose throttle lies furthest back (least recently throttled)
            return min(self.regions, key=lambda r: self._cool_until[r])

    def throttled(self, region: str, cool_s: float) -> None:
        with self._lock:
            self._cool_until[region] = max(self._cool_until[region], self._clock() + cool_s)


# botocore's own retries when ``botocore_retries`` is null
DEFAULT_BOTOCORE_RETRIES: Mapping[str, Any] = {"mode": "adaptive", "max_attempts": 2}


def _botocore_retries(cfg: BedrockModel) -> dict[str, Any]:
    retries = dict(cfg.botocore_retries or DEFAULT_BOTOCORE_RETRIES)
    if retries.get("mode") not in ("legacy", "standard", "adaptive"):
        raise ConfigError("botocore_retries.mode", "must be legacy, standard or adaptive")
    return retries


def default_client_factory(cfg: BedrockModel) -> Callable[[str], Any]:
    """``region -> boto3 bedrock-runtime client`` with botocore's own retries and timeouts from the
    model config."""
    import boto3
    from botocore.config import Config

    # botocore retries (and, in adaptive mode, rate-limits) first; our loop then moves to another region
    retries = _botocore_retries(cfg)
    # seconds as floats (an int() would make 0.5 s a non-blocking 0); neither socket wait may outlast the
    # call's deadline, which bounds the attempts and backoffs around them
    config = Config(
        retries=retries,
        read_timeout=min(float(cfg.read_timeout_s), float(cfg.call_deadline_s)),
        connect_timeout=min(float(cfg.connect_timeout_s), float(cfg.call_deadline_s)),
        max_pool_connections=max(10, cfg.calls_in_flight * 2),
    )
    session = boto3.session.Session(profile_name=cfg.aws_profile)
    return lambda region: session.client("bedrock-runtime", region_name=region, config=config)


class BedrockBackend:
    """A Bedrock model behind the ``Backend`` protocol. ``name`` includes the model id (cache key)."""

    @classmethod
    def declared_abilities(cls, cfg: BedrockModel) -> Abilities:
        """What a Converse model of this config can do, known without building the backend."""
        reasons = cfg.thinking is not None or cfg.reasons_by_default
        return Abilities(generate=True, reasons=reasons, batch=True, catalogue=True)

    def __init__(
        self,
        model_cfg: BedrockModel,
        *,
        client_factory: Callable[[str], Any] | None = None,
        sleep: Callable[[float], None] | None = None,
        seed: int = default(ModelSchema, "seed"),
    ) -> None:
        self.cfg = model_cfg
        if not self.cfg.model_id:
            raise ConfigError("model_id", f"missing in model config '{self.cfg.name or '?'}'")
        self.model_id: str = self.cfg.model_id
        regions = self.cfg.regions or ([self.cfg.region] if self.cfg.region else None)
        if not regions or not all(regions):
            raise ConfigError("regions", f"model '{self.cfg.name or None}' needs a non-empty list of regions")
        self.name = f"bedrock:{self.model_id}"
        self.concurrency = self.cfg.calls_in_flight
        self.accepts_temperature = self.cfg.accepts_temperature
        self.accepts_system = self.cfg.accepts_system
        self.thinking: Thinking | None = self.cfg.thinking
        self.abilities = self.declared_abilities(self.cfg)
        # every region serves the same model id (an inference profile or a per-region id, both in
        # ``modelId``), so the region never changes the answer and stays out of the cache key
        self.endpoint: str | None = None
        self.policy = RetryPolicy.from_cfg(self.cfg.retry)
        self.call_deadline_s = float(self.cfg.call_deadline_s)
        # one breaker over every region: a model that throttles or fails everywhere for the window is down
        self.breaker = CircuitBreaker(self.cfg.breaker_window_s)
        self.pool = RegionPool(list(regions))
        # made on the first call, so building the backend (and its wire requests: ``blindmcq preview``)
        # needs no AWS session, profile or credentials; the retry mode is still checked now
        _botocore_retries(self.cfg)
        self._factory = client_factory
        self._clients: dict[str, Any] = {}
        self._clients_lock = threading.Lock()
        self._sleep = sleep or self.breaker.sleep  # a backoff ends early once the breaker opens
        self._rng = random.Random(seed)  # jitter only; never affects what is asked

    def client(self, region: str) -> Any:
        with self._clients_lock:
            if region not in self._clients:
                if self._factory is None:
                    self._factory = default_client_factory(self.cfg)
                self._clients[region] = self._factory(region)
            return self._clients[region]

    def wire_request(self, request: ModelRequest) -> dict[str, Any]:
        """The exact Converse keyword arguments for ``request``, after every model-config switch: what
        ``complete`` sends, what batch inference uploads (less ``modelId``) and what the cache key hashes.
        Needs no client and no credentials."""
        user = request.user
        wire: dict[str, Any] = {"modelId": self.model_id}
        if request.system:
            if self.accepts_system:
                wire["system"] = [{"text": request.system}]
            else:
                user = f"{request.system}\n\n{user}"
        wire["messages"] = [{"role": "user", "content": [{"text": user}]}]
        inference: dict[str, Any] = {"maxTokens": int(request.max_tokens)}
        send_temperature = self.accepts_temperature and request.temperature is not None
        if request.reasoning == "thinking":
            if self.thinking is None:
                raise ConfigError(
                    "thinking", f"model '{self.cfg.name or None}' has no provider-side thinking"
                )
            # the run's budget (request.extra, from conf/reasoning) wins over the model config's
            budget = int(request.extra.get("thinking_budget_tokens") or self.thinking.budget_tokens)
            fields = _with_budget(self.thinking.fields, budget)
            if fields:
                wire["additionalModelRequestFields"] = fields
            # the reasoning budget comes on top of the answer's own tokens
            inference["maxTokens"] += budget
            send_temperature = send_temperature and self.thinking.temperature
        if send_temperature:
            inference["temperature"] = float(request.temperature)  # type: ignore[arg-type]
        wire["inferenceConfig"] = inference
        extra_fields = self.cfg.additional_fields
        if extra_fields:
            wire["additionalModelRequestFields"] = {
                **extra_fields,
                **wire.get("additionalModelRequestFields", {}),
            }
        return wire

    def converse_params(self, request: ModelRequest) -> tuple[dict[str, Any], bool]:
        """``wire_request`` and whether it sends a temperature (for batch inference's other body)."""
        wire = self.wire_request(request)
        return wire, "temperature" in wire["inferenceConfig"]

    def complete(self, request: ModelRequest) -> ModelResponse:
        wire, temperature_sent = self.converse_params(request)
        regions_tried: list[str] = []

        def attempt(_: int) -> ModelResponse:
            region = self.pool.pick()
            regions_tried.append(region)
            started = time.perf_counter()
            raw = self.client(region).converse(**wire)
            response = parse_converse_response(raw)
            response.latency_s = time.perf_counter() - started
            response.region = region
            return response

        def on_retry(attempt_no: int, err: RetryableError) -> None:
            if err.throttle and regions_tried:
                self.pool.throttled(regions_tried[-1], self.policy.delay(attempt_no + 1, self._rng))

        response = call_with_retries(
            attempt,
            self.policy,
            sleep=self._sleep,
            rng=self._rng,
            on_retry=on_retry,
            deadline=time.monotonic() + self.call_deadline_s,
            breaker=self.breaker,
        )
        if response.region is None and regions_tried:
            response.region = regions_tried[-1]
        response.meta["temperature_sent"] = temperature_sent
        response.meta["regions_tried"] = regions_tried
        response.meta["model_id"] = self.model_id
        cost = self.estimated_cost(response)
        if cost is not None:
            response.meta["cost_usd_estimate"] = cost
        return response

    def estimated_cost(self, response: ModelResponse) -> float | None:
        pin, pout = self.cfg.price_per_1k_input, self.cfg.price_per_1k_output
        if pin is None or pout is None or response.input_tokens is None or response.output_tokens is None:
            return None
        return (response.input_tokens * float(pin) + response.output_tokens * float(pout)) / 1000.0


def _with_budget(fields: Any, budget: int) -> Any:
    """``fields`` with every ``budget_tokens`` value set to ``budget`` (Anthropic's thinking shape)."""
    if isinstance(fields, Mapping):
        return {k: budget if k == "budget_tokens" else _with_budget(v, budget) for k, v in fields.items()}
    return fields


def parse_converse_response(raw: Mapping[str, Any]) -> ModelResponse:
    """Text from the message's text blocks; reasoning blocks kept in meta; refusals flagged."""
    blocks = raw.get("output", {}).get("message", {}).get("content", []) or []
    text = "".join(b["text"] for b in blocks if "text" in b)
    reasoning = [
        b["reasoningContent"].get("reasoningText", {}).get("text", "")
        for b in blocks
        if "reasoningContent" in b
    ]
    stop = raw.get("stopReason")
    usage = raw.get("usage", {}) or {}
    meta: dict[str, Any] = {"stop_reason": stop}
    if reasoning:
        meta["reasoning_text"] = "".join(reasoning)
    if "metrics" in raw:
        meta["server_latency_ms"] = raw["metrics"].get("latencyMs")
    return ModelResponse(
        text=text,
        status="refused" if stop in REFUSAL_STOP_REASONS else "ok",
        input_tokens=coerce_tokens(usage.get("inputTokens")),
        output_tokens=coerce_tokens(usage.get("outputTokens")),
        meta=meta,
    )
