"""A server written with the official `mcp` SDK (2.x `MCPServer`): toolkit's client talks to it over stdio.

Run: `python tests/interop/sdk_server.py` (serves stdio until stdin closes).
"""

from __future__ import annotations

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel

mcp = MCPServer("sdk-interop", instructions="An official SDK server.")


class Point(BaseModel):
    x: int
    y: int


@mcp.tool()
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


@mcp.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@mcp.tool()
def point(x: int, y: int) -> Point:
    """Make a point."""
    return Point(x=x, y=y)


@mcp.tool()
def fail(reason: str) -> str:
    """Always fail with `reason`."""
    raise ToolError(reason)


@mcp.tool()
async def count(steps: int, ctx: Context) -> str:
    """Report progress `steps` times, then finish."""
    for step in range(1, steps + 1):
        await ctx.report_progress(step, total=steps, message=f"step {step}")
    return f"counted {steps}"


if __name__ == "__main__":
    mcp.run()
