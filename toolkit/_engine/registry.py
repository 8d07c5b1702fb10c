"""Registry: a server as the engine sees it: its options, its tools, the payloads prepared from them, the connections
running for it, and its lifespan.

The `Server` facade (`toolkit._server`) is a `Registry` with the public ways in (registering tools, serving over a
transport, HTTP, a process); everything below it (the connection, the HTTP app) takes a `Registry` and never imports
the facade. State kept here lives and dies with its server: no module global is keyed by a server.
"""

from __future__ import annotations

import contextlib
import logging
import weakref
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal, Protocol

import anyio

from toolkit._asking.around import QuestionMiddleware
from toolkit._asking.asking import ConfirmFallback
from toolkit._asking.mrtr import PURPOSE as REQUEST_STATE_PURPOSE
from toolkit._backend.base import serve_app
from toolkit._definition.middleware import Middleware, ToolFilter, middleware_problems
from toolkit._definition.options import limit_problems
from toolkit._errors import StartupError, refuse_unknown_options
from toolkit._protocol.jsonrpc import encode
from toolkit._protocol.revisions import shape_implementation, shape_tool
from toolkit._protocol.types import Icon, Implementation
from toolkit._seal import Sealer, SecretOption, secret_keys
from toolkit._transports.base import DEFAULT_MAX_MESSAGE_SIZE

from .tasks import TaskOptions, Tasks
from .telemetry import Telemetry, find

if TYPE_CHECKING:
    from opentelemetry.metrics import MeterProvider
    from opentelemetry.trace import TracerProvider

    from toolkit._backend.base import Backend
    from toolkit._definition.tool import Tool
    from toolkit._definition.ui import UI

    from .search import Search, ToolSearch

__all__ = ["AnyLifespan", "Mounted", "Registry", "Running", "ServerOptions"]

AnyLifespan = Callable[[Any], AbstractAsyncContextManager[Any]]
"""A lifespan factory, called with the server that runs it (`toolkit.Lifespan` names the server's type)."""

logger = logging.getLogger("toolkit")
_NOT_RUNNING: Any = object()
_MAX_PENDING_ELICITATIONS = 10_000


class Running(Protocol):
    """What the registry tells a running connection (the connection, a floor above, adds itself while it runs)."""

    def tools_changed(self) -> None: ...

    def elicitation_complete(self, elicitation_id: str) -> None: ...


class Mounted(Protocol):
    """A server mounted on this one (`Server.mount`, the gateway a floor above): connected while the server runs."""

    def connected(self) -> AbstractAsyncContextManager[None]:
        """Connect to the mounted server for as long as the block runs, its tools served as this server's own."""
        ...


class ServerOptions(TaskOptions, total=False):
    """The options of `Server(name, ...)`, declared once (each is documented on [`Server`][toolkit.Server])."""

    version: str | None
    title: str | None
    description: str | None
    icons: Sequence[Icon | Mapping[str, Any]] | None
    website_url: str | None
    instructions: str | None
    page_size: int | None
    show_error_details: bool
    max_message_size: int
    max_concurrent_requests: int
    max_queued_messages: int
    max_queued_bytes: int
    tool_timeout: float | None
    shutdown_grace: float
    ttl_ms: int
    cache_scope: Literal["public", "private"]
    schema_profile: str | None
    confirm_fallback: ConfirmFallback
    client_request_timeout: float | None
    secret: SecretOption
    request_state_ttl: float
    strict_arguments: bool
    middleware: Sequence[Middleware]
    tool_middleware: Sequence[Middleware]
    question_middleware: Sequence[QuestionMiddleware]
    tool_filter: ToolFilter | None
    max_result_bytes: int | None
    tracer_provider: TracerProvider | None
    meter_provider: MeterProvider | None
    backend: Backend | None
    tool_search: bool | ToolSearch | None


