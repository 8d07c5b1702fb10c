"""The ASGI apps `python -m benchmarks.http` serves: each Python side's server with the same three tools.

- `add`: a sync tool, `a + b`;
- `add_async`: the same tool `async`;
- `add_progress`: an async tool that takes the framework's Context and reports progress once (`1` of `1`).

Each is written the way that framework's users write it (toolkit's `ctx: Context` and `await ctx.report_progress`,
the official SDK's `MCPServer` Context, fastmcp's). This module keeps its annotations evaluated at definition time
(no `from __future__ import annotations`): the frameworks read `ctx: Context` from the function, and each side's
`Context` is imported only in that side's worker. The Node sides are in `benchmarks/node/`.

The `floor` is no framework: a bare ASGI app on the same uvicorn that reads the POST, `json.loads` it and answers the
JSON-RPC result of a call of `add` (the text and structured result the frameworks send), with no MCP at all. No
server on that stack can beat it; how close one gets is the honest measure of its overhead.
"""

import json
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


async def _lifespan(receive: Any, send: Any) -> None:
    while True:
        message = await receive()
        kind = message["type"].rsplit(".", 1)[1]  # startup, shutdown
        await send({"type": f"lifespan.{kind}.complete"})
        if kind == "shutdown":
            return


def _reply(message: dict[str, Any]) -> dict[str, Any]:
    """The floor's answer: `a + b` to a tools/call, an empty result to anything else (`initialize`)."""
    if message.get("method") != "tools/call":
        return {"jsonrpc": "2.0", "id": message["id"], "result": {}}
    arguments = message["params"]["arguments"]
    value = arguments["a"] + arguments["b"]
    content = [{"type": "text", "text": str(value)}]
    result = {"content": content, "structuredContent": {"result": value}, "isError": False}
    return {"jsonrpc": "2.0", "id": message["id"], "result": result}


async def floor(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """The floor: read the POST, `json.loads`, answer the call's JSON-RPC result (202 to a notification)."""
    if scope["type"] == "lifespan":
        await _lifespan(receive, send)
        return
    body = b""
    more = True
    while more:
        message = await receive()
        body += message.get("body", b"")
        more = message.get("more_body", False)
    request = json.loads(body)
    if "id" not in request:
        await send({"type": "http.response.start", "status": 202, "headers": [(b"content-length", b"0")]})
        await send({"type": "http.response.body", "body": b""})
        return
    reply = json.dumps(_reply(request)).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(reply)).encode())]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": reply})


def _floor() -> Any:
    return floor


APPS = {"toolkit": _toolkit, "mcp": _mcp, "fastmcp": _fastmcp, "floor": _floor}


def app(side: str) -> Any:
    """`side`'s ASGI app serving the three tools."""
    return APPS[side]()
