"""One connection: turn each incoming message into at most one reply, in both protocol eras.

Handshake era (2024-11-05 .. 2025-11-25): `initialize` fixes the revision for the connection. Stateless era
(2026-07-28): every request names its revision and client capabilities in `_meta`, and is served on its own.
The core reads no file and opens no socket: the transport moves text, this module decides what to say.
"""

from __future__ import annotations

import functools
import logging
import threading
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import anyio
import anyio.from_thread
import anyio.lowlevel

from ._context import LOG_LEVELS, LogLevel
from ._jsonrpc import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    ProtocolError,
    check_message,
    decode,
    encode,
    error_response,
    is_valid_id,
)
from ._requests import (
    CAPABILITIES,
    SERVER_INFO_KEY,
    SUBSCRIPTION_KEY,
    VERSION_KEY,
    Request,
    call_tool,
    discover_result,
    modern_request,
    parse_client_info,
    tools_page,
)
from ._transport import MessageError
from ._types import HANDSHAKE_VERSIONS, MODERN_VERSION, Implementation
from ._versions import negotiate

if TYPE_CHECKING:
    from ._server import Server
    from ._transport import Transport

__all__ = ["Connection", "SessionState"]

logger = logging.getLogger("toolkit")


_LONG_RUNNING = frozenset({"tools/call", "subscriptions/listen"})  # run in their own task, cancellable
_BATCH_VERSION = "2025-03-26"  # the only revision with JSON-RPC batches
_DEFAULT_LOG_LEVEL: LogLevel = "info"


# -- interim (issue 14): the connection <-> HTTP contract of /work/notes/interface-http.md, until issue 12's
# `_connection.py` implements it. Outgoing messages are tagged with the request they relate to (a transport with
# `send_related` receives the tag), and a connection can start in the handshake era's operating state.


@dataclass
class SessionState:
    """The small state of a handshake-era session: what a connection needs to serve it without its `initialize`."""

    version: str
    client_capabilities: dict[str, Any] = field(default_factory=dict)
    client_info: dict[str, Any] | None = None
    initialized: bool = True
    log_level: LogLevel = "info"


# -- end interim


def _id_in_use(request_id: Any) -> dict[str, Any]:
    return error_response(request_id, INVALID_REQUEST, "Invalid request", "id already in use by a request in flight")


