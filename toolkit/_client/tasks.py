"""The client's side of MCP tasks, in either era: a handle on a tool call the server runs in the background
(`ToolTask`), and the client's part of them (`ClientTasks`: starting a call as a task, waking the polls).

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

import contextlib
import functools
from collections.abc import AsyncIterator, Awaitable, Callable, Generator, Mapping
from dataclasses import dataclass
from typing import Any, Literal, Protocol

import anyio

from toolkit._asking.handlers import call_with_input
from toolkit._errors import MessageError, ProtocolError, ToolkitError
from toolkit._matcher import error_of
from toolkit._protocol.client_eras import HANDSHAKE_ERA, ClientEra
from toolkit._protocol.jsonrpc import INTERNAL_ERROR
from toolkit._protocol.meta import CAPABILITIES_KEY, TASKS_EXTENSION
from toolkit._protocol.types import CallToolResult, ToolDefinition

from .progress import ProgressCallback, ProgressCallbacks

__all__ = [
    "ClientTasks",
    "TaskCancelledError",
    "TaskClient",
    "TaskInfo",
    "TaskStatus",
    "ToolTask",
]

TaskStatus = Literal["working", "input_required", "completed", "failed", "cancelled"]
"""A task's status: `working` and `input_required` go on; `completed`, `failed` and `cancelled` are final."""
_FINAL = frozenset(("completed", "failed", "cancelled"))
_DEFAULT_POLL = 1.0  # seconds between polls when the server suggests no interval
_MIN_POLL = 0.01  # never a tight loop, whatever the server suggests
_CANCEL_GRACE = 5.0  # seconds a cancelled call waits for its task's tasks/cancel to be answered


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


class TaskRequest(Protocol):
    """How the client sends a request (its era's `_meta` added, traced): the result; a `stream` ends with the
    server's `notifications/cancelled` (a `subscriptions/listen`) and gives None."""

    def __call__(self, method: str, params: dict[str, Any], *, stream: bool = False) -> Awaitable[Any]: ...


Answer = Callable[[str, Any, str], Awaitable[dict[str, Any]]]
Finish = Callable[[str | None, Any], Awaitable[CallToolResult]]


@dataclass(frozen=True, slots=True)
class TaskClient:
    """What the client's tasks use of the `Client` that makes them (it imports this module: it is named by what it
    does, not by its class)."""

    capabilities: dict[str, Any]
    """The capabilities the client declares (the tasks add the extension to them, 2026-07-28)."""
    request: TaskRequest
    """Sends a request in the connection's era (its `_meta` added, traced)."""
    answer: Answer
    """Answers one of the server's questions (`method`, `params`, the input request's key) with the handlers."""
    max_input_rounds: int
    """How many times one call may ask for input before it fails (2026-07-28)."""
    finish: Finish
    """Turns a raw result into a checked `CallToolResult` (against the output schema of the tool named, if known)."""
    progress: ProgressCallbacks
    """The progress callbacks of the client's calls (a task's token is held until the task ends)."""
    list_tools: Callable[[], Awaitable[Any]]
    """Lists the server's tools (each one's `execution.taskSupport` is then learned: `ClientTasks.learn`)."""


