"""A raw JSON-line peer for protocol tests, over memory or a real stdio subprocess.

The peer sends any text (valid or not) and reads every message the server sends, with every wait bounded.
Each message it reads is checked against the official MCP JSON Schema of the revision in use
(vendored in `tests/mcp_schema/<revision>.json`): the JSON-RPC envelope, then the specific result or notification type.
A field a revision does not define, or a missing required one, fails the test instead of a client.
"""

from __future__ import annotations

import functools
import json
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import jsonschema
import servers
import zygote
from anyio.streams.buffered import BufferedByteReceiveStream

from toolkit import MemoryTransport, Server

MODERN = "2026-07-28"
HANDSHAKE = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
LATEST = HANDSHAKE[0]
TIMEOUT = 30.0  # seconds any one wait may take; generous, so only a hang fails (10 s was reached under load: a
# block that starts a server process, under coverage, on a busy machine: CI runs six workers on two cores)
SCHEMA_DIR = Path(__file__).resolve().parent / "mcp_schema"  # vendored: see mcp_schema/README.md
DEMO = servers.PROTOCOL_DEMO

VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
CLIENT_INFO_KEY = "io.modelcontextprotocol/clientInfo"
LOG_LEVEL_KEY = "io.modelcontextprotocol/logLevel"
SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"
SUBSCRIPTION_KEY = "io.modelcontextprotocol/subscriptionId"

Connect = Callable[..., AbstractAsyncContextManager["Peer"]]
"""The `connect` fixture: `async with connect(page_size=None) as peer`."""

# The result type each method answers with, by the name of its `$defs`/`definitions` entry.
RESULTS = {
    "initialize": "InitializeResult",
    "ping": "EmptyResult",
    "logging/setLevel": "EmptyResult",
    "tools/list": "ListToolsResult",
    "tools/call": "CallToolResult",
    "server/discover": "DiscoverResult",
    "subscriptions/listen": "SubscriptionsListenResult",
    "resources/list": "ListResourcesResult",
    "resources/read": "ReadResourceResult",
}
# Tasks: 2025-11-25's experimental methods (its core schema), and the 2026-07-28 extension's (`ext-tasks.json`).
HANDSHAKE_TASK_RESULTS = {
    "tasks/get": "GetTaskResult",
    "tasks/result": "GetTaskPayloadResult",
    "tasks/list": "ListTasksResult",
    "tasks/cancel": "CancelTaskResult",
}
EXTENSION_TASK_RESULTS = {
    "tasks/get": "GetTaskResult",
    "tasks/update": "UpdateTaskResult",
    "tasks/cancel": "CancelTaskResult",
}
TASKS_SCHEMA = "ext-tasks"
NOTIFICATIONS = {
    "notifications/progress": "ProgressNotification",
    "notifications/message": "LoggingMessageNotification",
    "notifications/tools/list_changed": "ToolListChangedNotification",
    "notifications/subscriptions/acknowledged": "SubscriptionsAcknowledgedNotification",
    "notifications/cancelled": "CancelledNotification",
    "notifications/elicitation/complete": "ElicitationCompleteNotification",
    "notifications/tasks/status": "TaskStatusNotification",
}
# Requests a toolkit server sends to its client (handshake era only), by the revision that introduced them.
SERVER_REQUESTS = {
    "elicitation/create": ("ElicitRequest", "2025-06-18"),
    "sampling/createMessage": ("CreateMessageRequest", "2024-11-05"),
    "roots/list": ("ListRootsRequest", "2024-11-05"),
}
# Input requests of a 2026-07-28 InputRequiredResult, by method: the request types without jsonrpc and id.
INPUT_REQUESTS = {
    "elicitation/create": "ElicitRequest",
    "sampling/createMessage": "CreateMessageRequest",
    "roots/list": "ListRootsRequest",
}
# Error codes with a schema type of their own.
ERRORS = {
    -32042: ("URLElicitationRequiredError", "2025-11-25"),
    -32021: ("MissingRequiredClientCapabilityError", MODERN),
}


