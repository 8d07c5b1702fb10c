"""Streamable HTTP in process: the ASGI app of `Server.http_app()`, driven by httpx on a streaming ASGI transport.

Every message the server sends (a JSON body or an SSE event) is validated against the official schema of the
revision in use. Each test runs on asyncio and trio.
"""

from __future__ import annotations

import json
import threading
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import aclosing, asynccontextmanager
from typing import Annotated, Any, cast

import anyio
import httpx
import pytest
import wire
from pydantic import Field
from servers.http_demo import build as make_server  # the demo server: tests/servers/http_demo.py

from toolkit import (
    Client,
    Context,
    Identity,
    ProtocolError,
    RateLimit,
    Request,
    Server,
    StaticTokenVerifier,
    StreamingASGITransport,
    ToolDefinition,
    tool,
)

pytestmark = pytest.mark.anyio

URL = "http://127.0.0.1:8000/mcp"
ACCEPT = "application/json, text/event-stream"


class Wait:
    """A tool that waits until released, and says whether it was cancelled."""

    def __init__(self) -> None:
        self.started = anyio.Event()
        self.release = anyio.Event()
        self.cancelled = anyio.Event()

    async def wait(self) -> str:
        self.started.set()
        try:
            await self.release.wait()
        except anyio.get_cancelled_exc_class():
            self.cancelled.set()
            raise
        return "released"

    def tool(self) -> Any:
        @tool
        async def wait() -> str:
            """Wait until the test releases it."""
            return await self.wait()

        return wait

    def telling_tool(self) -> Any:
        @tool
        async def wait(ctx: Context) -> str:
            """Say it started, then wait until the test releases it (a Context tool that only notifies)."""
            await ctx.info("started")
            return await self.wait()

        return wait


@asynccontextmanager
async def http_client(app: Any) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(transport=StreamingASGITransport(app), base_url="http://127.0.0.1:8000") as client:
        yield client


def modern_message(method: str, params: dict[str, Any] | None = None, request_id: Any = 1, **meta: Any) -> Any:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": method,
        "params": {**(params or {}), "_meta": wire.meta(**meta)},
    }


def modern_headers(message: dict[str, Any]) -> dict[str, str]:
    headers = {
        "accept": ACCEPT,
        "content-type": "application/json",
        "mcp-protocol-version": wire.MODERN,
        "mcp-method": message["method"],
    }
    # The parameter the Mcp-Name header repeats: a tool's name, or a task's id on tasks/get, update and cancel.
    key = {"tools/call": "name", "tasks/get": "taskId", "tasks/update": "taskId", "tasks/cancel": "taskId"}
    name = message.get("params", {}).get(key.get(message["method"], ""))
    if isinstance(name, str):
        headers["mcp-name"] = name
    return headers


async def post(
    client: httpx.AsyncClient,
    message: Any,
    headers: dict[str, str],
    version: str = wire.MODERN,
    *,
    within: float = wire.TIMEOUT,
) -> tuple[httpx.Response, list[Any]]:
    """POST `message`, bounded by `within` seconds (many requests at once: the bound of the whole batch)."""
    with anyio.fail_after(within):
        response = await client.post("/mcp", content=json.dumps(message), headers=headers)
    method = message.get("method") if isinstance(message, dict) else None
    body = response.content
    if not body:
        return response, []
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        messages = [json.loads(line[6:]) for line in body.decode().splitlines() if line.startswith("data: ")]
    else:
        messages = [json.loads(body)]
    for item in messages:
        wire.check_server_message(item, version, None if "method" in item else method)
    return response, messages


async def initialize(client: httpx.AsyncClient, version: str = wire.LATEST) -> str:
    message = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
    response, [reply] = await post(client, message, {"accept": ACCEPT, "content-type": "application/json"}, version)
    assert response.status_code == 200
    assert reply["result"]["protocolVersion"] == version
    session: str = response.headers["mcp-session-id"]
    return session


def legacy_headers(session: str, version: str = wire.LATEST) -> dict[str, str]:
    return {
        "accept": ACCEPT,
        "content-type": "application/json",
        "mcp-session-id": session,
        "mcp-protocol-version": version,
    }


# -- 2026-07-28 -----------------------------------------------------------------------------------------


async def test_a_modern_call_without_notifications_is_answered_with_one_json_body() -> None:
    async with http_client(make_server().http_app()) as client:
        message = modern_message("tools/call", {"name": "add", "arguments": {"a": 2, "b": 3}})
        response, [reply] = await post(client, message, modern_headers(message))
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    assert "mcp-session-id" not in response.headers  # 2026-07-28: "do not mint or echo session IDs"
    assert reply["id"] == 1
    assert reply["result"]["content"] == [{"type": "text", "text": "5"}]


async def test_a_call_refused_for_too_many_in_flight_is_answered_on_its_own_response() -> None:
    @tool
    async def asks(ctx: Context) -> str:
        """A tool that takes a Context: served on a connection of its own, through admission."""
        return "never"

    server = Server("busy", tools=[asks], max_concurrent_requests=0)
    async with http_client(server.http_app()) as client:
        message = modern_message("tools/call", {"name": "asks", "arguments": {}})
        response, [reply] = await post(client, message, modern_headers(message))
    assert reply["id"] == 1
    assert reply["error"]["message"] == "Too many requests in flight"
    assert response.status_code == 200  # the app maps only some codes to an HTTP status; -32603 keeps 200


async def test_progress_and_logs_of_a_modern_call_stream_as_sse_before_its_answer() -> None:
    async with http_client(make_server().http_app()) as client:
        message = modern_message(
            "tools/call", {"name": "steps", "arguments": {"count": 2}}, progress="p1", log_level="info"
        )
        response, messages = await post(client, message, modern_headers(message))
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/event-stream"
    assert response.headers["cache-control"] == "no-cache, no-transform"
    assert [m.get("method") for m in messages] == [
        "notifications/progress",
        "notifications/progress",
        "notifications/message",
        None,
    ]
    assert [m["params"]["progress"] for m in messages[:2]] == [1, 2]
    assert messages[-1]["result"]["content"] == [{"type": "text", "text": "2 steps"}]


async def test_a_client_that_accepts_only_json_gets_the_answer_without_the_notifications() -> None:
    async with http_client(make_server().http_app()) as client:
        message = modern_message("tools/call", {"name": "steps", "arguments": {"count": 2}}, progress="p1")
        headers = {**modern_headers(message), "accept": "application/json"}
        response, [reply] = await post(client, message, headers)
    assert response.headers["content-type"] == "application/json"
    assert reply["result"]["content"] == [{"type": "text", "text": "2 steps"}]


