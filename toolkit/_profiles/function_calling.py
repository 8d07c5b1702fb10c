"""A tool as a model provider's function-calling definition: the provider's own envelope around the adapted schema.

The envelopes:

- `openai`, `openai-strict`: a Chat Completions tool, `{"type": "function", "function": {...}}` (with
  `"strict": true` for `openai-strict`). Chat Completions rather than the Responses API's flat shape, because it is
  the one every OpenAI-compatible server (Azure, vLLM, Ollama, OpenRouter, ...) accepts; the Responses shape is
  the inner `function` object with `"type": "function"` added.
- `anthropic`, `anthropic-strict`: a Messages API tool, `{"name", "description", "input_schema"}` (with
  `"strict": true` for `anthropic-strict`).
- `gemini`: a `FunctionDeclaration`, `{"name", "description", "parameters"}`, `parameters` left out for a tool
  without parameters (as the API asks).
- `claude-desktop`: the MCP tool definition itself (Claude Desktop is an MCP client).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # `_profiles` loads when a tool is first adapted, not with the server API
    from .adapter import AdaptedTool
    from .profiles import Profile

__all__ = ["envelope"]


def envelope(adapted: AdaptedTool) -> dict[str, Any]:
    """The provider's function-calling definition of an adapted tool."""
    wrap = _ENVELOPES.get(adapted.profile.provider)
    if wrap is None:  # Claude Desktop: an MCP client, the MCP definition itself
        return dict(adapted.tool)
    return wrap(adapted.tool, adapted.profile)


def _openai(tool: dict[str, Any], profile: Profile) -> dict[str, Any]:
    """A Chat Completions tool."""
    function = _named(tool)
    function["parameters"] = _parameters(tool)
    if profile.strict:
        function["strict"] = True
    return {"type": "function", "function": function}


def _anthropic(tool: dict[str, Any], profile: Profile) -> dict[str, Any]:
    """A Messages API tool."""
    out = _named(tool)
    out["input_schema"] = _parameters(tool)
    if profile.strict:
        out["strict"] = True
    return out


def _gemini(tool: dict[str, Any], profile: Profile) -> dict[str, Any]:
    """A `FunctionDeclaration`: without `parameters` for a tool that has none, as the API asks."""
    declaration = _named(tool)
    schema = _parameters(tool)
    if schema.get("properties"):
        declaration["parameters"] = schema
    return declaration


def _named(tool: dict[str, Any]) -> dict[str, Any]:
    """The start of every envelope: the tool's name, and its description if it has one."""
    out: dict[str, Any] = {"name": tool["name"]}
    description = tool.get("description")
    if description:
        out["description"] = description
    return out


def _parameters(tool: dict[str, Any]) -> dict[str, Any]:
    """The tool's input schema (an object without properties when it has none)."""
    schema: dict[str, Any] = tool.get("inputSchema") or {"type": "object"}
    return schema


_ENVELOPES: dict[str, Callable[[dict[str, Any], Profile], dict[str, Any]]] = {
    "openai": _openai,
    "anthropic": _anthropic,
    "gemini": _gemini,
}
