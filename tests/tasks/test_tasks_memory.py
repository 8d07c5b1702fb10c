"""Tasks in memory, both eras, through raw JSON-RPC (every message schema-checked by tests/wire.py)."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
import wire
from servers import tasks_server

pytestmark = pytest.mark.anyio

EXT = "io.modelcontextprotocol/tasks"


def modern(**capabilities: Any) -> dict[str, Any]:
    envelope = wire.meta()
    envelope[wire.CAPABILITIES_KEY] = {"extensions": {EXT: {}}, **capabilities}
    return envelope


async def poll(peer: wire.Peer, task_id: str, until: set[str], version: str = wire.MODERN) -> dict[str, Any]:
    """tasks/get until the task's status is one of `until` (bounded by the peer's timeout per request)."""
    params: dict[str, Any] = {"taskId": task_id}
    if version == wire.MODERN:
        params["_meta"] = modern(elicitation={})
    with anyio.fail_after(wire.TIMEOUT):
        while True:
            result: dict[str, Any] = await peer.result("tasks/get", params)
            if result["status"] in until:
                return result
            await anyio.sleep(0.01)


async def test_a_task_tool_answers_with_a_task_the_client_polls_to_its_result() -> None:
    async with wire.memory(tasks_server.build()) as peer:
        created = await peer.result("tools/call", {"name": "slow", "arguments": {"seconds": 0}, "_meta": modern()})
        assert created["resultType"] == "task"
        assert created["status"] == "working"
        done = await poll(peer, created["taskId"], {"completed"})
        assert done["result"]["content"] == [{"type": "text", "text": "slept 0.0"}]
        assert done["resultType"] == "complete"


async def test_arguments_that_do_not_fit_are_refused_before_a_task_is_made_in_2026() -> None:
    # Issue 37 item 14: the server decides per request in 2026-07-28; a call that cannot run makes no task.
    async with wire.memory(tasks_server.build()) as peer:
        refused = await peer.result("tools/call", {"name": "slow", "arguments": {"seconds": "x"}, "_meta": modern()})
        assert refused["resultType"] == "complete"
        assert refused["isError"] is True
        assert "seconds" in refused["content"][0]["text"]
        created = await peer.result("tools/call", {"name": "slow", "arguments": {"seconds": 0}, "_meta": modern()})
        assert created["resultType"] == "task"  # arguments that fit: a task, as before


async def test_in_2025_a_task_asked_for_reports_arguments_that_do_not_fit() -> None:
    async with wire.memory(tasks_server.build()) as peer:
        await peer.initialize()
        params = {"name": "slow", "arguments": {"seconds": "x"}, "task": {"ttl": 60_000}}
        created = await peer.result("tools/call", params)
        done = await poll(peer, created["task"]["taskId"], {"completed", "failed"}, wire.LATEST)
        assert done["status"] == "completed"
        result = await peer.result("tasks/result", {"taskId": created["task"]["taskId"]})
        assert result["isError"] is True


async def test_a_client_without_the_extension_gets_a_plain_result_or_the_capability_error() -> None:
    async with wire.memory(tasks_server.build()) as peer:
        plain = await peer.result("tools/call", {"name": "slow", "arguments": {}, "_meta": wire.meta()})
        assert plain["resultType"] == "complete"
        refused = await peer.request("tools/call", {"name": "blocking", "arguments": {}, "_meta": wire.meta()})
        assert refused["error"]["code"] == -32021
        assert refused["error"]["data"] == {"requiredCapabilities": {"extensions": {EXT: {}}}}
        gated = await peer.request("tasks/get", {"taskId": "x", "_meta": wire.meta()})
        assert gated["error"]["code"] == -32021


async def test_a_question_puts_the_task_in_input_required_until_tasks_update_answers() -> None:
    async with wire.memory(tasks_server.build()) as peer:
        meta = modern(elicitation={})
        created = await peer.result(
            "tools/call", {"name": "confirm_delete", "arguments": {"filename": "a.txt"}, "_meta": meta}
        )
        waiting = await poll(peer, created["taskId"], {"input_required"})
        (key,) = waiting["inputRequests"]
        assert waiting["inputRequests"][key]["method"] == "elicitation/create"
        ack = await peer.result(
            "tasks/update",
            {
                "taskId": created["taskId"],
                "inputResponses": {key: {"action": "accept", "content": {"confirm": True}}},
                "_meta": meta,
            },
        )
        assert ack == {"resultType": "complete", "_meta": ack["_meta"]}
        done = await poll(peer, created["taskId"], {"completed"})
        assert done["result"]["content"][0]["text"] == "deleted a.txt"


async def test_cancel_ends_a_running_task_cancelled_and_unknown_tasks_are_invalid_params() -> None:
    async with wire.memory(tasks_server.build()) as peer:
        created = await peer.result("tools/call", {"name": "slow", "arguments": {"seconds": 60}, "_meta": modern()})
        ack = await peer.result("tasks/cancel", {"taskId": created["taskId"], "_meta": modern()})
        assert ack["resultType"] == "complete"
        assert "status" not in ack
        ended = await poll(peer, created["taskId"], {"cancelled"})
        assert ended["status"] == "cancelled"
        again = await peer.result("tasks/cancel", {"taskId": created["taskId"], "_meta": modern()})
        assert again["resultType"] == "complete"
        unknown = await peer.request("tasks/get", {"taskId": "nope", "_meta": modern()})
        assert unknown["error"]["code"] == -32602


async def test_a_tool_error_completes_the_task_with_is_error() -> None:
    async with wire.memory(tasks_server.build()) as peer:
        created = await peer.result("tools/call", {"name": "fails", "arguments": {}, "_meta": modern()})
        done = await poll(peer, created["taskId"], {"completed", "failed"})
        assert done["status"] == "completed"
        assert done["result"]["isError"] is True


async def test_handshake_era_tasks_get_result_list_cancel() -> None:
    async with wire.memory(tasks_server.build()) as peer:
        init = await peer.initialize(capabilities={"tasks": {"requests": {"tools": {"call": {}}}}})
        assert init["capabilities"]["tasks"]["requests"] == {"tools": {"call": {}}}
        tools = await peer.result("tools/list")
        support = {t["name"]: t.get("execution", {}).get("taskSupport") for t in tools["tools"]}
        assert support == {
            "slow": "optional",
            "blocking": "required",
            "confirm_delete": "optional",
            "gated": "required",
            "fails": "optional",
            "plain": None,
        }
        created = await peer.result("tools/call", {"name": "slow", "arguments": {}, "task": {"ttl": 60000}})
        task_id = created["task"]["taskId"]
        assert created["task"]["ttl"] == 60000
        result = await peer.result("tasks/result", {"taskId": task_id})
        assert result["content"] == [{"type": "text", "text": "slept 0.0"}]
        assert result["_meta"]["io.modelcontextprotocol/related-task"] == {"taskId": task_id}
        listed = await peer.result("tasks/list")
        assert [t["taskId"] for t in listed["tasks"]] == [task_id]
        finished = await peer.request("tasks/cancel", {"taskId": task_id})
        assert finished["error"]["code"] == -32602
        required = await peer.request("tools/call", {"name": "blocking", "arguments": {}})
        assert required["error"]["code"] == -32601
        forbidden = await peer.request("tools/call", {"name": "plain", "arguments": {}, "task": {}})
        assert forbidden["error"]["code"] == -32601


async def test_handshake_era_a_task_asks_its_question_on_the_tasks_result_stream() -> None:
    async with wire.memory(tasks_server.build()) as peer:
        await peer.initialize(capabilities={"tasks": {}, "elicitation": {}})
        call = {"name": "confirm_delete", "arguments": {"filename": "b.txt"}, "task": {}}
        created = await peer.result("tools/call", call)
        task_id = created["task"]["taskId"]
        await peer.send({"jsonrpc": "2.0", "id": 7, "method": "tasks/result", "params": {"taskId": task_id}})
        question = await peer.receive()
        assert question["method"] == "elicitation/create"
        assert question["params"]["_meta"]["io.modelcontextprotocol/related-task"] == {"taskId": task_id}
        answer = {"action": "accept", "content": {"confirm": True}}
        await peer.send({"jsonrpc": "2.0", "id": question["id"], "result": answer})
        reply = await peer.receive()
        assert reply["id"] == 7
        assert reply["result"]["content"][0]["text"] == "deleted b.txt"


async def test_a_task_runs_through_the_tool_middleware_and_its_timeout() -> None:
    seen: list[str] = []

    async def note(request: Any, call_next: Any) -> Any:
        seen.append(request.tool.name)
        return await call_next(request)

    server = tasks_server.build(tool_middleware=[note])

    @server.tool(task="optional", timeout=0.01)
    async def hangs() -> str:
        """Never answers in time."""
        await anyio.sleep(60)
        return "late"

    async with wire.memory(server) as peer:
        created = await peer.result("tools/call", {"name": "hangs", "arguments": {}, "_meta": modern()})
        done = await poll(peer, created["taskId"], {"completed", "failed"})
        assert done["status"] == "completed"
        assert done["result"]["isError"] is True
        assert seen == ["hangs"]


async def test_subscriptions_listen_sends_a_task_s_status_until_it_ends_and_only_the_caller_s_tasks() -> None:
    async with wire.memory(tasks_server.build()) as peer:
        created = await peer.result("tools/call", {"name": "slow", "arguments": {"seconds": 0.05}, "_meta": modern()})
        task_id = created["taskId"]
        listen = {"notifications": {"taskIds": [task_id, "not-a-task"]}, "_meta": modern()}
        await peer.send({"jsonrpc": "2.0", "id": 9, "method": "subscriptions/listen", "params": listen})
        acknowledged = await peer.receive()
        assert acknowledged["params"]["notifications"] == {"taskIds": [task_id]}
        with anyio.fail_after(wire.TIMEOUT):
            while True:
                note = await peer.receive()
                assert note["method"] == "notifications/tasks"
                assert note["params"]["_meta"][wire.SUBSCRIPTION_KEY] == 9
                if note["params"]["status"] == "completed":
                    break
        assert note["params"]["result"]["content"] == [{"type": "text", "text": "slept 0.05"}]
        refused = await peer.request(
            "subscriptions/listen", {"notifications": {"taskIds": [task_id]}, "_meta": wire.meta()}, id=10
        )
        assert refused["error"]["code"] == -32021


async def test_revisions_before_tasks_see_no_task_capability_and_get_plain_calls() -> None:
    async with wire.memory(tasks_server.build()) as peer:
        init = await peer.initialize("2025-06-18")
        assert "tasks" not in init["capabilities"]
        plain = await peer.result("tools/call", {"name": "slow", "arguments": {}, "task": {}})
        assert plain["content"] == [{"type": "text", "text": "slept 0.0"}]
        required = await peer.request("tools/call", {"name": "blocking", "arguments": {}})
        assert required["error"]["code"] == -32601
