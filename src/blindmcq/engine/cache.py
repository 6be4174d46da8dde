"""Persistent response cache: one SQLite row per model call, keyed by ``request_key(backend, request)``
(the hash of the exact wire request).

Why SQLite in WAL mode: every stored call is its own committed transaction, so ``kill -9`` at any
moment loses only the calls still in flight; several processes (parallel sweep jobs) may share one
file, since SQLite serialises writers and readers never block; ``INSERT OR IGNORE`` keeps the first
answer when two jobs race on the same call. WAL needs a local file system (not NFS).

Shared in-flight calls: before paying for a call, a runner claims a lease on its key (table ``leases``:
key, holder, expiry). A process that finds a live lease held by another waits for that holder's row
(polling with backoff) instead of paying again; a holder that crashed loses its lease at expiry (a live
holder renews its leases) and the waiter takes over. A locked database (another writer holding it
longer than ``busy_timeout_s``) is waited out with backoff and a log line, never a crash. A row that does
not decode (bad JSON, wrong fields) is reported with its key and treated as a miss; the next answer
replaces it.

Error responses (status ``error``) are not stored unless ``cache_errors=True``, so a rerun retries them.
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import threading
import time as _time
from collections.abc import Callable
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path
from typing import NamedTuple, TypeVar

from blindmcq.backends.base import ModelResponse
from blindmcq.errors import InputError

log = logging.getLogger(__name__)
T = TypeVar("T")

_SCHEMA = (
    """
CREATE TABLE IF NOT EXISTS responses (
    key      TEXT PRIMARY KEY,
    backend  TEXT NOT NULL,
    model    TEXT NOT NULL,
    status   TEXT NOT NULL,
    time     TEXT NOT NULL,
    response TEXT NOT NULL
) WITHOUT ROWID
""",
    """
