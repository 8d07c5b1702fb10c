"""One connection: its state, its method tables (one per protocol era), and requests the server sends the client.

Handshake era (2024-11-05 .. 2025-11-25): `initialize` fixes the revision for the connection, kept as a
`SessionState`. Stateless era (2026-07-28): every request names its revision and client capabilities in `_meta`,
and is served with a `SessionState` of its own. Each handler is `handler(request_id, params, state)` and reads the
rest from the connection. The core reads no file and opens no socket: the transport moves text, this module decides
what to say.

Every message written is tagged with the id of the client request it belongs to (`None` for none) and its kind (the
answer that ends the request, or not): a transport that routes per request (HTTP) implements `RoutingTransport`
(`_transports/base.py`) and gets both, and hands the connection the messages it already decoded.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import functools
import itertools
import logging
import threading
import weakref
from collections import deque
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, cast

import anyio
import anyio.abc
import anyio.from_thread
import anyio.lowlevel
import pydantic

from toolkit._asking.asking import Asker, finish_asking, start_asking, url_required
from toolkit._asking.mrtr import Suspend, bind_for
from toolkit._definition.tool import call_tool
from toolkit._errors import (
    ClientRequestError,
    ConnectionClosedError,
    MessageError,
    ProtocolError,
    URLElicitationRequired,
)
from toolkit._protocol.jsonrpc import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    UNSUPPORTED_PROTOCOL_VERSION,
    check_message,
    decode,
    encode,
    error_response,
    is_valid_id,
)
from toolkit._protocol.meta import (
    CAPABILITIES_KEY,
    CLIENT_INFO_KEY,
    LOG_LEVEL_KEY,
    SERVER_INFO_KEY,
    SUBSCRIPTION_KEY,
    VERSION_KEY,
)
from toolkit._protocol.revisions import negotiate, shape_implementation, shape_tool
from toolkit._protocol.types import HANDSHAKE_VERSIONS, MODERN_VERSION, Implementation
from toolkit._transports.base import MessageKind, RoutingTransport

from .context import LOG_LEVELS, Context, LogLevel

if TYPE_CHECKING:  # annotations only: `_server` imports this module (docs/architecture.md, "Imports")
    from toolkit._transports.base import Transport

    from .server import Server

__all__ = [
    "CAPABILITIES",
    "Connection",
    "SessionState",
    "running_connections",
    "server_info",
    "tool_payloads",
    "tools_changed",
]

logger = logging.getLogger("toolkit")

CAPABILITIES = {"tools": {"listChanged": True}, "logging": {}}
_LONG_RUNNING = frozenset({"tools/call", "subscriptions/listen"})  # run in their own task, cancellable
_BATCH_VERSION = "2025-03-26"  # the only revision with JSON-RPC batches
_UNSCOPED = contextlib.nullcontext()
_OUTSIDE_SESSION = frozenset({"initialize", "server/discover"})  # never served from a handshake session

Handler = Callable[[Any, dict[str, Any], "SessionState"], Awaitable[Any]]


@dataclass(frozen=True)
class SessionState:
    """What a connection knows about its client: the handshake's outcome, or one 2026-07-28 request's `_meta`.

    A handshake-era connection holds one from `initialize` on (or from the start, when made with
    `Connection(server, transport, session=...)` for a session another worker negotiated); it replaces it, never
    changes it, so a copy read once stays true to that moment.
    """

    version: str
    """The negotiated protocol revision."""
    client_capabilities: dict[str, Any] = field(default_factory=dict)
    """The client's capabilities, as it declared them."""
    client_info: dict[str, Any] | None = None
    """The client's `clientInfo`, as sent (`None` when missing)."""
    initialized: bool = False
    """The client sent `notifications/initialized`."""
    log_level: LogLevel | None = "info"
    """The least severe log level the client wants (`None`: none at all)."""


class _Catalog:
    """What every connection of one server sends alike, prepared once: tool JSON and server info per revision."""

    __slots__ = ("infos", "payloads", "tools")

    def __init__(self, tools: object) -> None:
        self.tools = tools  # the server's tool view this was prepared from: a new one means the list changed
        self.payloads: dict[str, list[str]] = {}
        self.infos: dict[str, dict[str, Any]] = {}


# One catalog per live server, dropped with it (weak keys): never more entries than servers in use.
_catalogs: weakref.WeakKeyDictionary[Server, _Catalog] = weakref.WeakKeyDictionary()


def _catalog(server: Server) -> _Catalog:
    found = _catalogs.get(server)
    if found is None or found.tools is not server.tools:
        found = _catalogs[server] = _Catalog(server.tools)
    return found


# The connections running for each live server, which `tools_changed` tells of a new tool list.
_running: weakref.WeakKeyDictionary[Server, set[Connection]] = weakref.WeakKeyDictionary()


def tools_changed(server: Server) -> None:
    """Tell every connection `server` runs that its tool list changed (called by the server)."""
    for connection in list(_running.get(server, ())):
        connection.tools_changed()


def running_connections(server: Server) -> int:
    """How many connections of `server` are running now."""
    return len(_running.get(server, ()))