@pytest.mark.parametrize(
    ("change", "why"),
    [
        ({"mcp-method": "prompts/list"}, "mismatched method"),
        ({"mcp-method": "TOOLS/LIST"}, "values are case-sensitive"),
        ({"mcp-method": None}, "missing method"),
        ({"mcp-protocol-version": None}, "missing version"),
    ],
)
async def test_metadata_headers_that_disagree_with_the_body_get_400_header_mismatch(
    change: dict[str, str | None], why: str
) -> None:
    async with http_client(make_server().http_app()) as client:
        message = modern_message("tools/list", request_id=7)
        headers = {k: v for k, v in {**modern_headers(message), **change}.items() if v is not None}
        response, [reply] = await post(client, message, headers)
    assert response.status_code == 400, why
    assert reply == wire.error(7, -32020)


@pytest.mark.parametrize("sent", [None, "subtract", "=?base64?YWRk?="])
async def test_the_mcp_name_header_must_name_the_tool_of_a_call(sent: str | None) -> None:
    async with http_client(make_server().http_app()) as client:
        message = modern_message("tools/call", {"name": "add", "arguments": {"a": 1, "b": 1}}, request_id="c")
        headers = modern_headers(message)
        del headers["mcp-name"]
        if sent is not None:
            headers["mcp-name"] = sent
        response, [reply] = await post(client, message, headers)
    if sent == "=?base64?YWRk?=":  # "add", Base64-encoded: the same name
        assert response.status_code == 200
        assert reply["result"]["content"] == [{"type": "text", "text": "2"}]
    else:
        assert response.status_code == 400
        assert reply == wire.error("c", -32020)


async def test_header_names_are_case_insensitive_and_values_may_be_padded() -> None:
    async with http_client(make_server().http_app()) as client:
        message = modern_message("tools/list")
        headers = {"Accept": ACCEPT, "Content-Type": "application/json"}
        headers["MCP-METHOD"] = " tools/list\t"
        headers["mcp-protocol-version"] = wire.MODERN
        response, [reply] = await post(client, message, headers)
    assert response.status_code == 200
    assert [t["name"] for t in reply["result"]["tools"]] == ["add", "steps"]


async def test_an_unsupported_modern_version_gets_400_listing_the_supported_ones() -> None:
    async with http_client(make_server().http_app()) as client:
        message = modern_message("tools/list", version="v999.0.0")
        headers = {**modern_headers(message), "mcp-protocol-version": "v999.0.0"}
        response, [reply] = await post(client, message, headers)
        assert response.status_code == 400
        assert reply == wire.error(1, -32022, {"supported": [wire.MODERN], "requested": "v999.0.0"})
        # Header and body disagreeing is checked first.
        response, [reply] = await post(client, message, modern_headers(message))
        assert response.status_code == 400
        assert reply == wire.error(1, -32020)


@pytest.mark.parametrize("method", ["unknown/method", "ping", "logging/setLevel", "initialize"])
async def test_an_unknown_or_removed_method_gets_404_method_not_found(method: str) -> None:
    async with http_client(make_server().http_app()) as client:
        message = modern_message(method, {"level": "info"} if method == "logging/setLevel" else None, request_id=3)
        response, [reply] = await post(client, message, modern_headers(message))
    assert response.status_code == 404
    assert reply == wire.error(3, -32601)


async def test_a_modern_request_missing_its_meta_gets_400_invalid_params() -> None:
    async with http_client(make_server().http_app()) as client:
        message = {"jsonrpc": "2.0", "id": 4, "method": "tools/list", "params": {}}
        response, [reply] = await post(client, message, modern_headers(message))
    assert response.status_code == 400
    assert reply == wire.error(4, -32602)


async def test_a_modern_notification_is_accepted_with_202_and_no_body() -> None:
    async with http_client(make_server().http_app()) as client:
        message = {"jsonrpc": "2.0", "method": "notifications/whatever", "params": {"_meta": wire.meta()}}
        response, messages = await post(client, message, {**modern_headers(message)})
    assert (response.status_code, messages) == (202, [])


def demo_with_a_failing_tool() -> Server:
    """The demo server and a tool `fail` that raises."""
    server = make_server()

    @server.tool
    def fail() -> int:
        """Raise."""
        raise ValueError("no")

    return server


async def json_and_stream(
    client: httpx.AsyncClient, message: Any, headers: dict[str, str], version: str = wire.MODERN
) -> tuple[httpx.Response, httpx.Response, Any, Any]:
    """POST `message` twice, taking JSON and then only SSE: both responses, and the one answer each carried."""
    alone, [answer] = await post(client, message, headers, version)
    streamed, [same] = await post(client, message, {**headers, "accept": "text/event-stream"}, version)
    return alone, streamed, answer, same


async def test_modern_answers_are_the_same_as_json_alone_or_on_a_stream() -> None:
    # A request that sends nothing but its answer is served in the request's own task as plain JSON; a client that
    # takes only SSE gets it through the connection's loop. Both must say the same; JSON errors carry their status
    # (an SSE stream has started with 200).
    server = demo_with_a_failing_tool()
    requests = [
        modern_message("tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}}),
        modern_message("tools/call", {"name": "add", "arguments": {"a": "x"}}),
        modern_message("tools/call", {"name": "fail", "arguments": {}}),
        modern_message("tools/list"),
        modern_message("server/discover"),
        modern_message("tools/list", version="2099-01-01"),
    ]
    statuses = []
    async with http_client(server.http_app(rate_limit=RateLimit(calls=100, per=3600.0))) as client:
        for message in requests:
            headers = modern_headers(message)
            headers["mcp-protocol-version"] = message["params"]["_meta"][wire.VERSION_KEY]
            alone, streamed, answer, same = await json_and_stream(client, message, headers)
            assert alone.headers["content-type"] == "application/json"
            assert streamed.headers["content-type"] == "text/event-stream"
            assert answer == same
            statuses.append((alone.status_code, streamed.status_code))
    assert statuses == [(200, 200)] * 5 + [(400, 200)]
    assert answer["error"]["code"] == -32022


async def test_session_answers_are_the_same_as_json_alone_or_on_a_stream() -> None:
    # The same for a 2025-11-25 session's requests: errors travel with 200 either way.
    server = demo_with_a_failing_tool()
    requests = [
        {"name": "add", "arguments": {"a": 1, "b": 2}},
        {"name": "add", "arguments": {"a": "x"}},
        {"name": "fail", "arguments": {}},
        {"name": "missing", "arguments": {}},
    ]
    async with http_client(server.http_app()) as client:
        session = await initialize(client)
        headers = legacy_headers(session)
        answers = []
        for request_id, params in enumerate(requests):
            message = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}
            alone, streamed, answer, same = await json_and_stream(client, message, headers, wire.LATEST)
            assert (alone.headers["content-type"], streamed.headers["content-type"]) == (
                "application/json",
                "text/event-stream",
            )
            assert (alone.status_code, streamed.status_code, answer) == (200, 200, same)
            answers.append(answer)
        for method in ("tools/list", "ping"):
            message = {"jsonrpc": "2.0", "id": method, "method": method}
            alone, streamed, answer, same = await json_and_stream(client, message, headers, wire.LATEST)
            assert (alone.status_code, answer) == (200, same)
    assert answers[0]["result"]["content"] == [{"type": "text", "text": "3"}]
    assert [a["result"]["isError"] for a in answers[1:3]] == [True, True]
    assert answers[3]["error"]["code"] == -32602


