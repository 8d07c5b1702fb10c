"""The handshake era (2024-11-05 .. 2025-11-25) on the wire, over memory and stdio, on asyncio and trio.

Every message the server sends is validated against the official schema of the negotiated revision (see
`wire.py`); the tests compare whole messages.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest
import wire
from wire import TEXT, error

from toolkit import Server, tool

pytestmark = pytest.mark.anyio

CAPABILITIES = {"tools": {"listChanged": True}, "logging": {}}
INSTRUCTIONS = "Call echo to check the connection."


def text_result(text: str, *, is_error: bool = False) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "isError": is_error}


def response(request_id: Any, result: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


def call(request_id: Any, name: str, arguments: dict[str, Any] | None = None, **meta: Any) -> dict[str, Any]:
    """A handshake-era `tools/call` request."""
    params: dict[str, Any] = {"name": name}
    if arguments is not None:
        params["arguments"] = arguments
    if meta:
        params["_meta"] = meta
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


# -- initialize ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("requested", "answered", "server_info"),
    [
        ("2025-11-25", "2025-11-25", {"name": "protocol-demo", "version": "1.2.3", "title": "Protocol demo"}),
        ("2025-06-18", "2025-06-18", {"name": "protocol-demo", "version": "1.2.3", "title": "Protocol demo"}),
        ("2025-03-26", "2025-03-26", {"name": "protocol-demo", "version": "1.2.3"}),
        ("2024-11-05", "2024-11-05", {"name": "protocol-demo", "version": "1.2.3"}),
        ("1999-01-01", "2025-11-25", {"name": "protocol-demo", "version": "1.2.3", "title": "Protocol demo"}),
        ("2026-07-28", "2025-11-25", {"name": "protocol-demo", "version": "1.2.3", "title": "Protocol demo"}),
    ],
)
async def test_initialize_echoes_a_supported_revision_and_otherwise_answers_the_newest(
    connect: wire.Connect, requested: str, answered: str, server_info: dict[str, Any]
) -> None:
    async with connect() as peer:
        result = await peer.initialize(requested)

    assert result == {
        "protocolVersion": answered,
        "capabilities": CAPABILITIES,
        "serverInfo": server_info,
        "instructions": INSTRUCTIONS,
    }


async def test_instructions_are_left_out_when_the_server_has_none() -> None:
    async with wire.memory(Server("bare", version="0.1")) as peer:
        result = await peer.initialize()

    assert result == {
        "protocolVersion": "2025-11-25",
        "capabilities": CAPABILITIES,
        "serverInfo": {"name": "bare", "version": "0.1"},
    }


async def test_ping_is_answered_before_and_after_initialize(connect: wire.Connect) -> None:
    async with connect() as peer:
        before = await peer.request("ping", id=1)
        await peer.initialize()
        after = await peer.request("ping", id=3)

    assert (before, after) == (response(1, {}), response(3, {}))


async def test_a_second_initialize_is_an_invalid_request(connect: wire.Connect) -> None:
    async with connect() as peer:
        await peer.initialize()
        again = await peer.request(
            "initialize",
            {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "x", "version": "1"}},
        )

    assert again == error(2, -32600)


# -- the error table -------------------------------------------------------------------------------------

PARSE = [
    pytest.param("{not json", id="not-json"),
    pytest.param('{"jsonrpc": "2.0", "id": 1, "method": "ping"', id="truncated"),
    pytest.param("[1, 2", id="truncated-array"),
]


@pytest.mark.parametrize("text", PARSE)
async def test_text_that_is_not_json_is_a_parse_error_with_a_null_id(connect: wire.Connect, text: str) -> None:
    async with connect() as peer:
        await peer.initialize()
        await peer.send_text(text)
        reply = await peer.receive()
        still = await peer.request("ping", id="after")

    assert (reply, still) == (error(None, -32700), response("after", {}))


INVALID: list[Any] = [
    pytest.param({"jsonrpc": "1.0", "id": 7, "method": "ping"}, 7, id="jsonrpc-1.0"),
    pytest.param({"id": 7, "method": "ping"}, 7, id="jsonrpc-missing"),
    pytest.param({"jsonrpc": 2.0, "id": 7, "method": "ping"}, 7, id="jsonrpc-number"),
    pytest.param({"jsonrpc": "2.0", "id": None, "method": "ping"}, None, id="id-null"),
    pytest.param({"jsonrpc": "2.0", "id": 1.5, "method": "ping"}, None, id="id-float"),
    pytest.param({"jsonrpc": "2.0", "id": True, "method": "ping"}, None, id="id-bool"),
    pytest.param({"jsonrpc": "2.0", "id": {"a": 1}, "method": "ping"}, None, id="id-object"),
    pytest.param({"jsonrpc": "2.0", "id": [1], "method": "ping"}, None, id="id-array"),
    pytest.param({"jsonrpc": "2.0", "id": 7}, 7, id="method-missing"),
    pytest.param({"jsonrpc": "2.0", "id": 7, "method": 42}, 7, id="method-not-a-string"),
    pytest.param(42, None, id="a-number"),
    pytest.param("ping", None, id="a-string"),
    pytest.param(None, None, id="null"),
    pytest.param([], None, id="empty-array"),
    pytest.param([{"jsonrpc": "2.0", "id": 7, "method": "ping"}], None, id="batch-outside-2025-03-26"),
]


@pytest.mark.parametrize(("message", "reply_id"), INVALID)
async def test_a_message_that_is_not_a_valid_request_is_an_invalid_request(
    connect: wire.Connect, message: Any, reply_id: Any
) -> None:
    async with connect() as peer:
        await peer.initialize()
        await peer.send(message)
        reply = await peer.receive()
        still = await peer.request("ping", id="after")

    assert (reply, still) == (error(reply_id, -32600), response("after", {}))


async def test_a_request_before_initialize_is_refused_as_invalid_params(connect: wire.Connect) -> None:
    # 2026-07-28 (basic/index): a request without the per-request _meta fields is malformed (-32602); a dual-era
    # server cannot tell it from a handshake-era request sent too early, and the answer is right for both.
    async with connect() as peer:
        listed = await peer.request("tools/list", id=1)
        called = await peer.request("tools/call", {"name": "echo", "arguments": {"text": "hi"}}, id=2)
        await peer.initialize()
        after = await peer.request("tools/list", id=4)

    assert (listed, called) == (error(1, -32602), error(2, -32602))
    assert [tool["name"] for tool in after["result"]["tools"]][:2] == ["echo", "add"]


async def test_an_unknown_method_is_method_not_found(connect: wire.Connect) -> None:
    async with connect() as peer:
        await peer.initialize()
        unknown = await peer.request("tools/frobnicate", {}, id=2)
        prompts = await peer.request("prompts/list", id=3)
        discover = await peer.request("server/discover", id=4)

    # server/discover exists, but only as a 2026-07-28 request: without its _meta fields it is malformed
    assert (unknown, prompts, discover) == (error(2, -32601), error(3, -32601), error(4, -32602))


MALFORMED: list[Any] = [
    pytest.param("tools/call", [1, 2], id="params-array"),
    pytest.param("tools/call", "echo", id="params-string"),
    pytest.param("tools/list", 5, id="list-params-number"),
    pytest.param("tools/call", {"arguments": {"text": "hi"}}, id="name-missing"),
    pytest.param("tools/call", {"name": 5}, id="name-not-a-string"),
    pytest.param("tools/call", {"name": "echo", "arguments": ["hi"]}, id="arguments-array"),
    pytest.param("tools/call", {"name": "echo", "arguments": "hi"}, id="arguments-string"),
    pytest.param("tools/call", {"name": "nope", "arguments": {}}, id="unknown-tool"),
    pytest.param("tools/list", {"cursor": "not-a-cursor"}, id="invalid-cursor"),
    pytest.param("tools/list", {"cursor": 12}, id="cursor-not-a-string"),
    pytest.param("logging/setLevel", {"level": "verbose"}, id="unknown-log-level"),
    pytest.param("logging/setLevel", {}, id="log-level-missing"),
    pytest.param("initialize", {"capabilities": {}}, id="initialize-without-version"),
]


@pytest.mark.parametrize(("method", "params"), MALFORMED)
async def test_malformed_params_are_invalid_params(connect: wire.Connect, method: str, params: Any) -> None:
    async with connect() as peer:
        await peer.initialize()
        await peer.send({"jsonrpc": "2.0", "id": "bad", "method": method, "params": params})
        reply = await peer.receive()

    assert reply == error("bad", -32602)


async def test_invalid_arguments_are_a_tool_error_result_the_model_can_read(connect: wire.Connect) -> None:
    async with connect() as peer:
        await peer.initialize()
        wrong_type = await peer.call("add", {"a": 1, "b": "two"})
        missing = await peer.call("add", {"a": 1})
        no_arguments = await peer.call("echo")

    assert wrong_type == response(
        2,
        text_result(
            "Invalid arguments for tool 'add':\n"
            '- b: Input should be a valid integer, unable to parse string as an integer (got "two")',
            is_error=True,
        ),
    )
    assert missing == response(
        3, text_result("Invalid arguments for tool 'add':\n- b: missing required argument", is_error=True)
    )
    assert no_arguments == response(
        4, text_result("Invalid arguments for tool 'echo':\n- text: missing required argument", is_error=True)
    )


async def test_a_failing_tool_is_an_error_result_and_hides_unexpected_exceptions(connect: wire.Connect) -> None:
    async with connect() as peer:
        await peer.initialize()
        failed = await peer.call("fail")
        crashed = await peer.call("crash")

    assert failed == response(2, text_result("the tool failed on purpose", is_error=True))
    assert crashed == response(3, {"content": [{"type": "text", "text": TEXT}], "isError": True})
    assert "secret" not in crashed["result"]["content"][0]["text"]


async def test_notifications_get_no_response_even_unknown_or_invalid_ones(connect: wire.Connect) -> None:
    async with connect() as peer:
        await peer.initialize()
        await peer.notify("notifications/whatever", {"x": 1})
        await peer.notify("notifications/cancelled", {"requestId": 999})
        await peer.notify("notifications/cancelled", {"requestId": None})
        await peer.notify("notifications/roots/list_changed")
        await peer.send({"jsonrpc": "2.0", "method": "tools/list", "params": [1]})
        pong = await peer.request("ping", id="probe")

    assert pong == response("probe", {})


# -- tools/list and tools/call, shaped for each revision ---------------------------------------------------

ADD_INPUT = {
    "type": "object",
    "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
    "required": ["a", "b"],
    "additionalProperties": False,
}
ADD_OUTPUT = {
    "type": "object",
    "properties": {"result": {"type": "integer"}},
    "required": ["result"],
}
ICON = {"src": "https://example.com/add.png", "mimeType": "image/png", "sizes": ["48x48"]}


@pytest.mark.parametrize(
    ("version", "expected"),
    [
        (
            "2025-11-25",
            {
                "name": "add",
                "title": "Add",
                "description": "Add two integers.",
                "inputSchema": ADD_INPUT,
                "outputSchema": ADD_OUTPUT,
                "annotations": {"title": "Add", "readOnlyHint": True},
                "icons": [ICON],
            },
        ),
        (
            "2025-06-18",
            {
                "name": "add",
                "title": "Add",
                "description": "Add two integers.",
                "inputSchema": ADD_INPUT,
                "outputSchema": ADD_OUTPUT,
                "annotations": {"title": "Add", "readOnlyHint": True},
            },
        ),
        (
            "2025-03-26",
            {
                "name": "add",
                "description": "Add two integers.",
                "inputSchema": ADD_INPUT,
                "annotations": {"title": "Add", "readOnlyHint": True},
            },
        ),
        ("2024-11-05", {"name": "add", "description": "Add two integers.", "inputSchema": ADD_INPUT}),
    ],
)
async def test_a_tool_definition_carries_only_the_fields_of_the_negotiated_revision(
    connect: wire.Connect, version: str, expected: dict[str, Any]
) -> None:
    async with connect() as peer:
        await peer.initialize(version)
        listed = await peer.result("tools/list")

    add = next(t for t in listed["tools"] if t["name"] == "add")
    assert add == expected


@pytest.mark.parametrize(
    ("version", "structured"),
    [("2025-11-25", {"result": 5}), ("2025-06-18", {"result": 5}), ("2025-03-26", None), ("2024-11-05", None)],
)
async def test_structured_content_is_sent_wrapped_from_2025_06_18_and_left_out_before(
    connect: wire.Connect, version: str, structured: Any
) -> None:
    async with connect() as peer:
        await peer.initialize(version)
        called = await peer.call("add", {"a": 2, "b": 3})

    expected: dict[str, Any] = {"content": [{"type": "text", "text": "5"}], "isError": False}
    if structured is not None:
        expected["structuredContent"] = structured
    assert called == response(2, expected)


AUDIO = {"type": "audio", "data": "UklGRiQAAABXQVZFZm10IA==", "mimeType": "audio/wav"}
IMAGE = {"type": "image", "data": "iVBORw0KGgoAAAAAAAAAAA==", "mimeType": "image/png"}
LINK = {
    "type": "resource_link",
    "uri": "file:///notes.txt",
    "name": "notes",
    "title": "Notes",
    "description": "My notes",
}
LINK_AS_TEXT = {"type": "text", "text": "Resource: Notes <file:///notes.txt>\nMy notes"}
AUDIO_AS_TEXT = {"type": "text", "text": "[audio content (audio/wav) not supported by this protocol version]"}


@pytest.mark.parametrize(
    ("version", "content"),
    [
        ("2025-11-25", [AUDIO, IMAGE, LINK]),
        ("2025-06-18", [AUDIO, IMAGE, LINK]),
        ("2025-03-26", [AUDIO, IMAGE, LINK_AS_TEXT]),
        ("2024-11-05", [AUDIO_AS_TEXT, IMAGE, LINK_AS_TEXT]),
    ],
)
async def test_content_a_revision_lacks_is_described_in_text(
    connect: wire.Connect, version: str, content: list[dict[str, Any]]
) -> None:
    async with connect() as peer:
        await peer.initialize(version)
        called = await peer.call("media")

    assert called == response(2, {"content": content, "isError": False})


async def test_the_context_knows_the_request_id_revision_and_client(connect: wire.Connect) -> None:
    async with connect() as peer:
        await peer.initialize("2025-06-18")
        called = await peer.call("whoami")

    who = {"client": "wire", "protocolVersion": "2025-06-18", "requestId": "2"}
    assert called == response(
        2,
        {
            "content": [{"type": "text", "text": '{"client":"wire","protocolVersion":"2025-06-18","requestId":"2"}'}],
            "structuredContent": who,
            "isError": False,
        },
    )


# -- batches ----------------------------------------------------------------------------------------------


async def test_a_batch_is_answered_with_one_array_under_2025_03_26(connect: wire.Connect) -> None:
    async with connect() as peer:
        await peer.initialize("2025-03-26")
        await peer.send(
            [
                {"jsonrpc": "2.0", "id": "a", "method": "ping"},
                {"jsonrpc": "2.0", "method": "notifications/whatever"},
                call("b", "echo", {"text": "hi"}),
                {"jsonrpc": "2.0", "id": "c", "method": "nope"},
                7,
            ]
        )
        replies = await peer.receive()

    assert isinstance(replies, list)
    assert sorted(replies, key=lambda r: str(r["id"])) == [
        error(None, -32600),
        response("a", {}),
        response("b", text_result("hi")),
        error("c", -32601),
    ]


async def test_an_empty_batch_is_an_invalid_request_under_2025_03_26(connect: wire.Connect) -> None:
    async with connect() as peer:
        await peer.initialize("2025-03-26")
        await peer.send([])
        reply = await peer.receive()

    assert reply == error(None, -32600)


async def test_a_call_inside_a_batch_can_be_cancelled_and_the_batch_answers_without_it(connect: wire.Connect) -> None:
    async with connect() as peer:
        await peer.initialize("2025-03-26")
        await peer.send(
            [call("slow", "block", {"key": "in-batch"}, progressToken="t"), call("quick", "add", {"a": 1, "b": 2})]
        )
        started = await peer.receive()
        await peer.notify("notifications/cancelled", {"requestId": "slow"})
        replies = await peer.receive()
        record = await peer.call("cancellations")

    assert started["method"] == "notifications/progress"
    assert isinstance(replies, list)
    assert [reply["id"] for reply in replies] == ["quick"]
    assert record["result"] == text_result("in-batch")


@pytest.mark.parametrize("version", ["2025-11-25", "2025-06-18", "2024-11-05"])
async def test_a_batch_is_an_invalid_request_in_revisions_without_batches(connect: wire.Connect, version: str) -> None:
    async with connect() as peer:
        await peer.initialize(version)
        await peer.send([{"jsonrpc": "2.0", "id": "a", "method": "ping"}])
        reply = await peer.receive()
        still = await peer.request("ping", id="after")

    assert (reply, still) == (error(None, -32600), response("after", {}))


# -- pagination --------------------------------------------------------------------------------------------


async def test_tools_list_pages_follow_the_registration_order_through_opaque_cursors(connect: wire.Connect) -> None:
    async with connect(page_size=5) as peer:
        await peer.initialize()
        pages = [await peer.result("tools/list")]
        while "nextCursor" in pages[-1]:
            pages.append(await peer.result("tools/list", {"cursor": pages[-1]["nextCursor"]}))
        again = await peer.result("tools/list", {"cursor": pages[1].get("nextCursor")})

    names = [[tool["name"] for tool in page["tools"]] for page in pages]
    assert names == [wire.DEMO_TOOLS[i : i + 5] for i in range(0, len(wire.DEMO_TOOLS), 5)]
    cursors = [page["nextCursor"] for page in pages[:-1]]
    assert all(isinstance(c, str) and c for c in cursors)
    assert again == pages[2]


async def test_without_a_page_size_all_tools_come_in_one_page(connect: wire.Connect) -> None:
    async with connect() as peer:
        await peer.initialize()
        listed = await peer.result("tools/list")

    assert [tool["name"] for tool in listed["tools"]] == wire.DEMO_TOOLS
    assert "nextCursor" not in listed


# -- list_changed ----------------------------------------------------------------------------------------

LIST_CHANGED = {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}


@tool
def late(x: int) -> int:
    """Added after the clients connected."""
    return x


async def test_adding_and_removing_a_tool_notifies_every_initialized_connection() -> None:
    server = Server("shared", version="1")
    async with wire.memory(server) as first, wire.memory(server) as second, wire.memory(server) as silent:
        await first.initialize()
        await second.initialize("2024-11-05")
        await silent.request("ping", id="warm-up")  # connected, never initialized
        server.add_tool(late)
        added = [await first.receive(), await second.receive()]
        listed = await first.result("tools/list")
        server.remove_tool("late")
        removed = [await first.receive(), await second.receive()]
        quiet = await silent.request("ping", id="probe")

    assert added == [LIST_CHANGED, LIST_CHANGED]
    assert removed == [LIST_CHANGED, LIST_CHANGED]
    assert [t["name"] for t in listed["tools"]] == ["late"]
    assert quiet == response("probe", {})


def versions() -> tuple[Any, Any]:
    """Two tools named `greet` with the same definition and different bodies (a module as `toolkit dev` reloads it)."""

    @tool(name="greet")
    def before(who: str) -> str:
        """Greet someone."""
        return f"hello {who}"

    @tool(name="greet")
    def after(who: str) -> str:
        """Greet someone."""
        return f"hi {who}"

    return before, after


async def test_replacing_tools_with_the_same_definitions_swaps_them_without_a_notification() -> None:
    before, after = versions()
    server = Server("reloaded", tools=[before, late])
    async with wire.memory(server) as peer:
        await peer.initialize()
        await peer.request("ping", id="initialized")  # the server has read notifications/initialized by then
        changed = server.replace_tools([after, late])
        quiet = await peer.request("ping", id="probe")  # a notification would come first: it was sent first
        called = await peer.request("tools/call", {"name": "greet", "arguments": {"who": "ann"}}, id="new")

    assert changed is False
    assert quiet == response("probe", {})
    assert called == response("new", text_result("hi ann"))
    assert list(server.tools) == ["greet", "late"]


async def test_replacing_tools_notifies_once_when_what_clients_list_changed() -> None:
    before, _ = versions()

    @tool(name="greet")
    def louder(who: str, times: int = 1) -> str:
        """Greet someone, several times."""
        return f"hello {who}" * times

    server = Server("reloaded", tools=[before, late])
    async with wire.memory(server) as peer:
        await peer.initialize()
        await peer.request("ping", id="initialized")  # the server has read notifications/initialized by then
        changed = server.replace_tools([louder])  # one tool gone, one changed: still one notification
        notified = await peer.receive()
        quiet = await peer.request("ping", id="probe")
        listed = await peer.result("tools/list")

    assert changed is True
    assert notified == LIST_CHANGED
    assert quiet == response("probe", {})
    shown = [(t["name"], sorted(t["inputSchema"]["properties"])) for t in listed["tools"]]
    assert shown == [("greet", ["times", "who"])]


def test_replacing_tools_with_two_of_one_name_replaces_nothing() -> None:
    before, after = versions()
    server = Server("reloaded", tools=[late])
    with pytest.raises(ValueError, match="'greet' is already registered"):
        server.replace_tools([before, after])
    assert list(server.tools) == ["late"]


async def test_a_tool_that_changes_the_list_notifies_its_own_connection(connect: wire.Connect) -> None:
    async with connect() as peer:
        await peer.initialize()
        await peer.send(call(2, "grow"))
        messages = await peer.receive_many(2)
        listed = await peer.result("tools/list")
        await peer.send(call(4, "shrink"))
        after = await peer.receive_many(2)

    assert sorted(messages, key=lambda m: "id" in m) == [LIST_CHANGED, response(2, text_result("grown"))]
    assert [t["name"] for t in listed["tools"]] == [*wire.DEMO_TOOLS, "extra"]
    assert sorted(after, key=lambda m: "id" in m) == [LIST_CHANGED, response(4, text_result("shrunk"))]


# -- cancellation, progress, logging -------------------------------------------------------------------------


async def test_a_cancelled_call_is_stopped_and_never_answered(connect: wire.Connect) -> None:
    async with connect() as peer:
        await peer.initialize()
        await peer.send(call("slow", "block", {"key": "k1"}, progressToken="t"))
        started = await peer.receive()
        await peer.notify("notifications/cancelled", {"requestId": "slow", "reason": "changed my mind"})
        pong = await peer.request("ping", id="probe")
        record = await peer.call("cancellations")
        await peer.close_input()
        rest = await peer.rest()

    assert started == {
        "jsonrpc": "2.0",
        "method": "notifications/progress",
        "params": {"progressToken": "t", "progress": 1, "message": "started"},
    }
    assert pong == response("probe", {})
    assert record["result"] == text_result("k1")
    assert rest == []


async def test_progress_is_reported_in_increasing_steps_only_when_asked(connect: wire.Connect) -> None:
    async with connect() as peer:
        await peer.initialize()
        await peer.send(call(2, "count", {"steps": 3}, progressToken=99))
        with_token = await peer.receive_many(4)
        without_token = await peer.call("count", {"steps": 3})

    def note(step: int) -> dict[str, Any]:
        params = {"progressToken": 99, "progress": step, "total": 3, "message": f"step {step}"}
        return {"jsonrpc": "2.0", "method": "notifications/progress", "params": params}

    done = {"content": [{"type": "text", "text": "3"}], "isError": False}
    assert with_token == [note(1), note(2), note(3), response(2, done)]
    assert without_token == response(3, done)


def log(level: str) -> dict[str, Any]:
    params = {"level": level, "data": f"a {level} message", "logger": "demo"}
    return {"jsonrpc": "2.0", "method": "notifications/message", "params": params}


LEVELS = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]


async def test_log_messages_start_at_info_until_the_client_sets_a_level(connect: wire.Connect) -> None:
    async with connect() as peer:
        await peer.initialize()
        await peer.send(call(2, "chatter"))
        default = await peer.receive_many(8)
        set_level = await peer.request("logging/setLevel", {"level": "error"}, id=3)
        await peer.send(call(4, "chatter"))
        errors_only = await peer.receive_many(5)
        await peer.request("logging/setLevel", {"level": "debug"}, id=5)
        await peer.send(call(6, "chatter"))
        everything = await peer.receive_many(9)

    assert default == [*map(log, LEVELS[1:]), response(2, text_result("logged"))]
    assert set_level == response(3, {})
    assert errors_only == [*map(log, LEVELS[4:]), response(4, text_result("logged"))]
    assert everything == [*map(log, LEVELS), response(6, text_result("logged"))]


# -- concurrency --------------------------------------------------------------------------------------------


async def test_many_calls_run_at_once_and_each_answer_carries_its_request_id(connect: wire.Connect) -> None:
    count = 30
    async with connect() as peer:
        await peer.initialize()
        for i in range(count):
            await peer.send(call(f"w{i}", "wait", {"key": f"k{i}"}))
        order = []
        for i in reversed(range(count)):  # release them last first: answers come back out of request order
            await peer.send(call(f"o{i}", "open", {"key": f"k{i}"}))
            pair = await peer.receive_many(2)
            assert sorted(pair, key=lambda m: m["id"]) == [
                response(f"o{i}", text_result(f"k{i}")),
                response(f"w{i}", text_result(f"k{i}")),
            ]
            order.append(i)

    assert order == list(reversed(range(count)))


async def test_a_request_id_already_in_flight_is_refused(connect: wire.Connect) -> None:
    async with connect() as peer:
        await peer.initialize()
        await peer.send(call("same", "wait", {"key": "a"}))
        await peer.send(call("same", "wait", {"key": "a"}))
        refused = await peer.receive()
        opened = await peer.call("open", {"key": "a"})
        answered = await peer.receive()

    assert refused == error("same", -32600)
    assert opened == response(2, text_result("a"))
    assert answered == response("same", text_result("a"))


# -- limits ---------------------------------------------------------------------------------------------------


def gated_server(**options: Any) -> Server:
    """A server with one tool, `hold`, that never finishes on its own."""
    server = Server("limits", **options)

    @server.tool
    async def hold() -> str:
        """Wait forever."""
        await anyio.sleep_forever()
        return "never"  # pragma: no cover (never reached)

    return server


async def test_calls_beyond_the_concurrency_limit_are_refused_as_internal_errors() -> None:
    async with wire.memory(gated_server(max_concurrent_requests=2, shutdown_grace=0)) as peer:
        await peer.initialize()
        for request_id in ("a", "b", "c"):
            await peer.send(call(request_id, "hold"))
        refused = await peer.receive()
        pong = await peer.request("ping", id="still-answering")

    assert (refused, pong) == (error("c", -32603), response("still-answering", {}))


async def test_a_call_over_the_tool_timeout_is_cancelled_and_answered_with_an_error_result() -> None:
    async with wire.memory(gated_server(tool_timeout=0.1)) as peer:
        await peer.initialize()
        timed_out = await peer.call("hold")

    assert timed_out == response(2, text_result("tool 'hold' timed out after 0.1 s", is_error=True))
