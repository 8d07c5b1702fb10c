"""Sequential `tools/call` of `add(a, b)` over stdio: with the hand-written client, and with each framework's own.

`params["tool"]` names the tool: `add` (sync, the default) or `add_async`, which the server then serves beside
`add` (`benchmarks._async_tools`). The floor has no async tools: it always answers with `add`, the pipe's own cost.
"""

from __future__ import annotations

import time
from typing import Any

import anyio

from . import _raw, _sides
from .call_memory import WARMUP, check


def _tool(side_name: str, params: dict[str, Any]) -> str:
    return "add" if side_name == "floor" else str(params.get("tool", "add"))


def _argv(side_name: str, params: dict[str, Any], tool: str) -> list[str]:
    module = None if tool == "add" else "benchmarks._async_tools"
    return _sides.serve_argv(side_name, params["tools_dir"], 0, module=module)


def run_raw(side_name: str, params: dict[str, Any]) -> float:
    """Return calls per second, the client being raw JSON lines over the child's pipes.

    Buffered for every side: an unbuffered `readline` costs one system call per byte of the reply, which held
    the floor itself back 3-5x and made "share of the floor" read too high for everyone (issue 16).
    """
    tool = _tool(side_name, params)
    client = _raw.RawClient(_argv(side_name, params, tool), buffered=True)
    try:
        client.initialize()
        for i in range(WARMUP):
            result = client.request("tools/call", {"name": tool, "arguments": {"a": i, "b": 1}})
            if result.get("isError"):
                raise RuntimeError(f"{side_name}: tool call failed: {result}")
        calls = params["calls"]
        start = time.perf_counter()
        for i in range(calls):
            client.request("tools/call", {"name": tool, "arguments": {"a": i, "b": 1}})
        elapsed = time.perf_counter() - start
    finally:
        client.close()
    return float(calls / elapsed)


async def _measure_client(side_name: str, params: dict[str, Any]) -> float:
    side = _sides.load(side_name)
    tool = _tool(side_name, params)
    calls = params["calls"]
    async with side.stdio_client(_argv(side_name, params, tool)) as session:
        for i in range(WARMUP):
            check(side_name, await session.call_tool(tool, {"a": i, "b": 1}))
        start = time.perf_counter()
        for i in range(calls):
            await session.call_tool(tool, {"a": i, "b": 1})
        elapsed = time.perf_counter() - start
    return float(calls / elapsed)


def run_client(side_name: str, params: dict[str, Any]) -> float:
    """Return calls per second through the framework's own stdio client."""
    return anyio.run(_measure_client, side_name, params)
