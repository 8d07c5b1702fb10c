"""Server: the public facade of a server: its options, registering tools, and the ways to serve it (a transport,
stdio, HTTP, a process).

Its state lives in the `Registry` it holds (`Server.registry`, `toolkit._engine.registry`), which is all the engine
and HTTP below see; its public attributes are the ones documented here. HTTP is imported inside the methods that
serve it, as this module sits above `toolkit._http`.
"""

from __future__ import annotations

import contextlib
import logging
import sys
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Any, Literal, TypeVar, overload

import anyio
import anyio.abc
from typing_extensions import ParamSpec, Unpack

from toolkit._call.threads import running_calls
from toolkit._definition.options import with_defaults
from toolkit._definition.tool import Tool, ToolOptions, caller_locals, check_bound
from toolkit._engine.connection import Connection
from toolkit._engine.options import ServerOptions
from toolkit._engine.registry import Registry
from toolkit._errors import StartupError
from toolkit._transports.base import Transport
from toolkit._transports.stdio import StdioTransport

if TYPE_CHECKING:
    from toolkit._engine.telemetry import Telemetry
    from toolkit._gateway.mount import MountOptions, UpstreamTarget
    from toolkit._http.app import HttpApp, HttpOptions
    from toolkit._seal import Sealer, SecretOption

__all__ = ["Lifespan", "Server", "definitions_only", "run_main", "serve_process"]

P = ParamSpec("P")
R = TypeVar("R")
T = TypeVar("T")

Lifespan = Callable[["Server"], AbstractAsyncContextManager[Any]]
"""What `Server(lifespan=...)` takes: called with the server, it gives an async context manager whose value
tools read as `ctx.lifespan_context` (an `@asynccontextmanager` function that takes the server and yields)."""

logger = logging.getLogger("toolkit")


def _listed(tool: Tool[Any, Any]) -> tuple[Any, ...]:
    """What a client's `tools/list` shows of `tool` (its wire JSON derives from these alone)."""
    return (tool.definition, tool.output_schema)


def _check_page(tool: Tool[Any, Any], tools: Mapping[str, Tool[Any, Any]]) -> None:
    """One page per ui:// URI: a tool whose page has the URI of another tool's different page is refused (two pages
    would make resources/read ambiguous)."""
    ui = tool.ui
    if ui is None:
        return
    other = next((t for t in tools.values() if t.ui is not None and t.ui.uri == ui.uri and t.ui != ui), None)
    if other is not None:
        raise ValueError(f"tool {tool.name!r}: {ui.uri} is already the URI of another page ({other.name!r})")


@contextlib.asynccontextmanager
async def definitions_only(server: Server) -> AsyncIterator[None]:
    """The lifespan of what only reads definitions (`toolkit list/docs/check`, the mkdocs plugin): documenting a
    server never opens its database."""
    yield


