"""A server for the process tests of `toolkit serve` (tests/cli/test_cli_process.py), set up by the environment:

- `EDGES_GRACE`: its `shutdown_grace` (default 5 s);
- `EDGES_FAIL`: its lifespan fails to start, with that text;
- `EDGES_APP`: the module makes `app = server.http_app(auth=...)` (a bearer token, `EDGES_TOKEN`), and with
  `EDGES_APP=secret` a shared secret too; `EDGES_STORE`: a shared session store at that path;
- it prints a line at import, which must never reach a stdio client.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio

from toolkit import Context, Identity, Server, SqliteSessionStore, StaticTokenVerifier

print("edges: imported")  # a module that talks as it loads


@asynccontextmanager
async def lifespan(server: Server) -> AsyncIterator[None]:
    if "EDGES_FAIL" in os.environ:
        raise RuntimeError(os.environ["EDGES_FAIL"])
    yield


server = Server("edges", lifespan=lifespan, shutdown_grace=float(os.environ.get("EDGES_GRACE", "5")))


@server.tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool
def pid() -> int:
    """The id of the process that served the call."""
    return os.getpid()


@server.tool
async def ask(ctx: Context) -> str:
    """Ask the client to confirm, then say what it answered (a question the tests leave unanswered)."""
    await ctx.report_progress(1, message="asking")
    answer = await ctx.elicit("Go on?", {"type": "object", "properties": {}})
    return answer.action


@server.tool
async def nap(seconds: float, ctx: Context) -> str:
    """Report that it started, then sleep for `seconds`."""
    await ctx.report_progress(1, message="started")
    await anyio.sleep(seconds)
    return "rested"


if "EDGES_APP" in os.environ:
    verifier = StaticTokenVerifier({os.environ["EDGES_TOKEN"]: Identity("alice", frozenset())})
    secret = "a shared secret of at least thirty-two bytes" if os.environ["EDGES_APP"] == "secret" else None
    store = SqliteSessionStore(os.environ["EDGES_STORE"]) if "EDGES_STORE" in os.environ else None
    app = server.http_app(
        auth=verifier, authorization_servers=["https://auth.example.com"], secret=secret, session_store=store
    )


if __name__ == "__main__":
    import sys

    if "--http" in sys.argv:
        server.run(transport="http", port=0)
    else:
        server.run()
