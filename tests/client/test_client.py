"""toolkit.Client in both eras, against the demo server in memory and over stdio, and against a handshake-only peer."""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

import anyio
import anyio.abc
import httpx
import pytest
import wire
from typing_extensions import TypedDict

from toolkit import (
    CallToolResult,
    Client,
    ConnectionClosedError,
    Implementation,
    LogMessage,
    MemoryTransport,
    MessageError,
    ProtocolError,
    Server,
    StreamingASGITransport,
    TextContent,
    ToolDefinition,
    tool,
)
from toolkit._protocol.client_eras import CLIENT_ERAS, CLIENT_VERSIONS, client_era_of
from toolkit._protocol.revisions import ERA_RULES

pytestmark = pytest.mark.anyio

OpenClient = Callable[..., AbstractAsyncContextManager[Client]]
SERVER_INFO = Implementation(name="protocol-demo", version="1.2.3", title="Protocol demo")
SERVER_WIRE = {"name": "protocol-demo", "version": "1.2.3", "title": "Protocol demo"}
INSTRUCTIONS = "Call echo to check the connection."


@pytest.fixture(params=["memory", "stdio"])
def transport(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(params=["2026-07-28", "handshake"])
def era(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def open_client(transport: str, era: str, anyio_backend: str) -> OpenClient:
    """`async with open_client(**options) as client`: a Client pinned to `era` on a fresh demo server."""

    @asynccontextmanager
    async def open_it(**options: Any) -> AsyncIterator[Client]:
        options.setdefault("protocol", era)
        if transport == "memory":
            async with Client(wire.load_demo().build(), **options) as client:
                yield client
        else:
            async with Client.stdio(wire.demo_command(anyio_backend), **options) as client:
                yield client

    return open_it


# -- connecting -----------------------------------------------------------------------------------------------


async def test_by_default_the_client_speaks_2026_07_28_to_a_toolkit_server(transport: str, anyio_backend: str) -> None:
    if transport == "memory":
        client = Client(wire.load_demo().build())
    else:
        client = Client.stdio(wire.demo_command(anyio_backend))
    async with client:
        seen = (client.protocol_version, client.server_info, client.capabilities, client.instructions)

    assert seen == ("2026-07-28", SERVER_INFO, {"tools": {"listChanged": True}, "logging": {}}, INSTRUCTIONS)


async def test_the_protocol_option_pins_an_era(open_client: OpenClient, era: str) -> None:
    async with open_client() as client:
        seen = (client.protocol_version, client.server_info, client.capabilities, client.instructions)

    version = "2026-07-28" if era == "2026-07-28" else "2025-11-25"
    assert seen == (version, SERVER_INFO, {"tools": {"listChanged": True}, "logging": {}}, INSTRUCTIONS)


async def test_the_client_asks_the_era_it_speaks_and_modern_follows_it(open_client: OpenClient, era: str) -> None:
    async with open_client() as client:
        seen = (client.era.speaks(client.protocol_version), client.era.stateless, client.era.tasks_by_extension)
        modern = client.modern

    stateless = era == "2026-07-28"
    assert seen == (True, stateless, stateless)
    assert modern is stateless


def test_a_client_not_yet_connected_is_not_modern() -> None:
    client = Client(wire.load_demo().build())
    assert (client.protocol_version, client.modern) == (None, False)


def test_each_client_era_is_made_from_its_eras_rules_and_every_revision_has_one() -> None:
    assert [era.rules for era in CLIENT_ERAS] == sorted(ERA_RULES, key=lambda rules: rules.versions[0], reverse=True)
    assert set(CLIENT_VERSIONS) == {version for rules in ERA_RULES for version in rules.versions}
    assert all(client_era_of(version).speaks(version) for version in CLIENT_VERSIONS)
    with pytest.raises(KeyError):
        client_era_of("2023-01-01")


class FakeServer:
    """A peer written by hand on a memory transport: records every message it reads and hands it to `handle`."""

    def __init__(self) -> None:
        self.received: list[dict[str, Any]] = []

    async def serve(self, transport: MemoryTransport) -> None:
        while True:
            try:
                message = json.loads(await transport.receive())
            except anyio.EndOfStream:
                return
            self.received.append(message)
            await self.handle(message, transport)

    async def handle(self, message: dict[str, Any], transport: MemoryTransport) -> None:
        raise NotImplementedError

    @staticmethod
    async def send(transport: MemoryTransport, **message: Any) -> None:
        """Send one JSON-RPC message: `id=..., result=...`, `id=..., error=...` or `method=..., params=...`."""
        await transport.send(json.dumps({"jsonrpc": "2.0", **message}))


#: What a handshake-era fake server answers `initialize` with.
INITIALIZE_RESULT = {"protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": {"name": "x", "version": "1"}}


class HandshakeOnlyServer(FakeServer):
    """A peer that speaks only the handshake era (2025-06-18), as servers written before 2026-07-28 do.

    It answers `server/discover` (a method it does not know) with -32601 and records every message it reads.
    """

    async def handle(self, message: dict[str, Any], transport: MemoryTransport) -> None:
        if "id" in message:
            await self.send(transport, id=message["id"], **self.answer(message))

    def answer(self, message: dict[str, Any]) -> dict[str, Any]:
        method = message["method"]
        if method == "initialize":
            info = {"name": "old", "version": "0.9"}
            caps: dict[str, Any] = {"tools": {}}
            return {"result": {"protocolVersion": "2025-06-18", "capabilities": caps, "serverInfo": info}}
        if method == "tools/list":
            schema = {"type": "object", "properties": {"text": {"type": "string"}}}
            return {"result": {"tools": [{"name": "echo", "inputSchema": schema}]}}
        if method == "tools/call":
            text = message["params"]["arguments"]["text"]
            return {"result": {"content": [{"type": "text", "text": text}]}}
        return {"error": {"code": -32601, "message": f"Method not found: {method}"}}


@asynccontextmanager
async def handshake_only(**options: Any) -> AsyncIterator[tuple[Client, HandshakeOnlyServer]]:
    fake = HandshakeOnlyServer()
    mine, theirs = MemoryTransport.pair()
    async with anyio.create_task_group() as tg:
        tg.start_soon(fake.serve, theirs)
        try:
            async with Client(mine, **options) as client:
                yield client, fake
        finally:
            await theirs.aclose()


CLIENT_INFO = {"name": "toolkit", "version": "0.1.0"}
DISCOVER = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "server/discover",
    "params": {
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": CLIENT_INFO,
        }
    },
}


