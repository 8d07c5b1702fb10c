"""`RedisBackend`: the shared state of a fleet in Redis or Valkey (`base.Backend`), through `redis.asyncio` (the
`redis` extra, imported by `start` only).

How each operation maps onto Redis, one round trip each (a pipeline where it takes two commands):
- facts: `SET key value PX ttl`, `MGET`;
- token buckets: one Lua script (the bucket a hash, Redis's clock, so the workers' clocks need not agree);
- messages: `PUBLISH` on the worker's channel (`<prefix>w/<worker>`, its reply says how many listen: 0 means the
  worker is gone) or on `<prefix>all`; each worker keeps one subscription, reopened when Redis comes back;
- events: a Redis stream per SSE stream (`XADD` with the event's number as its id, trimmed to `max_events`, its
  expiry renewed), read with `XRANGE`, and waited for with `XREAD BLOCK`.

Every key has an expiry. Every operation is bounded by `timeout`: past it, or when Redis refuses the connection,
it raises `BackendError` at once (the pool's connections are tested again on the next use: recovery is by itself).
"""

from __future__ import annotations

import logging
import math
import os
import urllib.parse
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypedDict

import anyio
import anyio.abc
from typing_extensions import Unpack

from .base import BackendError, Events, Inbox, worker_name
from .redis_client import bounded, connect

if TYPE_CHECKING:
    from .redis_tasks import RedisTaskStore

__all__ = ["RedisBackend", "RedisOptions"]

logger = logging.getLogger("toolkit.backend")
_PREFIX = "mcp:"  # before the server's name, in the default prefix

_TAKE = """
local tm = redis.call('TIME')
local now = tonumber(tm[1]) + tonumber(tm[2]) / 1000000
local rate = tonumber(ARGV[1])
local cap = tonumber(ARGV[2])
local kept = redis.call('HMGET', KEYS[1], 't', 'at')
local tokens = tonumber(kept[1]) or cap
local at = tonumber(kept[2]) or now
tokens = math.min(cap, tokens + math.max(0, now - at) * rate)
local wait = ''
if tokens >= 1 then tokens = tokens - 1 else wait = tostring((1 - tokens) / rate) end
redis.call('HSET', KEYS[1], 't', tostring(tokens), 'at', tostring(now))
redis.call('PEXPIRE', KEYS[1], math.ceil(cap / rate * 1000) + 1000)
return wait
"""


class RedisOptions(TypedDict, total=False):
    """The options of `RedisBackend`."""

    prefix: str
    """Put before every key and channel. By default `"mcp:<server name>:"`, the name of the server the backend is
    given to (`Server(backend=)`, `http_app(backend=)`): the workers of one app share their state, two apps on one
    Redis never do (their sessions, rate limits, messages and tasks stay apart). Give one to keep that state under
    another name (a renamed server keeping its tasks), or to share it between differently named apps."""
    timeout: float
    """Seconds any operation may take, connecting included (default 0.5): past it the request that needed it
    fails with `BackendError`."""
    max_connections: int
    """Connections this process opens at most (default 64); a request waits at most `timeout` for a free one."""
    events_ttl: float
    """Seconds a stream's SSE events are kept after its latest one (default 60)."""
    max_events: int
    """Events kept per SSE stream (default 1000; the oldest go first, a POST stream's answer always stays)."""


