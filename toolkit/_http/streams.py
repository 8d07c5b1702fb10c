"""The 2025-11-25 streams a GET opens: the session's own stream (messages related to no request), or the resumption
of a POST's stream after `Last-Event-ID`; and DELETE, which ends a session and what runs in it."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import anyio

from toolkit._backend.base import BackendError, Events
from toolkit._engine.connection import Connection
from toolkit._engine.session import SessionState
from toolkit._protocol.jsonrpc import INVALID_REQUEST

from .exchange import Caller, Exchange, Out, SessionAccess, SessionRecord
from .fleet import Fleet, unavailable
from .headers import accepts
from .response import JSON, Receive, Send, Writer, error_body, plain
from .serving import watch
from .sessions import SessionId
from .sse import PRIMING_SINCE, EventStream, Resumption, priming

if TYPE_CHECKING:
    from toolkit._engine.registry import Registry

__all__ = ["Streams"]

_FOLLOW = 5.0  # seconds one wait for a shared stream's next event lasts at most (then it asks again)


@dataclass(frozen=True, slots=True)
class _Get:
    """A GET of a session's stream: the session, what this process keeps of it, the retry hint of its revision (None
    before the priming events), and the request's ASGI channels."""

    session: SessionId
    record: SessionRecord
    retry: bytes | None
    receive: Receive
    send: Send


