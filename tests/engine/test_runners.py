"""The tasks a connection's calls run in (`_engine/runners.py`): a task whose call has ended is handed the next call,
and a call still sees what a task of its own would: the reader's context variables, never a previous call's.

Driven through the real client in memory, on asyncio and trio.
"""

from __future__ import annotations

import contextvars
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from toolkit import Client, Server, TextContent
from toolkit._engine.runners import KEEP

pytestmark = pytest.mark.anyio

TIMEOUT = 10.0
TAG: contextvars.ContextVar[str] = contextvars.ContextVar("TAG", default="unset")


class _Gate:
    """Holds the `wait` calls until `expected` of them are in, then lets them go together."""

    def __init__(self, expected: int) -> None:
        self.expected = expected
        self.inside = 0
        self.full = anyio.Event()

    async def pass_through(self) -> None:
        self.inside += 1
        if self.inside == self.expected:
            self.full.set()
        await self.full.wait()


def _server(gate: _Gate | None = None) -> Server:
    server = Server("runners")

    @server.tool
    async def tag(value: str) -> str:
        """Set TAG without resetting it (as `structlog.contextvars.bind_contextvars` does); say what it was."""
        before = TAG.get()
        TAG.set(value)
        return before

    @server.tool
    async def read() -> str:
        """Say what TAG is, changing nothing."""
        return TAG.get()

    @server.tool
    async def wait() -> str:
        """Wait at the gate (for ever without one)."""
        await (gate.pass_through() if gate is not None else anyio.sleep_forever())
        return "released"

    return server


async def _said(client: Client, name: str, arguments: dict[str, Any] | None = None) -> str:
    """The text a call of `name` answers."""
    block = (await client.call_tool(name, arguments)).content[0]
    assert isinstance(block, TextContent), block
    return block.text


async def test_a_call_never_sees_the_context_variables_a_previous_call_set() -> None:
    with anyio.fail_after(TIMEOUT):
        async with Client(_server()) as client:
            for value in ("a", "b", "c"):
                assert await _said(client, "tag", {"value": value}) == "unset"
                assert await _said(client, "read") == "unset"


async def test_calls_in_flight_beyond_the_kept_tasks_each_answer_and_at_most_the_kept_tasks_wait_after() -> None:
    calls = KEEP * 2
    answers: list[str] = []
    with anyio.fail_after(TIMEOUT):
        async with Client(_server(_Gate(calls))) as client:
            await client.call_tool("read")
            before = len(anyio.get_running_tasks())  # the connection's, and the task the first call ran in

            async def call() -> None:
                answers.append(await _said(client, "wait"))

            async with anyio.create_task_group() as tg:  # every call in flight at once: each in a task of its own
                for _ in range(calls):
                    tg.start_soon(call)
            assert answers == ["released"] * calls
            # The tasks beyond KEEP end with their calls (once each has written its answer).
            while len(anyio.get_running_tasks()) > before + KEEP:
                await anyio.lowlevel.checkpoint()
            assert await _said(client, "read") == "unset"


async def test_a_cancelled_call_leaves_its_task_able_to_serve_the_next_call() -> None:
    with anyio.fail_after(TIMEOUT):
        async with Client(_server()) as client:
            with pytest.raises(TimeoutError):
                await client.call_tool("wait", timeout=0.05)
            for _ in range(3):
                assert await _said(client, "read") == "unset"
