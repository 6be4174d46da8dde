from __future__ import annotations

import multiprocessing
import sqlite3
import threading
from pathlib import Path

import pytest

from blindmcq.backends.base import ModelResponse
from blindmcq.engine.cache import CacheLocked, ResponseCache, utc_now
from blindmcq.errors import InputError


def _put(cache: ResponseCache, key: str, response: ModelResponse) -> bool:
    return cache.put(key, response, backend="fake", model="m", time=utc_now())


def test_round_trip_keeps_every_field(tmp_path: Path) -> None:
    response = ModelResponse(
        text="Відповідь: Б",
        input_tokens=12,
        output_tokens=3,
        latency_s=0.25,
        region="eu-central-1",
        choice_logprobs=[-1.5, -0.2, -3.0, -4.0],
        meta={"attempts": 2},
    )
    with ResponseCache(tmp_path / "c.sqlite") as cache:
        assert cache.get("k") is None
        assert _put(cache, "k", response)
        hit = cache.get("k")
    assert hit is not None and hit.response == response
    assert hit.time.endswith("+00:00")


def test_survives_reopen_and_uses_wal(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    with ResponseCache(path) as cache:
        _put(cache, "a", ModelResponse(text="A"))
    with ResponseCache(path) as cache:
        assert "a" in cache and "b" not in cache
        assert len(cache) == 1
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_first_answer_wins(tmp_path: Path) -> None:
    with ResponseCache(tmp_path / "c.sqlite") as cache:
        assert _put(cache, "k", ModelResponse(text="A"))
        assert not _put(cache, "k", ModelResponse(text="B"))
        hit = cache.get("k")
        assert hit is not None and hit.response.text == "A"


def test_errors_are_not_cached_unless_asked(tmp_path: Path) -> None:
    error = ModelResponse(text="", status="error", error="ThrottlingException: slow down")
    with ResponseCache(tmp_path / "a.sqlite") as cache:
        assert not _put(cache, "k", error)
        assert cache.get("k") is None
        assert _put(cache, "r", ModelResponse(text="no", status="refused"))  # refusals are final
    with ResponseCache(tmp_path / "b.sqlite", cache_errors=True) as cache:
        assert _put(cache, "k", error)
        hit = cache.get("k")
        assert hit is not None and hit.response.status == "error"


def test_get_many_returns_only_hits_over_many_chunks(tmp_path: Path) -> None:
    with ResponseCache(tmp_path / "c.sqlite") as cache:
        for i in range(0, 1200, 2):
            _put(cache, f"k{i}", ModelResponse(text=str(i)))
        found = cache.get_many([f"k{i}" for i in range(1200)])
    assert set(found) == {f"k{i}" for i in range(0, 1200, 2)}
    assert all(found[f"k{i}"].response.text == str(i) for i in range(0, 1200, 2))


def test_not_a_database_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "junk.sqlite"
    path.write_bytes(b"this is not sqlite, just some bytes" * 100)
    with pytest.raises(InputError, match=r"junk\.sqlite"):
        ResponseCache(path)


def _writer(path: str, start: int, stop: int) -> None:
    with ResponseCache(path, busy_timeout_s=120) as cache:
        for i in range(start, stop):
            # the text depends on the key only, so every writer stores the same value for a key
            cache.put(f"k{i}", ModelResponse(text=f"t{i}"), backend="fake", model="m", time=utc_now())
            if i % 50 == 0:
                cache.get_many([f"k{j}" for j in range(start, i)])


def test_processes_writing_one_cache_do_not_corrupt_it(tmp_path: Path) -> None:
    path = str(tmp_path / "shared.sqlite")
    ranges = [(0, 600), (300, 900), (600, 1200), (0, 1200)]  # overlapping on purpose
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(path, a, b)) for a, b in ranges]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=120)
    assert [p.exitcode for p in procs] == [0] * len(procs)
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    with ResponseCache(path) as cache:
        assert len(cache) == 1200
        found = cache.get_many([f"k{i}" for i in range(1200)])
    assert all(found[f"k{i}"].response.text == f"t{i}" for i in range(1200))


# ---------------------------------------------------------------- corrupt rows, locks, leases


def _raw_row(path: Path, key: str, payload: str) -> None:
    with sqlite3.connect(path) as conn:
        conn.execute(
            "INSERT INTO responses (key, backend, model, status, time, response) VALUES (?, ?, ?, ?, ?, ?)",
            (key, "fake", "m", "ok", "t", payload),
        )


