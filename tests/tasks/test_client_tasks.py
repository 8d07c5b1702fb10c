"""Client tasks (issue 24) against a tasks server written by hand from the spec's wire format, in both eras.

The peer plays the server of the tasks extension (2026-07-28, `io.modelcontextprotocol/tasks`) or of 2025-11-25's
experimental tasks, in memory: the test decides when a task ends, what it asks, and how it fails, and reads every
message the client sent. Each message the peer sends in 2025-11-25 is checked against that revision's schema (the
2026-07-28 schema has no task types: they live in the extension's own schema).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import anyio.abc
import pytest
import wire

from toolkit import (
    Client,
    ElicitRequest,
    ElicitResult,
    MemoryTransport,
    ProtocolError,
    TaskCancelledError,
    TaskInfo,
    ToolTask,
)

pytestmark = pytest.mark.anyio

EXTENSION = "io.modelcontextprotocol/tasks"
WHEN = "2026-12-06T05:00:00Z"
QUESTION = {
    "method": "elicitation/create",
    "params": {
        "mode": "form",
        "message": "Your name?",
        "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
    },
}


@pytest.fixture(params=["2026-07-28", "2025-11-25"])
def era(request: pytest.FixtureRequest) -> str:
    return str(request.param)


class Job:
    """One task on the peer: its status, and what it ends with."""

    def __init__(self, task_id: str, name: str, arguments: dict[str, Any]) -> None:
        self.task_id = task_id
        self.name = name
        self.arguments = arguments
        self.status = "working"
        self.message: str | None = None
        self.result: dict[str, Any] | None = None
        self.error: dict[str, Any] | None = None
        self.questions: dict[str, Any] = {}
        self.answers: dict[str, Any] = {}
        self.ended = anyio.Event()

    def finish(self, text: str, *, is_error: bool = False) -> None:
        self.status = "completed"  # 2026-07-28: a tool error completes the task (2025-11-25 says failed)
        self.result = {"content": [{"type": "text", "text": text}], "isError": is_error}
        self.ended.set()

    def fail(self, code: int, message: str) -> None:
        self.status, self.error = "failed", {"code": code, "message": message}
        self.ended.set()

    def wire(self, modern: bool) -> dict[str, Any]:
        status = self.status
        if not modern and status == "completed" and self.result is not None and self.result["isError"]:
            status = "failed"
        task: dict[str, Any] = {"taskId": self.task_id, "status": status, "createdAt": WHEN, "lastUpdatedAt": WHEN}
        if self.message is not None:
            task["statusMessage"] = self.message
        if not modern:
            return {**task, "ttl": 60000, "pollInterval": 10}
        task |= {"ttlMs": 60000, "pollIntervalMs": 10}
        if self.status == "input_required":
            task["inputRequests"] = self.questions
        elif self.status == "completed":
            task["result"] = self.result
        elif self.status == "failed":
            task["error"] = self.error
        return task


class TasksPeer:
    """A server of one era that runs `slow` as a task (`only_task`: only as one) and `echo` at once.

    `tasks=False`: it declares no tasks and runs every call at once. It keeps its tasks across connections, as a
    server keeps them for whoever created them.
    """

    def __init__(self, era: str, *, tasks: bool = True) -> None:
        self.modern = era == "2026-07-28"
        self.era = era
        self.tasks = tasks
        self.jobs: dict[str, Job] = {}
        self.received: list[dict[str, Any]] = []
        self.created = anyio.Event()
        self._answers: dict[Any, Any] = {}
        self._waiting: dict[Any, anyio.Event] = {}

    @asynccontextmanager
    async def client(self, **options: Any) -> AsyncIterator[Client]:
        """A new Client on a new connection to this peer."""
        mine, theirs = MemoryTransport.pair()
        async with anyio.create_task_group() as tg:
            tg.start_soon(self.serve, theirs, tg)
            try:
                async with Client(mine, protocol="2026-07-28" if self.modern else "handshake", **options) as client:
                    yield client
            finally:
                await theirs.aclose()
                tg.cancel_scope.cancel()

    def sent(self, method: str) -> list[dict[str, Any]]:
        """The params of every `method` request the client sent."""
        return [m.get("params", {}) for m in self.received if m.get("method") == method]

    async def serve(self, transport: MemoryTransport, tg: anyio.abc.TaskGroup) -> None:
        while True:
            try:
                message = json.loads(await transport.receive())
            except (anyio.EndOfStream, anyio.ClosedResourceError):
                return
            self.received.append(message)
            if "method" not in message:  # the client's answer to a question of ours
                self._answers[message["id"]] = message.get("result", message.get("error"))
                self._waiting.pop(message["id"]).set()
            elif "id" in message:
                tg.start_soon(self._reply, transport, message)

    async def _send(self, transport: MemoryTransport, message: dict[str, Any], method: str | None) -> None:
        message = {"jsonrpc": "2.0", **message}
        if not self.modern:
            wire.check_server_message(message, self.era, None)
            if method is not None and "result" in message:
                wire.validate(message["result"], self._result_type(method, message["result"]), self.era)
        await transport.send(json.dumps(message))

    @staticmethod
    def _result_type(method: str, result: dict[str, Any]) -> str:
        """The 2025-11-25 schema's name for the result of `method`."""
        if method == "tools/call":
            return "CreateTaskResult" if "task" in result else "CallToolResult"
        names = {"tasks/get": "GetTaskResult", "tasks/result": "CallToolResult", "tasks/cancel": "CancelTaskResult"}
        return names.get(method) or wire.RESULTS[method]

    async def _reply(self, transport: MemoryTransport, message: dict[str, Any]) -> None:
        method, params = message["method"], message.get("params") or {}
        try:
            result = await self.answer(transport, method, params)
        except ProtocolError as exc:
            await self._send(transport, {"id": message["id"], "error": exc.to_error()}, method)
            return
        if self.modern:
            result = {"resultType": "complete", **result}
        await self._send(transport, {"id": message["id"], "result": result}, method)

    async def answer(self, transport: MemoryTransport, method: str, params: dict[str, Any]) -> dict[str, Any]:
        if method == "server/discover":
            extensions: dict[str, Any] = {"extensions": {EXTENSION: {}}} if self.tasks else {}
            return {"supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}, **extensions}}
        if method == "initialize":
            tasks: dict[str, Any] = {"tasks": {"cancel": {}, "requests": {"tools": {"call": {}}}}} if self.tasks else {}
            info = {"name": "tasks-peer", "version": "1"}
            return {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}, **tasks}, "serverInfo": info}
        if method == "tools/list":
            support = {"slow": "optional", "only_task": "required", "echo": "forbidden"}
            return {
                "tools": [
                    {
                        "name": n,
                        "inputSchema": {"type": "object"},
                        **({} if self.modern else {"execution": {"taskSupport": s}}),
                    }
                    for n, s in support.items()
                ]
            }
        if method == "tools/call":
            return self._call(params)
        return await self._on_task(transport, method, params)

    async def _on_task(self, transport: MemoryTransport, method: str, params: dict[str, Any]) -> dict[str, Any]:
        job = self.jobs.get(params.get("taskId"))  # type: ignore[arg-type]
        if job is None:
            raise ProtocolError(-32602, "Failed to retrieve task: Task not found")
        if method == "tasks/get":
            return job.wire(self.modern)
        if method == "tasks/update":
            job.answers |= params["inputResponses"]
            job.questions = {}
            if job.status == "input_required":
                job.status = "working"
            return {}
        if method == "tasks/cancel":
            if job.status in ("completed", "failed", "cancelled"):
                raise ProtocolError(-32602, f"Cannot cancel task: already in terminal status '{job.status}'")
            job.status = "cancelled"
            job.ended.set()
            return {} if self.modern else job.wire(False)
        assert method == "tasks/result"
        return await self._result(transport, job)

    def _call(self, params: dict[str, Any]) -> dict[str, Any]:
        name = params["name"]
        declared = EXTENSION in params.get("_meta", {}).get(wire.CAPABILITIES_KEY, {}).get("extensions", {})
        wants_task = declared if self.modern else "task" in params
        if name == "only_task" and self.tasks and not wants_task:
            if not self.modern:
                raise ProtocolError(-32601, "Task augmentation required for tools/call requests")
            data: dict[str, Any] = {"requiredCapabilities": {"extensions": {EXTENSION: {}}}}
            raise ProtocolError(-32021, "Missing required client capability", data)
        if name == "echo" or not self.tasks or not wants_task:
            return {"content": [{"type": "text", "text": f"at once: {params.get('arguments')}"}], "isError": False}
        job = Job(f"task-{len(self.jobs) + 1}", name, params.get("arguments") or {})
        self.jobs[job.task_id] = job
        self.created.set()
        return {"resultType": "task", **job.wire(True)} if self.modern else {"task": job.wire(False)}

    async def _result(self, transport: MemoryTransport, job: Job) -> dict[str, Any]:
        """2025-11-25 tasks/result: ask the job's questions (as server requests), then wait for its end."""
        for key, question in list(job.questions.items()):
            request_id = f"q-{job.task_id}-{key}"
            self._waiting[request_id] = answered = anyio.Event()
            related = {"io.modelcontextprotocol/related-task": {"taskId": job.task_id}}
            params = {**question["params"], "_meta": related}
            await self._send(transport, {"id": request_id, "method": question["method"], "params": params}, None)
            await answered.wait()
            job.answers[key] = self._answers.pop(request_id)
            del job.questions[key]
            if job.status == "input_required":
                job.status = "working"
        await job.ended.wait()
        if job.error is not None:
            raise ProtocolError(job.error["code"], job.error["message"])
        assert job.result is not None
        return {**job.result, "_meta": {"io.modelcontextprotocol/related-task": {"taskId": job.task_id}}}


