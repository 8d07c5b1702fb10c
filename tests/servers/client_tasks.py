"""Task tools for the client's task tests (tests/tasks/test_client_tasks.py): in memory, over stdio, over HTTP.

Run over stdio: `python tests/servers/client_tasks.py`.
"""

from __future__ import annotations

import threading

import anyio

from toolkit import Context, Server, ToolError

#: Set by a test to let `gate` finish (in memory: the tool runs on this process's task loop).
GATE = threading.Event()


def build() -> Server:
    """A fresh server with the task tools, polled every 10 ms."""
    server = Server("client-tasks", version="1.0.0", task_poll_interval=0.01)

    @server.tool(task="optional")
    async def count(n: int, ctx: Context) -> str:
        """Count to n."""
        for i in range(1, n + 1):
            await ctx.report_progress(i, n, f"step {i}")
        return f"counted to {n}"

    @server.tool(task="optional")
    def gate() -> str:
        """Wait for the test to open the gate (at most 10 seconds)."""
        return "opened" if GATE.wait(10) else "timed out"

    @server.tool(task="optional")
    async def forever() -> str:
        """Never finish (until cancelled)."""
        await anyio.sleep_forever()
        return "unreachable"

    @server.tool(task="optional")
    async def rebuild(name: str, ctx: Context) -> str:
        """Rebuild an index, after asking."""
        if not (await ctx.confirm(f"Rebuild {name}?")).accepted:
            return "left alone"
        return f"rebuilt {name}"

    @server.tool(task="required")
    def report(weeks: int) -> str:
        """Only ever a task."""
        return f"report of {weeks} weeks"

    @server.tool(task="optional")
    async def fails() -> str:
        """A tool error."""
        raise ToolError("it failed")

    return server


if __name__ == "__main__":
    build().run()
