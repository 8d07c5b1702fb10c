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

import contextlib
import contextvars
import functools
import logging
import threading
import time
from collections import deque
from collections.abc import Awaitable, Callable, Iterator, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any, cast

import anyio
import anyio.abc
import anyio.from_thread
import anyio.lowlevel
import pydantic

from toolkit._asking.asking import AskedCall, Asker
from toolkit._asking.mrtr import Suspend
from toolkit._definition.middleware import Request
from toolkit._definition.tool import CallSettings, call_tool
from toolkit._definition.ui import speaks_apps
from toolkit._errors import (
    ConnectionClosedError,
    MessageError,
    ProtocolError,
    URLElicitationRequired,
)
from toolkit._identity import current_identity
from toolkit._matcher import RequestMatcher
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
    shutting_down,
)
from toolkit._protocol.meta import (
    CAPABILITIES_KEY,
    CLIENT_INFO_KEY,
    LOG_LEVEL_KEY,
    SERVER_INFO_KEY,
    SUBSCRIPTION_KEY,
    VERSION_KEY,
)
from toolkit._protocol.types import HANDSHAKE_VERSIONS, MODERN_VERSION, Implementation
from toolkit._transports.base import MessageKind, RoutingTransport

from . import methods, middleware
from .context import Context
from .session import LOG_LEVELS, LogLevel, SessionState
from .telemetry import SERVER_SESSION_DURATION, Served, network_of, sender_attributes

if TYPE_CHECKING:
    from toolkit._definition.tool import Tool
    from toolkit._transports.base import Transport

    from .registry import Registry

__all__ = ["Connection"]

logger = logging.getLogger("toolkit")
ERROR = MessageKind.ERROR  # the kind of a batch's refusals (a batch's reply goes out whole, its kinds unread)

_LONG_RUNNING = frozenset({"tools/call", "subscriptions/listen", "tasks/result"})  # run in their own task, cancellable
_BATCH_VERSION = "2025-03-26"  # the only revision with JSON-RPC batches
_UNSCOPED = contextlib.nullcontext()
# Where the notifications of a request answered in its caller's task go (`Connection.answer`'s `sink`): set for that
# task only, so that one connection answers many requests at once, each on its own response.
_SINK: contextvars.ContextVar[Callable[[str], Awaitable[None]] | None] = contextvars.ContextVar(
    "toolkit_answer_sink", default=None
)
_OUTSIDE_SESSION = frozenset({"initialize", "server/discover"})  # never served from a handshake session

Handler = Callable[[Any, dict[str, Any], "SessionState"], Awaitable[Any]]


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


