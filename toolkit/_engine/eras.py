"""The protocol's two eras as objects: what differs between them lives here, once per era, and the rest of the
engine asks the era (`state.era`, `era_of`) instead of comparing versions.

- `HANDSHAKE` (2024-11-05 .. 2025-11-25): `initialize` fixes the revision for a session; the server sends the client
  requests (its questions) and notifications on the session; results are plain.
- `STATELESS` (2026-07-28): every request names its revision and the client's capabilities in `_meta`, and is
  served with a `SessionState` of its own; questions are results (`InputRequiredResult`); every result says its
  `resultType` and carries the server's `serverInfo` in `_meta`.

A third era (the spec's next revision) is one more `Era` here, its method table and its tests.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from toolkit._errors import ProtocolError
from toolkit._protocol.jsonrpc import INVALID_PARAMS, METHOD_NOT_FOUND, UNSUPPORTED_PROTOCOL_VERSION
from toolkit._protocol.meta import CAPABILITIES_KEY, CLIENT_INFO_KEY, LOG_LEVEL_KEY, SERVER_INFO_KEY, VERSION_KEY
from toolkit._protocol.types import HANDSHAKE_VERSIONS, MODERN_VERSION

from .session import LOG_LEVELS, SessionState

__all__ = ["ERAS", "HANDSHAKE", "NO_SESSION", "STATELESS", "Era", "era_of", "route"]


class Era:
    """One era: its revisions, the methods a client may call in it, and how its results are stamped.

    Args:
        name: What the docs call it.
        versions: Its protocol revisions, newest first.
        methods: The requests its clients may send (beyond `initialize`, which opens the handshake era).
    """

    stateless = False
    """Whether each request carries its own state (`_meta`), with no session."""

    def __init__(self, name: str, versions: tuple[str, ...], methods: frozenset[str]) -> None:
        self.name = name
        self.versions = versions
        self.methods = methods

    def __repr__(self) -> str:
        return f"<era {self.name}>"

    def stamp(self, result: dict[str, Any], server_info: Mapping[str, Any]) -> dict[str, Any]:
        """A result of this era as it goes out (`result`, changed in place)."""
        return result

    def complete(self, wire: dict[str, Any], server_info: Mapping[str, Any]) -> dict[str, Any]:
        """A `tools/call` result that ends the request (not a round's questions, nor a task), as it goes out."""
        return wire


class _Stateless(Era):
    stateless = True

    def stamp(self, result: dict[str, Any], server_info: Mapping[str, Any]) -> dict[str, Any]:
        result["_meta"] = {SERVER_INFO_KEY: server_info}
        return result

    def complete(self, wire: dict[str, Any], server_info: Mapping[str, Any]) -> dict[str, Any]:
        wire["resultType"] = "complete"
        wire["_meta"] = {**(wire.get("_meta") or {}), SERVER_INFO_KEY: server_info}
        return wire

    def state(self, meta: Mapping[str, Any]) -> SessionState:
        """Check a request's `_meta` and describe the request's client.

        Raises:
            ProtocolError: -32602 for a missing or malformed required field or an unknown log level, -32022 for a
                well-formed version this server does not speak (the order the spec's basic/index and the SDK use).
        """
        requested = meta.get(VERSION_KEY)
        if not isinstance(requested, str):
            raise ProtocolError(INVALID_PARAMS, f"Invalid params: _meta[{VERSION_KEY!r}] must be a string")
        capabilities = meta.get(CAPABILITIES_KEY)
        if not isinstance(capabilities, dict):
            raise ProtocolError(INVALID_PARAMS, f"Invalid params: _meta[{CAPABILITIES_KEY!r}] is required (an object)")
        if requested not in self.versions:
            raise ProtocolError(
                UNSUPPORTED_PROTOCOL_VERSION,
                f"Unsupported protocol version: {requested}",
                {"supported": list(self.versions), "requested": requested},
            )
        level = meta.get(LOG_LEVEL_KEY)
        if level is not None and level not in LOG_LEVELS:
            raise ProtocolError(INVALID_PARAMS, f"Invalid params: unknown log level {level!r}")
        info = meta.get(CLIENT_INFO_KEY)
        return SessionState(requested, capabilities, info if isinstance(info, dict) else None, True, level)


_BOTH = frozenset({"tools/call", "tools/list", "tasks/get", "tasks/cancel", "resources/list", "resources/read"})

HANDSHAKE = Era("handshake", HANDSHAKE_VERSIONS, _BOTH | {"ping", "logging/setLevel", "tasks/result", "tasks/list"})
STATELESS = _Stateless(
    "stateless", (MODERN_VERSION,), _BOTH | {"server/discover", "subscriptions/listen", "tasks/update"}
)
ERAS: tuple[Era, ...] = (HANDSHAKE, STATELESS)

_BY_VERSION: dict[str, Era] = {version: era for era in ERAS for version in era.versions}


def era_of(version: str) -> Era:
    """The era of a protocol revision this server speaks.

    Raises:
        KeyError: a revision of neither era.
    """
    return _BY_VERSION[version]


#: The state of the requests served outside both eras (`initialize`, and `ping` before it): no revision yet.
NO_SESSION = SessionState("")
_OUTSIDE_SESSION = frozenset({"initialize", "server/discover"})  # never served from a handshake session


def route(method: str, params: Mapping[str, Any], session: SessionState | None) -> tuple[Era | None, SessionState]:
    """The era a request is served in and its state: 2026-07-28 when its `_meta` names a revision (`initialize`
    is always of the handshake era), else the handshake session's; None and `NO_SESSION` for the few requests outside
    both (`initialize`, and `ping` before it).

    Raises:
        ProtocolError: -32601 for a method the era lacks; -32602 for a request that names no era (2026-07-28,
            basic/index: a request missing the required _meta fields is malformed; the same code tells a
            handshake-era client it must initialize first, the lifecycle leaving the code open).
    """
    meta = params.get("_meta")
    if type(meta) is dict and VERSION_KEY in meta and method != "initialize":
        era: Era = STATELESS
        state = STATELESS.state(meta)
    elif session is not None and method not in _OUTSIDE_SESSION:
        era, state = HANDSHAKE, session
    else:
        _outside_eras(method, session)
        return None, NO_SESSION
    if method not in era.methods:
        raise ProtocolError(METHOD_NOT_FOUND, f"Method not found: {method}")
    return era, state


def _outside_eras(method: str, session: SessionState | None) -> None:
    """Check a request that names no era: `initialize`, or `ping` before it (the one request a client may send first).

    Raises:
        ProtocolError: -32602, any other.
    """
    if method == "initialize" or (method == "ping" and session is None):
        return
    raise ProtocolError(
        INVALID_PARAMS,
        f"Invalid params: params._meta is missing {VERSION_KEY!r}; send initialize (protocol versions up to "
        f"{HANDSHAKE_VERSIONS[0]}) or the {MODERN_VERSION} _meta fields with every request",
    )
