"""Registry: a server as the engine sees it: its options, its tools, the payloads prepared from them, the connections
running for it, and its lifespan.

The `Server` facade (`toolkit._server`) holds a `Registry` (`Server.registry`) and adds the public ways in (registering
tools, serving over a transport, HTTP, a process); everything below it (the connection, the HTTP app) takes the
`Registry` and never imports the facade, which it knows only as the `owner` the lifespan is called with. A `Registry`
also serves alone (`owner` is then itself). Its options are declared, defaulted and checked in `options.py`. State
kept here lives and dies with its server: no module global is keyed by a server.
"""

from __future__ import annotations

import contextlib
import logging
import weakref
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AbstractAsyncContextManager
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Protocol

import anyio

from toolkit._asking.mrtr import PURPOSE as REQUEST_STATE_PURPOSE
from toolkit._backend.base import serve_app
from toolkit._errors import StartupError
from toolkit._protocol.jsonrpc import encode
from toolkit._protocol.revisions import shape_implementation, shape_tool
from toolkit._protocol.types import Icon, Implementation
from toolkit._seal import Sealer, SecretOption, secret_keys

from .options import ServerOptions, resolve
from .running import call_settings
from .tasks import Tasks
from .telemetry import Telemetry, find

if TYPE_CHECKING:
    from toolkit._definition.tool import Tool
    from toolkit._definition.ui import UI

    from .search import Search, ToolSearch

__all__ = ["AnyLifespan", "Mounted", "Registry", "Running"]

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


