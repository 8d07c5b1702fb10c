"""`subscriptions/listen` on tasks, bounded (issue 37, item 3): each task id watched once, a clear error past the cap,
a memory store that lets other requests run, and a Redis store that reuses its connections."""

from __future__ import annotations

from typing import Any

import anyio
import anyio.lowlevel
import pytest
import wire
from redis_server import RedisServer
from servers import tasks_server

from toolkit import MemoryTaskStore, RedisBackend
from toolkit._engine.tasks import MAX_WATCHED

pytestmark = pytest.mark.anyio

EXT = "io.modelcontextprotocol/tasks"


def modern() -> dict[str, Any]:
    envelope = wire.meta()
    envelope[wire.CAPABILITIES_KEY] = {"extensions": {EXT: {}}}
    return envelope


def listen(task_ids: list[str]) -> dict[str, Any]:
    return {"notifications": {"taskIds": task_ids}, "_meta": modern()}


async def test_a_listen_watches_each_task_once_and_refuses_more_than_the_cap_saying_so() -> None:
    async with wire.memory(tasks_server.build()) as peer:
        created = await peer.result("tools/call", {"name": "slow", "arguments": {"seconds": 60}, "_meta": modern()})
        task_id = created["taskId"]
        too_many = [f"t{i}" for i in range(MAX_WATCHED)] + [task_id, task_id]
        refused = await peer.request("subscriptions/listen", listen(too_many), id=8)
        assert (refused["error"]["code"], refused["error"]["message"]) == (
            -32602,
            f"Invalid params: taskIds names {MAX_WATCHED + 1} tasks, {MAX_WATCHED} at most",
        )
        await peer.send({"jsonrpc": "2.0", "id": 9, "method": "subscriptions/listen", "params": listen([task_id] * 5)})
        acknowledged = await peer.receive()
        assert acknowledged["params"]["notifications"] == {"taskIds": [task_id]}
        await peer.send(
            {"jsonrpc": "2.0", "id": 10, "method": "tasks/cancel", "params": {"taskId": task_id, "_meta": modern()}}
        )
        statuses = []
        with anyio.fail_after(wire.TIMEOUT):
            while "cancelled" not in statuses:
                message = await peer.receive()
                if message.get("method") == "notifications/tasks":
                    statuses.append(message["params"]["status"])
        assert statuses == ["working", "cancelled"]  # one notice per change, however often the task was named


async def test_the_memory_store_lets_other_tasks_run_between_its_operations() -> None:
    store, ran = MemoryTaskStore(), 0

    async def other() -> None:
        nonlocal ran
        while True:
            ran += 1
            await anyio.lowlevel.checkpoint()

    async with anyio.create_task_group() as tg:
        tg.start_soon(other)
        await anyio.lowlevel.checkpoint()
        before = ran
        for _ in range(100):
            await store.get("unknown")
        tg.cancel_scope.cancel()
    assert ran - before >= 99


def connections(redis: RedisServer) -> int:
    stats = dict(line.split(":", 1) for line in redis.command("INFO", "stats").splitlines() if ":" in line)
    return int(stats["total_connections_received"])


@pytest.mark.parametrize("anyio_backend", ["asyncio"])  # redis.asyncio
async def test_a_redis_task_store_reuses_its_connections() -> None:
    redis = RedisServer()
    redis.start()
    try:
        async with wire.memory(tasks_server.build(backend=RedisBackend(redis.url))) as peer:
            created = await peer.result("tools/call", {"name": "slow", "arguments": {}, "_meta": modern()})
            before = connections(redis)
            for _ in range(100):
                await peer.result("tasks/get", {"taskId": created["taskId"], "_meta": modern()})
            await peer.send(
                {
                    "jsonrpc": "2.0",
                    "id": 9,
                    "method": "subscriptions/listen",
                    "params": listen([created["taskId"]] * 500),
                }
            )
            with anyio.fail_after(wire.TIMEOUT):
                while (await peer.receive())["params"].get("status") != "completed":
                    pass
            assert connections(redis) - before <= 4  # before: one per operation (over a hundred)
    finally:
        redis.stop()