async def test_a_cancelled_session_call_of_a_sync_tool_gets_no_answer() -> None:
    started, release = threading.Event(), threading.Event()

    @tool
    def block() -> str:
        """Wait in a worker thread until the test releases it."""
        started.set()
        release.wait(wire.TIMEOUT)
        return "done"

    async with http_client(Server("cancel", tools=[block]).http_app()) as client:
        session = await initialize(client)
        headers = legacy_headers(session)
        call = {"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "block"}}
        cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 9}}
        replies: list[Any] = []

        async def call_it() -> None:
            replies.append(await post(client, call, {**headers, "accept": "application/json"}, wire.LATEST))

        with anyio.fail_after(wire.TIMEOUT):
            async with anyio.create_task_group() as tg:
                tg.start_soon(call_it)
                await anyio.to_thread.run_sync(started.wait)
                response, _ = await post(client, cancel, headers, wire.LATEST)
                assert response.status_code == 202
                release.set()  # the thread cannot be stopped: it finishes, and its answer is dropped
    [(response, messages)] = replies
    assert (response.status_code, messages) == (202, [])


async def test_closing_a_modern_response_stream_cancels_the_call() -> None:
    waiter = Wait()
    server = Server("cancel", tools=[waiter.tool()])
    async with http_client(server.http_app()) as client:
        message = modern_message("tools/call", {"name": "wait"})
        headers = modern_headers(message)
        with anyio.fail_after(wire.TIMEOUT):
            async with anyio.create_task_group() as tg:
                tg.start_soon(post, client, message, headers)
                await waiter.started.wait()
                tg.cancel_scope.cancel()  # the client goes away before any answer
            await waiter.cancelled.wait()
    assert not waiter.release.is_set()


async def test_a_subscription_streams_its_acknowledgement_then_tool_list_changes() -> None:
    server = make_server()
    async with http_client(server.http_app()) as client:
        message = modern_message("subscriptions/listen", {"notifications": {"toolsListChanged": True}}, request_id=9)
        with anyio.fail_after(wire.TIMEOUT):
            async with client.stream(
                "POST", "/mcp", content=json.dumps(message), headers=modern_headers(message)
            ) as response:
                assert response.headers["content-type"] == "text/event-stream"
                seen: list[Any] = []
                async with aclosing(cast(AsyncGenerator[str, None], response.aiter_lines())) as lines:
                    async for line in lines:
                        if not line.startswith("data: "):
                            continue
                        note = json.loads(line[6:])
                        wire.check_server_message(note, wire.MODERN, None)
                        seen.append(note)
                        if len(seen) == 1:

                            @tool
                            def extra() -> str:
                                """Added while subscribed."""
                                return "x"

                            server.add_tool(extra)
                        else:
                            break
    assert [n["method"] for n in seen] == [
        "notifications/subscriptions/acknowledged",
        "notifications/tools/list_changed",
    ]
    assert all(n["params"]["_meta"][wire.SUBSCRIPTION_KEY] == 9 for n in seen)


async def test_a_subscription_needs_a_client_that_accepts_sse() -> None:
    async with http_client(make_server().http_app()) as client:
        message = modern_message("subscriptions/listen", {"notifications": {}})
        response, _ = await post(client, message, {**modern_headers(message), "accept": "application/json"})
    assert response.status_code == 406


# -- HTTP-level checks ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ({"host": "evil.example.com"}, 421),
        ({"host": "evil.example.com", "origin": "http://evil.example.com"}, 421),
        ({"origin": "http://evil.example.com"}, 403),
        ({"origin": "null"}, 403),
        ({"origin": "http://127.0.0.1:8000"}, 200),
        ({"host": "localhost:9999", "origin": "http://localhost:9999"}, 200),
        ({"host": "[::1]:8000"}, 200),
    ],
)
async def test_host_and_origin_are_checked_before_anything_else(headers: dict[str, str], status: int) -> None:
    async with http_client(make_server().http_app()) as client:
        message = modern_message("server/discover")
        response, messages = await post(client, message, {**modern_headers(message), **headers})
    assert response.status_code == status
    if status != 200:
        assert "evil" not in response.text  # nothing the client sent is echoed
        assert messages == [wire.error(None, -32600)]


async def test_allowed_hosts_and_origins_can_be_configured() -> None:
    app = make_server().http_app(
        allowed_hosts=["mcp.example.com", "*.internal"], allowed_origins=["https://app.example"]
    )
    async with http_client(app) as client:
        message = modern_message("server/discover")
        for host, origin, status in [
            ("mcp.example.com", "https://app.example", 200),
            ("a.b.internal:8443", None, 200),
            ("127.0.0.1:8000", None, 421),
            ("mcp.example.com", "https://other.example", 403),
        ]:
            headers = {**modern_headers(message), "host": host}
            if origin is not None:
                headers["origin"] = origin
            response, _ = await post(client, message, headers)
            assert response.status_code == status, (host, origin)


async def test_a_body_over_the_limit_gets_413_without_being_served() -> None:
    app = make_server().http_app(max_body_size=200)
    async with http_client(app) as client:
        message = modern_message("tools/call", {"name": "add", "arguments": {"a": 1, "b": 2, "pad": "x" * 300}})
        response, messages = await post(client, message, modern_headers(message))
    assert (response.status_code, messages) == (413, [])


@pytest.mark.parametrize(
    ("change", "status"),
    [({"content-type": "text/plain"}, 415), ({"accept": "text/html"}, 406)],
)
async def test_content_type_and_accept_are_checked(change: dict[str, str], status: int) -> None:
    async with http_client(make_server().http_app()) as client:
        message = modern_message("tools/list")
        response, _ = await post(client, message, {**modern_headers(message), **change})
    assert response.status_code == status


