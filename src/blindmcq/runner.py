"""The probe runner: ask a backend every job's request, through the response cache, and record each call.

Resumable by construction: each response is committed to the cache the moment it arrives, so a run
killed at any point and started again makes exactly the calls that are missing (plus the few that were
in flight). Identical requests within a run are sent once. Output order is the job order.
"""

from __future__ import annotations

import logging
import os
import queue
import socket
import threading
import time as _time
import uuid
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, NamedTuple, Protocol

from tqdm.auto import tqdm

from blindmcq.backends.base import Backend, ModelRequest, ModelResponse, request_key
from blindmcq.cache import ResponseCache, utc_now
from blindmcq.errors import ConfigError
from blindmcq.records import PredictionRecord

log = logging.getLogger(__name__)


class PresentationLike(Protocol):
    """The fields of a presentation that go into its PredictionRecord."""

    item_id: str
    condition: str
    phrasing: str
    labels: str
    protocol: str
    reasoning: str
    order: Sequence[int]
    order_id: str
    forced_slot: int | None
    key_slot: int | None
    n_options: int


class ParsedLike(Protocol):
    slot: int | None
    status: str


Interpret = Callable[[Any, ModelResponse], ParsedLike]


class Job(NamedTuple):
    presentation: PresentationLike
    request: ModelRequest


def _error_response(exc: BaseException, started: float) -> ModelResponse:
    return ModelResponse(
        text="", status="error", error=f"{type(exc).__name__}: {exc}", latency_s=_time.monotonic() - started
    )


def _call_one(backend: Backend, request: ModelRequest) -> ModelResponse:
    started = _time.monotonic()
    try:
        return backend.complete(request)
    except Exception as exc:  # any backend failure becomes a recorded error, never a crash
        return _error_response(exc, started)


def _call_batch(backend: Any, requests: list[ModelRequest]) -> list[ModelResponse]:
    started = _time.monotonic()
    try:
        responses = list(backend.complete_many(requests))
        if len(responses) != len(requests):
            raise RuntimeError(f"complete_many returned {len(responses)} responses for {len(requests)}")
        return responses
    except Exception as exc:
        return [_error_response(exc, started) for _ in requests]


def make_record(
    presentation: PresentationLike,
    request: ModelRequest,
    response: ModelResponse,
    *,
    interpret: Interpret,
    backend: str,
    key: str,
    time: str,
    cached: bool,
    setting: str = "",
) -> PredictionRecord:
    """One PredictionRecord; an unparseable or failed answer has no picked slot and counts as wrong."""
    error = response.error
    if response.status == "error":
        slot, status = None, "error"
    else:
        try:
            parsed = interpret(presentation, response)
            slot, status = parsed.slot, parsed.status
        except Exception as exc:  # a parser bug must not drop the call: record it and say why
            log.warning("interpret failed on %s: %s", presentation.item_id, exc)
            slot, status, error = None, "error", f"interpret: {type(exc).__name__}: {exc}"
    order = [int(i) for i in presentation.order]
    picked_option = order[slot] if slot is not None and 0 <= slot < len(order) else None
    return PredictionRecord(
        item_id=presentation.item_id,
        model=request.model,
        condition=presentation.condition,
        phrasing=presentation.phrasing,
        labels=presentation.labels,
        protocol=presentation.protocol,
        reasoning=presentation.reasoning,
        order=order,
        order_id=presentation.order_id,
        forced_slot=presentation.forced_slot,
        key_slot=presentation.key_slot,
        n_options=presentation.n_options,
        picked_slot=slot,
        picked_option=picked_option,
        correct=status == "ok" and slot is not None and slot == presentation.key_slot,
        parse_status=status,
        raw_response=response.text,
        input_tokens=response.input_tokens,
        output_tokens=response.output_tokens,
        latency_s=response.latency_s,
        region=response.region,
        request_hash=key,
        time=time,
        backend=backend,
        cached=cached,
        error=error,
        setting=getattr(presentation, "setting", "") or setting,
        stop_reason=_stop_reason(response),
    )


def _stop_reason(response: ModelResponse) -> str | None:
    stop = response.meta.get("stop_reason") if isinstance(response.meta, Mapping) else None
    return None if stop is None else str(stop)


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


def call_counts(records: Sequence[PredictionRecord]) -> dict[str, int]:
    """The one tally of a run, shown on the progress bar and written in its summary: ``from_cache``
    (answered from the cache, or by an identical request earlier in the run), ``new_calls`` (paid
    for now) and ``errors``."""
    cached = sum(1 for r in records if r.cached)
    return {
        "from_cache": cached,
        "new_calls": len(records) - cached,
        "errors": sum(1 for r in records if r.parse_status == "error"),
    }


