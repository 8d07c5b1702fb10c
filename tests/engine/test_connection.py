"""The connection's contract with what builds on it (docs/architecture.md): requests to the client, messages tagged
with the request they relate to, a connection made from a `SessionState`, the client's capabilities kept.

`Connection` is internal (HTTP and human-in-the-loop build on it), so these tests drive it directly, with the real
`Client` on the other end where a client is needed.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest

import toolkit
from toolkit import Client, ConnectionClosedError, Context, MemoryTransport, ProtocolError, Server, tool
from toolkit._engine.connection import Connection
from toolkit._engine.session import SessionState
from toolkit._protocol.jsonrpc import INTERNAL_ERROR, METHOD_NOT_FOUND
from toolkit._transports.base import MessageKind

pytestmark = pytest.mark.anyio

TIMEOUT = 10.0
HANDSHAKE = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")


@tool
async def chatty(ctx: Context) -> str:
    """Log and report progress, then answer."""
    await ctx.report_progress(1, total=1)
    await ctx.info("working")
    return "done"


@tool
def late() -> str:
    """Added while connected."""
    return "late"


class Recording:
    """A transport that routes per request (a `RoutingTransport`): it records the tag and kind of every message the
    connection writes, and hands the connection decoded messages."""

    def __init__(self, inner: MemoryTransport) -> None:
        self.inner = inner
        self.sent: list[tuple[dict[str, Any], Any, MessageKind]] = []

    async def send(self, message: str, /) -> None:
        raise AssertionError("a routing transport gets every message through send_related")

    async def send_related(self, message: str, related: str | int | None, kind: MessageKind, /) -> None:
        self.sent.append((json.loads(message), related, kind))
        await self.inner.send(message)

    async def receive(self) -> str:
        raise AssertionError("a routing transport is read with receive_message")

    async def receive_message(self) -> Any:
        return json.loads(await self.inner.receive())

    async def aclose(self) -> None:
        await self.inner.aclose()


class Raw:
    """The client end, written and read as JSON."""

    def __init__(self, transport: MemoryTransport) -> None:
        self.transport = transport

    async def send(self, message: dict[str, Any]) -> None:
        await self.transport.send(json.dumps({"jsonrpc": "2.0", **message}))

    async def receive(self) -> dict[str, Any]:
        with anyio.fail_after(TIMEOUT):
            message: dict[str, Any] = json.loads(await self.transport.receive())
        return message

    async def reply(self, request_id: Any) -> dict[str, Any]:
        while True:
            message = await self.receive()
            if message.get("id") == request_id and "method" not in message:
                return message


@asynccontextmanager
async def served(
    server: Server, *, session: SessionState | None = None, recording: bool = False
) -> AsyncIterator[tuple[Connection, Raw, Recording | None]]:
    mine, theirs = MemoryTransport.pair()
    transport = Recording(theirs) if recording else theirs
    connection = Connection(server.registry, transport, session=session)
    async with server.running(), anyio.create_task_group() as tg:
        tg.start_soon(connection.run)
        yield connection, Raw(mine), transport if isinstance(transport, Recording) else None
        await mine.aclose()


INITIALIZE: dict[str, Any] = {
    "protocolVersion": "2025-11-25",
    "capabilities": {"elicitation": {}, "roots": {"listChanged": True}},
    "clientInfo": {"name": "raw", "version": "1"},
}


# -- requests to the client --------------------------------------------------------------------------------


@pytest.mark.parametrize("version", HANDSHAKE)
async def test_the_server_pings_the_client_and_the_toolkit_client_answers(version: str) -> None:
    # 2026-07-28 has no ping: the handshake era only.
    mine, theirs = MemoryTransport.pair()
    connection = Connection(Server("pinger").registry, theirs)
    async with anyio.create_task_group() as tg:
        tg.start_soon(connection.run)
        async with Client(mine, protocol="handshake") as client:
            await client.list_tools()  # the handshake is done
            with anyio.fail_after(TIMEOUT):
                await connection.ping()
                await connection.ping(timeout=TIMEOUT)
            assert connection.session is not None
            assert connection.session.version == client.protocol_version == "2025-11-25"
    assert connection.session is not None
    # The client reports the one version string, `toolkit.__version__`.
    assert connection.session.client_info == {"name": "toolkit", "version": toolkit.__version__}


async def test_a_client_error_answer_fails_the_request_with_its_code() -> None:
    mine, theirs = MemoryTransport.pair()
    connection = Connection(Server("asker").registry, theirs)
    async with anyio.create_task_group() as tg:
        tg.start_soon(connection.run)
        async with Client(mine, protocol="handshake") as client:
            await client.list_tools()
            with anyio.fail_after(TIMEOUT), pytest.raises(ProtocolError) as caught:
                await connection.request("roots/list", {})
    assert caught.value.code == METHOD_NOT_FOUND


async def test_requests_use_the_servers_own_ids_and_match_each_response() -> None:
    async with served(Server("ids")) as (connection, raw, _):
        results: dict[str, Any] = {}

        async def ask(name: str) -> None:
            results[name] = await connection.request("sampling/createMessage", {"name": name})

        async with anyio.create_task_group() as tg:
            tg.start_soon(ask, "a")
            tg.start_soon(ask, "b")
            first, second = await raw.receive(), await raw.receive()
            assert {first["id"], second["id"]} == {1, 2}
            # answered out of order, one with an error the other way round
            await raw.send({"id": second["id"], "result": {"echo": second["params"]["name"]}})
            await raw.send({"id": first["id"], "result": {"echo": first["params"]["name"]}})
            await raw.send({"id": 99, "result": {}})  # answers nothing: skipped, the connection goes on
            await raw.send({"id": [1], "error": {"code": 1, "message": "odd"}})  # an id no request has
    assert results == {"a": {"echo": "a"}, "b": {"echo": "b"}}


async def test_a_request_without_an_answer_in_time_fails_and_the_client_is_told() -> None:
    async with served(Server("timeout")) as (connection, raw, _):
        with pytest.raises(TimeoutError):
            await connection.request("ping", timeout=0.05)
        sent = await raw.receive()
        cancelled = await raw.receive()
    assert sent == {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    assert cancelled == {
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"requestId": 1, "reason": "timed out"},
    }


async def test_cancelling_the_waiting_call_sends_notifications_cancelled_for_its_request() -> None:
    async with served(Server("cancel")) as (connection, raw, _):
        async with anyio.create_task_group() as tg:
            tg.start_soon(connection.request, "ping")
            sent = await raw.receive()
            tg.cancel_scope.cancel()
        cancelled = await raw.receive()
    assert cancelled["method"] == "notifications/cancelled"
    assert cancelled["params"] == {"requestId": sent["id"], "reason": "cancelled"}


async def test_end_of_input_fails_every_pending_request_and_every_later_one() -> None:
    mine, theirs = MemoryTransport.pair()
    connection = Connection(Server("eof").registry, theirs)
    failures: list[BaseException] = []

    async def ask() -> None:
        try:
            await connection.request("ping")
        except ConnectionClosedError as exc:
            failures.append(exc)

    with anyio.fail_after(TIMEOUT):
        async with anyio.create_task_group() as tg:
            tg.start_soon(connection.run)
            tg.start_soon(ask)
            tg.start_soon(ask)
            await Raw(mine).receive()
            await Raw(mine).receive()
            await mine.aclose()
    assert len(failures) == 2
    with pytest.raises(ConnectionClosedError):
        await connection.request("ping")


# -- messages tagged with the request they relate to -------------------------------------------------------


async def test_every_message_is_tagged_with_the_request_it_relates_to() -> None:
    server = Server("tags", tools=[chatty])
    async with served(server, recording=True) as (connection, raw, recording):
        assert recording is not None
        await raw.send({"id": "init", "method": "initialize", "params": INITIALIZE})
        await raw.reply("init")
        await raw.send({"method": "notifications/initialized"})
        await raw.send({"id": 1, "method": "logging/setLevel", "params": {"level": "debug"}})
        await raw.reply(1)
        call = {"name": "chatty", "arguments": {}, "_meta": {"progressToken": "p"}}
        await raw.send({"id": "call", "method": "tools/call", "params": call})
        await raw.reply("call")
        with anyio.fail_after(TIMEOUT):
            asked = anyio.Event()

            async def ask() -> None:
                await connection.request("ping", related="call")
                asked.set()

            async with anyio.create_task_group() as tg:
                tg.start_soon(ask)
                ping = await raw.receive()
                await raw.send({"id": ping["id"], "result": {}})
                await asked.wait()
        server.add_tool(late)
        assert (await raw.receive())["method"] == "notifications/tools/list_changed"
        await raw.send({"id": 2, "method": "bogus"})
        await raw.reply(2)
        await raw.send({"id": None, "method": "tools/list"})  # an id that cannot be read: relates to nothing
        await raw.receive()

    tags = [(message.get("method") or message.get("id"), related, kind) for message, related, kind in recording.sent]
    result, error, other = MessageKind.RESULT, MessageKind.ERROR, MessageKind.MESSAGE
    assert tags == [
        ("init", "init", result),
        (1, 1, result),
        ("notifications/progress", "call", other),
        ("notifications/message", "call", other),
        ("call", "call", result),
        ("ping", "call", other),
        ("notifications/tools/list_changed", None, other),
        (2, 2, error),
        (None, None, other),
    ]


async def test_subscription_notifications_relate_to_the_listen_request() -> None:
    server = Server("listen")
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    async with served(server, recording=True) as (_, raw, recording):
        assert recording is not None
        params = {"notifications": {"toolsListChanged": True}, "_meta": meta}
        await raw.send({"id": "sub", "method": "subscriptions/listen", "params": params})
        assert (await raw.receive())["method"] == "notifications/subscriptions/acknowledged"
        server.add_tool(late)
        assert (await raw.receive())["method"] == "notifications/tools/list_changed"
    assert [related for _, related, _ in recording.sent] == ["sub", "sub", "sub"]
    assert recording.sent[-1][0]["method"] == "notifications/cancelled"


# -- a connection made from a SessionState, and the state it keeps ----------------------------------------------


async def test_a_connection_made_from_a_session_state_serves_without_initialize() -> None:
    state = SessionState(
        version="2025-06-18",
        client_capabilities={"sampling": {}},
        client_info={"name": "elsewhere", "version": "2"},
        initialized=True,
        log_level="warning",
    )
    async with served(Server("resumed", tools=[chatty]), session=state) as (connection, raw, _):
        assert connection.session is state
        assert connection.client_capabilities == {"sampling": {}}
        await raw.send({"id": 1, "method": "tools/call", "params": {"name": "chatty", "arguments": {}}})
        reply = await raw.reply(1)  # info is below the session's level: no log message came first
        await raw.send({"id": 2, "method": "initialize", "params": INITIALIZE})
        refused = await raw.reply(2)
        await raw.send({"id": 3, "method": "logging/setLevel", "params": {"level": "debug"}})
        await raw.reply(3)
        changed = connection.session
    assert reply["result"] == {"content": [{"type": "text", "text": "done"}], "isError": False}
    assert refused["error"]["code"] == -32600
    assert state.log_level == "warning"  # never changed in place: the sealed copy stays true
    assert changed == SessionState("2025-06-18", {"sampling": {}}, {"name": "elsewhere", "version": "2"}, True, "debug")


async def test_initialize_keeps_the_clients_capabilities_and_info_as_the_session() -> None:
    async with served(Server("kept")) as (connection, raw, _):
        assert (connection.session, connection.client_capabilities) == (None, {})
        await raw.send({"id": 1, "method": "initialize", "params": INITIALIZE})
        await raw.reply(1)
        before_initialized = connection.session
        await raw.send({"method": "notifications/initialized"})
        await raw.send({"id": 2, "method": "ping"})
        await raw.reply(2)
        after = connection.session
    assert before_initialized is not None
    key = before_initialized.key  # random: the owner of the session's anonymous tasks, kept by its later states
    assert len(key) >= 16
    assert before_initialized == SessionState(
        "2025-11-25", INITIALIZE["capabilities"], INITIALIZE["clientInfo"], False, "info", key
    )
    assert after == SessionState("2025-11-25", INITIALIZE["capabilities"], INITIALIZE["clientInfo"], True, "info", key)
    assert connection.client_capabilities == {"elicitation": {}, "roots": {"listChanged": True}}


async def test_a_malformed_error_answer_still_fails_the_request_as_an_internal_error() -> None:
    async with served(Server("malformed")) as (connection, raw, _):
        failures: list[ProtocolError] = []

        async def ask() -> None:
            try:
                await connection.request("ping")
            except ProtocolError as exc:
                failures.append(exc)

        async with anyio.create_task_group() as tg:
            tg.start_soon(ask)
            sent = await raw.receive()
            await raw.send({"id": sent["id"], "error": "not an object"})
    assert [(failure.code, failure.message) for failure in failures] == [(INTERNAL_ERROR, "")]
