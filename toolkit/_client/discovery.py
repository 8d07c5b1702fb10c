"""How a client learns which era a server speaks and what it says of itself: `server/discover` (2026-07-28), else
the `initialize` handshake (2025-11-25 down to 2024-11-05)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import anyio

from toolkit._errors import ConnectionClosedError, ProtocolError
from toolkit._protocol.client_eras import ClientEra
from toolkit._protocol.jsonrpc import INVALID_PARAMS, UNSUPPORTED_PROTOCOL_VERSION
from toolkit._protocol.meta import SERVER_INFO_KEY
from toolkit._protocol.types import Implementation

__all__ = ["Greeting", "discover", "initialize"]

Request = Callable[[str, dict[str, Any]], Awaitable[Any]]
"""Sends a request in the era being tried, and returns its result."""

# How long a server on a pipe may stay silent on `server/discover` before it is taken for a handshake server: one that
# ignores an unknown method never answers it.
_SILENCE = 10.0


@dataclass(frozen=True, slots=True)
class Greeting:
    """What the server said of itself when the client connected."""

    protocol_version: str
    capabilities: dict[str, Any]
    instructions: str | None
    server_info: Implementation | None


async def discover(request: Request, era: ClientEra, *, fall_back: bool, always_answers: bool) -> Greeting | None:
    """Ask `server/discover` (how `era`, 2026-07-28, greets): the server's greeting, or None when it speaks only the
    handshake era and `fall_back` allows it (`protocol="auto"`).

    A server that ignores an unknown method stays silent on stdio; over HTTP every request gets an answer
    (`always_answers`), so a slow one (a busy server) is waited for rather than taken for an older server.

    Raises:
        ProtocolError: the server refused 2026-07-28 (and `fall_back` is False), or wants another modern revision
            (-32004: no fall back then either).
        ConnectionClosedError: there is no server at all.
    """
    try:
        with anyio.fail_after(_SILENCE if fall_back and not always_answers else None):
            result = await request(era.greeting, {})
    except (ProtocolError, TimeoutError) as exc:
        if not _falls_back(exc, fall_back):
            raise
        return None
    if era.version in result.get("supportedVersions", ()):
        return _discovered(result, era)
    if not fall_back:
        raise ProtocolError(UNSUPPORTED_PROTOCOL_VERSION, f"the server does not support {era.version}", result)
    return None


def _discovered(result: dict[str, Any], era: ClientEra) -> Greeting:
    """What a 2026-07-28 server says of itself in its `server/discover` result (its name in `_meta`)."""
    info = (result.get("_meta") or {}).get(SERVER_INFO_KEY)
    return Greeting(
        era.version,
        result.get("capabilities") or {},
        result.get("instructions"),
        Implementation.model_validate(info) if info else None,
    )


def _falls_back(exc: ProtocolError | TimeoutError, fall_back: bool) -> bool:
    """Whether a failed `server/discover` means a handshake server (the stdio transport page): any error or silence
    does, except -32004 (a modern server that wants another modern revision) and a closed connection (no server)."""
    if not fall_back or isinstance(exc, ConnectionClosedError):
        return False
    return not (isinstance(exc, ProtocolError) and exc.code == UNSUPPORTED_PROTOCOL_VERSION)


async def initialize(
    request: Request, era: ClientEra, capabilities: dict[str, Any], client_info: dict[str, Any]
) -> Greeting:
    """The `initialize` handshake of `era` (its newest revision offered): the server's greeting.

    Raises:
        ProtocolError: the server refused, or chose a revision this client does not speak (-32602).
    """
    params = {"protocolVersion": era.version, "capabilities": capabilities, "clientInfo": client_info}
    result = await request(era.greeting, params)
    version = result.get("protocolVersion")
    if not era.speaks(version):
        raise ProtocolError(INVALID_PARAMS, f"the server chose an unsupported protocol version: {version}")
    return Greeting(
        version,
        result.get("capabilities") or {},
        result.get("instructions"),
        Implementation.model_validate(result.get("serverInfo") or {"name": "?", "version": "?"}),
    )
