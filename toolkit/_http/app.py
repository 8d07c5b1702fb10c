"""Streamable HTTP: a plain ASGI application that serves a `Server` in both protocol eras on one endpoint.

Each POST is served by a connection of its own, built for that one message: a 2026-07-28 request carries everything
it needs in `_meta`, and a 2025-11-25 session's small state travels in its signed `Mcp-Session-Id` (`_sessions.py`),
so any worker holding the key serves any request. The connection tags every message it sends with the request it
relates to; the exchange below puts those on the request's own response (JSON, or SSE once there is more than the
answer). What stays in one process (calls in flight, the GET stream, log levels) is kept in a small per-process
table, and docs/deploy.md says what that means for several workers.

No web framework: the app speaks ASGI 3 directly, so it runs on any ASGI server and mounts inside any ASGI app.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import functools
import inspect
import itertools
import logging
import math
import os
import secrets
import time
from collections import deque
from collections.abc import Awaitable, Callable, Collection, Coroutine, Iterable, Mapping, MutableMapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, TypeAlias, TypedDict
from urllib.parse import urlsplit

import anyio
import anyio.abc
from anyio.streams.memory import MemoryObjectSendStream

from toolkit._engine.connection import Connection
from toolkit._engine.context import sse_closer
from toolkit._engine.session import SessionState
from toolkit._errors import StartupError
from toolkit._protocol.jsonrpc import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    UNSUPPORTED_PROTOCOL_VERSION,
    check_message,
    decode,
    encode,
    error_response,
)
from toolkit._protocol.meta import VERSION_KEY
from toolkit._protocol.types import HANDSHAKE_VERSIONS, MODERN_VERSION

from .auth import BearerAuth, Identity, Refusal, TokenVerifier, current_identity, to_verifier
from .limits import RateLimit, RateLimiter
from .session_store import ProcessSessionStore, SessionStore
from .sessions import UNSET as _UNSET
from .sessions import SessionId, SessionRecord, Sessions
from .sse import EventStream, ReplayStore, retry_field

if TYPE_CHECKING:
    from toolkit._engine.registry import Registry

__all__ = ["HttpApp", "HttpOptions"]

logger = logging.getLogger("toolkit.http")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

#: 2026-07-28 (schema.ts `HEADER_MISMATCH`): the request's metadata headers disagree with its body.
HEADER_MISMATCH = -32020
#: 2026-07-28 (schema.ts `MISSING_REQUIRED_CLIENT_CAPABILITY`): answered with 400 over HTTP.
MISSING_CLIENT_CAPABILITY = -32021
#: Too many tool calls (an application error: outside the range JSON-RPC and MCP reserve, basic/index).
RATE_LIMITED = -31001

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
# The requests whose `Mcp-Name` header names the tool, resource or prompt (2026-07-28 streamable-http).
_NAME_PARAM = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}
_LOOPBACK = frozenset({"127.0.0.1", "localhost", "[::1]"})
_OWS = " \t"

_JSON = (b"content-type", b"application/json")
_SSE_HEADERS = [
    (b"content-type", b"text/event-stream"),
    # no-transform: proxies must not compress (and so buffer) the stream; X-Accel-Buffering: the 2026-07-28 SHOULD
    (b"cache-control", b"no-cache, no-transform"),
    (b"x-accel-buffering", b"no"),
]
_ALLOW_LEGACY = (b"allow", b"GET, POST, DELETE")
_ALLOW_MODERN = (b"allow", b"POST")
# The ids of the server's requests over HTTP: the app's tag in this process (`HttpApp._ask_prefix`), then a number.
_ask_numbers = itertools.count(1)
_TAG_SIZE = 8  # hex digits of the tag (`HttpApp._ask_prefix`)
# What both workers say when a 2025-11-25 answer reaches the one that did not ask (issue 26 would route it instead).
_MISROUTED = (
    "route each session's requests to one process by its Mcp-Session-Id, or use protocol 2026-07-28 "
    "(docs/deploy.md#several-workers)"
)
# While a question waits, how often its call asks a shared session store whether the answer reached another worker.
_LOST_POLL = 0.2
# How long that store keeps the fact: the asking worker reads it within `_LOST_POLL`, while its question waits.
_LOST_TTL = 300.0
# Requests that send nothing but their answer, whatever the server's tools (see `_answers_alone`).
_ANSWERED_ALONE = frozenset({"tools/list", "server/discover", "ping"})
# What the exchange hands the response writer: a message before the answer, the result, or an error answer; and
# (from `ctx.close_sse_stream()` or `sse_close_after=`) the order to end the HTTP response, not the SSE stream.
_EVENT, _RESULT, _ERROR, _CLOSE = 0, 1, 2, 3
# SEP-1699 (2025-11-25): the revision whose clients expect priming events (an id, empty data); older clients would
# read the empty data as a message.
_PRIMING_SINCE = "2025-11-25"


class HttpOptions(TypedDict, total=False):
    """The options of [`Server.http_app`][toolkit.Server.http_app]."""

    allowed_hosts: Sequence[str] | None
    allowed_origins: Sequence[str] | None
    max_body_size: int | None
    legacy: bool
    secret: bytes | str | Sequence[bytes | str] | None
    session_ttl: float
    session_store: SessionStore | None
    sse_ping: float
    sse_retry: float
    sse_close_after: float | None
    replay_window: float
    replay_size: int
    auth: TokenVerifier | Callable[[str], Awaitable[Identity | None]] | None
    resource_url: str | None
    authorization_servers: Sequence[str]
    scopes_supported: Sequence[str] | None
    required_scopes: Mapping[str, Collection[str]]
    scope_implies: Mapping[str, Collection[str]]
    rate_limit: RateLimit | None


def _error_body(request_id: Any, code: int, message: str, *details: str | None, data: Any = None) -> bytes:
    return encode(error_response(request_id, code, message, *details, data=data)).encode()


def _accepts(value: str | None) -> tuple[bool, bool]:
    """Whether an `Accept` header takes JSON and SSE (no header takes anything, as HTTP says)."""
    if value is None:
        return True, True
    json_ok = sse_ok = False
    for item in value.split(","):
        kind = item.split(";", 1)[0].strip().lower()
        if kind in ("*/*", ""):
            return True, True
        if kind in ("application/json", "application/*"):
            json_ok = True
        elif kind in ("text/event-stream", "text/*"):
            sse_ok = True
    return json_ok, sse_ok


_Record: TypeAlias = "SessionRecord[_Exchange]"  # what this process keeps of a session (sessions.py)


class _Exchange:
    """The transport of one HTTP request: one message in, the messages the connection relates to it out.

    `request_id` is the request served (None for a GET stream, which takes the messages related to no request).
    The client's answers to the requests the server makes while serving it come in POSTs of their own: `deliver`
    hands them to the connection. After the answer, or once closed, `receive` ends the connection's input.
    """

    __slots__ = (
        "_done",
        "_ended",
        "_final",
        "_inbox",
        "_out",
        "_request_id",
        "_text",
        "_wake",
        "asks",
        "idle",
        "lost",
        "scope",
    )

    def __init__(self, text: str | None, request_id: Any, out: MemoryObjectSendStream[tuple[str, int]]) -> None:
        self._text = text
        self._request_id = request_id
        self._out = out
        self._done = False  # closed: nothing more goes out, nor comes in
        self._ended = False  # no more input: once the inbox is read and `idle` returns, the connection's input ends
        self.idle: Callable[[], Awaitable[None]] | None = None  # waits until the connection's call is over
        self._inbox: deque[str] = deque()
        self._wake: anyio.Event | None = None
        self.asks: list[str] = []  # the ids of the requests made while serving it (see `_AskIds`)
        # Once it asked, with a shared store: ends the questions whose answer reached another worker (`_end_lost`).
        self.lost: Callable[[], None] | None = None
        self.scope = anyio.CancelScope()  # what serving it runs in (`HttpApp._serve`): DELETE cancels it
        # The answer to `request_id` starts with this, then `result"` or `error"` (a request of the server made
        # while serving it has its own id and a `method`).
        self._final = f'{{"jsonrpc":"2.0","id":{encode(request_id)},"' if request_id is not None else None

    async def receive(self) -> str:
        if self._text is not None:
            text, self._text = self._text, None
            return text
        while not self._inbox:
            if self._ended and not self._done and self.idle is not None:
                # A cancelled call first tells the client its own requests are cancelled too (basic/utilities).
                await self.idle()
                self._done = True
            if self._done or self._ended:
                raise anyio.EndOfStream
            self._wake = anyio.Event()
            if self.lost is None:
                await self._wake.wait()
            else:  # a question waits: look now and then whether its answer reached another worker
                with anyio.move_on_after(_LOST_POLL):
                    await self._wake.wait()
                self.lost()
        return self._inbox.popleft()

    def deliver(self, text: str) -> None:
        """Hand the connection the client's answer to one of its requests (it came in a POST of its own)."""
        if not (self._done or self._ended):
            self._inbox.append(text)
            self._signal()

    def end_input(self, last: str) -> None:
        """Hand the connection its last message (the call's cancellation): its input ends once the call is over."""
        self.deliver(last)
        self._ended = True

    async def send(self, message: str, /) -> None:
        await self.send_related(message, None)

    async def send_related(self, message: str, related: Any, /) -> None:
        if related != self._request_id or self._done:
            return  # a message for another stream (a POST never carries the session's unrelated ones)
        kind = _EVENT
        prefix = self._final
        if prefix is not None and message.startswith(prefix):
            if message.startswith('result"', len(prefix)):
                kind = _RESULT
            elif message.startswith('error"', len(prefix)):
                kind = _ERROR
        try:
            await self._out.send((message, kind))
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            return
        if kind != _EVENT:
            self.close()

    def look_for_lost(self, lost: Callable[[], None]) -> None:
        """A question was asked: while it waits, `receive` calls `lost` now and then (it answers the questions whose
        answer reached another worker, and stops the looking once none waits)."""
        if self.lost is None:
            self.lost = lost
            self._signal()  # `receive` may be waiting already, without looking

    def _signal(self) -> None:
        if self._wake is not None:
            self._wake.set()
            self._wake = None

    def close(self) -> None:
        self._done = True
        self._signal()

    async def aclose(self) -> None:
        self.close()


