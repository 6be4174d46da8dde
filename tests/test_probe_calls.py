"""The probe's calls (``tasks.probe.run_calls``) through the engine and the cache: every field recorded,
reruns that pay for nothing, limits per model, batches, leases shared by processes (kill -9, a dead or
live holder), and the progress bar's counts."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections import Counter
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import ClassVar

import pytest

from blindmcq.answers.predictions import read_predictions
from blindmcq.backends.base import Abilities, ModelRequest, ModelResponse
from blindmcq.engine.cache import ResponseCache
from blindmcq.errors import ConfigError
from blindmcq.tasks.probe import Job, run_calls

LABELS = "ABCD"


@dataclass
class Pres:
    item_id: str
    order: list[int]
    key_slot: int | None
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
    label: str | None = None


def interpret(presentation: Pres, response: ModelResponse) -> Parsed:
    text = response.text.strip()
    if text in LABELS:
        return Parsed(LABELS.index(text), "ok", text)
    return Parsed(None, "unparseable")


def make_jobs(n: int, model: str = "m") -> list[Job]:
    rng = random.Random(n)
    jobs = []
    for i in range(n):
        order = rng.sample(range(4), 4)
        jobs.append(Job(Pres(f"item-{i}", order, order.index(0)), ModelRequest(model, None, f"q{i}")))
    return jobs


@dataclass
class FakeBackend:
    """Answers ``A``..``D`` from the request text; counts calls and the most ever in flight."""

    name: str = "fake"
    delay_s: float = 0.0
    jitter_s: float = 0.0
    fail: set[str] = field(default_factory=set)  # request texts that raise
    calls: Counter[str] = field(default_factory=Counter)
    in_flight: Counter[str] = field(default_factory=Counter)
    max_in_flight: Counter[str] = field(default_factory=Counter)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def complete(self, request: ModelRequest) -> ModelResponse:
        with self.lock:
            self.calls[request.user] += 1
            self.in_flight[request.model] += 1
            self.max_in_flight[request.model] = max(
                self.max_in_flight[request.model], self.in_flight[request.model]
            )
        try:
            time.sleep(self.delay_s + random.uniform(0, self.jitter_s))
            if request.user in self.fail:
                raise ConnectionError(f"boom on {request.user}")
            number = int(request.user[1:])
            text = "garbled" if number % 7 == 6 else LABELS[number % 4]
            return ModelResponse(text=text, input_tokens=10, output_tokens=1, latency_s=self.delay_s)
        finally:
            with self.lock:
                self.in_flight[request.model] -= 1


def run(jobs, backend, cache, **kw):
    kw.setdefault("concurrency", 4)
    kw = {"batch_size": 1, **kw}
    return run_calls(jobs, backend, cache=cache, interpret=interpret, progress=False, **kw)


@pytest.fixture
def cache(tmp_path: Path):
    with ResponseCache(tmp_path / "cache.sqlite") as c:
        yield c


def test_records_carry_every_field(cache: ResponseCache) -> None:
    jobs = make_jobs(28)
    backend = FakeBackend()
    records = run(jobs, backend, cache)
    assert [r.item_id for r in records] == [j.presentation.item_id for j in jobs]
    for (pres, request), r in zip(jobs, records, strict=True):
        number = int(request.user[1:])
        assert r.request_hash == request.cache_key("fake")
        assert (r.model, r.backend, r.cached, r.order, r.key_slot) == (
            "m",
            "fake",
            False,
            pres.order,
            pres.key_slot,
        )
        assert datetime.fromisoformat(r.time).utcoffset().total_seconds() == 0
        if number % 7 == 6:
            assert (r.parse_status, r.picked_slot, r.picked_option, r.correct) == (
                "unparseable",
                None,
                None,
                False,
            )
        else:
            assert r.parse_status == "ok" and r.picked_slot == number % 4
            assert r.picked_option == pres.order[r.picked_slot]
            assert r.correct == (r.picked_slot == pres.key_slot)
    assert any(r.correct for r in records) and not all(r.correct for r in records)


def test_rerun_makes_no_calls_and_reproduces_the_records(cache: ResponseCache) -> None:
    jobs = make_jobs(50)
    first = run(jobs, FakeBackend(), cache)
    again = FakeBackend()
    second = run(jobs, again, cache)
    assert sum(again.calls.values()) == 0
    assert all(r.cached for r in second)
    assert [replace(r, cached=False) for r in second] == first  # same time, latency, everything


def test_backend_exceptions_become_error_records_and_are_retried_on_rerun(cache: ResponseCache) -> None:
    jobs = make_jobs(20)
    backend = FakeBackend(fail={"q3", "q11"})
    records = run(jobs, backend, cache)
    assert len(records) == 20
    errors = [r for r in records if r.parse_status == "error"]
    assert [r.item_id for r in errors] == ["item-3", "item-11"]
    assert all("ConnectionError: boom" in r.error and not r.correct for r in errors)
    healed = FakeBackend()
    records = run(jobs, healed, cache)
    assert set(healed.calls) == {"q3", "q11"}
    assert all(r.parse_status != "error" for r in records)


def test_cached_errors_are_final_when_configured(tmp_path: Path) -> None:
    jobs = make_jobs(5)
    with ResponseCache(tmp_path / "c.sqlite", cache_errors=True) as cache:
        run(jobs, FakeBackend(fail={"q1"}), cache)
        again = FakeBackend()
        records = run(jobs, again, cache)
    assert sum(again.calls.values()) == 0
    assert records[1].parse_status == "error" and records[1].cached


@pytest.mark.parametrize("limit", [1, 3])
def test_concurrency_limit_is_respected_and_reached(cache: ResponseCache, limit: int) -> None:
    backend = FakeBackend(delay_s=0.02)
    run(make_jobs(24), backend, cache, concurrency=limit)
    assert backend.max_in_flight["m"] == limit


def test_limits_are_per_model(cache: ResponseCache) -> None:
    jobs = make_jobs(20, "small") + [Job(p, replace(q, model="big")) for p, q in make_jobs(20)]
    backend = FakeBackend(delay_s=0.02)
    records = run(jobs, backend, cache, concurrency={"small": 2, "big": 4})
    assert dict(backend.max_in_flight) == {"small": 2, "big": 4}
    assert [r.model for r in records] == ["small"] * 20 + ["big"] * 20
    with pytest.raises(ConfigError, match="other"):
        run([Job(jobs[0].presentation, replace(jobs[0].request, model="other"))], backend, cache,
            concurrency={"small": 2})  # fmt: skip


def test_order_does_not_depend_on_completion_order(tmp_path: Path) -> None:
    jobs = make_jobs(40)
    with ResponseCache(":memory:") as a, ResponseCache(":memory:") as b:
        serial = run(jobs, FakeBackend(), a, concurrency=1)
        shuffled = run(jobs, FakeBackend(jitter_s=0.01), b, concurrency=8)
    strip = {"time": "", "latency_s": None}
    assert [replace(r, **strip) for r in shuffled] == [replace(r, **strip) for r in serial]


def test_identical_requests_are_sent_once(cache: ResponseCache) -> None:
    pres, request = make_jobs(1)[0]
    jobs = [Job(pres, request), Job(replace(pres, order_id="forced0", forced_slot=0), request)]
    backend = FakeBackend()
    records = run(jobs, backend, cache)
    assert backend.calls["q0"] == 1
    assert [r.cached for r in records] == [False, True]
    assert records[0].raw_response == records[1].raw_response


def test_fault_backend_run_records_every_call_and_rerun_retries_only_errors(cache: ResponseCache) -> None:
    from blindmcq.backends.bedrock import RetryPolicy as BackendRetry
    from blindmcq.backends.fault import FaultBackend, FaultRates

    rates = FaultRates(throttle=0.3, timeout=0.1, server_error=0.1, truncate=0.1, empty=0.1, refuse=0.1)
    # four attempts: with two, runs of throttled or 5xx calls (an outage to the engine now) stop the run
    faulty = FaultBackend(
        FakeBackend(), rates, seed=3, policy=BackendRetry(max_attempts=4), sleep=lambda s: None
    )
    jobs = make_jobs(200)
    records = run(jobs, faulty, cache)
    assert [r.item_id for r in records] == [j.presentation.item_id for j in jobs]
    statuses = Counter(r.parse_status for r in records)
    assert statuses["error"] > 0 and statuses["ok"] > 0 and statuses["unparseable"] > 0  # empty/truncated
    assert all(r.error for r in records if r.parse_status == "error")
    inner = FakeBackend()
    faulty.inner = inner
    again = run(jobs, faulty, cache)
    # only the calls that ended in error are asked again; everything else comes from the cache
    assert set(inner.calls) <= {j.request.user for j, r in zip(jobs, records, strict=True)
                                if r.parse_status == "error"}  # fmt: skip
    assert sum(not r.cached for r in again) == statuses["error"]


def test_default_limit_is_the_backends_and_setting_tags_records(cache: ResponseCache) -> None:
    backend = FakeBackend(delay_s=0.02)
    backend.concurrency = 2  # type: ignore[attr-defined]
    records = run_calls(
        make_jobs(12),
        backend,
        cache=cache,
        interpret=interpret,
        progress=False,
        setting="skew-A",
        batch_size=1,
    )
    assert backend.max_in_flight["m"] == 2
    assert {r.setting for r in records} == {"skew-A"}


def test_interpret_failure_is_recorded_not_raised(cache: ResponseCache) -> None:
    def broken(presentation, response):
        raise KeyError("label")

    records = run_calls(
        make_jobs(3),
        FakeBackend(),
        cache=cache,
        interpret=broken,
        concurrency=2,
        progress=False,
        batch_size=1,
    )
    assert [r.parse_status for r in records] == ["error"] * 3
    assert all(r.error.startswith("interpret: KeyError") and r.raw_response for r in records)


@dataclass
class Batched(FakeBackend):
    abilities: Abilities = field(default_factory=lambda: Abilities(many=True))
    batches: list[int] = field(default_factory=list)

    def complete_many(self, requests: list[ModelRequest]) -> list[ModelResponse]:
        with self.lock:
            self.batches.append(len(requests))
        return [FakeBackend.complete(self, q) for q in requests]

    def complete(self, request: ModelRequest) -> ModelResponse:
        raise AssertionError("batched backend called one at a time")


def test_batches_go_through_complete_many(cache: ResponseCache) -> None:
    backend = Batched()
    records = run(make_jobs(10), backend, cache, batch_size=4)
    assert sorted(backend.batches) == [2, 4, 4]
    assert all(r.parse_status in {"ok", "unparseable"} for r in records)


# --- kill -9 mid-run, then resume -------------------------------------------------------------------

SCRIPT = textwrap.dedent(
    """
    import os, sys, time
    from blindmcq.backends.base import ModelResponse
    from blindmcq.engine.cache import ResponseCache
    from blindmcq.answers.predictions import write_predictions
    from blindmcq.tasks.probe import run_calls

    cache_path, log_path, out_path, n, tests_dir = sys.argv[1:6]
    sys.path.insert(0, tests_dir)
    from test_probe_calls import interpret, make_jobs

    class Logged:
        name = "logged"
        def complete(self, request):
            time.sleep(0.01)
            fd = os.open(log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
            os.write(fd, (request.user + "\\n").encode())  # one write: atomic under O_APPEND
            os.close(fd)
            return ModelResponse(text="ABCD"[int(request.user[1:]) % 4])

    with ResponseCache(cache_path) as cache:
        records = run_calls(make_jobs(int(n)), Logged(), cache=cache, interpret=interpret, concurrency=4,
                            progress=False, batch_size=1)
    write_predictions(records, out_path)
    """
)


def _lines(path: Path) -> list[str]:
    return path.read_text().split() if path.exists() else []


def test_kill_9_then_resume_makes_exactly_the_missing_calls(tmp_path: Path) -> None:
    n, concurrency = 400, 4
    script = tmp_path / "probe.py"
    script.write_text(SCRIPT)
    cache_path, log, out = tmp_path / "c.sqlite", tmp_path / "calls.log", tmp_path / "pred.parquet"
    cmd = [
        sys.executable,
        str(script),
        str(cache_path),
        str(log),
        str(out),
        str(n),
        str(Path(__file__).parent),
    ]
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[1] / "src")}

    proc = subprocess.Popen(cmd, env=env)
    deadline = time.monotonic() + 120
    while len(_lines(log)) < 60 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL and not out.exists()

    before = _lines(log)
    with ResponseCache(cache_path) as cache:
        persisted_keys = cache.keys()
    to_user = {q.cache_key("logged"): q.user for _, q in make_jobs(n)}
    persisted = {to_user[k] for k in persisted_keys}
    assert 60 - concurrency <= len(persisted) < n
    assert persisted <= set(before)
    lost = set(before) - persisted  # answered but not yet committed when killed: in flight
    assert len(lost) <= concurrency

    subprocess.run(cmd, env=env, check=True, timeout=300)
    resumed = _lines(log)[len(before) :]
    assert not set(resumed) & persisted  # nothing already paid for is asked again
    assert Counter(resumed).most_common(1)[0][1] == 1
    assert set(resumed) == set(to_user.values()) - persisted  # exactly the missing calls
    records = read_predictions(out)
    assert records["item_id"].tolist() == [f"item-{i}" for i in range(n)]
    assert records["cached"].sum() == len(persisted)
    assert (records["parse_status"] == "ok").all()


def test_no_jobs_no_calls(cache: ResponseCache) -> None:
    backend = FakeBackend()
    assert run([], backend, cache) == []
    assert not backend.calls


# --- shared in-flight calls: two processes, one cache ----------------------------------------------

SHARED_SCRIPT = textwrap.dedent(
    """
    import os, sys, time
    from blindmcq.backends.base import ModelResponse
    from blindmcq.engine.cache import ResponseCache
    from blindmcq.answers.predictions import write_predictions
    from blindmcq.tasks.probe import run_calls

    cache_path, log_path, out_path, n, tests_dir, go = sys.argv[1:7]
    sys.path.insert(0, tests_dir)
    from test_probe_calls import interpret, make_jobs

    class SlowCounting:
        name = "counting"
        concurrency = 4
        def wire_request(self, request):
            return {"user": request.user}
        def complete(self, request):
            fd = os.open(log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
            os.write(fd, (request.user + "\\n").encode())  # one write: atomic under O_APPEND
            os.close(fd)
            time.sleep(0.05)
            return ModelResponse(text="ABCD"[int(request.user[1:]) % 4])

    while not os.path.exists(go):  # both processes start together
        time.sleep(0.005)
    jobs = make_jobs(int(n))
    with ResponseCache(cache_path) as cache:
        records = run_calls(jobs + jobs[: int(n) // 2], SlowCounting(), cache=cache, interpret=interpret,
                            progress=False, lease_ttl_s=30, batch_size=1)
    write_predictions(records, out_path)
    """
)


def test_two_processes_on_one_cache_pay_each_request_once(tmp_path: Path) -> None:
    n = 60
    script = tmp_path / "probe.py"
    script.write_text(SHARED_SCRIPT)
    cache_path, log, go = tmp_path / "c.sqlite", tmp_path / "calls.log", tmp_path / "go"
    ResponseCache(cache_path).close()
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[1] / "src")}
    outs = [tmp_path / f"pred{i}.parquet" for i in range(2)]
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                str(script),
                str(cache_path),
                str(log),
                str(out),
                str(n),
                str(Path(__file__).parent),
                str(go),
            ],
            env=env,
        )
        for out in outs
    ]
    go.touch()
    assert [p.wait(timeout=300) for p in procs] == [0, 0]
    calls = _lines(log)
    assert len(calls) == n == len(set(calls))  # total calls == unique requests
    per_process = [read_predictions(out) for out in outs]
    for records in per_process:
        assert records["item_id"].tolist()[:n] == [f"item-{i}" for i in range(n)]
        assert (records["parse_status"] == "ok").all()
    # every unique request was paid for by exactly one of the two runs
    new = [int((~records["cached"]).sum()) for records in per_process]
    assert sum(new) == n
    with ResponseCache(cache_path) as cache:
        assert len(cache) == n
        assert all(cache.lease(k) is None for k in cache.keys())  # no lease left behind


def test_a_stale_lease_from_a_dead_holder_is_taken_over(tmp_path: Path) -> None:
    from blindmcq.backends.base import request_key

    backend = FakeBackend()
    jobs = make_jobs(6)
    with ResponseCache(tmp_path / "c.sqlite") as cache:
        stale = request_key(backend, jobs[2].request)
        # a holder that crashed mid-call: its lease runs out shortly and is never renewed
        assert cache.claim(stale, "dead-host:1:0", 0.3).state == "claimed"
        records = run(jobs, backend, cache, poll_s=(0.02, 0.05))
        assert backend.calls[jobs[2].request.user] == 1  # taken over and paid once
        assert not records[2].cached and records[2].parse_status == "ok"
        assert sum(backend.calls.values()) == 6
        assert cache.lease(stale) is None and stale in cache


def test_a_live_lease_is_waited_for_and_its_answer_served_from_the_cache(tmp_path: Path) -> None:
    from blindmcq.backends.base import request_key

    backend = FakeBackend()
    jobs = make_jobs(4)
    with ResponseCache(tmp_path / "c.sqlite") as cache:
        key = request_key(backend, jobs[1].request)
        assert cache.claim(key, "other", 60).state == "claimed"

        def other_process_answers() -> None:
            while backend.calls.total() < 3:  # after our run has made its own calls
                time.sleep(0.01)
            time.sleep(0.1)
            cache.put(key, ModelResponse(text="D"), backend="fake", model="m", time="t", holder="other")

        thread = threading.Thread(target=other_process_answers)
        thread.start()
        records = run(jobs, backend, cache, poll_s=(0.02, 0.05))
        thread.join()
    assert jobs[1].request.user not in backend.calls  # never paid for twice
    assert records[1].cached and records[1].raw_response == "D"


# --- the progress bar and the summary count alike ---------------------------------------------------


class RecordingBar:
    """Stands in for tqdm: keeps every postfix the runner sets."""

    bars: ClassVar[list[RecordingBar]] = []

    def __init__(self, *args: object, total: int = 0, **kwargs: object) -> None:
        self.total, self.n, self.postfixes = total, 0, []
        RecordingBar.bars.append(self)

    def update(self, n: int) -> None:
        self.n += n

    def set_postfix(self, values: dict[str, int], refresh: bool = True) -> None:
        self.postfixes.append(dict(values))

    def set_postfix_str(self, text: str) -> None:
        self.postfixes.append({"text": text})

    def close(self) -> None:
        pass


def test_progress_bar_counts_equal_the_summary(cache: ResponseCache, monkeypatch: pytest.MonkeyPatch) -> None:
    import blindmcq.engine.run as runner
    from blindmcq.answers.predictions import to_frame, to_table
    from blindmcq.stages.probe import calls_summary

    monkeypatch.setattr(runner, "tqdm", RecordingBar)
    jobs = make_jobs(30)
    backend = FakeBackend()
    run(jobs[:10], backend, cache)  # 10 in the cache already
    RecordingBar.bars.clear()
    # 30 unique requests, 10 cached, and 8 repeated in the same run (answered by their first call)
    records = run(jobs + jobs[12:20], backend, cache)
    summary = calls_summary(to_frame(to_table(records)))
    bar = RecordingBar.bars[-1]
    final = bar.postfixes[-1]
    assert (final["from_cache"], final["new_calls"]) == (summary["from_cache"], summary["new_calls"])
    assert (summary["from_cache"], summary["new_calls"]) == (18, 20)
    assert bar.n == bar.total == len(records) == summary["calls"]
    cached = sum(r.cached for r in records)  # the bar's last figures, counted again from the records
    errors = sum(r.parse_status == "error" for r in records)
    assert final == {"from_cache": cached, "new_calls": len(records) - cached, "errors": errors}


# --- stop reasons -----------------------------------------------------------------------------------


def test_stop_reason_is_recorded_per_call_and_old_files_still_read(
    cache: ResponseCache, tmp_path: Path
) -> None:
    import pyarrow.parquet as pq

    from blindmcq.answers.predictions import write_predictions

    class Stops(FakeBackend):
        def complete(self, request: ModelRequest) -> ModelResponse:
            response = super().complete(request)
            response.meta["stop_reason"] = "max_tokens" if request.user == "q1" else "end_turn"
            return response

    records = run(make_jobs(3), Stops(), cache)
    assert [r.stop_reason for r in records] == ["end_turn", "max_tokens", "end_turn"]
    again = run(make_jobs(3), Stops(), cache)  # from the cache: the same stop reasons
    assert [r.stop_reason for r in again] == ["end_turn", "max_tokens", "end_turn"] and all(
        r.cached for r in again
    )
    path = write_predictions(records, tmp_path / "p.parquet")
    assert read_predictions(path)["stop_reason"].tolist() == ["end_turn", "max_tokens", "end_turn"]
    old = tmp_path / "old.parquet"  # written before the column existed
    pq.write_table(pq.read_table(path).drop_columns(["stop_reason"]), old)
    assert read_predictions(old)["stop_reason"].isna().all()
    assert read_predictions(old)["item_id"].tolist() == [r.item_id for r in records]
