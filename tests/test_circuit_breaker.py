"""With nothing listening at the model's URL the run stops with one line naming the
URL after a few consecutive connection failures, instead of failing (and retrying) call by call."""

from __future__ import annotations

import socket
import time
from pathlib import Path
from typing import Any

import pytest

from blindmcq.backends.base import ModelRequest, ModelResponse
from blindmcq.backends.openai_api import OpenAIBackend
from blindmcq.config.schema import model_config
from blindmcq.engine import run_requests
from blindmcq.engine.run import BREAKER_CALLS, Unreachable, connection_failed
from blindmcq.errors import InputError


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])  # closed again on exit: nothing listens there


def _requests(n: int) -> list[ModelRequest]:
    return [ModelRequest(model="m", system=None, user=f"q{i}") for i in range(n)]


class Counting(OpenAIBackend):
    calls = 0

    def complete(self, request: ModelRequest) -> ModelResponse:
        type(self).calls += 1
        return super().complete(request)


def test_nothing_listening_stops_the_run_naming_the_url(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    backend = Counting(model_config({"name": "m", "backend": "openai", "base_url": url, "model_id": "x",
                                     "retry": {"max_attempts": 2, "base_s": 0.0, "max_s": 0.0}}))  # fmt: skip
    started = time.monotonic()
    with pytest.raises(Unreachable) as info:
        run_requests(_requests(52), backend, cache=tmp_path / "c.sqlite", concurrency=2, progress=False)
    message = str(info.value)
    assert isinstance(info.value, InputError) and url in message and "\n" not in message
    assert "0 distinct answer(s) are in the cache" in message  # no call was answered: none is cached
    assert Counting.calls < 52 and time.monotonic() - started < 60


class Flaky:
    """Every other call cannot connect: never BREAKER_CALLS in a row."""

    name = "flaky"
    concurrency = 1

    def __init__(self) -> None:
        self.n = 0

    def wire_request(self, request: ModelRequest) -> dict[str, Any]:
        return {"user": request.user}

    def complete(self, request: ModelRequest) -> ModelResponse:
        self.n += 1
        if self.n % 2:
            raise ConnectionRefusedError("[Errno 111] Connection refused")
        return ModelResponse(text="A")


def test_intermittent_failures_do_not_trip_the_breaker() -> None:
    out = run_requests(_requests(3 * BREAKER_CALLS), Flaky(), cache=":memory:", progress=False)
    assert len(out) == 3 * BREAKER_CALLS
    assert sum(connection_failed(r.response) for r in out) > BREAKER_CALLS  # many, never in a row


def test_what_counts_as_a_connection_failure() -> None:
    assert connection_failed(ModelResponse("", status="error", meta={"error_code": "ConnectionError"}))
    assert connection_failed(ModelResponse("", status="error", error="ConnectionRefusedError: refused"))
    assert not connection_failed(ModelResponse("", status="error", error="HTTP401: bad key"))
    assert not connection_failed(ModelResponse("", status="error", meta={"error_code": "Timeout"}))
    assert not connection_failed(ModelResponse("A"))
