"""The 2026-07-28 era on the wire (no handshake: every request carries `_meta`), over memory and stdio.

Every message the server sends is validated against the official 2026-07-28 schema (see `wire.py`).
"""

from __future__ import annotations

from typing import Any

import pytest
import wire
from wire import CAPABILITIES_KEY, CLIENT_INFO_KEY, MODERN, SERVER_INFO_KEY, SUBSCRIPTION_KEY, VERSION_KEY, error, meta

from toolkit import Server, tool

pytestmark = pytest.mark.anyio

SERVER_INFO = {"name": "protocol-demo", "version": "1.2.3", "title": "Protocol demo"}
RESULT_META = {SERVER_INFO_KEY: SERVER_INFO}


def response(request_id: Any, result: dict[str, Any]) -> dict[str, Any]:
    """A 2026-07-28 response: every result carries `resultType` and the server's identity."""
    return {"jsonrpc": "2.0", "id": request_id, "result": {**result, "resultType": "complete", "_meta": RESULT_META}}


def text_result(text: str, *, is_error: bool = False) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "isError": is_error}


def request(request_id: Any, method: str, params: dict[str, Any] | None = None, **envelope: Any) -> dict[str, Any]:
    """A 2026-07-28 request: `params._meta` names the revision and the client's capabilities."""
    body = dict(params or {})
    body["_meta"] = {**meta(**envelope), **body.get("_meta", {})}
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": body}


def call(request_id: Any, name: str, arguments: dict[str, Any] | None = None, **envelope: Any) -> dict[str, Any]:
    params: dict[str, Any] = {"name": name}
    if arguments is not None:
        params["arguments"] = arguments
    return request(request_id, "tools/call", params, **envelope)


async def ask(peer: wire.Peer, message: dict[str, Any]) -> Any:
    await peer.send(message)
    return await peer.receive()


# -- server/discover and the per-request envelope ---------------------------------------------------------


async def test_server_discover_describes_the_server_without_a_handshake(connect: wire.Connect) -> None:
    async with connect() as peer:
        discovered = await ask(peer, request(1, "server/discover"))

    assert discovered == response(
        1,
        {
            "supportedVersions": [MODERN],
            "capabilities": {"tools": {"listChanged": True}, "logging": {}},
            "instructions": "Call echo to check the connection.",
            "ttlMs": 0,
            "cacheScope": "public",
        },
    )


async def test_discover_and_tools_list_carry_the_servers_caching_hints() -> None:
    server = Server("cached", version="2", ttl_ms=60_000, cache_scope="private")
    async with wire.memory(server) as peer:
        discovered = await ask(peer, request(1, "server/discover"))
        listed = await ask(peer, request(2, "tools/list"))

    info = {SERVER_INFO_KEY: {"name": "cached", "version": "2"}}
    assert discovered["result"] == {
        "supportedVersions": [MODERN],
        "capabilities": {"tools": {"listChanged": True}, "logging": {}},
        "ttlMs": 60_000,
        "cacheScope": "private",
        "resultType": "complete",
        "_meta": info,
    }
    assert listed["result"] == {
        "tools": [],
        "ttlMs": 60_000,
        "cacheScope": "private",
        "resultType": "complete",
        "_meta": info,
    }


async def test_every_request_is_served_on_its_own_without_initialize(connect: wire.Connect) -> None:
    async with connect() as peer:
        called = await ask(peer, call("c", "echo", {"text": "hi"}))
        who = await ask(peer, call(7, "whoami"))

    assert called == response("c", text_result("hi"))
    identity = {"client": "wire", "protocolVersion": MODERN, "requestId": "7"}
    assert who == response(
        7,
        {
            "content": [{"type": "text", "text": '{"client":"wire","protocolVersion":"2026-07-28","requestId":"7"}'}],
            "structuredContent": identity,
            "isError": False,
        },
    )