def tool_payloads(server: Server, version: str) -> list[str]:
    """Each tool's wire JSON for `version`, prepared once per revision and reused until the list changes."""
    catalog = _catalog(server)
    payloads = catalog.payloads.get(version)
    if payloads is None:
        profile = server.schema_profile
        payloads = catalog.payloads[version] = [
            encode(
                shape_tool(
                    t.adapted(profile).tool
                    if profile is not None
                    else t.definition.model_dump(mode="json", by_alias=True, exclude_none=True),
                    version,
                    t.output_schema,
                )
            )
            for t in server.tools.values()
        ]
    return payloads


def server_info(server: Server, version: str) -> dict[str, Any]:
    """The server's `serverInfo` for `version`."""
    catalog = _catalog(server)
    info = catalog.infos.get(version)
    if info is None:
        wire = server.info.model_dump(mode="json", by_alias=True, exclude_none=True)
        info = catalog.infos[version] = shape_implementation(wire, version)
    return info


def _id_in_use(request_id: Any) -> dict[str, Any]:
    return error_response(request_id, INVALID_REQUEST, "Invalid request", "id already in use by a request in flight")


def _client_info(info: Any) -> Implementation | None:
    """The client's self-description, or None when it is missing or malformed (it is display-only)."""
    if not isinstance(info, dict):
        return None
    try:
        return Implementation.model_validate(info)
    except pydantic.ValidationError:
        return None


#: Whether a transport's type implements `RoutingTransport`: worked out once per type (a runtime protocol check is
#: slow, and HTTP makes a connection per request).
routes: Callable[[type], bool] = functools.cache(lambda kind: issubclass(kind, RoutingTransport))


class _Outbox:
    """The messages of one connection on their way out, in order, bounded; a writer task hands them to the transport.

    Putting a message never waits for the peer to read, only for room, so the connection's reader goes on reading
    while the peer is slow (JSON-RPC lets a client write all its requests before it reads a reply) and stops only
    when the outbox is full. The bounds are high-water marks, so that a message of any size fits: the outbox holds
    at most `max_messages` messages, and `max_bytes` characters of JSON plus one message. Each message travels with
    the id of the request it relates to and its kind, for a `RoutingTransport`.
    """

    __slots__ = (
        "_empty",
        "_lock",
        "_max_bytes",
        "_max_messages",
        "_queue",
        "_ready",
        "_room",
        "_send_related",
        "_size",
        "_transport",
        "_writing",
    )

    def __init__(self, transport: Transport, max_messages: int, max_bytes: int) -> None:
        self._transport = transport
        # The optional per-request route of the transport contract (`RoutingTransport`), checked once.
        self._send_related: Callable[[str, Any, MessageKind], Awaitable[None]] | None = (
            cast("RoutingTransport", transport).send_related if routes(type(transport)) else None
        )
        self._queue: deque[tuple[str, Any, MessageKind]] = deque()
        self._size = 0  # characters queued; a message counts until the transport has taken all of it
        self._max_messages = max_messages
        self._max_bytes = max_bytes
        self._writing = False  # a message is being handed to the transport (by the writer or by `send`)
        self._lock = anyio.Lock(fast_acquire=True)  # FIFO among the producers waiting for room
        self._ready: anyio.Event | None = None  # the writer waits for work
        self._room: anyio.Event | None = None  # producers and the reader wait for room
        self._empty: anyio.Event | None = None  # end of input waits for everything to be written

    @property
    def full(self) -> bool:
        return len(self._queue) >= self._max_messages or self._size >= self._max_bytes

    async def wait_for_room(self) -> None:
        while self.full:
            if self._room is None:
                self._room = anyio.Event()
            await self._room.wait()

    async def put(self, text: str, related: Any, kind: MessageKind = MessageKind.MESSAGE) -> None:
        """Queue `text` behind everything put before it, once there is room (uncontended: without a checkpoint)."""
        async with self._lock:
            await self.wait_for_room()
            self._queue.append((text, related, kind))
            self._size += len(text)
            self._wake()

    async def send(self, text: str, related: Any, kind: MessageKind = MessageKind.MESSAGE) -> None:
        """Write `text` now if nothing is ahead of it, else `put` it: a task that may wait for the peer saves the
        writer a wake-up (a tenth of an in-memory call). Never from the connection's reader, nor from inside a
        cancel scope of a call (a cancelled write could leave half a line on a byte stream).
        """
        if self._writing or self._queue or self._lock.locked():
            await self.put(text, related, kind)
            return
        self._writing = True
        try:  # `_write`, inlined: this is every call's reply
            if self._send_related is not None:
                await self._send_related(text, related, kind)
            else:
                await self._transport.send(text)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            logger.debug("dropped a message: the transport is closed")
        finally:
            self._writing = False
            if self._queue or self._empty is not None:
                self._wake()

    async def flush(self) -> None:
        """Wait until the transport has taken every message put so far, and those waiting for room."""
        while self._queue or self._writing or self._lock.locked():
            self._empty = anyio.Event()
            await self._empty.wait()

    async def run(self) -> None:
        """Hand the queued messages to the transport, one at a time, until cancelled."""
        queue = self._queue
        while True:
            while self._writing or not queue:
                self._ready = anyio.Event()
                await self._ready.wait()
            text, related, kind = queue[0]
            self._writing = True
            try:
                await self._write(text, related, kind)
            finally:
                self._writing = False
            queue.popleft()
            self._size -= len(text)
            if self._room is not None and not self.full:
                self._room.set()
                self._room = None
            self._wake()

    async def _write(self, text: str, related: Any, kind: MessageKind) -> None:
        try:
            if self._send_related is not None:
                await self._send_related(text, related, kind)
            else:
                await self._transport.send(text)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            logger.debug("dropped a message: the transport is closed")

    def _wake(self) -> None:
        if self._queue:
            if self._ready is not None and not self._writing:
                self._ready.set()
                self._ready = None
        elif self._empty is not None and not self._writing:
            self._empty.set()
            self._empty = None


