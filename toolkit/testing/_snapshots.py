"""Tool-definition snapshots: the `tools/list` payload of some tools, and its comparison with a JSON file."""

from __future__ import annotations

import difflib
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal, Protocol

from toolkit import Server, Tool, ToolDefinition
from toolkit._protocol.client_eras import CLIENT_VERSIONS, HANDSHAKE_ERA

__all__ = [
    "Definitions",
    "Snapshot",
    "Tools",
    "as_server",
    "assert_tools_snapshot",
    "compare_snapshot",
    "tools_payload",
]

Tools = Server | Tool[Any, Any] | Iterable[Tool[Any, Any]]
"""What the tester accepts: a server, one tool, or several tools (served by a server made for the test)."""

Definitions = Server | Tool[Any, Any] | Iterable[Tool[Any, Any] | ToolDefinition]
"""What the snapshot helpers accept: tools as for `Tools`, or the tool definitions a client listed."""


class Snapshot(Protocol):
    """The type of the `toolkit_snapshot` fixture: `toolkit_snapshot(server)` or `toolkit_snapshot(server, "name")`."""

    def __call__(self, target: Definitions, name: str | None = None, *, protocol: str = CLIENT_VERSIONS[0]) -> None: ...


def as_server(target: Tools) -> Server:
    """`target` if it is a server, else a server named `"test"` serving the tools."""
    if isinstance(target, Server):
        return target
    tools = [target] if isinstance(target, Tool) else list(target)
    return Server("test", tools=tools)


def tools_payload(target: Definitions, *, protocol: str = CLIENT_VERSIONS[0]) -> dict[str, Any]:
    """The `tools/list` result a client of `protocol` receives, as JSON: `{"tools": [...]}`.

    Args:
        target: A server, a tool, several tools, or tool definitions (from `await client.list_tools()`, for
            example, to snapshot a server running in another process).
        protocol: The revision: `"2026-07-28"`, a handshake revision such as `"2025-11-25"`, or `"handshake"`
            for the newest of those. Ignored for definitions, which are taken as they are.
    """
    version = _revision(protocol)
    if isinstance(target, (Server, Tool)):
        return _served_payload(as_server(target), version)
    tools, definitions = _tools_and_definitions(target)
    if tools and definitions:
        raise TypeError("pass either tools or tool definitions, not a mix")
    if not tools:
        return {"tools": [item.model_dump(mode="json", by_alias=True, exclude_none=True) for item in definitions]}
    return _served_payload(Server("test", tools=tools), version)


def _revision(protocol: str) -> str:
    """The revision `protocol` names (`"handshake"`: the newest handshake revision).

    Raises:
        ValueError: a revision toolkit does not speak.
    """
    version = HANDSHAKE_ERA.version if protocol == "handshake" else protocol
    if version not in CLIENT_VERSIONS:
        raise ValueError(f"unknown protocol revision {protocol!r}")
    return version


def _tools_and_definitions(
    items: Iterable[Tool[Any, Any] | ToolDefinition],
) -> tuple[list[Tool[Any, Any]], list[ToolDefinition]]:
    """The tools and the tool definitions among `items`, apart."""
    tools: list[Tool[Any, Any]] = []
    definitions: list[ToolDefinition] = []
    for item in items:
        if isinstance(item, ToolDefinition):
            definitions.append(item)
        else:
            tools.append(item)
    return tools, definitions


def _served_payload(server: Server, version: str) -> dict[str, Any]:
    """The `tools/list` result `server` sends a client of `version`, as JSON."""
    return {"tools": [json.loads(payload) for payload in server.registry.tool_payloads(version)]}


def assert_tools_snapshot(
    target: Definitions,
    path: str | os.PathLike[str],
    *,
    update: bool = False,
    protocol: str = CLIENT_VERSIONS[0],
) -> Literal["matched", "created", "updated"]:
    """Compare the tools' definitions with the JSON snapshot at `path`, creating it when missing.

    The file holds the `tools/list` payload (see [`tools_payload`][toolkit.testing.tools_payload]), indented,
    so it reads well in review and `toolkit check` can compare against it.

    Args:
        target: A server, a tool, several tools, or tool definitions.
        path: The snapshot file; missing directories are created.
        update: Rewrite the file when it differs instead of failing.
        protocol: The protocol revision whose payload to take.

    Returns:
        What happened: `"matched"`, `"created"` (the file was missing) or `"updated"`.

    Raises:
        AssertionError: the definitions differ from the snapshot; the message is a unified diff.
    """
    __tracebackhide__ = True
    outcome, diff = compare_snapshot(target, Path(path), update=update, protocol=protocol, shown_as=str(path))
    if outcome == "differs":
        raise AssertionError(diff)
    return outcome


def compare_snapshot(
    target: Definitions, path: Path, *, update: bool, protocol: str, shown_as: str
) -> tuple[Literal["matched", "created", "updated", "differs"], str]:
    """Compare with (or write) the snapshot at `path`: what happened, and for `"differs"` the diff to show."""
    current = json.dumps(tools_payload(target, protocol=protocol), indent=2, ensure_ascii=False) + "\n"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(current, encoding="utf-8")
        return "created", ""
    stored = path.read_text(encoding="utf-8")
    if stored == current:
        return "matched", ""
    if update:
        path.write_text(current, encoding="utf-8")
        return "updated", ""
    lines = difflib.unified_diff(
        stored.splitlines(keepends=True), current.splitlines(keepends=True), f"{shown_as} (snapshot)", "current"
    )
    return "differs", f"the tools differ from the snapshot {shown_as}:\n{''.join(lines)}"
