"""The `redis.asyncio` client of the Redis backend and task store, made one way (`connect`), and each round trip
bounded the same way (`bounded`): `redis` (the `redis` extra) is imported here, when first used."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import anyio

from .base import BackendError

__all__ = ["bounded", "connect"]


def connect(url: str, timeout: float, max_connections: int) -> Any:
    """A `redis.asyncio.Redis` on a pool of at most `max_connections`, every wait bounded by `timeout` (connecting,
    reading, a free connection). Connects on first use, on the running asyncio loop (a connection belongs to it).

    Raises:
        BackendError: not on asyncio (redis.asyncio runs on asyncio only).
        ImportError: the `redis` extra is not installed.
    """
    import asyncio

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        raise BackendError("Redis runs on asyncio here (redis.asyncio): serve the app on an asyncio loop") from None
    try:
        import redis.asyncio as aioredis
    except ImportError as exc:  # pragma: no cover - the extra is installed with dev
        raise ImportError("RedisBackend needs the redis extra: in a clone of toolkit, pip install '.[redis]'") from exc
    pool = aioredis.BlockingConnectionPool.from_url(
        url,
        max_connections=max_connections,
        timeout=timeout,
        socket_timeout=timeout,
        socket_connect_timeout=timeout,
    )
    return aioredis.Redis(connection_pool=pool)


async def bounded(what: str, run: Callable[[], Awaitable[Any]], seconds: float) -> Any:
    """Await `run()` (one round trip to Redis), bounded by `seconds`; every failure is one `BackendError` saying
    `what` failed (never the URL, which may hold a password)."""
    import redis.exceptions

    try:
        with anyio.fail_after(seconds * 2):  # the socket's own timeouts first; this one bounds the rest
            try:
                return await run()
            except redis.exceptions.ConnectionError:
                # A pooled connection Redis closed (it restarted): tried once more, on a new one. redis-py before 8.2
                # (the newest on Python 3.10) fails the first command after a restart on it. Here, not as the pool's
                # `retry`: that one would also reconnect a stopped worker's subscription behind its back. Not a
                # timeout: that is a Redis too slow or paused, and `seconds` bounds it.
                return await run()
    except TimeoutError as exc:
        raise BackendError(f"Redis did not answer {what} within {seconds} s") from exc
    except redis.exceptions.RedisError as exc:  # its text names the host, never the URL's password
        raise BackendError(f"Redis failed {what}: {exc}") from exc
    except OSError as exc:
        raise BackendError(f"Redis unreachable for {what}: {exc}") from exc