def new_holder() -> str:
    """A lease holder id unique to this run: host, process and a random part."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


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


def run_calls(
    jobs: Sequence[Job | tuple[PresentationLike, ModelRequest]],
    backend: Backend,
    *,
    cache: ResponseCache,
    interpret: Interpret,
    concurrency: int | Mapping[str, int] | None = None,
    progress: bool = True,
    desc: str = "",
    batch_size: int = 1,
    setting: str = "",
    lease_ttl_s: float = 120.0,
    poll_s: tuple[float, float] = (0.05, 2.0),
) -> list[PredictionRecord]:
    """Run every job and return one PredictionRecord per job, in job order.

    ``concurrency`` limits calls in flight per model: an int for each model, a mapping model -> int,
    or None for the backend's own ``concurrency`` attribute (1 if it has none). Retries are the
    backend's job (Bedrock and the fault fake retry throttling with backoff); whatever still fails,
    or raises, is recorded with status ``error`` and, not being cached, retried by the next run. With
    ``batch_size > 1`` and a backend offering ``complete_many``, uncached requests go in batches.
    ``setting`` tags every record (a sweep setting such as the few-shot skew) unless the
    presentation carries its own.

    Every call is keyed by ``request_key`` (the hash of its wire request) and leased in the cache
    before it is paid for (``lease_ttl_s``, renewed while the run lives): a call another process is
    making is waited for (polling from ``poll_s[0]`` up to ``poll_s[1]`` seconds apart) and then read
    from the cache, or taken over if that process died.
    """
    jobs = [Job(*job) for job in jobs]
    keys = [request_key(backend, job.request) for job in jobs]
    by_key: dict[str, list[int]] = defaultdict(list)
    for index, key in enumerate(keys):
        by_key[key].append(index)

    limits = _limits(concurrency, backend, {job.request.model for job in jobs})
    records: list[PredictionRecord | None] = [None] * len(jobs)
    bar = tqdm(total=len(jobs), desc=desc or backend.name, unit="call", disable=not progress, smoothing=0.1)
    done: list[PredictionRecord] = []

    def settle(key: str, response: ModelResponse, time: str, cached: bool) -> None:
        for n, index in enumerate(by_key[key]):
            presentation, request = jobs[index]
            # a repeated identical request in one run is answered by the first call, not sent again
            record = make_record(
                presentation, request, response, interpret=interpret, backend=backend.name,
                key=key, time=time, cached=cached or n > 0, setting=setting,
            )  # fmt: skip
            records[index] = record
            done.append(record)
        bar.update(len(by_key[key]))

    hits = cache.get_many(list(by_key))
    for key, hit in hits.items():
        settle(key, hit.response, hit.time, cached=True)
    missing = [key for key in by_key if key not in hits]

    holder = new_holder()
    batched = batch_size > 1 and callable(getattr(backend, "complete_many", None))
    # (key, response, time, cached); response None: another process holds the key, come back later
    Outcome = tuple[str, ModelResponse | None, str, bool]

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

    def store(key: str, request: ModelRequest, response: ModelResponse) -> Outcome:
        # committed in the worker, the moment the answer arrives: a crash now loses nothing paid for
        time = utc_now()
        cache.put(key, response, backend=backend.name, model=request.model, time=time, holder=holder)
        return key, response, time, False

    def task(batch: list[str], wait: bool = False) -> list[Outcome]:
        outcomes, mine = claim(batch, wait)
        if not mine:
            return outcomes
        requests = [jobs[by_key[key][0]].request for key in mine]
        if batched:
            responses = _call_batch(backend, requests)
        else:
            responses = [_call_one(backend, request) for request in requests]
        return outcomes + [store(k, q, r) for k, q, r in zip(mine, requests, responses, strict=True)]

    per_model: dict[str, list[str]] = defaultdict(list)
    for key in missing:
        per_model[jobs[by_key[key][0]].request.model].append(key)

    def model_of(key: str) -> str:
        return jobs[by_key[key][0]].request.model

    pools = {
        model: ThreadPoolExecutor(limits[model], thread_name_prefix=f"call-{model}") for model in per_model
    }
    finished: queue.SimpleQueue[Future[list[Outcome]]] = queue.SimpleQueue()
    cache_on_wait = cache.on_wait
    cache.on_wait = lambda message: bar.set_postfix_str(message)
    renewer = _Renewer(cache, holder, lease_ttl_s) if missing else None

    def drain(submitted: int) -> list[str]:
        deferred: list[str] = []
        for _ in range(submitted):
            for key, response, time, cached in finished.get().result():
                if response is None:
                    deferred.append(key)
                else:
                    settle(key, response, time, cached=cached)
            bar.set_postfix(call_counts(done), refresh=False)
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
            pools[model_of(key)].submit(task, [key], True).add_done_callback(finished.put)
        drain(len(deferred))
    finally:
        if renewer is not None:
            renewer.stop()
        for pool in pools.values():
            pool.shutdown(wait=True, cancel_futures=True)
        if missing:
            cache.release(holder)  # whatever a failure left leased is free for others at once
        cache.on_wait = cache_on_wait
        bar.set_postfix(call_counts(done), refresh=False)
        bar.close()
    assert all(r is not None for r in records), "runner lost a record"
    return [r for r in records if r is not None]
