"""A server that exercises every protocol feature, for the protocol tests.

Imported, `build()` gives a fresh `Server` (the memory transport); run as a script, it serves stdio:
`python protocol_demo.py [--backend asyncio|trio] [--page-size N] [--max-message-size N] [--shutdown-grace S]`.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Literal

import anyio

from toolkit import Audio, Context, Icon, Image, ResourceLink, Server, ToolError, tool

LogLevel = Literal["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 8
WAV = b"RIFF\x24\x00\x00\x00WAVEfmt "
LOG_LEVELS: tuple[LogLevel, ...] = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
LOGO = Icon(src="https://example.com/add.png", mime_type="image/png", sizes=["48x48"])


@tool
def echo(text: str) -> str:
    """Echo the text back."""
    return text


@tool(title="Add", read_only=True, icons=[LOGO], structured=True)
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
async def count(steps: int, ctx: Context) -> int:
    """Report progress once per step, then return the number of steps."""
    for step in range(1, steps + 1):
        await ctx.report_progress(step, total=steps, message=f"step {step}")
    return steps


@tool
async def chatter(ctx: Context) -> str:
    """Log one message at every level, least severe first."""
    for level in LOG_LEVELS:
        await ctx.log(level, f"a {level} message", logger="demo")
    return "logged"


@tool
def fail() -> str:
    """Fail with a message for the model."""
    raise ToolError("the tool failed on purpose")


@tool
def crash() -> str:
    """Fail with an unexpected exception."""
    raise RuntimeError("a secret detail")


@tool
def shout() -> str:
    """Write to stdout in every way a tool or library might."""
    print("noise from print")
    sys.stdout.write("noise from sys.stdout.write\n")
    sys.stdout.flush()
    sys.stdout.buffer.write(b"noise from sys.stdout.buffer\n")
    sys.stdout.buffer.flush()
    os.write(1, b"noise from os.write(1)\n")
    return "quiet"


@tool
def media() -> list[Audio | Image | ResourceLink]:
    """Return audio, an image and a resource link."""
    link = ResourceLink(uri="file:///notes.txt", name="notes", title="Notes", description="My notes")
    return [Audio(data=WAV), Image(data=PNG), link]


@tool
def whoami(ctx: Context) -> dict[str, str]:
    """Who is calling, over which revision, with which request id."""
    client = ctx.client_info.name if ctx.client_info is not None else "?"
    return {"client": client, "protocolVersion": str(ctx.protocol_version), "requestId": str(ctx.request_id)}


@tool
def big(size: int) -> str:
    """A text of `size` characters."""
    return "x" * size


@tool
async def nap(seconds: float, ctx: Context) -> str:
    """Report that it started, then sleep for `seconds`."""
    await ctx.report_progress(1, message="started")
    await anyio.sleep(seconds)
    return "rested"


@tool
def extra() -> str:
    """A tool that `grow` adds."""
    return "extra"


def build(page_size: int | None = None, max_message_size: int | None = None, shutdown_grace: float = 5.0) -> Server:
    """A fresh server: its own tools, gates and cancellation record (the stateless tools are shared)."""
    server = Server(
        "protocol-demo",
        version="1.2.3",
        title="Protocol demo",
        instructions="Call echo to check the connection.",
        page_size=page_size,
        shutdown_grace=shutdown_grace,
        max_message_size=max_message_size or 16 * 1024 * 1024,
    )
    gates: dict[str, anyio.Event] = {}
    cancelled: list[str] = []

    def gate_for(key: str) -> anyio.Event:
        return gates.setdefault(key, anyio.Event())

    server.add_tool(echo)
    server.add_tool(add)

    @server.tool
    async def wait(key: str) -> str:
        """Wait until `open` is called with the same key, then return the key."""
        await gate_for(key).wait()
        return key

    @server.tool
    async def open(key: str) -> str:
        """Let the calls waiting on `key` finish."""
        gate_for(key).set()
        return key

    @server.tool
    async def block(key: str, ctx: Context) -> str:
        """Report that it started, then never finish; record the key when cancelled."""
        try:
            await ctx.report_progress(1, message="started")
            await anyio.sleep_forever()
        finally:
            cancelled.append(key)
        return key  # pragma: no cover (never reached)

    @server.tool
    def cancellations() -> str:
        """The keys of the `block` calls cancelled so far, comma-separated."""
        return ",".join(cancelled)

    for shared in (count, chatter, fail, crash, shout, media, whoami, big, nap):
        server.add_tool(shared)

    @server.tool
    async def grow() -> str:
        """Add the tool `extra`."""
        server.add_tool(extra)
        return "grown"

    @server.tool
    async def shrink() -> str:
        """Remove the tool `extra`."""
        server.remove_tool("extra")
        return "shrunk"

    return server


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--backend", choices=["asyncio", "trio"], default="asyncio")
    parser.add_argument("--page-size", type=int, default=None)
    parser.add_argument("--max-message-size", type=int, default=None)
    parser.add_argument("--shutdown-grace", type=float, default=5.0)
    args = parser.parse_args()
    build(args.page_size, args.max_message_size, args.shutdown_grace).run(backend=args.backend)


if __name__ == "__main__":
    main()
