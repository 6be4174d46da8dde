"""Persistent response cache: one SQLite row per model call, keyed by ``request_key(backend, request)``
(the hash of the exact wire request).

Why SQLite in WAL mode: every stored call is its own committed transaction, so ``kill -9`` at any
moment loses only the calls still in flight; several processes (parallel sweep jobs) may share one
file, since SQLite serialises writers and readers never block; ``INSERT OR IGNORE`` keeps the first
answer when two jobs race on the same call. WAL needs a local file system (not NFS).

Shared in-flight calls: before paying for a call, a runner claims a lease on its key (table ``leases``:
key, holder, expiry). A process that finds a live lease held by another waits for that holder's row
(polling with backoff) instead of paying again; a holder that crashed loses its lease at expiry (a live
holder renews its leases) and the waiter takes over. The holder id records host, pid and the process's
start time (``make_holder``): a lease whose holder is a process of this host that no longer runs (or
whose pid now belongs to another process) is taken at once, not after its expiry, and ``reap_dead``
drops all such leases when a run starts (so a cleanup that failed, on a full disk, is redone then).
A locked database (another writer holding it
longer than ``busy_timeout_s``) is waited out with backoff and a log line, never a crash. Every row read
is checked against one typed schema (``backends.base.response_from_dict``: field types, a known
``status`` that agrees with the row's own column); a row that does not fit (bad JSON, a string where a
token count belongs, an unknown status) is reported with its key and treated as a miss; the next answer
replaces it. Token counts are coerced to integers before a row is written (``conform_usage``). Model
scores (``choice_logprobs``, cloze scores in ``meta``) are put on a fixed grid before a row is written and
again when one is read (``backends.base.quantise_response``), so a cache filled before is served on the
grid too, without a new call. A damaged
file (an unreadable page) stops with one line naming it and the recovery command,
``blindmcq cache check --repair FILE`` (``blindmcq.cli.cache``).

Error responses (status ``error``) are not stored unless ``cache_errors=True``, so a rerun retries them.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import sqlite3
import threading
import time as _time
from collections.abc import Callable
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path
from typing import NamedTuple, TypeVar

from blindmcq.backends.base import ModelResponse, conform_usage, quantise_response, response_from_dict
from blindmcq.errors import InputError
from blindmcq.secrets import scrub_response

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


def row_problem(payload: str, status: str | None = None) -> ModelResponse | str:
    """The response a stored row holds, or why it does not fit the schema (a one-line reason)."""
    try:
        response = response_from_dict(json.loads(payload))
    except ValueError as exc:  # JSONDecodeError is a ValueError
        return str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    if status is not None and status != response.status:
        return f"status column {status!r} disagrees with the response's {response.status!r}"
    return quantise_response(response)  # rows stored before scores were quantised are served on the grid


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


def process_start(pid: int) -> str | None:
    """The start time of process ``pid`` as the kernel counts it (``/proc/<pid>/stat`` field 22, clock
    ticks since boot): with the pid, it tells a process from a later one that reuses its pid. None where
    there is no /proc (then the pid alone is checked) or no such process."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    # the command name (field 2) is parenthesised and may hold spaces: split after its closing paren
    fields = stat[stat.rfind(")") + 2 :].split()
    return fields[19] if len(fields) > 19 else None


def make_holder(token: str) -> str:
    """A lease holder id: ``host:pid:start:token`` (start: ``process_start`` of this process, or ``-``)."""
    pid = os.getpid()
    return f"{socket.gethostname()}:{pid}:{process_start(pid) or '-'}:{token}"


def holder_dead(holder: str) -> bool:
    """True only when ``holder`` is known to be dead: a process of this host whose pid is gone, or is now
    another process (a different start time). Holders of other hosts, and ids in another shape, are
    never declared dead here: their leases run out at expiry as before."""
    parts = holder.split(":")
    if len(parts) != 4 or parts[0] != socket.gethostname():
        return False
    try:
        pid = int(parts[1])
    except ValueError:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except (PermissionError, OSError):
        return False  # alive under another user (or unknowable): not ours to declare dead
    start = process_start(pid)
    return parts[2] != "-" and start is not None and start != parts[2]


