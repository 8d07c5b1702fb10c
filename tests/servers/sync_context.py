"""Sync tools that use their Context, served in memory (`build()`) or over stdio: `python sync_context.py BACKEND`."""

from __future__ import annotations

import asyncio
import hashlib
import sys
import threading
import time

from toolkit import Context, Server


def build() -> Server:
    server = Server("sync-context")
    saw_cancel = threading.Event()

    @server.tool
    def steps(n: int, ctx: Context) -> str:
        """Report each step as progress and as a log message, from the worker thread."""
        for step in range(1, n + 1):
            ctx.report_progress(step, total=n, message=f"step {step}")
            ctx.info(f"did step {step}", logger="steps")
        ctx.debug("below the client's level: not sent")
        return f"{n} steps on {threading.current_thread().name}"

    @server.tool
    def crunch(ctx: Context) -> str:
        """Work in chunks until the call is cancelled (at most 60 s), the way a long sync tool should."""
        ctx.report_progress(1, message="started")
        deadline = time.monotonic() + 60
        while not ctx.cancelled and time.monotonic() < deadline:
            hashlib.sha256(bytes(1 << 20)).digest()  # a chunk of real work (hashlib lets go of the GIL)
        if ctx.cancelled:
            saw_cancel.set()
            ctx.info("never sent: the call is cancelled")
        return "finished"

    @server.tool
    def crunch_saw_cancel() -> bool:
        """Whether `crunch` saw its call cancelled (waits up to 10 s for it to notice)."""
        return saw_cancel.wait(10)

    @server.tool
    def own_loop(ctx: Context) -> str:
        """A sync tool running async code of its own: awaiting the Context there is harmless (already sent)."""

        async def inner() -> None:
            await ctx.info("from the tool's own event loop")

        asyncio.run(inner())
        return "ok"

    @server.tool(run_in_thread=False, show_error_details=True)
    def on_the_loop(ctx: Context) -> str:
        ctx.info("cannot wait for this")
        return "unreachable"

    return server


if __name__ == "__main__":
    build().run(backend="trio" if sys.argv[1:] == ["trio"] else "asyncio")