class Server:
    """An MCP server: tools, plus what it tells clients about itself.

    One `Server` serves any number of connections at once, over any [`Transport`][toolkit.Transport]; each
    connection keeps its own state (negotiated revision, log level, calls in flight).

    Args:
        name: The server's name, as clients display it.
        tools: Tools to serve from the start.
        lifespan: Opens what the tools share (a database, an HTTP client) before the first message is read and
            closes it after the last reply; see [`running`][toolkit.Server.running].

    Keyword Args:
        version (str | None): The server's version (default `"0.0.0"`).
        title (str | None): A human-readable name.
        description (str | None): What the server does, for people choosing or inspecting servers (2025-11-25 and
            later).
        icons (Sequence[Icon | Mapping[str, Any]] | None): Icons a client may show for the server (2025-11-25 and
            later).
        website_url (str | None): The server's website (2025-11-25 and later).
        instructions (str | None): Guidance for the model on how to use the server (clients may add it to the
            prompt).
        page_size (int | None): Tools per `tools/list` page; `None` (default) sends all tools in one page.
        show_error_details (bool): Send exception types and messages of failing tools to the client (default
            `False`).
        max_message_size (int): Largest message (bytes) the stdio transport accepts (default 16 MiB).
        max_concurrent_requests (int): Calls one connection may have in flight; more are answered with an error
            (default 1000).
        max_queued_messages (int): Messages (replies and notifications) one connection may hold while the client is
            slow to read them; once it holds this many, the server stops reading that client until it has room
            (default 10,000).
        max_queued_bytes (int): The same bound in bytes of JSON text (characters): the server stops reading once it
            holds this much (one message of any size is always accepted, so the bound may be passed by one; default
            64 MiB).
        tool_timeout (float | None): Seconds a tool call may take before it is cancelled and reported as an error
            (default `None`: no limit; a tool's own `timeout=` wins). A sync tool's thread cannot be stopped: it is
            abandoned, and counted in `abandoned_calls` (see [timeouts](middleware.md#timeouts)).
        shutdown_grace (float): Seconds calls still running when the client closes the connection may take to
            finish (and answer) before they are cancelled (default 5).
        ttl_ms (int): How long (milliseconds) 2026-07-28 clients may cache `tools/list` and `server/discover`
            (default 0).
        cache_scope (Literal["public", "private"]): `"public"` (default: no user-specific data) or `"private"` for
            those cached results.
        schema_profile (str | None): Serve every tool adapted to this [schema profile](profiles.md) (`"gemini"`,
            `"openai-strict"`, ...), for clients that hand the tools to one provider; arguments coming back are
            mapped to the tools' own shape before validation.
        confirm_fallback (Literal["auto", "refuse", "run"]): What a tool made with `@tool(confirm=...)` does for a
            client that cannot elicit: `"auto"` (default) refuses destructive tools (all but `read_only=True` or
            `destructive=False` ones, as MCP's `destructiveHint` defaults to true) and runs the rest; `"refuse"`
            refuses all; `"run"` runs all.
        client_request_timeout (float | None): Seconds a question to the client (elicitation, sampling) may wait for
            its answer in the handshake era; `None` (default) waits as long as the call may run (people are slow).
        secret (bytes | str | Sequence[bytes | str] | None): What the processes serving this server share to trust
            each other: it signs the `requestState` of 2026-07-28 multi-round calls and, over HTTP, the session ids
            (each use derives its own key). One secret of 32 bytes or more, or several (the first signs, all verify:
            rotation). `None` makes a random one per process, so a server run as several workers needs one (or
            `http_app(secret=...)`): see [deploy](deploy.md#keys).
        request_state_ttl (float): Seconds a `requestState` stays valid (a user fills a form between two rounds;
            default 900).
        middleware (Sequence[Middleware]): Around-hooks run around every request (but `subscriptions/listen`), the
            first outermost: see [middleware](middleware.md).
        tool_middleware (Sequence[Middleware]): Around-hooks run around every `tools/call`, inside `middleware` and
            outside each tool's own (`@tool(middleware=...)`).
        question_middleware (Sequence[QuestionMiddleware]): Around-hooks run around every question a tool asks its
            client (elicitation, `confirm=`, sampling, roots), in both eras.
        tool_filter (ToolFilter | None): Which tools the caller of a request may see: `tools/list` lists only those,
            and `tools/call` of another is refused exactly as an unknown tool is.
        max_result_bytes (int | None): The largest result a tool call may send (bytes of JSON); a larger one is
            answered with a tool error instead (default `None`: no limit; a tool's own `max_result_bytes` wins).
        strict_arguments (bool): Refuse an object or array argument sent as a JSON string. By default (`False`)
            such a string is parsed when the parameter's schema asks for an object or array (and admits no string),
            as several widely used clients send them so: see
            [arguments as JSON strings](tools.md#arguments-sent-as-json-strings).
        tracer_provider (TracerProvider | None): An OpenTelemetry tracer provider for this server's spans, instead
            of OpenTelemetry's global one; tracing is on when either is configured: see
            [observability](observability.md).
        meter_provider (MeterProvider | None): An OpenTelemetry meter provider for this server's histograms,
            instead of the global one.
        backend (Backend | None): The state the processes serving this server over HTTP share
            (`RedisBackend("redis://...")`), so that any of them serves any request of any session behind a
            round-robin balancer; also `http_app(backend=...)`. None (the default): this process only. See
            [Backends](backend.md).
        tool_search (bool | ToolSearch | None): Serve a search instead of every tool: `tools/list` lists the
            pinned tools plus `search_tools(query)` and `call_tool(name, arguments)`, for servers with more tools
            than a model chooses among well. `True` takes [`ToolSearch`][toolkit.ToolSearch]'s defaults; every tool
            stays callable by name. See [tool search](search.md).
        task_store (TaskStore | None): Where the tasks of `@tool(task=...)` tools are kept: `None` (default) keeps
            them in this process's memory; [`SqliteTaskStore`][toolkit.SqliteTaskStore] shares them between the
            workers of one machine. See [tasks](tasks.md).
        task_ttl (float): Seconds a task is kept from its creation (default 3600; a 2025-11-25 client's requested
            `ttl` is honoured up to `max_task_ttl`).
        max_task_ttl (float): The longest a task is kept, whatever the client asks (default 86400).
        task_poll_interval (float): The polling interval suggested to clients, in seconds (default 0.5).
        max_tasks_per_caller (int): Tasks one caller may have at once, expired ones excepted; one more is refused
            with an error (default 100). The caller is the token's subject with authentication, else the 2025-11-25
            session; an anonymous 2026-07-28 task is its own (only `max_tasks` bounds those).
        max_tasks (int): Tasks the store keeps at once for every caller together, expired ones excepted; one more is
            refused with an error (default 10,000): what protects the store from many callers.
        max_task_result_bytes (int): The largest result a task keeps (bytes of JSON); a larger one is kept as a
            tool error saying so (default 1,000,000).
        task_lease (float): Seconds a worker's claim on the tasks it runs lasts unless renewed (it renews a few
            times per lease): a task whose process died is failed within about this time (default 30).

    Example:
        ```python
        from toolkit import Server

        server = Server("demo", version="1.0.0")

        @server.tool
        def add(a: int, b: int) -> int:
            \"\"\"Add two integers.\"\"\"
            return a + b
        ```
    """

    def __init__(
        self,
        name: str,
        *,
        tools: Iterable[Tool[Any, Any]] = (),
        lifespan: Lifespan | None = None,
        **options: Unpack[ServerOptions],
    ) -> None:
        self.registry = Registry(name, lifespan, options, owner=self)
        """The engine's view of this server: its options as read once, its tools and the payloads prepared from them,
        its connections. What toolkit's own layers read (the HTTP app, the command line, the testing tools); an
        application needs only what `Server` documents."""
        for t in tools:
            self.add_tool(t)

    # -- what it is ----------------------------------------------------------------------------------

    @property
    def name(self) -> str:
        """The server's name (its `serverInfo.name`)."""
        return self.registry.name

    @property
    def version(self) -> str:
        """The server's version (its `serverInfo.version`; `"0.0.0"` when none was given)."""
        return self.registry.version

    @property
    def title(self) -> str | None:
        """The server's human-readable name, if one was given."""
        return self.registry.title

    @property
    def instructions(self) -> str | None:
        """What the server tells the model about using it, if anything."""
        return self.registry.instructions

    @property
    def tools(self) -> Mapping[str, Tool[Any, Any]]:
        """The tools served, by name, in registration order: a read-only view (change them with
        [`add_tool`][toolkit.Server.add_tool], [`remove_tool`][toolkit.Server.remove_tool],
        [`replace_tools`][toolkit.Server.replace_tools])."""
        return self.registry.tools

    @property
    def lifespan(self) -> Lifespan | None:
        """The server's lifespan (`None`: none); one assigned here is the one the next start runs."""
        return self.registry.lifespan

    @lifespan.setter
    def lifespan(self, lifespan: Lifespan | None) -> None:
        self.registry.lifespan = lifespan

    @property
    def abandoned_calls(self) -> int:
        """Sync tool calls abandoned on their worker thread after a timeout (a thread cannot be stopped), since the
        server was made: see [timeouts](middleware.md#timeouts)."""
        return self.registry.abandoned_calls

    @property
    def telemetry(self) -> Telemetry | None:
        """The OpenTelemetry in use (`None`: off), worked out whenever the server starts running: see
        [observability](observability.md)."""
        return self.registry.telemetry

    @property
    def sealer(self) -> Sealer:
        """Signs and verifies the `requestState` of 2026-07-28 multi-round calls, with the key of `secret=` (or of
        [`share_secret`][toolkit.Server.share_secret])."""
        return self.registry.sealer

    @property
    def secret(self) -> tuple[bytes, ...] | None:
        """The shared secret(s) of `secret=` (also given by `http_app(secret=...)`); `None`: a key of this process."""
        return self.registry.secret

    def share_secret(self, secret: SecretOption) -> tuple[bytes, ...] | None:
        """The one secret this server's workers share, checked: `secret`, else the `Server(secret=...)` (`None`
        when neither was given: each process then signs with a random key of its own).

        `http_app(secret=...)` calls it, so that one secret signs both what the workers must trust from each other
        (session ids, the requestState of 2026-07-28 multi-round calls); each use derives its own key from it. A
        server made with a secret of its own keeps it for its requestState.

        Raises:
            ValueError: a secret shorter than 32 bytes.
        """
        return self.registry.share_secret(secret)

    def elicitation_complete(self, elicitation_id: str) -> bool:
        """Tell the client that asked for a URL-mode elicitation that its out-of-band flow is complete.

        Sends `notifications/elicitation/complete` to that client only (client/elicitation: "**MUST** only send the
        notification to the client that initiated the elicitation request"), which may then retry what needed it.
        Safe to call from any thread, such as a web handler's. 2025-11-25 only: 2026-07-28 has no such
        notification (its clients retry, and the tool checks again).

        Args:
            elicitation_id: The id, from `ElicitResult.elicitation_id`.

        Returns:
            Whether a connection was waiting for it (False for an unknown id, a closed connection, or a repeat).
        """
        return self.registry.elicitation_complete(elicitation_id)

    # -- its lifespan --------------------------------------------------------------------------------

    @property
    def lifespan_context(self) -> Any:
        """What the lifespan yielded (`None` without a lifespan), while the server is running.

        Raises:
            RuntimeError: the server is not running.
        """
        return self.registry.lifespan_context

    def running(self, *, lifespan: Lifespan | None = None) -> AbstractAsyncContextManager[Any]:
        """Run the server's lifespan around the block, or join it if it already runs; yield its value.

        The entry point every way of serving goes through: [`serve`][toolkit.Server.serve] (so stdio and
        [`run`][toolkit.Server.run]), [`Client(server)`][toolkit.Client] and the testing tools enter it, and an
        HTTP server would enter it once per worker, at ASGI lifespan startup. Blocks that overlap share one
        lifespan: the first to enter starts it, the last to leave shuts it down (after its connections have
        sent their last replies). A server that accepts many connections (over TCP, say) enters it once around
        its accept loop, so that the lifespan starts before the first client and is not restarted when the
        connections come and go. A lifespan that holds task-bound objects (an anyio task group, a cancel scope)
        must be left by the task that entered it: nested blocks do that; overlapping ones may not.

        Shutdown runs the code after the lifespan's `yield` whatever ended the block (end of input,
        cancellation, an error), shielded from cancellation; an exception it raises is logged (logger
        `toolkit`), not raised.

        Args:
            lifespan: Run this lifespan instead of the server's own (a fake in a test, for example).

        Raises:
            StartupError: the lifespan failed to start; nothing is served.
            RuntimeError: `lifespan` was given while the server runs another one.
        """
        return self.registry.running(lifespan=lifespan)

    # -- tools ---------------------------------------------------------------------------------------

    def add_tool(self, tool: Tool[Any, Any]) -> None:
        """Serve `tool`; connected clients are told the list changed.

        Raises:
            ToolDefinitionError: `tool` is a method taken from its class (`SomeClass.method`), not bound to an
                instance, so no call could succeed.
            ValueError: a tool with that name is already served, or another tool's MCP App has the same `ui://` URI
                and a different page.
        """
        self._check_new(tool, self.tools)
        self.registry.put_tool(tool)

    def replace_tools(self, tools: Iterable[Tool[Any, Any]]) -> bool:
        """Serve `tools`, in this order, instead of the tools served now, all at once.

        Connected clients are told the list changed, once, when what they would list changed: a tool added,
        removed, renamed or moved, or a definition changed. Tools with the same definitions and new functions behind
        them (a module reloaded by `toolkit dev`) replace the old ones silently; calls already running finish with
        the old ones.

        Returns:
            Whether what clients list changed.

        Raises:
            ToolDefinitionError: a tool is a method taken from its class, not bound to an instance.
            ValueError: two tools have the same name (nothing is replaced).
        """
        new: dict[str, Tool[Any, Any]] = {}
        for tool in tools:
            self._check_new(tool, new)
            new[tool.name] = tool
        old = self.tools
        changed = list(old) != list(new) or any(_listed(old[name]) != _listed(new[name]) for name in new)
        self.registry.set_tools(new, announce=changed)
        return changed

    def _check_new(self, tool: Tool[Any, Any], tools: Mapping[str, Tool[Any, Any]]) -> None:
        """Refuse a tool that cannot join `tools` (the ones registered before it), and prepare its schema profile."""
        if not isinstance(tool, Tool):
            raise TypeError(f"a server serves toolkit.Tool objects (decorate the function with @tool), got {tool!r}")
        check_bound(tool)
        if tool.name in tools:
            raise ValueError(f"a tool named {tool.name!r} is already registered")
        _check_page(tool, tools)
        search, profile = self.registry.search, self.registry.schema_profile
        if search is not None and tool.name in search.names:
            raise ValueError(f"a tool may not be named {tool.name!r}: tool_search serves a tool of that name")
        if profile is not None:
            tool.adapted(profile)  # prepared now, not on the first tools/list or call

    def remove_tool(self, name: str) -> Tool[Any, Any]:
        """Stop serving the tool called `name` and return it; connected clients are told the list changed.

        Raises:
            KeyError: no tool has that name.
        """
        tools = dict(self.tools)
        tool = tools.pop(name)
        self.registry.set_tools(tools)
        return tool

    @overload
    def tool(self, fn: Callable[P, R], /) -> Tool[P, R]: ...
    @overload
    def tool(self, **options: Unpack[ToolOptions]) -> Callable[[Callable[P, R]], Tool[P, R]]: ...
    def tool(self, fn: Callable[..., Any] | None = None, **options: Any) -> Any:
        """Decorate a function to make it a tool of this server: `@server.tool` or `@server.tool(...)`.

        Takes the same options as [`@tool`][toolkit.tool]. For a method, decorate it with `@tool` in the class body
        and serve the bound method of an instance instead: the class has no instance yet when this runs.

        Raises:
            TypeError: an option that `@tool` does not take (raised here, before a function is given, as by `@tool`).
            ToolDefinitionError: the function cannot be a tool, or is a method in a class body.
            ValueError: a tool with that name is already served.
        """
        localns = caller_locals()
        opts = with_defaults(options)

        def decorate(func: Callable[P, R]) -> Tool[P, R]:
            made: Tool[P, R] = Tool(func, opts, localns)
            self.add_tool(made)
            return made

        return decorate(fn) if fn is not None else decorate

    def mount(self, upstream: UpstreamTarget, **options: Unpack[MountOptions]) -> None:
        """Serve another MCP server's tools as this server's own: a gateway. See [the gateway](gateway.md).

        The upstream is connected when this server starts running (the first attempt is waited for, up to
        `connect_timeout`) and closed when it stops: one connection, shared by every call. Its tools are listed and
        called as local ones, through this server's middleware, `tool_filter`, timeouts, rate limits, scopes,
        telemetry and `schema_profile`; results come back as the upstream sent them. A call's progress is forwarded,
        cancelling it cancels the upstream's, and the upstream's questions (elicitation, sampling, roots) are asked
        of the client that made the call, in that client's era. A lost connection fails the calls it was running
        with a tool error; a process is started again by the next call, a URL is tried again with backoff;
        meanwhile the tools it last listed stay listed. When the upstream's tool list changes, this server's
        clients are told.

        Args:
            upstream: A toolkit `Server` (in memory), a command that starts a server speaking stdio
                (`["npx", "-y", "@modelcontextprotocol/server-everything"]`), or the URL of a Streamable HTTP
                endpoint (`"https://example.com/mcp"`).

        Keyword Args:
            prefix (str | None): Serve each tool as `{prefix}_{name}` (several mounts whose names would clash).
            tools (Sequence[str] | Callable[[ToolDefinition], bool] | None): Only these tools (the upstream's
                names), or those a predicate of their definition accepts; default all.
            env (Mapping[str, str] | None): A command's extra environment variables (as `Client.stdio` takes them).
            cwd (str | PathLike | None): A command's working directory.
            headers (Mapping[str, str] | None): Sent with every request to a URL (its credentials): never logged
                and never in an error.
            auth (httpx.Auth | None): How requests to a URL authenticate:
                [`ClientCredentials`][toolkit.ClientCredentials] for the OAuth 2.0 client-credentials grant.
            connect_timeout (float): Seconds to wait for the upstream to connect, at start and on a reconnection
                (default 30).
            protocol (ProtocolMode): The era to speak to the upstream: `"auto"` (default: 2026-07-28 when it offers
                it, else the `initialize` handshake), `"2026-07-28"` or `"handshake"`. The server's own clients
                speak either era whatever this is.

        Raises:
            TypeError: an option that `mount` does not take, or one that does not fit the kind of upstream.
            ValueError: a URL that is not http(s), or a prefix that cannot begin a tool name.
            RuntimeError: this server is running already.
        """
        from toolkit._gateway.mount import Mount  # deferred: most servers mount nothing, and it loads the client

        self.registry.add_mount(Mount(self.registry, upstream, options))

    # -- serving -------------------------------------------------------------------------------------

    async def serve(self, transport: Transport) -> None:
        """Serve one connection over `transport` until the peer closes it, inside [`running`][toolkit.Server.running].

        Calls still running when the peer goes away are cancelled. The transport is closed on return.

        Raises:
            StartupError: the lifespan failed to start; nothing was read from the transport.
        """
        await self._serve(Connection(self.registry, transport))

    async def _serve(self, connection: Connection) -> None:
        transport = connection.transport
        try:
            async with self.running():
                await connection.run()
                # Closed before the lifespan shuts down: the peer has every reply and need not wait for cleanup.
                await transport.aclose()
        finally:
            await transport.aclose()  # also when startup failed or serving was cancelled (closing twice is harmless)

    async def _serve_stdio_until_terminated(self, watch: bool) -> None:
        """`serve_stdio`, stopped gracefully by SIGTERM; a failed startup comes out as is, not in a group."""
        failed: StartupError | None = None
        transport = _Stoppable(StdioTransport(max_message_size=self.registry.max_message_size))
        connection = Connection(self.registry, transport)
        async with anyio.create_task_group() as tg:
            if watch:
                tg.start_soon(_stop_on_sigterm, connection, transport, tg)
            try:
                await self._serve(connection)
            except StartupError as exc:
                failed = exc
            tg.cancel_scope.cancel()
        if failed is not None:
            raise failed

    async def serve_stdio(self) -> None:
        """Serve MCP's stdio transport until stdin closes."""
        await self.serve(StdioTransport(max_message_size=self.registry.max_message_size))

    def http_app(self, path: str = "/mcp", **options: Unpack[HttpOptions]) -> HttpApp:
        """This server as a plain ASGI application: MCP Streamable HTTP at `path`, both protocol eras.

        Serve it with any ASGI server (`uvicorn module:app`), or mount it in Starlette or FastAPI. See
        [HTTP](http.md) for the options: allowed hosts and origins, the body limit, the session key, and
        [resumption](http.md#resumption) (`sse_retry`, `sse_close_after`, `replay_window`, `replay_size`), and
        the [backend](backend.md) its workers share (`backend=`, else `Server(backend=...)`).
        """
        from toolkit._http.app import HttpApp

        return HttpApp(self.registry, path, **options)

    def run(
        self,
        *,
        backend: Literal["asyncio", "trio"] = "asyncio",
        transport: Literal["stdio", "http"] = "stdio",
        host: str = "127.0.0.1",
        port: int = 8000,
        **options: Any,
    ) -> None:
        """Serve over stdio until stdin closes, or over HTTP on uvicorn: the entry point of a server script.

        `transport="http"` serves [`http_app(**options)`][toolkit.Server.http_app] on `host:port` (loopback by
        default) until interrupted; it needs the `http` extra.

        Over stdio, SIGTERM ends the input as the client closing stdin would: no request is read any more, calls in
        flight get `shutdown_grace` seconds to answer, then the lifespan's cleanup runs, `run()` returns and the
        process exits with status 0. Ctrl-C (SIGINT), a second SIGTERM, or a SIGTERM after stdin has closed (what a
        client sends a server that did not exit once it closed stdin) stop at once: calls still running are
        cancelled, and the cleanup runs. (The SIGTERM handler is installed for the run only, and the previous one
        restored.) Over HTTP, uvicorn does the same on SIGTERM or Ctrl-C: calls get `shutdown_grace` seconds, a second
        Ctrl-C stops at once. When the lifespan fails to start, nothing is served, in either transport: one line
        on stderr, and the process exits with status 1.

        Example:
            ```python
            if __name__ == "__main__":
                server.run()
            ```
        """
        try:
            serve_process(self, backend=backend, transport=transport, host=host, port=port, **options)
        except StartupError as exc:
            logger.debug("startup failed", exc_info=exc)
            sys.stderr.write(f"toolkit: error: {exc}\n")
            sys.stderr.flush()
            raise SystemExit(1) from None


