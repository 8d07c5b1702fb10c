"""Tasks: a `tools/call` answered at once with a task that the client polls, the tool running on (both eras).

2026-07-28: the extension `io.modelcontextprotocol/tasks` (SEP-2663): a client that declares it in a request's
capabilities may get `CreateTaskResult` (`resultType: "task"`) for a task tool; `tasks/get` (the task, its result,
error or questions inlined), `tasks/update` (answers), `tasks/cancel`. 2025-11-25: the experimental tasks of that
revision: `params.task` asks for one, `tasks/get`, `tasks/result` (waits), `tasks/list`, `tasks/cancel`, and
`notifications/tasks/status`.

The tool runs with the same body as a plain call (`call_tool`), on this process's task loop: a thread with an event
loop of its own (`_Loop`), started with the first task, so that a task outlives the request, the connection and the
HTTP response that created it. Its questions (`ctx.elicit`, `confirm=`, `ctx.sample`) are kept in the store as the
task's `inputRequests` (status `input_required`) until an answer comes (`tasks/update`, or in 2025-11-25 the
answer to the request sent on a `tasks/result` stream). Everything about a task is in the store (`_tasks/store.py`):
a worker of the same store answers for it; the worker running it renews its lease, and a task whose worker died is
failed by the next sweep. A tool is never run again; the write of its outcome is tried again while the store
fails, and a run that has ended is never renewed, so a task whose outcome could not be kept ends failed when its
lease does (never `working` until its time to live).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import itertools
import logging
import math
import secrets
import threading
import time
from collections.abc import Awaitable, Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, Literal, Protocol

import anyio
import anyio.abc
import anyio.lowlevel
import anyio.to_thread

from toolkit._asking.asking import AskedCall, Asker, AskingServer
from toolkit._backend.base import UNAVAILABLE
from toolkit._call.context import PY_LEVELS, Context
from toolkit._errors import ProtocolError
from toolkit._identity import Identity, current_identity
from toolkit._protocol.jsonrpc import INTERNAL_ERROR, INVALID_PARAMS, MISSING_CLIENT_CAPABILITY
from toolkit._tasks.store import MemoryTaskStore, TaskRecord, TaskStore

from .eras import Era, era_of
from .running import CallHost, run_call

if TYPE_CHECKING:
    from toolkit._definition.tool import Tool

    from .options import TaskOptions
    from .session import SessionState

__all__ = ["RELATED_TASK_KEY", "TaskServer", "Tasks", "task_capabilities", "wire_task"]

logger = logging.getLogger("toolkit")
_tool_logger = logging.getLogger("toolkit.tools")  # what a task's tool logs (`ctx.log`)

RELATED_TASK_KEY = "io.modelcontextprotocol/related-task"
_NOT_FOUND = "Failed to retrieve task: Task not found"
_PAGE = 50
MAX_WATCHED = 1000
"""Task ids one `subscriptions/listen` may name (duplicates counted once): each is read from the store every poll
interval while it runs."""


class TaskServer(AskingServer, CallHost, Protocol):
    """What tasks need of their server (its registry, which owns them): how it runs a call."""

    show_error_details: bool

    @property
    def lifespan_context(self) -> Any: ...


def task_capabilities(version: str) -> dict[str, Any]:
    """What a server with task tools adds to its capabilities in `version`."""
    return era_of(version).tasks.capabilities(version)


def _owner(state: SessionState, task_id: str) -> str:
    """Who a task belongs to, so that no other caller reaches it: the token's subject with authentication; anonymous,
    as the request's era says (`TaskWire.anonymous_owner`: the 2025-11-25 session, or in 2026-07-28 the task)."""
    identity = current_identity.get()
    if identity is not None:
        return "user/" + identity.subject
    return _era(state).tasks.anonymous_owner(state, task_id)


def _era(state: SessionState) -> Era:
    """The era of a request's state (a task's request is always of one)."""
    return era_of(state.version)


@contextlib.contextmanager
def _store_used() -> Iterator[None]:
    """A store that fails (Redis down, a SQLite file locked too long) is a clear error for the request that needed
    it, naming the cause (`UNAVAILABLE`, as the HTTP app says), never a bare internal error."""
    try:
        yield
    except ProtocolError:
        raise
    except Exception as exc:
        raise ProtocolError(INTERNAL_ERROR, UNAVAILABLE, str(exc)) from exc


