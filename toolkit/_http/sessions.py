"""The 2025-11-25 sessions of an HTTP app, in one place: their signed ids, what this process keeps of each, and the
store of the ended ones.

A session id is a sealed token (`_seal.py`, a purpose of its own: `v1.<key id>.<payload>.<mac>`, visible ASCII as
the transport page requires), so any worker with the key serves any request. Its payload holds what a connection
needs to serve the session without having seen its `initialize` (negotiated revision, the client capabilities the
server uses, the client's name and version) and a random nonce (so the id is unguessable); the sealer adds the
expiry and, with authentication, binds it to its user (a keyed digest of the subject, checked with the key that
signed the id, so a rotation keeps sessions). Nothing secret is in it.

What is not in the id stays in this process (`SessionRecord`: calls in flight, the GET stream, the log level), in a
bounded table; which sessions `DELETE` ended is the one fact the workers share, through the `SessionStore`.
"""

from __future__ import annotations

import json
import logging
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Generic, NamedTuple, Protocol, TypeVar

import anyio

from toolkit._definition.ui import speaks_apps
from toolkit._engine.eras import HANDSHAKE
from toolkit._engine.session import SessionState
from toolkit._protocol.meta import UI_EXTENSION
from toolkit._seal import Opened, Sealer, SealError, secret_keys

from .session_store import ProcessSessionStore, SessionStore

__all__ = ["UNSET", "Call", "Direct", "SessionId", "SessionRecord", "Sessions", "Stream"]

logger = logging.getLogger("toolkit.http")

PURPOSE = b"toolkit/session/v1"
# Refused before any work; a minted id always fits (the bounds below keep its payload under about 1,500 bytes).
MAX_ID_SIZE = 2048
# The client capabilities a server acts on (server-to-client requests check them); anything else a client
# declares (`experimental`, extensions) is unbounded and stays out of a header, but whether it speaks MCP Apps.
_CAPABILITY_KEYS = ("sampling", "elicitation", "roots", "tasks")
_CAPABILITY_SIZE = 256  # JSON characters, as sealed (non-ASCII escaped)
_INFO_SIZE = 64  # characters of the client's name and version kept
_INFO_ESCAPED = 128  # and at most this many once escaped
# Records kept before the oldest idle ones go (their sessions keep working: a record is made again on demand).
_RECORDS = 10_000
_RECORDS_SWEPT = 1000
_OPENED = 4096  # verified ids remembered (`Sessions.open`): at most 2 KB each

UNSET: Any = object()
"""A record's `log_level` before `logging/setLevel` (None is a level: "none")."""


class Call(Protocol):
    """A call in flight, as its session's record knows it: `notifications/cancelled` ends its input (`end_input`),
    `DELETE` cancels its scope."""

    scope: anyio.CancelScope

    def end_input(self, last: dict[str, Any]) -> None: ...


class Direct:
    """A call answered in its request's task (no exchange of its own), as its session's table of calls in flight
    knows it: `notifications/cancelled` and DELETE cancel its scope."""

    __slots__ = ("scope",)

    def __init__(self) -> None:
        self.scope = anyio.CancelScope()

    def end_input(self, last: dict[str, Any]) -> None:
        self.scope.cancel()


class Stream(Call, Protocol):
    """The transport of a session's request on this process: a call, or the GET stream (`close` ends it)."""

    def close(self) -> None: ...


S = TypeVar("S", bound=Stream)


class SessionRecord(Generic[S]):
    """What one process knows of a session beyond its signed id: live, mutable, not shared."""

    __slots__ = ("asks", "calls", "log_level", "stream")

    def __init__(self) -> None:
        self.log_level: Any = UNSET  # set by logging/setLevel on this process
        self.calls: dict[Any, S | Call] = {}  # requests in flight, for notifications/cancelled
        self.stream: S | None = None  # the GET stream, if open on this process
        self.asks: dict[str, S] = {}  # the server's requests awaiting the client's POSTed answer, by id


