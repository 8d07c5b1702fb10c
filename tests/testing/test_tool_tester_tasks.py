"""ToolTester.call_task: a tool called as a task through the real client, in both eras and on both event loops."""

from __future__ import annotations

from typing import Literal

import pytest

from toolkit import Context, tool
from toolkit.testing import Progress, ToolTester


@tool
async def count(n: int, ctx: Context) -> str:
    """Count to n, reporting each step."""
    for i in range(1, n + 1):
        await ctx.report_progress(i, n)
    return f"counted to {n}"


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
@pytest.mark.parametrize("protocol", ["2026-07-28", "handshake"])
def test_a_tool_the_server_runs_at_once_gives_its_result_and_no_task_states(
    protocol: Literal["2026-07-28", "handshake"], backend: Literal["asyncio", "trio"]
) -> None:
    with ToolTester(count, protocol=protocol, backend=backend) as tester:
        result = tester.call_task("count", n=2)
        states = list(tester.task_states)
        progress = list(tester.progress)

    assert (result.text, states) == ("counted to 2", [])
    assert progress == [Progress(1, 2, None), Progress(2, 2, None)]