def _every_level() -> Literal["debug"]:
    return "debug"


def _progress_text(params: Mapping[str, Any]) -> str:
    """`ctx.report_progress(3, 10, "pages")` as a task's statusMessage: "pages (3/10)"."""
    done = f"{params['progress']:g}" + (f"/{params['total']:g}" if "total" in params else "")
    message = params.get("message")
    return f"{message} ({done})" if message else done


def _progressed(message: str, record: TaskRecord) -> TaskRecord | None:
    if record.status != "working":  # a question or the end came first: its message stands
        return None
    return dataclasses.replace(record, status_message=message, updated_at=time.time())


def wire_task(record: TaskRecord, *, detailed: bool) -> dict[str, Any]:
    """The task's wire object for the revision that created it; `detailed`: as `tasks/get` shows it (2026-07-28's
    `DetailedTask`, with its result, error or questions)."""
    return era_of(record.version).tasks.task(record, detailed=detailed)


class _Loop:
    """A thread running an event loop of its own (the caller's backend), where this process's tasks run.

    Reached from other threads (and other event loops) without blocking: `soon` schedules a plain function on it.
    """

    def __init__(self, backend: str) -> None:
        self._started = threading.Event()
        self._stop: anyio.Event | None = None
        self._tg: anyio.abc.TaskGroup | None = None
        self._soon: Callable[..., Any] | None = None
        self.thread = threading.Thread(target=anyio.run, args=(self._serve, backend), kwargs={"backend": backend})
        self.thread.name, self.thread.daemon = "toolkit-tasks", True
        self.thread.start()
        if not self._started.wait(30):  # the loop failed to start (its error is on stderr): not a silent hang
            raise RuntimeError(f"the task loop ({backend}) did not start")

    async def _serve(self, backend: str) -> None:
        self._stop = anyio.Event()
        if backend == "trio":
            import trio.lowlevel

            self._soon = trio.lowlevel.current_trio_token().run_sync_soon
        else:
            import asyncio
            import contextvars
            import functools

            # In this loop's context: a callback scheduled from another thread would run in that thread's context,
            # where anyio cannot tell which event loop runs it.
            loop, context = asyncio.get_running_loop(), contextvars.copy_context()
            self._soon = functools.partial(loop.call_soon_threadsafe, context=context)
        async with anyio.create_task_group() as tg:
            self._tg = tg
            self._started.set()
            await self._stop.wait()
            tg.cancel_scope.cancel()

    def soon(self, func: Callable[..., Any], *args: Any) -> None:
        """Call `func(*args)` on the loop, soon (from any thread, never waiting)."""
        assert self._soon is not None
        try:
            self._soon(func, *args)
        except RuntimeError:  # the loop has ended
            logger.debug("the task loop has ended: %r not called", func)

    def spawn(self, func: Callable[..., Awaitable[Any]], *args: Any) -> None:
        assert self._tg is not None
        self.soon(self._tg.start_soon, func, *args)

    def stop(self) -> None:
        """Cancel what runs, end the loop and its thread (blocking: from a worker thread)."""
        if self.thread.is_alive() and self._stop is not None:
            self.soon(self._stop.set)
            self.thread.join()


class _Running:
    """A task running in this process: how to stop it, and how to wake it when its answers come."""

    __slots__ = ("changed", "scope")

    def __init__(self) -> None:
        self.scope: anyio.CancelScope | None = None
        self.changed: anyio.Event | None = None  # the tool waits for an answer


def _backend() -> str:
    try:
        import sniffio

        return sniffio.current_async_library()
    except Exception:
        return "asyncio"