@pytest.mark.parametrize(
    ("body", "code"), [(b"{not json", -32700), (b"[]", -32600), (b'{"jsonrpc": "1.0", "id": 1, "method": "x"}', -32600)]
)
async def test_a_body_that_is_not_one_json_rpc_message_gets_400(body: bytes, code: int) -> None:
    async with http_client(make_server().http_app()) as client:
        response = await client.post(
            "/mcp", content=body, headers={"accept": ACCEPT, "content-type": "application/json"}
        )
    assert response.status_code == 400
    assert response.json()["error"]["code"] == code


async def test_other_paths_and_methods_are_refused() -> None:
    async with http_client(make_server().http_app(legacy=False)) as client:
        assert (await client.get("/elsewhere")).status_code == 404
        response = await client.get("/mcp", headers={"accept": "text/event-stream"})
        assert (response.status_code, response.headers["allow"]) == (405, "POST")
        assert (await client.put("/mcp", content=b"{}")).status_code == 405


# -- 2025-11-25 sessions --------------------------------------------------------------------------------


async def test_initialize_mints_a_fresh_random_session_id_and_ignores_one_the_client_chose() -> None:
    async with http_client(make_server().http_app()) as client:
        first = await initialize(client)
        second = await initialize(client)
        message = {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {"protocolVersion": wire.LATEST, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
        }
        headers = {"accept": ACCEPT, "content-type": "application/json", "mcp-session-id": "chosen-by-the-client"}
        response, _ = await post(client, message, headers, wire.LATEST)
    assert first != second
    assert response.headers["mcp-session-id"] not in (first, second, "chosen-by-the-client")
    assert all(0x21 <= ord(c) <= 0x7E for c in first)  # transports: visible ASCII only
    assert len(first) > 40


async def test_a_session_serves_calls_with_their_notifications_on_the_call_stream() -> None:
    async with http_client(make_server().http_app()) as client:
        session = await initialize(client)
        headers = legacy_headers(session)
        response, _ = await post(client, {"jsonrpc": "2.0", "method": "notifications/initialized"}, headers)
        assert response.status_code == 202
        set_level = {"jsonrpc": "2.0", "id": 1, "method": "logging/setLevel", "params": {"level": "debug"}}
        response, [reply] = await post(client, set_level, headers, wire.LATEST)
        assert reply == {"jsonrpc": "2.0", "id": 1, "result": {}}
        call = {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "steps", "arguments": {"count": 1}, "_meta": {"progressToken": 5}},
        }
        response, messages = await post(client, call, headers, wire.LATEST)
    assert [m.get("method") for m in messages] == ["notifications/progress", "notifications/message", None]
    assert messages[-1]["result"]["content"] == [{"type": "text", "text": "1 steps"}]


async def test_a_call_that_ends_after_a_set_level_does_not_undo_it() -> None:
    # A call keeps the level it started with to itself; the session's level is what the last logging/setLevel said.
    waiter = Wait()
    server = make_server()
    server.add_tool(waiter.tool())
    async with http_client(server.http_app()) as client:
        headers = legacy_headers(await initialize(client))

        async def request(request_id: int, method: str, params: dict[str, Any]) -> list[Any]:
            message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
            return (await post(client, message, headers, wire.LATEST))[1]

        await request(1, "logging/setLevel", {"level": "debug"})
        async with anyio.create_task_group() as tg:
            tg.start_soon(request, 2, "tools/call", {"name": "wait", "arguments": {}})
            await waiter.started.wait()  # the call started at debug
            assert await request(3, "logging/setLevel", {"level": "error"}) == [
                {"jsonrpc": "2.0", "id": 3, "result": {}}
            ]
            waiter.release.set()
        messages = await request(4, "tools/call", {"name": "steps", "arguments": {"count": 1}})
    assert [m.get("method") for m in messages] == [None]  # "stepped" is info: below error, so not sent
    assert messages[-1]["result"]["content"] == [{"type": "text", "text": "1 steps"}]


async def test_several_posts_of_one_session_are_served_concurrently() -> None:
    waiter = Wait()
    server = make_server()
    server.add_tool(waiter.tool())
    async with http_client(server.http_app()) as client:
        headers = legacy_headers(await initialize(client))
        replies: dict[int, Any] = {}

        async def call(request_id: int, name: str, arguments: dict[str, Any]) -> None:
            message = {
                "jsonrpc": "2.0",
                "id": request_id,
                "method": "tools/call",
                "params": {"name": name, "arguments": arguments},
            }
            _, [replies[request_id]] = await post(client, message, headers, wire.LATEST)

        async with anyio.create_task_group() as tg:
            tg.start_soon(call, 1, "wait", {})
            await waiter.started.wait()
            for i in range(2, 5):  # answered while the first call still waits
                await call(i, "add", {"a": i, "b": 0})
            waiter.release.set()
    assert {i: r["result"]["content"][0]["text"] for i, r in replies.items()} == {1: "released", 2: "2", 3: "3", 4: "4"}


@pytest.mark.parametrize("what", ["missing", "forged", "tampered"])
async def test_a_request_without_a_valid_session_is_refused(what: str) -> None:
    async with http_client(make_server().http_app()) as client:
        session = await initialize(client)
        message = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
        headers = legacy_headers(session)
        if what == "missing":
            del headers["mcp-session-id"]
        elif what == "forged":
            headers["mcp-session-id"] = "v1.eyJrIjoiMDAwMDAwMDAifQ.AAAA"
        else:
            headers["mcp-session-id"] = session[:-3] + ("AAA" if session[-3:] != "AAA" else "BBB")
        response, [reply] = await post(client, message, headers, wire.LATEST)
    assert response.status_code == (400 if what == "missing" else 404)
    assert reply["error"]["code"] == -32600
    assert session not in response.text


async def test_a_session_signed_by_another_key_is_unknown_and_one_signed_by_the_shared_key_is_served() -> None:
    secret = "a shared secret of at least thirty-two bytes"
    other_secret = "another secret of at least thirty-two bytes"
    first, second, other = (make_server().http_app(secret=s) for s in (secret, secret, other_secret))
    async with http_client(first) as a, http_client(second) as b, http_client(other) as c:
        session = await initialize(a)
        message = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
        response, [reply] = await post(b, message, legacy_headers(session), wire.LATEST)
        assert response.status_code == 200
        assert [t["name"] for t in reply["result"]["tools"]] == ["add", "steps"]
        response, _ = await post(c, message, legacy_headers(session), wire.LATEST)
        assert response.status_code == 404


