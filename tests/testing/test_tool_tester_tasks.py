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


@tool(task="optional")
async def rebuild(name: str, ctx: Context) -> str:
    """Rebuild an index, after asking."""
    if not (await ctx.confirm(f"Rebuild {name}?")).accepted:
        return "left alone"
    return f"rebuilt {name}"


@tool(task="required")
def report(weeks: int) -> str:
    """Only ever a task."""
    return f"report of {weeks} weeks"


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
@pytest.mark.parametrize("protocol", ["2026-07-28", "handshake"])
def test_a_task_tool_runs_as_a_task_and_its_states_are_kept(
    protocol: Literal["2026-07-28", "handshake"], backend: Literal["asyncio", "trio"]
) -> None:
    with ToolTester([rebuild, report], protocol=protocol, backend=backend) as tester:
        result = tester.call_task("report", weeks=3)
        states = [state.status for state in tester.task_states]
        task_ids = {state.task_id for state in tester.task_states}
        plain = tester.call("report", weeks=4)  # call_tool runs a task-only tool as a task, and waits

    assert (result.text, plain.text) == ("report of 3 weeks", "report of 4 weeks")
    assert states[-1] == "completed"
    assert len(task_ids) == 1  # one task, seen in each state


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
@pytest.mark.parametrize("protocol", ["2026-07-28", "handshake"])
@pytest.mark.parametrize(("script", "expected"), [("accept", "rebuilt search"), ("decline", "left alone")])
def test_a_task_tools_question_is_answered_by_the_script(
    protocol: Literal["2026-07-28", "handshake"],
    backend: Literal["asyncio", "trio"],
    script: Literal["accept", "decline"],
    expected: str,
) -> None:
    # The question waits in the task (input_required) until the script answers it: in 2026-07-28 through
    # tasks/update, in 2025-11-25 on tasks/result.
    with ToolTester(rebuild, protocol=protocol, backend=backend, elicitation=script) as tester:
        result = tester.call_task("rebuild", name="search")
        questions = [question.message for question in tester.elicitations]
        states = [state.status for state in tester.task_states]

    assert (result.text, questions) == (expected, ["Rebuild search?"])
    assert "input_required" in states
    assert states[-1] == "completed"
