"""The client's side of MCP tasks: a handle on a tool call the server runs in the background, in either era.

2026-07-28 (the extension `io.modelcontextprotocol/tasks`): the client declares the extension on its `tools/call`
and the server decides whether to answer with a task (`resultType: "task"`). The client polls `tasks/get`, whose
answer carries the final result (or JSON-RPC error) once the task is done, and the questions of a task that waits
for input (`inputRequests`), which it answers with `tasks/update`; `tasks/cancel` asks the server to stop.

2025-11-25 (experimental tasks): the client asks for a task with `params.task` when the server declares
`tasks.requests.tools.call`; it polls `tasks/get` and takes the result with `tasks/result`, which blocks until the
task ends and is where the server asks its questions (`elicitation/create` and the like, as server requests, which
the client's handlers answer as for a plain call).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Generator, Mapping
from dataclasses import dataclass
from typing import Any, Literal

import anyio

from toolkit._errors import ProtocolError, ToolkitError
from toolkit._matcher import error_of
from toolkit._protocol.jsonrpc import INTERNAL_ERROR
from toolkit._protocol.types import CallToolResult

__all__ = [
    "TASKS_EXTENSION",
    "TaskCancelledError",
    "TaskInfo",
    "TaskStatus",
    "TaskWire",
    "ToolTask",
]

TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
"""The extension's identifier (2026-07-28), declared in `extensions` of the capabilities."""

TaskStatus = Literal["working", "input_required", "completed", "failed", "cancelled"]
"""A task's status: `working` and `input_required` go on; `completed`, `failed` and `cancelled` are final."""
_FINAL = frozenset(("completed", "failed", "cancelled"))
_DEFAULT_POLL = 1.0  # seconds between polls when the server suggests no interval
_MIN_POLL = 0.01  # never a tight loop, whatever the server suggests


@dataclass(frozen=True, slots=True)
class TaskInfo:
    """A task's state, as the server last reported it."""

    task_id: str
    """The server's id for the task: give it to [`Client.task`][toolkit.Client.task] to pick the task up again."""
    status: str
    """`working`, `input_required` (the task waits for an answer), or, once it has ended, `completed`, `failed` or
    `cancelled`."""
    status_message: str | None = None
    """What the server says about the task's progress, if anything."""
    created_at: str | None = None
    """When the task was created (ISO 8601)."""
    last_updated_at: str | None = None
    """When its status last changed (ISO 8601)."""
    ttl: float | None = None
    """Seconds from creation the server keeps the task (`None`: unlimited, or not said)."""
    poll_interval: float | None = None
    """Seconds between polls the server suggests."""

    @property
    def done(self) -> bool:
        """The status is final: `completed`, `failed` or `cancelled`."""
        return self.status in _FINAL

    @classmethod
    def from_wire(cls, task: Mapping[str, Any]) -> TaskInfo:
        """A `Task` of either era (`ttlMs`/`pollIntervalMs` in 2026-07-28, `ttl`/`pollInterval` in 2025-11-25).

        Raises:
            ProtocolError: -32603 when it has no string `taskId` or `status`.
        """
        task_id, status = task.get("taskId"), task.get("status")
        if not isinstance(task_id, str) or not isinstance(status, str):
            raise ProtocolError(INTERNAL_ERROR, "the server sent a task without a taskId or status")
        message = task.get("statusMessage")
        return cls(
            task_id,
            status,
            message if isinstance(message, str) else None,
            _text(task.get("createdAt")),
            _text(task.get("lastUpdatedAt")),
            _seconds(task.get("ttlMs", task.get("ttl"))),
            _seconds(task.get("pollIntervalMs", task.get("pollInterval"))),
        )


class TaskCancelledError(ToolkitError):
    """The task was cancelled (by `cancel()`, another client, or the server) before it gave a result.

    Attributes:
        task_id: The task's id.
        status_message: What the server said about it, if anything.
    """

    def __init__(self, task_id: str, status_message: str | None = None) -> None:
        text = f"task {task_id} was cancelled" + (f": {status_message}" if status_message else "")
        super().__init__(text)
        self.task_id = task_id
        self.status_message = status_message


Request = Callable[[str, dict[str, Any]], Awaitable[Any]]
Answer = Callable[[str, Any, str], Awaitable[dict[str, Any]]]
Finish = Callable[[str | None, Any], Awaitable[CallToolResult]]


