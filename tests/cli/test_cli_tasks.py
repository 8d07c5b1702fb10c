"""`toolkit call` on a tool the server runs as a task, and `toolkit task get|result|cancel`, against the tasks peer
of tests/tasks_peer.py served over stdio (its tasks move on a step per poll). The commands whose terminal or
process matters run as processes; the later commands that pick up a detached task, and the errors, run `main` in
the test's process (each call a new client, as each command is)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import tasks_peer
from cli_helpers import InProcess, outcome, toolkit
from served import Served
from servers import client_tasks
from tasks_peer import WHEN, command

PEER = ["--", *command()]
TASKS_PEER = Path(tasks_peer.__file__)
STEPS = "task task-1: working (step 1 of 2)\ntask task-1: working (step 2 of 2)\ntask task-1: completed (step 2 of 2)\n"


def test_call_shows_the_tasks_state_as_it_changes_then_prints_its_result() -> None:
    run = toolkit("call", "--stdio", "slow", "n=1", *PEER)

    assert outcome(run) == (0, 'slow done: {"n": 1}\n', STEPS)


def test_call_quiet_shows_only_the_result() -> None:
    assert outcome(toolkit("call", "-q", "--stdio", "slow", "n=2", *PEER)) == (0, 'slow done: {"n": 2}\n', "")


def test_a_task_that_asks_is_answered_at_the_terminal() -> None:
    run = toolkit("call", "--stdio", "ask", *PEER, answers="Ada\na\n")

    assert (run.returncode, run.stdout) == (0, "hello Ada\n")
    assert run.stderr.startswith("task task-1: input_required\n? Your name?\n")
    assert run.stderr.endswith("task task-1: completed\n")


def test_a_tool_that_is_not_a_task_answers_as_before() -> None:
    assert outcome(toolkit("call", "--stdio", "echo", "x=1", *PEER)) == (0, "at once: {'x': 1}\n", "")


def test_detach_needs_a_server_at_a_url(in_process: InProcess) -> None:
    run = in_process("call", "--detach", "--stdio", "slow", *PEER)

    assert outcome(run) == (
        2,
        "",
        "toolkit: error: --detach needs a server at a URL: a server started --stdio stops when toolkit call exits, "
        "and its tasks with it\n",
    )


def test_task_get_of_an_unknown_task_is_the_servers_error_in_both_eras(in_process: InProcess) -> None:
    modern = in_process("task", "get", "nope", "--stdio", *PEER)
    handshake = in_process("task", "get", "nope", "--protocol", "handshake", "--stdio", *PEER)

    error = "toolkit: error: the server refused: Failed to retrieve task: Task not found (code -32602)\n"
    assert outcome(modern) == outcome(handshake) == (2, "", error)


def test_task_needs_an_action_an_id_and_a_target(in_process: InProcess) -> None:
    no_target = in_process("task", "get", "task-1")
    bad_action = in_process("task", "wait", "task-1", "http://127.0.0.1:9/mcp")

    assert (no_target.returncode, bad_action.returncode) == (2, 2)
    assert "TARGET is required" in no_target.stderr
    assert "invalid choice: 'wait'" in bad_action.stderr


def test_over_http_a_detached_task_is_picked_up_again_by_later_commands(in_process: InProcess) -> None:
    served = Served(TASKS_PEER, "--http", script=True)
    try:
        url = served.url
        detached = in_process("call", "--detach", url, "slow", "n=7")
        first = in_process("task", "get", "task-1", url)
        raw = in_process("task", "get", "task-1", url, "--raw")
        result = in_process("task", "result", "task-1", url)
        in_process("call", "--detach", url, "slow", "n=8")
        cancelled = in_process("task", "cancel", "task-2", url)
        after = in_process("task", "result", "task-2", url)
    finally:
        served.close()

    assert outcome(detached) == (
        0,
        "task-1\n",
        f"toolkit: task task-1 runs on; its result: toolkit task result task-1 {url}\n",
    )
    assert outcome(first) == (0, "task task-1: working (step 1 of 2)\n", "")
    assert json.loads(raw.stdout) == {
        "task_id": "task-1",
        "status": "working",
        "status_message": "step 2 of 2",
        "created_at": WHEN,
        "last_updated_at": WHEN,
        "ttl": 60.0,
        "poll_interval": 0.01,
    }
    assert outcome(result) == (0, 'slow done: {"n": 7}\n', "task task-1: completed (step 2 of 2)\n")
    assert outcome(cancelled) == (0, "cancelled task-2\n", "")
    assert outcome(after) == (2, "", "task task-2: cancelled\ntoolkit: error: task task-2 was cancelled\n")


def test_call_runs_a_toolkit_task_tool_and_shows_its_states() -> None:
    target = f"{Path(client_tasks.__file__)}:build"
    run = toolkit("call", target, "count", "n=3")
    asked = toolkit("call", target, "rebuild", "name=search", answers="y\n")

    assert (run.returncode, run.stdout) == (0, "counted to 3\n")
    # Each state seen by a poll (how many "working" lines depends on the machine's pace: none when the task ends
    # before the first poll), each with the status its progress set, then the end.
    *seen, last = run.stderr.splitlines()
    assert re.fullmatch(r"task \S+: completed", last), run.stderr
    assert all(re.fullmatch(r"task \S+: working( \(step \d \(\d/3\)\))?", line) for line in seen), run.stderr
    assert (asked.returncode, asked.stdout) == (0, "rebuilt search\n")
    assert "input_required\n? Rebuild search? [y/N]: " in asked.stderr


def test_call_refuses_arguments_that_do_not_fit_before_a_task_is_made(in_process: InProcess) -> None:
    run = in_process("call", f"{Path(client_tasks.__file__)}:build", "count", "n=x")

    # The tool's own answer, as for a tool that is no task: no task made, none shown working then completed.
    assert outcome(run) == (
        1,
        "",
        "Invalid arguments for tool 'count':\n"
        '- n: Input should be a valid integer, unable to parse string as an integer (got "x")\n',
    )