def initialize(request_id: int) -> dict[str, Any]:
    params = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": CLIENT_INFO}
    return {"jsonrpc": "2.0", "id": request_id, "method": "initialize", "params": params}


INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


async def test_auto_mode_falls_back_to_the_handshake_when_the_server_does_not_know_discover() -> None:
    async with handshake_only() as (client, fake):
        tools = await client.list_tools()
        echoed = await client.call_tool("echo", {"text": "hi"})
        seen = (client.protocol_version, client.server_info, client.capabilities, client.instructions)

    assert seen == ("2025-06-18", Implementation(name="old", version="0.9"), {"tools": {}}, None)
    assert [t.name for t in tools] == ["echo"]
    assert echoed == CallToolResult(content=[TextContent(text="hi")])
    assert fake.received == [
        DISCOVER,
        initialize(2),
        INITIALIZED,
        {"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {}},
        {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "hi"}}},
    ]


class SlowToStartServer(HandshakeOnlyServer):
    """A server of 2026-07-28 only that answers `server/discover` late, once the handshake came (as a server slow to
    start on a busy machine, read in order): then it refuses the handshake, as the official SDK 2.x does on a
    connection that took 2026-07-28. `silent`: one that never answers `server/discover` (an old server ignoring an
    unknown method) and takes the handshake."""

    def __init__(self, *, silent: bool = False) -> None:
        super().__init__()
        self.silent = silent
        self.discover: dict[str, Any] | None = None

    async def handle(self, message: dict[str, Any], transport: MemoryTransport) -> None:
        method = message.get("method")
        if method == "server/discover":
            self.discover = message  # answered when the handshake comes, or never
        elif method == "initialize" and not self.silent:
            assert self.discover is not None
            await self.send(transport, id=self.discover["id"], result=DISCOVER_RESULT)
            refusal = {"code": -32600, "message": "connection is serving the 2026-07-28 protocol"}
            await self.send(transport, id=message["id"], error=refusal)
        elif "id" in message:
            await super().handle(message, transport)


@pytest.mark.parametrize("silent", [False, True], ids=["answered-late", "never-answered"])
async def test_auto_mode_on_a_pipe_takes_the_era_the_server_answered_in_first(silent: bool) -> None:
    # A pipe has no answer for an unknown method: past the discovery's silence (10 s) the client sends the handshake
    # too, and the first greeting decides. A late `server/discover` answer wins over the handshake sent after it
    # (the 3.13 suite under load: the SDK's server took 2026-07-28, then refused the handshake the client fell back to).
    fake = SlowToStartServer(silent=silent)
    mine, theirs = MemoryTransport.pair()
    async with anyio.create_task_group() as tg:
        tg.start_soon(fake.serve, theirs)
        async with Client(mine) as client:
            version = client.protocol_version
            if silent:
                tools = [tool.name for tool in await client.list_tools()]
        await theirs.aclose()

    methods = [message.get("method") for message in fake.received]
    if silent:  # the handshake's era, its discovery cancelled once it was answered
        assert (version, tools) == ("2025-06-18", ["echo"])
        cancelled = {
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": 1, "reason": "cancelled"},
        }
        assert fake.received[:2] == [DISCOVER, initialize(2)]
        assert cancelled in fake.received[2:]
        assert methods.index("notifications/cancelled") < methods.index("notifications/initialized")
    else:  # 2026-07-28, and never `notifications/initialized` to a server that refused the handshake
        assert version == "2026-07-28"
        assert methods == ["server/discover", "initialize"]


async def test_handshake_mode_never_probes_with_discover() -> None:
    async with handshake_only(protocol="handshake") as (client, fake):
        version = client.protocol_version

    assert version == "2025-06-18"
    assert fake.received == [initialize(1), INITIALIZED]


