"""`python -m benchmarks.middleware [--quick]`: what middleware costs a `tools/call`, in µs per call.

Rows: a sync `add(a, b)` called one call after another, with no middleware and with three no-op middlewares
(`Server(middleware=[...])`, which run around every request; and `tool_middleware=[...]`, around calls only):

- in memory, through toolkit's own `Client` (CPU µs per call, client and server: the process's CPU time, which a
  busy machine disturbs less than the clock);
- over HTTP in process, the ASGI app driven as `benchmarks.asgi` drives it (CPU µs per POST, 2026-07-28);
- fastmcp in memory, through its own client, without and with three no-op `Middleware` (the `bench` extra; CPU µs
  per call, as toolkit's).

Rounds alternate the rows; each cell is the median over rounds, with the range, and the ratio to the row without.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import anyio

from ._fixtures import time_add_calls
from .asgi import cpu_per_post

NOOPS = 3


def _toolkit_server(kind: str) -> Any:
    from toolkit import CallNext, Request, Server

    async def noop(request: Request, call_next: CallNext) -> dict[str, Any]:
        return await call_next(request)

    options: dict[str, Any] = {}
    if kind == "middleware":
        options["middleware"] = [noop] * NOOPS
    elif kind == "tool_middleware":
        options["tool_middleware"] = [noop] * NOOPS
    server = Server("bench-middleware", **options)

    @server.tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    return server


async def _memory(kind: str, calls: int) -> float:
    from toolkit import Client

    async with Client(_toolkit_server(kind)) as client:
        return await time_add_calls(client, calls, time.process_time)


async def _http(kind: str, calls: int) -> float:
    return await cpu_per_post(_toolkit_server(kind).http_app(), "2026-07-28", "add", calls)


async def _fastmcp(kind: str, calls: int) -> float:
    import fastmcp
    from fastmcp.server.middleware import Middleware

    class Noop(Middleware):  # type: ignore[misc,unused-ignore]  # Any when the bench extra is absent
        """Every hook of the base class passes the call on."""

    server = fastmcp.FastMCP("bench-middleware")
    if kind == "middleware":
        for _ in range(NOOPS):
            server.add_middleware(Noop())

    @server.tool  # type: ignore[untyped-decorator,unused-ignore]  # likewise
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    async with fastmcp.Client(server) as client:
        return await time_add_calls(client, calls, time.process_time)


def fastmcp_available() -> bool:
    try:
        import fastmcp.server.middleware  # noqa: F401 - present with the bench extra
    except ImportError:
        return False
    return True


def rows(with_fastmcp: bool) -> dict[str, Callable[[int], float]]:
    """Each row's measurement: `calls` -> µs per call."""
    table: dict[str, Callable[[int], float]] = {}
    for kind in ("none", "middleware", "tool_middleware"):
        table[f"toolkit memory, {kind}"] = lambda calls, kind=kind: anyio.run(_memory, kind, calls)  # type: ignore[misc]
        table[f"toolkit HTTP CPU, {kind}"] = lambda calls, kind=kind: anyio.run(_http, kind, calls)  # type: ignore[misc]
    if with_fastmcp:
        for kind in ("none", "middleware"):
            table[f"fastmcp memory, {kind}"] = lambda calls, kind=kind: anyio.run(_fastmcp, kind, calls)  # type: ignore[misc]
    return table


def measure(calls: int, rounds: int, with_fastmcp: bool) -> dict[str, list[float]]:
    """`rounds` rounds of every row (the order reversed every other round): `{row: [µs per call, ...]}`."""
    return run_rounds(rows(with_fastmcp), calls, rounds)


def run_rounds(table: dict[str, Callable[[int], float]], calls: int, rounds: int) -> dict[str, list[float]]:
    """`rounds` rounds of every row of `table` (the order reversed every other round): `{row: [µs per call, ...]}`."""
    figures: dict[str, list[float]] = {row: [] for row in table}
    for index in range(rounds):
        order = list(table.items())
        for row, run in order if index % 2 == 0 else order[::-1]:
            figures[row].append(run(calls))
        print(f"round {index + 1}/{rounds}, load {os.getloadavg()[0]:.1f}", file=sys.stderr)
    return figures


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.middleware", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 rounds of 300 calls")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--no-fastmcp", action="store_true")
    args = parser.parse_args(argv)
    rounds, calls = (3, 300) if args.quick else (args.rounds, args.calls)
    figures = measure(calls, rounds, fastmcp_available() and not args.no_fastmcp)
    print(f"| row ({NOOPS} no-op middlewares; µs per call, median (range)) | µs | vs none |")
    print("| --- | --- | --- |")
    for row, values in figures.items():
        base = figures[row.rsplit(", ", 1)[0] + ", none"]
        ratio = statistics.median(values) / statistics.median(base)
        cell = f"{statistics.median(values):,.1f} ({min(values):,.1f}-{max(values):,.1f})"
        print(f"| {row} | {cell} | {ratio:.2f} |")


if __name__ == "__main__":
    main(sys.argv[1:])