class AnyText:
    """Equal to any string: for error messages, which tests do not pin (codes are the contract)."""

    def __eq__(self, other: object) -> bool:
        return isinstance(other, str)

    def __hash__(self) -> int:
        return 0

    def __repr__(self) -> str:
        return "<any text>"


TEXT = AnyText()


def error(request_id: Any, code: int, data: Any = None) -> dict[str, Any]:
    """The whole error response expected for `request_id`, with any message text."""
    body: dict[str, Any] = {"code": code, "message": TEXT}
    if data is not None:
        body["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": body}


def meta(
    version: str = MODERN, *, log_level: str | None = None, progress: str | int | None = None, **extra: Any
) -> dict[str, Any]:
    """The 2026-07-28 per-request `_meta` envelope."""
    out: dict[str, Any] = {
        VERSION_KEY: version,
        CAPABILITIES_KEY: {},
        CLIENT_INFO_KEY: {"name": "wire", "version": "1.0"},
        **extra,
    }
    if log_level is not None:
        out[LOG_LEVEL_KEY] = log_level
    if progress is not None:
        out["progressToken"] = progress
    return out


# -- schema validation ---------------------------------------------------------------------------------


@functools.cache
def _schema(version: str) -> dict[str, Any]:
    path = SCHEMA_DIR / f"{version}.json"
    if not path.is_file():
        raise RuntimeError(
            f"the official MCP schema for {version} is missing: expected {path}. The protocol tests validate every "
            "server message against it; the files are vendored in tests/mcp_schema/ (see its README)."
        )
    schema: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return schema


@functools.cache
def _validator(version: str, name: str) -> Any:
    root = _schema(version)
    key = "$defs" if "$defs" in root else "definitions"
    if name not in root[key]:
        raise AssertionError(f"the {version} schema has no {name}: the server sent something that revision lacks")
    cls = jsonschema.validators.validator_for(root)
    return cls({**root, "$ref": f"#/{key}/{name}"})


def validate(instance: Any, name: str, version: str) -> None:
    """Fail unless `instance` is a valid `name` (a `$defs` entry) of the MCP schema for `version`."""
    errors = list(_validator(version, name).iter_errors(instance))
    if errors:
        best = jsonschema.exceptions.best_match(errors)
        where = "/".join(map(str, best.absolute_path))
        raise AssertionError(f"not a valid {version} {name} at /{where}: {best.message}\n{json.dumps(instance)}")


def check_server_message(message: Any, version: str, method: str | None) -> None:
    """Validate one message the server sent; `method` is the method of the request it answers, if any."""
    if isinstance(message, list):
        assert version == "2025-03-26", f"a batch reply under {version}, which has no batches"
        assert message, "an empty batch reply"
        return  # items are checked one by one by the caller, each with its own method
    assert isinstance(message, dict), f"the server sent a non-object message: {message!r}"
    if "method" in message and "id" in message:
        _check_server_request(message, version)
        return
    if "method" in message:
        validate(message, "JSONRPCNotification", version)
        if message["method"] == "notifications/tasks" and version == MODERN:
            validate(message, "TaskStatusNotification", TASKS_SCHEMA)
            return
        name = NOTIFICATIONS.get(message["method"])
        assert name is not None, f"an unexpected notification: {message}"
        validate(message, name, version)
        return
    if "error" in message:
        _check_error_response(message, version)
        return
    _check_result_response(message, version, method)


def _check_error_response(message: dict[str, Any], version: str) -> None:
    envelope = "JSONRPCErrorResponse" if version >= "2025-11-25" else "JSONRPCError"
    if message.get("id") is None:
        # JSON-RPC 2.0 answers an unreadable request with `"id": null`; the MCP schemas type ids as string or
        # integer (and from 2025-11-25 let an error omit the id), so check the rest of the envelope.
        assert "id" in message, "an error without an id member: JSON-RPC 2.0 says null"
        validate({**message, "id": 0}, envelope, version)
    else:
        validate(message, envelope, version)
    _check_error_type(message, version)


