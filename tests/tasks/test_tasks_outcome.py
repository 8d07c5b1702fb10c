"""A task whose outcome the store fails to write (issue 37, item 4): the write is tried again, and a run that ended
is never renewed, so the task ends (completed once the store takes it, else failed when its lease ends, with an
error the client reads) and never stays `working` until its time to live."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
import wire
from servers import tasks_server

from toolkit import BackendError, MemoryTaskStore
from toolkit._tasks.store import LEASE_EXPIRED, Modify, TaskRecord

pytestmark = pytest.mark.anyio

EXT = "io.modelcontextprotocol/tasks"


class Unwritable(MemoryTaskStore):
    """A store that fails to write a task's end `failures` times (a Redis paused as the tool finishes)."""

    def __init__(self, failures: float) -> None:
        super().__init__()
        self.failures = failures
        self.refused = 0

    async def modify(self, task_id: str, change: Modify) -> TaskRecord | None:
        def ending(record: TaskRecord) -> TaskRecord | None:
            changed = change(record)
            if changed is not None and changed.terminal and self.refused < self.failures:
                self.refused += 1
                raise BackendError("Redis did not answer a task within 0.5 s")
            return changed

        return await super().modify(task_id, ending)


def modern() -> dict[str, Any]:
    envelope = wire.meta()
    envelope[wire.CAPABILITIES_KEY] = {"extensions": {EXT: {}}}
    return envelope


async def ended(store: Unwritable, lease: float) -> dict[str, Any]:
    """A task of `slow` run to its end on a server with `store` and `lease`, polled until it is no longer working."""
    async with wire.memory(tasks_server.build(task_store=store, task_lease=lease)) as peer:
        created = await peer.result("tools/call", {"name": "slow", "arguments": {}, "_meta": modern()})
        with anyio.fail_after(10 + lease):  # before the fix the task stays working for its hour
            while True:
                task: dict[str, Any] = await peer.result("tasks/get", {"taskId": created["taskId"], "_meta": modern()})
                if task["status"] != "working":
                    return task
                await anyio.sleep(0.02)


async def test_an_outcome_the_store_failed_to_write_is_written_again() -> None:
    store = Unwritable(failures=2)
    # The retries must beat the lease (the run ended: nothing renews it): 10 s, so that a stall of the process under
    # load (seconds, on CI's busy machine with coverage) cannot end the task failed before its outcome is kept.
    task = await ended(store, lease=10.0)
    assert (task["status"], task["result"]["content"], store.refused) == (
        "completed",
        [{"type": "text", "text": "slept 0.0"}],
        2,
    )


async def test_an_outcome_the_store_never_takes_ends_the_task_failed_when_its_lease_does() -> None:
    # A short lease: its end is the subject here, and a stall of the process only makes it come later.
    task = await ended(Unwritable(failures=float("inf")), lease=1.0)
    assert (task["status"], task["error"], task["statusMessage"]) == (
        "failed",
        {"code": -32603, "message": LEASE_EXPIRED},
        LEASE_EXPIRED,
    )
