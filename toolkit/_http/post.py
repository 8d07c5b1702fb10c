"""A POST: its body read and decoded once, its era found, the checks of that era, then served (`serving.py`); or, in a
2025-11-25 session, the client's notification or its answer to a question of the server."""

from __future__ import annotations

import logging
from collections.abc import Awaitable
from dataclasses import replace
from typing import Any

from toolkit._backend.base import BackendError
from toolkit._engine.eras import HANDSHAKE, STATELESS_VERSIONS
from toolkit._engine.telemetry import HTTP_NETWORK, SESSION_ID
from toolkit._protocol.jsonrpc import (
    HEADER_MISMATCH,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    check_message,
    decode,
    encode,
    error_response,
)
from toolkit._protocol.meta import VERSION_KEY

from .exchange import Caller, Post, SessionAccess, SessionRecord
from .fleet import unavailable
from .headers import MetaHeaders, accepts
from .response import JSON, Receive, Send, error_body, plain, read_body, session_gone
from .serving import MISROUTED, Calls, InSession, Shape
from .sessions import SessionId

__all__ = ["Posts"]

logger = logging.getLogger("toolkit.http")

_ACCEPTS_MAX = 64  # distinct Accept values remembered (a flood of others is parsed each time)
_STATELESS = ", ".join(STATELESS_VERSIONS)  # the revisions served without a session, as errors name them
_STATELESS_HEADERS = frozenset(STATELESS_VERSIONS)