class _Waiting:
    """A request this server sent, waiting for the client's response."""

    __slots__ = ("done", "error", "result")

    def __init__(self) -> None:
        self.done = anyio.Event()
        self.result: Any = None
        self.error: ProtocolError | None = None


class Connection:
    """The state of one client connection, the dispatch of its messages, and the requests sent to its client.

    Args:
        server: The server whose tools this connection serves.
        transport: Moves the messages.
        session: Start in the handshake era's operating state (a session negotiated elsewhere, e.g. by another
            HTTP worker); `None` waits for `initialize` or 2026-07-28 requests.
        request_ids: The ids of the requests the server sends the client (default 1, 2, 3...): a transport on which
            answers arrive apart from the connection (HTTP: each in a POST of its own) gives ids it can route back.
    """

    def __init__(
        self,
        server: Server,
        transport: Transport,
        *,
        session: SessionState | None = None,
        request_ids: Iterator[int | str] | None = None,
    ) -> None:
        self.server = server
        self.transport = transport
        self._session = session
        self._initialized = session is not None and session.initialized  # may come before initialize
        self._client_info = _client_info(session.client_info) if session is not None else None
        self._thread = threading.get_ident()
        self._token: anyio.lowlevel.EventLoopToken | None = None
        self.in_flight: dict[Any, anyio.CancelScope] = {}
        self.listeners: set[Any] = set()
        self._outbox = _Outbox(transport, server.max_queued_messages, server.max_queued_bytes)
        self._modern_info = server_info(server, MODERN_VERSION)
        self._modern_meta = encode({SERVER_INFO_KEY: self._modern_info})
        self._idle = anyio.Event()
        self._closing = anyio.Event()  # set at end of input: open subscriptions then end themselves
        self._closed = False  # input has ended: requests to the client can get no answer
        self._tg: anyio.abc.TaskGroup | None = None
        # Ids of the requests this server sends (the client's are its own); a transport that routes answers gives its
        # own, unique beyond this connection.
        self._ids: Iterator[int | str] = itertools.count(1) if request_ids is None else request_ids
        self._waiting: dict[int | str, _Waiting] = {}
        # ping and logging/setLevel exist only in the handshake era; discover and listen only in 2026-07-28.
        self._handshake_methods: dict[str, Handler] = {
            "tools/call": self._tools_call,
            "tools/list": self._tools_list,
            "ping": self._ping,
            "logging/setLevel": self._set_level,
        }
        self._modern_methods: dict[str, Handler] = {
            "tools/call": self._tools_call,
            "tools/list": self._tools_list,
            "server/discover": self._discover,
            "subscriptions/listen": self._listen,
        }

    @property
    def session(self) -> SessionState | None:
        """The handshake era's state (`None` before `initialize`), read-only: HTTP seals it into a session id."""
        return self._session

    @property
    def client_capabilities(self) -> dict[str, Any]:
        """The capabilities the client declared at `initialize` (empty before; per request in 2026-07-28)."""
        return self._session.client_capabilities if self._session is not None else {}

    # -- the loop ------------------------------------------------------------------------------------

    async def run(self) -> None:
        """Serve until the peer ends its input, every call has answered and every reply is written."""
        running = _running.setdefault(self.server, set())
        running.add(self)
        try:
            async with anyio.create_task_group() as tg:
                self._tg = tg
                self._token = anyio.lowlevel.current_token()
                tg.start_soon(self._outbox.run)
                # The reader is a task of its own, so that the caller's frames are not resumed for every message.
                tg.start_soon(self._read)
        finally:
            running.discard(self)

    async def _read(self) -> None:
        outbox = self._outbox
        transport = self.transport
        decoded = routes(type(transport))  # it hands over the messages it decoded to route them
        receive = cast("RoutingTransport", transport).receive_message if decoded else transport.receive
        while True:
            if outbox._queue and outbox.full:  # a peer that does not read: stop reading until it does
                await outbox.wait_for_room()
            try:
                text = await receive()
            except anyio.EndOfStream:
                break
            except MessageError as exc:
                # A request too large whose id was read before the limit is answered with that id, so that its
                # caller fails at once. Bytes that are not UTF-8 are not JSON text: a parse error, id null (JSON-RPC).
                head = exc.head if exc.code == INVALID_REQUEST else {}
                request_id = head.get("id") if "method" in head and is_valid_id(head.get("id")) else None
                await self._send(error_response(request_id, exc.code, str(exc)), request_id, MessageKind.ERROR)
                continue
            try:
                message = text if decoded else decode(text)
            except ValueError as exc:
                await self._send(error_response(None, PARSE_ERROR, "Parse error", str(exc)))
                continue
            if type(message) is dict:
                await self._on_message(message)
            elif isinstance(message, list) and self._session is not None and self._session.version == _BATCH_VERSION:
                self._spawn(self._batch, message)
            else:
                reason = "batches are not supported by this protocol version" if isinstance(message, list) else None
                await self._send(error_response(None, INVALID_REQUEST, "Invalid request", "expected an object", reason))
        self._end_requests()
        await self._drain()
        await outbox.flush()
        assert self._tg is not None
        self._tg.cancel_scope.cancel()

    def _end_requests(self) -> None:
        """End of input: no response can come any more, so every request sent to the client fails now."""
        self._closed = True
        for waiting in self._waiting.values():
            waiting.error = ConnectionClosedError("the client's input ended before it answered")
            waiting.done.set()

    async def _drain(self) -> None:
        """At end of input, let running calls finish and answer (a client may close stdin and still read).

        Subscriptions end at once (each tells its client so, see `_listen`); calls get `server.shutdown_grace`
        seconds, then are cancelled. What is already in the outbox is written after this, however long the client
        takes to read it.
        """
        self._closing.set()
        with anyio.move_on_after(self.server.shutdown_grace):
            await self.wait_idle()
        for scope in self.in_flight.values():  # past the grace: cancelled, so they add nothing to the outbox
            scope.cancel()

    async def wait_idle(self) -> None:
        """Wait until no request is in flight (each has answered, or ended cancelled)."""
        while self.in_flight:
            self._idle = anyio.Event()
            await self._idle.wait()

    async def _send(
        self, message: dict[str, Any] | list[Any], related: Any = None, kind: MessageKind = MessageKind.MESSAGE
    ) -> None:
        await self._outbox.put(encode(message), related, kind)

    async def _notify(self, method: str, params: dict[str, Any] | None, related: Any = None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        await self._outbox.put(encode(message), related)

    async def _on_message(self, message: dict[str, Any]) -> None:
        request_id = message.get("id")
        method = message.get("method")
        # The common case, a well-formed request, checked inline; anything else goes through `check_message`.
        if not (
            (type(request_id) is int or type(request_id) is str)
            and type(method) is str
            and message.get("jsonrpc") == "2.0"
            and type(message.get("params", {})) is dict
        ):
            problem = check_message(message)
            if problem is not None:
                await self._send(problem)
            elif "method" not in message:
                self._on_response(message)
            elif "id" not in message:
                await self._on_notification(message)
            else:  # a valid request after all (params null, say)
                await self._on_request(message)
            return
        # `_on_request`, inlined for the common case: a call, admitted.
        in_flight = self.in_flight
        if (
            method in _LONG_RUNNING
            and request_id not in in_flight
            and len(in_flight) < self.server.max_concurrent_requests
        ):
            scope = self.in_flight[request_id] = anyio.CancelScope()
            assert self._tg is not None
            self._tg.start_soon(self._respond, message, scope)
            return
        await self._on_request(message)

    async def _on_request(self, message: dict[str, Any]) -> None:
        request_id = message["id"]
        if request_id in self.in_flight:  # any method: a second reply with that id would be ambiguous
            await self._send(_id_in_use(request_id))
        elif message["method"] not in _LONG_RUNNING:
            await self._respond(message, None)
        elif len(self.in_flight) >= self.server.max_concurrent_requests:
            await self._send(error_response(request_id, INTERNAL_ERROR, "Too many requests in flight"))
        else:
            scope = self.in_flight[request_id] = anyio.CancelScope()
            assert self._tg is not None
            self._tg.start_soon(self._respond, message, scope)

    async def answer(self, message: dict[str, Any]) -> tuple[str, MessageKind] | None:
        """Answer one well-formed request in the caller's task, without the connection's loop: the reply's text and
        kind (a result or an error), or None when it was cancelled.

        For a transport that knows the request sends nothing but its answer (HTTP's JSON replies to `tools/list`,
        or to a tool that cannot ask the client); the answer is the one `run` would write.
        """
        replies: list[str] = []
        kinds: list[MessageKind] = []
        await self._respond(message, None, replies, kinds)
        return (replies[0], kinds[0]) if replies else None

    def _spawn(self, func: Callable[..., Any], *args: Any) -> None:
        assert self._tg is not None
        self._tg.start_soon(func, *args)

    async def _respond(
        self,
        message: dict[str, Any],
        scope: anyio.CancelScope | None,
        batch: list[str] | None = None,
        kinds: list[MessageKind] | None = None,
    ) -> None:
        """Answer one request: find its era and handler, run it, and write (or, in a batch, collect) the reply.

        With a `scope`, the request is a call in flight (cancellable, counted): it counts until the outbox has its
        reply, so that calls whose replies wait for room (a client that does not read) stay bounded too.
        """
        request_id = message["id"]
        method: str = message["method"]
        text = None
        result: Any = None  # stays None when the call is cancelled (its scope swallows the cancellation)
        try:
            try:
                with scope if scope is not None else _UNSCOPED:
                    params: dict[str, Any] = message.get("params") or {}
                    handler, state = self._route(method, params)
                    result = await handler(request_id, params, state)
            except ProtocolError as exc:
                text = encode({"jsonrpc": "2.0", "id": request_id, "error": exc.to_error()})
            except Exception:
                logger.exception("internal error while handling %r", method)
                text = encode(error_response(request_id, INTERNAL_ERROR, "Internal error"))
            else:
                if type(result) is str:  # JSON text prepared ahead (tools/list)
                    text = f'{{"jsonrpc":"2.0","id":{encode(request_id)},"result":{result}}}'
                elif result is not None:  # None: cancelled, or a subscription that ended
                    try:
                        text = encode({"jsonrpc": "2.0", "id": request_id, "result": result})
                    except ValueError:  # e.g. a tool's text with a lone surrogate, which UTF-8 cannot carry
                        result = None  # the answer is an error
                        logger.exception("cannot encode the result of %r", method)
                        text = encode(
                            error_response(request_id, INTERNAL_ERROR, "Internal error: the result cannot be encoded")
                        )
            if text is None or (scope is not None and scope.cancel_called):
                return
            kind = MessageKind.ERROR if result is None else MessageKind.RESULT
            if batch is not None:  # a batch's reply, or `answer`'s (which takes its kind too)
                batch.append(text)
                (kinds if kinds is not None else []).append(kind)
            else:  # from the reader, `put`: it must not wait for the peer
                await (self._outbox.put if scope is None else self._outbox.send)(text, request_id, kind)
        finally:
            if scope is not None:
                self.in_flight.pop(request_id, None)
                if not self.in_flight:
                    self._idle.set()

    def _route(self, method: str, params: dict[str, Any]) -> tuple[Callable[..., Awaitable[Any]], Any]:
        """The handler of a request and the state it is served with: the era's method table, or the few methods
        outside both (`initialize`, and `ping` before it).

        Raises:
            ProtocolError: -32601 for a method the era lacks; -32602 for a request that names no era (2026-07-28,
                basic/index: a request missing the required _meta fields is malformed; the same code tells a
                handshake-era client it must initialize first, the lifecycle leaving the code open).
        """
        meta = params.get("_meta")
        if type(meta) is dict and VERSION_KEY in meta and method != "initialize":  # initialize is always legacy
            state: SessionState | None = self._modern_state(meta)
            table = self._modern_methods
        elif self._session is not None and method not in _OUTSIDE_SESSION:
            state = self._session
            table = self._handshake_methods
        elif method == "initialize":
            return self._initialize, None
        elif method == "ping" and self._session is None:  # the one request a client may send before initialize
            return self._ping, None
        else:
            raise ProtocolError(
                INVALID_PARAMS,
                f"Invalid params: params._meta is missing {VERSION_KEY!r}; send initialize (protocol versions up to "
                f"{HANDSHAKE_VERSIONS[0]}) or the {MODERN_VERSION} _meta fields with every request",
            )
        handler = table.get(method)
        if handler is None:
            raise ProtocolError(METHOD_NOT_FOUND, f"Method not found: {method}")
        return handler, state

    def _modern_state(self, meta: dict[str, Any]) -> SessionState:
        """Check a 2026-07-28 request's `_meta` and describe the request's client.

        Raises:
            ProtocolError: -32602 for a missing or malformed required field or an unknown log level, -32022 for a
                well-formed version this server does not speak (the order the spec's basic/index and the SDK use).
        """
        requested = meta.get(VERSION_KEY)
        if not isinstance(requested, str):
            raise ProtocolError(INVALID_PARAMS, f"Invalid params: _meta[{VERSION_KEY!r}] must be a string")
        capabilities = meta.get(CAPABILITIES_KEY)
        if not isinstance(capabilities, dict):
            raise ProtocolError(INVALID_PARAMS, f"Invalid params: _meta[{CAPABILITIES_KEY!r}] is required (an object)")
        if requested != MODERN_VERSION:
            raise ProtocolError(
                UNSUPPORTED_PROTOCOL_VERSION,
                f"Unsupported protocol version: {requested}",
                {"supported": [MODERN_VERSION], "requested": requested},
            )
        level = meta.get(LOG_LEVEL_KEY)
        if level is not None and level not in LOG_LEVELS:
            raise ProtocolError(INVALID_PARAMS, f"Invalid params: unknown log level {level!r}")
        info = meta.get(CLIENT_INFO_KEY)
        return SessionState(MODERN_VERSION, capabilities, info if isinstance(info, dict) else None, True, level)

    async def _batch(self, messages: list[Any]) -> None:
        if not messages:
            await self._send(error_response(None, INVALID_REQUEST, "Invalid request", "empty batch"))
            return
        replies: list[str] = []

        async def one(message: Any) -> None:
            if not isinstance(message, dict):
                replies.append(encode(error_response(None, INVALID_REQUEST, "Invalid request", "expected an object")))
                return
            problem = check_message(message)
            if problem is not None:
                replies.append(encode(problem))
            elif "method" not in message:
                self._on_response(message)
            elif "id" not in message:
                await self._on_notification(message)
            elif message["id"] in self.in_flight:
                replies.append(encode(_id_in_use(message["id"])))
            elif message["method"] not in _LONG_RUNNING:
                await self._respond(message, None, replies)
            elif len(self.in_flight) >= self.server.max_concurrent_requests:  # counted, as outside a batch
                replies.append(encode(error_response(message["id"], INTERNAL_ERROR, "Too many requests in flight")))
            else:
                scope = self.in_flight[message["id"]] = anyio.CancelScope()
                await self._respond(message, scope, replies)

        async with anyio.create_task_group() as tg:
            for message in messages:
                tg.start_soon(one, message)
        if replies:
            await self._outbox.put(f"[{','.join(replies)}]", None)

    # -- notifications and responses from the client -------------------------------------------------

    async def _on_notification(self, message: dict[str, Any]) -> None:
        method = message["method"]
        params = message.get("params")
        if not isinstance(params, dict):  # a malformed notification gets no answer, and must not end the loop
            params = {}
        if method == "notifications/initialized":
            self._initialized = True
            if self._session is not None:
                self._session = replace(self._session, initialized=True)
        elif method == "notifications/cancelled":
            request_id = params.get("requestId")
            scope = self.in_flight.get(request_id) if is_valid_id(request_id) else None
            if scope is not None:
                scope.cancel()
                # A cancelled subscription gets nothing more from now on, not from when its task unwinds.
                self.listeners.discard(request_id)
        # Anything else (roots/list_changed, progress for requests we never sent...) needs no action.

    def _on_response(self, message: dict[str, Any]) -> None:
        request_id = message.get("id")
        # The server's ids are ints, or strings a transport chose (never floats, lists or objects: unhashable).
        waiting = self._waiting.get(request_id) if type(request_id) is int or type(request_id) is str else None
        if waiting is None:  # not ours, or it came after the request timed out or was cancelled
            logger.debug("skipped a response to no request in flight: id %r", message.get("id"))
            return
        error = message.get("error")
        if "error" in message:
            if not isinstance(error, dict):
                error = {}
            code = error.get("code")
            waiting.error = ProtocolError(
                code if type(code) is int else INTERNAL_ERROR, str(error.get("message", "")), error.get("data")
            )
        else:
            waiting.result = message.get("result")
        waiting.done.set()

    async def flush(self) -> None:
        """Wait until the transport has taken every message sent so far (HTTP: before a response closes early)."""
        await self._outbox.flush()

    def tools_changed(self) -> None:
        """Called by the server when its tool list changes."""
        if self._tg is None:
            return
        if threading.get_ident() != self._thread:  # a sync tool or another thread changed the list: to the loop
            anyio.from_thread.run_sync(self.tools_changed, token=self._token)
            return
        if self._session is not None and self._initialized:
            self._tg.start_soon(self._notify, "notifications/tools/list_changed", None)
        for subscription_id in self.listeners:
            params = {"_meta": {SUBSCRIPTION_KEY: subscription_id}}
            self._tg.start_soon(self._notify, "notifications/tools/list_changed", params, subscription_id)

    # -- requests to the client ----------------------------------------------------------------------

    async def request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        related: Any = None,
        timeout: float | None = None,  # noqa: ASYNC109 - the contract's signature; the wait is `fail_after(timeout)`
    ) -> Any:
        """Send the client a request and return its result.

        Args:
            method: The method, e.g. `ping` (later `elicitation/create`, `sampling/createMessage`).
            params: Its params.
            related: The id of the client request this one is made while serving (`None`: none), for transports
                that route per request.
            timeout: Seconds to wait for the response; `None` waits as long as the connection lives.

        Raises:
            ProtocolError: the client answered with an error.
            ConnectionClosedError: the client's input ended before it answered.
            TimeoutError: no response came in time (the client is told, with `notifications/cancelled`).
        """
        if self._closed:
            raise ConnectionClosedError("the client's input has ended")
        request_id = next(self._ids)
        waiting = self._waiting[request_id] = _Waiting()
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        try:
            await self._send(message, related)
            with anyio.fail_after(timeout):
                await waiting.done.wait()
        except BaseException:
            if not waiting.done.is_set():  # cancelled or timed out: the client may stop working on it (basic/utilities)
                with anyio.CancelScope(shield=True):
                    reason = "timed out" if timeout is not None and not self._closed else "cancelled"
                    await self._notify("notifications/cancelled", {"requestId": request_id, "reason": reason}, related)
            raise
        finally:
            del self._waiting[request_id]
        if waiting.error is not None:
            raise waiting.error
        return waiting.result

    async def ping(self, *, related: Any = None, timeout: float | None = None) -> None:  # noqa: ASYNC109 - as request
        """Ping the client (handshake era) and wait for its answer.

        Raises:
            ProtocolError: the client answered with an error.
            ConnectionClosedError: the client's input ended first.
            TimeoutError: no answer within `timeout` seconds.
        """
        await self.request("ping", related=related, timeout=timeout)

    # -- the methods ---------------------------------------------------------------------------------

    async def _initialize(self, request_id: Any, params: dict[str, Any], state: None) -> dict[str, Any]:
        requested = params.get("protocolVersion")
        if not isinstance(requested, str):
            raise ProtocolError(INVALID_PARAMS, "Invalid params: protocolVersion must be a string")
        if self._session is not None:
            raise ProtocolError(INVALID_REQUEST, "Invalid request: the connection is already initialized")
        version = negotiate(requested)
        info = params.get("clientInfo")
        capabilities = params.get("capabilities")
        self._session = SessionState(
            version,
            capabilities if isinstance(capabilities, dict) else {},
            info if isinstance(info, dict) else None,
            self._initialized,
        )
        self._client_info = _client_info(info)
        result: dict[str, Any] = {
            "protocolVersion": version,
            "capabilities": CAPABILITIES,
            "serverInfo": server_info(self.server, version),
        }
        if self.server.instructions is not None:
            result["instructions"] = self.server.instructions
        return result

    async def _ping(self, request_id: Any, params: dict[str, Any], state: SessionState | None) -> dict[str, Any]:
        return {}

    async def _set_level(self, request_id: Any, params: dict[str, Any], state: SessionState) -> dict[str, Any]:
        level = params.get("level")
        if level not in LOG_LEVELS:
            raise ProtocolError(INVALID_PARAMS, f"Invalid params: level must be one of {', '.join(LOG_LEVELS)}")
        self._session = replace(state, log_level=level)
        return {}

    async def _discover(self, request_id: Any, params: dict[str, Any], state: SessionState) -> dict[str, Any]:
        server = self.server
        result: dict[str, Any] = {
            # Only versions a client may name in _meta: the handshake revisions are reached through initialize.
            "supportedVersions": [MODERN_VERSION],
            "capabilities": CAPABILITIES,
            "ttlMs": server.ttl_ms,
            "cacheScope": server.cache_scope,
            "resultType": "complete",
            "_meta": {SERVER_INFO_KEY: self._modern_info},
        }
        if server.instructions is not None:
            result["instructions"] = server.instructions
        return result

    async def _tools_list(self, request_id: Any, params: dict[str, Any], state: SessionState) -> str:
        """The `tools/list` result as JSON text, spliced from each tool's prepared JSON (nothing re-encoded)."""
        server = self.server
        payloads = tool_payloads(server, state.version)
        cursor = params.get("cursor")
        start = _decode_cursor(cursor, len(payloads)) if cursor is not None else 0
        size = server.page_size
        end = len(payloads) if size is None else min(start + size, len(payloads))
        parts = ['{"tools":[', ",".join(payloads[start:end]), "]"]
        if end < len(payloads):
            parts.append(f',"nextCursor":"{_encode_cursor(end)}"')
        if state.version == MODERN_VERSION:
            parts.append(f',"ttlMs":{server.ttl_ms},"cacheScope":"{server.cache_scope}"')
            parts.append(f',"resultType":"complete","_meta":{self._modern_meta}')
        parts.append("}")
        return "".join(parts)

    async def _tools_call(self, request_id: Any, params: dict[str, Any], state: SessionState) -> dict[str, Any]:
        """`tools/call`: the result's wire object for the request's revision.

        Raises:
            ProtocolError: -32602 when params are malformed or the tool is unknown (failures of the tool itself, bad
                arguments included, are results with `isError: true`).
        """
        server = self.server
        name = params.get("name")
        if not isinstance(name, str):
            raise ProtocolError(INVALID_PARAMS, "Invalid params: name must be a string")
        tool = server.tools.get(name)
        if tool is None:
            # A typo is the usual cause, as for arguments (`_tool`); difflib loads on this error path only.
            import difflib

            close = difflib.get_close_matches(name, list(server.tools), n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise ProtocolError(INVALID_PARAMS, f"Unknown tool: {name}{hint}")
        arguments = params.get("arguments")
        if arguments is not None and not isinstance(arguments, dict):
            raise ProtocolError(INVALID_PARAMS, "Invalid params: arguments must be an object")
        raw_arguments = arguments
        if server.schema_profile is not None:
            arguments = tool.arguments_from(server.schema_profile, arguments)
        # A tool that may ask the client (a Context, or confirm=) gets an Asker; a 2026-07-28 retry's requestState
        # is verified here, before the tool runs. Nothing of this for the others (docs/human-in-the-loop.md).
        asker = self._asker(request_id, params, state, name, raw_arguments) if tool.may_ask else None
        # Made only if the tool takes a Context: most do not, and they save its cost.
        context = functools.partial(self._context, request_id, params, state, asker)
        timeout = server.tool_timeout
        try:
            call = call_tool(
                tool,
                arguments,
                context,
                state.version,
                server.show_error_details,
                strict_arguments=server.strict_arguments,
            )
            if timeout is None:
                wire = await call
            else:
                with anyio.move_on_after(timeout) as scope:
                    wire = await call
                if scope.cancelled_caught:
                    wire = {"content": [{"type": "text", "text": f"tool {name!r} timed out after {timeout:g} s"}]}
                    wire["isError"] = True
        except Suspend:  # 2026-07-28: a question without an answer yet ends this round
            wire = {}
        except URLElicitationRequired as exc:  # also from a tool without a Context
            asker = asker or self._asker(request_id, params, state, name, raw_arguments)
            wire = url_required(asker, exc)
        if asker is not None:
            wire = finish_asking(
                asker,
                wire,
                tool=name,
                sealer=server.sealer,
                bind=bind_for(server.name, name, raw_arguments),
                ttl=server.request_state_ttl,
            )
            if wire.get("resultType") == "input_required":
                wire["_meta"] = {SERVER_INFO_KEY: self._modern_info}
                return wire
        if state.version == MODERN_VERSION:
            wire["resultType"] = "complete"
            wire["_meta"] = {**(wire.get("_meta") or {}), SERVER_INFO_KEY: self._modern_info}
        return wire

    def _asker(self, request_id: Any, params: dict[str, Any], state: SessionState, name: str, arguments: Any) -> Asker:
        """How this call's tool asks the client: server-to-client requests, or (2026-07-28) input requests."""
        server = self.server
        return start_asking(
            params,
            version=state.version,
            capabilities=state.client_capabilities,
            send=functools.partial(self._ask, related=request_id),
            sealer=server.sealer,
            bind=bind_for(server.name, name, arguments),
            max_size=server.max_message_size,
            question_timeout=server.client_request_timeout,
            confirm_fallback=server.confirm_fallback,
            on_url=functools.partial(server.track_elicitation, connection=self),
        )

    async def _ask(self, method: str, params: dict[str, Any], wait: float | None, *, related: Any) -> Any:
        """A question to the client (elicitation, sampling): its result; an error answer fails the tool readably.

        Raises:
            ClientRequestError: the client answered with an error, or its input ended first.
            TimeoutError: no answer within `wait` seconds.
        """
        try:
            return await self.request(method, params, related=related, timeout=wait)
        except ConnectionClosedError:  # a ToolError: the call fails readably, and it is no bug of the tool's
            raise ClientRequestError(0, "the client's input ended before it answered") from None
        except ProtocolError as exc:
            raise ClientRequestError(exc.code, exc.message) from None

    def elicitation_complete(self, elicitation_id: str) -> None:
        """Send `notifications/elicitation/complete` (from any thread): a URL-mode elicitation's flow is done."""
        if self._tg is None or self._closed:
            return
        if threading.get_ident() != self._thread:
            anyio.from_thread.run_sync(self.elicitation_complete, elicitation_id, token=self._token)
            return
        self._tg.start_soon(self._notify, "notifications/elicitation/complete", {"elicitationId": elicitation_id})

    def _context(
        self, request_id: Any, params: dict[str, Any], state: SessionState, asker: Asker | None = None
    ) -> Context:
        meta = params.get("_meta")
        token = meta.get("progressToken") if isinstance(meta, dict) else None
        if state is self._session or state.version != MODERN_VERSION:
            client_info = self._client_info

            def log_level() -> LogLevel | None:  # logging/setLevel applies to calls already running
                return self._session.log_level if self._session is not None else None

        else:
            client_info = _client_info(state.client_info)
            level = state.log_level

            def log_level() -> LogLevel | None:
                return level

        return Context(
            request_id=request_id,
            client_info=client_info,
            protocol_version=state.version,
            progress_token=token if is_valid_id(token) else None,
            log_level=log_level,
            notify=functools.partial(self._notify, related=request_id),
            show_error_details=self.server.show_error_details,
            lifespan_context=self.server.lifespan_context,
            asker=asker,
        )

    async def _listen(self, request_id: Any, params: dict[str, Any], state: SessionState) -> None:
        wanted = params.get("notifications")
        if not isinstance(wanted, dict):
            raise ProtocolError(INVALID_PARAMS, "Invalid params: notifications must be an object")
        agreed = {"toolsListChanged": True} if wanted.get("toolsListChanged") is True else {}
        try:
            # Registered before the acknowledgement is written, so that no change between the two is missed; the
            # acknowledgement still goes first, as it enters the (FIFO) outbox before any change notice can.
            if agreed:
                self.listeners.add(request_id)
            await self._notify(
                "notifications/subscriptions/acknowledged",
                {"notifications": agreed, "_meta": {SUBSCRIPTION_KEY: request_id}},
                request_id,
            )
            # The stream stays open until the client cancels the request (this task is then cancelled) or its
            # input ends. Of the two endings the spec documents, a `SubscriptionsListenResult` or
            # `notifications/cancelled` for the listen request's id, end of input gets the notification: on stdio
            # the schema gives it to servers for exactly this (CancelledNotification), and the stream did not wind
            # down, it was cut short because the client went away (docs/protocol.md).
            await self._closing.wait()
        finally:
            self.listeners.discard(request_id)
        await self._notify(
            "notifications/cancelled",
            {"requestId": request_id, "reason": "the server's input ended", "_meta": {SUBSCRIPTION_KEY: request_id}},
            request_id,
        )


def _encode_cursor(offset: int) -> str:
    return base64.urlsafe_b64encode(f"toolkit:{offset}".encode()).decode()


def _decode_cursor(cursor: Any, total: int) -> int:
    try:
        text = base64.urlsafe_b64decode(cursor.encode()).decode()
        prefix, _, number = text.partition(":")
        offset = int(number)
        if prefix != "toolkit" or not 0 <= offset <= total:
            raise ValueError(cursor)
    except (AttributeError, ValueError, binascii.Error, UnicodeError):
        raise ProtocolError(INVALID_PARAMS, "Invalid params: invalid cursor") from None
    return offset