class Registry:
    """A server's state, as every connection of it reads it (see the module docstring)."""

    def __init__(self, name: str, lifespan: AnyLifespan | None, options: ServerOptions) -> None:
        refuse_unknown_options("Server", options, ServerOptions.__optional_keys__)
        self.name = name
        self.version = options.get("version") or "0.0.0"
        self.title = options.get("title")
        self.instructions = options.get("instructions")
        self._limits(options)
        self.ttl_ms = options.get("ttl_ms", 0)
        self.cache_scope: Literal["public", "private"] = options.get("cache_scope", "public")
        self.schema_profile: str | None = None
        profile = options.get("schema_profile")
        if profile is not None:
            from toolkit._profiles.profiles import get_profile  # deferred: most servers serve no profile

            self.schema_profile = get_profile(profile).name
        self.show_error_details = options.get("show_error_details", False)
        self.strict_arguments = options.get("strict_arguments", False)
        self._asking(options)
        self._middleware(options)
        self.info = _implementation(name, self.version, options)
        # OpenTelemetry (telemetry.py): the providers given, and the telemetry in use, None while it is off. Worked
        # out again whenever the server starts running (the global provider may have been set since), never per call.
        self.tracer_provider = options.get("tracer_provider")
        """The tracer provider given (`None`: OpenTelemetry's global one, if configured); read when the server starts
        running."""
        self.meter_provider = options.get("meter_provider")
        """The meter provider given, likewise."""
        self.telemetry: Telemetry | None = find(self.tracer_provider, self.meter_provider)
        self._tools: dict[str, Tool[Any, Any]] = {}
        self.tools: Mapping[str, Tool[Any, Any]] = MappingProxyType(self._tools)
        """The tools served, by name, in registration order (read-only). Once the server serves (`served`), a new
        mapping after every change, so that a request reading it is not disturbed; before, tools are added to it in
        place (registering N tools costs N additions, not N copies of the list)."""
        self._payloads: dict[str, list[str]] = {}  # each tool's wire JSON, per revision, until the list changes
        self._text_payloads: dict[str, list[str]] = {}  # the same without app-only tools (clients without MCP Apps)
        self._uis: dict[str, UI] | None = None  # the tools' MCP Apps pages by URI, until the list changes
        self._infos: dict[str, dict[str, Any]] = {}  # `serverInfo`, per revision
        self.connections: set[Running] = set()
        """The connections running for this server now (each adds itself while it runs)."""
        self.served = False
        """Whether a connection was ever made for this server (an HTTP app makes one when it is created): from then
        on a change to the tools makes a new view of them (`put_tool`)."""
        self.lifespan: AnyLifespan | None = lifespan
        """The server's lifespan factory, or `None`."""
        self.mounts: list[Mounted] = []
        """The servers mounted on this one (`Server.mount`), connected while it runs, whatever its lifespan."""
        self._mounts_cm: contextlib.AsyncExitStack | None = None
        self.tasks = Tasks(self, options)
        """The server's tasks (`task=` tools): their store, and those running in this process."""
        serve_app(options.get("backend"), name)  # the default prefix of a shared backend is this app's
        self.tasks.share(options.get("backend"))  # a backend that keeps tasks too: every worker sees every task
        self.search: Search | None = self._search(options)
        """The tool search (`tool_search=`): `tools/list` lists the pinned tools and its two; None: off."""
        # The one running lifespan of this server: its value, its context manager, the factory it came from,
        # how many `running()` blocks use it, and an event set when a startup or shutdown in progress ends.
        self._state: Any = _NOT_RUNNING
        self._lifespan_cm: AbstractAsyncContextManager[Any] | None = None
        self._running_with: AnyLifespan | None = None
        self._users = 0
        self._changing: anyio.Event | None = None

    def _search(self, options: ServerOptions) -> Search | None:
        tool_search = options.get("tool_search")
        if tool_search is None or tool_search is False:
            return None
        from .search import Search, search_option  # deferred: most servers list every tool

        option = search_option(tool_search)
        return Search(self, option) if option is not None else None

    def _limits(self, options: ServerOptions) -> None:
        page_size = options.get("page_size")
        if page_size is not None and page_size < 1:
            raise ValueError("page_size must be at least 1")
        self.page_size = page_size
        self.max_message_size = options.get("max_message_size", DEFAULT_MAX_MESSAGE_SIZE)
        self.max_concurrent_requests = options.get("max_concurrent_requests", 1000)
        self.max_queued_messages = options.get("max_queued_messages", 10_000)
        self.max_queued_bytes = options.get("max_queued_bytes", 64 * 1024 * 1024)
        if self.max_queued_messages < 1 or self.max_queued_bytes < 1:
            raise ValueError("max_queued_messages and max_queued_bytes must be at least 1")
        self.tool_timeout = options.get("tool_timeout")
        self.shutdown_grace = options.get("shutdown_grace", 5.0)

    def _asking(self, options: ServerOptions) -> None:
        confirm_fallback = options.get("confirm_fallback", "auto")
        if confirm_fallback not in ("auto", "refuse", "run"):
            raise ValueError("confirm_fallback must be 'auto', 'refuse' or 'run'")
        self.confirm_fallback: ConfirmFallback = confirm_fallback
        self.client_request_timeout = options.get("client_request_timeout")
        self.backend = options.get("backend")
        if self.backend is not None:
            from toolkit._backend.base import Backend  # deferred: most servers have none

            if not isinstance(self.backend, Backend):
                raise TypeError(f"backend= takes a Backend (MemoryBackend, RedisBackend), got {self.backend!r}")
        """The state the workers serving this server share (`Server(backend=...)`); None: this process only."""
        self.tools_told: list[Callable[[], None]] = []
        """Called when the tool list changes, beside this process's connections (an HTTP app with a backend tells
        the other workers)."""
        self.request_state_ttl = options.get("request_state_ttl", 900.0)
        secret = options.get("secret")
        keys = secret_keys(secret)
        self.sealer = Sealer(keys, REQUEST_STATE_PURPOSE)
        """Signs and verifies the requestState of 2026-07-28 multi-round calls."""
        self.secret: tuple[bytes, ...] | None = tuple(keys) if secret is not None else None
        """The shared secret(s) of `secret=` (also given by `http_app(secret=...)`); None: a key of this process."""
        # URL-mode elicitations sent (2025-11-25), by id: the connection to tell when one completes. Weak, so a
        # closed connection is forgotten; bounded, so ids never completed cannot pile up.
        self._elicitations: weakref.WeakValueDictionary[str, Running] = weakref.WeakValueDictionary()

    def _middleware(self, options: ServerOptions) -> None:
        """The middleware options (docs/middleware.md), checked; `wraps_tools` says whether a call goes through
        any of them (the connection's one test on the path of a server without)."""
        problems = [
            *middleware_problems(options.get("middleware"), "middleware"),
            *middleware_problems(options.get("tool_middleware"), "tool_middleware"),
            *middleware_problems(options.get("question_middleware"), "question_middleware"),
            *limit_problems(self.tool_timeout, options.get("max_result_bytes"), "server "),
        ]
        if problems:
            raise ValueError("; ".join(problems))
        self.middleware = tuple(options.get("middleware") or ())
        self.tool_middleware = tuple(options.get("tool_middleware") or ())
        self.question_middleware = tuple(options.get("question_middleware") or ())
        self.tool_filter = options.get("tool_filter")
        self.max_result_bytes = options.get("max_result_bytes")
        limited = self.tool_timeout is not None or self.max_result_bytes is not None
        self.wraps_tools = bool(self.tool_middleware) or limited
        self.abandoned_calls = 0
        """Sync tool calls abandoned on their worker thread after a timeout (a thread cannot be stopped): a total."""

    # -- tools and what is prepared from them ---------------------------------------------------------

    def set_tools(self, tools: dict[str, Tool[Any, Any]], *, announce: bool = True) -> None:
        """Serve `tools` from now on; with `announce`, tell every running connection that the list changed."""
        # A new view, never one changed in place: a call iterating the old one is not disturbed.
        self._tools = tools
        self.tools = MappingProxyType(tools)
        self._payloads, self._text_payloads, self._uis = {}, {}, None
        if announce:
            for connection in list(self.connections):
                connection.tools_changed()
            for tell in self.tools_told:
                tell()

    def put_tool(self, tool: Tool[Any, Any]) -> None:
        """Serve one more tool (its name is new). Before any connection was made for the server (decoration time),
        in place: decorating 10,000 tools copied the growing list 10,000 times (3.5 s of a 10,000-tool server's
        start-up, issue 23)."""
        if self.served or self.tools_told:
            self.set_tools({**self._tools, tool.name: tool})
        else:
            self._tools[tool.name] = tool
            self._payloads, self._text_payloads, self._uis = {}, {}, None

    @property
    def uis(self) -> Mapping[str, UI]:
        """The MCP Apps pages the tools name (`@tool(ui=...)`), by URI, in the tools' order: the resources served."""
        if self._uis is None:
            self._uis = {tool.ui.uri: tool.ui for tool in self.tools.values() if tool.ui is not None}
        return self._uis

    def tool_payloads(self, version: str, apps: bool = True) -> list[str]:
        """Each tool's wire JSON for `version`, prepared once per revision and reused until the list changes; with
        `apps` False (a client that does not speak MCP Apps), without the tools only an app may call."""
        if not apps:
            text = self._text_payloads.get(version)
            if text is None:
                every = zip(self.tools.values(), self.tool_payloads(version), strict=True)
                text = self._text_payloads[version] = [payload for tool, payload in every if not tool.app_only]
            return text
        payloads = self._payloads.get(version)
        if payloads is None:
            profile = self.schema_profile
            payloads = self._payloads[version] = [
                encode(
                    shape_tool(
                        t.adapted(profile).tool
                        if profile is not None
                        else t.definition.model_dump(mode="json", by_alias=True, exclude_none=True),
                        version,
                        t.output_schema,
                        # a profile lists what its provider takes: no output schema the tool does not declare
                        t.bare_output and profile is None,
                    )
                )
                for t in self.tools.values()
            ]
        return payloads

    def server_info(self, version: str) -> dict[str, Any]:
        """The server's `serverInfo` for `version`."""
        info = self._infos.get(version)
        if info is None:
            wire = self.info.model_dump(mode="json", by_alias=True, exclude_none=True)
            info = self._infos[version] = shape_implementation(wire, version)
        return info

    def add_mount(self, mounted: Mounted) -> None:
        """Connect `mounted` whenever this server runs (`Server.mount`).

        Raises:
            RuntimeError: the server is running already (mount before serving).
        """
        if self._users:
            raise RuntimeError(f"server {self.name!r} is running: mount other servers before it serves")
        self.mounts.append(mounted)

    # -- secrets and URL elicitations -----------------------------------------------------------------

    def share_secret(self, secret: SecretOption) -> tuple[bytes, ...] | None:
        """The one secret this server's workers share, checked: `secret`, else the `Server(secret=...)` (`None`
        when neither was given: each process then signs with a random key of its own).

        `http_app(secret=...)` calls it, so that one secret signs both what the workers must trust from each other
        (session ids, the requestState of 2026-07-28 multi-round calls); each use derives its own key from it. A
        server made with a secret of its own keeps it for its requestState.

        Raises:
            ValueError: a secret shorter than 32 bytes.
        """
        if secret is None:
            return self.secret
        keys = tuple(secret_keys(secret))
        if self.secret is None:
            self.sealer = Sealer(keys, REQUEST_STATE_PURPOSE)
            self.secret = keys
        return keys

    def track_elicitation(self, elicitation_id: str, *, connection: Running) -> None:
        """Remember which connection sent a URL-mode elicitation (called by the connection, not by users)."""
        if len(self._elicitations) >= _MAX_PENDING_ELICITATIONS:
            self._elicitations.pop(next(iter(self._elicitations)), None)  # the oldest goes first
        self._elicitations[elicitation_id] = connection

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
        connection = self._elicitations.pop(elicitation_id, None)
        if connection is None:
            return False
        connection.elicitation_complete(elicitation_id)
        return True

    # -- the lifespan --------------------------------------------------------------------------------

    @property
    def lifespan_context(self) -> Any:
        """What the lifespan yielded (`None` without a lifespan), while the server is running.

        Raises:
            RuntimeError: the server is not running.
        """
        if self._state is _NOT_RUNNING:
            raise RuntimeError(f"server {self.name!r} is not running: use it inside `async with server.running()`")
        return self._state

    @contextlib.asynccontextmanager
    async def running(self, *, lifespan: AnyLifespan | None = None) -> AsyncIterator[Any]:
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
        factory = lifespan if lifespan is not None else self.lifespan
        self.telemetry = find(self.tracer_provider, self.meter_provider, known=self.telemetry)
        while self._changing is not None:  # another task is starting or shutting it down: wait, then look again
            await self._changing.wait()
        if self._users:
            if lifespan is not None and lifespan is not self._running_with:
                raise RuntimeError(f"server {self.name!r} is already running with another lifespan")
            self._users += 1
        else:
            await self._start(factory)
        try:
            yield self._state
        finally:
            await self._leave()

    async def _start(self, factory: AnyLifespan | None) -> None:
        changing = self._changing = anyio.Event()
        try:
            cm = factory(self) if factory is not None else None
            state = await cm.__aenter__() if cm is not None else None
            if self.mounts:
                self._mounts_cm = await self._connect_mounts(cm)
        except Exception as exc:
            raise StartupError(self.name, exc) from exc
        finally:
            self._changing = None
            changing.set()
        self._state, self._lifespan_cm, self._running_with, self._users = state, cm, factory, 1

    async def _connect_mounts(self, lifespan: AbstractAsyncContextManager[Any] | None) -> contextlib.AsyncExitStack:
        """Connect every mounted server (after the lifespan started: a failure shuts the lifespan down again)."""
        stack = contextlib.AsyncExitStack()
        try:
            for mount in self.mounts:
                await stack.enter_async_context(mount.connected())
        except BaseException:
            await stack.aclose()
            if lifespan is not None:
                with anyio.CancelScope(shield=True):
                    await lifespan.__aexit__(None, None, None)
            raise
        return stack

    async def _leave(self) -> None:
        self._users -= 1
        if self._users:
            return
        await self.tasks.stop()  # the tasks running here end failed: their process stops serving
        mounts, self._mounts_cm = self._mounts_cm, None
        if mounts is not None:  # not shielded: their task groups are left in the scope they were entered in
            await mounts.aclose()
        cm, self._lifespan_cm, self._state, self._running_with = self._lifespan_cm, None, _NOT_RUNNING, None
        if cm is None:
            return
        changing = self._changing = anyio.Event()
        try:
            with anyio.CancelScope(shield=True):
                # Told nothing of why the block ended: the code after `yield` runs, as after a clean end.
                await cm.__aexit__(None, None, None)
        except Exception:
            logger.exception("server %r: the lifespan failed to shut down", self.name)
        finally:
            self._changing = None
            changing.set()


def _implementation(name: str, version: str, options: ServerOptions) -> Implementation:
    icons = options.get("icons")
    return Implementation(
        name=name,
        version=version,
        title=options.get("title"),
        description=options.get("description"),
        website_url=options.get("website_url"),
        icons=[icon if isinstance(icon, Icon) else Icon.model_validate(icon) for icon in icons]
        if icons is not None
        else None,
    )
