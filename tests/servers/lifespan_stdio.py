"""A stdio server whose lifespan and exit say so on stderr, for the process-level shutdown tests.

`python lifespan_stdio.py [--backend asyncio|trio] [--shutdown-grace S]`. The script sets a SIGTERM handler of
its own before `run()`, and says after it whether that handler is back.
"""

from __future__ import annotations

import argparse
import atexit
import signal
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import anyio.lowlevel

from toolkit import Context, Server


@asynccontextmanager
async def lifespan(server: Server) -> AsyncIterator[None]:
    print("lifespan: started", file=sys.stderr, flush=True)
    try:
        yield
    finally:
        await anyio.lowlevel.checkpoint()  # cleanup that awaits, as closing a database does
        print("lifespan: cleaned up", file=sys.stderr, flush=True)


def build(shutdown_grace: float) -> Server:
    server = Server("lifespan-stdio", lifespan=lifespan, shutdown_grace=shutdown_grace)

    @server.tool
    def hello(name: str) -> str:
        """A sync tool: it runs on a worker thread."""
        return f"hello {name}"

    @server.tool
    async def nap(seconds: float, ctx: Context) -> str:
        """Report that it started, then sleep for `seconds`."""
        await ctx.report_progress(1, message="started")
        await anyio.sleep(seconds)
        return "rested"

    return server


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--backend", choices=["asyncio", "trio"], default="asyncio")
    parser.add_argument("--shutdown-grace", type=float, default=5.0)
    args = parser.parse_args()
    atexit.register(lambda: print("atexit: ran", file=sys.stderr, flush=True))

    def mine(signum: int, frame: object) -> None:  # the script's own handler: run() must put it back
        raise SystemExit(99)

    signal.signal(signal.SIGTERM, mine)
    build(args.shutdown_grace).run(backend=args.backend)
    print(f"run: returned; SIGTERM handler restored: {signal.getsignal(signal.SIGTERM) is mine}", file=sys.stderr)


if __name__ == "__main__":
    main()
