"""Persistent response cache: one SQLite row per model call, keyed by ``ModelRequest.cache_key``.

Why SQLite in WAL mode: every stored call is its own committed transaction, so ``kill -9`` at any
moment loses only the calls still in flight; several processes (parallel sweep jobs) may share one
file, since SQLite serialises writers and readers never block; ``INSERT OR IGNORE`` keeps the first
answer when two jobs race on the same call. WAL needs a local file system (not NFS).

Error responses (status ``error``) are not stored unless ``cache_errors=True``, so a rerun retries them.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path
from typing import NamedTuple

from blindmcq.backends.base import ModelResponse
from blindmcq.errors import InputError

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key      TEXT PRIMARY KEY,
    backend  TEXT NOT NULL,
    model    TEXT NOT NULL,
    status   TEXT NOT NULL,
    time     TEXT NOT NULL,
    response TEXT NOT NULL
) WITHOUT ROWID
"""
_CHUNK = 500  # keys per SELECT ... IN (...), below SQLite's variable limit


class CachedResponse(NamedTuple):
    response: ModelResponse
    time: str  # ISO 8601 UTC time the call completed


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


class ResponseCache:
    """A thread-safe, multi-process-safe store of model responses.

    ``path=":memory:"`` gives a throwaway cache (tests, dry runs).
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        cache_errors: bool = False,
        busy_timeout_s: float = 60.0,
    ) -> None:
        self.path = str(path)
        self.cache_errors = cache_errors
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        try:
            # isolation_level=None: autocommit, each INSERT is its own durable transaction.
            self._conn = sqlite3.connect(
                self.path, timeout=busy_timeout_s, isolation_level=None, check_same_thread=False
            )
            self._conn.execute("PRAGMA journal_mode=WAL")
            # NORMAL in WAL survives process crashes; only an OS crash may lose the last commits.
            self._conn.execute("PRAGMA synchronous=NORMAL")
            self._conn.execute(_SCHEMA)
        except sqlite3.DatabaseError as exc:
            raise InputError(f"not a usable response cache ({exc})", file=self.path) from exc

    def get(self, key: str) -> CachedResponse | None:
        return self.get_many([key]).get(key)

    def get_many(self, keys: list[str]) -> dict[str, CachedResponse]:
        found: dict[str, CachedResponse] = {}
        unique = list(dict.fromkeys(keys))
        with self._lock:
            for start in range(0, len(unique), _CHUNK):
                chunk = unique[start : start + _CHUNK]
                rows = self._conn.execute(
                    f"SELECT key, time, response FROM responses WHERE key IN ({','.join('?' * len(chunk))})",
                    chunk,
                ).fetchall()
                for key, time, payload in rows:
                    found[key] = CachedResponse(ModelResponse(**json.loads(payload)), time)
        return found

    def put(self, key: str, response: ModelResponse, *, backend: str, model: str, time: str) -> bool:
        """Store a response unless it is an uncached error; True when a row was written."""
        if response.status == "error" and not self.cache_errors:
            return False
        payload = json.dumps(asdict(response), ensure_ascii=False, default=str)
        with self._lock:
            cur = self._conn.execute(
                "INSERT OR IGNORE INTO responses (key, backend, model, status, time, response)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (key, backend, model, response.status, time, payload),
            )
        return cur.rowcount == 1

    def keys(self) -> set[str]:
        with self._lock:
            return {row[0] for row in self._conn.execute("SELECT key FROM responses")}

    def __len__(self) -> int:
        with self._lock:
            return int(self._conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self.get(key) is not None

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> ResponseCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
