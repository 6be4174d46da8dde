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
from dataclasses import dataclass
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


def run_requests(
    requests: Sequence[ModelRequest],
    backend: Backend,
    *,
    cache: ResponseCache | str | Path,
    concurrency: int | Mapping[str, int] | None = None,
    progress: bool = True,
    desc: str = "",
    batch_size: int = 1,
    lease_ttl_s: float = 120.0,
    poll_s: tuple[float, float] = (0.05, 2.0),
    counts: Counter = tally,
    breaker: int | None = BREAKER_CALLS,
) -> list[Result]:
    """Send every request and return one ``Result`` per request, in request order.

    ``cache``: an open ``ResponseCache`` or the path of one (opened and closed here). ``concurrency``
    limits calls in flight per model: an int for each model, a mapping model -> int, or None for the
    backend's own ``concurrency`` attribute (1 if it has none). With ``batch_size > 1`` and a backend
    offering ``complete_many``, uncached requests go in batches. ``counts`` turns the results settled so
    far into the progress bar's postfix (default ``tally``).

    ``breaker``: after this many consecutive new calls that found the server down (``server_failed``:
    nothing listening at the URL, DNS, refused; or, its retries spent, 5xx, 429, the backend's own breaker
    open, the call's deadline passed), the run stops with one line naming the URL (``Unreachable``)
    instead of failing call by call; None: never.

    Every call is keyed by ``request_key`` (the hash of its wire request) and leased in the cache
    before it is paid for (``lease_ttl_s``, renewed while the run lives): a call another process is
    making is waited for (polling from ``poll_s[0]`` up to ``poll_s[1]`` seconds apart) and then read
    from the cache, or taken over if that process died.
    """
    if not isinstance(cache, ResponseCache):
        with ResponseCache(cache) as own:
            return run_requests(
                requests, backend, cache=own, concurrency=concurrency, progress=progress, desc=desc,
                batch_size=batch_size, lease_ttl_s=lease_ttl_s, poll_s=poll_s, counts=counts,
                breaker=breaker,
            )  # fmt: skip
    requests = list(requests)
    keys = [request_key(backend, request) for request in requests]
    by_key: dict[str, list[int]] = defaultdict(list)
    for index, key in enumerate(keys):
        by_key[key].append(index)

    limits = _limits(concurrency, backend, {request.model for request in requests})
    results: list[Result | None] = [None] * len(requests)
    bar = tqdm(
        total=len(requests), desc=desc or backend.name, unit="call", disable=not progress, smoothing=0.1
    )
    done: list[Result] = []

    in_cache: set[str] = set()  # keys whose answer is a row of the cache (found there or stored now)

    def settle(key: str, response: ModelResponse, time: str, cached: bool) -> None:
        if cached:
            in_cache.add(key)
        scrub_response(response)  # also an error row cached before errors were scrubbed
        for n, index in enumerate(by_key[key]):
            # a repeated identical request in one run is answered by the first call, not sent again
            result = Result(requests[index], response, key, time, cached or n > 0, backend.name)
            results[index] = result
            done.append(result)
        bar.update(len(by_key[key]))

    hits = cache.get_many(list(by_key))
    for key, hit in hits.items():
        settle(key, hit.response, hit.time, cached=True)
    missing = [key for key in by_key if key not in hits]

    holder = new_holder()
    if missing:
        try:
            reaped = cache.reap_dead()  # a crashed run's leases (or a failed cleanup's) are free now
        except Exception as exc:  # never a reason not to run: they still expire
            log.warning("could not free dead holders' leases (%s)", exc)
            reaped = 0
        if reaped:
            log.info("freed the leases of %d dead run(s)", reaped)
    batched = batch_size > 1 and callable(getattr(backend, "complete_many", None))
    # (key, response, time, cached); response None: another process holds the key, come back later
    Outcome = tuple[str, ModelResponse | None, str, bool]

    def first_request(key: str) -> ModelRequest:
        return requests[by_key[key][0]]

    def claim(batch: list[str], wait: bool) -> tuple[list[Outcome], list[str]]:
        """Cached answers and deferred keys, and the keys now ours to call."""
        outcomes: list[Outcome] = []
        mine: list[str] = []
        pending, delay = list(batch), poll_s[0]
        while pending:
            claims = cache.claim_many(pending, holder, lease_ttl_s)
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
                delay = min(delay * 1.5, poll_s[1])
        return outcomes, mine

    unstored: list[str] = []  # why paid answers could not be stored (a full or read-only disk)
    unwritable: list[str] = []  # why a lease could not be written (nothing was paid for those)

    def store(key: str, request: ModelRequest, response: ModelResponse) -> Outcome:
        # committed in the worker, the moment the answer arrives: a crash now loses nothing paid for
        time = utc_now()
        try:
            if cache.put(key, response, backend=backend.name, model=request.model, time=time, holder=holder):
                in_cache.add(key)
        except (CacheUnwritable, OSError) as exc:
            # the answer is paid for: keep it for this run's results, send nothing more, and say so
            unstored.append(str(exc))
            tripped.set()
        return key, response, time, False

    def task(batch: list[str], wait: bool = False) -> list[Outcome]:
        if tripped.is_set():  # the breaker is open: nothing more is sent
            return []
        try:
            outcomes, mine = claim(batch, wait)
        except CacheUnwritable as exc:  # not even a lease can be written: pay for nothing
            unwritable.append(str(exc))
            tripped.set()
            return []
        if not mine or tripped.is_set():
            return outcomes
        todo = [first_request(key) for key in mine]
        if batched:
            responses = _call_batch(backend, todo)
        else:
            responses = [_call_one(backend, request) for request in todo]
        return outcomes + [store(k, q, r) for k, q, r in zip(mine, todo, responses, strict=True)]

    per_model: dict[str, list[str]] = defaultdict(list)
    for key in missing:
        per_model[first_request(key).model].append(key)

    pools = {
        model: ThreadPoolExecutor(limits[model], thread_name_prefix=f"call-{model}") for model in per_model
    }
    finished: queue.SimpleQueue[Future[list[Outcome]]] = queue.SimpleQueue()
    tripped = threading.Event()
    cache_on_wait = cache.on_wait
    cache.on_wait = lambda message: bar.set_postfix_str(message)
    renewer = _Renewer(cache, holder, lease_ttl_s) if missing else None

    streak = [0]  # consecutive calls, paid for now, that found the server down
    last_outage = [""]  # what the last of them said
    shown_at = [0.0]  # when the postfix was last recounted: counting all results per call is quadratic

    def show_counts(final: bool = False) -> None:
        now = _time.monotonic()
        if final or now - shown_at[0] >= 0.5:
            shown_at[0] = now
            bar.set_postfix(with_waits(counts(done), done), refresh=False)

    def drain(submitted: int) -> list[str]:
        deferred: list[str] = []
        for _ in range(submitted):
            for key, response, time, cached in finished.get().result():
                if response is None:
                    deferred.append(key)
                    continue
                settle(key, response, time, cached=cached)
                if not cached and breaker:
                    down = server_failed(response)
                    streak[0] = streak[0] + 1 if down else 0
                    if down:
                        last_outage[0] = _outage(response)
                    if streak[0] >= breaker:
                        tripped.set()
            show_counts()
        return deferred

    try:
        size = batch_size if batched else 1
        submitted = 0
        for model, model_keys in per_model.items():
            for start in range(0, len(model_keys), size):
                pools[model].submit(task, model_keys[start : start + size]).add_done_callback(finished.put)
                submitted += 1
        deferred = drain(submitted)
        if deferred:
            log.info("%d calls are in flight in another process; waiting for their answers", len(deferred))
        for key in deferred:  # the second round waits for the other holder's row (or its expiry)
            pools[first_request(key).model].submit(task, [key], True).add_done_callback(finished.put)
        drain(len(deferred))
        if unwritable and not unstored:
            raise CacheUnwritable(f"{unwritable[0]}; no call was sent")
        if unstored:
            raise CacheUnwritable(
                f"{len(unstored)} paid answer(s) could not be stored and are lost ({unstored[0]}); "
                "no further call was sent. Free space (or make the cache writable) and rerun: "
                "only the missing calls are made"
            )
        if tripped.is_set():
            where = getattr(backend, "endpoint", None) or getattr(backend, "base_url", None) or backend.name
            raise Unreachable(
                f"{where}: {streak[0]} calls in a row {last_outage[0]}; the run stopped "
                f"({len(done)} of {len(requests)} calls settled; {len(in_cache)} distinct answer(s) are in "
                "the cache, where a rerun finds them). "
                "Is the server up?"
            )
    finally:
        if renewer is not None:
            renewer.stop()
        for pool in pools.values():
            pool.shutdown(wait=True, cancel_futures=True)
        if missing:
            try:
                cache.release(holder)  # whatever a failure left leased is free for others at once
            except Exception as exc:  # a full disk: the next start reaps them (cache.reap_dead)
                log.warning("lease cleanup failed (%s); the next run frees them", exc)
        cache.on_wait = cache_on_wait
        show_counts(final=True)
        bar.close()
    assert all(r is not None for r in results), "engine lost a result"
    return [r for r in results if r is not None]
