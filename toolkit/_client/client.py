"""Client: talk to any MCP server, in memory or over stdio, in either protocol era."""

from __future__ import annotations

import functools
import os
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, AsyncExitStack
from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal

import anyio
import anyio.abc
from pydantic import TypeAdapter
from typing_extensions import TypedDict, Unpack

from toolkit._asking.handlers import (
    ElicitationHandler,
    Handlers,
    RootsOption,
    SamplingHandler,
    call_with_input,
)
from toolkit._engine.telemetry import INPROC, PIPE, TCP
from toolkit._errors import ProtocolError, refuse_unknown_options
from toolkit._protocol.client_eras import HANDSHAKE_ERA, STATELESS_ERA, ClientEra, client_era_of
from toolkit._protocol.meta import (
    CAPABILITIES_KEY,
    CLIENT_INFO_KEY,
    LOG_LEVEL_KEY,
    UI_EXTENSION,
    UI_MIME_TYPE,
    VERSION_KEY,
)
from toolkit._protocol.revisions import era_neutral
from toolkit._protocol.types import (
    BlobResourceContents,
    CallToolResult,
    Implementation,
    TextResourceContents,
    ToolDefinition,
)
from toolkit._transports.base import Transport
from toolkit._transports.stdio import DEFAULT_MAX_MESSAGE_SIZE, DEFAULT_SHUTDOWN_TIMEOUT, spawn_stdio
from toolkit._version import __version__

from .changes import ToolChanges
from .discovery import Greeting, discover, initialize, probe
from .opened import OpenedTransport, Servable, open_target
from .peer import ClientPeer
from .progress import ProgressCallback, ProgressCallbacks, maybe_await
from .schema_check import OutputChecks
from .tasks import ClientTasks, TaskClient, ToolTask
from .tracing import ClientTracing

if TYPE_CHECKING:
    import httpx
    from opentelemetry.metrics import MeterProvider
    from opentelemetry.trace import TracerProvider

    from toolkit._call.context import LogLevel
    from toolkit._engine.registry import AnyLifespan

__all__ = ["Client", "ClientOptions", "LogMessage", "ProgressCallback", "ProtocolMode", "Servable"]

ProtocolMode = Literal["auto", "2026-07-28", "handshake"]
"""What `Client(protocol=...)` takes: `"auto"` (2026-07-28 when the server offers it, else the handshake),
`"2026-07-28"` (stateless only) or `"handshake"` (initialize, 2025-11-25 down to 2024-11-05)."""
_CLIENT_INFO = Implementation(name="toolkit", version=__version__)


@dataclass(frozen=True, slots=True)
class LogMessage:
    """A `notifications/message` from the server."""

    level: str
    """Its severity (`debug` ... `emergency`)."""
    data: Any
    """The message: any JSON value, usually a string."""
    logger: str | None = None
    """The name of the component that logged it, if given."""


class ClientOptions(TypedDict, total=False):
    """The keyword options of [`Client`][toolkit.Client], `Client.stdio` and `Client.http` (documented on `Client`)."""

    protocol: ProtocolMode
    client_info: Implementation | None
    on_log: Callable[[LogMessage], Awaitable[None] | None] | None
    on_tools_changed: Callable[[], Awaitable[None] | None] | None
    validate_output: bool
    max_message_size: int
    lifespan: AnyLifespan | None
    elicitation_handler: ElicitationHandler | None
    sampling_handler: SamplingHandler | None
    elicitation_modes: Sequence[Literal["form", "url"]]
    sampling_tools: bool
    max_input_rounds: int
    roots: RootsOption | None
    tracer_provider: TracerProvider | None
    meter_provider: MeterProvider | None
    apps: bool


#: Every option's default (each is documented on `Client`).
_DEFAULTS: ClientOptions = {
    "protocol": "auto",
    "client_info": None,  # toolkit's own name and version
    "on_log": None,
    "on_tools_changed": None,
    "validate_output": True,
    "max_message_size": DEFAULT_MAX_MESSAGE_SIZE,
    "lifespan": None,
    "elicitation_handler": None,
    "sampling_handler": None,
    "elicitation_modes": ("form", "url"),
    "sampling_tools": False,
    "max_input_rounds": 10,
    "roots": None,
    "tracer_provider": None,
    "meter_provider": None,
    "apps": False,
}


