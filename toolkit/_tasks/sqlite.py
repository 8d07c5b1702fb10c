"""`SqliteTaskStore`: the tasks of one machine's workers in one SQLite file.

Each process opens its own connection (lazily, on first use; a process that forks before it has none to share), in
WAL mode; each operation runs on a worker thread, one at a time per process, in a transaction of its own
(`BEGIN IMMEDIATE` for the read-modify-write of `modify`, so that two workers changing one task take turns).
"""

from __future__ import annotations

import dataclasses
import sqlite3
import threading
import time
from collections.abc import Callable, Collection
from pathlib import Path
from typing import TypeVar

import anyio.to_thread

from .store import Modify, Refusal, TaskRecord, from_json, lease_failed, to_json

__all__ = ["SqliteTaskStore"]

T = TypeVar("T")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS toolkit_tasks (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    task_id TEXT NOT NULL UNIQUE,
    owner TEXT NOT NULL,
    expires_at REAL NOT NULL,
    running INTEGER NOT NULL,
    worker TEXT,
    lease_until REAL,
    record TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS toolkit_tasks_owner ON toolkit_tasks (owner, seq);
CREATE INDEX IF NOT EXISTS toolkit_tasks_expiry ON toolkit_tasks (expires_at);
"""


class SqliteTaskStore:
    """Tasks in a SQLite file shared by the workers of one machine (`toolkit serve --workers N`).

    Args:
        path: The database file (made if missing).
        timeout: Seconds an operation waits for another process's write lock.
    """

    def __init__(self, path: str | Path, *, timeout: float = 10.0) -> None:
        self.path = str(path)
        self._timeout = timeout
        self._connection: sqlite3.Connection | None = None
        self._pid: int | None = None
        self._lock = threading.Lock()

    def _connect(self) -> sqlite3.Connection:
        import os

        if self._connection is None or self._pid != os.getpid():
            connection = sqlite3.connect(
                self.path, timeout=self._timeout, check_same_thread=False, isolation_level=None
            )
            connection.execute("PRAGMA journal_mode=WAL")
            connection.execute("PRAGMA synchronous=NORMAL")  # WAL: a process that dies loses nothing committed
            connection.executescript(_SCHEMA)
            self._connection, self._pid = connection, os.getpid()
        return self._connection

    async def _run(self, func: Callable[[sqlite3.Connection], T]) -> T:
        def locked() -> T:
            with self._lock:
                connection = self._connect()
                connection.execute("BEGIN IMMEDIATE")
                try:
                    value = func(connection)
                except BaseException:
                    connection.execute("ROLLBACK")
                    raise
                connection.execute("COMMIT")
                return value

        return await anyio.to_thread.run_sync(locked)

    async def create(self, record: TaskRecord, *, limit: int, ceiling: int) -> Refusal | None:
        def create(db: sqlite3.Connection) -> Refusal | None:
            now = time.time()
            (live,) = db.execute("SELECT COUNT(*) FROM toolkit_tasks WHERE expires_at > ?", (now,)).fetchone()
            if live >= ceiling:
                return "store"
            (owned,) = db.execute(
                "SELECT COUNT(*) FROM toolkit_tasks WHERE owner = ? AND expires_at > ?", (record.owner, now)
            ).fetchone()
            if owned >= limit:
                return "caller"
            _insert(db, record)
            return None

        return await self._run(create)

    async def get(self, task_id: str) -> TaskRecord | None:
        def get(db: sqlite3.Connection) -> TaskRecord | None:
            row = db.execute("SELECT record FROM toolkit_tasks WHERE task_id = ?", (task_id,)).fetchone()
            return from_json(row[0]) if row is not None else None

        return await self._run(get)

    async def modify(self, task_id: str, change: Modify) -> TaskRecord | None:
        def modify(db: sqlite3.Connection) -> TaskRecord | None:
            row = db.execute("SELECT record FROM toolkit_tasks WHERE task_id = ?", (task_id,)).fetchone()
            if row is None:
                return None
            record = from_json(row[0])
            changed = change(record)
            if changed is None:
                return record
            _update(db, changed)
            return changed

        return await self._run(modify)

    async def list_owned(self, owner: str, after: str | None, limit: int) -> list[TaskRecord]:
        def page(db: sqlite3.Connection) -> list[TaskRecord]:
            start = 0
            if after is not None:
                row = db.execute("SELECT seq FROM toolkit_tasks WHERE task_id = ?", (after,)).fetchone()
                if row is None:
                    return []
                start = row[0]
            rows = db.execute(
                "SELECT record FROM toolkit_tasks WHERE owner = ? AND seq > ? AND expires_at > ? ORDER BY seq LIMIT ?",
                (owner, start, time.time(), limit),
            ).fetchall()
            return [from_json(text) for (text,) in rows]

        return await self._run(page)

    async def renew(self, worker: str, until: float, task_ids: Collection[str]) -> None:
        def renew(db: sqlite3.Connection) -> None:
            for task_id in task_ids:
                row = db.execute(
                    "SELECT record FROM toolkit_tasks WHERE task_id = ? AND worker = ? AND running = 1",
                    (task_id, worker),
                ).fetchone()
                if row is not None:
                    _update(db, dataclasses.replace(from_json(row[0]), lease_until=until))

        if not task_ids:
            return

        await self._run(renew)

    async def sweep(self, now: float) -> int:
        def sweep(db: sqlite3.Connection) -> int:
            deleted = db.execute("DELETE FROM toolkit_tasks WHERE expires_at <= ?", (now,)).rowcount
            rows = db.execute(
                "SELECT record FROM toolkit_tasks WHERE running = 1 AND lease_until < ?", (now,)
            ).fetchall()
            for (text,) in rows:
                _update(db, lease_failed(from_json(text), now))
            return int(deleted) + len(rows)

        return await self._run(sweep)

    async def aclose(self) -> None:
        with self._lock:
            if self._connection is not None:
                self._connection.close()
                self._connection = None


def _insert(db: sqlite3.Connection, record: TaskRecord) -> None:
    db.execute(
        "INSERT INTO toolkit_tasks (task_id, owner, expires_at, running, worker, lease_until, record) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
        (
            record.task_id,
            record.owner,
            record.expires_at(),
            0 if record.terminal else 1,
            record.worker,
            record.lease_until,
            to_json(record),
        ),
    )


def _update(db: sqlite3.Connection, record: TaskRecord) -> None:
    db.execute(
        "UPDATE toolkit_tasks SET running = ?, worker = ?, lease_until = ?, record = ? WHERE task_id = ?",
        (0 if record.terminal else 1, record.worker, record.lease_until, to_json(record), record.task_id),
    )
