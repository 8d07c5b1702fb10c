"""Tasks and what goes wrong: stdio, a cancelled sync tool, a killed process (SQLite store, leases), many tasks.

No test sleeps to wait for something: polls are bounded by `wire.TIMEOUT`, and time itself is passed to the store
(`sweep(now)`) rather than waited for.
"""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import anyio
import pytest
import wire
from servers import tasks_server

from toolkit import SqliteTaskStore

pytestmark = pytest.mark.anyio

EXT = "io.modelcontextprotocol/tasks"
SERVER = Path(tasks_server.__file__)


def meta() -> dict[str, Any]:
    envelope = wire.meta()
    envelope[wire.CAPABILITIES_KEY] = {"extensions": {EXT: {}}}
    return envelope


async def until(peer: wire.Peer, task_id: str, statuses: set[str]) -> dict[str, Any]:
    with anyio.fail_after(wire.TIMEOUT):
        while True:
            result: dict[str, Any] = await peer.result("tasks/get", {"taskId": task_id, "_meta": meta()})
            if result["status"] in statuses:
                return result
            await anyio.sleep(0.01)


async def test_a_task_over_stdio_both_eras() -> None:
    async with wire.stdio([sys.executable, str(SERVER)]) as peer:
        created = await peer.result("tools/call", {"name": "slow", "arguments": {}, "_meta": meta()})
        done = await until(peer, created["taskId"], {"completed"})
        assert done["result"]["content"] == [{"type": "text", "text": "slept 0.0"}]
    async with wire.stdio([sys.executable, str(SERVER)]) as peer:
        await peer.initialize(capabilities={"tasks": {}})
        created = await peer.result("tools/call", {"name": "slow", "arguments": {}, "task": {}})
        result = await peer.result("tasks/result", {"taskId": created["task"]["taskId"]})
        assert result["content"] == [{"type": "text", "text": "slept 0.0"}]


async def test_cancelling_a_task_running_a_sync_tool_ends_it_cancelled_and_its_thread_finishes() -> None:
    name = f"cancel-sync-{uuid.uuid4()}"  # a gate of this run's own (the other backend's run opened its own)
    gate = tasks_server.GATES.setdefault(name, threading.Event())
    async with wire.memory(tasks_server.build()) as peer:
        created = await peer.result("tools/call", {"name": "gated", "arguments": {"name": name}, "_meta": meta()})
        await peer.result("tasks/cancel", {"taskId": created["taskId"], "_meta": meta()})
        gate.set()  # the thread cannot be stopped: it returns, and its result is dropped
        ended = await until(peer, created["taskId"], {"cancelled", "completed"})
        assert ended["status"] == "cancelled"
        assert "result" not in ended


def _line(process: subprocess.Popen[str], message: dict[str, Any]) -> dict[str, Any]:
    assert process.stdin is not None
    assert process.stdout is not None
    process.stdin.write(json.dumps(message) + "\n")
    process.stdin.flush()
    reply: dict[str, Any] = json.loads(process.stdout.readline())
    return reply


