"""A tasks server written by hand from the spec's wire format, in both eras, for the client's and the CLI's tests.

It plays the server of the tasks extension (2026-07-28, `io.modelcontextprotocol/tasks`) or of 2025-11-25's
experimental tasks. In memory (`TasksPeer(era).client()`), the test decides when a task ends, what it asks and how it
fails, and reads every message the client sent. Run as a script (`python tasks_peer.py`), it serves stdio in the era
the client opens with, and its tasks move on by themselves, one step per poll: `slow` reports two steps then ends,
`ask` asks the user's name then greets them. Each message it sends is checked against its era's schema (and, in
2026-07-28, the tasks extension's: tests/mcp_schema/ext-tasks.json).
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import anyio.abc

sys.path.insert(0, str(Path(__file__).resolve().parent))  # run as a script: wire and servers sit next to it

import wire

from toolkit import Client, MemoryTransport, ProtocolError, StdioTransport, StreamingASGITransport, Transport

__all__ = ["EXTENSION", "QUESTION", "WHEN", "Job", "TasksPeer", "command"]

_CACHE = {"ttlMs": 0, "cacheScope": "private"}  # what a 2026-07-28 discover or list result says of its caching

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
        self.polls = 0
        self.poll_ms = 10  # the poll interval it suggests

    def finish(self, text: str, *, is_error: bool = False) -> None:
        self.status = "completed"  # 2026-07-28: a tool error completes the task (2025-11-25 says failed)
        self.result = {"content": [{"type": "text", "text": text}], "isError": is_error}
        self.ended.set()

    def step(self) -> None:
        """One step of a task that moves on by itself: `slow` reports two steps then ends; `ask` asks a name."""
        if self.status != "working":
            return
        if self.name == "ask":
            if "name" in self.answers:
                answer = self.answers["name"]
                accepted = answer.get("action") == "accept"
                self.finish(f"hello {answer['content']['name']}" if accepted else f"no name: {answer.get('action')}")
            else:
                self.status, self.questions = "input_required", {"name": QUESTION}
            return
        self.polls += 1
        if self.polls <= 2:
            self.message = f"step {self.polls} of 2"
        else:
            self.finish(f"slow done: {json.dumps(self.arguments, sort_keys=True)}")

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
            return {**task, "ttl": 60000, "pollInterval": self.poll_ms}
        task |= {"ttlMs": 60000, "pollIntervalMs": self.poll_ms}
        if self.status == "input_required":
            task["inputRequests"] = self.questions
        elif self.status == "completed":
            task["result"] = {"resultType": "complete", **(self.result or {})}  # a 2026-07-28 CallToolResult
        elif self.status == "failed":
            task["error"] = self.error
        return task


class TasksPeer:
    """A server of one era that runs `slow` as a task (`only_task`: only as one) and `echo` at once.

    `tasks=False`: it declares no tasks and runs every call at once. It keeps its tasks across connections, as a
    server keeps them for whoever created them.
    """

    def __init__(self, era: str, *, tasks: bool = True, auto: bool = False) -> None:
        self.modern = era == "2026-07-28"
        self.era = era
        self.tasks = tasks
        self.auto = auto  # tasks move on by themselves, a step per poll (the script's way)
        self.jobs: dict[str, Job] = {}
        self.received: list[dict[str, Any]] = []
        self.answered: list[str] = []  # the method of each request answered, once its answer is on its way
        self.headers: dict[str, list[dict[str, str]]] = {}  # over HTTP: each request's headers, by method
        self.poll_ms = 10  # the poll interval its tasks suggest
        self.notifies = False  # 2026-07-28: it sends notifications/tasks on subscriptions/listen
        self.created = anyio.Event()
        self.polled = anyio.Event()  # a tasks/get came: the client holds the task's handle
        self._answers: dict[Any, Any] = {}
        self._waiting: dict[Any, anyio.Event] = {}
        # The script's one connection: its first greeting decides the era. A client that heard nothing for 10 s sends
        # the other greeting beside the first (the client's `protocol="auto"` on a pipe); answered, it would turn the
        # peer to the other era under a client that took the first answer (seen on a loaded machine).
        self.first_greeting_decides = era == "auto"
        self.greeted: str | None = None  # its first greeting's method, once it came

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

    @asynccontextmanager
    async def http_client(self, **options: Any) -> AsyncIterator[Client]:
        """A new Client over HTTP (its own httpx client) to this peer served as a 2026-07-28 endpoint, in process."""
        import httpx

        transport = StreamingASGITransport(self.asgi)
        async with (
            httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http,
            Client.http("http://127.0.0.1/mcp", http_client=http, protocol="2026-07-28", **options) as client,
        ):
            yield client

    def sent(self, method: str) -> list[dict[str, Any]]:
        """The params of every `method` request the client sent."""
        return [m.get("params", {}) for m in self.received if m.get("method") == method]

    async def serve(self, transport: Transport, tg: anyio.abc.TaskGroup) -> None:
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

    async def _send(self, transport: Transport, message: dict[str, Any], method: str | None) -> None:
        message = {"jsonrpc": "2.0", **message}
        wire.check_server_message(message, self.era, method)  # the era's schema, and the tasks extension's
        await transport.send(json.dumps(message))

    async def _reply(self, transport: Transport, message: dict[str, Any]) -> None:
        await self._send(transport, await self._response(transport, message), message["method"])
        self.answered.append(message["method"])

    async def _response(self, transport: Transport | None, message: dict[str, Any]) -> dict[str, Any]:
        method, params = message["method"], message.get("params") or {}
        try:
            result = await self.answer(transport, method, params)
        except ProtocolError as exc:
            return {"id": message["id"], "error": exc.to_error()}
        if self.modern:
            result = {"resultType": "complete", **result}
        return {"id": message["id"], "result": result}

    async def asgi(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        """The peer as a 2026-07-28 Streamable HTTP endpoint (stateless: one POST, one JSON answer), keeping each
        request's headers in `headers`, by method."""
        assert (scope["type"], scope["method"]) == ("http", "POST")
        body = b""
        while True:
            event = await receive()
            body += event.get("body", b"")
            if not event.get("more_body"):
                break
        message = json.loads(body)
        self.received.append(message)
        headers = {name.decode(): value.decode() for name, value in scope["headers"]}
        self.headers.setdefault(message.get("method", ""), []).append(headers)
        if "id" not in message:
            await send({"type": "http.response.start", "status": 202, "headers": []})
            await send({"type": "http.response.body", "body": b""})
            return
        response = {"jsonrpc": "2.0", **await self._response(None, message)}
        wire.check_server_message(response, self.era, message["method"])
        answer = json.dumps(response).encode()
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": answer})

    async def answer(self, transport: Transport | None, method: str, params: dict[str, Any]) -> dict[str, Any]:
        if method in ("server/discover", "initialize") and self.first_greeting_decides:
            if self.greeted not in (None, method):
                raise ProtocolError(-32600, f"this connection opened with {self.greeted}")
            self.greeted = method
        if method == "server/discover":
            self.modern, self.era = True, "2026-07-28"
            extensions: dict[str, Any] = {"extensions": {EXTENSION: {}}} if self.tasks else {}
            capabilities = {"tools": {}, **extensions}
            return {"supportedVersions": ["2026-07-28"], "capabilities": capabilities, **_CACHE}
        if method == "initialize":
            self.modern, self.era = False, "2025-11-25"
            tasks: dict[str, Any] = {"tasks": {"cancel": {}, "requests": {"tools": {"call": {}}}}} if self.tasks else {}
            info = {"name": "tasks-peer", "version": "1"}
            return {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}, **tasks}, "serverInfo": info}
        if method == "tools/list":
            support = {"slow": "optional", "ask": "optional", "only_task": "required", "echo": "forbidden"}
            return {
                **(_CACHE if self.modern else {}),
                "tools": [
                    {
                        "name": n,
                        "inputSchema": {"type": "object"},
                        **({} if self.modern else {"execution": {"taskSupport": s}}),
                    }
                    for n, s in support.items()
                ],
            }
        if method == "tools/call":
            return self._call(params)
        if method == "subscriptions/listen":
            return await self._listen(transport, params)
        return await self._on_task(transport, method, params)

    async def _listen(self, transport: Transport | None, params: dict[str, Any]) -> dict[str, Any]:
        """2026-07-28 subscriptions/listen for tasks: acknowledged, then `notifications/tasks` once each task ends."""
        if not self.notifies or transport is None:
            raise ProtocolError(-32601, "Method not found: subscriptions/listen")
        task_ids = [i for i in params.get("notifications", {}).get("taskIds", []) if i in self.jobs]
        acknowledged = {"notifications": {"taskIds": task_ids}}
        await self._send(
            transport, {"method": "notifications/subscriptions/acknowledged", "params": acknowledged}, None
        )
        for task_id in task_ids:
            job = self.jobs[task_id]
            await job.ended.wait()
            await self._send(transport, {"method": "notifications/tasks", "params": job.wire(True)}, None)
        await anyio.sleep_forever()  # open until the client cancels it
        raise AssertionError("unreachable")

    async def _on_task(self, transport: Transport | None, method: str, params: dict[str, Any]) -> dict[str, Any]:
        job = self.jobs.get(params.get("taskId"))  # type: ignore[arg-type]
        if job is None:
            raise ProtocolError(-32602, "Failed to retrieve task: Task not found")
        if method == "tasks/get":
            self.polled.set()
            if self.auto:
                job.step()
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
        job.poll_ms = self.poll_ms
        self.jobs[job.task_id] = job
        self.created.set()
        return {"resultType": "task", **job.wire(True)} if self.modern else {"task": job.wire(False)}

    async def _result(self, transport: Transport | None, job: Job) -> dict[str, Any]:
        """2025-11-25 tasks/result: ask the job's questions (as server requests), then wait for its end."""
        assert transport is not None, "2025-11-25 is served on a connection"
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
                if self.auto:
                    job.step()
        await job.ended.wait()
        if job.error is not None:
            raise ProtocolError(job.error["code"], job.error["message"])
        assert job.result is not None
        return {**job.result, "_meta": {"io.modelcontextprotocol/related-task": {"taskId": job.task_id}}}