@pytest.mark.parametrize(
    "envelope",
    [
        pytest.param({VERSION_KEY: MODERN}, id="capabilities-missing"),
        pytest.param({VERSION_KEY: MODERN, CAPABILITIES_KEY: "none"}, id="capabilities-not-an-object"),
        pytest.param({CAPABILITIES_KEY: {}}, id="version-missing"),
        pytest.param({VERSION_KEY: 20260728, CAPABILITIES_KEY: {}}, id="version-not-a-string"),
        pytest.param({VERSION_KEY: "2099-01-01"}, id="capabilities-missing-and-version-unsupported"),
        pytest.param(
            {VERSION_KEY: MODERN, CAPABILITIES_KEY: {}, "io.modelcontextprotocol/logLevel": "loud"}, id="log-level"
        ),
    ],
)
async def test_a_malformed_envelope_is_invalid_params(connect: wire.Connect, envelope: dict[str, Any]) -> None:
    async with connect() as peer:
        await peer.send({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": envelope}})
        reply = await peer.receive()

    assert reply == error(1, -32602)


@pytest.mark.parametrize("requested", ["2099-01-01", "2025-11-25", "2024-11-05"])
async def test_an_unsupported_version_is_refused_naming_the_supported_ones(
    connect: wire.Connect, requested: str
) -> None:
    async with connect() as peer:
        listed = await ask(peer, request(1, "tools/list", {"_meta": {VERSION_KEY: requested}}))
        discovered = await ask(peer, request(2, "server/discover", {"_meta": {VERSION_KEY: requested}}))

    data = {"supported": [MODERN], "requested": requested}
    assert (listed, discovered) == (error(1, -32022, data), error(2, -32022, data))


@pytest.mark.parametrize("method", ["ping", "logging/setLevel", "resources/list", "tools/frobnicate"])
async def test_methods_2026_07_28_removed_or_never_had_are_method_not_found(connect: wire.Connect, method: str) -> None:
    async with connect() as peer:
        reply = await ask(peer, request(1, method, {"level": "debug"}))

    assert reply == error(1, -32601)


@pytest.mark.parametrize(
    ("params", "reason"),
    [
        ({"arguments": {"text": "hi"}}, "name-missing"),
        ({"name": "nope"}, "unknown-tool"),
        ({"name": "echo", "arguments": [1]}, "arguments-not-an-object"),
    ],
)
async def test_malformed_tool_calls_are_invalid_params(
    connect: wire.Connect, params: dict[str, Any], reason: str
) -> None:
    async with connect() as peer:
        reply = await ask(peer, request(reason, "tools/call", params))

    assert reply == error(reason, -32602)


async def test_tool_failures_and_bad_arguments_are_error_results(connect: wire.Connect) -> None:
    async with connect() as peer:
        bad = await ask(peer, call(1, "add", {"a": "x", "b": 1}))
        failed = await ask(peer, call(2, "fail"))

    assert bad == response(
        1,
        text_result(
            "Invalid arguments for tool 'add':\n"
            '- a: Input should be a valid integer, unable to parse string as an integer (got "x")',
            is_error=True,
        ),
    )
    assert failed == response(2, text_result("the tool failed on purpose", is_error=True))


# -- tools/list -------------------------------------------------------------------------------------------


async def test_tools_list_sends_every_field_and_the_raw_output_schema(connect: wire.Connect) -> None:
    async with connect() as peer:
        listed = await ask(peer, request(1, "tools/list"))

    add = next(t for t in listed["result"]["tools"] if t["name"] == "add")
    assert add == {
        "name": "add",
        "title": "Add",
        "description": "Add two integers.",
        "inputSchema": {
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "required": ["a", "b"],
            "additionalProperties": False,
        },
        "outputSchema": {"type": "integer"},
        "annotations": {"title": "Add", "readOnlyHint": True},
        "icons": [{"src": "https://example.com/add.png", "mimeType": "image/png", "sizes": ["48x48"]}],
    }


async def test_tools_list_pages_are_deterministic_and_each_carries_caching_hints(connect: wire.Connect) -> None:
    async with connect(page_size=4) as peer:
        pages = [(await ask(peer, request(0, "tools/list")))["result"]]
        while "nextCursor" in pages[-1]:
            pages.append(
                (await ask(peer, request(len(pages), "tools/list", {"cursor": pages[-1]["nextCursor"]})))["result"]
            )
        again = await ask(peer, request("again", "tools/list", {"cursor": pages[0]["nextCursor"]}))
        invalid = await ask(peer, request("bad", "tools/list", {"cursor": "garbage"}))

    assert [len(page["tools"]) for page in pages] == [4, 4, 4, 4, 1]
    assert all((page["ttlMs"], page["cacheScope"], page["resultType"]) == (0, "public", "complete") for page in pages)
    assert again["result"] == pages[1]
    assert invalid == error("bad", -32602)


# -- structured output: one tool, both eras ----------------------------------------------------------------


async def test_a_non_object_result_is_unwrapped_for_2026_07_28_and_wrapped_for_the_handshake(
    connect: wire.Connect,
) -> None:
    async with connect() as peer:
        modern = await ask(peer, call(1, "add", {"a": 2, "b": 3}))
        await peer.initialize()
        handshake = await peer.call("add", {"a": 2, "b": 3})

    content = [{"type": "text", "text": "5"}]
    assert modern == response(1, {"content": content, "structuredContent": 5, "isError": False})
    assert handshake == {
        "jsonrpc": "2.0",
        "id": 3,
        "result": {"content": content, "structuredContent": {"result": 5}, "isError": False},
    }


async def test_one_connection_serves_both_eras_at_once(connect: wire.Connect) -> None:
    async with connect() as peer:
        await peer.initialize("2024-11-05")
        old = await peer.call("media")
        new = await ask(peer, call("new", "media"))

    assert [block["type"] for block in old["result"]["content"]] == ["text", "image", "text"]
    assert [block["type"] for block in new["result"]["content"]] == ["audio", "image", "resource_link"]


# -- logging, progress, cancellation ----------------------------------------------------------------------


def log(level: str) -> dict[str, Any]:
    params = {"level": level, "data": f"a {level} message", "logger": "demo"}
    return {"jsonrpc": "2.0", "method": "notifications/message", "params": params}


async def test_log_messages_are_sent_only_for_a_request_that_names_a_level(connect: wire.Connect) -> None:
    async with connect() as peer:
        silent = await ask(peer, call(1, "chatter"))
        await peer.send(call(2, "chatter", log_level="error"))
        errors = await peer.receive_many(5)
        again_silent = await ask(peer, call(3, "chatter"))

    assert silent == response(1, text_result("logged"))
    levels = ["error", "critical", "alert", "emergency"]
    assert errors == [*map(log, levels), response(2, text_result("logged"))]
    assert again_silent == response(3, text_result("logged"))


async def test_progress_is_sent_only_for_a_request_with_a_token(connect: wire.Connect) -> None:
    async with connect() as peer:
        await peer.send(call(1, "count", {"steps": 2}, progress="tok"))
        with_token = await peer.receive_many(3)
        without = await ask(peer, call(2, "count", {"steps": 2}))

    def note(step: int) -> dict[str, Any]:
        params = {"progressToken": "tok", "progress": step, "total": 2, "message": f"step {step}"}
        return {"jsonrpc": "2.0", "method": "notifications/progress", "params": params}

    # `count` returns an int: 2026-07-28 sends it as structuredContent too (SEP-2106)
    done = {"content": [{"type": "text", "text": "2"}], "structuredContent": 2, "isError": False}
    assert with_token == [note(1), note(2), response(1, done)]
    assert without == response(2, done)


async def test_a_cancelled_call_is_stopped_and_nothing_more_is_sent_for_it(connect: wire.Connect) -> None:
    async with connect() as peer:
        await peer.send(call("slow", "block", {"key": "m1"}, progress=5))
        started = await peer.receive()
        await peer.notify("notifications/cancelled", {"requestId": "slow", "_meta": meta()})
        probe = await ask(peer, request("probe", "server/discover"))
        record = await ask(peer, call("record", "cancellations"))
        await peer.close_input()
        rest = await peer.rest()

    assert started == {
        "jsonrpc": "2.0",
        "method": "notifications/progress",
        "params": {"progressToken": 5, "progress": 1, "message": "started"},
    }
    assert probe["id"] == "probe"
    assert record == response("record", text_result("m1"))
    assert rest == []


# -- subscriptions/listen ---------------------------------------------------------------------------------


def listen(request_id: Any, **wanted: Any) -> dict[str, Any]:
    return request(request_id, "subscriptions/listen", {"notifications": wanted})


def acknowledged(subscription: Any, agreed: dict[str, Any]) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "method": "notifications/subscriptions/acknowledged",
        "params": {"notifications": agreed, "_meta": {SUBSCRIPTION_KEY: subscription}},
    }


def changed(subscription: Any) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "method": "notifications/tools/list_changed",
        "params": {"_meta": {SUBSCRIPTION_KEY: subscription}},
    }


