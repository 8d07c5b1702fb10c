"""The TypeScript SDK 1.32's `client.experimental.tasks` (2025-11-25) against `toolkit serve --http` of task tools."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from served import HERE, Served, run_node_script


@pytest.fixture(scope="module")
def served() -> Iterator[Served]:
    server = Served(HERE / "servers" / "tasks_server.py")
    yield server
    server.close()


def test_the_typescript_sdk_runs_a_task_polls_it_lists_it_and_cancels_another(served: Served) -> None:
    assert run_node_script("ts_tasks_client.mjs", served.url) == {
        "tools": [
            ["slow", "optional"],
            ["blocking", "required"],
            ["confirm_delete", "optional"],
            ["gated", "required"],
            ["fails", "optional"],
            ["plain", None],
        ],
        "first": "taskCreated",
        "last": "result",
        "result": [{"type": "text", "text": "slept 0.2"}],
        "status": "completed",
        "listed": [True],
        "again": [{"type": "text", "text": "slept 0.2"}],
        "cancelled": "cancelled",
    }
