"""A toolkit server for the interop tests: the official SDK client talks to it over stdio.

Run: `python tests/interop/toolkit_server.py` (serves stdio until stdin closes).
"""

from __future__ import annotations

import anyio
from typing_extensions import TypedDict

from toolkit import (
    AudioContent,
    BlobResourceContents,
    ContentBlock,
    Context,
    EmbeddedResource,
    Image,
    ResourceLink,
    Server,
    TextResourceContents,
    ToolError,
    tool,
)

# The smallest valid PNG: 1x1 transparent pixel.
PIXEL = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000001e221bc330000000049454e44ae426082"
)

server = Server("toolkit-interop", version="1.2.3", instructions="Tools for interop tests.")
_cancelled = anyio.Event()


class Point(TypedDict):
    x: int
    y: int


@server.tool
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


@server.tool(structured=True)
def add(a: int, b: int) -> int:
    """Add two integers (a structured, non-object result)."""
    return a + b


@server.tool
def point(x: int, y: int) -> Point:
    """Make a point (a structured object result)."""
    return {"x": x, "y": y}


@server.tool
def pixel() -> Image:
    """A 1x1 PNG image."""
    return Image(data=PIXEL)


@server.tool
def media() -> list[ContentBlock]:
    """Every other kind of content: audio, a resource link, embedded text and blob resources."""
    return [
        AudioContent(data="UklGRg==", mime_type="audio/wav"),
        ResourceLink(uri="file:///notes.txt", name="notes", title="Notes", mime_type="text/plain", size=5),
        EmbeddedResource(resource=TextResourceContents(uri="file:///a.txt", mime_type="text/plain", text="hello")),
        EmbeddedResource(resource=BlobResourceContents(uri="file:///b.bin", blob="AAE=")),
    ]


@server.tool(
    title="Describe a thing",
    read_only=True,
    open_world=False,
    icons=[{"src": "data:image/png;base64,iVBORw0KGgo=", "mimeType": "image/png", "sizes": ["16x16"]}],
    meta={"example.com/category": "demo"},
)
def describe(thing: str) -> str:
    """Describe `thing` (a tool with a title, annotations, an icon and _meta)."""
    return f"{thing} is a thing"


@server.tool
def fail(reason: str) -> str:
    """Always fail with `reason`."""
    raise ToolError(reason)


@server.tool
async def count(steps: int, ctx: Context) -> str:
    """Report progress `steps` times, then finish."""
    for step in range(1, steps + 1):
        await ctx.report_progress(step, total=steps, message=f"step {step}")
    return f"counted {steps}"


@server.tool
async def chatty(ctx: Context) -> str:
    """Log one message at each of four levels."""
    await ctx.debug("debug message")
    await ctx.info("info message")
    await ctx.warning("warning message", logger="interop")
    await ctx.error({"problem": "error message"})
    return "logged"


@server.tool
async def block(ctx: Context) -> str:
    """Report that it started, then wait until cancelled."""
    await ctx.report_progress(1, message="started")
    try:
        await anyio.sleep_forever()
    finally:
        _cancelled.set()
    return "unreachable"


@server.tool
async def was_cancelled() -> bool:
    """Whether a `block` call has been cancelled (waits up to 5 s for it to happen)."""
    with anyio.move_on_after(5):
        await _cancelled.wait()
    return _cancelled.is_set()


@server.tool
def grow(name: str) -> str:
    """Add a tool called `name` to this server (clients are told the tool list changed)."""

    def added() -> str:
        return name

    added.__name__ = name
    server.add_tool(tool(added))
    return f"added {name}"


if __name__ == "__main__":
    server.run()
