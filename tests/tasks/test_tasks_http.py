"""Tasks over Streamable HTTP (the ASGI app in process), both eras: a task outlives the POST that made it, the same
caller reaches it from another connection or session, another caller never does. Every message is schema-checked
(tests/wire.py: the core schema, and the tasks extension's for 2026-07-28)."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest
import wire
from servers import tasks_server
from test_http import ACCEPT, http_client, legacy_headers, post

from toolkit import Identity, StaticTokenVerifier

pytestmark = pytest.mark.anyio

EXT = "io.modelcontextprotocol/tasks"
ALICE, BOB = "alice-token-0123456789", "bob-token-0123456789ab"


def app(**options: Any) -> Any:
    verifier = StaticTokenVerifier({ALICE: Identity("alice"), BOB: Identity("bob")})
    return tasks_server.build(**options).http_app(auth=verifier, authorization_servers=["https://auth.example.com"])


def message(method: str, params: dict[str, Any], request_id: int = 1) -> dict[str, Any]:
    envelope = wire.meta()
    envelope[wire.CAPABILITIES_KEY] = {"extensions": {EXT: {}}, "elicitation": {}}
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": {**params, "_meta": envelope}}


def headers(sent: dict[str, Any], token: str) -> dict[str, str]:
    out = {
        "accept": ACCEPT,
        "content-type": "application/json",
        "mcp-protocol-version": wire.MODERN,
        "mcp-method": sent["method"],
        "authorization": f"Bearer {token}",
    }
    params = sent["params"]
    name = params.get("name") if sent["method"] == "tools/call" else params.get("taskId")
    if isinstance(name, str):
        out["mcp-name"] = name
    return out


async def modern(client: Any, method: str, params: dict[str, Any], token: str = ALICE) -> dict[str, Any]:
    sent = message(method, params)
    _, [reply] = await post(client, sent, headers(sent, token))
    assert isinstance(reply, dict)
    return reply


async def until(client: Any, task_id: str, statuses: set[str], token: str = ALICE) -> dict[str, Any]:
    with anyio.fail_after(wire.TIMEOUT):
        while True:
            reply = await modern(client, "tasks/get", {"taskId": task_id}, token)
            result: dict[str, Any] = reply["result"]
            if result["status"] in statuses:
                return result
            await anyio.sleep(0.01)


async def test_a_task_made_in_one_post_is_polled_from_another_connection_and_hidden_from_another_user() -> None:
    application = app()
    async with http_client(application) as first:
        created = await modern(first, "tools/call", {"name": "slow", "arguments": {"seconds": 0.05}})
        task_id = created["result"]["taskId"]
    async with http_client(application) as second:  # the first client is gone: a new connection polls
        done = await until(second, task_id, {"completed"})
        assert done["result"]["content"] == [{"type": "text", "text": "slept 0.05"}]
        hidden = await modern(second, "tasks/get", {"taskId": task_id}, BOB)
        assert hidden["error"]["code"] == -32602
        refused = await modern(second, "tasks/cancel", {"taskId": task_id}, BOB)
        assert refused["error"]["code"] == -32602
        answered = await modern(second, "tasks/update", {"taskId": task_id, "inputResponses": {}}, BOB)
        assert answered["error"]["code"] == -32602


async def test_a_question_asked_while_no_client_is_connected_waits_for_tasks_update() -> None:
    application = app()
    async with http_client(application) as client:
        created = await modern(client, "tools/call", {"name": "confirm_delete", "arguments": {"filename": "f"}})
        task_id = created["result"]["taskId"]
    async with http_client(application) as client:
        waiting = await until(client, task_id, {"input_required"})
        (key,) = waiting["inputRequests"]
        answer = {key: {"action": "accept", "content": {"confirm": True}}}
        ack = await modern(client, "tasks/update", {"taskId": task_id, "inputResponses": answer})
        assert ack["result"]["resultType"] == "complete"
        done = await until(client, task_id, {"completed"})
        assert done["result"]["content"][0]["text"] == "deleted f"


async def test_a_mismatched_mcp_name_on_tasks_get_is_a_header_mismatch() -> None:
    async with http_client(app()) as client:
        created = await modern(client, "tools/call", {"name": "slow", "arguments": {"seconds": 0}})
        sent = message("tasks/get", {"taskId": created["result"]["taskId"]})
        response, [reply] = await post(client, sent, {**headers(sent, ALICE), "mcp-name": "another"})
        assert response.status_code == 400
        assert reply["error"]["code"] == -32020


async def test_handshake_era_the_same_user_reaches_a_task_from_a_new_session() -> None:
    application = app()
    async with http_client(application) as client:
        auth = {"authorization": f"Bearer {ALICE}"}
        session = await _session(client, auth)
        call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call"}
        call["params"] = {"name": "slow", "arguments": {"seconds": 0}, "task": {"ttl": 60000}}
        _, [created] = await post(client, call, {**legacy_headers(session), **auth}, wire.LATEST)
        task_id = created["result"]["task"]["taskId"]
        other = await _session(client, auth)
        result = {"jsonrpc": "2.0", "id": 3, "method": "tasks/result", "params": {"taskId": task_id}}
        _, [reply] = await post(client, result, {**legacy_headers(other), **auth}, wire.LATEST)
        assert reply["result"]["content"] == [{"type": "text", "text": "slept 0.0"}]


async def _session(client: Any, auth: dict[str, str]) -> str:
    message = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": wire.LATEST,
            "capabilities": {"tasks": {}},
            "clientInfo": {"name": "t", "version": "1"},
        },
    }
    response, [reply] = await post(
        client, message, {"accept": ACCEPT, "content-type": "application/json", **auth}, wire.LATEST
    )
    assert reply["result"]["capabilities"]["tasks"]["requests"] == {"tools": {"call": {}}}
    session: str = response.headers["mcp-session-id"]
    return session


async def test_handshake_era_a_task_s_question_goes_out_on_the_tasks_result_stream() -> None:
    from test_http_hitl import initialize as open_session
    from test_http_hitl import session_headers, streamed

    async with http_client(tasks_server.build().http_app()) as client:
        session = await open_session(client, {"elicitation": {"form": {}}, "tasks": {}})
        call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call"}
        call["params"] = {"name": "confirm_delete", "arguments": {"filename": "h"}, "task": {}}
        _, [created] = await post(client, call, session_headers(session), wire.LATEST)
        task_id = created["result"]["task"]["taskId"]
        result = {"jsonrpc": "2.0", "id": 2, "method": "tasks/result", "params": {"taskId": task_id}}
        with anyio.fail_after(wire.TIMEOUT):
            async with streamed(client, session, result) as messages:
                question = await anext(messages)
                assert question["method"] == "elicitation/create"
                assert question["params"]["_meta"]["io.modelcontextprotocol/related-task"] == {"taskId": task_id}
                answer = {
                    "jsonrpc": "2.0",
                    "id": question["id"],
                    "result": {"action": "accept", "content": {"confirm": True}},
                }
                response = await client.post("/mcp", content=json.dumps(answer), headers=session_headers(session))
                assert response.status_code == 202
                rest = [message async for message in messages]  # to the answer, which ends the stream
        assert rest[-1]["result"]["content"][0]["text"] == "deleted h"


@pytest.mark.parametrize("anyio_backend", ["asyncio"])  # redis.asyncio
async def test_with_the_task_store_down_tasks_methods_answer_503_with_retry_after_in_both_eras() -> None:
    from redis_server import RedisServer

    from toolkit import RedisBackend

    down = RedisServer()  # started and stopped at once: its port answers nothing
    down.start()
    down.stop()
    store = RedisBackend(down.url, timeout=0.3).task_store()
    application = app(task_store=store)
    seen = []
    async with http_client(application) as client:
        for method, params in (("tasks/get", {"taskId": "t"}), ("tools/call", {"name": "slow", "arguments": {}})):
            sent = message(method, params)
            response, [reply] = await post(client, sent, headers(sent, ALICE))
            seen.append((response.status_code, response.headers.get("retry-after"), reply["error"]["message"]))
        auth = {"authorization": f"Bearer {ALICE}"}
        session = await _session(client, auth)
        for method, params in (("tasks/get", {"taskId": "t"}), ("tasks/list", {}), ("tasks/result", {"taskId": "t"})):
            sent = {"jsonrpc": "2.0", "id": 2, "method": method, "params": params}
            response, [reply] = await post(client, sent, {**legacy_headers(session), **auth}, wire.LATEST)
            seen.append((response.status_code, response.headers.get("retry-after"), reply["error"]["message"]))
    assert seen == [(503, "1", "Shared state unavailable")] * 5
