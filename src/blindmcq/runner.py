"""The probe runner: ask a backend every job's request, through the response cache, and record each call.

Resumable by construction: each response is committed to the cache the moment it arrives, so a run
killed at any point and started again makes exactly the calls that are missing (plus the few that were
in flight). Identical requests within a run are sent once. Output order is the job order.
"""

from __future__ import annotations

import logging
import queue
import time as _time
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
) -> list[PredictionRecord]:
    """Run every job and return one PredictionRecord per job, in job order.

    ``concurrency`` limits calls in flight per model: an int for each model, a mapping model -> int,
    or None for the backend's own ``concurrency`` attribute (1 if it has none). Retries are the
    backend's job (Bedrock and the fault fake retry throttling with backoff); whatever still fails,
    or raises, is recorded with status ``error`` and, not being cached, retried by the next run. With
    ``batch_size > 1`` and a backend offering ``complete_many``, uncached requests go in batches.
    ``setting`` tags every record (a sweep setting such as the few-shot skew) unless the
    presentation carries its own.
    """
    jobs = [Job(*job) for job in jobs]
    keys = [request_key(backend, job.request) for job in jobs]
    by_key: dict[str, list[int]] = defaultdict(list)
    for index, key in enumerate(keys):
        by_key[key].append(index)

    limits = _limits(concurrency, backend, {job.request.model for job in jobs})
    records: list[PredictionRecord | None] = [None] * len(jobs)
    bar = tqdm(total=len(jobs), desc=desc or backend.name, unit="call", disable=not progress, smoothing=0.1)
    counts = {"cached": 0, "called": 0, "error": 0}

    def settle(key: str, response: ModelResponse, time: str, cached: bool) -> None:
        for n, index in enumerate(by_key[key]):
            presentation, request = jobs[index]
            # a repeated identical request in one run is answered by the first call, not sent again
            records[index] = make_record(
                presentation, request, response, interpret=interpret, backend=backend.name,
                key=key, time=time, cached=cached or n > 0, setting=setting,
            )  # fmt: skip
        counts["cached" if cached else "called"] += len(by_key[key])
        counts["error"] += len(by_key[key]) if response.status == "error" else 0
        bar.update(len(by_key[key]))

    hits = cache.get_many(list(by_key))
    for key, hit in hits.items():
        settle(key, hit.response, hit.time, cached=True)
    missing = [key for key in by_key if key not in hits]

    def store(key: str, request: ModelRequest, response: ModelResponse) -> tuple[str, ModelResponse, str]:
        # committed in the worker, the moment the answer arrives: a crash now loses nothing paid for
        time = utc_now()
        cache.put(key, response, backend=backend.name, model=request.model, time=time)
        return key, response, time

    batched = batch_size > 1 and callable(getattr(backend, "complete_many", None))

    def task(batch: list[str]) -> list[tuple[str, ModelResponse, str]]:
        requests = [jobs[by_key[key][0]].request for key in batch]
        if batched:
            responses = _call_batch(backend, requests)
        else:
            responses = [_call_one(backend, request) for request in requests]
        return [store(k, q, r) for k, q, r in zip(batch, requests, responses, strict=True)]

    per_model: dict[str, list[str]] = defaultdict(list)
    for key in missing:
        per_model[jobs[by_key[key][0]].request.model].append(key)

    pools = {
        model: ThreadPoolExecutor(limits[model], thread_name_prefix=f"call-{model}") for model in per_model
    }
    finished: queue.SimpleQueue[Future[list[tuple[str, ModelResponse, str]]]] = queue.SimpleQueue()
    submitted = 0
    try:
        size = batch_size if batched else 1
        for model, model_keys in per_model.items():
            for start in range(0, len(model_keys), size):
                pools[model].submit(task, model_keys[start : start + size]).add_done_callback(finished.put)
                submitted += 1
        for _ in range(submitted):
            for key, response, time in finished.get().result():
                settle(key, response, time, cached=False)
            bar.set_postfix(counts, refresh=False)
    finally:
        for pool in pools.values():
            pool.shutdown(wait=True, cancel_futures=True)
        bar.set_postfix(counts, refresh=False)
        bar.close()
    assert all(r is not None for r in records), "runner lost a record"
    return [r for r in records if r is not None]
