"""`python -m benchmarks.memory`: an in-memory `tools/call` through toolkit's own `Client`, per era and kind of tool.

Sequential calls of a sync `add`, an async `add_async` and the sync `add` marked `run_in_thread=False` (`add_inline`,
which runs on the event loop: no thread hand-off) through `Client(server)` (client and server in one
process, real JSON over the in-memory transport), in both eras, beside the floor's in-memory loop
(`benchmarks/_floor_memory.py`: `json.loads`/`json.dumps` over anyio memory streams, the tool called inline). Each
row gives the process's CPU µs per call (client and server: what a busy machine disturbs least) and the wall-clock
calls per second. Rounds alternate the rows, each in a fresh process; each cell is the median over rounds with the
range.

`--against PATH` also runs the same rows with the toolkit of another checkout (e.g. `git archive` of an older commit
unpacked in a folder), interleaved round by round, and prints the ratios: the before/after pair of a change to the
in-memory path.
"""

from __future__ import annotations

import importlib.util
import statistics
import sys
import time
from typing import Any

import anyio

from ._against import arguments, interleaved

ERAS = {"2026-07-28": "2026-07-28", "2025-11-25": "handshake"}
TOOLS = ("add", "add_async", "add_inline")
_MCP_JSONRPC = "mcp add_async, mode=legacy"


async def _calls(client: Any, name: str, calls: int) -> tuple[float, float]:
    """(CPU µs per call, calls per second) over `calls` sequential calls, after a tenth as many untimed."""
    for i in range(max(20, calls // 10)):
        await client.call_tool(name, {"a": i, "b": 1})
    start, cpu = time.perf_counter(), time.process_time()
    for i in range(calls):
        result = await client.call_tool(name, {"a": i, "b": 1})
    wall, spent = time.perf_counter() - start, time.process_time() - cpu
    assert _text(result) == str(calls), result  # the last call's sum: a fast error is not a fast call
    return spent / calls * 1e6, calls / wall


def _text(result: Any) -> str:
    """The text of a call's first content block, whichever side answered (a model, or the floor's dict)."""
    block = result["content"][0] if isinstance(result, dict) else result.content[0]
    return str(block["text"] if isinstance(block, dict) else block.text)


async def _toolkit(protocol: str, name: str, calls: int) -> tuple[float, float]:
    from toolkit import Client, Server

    from ._fixtures import add, add_async

    server = Server("bench-memory")
    server.tool(add)
    server.tool(add_async)
    server.tool(name="add_inline", run_in_thread=False)(add)  # the sync `add` on the event loop: no hand-off
    async with Client(server, protocol=protocol) as client:  # type: ignore[arg-type]
        return await _calls(client, name, calls)


async def _floor(calls: int) -> tuple[float, float]:
    from . import _fixtures, _floor_memory, side_floor

    server = side_floor.new_server()
    side_floor.register(server, _fixtures.add)
    async with _floor_memory.memory_client(server) as session:
        return await _calls(session, "add", calls)


async def _mcp(mode: str, calls: int) -> tuple[float, float]:
    import mcp
    from mcp.server.mcpserver import MCPServer

    from ._fixtures import add_async

    server = MCPServer("bench-memory")
    server.tool()(add_async)
    async with mcp.Client(server, cache=None, mode=mode) as client:
        return await _calls(client, "add_async", calls)


def measure(calls: int) -> dict[str, tuple[float, float]]:
    """One round of every row, in this process: `{row: (CPU µs per call, calls per second)}`; the official SDK's
    rows (its async tool, in its default mode, which dispatches in process without JSON, and in `mode="legacy"`,
    JSON-RPC messages over memory streams) when it is installed (the `bench` extra)."""
    figures = {"floor": anyio.run(_floor, calls)}
    for era, protocol in ERAS.items():
        for name in TOOLS:
            figures[f"{name} {era}"] = anyio.run(_toolkit, protocol, name, calls)
    if importlib.util.find_spec("mcp") is not None:
        for mode in ("auto", "legacy"):
            figures[f"mcp add_async, mode={mode}"] = anyio.run(_mcp, mode, max(30, calls // 3))
    return figures


def _cell(values: list[float], digits: int = 0) -> str:
    return f"{statistics.median(values):,.{digits}f} ({min(values):,.{digits}f}-{max(values):,.{digits}f})"


def _table(runs: dict[str, list[dict[str, Any]]]) -> list[str]:
    labels = list(runs)
    against = "against" in runs
    head = ["row"] + [f"{label}: CPU µs per call" for label in labels] + [f"{label}: calls/s" for label in labels]
    head += ["CPU this / against", "calls/s this / against"] if against else []
    head += [f"{label}: of the floor (calls/s)" for label in labels]
    lines = ["| " + " | ".join(head) + " |", "| --- " * len(head) + "|"]
    for row in runs["this"][0]:
        cells = [_cell([run[row][0] for run in runs[label]], 1) for label in labels]
        cells += [_cell([run[row][1] for run in runs[label]]) for label in labels]
        if against:
            for index in (0, 1):
                pairs = zip(runs["this"], runs["against"], strict=True)
                ratios = [this[row][index] / that[row][index] for this, that in pairs]
                cells.append(_cell(ratios, 2))
        for label in labels:  # per round, against the floor measured in the same process
            cells.append(_cell([run[row][1] / run["floor"][1] * 100 for run in runs[label]]) + " %")
        lines.append(f"| {row} | " + " | ".join(cells) + " |")
    return lines + _against_mcp(runs)


def _against_mcp(runs: dict[str, list[dict[str, Any]]]) -> list[str]:
    """Each checkout's async call against the official SDK's JSON-RPC mode, per round: its CPU per call over toolkit's,
    toolkit's calls per second over its."""
    lines: list[str] = []
    for label, rounds in runs.items():
        for row in (f"add_async {era}" for era in ERAS):
            if _MCP_JSONRPC not in rounds[0]:
                return lines
            cpu = [one[_MCP_JSONRPC][0] / one[row][0] for one in rounds]
            rate = [one[row][1] / one[_MCP_JSONRPC][1] for one in rounds]
            lines.append(f"{label}, {row} against {_MCP_JSONRPC}: CPU {_cell(cpu, 1)}x, calls/s {_cell(rate, 1)}x")
    return lines


def main(argv: list[str]) -> None:
    args = arguments(argv, "memory", __doc__, 3000, "calls")
    runs = interleaved("memory", args.against, args.rounds, args.calls)
    print("\n".join(_table(runs)))


if __name__ == "__main__":
    main(sys.argv[1:])