async def created(peer: TasksPeer) -> Job:
    with anyio.fail_after(10):
        await peer.created.wait()
    return next(iter(peer.jobs.values()))


# -- starting and awaiting ---------------------------------------------------------------------------------------


async def test_a_task_is_started_then_awaited_for_its_result(era: str) -> None:
    peer = TasksPeer(era)
    async with peer.client() as client:
        task = await client.start_task("slow", {"n": 1}, ttl=60)
        first = task.info
        peer.jobs[task.id or ""].finish("done")
        with anyio.fail_after(10):
            result = await task

    assert isinstance(task, ToolTask)
    assert (task.id, result.text, result.is_error, task.done) == ("task-1", "done", False, True)
    assert first == TaskInfo("task-1", "working", None, WHEN, WHEN, 60.0, 0.01)
    (call,) = peer.sent("tools/call")
    if era == "2026-07-28":  # the extension declared on the call; the server decides, so no task params
        assert call["_meta"][wire.CAPABILITIES_KEY] == {"extensions": {EXTENSION: {}}}
        assert "task" not in call
        assert peer.sent("tasks/result") == []
    else:  # asked for, with the ttl in milliseconds; the result taken with tasks/result
        assert call["task"] == {"ttl": 60000}
        assert peer.sent("tasks/result") == [{"taskId": "task-1"}]