def _check_result_response(message: dict[str, Any], version: str, method: str | None) -> None:
    modern = version == MODERN
    envelope = "JSONRPCResultResponse" if version >= "2025-11-25" else "JSONRPCResponse"
    validate(message, envelope, version)
    result = message["result"]
    if method is not None and _check_task_result(result, version, method):
        return
    asks = modern and isinstance(result, dict) and result.get("resultType") == "input_required"
    if method is not None and method in RESULTS and not asks:
        validate(result, RESULTS[method], version)
    if asks:
        # basic/patterns/mrtr: only tools/call (of toolkit's methods) may ask; each input request is checked.
        assert method == "tools/call", f"input_required answering {method}: {message}"
        validate(message, "CallToolResultResponse", version)
        validate(result, "InputRequiredResult", version)
        for request in (result.get("inputRequests") or {}).values():
            validate(request, INPUT_REQUESTS[request["method"]], version)
    elif modern:
        assert result.get("resultType") == "complete", f"a 2026-07-28 result without resultType: {message}"
    else:
        for later in ("resultType", "ttlMs", "cacheScope"):
            assert later not in result, f"{later} in a {version} result: {message}"


def _check_task_result(result: Any, version: str, method: str) -> bool:
    """Check a task's result (a task made by `tools/call`, or a `tasks/*` answer); False for any other result."""
    if not isinstance(result, dict):
        return False
    if version == MODERN:
        return _check_extension_task_result(result, method)
    if method == "tools/call" and "task" in result:
        validate(result, "CreateTaskResult", version)
        return True
    if method in HANDSHAKE_TASK_RESULTS:
        validate(result, HANDSHAKE_TASK_RESULTS[method], version)
        if method == "tasks/result":
            validate(result, "CallToolResult", version)
        return True
    return False


def _check_extension_task_result(result: dict[str, Any], method: str) -> bool:
    """2026-07-28: the tasks extension's results, against its schema (`ext-tasks.json`)."""
    if method == "tools/call" and result.get("resultType") == "task":
        validate(result, "CreateTaskResult", TASKS_SCHEMA)
        return True
    if method not in EXTENSION_TASK_RESULTS:
        return False
    assert result.get("resultType") == "complete", f"a tasks result without resultType complete: {result}"
    validate(result, EXTENSION_TASK_RESULTS[method], TASKS_SCHEMA)
    if result.get("status") == "input_required":
        for request in (result.get("inputRequests") or {}).values():
            validate(request, INPUT_REQUESTS[request["method"]], MODERN)
    if result.get("status") == "completed" and method == "tasks/get":
        validate(result["result"], "CallToolResult", MODERN)
    return True


def _check_server_request(message: dict[str, Any], version: str) -> None:
    """A request of the server's own: elicitation or sampling, never in 2026-07-28 (basic/patterns/mrtr)."""
    assert version != MODERN, f"a server-to-client request in 2026-07-28, which has none: {message}"
    name, since = SERVER_REQUESTS.get(message["method"], (None, ""))
    assert name is not None, f"an unexpected request from the server: {message}"
    assert version >= since, f"{message['method']} under {version}, which predates it ({since})"
    validate(message, "JSONRPCRequest", version)
    validate(message, name, version)


def _check_error_type(message: dict[str, Any], version: str) -> None:
    code = message["error"].get("code")
    if code in ERRORS:
        name, only = ERRORS[code]
        assert version == only, f"error {code} under {version}; only {only} defines it: {message}"
        validate(message, name, version)


# -- the peer ------------------------------------------------------------------------------------------


def encode(message: Any) -> str:
    return json.dumps(message, separators=(",", ":"))


