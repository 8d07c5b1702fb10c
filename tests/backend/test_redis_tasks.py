"""`RedisBackend.task_store()`: the task store of a fleet, on a real Redis server (tests/redis_server.py), checked
against what `TaskStore` promises (toolkit/_tasks/store.py): two workers' stores on one Redis, as two processes.
asyncio only (redis.asyncio)."""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
from collections.abc import Callable

import anyio
import pytest
import wire
from redis_server import TIMEOUT, RedisServer
from servers import tasks_server

from toolkit import Client, ProtocolError, RedisBackend, Server
from toolkit._tasks.store import LEASE_EXPIRED, TaskRecord, TaskStore

pytestmark = [pytest.mark.anyio, pytest.mark.parametrize("anyio_backend", ["asyncio"])]


def record(task_id: str, owner: str = "alice", *, ttl: float = 60.0, worker: str | None = "w1") -> TaskRecord:
    now = time.time()
    return TaskRecord(
        task_id=task_id,
        owner=owner,
        tool="slow",
        version="2026-07-28",
        status="working",
        created_at=now,
        updated_at=now,
        ttl_ms=int(ttl * 1000),
        poll_interval_ms=500,
        worker=worker,
        lease_until=now + 30 if worker is not None else None,
    )


def stores(url: str) -> tuple[TaskStore, TaskStore]:
    """Two workers' stores on one Redis; a generous timeout (the default 0.5 s is a production bound: on a busy test
    machine, twenty conflicting changes of one task retried through WATCH can take longer, and only a hang should
    fail these tests)."""
    return RedisBackend(url, timeout=10).task_store(), RedisBackend(url, timeout=10).task_store()


async def test_a_task_made_on_one_worker_is_found_and_changed_on_the_other(redis_url: str) -> None:
    a, b = stores(redis_url)
    assert isinstance(a, TaskStore)
    made = record("t1")
    assert await a.create(made, limit=10, ceiling=100) is None
    assert await b.get("t1") == made
    done = await b.modify("t1", lambda r: dataclasses.replace(r, status="completed", result={"content": []}))
    assert done is not None
    assert (await a.get("t1")) == done
    assert await a.modify("t1", lambda r: None) == done  # None: unchanged
    assert await a.get("nope") is None
    assert await a.modify("nope", lambda r: r) is None
    await a.aclose()
    await b.aclose()


async def test_the_owners_limit_holds_across_workers(redis_url: str) -> None:
    a, b = stores(redis_url)
    assert await a.create(record("t1"), limit=2, ceiling=4) is None
    assert await b.create(record("t2"), limit=2, ceiling=4) is None
    assert await a.create(record("t3"), limit=2, ceiling=4) == "caller"
    assert await b.create(record("t4", owner="bob"), limit=2, ceiling=4) is None
    assert await b.create(record("t5", owner="carol"), limit=2, ceiling=3) == "store"
    assert [r.task_id for r in await b.list_owned("alice", None, 10)] == ["t1", "t2"]
    assert [r.task_id for r in await b.list_owned("alice", "t1", 10)] == ["t2"]
    assert [r.task_id for r in await b.list_owned("alice", None, 1)] == ["t1"]
    await a.aclose()
    await b.aclose()


async def test_changes_made_at_once_on_two_workers_are_both_kept(redis_url: str) -> None:
    a, b = stores(redis_url)
    await a.create(record("t1"), limit=10, ceiling=100)

    def answer(key: str) -> Callable[[TaskRecord], TaskRecord]:
        return lambda r: dataclasses.replace(r, input_responses={**r.input_responses, key: True})

    async with anyio.create_task_group() as tg:
        for i in range(10):
            tg.start_soon(a.modify, "t1", answer(f"a{i}"))
            tg.start_soon(b.modify, "t1", answer(f"b{i}"))
    final = await a.get("t1")
    assert final is not None
    assert len(final.input_responses) == 20
    await a.aclose()
    await b.aclose()


async def test_a_dead_workers_tasks_fail_when_its_lease_ends_and_a_live_one_renews(redis_url: str) -> None:
    a, b = stores(redis_url)
    now = time.time()
    await a.create(dataclasses.replace(record("dead", worker="w1"), lease_until=now - 1), limit=10, ceiling=100)
    await a.create(dataclasses.replace(record("alive", worker="w2"), lease_until=now - 1), limit=10, ceiling=100)
    await b.renew("w2", now + 30, ["alive"])  # w2 is alive: its heartbeat
    assert await b.sweep(now) == 1
    dead = await a.get("dead")
    assert dead is not None
    assert (dead.status, dead.status_message) == ("failed", LEASE_EXPIRED)
    alive = await a.get("alive")
    assert alive is not None
    assert alive.status == "working"
    assert await b.sweep(now) == 0
    await a.aclose()
    await b.aclose()


