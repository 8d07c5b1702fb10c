"""`python -m benchmarks.telemetry [--quick]`: what OpenTelemetry tracing costs one `tools/call`, off and on.

Each row is CPU µs per call (the process's CPU time over warm calls), measured in a fresh process per row and round
(OpenTelemetry's global provider can be set once per process), rounds alternating the rows; each cell is the median
over rounds with the range. "off": no tracer provider anywhere (toolkit's path is then the untraced one: one `if`).
"on": OpenTelemetry's SDK `TracerProvider` set as the global provider, with a span processor that drops every span
(so what is measured is making the spans and propagating the context, not exporting them).

Rows: toolkit in memory (`Client(server)`, a sync `add`, both eras); toolkit over HTTP in process (the ASGI app
driven as `benchmarks.asgi` does, a 2026-07-28 POST answered alone; the server's side only, since the driver is not
traced); the official SDK in memory (`mcp.Client(MCPServer)`), whose telemetry is always on and traces when the
global provider is set.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio

ROOT = Path(__file__).resolve().parent.parent
ROWS = (
    "toolkit memory 2026-07-28",
    "toolkit memory 2025-11-25",
    "toolkit http 2026-07-28",
    "mcp memory",
)
MODES = ("off", "on")


def _trace_globally() -> None:
    from opentelemetry import trace
    from opentelemetry.sdk.trace import SpanProcessor, TracerProvider

    provider = TracerProvider()
    provider.add_span_processor(SpanProcessor())  # the base class: does nothing with a span
    trace.set_tracer_provider(provider)


def _toolkit_server() -> Any:
    from toolkit import Server

    server = Server("bench")

    @server.tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    return server


async def _per_call(client: Any, calls: int) -> tuple[float, Any]:
    """CPU µs per `add` call over `calls` warm calls of `client` (toolkit's or the SDK's), and the last result."""
    for _ in range(max(10, calls // 10)):
        await client.call_tool("add", {"a": 1, "b": 2})
    start = time.process_time()
    for _ in range(calls):
        result = await client.call_tool("add", {"a": 1, "b": 2})
    return (time.process_time() - start) / calls * 1e6, result


async def _toolkit_memory(era: str, calls: int) -> float:
    from toolkit import Client

    async with Client(_toolkit_server(), protocol="handshake" if era == "2025-11-25" else "2026-07-28") as client:
        spent, result = await _per_call(client, calls)
    assert result.text == "3", result
    return spent


async def _toolkit_http(calls: int) -> float:
    from .asgi import cpu_per_post

    return await cpu_per_post(_toolkit_server().http_app(), "2026-07-28", "add", calls)


async def _mcp_memory(calls: int) -> float:
    import mcp
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("bench")

    @server.tool()
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    async with mcp.Client(server, cache=None) as client:
        spent, result = await _per_call(client, calls)
    assert not result.is_error, result
    return spent


def measure(row: str, mode: str, calls: int) -> float:
    """CPU µs per call of one row, in this process (which `mode` "on" traces globally: use a fresh one)."""
    if mode == "on":
        _trace_globally()
    if row.startswith("toolkit memory"):
        return anyio.run(_toolkit_memory, row.rsplit(" ", 1)[1], calls)
    if row.startswith("toolkit http"):
        return anyio.run(_toolkit_http, calls)
    return anyio.run(_mcp_memory, calls)


def _in_child(row: str, mode: str, calls: int) -> float:
    code = f"from benchmarks.telemetry import measure; print(measure({row!r}, {mode!r}, {calls}))"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        sys.exit(out.stderr)
    return float(out.stdout.strip().splitlines()[-1])


def run(rounds: int, calls: int, rows: tuple[str, ...] = ROWS) -> dict[str, dict[str, list[float]]]:
    """`{row: {mode: [µs per call, one per round]}}`, each row and mode in a fresh process, rounds alternating."""
    figures: dict[str, dict[str, list[float]]] = {row: {mode: [] for mode in MODES} for row in rows}
    for index in range(rounds):
        for row in rows:
            for mode in MODES if index % 2 == 0 else MODES[::-1]:
                figures[row][mode].append(_in_child(row, mode, calls))
        print(f"round {index + 1}/{rounds}, load {os.getloadavg()[0]:.1f}", file=sys.stderr)
    return figures


def _cell(values: list[float]) -> str:
    return f"{statistics.median(values):,.1f} ({min(values):,.1f}-{max(values):,.1f})"


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.telemetry", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 rounds of 500 calls (default: 5 of 3000)")
    parser.add_argument("--json", action="store_true", help="print the raw figures as JSON")
    args = parser.parse_args(argv)
    rounds, calls = (3, 500) if args.quick else (5, 3000)
    figures = run(rounds, calls)
    if args.json:
        print(json.dumps(figures))
        return
    print("| row (CPU µs per tools/call, median (range)) | tracing off | tracing on | on - off | on / off |")
    print("| --- | --- | --- | --- | --- |")
    for row, modes in figures.items():
        off, on = statistics.median(modes["off"]), statistics.median(modes["on"])
        print(f"| {row} | {_cell(modes['off'])} | {_cell(modes['on'])} | {on - off:+,.1f} | {on / off:.2f} |")


if __name__ == "__main__":
    main(sys.argv[1:])
