"""toolkit: turn annotated Python functions into Model Context Protocol tools, serve, document and test them."""

import contextlib
import importlib
import typing

from ._asking.answer import ElicitResult, Roots, SampleResult
from ._asking.around import AskNext, Question, QuestionMiddleware
from ._asking.elicitation import Choices, ElicitationSchemaError, Form
from ._asking.sampling import ModelPreferences, SampleOptions, SamplingMessage
from ._call.context import Context, LogLevel
from ._definition.content import Audio, Image
from ._definition.docstrings import DocstringStyle
from ._definition.middleware import CallNext, Middleware, Request, ToolFilter
from ._definition.tool import Tool, ToolOptions, tool
from ._definition.ui import UI
from ._engine.audit import AuditLog
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
from ._identity import Identity
from ._protocol.types import (
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
from ._server import Lifespan, Server
from ._transports.base import Transport
from ._transports.stdio import StdioTransport, StreamTransport
from ._version import __version__

__all__ = [
    "PROFILES",
    "UI",
    "AdaptedTool",
    "AskNext",
    "Audio",
    "AudioContent",
    "AuditLog",
    "Backend",
    "BackendError",
    "BlobResourceContents",
    "CallNext",
    "CallToolResult",
    "Choices",
    "Client",
    "ClientCapabilityError",
    "ClientCredentials",
    "ClientOptions",
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
    "MemoryBackend",
    "MemoryTaskStore",
    "MemoryTransport",
    "MessageError",
    "Middleware",
    "ModelPreferences",
    "OutputMismatchError",
    "Problem",
    "Profile",
    "ProgressCallback",
    "ProtocolError",
    "ProtocolMode",
    "Question",
    "QuestionMiddleware",
    "RateLimit",
    "RedisBackend",
    "Request",
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
    "SqliteTaskStore",
    "StartupError",
    "StaticTokenVerifier",
    "StdioTransport",
    "StreamTransport",
    "StreamingASGITransport",
    "TaskCancelledError",
    "TaskInfo",
    "TaskRecord",
    "TaskStore",
    "TextContent",
    "TextResourceContents",
    "TokenVerifier",
    "Tool",
    "ToolAnnotations",
    "ToolDefinition",
    "ToolDefinitionError",
    "ToolError",
    "ToolFilter",
    "ToolIndex",
    "ToolMatch",
    "ToolOptions",
    "ToolResultContent",
    "ToolSearch",
    "ToolTask",
    "ToolUseContent",
    "ToolkitError",
    "Transport",
    "URLElicitationRequired",
    "__version__",
    "tool",
]

if typing.TYPE_CHECKING:
    from ._asking.handlers import ElicitationHandler, ElicitRequest, RootsOption, SampleRequest, SamplingHandler
    from ._backend.base import Backend, BackendError
    from ._backend.memory import MemoryBackend
    from ._backend.redis import RedisBackend
    from ._client.client import Client, ClientOptions, LogMessage, ProgressCallback, ProtocolMode
    from ._client.tasks import TaskCancelledError, TaskInfo, ToolTask
    from ._engine.search import ToolSearch
    from ._http.auth import StaticTokenVerifier, TokenVerifier
    from ._http.jwt import JWTVerifier
    from ._http.limits import RateLimit
    from ._http.session_store import SessionStore, SqliteSessionStore
    from ._profiles.adapter import AdaptedTool
    from ._profiles.profiles import PROFILES, Problem, Profile, Rule
    from ._search import ToolIndex, ToolMatch
    from ._tasks.sqlite import SqliteTaskStore
    from ._tasks.store import MemoryTaskStore, TaskRecord, TaskStore
    from ._transports.asgi import StreamingASGITransport
    from ._transports.client_credentials import ClientCredentials
    from ._transports.memory import MemoryTransport

# Imported on first use: a server process never needs the client (nor subprocess handling, nor httpx).
_LAZY = dict.fromkeys(("Client", "ClientOptions", "LogMessage", "ProgressCallback", "ProtocolMode"), "._client.client")
_LAZY |= dict.fromkeys(("TaskCancelledError", "TaskInfo", "ToolTask"), "._client.tasks")
_LAZY["StreamingASGITransport"] = "._transports.asgi"
# Nor PyJWT and cryptography (the `jwt` extra), unless tokens are checked as JWTs.
_LAZY["JWTVerifier"] = "._http.jwt"
_LAZY["ClientCredentials"] = "._transports.client_credentials"
# The HTTP app's session stores: only a server that serves HTTP needs them.
_LAZY |= dict.fromkeys(("SessionStore", "SqliteSessionStore"), "._http.session_store")
# Nor the schema profiles, unless a tool is adapted or a server serves a profile.
_LAZY |= dict.fromkeys(("PROFILES", "Problem", "Profile", "Rule"), "._profiles.profiles")
_LAZY["AdaptedTool"] = "._profiles.adapter"
# The backends a fleet shares its state through: only a server given one needs them (Redis: the `redis` extra).
_LAZY |= dict.fromkeys(("Backend", "BackendError"), "._backend.base")
_LAZY["MemoryBackend"] = "._backend.memory"
_LAZY["RedisBackend"] = "._backend.redis"
# What a client passes (handlers of the server's questions, their requests), HTTP's token verifiers and rate limit,
# and the in-memory transport: a server imports them itself where it serves with them (issue 23: start-up).
_LAZY |= dict.fromkeys(
    ("ElicitationHandler", "ElicitRequest", "RootsOption", "SampleRequest", "SamplingHandler"), "._asking.handlers"
)
_LAZY |= dict.fromkeys(("StaticTokenVerifier", "TokenVerifier"), "._http.auth")
_LAZY["RateLimit"] = "._http.limits"
_LAZY["MemoryTransport"] = "._transports.memory"
# Tool search: the index, and the server's option (`Server(tool_search=...)`).
_LAZY |= dict.fromkeys(("ToolIndex", "ToolMatch"), "._search")
_LAZY["ToolSearch"] = "._engine.search"
# The task stores: a server picks one with `Server(task_store=...)`.
_LAZY |= dict.fromkeys(("MemoryTaskStore", "TaskRecord", "TaskStore"), "._tasks.store")
_LAZY["SqliteTaskStore"] = "._tasks.sqlite"


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
