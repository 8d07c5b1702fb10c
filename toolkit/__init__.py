"""toolkit: turn annotated Python functions into Model Context Protocol tools, serve, document and test them."""

import contextlib
import importlib
import typing

from ._answer import ElicitResult, Roots, SampleResult
from ._auth import Identity, StaticTokenVerifier, TokenVerifier
from ._content import Audio, Image
from ._context import Context, LogLevel
from ._docstrings import DocstringStyle
from ._elicitation import Choices, ElicitationSchemaError, Form
from ._errors import (
    ClientCapabilityError,
    ClientRequestError,
    ConnectionClosedError,
    ElicitationError,
    InvalidTokenError,
    MessageError,
    OutputMismatchError,
    ProtocolError,
    StartupError,
    ToolDefinitionError,
    ToolError,
    ToolkitError,
    URLElicitationRequired,
)
from ._handlers import ElicitationHandler, ElicitRequest, RootsOption, SampleRequest, SamplingHandler
from ._limits import RateLimit
from ._memory import MemoryTransport
from ._sampling import ModelPreferences, SampleOptions, SamplingMessage
from ._server import Lifespan, Server
from ._stdio import StdioTransport, StreamTransport
from ._tool import Tool, ToolOptions, tool
from ._transport import Transport
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
    Root,
    TextContent,
    TextResourceContents,
    ToolAnnotations,
    ToolDefinition,
    ToolResultContent,
    ToolUseContent,
)

__version__ = "0.1.0"

__all__ = [
    "PROFILES",
    "AdaptedTool",
    "Audio",
    "AudioContent",
    "BlobResourceContents",
    "CallToolResult",
    "Choices",
    "Client",
    "ClientCapabilityError",
    "ClientRequestError",
    "ConnectionClosedError",
    "ContentBlock",
    "Context",
    "DocstringStyle",
    "ElicitRequest",
    "ElicitResult",
    "ElicitationError",
    "ElicitationHandler",
    "ElicitationSchemaError",
    "EmbeddedResource",
    "Form",
    "Icon",
    "Identity",
    "Image",
    "ImageContent",
    "Implementation",
    "InvalidTokenError",
    "JWTVerifier",
    "Lifespan",
    "LogLevel",
    "LogMessage",
    "MemoryTransport",
    "MessageError",
    "ModelPreferences",
    "OutputMismatchError",
    "Problem",
    "Profile",
    "ProgressCallback",
    "ProtocolError",
    "ProtocolMode",
    "RateLimit",
    "ResourceLink",
    "Root",
    "Roots",
    "RootsOption",
    "Rule",
    "SampleOptions",
    "SampleRequest",
    "SampleResult",
    "SamplingHandler",
    "SamplingMessage",
    "Server",
    "SessionStore",
    "SqliteSessionStore",
    "StartupError",
    "StaticTokenVerifier",
    "StdioTransport",
    "StreamTransport",
    "StreamingASGITransport",
    "TextContent",
    "TextResourceContents",
    "TokenVerifier",
    "Tool",
    "ToolAnnotations",
    "ToolDefinition",
    "ToolDefinitionError",
    "ToolError",
    "ToolOptions",
    "ToolResultContent",
    "ToolUseContent",
    "ToolkitError",
    "Transport",
    "URLElicitationRequired",
    "__version__",
    "tool",
]

if typing.TYPE_CHECKING:
    from ._asgi_transport import StreamingASGITransport
    from ._client import Client, LogMessage, ProgressCallback, ProtocolMode
    from ._jwt import JWTVerifier
    from ._profiles import PROFILES, AdaptedTool, Problem, Profile, Rule
    from ._session_store import SessionStore, SqliteSessionStore

# Imported on first use: a server process never needs the client (nor subprocess handling, nor httpx).
_LAZY = dict.fromkeys(("Client", "LogMessage", "ProgressCallback", "ProtocolMode"), "._client")
_LAZY["StreamingASGITransport"] = "._asgi_transport"
# Nor PyJWT and cryptography (the `jwt` extra), unless tokens are checked as JWTs.
_LAZY["JWTVerifier"] = "._jwt"
# The HTTP app's session stores: only a server that serves HTTP needs them.
_LAZY |= dict.fromkeys(("SessionStore", "SqliteSessionStore"), "._session_store")
# Nor the schema profiles, unless a tool is adapted or a server serves a profile.
_LAZY |= dict.fromkeys(("PROFILES", "AdaptedTool", "Problem", "Profile", "Rule"), "._profiles")


def _public(obj: object) -> None:
    """Public objects say they come from `toolkit`, not from the private module that defines them."""
    if getattr(obj, "__module__", "").startswith("toolkit._"):
        with contextlib.suppress(AttributeError, TypeError):
            obj.__module__ = "toolkit"


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'toolkit' has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    _public(value)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


for _name in __all__:
    if _name not in _LAZY:
        _public(globals()[_name])
del _name