class Posts:
    """The POSTs of one app."""

    __slots__ = ("_accepts", "_calls", "_headers", "_legacy", "_max_body", "_sessions", "_unset")

    def __init__(self, calls: Calls, sessions: SessionAccess, max_body_size: int, legacy: bool, unset: Any) -> None:
        self._calls = calls
        self._sessions = sessions
        self._max_body = max_body_size
        self._legacy = legacy  # 2025-11-25 served too
        self._unset = unset  # a session's log level no request of this process set
        self._headers = MetaHeaders(calls.server)
        # What each `Accept` value takes (JSON, SSE), worked out once per value: a server's clients send a few.
        self._accepts: dict[str | None, tuple[bool, bool]] = {}

    async def post(
        self, headers: dict[str, str], repeated: set[str], receive: Receive, send: Send, caller: Caller
    ) -> None:
        """A POST: its body's one message, served in its era (2026-07-28, or a 2025-11-25 session, which
        `initialize` opens)."""
        content_type = headers.get("content-type", "")
        if content_type != "application/json" and content_type.split(";", 1)[0].strip().lower() != "application/json":
            await plain(send, 415)
            return
        accept = headers.get("accept")
        taken = self._accepts.get(accept)
        if taken is None:
            taken = await self._new_accept(accept, send)
            if taken is None:
                return
        json_ok, sse_ok = taken
        message = await self._read(headers, receive, send)
        if message is None:
            return
        post = Post(message, headers, receive, send, json_ok, sse_ok or not json_ok, caller)
        if _is_stateless(message, headers):
            await self._stateless(post, repeated)
        elif message.get("method") == "initialize" and self._legacy:
            await self._calls.serve(post, None)
        else:
            await self._handshake(post)

    async def _new_accept(self, accept: str | None, send: Send) -> tuple[bool, bool] | None:
        """What an `Accept` value not seen yet takes (JSON, SSE), remembered (a server's clients send a few); None
        when it takes neither (answered: 406)."""
        taken = accepts(accept)
        json_ok, sse_ok = taken
        if not (json_ok or sse_ok):
            await plain(send, 406)
            return None
        if len(self._accepts) < _ACCEPTS_MAX:
            self._accepts[accept] = taken
        return taken

    async def _read(self, headers: dict[str, str], receive: Receive, send: Send) -> dict[str, Any] | None:
        """The body's one message, decoded; None when the request was answered here (413, 400, or gone)."""
        body = await read_body(receive, send, self._max_body, headers.get("content-length"))
        if body is None:
            return None
        message, problem = _decoded(body)
        if problem is not None:
            await plain(send, 400, encode(problem).encode(), [JSON])
            return None
        return message  # type: ignore[no-any-return]

    async def _stateless(self, post: Post, repeated: set[str]) -> None:
        """A request of a stateless era (2026-07-28): its headers checked against its body, then served."""
        message = post.message
        if "id" not in message:  # no client notification is defined over HTTP in 2026-07-28: accepted, ignored
            if self._calls.server.telemetry is not None:  # its SERVER span all the same
                self._calls.server.telemetry.notified(message, None, HTTP_NETWORK)
            await plain(post.send, 202)
            return
        mismatch = self._headers.mismatch(message, post.headers, repeated)
        if mismatch is not None:
            body = error_body(message["id"], HEADER_MISMATCH, "Header mismatch", mismatch)
            await plain(post.send, 400, body, [JSON])
        elif message["method"] == "initialize":
            # 2026-07-28 has no handshake: an initialize carrying the per-request _meta names a removed method.
            why = "no handshake in 2026-07-28"
            body = error_body(message["id"], METHOD_NOT_FOUND, "Method not found: initialize", why)
            await plain(post.send, 404, body, [JSON])
        elif message["method"] == "subscriptions/listen" and not post.sse_ok:
            await plain(post.send, 406)
        elif message["method"] == "subscriptions/listen":
            await self._calls.serve(post, None, watched=True)
        elif post.json_ok and not self._calls.serving(message).watched:  # its answer alone, which nothing cancels
            await self._calls.answer(post)
        else:  # notifications, questions (results in this era) or a call the client leaving stops: streamed, watched
            await self._calls.stream(post)

    def _refusal(self, post: Post) -> tuple[int, int, str] | None:
        """Why a request of no stateless era cannot be served here: (status, code, message); None to serve it in its
        session (the handshake era's)."""
        if not self._legacy:
            code = METHOD_NOT_FOUND if post.message.get("method") == "initialize" else INVALID_PARAMS
            return 404 if code == METHOD_NOT_FOUND else 400, code, f"This server speaks {_STATELESS} only"
        if "mcp-session-id" not in post.headers:
            return (
                400,
                INVALID_REQUEST,
                "Bad request: Mcp-Session-Id header required (send initialize first, or the "
                f"{_STATELESS} _meta fields with every request)",
            )
        version = post.headers.get("mcp-protocol-version")
        if version is not None and version not in HANDSHAKE.versions:
            supported = ", ".join(HANDSHAKE.versions)
            return 400, INVALID_REQUEST, f"Bad request: unsupported MCP-Protocol-Version (supported: {supported})"
        return None

    async def _handshake(self, post: Post) -> None:
        """A request, notification or answer of a 2025-11-25 session (`Mcp-Session-Id`)."""
        message = post.message
        refusal = self._refusal(post)
        if refusal is not None:
            status, code, text = refusal
            await plain(post.send, status, error_body(message.get("id"), code, text), [JSON])
            return
        # Security best practices: session ids are bound to the user. Another user's id is as unknown as a forged one.
        session = self._sessions.session(post.headers["mcp-session-id"], post.caller.subject)
        if session is None:
            await session_gone(post.send)
            return
        if self._calls.fleet is not None and await self._shared(post, session) is None:
            return
        record = self._sessions.record(session)
        if self._calls.server.telemetry is not None:  # OpenTelemetry: mcp.session.id of this request's spans
            SESSION_ID.set(session.token)
        if "id" not in message or "method" not in message:  # a notification, or an answer
            await self._take(post, record, session)
        else:
            await self._request(post, record, session)

    async def _request(self, post: Post, record: SessionRecord, session: SessionId) -> None:
        """A session's request, served by its shape (`Shape`): in this task (its notifications first on a resumable
        response when it has some), or on a connection of its own when it may ask. A closed stream stops none."""
        message = post.message
        if len(record.calls) >= self._calls.server.max_concurrent_requests:
            body = error_body(message["id"], INTERNAL_ERROR, "Too many requests in flight")
            await plain(post.send, 200, body, [JSON])
            return
        state = session.state
        if record.log_level is not self._unset:
            state = replace(state, log_level=record.log_level)
        served = InSession(record, state, session.nonce)
        # sse_close_after= closes every long call's response, so each is served where it knows how (`serve`)
        shape = self._calls.serving(message).shape if self._calls.close_after is None else Shape.CONNECTION
        if shape is Shape.CONNECTION:
            await self._calls.serve(post, served)
        elif post.json_ok and shape is Shape.ANSWER:
            await self._calls.answer(post, served)
        else:  # notifications first, or the answer as SSE for a client that takes only that
            await self._calls.answer(post, served, self._calls.resumable(post, served))

    async def _shared(self, post: Post, session: SessionId) -> SessionId | None:
        """What the backend says of a session: None when it was ended on any worker (answered `404`) or the backend
        failed (`503`: never serve a session that may have ended); its log level, set on any worker, goes in its
        record here."""
        assert self._calls.fleet is not None
        try:
            ended, level = await self._calls.fleet.facts(session)
        except BackendError as exc:
            await unavailable(post.send, post.message.get("id"), exc)
            return None
        if ended:
            await session_gone(post.send)
            return None
        if level is not self._unset:
            self._sessions.record(session).log_level = level
        return session

    async def _take(self, post: Post, record: SessionRecord, session: SessionId) -> None:
        """A session's notification (a cancellation), or its answer to a request of the server (to the asking call)."""
        if "method" in post.message:
            await self._notified(post, record, session)
        else:
            await self._answered(post, record, session)

    async def _notified(self, post: Post, record: SessionRecord, session: SessionId) -> None:
        """A session's notification: `202`; a cancellation reaches its call here, or the worker that runs it."""
        message = post.message
        if self._calls.server.telemetry is not None:  # the notification's SERVER span
            self._calls.server.telemetry.notified(message, session.state.version, HTTP_NETWORK)
        if message["method"] == "notifications/cancelled":
            params = message.get("params") or {}
            call = record.calls.get(params.get("requestId"))
            if call is not None:  # the call's connection cancels it, and tells the client of its own requests
                call.end_input(message)
            elif self._calls.fleet is not None:  # perhaps another worker runs it
                await self._told(post, self._calls.fleet.cancel(session.nonce, message))
                return
        await plain(post.send, 202)

    async def _answered(self, post: Post, record: SessionRecord, session: SessionId) -> None:
        """A session's answer to a question of the server: to the call here that asked (`202`), or to another process
        that did (`_foreign`); an answer to no question in flight is accepted (`202`), as JSON-RPC lets it be."""
        message = post.message
        ask = message.get("id")
        exchange = record.asks.pop(ask, None) if type(ask) is str else None
        if exchange is not None:
            exchange.deliver(message)
        elif type(ask) is str and (worker := self._calls.tag.foreign(ask)):
            await self._foreign(post, session, worker, ask)
            return
        else:  # late (the request timed out or was cancelled), or never made
            logger.debug("skipped an answer to no request in flight: id %r", ask)
        await plain(post.send, 202)

    async def _foreign(self, post: Post, session: SessionId, worker: str, ask: str) -> None:
        """An answer to a question another process (`worker`) asked: sent on to it with a backend; else `400`
        (transports: input the server cannot accept gets an HTTP error, with a JSON-RPC error without id)."""
        if self._calls.fleet is not None:
            await self._told(post, self._calls.fleet.answer(worker, session.nonce, post.message))
            return
        self._calls.misrouted(session.nonce, ask)
        refusal = error_body(None, INTERNAL_ERROR, "Answer not delivered: another process asked", MISROUTED)
        await plain(post.send, 400, refusal, [JSON])

    async def _told(self, post: Post, telling: Awaitable[bool | None]) -> None:
        """A notification or an answer sent on to another worker: `202` once the backend took it; `400` when the
        worker that asked is gone (its call ended with it: the client should not wait for it); `503` when the
        backend failed."""
        try:
            delivered = await telling
        except BackendError as exc:
            await unavailable(post.send, None, exc)
            return
        if delivered is False:
            why = "the server process whose tool asked is gone; the call it ran ended with it"
            await plain(post.send, 400, error_body(None, INTERNAL_ERROR, "Answer not delivered", why), [JSON])
            return
        await plain(post.send, 202)


def _is_stateless(message: dict[str, Any], headers: dict[str, str]) -> bool:
    """The era of a POST's message: a request carrying the per-request `_meta` is of a stateless era (2026-07-28),
    and so is one whose header names a revision of one (the missing `_meta` is then its error); else it belongs to
    a 2025-11-25 session (`initialize` opens one)."""
    method = message.get("method")
    if method is None:  # an answer, or no message a client sends
        return False
    params = message.get("params")
    meta = params.get("_meta") if type(params) is dict else None
    if type(meta) is dict and VERSION_KEY in meta:
        return True
    return method != "initialize" and headers.get("mcp-protocol-version") in _STATELESS_HEADERS


def _decoded(body: bytes) -> tuple[Any, dict[str, Any] | None]:
    """A body's one message, or the JSON-RPC error that refuses it (not JSON, a batch, not a valid message)."""
    try:
        message = decode(body)
    except ValueError as exc:
        return None, error_response(None, PARSE_ERROR, "Parse error", str(exc))
    if type(message) is dict:
        return message, check_message(message)
    reason = "batches are not supported over HTTP" if isinstance(message, list) else "expected an object"
    return None, error_response(None, INVALID_REQUEST, "Invalid request", reason)
