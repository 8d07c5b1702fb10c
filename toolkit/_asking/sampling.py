"""Sampling: asking the client's model for a completion. Messages, per-revision params, the result.

`sampling/createMessage` exists in every revision (client/sampling); 2025-03-26 added audio, 2025-11-25 tools
(`tools`, `toolChoice`, `tool_use`/`tool_result` blocks, content arrays). 2026-07-28 deprecates the feature
(SEP-2577): it still works, as an input request of a multi-round-trip call.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal, Protocol

import pydantic
from pydantic import Field
from typing_extensions import Required, TypedDict, Unpack

from toolkit._errors import ClientCapabilityError
from toolkit._protocol.types import (
    AudioContent,
    SamplingMessage,
    TextContent,
    ToolDefinition,
    ToolResultContent,
    ToolUseContent,
    WireModel,
)

from .answer import SampleResult

__all__ = [
    "DefinedTool",
    "ModelPreferences",
    "SampleOptions",
    "SampleResult",
    "SamplingMessage",
    "ToolResultContent",
    "ToolUseContent",
    "sampling_params",
]

ToolChoice = Literal["auto", "required", "none"]


class ModelPreferences(WireModel):
    """What the server would like in a model; the client decides. Priorities run from 0 to 1."""

    hints: list[dict[str, str]] | None = None
    """Model names to consider, best first: `[{"name": "claude-3-5-sonnet"}]` (substrings match)."""
    cost_priority: float | None = Field(default=None, ge=0, le=1)
    speed_priority: float | None = Field(default=None, ge=0, le=1)
    intelligence_priority: float | None = Field(default=None, ge=0, le=1)


class DefinedTool(Protocol):
    """A tool offered to the model by its definition: a [`Tool`][toolkit.Tool]. A protocol, so that asking the
    client never imports the tool definition."""

    @property
    def definition(self) -> ToolDefinition: ...


MessagesInput = str | Sequence[str | SamplingMessage | Mapping[str, Any]]


def messages_of(messages: MessagesInput) -> list[SamplingMessage]:
    """A string is one user message; list items are strings (user text), `SamplingMessage`s or their dicts.

    Raises:
        ValueError: an item is none of these, or breaks the tool-use pairing rules of client/sampling.
    """
    items = [messages] if isinstance(messages, str) else list(messages)
    if not items:
        raise ValueError("sampling needs at least one message")
    result: list[SamplingMessage] = []
    for i, item in enumerate(items):
        if isinstance(item, str):
            result.append(SamplingMessage(role="user", content=TextContent(text=item)))
        elif isinstance(item, SamplingMessage):
            result.append(item)
        else:
            try:
                result.append(SamplingMessage.model_validate(item))
            except pydantic.ValidationError as exc:
                raise ValueError(f"message {i} is not a sampling message: {exc.errors()[0]['msg']}") from None
    _check_tool_pairs(result)
    return result


def _check_tool_pairs(messages: list[SamplingMessage]) -> None:
    """client/sampling: tool results stand alone in a user message and answer every tool use just before them."""
    for i, message in enumerate(messages):
        results = [b for b in message.blocks if isinstance(b, ToolResultContent)]
        if results and (message.role != "user" or len(results) != len(message.blocks)):
            raise ValueError(f"message {i}: tool results must be the only content of a user message")
    for i, message in enumerate(messages):
        uses = {b.id for b in message.blocks if isinstance(b, ToolUseContent)}
        if uses:
            following = messages[i + 1].blocks if i + 1 < len(messages) else None
            if following is None:
                continue  # the conversation ends with the model's request: nothing to answer yet
            answered = {b.tool_use_id for b in following if isinstance(b, ToolResultContent)}
            if answered != uses or len(answered) != len(following):
                raise ValueError(f"message {i + 1}: must answer each tool use of message {i} with a tool result, only")


class SampleOptions(TypedDict, total=False):
    """The options of [`Context.sample`][toolkit.Context.sample]: what `sampling/createMessage` asks of the model."""

    max_tokens: Required[int]
    """The most tokens the reply may have (required)."""
    system_prompt: str | None
    """A system prompt the client may use."""
    temperature: float | None
    """Sampling temperature."""
    stop_sequences: Sequence[str] | None
    """Where to stop."""
    model_preferences: ModelPreferences | Mapping[str, Any] | str | Sequence[str] | None
    """A model name, a list of names (hints, best first), or `ModelPreferences`."""
    tools: Sequence[DefinedTool | ToolDefinition | Mapping[str, Any]] | None
    """Tools the model may ask to call (2025-11-25 and later; the client must declare `sampling.tools`)."""
    tool_choice: ToolChoice | None
    """`"auto"` (the model decides), `"required"` (it must call a tool) or `"none"` (it must not)."""
    include_context: Literal["none", "thisServer", "allServers"] | None
    """Context to include; only with the client's `sampling.context` (soft-deprecated)."""
    metadata: Mapping[str, Any] | None
    """Provider-specific metadata."""


