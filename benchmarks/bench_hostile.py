"""What a hostile server costs a run under the shipped defaults (docs/backends.md, "Bounds on a response").

Against local servers on 127.0.0.1: one that always answers 500, and a dead URL (nothing listening), with
the schema's default retry policy and breaker window, 4 calls in flight and 200 requests: seconds until
the run stops (``Unreachable``) and requests sent. Also: a gzip bomb's peak traced memory (decoded size
vs the default 4 MiB cap), and ``parse_answer`` on "option" + 8,000 spaces.

Big and hostile bank files (``datasets.generic.ReadLimits``): ``blindmcq audit --surface-only`` of a
generated 1M-item JSON Lines bank, wall time and peak RSS (a child process); a generated 1M-row XLSX read
by ``load_generic`` (or stopped by a limit), with its wall time and peak RSS; an XLSX whose sheet declares
300 MB (a 300 MB cell, as a zip of a few hundred kB) refused, with peak traced memory; and
``secrets.scrub_response`` per response, the hot path of every answer and cached row.

    .venv/bin/python benchmarks/bench_hostile.py [--skip-slow] [--items N]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import socket
import subprocess
import sys
import tempfile
import threading
import time
import tracemalloc
import zipfile
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from _report import ROOT, result  # run as a script: benchmarks/ is on sys.path

from blindmcq.backends.base import ModelRequest, ModelResponse
from blindmcq.backends.openai_api import OpenAIBackend
from blindmcq.config.schema import OpenAIModel, model_config
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


def _cfg(url: str) -> OpenAIModel:
    written = {"name": "m", "backend": "openai", "base_url": url, "model_id": "x", "concurrency": 4}
    return model_config(written)


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


# the child's own high-water mark: VmHWM belongs to the process image (ru_maxrss would carry over the
# forking parent's)
_PEAK = """import atexit, sys
def _peak():
    with open("/proc/self/status") as fh:
        kb = next(int(line.split()[1]) for line in fh if line.startswith("VmHWM:"))
    print("peak-kb", kb, file=sys.stderr)
atexit.register(_peak)
"""


def _child(code: str, *args: str) -> tuple[float, float, str]:
    """Wall seconds, peak RSS (GiB) and the last line of output of ``python -c code args`` in a child."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT / "src"), os.environ.get(
        "PYTHONPATH", "")) if p)}  # fmt: skip
    started = time.monotonic()
    command = [sys.executable, "-c", _PEAK + code, *args]
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    took = time.monotonic() - started
    lines = (done.stdout + done.stderr).strip().splitlines()
    peaks = [int(line.split()[1]) for line in lines if line.startswith("peak-kb ")]
    said = [line for line in lines if not line.startswith("peak-kb ")]
    peak = peaks[-1] / 2**20 if peaks else float("nan")  # kB on Linux
    return took, peak, f"rc {done.returncode}: {said[-1] if said else ''}"[:300]


def big_jsonl_audit(n: int) -> None:
    rng = random.Random(0)
    with tempfile.TemporaryDirectory() as tmp:
        bank = Path(tmp) / "bank.jsonl"
        with bank.open("w", encoding="utf-8") as fh:
            for i in range(n):
                options = [f"option {rng.randrange(10**6)} {'x' * rng.randrange(20)}" for _ in range(4)]
                fh.write(json.dumps({"question": f"Question {i}?", "choices": options,
                                     "answer": rng.randrange(4)}) + "\n")  # fmt: skip
        code = "import sys; from blindmcq.cli import main; sys.exit(main())"
        took, peak, line = _child(code, "audit", str(bank), "--surface-only", "--out", f"{tmp}/a")
    print(f"audit --surface-only of a {n:,}-item JSONL: {took:.0f} s, peak RSS {peak:.2f} GiB ({line})")
    result("audit-jsonl-items", f"{took:.0f} s, {peak:.2f} GiB", f"{n:,} items; 363 s, 3.6 GB before", None)


def _sheet_xml(rows: int, dimension: bool = True) -> bytes:
    cells = "".join(f'<c r="{c}1" t="inlineStr"><is><t>{h}</t></is></c>'
                    for c, h in zip("ABCD", ("question", "A", "B", "answer"), strict=True))  # fmt: skip
    body = [f'<row r="1">{cells}</row>']
    for r in range(2, rows + 2):
        body.append(
            f'<row r="{r}"><c r="A{r}" t="inlineStr"><is><t>Question {r}?</t></is></c>'
            f'<c r="B{r}" t="inlineStr"><is><t>yes {r}</t></is></c>'
            f'<c r="C{r}" t="inlineStr"><is><t>no {r}</t></is></c>'
            f'<c r="D{r}"><v>{r % 2}</v></c></row>'
        )
    head = ('<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="http://schemas.openxmlformats.org/'
            'spreadsheetml/2006/main">' + (f'<dimension ref="A1:D{rows + 1}"/>' if dimension else "")
            + "<sheetData>")  # fmt: skip
    return (head + "".join(body) + "</sheetData></worksheet>").encode()


