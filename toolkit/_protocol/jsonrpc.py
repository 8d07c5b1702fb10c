"""JSON-RPC 2.0: the envelope, the named error codes and the one place messages are encoded and decoded.

Imports nothing from toolkit: every other module may use it, the exception tree (`_errors`) included.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import pydantic_core

__all__ = [
    "CONNECTION_CLOSED",
    "HEADER_MISMATCH",
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "METHOD_NOT_FOUND",
    "MISSING_CLIENT_CAPABILITY",
    "PARSE_ERROR",
    "RATE_LIMITED",
    "RESOURCE_NOT_FOUND",
    "UNSUPPORTED_PROTOCOL_VERSION",
    "URL_ELICITATION_REQUIRED",
    "check_message",
    "decode",
    "encode",
    "error_response",
    "error_text",
    "is_valid_id",
    "notification",
    "shutting_down",
]

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
# JSON-RPC leaves -32000..-32099 to the implementation; toolkit's client fails waiting requests with this one when
# the connection ends before their reply.
CONNECTION_CLOSED = -32000
# 2026-07-28 reserves -32020..-32099 for the spec itself.
MISSING_CLIENT_CAPABILITY = -32021  # basic/index: a request needs a client capability not declared in its _meta
UNSUPPORTED_PROTOCOL_VERSION = -32022
# 2025-11-25 (client/elicitation): the request cannot go on until a URL-mode elicitation is completed.
URL_ELICITATION_REQUIRED = -32042
# 2026-07-28 (schema.ts `HEADER_MISMATCH`, streamable-http): an HTTP request's metadata headers disagree with its body.
HEADER_MISMATCH = -32020
# Resource not found (2025-11-25 and earlier; toolkit serves no resources, but OpenTelemetry's conventions name it).
RESOURCE_NOT_FOUND = -32002
# Too many tool calls (an application error: outside the range JSON-RPC and MCP reserve, basic/index); HTTP sends
# it with 429 and Retry-After.
RATE_LIMITED = -31001


def encode(message: Any) -> str:
    """Compact JSON on one line (stdio framing forbids embedded newlines; JSON escapes them in strings)."""
    return pydantic_core.to_json(message, inf_nan_mode="null").decode()


def notification(method: str, params: dict[str, Any] | None) -> str:
    """A notification's JSON text."""
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        message["params"] = params
    return encode(message)


#: Parse one JSON text; raises `ValueError` for text that is not JSON or is nested deeper than the parser allows.
#: A partial of the parser itself, not a function around it: it runs once per message, for no extra frame.
decode: Callable[[str | bytes], Any] = functools.partial(
    pydantic_core.from_json, allow_inf_nan=False, cache_strings="keys"
)


def is_valid_id(value: Any) -> bool:
    """Request ids are strings or integers (not booleans, floats or null)."""
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def error_text(summary: str, *details: str | None) -> str:
    """The one shape of an error message: `"Summary: detail; detail"`, stripped, empty details left out.

    Every error message is built here (or passes through here), so that an optional part can never leave a
    trailing space or run two clauses together.
    """
    parts = [stripped for part in details if part and (stripped := part.strip())]
    return f"{summary.strip()}: {'; '.join(parts)}" if parts else summary.strip()


def error_response(request_id: Any, code: int, message: str, *details: str | None, data: Any = None) -> dict[str, Any]:
    """A JSON-RPC error response; `message` and `details` are joined by `error_text`."""
    error: dict[str, Any] = {"code": code, "message": error_text(message, *details)}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


def shutting_down(request_id: Any) -> dict[str, Any]:
    """The answer of a call the server stopped before it could answer (still running past `shutdown_grace`, or sent
    while the server stops): its client fails at once instead of waiting for a reply that cannot come. The code is
    the one toolkit's client fails a request with when the connection ends before its reply."""
    return error_response(request_id, CONNECTION_CLOSED, "Server shutting down")


def check_message(message: dict[str, Any]) -> dict[str, Any] | None:
    """The error response for a message that is not a valid request or notification, or None if valid."""
    request_id = message.get("id")
    if message.get("jsonrpc") != "2.0":
        return _invalid(message, '"jsonrpc" must be "2.0"')
    if "method" not in message and ("result" in message or "error" in message):
        return None  # a response: the connection matches it with the request it sent
    if not isinstance(message.get("method"), str):
        return _invalid(message, '"method" must be a string')
    if "id" in message and not is_valid_id(request_id):
        return error_response(None, INVALID_REQUEST, "Invalid request", "id must be a string or an integer")
    params = message.get("params")
    if params is not None and not isinstance(params, dict):
        return _params_refused(message)
    return None


def _invalid(message: dict[str, Any], detail: str) -> dict[str, Any]:
    """An Invalid request error for `message`, to its id when that id is a valid one."""
    request_id = message.get("id")
    return error_response(request_id if is_valid_id(request_id) else None, INVALID_REQUEST, "Invalid request", detail)


def _params_refused(message: dict[str, Any]) -> dict[str, Any] | None:
    """The answer to a message whose params are not an object: Invalid params for a request; none for a
    notification (nobody to tell)."""
    if "id" not in message:
        return None
    return error_response(message["id"], INVALID_PARAMS, "Invalid params", "params must be an object")