class Registry:
    """A server's state, as every connection of it reads it (see the module docstring)."""

    def __init__(self, name: str, lifespan: AnyLifespan | None, options: ServerOptions, *, owner: Any = None) -> None:
        options = resolve(options)
        self.owner: Any = self if owner is None else owner
        """The server as its user holds it (the `Server` facade; this registry when it is used alone): what the
        lifespan is called with."""
        self.name = name
        self.info = _implementation(name, options)
        """The server's `serverInfo` (its name, version, title, description, icons and website)."""
        self.version = self.info.version
        self.title = options["title"]
        self.instructions = options["instructions"]
        self._limits(options)
        self.ttl_ms = options["ttl_ms"]
        self.cache_scope = options["cache_scope"]
        self.schema_profile = _profile(options["schema_profile"])
        self._asking(options)
        self._middleware(options)
        # OpenTelemetry (telemetry.py): the providers given, and the telemetry in use, None while it is off. Worked
        # out again whenever the server starts running (the global provider may have been set since), never per call.
        self.tracer_provider = options["tracer_provider"]
        """The tracer provider given (`None`: OpenTelemetry's global one, if configured); read when the server starts
        running."""
        self.meter_provider = options["meter_provider"]
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
        serve_app(self.backend, name)  # the default prefix of a shared backend is this app's
        self.tasks.share(self.backend)  # a backend that keeps tasks too: every worker sees every task
        self.search: Search | None = self._search(options["tool_search"])
        """The tool search (`tool_search=`): `tools/list` lists the pinned tools and its two; None: off."""
        # The one running lifespan of this server: its value, its context manager, the factory it came from,
        # how many `running()` blocks use it, and an event set when a startup or shutdown in progress ends.
        self._state: Any = _NOT_RUNNING
        self._lifespan_cm: AbstractAsyncContextManager[Any] | None = None
        self._running_with: AnyLifespan | None = None
        self._users = 0
        self._changing: anyio.Event | None = None

    def _search(self, tool_search: bool | ToolSearch | None) -> Search | None:
        if tool_search is None or tool_search is False:
            return None
        from .search import Search, search_option  # deferred: most servers list every tool

        option = search_option(tool_search)
        return Search(self, option) if option is not None else None

    def _limits(self, options: ServerOptions) -> None:
        """The bounds of what a connection holds and how long a call runs (checked by `resolve`)."""
        self.page_size = options["page_size"]
        self.max_message_size = options["max_message_size"]
        self.max_concurrent_requests = options["max_concurrent_requests"]
        self.max_queued_messages = options["max_queued_messages"]
        self.max_queued_bytes = options["max_queued_bytes"]
        self.tool_timeout = options["tool_timeout"]
        self.shutdown_grace = options["shutdown_grace"]

    def _asking(self, options: ServerOptions) -> None:
        self.confirm_fallback = options["confirm_fallback"]
        self.client_request_timeout = options["client_request_timeout"]
        self.backend = options["backend"]
        """The state the workers serving this server share (`Server(backend=...)`); None: this process only."""
        self.tools_told: list[Callable[[], None]] = []
        """Called when the tool list changes, beside this process's connections (an HTTP app with a backend tells
        the other workers)."""
        self.request_state_ttl = options["request_state_ttl"]
        secret = options["secret"]
        keys = secret_keys(secret)
        self.sealer = Sealer(keys, REQUEST_STATE_PURPOSE)
        """Signs and verifies the requestState of 2026-07-28 multi-round calls."""
        self.secret: tuple[bytes, ...] | None = tuple(keys) if secret is not None else None
        """The shared secret(s) of `secret=` (also given by `http_app(secret=...)`); None: a key of this process."""
        # URL-mode elicitations sent (2025-11-25), by id: the connection to tell when one completes. Weak, so a
        # closed connection is forgotten; bounded, so ids never completed cannot pile up.
        self._elicitations: weakref.WeakValueDictionary[str, Running] = weakref.WeakValueDictionary()

    def _middleware(self, options: ServerOptions) -> None:
        """The middleware options (docs/middleware.md, checked by `resolve`) and the others of a tool's call;
        `wraps_tools` says whether a call goes through any of them (the connection's one test on the path of a server
        without)."""
        self.middleware = tuple(options["middleware"] or ())
        self.tool_middleware = tuple(options["tool_middleware"] or ())
        self.question_middleware = tuple(options["question_middleware"] or ())
        self.tool_filter = options["tool_filter"]
        self.max_result_bytes = options["max_result_bytes"]
        self.show_error_details = options["show_error_details"]
        self.strict_arguments = options["strict_arguments"]
        self.call_settings = call_settings(self.show_error_details, self.strict_arguments)
        """How its tools' calls run in each revision (`running.CallHost`), from the two above, worked out once."""
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
        """The one secret this server's workers share, checked (`Server.share_secret`, which `http_app` calls).

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
        """Tell the client that sent the URL-mode elicitation `elicitation_id` that its flow is complete
        (`Server.elicitation_complete`, from any thread): whether a connection was waiting for it."""
        connection = self._elicitations.pop(elicitation_id, None)
        if connection is None:
            return False
        connection.elicitation_complete(elicitation_id)
        return True

    # -- the lifespan --------------------------------------------------------------------------------

    @property
    def lifespan_context(self) -> Any:
        """What the lifespan yielded (`Server.lifespan_context`).

        Raises:
            RuntimeError: the server is not running.
        """
        if self._state is _NOT_RUNNING:
            raise RuntimeError(f"server {self.name!r} is not running: use it inside `async with server.running()`")
        return self._state

    @contextlib.asynccontextmanager
    async def running(self, *, lifespan: AnyLifespan | None = None) -> AsyncIterator[Any]:
        """Run the server's lifespan around the block, or join it if it already runs; yield its value
        (`Server.running` says how blocks share it).

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
            cm = factory(self.owner) if factory is not None else None
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


def _implementation(name: str, options: ServerOptions) -> Implementation:
    version = options["version"]
    assert version, "resolve() gives every server a version"
    icons = options["icons"]
    return Implementation(
        name=name,
        version=version,
        title=options["title"],
        description=options["description"],
        website_url=options["website_url"],
        icons=[icon if isinstance(icon, Icon) else Icon.model_validate(icon) for icon in icons]
        if icons is not None
        else None,
    )


def _profile(name: str | None) -> str | None:
    """The schema profile every tool is served adapted to (`schema_profile=`), by its canonical name; None: none.

    Raises:
        ValueError: no profile has that name.
    """
    if name is None:
        return None
    from toolkit._profiles.profiles import get_profile  # deferred: most servers serve no profile

    return get_profile(name).name
