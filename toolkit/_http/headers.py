"""What a request's headers say: the media types it accepts, and whether the 2026-07-28 metadata headers
(`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`) agree with its body."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

from toolkit._protocol.meta import NAME_PARAMS, VERSION_KEY

from .response import Scope

if TYPE_CHECKING:
    from toolkit._definition.tool import Tool

__all__ = ["MetaHeaders", "accepts", "decode_header_value", "read_headers"]

_OWS = " \t"
# The requests whose `Mcp-Name` header names the tool, resource or prompt (2026-07-28 streamable-http), or the task
# (the tasks extension, "Streamable HTTP: Routing Headers"): one table with the client's.
_NAME_PARAM = NAME_PARAMS
_CHECKED = ("mcp-protocol-version", "mcp-method", "mcp-name")


def read_headers(scope: Scope) -> tuple[dict[str, str], set[str]]:
    """The request's headers by lower-case name (values without surrounding whitespace), and the names repeated."""
    raw = scope["headers"]
    if type(raw) is not list:  # ASGI allows any iterable; servers send a list
        raw = list(raw)
    headers: dict[str, str] = {}
    for name, value in raw:  # a loop, not a comprehension: no function of its own before Python 3.12 (PEP 709)
        headers[name.decode("latin-1")] = value.decode("latin-1").strip(_OWS)
    if len(headers) == len(raw):  # no name twice: the usual request
        return headers, set()
    seen: set[str] = set()
    repeated: set[str] = set()
    for raw_name, _ in raw:
        name = raw_name.decode("latin-1")
        if name in seen:
            repeated.add(name)
        seen.add(name)
    return headers, repeated


def accepts(value: str | None) -> tuple[bool, bool]:
    """Whether an `Accept` header takes JSON and SSE (no header takes anything, as HTTP says)."""
    if value is None:
        return True, True
    json_ok = sse_ok = False
    for item in value.split(","):
        kind = item.split(";", 1)[0].strip().lower()
        if kind in ("*/*", ""):
            return True, True
        if kind in ("application/json", "application/*"):
            json_ok = True
        elif kind in ("text/event-stream", "text/*"):
            sse_ok = True
    return json_ok, sse_ok


class HasTools(Protocol):
    """A server, as far as its tools go."""

    @property
    def tools(self) -> Mapping[str, Tool[Any, Any]]: ...


class MetaHeaders:
    """The 2026-07-28 request metadata headers (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`, and the
    `Mcp-Param-*` of a server's tools, `x-mcp-header`, worked out once per tool), checked against a request's body."""

    __slots__ = ("_known", "_server")

    def __init__(self, server: HasTools) -> None:
        self._server = server  # its tools, as they change
        self._known: dict[str, tuple[Tool[Any, Any], tuple[tuple[str, str, str], ...]]] = {}

    def mismatch(self, message: dict[str, Any], headers: dict[str, str], repeated: set[str]) -> str | None:
        """Why the headers disagree with the body, or None when they agree.

        streamable-http: `MCP-Protocol-Version` must equal `_meta`'s version, `Mcp-Method` the method, `Mcp-Name`
        the name of a tools/call (resources/read: the uri), each `Mcp-Param-*` its argument; a required header
        missing is a mismatch too. Values are compared case-sensitively (names are not); a repeated header is
        refused rather than guessed at.
        """
        if not repeated.isdisjoint(_CHECKED):
            return _repeated(repeated)
        method = message["method"]
        params = message.get("params") or {}
        problem = _standard_mismatch(method, params, headers)
        if problem is not None:
            return problem
        name = params.get("name")
        if method != "tools/call" or type(name) is not str:
            return None
        tool = self._server.tools.get(name)
        if tool is None:
            return None
        known_tool, wanted = self._known.get(name, (None, ()))
        if known_tool is not tool:  # worked out once per tool (again if it was replaced)
            wanted = _param_headers(tool.definition.input_schema)
            self._known[name] = (tool, wanted)
        if not wanted:
            return None
        return _params_mismatch(wanted, params.get("arguments"), headers)