async def test_delete_ends_a_session_and_later_requests_get_404() -> None:
    async with http_client(make_server().http_app()) as client:
        session = await initialize(client)
        assert (await client.delete("/mcp", headers={"mcp-session-id": session})).status_code == 204
        message = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
        response, _ = await post(client, message, legacy_headers(session), wire.LATEST)
        assert response.status_code == 404
        assert (await client.delete("/mcp", headers={"mcp-session-id": session})).status_code == 404


async def test_an_unsupported_protocol_version_header_in_a_session_gets_400() -> None:
    async with http_client(make_server().http_app()) as client:
        session = await initialize(client)
        message = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
        response, _ = await post(client, message, legacy_headers(session, "1999-01-01"), wire.LATEST)
        assert response.status_code == 400
        # Any supported handshake revision is accepted (the conformance suite sends 2025-03-26 in a 2025-11-25 one).
        response, _ = await post(client, message, legacy_headers(session, "2025-03-26"), wire.LATEST)
        assert response.status_code == 200


async def test_the_get_stream_carries_tool_list_changes_and_only_one_is_open_per_session() -> None:
    server = make_server()
    async with http_client(server.http_app()) as client:
        session = await initialize(client)
        headers = {"accept": "text/event-stream", "mcp-session-id": session, "mcp-protocol-version": wire.LATEST}
        with anyio.fail_after(wire.TIMEOUT):
            async with client.stream("GET", "/mcp", headers=headers) as stream:
                assert stream.status_code == 200
                assert (await client.get("/mcp", headers=headers)).status_code == 409

                @tool
                def extra() -> str:
                    """Added while the stream is open."""
                    return "x"

                server.add_tool(extra)
                async with aclosing(cast(AsyncGenerator[str, None], stream.aiter_lines())) as lines:
                    async for line in lines:
                        if line.startswith("data: "):
                            note = json.loads(line[6:])
                            wire.check_server_message(note, wire.LATEST, None)
                            assert note == {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
                            break


@pytest.mark.parametrize("kind", ["plain", "notifying"])
async def test_notifications_cancelled_cancels_a_call_of_the_session(kind: str) -> None:
    # plain: answered alone; notifying (a Context that only notifies): served in its request's task too (`answer`,
    # a `resumable` writer)
    waiter = Wait()
    server = Server("cancel", tools=[waiter.tool() if kind == "plain" else waiter.telling_tool()])
    async with http_client(server.http_app()) as client:
        headers = legacy_headers(await initialize(client))
        call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "wait"}}
        cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
        async with anyio.create_task_group() as tg:
            result: list[Any] = []

            async def run_call() -> None:
                result.append(await post(client, call, headers, wire.LATEST))

            tg.start_soon(run_call)
            await waiter.started.wait()
            response, _ = await post(client, cancel, headers, wire.LATEST)
            assert response.status_code == 202
        await waiter.cancelled.wait()
    [(response, messages)] = result
    # a cancelled request gets no response (the notifying call's log went out before it)
    assert [m.get("method") for m in messages] == ([] if kind == "plain" else ["notifications/message"])


async def test_the_asgi_lifespan_runs_the_servers_lifespan() -> None:
    events: list[str] = []
    called_with: list[Server] = []

    @asynccontextmanager
    async def lifespan(server: Server) -> AsyncIterator[str]:
        called_with.append(server)
        events.append("start")
        yield "state"
        events.append("stop")

    server = Server("life", lifespan=lifespan)
    app = server.http_app()
    to_app, from_test = anyio.create_memory_object_stream[dict[str, Any]](4)
    to_test, from_app = anyio.create_memory_object_stream[Any](4)

    async def send(message: Any) -> None:
        await to_test.send(message)

    with anyio.fail_after(wire.TIMEOUT), to_app, from_test, to_test, from_app:
        async with anyio.create_task_group() as tg:
            tg.start_soon(app, {"type": "lifespan"}, from_test.receive, send)
            await to_app.send({"type": "lifespan.startup"})
            assert (await from_app.receive())["type"] == "lifespan.startup.complete"
            assert events == ["start"]
            await to_app.send({"type": "lifespan.shutdown"})
            assert (await from_app.receive())["type"] == "lifespan.shutdown.complete"
    assert events == ["start", "stop"]
    assert called_with == [server]  # the Server itself, not the engine's registry it holds


async def test_the_apps_server_is_the_server_whose_tools_it_serves() -> None:
    # `app.server` is the `Server` facade (tools are added there); `app.registry` is what HTTP serves of it.
    server = Server("grows")
    app = server.http_app()
    assert (app.server, app.registry) == (server, server.registry)
    app.server.add_tool(tool(name="late")(_late))
    async with http_client(app) as client:
        message = modern_message("tools/list")
        response, [reply] = await post(client, message, modern_headers(message))
    assert response.status_code == 200
    assert [t["name"] for t in reply["result"]["tools"]] == ["late"]


def _late() -> str:
    """Added to a server after its HTTP app was made."""
    return "late"


@pytest.mark.parametrize("era", ["2026-07-28", "2025-11-25"])
async def test_the_servers_stop_gives_a_running_call_its_grace_then_cancels_and_answers_it(era: str) -> None:
    waiter = Wait()
    server = Server("stopping", tools=[waiter.tool()], shutdown_grace=0)
    app = server.http_app()
    to_app, from_test = anyio.create_memory_object_stream[dict[str, Any]](4)
    to_test, from_app = anyio.create_memory_object_stream[Any](4)
    replies: list[list[Any]] = []

    async def call() -> None:
        async with http_client(app) as client:
            if era == wire.MODERN:
                message = modern_message("tools/call", {"name": "wait", "arguments": {}})
                replies.append((await post(client, message, modern_headers(message)))[1])
            else:
                headers = legacy_headers(await initialize(client))
                message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "wait"}}
                replies.append((await post(client, message, headers, wire.LATEST))[1])

    with anyio.fail_after(wire.TIMEOUT), to_app, from_test, to_test, from_app:
        async with anyio.create_task_group() as tg:
            tg.start_soon(app, {"type": "lifespan"}, from_test.receive, to_test.send)
            await to_app.send({"type": "lifespan.startup"})
            assert (await from_app.receive())["type"] == "lifespan.startup.complete"
            tg.start_soon(call)
            await waiter.started.wait()
            await to_app.send({"type": "lifespan.shutdown"})  # the call has no grace (0 s): cancelled at once
            assert (await from_app.receive())["type"] == "lifespan.shutdown.complete"
            await waiter.cancelled.wait()
    # stopped past the grace, the call is answered so before its response ends: its client does not wait for ever
    assert replies == [[{"jsonrpc": "2.0", "id": 1, "error": {"code": -32000, "message": "Server shutting down"}}]]


