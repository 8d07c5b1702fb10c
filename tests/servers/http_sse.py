"""A server for the SSE resumption tests on a real socket: `toolkit serve tests/servers/http_sse.py --http`, or
`python tests/servers/http_sse.py PORT`, which signs sessions with a fixed key (a restarted process then still serves
the sessions of the one before, as workers sharing a `secret=` do) and asks clients to reconnect after 50 ms.
"""

from __future__ import annotations

import sys

import anyio

from toolkit import Context, Server, tool

server = Server("http-sse", version="1.0.0")
gates: list[anyio.Event] = []  # one per call of `hold`; `release` lets the last one go


@server.tool
async def poll(count: int, ctx: Context) -> str:
    """Close the call's SSE stream after each of `count` progress reports (SEP-1699 polling)."""
    for done in range(1, count + 1):
        await ctx.report_progress(done, total=count)
        await ctx.close_sse_stream()
    return "polled"


@server.tool
async def hold(ctx: Context) -> str:
    """Progress 1, then wait for `release` (called in another request), progress 2, answer."""
    gate = anyio.Event()
    gates.append(gate)
    await ctx.report_progress(1, total=2)
    await gate.wait()
    await ctx.report_progress(2, total=2)
    return "held"


@server.tool
def release() -> str:
    """Let `hold` go on."""
    gates[-1].set()
    return "released"


@tool
def extra() -> str:
    """Added by `change`."""
    return "extra"


@server.tool
def change() -> str:
    """Add or remove a tool: the sessions' GET streams hear that the list changed."""
    if "extra" in server.tools:
        server.remove_tool("extra")
    else:
        server.add_tool(extra)
    return "changed"


if __name__ == "__main__":
    server.run(
        transport="http",
        port=int(sys.argv[1]),
        secret="the key every process of this test server shares",
        sse_retry=0.05,  # clients reconnect after 50 ms
    )