class Tasks:
    """A server's tasks: creating them for calls, answering the `tasks/*` methods, running them here.

    Args:
        server: The server.
        options: Its task options, each one given (`TaskOptions`, defaulted by `toolkit._engine.options`).
    """

    def __init__(self, server: TaskServer, options: TaskOptions) -> None:
        self.server = server
        store = options["task_store"]
        self.store: TaskStore = store if store is not None else MemoryTaskStore()
        self._chosen = store is not None  # given (`task_store=`) or shared already: `share` keeps it
        self.ttl = options["task_ttl"]
        self.max_ttl = options["max_task_ttl"]
        self.poll_interval = options["task_poll_interval"]
        self.max_per_caller = options["max_tasks_per_caller"]
        self.max_tasks = options["max_tasks"]
        self.max_result_bytes = options["max_task_result_bytes"]
        self.lease = options["task_lease"]
        self.worker = secrets.token_hex(8)
        self._loop: _Loop | None = None
        self._loop_lock = threading.Lock()
        self._running: dict[str, _Running] = {}
        self._keys = itertools.count(1)

    def share(self, backend: object) -> None:
        """Keep the tasks in `backend`'s task store, when it offers one (`RedisBackend`, the one-machine backend of
        `toolkit serve --workers`), unless the server was given a store of its own (`task_store=`); before the first
        task only (a store is never swapped under tasks that live in the old one). `Server(backend=)` and
        `http_app(backend=)` both call it."""
        make = getattr(backend, "task_store", None)
        if make is not None and not self._chosen and self._loop is None:
            self.store, self._chosen = make(), True

    # -- creating ------------------------------------------------------------------------------------

    async def create(
        self,
        tool: Tool[Any, Any],
        arguments: Mapping[str, Any] | None,
        params: Mapping[str, Any],
        state: SessionState,
        answers: list[Any] | None = None,
    ) -> dict[str, Any]:
        """Make the call's task, durably, start its tool here, and return the `CreateTaskResult` wire object.
        `answers`: to the questions the tool asked before `ctx.begin_task()`, in order (it runs again from the start).

        Raises:
            ProtocolError: -32603 when the caller has as many live tasks as `max_tasks_per_caller`, or the store as
                many as `max_tasks`.
        """
        identity = current_identity.get()
        now = time.time()
        ttl = self.ttl
        requested = params.get("task")
        if isinstance(requested, Mapping) and isinstance(requested.get("ttl"), int | float):
            ttl = max(1.0, requested["ttl"] / 1000)
        ttl = min(ttl, self.max_ttl)
        task_id = secrets.token_urlsafe(16)
        record = TaskRecord(
            task_id=task_id,
            owner=_owner(state, task_id),
            tool=tool.name,
            version=state.version,
            status="working",
            created_at=now,
            updated_at=now,
            ttl_ms=math.ceil(ttl * 1000),
            poll_interval_ms=max(1, round(self.poll_interval * 1000)),
            worker=self.worker,
            lease_until=now + self.lease,
        )
        with _store_used():
            refused = await self.store.create(record, limit=self.max_per_caller, ceiling=self.max_tasks)
        if refused == "caller":
            raise ProtocolError(INTERNAL_ERROR, f"Too many tasks: this caller has {self.max_per_caller} (the limit)")
        if refused == "store":
            raise ProtocolError(
                INTERNAL_ERROR, f"Too many tasks: the server keeps {self.max_tasks} at most (the limit)"
            )
        running = self._running[record.task_id] = _Running()
        call = _TaskCall(tool, dict(arguments) if arguments is not None else None, dict(params), state, identity)
        call.answers = list(answers or ())
        with contextlib.suppress(RuntimeError):  # read now: a request runs inside the server's lifespan
            call.lifespan = self.server.lifespan_context
        self._ensure_loop().spawn(self._guarded, record, call, running)
        return _era(state).tasks.created(wire_task(record, detailed=False))

    def _ensure_loop(self) -> _Loop:
        with self._loop_lock:
            if self._loop is None or not self._loop.thread.is_alive():
                self._loop = _Loop(_backend())
                self._loop.spawn(self._heartbeat)
            return self._loop

    async def stop(self) -> None:
        """The server stops serving (its last `running()` block ends): stop the task loop if no task runs on it.

        Tasks still running go on (an HTTP app mounted without its lifespan enters and leaves the server with every
        request, and a task outlives its request); the loop's thread is a daemon, so it never holds the process up.
        The store releases what it holds for this event loop (it opens it again if the server serves again)."""
        with anyio.CancelScope(shield=True):
            await self.store.aclose()
        if self._running:
            return
        loop, self._loop = self._loop, None
        if loop is not None:
            await anyio.to_thread.run_sync(loop.stop)

    # -- running -------------------------------------------------------------------------------------

    async def _guarded(self, record: TaskRecord, call: _TaskCall, running: _Running) -> None:
        try:
            await self._run(record, call, running)
        except Exception:  # the store failed to keep the outcome (Redis down): never the task loop's end
            logger.exception(
                "task %s: the task store could not keep its outcome; its lease, no longer renewed, ends it failed",
                record.task_id,
            )

    async def _finish(self, task_id: str, outcome: Callable[[TaskRecord], TaskRecord | None]) -> None:
        """Write a run's outcome, tried again while the store fails, for about a lease (by then the task's lease,
        which nothing renews once its run ended, has ended it failed, and the sweep says so)."""
        pause, deadline = 0.05, time.monotonic() + self.lease
        while True:
            try:
                await self._change(task_id, outcome)
                return
            except ProtocolError:
                if time.monotonic() + pause > deadline:
                    raise
                logger.warning("task %s: the task store failed to keep its outcome; trying again", task_id)
            await anyio.sleep(pause)
            pause = min(pause * 2, self.lease / 3)

    async def _run(self, record: TaskRecord, call: _TaskCall, running: _Running) -> None:
        token = current_identity.set(call.identity)
        outcome: Callable[[TaskRecord], TaskRecord | None]
        try:
            with anyio.CancelScope() as scope:
                running.scope = scope
                outcome = await self._outcome(record, call, running)
            if scope.cancelled_caught:
                outcome = _ended("cancelled", "The task was cancelled.")
        except BaseException:
            # The task loop is stopping (the server stops): the task did not finish here, and is not retried.
            outcome = _failed({"code": INTERNAL_ERROR, "message": "the server stopped while the task was running"})
            with anyio.CancelScope(shield=True):
                await self._change(record.task_id, outcome)
            raise
        finally:
            current_identity.reset(token)
            self._running.pop(record.task_id, None)  # never renewed again, whatever becomes of its outcome
        await self._finish(record.task_id, outcome)

    async def _outcome(
        self, record: TaskRecord, call: _TaskCall, running: _Running
    ) -> Callable[[TaskRecord], TaskRecord | None]:
        """Run the tool; the change that ends its task (completed, or failed for a protocol error)."""
        server, tool = self.server, call.tool
        asker = self._asker(record, call, running) if tool.may_ask else None

        def context() -> Context:
            return Context(
                request_id=None,
                protocol_version=call.state.version,
                show_error_details=server.show_error_details,
                lifespan_context=call.lifespan,
                asker=asker,
                progress_token=record.task_id,
                notify=functools.partial(self._notified, record.task_id),
                log_level=_every_level,
            )

        try:  # the run of every call: middleware as a plain call's (its identity `call.identity`, set by `_run`)
            wire = await run_call(server, tool, call.arguments, context, _TaskRequest(record.task_id, call))
        except ProtocolError as exc:
            return _failed(exc.to_error())
        except Exception:
            logger.exception("task %s: tool %r failed", record.task_id, tool.name)
            return _failed({"code": INTERNAL_ERROR, "message": "Internal error"})
        if asker is not None and asker.missing is not None and wire.get("isError"):
            # As a plain call answers (basic/index): the client lacked a capability the tool needed, -32021.
            required = {"requiredCapabilities": asker.missing}
            return _failed({"code": MISSING_CLIENT_CAPABILITY, "message": wire["content"][0]["text"], "data": required})
        size = len(_encode(wire))
        if size > self.max_result_bytes:
            text = f"the result ({size} bytes of JSON) is larger than the task store keeps ({self.max_result_bytes})"
            wire = {"content": [{"type": "text", "text": text}], "isError": True}
        return _ended("completed", None, _era(call.state).tasks.outcome(wire))

    def _asker(self, record: TaskRecord, call: _TaskCall, running: _Running) -> Asker:
        """The task's asking: each question becomes an input request in the store, answered by `tasks/update`."""
        task_id = record.task_id

        async def send(method: str, params: dict[str, Any], wait: float | None) -> Any:
            if call.answers:  # asked again before `ctx.begin_task()`: answered in the request's rounds
                return call.answers.pop(0)
            key = f"{method.partition('/')[2] or method}-{next(self._keys)}"
            request = {"method": method, "params": params}
            await self._change(task_id, _asking(key, request))
            with anyio.fail_after(wait):
                return await self._answer(task_id, key, running)

        asked: AskedCall = {
            "tool": call.tool.name,
            "arguments": call.arguments,
            "params": call.params,
            "version": call.state.version,
            "capabilities": call.state.client_capabilities,
        }
        return Asker(asked, send, self.server)

    async def _answer(self, task_id: str, key: str, running: _Running) -> Any:
        """Wait for the answer to `key` (given here: woken at once; or to another worker of the store: looked for
        every poll interval)."""
        while True:
            if running.changed is None:  # one event for every question waiting (asked together)
                running.changed = anyio.Event()
            changed = running.changed
            taken: list[Any] = []
            record = await self.store.modify(task_id, _take(key, taken))
            if record is None:
                raise anyio.get_cancelled_exc_class()()
            if taken:
                return taken[0]
            with anyio.move_on_after(min(self.poll_interval, self.lease / 3)):  # another worker may take the answer
                await changed.wait()

    async def _notified(self, task_id: str, method: str, params: dict[str, Any]) -> None:
        """What a task's Context sends: a task sends no notifications, so `ctx.report_progress` is its statusMessage
        (what `tasks/get` shows while it works) and `ctx.log` goes to the server's own log, as a detached Context's."""
        if method == "notifications/progress":
            await self._change(task_id, functools.partial(_progressed, _progress_text(params)))
        elif method == "notifications/message":
            _tool_logger.log(PY_LEVELS.get(params["level"], logging.ERROR), "task %s: %s", task_id, params["data"])

    async def _change(self, task_id: str, change: Callable[[TaskRecord], TaskRecord | None]) -> TaskRecord | None:
        with _store_used():
            return await self.store.modify(task_id, change)

    async def _heartbeat(self) -> None:
        """Renew the leases of the tasks running here and sweep the store, a few times per lease, while the task loop
        runs; the store releases what it holds on this loop when the loop stops."""
        try:
            while True:
                now = time.time()
                try:
                    await self.store.renew(self.worker, now + self.lease, list(self._running))
                    await self.store.sweep(now)
                except Exception:  # a store that is down (Redis) fails this beat, never the task loop: the next retries
                    logger.warning("tasks: the task store failed a heartbeat (lease renewal, sweep)", exc_info=True)
                await anyio.sleep(self.lease / 3)
        finally:
            with anyio.CancelScope(shield=True):
                await self.store.aclose()

    def _wake(self, task_id: str) -> None:
        running = self._running.get(task_id)
        loop = self._loop
        if running is None or loop is None:
            return
        loop.soon(_set_changed, running)

    # -- the methods ---------------------------------------------------------------------------------

    async def find(self, params: Mapping[str, Any], state: SessionState) -> TaskRecord:
        """The caller's task that `params.taskId` names.

        Raises:
            ProtocolError: -32021 (2026-07-28) for a client without the extension; -32602 for a task that is unknown,
                another caller's, or expired.
        """
        _era(state).tasks.check_client(state)
        task_id = params.get("taskId")
        if not isinstance(task_id, str):
            raise ProtocolError(INVALID_PARAMS, "Invalid params: taskId must be a string")
        with _store_used():
            record = await self.store.get(task_id)
        if record is None or record.owner != _owner(state, task_id):
            raise ProtocolError(INVALID_PARAMS, _NOT_FOUND)
        if record.expires_at() <= time.time():
            raise ProtocolError(INVALID_PARAMS, "Failed to retrieve task: Task has expired")
        return record

    async def watchable(self, task_ids: Any, state: SessionState) -> list[str]:
        """The tasks of `task_ids` a `subscriptions/listen` may watch, each once: the caller's own, not expired.

        Raises:
            ProtocolError: -32021 for a client without the extension; -32602 for `taskIds` not a list of strings, or
                naming more than `MAX_WATCHED` tasks.
        """
        if not isinstance(task_ids, list) or not all(isinstance(task_id, str) for task_id in task_ids):
            raise ProtocolError(INVALID_PARAMS, "Invalid params: taskIds must be a list of strings")
        named = dict.fromkeys(task_ids)  # each once, in order
        if len(named) > MAX_WATCHED:
            raise ProtocolError(
                INVALID_PARAMS, f"Invalid params: taskIds names {len(named)} tasks, {MAX_WATCHED} at most"
            )
        agreed = []
        for task_id in named:
            try:
                await self.find({"taskId": task_id}, state)
            except ProtocolError as exc:
                if exc.code == MISSING_CLIENT_CAPABILITY:
                    raise
                continue  # another caller's, unknown or expired: not agreed (and not said why)
            agreed.append(task_id)
        return agreed

    async def watch(
        self, task_ids: list[str], meta: dict[str, Any], notify: Callable[[dict[str, Any]], Awaitable[None]]
    ) -> None:
        """Send `notifications/tasks` (the task as `tasks/get` would give it) whenever one of `task_ids` changes,
        until each has ended; read from the store each poll interval, so a change made by any worker is seen."""
        seen: dict[str, float] = {}
        watched = dict.fromkeys(task_ids)
        while watched:
            for task_id in list(watched):
                record = await self.store.get(task_id)
                if record is None or record.terminal:
                    del watched[task_id]
                if record is not None and seen.get(task_id) != record.updated_at:
                    seen[task_id] = record.updated_at
                    await notify({**wire_task(record, detailed=True), "_meta": meta})
            await anyio.sleep(self.poll_interval)

    async def get(self, params: Mapping[str, Any], state: SessionState) -> dict[str, Any]:
        """`tasks/get` (the result before its era completes it)."""
        return wire_task(await self.find(params, state), detailed=True)

    async def update(self, params: Mapping[str, Any], state: SessionState) -> dict[str, Any]:
        """`tasks/update` (2026-07-28): answers to the task's outstanding questions; others are ignored. An empty
        result, which the era completes.

        Raises:
            ProtocolError: -32602 for `inputResponses` not an object (and as `find`).
        """
        record = await self.find(params, state)
        responses = params.get("inputResponses")
        if not isinstance(responses, dict):
            raise ProtocolError(INVALID_PARAMS, "Invalid params: inputResponses must be an object")
        await self.answer(record.task_id, responses)
        return {}

    async def answer(self, task_id: str, responses: Mapping[str, Any]) -> None:
        """Keep answers to outstanding questions and wake the tool if it runs here."""
        await self._change(task_id, _answered(dict(responses)))
        self._wake(task_id)

    async def cancel(self, params: Mapping[str, Any], state: SessionState) -> dict[str, Any]:
        """`tasks/cancel`: the task ends cancelled at once (a finished one stays as it is); its tool is stopped. What
        the era answers (`TaskWire.cancelled`), before it completes it.

        Raises:
            ProtocolError: -32602 (2025-11-25) for a task already finished (and as `find`).
        """
        record = await self.find(params, state)
        tasks = _era(state).tasks
        if record.terminal and tasks.refuses_finished:
            raise ProtocolError(INVALID_PARAMS, f"Cannot cancel task: already {record.status}")
        changed = await self._change(record.task_id, _ended("cancelled", "The task was cancelled."))
        running = self._running.get(record.task_id)
        if running is not None and self._loop is not None:
            self._loop.soon(_cancel, running)
        return tasks.cancelled(wire_task(changed or record, detailed=False))

    async def list(self, params: Mapping[str, Any], state: SessionState) -> dict[str, Any]:
        """`tasks/list` (2025-11-25): the caller's tasks, a page at a time."""
        cursor = params.get("cursor")
        if cursor is not None and not isinstance(cursor, str):
            raise ProtocolError(INVALID_PARAMS, "Invalid params: invalid cursor")
        with _store_used():
            records = await self.store.list_owned(_owner(state, ""), cursor, _PAGE + 1)
        page = records[:_PAGE]
        result: dict[str, Any] = {"tasks": [wire_task(r, detailed=False) for r in page]}
        if len(records) > _PAGE:
            result["nextCursor"] = page[-1].task_id
        return result

    async def result(
        self, params: Mapping[str, Any], state: SessionState, ask: Callable[[str, dict[str, Any]], Awaitable[Any]]
    ) -> dict[str, Any]:
        """`tasks/result` (2025-11-25): wait until the task ends; its result (or its error, raised). The task's
        questions (`input_required`) are asked of the client meanwhile, through `ask`, and their answers kept.

        Raises:
            ProtocolError: the task's error, when it failed (and as `find`).
        """
        record = await self.find(params, state)
        asked: set[str] = set()
        related = {RELATED_TASK_KEY: {"taskId": record.task_id}}
        while not record.terminal:
            for key, request in record.input_requests.items():
                if key not in asked:
                    asked.add(key)
                    answer = await ask(request["method"], {**request["params"], "_meta": related})
                    await self.answer(record.task_id, {key: answer})
            await anyio.sleep(record.poll_interval_ms / 1000)
            record = await self.find(params, state)
        if record.status == "failed" and record.error is not None:
            error = record.error
            code, text = error.get("code", INTERNAL_ERROR), error.get("message", "Task failed")
            raise ProtocolError(code, text, error.get("data"))
        if record.status == "cancelled" or record.result is None:
            raise ProtocolError(INVALID_PARAMS, f"Task {record.task_id} was cancelled: it has no result")
        return {**record.result, "_meta": {**(record.result.get("_meta") or {}), **related}}