async def test_status_polls_the_task_once_and_watch_follows_it_to_its_end(era: str) -> None:
    peer = TasksPeer(era)
    async with peer.client() as client:
        task = await client.start_task("slow")
        job = peer.jobs["task-1"]
        job.message = "step 1 of 2"
        now = await task.status()
        seen: list[tuple[str, str | None]] = []
        with anyio.fail_after(10):
            async for info in task.watch():
                seen.append((info.status, info.status_message))
                if len(seen) == 1:
                    job.message = "step 2 of 2"
                elif info.status == "working" and info.status_message == "step 2 of 2":
                    job.finish("all done")
            result = await task.result()

    assert (now.status, now.status_message) == ("working", "step 1 of 2")
    assert seen == [("working", "step 1 of 2"), ("working", "step 2 of 2"), ("completed", "step 2 of 2")]
    assert result.text == "all done"
    gets = peer.sent("tasks/get")
    assert gets[0] == {"taskId": "task-1"} if era == "2025-11-25" else gets[0]["taskId"] == "task-1"


async def test_every_2026_request_on_a_task_declares_the_extension() -> None:
    peer = TasksPeer("2026-07-28")
    async with peer.client() as client:
        task = await client.start_task("slow")
        peer.jobs["task-1"].finish("ok")
        with anyio.fail_after(10):
            await task

    for params in peer.sent("tasks/get"):
        assert params["_meta"][wire.CAPABILITIES_KEY]["extensions"] == {EXTENSION: {}}
        assert params["_meta"][wire.VERSION_KEY] == "2026-07-28"


