"""Sampling: asking the client's model for a completion. Messages, per-revision params, the result.

`sampling/createMessage` exists in every revision (client/sampling); 2025-03-26 added audio, 2025-11-25 tools
(`tools`, `toolChoice`, `tool_use`/`tool_result` blocks, content arrays). 2026-07-28 deprecates the feature
(SEP-2577): it still works, as an input request of a multi-round-trip call.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Mapping, Sequence
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
    _check_results_alone(messages)
    _check_uses_answered(messages)


def _check_results_alone(messages: list[SamplingMessage]) -> None:
    """Tool results are the only content of the user message that holds them.

    Raises:
        ValueError: naming the first message that breaks this.
    """
    for i, message in enumerate(messages):
        if _has_results(message) and not _only_results_of_user(message):
            raise ValueError(f"message {i}: tool results must be the only content of a user message")


def _check_uses_answered(messages: list[SamplingMessage]) -> None:
    """The message after tool uses answers each of them with a tool result, and holds nothing else.

    Raises:
        ValueError: naming the first reply that does not.
    """
    # The last message has no reply to check: a conversation may end with the model's request.
    for i, (message, reply) in enumerate(itertools.pairwise(messages)):
        uses = {b.id for b in message.blocks if isinstance(b, ToolUseContent)}
        if uses and not _answers_each(uses, reply):
            raise ValueError(f"message {i + 1}: must answer each tool use of message {i} with a tool result, only")


def _has_results(message: SamplingMessage) -> bool:
    """Whether `message` holds a tool result."""
    return any(isinstance(b, ToolResultContent) for b in message.blocks)


def _only_results_of_user(message: SamplingMessage) -> bool:
    """Whether `message` is the user's, and holds tool results only."""
    if message.role != "user":
        return False
    return all(isinstance(b, ToolResultContent) for b in message.blocks)


def _answers_each(uses: set[str], reply: SamplingMessage) -> bool:
    """Whether `reply` is one tool result for each of the tool uses `uses`, and nothing else."""
    answered = [b.tool_use_id for b in reply.blocks if isinstance(b, ToolResultContent)]
    if len(answered) != len(reply.blocks):
        return False
    return sorted(answered) == sorted(uses)


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
    _refuse_unknown(options)
    sampling = _sampling_capability(capabilities)
    max_tokens = _max_tokens(options.get("max_tokens"))
    wire_messages = messages_of(messages)
    if _uses_tools(options, wire_messages):
        _check_tools_allowed(version, sampling)
    _check_audio_allowed(version, wire_messages)
    _check_context_allowed(options.get("include_context"), sampling)
    params: dict[str, Any] = {"messages": [_dump_message(m) for m in wire_messages], "maxTokens": max_tokens}
    params.update(_optional_params(options))
    return params


def _refuse_unknown(options: Mapping[str, Any]) -> None:
    """Refuse an option `SampleOptions` does not declare: a type checker sees it, at run time it would be ignored.

    Raises:
        TypeError: an unknown option, naming the known ones.
    """
    unknown = sorted(set(options) - _OPTION_NAMES)
    if unknown:
        raise TypeError(
            f"unknown sampling option {', '.join(unknown)}; the options are {', '.join(sorted(_OPTION_NAMES))}"
        )


def _sampling_capability(capabilities: Mapping[str, Any]) -> Mapping[str, Any]:
    """The client's declared `sampling` capability.

    Raises:
        ClientCapabilityError: the client did not declare it.
    """
    sampling = capabilities.get("sampling")
    if not isinstance(sampling, Mapping):
        raise ClientCapabilityError(
            "the client cannot answer sampling requests (it did not declare the sampling capability)", {"sampling": {}}
        )
    return sampling


def _max_tokens(value: Any) -> int:
    """`max_tokens`, checked to be a positive integer (a bool is no integer here).

    Raises:
        ValueError: it is not.
    """
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ValueError("max_tokens must be a positive integer")
    return value


def _uses_tools(options: Mapping[str, Any], messages: list[SamplingMessage]) -> bool:
    """Whether the request involves tools: offered ones, a tool choice, or tool uses and results in the messages."""
    if options.get("tools") is not None or options.get("tool_choice") is not None:
        return True
    return _has_tool_blocks(messages)


def _check_tools_allowed(version: str, sampling: Mapping[str, Any]) -> None:
    """Tools in sampling need 2025-11-25 and the client's `sampling.tools`.

    Raises:
        ValueError: an earlier revision.
        ClientCapabilityError: the client did not declare `sampling.tools`.
    """
    if version < "2025-11-25":
        raise ValueError(f"protocol {version} has no tools in sampling (they arrived in 2025-11-25)")
    if not isinstance(sampling.get("tools"), Mapping):
        raise ClientCapabilityError(
            "the client cannot sample with tools (it did not declare sampling.tools)", {"sampling": {"tools": {}}}
        )


def _check_audio_allowed(version: str, messages: list[SamplingMessage]) -> None:
    """Audio in sampling needs 2025-03-26.

    Raises:
        ValueError: audio content for an earlier revision.
    """
    if version >= "2025-03-26":
        return
    if any(isinstance(b, AudioContent) for m in messages for b in m.blocks):
        raise ValueError(f"protocol {version} has no audio in sampling (it arrived in 2025-03-26)")


def _check_context_allowed(include_context: str | None, sampling: Mapping[str, Any]) -> None:
    """Including context (other than `"none"`) needs the client's `sampling.context`.

    Raises:
        ValueError: the client did not declare it.
    """
    if include_context in (None, "none"):
        return
    if not isinstance(sampling.get("context"), Mapping):
        raise ValueError("include_context needs the client's sampling.context capability, which it did not declare")


def _optional_params(options: Mapping[str, Any]) -> Iterator[tuple[str, Any]]:
    """The wire params of the options given, each converted by its entry in `_OPTIONAL_PARAMS`."""
    for name, (key, to_wire) in _OPTIONAL_PARAMS.items():
        value = options.get(name)
        if value is None:
            continue
        wire = to_wire(value)
        if wire is not None:
            yield key, wire


def _as_is(value: Any) -> Any:
    """The option's value, sent as it is."""
    return value


def _context_wire(value: str) -> str | None:
    """`includeContext`, left out for `"none"`: the default, and what clients without `sampling.context` get."""
    if value == "none":
        return None
    return value


def _tools_wire(tools: Sequence[Any]) -> list[dict[str, Any]]:
    """The tools offered to the model, as definitions."""
    return [_tool_wire(t) for t in tools]


def _choice_wire(mode: ToolChoice) -> dict[str, Any]:
    """`toolChoice`: an object with the mode."""
    return {"mode": mode}


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


# Option -> (wire name, conversion), in the order the params are written. An option left out or None is not sent.
_OPTIONAL_PARAMS: dict[str, tuple[str, Callable[[Any], Any]]] = {
    "system_prompt": ("systemPrompt", _as_is),
    "include_context": ("includeContext", _context_wire),
    "temperature": ("temperature", _as_is),
    "stop_sequences": ("stopSequences", list),
    "metadata": ("metadata", dict),
    "model_preferences": ("modelPreferences", _preferences),
    "tools": ("tools", _tools_wire),
    "tool_choice": ("toolChoice", _choice_wire),
}
