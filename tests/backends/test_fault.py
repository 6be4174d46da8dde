from __future__ import annotations

import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from blindmcq.backends.base import ModelRequest
from blindmcq.backends.bedrock import RetryPolicy
from blindmcq.backends.fault import FaultBackend, FaultRates, InstantBackend, SlowBackend
from blindmcq.backends.heuristic import HeuristicBackend
from blindmcq.config.schema import Faults, HeuristicModel, typed
from blindmcq.errors import ConfigError

OPTIONS = ["короткий", "найдовший варіант відповіді", "середній варіант", "ще"]


def req(i: int) -> ModelRequest:
    return ModelRequest(
        model="f",
        system=None,
        user=f"питання {i}",
        choices=("A", "B", "C", "D"),
        extra={"option_texts": OPTIONS},
    )


def fault(rates: dict[str, Any], seed: int = 0, attempts: int = 4) -> tuple[FaultBackend, list[float]]:
    sleeps: list[float] = []
    inner = HeuristicBackend(HeuristicModel(strategy="longest"))
    backend = FaultBackend(
        inner,
        FaultRates.from_cfg(typed(Faults, rates, "faults")),
        seed=seed,
        policy=RetryPolicy(max_attempts=attempts, base_s=0.1),
        sleep=sleeps.append,
    )
    return backend, sleeps


def test_no_faults_passes_the_inner_answer_through() -> None:
    backend, sleeps = fault({})
    assert {backend.complete(req(i)).text for i in range(20)} == {"B"}
    assert sleeps == []


def test_throttling_bursts_are_retried_through_the_shared_path() -> None:
    backend, sleeps = fault({"throttle": 1.0, "throttle_burst": 2}, attempts=3)
    responses = [backend.complete(req(i)) for i in range(50)]
    assert all(r.status == "ok" and r.text == "B" for r in responses)
    bursts = Counter(len(r.meta["retried_codes"]) for r in responses)
    assert set(bursts) == {1, 2}  # bursts of one or two throttles
    assert all(set(r.meta["retried_codes"]) == {"ThrottlingException"} for r in responses)
    assert len(sleeps) == sum(k * n for k, n in bursts.items())


def test_burst_longer_than_budget_is_a_recorded_error() -> None:
    backend, _ = fault({"throttle": 1.0, "throttle_burst": 1}, attempts=1)
    response = backend.complete(req(0))
    assert response.status == "error"
    assert response.meta["error_code"] == "ThrottlingException"


def test_timeouts_and_5xx_are_retried() -> None:
    backend, _ = fault({"timeout": 0.2, "server_error": 0.2}, attempts=10)
    responses = [backend.complete(req(i)) for i in range(200)]
    codes = Counter(c for r in responses for c in r.meta["retried_codes"])
    assert codes["Timeout"] > 20 and codes["ServiceUnavailableException"] > 20
    assert all(r.status == "ok" for r in responses)


def test_answer_faults_at_their_rates() -> None:
    backend, _ = fault({"refuse": 0.1, "empty": 0.1, "truncate": 0.1})
    responses = [backend.complete(req(i)) for i in range(1000)]
    kinds = Counter(r.meta.get("fault", "none") for r in responses)
    for kind in ("refused", "empty", "truncated"):
        assert 60 < kinds[kind] < 140, kinds
    assert all(r.status == "refused" for r in responses if r.meta.get("fault") == "refused")
    assert all(r.text == "" for r in responses if r.meta.get("fault") in ("empty", "truncated"))


def test_latency_tail() -> None:
    backend, sleeps = fault({"latency_s": 0.1, "tail_rate": 0.05, "tail_s": 5.0})
    for i in range(400):
        backend.complete(req(i))
    tail = sum(1 for s in sleeps if s == 5.0)
    body = sorted(s for s in sleeps if s != 5.0)
    assert 5 < tail < 40
    assert 0.07 < body[len(body) // 2] < 0.14  # median near latency_s


def test_faults_depend_on_seed_and_request_not_on_order() -> None:
    rates = {"throttle": 0.3, "refuse": 0.2, "empty": 0.1, "timeout": 0.1}
    a, _ = fault(rates, seed=1)
    b, _ = fault(rates, seed=1)
    c, _ = fault(rates, seed=2)
    forward = [(r.status, r.text, r.meta.get("attempts")) for r in map(a.complete, map(req, range(100)))]
    backward = [
        (r.status, r.text, r.meta.get("attempts")) for r in map(b.complete, map(req, reversed(range(100))))
    ]
    other = [(r.status, r.text, r.meta.get("attempts")) for r in map(c.complete, map(req, range(100)))]
    assert forward == backward[::-1]
    assert forward != other


def test_bad_rates_name_the_key() -> None:
    with pytest.raises(ConfigError, match=r"faults\.throttel"):
        typed(Faults, {"throttel": 0.1}, "faults")
    with pytest.raises(ConfigError, match=r"faults\.refuse"):
        typed(Faults, {"refuse": 1.5}, "faults")


def test_instant_and_slow_backends() -> None:
    assert InstantBackend().complete(req(0)).text == "A"
    slow = SlowBackend(0.05, concurrency=4)
    started = time.perf_counter()
    with ThreadPoolExecutor(4) as pool:
        texts = list(pool.map(slow.complete, map(req, range(8))))
    elapsed = time.perf_counter() - started
    assert [t.text for t in texts] == ["A"] * 8
    assert slow.peak_in_flight == 4 and slow.in_flight == 0
    assert elapsed < 0.05 * 8  # overlapped, not serial
