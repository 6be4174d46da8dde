"""The engine: send requests to a backend through the response cache and return every full response.

It knows nothing of tasks: a request goes in, a ``Result`` (the response with its text, log-probabilities,
stop reason and usage, the cache key, the time and whether it was served from the cache) comes out, in
request order. What a response means (a picked option, a rewritten distractor) is the task's business.

Resumable by construction: each response is committed to the cache the moment it arrives, so a run
killed at any point and started again makes exactly the calls that are missing (plus the few that were
in flight). Identical requests within a run are sent once. Retries are the backend's job (Bedrock and
the fault fake retry throttling with backoff); whatever still fails, or raises, comes back as an error
response and, not being cached, is retried by the next run.
"""

from __future__ import annotations

import logging
import queue
import threading
import time as _time
import uuid
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from blindmcq.backends.base import (
    Backend,
    ModelRequest,
    ModelResponse,
    conform_usage,
    request_key,
    response_problem,
)
from blindmcq.backends.bedrock import RETRYABLE_CODES as CONVERSE_OUTAGE_CODES
from blindmcq.config.schema import ModelSchema, default
from blindmcq.engine.cache import CacheUnwritable, ResponseCache, make_holder, utc_now
from blindmcq.errors import ConfigError, InputError
from blindmcq.secrets import scrub_response

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Result:
    """One request's answer. ``cached``: served from the cache, or by an identical request earlier in
    the same run; ``time``: when the answer was stored (UTC ISO); ``key``: ``request_key``."""

    request: ModelRequest
    response: ModelResponse
    key: str
    time: str
    cached: bool
    backend: str

    @property
    def stop_reason(self) -> str | None:
        meta = self.response.meta
        stop = meta.get("stop_reason") if isinstance(meta, Mapping) else None
        return None if stop is None else str(stop)


def _error_response(exc: BaseException, started: float) -> ModelResponse:
    return ModelResponse(
        text="", status="error", error=f"{type(exc).__name__}: {exc}", latency_s=_time.monotonic() - started
    )


def _checked(response: Any, started: float) -> ModelResponse:
    """A backend's answer with its token counts coerced (``conform_usage``: a count out of range is
    unknown), or an error response saying why it does not fit the stored schema (a list for ``text``)."""
    if not isinstance(response, ModelResponse):
        return _error_response(TypeError(f"the backend returned {type(response).__name__}"), started)
    problem = response_problem(conform_usage(response))
    if problem is None:
        return response
    return ModelResponse(
        text="",
        status="error",
        error=f"MalformedResponse: {problem}",
        latency_s=_time.monotonic() - started,
        meta={"error_code": "MalformedResponse"},
    )


def _call_one(backend: Backend, request: ModelRequest) -> ModelResponse:
    started = _time.monotonic()
    try:
        return scrub_response(_checked(backend.complete(request), started))
    except Exception as exc:  # any backend failure becomes a recorded error, never a crash
        return scrub_response(_error_response(exc, started))


def _call_batch(backend: Any, requests: list[ModelRequest]) -> list[ModelResponse]:
    started = _time.monotonic()
    try:
        responses = list(backend.complete_many(requests))
        if len(responses) != len(requests):
            raise RuntimeError(f"complete_many returned {len(responses)} responses for {len(requests)}")
        return [scrub_response(_checked(r, started)) for r in responses]
    except Exception as exc:
        return [scrub_response(_error_response(exc, started)) for _ in requests]


def _limits(
    concurrency: int | Mapping[str, int] | None, backend: Backend, models: set[str]
) -> dict[str, int]:
    if concurrency is None:
        concurrency = int(getattr(backend, "concurrency", 1))
    if isinstance(concurrency, int):
        limits = dict.fromkeys(models, concurrency)
    else:
        missing = models - set(concurrency)
        if missing:
            raise ConfigError("concurrency", f"no limit for model(s) {sorted(missing)}")
        limits = {m: int(concurrency[m]) for m in models}
    bad = {m: n for m, n in limits.items() if n < 1}
    if bad:
        raise ConfigError("concurrency", f"must be >= 1, got {bad}")
    return limits


def tally(results: Sequence[Result]) -> dict[str, int]:
    """What the progress bar shows: ``from_cache`` (answered from the cache, or by an identical request
    earlier in the run), ``new_calls`` (paid for now) and ``errors`` (failed calls)."""
    cached = sum(1 for r in results if r.cached)
    return {
        "from_cache": cached,
        "new_calls": len(results) - cached,
        "errors": sum(1 for r in results if r.response.status == "error"),
    }