class _Outbox:
    """The messages of one connection on their way out, in order, bounded; a writer task hands them to the transport.

    Putting a message never waits for the peer to read, only for room, so the connection's reader goes on reading
    while the peer is slow (JSON-RPC lets a client write all its requests before it reads a reply) and stops only
    when the outbox is full. The bounds are high-water marks, so that a message of any size fits: the outbox holds
    at most `max_messages` messages, and `max_bytes` characters of JSON plus one message.
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
        self._send_related = getattr(transport, "send_related", None)  # interim (issue 14)
        self._queue: deque[tuple[str, Any]] = deque()
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

    async def put(self, text: str, related: Any = None) -> None:
        """Queue `text` behind everything put before it, once there is room (uncontended: without a checkpoint)."""
        async with self._lock:
            await self.wait_for_room()
            self._queue.append((text, related))
            self._size += len(text)
            self._wake()

    async def send(self, text: str, related: Any = None) -> None:
        """Write `text` now if nothing is ahead of it, else `put` it: a task that may wait for the peer saves the
        writer a wake-up (a tenth of an in-memory call). Never from the connection's reader, nor from inside a
        cancel scope of a call (a cancelled write could leave half a line on a byte stream).
        """
        if self._writing or self._queue or self._lock.locked():
            await self.put(text, related)
            return
        self._writing = True
        try:
            await self._write(text, related)
        finally:
            self._writing = False
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
            text, related = queue[0]
            self._writing = True
            try:
                await self._write(text, related)
            finally:
                self._writing = False
            queue.popleft()
            self._size -= len(text)
            if self._room is not None and not self.full:
                self._room.set()
                self._room = None
            self._wake()

    async def _write(self, text: str, related: Any) -> None:
        try:
            if self._send_related is not None:  # interim (issue 14)
                await self._send_related(text, related)
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
    """The state of one client connection and the dispatch of its messages."""

    def __init__(self, server: Server, transport: Transport, *, session: SessionState | None = None) -> None:
        self.server = server
        self.transport = transport
        self._thread = threading.get_ident()
        self._token: anyio.lowlevel.EventLoopToken | None = None
        self.version: str | None = None
        self.initialized = False
        self.client_info: Implementation | None = None
        self.client_capabilities: dict[str, Any] = {}
        self.log_level: LogLevel = _DEFAULT_LOG_LEVEL
        if session is not None:  # interim (issue 14): a session served by a process that did not see initialize
            self.version = session.version
            self.initialized = session.initialized
            self.client_info = parse_client_info(session.client_info)
            self.client_capabilities = dict(session.client_capabilities)
            self.log_level = session.log_level
        self.in_flight: dict[Any, anyio.CancelScope] = {}
        self.listeners: set[Any] = set()
        self._outbox = _Outbox(transport, server.max_queued_messages, server.max_queued_bytes)
        self._modern_info = server.info_for(MODERN_VERSION)
        self._idle = anyio.Event()
        self._closing = anyio.Event()  # set at end of input: open subscriptions then end themselves
        self._tg: anyio.abc.TaskGroup | None = None
        self._modern_meta = encode({SERVER_INFO_KEY: self._modern_info})
        # ping and logging/setLevel exist only in the handshake era; discover and listen only in 2026-07-28.
        self._handshake_methods: dict[str, Callable[[Request], Awaitable[Any]]] = {
            "tools/call": self._tools_call,
            "tools/list": self._tools_list,
            "ping": self._ping,
            "logging/setLevel": self._set_level,
        }
        self._modern_methods: dict[str, Callable[[Request], Awaitable[Any]]] = {
            "tools/call": self._tools_call,
            "tools/list": self._tools_list,
            "server/discover": self._discover,
            "subscriptions/listen": self._listen,
        }

    @property
    def session(self) -> SessionState | None:
        """The handshake-era state once `initialize` succeeded (a copy), else None. Interim (issue 14)."""
        if self.version is None:
            return None
        info = self.client_info.model_dump(mode="json", by_alias=True, exclude_none=True) if self.client_info else None
        return SessionState(self.version, dict(self.client_capabilities), info, self.initialized, self.log_level)

    # -- the loop ------------------------------------------------------------------------------------

    async def run(self) -> None:
        self.server.connections.add(self)
        try:
            async with anyio.create_task_group() as tg:
                self._tg = tg
                self._token = anyio.lowlevel.current_token()
                tg.start_soon(self._outbox.run)
                while True:
                    if self._outbox.full:  # a peer that does not read: stop reading until it does
                        await self._outbox.wait_for_room()
                    try:
                        text = await self.transport.receive()
                    except anyio.EndOfStream:
                        break
                    except MessageError as exc:
                        await self._send(error_response(None, exc.code, str(exc)))
                        continue
                    await self._on_text(text)
                await self._drain()
                await self._outbox.flush()
                tg.cancel_scope.cancel()
        finally:
            self.server.connections.discard(self)

    async def _drain(self) -> None:
        """At end of input, let running calls finish and answer (a client may close stdin and still read).

        Subscriptions end at once (each tells its client so, see `_listen`); calls get `server.shutdown_grace`
        seconds, then are cancelled. What is already in the outbox is written after this, however long the client
        takes to read it.
        """
        self._closing.set()
        with anyio.move_on_after(self.server.shutdown_grace):
            while self.in_flight:
                self._idle = anyio.Event()
                await self._idle.wait()
        for scope in self.in_flight.values():  # past the grace: cancelled, so they add nothing to the outbox
            scope.cancel()

    async def _send(self, message: dict[str, Any] | list[Any], related: Any = None) -> None:
        await self._outbox.put(encode(message), related)

    async def _on_text(self, text: str) -> None:
        try:
            message = decode(text)
        except ValueError as exc:
            await self._send(error_response(None, PARSE_ERROR, "Parse error", str(exc)))
            return
        if isinstance(message, dict):
            await self._on_message(message)
        elif isinstance(message, list) and self.version == _BATCH_VERSION:
            self._spawn(self._batch, message)
        else:
            reason = "batches are not supported by this protocol version" if isinstance(message, list) else None
            await self._send(error_response(None, INVALID_REQUEST, "Invalid request", "expected an object", reason))

    async def _on_message(self, message: dict[str, Any]) -> None:
        problem = check_message(message)
        if problem is not None:
            await self._send(problem, problem["id"])
            return
        if "method" not in message:
            return
        if "id" not in message:
            await self._on_notification(message)
            return
        if message["id"] in self.in_flight:  # any method: a second reply with that id would be ambiguous
            await self._send(_id_in_use(message["id"]), message["id"])
            return
        if message["method"] in _LONG_RUNNING:
            admitted = self._admit(message["id"])
            if isinstance(admitted, dict):
                await self._send(admitted, message["id"])
            else:
                self._spawn(self._run_in_scope, message, admitted)
            return
        response = await self._respond(message)
        if response is not None:
            await self._outbox.put(response, message["id"])

    def _admit(self, request_id: Any) -> anyio.CancelScope | dict[str, Any]:
        """A cancel scope for a call about to run (registered as in flight), or the error response refusing it."""
        if request_id in self.in_flight:
            return _id_in_use(request_id)
        if len(self.in_flight) >= self.server.max_concurrent_requests:
            return error_response(request_id, INTERNAL_ERROR, "Too many requests in flight")
        scope = self.in_flight[request_id] = anyio.CancelScope()
        return scope

    def _finished(self, request_id: Any) -> None:
        self.in_flight.pop(request_id, None)
        if not self.in_flight:
            self._idle.set()

    def _spawn(self, func: Callable[..., Any], *args: Any) -> None:
        assert self._tg is not None
        self._tg.start_soon(func, *args)

    async def _run_in_scope(self, message: dict[str, Any], scope: anyio.CancelScope) -> None:
        # A call counts as in flight until the outbox has its reply: calls whose replies wait for room (a client
        # that does not read) still count against max_concurrent_requests, so they too are bounded.
        try:
            response = None
            with scope:
                response = await self._respond(message)
            if response is not None and not scope.cancel_called:
                await self._outbox.send(response, message["id"])
        finally:
            self._finished(message["id"])

    async def _batch(self, messages: list[Any]) -> None:
        if not messages:
            await self._send(error_response(None, INVALID_REQUEST, "Invalid request", "empty batch"))
            return
        replies: list[Any] = []

        async def one(message: Any) -> None:
            if not isinstance(message, dict):
                replies.append(error_response(None, INVALID_REQUEST, "Invalid request", "expected an object"))
                return
            problem = check_message(message)
            if problem is not None:
                replies.append(problem)
            elif "method" not in message:
                return
            elif "id" not in message:
                await self._on_notification(message)
            elif message["method"] in _LONG_RUNNING:  # cancellable and counted, as outside a batch
                admitted = self._admit(message["id"])
                if isinstance(admitted, dict):
                    replies.append(admitted)
                    return
                reply = None
                try:
                    with admitted:
                        reply = await self._respond(message)
                finally:
                    self._finished(message["id"])
                if reply is not None and not admitted.cancel_called:
                    replies.append(decode(reply))
            elif message["id"] in self.in_flight:
                replies.append(_id_in_use(message["id"]))
            else:
                reply = await self._respond(message)
                if reply is not None:
                    replies.append(decode(reply))

        async with anyio.create_task_group() as tg:
            for message in messages:
                tg.start_soon(one, message)
        if replies:
            await self._send(replies)

    # -- notifications -------------------------------------------------------------------------------

    async def _on_notification(self, message: dict[str, Any]) -> None:
        method = message["method"]
        params = message.get("params")
        if not isinstance(params, dict):  # a malformed notification gets no answer, and must not end the loop
            params = {}
        if method == "notifications/initialized":
            self.initialized = True
        elif method == "notifications/cancelled":
            request_id = params.get("requestId")
            scope = self.in_flight.get(request_id) if is_valid_id(request_id) else None
            if scope is not None:
                scope.cancel()
                # A cancelled subscription gets nothing more from now on, not from when its task unwinds.
                self.listeners.discard(request_id)
        # Anything else (roots/list_changed, progress for requests we never sent...) needs no action.

    def tools_changed(self) -> None:
        """Called by the server when its tool list changes."""
        if self._tg is None:
            return
        if threading.get_ident() != self._thread:  # a sync tool or another thread changed the list: to the loop
            anyio.from_thread.run_sync(self.tools_changed, token=self._token)
            return
        if self.version is not None and self.initialized:
            self._tg.start_soon(self._send, {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
        for subscription_id in self.listeners:
            note = {
                "jsonrpc": "2.0",
                "method": "notifications/tools/list_changed",
                "params": {"_meta": {SUBSCRIPTION_KEY: subscription_id}},
            }
            self._tg.start_soon(self._send, note, subscription_id)

    # -- requests ------------------------------------------------------------------------------------

    async def _respond(self, message: dict[str, Any]) -> str | None:
        """The encoded response to one request, or None when it was cancelled."""
        request_id = message["id"]
        try:
            result = await self._dispatch(message)
        except ProtocolError as exc:
            return encode({"jsonrpc": "2.0", "id": request_id, "error": exc.to_error()})
        except Exception:
            logger.exception("internal error while handling %r", message.get("method"))
            return encode(error_response(request_id, INTERNAL_ERROR, "Internal error"))
        if result is None:
            return None
        if isinstance(result, str):
            return f'{{"jsonrpc":"2.0","id":{encode(request_id)},"result":{result}}}'
        try:
            return encode({"jsonrpc": "2.0", "id": request_id, "result": result})
        except ValueError:  # e.g. a tool's text with a lone surrogate, which UTF-8 cannot carry
            logger.exception("cannot encode the result of %r", message.get("method"))
            return encode(error_response(request_id, INTERNAL_ERROR, "Internal error: the result cannot be encoded"))

    async def _dispatch(self, message: dict[str, Any]) -> Any:
        method: str = message["method"]
        params: dict[str, Any] = message.get("params") or {}
        meta = params.get("_meta")
        if isinstance(meta, dict) and VERSION_KEY in meta and method != "initialize":  # initialize is always legacy
            request = modern_request(message["id"], params, meta)
            handler = self._modern_methods.get(method)
        elif method == "initialize":
            return self._initialize(params)
        elif self.version is None or method == "server/discover":
            if method == "ping":  # the one request a handshake client may send before initialize
                return {}
            # 2026-07-28 (basic/index): a request missing the required _meta fields is malformed: -32602. The same
            # code tells a handshake-era client it must initialize first (the lifecycle leaves the code open).
            raise ProtocolError(
                INVALID_PARAMS,
                f"Invalid params: params._meta is missing {VERSION_KEY!r}; send initialize (protocol versions up to "
                f"{HANDSHAKE_VERSIONS[0]}) or the {MODERN_VERSION} _meta fields with every request",
            )
        else:
            request = Request(message["id"], params, self.version, meta if isinstance(meta, dict) else None)
            request.log_level = self.log_level
            request.client_info = self.client_info
            handler = self._handshake_methods.get(method)
        if handler is None:
            raise ProtocolError(METHOD_NOT_FOUND, f"Method not found: {method}")
        return await handler(request)

    async def _tools_list(self, request: Request) -> str:
        return tools_page(self.server, request, self._modern_meta)

    async def _discover(self, request: Request) -> dict[str, Any]:
        return discover_result(self.server, self._modern_info)

    async def _ping(self, request: Request) -> dict[str, Any]:
        return {}

    def _initialize(self, params: dict[str, Any]) -> dict[str, Any]:
        requested = params.get("protocolVersion")
        if not isinstance(requested, str):
            raise ProtocolError(INVALID_PARAMS, "Invalid params: protocolVersion must be a string")
        if self.version is not None:
            raise ProtocolError(INVALID_REQUEST, "Invalid request: the connection is already initialized")
        version = negotiate(requested)
        self.client_info = parse_client_info(params.get("clientInfo"))
        capabilities = params.get("capabilities")
        self.client_capabilities = capabilities if isinstance(capabilities, dict) else {}
        self.version = version
        result: dict[str, Any] = {
            "protocolVersion": version,
            "capabilities": CAPABILITIES,
            "serverInfo": self.server.info_for(version),
        }
        if self.server.instructions is not None:
            result["instructions"] = self.server.instructions
        return result

    async def _set_level(self, request: Request) -> dict[str, Any]:
        level = request.params.get("level")
        if level not in LOG_LEVELS:
            raise ProtocolError(INVALID_PARAMS, f"Invalid params: level must be one of {', '.join(LOG_LEVELS)}")
        self.log_level = level
        return {}

    async def _tools_call(self, request: Request) -> dict[str, Any]:
        notify = functools.partial(self._notify, related=request.id)  # interim (issue 14): tagged with the call
        return await call_tool(self.server, request, self._level_getter(request), notify, self._modern_info)

    def _level_getter(self, request: Request) -> Callable[[], LogLevel | None]:
        if request.modern:
            level = request.log_level
            return lambda: level
        return lambda: self.log_level

    async def _notify(self, method: str, params: dict[str, Any], related: Any = None) -> None:
        await self._send({"jsonrpc": "2.0", "method": method, "params": params}, related)

    async def _listen(self, request: Request) -> None:
        wanted = request.params.get("notifications")
        if not isinstance(wanted, dict):
            raise ProtocolError(INVALID_PARAMS, "Invalid params: notifications must be an object")
        agreed = {"toolsListChanged": True} if wanted.get("toolsListChanged") is True else {}
        try:
            # Registered before the acknowledgement is written, so that no change between the two is missed; the
            # acknowledgement still goes first, as it enters the (FIFO) outbox before any change notice can.
            if agreed:
                self.listeners.add(request.id)
            await self._notify(
                "notifications/subscriptions/acknowledged",
                {"notifications": agreed, "_meta": {SUBSCRIPTION_KEY: request.id}},
                request.id,
            )
            # The stream stays open until the client cancels the request (this task is then cancelled) or its
            # input ends. Of the two endings the spec documents, a `SubscriptionsListenResult` or
            # `notifications/cancelled` for the listen request's id, end of input gets the notification: on stdio
            # the schema gives it to servers for exactly this (CancelledNotification), and the stream did not wind
            # down, it was cut short because the client went away (docs/protocol.md).
            await self._closing.wait()
        finally:
            self.listeners.discard(request.id)
        await self._notify(
            "notifications/cancelled",
            {"requestId": request.id, "reason": "the server's input ended", "_meta": {SUBSCRIPTION_KEY: request.id}},
            request.id,
        )