# -- questions ---------------------------------------------------------------------------------------------------


async def test_a_task_that_asks_is_answered_by_the_clients_elicitation_handler(era: str) -> None:
    asked: list[ElicitRequest] = []
    peer = TasksPeer(era)

    def handler(request: ElicitRequest) -> ElicitResult[Any]:
        asked.append(request)
        peer.jobs["task-1"].finish("hello Ada")  # the task goes on once answered
        return ElicitResult.accept({"name": "Ada"})

    async with peer.client(elicitation_handler=handler) as client:
        task = await client.start_task("slow")
        job = peer.jobs["task-1"]
        job.status, job.questions = "input_required", {"name": QUESTION}
        with anyio.fail_after(10):
            result = await task

    assert result.text == "hello Ada"
    assert [(a.message, a.mode) for a in asked] == [("Your name?", "form")]
    assert job.answers == {"name": {"action": "accept", "content": {"name": "Ada"}}}
    if era == "2026-07-28":
        (update,) = peer.sent("tasks/update")
        assert (update["taskId"], update["inputResponses"]) == ("task-1", job.answers)
        assert asked[0].key == "name"
    else:  # asked as a server request while tasks/result waits, with the related-task _meta
        assert peer.sent("tasks/update") == []


async def test_a_question_seen_in_several_polls_is_answered_once() -> None:
    asked: list[str] = []
    peer = TasksPeer("2026-07-28")

    async def handler(request: ElicitRequest) -> ElicitResult[Any]:
        asked.append(request.message)
        return ElicitResult.accept({"name": "Ada"})

    async with peer.client(elicitation_handler=handler) as client:
        task = await client.start_task("slow")
        job = peer.jobs["task-1"]
        job.status, job.questions = "input_required", {"name": QUESTION}
        with anyio.fail_after(10):
            async for info in task.watch():
                if info.status == "working" and job.answers:
                    # the server is slow to take the answer in: it still shows the question answered
                    job.status, job.questions = "input_required", {"name": QUESTION}
                    job.message = "still asking"
                elif info.status_message == "still asking":
                    job.finish("done")

    assert asked == ["Your name?"]
    assert len(peer.sent("tasks/update")) == 1


# -- ends other than a result ------------------------------------------------------------------------------------


async def test_a_cancelled_task_raises_task_cancelled_error(era: str) -> None:
    peer = TasksPeer(era)
    async with peer.client() as client:
        task = await client.start_task("slow")
        await task.cancel()
        with anyio.fail_after(10), pytest.raises(TaskCancelledError) as caught:
            await task

    assert caught.value.task_id == "task-1"
    assert [params["taskId"] for params in peer.sent("tasks/cancel")] == ["task-1"]
    assert peer.jobs["task-1"].status == "cancelled"


async def test_cancelling_an_ended_task_is_refused_in_2025_11_25_and_the_result_stays() -> None:
    peer = TasksPeer("2025-11-25")
    async with peer.client() as client:
        task = await client.start_task("slow")
        peer.jobs["task-1"].finish("first")
        with anyio.fail_after(10):
            result = await task
        with pytest.raises(ProtocolError) as caught:
            await task.cancel()

    assert (result.text, caught.value.code) == ("first", -32602)


