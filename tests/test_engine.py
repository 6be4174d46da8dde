"""The engine returns full responses (log-probabilities, stop reason, usage) and knows no task."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from blindmcq.backends.base import ModelRequest, ModelResponse
from blindmcq.engine import run_requests, tally
from blindmcq.engine.cache import ResponseCache


class Scoring:
    name = "scoring"
    concurrency = 2

    def __init__(self) -> None:
        self.calls = 0

    def wire_request(self, request: ModelRequest) -> dict[str, Any]:
        return {"user": request.user, "choices": list(request.choices)}

    def complete(self, request: ModelRequest) -> ModelResponse:
        self.calls += 1
        logprobs = [-float(i + 1) for i in range(len(request.choices))]
        return ModelResponse(
            text=request.choices[0], input_tokens=3, output_tokens=1, choice_logprobs=logprobs,
            meta={"stop_reason": "end_turn"},
        )  # fmt: skip


def test_full_responses_in_order_and_from_the_cache(tmp_path: Path) -> None:
    requests = [ModelRequest(model="m", system=None, user=f"q{i}", choices=("A", "B", "C")) for i in range(5)]
    backend = Scoring()
    first = run_requests(requests + requests[:2], backend, cache=tmp_path / "c.sqlite", progress=False)
    assert backend.calls == 5  # repeats are answered by their first call
    assert [r.request.user for r in first] == [f"q{i}" for i in [0, 1, 2, 3, 4, 0, 1]]
    assert all(r.response.choice_logprobs == [-1.0, -2.0, -3.0] for r in first)
    assert all(r.stop_reason == "end_turn" and r.response.input_tokens == 3 for r in first)
    assert tally(first) == {"from_cache": 2, "new_calls": 5, "errors": 0}
    with ResponseCache(tmp_path / "c.sqlite") as cache:
        again = run_requests(requests, backend, cache=cache, progress=False)
    assert backend.calls == 5 and all(r.cached for r in again)
    assert [r.response.choice_logprobs for r in again] == [r.response.choice_logprobs for r in first[:5]]
    assert [r.key for r in again] == [r.key for r in first[:5]]


def test_a_failing_backend_gives_error_responses_not_a_crash(tmp_path: Path) -> None:
    class Broken(Scoring):
        def complete(self, request: ModelRequest) -> ModelResponse:
            raise TimeoutError("slow")

    out = run_requests(
        [ModelRequest(model="m", system=None, user="q")], Broken(), cache=":memory:", progress=False
    )
    assert out[0].response.status == "error" and "TimeoutError" in (out[0].response.error or "")
    assert tally(out)["errors"] == 1


def test_the_engine_imports_no_task() -> None:
    code = (
        "import sys, blindmcq.engine; "
        "print(sorted(m for m in sys.modules if m.startswith('blindmcq.') and m.split('.')[1] not in "
        "('engine', 'backends', 'errors', 'atomic', 'secrets', 'vocabulary', 'config', 'labels')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
