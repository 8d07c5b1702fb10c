"""The JSON-RPC side of a client: send requests, match responses by id, hand notifications on."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import anyio.abc

from toolkit._errors import ConnectionClosedError, MessageError, ProtocolError
from toolkit._matcher import RequestMatcher, Send, error_of
from toolkit._protocol.jsonrpc import INVALID_REQUEST, METHOD_NOT_FOUND, decode, encode, is_valid_id
from toolkit._transports.base import Transport
from toolkit._transports.stdio import DEFAULT_MAX_MESSAGE_SIZE, read_head

__all__ = ["ClientPeer"]

# A server that stopped reading its input is exiting: the end of its output, soon after, says why.
_CLOSE_WAIT_SECONDS = 5.0

logger = logging.getLogger("toolkit.client")

OnNotification = Callable[[str, dict[str, Any]], Awaitable[None]]
OnRequest = Callable[[str, Any], Awaitable[dict[str, Any]]]
"""Answers a request from the server (`method`, `params`) with its result, or raises `ProtocolError`."""


_METHOD_NOT_FOUND = {"code": METHOD_NOT_FOUND, "message": "Method not found"}


class ClientPeer:
    """Requests out, responses matched back to them, notifications to `on_notification`.

    Made inside the event loop that uses it (anyio primitives bind to the loop that first uses them); `run()`
    must be running in a task for requests to complete.
    """

    def __init__(
        self,
        transport: Transport,
        on_notification: OnNotification,
        *,
        max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
        on_request: OnRequest | None = None,
    ) -> None:
        self.transport = transport
        self._on_notification = on_notification
        self._on_request = on_request
        self._serving: dict[Any, anyio.CancelScope] = {}  # the server's requests being answered, by their id
        self._tg: anyio.abc.TaskGroup | None = None
        self._max = max_message_size
        self._lock = anyio.Lock(fast_acquire=True)
        self._requests = RequestMatcher("server")
        self._ended = anyio.Event()
        self._answered = False  # a first valid message came: junk after it is logged, junk before it is reported
        self._junk: str | None = None

    def next_id(self) -> int | str:
        return self._requests.next_id()

    def _encode(self, message: dict[str, Any]) -> str:
        """The message as text, refused when larger than `max_message_size` (a server would skip it unread)."""
        text = encode(message)
        # UTF-8 takes at most 4 bytes a character: most messages are cleared without being encoded twice.
        if len(text) * 4 > self._max and len(size := text.encode()) > self._max:
            what = message.get("method", "message")
            raise MessageError(
                f"the {what} request is {len(size):,} bytes, larger than max_message_size ({self._max:,} bytes), "
                "so it was not sent",
                INVALID_REQUEST,
            )
        return text

    async def send(self, message: dict[str, Any] | str) -> None:
        """Send one message (a dict, or text from `_encode`).

        Raises:
            ConnectionClosedError: the connection is closed, or the server stopped reading.
            MessageError: the message is larger than `max_message_size`.
        """
        closed = self._requests.closed()
        if closed is not None:
            raise closed
        text = message if isinstance(message, str) else self._encode(message)
        try:
            async with self._lock:  # requests come from many tasks; a transport's send is never entered twice at once
                await self.transport.send(text)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            with anyio.move_on_after(_CLOSE_WAIT_SECONDS):
                await self._ended.wait()
            raise self._requests.closed() or ConnectionClosedError("the server stopped reading its input") from None

    async def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        await self.send(message)

    async def request(
        self, method: str, params: dict[str, Any], *, stream: bool = False, send: Send | None = None
    ) -> Any:
        """Send a request and wait for its result.

        Leaving early (cancellation, a timeout around the call) sends `notifications/cancelled` for it. When the
        server sends `notifications/cancelled` for it, it will not answer: a `stream` (a `subscriptions/listen`,
        which the server ends that way, e.g. at end of its input) returns `None`; any other request raises.

        Raises:
            ProtocolError: the peer answered with an error, or cancelled a request that is not a `stream`.
            ConnectionClosedError: the connection closed before the answer came (or before the request was sent).
            MessageError: the request is larger than `max_message_size` (it is not sent), or the answer could not be
                read (larger than `max_message_size`, or not UTF-8).

        `send`: what sends the message, if not `self.send` (one that wraps it: OpenTelemetry records the id).
        """
        return await self._requests.request(method, params, send or self.send, stream=stream)

    async def run(self) -> None:
        """Read until the connection closes, then fail every request still waiting, and every later one.

        The server's own requests (elicitation, sampling) are answered in tasks of their own: a person may take
        minutes, and reading goes on meanwhile. They are cancelled when the connection closes.
        """
        async with anyio.create_task_group() as tg:
            self._tg = tg
            try:
                await self._read()
            finally:
                tg.cancel_scope.cancel()

    def close(self) -> None:
        """The client leaves: every request still waiting fails, and every later one (unless the connection ended
        first and said why)."""
        if self._requests.closed() is None:
            self._requests.close(ConnectionClosedError("the client closed the connection"))

    async def _read(self) -> None:
        closed = ConnectionClosedError()
        cancelled = False
        try:
            while True:
                try:
                    text = await self.transport.receive()
                    if len(text) > self._max and len(text.encode()) > self._max:
                        raise MessageError(
                            f"message larger than {self._max} bytes", INVALID_REQUEST, head=read_head(text)
                        )
                except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
                    break
                except ConnectionClosedError as exc:  # a process transport saying how the process ended
                    closed = exc
                    break
                except MessageError as exc:
                    self._on_unreadable(exc)
                    continue
                await self._on_text(text)
        except anyio.get_cancelled_exc_class():
            # Cancelled with the client (its block cancelled mid-call): the callers cancelled with it tell the server
            # (`notifications/cancelled`) before the client leaves and `close`s; failing them here first would keep
            # them from it, and the server would wait out its grace for calls nobody awaits.
            cancelled = True
            raise
        finally:
            if self._junk is not None:
                closed.message += f"; before that, it wrote what is not JSON-RPC to its output: {self._junk!r}"
                closed.args = (closed.message,)
            if not cancelled:
                self._requests.close(closed)
            self._ended.set()

    async def _on_text(self, text: str) -> None:
        try:
            message = decode(text)
        except ValueError:
            self._on_junk(text)
            return
        if not self._answered:
            self._answered = True
            if self._junk is not None:  # held in case the server failed at start; it did not
                logger.warning("the server sent something that is not JSON: %s", self._junk)
                self._junk = None
        for item in message if isinstance(message, list) else [message]:
            if isinstance(item, dict):
                await self._on_message(item)

    def _on_junk(self, text: str) -> None:
        # The spec forbids anything but messages on a stdio server's stdout. Before the first message, junk is kept
        # for the error that explains a server failing at start; after, it is only worth a warning.
        if self._answered or self._junk is not None:
            logger.warning("the server sent something that is not JSON: %.200s", text)
        else:
            self._junk = text[:200]

    def _on_unreadable(self, exc: MessageError) -> None:
        """A message too large (or not UTF-8) fails the request it answers, or, when its id is unknown, all of them.

        Otherwise their callers would wait for a reply that was skipped and will never come.
        """
        head = exc.head
        if "method" in head:  # a request or notification from the server, not a reply
            logger.warning("skipped a message from the server: %s", exc)
            return

        def failure(method: str) -> MessageError:
            if exc.code == INVALID_REQUEST:
                text = f"the reply to {method} is larger than max_message_size ({self._max:,} bytes), so it was skipped"
            else:
                text = f"the reply to {method} could not be read: {exc}"
            return MessageError(text, exc.code, head=head)

        request_id = head.get("id")
        if is_valid_id(request_id):
            failed = self._requests.fail(request_id, failure)
        else:
            failed = self._requests.fail_all(failure)
        if not failed:
            logger.warning("skipped a message from the server: %s", exc)

    def _on_unattributed_error(self, error: dict[str, Any]) -> None:
        """An error with id null: the server could not read the id of something we sent (JSON-RPC 2.0, 5.1).

        This client sends only well-formed messages, so it was a request the server could not read (too large for
        it, most likely), and that request will never be answered. Which one cannot be known: every request waiting
        fails with the error, as for a reply whose id cannot be read, rather than one of them hang for ever.
        """
        if not self._requests.fail_all(lambda method: error_of(error)):
            logger.warning("the server sent an error about no request: %s", error.get("message"))

    async def _on_message(self, message: dict[str, Any]) -> None:
        """One message from the server: a response, a request of its own, or a notification."""
        if "method" not in message:
            self._on_response(message)
        elif "id" in message:
            await self._on_server_request(message)
        else:
            await self._on_notified(message)

    def _on_response(self, message: dict[str, Any]) -> None:
        """A response, to the request it answers (an error with id null: to every request waiting)."""
        if message.get("id") is None and isinstance(message.get("error"), dict):
            self._on_unattributed_error(message["error"])
            return
        self._requests.resolve(message)

    async def _on_server_request(self, message: dict[str, Any]) -> None:
        """A request from the server: ping is answered here, the rest by `on_request`, each in a task of its own
        (-32601 without one; a request whose id is already being answered is ignored)."""
        request_id = message["id"]
        if message["method"] == "ping":
            await self._reply({"jsonrpc": "2.0", "id": request_id, "result": {}})
        elif self._on_request is None or self._tg is None:
            await self._reply({"jsonrpc": "2.0", "id": request_id, "error": _METHOD_NOT_FOUND})
        elif is_valid_id(request_id) and request_id not in self._serving:
            self._serving[request_id] = anyio.CancelScope()
            self._tg.start_soon(self._answer, message)

    async def _on_notified(self, message: dict[str, Any]) -> None:
        """A notification, handed to `on_notification` (its params an object, empty when it has none), except the
        server's cancellation of one of this client's streams."""
        params = message.get("params")
        params = params if isinstance(params, dict) else {}
        if message["method"] == "notifications/cancelled" and self._on_cancelled(params):
            return
        await self._on_notification(str(message["method"]), params)

    def _on_cancelled(self, params: dict[str, Any]) -> bool:
        """`notifications/cancelled`: stop answering the server's request it names (basic/utilities/cancellation),
        or end the request of this client it names; whether it ended one of this client's (then it is not handed
        on)."""
        request_id = params.get("requestId")
        scope = self._serving.get(request_id) if is_valid_id(request_id) else None
        if scope is not None:  # the server stopped waiting: so does the handler
            scope.cancel()
            return False
        return self._requests.cancelled(request_id, params.get("reason"))

    async def _answer(self, message: dict[str, Any]) -> None:
        assert self._on_request is not None
        request_id = message["id"]
        scope = self._serving[request_id]
        reply: dict[str, Any] | None = None
        try:
            with scope:
                try:
                    result = await self._on_request(str(message["method"]), message.get("params"))
                    reply = {"jsonrpc": "2.0", "id": request_id, "result": result}
                except ProtocolError as exc:
                    reply = {"jsonrpc": "2.0", "id": request_id, "error": exc.to_error()}
        finally:
            del self._serving[request_id]
        if reply is not None and not scope.cancel_called:  # a cancelled request gets no response (the spec)
            await self._reply(reply)

    async def _reply(self, message: dict[str, Any]) -> None:
        with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):  # the end is read next
            async with self._lock:
                await self.transport.send(encode(message))
