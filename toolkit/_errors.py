"""The exception tree: every exception toolkit raises for users to catch derives from `ToolkitError`.

Each also keeps the built-in base it had before the tree existed (`TypeError`, `ValueError`, `RuntimeError`), so
code that catches those goes on working.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from typing import Any

from ._protocol.jsonrpc import CONNECTION_CLOSED, INVALID_REQUEST, error_text

__all__ = [
    "ConnectionClosedError",
    "InvalidTokenError",
    "MessageError",
    "OutputMismatchError",
    "ProtocolError",
    "StartupError",
    "ToolDefinitionError",
    "ToolError",
    "ToolkitError",
    "refuse_unknown_options",
]


class ToolkitError(Exception):
    """The base of every toolkit exception: `except toolkit.ToolkitError` catches anything toolkit raises on purpose."""


class ToolDefinitionError(ToolkitError, TypeError):
    """A function cannot become a tool. Raised at decoration time, listing every problem at once.

    Attributes:
        qualname: The qualified name of the function.
        problems: One sentence per problem.
    """

    def __init__(self, qualname: str, problems: list[str]) -> None:
        self.qualname = qualname
        self.problems = problems
        lines = "\n".join(f"  - {p}" for p in problems)
        super().__init__(f"cannot make a tool of {qualname}:\n{lines}")


class ToolError(ToolkitError):
    """Raise inside a tool to fail the call with this message.

    The client receives a result with `isError: true` and the message as its text, so the model can read
    it and react. Any other exception is reported without details unless the tool or server opts in.
    """


class OutputMismatchError(ToolkitError, ValueError):
    """A tool returned a value that does not match its output schema."""


class InvalidTokenError(ToolkitError, ValueError):
    """Raise in a token verifier to refuse a token and say why: the client gets `401` with `error="invalid_token"`
    and the message as `error_description` (RFC 6750), so never put the token or anything taken from it there.

    Returning `None` from `verify` refuses with a generic description instead.
    """


class ProtocolError(ToolkitError):
    """A request failed at the protocol level; the peer receives a JSON-RPC error.

    Attributes:
        code: The JSON-RPC error code.
        message: A short description.
        data: Optional extra information for the peer.
    """

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        message = error_text(message)
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    def to_error(self) -> dict[str, Any]:
        """The JSON-RPC `error` object."""
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error


class ConnectionClosedError(ProtocolError):
    """The connection ended before the reply came: the server exited, crashed or closed its output.

    Every request waiting at that moment fails with it, and so does every later one. For a server started by
    [`Client.stdio`][toolkit.Client.stdio], the message says how the process ended and how its stderr ended.

    Attributes:
        returncode: The exit status of a server process that has exited (negative: killed by that signal), else
            `None`.
        stderr: What a server process wrote to stderr before its first reply (at most the last 64 KiB); it is not
            also copied to this process's stderr.
    """

    def __init__(
        self, message: str = "the connection closed", *, returncode: int | None = None, stderr: str = ""
    ) -> None:
        super().__init__(CONNECTION_CLOSED, message)
        self.returncode = returncode
        self.stderr = stderr


class MessageError(ToolkitError):
    """A transport could not deliver one message, but the stream goes on.

    The server answers it with a JSON-RPC error and keeps reading: with the request's id for a request too large
    whose id `head` holds, else with id null.

    Attributes:
        code: The JSON-RPC error code to answer with (-32700 for bytes that are not text).
        head: The message's top-level members that could be read before the problem, such as `jsonrpc` and `id`
            of a reply too large to hold, so that the request it answers can fail at once; empty when none.
    """

    def __init__(self, message: str, code: int = INVALID_REQUEST, *, head: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.head = head if head is not None else {}


class StartupError(ToolkitError, RuntimeError):
    """The server's lifespan failed to start, so nothing was served. The original exception is `__cause__`.

    Attributes:
        server_name: The name of the server that could not start.
    """

    def __init__(self, server_name: str, cause: BaseException) -> None:
        self.server_name = server_name
        reason = str(cause).replace("\n", " ").strip()
        what = f"{type(cause).__name__}: {reason}" if reason else type(cause).__name__
        super().__init__(f"server {server_name!r} failed to start: {what}")


# -- asking the client (elicitation, sampling) --------------------------------------------------------------
# Subclasses of ToolError: raised inside a tool, their messages (toolkit's own, never user data) reach the client
# as the tool's error text, so the model can read why the call could not go on.


class ClientCapabilityError(ToolError):
    """The client did not declare what this call needs (elicitation, a mode of it, sampling, or tools in sampling).

    In the handshake era the call fails with this message as its error text; in 2026-07-28 the request fails with
    JSON-RPC error -32021 whose `data.requiredCapabilities` is `required` (basic/index: "the server **MUST**
    return a `MissingRequiredClientCapabilityError`").

    Attributes:
        required: The missing capabilities, as a `ClientCapabilities` object: `{"elicitation": {"form": {}}}`.
    """

    def __init__(self, message: str, required: dict[str, object]) -> None:
        super().__init__(message)
        self.required = required


class ClientRequestError(ToolError):
    """The client answered a request of the server (elicitation, sampling) with an error, or not in the spec's shape.

    A client handler raises it to answer with a JSON-RPC error of its choice: `ClientRequestError(-1, "User rejected
    sampling request")`.

    Attributes:
        code: The JSON-RPC error code.
        message: The error's message.
    """

    def __init__(self, code: int, message: str) -> None:
        super().__init__(f"the client answered with error {code}: {message}" if code else message)
        self.code = code
        self.message = message


class ElicitationError(ToolError):
    """The user's accepted answer does not fit the form (the message names the fields, never their values)."""


class URLElicitationRequired(ToolError):
    """Raise in a tool that cannot go on until the user completes a flow at `url` (sign-in, payment, consent).

    2025-11-25: the call fails with JSON-RPC error -32042 listing this URL elicitation, so the client can open it
    and retry. 2026-07-28: the call asks for it in an `InputRequiredResult`, and every retry runs the tool again,
    so that it checks again whether the flow is complete.

    Attributes:
        url: Where the user goes.
        message: Why, shown to the user.
    """

    def __init__(self, message: str, url: str) -> None:
        super().__init__(message)
        self.message = message
        self.url = url


def refuse_unknown_options(owner: str, given: Iterable[str], known: Collection[str]) -> None:
    """Refuse options `owner` (`"Server"`, `"tool"`, `"http_app"`, `"Client"`) does not have, each with the known
    option it is closest to: the one check of every keyword-options signature, so that a misspelled option is never
    silently ignored.

    Raises:
        TypeError: an option not in `known`, as Python words it for a function, with a did-you-mean.
    """
    unknown = sorted(set(given) - set(known))
    if not unknown:
        return
    import difflib  # deferred: only a mistake needs it

    def named(option: str) -> str:
        close = difflib.get_close_matches(option, sorted(known), n=1)
        return f"{option!r} (did you mean {close[0]!r}?)" if close else repr(option)

    if len(unknown) == 1:
        raise TypeError(f"{owner}() got an unexpected keyword argument {named(unknown[0])}")
    raise TypeError(f"{owner}() got unexpected keyword arguments {', '.join(map(named, unknown))}")