class RedisBackend:
    """The state a fleet of workers shares, in Redis or Valkey ([Backends](backend.md)): the `redis` extra
    (`pip install '.[redis]'` in a clone of toolkit).

    ```python
    from toolkit import RedisBackend, Server

    server = Server("demo", backend=RedisBackend("redis://127.0.0.1:6379/0"))
    ```

    Each process makes its own (it is this worker: its connections, its name); all of them name the same Redis.
    Nothing connects before the app's lifespan starts.

    Args:
        url: A `redis://` (or `rediss://`, `unix://`) URL, as `redis.asyncio.from_url` takes it.
        **options: `prefix`, `timeout`, `max_connections`, `events_ttl`, `max_events` (`RedisOptions`).
    """

    def __init__(self, url: str, **options: Unpack[RedisOptions]) -> None:
        self.url = url
        given = options.get("prefix")
        self.prefix = given if given is not None else _PREFIX
        self._own_prefix = given is not None  # then the same whatever app it serves
        self._app: str | None = None  # the server it serves, once told (`serve_app`)
        self.timeout = options.get("timeout", 0.5)
        self.max_connections = options.get("max_connections", 64)
        self.events_ttl = options.get("events_ttl", 60.0)
        self.max_events = options.get("max_events", 1000)
        if self.timeout <= 0 or self.max_connections < 2 or self.events_ttl <= 0 or self.max_events < 1:
            raise ValueError("RedisBackend needs timeout > 0, max_connections >= 2, events_ttl > 0, max_events >= 1")
        self._worker, self._pid = "", 0
        self._redis: Any = None
        self._listening: anyio.CancelScope | None = None  # the subscription's loop (`listen`), ended by `stop`
        self._take: Any = None

    @property
    def worker(self) -> str:
        # Named again in a process forked after it was made (gunicorn --preload): two workers never share a name.
        if self._pid != os.getpid():
            self._worker, self._pid = worker_name(), os.getpid()
        return self._worker

    def __repr__(self) -> str:
        url = urllib.parse.urlsplit(self.url)
        shown = self.url
        if url.password is not None:  # never a password in a log line
            netloc = f"***@{url.hostname}" + (f":{url.port}" if url.port else "")
            shown = urllib.parse.urlunsplit((url.scheme, netloc, url.path, url.query, url.fragment))
        return f"RedisBackend({shown!r}, prefix={self.prefix!r})"

    async def start(self) -> None:
        if self._redis is not None:
            return
        self._redis = connect(self.url, self.timeout, self.max_connections)
        self._take = self._redis.register_script(_TAKE)

    async def stop(self) -> None:
        client, self._redis = self._redis, None
        if self._listening is not None:
            # The subscription ends now, before the pool's connections close: redis-py reconnects a subscription whose
            # connection drops (and subscribes again), so the other workers would go on seeing this one listen.
            self._listening.cancel()
        if client is not None:
            with anyio.CancelScope(shield=True):
                await client.aclose(close_connection_pool=True)

    def serve_app(self, name: str) -> None:
        """Called with the name of the server this backend is given to (before it starts): without a `prefix` of its
        own, its keys and channels start with `mcp:<name>:`, so that another app on the same Redis shares nothing.

        Raises:
            ValueError: it already serves a server of another name, and has no prefix of its own (the two would
                share one prefix, or move the first one's state from under it).
        """
        if self._own_prefix or self._app == name:
            return
        if self._app is not None:
            raise ValueError(
                f"this RedisBackend serves server {self._app!r}: give server {name!r} a backend of its own, or give "
                f"both one prefix= to share their state on purpose"
            )
        self._app, self.prefix = name, f"{_PREFIX}{name}:"

    def task_store(self) -> RedisTaskStore:
        """A task store in the same Redis (its own connections on each event loop that uses it): what
        `Server(backend=RedisBackend(...))` keeps its tasks in, unless `task_store=` says otherwise."""
        from .redis_tasks import RedisTaskStore  # deferred: most servers run no task

        return RedisTaskStore(self.url, prefix=self.prefix, timeout=self.timeout, max_connections=self.max_connections)

    def client(self) -> Any:
        """This worker's `redis.asyncio.Redis` client (its pool), for what else a fleet keeps beside this backend in
        the same Redis (the task store): use the `prefix`, an expiry on every key, and `run` for each round trip.

        Raises:
            BackendError: not started (the app's lifespan starts it).
        """
        if self._redis is None:
            raise BackendError(
                "RedisBackend is not started: the app's ASGI lifespan starts it (mounted in another app: enter "
                "app.running() in the parent's lifespan)"
            )
        return self._redis

    async def run(self, what: str, run: Callable[[], Awaitable[Any]]) -> Any:
        """Await `run()` (one round trip to Redis), bounded by the timeout; every failure is one clear
        `BackendError` saying `what` failed."""
        return await bounded(what, run, self.timeout)

    async def put(self, key: str, value: str, ttl: float) -> None:
        client = self.client()
        await self.run("a write", lambda: client.set(self.prefix + key, value, px=max(1, math.ceil(ttl * 1000))))

    async def get(self, *keys: str) -> list[str | None]:
        client = self.client()
        found = await self.run("a read", lambda: client.mget([self.prefix + key for key in keys]))
        return [value.decode() if value is not None else None for value in found]

    async def take(self, key: str, rate: float, capacity: float) -> float | None:
        client = self.client()
        script = self._take
        wait = await self.run(
            "a rate limit",
            lambda: script(keys=[self.prefix + "rate/" + key], args=[repr(rate), repr(capacity)], client=client),
        )
        return float(wait) if wait else None

    async def send(self, worker: str, message: bytes) -> bool:
        client = self.client()
        listening = await self.run("a message", lambda: client.publish(f"{self.prefix}w/{worker}", message))
        return int(listening) > 0

    async def broadcast(self, message: bytes) -> None:
        client = self.client()
        await self.run("a message", lambda: client.publish(self.prefix + "all", message))

    async def listen(
        self, inbox: Inbox, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        told = False

        def started() -> None:
            nonlocal told
            if not told:
                told = True
                task_status.started()

        with anyio.CancelScope() as self._listening:
            await self._subscribed(inbox, started)
        self._listening = None
        started()  # stopped before it could subscribe

    async def _subscribed(self, inbox: Inbox, started: Callable[[], None]) -> None:
        """Keep the subscription to this worker's channel and the fleet's until stopped, reopened when lost;
        `started()` once it is open, or once it failed first (the app starts all the same: what needs Redis answers
        503 until it is back)."""
        import redis.exceptions

        channels = (f"{self.prefix}w/{self.worker}", self.prefix + "all")
        pause = 0.05
        while self._redis is not None:  # until stopped
            pubsub = self._redis.pubsub(ignore_subscribe_messages=True)
            try:
                await self.run("a subscription", lambda: pubsub.subscribe(*channels))  # noqa: B023 - awaited here
                started()
                pause = 0.05
                while True:
                    message = await pubsub.get_message(timeout=1.0)
                    if message is not None and message["type"] == "message":
                        await inbox(message["data"])
            except (BackendError, redis.exceptions.RedisError, OSError) as exc:
                if self._redis is None:  # stopped meanwhile
                    return
                logger.warning("the Redis subscription of worker %s was lost (%s); reconnecting", self.worker, exc)
                started()
            finally:
                with anyio.CancelScope(shield=True), anyio.move_on_after(self.timeout):
                    await pubsub.aclose()
            await anyio.sleep(pause)
            pause = min(1.0, pause * 2)

    async def append(self, stream: str, seq: int, frame: bytes, *, last: bool = False) -> None:
        client = self.client()
        key = self.prefix + "events/" + stream
        fields = {"f": frame, "d": b"1"} if last else {"f": frame}

        async def run() -> None:
            async with client.pipeline(transaction=False) as pipe:
                # `<seq>-1`: event 0 (the stream opened) too, as Redis refuses the id 0-0
                pipe.xadd(key, fields, id=f"{seq}-1", maxlen=self.max_events, approximate=False)
                pipe.pexpire(key, math.ceil(self.events_ttl * 1000))
                await pipe.execute()

        await self.run("an event", run)

    async def since(self, stream: str, after: int, wait: float = 0.0) -> Events:
        client = self.client()
        key = self.prefix + "events/" + stream

        async def read() -> tuple[list[Any], list[Any]]:
            async with client.pipeline(transaction=False) as pipe:
                pipe.xrange(key, min=f"{after + 1}-0")
                pipe.xrevrange(key, count=1)
                found, latest = await pipe.execute()
            return found, latest

        found, latest = await self.run("events", read)
        if not latest:
            return Events((), False, known=False)
        done = b"d" in latest[0][1]
        if not found and not done and wait > 0:
            # Within the socket's timeout (a longer block would read as a dead connection): the caller asks again.
            block = max(1, math.ceil(min(wait, self.timeout * 0.8) * 1000))

            async def follow() -> Any:
                return await client.xread({key: f"{after}-1"}, block=block)

            replies = await self.run("events", follow)
            found = replies[0][1] if replies else []
            done = any(b"d" in fields for _, fields in found)
        frames = [(int(entry.split(b"-")[0]), fields[b"f"]) for entry, fields in found]
        return Events(frames, done)
