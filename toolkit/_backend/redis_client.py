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
        from redis.asyncio.retry import Retry
        from redis.backoff import NoBackoff
        from redis.exceptions import ConnectionError as Lost
    except ImportError as exc:  # pragma: no cover - the extra is installed with dev
        raise ImportError("RedisBackend needs the redis extra: in a clone of toolkit, pip install '.[redis]'") from exc
    pool = aioredis.BlockingConnectionPool.from_url(
        url,
        max_connections=max_connections,
        timeout=timeout,
        socket_timeout=timeout,
        socket_connect_timeout=timeout,
        # A pooled connection Redis closed (it restarted) is tried again once on a new one, as redis-py's own
        # default client does; redis-py before 8.2 (the newest on Python 3.10) failed the first command after a
        # restart on it. Not a timeout: that is a Redis too slow or paused, and `timeout` bounds it.
        retry=Retry(NoBackoff(), 1, (Lost,)),
    )
    return aioredis.Redis(connection_pool=pool)


async def bounded(what: str, run: Callable[[], Awaitable[Any]], seconds: float) -> Any:
    """Await `run()` (one round trip to Redis), bounded by `seconds`; every failure is one `BackendError` saying
    `what` failed (never the URL, which may hold a password)."""
    import redis.exceptions

    try:
        with anyio.fail_after(seconds * 2):  # the socket's own timeouts first; this one bounds the rest
            return await run()
    except TimeoutError as exc:
        raise BackendError(f"Redis did not answer {what} within {seconds} s") from exc
    except redis.exceptions.RedisError as exc:  # its text names the host, never the URL's password
        raise BackendError(f"Redis failed {what}: {exc}") from exc
    except OSError as exc:
        raise BackendError(f"Redis unreachable for {what}: {exc}") from exc
