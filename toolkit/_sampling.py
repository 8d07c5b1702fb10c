"""Sampling: asking the client's model for a completion. Messages, per-revision params, the result.

`sampling/createMessage` exists in every revision (client/sampling); 2025-03-26 added audio, 2025-11-25 tools
(`tools`, `toolChoice`, `tool_use`/`tool_result` blocks, content arrays). 2026-07-28 deprecates the feature
(SEP-2577): it still works, as an input request of a multi-round-trip call.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Annotated, Any, Literal

import pydantic
from pydantic import Field, TypeAdapter

from ._answer import Answer
from ._errors import ClientCapabilityError
from ._types import AudioContent, ContentBlock, ImageContent, TextContent, ToolDefinition, WireModel

if TYPE_CHECKING:
    from ._tool import Tool

__all__ = [
    "ModelPreferences",
    "SampleResult",
    "SamplingMessage",
    "ToolResultContent",
    "ToolUseContent",
    "sampling_params",
]

Role = Literal["user", "assistant"]
ToolChoice = Literal["auto", "required", "none"]


class ToolUseContent(WireModel):
    """The model asks to call a tool (2025-11-25 and later)."""

    type: Literal["tool_use"] = "tool_use"
    id: str
    """Matches the `tool_use_id` of the result sent back."""
    name: str
    input: dict[str, Any] = Field(default_factory=dict)
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class ToolResultContent(WireModel):
    """The result of a tool the model asked for, sent back in a user message (2025-11-25 and later)."""

    type: Literal["tool_result"] = "tool_result"
    tool_use_id: str
    content: list[ContentBlock] = Field(default_factory=list)
    structured_content: Any = None
    is_error: bool | None = None
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


SamplingContent = Annotated[
    TextContent | ImageContent | AudioContent | ToolUseContent | ToolResultContent, Field(discriminator="type")
]


class SamplingMessage(WireModel):
    """One message of a sampling conversation: a role and one content block (or several, from 2025-11-25)."""

    role: Role
    content: SamplingContent | list[SamplingContent]

    @property
    def blocks(self) -> list[Any]:
        return self.content if isinstance(self.content, list) else [self.content]


class ModelPreferences(WireModel):
    """What the server would like in a model; the client decides. Priorities run from 0 to 1."""

    hints: list[dict[str, str]] | None = None
    """Model names to consider, best first: `[{"name": "claude-3-5-sonnet"}]` (substrings match)."""
    cost_priority: float | None = Field(default=None, ge=0, le=1)
    speed_priority: float | None = Field(default=None, ge=0, le=1)
    intelligence_priority: float | None = Field(default=None, ge=0, le=1)


_MESSAGE = TypeAdapter(SamplingMessage)
_BLOCKS: TypeAdapter[list[SamplingContent]] = TypeAdapter(list[SamplingContent])


class SampleResult(Answer):
    """The client model's reply: `await ctx.sample(...)` in an async tool, `ctx.sample(...)` in a sync one.

    Client handlers and test scripts answer with one ([`reply`][toolkit.SampleResult.reply] for text) or a `str`.

    Args:
        content: The reply's content blocks.
        model: The model that answered, as the client names it.
        stop_reason: Why it stopped.
        role: Always `"assistant"` in practice.
    """

    __slots__ = ("_content", "_model", "_role", "_stop_reason")

    def __init__(
        self, content: Sequence[Any], model: str, stop_reason: str | None = None, role: Role = "assistant"
    ) -> None:
        super().__init__()
        self._content = list(content)
        self._model = model
        self._stop_reason = stop_reason
        self._role: Role = role

    @classmethod
    def reply(cls, text: str, *, model: str = "toolkit-client", stop_reason: str | None = "endTurn") -> SampleResult:
        """A text reply."""
        return cls([TextContent(text=text)], model, stop_reason)

    def _fill(self, done: SampleResult) -> None:
        self._content, self._model, self._stop_reason, self._role = (
            done._content,
            done._model,
            done._stop_reason,
            done._role,
        )

    @property
    def content(self) -> list[Any]:
        """The reply's content blocks (`TextContent`, `ImageContent`, `AudioContent`, `ToolUseContent`)."""
        self._ready()
        return self._content

    @property
    def model(self) -> str:
        """The model that answered, as the client names it."""
        self._ready()
        return self._model

    @property
    def stop_reason(self) -> str | None:
        """Why it stopped: `"endTurn"`, `"stopSequence"`, `"maxTokens"`, `"toolUse"`, or the client's own reason."""
        self._ready()
        return self._stop_reason

    @property
    def role(self) -> Role:
        self._ready()
        return self._role

    @property
    def text(self) -> str:
        """The text of every text block, joined by newlines."""
        return "\n".join(block.text for block in self.content if isinstance(block, TextContent))

    @property
    def tool_uses(self) -> list[ToolUseContent]:
        """The tools the model asks to call (answer each with a `ToolResultContent` in the next user message)."""
        return [block for block in self.content if isinstance(block, ToolUseContent)]

    def __repr__(self) -> str:
        if self._pending is not None:
            return "SampleResult(<not awaited>)"
        return f"SampleResult(text={self.text!r}, model={self._model!r}, stop_reason={self._stop_reason!r})"

    def to_wire(self) -> dict[str, Any]:
        """The `CreateMessageResult`: one block as an object, several as an array (2025-11-25)."""
        blocks = [b.model_dump(mode="json", by_alias=True, exclude_none=True) for b in self.content]
        wire: dict[str, Any] = {"role": self.role, "content": blocks[0] if len(blocks) == 1 else blocks}
        wire["model"] = self.model
        if self.stop_reason is not None:
            wire["stopReason"] = self.stop_reason
        return wire

    @classmethod
    def from_wire(cls, raw: Any) -> SampleResult:
        """Read a client's `CreateMessageResult` (one block or a list; any stop reason string).

        Raises:
            ValueError: it is not a result of that shape.
        """
        if not isinstance(raw, Mapping) or not isinstance(raw.get("model"), str):
            raise ValueError("a sampling result must be an object with role, content and model")
        content = raw.get("content")
        try:
            blocks = _BLOCKS.validate_python(content if isinstance(content, list) else [content])
        except pydantic.ValidationError:
            raise ValueError("a sampling result's content must be text, image, audio or tool_use blocks") from None
        stop = raw.get("stopReason")
        return cls(blocks, raw["model"], stop if isinstance(stop, str) else None)


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
                result.append(_MESSAGE.validate_python(item))
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