def _start_then_die(process: subprocess.Popen[str]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Make two tasks in a server process (one waits for ever, one finishes), then kill the process."""
    try:
        call = {"name": "gated", "arguments": {"name": "never"}, "_meta": meta()}
        created = _line(process, {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call})["result"]
        done = {"name": "slow", "arguments": {}, "_meta": meta()}
        finished = _line(process, {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": done})["result"]
        get = {"jsonrpc": "2.0", "method": "tasks/get", "params": {"taskId": finished["taskId"], "_meta": meta()}}
        for request_id in range(3, 3 + 10_000):  # bounded: the task takes no time
            if _line(process, {**get, "id": request_id})["result"]["status"] == "completed":
                break
    finally:
        process.kill()
        process.wait()
    return created, finished


async def test_a_killed_process_leaves_its_task_failed_for_another_worker_of_the_store(tmp_path: Path) -> None:
    path = tmp_path / "tasks.db"
    # A lease of 5 s: the task that finishes must have its outcome kept within its lease (a run that ended is no
    # longer renewed), and under load (coverage, a busy CI machine, a SQLite commit's fsync) 1 s was too close.
    command = [sys.executable, str(SERVER), "--sqlite", str(path), "--lease", "5"]
    with subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True) as process:  # noqa: ASYNC220
        created, finished = _start_then_die(process)
    store = SqliteTaskStore(path)
    # The lease (5 s) ends unrenewed: a sweep at any time after it fails the task (no waiting: the time is given).
    assert await store.sweep(time.time() + 60) == 1
    worker = tasks_server.build(task_store=store)
    async with wire.memory(worker) as peer:
        failed = await peer.result("tasks/get", {"taskId": created["taskId"], "_meta": meta()})
        assert failed["status"] == "failed"
        assert failed["error"]["code"] == -32603
        assert "lease expired" in failed["statusMessage"]
        # A task the dead process finished is still there, with its result, for the other worker.
        other = await until(peer, finished["taskId"], {"completed"})
        assert other["result"]["content"][0]["text"] == "slept 0.0"
    await store.aclose()


async def _all_ended(store: Any, ids: list[str]) -> bool:
    for task_id in ids:
        record = await store.get(task_id)
        if record is None or not record.terminal:
            return False
    return True


def rss_kib() -> int:
    with open("/proc/self/statm", encoding="ascii") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // 1024


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RSS from /proc/self/statm")
@pytest.mark.parametrize("anyio_backend", ["asyncio"])  # the server's memory is the subject: one backend
async def test_a_thousand_tasks_in_flight_leave_memory_flat_once_expired() -> None:
    # Two thousands, the first a warm-up; after each, what the peer recorded of it is dropped (it keeps every line
    # and request for its own checks: 4 objects a task) and the figures taken: the blocks of Python's small-object
    # allocator (every object of 512 bytes or less: exact, so any leak of one per task shows) and the RSS (larger
    # buffers too). Measured: blocks within 200, RSS within 1.6 MB (most often 80 kB) of the first thousand's.
    server = tasks_server.build(max_tasks_per_caller=10_000, max_tasks=10_000)
    store = server.registry.tasks.store
    sizes = []
    async with wire.memory(server) as peer:
        for _ in range(2):
            ids = []
            for _ in range(1000):
                created = await peer.result(
                    "tools/call", {"name": "slow", "arguments": {"seconds": 0.01}, "_meta": meta()}
                )
                ids.append(created["taskId"])
            await until(peer, ids[-1], {"completed"})
            with anyio.fail_after(wire.TIMEOUT):
                while not await _all_ended(store, ids):  # noqa: ASYNC110 - polling the store is the subject
                    await anyio.sleep(0.01)
            assert await store.sweep(time.time() + 7200) == 1000  # past every task's time to live
            peer.lines.clear()
            peer.requests.clear()
            gc.collect()
            sizes.append((sys.getallocatedblocks(), rss_kib()))
    (blocks, rss), (blocks_after, rss_after) = sizes
    assert blocks_after - blocks < 1000, sizes  # not one small object a task left behind by the second thousand
    assert rss_after - rss < 4096, sizes  # KiB: nor 4 kB a task in larger buffers


async def test_another_worker_of_the_sqlite_store_answers_and_polls_a_task_it_does_not_run(tmp_path: Path) -> None:
    path = tmp_path / "tasks.db"
    first, second = SqliteTaskStore(path), SqliteTaskStore(path)
    envelope = meta()
    envelope[wire.CAPABILITIES_KEY]["elicitation"] = {}
    async with (
        wire.memory(tasks_server.build(task_store=first, task_poll_interval=0.01)) as runs,
        wire.memory(tasks_server.build(task_store=second)) as answers,
    ):
        call = {"name": "confirm_delete", "arguments": {"filename": "c"}, "_meta": envelope}
        task_id = (await runs.result("tools/call", call))["taskId"]
        waiting = await until(answers, task_id, {"input_required"})
        (key,) = waiting["inputRequests"]
        update = {"taskId": task_id, "inputResponses": {key: {"action": "accept", "content": {"confirm": True}}}}
        await answers.result("tasks/update", {**update, "_meta": envelope})
        done = await until(answers, task_id, {"completed"})
        assert done["result"]["content"][0]["text"] == "deleted c"
    await first.aclose()
    await second.aclose()
