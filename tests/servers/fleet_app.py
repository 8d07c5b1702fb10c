"""The server of the fleet tests (tests/fleet.py): tools of every row of docs/deploy.md's table, served by several
processes behind a round-robin proxy, at module level as a deployment writes it.

Named `http-app` 1.0.0 like tests/servers/http_app.py, so that the servers' health probe knows it. From the
environment (docs/deploy.md): `MCP_SECRET`, `MCP_SESSION_TTL` and `MCP_EVENTS_TTL` when set, and the backend the
processes share: `MCP_REDIS_URL` (a `RedisBackend`, its timeout `MCP_REDIS_TIMEOUT`), else none (`toolkit serve
--workers N` gives its workers the machine's own).
`held` says which process asks (`pid N:` at the start of its question), so that a test can kill that one.
"""

from __future__ import annotations

import os
import socket
from typing import Any

import anyio

from toolkit import Context, Form, Server, tool

NAME = Form({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]})

server = Server("http-app", version="1.0.0")


@server.tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool
def worker() -> int:
    """The id of the process that served the call."""
    return os.getpid()


@server.tool
async def ticks(count: int, ctx: Context) -> str:
    """Report progress `count` times (`step N` each), then answer."""
    for step in range(1, count + 1):
        await ctx.report_progress(step, total=count, message=f"step {step}")
    return f"{count} ticks"


@server.tool(confirm="Really purge?")
def purge() -> str:
    """Confirmed before it runs."""
    return "purged"


@server.tool
async def greet(ctx: Context) -> str:
    """Ask the user's name in a form, and greet them."""
    answer = await ctx.elicit("Your name?", NAME)
    return f"hello {answer.data['name']}" if answer.data else f"no name ({answer.action})"


@server.tool
async def held(ctx: Context) -> str:
    """Ask a question that says which process asks (2025-11-25: a 2026-07-28 round must ask the same each time)."""
    answer = await ctx.elicit(f"pid {os.getpid()}: go on?", NAME)
    return f"went on ({answer.action})"


@server.tool
async def summarize(text: str, ctx: Context) -> str:
    """Ask the client's model for a summary."""
    reply = await ctx.sample(f"Summarize {text}", max_tokens=50)
    return f"summary: {reply.text}"


@server.tool
async def wait(port: int, ctx: Context) -> str:
    """Report progress once, then wait until cancelled (a minute at most), and say so on 127.0.0.1:`port`."""
    await ctx.report_progress(1, total=2)
    try:
        await anyio.sleep(60)
    except anyio.get_cancelled_exc_class():
        with socket.create_connection(("127.0.0.1", port), timeout=5) as told:
            told.sendall(f"cancelled in {os.getpid()}".encode())
        raise
    return "not cancelled"


@server.tool
async def chatty(ctx: Context) -> str:
    """Log at info and at error: what the client receives depends on its `logging/setLevel`."""
    await ctx.info("an info")
    await ctx.error("an error")
    return "said"


@tool
def spare() -> str:
    """Added and removed at run time by `change`."""
    return "spare"


@server.tool
def change() -> str:
    """Toggle this process's `spare` tool: the listeners of every process hear that the list
    changed, whichever process they listen on."""
    if "spare" in server.tools:
        server.remove_tool("spare")
        return "changed"
    server.add_tool(spare)
    return "changed"


@server.tool
async def poll(count: int, ctx: Context) -> str:
    """Close the call's SSE stream after each of `count` progress reports: the client resumes it each time (SEP-1699),
    behind round robin on another process."""
    for done in range(1, count + 1):
        await ctx.report_progress(done, total=count)
        await ctx.close_sse_stream()
    return "polled"


@server.tool
async def dropped(ctx: Context) -> str:
    """Report progress whose message asks the fleet's proxy to drop the client's connection (tests/fleet_proxy.py),
    then go on: the client resumes the stream on another process, which replays the rest from the backend."""
    await ctx.report_progress(1, total=3, message="fleet-proxy: drop the connection here")
    await ctx.report_progress(2, total=3)
    await anyio.lowlevel.checkpoint()
    await ctx.report_progress(3, total=3)
    return "resumed after a drop"


@server.tool(task="optional")
async def report(weeks: int, ctx: Context) -> str:
    """A long job as a task: started on one process, its progress, questions and result read on any (the tasks live
    in the backend's store)."""
    await ctx.report_progress(1, total=2, message="half")
    answer = await ctx.elicit(f"Your name, for the {weeks} weeks?", NAME)
    return f"report of {weeks} weeks for {answer.data['name'] if answer.data else answer.action} by {os.getpid()}"


def _options() -> dict[str, Any]:
    options: dict[str, Any] = {"secret": os.environ.get("MCP_SECRET")}
    # Short lives for the load test, whose Redis must be back to its key count soon after the load.
    if ttl := os.environ.get("MCP_SESSION_TTL"):
        options["session_ttl"] = float(ttl)
    if url := os.environ.get("MCP_REDIS_URL"):
        from toolkit import RedisBackend

        # A Redis timeout for a hang only (`MCP_REDIS_TIMEOUT`, 10 s): under coverage on a loaded machine a round trip
        # (a new connection) took over the production 0.5 s, and a request then failed with 503. A test of a slow
        # Redis gives its own; a stopped Redis refuses connections at once, so no timeout is waited for then.
        timeout = float(os.environ.get("MCP_REDIS_TIMEOUT", "10"))
        events_ttl = float(os.environ.get("MCP_EVENTS_TTL", "60"))
        options["backend"] = RedisBackend(url, timeout=timeout, events_ttl=events_ttl)
    return options


app = server.http_app(**_options())
