"""The HTTP response of one request: a plain one (an error, 202, 204), or the writer that chooses JSON or SSE lazily;
and the request's body read within a limit, with the plain 413 that answers one past it.

The ASGI 3 types every module of the HTTP wing uses are declared here, the lowest of them.
"""

from __future__ import annotations

import enum
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from typing import Any

from toolkit._backend.base import UNAVAILABLE
from toolkit._protocol.jsonrpc import (
    HEADER_MISMATCH,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    MISSING_CLIENT_CAPABILITY,
    PARSE_ERROR,
    UNSUPPORTED_PROTOCOL_VERSION,
    decode,
    encode,
    error_response,
    notification,
)

from .sse import EventStream, ReplayStore

__all__ = [
    "JSON",
    "RETRY_LATER",
    "Message",
    "Phase",
    "Receive",
    "Scope",
    "Send",
    "Writer",
    "error_body",
    "plain",
    "read_body",
    "session_gone",
    "status_of",
]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

JSON = (b"content-type", b"application/json")
RETRY_LATER = (b"retry-after", b"1")
"""What a `503` says: the shared state did not answer; try again in a second."""
_SSE_HEADERS = [
    (b"content-type", b"text/event-stream"),
    # no-transform: proxies must not compress (and so buffer) the stream; X-Accel-Buffering: the 2026-07-28 SHOULD
    (b"cache-control", b"no-cache, no-transform"),
    (b"x-accel-buffering", b"no"),
]
# 2026-07-28 streamable-http: these errors are answered with 400 (-32601 with 404); any other error is a result of
# the method and travels with 200, as the SDKs do.
_MODERN_STATUS = {
    PARSE_ERROR: 400,
    INVALID_REQUEST: 400,
    INVALID_PARAMS: 400,
    HEADER_MISMATCH: 400,
    MISSING_CLIENT_CAPABILITY: 400,
    UNSUPPORTED_PROTOCOL_VERSION: 400,
    METHOD_NOT_FOUND: 404,
}


def error_body(request_id: Any, code: int, message: str, *details: str | None, data: Any = None) -> bytes:
    return encode(error_response(request_id, code, message, *details, data=data)).encode()


def status_of(text: str, *, modern: bool = True) -> int:
    """The HTTP status of an error answer (errors are small: decoding one is cheap): `503` in either era when the
    shared state it needed (the backend, the task store) did not answer, as every request that needs it (the client
    tries again: `Retry-After`); else in 2026-07-28 its code's status, in 2025-11-25 `200`."""
    error = decode(text).get("error") or {}
    if error.get("message") == UNAVAILABLE:
        return 503
    code = error.get("code")
    return _MODERN_STATUS.get(code, 200) if modern and isinstance(code, int) else 200


async def plain(send: Send, status: int, body: bytes = b"", headers: Iterable[tuple[bytes, bytes]] = ()) -> None:
    """A whole response at once."""
    listed = list(headers)
    if status != 204:  # RFC 9110: a 204 carries no Content-Length
        listed.append((b"content-length", str(len(body)).encode()))
    await send({"type": "http.response.start", "status": status, "headers": listed})
    await send({"type": "http.response.body", "body": body})


async def read_body(receive: Receive, send: Send, limit: int, length: str | None) -> bytes | None:
    """The request's whole body, or None when there is nothing to act on: the client left, or the body is over
    `limit` bytes and `413` has been answered here. A `Content-Length` over the limit (`length`, the header's value)
    is refused before anything is read; a body sent in chunks, or larger than it said, once it passes the limit."""
    if length is not None and length.isdigit() and int(length) > limit:
        await plain(send, 413)
        return None
    event = await receive()  # most bodies come whole, in one event
    if event["type"] == "http.disconnect":
        return None
    body: bytes = event.get("body", b"")
    if len(body) > limit:
        await plain(send, 413)
        return None
    if not event.get("more_body", False):
        return body
    return await _rest_of_body(receive, send, limit, [body], len(body))


async def _rest_of_body(receive: Receive, send: Send, limit: int, chunks: list[bytes], size: int) -> bytes | None:
    """The rest of a body that comes in several events, after `chunks` (`size` bytes); None as `read_body` says."""
    more = True
    while more:
        event = await receive()
        if event["type"] == "http.disconnect":
            return None
        chunk = event.get("body", b"")
        size += len(chunk)
        if size > limit:
            await plain(send, 413)
            return None
        chunks.append(chunk)
        more = event.get("more_body", False)
    return b"".join(chunks)


async def session_gone(send: Send) -> None:
    # transports: a server "MUST respond to requests containing that session ID with HTTP 404". The id is never
    # echoed, and the body says the same for a forged, expired, ended or foreign one.
    body = error_body(None, INVALID_REQUEST, "Session not found", "initialize a new session")
    await plain(send, 404, body, [JSON])


class Phase(enum.Enum):
    """Where a `Writer`'s response is."""

    PENDING = "pending"
    """Nothing sent yet: the response can still be JSON."""
    STREAMING = "streaming"
    """An SSE response is open and written."""
    GONE = "gone"
    """The client left, or the response was closed early or resumed elsewhere: events are only kept (a stream)."""
    DONE = "done"
    """The response is complete."""


