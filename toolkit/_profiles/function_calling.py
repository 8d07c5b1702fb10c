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

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # `_profiles` loads when a tool is first adapted, not with the server API
    from .adapter import AdaptedTool

__all__ = ["envelope"]


def envelope(adapted: AdaptedTool) -> dict[str, Any]:
    """The provider's function-calling definition of an adapted tool."""
    tool, profile = adapted.tool, adapted.profile
    schema = tool.get("inputSchema") or {"type": "object"}
    description = tool.get("description")
    if profile.provider == "openai":
        function: dict[str, Any] = {"name": tool["name"]}
        if description:
            function["description"] = description
        function["parameters"] = schema
        if profile.strict:
            function["strict"] = True
        return {"type": "function", "function": function}
    if profile.provider == "anthropic":
        out: dict[str, Any] = {"name": tool["name"]}
        if description:
            out["description"] = description
        out["input_schema"] = schema
        if profile.strict:
            out["strict"] = True
        return out
    if profile.provider == "gemini":
        declaration: dict[str, Any] = {"name": tool["name"]}
        if description:
            declaration["description"] = description
        if schema.get("properties"):
            declaration["parameters"] = schema
        return declaration
    return dict(tool)
