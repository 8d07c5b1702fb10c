"""Each operation of the `Backend` protocol, on `MemoryBackend` and on `RedisBackend` with a real Redis server
(tests/redis_server.py): two workers on one shared state, as two processes behind a round-robin balancer.

`RedisBackend` runs on asyncio (redis.asyncio); `MemoryBackend` on asyncio and trio.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import pytest
from redis_server import RedisServer, kind_and_loop_fixture, kind_fixture, loop_of_kind_fixture  # noqa: F401
from test_local_backend import local_workers

from toolkit import Backend, BackendError, MemoryBackend, RedisBackend, Server

pytestmark = pytest.mark.anyio


@asynccontextmanager
async def two_workers(kind: str, url: str, **options: float) -> AsyncIterator[tuple[Backend, Backend]]:
    if kind == "local":  # two workers of `toolkit serve --workers`, on a hub of their own (test_local_backend.py)
        async with local_workers(**options) as pair:
            yield pair
        return
    if kind == "memory":
        first: Backend = MemoryBackend(**options)  # type: ignore[arg-type]
        second: Backend = first.peer()  # type: ignore[attr-defined]
    else:
        # A timeout for a hang only, not the production 0.5 s: under load a write took longer ("Redis did not answer a
        # write within 0.5 s" on the happy path). The Redis-down test below gives its own.
        options = {"timeout": 10.0, **options}
        first = RedisBackend(url, **options)  # type: ignore[arg-type]
        second = RedisBackend(url, **options)  # type: ignore[arg-type]
    await first.start()
    await second.start()
    try:
        yield first, second
    finally:
        await first.stop()
        await second.stop()


async def test_facts_are_shared_and_expire(kind: str, redis_url: str) -> None:
    async with two_workers(kind, redis_url) as (a, b):
        await a.put("ended/n1", "1", 60)
        await a.put("level/n1", "debug", 0.05)
        assert await b.get("ended/n1", "ended/n2") == ["1", None]
        await anyio.sleep(0.1)  # past its ttl: the expiry itself is what is tested
        assert await b.get("level/n1") == [None]


async def test_a_bucket_is_shared_by_the_workers(kind: str, redis_url: str) -> None:
    async with two_workers(kind, redis_url) as (a, b):
        assert await a.take("who", 1 / 60, 2) is None
        assert await b.take("who", 1 / 60, 2) is None
        wait = await a.take("who", 1 / 60, 2)
        assert wait is not None
        assert 0 < wait <= 60
        assert await b.take("someone else", 1 / 60, 2) is None


async def test_messages_reach_one_worker_or_all_and_a_gone_worker_is_known_at_once(kind: str, redis_url: str) -> None:
    async with two_workers(kind, redis_url) as (a, b):
        got_a: list[bytes] = []
        got_b: list[bytes] = []
        two = anyio.Event()

        async def inbox_a(message: bytes) -> None:
            got_a.append(message)

        async def inbox_b(message: bytes) -> None:
            got_b.append(message)
            if len(got_b) == 2:
                two.set()

        async with anyio.create_task_group() as tg:
            await tg.start(a.listen, inbox_a)
            await tg.start(b.listen, inbox_b)
            assert await a.send(b.worker, b"to b")
            await a.broadcast(b"to all")
            with anyio.fail_after(5):
                await two.wait()
            assert got_b == [b"to b", b"to all"]
            assert not await a.send("no-such-worker", b"lost")
            tg.cancel_scope.cancel()
        assert not await a.send(b.worker, b"b stopped listening")


async def test_events_resume_on_another_worker_bounded_and_followed(kind: str, redis_url: str) -> None:
    async with two_workers(kind, redis_url, max_events=3) as (a, b):
        assert not (await b.since("p1", 0)).known
        for seq in range(1, 6):
            await a.append("p1", seq, b"frame %d" % seq)
        kept = await b.since("p1", 0)
        assert kept.known
        assert not kept.done
        assert list(kept.frames) == [(3, b"frame 3"), (4, b"frame 4"), (5, b"frame 5")]
        assert list((await b.since("p1", 4)).frames) == [(5, b"frame 5")]

        async def answer() -> None:
            await a.append("p1", 6, b"answer", last=True)

        async with anyio.create_task_group() as tg:
            tg.start_soon(answer)
            with anyio.fail_after(5):
                found = await b.since("p1", 5, wait=0.3)
                while not found.frames:
                    found = await b.since("p1", 5, wait=0.3)
        assert list(found.frames) == [(6, b"answer")]
        assert found.done
        assert (await b.since("p1", 6)).done


@pytest.mark.parametrize("anyio_backend", ["trio"])
async def test_redis_backend_on_trio_says_it_needs_asyncio(redis_url: str) -> None:
    with pytest.raises(BackendError, match="runs on asyncio"):
        await RedisBackend(redis_url).start()


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_redis_down_fails_fast_and_recovers_by_itself(redis_server: RedisServer) -> None:
    own = RedisServer()
    own.start()
    # A timeout of 1 s, not 0.3: the calls after Redis returns must beat it (a new connection, on a loaded machine,
    # took longer than 0.5 s in the fleet tests); a stopped Redis refuses at once, and a paused one outlasts it.
    backend = RedisBackend(own.url, timeout=1.0)
    await backend.start()
    try:
        await backend.put("k", "v", 60)
        own.stop()
        with anyio.fail_after(5), pytest.raises(BackendError, match="Redis"):
            await backend.get("k")
        own.start()  # the same port, empty (no persistence)
        with anyio.fail_after(5):
            assert await backend.get("k") == [None]
        # Slow: every command waits 5 s, well past the backend's bound (twice its timeout), so that a stall of this
        # process between the pause and the write cannot let the pause end first.
        own.pause(5000)
        with anyio.fail_after(5), pytest.raises(BackendError, match=r"did not answer|Redis"):
            await backend.put("k", "v", 60)
    finally:
        await backend.stop()
        own.stop()


def test_a_backend_option_that_is_not_a_backend_is_refused_at_once() -> None:
    with pytest.raises(TypeError, match="backend= takes a Backend"):
        Server("demo", backend="redis://localhost")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="backend= takes a Backend"):
        Server("demo").http_app(backend=object())  # type: ignore[arg-type]


def test_a_redis_password_never_shows() -> None:
    backend = RedisBackend("redis://user:s3cret@cache.internal:6380/2")
    assert "s3cret" not in repr(backend)
    assert repr(backend) == "RedisBackend('redis://***@cache.internal:6380/2', prefix='mcp:')"
