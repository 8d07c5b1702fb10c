"""Issue 39's one `tools/call` pipeline: whoever serves a call (a connection, a task, HTTP in the request's task),
it runs the same steps, and nothing is injected into the engine after construction: a `Registry` served without the
`Server` facade runs tool middleware around its tasks too."""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from toolkit import Client, ProtocolMode, tool
from toolkit._engine.connection import Connection
from toolkit._engine.registry import Registry
from toolkit._transports.base import Transport

pytestmark = pytest.mark.anyio


class Bare:
    """A `Registry` served as it is, without the `Server` facade (what `Client(server)` uses in memory)."""

    def __init__(self, registry: Registry) -> None:
        self.registry = registry

    def running(self, *, lifespan: Any = None) -> AbstractAsyncContextManager[Any]:
        return self.registry.running(lifespan=lifespan)

    async def serve(self, transport: Transport) -> None:
        await Connection(self.registry, transport).run()


@tool(task="optional")
async def slow(n: int) -> int:
    """Double `n`, as a task if the client wants one."""
    await anyio.lowlevel.checkpoint()
    return 2 * n


@pytest.mark.parametrize("protocol", ["2026-07-28", "handshake"])
async def test_a_registry_without_the_facade_runs_tool_middleware_around_its_tasks(protocol: ProtocolMode) -> None:
    seen: list[tuple[str, Any]] = []

    async def note(request: Any, call_next: Any) -> Any:
        seen.append((request.tool.name, request.arguments))
        return await call_next(request)

    registry = Registry("bare", None, {"tool_middleware": [note]})
    registry.put_tool(slow)
    async with Client(Bare(registry), protocol=protocol) as client:
        plain = await client.call_tool("slow", {"n": 1})
        task = await client.start_task("slow", {"n": 2})
        with anyio.fail_after(10):
            result = await task.result()
    assert (plain.text, result.text) == ("2", "4")
    assert seen == [("slow", {"n": 1}), ("slow", {"n": 2})]
