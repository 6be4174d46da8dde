"""Runner benchmark: overhead per call, achieved concurrency, and throughput under throttling.

    python benchmarks/bench_runner.py [--calls 20000] [--slow-calls 400] [--quota 100]

1. Overhead: an instant backend through a fresh SQLite cache (every call stored), then the same jobs
   again (every call a cache hit). Calls per second of the runner itself.
2. Concurrency: a backend that takes 50 ms per call, limit 8. Mean calls in flight (busy time over
   the calling span) and end-to-end throughput (setup included) against the ideal limit / latency.
3. Throttling: a service with a quota (token bucket, calls/s; ThrottlingException over it), behind
   the fault fake injecting a throttle into 30% of requests; retries are Bedrock's own path
   (``call_with_retries``, full-jitter backoff). Successful calls/s against the quota, and every call's
   final status.
"""

from __future__ import annotations

import argparse
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from _report import result  # run as a script: benchmarks/ is on sys.path
from botocore.exceptions import ClientError

from blindmcq.backends.base import ModelRequest, ModelResponse
from blindmcq.backends.bedrock import RetryPolicy
from blindmcq.backends.fault import FaultBackend, FaultRates, InstantBackend, SlowBackend
from blindmcq.engine.cache import ResponseCache
from blindmcq.tasks.probe import Job, run_calls


@dataclass
class Pres:
    item_id: str
    order: tuple[int, ...] = (0, 1, 2, 3)
    key_slot: int = 0
    condition: str = "blind"
    phrasing: str = "original"
    labels: str = "latin"
    protocol: str = "sl"
    reasoning: str = "direct"
    order_id: str = "rot0"
    forced_slot: int | None = None
    n_options: int = 4
    setting: str = ""


@dataclass
class Parsed:
    slot: int | None
    status: str


def interpret(presentation: Pres, response: ModelResponse) -> Parsed:
    return (
        Parsed("ABCD".find(response.text), "ok")
        if response.text in ("A", "B", "C", "D")
        else Parsed(None, "unparseable")
    )


def jobs(n: int, tag: str) -> list[Job]:
    return [Job(Pres(f"{tag}-{i}"), ModelRequest("m", None, f"{tag} question {i}")) for i in range(n)]


class Quota:
    """A service allowing ``rate`` calls/s (token bucket, 50 ms burst); over it, ThrottlingException."""

    name = "quota"

    def __init__(self, rate: float, latency_s: float) -> None:
        self.rate, self.latency_s = rate, latency_s
        self.tokens, self.stamp, self.lock = 1.0, time.monotonic(), threading.Lock()
        self.outcomes: Counter[str] = Counter()

    def complete(self, request: ModelRequest) -> ModelResponse:
        with self.lock:
            now = time.monotonic()
            self.tokens = min(self.rate * 0.05, self.tokens + (now - self.stamp) * self.rate)
            self.stamp = now
            allowed = self.tokens >= 1.0
            self.tokens -= allowed
            self.outcomes["ok" if allowed else "over_quota"] += 1
        if not allowed:
            error = {"Error": {"Code": "ThrottlingException", "Message": "over quota"},
                     "ResponseMetadata": {"HTTPStatusCode": 429}}  # fmt: skip
            raise ClientError(error, "Converse")  # type: ignore[arg-type]
        time.sleep(self.latency_s)
        return ModelResponse(text="C", latency_s=self.latency_s)


class Watched:
    """Wraps a backend: each call's start and end, and the error codes its retries met."""

    def __init__(self, inner) -> None:
        self.inner, self.name = inner, inner.name
        self.spans: list[tuple[float, float]] = []
        self.retried: Counter[str] = Counter()

    def complete(self, request: ModelRequest) -> ModelResponse:
        start = time.perf_counter()
        response = self.inner.complete(request)
        self.spans.append((start, time.perf_counter()))  # list.append is atomic under the GIL
        self.retried.update(response.meta.get("retried_codes", []))
        return response

    def mean_in_flight(self) -> float:
        """Busy time over the span from the first call's start to the last call's end."""
        first, last = min(s for s, _ in self.spans), max(e for _, e in self.spans)
        return sum(e - s for s, e in self.spans) / (last - first)


def go(work: list[Job], backend, cache: ResponseCache, **kw) -> tuple[list, float]:
    start = time.perf_counter()
    records = run_calls(work, backend, cache=cache, interpret=interpret, progress=False, batch_size=1, **kw)
    return records, time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--calls", type=int, default=20000)
    ap.add_argument("--slow-calls", type=int, default=800)
    ap.add_argument("--quota", type=float, default=100.0)
    ap.add_argument("--quota-calls", type=int, default=1000)
    args = ap.parse_args()

    with tempfile.TemporaryDirectory() as tmp, ResponseCache(Path(tmp) / "cache.sqlite") as cache:
        work = jobs(args.calls, "overhead")
        overhead: dict[str, float] = {}
        for label in ("uncached (call + store)", "cached (all hits)"):
            records, wall = go(work, InstantBackend(), cache, concurrency=4)
            rate = overhead[label] = len(records) / wall
            print(f"overhead, {label}: {rate:,.0f} calls/s ({len(records)} calls, {wall:.2f} s)")

        latency, limit = 0.05, 8
        slow = Watched(SlowBackend(latency))
        records, wall = go(jobs(args.slow_calls, "slow"), slow, cache, concurrency=limit)
        ideal = limit / latency
        print(
            f"concurrency, limit {limit}, {latency * 1000:.0f} ms calls: mean in flight"
            f" {slow.mean_in_flight():.2f} = {slow.mean_in_flight() / limit:.1%} of limit"
            f" (peak {slow.inner.peak_in_flight}); end-to-end {len(records) / wall:.1f} calls/s"
            f" = {len(records) / wall / ideal:.1%} of ideal {ideal:.0f}/s"
        )

        quota = Quota(args.quota, latency_s=latency)
        # 30% of requests meet an injected throttle; Bedrock's own retry path handles both kinds
        policy = RetryPolicy(15, base_s=0.05, max_s=2.0)
        service = Watched(FaultBackend(quota, FaultRates(throttle=0.3, throttle_burst=1), policy=policy))
        records, wall = go(jobs(args.quota_calls, "quota"), service, cache, concurrency=16)
        statuses = Counter(r.parse_status for r in records)
        rate = statuses["ok"] / wall
        cached_rate = overhead["cached (all hits)"]
        result(
            "runner",
            f"{cached_rate:,.0f} cached calls/s; {slow.mean_in_flight() / limit:.0%} of limit in flight",
            "aim 2,000 cached calls/s; limit 8",
            cached_rate / 2000,
            f"{rate / args.quota:.0%} of a throttled quota",
        )
        print(
            f"throttling, quota {args.quota:.0f}/s + 30% injected: {rate:.1f} successful calls/s"
            f" = {rate / args.quota:.1%} of quota; {len(records)}/{args.quota_calls} recorded,"
            f" statuses {dict(statuses)}; retried {dict(service.retried)}"
            f" ({quota.outcomes['over_quota']} over quota, the rest injected)"
        )


if __name__ == "__main__":
    main()
