"""A server written with the official Python SDK 1.x (`mcp<2`, `FastMCP`: 2025-11-25 only), the SDK that langchain and
openai-agents still install. The suite's own environment has `mcp` 2.x, so this file runs on the Python of a venv of
its own (`sdk1_requirements.txt`, made by the `sdk1_python` fixture of tests/gateway/test_interop_sdks.py).

Run: `python sdk1_server.py` serves stdio; with `--http` it serves Streamable HTTP (sessions) on uvicorn, 127.0.0.1
and a port of the system's choosing, printing its URL first, until terminated.
"""
# mypy: ignore-errors
# (mypy checks this file against the suite's mcp 2.x, which has no FastMCP)

from __future__ import annotations

import os
import socket
import sys

import anyio
import uvicorn
from mcp.server.fastmcp import Context, FastMCP
from pydantic import BaseModel

mcp = FastMCP("py-sdk1")


class Cancelled:
    """The calls of `slow` the client cancelled, in this process; `one` is set when one was (made in the server's
    event loop, on first use)."""

    count = 0
    one: anyio.Event | None = None

    @classmethod
    def event(cls) -> anyio.Event:
        if cls.one is None:
            cls.one = anyio.Event()
        return cls.one


class Sum(BaseModel):
    sum: int


class Name(BaseModel):
    name: str


@mcp.tool()
def add(a: int, b: int) -> Sum:
    """Add two integers."""
    return Sum(sum=a + b)


@mcp.tool()
async def count(steps: int, ctx: Context) -> str:
    """Report progress `steps` times, then finish."""
    for step in range(1, steps + 1):
        await ctx.report_progress(step, total=steps, message=f"step {step}")
    return f"counted {steps}"


@mcp.tool()
async def greet(ctx: Context) -> str:
    """Ask the user's name, then greet them."""
    answer = await ctx.elicit("Your name?", Name)
    return f"hello {answer.data.name}" if answer.action == "accept" else f"no name ({answer.action})"


@mcp.tool()
async def slow(ctx: Context) -> str:
    """Report that it started, then wait until cancelled."""
    await ctx.report_progress(1, message="started")
    try:
        await anyio.sleep_forever()
    except anyio.get_cancelled_exc_class():
        Cancelled.count += 1
        Cancelled.event().set()
        raise
    return "unreachable"


@mcp.tool(name="cancelled")
async def how_many_cancelled() -> int:
    """Once a call of `slow` was cancelled (waited for up to 10 s: a cancellation reaches the server after the client
    moved on), how many were."""
    with anyio.move_on_after(10):
        await Cancelled.event().wait()
    return Cancelled.count


@mcp.tool()
def pid() -> int:
    """The id of the process that serves the call."""
    return os.getpid()


def _serve_http() -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)  # connections wait in the backlog until uvicorn accepts them: the URL is good at once
    print(f"http://127.0.0.1:{sock.getsockname()[1]}/mcp", flush=True)
    server = uvicorn.Server(uvicorn.Config(mcp.streamable_http_app(), log_level="warning"))
    anyio.run(lambda: server.serve(sockets=[sock]))


if __name__ == "__main__":
    if "--http" in sys.argv:
        _serve_http()
    else:
        mcp.run()
