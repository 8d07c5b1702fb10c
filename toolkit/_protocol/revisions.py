"""What each protocol revision allows on the wire, and how newer objects are shaped for older clients.

`EraRules`: what an era's revisions say on the wire, for the floors below the engine (asking, a tool's run), which
cannot import the engine's `Era` (`_engine/eras.py`): each `Era` is made from one of these and adds its behaviour.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .meta import SERVER_INFO_KEY
from .types import HANDSHAKE_VERSIONS, MODERN_VERSION

__all__ = [
    "ERA_RULES",
    "HANDSHAKE_RULES",
    "STATELESS_RULES",
    "EraRules",
    "era_neutral",
    "negotiate",
    "rules_of",
    "shape_implementation",
    "shape_result",
    "shape_tool",
]


@dataclass(frozen=True, slots=True)
class EraRules:
    """What one era's revisions say on the wire, as the floors below the engine ask it."""

    versions: tuple[str, ...]
    """Its protocol revisions, newest first."""
    stateless: bool
    """Each request carries its own state in `_meta` (revision, capabilities): no `initialize`, no session."""
    questions_are_results: bool
    """A tool's questions (elicitation, sampling, roots) are results (`InputRequiredResult`, answered by the
    client's retry), never requests the server sends while the call runs."""
    elicitation_ids: bool
    """A URL elicitation carries an `elicitationId` (and the server tells when it completes)."""
    bare_structured: bool
    """`structuredContent` may be any JSON value, not only an object."""


HANDSHAKE_RULES = EraRules(
    HANDSHAKE_VERSIONS, stateless=False, questions_are_results=False, elicitation_ids=True, bare_structured=False
)
STATELESS_RULES = EraRules(
    (MODERN_VERSION,), stateless=True, questions_are_results=True, elicitation_ids=False, bare_structured=True
)
ERA_RULES: tuple[EraRules, ...] = (HANDSHAKE_RULES, STATELESS_RULES)
_RULES_BY_VERSION: dict[str, EraRules] = {version: rules for rules in ERA_RULES for version in rules.versions}


def rules_of(version: str) -> EraRules:
    """The rules of the era a revision this server speaks belongs to.

    Raises:
        KeyError: a revision of no era.
    """
    return _RULES_BY_VERSION[version]


# Tool fields each revision defines (schema/<rev>/schema.json, `Tool.properties`).
_TOOL_FIELDS: dict[str, frozenset[str]] = {
    "2024-11-05": frozenset({"name", "description", "inputSchema"}),
    "2025-03-26": frozenset({"name", "description", "inputSchema", "annotations"}),
    "2025-06-18": frozenset({"name", "description", "inputSchema", "annotations", "title", "outputSchema", "_meta"}),
}
# Implementation fields (serverInfo): 2025-11-25 added description, icons and websiteUrl.
_IMPLEMENTATION_FIELDS: dict[str, frozenset[str]] = {
    "2024-11-05": frozenset({"name", "version"}),
    "2025-03-26": frozenset({"name", "version"}),
    "2025-06-18": frozenset({"name", "version", "title"}),
}
# Content block kinds newer than the first revision, by the revision that added them (older ones get a text stand-in).
_BLOCKS_SINCE: dict[Any, str] = {"audio": "2025-03-26", "resource_link": "2025-06-18"}
# The revision that added structured content and `_meta` on content blocks.
_STRUCTURED_SINCE = "2025-06-18"


def negotiate(requested: Any) -> str:
    """The handshake answer: echo a supported handshake revision, otherwise offer the newest one."""
    if requested in HANDSHAKE_VERSIONS:
        return str(requested)
    return HANDSHAKE_VERSIONS[0]


def shape_tool(
    tool: dict[str, Any], version: str, raw_output_schema: dict[str, Any] | None, bare_output: bool = False
) -> dict[str, Any]:
    """A tool's wire object for `version`: drop what the revision lacks; unwrap output for 2026-07-28, and give it
    the output schema only it lists (`bare_output`: a value that is not an object, which 2025-11-25 cannot carry
    as structured content)."""
    if version == MODERN_VERSION:
        return _modern_tool(tool, raw_output_schema, bare_output)
    fields = _TOOL_FIELDS.get(version)
    if fields is None:
        return tool
    return {key: value for key, value in tool.items() if key in fields}