async def test_pinning_2026_07_28_against_a_handshake_only_server_fails_with_its_error() -> None:
    fake = HandshakeOnlyServer()
    mine, theirs = MemoryTransport.pair()
    async with anyio.create_task_group() as tg:
        tg.start_soon(fake.serve, theirs)
        with pytest.raises(ProtocolError) as caught:
            async with Client(mine, protocol="2026-07-28"):
                pass  # pragma: no cover (connecting fails)
        await theirs.aclose()

    assert caught.value.code == -32601
    assert fake.received == [DISCOVER]


class WrappedTransport:
    """A transport as a user writes one: `send`, `receive` and `aclose`, nothing else (here around a memory end)."""

    def __init__(self, inner: MemoryTransport) -> None:
        self.inner = inner
        self.sent: list[dict[str, Any]] = []
        self.received: list[dict[str, Any]] = []
        self.closed = False

    async def send(self, message: str, /) -> None:
        self.sent.append(json.loads(message))
        await self.inner.send(message)

    async def receive(self) -> str:
        message = await self.inner.receive()
        self.received.append(json.loads(message))
        return message

    async def aclose(self) -> None:
        self.closed = True
        await self.inner.aclose()


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


async def test_a_transport_written_by_the_user_drives_the_client_against_a_server(era: str) -> None:
    mine, theirs = MemoryTransport.pair()
    transport = WrappedTransport(mine)
    with anyio.fail_after(30):
        async with anyio.create_task_group() as tg:
            tg.start_soon(Server("wrapped", tools=[add]).serve, theirs)
            async with Client(transport, protocol=era, validate_output=False) as client:  # type: ignore[arg-type]
                result = await client.call_tool("add", {"a": 1, "b": 2})
                version = client.protocol_version

    assert result.text == "3"
    assert version == ("2026-07-28" if era == "2026-07-28" else "2025-11-25")
    assert transport.closed  # the client closes the transport it was given
    opening = ["server/discover"] if era == "2026-07-28" else ["initialize", "notifications/initialized"]
    assert [m["method"] for m in transport.sent] == [*opening, "tools/call"]
    assert [m["id"] for m in transport.received] == [m["id"] for m in transport.sent if "id" in m]


def test_an_option_the_client_does_not_have_is_refused() -> None:
    with pytest.raises(TypeError, match="protocl"):
        Client(Server("typo"), protocl="handshake")  # type: ignore[call-arg]


# -- the API in both eras ---------------------------------------------------------------------------------------


async def test_list_tools_follows_every_page(transport: str, era: str, anyio_backend: str) -> None:
    if transport == "memory":
        client = Client(wire.load_demo().build(page_size=3), protocol=era)  # type: ignore[arg-type]
    else:
        client = Client.stdio(wire.demo_command(anyio_backend, "--page-size", "3"), protocol=era)  # type: ignore[arg-type]
    async with client:
        tools = await client.list_tools()

    assert [t.name for t in tools] == wire.DEMO_TOOLS


async def test_a_tool_definition_reads_the_same_in_both_eras_apart_from_the_output_wrapper(
    open_client: OpenClient, era: str
) -> None:
    async with open_client() as client:
        tools = {t.name: t for t in await client.list_tools()}

    output: dict[str, Any] = {"type": "integer"}
    if era == "handshake":
        output = {"type": "object", "properties": {"result": {"type": "integer"}}, "required": ["result"]}
    assert tools["add"] == ToolDefinition.model_validate(
        {
            "name": "add",
            "title": "Add",
            "description": "Add two integers.",
            "inputSchema": {
                "type": "object",
                "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                "required": ["a", "b"],
                "additionalProperties": False,
            },
            "outputSchema": output,
            "annotations": {"title": "Add", "readOnlyHint": True},
            "icons": [{"src": "https://example.com/add.png", "mimeType": "image/png", "sizes": ["48x48"]}],
        }
    )


async def test_call_tool_returns_the_result_with_structured_content_as_the_era_sends_it(
    open_client: OpenClient, era: str
) -> None:
    async with open_client() as client:
        added = await client.call_tool("add", {"a": 2, "b": 3})
        failed = await client.call_tool("fail")
        invalid = await client.call_tool("add", {"a": "x", "b": 1})

    def wire_form(result: CallToolResult) -> dict[str, Any]:
        return result.model_dump(mode="json", by_alias=True, exclude_none=True)

    # The client drops what only marks a 2026-07-28 result (resultType, the server's identity in _meta), so
    # the same tool gives the same CallToolResult in both eras but for the unwrapped structured content.
    extra: dict[str, Any] = {}
    structured = 5 if era == "2026-07-28" else {"result": 5}
    assert wire_form(added) == {
        "content": [{"type": "text", "text": "5"}],
        "structuredContent": structured,
        "isError": False,
        **extra,
    }
    assert wire_form(failed) == {
        "content": [{"type": "text", "text": "the tool failed on purpose"}],
        "isError": True,
        **extra,
    }
    assert invalid.is_error


async def test_protocol_errors_raise_with_their_code(open_client: OpenClient) -> None:
    async with open_client() as client:
        with pytest.raises(ProtocolError) as caught:
            await client.call_tool("nope")

    assert caught.value.code == -32602