@dataclass(frozen=True, slots=True)
class TaskWire:
    """What a handle needs of its client: the era; how to send a task request, answer a question, and turn a raw
    result into a checked `CallToolResult` (for the tool named, if known); the event a status notification for a task
    sets (`woken`); what to call once the task has ended (`done`); and how to hear a task's status notifications
    (2026-07-28: a `subscriptions/listen` stream, held open until cancelled; `listen`)."""

    modern: bool
    request: Request
    answer: Answer
    finish: Finish
    woken: Callable[[str], anyio.Event]
    done: Callable[[str], None]
    listen: Callable[[str], Coroutine[Any, Any, None]]


class ToolTask:
    """A tool call the server runs as a task: await it for the result, or poll, watch and cancel it.

    Made by [`Client.start_task`][toolkit.Client.start_task] (a new call) and [`Client.task`][toolkit.Client.task]
    (a task started earlier, by this connection or another). `await task` is `await task.result()`. The questions a
    task asks (elicitation, sampling, roots) are answered by the client's handlers, as for a plain call.

    A server that does not run the call as a task (it does not support tasks, or chose not to, as a 2026-07-28
    server may) answers with the result at once: the handle is then done, and its `id` is `None`.
    """

    def __init__(
        self,
        wire: TaskWire,
        task_id: str | None,
        name: str | None = None,
        *,
        info: TaskInfo | None = None,
        raw: Any = None,
    ) -> None:
        self._wire = wire
        self._id = task_id
        self._info = info
        self._raw = raw  # the final result (a dict), once known
        self._error: ProtocolError | None = None
        self._answered: set[str] = set()  # the input request keys answered (2026-07-28: never twice)
        self._pending: Any = None  # the questions of the last state seen, when it was input_required
        self._name = name

    @property
    def id(self) -> str | None:
        """The task's id (`None` when the server answered with the result at once)."""
        return self._id

    @property
    def info(self) -> TaskInfo | None:
        """The task's state when last seen (by the call that created it, or a poll); `None` before the first poll of
        a handle from [`Client.task`][toolkit.Client.task]."""
        return self._info

    @property
    def done(self) -> bool:
        """Whether the task has ended, as last seen (without asking the server)."""
        return self._id is None or (self._info is not None and self._info.done)

    def __await__(self) -> Generator[Any, None, CallToolResult]:
        return self.result().__await__()

    async def status(self) -> TaskInfo:
        """Ask the server for the task's state now (`tasks/get`).

        Raises:
            ProtocolError: -32602 for a task the server does not know (expired, another user's, a wrong id).
        """
        if self._id is None:
            raise RuntimeError("the server answered this call at once: there is no task to ask about")
        if self._info is not None and self._info.done and (self._raw is not None or self._error is not None):
            return self._info
        got = await self._wire.request("tasks/get", {"taskId": self._id})
        if not isinstance(got, dict):
            raise ProtocolError(INTERNAL_ERROR, "the server answered tasks/get with something that is not a task")
        return self._seen(got)

    def _seen(self, task: dict[str, Any]) -> TaskInfo:
        """Take in a task's state (tasks/get, a cancel): its final result or error too, in 2026-07-28."""
        info = self._info = TaskInfo.from_wire(task)
        self._pending = task.get("inputRequests") if info.status == "input_required" else None
        if self._wire.modern and info.status == "completed" and isinstance(task.get("result"), dict):
            self._raw = task["result"]
        elif self._wire.modern and info.status == "failed":
            self._error = error_of(task.get("error"))
        return info

    async def watch(self, *, poll_interval: float | None = None) -> AsyncIterator[TaskInfo]:
        """Follow the task until it ends: yields its state each time it changes, answers its questions on the way.

        Args:
            poll_interval: Seconds between polls, instead of the interval the server suggests (1 s when it
                suggests none). A status notification from the server wakes the poll early.

        Raises:
            ProtocolError: the server refused a request (an unknown or expired task: -32602).
        """
        if self._id is None:
            return
        last: TaskInfo | None = None
        while True:
            info = await self.status()
            if info != last:
                last = info
                yield info
            if info.done:
                await self._settle()
                return
            if info.status == "input_required" and await self._answer():
                continue  # answered: poll again at once
            await self._pause(info, poll_interval)

    async def _pause(self, info: TaskInfo, poll_interval: float | None) -> None:
        interval = poll_interval if poll_interval is not None else info.poll_interval
        interval = max(_MIN_POLL, _DEFAULT_POLL if interval is None else interval)
        woken = self._wire.woken(info.task_id)
        with anyio.move_on_after(interval):
            await woken.wait()

    async def _answer(self) -> bool:
        """Answer the task's questions: whether the wait for its next state should skip the pause."""
        assert self._id is not None
        if not self._wire.modern:
            # 2025-11-25: the server asks its questions while tasks/result waits for the end of the task.
            await self._take_result()
            return True
        pending = self._pending if isinstance(self._pending, dict) else {}
        fresh = {key: r for key, r in pending.items() if key not in self._answered and isinstance(r, dict)}
        if not fresh:
            return False
        responses = {}
        for key, request in fresh.items():  # one at a time, in the server's order, as for a plain call
            responses[key] = await self._wire.answer(str(request.get("method")), request.get("params"), key)
        self._answered.update(responses)
        await self._wire.request("tasks/update", {"taskId": self._id, "inputResponses": responses})
        return True

    async def _take_result(self) -> None:
        """2025-11-25: `tasks/result`, which blocks until the task ends: its result, or the error it ended with."""
        if self._raw is not None or self._error is not None:
            return
        try:
            self._raw = await self._wire.request("tasks/result", {"taskId": self._id})
        except ProtocolError as exc:
            if type(exc) is not ProtocolError:  # the connection closed, a message too large: not the task's error
                raise
            self._error = exc

    async def _settle(self) -> None:
        """The task ended: fetch its result where the era keeps it apart, and let the client forget it."""
        assert self._info is not None
        if not self._wire.modern and self._info.status != "cancelled":
            await self._take_result()
        self._wire.done(self._info.task_id)

    async def result(self, *, poll_interval: float | None = None) -> CallToolResult:
        """Wait for the task to end and return its result (a tool that failed gives `is_error=True`, as a call).

        Args:
            poll_interval: As for [`watch`][toolkit.ToolTask.watch].

        Raises:
            TaskCancelledError: the task was cancelled.
            ProtocolError: the task failed with a JSON-RPC error (its code and message), or the server refused a
                request (-32602: the task is unknown to it, or expired).
        """
        if self._wire.modern and self._id is not None and not self.done:
            # 2026-07-28: status notifications (notifications/tasks) wake the polls early, where the server sends them.
            failed: Exception | None = None
            async with anyio.create_task_group() as tg:
                tg.start_soon(self._wire.listen, self._id)
                try:
                    await self._follow(poll_interval)
                except Exception as exc:  # raised below, as itself rather than in an ExceptionGroup
                    failed = exc
                tg.cancel_scope.cancel()
            if failed is not None:
                raise failed
        else:
            await self._follow(poll_interval)
        if self._info is not None and self._info.status == "cancelled":
            raise TaskCancelledError(self._info.task_id, self._info.status_message)
        if self._error is not None:
            raise self._error
        if self._raw is None:
            raise ProtocolError(INTERNAL_ERROR, f"task {self.id} ended without a result")
        return await self._wire.finish(self._name, self._raw)

    async def _follow(self, poll_interval: float | None) -> None:
        async for _ in self.watch(poll_interval=poll_interval):
            pass

    async def cancel(self) -> None:
        """Ask the server to cancel the task (`tasks/cancel`). Cancellation is cooperative: the task may still end
        otherwise, when it finished first (`result()` then gives that result).

        Raises:
            ProtocolError: -32602 for a task the server does not know, or (2025-11-25) one that has already ended.
        """
        if self._id is None:
            return
        got = await self._wire.request("tasks/cancel", {"taskId": self._id})
        if not self._wire.modern and isinstance(got, dict) and "status" in got:
            self._seen(got)  # 2025-11-25 answers with the task, now cancelled


def created_task(raw: Any, modern: bool) -> TaskInfo | None:
    """The task a `tools/call` created, or None when the server answered with the result itself."""
    if not isinstance(raw, dict):
        return None
    if modern:
        return TaskInfo.from_wire(raw) if raw.get("resultType") == "task" else None
    task = raw.get("task")
    return TaskInfo.from_wire(task) if isinstance(task, dict) and "content" not in raw else None


def notified_task(method: str, params: Mapping[str, Any]) -> str | None:
    """The id of the task a status notification is about (`notifications/tasks`, `notifications/tasks/status`)."""
    if method not in ("notifications/tasks", "notifications/tasks/status"):
        return None
    task_id = params.get("taskId")
    return task_id if isinstance(task_id, str) else None


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _seconds(value: Any) -> float | None:
    return value / 1000 if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0 else None