async def test_a_task_that_fails_with_a_json_rpc_error_raises_it(era: str) -> None:
    peer = TasksPeer(era)
    async with peer.client() as client:
        task = await client.start_task("slow")
        peer.jobs["task-1"].fail(-32603, "API rate limit exceeded")
        with anyio.fail_after(10), pytest.raises(ProtocolError) as caught:
            await task

    assert (caught.value.code, caught.value.message) == (-32603, "API rate limit exceeded")


async def test_a_tool_error_is_a_result_with_is_error(era: str) -> None:
    peer = TasksPeer(era)
    async with peer.client() as client:
        task = await client.start_task("slow")
        peer.jobs["task-1"].finish("no such city", is_error=True)
        with anyio.fail_after(10):
            result = await task

    assert (result.is_error, result.text) == (True, "no such city")


async def test_an_unknown_task_is_the_servers_error(era: str) -> None:
    peer = TasksPeer(era)
    async with peer.client() as client:
        with anyio.fail_after(10), pytest.raises(ProtocolError) as caught:
            await client.task("no-such-task")

    assert caught.value.code == -32602


# -- servers that answer at once ---------------------------------------------------------------------------------


async def test_a_server_without_tasks_answers_at_once_and_the_handle_is_done(era: str) -> None:
    peer = TasksPeer(era, tasks=False)
    async with peer.client() as client:
        task = await client.start_task("slow", {"n": 2})
        with anyio.fail_after(10):
            result = await task

    assert (task.id, task.done, task.info, result.text) == (None, True, None, "at once: {'n': 2}")
    (call,) = peer.sent("tools/call")
    assert "task" not in call  # 2025-11-25: a server without tasks.requests.tools.call is not asked for one


async def test_a_tool_that_is_not_run_as_a_task_answers_at_once(era: str) -> None:
    # 2026-07-28: the server decides (this one runs echo at once); 2025-11-25: echo's taskSupport is "forbidden",
    # so the client does not ask for a task (tools/list tells it, listed once).
    peer = TasksPeer(era)
    async with peer.client() as client:
        task = await client.start_task("echo", {"x": 1})
        result = await task

    assert (task.id, result.text) == (None, "at once: {'x': 1}")
    assert [("task" in call) for call in peer.sent("tools/call")] == [False]
    methods = [m["method"] for m in peer.received if m.get("method", "").startswith("tools/")]
    assert methods[0] == ("tools/call" if era == "2026-07-28" else "tools/list")  # then the output check lists them


async def test_call_tool_runs_a_tool_the_2026_server_runs_only_as_a_task() -> None:
    peer = TasksPeer("2026-07-28")
    async with peer.client() as client, anyio.create_task_group() as tg:

        async def finish() -> None:
            (await created(peer)).finish("the report")

        tg.start_soon(finish)
        with anyio.fail_after(10):
            result = await client.call_tool("only_task", {"q": 1})

    assert result.text == "the report"
    first, second = peer.sent("tools/call")
    assert EXTENSION not in first["_meta"][wire.CAPABILITIES_KEY].get("extensions", {})  # a plain call first
    assert second["_meta"][wire.CAPABILITIES_KEY]["extensions"] == {EXTENSION: {}}


# -- picking a task up again -------------------------------------------------------------------------------------


async def test_a_new_client_picks_a_task_up_by_its_id(era: str) -> None:
    peer = TasksPeer(era)
    async with peer.client() as client:
        task_id = (await client.start_task("slow", {"n": 3})).id
    assert task_id is not None
    peer.jobs[task_id].finish("finished while nobody was connected")
    async with peer.client() as again:
        task = again.task(task_id)
        with anyio.fail_after(10):
            state = await task.status()
            result = await task

    assert (state.status, result.text) == ("completed", "finished while nobody was connected")


async def test_a_client_picks_up_a_task_of_its_own_connection_while_it_runs(era: str) -> None:
    peer = TasksPeer(era)
    async with peer.client() as client:
        started = await client.start_task("slow")
        other = client.task(started.id or "")
        assert (await other.status()).status == "working"
        peer.jobs["task-1"].finish("one result for both")
        with anyio.fail_after(10):
            results = [(await started).text, (await other).text]

    assert results == ["one result for both", "one result for both"]
