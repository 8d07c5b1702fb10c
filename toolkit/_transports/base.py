"""The transport contract: move one JSON-RPC message, as text, at a time.

`Transport` is all a transport must do. A transport that serves each request apart (HTTP: one response per request)
also implements `RoutingTransport`: the connection, which checks for it once, then tells it which request each
message relates to and which message ends it, and reads the messages it already decoded.
"""

from __future__ import annotations

import enum
from typing import Any, Protocol, runtime_checkable

__all__ = [
    "DEFAULT_MAX_MESSAGE_SIZE",
    "HTTP_NETWORK",
    "INPROC_NETWORK",
    "PIPE_NETWORK",
    "UNREACHABLE",
    "MessageKind",
    "Network",
    "RoutingTransport",
    "Transport",
]

Network = tuple[str | None, str | None]
"""What a transport carries messages over, as OpenTelemetry names it: `network.transport` and
`network.protocol.name`. A transport may declare its own as a `network` attribute (the server's spans read it);
one that does not is unknown, `(None, None)`."""
PIPE_NETWORK: Network = ("pipe", None)
INPROC_NETWORK: Network = ("inproc", None)
HTTP_NETWORK: Network = ("tcp", "http")

DEFAULT_MAX_MESSAGE_SIZE = 16 * 1024 * 1024
"""The largest message a transport reads by default (`max_message_size=`), in bytes: what a peer may send at once."""

UNREACHABLE = {"transport": "unreachable"}
"""The `data` of the error a transport answers a request with when the server could not be reached or dropped the
request (a connectionless transport such as HTTP, whose connection is never closed as a pipe is): the server is down,
or its session is gone. A caller that keeps a connection to the server (the gateway) makes it again."""


@runtime_checkable
class Transport(Protocol):
    """Moves JSON-RPC messages between two peers, one message (a JSON text) per call.

    A transport does no JSON work of its own: it frames, sends and receives text. Implement these three
    methods to serve toolkit over anything (a socket, a pipe, a websocket).
    """

    async def send(self, message: str, /) -> None:
        """Send one message. Concurrent calls must not interleave; toolkit never makes them."""
        ...

    async def receive(self) -> str:
        """Wait for the next message.

        Raises:
            anyio.EndOfStream: the peer is done; no more messages will come.
            MessageError: one message could not be read (too large, not UTF-8); the next one may be fine.
        """
        ...

    async def aclose(self) -> None:
        """Release the transport's resources. Calling it twice is harmless."""
        ...


class MessageKind(enum.Enum):
    """What a message the server sends is, as the connection tells a `RoutingTransport`."""

    MESSAGE = "message"
    """A notification, or a request of the server: more may follow for the same request."""
    RESULT = "result"
    """The answer to the request it relates to, a result: nothing follows it for that request."""
    ERROR = "error"
    """The answer to the request it relates to, an error: nothing follows it for that request."""


@runtime_checkable
class RoutingTransport(Transport, Protocol):
    """A transport that routes each message by the client request it relates to (HTTP: that request's response).

    The connection checks for this capability once; a transport without it gets every message through `send` and
    is read with `receive`.
    """

    async def send_related(self, message: str, related: Any, kind: MessageKind, /) -> None:
        """Send one message that relates to the client request `related` (None: to none); `kind` says whether it
        is that request's answer."""
        ...

    async def receive_message(self) -> Any:
        """Wait for the next message, already decoded from JSON (the transport read it once, to route it).

        Raises:
            anyio.EndOfStream: the peer is done; no more messages will come.
        """
        ...