_OPTION_NAMES = frozenset(SampleOptions.__annotations__)


def sampling_params(
    messages: MessagesInput, version: str, capabilities: Mapping[str, Any], **options: Unpack[SampleOptions]
) -> dict[str, Any]:
    """The `sampling/createMessage` params for a revision and the client's capabilities.

    Raises:
        ClientCapabilityError: the client cannot sample, or cannot sample with tools.
        ValueError: malformed messages, or content the revision cannot carry (audio before 2025-03-26, tools
            before 2025-11-25), or context inclusion the client did not declare.
    """
    unknown = sorted(set(options) - _OPTION_NAMES)
    if unknown:  # a type checker sees these; at run time they would otherwise be ignored without a word
        raise TypeError(
            f"unknown sampling option {', '.join(unknown)}; the options are {', '.join(sorted(_OPTION_NAMES))}"
        )
    sampling = capabilities.get("sampling")
    if not isinstance(sampling, Mapping):
        raise ClientCapabilityError(
            "the client cannot answer sampling requests (it did not declare the sampling capability)", {"sampling": {}}
        )
    max_tokens = options.get("max_tokens")
    if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1:
        raise ValueError("max_tokens must be a positive integer")
    tools, tool_choice = options.get("tools"), options.get("tool_choice")
    include_context, model_preferences = options.get("include_context"), options.get("model_preferences")
    stop_sequences, metadata = options.get("stop_sequences"), options.get("metadata")
    wire_messages = messages_of(messages)
    with_tools = tools is not None or tool_choice is not None or _has_tool_blocks(wire_messages)
    if with_tools and version < "2025-11-25":
        raise ValueError(f"protocol {version} has no tools in sampling (they arrived in 2025-11-25)")
    if with_tools and not isinstance(sampling.get("tools"), Mapping):
        raise ClientCapabilityError(
            "the client cannot sample with tools (it did not declare sampling.tools)", {"sampling": {"tools": {}}}
        )
    if version < "2025-03-26" and any(isinstance(b, AudioContent) for m in wire_messages for b in m.blocks):
        raise ValueError(f"protocol {version} has no audio in sampling (it arrived in 2025-03-26)")
    if include_context not in (None, "none") and not isinstance(sampling.get("context"), Mapping):
        raise ValueError("include_context needs the client's sampling.context capability, which it did not declare")
    optional = {
        "systemPrompt": options.get("system_prompt"),
        "includeContext": include_context if include_context != "none" else None,
        "temperature": options.get("temperature"),
        "stopSequences": list(stop_sequences) if stop_sequences is not None else None,
        "metadata": dict(metadata) if metadata is not None else None,
        "modelPreferences": _preferences(model_preferences) if model_preferences is not None else None,
        "tools": [_tool_wire(t) for t in tools] if tools is not None else None,
        "toolChoice": {"mode": tool_choice} if tool_choice is not None else None,
    }
    params: dict[str, Any] = {"messages": [_dump_message(m) for m in wire_messages], "maxTokens": max_tokens}
    params.update((key, value) for key, value in optional.items() if value is not None)
    return params


def _has_tool_blocks(messages: list[SamplingMessage]) -> bool:
    return any(isinstance(b, (ToolUseContent, ToolResultContent)) for m in messages for b in m.blocks)


def _dump_message(message: SamplingMessage) -> dict[str, Any]:
    # One block goes as an object, not a one-item array: every revision accepts that, arrays only 2025-11-25.
    dumped: dict[str, Any] = message.model_dump(mode="json", by_alias=True, exclude_none=True)
    if isinstance(dumped["content"], list) and len(dumped["content"]) == 1:
        dumped["content"] = dumped["content"][0]
    return dumped


def _preferences(value: ModelPreferences | Mapping[str, Any] | str | Sequence[str]) -> dict[str, Any]:
    if isinstance(value, str):
        return {"hints": [{"name": value}]}
    if isinstance(value, ModelPreferences):
        prefs = value
    elif isinstance(value, Mapping):
        prefs = ModelPreferences.model_validate(value)
    else:
        return {"hints": [{"name": name} for name in value]}
    dumped: dict[str, Any] = prefs.model_dump(mode="json", by_alias=True, exclude_none=True)
    return dumped


def _tool_wire(tool: Any) -> dict[str, Any]:
    definition = getattr(tool, "definition", tool)
    if isinstance(definition, ToolDefinition):
        dumped: dict[str, Any] = definition.model_dump(mode="json", by_alias=True, exclude_none=True)
        return dumped
    if isinstance(definition, Mapping) and isinstance(definition.get("name"), str):
        return dict(definition)
    raise ValueError(f"a sampling tool is a toolkit Tool, a ToolDefinition or a tool dict, not {tool!r}")