class _TaskCall:
    """What a task's tool is called with."""

    __slots__ = ("answers", "arguments", "identity", "lifespan", "params", "state", "tool")

    def __init__(
        self,
        tool: Tool[Any, Any],
        arguments: dict[str, Any] | None,
        params: dict[str, Any],
        state: SessionState,
        identity: Identity | None,
    ) -> None:
        self.tool, self.arguments, self.params, self.state, self.identity = tool, arguments, params, state, identity
        self.answers: list[Any] = []  # to the questions asked before `ctx.begin_task()`, in order
        self.lifespan: Any = None  # what the server's lifespan yielded


class _TaskRequest:
    """A task's run as the request its call answers (`running.CallRequest`): the task's id, its call's params and
    state."""

    __slots__ = ("id", "params", "state")

    def __init__(self, task_id: str, call: _TaskCall) -> None:
        self.id, self.params, self.state = task_id, call.params, call.state


def _encode(wire: Any) -> str:
    import json

    return json.dumps(wire, separators=(",", ":"), ensure_ascii=False)


def _set_changed(running: _Running) -> None:
    changed, running.changed = running.changed, None
    if changed is not None:
        changed.set()


def _cancel(running: _Running) -> None:
    if running.scope is not None:
        running.scope.cancel()


def _ended(
    status: Any, message: str | None, result: dict[str, Any] | None = None
) -> Callable[[TaskRecord], TaskRecord | None]:
    def change(record: TaskRecord) -> TaskRecord | None:
        if record.terminal:  # a task ends once (a cancelled one is not completed after)
            return None
        return dataclasses.replace(
            record,
            status=status,
            status_message=message,
            result=result,
            input_requests={},
            input_responses={},
            worker=None,
            lease_until=None,
            updated_at=time.time(),
        )

    return change


