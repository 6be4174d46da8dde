"""OpenAI-style HTTP APIs through the ``openai`` client: one backend, two wire formats.

``api: chat``       chat completions (``POST {base_url}/chat/completions``): any OpenAI-compatible server
                    (vLLM, llama.cpp's server, Ollama, TGI). Where the server returns top log-probabilities
                    (``logprobs: true``), label scoring works as for the local model: ``choice_logprobs``
                    come from the top log-probabilities of the first generated token.
``api: responses``  the Responses API (``POST {base_url}/responses``), e.g. OpenAI's GPT-5.x models on
                    Amazon Bedrock's ``bedrock-mantle`` endpoint (``https://bedrock-mantle.<region>.api.aws/v1``;
                    Bedrock user guide, "Inference using Responses API",
                    https://docs.aws.amazon.com/bedrock/latest/userguide/bedrock-mantle.html).

Same rules as the Converse backend: one retry policy (``RetryPolicy``/``call_with_retries`` from
``backends.bedrock``; the openai client's own retries are off), 429/5xx/timeouts/connection errors retried
with jittered backoff, any other HTTP error final and recorded with the provider's message (a 400 that
names a parameter is never retried as throttling), a malformed body an ``error``. The cache key hashes
``wire_request`` (the exact JSON body) and ``endpoint`` (the base URL).

Bounds on one call (docs/backends.md, "Bounds on a response"): the body is decoded here, never past
``max_response_bytes`` (a gzip bomb stops at the cap); ``call_deadline_s`` bounds the call's whole wall
time, every socket read and write included; a ``CircuitBreaker`` ends every call's retries once all
attempts for ``breaker_window_s`` have failed.

Authentication (``auth``): ``api_key`` reads the key from the environment variable ``api_key_env``;
``bedrock`` uses ``AWS_BEARER_TOKEN_BEDROCK`` (a Bedrock API key) when set, else SigV4 from botocore's
usual credential chain (service ``bedrock-mantle``); ``none`` sends a placeholder (local servers).
Keys are never logged, recorded or put in the cache.
"""

from __future__ import annotations

import json
import math
import os
import random
import threading
import time
import zlib
from collections.abc import Callable, Generator, Iterator, Mapping
from typing import Any

import httpcore
import httpx

from blindmcq.backends.base import Abilities, ModelRequest, ModelResponse, coerce_tokens
from blindmcq.backends.bedrock import (
    CircuitBreaker,
    FinalError,
    RetryableError,
    RetryPolicy,
    call_with_retries,
    parse_retry_after,
)
from blindmcq.config.schema import BedrockModel, ModelSchema, OpenAIModel, choices, default
from blindmcq.errors import ConfigError
from blindmcq.secrets import register_secret

APIS = choices(OpenAIModel, "api")
AUTHS = ("none", "api_key", "bedrock")
MANTLE_URL = "https://bedrock-mantle.{region}.api.aws/v1"
MANTLE_SIGNING_NAME = "bedrock-mantle"  # IAM/SigV4 service prefix of the mantle endpoint
BEDROCK_KEY_ENV = "AWS_BEARER_TOKEN_BEDROCK"
# Parameters a provider may refuse by name; a 400 naming one is recorded as meta["rejected_parameter"].
REJECTABLE = ("reasoning.effort", "reasoning_effort", "temperature", "top_logprobs", "logprobs")


# the model configs this backend reads: its own, and a Bedrock one on the Responses API
OpenAIConfig = OpenAIModel | BedrockModel


def mantle_base_url(region: str) -> str:
    """The Bedrock ``bedrock-mantle`` OpenAI-compatible base URL of ``region``."""
    return MANTLE_URL.format(region=region)