def _modern_tool(tool: dict[str, Any], raw_output_schema: dict[str, Any] | None, bare_output: bool) -> dict[str, Any]:
    """A tool's 2026-07-28 wire object: no `execution`, and the unwrapped output schema where it has one."""
    if "execution" in tool:  # tasks are an extension in 2026-07-28, not a field of the tool
        tool = _without(tool, "execution")
    if raw_output_schema is None:
        return tool
    if "outputSchema" in tool or bare_output:
        return {**tool, "outputSchema": raw_output_schema}
    return tool


def shape_implementation(info: dict[str, Any], version: str) -> dict[str, Any]:
    fields = _IMPLEMENTATION_FIELDS.get(version)
    if fields is None:
        return info
    return {key: value for key, value in info.items() if key in fields}


def _describe_block(block: dict[str, Any]) -> dict[str, Any]:
    """A text stand-in for a content block the client's revision cannot carry."""
    kind = block.get("type")
    if kind == "audio":
        text = f"[audio content ({block.get('mimeType', 'unknown type')}) not supported by this protocol version]"
    else:
        name = block.get("title") or block.get("name") or block.get("uri")
        text = f"Resource: {name} <{block.get('uri')}>"
        if block.get("description"):
            text += f"\n{block['description']}"
    return {"type": "text", "text": text}


def shape_result(result: dict[str, Any], version: str, wraps_result: bool) -> dict[str, Any]:
    """A `CallToolResult` wire object for `version` (modern results get `resultType` elsewhere)."""
    if version == MODERN_VERSION:
        return _unwrapped(result, wraps_result)
    if version == HANDSHAKE_VERSIONS[0]:
        return result
    content = result.get("content", [])
    shaped = [_shape_block(block, version) for block in content]
    out = dict(result)
    if any(new is not old for new, old in zip(shaped, content, strict=True)):
        out["content"] = shaped
    if version < _STRUCTURED_SINCE:
        out.pop("structuredContent", None)
    return out


def _unwrapped(result: dict[str, Any], wraps_result: bool) -> dict[str, Any]:
    """A 2026-07-28 result: a value that is not an object, wrapped as `{"result": ...}` for older revisions, goes out
    as itself."""
    if wraps_result and isinstance(result.get("structuredContent"), dict):
        return {**result, "structuredContent": result["structuredContent"].get("result")}
    return result


def _shape_block(block: dict[str, Any], version: str) -> dict[str, Any]:
    """One content block as `version` can carry it: the block itself when it can as it is, a copy without what the
    revision lacks, or a text stand-in for a kind it does not know."""
    kind = block.get("type")
    if version < _BLOCKS_SINCE.get(kind, ""):
        return _describe_block(block)
    if version < _STRUCTURED_SINCE and "_meta" in block:
        return _without(block, "_meta")
    if kind == "resource_link" and "icons" in block:
        return _without(block, "icons")
    return block


def era_neutral(result: Any) -> Any:
    """Drop what only tells a 2026-07-28 result apart (`resultType`, the server info in `_meta`).

    Tool authors and test writers then see the same `CallToolResult` whichever revision was spoken.
    """
    if not isinstance(result, dict) or "resultType" not in result:
        return result
    result = _without(result, "resultType")
    meta = result.get("_meta")
    if isinstance(meta, dict) and SERVER_INFO_KEY in meta:
        meta = _without(meta, SERVER_INFO_KEY)
        if meta:
            result["_meta"] = meta
        else:
            del result["_meta"]
    return result


def _without(mapping: dict[str, Any], key: str) -> dict[str, Any]:
    """A copy of `mapping` without `key`."""
    return {k: v for k, v in mapping.items() if k != key}