@tool
def late(x: int) -> int:
    """Added while a client listens."""
    return x


async def test_a_listen_stream_is_acknowledged_then_carries_tagged_list_changes_until_cancelled() -> None:
    server = Server("listening", version="1")
    async with wire.memory(server) as peer, wire.memory(server) as handshake_peer:
        await handshake_peer.initialize()
        ack = await ask(peer, listen("sub-1", toolsListChanged=True, promptsListChanged=True))
        server.add_tool(late)
        added = await peer.receive()
        old_style = await handshake_peer.receive()
        server.remove_tool("late")
        removed = await peer.receive()
        await handshake_peer.receive()
        await peer.notify("notifications/cancelled", {"requestId": "sub-1"})
        probe = await ask(peer, request("probe", "tools/list"))
        server.add_tool(late)  # after the stream ended: nothing more for this peer
        await handshake_peer.receive()
        await peer.close_input()
        rest = await peer.rest()

    assert ack == acknowledged("sub-1", {"toolsListChanged": True})
    assert (added, removed) == (changed("sub-1"), changed("sub-1"))
    assert old_style == {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
    assert probe["result"]["tools"] == []
    assert rest == []


async def test_initialize_is_always_the_handshake_even_with_the_2026_07_28_fields(connect: wire.Connect) -> None:
    async with connect() as peer:
        params = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "x", "version": "1"}}
        reply = await ask(peer, request(1, "initialize", params))

    assert reply["result"]["protocolVersion"] == "2025-06-18"


