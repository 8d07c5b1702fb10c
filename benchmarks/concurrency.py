"""Calls in flight at once: N callers on one in-memory connection, or one caller on each of N connections.

The tool awaits a real 1 ms sleep (`_scale_tools.wait_a_little`), standing for I/O: a server that ran calls
one at a time would stay under 1,000 calls/s however many are in flight. Each caller makes its calls back
to back (a closed loop), so exactly N are in flight until the last ones finish; every call's latency is
timed from the caller's side.
"""

from __future__ import annotations

import gc
import statistics
import time
from contextlib import AsyncExitStack
from typing import Any

import anyio

from . import _scale_tools, _sides
from .call_memory import check
from .rss import rss_kib

TOOL = "wait_a_little"


def _server(side_name: str) -> tuple[Any, Any]:
    side = _sides.load(side_name)
    server = side.new_server()
    side.register(server, _scale_tools.wait_a_little)
    return side, server


async def _callers(side_name: str, sessions: list[Any], calls: int) -> tuple[float, list[float]]:
    """Run `calls` calls spread over one caller per entry of `sessions`: (seconds, each call's latency)."""
    latencies: list[float] = []
    left = calls

    async def caller(session: Any) -> None:
        nonlocal left
        while left > 0:
            left -= 1
            start = time.perf_counter()
            result = await session.call_tool(TOOL, {"n": left})
            latencies.append(time.perf_counter() - start)
            check(side_name, result)

    start = time.perf_counter()
    async with anyio.create_task_group() as tasks:
        for session in sessions:
            tasks.start_soon(caller, session)
    return time.perf_counter() - start, latencies


def _metrics(calls: int, elapsed: float, latencies: list[float]) -> dict[str, float]:
    cuts = statistics.quantiles(latencies, n=100, method="inclusive")
    return {"rate": calls / elapsed, "p50": statistics.median(latencies) * 1e3, "p99": cuts[98] * 1e3}


async def _in_flight(side_name: str, params: dict[str, Any]) -> dict[str, float]:
    side, server = _server(side_name)
    n, calls = params["in_flight"], params["calls"]
    # The floor's plain memory loop answers one request at a time; its concurrent twin is the fair floor.
    client = getattr(side, "concurrent_memory_client", side.memory_client)
    async with client(server) as session:
        await _callers(side_name, [session] * n, max(20, n))  # warm-up: the first wave starts N tasks
        elapsed, latencies = await _callers(side_name, [session] * n, calls)
    return _metrics(calls, elapsed, latencies)


async def _connections(side_name: str, params: dict[str, Any]) -> dict[str, float]:
    side, server = _server(side_name)
    n, calls = params["connections"], params["calls"]
    async with AsyncExitStack() as stack:
        gc.collect()
        before = rss_kib()
        start = time.perf_counter()
        sessions = [await stack.enter_async_context(side.memory_client(server)) for _ in range(n)]
        opened = time.perf_counter() - start
        await _callers(side_name, sessions, n)  # one untimed call on each connection
        gc.collect()
        per_connection = (rss_kib() - before) / n
        elapsed, latencies = await _callers(side_name, sessions, calls)
    return {**_metrics(calls, elapsed, latencies), "open": opened * 1e3, "rss": per_connection}


def run_in_flight(side_name: str, params: dict[str, Any]) -> dict[str, float]:
    """Return calls/s and p50/p99 latency (ms) with `in_flight` calls at once on one connection."""
    return anyio.run(_in_flight, side_name, params)


def run_connections(side_name: str, params: dict[str, Any]) -> dict[str, float]:
    """Return calls/s, p50/p99 latency (ms), ms to open the connections and KiB of RSS per connection."""
    return anyio.run(_connections, side_name, params)