def sampling_params(
    messages: MessagesInput,
    version: str,
    capabilities: Mapping[str, Any],
    *,
    max_tokens: int,
    system_prompt: str | None = None,
    temperature: float | None = None,
    stop_sequences: Sequence[str] | None = None,
    model_preferences: ModelPreferences | Mapping[str, Any] | str | Sequence[str] | None = None,
    tools: Sequence[Tool[Any, Any] | ToolDefinition | Mapping[str, Any]] | None = None,
    tool_choice: ToolChoice | None = None,
    include_context: Literal["none", "thisServer", "allServers"] | None = None,
    metadata: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The `sampling/createMessage` params for a revision and the client's capabilities.

    Raises:
        ClientCapabilityError: the client cannot sample, or cannot sample with tools.
        ValueError: malformed messages, or content the revision cannot carry (audio before 2025-03-26, tools
            before 2025-11-25), or context inclusion the client did not declare.
    """
    sampling = capabilities.get("sampling")
    if not isinstance(sampling, Mapping):
        raise ClientCapabilityError(
            "the client cannot answer sampling requests (it did not declare the sampling capability)", {"sampling": {}}
        )
    if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1:
        raise ValueError("max_tokens must be a positive integer")
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
        "systemPrompt": system_prompt,
        "includeContext": include_context if include_context != "none" else None,
        "temperature": temperature,
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