def _xlsx(path: Path, sheet: bytes) -> None:
    """A minimal workbook around one sheet (the parts openpyxl needs), written without openpyxl."""
    ns = "http://schemas.openxmlformats.org"
    parts = {
        "[Content_Types].xml": f'<Types xmlns="{ns}/package/2006/content-types"><Default Extension="rels" '
        f'ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" '
        'ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/'
        'vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/><Override PartName="/xl/worksheets'
        '/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"'
        "/></Types>",
        "_rels/.rels": f'<Relationships xmlns="{ns}/package/2006/relationships"><Relationship Id="r1" '
        f'Type="{ns}/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/>'
        "</Relationships>",
        "xl/workbook.xml": f'<workbook xmlns="{ns}/spreadsheetml/2006/main" xmlns:r="{ns}/officeDocument/'
        '2006/relationships"><sheets><sheet name="S" sheetId="1" r:id="r1"/></sheets></workbook>',
        "xl/_rels/workbook.xml.rels": f'<Relationships xmlns="{ns}/package/2006/relationships"><Relationship '
        f'Id="r1" Type="{ns}/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/>'
        "</Relationships>",
    }
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, text in parts.items():
            z.writestr(name, text)
        z.writestr("xl/worksheets/sheet1.xml", sheet)


_READ = """import sys, logging
from blindmcq.datasets.generic import load_generic
from blindmcq.errors import InputError
logging.disable(logging.WARNING)
try:
    items = load_generic(sys.argv[1], question="question", option_columns=["A", "B"], key="answer")
    print(f"read {len(items):,} items")
except InputError as exc:
    print(f"stopped: {exc}")
"""


def big_xlsx(rows: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "big.xlsx"
        _xlsx(path, _sheet_xml(rows))
        size = path.stat().st_size
        took, peak, line = _child(_READ, str(path))
    print(f"load_generic of a {rows:,}-row XLSX ({size / 2**20:.0f} MiB): {took:.0f} s, peak RSS "
          f"{peak:.2f} GiB ({line})")  # fmt: skip
    before = "did not finish in 300 s before"
    result("xlsx-rows", f"{took:.0f} s, {peak:.2f} GiB", f"{rows:,} rows; {before}", None)


def xlsx_bomb(cell_mb: int = 300) -> None:
    from blindmcq.datasets.generic import load_generic
    from blindmcq.errors import InputError

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bomb.xlsx"
        head = _sheet_xml(0)[: -len(b"</sheetData></worksheet>")]
        text = b"q" * (cell_mb * 10**6)
        cell = b'<row r="2"><c r="A2" t="inlineStr"><is><t>' + text + b"</t></is></c></row>"
        del text
        _xlsx(path, head + cell + b"</sheetData></worksheet>")
        del cell  # the bench's own copy is not the reader's
        size = path.stat().st_size
        tracemalloc.start()
        try:
            load_generic(path, question="question", option_columns=["A", "B"], key="answer")
            line = "read"
        except InputError as exc:
            line = str(exc)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    print(f"XLSX with a {cell_mb} MB cell ({size / 2**10:.0f} KiB): peak {peak / 2**20:.1f} MiB: {line}")
    result("xlsx-bomb-peak", f"{peak / 2**20:.1f} MiB", f"a {cell_mb} MB cell; 3.5 GB before", None)


def scrub_hot_path(n: int = 20000) -> None:
    from blindmcq.secrets import register_secret, scrub_response

    register_secret("bench-secret-value")
    started = time.perf_counter()
    for _ in range(n):
        scrub_response(ModelResponse("The answer is A, since ...", status="ok",
                                     meta={"stop_reason": "end_turn", "model_id": "m", "regions_tried": ["r"],
                                           "reasoning_text": "long " * 50}))  # fmt: skip
    each = (time.perf_counter() - started) / n * 1e6
    print(f"scrub_response: {each:.0f} us a response ({len(os.environ)} environment variables)")
    result("scrub-response", f"{each:.0f} us", "3.2 ms before (values recomputed per string)", None)


def main() -> int:
    parser_ = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser_.add_argument("--skip-slow", action="store_true", help="skip the runs that take a minute or more")
    parser_.add_argument("--items", type=int, default=1_000_000, help="items/rows of the big bank files")
    parser_.add_argument("--read-rows", type=int, default=100_000, help="rows of the XLSX read through")
    args = parser_.parse_args()
    parser()
    gzip_bomb()
    scrub_hot_path()
    xlsx_bomb()
    if not args.skip_slow:
        always_500()
        dead()
        big_xlsx(args.items + 1)  # one past the default ReadLimits.max_rows: stops with one line
        big_xlsx(args.read_rows)  # read through
        big_jsonl_audit(args.items)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
