"""`RedisTaskStore`: the tasks of a fleet in Redis or Valkey (a `TaskStore`, `toolkit/_tasks/store.py`), which
`RedisBackend.task_store()` makes, so that `Server(backend=RedisBackend(...))` keeps its tasks there too.

A task is one JSON document (`task/<id>`), expiring with the task's time to live. Sorted sets index them:
`owned/<owner>` by creation time (pages, oldest first) and `live/<owner>` by expiry (the owner's limit), each
expiring with its longest-lived task; `leases` by the end of the running worker's lease (`sweep` fails the tasks
whose worker died), and `running/<worker>` the tasks a worker runs (its heartbeat, `renew`). `create` is one Lua
script; `modify` is WATCH/MULTI on the task's key, tried again when another worker changed it meanwhile.

The engine calls a store from the app's event loop and from its task loop (a thread of its own), and a
`redis.asyncio` connection belongs to the loop that opened it: each operation opens its own and closes it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, Any

import anyio

from toolkit._tasks.store import TaskRecord, from_json, lease_failed, to_json

from .base import BackendError
from .redis_client import bounded, connect

if TYPE_CHECKING:
    from toolkit._tasks.store import Modify

__all__ = ["RedisTaskStore"]

_TRIES = 64  # WATCH conflicts on one task before giving up (each one is another worker's change: progress)
_PAGE = 100  # documents read at once when listing

_CREATE = """
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ARGV[2])
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[5]) then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[6])
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[7])
redis.call('ZADD', KEYS[3], ARGV[4], ARGV[7])
local keep = tonumber(ARGV[6])
for i = 2, 3 do
  if redis.call('PTTL', KEYS[i]) < keep then redis.call('PEXPIRE', KEYS[i], keep) end
end
if ARGV[8] ~= '' then
  redis.call('ZADD', KEYS[4], ARGV[9], ARGV[7])
  redis.call('SADD', KEYS[5], ARGV[7])
