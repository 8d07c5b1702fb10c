"""One request being served: what came in (`Post`, from a `Caller`), and its transport (`Exchange`): the POST's
message in, the messages the connection relates to it out, and the client's answers to the server's questions in.
"""

from __future__ import annotations

import enum
import itertools
import os
import secrets
from collections import deque
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from typing import Any, TypeAlias

import anyio
from anyio.streams.memory import MemoryObjectSendStream

from toolkit._protocol.jsonrpc import encode
from toolkit._transports.base import HTTP_NETWORK, MessageKind

from .auth import Identity
from .response import Receive, Send
from .sessions import SessionId
from .sessions import SessionRecord as Records

__all__ = [
    "ANSWER_ONLY",
    "AskIds",
    "AskTag",
    "Caller",
    "Exchange",
    "Flow",
    "Out",
    "Post",
    "SessionAccess",
    "SessionRecord",
]

#: What an exchange hands the response writer: a message and its kind; kind None is no message but the order to end
#: the HTTP response now, not the SSE stream (`ctx.close_sse_stream()`, `sse_close_after=`).
Out = tuple[str, MessageKind | None]

# The ids of the server's requests over HTTP: the app's tag in this process (`AskTag`), then a number.
_ask_numbers = itertools.count(1)
_TAG_SIZE = 8  # hex digits of the tag
# While a question waits, how often its call asks a shared session store whether the answer reached another worker.
_LOST_POLL = 0.2


@dataclass(slots=True)
class Caller:
    """Who sent a request: the verified identity (with `auth=`), the rate limit's key, the URL base for challenges,
    and the user a session id is bound to (the identity's subject; None without `auth=`)."""

    identity: Identity | None
    key: str
    base: str
    subject: str | None


@dataclass(slots=True)
class Post:
    """One POST being served: its message (decoded once, here) and what the client said about it."""

    message: dict[str, Any]
    headers: dict[str, str]
    receive: Receive
    send: Send
    json_ok: bool
    sse_ok: bool
    caller: Caller


class Flow(enum.Enum):
    """Where an exchange's input is."""

    OPEN = "open"
    """Messages come in and go out."""
    ENDING = "ending"
    """No more input: once the inbox is read and the connection's call is over, the input ends."""
    STOPPING = "stopping"
    """The server is stopping: the input ends now (the connection drains its call: `Connection._drain`), and what the
    call still sends goes out, its answer last."""
    CLOSED = "closed"
    """Nothing more goes out, nor comes in."""


class Exchange:
    """The transport of one HTTP request (a `RoutingTransport`): one message in, the messages the connection relates
    to it out.

    `request_id` is the request served (None for a GET stream, which takes the messages related to no request).
    The client's answers to the requests the server makes while serving it come in POSTs of their own: `deliver`
    hands them to the connection. After the answer, or once closed, `receive_message` ends the connection's input.
    """

    __slots__ = (
        "_first",
        "_inbox",
        "_out",
        "_request_id",
        "_wake",
        "asks",
        "close_stream",
        "flow",
        "idle",
        "lost",
        "scope",
    )
    network = HTTP_NETWORK  # what the server's spans say it is (`_transports/base.py`'s `Network`)

    def __init__(self, message: dict[str, Any] | None, request_id: Any, out: MemoryObjectSendStream[Out]) -> None:
        self._first = message
        self._request_id = request_id
        self._out = out
        self.flow = Flow.OPEN
        self.idle: Callable[[], Awaitable[None]] | None = None  # waits until the connection's call is over
        self._inbox: deque[dict[str, Any]] = deque()
        self._wake: anyio.Event | None = None
        self.asks: list[str] = []  # the ids of the requests made while serving it (see `AskIds`)
        # Once it asked, with a shared store: ends the questions whose answer reached another worker.
        self.lost: Callable[[], None] | None = None
        self.scope = anyio.CancelScope()  # what serving it runs in: DELETE cancels it
        # How its call ends the HTTP response early (`ctx.close_sse_stream()`): in a 2025-11-25 session only. The
        # connection reads it for each call's outlet (`pipeline.Outlet`).
        self.close_stream: Callable[[], Coroutine[Any, Any, None]] | None = None

    async def receive_message(self) -> dict[str, Any]:
        if self._first is not None:
            message, self._first = self._first, None
            return message
        while not self._inbox:
            if self.flow is Flow.ENDING and self.idle is not None:
                # A cancelled call first tells the client its own requests are cancelled too (basic/utilities).
                await self.idle()
                self.flow = Flow.CLOSED
            if self.flow is not Flow.OPEN:
                raise anyio.EndOfStream
            self._wake = anyio.Event()
            if self.lost is None:
                await self._wake.wait()
            else:  # a question waits: look now and then whether its answer reached another worker
                with anyio.move_on_after(_LOST_POLL):
                    await self._wake.wait()
                self.lost()
        return self._inbox.popleft()

    async def receive(self) -> str:
        return encode(await self.receive_message())

    def deliver(self, message: dict[str, Any]) -> None:
        """Hand the connection the client's answer to one of its requests (it came in a POST of its own)."""
        if self.flow is Flow.OPEN:
            self._inbox.append(message)
            self._signal()

    def end_input(self, last: dict[str, Any]) -> None:
        """Hand the connection its last message (the call's cancellation): its input ends once the call is over."""
        self.deliver(last)
        if self.flow is Flow.OPEN:
            self.flow = Flow.ENDING

    async def send(self, message: str, /) -> None:
        await self.send_related(message, None, MessageKind.MESSAGE)

    async def send_related(self, message: str, related: Any, kind: MessageKind, /) -> None:
        if related != self._request_id or self.flow is Flow.CLOSED:
            return  # a message for another stream (a POST never carries the session's unrelated ones)
        try:
            await self._out.send((message, kind))
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            return
        if kind is not MessageKind.MESSAGE:  # the answer: nothing more goes out
            self.close()

    def look_for_lost(self, lost: Callable[[], None]) -> None:
        """A question was asked: while it waits, `receive_message` calls `lost` now and then (it answers the
        questions whose answer reached another worker, and stops the looking once none waits)."""
        if self.lost is None:
            self.lost = lost
            self._signal()  # `receive_message` may be waiting already, without looking

    def _signal(self) -> None:
        if self._wake is not None:
            self._wake.set()
            self._wake = None

    def close(self) -> None:
        self.flow = Flow.CLOSED
        self._signal()

    def stop(self) -> None:
        """The server is stopping: a call's input ends now, its answer still goes out (`Flow.STOPPING`); a stream
        that serves no request (GET) closes."""
        if self._request_id is None:
            self.close()
        elif self.flow is not Flow.CLOSED:
            self.flow = Flow.STOPPING
            self._signal()

    async def aclose(self) -> None:
        self.close()


