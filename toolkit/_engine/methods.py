"""What the methods other than `tools/call` answer: `initialize`, `server/discover`, `tools/list` (its pages and
cursors), `logging/setLevel`, and MCP Apps' `resources/list` and `resources/read` (the tools' `ui://` pages): functions
of the server's registry and the request, no connection state.

The handlers (toolkit/_engine/handlers.py, and the connection's own for `initialize` and `logging/setLevel`) call
them and keep what they return; `tools/call` is the pipeline's (toolkit/_engine/pipeline.py).
"""

from __future__ import annotations

import base64
import binascii
import secrets
from collections.abc import Container
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from toolkit._definition.ui import speaks_apps
from toolkit._errors import ProtocolError
from toolkit._protocol.jsonrpc import INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, encode
from toolkit._protocol.meta import UI_EXTENSION
from toolkit._protocol.revisions import negotiate

from .eras import STATELESS_VERSIONS, Stamp
from .session import LOG_LEVELS, SessionState
from .tasks import task_capabilities

if TYPE_CHECKING:
    from .registry import Registry

__all__ = [
    "CAPABILITIES",
    "discover",
    "initialize",
    "read_resource",
    "resources_page",
    "server_capabilities",
    "set_level",
    "tools_page",
]

CAPABILITIES = {"tools": {"listChanged": True}, "logging": {}}


def server_capabilities(server: Registry, version: str, client: dict[str, Any] | None = None) -> dict[str, Any]:
    """The server's capabilities in `version`: tasks too when a tool may run as one; `resources` when a tool has an
    MCP App, and the extension itself when the `client` declared it too (SEP-1724: each side names the extensions it
    supports; MCP Apps is "explicitly negotiated")."""
    tasks = any(tool.task is not None for tool in server.tools.values())
    if not tasks and not server.uis:
        return CAPABILITIES
    capabilities: dict[str, Any] = {**CAPABILITIES, **task_capabilities(version)} if tasks else dict(CAPABILITIES)
    if server.uis:
        capabilities["resources"] = {}  # no listChanged, no subscribe: the pages change only with the tool list
        if client is not None and speaks_apps(client):
            capabilities["extensions"] = {**capabilities.get("extensions", {}), UI_EXTENSION: {}}
    return capabilities


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
        "capabilities": server_capabilities(server, version, state.client_capabilities),
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


def discover(server: Registry, stamp: Stamp, state: SessionState) -> dict[str, Any]:
    """`server/discover` (2026-07-28), as the request's era (`stamp`) sends it."""
    result: dict[str, Any] = {
        # Only versions a client may name in _meta: the handshake revisions are reached through initialize.
        "supportedVersions": list(STATELESS_VERSIONS),
        "capabilities": server_capabilities(server, state.version, state.client_capabilities),
    }
    if server.instructions is not None:
        result["instructions"] = server.instructions
    return stamp.complete(stamp.era.cacheable(result, server.ttl_ms, server.cache_scope))


def tools_page(
    server: Registry, params: dict[str, Any], version: str, stamp: Stamp, payloads: list[str] | None = None
) -> str:
    """The `tools/list` result as JSON text, spliced from each tool's prepared JSON (nothing re-encoded): of every
    tool, or of `payloads` (those this caller sees: a `tool_filter`'s, or those of a client without MCP Apps).

    Raises:
        ProtocolError: -32602 for a cursor this server did not give.
    """
    parts = _page(server, "tools", payloads if payloads is not None else server.tool_payloads(version), params)
    # With a tool_filter the list depends on who asks: never one a shared cache may hand to another caller.
    scope = server.cache_scope if server.tool_filter is None else "private"
    return _closed(parts, server, stamp, scope)


def resources_page(server: Registry, params: dict[str, Any], stamp: Stamp, shown: Container[str] | None = None) -> str:
    """The `resources/list` result as JSON text: the tools' MCP Apps pages (`ui://`), paged as `tools/list` is; only
    the pages of `shown` URIs when given (those of the tools a `tool_filter` shows the caller).

    Raises:
        ProtocolError: -32601 when no tool has a page (the server serves no resources); -32602 for a bad cursor.
    """
    uis = server.uis
    if not uis:
        raise ProtocolError(METHOD_NOT_FOUND, "Method not found: resources/list")
    listed = [encode(ui.resource()) for uri, ui in uis.items() if shown is None or uri in shown]
    scope = server.cache_scope if shown is None else "private"  # a list that depends on who asks
    return _closed(_page(server, "resources", listed, params), server, stamp, scope)


def read_resource(
    server: Registry, params: dict[str, Any], stamp: Stamp, shown: Container[str] | None = None
) -> dict[str, Any]:
    """`resources/read` of a tool's MCP Apps page: its HTML and `_meta.ui` (a page of `shown` URIs, when given).

    Raises:
        ProtocolError: -32601 when no tool has a page; -32602 for a uri not a string; the era's code for a uri
            not a page of this server (`Era.missing_resource`: -32002 "Resource not found" before 2026-07-28, which
            folds it into -32602 and forbids it).
    """
    uis = server.uis
    if not uis:
        raise ProtocolError(METHOD_NOT_FOUND, "Method not found: resources/read")
    uri = params.get("uri")
    if not isinstance(uri, str):
        raise ProtocolError(INVALID_PARAMS, "Invalid params: uri must be a string")
    ui = uis.get(uri) if shown is None or uri in shown else None
    if ui is None:
        raise ProtocolError(stamp.era.missing_resource, f"Resource not found: {uri}", {"uri": uri})
    result: dict[str, Any] = {"contents": [ui.contents()]}
    return stamp.complete(stamp.era.cacheable(result, server.ttl_ms, server.cache_scope))


def _page(server: Registry, key: str, payloads: list[str], params: dict[str, Any]) -> list[str]:
    """One page of a list result (`tools/list`, `resources/list`) from the items' prepared JSON: the parts of its
    JSON text, open (`_closed` ends it)."""
    cursor = params.get("cursor")
    start = _decode_cursor(cursor, len(payloads)) if cursor is not None else 0
    size = server.page_size
    end = len(payloads) if size is None else min(start + size, len(payloads))
    parts = [f'{{"{key}":[', ",".join(payloads[start:end]), "]"]
    if end < len(payloads):
        parts.append(f',"nextCursor":"{_encode_cursor(end)}"')
    return parts


def _closed(parts: list[str], server: Registry, stamp: Stamp, scope: str) -> str:
    """A list result's JSON text: its page, and what its era ends it with (2026-07-28: how long and for whom it may
    be cached, `resultType`, the server's info)."""
    parts.append(stamp.list_end(server.ttl_ms, scope))
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
