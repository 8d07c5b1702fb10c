"""A server of task tools, for tests/tasks/ (in memory, over stdio, over HTTP).

Run over stdio: `python tests/servers/tasks_server.py` (`--sqlite PATH` keeps its tasks in a SQLite file).
"""

from __future__ import annotations

import sys
import threading

import anyio
from pydantic import BaseModel

from toolkit import Context, Server, ToolError

#: Set by a test to let `gate` finish (in memory only).
GATE = threading.Event()


class Confirm(BaseModel):
    confirm: bool


def build(**options: object) -> Server:
    """A fresh server with the task tools."""
    server = Server("tasks", version="1.0.0", **options)  # type: ignore[arg-type]

    @server.tool(task="optional")
    async def slow(seconds: float = 0.0) -> str:
        """Sleep, then answer."""
        await anyio.sleep(seconds)
        return f"slept {seconds}"

    @server.tool(task="required")
    def blocking(seconds: float = 0.0) -> str:
        """A sync tool that blocks a worker thread."""
        import time

        time.sleep(seconds)
        return "blocked"

    @server.tool(task="optional")
    async def confirm_delete(filename: str, ctx: Context) -> str:
        """Ask, then answer."""
        answer = await ctx.elicit(f"Delete {filename}?", Confirm)
        if answer.action == "accept" and answer.data is not None and answer.data.confirm:
            return f"deleted {filename}"
        return f"kept {filename}"

    @server.tool(task="optional")
    async def fails() -> str:
        """A tool error."""
        raise ToolError("it failed")

    @server.tool
    def plain(name: str = "world") -> str:
        """Never a task."""
        return f"Hello, {name}!"

    return server


if __name__ == "__main__":
    build().run()