BREAKER_CALLS = 5
LEASE_TTL_S = 120.0  # a lease's life, renewed while the run lives: a crashed holder's calls are free after it
POLL_S = (0.05, 2.0)  # first and longest wait between looks at a key another live process holds
# error codes and exception names that mean "the server could not be reached" (not a slow or bad answer)
_CONNECTION_CODES = ("ConnectionError", "EndpointConnectionError", "ConnectTimeout")
_CONNECTION_NAMES = ("ConnectionError", "ConnectionRefusedError", "APIConnectionError", "ConnectError",
                     "EndpointConnectionError", "ConnectTimeoutError", "gaierror")  # fmt: skip


# error codes of a server that answers but keeps failing (after the backend's retries): 5xx, throttled,
# stopped by the backend's own breaker, or no whole answer within the call's deadline; and the Converse
# API's throttling and 5xx codes (ThrottlingException, ServiceUnavailableException, ...)
_SERVER_CODES = ("TooManyRequests", "CircuitOpen", "DeadlineExceeded", *sorted(CONVERSE_OUTAGE_CODES))


class Unreachable(InputError):
    """The backend's server could not be reached, or kept failing, for several calls in a row (the
    circuit breaker)."""


def connection_failed(response: ModelResponse) -> bool:
    """Whether an error response says the server could not be reached at all."""
    if response.status != "error":
        return False
    meta = response.meta if isinstance(response.meta, Mapping) else {}
    if str(meta.get("error_code", "")) in _CONNECTION_CODES:
        return True
    head = (response.error or "").split(":", 1)[0].strip()
    return head in _CONNECTION_NAMES


def server_failed(response: ModelResponse) -> bool:
    """Whether an error response says the server is down: no connection (``connection_failed``), or,
    retries spent, a 5xx, a 429, the backend's breaker open or the call's deadline passed. A 4xx other
    than 429, a malformed body or a refusal is an answer, not an outage."""
    if connection_failed(response):
        return True
    if response.status != "error":
        return False
    meta = response.meta if isinstance(response.meta, Mapping) else {}
    code = str(meta.get("error_code", ""))
    return code in _SERVER_CODES or (len(code) == 7 and code.startswith("HTTP5") and code[4:].isdigit())


def _outage(response: ModelResponse) -> str:
    """What a failed call said, in a few words, for the breaker's line."""
    if connection_failed(response):
        return "could not connect"
    meta = response.meta if isinstance(response.meta, Mapping) else {}
    code = str(meta.get("error_code") or "")
    if code == "CircuitOpen" or not code:  # the breaker's own line says what the attempts met
        return f"failed ({(response.error or '?').splitlines()[0][:160]})"
    return f"failed ({code})"


def with_waits(shown: Mapping[str, int], results: Sequence[Result]) -> dict[str, int]:
    """The progress bar's counts plus ``retry_after``: how many of the calls paid for now waited because
    the provider said ``Retry-After`` (shown once there is one)."""
    waits = sum(
        1
        for r in results
        if not r.cached and isinstance(r.response.meta, Mapping) and r.response.meta.get("retry_after_s")
    )
    return {**shown, "retry_after": waits} if waits else dict(shown)


def new_holder() -> str:
    """A lease holder id unique to this run: host, process, its start time and a random part
    (``cache.make_holder``), so a crashed run's leases are known dead at once."""
    return make_holder(uuid.uuid4().hex[:8])


