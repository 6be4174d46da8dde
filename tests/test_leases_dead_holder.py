"""A crashed run's leases are taken at once (the holder records host, pid and start
time, and a live holder is checked), and a failed lease cleanup is redone at the next start."""

from __future__ import annotations

import logging
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from blindmcq.backends.base import ModelRequest, ModelResponse, request_key
from blindmcq.engine import run_requests
from blindmcq.engine.cache import ResponseCache, holder_dead, make_holder, process_start

REPO = Path(__file__).resolve().parents[1]


class Echo:
    name = "echo"
    concurrency = 1

    def wire_request(self, request: ModelRequest) -> dict[str, Any]:
        return {"user": request.user}

    def complete(self, request: ModelRequest) -> ModelResponse:
        return ModelResponse(text="A")


REQUEST = ModelRequest(model="m", system=None, user="q")


def _crashed_claim(path: Path, key: str) -> str:
    """Another process claims ``key`` for 120 s and dies without releasing it (os._exit, as kill -9)."""
    code = (
        "import os, sys; from blindmcq.engine.cache import ResponseCache, make_holder; "
        "c = ResponseCache(sys.argv[1]); h = make_holder('dead'); c.claim(sys.argv[2], h, 120.0); "
        "print(h, flush=True); os._exit(0)"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", code, str(path), key], capture_output=True, text=True,
                          env=env, timeout=120, check=True)  # fmt: skip
    return done.stdout.strip()


def test_a_dead_holders_live_lease_is_taken_at_once(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    key = request_key(Echo(), REQUEST)
    dead = _crashed_claim(path, key)
    with ResponseCache(path) as cache:
        lease = cache.lease(key)
        assert lease is not None and lease[0] == dead and lease[1] > time.time() + 60  # still "live"
        assert holder_dead(dead)
        me = make_holder("me")
        assert cache.claim(key, me, 60).state == "claimed"  # not "held" for 120 s
        cache.release(me)
    dead = _crashed_claim(path, key)  # again, for the engine itself
    started = time.monotonic()
    out = run_requests([REQUEST], Echo(), cache=path, progress=False, poll_s=(0.05, 0.2))
    assert out[0].response.text == "A" and time.monotonic() - started < 30


def test_a_live_holder_is_waited_for_and_other_hosts_are_not_judged() -> None:
    me = make_holder("x")
    assert me.split(":")[:2] == [socket.gethostname(), str(os.getpid())]
    assert not holder_dead(me)
    start = process_start(os.getpid())
    if start is not None:  # a reused pid: same pid, another start time
        assert holder_dead(f"{socket.gethostname()}:{os.getpid()}:{int(start) + 1}:x")
    assert not holder_dead("some-other-host:1:1:x")
    assert not holder_dead("legacy-host:123:abcd1234")  # the old 3-part ids run out at expiry


def test_dead_holders_leases_are_reaped_at_the_next_start(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "c.sqlite"
    dead = _crashed_claim(path, "some-other-key")
    with ResponseCache(path) as cache:
        # this run's cleanup fails (a full disk): logged, not a crash, and its answers are returned
        def failing_release(holder: str, keys: list[str] | None = None) -> None:
            raise OSError(28, "No space left on device")

        monkeypatch.setattr(cache, "release", failing_release)
        with caplog.at_level(logging.WARNING, logger="blindmcq.engine.run"):
            out = run_requests([REQUEST], Echo(), cache=cache, progress=False)
        assert out[0].response.text == "A"
        assert "lease cleanup failed" in caplog.text
        assert cache.lease("some-other-key") is None  # the crashed run's lease was freed at this start
        assert dead
