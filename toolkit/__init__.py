"""toolkit: turn annotated Python functions into Model Context Protocol tools, serve, document and test them."""

from ._content import Audio, Image
from ._context import Context
from ._errors import ToolDefinitionError, ToolError
from ._tool import Tool, tool
from ._types import (
    AudioContent,
    BlobResourceContents,
    CallToolResult,
    ContentBlock,
    EmbeddedResource,
    Icon,
    ImageContent,
    Implementation,
    ResourceLink,
    TextContent,
    TextResourceContents,
    ToolAnnotations,
    ToolDefinition,
)

__version__ = "0.1.0"

__all__ = [
    "Audio",
    "AudioContent",
    "BlobResourceContents",
    "CallToolResult",
    "ContentBlock",
    "Context",
    "EmbeddedResource",
    "Icon",
    "Image",
    "ImageContent",
    "Implementation",
    "ResourceLink",
    "TextContent",
    "TextResourceContents",
    "Tool",
    "ToolAnnotations",
    "ToolDefinition",
    "ToolDefinitionError",
    "ToolError",
    "tool",
]

# Public objects say they come from `toolkit`, not from the private module that defines them.
for _name in __all__:
    _obj = globals()[_name]
    if getattr(_obj, "__module__", "").startswith("toolkit._"):
        try:
            _obj.__module__ = "toolkit"
        except (AttributeError, TypeError):
            pass
del _name, _obj
