"""A full or read-only disk is one line naming the path; a paid answer that cannot
be stored stops further calls and its loss is said (not a raw sqlite3/OSError traceback)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from blindmcq.backends.base import ModelRequest, ModelResponse
from blindmcq.engine import run_requests
from blindmcq.engine.cache import CacheUnwritable, ResponseCache, utc_now
from blindmcq.errors import InputError
from blindmcq.stages._main import run_stage

REPO = Path(__file__).resolve().parents[1]


class Paid:
    name = "paid"
    concurrency = 1

    def __init__(self) -> None:
        self.calls = 0

    def wire_request(self, request: ModelRequest) -> dict[str, Any]:
        return {"user": request.user}

    def complete(self, request: ModelRequest) -> ModelResponse:
        self.calls += 1
        return ModelResponse(text="A" * 4000)


def _requests(n: int) -> list[ModelRequest]:
    return [ModelRequest(model="m", system=None, user=f"q{i}") for i in range(n)]


@pytest.mark.parametrize("fault", ["read-only", "full"])
def test_an_unwritable_cache_stops_paying_and_says_what_was_lost(tmp_path: Path, fault: str) -> None:
    path = tmp_path / "c.sqlite"
    cache = ResponseCache(path)
    cache.put("seed", ModelResponse(text="x"), backend="paid", model="m", time=utc_now())
    if fault == "read-only":
        cache._conn.execute("PRAGMA query_only=ON")  # every write: "attempt to write a readonly database"
    else:
        pages = cache._conn.execute("PRAGMA page_count").fetchone()[0]
        cache._conn.execute(f"PRAGMA max_page_count={pages}")  # every growth: "database or disk is full"
    backend = Paid()
    with pytest.raises(CacheUnwritable) as info:
        run_requests(_requests(5), backend, cache=cache, concurrency=1, progress=False)
    message = str(info.value)
    assert isinstance(info.value, InputError) and "\n" not in message and str(path) in message
    if fault == "read-only":  # not even the lease is written: nothing is paid for
        assert backend.calls == 0 and "no call was sent" in message
    else:  # the lease fits, the answer does not: it is lost, and said so; nothing more is paid for
        assert backend.calls == 1 and "1 paid answer(s) could not be stored and are lost" in message
    cache.close()


def test_a_stage_that_meets_a_full_disk_says_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(REPO)  # the committed params.yaml

    def body(params: dict[str, Any]) -> None:
        raise OSError(28, "No space left on device", "results/predictions/predictions.parquet")

    with pytest.raises(SystemExit) as info:
        run_stage("probe", body)
    assert info.value.code == 2
    err = capsys.readouterr().err.strip()
    assert (
        err == "blindmcq probe: error: file results/predictions/predictions.parquet: No space left on device"
    )
