"""`python -m benchmarks.asgi`: the server's CPU per HTTP POST `tools/call`, the ASGI app driven in process.

No network, no HTTP parser, no load generator: the same in-process driver as `benchmarks.hops` posts one call after
another to `server.http_app()` (its lifespan running, as under uvicorn) and the process's CPU time is divided by
the calls. What it isolates is toolkit's own share of a POST (the app, the call, the response), per era and per
kind of tool: a sync `add`, an async `add`, and an async `add` that takes a Context and reports progress (its
response is an SSE stream). The driver's own cost is the `floor` row: the same posts to an ASGI app that answers a
fixed JSON reply. Rounds alternate the rows; each cell is the median over rounds with the range.

`--against PATH` also runs the same rows with the toolkit of another checkout (e.g. a `git worktree` of an older
commit), interleaved round by round, and prints the ratios: the before/after pair of a change to the HTTP path.
"""

from __future__ import annotations

import statistics
import sys
import time
from typing import Any

import anyio

from ._against import arguments, interleaved
from .hops import MODERN_META, open_session, running

ERAS = ("2026-07-28", "2025-11-25")
TOOLS = ("add", "add_async", "add_progress")


def _server() -> Any:
    from toolkit import Context, Server

    server = Server("asgi-bench")

    @server.tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @server.tool
    async def add_async(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @server.tool
    async def add_progress(a: int, b: int, ctx: Context) -> int:
        """Add two integers, reporting progress once."""
        await ctx.report_progress(1, total=1)
        return a + b

    return server


async def _floor_app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] == "lifespan":
        await receive()
        await send({"type": "lifespan.startup.complete"})
        await receive()
        await send({"type": "lifespan.shutdown.complete"})
        return
    await receive()
    body = b'{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"3"}]}}'
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def cpu_per_post(app: Any, era: str, name: str, calls: int) -> float:
    """CPU µs per POST over `calls` warm POSTs."""
    call: dict[str, Any] = {"name": name, "arguments": {"a": 1, "b": 2}, "_meta": {"progressToken": 1}}
    async with running(app) as asgi:
        if era == "2025-11-25":
            headers = await open_session(asgi, era)
        else:
            headers = {"mcp-protocol-version": era, "mcp-method": "tools/call", "mcp-name": name}
            call["_meta"] |= MODERN_META
        message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call}
        for _ in range(max(10, calls // 10)):  # warm: worker threads, caches
            await asgi.post(message, headers)
        start = time.process_time()
        for _ in range(calls):
            status, _, body = await asgi.post(message, headers)
        spent = time.process_time() - start
        assert status == 200, body[:300]
        assert b'"3"' in body or b'\\"3\\"' in body, body[:300]
    return spent / calls * 1e6


def measure(calls: int) -> dict[str, float]:
    """One round of every row, in this process: `{row: µs per POST}`."""
    figures: dict[str, float] = {}
    for era in ERAS:
        figures[f"floor {era}"] = anyio.run(cpu_per_post, _floor_app, era, "add", calls)
        for name in TOOLS:
            figures[f"{name} {era}"] = anyio.run(cpu_per_post, _server().http_app(), era, name, calls)
    return figures


def _cell(values: list[float]) -> str:
    return f"{statistics.median(values):,.0f} ({min(values):,.0f}-{max(values):,.0f})"


def main(argv: list[str]) -> None:
    args = arguments(argv, "asgi", __doc__, 2000, "POSTs")
    runs = interleaved("asgi", args.against, args.rounds, args.calls)
    checkouts = list(runs)
    rows = list(runs["this"][0])
    head = (
        "| row (CPU µs per POST, median (range)) | "
        + " | ".join(checkouts)
        + (" | this / against |" if args.against else " |")
    )
    print(head)
    print("| --- " * (len(checkouts) + 1 + bool(args.against)) + "|")
    for row in rows:
        cells = [_cell([run[row] for run in runs[label]]) for label in checkouts]
        if args.against:
            ratios = [this[row] / that[row] for this, that in zip(runs["this"], runs["against"], strict=True)]
            cells.append(f"{statistics.median(ratios):.2f} ({min(ratios):.2f}-{max(ratios):.2f})")
        print(f"| {row} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main(sys.argv[1:])