@pytest.mark.parametrize(
    "payload", ["{not json", '{"text": "A", "colour": "red"}', '["A"]', '{"status": "ok"}']
)
def test_corrupt_row_is_a_miss_with_a_warning_and_is_replaced(
    tmp_path: Path, payload: str, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "c.sqlite"
    ResponseCache(path).close()
    _raw_row(path, "bad", payload)
    _raw_row(path, "good", '{"text": "B"}')
    with ResponseCache(path) as cache, caplog.at_level("WARNING", logger="blindmcq.engine.cache"):
        found = cache.get_many(["bad", "good"])
        assert set(found) == {"good"}  # the bad row blocks nothing
        assert any("bad" in r.getMessage() and "corrupt" in r.getMessage() for r in caplog.records)
        assert cache.claim("bad", "me", 60).state == "claimed"  # a miss: ours to call
        assert _put(cache, "bad", ModelResponse(text="C"))  # the next answer replaces the bad row
        got = cache.get("bad")
        assert got is not None and got.response.text == "C"


def test_a_write_lock_held_longer_than_the_busy_timeout_is_waited_out(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "c.sqlite"
    ResponseCache(path).close()
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN IMMEDIATE")  # another process' writer, holding the lock
    holder.execute("INSERT INTO responses VALUES ('other', 'fake', 'm', 'ok', 't', '{\"text\": \"X\"}')")
    released = threading.Event()

    def release() -> None:
        # hold the lock for several busy timeouts (the old code died at the first one)
        waits.wait(timeout=30)
        holder.execute("COMMIT")
        released.set()

    waits = threading.Event()
    told: list[str] = []

    def on_wait(message: str) -> None:
        told.append(message)
        if len(told) >= 3:
            waits.set()

    thread = threading.Thread(target=release)
    thread.start()
    with caplog.at_level("WARNING", logger="blindmcq.engine.cache"):
        cache = ResponseCache(path, busy_timeout_s=0.05, lock_wait_s=60, on_wait=on_wait)
        assert _put(cache, "k", ModelResponse(text="A"))
    thread.join()
    assert released.is_set() and len(told) >= 3
    assert all(m.startswith("cache locked, waiting") for m in told)
    assert any("cache locked, waiting" in r.getMessage() for r in caplog.records)
    assert {"k", "other"} <= cache.keys()
    cache.close()
    holder.close()


def test_a_lock_past_lock_wait_s_is_one_error_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    ResponseCache(path).close()
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        cache = ResponseCache(path, busy_timeout_s=0.02, lock_wait_s=0.2)
        with pytest.raises(CacheLocked, match=str(path)) as info:
            _put(cache, "k", ModelResponse(text="A"))
        assert isinstance(info.value, InputError)
        cache.close()
    finally:
        holder.execute("ROLLBACK")
        holder.close()


def test_leases_claim_hold_expire_and_release(tmp_path: Path) -> None:
    with ResponseCache(tmp_path / "c.sqlite") as cache:
        assert cache.claim("k", "a", 60).state == "claimed"
        assert cache.claim("k", "a", 60).state == "claimed"  # the holder may claim again
        held = cache.claim("k", "b", 60)
        assert held.state == "held" and held.expires is not None
        lease = cache.lease("k")
        assert lease is not None and lease[0] == "a"
        # a put by the holder stores the answer and frees the key in one transaction
        assert cache.put("k", ModelResponse(text="A"), backend="f", model="m", time="t", holder="a")
        assert cache.lease("k") is None
        hit = cache.claim("k", "b", 60)
        assert hit.state == "hit" and hit.cached is not None and hit.cached.response.text == "A"
        # an error answer is not stored, but its lease is released: someone may try again
        assert cache.claim("e", "a", 60).state == "claimed"
        assert not cache.put(
            "e", ModelResponse("", status="error"), backend="f", model="m", time="t", holder="a"
        )
        assert cache.lease("e") is None and cache.claim("e", "b", 60).state == "claimed"
        # an expired lease (its holder died) is taken over
        assert cache.claim("x", "dead", -1).state == "claimed"
        assert cache.claim("x", "b", 60).state == "claimed"
        assert cache.lease("x") is not None and cache.lease("x")[0] == "b"  # type: ignore[index]
        # renew pushes the holder's expiry; release drops all its leases
        before = cache.lease("x")[1]  # type: ignore[index]
        assert cache.renew("b", 600) == 2 and cache.lease("x")[1] > before  # type: ignore[index]
        cache.release("b")
        assert cache.lease("x") is None and cache.lease("e") is None