class Writer:
    """One HTTP response, chosen lazily: JSON when the answer comes alone, SSE from the first message before it.

    In a 2025-11-25 session the SSE events are numbered and kept for resumption (`sse.py`): `open` says where the
    stream is kept once SSE starts, and `retry` (the SSE `retry` line) also makes the response open with a priming
    event. Once a resumption took the stream over, or the response was closed early, events are only kept.
    """

    __slots__ = ("_json_ok", "_open", "_retry", "_sse_ok", "headers", "owner", "phase", "send", "stream")

    def __init__(
        self,
        send: Send,
        json_ok: bool,
        sse_ok: bool,
        open: tuple[ReplayStore, str] | None = None,
        retry: bytes | None = None,
    ) -> None:
        self.send = send
        self._json_ok = json_ok
        self._sse_ok = sse_ok
        self._open = open
        self._retry = retry
        self.owner = 0  # the stream's owner number while this response writes it
        self.stream: EventStream | None = None
        self.phase = Phase.PENDING
        self.headers: list[tuple[bytes, bytes]] = []

    def attach(self, stream: EventStream, owner: int) -> None:
        """Write `stream` (a GET stream resumed: `owner` is the resumption's number)."""
        self.stream = stream
        self.owner = owner

    def leave(self) -> None:
        """The client went away: nothing more is written."""
        self.phase = Phase.GONE

    async def start_sse(self, after: int = 0) -> None:
        self.phase = Phase.STREAMING
        await self.send({"type": "http.response.start", "status": 200, "headers": _SSE_HEADERS + self.headers})
        if self.stream is None and self._open is not None:
            store, nonce = self._open
            self.stream = store.open(nonce, "p")
            if self.stream.mirror is not None:  # known to the other workers from its first event on
                await self.stream.mirror(self.stream.id, 0, b"", False)
        if self.stream is not None and self._retry is not None:
            body = self.stream.priming(after, self._retry)
            await self.send({"type": "http.response.body", "body": body, "more_body": True})

    async def event(self, text: str) -> None:
        """A message before the answer."""
        if not self._sse_ok or (self.phase is Phase.GONE and self.stream is None):
            return  # a client that takes only JSON gets the answer, without what came before it
        if self.phase is Phase.PENDING:
            await self.start_sse()
        stream = self.stream
        if stream is None:
            body = b"event: message\ndata: " + text.encode() + b"\n\n"
            await self.send({"type": "http.response.body", "body": body, "more_body": True})
            return
        frame = stream.add(text)
        if stream.mirror is not None:
            await stream.mirror(stream.id, stream.seq, frame, False)
        if self.phase is Phase.GONE:
            return
        if stream.owner != self.owner:  # resumed elsewhere: this response ends, the stream goes on there
            self.phase = Phase.GONE
            await self.send({"type": "http.response.body", "body": b""})
            return
        await self.send({"type": "http.response.body", "body": frame, "more_body": True})

    async def notify(self, method: str, params: dict[str, Any] | None, related: Any = None) -> None:
        """A notification of a call served in its request's task (the outlet's `notify`: `related` is that request,
        whose response this is): an `event`; a client gone mid-write is left (the call goes on unheard in
        2025-11-25; in 2026-07-28 its watcher cancels it)."""
        try:
            await self.event(notification(method, params))
        except OSError:
            self.leave()

    async def final(self, text: str, status: int) -> None:
        """The answer: the whole JSON response, or the SSE stream's last event."""
        if self.phase is Phase.PENDING:
            if self._json_ok:
                self.phase = Phase.DONE
                body = text.encode()
                # With its length the body goes out as is, not chunked (less for the server and the client to frame).
                headers = [JSON, (b"content-length", str(len(body)).encode()), *self.headers]
                if status == 503:
                    headers.append(RETRY_LATER)
                await self.send({"type": "http.response.start", "status": status, "headers": headers})
                await self.send({"type": "http.response.body", "body": body})
                return
            await self.start_sse()
        stream = self.stream
        gone = self.phase is Phase.GONE
        self.phase = Phase.DONE
        if stream is None:
            if not gone:
                body = b"event: message\ndata: " + text.encode() + b"\n\n"
                await self.send({"type": "http.response.body", "body": body})
            return
        frame = stream.add(text)
        stream.finish()
        if stream.mirror is not None:
            await stream.mirror(stream.id, stream.seq, frame, True)
        if not gone:
            await self.send({"type": "http.response.body", "body": frame if stream.owner == self.owner else b""})

    async def close(self) -> None:
        """SEP-1699: end the HTTP response now, not the SSE stream; the client resumes it with GET + Last-Event-ID.

        Only where the client can resume: a 2025-11-25 session whose client takes SSE.
        """
        if self.phase in (Phase.GONE, Phase.DONE) or self._retry is None or not self._sse_ok:
            return
        if self._open is None and self.stream is None:
            return
        if self.phase is Phase.PENDING:
            await self.start_sse()  # the priming event gives the client an id to resume from
        self.phase = Phase.GONE
        await self.send({"type": "http.response.body", "body": self._retry + b"\n"})

    async def end(self) -> None:
        """End a response that got no answer (cancelled, or the server is closing)."""
        stream = self.stream
        if stream is not None:
            if stream.mirror is not None and not stream.done:  # nothing more will come: resumptions elsewhere end
                await stream.mirror(stream.id, stream.seq + 1, b"", True)
            stream.finish()
        if self.phase in (Phase.GONE, Phase.DONE):
            return
        if self.phase is Phase.PENDING:
            self._open = None  # no id to resume from: there is nothing more to come
            if self._sse_ok:
                await self.start_sse()
            else:
                await self.send({"type": "http.response.start", "status": 202, "headers": self.headers})
        self.phase = Phase.DONE
        await self.send({"type": "http.response.body", "body": b""})