def initialize_request(request_id: Any = 1, version: str = LATEST) -> dict[str, Any]:
    """The `initialize` request that opens a handshake, as a raw client without capabilities sends it."""
    params = {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    return {"jsonrpc": "2.0", "id": request_id, "method": "initialize", "params": params}


#: The headers of a POST to a Streamable HTTP endpoint: JSON in, JSON or SSE back.
POST_HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


class Peer:
    """One raw client connection. Every message read is decoded and schema-checked.

    Attributes:
        version: The handshake revision, once `initialize` succeeded: replies to requests without the
            2026-07-28 `_meta` are checked against it (against 2025-11-25 before).
        modern: Whether a 2026-07-28 request was sent (notifications are then checked against 2026-07-28 unless
            the connection also made the handshake).
        server: The `Server` on the other end, for in-memory peers (None over stdio).
    """

    def __init__(
        self,
        write: Callable[[bytes], Awaitable[None]],
        read_line: Callable[[], Awaitable[bytes]],
        server: Server | None,
        *,
        framed: bool,
    ) -> None:
        self._write = write
        self._read_line = read_line
        self._framed = framed
        self.server = server
        self.version: str | None = None
        self.modern = False
        self.requests: dict[str, tuple[str | None, bool]] = {}
        """Each request sent, by its JSON-encoded id: its method and whether it was a 2026-07-28 request."""
        self.highest_id = 0  # the highest integer id a request has used (`next_id`: one more, without a scan)
        self.lines: list[str] = []

    # -- sending ---------------------------------------------------------------------------------------

    async def send(self, message: Any) -> None:
        """Send one JSON message (a dict, a list for a batch, or any JSON value)."""
        await self.send_text(encode(message))

    async def send_text(self, text: str | bytes) -> None:
        """Send raw text as one message (over stdio, a line: a newline is added)."""
        data = text.encode() if isinstance(text, str) else text
        self._record(data)
        await self._write(data + b"\n" if self._framed else data)

    def _record(self, data: bytes) -> None:
        """Remember the method (and era) of each request sent, to check the reply against the right schema."""
        try:
            message = json.loads(data)
        except ValueError:
            return
        for item in message if isinstance(message, list) else [message]:
            if isinstance(item, dict) and "id" in item:
                method = item.get("method")
                params = item.get("params")
                envelope = params.get("_meta") if isinstance(params, dict) else None
                modern = isinstance(envelope, dict) and VERSION_KEY in envelope and method != "initialize"
                self.modern = self.modern or modern
                self.requests[json.dumps(item["id"])] = (method if isinstance(method, str) else None, modern)
                if isinstance(item["id"], int) and not isinstance(item["id"], bool):
                    self.highest_id = max(self.highest_id, item["id"])

    async def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        await self.send(message)

    async def close_input(self) -> None:
        """End the input: the server sees end of stream."""
        raise NotImplementedError

    async def rest(self) -> list[Any]:
        """After `close_input`: every message the server still sends before it closes the connection."""
        raise NotImplementedError

    async def wait_closed(self) -> int:
        """Wait until the server has finished; its exit code (0 for a clean end)."""
        raise NotImplementedError

    # -- receiving -------------------------------------------------------------------------------------

    async def receive(self) -> Any:
        """The next message from the server, decoded and validated."""
        with anyio.fail_after(TIMEOUT):
            line = await self._read_line()
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError:
            raise AssertionError(f"the server sent bytes that are not UTF-8: {line[:200]!r}") from None
        assert "\n" not in text, f"a message with an embedded newline: {text[:200]!r}"
        self.lines.append(text)
        try:
            message = json.loads(text)
        except ValueError:
            raise AssertionError(f"the server sent something that is not JSON: {text[:200]!r}") from None
        self._check(message)
        return message

    def _check(self, message: Any) -> None:
        handshake = self.version or LATEST
        if isinstance(message, list):
            check_server_message(message, handshake, None)
        for item in message if isinstance(message, list) else [message]:
            if not isinstance(item, dict) or "method" in item:
                # Notifications carry no revision: a handshake connection's, else 2026-07-28 once it was used.
                check_server_message(item, self.version or (MODERN if self.modern else LATEST), None)
                continue
            key = json.dumps(item.get("id"))
            if item.get("id") is not None and key not in self.requests:
                raise AssertionError(f"a response to a request never sent: {item}")
            method, modern = self.requests.get(key, (None, False))
            version = MODERN if modern else handshake
            if method == "initialize" and "result" in item:
                version = self.version = item["result"].get("protocolVersion")
                assert version in HANDSHAKE, f"initialize answered with {version!r}"
            check_server_message(item, version, method)

    async def receive_many(self, count: int) -> list[Any]:
        return [await self.receive() for _ in range(count)]

    async def request(self, method: str, params: dict[str, Any] | None = None, *, id: Any = None) -> Any:
        """Send a request and return the next message, which must be its response."""
        request_id = id if id is not None else self.next_id()
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        await self.send(message)
        reply = await self.receive()
        assert isinstance(reply, dict), reply
        assert reply.get("id") == request_id, f"expected the response to {request_id!r}, got {reply}"
        return reply

    def next_id(self) -> int:
        """An integer id no request of this peer has used yet."""
        return self.highest_id + 1

    async def result(self, method: str, params: dict[str, Any] | None = None) -> Any:
        """Send a request and return the result of its response (failing on an error response)."""
        reply = await self.request(method, params)
        assert "result" in reply, reply
        return reply["result"]

    async def initialize(
        self, version: str = LATEST, *, initialized: bool = True, capabilities: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """The handshake: `initialize`, then `notifications/initialized`. Returns the result."""
        params = {"protocolVersion": version, "capabilities": capabilities or {}}
        result: dict[str, Any] = await self.result(
            "initialize", {**params, "clientInfo": {"name": "wire", "version": "1.0"}}
        )
        if initialized:
            await self.notify("notifications/initialized")
        return result

    async def call(self, name: str, arguments: dict[str, Any] | None = None, **params: Any) -> Any:
        """`tools/call` in the handshake era; returns the whole response."""
        return await self.request("tools/call", _call_params(name, arguments, params))

    async def start_call(
        self, name: str, arguments: dict[str, Any] | None = None, *, id: Any = 1, **params: Any
    ) -> None:
        """Send a `tools/call` with this `id` and return without reading: the server asks something first, or the
        test cancels the call or closes the input before its response."""
        await self.send(
            {"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": _call_params(name, arguments, params)}
        )


def _call_params(name: str, arguments: dict[str, Any] | None, params: dict[str, Any]) -> dict[str, Any]:
    """A `tools/call`'s params: the name, the arguments when given, and any other params (`_meta`)."""
    body: dict[str, Any] = {"name": name, **params}
    if arguments is not None:
        body["arguments"] = arguments
    return body


# -- connecting ----------------------------------------------------------------------------------------


class MemoryPeer(Peer):
    """A peer on `MemoryTransport.pair()`, with `server.serve()` running on the other end in the test's loop."""

    def __init__(self, server: Server, tg: anyio.abc.TaskGroup) -> None:
        self._mine, theirs = MemoryTransport.pair()
        self._served = anyio.Event()
        super().__init__(self._write_text, self._read_text, server, framed=False)
        tg.start_soon(self._serve, server, theirs)

    async def _serve(self, server: Server, transport: MemoryTransport) -> None:
        try:
            await server.serve(transport)
        finally:
            self._served.set()

    async def _write_text(self, data: bytes) -> None:
        await self._mine.send(data.decode())

    async def _read_text(self) -> bytes:
        try:
            return (await self._mine.receive()).encode()
        except anyio.EndOfStream:
            raise AssertionError("the server closed the connection") from None

    async def close_input(self) -> None:
        """Close the connection (both directions: the memory transport has no half-close)."""
        await self._mine.aclose()

    async def wait_closed(self) -> int:
        """Wait until the server is done with the connection; 0 means it returned normally."""
        with anyio.fail_after(TIMEOUT):
            await self._served.wait()
        return 0

    async def rest(self) -> list[Any]:
        """Every message the server sent that the peer has not read (the connection is closed)."""
        out = []
        with anyio.fail_after(TIMEOUT):
            while True:
                try:
                    text = await self._mine.receive()
                except (anyio.EndOfStream, anyio.ClosedResourceError):
                    break
                self.lines.append(text)
                message = json.loads(text)
                self._check(message)
                out.append(message)
        return out


class StdioPeer(Peer):
    """A peer on the stdin/stdout of a server subprocess; its stderr is collected in `stderr`."""

    def __init__(self, process: anyio.abc.Process, tg: anyio.abc.TaskGroup) -> None:
        assert process.stdin is not None
        assert process.stdout is not None
        self.process = process
        self._stdin = process.stdin
        self._stdout = BufferedByteReceiveStream(process.stdout)
        self._stderr = bytearray()
        self._stderr_done = anyio.Event()
        super().__init__(self._stdin.send, self._line, None, framed=True)
        tg.start_soon(self._drain_stderr)

    @property
    def stderr(self) -> str:
        return self._stderr.decode("utf-8", "replace")

    async def _drain_stderr(self) -> None:
        assert self.process.stderr is not None
        try:
            async for chunk in self.process.stderr:
                self._stderr += chunk
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass
        finally:
            self._stderr_done.set()

    async def _line(self) -> bytes:
        try:
            return await self._stdout.receive_until(b"\n", 64 * 1024 * 1024)
        except (anyio.IncompleteRead, anyio.EndOfStream):
            raise AssertionError(f"the server closed stdout; stderr:\n{self.stderr}") from None

    async def close_input(self) -> None:
        await self._stdin.aclose()

    async def wait_closed(self) -> int:
        """Wait for the process to exit and return its return code."""
        with anyio.fail_after(TIMEOUT):
            code = await self.process.wait()
            await self._stderr_done.wait()
        return code

    async def rest(self) -> list[Any]:
        """Every message the server writes until it closes stdout."""
        out = []
        with anyio.fail_after(TIMEOUT):
            while True:
                try:
                    line = await self._stdout.receive_until(b"\n", 64 * 1024 * 1024)
                except (anyio.IncompleteRead, anyio.EndOfStream):
                    break
                text = line.decode("utf-8")
                self.lines.append(text)
                message = json.loads(text)
                self._check(message)
                out.append(message)
        return out


#: The demo server's tools, in the order it registers them (and lists them).
DEMO_TOOLS = [
    "echo",
    "add",
    "wait",
    "open",
    "block",
    "cancellations",
    "count",
    "chatter",
    "fail",
    "crash",
    "shout",
    "media",
    "whoami",
    "big",
    "nap",
    "grow",
    "shrink",
]


def demo_command(backend: str, *args: str) -> list[str]:
    """The command line that serves the demo server over stdio on `backend`."""
    return [sys.executable, str(DEMO), "--backend", backend, *args]


def load_demo() -> Any:
    """The demo server module, freshly imported (each test gets its own server state)."""
    return servers.load(DEMO)


@asynccontextmanager
async def memory(server: Server) -> AsyncIterator[MemoryPeer]:
    """A raw peer connected in memory to `server`; on exit, input ends and the server must finish cleanly."""
    async with anyio.create_task_group() as tg:
        peer = MemoryPeer(server, tg)
        try:
            yield peer
        finally:
            await peer.close_input()
            with anyio.fail_after(TIMEOUT):
                await peer.rest()
            await peer.wait_closed()


@asynccontextmanager
async def stdio(command: list[str], *, fresh: bool = False) -> AsyncIterator[StdioPeer]:
    """A raw peer on a server subprocess; on exit, stdin closes and the process must exit with code 0.

    A server script (`[sys.executable, script, *args]`) is forked from this test process's warm zygote (see
    `zygote`); `fresh=True` starts a new interpreter instead, for what only its start-up or its exit shows.
    """
    process: anyio.abc.Process
    if fresh or command[0] != sys.executable:
        process = await anyio.open_process(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
    else:
        process = zygote.fork(command)
    async with process, anyio.create_task_group() as tg:
        peer = StdioPeer(process, tg)
        try:
            yield peer
        except BaseException:
            process.kill()
            raise
        await peer.close_input()
        await peer.rest()
        code = await peer.wait_closed()
        assert code == 0, f"the server exited with {code}; stderr:\n{peer.stderr}"


@asynccontextmanager
async def connect(transport: str, backend: str, **options: Any) -> AsyncIterator[Peer]:
    """A raw peer on a fresh demo server, over `transport` ("memory" or "stdio"); the server runs on `backend`.

    `options` go to the demo's `build()` (`page_size`, `max_message_size`, `shutdown_grace`), or its command line.
    """
    if transport == "memory":
        async with memory(load_demo().build(**options)) as peer:
            yield peer
    else:
        args = [f"--{key.replace('_', '-')}={value}" for key, value in options.items()]
        async with stdio(demo_command(backend, *args)) as peer:
            yield peer
