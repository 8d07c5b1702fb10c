"""Sequential `tools/call` of `add(a, b)` in memory (sync or async tool), through each framework's own client."""

from __future__ import annotations

import time
from typing import Any

import anyio

from . import _fixtures, _sides

WARMUP = 20


def check(side_name: str, result: object) -> None:
    """Fail loudly if a call came back as an error: a fast error is not a fast call."""
    if getattr(result, "is_error", False) or getattr(result, "isError", False):
        raise RuntimeError(f"{side_name}: tool call failed: {result!r}")


async def _measure(side_name: str, params: dict[str, Any]) -> float:
    side = _sides.load(side_name)
    server = side.new_server()
    side.register(server, _fixtures.add)
    side.register(server, _fixtures.add_async)
    name, calls = params["tool"], params["calls"]
    async with side.memory_client(server) as session:
        for i in range(WARMUP):
            check(side_name, await session.call_tool(name, {"a": i, "b": 1}))
        start = time.perf_counter()
        for i in range(calls):
            await session.call_tool(name, {"a": i, "b": 1})
        elapsed = time.perf_counter() - start
    return float(calls / elapsed)


def run(side_name: str, params: dict[str, Any]) -> float:
    """Return calls per second."""
    return anyio.run(_measure, side_name, params)
