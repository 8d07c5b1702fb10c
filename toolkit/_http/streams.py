"""The 2025-11-25 streams a GET opens: the session's own stream (messages related to no request), or the resumption
of a POST's stream after `Last-Event-ID`; and DELETE, which ends a session and what runs in it."""

from __future__ import annotations

import math
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
from .sse import PRIMING_SINCE, EventStream, Resumption, priming

if TYPE_CHECKING:
    from toolkit._engine.registry import Registry as Server

__all__ = ["Streams"]

_FOLLOW = 5.0  # seconds one wait for a shared stream's next event lasts at most (then it asks again)


class Streams:
    """GET and DELETE of one app."""

    __slots__ = ("_close_after", "_live", "_ping", "_replay", "_retry", "_server", "_sessions", "fleet")

    def __init__(
        self,
        server: Server,
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
        _, sse_ok = accepts(headers.get("accept"))
        if not sse_ok:
            await plain(send, 406)
            return
        session = await self._sessions.session_of(headers, send, caller)
        if session is None:
            return
        record = self._sessions.record(session)
        retry = self._retry if session.state.version >= PRIMING_SINCE else None
        last = headers.get("last-event-id") or None  # empty: no id, as HTML's EventSource sends none
        found = self._replay.find(session.nonce, last) if last is not None else None
        if found is not None and found[0].id.startswith("p"):
            await self._resume(found[0], found[1], retry, receive, send)
        elif found is None and last is not None and self.fleet is not None and last.startswith("p"):
            await self._resume_shared(last, retry, receive, send)
        elif found is None and last is not None and not last.startswith("g"):
            # A POST's stream this process does not keep: expired, or served by another worker (docs/deploy.md).
            # Not 404, which would tell the client its session is gone.
            body = error_body(None, INVALID_REQUEST, "Bad request: Last-Event-ID names no stream kept here")
            await plain(send, 400, body, [JSON])
        elif found is None and record.stream is not None:
            # "only one" stream for the server's own messages, as the TS SDK answers; resuming it takes it over
            await plain(send, 409, error_body(None, INVALID_REQUEST, "Conflict: a GET stream is already open"), [JSON])
        else:
            writer = Writer(send, False, True, retry=retry)
            if found is None:  # a new stream (or one gone from here: what it carried while away is lost)
                stream, after = self._replay.open(session.nonce, "g"), 0
                writer.attach(stream, 0)
            else:
                stream, after = found
                self._replay.use(stream)
                writer.attach(stream, stream.take())
            await self._listen(record, session.state, writer, after, receive)

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
            close_at = anyio.current_time() + (self._close_after if self._close_after is not None else math.inf)
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
            end = retry + b"\n" if retry is not None and not stream.done else b""
            await send({"type": "http.response.body", "body": end})
            tg.cancel_scope.cancel()

    async def _resume_shared(self, last: str, retry: bytes | None, receive: Receive, send: Send) -> None:
        """GET + Last-Event-ID of a POST's stream that another worker serves (or served): its events after that id
        from the backend, then the rest as that worker keeps them, up to the answer; bounded by `sse_close_after`
        as a resumption here is."""
        assert self.fleet is not None
        backend = self.fleet.backend
        stream, _, seq = last.rpartition(":")
        after = int(seq) if seq.isdigit() and len(seq) < 10 else -1
        writing = stream.rpartition(".")[2]  # the worker that writes it
        try:
            found = await backend.since(stream, after) if after >= 0 else None
            gone = found is not None and not found.done and not await self.fleet.alive(writing)
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
            end = retry + b"\n" if retry is not None and not done else b""
            await send({"type": "http.response.body", "body": end})
            tg.cancel_scope.cancel()

    async def _follow(self, stream: str, after: int, found: Events, writer: Writer, retry: bytes | None) -> bool:
        """Write a shared stream's events as they come, until its last or `sse_close_after`; whether it ended (or
        its worker is gone: then the client's next resumption is told so)."""
        assert self.fleet is not None
        await writer.start_sse()
        if retry is not None:
            await writer.send({"type": "http.response.body", "body": priming(stream, after, retry), "more_body": True})
        close_at = anyio.current_time() + (self._close_after if self._close_after is not None else math.inf)
        while True:
            for number, frame in found.frames:
                if frame:
                    await writer.send({"type": "http.response.body", "body": frame, "more_body": True})
                after = max(after, number)
            if found.done:
                return True
            left = close_at - anyio.current_time()
            if left <= 0:
                return False
            try:
                found = await self.fleet.backend.since(stream, after, wait=min(left, _FOLLOW))
                if not found.frames and not found.done and not await self.fleet.alive(stream.rpartition(".")[2]):
                    return True
            except BackendError:  # the client resumes again; the events wait in the backend
                return False

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