async def test_an_unknown_tool_is_refused_with_the_closest_name_suggested(open_client: OpenClient) -> None:
    async with open_client() as client:
        with pytest.raises(ProtocolError) as typo:
            await client.call_tool("ecoh", {"text": "hi"})
        with pytest.raises(ProtocolError) as nothing_close:
            await client.call_tool("zzzzzz")

    assert (typo.value.code, typo.value.message) == (-32602, "Unknown tool: ecoh; did you mean 'echo'?")
    assert (nothing_close.value.code, nothing_close.value.message) == (-32602, "Unknown tool: zzzzzz")


async def test_ping_works_in_both_eras(open_client: OpenClient) -> None:
    async with open_client() as client:
        await client.ping()
        echoed = await client.call_tool("echo", {"text": "still here"})

    assert echoed.content == [TextContent(text="still here")]


async def test_progress_reaches_the_callback_of_its_call(open_client: OpenClient) -> None:
    reports: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        reports.append((progress, total, message))

    async with open_client() as client:
        counted = await client.call_tool("count", {"steps": 3}, progress=on_progress)
        quiet = await client.call_tool("count", {"steps": 2})

    assert reports == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]
    assert (counted.content, quiet.content) == ([TextContent(text="3")], [TextContent(text="2")])


def as_tuples(messages: list[LogMessage]) -> list[tuple[str, Any, str | None]]:
    return [(m.level, m.data, m.logger) for m in messages]


async def test_log_messages_follow_the_level_the_client_asked_for(open_client: OpenClient, era: str) -> None:
    logs: list[LogMessage] = []
    async with open_client(on_log=logs.append) as client:
        await client.call_tool("chatter")
        default = as_tuples(logs)
        logs.clear()
        await client.set_logging_level("critical")
        await client.call_tool("chatter")
        critical = as_tuples(logs)

    # The handshake era starts at "info"; 2026-07-28 sends log messages only for requests that name a level.
    levels = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]
    first = levels[1:] if era == "handshake" else []
    assert default == [(level, f"a {level} message", "demo") for level in first]
    assert critical == [(level, f"a {level} message", "demo") for level in levels[5:]]


async def test_leaving_a_cancel_scope_cancels_the_call_on_the_server(open_client: OpenClient) -> None:
    async with open_client() as client:
        with anyio.CancelScope() as scope:

            def started(progress: float, total: float | None, message: str | None) -> None:
                scope.cancel()

            await client.call_tool("block", {"key": "left"}, progress=started)
        record = await client.call_tool("cancellations")

    assert scope.cancelled_caught
    assert record.content == [TextContent(text="left")]


async def test_a_timeout_raises_and_cancels_the_call_on_the_server(open_client: OpenClient) -> None:
    async with open_client() as client:
        with pytest.raises(TimeoutError):
            await client.call_tool("block", {"key": "slow"}, timeout=0.2)
        record = await client.call_tool("cancellations")

    assert record.content == [TextContent(text="slow")]


async def test_many_concurrent_calls_each_get_their_own_result(open_client: OpenClient) -> None:
    count = 25
    results: dict[int, str] = {}
    async with open_client() as client:

        async def wait(i: int) -> None:
            result = await client.call_tool("wait", {"key": f"k{i}"})
            assert isinstance(result.content[0], TextContent)
            results[i] = result.content[0].text

        async with anyio.create_task_group() as tg:
            for i in range(count):
                tg.start_soon(wait, i)
            for i in reversed(range(count)):
                await client.call_tool("open", {"key": f"k{i}"})

    assert results == {i: f"k{i}" for i in range(count)}


async def test_the_handshake_client_hears_that_the_tool_list_changed(transport: str, anyio_backend: str) -> None:
    changed = anyio.Event()
    if transport == "memory":
        client = Client(wire.load_demo().build(), protocol="handshake", on_tools_changed=changed.set)
    else:
        client = Client.stdio(wire.demo_command(anyio_backend), protocol="handshake", on_tools_changed=changed.set)
    async with client:
        await client.call_tool("grow")
        with anyio.fail_after(wire.TIMEOUT):
            await changed.wait()
        names = [t.name for t in await client.list_tools()]

    assert names == [*wire.DEMO_TOOLS, "extra"]


# -- output validation ----------------------------------------------------------------------------------------


@tool(structured=True)
def liar() -> int:
    """Claims an integer, returns a string."""
    return CallToolResult(content=[TextContent(text="nope")], structured_content="nope")  # type: ignore[return-value]


@pytest.mark.parametrize("protocol", ["2026-07-28", "handshake"])
async def test_structured_content_that_breaks_the_output_schema_is_refused(protocol: str) -> None:
    server = Server("liar", tools=[liar])
    async with Client(server, protocol=protocol) as client:  # type: ignore[arg-type]
        with pytest.raises(ProtocolError) as caught:
            await client.call_tool("liar")

    async with Client(server, protocol=protocol, validate_output=False) as lenient:  # type: ignore[arg-type]
        result = await lenient.call_tool("liar")

    assert caught.value.code == -32603
    assert result.structured_content == "nope"