CREATE TABLE IF NOT EXISTS leases (
    key      TEXT PRIMARY KEY,
    holder   TEXT NOT NULL,
    expires  REAL NOT NULL
) WITHOUT ROWID
""",
)
_CHUNK = 500  # keys per SELECT ... IN (...), below SQLite's variable limit


class CachedResponse(NamedTuple):
    response: ModelResponse
    time: str  # ISO 8601 UTC time the call completed


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


class Claim(NamedTuple):
    """The outcome of claiming a key: ``hit`` (answered, ``cached`` set), ``claimed`` (ours to call)
    or ``held`` (another holder's live lease, until ``expires``, a Unix time)."""

    state: str
    cached: CachedResponse | None = None
    expires: float | None = None


class CacheLocked(InputError):
    """The database stayed locked for longer than ``lock_wait_s``."""


class ResponseCache:
    """A thread-safe, multi-process-safe store of model responses.

    ``path=":memory:"`` gives a throwaway cache (tests, dry runs). ``busy_timeout_s`` is how long SQLite
    itself waits for a lock before we log and back off; ``lock_wait_s`` (None: forever) is how long in
    all before giving up with one line naming the file. ``on_wait`` (e.g. a progress-bar postfix) is
    told each time we wait for a lock.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        cache_errors: bool = False,
        busy_timeout_s: float = 5.0,
        lock_wait_s: float | None = 3600.0,
        on_wait: Callable[[str], None] | None = None,
    ) -> None:
        self.path = str(path)
        self.cache_errors = cache_errors
        self.lock_wait_s = lock_wait_s
        self.on_wait = on_wait
        self._corrupt: set[str] = set()  # keys whose row did not decode: the next answer replaces it
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        try:
            # isolation_level=None: autocommit, each INSERT is its own durable transaction.
            self._conn = sqlite3.connect(
                self.path, timeout=busy_timeout_s, isolation_level=None, check_same_thread=False
            )

            def setup() -> None:
                self._conn.execute("PRAGMA journal_mode=WAL")
                # NORMAL in WAL survives process crashes; only an OS crash may lose the last commits.
                self._conn.execute("PRAGMA synchronous=NORMAL")
                for statement in _SCHEMA:
                    self._conn.execute(statement)

            with self._lock:
                self._retry(setup)
        except sqlite3.DatabaseError as exc:
            raise InputError(f"not a usable response cache ({exc})", file=self.path) from exc

    # locking --------------------------------------------------------------------------------

    def _retry(self, fn: Callable[[], T]) -> T:
        """``fn()``, waiting out a locked database with backoff and saying so (call with ``_lock`` held)."""
        waited, delay = 0.0, 0.1
        while True:
            try:
                return fn()
            except sqlite3.OperationalError as exc:
                if self._conn.in_transaction:
                    self._conn.execute("ROLLBACK")
                text = str(exc).lower()
                if "locked" not in text and "busy" not in text:
                    raise
                if self.lock_wait_s is not None and waited >= self.lock_wait_s:
                    raise CacheLocked(
                        f"the response cache stayed locked for {waited:.0f} s (another process writing?)",
                        file=self.path,
                    ) from exc
                message = f"cache locked, waiting {waited + delay:.0f}s"
                log.warning("%s: %s", self.path, message)
                if self.on_wait is not None:
                    self.on_wait(message)
                _time.sleep(delay)
                waited += delay
                delay = min(delay * 2, 10.0)

    def _transaction(self, fn: Callable[[], T]) -> T:
        """``fn()`` inside BEGIN IMMEDIATE ... COMMIT: the write lock is taken up front, so a claim's
        read and write see one state."""

        def run() -> T:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                result = fn()
            except BaseException:
                if self._conn.in_transaction:
                    self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")
            return result

        return self._retry(run)

    # rows -----------------------------------------------------------------------------------

    def _decode(self, key: str, time: str, payload: str) -> CachedResponse | None:
        try:
            data = json.loads(payload)
            if not isinstance(data, dict):
                raise TypeError(f"expected a JSON object, got {type(data).__name__}")
            response = ModelResponse(**data)
            if not isinstance(response.text, str) or not isinstance(response.meta, dict):
                raise TypeError("text must be a string and meta an object")
        except (ValueError, TypeError) as exc:
            if key not in self._corrupt:
                log.warning("%s: corrupt cache row %s (%s); treated as a miss", self.path, key, exc)
            self._corrupt.add(key)
            return None
        return CachedResponse(response, time)

    def get(self, key: str) -> CachedResponse | None:
        return self.get_many([key]).get(key)

    def get_many(self, keys: list[str]) -> dict[str, CachedResponse]:
        found: dict[str, CachedResponse] = {}
        unique = list(dict.fromkeys(keys))
        with self._lock:
            for start in range(0, len(unique), _CHUNK):
                chunk = unique[start : start + _CHUNK]
                sql = f"SELECT key, time, response FROM responses WHERE key IN ({','.join('?' * len(chunk))})"
                rows = self._retry(lambda sql=sql, chunk=chunk: self._conn.execute(sql, chunk).fetchall())
                for key, time, payload in rows:
                    hit = self._decode(key, time, payload)
                    if hit is not None:
                        found[key] = hit
        return found

    def put(
        self,
        key: str,
        response: ModelResponse,
        *,
        backend: str,
        model: str,
        time: str,
        holder: str | None = None,
    ) -> bool:
        """Store a response unless it is an uncached error; True when a row was written. ``holder``'s
        lease on the key is released in the same transaction (also when nothing is stored)."""
        store = response.status != "error" or self.cache_errors
        payload = json.dumps(asdict(response), ensure_ascii=False, default=str)
        with self._lock:
            # a row that did not decode is replaced; a good one is kept (the first answer wins)
            verb = "REPLACE" if key in self._corrupt else "IGNORE"

            def write() -> int:
                written = 0
                if store:
                    cur = self._conn.execute(
                        f"INSERT OR {verb} INTO responses (key, backend, model, status, time, response)"
                        " VALUES (?, ?, ?, ?, ?, ?)",
                        (key, backend, model, response.status, time, payload),
                    )
                    written = cur.rowcount
                if holder is not None:
                    self._conn.execute("DELETE FROM leases WHERE key = ? AND holder = ?", (key, holder))
                return written

            written = self._transaction(write) if holder is not None else self._retry(write)
            if written == 1:
                self._corrupt.discard(key)
        return written == 1

    # leases ---------------------------------------------------------------------------------

    def claim_many(self, keys: list[str], holder: str, ttl_s: float) -> dict[str, Claim]:
        """For each key: its answer if stored, else a lease for ``holder`` (``claimed``) unless another
        holder's lease is still live (``held``). An expired lease is taken over."""
        out: dict[str, Claim] = {}
        with self._lock:

            def claim() -> None:
                out.clear()
                now = _time.time()
                for key in keys:
                    row = self._conn.execute(
                        "SELECT time, response FROM responses WHERE key = ?", (key,)
                    ).fetchone()
                    hit = self._decode(key, row[0], row[1]) if row else None
                    if hit is not None:
                        out[key] = Claim("hit", cached=hit)
                        continue
                    lease = self._conn.execute(
                        "SELECT holder, expires FROM leases WHERE key = ?", (key,)
                    ).fetchone()
                    if lease is not None and lease[0] != holder and lease[1] > now:
                        out[key] = Claim("held", expires=float(lease[1]))
                        continue
                    self._conn.execute(
                        "INSERT OR REPLACE INTO leases (key, holder, expires) VALUES (?, ?, ?)",
                        (key, holder, now + ttl_s),
                    )
                    out[key] = Claim("claimed", expires=now + ttl_s)

            self._transaction(claim)
        return dict(out)

    def claim(self, key: str, holder: str, ttl_s: float) -> Claim:
        return self.claim_many([key], holder, ttl_s)[key]

    def renew(self, holder: str, ttl_s: float) -> int:
        """Push the expiry of every lease ``holder`` has to now + ``ttl_s``; returns how many."""
        with self._lock:
            cur = self._retry(
                lambda: self._conn.execute(
                    "UPDATE leases SET expires = ? WHERE holder = ?", (_time.time() + ttl_s, holder)
                )
            )
        return int(cur.rowcount)

    def release(self, holder: str, keys: list[str] | None = None) -> None:
        """Drop ``holder``'s leases (on ``keys``, or all of them)."""
        with self._lock:
            if keys is None:
                self._retry(lambda: self._conn.execute("DELETE FROM leases WHERE holder = ?", (holder,)))
            else:
                for key in keys:
                    self._retry(
                        lambda key=key: self._conn.execute(
                            "DELETE FROM leases WHERE key = ? AND holder = ?", (key, holder)
                        )
                    )

    def lease(self, key: str) -> tuple[str, float] | None:
        """(holder, expiry) of the lease on ``key``, if any."""
        with self._lock:
            row = self._retry(
                lambda: self._conn.execute(
                    "SELECT holder, expires FROM leases WHERE key = ?", (key,)
                ).fetchone()
            )
        return (str(row[0]), float(row[1])) if row else None

    # the rest -------------------------------------------------------------------------------

    def keys(self) -> set[str]:
        with self._lock:
            return {
                row[0]
                for row in self._retry(lambda: self._conn.execute("SELECT key FROM responses").fetchall())
            }

    def __len__(self) -> int:
        with self._lock:
            return int(
                self._retry(lambda: self._conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0])
            )

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self.get(key) is not None

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> ResponseCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
