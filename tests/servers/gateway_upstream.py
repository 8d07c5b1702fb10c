"""An upstream for the gateway tests (tests/gateway/): imported, `build()` gives a fresh `Server`; run as a script it
serves stdio. Its tools return every kind of result (text, an image, structured content, a tool error), report
progress, log, wait until cancelled, say which process served them, and one kills its own process mid-call."""

from __future__ import annotations

import os
import signal
import sys

import anyio
from typing_extensions import TypedDict

from toolkit import Context, Image, Server, ToolError

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 8


class Weather(TypedDict):
    city: str
    celsius: float


def build(name: str = "upstream") -> Server:
    server = Server(name, version="2.0.0")

    @server.tool(read_only=True)
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @server.tool
    def picture() -> Image:
        """A tiny PNG."""
        return Image(data=PNG, mime_type="image/png")

    @server.tool
    def weather(city: str) -> Weather:
        """The weather in a city."""
        return {"city": city, "celsius": 21.5}

    @server.tool
    def fail(reason: str) -> str:
        """Fail with a tool error."""
        raise ToolError(f"refused: {reason}")

    @server.tool
    async def ticks(count: int, ctx: Context) -> str:
        """Report progress `count` times, then answer."""
        for done in range(1, count + 1):
            await ctx.report_progress(done, total=count, message=f"tick {done}")
        return f"{count} ticks"

    @server.tool
    async def chatty(text: str, ctx: Context) -> str:
        """Log `text` at info and at warning, then answer."""
        await ctx.info(f"info: {text}", logger="chatty")
        await ctx.warning(f"warning: {text}")
        return "logged"

    @server.tool
    async def hang() -> str:
        """Never answer (until cancelled)."""
        await anyio.sleep_forever()
        return "never"

    @server.tool
    def pid() -> int:
        """The id of the process that served the call."""
        return os.getpid()

    @server.tool
    def die() -> str:
        """End this process at once, mid-call."""
        sys.stdout.flush()
        os.kill(os.getpid(), signal.SIGKILL)
        return "unreachable"

    return server


if __name__ == "__main__":
    build().run()
