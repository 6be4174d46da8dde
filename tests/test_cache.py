from __future__ import annotations

import multiprocessing
import sqlite3
from pathlib import Path

import pytest

from blindmcq.backends.base import ModelResponse
from blindmcq.cache import ResponseCache, utc_now
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
