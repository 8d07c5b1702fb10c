"""The Context from sync tools (on their worker thread) and async ones, on asyncio and trio, in memory and over stdio:
progress, logging, cancellation, and calls that cannot work failing loudly."""

from __future__ import annotations

import logging
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest
import servers
import wire
import zygote

from toolkit import Client, Context, ElicitRequest, ElicitResult, LogMessage, Server, tool

SERVER = servers.SYNC_CONTEXT


def build_server() -> Server:
    return servers.build(SERVER)


@pytest.fixture(params=["memory", "stdio"])
def transport(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@asynccontextmanager
async def connect(transport: str, backend: str, logs: list[LogMessage], protocol: str) -> AsyncIterator[Client]:
    options: dict[str, Any] = {"on_log": logs.append, "protocol": protocol}
    if transport == "memory":
        async with Client(build_server(), **options) as client:
            yield client
        return
    async with zygote.client([sys.executable, str(SERVER), backend], **options) as client:
        yield client


@pytest.mark.anyio
@pytest.mark.parametrize("protocol", ["handshake", "2026-07-28"])
async def test_a_sync_tool_reports_progress_and_logs_through_its_context(
    transport: str, anyio_backend: str, protocol: str
) -> None:
    logs: list[LogMessage] = []
    progress: list[tuple[float, float | None, str | None]] = []

    def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append((done, total, message))

    with anyio.fail_after(20):
        async with connect(transport, anyio_backend, logs, protocol) as client:
            await client.set_logging_level("info")
            result = await client.call_tool("steps", {"n": 3}, progress=on_progress)
    assert not result.is_error
    assert result.text.startswith("3 steps on ")
    assert result.text != "3 steps on MainThread"  # it ran on a worker thread
    assert progress == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]
    assert logs == [LogMessage("info", f"did step {step}", "steps") for step in (1, 2, 3)]


@pytest.mark.anyio
async def test_a_sync_tool_sees_its_call_cancelled_and_its_later_messages_are_dropped(
    transport: str, anyio_backend: str
) -> None:
    logs: list[LogMessage] = []
    started = anyio.Event()
    with anyio.fail_after(20):
        async with connect(transport, anyio_backend, logs, "handshake") as client:
            await client.set_logging_level("debug")
            with anyio.CancelScope() as scope:

                async def cancel_when_started(done: float, total: float | None, message: str | None) -> None:
                    started.set()
                    scope.cancel()

                await client.call_tool("crunch", progress=cancel_when_started)
            assert started.is_set()
            assert scope.cancelled_caught
            saw = await client.call_tool("crunch_saw_cancel")
            assert await client.call_tool("steps", {"n": 1})  # the server serves on
    assert saw.text == "true"
    assert logs == [
        LogMessage("info", "did step 1", "steps"),
        LogMessage("debug", "below the client's level: not sent", None),
    ]


@pytest.mark.anyio
async def test_a_sync_tool_may_await_the_context_in_an_event_loop_of_its_own(
    transport: str, anyio_backend: str
) -> None:
    logs: list[LogMessage] = []
    with anyio.fail_after(20):
        async with connect(transport, anyio_backend, logs, "2026-07-28") as client:
            await client.set_logging_level("info")
            result = await client.call_tool("own_loop")
    assert (result.text, logs) == ("ok", [LogMessage("info", "from the tool's own event loop", None)])


@pytest.mark.anyio
async def test_a_sync_tool_on_the_event_loop_fails_loudly_when_it_uses_the_context(
    transport: str, anyio_backend: str
) -> None:
    with anyio.fail_after(20):
        async with connect(transport, anyio_backend, [], "handshake") as client:
            result = await client.call_tool("on_the_loop")
    assert result.is_error
    assert result.text == (
        "Error executing tool 'on_the_loop': RuntimeError: a sync tool made with run_in_thread=False runs on the "
        "event loop and cannot wait for the Context: make the tool async (and await the call), or let it run in a "
        "worker thread"
    )


@pytest.mark.anyio
async def test_an_async_tool_that_forgets_to_await_the_context_draws_a_warning() -> None:
    @tool
    async def forgetful(ctx: Context) -> str:
        ctx.info("lost")  # the coroutine is dropped unawaited
        return "done"

    with anyio.fail_after(10):
        async with Client(Server("forgetful", tools=[forgetful])) as client:
            await client.set_logging_level("info")
            with pytest.warns(RuntimeWarning, match=r"^coroutine 'Context\._send' was never awaited$"):
                result = await client.call_tool("forgetful")
    assert result.text == "done"


@pytest.mark.anyio
async def test_a_detached_context_logs_to_python_logging_from_a_sync_tool(caplog: pytest.LogCaptureFixture) -> None:
    @tool
    def chatty(ctx: Context) -> str:
        ctx.report_progress(1)
        ctx.warning("careful")
        return "ok"

    with caplog.at_level(logging.INFO, logger="toolkit.tools"):
        result = await chatty.run({})
    assert result.text == "ok"
    assert [(r.name, r.levelname, r.getMessage()) for r in caplog.records] == [("toolkit.tools", "WARNING", "careful")]


@tool
async def knows_its_client(ctx: Context) -> str:
    """Read what the client declared it can do (from the call's asking)."""
    return f"{sorted(ctx.client_capabilities)} {ctx.can_elicit()}"


@tool
async def tells(ctx: Context) -> str:
    """Only tell: a progress notification, and what the call knows (no asking is started for it)."""
    await ctx.report_progress(1, total=1)
    return f"{ctx.protocol_version} {ctx.client_info.name if ctx.client_info else None}"


@pytest.mark.anyio
@pytest.mark.parametrize("protocol", ["handshake", "2026-07-28"])
async def test_a_tool_that_only_tells_and_one_that_reads_the_clients_capabilities_both_see_their_client(
    anyio_backend: str, protocol: str
) -> None:
    progress: list[float] = []

    async def elicit(request: ElicitRequest) -> ElicitResult[Any]:
        raise AssertionError("never asked")

    server = Server("knowing", tools=[knows_its_client, tells])
    assert (tells.asks, knows_its_client.asks) == (False, True)
    options: dict[str, Any] = {"protocol": protocol, "elicitation_handler": elicit}
    async with Client(server, **options) as client:
        known = await client.call_tool("knows_its_client", {})
        told = await client.call_tool("tells", {}, progress=lambda done, total, message: progress.append(done))
        version = client.protocol_version
    assert known.text == "['elicitation'] True"
    assert told.text == f"{version} toolkit"
    assert progress == [1]


@pytest.mark.anyio
async def test_a_2026_retry_of_a_tool_that_only_tells_still_has_its_request_state_verified() -> None:
    async with wire.memory(Server("retried", tools=[tells])) as peer:
        params: dict[str, Any] = {"name": "tells", "arguments": {}, "_meta": wire.meta()}
        plain = await peer.result("tools/call", params)
        forged = await peer.request("tools/call", {**params, "requestState": "v1.forged.state.mac"})
        malformed = await peer.request("tools/call", {**params, "inputResponses": [1]})
    assert plain["content"][0]["text"].startswith("2026-07-28")
    assert (forged["error"]["code"], malformed["error"]["code"]) == (-32602, -32602)
