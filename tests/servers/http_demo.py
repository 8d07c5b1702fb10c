"""The demo server of the HTTP tests: served by `toolkit serve tests/servers/http_demo.py --http --port 0`, and
in process as `build()` (a fresh server with `add` and `steps`; served, `worker` says which process answered)."""

from __future__ import annotations

import os

from toolkit import Context, Server, tool


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
async def steps(count: int, ctx: Context) -> str:
    """Report progress and log, then answer."""
    for done in range(1, count + 1):
        await ctx.report_progress(done, total=count)
    await ctx.info("stepped")
    return f"{count} steps"


@tool
def worker() -> int:
    """The id of the process that served the call."""
    return os.getpid()


def build() -> Server:
    """A fresh demo server: `add` and `steps`."""
    return Server("http-demo", version="1.0.0", tools=[add, steps])


server = build()
server.add_tool(worker)