end
return 1
"""


class RedisTaskStore:
    """The tasks of every worker of a fleet, in the Redis of a `RedisBackend` (`backend.task_store()`, with its
    URL, prefix, timeout and pool size)."""

    def __init__(self, url: str, *, prefix: str, timeout: float, max_connections: int) -> None:
        self.url, self.prefix, self.timeout, self.max_connections = url, prefix, timeout, max_connections

    @contextlib.asynccontextmanager
    async def _client(self) -> AsyncIterator[Any]:
        """A client for one operation, closed after it: the engine calls a store from more than one event loop (the
        app's, its task loop's thread), and a connection belongs to the loop that opened it, so none is kept
        between operations (a task is read or changed a few times a second at most)."""
        client = connect(self.url, self.timeout, self.max_connections)
        try:
            yield client
        finally:
            with anyio.CancelScope(shield=True):
                await client.aclose(close_connection_pool=True)

    def _key(self, *parts: str) -> str:
        return self.prefix + "/".join(("task", *parts))

    async def _run(self, what: str, op: Callable[[Any], Awaitable[Any]]) -> Any:
        """`op(client)`, on a connection of its own, bounded (`bounded`)."""
        async with self._client() as client:
            return await bounded(what, lambda: op(client), self.timeout)

    async def create(self, record: TaskRecord, *, limit: int) -> bool:
        now = time.time()
        ttl = max(1, math.ceil((record.expires_at() - now) * 1000))
        keys = [
            self._key("doc", record.task_id),
            self._key("live", record.owner),
            self._key("owned", record.owner),
            self._key("leases"),
            self._key("running", record.worker or ""),
        ]
        running = record.worker is not None and record.lease_until is not None and not record.terminal
        args = [
            to_json(record),
            repr(now),
            repr(record.expires_at()),
            repr(record.created_at),
            limit,
            ttl,
            record.task_id,
            "1" if running else "",
            repr(record.lease_until or 0.0),
        ]
        made = await self._run("a task", lambda client: client.eval(_CREATE, len(keys), *keys, *args))
        return bool(made)

    async def get(self, task_id: str) -> TaskRecord | None:
        text = await self._run("a task", lambda client: client.get(self._key("doc", task_id)))
        return from_json(text) if text is not None else None

    async def modify(self, task_id: str, change: Modify) -> TaskRecord | None:
        found: TaskRecord | None = await self._run("a task", lambda client: self._modify(client, task_id, change))
        return found

    async def _modify(self, client: Any, task_id: str, change: Modify) -> TaskRecord | None:
        import redis.exceptions

        key = self._key("doc", task_id)
        async with client.pipeline(transaction=True) as pipe:
            for _ in range(_TRIES):
                try:
                    await pipe.watch(key)
                    text = await pipe.get(key)
                    if text is None:
                        return None
                    record = from_json(text)
                    changed = change(record)
                    if changed is None:
                        return record
                    pipe.multi()
                    pipe.set(key, to_json(changed), keepttl=True)
                    self._index(pipe, record, changed)
                    await pipe.execute()
                    return changed
                except redis.exceptions.WatchError:
                    continue
                finally:
                    await pipe.reset()
        raise BackendError(f"task {task_id} changed too often to be changed now")

    def _index(self, pipe: Any, before: TaskRecord, after: TaskRecord) -> None:
        """Keep `leases` and `running/<worker>` in step with a change."""
        running = after.worker is not None and after.lease_until is not None and not after.terminal
        if before.worker is not None and (not running or after.worker != before.worker):
            pipe.srem(self._key("running", before.worker), after.task_id)
        if running:
            assert after.worker is not None
            pipe.zadd(self._key("leases"), {after.task_id: after.lease_until})
            pipe.sadd(self._key("running", after.worker), after.task_id)
        else:
            pipe.zrem(self._key("leases"), after.task_id)

    async def list_owned(self, owner: str, after: str | None, limit: int) -> list[TaskRecord]:
        ids: list[bytes] = await self._run("tasks", lambda client: client.zrange(self._key("owned", owner), 0, -1))
        names = [name.decode() for name in ids]
        if after is not None:
            names = names[names.index(after) + 1 :] if after in names else []
        found: list[TaskRecord] = []
        while names and len(found) < limit:
            page, names = names[:_PAGE], names[_PAGE:]
            keys = [self._key("doc", name) for name in page]
            texts = await self._run("tasks", _command("MGET", *keys))
            found.extend(from_json(text) for text in texts if text is not None)
        return found[:limit]

    async def renew(self, worker: str, until: float) -> None:
        running = self._key("running", worker)
        ids = await self._run("a lease", lambda client: client.smembers(running))

        def extend(record: TaskRecord) -> TaskRecord | None:
            if record.worker != worker or record.terminal:
                return None
            return dataclasses.replace(record, lease_until=until)

        for task_id in ids:
            if await self.modify(task_id.decode(), extend) is None:  # expired: its index entries go
                await self._run("a lease", _command("SREM", running, task_id))
        if ids:
            await self._run("a lease", lambda client: client.pexpire(running, _lease_ms(until)))

    async def sweep(self, now: float) -> int:
        leases = self._key("leases")
        ids = await self._run("leases", lambda client: client.zrangebyscore(leases, "-inf", now))
        failed = 0

        def fail(record: TaskRecord) -> TaskRecord | None:
            nonlocal failed
            if record.terminal or record.lease_until is None or record.lease_until >= now:
                return None
            failed += 1
            return lease_failed(record, now)

        for task_id in ids:
            failed_before = failed
            if await self.modify(task_id.decode(), fail) is None:  # expired meanwhile: its lease goes too
                await self._run("leases", _command("ZREM", leases, task_id))
            failed = min(failed, failed_before + 1)  # a retried change counts once
        return failed

    async def aclose(self) -> None:
        """Nothing is held between operations."""


def _command(*args: Any) -> Callable[[Any], Awaitable[Any]]:
    """One Redis command, as `_run` takes it."""
    return lambda client: client.execute_command(*args)


def _lease_ms(until: float) -> int:
    return max(1000, math.ceil((until - time.time()) * 1000) * 2)