def serve_process(
    server: Server,
    *,
    backend: Literal["asyncio", "trio"] = "asyncio",
    transport: Literal["stdio", "http"] = "stdio",
    host: str = "127.0.0.1",
    port: int = 8000,
    **options: Any,
) -> None:
    """[`Server.run`][toolkit.Server.run] without its exit status: a failed start raises, for `toolkit serve`'s own.

    Raises:
        StartupError: the lifespan failed to start; nothing was served.
    """
    if transport == "http":
        from toolkit._http.serve import serve_http

        serve_http(server.http_app(**options), host=host, port=port)
        return
    import signal  # the process entry point owns the process's signals, for the run only

    # The main thread only (signals are delivered there); not on Windows, where the event loop cannot watch them.
    watch = sys.platform != "win32" and threading.current_thread() is threading.main_thread()
    previous = signal.getsignal(signal.SIGTERM) if watch else None
    try:
        run_main(server._serve_stdio_until_terminated, watch, backend=backend)
    except StartupError:
        raise
    except BaseException as exc:
        if not _interrupted(exc):
            raise
    finally:
        if previous is not None:  # asyncio's loop leaves SIG_DFL behind, not what was there before
            signal.signal(signal.SIGTERM, previous)
    # A sync tool still running is cancelled but, Python being unable to stop a thread, goes on: its worker is a
    # daemon thread (toolkit's pool on asyncio, trio's cache), so the interpreter exits without joining it; the
    # process is left to the host, never ended from here (no `os._exit`).
    stuck = running_calls()
    if stuck:  # say so rather than leave silently
        logging.getLogger("toolkit").warning(
            "exiting with %d sync tool call%s still running on a worker thread (cancelled at end of input; "
            "a thread cannot be stopped, so it is abandoned)",
            stuck,
            "" if stuck == 1 else "s",
        )