async def test_every_key_of_a_finished_task_expires(redis_server: RedisServer, redis_url: str) -> None:
    a, _ = stores(redis_url)
    db = redis_url.rsplit("/", 1)[1]
    # A time to live of 3 s, not a fraction: the count below (a modify, then a redis-cli process) must see the keys
    # before they go, and under load (CI, coverage) 0.3 s after the task was made was too close.
    await a.create(record("t1", ttl=3.0), limit=10, ceiling=100)
    await a.modify("t1", lambda r: dataclasses.replace(r, status="completed", worker=None, lease_until=None))
    assert int(redis_server.command("-n", db, "DBSIZE")) > 0
    with anyio.fail_after(TIMEOUT):
        while int(redis_server.command("-n", db, "DBSIZE")) != 0:  # noqa: ASYNC110 - Redis expires them itself
            await anyio.sleep(0.05)
    await a.aclose()


async def test_redis_down_fails_a_heartbeat_not_the_task_loop_and_tasks_go_on_when_it_returns() -> None:
    own = RedisServer()  # a server of its own, stopped and started by this test
    own.start()
    failed = threading.Event()  # set from the task loop's thread

    class Beats(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if "heartbeat" in record.getMessage():
                failed.set()

    handler = Beats(logging.WARNING)
    logging.getLogger("toolkit").addHandler(handler)
    # A lease well over the store's timeout: the first write after Redis returns may wait out a dead connection, and
    # under load a lease as short as that timeout ended the new task before its outcome was kept (3.10 in CI). Nor
    # is the timeout short: every Redis round trip of the task after Redis returns must beat it (a stopped Redis
    # refuses connections at once: no timeout is waited for while it is down).
    server = Server("tasks", backend=RedisBackend(own.url, timeout=1.0), task_lease=5.0)

    @server.tool(task="required")
    async def echo(text: str) -> str:
        """Say it back."""
        return text

    try:
        async with Client(server, protocol="2026-07-28") as client:
            assert (await (await client.start_task("echo", {"text": "before"}))).text == "before"
            own.stop()
            with anyio.fail_after(TIMEOUT):  # the heartbeat runs every lease / 3
                await anyio.to_thread.run_sync(failed.wait)
            own.start()
            with anyio.fail_after(TIMEOUT):
                assert (await (await client.start_task("echo", {"text": "after"}))).text == "after"
    finally:
        logging.getLogger("toolkit").removeHandler(handler)
        own.stop()


async def test_a_task_made_while_redis_is_down_is_refused_saying_so() -> None:
    own = RedisServer()  # started and stopped at once: its port answers nothing
    own.start()
    own.stop()
    server = Server("tasks", backend=RedisBackend(own.url, timeout=0.3))

    @server.tool(task="required")
    async def echo(text: str) -> str:
        """Say it back."""
        return text

    async with Client(server, protocol="2026-07-28") as client:
        with anyio.fail_after(TIMEOUT), pytest.raises(ProtocolError) as refused:
            await client.start_task("echo", {"text": "hi"})
    assert (refused.value.code, refused.value.message) == (-32603, "Shared state unavailable")
    assert "Redis failed" in str(refused.value.data)


async def test_the_owner_index_keeps_the_live_tasks_only_and_lists_no_expired_one(
    redis_server: RedisServer, redis_url: str
) -> None:
    a, _ = stores(redis_url)
    db = redis_url.rsplit("/", 1)[1]
    past = time.time() - 120
    for i in range(50):  # made two minutes ago for one minute: expired at once
        expired = dataclasses.replace(record(f"old{i}"), created_at=past, updated_at=past)
        assert await a.create(expired, limit=100, ceiling=1000) is None
    assert await a.create(record("new"), limit=100, ceiling=1000) is None
    assert [r.task_id for r in await a.list_owned("alice", None, 100)] == ["new"]
    sizes = [
        int(redis_server.command("-n", db, "ZCARD", f"mcp:task/{index}"))
        for index in ("owned/alice", "live/alice", "all")
    ]
    assert sizes == [1, 1, 1]
    await a.aclose()


async def test_two_apps_on_one_redis_with_the_default_prefix_share_no_task(redis_url: str) -> None:
    envelope = wire.meta()
    envelope[wire.CAPABILITIES_KEY] = {"extensions": {"io.modelcontextprotocol/tasks": {}}}
    other_app = Server("beta", backend=RedisBackend(redis_url))

    @other_app.tool(task="optional")
    async def slow() -> str:
        """Another app's tool of the same name."""
        return "beta"

    async with (
        wire.memory(tasks_server.build(backend=RedisBackend(redis_url))) as first,
        wire.memory(tasks_server.build(backend=RedisBackend(redis_url))) as same_app,
        wire.memory(other_app) as beta,
    ):
        created = await first.result("tools/call", {"name": "slow", "arguments": {}, "_meta": envelope})
        task = {"taskId": created["taskId"], "_meta": envelope}
        assert (await same_app.result("tasks/get", task))["taskId"] == created["taskId"]  # another worker of it
        assert (await beta.request("tasks/get", task))["error"]["code"] == -32602
    shared = RedisBackend(redis_url)
    Server("alpha", backend=shared)
    with pytest.raises(ValueError, match="serves server 'alpha'"):
        Server("beta", backend=shared)
    own = RedisBackend(redis_url, prefix="mine:")  # a prefix given is kept, whatever app it serves
    Server("alpha", backend=own)
    Server("beta", backend=own)
    assert (shared.prefix, own.prefix) == ("mcp:alpha:", "mine:")
