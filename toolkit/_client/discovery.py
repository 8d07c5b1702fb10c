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

__all__ = ["Greeting", "discover", "initialize", "probe"]

Request = Callable[[str, dict[str, Any]], Awaitable[Any]]
"""Sends a request in the era being tried, and returns its result."""

# How long a server on a pipe may stay silent on `server/discover` before the handshake is tried beside it (`probe`):
# one that ignores an unknown method never answers it; one slow to start answers it late, and that answer still wins.
_SILENCE = 10.0


@dataclass(frozen=True, slots=True)
class Greeting:
    """What the server said of itself when the client connected."""

    protocol_version: str
    capabilities: dict[str, Any]
    instructions: str | None
    server_info: Implementation | None


async def discover(request: Request, era: ClientEra, *, fall_back: bool) -> Greeting | None:
    """Ask `server/discover` (how `era`, 2026-07-28, greets) and wait for the answer: the server's greeting, or None
    when it speaks only the handshake era and `fall_back` allows it (`protocol="auto"`). Over HTTP every request gets
    an answer, so a slow one (a busy server) is waited for; on a pipe, where a server may never answer an unknown
    method, `probe` asks it.

    Raises:
        ProtocolError: the server refused 2026-07-28 (and `fall_back` is False), or wants another modern revision
            (-32004: no fall back then either).
        ConnectionClosedError: there is no server at all.
    """
    try:
        result = await request(era.greeting, {})
    except ProtocolError as exc:
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


def _falls_back(exc: ProtocolError, fall_back: bool) -> bool:
    """Whether a failed `server/discover` means a handshake server (the stdio transport page): any error does, except
    -32004 (a modern server that wants another modern revision) and a closed connection (no server)."""
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


class _Discovering:
    """`server/discover` asked in a task of its own (`probe`): its greeting, or its failure, once answered."""

    def __init__(self) -> None:
        self.greeting: Greeting | None = None
        self.failure: ProtocolError | None = None  # no server, or one that wants another modern revision
        self.answered = anyio.Event()  # either way (a refusal leaves both None)

    async def ask(self, request: Request, era: ClientEra, found: anyio.CancelScope) -> None:
        """Ask; a greeting or a failure ends the probe (`found` cancelled), a refusal leaves it to the handshake."""
        try:
            self.greeting = await discover(request, era, fall_back=True)
        except ProtocolError as exc:
            self.failure = exc
        self.answered.set()
        if self.greeting is not None or self.failure is not None:
            found.cancel()


async def probe(
    discovering: tuple[Request, ClientEra],
    handshaking: tuple[Request, ClientEra],
    capabilities: dict[str, Any],
    client_info: dict[str, Any],
) -> Greeting:
    """`protocol="auto"` on a pipe (stdio), where a server that ignores an unknown method never answers
    `server/discover`: ask it, and past `_SILENCE` without an answer (or once refused) the `initialize` handshake too.
    The first greeting wins, so the era is the one the server took: a late answer to `server/discover` (a server slow
    to start, on a busy machine) makes the connection 2026-07-28's, as the server made it, even with the handshake on
    its way (which such a server refuses); a handshake server's answer makes it the handshake's. A refused handshake
    waits a while more for `server/discover`.

    Raises:
        ProtocolError: no era was accepted (the handshake's refusal), or the server wants another modern revision
            (-32004).
        ConnectionClosedError: there is no server at all.
    """
    asking = _Discovering()
    refused: ProtocolError | None = None
    async with anyio.create_task_group() as tg:
        tg.start_soon(asking.ask, *discovering, tg.cancel_scope)
        with anyio.move_on_after(_SILENCE):
            await asking.answered.wait()
        if asking.greeting is None and asking.failure is None:  # silent so far, or refused
            try:
                greeting = await initialize(*handshaking, capabilities, client_info)
            except ProtocolError as exc:  # a server of 2026-07-28 only refuses it: its late answer decides
                refused = exc
                with anyio.move_on_after(_SILENCE):
                    await asking.answered.wait()
            else:
                if asking.greeting is None:  # else the discovery's answer came first
                    asking.greeting = greeting
        tg.cancel_scope.cancel()
    return _greeted(asking, refused)


def _greeted(asking: _Discovering, refused: ProtocolError | None) -> Greeting:
    """The greeting a probe found.

    Raises:
        ProtocolError: it found none (the discovery's failure, else the handshake's refusal).
    """
    if asking.greeting is not None:
        return asking.greeting
    if asking.failure is not None:
        raise asking.failure
    assert refused is not None  # the handshake answered (a greeting) or raised
    raise refused
