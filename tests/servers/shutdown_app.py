"""Calls that outlast the server's shutdown grace (0.5 s), one of each way a call is served, for the tests of what
their clients get when the server stops: `toolkit serve shutdown_app.py --http`, or `python shutdown_app.py
[asyncio|trio]` on stdio (each tool then says on stderr when it has started: `NAME: started`), or in process with
`build(started=..., release=...)`.

Over HTTP: `nap` (a Context that notifies) answers on an event stream in both eras; `doze` (async, no Context) and
`snooze` (sync) with a JSON response; `ponder` (may ask its client) too, on a connection of its own in 2025-11-25.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable

import anyio

from toolkit import Context, Server


def _say(name: str) -> None:
    print(f"{name}: started", file=sys.stderr, flush=True)


def build(started: Callable[[str], object] = _say, release: threading.Event | None = None) -> Server:
    """The server; `started(name)` is called once each tool runs (from a worker thread for `snooze`), and `release`
    ends `snooze`'s wait early (a thread cannot be cancelled: a test process releases it at the end)."""
    server = Server("shutdown", shutdown_grace=0.5)
    released = release if release is not None else threading.Event()

    @server.tool
    def pid() -> int:
        """The server's process id (a client started the process: the test signals it)."""
        return os.getpid()

    @server.tool
    async def nap(seconds: float, ctx: Context) -> str:
        """Report progress, then sleep for `seconds`."""
        await ctx.report_progress(1, message="started")
        started("nap")
        await anyio.sleep(seconds)
        return "rested"

    @server.tool
    async def doze(seconds: float) -> str:
        """Sleep for `seconds`."""
        started("doze")
        await anyio.sleep(seconds)
        return "rested"

    @server.tool
    def snooze(seconds: float) -> str:
        """Sleep for `seconds` on a worker thread, or until released."""
        started("snooze")
        released.wait(seconds)
        return "rested"

    @server.tool
    async def ponder(seconds: float, ctx: Context) -> str:
        """Sleep for `seconds`; ask the client whether to go on when `seconds` is negative."""
        if seconds < 0:
            await ctx.confirm("Go on?")
        started("ponder")
        await anyio.sleep(seconds)
        return "pondered"

    return server


server = build()

if __name__ == "__main__":
    server.run(backend=sys.argv[1] if len(sys.argv) > 1 else "asyncio")  # type: ignore[arg-type]
