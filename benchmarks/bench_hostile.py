"""What a hostile server costs a run under the shipped defaults (docs/backends.md, "Bounds on a response").

Against local servers on 127.0.0.1: one that always answers 500, and a dead URL (nothing listening), with
the schema's default retry policy and breaker window, 4 calls in flight and 200 requests: seconds until
the run stops (``Unreachable``) and requests sent. Also: a gzip bomb's peak traced memory (decoded size
vs the default 4 MiB cap), and ``parse_answer`` on "option" + 8,000 spaces.

    .venv/bin/python benchmarks/bench_hostile.py [--skip-slow]
"""

from __future__ import annotations

import argparse
import socket
import threading
import time
import tracemalloc
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from _report import result  # run as a script: benchmarks/ is on sys.path

from blindmcq.backends.base import ModelRequest
from blindmcq.backends.openai_api import OpenAIBackend
from blindmcq.engine import run_requests
from blindmcq.engine.run import Unreachable
from blindmcq.tasks.parsing import parse_answer

N_REQUESTS = 200


def _server(status: int, body: bytes, headers: dict[str, str]) -> tuple[ThreadingHTTPServer, list[int]]:
    count = [0]

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("content-length", 0)))
            count[0] += 1
            self.send_response(status)
            for key, value in {"content-type": "application/json", **headers}.items():
                self.send_header(key, value)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd, count


def _cfg(url: str) -> dict[str, Any]:
    return {"name": "m", "backend": "openai", "base_url": url, "model_id": "x", "concurrency": 4}


def _requests() -> list[ModelRequest]:
    return [ModelRequest(model="m", system=None, user=f"q{i}") for i in range(N_REQUESTS)]


def _until_stopped(backend: OpenAIBackend) -> tuple[float, str]:
    started = time.monotonic()
    try:
        run_requests(_requests(), backend, cache=":memory:", progress=False)
        line = "did not stop"
    except Unreachable as exc:
        line = str(exc)
    return time.monotonic() - started, line


def always_500() -> None:
    httpd, count = _server(500, b'{"error": {"message": "internal"}}', {})
    try:
        took, line = _until_stopped(OpenAIBackend(_cfg(f"http://127.0.0.1:{httpd.server_address[1]}/v1")))
    finally:
        httpd.shutdown()
    print(f"always 500: stopped after {took:.1f} s, {count[0]} requests: {line}")
    result("always-500", f"{took:.0f} s", "about a minute (breaker_window_s 60)", None)


def dead() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    took, line = _until_stopped(OpenAIBackend(_cfg(f"http://127.0.0.1:{port}/v1")))
    print(f"dead URL: stopped after {took:.1f} s: {line}")
    result("dead-url", f"{took:.0f} s", "about a minute (breaker_window_s 60)", None)


def gzip_bomb(decoded_mb: int = 200) -> None:
    z = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    block = b" " * 2**20
    body = z.compress(b'{"choices":[{"message":{"content":"A') + b"".join(
        z.compress(block) for _ in range(decoded_mb)
    )
    body += z.compress(b'"}}]}') + z.flush()
    httpd, _count = _server(200, body, {"content-encoding": "gzip"})
    backend = OpenAIBackend(_cfg(f"http://127.0.0.1:{httpd.server_address[1]}/v1"))
    backend.client()  # imports and the client are not the bomb's
    tracemalloc.start()
    try:
        out = backend.complete(ModelRequest(model="m", system=None, user="q"))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
        httpd.shutdown()
    wire = f"{len(body):,} bytes on the wire, {decoded_mb} MB decoded"
    print(f"gzip bomb: {wire}; {out.error}; peak {peak / 2**20:.1f} MiB")
    result("gzip-bomb-peak", f"{peak / 2**20:.1f} MiB", f"{decoded_mb} MB decoded", None)


def parser() -> None:
    symbols = {
        "latin": ["A", "B", "C", "D"],
        "cyrillic": ["А", "Б", "В", "Г"],
        "numerals": ["1", "2", "3", "4"],
    }
    started = time.perf_counter()
    parsed = parse_answer("option" + " " * 8000 + "x", "latin", 4, symbols=symbols)
    took = time.perf_counter() - started
    print(f"parse_answer('option' + 8,000 spaces + 'x'): {parsed.status} in {took * 1000:.1f} ms")
    result("parse-8000-spaces", f"{took * 1000:.1f} ms", "26.5 s before", None)


def main() -> int:
    parser_ = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser_.add_argument(
        "--skip-slow", action="store_true", help="skip the two runs that take about a minute"
    )
    args = parser_.parse_args()
    parser()
    gzip_bomb()
    if not args.skip_slow:
        always_500()
        dead()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
