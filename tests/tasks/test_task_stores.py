"""What every task store promises of expiry (issue 37, item 7): an expired task is never listed, even before a sweep
deletes it. Memory and SQLite here (Redis in tests/backend/test_redis_tasks.py)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import anyio
import pytest
import wire
from servers import tasks_server

from toolkit import MemoryTaskStore, SqliteTaskStore
from toolkit._tasks.store import TaskRecord, TaskStore

pytestmark = pytest.mark.anyio


def record(task_id: str, *, age: float, ttl: float = 60.0, owner: str = "owner") -> TaskRecord:
    """A finished task of `owner` made `age` seconds ago."""
    then = time.time() - age
    return TaskRecord(task_id, owner, "slow", "2025-11-25", "completed", then, then, int(ttl * 1000), 500)


@pytest.fixture(params=["memory", "sqlite"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> TaskStore:
    return MemoryTaskStore() if request.param == "memory" else SqliteTaskStore(tmp_path / "tasks.db")


async def test_an_expired_task_is_not_listed_before_a_sweep(store: TaskStore) -> None:
    for made in (record("old", age=120), record("new", age=0)):
        assert await store.create(made, limit=10, ceiling=10) is None
    assert [r.task_id for r in await store.list_owned("owner", None, 10)] == ["new"]
    assert await store.sweep(time.time()) == 1
    await store.aclose()


async def test_an_expired_task_counts_against_no_budget_even_before_a_sweep(store: TaskStore) -> None:
    assert await store.create(record("old", age=120, owner="a"), limit=1, ceiling=2) is None  # expired on arrival
    assert await store.create(record("a1", age=0, owner="a"), limit=1, ceiling=2) is None  # "old" is not in a's budget
    assert await store.create(record("a2", age=0, owner="a"), limit=1, ceiling=2) == "caller"
    assert await store.create(record("b1", age=0, owner="b"), limit=1, ceiling=2) is None
    assert await store.create(record("c1", age=0, owner="c"), limit=1, ceiling=2) == "store"
    assert [r.task_id for r in await store.list_owned("a", None, 10)] == ["a1"]
    await store.sweep(time.time())
    assert [r.task_id for r in await store.list_owned("b", None, 10)] == ["b1"]
    await store.aclose()


async def test_a_2025_session_no_longer_lists_a_task_once_it_expired() -> None:
    async with wire.memory(tasks_server.build()) as peer:
        await peer.initialize(capabilities={"tasks": {"requests": {"tools": {"call": {}}}}})
        created = await peer.result("tools/call", {"name": "slow", "arguments": {}, "task": {"ttl": 1}})
        assert created["task"]["ttl"] == 1000  # a second at least
        listed: list[Any] = [created["task"]]
        # The next sweep is 10 s away (a third of the 30 s lease): the bound stays under it, so that only the listing's
        # own check can pass the test, and leaves 7 s past the task's 1 s for a loaded machine (5 s before).
        with anyio.fail_after(8):
            while listed:
                listed = (await peer.result("tasks/list"))["tasks"]
                await anyio.sleep(0.05)
        gone = await peer.request("tasks/get", {"taskId": created["task"]["taskId"]})
        assert gone["error"]["code"] == -32602