# -- Client.http ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("protocol", ["auto", "2026-07-28", "handshake"])
async def test_client_http_speaks_both_eras(protocol: Any) -> None:
    logs: list[Any] = []
    async with (
        http_client(make_server().http_app()) as http,
        Client.http(URL, http_client=http, protocol=protocol, on_log=logs.append) as client,
    ):
        assert client.protocol_version == (wire.LATEST if protocol == "handshake" else wire.MODERN)
        assert [t.name for t in await client.list_tools()] == ["add", "steps"]
        assert (await client.call_tool("add", {"a": 20, "b": 22})).text == "42"
        seen: list[float] = []
        await client.set_logging_level("info")
        result = await client.call_tool("steps", {"count": 3}, progress=lambda p, t, m: seen.append(p))
        assert result.text == "3 steps"
        assert seen == [1, 2, 3]
        with pytest.raises(ProtocolError) as caught:
            await client.call_tool("missing")
        assert caught.value.code == -32602
    assert [log.data for log in logs] == ["stepped"]


async def test_client_http_cancels_a_modern_call_by_closing_its_stream() -> None:
    waiter = Wait()
    server = Server("cancel", tools=[waiter.tool()])
    async with http_client(server.http_app()) as http, Client.http(URL, http_client=http) as client:
        with anyio.fail_after(wire.TIMEOUT):
            async with anyio.create_task_group() as tg:
                tg.start_soon(client.call_tool, "wait")
                await waiter.started.wait()
                tg.cancel_scope.cancel()
            await waiter.cancelled.wait()


async def test_client_http_ends_its_session_on_exit() -> None:
    app = make_server().http_app()
    seen: list[tuple[str, str | None]] = []

    async def recording(scope: Any, receive: Any, send: Any) -> None:
        headers = dict(scope["headers"])
        session = headers.get(b"mcp-session-id")
        seen.append((scope["method"], session.decode() if session else None))
        await app(scope, receive, send)

    async with http_client(recording) as http:
        async with Client.http(URL, http_client=http, protocol="handshake") as client:
            await client.list_tools()
        session = seen[-1][1]
        assert seen[-1][0] == "DELETE"
        assert session is not None
        message = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
        response, _ = await post(http, message, legacy_headers(session), wire.LATEST)
    assert response.status_code == 404


# -- authentication and limits --------------------------------------------------------------------------

ALICE = "alice-token-0123456789"
BOB = "bob-token-0123456789ab"


def auth_server() -> Server:
    server = make_server()

    @server.tool
    def whoami(ctx: Context) -> str:
        """The caller's subject and scopes."""
        identity = ctx.identity
        return "nobody" if identity is None else f"{identity.subject}:{','.join(sorted(identity.scopes))}"

    @server.tool
    def delete_everything() -> str:
        """Needs the admin scope."""
        return "deleted"

    return server


def auth_app(**options: Any) -> Any:
    verifier = StaticTokenVerifier(
        {ALICE: Identity("alice", frozenset({"tools"})), BOB: Identity("bob", frozenset({"tools", "admin"}))}
    )
    return auth_server().http_app(
        auth=verifier,
        authorization_servers=["https://auth.example.com"],
        scopes_supported=["tools", "admin"],
        required_scopes={"delete_everything": {"admin"}},
        **options,
    )


def call_message(name: str, request_id: Any = 1) -> Any:
    return modern_message("tools/call", {"name": name, "arguments": {}}, request_id=request_id)


async def test_a_request_without_a_token_gets_401_pointing_at_the_resource_metadata() -> None:
    async with http_client(auth_app()) as client:
        message = call_message("whoami")
        response, [reply] = await post(client, message, modern_headers(message))
        assert response.status_code == 401
        assert response.headers["www-authenticate"] == (
            'Bearer resource_metadata="http://127.0.0.1:8000/.well-known/oauth-protected-resource/mcp", '
            'scope="admin tools"'
        )
        assert reply == wire.error(None, -32600)
        metadata = await client.get("/.well-known/oauth-protected-resource/mcp")
    assert metadata.status_code == 200
    assert metadata.json() == {
        "resource": "http://127.0.0.1:8000/mcp",
        "authorization_servers": ["https://auth.example.com"],
        "bearer_methods_supported": ["header"],
        "resource_name": "http-demo",
        "scopes_supported": ["admin", "tools"],
    }


async def test_an_invalid_token_gets_401_invalid_token_and_is_never_echoed() -> None:
    async with http_client(auth_app(resource_url="https://mcp.example.com/mcp")) as client:
        message = call_message("whoami")
        headers = {**modern_headers(message), "authorization": "Bearer not-a-valid-token-at-all"}
        response, _ = await post(client, message, headers)
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == (
        'Bearer error="invalid_token", error_description="The access token is invalid or expired", '
        'resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp"'
    )
    assert "not-a-valid-token" not in response.text


async def test_tools_see_the_callers_identity_and_scopes_are_checked_per_tool() -> None:
    async with http_client(auth_app()) as client:
        for token, name, status, text in [
            (ALICE, "whoami", 200, "alice:tools"),
            (BOB, "whoami", 200, "bob:admin,tools"),
            (ALICE, "delete_everything", 403, None),
            (BOB, "delete_everything", 200, "deleted"),
        ]:
            message = call_message(name, request_id=name)
            headers = {**modern_headers(message), "authorization": f"Bearer {token}"}
            response, [reply] = await post(client, message, headers)
            assert response.status_code == status, (token, name)
            if text is not None:
                assert reply["result"]["content"] == [{"type": "text", "text": text}]
            else:
                assert reply == wire.error(name, -32600)
                assert response.headers["www-authenticate"].startswith(
                    'Bearer error="insufficient_scope", scope="admin tools", resource_metadata="'
                )


