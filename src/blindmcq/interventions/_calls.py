"""Plain model calls (generations or scored choices) through the shared cache and runner.

``run_calls`` is built for presentations; a call here carries a minimal presentation-like tag so
that every call is cached, deduplicated and recorded the same way, and nothing is paid for twice.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from blindmcq.backends.base import Backend, ModelRequest, ModelResponse
from blindmcq.cache import ResponseCache
from blindmcq.records import PredictionRecord
from blindmcq.runner import Job, run_calls


@dataclass(frozen=True)
class CallTag:
    """The presentation fields ``run_calls`` records; ``order_id`` names the call within its item."""

    item_id: str
    order_id: str
    condition: str
    protocol: str
    phrasing: str = ""
    labels: str = ""
    reasoning: str = "direct"
    order: tuple[int, ...] = ()
    forced_slot: int | None = None
    key_slot: int | None = None
    n_options: int = 0


@dataclass(frozen=True)
class _Status:
    slot: int | None
    status: str


def _status_only(_: object, response: ModelResponse) -> _Status:
    # the caller reads raw text or logprobs itself; here only the call's own status is kept
    return _Status(None, "refused" if response.status == "refused" else "ok")


def call_all(
    tags: Sequence[CallTag],
    requests: Sequence[ModelRequest],
    backend: Backend,
    *,
    cache: ResponseCache | str | Path,
    concurrency: int | None = None,
    progress: bool = False,
    desc: str = "",
) -> list[tuple[PredictionRecord, ModelResponse | None]]:
    """Each request's record and (for scored calls) its response, read back from the cache."""
    own = not isinstance(cache, ResponseCache)
    store = ResponseCache(cache) if own else cache
    try:
        records = run_calls(
            [Job(t, r) for t, r in zip(tags, requests, strict=True)], backend, cache=store,
            interpret=_status_only, concurrency=concurrency, progress=progress, desc=desc,
        )  # fmt: skip
        # run_calls keeps text, not logprobs; cached responses carry them (errors are not cached)
        hits = store.get_many([r.request_hash for r in records])
    finally:
        if own:
            store.close()
    return [(rec, hits[rec.request_hash].response if rec.request_hash in hits else None) for rec in records]
