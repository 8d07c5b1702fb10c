"""`ctx.report_progress` inside a task: the task's `statusMessage` while it works, in both eras, as `tasks/get` (and so
`ToolTask.watch()` and `toolkit call`) shows it; the end clears it. `ctx.log` in a task: the server's own log."""

from __future__ import annotations

import logging
import threading

import anyio
import pytest
import wire

from toolkit import Client, Context, Server

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("protocol", ["2026-07-28", "handshake"])
async def test_progress_in_a_task_is_its_status_message_until_it_ends(
    protocol: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="toolkit.tools")
    release = threading.Event()  # the tool runs on the task loop's thread
    server = Server("progress", task_poll_interval=0.01)

    @server.tool(task="required")
    async def pages(ctx: Context) -> str:
        """Read some pages."""
        await ctx.info("reading")
        await ctx.report_progress(3, 10, "pages")
        await anyio.to_thread.run_sync(release.wait)
        return "read"

    messages: list[str | None] = []
    async with Client(server, protocol=protocol) as client:  # type: ignore[arg-type]
        task = await client.start_task("pages")
        with anyio.fail_after(wire.TIMEOUT):
            async for info in task.watch():
                messages.append(info.status_message)
                if info.status_message == "pages (3/10)":
                    release.set()
        result = await task

    assert result.text == "read"
    assert "pages (3/10)" in messages
    # (this task's records: the task loop's thread is the process's, and another test's task may log as this one runs)
    logged = [r.getMessage() for r in caplog.records if r.name == "toolkit.tools"]
    assert [m for m in logged if m.startswith(f"task {task.id}: ")] == [f"task {task.id}: reading"]
    assert task.info is not None
    assert (task.info.status, task.info.status_message) == ("completed", None)
