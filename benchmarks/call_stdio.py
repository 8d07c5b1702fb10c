"""Sequential `tools/call` of `add(a, b)` over stdio: with the hand-written client, and with each framework's own."""

from __future__ import annotations

import time
from typing import Any

import anyio

from . import _raw, _sides
from .call_memory import WARMUP, check


def run_raw(side_name: str, params: dict[str, Any]) -> float:
    """Return calls per second, the client being raw JSON lines over the child's pipes.

    Buffered for every side: an unbuffered `readline` costs one system call per byte of the reply, which held
    the floor itself back 3-5x and made "share of the floor" read too high for everyone (issue 16).
    """
    client = _raw.RawClient(_sides.serve_argv(side_name, params["tools_dir"], 0), buffered=True)
    try:
        client.initialize()
        for i in range(WARMUP):
            result = client.request("tools/call", {"name": "add", "arguments": {"a": i, "b": 1}})
            if result.get("isError"):
                raise RuntimeError(f"{side_name}: tool call failed: {result}")
        calls = params["calls"]
        start = time.perf_counter()
        for i in range(calls):
            client.request("tools/call", {"name": "add", "arguments": {"a": i, "b": 1}})
        elapsed = time.perf_counter() - start
    finally:
        client.close()
    return float(calls / elapsed)


async def _measure_client(side_name: str, params: dict[str, Any]) -> float:
    side = _sides.load(side_name)
    argv = _sides.serve_argv(side_name, params["tools_dir"], 0)
    calls = params["calls"]
    async with side.stdio_client(argv) as session:
        for i in range(WARMUP):
            check(side_name, await session.call_tool("add", {"a": i, "b": 1}))
        start = time.perf_counter()
        for i in range(calls):
            await session.call_tool("add", {"a": i, "b": 1})
        elapsed = time.perf_counter() - start
    return float(calls / elapsed)


def run_client(side_name: str, params: dict[str, Any]) -> float:
    """Return calls per second through the framework's own stdio client."""
    return anyio.run(_measure_client, side_name, params)