class SigV4HttpxAuth(httpx.Auth):
    """httpx auth that signs each request with botocore's SigV4 (credentials resolved per request, so
    refreshable credentials refresh). Only host, content type and the body are signed: the openai client's
    own headers stay out of the signature."""

    requires_request_body = True

    def __init__(self, region: str, service: str = MANTLE_SIGNING_NAME, session: Any = None) -> None:
        import botocore.session

        self.region, self.service = region, service
        self._session = session or botocore.session.get_session()

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        from botocore.auth import SigV4Auth
        from botocore.awsrequest import AWSRequest

        credentials = self._session.get_credentials()
        if credentials is None:
            raise FinalError("NoCredentials", "no AWS credentials for SigV4 (or set a Bedrock API key)")
        headers = {"Content-Type": request.headers.get("content-type", "application/json")}
        aws = AWSRequest(method=request.method, url=str(request.url), data=request.content, headers=headers)
        SigV4Auth(credentials.get_frozen_credentials(), self.service, self.region).add_auth(aws)
        for name in ("Authorization", "X-Amz-Date", "X-Amz-Security-Token"):
            if name in aws.headers:
                request.headers[name] = aws.headers[name]
        yield request


# -- bounds on one call: a decoded-size cap and a deadline over its whole wall time ---------------------

ACCEPT_ENCODING = "gzip, deflate"  # the encodings the bounded reader decodes (piece by piece)
_CALL = threading.local()  # the deadline (time.monotonic()) of the call this thread is making


class DeadlineExceeded(Exception):
    """The call's deadline passed while it was connecting, sending or reading."""


class ResponseTooLarge(Exception):
    """The response body, decoded, is larger than ``max_response_bytes``."""


class BadEncoding(Exception):
    """The body's ``Content-Encoding`` is not one asked for, or its bytes do not decode."""


def _within_deadline(timeout: float | None) -> float | None:
    """A socket operation's timeout, cut to what is left of the call's deadline (none left: raise)."""
    deadline = getattr(_CALL, "deadline", None)
    if deadline is None:
        return timeout
    left = deadline - time.monotonic()
    if left <= 0:
        raise httpcore.ReadTimeout("the call's deadline has passed")
    return left if timeout is None else min(timeout, left)


class _DeadlineStream(httpcore.NetworkStream):
    """A connection whose every read and write waits at most until the call's deadline, so a server
    trickling one byte at a time (in the headers or the body) cannot outlast it."""

    def __init__(self, inner: httpcore.NetworkStream) -> None:
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, _within_deadline(timeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, _within_deadline(timeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(
        self, ssl_context: Any, server_hostname: str | None = None, timeout: float | None = None
    ) -> httpcore.NetworkStream:
        return _DeadlineStream(self._inner.start_tls(ssl_context, server_hostname, _within_deadline(timeout)))

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _DeadlineBackend(httpcore.NetworkBackend):
    def __init__(self, inner: httpcore.NetworkBackend) -> None:
        self._inner = inner

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Any = None,
    ) -> httpcore.NetworkStream:
        stream = self._inner.connect_tcp(host, port, _within_deadline(timeout), local_address, socket_options)
        return _DeadlineStream(stream)

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Any = None
    ) -> httpcore.NetworkStream:
        return _DeadlineStream(
            self._inner.connect_unix_socket(path, _within_deadline(timeout), socket_options)
        )

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


def _decoder(encoding: str) -> Any:
    """A zlib decompressor for a ``Content-Encoding`` (None for identity)."""
    if encoding in ("", "identity"):
        return None
    if encoding in ("gzip", "x-gzip"):
        return zlib.decompressobj(16 + zlib.MAX_WBITS)
    if encoding == "deflate":
        return zlib.decompressobj(zlib.MAX_WBITS)
    raise BadEncoding(f"Content-Encoding {encoding!r} was not asked for (Accept-Encoding: {ACCEPT_ENCODING})")