def _resolve(options: ClientOptions) -> ClientOptions:
    """`options` over the defaults.

    Raises:
        TypeError: an option `Client` does not have (with the one it is closest to).
    """
    refuse_unknown_options("Client", options, _DEFAULTS.keys())
    return {**_DEFAULTS, **options}


class Client:
    """An MCP client, used as an async context manager.

    `Client(server)` connects to a toolkit [`Server`][toolkit.Server] in memory, through the same JSON
    encoding and protocol as stdio. `Client(transport)` speaks over any [`Transport`][toolkit.Transport] (one that is
    also an async context manager is entered for the connection's lifetime, else closed with `aclose` on exit);
    [`Client.stdio`][toolkit.Client.stdio] starts a server process of any implementation, and
    [`Client.http`][toolkit.Client.http] connects to a Streamable HTTP endpoint, each a transport of that kind.

    By default it speaks 2026-07-28 and falls back to the `initialize` handshake when the server does not
    (it probes with `server/discover`). `protocol="handshake"` or `protocol="2026-07-28"` pins an era.

    Args:
        target: A toolkit `Server` (in memory) or a `Transport`.

    Keyword Args:
        protocol (ProtocolMode): `"auto"` (default), `"2026-07-28"` or `"handshake"`.
        client_info (Implementation | None): How the client introduces itself.
        on_log (Callable | None): Called with each [`LogMessage`][toolkit.LogMessage] the server sends.
        on_tools_changed (Callable | None): Called when the server says its tool list changed.
        validate_output (bool): Check `structuredContent` against the tool's `outputSchema`, compiled once per tool
            (needs `jsonschema`; default `True`).
        max_message_size (int): The largest message accepted from the server, in bytes (default 16 MiB, as the
            server's). A larger reply is skipped without being held, and the call waiting for it fails at once with a
            [`MessageError`][toolkit.MessageError]; a larger request is not sent (`MessageError` too).
        lifespan (Lifespan | None): With a `Server`, run this lifespan instead of the server's own (a fake, in a
            test). Either way the client runs the lifespan around the connection (see
            [`Server.running`][toolkit.Server.running]), so a startup that fails raises
            [`StartupError`][toolkit.StartupError] from `async with`.
        elicitation_handler (ElicitationHandler | None): Answers the server's questions to the user (elicitation);
            declares the capability. Called with an [`ElicitRequest`][toolkit.ElicitRequest], returns an
            [`ElicitResult`][toolkit.ElicitResult] (or an awaitable of one). See
            [human in the loop](human-in-the-loop.md).
        sampling_handler (SamplingHandler | None): Answers the server's requests for a completion (sampling);
            declares the capability. Called with a [`SampleRequest`][toolkit.SampleRequest], returns a
            [`SampleResult`][toolkit.SampleResult] or a `str` (or an awaitable of either).
        elicitation_modes (Sequence[str]): The elicitation modes declared with `elicitation_handler`: `"form"`,
            `"url"` (default both).
        sampling_tools (bool): Declare `sampling.tools`: the handler answers requests that offer the model tools.
        max_input_rounds (int): In 2026-07-28, how many times one call may ask for input before the client gives up
            (the client answers each `InputRequiredResult` and retries the call itself; default 10).
        roots (RootsOption | None): The directories and files the server may work on, for `roots/list` (declares
            `roots`): paths (made absolute), `file://` URIs or [`Root`][toolkit.Root]s, or a function (sync or
            async) that returns them when asked.
        tracer_provider (TracerProvider | None): An OpenTelemetry tracer provider for this client's spans (a CLIENT
            span per request, its context sent in `params._meta`), instead of OpenTelemetry's global one; tracing is
            on when either is configured, looked for when the client connects: see [observability](observability.md).
        meter_provider (MeterProvider | None): An OpenTelemetry meter provider for its histograms, likewise.
        apps (bool): Declare MCP Apps (`extensions["io.modelcontextprotocol/ui"]`, for `text/html;profile=mcp-app`),
            as a host that renders a tool's page does: the server then lists and calls the tools only an app may
            call too (`visibility=["app"]`). Read a page with [`read_resource`][toolkit.Client.read_resource].

    Raises:
        TypeError: an option this client does not have.

    Example:
        ```python
        import anyio
        from toolkit import Client, Server, tool

        @tool
        def add(a: int, b: int) -> int:
            return a + b

        async def main() -> None:
            async with Client(Server("demo", tools=[add])) as client:
                result = await client.call_tool("add", {"a": 1, "b": 2})
                assert result.text == "3"

        anyio.run(main)
        ```
    """

    protocol_version: str | None
    """The revision in use once connected."""
    server_info: Implementation | None
    """The server's name and version."""
    capabilities: dict[str, Any]
    """The server's capabilities."""
    instructions: str | None
    """The server's instructions for the model, if any."""

    def __init__(self, target: Servable | Transport, **options: Unpack[ClientOptions]) -> None:
        self._target = target
        self._options = resolved = _resolve(options)
        self._handlers = Handlers(
            resolved["elicitation_handler"],
            resolved["sampling_handler"],
            tuple(resolved["elicitation_modes"]),
            resolved["sampling_tools"],
            resolved["roots"],
        )
        # Declared once, and only what a handler answers: a server may rely on every capability declared.
        self._capabilities = self._handlers.capabilities()
        if resolved["apps"]:
            self._capabilities["extensions"] = {UI_EXTENSION: {"mimeTypes": [UI_MIME_TYPE]}}
        client_info = resolved["client_info"] or _CLIENT_INFO
        self._client_info = client_info.model_dump(mode="json", by_alias=True, exclude_none=True)
        self._peer: ClientPeer | None = None
        self._stack: AsyncExitStack | None = None
        self._progress = ProgressCallbacks()
        self._outputs = OutputChecks(self.list_tools)
        self._changes = ToolChanges(resolved["on_tools_changed"], self._outputs.forget)
        self._log_level: LogLevel | None = None
        self._tasks = ClientTasks(
            TaskClient(
                self._capabilities,
                self._request,
                self._handlers.answer,
                resolved["max_input_rounds"],
                self._finish,
                self._progress,
                self.list_tools,
            )
        )
        self._notified: dict[str, Callable[[dict[str, Any]], Awaitable[None]]] = {
            "notifications/progress": self._progress.notify,
            "notifications/message": self._on_log,
            "notifications/subscriptions/acknowledged": self._changes.acknowledged,
            "notifications/tasks": self._tasks.on_status,
            "notifications/tasks/status": self._tasks.on_status,
            "notifications/tools/list_changed": self._changes.changed,
        }
        network = (None, None) if isinstance(target, Transport) else (INPROC, None)
        self._tracing = ClientTracing((resolved["tracer_provider"], resolved["meter_provider"]), network, self)
        self.protocol_version = None
        self._era = HANDSHAKE_ERA  # the era it speaks, once connected (`_greeted`)
        self.server_info = None
        self.capabilities = {}
        self.instructions = None

    @classmethod
    def stdio(
        cls,
        command: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        shutdown_timeout: float = DEFAULT_SHUTDOWN_TIMEOUT,
        **options: Unpack[ClientOptions],
    ) -> Client:
        """A client for a server process started with `command`, spoken to over its stdin and stdout.

        On exit the client closes the server's stdin and waits for the process to exit (its calls still running may
        finish, its lifespan cleans up) for up to `shutdown_timeout` seconds; then it terminates it (SIGTERM), and
        two seconds later kills it. What the server writes on stderr while it shuts down is copied too.

        The server's stderr is copied to this process's stderr, from its first message on; what it writes before
        is held back, so that a server that exits at start (or prints junk, or cannot import its modules) is
        reported by one [`ConnectionClosedError`][toolkit.ConnectionClosedError] that gives its exit status and
        the last lines of its stderr.

        Args:
            command: The program and its arguments, e.g. `["python", "server.py"]`.
            env: Variables added to the current environment for the process.
            cwd: The process's working directory.
            shutdown_timeout: Seconds to wait for the server to exit once its stdin is closed, before terminating
                it. The default, 6, is a toolkit server's default `shutdown_grace` (5) plus one second for its
                lifespan's cleanup: give more to a server whose `shutdown_grace` or cleanup is longer.
            **options: As for `Client(...)`, `max_message_size` included.

        Raises:
            OSError: the command cannot be started (raised by `async with`).
            ConnectionClosedError: the process ended before it answered (raised by `async with`).
        """
        spawn = functools.partial(
            spawn_stdio,
            list(command),
            env,
            cwd,
            max_message_size=_resolve(options)["max_message_size"],
            shutdown_timeout=shutdown_timeout,
        )
        client = cls(OpenedTransport(spawn), **options)
        client._tracing.network = (PIPE, None)
        return client

    @classmethod
    def http(
        cls,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        timeout: float = 30.0,
        http_client: httpx.AsyncClient | None = None,
        auth: httpx.Auth | None = None,
        **options: Unpack[ClientOptions],
    ) -> Client:
        """A client for an MCP server's Streamable HTTP endpoint (needs the `http` extra: httpx), in either era.

        With the default `protocol="auto"` it asks `server/discover` (2026-07-28) and falls back to a 2025-11-25
        session (`initialize`, `Mcp-Session-Id`, a GET stream for the server's own messages, DELETE on exit).

        Args:
            url: The endpoint, e.g. `"http://127.0.0.1:8000/mcp"`.
            headers: Sent with every request (`{"Authorization": "Bearer ..."}`).
            timeout: Seconds to connect, write and wait for a pool connection (reads have no timeout: an SSE
                stream may stay quiet; bound a call with `anyio.fail_after`).
            http_client: An `httpx.AsyncClient` to use (its own transport, proxies, TLS settings); the caller
                opens and closes it.
            auth: How requests authenticate, an `httpx.Auth`: [`ClientCredentials`][toolkit.ClientCredentials] for
                the OAuth 2.0 client-credentials grant (not with `http_client`, which has its own).
            **options: As for `Client(...)`.

        Raises:
            ImportError: httpx is not installed.
        """
        open_http = _http_opener()
        if auth is not None and http_client is not None:
            raise TypeError("give auth= to the httpx.AsyncClient passed as http_client, not to Client.http")
        connect = functools.partial(open_http, url, headers, timeout, http_client, auth)
        client = cls(OpenedTransport(connect, always_answers=True), **options)
        client._tracing.network = (TCP, "http")
        return client

    @property
    def era(self) -> ClientEra:
        """The era the client speaks, once connected: what differs between protocol revisions, asked of it."""
        return self._era

    @property
    def modern(self) -> bool:
        """The connection speaks the stateless era (2026-07-28): each request carries its state in `_meta`."""
        return self.protocol_version is not None and self._era.stateless

    # -- connection ----------------------------------------------------------------------------------

    async def __aenter__(self) -> Client:
        stack = AsyncExitStack()
        await stack.__aenter__()
        self._tracing.connecting(stack)
        # Last on the way out, after the reader has read to the end: requests still waiting fail (a reader cancelled
        # with the client leaves them to its callers, which tell the server first: `ClientPeer._read`).
        made: list[ClientPeer] = []  # this connection's peer, once made
        stack.callback(_close_peers, made)
        try:
            transport, tg = await open_target(self._target, self._options["lifespan"], stack)
            # Made here, not in __init__: anyio primitives bind to the event loop that first uses them.
            self._peer = ClientPeer(
                transport,
                self._on_notification,
                max_message_size=self._options["max_message_size"],
                on_request=self._answerer(),
            )
            made.append(self._peer)
            tg.start_soon(self._peer.run)
            self._stack = stack
            await self._connect()
            if self._era.stateless and self._changes.heard:
                # 2026-07-28 delivers list_changed only on a subscriptions/listen stream (server/tools).
                await tg.start(self._changes.listen, self._request, self.capabilities)
        except BaseException:
            await _leave(stack)
            raise
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        stack, self._stack = self._stack, None
        if stack is not None:
            # The block's own exception is not handed to the task group, which would wrap it in an ExceptionGroup:
            # the connection closes alike, and the exception comes out of `async with` as it was raised.
            await _leave(stack)

    async def _connect(self) -> None:
        """Learn the server's era and what it says of itself: `server/discover`, else the `initialize` handshake (on a
        pipe with `protocol="auto"`, both in turn: `probe`)."""
        protocol = self._options["protocol"]
        stateless = functools.partial(self._request, era=STATELESS_ERA)
        handshake = functools.partial(self._request, era=HANDSHAKE_ERA)
        always_answers = isinstance(self._target, OpenedTransport) and self._target.always_answers
        greeting = None
        if protocol == "auto" and not always_answers:
            greeting = await probe(
                (stateless, STATELESS_ERA), (handshake, HANDSHAKE_ERA), self._capabilities, self._client_info
            )
        elif protocol == "auto" or STATELESS_ERA.speaks(protocol):
            greeting = await discover(stateless, STATELESS_ERA, fall_back=protocol == "auto")
        if greeting is None:
            greeting = await initialize(handshake, HANDSHAKE_ERA, self._capabilities, self._client_info)
        self._greeted(greeting)
        if HANDSHAKE_ERA.speaks(greeting.protocol_version):
            assert self._peer is not None
            await self._tracing.notify(self._peer, "notifications/initialized")

    def _greeted(self, greeting: Greeting) -> None:
        """Take in what the server said of itself: the era, its capabilities, instructions and name."""
        self.protocol_version = greeting.protocol_version
        self._era = client_era_of(greeting.protocol_version)
        self.capabilities = greeting.capabilities
        self.instructions = greeting.instructions
        self.server_info = greeting.server_info
        self._tasks.connected(self._era, self.capabilities)

    # -- the wire ------------------------------------------------------------------------------------

    async def _on_notification(self, method: str, params: dict[str, Any]) -> None:
        """A notification from the server, to what it concerns; one nothing here handles is ignored."""
        handle = self._notified.get(method)
        if handle is not None:
            await handle(params)

    async def _on_log(self, params: dict[str, Any]) -> None:
        """`notifications/message`: to `on_log`, if given."""
        on_log = self._options["on_log"]
        if on_log is not None:
            await maybe_await(on_log(LogMessage(str(params.get("level")), params.get("data"), params.get("logger"))))

    def _meta(self, era: ClientEra) -> dict[str, Any]:
        """What a stateless request carries in `_meta`: its revision, the client's capabilities, info and log level."""
        meta: dict[str, Any] = {
            VERSION_KEY: era.version,
            CAPABILITIES_KEY: self._capabilities,
            CLIENT_INFO_KEY: self._client_info,
        }
        if self._log_level is not None:
            meta[LOG_LEVEL_KEY] = self._log_level
        return meta

    async def _request(
        self, method: str, params: dict[str, Any], *, era: ClientEra | None = None, stream: bool = False
    ) -> Any:
        """Send a request in `era` (the connection's, unless one is being tried) and wait for its result."""
        assert self._peer is not None, "use the client inside `async with`"
        era = era or self._era
        if era.stateless:
            params = {**params, "_meta": {**self._meta(era), **params.get("_meta", {})}}
        return await self._tracing.request(self._peer, method, params, era=era, stream=stream)

    def _answerer(self) -> Callable[[str, Any], Awaitable[dict[str, Any]]] | None:
        """What answers the server's requests: the handlers (traced), or nothing when the client declares no
        capability (the peer then answers -32601)."""
        if not self._capabilities:
            return None
        return self._tracing.answerer(self._handlers.answer)

    # -- the API -------------------------------------------------------------------------------------

    async def ping(self) -> None:
        """Check that the server answers (handshake era; 2026-07-28 has no ping, so this sends `server/discover`)."""
        await self._request(self._era.ping, {})

    async def set_logging_level(self, level: LogLevel) -> None:
        """Ask for log messages at `level` and above (per request in 2026-07-28, for the connection before)."""
        if self._era.logs_per_request:
            self._log_level = level
        else:
            await self._request("logging/setLevel", {"level": level})

    async def list_tools(self) -> list[ToolDefinition]:
        """Every tool the server offers, following pagination."""
        tools: list[ToolDefinition] = []
        for result in await self._pages("tools/list"):
            page = _tool_list_adapter().validate_python(result.get("tools", ()))
            for definition in page:
                self._outputs.learn(definition.name, definition.output_schema)
                self._tasks.learn(definition)  # 2025-11-25's tasks: execution.taskSupport
            tools.extend(page)
        return tools

    async def list_resources(self) -> list[dict[str, Any]]:
        """Every resource the server lists (`resources/list`, following pagination): a toolkit server lists the
        pages of its tools' MCP Apps, each as the spec's `Resource` object (`uri`, `name`, `mimeType`, `_meta`).

        Raises:
            ProtocolError: -32601 from a server that serves no resources.
        """
        resources: list[dict[str, Any]] = []
        for result in await self._pages("resources/list"):
            resources.extend(result.get("resources", ()))
        return resources

    async def _pages(self, method: str) -> list[Any]:
        """The result of each page of a list (`tools/list`, `resources/list`), following `nextCursor`."""
        pages = [await self._request(method, {})]
        while cursor := pages[-1].get("nextCursor"):
            pages.append(await self._request(method, {"cursor": cursor}))
        return pages

    async def read_resource(self, uri: str) -> list[TextResourceContents | BlobResourceContents]:
        """Read a resource (`resources/read`): its contents, such as an MCP App's page (`text`, its `mime_type`
        `text/html;profile=mcp-app`, and `meta["ui"]`: CSP, permissions, domain, border).

        Raises:
            ProtocolError: the server has no such resource (-32002 before 2026-07-28, -32602 in it), or serves none
                (-32601).
        """
        result = await self._request("resources/read", {"uri": uri})
        return _contents_adapter().validate_python(result.get("contents", ()))

    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        progress: ProgressCallback | None = None,
        timeout: float | None = None,  # noqa: ASYNC109 (a per-call deadline that also cancels server-side)
    ) -> CallToolResult:
        """Call a tool and return its result; a failing tool gives a result with `is_error=True`.

        Leaving a cancel scope around the call (or `timeout` expiring) sends `notifications/cancelled`. A tool
        that asks the user or the model is answered by the client's handlers; in 2026-07-28 the client answers
        each `InputRequiredResult` and retries the call itself, and `timeout` spans every round. A tool the server
        runs only as a task (-32021 naming the tasks extension; in 2025-11-25, -32601 for a tool whose taskSupport
        is `required`) is run as one and waited for.

        Args:
            name: The tool's name.
            arguments: Its arguments.
            progress: Called for each progress notification of this call.
            timeout: Seconds to wait before cancelling the call and raising `TimeoutError`.

        Raises:
            ProtocolError: the server refused the request (unknown tool, malformed params, -32021 for a capability
                this client did not declare); in 2026-07-28 also a handler's error, -32603 after `max_input_rounds`.
            TimeoutError: `timeout` expired.
        """
        params: dict[str, Any] = {"name": name} if arguments is None else {"name": name, "arguments": dict(arguments)}
        tokens: list[str] = []

        async def send(params: dict[str, Any]) -> Any:
            if progress is not None:  # each round is a new request: a new token, for the same callback
                params = self._progress.stamped(params, progress, tokens)
            return await self._request("tools/call", params)

        async def call() -> Any:
            try:
                if not self._era.questions_are_results:
                    return await send(params)
                # 2026-07-28 (basic/patterns/mrtr): answer the server's input requests and retry, until it completes.
                answer, rounds = self._handlers.answer, self._options["max_input_rounds"]
                return await call_with_input(send, params, answer, max_rounds=rounds)
            except ProtocolError as exc:  # a tool the server runs only as a task is run as one
                return await self._tasks.run_refused(exc, name, arguments, progress)

        try:
            if timeout is None:
                raw = await call()
            else:
                with anyio.fail_after(timeout):
                    raw = await call()
        finally:
            for token in tokens:
                self._progress.drop(token)
        return await self._finish(name, raw)

    async def start_task(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        progress: ProgressCallback | None = None,
        ttl: float | None = None,
    ) -> ToolTask:
        """Call a tool as a task: return a [`ToolTask`][toolkit.ToolTask] to await, poll, watch or cancel.

        In 2026-07-28 the client declares the tasks extension (`io.modelcontextprotocol/tasks`) on the call, and the
        server decides whether to run it as a task; in 2025-11-25 it asks for one (`params.task`) when the server
        declares `tasks.requests.tools.call` and the tool's `execution.taskSupport` allows it (the tools are listed
        once to learn it). A server that runs the call at once (no tasks, or its choice) answers
        with the result: the handle is then already done (its `id` is `None`), and this waited for the result.

        Questions the tool asks before the task exists (2026-07-28) are answered here, by the client's handlers;
        those it asks while it runs are answered by the handle's `result()` and `watch()`.

        Args:
            name: The tool's name.
            arguments: Its arguments.
            progress: Called for each progress notification of the call (2025-11-25 sends them for as long as the
                task runs; the 2026-07-28 extension reports progress in the task's `status_message` instead).
            ttl: Seconds the server should keep the task and its result (2025-11-25: a request the server may lower;
                in 2026-07-28 the server alone decides).

        Raises:
            ProtocolError: the server refused the call (an unknown tool, a tool that forbids tasks: -32601).
        """
        return await self._tasks.start(name, arguments, progress, ttl)

    def task(self, task_id: str) -> ToolTask:
        """A handle on a task started earlier, by this client or another (after a reconnect, from another process):
        `await client.task(task_id)` waits for its result. The server decides who may reach a task (the user that
        created it, most often); an unknown task fails the handle's first request with -32602.

        The handle does not know which tool the task runs, so its result is not checked against an `outputSchema`.
        """
        return self._tasks.handle(task_id)

    async def _finish(self, name: str | None, raw: Any) -> CallToolResult:
        """A call's raw result as a `CallToolResult`, its `structuredContent` checked against the tool's
        `outputSchema` (with `validate_output`, for a tool named and a result that is not an error).

        Raises:
            ProtocolError: -32603 for a result that does not match the tool's `outputSchema`.
        """
        result = CallToolResult.model_validate(era_neutral(raw))
        if name is not None and self._options["validate_output"] and not result.is_error:
            await self._outputs.check(name, result.structured_content)
        return result


