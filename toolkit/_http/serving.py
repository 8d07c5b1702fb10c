"""Serving one request, its messages on the request's own response, in one of the protocol's three ways (`Shape`,
by what it may send before its answer): its answer alone, in the request's task by the one answering connection
(`answer`); its notifications streamed first, in the request's task too (`stream` in 2026-07-28, a watcher beside it
noticing the client leaving; a `resumable` writer in a 2025-11-25 session); or, for a 2025-11-25 session's questions,
on a connection of its own, with its loop and an exchange (`serve`). Whether a 2026-07-28 call is watched for its
client leaving is a property of its own (`Serving.watched`)."""

from __future__ import annotations

import contextlib
import enum
import functools
import inspect
import logging
import sys
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from toolkit._backend.base import UNAVAILABLE, BackendError
from toolkit._engine.connection import Connection
from toolkit._engine.session import SessionState
from toolkit._protocol.jsonrpc import INTERNAL_ERROR, encode, error_response, shutting_down
from toolkit._transports.base import MessageKind

from .exchange import ANSWER_ONLY, AskIds, AskTag, Caller, Exchange, Out, Post, SessionRecord
from .fleet import Fleet
from .gate import CallGate
from .response import JSON, RETRY_LATER, Receive, Writer, error_body, plain, status_of
from .session_store import ProcessSessionStore, SessionStore
from .sessions import Direct
from .sse import PRIMING_SINCE, Resumption

if TYPE_CHECKING:
    import asyncio

    from toolkit._engine.registry import Registry as Server

__all__ = ["MISROUTED", "Calls", "InSession", "Serving", "Shape", "watch"]

logger = logging.getLogger("toolkit.http")

# Requests that send nothing but their answer, whatever the server's tools (see `Calls.serving`).
_ANSWERED_ALONE = frozenset(
    {
        "tools/list",
        "server/discover",
        "ping",
        "tasks/get",
        "tasks/update",
        "tasks/cancel",
        "tasks/list",
        "resources/list",
        "resources/read",
    }
)  # tasks/result may ask the client (a 2025-11-25 task's questions): it runs on a connection of its own
# What both workers say when a 2025-11-25 answer reaches the one that did not ask, without a backend (with one, the
# answer is sent on to the worker that asked: `fleet.py`).
MISROUTED = (
    "give the app a shared backend (http_app(backend=...), docs/backend.md), route each session's requests to one "
    "process by its Mcp-Session-Id, or use protocol 2026-07-28 (docs/deploy.md#several-workers)"
)

# How long a shared store keeps a misrouted answer: the asking worker reads it within its poll, while its question
# waits.
_LOST_TTL = 300.0

Closer = Callable[[], Coroutine[Any, Any, None]]


@dataclass(slots=True)
class InSession:
    """A 2025-11-25 session's request: what this process knows of the session, its state, and its nonce (made for
    each request: not frozen, whose fields cost an `object.__setattr__` each)."""

    record: SessionRecord
    state: SessionState
    nonce: str


