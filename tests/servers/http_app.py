"""`app = server.http_app()` at module level, as a deployment writes it, for the tests that serve it on uvicorn
workers, gunicorn, hypercorn and granian (tests/asgi_servers.py).

The shared secret, and when set the session store the workers share (`MCP_SESSION_STORE`, a file) and the body
limit (`MCP_MAX_BODY_SIZE`), come from the environment, as in docs/deploy.md. `tagged` is the same app with an
`X-Served-By` header (the worker's pid) on every response, so that a test knows which worker answered a request
whose body cannot say it (a DELETE, a 404).
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import anyio

from toolkit import Context, Server, SqliteSessionStore

server = Server("http-app", version="1.0.0")


@server.tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool
async def ticks(count: int, ctx: Context) -> str:
    """Report progress `count` times, yielding between ticks, then answer."""
    for done in range(1, count + 1):
        await ctx.report_progress(done, total=count)
        await anyio.lowlevel.checkpoint()
    return f"{count} ticks"


@server.tool
def worker() -> int:
    """The id of the process that served the call."""
    return os.getpid()


_store = os.environ.get("MCP_SESSION_STORE")
_limit = os.environ.get("MCP_MAX_BODY_SIZE")
app = server.http_app(
    secret=os.environ["MCP_SECRET"],
    session_store=SqliteSessionStore(_store) if _store else None,
    max_body_size=int(_limit) if _limit else None,
)

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]


async def tagged(
    scope: Scope, receive: Callable[[], Awaitable[Message]], send: Callable[[Message], Awaitable[None]]
) -> None:
    async def send_tagged(message: Message) -> None:
        if message["type"] == "http.response.start":
            served_by = (b"x-served-by", str(os.getpid()).encode())
            message = {**message, "headers": [*message.get("headers", []), served_by]}
        await send(message)

    await app(scope, receive, send_tagged)
