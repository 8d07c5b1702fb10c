"""The transport contract: move one JSON-RPC message, as text, at a time."""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

__all__ = ["MessageError", "Transport"]


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


class MessageError(Exception):
    """A transport could not deliver one message, but the stream goes on.

    The server answers it with a JSON-RPC error (id null) and keeps reading.

    Attributes:
        code: The JSON-RPC error code to answer with (-32700 for bytes that are not text).
        head: The message's top-level members that could be read before the problem, such as `jsonrpc` and `id`
            of a reply too large to hold, so that the request it answers can fail at once; empty when none.
    """

    def __init__(self, message: str, code: int = -32600, *, head: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.head = head if head is not None else {}
