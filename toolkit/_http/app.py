"""Streamable HTTP: a plain ASGI application that serves a `Server` in both protocol eras on one endpoint.

Each POST is served by a connection of its own, built for that one message: a 2026-07-28 request carries everything
it needs in `_meta`, and a 2025-11-25 session's small state travels in its signed `Mcp-Session-Id` (`sessions.py`),
so any worker holding the key serves any request. The connection tags every message it sends with the request it
relates to and its kind; the exchange (`exchange.py`) puts those on the request's own response (`response.py`:
JSON, or SSE once there is more than the answer). What stays in one process (calls in flight, the GET stream, log
levels) is kept in a small per-process table, and docs/deploy.md says what that means for several workers.

This module is the ASGI app: the lifespan, the path, the Host and Origin guards (`guards.py`), who is calling
(`auth.py`), then the method: POST (`post.py`, `serving.py`), GET and DELETE (`streams.py`).

No web framework: the app speaks ASGI 3 directly, so it runs on any ASGI server and mounts inside any ASGI app.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

import anyio
from typing_extensions import Unpack

from toolkit._backend.base import BackendError, serve_app
from toolkit._engine.connection import Connection
from toolkit._errors import StartupError
from toolkit._protocol.jsonrpc import INVALID_REQUEST

from .auth import BearerAuth, Refusal, Resource, current_identity, to_verifier
from .exchange import AskTag, Caller, Exchange, SessionAccess
from .fleet import Fleet, unavailable
from .gate import CallGate
from .guards import HostGuard
from .headers import read_headers
from .limits import RateLimiter
from .options import HttpOptions, resolve
from .post import Posts
from .response import JSON, Receive, Scope, Send, Writer, error_body, plain, session_gone
from .serving import Calls
from .sessions import UNSET, SessionId, Sessions
from .sse import ReplayStore, Resumption, retry_field
from .streams import Streams

if TYPE_CHECKING:
    from toolkit._engine.registry import Registry

__all__ = ["HttpApp", "HttpOptions"]

logger = logging.getLogger("toolkit.http")

_ALLOW_LEGACY = (b"allow", b"GET, POST, DELETE")
_ALLOW_MODERN = (b"allow", b"POST")


class HttpApp:
    """The ASGI application `Server.http_app()` returns: MCP Streamable HTTP at `path`, both protocol eras.

    Use it as any ASGI app: `uvicorn module:app`, or mounted in Starlette or FastAPI. The options are
    [`HttpOptions`][toolkit.Server.http_app]'s.
    """

    def __init__(self, registry: Registry, path: str = "/mcp", **options: Unpack[HttpOptions]) -> None:
        if not path.startswith("/"):
            raise ValueError(f"path must start with '/', got {path!r}")
        settings = resolve(options)
        self.server: Any = registry.owner
        """The server served (the `Server` whose `http_app()` made this app): add or remove its tools here."""
        self.registry = registry
        """What the HTTP machinery serves (`Server.registry`): the engine's view of the server."""
        self.path = path.rstrip("/") or "/"
        self.legacy = settings["legacy"]
        self._guard = HostGuard(settings["allowed_hosts"], settings["allowed_origins"])
        # One secret for what the workers must trust from each other: session ids here, and the server's requestState.
        self.session_store = settings["session_store"]
        """The store shared by the processes serving this app (`session_store=`), or None: each process keeps what
        `DELETE` ended, and the misrouted answers it saw, to itself."""
        self._sessions: Sessions[Exchange] = Sessions(
            registry.share_secret(settings["secret"]), settings["session_ttl"], self.session_store
        )
        self._store = self._sessions.store  # which sessions DELETE ended: consulted by 2025-11-25 requests only
        self._running = False  # the ASGI lifespan runs the server's lifespan (else each request joins it)
        self._allow = _ALLOW_LEGACY if self.legacy else _ALLOW_MODERN
        self._auth = _bearer(registry, self.path, settings)
        limit = settings["rate_limit"]
        gate = CallGate(self._auth, RateLimiter(limit) if limit is not None else None, registry)
        store = ReplayStore(settings["replay_window"], settings["replay_size"])
        retry = retry_field(settings["sse_retry"])
        resumption = Resumption(store, retry, settings["sse_close_after"], settings["sse_ping"])
        self._calls = Calls(registry, gate, resumption, self._store, initialized=self._initialized)
        backend = settings["backend"] if settings["backend"] is not None else registry.backend
        serve_app(backend, registry.name)  # before anything uses it: its default prefix is this app's
        registry.tasks.share(backend)  # a backend whose workers share the tasks too
        self.fleet = Fleet(backend, registry, self._sessions) if backend is not None else None
        """With a backend: what this worker tells the others, and hears from them (`fleet.py`)."""
        if self.fleet is not None:
            fleet = self.fleet
            self._calls.fleet = gate.fleet = fleet
            self._calls.tag = AskTag(lambda: fleet.worker)  # an answer elsewhere is sent to this worker by name
            registry.tools_told.append(fleet.tools_changed)
            store.mirror, store.worker = fleet.keep, lambda: fleet.worker  # POST streams resume on any worker
        sessions = SessionAccess(self._sessions.open, self._session_of, self._sessions.record, self._end)
        max_body = settings["max_body_size"]
        max_body = max_body if max_body is not None else registry.max_message_size
        self._posts = Posts(self._calls, sessions, max_body, self.legacy, UNSET)
        self._streams = Streams(registry, resumption, sessions, self._calls.live)
        self._streams.fleet = self.fleet

    # -- ASGI ----------------------------------------------------------------------------------------

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "http":
            if self._running:
                await self._http(scope, receive, send)
                return
            # Mounted inside another app (Starlette does not forward the lifespan to mounts): join the server's
            # lifespan per request; the parent app should run `server.running()` in its own lifespan (with a
            # backend: `app.running()`, else what needs the backend answers 503).
            try:
                async with self.registry.running():
                    await self._http(scope, receive, send)
            except StartupError:
                logger.exception("the server's lifespan failed to start")
                await plain(send, 500)
        elif kind == "lifespan":
            await self._lifespan(receive, send)
        else:  # websocket: not an MCP transport
            await send({"type": "websocket.close", "code": 1000})

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """Run the server's lifespan and, with a backend, this worker's part in the fleet (it listens to the others)
        around the block: what the ASGI lifespan does. An app mounted in another app (Starlette does not forward
        the lifespan to mounts) with a backend needs the parent's lifespan to enter it.

        Raises:
            StartupError: the server's lifespan failed to start.
        """
        async with self.registry.running(), anyio.create_task_group() as tg:
            if self.fleet is not None:
                await tg.start(self.fleet.run)
            self._running = True
            try:
                yield
            finally:
                self._running = False
                tg.cancel_scope.cancel()

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        await receive()  # lifespan.startup
        try:
            async with self.running():
                await send({"type": "lifespan.startup.complete"})
                await receive()  # lifespan.shutdown
                self._running = False
                self.stopping()
        except StartupError as exc:
            await send({"type": "lifespan.startup.failed", "message": str(exc)})
            return
        finally:
            self._running = False
        await send({"type": "lifespan.shutdown.complete"})

    def stopping(self) -> None:
        """The server is stopping: open streams (GET, subscriptions) end now, calls in flight get `shutdown_grace`.

        At the lifespan's shutdown, and before it when the ASGI server says so: uvicorn waits for every open
        response before it runs the lifespan's shutdown, so `serve_http` calls this at the first signal (an idle
        stream would otherwise hold the stop for the whole grace)."""
        for exchange in list(self._calls.live):
            exchange.stop()
        deadline = anyio.current_time() + self.registry.shutdown_grace
        for scope in (*self._calls.streaming, *self._calls.answering):  # the calls served in their request's task
            scope.deadline = min(scope.deadline, deadline)

    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:
        """An HTTP request: its path, the Host and Origin guards, who is calling, then its method."""
        path: str = scope["path"].removeprefix(scope.get("root_path", ""))
        metadata = False
        if path != self.path:
            place = self._off_path(path, scope["method"])
            if place is None:
                await plain(send, 404)
                return
            metadata = place
        headers, repeated = read_headers(scope)
        if "origin" in headers or headers.get("host") not in self._guard.passed:  # else: a Host already allowed
            problem = self._guard.check(headers)
            if problem is not None:
                status, body = problem
                await plain(send, status, body, [JSON])
                return
        if self._auth is None:
            client = scope.get("client")
            caller = Caller(None, client[0] if client else "", "", None)
        else:
            identified = await self._identify(scope, headers, send, metadata)
            if identified is None:
                return
            caller = identified
        if scope["method"] == "POST":
            await self._posts.post(headers, repeated, receive, send, caller)
        else:
            await self._not_posted(scope["method"], headers, send, receive, caller)

    def _off_path(self, path: str, method: str) -> bool | None:
        """What a path other than the endpoint's names: True for the RFC 9728 metadata document (a GET, with
        `auth=`), False for the endpoint with a trailing slash, None for nothing here (404)."""
        if path.rstrip("/") == self.path:
            return False
        if self._auth is not None and path in self._auth.metadata_paths and method == "GET":
            return True
        return None

    async def _not_posted(
        self, method: str, headers: dict[str, str], send: Send, receive: Receive, caller: Caller
    ) -> None:
        """A request that is not a POST: GET and DELETE of a 2025-11-25 session's streams (`streams.py`); else 405."""
        if method == "GET" and self.legacy:
            await self._streams.get(headers, receive, send, caller)
        elif method == "DELETE" and self.legacy:
            await self._streams.delete(headers, send, caller)
        else:
            await plain(send, 405, headers=[self._allow])

    async def _identify(self, scope: Scope, headers: dict[str, str], send: Send, metadata: bool) -> Caller | None:
        """Who is calling, with `auth=`; None when the request was answered here (401, or the RFC 9728 metadata)."""
        assert self._auth is not None
        # Checked on every request (security best practices: sessions are never authentication); after the Host
        # and Origin checks, so that rebinding probes never reach the verifier.
        base = f"{scope.get('scheme', 'http')}://{headers['host']}{scope.get('root_path', '')}"
        if metadata:  # RFC 9728: public, for any origin
            await plain(send, 200, self._auth.metadata(base), [JSON, (b"access-control-allow-origin", b"*")])
            return None
        outcome = await self._auth.authenticate(headers.get("authorization"), base)
        if isinstance(outcome, Refusal):
            await plain(send, outcome.status, outcome.body, outcome.headers)
            return None
        current_identity.set(outcome)  # in this request's task: the call's task and worker thread inherit it
        return Caller(outcome, outcome.subject, base, outcome.subject)

    # -- sessions ------------------------------------------------------------------------------------

    def _initialized(self, connection: Connection, writer: Writer, caller: Caller) -> None:
        state = connection.session
        if state is not None:  # initialize succeeded: a fresh id, whatever the client sent (no fixation)
            session = self._sessions.mint(state, caller.subject)
            writer.headers.append((b"mcp-session-id", session.token.encode()))

    async def _session_of(self, headers: dict[str, str], send: Send, caller: Caller) -> SessionId | None:
        """The session a GET or DELETE names; None when it was answered here (400 without the header, else 404)."""
        token = headers.get("mcp-session-id")
        if token is None:
            body = error_body(None, INVALID_REQUEST, "Bad request: Mcp-Session-Id header required")
            await plain(send, 400, body, [JSON])
            return None
        session = self._sessions.open(token, caller.subject)
        if session is not None and self.fleet is not None:
            try:
                ended, _ = await self.fleet.facts(session)
            except BackendError as exc:
                await unavailable(send, None, exc)
                return None
            session = None if ended else session
        if session is None:
            await session_gone(send)
        return session

    async def _end(self, session: SessionId) -> None:
        """DELETE: on every worker (the backend, else the shared `session_store`), and here at once."""
        if self.fleet is not None:
            await self.fleet.end(session)  # first: if the backend fails, the session is not ended anywhere
        self._sessions.end(session)


def _bearer(registry: Registry, path: str, options: HttpOptions) -> BearerAuth | None:
    """The bearer-token check of `auth=` (with its scopes and RFC 9728 metadata), or None without `auth=`."""
    auth = options["auth"]
    if auth is None:
        return None
    resource = Resource(
        name=registry.title or registry.name,
        url=options["resource_url"],
        authorization_servers=options["authorization_servers"],
        scopes_supported=options["scopes_supported"],
        required_scopes=options["required_scopes"] or {},
        scope_implies=options["scope_implies"],
    )
    return BearerAuth(to_verifier(auth), path, resource)