async def test_on_tools_changed_fires_in_both_eras_listening_on_a_subscription_in_2026_07_28(era: str) -> None:
    @tool
    def first() -> str:
        return "1"

    @tool
    def second() -> str:
        return "2"

    server = Server("changing", tools=[first])
    changed = anyio.Event()
    protocol: Any = era
    async with Client(server, protocol=protocol, on_tools_changed=changed.set) as client:
        assert [t.name for t in await client.list_tools()] == ["first"]
        server.add_tool(second)
        with anyio.fail_after(5):
            await changed.wait()
        assert [t.name for t in await client.list_tools()] == ["first", "second"]


@pytest.mark.parametrize(
    "factory",
    [
        functools.partial(Client.stdio, [sys.executable, "-c", "pass"]),
        functools.partial(Client.http, "http://127.0.0.1:9/mcp"),
    ],
    ids=["stdio", "http"],
)
def test_client_stdio_and_client_http_refuse_a_misspelled_option_as_client_does(factory: Callable[..., Client]) -> None:
    with pytest.raises(TypeError) as raised:
        factory(protocl="auto")
    assert str(raised.value) == "Client() got an unexpected keyword argument 'protocl' (did you mean 'protocol'?)"


class _Count(TypedDict):
    n: int


class _Words(TypedDict):
    words: list[str]


async def test_after_the_tool_list_changed_a_result_is_checked_against_the_tools_new_output_schema(era: str) -> None:
    @tool(name="report")
    def as_count() -> _Count:
        return {"n": 1}

    @tool(name="report")
    def as_words() -> _Words:
        return {"words": ["one"]}

    server = Server("changing", tools=[as_count])
    changed = anyio.Event()
    protocol: Any = era
    async with Client(server, protocol=protocol, on_tools_changed=changed.set) as client:
        assert (await client.call_tool("report")).structured_content == {"n": 1}  # checked against the first schema
        server.replace_tools([as_words])
        with anyio.fail_after(5):
            await changed.wait()
        assert (await client.call_tool("report")).structured_content == {"words": ["one"]}


# -- what the client does when the server misbehaves ------------------------------------------------------------


async def test_a_reply_over_max_message_size_fails_its_call_at_once_and_the_others_go_on(
    open_client: OpenClient,
) -> None:
    async with open_client(max_message_size=10_000) as client:
        async with anyio.create_task_group() as tg:
            waiting: list[CallToolResult] = []

            async def wait() -> None:
                waiting.append(await client.call_tool("wait", {"key": "k"}))

            tg.start_soon(wait)
            with anyio.fail_after(10), pytest.raises(MessageError) as caught:
                await client.call_tool("big", {"size": 50_000})
            await client.call_tool("open", {"key": "k"})
        small = await client.call_tool("big", {"size": 100})

    assert (
        str(caught.value) == "the reply to tools/call is larger than max_message_size (10,000 bytes), so it was skipped"
    )
    assert caught.value.code == -32600
    assert [result.text for result in waiting] == ["k"]
    assert small.text == "x" * 100


async def test_a_request_over_the_servers_limit_fails_at_once_with_the_servers_error(anyio_backend: str) -> None:
    command = wire.demo_command(anyio_backend, "--max-message-size", "10000")
    async with Client.stdio(command) as client:
        with anyio.fail_after(10), pytest.raises(ProtocolError) as caught:
            await client.call_tool("echo", {"text": "x" * 20_000})
        after = await client.call_tool("echo", {"text": "after"})

    assert (caught.value.code, caught.value.message) == (-32600, "message larger than 10000 bytes")
    assert after.text == "after"


async def test_a_request_over_max_message_size_is_not_sent(open_client: OpenClient) -> None:
    async with open_client(max_message_size=10_000) as client:
        with pytest.raises(MessageError) as caught:
            await client.call_tool("echo", {"text": "x" * 20_000})
        after = await client.call_tool("echo", {"text": "after"})

    assert str(caught.value).startswith("the tools/call request is 20,")
    assert str(caught.value).endswith("bytes, larger than max_message_size (10,000 bytes), so it was not sent")
    assert after.text == "after"


class NullIdServer(FakeServer):
    """Answers every tools/call with an error of id null, as a server that could not read the request's id does."""

    async def handle(self, message: dict[str, Any], transport: MemoryTransport) -> None:
        if message.get("method") == "initialize":
            await self.send(transport, id=message["id"], result=INITIALIZE_RESULT)
        elif message.get("method") == "tools/call":
            await self.send(transport, id=None, error={"code": -32600, "message": "message larger than 100 bytes"})
        elif message.get("method") == "ping":
            await self.send(transport, id=message["id"], result={})


async def test_an_error_with_id_null_fails_the_waiting_calls_rather_than_hang() -> None:
    mine, theirs = MemoryTransport.pair()
    async with anyio.create_task_group() as tg:
        tg.start_soon(NullIdServer().serve, theirs)
        async with Client(mine, protocol="handshake") as client:
            with anyio.fail_after(10), pytest.raises(ProtocolError) as caught:
                await client.call_tool("anything")
            await client.ping()
        await theirs.aclose()

    assert (caught.value.code, caught.value.message) == (-32600, "message larger than 100 bytes")


