"""The OpenAI-style backend against hostile servers: real sockets on 127.0.0.1, each test bounded in time.

A server that sends too much (plainly or as a gzip bomb), trickles one byte at a time, always answers 500
or 429, sends a list where the answer's text belongs, or reports absurd usage: each ends in a recorded
error (or an unknown count), the bounds of ``docs/backends.md`` ("Bounds on a response") hold, and a
server that keeps failing stops the run with one line naming its URL.
"""

from __future__ import annotations

import json
import socket
import sqlite3
import threading
import time
import tracemalloc
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from blindmcq import cli
from blindmcq.backends.base import MAX_TOKENS_COUNT, ModelRequest, ModelResponse
from blindmcq.backends.bedrock import CircuitBreaker
from blindmcq.backends.openai_api import OpenAIBackend
from blindmcq.config.schema import OpenAIModel, default, model_config
from blindmcq.engine import run_requests
from blindmcq.engine.cache import ResponseCache
from blindmcq.engine.run import Unreachable, server_failed

Handler = Callable[[socket.socket, threading.Event], None]


class RawServer:
    """A socket server that reads each HTTP request and hands the connection to ``handler``."""

    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        self.requests = 0
        self.stop = threading.Event()
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.sock.settimeout(0.1)
        self.threads: list[threading.Thread] = []
        self.lock = threading.Lock()
        self.acceptor = threading.Thread(target=self._accept, daemon=True)
        self.acceptor.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.sock.getsockname()[1]}/v1"

    def _accept(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except (TimeoutError, OSError):
                continue
            thread = threading.Thread(target=self._serve, args=(conn,), daemon=True)
            thread.start()
            self.threads.append(thread)

    def _serve(self, conn: socket.socket) -> None:
        conn.settimeout(5)
        try:
            data = b""
            while b"\r\n\r\n" not in data:
                part = conn.recv(65536)
                if not part:
                    return
                data += part
            head, _, body = data.partition(b"\r\n\r\n")
            length = next(
                (
                    int(line.split(b":")[1])
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length")
                ),
                0,
            )
            while len(body) < length:
                body += conn.recv(65536)
            with self.lock:
                self.requests += 1
            self.handler(conn, self.stop)
        except OSError:
            pass  # the client gave up first
        finally:
            conn.close()

    def close(self) -> None:
        self.stop.set()
        self.acceptor.join(2)
        self.sock.close()
        for thread in self.threads:
            thread.join(2)


def reply(status: str, body: bytes, *headers: str) -> bytes:
    lines = [f"HTTP/1.1 {status}", "Content-Type: application/json", f"Content-Length: {len(body)}",
             "Connection: close", *headers]  # fmt: skip
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def chat(content: Any = "A", usage: dict[str, Any] | None = None) -> bytes:
    body = {"choices": [{"message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
            "usage": usage or {"prompt_tokens": 5, "completion_tokens": 1}}  # fmt: skip
    return json.dumps(body).encode()


def sends(payload: bytes) -> Handler:
    def handler(conn: socket.socket, _stop: threading.Event) -> None:
        conn.sendall(payload)

    return handler


@pytest.fixture
def serve() -> Iterator[Callable[[Handler], RawServer]]:
    servers: list[RawServer] = []

    def start(handler: Handler) -> RawServer:
        servers.append(RawServer(handler))
        return servers[-1]

    yield start
    for server in servers:
        server.close()


def backend(server: RawServer, **cfg: Any) -> OpenAIBackend:
    base = {"name": "m", "backend": "openai", "base_url": server.url, "model_id": "x",
            "retry": {"max_attempts": 3, "base_s": 0.0, "max_s": 0.0}}  # fmt: skip
    return OpenAIBackend(model_config({**base, **cfg}))


def req(i: int = 0) -> ModelRequest:
    return ModelRequest(model="m", system=None, user=f"Q{i}?\nA) x\nB) y")


def test_the_bounds_are_typed_with_schema_defaults() -> None:
    assert default(OpenAIModel, "max_response_bytes") == 4 * 2**20
    assert default(OpenAIModel, "call_deadline_s") == 600
    assert default(OpenAIModel, "breaker_window_s") == 60
    from blindmcq.errors import ConfigError

    with pytest.raises(ConfigError, match="call_deadline_s"):
        model_config({"name": "m", "backend": "openai", "base_url": "http://x", "model_id": "x",
                      "call_deadline_s": 0})  # fmt: skip


def test_a_plain_body_over_the_cap_is_an_error_not_an_answer(serve: Callable[[Handler], RawServer]) -> None:
    server = serve(sends(reply("200 OK", chat("A" + "x" * 3_000_000))))  # "A" and 3 MB more
    out = backend(server, max_response_bytes=1_000_000).complete(req())
    assert out.status == "error" and out.meta["error_code"] == "ResponseTooLarge" and out.text == ""
    assert "1,000,000" in str(out.error) and server.requests == 1  # final: not asked again
    small = serve(sends(reply("200 OK", chat("B"))))
    assert backend(small, max_response_bytes=1_000_000).complete(req()).text == "B"


def _gzip_bomb(decoded_mb: int) -> bytes:
    """A gzip body of a chat answer whose text is ``decoded_mb`` MB of spaces (about 1,000:1)."""
    z = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    parts = [z.compress(b'{"choices":[{"message":{"content":"A')]
    block = b" " * 2**20
    parts += [z.compress(block) for _ in range(decoded_mb)]
    parts += [z.compress(b'"},"finish_reason":"stop"}]}'), z.flush()]
    return b"".join(parts)


def test_a_gzip_bomb_stops_while_decoding(serve: Callable[[Handler], RawServer]) -> None:
    bomb = _gzip_bomb(64)  # 64 MB decoded
    assert len(bomb) < 200_000
    server = serve(sends(reply("200 OK", bomb, "Content-Encoding: gzip")))
    b = backend(server, max_response_bytes=256 * 1024)
    tracemalloc.start()
    try:
        out = b.complete(req())
        _current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert out.status == "error" and out.meta["error_code"] == "ResponseTooLarge"
    assert peak < 16 * 2**20  # never near the 64 MB the body decodes to
    honest = zlib.compressobj(6, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    gz = honest.compress(chat("C")) + honest.flush()
    fine = serve(sends(reply("200 OK", gz, "Content-Encoding: gzip")))
    assert backend(fine, max_response_bytes=256 * 1024).complete(req()).text == "C"


def test_an_encoding_not_asked_for_is_a_malformed_response(serve: Callable[[Handler], RawServer]) -> None:
    server = serve(sends(reply("200 OK", b"\x00\x01garbage", "Content-Encoding: br")))
    out = backend(server).complete(req())
    assert out.status == "error" and out.meta["error_code"] == "MalformedResponse" and "br" in str(out.error)


def _trickle(head: bytes) -> Handler:
    def handler(conn: socket.socket, stop: threading.Event) -> None:
        conn.sendall(head)
        while not stop.wait(0.1):
            conn.sendall(b" ")  # one byte every 0.1 s, forever: each read is quick, the answer never ends

    return handler


@pytest.mark.parametrize(
    "head",
    [
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{",  # the body
        b"HTTP/1.1 200 OK\r\nX-Slow: ",  # the headers never end
    ],
    ids=["body", "headers"],
)
def test_a_trickling_server_meets_the_calls_deadline(
    serve: Callable[[Handler], RawServer], head: bytes
) -> None:
    server = serve(_trickle(head))
    b = backend(server, call_deadline_s=1.0, read_timeout_s=30)
    started = time.monotonic()
    out = b.complete(req())
    took = time.monotonic() - started
    assert out.status == "error" and out.meta["error_code"] == "DeadlineExceeded"
    # the deadline (1 s) bounds the call's whole wall time: each read here is quick, so a per-read timeout
    # (30 s) would never end the call, and the call ends before even one read timeout could; the margin
    # between 1 s and 30 s absorbs a loaded machine (5.8 s seen at load 8, 15.9 s at load 10)
    assert 1.0 <= took < 30


def _run_against(server: RawServer, tmp_path: Path, n: int = 40) -> tuple[str, float]:
    b = backend(server, retry={"max_attempts": 8, "base_s": 0.02, "max_s": 0.05}, breaker_window_s=0.5)
    started = time.monotonic()
    with pytest.raises(Unreachable) as info:
        run_requests(
            [req(i) for i in range(n)], b, cache=tmp_path / "c.sqlite", concurrency=2, progress=False
        )
    return str(info.value), time.monotonic() - started


@pytest.mark.parametrize(("status", "code"), [("500 Internal Server Error", "HTTP500"),
                                              ("429 Too Many Requests", "TooManyRequests")])  # fmt: skip
def test_an_always_failing_server_stops_the_run_naming_the_url(
    serve: Callable[[Handler], RawServer], tmp_path: Path, status: str, code: str
) -> None:
    server = serve(sends(reply(status, b'{"error": {"message": "down"}}')))
    message, took = _run_against(server, tmp_path)
    assert server.url in message and "\n" not in message and "calls in a row failed" in message
    assert code in message  # what the attempts met, also when the backend's breaker ended them
    assert took < 20 and server.requests < 40 * 8  # not every call's whole retry budget


def test_a_dead_server_stops_the_run_through_the_backends_breaker(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens once closed
    b = OpenAIBackend(model_config({
        "name": "m", "backend": "openai", "base_url": f"http://127.0.0.1:{port}/v1", "model_id": "x",
        "retry": {"max_attempts": 50, "base_s": 0.05, "max_s": 0.1}, "breaker_window_s": 0.5,
    }))  # fmt: skip
    started = time.monotonic()
    out = b.complete(req())  # 50 attempts would take seconds: the breaker ends the loop after 0.5 s
    assert out.meta["error_code"] == "CircuitOpen" and time.monotonic() - started < 10
    assert "0.5 s" in str(out.error) and server_failed(out)
    assert b.complete(req(1)).meta["attempts"] == 0  # open: nothing more is sent


def test_the_breaker_opens_only_when_every_attempt_of_the_window_failed() -> None:
    now = [0.0]
    breaker = CircuitBreaker(default(OpenAIModel, "breaker_window_s"), clock=lambda: now[0])
    for _ in range(10):  # throttled, but an answer every 30 s: alive
        breaker.failure("TooManyRequests")
        now[0] += 30
        breaker.success()
    assert not breaker.is_open
    for _ in range(6):  # then nothing but failures for more than a minute
        breaker.failure("HTTP503")
        now[0] += 15
    assert breaker.is_open and "HTTP503" in breaker.why()


def test_what_counts_as_the_server_down() -> None:
    def err(code: str) -> ModelResponse:
        return ModelResponse("", status="error", meta={"error_code": code})

    for code in (
        "HTTP500",
        "HTTP503",
        "TooManyRequests",
        "CircuitOpen",
        "DeadlineExceeded",
        "ConnectionError",
    ):
        assert server_failed(err(code)), code
    for code in ("HTTP400", "HTTP401", "HTTP404", "MalformedResponse", "ResponseTooLarge", "HTTP5xx"):
        assert not server_failed(err(code)), code
    assert not server_failed(ModelResponse("A"))


def test_a_list_for_the_answers_text_is_a_recorded_error(
    serve: Callable[[Handler], RawServer], tmp_path: Path
) -> None:
    server = serve(sends(reply("200 OK", chat(["A"]))))
    out = run_requests([req()], backend(server), cache=tmp_path / "c.sqlite", progress=False)
    response = out[0].response
    assert response.status == "error" and response.meta["error_code"] == "MalformedResponse"
    assert "content" in str(response.error) and response.text == ""


class ListText:
    """A backend (not the HTTP one) that hands back a list as the text."""

    name = "list-text"

    def wire_request(self, request: ModelRequest) -> dict[str, Any]:
        return {"user": request.user}

    def complete(self, request: ModelRequest) -> ModelResponse:
        return ModelResponse(text=["A"])  # type: ignore[arg-type]


def test_the_engine_checks_every_backends_answer_against_the_stored_schema() -> None:
    out = run_requests([req()], ListText(), cache=":memory:", progress=False)
    response = out[0].response
    assert response.status == "error" and response.error is not None
    assert response.error.startswith("MalformedResponse: text: expected a string")


def test_absurd_usage_is_unknown_not_cached(serve: Callable[[Handler], RawServer], tmp_path: Path) -> None:
    server = serve(sends(reply("200 OK", chat("B", usage={"prompt_tokens": 10**30, "completion_tokens": 1}))))
    out = run_requests([req()], backend(server), cache=tmp_path / "c.sqlite", progress=False)
    assert out[0].response.text == "B" and out[0].response.input_tokens is None
    assert out[0].response.output_tokens == 1
    again = run_requests([req()], backend(server), cache=tmp_path / "c.sqlite", progress=False)
    assert again[0].cached and again[0].response.input_tokens is None and server.requests == 1


def test_cache_check_counts_a_row_with_an_out_of_range_count_as_bad(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "c.sqlite"
    with ResponseCache(path) as cache:
        cache.put("good", ModelResponse("A", input_tokens=5), backend="b", model="m", time="t")
        cache.put("big", ModelResponse("B", input_tokens=MAX_TOKENS_COUNT), backend="b", model="m", time="t")
    with sqlite3.connect(path) as conn:  # a row written before counts were range-checked
        payload = json.dumps({"text": "C", "input_tokens": 10**30})
        conn.execute("UPDATE responses SET response = ? WHERE key = 'big'", (payload,))
    assert cli.main(["cache", "check", str(path)]) == 1
    out = capsys.readouterr().out
    assert "bad row big: input_tokens" in out and "2 rows, 1 bad" in out
    with ResponseCache(path) as cache:
        assert cache.get("big") is None and cache.get("good") is not None  # a miss: asked again
