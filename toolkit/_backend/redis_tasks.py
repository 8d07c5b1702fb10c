"""`RedisTaskStore`: the tasks of a fleet in Redis or Valkey (a `TaskStore`, `toolkit/_tasks/store.py`), which
`RedisBackend.task_store()` makes, so that `Server(backend=RedisBackend(...))` keeps its tasks there too.

A task is one JSON document (`task/doc/<id>`), expiring with the task's time to live. Sorted sets index them:
`owned/<owner>` by creation time (pages, oldest first), `live/<owner>` by expiry (the owner's limit) and `all` by
expiry (the store's ceiling), each expiring with its longest-lived task, and trimmed of the expired tasks whenever a
task is made or listed (so an index holds the live tasks only, however many came and went); `leases` by the end of
the running worker's lease (`sweep` fails the tasks whose worker died). `create` is one Lua script; `modify` is
WATCH/MULTI on the task's key, tried again when another worker changed it meanwhile.

The engine calls a store from the app's event loop and from its task loop (a thread of its own), and a
`redis.asyncio` connection belongs to the loop that opened it: the store keeps one pool per event loop, made on its
first use there and closed by `aclose` on that loop (the engine calls it as each loop stops).
"""

from __future__ import annotations

import asyncio
import dataclasses
import math
import time
import weakref
from collections.abc import Awaitable, Callable, Collection
from typing import TYPE_CHECKING, Any

import anyio

from toolkit._tasks.store import TaskRecord, from_json, lease_failed, to_json

from .base import BackendError
from .redis_client import bounded, connect

if TYPE_CHECKING:
    from toolkit._tasks.store import Modify, Refusal

__all__ = ["RedisTaskStore"]

_TRIES = 64  # WATCH conflicts on one task before giving up (each one is another worker's change: progress)
_PAGE = 100  # documents read at once when listing

# KEYS: live/<owner>, owned/<owner>, all. ARGV: now. The expired tasks leave the three indexes.
_TRIM = """
local gone = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if #gone > 0 then
  redis.call('ZREM', KEYS[1], unpack(gone))
  redis.call('ZREM', KEYS[2], unpack(gone))
end
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', ARGV[1])
"""

# KEYS: live/<owner>, owned/<owner>, all (as `_TRIM`), doc, leases. ARGV: now (as `_TRIM`), record, expires, created,
# limit, ttl ms, task id, running ('1' or ''), lease end, ceiling. 1: kept; 0: the owner's limit; -1: the ceiling.
_CREATE = (
    _TRIM
    + """
if redis.call('ZCARD', KEYS[3]) >= tonumber(ARGV[10]) then return -1 end
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[5]) then return 0 end
redis.call('SET', KEYS[4], ARGV[2], 'PX', ARGV[6])
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[7])
redis.call('ZADD', KEYS[2], ARGV[4], ARGV[7])
redis.call('ZADD', KEYS[3], ARGV[3], ARGV[7])
local keep = tonumber(ARGV[6])
for i = 1, 3 do
  if redis.call('PTTL', KEYS[i]) < keep then redis.call('PEXPIRE', KEYS[i], keep) end
end
if ARGV[8] ~= '' then redis.call('ZADD', KEYS[5], ARGV[9], ARGV[7]) end
return 1
"""
)


class RedisTaskStore:
    """The tasks of every worker of a fleet, in the Redis of a `RedisBackend` (`backend.task_store()`, with its
    URL, prefix, timeout and pool size)."""

    def __init__(self, url: str, *, prefix: str, timeout: float, max_connections: int) -> None:
        self.url, self.prefix, self.timeout, self.max_connections = url, prefix, timeout, max_connections
        self._clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Any] = weakref.WeakKeyDictionary()

    def _client(self) -> Any:
        """The running event loop's client (its pool of at most `max_connections`), made on first use there."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # not on asyncio (trio): `connect` says so
            return connect(self.url, self.timeout, self.max_connections)
        client = self._clients.get(loop)
        if client is None:
            client = self._clients[loop] = connect(self.url, self.timeout, self.max_connections)
        return client

    def _key(self, *parts: str) -> str:
        return self.prefix + "/".join(("task", *parts))

    def _owner_keys(self, owner: str) -> list[str]:
        return [self._key("live", owner), self._key("owned", owner), self._key("all")]

    async def _run(self, what: str, op: Callable[[Any], Awaitable[Any]]) -> Any:
        """`op(client)` on this loop's pool, bounded (`bounded`)."""
        client = self._client()
        return await bounded(what, lambda: op(client), self.timeout)

    async def create(self, record: TaskRecord, *, limit: int, ceiling: int) -> Refusal | None:
        now = time.time()
        ttl = max(1, math.ceil((record.expires_at() - now) * 1000))
        keys = [*self._owner_keys(record.owner), self._key("doc", record.task_id), self._key("leases")]
        running = record.worker is not None and record.lease_until is not None and not record.terminal
        args = [
            repr(now),
            to_json(record),
            repr(record.expires_at()),
            repr(record.created_at),
            limit,
            ttl,
            record.task_id,
            "1" if running else "",
            repr(record.lease_until or 0.0),
            ceiling,
        ]
        made = int(await self._run("a task", lambda client: client.eval(_CREATE, len(keys), *keys, *args)))
        return None if made == 1 else "caller" if made == 0 else "store"

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
                    self._index(pipe, changed)
                    await pipe.execute()
                    return changed
                except redis.exceptions.WatchError:
                    continue
                finally:
                    await pipe.reset()
        raise BackendError(f"task {task_id} changed too often to be changed now")

    def _index(self, pipe: Any, after: TaskRecord) -> None:
        """Keep `leases` in step with a change."""
        if after.worker is not None and after.lease_until is not None and not after.terminal:
            pipe.zadd(self._key("leases"), {after.task_id: after.lease_until})
        else:
            pipe.zrem(self._key("leases"), after.task_id)

    async def list_owned(self, owner: str, after: str | None, limit: int) -> list[TaskRecord]:
        keys = self._owner_keys(owner)
        owned = keys[1]

        async def page(client: Any) -> list[bytes]:
            await client.eval(_TRIM, len(keys), *keys, repr(time.time()))
            start = 0
            if after is not None:
                rank = await client.zrank(owned, after)
                if rank is None:
                    return []
                start = rank + 1
            found: list[bytes] = await client.zrange(owned, start, start + limit - 1)
            return found

        names = [name.decode() for name in await self._run("tasks", page)]
        found: list[TaskRecord] = []
        now = time.time()
        for first in range(0, len(names), _PAGE):
            keys = [self._key("doc", name) for name in names[first : first + _PAGE]]
            texts = await self._run("tasks", _command("MGET", *keys))
            found.extend(
                record for text in texts if text is not None and (record := from_json(text)).expires_at() > now
            )
        return found[:limit]

    async def renew(self, worker: str, until: float, task_ids: Collection[str]) -> None:
        def extend(record: TaskRecord) -> TaskRecord | None:
            if record.worker != worker or record.terminal:
                return None
            return dataclasses.replace(record, lease_until=until)

        for task_id in task_ids:
            await self.modify(task_id, extend)

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
        """Close this event loop's pool (the store opens another on its next use here)."""
        try:
            client = self._clients.pop(asyncio.get_running_loop(), None)
        except RuntimeError:  # not on asyncio: nothing was opened
            return
        if client is not None:
            with anyio.CancelScope(shield=True):
                await client.aclose(close_connection_pool=True)


def _command(*args: Any) -> Callable[[Any], Awaitable[Any]]:
    """One Redis command, as `_run` takes it."""
    return lambda client: client.execute_command(*args)