@pytest.mark.parametrize("era", ["2025-11-25", "2026-07-28"])
async def test_a_tool_hidden_from_a_caller_is_refused_as_unknown_not_named_by_its_missing_scope(era: str) -> None:
    """A tool that `tool_filter` hides and `required_scopes` guards: the caller it is hidden from gets exactly what a
    tool that does not exist gets (no 403 naming the tool and its scope); a caller who sees it is checked as before."""

    def admins_only(definition: ToolDefinition, request: Request) -> bool:
        return definition.name != "delete_everything" or (
            request.identity is not None and "admin" in request.identity.scopes
        )

    server = auth_server()
    server.registry.tool_filter = admins_only
    verifier = StaticTokenVerifier(
        {ALICE: Identity("alice", frozenset({"tools"})), BOB: Identity("bob", frozenset({"tools", "admin"}))}
    )
    app = server.http_app(
        auth=verifier,
        authorization_servers=["https://auth.example.com"],
        required_scopes={"delete_everything": {"admin"}, "whoami": {"whoami"}},
    )
    replies = {}
    async with http_client(app) as client:
        for token in (ALICE, BOB):
            session = await initialize_as(client, token) if era == "2025-11-25" else None
            for name in ("delete_everything", "no_such_tool", "whoami"):
                if session is None:
                    message = call_message(name)
                    headers = modern_headers(message)
                else:
                    params: dict[str, Any] = {"name": name, "arguments": {}}
                    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
                    headers = legacy_headers(session)
                response, [reply] = await post(client, message, {**headers, "authorization": f"Bearer {token}"}, era)
                replies[token, name] = (response.status_code, reply)
    hidden, missing = replies[ALICE, "delete_everything"], replies[ALICE, "no_such_tool"]
    assert hidden[0] == missing[0]
    assert hidden[1]["error"] == {**missing[1]["error"], "message": "Unknown tool: delete_everything"}
    assert missing[1]["error"] == {"code": -32602, "message": "Unknown tool: no_such_tool"}
    assert replies[BOB, "delete_everything"][1]["result"]["content"][0]["text"] == "deleted"
    # A tool the caller sees is still refused for a scope it lacks, naming it.
    assert replies[ALICE, "whoami"][0] == 403


async def test_a_broader_scope_implies_the_narrower_ones_it_names() -> None:
    """authorization (2026-07-28): servers MUST account for scope hierarchies; followed through, cycles allowed."""
    hierarchy = {"tools": {"files:write"}, "files:write": {"files:read", "tools"}}
    app = auth_server().http_app(
        auth=StaticTokenVerifier(
            {ALICE: Identity("alice", frozenset({"tools"})), BOB: Identity("bob", frozenset({"files:read"}))}
        ),
        authorization_servers=["https://auth.example.com"],
        required_scopes={"whoami": {"files:read"}, "delete_everything": {"admin"}},
        scope_implies=hierarchy,
    )
    async with http_client(app) as client:
        for token, name, status in [(ALICE, "whoami", 200), (BOB, "whoami", 200), (ALICE, "delete_everything", 403)]:
            message = call_message(name, request_id=name)
            headers = {**modern_headers(message), "authorization": f"Bearer {token}"}
            response, [reply] = await post(client, message, headers)
            assert response.status_code == status, (token, name)
    assert reply == wire.error("delete_everything", -32600)
    with pytest.raises(ValueError, match="scope_implies= needs auth="):
        auth_server().http_app(scope_implies=hierarchy)


async def initialize_as(client: httpx.AsyncClient, token: str) -> str:
    """A 2025-11-25 session opened with `token`: its id."""
    init = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {"protocolVersion": wire.LATEST, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
    base = {"accept": ACCEPT, "content-type": "application/json"}
    response, _ = await post(client, init, {**base, "authorization": f"Bearer {token}"}, wire.LATEST)
    session: str = response.headers["mcp-session-id"]
    return session


async def test_a_session_belongs_to_the_user_who_opened_it() -> None:
    async with http_client(auth_app()) as client:
        session = await initialize_as(client, ALICE)
        listing = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
        for token, status in [(ALICE, 200), (BOB, 404)]:
            headers = {**legacy_headers(session), "authorization": f"Bearer {token}"}
            response, _ = await post(client, listing, headers, wire.LATEST)
            assert response.status_code == status, token


async def test_a_users_session_outlives_a_key_rotation_and_stays_theirs() -> None:
    """docs/deploy.md: `secret=[new, old]` rotates without ending sessions, with `auth=` too: the subject is checked
    with the key that signed the id, not with the new one."""
    old, new = "the old secret, thirty-two bytes or more", "the new secret, thirty-two bytes or more"
    async with http_client(auth_app(secret=old)) as before, http_client(auth_app(secret=[new, old])) as after:
        session = await initialize_as(before, ALICE)
        message = call_message("whoami")
        del message["params"]["_meta"]
        for token, status in [(ALICE, 200), (BOB, 404), (ALICE, 200)]:
            headers = {**legacy_headers(session), "authorization": f"Bearer {token}"}
            response, [reply] = await post(after, message, headers, wire.LATEST)
            assert response.status_code == status, token
        assert reply["result"]["content"] == [{"type": "text", "text": "alice:tools"}]


async def test_client_http_sends_its_headers_with_every_request() -> None:
    async with (
        http_client(auth_app()) as http,
        Client.http(URL, http_client=http, headers={"Authorization": f"Bearer {BOB}"}, protocol="handshake") as client,
    ):
        assert (await client.call_tool("whoami")).text == "bob:admin,tools"


async def test_tool_calls_over_the_rate_limit_get_429_with_retry_after() -> None:
    app = make_server().http_app(rate_limit=RateLimit(calls=2, per=3600.0))
    async with http_client(app) as client:
        statuses = []
        for i in range(3):
            message = modern_message("tools/call", {"name": "add", "arguments": {"a": i, "b": 0}}, request_id=i)
            response, [reply] = await post(client, message, modern_headers(message))
            statuses.append(response.status_code)
        assert statuses == [200, 200, 429]
        assert reply == wire.error(2, -31001)
        assert int(response.headers["retry-after"]) >= 1
        message = modern_message("tools/list")  # only tool calls are limited
        response, _ = await post(client, message, modern_headers(message))
        assert response.status_code == 200


# -- edges ----------------------------------------------------------------------------------------------


def test_options_that_cannot_work_are_refused_when_the_app_is_made() -> None:
    server = make_server()
    verifier = StaticTokenVerifier(ALICE)
    with pytest.raises(ValueError, match="path"):
        server.http_app(path="mcp")
    with pytest.raises(ValueError, match="needs auth="):
        server.http_app(required_scopes={"add": {"x"}})
    with pytest.raises(ValueError, match="authorization_servers"):
        server.http_app(auth=verifier)
    with pytest.raises(ValueError, match="32 bytes"):
        server.http_app(secret="short")
    with pytest.raises(ValueError, match="16 characters"):
        StaticTokenVerifier("short")
    with pytest.raises(ValueError, match="calls"):
        RateLimit(calls=0)
    with pytest.raises(TypeError, match="auth="):
        server.http_app(auth="a-token-is-not-a-verifier", authorization_servers=["https://a.example"])  # type: ignore[arg-type]


async def test_a_verifier_may_be_an_async_function() -> None:
    async def verify(token: str) -> Identity | None:
        return Identity(token[:5]) if token.startswith("good-") else None

    app = auth_server().http_app(auth=verify, authorization_servers=["https://auth.example.com"])
    async with http_client(app) as client:
        message = call_message("whoami")
        for token, status in [("good-token", 200), ("bad-token", 401)]:
            headers = {**modern_headers(message), "authorization": f"Bearer {token}"}
            response, _ = await post(client, message, headers)
            assert response.status_code == status


async def test_a_lifespan_that_fails_gives_500_and_a_websocket_is_closed() -> None:
    @asynccontextmanager
    async def broken(server: Server) -> AsyncIterator[None]:
        if server.name == "broken":
            raise RuntimeError("no database")
        yield

    app = Server("broken", lifespan=broken).http_app()
    async with http_client(app) as client:
        message = modern_message("tools/list")
        response, _ = await post(client, message, modern_headers(message))
    assert response.status_code == 500
    sent: list[Any] = []

    async def send(message: Any) -> None:
        sent.append(message)

    async def receive() -> Any:
        return {"type": "websocket.connect"}

    await app({"type": "websocket"}, receive, send)
    assert sent == [{"type": "websocket.close", "code": 1000}]


async def test_get_and_delete_need_a_valid_session_and_a_stream_client() -> None:
    async with http_client(make_server().http_app()) as client:
        session = await initialize(client)
        sse = {"accept": "text/event-stream"}
        assert (await client.get("/mcp", headers={"accept": "application/json"})).status_code == 406
        assert (await client.get("/mcp", headers=sse)).status_code == 400
        assert (await client.get("/mcp", headers={**sse, "mcp-session-id": session + "x"})).status_code == 404
        assert (await client.delete("/mcp")).status_code == 400


async def test_a_modern_only_app_refuses_sessions() -> None:
    async with http_client(make_server().http_app(legacy=False)) as client:
        init = {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {"protocolVersion": wire.LATEST, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
        }
        base = {"accept": ACCEPT, "content-type": "application/json"}
        response, [reply] = await post(client, init, base, wire.LATEST)
        assert (response.status_code, reply) == (404, wire.error(0, -32601))
        listing = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
        response, [reply] = await post(client, listing, base, wire.LATEST)
        assert (response.status_code, reply) == (400, wire.error(1, -32602))


async def test_a_repeated_routing_header_or_a_bad_base64_name_is_a_header_mismatch() -> None:
    async with http_client(make_server().http_app()) as client:
        message = modern_message("tools/call", {"name": "add", "arguments": {"a": 1, "b": 1}})
        headers = [*modern_headers(message).items(), ("mcp-method", "tools/call")]
        response = await client.post("/mcp", content=json.dumps(message), headers=headers)
        assert (response.status_code, response.json()["error"]["code"]) == (400, -32020)
        bad = {**modern_headers(message), "mcp-name": "=?base64?SGVs!!!bG8=?="}
        response, [reply] = await post(client, message, bad)
        assert (response.status_code, reply) == (400, wire.error(1, -32020))


async def test_a_session_at_its_limit_of_calls_in_flight_refuses_more() -> None:
    waiter = Wait()
    server = Server("busy", tools=[waiter.tool()], max_concurrent_requests=1)
    async with http_client(server.http_app()) as client:
        headers = legacy_headers(await initialize(client))
        call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "wait"}}
        async with anyio.create_task_group() as tg:
            tg.start_soon(post, client, call, headers, wire.LATEST)
            await waiter.started.wait()
            _, [reply] = await post(client, {**call, "id": 2}, headers, wire.LATEST)
            waiter.release.set()
    assert reply == wire.error(2, -32603)