class _AskIds:
    """The ids of the requests one call's connection sends its client (elicitation, sampling, ping).

    2025-11-25 over HTTP, the client answers each in a POST of its own, on the session, perhaps while other calls of
    that session ask too: every id is unique in this process (and names it, see `HttpApp._ask_prefix`), and taking
    one files it with the session, so that the answer finds the connection that waits for it.
    """

    __slots__ = ("_exchange", "_lost", "_prefix", "_record")

    def __init__(self, record: _Record, exchange: _Exchange, prefix: str, lost: Callable[[], None] | None) -> None:
        self._record = record
        self._exchange = exchange
        self._prefix = prefix
        self._lost = lost

    def __iter__(self) -> _AskIds:
        return self

    def __next__(self) -> str:
        ask = f"{self._prefix}{next(_ask_numbers)}"
        self._record.asks[ask] = self._exchange
        self._exchange.asks.append(ask)
        if self._lost is not None:
            self._exchange.look_for_lost(self._lost)
        return ask


class _AnswerOnly:
    """The transport of a connection that answers one request in the caller's task: nothing goes through it."""

    async def receive(self) -> str:
        raise anyio.EndOfStream

    async def send(self, message: str, /) -> None:
        raise AssertionError("a request answered alone sent a message: " + message[:200])

    async def aclose(self) -> None:
        pass


_ANSWER_ONLY = _AnswerOnly()


class _Direct:
    """A 2025-11-25 call answered in the request's task (`HttpApp._answer`), as the session's table of calls in
    flight knows it: `notifications/cancelled` and DELETE cancel its scope."""

    __slots__ = ("scope",)

    def __init__(self) -> None:
        self.scope = anyio.CancelScope()

    def end_input(self, last: str) -> None:
        self.scope.cancel()


@dataclass(slots=True)
class _Post:
    """One POST being served: its message and what the client said about it."""

    message: dict[str, Any]
    body: bytes
    headers: dict[str, str]
    receive: Receive
    send: Send
    json_ok: bool
    sse_ok: bool
    caller: _Caller


@dataclass(slots=True)
class _Caller:
    """Who sent a request: the verified identity (with `auth=`), the rate limit's key, the URL base for challenges."""

    identity: Identity | None
    key: str
    base: str