class OddIdsServer(FakeServer):
    """A handshake server whose notifications name a progress token and a task by values no request has (an array,
    an object: JSON allows neither as an id) before it answers a call."""

    async def handle(self, message: dict[str, Any], transport: MemoryTransport) -> None:
        if message.get("method") == "initialize":
            await self.send(transport, id=message["id"], result=INITIALIZE_RESULT)
        elif message.get("method") == "tools/call":
            progress = {"progressToken": [1], "progress": 1}
            await self.send(transport, method="notifications/progress", params=progress)
            await self.send(transport, method="notifications/tasks/status", params={"taskId": {"a": 1}})
            await self.send(transport, id=message["id"], result={"content": [{"type": "text", "text": "done"}]})
        elif message.get("method") == "tools/list":
            await self.send(transport, id=message["id"], result={"tools": []})
        elif message.get("method") == "ping":
            await self.send(transport, id=message["id"], result={})


async def test_notifications_that_name_a_token_or_a_task_by_an_array_or_an_object_are_dropped() -> None:
    mine, theirs = MemoryTransport.pair()
    heard: list[float] = []
    async with anyio.create_task_group() as tg:
        tg.start_soon(OddIdsServer().serve, theirs)
        async with Client(mine, protocol="handshake") as client:
            with anyio.fail_after(10):
                result = await client.call_tool("anything", progress=lambda done, *_: heard.append(done))
                await client.ping()  # the client still reads
        await theirs.aclose()

    assert (result.text, heard) == ("done", [])


#: What a 2026-07-28 fake server answers `server/discover` with.
DISCOVER_RESULT = {"supportedVersions": ["2026-07-28"], "capabilities": {"tools": {"listChanged": True}}}


class EndsListenServer(FakeServer):
    """A 2026-07-28 server that acknowledges subscriptions/listen, then ends it with notifications/cancelled."""

    def __init__(self) -> None:
        super().__init__()
        self.ended = anyio.Event()

    async def handle(self, message: dict[str, Any], transport: MemoryTransport) -> None:
        if message.get("method") == "server/discover":
            await self.send(transport, id=message["id"], result=DISCOVER_RESULT)
        elif message.get("method") == "subscriptions/listen":
            for method, params in [
                ("notifications/subscriptions/acknowledged", {"notifications": {"toolsListChanged": True}}),
                ("notifications/cancelled", {"requestId": message["id"], "reason": "the server's input ended"}),
            ]:
                await self.send(transport, method=method, params=params)
            self.ended.set()
        elif message.get("method") == "tools/call" and message["params"]["name"] == "cancelled":
            params = {"requestId": message["id"], "reason": "shutting down"}
            await self.send(transport, method="notifications/cancelled", params=params)
        elif message.get("method") in ("tools/call", "tools/list"):
            result: dict[str, Any] = {"content": []} if message["method"] == "tools/call" else {"tools": []}
            await self.send(transport, id=message["id"], result=result)


class Recorded:
    """A transport that records what the client tries to send through it."""

    def __init__(self, transport: MemoryTransport) -> None:
        self.transport = transport
        self.sent: list[dict[str, Any]] = []

    async def send(self, message: str, /) -> None:
        self.sent.append(json.loads(message))
        await self.transport.send(message)

    async def receive(self) -> str:
        return await self.transport.receive()

    async def aclose(self) -> None:
        await self.transport.aclose()


async def test_a_listen_stream_the_server_cancels_ends_cleanly(caplog: pytest.LogCaptureFixture) -> None:
    mine, theirs = MemoryTransport.pair()
    server, recorded = EndsListenServer(), Recorded(mine)
    async with anyio.create_task_group() as tg:
        tg.start_soon(server.serve, theirs)
        async with Client(recorded, on_tools_changed=lambda: None) as client:
            with anyio.fail_after(10):
                await server.ended.wait()
                result = await client.call_tool("anything")  # read after the cancellation: it has been handled
                with pytest.raises(ProtocolError) as cancelled:
                    await client.call_tool("cancelled")
        await theirs.aclose()

    assert (cancelled.value.code, cancelled.value.message) == (-32603, "the server cancelled tools/call: shutting down")
    methods = [m.get("method") for m in recorded.sent]
    assert result.content == []
    # The client stopped waiting when the server ended the stream: nothing left to cancel when it leaves.
    assert methods == ["server/discover", "subscriptions/listen", "tools/call", "tools/list", "tools/call"]
    assert [r.getMessage() for r in caplog.records if r.levelname == "WARNING"] == []


class IdLastServer(FakeServer):
    """Answers tools/call with a reply whose id comes after a large result, once two calls are waiting."""

    async def handle(self, message: dict[str, Any], transport: MemoryTransport) -> None:
        if message.get("method") == "initialize":
            await self.send(transport, id=message["id"], result=INITIALIZE_RESULT)
        elif message.get("method") == "tools/call":
            calls = [m["id"] for m in self.received if m.get("method") == "tools/call"]
            if len(calls) == 2:
                big = {"content": [{"type": "text", "text": "x" * 5000}]}
                await self.send(transport, result=big, id=calls[0])  # the id after the result, as JSON allows
        elif message.get("method") == "ping":
            await self.send(transport, id=message["id"], result={})
        elif message.get("method") == "server/discover":
            await self.send(transport, id=message["id"], result=DISCOVER_RESULT)
        elif message.get("method") == "subscriptions/listen":
            await self.send(transport, method="notifications/subscriptions/acknowledged", params={})