_UNWRITABLE = ("readonly", "read-only", "disk is full", "disk i/o error", "unable to open", "no space")


class CacheUnwritable(InputError):
    """The cache cannot be written: a full or read-only disk (one line naming the file)."""


class CacheDamaged(InputError):
    """The database file itself is damaged (a page does not read)."""


def recovery_command(path: str) -> str:
    return f"blindmcq cache check --repair {path}"


def _is_damage(exc: sqlite3.DatabaseError) -> bool:
    text = str(exc).lower()
    return any(s in text for s in ("malformed", "not a database", "disk image", "file is not"))


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
        except InputError:
            raise
        except sqlite3.DatabaseError as exc:
            raise InputError(
                f"not a usable response cache ({exc}); recover with: {recovery_command(self.path)}",
                file=self.path,
            ) from exc

    # locking --------------------------------------------------------------------------------

    def _retry(self, fn: Callable[[], T]) -> T:
        """``fn()``, waiting out a locked database with backoff and saying so (call with ``_lock`` held)."""
        waited, delay = 0.0, 0.1
        while True:
            try:
                return fn()
            except sqlite3.DatabaseError as exc:
                if self._conn.in_transaction:
                    try:
                        self._conn.execute("ROLLBACK")
                    except sqlite3.DatabaseError:
                        pass
                text = str(exc).lower()
                if _is_damage(exc):
                    raise CacheDamaged(
                        f"the response cache is damaged ({exc}); recover with: {recovery_command(self.path)}",
                        file=self.path,
                    ) from None
                if not isinstance(exc, sqlite3.OperationalError):
                    raise
                if any(s in text for s in _UNWRITABLE):
                    raise CacheUnwritable(
                        f"cannot write the response cache ({exc}): free space or make it writable",
                        file=self.path,
                    ) from None
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

    def _decode(self, key: str, time: str, payload: str, status: str | None = None) -> CachedResponse | None:
        problem = row_problem(payload, status)
        if isinstance(problem, str):
            if key not in self._corrupt:
                log.warning("%s: corrupt cache row %s (%s); treated as a miss", self.path, key, problem)
            self._corrupt.add(key)
            return None
        return CachedResponse(problem, time)

    def get(self, key: str) -> CachedResponse | None:
        return self.get_many([key]).get(key)

    def get_many(self, keys: list[str]) -> dict[str, CachedResponse]:
        found: dict[str, CachedResponse] = {}
        unique = list(dict.fromkeys(keys))
        with self._lock:
            for start in range(0, len(unique), _CHUNK):
                chunk = unique[start : start + _CHUNK]
                marks = ",".join("?" * len(chunk))
                sql = f"SELECT key, time, response, status FROM responses WHERE key IN ({marks})"
                rows = self._retry(lambda sql=sql, chunk=chunk: self._conn.execute(sql, chunk).fetchall())
                for key, time, payload, status in rows:
                    hit = self._decode(key, time, payload, status)
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
        conform_usage(response)  # a provider's "10" is stored (and recorded) as 10
        quantise_response(response)  # model scores are stored (and recorded) on the grid
        scrub_response(response)  # an error body that echoes a key is never stored
        payload = json.dumps(asdict(response), ensure_ascii=False, default=str)
        if store and isinstance(row_problem(payload, response.status), str):
            log.warning("%s: response for %s does not fit the cache schema; not stored", self.path, key)
            store = False
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
                        "SELECT time, response, status FROM responses WHERE key = ?", (key,)
                    ).fetchone()
                    hit = self._decode(key, row[0], row[1], row[2]) if row else None
                    if hit is not None:
                        out[key] = Claim("hit", cached=hit)
                        continue
                    lease = self._conn.execute(
                        "SELECT holder, expires FROM leases WHERE key = ?", (key,)
                    ).fetchone()
                    if lease is not None and lease[0] != holder and lease[1] > now:
                        if not holder_dead(str(lease[0])):
                            out[key] = Claim("held", expires=float(lease[1]))
                            continue
                        log.info("%s: lease on %s held by dead %s: taken over", self.path, key, lease[0])
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

    def reap_dead(self) -> int:
        """Drop every lease whose holder is known dead (``holder_dead``): a crashed run's leases, and
        those a failed cleanup (a full disk) left behind, are freed at the next start. Returns how many."""
        with self._lock:
            holders = self._retry(
                lambda: [r[0] for r in self._conn.execute("SELECT DISTINCT holder FROM leases").fetchall()]
            )
            dead = [h for h in holders if holder_dead(str(h))]
            for h in dead:
                self._retry(lambda h=h: self._conn.execute("DELETE FROM leases WHERE holder = ?", (h,)))
        return len(dead)

    def lease(self, key: str) -> tuple[str, float] | None:
        """(holder, expiry) of the lease on ``key``, if any."""
        with self._lock:
            row = self._retry(
                lambda: self._conn.execute(
                    "SELECT holder, expires FROM leases WHERE key = ?", (key,)
                ).fetchone()
            )
        return (str(row[0]), float(row[1])) if row else None

    # checking -------------------------------------------------------------------------------

    def bad_rows(self) -> tuple[int, list[tuple[str, str]]]:
        """(rows read, [(key, reason)] for each row that does not fit the schema)."""
        with self._lock:
            rows = self._retry(
                lambda: self._conn.execute("SELECT key, response, status FROM responses").fetchall()
            )
        bad = []
        for key, payload, status in rows:
            problem = row_problem(payload, status)
            if isinstance(problem, str):
                bad.append((str(key), problem))
        return len(rows), bad

    def drop(self, keys: list[str]) -> int:
        """Delete the rows of ``keys``; returns how many went."""
        with self._lock:

            def delete() -> int:
                return sum(
                    self._conn.execute("DELETE FROM responses WHERE key = ?", (k,)).rowcount for k in keys
                )

            return int(self._transaction(delete))

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


