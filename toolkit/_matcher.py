"""Requests this side sent, matched to their responses by id: the one matcher of the server's connection and the client.

JSON-RPC 2.0 lets either peer send requests; each side keeps its own ids and matches the responses it reads back to
the callers waiting for them. This module owns that once: the ids, the wait (with its timeout), telling the peer
when a caller stops waiting (`notifications/cancelled`, basic/utilities/cancellation), a response that is an
error, a request the peer cancelled, and the end of the connection, which fails every request waiting and every
later one. It does no I/O of its own: each request is sent by the caller's `send`, so that a connection's outbox
or a client's lock stays where it is.

It sits just above `_errors` (it raises `ProtocolError` and `ConnectionClosedError`) and below every wing that talks:
`_engine.connection` and `_client.peer` import it, and it imports neither.
"""

from __future__ import annotations

import collections
import contextlib
import itertools
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import anyio

from toolkit._errors import ConnectionClosedError, ProtocolError
from toolkit._events import event_class
from toolkit._protocol.jsonrpc import INTERNAL_ERROR

__all__ = ["CANCEL_NOTICE_SECONDS", "RequestMatcher", "Send", "error_of"]

CANCEL_NOTICE_SECONDS = 1.0
"""How long one cancellation notice may take to send: the notice is advisory, and a peer that stopped reading must
not hold a cancelled (or timed-out) caller for ever. Notices go out one after another, each within this bound of
the one before; once one is not sent in time, the others waiting are dropped with it."""

Send = Callable[[dict[str, Any]], Awaitable[None]]
"""Sends one message (a request, or the notice that cancels it). An exception it raises means the message was not
sent, so nobody is told of the request's end."""


def error_of(error: Any) -> ProtocolError:
    """The `ProtocolError` for a JSON-RPC error object, however malformed (a code that is no integer is -32603)."""
    if not isinstance(error, dict):
        error = {}
    code = error.get("code")
    return ProtocolError(
        code if type(code) is int else INTERNAL_ERROR, str(error.get("message", "")), error.get("data")
    )


def copy_closed(closed: ConnectionClosedError) -> ConnectionClosedError:
    """A new exception for each caller: one raised in several tasks would collect all their tracebacks."""
    return ConnectionClosedError(closed.message, returncode=closed.returncode, stderr=closed.stderr)


class _Waiting:
    """One request sent, waiting for its response: `done` is set once `result` or `failure` holds the outcome."""

    __slots__ = ("done", "failure", "method", "result", "stream")

    def __init__(self, method: str, stream: bool, done: anyio.Event) -> None:
        self.method = method
        self.stream = stream
        self.done = done
        self.result: Any = None
        self.failure: BaseException | None = None

    def settle(self, result: Any = None, failure: BaseException | None = None) -> None:
        self.result = result
        self.failure = failure
        self.done.set()


