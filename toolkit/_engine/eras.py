"""The protocol's two eras as objects: what differs between them lives here, once per era, and the rest of the
engine asks the era (`Incoming.era`, `era_of`) instead of comparing versions. What the floors below the engine need
to know of an era (asking, a tool's run) is its `EraRules` (`_protocol/revisions.py`), which each `Era` is made from;
how its tasks look is its `TaskWire` (`taskwire.py`).

- `HANDSHAKE` (2024-11-05 .. 2025-11-25): `initialize` fixes the revision for a session; the server sends the client
  requests (its questions) and notifications on the session; results are plain.
- `STATELESS` (2026-07-28): every request names its revision and the client's capabilities in `_meta`, and is
  served with a `SessionState` of its own; questions are results (`InputRequiredResult`); every result says its
  `resultType` and carries the server's `serverInfo` in `_meta`.

A third era (the spec's next revision) is one more `Era` here (a subclass where its behaviour differs), its
`EraRules`, its method table and its tests; `tests/test_architecture.py` keeps version comparisons out of the
engine and HTTP.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from toolkit._errors import ProtocolError
from toolkit._protocol.jsonrpc import (
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    RESOURCE_NOT_FOUND,
    UNSUPPORTED_PROTOCOL_VERSION,
    encode,
)
from toolkit._protocol.meta import CAPABILITIES_KEY, CLIENT_INFO_KEY, LOG_LEVEL_KEY, SERVER_INFO_KEY, VERSION_KEY
from toolkit._protocol.revisions import HANDSHAKE_RULES, STATELESS_RULES, EraRules

from .session import LOG_LEVELS, SessionState
from .taskwire import BY_EXTENSION, EXPERIMENTAL, TaskWire

__all__ = [
    "ERAS",
    "HANDSHAKE",
    "NO_SESSION",
    "STATELESS",
    "STATELESS_VERSIONS",
    "Era",
    "Stamp",
    "era_of",
    "route",
    "stamps",
]


class Era:
    """One era: its revisions and wire rules, the methods a client may call in it, its tasks, and how its results
    go out. The base class is the handshake era's behaviour; `_Stateless` changes what 2026-07-28 changed.

    Args:
        name: What the docs call it.
        rules: What its revisions say on the wire (`EraRules`, which the floors below the engine read).
        methods: The requests its clients may send (beyond `initialize`, which opens the handshake era).
        tasks: How its tasks are asked for, shown and answered (`taskwire.py`).
    """

    missing_resource = RESOURCE_NOT_FOUND
    """The code of `resources/read` for a resource the server does not have (server/resources)."""

    def __init__(self, name: str, rules: EraRules, methods: frozenset[str], tasks: TaskWire) -> None:
        self.name = name
        self.rules = rules
        self.versions = rules.versions
        self.stateless = rules.stateless
        """Each request carries its own state (`_meta`), with no session."""
        self.methods = methods
        self.tasks = tasks

    def __repr__(self) -> str:
        return f"<era {self.name}>"

    def stamp(self, result: dict[str, Any], server_info: Mapping[str, Any]) -> dict[str, Any]:
        """A result of this era as it goes out (`result`, changed in place)."""
        return result

    def complete(self, wire: dict[str, Any], server_info: Mapping[str, Any]) -> dict[str, Any]:
        """A result that ends its request (not a round's questions, nor a task created), as it goes out."""
        return wire

    def cacheable(self, result: dict[str, Any], ttl_ms: int, scope: str) -> dict[str, Any]:
        """A result the client may cache (a list, a resource), with what this era says of how long and for whom."""
        return result

    def list_end(self, ttl_ms: int, scope: str, meta: str) -> str:
        """The end of a list result's JSON text (`tools/list`, `resources/list`), spliced after its page: what
        `cacheable` and `complete` add, as text (`meta`: the `_meta` of `Stamp.meta`)."""
        return "}"


class _Stateless(Era):
    missing_resource = INVALID_PARAMS  # 2026-07-28 folds -32002 into -32602 and forbids it

    def stamp(self, result: dict[str, Any], server_info: Mapping[str, Any]) -> dict[str, Any]:
        result["_meta"] = {SERVER_INFO_KEY: server_info}
        return result

    def complete(self, wire: dict[str, Any], server_info: Mapping[str, Any]) -> dict[str, Any]:
        wire["resultType"] = "complete"
        wire["_meta"] = {**(wire.get("_meta") or {}), SERVER_INFO_KEY: server_info}
        return wire

    def cacheable(self, result: dict[str, Any], ttl_ms: int, scope: str) -> dict[str, Any]:
        result.update(ttlMs=ttl_ms, cacheScope=scope)
        return result

    def list_end(self, ttl_ms: int, scope: str, meta: str) -> str:
        return f',"ttlMs":{ttl_ms},"cacheScope":"{scope}","resultType":"complete","_meta":{meta}}}'


_BOTH = frozenset({"tools/call", "tools/list", "tasks/get", "tasks/cancel", "resources/list", "resources/read"})

HANDSHAKE = Era(
    "handshake", HANDSHAKE_RULES, _BOTH | {"ping", "logging/setLevel", "tasks/result", "tasks/list"}, EXPERIMENTAL
)
STATELESS = _Stateless(
    "stateless", STATELESS_RULES, _BOTH | {"server/discover", "subscriptions/listen", "tasks/update"}, BY_EXTENSION
)
ERAS: tuple[Era, ...] = (HANDSHAKE, STATELESS)

_BY_VERSION: dict[str, Era] = {version: era for era in ERAS for version in era.versions}
_STATELESS_BY_VERSION: dict[str, Era] = {version: era for era in ERAS if era.stateless for version in era.versions}
#: The revisions a client may name in a request's `_meta`, newest first (the handshake ones are reached through
#: `initialize`): what `server/discover` lists and an unsupported version's error names.
STATELESS_VERSIONS: tuple[str, ...] = tuple(_STATELESS_BY_VERSION)


def era_of(version: str) -> Era:
    """The era of a protocol revision this server speaks.

    Raises:
        KeyError: a revision of neither era.
    """
    return _BY_VERSION[version]


class Stamp:
    """What one era's results carry of one server, worked out once: its `serverInfo` (`info`), and the same as the
    JSON text of the `_meta` a list result ends with (`meta`)."""

    __slots__ = ("era", "info", "meta")

    def __init__(self, era: Era, info: dict[str, Any]) -> None:
        self.era = era
        self.info = info
        self.meta = encode({SERVER_INFO_KEY: info})

    def complete(self, result: dict[str, Any]) -> dict[str, Any]:
        """`result` as the era sends a result that ends its request (`Era.complete`)."""
        return self.era.complete(result, self.info)

    def list_end(self, ttl_ms: int, scope: str) -> str:
        """The end of a list result's JSON text (`Era.list_end`)."""
        return self.era.list_end(ttl_ms, scope, self.meta)


def stamps(server_info: Callable[[str], dict[str, Any]]) -> dict[Era, Stamp]:
    """Each era's `Stamp` for a server, from `server_info(version)` (the registry's), in its newest revision."""
    return {era: Stamp(era, server_info(era.versions[0])) for era in ERAS}


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
        era, state = _stateless(meta)
    elif session is not None and method not in _OUTSIDE_SESSION:
        era, state = HANDSHAKE, session
    else:
        _outside_eras(method, session)
        return None, NO_SESSION
    if method not in era.methods:
        raise ProtocolError(METHOD_NOT_FOUND, f"Method not found: {method}")
    return era, state


def _stateless(meta: Mapping[str, Any]) -> tuple[Era, SessionState]:
    """Check a stateless request's `_meta`: the era whose revision it names, and the request's client.

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
    era = _STATELESS_BY_VERSION.get(requested)
    if era is None:
        raise ProtocolError(
            UNSUPPORTED_PROTOCOL_VERSION,
            f"Unsupported protocol version: {requested}",
            {"supported": list(STATELESS_VERSIONS), "requested": requested},
        )
    level = meta.get(LOG_LEVEL_KEY)
    if level is not None and level not in LOG_LEVELS:
        raise ProtocolError(INVALID_PARAMS, f"Invalid params: unknown log level {level!r}")
    info = meta.get(CLIENT_INFO_KEY)
    return era, SessionState(requested, capabilities, info if isinstance(info, dict) else None, True, level)


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
        f"{HANDSHAKE.versions[0]}) or the {', '.join(STATELESS_VERSIONS)} _meta fields with every request",
    )
