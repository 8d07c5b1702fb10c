"""`python -m benchmarks.gateway [--quick]`: what a gateway (`Server.mount`) adds to a `tools/call`.

Rows, each a sync `add(a, b)` called one call after another through toolkit's own `Client`, wall-clock µs per call:

- **memory**: the upstream server called directly in memory, and mounted on a gateway that the client calls in memory
  (the issue's aim: at most 1.5x the direct call): its calls served in process by its own pipeline, and, for
  comparison, through the protocol (a server the gateway knows only as something to serve a connection, as before
  the in-process path);
- **stdio**: the upstream as a child process (`tests/servers/gateway_upstream.py`) called directly with
  `Client.stdio`, and mounted on an in-memory gateway (the aim: the gateway adds at most 0.5 ms a call);
- **fastmcp proxy** (the `bench` extra): fastmcp's `create_proxy` of a fastmcp server with the same tool, in memory,
  through fastmcp's client, against that server called directly.

Then the upstream's `initialize`/`server/discover` requests counted while 10,000 calls go through one gateway.
Rounds alternate the rows; each cell is the median over rounds, with the range, and the ratios are of the medians and
of the fastest rounds (steadier on a machine shared with other work, whose load slows some rounds).
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio

from ._fixtures import time_add_calls
from .middleware import fastmcp_available, run_rounds

UPSTREAM = Path(__file__).resolve().parent.parent / "tests" / "servers" / "gateway_upstream.py"


def _upstream(methods: list[str] | None = None) -> Any:
    from toolkit import CallNext, Request, Server

    async def count(request: Request, call_next: CallNext) -> dict[str, Any]:
        assert methods is not None
        methods.append(request.method)
        return await call_next(request)

    server = Server("upstream", middleware=[count] if methods is not None else [])

    @server.tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    return server


class _Opaque:
    """A toolkit server the gateway can only serve a connection to (`Servable`, no registry): its calls go through
    the protocol, as every in-memory mount's did before the in-process path."""

    def __init__(self, server: Any) -> None:
        self.running = server.running
        self.serve = server.serve
        self.name = server.name


def _gateway(upstream: Any) -> Any:
    from toolkit import Server

    gateway = Server("gateway")
    gateway.mount(upstream)
    return gateway


async def _toolkit(row: str, calls: int) -> float:
    from toolkit import Client

    command = [sys.executable, str(UPSTREAM)]
    client = {
        "memory direct": lambda: Client(_upstream()),
        "memory mounted": lambda: Client(_gateway(_upstream())),
        "memory mounted over the protocol": lambda: Client(_gateway(_Opaque(_upstream()))),
        "stdio direct": lambda: Client.stdio(command),
        "stdio mounted": lambda: Client(_gateway(command)),
    }[row]()
    async with client:
        return await time_add_calls(client, calls)


async def _fastmcp(row: str, calls: int) -> float:
    import fastmcp
    from fastmcp.server import create_proxy

    server = fastmcp.FastMCP("upstream")

    @server.tool  # type: ignore[untyped-decorator,unused-ignore]  # Any when the bench extra is absent
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    target = server if row == "fastmcp direct" else create_proxy(server)
    async with fastmcp.Client(target) as client:
        return await time_add_calls(client, calls)


def rows(with_fastmcp: bool) -> dict[str, Callable[[int], float]]:
    table: dict[str, Callable[[int], float]] = {}
    for row in ("memory direct", "memory mounted", "memory mounted over the protocol", "stdio direct", "stdio mounted"):
        table[f"toolkit {row}"] = lambda calls, row=row: anyio.run(_toolkit, row, calls)  # type: ignore[misc]
    if with_fastmcp:
        for row in ("fastmcp direct", "fastmcp proxy"):
            table[row] = lambda calls, row=row: anyio.run(_fastmcp, row, calls)  # type: ignore[misc]
    return table


async def initializations(calls: int) -> tuple[int, int]:
    """The upstream's connection requests and its calls while `calls` calls go through one gateway."""
    from toolkit import Client

    methods: list[str] = []
    async with Client(_gateway(_upstream(methods))) as client, anyio.create_task_group() as tg:
        for start in range(0, calls, calls // 10):

            async def some(start: int = start) -> None:
                for i in range(start, start + calls // 10):
                    await client.call_tool("add", {"a": i, "b": 1})

            tg.start_soon(some)
    return methods.count("initialize") + methods.count("server/discover"), methods.count("tools/call")


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.gateway", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 rounds of 300 calls")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--no-fastmcp", action="store_true")
    args = parser.parse_args(argv)
    rounds, calls = (3, 300) if args.quick else (args.rounds, args.calls)
    figures = run_rounds(rows(fastmcp_available() and not args.no_fastmcp), calls, rounds)
    median = {row: statistics.median(values) for row, values in figures.items()}
    # On a shared machine a round that met other work is slow: the fastest rounds' ratio is the steadier one.
    print("| row (µs per call, median (range)) | µs | vs direct | vs direct, fastest rounds |")
    print("| --- | --- | --- | --- |")
    for row, values in figures.items():
        direct = row.replace(" over the protocol", "").replace("mounted", "direct").replace("proxy", "direct")
        cell = f"{median[row]:,.1f} ({min(values):,.1f}-{max(values):,.1f})"
        fastest = min(values) / min(figures[direct])
        print(f"| {row} | {cell} | {median[row] / median[direct]:.2f}x | {fastest:.2f}x |")
    added = median["toolkit stdio mounted"] - median["toolkit stdio direct"]
    print(f"\nstdio: the gateway adds {added / 1000:.3f} ms a call")
    opened, called = anyio.run(initializations, 10_000)
    print(f"10,000 calls through one gateway: {called} upstream tools/call, {opened} upstream initialize")


if __name__ == "__main__":
    main(sys.argv[1:])