class _Writer:
    """One HTTP response, chosen lazily: JSON when the answer comes alone, SSE from the first message before it.

    In a 2025-11-25 session the SSE events are numbered and kept for resumption (`_sse.py`): `open` says where the
    stream is kept once SSE starts, and `retry` (the SSE `retry` line) also makes the response open with a priming
    event. Once a resumption took the stream over, or the response was closed early, events are only kept.
    """

    __slots__ = ("_json_ok", "_open", "_retry", "_sse_ok", "gone", "headers", "owner", "send", "started", "stream")

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
        self.started = False
        self.gone = False  # the client went away: nothing more is written
        self.headers: list[tuple[bytes, bytes]] = []

    def attach(self, stream: EventStream, owner: int) -> None:
        """Write `stream` (a GET stream resumed: `owner` is the resumption's number)."""
        self.stream = stream
        self.owner = owner

    async def start_sse(self, after: int = 0) -> None:
        self.started = True
        await self.send({"type": "http.response.start", "status": 200, "headers": _SSE_HEADERS + self.headers})
        if self.stream is None and self._open is not None:
            store, nonce = self._open
            self.stream = store.open(nonce, "p")
        if self.stream is not None and self._retry is not None:
            body = self.stream.priming(after, self._retry)
            await self.send({"type": "http.response.body", "body": body, "more_body": True})

    async def event(self, text: str) -> None:
        if not self._sse_ok or (self.gone and not self.started):
            return  # a client that takes only JSON gets the answer, without what came before it
        if not self.started:
            await self.start_sse()
        stream = self.stream
        if stream is None:
            if not self.gone:
                body = b"event: message\ndata: " + text.encode() + b"\n\n"
                await self.send({"type": "http.response.body", "body": body, "more_body": True})
            return
        frame = stream.add(text)
        if self.gone:
            return
        if stream.owner != self.owner:  # resumed elsewhere: this response ends, the stream goes on there
            self.gone = True
            await self.send({"type": "http.response.body", "body": b""})
            return
        await self.send({"type": "http.response.body", "body": frame, "more_body": True})

    async def final(self, text: str, status: int) -> None:
        if not self.started:
            if self.gone:
                return
            if self._json_ok:
                self.started = True
                body = text.encode()
                # With its length the body goes out as is, not chunked (less for the server and the client to frame).
                headers = [_JSON, (b"content-length", str(len(body)).encode()), *self.headers]
                await self.send({"type": "http.response.start", "status": status, "headers": headers})
                await self.send({"type": "http.response.body", "body": body})
                return
            await self.start_sse()
        stream = self.stream
        if stream is None:
            if not self.gone:
                await self.send(
                    {"type": "http.response.body", "body": b"event: message\ndata: " + text.encode() + b"\n\n"}
                )
            return
        frame = stream.add(text)
        stream.finish()
        if not self.gone:
            await self.send({"type": "http.response.body", "body": frame if stream.owner == self.owner else b""})

    async def close(self) -> None:
        """SEP-1699: end the HTTP response now, not the SSE stream; the client resumes it with GET + Last-Event-ID.

        Only where the client can resume: a 2025-11-25 session whose client takes SSE.
        """
        if self.gone or self._retry is None or not self._sse_ok or (self._open is None and self.stream is None):
            return
        if not self.started:
            await self.start_sse()  # the priming event gives the client an id to resume from
        self.gone = True
        await self.send({"type": "http.response.body", "body": self._retry + b"\n"})

    async def end(self) -> None:
        """End a response that got no answer (cancelled, or the server is closing)."""
        if self.stream is not None:
            self.stream.finish()
        if self.gone:
            return
        if not self.started:
            self.started = True
            self._open = None  # no id to resume from: there is nothing more to come
            if self._sse_ok:
                await self.start_sse()
            else:
                await self.send({"type": "http.response.start", "status": 202, "headers": self.headers})
        await self.send({"type": "http.response.body", "body": b""})


