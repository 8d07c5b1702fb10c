"""Where the ended 2025-11-25 sessions are remembered, so that a `DELETE` holds on every worker that shares a store.

A session id is signed and self-contained (`sessions.py`): any worker with the key serves it, and none keeps a
session table. Ending one early (`DELETE`) is the one fact that must be shared: each worker asks the store on every
request of a session, and until the id expires an ended one gets `404`. The store holds only the session's random
nonce and its expiry, never a usable id. The default store is this process's memory; `SqliteSessionStore` shares
one file among the processes of one machine. Methods are plain calls, made on the event loop: a store answers in
microseconds (a local file) or about a millisecond (a server on the same network).
"""

from __future__ import annotations

import os
import threading
import time
import weakref
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    import sqlite3

__all__ = ["ProcessSessionStore", "SessionStore", "SqliteSessionStore"]

_PRUNE_EVERY = 1024  # ends between two sweeps of the expired entries of the in-process store


@runtime_checkable
class SessionStore(Protocol):
    """Remembers which 2025-11-25 sessions were ended by `DELETE` (see [Deploying](deploy.md#ending-sessions)).

    A [backend](backend.md) (`http_app(backend=...)`, `Server(backend=...)`) shares ended sessions too, with the
    rest of what a fleet shares; a store given beside it is consulted as well.

    `key` is the session's random nonce (22 characters, URL-safe), never the session id itself. Pass a store
    shared by all workers as `server.http_app(session_store=...)`; only 2025-11-25 requests consult it.

    The workers also tell each other through it of a question whose answer reached the wrong one (see
    [Deploying](deploy.md#answers-that-reach-another-worker)): then `key` is `<nonce>/<question id>`, ended for five
    minutes, and a call whose question waits looks it up every 0.2 s. A store that raises there is logged and
    ends no call.
    """

    def end(self, key: str, expires: float) -> None:
        """Remember that the session `key` ended; it may be forgotten after `expires` (Unix time), when its id
        expires anyway."""
        ...

    def is_ended(self, key: str) -> bool:
        """Whether the session `key` was ended (asked on every request of a session: keep it fast)."""
        ...


class ProcessSessionStore:
    """The default: this process's memory. Right for one process; with several workers, a `DELETE` holds only on
    the worker that got it."""

    __slots__ = ("_ended", "_until_prune")

    def __init__(self) -> None:
        self._ended: dict[str, float] = {}
        self._until_prune = _PRUNE_EVERY

    def end(self, key: str, expires: float) -> None:
        self._until_prune -= 1
        if self._until_prune <= 0:
            self._until_prune = _PRUNE_EVERY
            now = time.time()
            for old in [k for k, until in self._ended.items() if until < now]:
                del self._ended[old]
        self._ended[key] = expires

    def is_ended(self, key: str) -> bool:
        return key in self._ended


class SqliteSessionStore:
    """Ended sessions in an SQLite file (WAL mode) that every worker process on one machine opens.

    Reads never wait for a write (WAL), and a read is one primary-key lookup (a few microseconds), so each
    2025-11-25 request pays little; a `DELETE` writes one row and sweeps the expired ones. Each process opens its
    own connection on first use (a connection never crosses a `fork`). For several machines, give the app a
    [backend](backend.md) (`RedisBackend`): it shares ended sessions with the rest.

    Args:
        path: The database file (created if missing), on a local disk that all the workers see. Not on a network
            file system: SQLite's locking does not hold there.
        timeout: Seconds a write waits for another process's write before it fails.

    Raises:
        sqlite3.Error: The file cannot be opened or created.
    """

    def __init__(self, path: str | os.PathLike[str], *, timeout: float = 5.0) -> None:
        self.path = os.fspath(path)
        self.timeout = timeout
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        self._pid = 0
        self._inherited: sqlite3.Connection | None = None
        self._closer: weakref.finalize[[sqlite3.Connection, int], SqliteSessionStore] | None = None
        # Fail at startup, not at the first DELETE; closed at once so that no connection outlives a fork.
        self._open().close()

    def _open(self) -> sqlite3.Connection:
        import sqlite3

        # Workers that start together open a new file at once, and switching it to WAL can fail at once with
        # "database is locked" (SQLite calls no busy handler there): seen as a worker that could not start under
        # `toolkit serve --workers 2`. Tried again within `timeout`.
        deadline = time.monotonic() + self.timeout
        while True:
            try:
                return self._try_open()
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() > deadline:
                    raise
                time.sleep(0.01)

    def _try_open(self) -> sqlite3.Connection:
        import sqlite3

        db = sqlite3.connect(self.path, timeout=self.timeout, isolation_level=None, check_same_thread=False)
        try:
            return self._prepare(db)
        except BaseException:
            db.close()
            raise

    @staticmethod
    def _prepare(db: sqlite3.Connection) -> sqlite3.Connection:
        # WAL is a property of the file: set once, by whichever process gets there first.
        if db.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
            db.execute("PRAGMA journal_mode=WAL")
        # An ended session lost to a power cut (not to a crash) comes back until it expires: a fair price for
        # not syncing the disk on every DELETE.
        db.execute("PRAGMA synchronous=NORMAL")
        db.execute("CREATE TABLE IF NOT EXISTS ended (key TEXT PRIMARY KEY, expires REAL NOT NULL) WITHOUT ROWID")
        db.execute("CREATE INDEX IF NOT EXISTS ended_expires ON ended (expires)")
        return db

    def _connection(self) -> sqlite3.Connection:
        pid = os.getpid()
        if self._db is None or self._pid != pid:
            # A forked child neither uses nor closes its parent's connection (SQLite: "do not carry an open
            # connection across a fork"): it is kept aside, untouched, and this process opens its own.
            self._inherited = self._db
            self._db, self._pid = self._open(), pid
            # The store opened it, so the store closes it, when it is collected or at exit if nobody called close()
            # (Python 3.13 warns of a connection collected open): in this process only, never a forked child.
            self._closer = weakref.finalize(self, _close_in, self._db, pid)
        return self._db

    def end(self, key: str, expires: float) -> None:
        with self._lock:
            db = self._connection()
            db.execute("BEGIN IMMEDIATE")
            try:
                db.execute("DELETE FROM ended WHERE expires < ?", (time.time(),))
                db.execute("INSERT OR REPLACE INTO ended VALUES (?, ?)", (key, expires))
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")

    def is_ended(self, key: str) -> bool:
        with self._lock:
            return self._connection().execute("SELECT 1 FROM ended WHERE key = ?", (key,)).fetchone() is not None

    def close(self) -> None:
        """Close this process's connection (the next call opens a new one). A store that is collected, or still
        open at exit, closes its connection itself."""
        with self._lock:
            if self._closer is not None:
                self._closer()  # closes it once, in the process that opened it
            self._db = self._closer = None


def _close_in(db: sqlite3.Connection, pid: int) -> None:
    if os.getpid() == pid:
        db.close()