async def test_a_listen_stream_without_tool_changes_requested_carries_none(connect: wire.Connect) -> None:
    async with connect() as peer:
        ack = await ask(peer, listen(1, resourcesListChanged=True))
        grown = await ask(peer, call(2, "grow"))
        await peer.notify("notifications/cancelled", {"requestId": 1})
        probe = await ask(peer, call(3, "shrink"))

    assert ack == acknowledged(1, {})
    assert grown == response(2, text_result("grown"))
    assert probe == response(3, text_result("shrunk"))


async def test_a_tool_that_changes_the_list_notifies_the_listen_stream(connect: wire.Connect) -> None:
    async with connect() as peer:
        ack = await ask(peer, listen(7, toolsListChanged=True))
        await peer.send(call(8, "grow"))
        both = await peer.receive_many(2)
        await peer.notify("notifications/cancelled", {"requestId": 7})
        shrunk = await ask(peer, call(9, "shrink"))

    assert ack == acknowledged(7, {"toolsListChanged": True})
    assert sorted(both, key=lambda m: "id" in m) == [changed(7), response(8, text_result("grown"))]
    assert shrunk == response(9, text_result("shrunk"))


async def test_listen_needs_a_notifications_object(connect: wire.Connect) -> None:
    async with connect() as peer:
        reply = await ask(peer, request(1, "subscriptions/listen"))

    assert reply == error(1, -32602)


async def test_client_info_is_optional(connect: wire.Connect) -> None:
    async with connect() as peer:
        envelope = {VERSION_KEY: MODERN, CAPABILITIES_KEY: {}}
        await peer.send(
            {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "whoami", "_meta": envelope}}
        )
        who = await peer.receive()
        bad_info = {**envelope, CLIENT_INFO_KEY: {"name": 5}}
        await peer.send(
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": "echo", "arguments": {"text": "x"}, "_meta": bad_info},
            }
        )
        echoed = await peer.receive()

    assert who["result"]["structuredContent"] == {"client": "?", "protocolVersion": MODERN, "requestId": "1"}
    assert echoed == response(2, text_result("x"))