class HttpApp:
    """The ASGI application `Server.http_app()` returns: MCP Streamable HTTP at `path`, both protocol eras.

    Use it as any ASGI app: `uvicorn module:app`, or mounted in Starlette or FastAPI.
    """

    def __init__(
        self,
        server: Registry,
        path: str = "/mcp",
        *,
        allowed_hosts: Sequence[str] | None = None,
        allowed_origins: Sequence[str] | None = None,
        max_body_size: int | None = None,
        legacy: bool = True,
        secret: bytes | str | Sequence[bytes | str] | None = None,
        session_ttl: float = 24 * 3600.0,
        session_store: SessionStore | None = None,
        sse_ping: float = 15.0,
        sse_retry: float = 1.0,
        sse_close_after: float | None = None,
        replay_window: float = 60.0,
        replay_size: int = 1 << 20,
        auth: TokenVerifier | Callable[[str], Awaitable[Identity | None]] | None = None,
        resource_url: str | None = None,
        authorization_servers: Sequence[str] = (),
        scopes_supported: Sequence[str] | None = None,
        required_scopes: Mapping[str, Collection[str]] | None = None,
        scope_implies: Mapping[str, Collection[str]] | None = None,
        rate_limit: RateLimit | None = None,
    ) -> None:
        if not path.startswith("/"):
            raise ValueError(f"path must start with '/', got {path!r}")
        self.server = server
        self.path = path.rstrip("/") or "/"
        self.max_body_size = max_body_size if max_body_size is not None else server.max_message_size
        self.legacy = legacy
        self.sse_ping = sse_ping
        if sse_close_after is not None and sse_close_after < 0:
            raise ValueError(f"sse_close_after must be at least 0 seconds, got {sse_close_after}")
        self.sse_close_after = sse_close_after
        self._retry = retry_field(sse_retry)
        self._replay = ReplayStore(replay_window, replay_size)
        hosts = {h.lower() for h in (allowed_hosts if allowed_hosts is not None else _LOOPBACK)}
        self._any_host = "*" in hosts
        self._host_suffixes = tuple(h[1:] for h in hosts if h.startswith("*."))
        self._hosts = frozenset(h for h in hosts if not h.startswith("*"))
        self._origins = frozenset(allowed_origins) if allowed_origins is not None else None
        # One secret for what the workers must trust from each other: session ids here, and the server's requestState.
        self._sessions: Sessions[_Exchange] = Sessions(server.share_secret(secret), session_ttl, session_store)
        self.session_store = session_store
        """The store shared by the processes serving this app (`session_store=`), or None: each process keeps what
        `DELETE` ended, and the misrouted answers it saw, to itself."""
        self._store = self._sessions.store
        self._live: set[_Exchange] = set()
        self._running = False  # the ASGI lifespan runs the server's lifespan (else each request joins it)
        self._allow = _ALLOW_LEGACY if legacy else _ALLOW_MODERN
        self._auth = (
            BearerAuth(
                to_verifier(auth),
                self.path,
                resource_url=resource_url,
                authorization_servers=authorization_servers,
                scopes_supported=scopes_supported,
                required_scopes=required_scopes or {},
                resource_name=server.title or server.name,
                scope_implies=scope_implies,
            )
            if auth is not None
            else None
        )
        if (required_scopes or scope_implies) and auth is None:
            option = "required_scopes" if required_scopes else "scope_implies"
            raise ValueError(f"{option}= needs auth=: without a verified token there are no scopes to check")
        self._limiter = RateLimiter(rate_limit) if rate_limit is not None else None
        self._param_headers: dict[str, tuple[Any, tuple[tuple[str, str, str], ...]]] = {}
        self._alone: dict[str, tuple[Any, bool]] = {}
        self._tag = ("", 0)  # (the ids' prefix, the process it was made in): see `_ask_prefix`

    def _ask_prefix(self) -> str:
        """The prefix of the ids of this app's requests to clients in this process: a random tag, then `-`. An answer
        that reaches another worker is known there for what it is (docs/deploy.md: the answer must reach the process
        that asked). Made again in a process forked after the app was made (gunicorn `--preload`), so that two
        workers never share it."""
        prefix, pid = self._tag
        if pid != os.getpid():
            prefix = f"{secrets.token_hex(_TAG_SIZE // 2)}-"
            self._tag = (prefix, os.getpid())
        return prefix

    # -- ASGI ----------------------------------------------------------------------------------------

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "http":
            if self._running:
                await self._http(scope, receive, send)
                return
            # Mounted inside another app (Starlette does not forward the lifespan to mounts): join the server's
            # lifespan per request; the parent app should run `server.running()` in its own lifespan.
            try:
                async with self.server.running():
                    await self._http(scope, receive, send)
            except StartupError:
                logger.exception("the server's lifespan failed to start")
                await _plain(send, 500)
        elif kind == "lifespan":
            await self._lifespan(receive, send)
        else:  # websocket: not an MCP transport
            await send({"type": "websocket.close", "code": 1000})

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        await receive()  # lifespan.startup
        try:
            async with self.server.running():
                self._running = True
                await send({"type": "lifespan.startup.complete"})
                await receive()  # lifespan.shutdown
                self._running = False
                for exchange in list(self._live):  # open streams (GET, subscriptions) end; calls get their grace
                    exchange.close()
        except StartupError as exc:
            await send({"type": "lifespan.startup.failed", "message": str(exc)})
            return
        finally:
            self._running = False
        await send({"type": "lifespan.shutdown.complete"})

    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:
        path: str = scope["path"]
        root: str = scope.get("root_path", "")
        if root and path.startswith(root):
            path = path[len(root) :]
        metadata = False
        if path != self.path and path.rstrip("/") != self.path:
            metadata = self._auth is not None and path in self._auth.metadata_paths and scope["method"] == "GET"
            if not metadata:
                await _plain(send, 404)
                return
        headers: dict[str, str] = {}
        repeated: set[str] = set()
        for raw_name, raw_value in scope["headers"]:
            name = raw_name.decode("latin-1")
            if name in headers:
                repeated.add(name)
            headers[name] = raw_value.decode("latin-1").strip(_OWS)
        problem = self._check_host_and_origin(headers)
        if problem is not None:
            status, body = problem
            await _plain(send, status, body, [_JSON])
            return
        caller = await self._identify(scope, headers, send, metadata)
        if caller is None:
            return
        method = scope["method"]
        if method == "POST":
            await self._post(headers, repeated, receive, send, caller)
        elif method == "GET" and self.legacy:
            await self._get(headers, receive, send, caller)
        elif method == "DELETE" and self.legacy:
            await self._delete(headers, send, caller)
        else:
            await _plain(send, 405, headers=[self._allow])

    async def _identify(self, scope: Scope, headers: dict[str, str], send: Send, metadata: bool) -> _Caller | None:
        """Who is calling; None when the request was answered here (401, or the RFC 9728 metadata)."""
        client = scope.get("client")
        if self._auth is None:
            return _Caller(None, client[0] if client else "", "")
        # Checked on every request (security best practices: sessions are never authentication); after the Host
        # and Origin checks, so that rebinding probes never reach the verifier.
        base = f"{scope.get('scheme', 'http')}://{headers['host']}{scope.get('root_path', '')}"
        if metadata:  # RFC 9728: public, for any origin
            await _plain(send, 200, self._auth.metadata(base), [_JSON, (b"access-control-allow-origin", b"*")])
            return None
        outcome = await self._auth.authenticate(headers.get("authorization"), base)
        if isinstance(outcome, Refusal):
            await _plain(send, outcome.status, outcome.body, outcome.headers)
            return None
        current_identity.set(outcome)  # in this request's task: the call's task and worker thread inherit it
        return _Caller(outcome, outcome.subject, base)

    # -- checks --------------------------------------------------------------------------------------

    def _host_allowed(self, host: str) -> bool:
        if self._any_host:
            return True
        host = host.lower()
        if host.startswith("["):
            name = host[: host.find("]") + 1]
        else:
            name = host.rsplit(":", 1)[0] if host.count(":") == 1 else host
        return name in self._hosts or host in self._hosts or (bool(name) and name.endswith(self._host_suffixes))

    def _check_host_and_origin(self, headers: dict[str, str]) -> tuple[int, bytes] | None:
        # The Host allow-list stops DNS rebinding (a page of evil.example whose name now points at 127.0.0.1): the
        # browser still sends `Host: evil.example`. 421 Misdirected Request, as the Python SDK answers.
        host = headers.get("host")
        if host is None or not self._host_allowed(host):
            return 421, _error_body(None, INVALID_REQUEST, "Invalid Host header")
        origin = headers.get("origin")
        if origin is not None and not self._origin_allowed(origin, host):
            # transports: "If the Origin header is present and invalid, servers MUST respond with HTTP 403".
            return 403, _error_body(None, INVALID_REQUEST, "Forbidden: Origin not allowed")
        return None

    def _origin_allowed(self, origin: str, host: str) -> bool:
        if self._origins is not None and ("*" in self._origins or origin in self._origins):
            return True
        try:
            parts = urlsplit(origin)
        except ValueError:
            return False
        if parts.scheme not in ("http", "https") or not parts.netloc:
            return False  # `null` (a sandboxed page, a file) is never allowed unless listed
        # Same origin (its Host already passed the allow-list), or a loopback page when the default list is used.
        if parts.netloc.lower() == host.lower():
            return True
        name = f"[{parts.hostname}]" if parts.hostname and ":" in parts.hostname else parts.hostname
        return self._origins is None and name in _LOOPBACK

    async def _read_body(self, headers: dict[str, str], receive: Receive, send: Send) -> bytes | None:
        limit = self.max_body_size
        length = headers.get("content-length")
        if length is not None and length.isdigit() and int(length) > limit:
            await _plain(send, 413)
            return None
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return None
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:  # a chunked body, or a Content-Length that lied
                await _plain(send, 413)
                return None
            chunks.append(chunk)
            if not message.get("more_body", False):
                return chunks[0] if len(chunks) == 1 else b"".join(chunks)

    # -- POST ----------------------------------------------------------------------------------------

    async def _post(
        self, headers: dict[str, str], repeated: set[str], receive: Receive, send: Send, caller: _Caller
    ) -> None:
        content_type = headers.get("content-type", "")
        if content_type.split(";", 1)[0].strip().lower() != "application/json":
            await _plain(send, 415)
            return
        json_ok, sse_ok = _accepts(headers.get("accept"))
        if not (json_ok or sse_ok):
            await _plain(send, 406)
            return
        body = await self._read_body(headers, receive, send)
        if body is None:
            return
        try:
            message = decode(body)
        except ValueError as exc:
            await _plain(send, 400, _error_body(None, PARSE_ERROR, "Parse error", str(exc)), [_JSON])
            return
        if not isinstance(message, dict):
            reason = "batches are not supported over HTTP" if isinstance(message, list) else "expected an object"
            await _plain(send, 400, _error_body(None, INVALID_REQUEST, "Invalid request", reason), [_JSON])
            return
        problem = check_message(message)
        if problem is not None:
            await _plain(send, 400, encode(problem).encode(), [_JSON])
            return
        post = _Post(message, body, headers, receive, send, json_ok, sse_ok or not json_ok, caller)
        method = message.get("method")
        params = message.get("params")
        meta = params.get("_meta") if isinstance(params, dict) else None
        # 2026-07-28 versioning: a request carrying the per-request _meta is served statelessly, initialize opens
        # a session; the version header alone also marks a modern request (then missing _meta is its error).
        modern_meta = isinstance(meta, dict) and VERSION_KEY in meta
        if method is not None and (
            modern_meta or (method != "initialize" and headers.get("mcp-protocol-version") == MODERN_VERSION)
        ):
            await self._modern(post, repeated)
        elif method == "initialize" and self.legacy:
            await self._serve(post, None, initialize=True)
        else:
            await self._legacy(post)

    async def _modern(self, post: _Post, repeated: set[str]) -> None:
        message = post.message
        if "id" not in message:  # no client notification is defined over HTTP in 2026-07-28: accepted, ignored
            await _plain(post.send, 202)
            return
        mismatch = _header_mismatch(message, post.headers, repeated) or self._param_mismatch(message, post.headers)
        if mismatch is not None:
            body = _error_body(message["id"], HEADER_MISMATCH, "Header mismatch", mismatch)
            await _plain(post.send, 400, body, [_JSON])
        elif message["method"] == "initialize":
            # 2026-07-28 has no handshake: an initialize carrying the per-request _meta names a removed method.
            body = _error_body(
                message["id"], METHOD_NOT_FOUND, "Method not found: initialize", "no handshake in 2026-07-28"
            )
            await _plain(post.send, 404, body, [_JSON])
        elif message["method"] == "subscriptions/listen" and not post.sse_ok:
            await _plain(post.send, 406)
        elif post.json_ok and self._answers_alone(message):
            await self._answer(post)
        else:
            await self._serve(post, None, modern=True)

    def _answers_alone(self, message: dict[str, Any]) -> bool:
        """Whether a request sends nothing but its answer and needs no watching: `tools/list`, `ping`,
        `server/discover`, or a call of a tool that cannot ask the client (no Context: no progress, logs or
        questions either) and that a closed stream could not stop anyway (not async: a worker thread, or inline)."""
        method = message["method"]
        if method != "tools/call":
            return method in _ANSWERED_ALONE
        name = (message.get("params") or {}).get("name")
        tool = self.server.tools.get(name) if isinstance(name, str) else None
        if tool is None:
            return False
        cached = self._alone.get(tool.name)
        if cached is None or cached[0] is not tool:  # worked out once per tool (again if it was replaced)
            call = getattr(tool.fn, "__call__", None)  # noqa: B004 - an object whose __call__ is async
            plain = not (tool.may_ask or inspect.iscoroutinefunction(tool.fn) or inspect.iscoroutinefunction(call))
            cached = self._alone[tool.name] = (tool, plain)
        return cached[1]

    async def _answer(self, post: _Post, state: SessionState | None = None, record: _Record | None = None) -> None:
        """Serve a request that `_answers_alone` in this task, with a plain JSON reply: no connection loop, no
        task group, no watcher, and the message already decoded. Measured: 2.6x the calls/s of `_serve` on one
        uvicorn worker (docs/performance.md#streamable-http). A 2025-11-25 session's call (`state`, `record`) is
        in the session's table meanwhile, so that `notifications/cancelled` and DELETE reach it."""
        message = post.message
        if message["method"] == "tools/call" and await self._refused(post):
            return
        connection = Connection(self.server, _ANSWER_ONLY, session=state)
        if record is None:
            text = await connection.answer(message)
        else:
            call = record.calls[message["id"]] = _Direct()
            text = None
            try:
                with call.scope:
                    text = await connection.answer(message)
            finally:
                record.calls.pop(message["id"], None)
            if text is None:  # cancelled: no answer (basic/utilities/cancellation), the response ends empty
                await _Writer(post.send, True, post.sse_ok).end()
                return
        assert text is not None  # these methods always answer (only a subscription ends without one)
        status = 200
        if state is None and text.startswith(f'{{"jsonrpc":"2.0","id":{encode(message["id"])},"error"'):
            status = _status(text)  # 2026-07-28: an error has its HTTP status (2025-11-25: always 200)
        await _Writer(post.send, True, False).final(text, status)

    def _param_mismatch(self, message: dict[str, Any], headers: dict[str, str]) -> str | None:
        """Why a tool call's `Mcp-Param-*` headers disagree with its arguments (2026-07-28 `x-mcp-header`)."""
        params = message.get("params") or {}
        name = params.get("name")
        tool = self.server.tools.get(name) if message["method"] == "tools/call" and isinstance(name, str) else None
        if tool is None:
            return None
        cached = self._param_headers.get(tool.name)
        if cached is None or cached[0] is not tool:  # worked out once per tool (again if it was replaced)
            cached = self._param_headers[tool.name] = (tool, _param_headers(tool.definition.input_schema))
        arguments = params.get("arguments")
        arguments = arguments if isinstance(arguments, dict) else {}
        for prop, header, kind in cached[1]:
            value = arguments.get(prop)
            sent = headers.get(header)
            if sent is not None and not all(c == "\t" or " " <= c <= "~" for c in sent):
                return f"the {header} header has characters a header value cannot carry"
            if value is None:  # streamable-http: absent or null in the body: the server MUST NOT expect it
                continue
            if sent is None:
                return f"the {header} header is required (the body has {prop})"
            if not _same_value(_decode_header_value(sent), value, kind):
                return f"{header} header value does not match body value of {prop}"
        return None

    async def _legacy(self, post: _Post) -> None:
        message = post.message
        session = None
        if not self.legacy:
            code = METHOD_NOT_FOUND if message.get("method") == "initialize" else INVALID_PARAMS
            refusal = (404 if code == METHOD_NOT_FOUND else 400, code, f"This server speaks {MODERN_VERSION} only")
        elif "mcp-session-id" not in post.headers:
            refusal = (
                400,
                INVALID_REQUEST,
                "Bad request: Mcp-Session-Id header required (send initialize first, or the "
                f"{MODERN_VERSION} _meta fields with every request)",
            )
        elif (version := post.headers.get("mcp-protocol-version")) is not None and version not in HANDSHAKE_VERSIONS:
            refusal = (
                400,
                INVALID_REQUEST,
                f"Bad request: unsupported MCP-Protocol-Version (supported: {', '.join(HANDSHAKE_VERSIONS)})",
            )
        else:
            session = self._session(post.headers["mcp-session-id"], post.caller)
            refusal = None
        if refusal is not None:
            status, code, text = refusal
            await _plain(post.send, status, _error_body(message.get("id"), code, text), [_JSON])
        elif session is None:
            await _session_gone(post.send)
        elif "id" not in message or "method" not in message:  # a notification, or an answer
            await self._take(post, self._record(session), session)
        else:
            record = self._record(session)
            if len(record.calls) >= self.server.max_concurrent_requests:
                body = _error_body(message["id"], INTERNAL_ERROR, "Too many requests in flight")
                await _plain(post.send, 200, body, [_JSON])
                return
            state = session.state
            if record.log_level is not _UNSET:
                state = replace(state, log_level=record.log_level)
            # sse_close_after= closes every long call's response, so none is answered in one piece
            if post.json_ok and self.sse_close_after is None and self._answers_alone(message):
                await self._answer(post, state, record)
            else:
                await self._serve(post, record, state=state, nonce=session.nonce)

    async def _take(self, post: _Post, record: _Record, session: SessionId) -> None:
        """A session's notification (a cancellation), or its answer to a request of the server (to the asking call):
        `202`, or `400` for an answer to a question another process asked (transports: input the server cannot
        accept gets an HTTP error, with a JSON-RPC error without id)."""
        message, body = post.message, post.body
        if "method" in message:
            if message["method"] == "notifications/cancelled":
                params = message.get("params") or {}
                exchange = record.calls.get(params.get("requestId"))
                if exchange is not None:  # the call's connection cancels it, and tells the client of its own requests
                    exchange.end_input(body.decode("utf-8", "replace"))
            await _plain(post.send, 202)
            return
        ask = message.get("id")
        exchange = record.asks.pop(ask, None) if type(ask) is str else None
        if exchange is not None:
            exchange.deliver(body.decode("utf-8", "replace"))
        elif type(ask) is str and _foreign(ask, self._ask_prefix()):
            # The call that asked waits for an answer it will never get: it learns it from a shared store (it looks
            # while its question waits: `_end_lost`), and the client from this refusal. Routing it is issue 26.
            shared = not isinstance(self._store, ProcessSessionStore)
            if shared:
                try:
                    self._store.end(f"{session.nonce}/{ask}", time.time() + _LOST_TTL)
                except Exception:  # a store that is down: the client is still told below
                    logger.warning("could not note a misrouted answer in the session store", exc_info=True)
            logger.warning(
                "an answer to request %r reached a process that did not make it (%s): %s",
                ask,
                "the call ends with an error"
                if shared
                else "with no shared session_store=, the call that asked waits until Server(client_request_timeout=)",
                _MISROUTED,
            )
            refusal = _error_body(None, INTERNAL_ERROR, "Answer not delivered: another process asked", _MISROUTED)
            await _plain(post.send, 400, refusal, [_JSON])
            return
        else:  # late (the request timed out or was cancelled), or never made: accepted, as JSON-RPC lets it be
            logger.debug("skipped an answer to no request in flight: id %r", ask)
        await _plain(post.send, 202)

    def _ask_ids(self, record: _Record | None, exchange: _Exchange, nonce: str | None) -> _AskIds | None:
        """The ids of the requests a session's call sends its client (None outside a session). With a shared store,
        the call also learns when an answer to one reached another worker (the default keeps to this process)."""
        if record is None:
            return None
        lost = None
        if nonce is not None and not isinstance(self._store, ProcessSessionStore):
            lost = functools.partial(self._end_lost, exchange, record, nonce)
        return _AskIds(record, exchange, self._ask_prefix(), lost)

    def _end_lost(self, exchange: _Exchange, record: _Record, nonce: str) -> None:
        """Answer each question of `exchange` whose answer reached another worker (`_take` there wrote it in the
        shared store) with an error, so that the call goes on instead of waiting for what cannot come."""
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
                why = f"no answer can come: the client's answer went to another process of this server; {_MISROUTED}"
                exchange.deliver(encode(error_response(ask, INTERNAL_ERROR, why)))
            else:
                waiting = True
        if not waiting:  # nothing to look for until the next question (`_AskIds`)
            exchange.lost = None

    async def _serve(
        self,
        post: _Post,
        record: _Record | None,
        *,
        state: SessionState | None = None,
        modern: bool = False,
        initialize: bool = False,
        nonce: str | None = None,
    ) -> None:
        """Serve one request on a connection of its own; its messages go on this request's response.

        In a 2025-11-25 session (`nonce`), the SSE events are numbered and kept for resumption, and the response
        may be closed before the answer (`ctx.close_sse_stream()`, `sse_close_after=`) while the call goes on.
        """
        request_id = post.message["id"]
        if post.message["method"] == "tools/call" and await self._refused(post):
            return
        out, messages = anyio.create_memory_object_stream[tuple[str, int]](16)
        exchange = _Exchange(post.body.decode("utf-8", "replace"), request_id, out)
        asks = self._ask_ids(record, exchange, nonce)
        connection = Connection(self.server, exchange, session=state, request_ids=asks)
        exchange.idle = connection.wait_idle
        writer, closer = self._writer(post, state, nonce, connection=connection, out=out)
        answered = False

        async def run_connection() -> None:
            sse_closer.set(closer)  # this task's own context: the call's task and thread inherit it
            async with out:
                await connection.run()

        self._live.add(exchange)
        try:
            with messages, out:
                async with anyio.create_task_group() as tg:
                    if record is not None:
                        exchange.scope = tg.cancel_scope
                        record.calls[request_id] = exchange
                    tg.start_soon(run_connection)
                    watcher = anyio.CancelScope()
                    tg.start_soon(
                        self._watch, post.receive, watcher, writer, tg.cancel_scope if modern else None, closer
                    )
                    async for text, kind in messages:
                        if kind == _EVENT:
                            await writer.event(text)
                            continue
                        if kind == _CLOSE:
                            await writer.close()
                            continue
                        status = 200
                        if modern and kind == _ERROR:
                            status = _status(text)
                        elif initialize:
                            self._initialized(connection, writer, post.caller)
                        elif record is not None and connection.session is not None:
                            record.log_level = connection.session.log_level
                        await writer.final(text, status)
                        answered = True
                        break
                    watcher.cancel()
            if not answered:
                await writer.end()
        finally:
            self._live.discard(exchange)
            exchange.close()
            if record is not None:
                record.calls.pop(request_id, None)
                for ask in exchange.asks:
                    record.asks.pop(ask, None)

    async def _refused(self, post: _Post) -> bool:
        """Answer a tool call the caller may not make (scopes) or not make now (rate limit); False to serve it."""
        message, caller = post.message, post.caller
        params = message.get("params") or {}
        if self._auth is not None and caller.identity is not None:
            refusal = self._auth.check_scopes(params.get("name"), caller.identity, caller.base, message["id"])
            if refusal is not None:
                await _plain(post.send, refusal.status, refusal.body, refusal.headers)
                return True
        if self._limiter is not None:
            wait = self._limiter.acquire(caller.key)
            if wait is not None:
                seconds = max(1, math.ceil(wait))
                body = _error_body(message["id"], RATE_LIMITED, "Rate limit exceeded", f"retry in {seconds} s")
                await _plain(post.send, 429, body, [_JSON, (b"retry-after", str(seconds).encode())])
                return True
        return False

    async def _watch(
        self,
        receive: Receive,
        scope: anyio.CancelScope,
        writer: _Writer,
        cancel: anyio.CancelScope | None,
        close: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        """Watch for the client leaving. 2026-07-28: closing the stream cancels the request. 2025-11-25:
        "Disconnection SHOULD NOT be interpreted as the client cancelling its request": the call goes on, unheard.

        `close`: how to close the response early; with `sse_close_after=` (SEP-1699 polling) it is closed after
        that long, and the client resumes it with GET.
        """
        with scope:
            if close is not None and self.sse_close_after is not None:
                with anyio.move_on_after(self.sse_close_after) as timer:
                    await _disconnected(receive)
                if timer.cancelled_caught:
                    await close()
                    await _disconnected(receive)
            else:
                await _disconnected(receive)
            writer.gone = True
            if cancel is not None:
                cancel.cancel()

    def _writer(
        self,
        post: _Post,
        state: SessionState | None,
        nonce: str | None,
        *,
        connection: Connection,
        out: MemoryObjectSendStream[tuple[str, int]],
    ) -> tuple[_Writer, Callable[[], Coroutine[Any, Any, None]] | None]:
        """The response of a request, and how its call closes it early (None: it cannot, outside a session)."""
        if nonce is None:
            return _Writer(post.send, post.json_ok, post.sse_ok), None
        retry = self._retry if state is not None and state.version >= _PRIMING_SINCE else None
        writer = _Writer(post.send, post.json_ok, post.sse_ok, (self._replay, nonce), retry)

        async def close() -> None:  # ctx.close_sse_stream(): after what the call sent before it
            await connection.flush()
            with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
                await out.send(("", _CLOSE))

        return writer, close

    def _initialized(self, connection: Connection, writer: _Writer, caller: _Caller) -> None:
        state = connection.session
        if state is not None:  # initialize succeeded: a fresh id, whatever the client sent (no fixation)
            session = self._sessions.mint(state, caller.identity.subject if caller.identity is not None else None)
            writer.headers.append((b"mcp-session-id", session.token.encode()))

    # -- sessions ------------------------------------------------------------------------------------

    def _session(self, token: str, caller: _Caller) -> SessionId | None:
        return self._sessions.open(token, caller.identity.subject if caller.identity is not None else None)

    async def _session_of(self, headers: dict[str, str], send: Send, caller: _Caller) -> SessionId | None:
        """The session a GET or DELETE names; None when it was answered here (400 without the header, else 404)."""
        token = headers.get("mcp-session-id")
        if token is None:
            body = _error_body(None, INVALID_REQUEST, "Bad request: Mcp-Session-Id header required")
            await _plain(send, 400, body, [_JSON])
            return None
        session = self._session(token, caller)
        if session is None:
            await _session_gone(send)
        return session

    def _record(self, session: SessionId) -> _Record:
        return self._sessions.record(session)

    # -- GET and DELETE (2025-11-25) -----------------------------------------------------------------

    async def _get(self, headers: dict[str, str], receive: Receive, send: Send, caller: _Caller) -> None:
        _, sse_ok = _accepts(headers.get("accept"))
        if not sse_ok:
            await _plain(send, 406)
            return
        session = await self._session_of(headers, send, caller)
        if session is None:
            return
        record = self._record(session)
        retry = self._retry if session.state.version >= _PRIMING_SINCE else None
        last = headers.get("last-event-id") or None  # empty: no id, as HTML's EventSource sends none
        found = self._replay.find(session.nonce, last) if last is not None else None
        if found is not None and found[0].id.startswith("p"):
            await self._resume(found[0], found[1], retry, receive, send)
            return
        if found is None and last is not None and not last.startswith("g"):
            # A POST's stream this process does not keep: expired, or served by another worker (docs/deploy.md).
            # Not 404, which would tell the client its session is gone.
            body = _error_body(None, INVALID_REQUEST, "Bad request: Last-Event-ID names no stream kept here")
            await _plain(send, 400, body, [_JSON])
            return
        if found is None and record.stream is not None:
            # "only one" stream for the server's own messages, as the TS SDK answers; resuming it takes it over
            await _plain(
                send, 409, _error_body(None, INVALID_REQUEST, "Conflict: a GET stream is already open"), [_JSON]
            )
            return
        writer = _Writer(send, False, True, retry=retry)
        if found is None:  # a new stream (or one gone from here: what it carried while away is lost)
            stream, after = self._replay.open(session.nonce, "g"), 0
            writer.attach(stream, 0)
        else:
            stream, after = found
            self._replay.use(stream)
            writer.attach(stream, stream.take())
        await self._listen(record, session.state, writer, after, receive)

    async def _listen(
        self, record: _Record, state: SessionState, writer: _Writer, after: int, receive: Receive
    ) -> None:
        """The GET stream: the session's messages that belong to no request (after what a resumption missed)."""
        if record.stream is not None:
            record.stream.close()  # resumed: the stream moves to this response
        send = writer.send
        stream = writer.stream
        assert stream is not None
        out, messages = anyio.create_memory_object_stream[tuple[str, int]](16)
        exchange = _Exchange(None, None, out)
        record.stream = exchange
        connection = Connection(self.server, exchange, session=state)
        self._live.add(exchange)

        async def run_connection() -> None:
            async with out:
                await connection.run()

        try:
            with messages, out:
                async with anyio.create_task_group() as tg:
                    tg.start_soon(run_connection)
                    tg.start_soon(self._watch, receive, anyio.CancelScope(), writer, tg.cancel_scope)
                    await writer.start_sse(after)
                    for _, frame in stream.since(after):  # what the client missed, then the stream goes on
                        await send({"type": "http.response.body", "body": frame, "more_body": True})
                    while True:
                        with anyio.move_on_after(self.sse_ping) as idle:
                            try:
                                text, _ = await messages.receive()
                            except anyio.EndOfStream:  # the session ended (DELETE) or the server is closing
                                break
                        if idle.cancelled_caught:  # a comment keeps proxies from closing an idle stream
                            await send({"type": "http.response.body", "body": b": ping\n\n", "more_body": True})
                            continue
                        await writer.event(text)
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

    async def _resume(self, stream: EventStream, after: int, retry: bytes | None, receive: Receive, send: Send) -> None:
        """GET + Last-Event-ID of a POST's stream: its events after that id, then the rest as the call sends them,
        up to the answer (then the stream ends). Never another stream's events (transports §Resumability)."""
        if stream.done and after >= stream.seq:
            # Nothing more will come: 204 tells an SSE client to stop reconnecting (HTML's EventSource rule).
            await _plain(send, 204)
            return
        owner = stream.take()
        writer = _Writer(send, False, True, retry=retry)
        writer.attach(stream, owner)
        async with anyio.create_task_group() as tg:
            tg.start_soon(self._watch, receive, anyio.CancelScope(), writer, tg.cancel_scope)
            await writer.start_sse(after)
            close_at = anyio.current_time() + (self.sse_close_after if self.sse_close_after is not None else math.inf)
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

    async def _delete(self, headers: dict[str, str], send: Send, caller: _Caller) -> None:
        session = await self._session_of(headers, send, caller)
        if session is None:
            return
        self._sessions.end(session)
        self._replay.drop_session(session.nonce)
        await _plain(send, 204)


def _foreign(ask: str, prefix: str) -> bool:
    """Whether `ask` names a request another process of this server made: another tag, then a number."""
    tag, dash, number = ask.partition("-")
    return (
        len(tag) == _TAG_SIZE
        and all(c in "0123456789abcdef" for c in tag)
        and bool(dash)
        and number.isdigit()
        and len(number) < 20
        and not ask.startswith(prefix)
    )


async def _disconnected(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass


def _status(text: str) -> int:
    """The HTTP status of a 2026-07-28 error answer (errors are small: decoding one is cheap)."""
    error = decode(text).get("error") or {}
    code = error.get("code")
    return _MODERN_STATUS.get(code, 200) if isinstance(code, int) else 200


def _header_mismatch(message: dict[str, Any], headers: dict[str, str], repeated: set[str]) -> str | None:
    """Why the 2026-07-28 request metadata headers disagree with the body, or None when they agree.

    streamable-http: `MCP-Protocol-Version` must equal `_meta`'s version, `Mcp-Method` the method, `Mcp-Name` the
    name of a tools/call (resources/read: the uri); a required header missing is a mismatch too. Values are
    compared case-sensitively (names are not); a repeated header is refused rather than guessed at.
    """
    twice = [name for name in ("mcp-protocol-version", "mcp-method", "mcp-name") if name in repeated]
    if twice:
        return f"the {twice[0]} header is repeated"
    method = message["method"]
    params = message.get("params") or {}
    meta = params.get("_meta")
    version = meta.get(VERSION_KEY) if isinstance(meta, dict) else None
    key = _NAME_PARAM.get(method)
    name = params.get(key) if key is not None else None
    checks = [("Mcp-Method", headers.get("mcp-method"), method)]
    if isinstance(version, str):  # without it, the request lacks its required _meta: -32602 from the connection
        checks.append(("MCP-Protocol-Version", headers.get("mcp-protocol-version"), version))
    if isinstance(name, str):
        sent = headers.get("mcp-name")
        checks.append(("Mcp-Name", _decode_header_value(sent) if sent is not None else None, name))
    for header, sent, value in checks:
        if sent is None:
            return f"the {header} header is required"
        if sent != value:
            return f"{header} header value does not match body value {value!r}"
    return None


def _param_headers(schema: dict[str, Any]) -> tuple[tuple[str, str, str], ...]:
    """`(property, header name, type)` of each top-level parameter marked `x-mcp-header`."""
    found = []
    for prop, sub in (schema.get("properties") or {}).items():
        header = sub.get("x-mcp-header") if isinstance(sub, dict) else None
        if isinstance(header, str) and header:
            found.append((prop, f"mcp-param-{header.lower()}", str(sub.get("type", "string"))))
    return tuple(found)


def _same_value(sent: str | None, value: Any, kind: str) -> bool:
    """Whether a decoded header value stands for the body's `value` (numbers compare as numbers, 42.0 == 42)."""
    if sent is None:
        return False
    if isinstance(value, bool) or kind == "boolean":
        return sent == ("true" if value is True else "false" if value is False else None)
    if isinstance(value, (int, float)):
        try:
            return float(sent) == value
        except ValueError:
            return False
    return bool(sent == value)


def _decode_header_value(value: str) -> str | None:
    """A header value, decoded from the `=?base64?...?=` form when it uses it (None when that form is invalid)."""
    if not (value.startswith("=?base64?") and value.endswith("?=")):
        return value
    try:
        return base64.b64decode(value[9:-2], validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        return None


async def _session_gone(send: Send) -> None:
    # transports: a server "MUST respond to requests containing that session ID with HTTP 404". The id is never
    # echoed, and the body says the same for a forged, expired, ended or foreign one.
    body = _error_body(None, INVALID_REQUEST, "Session not found", "initialize a new session")
    await _plain(send, 404, body, [_JSON])


async def _plain(send: Send, status: int, body: bytes = b"", headers: Iterable[tuple[bytes, bytes]] = ()) -> None:
    listed = list(headers)
    if status != 204:  # RFC 9110: a 204 carries no Content-Length
        listed.append((b"content-length", str(len(body)).encode()))
    await send({"type": "http.response.start", "status": status, "headers": listed})
    await send({"type": "http.response.body", "body": body})