class ClientTasks:
    """A client's side of its tasks: starting a call as a task, a handle on a task, the status notifications that wake
    the handles' polls, and what the client learned of each tool's `execution.taskSupport` (2025-11-25).

    One per client; `connected` tells it the era and the server's capabilities of each connection.
    """

    def __init__(self, client: TaskClient) -> None:
        self._client = client
        self._era = HANDSHAKE_ERA
        self._server: Mapping[str, Any] = {}  # the server's capabilities
        self._events: dict[str, anyio.Event] = {}  # what a status notification sets, by task id
        self._tokens: dict[str, str] = {}  # each task's progress token
        self._support: dict[str, Any] = {}  # 2025-11-25: each listed tool's execution.taskSupport
        # 2026-07-28: every task request declares the extension (else -32021).
        extensions = {**client.capabilities.get("extensions", {}), TASKS_EXTENSION: {}}
        self._capabilities = {**client.capabilities, "extensions": extensions}

    def connected(self, era: ClientEra, server_capabilities: Mapping[str, Any]) -> None:
        """The client connected: in `era`, to a server with these capabilities."""
        self._era = era
        self._server = server_capabilities

    @property
    def era(self) -> ClientEra:
        """The era the connection speaks: how its tasks are asked for, followed and answered."""
        return self._era

    def learn(self, definition: ToolDefinition) -> None:
        """Note a listed tool's `execution.taskSupport` (a field of `ToolDefinition`, or kept as an extra one)."""
        execution = getattr(definition, "execution", None) or (definition.model_extra or {}).get("execution")
        self._support[definition.name] = execution.get("taskSupport") if isinstance(execution, dict) else None

    # -- what a handle asks of the client --------------------------------------------------------------

    async def request(self, method: str, params: dict[str, Any]) -> Any:
        """Send a task request (`tasks/get`, `tasks/update`, ...), the extension declared in 2026-07-28."""
        if self._era.tasks_by_extension:
            params = {**params, "_meta": {**params.get("_meta", {}), CAPABILITIES_KEY: self._capabilities}}
        return await self._client.request(method, params)

    async def answer(self, method: str, params: Any, key: str) -> dict[str, Any]:
        """Answer one of a task's questions with the client's handlers."""
        return await self._client.answer(method, params, key)

    async def finish(self, name: str | None, raw: Any) -> CallToolResult:
        """A task's raw result, checked as a call's."""
        return await self._client.finish(name, raw)

    async def listen(self, task_id: str) -> None:
        """Hear the task's status notifications (2026-07-28: a `subscriptions/listen` stream), until cancelled.

        Held open until the handle stops waiting; a server that refuses it (or has no such stream) is polled all the
        same.
        """
        params = {"notifications": {"taskIds": [task_id]}, "_meta": {CAPABILITIES_KEY: self._capabilities}}
        with contextlib.suppress(ProtocolError, MessageError):
            await self._client.request("subscriptions/listen", params, stream=True)

    def woken(self, task_id: str) -> anyio.Event:
        """The event the next status notification for `task_id` sets (a fresh one once it has been set)."""
        event = self._events.get(task_id)
        if event is None or event.is_set():
            event = self._events[task_id] = anyio.Event()
        return event

    def ended(self, task_id: str) -> None:
        """A task ended: forget its event and its progress token."""
        self._events.pop(task_id, None)
        self._client.progress.drop(self._tokens.pop(task_id, None))

    async def on_status(self, params: dict[str, Any]) -> None:
        """A status notification (`notifications/tasks`, `notifications/tasks/status`): a poll waiting for that task
        asks again now."""
        task_id = params.get("taskId")
        event = self._events.get(task_id) if isinstance(task_id, str) else None
        if event is not None:
            event.set()

    # -- what the client asks ----------------------------------------------------------------------------

    def handle(self, task_id: str) -> ToolTask:
        """A handle on a task started earlier (`Client.task`)."""
        return ToolTask(self, task_id)

    async def start(
        self, name: str, arguments: Mapping[str, Any] | None, progress: ProgressCallback | None, ttl: float | None
    ) -> ToolTask:
        """Call a tool as a task (`Client.start_task`): the handle, already done when the server answered at once."""
        params: dict[str, Any] = {"name": name}
        if arguments is not None:
            params["arguments"] = dict(arguments)
        if not self._era.tasks_by_extension and await self._runs_as_task(name):
            params["task"] = {} if ttl is None else {"ttl": round(ttl * 1000)}
        token = None
        if progress is not None:
            token = self._client.progress.add(progress)
            params["_meta"] = {"progressToken": token}
        try:
            raw = await self._create(params)
        except BaseException:
            self._client.progress.drop(token)
            raise
        info = created_task(raw, self._era)
        if info is None:
            self._client.progress.drop(token)
            return ToolTask(self, None, name, raw=raw)
        if token is not None:
            self._tokens[info.task_id] = token
        return ToolTask(self, info.task_id, name, info=info)

    async def _create(self, params: dict[str, Any]) -> Any:
        """The `tools/call` that may create a task; in 2026-07-28 the questions asked before it exists are answered
        and the call retried (basic/patterns/mrtr)."""
        if not self._era.questions_are_results:
            return await self._client.request("tools/call", params)
        send = functools.partial(self.request, "tools/call")
        return await call_with_input(send, params, self._client.answer, max_rounds=self._client.max_input_rounds)

    async def run_refused(
        self, refused: ProtocolError, name: str, arguments: Mapping[str, Any] | None, progress: ProgressCallback | None
    ) -> Any:
        """A call the server refused because it runs that tool only as a task, run as a task and waited for: its raw
        result. 2026-07-28 says so with -32021 naming the tasks extension; 2025-11-25 with -32601 for a tool whose
        `execution.taskSupport` is `required` (the tools are listed to learn it). Any other refusal is raised.
        Cancelling the call cancels the task: the caller asked for a call, and no one else holds the task's id."""
        if not await self._only_as_task(refused, name):
            raise refused
        task = await self.start(name, arguments, progress, None)
        try:
            result = await task.result()
        except anyio.get_cancelled_exc_class():
            with anyio.CancelScope(shield=True), anyio.move_on_after(_CANCEL_GRACE), contextlib.suppress(ToolkitError):
                await task.cancel()
            raise
        return result.model_dump(mode="json", by_alias=True, exclude_none=True)

    async def _only_as_task(self, refused: ProtocolError, name: str) -> bool:
        """Whether `refused` says the server runs the tool only as a task, in this connection's era."""
        if refused.code != self._era.only_as_task:
            return False
        if self._era.tasks_by_extension:
            return _names_the_extension(refused)
        return await self._task_required(name)

    async def _task_required(self, name: str) -> bool:
        """2025-11-25: the tool's `execution.taskSupport` is `required` (the tools listed once to learn it)."""
        if name not in self._support:
            await self._client.list_tools()
        return self._support.get(name) == "required"

    async def _runs_as_task(self, name: str) -> bool:
        """2025-11-25: whether to ask for a task: the server declares task-augmented `tools/call`
        (`tasks.requests.tools.call`) and the tool's `execution.taskSupport` is `optional` or `required` (tasks:
        a client MUST NOT ask for a task otherwise). The tools are listed once to learn it."""
        if not _offers_task_calls(self._server):
            return False
        return await self._task_required(name) or self._support.get(name) == "optional"


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
        tasks: ClientTasks,
        task_id: str | None,
        name: str | None = None,
        *,
        info: TaskInfo | None = None,
        raw: Any = None,
    ) -> None:
        self._tasks = tasks
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
        got = await self._tasks.request("tasks/get", {"taskId": self._id})
        if not isinstance(got, dict):
            raise ProtocolError(INTERNAL_ERROR, "the server answered tasks/get with something that is not a task")
        return self._seen(got)

    def _seen(self, task: dict[str, Any]) -> TaskInfo:
        """Take in a task's state (tasks/get, a cancel): its final result or error too, in 2026-07-28."""
        info = self._info = TaskInfo.from_wire(task)
        self._pending = task.get("inputRequests") if info.status == "input_required" else None
        inline = self._tasks.era.tasks_by_extension  # tasks/get carries the outcome
        if inline and info.status == "completed" and isinstance(task.get("result"), dict):
            self._raw = task["result"]
        elif inline and info.status == "failed":
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
        woken = self._tasks.woken(info.task_id)
        with anyio.move_on_after(interval):
            await woken.wait()

    async def _answer(self) -> bool:
        """Answer the task's questions: whether the wait for its next state should skip the pause."""
        assert self._id is not None
        if not self._tasks.era.tasks_by_extension:
            # 2025-11-25: the server asks its questions while tasks/result waits for the end of the task.
            await self._take_result()
            return True
        pending = self._pending if isinstance(self._pending, dict) else {}
        fresh = {key: r for key, r in pending.items() if key not in self._answered and isinstance(r, dict)}
        if not fresh:
            return False
        responses = {}
        for key, request in fresh.items():  # one at a time, in the server's order, as for a plain call
            responses[key] = await self._tasks.answer(str(request.get("method")), request.get("params"), key)
        self._answered.update(responses)
        await self._tasks.request("tasks/update", {"taskId": self._id, "inputResponses": responses})
        return True

    async def _take_result(self) -> None:
        """2025-11-25: `tasks/result`, which blocks until the task ends: its result, or the error it ended with."""
        if self._raw is not None or self._error is not None:
            return
        try:
            self._raw = await self._tasks.request("tasks/result", {"taskId": self._id})
        except ProtocolError as exc:
            if type(exc) is not ProtocolError:  # the connection closed, a message too large: not the task's error
                raise
            self._error = exc

    async def _settle(self) -> None:
        """The task ended: fetch its result where the era keeps it apart, and let the client forget it."""
        assert self._info is not None
        if not self._tasks.era.tasks_by_extension and self._info.status != "cancelled":
            await self._take_result()
        self._tasks.ended(self._info.task_id)

    async def result(self, *, poll_interval: float | None = None) -> CallToolResult:
        """Wait for the task to end and return its result (a tool that failed gives `is_error=True`, as a call).

        Args:
            poll_interval: As for [`watch`][toolkit.ToolTask.watch].

        Raises:
            TaskCancelledError: the task was cancelled.
            ProtocolError: the task failed with a JSON-RPC error (its code and message), or the server refused a
                request (-32602: the task is unknown to it, or expired).
        """
        if self._tasks.era.tasks_by_extension and self._id is not None and not self.done:
            await self._follow_listening(self._id, poll_interval)
        else:
            await self._follow(poll_interval)
        return await self._outcome()

    async def _follow_listening(self, task_id: str, poll_interval: float | None) -> None:
        """2026-07-28: follow the task to its end while its status notifications (notifications/tasks) wake the polls
        early, where the server sends them."""
        failed: Exception | None = None
        async with anyio.create_task_group() as tg:
            tg.start_soon(self._tasks.listen, task_id)
            try:
                await self._follow(poll_interval)
            except Exception as exc:  # raised below, as itself rather than in an ExceptionGroup
                failed = exc
            tg.cancel_scope.cancel()
        if failed is not None:
            raise failed

    async def _outcome(self) -> CallToolResult:
        """What the task ended with, once it has: its checked result, or the error it failed or was cancelled with."""
        if self._info is not None and self._info.status == "cancelled":
            raise TaskCancelledError(self._info.task_id, self._info.status_message)
        if self._error is not None:
            raise self._error
        if self._raw is None:
            raise ProtocolError(INTERNAL_ERROR, f"task {self.id} ended without a result")
        return await self._tasks.finish(self._name, self._raw)

    async def _follow(self, poll_interval: float | None) -> None:
        """Follow the task until it ends (answering its questions on the way)."""
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
        got = await self._tasks.request("tasks/cancel", {"taskId": self._id})
        if not self._tasks.era.tasks_by_extension and isinstance(got, dict) and "status" in got:
            self._seen(got)  # 2025-11-25 answers with the task, now cancelled


