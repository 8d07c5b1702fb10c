"""One connection: its state, reading and admission, routing each request to its era's handler, and requests the
server sends the client.

Handshake era (2024-11-05 .. 2025-11-25): `initialize` fixes the revision for the connection, kept as a
`SessionState`. Stateless era (2026-07-28): every request names its revision and client capabilities in `_meta`,
and is served with a `SessionState` of its own (`eras.route` tells which). Each handler is `handler(incoming)`
(`pipeline.Incoming`: the request, its state and era, and its outlet), from one table: the registry's answers
(`handlers.py`) and the few of the connection's own. The core reads no file and opens no socket: the transport
moves text, this module decides what to say.

Every message written is tagged with the id of the client request it belongs to (`None` for none) and its kind (the
answer that ends the request, or not): a transport that routes per request (HTTP) implements `RoutingTransport`
(`_transports/base.py`) and gets both, and hands the connection the messages it already decoded.
"""

from __future__ import annotations

import functools
import logging
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import TYPE_CHECKING, Any, cast

import anyio
import anyio.abc
import anyio.from_thread
import anyio.lowlevel
import pydantic

from toolkit._call.context import Context
from toolkit._errors import ConnectionClosedError, MessageError, ProtocolError
from toolkit._matcher import RequestMatcher
from toolkit._protocol.jsonrpc import (
    INTERNAL_ERROR,
    INVALID_REQUEST,
    PARSE_ERROR,
    check_message,
    decode,
    encode,
    error_response,
    is_valid_id,
    notification,
    shutting_down,
)
from toolkit._protocol.meta import SUBSCRIPTION_KEY
from toolkit._protocol.types import Implementation
from toolkit._transports.base import MessageKind, RoutingTransport

from . import methods, middleware
from .eras import route
from .handlers import Handler, RegistryHandlers
from .outbox import Outbox, routes
from .pipeline import Incoming, Notify, Outlet
from .runners import Runners
from .session import LogLevel, SessionState
from .subscriptions import Subscriptions
from .telemetry import SERVER_SESSION_DURATION, ServerSpan, network_of, sender_attributes

if TYPE_CHECKING:
    from toolkit._asking.asking import Asker
    from toolkit._transports.base import Transport

    from .registry import Registry

__all__ = ["Connection"]

logger = logging.getLogger("toolkit")
ERROR = MessageKind.ERROR  # the kind of a batch's refusals (a batch's reply goes out whole, its kinds unread)