def integrity_problem(path: str | os.PathLike[str]) -> str | None:
    """SQLite's own check of the file (``PRAGMA quick_check``): None when sound, else its first line."""
    try:
        conn = sqlite3.connect(f"file:{Path(path).as_posix()}?mode=ro", uri=True)
        try:
            result = conn.execute("PRAGMA quick_check").fetchall()
        finally:
            conn.close()
    except sqlite3.DatabaseError as exc:
        return str(exc)
    first = str(result[0][0]) if result else "no answer"
    return None if first == "ok" else first


def salvage(path: str | os.PathLike[str]) -> tuple[Path, int, bool]:
    """Rebuild a damaged cache file: copy every row that still reads (and fits the schema) into a new
    file, keep the damaged one beside it as ``<name>.damaged-<time>``, and put the new one in its place.
    Returns (where the damaged file went, rows kept, whether the read reached the end)."""
    path = Path(path)
    fresh = path.with_name(path.name + ".salvage")
    for stale in (fresh, Path(f"{fresh}-wal"), Path(f"{fresh}-shm")):
        stale.unlink(missing_ok=True)
    rows: list[tuple[str, str, str, str, str, str]] = []
    complete = True
    try:
        src = sqlite3.connect(f"file:{path.as_posix()}?mode=ro", uri=True)
    except sqlite3.DatabaseError:
        src, complete = None, False
    if src is not None:
        try:  # in key order, until a page that does not read
            cur = src.execute(
                "SELECT key, backend, model, status, time, response FROM responses ORDER BY key"
            )
            for row in cur:
                if isinstance(row_problem(row[5], row[3]), ModelResponse):
                    rows.append(tuple(map(str, row)))  # type: ignore[arg-type]
        except sqlite3.DatabaseError:
            complete = False
        finally:
            src.close()
    with ResponseCache(fresh) as out, out._lock:

        def copy() -> None:
            out._conn.executemany(
                "INSERT OR IGNORE INTO responses (key, backend, model, status, time, response)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                rows,
            )

        out._transaction(copy)
        out._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    kept = path.with_name(f"{path.name}.damaged-{stamp}")
    path.rename(kept)
    for side in ("-wal", "-shm"):
        extra = Path(f"{path}{side}")
        if extra.exists():
            extra.rename(Path(f"{kept}{side}"))
    fresh.rename(path)
    for side in ("-wal", "-shm"):
        Path(f"{fresh}{side}").unlink(missing_ok=True)
    return kept, len(rows), complete