def run_main(fn: Callable[..., Awaitable[T]], *args: Any, backend: Literal["asyncio", "trio"] = "asyncio") -> T:
    """`anyio.run(fn, *args)` as a process's main (`Server.run`, the `toolkit` command): Ctrl-C ends it with
    `KeyboardInterrupt` on every Python, once the cleanup it cancelled has run.

    On asyncio, anyio's runner turns the first SIGINT into a cancellation of the main task and raises
    `KeyboardInterrupt` when that task has ended, knowing the cancellation for its own by `Task.uncancel()`, which
    Python 3.11 added: on 3.10 the main task's `CancelledError` escapes instead (anyio 4.x; asyncio's own runner
    falls back where anyio's does not). Nothing but that handler cancels the main task from outside, so on 3.10
    that `CancelledError` is the Ctrl-C.
    """
    if backend != "asyncio" or sys.version_info >= (3, 11):
        return anyio.run(fn, *args, backend=backend)
    import asyncio  # what anyio.run is about to load

    try:
        return anyio.run(fn, *args, backend=backend)
    except asyncio.CancelledError:
        raise KeyboardInterrupt from None


class _Stoppable:
    """A transport whose input can be ended from outside, as if the peer had closed it (SIGTERM under `run()`)."""

    def __init__(self, transport: Transport) -> None:
        self._transport = transport
        self.wrapped = transport  # what it moves messages over (OpenTelemetry's network.transport reads it)
        self._receiving: anyio.CancelScope | None = None
        self.ended = False
        """No more messages will be read: the input ended, or `stop()` was called."""

    async def send(self, message: str, /) -> None:
        await self._transport.send(message)

    async def receive(self) -> str:
        if not self.ended:
            with anyio.CancelScope() as self._receiving:
                try:
                    return await self._transport.receive()
                except anyio.EndOfStream:
                    self.ended = True
                    raise
        raise anyio.EndOfStream

    def stop(self) -> None:
        self.ended = True
        if self._receiving is not None:
            self._receiving.cancel()

    async def aclose(self) -> None:
        await self._transport.aclose()