class _Renewer:
    """Keeps a live run's leases from expiring: renews them every ``ttl_s / 3`` until stopped."""

    def __init__(self, cache: ResponseCache, holder: str, ttl_s: float) -> None:
        self._stop = threading.Event()

        def loop() -> None:
            while not self._stop.wait(ttl_s / 3):
                try:
                    cache.renew(holder, ttl_s)
                except Exception as exc:  # a renewal failure only risks a duplicate call, never a crash
                    log.warning("lease renewal failed: %s", exc)

        self._thread = threading.Thread(target=loop, name="lease-renewer", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


Counter = Callable[[Sequence[Result]], Mapping[str, int]]


# what one claimed-or-called key came to: (key, response, time, cached); response None: another process
# holds the key, come back later
Outcome = tuple[str, ModelResponse | None, str, bool]


@dataclass
class RequestRun:
    """One run of requests through the cache, in four parts that can be read and tested one at a time:

    - keying (``__post_init__``, ``first_request``, ``by_model``): each request's ``request_key``; identical
      requests share a key and are sent once;
    - leasing (``claim``): a key is leased in the cache before it is paid for; one another live process
      holds is waited for (``wait``) or deferred, one a dead process held is taken over;
    - sending (``send``): the backend's answers, checked and scrubbed, one call or one batch;
    - storing (``store``, ``settle``, ``record``): the answer committed to the cache the moment it arrives,
      placed at every index of its key, and watched by the circuit breaker.

    ``execute`` puts them together (thread pools per model, the lease renewer, the progress bar) and
    ``run_requests`` is the function callers use; the arguments are ``run_requests``'s.
    """

    requests: list[ModelRequest]
    backend: Backend
    cache: ResponseCache
    batch_size: int = default(ModelSchema, "batch_size")
    lease_ttl_s: float = LEASE_TTL_S
    poll_s: tuple[float, float] = POLL_S
    counts: Counter = tally
    breaker: int | None = BREAKER_CALLS
    holder: str = field(default_factory=new_holder)
    bar: Any = None  # the progress bar settle advances (None: none)

    def __post_init__(self) -> None:
        self.requests = list(self.requests)
        self.keys = [request_key(self.backend, request) for request in self.requests]
        self.by_key: dict[str, list[int]] = defaultdict(list)
        for index, key in enumerate(self.keys):
            self.by_key[key].append(index)
        self.results: list[Result | None] = [None] * len(self.requests)
        self.done: list[Result] = []  # settled so far, in the order they settled
        self.in_cache: set[str] = set()  # keys whose answer is a row of the cache (found there or stored now)
        self.unstored: list[str] = []  # why paid answers could not be stored (a full or read-only disk)
        self.unwritable: list[str] = []  # why a lease could not be written (nothing was paid for those)
        self.tripped = threading.Event()  # set: nothing more is sent
        self.streak = 0  # consecutive calls, paid for now, that found the server down
        self.last_outage = ""  # what the last of them said
        # when the postfix was last recounted: counting all results per call is quadratic
        self._shown_at = 0.0

    # --- keying -------------------------------------------------------------------------------------

    @property
    def batched(self) -> bool:
        return self.batch_size > 1 and self.backend.abilities.many

    def first_request(self, key: str) -> ModelRequest:
        return self.requests[self.by_key[key][0]]

    def by_model(self, keys: Sequence[str]) -> dict[str, list[str]]:
        """``keys`` grouped by the model of their request, in first-seen order."""
        per_model: dict[str, list[str]] = defaultdict(list)
        for key in keys:
            per_model[self.first_request(key).model].append(key)
        return dict(per_model)

    # --- storing ------------------------------------------------------------------------------------

    def settle(self, key: str, response: ModelResponse, time: str, cached: bool) -> None:
        """Place an answer at every index of its key; a repeat is answered by the first call."""
        if cached:
            self.in_cache.add(key)
        scrub_response(response)  # also an error row cached before errors were scrubbed
        for n, index in enumerate(self.by_key[key]):
            result = Result(self.requests[index], response, key, time, cached or n > 0, self.backend.name)
            self.results[index] = result
            self.done.append(result)
        if self.bar is not None:
            self.bar.update(len(self.by_key[key]))

    def read_cache(self) -> list[str]:
        """Settle every key the cache already answers; the keys still missing, in request order."""
        hits = self.cache.get_many(list(self.by_key))
        for key, hit in hits.items():
            self.settle(key, hit.response, hit.time, cached=True)
        return [key for key in self.by_key if key not in hits]

    def store(self, key: str, request: ModelRequest, response: ModelResponse) -> Outcome:
        """Commit a paid answer (in the worker, the moment it arrives: a crash now loses nothing paid for)."""
        time = utc_now()
        try:
            if self.cache.put(
                key, response, backend=self.backend.name, model=request.model, time=time, holder=self.holder
            ):
                self.in_cache.add(key)
        except (CacheUnwritable, OSError) as exc:
            # the answer is paid for: keep it for this run's results, send nothing more, and say so
            self.unstored.append(str(exc))
            self.tripped.set()
        return key, response, time, False

    def record(self, outcome: Outcome) -> bool:
        """Settle one outcome and feed the breaker; False: deferred (another process holds the key)."""
        key, response, time, cached = outcome
        if response is None:
            return False
        self.settle(key, response, time, cached=cached)
        if not cached and self.breaker:
            down = server_failed(response)
            self.streak = self.streak + 1 if down else 0
            if down:
                self.last_outage = _outage(response)
            if self.streak >= self.breaker:
                self.tripped.set()
        return True

    # --- leasing ------------------------------------------------------------------------------------

    def free_dead_leases(self) -> None:
        """Free a crashed run's leases (or a failed cleanup's); never a reason not to run: they expire."""
        try:
            reaped = self.cache.reap_dead()
        except Exception as exc:
            log.warning("could not free dead holders' leases (%s)", exc)
            reaped = 0
        if reaped:
            log.info("freed the leases of %d dead run(s)", reaped)

    def claim(self, batch: list[str], wait: bool) -> tuple[list[Outcome], list[str]]:
        """Cached answers and deferred keys, and the keys now ours to call. ``wait``: poll a key another
        process holds until its row appears or its lease expires, instead of deferring it."""
        outcomes: list[Outcome] = []
        mine: list[str] = []
        pending, delay = list(batch), self.poll_s[0]
        while pending:
            claims = self.cache.claim_many(pending, self.holder, self.lease_ttl_s)
            pending = []
            for key, c in claims.items():
                if c.state == "hit" and c.cached is not None:
                    outcomes.append((key, c.cached.response, c.cached.time, True))
                elif c.state == "claimed":
                    mine.append(key)
                elif wait:
                    pending.append(key)
                else:
                    outcomes.append((key, None, "", False))
            if pending:  # another process is making these calls: wait for its rows or its expiry
                _time.sleep(delay)
                delay = min(delay * 1.5, self.poll_s[1])
        return outcomes, mine

    # --- sending ------------------------------------------------------------------------------------

    def send(self, todo: list[ModelRequest]) -> list[ModelResponse]:
        """The backend's answers to ``todo``, in order: one batch, or one call each."""
        if self.batched:
            return _call_batch(self.backend, todo)
        return [_call_one(self.backend, request) for request in todo]

    def task(self, batch: list[str], wait: bool = False) -> list[Outcome]:
        """A worker's job: claim the keys, send those now ours, store their answers."""
        if self.tripped.is_set():  # the breaker is open: nothing more is sent
            return []
        try:
            outcomes, mine = self.claim(batch, wait)
        except CacheUnwritable as exc:  # not even a lease can be written: pay for nothing
            self.unwritable.append(str(exc))
            self.tripped.set()
            return []
        if not mine or self.tripped.is_set():
            return outcomes
        todo = [self.first_request(key) for key in mine]
        responses = self.send(todo)
        return outcomes + [self.store(k, q, r) for k, q, r in zip(mine, todo, responses, strict=True)]

    # --- the whole run ------------------------------------------------------------------------------

    def show_counts(self, final: bool = False) -> None:
        if self.bar is None:
            return
        now = _time.monotonic()
        if final or now - self._shown_at >= 0.5:
            self._shown_at = now
            self.bar.set_postfix(with_waits(self.counts(self.done), self.done), refresh=False)

    def check(self) -> None:
        """Raise what stopped the run: a cache that took no lease or no answer, or the breaker."""
        if self.unwritable and not self.unstored:
            raise CacheUnwritable(f"{self.unwritable[0]}; no call was sent")
        if self.unstored:
            raise CacheUnwritable(
                f"{len(self.unstored)} paid answer(s) could not be stored and are lost ({self.unstored[0]}); "
                "no further call was sent. Free space (or make the cache writable) and rerun: "
                "only the missing calls are made"
            )
        if self.tripped.is_set():
            backend = self.backend
            where = getattr(backend, "endpoint", None) or getattr(backend, "base_url", None) or backend.name
            raise Unreachable(
                f"{where}: {self.streak} calls in a row {self.last_outage}; the run stopped "
                f"({len(self.done)} of {len(self.requests)} calls settled; {len(self.in_cache)} distinct "
                "answer(s) are in the cache, where a rerun finds them). "
                "Is the server up?"
            )

    def execute(self, limits: Mapping[str, int]) -> list[Result]:
        """Answer every request (``limits``: calls in flight per model) and return the results in order."""
        missing = self.read_cache()
        if missing:
            self.free_dead_leases()
        per_model = self.by_model(missing)
        pools = {
            model: ThreadPoolExecutor(limits[model], thread_name_prefix=f"call-{model}")
            for model in per_model
        }
        finished: queue.SimpleQueue[Future[list[Outcome]]] = queue.SimpleQueue()
        cache_on_wait = self.cache.on_wait
        bar = self.bar
        if bar is not None:
            self.cache.on_wait = lambda message: bar.set_postfix_str(message)
        renewer = _Renewer(self.cache, self.holder, self.lease_ttl_s) if missing else None

        def drain(submitted: int) -> list[str]:
            deferred: list[str] = []
            for _ in range(submitted):
                for outcome in finished.get().result():
                    if not self.record(outcome):
                        deferred.append(outcome[0])
                self.show_counts()
            return deferred

        try:
            size = self.batch_size if self.batched else 1
            submitted = 0
            for model, model_keys in per_model.items():
                for start in range(0, len(model_keys), size):
                    batch = model_keys[start : start + size]
                    pools[model].submit(self.task, batch).add_done_callback(finished.put)
                    submitted += 1
            deferred = drain(submitted)
            if deferred:
                log.info(
                    "%d calls are in flight in another process; waiting for their answers", len(deferred)
                )
            for key in deferred:  # the second round waits for the other holder's row (or its expiry)
                pools[self.first_request(key).model].submit(self.task, [key], True).add_done_callback(
                    finished.put
                )
            drain(len(deferred))
            self.check()
        finally:
            if renewer is not None:
                renewer.stop()
            for pool in pools.values():
                pool.shutdown(wait=True, cancel_futures=True)
            if missing:
                try:
                    # whatever a failure left leased is free for others at once
                    self.cache.release(self.holder)
                except Exception as exc:  # a full disk: the next start reaps them (cache.reap_dead)
                    log.warning("lease cleanup failed (%s); the next run frees them", exc)
            self.cache.on_wait = cache_on_wait
            self.show_counts(final=True)
        assert all(r is not None for r in self.results), "engine lost a result"
        return [r for r in self.results if r is not None]


def run_requests(
    requests: Sequence[ModelRequest],
    backend: Backend,
    *,
    cache: ResponseCache | str | Path,
    concurrency: int | Mapping[str, int] | None = None,
    progress: bool = True,
    desc: str = "",
    batch_size: int = default(ModelSchema, "batch_size"),
    lease_ttl_s: float = LEASE_TTL_S,
    poll_s: tuple[float, float] = POLL_S,
    counts: Counter = tally,
    breaker: int | None = BREAKER_CALLS,
) -> list[Result]:
    """Send every request and return one ``Result`` per request, in request order.

    ``cache``: an open ``ResponseCache`` or the path of one (opened and closed here). ``concurrency``
    limits calls in flight per model: an int for each model, a mapping model -> int, or None for the
    backend's own ``concurrency`` attribute (1 if it has none). With ``batch_size > 1`` and a backend
    that declares ``abilities.many`` (its ``complete_many``), uncached requests go in batches. ``counts``
    turns the results settled so far into the progress bar's postfix (default ``tally``).

    ``breaker``: after this many consecutive new calls that found the server down (``server_failed``:
    nothing listening at the URL, DNS, refused; or, its retries spent, 5xx, 429, the backend's own breaker
    open, the call's deadline passed), the run stops with one line naming the URL (``Unreachable``)
    instead of failing call by call; None: never.

    Every call is keyed by ``request_key`` (the hash of its wire request) and leased in the cache
    before it is paid for (``lease_ttl_s``, renewed while the run lives): a call another process is
    making is waited for (polling from ``poll_s[0]`` up to ``poll_s[1]`` seconds apart) and then read
    from the cache, or taken over if that process died. The parts are ``RequestRun``'s methods.
    """
    if not isinstance(cache, ResponseCache):
        with ResponseCache(cache) as own:
            return run_requests(
                requests, backend, cache=own, concurrency=concurrency, progress=progress, desc=desc,
                batch_size=batch_size, lease_ttl_s=lease_ttl_s, poll_s=poll_s, counts=counts,
                breaker=breaker,
            )  # fmt: skip
    requests = list(requests)
    limits = _limits(concurrency, backend, {request.model for request in requests})
    bar = tqdm(
        total=len(requests), desc=desc or backend.name, unit="call", disable=not progress, smoothing=0.1
    )
    try:
        run = RequestRun(
            requests, backend, cache, batch_size=batch_size, lease_ttl_s=lease_ttl_s, poll_s=poll_s,
            counts=counts, breaker=breaker, bar=bar,
        )  # fmt: skip
        return run.execute(limits)
    finally:
        bar.close()