def region_server() -> Server:
    server = Server("regions")

    @server.tool
    def weather(
        region: Annotated[str, Field(json_schema_extra={"x-mcp-header": "Region"})],
        days: Annotated[int | None, Field(json_schema_extra={"x-mcp-header": "Days"})] = None,
    ) -> str:
        """The weather of a region."""
        return f"{region}: {days}"

    return server


@pytest.mark.parametrize(
    ("arguments", "sent", "status"),
    [
        ({"region": "eu-west"}, {"mcp-param-region": "eu-west"}, 200),
        ({"region": "Zürich"}, {"mcp-param-region": "=?base64?WsO8cmljaA==?="}, 200),
        ({"region": "eu", "days": 3}, {"mcp-param-region": "eu", "mcp-param-days": "3.0"}, 200),
        ({"region": "eu"}, {}, 400),  # the body has it: the header is required
        ({"region": "eu"}, {"mcp-param-region": "us"}, 400),
        ({"region": "eu"}, {"mcp-param-region": "=?base64?SGVsbG8?="}, 400),  # bad padding
        ({"region": "eu", "days": 3}, {"mcp-param-region": "eu", "mcp-param-days": "4"}, 400),
    ],
)
async def test_parameters_marked_x_mcp_header_must_match_their_mcp_param_headers(
    arguments: dict[str, Any], sent: dict[str, str], status: int
) -> None:
    async with http_client(region_server().http_app()) as client:
        message = modern_message("tools/call", {"name": "weather", "arguments": arguments}, request_id=5)
        response, [reply] = await post(client, message, {**modern_headers(message), **sent})
    assert response.status_code == status
    if status == 400:
        assert reply == wire.error(5, -32020)


async def test_client_http_sends_the_mcp_param_headers_a_tool_declares() -> None:
    seen: list[dict[bytes, bytes]] = []
    app = region_server().http_app()

    async def recording(scope: Any, receive: Any, send: Any) -> None:
        seen.append(dict(scope["headers"]))
        await app(scope, receive, send)

    async with http_client(recording) as http, Client.http(URL, http_client=http) as client:
        await client.list_tools()
        assert (await client.call_tool("weather", {"region": "Zürich", "days": 2})).text == "Zürich: 2"
    assert seen[-1][b"mcp-param-region"] == b"=?base64?WsO8cmljaA==?="
    assert seen[-1][b"mcp-param-days"] == b"2"


def test_a_slow_discover_over_http_is_waited_for_not_taken_for_an_older_server() -> None:
    """Over stdio an older server may stay silent about `server/discover` (10 s, then the handshake); over HTTP
    every request is answered, so a busy server's slow answer still gives 2026-07-28. Trio's virtual clock lets
    a minute pass at once."""
    import trio
    import trio.testing

    app = make_server().http_app()

    async def slow_discover(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            headers = dict(scope["headers"])
            if headers.get(b"mcp-method") == b"server/discover":
                await trio.sleep(60)
        await app(scope, receive, send)

    async def main() -> str | None:
        async with (
            httpx.AsyncClient(transport=StreamingASGITransport(slow_discover), base_url="http://127.0.0.1:8000") as h,
            Client.http(URL, http_client=h) as client,
        ):
            return client.protocol_version

    assert trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0)) == "2026-07-28"