async def _stop_on_sigterm(connection: Connection, transport: _Stoppable, tg: anyio.abc.TaskGroup) -> None:
    """The first SIGTERM stops the connection gracefully (`Connection.stop`, `drain`): the calls in flight get the
    server's `shutdown_grace` to answer (basic/lifecycle's shutdown, and the promise of docs/server.md), then are
    answered "Server shutting down"; meanwhile the client's other requests are still read and answered (a new call
    is refused); then the input ends. A second one, or one that comes once the input has ended (the client already
    waited for the calls, closing stdin, before sending it), stops at once."""
    import signal

    stopping = False
    with anyio.open_signal_receiver(signal.SIGTERM) as signals:
        async for _ in signals:
            if stopping or transport.ended:
                tg.cancel_scope.cancel()
                return
            from toolkit._http.serve import say_stopping  # deferred, downward: the one line every way of serving says

            stopping = True
            connection.stop()  # before anything is said: a request read from now on finds it stopping
            say_stopping(connection.server.shutdown_grace)
            tg.start_soon(_drain_then_end, connection, transport)


async def _drain_then_end(connection: Connection, transport: _Stoppable) -> None:
    await connection.drain()
    transport.stop()


def _interrupted(exc: BaseException) -> bool:
    """`KeyboardInterrupt`, or exception groups of nothing else (trio raises Ctrl-C through its nursery)."""
    if isinstance(exc, KeyboardInterrupt):
        return True
    inner = getattr(exc, "exceptions", None)  # a BaseExceptionGroup (the `exceptiongroup` backport on 3.10)
    return isinstance(inner, tuple) and bool(inner) and all(_interrupted(e) for e in inner)