_LONG_RUNNING = frozenset({"tools/call", "subscriptions/listen", "tasks/result"})  # run in their own task, cancellable
_BATCH_VERSION = "2025-03-26"  # the only revision with JSON-RPC batches


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
        self._outbox = Outbox(transport, server.max_queued_messages, server.max_queued_bytes)
        self._idle = anyio.Event()
        self.subscriptions = Subscriptions(server.tasks)  # its `closing` is set at end of input
        # Whether a call can end its response early (HTTP's SSE polling, 2025-11-25: the transport's `close_stream`,
        # set once the response exists), known by the transport's type.
        self._closes = hasattr(type(transport), "close_stream")
        self._closed = False  # input has ended: requests to the client can get no answer
        self._stopping = False  # the server is stopping (`stop`): a new call is answered "Server shutting down"
        self._tg: anyio.abc.TaskGroup | None = None
        self._runners: Runners | None = None  # the tasks its calls run in, once it runs
        self._session_started: float | None = None  # when `initialize` made a session here (for its duration)
        # The requests this server sends (the client's ids are its own); a transport that routes answers gives ids of
        # its own, unique beyond this connection.
        self._requests = RequestMatcher("client", request_ids)
        # Where the requests served here send their notifications, tagged with their ids (`pipeline.Outlet`).
        self._outlet = Outlet(self._notify, self)
        # The method table: the registry's answers (`handlers.py`) and this connection's own; each era serves the
        # methods it has (`eras.py`).
        self._handlers: dict[str, Handler] = {
            **RegistryHandlers(server).table(),
            "initialize": self._initialize,
            "ping": self._ping,
            "logging/setLevel": self._set_level,
            "subscriptions/listen": self.subscriptions.listen,
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
                self._runners = Runners(tg)
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
        """Read the client's messages until its input ends, then end the connection (`_ended`)."""
        outbox = self._outbox
        transport = self.transport
        decoded = routes(type(transport))  # it hands over the messages it decoded to route them
        receive = cast("RoutingTransport", transport).receive_message if decoded else transport.receive
        while True:
            if outbox.queued and outbox.full:  # a peer that does not read: stop reading until it does
                await outbox.wait_for_room()
            try:
                text = await receive()
            except anyio.EndOfStream:
                break
            except MessageError as exc:
                await self._unreadable(exc)
                continue
            try:
                message = text if decoded else decode(text)
            except ValueError as exc:
                await self._send(error_response(None, PARSE_ERROR, "Parse error", str(exc)))
                continue
            if type(message) is dict:
                await self._on_message(message)
            else:
                await self._on_other(message)
        await self._ended()

    async def _unreadable(self, exc: MessageError) -> None:
        """Answer a message the transport could not read. A request too large whose id was read before the limit
        is answered with that id, so that its caller fails at once. Bytes that are not UTF-8 are not JSON text: a
        parse error, id null (JSON-RPC)."""
        head = exc.head if exc.code == INVALID_REQUEST else {}
        request_id = head.get("id") if "method" in head else None
        if not is_valid_id(request_id):
            request_id = None
        await self._send(error_response(request_id, exc.code, str(exc)), request_id, MessageKind.ERROR)

    async def _on_other(self, message: Any) -> None:
        """A message that is no object: a batch (2025-03-26 sessions only), else an invalid request."""
        if not isinstance(message, list):
            await self._send(error_response(None, INVALID_REQUEST, "Invalid request", "expected an object"))
        elif self._session is not None and self._session.version == _BATCH_VERSION:
            self._spawn(self._batch, message)
        else:
            reason = "batches are not supported by this protocol version"
            await self._send(error_response(None, INVALID_REQUEST, "Invalid request", "expected an object", reason))

    async def _ended(self) -> None:
        """End of input: the requests sent to the client fail, the calls in flight finish (`drain`), every reply
        is written, and the connection ends."""
        self._end_requests()
        await self.drain()
        await self._outbox.flush()
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
        self.subscriptions.closing.set()

    async def drain(self) -> None:
        """At end of input, or once stopped (`stop`), let running calls finish and answer (a client may close stdin
        and still read).

        Subscriptions end at once (each tells its client so, see `_listen`); calls get `server.shutdown_grace`
        seconds, then are cancelled and answered with "Server shutting down", so that no client waits for a reply
        that cannot come. What is already in the outbox is written after this, however long the client takes to
        read it.
        """
        self.subscriptions.closing.set()
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
        await self._outbox.put(notification(method, params), related)

    async def _on_message(self, message: dict[str, Any]) -> None:
        """One message from the client: a request, a notification, or a response to a request of ours."""
        problem = check_message(message)
        if problem is not None:
            await self._send(problem)
        elif "method" not in message:
            self._on_response(message)
        elif "id" not in message:
            await self._on_notification(message)
        else:
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
        else:  # a call: in a task of its own, so that reading goes on
            assert self._runners is not None
            self._runners.start(self._respond, message, admitted)

    async def answer(
        self,
        message: dict[str, Any],
        notify: Notify | None = None,
        session: SessionState | None = None,
    ) -> tuple[str, MessageKind] | None:
        """Answer one well-formed request in the caller's task, without the connection's loop: the reply's text and
        kind (a result or an error), or None when it was cancelled.

        For a transport that knows the request sends nothing but its answer (HTTP's JSON replies to `tools/list`,
        or to a tool that cannot ask the client), or nothing but notifications before it, handed to `notify` (a
        2026-07-28 call: its questions are results, not requests); the answer is the one `run` would write.
        `session`: the 2025-11-25 session it belongs to, when not this connection's (one connection answers the
        requests of many sessions: it keeps no request's state).
        """
        replies: list[tuple[str, MessageKind]] = []
        outlet = Outlet(notify, self) if notify is not None else None
        await self._respond(message, None, replies, session, outlet)
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
        outlet: Outlet | None = None,
    ) -> None:
        """Answer one request: run its handler (`_handle`), and write (or, in a batch or for `answer`, collect) the
        reply. With a `scope`, a call in flight (cancellable, counted until the outbox has its reply: calls whose
        replies wait for room, from a client that does not read, stay bounded too)."""
        request_id, text, result = message["id"], None, None
        # OpenTelemetry's SERVER span, outermost around the handling (`telemetry.py`); None when it is off.
        span = self._span(message, session) if self.server.telemetry is not None else None
        try:
            if scope is None:  # answered at once; from the reader, `put`: it must not wait for the peer
                text, result = await self._handle(message, session, outlet)
                write = self._outbox.put
            else:
                with scope:  # a cancelled call leaves `text` None
                    text, result = await self._handle(message, session, outlet)
                if scope.cancel_called:  # cancelled, perhaps once answered: no reply
                    return
                write = self._outbox.send
            if text is None:
                return
            kind = MessageKind.ERROR if result is None else MessageKind.RESULT
            if collect is not None:
                collect.append((text, kind))
            else:
                await write(text, request_id, kind)
        finally:
            if span is not None:
                span.end(result, text)
            if scope is not None:  # a call in flight has answered, or ended cancelled
                self.in_flight.pop(request_id, None)
                if not self.in_flight:
                    self._idle.set()

    async def _handle(
        self,
        message: dict[str, Any],
        session: SessionState | None,
        outlet: Outlet | None,
    ) -> tuple[str | None, Any]:
        """Route a request to its era's handler and run it (through the server's middleware, if any): the reply's
        JSON text (None for none: cancelled, or a subscription that ended) and the result (None when the reply is an
        error). A str result is JSON text prepared ahead (`tools/list`). `session` and `outlet`: the request's, when
        not this connection's (`answer`)."""
        request_id, method = message["id"], message["method"]
        try:
            params: dict[str, Any] = message.get("params") or {}
            era, state = route(method, params, session or self._session)
            handler = self._handlers[method]
            incoming = Incoming(request_id, params, state, era, outlet or self._outlet)
            if self.server.middleware:
                result = await middleware.run_method(self.server, handler, incoming, method)
            else:
                result = await handler(incoming)
        except ProtocolError as exc:
            return encode({"jsonrpc": "2.0", "id": request_id, "error": exc.to_error()}), None
        except Exception:
            logger.exception("internal error while handling %r", method)
            return encode(error_response(request_id, INTERNAL_ERROR, "Internal error")), None
        if result is None:
            return None, None
        try:
            if type(result) is str:
                return f'{{"jsonrpc":"2.0","id":{encode(request_id)},"result":{result}}}', result
            return encode({"jsonrpc": "2.0", "id": request_id, "result": result}), result
        except ValueError:  # e.g. a tool's text with a lone surrogate, which UTF-8 cannot carry
            logger.exception("cannot encode the result of %r", method)
            return encode(
                error_response(request_id, INTERNAL_ERROR, "Internal error: the result cannot be encoded")
            ), None

    def _span(self, message: dict[str, Any], session: SessionState | None = None) -> ServerSpan:
        """Start the SERVER span of a request or notification (tracing is on: `server.telemetry` is set)."""
        telemetry = self.server.telemetry
        assert telemetry is not None
        state = session or self._session
        return telemetry.serve(message, state.version if state is not None else None, network_of(self.transport))

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
                self.subscriptions.listeners.discard(request_id)
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
        for subscription_id in self.subscriptions.listeners:
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

    # -- the methods that read or change this connection's state -----------------------------------------

    async def _initialize(self, incoming: Incoming) -> dict[str, Any]:
        self._session, result = methods.initialize(self.server, incoming.params, self._session, self._initialized)
        self._session_started = time.perf_counter()  # mcp.server.session.duration starts here
        self._client_info = _client_info(incoming.params.get("clientInfo"))
        return result

    async def _ping(self, incoming: Incoming) -> dict[str, Any]:
        return {}

    async def _set_level(self, incoming: Incoming) -> dict[str, Any]:
        self._session = methods.set_level(incoming.params, incoming.state)
        return {}

    def elicitation_complete(self, elicitation_id: str) -> None:
        """Send `notifications/elicitation/complete` (from any thread): a URL-mode elicitation's flow is done."""
        if self._tg is None or self._closed:
            return
        if threading.get_ident() != self._thread:
            anyio.from_thread.run_sync(self.elicitation_complete, elicitation_id, token=self._token)
            return
        self._tg.start_soon(self._notify, "notifications/elicitation/complete", {"elicitationId": elicitation_id})

    def context(self, incoming: Incoming, asker: Asker | None = None) -> Context:
        """The Context of a call served here: its client as this connection knows it, its notifications to the
        request's outlet (tagged with its id), and how it ends its HTTP response early where its transport can."""
        state = incoming.state
        meta = incoming.params.get("_meta")
        token = meta.get("progressToken") if isinstance(meta, dict) else None
        client_info: Implementation | Callable[[], Implementation | None] | None
        if state is self._session:
            client_info = self._client_info

            def log_level() -> LogLevel | None:  # logging/setLevel applies to calls already running
                return self._session.log_level if self._session is not None else None

        else:
            client_info = functools.partial(_client_info, state.client_info)  # read only if the tool asks
            level = state.log_level

            def log_level() -> LogLevel | None:
                return level

        return Context(
            request_id=incoming.id,
            client_info=client_info,
            protocol_version=state.version,
            progress_token=token if is_valid_id(token) else None,
            log_level=log_level,
            notify=functools.partial(incoming.outlet.notify, related=incoming.id),
            close_stream=self.transport.close_stream if self._closes else None,  # type: ignore[attr-defined]
            show_error_details=self.server.show_error_details,
            lifespan_context=self.server.lifespan_context,
            asker=asker,
        )
