"""`_meta`: the keys MCP defines (each written once, here), the key format (`MetaObject` in the spec's schema.ts) and
the prefixes it reserves for MCP."""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = [
    "CAPABILITIES_KEY",
    "CLIENT_INFO_KEY",
    "LOG_LEVEL_KEY",
    "NAME_PARAMS",
    "SERVER_INFO_KEY",
    "SUBSCRIPTION_KEY",
    "TASKS_EXTENSION",
    "TOOL_META_KEYS",
    "TRACE_KEYS",
    "UI_EXTENSION",
    "UI_FLAT_URI_KEY",
    "UI_KEY",
    "UI_MIME_TYPE",
    "VERSION_KEY",
    "meta_key_problems",
]

# The `_meta` keys of 2026-07-28 requests, results and notifications (basic/index).
VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
CLIENT_INFO_KEY = "io.modelcontextprotocol/clientInfo"
LOG_LEVEL_KEY = "io.modelcontextprotocol/logLevel"
SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"
SUBSCRIPTION_KEY = "io.modelcontextprotocol/subscriptionId"
# The tasks extension of 2026-07-28 (SEP-2663), declared in `extensions` of the capabilities.
TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
# OpenTelemetry trace context (W3C Trace Context and Baggage), unprefixed by exception (basic/index, SEP-414): in any
# request's or notification's `_meta`, in both eras.
TRACE_KEYS = ("traceparent", "tracestate", "baggage")
# The requests whose `Mcp-Name` header (2026-07-28 streamable-http) repeats a param: the tool, prompt or resource,
# or the task (the tasks extension's "Streamable HTTP: Routing Headers"); the client sets it, the server checks it.
NAME_PARAMS = {
    "tools/call": "name",
    "prompts/get": "name",
    "resources/read": "uri",
    "tasks/get": "taskId",
    "tasks/update": "taskId",
    "tasks/cancel": "taskId",
}

# A key is an optional prefix (dot-separated labels, then "/") and a name. Labels start with a letter and end with
# a letter or digit; a name, unless empty, starts and ends with a letter or digit.
_LABEL = r"[A-Za-z](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
_KEY = re.compile(
    rf"(?:(?P<prefix>{_LABEL}(?:\.{_LABEL})*)/)?(?P<name>(?:[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)?)"
)
# "Any prefix where the second label is `modelcontextprotocol` or `mcp` is reserved for MCP use."
_RESERVED_LABELS = frozenset({"modelcontextprotocol", "mcp"})

#: Keys under a reserved prefix that the spec defines for a tool definition's `_meta` (2024-11-05 to 2026-07-28:
#: none; the ones it defines belong to requests, results and notifications).
TOOL_META_KEYS: frozenset[str] = frozenset()

# MCP Apps (the extension `io.modelcontextprotocol/ui`, SEP-1865, specification/2026-01-26/apps.mdx in
# modelcontextprotocol/ext-apps): its capability key, its one MIME type, and its `_meta` keys on a tool and a resource.
UI_EXTENSION = "io.modelcontextprotocol/ui"
UI_MIME_TYPE = "text/html;profile=mcp-app"
UI_KEY = "ui"  # `_meta.ui`: on a tool {resourceUri, visibility}; on a UI resource {csp, permissions, domain, ...}
UI_FLAT_URI_KEY = "ui/resourceUri"  # the deprecated flat form of `_meta.ui.resourceUri` (docs/apps.md says why kept)


def meta_key_problems(keys: Iterable[object], allowed: frozenset[str] = TOOL_META_KEYS) -> list[str]:
    """One line per key of a `_meta` object that breaks the key format or uses a prefix reserved for MCP."""
    problems = []
    for key in keys:
        match = _KEY.fullmatch(key) if isinstance(key, str) else None
        if match is None:
            problems.append(
                f"_meta key {key!r} is not a valid key: an optional prefix of dot-separated labels (letters, digits, "
                "'-'; starting with a letter) followed by '/', then a name that starts and ends with a letter or digit "
                "(inside: letters, digits, '-', '_', '.'); for example 'com.example/my-key'"
            )
            continue
        labels = (match["prefix"] or "").split(".")
        if len(labels) > 1 and labels[1] in _RESERVED_LABELS and key not in allowed:
            problems.append(
                f"_meta key {key!r}: the prefix {match['prefix'] + '/'!r} is reserved for MCP, and the spec defines "
                "no such key for a tool; use a prefix of your own (reverse DNS, e.g. 'com.example/')"
            )
    return problems
