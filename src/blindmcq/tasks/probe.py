"""The multiple-choice probe task's calls: presentations -> requests -> engine -> PredictionRecords.

The engine (``blindmcq.engine``) sends the requests and returns full responses; here each response is
parsed (``interpret``) and scored against the presentation's key into one ``PredictionRecord``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple, Protocol

from blindmcq.backends.base import Backend, ModelRequest, ModelResponse
from blindmcq.engine.cache import ResponseCache
from blindmcq.engine.run import Result, run_requests
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


def records_from(
    jobs: Sequence[Job], results: Sequence[Result], *, interpret: Interpret, setting: str = ""
) -> list[PredictionRecord]:
    """One PredictionRecord per (job, engine result)."""
    return [
        make_record(
            job.presentation, job.request, result.response, interpret=interpret, backend=result.backend,
            key=result.key, time=result.time, cached=result.cached, setting=setting,
        )
        for job, result in zip(jobs, results, strict=True)
    ]


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
    """Run every job through the engine (``engine.run.run_requests``: cache, in-flight sharing,
    concurrency, progress) and return one PredictionRecord per job, in job order.

    ``setting`` tags every record (a sweep setting such as the few-shot skew) unless the presentation
    carries its own."""
    jobs = [Job(*job) for job in jobs]
    results = run_requests(
        [job.request for job in jobs], backend, cache=cache, concurrency=concurrency, progress=progress,
        desc=desc, batch_size=batch_size, lease_ttl_s=lease_ttl_s, poll_s=poll_s,
    )  # fmt: skip
    return records_from(jobs, results, interpret=interpret, setting=setting)
