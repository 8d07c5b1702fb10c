"""A server written with the official `mcp` SDK (2.x `MCPServer`): toolkit's client talks to it over stdio.

Run: `python tests/interop/sdk_server.py` (serves stdio until stdin closes), or with `--http` (serves its Streamable
HTTP app on uvicorn, 127.0.0.1 and a port of the system's choosing, printing its URL first, until terminated).
"""

from __future__ import annotations

import warnings

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPDeprecationWarning
from pydantic import BaseModel

# ctx.debug/ctx.warning warn that MCP logging is deprecated (2026-07-28); keep the test output quiet.
warnings.filterwarnings("ignore", category=MCPDeprecationWarning)

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


@mcp.tool()
async def chatty(ctx: Context) -> str:
    """Log at two levels."""
    await ctx.debug("debug message")
    await ctx.warning("warning message")
    return "logged"


@mcp.tool()
async def block(ctx: Context) -> str:
    """Report that it started, then wait until cancelled."""
    await ctx.report_progress(1, message="started")
    await anyio.sleep_forever()
    return "unreachable"


def _serve_http() -> None:
    import socket
    import sys

    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)  # connections wait in the backlog until uvicorn accepts them: the URL is good at once
    print(f"http://127.0.0.1:{sock.getsockname()[1]}/mcp", flush=True)
    server = uvicorn.Server(uvicorn.Config(mcp.streamable_http_app(), log_level="warning"))
    sys.exit(anyio.run(lambda: server.serve(sockets=[sock])))


if __name__ == "__main__":
    import sys

    if "--http" in sys.argv:
        _serve_http()
    else:
        mcp.run()
