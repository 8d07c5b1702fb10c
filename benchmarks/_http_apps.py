"""The ASGI apps `python -m benchmarks.http` serves: each Python side's server with the same three tools.

- `add`: a sync tool, `a + b`;
- `add_async`: the same tool `async`;
- `add_progress`: an async tool that takes the framework's Context and reports progress once (`1` of `1`).

Each is written the way that framework's users write it (toolkit's `ctx: Context` and `await ctx.report_progress`,
the official SDK's `MCPServer` Context, fastmcp's). This module keeps its annotations evaluated at definition time
(no `from __future__ import annotations`): the frameworks read `ctx: Context` from the function, and each side's
`Context` is imported only in that side's worker. The TypeScript SDK's side is `benchmarks/ts_server.mjs`.
"""

from typing import Any

TOOLS = ("add", "add_async", "add_progress")
# Every worker of every side: toolkit's signed session ids verify on any worker that holds it.
SECRET = "benchmark secret, shared by the workers, 32+ bytes"


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


async def add_async(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def _toolkit() -> Any:
    from toolkit import Context, Server

    async def add_progress(a: int, b: int, ctx: Context) -> int:
        """Add two integers, reporting progress once."""
        await ctx.report_progress(1, total=1)
        return a + b

    server = Server("bench")
    for fn in (add, add_async, add_progress):
        server.tool(fn)
    return server.http_app(secret=SECRET)


def _mcp() -> Any:
    from mcp.server.mcpserver import Context, MCPServer

    async def add_progress(a: int, b: int, ctx: Context) -> int:
        """Add two integers, reporting progress once."""
        await ctx.report_progress(1, total=1)
        return a + b

    sdk = MCPServer("bench")
    for fn in (add, add_async, add_progress):
        sdk.tool()(fn)
    return sdk.streamable_http_app()


def _fastmcp() -> Any:
    from fastmcp import Context, FastMCP

    async def add_progress(a: int, b: int, ctx: Context) -> int:
        """Add two integers, reporting progress once."""
        await ctx.report_progress(1, total=1)
        return a + b

    fast = FastMCP("bench")
    for fn in (add, add_async, add_progress):
        fast.tool(fn)
    return fast.http_app()


APPS = {"toolkit": _toolkit, "mcp": _mcp, "fastmcp": _fastmcp}


def app(side: str) -> Any:
    """`side`'s ASGI app serving the three tools."""
    return APPS[side]()