class Streams:
    """GET and DELETE of one app."""

    __slots__ = ("_close_after", "_live", "_ping", "_replay", "_retry", "_server", "_sessions", "fleet")

    def __init__(
        self,
        server: Registry,
        resumption: Resumption,
        sessions: SessionAccess,
        live: set[Exchange],
    ) -> None:
        self._server = server
        self._replay, self._retry = resumption.store, resumption.retry
        self._sessions = sessions
        self._live = live  # open exchanges: they end when the server closes
        self._ping, self._close_after = resumption.ping, resumption.close_after
        self.fleet: Fleet | None = None
        """With a backend: a POST's stream served by another worker is resumed from there (`_resume_shared`)."""

    async def get(self, headers: dict[str, str], receive: Receive, send: Send, caller: Caller) -> None:
        """GET: the session's own stream, or (`Last-Event-ID`) the resumption of a stream it had."""
        _, sse_ok = accepts(headers.get("accept"))
        if not sse_ok:
            await plain(send, 406)
            return
        session = await self._sessions.session_of(headers, send, caller)
        if session is None:
            return
        retry = self._retry if session.state.version >= PRIMING_SINCE else None
        get = _Get(session, self._sessions.record(session), retry, receive, send)
        last = headers.get("last-event-id") or None  # empty: no id, as HTML's EventSource sends none
        if last is None:
            await self._open(get)
        else:
            await self._resume_named(get, last)

    async def _open(self, get: _Get) -> None:
        """A new GET stream for the session's messages that belong to no request; 409 while it has one."""
        if get.record.stream is not None:
            # "only one" stream for the server's own messages, as the TS SDK answers; resuming it takes it over
            body = error_body(None, INVALID_REQUEST, "Conflict: a GET stream is already open")
            await plain(get.send, 409, body, [JSON])
            return
        writer = Writer(get.send, False, True, retry=get.retry)
        writer.attach(self._replay.open(get.session.nonce, "g"), 0)
        await self._listen(get.record, get.session.state, writer, 0, get.receive)

    async def _resume_named(self, get: _Get, last: str) -> None:
        """GET + Last-Event-ID: the stream that id names, after it: a POST's (`p`), kept here or by another worker,
        or the session's GET stream (`g`), taken over (a new one when it is gone from here: what it carried while
        away is lost)."""
        found = self._replay.find(get.session.nonce, last)
        if found is None and last.startswith("g"):
            await self._open(get)
        elif found is None:
            await self._resume_elsewhere(get, last)
        elif found[0].id.startswith("p"):
            await self._resume(found[0], found[1], get.retry, get.receive, get.send)
        else:
            stream, after = found
            self._replay.use(stream)
            writer = Writer(get.send, False, True, retry=get.retry)
            writer.attach(stream, stream.take())
            await self._listen(get.record, get.session.state, writer, after, get.receive)

    async def _resume_elsewhere(self, get: _Get, last: str) -> None:
        """GET + Last-Event-ID of a POST's stream this process does not keep: from the backend, with one; else 400
        (expired, or served by another worker: docs/deploy.md). Not 404, which would tell the client its session is
        gone."""
        if self.fleet is not None and last.startswith("p"):
            await self._resume_shared(last, get.retry, get.receive, get.send)
            return
        body = error_body(None, INVALID_REQUEST, "Bad request: Last-Event-ID names no stream kept here")
        await plain(get.send, 400, body, [JSON])

    async def _listen(
        self, record: SessionRecord, state: SessionState, writer: Writer, after: int, receive: Receive
    ) -> None:
        """The GET stream: the session's messages that belong to no request (after what a resumption missed)."""
        if record.stream is not None:
            record.stream.close()  # resumed: the stream moves to this response
        stream = writer.stream
        assert stream is not None
        out, messages = anyio.create_memory_object_stream[Out](16)
        exchange = Exchange(None, None, out)
        record.stream = exchange
        connection = Connection(self._server, exchange, session=state)
        self._live.add(exchange)

        async def run_connection() -> None:
            async with out:
                await connection.run()

        try:
            with messages, out:
                async with anyio.create_task_group() as tg:
                    tg.start_soon(run_connection)
                    tg.start_soon(watch, receive, writer, tg.cancel_scope)
                    await writer.start_sse(after)
                    for _, frame in stream.since(after):  # what the client missed, then the stream goes on
                        await writer.send({"type": "http.response.body", "body": frame, "more_body": True})
                    await self._relay(messages, writer)
                    tg.cancel_scope.cancel()
        finally:
            self._live.discard(exchange)
            exchange.close()
            if record.stream is exchange:
                record.stream = None
            if stream.owner == writer.owner:
                stream.finish()  # not in use: kept for `replay_window` seconds
            writer.stream = None
        await writer.end()

    async def _relay(self, messages: anyio.abc.ObjectReceiveStream[Out], writer: Writer) -> None:
        """Write the session's messages on the GET stream, with a comment now and then while it is idle."""
        while True:
            with anyio.move_on_after(self._ping) as idle:
                try:
                    text, _ = await messages.receive()
                except anyio.EndOfStream:  # the session ended (DELETE) or the server is closing
                    return
            if idle.cancelled_caught:  # a comment keeps proxies from closing an idle stream
                await writer.send({"type": "http.response.body", "body": b": ping\n\n", "more_body": True})
                continue
            await writer.event(text)

    async def _resume(self, stream: EventStream, after: int, retry: bytes | None, receive: Receive, send: Send) -> None:
        """GET + Last-Event-ID of a POST's stream: its events after that id, then the rest as the call sends them,
        up to the answer (then the stream ends). Never another stream's events (transports §Resumability)."""
        if stream.done and after >= stream.seq:
            # Nothing more will come: 204 tells an SSE client to stop reconnecting (HTML's EventSource rule).
            await plain(send, 204)
            return
        owner = stream.take()
        writer = Writer(send, False, True, retry=retry)
        writer.attach(stream, owner)
        async with anyio.create_task_group() as tg:
            tg.start_soon(watch, receive, writer, tg.cancel_scope)
            await writer.start_sse(after)
            close_at = self._close_at()
            while stream.owner == owner:
                pending = stream.since(after)
                for seq, frame in pending:  # what is there is sent, however soon the response closes
                    await send({"type": "http.response.body", "body": frame, "more_body": True})
                    after = seq
                if pending:
                    continue  # more may have come while sending
                if stream.done:
                    break
                with anyio.move_on_after(close_at - anyio.current_time()) as waiting:
                    await stream.wait()
                if waiting.cancelled_caught:  # sse_close_after: polled again later
                    break
            await send({"type": "http.response.body", "body": _last_body(retry, stream.done)})
            tg.cancel_scope.cancel()

    async def _resume_shared(self, last: str, retry: bytes | None, receive: Receive, send: Send) -> None:
        """GET + Last-Event-ID of a POST's stream that another worker serves (or served): its events after that id
        from the backend, then the rest as that worker keeps them, up to the answer; bounded by `sse_close_after`
        as a resumption here is."""
        stream, after = _shared_event(last)
        try:
            found, gone = await self._look_up(stream, after)
        except BackendError as exc:
            await unavailable(send, None, exc)
            return
        if found is None or not found.known or gone:  # expired, never kept anywhere, or its call died with its worker
            why = "the server process that ran its call is gone" if gone else None
            body = error_body(None, INVALID_REQUEST, "Bad request: Last-Event-ID names no stream kept here", why)
            await plain(send, 400, body, [JSON])
            return
        if found.done and not found.frames:
            await plain(send, 204)  # nothing more will come (see `_resume`)
            return
        writer = Writer(send, False, True, retry=retry)
        async with anyio.create_task_group() as tg:
            tg.start_soon(watch, receive, writer, tg.cancel_scope)
            done = await self._follow(stream, after, found, writer, retry)
            await send({"type": "http.response.body", "body": _last_body(retry, done)})
            tg.cancel_scope.cancel()

    async def _look_up(self, stream: str, after: int) -> tuple[Events | None, bool]:
        """What the backend keeps of a shared stream after `after` (None for an id that names no event), and
        whether the worker that writes it is gone before its answer."""
        assert self.fleet is not None
        if after < 0:
            return None, False
        found = await self.fleet.backend.since(stream, after)
        if found.done:
            return found, False
        return found, not await self.fleet.alive(_writer_of(stream))

    async def _follow(self, stream: str, after: int, found: Events, writer: Writer, retry: bytes | None) -> bool:
        """Write a shared stream's events as they come, until its last or `sse_close_after`; whether it ended (or
        its worker is gone: then the client's next resumption is told so)."""
        assert self.fleet is not None
        await writer.start_sse()
        if retry is not None:
            await writer.send({"type": "http.response.body", "body": priming(stream, after, retry), "more_body": True})
        close_at = self._close_at()
        while True:
            after = await _write_events(writer, found, after)
            if found.done:
                return True
            left = close_at - anyio.current_time()
            if left <= 0:
                return False
            try:
                found = await self.fleet.backend.since(stream, after, wait=min(left, _FOLLOW))
                if await self._orphaned(stream, found):
                    return True
            except BackendError:  # the client resumes again; the events wait in the backend
                return False

    async def _orphaned(self, stream: str, found: Events) -> bool:
        """Whether a shared stream that brought nothing new will never bring more: the worker writing it is gone."""
        assert self.fleet is not None
        if found.frames or found.done:
            return False
        return not await self.fleet.alive(_writer_of(stream))

    def _close_at(self) -> float:
        """When a resumed stream starting now closes (`sse_close_after`; never without it)."""
        if self._close_after is None:
            return math.inf
        return anyio.current_time() + self._close_after

    async def delete(self, headers: dict[str, str], send: Send, caller: Caller) -> None:
        """End a session: its calls are cancelled, its GET stream closes, its events are dropped."""
        session = await self._sessions.session_of(headers, send, caller)
        if session is None:
            return
        try:
            await self._sessions.end(session)
        except BackendError as exc:
            await unavailable(send, None, exc)
            return
        self._replay.drop_session(session.nonce)
        await plain(send, 204)


def _shared_event(last: str) -> tuple[str, int]:
    """The stream a shared event id names, and the number of that event (-1 when it is not one)."""
    stream, _, seq = last.rpartition(":")
    if seq.isdigit() and len(seq) < 10:
        return stream, int(seq)
    return stream, -1


def _writer_of(stream: str) -> str:
    """The worker that writes a shared stream (the last part of its name)."""
    return stream.rpartition(".")[2]


async def _write_events(writer: Writer, found: Events, after: int) -> int:
    """Write the events the backend found of a shared stream; the number of the last one."""
    for number, frame in found.frames:
        if frame:
            await writer.send({"type": "http.response.body", "body": frame, "more_body": True})
        after = max(after, number)
    return after


def _last_body(retry: bytes | None, done: bool) -> bytes:
    """The last body of a resumed stream: a retry hint when the stream goes on (the client resumes it later)."""
    if retry is not None and not done:
        return retry + b"\n"
    return b""
