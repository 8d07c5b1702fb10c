"""Wire models: what a client sees. Field names are snake_case in Python and camelCase on the wire.

Dump any of them with `model.model_dump(mode="json", by_alias=True, exclude_none=True)` to get the exact
JSON object MCP sends.
"""

from __future__ import annotations

import os
import urllib.parse
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

__all__ = [
    "AudioContent",
    "BlobResourceContents",
    "CallToolResult",
    "ContentBlock",
    "EmbeddedResource",
    "Icon",
    "ImageContent",
    "Implementation",
    "ResourceLink",
    "Root",
    "SamplingContent",
    "SamplingMessage",
    "TextContent",
    "TextResourceContents",
    "ToolAnnotations",
    "ToolDefinition",
    "ToolResultContent",
    "ToolUseContent",
]

#: Protocol revisions toolkit speaks, newest first.
HANDSHAKE_VERSIONS: tuple[str, ...] = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
LATEST_HANDSHAKE_VERSION = HANDSHAKE_VERSIONS[0]
MODERN_VERSION = "2026-07-28"

LogLevel = Literal["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]
#: RFC 5424 severities, least severe first, as MCP names them.
LOG_LEVELS: tuple[LogLevel, ...] = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")


class WireModel(BaseModel):
    """Base of every wire model: camelCase aliases, `_meta` as `meta`, unknown fields kept."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="allow",
        ser_json_inf_nan="null",
        # Build each model's validator on first use: a server that never sends audio never pays for it,
        # and `import toolkit` stays cheap.
        defer_build=True,
    )


class Icon(WireModel):
    """An icon a client may show next to a tool (spec 2025-11-25)."""

    src: str
    """An `https:` or `data:` URI."""
    mime_type: str | None = None
    """The image's MIME type, such as `image/png`."""
    sizes: list[str] | None = None
    """Sizes such as `"48x48"` or `"any"`."""
    theme: Literal["light", "dark"] | None = None
    """The theme the icon is designed for."""


class ToolAnnotations(WireModel):
    """Hints about a tool's behaviour. Clients must treat them as untrusted unless they trust the server."""

    title: str | None = None
    """A human-readable title."""
    read_only_hint: bool | None = None
    """The tool does not modify its environment (spec default: false)."""
    destructive_hint: bool | None = None
    """The tool may perform destructive updates (spec default: true)."""
    idempotent_hint: bool | None = None
    """Calling it again with the same arguments has no additional effect (spec default: false)."""
    open_world_hint: bool | None = None
    """The tool interacts with an open world of external entities (spec default: true)."""


class ToolDefinition(WireModel):
    """A tool as `tools/list` sends it."""

    name: str
    """The tool's unique name."""
    title: str | None = None
    """A human-readable name for display."""
    description: str | None = None
    """What the tool does, for the model."""
    input_schema: dict[str, Any]
    """JSON Schema (2020-12) of the arguments; the root is always `type: "object"`."""
    output_schema: dict[str, Any] | None = None
    """JSON Schema of `structuredContent`, when the tool returns structured results."""
    annotations: ToolAnnotations | None = None
    """Behaviour hints."""
    icons: list[Icon] | None = None
    """Icons for display."""
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")
    """Free-form metadata."""
    execution: dict[str, Any] | None = None
    """2025-11-25's experimental tasks: `{"taskSupport": "optional" | "required"}` (2026-07-28: the tasks extension
    instead, not on the tool)."""


class Annotations(WireModel):
    """Optional hints on a content block."""

    audience: list[Literal["user", "assistant"]] | None = None
    priority: float | None = None
    last_modified: str | None = None


class _Content(WireModel):
    annotations: Annotations | None = None
    """Hints about who the content is for and how important it is."""
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")
    """Free-form metadata."""


class TextContent(_Content):
    """Text for the model."""

    type: Literal["text"] = "text"
    text: str
    """The text."""


class ImageContent(_Content):
    """An image, base64-encoded."""

    type: Literal["image"] = "image"
    data: str
    """Base64 of the image's bytes."""
    mime_type: str
    """The image's MIME type."""


class AudioContent(_Content):
    """Audio, base64-encoded (spec 2025-03-26 and later)."""

    type: Literal["audio"] = "audio"
    data: str
    """Base64 of the audio's bytes."""
    mime_type: str
    """The audio's MIME type."""


class ResourceLink(_Content):
    """A link to a resource the client may read (spec 2025-06-18 and later)."""

    type: Literal["resource_link"] = "resource_link"
    uri: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    size: int | None = None
    icons: list[Icon] | None = None


class TextResourceContents(WireModel):
    """The text of an embedded resource."""

    uri: str
    mime_type: str | None = None
    text: str
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class BlobResourceContents(WireModel):
    """The bytes of an embedded resource, base64-encoded."""

    uri: str
    mime_type: str | None = None
    blob: str
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class EmbeddedResource(_Content):
    """A resource embedded in a result."""

    type: Literal["resource"] = "resource"
    resource: TextResourceContents | BlobResourceContents


ContentBlock = Annotated[
    TextContent | ImageContent | AudioContent | ResourceLink | EmbeddedResource,
    Field(discriminator="type"),
]
"""Any content block a tool result may hold."""

CONTENT_TYPES = (TextContent, ImageContent, AudioContent, ResourceLink, EmbeddedResource)


class ToolUseContent(WireModel):
    """The model asks to call a tool (2025-11-25 and later)."""

    type: Literal["tool_use"] = "tool_use"
    id: str
    """Matches the `tool_use_id` of the result sent back."""
    name: str
    input: dict[str, Any] = Field(default_factory=dict)
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")

    def result(
        self, content: str | ContentBlock | Sequence[ContentBlock] | CallToolResult, *, is_error: bool = False
    ) -> ToolResultContent:
        """The answer to this tool use, for the next user message of the conversation.

        Args:
            content: Text, content blocks, or a whole `CallToolResult` (as [`Tool.run`][toolkit.Tool.run] returns,
                its structured content and error flag included).
            is_error: The tool failed; `content` says why (the model reads it).
        """
        if isinstance(content, CallToolResult):
            return ToolResultContent(
                tool_use_id=self.id,
                content=content.content,
                structured_content=content.structured_content,
                is_error=True if content.is_error or is_error else None,
            )
        if isinstance(content, str):
            blocks: list[ContentBlock] = [TextContent(text=content)]
        elif isinstance(content, WireModel):
            blocks = [content]
        else:
            blocks = list(content)
        return ToolResultContent(tool_use_id=self.id, content=blocks, is_error=True if is_error else None)


class ToolResultContent(WireModel):
    """The result of a tool the model asked for, sent back in a user message (2025-11-25 and later)."""

    type: Literal["tool_result"] = "tool_result"
    tool_use_id: str
    content: list[ContentBlock] = Field(default_factory=list)
    structured_content: Any = None
    is_error: bool | None = None
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class CallToolResult(WireModel):
    """The result of a tool call, as `tools/call` sends it."""

    content: list[ContentBlock] = Field(default_factory=list)
    """Content blocks for the model."""
    structured_content: Any = None
    """Structured result matching the tool's `outputSchema` (an object up to 2025-11-25)."""
    is_error: bool = False
    """True when the tool failed; `content` then explains why."""
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")
    """Free-form metadata."""

    @property
    def text(self) -> str:
        """The text of every text block, joined by newlines."""
        return "\n".join(block.text for block in self.content if isinstance(block, TextContent))


class Implementation(WireModel):
    """The name and version of an MCP client or server."""

    name: str
    version: str
    title: str | None = None
    description: str | None = None
    website_url: str | None = None
    icons: list[Icon] | None = None


SamplingContent = Annotated[
    TextContent | ImageContent | AudioContent | ToolUseContent | ToolResultContent, Field(discriminator="type")
]
"""A block of a sampling message: text, image, audio, or (2025-11-25) a tool use or a tool result."""


class SamplingMessage(WireModel):
    """One message of a sampling conversation: a role and one content block (or several, from 2025-11-25)."""

    role: Literal["user", "assistant"]
    content: SamplingContent | list[SamplingContent]

    @property
    def blocks(self) -> list[Any]:
        """The content as a list of blocks, however it was given."""
        return self.content if isinstance(self.content, list) else [self.content]


class Root(WireModel):
    """A directory or file the client lets the server work on (`roots/list`): a `file://` URI and a name."""

    uri: str
    """A `file://` URI ("This *must* start with `file://` for now")."""
    name: str | None = None
    """A name to show for it."""

    @property
    def path(self) -> Path | None:
        """The local path of a `file://` root (percent-decoded), else `None`."""
        parts = urllib.parse.urlsplit(self.uri)
        if parts.scheme != "file":
            return None
        return Path(urllib.parse.unquote(parts.path))

    @classmethod
    def of(cls, where: str | os.PathLike[str] | Root) -> Root:
        """A root from a path (made absolute, named after its last part), a `file://` URI, or a `Root`."""
        if isinstance(where, Root):
            return where
        if isinstance(where, str) and where.startswith("file://"):
            return cls(uri=where)
        path = Path(where).resolve()
        return cls(uri=path.as_uri(), name=path.name or str(path))