def _failed(error: dict[str, Any]) -> Callable[[TaskRecord], TaskRecord | None]:
    end = _ended("failed", str(error.get("message", "failed")))

    def change(record: TaskRecord) -> TaskRecord | None:
        ended = end(record)
        return dataclasses.replace(ended, error=error) if ended is not None else None

    return change


def _asking(key: str, request: dict[str, Any]) -> Callable[[TaskRecord], TaskRecord | None]:
    def change(record: TaskRecord) -> TaskRecord | None:
        if record.terminal:
            return None
        requests = {**record.input_requests, key: request}
        return dataclasses.replace(record, status="input_required", input_requests=requests, updated_at=time.time())

    return change


def _answered(responses: dict[str, Any]) -> Callable[[TaskRecord], TaskRecord | None]:
    def change(record: TaskRecord) -> TaskRecord | None:
        known = {key: value for key, value in responses.items() if key in record.input_requests}
        if record.terminal or not known:
            return None  # unknown, answered or superseded keys are ignored (the spec's SHOULD)
        left = {key: value for key, value in record.input_requests.items() if key not in known}
        return dataclasses.replace(
            record,
            status="input_required" if left else "working",
            input_requests=left,
            input_responses={**record.input_responses, **known},
            updated_at=time.time(),
        )

    return change


def _take(key: str, taken: list[Any]) -> Callable[[TaskRecord], TaskRecord | None]:
    def change(record: TaskRecord) -> TaskRecord | None:
        taken.clear()
        if key not in record.input_responses:
            return None
        taken.append(record.input_responses[key])
        rest = {k: v for k, v in record.input_responses.items() if k != key}
        return dataclasses.replace(record, input_responses=rest)

    return change
