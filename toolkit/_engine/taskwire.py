"""A task as each era says it (`Era.tasks`): what a server with task tools declares, how a call asks for a task,
whom an anonymous caller's task belongs to, the task object and the results of the `tasks/*` methods.

- `EXPERIMENTAL` (2025-11-25, the handshake era): the experimental tasks of that revision. The client asks for a task
  with `params.task`; the result is `{"task": ...}`; a finished task cannot be cancelled; `tasks/cancel` answers
  the task.
- `BY_EXTENSION` (2026-07-28): the extension `io.modelcontextprotocol/tasks` (SEP-2663). The server decides, for a
  client that declared the extension; the result is the task with `resultType: "task"`; `tasks/get` inlines the
  task's result, error or questions; cancelling a finished task changes nothing.

`tasks.py` runs the tasks, the same in every era, and asks the request's era for these.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from toolkit._errors import ProtocolError
from toolkit._protocol.jsonrpc import METHOD_NOT_FOUND, MISSING_CLIENT_CAPABILITY
from toolkit._protocol.meta import TASKS_EXTENSION as EXTENSION

if TYPE_CHECKING:
    from toolkit._definition.tool import Tool
    from toolkit._tasks.store import TaskRecord

    from .session import SessionState

__all__ = ["BY_EXTENSION", "EXPERIMENTAL", "EXTENSION", "TaskWire"]

_NEEDS_EXTENSION: dict[str, Any] = {"requiredCapabilities": {"extensions": {EXTENSION: {}}}}
_FIRST_TASKS = "2025-11-25"  # the first revision with tasks (experimental)


def _iso(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class TaskWire:
    """The experimental tasks of 2025-11-25 (the handshake era); `BY_EXTENSION` changes what 2026-07-28 changed."""

    _ttl, _poll = "ttl", "pollInterval"  # the task object's names of its time to live and poll interval
    server_decides = False
    """The server decides per request whether a call is a task (else the client asks for one)."""
    refuses_finished = True
    """`tasks/cancel` of a finished task is an error (-32602)."""

    def capabilities(self, version: str) -> dict[str, Any]:
        """What a server with task tools adds to its capabilities in `version`."""
        if version < _FIRST_TASKS:
            return {}
        return {"tasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}}

    def wanted(self, tool: Tool[Any, Any], params: Mapping[str, Any], state: SessionState) -> str | None:
        """Whether this call runs as a task: `"now"` when the client asked for one (`params.task`), else None.

        Raises:
            ProtocolError: -32601 for a task asked of a tool that cannot be one, or a `required` tool called plainly.
        """
        asked = isinstance(params.get("task"), Mapping) and state.version >= _FIRST_TASKS
        if asked and tool.task is None:
            raise ProtocolError(METHOD_NOT_FOUND, f"Tool {tool.name!r} does not support tasks (taskSupport forbidden)")
        if not asked and tool.task == "required":
            raise ProtocolError(METHOD_NOT_FOUND, f"Tool {tool.name!r} must be called as a task (taskSupport required)")
        return "now" if asked else None

    def check_client(self, state: SessionState) -> None:
        """Check that the client may use the `tasks/*` methods (here: any client of a session may)."""

    def anonymous_owner(self, state: SessionState, task_id: str) -> str:
        """Who an anonymous caller's task belongs to: its session (its key)."""
        return "session/" + state.key

    def task(self, record: TaskRecord, *, detailed: bool) -> dict[str, Any]:
        """The task's wire object (`detailed`: as `tasks/get` and a listen stream show it)."""
        task: dict[str, Any] = {
            "taskId": record.task_id,
            "status": record.status,
            "createdAt": _iso(record.created_at),
            "lastUpdatedAt": _iso(record.updated_at),
            self._ttl: record.ttl_ms,
            self._poll: record.poll_interval_ms,
        }
        if record.status_message is not None:
            task["statusMessage"] = record.status_message
        return task

    def created(self, task: dict[str, Any]) -> dict[str, Any]:
        """The result of a call made a task (`CreateTaskResult`)."""
        return {"task": task}

    def outcome(self, wire: dict[str, Any]) -> dict[str, Any]:
        """A task's `CallToolResult` as the store keeps it: what the plain call would have answered."""
        return wire

    def cancelled(self, task: dict[str, Any]) -> dict[str, Any]:
        """What `tasks/cancel` answers (before the era completes it): the task."""
        return task


class _ByExtension(TaskWire):
    _ttl, _poll = "ttlMs", "pollIntervalMs"
    server_decides = True
    refuses_finished = False

    def capabilities(self, version: str) -> dict[str, Any]:
        return {"extensions": {EXTENSION: {}}}

    def wanted(self, tool: Tool[Any, Any], params: Mapping[str, Any], state: SessionState) -> str | None:
        """A task when the client declared the tasks extension and the tool may be one: `"now"`, or `"later"`, a tool
        whose questions before `ctx.begin_task()` are the request's rounds.

        Raises:
            ProtocolError: -32021 for a `required` tool and a client without the extension.
        """
        declared = _declared(state)
        if not declared and tool.task == "required":
            raise ProtocolError(
                MISSING_CLIENT_CAPABILITY,
                f"Missing required client capability: tool {tool.name!r} runs only as a task ({EXTENSION})",
                _NEEDS_EXTENSION,
            )
        if not declared or tool.task is None:
            return None
        return "later" if tool.asks_before_task else "now"

    def check_client(self, state: SessionState) -> None:
        """Check that the client declared the tasks extension.

        Raises:
            ProtocolError: -32021, it did not.
        """
        if not _declared(state):
            raise ProtocolError(
                MISSING_CLIENT_CAPABILITY, f"Missing required client capability: {EXTENSION}", _NEEDS_EXTENSION
            )

    def anonymous_owner(self, state: SessionState, task_id: str) -> str:
        """The task itself: there is no session, and its id (128 random bits) is the bearer capability the spec
        allows (there is no `tasks/list` to find it by)."""
        return "task/" + task_id

    def task(self, record: TaskRecord, *, detailed: bool) -> dict[str, Any]:
        """The task, and when `detailed` (`DetailedTask`) its result, error or questions."""
        task = super().task(record, detailed=detailed)
        if not detailed:
            return task
        if record.status == "completed" and record.result is not None:
            task["result"] = record.result
        elif record.status == "failed" and record.error is not None:
            task["error"] = record.error
        elif record.status == "input_required":
            task["inputRequests"] = record.input_requests
        return task

    def created(self, task: dict[str, Any]) -> dict[str, Any]:
        return {**task, "resultType": "task"}

    def outcome(self, wire: dict[str, Any]) -> dict[str, Any]:
        wire["resultType"] = "complete"  # what the plain call would have answered
        return wire

    def cancelled(self, task: dict[str, Any]) -> dict[str, Any]:
        return {}


def _declared(state: SessionState) -> bool:
    """Whether the request's client declared the tasks extension."""
    extensions = state.client_capabilities.get("extensions")
    return isinstance(extensions, Mapping) and isinstance(extensions.get(EXTENSION), Mapping)


EXPERIMENTAL = TaskWire()
BY_EXTENSION = _ByExtension()