@pytest.mark.parametrize("protocol", ["handshake", "2026-07-28"])
async def test_a_reply_too_large_to_find_its_id_fails_every_waiting_call_rather_than_hang(protocol: str) -> None:
    mine, theirs = MemoryTransport.pair()
    failures: list[str] = []
    era: Any = protocol
    changed: list[None] = []
    async with anyio.create_task_group() as tg:
        tg.start_soon(IdLastServer().serve, theirs)
        # In 2026-07-28 a subscriptions/listen stream waits too: it ends, the client goes on.
        options: dict[str, Any] = {"on_tools_changed": lambda: changed.append(None)} if era != "handshake" else {}
        async with Client(mine, protocol=era, max_message_size=1000, **options) as client:

            async def call() -> None:
                with pytest.raises(MessageError) as caught:
                    await client.call_tool("anything")
                failures.append(str(caught.value))

            with anyio.fail_after(10):
                async with anyio.create_task_group() as calls:
                    calls.start_soon(call)
                    calls.start_soon(call)
                await client.ping()
        await theirs.aclose()

    assert failures == ["the reply to tools/call is larger than max_message_size (1,000 bytes), so it was skipped"] * 2


EXITS_DURING_A_CALL = """
import json, sys
for line in sys.stdin:
    message = json.loads(line)
    if message.get("method") == "initialize":
        result = {"protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": {"name": "x", "version": "1"}}
        print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}), flush=True)
    elif message.get("method") == "tools/call":
        print("out of memory", file=sys.stderr, flush=True)
        sys.exit(5)
"""


@pytest.mark.parametrize(
    ("code", "returncode", "message", "stderr"),
    [
        ("import sys; sys.exit(3)", 3, "the server process exited with status 3", ""),
        (
            "print('Serving on port 8000')",
            0,
            "the server process exited with status 0; before that, it wrote what is not JSON-RPC to its output: "
            "'Serving on port 8000'",
            "",
        ),
        (
            "import sys; sys.stderr.write('loading\\n'); import no_such_module",
            1,
            "the server process exited with status 1; its stderr ended with: ",
            "loading\nTraceback (most recent call last):\n",
        ),
    ],
)
async def test_a_server_process_that_ends_at_start_raises_one_error_saying_how(
    code: str, returncode: int, message: str, stderr: str, capfd: pytest.CaptureFixture[str]
) -> None:
    with anyio.fail_after(20), pytest.raises(ConnectionClosedError) as caught:
        async with Client.stdio([sys.executable, "-c", code]):
            pass

    assert caught.value.message.startswith(message)
    assert caught.value.returncode == returncode
    assert caught.value.stderr.startswith(stderr)
    if stderr:  # the last lines of a traceback: where, and what
        assert caught.value.message.endswith(" | ModuleNotFoundError: No module named 'no_such_module'")
        assert caught.value.stderr.endswith("ModuleNotFoundError: No module named 'no_such_module'\n")
    else:
        assert caught.value.message == message
    assert capfd.readouterr().err == ""  # the stderr is in the error, not printed as well


async def test_a_server_process_that_exits_during_a_call_fails_it_and_every_later_request(
    capfd: pytest.CaptureFixture[str],
) -> None:
    async with Client.stdio([sys.executable, "-c", EXITS_DURING_A_CALL], protocol="handshake") as client:
        with anyio.fail_after(20):
            with pytest.raises(ConnectionClosedError) as during:
                await client.call_tool("anything")
            with pytest.raises(ConnectionClosedError) as after:
                await client.list_tools()

    assert during.value.message == "the server process exited with status 5; its stderr ended with: out of memory"
    assert (after.value.message, after.value.returncode) == (during.value.message, 5)
    assert capfd.readouterr().err == "out of memory\n"  # it had answered: its stderr was copied as it came


async def test_what_a_server_writes_to_stderr_before_it_answers_is_copied_once_it_does(
    anyio_backend: str, capfd: pytest.CaptureFixture[str]
) -> None:
    demo = wire.demo_command(anyio_backend)[1:]
    code = (
        "import runpy, sys\n"
        "print('warming up', file=sys.stderr)\n"
        f"sys.argv = {demo!r}\n"
        "runpy.run_path(sys.argv[0], run_name='__main__')\n"
    )
    command = [sys.executable, "-c", code]
    async with Client.stdio(command) as client:
        assert (await client.call_tool("echo", {"text": "hi"})).text == "hi"

    assert capfd.readouterr().err == "warming up\n"


class _Methods:
    """A transport that records the method of every request the client sends."""

    def __init__(self, inner: MemoryTransport) -> None:
        self.inner = inner
        self.methods: list[str] = []

    async def send(self, message: str, /) -> None:
        method = json.loads(message).get("method")
        if method is not None:
            self.methods.append(method)
        await self.inner.send(message)

    async def receive(self) -> str:
        return await self.inner.receive()

    async def aclose(self) -> None:
        await self.inner.aclose()


