"""``Retry-After`` is honoured (OpenAI-style and Bedrock), capped, jittered, and
counted on the progress bar."""

from __future__ import annotations

import json
import random
import threading
from collections.abc import Iterator
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from botocore.exceptions import ClientError

from blindmcq.backends.base import ModelRequest, ModelResponse
from blindmcq.backends.bedrock import (
    RETRY_AFTER_JITTER,
    RetryableError,
    RetryPolicy,
    call_with_retries,
    classify_exception,
    parse_retry_after,
)
from blindmcq.backends.openai_api import OpenAIBackend
from blindmcq.config.schema import model_config
from blindmcq.engine.run import Result, with_waits


def test_parse_retry_after_reads_seconds_dates_and_milliseconds() -> None:
    assert parse_retry_after({"Retry-After": "3"}) == 3.0
    assert parse_retry_after({"retry-after-ms": "1500"}) == 1.5
    assert parse_retry_after({"retry-after": formatdate(1_000_010, usegmt=True)}, now=1_000_000) == 10.0
    assert parse_retry_after({"Retry-After": "soon"}) is None
    assert parse_retry_after({"Retry-After": "-4"}) is None
    assert parse_retry_after({}) is None and parse_retry_after(None) is None


class _429Server:
    """Answers 429 with ``Retry-After`` a set number of times, then a chat completion."""

    def __init__(self, retry_after: str, failures: int) -> None:
        self.left = failures
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("content-length", 0)))
                if server.left > 0:
                    server.left -= 1
                    status, body = 429, {"error": {"message": "slow down"}}
                else:
                    status, body = 200, {"choices": [{"message": {"content": "A"}, "finish_reason": "stop"}],
                                         "usage": {"prompt_tokens": 3, "completion_tokens": 1}}  # fmt: skip
                payload = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                if status == 429:
                    self.send_header("retry-after", retry_after)
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"


@pytest.fixture
def throttling() -> Iterator[_429Server]:
    srv = _429Server("3", failures=2)
    try:
        yield srv
    finally:
        srv.httpd.shutdown()
        srv.httpd.server_close()


@pytest.mark.parametrize(("max_s", "expected"), [(20.0, 3.0), (2.0, 2.0)])
def test_openai_backend_waits_what_retry_after_says_capped_and_jittered(
    throttling: _429Server, max_s: float, expected: float
) -> None:
    sleeps: list[float] = []
    backend = OpenAIBackend(
        model_config({"name": "t", "backend": "openai", "base_url": throttling.url, "model_id": "m",
                      "retry": {"max_attempts": 4, "base_s": 0.01, "max_s": max_s}}),
        sleep=sleeps.append,
    )  # fmt: skip
    out = backend.complete(ModelRequest(model="t", system=None, user="q"))
    assert out.status == "ok" and out.meta["retried_codes"] == ["TooManyRequests"] * 2
    assert len(sleeps) == 2
    assert all(expected <= s <= expected * (1 + RETRY_AFTER_JITTER) for s in sleeps), sleeps
    assert len(set(sleeps)) == 2  # jittered: not the same instant each time
    assert out.meta["retry_after_s"] == pytest.approx(sum(sleeps), abs=1e-3)


def _throttle(headers: dict[str, str]) -> ClientError:
    return ClientError(
        {"Error": {"Code": "ThrottlingException", "Message": "Too many requests"},
         "ResponseMetadata": {"HTTPStatusCode": 429, "HTTPHeaders": headers}},
        "Converse",
    )  # fmt: skip


def test_bedrock_throttle_with_retry_after_is_waited_out() -> None:
    kind = classify_exception(_throttle({"retry-after": "3"}))
    assert isinstance(kind, RetryableError) and kind.retry_after == 3.0 and kind.throttle
    calls = {"n": 0}

    def attempt(_: int) -> ModelResponse:
        calls["n"] += 1
        if calls["n"] < 3:
            raise _throttle({"retry-after": "3"})
        return ModelResponse(text="A")

    sleeps: list[float] = []
    out = call_with_retries(attempt, RetryPolicy(max_attempts=5, base_s=0.01, max_s=60.0),
                            sleep=sleeps.append, rng=random.Random(0))  # fmt: skip
    assert out.status == "ok" and len(sleeps) == 2
    assert all(3.0 <= s <= 3.0 * (1 + RETRY_AFTER_JITTER) for s in sleeps)
    # without the header: the usual jittered backoff, well under the 3 s asked for above
    no_header = classify_exception(_throttle({}))
    assert isinstance(no_header, RetryableError) and no_header.retry_after is None


def test_the_progress_bar_counts_calls_that_waited() -> None:
    request = ModelRequest(model="m", system=None, user="q")
    waited = Result(request, ModelResponse(text="A", meta={"retry_after_s": 3.2}), "k", "t", False, "b")
    plain = Result(request, ModelResponse(text="A"), "k2", "t", False, "b")
    cached = Result(request, ModelResponse(text="A", meta={"retry_after_s": 1.0}), "k3", "t", True, "b")
    assert with_waits({"new_calls": 3}, [waited, plain, cached]) == {"new_calls": 3, "retry_after": 1}
    assert with_waits({"new_calls": 1}, [plain]) == {"new_calls": 1}