async def _disconnected(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass


async def watch(
    receive: Receive,
    writer: Writer,
    cancel: anyio.CancelScope | None,
    closing: tuple[Closer, float] | None = None,
    scope: anyio.CancelScope | None = None,
) -> None:
    """Watch for the client leaving, in `scope` (which ends the watch). 2026-07-28 (`cancel`): closing the stream
    cancels the request. 2025-11-25: "Disconnection SHOULD NOT be interpreted as the client cancelling its
    request": the call goes on, unheard.

    `closing`: with `sse_close_after=` (SEP-1699 polling), how to close the response early and after how long; the
    client resumes it with GET.
    """
    with scope if scope is not None else anyio.CancelScope():
        if closing is not None:
            close, close_after = closing
            with anyio.move_on_after(close_after) as timer:
                await _disconnected(receive)
            if timer.cancelled_caught:
                await close()
                await _disconnected(receive)
        else:
            await _disconnected(receive)
        writer.leave()
        if cancel is not None:
            cancel.cancel()


async def _left(receive: Receive, writer: Writer, scope: anyio.CancelScope) -> None:
    """Wait for the client to leave, then cancel `scope` (a 2026-07-28 call streamed in its request's task): closing
    the stream cancels the request."""
    while (await receive())["type"] != "http.disconnect":
        pass
    writer.leave()
    scope.cancel()


def _watch_on_asyncio(receive: Receive, writer: Writer, scope: anyio.CancelScope) -> Callable[[], object] | None:
    """On asyncio, `_left` in a bare task, started once the call first gives the loop a turn; how to stop it. None
    elsewhere (trio): the caller runs `_left` in a task group.

    A task group and anyio's task around every streamed call were about a quarter of its server CPU (py-spy, issue
    23); a bare task keeps the guarantee (the call is cancelled when its client closes the stream) for less. And a
    call that never gives the loop a turn (an async tool that awaits nothing) needs no watcher at all: a cancellation
    reaches a call only where it awaits, and one that starts later still hears a client that left before (the
    `http.disconnect` waits in `receive`). So the task is made at the loop's next turn, and a call over by then costs
    one scheduled callback, cancelled."""
    aio = sys.modules.get("asyncio")  # not imported: not running on asyncio
    if aio is None:
        return None
    try:
        loop: asyncio.AbstractEventLoop = aio.get_running_loop()
    except RuntimeError:  # trio
        return None
    task: asyncio.Task[None] | None = None

    def failed(done: asyncio.Task[None]) -> None:
        if not done.cancelled() and done.exception() is not None:  # `receive` failed: nobody is listening either
            logger.debug("the request's receive failed while its call ran", exc_info=done.exception())
            writer.leave()
            scope.cancel()

    def start() -> None:
        nonlocal task
        task = loop.create_task(_left(receive, writer, scope))
        task.add_done_callback(failed)

    handle = loop.call_soon(start)

    def stop() -> None:
        if task is None:
            handle.cancel()
        else:
            task.cancel()

    return stop


def _stopped(scope: anyio.CancelScope, message: dict[str, Any]) -> tuple[str, MessageKind] | None:
    """The answer of a call that gave none: "Server shutting down" when the server's stop cancelled it past the
    grace (`HttpApp.stopping` set the deadline of its scope), so that its client does not wait for one that cannot
    come; None when its client cancelled it (who then waits for no answer)."""
    if anyio.current_time() < scope.deadline:
        return None
    return encode(shutting_down(message["id"])), MessageKind.ERROR


async def _reply(
    post: Post, scope: anyio.CancelScope, reply: tuple[str, MessageKind] | None, writer: Writer | None, *, modern: bool
) -> None:
    """Write the reply of a call served in its request's task: its answer with its HTTP status (2026-07-28: an error
    has its own; 2025-11-25: 200, but 503 for shared state down), on `writer` when it has one, else as plain JSON;
    "Server shutting down" when the server's stop cancelled it (`_stopped`); nothing when its client cancelled it
    (basic/utilities/cancellation): the response ends empty."""
    if reply is None:
        reply = _stopped(scope, post.message)
    if reply is None:
        await (writer if writer is not None else Writer(post.send, True, post.sse_ok)).end()
        return
    text, kind = reply
    status = status_of(text, modern=modern) if kind is MessageKind.ERROR else 200
    if writer is not None:
        await writer.final(text, status)
        return
    await plain(post.send, status, text.encode(), [JSON, RETRY_LATER] if status == 503 else [JSON])


def _forget(record: SessionRecord, request_id: Any, exchange: Exchange) -> None:
    """A call served on its own leaves its session's tables: its id, and the ids of the questions it asked."""
    record.calls.pop(request_id, None)
    for ask in exchange.asks:
        record.asks.pop(ask, None)


class Shape(enum.Enum):
    """The protocol's three ways of serving a request over HTTP, by what it may send before its answer.

    ANSWER: nothing (`tools/list`, a tool without a Context or `confirm=`): answered in the request's task, one JSON
    response (`answer`). STREAM: notifications (progress, logs: a tool whose Context only notifies or reads,
    `Tool.only_notifies`): in the request's task, its notifications on the response as SSE before the answer
    (`stream`; in a 2025-11-25 session `answer` with a `resumable` writer). CONNECTION: questions (anything that may
    ask the client): in a 2025-11-25 session they are requests whose answers come back in POSTs of their own, so the
    request runs on a connection of its own (`serve`); in 2026-07-28 they are results, so it is streamed as STREAM."""

    ANSWER = "answer"
    STREAM = "stream"
    CONNECTION = "connection"


@dataclass(frozen=True, slots=True)
class Serving:
    """How a request is served (`Calls.serving`): its `Shape`, and whether, in 2026-07-28, it is `watched` for its
    client leaving (there, closing the stream cancels the request; a 2025-11-25 session's never is: "Disconnection
    SHOULD NOT be interpreted as the client cancelling its request").

    Every STREAM and CONNECTION request is watched. An ANSWER one is when it can notice: an async tool. A sync tool
    on its worker thread cannot be stopped, so its call is answered without a watcher beside it (no task group, no
    task: the cheapest path, `answer`); the client leaving then drops an answer it no longer waits for."""

    shape: Shape
    watched: bool


_ANSWERED = Serving(Shape.ANSWER, watched=False)
_ANSWERED_WATCHED = Serving(Shape.ANSWER, watched=True)
_STREAMED = Serving(Shape.STREAM, watched=True)
_OWN_CONNECTION = Serving(Shape.CONNECTION, watched=True)


def _serving_of(tool: Any, tool_middleware: bool) -> Serving:
    """How a tool's calls are served, worked out once per tool. A static read of its source (`Tool.only_notifies`,
    False whenever it cannot tell: a wrapper, a Context handed on) only ever picks a cheaper way that serves the call
    the same (tests/http/test_http_wrapped.py)."""
    # a call through tool middleware (the server's, or the tool's own) hands its Context to the middleware, which may
    # ask with it whatever the tool's own source does
    if tool.only_notifies and not (tool.middleware or tool_middleware):
        return _STREAMED
    if tool.may_ask:
        return _OWN_CONNECTION
    call = getattr(tool.fn, "__call__", None)  # noqa: B004 - an object whose __call__ is async
    is_async = inspect.iscoroutinefunction(tool.fn) or inspect.iscoroutinefunction(call)
    return _ANSWERED_WATCHED if is_async else _ANSWERED


class Calls:
    """Serves the requests of one app (`HttpApp`): in their own task where they can be, else each on a connection of
    its own."""

    __slots__ = (
        "_gate",
        "_initialized",
        "_resumption",
        "_servings",
        "_stateless",
        "_store",
        "answering",
        "close_after",
        "fleet",
        "live",
        "server",
        "streaming",
        "tag",
    )

    def __init__(
        self,
        server: Server,
        gate: CallGate,
        resumption: Resumption,
        store: SessionStore,
        *,
        initialized: Callable[[Connection, Writer, Caller], None],
    ) -> None:
        self.server = server
        self._gate = gate
        self._resumption = resumption
        self._store = store
        self._initialized = initialized  # a session was opened: it gets its id (`HttpApp`)
        self.close_after = resumption.close_after  # sse_close_after=
        self.live: set[Exchange] = set()  # open exchanges: they end when the server closes
        # The calls served in their request's task (`stream`; a session's in `answer`): cancelled past the grace at
        # shutdown (`HttpApp.stopping`).
        self.streaming: set[anyio.CancelScope] = set()
        self.answering: set[anyio.CancelScope] = set()
        self.tag = AskTag()  # the prefix of the ids of the server's requests in this process
        self.fleet: Fleet | None = None  # with a backend (`HttpApp`): setLevel is told to the other workers
        # 2026-07-28 requests answered alone carry all their state: one connection (made once, never run) answers
        # them all, in each request's task. It holds no request's state (`Connection.answer` runs no loop, counts
        # nothing in flight), so requests answered at the same time do not meet.
        self._stateless = Connection(server, ANSWER_ONLY)
        self._servings: dict[str, tuple[Any, Serving]] = {}  # by tool name: (the tool, how its calls are served)

    def serving(self, message: dict[str, Any]) -> Serving:
        """How a request is served (`Serving`): `tools/list`, `ping`, `server/discover` and the task reads send
        nothing but their answer; a call, as its tool can do (worked out once per tool, again if it was replaced);
        any other request may ask."""
        method = message["method"]
        if method != "tools/call":
            return _ANSWERED if method in _ANSWERED_ALONE else _OWN_CONNECTION
        params = message.get("params") or {}
        name = params.get("name")
        search = self.server.search
        if search is not None:  # search_tools answers alone; a call_tool call is served as its tool's
            if name == search.options.search_name:
                return _ANSWERED
            name = search.inner_name(params)
        if type(name) is not str:
            return _OWN_CONNECTION
        tool = self.server.tools.get(name)
        if tool is None:
            return _OWN_CONNECTION
        cached = self._servings.get(name)
        if cached is None or cached[0] is not tool:
            cached = self._servings[name] = (tool, _serving_of(tool, bool(self.server.tool_middleware)))
        return cached[1]

    def resumable(self, post: Post, session: InSession) -> Writer:
        """The response of a 2025-11-25 session's request that may send more than its answer: SSE events numbered and
        kept for resumption, with the priming event of the revisions that have it. For a connection of its own
        (`serve`), or for a call that only notifies served in its request's task (`answer(post, session,
        resumable(...))`, `Shape.STREAM`): there the client leaving does not cancel it (2025-11-25: "Disconnection
        SHOULD NOT be interpreted as the client cancelling its request")."""
        resumption = self._resumption
        retry = resumption.retry if session.state.version >= PRIMING_SINCE else None
        return Writer(post.send, post.json_ok, post.sse_ok, (resumption.store, session.nonce), retry)

    async def answer(self, post: Post, session: InSession | None = None, writer: Writer | None = None) -> None:
        """Serve a request that sends nothing but its answer in this task, with a plain JSON reply: no connection
        loop, no task group, no watcher, and the message already decoded. Measured: 2.6x the calls/s of `serve` on
        one uvicorn worker (docs/performance.md#streamable-http). A 2025-11-25 session's call is in the session's table
        meanwhile, so that `notifications/cancelled` and DELETE reach it; every call is in `answering`, so that the
        server's stop reaches it (past the grace it answers "Server shutting down"). With a `writer` (`resumable`), the
        call's notifications go on it before the answer."""
        message = post.message
        if not self._gate.open and message["method"] == "tools/call" and await self._gate.refused(post):
            return
        record = state = None
        if session is None:
            scope = anyio.CancelScope()  # cancelled past the grace at shutdown, as a session's call is
        else:
            record, state = session.record, session.state
            call = record.calls[message["id"]] = Direct()
            scope = call.scope
        sink = writer.notify if writer is not None else None
        self.answering.add(scope)
        reply = None
        try:
            with scope:
                reply = await self._stateless.answer(message, sink, state)
        finally:
            if record is not None:
                record.calls.pop(message["id"], None)
            self.answering.discard(scope)
        await _reply(post, scope, reply, writer, modern=session is None)

    async def stream(self, post: Post) -> None:
        """Serve a 2026-07-28 request in this task, on the connection that answers alone (`_stateless`), watched
        (`Serving.watched`): a call of a tool that may notify or ask (a Context), or that a closed stream must stop
        (async). Its questions are results in this era, never requests, so it needs no connection loop: its
        notifications go straight on the response (SSE from the first one), and the client leaving cancels it (a
        watcher beside it)."""
        message = post.message
        if not self._gate.open and message["method"] == "tools/call" and await self._gate.refused(post):
            return
        if len(self.streaming) >= self.server.max_concurrent_requests:  # here, a process's calls served so
            body = error_body(message["id"], INTERNAL_ERROR, "Too many requests in flight")
            await plain(post.send, 200, body, [JSON])
            return
        writer = Writer(post.send, post.json_ok, post.sse_ok)
        sink = writer.notify
        reply = None
        scope = anyio.CancelScope()
        self.streaming.add(scope)
        try:
            stop = _watch_on_asyncio(post.receive, writer, scope)
            if stop is not None:  # asyncio: a bare task watches, no task group around the call
                try:
                    with scope:
                        reply = await self._stateless.answer(message, sink)
                finally:
                    stop()
            else:
                async with anyio.create_task_group() as tg:
                    tg.start_soon(_left, post.receive, writer, scope)
                    with scope:
                        reply = await self._stateless.answer(message, sink)
                    tg.cancel_scope.cancel()
        finally:
            self.streaming.discard(scope)
        await _reply(post, scope, reply, writer, modern=True)

    async def serve(self, post: Post, session: InSession | None, *, watched: bool = False) -> None:
        """Serve one request on a connection of its own; its messages go on this request's response. `watched`: the
        client leaving cancels it (2026-07-28's `subscriptions/listen`).

        In a 2025-11-25 session, the SSE events are numbered and kept for resumption, and the response may be closed
        before the answer (`ctx.close_sse_stream()`, `sse_close_after=`) while the call goes on.
        """
        request_id = post.message["id"]
        if not self._gate.open and post.message["method"] == "tools/call" and await self._gate.refused(post):
            return
        out, messages = anyio.create_memory_object_stream[Out](16)
        exchange = Exchange(post.message, request_id, out)
        connection = self._connection(exchange, session)
        exchange.idle = connection.wait_idle
        writer, closer = self._writer(post, session, connection, out)
        exchange.close_stream = closer

        async def run_connection() -> None:
            async with out:
                await connection.run()

        answered = False  # stays False when the client left (2026-07-28: that cancels the call)
        self.live.add(exchange)
        try:
            with messages, out:
                async with anyio.create_task_group() as tg:
                    if session is not None:
                        exchange.scope = tg.cancel_scope
                        session.record.calls[request_id] = exchange
                    tg.start_soon(run_connection)
                    watcher = anyio.CancelScope()
                    cancel = tg.cancel_scope if watched else None
                    tg.start_soon(watch, post.receive, writer, cancel, self._closing(closer), watcher)
                    answered = await self._relay(messages, writer, post, connection, session)
                    watcher.cancel()
            if not answered:
                await writer.end()
        finally:
            self.live.discard(exchange)
            exchange.close()
            if session is not None:
                _forget(session.record, request_id, exchange)

    def _connection(self, exchange: Exchange, session: InSession | None) -> Connection:
        """The connection of a request served on its own: in a session, with the session's state and the ids of the
        requests its call sends the client."""
        if session is None:
            return Connection(self.server, exchange)
        return Connection(self.server, exchange, session=session.state, request_ids=self._ask_ids(session, exchange))

    def _closing(self, closer: Closer | None) -> tuple[Closer, float] | None:
        """With `sse_close_after=` (SEP-1699 polling), how the watcher closes a response early, and after how long
        (None: never)."""
        if closer is None or self.close_after is None:
            return None
        return closer, self.close_after

    async def _relay(
        self,
        messages: MemoryObjectReceiveStream[Out],
        writer: Writer,
        post: Post,
        connection: Connection,
        session: InSession | None,
    ) -> bool:
        """Write what the connection sends on the response, up to the answer; whether it came."""
        async for text, kind in messages:
            if kind is MessageKind.MESSAGE:
                await writer.event(text)
            elif kind is None:
                await writer.close()
            else:
                await self._final((text, kind), writer, post, connection, session)
                return True
        return False

    async def _final(
        self,
        answer: tuple[str, MessageKind],
        writer: Writer,
        post: Post,
        connection: Connection,
        session: InSession | None,
    ) -> None:
        """Write the answer of a request served on its own, with its HTTP status (2026-07-28: an error has its own;
        2025-11-25: 200, 503 for shared state down); an `initialize` opens its session (`HttpApp`)."""
        text, kind = answer
        status = status_of(text, modern=False) if kind is MessageKind.ERROR else 200
        if session is not None:
            text = await self._kept_level(text, kind, post, connection, session)
        elif post.message["method"] == "initialize":
            self._initialized(connection, writer, post.caller)
        elif kind is MessageKind.ERROR:
            status = status_of(text)
        await writer.final(text, status)

    async def _kept_level(
        self, text: str, kind: MessageKind, post: Post, connection: Connection, session: InSession
    ) -> str:
        """`logging/setLevel` sets the session's level for its next requests here (and, with a backend, on every
        worker); any other call keeps the level it started with to itself (writing it back would undo a later
        setLevel). The answer to send: `text`, or an error when the backend failed."""
        if post.message["method"] != "logging/setLevel" or connection.session is None:
            return text
        session.record.log_level = connection.session.log_level
        if self.fleet is None or kind is MessageKind.ERROR:
            return text
        return await self._share_level(post, session, connection.session.log_level, text)

    async def _share_level(self, post: Post, session: InSession, level: Any, text: str) -> str:
        """`logging/setLevel` on every worker: the session's level in the backend; the answer (or, when the backend
        failed, an error saying so)."""
        assert self.fleet is not None
        try:
            await self.fleet.set_level(session.nonce, level)
        except BackendError as exc:
            return encode(error_response(post.message["id"], INTERNAL_ERROR, UNAVAILABLE, str(exc)))
        return text

    def _writer(
        self, post: Post, session: InSession | None, connection: Connection, out: MemoryObjectSendStream[Out]
    ) -> tuple[Writer, Closer | None]:
        """The response of a request, and how its call closes it early (None: it cannot, outside a session)."""
        if session is None:
            return Writer(post.send, post.json_ok, post.sse_ok), None
        writer = self.resumable(post, session)

        async def close() -> None:  # ctx.close_sse_stream(): after what the call sent before it
            await connection.flush()
            with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
                await out.send(("", None))

        return writer, close

    # -- the server's questions, answered in POSTs of their own (2025-11-25) ---------------------------------

    def misrouted(self, nonce: str, ask: str) -> None:
        """An answer to a question another process asked reached this one: the call that asked waits for an answer
        it will never get; it learns it from a shared store (it looks while its question waits: `_end_lost`).
        Routing it is issue 26."""
        shared = not isinstance(self._store, ProcessSessionStore)
        if shared:
            try:
                self._store.end(f"{nonce}/{ask}", time.time() + _LOST_TTL)
            except Exception:  # a store that is down: the client is still told (by the caller)
                logger.warning("could not note a misrouted answer in the session store", exc_info=True)
        logger.warning(
            "an answer to request %r reached a process that did not make it (%s): %s",
            ask,
            "the call ends with an error"
            if shared
            else "with no shared session_store=, the call that asked waits until Server(client_request_timeout=)",
            MISROUTED,
        )

    def _ask_ids(self, session: InSession, exchange: Exchange) -> AskIds:
        """The ids of the requests a session's call sends its client. With a shared store, the call also learns when
        an answer to one reached another worker (the default keeps to this process)."""
        lost = None
        if not isinstance(self._store, ProcessSessionStore):
            lost = functools.partial(self._end_lost, exchange, session.record, session.nonce)
        return AskIds(session.record.asks, exchange, self.tag.prefix(), lost)

    def _end_lost(self, exchange: Exchange, record: SessionRecord, nonce: str) -> None:
        """Answer each question of `exchange` whose answer reached another worker (`Posts._take` there wrote it in
        the shared store) with an error, so that the call goes on instead of waiting for what cannot come."""
        waiting = False
        for ask in exchange.asks:
            if record.asks.get(ask) is not exchange:
                continue  # answered
            try:
                lost = self._store.is_ended(f"{nonce}/{ask}")
            except Exception:  # a store that is down ends no call that only waits: looked at again next time
                logger.warning("could not look up a question in the session store", exc_info=True)
                lost = False
            if lost:
                del record.asks[ask]
                why = f"no answer can come: the client's answer went to another process of this server; {MISROUTED}"
                exchange.deliver(error_response(ask, INTERNAL_ERROR, why))
            else:
                waiting = True
        if not waiting:  # nothing to look for until the next question (`AskIds`)
            exchange.lost = None