async def _leave(stack: AsyncExitStack) -> None:
    """Leave the connection's stack (its transport, tasks and lifespan), with no loop in what it raises.

    contextlib's exit stack, left while an exception is being handled (the block's, a cancellation), makes an
    exception its own `__context__` when a later callback re-raises what an earlier one raised (anyio's task group
    re-raises the cancellation it is handed): `_fix_exception_context` links it to the exception being handled,
    which is itself (CPython gh-102201's family; trio issue 2577). anyio's task group follows that chain when a task
    ends and never returns, at 100 % CPU, out of reach of any deadline: a client cancelled mid-call over HTTP in a
    task group hung it. So the loop is cut here, before the exception leaves the client.
    """
    try:
        await stack.__aexit__(None, None, None)
    except BaseException as exc:
        _cut_context_loop(exc)
        raise


def _close_peers(made: list[ClientPeer]) -> None:
    for peer in made:
        peer.close()


def _cut_context_loop(exc: BaseException) -> None:
    """End the `__context__` chain of `exc` where it would come back to an exception already in it."""
    seen = {id(exc)}
    link = exc
    while (following := link.__context__) is not None:
        if id(following) in seen:
            link.__context__ = None
            return
        seen.add(id(following))
        link = following


def _http_opener() -> Callable[..., AbstractAsyncContextManager[Transport]]:
    """What opens a Streamable HTTP transport, imported when first needed (httpx is the optional `http` extra).

    Raises:
        ImportError: httpx is not installed.
    """
    try:
        from toolkit._transports.http import open_http
    except ModuleNotFoundError as exc:
        if exc.name != "httpx":
            raise
        raise ImportError(
            "connecting over HTTP needs httpx: install toolkit's http extra"
            " (in a clone of toolkit: pip install '.[http]')"
        ) from None
    return open_http


@functools.cache
def _contents_adapter() -> TypeAdapter[list[TextResourceContents | BlobResourceContents]]:
    return TypeAdapter(list[TextResourceContents | BlobResourceContents])


@functools.cache
def _tool_list_adapter() -> TypeAdapter[list[ToolDefinition]]:
    """One validator for a whole page of tools: a single call into pydantic-core instead of one per tool."""
    return TypeAdapter(list[ToolDefinition])
