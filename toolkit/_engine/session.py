"""SessionState: what a connection knows about its client, a value small enough to seal into an HTTP session id."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from toolkit._protocol.types import LOG_LEVELS, LogLevel

__all__ = ["LOG_LEVELS", "LogLevel", "SessionState"]


@dataclass(frozen=True)
class SessionState:
    """What a connection knows about its client: the handshake's outcome, or one 2026-07-28 request's `_meta`.

    A handshake-era connection holds one from `initialize` on (or from the start, when made with
    `Connection(server, transport, session=...)` for a session another worker negotiated); it replaces it, never
    changes it, so a copy read once stays true to that moment.
    """

    version: str
    """The negotiated protocol revision."""
    client_capabilities: dict[str, Any] = field(default_factory=dict)
    """The client's capabilities, as it declared them."""
    client_info: dict[str, Any] | None = None
    """The client's `clientInfo`, as sent (`None` when missing)."""
    initialized: bool = False
    """The client sent `notifications/initialized`."""
    log_level: LogLevel | None = "info"
    """The least severe log level the client wants (`None`: none at all)."""
    key: str = ""
    """What tells this 2025-11-25 session from every other (random: the nonce of an HTTP session id, one per
    `initialize` elsewhere): the owner of an anonymous caller's tasks. Empty in 2026-07-28, which has no session."""
