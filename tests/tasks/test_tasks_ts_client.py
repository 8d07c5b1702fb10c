"""The TypeScript SDK 1.32's `client.experimental.tasks` (2025-11-25) against `toolkit serve --http` of task tools."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from served import CONFORMANCE, HERE, TIMEOUT, Served, install_node


@pytest.fixture(scope="module")
def node() -> Path:
    return install_node()


@pytest.fixture(scope="module")
def served() -> Iterator[Served]:
    server = Served(HERE / "servers" / "tasks_server.py")
    yield server
    server.close()


def test_the_typescript_sdk_runs_a_task_polls_it_lists_it_and_cancels_another(node: Path, served: Served) -> None:
    run = subprocess.run(
        [str(node), str(CONFORMANCE / "ts_tasks_client.mjs"), served.url],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout) == {
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