class SessionId(NamedTuple):
    """What a verified session id says (a tuple: made on every request of a session, it costs the least)."""

    token: str
    """The id itself, as sent in `Mcp-Session-Id`."""
    nonce: str
    """Its random part: the key of what a process keeps about the session, and of what the store remembers."""
    state: SessionState
    expires: int
    """Unix time, whole seconds."""


class Sessions(Generic[S]):
    """The sessions of one app: mints and opens their ids, keeps this process's record of each, ends them.

    Args:
        secrets_: The shared key(s), checked (`Server.share_secret`); the first signs, every one verifies (rotation).
            `None` makes one random key for this process.
        ttl: Seconds a session id stays valid after `initialize`.
        store: Where the ended sessions are remembered (`http_app(session_store=...)`); None: this process only.
        clock: Seconds since the epoch; tests inject one instead of sleeping.

    Raises:
        TypeError: `store` is not a `SessionStore`.
    """

    __slots__ = ("_clock", "_opened", "_own_store", "_records", "_sealer", "_warned", "store", "ttl")

    def __init__(
        self,
        secrets_: Sequence[bytes] | None,
        ttl: float,
        store: SessionStore | None = None,
        *,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if store is not None and not isinstance(store, SessionStore):
            raise TypeError(f"session_store= takes a SessionStore (end, is_ended), got {store!r}")
        self._sealer = Sealer(secrets_ if secrets_ is not None else secret_keys(None), PURPOSE, clock=clock)
        self.ttl = ttl
        self.store: SessionStore = store if store is not None else ProcessSessionStore()
        """Which sessions `DELETE` ended (consulted by 2025-11-25 requests only)."""
        # A store of its own sees no end but through `end`, which forgets the id: an id still remembered is not ended.
        # (With a backend the fleet says which sessions other workers ended: `Posts._shared`.)
        self._own_store: SessionStore | None = self.store if store is None else None
        self._records: OrderedDict[str, SessionRecord[S]] = OrderedDict()
        self._warned = False
        self._clock = clock
        # The ids already verified, with their user: a session's next requests skip the MAC and the decoding, not the
        # expiry nor the ended-session store. Bounded, and left at DELETE; only verified ids enter, so a flood of
        # forged ones cannot.
        self._opened: dict[str, tuple[str | None, SessionId]] = {}

    def mint(self, state: SessionState, subject: str | None = None) -> SessionId:
        """A new session for a connection that `initialize` set up (for the user `subject`, with authentication),
        recorded here: the id says what any worker reads from it."""
        data: dict[str, Any] = {
            "n": secrets.token_urlsafe(16),
            "v": state.version,
            "c": _bounded_capabilities(state.client_capabilities),
        }
        if state.client_info is not None:
            data["i"] = [_clip(str(state.client_info.get(key, ""))) for key in ("name", "version")]
        token = self._sealer.seal(data, bind=_bind(subject), ttl=self.ttl)
        # Read back as any worker reads it: one way from an id to a session.
        session = _read(token, self._sealer.unseal(token, bind=_bind(subject)))
        self.record(session)
        return session

    def open(self, token: str, subject: str | None) -> SessionId | None:
        """The session an id names, or None when it is malformed, forged, signed with an unknown key, expired,
        another user's (security best practices: such an id is as unknown as a forged one), or ended."""
        known = self._opened.get(token)
        if known is None or known[0] != subject:  # not verified yet, or another user's (its check refuses it)
            return self._open(token, subject)
        session = known[1]
        if session.expires < self._clock():  # expired, as the sealer would say: verified again it is refused
            del self._opened[token]
            return None
        if self.store is self._own_store or not self.store.is_ended(session.nonce):
            return session
        return None

    def record(self, session: SessionId) -> SessionRecord[S]:
        """What this process keeps of `session`, made on first use (by a request this process serves)."""
        records = self._records
        record = records.get(session.nonce)
        if record is None:
            record = records[session.nonce] = SessionRecord()
            if len(records) > _RECORDS:  # bounded: the oldest idle records go
                for nonce in list(records)[:_RECORDS_SWEPT]:
                    if not records[nonce].calls and records[nonce].stream is None:
                        del records[nonce]
        else:
            records.move_to_end(session.nonce)
        return record

    def known(self, nonce: str) -> SessionRecord[S] | None:
        """What this process keeps of the session `nonce`, if anything (never made here)."""
        return self._records.get(nonce)

    def end(self, session: SessionId) -> None:
        """`DELETE`: the session is ended on every worker that shares the store; its calls on this process are
        cancelled and its GET stream closed."""
        self.store.end(session.nonce, session.expires)
        self._opened.pop(session.token, None)
        self.forget(session.nonce)

    def forget(self, nonce: str) -> None:
        """The session `nonce` ended (here, or on another worker that said so): its calls on this process are
        cancelled, its GET stream closed, its record dropped."""
        record = self._records.pop(nonce, None)
        if record is not None:
            for call in record.calls.values():
                call.scope.cancel()
            if record.stream is not None:
                record.stream.close()

    def _open(self, token: str, subject: str | None) -> SessionId | None:
        """Verify and read an id (and remember it, verified); None when it is not valid or its session ended."""
        opened = self._opened
        try:
            session = _read(token, self._sealer.unseal(token, bind=_bind(subject), max_size=MAX_ID_SIZE))
        except SealError as error:
            if error.reason == "unknown_key" and not self._warned:
                self._warned = True
                logger.warning(
                    "a session id signed with another key reached this process: give every worker the same secret "
                    "(Server(secret=...) or http_app(secret=...), see docs/deploy.md#keys); such sessions get 404"
                )
            return None
        if self.store.is_ended(session.nonce):  # never remembered: `open` trusts what it remembers to its own store
            return None
        if len(opened) >= _OPENED:  # bounded: the oldest goes (it is verified again on its next request)
            del opened[next(iter(opened))]
        opened[token] = (subject, session)
        return session


def _bind(subject: str | None) -> Mapping[str, str]:
    """What a session id is bound to: its user, with authentication; nothing without."""
    return {"sub": subject} if subject is not None else {}


def _read(token: str, opened: Opened) -> SessionId:
    """The session a verified token describes.

    Raises:
        SealError: it is not one this version serves.
    """
    data = opened.data
    if not isinstance(data, dict) or data.get("v") not in HANDSHAKE.versions or not isinstance(data.get("n"), str):
        raise SealError("malformed")
    info = data.get("i")
    client_info = {"name": info[0], "version": info[1]} if isinstance(info, list) and len(info) == 2 else None
    capabilities = data.get("c")
    # A valid id means initialize succeeded; `initialized` may have gone to another worker: take it as sent.
    caps = capabilities if isinstance(capabilities, dict) else {}
    state = SessionState(str(data["v"]), caps, client_info, initialized=True, key=data["n"])
    return SessionId(token, data["n"], state, opened.expires)


def _bounded_capabilities(capabilities: dict[str, Any]) -> dict[str, Any]:
    kept: dict[str, Any] = {}
    for key in _CAPABILITY_KEYS:
        value = capabilities.get(key)
        if isinstance(value, dict):
            kept[key] = value if len(_sealed_json(value)) <= _CAPABILITY_SIZE else {}
    if speaks_apps(capabilities):  # of the extensions, MCP Apps changes what is served (app-only tools): one bit
        kept["extensions"] = {UI_EXTENSION: {}}
    return kept


def _clip(text: str) -> str:
    """`text` cut to what a session id keeps of a name: `_INFO_SIZE` characters, `_INFO_ESCAPED` once sealed."""
    text = text[:_INFO_SIZE]
    while len(_sealed_json(text)) > _INFO_ESCAPED + 2:  # 2: the quotes
        text = text[:-1]
    return text


def _sealed_json(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=True)
