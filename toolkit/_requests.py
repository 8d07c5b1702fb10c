"""What a request says and how each method answers it: per-request metadata, discovery, tool pages, calls.

Everything here is a pure function of the request and the server; the connection's state lives in
`_session.py`.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import anyio
import pydantic

from ._context import LOG_LEVELS, Context, LogLevel, Notify
from ._jsonrpc import INVALID_PARAMS, UNSUPPORTED_PROTOCOL_VERSION, ProtocolError, is_valid_id
from ._types import LATEST_HANDSHAKE_VERSION, MODERN_VERSION, Implementation
from ._versions import shape_result

if TYPE_CHECKING:
    from ._server import Server

__all__ = [
    "CAPABILITIES",
    "Request",
    "call_tool",
    "discover_result",
    "modern_request",
    "parse_client_info",
    "tools_page",
]

VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
CLIENT_INFO_KEY = "io.modelcontextprotocol/clientInfo"
LOG_LEVEL_KEY = "io.modelcontextprotocol/logLevel"
SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"
SUBSCRIPTION_KEY = "io.modelcontextprotocol/subscriptionId"

CAPABILITIES = {"tools": {"listChanged": True}, "logging": {}}


class Request:
    """What a method handler needs to know about one request."""

    __slots__ = ("client_info", "id", "log_level", "meta", "params", "version")

    def __init__(self, request_id: Any, params: dict[str, Any], version: str, meta: dict[str, Any] | None) -> None:
        self.id = request_id
        self.params = params
        self.version = version
        self.meta = meta
        self.log_level: LogLevel | None = None
        self.client_info: Implementation | None = None

    @property
    def modern(self) -> bool:
        return self.version == MODERN_VERSION


def parse_client_info(info: Any) -> Implementation | None:
    """The client's self-description, or None when it is missing or malformed (it is display-only)."""
    if not isinstance(info, dict):
        return None
    try:
        return Implementation.model_validate(info)
    except pydantic.ValidationError:
        return None


def modern_request(request_id: Any, params: dict[str, Any], meta: dict[str, Any]) -> Request:
    """Check a 2026-07-28 request's `_meta` and describe the request.

    Raises:
        ProtocolError: -32602 for a missing or malformed required field or an unknown log level, -32022 for a
            well-formed version this server does not speak (the order the spec's basic/index and the SDK use).
    """
    requested = meta.get(VERSION_KEY)
    if not isinstance(requested, str):
        raise ProtocolError(INVALID_PARAMS, f"Invalid params: _meta[{VERSION_KEY!r}] must be a string")
    if not isinstance(meta.get(CAPABILITIES_KEY), dict):
        raise ProtocolError(INVALID_PARAMS, f"Invalid params: _meta[{CAPABILITIES_KEY!r}] is required (an object)")
    if requested != MODERN_VERSION:
        raise ProtocolError(
            UNSUPPORTED_PROTOCOL_VERSION,
            f"Unsupported protocol version: {requested}",
            {"supported": [MODERN_VERSION], "requested": requested},
        )
    request = Request(request_id, params, MODERN_VERSION, meta)
    level = meta.get(LOG_LEVEL_KEY)
    if level is not None and level not in LOG_LEVELS:
        raise ProtocolError(INVALID_PARAMS, f"Invalid params: unknown log level {level!r}")
    request.log_level = level
    request.client_info = parse_client_info(meta.get(CLIENT_INFO_KEY))
    return request


def discover_result(server: Server, server_info: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = {
        # Only versions a client may name in _meta: the handshake revisions are reached through initialize.
        "supportedVersions": [MODERN_VERSION],
        "capabilities": CAPABILITIES,
        "ttlMs": server.ttl_ms,
        "cacheScope": server.cache_scope,
        "resultType": "complete",
        "_meta": {SERVER_INFO_KEY: server_info},
    }
    if server.instructions is not None:
        result["instructions"] = server.instructions
    return result


def tools_page(server: Server, request: Request, modern_meta: str) -> str:
    """The `tools/list` result as JSON text, spliced from each tool's prepared JSON (nothing re-encoded)."""
    payloads = server.tool_payloads(request.version)
    cursor = request.params.get("cursor")
    start = _decode_cursor(cursor, len(payloads)) if cursor is not None else 0
    size = server.page_size
    end = len(payloads) if size is None else min(start + size, len(payloads))
    parts = ['{"tools":[', ",".join(payloads[start:end]), "]"]
    if end < len(payloads):
        parts.append(f',"nextCursor":"{_encode_cursor(end)}"')
    if request.modern:
        parts.append(f',"ttlMs":{server.ttl_ms},"cacheScope":"{server.cache_scope}"')
        parts.append(f',"resultType":"complete","_meta":{modern_meta}')
    parts.append("}")
    return "".join(parts)


async def call_tool(
    server: Server,
    request: Request,
    log_level: Callable[[], LogLevel | None],
    notify: Notify,
    modern_info: dict[str, Any],
) -> dict[str, Any]:
    """Run `tools/call`: the result's wire object for the request's revision.

    Raises:
        ProtocolError: -32602 when params are malformed or the tool is unknown (failures of the tool itself, bad
            arguments included, are results with `isError: true`).
    """
    params = request.params
    name = params.get("name")
    if not isinstance(name, str):
        raise ProtocolError(INVALID_PARAMS, "Invalid params: name must be a string")
    tool = server.tools.get(name)
    if tool is None:
        raise ProtocolError(INVALID_PARAMS, f"Unknown tool: {name}")
    arguments = params.get("arguments")
    if arguments is not None and not isinstance(arguments, dict):
        raise ProtocolError(INVALID_PARAMS, "Invalid params: arguments must be an object")
    if server.schema_profile is not None:
        arguments = tool.arguments_from(server.schema_profile, arguments)
    meta = params.get("_meta")
    token = meta.get("progressToken") if isinstance(meta, dict) else None
    context = Context(
        request_id=request.id,
        client_info=request.client_info,
        protocol_version=request.version,
        progress_token=token if is_valid_id(token) else None,
        log_level=log_level,
        notify=notify,
        show_error_details=server.show_error_details,
        lifespan_context=server.lifespan_context,
    )
    timeout = server.tool_timeout
    if timeout is None:
        wire, _ = await tool._call_wire(arguments, context)
    else:
        with anyio.move_on_after(timeout) as scope:
            wire, _ = await tool._call_wire(arguments, context)
        if scope.cancelled_caught:
            wire = {"content": [{"type": "text", "text": f"tool {name!r} timed out after {timeout:g} s"}]}
            wire["isError"] = True
    if request.version != LATEST_HANDSHAKE_VERSION:
        wire = shape_result(wire, request.version, tool.wraps_result)
    if request.modern:
        wire["resultType"] = "complete"
        wire["_meta"] = {**(wire.get("_meta") or {}), SERVER_INFO_KEY: modern_info}
    return wire


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
