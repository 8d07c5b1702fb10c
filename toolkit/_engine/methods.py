"""What the methods other than `tools/call` answer: `initialize`, `server/discover`, `tools/list` (its pages and
cursors), `logging/setLevel`: functions of the server's registry and the request, no connection state.

The connection's handlers (toolkit/_engine/connection.py) call them and keep what they return; `tools/call` stays
in the connection, as it is every call's path (the hop figure, docs/architecture.md).
"""

from __future__ import annotations

import base64
import binascii
import secrets
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from toolkit._errors import ProtocolError
from toolkit._protocol.jsonrpc import INVALID_PARAMS, INVALID_REQUEST
from toolkit._protocol.meta import SERVER_INFO_KEY
from toolkit._protocol.revisions import negotiate
from toolkit._protocol.types import MODERN_VERSION

from .session import LOG_LEVELS, SessionState
from .tasks import task_capabilities

if TYPE_CHECKING:
    from .registry import Registry

__all__ = ["CAPABILITIES", "discover", "initialize", "server_capabilities", "set_level", "tools_page"]

CAPABILITIES = {"tools": {"listChanged": True}, "logging": {}}


def server_capabilities(server: Registry, version: str) -> dict[str, Any]:
    """The server's capabilities in `version`: tasks too when a tool may run as one."""
    if any(tool.task is not None for tool in server.tools.values()):
        return {**CAPABILITIES, **task_capabilities(version)}
    return CAPABILITIES


def initialize(
    server: Registry, params: dict[str, Any], session: SessionState | None, initialized: bool
) -> tuple[SessionState, dict[str, Any]]:
    """`initialize`: the connection's new session, and the result.

    Raises:
        ProtocolError: -32602 for a protocolVersion not a string, -32600 for a connection already initialized.
    """
    requested = params.get("protocolVersion")
    if not isinstance(requested, str):
        raise ProtocolError(INVALID_PARAMS, "Invalid params: protocolVersion must be a string")
    if session is not None:
        raise ProtocolError(INVALID_REQUEST, "Invalid request: the connection is already initialized")
    version = negotiate(requested)
    info = params.get("clientInfo")
    capabilities = params.get("capabilities")
    state = SessionState(
        version,
        capabilities if isinstance(capabilities, dict) else {},
        info if isinstance(info, dict) else None,
        initialized,
        key=secrets.token_urlsafe(16),  # over HTTP the session id's own nonce replaces it (`_http/sessions.py`)
    )
    result: dict[str, Any] = {
        "protocolVersion": version,
        "capabilities": server_capabilities(server, version),
        "serverInfo": server.server_info(version),
    }
    if server.instructions is not None:
        result["instructions"] = server.instructions
    return state, result


def set_level(params: dict[str, Any], state: SessionState) -> SessionState:
    """`logging/setLevel`: the session with the client's new level.

    Raises:
        ProtocolError: -32602 for a level MCP does not name.
    """
    level = params.get("level")
    if level not in LOG_LEVELS:
        raise ProtocolError(INVALID_PARAMS, f"Invalid params: level must be one of {', '.join(LOG_LEVELS)}")
    return replace(state, log_level=level)


def discover(server: Registry, modern_info: dict[str, Any]) -> dict[str, Any]:
    """`server/discover` (2026-07-28)."""
    result: dict[str, Any] = {
        # Only versions a client may name in _meta: the handshake revisions are reached through initialize.
        "supportedVersions": [MODERN_VERSION],
        "capabilities": server_capabilities(server, MODERN_VERSION),
        "ttlMs": server.ttl_ms,
        "cacheScope": server.cache_scope,
        "resultType": "complete",
        "_meta": {SERVER_INFO_KEY: modern_info},
    }
    if server.instructions is not None:
        result["instructions"] = server.instructions
    return result


def tools_page(
    server: Registry, params: dict[str, Any], version: str, modern_meta: str, payloads: list[str] | None = None
) -> str:
    """The `tools/list` result as JSON text, spliced from each tool's prepared JSON (nothing re-encoded): of every
    tool, or of `payloads` (the tools a `tool_filter` shows this caller).

    Raises:
        ProtocolError: -32602 for a cursor this server did not give.
    """
    if payloads is None:
        payloads = server.tool_payloads(version)
    cursor = params.get("cursor")
    start = _decode_cursor(cursor, len(payloads)) if cursor is not None else 0
    size = server.page_size
    end = len(payloads) if size is None else min(start + size, len(payloads))
    parts = ['{"tools":[', ",".join(payloads[start:end]), "]"]
    if end < len(payloads):
        parts.append(f',"nextCursor":"{_encode_cursor(end)}"')
    if version == MODERN_VERSION:
        # With a tool_filter the list depends on who asks: never one a shared cache may hand to another caller.
        scope = server.cache_scope if server.tool_filter is None else "private"
        parts.append(f',"ttlMs":{server.ttl_ms},"cacheScope":"{scope}"')
        parts.append(f',"resultType":"complete","_meta":{modern_meta}')
    parts.append("}")
    return "".join(parts)


def _encode_cursor(offset: int) -> str:
    return base64.urlsafe_b64encode(f"toolkit:{offset}".encode()).decode()


def _decode_cursor(cursor: Any, total: int) -> int:
    try:
        text = base64.urlsafe_b64decode(cursor.encode()).decode()
        prefix, _, number = text.partition(":")
        offset = int(number)
        if prefix != "toolkit" or not 0 <= offset <= total:
            raise ValueError(cursor)
    except (AttributeError, ValueError, binascii.Error, UnicodeError):
        raise ProtocolError(INVALID_PARAMS, "Invalid params: invalid cursor") from None
    return offset
