"""Interop with the official `mcp` SDK (2.3), both ways, in both protocol eras, through real stdio subprocesses.

- The SDK's `Client` against a toolkit server (`tests/interop/toolkit_server.py`): in `mode="legacy"` (the
  `initialize` handshake, landing on 2025-11-25), in its default `mode="auto"` (probes `server/discover`,
  lands on 2026-07-28) and pinned to `"2026-07-28"` (no probe).
- `toolkit.Client.stdio` against an SDK `MCPServer` (`tests/interop/sdk_server.py`) with each `protocol=`.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import warnings
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import anyio
import jsonschema
import mcp
import pytest
import servers
from mcp.client.stdio import StdioServerParameters
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError
from mcp.shared.subscriptions import ToolsListChanged
from mcp_types import LOG_LEVEL_META_KEY, LoggingMessageNotificationParams, ToolListChangedNotification

import toolkit

if TYPE_CHECKING:
    from mcp_types import RequestParamsMeta

pytestmark = pytest.mark.anyio

HERE = Path(__file__).parent / "interop"
TOOLKIT_SERVER = [sys.executable, str(HERE / "toolkit_server.py")]
SDK_SERVER = [sys.executable, str(HERE / "sdk_server.py")]
# A generous bound for anything that involves starting a Python process; no test waits longer than this.
TIMEOUT = 30

LEGACY = "2025-11-25"
MODERN = "2026-07-28"
# SDK connect mode -> the revision it lands on against a toolkit server.
MODES = pytest.mark.parametrize(("mode", "version"), [("legacy", LEGACY), ("auto", MODERN)])
SERVER_INFO = {"io.modelcontextprotocol/serverInfo": {"name": "toolkit-interop", "version": "1.2.3"}}


@asynccontextmanager
async def sdk_client(mode: str, **options: Any) -> AsyncIterator[mcp.Client]:
    params = StdioServerParameters(command=TOOLKIT_SERVER[0], args=TOOLKIT_SERVER[1:])
    async with mcp.Client(params, mode=mode, **options) as client:
        yield client


def dump(result: Any) -> dict[str, Any]:
    """A result as the SDK parsed it, back in wire form (the SDK fills `resultType` in for legacy results too)."""
    data: dict[str, Any] = result.model_dump(mode="json", by_alias=True, exclude_none=True)
    return data


def modern_meta(version: str) -> dict[str, Any]:
    """The result `_meta` a toolkit server adds for `version` (server info, 2026-07-28 only)."""
    return {"_meta": SERVER_INFO} if version == MODERN else {}


# -- the SDK client against a toolkit server -----------------------------------------------------------


@MODES
async def test_sdk_client_connects_and_lists_tools_whose_schemas_are_valid_2020_12(mode: str, version: str) -> None:
    with anyio.fail_after(TIMEOUT):
        async with sdk_client(mode) as client:
            assert client.protocol_version == version
            assert client.server_info is not None
            assert (client.server_info.name, client.server_info.version) == ("toolkit-interop", "1.2.3")
            assert client.instructions == "Tools for interop tests."
            assert client.server_capabilities.tools is not None
            listed = await client.list_tools()

    tools = {tool.name: tool.model_dump(mode="json", by_alias=True, exclude_none=True) for tool in listed.tools}
    assert list(tools) == [
        "echo",
        "add",
        "point",
        "pixel",
        "media",
        "describe",
        "fail",
        "count",
        "chatty",
        "block",
        "was_cancelled",
        "grow",
    ]
    for tool in tools.values():
        jsonschema.Draft202012Validator.check_schema(tool["inputSchema"])
        if "outputSchema" in tool:
            jsonschema.Draft202012Validator.check_schema(tool["outputSchema"])
    # A non-object result is wrapped in {"result": ...} for handshake clients, and raw for 2026-07-28.
    wrapped = {"type": "object", "properties": {"result": {"type": "integer"}}, "required": ["result"]}
    assert tools["add"] == {
        "name": "add",
        "description": "Add two integers (a structured, non-object result).",
        "inputSchema": {
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "required": ["a", "b"],
            "additionalProperties": False,
        },
        "outputSchema": {"type": "integer"} if version == MODERN else wrapped,
    }
    # Title, annotations, icons and _meta survive the trip through the SDK's models (2025-11-25 has them all).
    assert tools["describe"] == {
        "name": "describe",
        "title": "Describe a thing",
        "description": "Describe `thing` (a tool with a title, annotations, an icon and _meta).",
        "inputSchema": {
            "type": "object",
            "properties": {"thing": {"type": "string"}},
            "required": ["thing"],
            "additionalProperties": False,
        },
        "icons": [{"src": "data:image/png;base64,iVBORw0KGgo=", "mimeType": "image/png", "sizes": ["16x16"]}],
        "annotations": {"title": "Describe a thing", "readOnlyHint": True, "openWorldHint": False},
        "_meta": {"example.com/category": "demo"},
    }
    assert tools["point"]["outputSchema"] == {
        "type": "object",
        "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}},
        "required": ["x", "y"],
        "title": "Point",
    }


@pytest.mark.parametrize(("mode", "version"), [("legacy", LEGACY), ("auto", MODERN), (MODERN, MODERN)])
async def test_sdk_client_receives_text_structured_image_other_content_and_error_results(
    mode: str, version: str
) -> None:
    with anyio.fail_after(TIMEOUT):
        async with sdk_client(mode) as client:
            echo = await client.call_tool("echo", {"text": "héllo\nworld"})
            add = await client.call_tool("add", {"a": 2, "b": 3})
            point = await client.call_tool("point", {"x": 1, "y": 2})
            pixel = await client.call_tool("pixel", {})
            media = await client.call_tool("media", {})
            fail = await client.call_tool("fail", {"reason": "out of coffee"})
            invalid = await client.call_tool("add", {"a": "two", "b": 3})
            with pytest.raises(MCPError) as unknown:
                await client.call_tool("no_such_tool", {})

    meta = modern_meta(version)
    complete = {"isError": False, "resultType": "complete", **meta}
    assert dump(echo) == {"content": [{"type": "text", "text": "héllo\nworld"}], **complete}
    assert dump(add) == {
        "content": [{"type": "text", "text": "5"}],
        "structuredContent": 5 if version == MODERN else {"result": 5},
        **complete,
    }
    assert dump(point) == {
        "content": [{"type": "text", "text": '{"x":1,"y":2}'}],
        "structuredContent": {"x": 1, "y": 2},
        **complete,
    }
    png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgAAACAAAB4iG8MwAAAABJRU5ErkJggg=="
    assert dump(pixel) == {"content": [{"type": "image", "data": png, "mimeType": "image/png"}], **complete}
    assert dump(media) == {
        "content": [
            {"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"},
            {
                "type": "resource_link",
                "uri": "file:///notes.txt",
                "name": "notes",
                "title": "Notes",
                "mimeType": "text/plain",
                "size": 5,
            },
            {"type": "resource", "resource": {"uri": "file:///a.txt", "mimeType": "text/plain", "text": "hello"}},
            {"type": "resource", "resource": {"uri": "file:///b.bin", "blob": "AAE="}},
        ],
        **complete,
    }
    assert dump(fail) == {"content": [{"type": "text", "text": "out of coffee"}], **complete, "isError": True}
    # Invalid arguments are a tool execution error the model can correct (SEP-1303), not a JSON-RPC error.
    assert invalid.is_error
    assert "a" in invalid.content[0].text  # type: ignore[union-attr]
    assert unknown.value.code == -32602


@MODES
async def test_progress_notifications_reach_the_sdk_progress_callback(mode: str, version: str) -> None:
    reports: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        reports.append((progress, total, message))

    with anyio.fail_after(TIMEOUT):
        async with sdk_client(mode) as client:
            result = await client.call_tool("count", {"steps": 3}, progress_callback=on_progress)

    assert dump(result) == {
        "content": [{"type": "text", "text": "counted 3"}],
        "isError": False,
        "resultType": "complete",
        **modern_meta(version),
    }
    assert reports == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]


WARNING_AND_ABOVE = [
    {"level": "warning", "logger": "interop", "data": "warning message"},
    {"level": "error", "data": {"problem": "error message"}},
]
ALL_FOUR = [
    {"level": "debug", "data": "debug message"},
    {"level": "info", "data": "info message"},
    *WARNING_AND_ABOVE,
]


class LogSink:
    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []

    async def __call__(self, params: LoggingMessageNotificationParams) -> None:
        self.messages.append(params.model_dump(mode="json", by_alias=True, exclude_none=True))


async def test_a_handshake_sdk_client_gets_log_messages_at_the_level_it_sets() -> None:
    sink = LogSink()
    with anyio.fail_after(TIMEOUT):
        async with sdk_client("legacy", logging_callback=sink) as client:
            with warnings.catch_warnings():
                # The SDK deprecates logging/setLevel (gone in 2026-07-28); handshake servers still honour it.
                warnings.simplefilter("ignore", MCPDeprecationWarning)
                await client.set_logging_level("warning")
            await client.call_tool("chatty", {})
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", MCPDeprecationWarning)
                await client.set_logging_level("debug")
            await client.call_tool("chatty", {})

    assert sink.messages == WARNING_AND_ABOVE + ALL_FOUR


async def test_a_2026_sdk_client_gets_log_messages_at_its_per_request_level() -> None:
    sink = LogSink()
    with anyio.fail_after(TIMEOUT):
        async with sdk_client("auto", logging_callback=sink, log_level="warning") as client:
            assert client.protocol_version == MODERN
            await client.call_tool("chatty", {})
            # One request may ask for more than the client's default level.
            await client.call_tool("chatty", {}, meta=cast("RequestParamsMeta", {LOG_LEVEL_META_KEY: "debug"}))

    assert sink.messages == WARNING_AND_ABOVE + ALL_FOUR


async def test_a_2026_sdk_request_without_a_log_level_gets_no_log_messages() -> None:
    sink = LogSink()
    with anyio.fail_after(TIMEOUT):
        async with sdk_client("auto", logging_callback=sink) as client:
            result = await client.call_tool("chatty", {})

    assert result.content[0].text == "logged"  # type: ignore[union-attr]
    assert sink.messages == []


@MODES
async def test_an_sdk_client_cancelling_a_call_stops_the_tool_and_the_server_keeps_serving(
    mode: str, version: str
) -> None:
    started = anyio.Event()

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        started.set()

    with anyio.fail_after(TIMEOUT):
        async with sdk_client(mode) as client:
            async with anyio.create_task_group() as tg:
                # Leaving the scope abandons the request; the SDK then sends notifications/cancelled.
                tg.start_soon(client.call_tool, "block", {}, None, on_progress)
                await started.wait()
                tg.cancel_scope.cancel()
            cancelled = await client.call_tool("was_cancelled", {})
            echo = await client.call_tool("echo", {"text": "still here"})
            assert client.protocol_version == version

    assert cancelled.content[0].text == "true"  # type: ignore[union-attr]
    assert echo.content[0].text == "still here"  # type: ignore[union-attr]


async def test_a_handshake_sdk_client_hears_that_a_sync_tool_changed_the_tool_list() -> None:
    changed = anyio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, ToolListChangedNotification):
            changed.set()

    with anyio.fail_after(TIMEOUT):
        async with sdk_client("legacy", message_handler=on_message) as client:
            await client.call_tool("grow", {"name": "sprout"})  # a sync tool: it runs on a worker thread
            await changed.wait()
            listed = await client.list_tools()
            sprout = await client.call_tool("sprout", {})

    assert listed.tools[-1].name == "sprout"
    assert sprout.content[0].text == "sprout"  # type: ignore[union-attr]


async def test_a_2026_sdk_client_hears_tool_list_changes_through_subscriptions_listen() -> None:
    with anyio.fail_after(TIMEOUT):
        async with sdk_client("auto") as client, client.listen(tools_list_changed=True) as subscription:
            assert subscription.honored is not None
            assert subscription.honored.tools_list_changed is True
            await client.call_tool("grow", {"name": "sprout"})
            event = await subscription.__anext__()
            listed = await client.list_tools(cache_mode="refresh")

    assert event == ToolsListChanged()
    assert listed.tools[-1].name == "sprout"


# -- toolkit's client against an official SDK server ---------------------------------------------------


@pytest.fixture(scope="module")
def sdk_http_url() -> Iterator[str]:
    """The SDK server's Streamable HTTP app on uvicorn in a child process (127.0.0.1), for the module's tests."""
    process = subprocess.Popen([*SDK_SERVER, "--http"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert process.stdout is not None
        yield process.stdout.readline().strip()
    finally:
        process.terminate()
        process.wait(timeout=TIMEOUT)
        if process.stdout is not None:
            process.stdout.close()


@pytest.mark.parametrize(("protocol", "version"), [("auto", MODERN), ("handshake", LEGACY), (MODERN, MODERN)])
async def test_toolkit_client_calls_an_sdk_server_over_http(sdk_http_url: str, protocol: Any, version: str) -> None:
    # The SDK's server answers `initialize` on an SSE stream: the session it opens must be kept all the same (it was
    # not: the client's next request went without its Mcp-Session-Id and was refused, "Missing session ID").
    reports: list[tuple[float, float | None, str | None]] = []
    with anyio.fail_after(TIMEOUT):
        async with toolkit.Client.http(sdk_http_url, protocol=protocol) as client:
            assert client.protocol_version == version
            tools = await client.list_tools()
            add = await client.call_tool("add", {"a": 2, "b": 3})
            point = await client.call_tool("point", {"x": 1, "y": 2})
            count = await client.call_tool("count", {"steps": 2}, progress=lambda *report: reports.append(report))
    assert "add" in [tool.name for tool in tools]
    assert add.text == "5"
    assert point.structured_content == {"x": 1, "y": 2}
    assert not count.is_error
    assert len(reports) == 2


@pytest.mark.parametrize(("protocol", "version"), [("auto", MODERN), ("handshake", LEGACY), (MODERN, MODERN)])
async def test_toolkit_client_lists_and_calls_the_tools_of_an_sdk_server(protocol: Any, version: str) -> None:
    reports: list[tuple[float, float | None, str | None]] = []
    with anyio.fail_after(TIMEOUT):
        async with toolkit.Client.stdio(SDK_SERVER, protocol=protocol) as client:
            assert client.protocol_version == version
            assert client.server_info is not None
            assert client.server_info.name == "sdk-interop"
            assert client.instructions == "An official SDK server."
            tools = await client.list_tools()
            echo = await client.call_tool("echo", {"text": "hi"})
            add = await client.call_tool("add", {"a": 2, "b": 3})
            point = await client.call_tool("point", {"x": 1, "y": 2})
            fail = await client.call_tool("fail", {"reason": "out of coffee"})
            count = await client.call_tool("count", {"steps": 2}, progress=lambda *report: reports.append(report))
            unknown = await client.call_tool("no_such_tool", {})

    def wire(result: toolkit.CallToolResult) -> dict[str, Any]:
        # toolkit's client drops resultType and the server info of 2026-07-28 results: same result in both eras.
        data = result.model_dump(mode="json", by_alias=True, exclude_none=True)
        assert "resultType" not in data
        assert "_meta" not in data
        return data

    assert [tool.name for tool in tools] == ["echo", "add", "point", "fail", "count", "chatty", "block"]
    # The SDK wraps non-object results as {"result": ...} in both eras; toolkit's client checks every
    # structuredContent against the tool's outputSchema, so these calls also prove the two agree.
    assert tools[1].output_schema == {
        "properties": {"result": {"title": "Result", "type": "integer"}},
        "required": ["result"],
        "title": "addOutput",
        "type": "object",
    }
    assert wire(echo) == {
        "content": [{"type": "text", "text": "hi"}],
        "structuredContent": {"result": "hi"},
        "isError": False,
    }
    assert wire(add) == {
        "content": [{"type": "text", "text": "5"}],
        "structuredContent": {"result": 5},
        "isError": False,
    }
    assert wire(point) == {
        "content": [{"type": "text", "text": '{\n  "x": 1,\n  "y": 2\n}'}],
        "structuredContent": {"x": 1, "y": 2},
        "isError": False,
    }
    assert wire(fail) == {
        "content": [{"type": "text", "text": "Error executing tool fail: out of coffee"}],
        "isError": True,
    }
    assert count.text == "counted 2"
    # The SDK answers an unknown tool with an error result, where toolkit (and the spec's table) uses -32602.
    assert wire(unknown) == {"content": [{"type": "text", "text": "Unknown tool: no_such_tool"}], "isError": True}
    assert reports == [(1, 2, "step 1"), (2, 2, "step 2")]


async def test_toolkit_client_runs_many_calls_at_once_against_an_sdk_server() -> None:
    results: dict[int, toolkit.CallToolResult] = {}

    async def one(client: toolkit.Client, n: int) -> None:
        results[n] = await client.call_tool("add", {"a": n, "b": 1000})

    with anyio.fail_after(TIMEOUT):
        async with toolkit.Client.stdio(SDK_SERVER) as client, anyio.create_task_group() as tg:
            for n in range(30):
                tg.start_soon(one, client, n)

    assert {n: result.structured_content for n, result in results.items()} == {
        n: {"result": n + 1000} for n in range(30)
    }


@pytest.mark.parametrize("protocol", ["auto", "handshake"])
async def test_toolkit_client_cancels_calls_to_an_sdk_server_and_keeps_talking(protocol: Any) -> None:
    started = anyio.Event()
    with anyio.fail_after(TIMEOUT):
        async with toolkit.Client.stdio(SDK_SERVER, protocol=protocol) as client:
            async with anyio.create_task_group() as tg:
                tg.start_soon(partial(client.call_tool, "block", progress=lambda *_: started.set()))
                await started.wait()
                tg.cancel_scope.cancel()  # sends notifications/cancelled
            with pytest.raises(TimeoutError):
                await client.call_tool("block", timeout=0.2)  # the deadline cancels server-side too
            echo = await client.call_tool("echo", {"text": "still here"})

    assert echo.text == "still here"


@pytest.mark.parametrize("protocol", ["auto", "handshake"])
async def test_toolkit_client_receives_the_log_messages_of_an_sdk_server(protocol: Any) -> None:
    logs: list[toolkit.LogMessage] = []
    with anyio.fail_after(TIMEOUT):
        async with toolkit.Client.stdio(SDK_SERVER, protocol=protocol, on_log=logs.append) as client:
            if client.modern:  # 2026-07-28: log messages only for requests that ask (the SDK has no logging/setLevel)
                await client.set_logging_level("debug")
            result = await client.call_tool("chatty")

    assert result.text == "logged"
    assert [(log.level, log.data) for log in logs] == [("debug", "debug message"), ("warning", "warning message")]


@MODES
async def test_an_sdk_client_gets_server_shutting_down_for_a_call_still_running_when_sigterm_stops_the_server(
    mode: str, version: str
) -> None:
    # tests/servers/shutdown_app.py gives its calls 0.5 s at shutdown; `nap` reports progress once it runs.
    params = StdioServerParameters(command=sys.executable, args=[str(servers.SHUTDOWN_APP)])
    started = anyio.Event()
    failures: list[MCPError] = []

    async def progressed(progress: float, total: float | None, message: str | None) -> None:
        started.set()

    with anyio.fail_after(TIMEOUT):
        async with mcp.Client(params, mode=mode) as client:
            pid = int((await client.call_tool("pid", {})).content[0].text)  # type: ignore[union-attr]

            async def call() -> None:
                with pytest.raises(MCPError) as raised:
                    await client.call_tool("nap", {"seconds": 600}, progress_callback=progressed)
                failures.append(raised.value)

            async with anyio.create_task_group() as tg:
                tg.start_soon(call)
                await started.wait()
                os.kill(pid, signal.SIGTERM)
            assert client.protocol_version == version

    assert [(failure.error.code, failure.error.message) for failure in failures] == [(-32000, "Server shutting down")]
