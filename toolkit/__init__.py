"""toolkit: turn annotated Python functions into Model Context Protocol tools, serve, document and test them."""

import contextlib

from ._client import Client, LogMessage
from ._content import Audio, Image
from ._context import Context
from ._errors import ToolDefinitionError, ToolError
from ._jsonrpc import ProtocolError
from ._memory import MemoryTransport
from ._server import Server
from ._stdio import StdioTransport, StreamTransport
from ._tool import Tool, tool
from ._transport import MessageError, Transport
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
    "Client",
    "ContentBlock",
    "Context",
    "EmbeddedResource",
    "Icon",
    "Image",
    "ImageContent",
    "Implementation",
    "LogMessage",
    "MemoryTransport",
    "MessageError",
    "ProtocolError",
    "ResourceLink",
    "Server",
    "StdioTransport",
    "StreamTransport",
    "TextContent",
    "TextResourceContents",
    "Tool",
    "ToolAnnotations",
    "ToolDefinition",
    "ToolDefinitionError",
    "ToolError",
    "Transport",
    "tool",
]

# Public objects say they come from `toolkit`, not from the private module that defines them.
for _name in __all__:
    _obj = globals()[_name]
    if getattr(_obj, "__module__", "").startswith("toolkit._"):
        with contextlib.suppress(AttributeError, TypeError):
            _obj.__module__ = "toolkit"
del _name, _obj