@pytest.mark.anyio
@pytest.mark.parametrize("reason", ["validate_output=False", "jsonschema missing"])
async def test_call_tool_sends_no_tools_list_when_it_cannot_validate(
    reason: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    @tool
    def weather() -> dict[str, int]:
        """Structured."""
        return {"celsius": 3}

    if reason == "jsonschema missing":
        monkeypatch.setitem(sys.modules, "jsonschema", None)  # `import jsonschema` raises ImportError
    server = Server("no-validation", tools=[weather])
    mine, theirs = MemoryTransport.pair()
    recording = _Methods(mine)
    async with anyio.create_task_group() as tg:
        tg.start_soon(server.serve, theirs)
        async with Client(recording, protocol="handshake", validate_output=reason != "validate_output=False") as client:
            result = await client.call_tool("weather")
    assert result.structured_content == {"celsius": 3}
    assert recording.methods == ["initialize", "notifications/initialized", "tools/call"]


# -- exceptions out of the block ------------------------------------------------------------------------------


@asynccontextmanager
async def connected(where: str, protocol: Any, backend: str) -> AsyncIterator[Client]:
    """A client of a fresh demo server, in memory, over stdio or over HTTP (in process)."""
    if where == "http":
        app = wire.load_demo().build().http_app()
        async with (
            httpx.AsyncClient(transport=StreamingASGITransport(app), base_url="http://127.0.0.1") as http,
            Client.http("http://127.0.0.1/mcp", http_client=http, protocol=protocol) as client,
        ):
            yield client
    elif where == "memory":
        async with Client(wire.load_demo().build(), protocol=protocol) as client:
            yield client
    else:
        async with Client.stdio(wire.demo_command(backend), protocol=protocol) as client:
            yield client


@pytest.mark.parametrize("where", ["memory", "stdio", "http"])
async def test_an_exception_in_the_block_comes_out_of_async_with_as_raised(
    where: str, era: str, anyio_backend: str
) -> None:
    """Not wrapped in an ExceptionGroup by the client's tasks: `except ToolkitError` around the block works."""
    with anyio.fail_after(wire.TIMEOUT):
        with pytest.raises(ProtocolError) as caught:
            async with connected(where, era, anyio_backend) as client:
                await client.call_tool("no_such_tool")
        assert caught.value.code == -32602
        with pytest.raises(ValueError, match="the block's own"):
            async with connected(where, era, anyio_backend) as client:
                raise ValueError("the block's own")


def loops(exc: BaseException) -> bool:
    """Whether the `__context__` chain of `exc` comes back on itself."""
    seen: list[BaseException] = []
    link: BaseException | None = exc
    while link is not None and all(link is not s for s in seen):
        seen.append(link)
        link = link.__context__
    return link is not None


@pytest.mark.parametrize("where", ["memory", "stdio", "http"])
async def test_a_client_cancelled_mid_call_in_a_task_group_ends_it_and_the_next_client_works(
    where: str, era: str, anyio_backend: str
) -> None:
    """The cancellation that leaves the client has a chain of contexts that ends: anyio's task group walks it when
    the task ends, and a chain that loops (contextlib's exit stack made one of a cancellation re-raised while it was
    being handled) held it there at 100 % CPU for ever, under a deadline that could never fire."""
    looped: list[bool] = []
    started = anyio.Event()

    async def call() -> None:
        try:
            async with connected(where, era, anyio_backend) as client:
                await client.call_tool("block", {"key": "k"}, progress=lambda *_: started.set())
        except BaseException as exc:
            looped.append(loops(exc))
            if not looped[-1]:
                raise
            # Re-raised, a looping chain would hang the task group (and this test): kept back, failed below.

    with anyio.fail_after(wire.TIMEOUT):
        async with anyio.create_task_group() as tg:
            tg.start_soon(call)
            await started.wait()  # the call runs on the server
            tg.cancel_scope.cancel()
        async with connected(where, era, anyio_backend) as client:
            after = await client.call_tool("echo", {"text": "after"})
    assert looped == [False]
    assert after.text == "after"


# -- a transport the client opens (Client.stdio, Client.http) ---------------------------------------------------


async def test_a_client_of_an_endpoint_opens_anew_each_time_but_not_twice_at_once() -> None:
    app = wire.load_demo().build().http_app()
    with anyio.fail_after(wire.TIMEOUT):
        async with httpx.AsyncClient(transport=StreamingASGITransport(app), base_url="http://127.0.0.1") as http:
            client = Client.http("http://127.0.0.1/mcp", http_client=http, protocol="handshake")
            versions = []
            for _ in range(2):  # each `async with` opens a new session (initialize), and ends it on exit
                async with client:
                    versions.append(client.protocol_version)
                    with pytest.raises(RuntimeError, match="already open"):
                        async with client:
                            pass  # pragma: no cover (entering fails)
                    result = await client.call_tool("echo", {"text": "still here"})

    assert versions == ["2025-11-25", "2025-11-25"]
    assert result.text == "still here"
