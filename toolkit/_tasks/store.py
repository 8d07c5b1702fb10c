"""The task store: a task's record, and the small async protocol every store implements (memory here, SQLite in
`sqlite.py`, a shared backend elsewhere).

A record is plain data (JSON-able through `to_json`/`from_json`), so that any store can keep it as one document.
Every change goes through `modify`: a read, a pure function of the record, and a write, done atomically by the
store (a lock in memory, a transaction in SQLite, WATCH/MULTI or a script in Redis). The engine never changes a
record in place: `modify`'s function returns a new one (`dataclasses.replace`) or None to leave it as it is.

What a store must promise:

- `create` is durable when it returns (a `get` from any worker of the store finds the task: the spec's "durably
  created"), and refuses (says which limit) when the owner already has `limit` tasks that are not expired, or the
  store `ceiling` tasks of every owner;
- `modify` is atomic per task: two workers changing one task one after the other both see the other's change;
- `renew` extends the lease of the unfinished tasks a worker names (those it still runs: never one whose run ended,
  even when its outcome could not be written, so that its lease ends it); `sweep` deletes the tasks whose time to
  live has passed and marks failed the unfinished tasks whose lease expired (their worker died);
- `list_owned` lists no expired task, even before a sweep deleted it;
- time is the wall clock in seconds (`time.time()`), the same on every worker of the store.
"""

from __future__ import annotations

import collections
import dataclasses
import json
import threading
import time
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

import anyio.lowlevel

__all__ = [
    "LEASE_EXPIRED",
    "TERMINAL",
    "MemoryTaskStore",
    "Modify",
    "Refusal",
    "TaskRecord",
    "TaskStatus",
    "TaskStore",
    "from_json",
    "to_json",
]

TaskStatus = Literal["working", "input_required", "completed", "failed", "cancelled"]
Refusal = Literal["caller", "store"]
"""Why `TaskStore.create` kept nothing: the owner has its `limit` of live tasks, or the store its `ceiling`."""
TERMINAL: frozenset[str] = frozenset({"completed", "failed", "cancelled"})
#: The `statusMessage` of a task whose worker stopped renewing its lease (it died, or lost the store).
LEASE_EXPIRED = "the process running this task stopped (its lease expired); the task was not retried"


@dataclass(frozen=True, slots=True)
class TaskRecord:
    """One task as a store keeps it."""

    task_id: str
    """Unguessable (128 random bits): the spec lets a server use it as a bearer token for the task's state."""
    owner: str
    """Who created it (the caller's identity, `""` when anonymous): another owner's lookups find nothing."""
    tool: str
    version: str
    """The protocol revision of the `tools/call` that created it (the shapes of its wire objects)."""
    status: TaskStatus
    created_at: float
    updated_at: float
    ttl_ms: int
    poll_interval_ms: int
    status_message: str | None = None
    result: dict[str, Any] | None = None
    """The final `CallToolResult` wire object (status completed)."""
    error: dict[str, Any] | None = None
    """The JSON-RPC error object (status failed)."""
    input_requests: dict[str, dict[str, Any]] = field(default_factory=dict)
    """The questions outstanding, by key (status input_required)."""
    input_responses: dict[str, Any] = field(default_factory=dict)
    """Answers given (`tasks/update`) that the running tool has not taken yet."""
    worker: str | None = None
    """The process running it, while it runs."""
    lease_until: float | None = None
    """When the running worker's lease ends unless renewed (None: not running)."""

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL

    def expires_at(self) -> float:
        return self.created_at + self.ttl_ms / 1000


Modify = Callable[[TaskRecord], "TaskRecord | None"]
"""A change to one record: the new record, or None to leave it unchanged. Pure: a store may call it again."""


@runtime_checkable
class TaskStore(Protocol):
    """Where tasks are kept. Every method is async and safe to call from any task of the event loop."""

    async def create(self, record: TaskRecord, *, limit: int, ceiling: int) -> Refusal | None:
        """Keep a new task (None); nothing kept when its owner already has `limit` live tasks (`"caller"`), or the
        store `ceiling` live tasks of every owner (`"store"`)."""
        ...

    async def get(self, task_id: str) -> TaskRecord | None:
        """The task, or None (unknown, or swept)."""
        ...

    async def modify(self, task_id: str, change: Modify) -> TaskRecord | None:
        """Apply `change` atomically; the record after it (unchanged if `change` gave None), None if unknown."""
        ...

    async def list_owned(self, owner: str, after: str | None, limit: int) -> list[TaskRecord]:
        """Up to `limit` of `owner`'s tasks that have not expired, oldest first, after the task `after` (a page's
        cursor)."""
        ...

    async def renew(self, worker: str, until: float, task_ids: Collection[str]) -> None:
        """Extend to `until` the lease of the unfinished tasks of `task_ids` that `worker` runs (its heartbeat)."""
        ...

    async def sweep(self, now: float) -> int:
        """Delete the tasks expired at `now`; fail the unfinished ones whose lease ended. How many it changed."""
        ...

    async def aclose(self) -> None:
        """Release what the store holds (connections, files)."""
        ...