def created_task(raw: Any, era: ClientEra) -> TaskInfo | None:
    """The task a `tools/call` created in `era`, or None when the server answered with the result itself."""
    if not isinstance(raw, dict):
        return None
    if era.tasks_by_extension:
        return TaskInfo.from_wire(raw) if raw.get("resultType") == "task" else None
    task = raw.get("task")
    return TaskInfo.from_wire(task) if isinstance(task, dict) and "content" not in raw else None


def _offers_task_calls(capabilities: Mapping[str, Any]) -> bool:
    """2025-11-25: the server declares task-augmented `tools/call` (`tasks.requests.tools.call`)."""
    tasks = capabilities.get("tasks")
    requests = tasks.get("requests") if isinstance(tasks, dict) else None
    tools = requests.get("tools") if isinstance(requests, dict) else None
    return isinstance(tools, dict) and isinstance(tools.get("call"), dict)


def _names_the_extension(exc: ProtocolError) -> bool:
    """A refusal for want of a capability names the tasks extension (`io.modelcontextprotocol/tasks` in
    `requiredCapabilities.extensions`): the server runs that tool only as a task."""
    if not isinstance(exc.data, dict):
        return False
    required = exc.data.get("requiredCapabilities")
    extensions = required.get("extensions") if isinstance(required, dict) else None
    return isinstance(extensions, dict) and TASKS_EXTENSION in extensions


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _seconds(value: Any) -> float | None:
    return value / 1000 if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0 else None
