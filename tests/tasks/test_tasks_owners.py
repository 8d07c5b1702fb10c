"""Whose a task is, without authentication (issue 37, items 1 and 2): a 2025-11-25 task belongs to the session that
made it, a 2026-07-28 task to whoever holds its id (no listing); the per-caller budget follows that owner, and a
server-wide ceiling bounds the store. In memory, over stdio (two processes on one SQLite file) and over HTTP (two
sessions of one app), where several anonymous clients meet."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
import wire
from servers import tasks_server
from test_http import http_client, initialize, legacy_headers, post

pytestmark = pytest.mark.anyio

SERVER = Path(__file__).parents[1] / "servers" / "tasks_server.py"
EXT = "io.modelcontextprotocol/tasks"
TASKS: dict[str, Any] = {"tasks": {"requests": {"tools": {"call": {}}}}, "elicitation": {}}


def modern() -> dict[str, Any]:
    envelope = wire.meta()
    envelope[wire.CAPABILITIES_KEY] = {"extensions": {EXT: {}}, "elicitation": {}}
    return envelope


async def others_see(other: wire.Peer, task_id: str) -> dict[str, Any]:
    """What a second 2025-11-25 session gets of a task it did not make, method by method (an error code each)."""
    seen: dict[str, Any] = {"tasks/list": (await other.result("tasks/list"))["tasks"]}
    for method in ("tasks/get", "tasks/result", "tasks/cancel"):
        reply = await other.request(method, {"taskId": task_id})
        seen[method] = reply["error"]["code"] if "error" in reply else reply["result"]
    return seen


HIDDEN: dict[str, Any] = {"tasks/list": [], "tasks/get": -32602, "tasks/result": -32602, "tasks/cancel": -32602}


async def test_an_anonymous_2025_task_belongs_to_its_session_in_memory() -> None:
    server = tasks_server.build()
    async with wire.memory(server) as first, wire.memory(server) as second:
        await first.initialize(capabilities=TASKS)
        await second.initialize(capabilities=TASKS)
        call = {"name": "confirm_delete", "arguments": {"filename": "payroll.xlsx"}, "task": {}}
        task_id = (await first.result("tools/call", call))["task"]["taskId"]
        assert await others_see(second, task_id) == HIDDEN
        mine = await first.result("tasks/list")
        assert [t["taskId"] for t in mine["tasks"]] == [task_id]
        still = await first.result("tasks/get", {"taskId": task_id})
        assert still["status"] in {"working", "input_required"}  # neither answered nor cancelled by the other
        await first.result("tasks/cancel", {"taskId": task_id})


async def test_an_anonymous_2026_task_id_is_its_capability_and_no_era_reaches_the_other_s_tasks() -> None:
    server = tasks_server.build()
    async with wire.memory(server) as maker, wire.memory(server) as holder, wire.memory(server) as session:
        created = await maker.result("tools/call", {"name": "slow", "arguments": {"seconds": 60}, "_meta": modern()})
        task_id = created["taskId"]
        held = await holder.result("tasks/get", {"taskId": task_id, "_meta": modern()})  # the id is the capability
        assert held["status"] == "working"
        unlisted = await holder.request("tasks/list", {"_meta": modern()})
        assert unlisted["error"]["code"] == -32601  # 2026-07-28 has no listing
        await session.initialize(capabilities=TASKS)
        assert await others_see(session, task_id) == HIDDEN
        own = (await session.result("tools/call", {"name": "slow", "arguments": {}, "task": {}}))["task"]["taskId"]
        crossed = await holder.request("tasks/get", {"taskId": own, "_meta": modern()})
        assert crossed["error"]["code"] == -32602
        await holder.result("tasks/cancel", {"taskId": task_id, "_meta": modern()})


async def test_two_stdio_servers_on_one_sqlite_file_keep_their_sessions_tasks_apart(tmp_path: Path) -> None:
    command = [sys.executable, str(SERVER), "--sqlite", str(tmp_path / "tasks.db")]
    async with wire.stdio(command) as first, wire.stdio(command) as second:
        await first.initialize(capabilities=TASKS)
        await second.initialize(capabilities=TASKS)
        task_id = (await first.result("tools/call", {"name": "slow", "arguments": {}, "task": {}}))["task"]["taskId"]
        assert (await first.result("tasks/result", {"taskId": task_id}))["content"][0]["text"] == "slept 0.0"
        seen = await others_see(second, task_id)
        assert seen == {**HIDDEN, "tasks/cancel": -32602}
        assert [t["taskId"] for t in (await first.result("tasks/list"))["tasks"]] == [task_id]


async def test_two_anonymous_http_sessions_of_one_app_keep_their_tasks_apart() -> None:
    async with http_client(tasks_server.build().http_app()) as client:
        sessions = [await initialize(client), await initialize(client)]

        async def ask(session: str, method: str, params: dict[str, Any]) -> Any:
            message = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
            _, [reply] = await post(client, message, legacy_headers(session), wire.LATEST)
            return reply

        created = await ask(sessions[0], "tools/call", {"name": "slow", "arguments": {"seconds": 60}, "task": {}})
        task_id = created["result"]["task"]["taskId"]
        assert (await ask(sessions[1], "tasks/list", {}))["result"]["tasks"] == []
        for method in ("tasks/get", "tasks/result", "tasks/cancel"):
            assert (await ask(sessions[1], method, {"taskId": task_id}))["error"]["code"] == -32602
        listed = (await ask(sessions[0], "tasks/list", {}))["result"]["tasks"]
        assert [(t["taskId"], t["status"]) for t in listed] == [(task_id, "working")]
        await ask(sessions[0], "tasks/cancel", {"taskId": task_id})


async def test_the_per_caller_budget_is_each_session_s_and_the_ceiling_the_server_s() -> None:
    server = tasks_server.build(max_tasks_per_caller=2, max_tasks=3)
    call = {"name": "slow", "arguments": {"seconds": 60}, "task": {"ttl": 86_400_000}}
    async with wire.memory(server) as greedy, wire.memory(server) as other, wire.memory(server) as late:
        for peer in (greedy, other, late):
            await peer.initialize(capabilities=TASKS)
        made = [await greedy.request("tools/call", call) for _ in range(3)]
        assert ["error" in reply for reply in made] == [False, False, True]
        assert made[2]["error"]["message"] == "Too many tasks: this caller has 2 (the limit)"
        assert "result" in await other.request("tools/call", call)  # the greedy session's budget is its own
        full = await late.request("tools/call", call)
        assert full["error"]["message"] == "Too many tasks: the server keeps 3 at most (the limit)"
        bearer = await late.request("tools/call", {"name": "slow", "arguments": {}, "_meta": modern()})
        assert bearer["error"]["message"] == "Too many tasks: the server keeps 3 at most (the limit)"
        for peer, reply in ((greedy, made[0]), (greedy, made[1])):
            await peer.result("tasks/cancel", {"taskId": reply["result"]["task"]["taskId"]})