def lease_failed(record: TaskRecord, now: float) -> TaskRecord:
    """`record` failed because its worker's lease ended (see `LEASE_EXPIRED`)."""
    return dataclasses.replace(
        record,
        status="failed",
        status_message=LEASE_EXPIRED,
        error={"code": -32603, "message": LEASE_EXPIRED},
        input_requests={},
        worker=None,
        lease_until=None,
        updated_at=now,
    )


def to_json(record: TaskRecord) -> str:
    """The record as one JSON document (what a store that keeps text keeps)."""
    return json.dumps(dataclasses.asdict(record), separators=(",", ":"), ensure_ascii=False)


def from_json(text: str | bytes) -> TaskRecord:
    """The record `to_json` wrote."""
    data: Mapping[str, Any] = json.loads(text)
    return TaskRecord(**data)


class MemoryTaskStore:
    """Tasks in this process's memory (the default): fast, and gone with the process.

    Thread-safe (one lock), so that a server's workers in one process, and a sync tool's thread, share it.
    """

    def __init__(self) -> None:
        self._tasks: dict[str, TaskRecord] = {}  # in creation order
        self._owned: collections.Counter[str] = collections.Counter()  # each owner's tasks in `_tasks`
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._tasks)

    async def create(self, record: TaskRecord, *, limit: int, ceiling: int) -> Refusal | None:
        await anyio.lowlevel.checkpoint()
        with self._lock:
            if self._refusal(record.owner, limit, ceiling) is not None:
                # The counts hold the expired tasks the sweep has not deleted yet: only a full store looks for them.
                self._drop_expired(time.time())
                refusal = self._refusal(record.owner, limit, ceiling)
                if refusal is not None:
                    return refusal
            self._tasks[record.task_id] = record
            self._owned[record.owner] += 1
            return None

    def _refusal(self, owner: str, limit: int, ceiling: int) -> Refusal | None:
        if len(self._tasks) >= ceiling:
            return "store"
        if self._owned[owner] >= limit:
            return "caller"
        return None

    def _drop_expired(self, now: float) -> int:
        expired = [r for r in self._tasks.values() if r.expires_at() <= now]
        for record in expired:
            self._drop(record)
        return len(expired)

    def _drop(self, record: TaskRecord) -> None:
        del self._tasks[record.task_id]
        self._owned[record.owner] -= 1
        if not self._owned[record.owner]:
            del self._owned[record.owner]

    async def get(self, task_id: str) -> TaskRecord | None:
        await anyio.lowlevel.checkpoint()  # a store in memory yields as one over a network would: a loop over many
        return self._tasks.get(task_id)  # tasks (`subscriptions/listen`) never holds up the other requests

    async def modify(self, task_id: str, change: Modify) -> TaskRecord | None:
        await anyio.lowlevel.checkpoint()
        with self._lock:
            record = self._tasks.get(task_id)
            if record is None:
                return None
            changed = change(record)
            if changed is None:
                return record
            self._tasks[task_id] = changed
            return changed

    async def list_owned(self, owner: str, after: str | None, limit: int) -> list[TaskRecord]:
        await anyio.lowlevel.checkpoint()
        now = time.time()
        with self._lock:
            records = [r for r in self._tasks.values() if r.owner == owner and r.expires_at() > now]
        if after is not None:
            ids = [r.task_id for r in records]
            records = records[ids.index(after) + 1 :] if after in ids else []
        return records[:limit]

    async def renew(self, worker: str, until: float, task_ids: Collection[str]) -> None:
        with self._lock:
            for task_id in task_ids:
                record = self._tasks.get(task_id)
                if record is not None and record.worker == worker and not record.terminal:
                    self._tasks[task_id] = dataclasses.replace(record, lease_until=until)

    async def sweep(self, now: float) -> int:
        with self._lock:
            changed = self._drop_expired(now)
            for task_id, record in self._tasks.items():
                if not record.terminal and record.lease_until is not None and record.lease_until < now:
                    self._tasks[task_id] = lease_failed(record, now)
                    changed += 1
        return changed

    async def aclose(self) -> None:
        return None