class _BoundedBody(httpx.SyncByteStream):
    """A response body decoded here, a piece at a time, never more than ``limit`` bytes out: a
    compressed body that would decode to gigabytes stops at the limit without being decoded further."""

    def __init__(self, raw: httpx.SyncByteStream, encoding: str, limit: int) -> None:
        self._raw, self._encoding, self._limit = raw, encoding.strip().lower(), limit

    def __iter__(self) -> Iterator[bytes]:
        decoder = _decoder(self._encoding)
        produced = 0
        for chunk in self._raw:
            data = chunk
            while data:
                if decoder is None:
                    out, rest = data, b""
                else:
                    try:  # at most one byte past the limit is ever decoded
                        out = decoder.decompress(data, self._limit - produced + 1)
                    except zlib.error as exc:
                        raise BadEncoding(f"the {self._encoding} body does not decode ({exc})") from exc
                    rest = decoder.unconsumed_tail
                    if decoder.eof and decoder.unused_data:  # a further gzip member follows
                        rest, decoder = decoder.unused_data, _decoder(self._encoding)
                    if not out and rest == data:
                        raise BadEncoding(f"the {self._encoding} body does not decode (no progress)")
                produced += len(out)
                if produced > self._limit:
                    raise ResponseTooLarge(f"the response body exceeds max_response_bytes ({self._limit:,})")
                if out:
                    yield out
                data = rest

    def close(self) -> None:
        self._raw.close()