SessionRecord: TypeAlias = "Records[Exchange]"
"""What one process knows of a handshake-era session beyond its signed id (`sessions.SessionRecord`)."""


@dataclass(frozen=True, slots=True)
class SessionAccess:
    """How the handlers reach the app's sessions (`HttpApp`): the session a token names for a caller, the session a
    GET or DELETE names (None: answered there), what this process knows of one, and a session's end (DELETE: on
    every process that shares the store; here its calls are cancelled and its GET stream closed)."""

    session: Callable[[str, str | None], SessionId | None]
    session_of: Callable[[dict[str, str], Send, Caller], Awaitable[SessionId | None]]
    record: Callable[[SessionId], SessionRecord]
    end: Callable[[SessionId], Awaitable[None]]


class AnswerOnly:
    """The transport of a connection that answers one request in the caller's task: nothing goes through it."""

    network = HTTP_NETWORK

    async def receive(self) -> str:
        raise anyio.EndOfStream

    async def send(self, message: str, /) -> None:
        raise AssertionError("a request answered alone sent a message: " + message[:200])

    async def aclose(self) -> None:
        pass


ANSWER_ONLY = AnswerOnly()


class AskTag:
    """The prefix of the ids of an app's requests to clients in this process: a random tag, then `-`. An answer
    that reaches another worker is known there for what it is (docs/deploy.md: the answer must reach the process
    that asked). Made again in a process forked after the app was made (gunicorn `--preload`), so that two workers
    never share it."""

    __slots__ = ("_pid", "_prefix", "_worker")

    def __init__(self, worker: Callable[[], str] | None = None) -> None:
        self._prefix, self._pid = "", 0
        self._worker = worker  # with a backend: its name for this worker, where answers are sent (`fleet.py`)

    def prefix(self) -> str:
        if self._pid != os.getpid():
            tag = self._worker() if self._worker is not None else secrets.token_hex(_TAG_SIZE // 2)
            self._prefix, self._pid = f"{tag}-", os.getpid()
        return self._prefix

    def foreign(self, ask: str) -> str | None:
        """The tag of the process of this server that made the request `ask` when it is another one (another tag,
        then a number), else None."""
        tag, dash, number = ask.partition("-")
        if (
            _TAG_SIZE <= len(tag) <= 4 * _TAG_SIZE
            and all(c in "0123456789abcdefghijklmnopqrstuvwxyz" for c in tag)
            and bool(dash)
            and number.isdigit()
            and len(number) < 20
            and not ask.startswith(self.prefix())
        ):
            return tag
        return None


class AskIds:
    """The ids of the requests one call's connection sends its client (elicitation, sampling, ping).

    2025-11-25 over HTTP, the client answers each in a POST of its own, on the session, perhaps while other calls of
    that session ask too: every id is unique in this process (and names it, see `AskTag`), and taking one files it
    with the session (`asks`), so that the answer finds the connection that waits for it.
    """

    __slots__ = ("_asks", "_exchange", "_lost", "_prefix")

    def __init__(
        self, asks: dict[str, Exchange], exchange: Exchange, prefix: str, lost: Callable[[], None] | None
    ) -> None:
        self._asks = asks
        self._exchange = exchange
        self._prefix = prefix
        self._lost = lost

    def __iter__(self) -> AskIds:
        return self

    def __next__(self) -> str:
        ask = f"{self._prefix}{next(_ask_numbers)}"
        self._asks[ask] = self._exchange
        self._exchange.asks.append(ask)
        if self._lost is not None:
            self._exchange.look_for_lost(self._lost)
        return ask
