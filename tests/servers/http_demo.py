"""A small server for the HTTP tests: served by `toolkit serve tests/servers/http_demo.py --http --port 0`."""

from __future__ import annotations

import os

from toolkit import Context, Server

server = Server("http-demo", version="1.0.0")


@server.tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool
async def steps(count: int, ctx: Context) -> str:
    """Report progress and log, then answer."""
    for done in range(1, count + 1):
        await ctx.report_progress(done, total=count)
    await ctx.info("stepped")
    return f"{count} steps"


@server.tool
def worker() -> int:
    """The id of the process that served the call."""
    return os.getpid()