class BoundedTransport(httpx.HTTPTransport):
    """httpx's transport with two bounds on every response: the body decoded by ``_BoundedBody`` (at most
    ``max_bytes``), and every socket operation cut to the calling thread's deadline."""

    def __init__(self, max_bytes: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.max_bytes = int(max_bytes)
        pool = getattr(self, "_pool", None)
        if pool is None or not hasattr(pool, "_network_backend"):  # httpx/httpcore changed under us
            raise RuntimeError("httpx's connection pool has no network backend to bound")
        pool._network_backend = _DeadlineBackend(pool._network_backend)

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = super().handle_request(request)
        encoding = response.headers.get("content-encoding", "")
        skip = (b"content-encoding", b"content-length")  # the body handed on is decoded, its length unknown
        headers = [(k, v) for k, v in response.headers.raw if k.lower() not in skip]
        assert isinstance(response.stream, httpx.SyncByteStream)
        body = _BoundedBody(response.stream, encoding, self.max_bytes)
        return httpx.Response(
            response.status_code, headers=headers, stream=body, extensions=response.extensions
        )


def _bound_broken(exc: BaseException) -> BaseException | None:
    """The bound (``ResponseTooLarge``, ``BadEncoding``) behind an exception the client wrapped, if any."""
    seen: BaseException | None = exc
    for _ in range(8):
        if seen is None:
            return None
        if isinstance(seen, ResponseTooLarge | BadEncoding):
            return seen
        seen = seen.__cause__ or seen.__context__
    return None


def _deadline_passed() -> bool:
    deadline = getattr(_CALL, "deadline", None)
    return deadline is not None and time.monotonic() >= deadline


class OpenAIBackend:
    """A model behind an OpenAI-style API. ``name`` carries the API and model (cache key)."""

    @classmethod
    def declared_abilities(cls, cfg: OpenAIConfig) -> Abilities:
        """What a model of this config can do, known without building the backend. A Bedrock model on
        the Responses API (``backend: bedrock``) stays in the Bedrock catalogue and its batch route."""
        on_bedrock = cfg.backend == "bedrock"
        return Abilities(
            generate=True, score_labels=cfg.logprobs, reasons=cfg.reasons_by_default,
            logprobs=cfg.logprobs, batch=on_bedrock, catalogue=on_bedrock,
        )  # fmt: skip

    def __init__(
        self,
        model_cfg: OpenAIConfig,
        *,
        http_client: Any = None,
        sleep: Callable[[float], None] | None = None,
        seed: int = default(ModelSchema, "seed"),
    ) -> None:
        self.cfg = model_cfg
        self.api: str = self.cfg.api
        if self.api not in APIS:  # a Bedrock config's converse goes to the Converse backend instead
            raise ConfigError("api", f"expected one of {', '.join(APIS)}, got {self.api!r}")
        model_id = self.cfg.responses_model_id if self.api == "responses" else None
        self.model_id = model_id or self.cfg.model_id
        if not self.model_id:
            raise ConfigError("model_id", f"missing in model config '{self.cfg.name or '?'}'")
        self.region = self._region()
        self.base_url = self._base_url()
        self.endpoint = self.base_url  # part of the cache key
        default_auth = "bedrock" if self.cfg.backend == "bedrock" else "none"
        self.auth = self.cfg.auth or default_auth
        if self.auth not in AUTHS:
            raise ConfigError("auth", f"expected one of {', '.join(AUTHS)}, got {self.auth!r}")
        self.name = f"openai-{self.api}:{self.model_id}"
        self.concurrency = self.cfg.calls_in_flight
        self.logprobs = self.cfg.logprobs
        self.top_logprobs = self.cfg.top_logprobs
        self.accepts_temperature = self.cfg.accepts_temperature
        self.accepts_system = self.cfg.accepts_system
        self.reasons_by_default = self.cfg.reasons_by_default
        self.reasoning_effort: str | None = self.cfg.reasoning_effort
        self.timeout_s = float(self.cfg.read_timeout_s)
        self.max_response_bytes = self.cfg.max_response_bytes
        self.call_deadline_s = float(self.cfg.call_deadline_s)
        self.policy = RetryPolicy.from_cfg(self.cfg.retry)
        self.breaker = CircuitBreaker(self.cfg.breaker_window_s)  # shared by this backend's threads
        if self.api == "responses" and self.logprobs:
            raise ConfigError("logprobs", "label scoring needs api: chat (top_logprobs of the first token)")
        self.abilities = self.declared_abilities(self.cfg)
        self._http_client = http_client
        self._client: Any = None
        self._client_lock = threading.Lock()
        self._sleep = sleep or self.breaker.sleep  # a backoff ends early once the breaker opens
        self._rng = random.Random(seed)  # jitter only

    def _region(self) -> str | None:
        regions = self.cfg.regions or ([self.cfg.region] if self.cfg.region else [])
        if regions and not all(regions):
            raise ConfigError("regions", "expected a list of region names")
        return regions[0] if regions else None

    def _base_url(self) -> str:
        url = self.cfg.base_url
        if url:
            if not url.startswith(("http://", "https://")):
                raise ConfigError("base_url", f"expected an http(s) URL, got {url!r}")
            return url.rstrip("/")
        if self.cfg.backend == "bedrock" and self.region:
            return mantle_base_url(self.region)
        raise ConfigError("base_url", f"model '{self.cfg.name or '?'}' needs a base_url (or a region)")

    # -- the client -------------------------------------------------------------------------------------
    def _api_key_and_auth(self) -> tuple[str, Any]:
        if self.auth == "api_key":
            env = self.cfg.api_key_env
            if not env:
                raise ConfigError("api_key_env", "auth: api_key needs the variable that holds the key")
            key = os.environ.get(env)
            if not key:
                raise ConfigError("api_key_env", f"environment variable {env} is not set")
            register_secret(key)  # whatever the variable's name, its value is scrubbed wherever it lands
            return key, None
        if self.auth == "bedrock":
            key = os.environ.get(BEDROCK_KEY_ENV)
            if key:
                return key, None
            if not self.region:
                raise ConfigError("regions", "SigV4 signing needs the endpoint's region")
            return "sigv4", SigV4HttpxAuth(self.region)
        env = self.cfg.api_key_env
        key = (os.environ.get(env) if env else None) or "none"
        if key != "none":
            register_secret(key)
        return key, None

    def client(self) -> Any:
        with self._client_lock:  # one client (and connection pool) shared by the runner's threads
            if self._client is None:
                self._client = self._make_client()
            return self._client

    def _make_client(self) -> Any:
        from openai import OpenAI

        key, auth = self._api_key_and_auth()
        http = self._http_client
        if http is None:
            limits = httpx.Limits(max_connections=max(10, self.concurrency * 2))
            transport = BoundedTransport(self.max_response_bytes, limits=limits)
            http = httpx.Client(
                auth=auth, transport=transport, timeout=self.timeout_s,
                headers={"Accept-Encoding": ACCEPT_ENCODING},
            )  # fmt: skip
        elif auth is not None:
            http.auth = auth
        # max_retries=0: one retry policy, ours (call_with_retries)
        return OpenAI(
            api_key=key, base_url=self.base_url, max_retries=0, timeout=self.timeout_s, http_client=http
        )

    # -- the request --------------------------------------------------------------------------------------
    def scoring(self, request: ModelRequest) -> bool:
        return bool(request.choices) and self.logprobs

    def wire_request(self, request: ModelRequest) -> dict[str, Any]:
        """The exact JSON body sent for ``request`` (after every config switch)."""
        if request.reasoning == "thinking":
            raise ConfigError("reasoning", f"model '{self.cfg.name or None}' has no thinking budget")
        system, user = request.system, request.user
        if system and not self.accepts_system:
            system, user = None, f"{system}\n\n{user}"
        max_tokens = int(request.max_tokens)
        if self.reasons_by_default:
            # hidden reasoning counts against the output ceiling: never give a reasoning model less than
            # its config's room (conf/model max_tokens)
            max_tokens = max(max_tokens, self.cfg.max_tokens or 0)
        send_temperature = self.accepts_temperature and request.temperature is not None
        body: dict[str, Any] = {"model": self.model_id}
        if self.api == "chat":
            messages = [{"role": "system", "content": system}] if system else []
            messages.append({"role": "user", "content": user})
            body["messages"] = messages
            if self.scoring(request):
                # one token is enough: the labels are ranked by the first token's top log-probabilities
                body["max_tokens"] = 1
                body["logprobs"] = True
                body["top_logprobs"] = self.top_logprobs
            else:
                body["max_tokens"] = max_tokens
            if send_temperature:
                body["temperature"] = float(request.temperature)  # type: ignore[arg-type]
            if self.reasoning_effort:
                body["reasoning_effort"] = self.reasoning_effort
        else:
            if system:
                body["instructions"] = system
            body["input"] = user
            body["max_output_tokens"] = max_tokens
            if send_temperature:
                body["temperature"] = float(request.temperature)  # type: ignore[arg-type]
            if self.reasoning_effort:
                body["reasoning"] = {"effort": self.reasoning_effort}
            body["store"] = False  # no server-side conversation state
        extra = self.cfg.extra_body
        if extra:
            body.update({k: v for k, v in extra.items() if k not in body})
        return body

    def _send(self, body: Mapping[str, Any]) -> dict[str, Any]:
        """POST the body; map every failure to RetryableError/FinalError; return the parsed JSON."""
        import openai

        client = self.client()
        path = "/chat/completions" if self.api == "chat" else "/responses"
        try:
            raw = client.post(path, body=dict(body), cast_to=httpx.Response)
        except openai.APITimeoutError as exc:
            if _deadline_passed():
                raise RetryableError(
                    "DeadlineExceeded", f"no whole answer within {self.call_deadline_s:g} s"
                ) from exc
            raise RetryableError("Timeout", type(exc).__name__) from exc
        except openai.APIConnectionError as exc:
            bound = _bound_broken(exc)
            if isinstance(bound, ResponseTooLarge):
                raise FinalError("ResponseTooLarge", str(bound)) from exc
            if bound is not None:
                raise FinalError("MalformedResponse", str(bound)) from exc
            raise RetryableError("ConnectionError", type(exc).__name__) from exc
        except openai.APIStatusError as exc:
            error = _status_error(exc.status_code, exc.response.text)
            if isinstance(error, RetryableError):
                error.retry_after = parse_retry_after(exc.response.headers)
            raise error from exc
        text = raw.text
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise FinalError("MalformedResponse", f"not JSON: {text[:200]!r}") from exc
        if not isinstance(data, dict):
            raise FinalError("MalformedResponse", f"expected a JSON object, got {type(data).__name__}")
        return data

    def complete(self, request: ModelRequest) -> ModelResponse:
        body = self.wire_request(request)

        def attempt(_: int) -> ModelResponse:
            started = time.perf_counter()
            data = self._send(body)
            try:
                response = (
                    parse_chat(data, request.choices if self.scoring(request) else ())
                    if self.api == "chat"
                    else parse_responses(data)
                )
            except (KeyError, TypeError, IndexError, AttributeError) as exc:
                raise FinalError("MalformedResponse", f"{type(exc).__name__}: {exc}") from exc
            response.latency_s = time.perf_counter() - started
            return response

        deadline = time.monotonic() + self.call_deadline_s
        _CALL.deadline = deadline  # read by every socket operation of this thread (_DeadlineStream)
        try:
            response = call_with_retries(
                attempt,
                self.policy,
                sleep=self._sleep,
                rng=self._rng,
                deadline=deadline,
                breaker=self.breaker,
            )
        finally:
            _CALL.deadline = None
        response.region = self.region
        meta = response.meta
        meta["api"] = self.api
        meta["model_id"] = self.model_id
        meta["temperature_sent"] = "temperature" in body
        meta["reasoning_effort_sent"] = self.reasoning_effort if self.reasoning_effort else None
        if response.status == "error":
            _record_rejection(response)
        return response


def _status_error(status: int, text: str) -> RetryableError | FinalError:
    message = _provider_message(text)
    if status == 429:
        return RetryableError("TooManyRequests", message, throttle=True)
    if status >= 500 or status == 408:
        return RetryableError(f"HTTP{status}", message)
    return FinalError(f"HTTP{status}", message)


def _provider_message(text: str) -> str:
    """The provider's error message (OpenAI shape ``{"error": {"message", "param"}}``), else the body."""
    try:
        data = json.loads(text)
    except ValueError:
        return text[:500]
    err = data.get("error", data) if isinstance(data, dict) else data
    if isinstance(err, dict):
        message = str(err.get("message") or err.get("Message") or json.dumps(err)[:500])
        param = err.get("param")
        return f"{message} [param={param}]" if param else message
    return str(err)[:500]


def _record_rejection(response: ModelResponse) -> None:
    """A 400 that names a parameter: record which one, with the provider's message, for the paper's
    'rejects temperature / reasoning_effort' column."""
    code = response.meta.get("error_code", "")
    if code != "HTTP400" or not response.error:
        return
    response.meta["provider_message"] = response.error
    lowered = response.error.lower()
    for name in REJECTABLE:
        if name in lowered:
            response.meta["rejected_parameter"] = "reasoning.effort" if "reasoning" in name else name
            return


def _label_logprobs(top: list[Mapping[str, Any]], choices: tuple[str, ...]) -> tuple[list[float], list[str]]:
    """Per label, log P(first token is the label), summing whitespace variants (" A" and "A"). A label
    absent from the top list gets -inf: its true value lies below the list's minimum, so the argmax over
    labels stays exact whenever one label is listed; when none is, every score is -inf (a tie)."""
    scores: list[float] = []
    missing: list[str] = []
    for label in choices:
        values = [float(t["logprob"]) for t in top if str(t["token"]).strip() == label.strip()]
        if values:
            peak = max(values)
            scores.append(peak + math.log(sum(math.exp(v - peak) for v in values)))
        else:
            scores.append(float("-inf"))
            missing.append(label)
    return scores, missing


def parse_chat(data: Mapping[str, Any], choices: tuple[str, ...] = ()) -> ModelResponse:
    """A chat-completions body -> ModelResponse; with ``choices``, the label scores from top logprobs."""
    choice = data["choices"][0]
    message = choice.get("message") or {}
    text = message.get("content") or ""
    if not isinstance(text, str):
        raise FinalError(
            "MalformedResponse", f"message.content: expected a string, got {type(text).__name__}"
        )
    finish = choice.get("finish_reason")
    usage = data.get("usage") or {}
    meta: dict[str, Any] = {"stop_reason": "max_tokens" if finish == "length" else finish}
    details = usage.get("completion_tokens_details") or {}
    if coerce_tokens(details.get("reasoning_tokens")) is not None:
        meta["reasoning_tokens"] = coerce_tokens(details["reasoning_tokens"])
    reasoning = message.get("reasoning_content") or message.get("reasoning")
    if isinstance(reasoning, str) and reasoning:
        meta["reasoning_text"] = reasoning
    refused = bool(message.get("refusal")) or finish == "content_filter"
    response = ModelResponse(
        text=text,
        status="refused" if refused else "ok",
        input_tokens=coerce_tokens(usage.get("prompt_tokens")),
        output_tokens=coerce_tokens(usage.get("completion_tokens")),
        meta=meta,
    )
    if choices:
        content = ((choice.get("logprobs") or {}).get("content")) or []
        if not content or not content[0].get("top_logprobs"):
            raise FinalError("NoLogprobs", "the server returned no top_logprobs (set logprobs: false)")
        scores, missing = _label_logprobs(content[0]["top_logprobs"], choices)
        response.choice_logprobs = scores
        meta["mode"] = "score"
        meta["labels_outside_top"] = missing
    return response


def parse_responses(data: Mapping[str, Any]) -> ModelResponse:
    """A Responses-API body -> ModelResponse: output text, refusals, reasoning tokens, incomplete status."""
    texts: list[str] = []
    summaries: list[str] = []
    refused = False
    for item in data.get("output") or []:
        kind = item.get("type")
        if kind == "message":
            for part in item.get("content") or []:
                if part.get("type") == "output_text":
                    text = part.get("text", "")
                    if not isinstance(text, str):
                        raise FinalError(
                            "MalformedResponse", f"output_text: expected a string, got {type(text).__name__}"
                        )
                    texts.append(text)
                elif part.get("type") == "refusal":
                    refused = True
        elif kind == "reasoning":
            summaries.extend(s.get("text", "") for s in item.get("summary") or [])
    status = data.get("status")
    if status not in ("completed", "incomplete"):
        if status == "failed":
            err = data.get("error") or {}
            raise FinalError(str(err.get("code") or "ResponseFailed"), str(err.get("message") or ""))
        raise FinalError("MalformedResponse", f"unexpected response status {status!r}")
    meta: dict[str, Any] = {"response_status": status}
    if status == "incomplete":
        reason = (data.get("incomplete_details") or {}).get("reason")
        meta["incomplete_reason"] = reason
        meta["stop_reason"] = "max_tokens" if reason == "max_output_tokens" else reason
    else:
        meta["stop_reason"] = "end_turn"
    usage = data.get("usage") or {}
    reasoning_tokens = coerce_tokens((usage.get("output_tokens_details") or {}).get("reasoning_tokens"))
    if reasoning_tokens is not None:
        meta["reasoning_tokens"] = reasoning_tokens
    if summaries:
        meta["reasoning_text"] = "".join(summaries)
    return ModelResponse(
        text="".join(texts),
        status="refused" if refused or (meta["stop_reason"] == "content_filter") else "ok",
        input_tokens=coerce_tokens(usage.get("input_tokens")),
        output_tokens=coerce_tokens(usage.get("output_tokens")),
        meta=meta,
    )