class Connection:
    """The state of one client connection, the dispatch of its messages, and the requests sent to its client.

    Args:
        server: The server whose tools this connection serves (its `Registry`: the connection never sees the facade).
        transport: Moves the messages.
        session: Start in the handshake era's operating state (a session negotiated elsewhere, e.g. by another
            HTTP worker); `None` waits for `initialize` or 2026-07-28 requests.
        request_ids: The ids of the requests the server sends the client (default 1, 2, 3...): a transport on which
            answers arrive apart from the connection (HTTP: each in a POST of its own) gives ids it can route back.
    """

    def __init__(
        self,
        server: Registry,
        transport: Transport,
        *,
        session: SessionState | None = None,
        request_ids: Iterator[int | str] | None = None,
    ) -> None:
        self.server = server
        server.served = True  # from now on the tools change by new views (`Registry.put_tool`)
        self.transport = transport
        self._session = session
        self._initialized = session is not None and session.initialized  # may come before initialize
        self._client_info = _client_info(session.client_info) if session is not None else None
        self._thread = threading.get_ident()
        self._token: anyio.lowlevel.EventLoopToken | None = None
        self.in_flight: dict[Any, anyio.CancelScope] = {}
        self.listeners: set[Any] = set()
        self._outbox = _Outbox(transport, server.max_queued_messages, server.max_queued_bytes)
        self._modern_info = server.server_info(MODERN_VERSION)
        self._modern_meta = encode({SERVER_INFO_KEY: self._modern_info})
        self._idle = anyio.Event()
        self._closing = anyio.Event()  # set at end of input: open subscriptions then end themselves
        self._closed = False  # input has ended: requests to the client can get no answer
        self._stopping = False  # the server is stopping (`stop`): a new call is answered "Server shutting down"
        self._tg: anyio.abc.TaskGroup | None = None
        self._session_started: float | None = None  # when `initialize` made a session here (for its duration)
        # The requests this server sends (the client's ids are its own); a transport that routes answers gives ids of
        # its own, unique beyond this connection.
        self._requests = RequestMatcher("client", request_ids)
        # ping and logging/setLevel exist only in the handshake era; discover and listen only in 2026-07-28.
        # With tool search (`Server(tool_search=...)`), tools/list and tools/call go through the search first.
        searched = self.server.search is not None
        tools_call = self._searched_call if searched else self._tools_call
        tools_list = self._searched_list if searched else self._tools_list
        self._handshake_methods: dict[str, Handler] = {
            "tools/call": tools_call,
            "tools/list": tools_list,
            "ping": self._ping,
            "logging/setLevel": self._set_level,
            "tasks/get": self._tasks_get,
            "tasks/result": self._tasks_result,
            "tasks/list": self._tasks_list,
            "tasks/cancel": self._tasks_cancel,
            "resources/list": self._resources_list,
            "resources/read": self._resources_read,
        }
        self._modern_methods: dict[str, Handler] = {
            "tools/call": tools_call,
            "tools/list": tools_list,
            "server/discover": self._discover,
            "subscriptions/listen": self._listen,
            "tasks/get": self._tasks_get,
            "tasks/update": self._tasks_update,
            "tasks/cancel": self._tasks_cancel,
            "resources/list": self._resources_list,
            "resources/read": self._resources_read,
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
        running = self.server.connections
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
            telemetry = self.server.telemetry
            if telemetry is not None and self._session_started is not None and self._session is not None:
                seconds = time.perf_counter() - self._session_started
                telemetry.session_ended(
                    SERVER_SESSION_DURATION, seconds, self._session.version, network_of(self.transport)
                )

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
        await self.drain()
        await outbox.flush()
        assert self._tg is not None
        self._tg.cancel_scope.cancel()

    def _end_requests(self) -> None:
        """End of input: no response can come any more, so every request sent to the client fails now."""
        self._closed = True
        self._requests.close(ConnectionClosedError("the client's input has ended"))

    def stop(self) -> None:
        """The server is stopping (SIGTERM under `Server.run`), and the connection still reads: requests that only
        read (`tools/list`, `ping`, `server/discover`, the task reads) are still answered, but a new call
        (`tools/call`, `subscriptions/listen`, `tasks/result`) is answered at once with "Server shutting down", and
        subscriptions end now. Then `drain` the calls in flight, and end the input (a client that closes it first
        ends the connection as usual)."""
        self._stopping = True
        self._closing.set()

    async def drain(self) -> None:
        """At end of input, or once stopped (`stop`), let running calls finish and answer (a client may close stdin
        and still read).

        Subscriptions end at once (each tells its client so, see `_listen`); calls get `server.shutdown_grace`
        seconds, then are cancelled and answered with "Server shutting down", so that no client waits for a reply
        that cannot come. What is already in the outbox is written after this, however long the client takes to
        read it.
        """
        self._closing.set()
        with anyio.move_on_after(self.server.shutdown_grace):
            await self.wait_idle()
        for request_id, scope in list(self.in_flight.items()):
            if not scope.cancel_called:  # a call the client cancelled gets no answer, and each call one answer
                scope.cancel()  # so that it adds nothing to the outbox (`_respond` writes no cancelled reply)
                await self._send(shutting_down(request_id), request_id, MessageKind.ERROR)

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
        await self._outbox.put(_notification(method, params), related)

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
        # `_on_request`, inlined for the common case: a call that `_admit` would admit (the hop figure counts a call).
        in_flight = self.in_flight
        if (
            method in _LONG_RUNNING
            and request_id not in in_flight
            and len(in_flight) < self.server.max_concurrent_requests
            and not self._stopping
        ):
            scope = self.in_flight[request_id] = anyio.CancelScope()
            assert self._tg is not None
            self._tg.start_soon(self._respond, message, scope)
            return
        await self._on_request(message)

    def _admit(self, request_id: Any, method: str) -> anyio.CancelScope | dict[str, Any] | None:
        """The admission rule: the error response of a request refused, the counted scope of a call admitted in
        flight (`tools/call`, `subscriptions/listen`), or None for a request answered at once."""
        in_flight = self.in_flight
        if request_id in in_flight:  # any method: a second reply with that id would be ambiguous
            return _id_in_use(request_id)
        if method not in _LONG_RUNNING:
            return None
        if self._stopping:
            return shutting_down(request_id)
        if len(in_flight) >= self.server.max_concurrent_requests:
            return error_response(request_id, INTERNAL_ERROR, "Too many requests in flight")
        scope = in_flight[request_id] = anyio.CancelScope()
        return scope

    async def _on_request(self, message: dict[str, Any]) -> None:
        admitted = self._admit(message["id"], message["method"])
        if isinstance(admitted, dict):  # the refusal answers that request: a routing transport puts it on its response
            await self._send(admitted, message["id"], MessageKind.ERROR)
        elif admitted is None:
            await self._respond(message, None)
        else:
            self._spawn(self._respond, message, admitted)

    async def answer(
        self,
        message: dict[str, Any],
        sink: Callable[[str], Awaitable[None]] | None = None,
        session: SessionState | None = None,
    ) -> tuple[str, MessageKind] | None:
        """Answer one well-formed request in the caller's task, without the connection's loop: the reply's text and
        kind (a result or an error), or None when it was cancelled.

        For a transport that knows the request sends nothing but its answer (HTTP's JSON replies to `tools/list`,
        or to a tool that cannot ask the client), or nothing but notifications before it, handed to `sink` (a
        2026-07-28 call: its questions are results, not requests); the answer is the one `run` would write.
        `session`: the 2025-11-25 session it belongs to, when not this connection's (one connection answers the
        requests of many sessions: it keeps no request's state).
        """
        replies: list[tuple[str, MessageKind]] = []
        token = _SINK.set(sink)
        try:
            await self._respond(message, None, replies, session)
        finally:
            _SINK.reset(token)
        return replies[0] if replies else None

    def _spawn(self, func: Callable[..., Any], *args: Any) -> None:
        assert self._tg is not None
        self._tg.start_soon(func, *args)

    async def _respond(
        self,
        message: dict[str, Any],
        scope: anyio.CancelScope | None,
        collect: list[tuple[str, MessageKind]] | None = None,
        session: SessionState | None = None,
    ) -> None:
        """Answer one request: find its era and handler, run it, and write (or, in a batch, collect) the reply. With
        a `scope`, a call in flight (cancellable, counted until the outbox has its reply: calls whose replies wait
        for room, from a client that does not read, stay bounded too)."""
        request_id, method, text = message["id"], message["method"], None
        result: Any = None  # stays None when the call is cancelled (its scope swallows the cancellation)
        # OpenTelemetry's SERVER span, outermost around the handling (`telemetry.py`); None when it is off.
        served = self._served(message, session) if self.server.telemetry is not None else None
        try:
            try:
                with scope if scope is not None else _UNSCOPED:
                    params: dict[str, Any] = message.get("params") or {}
                    handler, state = self._route(method, params, session or self._session)
                    result = await (
                        handler(request_id, params, state)
                        if not self.server.middleware
                        else middleware.run_method(self.server, handler, message, state)
                    )
            except ProtocolError as exc:
                text = encode({"jsonrpc": "2.0", "id": request_id, "error": exc.to_error()})
            except Exception:
                logger.exception("internal error while handling %r", method)
                text = encode(error_response(request_id, INTERNAL_ERROR, "Internal error"))
            else:
                # None: cancelled, or a subscription that ended; a str: JSON text prepared ahead (tools/list).
                try:
                    text = (
                        None
                        if result is None
                        else f'{{"jsonrpc":"2.0","id":{encode(request_id)},"result":{result}}}'
                        if type(result) is str
                        else encode({"jsonrpc": "2.0", "id": request_id, "result": result})
                    )
                except ValueError:  # e.g. a tool's text with a lone surrogate, which UTF-8 cannot carry
                    result = None  # the answer is an error
                    logger.exception("cannot encode the result of %r", method)
                    text = encode(
                        error_response(request_id, INTERNAL_ERROR, "Internal error: the result cannot be encoded")
                    )
            if text is None or (scope is not None and scope.cancel_called):
                return
            kind = MessageKind.ERROR if result is None else MessageKind.RESULT
            if collect is not None:  # a batch's reply, or `answer`'s
                collect.append((text, kind))
            else:  # from the reader, `put`: it must not wait for the peer
                await (self._outbox.put if scope is None else self._outbox.send)(text, request_id, kind)
        finally:
            if served is not None:
                served.end(result, text)
            if scope is not None:
                self.in_flight.pop(request_id, None)
                if not self.in_flight:
                    self._idle.set()

    def _served(self, message: dict[str, Any], session: SessionState | None = None) -> Served:
        """Start the SERVER span of a request or notification (tracing is on: `server.telemetry` is set)."""
        telemetry = self.server.telemetry
        assert telemetry is not None
        state = session or self._session
        return telemetry.serve(message, state.version if state is not None else None, network_of(self.transport))

    def _route(
        self, method: str, params: dict[str, Any], session: SessionState | None
    ) -> tuple[Callable[..., Awaitable[Any]], Any]:
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
        elif session is not None and method not in _OUTSIDE_SESSION:
            state = session
            table = self._handshake_methods
        elif method == "initialize":
            return self._initialize, None
        elif method == "ping" and session is None:  # the one request a client may send before initialize
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
        replies: list[tuple[str, MessageKind]] = []

        async def one(message: Any) -> None:
            if not isinstance(message, dict):
                replies.append(
                    (encode(error_response(None, INVALID_REQUEST, "Invalid request", "expected an object")), ERROR)
                )
                return
            problem = check_message(message)
            if problem is not None:
                replies.append((encode(problem), ERROR))
            elif "method" not in message:
                self._on_response(message)
            elif "id" not in message:
                await self._on_notification(message)
            else:
                admitted = self._admit(message["id"], message["method"])  # counted, as outside a batch
                if isinstance(admitted, dict):
                    replies.append((encode(admitted), ERROR))
                else:
                    await self._respond(message, admitted, replies)

        async with anyio.create_task_group() as tg:
            for message in messages:
                tg.start_soon(one, message)
        if replies:
            await self._outbox.put(f"[{','.join(text for text, _ in replies)}]", None)

    # -- notifications and responses from the client -------------------------------------------------

    async def _on_notification(self, message: dict[str, Any]) -> None:
        if self.server.telemetry is not None:  # its SERVER span (the handling is instant: nothing runs inside it)
            state = self._session
            self.server.telemetry.notified(message, state.version if state else None, network_of(self.transport))
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
        if not self._requests.resolve(message):  # not ours, or it came after the request timed out or was cancelled
            logger.debug("skipped a response to no request in flight: id %r", message.get("id"))

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
        send = functools.partial(self._send, related=related)
        telemetry = self.server.telemetry
        if telemetry is None:
            return await self._requests.request(method, params, send, timeout=timeout)
        # A question to the client: a CLIENT span of the call's trace, its context in the request's `_meta`.
        attributes = sender_attributes(self._session, network_of(self.transport))
        with telemetry.sending(method, params or {}, attributes) as sending:
            sending.result = await self._requests.request(
                method, sending.params, sending.stamped(send), timeout=timeout
            )
        return sending.result

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
        self._session, result = methods.initialize(self.server, params, self._session, self._initialized)
        self._session_started = time.perf_counter()  # mcp.server.session.duration starts here
        self._client_info = _client_info(params.get("clientInfo"))
        return result

    async def _ping(self, request_id: Any, params: dict[str, Any], state: SessionState | None) -> dict[str, Any]:
        return {}

    async def _set_level(self, request_id: Any, params: dict[str, Any], state: SessionState) -> dict[str, Any]:
        self._session = methods.set_level(params, state)
        return {}

    async def _discover(self, request_id: Any, params: dict[str, Any], state: SessionState) -> dict[str, Any]:
        return methods.discover(self.server, self._modern_info, state)

    async def _tools_list(self, request_id: Any, params: dict[str, Any], state: SessionState) -> str:
        server = self.server
        apps = speaks_apps(state.client_capabilities)  # app-only tools are listed to MCP Apps hosts only
        if server.tool_filter is None:
            payloads = server.tool_payloads(state.version, apps)
            return methods.tools_page(server, params, state.version, self._modern_meta, payloads)
        request = middleware.tools_request("tools/list", request_id, params, state)
        shown = middleware.filtered_payloads(server, request, state.version, apps)
        return methods.tools_page(server, params, state.version, self._modern_meta, shown)

    async def _resources_list(self, request_id: Any, params: dict[str, Any], state: SessionState) -> str:
        shown = self._shown_pages("resources/list", request_id, params, state)
        return methods.resources_page(self.server, params, state.version, self._modern_meta, shown)

    async def _resources_read(self, request_id: Any, params: dict[str, Any], state: SessionState) -> dict[str, Any]:
        shown = self._shown_pages("resources/read", request_id, params, state)
        return methods.read_resource(self.server, params, state.version, self._modern_info, shown)

    def _shown_pages(
        self, method: str, request_id: Any, params: dict[str, Any], state: SessionState
    ) -> set[str] | None:
        """The pages of the tools a `tool_filter` shows this caller (None without a filter: every page): a hidden
        tool's page is as unknown to the caller as the tool."""
        if self.server.tool_filter is None:
            return None
        request = middleware.tools_request(method, request_id, params, state)
        shown = middleware.shown_tools(self.server, request, speaks_apps(state.client_capabilities))
        return {tool.ui.uri for tool in shown.values() if tool.ui is not None}

    async def _tools_call(self, request_id: Any, params: dict[str, Any], state: SessionState) -> dict[str, Any]:
        """`tools/call`: the result's wire object for the request's revision.

        Raises:
            ProtocolError: -32602 when params are malformed or the tool is unknown (failures of the tool itself, bad
                arguments included, are results with `isError: true`).
        """
        server = self.server
        name = params.get("name")
        tool = server.tools.get(name) if type(name) is str else None
        # A tool hidden from this caller is unknown to it: by the tool_filter, or one only an MCP App may call.
        if tool is None or server.tool_filter is not None or tool.app_only:
            tool = self._shown(tool, name, request_id, params, state)
        assert isinstance(name, str)  # found by it
        arguments = params.get("arguments")
        if arguments is not None and not isinstance(arguments, dict):
            raise ProtocolError(INVALID_PARAMS, "Invalid params: arguments must be an object")
        profile = server.schema_profile
        arguments = tool.arguments_from(profile, arguments) if profile is not None else arguments
        # A task now, or (2026-07-28, a tool that calls `ctx.begin_task()`) once its questions before are answered.
        task = server.tasks.wanted(tool, params, state) if tool.task is not None or "task" in params else None
        if task == "now":
            return await server.tasks.create(tool, arguments, params, state)
        # A tool that may ask the client (a Context, or confirm=) gets its asking started (a 2026-07-28 retry's
        # requestState is verified here, before the tool runs); not the others (human-in-the-loop.md), nor a Context
        # its source shows is only told (`Tool.asks`), unless tool middleware is handed it or the call is a retry.
        handed = tool.middleware or server.tool_middleware
        asks = tool.may_ask and (tool.asks or bool(handed) or "inputResponses" in params or "requestState" in params)
        asking = self._start_asking(request_id, params, state, name, task) if asks else None
        context = functools.partial(self._context, request_id, params, state, asking)  # made only if the tool takes one
        try:
            settings = CallSettings(state.version, server.show_error_details, server.strict_arguments)
            if tool.wrapped or server.wraps_tools:  # middleware, a timeout, a result size limit
                request = Request(
                    "tools/call",
                    params,
                    state.version,
                    request_id,
                    current_identity.get(),
                    tool.definition,
                    dict(arguments) if arguments is not None else None,
                    context() if tool.may_ask else None,
                )
                wire = await middleware.run_tool(server, tool, request, settings)
            else:
                wire = await call_tool(tool, arguments, context, settings)
        except Suspend:  # 2026-07-28: a question without an answer yet ends this round
            wire = {}
        except URLElicitationRequired as exc:  # also from a tool without a Context
            asking = asking or self._start_asking(request_id, params, state, name)
            wire = asking.url_required(exc)
        if asking is not None:
            wire = asking.finish(wire)
            if wire.get("resultType") == "input_required" or asking.task == "begun":
                create = functools.partial(server.tasks.create, tool, arguments, params, state)
                return await self._asked(asking, wire, create)
        if state.version == MODERN_VERSION:
            wire["resultType"] = "complete"
            wire["_meta"] = {**(wire.get("_meta") or {}), SERVER_INFO_KEY: self._modern_info}
        return wire

    async def _searched_list(self, request_id: Any, params: dict[str, Any], state: SessionState) -> str:
        """`tools/list` with tool search on: the pinned tools this caller may see, and the search's two."""
        search = self.server.search
        assert search is not None
        shown_to = middleware.visibility(self.server, "tools/list", request_id, state)
        listed = search.listed(params, state.version, shown_to)
        return methods.tools_page(self.server, params, state.version, self._modern_meta, listed)

    async def _searched_call(self, request_id: Any, params: dict[str, Any], state: SessionState) -> dict[str, Any]:
        """`tools/call` with tool search on: a `call_tool` call is its tool's own call (`_tools_call`, the one path
        of every call); `search_tools`, or a `call_tool` that names no tool this caller may call, is answered by the
        search."""
        search = self.server.search
        assert search is not None
        shown_to = middleware.visibility(self.server, "tools/call", request_id, state)
        params = search.unwrap(params, shown_to)
        if params.get("name") not in search.names:
            return await self._tools_call(request_id, params, state)
        wire = search.answer(params, state.version, shown_to)
        if state.version == MODERN_VERSION:
            wire["resultType"] = "complete"
            wire["_meta"] = {SERVER_INFO_KEY: self._modern_info}
        return wire

    async def _tasks_get(self, request_id: Any, params: dict[str, Any], state: SessionState) -> dict[str, Any]:
        return self._stamped(await self.server.tasks.get(params, state), state)

    async def _tasks_update(self, request_id: Any, params: dict[str, Any], state: SessionState) -> dict[str, Any]:
        return self._stamped(await self.server.tasks.update(params, state), state)

    async def _tasks_cancel(self, request_id: Any, params: dict[str, Any], state: SessionState) -> dict[str, Any]:
        return self._stamped(await self.server.tasks.cancel(params, state), state)

    async def _tasks_list(self, request_id: Any, params: dict[str, Any], state: SessionState) -> dict[str, Any]:
        return await self.server.tasks.list(params, state)

    async def _tasks_result(self, request_id: Any, params: dict[str, Any], state: SessionState) -> dict[str, Any]:
        # The task's questions are asked here, as requests related to this one (2025-11-25 tasks: input_required).
        return await self.server.tasks.result(params, state, functools.partial(self.request, related=request_id))

    def _stamped(self, result: dict[str, Any], state: SessionState) -> dict[str, Any]:
        """A 2026-07-28 result with the server's `serverInfo` in its `_meta`."""
        if state.version == MODERN_VERSION:
            result["_meta"] = {SERVER_INFO_KEY: self._modern_info}
        return result

    def _shown(
        self, tool: Tool[Any, Any] | None, name: Any, request_id: Any, params: dict[str, Any], state: SessionState
    ) -> Tool[Any, Any]:
        """`tool`, if this caller may see it (`tool_filter`); else the spec's unknown-tool error, the same whether the
        tool is hidden or does not exist, its hint naming only tools the caller sees.

        Raises:
            ProtocolError: -32602, unknown tool.
        """
        request = middleware.tools_request("tools/call", request_id, params, state)
        # An app-only tool is callable by MCP Apps hosts only: any other client would hand it to its model, which
        # the spec keeps it from (apps.mdx, "Visibility"); to such a client it does not exist.
        apps = speaks_apps(state.client_capabilities)
        if tool is not None and (apps or not tool.app_only) and middleware.shown(self.server, tool, request):
            return tool
        raise _unknown_tool(name, middleware.shown_tools(self.server, request, apps))

    async def _asked(
        self, asking: Asker, wire: dict[str, Any], create: Callable[[list[Any]], Awaitable[dict[str, Any]]]
    ) -> dict[str, Any]:
        """A 2026-07-28 round that ends with questions, or (a tool at `ctx.begin_task()`) with its task, `create`d
        with the answers of the questions asked before."""
        if asking.task == "begun" and asking.replay is not None and wire.get("resultType") != "input_required":
            return await create(asking.replay.answered())
        wire["_meta"] = {SERVER_INFO_KEY: self._modern_info}
        return wire

    def _start_asking(
        self, request_id: Any, params: dict[str, Any], state: SessionState, name: str, task: str | None = None
    ) -> Asker:
        call: AskedCall = {
            "tool": name,
            "arguments": params.get("arguments"),
            "params": params,
            "version": state.version,
            "capabilities": state.client_capabilities,
        }
        asker = Asker.start(self.server, self, request_id, call)
        if task == "later":  # its questions before `ctx.begin_task()` are this request's rounds
            asker.task = "before"
        return asker

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
        sink = _SINK.get()
        if state is self._session:
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
            notify=functools.partial(self._notify, related=request_id) if sink is None else _to_sink(sink),
            show_error_details=self.server.show_error_details,
            lifespan_context=self.server.lifespan_context,
            asker=asker,
        )

    async def _listen(self, request_id: Any, params: dict[str, Any], state: SessionState) -> None:
        wanted = params.get("notifications")
        if not isinstance(wanted, dict):
            raise ProtocolError(INVALID_PARAMS, "Invalid params: notifications must be an object")
        agreed: dict[str, Any] = {"toolsListChanged": True} if wanted.get("toolsListChanged") is True else {}
        if "taskIds" in wanted:  # the tasks extension: the caller's tasks among those named (-32021 without it)
            agreed["taskIds"] = await self.server.tasks.watchable(wanted["taskIds"], state)
        meta = {SUBSCRIPTION_KEY: request_id}
        try:
            # Registered before the acknowledgement is written, so that no change between the two is missed; the
            # acknowledgement still goes first, as it enters the (FIFO) outbox before any change notice can.
            if agreed.get("toolsListChanged"):
                self.listeners.add(request_id)
            acknowledged = {"notifications": agreed, "_meta": meta}
            await self._notify("notifications/subscriptions/acknowledged", acknowledged, request_id)
            # The stream stays open until the client cancels the request (this task is then cancelled) or its
            # input ends. Of the two endings the spec documents, a `SubscriptionsListenResult` or
            # `notifications/cancelled` for the listen request's id, end of input gets the notification: on stdio
            # the schema gives it to servers for exactly this (CancelledNotification), and the stream did not wind
            # down, it was cut short because the client went away (docs/protocol.md).
            async with anyio.create_task_group() as tg:
                if agreed.get("taskIds"):
                    notify = functools.partial(self._notify, "notifications/tasks", related=request_id)
                    tg.start_soon(self.server.tasks.watch, agreed["taskIds"], meta, notify)
                await self._closing.wait()
                tg.cancel_scope.cancel()
        finally:
            self.listeners.discard(request_id)
        await self._notify(
            "notifications/cancelled",
            {"requestId": request_id, "reason": "the server's input ended", "_meta": {SUBSCRIPTION_KEY: request_id}},
            request_id,
        )


def _unknown_tool(name: Any, tools: Mapping[str, Any]) -> ProtocolError:
    if type(name) is not str:
        return ProtocolError(INVALID_PARAMS, "Invalid params: name must be a string")
    # A typo is the usual cause, as for arguments (`_definition/tool.py`); difflib loads on this error path only.
    import difflib

    close = difflib.get_close_matches(name, list(tools), n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    return ProtocolError(INVALID_PARAMS, f"Unknown tool: {name}{hint}")


def _notification(method: str, params: dict[str, Any] | None) -> str:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        message["params"] = params
    return encode(message)


def _to_sink(sink: Callable[[str], Awaitable[None]]) -> Callable[[str, dict[str, Any] | None], Awaitable[None]]:
    """A Context's `notify` that hands each notification to `sink` (`Connection.answer`)."""

    async def notify(method: str, params: dict[str, Any] | None) -> None:
        await sink(_notification(method, params))

    return notify
