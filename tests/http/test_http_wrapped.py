"""Issue 39: how HTTP serves a call may depend on a static read of the tool's source (`Tool.asks`,
`Tool.only_notifies`: a Context that is only told is served in its request's task); correctness may not. A tool
behind a decorator (`functools.wraps`, whose source says nothing of what the wrapper does) is served the
conservative way, at most slower: cancelled and resumed exactly as the same tool undecorated, in both eras."""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx
import pytest
import wire

from toolkit import Client, Context, ProtocolMode, Server, StreamingASGITransport, tool

pytestmark = pytest.mark.anyio
URL = "http://127.0.0.1:8000/mcp"


def logged(fn: Callable[..., Awaitable[str]]) -> Callable[..., Awaitable[str]]:
    """A decorator as users write them: the wrapper's source is not the tool's."""

    @functools.wraps(fn)
    async def wrapper(*args: Any, **kwargs: Any) -> str:
        return await fn(*args, **kwargs)

    return wrapper


class Gate:
    """What the tools wait on, and what they saw."""

    def __init__(self) -> None:
        self.started = anyio.Event()
        self.go = anyio.Event()
        self.cancelled: list[str] = []
        self.ended = anyio.Event()  # the cancellation reached the tool


def make_server(gate: Gate) -> Server:
    async def steps(ctx: Context) -> str:
        """Report progress, end the response early (2025-11-25 SSE polling), report again, then answer."""
        await ctx.report_progress(1, total=2)
        await ctx.close_sse_stream()
        await ctx.report_progress(2, total=2)
        return "stepped"

    async def waits(ctx: Context) -> str:
        """Report progress, then wait for the test."""
        await ctx.report_progress(1)
        gate.started.set()
        try:
            await gate.go.wait()
        except anyio.get_cancelled_exc_class():
            gate.cancelled.append(ctx.protocol_version or "")
            gate.ended.set()
            raise
        return "went on"

    server = Server("wrapped")
    for fn in (steps, waits):
        server.add_tool(tool(name=f"plain_{fn.__name__}")(fn))
        server.add_tool(tool(name=f"wrapped_{fn.__name__}")(logged(fn)))
    return server


def _note(seen: list[float], progress: float, total: float | None, message: str | None) -> None:
    seen.append(progress)


@asynccontextmanager
async def connected(app: Any, protocol: ProtocolMode) -> AsyncIterator[Client]:
    async with (
        httpx.AsyncClient(transport=StreamingASGITransport(app), base_url="http://127.0.0.1:8000") as http,
        Client.http(URL, http_client=http, protocol=protocol) as client,
    ):
        yield client


@pytest.mark.parametrize("protocol", ["handshake", "2026-07-28"])
async def test_a_wrapped_tool_is_resumed_exactly_as_the_plain_one(protocol: ProtocolMode) -> None:
    app = make_server(Gate()).http_app(sse_retry=0.01)
    outcomes = {}
    async with connected(app, protocol) as client:
        for kind in ("plain", "wrapped"):
            seen: list[float] = []
            with anyio.fail_after(wire.TIMEOUT):
                result = await client.call_tool(f"{kind}_steps", progress=functools.partial(_note, seen))
            outcomes[kind] = (result.text, seen)
    assert outcomes["wrapped"] == outcomes["plain"] == ("stepped", [1, 2])  # each event once, in order


@pytest.mark.parametrize("protocol", ["handshake", "2026-07-28"])
async def test_a_wrapped_tool_is_cancelled_exactly_as_the_plain_one(protocol: ProtocolMode) -> None:
    seen: dict[str, list[str]] = {}
    for kind in ("plain", "wrapped"):
        gate = Gate()
        async with connected(make_server(gate).http_app(), protocol) as client:
            with anyio.fail_after(wire.TIMEOUT):
                async with anyio.create_task_group() as tg:
                    tg.start_soon(client.call_tool, f"{kind}_waits")
                    await gate.started.wait()
                    tg.cancel_scope.cancel()  # 2025-11-25: notifications/cancelled; 2026-07-28: the stream closed
                await gate.ended.wait()  # the server's side of the cancellation
                # the session goes on serving after the cancelled call
                assert (await client.call_tool(f"{kind}_steps")).text == "stepped"
        seen[kind] = gate.cancelled
    assert seen["wrapped"] == seen["plain"]
    assert len(seen["plain"]) == 1