def _standard_mismatch(method: str, params: dict[str, Any], headers: dict[str, str]) -> str | None:
    """Why the standard headers disagree with the body (`Mcp-Method`, then `MCP-Protocol-Version` when `_meta` names
    a version, then `Mcp-Name` when the method names something), or None when they agree."""
    sent = headers.get("mcp-method")
    if sent != method:
        return _header_mismatch("Mcp-Method", sent, method)
    meta = params.get("_meta")
    version = meta.get(VERSION_KEY) if type(meta) is dict else None
    if type(version) is str:  # without it, the request lacks its required _meta: -32602 from the connection
        sent = headers.get("mcp-protocol-version")
        if sent != version:
            return _header_mismatch("MCP-Protocol-Version", sent, version)
    key = _NAME_PARAM.get(method)
    name = params.get(key) if key is not None else None
    if type(name) is not str:
        return None
    sent = headers.get("mcp-name")
    if sent is not None and sent.startswith("=?"):
        sent = decode_header_value(sent)
    return None if sent == name else _header_mismatch("Mcp-Name", sent, name)


def _header_mismatch(header: str, sent: str | None, value: str) -> str:
    """Why `header`, sent as `sent` (None: not sent), does not carry the body's `value`."""
    if sent is None:
        return f"the {header} header is required"
    return _differs(header, value)


def _repeated(repeated: set[str]) -> str:
    return next(f"the {name} header is repeated" for name in _CHECKED if name in repeated)


def _differs(header: str, value: str) -> str:
    return f"{header} header value does not match body value {value!r}"


def _params_mismatch(wanted: tuple[tuple[str, str, str], ...], arguments: Any, headers: dict[str, str]) -> str | None:
    """Why the `Mcp-Param-*` headers `wanted` (property, header, type) disagree with a call's arguments."""
    arguments = arguments if isinstance(arguments, dict) else {}
    for prop, header, kind in wanted:
        value = arguments.get(prop)
        sent = headers.get(header)
        if sent is not None and not _carriable(sent):
            return f"the {header} header has characters a header value cannot carry"
        if value is None:  # streamable-http: absent or null in the body: the server MUST NOT expect it
            continue
        if sent is None:
            return f"the {header} header is required (the body has {prop})"
        if not _same_value(decode_header_value(sent), value, kind):
            return f"{header} header value does not match body value of {prop}"
    return None


def _carriable(value: str) -> bool:
    """Whether a header value holds only what a header can carry: tabs and visible ASCII (and spaces)."""
    return all(c == "\t" or " " <= c <= "~" for c in value)


def _param_headers(schema: dict[str, Any]) -> tuple[tuple[str, str, str], ...]:
    """`(property, header name, type)` of each top-level parameter marked `x-mcp-header`."""
    found = []
    for prop, sub in (schema.get("properties") or {}).items():
        header = sub.get("x-mcp-header") if isinstance(sub, dict) else None
        if isinstance(header, str) and header:
            found.append((prop, f"mcp-param-{header.lower()}", str(sub.get("type", "string"))))
    return tuple(found)


def _same_value(sent: str | None, value: Any, kind: str) -> bool:
    """Whether a decoded header value stands for the body's `value` (numbers compare as numbers, 42.0 == 42)."""
    if sent is None:
        return False
    if isinstance(value, bool) or kind == "boolean":
        return sent == ("true" if value is True else "false" if value is False else None)
    if isinstance(value, (int, float)):
        try:
            return float(sent) == value
        except ValueError:
            return False
    return bool(sent == value)


def decode_header_value(value: str) -> str | None:
    """A header value, decoded from the `=?base64?...?=` form when it uses it (None when that form is invalid)."""
    if not (value.startswith("=?base64?") and value.endswith("?=")):
        return value
    try:
        return base64.b64decode(value[9:-2], validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        return None
