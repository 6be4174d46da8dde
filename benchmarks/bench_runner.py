"""Runner benchmark: overhead per call, achieved concurrency, and throughput under throttling.

    python benchmarks/bench_runner.py [--calls 20000] [--slow-calls 400] [--quota 100]

1. Overhead: an instant backend through a fresh SQLite cache (every call stored), then the same jobs
   again (every call a cache hit). Calls per second of the runner itself.
2. Concurrency: a backend that takes 50 ms per call, limit 8. Mean calls in flight (total busy time /
   wall time) and throughput against the ideal limit / latency.
3. Throttling: a service with a quota (token bucket, calls/s) that also throttles 30% of calls at
   random; the runner retries with backoff. Successful calls per second against the quota, and every
   call's final status.
"""

from __future__ import annotations

import argparse
import random
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from blindmcq.backends.base import ModelRequest, ModelResponse
from blindmcq.cache import ResponseCache
from blindmcq.runner import Job, RetryPolicy, run_calls


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


class Instant:
    name = "instant"

    def complete(self, request: ModelRequest) -> ModelResponse:
        return ModelResponse(text="A", input_tokens=10, output_tokens=1)


class Slow:
    """Fixed latency; records busy time to measure the mean number of calls in flight."""

    name = "slow"

    def __init__(self, latency_s: float) -> None:
        self.latency_s, self.busy_s, self.lock = latency_s, 0.0, threading.Lock()

    def complete(self, request: ModelRequest) -> ModelResponse:
        start = time.perf_counter()
        time.sleep(self.latency_s)
        with self.lock:
            self.busy_s += time.perf_counter() - start
        return ModelResponse(text="B", latency_s=self.latency_s)


class ThrottlingException(Exception):
    pass


class Quota:
    """A service allowing ``rate`` calls/s (token bucket) that also throttles ``fault`` of calls at random."""

    name = "quota"

    def __init__(self, rate: float, fault: float, latency_s: float, seed: int = 0) -> None:
        self.rate, self.fault, self.latency_s = rate, fault, latency_s
        self.tokens, self.stamp = 1.0, time.monotonic()
        self.rng, self.lock = random.Random(seed), threading.Lock()
        self.outcomes: Counter[str] = Counter()

    def complete(self, request: ModelRequest) -> ModelResponse:
        with self.lock:
            now = time.monotonic()
            self.tokens = min(self.rate * 0.05, self.tokens + (now - self.stamp) * self.rate)  # 50 ms burst
            self.stamp = now
            if self.rng.random() < self.fault:
                outcome = "injected_throttle"
            elif self.tokens >= 1.0:
                self.tokens -= 1.0
                outcome = "ok"
            else:
                outcome = "quota_throttle"
            self.outcomes[outcome] += 1
        if outcome != "ok":
            time.sleep(0.005)
            raise ThrottlingException(outcome)
        time.sleep(self.latency_s)
        return ModelResponse(text="C", latency_s=self.latency_s)


def go(work: list[Job], backend, cache: ResponseCache, **kw) -> tuple[list, float]:
    start = time.perf_counter()
    records = run_calls(work, backend, cache=cache, interpret=interpret, progress=False, **kw)
    return records, time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--calls", type=int, default=20000)
    ap.add_argument("--slow-calls", type=int, default=400)
    ap.add_argument("--quota", type=float, default=100.0)
    ap.add_argument("--quota-calls", type=int, default=800)
    args = ap.parse_args()

    with tempfile.TemporaryDirectory() as tmp, ResponseCache(Path(tmp) / "cache.sqlite") as cache:
        work = jobs(args.calls, "overhead")
        for label in ("uncached (call + store)", "cached (all hits)"):
            records, wall = go(work, Instant(), cache, concurrency=4)
            rate = len(records) / wall
            print(f"overhead, {label}: {rate:,.0f} calls/s ({len(records)} calls, {wall:.2f} s)")

        latency, limit = 0.05, 8
        slow = Slow(latency)
        records, wall = go(jobs(args.slow_calls, "slow"), slow, cache, concurrency=limit)
        in_flight, ideal = slow.busy_s / wall, limit / latency
        print(
            f"concurrency, limit {limit}, {latency * 1000:.0f} ms calls: mean in flight {in_flight:.2f}"
            f" ({in_flight / limit:.1%} of limit); throughput {len(records) / wall:.1f}/s"
            f" = {len(records) / wall / ideal:.1%} of ideal {ideal:.0f}/s"
        )

        quota = Quota(args.quota, fault=0.30, latency_s=latency)
        retry = RetryPolicy(attempts=15, base_s=0.05, max_s=2.0)
        records, wall = go(jobs(args.quota_calls, "quota"), quota, cache, concurrency=16, retry=retry)
        statuses = Counter(r.parse_status for r in records)
        rate = statuses["ok"] / wall
        print(
            f"throttling, quota {args.quota:.0f}/s + 30% injected: {rate:.1f} successful calls/s"
            f" = {rate / args.quota:.1%} of quota; {len(records)}/{args.quota_calls} recorded,"
            f" statuses {dict(statuses)}; service saw {dict(quota.outcomes)}"
        )


if __name__ == "__main__":
    main()