def command() -> list[str]:
    """The command that serves a `TasksPeer` over stdio, tasks moving on by themselves."""
    return [sys.executable, str(Path(__file__).resolve())]


async def _main() -> None:
    peer = TasksPeer("auto", auto=True)
    transport = StdioTransport()
    async with anyio.create_task_group() as tg:
        await peer.serve(transport, tg)
        tg.cancel_scope.cancel()


def _serve_http() -> None:
    """`python tasks_peer.py --http`: the peer as a 2026-07-28 endpoint on 127.0.0.1, on a port the system picks,
    announced on stderr as `toolkit serve --http` does (tests/served.py waits for that line)."""
    import signal
    import socket

    import uvicorn

    peer = TasksPeer("2026-07-28", auto=True)
    listening = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listening.bind(("127.0.0.1", 0))
    listening.listen()
    port = listening.getsockname()[1]
    print(f"toolkit: serving on http://127.0.0.1:{port}/mcp", file=sys.stderr, flush=True)
    server = uvicorn.Server(uvicorn.Config(peer.asgi, log_level="warning", lifespan="off", interface="asgi3"))
    # uvicorn raises the SIGTERM that stopped it again once it has shut down, with the handler it found: a no-op
    # here, so the peer exits 0 as every server does under tests/served.py (toolkit serve --http does likewise).
    signal.signal(signal.SIGTERM, lambda signum, frame: None)
    server.run(sockets=[listening])


if __name__ == "__main__":
    if sys.argv[1:] == ["--http"]:
        _serve_http()
    else:
        anyio.run(_main)