class RequestMatcher:
    """The requests one side sent and still waits for, by id.

    Made inside the event loop that uses it (anyio primitives bind to the loop that first uses them).

    Args:
        peer: Who answers, as error messages name it: `"client"` or `"server"`.
        ids: The ids to give the requests (default 1, 2, 3...): a transport on which answers arrive apart from the
            connection (HTTP: each in a POST of its own) gives ids it can route back. Each must be an int or a str.
    """

    def __init__(self, peer: str, ids: Iterator[int | str] | None = None) -> None:
        self._peer = peer
        self._ids: Iterator[int | str] = itertools.count(1) if ids is None else ids
        self._waiting: dict[int | str, _Waiting] = {}
        self._closed: ConnectionClosedError | None = None
        self._new_event = event_class()  # one request, one event: made without looking the event loop up each time
        self._notices: collections.deque[tuple[Send, dict[str, Any]]] = collections.deque()
        self._telling = False  # a caller is sending the notices waiting (`_tell`)

    def next_id(self) -> int | str:
        """A fresh id, unused by any request (a client also numbers its progress tokens with them)."""
        return next(self._ids)

    def closed(self) -> ConnectionClosedError | None:
        """Once the connection has ended, a new exception saying how (raise it); else `None`."""
        return None if self._closed is None else copy_closed(self._closed)

    async def request(
        self,
        method: str,
        params: dict[str, Any] | None,
        send: Send,
        *,
        timeout: float | None = None,  # noqa: ASYNC109 - the callers' signature; the wait is `fail_after(timeout)`
        stream: bool = False,
    ) -> Any:
        """Send a request with `send` and return its result.

        A caller that stops waiting (cancelled, or `timeout` expired) tells the peer with `notifications/cancelled`.
        When the peer cancels the request instead (`cancelled`), a `stream` (a `subscriptions/listen`, which the
        server ends that way) returns `None`; any other request raises.

        Raises:
            ProtocolError: the peer answered with an error, or cancelled a request that is not a `stream`.
            ConnectionClosedError: the connection ended before the answer came (or before the request was sent).
            TimeoutError: no answer within `timeout` seconds.
            Exception: whatever `send` raised (the request was not sent).
        """
        if self._closed is not None:
            raise copy_closed(self._closed)
        request_id = next(self._ids)
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        waiting = self._waiting[request_id] = _Waiting(method, stream, self._new_event())
        try:
            try:
                await send(message)
            except Exception as exc:  # not sent: there is nothing to cancel
                waiting.settle(failure=exc)
                raise
            if timeout is None:
                await waiting.done.wait()
            else:
                with anyio.fail_after(timeout):
                    await waiting.done.wait()
        except BaseException as exc:
            if not waiting.done.is_set():
                await self._cancel(request_id, "timed out" if isinstance(exc, TimeoutError) else "cancelled", send)
            raise
        finally:
            self._waiting.pop(request_id, None)
        if waiting.failure is not None:
            raise waiting.failure
        return waiting.result

    async def _cancel(self, request_id: int | str, reason: str, send: Send) -> None:
        """Tell the peer to stop working on a request nobody waits for any more (basic/utilities/cancellation).

        Many callers cancelled at once (a task group's scope) would each wait their turn to send, a turn of the event
        loop each, and on a busy loop the last of them would give up before theirs: the first caller sends every
        notice waiting, in order, and the others leave at once."""
        params = {"requestId": request_id, "reason": reason}
        self._notices.append((send, {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params}))
        if self._telling:
            return
        self._telling = True
        try:
            await self._tell()
        finally:
            self._telling = False
            self._notices.clear()  # those left when a notice could not be sent (advisory: dropped with it)

    async def _tell(self) -> None:
        # Shielded, so that the notices go out although the caller is being cancelled; each bounded on its own.
        with anyio.CancelScope(shield=True), contextlib.suppress(ConnectionClosedError):
            while self._notices:
                send, notice = self._notices.popleft()
                with anyio.move_on_after(CANCEL_NOTICE_SECONDS) as bound:
                    await send(notice)
                if bound.cancelled_caught:
                    return

    def resolve(self, message: dict[str, Any]) -> bool:
        """A response: settle the request it answers. `False` when it answers none waiting (an unknown id, a second
        answer, or one that came after its request timed out or was cancelled)."""
        request_id = message.get("id")
        # Our ids are ints, or strings a transport chose (never floats, lists or objects: unhashable).
        waiting = self._waiting.pop(request_id, None) if type(request_id) is int or type(request_id) is str else None
        if waiting is None:
            return False
        if "error" in message:
            waiting.settle(failure=error_of(message["error"]))
        else:
            waiting.settle(message.get("result"))
        return True

    def cancelled(self, request_id: Any, reason: Any = None) -> bool:
        """The peer ended one of our requests without an answer: stop waiting. `False` when none has that id."""
        waiting = self._waiting.pop(request_id, None) if type(request_id) is int or type(request_id) is str else None
        if waiting is None:
            return False
        if waiting.stream:
            waiting.settle()
        else:
            text = f"the {self._peer} cancelled {waiting.method}" + (f": {reason}" if isinstance(reason, str) else "")
            waiting.settle(failure=ProtocolError(INTERNAL_ERROR, text))
        return True

    def fail(self, request_id: Any, failure: Callable[[str], BaseException]) -> bool:
        """Fail the request `request_id` with `failure(method)` (its answer could not be read). `False`: none waits."""
        waiting = self._waiting.pop(request_id, None) if type(request_id) is int or type(request_id) is str else None
        if waiting is None:
            return False
        waiting.settle(failure=failure(waiting.method))
        return True

    def fail_all(self, failure: Callable[[str], BaseException]) -> bool:
        """Fail every request waiting, each with its own `failure(method)`, rather than let one hang for ever when an
        answer cannot be told apart. `False` when none was waiting."""
        waiting, self._waiting = self._waiting, {}
        for one in waiting.values():
            one.settle(failure=failure(one.method))
        return bool(waiting)

    def close(self, closed: ConnectionClosedError) -> None:
        """The connection ended: every request waiting fails with `closed` (a copy each), and every later one."""
        self._closed = closed
        self.fail_all(lambda method: copy_closed(closed))
